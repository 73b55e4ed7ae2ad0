/*
 * mxq_schema - what every program checks about the schema it connects to
 * (see mxq_schema.h): that the database is not newer than this build.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "mx_db.h"
#include "mxq_schema.h"

int mxq_schema_check_not_newer(struct mx_db *db, char *errbuf, size_t errlen)
{
	uint64_t v = 0;
	int r;

	r = mx_db_query_u64(db, &v, "SELECT MAX(version) FROM mxq_schema_version", NULL);
	/* no version table (upstream MXQ, not upgraded yet) or no rows */
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		snprintf(errbuf, errlen, "cannot read the schema version: %s", mx_db_error(db));
		return r;
	}
	if (v > mxq_schema_latest_version) {
		snprintf(errbuf, errlen, "database schema version %llu is newer than this build"
			 " knows (%u): upgrade MXQ on this host first",
			 (unsigned long long)v, mxq_schema_latest_version);
		return -EPROTO;
	}
	return 0;
}
