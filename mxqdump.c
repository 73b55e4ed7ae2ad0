/*
 * mxqdump - show groups and jobs.
 *
 *   mxqdump [FILTERS] [--json]         groups (default: your active groups)
 *   mxqdump --jobs [FILTERS] [--json]  jobs (default: your queued/running jobs)
 *
 * Output is a table with status names, or with --json one JSON document: an
 * array of objects keyed by column name (jansson does the quoting).
 *
 * Every filter is one fixed prepared statement: an unused filter binds SQL
 * NULL and its "? IS NULL OR ..." clause is true, so no SQL is ever built
 * from user input.
 *
 * Upstream MXQ's options map onto these filters: -a is --inactive, -u
 * without a name is --all, -q/-r/-f/-F/-K/-C/-U are --status of jobs (of
 * groups: groups with such a job; -r: groups with queued or running jobs,
 * upstream's "running groups"), --groups is the default listing; -v and
 * --debug change nothing.
 *
 * Configuration: -M/-S, else $MXQ_MYSQL_DEFAULT_FILE/$MXQ_MYSQL_DEFAULT_GROUP,
 * else the defaults of mx_db.h. Errors: one line "mxqdump: ..."; exit 0 on
 * success (also when nothing matched), 1 on database errors, 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_db.h"
#include "mxq_client.h"
#include "mxq_json.h"
#include "mxq_privs.h"
#include "mx_util.h"
#include "mxq_status.h"
#include "mxq_table.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif


/* Filters as text (NULL = not given), bound as parameters. */
struct filters {
	bool jobs;               /* --jobs: list jobs instead of groups */
	bool json;               /* --json */
	bool all_users;          /* --all */
	bool inactive;           /* --inactive: also groups/jobs that are done */
	const char *user;        /* --user NAME or UID */
	const char *group_id;    /* --group-id */
	const char *job_id;      /* --job-id */
	const char *status;      /* --status, normalized to a decimal code */
	char status_buf[16];
	const char *has_job_status; /* -q/-f/...: groups with a job in this status (code) */
	char job_status_buf[16];
	bool only_active;        /* -r on groups: only groups with queued or running jobs */
	char uid_buf[16];        /* the current user's uid, the default filter */
	char *active_codes;      /* "0,100,..." job codes that are not terminal */
	const char *defaults_file;
	const char *db_group;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: mxqdump [OPTIONS]            list groups\n"
"       mxqdump --jobs [OPTIONS]     list jobs\n"
"\n"
"  -j, --jobs               list jobs instead of groups\n"
"      --groups             list groups (the default)\n"
"  -A, --all                every user (default: only your own)\n"
"  -u, --user[=NAME|UID]    only this user; -u alone: every user (alias: --users)\n"
"  -g, --group-id ID        only this group\n"
"  -J, --job-id ID          only this job (implies --jobs)\n"
"  -s, --status STATUS      only this status: a name (INQ, RUNNING, FINISHED, ...,\n"
"                           for groups OK or CANCELLED) or its number\n"
"  -q, --inq, -r, --running, -f, --finished, -F, --failed, -K, --killed,\n"
"  -C, --cancelled, -U, --unknown\n"
"                           jobs: --status with that name; groups: only groups with\n"
"                           such a job (-r: with queued or running jobs)\n"
"  -i, --inactive           also groups without queued or running jobs,\n"
"                           and jobs that have ended (alias: -a)\n"
"      --json               one JSON array of objects instead of a table\n"
"  -v, --verbose, --debug   accepted for upstream scripts (mxqdump prints no more)\n"
"  -M, --mysql-default-file FILE   MySQL defaults file (default: $MXQ_MYSQL_DEFAULT_FILE or %s)\n"
"  -S, --mysql-default-group NAME  group in that file (default: $MXQ_MYSQL_DEFAULT_GROUP or %s)\n"
"  -h, --help               show this help\n"
"  -V, --version            show the version\n",
		MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
}

