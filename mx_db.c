/*
 * mx_db - MariaDB/MySQL access through prepared statements (see mx_db.h).
 *
 * Configuration: a MySQL defaults file and group name, read by the client
 * library itself. A missing or unreadable defaults file is an error here:
 * the client library would silently ignore it and try the default socket as
 * the current user, which only ever produces a confusing message.
 *
 * Several servers: the group's `host` may be a comma-separated list
 * (HOST[:PORT],...), e.g. the nodes of a Galera cluster. Connecting tries
 * them in turn, starting with the one that worked last; a server that is up
 * but not ready for clients (a Galera node outside the primary component,
 * wsrep_ready OFF) is skipped like one that does not answer.
 *
 * Galera: a reconnected session on a Galera node first waits until that
 * node has applied every transaction the cluster committed before (one
 * causal read, wsrep_sync_wait), so a client that moved to another node
 * sees its own earlier writes. Not for every statement: a causal read may wait for the
 * group's causal keepalive (up to a second when the cluster is quiet),
 * which would stall a daemon that polls ten times a second.
 *
 * Statement cache: a connection keeps its last STMT_CACHE prepared
 * statements by SQL text, so a repeated statement costs one round trip
 * (execute) instead of two (prepare, execute) -- most of a daemon's
 * statements repeat with every job. The cache is dropped with the
 * connection, and a statement whose execution failed is not kept.
 *
 * Errors: the server's message is kept in db->error for mx_db_error(); the
 * return value is a negative errno. A lost connection (-ENOTCONN) is
 * re-established by the next call, never by retrying the failed statement
 * (it may have committed). A deadlock or Galera certification failure
 * (-EAGAIN) is different: the server guarantees the statement had no
 * effect, so a statement outside a transaction is run again, a bounded
 * number of times with a growing pause. Inside a transaction the server
 * has rolled the whole transaction back; every further statement fails
 * with -EAGAIN until the caller calls mx_db_rollback() and starts over.
 */
#define _GNU_SOURCE
#include "mx_db.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

#define STMT_CACHE 32

struct cached_stmt {
	char *sql;
	MYSQL_STMT *stmt;
	uint64_t used;          /* db->use_clock at the last use (LRU) */
};

struct mx_db {
	MYSQL *mysql;
	char *defaults_file;
	char *group;
	struct mx_db_hosts hosts;  /* empty: the defaults file's host/socket */
	size_t host_next;          /* where the next connect starts */
	unsigned io_timeout_s;     /* read/write timeout; 0: the library's */
	bool connected;
	bool galera;               /* the server is a Galera node */
	bool in_txn;
	bool txn_aborted;          /* rolled back by the server inside in_txn */
	bool fault_stmt;           /* the last failure was a server fault before an
				    * autocommit statement ran: run it again */
	bool fault_txn;            /* ... before a statement of a transaction ran:
				    * run the whole transaction again (map_error) */
	uint64_t insert_id;
	bool budgeted;             /* mx_db_set_script_budget() was called */
	unsigned long budget;      /* script statements left to run */
	struct mx_db_stats stats;
	char server[300];          /* HOST:PORT of the connection, for logs */
	char error[512];
	char fault[512];           /* the last server fault (mx_db_last_fault) */
	struct cached_stmt cache[STMT_CACHE];
	uint64_t use_clock;
};

static void cache_clear(struct mx_db *db)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		if (db->cache[i].stmt)
			mysql_stmt_close(db->cache[i].stmt);
		free(db->cache[i].sql);
		db->cache[i] = (struct cached_stmt) { 0 };
	}
}

/* The cached statement for SQL, or NULL. */
static MYSQL_STMT *cache_get(struct mx_db *db, const char *sql)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		if (db->cache[i].sql && strcmp(db->cache[i].sql, sql) == 0) {
			db->cache[i].used = ++db->use_clock;
			return db->cache[i].stmt;
		}
	}
	return NULL;
}

/* Keep STMT for SQL (evicting the least recently used); false when it
 * could not be kept and the caller still owns it. */
static bool cache_put(struct mx_db *db, const char *sql, MYSQL_STMT *stmt)
{
	size_t victim = 0;
	char *copy = strdup(sql);

	if (!copy)
		return false;
	for (size_t i = 0; i < STMT_CACHE; i++) {
		if (!db->cache[i].sql) {
			victim = i;
			break;
		}
		if (db->cache[i].used < db->cache[victim].used)
			victim = i;
	}
	if (db->cache[victim].stmt)
		mysql_stmt_close(db->cache[victim].stmt);
	free(db->cache[victim].sql);
	db->cache[victim] = (struct cached_stmt) { copy, stmt, ++db->use_clock };
	return true;
}

/* Done with STMT: a cached one stays unless it FAILED; others are closed. */
static void stmt_release(struct mx_db *db, MYSQL_STMT *stmt, bool failed)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		if (db->cache[i].stmt == stmt) {
			if (!failed)
				return;
			free(db->cache[i].sql);
			db->cache[i] = (struct cached_stmt) { 0 };
			break;
		}
	}
	mysql_stmt_close(stmt);
}

/* Autocommit statements that lost a deadlock/certification are run again
 * this many times; pauses grow from RETRY_FIRST_MS, doubling. */
#define RETRY_MAX 8
#define RETRY_FIRST_MS 5
#define RETRY_MAX_PAUSE_MS 400

