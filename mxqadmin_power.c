/*
 * mxqadmin power - look at and steer the power manager (DESIGN §5.7).
 *
 *   mxqadmin power list [--json]
 *   mxqadmin power status [--json] [--power-config FILE]
 *   mxqadmin power events [--host HOST] [--since T] [--limit N] [--json]
 *   mxqadmin power explain HOST [--json]
 *   mxqadmin power explain --group ID [--power-config FILE] [--json]
 *   mxqadmin power clear HOST [--reason R]
 *   mxqadmin power on|off HOST --reason R
 *   mxqadmin power exclude|include HOST [--reason R]
 *
 * Reading: list and explain read the same snapshot the leader decides on
 * (mxq_power_db_snapshot_read), so what is shown is what the policy sees.
 * 'explain --group' runs the real policy, mxq_power_decide(), on a fresh
 * snapshot with the persisted policy state and the local power.conf; the
 * plan is only printed, nothing is ever written or actuated. status and
 * events are plain SELECTs on mxq_power_leader and mxq_power_event.
 *
 * Writing: the admin actions go through mxq_power_db_admin(), which
 * records them with the admin's login name; on/off are requests the leader
 * carries out on its next tick. An action with nothing to do (-EALREADY)
 * says so and exits 0, so scripts may repeat an action safely.
 *
 * Configuration: --power-config FILE, else SYSCONFDIR/mxq/power.conf when
 * it exists, else the built-in defaults (power.conf(5)).
 *
 * Errors: one line "mxqadmin: ..." on stderr; exit 1 for unknown hosts or
 * groups and database failures, 2 for usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "mx_db.h"
#include "mx_time.h"
#include "mxq_json.h"
#include "mx_util.h"
#include "mxq_power_db.h"
#include "mxq_power_config.h"
#include "mxq_power_json.h"
#include "mxq_table.h"
#include "mxq_power_policy.h"
#include "mxq_status.h"
#include "mxqadmin.h"
#include "mxqd_control.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

/* A node whose mxqd row is older than this counts as down in snapshots
 * read here (list, explain): what the leader uses with mxqd's default
 * heartbeat interval (3 x 10 s + 5 s). Only affects seen_down/seen_up. */
#define HEARTBEAT_TIMEOUT_S 35

#define C MXQ_TABLE_SEP /* between the cells of mxq_table_addf() */
#define EVENTS_DEFAULT_LIMIT 50
#define LIST_REASON_WIDTH 48
#define AGE_LEN 32 /* format_age() buffers */

/* ------------------------------------------------------------------ */
/* arguments                                                           */

enum power_opt {
	P_JSON   = 1 << 0,
	P_HOST   = 1 << 1,
	P_SINCE  = 1 << 2,
	P_LIMIT  = 1 << 3,
	P_REASON = 1 << 4,
	P_GROUP  = 1 << 5,
	P_CONFIG = 1 << 6,
	P_WATCH  = 1 << 7,
};

struct power_args {
	const char *cmd;
	bool json;
	const char *host;          /* --host */
	const char *since;         /* --since */
	double since_epoch;        /* --since parsed (mx_time_parse) */
	uint64_t limit;            /* --limit */
	const char *reason;        /* --reason */
	uint64_t group_id;         /* --group */
	bool have_group;
	const char *config;        /* --power-config */
	double watch_s;            /* --watch[=SECONDS]: refresh every SECONDS, 0 = once */
	char **pos;                /* positional arguments */
	int npos;
};

struct power_cmd {
	const char *name;
	int (*run)(struct mx_db *db, const struct power_args *a);
	unsigned opts;             /* allowed options */
	int min_pos, max_pos;
	const char *usage;
};

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

/* "45s", "12m", "3h05m", "2d04h": an age, two units at most. */
static void format_age(int64_t secs, char *buf, size_t len)
{
	if (secs < 0)
		secs = 0;
	if (secs < 60)
		snprintf(buf, len, "%" PRId64 "s", secs);
	else if (secs < 3600)
		snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", secs / 60, secs % 60);
	else if (secs < 86400)
		snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", secs / 3600, secs / 60 % 60);
	else
		snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", secs / 86400, secs / 3600 % 24);
}

/* TEXT cut to WIDTH characters (bytes), "..." marking a cut. */
static const char *truncated(const char *text, size_t width, char *buf, size_t len)
{
	size_t n = strlen(text);

	if (n <= width || width < 4 || len < width + 1)
		return text;
	snprintf(buf, len, "%.*s...", (int)(width - 3), text);
	return buf;
}

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

static const char *state_name(enum mxq_power_node_state state)
{
	const char *name = mxq_power_state_to_string(state);
	return name ? name : "?";
}

static const char *db_error_text(struct mx_db *db, int r)
{
	return r == -ENOMEM ? "out of memory" : mx_db_error(db);
}

/* The invoking user's login name, for the audit trail. */
static void admin_name(char *buf, size_t len)
{
	struct passwd *pw = getpwuid(getuid());

	if (pw && pw->pw_name && *pw->pw_name)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)getuid());
}

/*
 * "mxqadmin: unknown host 'X' (not in mxq_power; known: a, b, c)" - the
 * known names help with typos and short/long name mix-ups.
 */
static void unknown_host(struct mx_db *db, const char *host)
{
	struct mx_db_result *res = NULL;
	char known[2048] = "";
	size_t shown = 0, len = 0;
	int64_t n;

	n = mx_db_query(db, &res, "SELECT hostname FROM mxq_power ORDER BY hostname", NULL);
	if (n == 0)
		snprintf(known, sizeof(known), "; no host is managed yet");
	if (n > 0) {
		len = (size_t)snprintf(known, sizeof(known), "; known: ");
		while (mx_db_next(res) && shown < 20 && len < sizeof(known))
			len += (size_t)snprintf(known + len, sizeof(known) - len, "%s%s",
						shown++ ? ", " : "", mx_db_str(res, 0));
		if ((int64_t)shown < n && len < sizeof(known))
			snprintf(known + len, sizeof(known) - len, ", ... (%" PRId64 " in all)", n);
	}
	mxq_complain("unknown host '%s' (not in mxq_power%s)", host, known);
	mx_db_result_free(res);
}

/*
 * Load power.conf: PATH when given, else the default file if it exists,
 * else the defaults. *ret_source says which ("defaults" or the path).
 * Errors are printed; returns 0 or a negative errno.
 */
static int load_power_config(const char *path, struct mxq_power_config *cfg,
			     const char **ret_source)
{
	char errbuf[4096];
	int r = mxq_power_config_load(cfg, path, ret_source, errbuf, sizeof(errbuf));

	if (r < 0) {
		/* every error of the file, one line each */
		mxq_complain_lines(errbuf);
		return r;
	}
	if (!*ret_source)
		*ret_source = "built-in defaults";
	return 0;
}