/* ------------------------------------------------------------------ */
/* value formatting                                                    */

/* "2026-01-31 12:00:00" in local time, or NULL for the zero date. */
static const char *format_date(uint64_t epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (!epoch || !localtime_r(&t, &tm))
		return NULL;
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
	return buf;
}

/* "45s", "3m07s", "2h05m", "1d04h". */
static void format_duration(uint64_t sec, char *buf, size_t len)
{
	if (sec < 60)
		snprintf(buf, len, "%llus", (unsigned long long)sec);
	else if (sec < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(sec / 60),
			 (unsigned long long)(sec % 60));
	else if (sec < 86400)
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)(sec / 3600),
			 (unsigned long long)(sec / 60 % 60));
	else
		snprintf(buf, len, "%llud%02lluh", (unsigned long long)(sec / 86400),
			 (unsigned long long)(sec / 3600 % 24));
}

/* A job's wait status as "exit N" / "signal N"; NULL while it has none. */
static const char *format_exit(int job_status, bool started, uint64_t wstatus,
			       char *buf, size_t len)
{
	int w = (int)wstatus;

	if (!started || !mxq_job_status_is_terminal(job_status))
		return NULL;
	if (WIFEXITED(w))
		snprintf(buf, len, "exit %d", WEXITSTATUS(w));
	else if (WIFSIGNALED(w))
		snprintf(buf, len, "signal %d", WTERMSIG(w));
	else
		snprintf(buf, len, "status %d", w);
	return buf;
}

static const char *job_status_name(int code, char *buf, size_t len)
{
	const char *name = mxq_job_status_to_name(code);

	if (name)
		return name;
	snprintf(buf, len, "%d", code);
	return buf;
}

static const char *group_status_name(int code, char *buf, size_t len)
{
	const char *name = mxq_group_status_to_name(code);

	if (name)
		return name;
	snprintf(buf, len, "%d", code);
	return buf;
}

/* mxqsub -r as upstream mxqdump names it: job_flags bit 1 requeue, bit 0 restart */
static const char *restart_mode(uint64_t job_flags)
{
	if (job_flags & 2)
		return "always";
	return job_flags & 1 ? "samehost" : "never";
}

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

/* JSON string or null for NULL / empty. */
/* ------------------------------------------------------------------ */
/* groups                                                              */

enum group_col {
	G_ID, G_NAME, G_USER, G_UID, G_STATUS, G_FLAGS, G_PRIORITY,
	G_JOBS, G_INQ, G_RUNNING, G_FINISHED, G_FAILED, G_CANCELLED, G_UNKNOWN,
	G_SLOTS, G_COMMAND, G_THREADS, G_MEMORY, G_TIME, G_TMPDIR, G_GPU,
	G_TAGS, G_PREREQ, G_WHITELIST, G_BLACKLIST,
};

static const char group_sql[] =
	"SELECT group_id, group_name, user_name, user_uid, group_status, group_flags,"
	" group_priority, group_jobs, group_jobs_inq, group_jobs_running,"
	" group_jobs_finished, group_jobs_failed, group_jobs_cancelled,"
	" group_jobs_unknown, group_slots_running, job_command, job_threads,"
	" job_memory, job_time, job_tmpdir_size, job_gpu, tags, prerequisites,"
	" group_whitelist, group_blacklist"
	" FROM mxq_group"
	" WHERE (? IS NULL OR user_uid = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR BINARY user_name = ?)"
	"   AND (? IS NULL OR group_id = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR group_status = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR EXISTS (SELECT 1 FROM mxq_job j WHERE j.group_id = mxq_group.group_id"
	"                             AND j.job_status = CAST(? AS UNSIGNED)))"
	"   AND (? IS NOT NULL OR group_jobs_inq > 0 OR group_jobs_running > 0)"
	" ORDER BY group_id";

#define C MXQ_TABLE_SEP