struct mx_db_result {
	unsigned ncols;
	uint64_t nrows;
	int64_t row;            /* current row, -1 before the first */
	char **cells;           /* nrows * ncols, NULL for SQL NULL */
};

/* Session settings that make behaviour independent of the server's config:
 * zero dates are what MXQ has always stored for "not yet". READ COMMITTED:
 * under REPEATABLE READ a daemon's claim UPDATE takes gap locks on mxq_job
 * and then (trigger) the group row, while mxqsub holds the group row and
 * inserts into that gap -- a deadlock on every busy queue. Every decision
 * here is a single conditional statement, which needs no snapshot across
 * statements; where a transaction must see a row stay put it locks it. */
static const char *session_setup =
	"SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION',"
	" SESSION tx_isolation = 'READ-COMMITTED'";

/*
 * A server that cannot parse a trigger of a table it stores answers every
 * statement on that table with a parse error naming the trigger, although
 * the trigger is valid and parses on the other servers: MariaDB 10.11 on a
 * Galera node that rejoined (IST) was seen to keep such a table instance in
 * its table cache for minutes. The statement never ran. Such a server is
 * left: the connection is closed, the next connect starts at the next host
 * of the list, and the statement (or transaction) is run again there.
 */
static bool trigger_fault(unsigned code, const char *msg)
{
	return code == ER_PARSE_ERROR && msg && strstr(msg, "has an error in its body");
}

static int map_error(struct mx_db *db, unsigned code, const char *msg)
{
	snprintf(db->error, sizeof(db->error), "%s (error %u)", msg ? msg : "unknown error", code);
	db->fault_stmt = db->fault_txn = false;
	if (trigger_fault(code, msg)) {
		snprintf(db->error, sizeof(db->error),
			 "server %s cannot parse a trigger it stores (%s, error %u): "
			 "a fault of that server (restart it, or FLUSH TABLES there)",
			 db->server, msg, code);
		memcpy(db->fault, db->error, sizeof(db->fault));
		/* inside a transaction only the whole of it may run again: its
		 * earlier statements go with the connection */
		db->fault_txn = db->in_txn;
		db->fault_stmt = !db->in_txn;
		db->connected = false;
		db->in_txn = db->txn_aborted = false;
		db->stats.server_faults++;
		if (db->hosts.n > 1)
			db->host_next = (db->host_next + 1) % db->hosts.n;
		return -ENOTCONN;
	}
	switch (code) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONN_HOST_ERROR:
	case CR_CONNECTION_ERROR:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
	case ER_UNKNOWN_COM_ERROR:  /* Galera: "WSREP has not yet prepared node" */
		db->connected = false;
		db->in_txn = db->txn_aborted = false;
		return -ENOTCONN;
	case ER_LOCK_DEADLOCK:      /* also Galera's certification failure */
	case ER_LOCK_WAIT_TIMEOUT:
		if (db->in_txn) {
			/* a lock wait timeout rolls back only the statement: make
			 * the whole transaction go, as a deadlock does */
			if (code == ER_LOCK_WAIT_TIMEOUT && db->mysql)
				mysql_query(db->mysql, "ROLLBACK");
			db->txn_aborted = true;
		}
		return -EAGAIN;
	case ER_DUP_ENTRY:
		return -EEXIST;
	case ER_NO_SUCH_TABLE:
	case ER_BAD_FIELD_ERROR:
		return -ENOENT;
	case ER_DBACCESS_DENIED_ERROR:
	case ER_ACCESS_DENIED_ERROR:
	case ER_TABLEACCESS_DENIED_ERROR:
		return -EACCES;
	case ER_RECORD_FILE_FULL:   /* InnoDB: a table cannot grow (its file system is full) */
	case ER_DISK_FULL:
		return -ENOSPC;
	case ER_ERROR_ON_WRITE:     /* "... (Errcode: 28 "No space left on device")" */
	case ER_GET_ERRNO:          /* "Got error 28 "No space left on device" from ..." */
		return msg && (strstr(msg, "rrcode: 28 ") || strstr(msg, "error 28 ")) ? -ENOSPC : -EIO;
	default:
		return -EIO;
	}
}

/* ------------------------------------------------------ the host list */

void mx_db_hosts_free(struct mx_db_hosts *hosts)
{
	if (!hosts)
		return;
	for (size_t i = 0; i < hosts->n; i++)
		free(hosts->host[i]);
	hosts->n = 0;
}

/* Strip blanks and one level of quotes. */
static char *trim_value(char *v)
{
	size_t len;

	while (*v == ' ' || *v == '\t')
		v++;
	len = strlen(v);
	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\n' ||
		       v[len - 1] == '\r'))
		v[--len] = '\0';
	if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
		v[len - 1] = '\0';
		v++;
	}
	return v;
}

static bool group_is_read(const char *name, const char *group)
{
	return strcmp(name, group) == 0 || strcmp(name, "client") == 0 ||
	       strcmp(name, "client-server") == 0 || strcmp(name, "client-mariadb") == 0;
}

