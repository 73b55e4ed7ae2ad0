/*
 * mxq-web - the read-only status page of an MXQ cluster: nodes and their
 * power states, the queue, energy, charts; the same data as JSON under
 * /api/ and the energy metrics for Prometheus on /metrics.
 *
 *   mxq-web [--listen ADDR:PORT] [-M FILE] [-S GROUP] [--private]
 *           [--refresh SECS] [--threads N] [--max-connections N]
 *           [--max-per-address N] [--timeout SECS] [--request-timeout SECS]
 *           [--allow-host NAME]...
 *
 * HTTP: libmicrohttpd (Debian's libmicrohttpd12): a small, well-kept
 * embedded server that does the HTTP parsing, keep-alive and timeouts, so
 * this program only routes. It runs a fixed pool of --threads worker
 * threads, each with its own database connection (opened on first use,
 * reopened after a loss, in a read-only session); --max-connections and
 * --max-per-address bound the sockets, --timeout closes idle ones, and a
 * request's headers must fit into REQUEST_MEMORY bytes. libmicrohttpd's
 * timeout only counts silence, so a client trickling header lines would
 * keep its slot for ever: mx_sockguard gives every request a deadline for
 * its headers (--request-timeout from the accept or the previous
 * response) and, while every slot is taken and a client waits, closes the
 * connection that has waited longest for its request after ROOM_GRACE_MS.
 * The Host header must name an IP address or a name of this machine
 * (--allow-host adds names): a page rebound by DNS gets 421. Only GET and
 * HEAD are served (405 otherwise); a request with a body gets 400. The raw
 * request target is parsed here (mx_url) before anything looks at it:
 * junk is 400, an unknown path 404.
 *
 * Configuration: -M/-S as the other tools (else $MXQ_MYSQL_DEFAULT_FILE,
 * $MXQ_MYSQL_DEFAULT_GROUP, else /etc/mxq/mysql.cnf group mxqclient); the
 * account needs SELECT only (see mxq-web(8)). --private leaves user names,
 * group names and job commands out of every page and document.
 *
 * Errors: a bad option is one line and exit 2; a listen address that cannot
 * be bound exit 1. A database that cannot be reached at start is logged
 * and every page answers 503 until it can. SIGINT/SIGTERM stop cleanly.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "mx_db.h"
#include "mx_log.h"
#include "mx_sockguard.h"
#include "mx_util.h"
#include "mxq_client.h"
#include "mxq_json.h"
#include "mxq-web.h"
#include "mxq_metrics.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif

#define DEFAULT_PORT 8095
#define REQUEST_MEMORY (32 * 1024)    /* per connection: headers must fit */
#define BODY_MAX (8 * 1024 * 1024)    /* largest response built */
#define PER_ADDRESS_DEFAULT 16       /* at most half of --max-connections */
#define ROOM_GRACE_MS 1000            /* a newcomer waits about this long for a slot */
#define ALLOW_HOSTS_MAX 32            /* --allow-host given at most */

static const char usage_text[] =
"usage: mxq-web [OPTIONS]\n"
"\n"
"  -l, --listen ADDR:PORT     address to serve on (default 127.0.0.1:%d;\n"
"                             [::1]:PORT for IPv6)\n"
"  -M, --mysql-default-file FILE   MySQL defaults file (default: $MXQ_MYSQL_DEFAULT_FILE or %s)\n"
"  -S, --mysql-default-group NAME  group in that file (default: $MXQ_MYSQL_DEFAULT_GROUP or %s)\n"
"      --private              show no user names, group names or job commands\n"
"      --refresh SECS         pages refresh themselves every SECS (default 30, 0 = never)\n"
"      --threads N            worker threads, one database connection each (default 4)\n"
"      --max-connections N    open connections at most (default 64)\n"
"      --max-per-address N    of them from one client address (default 16, 0 = no\n"
"                             limit: behind a reverse proxy)\n"
"      --timeout SECS         close idle connections after SECS (default 15)\n"
"      --request-timeout SECS a request's headers must arrive within SECS of the\n"
"                             connection or the previous response (default 10)\n"
"      --allow-host NAME      serve requests for host NAME too, besides IP addresses,\n"
"                             localhost and this machine's names (repeatable; '*': any)\n"
"  -h, --help                 show this help\n"
"  -V, --version              show the version\n";

