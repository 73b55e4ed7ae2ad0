/*
 * mxq-web_data - every page's data as one JSON document (also the API).
 *
 * Sources: the power snapshot the leader decides on (nodes, slots, watts,
 * reasons: mxq_power_db_snapshot_read, whose cost grows with nodes and
 * requirement signatures, never with queued jobs), the group counters the
 * triggers keep (the queue, never a COUNT over mxq_job), the power events
 * of a window (charts of nodes on/off, the time nodes were off), the node
 * and job samples (power and energy charts, aggregated by the server into
 * WEB_CHART_POINTS buckets) and the energy rows of jobs.
 *
 * Bounds: lists are pages of WEB_PAGE_SIZE rows, events of a window at most
 * WEB_EVENTS_MAX and a group's summary its newest WEB_GROUP_JOBS_MAX jobs
 * (the answer says when either was cut), charts a fixed number of
 * buckets. Nothing is ever written.
 *
 * Privacy: with --private, user names, group names and job commands, work
 * directories and output paths are left out of every document (and so of
 * every page).
 *
 * Errors: a failed query gives 503 with the database's message, an unknown
 * host/group/job 404 (web_fail()).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mx_db.h"
#include "mx_util.h"
#include "mxq-web.h"
#include "mxq_json.h"
#include "mxq_power_db.h"
#include "mxq_power_json.h"
#include "mxq_status.h"
#include "mxqadmin.h"
#include "mxqd_control.h"

/* as mxqadmin: a node whose mxqd row is older than this counts as down */
#define HEARTBEAT_TIMEOUT_S 35
#define ENERGY_ROWS_MAX 100
#define GROUP_HOSTS_MAX 100       /* hosts a group's page lists */

const struct web_window web_windows[] = {
	{ "1h", 3600 }, { "6h", 6 * 3600 }, { "1d", 86400 }, { "7d", 7 * 86400 },
	{ "30d", 30 * 86400 }, { NULL, 0 },
};

static json_t *db_fail(struct web_request *r, const char *what)
{
	return web_fail(r, 503, "reading %s: %s", what, mx_db_error(r->db));
}

/* A name only shown without --private. */
static json_t *personal(const struct web_request *r, const char *s)
{
	return r->cfg->private_jobs ? json_null() : mxq_json_text(s);
}

static const char *state_name(enum mxq_power_node_state st)
{
	const char *n = mxq_power_state_to_string(st);
	return n ? n : "?";
}

static const char *job_status_name(int code)
{
	const char *n = mxq_job_status_to_name(code);
	return n ? n : "?";
}

static int read_snapshot(struct web_request *r, struct mxq_power_db_snapshot **ret)
{
	int e = mxq_power_db_snapshot_read(r->db, HEARTBEAT_TIMEOUT_S, ret);

	if (e < 0)
		web_fail(r, 503, "reading the power snapshot: %s",
			 e == -ENOMEM ? "out of memory" : mx_db_error(r->db));
	return e;
}

static json_t *nodes_array(const struct mxq_power_db_snapshot *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < s->snap.n_nodes; i++)
		json_array_append_new(arr, mxq_power_node_json(s, i));
	return arr;
}

json_t *web_data_nodes(struct web_request *r)
{
	struct mxq_power_db_snapshot *s = NULL;
	json_t *doc;

	if (read_snapshot(r, &s) < 0)
		return NULL;
	doc = json_pack("{s:I, s:o}", "now", (json_int_t)s->now, "hosts", nodes_array(s));
	mxq_power_db_snapshot_free(s);
	return doc;
}

/* ------------------------------------------------------------- charts */

/* Buckets of WINDOW seconds / WEB_CHART_POINTS, at least STEP_MIN s. */
static int64_t bucket_seconds(int64_t window, int64_t step_min)
{
	int64_t b = window / WEB_CHART_POINTS;
	return b < step_min ? step_min : b;
}

/* What a chart query selects on besides bucket size and start. */
struct chart_key {
	const char *host;          /* hostname = ?, or NULL */
	uint64_t job_id;           /* job_id = ?, or 0 */
};

/*
 * Run an aggregate SQL whose rows are (bucket, value[, value2]) and append
 * [t, v] points (t = bucket middle) to OUT1 (and OUT2 when given: value2
 * as energy in Wh since the first bucket). The SQL's parameters are the
 * bucket size B, the key if any ("s" host or "U" job), the start SINCE.
 */
static int chart_points(struct web_request *r, json_t *out1, json_t *out2, int64_t b,
			const char *sql, const struct chart_key *key, int64_t since)
{
	struct mx_db_result *res = NULL;
	int64_t n;
	double first = NAN;

	if (key->host)
		n = mx_db_query(r->db, &res, sql, "lsl", b, key->host, since);
	else if (key->job_id)
		n = mx_db_query(r->db, &res, sql, "lUl", b, key->job_id, since);
	else
		n = mx_db_query(r->db, &res, sql, "ll", b, since);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		double t = mx_db_double(res, 0) * (double)b + (double)b / 2;
		json_array_append_new(out1, json_pack("[f, f]", t, mx_db_double(res, 1)));
		if (out2) {
			/* energy since the window start, in Wh */
			double e = mx_db_double(res, 2);
			if (isnan(first))
				first = e;
			json_array_append_new(out2, json_pack("[f, f]", t, (e - first) / 3600.0));
		}
	}
	mx_db_result_free(res);
	return 0;
}

/*
 * The cluster power chart sums every node's samples of the window: at 1,000
 * nodes a day is millions of rows, far too many to read per page view. So
 * each window keeps its finished buckets here, and a request only reads the
 * samples of the newest POWER_REFETCH_S seconds again (late samples land
 * there: mxqd flushes a few seconds behind, and after a database outage it
 * writes what it missed). The first view of a window pays the full read.
 */
#define POWER_REFETCH_S 120
/* A node sample that carries a measurement: not the row that ends a gap
 * (mxq_energy(7): watts 0 and prev_time NULL there). */
#define MEASURED_SAMPLE "(prev_time IS NOT NULL OR watts > 0)"

struct power_cache {
	pthread_mutex_t lock;
	int64_t bucket;            /* bucket size the entries are for; 0: empty */
	int64_t *k;                /* bucket numbers, ascending */
	double *w;                 /* summed average watts of that bucket */
	size_t n, cap;
};

