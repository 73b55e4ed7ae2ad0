/*
 * test_energy_source - the energy sources against fake sysfs trees in a
 * temporary directory, and the session CPU scan against real children.
 *
 * rapl: which zones count (packages and dram; not core, not mmio), a wrap,
 * a vanished file; hwmon: energy counters preferred over power readings,
 * power integrated by the trapezoid rule; model; the source list parser.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_util.h"
#include "mxq_energy_source.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	*slash = '\0';
	ck_assert_int_eq(mx_mkdir_p(dir, 0755), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/test_energy_source.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	mx_rmtree(root);
}

static struct mxq_energy_source_config cfg(void)
{
	return (struct mxq_energy_source_config) { .sysfs_root = root };
}

START_TEST(test_rapl_zones_and_wrap)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;
	double j = -1;

	put("class/powercap/intel-rapl:0/name", "package-0\n");
	put("class/powercap/intel-rapl:0/energy_uj", "900000000\n");
	put("class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000\n");
	put("class/powercap/intel-rapl:0:0/name", "core\n");
	put("class/powercap/intel-rapl:0:0/energy_uj", "5\n");
	put("class/powercap/intel-rapl:0:1/name", "dram\n");
	put("class/powercap/intel-rapl:0:1/energy_uj", "1000000\n");
	put("class/powercap/intel-rapl:0:1/max_energy_range_uj", "65532610987\n");
	put("class/powercap/intel-rapl-mmio:0/name", "package-0\n");
	put("class/powercap/intel-rapl-mmio:0/energy_uj", "7\n");

	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_RAPL, &c, &s), 0);
	ck_assert_uint_eq(s.n_zones, 2); /* package-0 and dram only */
	ck_assert_int_eq(s.method, MXQ_ENERGY_METHOD_COUNTER);
	ck_assert_int_eq(mxq_energy_source_read(&s, 0, 0, &j), -EAGAIN); /* baseline */

	/* package wraps: 900 J -> 1000 J -> 50 J is 150 J; dram +20 J; core ignored */
	put("class/powercap/intel-rapl:0/energy_uj", "50000000\n");
	put("class/powercap/intel-rapl:0:1/energy_uj", "21000000\n");
	put("class/powercap/intel-rapl:0:0/energy_uj", "999999999\n");
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), 0);
	ck_assert_double_eq_tol(j, 170, 1e-9);

	/* the package file vanishes: an error, and the baselines are gone */
	ck_assert_int_eq(unlink(s.zones[0].path), 0);
	ck_assert_int_lt(mxq_energy_source_read(&s, 1000, 0, &j), 0);
	put("class/powercap/intel-rapl:0/energy_uj", "60000000\n");
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), -EAGAIN);
	put("class/powercap/intel-rapl:0/energy_uj", "61000000\n");
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), 0);
	ck_assert_double_eq_tol(j, 1, 1e-9);
}
END_TEST

START_TEST(test_rapl_absent)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;

	ck_assert_int_lt(mxq_energy_source_probe(MXQ_ENERGY_SRC_RAPL, &c, &s), 0);
	put("class/powercap/intel-rapl:0:0/name", "core\n");
	put("class/powercap/intel-rapl:0:0/energy_uj", "5\n");
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_RAPL, &c, &s), -ENOENT);
}
END_TEST

START_TEST(test_hwmon_energy_preferred)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;
	double j;

	put("class/hwmon/hwmon0/name", "acpi_power\n");
	put("class/hwmon/hwmon0/power1_input", "100000000\n");
	put("class/hwmon/hwmon1/energy1_input", "1000000\n");
	put("class/hwmon/hwmon1/energy1_label", "socket0\n");
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_HWMON, &c, &s), 0);
	ck_assert_int_eq(s.method, MXQ_ENERGY_METHOD_COUNTER);
	ck_assert_uint_eq(s.n_zones, 1);
	ck_assert_int_eq(mxq_energy_source_read(&s, 0, 0, &j), -EAGAIN);
	put("class/hwmon/hwmon1/energy1_input", "3500000\n");
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), 0);
	ck_assert_double_eq_tol(j, 2.5, 1e-9);
	/* an hwmon counter has no known range: going back is a reset */
	put("class/hwmon/hwmon1/energy1_input", "10\n");
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), -EAGAIN);
}
END_TEST

START_TEST(test_hwmon_power_integrated)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;
	double j;

	put("class/hwmon/hwmon0/power1_input", "100000000\n");   /* 100 W */
	put("class/hwmon/hwmon2/power1_average", "20000000\n");  /* 20 W */
	put("class/hwmon/hwmon2/power1_cap", "500000000\n");     /* not a reading */
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_HWMON, &c, &s), 0);
	ck_assert_int_eq(s.method, MXQ_ENERGY_METHOD_POWER);
	ck_assert_uint_eq(s.n_zones, 2);
	ck_assert_int_eq(mxq_energy_source_read(&s, 0, 0, &j), -EAGAIN);
	put("class/hwmon/hwmon0/power1_input", "140000000\n");  /* 120 W -> 160 W */
	ck_assert_int_eq(mxq_energy_source_read(&s, 2000, 0, &j), 0);
	ck_assert_double_eq_tol(j, (120 + 160) / 2.0 * 2, 1e-9);
}
END_TEST

