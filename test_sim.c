/*
 * test_sim - unit tests for the trace-replay simulator (mxq_sim.c): SWF
 * parsing, class specs, percentiles, the offline bound, and whole
 * simulations of tiny hand-made traces whose energy and waits are worked
 * out by hand in the comments next to each expectation.
 *
 * Unless a test says otherwise a node is: 1 core, 100 W idle, 200 W busy,
 * 2 W off, boot 60 s / 6000 J, shutdown 20 s / 1000 J. Times in the traces
 * are seconds from 0 (no UnixStartTime), windows start at 0.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxq_sim.h"

/* One SWF job line: number, submit, run, processors, requested time. */
static char *swf_line(char *buf, size_t len, int number, long submit, long run, int procs,
		      long req)
{
	snprintf(buf, len, "%d %ld -1 %ld %d -1 -1 %d %ld -1 1 1 1 -1 -1 -1 -1 -1\n",
		 number, submit, run, procs, procs, req);
	return buf;
}

static void small_class(struct mxq_sim_class *c, uint32_t count, uint32_t cores)
{
	mxq_sim_class_defaults(c);
	c->count = count;
	c->cores = cores;
	c->idle_w = 100;
	c->busy_w = 200;
	c->off_w = 2;
	c->boot_s = 60;
	c->boot_j = 6000;
	c->shutdown_s = 20;
	c->shutdown_j = 1000;
}

struct world {
	struct mxq_sim_trace trace;
	struct mxq_sim_cluster *cluster;
	struct mxq_sim *sim;
	struct mxq_power_config cfg;
	struct mxq_sim_result res;
};

static void world_trace(struct world *w, const char *text)
{
	char err[256];

	memset(w, 0, sizeof(*w));
	mxq_sim_trace_init(&w->trace);
	mxq_power_config_defaults(&w->cfg);
	ck_assert_msg(mxq_sim_trace_parse(&w->trace, text, "test", err, sizeof(err)) == 0, "%s", err);
}

static void world_cluster(struct world *w, const struct mxq_sim_class *cls, size_t n,
			  const struct mxq_sim_workload_opts *given)
{
	struct mxq_sim_workload_opts o;
	char err[256];

	mxq_sim_workload_opts_defaults(&o);
	if (given)
		o = *given;
	o.has_start = true;
	o.start = 0;
	ck_assert_msg(mxq_sim_cluster_new(&w->trace, cls, n, &o, &w->cluster, err, sizeof(err)) == 0,
		      "%s", err);
}

/* Run to the last job and close the books at END. */
static void world_run(struct world *w, const struct mxq_sim_params *p, int64_t end)
{
	ck_assert_int_eq(mxq_sim_new(w->cluster, p, &w->sim), 0);
	ck_assert_int_eq(mxq_sim_run(w->sim), 0);
	ck_assert_int_le(mxq_sim_done_at(w->sim), end);
	ck_assert_int_eq(mxq_sim_close(w->sim, end), 0);
	mxq_sim_get_result(w->sim, &w->res);
}

static void world_config(struct world *w, const char *text)
{
	char err[1024];
	ck_assert_msg(mxq_power_config_parse(&w->cfg, text, "test.conf", err, sizeof(err)) == 0,
		      "%s", err);
}

static void world_done(struct world *w)
{
	mxq_sim_free(w->sim);
	mxq_sim_cluster_free(w->cluster);
	mxq_sim_trace_done(&w->trace);
	mxq_power_config_done(&w->cfg);
}

/* Trace of jobs given as { submit, run, processors, requested time },
 * numbered from 1. */
struct job_spec {
	long submit, run;
	int procs;
	long req;
};

static void world_jobs(struct world *w, const struct job_spec *jobs, size_t n)
{
	char *text = calloc(n + 1, 128);

	ck_assert_ptr_nonnull(text);
	for (size_t k = 0; k < n; k++)
		swf_line(text + strlen(text), 128, (int)k + 1, jobs[k].submit, jobs[k].run,
			 jobs[k].procs, jobs[k].req);
	world_trace(w, text);
	free(text);
}

#define WORLD_JOBS(w, ...) do { \
		static const struct job_spec jobs_[] = { __VA_ARGS__ }; \
		world_jobs(w, jobs_, sizeof(jobs_) / sizeof(jobs_[0])); \
	} while (0)

/* N nodes of CORES cores (small_class), default workload options. */
static void world_nodes(struct world *w, uint32_t n, uint32_t cores)
{
	struct mxq_sim_class c;

	small_class(&c, n, cores);
	world_cluster(w, &c, 1, NULL);
}

/* Our policy with power.conf CONF over N 1-core nodes, run to END. */
static void world_policy(struct world *w, struct mxq_sim_params *p, const char *conf,
			 uint32_t n, int64_t end)
{
	world_config(w, conf);
	p->cfg = &w->cfg;
	world_nodes(w, n, 1);
	world_run(w, p, end);
}

static double job_wait(const struct world *w, size_t k)
{
	size_t n;
	const double *v = mxq_sim_waits(w->sim, &n);
	ck_assert_uint_lt(k, n);
	return v[k];
}

#define ck_assert_energy(got, want) \
	ck_assert_msg(fabs((got) - (want)) < 1e-6, "energy %.6f J, expected %.6f J", \
		      (double)(got), (double)(want))

/* ------------------------------------------------------------------------ */

START_TEST(trace_header_and_skips)
{
	struct mxq_sim_trace t;
	char err[256];
	const char *text =
		"; Version: 2.2\n"
		";  MaxNodes: 64\n"
		"; MaxProcs: 128\n"
		"; UnixStartTime: 1000000\n"
		"\n"
		"   \n"
		"2 50 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
		"1 10 0 30 -1 1.5 2048 2 60 4096 1 1 1 -1 -1 -1 -1 -1\n"
		"3 60 0 0 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
		"4 70 0 -1 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
		"5 80 0 5 -1 -1 -1 -1 20 -1 1 1 1 -1 -1 -1 -1 -1\n";

	mxq_sim_trace_init(&t);
	ck_assert_int_eq(mxq_sim_trace_parse(&t, text, "x.swf", err, sizeof(err)), 0);
	ck_assert_uint_eq(t.max_nodes, 64);
	ck_assert_uint_eq(t.max_procs, 128);
	ck_assert_int_eq(t.unix_start, 1000000);
	ck_assert_uint_eq(t.lines, 5);
	ck_assert_uint_eq(t.skipped_runtime, 2);
	ck_assert_uint_eq(t.skipped_procs, 1);
	ck_assert_uint_eq(t.n_jobs, 2);
	/* sorted by submit time; processors fall back to the requested ones;
	 * requested memory wins over used memory */
	ck_assert_int_eq(t.jobs[0].number, 1);
	ck_assert_uint_eq(t.jobs[0].procs, 2);
	ck_assert_int_eq(t.jobs[0].mem_kib_per_proc, 4096);
	ck_assert_int_eq(t.jobs[0].req_time, 60);
	ck_assert_int_eq(t.jobs[1].number, 2);
	ck_assert_int_eq(t.jobs[1].mem_kib_per_proc, -1);
	mxq_sim_trace_done(&t);
}
END_TEST