static struct power_cache power_caches[8] = {
	[0 ... 7] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/* Drop entries before K_LO and from K_FROM on (they are read again). */
static void power_cache_trim(struct power_cache *c, int64_t k_lo, int64_t k_from)
{
	size_t lo = 0, keep = 0;

	while (lo < c->n && c->k[lo] < k_lo)
		lo++;
	while (lo + keep < c->n && c->k[lo + keep] < k_from)
		keep++;
	memmove(c->k, c->k + lo, keep * sizeof(*c->k));
	memmove(c->w, c->w + lo, keep * sizeof(*c->w));
	c->n = keep;
}

static int power_cache_add(struct power_cache *c, int64_t k, double w)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		int64_t *nk = realloc(c->k, cap * sizeof(*nk));
		double *nw;
		if (!nk)
			return -ENOMEM;
		c->k = nk;
		nw = realloc(c->w, cap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		c->w = nw;
		c->cap = cap;
	}
	c->k[c->n] = k;
	c->w[c->n++] = w;
	return 0;
}

static int cluster_power_chart(struct web_request *r, int64_t now, const struct web_window *win,
			       json_t *out)
{
	struct power_cache *c = &power_caches[(win - web_windows) % 8];
	int64_t b = bucket_seconds(win->seconds, 10);
	int64_t k_lo = (now - win->seconds) / b, k_from = k_lo;
	struct mx_db_result *res = NULL;
	int64_t n;
	int e = 0;

	pthread_mutex_lock(&c->lock);
	if (c->bucket == b && c->n)
		k_from = c->k[c->n - 1] - (POWER_REFETCH_S + b - 1) / b;
	if (k_from < k_lo)
		k_from = k_lo;
	if (c->bucket != b)
		c->n = 0;
	c->bucket = b;
	power_cache_trim(c, k_lo, k_from);
	/* the average of each node in each bucket, summed over the nodes: a
	 * node that is off writes no samples and adds nothing; the row ending
	 * a gap measured nothing (watts 0, no prev_time) and is left out */
	n = mx_db_query(r->db, &res,
		"SELECT k, SUM(w) FROM (SELECT FLOOR(UNIX_TIMESTAMP(sample_time) / ?) AS k,"
		" hostname, AVG(watts) AS w FROM mxq_power_sample"
		" WHERE sample_time >= FROM_UNIXTIME(?) AND " MEASURED_SAMPLE
		" GROUP BY k, hostname) t"
		" GROUP BY k ORDER BY k", "ll", b, k_from * b);
	if (n < 0) {
		c->bucket = 0; /* read it all again next time */
		e = (int)n;
	}
	while (e == 0 && mx_db_next(res))
		e = power_cache_add(c, mx_db_i64(res, 0), mx_db_double(res, 1));
	mx_db_result_free(res);
	for (size_t i = 0; e == 0 && i < c->n; i++)
		json_array_append_new(out, json_pack("[f, f]", (double)(c->k[i] * b) + (double)b / 2,
						     c->w[i]));
	if (e == -ENOMEM)
		c->bucket = 0;
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* ------------------------------------------------- events: on/off, savings */

struct node_walk {
	const char *host;
	enum mxq_power_node_state state;  /* while walking back: state at cursor */
	int64_t cursor;
	double off_s[2];                  /* OFF time within the two savings windows */
	unsigned boots[2];                /* wakes within them */
	double idle_w, boot_j;            /* baseline, energy of one boot */
};

static int walk_cmp(const void *a, const void *b)
{
	return strcmp(((const struct node_walk *)a)->host, ((const struct node_walk *)b)->host);
}

static bool counts_on(enum mxq_power_node_state st)
{
	return mxq_power_state_counts_as_powered(st) || st == MXQ_POWER_POWERING_OFF;
}

/* Add the interval [A, B) spent in ST to W's OFF time of each window. */
static void walk_interval(struct node_walk *w, int64_t a, int64_t b, const int64_t start[2])
{
	if (w->state != MXQ_POWER_OFF)
		return;
	for (int k = 0; k < 2; k++) {
		int64_t lo = a > start[k] ? a : start[k];
		if (b > lo)
			w->off_s[k] += (double)(b - lo);
	}
}

struct history {
	json_t *on, *off;         /* chart points [t, count] */
	bool cut;                 /* WEB_EVENTS_MAX reached */
	int64_t oldest;           /* oldest event read */
};

/*
 * Add the step point (T, on, off), the counts from T until the next later
 * point. Points come newest first (the walk goes back in time) and are
 * put in time order by history_finish(). Skipped when the later point is
 * in the same pixel column (PX seconds), unless FORCE: a chart needs no
 * more points than pixels.
 */
static void history_point(struct history *h, int64_t t, int on, int off, int64_t px, bool force)
{
	size_t n = json_array_size(h->on);
	json_t *later = n ? json_array_get(h->on, n - 1) : NULL;

	if (later && !force && (int64_t)json_number_value(json_array_get(later, 0)) / px == t / px)
		return;
	json_array_append_new(h->on, json_pack("[f, i]", (double)t, on));
	json_array_append_new(h->off, json_pack("[f, i]", (double)t, off));
}

/* Reverse A in place (oldest point first). */
static void reverse_array(json_t *a)
{
	size_t n = json_array_size(a);

	for (size_t i = 0; i < n / 2; i++) {
		json_t *x = json_incref(json_array_get(a, i)), *y = json_incref(json_array_get(a, n - 1 - i));
		json_array_set_new(a, i, y);
		json_array_set_new(a, n - 1 - i, x);
	}
}

/*
 * Walk the power events of the longest window back from now: the number of
 * nodes powered and off over the chart window, and per node the time OFF
 * and the wakes within the savings windows.
 */
static int walk_events(struct web_request *r, const struct mxq_power_db_snapshot *s,
		       struct node_walk *w, size_t n, int64_t chart_window,
		       const int64_t save_window[2], struct history *h)
{
	int64_t now = s->now, start[2] = { now - save_window[0], now - save_window[1] };
	int64_t oldest = now - chart_window, px = chart_window / 600 + 1;
	struct mx_db_result *res = NULL;
	int on = 0, off = 0;
	int64_t rows;

	for (int k = 0; k < 2; k++)
		if (start[k] < oldest)
			oldest = start[k];
	for (size_t i = 0; i < n; i++) {
		on += counts_on(w[i].state);
		off += w[i].state == MXQ_POWER_OFF;
	}
	history_point(h, now, on, off, px, true);
	rows = mx_db_query(r->db, &res,
		"SELECT hostname, UNIX_TIMESTAMP(event_time), from_state, to_state"
		" FROM mxq_power_event WHERE event_time >= FROM_UNIXTIME(?)"
		" ORDER BY event_time DESC, event_id DESC LIMIT ?", "lu", oldest,
		(unsigned)WEB_EVENTS_MAX);
	if (rows < 0)
		return (int)rows;
	h->cut = rows >= WEB_EVENTS_MAX;
	h->oldest = oldest;
	while (mx_db_next(res)) {
		struct node_walk key = { .host = mx_db_str(res, 0) }, *x;
		int64_t t = mx_db_i64(res, 1);
		int from = mxq_power_state_from_string(mx_db_str(res, 2));
		int to = mxq_power_state_from_string(mx_db_str(res, 3));

		h->oldest = t;
		x = bsearch(&key, w, n, sizeof(*w), walk_cmp);
		if (!x || from < 0 || to < 0)
			continue;
		walk_interval(x, t, x->cursor, start);
		for (int k = 0; k < 2; k++)
			if (to == MXQ_POWER_POWERING_ON && t >= start[k])
				x->boots[k]++;
		if (t >= now - chart_window)
			history_point(h, t, on, off, px, false);
		on += counts_on((enum mxq_power_node_state)from) - counts_on(x->state);
		off += (from == MXQ_POWER_OFF) - (x->state == MXQ_POWER_OFF);
		x->state = (enum mxq_power_node_state)from;
		x->cursor = t;
	}
	mx_db_result_free(res);
	/* before its oldest event a node was in that event's from-state: back
	 * to the oldest window when every event was read, else only as far as
	 * they reach */
	for (size_t i = 0; i < n; i++)
		walk_interval(&w[i], h->cut ? h->oldest : oldest, w[i].cursor, start);
	history_point(h, now - chart_window, on, off, px, true);
	reverse_array(h->on);
	reverse_array(h->off);
	return 0;
}

/* Idle baseline and energy per boot of every node, into W (sorted). */
static int read_baselines(struct web_request *r, struct node_walk *w, size_t n)
{
	struct mx_db_result *res = NULL;
	int64_t rows = mx_db_query(r->db, &res,
		"SELECT hostname, idle_baseline_watts, IF(boot_count > 0,"
		" energy_boot_joules / boot_count, 0) FROM mxq_power", NULL);

	if (rows < 0)
		return (int)rows;
	while (mx_db_next(res)) {
		struct node_walk key = { .host = mx_db_str(res, 0) }, *x;
		x = bsearch(&key, w, n, sizeof(*w), walk_cmp);
		if (!x)
			continue;
		x->idle_w = mx_db_double(res, 1);
		x->boot_j = mx_db_double(res, 2);
	}
	mx_db_result_free(res);
	return 0;
}

/*
 * Energy saved against an always-on cluster over window K: every second a
 * node was OFF it would have drawn at least its idle baseline; every wake
 * cost one boot's energy (the node's measured boot energy per boot).
 */
static json_t *savings_json(const struct node_walk *w, size_t n, int k, const char *name,
			    int64_t seconds, const struct history *h, int64_t now)
{
	double off_s = 0, idle_sum = 0, saved = 0, boot_j = 0, always = 0;
	unsigned boots = 0, no_baseline = 0;

	for (size_t i = 0; i < n; i++) {
		off_s += w[i].off_s[k];
		boots += w[i].boots[k];
		boot_j += w[i].boots[k] * w[i].boot_j;
		idle_sum += w[i].idle_w;
		always += w[i].idle_w * (double)seconds;
		saved += w[i].off_s[k] * w[i].idle_w;
		no_baseline += w[i].idle_w <= 0;
	}
	saved -= boot_j;
	return json_pack("{s:s, s:I, s:i, s:f, s:f, s:i, s:f, s:f, s:f, s:f, s:i, s:b}",
		"window", name, "seconds", (json_int_t)seconds, "nodes", (int)n,
		"node_off_hours", off_s / 3600, "idle_baseline_watts_sum", idle_sum,
		"boots", (int)boots, "boot_energy_kwh", boot_j / 3.6e6,
		"saved_kwh", saved / 3.6e6, "always_on_idle_kwh", always / 3.6e6,
		"saved_percent_of_idle", always > 0 ? 100 * saved / always : 0.0,
		"nodes_without_baseline", (int)no_baseline,
		"events_cut", h->cut && h->oldest > now - seconds);
}

static json_t *leader_json(struct web_request *r)
{
	struct mx_db_result *res = NULL;
	json_t *o;
	int64_t n = mx_db_query(r->db, &res,
		"SELECT epoch, holder, lease_expires > NOW(3), dry_run, tick_summary,"
		" TIMESTAMPDIFF(SECOND, last_tick_at, NOW(3)), config_hash"
		" FROM mxq_power_leader WHERE id = 1", NULL);

	if (n < 0)
		return db_fail(r, "the power leader");
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return json_pack("{s:b}", "active", 0);
	}
	o = json_pack("{s:I, s:s, s:b, s:b, s:s, s:o, s:s}",
		"epoch", (json_int_t)mx_db_u64(res, 0), "holder", mx_db_str(res, 1),
		"active", (int)mx_db_i64(res, 2), "dry_run", (int)mx_db_i64(res, 3),
		"tick_summary", mx_db_str(res, 4),
		"last_tick_age_s", mx_db_is_null(res, 5) ? json_null() :
				   json_integer(mx_db_i64(res, 5)),
		"config_hash", mx_db_str(res, 6));
	mx_db_result_free(res);
	return o;
}