START_TEST(test_model)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;
	double j;

	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_MODEL, &c, &s), -ENOENT);
	c.model_set = true;
	c.model_idle_w = 80;
	c.model_slot_w = 10;
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_MODEL, &c, &s), 0);
	ck_assert_int_eq(s.method, MXQ_ENERGY_METHOD_MODEL);
	ck_assert_int_eq(mxq_energy_source_read(&s, 500, 4, &j), 0);
	ck_assert_double_eq_tol(j, 60, 1e-9);
}
END_TEST

/* The BMC reading as the ipmi source's callback hands it over. */
static int fake_bmc_r;
static double fake_bmc_w;

static int fake_bmc(double *ret_watts)
{
	if (fake_bmc_r == 0)
		*ret_watts = fake_bmc_w;
	return fake_bmc_r;
}

START_TEST(test_ipmi_readings)
{
	struct mxq_energy_source_config c = cfg();
	struct mxq_energy_source s;
	double j;

	/* no BMC reader: absent, like a missing sysfs tree */
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_IPMI, &c, &s), -ENOENT);
	c.ipmi_watts = fake_bmc;
	fake_bmc_r = -ETIMEDOUT;
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_IPMI, &c, &s), -ETIMEDOUT);
	fake_bmc_r = 0;
	fake_bmc_w = 200;
	ck_assert_int_eq(mxq_energy_source_probe(MXQ_ENERGY_SRC_IPMI, &c, &s), 0);
	ck_assert_int_eq(s.method, MXQ_ENERGY_METHOD_POWER);
	ck_assert_uint_eq(s.n_zones, 1);
	ck_assert_int_eq(mxq_energy_source_read(&s, 0, 0, &j), -EAGAIN);   /* baseline */
	fake_bmc_w = 300;
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), 0);
	ck_assert_double_eq_tol(j, 250, 1e-9);                           /* trapezoid */
	/* a failed reading fails the interval and drops the baseline: the
	 * interval after it is not bridged over the gap */
	fake_bmc_r = -ENODATA;
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), -ENODATA);
	fake_bmc_r = 0;
	fake_bmc_w = 100;
	ck_assert_int_eq(mxq_energy_source_read(&s, 1000, 0, &j), -EAGAIN);
	ck_assert_int_eq(mxq_energy_source_read(&s, 500, 0, &j), 0);
	ck_assert_double_eq_tol(j, 50, 1e-9);
}
END_TEST

START_TEST(test_source_list)
{
	enum mxq_energy_source_kind k[MXQ_ENERGY_SRC__COUNT] = { 0 };
	char err[200] = "";
	size_t n = 99;

	ck_assert_int_eq(mxq_energy_source_list_parse("model,rapl", k, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(k[0], MXQ_ENERGY_SRC_MODEL);
	ck_assert_int_eq(k[1], MXQ_ENERGY_SRC_RAPL);
	ck_assert_int_eq(mxq_energy_source_list_parse("none", k, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 0);
	n = 7;
	ck_assert_int_eq(mxq_energy_source_list_parse("rapl,rapl", k, &n, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'rapl'"));
	ck_assert_int_eq(mxq_energy_source_list_parse("rapl,gpu", k, &n, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "'gpu'"));
	ck_assert_int_eq(mxq_energy_source_list_parse(",", k, &n, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(n, 7);
	ck_assert_str_eq(mxq_energy_source_kind_to_string(MXQ_ENERGY_SRC_HWMON), "hwmon");
	ck_assert_ptr_null(mxq_energy_source_kind_to_string(MXQ_ENERGY_SRC__COUNT));
}
END_TEST

/* Two children in sessions of their own, one burning CPU: the scan finds
 * each session, counts its processes and sees the burner's CPU time. */
START_TEST(test_sessions_cpu)
{
	pid_t kids[2];
	uint64_t cpu[3];
	unsigned procs[3];
	pid_t sids[3];

	for (int i = 0; i < 2; i++) {
		kids[i] = fork();
		ck_assert_int_ge(kids[i], 0);
		if (kids[i] == 0) {
			setsid();
			if (i == 0)
				for (;;)
					;
			pause();
			_exit(0);
		}
	}
	usleep(300000);
	sids[0] = kids[0];
	sids[1] = kids[1];
	sids[2] = 999999999; /* no such session */
	ck_assert_int_eq(mxq_energy_sessions_cpu(sids, 3, cpu, procs), 0);
	kill(kids[0], SIGKILL);
	kill(kids[1], SIGKILL);
	waitpid(kids[0], NULL, 0);
	waitpid(kids[1], NULL, 0);
	ck_assert_uint_eq(procs[0], 1);
	ck_assert_uint_eq(procs[1], 1);
	ck_assert_uint_eq(procs[2], 0);
	ck_assert_uint_gt(cpu[0], 20000);   /* burned for most of 0.3 s (2 cores may be busy) */
	ck_assert_uint_lt(cpu[1], 20000);
	ck_assert_uint_eq(cpu[2], 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("energy_source");
	TCase *tc = tcase_create("sources");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rapl_zones_and_wrap);
	tcase_add_test(tc, test_rapl_absent);
	tcase_add_test(tc, test_hwmon_energy_preferred);
	tcase_add_test(tc, test_hwmon_power_integrated);
	tcase_add_test(tc, test_model);
	tcase_add_test(tc, test_ipmi_readings);
	tcase_add_test(tc, test_source_list);
	tcase_add_test(tc, test_sessions_cpu);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
