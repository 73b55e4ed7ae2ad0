/*
 * mxqadmin db - create, upgrade and inspect the MXQ database schema.
 *
 *   mxqadmin db upgrade [--dry-run]
 *   mxqadmin db status
 *   mxqadmin db schema
 *
 * The schema files are compiled in (mxq_schema.h). A database's version is
 * MAX(version) of mxq_schema_version; a database with MXQ tables but no
 * version table is a 2016-era MXQ database, version 0; a database without
 * mxq_job is empty and gets create_tables.sql, which already contains every
 * migration, so all of them are recorded as applied. Otherwise each
 * migration above the current version runs in order and is recorded right
 * after it succeeded. The counter triggers (create_triggers.sql) are then
 * reinstalled every time, with mxq_job and mxq_group write-locked so no job
 * change slips between DROP and CREATE.
 *
 * Migrations are DDL, which MariaDB commits statement by statement; they
 * are written to be re-run safely, so an interrupted upgrade is finished by
 * running it again. GET_LOCK('mxq_schema_upgrade') keeps two upgrades from
 * interleaving. A database newer than this program is never touched.
 *
 * What a database looks like is read from information_schema as lines
 * (schema_lines(): tables, columns, indexes, triggers); `db schema` prints
 * them, mysql/schema.expected holds them for a database at the latest
 * version, `db status` names every difference. Before it changes anything
 * an upgrade checks the database is MXQ's or upstream MXQ's: no unknown
 * table, no known column with an incompatible type (check_upgradable()).
 * MXQ_TEST_UPGRADE_STOP_AFTER=N (tests only) makes the upgrade kill itself
 * with SIGKILL before its N+1st statement, to test interrupted upgrades.
 *
 * Errors: one line "mxqadmin: ..." on stderr; exit 1 for database or
 * upgrade failures, 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mx_db.h"
#include "mxq_schema.h"
#include "mxqadmin.h"

#define UPGRADE_LOCK "mxq_schema_upgrade"
#define UPGRADE_LOCK_TIMEOUT_SEC 30

/* What is in the database, as far as the schema is concerned. */
struct schema_state {
	bool empty;            /* no mxq_job table: create_tables.sql is due */
	bool versioned;        /* mxq_schema_version exists and has rows */
	unsigned version;      /* current version (0 when !versioned) */
};

static void print_usage(FILE *f)
{
	fprintf(f, "usage: mxqadmin [-M FILE] [-S GROUP] db upgrade [--dry-run]\n"
		   "       mxqadmin [-M FILE] [-S GROUP] db status\n"
		   "       mxqadmin [-M FILE] [-S GROUP] db schema\n\n"
		   "  upgrade    create the tables of a new database, or apply the pending\n"
		   "             migrations, then (re)install the counter triggers\n"
		   "  --dry-run  only print what upgrade would do\n"
		   "  status     print the schema version, the triggers, pending migrations and\n"
		   "             every difference from the expected tables, columns, indexes, triggers\n"
		   "  schema     print the tables, columns, indexes and triggers as status compares them\n");
}

