/*
 * mxqadmin_power_set - `mxqadmin power set HOST KEY=VALUE ...`: per-host
 * transport settings in mxq_power (transport_on, transport_off, bmc, mac,
 * broadcast, rank, class, ipmi_workarounds, ssh).
 *
 * Every pair is checked before anything is written, so a bad pair leaves
 * the row untouched; each change is recorded as an admin event. Secrets do
 * not go here: they live in the power manager's secrets file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mxq_power_db.h"
#include "mxqd_ipmi.h"
#include "mxqadmin.h"

int mxqadmin_power_set(struct mx_db *db, int npos, char **pos)
{
	const char *host = pos[0];
	struct passwd *pw = getpwuid(getuid());
	char who[256], err[512], key[64];

	snprintf(who, sizeof(who), "%s", pw && pw->pw_name ? pw->pw_name : "admin");
	for (int i = 1; i < npos; i++) {
		const char *eq = strchr(pos[i], '=');

		if (!eq || eq == pos[i] || (size_t)(eq - pos[i]) >= sizeof(key))
			return mxq_failure("power set: '%s' is not KEY=VALUE", pos[i]);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - pos[i]), pos[i]);
		/* the names libfreeipmi knows live with the ipmi transport */
		if (!strcmp(key, "ipmi_workarounds") &&
		    mxqd_ipmi_workarounds_check(eq + 1, err, sizeof(err)) < 0)
			return mxq_failure("power set %s: ipmi_workarounds: %s", host, err);
		if (mxq_power_db_set_check(key, eq + 1, err, sizeof(err)) < 0)
			return mxq_failure("power set %s: %s", host, err);
	}
	for (int i = 1; i < npos; i++) {
		const char *eq = strchr(pos[i], '=');
		int r;

		snprintf(key, sizeof(key), "%.*s", (int)(eq - pos[i]), pos[i]);
		r = mxq_power_db_set(db, host, key, eq + 1, who, err, sizeof(err));
		if (r == -ENOENT)
			return mxq_failure("power set: unknown host '%s' (not in mxq_power)", host);
		if (r < 0)
			return mxq_failure("power set %s %s: %s", host, pos[i],
				r == -EINVAL ? err : mx_db_error(db));
		printf("%s: %s\n", host, pos[i]);
	}
	return 0;
}