START_TEST(trace_bad_lines)
{
	static const struct { const char *line; const char *msg; } bad[] = {
		{ "1 2 3\n", "3 fields" },
		{ "1 2 3 x 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n", "field 4" },
		{ "1 -5 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n", "negative submit" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mxq_sim_trace t;
		char text[256], err[256];
		mxq_sim_trace_init(&t);
		snprintf(text, sizeof(text), "; MaxNodes: 4\n%s", bad[i].line);
		ck_assert_int_eq(mxq_sim_trace_parse(&t, text, "bad.swf", err, sizeof(err)), -EINVAL);
		ck_assert_msg(strncmp(err, "bad.swf:2: ", 11) == 0, "%s", err);
		ck_assert_msg(strstr(err, bad[i].msg), "'%s' lacks '%s'", err, bad[i].msg);
		mxq_sim_trace_done(&t);
	}
}
END_TEST

/* Columns after the 18th are counted and ignored, the job is kept. */
START_TEST(trace_extra_fields)
{
	struct mxq_sim_trace t;
	char err[256];

	mxq_sim_trace_init(&t);
	ck_assert_int_eq(mxq_sim_trace_parse(&t, "1 0 -1 30 2 -1 -1 2 60 -1 1 1 1 -1 -1 -1 -1 -1 7 8\n"
					     "2 5 -1 30 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n",
					     "x.swf", err, sizeof(err)), 0);
	ck_assert_uint_eq(t.n_jobs, 2);
	ck_assert_uint_eq(t.extra_fields, 1);
	ck_assert_uint_eq(t.jobs[0].procs, 2);
	ck_assert_int_eq(t.jobs[0].run, 30);
	mxq_sim_trace_done(&t);
}
END_TEST

START_TEST(class_specs)
{
	struct mxq_sim_class c, before;
	char err[256];

	mxq_sim_class_defaults(&c);
	ck_assert_int_eq(mxq_sim_class_parse(&c, "name=fat,count=8,cores=32,memory=256G,"
					     "maxtime=2d,tags=gpu+avx512,rank=-1,idle=150,busy=500.5,"
					     "off=3,boot=5m,boot-energy=60000,shutdown=90,"
					     "shutdown-energy=4500", err, sizeof(err)), 0);
	ck_assert_str_eq(c.name, "fat");
	ck_assert_uint_eq(c.count, 8);
	ck_assert_uint_eq(c.cores, 32);
	ck_assert_uint_eq(c.memory_mib, 256 * 1024);
	ck_assert_uint_eq(c.maxtime_min, 2 * 1440);
	ck_assert_str_eq(c.tags, "gpu avx512");
	ck_assert_int_eq(c.rank, -1);
	ck_assert_double_eq(c.busy_w, 500.5);
	ck_assert_int_eq(c.boot_s, 300);
	ck_assert_int_eq(c.shutdown_s, 90);
	ck_assert_double_eq(c.shutdown_j, 4500);

	before = c;
	ck_assert_int_eq(mxq_sim_class_parse(&c, "count=2,colour=red", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unknown key 'colour'"));
	ck_assert_int_eq(mxq_sim_class_parse(&c, "cores=0", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_sim_class_parse(&c, "idle=-5", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_sim_class_parse(&c, "boot=3x", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_sim_class_parse(&c, "name=a b", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_sim_class_parse(&c, "count", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(memcmp(&c, &before, sizeof(c)), 0);
}
END_TEST

START_TEST(durations)
{
	int64_t s = -1;

	ck_assert_int_eq(mxq_sim_parse_duration("90", &s), 0);
	ck_assert_int_eq(s, 90);
	ck_assert_int_eq(mxq_sim_parse_duration("1h30m", &s), 0);
	ck_assert_int_eq(s, 5400);
	ck_assert_int_eq(mxq_sim_parse_duration("1w", &s), 0);	/* the shared units */
	ck_assert_int_eq(s, 7 * 86400);
	ck_assert_int_eq(mxq_sim_parse_duration("2d3s", &s), 0);
	ck_assert_int_eq(s, 2 * 86400 + 3);
	ck_assert_int_eq(mxq_sim_parse_duration("", &s), -EINVAL);
	ck_assert_int_eq(mxq_sim_parse_duration("-1", &s), -EINVAL);
	ck_assert_int_eq(mxq_sim_parse_duration("5x", &s), -EINVAL);
	ck_assert_int_eq(mxq_sim_parse_duration("99999999999999999999", &s), -ERANGE);
	ck_assert_int_eq(s, 2 * 86400 + 3);
}
END_TEST

START_TEST(percentiles)
{
	double v[20];

	/* nearest rank: the smallest value with at least p% of the values at or below it */
	for (int i = 0; i < 20; i++)
		v[i] = 20 - i;           /* unsorted on purpose */
	ck_assert_double_eq(mxq_sim_percentile(v, 20, 95), 19);
	ck_assert_double_eq(mxq_sim_percentile(v, 20, 50), 10);
	ck_assert_double_eq(mxq_sim_percentile(v, 20, 100), 20);
	ck_assert_double_eq(mxq_sim_percentile(v, 20, 1), 1);
	ck_assert_double_eq(mxq_sim_percentile(v, 20, 96), 20);
	double three[] = { 7, 3, 5 };
	ck_assert_double_eq(mxq_sim_percentile(three, 3, 95), 7);
	ck_assert_double_eq(mxq_sim_percentile(three, 3, 34), 5);
	ck_assert_double_eq(mxq_sim_percentile(three, 3, 33), 3);
	ck_assert_double_eq(mxq_sim_percentile(NULL, 0, 95), 0);
}
END_TEST

START_TEST(gap_cost)
{
	struct mxq_sim_class c;

	small_class(&c, 1, 1);
	/* shorter than shutdown + boot: stay on */
	ck_assert_energy(mxq_sim_gap_cost(&c, 79, false), 7900);
	/* exactly shutdown + boot: 1000 + 6000 < 8000 */
	ck_assert_energy(mxq_sim_gap_cost(&c, 80, false), 7000);
	/* a short gap where cycling does not pay: 65 s < 80 s, stay on */
	ck_assert_energy(mxq_sim_gap_cost(&c, 65, false), 6500);
	/* long: 7000 + (1000 - 80) * 2 */
	ck_assert_energy(mxq_sim_gap_cost(&c, 1000, false), 8840);
	/* at the end no boot: 1000 + (100 - 20) * 2 */
	ck_assert_energy(mxq_sim_gap_cost(&c, 100, true), 1160);
	ck_assert_energy(mxq_sim_gap_cost(&c, 10, true), 1000);
	ck_assert_energy(mxq_sim_gap_cost(&c, 5, true), 500);
}
END_TEST

/* 1 node of 2 cores always on, one 1-core job: idle + half-busy. */
START_TEST(always_on_one_job)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 100, 50, 1, 60 });
	world_nodes(&w, 1, 2);
	world_run(&w, &p, 400);
	/* [0,100) idle 100 W, [100,150) 100 + (200-100)*1/2 = 150 W, [150,400) idle */
	ck_assert_energy(w.res.busy_j, 150.0 * 50);
	ck_assert_energy(w.res.idle_j, 100.0 * 100 + 100.0 * 250);
	ck_assert_energy(w.res.energy_j, 150.0 * 50 + 100.0 * 350);
	ck_assert_energy(w.res.transition_j, 0);
	ck_assert_uint_eq(w.res.boots, 0);
	ck_assert_uint_eq(w.res.jobs, 1);
	ck_assert_double_eq(w.res.wait_max_s, 0);
	ck_assert_int_eq(mxq_sim_done_at(w.sim), 150);
	world_done(&w);
}
END_TEST

/* Fixed idle timeout of 100 s on one node: off after the first job, woken
 * for the second, which waits exactly the boot time. */
START_TEST(timeout_boot_delay)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_TIMEOUT, .timeout_s = 100 };

	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 500, 10, 1, 10 });
	world_nodes(&w, 1, 1);
	world_run(&w, &p, 1000);
	ck_assert_double_eq(job_wait(&w, 0), 0);
	ck_assert_double_eq(job_wait(&w, 1), 60);
	ck_assert_uint_eq(w.res.boots, 1);
	ck_assert_uint_eq(w.res.boots_max, 1);
	/*
	 * [0,10) busy 2000, [10,110) idle 10000, [110,130) shutdown 1000,
	 * [130,500) off 740, [500,560) boot 6000, [560,570) busy 2000,
	 * [570,670) idle 10000, [670,690) shutdown 1000, [690,1000) off 620
	 */
	ck_assert_energy(w.res.busy_j, 4000);
	ck_assert_energy(w.res.idle_j, 20000);
	ck_assert_energy(w.res.transition_j, 8000);
	ck_assert_energy(w.res.off_j, 1360);
	ck_assert_energy(w.res.energy_j, 33360);
	ck_assert_double_eq(w.res.wait_mean_s, 30);
	world_done(&w);
}
END_TEST

/* A job arriving while its only node shuts down waits for the rest of the
 * shutdown and then a whole boot. */
START_TEST(timeout_arrival_during_shutdown)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_TIMEOUT, .timeout_s = 100 };

	/* the node shuts down during [110,130) */
	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 117, 10, 1, 10 });
	world_nodes(&w, 1, 1);
	world_run(&w, &p, 1000);
	ck_assert_double_eq(job_wait(&w, 1), (130 - 117) + 60);
	ck_assert_uint_eq(w.res.boots, 1);
	world_done(&w);
}
END_TEST

