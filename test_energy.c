/*
 * test_energy - the pure energy accounting of mxq_energy.c, with tables.
 *
 * Counter wrap cases; attribution of single intervals (idle baseline by
 * slots, active energy by CPU share, fallback to slots); whole profiles of
 * a node with jobs over many intervals (3:1 CPU split, conservation of
 * energy, model source); completeness; the ring buffer and its
 * interpolation; the model option parser; boot overhead once per boot
 * (restarts, reboots, late starts; the boot's identity and age injected).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mxq_energy.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ----------------------------------------------------------- counters */

static const struct {
	uint64_t prev, cur, max;
	int ret;
	uint64_t delta;
} counter_cases[] = {
	{ 100, 250, 1000, 0, 150 },
	{ 100, 100, 1000, 0, 0 },
	{ 900, 50, 1000, 0, 150 },          /* one wrap: 100 to the top, 50 after */
	{ 1000, 0, 1000, 0, 0 },            /* exactly at the top, then 0 */
	{ 262143328850ULL - 5000000, 3000000, 262143328850ULL, 0, 8000000 }, /* a real RAPL range */
	{ 900, 50, 0, -ERANGE, 0 },         /* range unknown: a reset, not a wrap */
	{ 2000, 50, 1000, -ERANGE, 0 },     /* above the range: a reset */
	{ 0, UINT64_MAX, 0, 0, UINT64_MAX },
};

START_TEST(test_counter_delta)
{
	uint64_t d = 4242;
	int r = mxq_energy_counter_delta(counter_cases[_i].prev, counter_cases[_i].cur,
					 counter_cases[_i].max, &d);

	ck_assert_int_eq(r, counter_cases[_i].ret);
	if (r == 0)
		ck_assert_uint_eq(d, counter_cases[_i].delta);
	else
		ck_assert_uint_eq(d, 4242); /* untouched on failure */
}
END_TEST

/* A counter with a small range read every second at a varying power:
 * the sum of deltas is the true energy despite many wraps. */
START_TEST(test_counter_integration_with_wraps)
{
	const uint64_t max = 50000000; /* 50 J */
	uint64_t counter = 49000000, prev = counter, sum = 0, truth = 0;

	for (int s = 0; s < 600; s++) {
		uint64_t step = (uint64_t)(20 + (s % 7) * 4) * 1000000; /* 20..44 W for 1 s */
		uint64_t d;

		truth += step;
		counter = (counter + step) % max; /* as the tools read it: max - prev + cur */
		ck_assert_int_eq(mxq_energy_counter_delta(prev, counter, max, &d), 0);
		sum += d;
		prev = counter;
	}
	ck_assert_uint_eq(sum, truth);
}
END_TEST

START_TEST(test_trapezoid_and_model)
{
	ck_assert_double_eq_tol(mxq_energy_trapezoid_j(100, 200, 2000), 300, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_trapezoid_j(-5, 100, 1000), 50, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_trapezoid_j(NAN, 100, 1000), 50, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_model_watts(80, 12.5, 0), 80, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_model_watts(80, 12.5, 4), 130, 1e-9);
}
END_TEST

/* -------------------------------------------------------- attribution */

struct attr_case {
	const char *name;
	double interval_j;
	uint64_t dt_ms;
	double idle_w;
	uint32_t node_slots;
	size_t n;
	struct mxq_energy_share_in in[3];
	double want_energy[3], want_active[3], want_unattributed;
};