int mx_db_hosts_parse(struct mx_db_hosts *ret, const char *value, unsigned default_port,
		      char *errbuf, size_t errlen)
{
	struct mx_db_hosts h = { .n = 0 };
	char *copy, *rest, *tok;
	int r = 0;

	copy = rest = strdup(value);
	if (!copy)
		return -ENOMEM;
	while ((tok = strsep(&rest, ","))) {
		char *host = trim_value(tok), *colon;
		unsigned long port = default_port;

		if (!*host) {
			snprintf(errbuf, errlen, "empty entry in host list '%s'", value);
			r = -EINVAL;
			break;
		}
		if (h.n >= MX_DB_MAX_HOSTS) {
			snprintf(errbuf, errlen, "more than %d hosts in '%s'", MX_DB_MAX_HOSTS, value);
			r = -E2BIG;
			break;
		}
		colon = strrchr(host, ':');
		if (colon && !strchr(colon + 1, ']') && strchr(host, ':') == colon) {
			char *end;
			errno = 0;
			port = strtoul(colon + 1, &end, 10);
			if (errno || end == colon + 1 || *end || port == 0 || port > 65535) {
				snprintf(errbuf, errlen, "bad port in host list entry '%s'", host);
				r = -EINVAL;
				break;
			}
			*colon = '\0';
		}
		if (!*host) {
			snprintf(errbuf, errlen, "missing host name in host list '%s'", value);
			r = -EINVAL;
			break;
		}
		h.host[h.n] = strdup(host);
		if (!h.host[h.n]) {
			r = -ENOMEM;
			break;
		}
		h.port[h.n++] = (unsigned)port;
	}
	free(copy);
	if (r < 0) {
		mx_db_hosts_free(&h);
		return r;
	}
	*ret = h;
	return 0;
}

/* The servers the defaults file names for GROUP: only when its `host` is a
 * list or HOST:PORT (a plain host name, or an IPv6 address, is left to the
 * client library, as always). */
static int read_host_list(struct mx_db *db)
{
	char line[1024], section[128] = "", host[1024] = "";
	unsigned port = 3306;
	long io_timeout = -1;
	FILE *f;

	f = fopen(db->defaults_file, "re");
	if (!f)
		return 0;  /* do_connect reports an unreadable file */
	/* the file holds the password: no stdio buffer keeps a copy in the
	 * heap (forked reapers inherit it), and line is wiped below */
	setvbuf(f, NULL, _IONBF, 0);
	while (fgets(line, sizeof(line), f)) {
		char *p = trim_value(line), *eq, *key;

		if (*p == '[') {
			char *end = strchr(p, ']');
			if (end) {
				*end = '\0';
				snprintf(section, sizeof(section), "%s", trim_value(p + 1));
			}
			continue;
		}
		if (!*p || *p == '#' || *p == ';' || !group_is_read(section, db->group))
			continue;
		eq = strchr(p, '=');
		if (!eq)
			continue;
		*eq = '\0';
		key = trim_value(p);
		if (strcmp(key, "host") == 0)
			snprintf(host, sizeof(host), "%s", trim_value(eq + 1));
		else if (strcmp(key, "port") == 0)
			port = (unsigned)strtoul(trim_value(eq + 1), NULL, 10);
		else if (strcmp(key, "read-timeout") == 0 || strcmp(key, "read_timeout") == 0)
			io_timeout = strtol(trim_value(eq + 1), NULL, 10);
	}
	explicit_bzero(line, sizeof(line));
	fclose(f);
	/* with several servers, one that stops answering (stalled or cut off)
	 * must not hold a client forever: 30 s unless the file says */
	db->io_timeout_s = io_timeout >= 0 ? (unsigned)io_timeout : 0;
	mx_db_hosts_free(&db->hosts);
	if (!strchr(host, ',')) {
		const char *colon = strchr(host, ':');
		if (!colon || strchr(colon + 1, ':'))
			return 0;
	}
	if (io_timeout < 0)
		db->io_timeout_s = 30;
	return mx_db_hosts_parse(&db->hosts, host, port ? port : 3306, db->error, sizeof(db->error));
}

/* Is the server ready for clients? Galera nodes outside the primary
 * component answer but refuse queries; plain servers are always ready. */
static int check_ready(struct mx_db *db, MYSQL *m)
{
	MYSQL_RES *res;
	MYSQL_ROW row;
	bool on = false, ready = true;

	db->galera = false;
	if (mysql_query(m, "SELECT @@wsrep_on, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
			   " WHERE VARIABLE_NAME = 'WSREP_READY')") != 0)
		return 0;  /* not MariaDB with wsrep: a plain server */
	res = mysql_store_result(m);
	if (res && (row = mysql_fetch_row(res))) {
		on = row[0] && strcmp(row[0], "1") == 0;
		ready = !on || (row[1] && strcasecmp(row[1], "ON") == 0);
	}
	mysql_free_result(res);
	if (!ready)
		return -EAGAIN;
	db->galera = on;
	/* a reconnect (perhaps to another node) waits until this node has
	 * applied what the cluster committed, our own writes included; a
	 * first connect has no writes of its own to see and does not wait */
	if (on && db->stats.connects > 0 &&
	    (mysql_query(m, "SET SESSION wsrep_sync_wait = 1") != 0 ||
		   mysql_query(m, "SELECT 1") != 0 ||
		   (mysql_free_result(mysql_store_result(m)), 0) ||
		   mysql_query(m, "SET SESSION wsrep_sync_wait = 0") != 0))
		return map_error(db, mysql_errno(m), mysql_error(m));
	return 0;
}

