/*
 * mxq_group - requirement columns of mxq_group and their mapping, and the
 * group statements of mxqd (see mxq_group.h). Statements of other modules
 * that read the requirements put MXQ_GROUP_REQS_COLUMNS into their own
 * SQL and map with mxq_group_reqs_from_row(). Errors are negative errno,
 * the database's message in mx_db_error(); nothing here logs.
 */
#include "mxq_group.h"

#include <errno.h>
#include <stdint.h>

#include "mx_db.h"
#include "mxq_status.h"

int mxq_group_reqs_from_row(struct mxq_group_reqs *reqs, const struct mx_db_result *res,
			    unsigned col)
{
	return mxq_group_reqs_init(reqs, mx_db_str(res, col + 5), mx_db_str(res, col + 6),
				   mx_db_str(res, col + 7), mx_db_str(res, col + 8),
				   (uint32_t)mx_db_u64(res, col + 0), mx_db_u64(res, col + 1),
				   mx_db_u64(res, col + 2), (uint32_t)mx_db_u64(res, col + 3),
				   mx_db_u64(res, col + 4) * MXQ_GROUP_TMPDIR_MIB_PER_UNIT);
}

/* Columns of mxq_group_query_queued(), before the requirements. */
enum {
	Q_GROUP_ID, Q_UID, Q_PRIORITY, Q_MAX_PER_NODE, Q_JOBS_INQ, Q_USER_SLOTS,
	Q_REQS,                 /* MXQ_GROUP_REQS_COLUMNS start here */
};

int64_t mxq_group_query_queued(struct mx_db *db, struct mx_db_result **ret_res, bool all_users,
			       unsigned uid)
{
	return mx_db_query(db, ret_res,
		"SELECT group_id, user_uid, group_priority, job_max_per_node, group_jobs_inq,"
		" (SELECT COALESCE(SUM(g2.group_slots_running), 0) FROM mxq_group g2"
		"   WHERE g2.user_uid = g.user_uid AND g2.group_jobs_running > 0),"
		" " MXQ_GROUP_REQS_COLUMNS
		" FROM mxq_group g WHERE group_status = ? AND group_jobs_inq > 0"
		" AND (? OR user_uid = ?)",
		"iiu", MXQ_GROUP_STATUS_OK, all_users ? 1 : 0, uid);
}

int mxq_group_queued_from_row(struct mxq_group_queued *ret, const struct mx_db_result *res)
{
	struct mxq_group_queued g = {
		.group_id = mx_db_u64(res, Q_GROUP_ID),
		.uid = (uint32_t)mx_db_u64(res, Q_UID),
		.priority = (unsigned)mx_db_u64(res, Q_PRIORITY),
		.max_per_node = (uint32_t)mx_db_u64(res, Q_MAX_PER_NODE),
		.jobs_inq = mx_db_u64(res, Q_JOBS_INQ),
		.user_slots_running = mx_db_u64(res, Q_USER_SLOTS),
	};
	int r = mxq_group_reqs_from_row(&g.reqs, res, Q_REQS);

	if (r < 0)
		return r;
	*ret = g;
	return 0;
}

int64_t mxq_group_query_cancelled_queued(struct mx_db *db, struct mx_db_result **ret_res)
{
	return mx_db_query(db, ret_res,
		"SELECT group_id FROM mxq_group WHERE group_status = ? AND group_jobs_inq > 0",
		"i", MXQ_GROUP_STATUS_CANCELLED);
}