/* The queue from the group counters (kept by the triggers). */
static json_t *queue_json(struct web_request *r)
{
	struct mx_db_result *res = NULL;
	json_t *o;
	int64_t n = mx_db_query(r->db, &res,
		"SELECT COUNT(*), COALESCE(SUM(group_jobs_inq), 0), COALESCE(SUM(group_jobs_running), 0),"
		" COALESCE(SUM(group_slots_running), 0), COALESCE(SUM(group_jobs_finished), 0),"
		" COALESCE(SUM(group_jobs_failed), 0), COALESCE(SUM(group_jobs_cancelled), 0),"
		" COALESCE(SUM(group_jobs_unknown), 0)"
		" FROM mxq_group WHERE group_jobs_inq > 0 OR group_jobs_running > 0", NULL);

	if (n < 0 || !mx_db_next(res)) {
		mx_db_result_free(res);
		return db_fail(r, "the queue");
	}
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"groups_active", (json_int_t)mx_db_u64(res, 0), "inq", (json_int_t)mx_db_u64(res, 1),
		"running", (json_int_t)mx_db_u64(res, 2), "slots_running", (json_int_t)mx_db_u64(res, 3),
		"finished", (json_int_t)mx_db_u64(res, 4), "failed", (json_int_t)mx_db_u64(res, 5),
		"cancelled", (json_int_t)mx_db_u64(res, 6), "unknown", (json_int_t)mx_db_u64(res, 7));
	mx_db_result_free(res);
	return o;
}