/* One connection attempt to HOST:PORT (NULL: what the defaults file says). */
static int connect_one(struct mx_db *db, const char *host, unsigned port)
{
	unsigned int timeout = 10, io_timeout = db->io_timeout_s;
	unsigned int tcp = MYSQL_PROTOCOL_TCP;
	my_bool reconnect = 0;
	MYSQL *m;
	int r;

	m = mysql_init(NULL);
	if (!m) {
		snprintf(db->error, sizeof(db->error), "out of memory");
		return -ENOMEM;
	}
	mysql_options(m, MYSQL_READ_DEFAULT_FILE, db->defaults_file);
	mysql_options(m, MYSQL_READ_DEFAULT_GROUP, db->group);
	mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(m, MYSQL_OPT_RECONNECT, &reconnect);
	mysql_options(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (host)
		mysql_options(m, MYSQL_OPT_PROTOCOL, &tcp);
	if (io_timeout) {
		if (io_timeout < timeout)
			mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &io_timeout);
		mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &io_timeout);
		mysql_options(m, MYSQL_OPT_WRITE_TIMEOUT, &io_timeout);
	}
	if (!mysql_real_connect(m, host, NULL, NULL, NULL, host ? port : 0, NULL, 0)) {
		snprintf(db->error, sizeof(db->error), "cannot connect to the database%s%s%s%.0u"
			 " (defaults file %s, group [%s]): %s", host ? " at " : "", host ? host : "",
			 host ? ":" : "", host ? port : 0, db->defaults_file, db->group, mysql_error(m));
		mysql_close(m);
		return -ENOTCONN;
	}
	r = check_ready(db, m);
	if (r == 0 && mysql_query(m, session_setup) != 0)
		r = map_error(db, mysql_errno(m), mysql_error(m));
	if (r == -EAGAIN)
		snprintf(db->error, sizeof(db->error), "database server %s:%u is not ready for"
			 " clients (Galera node outside the primary component)", host ? host : "", port);
	if (r < 0) {
		mysql_close(m);
		return r == -EAGAIN ? -ENOTCONN : r;
	}
	db->mysql = m;
	db->connected = true;
	db->in_txn = db->txn_aborted = false;
	db->stats.connects++;
	if (host)
		snprintf(db->server, sizeof(db->server), "%s:%u", host, port);
	else
		snprintf(db->server, sizeof(db->server), "%s", mysql_get_host_info(m));
	return 0;
}

static int do_connect(struct mx_db *db)
{
	int r;

	cache_clear(db);
	if (db->mysql) {
		mysql_close(db->mysql);
		db->mysql = NULL;
	}
	db->connected = false;
	db->in_txn = db->txn_aborted = false;

	/* effective ids, as the client library will read it (access() would
	 * ask with the real ones: wrong for the set-id tools) */
	if (eaccess(db->defaults_file, R_OK) < 0) {
		r = -errno;
		snprintf(db->error, sizeof(db->error), "cannot read MySQL defaults file %s: %s",
			 db->defaults_file, strerror(errno));
		return r;
	}
	r = read_host_list(db);
	if (r < 0)
		return r;
	if (db->hosts.n == 0)
		return connect_one(db, NULL, 0);
	r = -ENOTCONN;
	for (size_t k = 0; k < db->hosts.n; k++) {
		size_t i = (db->host_next + k) % db->hosts.n;
		r = connect_one(db, db->hosts.host[i], db->hosts.port[i]);
		if (r == 0) {
			if (db->stats.connects > 1 && i != db->host_next)
				db->stats.failovers++;
			db->host_next = i;
			return 0;
		}
		if (r != -ENOTCONN)
			return r;  /* e.g. access denied: the same everywhere */
	}
	/* next time, start after the one that failed first */
	db->host_next = (db->host_next + 1) % db->hosts.n;
	return r;
}

int mx_db_defaults_readable(const char *defaults_file, const char **ret_path)
{
	*ret_path = defaults_file ? defaults_file : MX_DB_DEFAULT_FILE;
	return access(*ret_path, R_OK) < 0 ? -errno : 0;
}

int mx_db_connect(struct mx_db **ret_db, const char *defaults_file,
		  const char *group, char *errbuf, size_t errlen)
{
	struct mx_db *db;
	int r;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	db->defaults_file = strdup(defaults_file ? defaults_file : MX_DB_DEFAULT_FILE);
	db->group = strdup(group ? group : MX_DB_GROUP_CLIENT);
	if (!db->defaults_file || !db->group) {
		mx_db_close(db);
		return -ENOMEM;
	}
	r = do_connect(db);
	if (r < 0) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", db->error);
		mx_db_close(db);
		return r;
	}
	*ret_db = db;
	return 0;
}

void mx_db_forget_credentials(struct mx_db *db)
{
	if (!db || !db->mysql)
		return;
	if (db->mysql->passwd)
		explicit_bzero(db->mysql->passwd, strlen(db->mysql->passwd));
	if (db->mysql->options.password)
		explicit_bzero(db->mysql->options.password, strlen(db->mysql->options.password));
}

void mx_db_close(struct mx_db *db)
{
	if (!db)
		return;
	cache_clear(db);
	if (db->mysql)
		mysql_close(db->mysql);
	mx_db_hosts_free(&db->hosts);
	free(db->defaults_file);
	free(db->group);
	free(db);
}

const char *mx_db_error(const struct mx_db *db)
{
	return db && db->error[0] ? db->error : "no error";
}

int mx_db_ensure(struct mx_db *db)
{
	if (db->connected)
		return 0;
	return do_connect(db);
}

const char *mx_db_server(const struct mx_db *db)
{
	return db->connected ? db->server : "(not connected)";
}