static struct mxq_table *group_table(void)
{
	return mxq_table_new("GROUP_ID>|USER|NAME|STATUS|INQ>|RUN>|DONE>|FAIL>|CANC>|UNKN>|SLOTS>"
			     "|THR>|MEM>|TIME>|COMMAND");
}

static int group_row(struct mxq_table *t, const struct mx_db_result *res)
{
	char st[16], mem[16], tm[16];

	mx_format_size_mib(mx_db_u64(res, G_MEMORY), mem, sizeof(mem));
	mx_format_runtime_min(mx_db_u64(res, G_TIME), tm, sizeof(tm));
	return mxq_table_addf(t, "%" PRIu64 C "%s" C "%s" C "%s" C "%" PRIu64 C "%" PRIu64 C
			      "%" PRIu64 C "%" PRIu64 C "%" PRIu64 C "%" PRIu64 C "%" PRIu64 C
			      "%" PRIu64 C "%s" C "%s" C "%s",
			      mx_db_u64(res, G_ID), mx_db_str(res, G_USER), mx_db_str(res, G_NAME),
			      group_status_name((int)mx_db_i64(res, G_STATUS), st, sizeof(st)),
			      mx_db_u64(res, G_INQ), mx_db_u64(res, G_RUNNING),
			      mx_db_u64(res, G_FINISHED), mx_db_u64(res, G_FAILED),
			      mx_db_u64(res, G_CANCELLED), mx_db_u64(res, G_UNKNOWN),
			      mx_db_u64(res, G_SLOTS), mx_db_u64(res, G_THREADS), mem, tm,
			      mx_db_str(res, G_COMMAND));
}

static json_t *group_json(const struct mx_db_result *res)
{
	char st[16];
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "group_id", json_integer(mx_db_i64(res, G_ID)));
	json_object_set_new(o, "group_name", json_string(mx_db_str(res, G_NAME)));
	json_object_set_new(o, "user_name", json_string(mx_db_str(res, G_USER)));
	json_object_set_new(o, "user_uid", json_integer(mx_db_i64(res, G_UID)));
	json_object_set_new(o, "group_status",
		json_string(group_status_name((int)mx_db_i64(res, G_STATUS), st, sizeof(st))));
	json_object_set_new(o, "group_closed",
		json_boolean(mxq_group_flags_closed(mx_db_u64(res, G_FLAGS))));
	json_object_set_new(o, "group_priority", json_integer(mx_db_i64(res, G_PRIORITY)));
	json_object_set_new(o, "group_jobs", json_integer(mx_db_i64(res, G_JOBS)));
	json_object_set_new(o, "group_jobs_inq", json_integer(mx_db_i64(res, G_INQ)));
	json_object_set_new(o, "group_jobs_running", json_integer(mx_db_i64(res, G_RUNNING)));
	json_object_set_new(o, "group_jobs_finished", json_integer(mx_db_i64(res, G_FINISHED)));
	json_object_set_new(o, "group_jobs_failed", json_integer(mx_db_i64(res, G_FAILED)));
	json_object_set_new(o, "group_jobs_cancelled", json_integer(mx_db_i64(res, G_CANCELLED)));
	json_object_set_new(o, "group_jobs_unknown", json_integer(mx_db_i64(res, G_UNKNOWN)));
	json_object_set_new(o, "group_slots_running", json_integer(mx_db_i64(res, G_SLOTS)));
	json_object_set_new(o, "job_command", json_string(mx_db_str(res, G_COMMAND)));
	json_object_set_new(o, "job_threads", json_integer(mx_db_i64(res, G_THREADS)));
	json_object_set_new(o, "job_memory", json_integer(mx_db_i64(res, G_MEMORY)));
	json_object_set_new(o, "job_time", json_integer(mx_db_i64(res, G_TIME)));
	json_object_set_new(o, "job_tmpdir_size", json_integer(mx_db_i64(res, G_TMPDIR)));
	json_object_set_new(o, "job_gpu", json_integer(mx_db_i64(res, G_GPU)));
	json_object_set_new(o, "tags", json_string(mx_db_str(res, G_TAGS)));
	json_object_set_new(o, "prerequisites", json_string(mx_db_str(res, G_PREREQ)));
	json_object_set_new(o, "group_whitelist", json_string(mx_db_str(res, G_WHITELIST)));
	json_object_set_new(o, "group_blacklist", json_string(mx_db_str(res, G_BLACKLIST)));
	return o;
}

