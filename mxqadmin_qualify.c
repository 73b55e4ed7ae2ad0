/*
 * mxqadmin qualify - which hosts may run a group, and for every other host
 * the first rule of server_is_qualified() that excludes it.
 *
 *   mxqadmin qualify --group ID [--host HOST] [--json]
 *
 * The hosts are every host name found in mxq_daemon or mxq_power. A host
 * is judged by its NEWEST mxq_daemon row (highest daemon_id), whether that
 * daemon still runs or not: this is what the host offered when it last
 * registered, and what the power manager would judge a powered-off host
 * by. A host only known to mxq_power never registered and cannot be
 * judged. The answer comes from server_is_qualified() itself, so it is the
 * answer mxqd's dispatch and the power manager get.
 *
 * This file also holds the helpers the subcommands share (mxqadmin.h):
 * connecting and reading a group's requirements.
 *
 * Errors: one line "mxqadmin: ..." on stderr; exit 1 for an unknown group
 * or host and database failures, 2 for usage errors. Nothing is written.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "mx_db.h"
#include "mxq_client.h"
#include "mx_util.h"
#include "mxq_daemon.h"
#include "mxq_group.h"
#include "mxq_status.h"
#include "mxq_json.h"
#include "mxq_privs.h"
#include "mxq_table.h"
#include "mxqadmin.h"
#include "mxqd_control.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define MXQADMIN_DB_FILE SYSCONFDIR "/mxq/mxqadmin.cnf"
#define MXQADMIN_DB_GROUP "mxqadmin"

/* ------------------------------------------------------------------ */
/* shared helpers                                                      */

int mxqadmin_connect(struct mx_db **ret_db, const struct mxqadmin_db_options *dbopt)
{
	return mxq_client_connect(ret_db, dbopt->defaults_file, dbopt->group);
}

int mxqadmin_connect_admin(struct mx_db **ret_db, const struct mxqadmin_db_options *dbopt,
			   const char *what)
{
	struct mxqadmin_db_options admin = *dbopt;
	char err[512];

	if (mxq_privs_check_admin(mxq_privs_admin_group(), err, sizeof(err)) < 0) {
		mxq_complain("%s refused: %s", what, err);
		return -EPERM;
	}
	if (!dbopt->chosen && access(MXQADMIN_DB_FILE, F_OK) == 0) {
		admin.defaults_file = MXQADMIN_DB_FILE;
		admin.group = MXQADMIN_DB_GROUP;
	}
	return mxqadmin_connect(ret_db, &admin);
}

enum group_col {
	G_ID, G_NAME, G_USER, G_STATUS, G_INQ, G_RUNNING, G_MAX_PER_NODE,
	G_REQS,                 /* MXQ_GROUP_REQS_COLUMNS start here */
};

int mxqadmin_group_load(struct mx_db *db, uint64_t group_id, struct mxqadmin_group *ret)
{
	struct mx_db_result *res = NULL;
	struct mxqadmin_group g = { 0 };
	int64_t n;
	int r;

	n = mx_db_query(db, &res,
		"SELECT group_id, group_name, user_name, group_status, group_jobs_inq,"
		" group_jobs_running, job_max_per_node, " MXQ_GROUP_REQS_COLUMNS
		" FROM mxq_group WHERE group_id = ?", "U", group_id);
	if (n < 0)
		return (int)n;
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return -ENOENT;
	}
	g.id = mx_db_u64(res, G_ID);
	g.status = (int)mx_db_i64(res, G_STATUS);
	g.jobs_inq = mx_db_u64(res, G_INQ);
	g.jobs_running = mx_db_u64(res, G_RUNNING);
	g.max_per_node = (uint32_t)mx_db_u64(res, G_MAX_PER_NODE);
	g.name = mx_db_strdup(res, G_NAME);
	g.user_name = mx_db_strdup(res, G_USER);
	r = g.name && g.user_name ? 0 : -ENOMEM;
	if (r == 0)
		r = mxq_group_reqs_from_row(&g.reqs, res, G_REQS);
	mx_db_result_free(res);
	if (r < 0) {
		mxqadmin_group_done(&g);
		return r;
	}
	*ret = g;
	return 0;
}

void mxqadmin_group_done(struct mxqadmin_group *group)
{
	if (!group)
		return;
	free(group->name);
	free(group->user_name);
	mxq_group_reqs_done(&group->reqs);
	*group = (struct mxqadmin_group){ 0 };
}

/* ------------------------------------------------------------------ */
/* qualify                                                             */

struct qualify_options {
	uint64_t group_id;
	bool have_group;
	const char *host;   /* NULL = every host */
	bool json;
};

