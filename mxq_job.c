/*
 * mxq_job - the mxq_job table (see mxq_job.h): the job row mapper and
 * every statement mxqd makes on job rows. Each function is one statement;
 * the status it expects is in its WHERE clause, so the affected-row count
 * is the answer. Errors are returned as negative errno with the database's
 * message in mx_db_error(); nothing here logs.
 */
#define _GNU_SOURCE
#include "mxq_job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_db.h"
#include "mx_util.h"
#include "mxq_group.h"
#include "mxq_status.h"

void mxq_job_row_done(struct mxq_job_row *row)
{
	if (!row)
		return;
	free(row->workdir);
	mx_strvec_free(row->argv);
	free(row->stdout_path);
	free(row->stderr_path);
	free(row->callback);
	free(row->user_name);
	free(row->group_name);
	memset(row, 0, sizeof(*row));
}

int mxq_job_from_row(struct mxq_job_row *ret, const struct mx_db_result *res, unsigned col)
{
	struct mxq_job_row row = { 0 };
	const char *argv_text = mx_db_str(res, col + 3);
	int argc = 0, r;

	row.job_id = mx_db_u64(res, col + 0);
	row.group_id = mx_db_u64(res, col + 1);
	row.workdir = mx_db_strdup(res, col + 2);
	r = argv_text ? mx_argv_decode(argv_text, &row.argv, &argc) : -EINVAL;
	row.stdout_path = mx_db_strdup(res, col + 4);
	row.stderr_path = mx_db_strdup(res, col + 5);
	row.umask = (mode_t)(mx_db_u64(res, col + 6) & 0777);
	row.callback = mx_db_strdup(res, col + 7);
	row.status = (int)mx_db_i64(res, col + 8);
	row.uid = (uid_t)mx_db_u64(res, col + 9);
	row.user_name = mx_db_strdup(res, col + 10);
	row.gid = (gid_t)mx_db_u64(res, col + 11);
	row.group_name = mx_db_strdup(res, col + 12);
	row.threads = (uint32_t)mx_db_u64(res, col + 13);
	row.memory_mib = mx_db_u64(res, col + 14);
	row.time_min = mx_db_u64(res, col + 15);
	row.gpus = (uint32_t)mx_db_u64(res, col + 16);
	row.tmpdir_mib = mx_db_u64(res, col + 17) * MXQ_GROUP_TMPDIR_MIB_PER_UNIT;
	if (!row.workdir || !row.stdout_path || !row.stderr_path ||
	    !row.callback || !row.user_name || !row.group_name) {
		mxq_job_row_done(&row);
		return -ENOMEM;
	}
	if (r < 0 || argc < 1) {
		/* kept, so that the job ends FAILED through the usual hooks */
		mx_strvec_free(row.argv);
		row.argv = NULL;
	}
	*ret = row;
	return 0;
}

int64_t mxq_job_query_queued(struct mx_db *db, struct mx_db_result **ret_res, uint64_t group_id,
			     uint64_t limit)
{
	return mx_db_query(db, ret_res,
		"SELECT " MXQ_JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.group_id = ? AND j.job_status = ? ORDER BY j.job_priority, j.job_id LIMIT ?",
		"UiU", group_id, MXQ_JOB_STATUS_INQ, limit);
}

int64_t mxq_job_claim(struct mx_db *db, const struct mxq_job_claimer *c, uint64_t job_id,
		      uint32_t slots)
{
	char host_id[256];

	snprintf(host_id, sizeof(host_id), "%s::%s", c->hostname, c->daemon_name);
	return mx_db_exec(db,
		"UPDATE mxq_job SET job_status = ?, daemon_id = ?, host_hostname = ?, server_id = ?,"
		" host_id = ?, host_slots = ?"
		" WHERE job_id = ? AND job_status = ?"
		/* drain guard: once the power manager's drain of this host has
		 * committed, this statement cannot claim anything here */
		" AND NOT EXISTS (SELECT 1 FROM mxq_power p WHERE p.hostname = ? AND p.desired_state = 'OFF')",
		"iUsssuUis", MXQ_JOB_STATUS_ASSIGNED, c->daemon_id, c->hostname,
		c->daemon_name, host_id, slots, job_id, MXQ_JOB_STATUS_INQ,
		c->hostname);
}

int64_t mxq_job_set_running(struct mx_db *db, uint64_t job_id, pid_t pid)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET job_status = ?, host_pid = ?, date_start = NOW()"
		" WHERE job_id = ? AND job_status = ?",
		"iiUi", MXQ_JOB_STATUS_RUNNING, (int)pid, job_id, MXQ_JOB_STATUS_ASSIGNED);
}