static int table_exists(struct mx_db *db, const char *table, bool *ret)
{
	uint64_t n;
	int r;

	r = mx_db_query_u64(db, &n,
			    "SELECT COUNT(*) FROM information_schema.TABLES"
			    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", "s", table);
	if (r < 0)
		return r;
	*ret = n > 0;
	return 0;
}

static int read_schema_state(struct mx_db *db, struct schema_state *ret)
{
	struct schema_state st = { 0 };
	bool has_table;
	uint64_t v;
	int r;

	r = table_exists(db, "mxq_schema_version", &has_table);
	if (r < 0)
		return r;
	if (has_table) {
		/* empty table (interrupted first upgrade) gives -ENOENT: version 0 */
		r = mx_db_query_u64(db, &v, "SELECT MAX(version) FROM mxq_schema_version", NULL);
		if (r < 0 && r != -ENOENT)
			return r;
		if (r == 0) {
			st.versioned = true;
			st.version = (unsigned)v;
		}
	}
	r = table_exists(db, "mxq_job", &has_table);
	if (r < 0)
		return r;
	st.empty = !has_table && !st.versioned;
	*ret = st;
	return 0;
}

/* Append LEN bytes of S to the NULL-terminated vector *V of *N strings. */
static int strv_push(char ***v, size_t *n, const char *s, size_t len)
{
	char **grown = realloc(*v, (*n + 2) * sizeof(**v));

	if (!grown)
		return -ENOMEM;
	*v = grown;
	grown[*n] = strndup(s, len);
	if (!grown[*n])
		return -ENOMEM;
	grown[++*n] = NULL;
	return 0;
}

/*
 * The trigger names created by create_triggers.sql, in order, as a
 * NULL-terminated malloc'ed vector of malloc'ed strings. The script is the
 * one source of truth, so status never disagrees with upgrade.
 */
static char **expected_triggers(void)
{
	static const char kw[] = "CREATE TRIGGER";
	const char *p = mxq_schema_create_triggers.sql;
	char **names = NULL;
	size_t n = 0;

	while ((p = strcasestr(p, kw))) {
		const char *start;

		p += sizeof(kw) - 1;
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		start = p;
		while (*p && (*p == '_' || (*p >= 'a' && *p <= 'z') ||
			      (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			p++;
		if (p == start)
			continue;
		if (strv_push(&names, &n, start, (size_t)(p - start)) < 0)
			goto fail;
	}
	if (!names)
		names = calloc(1, sizeof(*names));
	return names;
fail:
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	return NULL;
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/*
 * The schema of the current database as sorted lines, tab-separated:
 *   column  TABLE COLUMN TYPE NULLABLE DEFAULT EXTRA CHARSET COLLATION
 *   index   TABLE INDEX COLUMNS UNIQUENESS
 *   table   TABLE ENGINE COLLATION
 *   trigger NAME TABLE TIMING+EVENT MD5(BODY)
 * The key of a line is its first three fields (column, index) or two.
 */
static const char schema_sql[] =
	"SELECT l FROM ("
	" SELECT CONCAT_WS('\t', 'table', TABLE_NAME, ENGINE, TABLE_COLLATION) AS l"
	"  FROM information_schema.TABLES"
	"  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'"
	" UNION ALL SELECT CONCAT_WS('\t', 'column', TABLE_NAME, COLUMN_NAME, COLUMN_TYPE,"
	"  IS_NULLABLE, COALESCE(COLUMN_DEFAULT, '(none)'), IF(EXTRA = '', '-', EXTRA),"
	"  COALESCE(CHARACTER_SET_NAME, '-'), COALESCE(COLLATION_NAME, '-'))"
	"  FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()"
	" UNION ALL SELECT CONCAT_WS('\t', 'index', TABLE_NAME, INDEX_NAME,"
	"  GROUP_CONCAT(CONCAT(COLUMN_NAME, IF(SUB_PART IS NULL, '', CONCAT('(', SUB_PART, ')')))"
	"   ORDER BY SEQ_IN_INDEX SEPARATOR ','), IF(MAX(NON_UNIQUE) = 0, 'unique', 'non-unique'))"
	"  FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()"
	"  GROUP BY TABLE_NAME, INDEX_NAME"
	" UNION ALL SELECT CONCAT_WS('\t', 'trigger', TRIGGER_NAME, EVENT_OBJECT_TABLE,"
	"  CONCAT(ACTION_TIMING, ' ', EVENT_MANIPULATION), MD5(ACTION_STATEMENT))"
	"  FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()"
	") s ORDER BY l";

/* The first column of every row of SQL as a NULL-terminated vector; WHAT
 * names it in the one line printed on failure. */
static int query_strv(struct mx_db *db, const char *sql, const char *what, char ***ret)
{
	struct mx_db_result *res = NULL;
	char **v;
	size_t i = 0;
	int64_t n;

	n = mx_db_query(db, &res, sql, NULL);
	if (n < 0) {
		mxq_complain("cannot read %s: %s", what, mx_db_error(db));
		return (int)n;
	}
	v = calloc((size_t)n + 1, sizeof(*v));
	while (v && mx_db_next(res)) {
		v[i] = mx_db_strdup(res, 0);
		if (!v[i])
			break;
		i++;
	}
	mx_db_result_free(res);
	if (!v || i != (size_t)n) {
		free_strv(v);
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	*ret = v;
	return 0;
}

static int schema_lines(struct mx_db *db, char ***ret)
{
	return query_strv(db, schema_sql, "information_schema", ret);
}

/* mysql/schema.expected as lines (comments and blank lines dropped). */
static char **expected_lines(void)
{
	const char *p = mxq_schema_expected.sql;
	char **v = NULL;
	size_t n = 0;

	while (*p) {
		const char *e = strchrnul(p, '\n');
		if (e > p && *p != '#' && strv_push(&v, &n, p, (size_t)(e - p)) < 0)
			goto fail;
		p = *e ? e + 1 : e;
	}
	return v ? v : calloc(1, sizeof(*v));
fail:
	free_strv(v);
	return NULL;
}

/* Length of the key of schema line L (see schema_sql). */
static size_t key_len(const char *l)
{
	unsigned fields = strncmp(l, "column\t", 7) == 0 || strncmp(l, "index\t", 6) == 0 ? 3 : 2;
	const char *p = l;

	for (unsigned i = 0; i < fields && *p; i++) {
		p = strchrnul(p, '\t');
		if (i + 1 < fields && *p)
			p++;
	}
	return (size_t)(p - l);
}

static const char *find_key(char *const *v, const char *l)
{
	size_t k = key_len(l);

	for (size_t i = 0; v[i]; i++)
		if (key_len(v[i]) == k && strncmp(v[i], l, k) == 0)
			return v[i];
	return NULL;
}

/* "column mxq_job.job_argv" from a schema line, into BUF */
static const char *describe_key(const char *l, char *buf, size_t len)
{
	char kind[16] = "", a[128] = "", b[128] = "";

	sscanf(l, "%15[^\t]\t%127[^\t]\t%127[^\t]", kind, a, b);
	if (strcmp(kind, "column") == 0 || strcmp(kind, "index") == 0)
		snprintf(buf, len, "%s %s.%s", kind, a, b);
	else
		snprintf(buf, len, "%s %s", kind, a);
	return buf;
}

/* the fields after the key, tabs shown as spaces */
static void print_rest(const char *l)
{
	for (const char *p = l + key_len(l); *p; p++)
		putchar(*p == '\t' ? ' ' : *p);
}

/* Print every difference of ACTUAL from EXPECTED; returns their number. */
static unsigned print_schema_diff(char *const *actual, char *const *expected)
{
	char what[300];
	unsigned n = 0;

	for (size_t i = 0; expected[i]; i++) {
		const char *a = find_key(actual, expected[i]);
		if (a && strcmp(a, expected[i]) == 0)
			continue;
		printf("  %s: ", describe_key(expected[i], what, sizeof(what)));
		if (a) {
			printf("is");
			print_rest(a);
			printf(", expected");
		} else {
			printf("missing, expected");
		}
		print_rest(expected[i]);
		printf("\n");
		n++;
	}
	for (size_t i = 0; actual[i]; i++) {
		if (find_key(expected, actual[i]))
			continue;
		printf("  %s: not expected (", describe_key(actual[i], what, sizeof(what)));
		print_rest(actual[i]);
		printf(" )\n");
		n++;
	}
	return n;
}

/* integer, string or time: a column may change within its family only */
static const char *type_family(const char *type)
{
	static const char *const ints[] = { "tinyint", "smallint", "mediumint", "int", "bigint" };
	static const char *const strs[] = { "char", "varchar", "tinytext", "text", "mediumtext",
					    "longtext" };
	static const char *const times[] = { "timestamp", "datetime" };
	size_t k = strcspn(type, "( ");

	for (size_t i = 0; i < sizeof(ints) / sizeof(*ints); i++)
		if (strlen(ints[i]) == k && strncmp(type, ints[i], k) == 0)
			return "integer";
	for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++)
		if (strlen(strs[i]) == k && strncmp(type, strs[i], k) == 0)
			return "string";
	for (size_t i = 0; i < sizeof(times) / sizeof(*times); i++)
		if (strlen(times[i]) == k && strncmp(type, times[i], k) == 0)
			return "time";
	return type;
}

/* the TYPE field (the fourth) of a column line, into BUF */
static const char *column_type(const char *l, char *buf, size_t len)
{
	const char *p = l, *e;

	for (int i = 0; i < 3 && *p; i++) {
		p = strchrnul(p, '\t');
		if (*p)
			p++;
	}
	e = strchrnul(p, '\t');
	snprintf(buf, len, "%.*s", (int)(e - p), p);
	return buf;
}

static bool has_table(char *const *v, const char *table)
{
	char key[200];

	snprintf(key, sizeof(key), "table\t%s\t", table);
	for (size_t i = 0; v[i]; i++)
		if (strncmp(v[i], key, strlen(key)) == 0)
			return true;
	return false;
}

/*
 * Is the database one this program may upgrade: every table one of ours
 * (or upstream MXQ's, which are a subset), every known column of a
 * compatible type, and an old (unversioned) database with all three of
 * upstream's tables? Prints one line naming every problem otherwise.
 */
static int check_upgradable(struct mx_db *db, const struct schema_state *st)
{
	static const char *const upstream_tables[] = { "mxq_group", "mxq_job", "mxq_daemon" };
	char **actual = NULL, **expected = expected_lines();
	char problems[2048] = "", buf[300];
	size_t len = 0;
	unsigned n = 0;
	int r;

	if (!expected) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	r = schema_lines(db, &actual);
	if (r < 0) {
		free_strv(expected);
		return r;
	}
#define PROBLEM(...) do { \
		if (len < sizeof(problems)) \
			len += (size_t)snprintf(problems + len, sizeof(problems) - len, \
						"%s", n++ ? "; " : ""); \
		if (len < sizeof(problems)) \
			len += (size_t)snprintf(problems + len, sizeof(problems) - len, __VA_ARGS__); \
	} while (0)
	for (size_t i = 0; actual[i]; i++) {
		char table[130] = "";
		const char *want;
		char have_t[200], want_t[200];

		if (strncmp(actual[i], "table\t", 6) == 0) {
			sscanf(actual[i] + 6, "%129[^\t]", table);
			if (!has_table(expected, table))
				PROBLEM("unknown table '%s'", table);
			continue;
		}
		if (strncmp(actual[i], "column\t", 7) != 0 || !(want = find_key(expected, actual[i])))
			continue;
		column_type(actual[i], have_t, sizeof(have_t));
		column_type(want, want_t, sizeof(want_t));
		if (strcmp(type_family(have_t), type_family(want_t)) != 0)
			PROBLEM("%s has type %s, expected %s", describe_key(actual[i], buf, sizeof(buf)),
				have_t, want_t);
	}
	if (!st->empty && !st->versioned)
		for (size_t i = 0; i < sizeof(upstream_tables) / sizeof(*upstream_tables); i++)
			if (!has_table(actual, upstream_tables[i]))
				PROBLEM("table '%s' missing", upstream_tables[i]);
#undef PROBLEM
	free_strv(actual);
	free_strv(expected);
	if (n) {
		mxq_complain("not an MXQ database (neither this version's nor upstream"
			" MXQ 0.22's): %s; nothing was changed", problems);
		return -EINVAL;
	}
	return 0;
}

static int get_upgrade_lock(struct mx_db *db)
{
	uint64_t got = 0;
	int r;

	r = mx_db_query_u64(db, &got, "SELECT GET_LOCK(?, ?)", "si",
			    UPGRADE_LOCK, UPGRADE_LOCK_TIMEOUT_SEC);
	if (r < 0) {
		mxq_complain("cannot take the upgrade lock: %s", mx_db_error(db));
		return r;
	}
	if (got != 1) {
		mxq_complain("another schema upgrade holds lock '%s' for more than %d s;"
			" try again later", UPGRADE_LOCK, UPGRADE_LOCK_TIMEOUT_SEC);
		return -EBUSY;
	}
	return 0;
}

static int check_database_selected(struct mx_db *db, const struct mxqadmin_db_options *dbopt)
{
	struct mx_db_result *res = NULL;
	int64_t n;
	bool none;

	n = mx_db_query(db, &res, "SELECT DATABASE()", NULL);
	if (n < 0) {
		mxq_complain("%s", mx_db_error(db));
		return (int)n;
	}
	none = !mx_db_next(res) || mx_db_is_null(res, 0);
	mx_db_result_free(res);
	if (none) {
		mxq_complain("no database selected: set 'database=' in group [%s] of %s",
			dbopt->group, dbopt->defaults_file ? dbopt->defaults_file : MX_DB_DEFAULT_FILE);
		return -EINVAL;
	}
	return 0;
}

static int connect_db(struct mx_db **ret_db, const struct mxqadmin_db_options *dbopt, bool writes)
{
	struct mx_db *db = NULL;
	int r;

	r = writes ? mxqadmin_connect_admin(&db, dbopt, "db upgrade") : mxqadmin_connect(&db, dbopt);
	if (r < 0)
		return r;
	r = check_database_selected(db, dbopt);
	if (r < 0) {
		mx_db_close(db);
		return r;
	}
	*ret_db = db;
	return 0;
}

static void describe_state(const struct schema_state *st, char *buf, size_t len)
{
	if (st->empty)
		snprintf(buf, len, "empty database (no MXQ tables)");
	else if (!st->versioned)
		snprintf(buf, len, "version 0 (2016-era MXQ schema without version table)");
	else
		snprintf(buf, len, "version %u", st->version);
}

static int run_script(struct mx_db *db, const char *what, const char *sql)
{
	char err[1024];
	int r;

	r = mx_db_exec_script(db, sql, err, sizeof(err));
	if (r == -ECANCELED) {
		/* MXQ_TEST_UPGRADE_STOP_AFTER: die as if killed, no cleanup */
		mxq_complain("%s: MXQ_TEST_UPGRADE_STOP_AFTER reached: killing myself",
			what);
		raise(SIGKILL);
	}
	if (r < 0)
		mxq_complain("%s failed: %s", what, err);
	return r;
}

static int record_migration(struct mx_db *db, const struct mxq_schema_file *m)
{
	int64_t n;

	/* IGNORE: a fresh database may have been half recorded before */
	n = mx_db_exec(db, "INSERT IGNORE INTO mxq_schema_version (version, name) VALUES (?, ?)",
		       "us", m->version, m->name);
	if (n < 0) {
		mxq_complain("cannot record migration %s: %s", m->name, mx_db_error(db));
		return (int)n;
	}
	return 0;
}

static int install_triggers(struct mx_db *db)
{
	int r;

	/* no job row may change while its triggers are missing; the script's
	 * reconciliation names the tables by these aliases too */
	r = run_script(db, "locking mxq_job and mxq_group",
		       "LOCK TABLES mxq_job WRITE, mxq_group WRITE,"
		       " mxq_job AS j WRITE, mxq_group AS g WRITE");
	if (r < 0)
		return r;
	r = run_script(db, "create_triggers.sql", mxq_schema_create_triggers.sql);
	if (r < 0) {
		/* best effort; closing the connection unlocks as well */
		mx_db_exec_script(db, "UNLOCK TABLES", NULL, 0);
		return r;
	}
	return run_script(db, "unlocking tables", "UNLOCK TABLES");
}

static int db_upgrade(struct mx_db *db, bool dry_run)
{
	const char *would = dry_run ? "would " : "";
	const char *stop_after;
	struct schema_state st;
	char desc[128];
	unsigned applied = 0;
	int r;

	r = get_upgrade_lock(db);
	if (r < 0)
		return MXQ_EXIT_FAILURE;
	r = read_schema_state(db, &st);
	if (r < 0)
		return mxq_failure("cannot read the schema version: %s", mx_db_error(db));
	describe_state(&st, desc, sizeof(desc));
	if (st.version > mxq_schema_latest_version)
		return mxq_failure("database schema version %u is newer than this mxqadmin"
			" knows (%u): refusing to touch it; use a newer mxqadmin",
			st.version, mxq_schema_latest_version);
	if (st.version < mxq_schema_latest_version && check_upgradable(db, &st) < 0)
		return MXQ_EXIT_FAILURE;
	stop_after = getenv("MXQ_TEST_UPGRADE_STOP_AFTER");
	if (stop_after && !dry_run)
		mx_db_set_script_budget(db, strtoul(stop_after, NULL, 10));
	printf("database: %s\n", desc);

	if (st.empty) {
		/* create_tables.sql is the core schema as of migration
		 * MXQ_SCHEMA_CREATE_TABLES_VERSION; later migrations run below */
		printf("%screate the core tables (create_tables)\n", would);
		if (!dry_run && run_script(db, "create_tables.sql", mxq_schema_create_tables.sql) < 0)
			return MXQ_EXIT_FAILURE;
		for (unsigned i = 0; i < mxq_schema_migrations_count; i++) {
			const struct mxq_schema_file *m = &mxq_schema_migrations[i];
			if (m->version > MXQ_SCHEMA_CREATE_TABLES_VERSION)
				continue;
			printf("%srecord migration %s as applied (contained in create_tables)\n",
			       would, m->name);
			if (!dry_run && record_migration(db, m) < 0)
				return MXQ_EXIT_FAILURE;
		}
		st.versioned = true;
		st.version = MXQ_SCHEMA_CREATE_TABLES_VERSION;
		applied = 1;
	}
	for (unsigned i = 0; i < mxq_schema_migrations_count; i++) {
		const struct mxq_schema_file *m = &mxq_schema_migrations[i];
		char what[300];

		if (st.versioned && m->version <= st.version)
			continue;
		printf("%sapply migration %s\n", would, m->name);
		snprintf(what, sizeof(what), "migration %s", m->name);
		if (!dry_run && (run_script(db, what, m->sql) < 0 ||
				 record_migration(db, m) < 0))
			return MXQ_EXIT_FAILURE;
		st.version = m->version;
		applied++;
	}
	if (!applied)
		printf("schema is up to date (version %u)\n", st.version);

	printf("%s(re)install the counter triggers (create_triggers)\n", would);
	if (!dry_run && install_triggers(db) < 0)
		return MXQ_EXIT_FAILURE;

	if (applied && !dry_run)
		printf("schema is now at version %u\n", st.version);
	else if (applied)
		printf("schema would be at version %u\n", st.version);
	/* released on disconnect anyway; errors here change nothing */
	mx_db_exec(db, "DO RELEASE_LOCK(?)", "s", UPGRADE_LOCK);
	return 0;
}

/* Triggers on the MXQ tables: present ones of ours, missing ones, others. */
static int print_trigger_status(struct mx_db *db)
{
	char **expected = expected_triggers();
	char **present = NULL;
	bool first;
	int r;

	if (!expected) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	r = query_strv(db, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS"
		       " WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME",
		       "the triggers", &present);
	if (r < 0) {
		free_strv(expected);
		return r;
	}

	first = true;
	for (size_t i = 0; expected[i]; i++) {
		if (strv_contains(present, expected[i]))
			continue;
		printf("%s%s", first ? "counter triggers: MISSING " : ", ", expected[i]);
		first = false;
	}
	if (first)
		printf("counter triggers: installed");
	printf("\n");

	first = true;
	for (size_t i = 0; present[i]; i++) {
		if (strv_contains(expected, present[i]))
			continue;
		printf("%s%s", first ? "other triggers: " : ", ", present[i]);
		first = false;
	}
	if (!first)
		printf("\n");
	free_strv(expected);
	free_strv(present);
	return 0;
}

static int print_schema_status(struct mx_db *db);

static int db_status(struct mx_db *db)
{
	struct schema_state st;
	char desc[128];
	bool first = true;

	if (read_schema_state(db, &st) < 0)
		return mxq_failure("cannot read the schema version: %s", mx_db_error(db));
	describe_state(&st, desc, sizeof(desc));
	printf("schema: %s; this mxqadmin knows up to version %u\n",
	       desc, mxq_schema_latest_version);
	if (st.version > mxq_schema_latest_version)
		printf("warning: the database is newer than this mxqadmin\n");
	if (print_trigger_status(db) < 0)
		return MXQ_EXIT_FAILURE;

	if (st.empty) {
		printf("pending: create_tables (run 'mxqadmin db upgrade')\n");
		return 0;
	}
	for (unsigned i = 0; i < mxq_schema_migrations_count; i++) {
		const struct mxq_schema_file *m = &mxq_schema_migrations[i];
		if (st.versioned && m->version <= st.version)
			continue;
		printf("%s%s", first ? "pending migrations: " : ", ", m->name);
		first = false;
	}
	printf(first ? "pending migrations: none\n" : " (run 'mxqadmin db upgrade')\n");
	return print_schema_status(db);
}

/* Compare the database with mysql/schema.expected; 0 also when they differ. */
static int print_schema_status(struct mx_db *db)
{
	char **actual = NULL, **expected = expected_lines();
	unsigned n;

	if (!expected || schema_lines(db, &actual) < 0) {
		if (!expected)
			mxq_complain("out of memory");
		free_strv(expected);
		return MXQ_EXIT_FAILURE;
	}
	printf("schema differences from version %u (tables, columns, indexes, triggers):\n",
	       mxq_schema_latest_version);
	n = print_schema_diff(actual, expected);
	if (n)
		printf("schema: %u difference%s\n", n, n == 1 ? "" : "s");
	else
		printf("  none\nschema: as expected\n");
	free_strv(actual);
	free_strv(expected);
	return 0;
}

static int db_schema(struct mx_db *db)
{
	char **actual = NULL;

	if (schema_lines(db, &actual) < 0)
		return MXQ_EXIT_FAILURE;
	for (size_t i = 0; actual[i]; i++)
		printf("%s\n", actual[i]);
	free_strv(actual);
	return 0;
}

int mxqadmin_db_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help",    no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *action;
	bool dry_run = false;
	struct mx_db *db = NULL;
	int c, ret;

	if (argc < 2)
		return mxq_usage_error("db: missing action (upgrade, status or schema)");
	action = argv[1];
	if (strcmp(action, "-h") == 0 || strcmp(action, "--help") == 0) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(action, "upgrade") != 0 && strcmp(action, "status") != 0 &&
	    strcmp(action, "schema") != 0)
		return mxq_usage_error("db: unknown action '%s' (upgrade, status or schema)",
			action);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "nh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			dry_run = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			return mxq_usage_error("db %s: unknown option '%s' (try 'mxqadmin db --help')",
				action, argv[optind]);
		}
	}
	if (optind < argc - 1)
		return mxq_usage_error("db %s: unexpected argument '%s'", action, argv[1 + optind]);
	if (dry_run && strcmp(action, "upgrade") != 0)
		return mxq_usage_error("db %s: --dry-run applies to upgrade only", action);

	if (connect_db(&db, dbopt, strcmp(action, "upgrade") == 0 && !dry_run) < 0)
		return MXQ_EXIT_FAILURE;
	if (strcmp(action, "upgrade") == 0)
		ret = db_upgrade(db, dry_run);
	else if (strcmp(action, "schema") == 0)
		ret = db_schema(db);
	else
		ret = db_status(db);
	mx_db_close(db);
	return ret;
}