static int read_snapshot(struct mx_db *db, struct mxq_power_db_snapshot **ret)
{
	int r = mxq_power_db_snapshot_read(db, HEARTBEAT_TIMEOUT_S, ret);

	if (r < 0)
		mxq_complain("reading the power snapshot: %s", db_error_text(db, r));
	return r;
}

/* "admin-off,excluded,request-OFF" or "" */
static void node_flags(const struct mxq_power_node *n, const struct mxq_power_host *h,
		       char *buf, size_t len)
{
	char err[8];
	/* the leader never actuates a row whose name breaks the --hostname rule */
	bool bad_name = mx_hostname_check(n->hostname, err, sizeof(err)) < 0;

	snprintf(buf, len, "%s%s%s%s%s%s", bad_name ? "invalid-name," : "",
		 n->admin_off ? "admin-off," : "",
		 n->excluded ? "excluded," : "",
		 h->admin_request && *h->admin_request ? "request-" : "",
		 h->admin_request && *h->admin_request ? h->admin_request : "",
		 h->admin_request && *h->admin_request ? "," : "");
	if (*buf)
		buf[strlen(buf) - 1] = '\0';
}

/* ------------------------------------------------------------------ */
/* list                                                                */

static int list_json(const struct mxq_power_db_snapshot *s)
{
	json_t *doc = json_object(), *arr = json_array();

	if (!doc || !arr) {
		json_decref(doc);
		json_decref(arr);
		return -ENOMEM;
	}
	json_object_set_new(doc, "now", json_integer(s->now));
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		json_t *o = mxq_power_node_json(s, i);
		if (!o) {
			json_decref(arr);
			json_decref(doc);
			return -ENOMEM;
		}
		json_array_append_new(arr, o);
	}
	json_object_set_new(doc, "hosts", arr);
	return mxq_json_print(doc);
}

static int list_table(const struct mxq_power_db_snapshot *s)
{
	struct mxq_table *t;
	char flags[64];
	int r = 0;

	if (s->snap.n_nodes == 0) {
		printf("(no managed hosts: mxq_power is empty)\n");
		return 0;
	}
	t = mxq_table_new("HOST|STATE|SINCE>|JOBS>|SLOTS>|IDLE>|WATTS>|RANK>|TRANSPORT|FLAGS|REASON");
	if (!t)
		return -errno;
	for (size_t i = 0; r == 0 && i < s->snap.n_nodes; i++) {
		const struct mxq_power_node *n = &s->nodes[i];
		const struct mxq_power_host *h = &s->hosts[i];
		char since[AGE_LEN], idle[AGE_LEN], cut[64];
		int64_t is = mxq_power_node_idle_since(n);

		format_age(s->now - n->state_since, since, sizeof(since));
		if (is < 0)
			snprintf(idle, sizeof(idle), "-");
		else
			format_age(s->now - is, idle, sizeof(idle));
		node_flags(n, h, flags, sizeof(flags));
		r = mxq_table_addf(t, "%s" C "%s" C "%s" C "%" PRIu32 C "%" PRIu32 "/%" PRIu32 C "%s" C
				   "%.0f" C "%" PRId32 C "%s/%s" C "%s" C "%s",
				   n->hostname, state_name(n->state), since, n->jobs_running,
				   n->used_slots, h->slots_total, idle, h->current_watts,
				   n->efficiency_rank, dash(h->transport_on), dash(h->transport_off),
				   dash(flags), truncated(h->reason ? h->reason : "", LIST_REASON_WIDTH,
							  cut, sizeof(cut)));
	}
	if (r == 0)
		r = mxq_table_print(t, stdout);
	mxq_table_free(t);
	return r;
}

static int list_once(struct mx_db *db, const struct power_args *a)
{
	struct mxq_power_db_snapshot *s = NULL;
	int r;

	if (read_snapshot(db, &s) < 0)
		return MXQ_EXIT_FAILURE;
	r = a->json ? list_json(s) : list_table(s);
	mxq_power_db_snapshot_free(s);
	if (r < 0)
		return mxq_failure("writing the list: %s", strerror(-r));
	return 0;
}

/*
 * --watch: the list again every watch_s seconds, like watch(1): the screen
 * is cleared (on a terminal) and a title line names the time. SIGINT,
 * SIGTERM or SIGHUP end it with exit status 0; the wait is sigtimedwait,
 * so a signal ends it at once and nothing is left half written.
 */