bool mx_db_is_galera(const struct mx_db *db)
{
	return db->connected && db->galera;
}

const char *mx_db_last_fault(const struct mx_db *db)
{
	return db->fault[0] ? db->fault : "no server fault";
}

const struct mx_db_stats *mx_db_stats(const struct mx_db *db)
{
	return &db->stats;
}

/* Pause before retry ATTEMPT (0-based) after a deadlock: doubling from
 * RETRY_FIRST_MS up to RETRY_MAX_PAUSE_MS, each pause drawn from [1/2, 3/2)
 * of that, so that the losers of one conflict do not collide again in step
 * (on Galera every node's writers compete for the same group rows). */
static void retry_pause(unsigned attempt)
{
	static unsigned seed;
	unsigned base = RETRY_FIRST_MS << (attempt < 10 ? attempt : 10), us;
	struct timespec ts;

	if (base > RETRY_MAX_PAUSE_MS)
		base = RETRY_MAX_PAUSE_MS;
	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)time(NULL);
	us = base * 500 + (unsigned)(rand_r(&seed) % (base * 1000));
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (long)(us % 1000000) * 1000L;
	nanosleep(&ts, NULL);
}

int mx_db_transaction(struct mx_db *db, int (*body)(struct mx_db *db, void *ctx), void *ctx)
{
	for (unsigned attempt = 0;; attempt++) {
		int r;

		db->fault_txn = false;
		r = mx_db_begin(db);

		if (r == 0) {
			r = body(db, ctx);
			if (r >= 0) {
				int c = mx_db_commit(db);
				if (c == 0)
					return r;
				r = c;
			} else {
				mx_db_rollback(db);
			}
		}
		if (attempt + 1 >= MX_DB_TXN_ATTEMPTS)
			return r;
		if (r == -ENOTCONN && db->fault_txn) {
			/* a server fault before anything ran: the next server */
			db->stats.retries++;
			continue;
		}
		if (r != -EAGAIN)
			return r;
		db->stats.retries++;
		retry_pause(attempt);
	}
}

/* Parameter values live here while the statement executes. */
union param_value {
	int i;
	unsigned u;
	long long l;
	unsigned long long U;
	double d;
};

static int prepare_and_bind(struct mx_db *db, MYSQL_STMT **ret_stmt, const char *sql,
			    const char *pfmt, va_list ap, union param_value *vals,
			    MYSQL_BIND *binds, unsigned long *lens)
{
	size_t nparams = pfmt ? strlen(pfmt) : 0;
	MYSQL_STMT *stmt;
	int r;

	r = mx_db_ensure(db);
	if (r < 0)
		return r;
	if (db->txn_aborted) {
		snprintf(db->error, sizeof(db->error), "transaction was rolled back (deadlock)");
		return -EAGAIN;
	}
	stmt = cache_get(db, sql);
	if (!stmt) {
		stmt = mysql_stmt_init(db->mysql);
		if (!stmt) {
			snprintf(db->error, sizeof(db->error), "out of memory");
			return -ENOMEM;
		}
		if (mysql_stmt_prepare(stmt, sql, strlen(sql)) != 0) {
			r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
			mysql_stmt_close(stmt);
			return r;
		}
		cache_put(db, sql, stmt);  /* not kept: closed by stmt_release */
	}
	if (mysql_stmt_param_count(stmt) != nparams) {
		snprintf(db->error, sizeof(db->error), "statement has %lu parameters, format '%s' gives %zu",
			 mysql_stmt_param_count(stmt), pfmt ? pfmt : "", nparams);
		stmt_release(db, stmt, true);
		return -EINVAL;
	}
	for (size_t i = 0; i < nparams; i++) {
		MYSQL_BIND *b = &binds[i];
		memset(b, 0, sizeof(*b));
		switch (pfmt[i]) {
		case 'i':
			vals[i].i = va_arg(ap, int);
			b->buffer_type = MYSQL_TYPE_LONG;
			b->buffer = &vals[i].i;
			break;
		case 'u':
			vals[i].u = va_arg(ap, unsigned);
			b->buffer_type = MYSQL_TYPE_LONG;
			b->buffer = &vals[i].u;
			b->is_unsigned = 1;
			break;
		case 'l':
			vals[i].l = (long long)va_arg(ap, int64_t);
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &vals[i].l;
			break;
		case 'U':
			vals[i].U = (unsigned long long)va_arg(ap, uint64_t);
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &vals[i].U;
			b->is_unsigned = 1;
			break;
		case 'd':
			vals[i].d = va_arg(ap, double);
			b->buffer_type = MYSQL_TYPE_DOUBLE;
			b->buffer = &vals[i].d;
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s) {
				b->buffer_type = MYSQL_TYPE_NULL;
				break;
			}
			b->buffer_type = MYSQL_TYPE_STRING;
			b->buffer = (void *)s;
			lens[i] = strlen(s);
			b->buffer_length = lens[i];
			b->length = &lens[i];
			break;
		}
		default:
			snprintf(db->error, sizeof(db->error), "bad parameter format character '%c'", pfmt[i]);
			stmt_release(db, stmt, true);
			return -EINVAL;
		}
	}
	if (nparams && mysql_stmt_bind_param(stmt, binds) != 0) {
		r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
		stmt_release(db, stmt, true);
		return r;
	}
	*ret_stmt = stmt;
	return 0;
}

