/*
 * mxq_energy_db - statements on the energy tables (see mxq_energy_db.h).
 * Single statements, retried by mx_db after a lost conflict; the writes
 * are idempotent (ON DUPLICATE KEY UPDATE, INSERT IGNORE), so a flush
 * that is repeated after an error never counts twice. Errors are negative
 * errno with the database's message in mx_db_error(); nothing here logs.
 */
#include "mxq_energy_db.h"

#include <stddef.h>

#include "mx_db.h"

int mxq_energy_db_job_write(struct mx_db *db, const struct mxq_energy_db_job *j)
{
	int64_t n = mx_db_exec(db,
		"INSERT INTO mxq_power_job (job_id, hostname, energy_j, active_energy_j, avg_watts,"
		" peak_watts, samples, method, completeness, idle_baseline_watts, date_start, date_end)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FROM_UNIXTIME(? / 1000),"
		" IF(? = 0, NULL, FROM_UNIXTIME(? / 1000)))"
		" ON DUPLICATE KEY UPDATE hostname = VALUES(hostname), energy_j = VALUES(energy_j),"
		" active_energy_j = VALUES(active_energy_j), avg_watts = VALUES(avg_watts),"
		" peak_watts = VALUES(peak_watts), samples = VALUES(samples), method = VALUES(method),"
		" completeness = VALUES(completeness), idle_baseline_watts = VALUES(idle_baseline_watts),"
		" date_start = VALUES(date_start), date_end = VALUES(date_end)",
		"UsddddussdUUU", j->job_id, j->hostname, j->energy_j, j->active_energy_j,
		j->avg_watts, j->peak_watts, j->samples, j->method, j->completeness,
		j->idle_baseline_watts, j->start_ms, j->end_ms, j->end_ms);
	return n < 0 ? (int)n : 0;
}

/* Columns of mxq_energy_db_job_read(). */
enum { JR_ENERGY, JR_ACTIVE, JR_SAMPLES, JR_PEAK, JR_AVG, JR_START_MS };

void mxq_energy_db_job_from_row(struct mxq_energy_db_job *ret, const struct mx_db_result *res)
{
	*ret = (struct mxq_energy_db_job) {
		.energy_j = mx_db_double(res, JR_ENERGY),
		.active_energy_j = mx_db_double(res, JR_ACTIVE),
		.samples = (uint32_t)mx_db_u64(res, JR_SAMPLES),
		.peak_watts = mx_db_double(res, JR_PEAK),
		.avg_watts = mx_db_double(res, JR_AVG),
		/* NULL date_start: 0, "unknown" */
		.start_ms = (uint64_t)mx_db_double(res, JR_START_MS),
	};
}

int mxq_energy_db_job_read(struct mx_db *db, uint64_t job_id, struct mxq_energy_db_job *ret)
{
	struct mx_db_result *res = NULL;
	int r;

	r = mx_db_query_first(db, &res,
		"SELECT energy_j, active_energy_j, samples, peak_watts, avg_watts,"
		" UNIX_TIMESTAMP(date_start) * 1000 FROM mxq_power_job WHERE job_id = ?",
		"U", job_id);
	if (r <= 0)
		return r;
	mxq_energy_db_job_from_row(ret, res);
	ret->job_id = job_id;
	mx_db_result_free(res);
	return 1;
}

int mxq_energy_db_job_unmeasured(struct mx_db *db, uint64_t job_id, const char *hostname)
{
	int64_t n = mx_db_exec(db,
		"INSERT INTO mxq_power_job (job_id, hostname, completeness, date_end)"
		" VALUES (?, ?, 'none', NOW(3)) ON DUPLICATE KEY UPDATE date_end = NOW(3),"
		" completeness = IF(energy_j > 0, 'partial', 'none')",
		"Us", job_id, hostname);
	return n < 0 ? (int)n : 0;
}

int mxq_energy_db_job_last_sample(struct mx_db *db, uint64_t job_id, uint64_t *ret_ms,
				  double *ret_j)
{
	struct mx_db_result *res = NULL;
	int r;

	r = mx_db_query_first(db, &res,
		"SELECT UNIX_TIMESTAMP(sample_time) * 1000, energy_j FROM mxq_power_job_sample"
		" WHERE job_id = ? ORDER BY sample_time DESC LIMIT 1", "U", job_id);
	if (r <= 0)
		return r;
	*ret_ms = (uint64_t)(mx_db_double(res, 0) + 0.5);
	*ret_j = mx_db_double(res, 1);
	mx_db_result_free(res);
	return 1;
}

int mxq_energy_db_job_sample_add(struct mx_db *db, uint64_t job_id, uint64_t at_ms,
				 double energy_j, double watts)
{
	int64_t n = mx_db_exec(db,
		"INSERT IGNORE INTO mxq_power_job_sample (job_id, sample_time, energy_j, watts)"
		" VALUES (?, FROM_UNIXTIME(? / 1000), ?, ?)",
		"UUdd", job_id, at_ms, energy_j, watts);
	return n < 0 ? (int)n : 0;
}

int mxq_energy_db_node_sample_add(struct mx_db *db, const char *hostname, uint64_t t_ms,
				  double energy_j, double watts, uint64_t prev_ms)
{
	int64_t n = mx_db_exec(db,
		"INSERT IGNORE INTO mxq_power_sample (hostname, sample_time, energy_j, watts, prev_time)"
		" VALUES (?, FROM_UNIXTIME(? / 1000), ?, ?, IF(? = 0, NULL, FROM_UNIXTIME(? / 1000)))",
		"sUddUU", hostname, t_ms, energy_j, watts, prev_ms, prev_ms);
	return n < 0 ? (int)n : 0;
}

int mxq_energy_db_prune(struct mx_db *db, const char *hostname, unsigned retention_days)
{
	int64_t n;

	n = mx_db_exec(db,
		"DELETE FROM mxq_power_sample WHERE hostname = ? AND sample_time < NOW() - INTERVAL ? DAY",
		"su", hostname, retention_days);
	if (n >= 0)
		n = mx_db_exec(db,
			"DELETE s FROM mxq_power_job_sample s JOIN mxq_power_job j USING (job_id)"
			" WHERE j.hostname = ? AND s.sample_time < NOW() - INTERVAL ? DAY",
			"su", hostname, retention_days);
	return n < 0 ? (int)n : 0;
}