static volatile sig_atomic_t stop_requested;
/* each worker thread's connection, closed when the thread ends */
static __thread struct mx_db *worker_db;
static __thread uint64_t worker_db_readonly; /* connects count the session was made read-only at */
static pthread_key_t worker_db_key;
/* the deadlines of every connection, set before the server starts */
static struct mx_sockguard *conn_guard;

static void worker_db_close(void *db)
{
	mx_db_close(db);
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* ------------------------------------------------------------------ */
/* helpers for the handlers (mxq-web.h)                                */

void *web_fail(struct web_request *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	return NULL;
}

const struct web_window *web_window_param(struct web_request *r, const char *def)
{
	const char *name = mx_url_param(r->url, "window");

	if (!name)
		name = def;
	for (const struct web_window *w = web_windows; w->name; w++)
		if (!strcmp(w->name, name))
			return w;
	return web_fail(r, 400, "window= takes 1h, 6h, 1d, 7d or 30d");
}

int64_t web_page_param(struct web_request *r)
{
	const char *s = mx_url_param(r->url, "page");
	uint32_t page;

	if (!s)
		return 0;
	if (mx_strtou32(s, &page) < 0 || page < 1 || page > WEB_PAGE_MAX) {
		web_fail(r, 400, "page= takes a number from 1 to %d", WEB_PAGE_MAX);
		return -1;
	}
	return (int64_t)page - 1;
}

/* ------------------------------------------------------------------ */
/* routing                                                             */

enum route_kind { R_HTML, R_JSON, R_METRICS, R_STATIC };

/* A path pattern: literal segments, "*" any name, "#" a positive id. */
struct route {
	const char *pattern[3];
	enum route_kind kind;
	json_t *(*data)(struct web_request *r);
	json_t *(*data_name)(struct web_request *r, const char *name);
	json_t *(*data_id)(struct web_request *r, uint64_t id);
	void (*html)(struct web_request *r, json_t *doc);
	const char *text, *type;   /* static files */
};

static const struct route routes[] = {
	{ { NULL }, R_HTML, web_data_overview, NULL, NULL, web_html_overview, NULL, NULL },
	{ { "node", "*" }, R_HTML, NULL, web_data_node, NULL, web_html_node, NULL, NULL },
	{ { "groups" }, R_HTML, web_data_groups, NULL, NULL, web_html_groups, NULL, NULL },
	{ { "group", "#" }, R_HTML, NULL, NULL, web_data_group, web_html_group, NULL, NULL },
	{ { "job", "#" }, R_HTML, NULL, NULL, web_data_job, web_html_job, NULL, NULL },
	{ { "energy" }, R_HTML, web_data_energy, NULL, NULL, web_html_energy, NULL, NULL },
	{ { "api", "overview" }, R_JSON, web_data_overview, NULL, NULL, NULL, NULL, NULL },
	{ { "api", "nodes" }, R_JSON, web_data_nodes, NULL, NULL, NULL, NULL, NULL },
	{ { "api", "nodes", "*" }, R_JSON, NULL, web_data_node, NULL, NULL, NULL, NULL },
	{ { "api", "groups" }, R_JSON, web_data_groups, NULL, NULL, NULL, NULL, NULL },
	{ { "api", "groups", "#" }, R_JSON, NULL, NULL, web_data_group, NULL, NULL, NULL },
	{ { "api", "jobs", "#" }, R_JSON, NULL, NULL, web_data_job, NULL, NULL, NULL },
	{ { "api", "energy" }, R_JSON, web_data_energy, NULL, NULL, NULL, NULL, NULL },
	{ { "metrics" }, R_METRICS, NULL, NULL, NULL, NULL, NULL, NULL },
	{ { "static", "mxq-web.css" }, R_STATIC, NULL, NULL, NULL, NULL, web_css,
	  "text/css; charset=utf-8" },
	{ { "static", "mxq-web.js" }, R_STATIC, NULL, NULL, NULL, NULL, web_js,
	  "text/javascript; charset=utf-8" },
};

/* Does U's path match ROUTE? The variable segment goes to *ret_var. */
static bool route_match(const struct route *rt, const struct mx_url *u, const char **ret_var)
{
	size_t n = 0;

	while (n < MX_ARRAY_SIZE(rt->pattern) && rt->pattern[n])
		n++;
	if (u->n_segs != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(rt->pattern[i], "*") || !strcmp(rt->pattern[i], "#"))
			*ret_var = u->segs[i];
		else if (strcmp(rt->pattern[i], u->segs[i]))
			return false;
	}
	return true;
}