/* ------------------------------------------------------------- groups */

enum group_col {
	GC_ID, GC_NAME, GC_USER, GC_STATUS, GC_FLAGS, GC_PRIO, GC_JOBS, GC_INQ, GC_RUNNING,
	GC_FINISHED, GC_FAILED, GC_CANCELLED, GC_UNKNOWN, GC_SLOTS, GC_THREADS, GC_MEMORY,
	GC_TIME, GC_GPU, GC_TMPDIR, GC_TAGS, GC_PREREQ, GC_MTIME,
};

#define GROUP_SELECT \
	"SELECT group_id, group_name, user_name, group_status, group_flags, group_priority," \
	" group_jobs, group_jobs_inq, group_jobs_running, group_jobs_finished, group_jobs_failed," \
	" group_jobs_cancelled, group_jobs_unknown, group_slots_running, job_threads, job_memory," \
	" job_time, job_gpu, job_tmpdir_size, tags, prerequisites, UNIX_TIMESTAMP(group_mtime)" \
	" FROM mxq_group"

static json_t *group_row_json(const struct web_request *r, const struct mx_db_result *res)
{
	const char *st = mxq_group_status_to_name((int)mx_db_i64(res, GC_STATUS));
	json_t *o = json_pack("{s:I, s:o, s:o, s:s, s:b, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			      " s:I, s:i, s:I, s:I, s:i, s:I, s:s, s:s, s:I}",
		"group_id", (json_int_t)mx_db_u64(res, GC_ID),
		"group_name", personal(r, mx_db_str(res, GC_NAME)),
		"user_name", personal(r, mx_db_str(res, GC_USER)),
		"status", st ? st : "?",
		"closed", (mx_db_u64(res, GC_FLAGS) & MXQ_GROUP_FLAG_CLOSED) != 0,
		"priority", (int)mx_db_i64(res, GC_PRIO),
		"jobs", (json_int_t)mx_db_u64(res, GC_JOBS),
		"jobs_inq", (json_int_t)mx_db_u64(res, GC_INQ),
		"jobs_running", (json_int_t)mx_db_u64(res, GC_RUNNING),
		"jobs_finished", (json_int_t)mx_db_u64(res, GC_FINISHED),
		"jobs_failed", (json_int_t)mx_db_u64(res, GC_FAILED),
		"jobs_cancelled", (json_int_t)mx_db_u64(res, GC_CANCELLED),
		"jobs_unknown", (json_int_t)mx_db_u64(res, GC_UNKNOWN),
		"slots_running", (json_int_t)mx_db_u64(res, GC_SLOTS),
		"threads", (int)mx_db_i64(res, GC_THREADS),
		"memory_mib", (json_int_t)mx_db_u64(res, GC_MEMORY),
		"time_min", (json_int_t)mx_db_u64(res, GC_TIME),
		"gpus", (int)mx_db_i64(res, GC_GPU),
		"tmpdir_gib", (json_int_t)mx_db_u64(res, GC_TMPDIR),
		"tags", mx_db_str(res, GC_TAGS), "prerequisites", mx_db_str(res, GC_PREREQ),
		"mtime", (json_int_t)mx_db_i64(res, GC_MTIME));
	return o;
}

static json_t *group_list(struct web_request *r, bool all, int64_t page)
{
	struct mx_db_result *res = NULL;
	json_t *arr;
	int64_t n = mx_db_query(r->db, &res, GROUP_SELECT
		" WHERE ? OR group_jobs_inq > 0 OR group_jobs_running > 0"
		" ORDER BY group_id DESC LIMIT ? OFFSET ?", "iul", all ? 1 : 0,
		(unsigned)WEB_PAGE_SIZE, page * WEB_PAGE_SIZE);

	if (n < 0)
		return db_fail(r, "the groups");
	arr = json_array();
	while (mx_db_next(res))
		json_array_append_new(arr, group_row_json(r, res));
	mx_db_result_free(res);
	return arr;
}

json_t *web_data_groups(struct web_request *r)
{
	const char *all_s = mx_url_param(r->url, "all");
	int64_t page = web_page_param(r);
	bool all;
	json_t *arr;

	if (page < 0)
		return NULL;
	if (all_s && strcmp(all_s, "0") && strcmp(all_s, "1"))
		return web_fail(r, 400, "all= takes 0 or 1");
	all = all_s && !strcmp(all_s, "1");
	arr = group_list(r, all, page);
	if (!arr)
		return NULL;
	return json_pack("{s:I, s:I, s:b, s:o}", "page", (json_int_t)page + 1,
			 "page_size", (json_int_t)WEB_PAGE_SIZE, "all", all, "groups", arr);
}

/* ------------------------------------------------------------- overview */

static int fill_walk(const struct mxq_power_db_snapshot *s, struct node_walk **ret)
{
	struct node_walk *w = calloc(s->snap.n_nodes + 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		w[i].host = s->hosts[i].hostname;
		w[i].state = s->nodes[i].state;
		w[i].cursor = s->now;
	}
	qsort(w, s->snap.n_nodes, sizeof(*w), walk_cmp);
	*ret = w;
	return 0;
}