static int cmd_list(struct mx_db *db, const struct power_args *a)
{
	static const char clear[] = "\033[H\033[2J";
	struct timespec wait;
	sigset_t sigs, old;
	char now[40];
	int r;

	if (a->watch_s <= 0)
		return list_once(db, a);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	wait.tv_sec = (time_t)a->watch_s;
	wait.tv_nsec = 0;
	for (;;) {
		fflush(stdout);
		/* straight to the terminal: not through a filter on stdout */
		if (isatty(STDOUT_FILENO) && write(STDOUT_FILENO, clear, sizeof(clear) - 1) < 0)
			break;
		mx_time_format_rfc3339((double)time(NULL), now, sizeof(now));
		printf("Every %.0fs: mxqadmin power list    %s\n\n", a->watch_s, now);
		r = list_once(db, a);
		if (r != 0)
			return r;
		if (fflush(stdout) != 0)
			return MXQ_EXIT_FAILURE;
		if (sigtimedwait(&sigs, NULL, &wait) > 0)
			break;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* status                                                              */

enum leader_col {
	L_EPOCH, L_HOLDER, L_EXPIRES, L_EXPIRES_IN, L_ACQUIRED, L_RENEWED, L_TICK, L_TICK_AGE,
	L_HASH, L_DRY_RUN, L_SUMMARY, L_POLICY_STATE,
};

static const char leader_sql[] =
	"SELECT epoch, holder,"
	" DATE_FORMAT(lease_expires, '%Y-%m-%d %H:%i:%s'),"
	" TIMESTAMPDIFF(MICROSECOND, NOW(3), lease_expires) DIV 1000,"
	" DATE_FORMAT(acquired_at, '%Y-%m-%d %H:%i:%s'),"
	" DATE_FORMAT(renewed_at, '%Y-%m-%d %H:%i:%s'),"
	" DATE_FORMAT(last_tick_at, '%Y-%m-%d %H:%i:%s'),"
	" TIMESTAMPDIFF(SECOND, last_tick_at, NOW(3)),"
	" config_hash, dry_run, tick_summary, policy_state"
	" FROM mxq_power_leader WHERE id = 1";

/* State counts of the managed hosts: "3 ON, 1 OFF" */
static int state_counts(struct mx_db *db, char *buf, size_t len, json_t *obj)
{
	struct mx_db_result *res = NULL;
	size_t pos = 0;
	int64_t n;

	buf[0] = '\0';
	n = mx_db_query(db, &res, "SELECT state, COUNT(*) FROM mxq_power GROUP BY state"
			" ORDER BY state", NULL);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		if (pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%" PRIu64 " %s",
						pos ? ", " : "", mx_db_u64(res, 1),
						mx_db_str(res, 0));
		if (obj)
			json_object_set_new(obj, mx_db_str(res, 0),
					    json_integer((json_int_t)mx_db_u64(res, 1)));
	}
	if (!*buf)
		snprintf(buf, len, "none managed");
	mx_db_result_free(res);
	return 0;
}

static int cmd_status(struct mx_db *db, const struct power_args *a)
{
	struct mx_db_result *res = NULL;
	struct mxq_power_config cfg;
	const char *source = NULL;
	char counts[512], local_hash[24] = "";
	json_t *nodes = NULL;
	bool have_local = false;
	int64_t n;
	int r, rc = MXQ_EXIT_FAILURE;

	/* the local config, to tell whether the leader runs the same one */
	if (a->config || access(MXQ_POWER_CONFIG_DEFAULT_PATH, F_OK) == 0) {
		if (load_power_config(a->config, &cfg, &source) < 0)
			return MXQ_EXIT_FAILURE;
		snprintf(local_hash, sizeof(local_hash), "%016" PRIx64,
			 mxq_power_config_hash(&cfg));
		mxq_power_config_done(&cfg);
		have_local = true;
	}
	if (a->json)
		nodes = json_object();
	r = state_counts(db, counts, sizeof(counts), nodes);
	if (r < 0) {
		mxq_complain("reading mxq_power: %s", db_error_text(db, r));
		goto out;
	}
	n = mx_db_query(db, &res, leader_sql, NULL);
	if (n < 0) {
		mxq_complain("reading mxq_power_leader: %s", mx_db_error(db));
		goto out;
	}
	if (!mx_db_next(res) || mx_db_str(res, L_HOLDER)[0] == '\0') {
		if (a->json) {
			json_t *doc = nodes ? json_pack("{s:n, s:O}", "leader", "nodes", nodes) : NULL;
			if (mxq_json_print(doc) < 0)
				goto out;
		} else {
			printf("leader:      none (no power manager has held the lease yet)\n"
			       "nodes:       %s\n", counts);
		}
		rc = 0;
		goto out;
	}

	int64_t expires_in_ms = mx_db_i64(res, L_EXPIRES_IN);
	bool valid = expires_in_ms > 0;
	const char *hash = mx_db_str(res, L_HASH);

	if (a->json) {
		json_t *leader = json_object(), *doc = json_object();
		if (!leader || !doc) {
			json_decref(leader);
			json_decref(doc);
			goto out;
		}
		json_object_set_new(leader, "holder", json_string(mx_db_str(res, L_HOLDER)));
		json_object_set_new(leader, "epoch", json_integer(mx_db_i64(res, L_EPOCH)));
		json_object_set_new(leader, "lease_expires", json_string(mx_db_str(res, L_EXPIRES)));
		json_object_set_new(leader, "lease_valid", json_boolean(valid));
		json_object_set_new(leader, "lease_expires_in_ms", json_integer(expires_in_ms));
		json_object_set_new(leader, "acquired_at", mxq_json_text(mx_db_str(res, L_ACQUIRED)));
		json_object_set_new(leader, "renewed_at", mxq_json_text(mx_db_str(res, L_RENEWED)));
		json_object_set_new(leader, "last_tick_at", mxq_json_text(mx_db_str(res, L_TICK)));
		json_object_set_new(leader, "last_tick_age_s", mx_db_is_null(res, L_TICK_AGE) ?
				    json_null() : json_integer(mx_db_i64(res, L_TICK_AGE)));
		json_object_set_new(leader, "config_hash", json_string(hash));
		json_object_set_new(leader, "dry_run", json_boolean(mx_db_i64(res, L_DRY_RUN)));
		json_object_set_new(leader, "tick_summary", json_string(mx_db_str(res, L_SUMMARY)));
		json_object_set_new(leader, "policy_state", json_string(mx_db_str(res, L_POLICY_STATE)));
		json_object_set_new(doc, "leader", leader);
		json_object_set_new(doc, "nodes", nodes);
		nodes = NULL;
		if (have_local) {
			json_object_set_new(doc, "local_config", json_string(source));
			json_object_set_new(doc, "local_config_hash", json_string(local_hash));
			json_object_set_new(doc, "config_matches", json_boolean(!strcmp(hash, local_hash)));
		}
		if (mxq_json_print(doc) < 0)
			goto out;
		rc = 0;
		goto out;
	}

	char left[AGE_LEN], tick_age[AGE_LEN];
	format_age((valid ? expires_in_ms : -expires_in_ms) / 1000, left, sizeof(left));
	printf("leader:      %s\n", mx_db_str(res, L_HOLDER));
	printf("epoch:       %" PRId64 "\n", mx_db_i64(res, L_EPOCH));
	printf("lease:       expires %s (%s %s)%s\n", mx_db_str(res, L_EXPIRES),
	       valid ? "in" : "EXPIRED", left, valid ? "" : " ago: no leader is acting now");
	printf("acquired:    %s, renewed %s\n", dash(mx_db_str(res, L_ACQUIRED)),
	       dash(mx_db_str(res, L_RENEWED)));
	if (mx_db_is_null(res, L_TICK)) {
		printf("last tick:   never\n");
	} else {
		format_age(mx_db_i64(res, L_TICK_AGE), tick_age, sizeof(tick_age));
		printf("last tick:   %s (%s ago)\n", mx_db_str(res, L_TICK), tick_age);
	}
	printf("config hash: %s%s\n", dash(hash),
	       !have_local ? "" : !strcmp(hash, local_hash) ? " (same as the local config)" :
	       " (DIFFERS from the local config)");
	if (have_local)
		printf("local:       %s, hash %s\n", source, local_hash);
	printf("dry run:     %s\n", mx_db_i64(res, L_DRY_RUN) ? "yes (the leader decides, but acts on nothing)" : "no");
	printf("tick:        %s\n", dash(mx_db_str(res, L_SUMMARY)));
	printf("nodes:       %s\n", counts);
	rc = 0;
out:
	json_decref(nodes);
	mx_db_result_free(res);
	return rc;
}

/* ------------------------------------------------------------------ */
/* events                                                              */

enum event_col { E_ID, E_TIME, E_UNIX, E_HOST, E_FROM, E_TO, E_REASON, E_EPOCH, E_ACTOR, E_HOST_W };

/* The newest LIMIT matching events, oldest first; the last column is the
 * width of the longest host name among them (for the table). */
static const char events_sql[] =
	"SELECT e.*, MAX(CHAR_LENGTH(hostname)) OVER () FROM (SELECT event_id,"
	"   DATE_FORMAT(event_time, '%Y-%m-%d %H:%i:%s'), UNIX_TIMESTAMP(event_time),"
	"   hostname, from_state, to_state, reason, epoch, actor"
	"   FROM mxq_power_event"
	"   WHERE (? IS NULL OR hostname = ?)"
	"     AND (? = 0 OR event_time >= FROM_UNIXTIME(?))"
	"   ORDER BY event_time DESC, event_id DESC LIMIT ?) e"
	" ORDER BY 3, 1";

static json_t *event_json(const struct mx_db_result *res)
{
	json_t *o = json_pack("{s:I, s:n, s:n, s:s, s:s, s:s, s:s, s:I, s:s}",
			 "event_id", (json_int_t)mx_db_i64(res, E_ID),
			 "time", "time_unix",
			 "hostname", mx_db_str(res, E_HOST),
			 "from_state", mx_db_str(res, E_FROM),
			 "to_state", mx_db_str(res, E_TO),
			 "reason", mx_db_str(res, E_REASON),
			 "epoch", (json_int_t)mx_db_i64(res, E_EPOCH),
			 "actor", mx_db_str(res, E_ACTOR));
	if (o && mxq_json_set_time(o, "time", mx_db_double(res, E_UNIX)) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static int cmd_events(struct mx_db *db, const struct power_args *a)
{
	struct mx_db_result *res = NULL;
	struct mxq_table *t;
	int64_t n;
	uint64_t limit = a->limit ? a->limit : EVENTS_DEFAULT_LIMIT;
	json_t *arr = NULL;
	int r, rc = MXQ_EXIT_FAILURE;

	n = mx_db_query(db, &res, events_sql, "ssidU", a->host, a->host,
			a->since ? 1 : 0, a->since_epoch, limit);
	if (n < 0)
		return mxq_failure("reading mxq_power_event: %s", mx_db_error(db));
	if (a->json) {
		arr = json_array();
		if (!arr)
			goto out;
		while (mx_db_next(res)) {
			json_t *o = event_json(res);
			if (!o)
				goto out;
			json_array_append_new(arr, o);
		}
		rc = mxq_json_print(arr) < 0 ? MXQ_EXIT_FAILURE : MXQ_EXIT_OK;
		arr = NULL;
		goto out;
	}
	if (n == 0) {
		printf("(no events)\n");
		rc = 0;
		goto out;
	}
	t = mxq_table_new("TIME|HOST|FROM||TO|ACTOR|EPOCH>|REASON");
	r = t ? 0 : -ENOMEM;
	while (r == 0 && mx_db_next(res))
		r = mxq_table_addf(t, "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "->"
				   MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%" PRId64
				   MXQ_TABLE_SEP "%s",
				   mx_db_str(res, E_TIME), mx_db_str(res, E_HOST), mx_db_str(res, E_FROM),
				   mx_db_str(res, E_TO), mx_db_str(res, E_ACTOR), mx_db_i64(res, E_EPOCH),
				   mx_db_str(res, E_REASON));
	if (r == 0)
		r = mxq_table_print(t, stdout);
	mxq_table_free(t);
	if (r < 0)
		mxq_complain("writing the events: %s", strerror(-r));
	else
		rc = 0;
out:
	json_decref(arr);
	mx_db_result_free(res);
	return rc;
}

/* ------------------------------------------------------------------ */
/* admin actions                                                       */

/* What "nothing to do" means for each action. */
static void print_already(struct mx_db *db, const char *action, const char *host)
{
	struct mx_db_result *res = NULL;
	const char *state = "?";

	if (mx_db_query(db, &res, "SELECT state FROM mxq_power WHERE hostname = ?", "s", host) > 0 &&
	    mx_db_next(res))
		state = mx_db_str(res, 0);
	if (!strcmp(action, "clear"))
		printf("%s: not FAILED (state %s): nothing to clear\n", host, state);
	else if (!strcmp(action, "exclude"))
		printf("%s: already excluded (state %s): nothing changed\n", host, state);
	else if (!strcmp(action, "include"))
		printf("%s: not excluded (state %s): nothing changed\n", host, state);
	else
		printf("%s: already %s or requested %s (state %s): nothing changed\n", host, action,
		       action, state);
	mx_db_result_free(res);
}

static int cmd_admin(struct mx_db *db, const struct power_args *a)
{
	const char *host = a->pos[0];
	char who[256];
	int r;

	admin_name(who, sizeof(who));
	r = mxq_power_db_admin(db, host, a->cmd, a->reason ? a->reason : "", who);
	if (r == -ENOENT) {
		unknown_host(db, host);
		return MXQ_EXIT_FAILURE;
	}
	if (r == -EALREADY) {
		print_already(db, a->cmd, host);
		return 0;
	}
	if (r == -EBUSY)
		return mxq_failure("power %s %s: the host is FAILED; clear it first"
			" ('mxqadmin power clear %s')", a->cmd, host, host);
	if (r < 0) {
		return mxq_failure("power %s %s: %s", a->cmd, host,
			r == -EINVAL ? "refused (invalid action or argument)" : db_error_text(db, r));
	}
	if (!strcmp(a->cmd, "clear"))
		printf("%s: cleared (FAILED -> UNKNOWN, failure count reset)\n", host);
	else if (!strcmp(a->cmd, "exclude"))
		printf("%s: excluded: the power manager leaves it alone\n", host);
	else if (!strcmp(a->cmd, "include"))
		printf("%s: included: the power manager manages it again\n", host);
	else
		printf("%s: power %s requested; the power manager carries it out on its next tick\n",
		       host, a->cmd);
	return 0;
}

/* ------------------------------------------------------------------ */
/* explain HOST                                                        */

static int explain_host(struct mx_db *db, const struct power_args *a)
{
	struct mxq_power_db_snapshot *s = NULL;
	const char *host = a->pos[0];
	long i;
	int rc = MXQ_EXIT_FAILURE;

	if (read_snapshot(db, &s) < 0)
		return MXQ_EXIT_FAILURE;
	i = mxq_power_db_snapshot_find(s, host);
	if (i < 0) {
		unknown_host(db, host);
		goto out;
	}
	const struct mxq_power_node *n = &s->nodes[i];
	const struct mxq_power_host *h = &s->hosts[i];
	int64_t is = mxq_power_node_idle_since(n);

	if (a->json) {
		json_t *o = mxq_power_node_json(s, (size_t)i);
		if (!o)
			goto out;
		json_object_set_new(o, "node_ack", mxq_json_text(h->node_ack));
		json_object_set_new(o, "daemon_status", h->has_daemon ?
				    json_string(dash(mxq_daemon_status_to_name(h->daemon_status))) :
				    json_null());
		json_object_set_new(o, "heartbeat_age_s", h->has_daemon ?
				    json_integer(s->now - h->daemon_mtime) : json_null());
		json_object_set_new(o, "starts_no_jobs", n->closed ? mxq_json_text(n->closed) :
				    json_null());
		json_object_set_new(o, "writer_epoch", json_integer((json_int_t)h->writer_epoch));
		rc = mxq_json_print(o) < 0 ? MXQ_EXIT_FAILURE : MXQ_EXIT_OK;
		goto out;
	}

	char age[AGE_LEN], idle[AGE_LEN];
	format_age(s->now - n->state_since, age, sizeof(age));
	printf("%s: %s for %s\n", n->hostname, state_name(n->state), age);
	{
		char err[256];
		if (mx_hostname_check(n->hostname, err, sizeof(err)) < 0)
			printf("  invalid host name: never actuated by the power manager: %s\n", err);
	}
	printf("  leader's explanation: %s\n", h->explanation && *h->explanation ?
	       h->explanation : "(none stored yet)");
	printf("  reason of the last decision: %s\n", dash(h->reason));
	printf("  jobs running: %" PRIu32 ", slots %" PRIu32 "/%" PRIu32 "\n", n->jobs_running,
	       n->used_slots, h->slots_total);
	if (is >= 0) {
		format_age(s->now - is, idle, sizeof(idle));
		printf("  idle for: %s\n", idle);
	}
	if (h->has_daemon) {
		const char *ds = mxq_daemon_status_to_name(h->daemon_status);
		format_age(s->now - h->daemon_mtime, age, sizeof(age));
		printf("  mxqd: %s, last heartbeat %s ago\n", ds ? ds : "?", age);
		if (n->closed)
			printf("  starts no new jobs: %s (no capacity for the power manager)\n",
			       n->closed);
	} else {
		printf("  mxqd: never registered (capabilities unknown: never woken for demand)\n");
	}
	printf("  admin off: %s; excluded: %s\n", n->admin_off ? "yes (never woken automatically)" :
	       "no", n->excluded ? "yes (the power manager leaves it alone)" : "no");
	if (h->admin_request && *h->admin_request)
		printf("  admin request: %s (%s), not yet carried out\n", h->admin_request,
		       dash(h->admin_request_reason));
	printf("  failures: %" PRIu32 "%s%s\n", n->failure_count,
	       n->failure_reason && *n->failure_reason ? ", last: " : "",
	       n->failure_reason ? n->failure_reason : "");
	if (mxq_power_state_needs_admin(n->state))
		printf("  -> waits for 'mxqadmin power clear %s'\n", n->hostname);
	printf("  transport: on %s, off %s; efficiency rank %" PRId32 "; boots today %" PRIu32 "\n",
	       dash(h->transport_on), dash(h->transport_off), n->efficiency_rank, n->cycles_today);
	rc = 0;
out:
	mxq_power_db_snapshot_free(s);
	return rc;
}

/* ------------------------------------------------------------------ */
/* explain --group                                                     */

static bool same_words(const struct keywordset *x, const struct keywordset *y)
{
	char *a = keywordset_to_string(x), *b = keywordset_to_string(y);
	bool same = a && b && !strcmp(a, b);

	free(a);
	free(b);
	return same;
}

static bool same_expr(const struct mxq_expr *x, const struct mxq_expr *y)
{
	if (!x || !y)
		return x == y;
	return !strcmp(mxq_expr_text(x), mxq_expr_text(y));
}

/* Same requirement signature as far as qualification and sizing go. */
static bool same_requirements(const struct mxq_group_reqs *x, const struct mxq_group_reqs *y)
{
	return x->threads == y->threads && x->memory_mib == y->memory_mib &&
	       x->time_min == y->time_min && x->gpus == y->gpus &&
	       x->tmpdir_mib == y->tmpdir_mib &&
	       x->prerequisites_invalid == y->prerequisites_invalid &&
	       same_expr(x->prerequisites, y->prerequisites) &&
	       same_words(x->tags, y->tags) && same_words(x->whitelist, y->whitelist) &&
	       same_words(x->blacklist, y->blacklist);
}

/* The demand entry holding GROUP's queued jobs, or -1. */
static long find_demand(const struct mxq_power_db_snapshot *s, const struct mxqadmin_group *g)
{
	for (size_t d = 0; d < s->snap.n_demand; d++)
		if (s->demand_group_ids && s->demand_group_ids[d] == g->id)
			return (long)d;
	for (size_t d = 0; d < s->snap.n_demand; d++)
		if (s->demand[d].max_per_node == g->max_per_node &&
		    same_requirements(&s->reqs[d], &g->reqs))
			return (long)d;
	return -1;
}

/* The label the policy uses for demand D (as in its reasons). */
static const char *demand_label(const struct mxq_power_db_snapshot *s, size_t d, char *buf,
				size_t len)
{
	if (s->demand[d].label && *s->demand[d].label)
		return s->demand[d].label;
	snprintf(buf, len, "signature #%zu", d);
	return buf;
}

/* Does action A serve demand LABEL? The policy's wake and reclaim reasons
 * name the demand as "of LABEL (needs ...)". */
static bool action_serves(const struct mxq_power_action *act, const char *label)
{
	char needle[320];

	if (act->kind != MXQ_POWER_ACTION_WAKE && act->kind != MXQ_POWER_ACTION_CANCEL_DRAIN)
		return false;
	snprintf(needle, sizeof(needle), "of %s (", label);
	return act->reason && strstr(act->reason, needle);
}

struct group_view {
	const struct mxqadmin_group *g;
	const struct mxq_power_db_snapshot *s;
	const struct mxq_power_plan *plan;
	const char *config_source;
	const char *state_note;       /* about the policy state used, or NULL */
	long d;                       /* demand entry, -1 = none */
	char label[128];
	bool *qualified;              /* per node */
	enum mxq_qual_rule *rule;     /* per node */
	size_t n_qualified;
};

static const char *node_explanation(const struct group_view *v, size_t i)
{
	if (i < v->plan->n_explanations && v->plan->explanations[i].text)
		return v->plan->explanations[i].text;
	return "";
}

static json_t *outcome_json(const struct group_view *v)
{
	const struct mxq_power_demand_outcome *o = &v->plan->outcomes[v->d];

	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "label", v->label,
			 "jobs_pending", (json_int_t)v->s->demand[v->d].jobs_pending,
			 "on_capacity", (json_int_t)o->on_capacity,
			 "freeing_soon", (json_int_t)o->freeing_soon,
			 "reclaimed", (json_int_t)o->reclaimed,
			 "woken", (json_int_t)o->woken,
			 "unplaced", (json_int_t)o->unplaced);
}

static int explain_group_json(const struct group_view *v)
{
	const struct mxq_power_db_snapshot *s = v->s;
	json_t *doc = json_object(), *hosts = json_array(), *wake = json_array(),
	       *actions = json_array();

	if (!doc || !hosts || !wake || !actions)
		goto nomem;
	json_object_set_new(doc, "group", json_pack("{s:I, s:s, s:s, s:I, s:I}",
		"group_id", (json_int_t)v->g->id, "group_name", v->g->name,
		"user_name", v->g->user_name, "group_jobs_inq", (json_int_t)v->g->jobs_inq,
		"group_jobs_running", (json_int_t)v->g->jobs_running));
	json_object_set_new(doc, "demand", v->d >= 0 ? outcome_json(v) : json_null());
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		const struct mxq_power_node *n = &s->nodes[i];
		json_t *h = json_object();
		if (!h)
			goto nomem;
		json_object_set_new(h, "hostname", json_string(n->hostname));
		json_object_set_new(h, "state", json_string(state_name(n->state)));
		json_object_set_new(h, "registered", json_boolean(n->caps != NULL));
		json_object_set_new(h, "qualified", n->caps ? json_boolean(v->qualified[i]) :
				    json_null());
		json_object_set_new(h, "rule", n->caps ?
				    json_string(mxq_qual_rule_to_string(v->rule[i])) : json_null());
		json_object_set_new(h, "explanation", json_string(node_explanation(v, i)));
		json_array_append_new(hosts, h);
	}
	for (size_t k = 0; k < v->plan->n_actions; k++) {
		const struct mxq_power_action *act = &v->plan->actions[k];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "hostname", act->hostname,
				      "action", mxq_power_action_to_string(act->kind),
				      "from", state_name(act->from), "to", state_name(act->to),
				      "reason", act->reason ? act->reason : "");
		if (!o)
			goto nomem;
		if (v->d >= 0 && action_serves(act, v->label))
			json_array_append(wake, o);
		json_array_append_new(actions, o);
	}
	json_object_set_new(doc, "hosts", hosts);
	json_object_set_new(doc, "serving_actions", wake);
	json_object_set_new(doc, "actions", actions);
	json_object_set_new(doc, "summary", json_string(v->plan->summary ? v->plan->summary : ""));
	json_object_set_new(doc, "breaker_open", json_boolean(v->plan->breaker_open));
	json_object_set_new(doc, "config", json_string(v->config_source));
	json_object_set_new(doc, "dry_run", json_true());
	return mxq_json_print(doc);
nomem:
	json_decref(doc);
	json_decref(hosts);
	json_decref(wake);
	json_decref(actions);
	return -ENOMEM;
}

