/*
 * mxq_group - the mxq_group row as far as several modules read it, and
 * the statements mxqd makes on the table.
 *
 * The requirement columns of a group (what a server must offer to run its
 * jobs) and the one mapping from those columns to struct mxq_group_reqs:
 * dispatch (mxqd_job.c), the power manager's demand (mxq_power_db.c) and
 * `mxqadmin qualify` select MXQ_GROUP_REQS_COLUMNS and call
 * mxq_group_reqs_from_row(). Units: job_memory MiB, job_time minutes,
 * job_tmpdir_size GiB in the row and MiB in the struct.
 */
#ifndef MXQ_GROUP_H
#define MXQ_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "mxqd_control.h"

struct mx_db;
struct mx_db_result;

/* The requirement columns, in the order mxq_group_reqs_from_row() reads
 * them, for a SELECT list or a GROUP BY clause (unqualified names). */
#define MXQ_GROUP_REQS_COLUMNS \
	"job_threads, job_memory, job_time, job_gpu, job_tmpdir_size," \
	" tags, prerequisites, group_whitelist, group_blacklist"
/* How many columns MXQ_GROUP_REQS_COLUMNS is. */
#define MXQ_GROUP_REQS_NCOLS 9

/* job_tmpdir_size is GiB; MiB everywhere in the code. The SQL form is for
 * statements that compute with the column themselves. */
#define MXQ_GROUP_TMPDIR_MIB_PER_UNIT 1024
#define MXQ_GROUP_TMPDIR_MIB_SQL(column) "(" column " * 1024)"

/*
 * Fill REQS from the MXQ_GROUP_REQS_COLUMNS that start at column COL of the
 * current row of RES. Bad tag or prerequisite text marks REQS invalid (see
 * mxq_group_reqs_init()). Returns 0 or -ENOMEM; release with
 * mxq_group_reqs_done().
 */
int mxq_group_reqs_from_row(struct mxq_group_reqs *reqs, const struct mx_db_result *res,
			    unsigned col);

/* An open group with queued jobs, as dispatch ranks it. */
struct mxq_group_queued {
	uint64_t group_id;
	uint32_t uid;
	unsigned priority;             /* group_priority */
	uint32_t max_per_node;         /* job_max_per_node, 0 = no limit */
	uint64_t jobs_inq;             /* group_jobs_inq */
	uint64_t user_slots_running;   /* of all the user's groups with running jobs */
	struct mxq_group_reqs reqs;
};

/*
 * Read the open groups with queued jobs, of every user when ALL_USERS,
 * else of UID only; rows for mxq_group_queued_from_row(). Row count or
 * negative errno (the database's message in mx_db_error()).
 */
int64_t mxq_group_query_queued(struct mx_db *db, struct mx_db_result **ret_res, bool all_users,
			       unsigned uid);
/*
 * Fill *RET from the current row of a mxq_group_query_queued() result.
 * 0 or -ENOMEM (*RET untouched); release with mxq_group_reqs_done(&ret->reqs).
 */
int mxq_group_queued_from_row(struct mxq_group_queued *ret, const struct mx_db_result *res);

/* The ids (column 0) of cancelled groups that still count queued jobs.
 * Row count or negative errno. */
int64_t mxq_group_query_cancelled_queued(struct mx_db *db, struct mx_db_result **ret_res);

#endif