/* ------------------------------------------------------------------ */
/* jobs                                                                */

enum job_col {
	J_ID, J_GROUP, J_USER, J_GROUP_NAME, J_COMMAND, J_STATUS, J_PRIORITY,
	J_HOST, J_SERVER, J_PID, J_SLOTS, J_SUBMIT, J_START, J_END, J_NOW,
	J_WSTATUS, J_WORKDIR, J_ARGV, J_CALLBACK, J_ENERGY, J_ENERGY_METHOD, J_ENERGY_COMPLETE,
	J_REASON, J_FLAGS,
};

/* The active-status list is bound as one text parameter: FIND_IN_SET. */
static const char job_sql[] =
	"SELECT j.job_id, j.group_id, g.user_name, g.group_name, g.job_command,"
	" j.job_status, j.job_priority, j.host_hostname, j.server_id, j.host_pid,"
	" j.host_slots, UNIX_TIMESTAMP(j.date_submit), UNIX_TIMESTAMP(j.date_start),"
	" UNIX_TIMESTAMP(j.date_end), UNIX_TIMESTAMP(), j.stats_status,"
	" j.job_workdir, j.job_argv, j.job_callback, p.energy_j, p.method, p.completeness,"
	" j.job_reason, j.job_flags"
	" FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
	" LEFT JOIN mxq_power_job p ON p.job_id = j.job_id"
	" WHERE (? IS NULL OR g.user_uid = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR BINARY g.user_name = ?)"
	"   AND (? IS NULL OR j.group_id = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR j.job_id = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR j.job_status = CAST(? AS UNSIGNED))"
	"   AND (? IS NULL OR FIND_IN_SET(j.job_status, ?) > 0)"
	" ORDER BY j.job_id";

/* Seconds the job has run (so far), or -1 when it never started. */
static int64_t job_runtime(const struct mx_db_result *res)
{
	uint64_t start = mx_db_u64(res, J_START), end = mx_db_u64(res, J_END);

	if (!start)
		return -1;
	if (!end || end < start)
		end = mx_db_u64(res, J_NOW);
	return end > start ? (int64_t)(end - start) : 0;
}

/* the last column: why a job ended without running (mxqd refused it) */
static struct mxq_table *job_table(void)
{
	return mxq_table_new("JOB_ID>|GROUP_ID>|USER|STATUS|HOST|SERVER|SUBMITTED|STARTED|ENDED"
			     "|RESULT|RUNTIME>|ENERGY_J>|REASON");
}