static json_t *totals_json(const struct mxq_power_db_snapshot *s)
{
	json_t *by_state = json_object();
	double watts = 0;
	uint64_t used = 0, total = 0;

	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		const char *st = state_name(s->nodes[i].state);
		json_t *c = json_object_get(by_state, st);
		json_object_set_new(by_state, st, json_integer(c ? json_integer_value(c) + 1 : 1));
		if (s->nodes[i].state != MXQ_POWER_OFF && s->nodes[i].state != MXQ_POWER_FAILED)
			watts += s->hosts[i].current_watts;
		used += s->nodes[i].used_slots;
		total += s->hosts[i].slots_total;
	}
	return json_pack("{s:i, s:o, s:f, s:I, s:I, s:I}", "nodes", (int)s->snap.n_nodes,
			 "by_state", by_state, "watts", watts, "slots_used", (json_int_t)used,
			 "slots_total", (json_int_t)total,
			 "jobs_pending", (json_int_t)s->total_jobs_pending);
}

json_t *web_data_overview(struct web_request *r)
{
	static const int64_t save_window[2] = { 86400, 7 * 86400 };
	const struct web_window *win = web_window_param(r, "6h");
	struct mxq_power_db_snapshot *s = NULL;
	struct node_walk *w = NULL;
	struct history h = { 0 };
	json_t *doc = NULL, *power = NULL, *leader = NULL, *queue = NULL, *groups = NULL;
	json_t *savings = NULL;
	int e;

	if (!win || read_snapshot(r, &s) < 0)
		return NULL;
	h.on = json_array();
	h.off = json_array();
	power = json_array();
	if (fill_walk(s, &w) < 0 || !h.on || !h.off || !power) {
		web_fail(r, 500, "out of memory");
		goto out;
	}
	e = read_baselines(r, w, s->snap.n_nodes);
	if (e == 0)
		e = walk_events(r, s, w, s->snap.n_nodes, win->seconds, save_window, &h);
	if (e == 0)
		e = cluster_power_chart(r, s->now, win, power);
	if (e < 0) {
		db_fail(r, "the power history");
		goto out;
	}
	if (!(leader = leader_json(r)) || !(queue = queue_json(r)) ||
	    !(groups = group_list(r, false, 0)))
		goto out;
	savings = json_array();
	json_array_append_new(savings, savings_json(w, s->snap.n_nodes, 0, "1d", save_window[0], &h,
						    s->now));
	json_array_append_new(savings, savings_json(w, s->snap.n_nodes, 1, "7d", save_window[1], &h,
						    s->now));
	doc = json_pack("{s:I, s:s, s:I, s:O, s:o, s:O, s:o, s:O, s:O, s:O, s:O, s:b, s:O}",
		"now", (json_int_t)s->now, "window", win->name, "window_s", (json_int_t)win->seconds,
		"leader", leader, "totals", totals_json(s), "queue", queue, "hosts", nodes_array(s),
		"savings", savings, "cluster_power_w", power, "nodes_on", h.on, "nodes_off", h.off,
		"events_cut", h.cut, "groups", groups);
out:
	json_decref(savings);
	json_decref(leader);
	json_decref(queue);
	json_decref(groups);
	json_decref(power);
	json_decref(h.on);
	json_decref(h.off);
	free(w);
	mxq_power_db_snapshot_free(s);
	return doc;
}

/* ------------------------------------------------------------- jobs */

enum job_col {
	JC_ID, JC_STATUS, JC_GROUP, JC_HOST, JC_SUBMIT, JC_START, JC_END, JC_SLOTS,
	JC_ENERGY, JC_AVG, JC_METHOD, JC_COMPLETE, JC_USER, JC_GROUP_NAME, JC_ARGV, JC_WORKDIR,
	JC_STDOUT, JC_STDERR, JC_STATS_STATUS, JC_ACTIVE, JC_PEAK, JC_IDLE, JC_SAMPLES,
	JC_E_START, JC_E_END, JC_HAS_ENERGY,
};

#define JOB_SELECT \
	"SELECT j.job_id, j.job_status, j.group_id, j.host_hostname, UNIX_TIMESTAMP(j.date_submit)," \
	" UNIX_TIMESTAMP(j.date_start), UNIX_TIMESTAMP(j.date_end), j.host_slots," \
	" p.energy_j, p.avg_watts, p.method, p.completeness, g.user_name, g.group_name," \
	" j.job_argv, j.job_workdir, j.job_stdout, j.job_stderr, j.stats_status," \
	" p.active_energy_j, p.peak_watts, p.idle_baseline_watts, p.samples," \
	" UNIX_TIMESTAMP(p.date_start), UNIX_TIMESTAMP(p.date_end), p.job_id IS NOT NULL" \
	" FROM mxq_job j LEFT JOIN mxq_power_job p ON p.job_id = j.job_id" \
	" LEFT JOIN mxq_group g ON g.group_id = j.group_id"

static json_t *time_or_null(const struct mx_db_result *res, unsigned col)
{
	return mx_db_is_null(res, col) || mx_db_i64(res, col) <= 0 ? json_null() :
	       json_integer(mx_db_i64(res, col));
}