static void print_outcome(const struct group_view *v)
{
	const struct mxq_power_demand *dm = &v->s->demand[v->d];
	const struct mxq_power_demand_outcome *o = &v->plan->outcomes[v->d];

	printf("pending demand: %s, %" PRIu64 " queued job%s with these requirements%s\n",
	       v->label, dm->jobs_pending, dm->jobs_pending == 1 ? "" : "s",
	       dm->jobs_pending != v->g->jobs_inq ? " (shared with other groups of the same"
						    " requirements)" : "");
	printf("  absorbed by powered-on capacity:    %" PRIu64 "\n", o->on_capacity);
	printf("  absorbed by capacity freeing soon:  %" PRIu64 "\n", o->freeing_soon);
	printf("  placed on draining nodes taken back: %" PRIu64 "\n", o->reclaimed);
	printf("  placed on nodes that would be woken: %" PRIu64 "\n", o->woken);
	printf("  left unplaced:                      %" PRIu64 "\n", o->unplaced);
}

/* The hosts as a table; a qualified host's policy view on a row of its own
 * under it. 0 or negative errno. */
static int print_hosts(const struct group_view *v)
{
	const struct mxq_power_db_snapshot *s = v->s;
	struct mxq_table *t = mxq_table_new("HOST|STATE|RESULT");
	int r = t ? 0 : -ENOMEM;

	printf("hosts (%zu managed, %zu qualified):\n", s->snap.n_nodes, v->n_qualified);
	for (size_t i = 0; r == 0 && i < s->snap.n_nodes; i++) {
		const struct mxq_power_node *n = &s->nodes[i];

		if (!n->caps)
			r = mxq_table_addf(t, "%s" C "%s" C "unknown: never registered, capabilities"
					   " unknown", n->hostname, state_name(n->state));
		else if (v->qualified[i])
			r = mxq_table_addf(t, "%s" C "%s" C "qualified", n->hostname,
					   state_name(n->state));
		else
			r = mxq_table_addf(t, "%s" C "%s" C "%s: %s", n->hostname,
					   state_name(n->state), mxq_qual_rule_to_string(v->rule[i]),
					   mxq_qual_rule_describe(v->rule[i]));
		if (r == 0 && n->caps && v->qualified[i])
			r = mxq_table_addf(t, "" C "" C "policy: %s", node_explanation(v, i));
	}
	if (r == 0)
		r = mxq_table_print(t, stdout);
	mxq_table_free(t);
	return r;
}