int mxq_job_requeue_claimed(struct mx_db *db, uint64_t job_id)
{
	int64_t n = mx_db_exec(db,
		"UPDATE mxq_job SET job_status = 0, daemon_id = 0, host_hostname = '', server_id = '',"
		" host_id = '', host_slots = 0, host_pid = 0 WHERE job_id = ? AND job_status = ?",
		"Ui", job_id, MXQ_JOB_STATUS_ASSIGNED);
	return n < 0 ? (int)n : 0;
}

int64_t mxq_job_record_end(struct mx_db *db, uint64_t job_id, int status,
			   const struct mxq_job_stats *st)
{
	/* date_start and host_pid assigned before job_status: SET is
	 * evaluated in order */
	return mx_db_exec(db,
		"UPDATE mxq_job SET date_start = IF(date_start = 0 AND ? > 0, FROM_UNIXTIME(?), date_start),"
		" host_pid = IF(host_pid = 0, ?, host_pid),"
		" job_status = ?, date_end = NOW(), stats_status = ?,"
		" stats_utime_sec = ?, stats_utime_usec = ?, stats_stime_sec = ?, stats_stime_usec = ?,"
		" stats_real_sec = ?, stats_real_usec = ?, stats_maxrss = ?, stats_minflt = ?,"
		" stats_majflt = ?, stats_nswap = ?, stats_inblock = ?, stats_oublock = ?,"
		" stats_nvcsw = ?, stats_nivcsw = ?, stats_max_sumrss = ?"
		" WHERE job_id = ? AND job_status IN (" MXQ_JOB_ACTIVE_STATUSES ")",
		"UUiiiUuUuUullllllllUU",
		st->start_s, st->start_s, (int)st->pid,
		status, st->wait_status,
		st->utime_us / 1000000, (unsigned)(st->utime_us % 1000000),
		st->stime_us / 1000000, (unsigned)(st->stime_us % 1000000),
		st->real_us / 1000000, (unsigned)(st->real_us % 1000000),
		st->maxrss_kib, st->minflt, st->majflt, st->nswap, st->inblock, st->oublock,
		st->nvcsw, st->nivcsw, st->max_sumrss_kib, job_id);
}

int64_t mxq_job_end_is(struct mx_db *db, uint64_t job_id, int status,
		       const struct mxq_job_stats *st)
{
	struct mx_db_result *res = NULL;
	int64_t n = mx_db_query(db, &res,
		"SELECT job_id FROM mxq_job WHERE job_id = ? AND job_status = ? AND date_end > 0"
		" AND stats_status = ? AND stats_utime_sec = ? AND stats_utime_usec = ?"
		" AND stats_stime_sec = ? AND stats_stime_usec = ? AND stats_real_sec = ?"
		" AND stats_real_usec = ? AND stats_maxrss = ? AND stats_nvcsw = ? AND stats_nivcsw = ?",
		"UiiUuUuUulll", job_id, status, st->wait_status,
		st->utime_us / 1000000, (unsigned)(st->utime_us % 1000000),
		st->stime_us / 1000000, (unsigned)(st->stime_us % 1000000),
		st->real_us / 1000000, (unsigned)(st->real_us % 1000000),
		st->maxrss_kib, st->nvcsw, st->nivcsw);

	mx_db_result_free(res);
	return n < 0 ? n : n > 0;
}

int64_t mxq_job_set_reason(struct mx_db *db, uint64_t job_id, const char *reason)
{
	return mx_db_exec(db, "UPDATE mxq_job SET job_reason = LEFT(?, 1000) WHERE job_id = ?",
			  "sU", reason, job_id);
}

int64_t mxq_job_query_assigned(struct mx_db *db, struct mx_db_result **ret_res, uint64_t daemon_id)
{
	return mx_db_query(db, ret_res,
		"SELECT job_id FROM mxq_job WHERE daemon_id = ? AND job_status = ?",
		"Ui", daemon_id, MXQ_JOB_STATUS_ASSIGNED);
}

int64_t mxq_job_query_to_cancel(struct mx_db *db, struct mx_db_result **ret_res,
				uint64_t daemon_id)
{
	return mx_db_query(db, ret_res,
		"SELECT j.job_id FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.daemon_id = ? AND j.job_status IN (" MXQ_JOB_ACTIVE_STATUSES ")"
		" AND (j.job_status = ? OR g.group_status = ?)",
		"Uii", daemon_id, MXQ_JOB_STATUS_CANCELLING, MXQ_GROUP_STATUS_CANCELLED);
}