static bool route_has_id(const struct route *rt)
{
	for (size_t i = 0; i < MX_ARRAY_SIZE(rt->pattern) && rt->pattern[i]; i++)
		if (!strcmp(rt->pattern[i], "#"))
			return true;
	return false;
}

static int db_ready(struct web_request *r)
{
	char err[256];
	int e;

	if (!worker_db) {
		e = mx_db_connect(&worker_db, r->cfg->defaults_file, r->cfg->db_group, err,
				  sizeof(err));
		if (e < 0) {
			mx_log_err("database: %s", err);
			web_fail(r, 503, "the database cannot be reached");
			return e;
		}
		pthread_setspecific(worker_db_key, worker_db);
	}
	e = mx_db_ensure(worker_db);
	if (e < 0) {
		web_fail(r, 503, "the database cannot be reached: %s", mx_db_error(worker_db));
		return e;
	}
	/* belt and braces, on every new session (also after a reconnect or a
	 * failover): the account should only have SELECT anyway */
	if (mx_db_stats(worker_db)->connects != worker_db_readonly) {
		if (mx_db_exec(worker_db, "SET SESSION TRANSACTION READ ONLY", NULL) < 0)
			mx_log_warning("database: cannot make the session read-only: %s",
				       mx_db_error(worker_db));
		worker_db_readonly = mx_db_stats(worker_db)->connects;
	}
	r->db = worker_db;
	return 0;
}

static void json_out(struct web_request *r, json_t *doc)
{
	char *text = mxq_json_dumps(doc);

	if (!text) {
		web_fail(r, 500, "out of memory");
		return;
	}
	mx_buf_puts(&r->out, text);
	mx_buf_puts(&r->out, "\n");
	free(text);
}

static void metrics_out(struct web_request *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int e;

	if (!f) {
		web_fail(r, 500, "out of memory");
		return;
	}
	e = mxq_metrics_write(r->db, f);
	if (fclose(f) != 0 && e == 0)
		e = -ENOMEM;
	if (e < 0)
		web_fail(r, e == -ENOMEM ? 500 : 503, "reading the metrics: %s",
			 e == -ENOMEM ? "out of memory" : mx_db_error(r->db));
	else
		mx_buf_add(&r->out, text, len);
	free(text);
}