/* Prepared statements are limited to this many parameters; plenty for us. */
#define MAX_PARAMS 64

static int64_t vexec(struct mx_db *db, const char *sql, const char *pfmt, va_list ap)
{
	union param_value vals[MAX_PARAMS];
	MYSQL_BIND binds[MAX_PARAMS];
	unsigned long lens[MAX_PARAMS];
	MYSQL_STMT *stmt;
	int64_t affected;
	int r;

	if (pfmt && strlen(pfmt) > MAX_PARAMS)
		return -E2BIG;
	r = prepare_and_bind(db, &stmt, sql, pfmt, ap, vals, binds, lens);
	if (r < 0)
		return r;
	if (mysql_stmt_execute(stmt) != 0) {
		r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
		stmt_release(db, stmt, true);
		return r;
	}
	affected = (int64_t)mysql_stmt_affected_rows(stmt);
	db->insert_id = mysql_stmt_insert_id(stmt);
	stmt_release(db, stmt, false);
	return affected < 0 ? 0 : affected;
}

/* After attempt ATTEMPT of a statement ended with R: true (after a pause)
 * when it lost a write conflict outside a transaction and may run again. */
static bool retry_statement(struct mx_db *db, int64_t r, unsigned attempt)
{
	if (r == -ENOTCONN && db->fault_stmt && attempt < RETRY_MAX) {
		db->stats.retries++;
		return true;  /* on the next server */
	}
	if (r != -EAGAIN || db->in_txn || attempt >= RETRY_MAX) {
		if (r == -EAGAIN)
			db->stats.deadlocks++;
		return false;
	}
	db->stats.retries++;
	retry_pause(attempt);
	return true;
}

int64_t mx_db_exec(struct mx_db *db, const char *sql, const char *pfmt, ...)
{
	va_list ap;
	int64_t r;

	for (unsigned attempt = 0;; attempt++) {
		db->fault_stmt = false;
		va_start(ap, pfmt);
		r = vexec(db, sql, pfmt, ap);
		va_end(ap);
		if (!retry_statement(db, r, attempt))
			return r;
	}
}

uint64_t mx_db_insert_id(const struct mx_db *db)
{
	return db->insert_id;
}

int mx_db_result_from_text(struct mx_db_result **ret_res, unsigned ncols, uint64_t nrows,
			   const char *const *cells)
{
	struct mx_db_result *res;

	if (ncols == 0 || (nrows && !cells))
		return -EINVAL;
	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	res->ncols = ncols;
	res->nrows = nrows;
	res->row = -1;
	res->cells = calloc(nrows * ncols + 1, sizeof(*res->cells));
	if (!res->cells) {
		free(res);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < nrows * ncols; i++) {
		if (cells[i] && !(res->cells[i] = strdup(cells[i]))) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
	}
	*ret_res = res;
	return 0;
}

void mx_db_result_free(struct mx_db_result *res)
{
	if (!res)
		return;
	if (res->cells) {
		for (uint64_t i = 0; i < res->nrows * res->ncols; i++)
			free(res->cells[i]);
		free(res->cells);
	}
	free(res);
}

/* Fetch every row of an executed statement into res as text. */
static int fetch_all(struct mx_db *db, MYSQL_STMT *stmt, struct mx_db_result *res)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(stmt);
	MYSQL_FIELD *fields;
	MYSQL_BIND *binds = NULL;
	unsigned long *lens = NULL;
	my_bool *nulls = NULL;
	char **bufs = NULL;
	uint64_t capacity;
	int r = 0;

	if (!meta) {
		res->ncols = 0;
		return 0;
	}
	res->ncols = mysql_num_fields(meta);
	fields = mysql_fetch_fields(meta);
	if (mysql_stmt_store_result(stmt) != 0) {
		r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
		goto out;
	}
	capacity = mysql_stmt_num_rows(stmt);
	binds = calloc(res->ncols, sizeof(*binds));
	lens = calloc(res->ncols, sizeof(*lens));
	nulls = calloc(res->ncols, sizeof(*nulls));
	bufs = calloc(res->ncols, sizeof(*bufs));
	res->cells = calloc(capacity * res->ncols + 1, sizeof(*res->cells));
	if (!binds || !lens || !nulls || !bufs || !res->cells) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned c = 0; c < res->ncols; c++) {
		unsigned long size = fields[c].max_length > 64 ? fields[c].max_length : 64;
		bufs[c] = malloc(size + 1);
		if (!bufs[c]) {
			r = -ENOMEM;
			goto out;
		}
		binds[c].buffer_type = MYSQL_TYPE_STRING;
		binds[c].buffer = bufs[c];
		binds[c].buffer_length = size + 1;
		binds[c].length = &lens[c];
		binds[c].is_null = &nulls[c];
	}
	if (mysql_stmt_bind_result(stmt, binds) != 0) {
		r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
		goto out;
	}
	for (;;) {
		int f = mysql_stmt_fetch(stmt);
		if (f == MYSQL_NO_DATA)
			break;
		if (f == 1) {
			r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
			goto out;
		}
		if (res->nrows >= capacity) {
			snprintf(db->error, sizeof(db->error), "more rows than announced");
			r = -EIO;
			goto out;
		}
		for (unsigned c = 0; c < res->ncols; c++) {
			char **cell = &res->cells[res->nrows * res->ncols + c];
			if (nulls[c]) {
				*cell = NULL;
				continue;
			}
			*cell = malloc(lens[c] + 1);
			if (!*cell) {
				r = -ENOMEM;
				goto out;
			}
			if (lens[c] < binds[c].buffer_length) {
				memcpy(*cell, bufs[c], lens[c]);
			} else {
				/* truncated: fetch this column again into a buffer that fits */
				MYSQL_BIND b = { 0 };
				unsigned long len2 = 0;
				b.buffer_type = MYSQL_TYPE_STRING;
				b.buffer = *cell;
				b.buffer_length = lens[c] + 1;
				b.length = &len2;
				if (mysql_stmt_fetch_column(stmt, &b, c, 0) != 0) {
					r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
					goto out;
				}
			}
			(*cell)[lens[c]] = '\0';
		}
		res->nrows++;
	}