/* With a scan of 5 s (Slurm's power save thread scans once a second) the
 * woken-for job waits the scan and then the boot; a job that starts at once
 * does not wait, and a job arriving during a shutdown is scanned long before
 * the node is off, so it waits as without a scan. */
START_TEST(timeout_scan_delays_wake)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_TIMEOUT, .timeout_s = 100, .scan_s = 5 };

	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 500, 10, 1, 10 }, { 687, 10, 1, 10 });
	world_nodes(&w, 1, 1);
	world_run(&w, &p, 2000);
	ck_assert_double_eq(job_wait(&w, 0), 0);
	/* the boot starts at 505 and ends at 565 */
	ck_assert_double_eq(job_wait(&w, 1), 65);
	/* idle from 575, shutdown [675,695): woken at 695, up at 755 */
	ck_assert_double_eq(job_wait(&w, 2), (695 - 687) + 60);
	ck_assert_uint_eq(w.res.boots, 2);
	ck_assert_uint_eq(w.res.polls, 2);
	world_done(&w);

	p.scan_s = 0;
	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 500, 10, 1, 10 });
	world_nodes(&w, 1, 1);
	world_run(&w, &p, 1000);
	ck_assert_double_eq(job_wait(&w, 1), 60);
	ck_assert_uint_eq(w.res.polls, 0);
	world_done(&w);
}
END_TEST

/* The same under the real policy, ticking every 60 s: every step waits for
 * a tick, and the node acknowledges a drain at the tick after. */
START_TEST(policy_one_node_cycle)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 60, .every_tick = true };

	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 330, 10, 1, 10 });
	world_policy(&w, &p, "idle_time = 2m\nmin_on_time = 0\nmin_off_time = 0\n"
		     "warm_pool = 0\nboot_time = 1m\n", 1, 500);
	/*
	 * job 1 ends at 10; tick 120: idle 110 s < 120 s; tick 180: DRAIN;
	 * tick 240: acknowledged, POWER_OFF, shutdown [240,260); tick 300:
	 * MARK_OFF; job 2 at 330; tick 360: WAKE, boot [360,420); job 2 starts
	 * at 420 (waited 90 s); tick 480: MARK_ON.
	 */
	ck_assert_double_eq(job_wait(&w, 1), 90);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_DRAIN], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_POWER_OFF], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_MARK_OFF], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_WAKE], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_MARK_ON], 1);
	ck_assert_uint_eq(w.res.policy_errors, 0);
	ck_assert_uint_eq(w.res.ticks, 9);   /* 0, 60, ..., 480 */
	/* [0,10) 2000, [10,240) 23000, [240,260) 1000, [260,360) 200,
	 * [360,420) 6000, [420,430) 2000, [430,500) 7000 */
	ck_assert_energy(w.res.energy_j, 41200);
	ck_assert_energy(w.res.transition_j, 7000);
	world_done(&w);
}
END_TEST

/*
 * mxqd --power-poll: the cycle above with polls 5 s apart. A job that must
 * wait is decided on 5 s after its submit, unless a tick comes sooner; a
 * job that starts at once asks for nothing.
 */
START_TEST(policy_poll_decides_on_submit)
{
	static const struct {
		long submit2;
		double wait2;
		uint64_t polls;
	} row[] = {
		/* job 2 at 330: poll at 335 wakes, boot [335,395) */
		{ 330, 65, 1 },
		/* at 356: the tick at 360 comes before a poll at 361 */
		{ 356, 64, 0 },
	};

	for (size_t k = 0; k < sizeof(row) / sizeof(row[0]); k++) {
		struct world w;
		struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 60, .poll_s = 5,
					    .every_tick = true };
		struct job_spec jobs[] = { { 0, 10, 1, 10 }, { row[k].submit2, 10, 1, 10 } };

		world_jobs(&w, jobs, 2);
		world_policy(&w, &p, "idle_time = 2m\nmin_on_time = 0\nmin_off_time = 0\n"
			     "warm_pool = 0\nboot_time = 1m\n", 1, 500);
		ck_assert_double_eq(job_wait(&w, 0), 0);
		ck_assert_double_eq(job_wait(&w, 1), row[k].wait2);
		ck_assert_uint_eq(w.res.polls, row[k].polls);
		ck_assert_uint_eq(w.res.ticks, 9 + row[k].polls);
		ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_WAKE], 1);
		ck_assert_uint_eq(w.res.policy_errors, 0);
		world_done(&w);
	}
}
END_TEST

/* A gang whose second node is busy for long: its idle node is switched off
 * and woken ahead, one boot plus one idle time before the busy node frees. */
START_TEST(policy_defers_gang)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 60, .every_tick = true };

	WORLD_JOBS(&w, { 0, 3000, 1, 3000 }, { 10, 100, 2, 100 });
	world_policy(&w, &p, "idle_time = 2m\nmin_on_time = 0\nmin_off_time = 0\n"
		     "warm_pool = 0\nboot_time = 1m\n", 2, 3100);
	/*
	 * job 1 runs on node-0001 [0,3000). The gang (job 2, at 10) has
	 * node-0002 now and node-0001 at 3000: tick 60 defers it until
	 * 3000 - 60 (boot) - 120 (idle time) = 2820. node-0002, idle since 0
	 * and needed by nothing: tick 120 DRAIN, tick 180 POWER_OFF (shutdown
	 * [180,200)), tick 240 MARK_OFF. Tick 2820: WAKE, boot [2820,2880);
	 * the gang starts at 3000 when job 1 ends, as it would always on.
	 */
	ck_assert_double_eq(job_wait(&w, 1), 2990);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_DRAIN], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_POWER_OFF], 1);
	ck_assert_uint_eq(w.res.actions[MXQ_POWER_ACTION_WAKE], 1);
	ck_assert_uint_eq(w.res.policy_errors, 0);
	/* node-0001: 3100 s busy at 200 W = 620000; node-0002: idle [0,180)
	 * 18000, shutdown 1000, off [200,2820) 5240, boot 6000, idle
	 * [2880,3000) 12000, busy [3000,3100) 20000 */
	ck_assert_energy(w.res.energy_j, 682240);
	ck_assert_energy(w.res.transition_j, 7000);
	world_done(&w);
}
END_TEST