/* Fill R's response for its URL. */
static void handle(struct web_request *r)
{
	const struct route *rt = NULL;
	const char *var = NULL;
	json_t *doc = NULL;
	uint64_t id = 0;

	for (size_t i = 0; i < MX_ARRAY_SIZE(routes) && !rt; i++)
		if (route_match(&routes[i], r->url, &var))
			rt = &routes[i];
	if (!rt) {
		web_fail(r, 404, "no such page");
		goto error;
	}
	if (rt->kind == R_STATIC) {
		r->content_type = rt->type;
		mx_buf_puts(&r->out, rt->text);
		return;
	}
	if (route_has_id(rt) && (mx_strtou64(var, &id) < 0 || id == 0)) {
		web_fail(r, 404, "not an id: ids are positive numbers");
		goto error;
	}
	if (db_ready(r) < 0)
		goto error;
	if (rt->kind == R_METRICS) {
		r->content_type = "text/plain; version=0.0.4; charset=utf-8";
		metrics_out(r);
		if (r->status != 200)
			goto error;
		return;
	}
	doc = rt->data ? rt->data(r) : rt->data_name ? rt->data_name(r, var) : rt->data_id(r, id);
	if (!doc) {
		if (r->status == 200)
			web_fail(r, 500, "out of memory");
		goto error;
	}
	if (r->cfg->private_jobs)
		web_redact(doc);
	if (rt->kind == R_JSON) {
		r->content_type = "application/json";
		json_out(r, doc);
	} else {
		r->content_type = "text/html; charset=utf-8";
		rt->html(r, doc);
	}
	json_decref(doc);
	if (r->status == 200)
		return;
error:
	mx_buf_free(&r->out);
	r->out.failed = false;
	if (r->status >= 500)
		mx_log_warning("%s", r->error);
	if (rt ? rt->kind == R_JSON : r->url->n_segs && !strcmp(r->url->segs[0], "api")) {
		json_t *e = json_pack("{s:i, s:s}", "status", (int)r->status, "error", r->error);
		r->content_type = "application/json";
		if (e)
			json_out(r, e);
		json_decref(e);
	} else {
		r->content_type = "text/html; charset=utf-8";
		web_html_error(r);
	}
}

/* ------------------------------------------------------------------ */
/* HTTP                                                                */

/* The raw request target, before libmicrohttpd splits and decodes it. */
static void *uri_log(void *cls, const char *uri, struct MHD_Connection *con)
{
	(void)cls;
	(void)con;
	return strdup(uri ? uri : "");
}

/* The guard's entry of CON (NULL when out of memory at its accept). */
static struct mx_sockguard_entry *guard_entry(struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A request ended: the connection's next request is due from now. */
static void request_done(void *cls, struct MHD_Connection *con, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	free(*req_cls);
	*req_cls = NULL;
	mx_sockguard_arm(conn_guard, guard_entry(con));
}

/* Every connection is guarded from its accept until it closes. */
static void on_connection(void *cls, struct MHD_Connection *con, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? mx_sockguard_add(conn_guard, ci->connect_fd) : NULL;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		/* libmicrohttpd closes the socket after this: from now on the
		 * guard cannot shut it, so never a descriptor reused meanwhile */
		mx_sockguard_remove(conn_guard, *socket_context);
		*socket_context = NULL;
	}
}

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	unsigned *n = cls;

	(void)kind;
	(void)value;
	if (key && !strcasecmp(key, MHD_HTTP_HEADER_HOST))
		(*n)++;
	return MHD_YES;
}

/* Said once a minute at most: a proxy that sends a name not allowed makes
 * every request fail, a browser page on a rebound name only some. */
static void log_refused_host(const char *name)
{
	static _Atomic uint64_t next_ms;
	uint64_t now = mx_now_monotonic_ms(), at = atomic_load(&next_ms);

	if (now >= at && atomic_compare_exchange_strong(&next_ms, &at, now + 60000))
		mx_log_warning("refused a request for host '%s' with 421 (a name of this server? "
			       "--allow-host in mxq-web(8)); said once a minute at most", name);
}

/*
 * Is CON's request for a name this server answers to? Against DNS
 * rebinding: a page of another site whose name was made to resolve to
 * this server is still sent with that site's name. 0, or the status of
 * the refusal with one line in LINE.
 */
