/*
 * mxq_schema - what every program checks about the schema it connects to
 * (see mxq_schema.h): that the database is not newer than this build, and
 * for writers also not older.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mx_db.h"
#include "mxq_schema.h"

int mxq_schema_check(struct mx_db *db, bool need_current, char *errbuf, size_t errlen)
{
	uint64_t v = 0;
	int r;

	r = mx_db_query_u64(db, &v, "SELECT MAX(version) FROM mxq_schema_version", NULL);
	/* no version table (upstream MXQ, not upgraded yet) or no rows */
	if (r == -ENOENT)
		v = 0;
	else if (r < 0) {
		snprintf(errbuf, errlen, "cannot read the schema version: %s", mx_db_error(db));
		return r;
	}
	if (need_current && v < mxq_schema_latest_version) {
		snprintf(errbuf, errlen, "database schema version %llu is older than this build"
			 " needs (%u): run 'mxqadmin db upgrade' first",
			 (unsigned long long)v, mxq_schema_latest_version);
		return -EPROTO;
	}
	if (r == -ENOENT)
		return 0;
	if (v > mxq_schema_latest_version) {
		snprintf(errbuf, errlen, "database schema version %llu is newer than this build"
			 " knows (%u): upgrade MXQ on this host first",
			 (unsigned long long)v, mxq_schema_latest_version);
		return -EPROTO;
	}
	return 0;
}
