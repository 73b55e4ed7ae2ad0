/*
 * mxq_group - the mxq_group row as far as several modules read it.
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

#include "mxqd_control.h"

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

#endif
