/*
 * mxq-web - internal interfaces between the parts of the status page:
 *
 *   mxq-web.c        options, the HTTP server (libmicrohttpd), routing
 *   mxq-web_data.c   the database reads; every page's data as one JSON
 *                    document, which is also what /api/... returns
 *   mxq-web_html.c   the HTML pages, rendered from those documents
 *
 * So a page and its API can never disagree: the HTML is a view of the
 * JSON. Every read is a bounded SELECT (LIMIT, a time window, or an
 * aggregate over counters); nothing here writes to the database.
 */
#ifndef MXQ_WEB_H
#define MXQ_WEB_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "mx_html.h"
#include "mx_url.h"

#define WEB_PAGE_SIZE 50          /* rows per page of any list */
#define WEB_PAGE_MAX 10000        /* highest ?page= accepted */
#define WEB_CHART_POINTS 120      /* buckets of a chart */
#define WEB_EVENTS_MAX 20000      /* power events read for a chart window */
#define WEB_GROUP_JOBS_MAX 10000  /* newest jobs of a group its summary reads */

struct web_config {
	const char *listen;        /* ADDR:PORT as given */
	const char *defaults_file; /* -M */
	const char *db_group;      /* -S */
	bool private_jobs;         /* --private: no job details or user names */
	unsigned refresh_s;        /* auto-refresh period of the pages, 0 = off */
	unsigned threads;          /* worker threads (each one DB connection) */
	unsigned max_connections;
	unsigned per_address_max;  /* connections from one client address, 0 = no limit */
	unsigned timeout_s;        /* idle connection timeout */
	unsigned request_timeout_s; /* a request's headers must be in by then */
	const char *const *hosts;  /* Host names served besides IP addresses ("*": any) */
	size_t n_hosts;
};

/* One request: what the handlers read and what they produce. */
struct web_request {
	const struct web_config *cfg;
	struct mx_db *db;          /* this worker thread's connection */
	const struct mx_url *url;
	struct mx_buf out;         /* the response body */
	unsigned status;           /* HTTP status, 200 unless set */
	const char *content_type;
	char error[256];           /* the reason of a 4xx/5xx, for the body */
};

/* A time window the pages offer (?window=). */
struct web_window {
	const char *name;          /* "6h" */
	int64_t seconds;
};

/*
 * Set an error response: STATUS and one line of text (printf). Returns
 * NULL so data functions can `return web_fail(...)`.
 */
void *web_fail(struct web_request *r, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ?window= (default DEF): NULL and a 400 for a name not offered. */
const struct web_window *web_window_param(struct web_request *r, const char *def);
/* The windows offered, NULL-name terminated. */
extern const struct web_window web_windows[];
/* ?page= as 0-based page number; -1 and a 400 for junk. */
int64_t web_page_param(struct web_request *r);

/* ---- data (mxq-web_data.c): new JSON references, NULL after web_fail() */
json_t *web_data_nodes(struct web_request *r);
json_t *web_data_overview(struct web_request *r);
json_t *web_data_node(struct web_request *r, const char *host);
json_t *web_data_groups(struct web_request *r);
json_t *web_data_group(struct web_request *r, uint64_t group_id);
json_t *web_data_job(struct web_request *r, uint64_t job_id);
json_t *web_data_energy(struct web_request *r);
/* --private: hide the user names the power manager's reasons carry
 * ("group 12 (alice)" becomes "group 12 (hidden)"), in place. */
void web_redact(json_t *doc);

/* ---- pages (mxq-web_html.c): append the page for DOC to r->out */
void web_html_overview(struct web_request *r, json_t *doc);
void web_html_node(struct web_request *r, json_t *doc);
void web_html_groups(struct web_request *r, json_t *doc);
void web_html_group(struct web_request *r, json_t *doc);
void web_html_job(struct web_request *r, json_t *doc);
void web_html_energy(struct web_request *r, json_t *doc);
/* An error page for r->status and r->error. */
void web_html_error(struct web_request *r);

/* The stylesheet and the refresh script (static files). */
extern const char web_css[];
extern const char web_js[];

#endif