out:
	if (bufs)
		for (unsigned c = 0; c < res->ncols; c++)
			free(bufs[c]);
	free(bufs);
	free(binds);
	free(lens);
	free(nulls);
	mysql_free_result(meta);
	mysql_stmt_free_result(stmt);
	return r;
}

static int64_t vquery(struct mx_db *db, struct mx_db_result **ret_res, const char *sql,
		      const char *pfmt, va_list ap)
{
	union param_value vals[MAX_PARAMS];
	MYSQL_BIND binds[MAX_PARAMS];
	unsigned long lens[MAX_PARAMS];
	struct mx_db_result *res;
	MYSQL_STMT *stmt;
	my_bool update_max = 1;
	int r;

	if (pfmt && strlen(pfmt) > MAX_PARAMS)
		return -E2BIG;
	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	res->row = -1;
	r = prepare_and_bind(db, &stmt, sql, pfmt, ap, vals, binds, lens);
	if (r < 0) {
		free(res);
		return r;
	}
	mysql_stmt_attr_set(stmt, STMT_ATTR_UPDATE_MAX_LENGTH, &update_max);
	if (mysql_stmt_execute(stmt) != 0) {
		r = map_error(db, mysql_stmt_errno(stmt), mysql_stmt_error(stmt));
		goto fail;
	}
	r = fetch_all(db, stmt, res);
	if (r < 0)
		goto fail;
	stmt_release(db, stmt, false);
	*ret_res = res;
	return (int64_t)res->nrows;
fail:
	stmt_release(db, stmt, true);
	mx_db_result_free(res);
	return r;
}

/* vquery with the same retry rule as mx_db_exec(). */
static int64_t vquery_retry(struct mx_db *db, struct mx_db_result **ret_res, const char *sql,
			    const char *pfmt, va_list ap)
{
	int64_t r;

	for (unsigned attempt = 0;; attempt++) {
		va_list aq;
		db->fault_stmt = false;
		va_copy(aq, ap);
		r = vquery(db, ret_res, sql, pfmt, aq);
		va_end(aq);
		if (!retry_statement(db, r, attempt))
			return r;
	}
}

int64_t mx_db_query(struct mx_db *db, struct mx_db_result **ret_res,
		    const char *sql, const char *pfmt, ...)
{
	va_list ap;
	int64_t r;

	va_start(ap, pfmt);
	r = vquery_retry(db, ret_res, sql, pfmt, ap);
	va_end(ap);
	return r;
}

/* The first row of a query: 1 with *ret_res on it, 0 for none, -errno. */
static int vquery_first(struct mx_db *db, struct mx_db_result **ret_res, const char *sql,
			const char *pfmt, va_list ap)
{
	struct mx_db_result *res = NULL;
	int64_t n = vquery_retry(db, &res, sql, pfmt, ap);

	if (n < 0)
		return (int)n;
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return 0;
	}
	*ret_res = res;
	return 1;
}

int mx_db_query_first(struct mx_db *db, struct mx_db_result **ret_res, const char *sql,
		      const char *pfmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, pfmt);
	r = vquery_first(db, ret_res, sql, pfmt, ap);
	va_end(ap);
	return r;
}

int mx_db_query_u64(struct mx_db *db, uint64_t *ret, const char *sql, const char *pfmt, ...)
{
	struct mx_db_result *res = NULL;
	va_list ap;
	int r;

	va_start(ap, pfmt);
	r = vquery_first(db, &res, sql, pfmt, ap);
	va_end(ap);
	if (r <= 0 || mx_db_is_null(res, 0)) {
		if (r > 0)
			mx_db_result_free(res);
		return r < 0 ? r : -ENOENT;
	}
	*ret = mx_db_u64(res, 0);
	mx_db_result_free(res);
	return 0;
}

bool mx_db_next(struct mx_db_result *res)
{
	if (!res || (uint64_t)(res->row + 1) >= res->nrows)
		return false;
	res->row++;
	return true;
}

unsigned mx_db_ncols(const struct mx_db_result *res)
{
	return res ? res->ncols : 0;
}

static const char *cell(const struct mx_db_result *res, unsigned col)
{
	if (!res || res->row < 0 || col >= res->ncols)
		return NULL;
	return res->cells[(uint64_t)res->row * res->ncols + col];
}

bool mx_db_is_null(const struct mx_db_result *res, unsigned col)
{
	return cell(res, col) == NULL;
}

const char *mx_db_str(const struct mx_db_result *res, unsigned col)
{
	return cell(res, col);
}

int64_t mx_db_i64(const struct mx_db_result *res, unsigned col)
{
	const char *s = cell(res, col);
	return s ? strtoll(s, NULL, 10) : 0;
}

