/*
 * mxqadmin_metrics - the power-management and queue part of
 * `mxqadmin power metrics` (Prometheus text format, node exporter textfile
 * collector); the energy counters before it come from mxqadmin_energy.c.
 *
 * Metrics (times are Unix timestamps, never ages, so a stale file shows
 * its age itself):
 *   mxq_node_power_state{host,state}             1 for the node's state, 0 for the others
 *   mxq_node_power_state_since_timestamp_seconds{host}
 *   mxq_node_power_transitions_total{host}       state changes recorded in mxq_power_event
 *   mxq_node_power_failures_total{host}          of those, the ones into FAILED
 *   mxq_node_seen_timestamp_seconds{host}        last registration of its mxqd
 *   mxq_power_leader_epoch, mxq_power_leader_info{holder},
 *   mxq_power_leader_lease_expires_timestamp_seconds,
 *   mxq_power_leader_last_tick_timestamp_seconds, mxq_power_dry_run
 *   mxq_queue_jobs{status}                       jobs per status (every status listed)
 *   mxq_user_energy_joules_total{user}           energy of the user's jobs
 *   mxq_metrics_generated_timestamp_seconds
 *
 * Errors: a failing query prints one line and makes the command exit 1.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mx_db.h"
#include "mx_util.h"
#include "mxq_power_policy.h"
#include "mxq_status.h"
#include "mxqadmin.h"

void mxqadmin_prom_label(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			printf("\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else
			putchar(*s);
	}
}

static void header(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* NAME{LABEL="VALUE"} NUMBER, the value escaped */
static void sample(const char *name, const char *label, const char *value, double v)
{
	printf("%s{%s=\"", name, label);
	mxqadmin_prom_label(value);
	printf("\"} %.15g\n", v);
}

/* One labelled sample per row of SQL (label, value); header first. */
static int per_row(struct mx_db *db, const char *name, const char *type, const char *help,
		   const char *label, const char *sql)
{
	struct mx_db_result *res = NULL;

	if (mx_db_query(db, &res, sql, NULL) < 0)
		return -1;
	header(name, type, help);
	while (mx_db_next(res))
		sample(name, label, mx_db_str(res, 0), mx_db_double(res, 1));
	mx_db_result_free(res);
	return 0;
}

/* Per host: its events in mxq_power_event, only those into TO_STATE unless
 * NULL; hosts without events count 0. */
static int event_counts(struct mx_db *db, const char *name, const char *help, const char *to_state)
{
	struct mx_db_result *res = NULL;

	if (mx_db_query(db, &res, "SELECT p.hostname, COUNT(e.event_id) FROM mxq_power p"
			" LEFT JOIN mxq_power_event e ON e.hostname = p.hostname"
			" AND (? IS NULL OR e.to_state = ?) GROUP BY p.hostname ORDER BY p.hostname",
			"ss", to_state, to_state) < 0)
		return -1;
	header(name, "counter", help);
	while (mx_db_next(res))
		sample(name, "host", mx_db_str(res, 0), mx_db_double(res, 1));
	mx_db_result_free(res);
	return 0;
}

static int node_states(struct mx_db *db)
{
	struct mx_db_result *res = NULL;

	if (mx_db_query(db, &res, "SELECT hostname, state FROM mxq_power ORDER BY hostname", NULL) < 0)
		return -1;
	header("mxq_node_power_state", "gauge",
	       "Power state of the node: 1 for its current state, 0 for the others.");
	while (mx_db_next(res)) {
		for (int s = 0; s < _MXQ_POWER_STATE_MAX; s++) {
			const char *st = mxq_power_state_to_string(s);
			printf("mxq_node_power_state{host=\"");
			mxqadmin_prom_label(mx_db_str(res, 0));
			printf("\",state=\"%s\"} %d\n", st, strcmp(st, mx_db_str(res, 1)) == 0);
		}
	}
	mx_db_result_free(res);
	return 0;
}

