/*
 * mxq-web_html - the HTML pages, each a view of its JSON document (see
 * mxq-web_data.c), plus the stylesheet and the refresh script.
 *
 * Plain HTML and CSS; charts are inline SVG drawn here (mxq_chart), so
 * every page is complete without JavaScript. Text from the database goes
 * through mx_html_text() (element text and attributes) or mx_url_encode()
 * (links) and nothing else: no other path puts data into the page.
 *
 * Refresh: with scripts, /static/mxq-web.js fetches the page again every
 * --refresh seconds and swaps the <main> element in place (no flicker, the
 * scroll position stays); without, a <noscript> meta refresh reloads it.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mx_util.h"
#include "mxq-web.h"
#include "mxq_chart.h"

#define CHART_W 560
#define CHART_H 200

/* ------------------------------------------------------------------ */
/* JSON access                                                         */

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static json_int_t jint(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static double jnum(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static bool jtrue(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* ------------------------------------------------------------------ */
/* pieces                                                              */

static void text(struct web_request *r, const char *s)
{
	mx_html_text(&r->out, s);
}

static void put(struct web_request *r, const char *s)
{
	mx_buf_puts(&r->out, s);
}

/* "45 s", "12 min", "3.5 h", "2.1 d": how long ago / for how long. */
static void put_duration(struct web_request *r, double secs)
{
	if (secs < 0)
		secs = 0;
	if (secs < 120)
		mx_buf_printf(&r->out, "%.0f s", secs);
	else if (secs < 7200)
		mx_buf_printf(&r->out, "%.0f min", secs / 60);
	else if (secs < 172800)
		mx_buf_printf(&r->out, "%.1f h", secs / 3600);
	else
		mx_buf_printf(&r->out, "%.1f d", secs / 86400);
}

static void put_time(struct web_request *r, json_t *v)
{
	time_t t = (time_t)json_number_value(v);
	struct tm tm;
	char buf[32];

	if (!json_is_number(v) || t <= 0 || !localtime_r(&t, &tm)) {
		put(r, "-");
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	put(r, buf);
}

/* Energy in J as "512 J", "3.4 kJ", "1.25 kWh". */
static void put_energy(struct web_request *r, double j)
{
	if (j >= 3.6e5)
		mx_buf_printf(&r->out, "%.2f kWh", j / 3.6e6);
	else if (j >= 1e4)
		mx_buf_printf(&r->out, "%.1f kJ", j / 1e3);
	else
		mx_buf_printf(&r->out, "%.0f J", j);
}

/* A link to PREFIX + SEGMENT (encoded) with TEXT (escaped). */
static void link(struct web_request *r, const char *prefix, const char *segment,
		 const char *label)
{
	put(r, "<a href=\"");
	put(r, prefix);
	mx_url_encode(&r->out, segment);
	put(r, "\">");
	text(r, label);
	put(r, "</a>");
}

static void link_id(struct web_request *r, const char *prefix, json_int_t id)
{
	mx_buf_printf(&r->out, "<a href=\"%s%" PRId64 "\">%" PRId64 "</a>", prefix, (int64_t)id,
		      (int64_t)id);
}

/* A name, or "hidden" when the server runs with --private (JSON null). */
static void personal(struct web_request *r, json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		text(r, json_string_value(v));
	else
		put(r, "<span class=\"muted\">hidden</span>");
}

static void state_badge(struct web_request *r, const char *state)
{
	put(r, "<span class=\"state st-");
	text(r, state);
	put(r, "\">");
	text(r, state);
	put(r, "</span>");
}

static void page_start(struct web_request *r, const char *title)
{
	put(r, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	       "<title>");
	text(r, title);
	put(r, " - MXQ</title><link rel=\"stylesheet\" href=\"/static/mxq-web.css\">");
	if (r->cfg->refresh_s) {
		mx_buf_printf(&r->out, "<noscript><meta http-equiv=\"refresh\" content=\"%u\">"
			      "</noscript><script src=\"/static/mxq-web.js\" defer></script>",
			      r->cfg->refresh_s);
	}
	mx_buf_printf(&r->out, "</head><body data-refresh=\"%u\"><header><nav>"
		      "<a class=\"brand\" href=\"/\">MXQ</a><a href=\"/\">Overview</a>"
		      "<a href=\"/groups\">Groups</a><a href=\"/energy\">Energy</a>"
		      "<a href=\"/api/overview\">JSON</a><a href=\"/metrics\">Metrics</a>"
		      "</nav></header><main><h1>", r->cfg->refresh_s);
	text(r, title);
	put(r, "</h1>");
}

static void page_end(struct web_request *r)
{
	put(r, "</main><footer>mxq-web, read-only");
	if (r->cfg->private_jobs)
		put(r, "; user and job details hidden");
	put(r, "</footer></body></html>\n");
}

/* Links to the other windows of a page at PATH (already safe). */
static void window_links(struct web_request *r, const char *path, const char *current,
			 const char *extra)
{
	put(r, "<p class=\"windows\">window: ");
	for (const struct web_window *w = web_windows; w->name; w++) {
		if (!strcmp(w->name, current))
			mx_buf_printf(&r->out, "<b>%s</b> ", w->name);
		else
			mx_buf_printf(&r->out, "<a href=\"%s?window=%s%s\">%s</a> ", path, w->name,
				      extra ? extra : "", w->name);
	}
	put(r, "</p>");
}

/* Previous/next links for a list of WEB_PAGE_SIZE rows. */
static void page_links(struct web_request *r, const char *path, json_int_t page, size_t rows,
		       const char *extra)
{
	put(r, "<p class=\"pages\">");
	if (page > 1)
		mx_buf_printf(&r->out, "<a href=\"%s?page=%" PRId64 "%s\">newer</a> ", path,
			      (int64_t)page - 1, extra ? extra : "");
	mx_buf_printf(&r->out, "page %" PRId64, (int64_t)page);
	if (rows >= WEB_PAGE_SIZE && page < WEB_PAGE_MAX)
		mx_buf_printf(&r->out, " <a href=\"%s?page=%" PRId64 "%s\">older</a>", path,
			      (int64_t)page + 1, extra ? extra : "");
	put(r, "</p>");
}

/* A chart of up to two series given as JSON arrays of [t, v]. */
static void chart(struct web_request *r, const char *id, const char *title, const char *unit,
		  double t0, double t1, json_t *a, const char *la, json_t *b, const char *lb,
		  enum mxq_chart_style style)
{
	struct mxq_chart c = { .id = id, .title = title, .unit = unit, .t0 = t0, .t1 = t1,
			       .width = CHART_W, .height = CHART_H };
	struct mxq_chart_series s[2] = { { .label = la, .style = style },
					 { .label = lb, .style = style } };
	json_t *src[2] = { a, b };
	double *mem[4] = { NULL, NULL, NULL, NULL };
	size_t n_series = b ? 2 : 1;

	for (size_t k = 0; k < n_series; k++) {
		size_t n = json_array_size(src[k]);
		mem[2 * k] = calloc(n + 1, sizeof(double));
		mem[2 * k + 1] = calloc(n + 1, sizeof(double));
		if (!mem[2 * k] || !mem[2 * k + 1]) {
			r->out.failed = true;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			json_t *p = json_array_get(src[k], i);
			mem[2 * k][i] = json_number_value(json_array_get(p, 0));
			mem[2 * k + 1][i] = json_number_value(json_array_get(p, 1));
		}
		s[k].t = mem[2 * k];
		s[k].v = mem[2 * k + 1];
		s[k].n = n;
	}
	put(r, "<figure>");
	mxq_chart_svg(&r->out, &c, s, n_series);
	put(r, "</figure>");
out:
	for (size_t k = 0; k < 4; k++)
		free(mem[k]);
}

/* A <tr> of label/value cells: "<tr><th>LABEL</th><td>" ... */
static void row_start(struct web_request *r, const char *label)
{
	put(r, "<tr><th>");
	put(r, label);
	put(r, "</th><td>");
}

static void row_end(struct web_request *r)
{
	put(r, "</td></tr>");
}

static void row_text(struct web_request *r, const char *label, const char *value)
{
	row_start(r, label);
	text(r, value && *value ? value : "-");
	row_end(r);
}

/* ------------------------------------------------------------------ */
/* tables shared by pages                                              */

static void nodes_table(struct web_request *r, json_t *hosts, double now)
{
	size_t i;
	json_t *h;

	put(r, "<table class=\"list\" id=\"nodes\"><thead><tr><th>node</th><th>state</th>"
	       "<th>since</th><th>slots</th><th>watts</th><th>reason</th></tr></thead><tbody>");
	json_array_foreach(hosts, i, h) {
		const char *host = jstr(h, "hostname");
		put(r, "<tr class=\"node\" data-host=\"");
		text(r, host);
		put(r, "\" data-state=\"");
		text(r, jstr(h, "state"));
		put(r, "\"><td>");
		link(r, "/node/", host, host);
		put(r, "</td><td>");
		state_badge(r, jstr(h, "state"));
		if (jtrue(h, "admin_off"))
			put(r, " <span class=\"flag\">admin off</span>");
		if (jtrue(h, "excluded"))
			put(r, " <span class=\"flag\">excluded</span>");
		put(r, "</td><td>");
		put_duration(r, now - jnum(h, "state_since_unix"));
		mx_buf_printf(&r->out, "</td><td class=\"num\">%" PRId64 "/%" PRId64 "</td>"
			      "<td class=\"num\">%.0f</td><td class=\"reason\">",
			      (int64_t)jint(h, "slots_used"), (int64_t)jint(h, "slots_total"),
			      jnum(h, "current_watts"));
		text(r, jstr(h, "reason"));
		put(r, "</td></tr>");
	}
	put(r, "</tbody></table>");
	if (!json_array_size(hosts))
		put(r, "<p class=\"muted\">No managed nodes: mxq_power is empty.</p>");
}

static void groups_table(struct web_request *r, json_t *groups)
{
	size_t i;
	json_t *g;

	put(r, "<table class=\"list\" id=\"groups\"><thead><tr><th>group</th><th>name</th>"
	       "<th>user</th><th>status</th><th>queued</th><th>running</th><th>finished</th>"
	       "<th>failed</th><th>cancelled</th></tr></thead><tbody>");
	json_array_foreach(groups, i, g) {
		put(r, "<tr><td>");
		link_id(r, "/group/", jint(g, "group_id"));
		put(r, "</td><td>");
		personal(r, g, "group_name");
		put(r, "</td><td>");
		personal(r, g, "user_name");
		put(r, "</td><td>");
		text(r, jstr(g, "status"));
		mx_buf_printf(&r->out, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%"
			      PRId64 "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%"
			      PRId64 "</td><td class=\"num\">%" PRId64 "</td></tr>",
			      (int64_t)jint(g, "jobs_inq"), (int64_t)jint(g, "jobs_running"),
			      (int64_t)jint(g, "jobs_finished"), (int64_t)jint(g, "jobs_failed"),
			      (int64_t)jint(g, "jobs_cancelled"));
	}
	put(r, "</tbody></table>");
	if (!json_array_size(groups))
		put(r, "<p class=\"muted\">No groups here.</p>");
}

static void jobs_table(struct web_request *r, json_t *jobs)
{
	size_t i;
	json_t *j;

	put(r, "<table class=\"list\" id=\"jobs\"><thead><tr><th>job</th><th>group</th>"
	       "<th>user</th><th>status</th><th>host</th><th>started</th><th>ended</th>"
	       "<th>energy</th></tr></thead><tbody>");
	json_array_foreach(jobs, i, j) {
		put(r, "<tr><td>");
		link_id(r, "/job/", jint(j, "job_id"));
		put(r, "</td><td>");
		link_id(r, "/group/", jint(j, "group_id"));
		put(r, "</td><td>");
		personal(r, j, "user_name");
		put(r, "</td><td>");
		text(r, jstr(j, "status"));
		put(r, "</td><td>");
		if (*jstr(j, "host"))
			link(r, "/node/", jstr(j, "host"), jstr(j, "host"));
		put(r, "</td><td>");
		put_time(r, json_object_get(j, "date_start"));
		put(r, "</td><td>");
		put_time(r, json_object_get(j, "date_end"));
		put(r, "</td><td class=\"num\">");
		if (json_is_number(json_object_get(j, "energy_j")))
			put_energy(r, jnum(j, "energy_j"));
		else
			put(r, "-");
		put(r, "</td></tr>");
	}
	put(r, "</tbody></table>");
	if (!json_array_size(jobs))
		put(r, "<p class=\"muted\">No jobs here.</p>");
}

/* Why queued jobs wait: the qualification of every node and the leader's word. */
static void waiting_section(struct web_request *r, json_t *w)
{
	size_t i;
	json_t *h;

	if (!json_is_object(w))
		return;
	put(r, "<section id=\"waiting\"><h2>Why it waits</h2><p>");
	mx_buf_printf(&r->out, "%" PRId64 " job(s) queued. %" PRId64 " of %" PRId64
		      " managed node(s) qualify for this group; %" PRId64
		      " of those are on or booting.", (int64_t)jint(w, "jobs_inq"),
		      (int64_t)jint(w, "qualified"), (int64_t)jint(w, "nodes"),
		      (int64_t)jint(w, "qualified_with_capacity"));
	if (jtrue(w, "group_cancelled"))
		put(r, " The group is cancelled: its jobs will not start.");
	else if (jint(w, "qualified") == 0)
		put(r, " No node qualifies: the jobs wait until one with what they need registers.");
	else if (jint(w, "qualified_with_capacity") == 0)
		put(r, " Every qualified node is off or unavailable: the power manager decides "
		       "whether to wake one (its explanation per node below).");
	put(r, "</p><table class=\"list\"><thead><tr><th>node</th><th>state</th>"
	       "<th>qualifies?</th><th>power manager</th></tr></thead><tbody>");
	json_array_foreach(json_object_get(w, "hosts"), i, h) {
		put(r, "<tr><td>");
		link(r, "/node/", jstr(h, "hostname"), jstr(h, "hostname"));
		put(r, "</td><td>");
		state_badge(r, jstr(h, "state"));
		put(r, "</td><td>");
		text(r, jtrue(h, "qualified") ? "yes" : jstr(h, "rule"));
		put(r, "</td><td class=\"reason\">");
		text(r, jstr(h, "explanation"));
		put(r, "</td></tr>");
	}
	put(r, "</tbody></table></section>");
}

/* ------------------------------------------------------------------ */
/* pages                                                               */

static void savings_table(struct web_request *r, json_t *savings)
{
	size_t i;
	json_t *s;

	put(r, "<table class=\"list\" id=\"savings\"><thead><tr><th>window</th>"
	       "<th>saved</th><th>% of always-on idle</th><th>node-hours off</th>"
	       "<th>idle baseline (sum)</th><th>boots</th><th>boot energy</th>"
	       "<th>always-on idle energy</th></tr></thead><tbody>");
	json_array_foreach(savings, i, s) {
		put(r, "<tr><td>last ");
		text(r, jstr(s, "window"));
		mx_buf_printf(&r->out, "</td><td class=\"num\"><b>%.3f kWh</b></td>"
			      "<td class=\"num\">%.1f %%</td><td class=\"num\">%.2f</td>"
			      "<td class=\"num\">%.0f W</td><td class=\"num\">%" PRId64 "</td>"
			      "<td class=\"num\">%.3f kWh</td><td class=\"num\">%.3f kWh</td></tr>",
			      jnum(s, "saved_kwh"), jnum(s, "saved_percent_of_idle"),
			      jnum(s, "node_off_hours"), jnum(s, "idle_baseline_watts_sum"),
			      (int64_t)jint(s, "boots"), jnum(s, "boot_energy_kwh"),
			      jnum(s, "always_on_idle_kwh"));
	}
	put(r, "</tbody></table><p class=\"note\">Saved = the hours each node was OFF times "
	       "its idle baseline (what it would have drawn doing nothing), minus the energy "
	       "of the boots (each node's measured boot energy per boot). From the power "
	       "events and the nodes' energy records.");
	json_array_foreach(savings, i, s) {
		if (jint(s, "nodes_without_baseline"))
			mx_buf_printf(&r->out, " %" PRId64 " node(s) have no idle baseline yet and "
				      "count 0.", (int64_t)jint(s, "nodes_without_baseline"));
		if (jtrue(s, "events_cut"))
			mx_buf_printf(&r->out, " Only the newest %d events were read: the %s figure "
				      "is a lower bound.", WEB_EVENTS_MAX, jstr(s, "window"));
		break;
	}
	put(r, "</p>");
}

void web_html_overview(struct web_request *r, json_t *doc)
{
	json_t *t = json_object_get(doc, "totals"), *l = json_object_get(doc, "leader");
	json_t *q = json_object_get(doc, "queue"), *by = json_object_get(t, "by_state"), *v;
	double now = jnum(doc, "now"), w = jnum(doc, "window_s");
	const char *k;

	page_start(r, "Cluster overview");
	put(r, "<section class=\"cards\"><div class=\"card\" id=\"card-nodes\"><h2>Nodes</h2>");
	mx_buf_printf(&r->out, "<p class=\"big\">%" PRId64 "</p><p>", (int64_t)jint(t, "nodes"));
	json_object_foreach(by, k, v) {
		state_badge(r, k);
		mx_buf_printf(&r->out, " %" PRId64 " ", (int64_t)json_integer_value(v));
	}
	mx_buf_printf(&r->out, "</p></div><div class=\"card\" id=\"card-power\"><h2>Power</h2>"
		      "<p class=\"big\">%.0f W</p><p>slots %" PRId64 "/%" PRId64 " used</p></div>",
		      jnum(t, "watts"), (int64_t)jint(t, "slots_used"),
		      (int64_t)jint(t, "slots_total"));
	mx_buf_printf(&r->out, "<div class=\"card\" id=\"card-queue\"><h2>Queue</h2>"
		      "<p class=\"big\">%" PRId64 " queued</p><p>%" PRId64 " running in %" PRId64
		      " active group(s); %" PRId64 " failed, %" PRId64 " finished there</p></div>",
		      (int64_t)jint(q, "inq"), (int64_t)jint(q, "running"),
		      (int64_t)jint(q, "groups_active"), (int64_t)jint(q, "failed"),
		      (int64_t)jint(q, "finished"));
	put(r, "<div class=\"card\" id=\"card-leader\"><h2>Power manager</h2>");
	if (jtrue(l, "active")) {
		put(r, "<p class=\"big\">");
		text(r, jstr(l, "holder"));
		mx_buf_printf(&r->out, "</p><p>epoch %" PRId64 "%s", (int64_t)jint(l, "epoch"),
			      jtrue(l, "dry_run") ? ", <b>dry run</b>" : ", acting");
		if (json_is_integer(json_object_get(l, "last_tick_age_s"))) {
			put(r, ", last tick ");
			put_duration(r, (double)jint(l, "last_tick_age_s"));
			put(r, " ago");
		}
		put(r, "</p><p class=\"reason\">");
		text(r, jstr(l, "tick_summary"));
		put(r, "</p>");
	} else {
		put(r, "<p class=\"big\">none</p><p>no leader holds the lease: nothing is switched "
		       "on or off automatically</p>");
	}
	put(r, "</div></section>");

	put(r, "<section id=\"charts\"><h2>Over time</h2>");
	window_links(r, "/", jstr(doc, "window"), NULL);
	chart(r, "chart-power", "Cluster power", "W", now - w, now,
	      json_object_get(doc, "cluster_power_w"), "all nodes", NULL, NULL, MXQ_CHART_LINE);
	chart(r, "chart-onoff", "Nodes on and off", "nodes", now - w, now,
	      json_object_get(doc, "nodes_on"), "powered", json_object_get(doc, "nodes_off"), "off",
	      MXQ_CHART_STEP);
	put(r, "</section><section><h2>Energy saved against always-on</h2>");
	savings_table(r, json_object_get(doc, "savings"));
	put(r, "</section><section><h2>Nodes</h2>");
	nodes_table(r, json_object_get(doc, "hosts"), now);
	put(r, "</section><section><h2>Active groups</h2>");
	groups_table(r, json_object_get(doc, "groups"));
	put(r, "<p><a href=\"/groups\">all active groups</a> &middot; "
	       "<a href=\"/groups?all=1\">every group</a></p></section>");
	page_end(r);
}

void web_html_node(struct web_request *r, json_t *doc)
{
	json_t *n = json_object_get(doc, "node"), *e = json_object_get(doc, "energy"), *ev;
	double now = jnum(doc, "now"), w = jnum(doc, "window_s");
	char path[400];
	struct mx_buf p;
	size_t i;

	page_start(r, jstr(n, "hostname"));
	put(r, "<section><table class=\"kv\" id=\"node\">");
	row_start(r, "state");
	state_badge(r, jstr(n, "state"));
	put(r, " for ");
	put_duration(r, now - jnum(n, "state_since_unix"));
	row_end(r);
	row_text(r, "reason", jstr(n, "reason"));
	row_text(r, "power manager says", jstr(n, "explanation"));
	row_start(r, "slots");
	mx_buf_printf(&r->out, "%" PRId64 "/%" PRId64 " used, %" PRId64 " job(s) running",
		      (int64_t)jint(n, "slots_used"), (int64_t)jint(n, "slots_total"),
		      (int64_t)jint(n, "jobs_running"));
	row_end(r);
	row_start(r, "power");
	mx_buf_printf(&r->out, "%.0f W", jnum(n, "current_watts"));
	row_end(r);
	row_start(r, "transports");
	text(r, jstr(n, "transport_on"));
	put(r, " / ");
	text(r, jstr(n, "transport_off"));
	row_end(r);
	row_start(r, "failures");
	mx_buf_printf(&r->out, "%" PRId64 " ", (int64_t)jint(n, "failure_count"));
	text(r, jstr(n, "failure_reason"));
	row_end(r);
	if (json_is_object(e)) {
		row_start(r, "energy measured");
		put_energy(r, jnum(e, "total_j"));
		put(r, " (");
		text(r, *jstr(e, "method") ? jstr(e, "method") : "not measured");
		put(r, "): jobs ");
		put_energy(r, jnum(e, "jobs_j"));
		put(r, ", idle ");
		put_energy(r, jnum(e, "idle_j"));
		put(r, ", boots ");
		put_energy(r, jnum(e, "boot_j"));
		put(r, ", shutdowns ");
		put_energy(r, jnum(e, "shutdown_j"));
		mx_buf_printf(&r->out, "; idle baseline %.0f W, %" PRId64 " boot(s)",
			      jnum(e, "idle_baseline_watts"), (int64_t)jint(e, "boot_count"));
		row_end(r);
	}
	put(r, "</table></section><section id=\"charts\"><h2>Power and energy</h2>");
	mx_buf_init(&p, sizeof(path) - 1);
	mx_buf_puts(&p, "/node/");
	mx_url_encode(&p, jstr(n, "hostname"));
	snprintf(path, sizeof(path), "%s", p.failed || !p.data ? "/" : p.data);
	mx_buf_free(&p);
	window_links(r, path, jstr(doc, "window"), NULL);
	chart(r, "chart-node-power", "Power", "W", now - w, now, json_object_get(doc, "power_w"),
	      "node", NULL, NULL, MXQ_CHART_LINE);
	chart(r, "chart-node-energy", "Energy in this window", "Wh", now - w, now,
	      json_object_get(doc, "energy_wh"), "node", NULL, NULL, MXQ_CHART_LINE);
	put(r, "</section><section><h2>Power events</h2><table class=\"list\" id=\"events\">"
	       "<thead><tr><th>time</th><th>from</th><th>to</th><th>by</th><th>reason</th></tr>"
	       "</thead><tbody>");
	json_array_foreach(json_object_get(doc, "events"), i, ev) {
		put(r, "<tr><td>");
		put_time(r, json_object_get(ev, "time"));
		put(r, "</td><td>");
		state_badge(r, jstr(ev, "from"));
		put(r, "</td><td>");
		state_badge(r, jstr(ev, "to"));
		put(r, "</td><td>");
		text(r, jstr(ev, "actor"));
		put(r, "</td><td class=\"reason\">");
		text(r, jstr(ev, "reason"));
		put(r, "</td></tr>");
	}
	put(r, "</tbody></table><h2>Jobs that ran here</h2>");
	jobs_table(r, json_object_get(doc, "jobs"));
	page_links(r, path, jint(doc, "page"), json_array_size(json_object_get(doc, "jobs")), NULL);
	put(r, "</section>");
	page_end(r);
}

void web_html_groups(struct web_request *r, json_t *doc)
{
	bool all = jtrue(doc, "all");

	page_start(r, all ? "Every group" : "Active groups");
	groups_table(r, json_object_get(doc, "groups"));
	page_links(r, "/groups", jint(doc, "page"),
		   json_array_size(json_object_get(doc, "groups")), all ? "&amp;all=1" : NULL);
	page_end(r);
}

void web_html_group(struct web_request *r, json_t *doc)
{
	json_t *g = json_object_get(doc, "group"), *e = json_object_get(doc, "energy"), *h;
	char title[64], path[64];
	size_t i;

	snprintf(title, sizeof(title), "Group %" PRId64, (int64_t)jint(g, "group_id"));
	snprintf(path, sizeof(path), "/group/%" PRId64, (int64_t)jint(g, "group_id"));
	page_start(r, title);
	put(r, "<section><table class=\"kv\" id=\"group\">");
	row_start(r, "name");
	personal(r, g, "group_name");
	row_end(r);
	row_start(r, "user");
	personal(r, g, "user_name");
	row_end(r);
	row_start(r, "status");
	text(r, jstr(g, "status"));
	if (jtrue(g, "closed"))
		put(r, " (closed: takes no new jobs)");
	row_end(r);
	row_start(r, "jobs");
	mx_buf_printf(&r->out, "%" PRId64 " queued, %" PRId64 " running, %" PRId64 " finished, %"
		      PRId64 " failed, %" PRId64 " cancelled (of %" PRId64 ")",
		      (int64_t)jint(g, "jobs_inq"), (int64_t)jint(g, "jobs_running"),
		      (int64_t)jint(g, "jobs_finished"), (int64_t)jint(g, "jobs_failed"),
		      (int64_t)jint(g, "jobs_cancelled"), (int64_t)jint(g, "jobs"));
	row_end(r);
	row_start(r, "each job needs");
	mx_buf_printf(&r->out, "%" PRId64 " thread(s), %" PRId64 " MiB, %" PRId64 " min, %" PRId64
		      " GPU(s), %" PRId64 " GiB tmpdir", (int64_t)jint(g, "threads"),
		      (int64_t)jint(g, "memory_mib"), (int64_t)jint(g, "time_min"),
		      (int64_t)jint(g, "gpus"), (int64_t)jint(g, "tmpdir_gib"));
	row_end(r);
	row_text(r, "tags", jstr(g, "tags"));
	row_text(r, "prerequisites", jstr(g, "prerequisites"));
	row_start(r, "energy");
	put(r, "<span id=\"group-energy\">");
	put_energy(r, jnum(e, "energy_j"));
	mx_buf_printf(&r->out, "</span> over %" PRId64 " measured job(s)",
		      (int64_t)jint(e, "jobs_measured"));
	if (jtrue(e, "jobs_cut"))
		mx_buf_printf(&r->out, " of its newest %d that ran: a lower bound", WEB_GROUP_JOBS_MAX);
	row_end(r);
	row_start(r, jtrue(e, "jobs_cut") ? "its newest jobs ran on" : "ran on");
	json_array_foreach(json_object_get(doc, "hosts"), i, h) {
		link(r, "/node/", jstr(h, "host"), jstr(h, "host"));
		mx_buf_printf(&r->out, " (%" PRId64 " jobs, ", (int64_t)jint(h, "jobs"));
		put_energy(r, jnum(h, "energy_j"));
		put(r, ") ");
	}
	if (!json_array_size(json_object_get(doc, "hosts")))
		put(r, "nowhere yet");
	row_end(r);
	put(r, "</table></section>");
	waiting_section(r, json_object_get(doc, "waiting"));
	put(r, "<section><h2>Jobs</h2>");
	jobs_table(r, json_object_get(doc, "jobs"));
	page_links(r, path, jint(doc, "page"), json_array_size(json_object_get(doc, "jobs")), NULL);
	put(r, "</section>");
	page_end(r);
}

void web_html_job(struct web_request *r, json_t *doc)
{
	json_t *j = json_object_get(doc, "job"), *e = json_object_get(j, "energy"), *a;
	char title[64];
	size_t i;

	snprintf(title, sizeof(title), "Job %" PRId64, (int64_t)jint(j, "job_id"));
	page_start(r, title);
	put(r, "<section><table class=\"kv\" id=\"job\">");
	row_text(r, "status", jstr(j, "status"));
	row_start(r, "group");
	link_id(r, "/group/", jint(j, "group_id"));
	put(r, " ");
	personal(r, j, "group_name");
	row_end(r);
	row_start(r, "user");
	personal(r, j, "user_name");
	row_end(r);
	row_start(r, "ran on");
	if (*jstr(j, "host"))
		link(r, "/node/", jstr(j, "host"), jstr(j, "host"));
	else
		put(r, "not started");
	mx_buf_printf(&r->out, " (%" PRId64 " slot(s))", (int64_t)jint(j, "slots"));
	row_end(r);
	row_start(r, "submitted");
	put_time(r, json_object_get(j, "date_submit"));
	row_end(r);
	row_start(r, "started");
	put_time(r, json_object_get(j, "date_start"));
	row_end(r);
	row_start(r, "ended");
	put_time(r, json_object_get(j, "date_end"));
	row_end(r);
	if (json_is_array(json_object_get(j, "argv"))) {
		row_start(r, "command");
		put(r, "<code>");
		json_array_foreach(json_object_get(j, "argv"), i, a) {
			if (i)
				put(r, " ");
			text(r, json_string_value(a));
		}
		put(r, "</code>");
		row_end(r);
		row_text(r, "work directory", jstr(j, "workdir"));
		row_text(r, "stdout", jstr(j, "stdout"));
		row_text(r, "stderr", jstr(j, "stderr"));
	}
	put(r, "</table></section><section id=\"energy\"><h2>Energy</h2>");
	if (json_is_object(e)) {
		put(r, "<table class=\"kv\">");
		row_start(r, "energy");
		put(r, "<span id=\"job-energy\">");
		put_energy(r, jnum(e, "energy_j"));
		mx_buf_printf(&r->out, "</span> (%.1f J)", jnum(e, "energy_j"));
		row_end(r);
		row_start(r, "above idle");
		put_energy(r, jnum(e, "active_energy_j"));
		row_end(r);
		row_start(r, "power");
		mx_buf_printf(&r->out, "%.1f W average, %.1f W peak, node idle baseline %.1f W",
			      jnum(e, "avg_watts"), jnum(e, "peak_watts"),
			      jnum(e, "idle_baseline_watts"));
		row_end(r);
		row_start(r, "measured by");
		text(r, jstr(e, "method"));
		put(r, !strcmp(jstr(e, "method"), "model") ? " (an estimate from the power model)" : "");
		put(r, ", ");
		text(r, jstr(e, "completeness"));
		mx_buf_printf(&r->out, ", %" PRId64 " interval(s)", (int64_t)jint(e, "samples"));
		row_end(r);
		put(r, "</table>");
		{
			double t0 = jnum(e, "date_start");
			double t1 = json_is_number(json_object_get(e, "date_end")) ?
				    jnum(e, "date_end") : (double)time(NULL);
			if (t1 <= t0)
				t1 = t0 + 1;
			chart(r, "chart-job-power", "Power of this job", "W", t0, t1,
			      json_object_get(doc, "power_w"), "job", NULL, NULL, MXQ_CHART_LINE);
		}
	} else {
		put(r, "<p class=\"muted\">No energy recorded for this job (not started yet, or its "
		       "node does not measure).</p>");
	}
	put(r, "</section>");
	waiting_section(r, json_object_get(doc, "waiting"));
	page_end(r);
}

void web_html_energy(struct web_request *r, json_t *doc)
{
	static const char *const bys[] = { "user", "host", "group" };
	const char *by = jstr(doc, "by");
	char extra[32];
	size_t i;
	json_t *row;
	double total = 0;

	page_start(r, "Energy of jobs");
	snprintf(extra, sizeof(extra), "&amp;by=%s", by);
	window_links(r, "/energy", jstr(doc, "window"), extra);
	put(r, "<p class=\"windows\">by: ");
	for (size_t k = 0; k < MX_ARRAY_SIZE(bys); k++) {
		if (!strcmp(bys[k], by))
			mx_buf_printf(&r->out, "<b>%s</b> ", bys[k]);
		else if (!r->cfg->private_jobs || !strcmp(bys[k], "host"))
			mx_buf_printf(&r->out, "<a href=\"/energy?by=%s&amp;window=%s\">%s</a> ",
				      bys[k], jstr(doc, "window"), bys[k]);
	}
	put(r, "</p><table class=\"list\" id=\"energy-table\"><thead><tr><th>");
	text(r, by);
	put(r, "</th><th>jobs</th><th>running</th><th>energy</th><th>kWh</th><th>above idle</th>"
	       "</tr></thead><tbody>");
	json_array_foreach(json_object_get(doc, "rows"), i, row) {
		put(r, "<tr><td>");
		if (!strcmp(by, "host"))
			link(r, "/node/", jstr(row, "key"), jstr(row, "key"));
		else if (!strcmp(by, "group"))
			link(r, "/group/", jstr(row, "key"), jstr(row, "key"));
		else
			text(r, jstr(row, "key"));
		mx_buf_printf(&r->out, "</td><td class=\"num\">%" PRId64 "</td><td class=\"num\">%"
			      PRId64 "</td><td class=\"num\">", (int64_t)jint(row, "jobs"),
			      (int64_t)jint(row, "running"));
		put_energy(r, jnum(row, "energy_j"));
		mx_buf_printf(&r->out, "</td><td class=\"num\">%.4f</td><td class=\"num\">",
			      jnum(row, "energy_kwh"));
		put_energy(r, jnum(row, "active_energy_j"));
		put(r, "</td></tr>");
		total += jnum(row, "energy_j");
	}
	put(r, "</tbody></table><p class=\"note\">Jobs that started in the window, the ");
	mx_buf_printf(&r->out, "%" PRId64 " largest; together ", (int64_t)jint(doc, "limit"));
	put_energy(r, total);
	put(r, ". A job's energy is its share of its node's energy while it ran.</p>");
	page_end(r);
}

void web_html_error(struct web_request *r)
{
	char title[32];

	snprintf(title, sizeof(title), "Error %u", r->status);
	page_start(r, title);
	put(r, "<p class=\"error\">");
	text(r, r->error);
	put(r, "</p><p><a href=\"/\">overview</a></p>");
	page_end(r);
}

/* ------------------------------------------------------------------ */
/* static files                                                        */

const char web_css[] =
"body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2327;background:#f4f5f7}\n"
"header{background:#22313f;padding:.5em 1em}nav a{color:#dfe6ec;margin-right:1.2em;"
"text-decoration:none}nav a.brand{font-weight:bold;color:#fff}\n"
"main{padding:0 1em 1em;max-width:1200px}h1{font-size:1.5em}h2{font-size:1.1em;margin:1em 0 .4em}\n"
"section{background:#fff;border:1px solid #dde1e5;border-radius:6px;padding:.6em 1em;margin:.8em 0}\n"
".cards{display:flex;flex-wrap:wrap;gap:1em;background:none;border:0;padding:0}\n"
".card{flex:1 1 200px;background:#fff;border:1px solid #dde1e5;border-radius:6px;padding:.2em 1em}\n"
".big{font-size:1.6em;margin:.2em 0;overflow-wrap:anywhere}\n"
"table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.25em .5em;"
"border-bottom:1px solid #eceef0;vertical-align:top}\n"
"table.kv th{width:12em;color:#555;font-weight:normal}td.num{text-align:right;"
"font-variant-numeric:tabular-nums}\n"
".reason{color:#444;max-width:40em;overflow-wrap:anywhere}.muted,.note{color:#666}"
".error{color:#a00;font-weight:bold}\n"
".state{display:inline-block;padding:0 .5em;border-radius:3px;color:#fff;font-size:.85em;"
"font-weight:bold;background:#777}\n"
".st-ON{background:#2e7d32}.st-DRAINING{background:#ef6c00}.st-POWERING_OFF{background:#c48a00}"
".st-OFF{background:#607d8b}.st-POWERING_ON{background:#1565c0}.st-FAILED{background:#c62828}"
".st-UNKNOWN{background:#6a1b9a}\n"
".flag{font-size:.8em;border:1px solid #999;border-radius:3px;padding:0 .3em}\n"
"figure{display:inline-block;margin:.3em 1em .3em 0}svg.chart{background:#fff;"
"max-width:100%;height:auto}\n"
".grid line{stroke:#e3e6e8;stroke-width:1}.ylab{font-size:11px;text-anchor:end;fill:#555}"
".xlab{font-size:11px;text-anchor:middle;fill:#555}\n"
".ctitle{font-size:13px;font-weight:bold;fill:#1d2327}.legend{font-size:11px;fill:#333}"
".nodata{font-size:13px;text-anchor:middle;fill:#888}\n"
"path.series{fill:none;stroke-width:2}path.s0{stroke:#1565c0}path.s1{stroke:#9e9e9e}"
"rect.s0,circle.s0{fill:#1565c0}rect.s1,circle.s1{fill:#9e9e9e}\n"
"footer{color:#777;padding:1em;font-size:.85em}code{overflow-wrap:anywhere}\n";

/* Refresh in place: fetch the page, swap <main>; on any failure keep the
 * old content and try again next period. */
const char web_js[] =
"(function () {\n"
"  'use strict';\n"
"  var period = parseInt(document.body.getAttribute('data-refresh'), 10);\n"
"  if (!(period > 0) || !window.fetch || !window.DOMParser) return;\n"
"  function swap() {\n"
"    fetch(location.href, { cache: 'no-store', credentials: 'same-origin' })\n"
"      .then(function (res) { if (!res.ok) throw new Error(res.status); return res.text(); })\n"
"      .then(function (html) {\n"
"        var doc = new DOMParser().parseFromString(html, 'text/html');\n"
"        var fresh = doc.querySelector('main'), old = document.querySelector('main');\n"
"        if (fresh && old) old.replaceWith(document.importNode(fresh, true));\n"
"        document.body.setAttribute('data-updated', String(Date.now()));\n"
"      })\n"
"      .catch(function () {})\n"
"      .then(function () { setTimeout(swap, period * 1000); });\n"
"  }\n"
"  setTimeout(swap, period * 1000);\n"
"})();\n";