static const struct attr_case attr_cases[] = {
	{ "no jobs: all idle", 100, 1000, 40, 4, 0, { { 0 } }, { 0 }, { 0 }, 100 },
	{ "one job on all slots gets everything", 100, 1000, 40, 2, 1,
	  { { 2, 1000, true } }, { 100 }, { 60 }, 0 },
	{ "idle by slots, active to the only job", 100, 1000, 40, 4, 1,
	  { { 1, 500, true } }, { 10 + 60 }, { 60 }, 30 },
	{ "active split 3:1 by CPU", 100, 1000, 20, 2, 2,
	  { { 1, 750000, true }, { 1, 250000, true } }, { 10 + 60, 10 + 20 }, { 60, 20 }, 0 },
	{ "CPU unknown for one job: split by slots", 100, 1000, 20, 4, 2,
	  { { 1, 750000, true }, { 3, 0, false } }, { 5 + 20, 15 + 60 }, { 20, 60 }, 0 },
	{ "no CPU used: split by slots", 90, 1000, 0, 3, 2,
	  { { 1, 0, true }, { 2, 0, true } }, { 30, 60 }, { 30, 60 }, 0 },
	{ "idle baseline above the measurement is clamped", 30, 1000, 40, 2, 1,
	  { { 1, 10, true } }, { 15 }, { 0 }, 15 },
	{ "more job slots than node slots", 60, 2000, 10, 1, 2,
	  { { 1, 1, true }, { 1, 3, true } }, { 10 + 10, 10 + 30 }, { 10, 30 }, 0 },
	{ "three jobs, 2 s interval", 240, 2000, 30, 6, 3,
	  { { 2, 100, true }, { 1, 100, true }, { 1, 200, true } },
	  { 20 + 45, 10 + 45, 10 + 90 }, { 45, 45, 90 }, 20 },
};

START_TEST(test_attribute_cases)
{
	const struct attr_case *c = &attr_cases[_i];
	struct mxq_energy_share_out out[3] = { { 0 } };
	double un = -1, sum = un;

	ck_assert_msg(mxq_energy_attribute(c->interval_j, c->dt_ms, c->idle_w, c->node_slots,
					   c->in, c->n, out, &un) == 0, "%s", c->name);
	sum = un;
	for (size_t i = 0; i < c->n; i++) {
		ck_assert_msg(fabs(out[i].energy_j - c->want_energy[i]) < 1e-9, "%s: job %zu energy %g, want %g",
			      c->name, i, out[i].energy_j, c->want_energy[i]);
		ck_assert_msg(fabs(out[i].active_j - c->want_active[i]) < 1e-9, "%s: job %zu active %g, want %g",
			      c->name, i, out[i].active_j, c->want_active[i]);
		sum += out[i].energy_j;
	}
	ck_assert_msg(fabs(un - c->want_unattributed) < 1e-9, "%s: unattributed %g, want %g",
		      c->name, un, c->want_unattributed);
	ck_assert_msg(fabs(sum - c->interval_j) < 1e-9, "%s: energy not conserved", c->name);
}
END_TEST

START_TEST(test_attribute_bad)
{
	struct mxq_energy_share_out out[1];
	struct mxq_energy_share_in in[1] = { { 1, 1, true } };
	double un = 7;

	ck_assert_int_eq(mxq_energy_attribute(-1, 1000, 0, 1, in, 1, out, &un), -EINVAL);
	ck_assert_int_eq(mxq_energy_attribute(NAN, 1000, 0, 1, in, 1, out, &un), -EINVAL);
	ck_assert_double_eq(un, 7);
}
END_TEST

/* --------------------------------------------------------- profiles */

/*
 * A node of 2 slots over 300 one-second intervals; power 30 W idle plus
 * 25 W per busy core with a ripple. Job A (a busy loop) and job B (busy a
 * third of the time, in short bursts) run together from interval 50 to
 * 250; CPU readings have tick jitter. Active energy must split 3:1 within
 * 2 %, and jobs + idle must equal the node total.
 */