static int job_row(struct mxq_table *t, const struct mx_db_result *res)
{
	char st[16], d1[32], d2[32], d3[32], ex[32], rt[32] = "-", en[32] = "-";
	int status = (int)mx_db_i64(res, J_STATUS);
	int64_t runtime = job_runtime(res);

	if (runtime >= 0)
		format_duration((uint64_t)runtime, rt, sizeof(rt));
	if (!mx_db_is_null(res, J_ENERGY)) /* '~' marks a partial measurement */
		snprintf(en, sizeof(en), "%.1f%s", mx_db_double(res, J_ENERGY),
			 strcmp(mx_db_str(res, J_ENERGY_COMPLETE), "full") ? "~" : "");
	return mxq_table_addf(t, "%" PRIu64 C "%" PRIu64 C "%s" C "%s" C "%s" C "%s" C "%s" C "%s"
			      C "%s" C "%s" C "%s" C "%s" C "%s",
			      mx_db_u64(res, J_ID), mx_db_u64(res, J_GROUP), mx_db_str(res, J_USER),
			      job_status_name(status, st, sizeof(st)),
			      dash(mx_db_str(res, J_HOST)), dash(mx_db_str(res, J_SERVER)),
			      dash(format_date(mx_db_u64(res, J_SUBMIT), d1, sizeof(d1))),
			      dash(format_date(mx_db_u64(res, J_START), d2, sizeof(d2))),
			      dash(format_date(mx_db_u64(res, J_END), d3, sizeof(d3))),
			      dash(format_exit(status, runtime >= 0, mx_db_u64(res, J_WSTATUS),
					       ex, sizeof(ex))),
			      rt, en, mx_db_str(res, J_REASON) ? mx_db_str(res, J_REASON) : "");
}

static json_t *job_json(const struct mx_db_result *res)
{
	char st[16], ex[32];
	int status = (int)mx_db_i64(res, J_STATUS);
	int64_t runtime = job_runtime(res);
	json_t *o = json_object(), *argv_json;
	char **argv = NULL;
	int argc = 0;

	if (!o)
		return NULL;
	json_object_set_new(o, "job_id", json_integer(mx_db_i64(res, J_ID)));
	json_object_set_new(o, "group_id", json_integer(mx_db_i64(res, J_GROUP)));
	json_object_set_new(o, "user_name", json_string(mx_db_str(res, J_USER)));
	json_object_set_new(o, "group_name", json_string(mx_db_str(res, J_GROUP_NAME)));
	json_object_set_new(o, "job_command", json_string(mx_db_str(res, J_COMMAND)));
	json_object_set_new(o, "job_status", json_string(job_status_name(status, st, sizeof(st))));
	json_object_set_new(o, "job_status_code", json_integer(status));
	json_object_set_new(o, "job_priority", json_integer(mx_db_i64(res, J_PRIORITY)));
	json_object_set_new(o, "host_hostname", mxq_json_text(mx_db_str(res, J_HOST)));
	json_object_set_new(o, "server_id", mxq_json_text(mx_db_str(res, J_SERVER)));
	json_object_set_new(o, "host_pid", json_integer(mx_db_i64(res, J_PID)));
	json_object_set_new(o, "host_slots", json_integer(mx_db_i64(res, J_SLOTS)));
	mxq_json_set_time(o, "date_submit", (double)mx_db_u64(res, J_SUBMIT));
	mxq_json_set_time(o, "date_start", (double)mx_db_u64(res, J_START));
	mxq_json_set_time(o, "date_end", (double)mx_db_u64(res, J_END));
	json_object_set_new(o, "stats_status", json_integer(mx_db_i64(res, J_WSTATUS)));
	json_object_set_new(o, "energy_j", mx_db_is_null(res, J_ENERGY) ? json_null()
					   : json_real(mx_db_double(res, J_ENERGY)));
	json_object_set_new(o, "energy_method", mxq_json_text(mx_db_str(res, J_ENERGY_METHOD)));
	json_object_set_new(o, "energy_completeness", mxq_json_text(mx_db_str(res, J_ENERGY_COMPLETE)));
	json_object_set_new(o, "result", mxq_json_text(
		format_exit(status, runtime >= 0, mx_db_u64(res, J_WSTATUS), ex, sizeof(ex))));
	json_object_set_new(o, "runtime_sec", runtime >= 0 ? json_integer(runtime) : json_null());
	json_object_set_new(o, "job_workdir", json_string(mx_db_str(res, J_WORKDIR)));
	argv_json = json_array();
	if (mx_argv_decode(mx_db_str(res, J_ARGV), &argv, &argc) == 0) {
		for (int i = 0; i < argc; i++)
			json_array_append_new(argv_json, json_string(argv[i]));
		mx_strvec_free(argv);
	}
	json_object_set_new(o, "job_argv", argv_json);
	json_object_set_new(o, "job_callback", mxq_json_text(mx_db_str(res, J_CALLBACK)));
	json_object_set_new(o, "job_reason", mxq_json_text(mx_db_str(res, J_REASON)));
	json_object_set_new(o, "job_restart", json_string(restart_mode(mx_db_u64(res, J_FLAGS))));
	return o;
}

