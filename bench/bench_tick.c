/*
 * bench_tick - one power manager tick against a real database, timed.
 *
 * Needs a populated database (tests/bench_tick.sh builds one with a
 * million queued jobs); without MXQ_BENCH_DB it says so and exits 0, so
 * `make bench` can build and run every bench_* program alike.
 *
 * Figures: the bare snapshot SELECTs (the queries the leader sends for its
 * snapshot and the per-host transport settings, results fetched and
 * discarded), the snapshot read into policy structures, and the whole tick
 * (snapshot + settings + decide()), each as the median of several runs;
 * the tick is also given as a ratio to the bare SELECTs; and the lookup
 * the leader makes between ticks (mxqd --power-poll: the newest pending
 * job), which must stay cheap however many jobs are queued; and the
 * explanations' writes, of the first decision (every host's text) and of
 * the later ones (only what changed: nothing does here).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mx_db.h"
#include "mx_util.h"
#include "mxq_daemon.h"
#include "mxq_group.h"
#include "mxq_power_db.h"
#include "mxq_power_policy.h"

#define RUNS 7

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* The leader's queries, as sent by mxq_power_db_snapshot_read(). */
static const char *const bare_queries[] = {
	"SELECT p.*, d.* FROM mxq_power p" MXQ_DAEMON_NEWEST_JOIN("p.hostname"),
	"SELECT j.host_hostname, j.date_start, j.host_slots, g.job_memory, g.job_gpu"
	" FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
	" WHERE j.job_status IN (100,150,200,250,300,350,399,989)",
	"SELECT " MXQ_GROUP_REQS_COLUMNS ", job_max_per_node, SUM(group_jobs_inq), MIN(group_id)"
	" FROM mxq_group WHERE group_status = 0 AND group_jobs_inq > 0"
	" GROUP BY " MXQ_GROUP_REQS_COLUMNS ", job_max_per_node",
	"SELECT hostname, ipmi_workarounds, ssh_address FROM mxq_power ORDER BY hostname",
};