static unsigned host_check(const struct web_config *cfg, struct MHD_Connection *con,
			   char *line, size_t len)
{
	const char *value = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_HOST);
	struct mx_url_host h;
	unsigned n = 0;

	MHD_get_connection_values(con, MHD_HEADER_KIND, count_host, &n);
	if (n == 0)
		return 0;       /* HTTP/1.0: no browser (1.1 has to send one) */
	if (n > 1) {
		snprintf(line, len, "bad request: more than one Host header");
		return MHD_HTTP_BAD_REQUEST;
	}
	if (mx_url_host_parse(value, &h) < 0) {
		snprintf(line, len, "bad request: the Host header is not HOST or HOST:PORT");
		return MHD_HTTP_BAD_REQUEST;
	}
	if (mx_url_host_allowed(&h, cfg->hosts, cfg->n_hosts))
		return 0;
	/* the name passed the host-name rule: safe to say back */
	snprintf(line, len, "host '%s' is not a name of this server (see --allow-host in "
		 "mxq-web(8))", h.name);
	log_refused_host(h.name);
	return MHD_HTTP_MISDIRECTED_REQUEST;
}

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Time spent on a response: wall clock, and this thread's CPU (the wall
 * time less waiting for the database and for the processor). */
struct timing {
	double wall_ms, cpu_ms;
};

static struct timing timing_start(void)
{
	return (struct timing){ clock_ms(CLOCK_MONOTONIC), clock_ms(CLOCK_THREAD_CPUTIME_ID) };
}

/* Queue the response; a timing (T non-NULL, from timing_start()) is
 * announced in a Server-Timing header: what `make bench` reads. */
