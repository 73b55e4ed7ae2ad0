/*
 * mxqadmin - subcommands. Each mxqadmin_*.c file implements one family and
 * exports one entry point; mxqadmin.c only dispatches. The few helpers more
 * than one family needs are declared at the end.
 *
 * Contract of every entry point: argv[0] is the subcommand name ("db",
 * "expr", ...), options are parsed by the subcommand itself, the return value
 * is the process exit status (0 ok, 1 operational failure, 2 usage or input
 * error). Errors are printed as one line "mxqadmin: ..." on stderr.
 */
#ifndef MXQADMIN_H
#define MXQADMIN_H

#include <stdbool.h>
#include <stdint.h>

#include "mxq_client.h"
#include "mxqd_control.h"

/* Options common to subcommands that talk to the database. */
struct mxqadmin_db_options {
	const char *defaults_file; /* -M/--mysql-default-file, NULL = default */
	const char *group;         /* -S/--mysql-default-group, default mxqclient */
	bool chosen;               /* -M, -S or $MXQ_MYSQL_DEFAULT_* given */
};

int mxqadmin_db_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
int mxqadmin_expr_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
int mxqadmin_qualify_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
int mxqadmin_power_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
/* power usage|job|jobs|metrics, called by mxqadmin_power_main (argv[0] = that word) */
int mxqadmin_energy_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);

/* ---- helpers shared by the subcommands (in mxqadmin_qualify.c) ---- */

struct mx_db;
/* The power and queue metrics of `power metrics` (mxqadmin_metrics.c),
 * printed after the energy metrics. Returns the exit status (0 or 1, with
 * one line on stderr). */
int mxqadmin_metrics_power(struct mx_db *db);
/* S as a Prometheus label value on stdout: backslash, quote, newline escaped. */
void mxqadmin_prom_label(const char *s);

struct mx_db;
/* power set HOST KEY=VALUE... (mxqadmin_power_set.c); pos[0] is HOST, npos >= 2.
 * Returns the exit status. */
int mxqadmin_power_set(struct mx_db *db, int npos, char **pos);

/*
 * Connect with the global options. On failure prints one "mxqadmin: ..."
 * line and returns a negative errno (*ret_db untouched).
 */
int mxqadmin_connect(struct mx_db **ret_db, const struct mxqadmin_db_options *dbopt);

/*
 * For a subcommand that writes (power on/off/clear/exclude/include/set,
 * db upgrade; WHAT names it): refuse, with one line and -EPERM, unless the
 * caller's real uid is 0 or the caller is in the admin group
 * (mxq_privs_admin_group()); checked before anything is read or written.
 * Then connect with the admin credentials: unless -M/-S chose others,
 * SYSCONFDIR/mxq/mxqadmin.cnf [mxqadmin] when that file exists (read as
 * the caller), else the client defaults as before.
 */
int mxqadmin_connect_admin(struct mx_db **ret_db, const struct mxqadmin_db_options *dbopt,
			   const char *what);

/* One group as the qualification sees it (a row of mxq_group). */
struct mxqadmin_group {
	uint64_t id;
	char *name;
	char *user_name;
	int status;                   /* group_status */
	uint64_t jobs_inq;
	uint64_t jobs_running;
	uint32_t max_per_node;        /* job_max_per_node, 0 = unlimited */
	struct mxq_group_reqs reqs;   /* job_tmpdir_size (GiB) converted to MiB */
};

/*
 * Read group GROUP_ID. Returns 0, -ENOENT when there is no such group, or
 * another negative errno (mx_db_error() has the database's message).
 * Release with mxqadmin_group_done() (NULL-safe, idempotent).
 */
int mxqadmin_group_load(struct mx_db *db, uint64_t group_id, struct mxqadmin_group *ret);
void mxqadmin_group_done(struct mxqadmin_group *group);

#endif
