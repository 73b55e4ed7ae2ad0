/*
 * mxqadmin db - create, upgrade and inspect the MXQ database schema.
 *
 *   mxqadmin db upgrade [--dry-run]
 *   mxqadmin db status
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
 * Errors: one line "mxqadmin: ..." on stderr; exit 1 for database or
 * upgrade failures, 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
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
		   "       mxqadmin [-M FILE] [-S GROUP] db status\n\n"
		   "  upgrade    create the tables of a new database, or apply the pending\n"
		   "             migrations, then (re)install the counter triggers\n"
		   "  --dry-run  only print what upgrade would do\n"
		   "  status     print the schema version, the triggers and pending migrations\n");
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
		char **grown;

		p += sizeof(kw) - 1;
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		start = p;
		while (*p && (*p == '_' || (*p >= 'a' && *p <= 'z') ||
			      (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			p++;
		if (p == start)
			continue;
		grown = realloc(names, (n + 2) * sizeof(*names));
		if (!grown)
			goto fail;
		names = grown;
		names[n] = strndup(start, (size_t)(p - start));
		if (!names[n])
			goto fail;
		names[++n] = NULL;
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

static int get_upgrade_lock(struct mx_db *db)
{
	uint64_t got = 0;
	int r;

	r = mx_db_query_u64(db, &got, "SELECT GET_LOCK(?, ?)", "si",
			    UPGRADE_LOCK, UPGRADE_LOCK_TIMEOUT_SEC);
	if (r < 0) {
		fprintf(stderr, "mxqadmin: cannot take the upgrade lock: %s\n", mx_db_error(db));
		return r;
	}
	if (got != 1) {
		fprintf(stderr, "mxqadmin: another schema upgrade holds lock '%s' for more than %d s;"
			" try again later\n", UPGRADE_LOCK, UPGRADE_LOCK_TIMEOUT_SEC);
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
		fprintf(stderr, "mxqadmin: %s\n", mx_db_error(db));
		return (int)n;
	}
	none = !mx_db_next(res) || mx_db_is_null(res, 0);
	mx_db_result_free(res);
	if (none) {
		fprintf(stderr, "mxqadmin: no database selected: set 'database=' in group [%s] of %s\n",
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
	if (r < 0)
		fprintf(stderr, "mxqadmin: %s failed: %s\n", what, err);
	return r;
}

static int record_migration(struct mx_db *db, const struct mxq_schema_file *m)
{
	int64_t n;

	/* IGNORE: a fresh database may have been half recorded before */
	n = mx_db_exec(db, "INSERT IGNORE INTO mxq_schema_version (version, name) VALUES (?, ?)",
		       "us", m->version, m->name);
	if (n < 0) {
		fprintf(stderr, "mxqadmin: cannot record migration %s: %s\n", m->name, mx_db_error(db));
		return (int)n;
	}
	return 0;
}