int64_t mxq_job_cancel_unstarted(struct mx_db *db, uint64_t job_id, uint64_t daemon_id)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET job_status = ?, date_end = NOW()"
		" WHERE job_id = ? AND daemon_id = ? AND job_status = ?",
		"iUUi", MXQ_JOB_STATUS_CANCELLED, job_id, daemon_id, MXQ_JOB_STATUS_CANCELLING);
}

int64_t mxq_job_cancel_queued(struct mx_db *db, uint64_t group_id)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET job_status = ?, date_end = NOW()"
		" WHERE group_id = ? AND job_status = ? AND daemon_id = 0",
		"iUi", MXQ_JOB_STATUS_CANCELLED, group_id, MXQ_JOB_STATUS_INQ);
}

int64_t mxq_job_query_cancelled_callbacks(struct mx_db *db, struct mx_db_result **ret_res,
					  uint64_t limit)
{
	return mx_db_query(db, ret_res,
		/* the requirement names are the group's alone (mxq_job has none) */
		"SELECT " MXQ_JOB_COLUMNS ", " MXQ_GROUP_REQS_COLUMNS
		" FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.host_hostname = '' AND j.server_id = ? AND j.job_status = ?"
		" AND j.job_callback <> '' AND j.date_end > NOW() - INTERVAL 1 DAY"
		" ORDER BY j.job_id LIMIT ?",
		"siU", MXQ_JOB_NEEDS_OURS, MXQ_JOB_STATUS_CANCELLED, limit);
}

int64_t mxq_job_claim_cancelled_callback(struct mx_db *db, const struct mxq_job_claimer *c,
					 uint64_t job_id)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET daemon_id = ?, host_hostname = ?, server_id = ?"
		" WHERE job_id = ? AND job_status = ? AND host_hostname = '' AND server_id = ?"
		/* the claim's drain guard: nothing new on a host being drained */
		" AND NOT EXISTS (SELECT 1 FROM mxq_power p WHERE p.hostname = ? AND p.desired_state = 'OFF')",
		"UssUiss", c->daemon_id, c->hostname, c->daemon_name, job_id,
		MXQ_JOB_STATUS_CANCELLED, MXQ_JOB_NEEDS_OURS, c->hostname);
}

int64_t mxq_job_query_one(struct mx_db *db, struct mx_db_result **ret_res, uint64_t job_id)
{
	return mx_db_query(db, ret_res,
		"SELECT " MXQ_JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.job_id = ?", "U", job_id);
}

int64_t mxq_job_query_ended_by(struct mx_db *db, struct mx_db_result **ret_res,
			       const struct mxq_job_claimer *c, uint64_t job_id)
{
	return mx_db_query(db, ret_res,
		"SELECT " MXQ_JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.job_id = ? AND j.host_hostname = ? AND j.server_id = ?"
		" AND j.job_status NOT IN (" MXQ_JOB_ACTIVE_STATUSES ") AND j.date_end > 0",
		"Uss", job_id, c->hostname, c->daemon_name);
}

int64_t mxq_job_query_left_by(struct mx_db *db, struct mx_db_result **ret_res,
			      const struct mxq_job_claimer *c)
{
	return mx_db_query(db, ret_res,
		"SELECT " MXQ_JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.host_hostname = ? AND j.server_id = ?"
		" AND j.job_status IN (" MXQ_JOB_ACTIVE_STATUSES ")",
		"ss", c->hostname, c->daemon_name);
}

int64_t mxq_job_adopt_claimed(struct mx_db *db, uint64_t job_id, uint64_t daemon_id)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET daemon_id = ? WHERE job_id = ? AND job_status IN ("
		MXQ_JOB_ACTIVE_STATUSES ")", "UU", daemon_id, job_id);
}

int64_t mxq_job_adopt(struct mx_db *db, uint64_t job_id, uint64_t daemon_id)
{
	return mx_db_exec(db,
		"UPDATE mxq_job SET daemon_id = ?, job_status = IF(job_status = ?, ?, job_status)"
		" WHERE job_id = ? AND job_status IN (" MXQ_JOB_ACTIVE_STATUSES ")",
		"UiiU", daemon_id, MXQ_JOB_STATUS_ASSIGNED, MXQ_JOB_STATUS_RUNNING, job_id);
}