/* The verdict on one host. */
struct host_verdict {
	char *hostname;
	bool registered;        /* has an mxq_daemon row */
	uint64_t daemon_id;
	char *daemon_name;
	int daemon_status;
	int64_t heartbeat_age_s;
	bool judged;            /* registered and its row could be judged */
	char *power_state;      /* NULL: not managed (no mxq_power row) */
	bool qualified;
	enum mxq_qual_rule rule;
	char *detail;           /* extra words on the rule, or NULL */
};

enum host_col {
	H_HOSTNAME, H_DAEMON_ID, H_DAEMON_NAME, H_STATUS, H_AGE,
	H_CAPS,                 /* MXQ_DAEMON_CAPS_COLUMNS start here */
	H_PREREQ = H_CAPS + 1,  /* d.prerequisites, for messages */
	H_POWER_STATE = H_CAPS + MXQ_DAEMON_CAPS_NCOLS,
};

/* Every host (or one), with its newest registration and power state. */
static const char hosts_sql[] =
	"SELECT h.hostname, d.daemon_id, d.daemon_name, d.status,"
	" TIMESTAMPDIFF(SECOND, d.mtime, NOW()), " MXQ_DAEMON_CAPS_COLUMNS ", p.state"
	" FROM (SELECT hostname FROM mxq_daemon UNION SELECT hostname FROM mxq_power) h"
	MXQ_DAEMON_NEWEST_JOIN("h.hostname")
	" LEFT JOIN mxq_power p ON p.hostname = h.hostname"
	" WHERE ? IS NULL OR h.hostname = ?"
	" ORDER BY h.hostname";

static void verdict_done(struct host_verdict *v)
{
	free(v->hostname);
	free(v->daemon_name);
	free(v->power_state);
	free(v->detail);
}

static void verdicts_free(struct host_verdict *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		verdict_done(&v[i]);
	free(v);
}

/*
 * Judge the host of the current row by its registration. Sets v->detail
 * when the rule alone would not say enough (text that does not parse).
 * 0 or -ENOMEM.
 */
static int judge_registration(const struct mx_db_result *res, const struct mxqadmin_group *group,
			      struct host_verdict *v)
{
	struct mxq_server_caps caps = { 0 };
	char err[256];
	int r;

	r = mxq_daemon_caps_from_row(&caps, v->hostname, res, H_CAPS, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (!caps.hostname) {
		/* caps refuse the host name itself (blanks in it): nothing can match */
		v->judged = false;
		v->detail = mx_asprintf("cannot be judged: %s", err);
		return v->detail ? 0 : -ENOMEM;
	}
	v->judged = true;
	v->qualified = server_is_qualified(&caps, &group->reqs, &v->rule);
	if (v->rule == MXQ_QUAL_SERVER_PREREQUISITES && caps.prerequisites_invalid) {
		v->detail = mx_asprintf("the host's prerequisites '%s' do not parse: %s",
					mx_db_str(res, H_PREREQ), err);
		r = v->detail ? 0 : -ENOMEM;
	} else if (v->rule == MXQ_QUAL_GROUP_PREREQUISITES && group->reqs.prerequisites_invalid) {
		v->detail = strdup("the group's prerequisites do not parse");
		r = v->detail ? 0 : -ENOMEM;
	} else {
		r = 0;
	}
	mxq_server_caps_done(&caps);
	return r;
}

/* Judge the host of the current row. 0 or -ENOMEM. */
static int judge_host(const struct mx_db_result *res, const struct mxqadmin_group *group,
		      struct host_verdict *ret)
{
	struct host_verdict v = { 0 };
	int r = -ENOMEM;

	v.hostname = mx_db_strdup(res, H_HOSTNAME);
	if (!v.hostname)
		goto fail;
	if (!mx_db_is_null(res, H_POWER_STATE)) {
		v.power_state = mx_db_strdup(res, H_POWER_STATE);
		if (!v.power_state)
			goto fail;
	}
	v.registered = !mx_db_is_null(res, H_DAEMON_ID);
	if (v.registered) {
		v.daemon_id = mx_db_u64(res, H_DAEMON_ID);
		v.daemon_status = (int)mx_db_i64(res, H_STATUS);
		v.heartbeat_age_s = mx_db_i64(res, H_AGE);
		v.daemon_name = mx_db_strdup(res, H_DAEMON_NAME);
		if (!v.daemon_name)
			goto fail;
		r = judge_registration(res, group, &v);
		if (r < 0)
			goto fail;
	}
	*ret = v;
	return 0;
fail:
	verdict_done(&v);
	return r;
}

static int load_verdicts(struct mx_db *db, const struct mxqadmin_group *group, const char *host,
			 struct host_verdict **ret, size_t *ret_n)
{
	struct mx_db_result *res = NULL;
	struct host_verdict *v = NULL;
	size_t n = 0;
	int64_t rows;
	int r = 0;