/* ------------------------------------------------------------------ */

/* "0,100,150,..." every job status that is not terminal; malloc'ed. */
static char *active_status_list(void)
{
	size_t len = 0, cap = 256;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (int code = 0; code <= MXQ_JOB_STATUS_EXIT; code++) {
		if (!mxq_job_status_to_name(code) || mxq_job_status_is_terminal(code))
			continue;
		len += (size_t)snprintf(s + len, cap - len, "%s%d", len ? "," : "", code);
		if (len >= cap - 16) {
			free(s);
			return NULL; /* cannot happen with the known table */
		}
	}
	return s;
}

static int normalize_status(struct filters *f, const char *arg)
{
	int code = -EINVAL;

	if (f->jobs) {
		code = mxq_job_status_from_name(arg);
	} else {
		static const int group_codes[] = { MXQ_GROUP_STATUS_OK, MXQ_GROUP_STATUS_CANCELLED };
		uint32_t n;

		for (size_t i = 0; i < MX_ARRAY_SIZE(group_codes); i++)
			if (!strcasecmp(arg, mxq_group_status_to_name(group_codes[i])))
				code = group_codes[i];
		if (code < 0 && mx_strtou32(arg, &n) == 0 && mxq_group_status_to_name((int)n))
			code = (int)n;
	}
	if (code < 0) {
		mxq_complain("--status: unknown %s status '%s'", f->jobs ? "job" : "group", arg);
		return -EINVAL;
	}
	snprintf(f->status_buf, sizeof(f->status_buf), "%d", code);
	f->status = f->status_buf;
	return 0;
}

/* Upstream mxqdump's status options: each is --status NAME of a job. */
static const struct {
	char opt;
	int status;
} status_aliases[] = {
	{ 'q', MXQ_JOB_STATUS_INQ },      { 'r', MXQ_JOB_STATUS_RUNNING },
	{ 'f', MXQ_JOB_STATUS_FINISHED }, { 'F', MXQ_JOB_STATUS_FAILED },
	{ 'K', MXQ_JOB_STATUS_KILLED },   { 'C', MXQ_JOB_STATUS_CANCELLED },
	{ 'U', MXQ_JOB_STATUS_UNKNOWN },
};

enum { OPT_JSON = 256, OPT_GROUPS, OPT_DEBUG };