START_TEST(test_profile_three_to_one)
{
	struct mxq_energy_job_acc a, b;
	double total = 0, idle = 0;
	unsigned seed = 12345;

	mxq_energy_job_acc_init(&a);
	mxq_energy_job_acc_init(&b);
	for (int s = 0; s < 300; s++) {
		bool running = s >= 50 && s < 250;
		double cpu_a = running ? 1.0 : 0, cpu_b = running ? 1.0 / 3 : 0;
		double watts = 30 + 25 * (cpu_a + cpu_b) + 2 * sin(s / 5.0);
		struct mxq_energy_share_in in[2];
		struct mxq_energy_share_out out[2];
		double un;

		total += watts;
		if (!running) {
			ck_assert_int_eq(mxq_energy_attribute(watts, 1000, 30, 2, NULL, 0, NULL, &un), 0);
			idle += un;
			continue;
		}
		seed = seed * 1103515245 + 12345;
		in[0] = (struct mxq_energy_share_in) { 1, (uint64_t)(cpu_a * 1e6) - 10000 * (seed % 2), true };
		in[1] = (struct mxq_energy_share_in) { 1, (uint64_t)(cpu_b * 1e6) + 10000 * ((seed >> 4) % 2), true };
		ck_assert_int_eq(mxq_energy_attribute(watts, 1000, 30, 2, in, 2, out, &un), 0);
		mxq_energy_job_acc_add(&a, &out[0], 1000, MXQ_ENERGY_METHOD_COUNTER);
		mxq_energy_job_acc_add(&b, &out[1], 1000, MXQ_ENERGY_METHOD_COUNTER);
		idle += un;
	}
	ck_assert_double_eq_tol(a.active_j / b.active_j, 3.0, 3.0 * 0.02);
	ck_assert_double_eq_tol(a.energy_j + b.energy_j + idle, total, total * 1e-9);
	/* each job gets half the idle baseline: 200 s x 15 W */
	ck_assert_double_eq_tol(a.energy_j - a.active_j, 3000, 1e-6);
	ck_assert_double_eq_tol(b.energy_j - b.active_j, 3000, 1e-6);
	ck_assert_uint_eq(a.samples, 200);
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&a), MXQ_ENERGY_FULL);
	ck_assert_str_eq(mxq_energy_method_to_string(a.method), "counter");
	ck_assert_double_eq_tol(mxq_energy_job_acc_avg_watts(&a), a.energy_j / 200, 1e-9);
	ck_assert(a.peak_w >= mxq_energy_job_acc_avg_watts(&a));
}
END_TEST

/* The model as source: a job on 1 of 4 slots of a 100 W + 10 W/slot node
 * for 60 s gets its quarter of idle plus the slot's power. */
START_TEST(test_profile_model_fallback)
{
	struct mxq_energy_job_acc acc;
	double un, total_un = 0;

	mxq_energy_job_acc_init(&acc);
	for (int s = 0; s < 60; s++) {
		struct mxq_energy_share_in in = { 1, 0, false };
		struct mxq_energy_share_out out;
		double j = mxq_energy_model_watts(100, 10, 1) * 1.0;
		enum mxq_energy_method m = s < 10 ? MXQ_ENERGY_METHOD_COUNTER : MXQ_ENERGY_METHOD_MODEL;

		ck_assert_int_eq(mxq_energy_attribute(j, 1000, 100, 4, &in, 1, &out, &un), 0);
		mxq_energy_job_acc_add(&acc, &out, 1000, m);
		total_un += un;
	}
	ck_assert_double_eq_tol(acc.energy_j, 60 * (25 + 10), 1e-9);
	ck_assert_double_eq_tol(acc.active_j, 60 * 10, 1e-9);
	ck_assert_double_eq_tol(total_un, 60 * 75, 1e-9);
	/* the least exact method used is the job's method */
	ck_assert_str_eq(mxq_energy_method_to_string(acc.method), "model");
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_FULL);
}
END_TEST

START_TEST(test_completeness)
{
	struct mxq_energy_job_acc acc;
	struct mxq_energy_share_out out = { 10, 5 };

	mxq_energy_job_acc_init(&acc);
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_NONE);
	ck_assert_double_eq(mxq_energy_job_acc_avg_watts(&acc), 0);
	mxq_energy_job_acc_gap(&acc, 1000);
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_NONE);
	mxq_energy_job_acc_add(&acc, &out, 1000, MXQ_ENERGY_METHOD_POWER);
	/* a source failed during the job: partial, and what was measured stays */
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_PARTIAL);
	ck_assert_double_eq(acc.energy_j, 10);
	ck_assert_str_eq(mxq_energy_completeness_to_string(mxq_energy_job_acc_completeness(&acc)),
			 "partial");

	mxq_energy_job_acc_init(&acc);
	mxq_energy_job_acc_add(&acc, &out, 1000, MXQ_ENERGY_METHOD_COUNTER);
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_FULL);
	acc.incomplete = true;
	ck_assert_int_eq(mxq_energy_job_acc_completeness(&acc), MXQ_ENERGY_PARTIAL);
}
END_TEST