	rows = mx_db_query(db, &res, hosts_sql, "ss", host, host);
	if (rows < 0)
		return (int)rows;
	if (rows > 0) {
		v = calloc((size_t)rows, sizeof(*v));
		if (!v) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
	}
	while (mx_db_next(res)) {
		r = judge_host(res, group, &v[n]);
		if (r < 0)
			break;
		n++;
	}
	mx_db_result_free(res);
	if (r < 0) {
		verdicts_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *daemon_status_text(const struct host_verdict *v, char *buf, size_t len)
{
	const char *name;

	if (!v->registered)
		return "-";
	name = mxq_daemon_status_to_name(v->daemon_status);
	if (name)
		return name;
	snprintf(buf, len, "%d", v->daemon_status);
	return buf;
}

/* "qualified", "RULE: description" (or "RULE: detail" where the rule alone
 * would not say enough), or why the host cannot be judged. */
static char *verdict_text(const struct host_verdict *v)
{
	if (!v->registered)
		return strdup("unknown: never registered (no mxq_daemon row), capabilities unknown");
	if (!v->judged)
		return mx_asprintf("unknown: %s", v->detail);
	if (v->qualified)
		return strdup("qualified");
	if (v->detail)
		return mx_asprintf("%s: %s", mxq_qual_rule_to_string(v->rule), v->detail);
	return mx_asprintf("%s: %s", mxq_qual_rule_to_string(v->rule),
			   mxq_qual_rule_describe(v->rule));
}

static void describe_group_needs(const struct mxqadmin_group *g, char *buf, size_t len)
{
	const struct mxq_group_reqs *q = &g->reqs;
	char mem[16], tm[16], tmp[16];

	mx_format_size_mib(q->memory_mib, mem, sizeof(mem));
	mx_format_runtime_min(q->time_min, tm, sizeof(tm));
	mx_format_size_mib(q->tmpdir_mib, tmp, sizeof(tmp));
	snprintf(buf, len, "%" PRIu32 " thread%s, %s memory, %s runtime, %" PRIu32 " GPU%s,"
		 " %s tmpdir", q->threads, q->threads == 1 ? "" : "s", mem, tm, q->gpus,
		 q->gpus == 1 ? "" : "s", q->tmpdir_mib ? tmp : "no");
}

static const char *group_status_text(int status, char *buf, size_t len)
{
	const char *name = mxq_group_status_to_name(status);

	if (name)
		return name;
	snprintf(buf, len, "%d", status);
	return buf;
}

static int print_table(const struct mxqadmin_group *g, const struct host_verdict *v, size_t n)
{
	char needs[256], st[16], ds[16];
	struct mxq_table *t = mxq_table_new("HOST|DAEMON|POWER|RESULT");
	size_t n_ok = 0;
	int r = t ? 0 : -ENOMEM;

	describe_group_needs(g, needs, sizeof(needs));
	printf("group %" PRIu64 " '%s' of %s (%s, %" PRIu64 " queued, %" PRIu64 " running):"
	       " needs %s\n", g->id, g->name, g->user_name,
	       group_status_text(g->status, st, sizeof(st)), g->jobs_inq, g->jobs_running, needs);
	for (size_t i = 0; r == 0 && i < n; i++) {
		char *text = verdict_text(&v[i]);

		r = text ? mxq_table_addf(t, "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP
					  "%s", v[i].hostname,
					  daemon_status_text(&v[i], ds, sizeof(ds)),
					  v[i].power_state ? v[i].power_state : "-", text) : -ENOMEM;
		free(text);
		n_ok += v[i].qualified;
	}
	if (r == 0)
		r = mxq_table_print(t, stdout);
	mxq_table_free(t);
	if (r < 0)
		return r;
	printf("%zu of %zu host%s qualified\n", n_ok, n, n == 1 ? "" : "s");
	return 0;
}

static int print_json(const struct mxqadmin_group *g, const struct host_verdict *v, size_t n)
{
	json_t *doc = json_object(), *grp = json_object(), *hosts = json_array();
	char st[16], ds[16];
	int r = 0;

	if (!doc || !grp || !hosts) {
		json_decref(doc);
		json_decref(grp);
		json_decref(hosts);
		return -ENOMEM;
	}
	json_object_set_new(grp, "group_id", json_integer((json_int_t)g->id));
	json_object_set_new(grp, "group_name", json_string(g->name));
	json_object_set_new(grp, "user_name", json_string(g->user_name));
	json_object_set_new(grp, "group_status",
			    json_string(group_status_text(g->status, st, sizeof(st))));
	json_object_set_new(grp, "group_jobs_inq", json_integer((json_int_t)g->jobs_inq));
	json_object_set_new(grp, "group_jobs_running", json_integer((json_int_t)g->jobs_running));
	json_object_set_new(grp, "job_threads", json_integer(g->reqs.threads));
	json_object_set_new(grp, "job_memory_mib", json_integer((json_int_t)g->reqs.memory_mib));
	json_object_set_new(grp, "job_time_min", json_integer((json_int_t)g->reqs.time_min));
	json_object_set_new(grp, "job_gpu", json_integer(g->reqs.gpus));
	json_object_set_new(grp, "job_tmpdir_mib", json_integer((json_int_t)g->reqs.tmpdir_mib));
	json_object_set_new(doc, "group", grp);

	for (size_t i = 0; i < n; i++) {
		json_t *h = json_object();
		char *text = verdict_text(&v[i]);

		if (!h || !text) {
			json_decref(h);
			free(text);
			r = -ENOMEM;
			break;
		}
		json_object_set_new(h, "hostname", json_string(v[i].hostname));
		json_object_set_new(h, "registered", json_boolean(v[i].registered));
		if (v[i].registered) {
			json_object_set_new(h, "daemon_id", json_integer((json_int_t)v[i].daemon_id));
			json_object_set_new(h, "daemon_name", json_string(v[i].daemon_name));
			json_object_set_new(h, "daemon_status",
					    json_string(daemon_status_text(&v[i], ds, sizeof(ds))));
			json_object_set_new(h, "heartbeat_age_s", json_integer(v[i].heartbeat_age_s));
		} else {
			json_object_set_new(h, "daemon_status", json_null());
		}
		json_object_set_new(h, "qualified",
				    v[i].judged ? json_boolean(v[i].qualified) : json_null());
		json_object_set_new(h, "rule", v[i].judged ?
				    json_string(mxq_qual_rule_to_string(v[i].rule)) : json_null());
		json_object_set_new(h, "power_state", mxq_json_text(v[i].power_state));
		json_object_set_new(h, "reason", json_string(text));
		free(text);
		json_array_append_new(hosts, h);
	}
	json_object_set_new(doc, "hosts", hosts);
	if (r == 0)
		return mxq_json_print(doc);
	json_decref(doc);
	return r;
}

static void qualify_usage(FILE *f)
{
	fprintf(f, "usage: mxqadmin qualify --group ID [--host HOST] [--json]\n"
		   "  For every known host (or HOST): 'qualified', or the first rule that\n"
		   "  keeps it from running group ID, judged on its newest mxq_daemon row.\n");
}

static int parse_qualify_options(int argc, char **argv, struct qualify_options *o)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "host",  required_argument, NULL, 'H' },
		{ "json",  no_argument,       NULL, 'j' },
		{ "help",  no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:H:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (mxq_parse_id("group", optarg, &o->group_id) < 0)
				return MXQ_EXIT_USAGE;
			o->have_group = true;
			break;
		case 'H':
			o->host = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			qualify_usage(stdout);
			return 0;
		case ':':
			return mxq_usage_error("qualify: option '%s' needs an argument",
				argv[optind - 1]);
		default:
			return mxq_usage_error("qualify: unknown option '%s'"
				" (try 'mxqadmin qualify --help')", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return mxq_usage_error("qualify: unexpected argument '%s'", argv[optind]);
	if (!o->have_group)
		return mxq_usage_error("qualify needs --group ID");
	return -1;
}

int mxqadmin_qualify_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt)
{
	struct qualify_options o = { 0 };
	struct mxqadmin_group group = { 0 };
	struct host_verdict *verdicts = NULL;
	struct mx_db *db = NULL;
	size_t n = 0;
	int r, rc = MXQ_EXIT_FAILURE;

	r = parse_qualify_options(argc, argv, &o);
	if (r >= 0)
		return r;
	if (mxqadmin_connect(&db, dbopt) < 0)
		return MXQ_EXIT_FAILURE;

	r = mxqadmin_group_load(db, o.group_id, &group);
	if (r == -ENOENT) {
		mxq_complain("unknown group %" PRIu64, o.group_id);
		goto out;
	}
	if (r < 0) {
		mxq_complain("reading group %" PRIu64 ": %s", o.group_id,
			r == -ENOMEM ? "out of memory" : mx_db_error(db));
		goto out;
	}
	r = load_verdicts(db, &group, o.host, &verdicts, &n);
	if (r < 0) {
		mxq_complain("reading hosts: %s",
			r == -ENOMEM ? "out of memory" : mx_db_error(db));
		goto out;
	}
	if (o.host && n == 0) {
		mxq_complain("unknown host '%s' (not in mxq_daemon or mxq_power)",
			o.host);
		goto out;
	}
	r = o.json ? print_json(&group, verdicts, n) : print_table(&group, verdicts, n);
	if (r < 0) {
		mxq_complain("writing the report: %s", strerror(-r));
		goto out;
	}
	rc = 0;
out:
	verdicts_free(verdicts, n);
	mxqadmin_group_done(&group);
	mx_db_close(db);
	return rc;
}