uint64_t mx_db_u64(const struct mx_db_result *res, unsigned col)
{
	const char *s = cell(res, col);
	if (!s || s[0] == '-')
		return 0;
	return strtoull(s, NULL, 10);
}

double mx_db_double(const struct mx_db_result *res, unsigned col)
{
	const char *s = cell(res, col);
	return s ? strtod(s, NULL) : 0.0;
}

char *mx_db_strdup(const struct mx_db_result *res, unsigned col)
{
	const char *s = cell(res, col);
	return strdup(s ? s : "");
}

static int simple(struct mx_db *db, const char *sql)
{
	int r = mx_db_ensure(db);
	if (r < 0)
		return r;
	if (mysql_query(db->mysql, sql) != 0)
		return map_error(db, mysql_errno(db->mysql), mysql_error(db->mysql));
	return 0;
}

int mx_db_begin(struct mx_db *db)
{
	int r = simple(db, "START TRANSACTION");

	if (r == 0) {
		db->in_txn = true;
		db->txn_aborted = false;
	}
	return r;
}

int mx_db_commit(struct mx_db *db)
{
	int r;

	if (db->txn_aborted) {
		db->in_txn = db->txn_aborted = false;
		snprintf(db->error, sizeof(db->error), "transaction was rolled back (deadlock)");
		db->stats.deadlocks++;
		return -EAGAIN;
	}
	r = simple(db, "COMMIT");  /* Galera reports a lost certification here */
	if (r == -EAGAIN)
		db->stats.deadlocks++;
	db->in_txn = db->txn_aborted = false;
	return r;
}

int mx_db_rollback(struct mx_db *db)
{
	bool aborted = db->txn_aborted;

	db->in_txn = db->txn_aborted = false;
	if (aborted || !db->connected)
		return 0;  /* the server rolled it back already */
	return simple(db, "ROLLBACK");
}

void mx_db_set_script_budget(struct mx_db *db, unsigned long statements)
{
	db->budgeted = true;
	db->budget = statements;
}

/* Run one script statement as plain text (DDL, triggers) and drain results. */
static int run_script_statement(struct mx_db *db, const char *sql, size_t len)
{
	int r;

	if (db->budgeted) {
		if (db->budget == 0) {
			snprintf(db->error, sizeof(db->error), "statement budget used up");
			return -ECANCELED;
		}
		db->budget--;
	}
	if (mysql_real_query(db->mysql, sql, len) != 0)
		return map_error(db, mysql_errno(db->mysql), mysql_error(db->mysql));
	do {
		MYSQL_RES *res = mysql_store_result(db->mysql);
		mysql_free_result(res);
		r = mysql_next_result(db->mysql);
		if (r > 0)
			return map_error(db, mysql_errno(db->mysql), mysql_error(db->mysql));
	} while (r == 0);
	return 0;
}

static bool at_line_start(const char *script, const char *p)
{
	while (p > script && (p[-1] == ' ' || p[-1] == '\t'))
		p--;
	return p == script || p[-1] == '\n';
}

int mx_db_exec_script(struct mx_db *db, const char *script, char *errbuf, size_t errlen)
{
	char delim[16] = ";";
	const char *p = script, *start = script;
	bool content = false;
	unsigned n = 0;
	int r;

	r = mx_db_ensure(db);
	if (r < 0) {
		if (errbuf)
			snprintf(errbuf, errlen, "%s", db->error);
		return r;
	}
	while (*p) {
		size_t dlen = strlen(delim);

		if (at_line_start(script, p) && strncasecmp(p, "DELIMITER", 9) == 0 &&
		    (p[9] == ' ' || p[9] == '\t')) {
			const char *d = p + 9;
			size_t k = 0;
			while (*d == ' ' || *d == '\t')
				d++;
			while (d[k] && d[k] != '\n' && d[k] != ' ' && d[k] != '\t' && d[k] != '\r')
				k++;
			if (k == 0 || k >= sizeof(delim)) {
				if (errbuf)
					snprintf(errbuf, errlen, "bad DELIMITER line");
				return -EINVAL;
			}
			memcpy(delim, d, k);
			delim[k] = '\0';
			p = strchrnul(d, '\n');
			start = p;
			content = false;
			continue;
		}
		if (*p == '\'' || *p == '"' || *p == '`') {
			char q = *p++;
			while (*p && *p != q) {
				if (*p == '\\' && q != '`' && p[1])
					p++;
				p++;
			}
			if (*p)
				p++;
			content = true;
			continue;
		}
		if ((p[0] == '-' && p[1] == '-' && (p[2] == ' ' || p[2] == '\t' || p[2] == '\n')) || p[0] == '#') {
			p = strchrnul(p, '\n');
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
			continue;
		}
		if (strncmp(p, delim, dlen) == 0) {
			if (content) {
				n++;
				r = run_script_statement(db, start, (size_t)(p - start));
				if (r < 0) {
					if (errbuf)
						snprintf(errbuf, errlen, "statement %u: %s", n, db->error);
					return r;
				}
			}
			p += dlen;
			start = p;
			content = false;
			continue;
		}
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			content = true;
		p++;
	}
	if (content) {
		n++;
		r = run_script_statement(db, start, (size_t)(p - start));
		if (r < 0) {
			if (errbuf)
				snprintf(errbuf, errlen, "statement %u: %s", n, db->error);
			return r;
		}
	}
	return 0;
}
