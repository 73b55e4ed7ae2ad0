/*
 * mxq_privs - the privilege boundary of the client tools and process
 * hardening for everything that holds secrets.
 *
 * The tools (mxqsub, mxqdump, mxqkill setuid+setgid mxq; mxqadmin setgid
 * mxq) run as their caller: mxq_privs_init() sets the effective ids to the
 * real ones at once and keeps the elevated ones only as saved ids. They are
 * taken back for exactly one thing, opening the built-in client
 * credentials (mxq_client_connect()), and dropped for good right after.
 * Without set-id installation every call here is a no-op except the
 * hardening, so developer builds and tests behave as before.
 *
 * Errors: negative errno; a failed permanent drop is fatal for the caller
 * (mxq_client_connect() exits).
 */
#ifndef MXQ_PRIVS_H
#define MXQ_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

/* Build default of the admin Unix group (make ADMIN_GROUP=...). */
#ifndef MXQ_ADMIN_GROUP
#define MXQ_ADMIN_GROUP "mxqadmin"
#endif

/*
 * First thing in a tool's main(). When installed set-id: drops the
 * environment variables the MariaDB client library reads (MYSQL*, MARIADB*,
 * LIBMYSQL*: plugin dirs, hosts, passwords), makes the process not dumpable
 * without core files, and switches the effective ids to the caller's.
 */
void mxq_privs_init(void);

/* The program was started set-id (real and effective/saved ids differ). */
bool mxq_privs_setid(void);

/* Effective ids back to the elevated ones (no-op unless set-id). 0 or -errno. */
int mxq_privs_raise(void);

/* Real, effective and saved ids all the caller's, for good (no-op unless
 * set-id); verified. 0 or -errno. */
int mxq_privs_drop(void);

/* Not dumpable (no ptrace by the same user, no /proc/PID/mem),
 * RLIMIT_CORE 0 and freed memory overwritten (M_PERTURB): for processes
 * that hold passwords or keys. */
void mxq_privs_harden(void);

/*
 * The admin group: MXQ_ADMIN_GROUP, or $MXQ_ADMIN_GROUP when the program
 * is not set-id (developer builds and tests; never for an installed tool).
 */
const char *mxq_privs_admin_group(void);

/*
 * May the caller (real uid/gid and supplementary groups) use mutating
 * admin commands: uid 0 or a member of GROUP. 0 if yes, -EPERM if not
 * (err says why and what to do), -ENOENT-free: an unknown GROUP is simply
 * nobody's.
 */
int mxq_privs_check_admin(const char *group, char *err, size_t errlen);

#endif