int main(void)
{
	const char *cnf = getenv("MXQ_BENCH_DB");
	double bare[RUNS], snap[RUNS], tick[RUNS], poll[RUNS], expl[RUNS];
	size_t sent[RUNS];
	double every_host = 0;
	size_t every_sent = 0;
	struct mxq_power_lease lease = { .holder = "bench_tick" };
	struct mxq_power_config cfg;
	struct mxq_power_state state = { 0 };
	uint64_t jobs = 0, nodes = 0, groups = 0;
	struct mx_db *db;
	char err[512];

	if (!cnf) {
		printf("bench_tick: skipped here (tests/bench_tick.sh runs it against a populated database)\n");
		return 0;
	}
	if (mx_db_connect(&db, cnf, "mxqclient", err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_tick: %s\n", err);
		return 1;
	}
	mx_db_query_u64(db, &jobs, "SELECT SUM(group_jobs_inq) FROM mxq_group", NULL);
	mx_db_query_u64(db, &groups, "SELECT COUNT(*) FROM mxq_group WHERE group_jobs_inq > 0", NULL);
	mx_db_query_u64(db, &nodes, "SELECT COUNT(*) FROM mxq_power", NULL);
	mxq_power_config_defaults(&cfg);
	if (mxq_power_lease_acquire(db, &lease, 600000, 0, "bench_tick", false) != 1) {
		fprintf(stderr, "bench_tick: could not take the leader lease: %s\n", mx_db_error(db));
		return 1;
	}

	for (int i = 0; i < RUNS; i++) {
		struct mxq_power_db_snapshot *s = NULL;
		struct mxq_power_transport_extra *x = NULL;
		size_t n_x = 0;
		struct mxq_power_plan plan;
		double t0 = now_ms(), t1, t2, t3;

		for (size_t q = 0; q < MX_ARRAY_SIZE(bare_queries); q++) {
			struct mx_db_result *res = NULL;
			if (mx_db_query(db, &res, bare_queries[q], NULL) < 0) {
				fprintf(stderr, "bench_tick: %s\n", mx_db_error(db));
				return 1;
			}
			mx_db_result_free(res);
		}
		t1 = now_ms();
		if (mxq_power_db_snapshot_read(db, 60, &s) < 0) {
			fprintf(stderr, "bench_tick: snapshot: %s\n", mx_db_error(db));
			return 1;
		}
		if (mxq_power_db_transport_extras(db, &x, &n_x) < 0) {
			fprintf(stderr, "bench_tick: settings: %s\n", mx_db_error(db));
			return 1;
		}
		t2 = now_ms();
		if (mxq_power_decide(&s->snap, s->now, &cfg, &state, &plan) < 0) {
			fprintf(stderr, "bench_tick: decide failed\n");
			return 1;
		}
		t3 = now_ms();
		if (mxq_power_db_explain_plan(db, &lease, s, &plan, &sent[i]) < 0) {
			fprintf(stderr, "bench_tick: explanations: %s\n", mx_db_error(db));
			return 1;
		}
		expl[i] = now_ms() - t3;
		mxq_power_plan_free(&plan);
		mxq_power_db_snapshot_free(s);
		mxq_power_db_transport_extras_free(x, n_x);
		double p0 = now_ms();
		uint64_t newest = 0;
		if (mxq_power_db_newest_pending(db, &newest) < 0) {
			fprintf(stderr, "bench_tick: newest pending job: %s\n", mx_db_error(db));
			return 1;
		}
		poll[i] = now_ms() - p0;
		bare[i] = t1 - t0;
		snap[i] = t2 - t1;
		tick[i] = t3 - t1;
	}
	/* without the skip of unchanged texts: the snapshot's texts forgotten,
	 * an UPDATE per host, each finding its text already stored */
	{
		struct mxq_power_db_snapshot *s = NULL;
		struct mxq_power_plan plan;
		if (mxq_power_db_snapshot_read(db, 60, &s) < 0 ||
		    mxq_power_decide(&s->snap, s->now, &cfg, &state, &plan) < 0) {
			fprintf(stderr, "bench_tick: snapshot: %s\n", mx_db_error(db));
			return 1;
		}
		for (size_t i = 0; i < s->snap.n_nodes; i++) {
			free(s->hosts[i].explanation);
			s->hosts[i].explanation = NULL;
		}
		double e0 = now_ms();
		if (mxq_power_db_explain_plan(db, &lease, s, &plan, &every_sent) < 0) {
			fprintf(stderr, "bench_tick: explanations: %s\n", mx_db_error(db));
			return 1;
		}
		every_host = now_ms() - e0;
		mxq_power_plan_free(&plan);
		mxq_power_db_snapshot_free(s);
	}
	{
		double b = median(bare, RUNS), sn = median(snap, RUNS), t = median(tick, RUNS);
		printf("power tick against %llu queued jobs in %llu groups, %llu nodes (median of %d):\n",
		       (unsigned long long)jobs, (unsigned long long)groups,
		       (unsigned long long)nodes, RUNS);
		printf("  bare snapshot SELECTs: %8.2f ms\n", b);
		printf("  snapshot read:         %8.2f ms\n", sn);
		printf("  full tick (+decide):   %8.2f ms  = %.2f x the bare SELECTs\n", t, b > 0 ? t / b : 0);
		printf("  poll between ticks:    %8.2f ms  (newest pending job, --power-poll)\n",
		       median(poll, RUNS));
		printf("  explanations, first:   %8.2f ms  (%zu hosts' texts written)\n", expl[0], sent[0]);
		printf("  explanations, later:   %8.2f ms  (%zu written by the last decision: "
		       "only texts that changed)\n", median(expl + 1, RUNS - 1), sent[RUNS - 1]);
		printf("  every host sent anyway: %7.2f ms  (%zu UPDATEs, none changing a text: "
		       "%.0f x the skip)\n", every_host, every_sent,
		       every_host / (median(expl + 1, RUNS - 1) > 0 ? median(expl + 1, RUNS - 1) : 1));
	}
	mxq_power_lease_release(db, &lease);
	mxq_power_config_done(&cfg);
	mx_db_close(db);
	return 0;
}
