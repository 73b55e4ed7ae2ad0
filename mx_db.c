/*
 * mx_db - MariaDB/MySQL access through prepared statements (see mx_db.h).
 *
 * Configuration: a MySQL defaults file and group name, read by the client
 * library itself. A missing or unreadable defaults file is an error here:
 * the client library would silently ignore it and try the default socket as
 * the current user, which only ever produces a confusing message.
 *
 * Statement cache: a connection keeps its last STMT_CACHE prepared
 * statements by SQL text, so a repeated statement costs one round trip
 * (execute) instead of two (prepare, execute) -- most of a daemon's
 * statements repeat with every job. The cache is dropped with the
 * connection, and a statement whose execution failed is not kept.
 *
 * Errors: the server's message is kept in db->error for mx_db_error(); the
 * return value is a negative errno. A lost connection (-ENOTCONN) is
 * re-established by the next call, never by retrying the failed statement.
 */
#define _GNU_SOURCE
#include "mx_db.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
	bool connected;
	uint64_t insert_id;
	char error[512];
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

static int map_error(struct mx_db *db, unsigned code, const char *msg)
{
	snprintf(db->error, sizeof(db->error), "%s (error %u)", msg ? msg : "unknown error", code);
	switch (code) {
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONN_HOST_ERROR:
	case CR_CONNECTION_ERROR:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_CONNECTION_KILLED:
	case ER_SERVER_SHUTDOWN:
		db->connected = false;
		return -ENOTCONN;
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
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
	default:
		return -EIO;
	}
}

static int do_connect(struct mx_db *db)
{
	unsigned int timeout = 10;
	my_bool reconnect = 0;
	MYSQL *m;

	cache_clear(db);
	if (db->mysql) {
		mysql_close(db->mysql);
		db->mysql = NULL;
	}
	db->connected = false;

	if (access(db->defaults_file, R_OK) < 0) {
		int r = -errno;
		snprintf(db->error, sizeof(db->error), "cannot read MySQL defaults file %s: %s",
			 db->defaults_file, strerror(errno));
		return r;
	}

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

	if (!mysql_real_connect(m, NULL, NULL, NULL, NULL, 0, NULL, 0)) {
		snprintf(db->error, sizeof(db->error), "cannot connect to the database (defaults file %s, group [%s]): %s",
			 db->defaults_file, db->group, mysql_error(m));
		mysql_close(m);
		return -ENOTCONN;
	}
	db->mysql = m;
	if (mysql_query(m, session_setup) != 0) {
		int r = map_error(db, mysql_errno(m), mysql_error(m));
		mysql_close(m);
		db->mysql = NULL;
		return r;
	}
	db->connected = true;
	return 0;
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

void mx_db_close(struct mx_db *db)
{
	if (!db)
		return;
	cache_clear(db);
	if (db->mysql)
		mysql_close(db->mysql);
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

int64_t mx_db_exec(struct mx_db *db, const char *sql, const char *pfmt, ...)
{
	va_list ap;
	int64_t r;

	va_start(ap, pfmt);
	r = vexec(db, sql, pfmt, ap);
	va_end(ap);
	return r;
}

uint64_t mx_db_insert_id(const struct mx_db *db)
{
	return db->insert_id;
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

int64_t mx_db_query(struct mx_db *db, struct mx_db_result **ret_res,
		    const char *sql, const char *pfmt, ...)
{
	va_list ap;
	int64_t r;

	va_start(ap, pfmt);
	r = vquery(db, ret_res, sql, pfmt, ap);
	va_end(ap);
	return r;
}

int mx_db_query_u64(struct mx_db *db, uint64_t *ret, const char *sql, const char *pfmt, ...)
{
	struct mx_db_result *res = NULL;
	va_list ap;
	int64_t n;

	va_start(ap, pfmt);
	n = vquery(db, &res, sql, pfmt, ap);
	va_end(ap);
	if (n < 0)
		return (int)n;
	if (n == 0 || !mx_db_next(res) || mx_db_is_null(res, 0)) {
		mx_db_result_free(res);
		return -ENOENT;
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

int mx_db_begin(struct mx_db *db)    { return simple(db, "START TRANSACTION"); }
int mx_db_commit(struct mx_db *db)   { return simple(db, "COMMIT"); }
int mx_db_rollback(struct mx_db *db) { return simple(db, "ROLLBACK"); }

/* Run one script statement as plain text (DDL, triggers) and drain results. */
static int run_script_statement(struct mx_db *db, const char *sql, size_t len)
{
	int r;

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