/* One job row; DETAIL adds the command, paths and the energy details. */
static json_t *job_row_json(const struct web_request *r, const struct mx_db_result *res,
			    bool detail)
{
	json_t *o = json_pack("{s:I, s:s, s:i, s:I, s:s, s:o, s:o, s:o, s:i, s:o, s:o}",
		"job_id", (json_int_t)mx_db_u64(res, JC_ID),
		"status", job_status_name((int)mx_db_i64(res, JC_STATUS)),
		"status_code", (int)mx_db_i64(res, JC_STATUS),
		"group_id", (json_int_t)mx_db_u64(res, JC_GROUP),
		"host", mx_db_str(res, JC_HOST) ? mx_db_str(res, JC_HOST) : "",
		"date_submit", time_or_null(res, JC_SUBMIT), "date_start", time_or_null(res, JC_START),
		"date_end", time_or_null(res, JC_END), "slots", (int)mx_db_i64(res, JC_SLOTS),
		"energy_j", mx_db_is_null(res, JC_ENERGY) ? json_null() :
			    json_real(mx_db_double(res, JC_ENERGY)),
		"user_name", personal(r, mx_db_str(res, JC_USER)));
	if (!detail || !o)
		return o;
	json_object_set_new(o, "group_name", personal(r, mx_db_str(res, JC_GROUP_NAME)));
	if (!r->cfg->private_jobs) {
		char **argv = NULL;
		int argc = 0;
		json_t *a = json_array();
		if (mx_argv_decode(mx_db_str(res, JC_ARGV), &argv, &argc) == 0) {
			for (int i = 0; i < argc; i++)
				json_array_append_new(a, json_string(argv[i]));
			mx_strvec_free(argv);
		}
		json_object_set_new(o, "argv", a);
		json_object_set_new(o, "workdir", mxq_json_text(mx_db_str(res, JC_WORKDIR)));
		json_object_set_new(o, "stdout", mxq_json_text(mx_db_str(res, JC_STDOUT)));
		json_object_set_new(o, "stderr", mxq_json_text(mx_db_str(res, JC_STDERR)));
	}
	if (mx_db_i64(res, JC_HAS_ENERGY))
		json_object_set_new(o, "energy", json_pack(
			"{s:f, s:f, s:f, s:f, s:f, s:I, s:s, s:s, s:o, s:o}",
			"energy_j", mx_db_double(res, JC_ENERGY),
			"active_energy_j", mx_db_double(res, JC_ACTIVE),
			"avg_watts", mx_db_double(res, JC_AVG), "peak_watts", mx_db_double(res, JC_PEAK),
			"idle_baseline_watts", mx_db_double(res, JC_IDLE),
			"samples", (json_int_t)mx_db_u64(res, JC_SAMPLES),
			"method", mx_db_str(res, JC_METHOD), "completeness", mx_db_str(res, JC_COMPLETE),
			"date_start", time_or_null(res, JC_E_START),
			"date_end", time_or_null(res, JC_E_END)));
	else
		json_object_set_new(o, "energy", json_null());
	return o;
}

static json_t *job_list(struct web_request *r, const char *where, const char *pfmt,
			const char *key, uint64_t id, int64_t page)
{
	struct mx_db_result *res = NULL;
	char sql[1024];
	json_t *arr;
	int64_t n;

	snprintf(sql, sizeof(sql), "%s WHERE %s ORDER BY j.job_id DESC LIMIT ? OFFSET ?",
		 JOB_SELECT, where);
	if (key)
		n = mx_db_query(r->db, &res, sql, pfmt, key, (unsigned)WEB_PAGE_SIZE,
				page * WEB_PAGE_SIZE);
	else
		n = mx_db_query(r->db, &res, sql, pfmt, id, (unsigned)WEB_PAGE_SIZE,
				page * WEB_PAGE_SIZE);
	if (n < 0)
		return db_fail(r, "the jobs");
	arr = json_array();
	while (mx_db_next(res))
		json_array_append_new(arr, job_row_json(r, res, false));
	mx_db_result_free(res);
	return arr;
}

/* ------------------------------------------------------------- why it waits */

/*
 * Why GROUP's queued jobs wait: for every managed node the answer of
 * server_is_qualified() (the rule mxqd's dispatch and the power manager
 * apply) and the leader's own explanation of the node, plus its last tick.
 */
static json_t *waiting_json(struct web_request *r, uint64_t group_id)
{
	struct mxqadmin_group g = { 0 };
	struct mxq_power_db_snapshot *s = NULL;
	json_t *doc = NULL, *hosts;
	size_t n_qualified = 0, n_capacity = 0;
	int e = mxqadmin_group_load(r->db, group_id, &g);

	if (e < 0)
		return e == -ENOENT ? web_fail(r, 404, "no group %" PRIu64, group_id) :
		       db_fail(r, "the group");
	if (read_snapshot(r, &s) < 0)
		goto out;
	hosts = json_array();
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		const struct mxq_power_node *n = &s->nodes[i];
		enum mxq_qual_rule rule = MXQ_QUAL_OK;
		bool q = n->caps && server_is_qualified(n->caps, &g.reqs, &rule);

		n_qualified += q;
		n_capacity += q && mxq_power_state_counts_as_capacity(n->state);
		json_array_append_new(hosts, json_pack("{s:s, s:s, s:b, s:o, s:o, s:s}",
			"hostname", n->hostname, "state", state_name(n->state),
			"registered", n->caps != NULL,
			"qualified", n->caps ? json_boolean(q) : json_null(),
			"rule", n->caps ? json_string(q ? "ok" : mxq_qual_rule_describe(rule)) :
				json_string("never registered: capabilities unknown"),
			"explanation", s->hosts[i].explanation ? s->hosts[i].explanation : ""));
	}
	doc = json_pack("{s:I, s:b, s:i, s:i, s:i, s:o}", "jobs_inq", (json_int_t)g.jobs_inq,
		"group_cancelled", g.status == MXQ_GROUP_STATUS_CANCELLED,
		"nodes", (int)s->snap.n_nodes, "qualified", (int)n_qualified,
		"qualified_with_capacity", (int)n_capacity, "hosts", hosts);
out:
	mxq_power_db_snapshot_free(s);
	mxqadmin_group_done(&g);
	return doc;
}