/* max_power_watts: each powered node counts at busy_watts, so a budget of
 * 450 W powers two of the three nodes; the third job waits for a free one. */
START_TEST(policy_power_budget)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 60, .every_tick = true };

	WORLD_JOBS(&w, { 1000, 500, 1, 500 }, { 1000, 500, 1, 500 }, { 1000, 500, 1, 500 });
	world_policy(&w, &p, "idle_time = 2m\nmin_on_time = 0\nmin_off_time = 0\n"
		     "warm_pool = 0\nboot_time = 1m\nmax_power_watts = 450\nbusy_watts = 200\n",
		     3, 2080);
	/*
	 * all three idle from 0: DRAIN at tick 120, POWER_OFF at 180, off from
	 * 200. Tick 1020: 3 jobs, nothing powered, (450 - 0) / 200 = 2 wakes;
	 * boots [1020,1080), jobs 1 and 2 run [1080,1580). The third waits
	 * (400 W of 450 W may be drawn) and runs on the first node to free,
	 * [1580,2080). Peak draw: two busy nodes, 400 W (three idle at the
	 * start: 300 W; two booting: 200 W).
	 */
	ck_assert_double_eq(job_wait(&w, 0), 80);
	ck_assert_double_eq(job_wait(&w, 1), 80);
	ck_assert_double_eq(job_wait(&w, 2), 580);
	ck_assert_uint_eq(w.res.boots, 2);
	ck_assert_double_eq(w.res.peak_powered_w, 400);
	ck_assert_uint_eq(w.res.policy_errors, 0);
	world_done(&w);
}
END_TEST

/* Wakes for waiting work need the whole node's boot; a job that fits on
 * the warm node does not. */
START_TEST(policy_warm_pool_and_max_cycles)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 60 };

	/* a job at 0, then two jobs at 1000 needing both nodes, and two at
	 * 3000 again, the same day */
	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 1000, 100, 1, 100 }, { 1000, 100, 1, 100 },
		   { 3000, 100, 1, 100 }, { 3000, 100, 1, 100 });
	world_policy(&w, &p, "idle_time = 2m\nmin_on_time = 0\nmin_off_time = 0\n"
		     "warm_pool = 1\nboot_time = 1m\nmax_cycles_per_day = 1\n", 2, 86400 + 1000);
	/* the warm node (node-0001, first by name) takes one job at once;
	 * the other is woken at tick 1020 and runs at 1080 */
	ck_assert_double_eq(job_wait(&w, 1), 0);
	ck_assert_double_eq(job_wait(&w, 2), 80);
	/* node-0002 has used its one boot of the day: at 3000 it stays off
	 * (it is not even suspended after the second job, see below) */
	ck_assert_uint_eq(w.res.boots, 1);
	/* max_cycles_per_day also keeps node-0002 on once it used its boot
	 * ("could not be woken again"), so job 5 finds it on */
	ck_assert_double_eq(job_wait(&w, 3), 0);
	ck_assert_double_eq(job_wait(&w, 4), 0);
	world_done(&w);
}
END_TEST

/* idle_time = auto learns from the gaps: one 1-core node, a 60 s job every
 * 1100 s, so every idle gap (about 1000 s) is longer than the horizon of
 * twice the break-even time (2 x 330 s). Until 16 gaps are counted the
 * node waits a quarter of the break-even time before each power-off, as
 * with a fixed idle_time = 1m23s; each gap is counted when its power-off
 * has gone unmatched for the horizon (long before the next job), so from
 * the 17th on the learned idle time is 0 and the node goes off at the
 * next tick.
 * self_check: the kept index and a fresh one learn the same. */
START_TEST(policy_learns_idle_time)
{
	static const char *const conf[2] = {
		"idle_time = auto\nmin_on_time = 0\nmin_off_time = 0\nwarm_pool = 0\n"
		"boot_time = 1m\nmax_cycles_per_day = 0\n",
		"idle_time = 1m23s\nmin_on_time = 0\nmin_off_time = 0\nwarm_pool = 0\n"
		"boot_time = 1m\nmax_cycles_per_day = 0\n",
	};
	struct mxq_sim_result res[2];
	char l[128], *text = calloc(31, 128);

	ck_assert_ptr_nonnull(text);
	for (int k = 0; k < 30; k++)
		strcat(text, swf_line(l, sizeof(l), k + 1, k * 1100L, 60, 1, 60));
	for (int k = 0; k < 2; k++) {
		struct world w;
		struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY, .tick_s = 10,
					    .self_check = true };
		world_trace(&w, text);
		world_policy(&w, &p, conf[k], 1, 30 * 1100L);
		res[k] = w.res;
		ck_assert_uint_eq(res[k].policy_errors, 0);
		world_done(&w);
	}
	free(text);
	/* the same power cycles: every gap is worth one */
	ck_assert_uint_eq(res[0].boots, res[1].boots);
	ck_assert_uint_eq(res[0].boots, 29);
	ck_assert_uint_eq(res[0].actions[MXQ_POWER_ACTION_DRAIN],
			  res[1].actions[MXQ_POWER_ACTION_DRAIN]);
	/* the last 14 gaps (the 17th to the one after the last job) idle at
	 * most two ticks (off at the first tick, acknowledged at the next)
	 * instead of 83 s and up to two ticks: 14 x 63 s x 100 W less idle
	 * energy at the least, 14 x 103 s x 100 W at most */
	ck_assert_msg(res[0].idle_j <= res[1].idle_j - 14 * 63 * 100.0 &&
		      res[0].idle_j >= res[1].idle_j - 14 * 103 * 100.0,
		      "idle %.0f J learned, %.0f J fixed", res[0].idle_j, res[1].idle_j);
}
END_TEST

/* The lower bound on one 1-core node: floor all the time, ON time for the
 * core-seconds, the slots' own draw. */
START_TEST(lower_bound_one_node)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 0, 10, 1, 10 }, { 50, 10, 1, 10 }, { 1000, 10, 1, 10 });
	world_nodes(&w, 1, 1);
	world_run(&w, &p, 1110);
	/* busy 3 x 10 s x 200 W; idle gaps 40 s, 940 s and a 100 s tail */
	ck_assert_energy(w.res.energy_j, 6000 + (40 + 940 + 100) * 100.0);
	/* floor min(off 2, idle 100, boot 100, shutdown 50) = 2 W over 1110 s:
	 * 2220; 30 core-s of ON time at (100 - 2) W: 2940; the slots' own
	 * (200 - 100) W x 30 s: 3000 */
	ck_assert_energy(w.res.bound_j, 2220 + 2940 + 3000);
	ck_assert_energy(mxq_sim_lower_bound(w.cluster, 1110), w.res.bound_j);
	world_done(&w);
}
END_TEST

/* Two classes: ON time is bought at the cheapest idle watts per core,
 * memory-seconds may cost more than core-seconds, the slots' draw is the
 * cheapest class's. */