static int leader(struct mx_db *db)
{
	struct mx_db_result *res = NULL;

	if (mx_db_query(db, &res, "SELECT epoch, holder, UNIX_TIMESTAMP(lease_expires),"
			" COALESCE(UNIX_TIMESTAMP(last_tick_at), 0), dry_run FROM mxq_power_leader"
			" WHERE id = 1", NULL) < 0)
		return -1;
	if (mx_db_next(res)) {
		header("mxq_power_leader_epoch", "gauge", "Epoch of the power manager lease (+1 per takeover).");
		printf("mxq_power_leader_epoch %" PRIu64 "\n", mx_db_u64(res, 0));
		header("mxq_power_leader_info", "gauge", "The power manager holding the lease (value 1).");
		sample("mxq_power_leader_info", "holder", mx_db_str(res, 1), 1);
		header("mxq_power_leader_lease_expires_timestamp_seconds", "gauge",
		       "When the current lease runs out unless renewed.");
		printf("mxq_power_leader_lease_expires_timestamp_seconds %.3f\n", mx_db_double(res, 2));
		header("mxq_power_leader_last_tick_timestamp_seconds", "gauge",
		       "When the leader last ran its policy tick.");
		printf("mxq_power_leader_last_tick_timestamp_seconds %.3f\n", mx_db_double(res, 3));
		header("mxq_power_dry_run", "gauge", "1 when the leader decides but acts on nothing.");
		printf("mxq_power_dry_run %d\n", mx_db_i64(res, 4) != 0);
	}
	mx_db_result_free(res);
	return 0;
}

/* Status codes are below 1100 (mxq_status.h); every named one is listed,
 * also at 0, so a rate or alert never sees a series vanish. */
#define JOB_STATUS_CODE_LIMIT 1100

static int queue(struct mx_db *db)
{
	static uint64_t count[JOB_STATUS_CODE_LIMIT];
	struct mx_db_result *res = NULL;

	if (mx_db_query(db, &res, "SELECT job_status, COUNT(*) FROM mxq_job GROUP BY job_status", NULL) < 0)
		return -1;
	while (mx_db_next(res)) {
		int64_t code = mx_db_i64(res, 0);
		if (code >= 0 && code < JOB_STATUS_CODE_LIMIT)
			count[code] = mx_db_u64(res, 1);
	}
	mx_db_result_free(res);
	header("mxq_queue_jobs", "gauge", "Jobs in the database by status.");
	for (int code = 0; code < JOB_STATUS_CODE_LIMIT; code++)
		if (mxq_job_status_to_name(code))
			printf("mxq_queue_jobs{status=\"%s\"} %" PRIu64 "\n",
			       mxq_job_status_to_name(code), count[code]);
	return 0;
}

int mxqadmin_metrics_power(struct mx_db *db)
{
	int r = node_states(db);

	if (r == 0)
		r = per_row(db, "mxq_node_power_state_since_timestamp_seconds", "gauge",
			    "When the node entered its current power state.", "host",
			    "SELECT hostname, UNIX_TIMESTAMP(state_since) FROM mxq_power ORDER BY hostname");
	if (r == 0)
		r = per_row(db, "mxq_node_seen_timestamp_seconds", "gauge",
			    "Last registration of the node's mxqd.", "host",
			    "SELECT hostname, UNIX_TIMESTAMP(node_seen_at) FROM mxq_power"
			    " WHERE node_seen_at IS NOT NULL ORDER BY hostname");
	if (r == 0)
		r = event_counts(db, "mxq_node_power_transitions_total",
				 "Power state changes of the node recorded in mxq_power_event.", NULL);
	if (r == 0)
		r = event_counts(db, "mxq_node_power_failures_total",
				 "Transitions of the node into FAILED.", "FAILED");
	if (r == 0)
		r = leader(db);
	if (r == 0)
		r = queue(db);
	if (r == 0)
		r = per_row(db, "mxq_user_energy_joules_total", "counter",
			    "Energy of the user's jobs (mxq_power_job).", "user",
			    "SELECT g.user_name, SUM(p.energy_j) FROM mxq_power_job p"
			    " JOIN mxq_job j ON j.job_id = p.job_id JOIN mxq_group g ON g.group_id = j.group_id"
			    " GROUP BY g.user_name ORDER BY g.user_name");
	if (r < 0)
		return mxq_failure("power metrics: %s", mx_db_error(db));
	header("mxq_metrics_generated_timestamp_seconds", "gauge", "When this file was written.");
	printf("mxq_metrics_generated_timestamp_seconds %lld\n", (long long)time(NULL));
	return 0;
}