/* 0 go on, 1 exit successfully, negative: usage error (already reported). */
static int parse_args(int argc, char **argv, struct filters *f)
{
	static const struct option opts[] = {
		{ "jobs",                no_argument,       NULL, 'j' },
		{ "groups",              optional_argument, NULL, OPT_GROUPS },
		{ "all",                 no_argument,       NULL, 'A' },
		{ "user",                optional_argument, NULL, 'u' },
		{ "users",               optional_argument, NULL, 'u' },
		{ "group-id",            required_argument, NULL, 'g' },
		{ "job-id",              required_argument, NULL, 'J' },
		{ "status",              required_argument, NULL, 's' },
		{ "inq",                 no_argument,       NULL, 'q' },
		{ "running",             no_argument,       NULL, 'r' },
		{ "finished",            no_argument,       NULL, 'f' },
		{ "failed",              no_argument,       NULL, 'F' },
		{ "killed",              no_argument,       NULL, 'K' },
		{ "cancelled",           no_argument,       NULL, 'C' },
		{ "unknown",             no_argument,       NULL, 'U' },
		{ "inactive",            no_argument,       NULL, 'i' },
		{ "json",                no_argument,       NULL, OPT_JSON },
		{ "verbose",             no_argument,       NULL, 'v' },
		{ "debug",               no_argument,       NULL, OPT_DEBUG },
		{ "mysql-default-file",  required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "help",                no_argument,       NULL, 'h' },
		{ "version",             no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* the last --status, the last status option (index into status_aliases)
	 * and which of them came last */
	const char *status_arg = NULL;
	int alias = -1;
	bool alias_last = false;
	bool groups = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jAu::g:J:s:iaqrfFKCUvM:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'j': f->jobs = true; break;
		case OPT_GROUPS:
			/* upstream: --groups[=ID], ID as -g; "--groups ID" too */
			groups = true;
			if (!optarg && optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
				optarg = argv[optind++];
			if (!optarg)
				break;
			if (mxq_parse_id("groups", optarg, NULL) < 0)
				return -EINVAL;
			f->group_id = optarg;
			break;
		case 'A': f->all_users = true; break;
		case 'u':
			/* upstream: -u NAME, and -u alone for every user */
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			if (!optarg) {
				f->all_users = true;
				break;
			}
			if (!*optarg) {
				mxq_complain("--user: empty name");
				return -EINVAL;
			}
			f->user = optarg;
			break;
		case 'g':
			if (mxq_parse_id("group-id", optarg, NULL) < 0)
				return -EINVAL;
			f->group_id = optarg;
			break;
		case 'J':
			if (mxq_parse_id("job-id", optarg, NULL) < 0)
				return -EINVAL;
			f->job_id = optarg;
			f->jobs = true;
			break;
		case 's': status_arg = optarg; alias_last = false; break;
		case 'q': case 'r': case 'f': case 'F': case 'K': case 'C': case 'U':
			for (size_t i = 0; i < MX_ARRAY_SIZE(status_aliases); i++)
				if (status_aliases[i].opt == c)
					alias = (int)i;
			alias_last = true;
			break;
		case 'i': case 'a': f->inactive = true; break;
		case 'v': case OPT_DEBUG: break; /* upstream's log levels: we print no more */
		case OPT_JSON: f->json = true; break;
		case 'M': f->defaults_file = optarg; break;
		case 'S': f->db_group = optarg; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("mxqdump %s\n", MXQ_VERSION); return 1;
		default:
			mxq_complain_getopt(c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		mxq_complain("unexpected argument '%s' (try 'mxqdump --help')", argv[optind]);
		return -EINVAL;
	}
	if (groups && f->jobs) {
		mxq_complain("--groups and --jobs/--job-id exclude each other");
		return -EINVAL;
	}
	/* after the loop: whether --status names a job or group status depends
	 * on --jobs. For jobs a status option is --status (the last one counts);
	 * for groups it asks for groups with such a job, beside --status. */
	if (f->jobs && alias >= 0 && (alias_last || !status_arg)) {
		status_arg = mxq_job_status_to_name(status_aliases[alias].status);
	} else if (!f->jobs && alias >= 0) {
		if (status_aliases[alias].status == MXQ_JOB_STATUS_RUNNING) {
			f->only_active = true;
		} else {
			snprintf(f->job_status_buf, sizeof(f->job_status_buf), "%d",
				 status_aliases[alias].status);
			f->has_job_status = f->job_status_buf;
		}
	}
	if (status_arg && normalize_status(f, status_arg) < 0)
		return -EINVAL;
	if (f->job_id && !f->jobs) {
		mxq_complain("--job-id needs --jobs");
		return -EINVAL;
	}
	return 0;
}

/* Run the listing; 0 or negative errno (message already printed). */
static int dump(struct mx_db *db, const struct filters *f)
{
	/* naming a group, job or user replaces the "only mine" default */
	const char *uid = f->all_users || f->user || f->group_id || f->job_id ? NULL : f->uid_buf;
	const char *user_uid = uid, *user_name = NULL;
	/* and naming a status, group or job replaces the "only active" default
	 * (not for groups with -r, upstream's "running groups") */
	bool everything = (f->inactive || f->status || f->has_job_status || f->group_id ||
			   f->job_id) && !f->only_active;
	struct mx_db_result *res = NULL;
	struct mxq_table *table = NULL;
	json_t *array = NULL;
	uint32_t n;
	int64_t rows;
	int r;

	if (f->user) {
		if (mx_strtou32(f->user, &n) == 0)
			user_uid = f->user;
		else
			user_name = f->user;
	}
	if (f->jobs)
		rows = mx_db_query(db, &res, job_sql, "ssssssssssss",
				   user_uid, user_uid, user_name, user_name,
				   f->group_id, f->group_id, f->job_id, f->job_id,
				   f->status, f->status,
				   everything ? NULL : f->active_codes,
				   everything ? NULL : f->active_codes);
	else
		rows = mx_db_query(db, &res, group_sql, "sssssssssss",
				   user_uid, user_uid, user_name, user_name,
				   f->group_id, f->group_id, f->status, f->status,
				   f->has_job_status, f->has_job_status,
				   everything ? "1" : NULL);
	if (rows < 0) {
		mxq_complain("query failed: %s", mx_db_error(db));
		return (int)rows;
	}

	if (f->json)
		array = json_array();
	else
		table = f->jobs ? job_table() : group_table();
	if (!array && !table)
		goto nomem;
	while (mx_db_next(res)) {
		if (f->json) {
			json_t *o = f->jobs ? job_json(res) : group_json(res);

			if (!o || json_array_append_new(array, o) < 0)
				goto nomem;
		} else if ((f->jobs ? job_row(table, res) : group_row(table, res)) < 0) {
			goto nomem;
		}
	}
	mx_db_result_free(res);
	res = NULL;
	if (f->json && mxq_json_print(array) < 0) {
		mxq_complain("cannot write JSON output");
		return -EIO;
	}
	if (table) {
		r = mxq_table_print(table, stdout);
		mxq_table_free(table);
		if (r < 0) {
			mxq_complain("writing the output: %s", strerror(-r));
			return r;
		}
	}
	if (fflush(stdout) != 0) {
		mxq_complain("writing the output: %s", strerror(errno));
		return -EIO;
	}
	return 0;
nomem:
	mxq_complain("out of memory");
	json_decref(array);
	mx_db_result_free(res);
	return -ENOMEM;
}

int main(int argc, char **argv)
{
	struct filters f = {
		.defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE"),
		.db_group = getenv("MXQ_MYSQL_DEFAULT_GROUP"),
	};
	struct mx_db *db = NULL;
	int r, status = MXQ_EXIT_FAILURE;

	mxq_privs_init(); /* first: from here on we act as the caller */
	mxq_client_set_program("mxqdump");

	if (!f.defaults_file || !*f.defaults_file)
		f.defaults_file = MX_DB_DEFAULT_FILE;
	if (!f.db_group || !*f.db_group)
		f.db_group = MX_DB_GROUP_CLIENT;
	snprintf(f.uid_buf, sizeof(f.uid_buf), "%u", (unsigned)getuid());

	r = parse_args(argc, argv, &f);
	if (r != 0)
		return r > 0 ? MXQ_EXIT_OK : MXQ_EXIT_USAGE;
	f.active_codes = active_status_list();
	if (!f.active_codes) {
		mxq_complain("out of memory");
		return MXQ_EXIT_FAILURE;
	}

	if (!f.json)
		mxq_client_escape_stdout();
	r = mxq_client_connect_current(&db, f.defaults_file, f.db_group);
	if (r < 0)
		goto out;
	if (dump(db, &f) == 0)
		status = MXQ_EXIT_OK;
out:
	mx_db_close(db);
	free(f.active_codes);
	return status;
}