json_t *web_data_group(struct web_request *r, uint64_t group_id)
{
	struct mx_db_result *res = NULL;
	json_t *doc = NULL, *hosts, *jobs;
	int64_t page = web_page_param(r), n;
	uint64_t below_id = 0;

	if (page < 0)
		return NULL;
	n = mx_db_query(r->db, &res, GROUP_SELECT " WHERE group_id = ?", "U", group_id);
	if (n < 0)
		return db_fail(r, "the group");
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return web_fail(r, 404, "no group %" PRIu64, group_id);
	}
	doc = json_pack("{s:o}", "group", group_row_json(r, res));
	mx_db_result_free(res);

	/* where it ran and its energy: over its newest WEB_GROUP_JOBS_MAX jobs
	 * that ran (index group_id), so a group of a million jobs costs what
	 * one of ten thousand does; below_id is the newest job left out */
	n = mx_db_query(r->db, &res,
		"SELECT job_id FROM mxq_job WHERE group_id = ? AND host_hostname <> ''"
		" ORDER BY job_id DESC LIMIT 1 OFFSET ?", "Uu", group_id,
		(unsigned)WEB_GROUP_JOBS_MAX);
	if (n >= 0 && mx_db_next(res))
		below_id = mx_db_u64(res, 0);
	mx_db_result_free(res);
	res = NULL;
	if (n >= 0)
		n = mx_db_query(r->db, &res,
			"SELECT j.host_hostname, COUNT(*), COALESCE(SUM(p.energy_j), 0), COUNT(p.job_id)"
			" FROM mxq_job j LEFT JOIN mxq_power_job p ON p.job_id = j.job_id"
			" WHERE j.group_id = ? AND j.job_id > ? AND j.host_hostname <> ''"
			" GROUP BY j.host_hostname ORDER BY 2 DESC", "UU", group_id, below_id);
	if (n < 0) {
		json_decref(doc);
		return db_fail(r, "where the group ran");
	}
	hosts = json_array();
	{
		double total = 0;
		json_int_t measured = 0;
		/* the 100 hosts that ran most of them listed, the total over all */
		while (mx_db_next(res)) {
			if (json_array_size(hosts) < GROUP_HOSTS_MAX)
				json_array_append_new(hosts, json_pack("{s:s, s:I, s:f}", "host",
					mx_db_str(res, 0), "jobs", (json_int_t)mx_db_u64(res, 1),
					"energy_j", mx_db_double(res, 2)));
			total += mx_db_double(res, 2);
			measured += (json_int_t)mx_db_u64(res, 3);
		}
		json_object_set_new(doc, "energy", json_pack("{s:f, s:I, s:b}", "energy_j", total,
							     "jobs_measured", measured,
							     "jobs_cut", below_id != 0));
	}
	mx_db_result_free(res);
	json_object_set_new(doc, "hosts", hosts);
	jobs = job_list(r, "j.group_id = ?", "Uul", NULL, group_id, page);
	if (!jobs) {
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "jobs", jobs);
	json_object_set_new(doc, "page", json_integer(page + 1));
	if (json_integer_value(json_object_get(json_object_get(doc, "group"), "jobs_inq")) > 0) {
		json_t *w = waiting_json(r, group_id);
		if (!w) {
			json_decref(doc);
			return NULL;
		}
		json_object_set_new(doc, "waiting", w);
	}
	return doc;
}

json_t *web_data_job(struct web_request *r, uint64_t job_id)
{
	struct mx_db_result *res = NULL;
	json_t *doc, *job, *power, *energy;
	int64_t n = mx_db_query(r->db, &res, JOB_SELECT " WHERE j.job_id = ?", "U", job_id);
	int64_t start, end, b;
	int status;

	if (n < 0)
		return db_fail(r, "the job");
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return web_fail(r, 404, "no job %" PRIu64, job_id);
	}
	job = job_row_json(r, res, true);
	status = (int)mx_db_i64(res, JC_STATUS);
	start = mx_db_i64(res, JC_E_START);
	end = mx_db_is_null(res, JC_E_END) ? 0 : mx_db_i64(res, JC_E_END);
	mx_db_result_free(res);
	doc = json_pack("{s:o}", "job", job);
	energy = json_object_get(job, "energy");
	power = json_array();
	if (json_is_object(energy) && start > 0) {
		int64_t len = (end > start ? end : start + 1) - start;
		b = bucket_seconds(len, 1);
		if (chart_points(r, power, NULL, b,
			"SELECT FLOOR(UNIX_TIMESTAMP(sample_time) / ?) AS k, AVG(watts)"
			" FROM mxq_power_job_sample WHERE job_id = ? AND sample_time >= FROM_UNIXTIME(?)"
			" GROUP BY k ORDER BY k LIMIT 1000", &(struct chart_key){ .job_id = job_id },
			start - 1) < 0) {
			json_decref(power);
			json_decref(doc);
			return db_fail(r, "the job's power samples");
		}
	}
	json_object_set_new(doc, "power_w", power);
	if (status == MXQ_JOB_STATUS_INQ) {
		json_t *w = waiting_json(r, json_integer_value(json_object_get(job, "group_id")));
		if (!w) {
			json_decref(doc);
			return NULL;
		}
		json_object_set_new(doc, "waiting", w);
	}
	return doc;
}

/* ------------------------------------------------------------- node */

json_t *web_data_node(struct web_request *r, const char *host)
{
	const struct web_window *win = web_window_param(r, "6h");
	struct mxq_power_db_snapshot *s = NULL;
	struct mx_db_result *res = NULL;
	json_t *doc = NULL, *events, *power, *energy, *jobs;
	int64_t page = web_page_param(r), n, b;
	long i;

	if (!win || page < 0 || read_snapshot(r, &s) < 0)
		return NULL;
	i = mxq_power_db_snapshot_find(s, host);
	if (i < 0) {
		mxq_power_db_snapshot_free(s);
		return web_fail(r, 404, "no managed node of that name");
	}
	doc = json_pack("{s:I, s:s, s:I, s:o}", "now", (json_int_t)s->now, "window", win->name,
			"window_s", (json_int_t)win->seconds, "node", mxq_power_node_json(s, (size_t)i));
	mxq_power_db_snapshot_free(s);

	n = mx_db_query(r->db, &res,
		"SELECT UNIX_TIMESTAMP(event_time), from_state, to_state, reason, actor, epoch"
		" FROM mxq_power_event WHERE hostname = ? ORDER BY event_time DESC, event_id DESC"
		" LIMIT ? OFFSET ?", "sul", host, (unsigned)WEB_PAGE_SIZE, page * WEB_PAGE_SIZE);
	if (n < 0)
		goto db_error;
	events = json_array();
	while (mx_db_next(res))
		json_array_append_new(events, json_pack("{s:f, s:s, s:s, s:s, s:s, s:I}",
			"time", mx_db_double(res, 0), "from", mx_db_str(res, 1), "to", mx_db_str(res, 2),
			"reason", mx_db_str(res, 3), "actor", mx_db_str(res, 4),
			"epoch", (json_int_t)mx_db_u64(res, 5)));
	mx_db_result_free(res);
	res = NULL;
	json_object_set_new(doc, "events", events);

	n = mx_db_query(r->db, &res,
		"SELECT energy_joules, energy_jobs_joules, energy_idle_joules, energy_boot_joules,"
		" energy_shutdown_joules, energy_method, idle_baseline_watts, boot_count"
		" FROM mxq_power WHERE hostname = ?", "s", host);
	if (n < 0)
		goto db_error;
	if (mx_db_next(res))
		json_object_set_new(doc, "energy", json_pack("{s:f, s:f, s:f, s:f, s:f, s:s, s:f, s:I}",
			"total_j", mx_db_double(res, 0), "jobs_j", mx_db_double(res, 1),
			"idle_j", mx_db_double(res, 2), "boot_j", mx_db_double(res, 3),
			"shutdown_j", mx_db_double(res, 4), "method", mx_db_str(res, 5),
			"idle_baseline_watts", mx_db_double(res, 6),
			"boot_count", (json_int_t)mx_db_u64(res, 7)));
	mx_db_result_free(res);
	res = NULL;

	power = json_array();
	energy = json_array();
	json_object_set_new(doc, "power_w", power);
	json_object_set_new(doc, "energy_wh", energy);
	b = bucket_seconds(win->seconds, 2);
	if (chart_points(r, power, energy, b,
		"SELECT FLOOR(UNIX_TIMESTAMP(sample_time) / ?) AS k, AVG(watts), MAX(energy_j)"
		" FROM mxq_power_sample WHERE hostname = ? AND sample_time >= FROM_UNIXTIME(?)"
		" AND " MEASURED_SAMPLE " GROUP BY k ORDER BY k", &(struct chart_key){ .host = host },
		json_integer_value(json_object_get(doc, "now")) - win->seconds) < 0)
		goto db_error;

	jobs = job_list(r, "j.host_hostname = ?", "sul", host, 0, page);
	if (!jobs) {
		json_decref(doc);
		return NULL;
	}
	json_object_set_new(doc, "jobs", jobs);
	json_object_set_new(doc, "page", json_integer(page + 1));
	return doc;

db_error:
	mx_db_result_free(res);
	json_decref(doc);
	return db_fail(r, "the node");
}