START_TEST(lower_bound_classes)
{
	struct world w;
	struct mxq_sim_class c[2];

	/* 2 jobs of 2 processors for 100 s, 1000 KiB each processor */
	world_trace(&w, "1 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n"
			"2 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n");
	small_class(&c[0], 1, 4);   /* (100 - 2) / 4 = 24.5 W per core */
	snprintf(c[0].name, sizeof(c[0].name), "big");
	c[0].memory_mib = 2;        /* 49 W per MiB */
	small_class(&c[1], 3, 1);   /* 98 W per core, (200-100)/1 per slot */
	snprintf(c[1].name, sizeof(c[1].name), "small");
	c[1].memory_mib = 4;        /* 24.5 W per MiB */
	world_cluster(&w, c, 2, NULL);
	/* H = 1000: floor 4 nodes x 2 W x 1000 = 8000. Core-seconds 400: the
	 * big class sells 4000 at 24.5: 9800. MiB-seconds: each job needs 2 MiB
	 * (2000 KiB) x 100 s, 400 in all: small sells 12000 at 24.5: 9800, a tie.
	 * Slots: 400 slot-s at (200 - 100) / 4 = 25 W on the big class: 10000. */
	ck_assert_energy(mxq_sim_lower_bound(w.cluster, 1000), 8000 + 9800 + 10000);
	/* memory dearer than cores: small class sells memory at 98 W/MiB */
	world_done(&w);
	world_trace(&w, "1 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n"
			"2 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n");
	c[1].memory_mib = 1;        /* 98 W per MiB, 3000 MiB-s */
	c[0].memory_mib = 4;        /* 24.5 W per MiB, 4000 MiB-s: all 400 there */
	world_cluster(&w, c, 2, NULL);
	ck_assert_energy(mxq_sim_lower_bound(w.cluster, 1000), 8000 + 9800 + 10000);
	c[0].memory_mib = 8;        /* 12.25 W per MiB: memory cheaper, cores decide */
	world_done(&w);
	world_trace(&w, "1 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n"
			"2 0 -1 100 2 -1 -1 2 100 1000 1 1 1 -1 -1 -1 -1 -1\n");
	c[0].cores = 1;             /* 98 W per core everywhere now, slots 100 W */
	world_cluster(&w, c, 2, NULL);
	/* jobs of 2 processors no longer fit one node: gang of 2 parts of 1
	 * slot; core-s 400 at 98 = 39200; MiB-s 400 at 12.25 = 4900 */
	ck_assert_energy(mxq_sim_lower_bound(w.cluster, 1000), 8000 + 39200 + 40000);
	world_done(&w);
}
END_TEST

/* Every policy the simulator runs, on the cluster of W: none may use less
 * than the lower bound. */
static void assert_bound_holds(struct world *w, const char *what)
{
	static const int64_t timeouts[] = { 0, 60, 600, 3600 };
	struct mxq_sim_params p[2 + sizeof(timeouts) / sizeof(timeouts[0])];
	size_t n = 0;
	struct mxq_sim *sims[sizeof(p) / sizeof(p[0])];
	int64_t end = mxq_sim_cluster_start(w->cluster);

	p[n++] = (struct mxq_sim_params) { .policy = MXQ_SIM_ALWAYS_ON };
	for (size_t k = 0; k < sizeof(timeouts) / sizeof(timeouts[0]); k++)
		p[n++] = (struct mxq_sim_params) { .policy = MXQ_SIM_TIMEOUT,
						   .timeout_s = timeouts[k], .scan_s = k % 2 };
	p[n++] = (struct mxq_sim_params) { .policy = MXQ_SIM_POLICY, .cfg = &w->cfg, .tick_s = 10 };
	for (size_t k = 0; k < n; k++) {
		ck_assert_int_eq(mxq_sim_new(w->cluster, &p[k], &sims[k]), 0);
		int r = mxq_sim_run(sims[k]);
		ck_assert_msg(r == 0, "%s: %s (timeout %lld s): %s", what,
			      mxq_sim_policy_to_string(p[k].policy), (long long)p[k].timeout_s,
			      strerror(-r));
		if (mxq_sim_done_at(sims[k]) > end)
			end = mxq_sim_done_at(sims[k]);
	}
	for (size_t k = 0; k < n; k++) {
		struct mxq_sim_result r;
		ck_assert_int_eq(mxq_sim_close(sims[k], end), 0);
		mxq_sim_get_result(sims[k], &r);
		ck_assert_msg(r.energy_j >= r.bound_j * (1 - 1e-12),
			      "%s: %s (timeout %lld s) used %.1f J, below the bound %.1f J", what,
			      mxq_sim_policy_to_string(p[k].policy), (long long)p[k].timeout_s,
			      r.energy_j, r.bound_j);
		ck_assert(r.bound_j > 0);
		mxq_sim_free(sims[k]);
	}
}

/* The start of every shipped trace (MXQ_TRACES_DIR, default
 * ../shared/traces; the first 1500 jobs keep the test quick), on the
 * cluster its header describes, one class and a mixed one. */
START_TEST(lower_bound_holds_on_traces)
{
	static const char *const names[] = {
		"HPC2N-2002-2.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz", "alea-hpc2n.swf.gz",
	};
	const char *dir = getenv("MXQ_TRACES_DIR") ? getenv("MXQ_TRACES_DIR") : "../shared/traces";
	size_t found = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4096], err[512];
		for (int mixed = 0; mixed <= 1; mixed++) {
			struct world w;
			struct mxq_sim_class c[2];
			memset(&w, 0, sizeof(w));
			mxq_power_config_defaults(&w.cfg);
			mxq_sim_trace_init(&w.trace);
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			int r = mxq_sim_trace_read(&w.trace, path, 1500, err, sizeof(err));
			if (r == -EIO) {
				fprintf(stderr, "test_sim: %s not there, trace not checked\n", path);
				world_done(&w);
				break;
			}
			ck_assert_msg(r == 0, "%s", err);
			found++;
			uint32_t nodes = w.trace.max_nodes ? w.trace.max_nodes : 100;
			uint32_t cores = w.trace.max_procs >= nodes ? w.trace.max_procs / nodes : 1;
			small_class(&c[0], nodes, cores);
			c[0].boot_s = 180;
			c[0].boot_j = 30000;
			if (!mixed) {
				world_cluster(&w, c, 1, NULL);
			} else {
				/* half the nodes twice as wide, cheaper per core */
				c[0].count = nodes / 2;
				snprintf(c[0].name, sizeof(c[0].name), "wide");
				c[0].cores = cores * 2;
				c[0].idle_w = 150;
				c[0].busy_w = 400;
				c[1] = c[0];
				snprintf(c[1].name, sizeof(c[1].name), "narrow");
				c[1].count = nodes - nodes / 2;
				c[1].cores = cores;
				c[1].idle_w = 100;
				c[1].busy_w = 200;
				world_cluster(&w, c, 2, NULL);
			}
			assert_bound_holds(&w, names[i]);
			world_done(&w);
		}
	}
	fprintf(stderr, "test_sim: lower bound checked on %zu trace clusters\n", found);
}
END_TEST

static long rnd(uint64_t *x, uint64_t n)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return (long)((*x >> 33) % n);
}

/* Random traces on random mixed clusters (cores, memory, watts), wide jobs
 * as gangs, clamped or split. */