START_TEST(test_strings)
{
	ck_assert_str_eq(mxq_energy_method_to_string(MXQ_ENERGY_METHOD_COUNTER), "counter");
	ck_assert_str_eq(mxq_energy_method_to_string(MXQ_ENERGY_METHOD_POWER), "power");
	ck_assert_str_eq(mxq_energy_method_to_string(MXQ_ENERGY_METHOD_MODEL), "model");
	ck_assert_ptr_null(mxq_energy_method_to_string(MXQ_ENERGY_METHOD__COUNT));
	ck_assert_str_eq(mxq_energy_completeness_to_string(MXQ_ENERGY_FULL), "full");
	ck_assert_str_eq(mxq_energy_completeness_to_string(MXQ_ENERGY_NONE), "none");
	ck_assert_ptr_null(mxq_energy_completeness_to_string(MXQ_ENERGY_COMPLETENESS__COUNT));
}
END_TEST

/* ------------------------------------------------------------- ring */

START_TEST(test_ring)
{
	struct mxq_energy_ring ring;
	double j = -1;

	ck_assert_int_eq(mxq_energy_ring_init(&ring, 0), -EINVAL);
	ck_assert_int_eq(mxq_energy_ring_init(&ring, 5), 0);
	ck_assert_ptr_null(mxq_energy_ring_last(&ring));
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 0, &j), -ERANGE);
	for (int i = 0; i < 8; i++) {
		/* 1 s apart, 10 W, one 50 W interval at i = 6 */
		struct mxq_energy_sample s = {
			.t_ms = 1000000 + 1000 * (uint64_t)i,
			.energy_j = 10.0 * i + (i >= 6 ? 40 : 0),
			.watts = i == 6 ? 50 : 10, .valid = 1,
		};
		mxq_energy_ring_push(&ring, &s);
	}
	ck_assert_uint_eq(ring.count, 5);
	ck_assert_uint_eq(ring.pushed, 8);
	ck_assert_uint_eq(mxq_energy_ring_get(&ring, 0)->t_ms, 1003000); /* oldest left */
	ck_assert_uint_eq(mxq_energy_ring_last(&ring)->t_ms, 1007000);
	ck_assert_ptr_null(mxq_energy_ring_get(&ring, 5));
	/* wrapped: the start of the history is gone */
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 1001000, &j), -ERANGE);
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 1008000, &j), -ERANGE);
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 1003500, &j), 0);
	ck_assert_double_eq_tol(j, 35, 1e-9);
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 1005500, &j), 0);
	ck_assert_double_eq_tol(j, 75, 1e-9);
	ck_assert_int_eq(mxq_energy_ring_energy_at(&ring, 1007000, &j), 0);
	ck_assert_double_eq_tol(j, 110, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_ring_peak_watts(&ring, 1003000, 1007000), 50, 1e-9);
	ck_assert_double_eq_tol(mxq_energy_ring_peak_watts(&ring, 1000000, 1005000), 10, 1e-9);
	mxq_energy_ring_done(&ring);
	mxq_energy_ring_done(&ring);
	mxq_energy_ring_done(NULL);
}
END_TEST

/* ----------------------------------------------------------- config */

static const struct {
	const char *text;
	int ret;
	double idle, slot;
} model_cases[] = {
	{ "80:12.5", 0, 80, 12.5 },
	{ "0:0", 0, 0, 0 },
	{ "120:7", 0, 120, 7 },
	{ "80", -EINVAL, 0, 0 },
	{ ":5", -EINVAL, 0, 0 },
	{ "5:", -EINVAL, 0, 0 },
	{ "-1:5", -EINVAL, 0, 0 },
	{ "5:x", -EINVAL, 0, 0 },
	{ "5:6:7", -EINVAL, 0, 0 },
	{ " 5:6", -EINVAL, 0, 0 },
};