/* Why qualified nodes that could have served were not used. N_SERVING:
 * how many actions of the plan serve this demand. */
static void print_why_not(const struct group_view *v, size_t n_serving)
{
	const struct mxq_power_db_snapshot *s = v->s;
	size_t shown = 0;

	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		const struct mxq_power_node *n = &s->nodes[i];
		if (!n->caps || !v->qualified[i] || mxq_power_state_counts_as_capacity(n->state))
			continue;
		bool woken = false;
		for (size_t k = 0; k < v->plan->n_actions; k++)
			if (v->plan->actions[k].node_index == i &&
			    action_serves(&v->plan->actions[k], v->label))
				woken = true;
		if (woken)
			continue;
		if (!shown++)
			printf("qualified nodes not used:\n");
		printf("  %s (%s): %s%s\n", n->hostname, state_name(n->state),
		       n->excluded ? "excluded by admin; " : "", node_explanation(v, i));
	}
	if (v->plan->breaker_open)
		printf("the breaker is open: no automatic wakes until it closes\n");
	if (!shown && !v->plan->breaker_open)
		printf(n_serving ? "no further qualified node to wake: the rest waits for room on"
				   " the nodes above\n" :
				   "no qualified node is OFF or otherwise available to wake\n");
}

/* 0 or negative errno (nothing printed after a table that failed). */
static int explain_group_text(const struct group_view *v)
{
	const struct mxqadmin_group *g = v->g;
	size_t n_serving = 0;
	int r;

	printf("group %" PRIu64 " '%s' of %s: %" PRIu64 " queued, %" PRIu64 " running\n", g->id,
	       g->name, g->user_name, g->jobs_inq, g->jobs_running);
	r = print_hosts(v);
	if (r < 0)
		return r;
	if (v->d < 0) {
		printf("pending demand: none for this group (%s), so nothing would be woken for it\n",
		       g->jobs_inq ? "its jobs are not in the pending demand: group cancelled or "
				     "no longer taking jobs?" : "no queued jobs");
	} else {
		const struct mxq_power_demand_outcome *o = &v->plan->outcomes[v->d];
		print_outcome(v);
		for (size_t k = 0; k < v->plan->n_actions; k++) {
			const struct mxq_power_action *act = &v->plan->actions[k];
			if (!action_serves(act, v->label))
				continue;
			if (!n_serving++)
				printf("would act for this demand:\n");
			printf("  %s %s (%s -> %s): %s\n",
			       act->kind == MXQ_POWER_ACTION_WAKE ? "wake" : "keep (cancel drain)",
			       act->hostname, state_name(act->from), state_name(act->to),
			       act->reason ? act->reason : "");
		}
		if (!n_serving) {
			if (o->unplaced == 0)
				printf("would wake: nothing, powered-on capacity takes every job\n");
			else if (v->n_qualified == 0)
				printf("would wake: nothing, no managed host qualifies for this group\n");
			else
				printf("would wake: nothing, although %" PRIu64 " job%s stay unplaced\n",
				       o->unplaced, o->unplaced == 1 ? "" : "s");
		}
		if (o->unplaced > 0 && v->n_qualified > 0)
			print_why_not(v, n_serving);
	}
	printf("plan: %s\n", v->plan->summary ? v->plan->summary : "-");
	if (v->state_note)
		printf("note: %s\n", v->state_note);
	printf("(computed here with %s; nothing was done. The leader decides on its own tick.)\n",
	       v->config_source);
	return 0;
}

