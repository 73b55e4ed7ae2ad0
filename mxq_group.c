/*
 * mxq_group - requirement columns of mxq_group and their mapping (see
 * mxq_group.h). No SQL is run here; callers put the column list into
 * their own statements.
 */
#include "mxq_group.h"

#include <stdint.h>

#include "mx_db.h"

int mxq_group_reqs_from_row(struct mxq_group_reqs *reqs, const struct mx_db_result *res,
			    unsigned col)
{
	return mxq_group_reqs_init(reqs, mx_db_str(res, col + 5), mx_db_str(res, col + 6),
				   mx_db_str(res, col + 7), mx_db_str(res, col + 8),
				   (uint32_t)mx_db_u64(res, col + 0), mx_db_u64(res, col + 1),
				   mx_db_u64(res, col + 2), (uint32_t)mx_db_u64(res, col + 3),
				   mx_db_u64(res, col + 4) * MXQ_GROUP_TMPDIR_MIB_PER_UNIT);
}
