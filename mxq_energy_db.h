/*
 * mxq_energy_db - the energy tables: mxq_power_job (one row per job),
 * mxq_power_job_sample (a job's energy timeline) and mxq_power_sample
 * (a node's samples). The node's running totals are columns of mxq_power
 * and written by mxq_power_db.c. The arithmetic is in mxq_energy.c (pure,
 * no database); mxqd_energy.c decides what to write and when.
 *
 * Units: energy in joules, power in watts, times in milliseconds since
 * the epoch in the structs (TIMESTAMP(3) columns in the rows).
 *
 * Errors: negative errno, the database's message in mx_db_error(). No
 * logging here.
 */
#ifndef MXQ_ENERGY_DB_H
#define MXQ_ENERGY_DB_H

#include <stdint.h>

struct mx_db;
struct mx_db_result;

/* A row of mxq_power_job. */
struct mxq_energy_db_job {
	uint64_t job_id;
	const char *hostname;       /* written, not read back */
	double energy_j, active_energy_j, avg_watts, peak_watts;
	uint32_t samples;
	const char *method, *completeness;  /* written, not read back */
	double idle_baseline_watts;
	uint64_t start_ms;
	uint64_t end_ms;            /* 0 while the job runs (date_end NULL) */
};

/* Insert or replace the row of J->job_id. 0 or negative errno. */
int mxq_energy_db_job_write(struct mx_db *db, const struct mxq_energy_db_job *j);

/*
 * Read what an earlier mxqd recorded for JOB_ID: the energy figures and
 * start_ms into *RET (the strings are NULL). 1 when there is a row, 0 when
 * none (*RET untouched), negative errno.
 */
int mxq_energy_db_job_read(struct mx_db *db, uint64_t job_id, struct mxq_energy_db_job *ret);
/* The mapping of mxq_energy_db_job_read() from the current row of RES
 * (all but job_id and the strings). */
void mxq_energy_db_job_from_row(struct mxq_energy_db_job *ret, const struct mx_db_result *res);

/*
 * A job no mxqd measured to its end (adopted, or never started): insert
 * it as 'none', or keep what an earlier mxqd measured and call it
 * 'partial'; date_end now. 0 or negative errno.
 */
int mxq_energy_db_job_unmeasured(struct mx_db *db, uint64_t job_id, const char *hostname);

/* The newest timeline row of JOB_ID into *RET_MS and *RET_J. 1, 0 when
 * it has none (untouched), negative errno. */
int mxq_energy_db_job_last_sample(struct mx_db *db, uint64_t job_id, uint64_t *ret_ms,
				  double *ret_j);
/* Add a timeline row (kept when one exists for that time). 0 or -errno. */
int mxq_energy_db_job_sample_add(struct mx_db *db, uint64_t job_id, uint64_t at_ms,
				 double energy_j, double watts);

/* Add a node sample of HOSTNAME at T_MS (kept when one exists for that
 * time); PREV_MS 0 = after a gap (prev_time NULL). 0 or -errno. */
int mxq_energy_db_node_sample_add(struct mx_db *db, const char *hostname, uint64_t t_ms,
				  double energy_j, double watts, uint64_t prev_ms);

/* Remove HOSTNAME's node samples and its jobs' timeline rows older than
 * RETENTION_DAYS. 0 or negative errno. */
int mxq_energy_db_prune(struct mx_db *db, const char *hostname, unsigned retention_days);

#endif