static int explain_group(struct mx_db *db, const struct power_args *a)
{
	struct mxqadmin_group g = { 0 };
	struct mxq_power_config cfg;
	struct mxq_power_db_snapshot *s = NULL;
	struct mxq_power_state state = { 0 };
	struct mxq_power_plan plan = { 0 };
	struct group_view v = { .d = -1 };
	bool have_cfg = false, have_plan = false;
	int r, rc = MXQ_EXIT_FAILURE;

	r = mxqadmin_group_load(db, a->group_id, &g);
	if (r == -ENOENT)
		return mxq_failure("unknown group %" PRIu64, a->group_id);
	if (r < 0)
		return mxq_failure("reading group %" PRIu64 ": %s", a->group_id,
			db_error_text(db, r));
	if (load_power_config(a->config, &cfg, &v.config_source) < 0)
		goto out;
	have_cfg = true;
	if (read_snapshot(db, &s) < 0)
		goto out;
	r = mxq_power_state_load(db, &state);
	if (r < 0) {
		state = (struct mxq_power_state){ 0 };
		v.state_note = "the leader's policy state could not be read: fresh rate-limit "
			       "buckets and a closed breaker assumed";
	}
	r = mxq_power_decide(&s->snap, s->now, &cfg, &state, &plan);
	if (r < 0) {
		mxq_complain("the policy failed: %s", strerror(-r));
		goto out;
	}
	have_plan = true;

	v.g = &g;
	v.s = s;
	v.plan = &plan;
	v.qualified = calloc(s->snap.n_nodes + 1, sizeof(*v.qualified));
	v.rule = calloc(s->snap.n_nodes + 1, sizeof(*v.rule));
	if (!v.qualified || !v.rule) {
		mxq_complain("out of memory");
		goto out;
	}
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		if (!s->nodes[i].caps)
			continue;
		v.qualified[i] = server_is_qualified(s->nodes[i].caps, &g.reqs, &v.rule[i]);
		v.n_qualified += v.qualified[i];
	}
	v.d = find_demand(s, &g);
	if (v.d >= 0) {
		char buf[64];
		snprintf(v.label, sizeof(v.label), "%s",
			 demand_label(s, (size_t)v.d, buf, sizeof(buf)));
	}

	if (a->json) {
		if (explain_group_json(&v) < 0) {
			mxq_complain("writing the explanation failed");
			goto out;
		}
	} else {
		if ((r = explain_group_text(&v)) < 0) {
			mxq_complain("writing the explanation: %s", strerror(-r));
			goto out;
		}
	}
	rc = 0;
