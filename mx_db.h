/*
 * mx_db - MariaDB/MySQL access through prepared statements only.
 *
 * Connection parameters come from a MySQL defaults file and group
 * (MYSQL_READ_DEFAULT_FILE / MYSQL_READ_DEFAULT_GROUP), as MXQ always did.
 *
 * Parameters are bound from a format string, one character per '?':
 *   'i' int, 'u' unsigned int, 'l' int64_t, 'U' uint64_t, 'd' double,
 *   's' const char * (NULL binds SQL NULL).
 * Results are read row by row; every column is fetched as text and converted
 * on access, which keeps the binding code small and the callers readable.
 *
 * Several servers: `host=H1[:P1],H2[:P2],...` in the defaults group names
 * a list (a Galera cluster); connecting tries them in turn and skips a
 * server that is not ready (Galera node outside the primary component).
 *
 * Errors: functions return a negative errno. -ENOTCONN means the connection
 * was lost; the next call reconnects (such a statement is never retried
 * silently: it may have committed, and a claim UPDATE must not run twice).
 * One server fault is certain to have had no effect: a server that cannot
 * parse a trigger of the table (seen on a rejoined Galera node). That
 * server is left, and an autocommit statement or a mx_db_transaction()
 * runs again on the next server of the list; -ENOTCONN is returned only
 * when the attempts are used up.
 * -EAGAIN is a deadlock or a Galera certification failure, after which the
 * server guarantees the statement or transaction had no effect: a
 * statement outside a transaction has then already been retried a bounded
 * number of times; inside one, the transaction is gone and every further
 * statement fails with -EAGAIN until mx_db_rollback(). mx_db_error() gives
 * the server's message for the last failure. -ENOSPC: the server is out of
 * disk space (a table that cannot grow, a full disk); the statement had no
 * effect. Nothing here logs.
 */
#ifndef MX_DB_H
#define MX_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mx_db;
struct mx_db_result;

/* A list of database servers, from a defaults file's `host` list. */
#define MX_DB_MAX_HOSTS 16
struct mx_db_hosts {
	size_t n;
	char *host[MX_DB_MAX_HOSTS];
	unsigned port[MX_DB_MAX_HOSTS];
};

/* Counters of one connection's life, for benchmarks and logs. */
struct mx_db_stats {
	uint64_t connects;   /* successful connects, the first included */
	uint64_t failovers;  /* reconnects that went to another server */
	uint64_t retries;    /* statements and transactions run again (-EAGAIN, server fault) */
	uint64_t deadlocks;  /* -EAGAIN returned to the caller */
	uint64_t server_faults; /* servers left for a trigger they could not parse */
};

/* Defaults for clients and the daemon, as in MXQ. */
#define MX_DB_DEFAULT_FILE "/etc/mxq/mysql.cnf"
#define MX_DB_GROUP_CLIENT "mxqclient"
#define MX_DB_GROUP_DAEMON "mxqd"

/*
 * Connect. defaults_file may be NULL (then MX_DB_DEFAULT_FILE), group must
 * be set. On failure *ret_db is untouched and, if errbuf is non-NULL, a
 * one-line reason is written there. Returns 0 or negative errno.
 */
int mx_db_connect(struct mx_db **ret_db, const char *defaults_file,
		  const char *group, char *errbuf, size_t errlen);
/*
 * Whether the defaults file mx_db_connect() would read (DEFAULTS_FILE, NULL:
 * MX_DB_DEFAULT_FILE; its path in *RET_PATH) can be read: a missing or
 * unreadable one is a configuration error to report and stop at, not an
 * outage to wait out (mxqd, mxq-web). 0 or negative errno.
 */
int mx_db_defaults_readable(const char *defaults_file, const char **ret_path);
/* Close and free. NULL is fine. */
void mx_db_close(struct mx_db *db);
/* Last error text (never NULL). */
const char *mx_db_error(const struct mx_db *db);
/*
 * In a forked child that never talks to the database (mxqd's job reaper,
 * callback supervisor): wipe the client library's copies of the password
 * in this process's memory. The connection is not closed (that would end
 * the parent's session on the shared socket); the handle must not be used
 * afterwards. NULL is fine.
 */
void mx_db_forget_credentials(struct mx_db *db);
/* Reconnect if the connection was lost. 0 or negative errno. */
int mx_db_ensure(struct mx_db *db);
/* The server of the current connection, for log lines (never NULL). */
const char *mx_db_server(const struct mx_db *db);
/* True when connected to a Galera node. */
bool mx_db_is_galera(const struct mx_db *db);
/* What the last server fault was (stats.server_faults counts them): which
 * server, and its message. */
const char *mx_db_last_fault(const struct mx_db *db);
/* The connection's counters. */
const struct mx_db_stats *mx_db_stats(const struct mx_db *db);