START_TEST(lower_bound_holds_on_random_traces)
{
	uint64_t x = 0x5eed17;

	for (int round = 0; round < 12; round++) {
		struct world w;
		struct mxq_sim_class c[2];
		char *text = calloc(300, 160);
		size_t len = 0;
		ck_assert_ptr_nonnull(text);
#define RND(n) rnd(&x, (uint64_t)(n))
		long t = 0;
		int n_jobs = 50 + (int)RND(250);
		for (int k = 0; k < n_jobs; k++) {
			t += RND(RND(4) == 0 ? 20000 : 600);
			long run = 1 + RND(RND(3) == 0 ? 40000 : 3000);
			int procs = 1 + (int)RND(RND(4) == 0 ? 24 : 4);
			long mem = RND(3) == 0 ? -1 : 1 + RND(3000000);
			len += (size_t)snprintf(text + len, 160, "%d %ld -1 %ld %d -1 -1 %d %ld %ld "
						"1 1 1 -1 -1 -1 -1 -1\n", k + 1, t, run, procs, procs,
						run + RND(2000), mem);
		}
#undef RND
		world_trace(&w, text);
		free(text);
		for (int i = 0; i < 2; i++) {
			small_class(&c[i], 1 + (uint32_t)(x >> 40) % 6, 1 + (uint32_t)(x >> 20) % 8);
			snprintf(c[i].name, sizeof(c[i].name), "c%d", i);
			c[i].memory_mib = round % 3 == 0 ? 0 : 1024 + (x >> 10) % 8192;
			c[i].idle_w = 40 + (double)((x >> 5) % 200);
			c[i].busy_w = c[i].idle_w + (double)((x >> 13) % 300);
			c[i].off_w = (double)((x >> 7) % 10);
			c[i].boot_s = 30 + (int64_t)((x >> 17) % 300);
			c[i].shutdown_s = 10 + (int64_t)((x >> 23) % 100);
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		}
		if (round % 3 == 0)
			c[0].memory_mib = c[1].memory_mib = 0;
		struct mxq_sim_workload_opts o;
		mxq_sim_workload_opts_defaults(&o);
		o.wide = (enum mxq_sim_wide)(round % _MXQ_SIM_WIDE_MAX);  /* gang, clamp, split */
		world_cluster(&w, c, 2, &o);
		world_config(&w, round % 2 ? "idle_time = auto\nwarm_pool = 0\n" : "warm_pool = 0\n");
		if (getenv("TEST_SIM_VERBOSE"))
			fprintf(stderr, "round %d\n", round);
		assert_bound_holds(&w, "random trace");
		world_done(&w);
	}
}
END_TEST

/* FCFS with EASY backfilling around a gang job on 2 one-core nodes. */
START_TEST(dispatch_gang_and_backfill)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 0, 100, 1, 100 },
		   { 10, 50, 2, 50 },     /* gang: both nodes */
		   { 20, 30, 1, 30 },     /* ends by 100: backfills */
		   { 20, 200, 1, 200 });  /* would delay job 2 */
	world_nodes(&w, 2, 1);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->wide, 1);
	world_run(&w, &p, 400);
	ck_assert_double_eq(job_wait(&w, 0), 0);
	ck_assert_double_eq(job_wait(&w, 1), 90);    /* starts at 100, when job 1 ends */
	ck_assert_double_eq(job_wait(&w, 2), 0);     /* [20,50) on the reserved node */
	ck_assert_double_eq(job_wait(&w, 3), 130);   /* after job 2, at 150 */
	ck_assert_double_eq(w.res.wait_mean_s, 55);
	ck_assert_int_eq(mxq_sim_done_at(w.sim), 350);
	world_done(&w);
}
END_TEST

/* Two 1-core nodes (small_class), wide jobs handled as WIDE. */
static void world_two_nodes_wide(struct world *w, enum mxq_sim_wide wide)
{
	struct mxq_sim_class c;
	struct mxq_sim_workload_opts o;

	small_class(&c, 2, 1);
	mxq_sim_workload_opts_defaults(&o);
	o.wide = wide;
	world_cluster(w, &c, 1, &o);
}

/* Clamping instead: the wide job runs on one node, no waiting for both. */
START_TEST(dispatch_clamp)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 0, 100, 1, 100 }, { 10, 50, 2, 50 });
	world_two_nodes_wide(&w, MXQ_SIM_WIDE_CLAMP);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->clamped_procs, 1);
	world_run(&w, &p, 400);
	ck_assert_double_eq(job_wait(&w, 1), 0);
	world_done(&w);
}
END_TEST

/* MXQ workload: a 3-processor job on two 1-core nodes becomes three
 * independent 1-core jobs; two start at once, the third when the first
 * node frees, where a gang would have been cut to 2 parts. */
START_TEST(dispatch_split)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 0, 100, 1, 100 }, { 10, 50, 3, 50 });
	world_two_nodes_wide(&w, MXQ_SIM_WIDE_SPLIT);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->split, 1);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->jobs, 4);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->wide, 0);
	world_run(&w, &p, 400);
	/* job 1 on node 1 [0,100); piece 1 on node 2 [10,60); piece 2 on node 2
	 * [60,110) (waits 50); piece 3 on node 1 [100,150) (waits 90) */
	ck_assert_double_eq(job_wait(&w, 0), 0);
	ck_assert_double_eq(job_wait(&w, 1), 0);
	ck_assert_double_eq(job_wait(&w, 2), 50);
	ck_assert_double_eq(job_wait(&w, 3), 90);
	/* busy 100 + 150 s at 200 W, idle 400 x 2 - 250 s at 100 W */
	ck_assert_energy(w.res.energy_j, 250 * 200.0 + 550 * 100.0);
	world_done(&w);
}
END_TEST

/* Memory is a resource like slots: two jobs that do not fit together wait
 * for each other even with a free core. */
START_TEST(dispatch_memory)
{
	struct world w;
	struct mxq_sim_class c;
	/* requested memory 600 MiB per processor (field 10, KiB) */
	const char *text =
		"1 0 -1 100 1 -1 -1 1 100 614400 1 1 1 -1 -1 -1 -1 -1\n"
		"2 10 -1 100 1 -1 -1 1 100 614400 1 1 1 -1 -1 -1 -1 -1\n"
		"3 10 -1 100 1 -1 -1 1 100 102400 1 1 1 -1 -1 -1 -1 -1\n";
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	world_trace(&w, text);
	small_class(&c, 1, 4);
	c.memory_mib = 1024;
	world_cluster(&w, &c, 1, NULL);
	world_run(&w, &p, 400);
	ck_assert_double_eq(job_wait(&w, 1), 90);
	ck_assert_double_eq(job_wait(&w, 2), 0);     /* 100 MiB fits beside job 1 */
	world_done(&w);
}
END_TEST

/* Overruns are cut to the requested time unless asked not to. */
START_TEST(time_limit)
{
	struct world w;
	struct mxq_sim_class c;
	struct mxq_sim_workload_opts o;
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	WORLD_JOBS(&w, { 0, 100, 1, 60 });
	world_nodes(&w, 1, 1);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->cut_to_limit, 1);
	world_run(&w, &p, 200);
	ck_assert_int_eq(mxq_sim_done_at(w.sim), 60);
	world_done(&w);

	WORLD_JOBS(&w, { 0, 100, 1, 60 });
	small_class(&c, 1, 1);
	mxq_sim_workload_opts_defaults(&o);
	o.keep_overruns = true;
	world_cluster(&w, &c, 1, &o);
	world_run(&w, &p, 200);
	ck_assert_int_eq(mxq_sim_done_at(w.sim), 100);
	world_done(&w);
}
END_TEST

/* Window and scaling choose and copy jobs. */
START_TEST(window_and_scale)
{
	struct world w;
	struct mxq_sim_class c;
	struct mxq_sim_workload_opts o;
	char text[2048], l[128];

	text[0] = '\0';
	for (int i = 0; i < 10; i++)
		strcat(text, swf_line(l, sizeof(l), i + 1, i * 1000L, 10, 1, 10));
	small_class(&c, 4, 1);

	world_trace(&w, text);
	mxq_sim_workload_opts_defaults(&o);
	o.skip_s = 2000;
	o.window_s = 3000;                   /* submits 2000, 3000, 4000 */
	world_cluster(&w, &c, 1, &o);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->jobs, 3);
	ck_assert_int_eq(mxq_sim_cluster_start(w.cluster), 2000);
	ck_assert_int_eq(mxq_sim_cluster_last_submit(w.cluster), 4000);
	world_done(&w);

	world_trace(&w, text);
	mxq_sim_workload_opts_defaults(&o);
	o.scale = 3;
	world_cluster(&w, &c, 1, &o);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->jobs, 30);
	/* copies are shifted within the span, never beyond it */
	ck_assert_int_le(mxq_sim_cluster_last_submit(w.cluster), 9000);
	world_done(&w);

	world_trace(&w, text);
	o.scale = 2.5;
	world_cluster(&w, &c, 1, &o);
	ck_assert_uint_gt(mxq_sim_cluster_stats(w.cluster)->jobs, 20);
	ck_assert_uint_lt(mxq_sim_cluster_stats(w.cluster)->jobs, 30);
	world_done(&w);
}
END_TEST