START_TEST(test_parse_model)
{
	double idle = -1, slot = -1;
	int r = mxq_energy_parse_model(model_cases[_i].text, &idle, &slot);

	ck_assert_msg(r == model_cases[_i].ret, "'%s': %d", model_cases[_i].text, r);
	if (r == 0) {
		ck_assert_double_eq(idle, model_cases[_i].idle);
		ck_assert_double_eq(slot, model_cases[_i].slot);
	} else {
		ck_assert_double_eq(idle, -1);
		ck_assert_double_eq(slot, -1);
	}
}
END_TEST

/* ------------------------------------------------------------ boot energy */

#define BOOT_A "6d1c1a52-3b1f-4c55-9a3e-0d6e2f3b9a11"
#define BOOT_B "0f0e7c11-2222-4c55-9a3e-aaaaaaaaaaaa"

/* Restarts of mxqd within one boot, new boots, late starts, no boot. The
 * boot's timing comes in as arguments: the injected "boot-time source". */
static const struct {
	const char *boot, *counted;
	double since_s, watts, want_j;
} boot_cases[] = {
	{ BOOT_A, "", 30, 100, 3000 },          /* first mxqd of this boot: counted */
	{ BOOT_A, BOOT_A, 45, 100, 0 },         /* restarted: recorded already */
	{ BOOT_A, BOOT_A, 50, 100, 0 },         /* restarted again */
	{ BOOT_B, BOOT_A, 20, 80, 1600 },       /* rebooted: the new boot counts */
	{ BOOT_A, "", 600, 10, 6000 },          /* at the edge of the window */
	{ BOOT_A, "", 601, 10, 0 },             /* installed later: not this mxqd's boot */
	{ BOOT_A, "", 0, 100, 0 },              /* no time since boot */
	{ BOOT_A, "", -3, 100, 0 },             /* a boot "in the future" (clock step) */
	{ BOOT_A, "", 30, 0, 0 },               /* no power measured */
	{ "", "", 30, 100, 0 },                 /* no boot id */
	{ "sim-42-1764000000.5", "sim-41-1763999000.0", 2.5, 60, 150 }, /* simulated power-on */
};

START_TEST(test_boot_j)
{
	double j = mxq_energy_boot_j(boot_cases[_i].boot, boot_cases[_i].counted, boot_cases[_i].since_s,
				     600, boot_cases[_i].watts);

	ck_assert_msg(fabs(j - boot_cases[_i].want_j) < 1e-9, "case %d: %g J, want %g", _i, j,
		      boot_cases[_i].want_j);
}
END_TEST

static const struct {
	const char *text;
	int ret;
	enum mxq_energy_boot_mode mode;
	const char *id;
	uint64_t at_ms;
} boot_spec_cases[] = {
	{ "kernel", 0, MXQ_ENERGY_BOOT_KERNEL, "", 0 },
	{ "none", 0, MXQ_ENERGY_BOOT_NONE, "", 0 },
	{ "node7-1@1764000000.25", 0, MXQ_ENERGY_BOOT_GIVEN, "node7-1", 1764000000250ULL },
	{ "a:b_c.d@0", 0, MXQ_ENERGY_BOOT_GIVEN, "a:b_c.d", 0 },
	{ "@1764000000", -EINVAL, 0, "", 0 },   /* no id */
	{ "node7", -EINVAL, 0, "", 0 },         /* no time */
	{ "node7@", -EINVAL, 0, "", 0 },
	{ "node7@-5", -EINVAL, 0, "", 0 },
	{ "node7@soon", -EINVAL, 0, "", 0 },
	{ "no de@5", -EINVAL, 0, "", 0 },       /* a blank in the id */
	{ "x'y@5", -EINVAL, 0, "", 0 },
	{ "Kernel", -EINVAL, 0, "", 0 },
	{ "", -EINVAL, 0, "", 0 },
	{ "0123456789012345678901234567890123456789012345678901234567890123@5", -EINVAL, 0, "", 0 },
};