out:
	free(v.qualified);
	free(v.rule);
	if (have_plan)
		mxq_power_plan_free(&plan);
	mxq_power_db_snapshot_free(s);
	if (have_cfg)
		mxq_power_config_done(&cfg);
	mxqadmin_group_done(&g);
	return rc;
}

static int cmd_explain(struct mx_db *db, const struct power_args *a)
{
	return a->have_group ? explain_group(db, a) : explain_host(db, a);
}

static int cmd_set(struct mx_db *db, const struct power_args *a)
{
	return mxqadmin_power_set(db, a->npos, a->pos);
}

/* ------------------------------------------------------------------ */
/* dispatch                                                            */

static const struct power_cmd power_cmds[] = {
	{ "list",    cmd_list,    P_JSON | P_WATCH, 0, 0, "list [--json] [--watch[=SECONDS]]" },
	{ "status",  cmd_status,  P_JSON | P_CONFIG, 0, 0, "status [--json] [--power-config FILE]" },
	{ "events",  cmd_events,  P_JSON | P_HOST | P_SINCE | P_LIMIT, 0, 0,
	  "events [--host HOST] [--since T] [--limit N] [--json]" },
	{ "explain", cmd_explain, P_JSON | P_GROUP | P_CONFIG, 0, 1,
	  "explain HOST [--json] | explain --group ID [--power-config FILE] [--json]" },
	{ "clear",   cmd_admin,   P_REASON, 1, 1, "clear HOST [--reason R]" },
	{ "on",      cmd_admin,   P_REASON, 1, 1, "on HOST --reason R" },
	{ "off",     cmd_admin,   P_REASON, 1, 1, "off HOST --reason R" },
	{ "exclude", cmd_admin,   P_REASON, 1, 1, "exclude HOST [--reason R]" },
	{ "include", cmd_admin,   P_REASON, 1, 1, "include HOST [--reason R]" },
	{ "set",     cmd_set,     0, 2, 32, "set HOST KEY=VALUE... (transport_on transport_off bmc mac broadcast rank class ipmi_workarounds ssh redfish_system redfish_ca redfish_tls redfish_auth)" },
};