static int install_triggers(struct mx_db *db)
{
	int r;

	/* no job row may change while its triggers are missing */
	r = run_script(db, "locking mxq_job and mxq_group",
		       "LOCK TABLES mxq_job WRITE, mxq_group WRITE");
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
	struct schema_state st;
	char desc[128];
	unsigned applied = 0;
	int r;

	r = get_upgrade_lock(db);
	if (r < 0)
		return 1;
	r = read_schema_state(db, &st);
	if (r < 0) {
		fprintf(stderr, "mxqadmin: cannot read the schema version: %s\n", mx_db_error(db));
		return 1;
	}
	describe_state(&st, desc, sizeof(desc));
	if (st.version > mxq_schema_latest_version) {
		fprintf(stderr, "mxqadmin: database schema version %u is newer than this mxqadmin"
			" knows (%u): refusing to touch it; use a newer mxqadmin\n",
			st.version, mxq_schema_latest_version);
		return 1;
	}
	printf("database: %s\n", desc);

	if (st.empty) {
		/* create_tables.sql is the core schema as of migration
		 * MXQ_SCHEMA_CREATE_TABLES_VERSION; later migrations run below */
		printf("%screate the core tables (create_tables)\n", would);
		if (!dry_run && run_script(db, "create_tables.sql", mxq_schema_create_tables.sql) < 0)
			return 1;
		for (unsigned i = 0; i < mxq_schema_migrations_count; i++) {
			const struct mxq_schema_file *m = &mxq_schema_migrations[i];
			if (m->version > MXQ_SCHEMA_CREATE_TABLES_VERSION)
				continue;
			printf("%srecord migration %s as applied (contained in create_tables)\n",
			       would, m->name);
			if (!dry_run && record_migration(db, m) < 0)
				return 1;
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
			return 1;
		st.version = m->version;
		applied++;
	}
	if (!applied)
		printf("schema is up to date (version %u)\n", st.version);

	printf("%s(re)install the counter triggers (create_triggers)\n", would);
	if (!dry_run && install_triggers(db) < 0)
		return 1;

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
	struct mx_db_result *res = NULL;
	char **expected = expected_triggers();
	char **present = NULL;
	size_t npresent = 0;
	bool first;
	int64_t n;

	if (!expected) {
		fprintf(stderr, "mxqadmin: out of memory\n");
		return -ENOMEM;
	}
	n = mx_db_query(db, &res,
			"SELECT TRIGGER_NAME FROM information_schema.TRIGGERS"
			" WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME", NULL);
	if (n < 0) {
		fprintf(stderr, "mxqadmin: cannot list triggers: %s\n", mx_db_error(db));
		free_strv(expected);
		return (int)n;
	}
	present = calloc((size_t)n + 1, sizeof(*present));
	while (present && mx_db_next(res)) {
		present[npresent] = mx_db_strdup(res, 0);
		if (!present[npresent])
			break;
		npresent++;
	}
	mx_db_result_free(res);
	if (!present || npresent != (size_t)n) {
		fprintf(stderr, "mxqadmin: out of memory\n");
		free_strv(expected);
		free_strv(present);
		return -ENOMEM;
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

static int db_status(struct mx_db *db)
{
	struct schema_state st;
	char desc[128];
	bool first = true;

	if (read_schema_state(db, &st) < 0) {
		fprintf(stderr, "mxqadmin: cannot read the schema version: %s\n", mx_db_error(db));
		return 1;
	}
	describe_state(&st, desc, sizeof(desc));
	printf("schema: %s; this mxqadmin knows up to version %u\n",
	       desc, mxq_schema_latest_version);
	if (st.version > mxq_schema_latest_version)
		printf("warning: the database is newer than this mxqadmin\n");
	if (print_trigger_status(db) < 0)
		return 1;

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

	if (argc < 2) {
		fprintf(stderr, "mxqadmin: db: missing action (upgrade or status)\n");
		return 2;
	}
	action = argv[1];
	if (strcmp(action, "-h") == 0 || strcmp(action, "--help") == 0) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(action, "upgrade") != 0 && strcmp(action, "status") != 0) {
		fprintf(stderr, "mxqadmin: db: unknown action '%s' (upgrade or status)\n", action);
		return 2;
	}
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
			fprintf(stderr, "mxqadmin: db %s: unknown option '%s' (try 'mxqadmin db --help')\n",
				action, argv[optind]);
			return 2;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "mxqadmin: db %s: unexpected argument '%s'\n", action, argv[1 + optind]);
		return 2;
	}
	if (dry_run && strcmp(action, "upgrade") != 0) {
		fprintf(stderr, "mxqadmin: db %s: --dry-run applies to upgrade only\n", action);
		return 2;
	}

	if (connect_db(&db, dbopt, strcmp(action, "upgrade") == 0 && !dry_run) < 0)
		return 1;
	if (strcmp(action, "upgrade") == 0)
		ret = db_upgrade(db, dry_run);
	else
		ret = db_status(db);
	mx_db_close(db);
	return ret;
}