START_TEST(test_boot_parse)
{
	struct mxq_energy_boot_spec spec = { .mode = MXQ_ENERGY_BOOT_NONE, .id = "untouched" };
	int r = mxq_energy_boot_parse(boot_spec_cases[_i].text, &spec);

	ck_assert_msg(r == boot_spec_cases[_i].ret, "'%s': %d", boot_spec_cases[_i].text, r);
	if (r < 0) {
		ck_assert_str_eq(spec.id, "untouched");
		return;
	}
	ck_assert_int_eq(spec.mode, boot_spec_cases[_i].mode);
	ck_assert_str_eq(spec.id, boot_spec_cases[_i].id);
	ck_assert_uint_eq(spec.at_ms, boot_spec_cases[_i].at_ms);
}
END_TEST

/* Where the boot and its age come from: the kernel's (injected here), a
 * given boot's start against the clock, or none. */
START_TEST(test_boot_identify)
{
	struct mxq_energy_boot_spec spec;
	char id[MXQ_ENERGY_BOOT_ID_MAX] = "";
	double since = -1;

	ck_assert_int_eq(mxq_energy_boot_parse("kernel", &spec), 0);
	ck_assert_int_eq(mxq_energy_boot_identify(&spec, BOOT_A, 42.5, 1764000000000ULL, id, &since), 0);
	ck_assert_str_eq(id, BOOT_A);
	ck_assert_double_eq(since, 42.5);
	ck_assert_int_eq(mxq_energy_boot_identify(&spec, "", 42.5, 0, id, &since), -ENOENT);

	ck_assert_int_eq(mxq_energy_boot_parse("sim-1@1764000000", &spec), 0);
	ck_assert_int_eq(mxq_energy_boot_identify(&spec, BOOT_A, 9999, 1764000002500ULL, id, &since), 0);
	ck_assert_str_eq(id, "sim-1");
	ck_assert_double_eq(since, 2.5);

	ck_assert_int_eq(mxq_energy_boot_parse("none", &spec), 0);
	ck_assert_int_eq(mxq_energy_boot_identify(&spec, BOOT_A, 42.5, 0, id, &since), -ENOENT);
}
END_TEST

/* A node restarted twice within a minute of its boot, at 100 W: the boot
 * is booked once, by the first mxqd (its mark is in the spool then). */
START_TEST(test_boot_restarts)
{
	const double starts[] = { 8, 23.5, 41 }; /* seconds after boot */
	char counted[MXQ_ENERGY_BOOT_ID_MAX] = "";
	double total = 0;

	for (size_t i = 0; i < NELEM(starts); i++) {
		double j = mxq_energy_boot_j(BOOT_A, counted, starts[i], 600, 100);
		if (j > 0)
			snprintf(counted, sizeof(counted), "%s", BOOT_A);
		total += j;
	}
	ck_assert_double_eq(total, 800);
}
END_TEST

static Suite *energy_suite(void)
{
	Suite *s = suite_create("energy");
	TCase *tc = tcase_create("counters");

	tcase_add_loop_test(tc, test_counter_delta, 0, NELEM(counter_cases));
	tcase_add_test(tc, test_counter_integration_with_wraps);
	tcase_add_test(tc, test_trapezoid_and_model);
	suite_add_tcase(s, tc);

	tc = tcase_create("attribution");
	tcase_add_loop_test(tc, test_attribute_cases, 0, NELEM(attr_cases));
	tcase_add_test(tc, test_attribute_bad);
	tcase_add_test(tc, test_profile_three_to_one);
	tcase_add_test(tc, test_profile_model_fallback);
	tcase_add_test(tc, test_completeness);
	tcase_add_test(tc, test_strings);
	suite_add_tcase(s, tc);

	tc = tcase_create("ring and config");
	tcase_add_test(tc, test_ring);
	tcase_add_loop_test(tc, test_parse_model, 0, NELEM(model_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("boot");
	tcase_add_loop_test(tc, test_boot_j, 0, NELEM(boot_cases));
	tcase_add_loop_test(tc, test_boot_parse, 0, NELEM(boot_spec_cases));
	tcase_add_test(tc, test_boot_identify);
	tcase_add_test(tc, test_boot_restarts);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(energy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