/*
 * Parse "H1[:P1],H2[:P2],..." (ports default to default_port) into *ret.
 * On error *ret is untouched, errbuf says why; -EINVAL, -E2BIG or -ENOMEM.
 * Free with mx_db_hosts_free().
 */
int mx_db_hosts_parse(struct mx_db_hosts *ret, const char *value, unsigned default_port,
		      char *errbuf, size_t errlen);
void mx_db_hosts_free(struct mx_db_hosts *hosts);

/*
 * Run a statement without result set. Returns affected rows (>= 0) or a
 * negative errno.
 */
int64_t mx_db_exec(struct mx_db *db, const char *sql, const char *pfmt, ...);
/* AUTO_INCREMENT id of the last INSERT done by mx_db_exec(). */
uint64_t mx_db_insert_id(const struct mx_db *db);

/*
 * Run a query. On success *ret_res holds the whole result (buffered on the
 * client); free it with mx_db_result_free(). Returns number of rows or a
 * negative errno.
 */
int64_t mx_db_query(struct mx_db *db, struct mx_db_result **ret_res,
		    const char *sql, const char *pfmt, ...);
/* Advance to the next row; false when none left. Call once before row 0. */
bool mx_db_next(struct mx_db_result *res);
unsigned mx_db_ncols(const struct mx_db_result *res);
/* Column accessors for the current row. NULL columns give NULL / 0. */
bool mx_db_is_null(const struct mx_db_result *res, unsigned col);
const char *mx_db_str(const struct mx_db_result *res, unsigned col);
int64_t mx_db_i64(const struct mx_db_result *res, unsigned col);
uint64_t mx_db_u64(const struct mx_db_result *res, unsigned col);
double mx_db_double(const struct mx_db_result *res, unsigned col);
/* malloc'ed copy of a column ("" for NULL); NULL on ENOMEM. */
char *mx_db_strdup(const struct mx_db_result *res, unsigned col);
void mx_db_result_free(struct mx_db_result *res);
/*
 * A result built from text instead of a query, for unit tests of the row
 * mappers: NROWS rows of NCOLS cells, row by row; a NULL cell is SQL NULL.
 * The cells are copied. 0 with *RET_RES set (free with
 * mx_db_result_free()), -EINVAL or -ENOMEM.
 */
int mx_db_result_from_text(struct mx_db_result **ret_res, unsigned ncols, uint64_t nrows,
			   const char *const *cells);

/* Convenience: run a query that answers at most one row. 1 with *RET_RES
 * on that row (free it with mx_db_result_free()), 0 when there is none
 * (*RET_RES untouched), or a negative errno. */
int mx_db_query_first(struct mx_db *db, struct mx_db_result **ret_res, const char *sql,
		      const char *pfmt, ...);
/* Convenience: first column of the first row as integer; -ENOENT if none. */
int mx_db_query_u64(struct mx_db *db, uint64_t *ret, const char *sql,
		    const char *pfmt, ...);

/* Transactions. mx_db_commit() may return -EAGAIN (deadlock, Galera
 * certification failure): nothing was committed, start over. After any
 * failed statement inside a transaction call mx_db_rollback(), which is a
 * no-op when the server already rolled it back. */
int mx_db_begin(struct mx_db *db);

/*
 * Run BODY(db, ctx) in a transaction: begin, body, commit. A body that
 * returns < 0 is rolled back and that error returned. When the body or the
 * commit fails with -EAGAIN (deadlock, Galera certification failure: the
 * server has undone everything) the whole transaction is run again, up to
 * MX_DB_TXN_ATTEMPTS times with growing, jittered pauses; BODY must
 * therefore read what it decides on inside the transaction and keep no
 * state from an earlier attempt. Returns BODY's result (>= 0) after a
 * successful commit, or a negative errno.
 */
#define MX_DB_TXN_ATTEMPTS 10
int mx_db_transaction(struct mx_db *db, int (*body)(struct mx_db *db, void *ctx), void *ctx);
int mx_db_commit(struct mx_db *db);
int mx_db_rollback(struct mx_db *db);

/*
 * Run a script of several statements (schema files). Statements are split on
 * ';' outside quotes and comments; "DELIMITER x" lines change the delimiter
 * as the mysql command-line client does, so the same file works with both.
 * On failure errbuf names the statement number and the server's message.
 */
int mx_db_exec_script(struct mx_db *db, const char *script,
		      char *errbuf, size_t errlen);

/*
 * Fault injection for tests of interrupted schema upgrades: from now on
 * mx_db_exec_script() runs at most STATEMENTS more statements on DB in
 * total and then fails with -ECANCELED ("statement budget used up")
 * before running the next one. Without a call there is no limit.
 */
void mx_db_set_script_budget(struct mx_db *db, unsigned long statements);

#endif