/* A node class that cannot run a job leaves it out; classes are qualified
 * with the real server_is_qualified(). */
START_TEST(qualification)
{
	struct world w;
	struct mxq_sim_class c[2];
	struct mxq_sim_params p = { .policy = MXQ_SIM_ALWAYS_ON };

	/* a 2-hour job on classes accepting at most 1 hour: unrunnable */
	WORLD_JOBS(&w, { 0, 100, 1, 7200 }, { 0, 100, 4, 600 });
	small_class(&c[0], 2, 1);
	c[0].maxtime_min = 60;
	small_class(&c[1], 1, 4);
	snprintf(c[1].name, sizeof(c[1].name), "fat");
	c[1].maxtime_min = 60;
	world_cluster(&w, c, 2, NULL);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->unrunnable, 1);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->jobs, 1);
	ck_assert_uint_eq(mxq_sim_cluster_nodes(w.cluster), 3);
	world_run(&w, &p, 400);
	/* the 4-core job runs on the fat node at once, not as a gang */
	ck_assert_double_eq(job_wait(&w, 0), 0);
	ck_assert_uint_eq(mxq_sim_cluster_stats(w.cluster)->wide, 0);
	world_done(&w);
}
END_TEST

/* The time series: bucket means of powered and busy nodes; the last,
 * partly covered bucket is a mean over the time it covers. */
START_TEST(time_series)
{
	struct world w;
	struct mxq_sim_params p = { .policy = MXQ_SIM_TIMEOUT, .timeout_s = 60,
				    .series_step_s = 100 };
	const double *pw, *bz;

	WORLD_JOBS(&w, { 100, 50, 1, 60 });
	world_nodes(&w, 2, 1);
	world_run(&w, &p, 250);
	ck_assert_uint_eq(mxq_sim_series(w.sim, &pw, &bz), 3);
	/* both nodes on until 60, then shutting down until 80, then off; node 1
	 * is woken at 100 (booting until 160) */
	ck_assert_double_eq_tol(pw[0], (2 * 80.0) / 100, 1e-9);
	ck_assert_double_eq_tol(bz[0], 0, 1e-9);
	/* [100,200): node 1 boots [100,160), runs [160,210): powered 100 s */
	ck_assert_double_eq_tol(pw[1], 1, 1e-9);
	ck_assert_double_eq_tol(bz[1], 40.0 / 100, 1e-9);
	/* [200,250): runs until 210, idle after: powered all 50 s, busy 10 s */
	ck_assert_double_eq_tol(pw[2], 1, 1e-9);
	ck_assert_double_eq_tol(bz[2], 10.0 / 50, 1e-9);
	ck_assert_double_eq(job_wait(&w, 0), 60);
	world_done(&w);
}
END_TEST

/* Skipping quiet ticks must not change anything: busy little workloads
 * run with and without it give identical results - one of small jobs and
 * one where most jobs are gangs of up to 8 nodes, asked every 10 s, so
 * that ticks are skipped while nodes boot and gangs wait. */
START_TEST(quiet_ticks_are_exact)
{
	static const struct {
		int max_procs; long gap; int64_t tick, poll, end; uint32_t nodes, cores;
	} load[] = {
		{ 6, 700, 60, 0, 400 * 700, 8, 2 }, { 16, 150, 10, 0, 1000 * 1000, 24, 1 },
		{ 16, 150, 10, 3, 1000 * 1000, 24, 1 },
	};
	char *text = malloc(64 * 1024);
	char l[128];

	ck_assert_ptr_nonnull(text);
	for (size_t w_i = 0; w_i < sizeof(load) / sizeof(load[0]); w_i++) {
		struct mxq_sim_result res[2];
		uint64_t x = 12345;

		text[0] = '\0';
		for (int i = 0; i < 300; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			long submit = i * load[w_i].gap + (long)((x >> 33) % 600);
			long run = 30 + (long)((x >> 20) % 3000);
			int procs = 1 + (int)((x >> 45) % (uint64_t)load[w_i].max_procs);
			strcat(text, swf_line(l, sizeof(l), i + 1, submit, run, procs, run + 600));
		}
		for (int k = 0; k < 2; k++) {
			struct world w;
			struct mxq_sim_class c;
			struct mxq_sim_params p = { .policy = MXQ_SIM_POLICY,
						    .tick_s = load[w_i].tick,
						    .poll_s = load[w_i].poll, .every_tick = k == 1 };
			world_trace(&w, text);
			p.cfg = &w.cfg;
			small_class(&c, load[w_i].nodes, load[w_i].cores);
			world_cluster(&w, &c, 1, NULL);
			world_run(&w, &p, load[w_i].end);
			res[k] = w.res;
			world_done(&w);
		}
		ck_assert_uint_gt(res[0].ticks_skipped, 0);
		ck_assert_uint_eq(res[1].ticks_skipped, 0);
		ck_assert_uint_eq(res[0].polls, res[1].polls);
		ck_assert(load[w_i].poll ? res[0].polls > 0 : res[0].polls == 0);
		ck_assert_uint_gt(res[0].actions[MXQ_POWER_ACTION_WAKE], 0);
		ck_assert_double_eq(res[0].energy_j, res[1].energy_j);
		ck_assert_double_eq(res[0].wait_mean_s, res[1].wait_mean_s);
		ck_assert_double_eq(res[0].wait_max_s, res[1].wait_max_s);
		ck_assert_uint_eq(res[0].boots, res[1].boots);
		ck_assert_int_eq(memcmp(res[0].actions, res[1].actions, sizeof(res[0].actions)), 0);
	}
	free(text);
}
END_TEST

/*
 * The node sets the simulator keeps from event to event (dispatch
 * candidates, the reservation's nodes, the quiet-tick thresholds, the gangs
 * a pass already knows to fail) and the policy's kept index must give what
 * a pass over every node gives, at every dispatch pass and decision
 * (params.self_check compares them and ends the run otherwise): gang-heavy
 * random workloads on two classes with different boot times, for every
 * kind of simulation.
 */
