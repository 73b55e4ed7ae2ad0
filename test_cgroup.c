/*
 * test_cgroup - the cgroup layout decision of mxqd_cgroup.c on fake trees
 * (marker files in a temporary directory: no real cgroups, no root), the
 * names of parent cgroups and the lock that keeps one to one daemon, and
 * the parsing of the CPU counters the energy split reads.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mx_util.h"
#include "mxqd_cgroup.h"

static char tmpl[64];

static void setup(void)
{
	snprintf(tmpl, sizeof(tmpl), "/tmp/test_cgroup.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
}

static void teardown(void)
{
	mxqd_cgroup_fini();
	mx_rmtree(tmpl);
}

/* Create ROOT/REL (a file; its directories as needed) with TEXT. */
static void put(const char *rel, const char *text)
{
	char path[512], dir[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpl, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	ck_assert_int_eq(mx_mkdir_p(dir, 0755), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Marker files of a tree ("" ends the list), the layout it must give and
 * a piece of the sentence describing it. */
static const struct {
	const char *files[4];
	enum mxqd_cgroup_layout want;
	bool memory;
	const char *says;
} layouts[] = {
	{ { "" }, MXQD_CGROUP_NONE, false, "no writable cgroup tree" },
	{ { "cgroup.controllers", "" }, MXQD_CGROUP_V2, false, "cgroup v2 at" },
	{ { "unified/cgroup.controllers", "memory/tasks", "" }, MXQD_CGROUP_HYBRID, true,
	  "memory limits in" },
	{ { "unified/cgroup.controllers", "" }, MXQD_CGROUP_HYBRID, false, "limits by polling" },
	{ { "freezer/tasks", "cpuacct/tasks", "memory/tasks" }, MXQD_CGROUP_V1, true,
	  "freezer yes, cpuacct yes, memory yes" },
	{ { "cpuacct/tasks", "" }, MXQD_CGROUP_V1, false, "freezer no, cpuacct yes, memory no" },
	/* an unrelated directory is no v1 hierarchy */
	{ { "memory/other", "" }, MXQD_CGROUP_NONE, false, "no writable cgroup tree" },
};

START_TEST(layout_decision)
{
	char msg[4096];
	enum mxqd_cgroup_layout got;

	for (size_t k = 0; k < 4 && layouts[_i].files[k] && layouts[_i].files[k][0]; k++)
		put(layouts[_i].files[k], "");
	ck_assert_int_eq(mxqd_cgroup_init(tmpl, "mxqd-test-main", &got, msg, sizeof(msg)), 0);
	ck_assert_msg(got == layouts[_i].want, "case %d: layout %s, want %s (%s)", _i,
		      mxqd_cgroup_layout_name(got), mxqd_cgroup_layout_name(layouts[_i].want), msg);
	ck_assert_int_eq(mxqd_cgroup_layout(), got);
	ck_assert_int_eq(mxqd_cgroup_has_memory(), layouts[_i].memory);
	ck_assert_msg(strstr(msg, layouts[_i].says), "case %d: '%s' lacks '%s'", _i, msg,
		      layouts[_i].says);
}
END_TEST

START_TEST(missing_root)
{
	char msg[4096], path[128];
	enum mxqd_cgroup_layout got = MXQD_CGROUP_V2;

	snprintf(path, sizeof(path), "%s/does-not-exist", tmpl);
	ck_assert_int_eq(mxqd_cgroup_init(path, "mxqd-test-main", &got, msg, sizeof(msg)), 0);
	ck_assert_int_eq(got, MXQD_CGROUP_NONE);
	ck_assert_ptr_nonnull(strstr(msg, path));
	ck_assert_int_eq(mxqd_cgroup_job_cpu_open(1), -ENOTSUP);
}
END_TEST

/* Names of parent cgroups: one per (host, daemon, instance), never one
 * for two, also where '-' in both names once made them equal. */
START_TEST(parent_names)
{
	char a[256], b[256], c[256], d[256];

	mxqd_cgroup_parent_name(a, sizeof(a), "node-p", "q", "/var/spool/mxqd/node-p.q");
	mxqd_cgroup_parent_name(b, sizeof(b), "node", "p-q", "/var/spool/mxqd/node.p-q");
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(strncmp(a, "mxqd-node-p@q.", 14), 0);
	ck_assert_uint_eq(strlen(a), 14 + 8);
	/* the same names, another spool: another parent; the same: the same */
	mxqd_cgroup_parent_name(c, sizeof(c), "node-p", "q", "/tmp/test/spool");
	ck_assert_str_ne(a, c);
	mxqd_cgroup_parent_name(d, sizeof(d), "node-p", "q", "/var/spool/mxqd/node-p.q");
	ck_assert_str_eq(a, d);
}
END_TEST

/* A parent cgroup another process holds is not used, and not removed. */
START_TEST(held_parent)
{
	char msg[4096], dir[128];
	enum mxqd_cgroup_layout got = MXQD_CGROUP_V2;
	int fd;

	put("cgroup.controllers", "");
	snprintf(dir, sizeof(dir), "%s/mxqd-test@main.00000000", tmpl);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	ck_assert_int_eq(mxqd_cgroup_init(tmpl, "mxqd-test@main.00000000", &got, msg, sizeof(msg)),
			 -EBUSY);
	ck_assert_int_eq(got, MXQD_CGROUP_V2);  /* untouched */
	ck_assert_int_eq(mxqd_cgroup_layout(), MXQD_CGROUP_NONE);
	ck_assert_msg(strstr(msg, "held by another running process"), "%s", msg);
	mxqd_cgroup_fini();
	ck_assert_int_eq(access(dir, F_OK), 0);
	/* once it is free, it is this one's */
	close(fd);
	ck_assert_int_eq(mxqd_cgroup_init(tmpl, "mxqd-test@main.00000000", &got, msg, sizeof(msg)), 0);
	ck_assert_int_eq(got, MXQD_CGROUP_V2);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	close(fd);
}
END_TEST

static const struct {
	const char *text;
	uint64_t want_us;
} counters[] = {
	{ "usage_usec 12345\nuser_usec 10000\nsystem_usec 2345\n", 12345 },  /* v2 cpu.stat */
	{ "987654321\n", 987654 },                                          /* v1 ns */
	{ "0\n", 0 },
};

START_TEST(cpu_counter)
{
	char path[128];
	uint64_t us = 1;
	int fd;

	put("counter", counters[_i].text);
	snprintf(path, sizeof(path), "%s/counter", tmpl);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(mxqd_cgroup_cpu_read(fd, &us), 0);
	ck_assert_uint_eq(us, counters[_i].want_us);
	/* read again from the same fd: the value, not the end of the file */
	ck_assert_int_eq(mxqd_cgroup_cpu_read(fd, &us), 0);
	ck_assert_uint_eq(us, counters[_i].want_us);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("cgroup");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, layout_decision, 0, (int)MX_ARRAY_SIZE(layouts));
	tcase_add_test(tc, missing_root);
	tcase_add_test(tc, parent_names);
	tcase_add_test(tc, held_parent);
	tcase_add_loop_test(tc, cpu_counter, 0, (int)MX_ARRAY_SIZE(counters));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