static void power_usage(FILE *f)
{
	fprintf(f, "usage: mxqadmin [-M FILE] [-S GROUP] power COMMAND ...\n");
	for (size_t i = 0; i < MX_ARRAY_SIZE(power_cmds); i++)
		fprintf(f, "  power %s\n", power_cmds[i].usage);
	fprintf(f, "  power usage|job|jobs|metrics ...: job and node energy (see power usage --help)\n");
	fprintf(f, "T: " MX_TIME_FORMS "\n");
}

static const struct {
	const char *name;
	unsigned bit;
} opt_names[] = {
	{ "--json", P_JSON }, { "--host", P_HOST }, { "--since", P_SINCE },
	{ "--limit", P_LIMIT }, { "--reason", P_REASON }, { "--group", P_GROUP },
	{ "--power-config", P_CONFIG }, { "--watch", P_WATCH },
};

/* Parse the options of CMD; returns -1 to go on, else the exit status. */
static int parse_power_args(int argc, char **argv, const struct power_cmd *cmd,
			    struct power_args *a)
{
	static const struct option opts[] = {
		{ "json",         no_argument,       NULL, 'j' },
		{ "host",         required_argument, NULL, 'H' },
		{ "since",        required_argument, NULL, 's' },
		{ "limit",        required_argument, NULL, 'n' },
		{ "reason",       required_argument, NULL, 'r' },
		{ "group",        required_argument, NULL, 'g' },
		{ "power-config", required_argument, NULL, 'c' },
		{ "watch",        optional_argument, NULL, 'w' },
		{ "help",         no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned seen = 0;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jH:s:n:r:g:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': a->json = true; seen |= P_JSON; break;
		case 'H': a->host = optarg; seen |= P_HOST; break;
		case 's':
			if (mx_time_parse(optarg, (double)time(NULL), &a->since_epoch) < 0)
				return mxq_usage_error("power %s: --since: '%s' is not a time (%s)",
					cmd->name, optarg, MX_TIME_FORMS);
			a->since = optarg;
			seen |= P_SINCE;
			break;
		case 'n':
			if (mx_strtou64(optarg, &a->limit) < 0 || a->limit == 0)
				return mxq_usage_error("power %s: invalid --limit '%s'"
					" (a positive number)", cmd->name, optarg);
			seen |= P_LIMIT;
			break;
		case 'r': a->reason = optarg; seen |= P_REASON; break;
		case 'g':
			if (mxq_parse_id("group", optarg, &a->group_id) < 0)
				return MXQ_EXIT_USAGE;
			a->have_group = true;
			seen |= P_GROUP;
			break;
		case 'c': a->config = optarg; seen |= P_CONFIG; break;
		case 'w': {
			uint64_t secs = 2;
			if (optarg && (mx_parse_duration_s(optarg, &secs) < 0 || secs == 0))
				return mxq_usage_error("power %s: --watch: '%s' is not a duration"
					" (e.g. 5, 10s, 1m)", cmd->name, optarg);
			a->watch_s = (double)secs;
			seen |= P_WATCH;
			break;
		}
		case 'h':
			printf("usage: mxqadmin power %s\n", cmd->usage);
			return 0;
		case ':':
			return mxq_usage_error("power %s: option '%s' needs an argument",
				cmd->name, argv[optind - 1]);
		default:
			return mxq_usage_error("power %s: unknown option '%s'"
				" (try 'mxqadmin power --help')", cmd->name, argv[optind - 1]);
		}
	}
	for (size_t i = 0; i < MX_ARRAY_SIZE(opt_names); i++)
		if ((seen & opt_names[i].bit) && !(cmd->opts & opt_names[i].bit))
			return mxq_usage_error("power %s does not take %s (usage: power %s)",
				cmd->name, opt_names[i].name, cmd->usage);
	a->pos = argv + optind;
	a->npos = argc - optind;
	if (a->npos < cmd->min_pos || a->npos > cmd->max_pos) {
		return mxq_usage_error("power %s: %s (usage: power %s)", cmd->name,
			a->npos < cmd->min_pos ? "missing HOST" : "too many arguments", cmd->usage);
	}
	if (cmd->run == cmd_explain && (a->npos == 1) == a->have_group)
		return mxq_usage_error("power explain needs either HOST or --group ID"
			" (usage: power %s)", cmd->usage);
	if ((!strcmp(cmd->name, "on") || !strcmp(cmd->name, "off")) &&
	    (!a->reason || !*a->reason))
		return mxq_usage_error("power %s needs --reason R (it is recorded for other"
			" admins)", cmd->name);
	if (a->config && (seen & P_CONFIG) && !*a->config)
		return mxq_usage_error("power %s: empty --power-config", cmd->name);
	return -1;
}

int mxqadmin_power_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt)
{
	const struct power_cmd *cmd = NULL;
	struct power_args a = { 0 };
	struct mx_db *db = NULL;
	int r;

	if (argc < 2)
		return mxq_usage_error("power needs a command (try 'mxqadmin power --help')");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		power_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "usage") || !strcmp(argv[1], "job") || !strcmp(argv[1], "jobs") ||
	    !strcmp(argv[1], "metrics"))
		return mxqadmin_energy_main(argc - 1, argv + 1, dbopt); /* mxqadmin_energy.c */
	for (size_t i = 0; i < MX_ARRAY_SIZE(power_cmds); i++)
		if (!strcmp(argv[1], power_cmds[i].name))
			cmd = &power_cmds[i];
	if (!cmd)
		return mxq_usage_error("power: unknown command '%s' (try 'mxqadmin power"
			" --help')", argv[1]);
	a.cmd = cmd->name;
	r = parse_power_args(argc - 1, argv + 1, cmd, &a);
	if (r >= 0)
		return r;
	if (cmd->run == cmd_admin || cmd->run == cmd_set) {  /* they write: admins only */
		char what[64];

		snprintf(what, sizeof(what), "power %s", cmd->name);
		if (mxqadmin_connect_admin(&db, dbopt, what) < 0)
			return MXQ_EXIT_FAILURE;
	} else if (mxqadmin_connect(&db, dbopt) < 0) {
		return MXQ_EXIT_FAILURE;
	}
	r = cmd->run(db, &a);
	mx_db_close(db);
	return r;
}