START_TEST(kept_sets_match_full_passes)
{
	static const char *const confs[] = {
		"",
		"idle_time = 5m\nmin_off_time = 10m\nwarm_pool = 1\n",
		"idle_time = auto\nmax_cycles_per_day = 4\nmax_booting = 3\n",
	};
	char *text = malloc(64 * 1024);
	char l[128];
	uint64_t x = 777;

	ck_assert_ptr_nonnull(text);
	for (int gap = 120; gap <= 1500; gap += 1380) {
	text[0] = '\0';
	for (int i = 0; i < 400; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		long submit = i * gap + (long)((x >> 33) % 600);
		long run = 30 + (long)((x >> 20) % 5000);
		int procs = (x >> 45) % 3 == 0 ? 2 + (int)((x >> 50) % 9) : 1;
		strcat(text, swf_line(l, sizeof(l), i + 1, submit, run, procs,
				      run + (long)((x >> 40) % 3000)));
	}
	for (size_t k = 0; k < 2 + sizeof(confs) / sizeof(confs[0]); k++) {
		struct world w;
		struct mxq_sim_class c[2];
		struct mxq_sim_params p = { .policy = k == 0 ? MXQ_SIM_ALWAYS_ON :
						      k == 1 ? MXQ_SIM_TIMEOUT : MXQ_SIM_POLICY,
					    .timeout_s = 300, .scan_s = 1, .tick_s = 10,
					    .poll_s = k % 2 ? 2 : 0,
					    .self_check = true };
		world_trace(&w, text);
		if (k >= 2)
			world_config(&w, confs[k - 2]);
		p.cfg = &w.cfg;
		small_class(&c[0], 14, 2);
		small_class(&c[1], 10, 4);
		snprintf(c[1].name, sizeof(c[1].name), "slow");
		c[1].boot_s = 200;
		c[1].rank = 1;
		world_cluster(&w, c, 2, NULL);
		ck_assert_int_eq(mxq_sim_new(w.cluster, &p, &w.sim), 0);
		ck_assert_msg(mxq_sim_run(w.sim) == 0, "simulation %zu: the kept sets differ", k);
		ck_assert_int_eq(mxq_sim_close(w.sim, mxq_sim_done_at(w.sim) + 3600), 0);
		mxq_sim_get_result(w.sim, &w.res);
		ck_assert_uint_eq(w.res.jobs, 400);
		if (k >= 1)
			ck_assert_uint_gt(w.res.boots, 0);
		world_done(&w);
	}
	}
	free(text);
}
END_TEST

/*
 * mxq_sim_trim() frees the per-job arrays once every job ended; closing the
 * books afterwards (ticks and shutdowns up to END) must not need them and
 * gives the same result, waits included.
 */
START_TEST(trim_keeps_results)
{
	char *text = malloc(64 * 1024);
	char l[128];
	uint64_t x = 4242;

	ck_assert_ptr_nonnull(text);
	text[0] = '\0';
	for (int i = 0; i < 300; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		long run = 30 + (long)((x >> 20) % 5000);
		int procs = (x >> 45) % 3 == 0 ? 2 + (int)((x >> 50) % 9) : 1;
		strcat(text, swf_line(l, sizeof(l), i + 1, i * 200 + (long)((x >> 33) % 600), run,
				      procs, run + (long)((x >> 40) % 3000)));
	}
	for (int k = 0; k < 3; k++) {
		struct mxq_sim_result res[2];
		for (int trim = 0; trim <= 1; trim++) {
			struct world w;
			struct mxq_sim_params p = { .policy = k == 0 ? MXQ_SIM_ALWAYS_ON :
							      k == 1 ? MXQ_SIM_TIMEOUT : MXQ_SIM_POLICY,
						    .timeout_s = 300, .scan_s = 1, .tick_s = 10,
						    .poll_s = 1 };
			size_t n;
			world_trace(&w, text);
			p.cfg = &w.cfg;
			world_nodes(&w, 12, 2);
			ck_assert_int_eq(mxq_sim_new(w.cluster, &p, &w.sim), 0);
			ck_assert_int_eq(mxq_sim_run(w.sim), 0);
			if (trim) {
				mxq_sim_trim(w.sim);
				ck_assert_ptr_null(mxq_sim_waits(w.sim, &n));
				ck_assert_uint_eq(n, 0);
			}
			ck_assert_int_eq(mxq_sim_close(w.sim, mxq_sim_done_at(w.sim) + 7200), 0);
			mxq_sim_get_result(w.sim, &res[trim]);
			world_done(&w);
		}
		ck_assert_uint_eq(res[0].jobs, 300);
		const struct mxq_sim_result *u = &res[0], *t = &res[1];
		ck_assert_msg(u->energy_j == t->energy_j && u->busy_j == t->busy_j &&
			      u->idle_j == t->idle_j && u->transition_j == t->transition_j &&
			      u->off_j == t->off_j && u->boots == t->boots && u->jobs == t->jobs &&
			      u->wait_mean_s == t->wait_mean_s && u->wait_p95_s == t->wait_p95_s &&
			      u->wait_max_s == t->wait_max_s && u->events == t->events &&
			      u->ticks == t->ticks && u->end == t->end &&
			      memcmp(u->actions, t->actions, sizeof(u->actions)) == 0,
			      "simulation %d: trimmed %.3f J / %.3f s mean wait, untrimmed %.3f J / %.3f s",
			      k, t->energy_j, t->wait_mean_s, u->energy_j, u->wait_mean_s);
		ck_assert_double_gt(res[0].wait_p95_s, 0.0);
	}
	free(text);
}
END_TEST

/* Once its jobs are dropped, a trace keeps its counts and refuses what
 * would need the jobs. */
START_TEST(trace_drop_jobs_refuses)
{
	struct world w;
	struct mxq_sim_class c;
	struct mxq_sim_workload_opts o;
	struct mxq_sim_cluster *again = NULL;
	char l[128], err[256];

	world_trace(&w, swf_line(l, sizeof(l), 1, 0, 60, 1, 60));
	world_nodes(&w, 2, 1);
	mxq_sim_trace_drop_jobs(&w.trace);
	ck_assert_ptr_null(w.trace.jobs);
	ck_assert_uint_eq(w.trace.n_jobs, 1);
	ck_assert_int_eq(mxq_sim_trace_add_line(&w.trace, swf_line(l, sizeof(l), 2, 5, 60, 1, 60),
						err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "the trace's jobs were dropped");
	small_class(&c, 2, 1);
	mxq_sim_workload_opts_defaults(&o);
	ck_assert_int_eq(mxq_sim_cluster_new(&w.trace, &c, 1, &o, &again, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(again);
	world_done(&w);
}
END_TEST

static Suite *sim_suite(void)
{
	Suite *s = suite_create("sim");
	TCase *parse = tcase_create("parse");
	TCase *sim = tcase_create("simulate");

	tcase_add_test(parse, trace_header_and_skips);
	tcase_add_test(parse, trace_bad_lines);
	tcase_add_test(parse, trace_extra_fields);
	tcase_add_test(parse, class_specs);
	tcase_add_test(parse, durations);
	tcase_add_test(parse, percentiles);
	tcase_add_test(parse, gap_cost);
	tcase_add_test(parse, trace_drop_jobs_refuses);
	suite_add_tcase(s, parse);

	tcase_add_test(sim, always_on_one_job);
	tcase_add_test(sim, kept_sets_match_full_passes);
	tcase_add_test(sim, timeout_boot_delay);
	tcase_add_test(sim, timeout_arrival_during_shutdown);
	tcase_add_test(sim, timeout_scan_delays_wake);
	tcase_add_test(sim, policy_one_node_cycle);
	tcase_add_test(sim, policy_poll_decides_on_submit);
	tcase_add_test(sim, policy_warm_pool_and_max_cycles);
	tcase_add_test(sim, policy_learns_idle_time);
	tcase_add_test(sim, lower_bound_one_node);
	tcase_add_test(sim, lower_bound_classes);
	tcase_add_test(sim, lower_bound_holds_on_random_traces);
	tcase_add_test(sim, policy_defers_gang);
	tcase_add_test(sim, policy_power_budget);
	tcase_add_test(sim, lower_bound_holds_on_traces);
	tcase_add_test(sim, dispatch_gang_and_backfill);
	tcase_add_test(sim, dispatch_clamp);
	tcase_add_test(sim, dispatch_split);
	tcase_add_test(sim, dispatch_memory);
	tcase_add_test(sim, time_limit);
	tcase_add_test(sim, window_and_scale);
	tcase_add_test(sim, qualification);
	tcase_add_test(sim, time_series);
	tcase_add_test(sim, quiet_ticks_are_exact);
	tcase_add_test(sim, trim_keeps_results);
	tcase_set_timeout(sim, 300);  /* generous: the machine may be loaded */
	suite_add_tcase(s, sim);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sim_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