static enum MHD_Result respond(struct MHD_Connection *con, unsigned status, const char *type,
			       char *body, size_t len, bool allow, const struct timing *t)
{
	static const char csp[] = "default-src 'none'; style-src 'self'; script-src 'self';"
				  " img-src 'self'; connect-src 'self'; base-uri 'none';"
				  " form-action 'self'; frame-ancestors 'none'";
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy", csp);
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (t) {
		char timing[80];
		snprintf(timing, sizeof(timing), "app;dur=%.2f, cpu;dur=%.2f",
			 clock_ms(CLOCK_MONOTONIC) - t->wall_ms,
			 clock_ms(CLOCK_THREAD_CPUTIME_ID) - t->cpu_ms);
		MHD_add_response_header(resp, "Server-Timing", timing);
	}
	ret = MHD_queue_response(con, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* An error answered before routing: for the API (RAW, the request target,
 * under /api/) the {"status", "error"} document of mxq-web(8), else TEXT
 * as a line of plain text. */
static enum MHD_Result respond_early_error(struct MHD_Connection *con, const char *raw,
					   unsigned status, const char *text, bool allow)
{
	/* "/api", "/api/...", "/api?...": strchr() also finds the NUL */
	bool api = raw && !strncmp(raw, "/api", 4) && strchr("/?", raw[4]);
	json_t *e = api ? json_pack("{s:i, s:s}", "status", (int)status, "error", text) : NULL;
	char *doc = e ? mxq_json_dumps(e) : NULL, *body = NULL;

	json_decref(e);
	if (api && !doc)
		return MHD_NO;
	if (asprintf(&body, "%s\n", api ? doc : text) < 0)
		body = NULL;
	free(doc);
	return body ? respond(con, status, api ? "application/json" : "text/plain; charset=utf-8",
			      body, strlen(body), allow, NULL) : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	const struct web_config *cfg = cls;
	struct web_request r = { .cfg = cfg, .status = 200 };
	struct timing t0 = timing_start();
	struct mx_url u;
	char *body, line[400];
	unsigned refused;
	size_t len;

	(void)url;
	(void)version;
	(void)upload_data;
	/* the headers are in: the request's deadline is met */
	mx_sockguard_disarm(conn_guard, guard_entry(con));
	if ((refused = host_check(cfg, con, line, sizeof(line))))
		return respond_early_error(con, *req_cls, refused, line, false);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return respond_early_error(con, *req_cls, MHD_HTTP_METHOD_NOT_ALLOWED,
					   "only GET and HEAD are served here", true);
	if (*upload_data_size)
		return respond_early_error(con, *req_cls, MHD_HTTP_BAD_REQUEST,
					   "a GET carries no body", false);
	if (!*req_cls)
		return MHD_NO;
	mx_buf_init(&r.out, BODY_MAX);
	if (mx_url_parse(*req_cls, &u, r.error, sizeof(r.error)) < 0) {
		snprintf(line, sizeof(line), "bad request: %s", r.error);
		return respond_early_error(con, *req_cls, MHD_HTTP_BAD_REQUEST, line, false);
	}
	r.url = &u;
	handle(&r);
	body = mx_buf_take(&r.out, &len);
	if (!body)
		return respond_early_error(con, *req_cls, MHD_HTTP_INTERNAL_SERVER_ERROR,
					   "the page grew too large or memory ran out", false);
	return respond(con, r.status, r.content_type, body, len, false, &t0);
}

/* ------------------------------------------------------------------ */
/* options                                                             */

static int parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	char host[256];
	const char *colon = strrchr(s, ':');
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM }, *ai = NULL;
	uint32_t port;
	size_t hlen;

	if (!colon || colon == s || mx_strtou32(colon + 1, &port) < 0 || port == 0 || port > 65535)
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (s[0] == '[' && hlen >= 2 && s[hlen - 1] == ']') {
		s++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai)
		return -EINVAL;
	memcpy(ret, ai->ai_addr, ai->ai_addrlen);
	*ret_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int parse_count(const char *opt, const char *arg, uint32_t lo, uint32_t hi,
		       unsigned *ret)
{
	uint32_t v;

	if (mx_strtou32(arg, &v) < 0 || v < lo || v > hi)
		return mxq_usage_error("--%s: '%s' is not a number from %u to %u (try 'mxq-web --help')", opt, arg, lo, hi);
	*ret = v;
	return 0;
}

/* The names served besides IP addresses: --allow-host's, then the
 * machine's own. */
struct host_list {
	const char *names[ALLOW_HOSTS_MAX + 4];
	size_t n, n_given;
	bool any;                                /* '*' given */
	char given[ALLOW_HOSTS_MAX][MX_URL_HOST_MAX + 1];
	char own[3][MX_URL_HOST_MAX + 1];
};

static void host_list_add(struct host_list *l, const char *name)
{
	if (!*name || l->n >= MX_ARRAY_SIZE(l->names))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return;
	l->names[l->n++] = name;
}

/* NAME, lower case and without a final dot, into BUF (MX_URL_HOST_MAX + 1) */
static const char *host_lower(const char *name, char *buf)
{
	size_t len = strnlen(name, MX_URL_HOST_MAX);

	for (size_t i = 0; i < len; i++)
		buf[i] = (char)tolower((unsigned char)name[i]);
	if (len && buf[len - 1] == '.')
		len--;
	buf[len] = '\0';
	return buf;
}

/* localhost, the host name, its first label and its canonical name (a
 * lookup, once, at start: a name that moves needs --allow-host) */
static void host_list_add_own(struct host_list *l)
{
	struct addrinfo hints = { .ai_flags = AI_CANONNAME, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char hn[MX_URL_HOST_MAX + 1], shorter[MX_URL_HOST_MAX + 1];

	host_list_add(l, "localhost");
	if (gethostname(hn, sizeof(hn)) != 0)
		return;
	hn[sizeof(hn) - 1] = '\0';
	host_list_add(l, host_lower(hn, l->own[0]));
	mx_short_hostname(hn, shorter, sizeof(shorter));
	host_list_add(l, host_lower(shorter, l->own[1]));
	if (getaddrinfo(hn, NULL, &hints, &ai) == 0 && ai && ai->ai_canonname)
		host_list_add(l, host_lower(ai->ai_canonname, l->own[2]));
	if (ai)
		freeaddrinfo(ai);
}

/* --allow-host NAME: a name (stored normalised) or "*" */
static int host_list_allow(struct host_list *l, const char *arg)
{
	struct mx_url_host h;

	if (l->n_given >= ALLOW_HOSTS_MAX)
		return mxq_usage_error("--allow-host: at most %d names (or '*' for any)",
				       ALLOW_HOSTS_MAX);
	if (!strcmp(arg, "*")) {
		host_list_add(l, "*");
		l->any = true;
		return 0;
	}
	if (mx_url_host_parse(arg, &h) < 0 || h.has_port)
		return mxq_usage_error("--allow-host: '%s' is not a host name (without port) or '*'",
				       arg);
	if (h.is_ip)
		return mxq_usage_error("--allow-host: '%s' is an IP address: those are always served",
				       arg);
	memcpy(l->given[l->n_given], h.name, sizeof(h.name));
	host_list_add(l, l->given[l->n_given++]);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "mysql-default-file", required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "private", no_argument, NULL, 'p' },
		{ "refresh", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "max-connections", required_argument, NULL, 'c' },
		{ "max-per-address", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "request-timeout", required_argument, NULL, 'R' },
		{ "allow-host", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char default_listen[32];
	struct web_config cfg = {
		.refresh_s = 30, .threads = 4, .max_connections = 64, .timeout_s = 15,
		.request_timeout_s = 10,
	};
	static struct host_list hosts;
	bool per_address_given = false;
	struct mx_sockguard_stats gs;
	const union MHD_DaemonInfo *di;
	struct sockaddr_storage addr;
	socklen_t addr_len = 0;
	struct MHD_Daemon *d;
	struct mx_db *db = NULL;
	char err[256];
	unsigned flags;
	int c, rc;

	mxq_client_set_program("mxq-web");
	snprintf(default_listen, sizeof(default_listen), "127.0.0.1:%d", DEFAULT_PORT);
	cfg.listen = default_listen;
	cfg.defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE");
	cfg.db_group = getenv("MXQ_MYSQL_DEFAULT_GROUP");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:M:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'l': cfg.listen = optarg; break;
		case 'M': cfg.defaults_file = optarg; break;
		case 'S': cfg.db_group = optarg; break;
		case 'p': cfg.private_jobs = true; break;
		case 'r':
			if ((rc = parse_count("refresh", optarg, 0, 3600, &cfg.refresh_s)))
				return rc;
			break;
		case 't':
			if ((rc = parse_count("threads", optarg, 1, 64, &cfg.threads)))
				return rc;
			break;
		case 'c':
			if ((rc = parse_count("max-connections", optarg, 1, 4096,
					      &cfg.max_connections)))
				return rc;
			break;
		case 'a':
			if ((rc = parse_count("max-per-address", optarg, 0, 4096,
					      &cfg.per_address_max)))
				return rc;
			per_address_given = true;
			break;
		case 'T':
			if ((rc = parse_count("timeout", optarg, 1, 3600, &cfg.timeout_s)))
				return rc;
			break;
		case 'R':
			if ((rc = parse_count("request-timeout", optarg, 1, 3600,
					      &cfg.request_timeout_s)))
				return rc;
			break;
		case 'H':
			if ((rc = host_list_allow(&hosts, optarg)))
				return rc;
			break;
		case 'h':
			printf(usage_text, DEFAULT_PORT, MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
			return 0;
		case 'V':
			printf("mxq-web %s\n", MXQ_VERSION);
			return 0;
		case ':':
			return mxq_usage_error("option '%s' needs a value (try 'mxq-web --help')", argv[optind - 1]);
		default:
			return mxq_usage_error("unknown option '%s' (try 'mxq-web --help')", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return mxq_usage_error("unexpected argument '%s' (try 'mxq-web --help')", argv[optind]);
	if (!cfg.db_group || !*cfg.db_group)
		cfg.db_group = MX_DB_GROUP_CLIENT;
	if (parse_listen(cfg.listen, &addr, &addr_len) < 0)
		return mxq_usage_error("--listen: '%s' is not ADDR:PORT with a numeric address "
				       "(127.0.0.1:%d, [::1]:%d)", cfg.listen, DEFAULT_PORT, DEFAULT_PORT);
	/* one address never takes every slot unless told so */
	if (!per_address_given)
		cfg.per_address_max = cfg.max_connections >= 2 * PER_ADDRESS_DEFAULT ?
			PER_ADDRESS_DEFAULT : (cfg.max_connections + 1) / 2;
	else if (cfg.per_address_max > cfg.max_connections)
		return mxq_usage_error("--max-per-address %u is more than --max-connections %u",
				       cfg.per_address_max, cfg.max_connections);
	if (!hosts.any)
		host_list_add_own(&hosts);
	cfg.hosts = hosts.names;
	cfg.n_hosts = hosts.n;

	/* a missing or unreadable client configuration is no outage that
	 * passes: say so and stop, as mxqd does */
	const char *cnf;
	int cr = mx_db_defaults_readable(cfg.defaults_file, &cnf);
	if (cr < 0)
		return mxq_failure("database client configuration %s: %s", cnf, strerror(-cr));
	/* once in the main thread: initialises the client library before the
	 * workers start, and says early when the credentials are wrong */
	if (mx_db_connect(&db, cfg.defaults_file, cfg.db_group, err, sizeof(err)) < 0)
		mx_log_warning("database not reachable yet (pages answer 503 until it is): %s", err);
	mx_db_close(db);

	if (pthread_key_create(&worker_db_key, worker_db_close) != 0) {
		mx_log_err("out of thread keys");
		return 1;
	}
	rc = mx_sockguard_new(&(struct mx_sockguard_config){
			.deadline_ms = (uint64_t)cfg.request_timeout_s * 1000,
			.grace_ms = ROOM_GRACE_MS, .slots = cfg.max_connections }, &conn_guard);
	if (rc < 0) {
		mx_log_err("cannot set up the request deadlines: %s", strerror(-rc));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_AUTO;
	if (addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* one thread: the polling thread itself serves (a "pool" of 1 is refused) */
	d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &cfg,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
		MHD_OPTION_THREAD_POOL_SIZE, cfg.threads > 1 ? cfg.threads : 0,
		MHD_OPTION_CONNECTION_LIMIT, cfg.max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg.per_address_max,
		MHD_OPTION_CONNECTION_TIMEOUT, cfg.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL,
		MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
		MHD_OPTION_END);
	if (!d) {
		mx_log_err("cannot serve on %s: %s (address in use or not local?)", cfg.listen,
			   strerror(errno));
		mx_sockguard_free(conn_guard);
		return 1;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
	rc = mx_sockguard_start(conn_guard, di ? di->listen_fd : -1);
	if (rc < 0) {
		mx_log_err("cannot start the request deadlines: %s", strerror(-rc));
		MHD_stop_daemon(d);
		mx_sockguard_free(conn_guard);
		return 1;
	}
	char served[512];
	size_t used = 0;
	served[0] = '\0';
	for (size_t i = 0; i < cfg.n_hosts && used < sizeof(served); i++)
		used += (size_t)snprintf(served + used, sizeof(served) - used, "%s%s",
					 i ? ", " : "", cfg.hosts[i]);
	if (hosts.any)
		snprintf(served, sizeof(served), "any name");
	mx_log_notice("serving on http://%s/ (%u threads%s; for IP addresses and %s)", cfg.listen,
		      cfg.threads, cfg.private_jobs ? ", private" : "", served);
	while (!stop_requested)
		pause();
	/* the guard first: nothing is shut while the server closes everything */
	mx_sockguard_stop(conn_guard);
	MHD_stop_daemon(d);
	mx_sockguard_stats(conn_guard, &gs);
	mx_sockguard_free(conn_guard);
	mx_log_notice("stopped (closed %" PRIu64 " connections whose request was late, %" PRIu64
		      " to make room)", gs.shut_late, gs.shut_room);
	return 0;
}