/* ------------------------------------------------------------- energy */

json_t *web_data_energy(struct web_request *r)
{
	static const struct { const char *by, *col; } keys[] = {
		{ "user", "g.user_name" }, { "host", "p.hostname" }, { "group", "j.group_id" },
	};
	const struct web_window *win = web_window_param(r, "7d");
	const char *by = mx_url_param(r->url, "by");
	struct mx_db_result *res = NULL;
	const char *col = NULL;
	char sql[1024];
	json_t *rows;
	int64_t n;

	if (!win)
		return NULL;
	if (!by)
		by = r->cfg->private_jobs ? "host" : "user";
	for (size_t k = 0; k < MX_ARRAY_SIZE(keys); k++)
		if (!strcmp(by, keys[k].by))
			col = keys[k].col;
	if (!col)
		return web_fail(r, 400, "by= takes user, host or group");
	if (r->cfg->private_jobs && strcmp(by, "host"))
		return web_fail(r, 403, "energy by %s is not shown on this server (--private)", by);
	/* jobs that started in the window (index date_start), the biggest first */
	snprintf(sql, sizeof(sql),
		"SELECT %s, COUNT(*), SUM(p.energy_j), SUM(p.active_energy_j),"
		" SUM(p.date_end IS NULL) FROM mxq_power_job p"
		" LEFT JOIN mxq_job j ON j.job_id = p.job_id"
		" LEFT JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE p.date_start >= NOW() - INTERVAL ? SECOND"
		" GROUP BY 1 ORDER BY 3 DESC LIMIT ?", col);
	n = mx_db_query(r->db, &res, sql, "lu", win->seconds, (unsigned)ENERGY_ROWS_MAX);
	if (n < 0)
		return db_fail(r, "the energy of jobs");
	rows = json_array();
	while (mx_db_next(res))
		json_array_append_new(rows, json_pack("{s:s, s:I, s:f, s:f, s:f, s:I}",
			"key", mx_db_str(res, 0) ? mx_db_str(res, 0) : "(unknown)",
			"jobs", (json_int_t)mx_db_u64(res, 1), "energy_j", mx_db_double(res, 2),
			"energy_kwh", mx_db_double(res, 2) / 3.6e6,
			"active_energy_j", mx_db_double(res, 3),
			"running", (json_int_t)mx_db_u64(res, 4)));
	mx_db_result_free(res);
	return json_pack("{s:s, s:I, s:s, s:i, s:o}", "window", win->name,
			 "window_s", (json_int_t)win->seconds, "by", by, "limit", ENERGY_ROWS_MAX,
			 "rows", rows);
}

/* ------------------------------------------------------------- privacy */

/*
 * The power manager names a demand "group 12 (alice)" in its reasons and
 * explanations: with --private the name in the parentheses goes. Returns a
 * new string, or NULL when S has nothing to hide (or on ENOMEM).
 */
static char *redact_text(const char *s)
{
	struct mx_buf b;
	const char *p = s, *hit;
	bool changed = false;
	size_t len;

	mx_buf_init(&b, 0);
	while ((hit = strstr(p, "group ")) != NULL) {
		const char *q = hit + 6, *close;

		while (*q >= '0' && *q <= '9')
			q++;
		if (q == hit + 6 || strncmp(q, " (", 2) != 0 || !(close = strchr(q + 2, ')'))) {
			mx_buf_add(&b, p, (size_t)(hit + 6 - p));
			p = hit + 6;
			continue;
		}
		mx_buf_add(&b, p, (size_t)(q + 2 - p));
		mx_buf_puts(&b, "hidden");
		p = close;
		changed = true;
	}
	mx_buf_puts(&b, p);
	if (!changed) {
		mx_buf_free(&b);
		return NULL;
	}
	return mx_buf_take(&b, &len);
}

void web_redact(json_t *doc)
{
	const char *key;
	json_t *v;
	size_t i;

	if (json_is_object(doc)) {
		json_object_foreach(doc, key, v) {
			if (json_is_string(v)) {
				char *t = redact_text(json_string_value(v));
				if (t)
					json_object_set_new(doc, key, json_string(t));
				free(t);
			} else {
				web_redact(v);
			}
		}
	} else if (json_is_array(doc)) {
		json_array_foreach(doc, i, v) {
			if (json_is_string(v)) {
				char *t = redact_text(json_string_value(v));
				if (t)
					json_array_set_new(doc, i, json_string(t));
				free(t);
			} else {
				web_redact(v);
			}
		}
	}
}
