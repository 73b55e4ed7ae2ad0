/*
 * mxq_sim - replay a workload trace over a modelled cluster under a power
 * policy, with a virtual clock (DESIGN §7). See mxq_sim.h for the pieces.
 *
 * Configuration: everything comes in through the structs of mxq_sim.h; the
 * policy's own knobs are a struct mxq_power_config, read by the caller.
 *
 * Errors: negative errno, parser messages in the caller's buffer. Nothing
 * here logs or reads a clock.
 *
 * The model, in short (the man page mxq-power-sim(1) says it at length):
 *  - a job asks for slots (its processors) and memory; a job wider than the
 *    largest node takes whole nodes, all started at once (gang), or is
 *    squeezed onto one node (clamp), or split into independent node-wide
 *    jobs (split: MXQ's own workload, which has no gangs);
 *  - dispatch works like mxqd: waiting jobs in submit order, each on the
 *    first qualified ON node with free slots and memory (server_is_qualified
 *    decides "qualified"), later jobs backfill what is left; the first wide
 *    job that cannot start reserves the nodes that free up first (EASY
 *    backfilling: others may use them only if they end before it starts),
 *    so that it is not starved by narrow jobs;
 *  - the policy under test is either nothing (always-on), a fixed idle
 *    timeout that wakes nodes for any job that cannot start (Slurm
 *    SuspendTime style), or mxq_power_decide() called every tick on a
 *    snapshot built the way the leader builds it, its plan carried out with
 *    the node-side drain protocol (acknowledge when idle, at the next tick);
 *  - node power: idle watts plus a share of (busy - idle) per busy slot,
 *    boot and shutdown energy spread over their durations, standby watts
 *    when off.
 * Every state change of a node goes through node_update(), which keeps the
 * energy books, the counters and the time series in step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mxq_sim.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "mx_bitmap.h"
#include "mx_blist.h"
#include "mx_util.h"
#include "mxqd_control.h"

#define SWF_FIELDS 18

/* In a qsort comparator: order by field F of X and Y, or fall through when
 * they are equal there. */
#define ORDER_BY(x, y, f) do { \
		if ((x)->f != (y)->f) \
			return (x)->f < (y)->f ? -1 : 1; \
	} while (0)
#define NONE_TIME INT64_MAX
#define DEFAULT_STALL_S (30 * 86400)

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* ======================================================================
 * Trace
 */

void mxq_sim_trace_init(struct mxq_sim_trace *trace)
{
	memset(trace, 0, sizeof(*trace));
}

void mxq_sim_trace_done(struct mxq_sim_trace *trace)
{
	if (!trace)
		return;
	free(trace->jobs);
	mxq_sim_trace_init(trace);
}

void mxq_sim_trace_drop_jobs(struct mxq_sim_trace *trace)
{
	free(trace->jobs);
	trace->jobs = NULL;
	trace->cap = 0;
}

/* mxq_sim_trace_drop_jobs() freed them: nothing more that needs them (the
 * error said in ERRBUF). */
static bool jobs_dropped(const struct mxq_sim_trace *trace, char *errbuf, size_t errlen)
{
	if (trace->jobs || !trace->n_jobs)
		return false;
	set_err(errbuf, errlen, "the trace's jobs were dropped");
	return true;
}

/* "; MaxNodes: 240" - the keys we use; anything else is ignored. */
static void trace_header(struct mxq_sim_trace *trace, const char *line)
{
	static const char *const keys[] = { "MaxNodes", "MaxProcs", "UnixStartTime" };
	const char *p = line + 1;

	while (isspace((unsigned char)*p))
		p++;
	for (size_t k = 0; k < MX_ARRAY_SIZE(keys); k++) {
		size_t n = strlen(keys[k]);
		if (strncmp(p, keys[k], n) != 0 || p[n] != ':')
			continue;
		char *end;
		errno = 0;
		long long v = strtoll(p + n + 1, &end, 10);
		if (errno || end == p + n + 1 || v < 0)
			return;
		if (k == 0 && v <= UINT32_MAX)
			trace->max_nodes = (uint32_t)v;
		else if (k == 1 && v <= UINT32_MAX)
			trace->max_procs = (uint32_t)v;
		else if (k == 2)
			trace->unix_start = v;
		return;
	}
}

static int as_int64(double d, int64_t *ret)
{
	if (!(d >= -9.0e15 && d <= 9.0e15))
		return -ERANGE;
	*ret = (int64_t)llround(d);
	return 0;
}

int mxq_sim_trace_add_line(struct mxq_sim_trace *trace, const char *line,
			   char *errbuf, size_t errlen)
{
	double f[SWF_FIELDS];
	const char *p = line;
	int n = 0;

	if (jobs_dropped(trace, errbuf, errlen))
		return -EINVAL;
	while (isspace((unsigned char)*p))
		p++;
	if (*p == ';') {
		trace_header(trace, p);
		return 0;
	}
	if (*p == '\0')
		return 0;

	while (*p) {
		char *end;
		if (n == SWF_FIELDS) {
			/* later SWF versions and local tools add columns: ignored */
			trace->extra_fields++;
			break;
		}
		errno = 0;
		f[n] = strtod(p, &end);
		if (end == p || errno || !isfinite(f[n]) ||
		    (*end && !isspace((unsigned char)*end))) {
			size_t len = strcspn(p, " \t\r\n");
			set_err(errbuf, errlen, "field %d is not a number: '%.*s'", n + 1,
				(int)(len > 40 ? 40 : len), p);
			return -EINVAL;
		}
		n++;
		p = end;
		while (isspace((unsigned char)*p))
			p++;
	}
	if (n != SWF_FIELDS) {
		set_err(errbuf, errlen, "%d fields, a job line has %d", n, SWF_FIELDS);
		return -EINVAL;
	}

	struct mxq_sim_trace_job job = { 0 };
	int64_t alloc, reqp, used_mem, req_mem;
	if (as_int64(f[0], &job.number) || as_int64(f[1], &job.submit) ||
	    as_int64(f[3], &job.run) || as_int64(f[4], &alloc) || as_int64(f[7], &reqp) ||
	    as_int64(f[8], &job.req_time) || as_int64(f[6], &used_mem) ||
	    as_int64(f[9], &req_mem)) {
		set_err(errbuf, errlen, "number out of range");
		return -EINVAL;
	}
	if (job.submit < 0) {
		set_err(errbuf, errlen, "negative submit time %" PRId64, job.submit);
		return -EINVAL;
	}
	trace->lines++;
	if (job.run <= 0) {
		trace->skipped_runtime++;
		return 0;
	}
	if (alloc <= 0)
		alloc = reqp;
	if (alloc <= 0) {
		trace->skipped_procs++;
		return 0;
	}
	if (alloc > UINT32_MAX) {
		set_err(errbuf, errlen, "%" PRId64 " processors is too many", alloc);
		return -EINVAL;
	}
	job.procs = (uint32_t)alloc;
	if (job.req_time <= 0)
		job.req_time = -1;
	job.mem_kib_per_proc = req_mem > 0 ? req_mem : used_mem > 0 ? used_mem : -1;

	if (trace->n_jobs == trace->cap) {
		size_t cap = trace->cap ? trace->cap * 2 : 1024;
		struct mxq_sim_trace_job *nj = realloc(trace->jobs, cap * sizeof(*nj));
		if (!nj)
			return -ENOMEM;
		trace->jobs = nj;
		trace->cap = cap;
	}
	trace->jobs[trace->n_jobs++] = job;
	return 0;
}

int mxq_sim_trace_parse(struct mxq_sim_trace *trace, const char *text, const char *name,
			char *errbuf, size_t errlen)
{
	char msg[256];
	unsigned line = 0;

	while (*text) {
		size_t len = strcspn(text, "\n");
		char *copy = strndup(text, len);
		int r;

		if (!copy)
			return -ENOMEM;
		line++;
		r = mxq_sim_trace_add_line(trace, copy, msg, sizeof(msg));
		free(copy);
		if (r == -EINVAL) {
			set_err(errbuf, errlen, "%s:%u: %s", name, line, msg);
			return r;
		}
		if (r < 0)
			return r;
		text += len;
		if (*text == '\n')
			text++;
	}
	mxq_sim_trace_finish(trace);
	return 0;
}

int mxq_sim_trace_read(struct mxq_sim_trace *trace, const char *path, uint64_t max_jobs,
		       char *errbuf, size_t errlen)
{
	char buf[4096], msg[256];
	unsigned long line = 0;
	gzFile f = gzopen(path, "rb");
	int r = 0;

	if (!f) {
		set_err(errbuf, errlen, "%s: %s", path, strerror(errno ? errno : ENOMEM));
		return -EIO;
	}
	gzbuffer(f, 256 * 1024);
	while ((!max_jobs || trace->n_jobs < max_jobs) && gzgets(f, buf, sizeof(buf))) {
		size_t len = strlen(buf);
		line++;
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n') {
			set_err(errbuf, errlen, "%s:%lu: line longer than %zu characters", path, line,
				sizeof(buf) - 2);
			r = -EINVAL;
			break;
		}
		r = mxq_sim_trace_add_line(trace, buf, msg, sizeof(msg));
		if (r == -EINVAL)
			set_err(errbuf, errlen, "%s:%lu: %s", path, line, msg);
		if (r < 0)
			break;
	}
	if (r == 0) {
		int err;
		const char *text = gzerror(f, &err);
		if (err != Z_OK && err != Z_STREAM_END) {
			set_err(errbuf, errlen, "%s: %s", path, err == Z_ERRNO ? strerror(errno) : text);
			r = -EIO;
		}
	}
	gzclose(f);
	if (r == 0)
		mxq_sim_trace_finish(trace);
	return r;
}

static int cmp_trace_job(const void *a, const void *b)
{
	const struct mxq_sim_trace_job *x = a, *y = b;

	ORDER_BY(x, y, submit);
	ORDER_BY(x, y, number);
	return 0;
}

void mxq_sim_trace_finish(struct mxq_sim_trace *trace)
{
	if (trace->n_jobs)
		qsort(trace->jobs, trace->n_jobs, sizeof(*trace->jobs), cmp_trace_job);
}

/* ======================================================================
 * Node classes and small parsers
 */

void mxq_sim_class_defaults(struct mxq_sim_class *cls)
{
	*cls = (struct mxq_sim_class) {
		.name = "node",
		.count = 0,
		.cores = 1,
		.idle_w = 100.0,
		.busy_w = 250.0,
		.off_w = 5.0,
		.boot_s = 180,
		.boot_j = 30000.0,
		.shutdown_s = 60,
		.shutdown_j = 3000.0,
	};
}

int mxq_sim_parse_duration(const char *s, int64_t *ret_s)
{
	uint64_t v;
	int r = mx_parse_duration_s(s, &v);

	if (r < 0)
		return r;
	if (v > INT64_MAX / 2)
		return -ERANGE;
	*ret_s = (int64_t)v;
	return 0;
}

/* Watts and joules: a finite number, not negative. */
static int parse_amount(const char *s, double *ret)
{
	double d;
	int r = mx_strtod(s, &d);

	if (r < 0)
		return r;
	if (d < 0 || d > 1.0e12)
		return -ERANGE;
	*ret = d;
	return 0;
}

/* Value types of the class keys; name and tags are text. */
enum class_key_type {
	CK_NAME,
	CK_TAGS,
	CK_COUNT,          /* uint32_t */
	CK_CORES,          /* uint32_t, >= 1 */
	CK_MEMORY,         /* uint64_t MiB, mxqsub --memory syntax */
	CK_MAXTIME,        /* uint64_t minutes, mxqsub --runtime syntax */
	CK_RANK,           /* int32_t */
	CK_AMOUNT,         /* double watts or joules */
	CK_DURATION,       /* int64_t seconds */
};

static const struct class_key {
	const char *key;
	enum class_key_type type;
	size_t offset;
} class_keys[] = {
	{ "name",            CK_NAME,     offsetof(struct mxq_sim_class, name) },
	{ "count",           CK_COUNT,    offsetof(struct mxq_sim_class, count) },
	{ "cores",           CK_CORES,    offsetof(struct mxq_sim_class, cores) },
	{ "memory",          CK_MEMORY,   offsetof(struct mxq_sim_class, memory_mib) },
	{ "maxtime",         CK_MAXTIME,  offsetof(struct mxq_sim_class, maxtime_min) },
	{ "tags",            CK_TAGS,     offsetof(struct mxq_sim_class, tags) },
	{ "rank",            CK_RANK,     offsetof(struct mxq_sim_class, rank) },
	{ "idle",            CK_AMOUNT,   offsetof(struct mxq_sim_class, idle_w) },
	{ "busy",            CK_AMOUNT,   offsetof(struct mxq_sim_class, busy_w) },
	{ "off",             CK_AMOUNT,   offsetof(struct mxq_sim_class, off_w) },
	{ "boot",            CK_DURATION, offsetof(struct mxq_sim_class, boot_s) },
	{ "boot-energy",     CK_AMOUNT,   offsetof(struct mxq_sim_class, boot_j) },
	{ "shutdown",        CK_DURATION, offsetof(struct mxq_sim_class, shutdown_s) },
	{ "shutdown-energy", CK_AMOUNT,   offsetof(struct mxq_sim_class, shutdown_j) },
};

/* Set one key of *C from VAL. 0, or -EINVAL/-ERANGE with C untouched. */
static int class_set(struct mxq_sim_class *c, const struct class_key *k, const char *val)
{
	void *field = (char *)c + k->offset;
	size_t len = strlen(val);
	uint32_t u32;

	switch (k->type) {
	case CK_NAME:
		if (len >= sizeof(c->name))
			return -ERANGE;
		for (size_t i = 0; i < len; i++)
			if (!isalnum((unsigned char)val[i]) && val[i] != '-' && val[i] != '_')
				return -EINVAL;
		memcpy(field, val, len + 1);
		return 0;
	case CK_TAGS:
		if (len >= sizeof(c->tags))
			return -ERANGE;
		for (size_t i = 0; i <= len; i++)
			c->tags[i] = val[i] == '+' ? ' ' : val[i];
		return 0;
	case CK_COUNT:
		return mx_strtou32(val, field);
	case CK_CORES:
		if (mx_strtou32(val, &u32) < 0 || u32 == 0)
			return -EINVAL;
		*(uint32_t *)field = u32;
		return 0;
	case CK_MEMORY:
		return mx_parse_size_mib(val, 'M', field);
	case CK_MAXTIME:
		return mx_parse_runtime_min(val, field);
	case CK_RANK:
		return mx_strtoi32(val, field);
	case CK_AMOUNT:
		return parse_amount(val, field);
	case CK_DURATION:
		return mxq_sim_parse_duration(val, field);
	}
	return -EINVAL;
}

int mxq_sim_class_parse(struct mxq_sim_class *cls, const char *spec, char *errbuf, size_t errlen)
{
	struct mxq_sim_class c = *cls;
	char *copy, *save = NULL;
	int r = 0;

	if (!spec || !*spec) {
		set_err(errbuf, errlen, "empty class specification");
		return -EINVAL;
	}
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		const struct class_key *k = NULL;

		if (!eq || eq == item || !eq[1]) {
			set_err(errbuf, errlen, "class: '%s' is not KEY=VALUE", item);
			r = -EINVAL;
			break;
		}
		*eq = '\0';
		for (size_t i = 0; i < MX_ARRAY_SIZE(class_keys) && !k; i++)
			if (strcmp(item, class_keys[i].key) == 0)
				k = &class_keys[i];
		if (!k) {
			char keys[256];
			size_t pos = 0;
			for (size_t i = 0; i < MX_ARRAY_SIZE(class_keys) && pos < sizeof(keys); i++)
				pos += (size_t)snprintf(keys + pos, sizeof(keys) - pos, "%s%s",
							i ? ", " : "", class_keys[i].key);
			set_err(errbuf, errlen, "class: unknown key '%s' (%s)", item, keys);
			r = -EINVAL;
			break;
		}
		if (class_set(&c, k, eq + 1) < 0) {
			set_err(errbuf, errlen, "class: bad value for %s: '%s'", k->key, eq + 1);
			r = -EINVAL;
			break;
		}
	}
	free(copy);
	if (r == 0)
		*cls = c;
	return r;
}

double mxq_sim_gap_cost(const struct mxq_sim_class *cls, int64_t gap, bool trailing)
{
	double stay = (double)gap * cls->idle_w;
	int64_t transit = cls->shutdown_s + (trailing ? 0 : cls->boot_s);
	double cycle;

	if (gap < transit)
		return stay;
	cycle = cls->shutdown_j + (trailing ? 0.0 : cls->boot_j) + (double)(gap - transit) * cls->off_w;
	return cycle < stay ? cycle : stay;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y ? 1 : 0;
}

double mxq_sim_percentile(double *v, size_t n, double p)
{
	if (n == 0)
		return 0.0;
	qsort(v, n, sizeof(*v), cmp_double);
	double rank = ceil(p / 100.0 * (double)n);
	size_t idx = rank < 1.0 ? 0 : (size_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	return v[idx];
}

/* ======================================================================
 * Cluster
 */

static const char *const wide_names[_MXQ_SIM_WIDE_MAX] = {
	[MXQ_SIM_WIDE_GANG] = "gang",
	[MXQ_SIM_WIDE_CLAMP] = "clamp",
	[MXQ_SIM_WIDE_SPLIT] = "split",
};

const char *mxq_sim_wide_to_string(enum mxq_sim_wide wide)
{
	return (unsigned)wide < _MXQ_SIM_WIDE_MAX ? wide_names[wide] : NULL;
}

int mxq_sim_wide_from_string(const char *name)
{
	for (int i = 0; name && i < _MXQ_SIM_WIDE_MAX; i++)
		if (strcasecmp(name, wide_names[i]) == 0)
			return i;
	return -EINVAL;
}

void mxq_sim_workload_opts_defaults(struct mxq_sim_workload_opts *opts)
{
	*opts = (struct mxq_sim_workload_opts) { .scale = 1.0, .wide = MXQ_SIM_WIDE_GANG };
}

/* One requirement signature: what one part of a job needs. */
struct sim_sig {
	uint32_t threads;
	uint64_t memory_mib;
	uint64_t time_min;
	bool wide;                   /* parts of gang jobs: one per node */
	struct mxq_group_reqs reqs;
	bool reqs_ready;
	uint8_t *qual;               /* server_is_qualified() per node */
	uint32_t n_qual;
	double slot_w;               /* least (busy - idle) / cores over the
	                                qualified nodes: a slot's own draw */
};

/* Dispatch queue key: jobs of one signature, one width and one duration
 * class (expected run time within a factor of two). */
struct sim_queue_key {
	uint32_t sig;
	uint32_t parts;
	uint32_t length;
};

struct sim_job {
	int64_t submit;
	int64_t run;
	int64_t expect;              /* duration the leader expects */
	uint32_t sig;
	uint32_t queue;
	uint32_t parts;
	uint32_t length;             /* duration class: log2 of the expected minutes */
	uint32_t threads;            /* per part */
	uint64_t memory_mib;         /* per part */
	uint64_t part_off;           /* into the sim's part-node array */
};

struct sim_node_def {
	uint32_t cls;
	char *hostname;
	struct mxq_server_caps caps;
	bool caps_ready;
};

struct mxq_sim_cluster {
	struct mxq_sim_class *classes;
	size_t n_classes;
	struct sim_node_def *nodes;
	size_t n_nodes;
	struct sim_job *jobs;
	size_t n_jobs;
	struct sim_sig *sigs;
	size_t n_sigs;
	struct sim_queue_key *queues;
	size_t n_queues;
	uint64_t total_parts;
	int64_t start;
	int64_t last_submit;
	struct mxq_sim_workload_stats stats;
	double mem_mib_s;            /* memory x run time of the jobs kept */
	double slot_j;               /* the slots' own energy, at the cheapest class */
	uint32_t max_cores;          /* of the classes with nodes: a job of as many
	                                threads fits only on a node without jobs */
};

void mxq_sim_cluster_free(struct mxq_sim_cluster *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_nodes; i++) {
		if (c->nodes[i].caps_ready)
			mxq_server_caps_done(&c->nodes[i].caps);
		free(c->nodes[i].hostname);
	}
	for (size_t s = 0; s < c->n_sigs; s++) {
		if (c->sigs[s].reqs_ready)
			mxq_group_reqs_done(&c->sigs[s].reqs);
		free(c->sigs[s].qual);
	}
	free(c->nodes);
	free(c->classes);
	free(c->jobs);
	free(c->sigs);
	free(c->queues);
	free(c);
}

const struct mxq_sim_workload_stats *mxq_sim_cluster_stats(const struct mxq_sim_cluster *c)
{
	return &c->stats;
}

size_t mxq_sim_cluster_nodes(const struct mxq_sim_cluster *c)
{
	return c->n_nodes;
}

int64_t mxq_sim_cluster_start(const struct mxq_sim_cluster *c)
{
	return c->start;
}

int64_t mxq_sim_cluster_last_submit(const struct mxq_sim_cluster *c)
{
	return c->last_submit;
}

/* What every node of CLS draws at least, whatever it does: off, idle,
 * booting or shutting down (a busy node draws idle plus its slots). */
static double class_floor_w(const struct mxq_sim_class *k)
{
	double w = k->off_w < k->idle_w ? k->off_w : k->idle_w;

	if (k->boot_s > 0 && k->boot_j / (double)k->boot_s < w)
		w = k->boot_j / (double)k->boot_s;
	if (k->shutdown_s > 0 && k->shutdown_j / (double)k->shutdown_s < w)
		w = k->shutdown_j / (double)k->shutdown_s;
	return w;
}

/* Cheapest way to buy AMOUNT units (core- or MiB-seconds) of ON time:
 * class K sells up to count x per_node(K) x H units at (idle - floor) /
 * per_node(K) joules each; fractional knapsack, cheapest first. With
 * MEMORY, per_node is the class's memory, else its cores. */
static double cheapest_on_time(const struct mxq_sim_cluster *c, double amount, double h,
			       bool memory)
{
	double total = 0.0, last_cost = -INFINITY;
	size_t last = SIZE_MAX;

	/* classes in (cost, index) order, without sorting a copy */
	while (amount > 0.0) {
		size_t best = SIZE_MAX;
		double best_cost = INFINITY;
		for (size_t i = 0; i < c->n_classes; i++) {
			const struct mxq_sim_class *k = &c->classes[i];
			double per = memory ? (double)k->memory_mib : (double)k->cores;
			if (!k->count || per <= 0)
				continue;
			double cost = (k->idle_w - class_floor_w(k)) / per;
			bool after = cost > last_cost || (cost == last_cost && last != SIZE_MAX &&
							  i > last);
			if (after && (cost < best_cost || best == SIZE_MAX)) {
				best_cost = cost;
				best = i;
			}
		}
		if (best == SIZE_MAX)
			break;
		last = best;
		last_cost = best_cost;
		const struct mxq_sim_class *k = &c->classes[best];
		double per = memory ? (double)k->memory_mib : (double)k->cores;
		double cap = (double)k->count * per * h;
		double take = amount < cap ? amount : cap;
		total += take * best_cost;
		amount -= take;
	}
	return total;
}

double mxq_sim_lower_bound(const struct mxq_sim_cluster *c, int64_t end)
{
	double h = end > c->start ? (double)(end - c->start) : 0.0;
	double floor_j = 0.0, on_j, mem_j = 0.0;
	bool memory = c->mem_mib_s > 0.0;

	for (size_t i = 0; i < c->n_classes; i++) {
		floor_j += (double)c->classes[i].count * class_floor_w(&c->classes[i]) * h;
		if (c->classes[i].count && !c->classes[i].memory_mib)
			memory = false;     /* a class without a memory limit */
	}
	on_j = cheapest_on_time(c, (double)c->stats.busy_core_seconds, h, false);
	if (memory)
		mem_j = cheapest_on_time(c, c->mem_mib_s, h, true);
	return floor_j + (on_j > mem_j ? on_j : mem_j) + c->slot_j;
}

/* The policy's order: most efficient (lowest rank) first, ties by name. */
static int cmp_node_def(const void *a, const void *b, void *arg)
{
	const struct sim_node_def *x = a, *y = b;
	const struct mxq_sim_class *classes = arg;
	int32_t rx = classes[x->cls].rank, ry = classes[y->cls].rank;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(x->hostname, y->hostname);
}

static int build_nodes(struct mxq_sim_cluster *c, char *errbuf, size_t errlen)
{
	size_t total = 0, k = 0;
	char msg[256];

	for (size_t i = 0; i < c->n_classes; i++) {
		const struct mxq_sim_class *cls = &c->classes[i];
		if (!cls->name[0] || !cls->cores || cls->boot_s < 0 || cls->shutdown_s < 0) {
			set_err(errbuf, errlen, "class '%s': needs a name and at least one core",
				cls->name);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(c->classes[j].name, cls->name) == 0) {
				set_err(errbuf, errlen, "class '%s' given twice", cls->name);
				return -EINVAL;
			}
		if (cls->count > 1000000 || total + cls->count > 1000000) {
			set_err(errbuf, errlen, "more than 1000000 nodes");
			return -EINVAL;
		}
		total += cls->count;
	}
	if (total == 0) {
		set_err(errbuf, errlen, "the cluster has no nodes");
		return -EINVAL;
	}
	c->nodes = calloc(total, sizeof(*c->nodes));
	if (!c->nodes)
		return -ENOMEM;
	for (size_t ci = 0; ci < c->n_classes; ci++) {
		const struct mxq_sim_class *cls = &c->classes[ci];
		int width = cls->count >= 10000 ? 7 : 4;
		for (uint32_t n = 0; n < cls->count; n++, k++) {
			struct sim_node_def *d = &c->nodes[k];
			d->cls = (uint32_t)ci;
			d->hostname = mx_asprintf("%s-%0*u", cls->name, width, n + 1);
			c->n_nodes = k + 1;
			if (!d->hostname)
				return -ENOMEM;
		}
	}
	qsort_r(c->nodes, c->n_nodes, sizeof(*c->nodes), cmp_node_def, c->classes);
	for (size_t i = 0; i < c->n_nodes; i++) {
		struct sim_node_def *d = &c->nodes[i];
		const struct mxq_sim_class *cls = &c->classes[d->cls];
		int r = mxq_server_caps_init(&d->caps, d->hostname, cls->tags, NULL, cls->cores,
					     cls->memory_mib, cls->maxtime_min, 0, 0, msg, sizeof(msg));
		if (r < 0) {
			set_err(errbuf, errlen, "class '%s': %s", cls->name, msg);
			return r;
		}
		d->caps_ready = true;
	}
	return 0;
}

/* Deterministic pseudo-random numbers (splitmix64) for partial copies. */
static uint64_t mix64(uint64_t x)
{
	x += UINT64_C(0x9e3779b97f4a7c15);
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* A trace job placed on the (possibly scaled) time line. */
struct placed_job {
	int64_t submit;
	size_t trace_index;
	uint32_t copy;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed_job *x = a, *y = b;

	ORDER_BY(x, y, submit);
	ORDER_BY(x, y, copy);
	ORDER_BY(x, y, trace_index);
	return 0;
}

/* Superimpose copies of the trace, each shifted in time and wrapped around
 * its span, so that a bigger cluster gets a proportionally bigger load with
 * the same mix. */
static int place_jobs(const struct mxq_sim_trace *t, double scale, struct placed_job **ret,
		      size_t *ret_n)
{
	uint32_t copies = (uint32_t)ceil(scale);
	double frac = scale - floor(scale);
	struct placed_job *v;
	size_t n = 0;

	if (copies == 0)
		copies = 1;
	if (t->n_jobs && copies > SIZE_MAX / sizeof(*v) / t->n_jobs)
		return -ENOMEM;
	size_t cap = t->n_jobs * copies;
	v = malloc((cap ? cap : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int64_t first = t->n_jobs ? t->jobs[0].submit : 0;
	int64_t span = t->n_jobs ? t->jobs[t->n_jobs - 1].submit - first + 1 : 1;
	for (uint32_t c = 0; c < copies; c++) {
		int64_t offset = (int64_t)((double)span * c / copies);
		bool partial = frac > 0.0 && c == copies - 1;
		for (size_t i = 0; i < t->n_jobs; i++) {
			if (partial) {
				double u = (double)(mix64(i * 1000003u + c) >> 11) / 9007199254740992.0;
				if (u >= frac)
					continue;
			}
			int64_t s = t->jobs[i].submit - first + offset;
			if (s >= span)
				s -= span;
			v[n++] = (struct placed_job) { first + s, i, c };
		}
	}
	if (copies > 1)
		qsort(v, n, sizeof(*v), cmp_placed);
	*ret = v;
	*ret_n = n;
	return 0;
}

/* What makes a job's signature, kept per job while the cluster is made (a
 * whole struct sim_sig per job was most of the memory for a trace of
 * millions of jobs). */
struct sig_key {
	uint64_t memory_mib;
	uint64_t time_min;
	uint32_t threads;
	bool wide;
};

/* Keys (sig_key) against each other, or a key against a sim_sig (X only):
 * the same order. */
#define SIG_ORDER(x, y) do { \
		ORDER_BY(x, y, threads); \
		ORDER_BY(x, y, memory_mib); \
		ORDER_BY(x, y, time_min); \
		ORDER_BY(x, y, wide); \
	} while (0)

static int cmp_sig_key(const void *a, const void *b)
{
	const struct sig_key *x = a, *y = b;

	SIG_ORDER(x, y);
	return 0;
}

static int cmp_key_to_sig(const void *key, const void *sig)
{
	const struct sig_key *x = key;
	const struct sim_sig *y = sig;

	SIG_ORDER(x, y);
	return 0;
}

static int cmp_queue_key(const void *a, const void *b)
{
	const struct sim_queue_key *x = a, *y = b;

	ORDER_BY(x, y, sig);
	ORDER_BY(x, y, parts);
	ORDER_BY(x, y, length);
	return 0;
}

static uint32_t length_class(int64_t seconds)
{
	uint32_t k = 0;

	for (int64_t m = seconds / 60; m > 1; m /= 2)
		k++;
	return k;
}

/* Fill reqs and the qualification row of signature S. */
static int sig_prepare(struct mxq_sim_cluster *c, struct sim_sig *s)
{
	int r = mxq_group_reqs_init(&s->reqs, NULL, NULL, NULL, NULL, s->threads, s->memory_mib,
				    s->time_min, 0, 0);
	if (r < 0)
		return r;
	s->reqs_ready = true;
	s->qual = malloc(c->n_nodes);
	if (!s->qual)
		return -ENOMEM;
	s->n_qual = 0;
	s->slot_w = INFINITY;
	for (size_t i = 0; i < c->n_nodes; i++) {
		s->qual[i] = server_is_qualified(&c->nodes[i].caps, &s->reqs, NULL);
		s->n_qual += s->qual[i];
		if (s->qual[i]) {
			const struct mxq_sim_class *k = &c->classes[c->nodes[i].cls];
			double w = (k->busy_w - k->idle_w) / (double)k->cores;
			if (w < s->slot_w)
				s->slot_w = w;
		}
	}
	return 0;
}

int mxq_sim_cluster_new(const struct mxq_sim_trace *trace, const struct mxq_sim_class *classes,
			size_t n_classes, const struct mxq_sim_workload_opts *opts,
			struct mxq_sim_cluster **ret_cluster, char *errbuf, size_t errlen)
{
	struct mxq_sim_cluster *c;
	struct placed_job *placed = NULL;
	struct sig_key *keys = NULL;
	size_t n_placed = 0;
	uint32_t max_cores = 0;
	uint64_t max_mem = 0, max_time = 0;
	int r;

	if (!trace || !classes || !n_classes || !opts || !ret_cluster ||
	    !(opts->scale > 0.0 && opts->scale <= 1000.0) ||
	    (unsigned)opts->wide >= _MXQ_SIM_WIDE_MAX || opts->skip_s < 0 || opts->window_s < 0) {
		set_err(errbuf, errlen, "invalid simulation options");
		return -EINVAL;
	}
	if (jobs_dropped(trace, errbuf, errlen))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->classes = calloc(n_classes, sizeof(*c->classes));
	if (!c->classes) {
		r = -ENOMEM;
		goto fail;
	}
	memcpy(c->classes, classes, n_classes * sizeof(*classes));
	c->n_classes = n_classes;
	r = build_nodes(c, errbuf, errlen);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < n_classes; i++) {
		if (classes[i].count == 0)
			continue;
		if (classes[i].cores > max_cores)
			max_cores = classes[i].cores;
		if (classes[i].memory_mib > max_mem)
			max_mem = classes[i].memory_mib;
		if (classes[i].maxtime_min > max_time)
			max_time = classes[i].maxtime_min;
	}
	c->max_cores = max_cores;
	bool memory_modelled = max_mem > 0;
	bool time_modelled = max_time > 0;

	r = place_jobs(trace, opts->scale, &placed, &n_placed);
	if (r < 0)
		goto fail;
	int64_t first = trace->n_jobs ? trace->jobs[0].submit : 0;
	int64_t wstart = (opts->has_start ? opts->start : first) + opts->skip_s;
	int64_t wend = opts->window_s ? wstart + opts->window_s : INT64_MAX;
	c->start = trace->unix_start + wstart;
	c->last_submit = c->start;
	c->stats.trace_jobs = trace->n_jobs;

	/* room for the pieces of split wide jobs */
	size_t n_slots = n_placed;
	if (opts->wide == MXQ_SIM_WIDE_SPLIT && max_cores)
		for (size_t k = 0; k < n_placed; k++) {
			uint32_t procs = trace->jobs[placed[k].trace_index].procs;
			if (procs > max_cores)
				n_slots += (procs + (uint64_t)max_cores - 1) / max_cores - 1;
		}
	c->jobs = calloc(n_slots ? n_slots : 1, sizeof(*c->jobs));
	keys = calloc(n_slots ? n_slots : 1, sizeof(*keys));
	if (!c->jobs || !keys) {
		r = -ENOMEM;
		goto fail;
	}

	/* translate: slots, parts, memory per part, signature key */
	size_t nj = 0;
	for (size_t k = 0; k < n_placed; k++) {
		const struct mxq_sim_trace_job *tj = &trace->jobs[placed[k].trace_index];
		struct sim_job *j = &c->jobs[nj];
		struct sig_key *key = &keys[nj];

		if (placed[k].submit < wstart || placed[k].submit >= wend)
			continue;
		memset(key, 0, sizeof(*key));
		j->submit = trace->unix_start + placed[k].submit;
		j->run = tj->run;
		if (!opts->keep_overruns && tj->req_time > 0 && j->run > tj->req_time) {
			j->run = tj->req_time;
			c->stats.cut_to_limit++;
		}
		j->expect = opts->expect_actual || tj->req_time <= 0 ? tj->run : tj->req_time;
		if (tj->procs <= max_cores) {
			j->parts = 1;
			j->threads = tj->procs;
		} else if (opts->wide == MXQ_SIM_WIDE_GANG || opts->wide == MXQ_SIM_WIDE_SPLIT) {
			uint64_t parts = (tj->procs + (uint64_t)max_cores - 1) / max_cores;
			j->parts = (uint32_t)parts;
			j->threads = max_cores;
			key->wide = true;
		} else {
			j->parts = 1;
			j->threads = max_cores;
			c->stats.clamped_procs++;
		}
		if (memory_modelled && tj->mem_kib_per_proc > 0) {
			uint64_t kib = (uint64_t)tj->mem_kib_per_proc * tj->procs;
			uint64_t per_part = (kib + 1023) / 1024;
			per_part = (per_part + j->parts - 1) / j->parts;
			if (per_part > max_mem) {
				per_part = max_mem;
				c->stats.clamped_memory++;
			}
			j->memory_mib = per_part;
		}
		key->threads = j->threads;
		key->memory_mib = j->memory_mib;
		if (time_modelled)
			key->time_min = (uint64_t)((j->expect + 59) / 60);
		if (opts->wide == MXQ_SIM_WIDE_SPLIT && j->parts > 1) {
			/* MXQ has no gangs: one independent node-wide job per part */
			uint32_t pieces = j->parts;
			c->stats.split++;
			key->wide = false;
			j->parts = 1;
			for (uint32_t q = 1; q < pieces; q++) {
				c->jobs[nj + q] = *j;
				keys[nj + q] = *key;
			}
			nj += pieces;
			continue;
		}
		nj++;
	}
	c->n_jobs = nj;

	/* distinct signatures */
	if (nj) {
		struct sig_key *sorted = malloc(nj * sizeof(*sorted));
		if (!sorted) {
			r = -ENOMEM;
			goto fail;
		}
		memcpy(sorted, keys, nj * sizeof(*sorted));
		qsort(sorted, nj, sizeof(*sorted), cmp_sig_key);
		size_t u = 0;
		for (size_t k = 0; k < nj; k++)
			if (u == 0 || cmp_sig_key(&sorted[u - 1], &sorted[k]) != 0)
				sorted[u++] = sorted[k];
		c->sigs = calloc(u, sizeof(*c->sigs));
		if (!c->sigs) {
			free(sorted);
			r = -ENOMEM;
			goto fail;
		}
		for (size_t k = 0; k < u; k++)
			c->sigs[k] = (struct sim_sig) { .threads = sorted[k].threads,
							.memory_mib = sorted[k].memory_mib,
							.time_min = sorted[k].time_min,
							.wide = sorted[k].wide };
		c->n_sigs = u;
		free(sorted);
	}
	for (size_t s = 0; s < c->n_sigs; s++) {
		r = sig_prepare(c, &c->sigs[s]);
		if (r < 0)
			goto fail;
	}

	/* assign signatures, drop what can never run, clamp gangs to the
	 * qualified nodes there are */
	size_t kept = 0;
	for (size_t k = 0; k < nj; k++) {
		struct sim_job *j = &c->jobs[k];
		struct sim_sig *hit = bsearch(&keys[k], c->sigs, c->n_sigs, sizeof(*c->sigs),
					      cmp_key_to_sig);
		if (!hit || hit->n_qual == 0) {
			c->stats.unrunnable++;
			continue;
		}
		j->sig = (uint32_t)(hit - c->sigs);
		if (j->parts > hit->n_qual) {
			j->parts = hit->n_qual;
			c->stats.clamped_procs++;
		}
		if (j->parts > 1)
			c->stats.wide++;
		c->stats.busy_core_seconds += (uint64_t)j->threads * j->parts * (uint64_t)j->run;
		c->mem_mib_s += (double)j->memory_mib * j->parts * (double)j->run;
		c->slot_j += hit->slot_w * j->threads * j->parts * (double)j->run;
		j->part_off = c->total_parts;
		c->total_parts += j->parts;
		if (j->submit > c->last_submit)
			c->last_submit = j->submit;
		c->jobs[kept++] = *j;
	}
	c->n_jobs = kept;
	c->stats.jobs = kept;
	c->stats.signatures = c->n_sigs;

	/* dispatch queues: signature x width */
	if (kept) {
		struct sim_queue_key *qk = malloc(kept * sizeof(*qk));
		if (!qk) {
			r = -ENOMEM;
			goto fail;
		}
		for (size_t k = 0; k < kept; k++) {
			c->jobs[k].length = length_class(c->jobs[k].expect);
			qk[k] = (struct sim_queue_key) { c->jobs[k].sig, c->jobs[k].parts,
							 c->jobs[k].length };
		}
		qsort(qk, kept, sizeof(*qk), cmp_queue_key);
		size_t u = 0;
		for (size_t k = 0; k < kept; k++)
			if (u == 0 || cmp_queue_key(&qk[u - 1], &qk[k]) != 0)
				qk[u++] = qk[k];
		c->queues = qk;
		c->n_queues = u;
		for (size_t k = 0; k < kept; k++) {
			struct sim_queue_key key = { c->jobs[k].sig, c->jobs[k].parts,
						     c->jobs[k].length };
			struct sim_queue_key *hit = bsearch(&key, c->queues, c->n_queues,
							    sizeof(*c->queues), cmp_queue_key);
			c->jobs[k].queue = (uint32_t)(hit - c->queues);
		}
	}
	free(keys);
	free(placed);
	*ret_cluster = c;
	return 0;
fail:
	free(keys);
	free(placed);
	mxq_sim_cluster_free(c);
	return r;
}

/* ======================================================================
 * Simulation
 */

static const char *const policy_names[_MXQ_SIM_POLICY_MAX] = {
	[MXQ_SIM_ALWAYS_ON] = "always-on",
	[MXQ_SIM_TIMEOUT] = "timeout",
	[MXQ_SIM_POLICY] = "policy",
};

const char *mxq_sim_policy_to_string(enum mxq_sim_policy policy)
{
	return (unsigned)policy < _MXQ_SIM_POLICY_MAX ? policy_names[policy] : NULL;
}

enum phys {
	PHYS_UP,
	PHYS_BOOTING,
	PHYS_SHUTTING,
	PHYS_DOWN,
};

enum energy_cat {
	E_BUSY,
	E_IDLE,
	E_TRANSITION,
	E_OFF,
	_E_MAX,
};

/* Same-time events run in this order; the policy tick comes last. */
enum event_type {
	EV_JOB_END = 0,
	EV_PHYS_DONE,
	EV_IDLE_TIMEOUT,
	EV_POLL,
	EV_TICK,
};

struct event {
	int64_t t;
	uint32_t type;
	uint32_t id;
	uint32_t gen;
};

/* A min-heap of events (ev_less). */
struct ev_heap {
	struct event *v;
	size_t n, cap;
};

struct sim_node {
	const struct mxq_sim_class *cls;
	enum mxq_power_node_state rec;   /* what the mxq_power table says */
	int64_t rec_since;
	enum phys phys;                  /* what the hardware does */
	int64_t phys_until;              /* end of a boot or shutdown */
	uint32_t phys_gen;
	uint32_t used_slots;
	uint64_t used_mem;
	uint32_t jobs;
	uint32_t *run;                   /* running jobs */
	uint32_t n_run, cap_run;
	int64_t last_job_end;
	int64_t last_boot_ok_at;
	int64_t cycles_day;
	uint32_t cycles_today;
	uint32_t boots;
	uint32_t failures;               /* MARK_FAILED since the last good boot, as mxq_power keeps it */
	/* books */
	enum energy_cat cat;
	double watts;
	double c_powered_w;              /* watts counted in powered_w */
	int64_t since;
	bool idle;                       /* UP and no job */
	int64_t idle_since;
	uint32_t idle_gen;
	bool held;                       /* reserved for the first blocked wide job */
	/* contributions to the sums */
	uint32_t c_free;
	bool c_empty;                /* in m_empty */
	bool c_powered;
	bool c_busy;
	bool c_off;
	/* per-pass virtual room (timeout wakes) */
	uint32_t vpass;
	uint32_t vslots;
	uint64_t vmem;
	/* its entry in the policy's snapshot */
	bool snap_stale;                 /* changed since it was last written there */
	struct mxq_power_running_job *prun; /* its running jobs, as the policy sees them */
	uint32_t cap_prun;
	/* what node_sets() last made of it */
	int64_t max_end;                 /* latest expected end of its running jobs, 0: none */
	uint8_t hold_kind;               /* how hold_for() counts it (HOLD_*) */
	bool in_up;                      /* in up_sorted, by up_end */
	int64_t up_end;
	bool c_unsettled;                /* recorded DRAINING, UNKNOWN or FAILED */
	int64_t offq_since;              /* the rec_since last queued on offq */
};

/* How hold_for() counts a node: free after its boot or shutdown and a boot,
 * after its min off-time and a boot, at its jobs' expected ends, never. */
enum { HOLD_NONE, HOLD_MOVING, HOLD_OFF, HOLD_UP, _HOLD_KINDS };

/* A node recorded OFF at SINCE (stale once it is no longer so). */
struct sim_offq {
	uint32_t node;
	int64_t since;
};



struct sim_queue {
	uint32_t *v;
	size_t head, tail, cap;
	size_t cursor;                   /* per pass */
	bool real_failed;                /* per pass */
	size_t active_pos;
};

struct pass_entry {
	int64_t submit;
	uint32_t job;
	uint32_t queue;
};

struct mxq_sim {
	const struct mxq_sim_cluster *c;
	struct mxq_sim_params p;
	struct sim_node *nodes;
	size_t n_nodes;
	int64_t now;
	bool started;

	struct ev_heap evq;
	size_t next_submit;

	struct sim_queue *queues;
	uint32_t *active;                /* non-empty queues */
	size_t n_active;
	struct pass_entry *by_head;      /* their heads, in pass order (pe_less): a pass
	                                    walks them without reading the queues */
	struct pass_entry *pass_heads;   /* by_head as a pass began */
	struct pass_entry *pass_heap;
	uint32_t pass_id;
	struct pass_fail *sig_fail;      /* per signature: the fewest parts that failed this pass */
	uint32_t *held;                  /* the reservation */
	size_t n_held;
	size_t n_held_idle;              /* reserved nodes idle now */
	size_t hold_job;
	int64_t shadow;                  /* reservation starts; others must end by then */
	struct mxq_power_free_time *sel;             /* scratch for choosing the reservation */
	bool dirty;

	uint64_t waiting, running, ended;
	int64_t *job_start;
	uint32_t *part_nodes;
	double *waits;
	int64_t done_at;
	int64_t last_progress;

	uint64_t free_slots;             /* on dispatchable nodes */
	uint32_t n_powered, n_busy, n_off, n_transit;

	double e[_E_MAX];
	uint64_t events, ticks, actions[_MXQ_POWER_ACTION_MAX], policy_errors;
	double powered_w, peak_powered_w;  /* draw of the nodes not off, its peak */
	bool closed;
	bool trimmed;                    /* mxq_sim_trim(): no per-job arrays */
	double wait_mean_s, wait_max_s, wait_p95_s;  /* kept by mxq_sim_trim() */
	int64_t end;

	/* policy snapshot, reused every tick */
	struct mxq_power_state pstate;
	struct mxq_power_index *pindex;  /* told of every rewritten snapshot entry */
	bool changed;                    /* anything the snapshot shows changed since the last decision */
	bool quiet;                      /* the last decision was a fixed point (see tick_is_quiet) */
	int64_t quiet_until;             /* ... until this time at the latest */
	uint64_t ticks_skipped;
	int64_t next_tick_at;            /* of the pending EV_TICK */
	int64_t poll_at;                 /* of the pending EV_POLL, NONE_TIME if none */
	uint64_t polls;                  /* decisions an EV_POLL asked for */
	struct mxq_power_node *pnodes;   /* rewritten only where stale (see build_snapshot) */
	uint32_t *stale;                 /* nodes whose snapshot entry is stale */
	size_t n_stale;
	int64_t snap_day;                /* day of the last snapshot */
	struct mxq_power_demand *pdemand;
	uint64_t *sig_pending;
	uint32_t *sig_stamp;
	uint32_t tick_stamp;

	/* node sets kept by node_sets(), walked instead of every node */
	uint64_t *m_sets;                /* the block of the sets below but m_room */
	uint64_t *m_empty;               /* c_free > 0, without jobs */
	size_t n_empty;
	uint32_t *free_count;            /* nodes by c_free, 0 .. max_cores */
	uint64_t *m_room;                /* n_room sets: set k holds c_free > k
					  * (the dispatch candidates) */
	uint32_t n_room;                 /* min(max_cores, ROOM_LEVELS), >= 1 */
	uint64_t *m_hold[_HOLD_KINDS];   /* by hold_kind */
	uint64_t *m_rtrans;              /* recorded POWERING_ON or POWERING_OFF */
	uint64_t *m_onidle;              /* recorded ON without jobs */
	uint64_t *m_vboot;               /* booting for a wake, and OFF: what a */
	uint64_t *m_voff;                /* timeout can give a job (try_wake_for) */
	struct mx_blist up_sorted;       /* the HOLD_UP nodes by (max_end, index) */
	size_t n_unsettled;              /* nodes with c_unsettled */
	struct sim_offq *offq;           /* recorded OFF, in order of time (policy) */
	size_t offq_head, offq_tail, offq_cap;
	struct ev_heap dueq;             /* per job started (policy): its expected end +
	                                    boot time + 1 s (id: the job), when it stops
	                                    counting as freeing soon */
	uint8_t *job_live;               /* running now */
	uint32_t *hold_taken;            /* per class, scratch of hold_for() */
	struct mxq_power_free_time *ref_sel; /* params.self_check: scratch of the full passes */
	uint8_t *ref_mark;

	/* time series: node-seconds per bucket and the seconds it covers,
	 * turned into means when the books are closed */
	double *s_pow, *s_busy, *s_cover;
	size_t n_series, cap_series;
	int64_t s_last;
};

/* --- event heap --------------------------------------------------------- */

static bool ev_less(const struct event *a, const struct event *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->type != b->type)
		return a->type < b->type;
	return a->id < b->id;
}

static int heap_push(struct ev_heap *h, struct event e)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 256;
		struct event *v = realloc(h->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	size_t i = h->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!ev_less(&e, &h->v[parent]))
			break;
		h->v[i] = h->v[parent];
		i = parent;
	}
	h->v[i] = e;
	return 0;
}

static struct event heap_pop(struct ev_heap *h)
{
	struct event top = h->v[0];
	struct event last = h->v[--h->n];
	size_t i = 0, n = h->n;

	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l >= n)
			break;
		m = l;
		if (l + 1 < n && ev_less(&h->v[l + 1], &h->v[l]))
			m = l + 1;
		if (!ev_less(&h->v[m], &last))
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (n)
		h->v[i] = last;
	return top;
}

static int ev_push(struct mxq_sim *s, int64_t t, uint32_t type, uint32_t id, uint32_t gen)
{
	return heap_push(&s->evq, (struct event) { t, type, id, gen });
}

static struct event ev_pop(struct mxq_sim *s)
{
	return heap_pop(&s->evq);
}

/* --- books -------------------------------------------------------------- */

static void series_advance(struct mxq_sim *s, int64_t now)
{
	int64_t step = s->p.series_step_s;

	if (step <= 0)
		return;
	while (s->s_last < now) {
		size_t b = (size_t)((s->s_last - s->c->start) / step);
		int64_t bucket_end = s->c->start + (int64_t)(b + 1) * step;
		int64_t seg_end = now < bucket_end ? now : bucket_end;
		if (b >= s->cap_series) {
			size_t cap = s->cap_series ? s->cap_series * 2 : 1024;
			while (cap <= b)
				cap *= 2;
			double *a = realloc(s->s_pow, cap * sizeof(*a));
			if (a)
				s->s_pow = a;
			double *bb = realloc(s->s_busy, cap * sizeof(*bb));
			if (bb)
				s->s_busy = bb;
			double *cc = realloc(s->s_cover, cap * sizeof(*cc));
			if (cc)
				s->s_cover = cc;
			if (!a || !bb || !cc) {
				/* out of memory: the series stops here, the run goes on */
				s->p.series_step_s = 0;
				return;
			}
			size_t grow = (cap - s->cap_series) * sizeof(double);
			memset(s->s_pow + s->cap_series, 0, grow);
			memset(s->s_busy + s->cap_series, 0, grow);
			memset(s->s_cover + s->cap_series, 0, grow);
			s->cap_series = cap;
		}
		double dt = (double)(seg_end - s->s_last);
		s->s_pow[b] += s->n_powered * dt;
		s->s_busy[b] += s->n_busy * dt;
		s->s_cover[b] += dt;
		if (b + 1 > s->n_series)
			s->n_series = b + 1;
		s->s_last = seg_end;
	}
}

static bool node_dispatchable(const struct sim_node *n)
{
	return n->phys == PHYS_UP && n->rec != MXQ_POWER_DRAINING &&
	       n->rec != MXQ_POWER_POWERING_OFF && n->rec != MXQ_POWER_OFF;
}

static uint8_t hold_kind(const struct sim_node *nd)
{
	if (nd->phys == PHYS_BOOTING && nd->rec == MXQ_POWER_POWERING_ON)
		return HOLD_MOVING;
	if (nd->phys == PHYS_DOWN && nd->rec == MXQ_POWER_OFF)
		return HOLD_OFF;
	if (nd->phys == PHYS_SHUTTING || (nd->phys == PHYS_DOWN && nd->rec == MXQ_POWER_POWERING_OFF))
		return HOLD_MOVING;
	if (node_dispatchable(nd) || nd->rec == MXQ_POWER_DRAINING)
		return HOLD_UP;   /* a drained node can be taken back at once */
	return HOLD_NONE;
}

/* Queue node I as recorded OFF since its rec_since (the policy's min
 * off-time runs from then). */
static int offq_push(struct mxq_sim *s, size_t i)
{
	if (s->offq_tail == s->offq_cap) {
		if (s->offq_head > 0) {
			memmove(s->offq, s->offq + s->offq_head,
				(s->offq_tail - s->offq_head) * sizeof(*s->offq));
			s->offq_tail -= s->offq_head;
			s->offq_head = 0;
		}
		if (s->offq_tail == s->offq_cap) {
			size_t cap = s->offq_cap ? s->offq_cap * 2 : 64;
			struct sim_offq *v = realloc(s->offq, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			s->offq = v;
			s->offq_cap = cap;
		}
	}
	s->offq[s->offq_tail++] = (struct sim_offq) { (uint32_t)i, s->nodes[i].rec_since };
	s->nodes[i].offq_since = s->nodes[i].rec_since;
	return 0;
}

/* The queued OFF nodes still in their min off-time, oldest first; drop
 * those past it (time only moves on). */
static void offq_trim(struct mxq_sim *s)
{
	while (s->offq_head < s->offq_tail &&
	       s->offq[s->offq_head].since + s->p.cfg->min_off_time_s <= s->now)
		s->offq_head++;
}

static bool offq_valid(const struct mxq_sim *s, const struct sim_offq *e)
{
	const struct sim_node *nd = &s->nodes[e->node];
	return nd->rec == MXQ_POWER_OFF && nd->rec_since == e->since;
}

/* The earliest due time after now of a running job; INT64_MAX: none. */
static int64_t due_next(struct mxq_sim *s)
{
	while (s->dueq.n && (s->dueq.v[0].t <= s->now || !s->job_live[s->dueq.v[0].id]))
		heap_pop(&s->dueq);
	return s->dueq.n ? s->dueq.v[0].t : INT64_MAX;
}

/* Keep node I in up_sorted while it is HOLD_UP, by its max_end. */
static void up_update(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];
	bool up = n->hold_kind == HOLD_UP;

	if (n->in_up && up && n->up_end != n->max_end) {
		mx_blist_move(&s->up_sorted, n->up_end, n->max_end, (uint32_t)i);
		n->up_end = n->max_end;
	} else if (n->in_up && !up) {
		mx_blist_remove(&s->up_sorted, n->up_end, (uint32_t)i);
		n->in_up = false;
	} else if (up && !n->in_up) {
		n->up_end = n->max_end;
		mx_blist_insert(&s->up_sorted, n->up_end, (uint32_t)i);
		n->in_up = true;
	}
}

/* Re-derive the sets node I is in; after every change to it. */
static int node_sets(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];
	uint8_t kind = hold_kind(n);
	bool unsettled = n->rec == MXQ_POWER_DRAINING || n->rec == MXQ_POWER_UNKNOWN ||
			 n->rec == MXQ_POWER_FAILED;

	n->max_end = 0;
	for (uint32_t r = 0; r < n->n_run; r++) {
		int64_t end = s->job_start[n->run[r]] + s->c->jobs[n->run[r]].expect;
		if (r == 0 || end > n->max_end)
			n->max_end = end;
	}
	bool empty = n->c_free > 0 && n->jobs == 0;
	mx_bitmap_put(s->m_empty, i, empty);
	s->n_empty += (size_t)empty - (size_t)n->c_empty;
	n->c_empty = empty;
	if (kind != n->hold_kind) {
		mx_bitmap_clear(s->m_hold[n->hold_kind], i);
		n->hold_kind = kind;
	}
	mx_bitmap_set(s->m_hold[kind], i);
	up_update(s, i);
	mx_bitmap_put(s->m_vboot, i, n->rec == MXQ_POWER_POWERING_ON && n->phys == PHYS_BOOTING);
	mx_bitmap_put(s->m_voff, i, n->rec == MXQ_POWER_OFF);
	mx_bitmap_put(s->m_rtrans, i, n->rec == MXQ_POWER_POWERING_ON ||
		      n->rec == MXQ_POWER_POWERING_OFF);
	mx_bitmap_put(s->m_onidle, i, n->rec == MXQ_POWER_ON && !n->jobs);
	s->n_unsettled += (size_t)unsettled - (size_t)n->c_unsettled;
	n->c_unsettled = unsettled;
	if (s->p.policy == MXQ_SIM_POLICY && n->rec == MXQ_POWER_OFF && n->offq_since != n->rec_since)
		return offq_push(s, i);
	return 0;
}

/* At least 1 s: a 0 s timeout firing at the same instant would power a
 * freshly booted node off before the dispatch pass that follows the
 * events of that instant could give it the job it was woken for (and wake
 * it again, for ever). */
static int arm_idle_timeout(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];
	int64_t t = s->p.timeout_s > 0 ? s->p.timeout_s : 1;

	return ev_push(s, s->now + t, EV_IDLE_TIMEOUT, (uint32_t)i, ++n->idle_gen);
}

/*
 * Bring the books of node I up to now and re-derive everything that
 * depends on its state: energy category and draw, counters, idle gaps
 * (offline bound, idle timeout). Call after every change to the node.
 */
/* Node I's free slots went from WAS to NOW: the room sets (ROOM_LEVELS
 * bounds the sets kept; a wider job walks the widest and checks each). */
#define ROOM_LEVELS 256
static void room_update(struct mxq_sim *s, size_t i, uint32_t was, uint32_t now)
{
	size_t words = mx_bitmap_words(s->n_nodes);
	uint32_t lo = was < now ? was : now, hi = was < now ? now : was;

	for (uint32_t k = lo; k < hi && k < s->n_room; k++)
		mx_bitmap_put(s->m_room + (size_t)k * words, i, now > k);
}

/* The dispatch candidates for a job of THREADS slots: a superset of the
 * nodes with that much room, in node order. */
static const uint64_t *room_for(const struct mxq_sim *s, uint32_t threads)
{
	uint32_t k = threads ? threads - 1 : 0;

	if (k >= s->n_room)
		k = s->n_room - 1;
	return s->m_room + (size_t)k * mx_bitmap_words(s->n_nodes);
}

static int node_update(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];
	const struct mxq_sim_class *cls = n->cls;
	int64_t now = s->now;

	series_advance(s, now);
	s->changed = true;
	if (s->stale && !n->snap_stale) {
		n->snap_stale = true;
		s->stale[s->n_stale++] = (uint32_t)i;
	}
	s->e[n->cat] += n->watts * (double)(now - n->since);
	n->since = now;
	switch (n->phys) {
	case PHYS_UP:
		if (n->jobs) {
			n->cat = E_BUSY;
			n->watts = cls->idle_w + (cls->busy_w - cls->idle_w) *
				   (double)n->used_slots / (double)cls->cores;
		} else {
			n->cat = E_IDLE;
			n->watts = cls->idle_w;
		}
		break;
	case PHYS_BOOTING:
		n->cat = E_TRANSITION;
		n->watts = cls->boot_s ? cls->boot_j / (double)cls->boot_s : 0.0;
		break;
	case PHYS_SHUTTING:
		n->cat = E_TRANSITION;
		n->watts = cls->shutdown_s ? cls->shutdown_j / (double)cls->shutdown_s : 0.0;
		break;
	case PHYS_DOWN:
		n->cat = E_OFF;
		n->watts = cls->off_w;
		break;
	}

	double powered_w = n->phys != PHYS_DOWN ? n->watts : 0.0;
	s->powered_w += powered_w - n->c_powered_w;
	n->c_powered_w = powered_w;
	if (s->powered_w > s->peak_powered_w)
		s->peak_powered_w = s->powered_w;

	uint32_t free_now = node_dispatchable(n) ? cls->cores - n->used_slots : 0;
	s->free_slots += free_now;
	s->free_slots -= n->c_free;
	s->free_count[n->c_free]--;
	s->free_count[free_now]++;
	room_update(s, i, n->c_free, free_now);
	n->c_free = free_now;
	bool powered = n->phys != PHYS_DOWN, busy = n->jobs > 0;
	bool off = n->rec == MXQ_POWER_OFF;
	s->n_powered += (uint32_t)powered - (uint32_t)n->c_powered;
	s->n_busy += (uint32_t)busy - (uint32_t)n->c_busy;
	s->n_off += (uint32_t)off - (uint32_t)n->c_off;
	n->c_powered = powered;
	n->c_busy = busy;
	n->c_off = off;
	int r = node_sets(s, i);
	if (r < 0)
		return r;

	bool idle = n->phys == PHYS_UP && n->jobs == 0;
	if (idle && !n->idle) {
		n->idle = true;
		n->idle_since = now;
		if (s->p.policy == MXQ_SIM_TIMEOUT && n->rec == MXQ_POWER_ON)
			return arm_idle_timeout(s, i);
	} else if (!idle && n->idle) {
		n->idle = false;
		n->idle_gen++;
	}
	return 0;
}

/* --- power transitions ------------------------------------------------------ */

static int64_t day_of(int64_t t)
{
	return t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
}

static void set_rec(struct mxq_sim *s, struct sim_node *n, enum mxq_power_node_state st)
{
	n->rec = st;
	n->rec_since = s->now;
}

static int start_boot(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];
	int64_t day = day_of(s->now);

	if (n->cycles_day != day) {
		n->cycles_day = day;
		n->cycles_today = 0;
	}
	n->cycles_today++;
	n->boots++;
	set_rec(s, n, MXQ_POWER_POWERING_ON);
	n->phys = PHYS_BOOTING;
	n->phys_until = s->now + n->cls->boot_s;
	s->n_transit++;
	s->last_progress = s->now;
	if (!n->cls->boot_s)
		s->e[E_TRANSITION] += n->cls->boot_j;
	int r = node_update(s, i);
	if (r < 0)
		return r;
	return ev_push(s, s->now + n->cls->boot_s, EV_PHYS_DONE, (uint32_t)i, ++n->phys_gen);
}

static int start_shutdown(struct mxq_sim *s, size_t i)
{
	struct sim_node *n = &s->nodes[i];

	set_rec(s, n, MXQ_POWER_POWERING_OFF);
	n->phys = PHYS_SHUTTING;
	n->phys_until = s->now + n->cls->shutdown_s;
	s->n_transit++;
	if (!n->cls->shutdown_s)
		s->e[E_TRANSITION] += n->cls->shutdown_j;
	int r = node_update(s, i);
	if (r < 0)
		return r;
	return ev_push(s, s->now + n->cls->shutdown_s, EV_PHYS_DONE, (uint32_t)i, ++n->phys_gen);
}

/* Boot or shutdown finished. The baselines record it at once; for the
 * policy the node reports (registration, power off) and the leader records
 * it at its next tick (MARK_ON, MARK_OFF) - meanwhile a booted node's mxqd
 * already takes jobs, as a real one would. */
static int phys_done(struct mxq_sim *s, size_t i, uint32_t gen)
{
	struct sim_node *n = &s->nodes[i];

	if (gen != n->phys_gen)
		return 0;
	s->n_transit--;
	if (n->phys == PHYS_BOOTING) {
		n->phys = PHYS_UP;
		n->last_boot_ok_at = s->now;
		s->last_progress = s->now;
		if (s->p.policy != MXQ_SIM_POLICY)
			set_rec(s, n, MXQ_POWER_ON);
		s->dirty = true;
	} else if (n->phys == PHYS_SHUTTING) {
		n->phys = PHYS_DOWN;
		if (s->p.policy != MXQ_SIM_POLICY)
			set_rec(s, n, MXQ_POWER_OFF);
		s->dirty = true;
	}
	return node_update(s, i);
}

static int idle_timeout(struct mxq_sim *s, size_t i, uint32_t gen)
{
	struct sim_node *n = &s->nodes[i];

	if (gen != n->idle_gen || !n->idle || n->rec != MXQ_POWER_ON)
		return 0;
	if (n->held)                /* planned for a waiting wide job */
		return arm_idle_timeout(s, i);
	return start_shutdown(s, i);
}

/* --- jobs --------------------------------------------------------------------- */

/* The pass entry of queue Q's head job. */
static struct pass_entry head_entry(const struct mxq_sim *s, uint32_t q)
{
	uint32_t job = s->queues[q].v[s->queues[q].head];

	return (struct pass_entry) { s->c->jobs[job].submit, job, q };
}

static bool pe_less(const struct pass_entry *a, const struct pass_entry *b);

/* Where queue Q's head belongs in by_head[0..n) (the first later one). */
static size_t by_head_place(const struct mxq_sim *s, uint32_t q, size_t n)
{
	struct pass_entry e = head_entry(s, q);
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pe_less(&s->by_head[mid], &e))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Put queue Q, just made non-empty or with a new head, in its place in
 * by_head[0..n), which it is not in (a new job is mostly the latest: at
 * the end). */
static void by_head_insert(struct mxq_sim *s, uint32_t q, size_t n)
{
	size_t at = by_head_place(s, q, n);

	memmove(s->by_head + at + 1, s->by_head + at, (n - at) * sizeof(*s->by_head));
	s->by_head[at] = head_entry(s, q);
}

/* Take out by_head[AT] of by_head[0..n), N counting it. */
static void by_head_remove(struct mxq_sim *s, size_t at, size_t n)
{
	memmove(s->by_head + at, s->by_head + at + 1, (n - at - 1) * sizeof(*s->by_head));
}

static int queue_push(struct mxq_sim *s, uint32_t q, uint32_t job)
{
	struct sim_queue *sq = &s->queues[q];

	if (sq->tail == sq->cap) {
		if (sq->head > 0 && sq->head >= sq->cap / 2) {
			memmove(sq->v, sq->v + sq->head, (sq->tail - sq->head) * sizeof(*sq->v));
			sq->tail -= sq->head;
			sq->head = 0;
		} else {
			size_t cap = sq->cap ? sq->cap * 2 : 16;
			uint32_t *v = realloc(sq->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			sq->v = v;
			sq->cap = cap;
		}
	}
	s->changed = true;
	bool was_empty = sq->head == sq->tail;
	sq->v[sq->tail++] = job;
	if (was_empty) {
		sq->active_pos = s->n_active;
		s->active[s->n_active] = q;
		by_head_insert(s, q, s->n_active);
		s->n_active++;
	}
	return 0;
}

static void queue_pop_head(struct mxq_sim *s, uint32_t q)
{
	struct sim_queue *sq = &s->queues[q];

	/* out of by_head under its old head (keys are unique), back in under
	 * the next one */
	by_head_remove(s, by_head_place(s, q, s->n_active), s->n_active);
	sq->head++;
	s->changed = true;
	if (sq->head < sq->tail) {
		by_head_insert(s, q, s->n_active - 1);
		return;
	}
	sq->head = sq->tail = 0;
	uint32_t last = s->active[--s->n_active];
	s->active[sq->active_pos] = last;
	s->queues[last].active_pos = sq->active_pos;
}

static int node_add_job(struct sim_node *n, uint32_t job)
{
	if (n->n_run == n->cap_run) {
		uint32_t cap = n->cap_run ? n->cap_run * 2 : 4;
		uint32_t *v = realloc(n->run, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		n->run = v;
		n->cap_run = cap;
	}
	n->run[n->n_run++] = job;
	return 0;
}

static void node_remove_job(struct sim_node *n, uint32_t job)
{
	for (uint32_t k = 0; k < n->n_run; k++) {
		if (n->run[k] == job) {
			n->run[k] = n->run[--n->n_run];
			return;
		}
	}
}

/* Start JOB on the nodes listed in PICK (one per part). */
static int start_job(struct mxq_sim *s, uint32_t job, const uint32_t *pick)
{
	const struct sim_job *j = &s->c->jobs[job];
	int r;

	s->job_start[job] = s->now;
	s->waits[job] = (double)(s->now - j->submit);
	for (uint32_t k = 0; k < j->parts; k++) {
		struct sim_node *n = &s->nodes[pick[k]];
		s->part_nodes[j->part_off + k] = pick[k];
		r = node_add_job(n, job);
		if (r < 0)
			return r;
		n->used_slots += j->threads;
		n->used_mem += j->memory_mib;
		n->jobs++;
		r = node_update(s, pick[k]);
		if (r < 0)
			return r;
	}
	s->waiting--;
	s->running++;
	s->last_progress = s->now;
	s->job_live[job] = 1;
	if (s->p.policy == MXQ_SIM_POLICY) {
		r = heap_push(&s->dueq, (struct event) {
			s->now + j->expect + s->p.cfg->boot_time_s + 1, 0, job, 0 });
		if (r < 0)
			return r;
	}
	return ev_push(s, s->now + j->run, EV_JOB_END, job, 0);
}

static int end_job(struct mxq_sim *s, uint32_t job)
{
	const struct sim_job *j = &s->c->jobs[job];

	for (uint32_t k = 0; k < j->parts; k++) {
		uint32_t i = s->part_nodes[j->part_off + k];
		struct sim_node *n = &s->nodes[i];
		node_remove_job(n, job);
		n->used_slots -= j->threads;
		n->used_mem -= j->memory_mib;
		n->jobs--;
		n->last_job_end = s->now;
		int r = node_update(s, i);
		if (r < 0)
			return r;
	}
	s->job_live[job] = 0;
	s->running--;
	s->ended++;
	s->last_progress = s->now;
	s->done_at = s->now;
	s->dirty = true;
	return 0;
}

/* --- dispatch -------------------------------------------------------------------- */

static bool pe_less(const struct pass_entry *a, const struct pass_entry *b)
{
	if (a->submit != b->submit)
		return a->submit < b->submit;
	return a->job < b->job;
}

static void pe_push(struct pass_entry *h, size_t *n, struct pass_entry e)
{
	size_t i = (*n)++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!pe_less(&e, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = e;
}

static struct pass_entry pe_pop(struct pass_entry *h, size_t *n)
{
	struct pass_entry top = h[0], last = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m;
		if (l >= *n)
			break;
		m = l;
		if (l + 1 < *n && pe_less(&h[l + 1], &h[l]))
			m = l + 1;
		if (!pe_less(&h[m], &last))
			break;
		h[i] = h[m];
		i = m;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* The fewest parts of a job of one signature that found too few nodes in
 * pass PASS, with the held nodes left to it (any) and without them (long:
 * it would delay the reserved job). Room only shrinks within a pass and
 * the reservation is made once, so as many parts or more fail too: a full
 * cluster queues thousands of gangs, tried at every pass, and the
 * single-node jobs of a signature come in several queues (one per
 * duration class), each tried while the reservation holds the free
 * nodes. */
struct pass_fail {
	uint32_t pass;
	uint32_t any_parts, long_parts;
};

static bool fits_now(const struct sim_node *n, const struct sim_job *j)
{
	return n->cls->cores - n->used_slots >= j->threads &&
	       n->cls->memory_mib - n->used_mem >= j->memory_mib;
}

/* First fit on the dispatchable nodes; false if the job cannot start now. */
static int try_start(struct mxq_sim *s, uint32_t job, bool *ret_started)
{
	const struct sim_job *j = &s->c->jobs[job];
	const struct sim_sig *sig = &s->c->sigs[j->sig];
	uint32_t pick[64], *picks = pick;
	uint32_t got = 0;
	int r = 0;

	*ret_started = false;
	/* the dispatch candidates as node_sets() keeps them: a job started in
	 * this pass takes a node out once it is full. Gang parts, and jobs as
	 * wide as the widest node, can only take a node without jobs: those
	 * are walked alone (the same nodes in the same order), and not at all
	 * when there are too few (a full cluster queues thousands of them) */
	bool empty_only = j->parts > 1 || j->threads >= s->c->max_cores;
	bool is_long = s->now + j->expect > s->shadow;
	struct pass_fail *fail = &s->sig_fail[j->sig];
	if (fail->pass != s->pass_id)
		*fail = (struct pass_fail) { s->pass_id, UINT32_MAX, UINT32_MAX };
	bool known_to_fail = j->parts >= fail->any_parts ||
			     (is_long && j->parts >= fail->long_parts);
	if (known_to_fail && !s->p.self_check)
		return 0;    /* (the self-check walks anyway and compares) */
	if (j->parts > MX_ARRAY_SIZE(pick)) {
		picks = malloc(j->parts * sizeof(*picks));
		if (!picks)
			return -ENOMEM;
	}
	const uint64_t *cand = empty_only ? s->m_empty : room_for(s, j->threads);
	bool room = !empty_only || s->n_empty >= j->parts;
	/* and a job that no node has the free slots for now walks nothing */
	for (uint32_t f = j->threads; !empty_only && f <= s->c->max_cores && !(room = s->free_count[f]);
	     f++)
		;
	for (size_t i = !room ? s->n_nodes : mx_bitmap_next(cand, s->n_nodes, 0);
	     i < s->n_nodes && got < j->parts; i = mx_bitmap_next(cand, s->n_nodes, i + 1)) {
		const struct sim_node *n = &s->nodes[i];
		if (!sig->qual[i] || !fits_now(n, j))
			continue;
		if (n->held && is_long)
			continue;            /* would delay the reserved job */
		if (j->parts > 1 && n->jobs)
			continue;            /* gang parts take whole nodes */
		picks[got++] = i;
	}
	if (got == j->parts && known_to_fail) {
		r = -ENOTRECOVERABLE;
	} else if (got == j->parts) {
		r = start_job(s, job, picks);
		*ret_started = r == 0;
	} else {
		uint32_t *fewest = is_long ? &fail->long_parts : &fail->any_parts;
		if (j->parts < *fewest)
			*fewest = j->parts;
	}
	if (picks != pick)
		free(picks);
	return r;
}

/*
 * EASY reservation for the first wide job that cannot start: the qualified
 * nodes (up, booting, or off: free after a boot) that are free of jobs
 * first, by the expected ends of what runs there (upper bounds: mxqd ends
 * a job at its requested time). Counting off nodes keeps the shadow time
 * finite when a power policy has switched the free ones off, so that
 * backfilling goes on as it would with them on.
 * It starts when the last of them is free (the shadow time); until then
 * other jobs may use those nodes only if they end before it. With fewer
 * such nodes than it needs, it keeps them all with no end in sight.
 */
/* When ND is free for a wide job, as its hold_kind says. */
static int64_t hold_time(const struct mxq_sim *s, const struct sim_node *nd)
{
	int64_t min_off = s->p.policy == MXQ_SIM_POLICY ? s->p.cfg->min_off_time_s : 0;
	int64_t t = s->now;

	switch (nd->hold_kind) {
	case HOLD_MOVING:
		if (nd->phys == PHYS_BOOTING)
			return nd->phys_until;
		/* going off: free after it is off, its min off-time, a boot */
		t = nd->phys == PHYS_SHUTTING ? nd->phys_until : s->now;
		return t + min_off + nd->cls->boot_s;
	case HOLD_OFF:
		/* after a wake; the policy waits out its min off-time first */
		if (nd->rec_since + min_off > t)
			t = nd->rec_since + min_off;
		return t + nd->cls->boot_s;
	case HOLD_UP:
		return nd->max_end > t ? nd->max_end : t;
	default:
		return INT64_MAX;
	}
}

static void hold_for(struct mxq_sim *s, uint32_t job)
{
	const struct sim_job *j = &s->c->jobs[job];
	const struct sim_sig *sig = &s->c->sigs[j->sig];
	bool policy = s->p.policy == MXQ_SIM_POLICY;
	size_t n = 0, nn = s->n_nodes;

#define HOLD_ADD(i) do { \
		s->sel[n++] = (struct mxq_power_free_time) { hold_time(s, &s->nodes[i]), (i) }; \
	} while (0)
	s->hold_job = job;
	s->shadow = INT64_MAX;
	/* booting and shutting down */
	for (size_t i = mx_bitmap_next(s->m_hold[HOLD_MOVING], nn, 0); i < nn;
	     i = mx_bitmap_next(s->m_hold[HOLD_MOVING], nn, i + 1))
		if (sig->qual[i])
			HOLD_ADD(i);
	/* off and still in the policy's min off-time */
	if (policy) {
		offq_trim(s);
		for (size_t k = s->offq_head; k < s->offq_tail; k++) {
			const struct sim_offq *e = &s->offq[k];
			if (offq_valid(s, e) && s->nodes[e->node].hold_kind == HOLD_OFF &&
			    sig->qual[e->node])
				HOLD_ADD(e->node);
		}
	}
	/* off, free after a boot: all of a class at the same time, so (ties
	 * going to the lower index) its first PARTS are all that can count */
	size_t classes_done = 0;
	memset(s->hold_taken, 0, s->c->n_classes * sizeof(*s->hold_taken));
	for (size_t i = mx_bitmap_next(s->m_hold[HOLD_OFF], nn, 0);
	     i < nn && classes_done < s->c->n_classes;
	     i = mx_bitmap_next(s->m_hold[HOLD_OFF], nn, i + 1)) {
		uint32_t ci = s->c->nodes[i].cls;
		if (!sig->qual[i] || s->hold_taken[ci] >= j->parts ||
		    (policy && s->nodes[i].rec_since + s->p.cfg->min_off_time_s > s->now))
			continue;
		HOLD_ADD(i);
		if (++s->hold_taken[ci] == j->parts)
			classes_done++;
	}
	/* up: at the expected ends of their jobs, in that order; those with
	 * none left (idle, or overdue) are all free now and all count; after
	 * PARTS of them no later one can be among the first */
	size_t up = 0;
	struct mx_blist_it u = mx_blist_begin(&s->up_sorted);
	for (; !mx_blist_end(&u) && mx_blist_get(&u)->key <= s->now; mx_blist_next(&u))
		if (sig->qual[mx_blist_get(&u)->id]) {
			HOLD_ADD(mx_blist_get(&u)->id);
			up++;
		}
	for (; !mx_blist_end(&u) && up < j->parts; mx_blist_next(&u))
		if (sig->qual[mx_blist_get(&u)->id]) {
			HOLD_ADD(mx_blist_get(&u)->id);
			up++;
		}
#undef HOLD_ADD
	if (n > j->parts) {
		mxq_power_select_earliest(s->sel, n, j->parts);
		n = j->parts;
	}
	for (size_t k = 0; k < n; k++) {
		struct sim_node *nd = &s->nodes[s->sel[k].i];
		nd->held = true;
		s->held[s->n_held++] = s->sel[k].i;
		if (node_dispatchable(nd) && nd->jobs == 0)
			s->n_held_idle++;
	}
	if (n == j->parts) {
		s->shadow = s->now;
		for (size_t k = 0; k < n; k++)
			if (s->sel[k].t > s->shadow)
				s->shadow = s->sel[k].t;
	}
}

static void vroom_init(struct mxq_sim *s, struct sim_node *n)
{
	if (n->vpass != s->pass_id) {
		n->vpass = s->pass_id;
		n->vslots = n->cls->cores;
		n->vmem = n->cls->memory_mib;
	}
}

/*
 * Timeout baseline: a job that cannot start is given room on a booting node,
 * else an OFF node is woken for it (Slurm starts a job on powered-down nodes
 * and boots them). Room on booting nodes is only counted within this pass.
 */
static int try_wake_for(struct mxq_sim *s, uint32_t job, bool *ret_ok)
{
	const struct sim_job *j = &s->c->jobs[job];
	const struct sim_sig *sig = &s->c->sigs[j->sig];
	uint32_t need = j->parts, booting = 0, off = 0;
	int r;

	*ret_ok = false;
	if (job == s->hold_job)
		need = s->n_held_idle >= need ? 0 : need - (uint32_t)s->n_held_idle;
	if (need == 0)
		return 0;
	/* count what there is: booting nodes first, then OFF ones */
	for (size_t i = mx_bitmap_next2(s->m_vboot, s->m_voff, s->n_nodes, 0);
	     i < s->n_nodes && booting + off < need;
	     i = mx_bitmap_next2(s->m_vboot, s->m_voff, s->n_nodes, i + 1)) {
		struct sim_node *n = &s->nodes[i];
		if (!sig->qual[i])
			continue;
		vroom_init(s, n);
		if (n->vslots < j->threads || n->vmem < j->memory_mib)
			continue;
		if (j->parts > 1 && n->vslots != n->cls->cores)
			continue;
		if (n->rec == MXQ_POWER_OFF)
			off++;
		else
			booting++;
	}
	if (booting + off < need)
		return 0;
	for (int want_off = 0; want_off <= 1 && need; want_off++) {
		/* booting nodes first, then OFF ones, each in node order */
		const uint64_t *set = want_off ? s->m_voff : s->m_vboot;
		for (size_t i = mx_bitmap_next(set, s->n_nodes, 0); i < s->n_nodes && need;
		     i = mx_bitmap_next(set, s->n_nodes, i + 1)) {
			struct sim_node *n = &s->nodes[i];
			if (!sig->qual[i])
				continue;
			vroom_init(s, n);
			if (n->vslots < j->threads || n->vmem < j->memory_mib)
				continue;
			if (j->parts > 1 && n->vslots != n->cls->cores)
				continue;
			if (n->rec == MXQ_POWER_OFF) {
				r = start_boot(s, i);
				if (r < 0)
					return r;
			}
			n->vslots -= j->threads;
			n->vmem -= j->memory_mib;
			need--;
		}
	}
	*ret_ok = true;
	return 0;
}

/* --- params.self_check: the kept sets against passes over every node ---------- */

/* The reservation for JOB as a pass over every node chooses it: the same
 * nodes (any order) and the same shadow time as hold_for() chose? */
static bool hold_matches(struct mxq_sim *s, uint32_t job)
{
	const struct sim_job *j = &s->c->jobs[job];
	const struct sim_sig *sig = &s->c->sigs[j->sig];
	int64_t shadow = INT64_MAX;
	size_t n = 0;
	bool same = true;

	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct sim_node *nd = &s->nodes[i];
		int64_t t = s->now;
		if (!sig->qual[i])
			continue;
		if (nd->phys == PHYS_BOOTING && nd->rec == MXQ_POWER_POWERING_ON) {
			t = nd->phys_until;
		} else if (nd->phys == PHYS_DOWN && nd->rec == MXQ_POWER_OFF) {
			if (s->p.policy == MXQ_SIM_POLICY &&
			    nd->rec_since + s->p.cfg->min_off_time_s > t)
				t = nd->rec_since + s->p.cfg->min_off_time_s;
			t += nd->cls->boot_s;
		} else if (nd->phys == PHYS_SHUTTING || (nd->phys == PHYS_DOWN &&
							 nd->rec == MXQ_POWER_POWERING_OFF)) {
			t = nd->phys == PHYS_SHUTTING ? nd->phys_until : s->now;
			if (s->p.policy == MXQ_SIM_POLICY)
				t += s->p.cfg->min_off_time_s;
			t += nd->cls->boot_s;
		} else if (node_dispatchable(nd) || nd->rec == MXQ_POWER_DRAINING) {
			for (uint32_t r = 0; r < nd->n_run; r++) {
				int64_t end = s->job_start[nd->run[r]] + s->c->jobs[nd->run[r]].expect;
				if (end > t)
					t = end;
			}
		} else {
			continue;
		}
		s->ref_sel[n++] = (struct mxq_power_free_time) { t, i };
	}
	if (n > j->parts) {
		mxq_power_select_earliest(s->ref_sel, n, j->parts);
		n = j->parts;
	}
	if (n == j->parts) {
		shadow = s->now;
		for (size_t k = 0; k < n; k++)
			if (s->ref_sel[k].t > shadow)
				shadow = s->ref_sel[k].t;
	}
	memset(s->ref_mark, 0, s->n_nodes);
	for (size_t k = 0; k < n; k++)
		s->ref_mark[s->ref_sel[k].i] = 1;
	for (size_t k = 0; k < s->n_held; k++)
		same = same && s->ref_mark[s->held[k]];
	return same && n == s->n_held && shadow == s->shadow;
}

/* The dispatch candidates (m_room, m_empty) as a pass over every node
 * finds them? */
static bool free_set_matches(const struct mxq_sim *s)
{
	size_t empty = 0;

	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct sim_node *n = &s->nodes[i];
		bool e = n->c_free > 0 && n->jobs == 0;
		if (e != mx_bitmap_has(s->m_empty, i))
			return false;
		empty += e;
		for (uint32_t k = 0; k < s->n_room; k++)
			if ((n->c_free > k) != mx_bitmap_has(room_for(s, k + 1), i))
				return false;
	}
	for (uint32_t f = 0; f <= s->c->max_cores; f++) {
		uint32_t k = 0;
		for (size_t i = 0; i < s->n_nodes; i++)
			k += s->nodes[i].c_free == f;
		if (k != s->free_count[f])
			return false;
	}
	return empty == s->n_empty;
}

/* The kept order of the queues' heads against their keys: every waiting
 * queue once, in pass order. */
static bool heads_match(const struct mxq_sim *s)
{
	for (size_t k = 0; k < s->n_active; k++) {
		const struct pass_entry *e = &s->by_head[k];
		const struct sim_queue *sq = &s->queues[e->queue];
		if (sq->head >= sq->tail)
			return false;
		struct pass_entry now = head_entry(s, e->queue);
		if (now.job != e->job || now.submit != e->submit)
			return false;  /* not its head now */
		if (k > 0 && !pe_less(&s->by_head[k - 1], e))
			return false;  /* out of order, or a queue twice */
	}
	return true;
}

/* The most free slots of a dispatchable node (free_count); 0 when none. */
static uint32_t most_free(const struct mxq_sim *s)
{
	uint32_t f = s->c->max_cores;

	while (f > 0 && !s->free_count[f])
		f--;
	return f;
}

/* What a dispatch pass knows of the room left: whether it wakes nodes for
 * the jobs that fail (the fixed timeouts), whether the reservation is made
 * (the first gang that failed), the most free slots of a node. */
struct pass_view {
	bool can_wake;
	bool hold_done;
	uint32_t most;
};

/* Whether a pass leaves JOB, a queue head, out, as try_start() would tell
 * first, when nothing is woken for it: a single-node job that no node has
 * the room for (a nearly full cluster has dozens of such heads), or, once
 * the reservation is made, a gang with more parts than there are nodes
 * without jobs. Room only shrinks within a pass, so they would only fail;
 * the first gang to fail stays in: it holds nodes for itself. */
static bool leave_out(const struct mxq_sim *s, uint32_t job, const struct pass_view *pv)
{
	const struct sim_job *j = &s->c->jobs[job];

	if (pv->can_wake)
		return false;
	if (j->parts > 1)
		return pv->hold_done && j->parts > s->n_empty;
	if (j->threads >= s->c->max_cores)
		return s->n_empty == 0;
	return j->threads > pv->most;
}

/* leave_out(), but not in a self-checked run: that one tries them all and
 * compares (dispatch()). */
static bool pass_skips(const struct mxq_sim *s, uint32_t job, const struct pass_view *pv)
{
	return !s->p.self_check && leave_out(s, job, pv);
}

/*
 * One dispatch pass, as the mxqds together would do it: waiting jobs in
 * submit order, each started on the first qualified node with room, later
 * jobs backfilling. Jobs of one queue (same needs) are tried only until one
 * fails: the rest would fail too, since room only shrinks within a pass.
 */
static int dispatch(struct mxq_sim *s)
{
	bool can_wake = s->p.policy == MXQ_SIM_TIMEOUT && s->n_off > 0;
	size_t n_pe = 0;
	int r;

	s->dirty = false;
	for (size_t k = 0; k < s->n_held; k++)
		s->nodes[s->held[k]].held = false;
	s->n_held = 0;
	s->n_held_idle = 0;
	s->hold_job = SIZE_MAX;
	s->shadow = INT64_MAX;
	if (s->n_active == 0 || (s->free_slots == 0 && !can_wake))
		return 0;

	/* pass 0 is what every node's vpass and signature's pass_fail
	 * start with: never a current pass */
	if (++s->pass_id == 0)
		s->pass_id = 1;
	if (s->p.self_check && (!free_set_matches(s) || !heads_match(s)))
		return -ENOTRECOVERABLE;

	/* the queues' heads in pass order, as by_head keeps them, merged
	 * with the heap of the jobs after them that come up in this pass */
	struct pass_view pv = { can_wake, false, can_wake ? 0 : most_free(s) };
	size_t n_heads = s->n_active, next = 0;
	memcpy(s->pass_heads, s->by_head, n_heads * sizeof(*s->pass_heads));
	for (size_t a = 0; a < s->n_active; a++) {
		struct sim_queue *sq = &s->queues[s->active[a]];
		sq->cursor = sq->head;
		sq->real_failed = false;
	}
	for (;;) {
		struct pass_entry e, h;
		while (next < n_heads &&
		       pass_skips(s, s->pass_heads[next].job, &pv))
			next++;
		if (next < n_heads)
			h = s->pass_heads[next];
		if (n_pe && (next == n_heads || pe_less(&s->pass_heap[0], &h)))
			e = pe_pop(s->pass_heap, &n_pe);
		else if (next < n_heads)
			e = h, next++;
		else
			break;
		struct sim_queue *sq = &s->queues[e.queue];
		bool ok = false;

		if (!sq->real_failed) {
			struct pass_view now = { can_wake, pv.hold_done, most_free(s) };
			bool left_out = s->p.self_check && leave_out(s, e.job, &now);
			r = try_start(s, e.job, &ok);
			if (r < 0)
				return r;
			if (ok && left_out)
				return -ENOTRECOVERABLE;  /* would have been left out */
			if (ok) {
				queue_pop_head(s, e.queue);
				sq = &s->queues[e.queue];
				if (!can_wake)
					pv.most = most_free(s);
				if (sq->head < sq->tail) {
					sq->cursor = sq->head;
					uint32_t job = sq->v[sq->head];
					if (pass_skips(s, job, &pv))
						continue;
					pe_push(s->pass_heap, &n_pe, (struct pass_entry) {
						s->c->jobs[job].submit, job, e.queue });
				}
				continue;
			}
			sq->real_failed = true;
			if (s->c->jobs[e.job].parts > 1 && !pv.hold_done) {
				hold_for(s, e.job);
				pv.hold_done = true;
				if (s->p.self_check && !hold_matches(s, e.job))
					return -ENOTRECOVERABLE;
			}
		}
		/* woken for only once the power manager has seen it waiting
		 * (scan_for); the rest of its queue came later still */
		if (!can_wake || s->c->jobs[e.job].submit + s->p.scan_s > s->now)
			continue;
		r = try_wake_for(s, e.job, &ok);
		if (r < 0)
			return r;
		if (ok && ++sq->cursor < sq->tail) {
			uint32_t job = sq->v[sq->cursor];
			pe_push(s->pass_heap, &n_pe, (struct pass_entry) {
				s->c->jobs[job].submit, job, e.queue });
		}
	}
	return 0;
}

/* --- the policy tick ---------------------------------------------------------------- */

/* The leader's snapshot: nodes with their recorded state and what the
 * node reports, running jobs with their expected ends, pending demand
 * grouped by signature and ordered by its oldest job. */
/* Write node I's entry of the policy's snapshot. */
static int snap_node(struct mxq_sim *s, size_t i, int64_t today)
{
	struct sim_node *n = &s->nodes[i];
	struct mxq_power_node *pn = &s->pnodes[i];

	if (n->n_run > n->cap_prun) {
		uint32_t cap = n->cap_run;
		struct mxq_power_running_job *v = realloc(n->prun, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		n->prun = v;
		n->cap_prun = cap;
	}
	mxq_power_index_changed(s->pindex, i);
	pn->state = n->rec;
	pn->state_since = n->rec_since;
	pn->jobs_running = n->jobs;
	pn->used_slots = n->used_slots;
	pn->used_memory_mib = n->used_mem;
	pn->running = n->prun;
	pn->n_running = n->n_run;
	for (uint32_t r = 0; r < n->n_run; r++) {
		const struct sim_job *j = &s->c->jobs[n->run[r]];
		n->prun[r] = (struct mxq_power_running_job) {
			.expected_end = s->job_start[n->run[r]] + j->expect,
			.started_at = s->job_start[n->run[r]],
			.slots = j->threads,
			.memory_mib = j->memory_mib,
		};
	}
	pn->last_job_end = n->last_job_end;
	pn->cycles_today = n->cycles_day == today ? n->cycles_today : 0;
	pn->last_boot_ok_at = n->last_boot_ok_at;
	pn->failure_count = n->failures;
	pn->drain_acked = n->rec == MXQ_POWER_DRAINING && n->rec_since < s->now &&
			  n->jobs == 0 && n->phys == PHYS_UP;
	pn->seen_up = n->phys == PHYS_UP && n->rec != MXQ_POWER_ON &&
		      n->rec != MXQ_POWER_DRAINING;
	pn->seen_down = n->phys == PHYS_DOWN;
	pn->watts = n->phys != PHYS_DOWN ? n->watts : 0.0;  /* the model's reading */
	/* the acknowledgement of a drain comes with the clock: ask again */
	if (n->rec == MXQ_POWER_DRAINING && !n->snap_stale) {
		n->snap_stale = true;
		s->stale[s->n_stale++] = (uint32_t)i;
	}
	return 0;
}

/*
 * The policy's view of the simulation now. Node entries are rewritten only
 * where the node changed since (node_update() lists it as stale), where a
 * DRAINING node's acknowledgement may come due, and all of them when a new
 * day resets the boot counters: the same entries as a full rewrite every
 * tick, at a fraction of the cost on large clusters.
 */
static int build_snapshot(struct mxq_sim *s, struct mxq_power_snapshot *snap)
{
	size_t n_sigs = 0;
	int64_t today = day_of(s->now);
	int r;

	if (today != s->snap_day) {
		s->snap_day = today;
		for (size_t k = 0; k < s->n_stale; k++)
			s->nodes[s->stale[k]].snap_stale = false;
		s->n_stale = 0;
		for (size_t i = 0; i < s->n_nodes; i++)
			if ((r = snap_node(s, i, today)) < 0)
				return r;
	} else {
		/* a node written again is listed at most once more, never
		 * beyond the entry being read */
		size_t n = s->n_stale;
		s->n_stale = 0;
		for (size_t k = 0; k < n; k++) {
			size_t i = s->stale[k];
			s->nodes[i].snap_stale = false;
			if ((r = snap_node(s, i, today)) < 0)
				return r;
		}
	}

	/* the queues' heads in pass order (by_head): a signature's first
	 * head is its oldest job, so the signatures come out oldest first,
	 * as no sort would put them better (in the pass heap's storage, the
	 * queue field naming the signature) */
	s->tick_stamp++;
	for (size_t a = 0; a < s->n_active; a++) {
		const struct pass_entry *e = &s->by_head[a];
		const struct sim_queue *sq = &s->queues[e->queue];
		const struct sim_job *j = &s->c->jobs[e->job];
		/* one entry per signature; gangs and jobs of unmodelled run time
		 * one per queue (width, run time within a factor of two), since
		 * the policy plans for the width and run time of an entry's
		 * first job */
		uint32_t sig = s->c->sigs[j->sig].wide || !s->c->sigs[j->sig].reqs.time_min ?
			       (uint32_t)s->c->n_sigs + e->queue : j->sig;

		if (s->sig_stamp[sig] != s->tick_stamp) {
			s->sig_stamp[sig] = s->tick_stamp;
			s->sig_pending[sig] = 0;
			s->pass_heap[n_sigs++] = (struct pass_entry) { e->submit, e->job, sig };
		}
		s->sig_pending[sig] += (uint64_t)(sq->tail - sq->head) * j->parts;
	}
	for (size_t d = 0; d < n_sigs; d++) {
		const struct sim_job *j = &s->c->jobs[s->pass_heap[d].job];
		s->pdemand[d] = (struct mxq_power_demand) {
			.reqs = &s->c->sigs[j->sig].reqs,
			.jobs_pending = s->sig_pending[s->pass_heap[d].queue],
			.max_per_node = s->c->sigs[j->sig].wide ? 1 : 0,
			.nodes_at_once = j->parts,
			.run_s = j->expect,
		};
	}
	*snap = (struct mxq_power_snapshot) {
		.nodes = s->pnodes, .n_nodes = s->n_nodes,
		.demand = s->pdemand, .n_demand = n_sigs,
		.nodes_in_order = true,          /* build_nodes() sorted them so */
		.no_explanations = true,
		.index = s->pindex,
	};
	return 0;
}

/* Carry out one action; false when it does not fit what the node is doing. */
static int apply_action(struct mxq_sim *s, const struct mxq_power_action *a)
{
	size_t i = a->node_index;
	struct sim_node *n;

	if (i >= s->n_nodes || (unsigned)a->kind >= _MXQ_POWER_ACTION_MAX)
		goto bad;
	n = &s->nodes[i];
	if (a->from != n->rec)
		goto bad;
	switch (a->kind) {
	case MXQ_POWER_ACTION_WAKE:
		if (n->phys != PHYS_DOWN)
			goto bad;
		s->actions[a->kind]++;
		return start_boot(s, i);
	case MXQ_POWER_ACTION_DRAIN:
		set_rec(s, n, MXQ_POWER_DRAINING);
		break;
	case MXQ_POWER_ACTION_CANCEL_DRAIN:
		set_rec(s, n, MXQ_POWER_ON);
		s->dirty = true;
		break;
	case MXQ_POWER_ACTION_POWER_OFF:
		if (n->phys != PHYS_UP || n->jobs)
			goto bad;
		s->actions[a->kind]++;
		return start_shutdown(s, i);
	case MXQ_POWER_ACTION_MARK_ON:
		if (n->rec == MXQ_POWER_POWERING_ON)
			n->failures = 0;
		set_rec(s, n, MXQ_POWER_ON);
		break;
	case MXQ_POWER_ACTION_MARK_OFF:
		set_rec(s, n, MXQ_POWER_OFF);
		break;
	case MXQ_POWER_ACTION_MARK_FAILED:
		set_rec(s, n, MXQ_POWER_FAILED);
		n->failures++;
		break;
	case MXQ_POWER_ACTION_RETRY:
		set_rec(s, n, MXQ_POWER_UNKNOWN);
		break;
	case MXQ_POWER_ACTION_HARD_OFF:
	case MXQ_POWER_ACTION_SSH_DRAIN:
	case MXQ_POWER_ACTION_RESEND:
	case MXQ_POWER_ACTION_RESOLVE_JOBS:
	case MXQ_POWER_ACTION_ADMIN_DONE:
		/* the simulated nodes have no transports, admins or lost jobs */
		break;
	case _MXQ_POWER_ACTION_MAX:
		goto bad;
	}
	s->actions[a->kind]++;
	return node_update(s, i);
bad:
	s->policy_errors++;
	return 0;
}

static bool bucket_full(double tokens, double rate)
{
	/* power.conf(5): the bucket holds max(1, rate) tokens; rate 0 = no limit */
	return rate <= 0.0 || tokens >= (rate > 1.0 ? rate : 1.0);
}

/* Lower *until to T when T is still ahead. */
static void due_at(int64_t *until, int64_t now, int64_t t)
{
	if (t > now && t < *until)
		*until = t;
}

/* The rate limits and the breaker leave the policy nothing to wait for. */
static bool limits_settled(const struct mxq_sim *s)
{
	const struct mxq_power_config *cfg = s->p.cfg;

	return bucket_full(s->pstate.suspend_tokens, cfg->suspend_rate) &&
	       bucket_full(s->pstate.resume_tokens, cfg->resume_rate) &&
	       s->pstate.breaker_open_until <= s->now;
}

/* The thresholds of a node recorded POWERING_OFF or POWERING_ON. */
static void transit_due(const struct mxq_sim *s, const struct sim_node *n, int64_t *until)
{
	const struct mxq_power_config *cfg = s->p.cfg;

	if (n->rec == MXQ_POWER_POWERING_OFF) {
		due_at(until, s->now, n->rec_since + cfg->min_off_time_s);
		due_at(until, s->now, n->rec_since + cfg->shutdown_deadline_s);
	} else {
		due_at(until, s->now, n->rec_since + cfg->boot_time_s);
		due_at(until, s->now, n->rec_since + cfg->boot_deadline_s);
	}
}

/* When an idle ON node may be suspended (IDLE_TIME >= 0). */
static void idle_due(const struct mxq_sim *s, const struct sim_node *n, int64_t idle_time,
		     int64_t *until)
{
	int64_t idle_since = n->last_job_end > n->rec_since ? n->last_job_end : n->rec_since;
	int64_t t = idle_since + idle_time;

	if (n->rec_since + s->p.cfg->min_on_time_s > t)
		t = n->rec_since + s->p.cfg->min_on_time_s;
	due_at(until, s->now, t);
}

/*
 * After a decision without actions: is it a fixed point, and until when?
 * With full token buckets and a closed breaker, the inputs that move with
 * the clock alone are: the idle time and min on-time of idle ON nodes
 * (suspend), the min off-time of OFF and POWERING_OFF nodes (a wake for
 * pending demand, the gang planner's free times), the deadlines of nodes in
 * transition (POWERING_ON: boot deadline, and the expected boot end the gang
 * planner counts with; POWERING_OFF: shutdown deadline), the day boundary
 * (boot counters), the time a running job has overrun its expected end by a
 * boot time (it no longer counts as freeing soon), and the window of running
 * jobs expected to end within a boot time - which only grows, so it can only
 * take wakes away. The learned idle times per class and the gang deferrals
 * come back from the policy itself (plan.recheck_at). Until the first of
 * those thresholds the same snapshot gets the same empty plan, so the tick
 * is skipped: the leader would have asked and done nothing. The end of a
 * boot or shutdown and every change to a node or the queue end the quiet
 * period (node_update, queue_push ...). DRAINING nodes (acknowledged one
 * tick later, by the clock), UNKNOWN and FAILED ones (retry backoff) keep
 * every tick asked. mxq_sim_params.every_tick turns this off; the results
 * must be byte-identical (test_sim and tests/bench_sim_equiv.sh check it).
 */
static bool tick_is_quiet(struct mxq_sim *s, int64_t *ret_until)
{
	const struct mxq_power_config *cfg = s->p.cfg;
	int64_t idle_time = mxq_power_config_idle_time(cfg);
	int64_t now = s->now;
	int64_t until = (day_of(now) + 1) * 86400;

	if (!limits_settled(s) || s->n_unsettled)
		return false;
	/* OFF: the first queued one still in its min off-time is the earliest */
	if (s->n_active) {
		offq_trim(s);
		for (size_t k = s->offq_head; k < s->offq_tail; k++) {
			if (offq_valid(s, &s->offq[k])) {
				due_at(&until, now, s->offq[k].since + cfg->min_off_time_s);
				break;
			}
		}
	}
	for (size_t i = mx_bitmap_next(s->m_rtrans, s->n_nodes, 0); i < s->n_nodes;
	     i = mx_bitmap_next(s->m_rtrans, s->n_nodes, i + 1))
		transit_due(s, &s->nodes[i], &until);
	for (size_t i = mx_bitmap_next(s->m_onidle, s->n_nodes, 0);
	     idle_time >= 0 && i < s->n_nodes; i = mx_bitmap_next(s->m_onidle, s->n_nodes, i + 1))
		idle_due(s, &s->nodes[i], idle_time, &until);
	/* every running job runs on an ON node at a quiet tick: a node that
	 * took jobs before it was recorded ON is recorded at the tick after
	 * its boot, which has that action */
	due_at(&until, now, due_next(s));
	*ret_until = until;
	return true;
}

/* params.self_check, continued */

/* tick_is_quiet() as a pass over every node and running job answers it. */
static bool quiet_matches(struct mxq_sim *s, bool quiet, int64_t until_kept)
{
	const struct mxq_power_config *cfg = s->p.cfg;
	int64_t idle_time = mxq_power_config_idle_time(cfg);
	int64_t now = s->now;
	int64_t until = (day_of(now) + 1) * 86400;

	if (!limits_settled(s))
		return !quiet;
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct sim_node *n = &s->nodes[i];
		switch (n->rec) {
		case MXQ_POWER_OFF:
			if (s->n_active)
				due_at(&until, now, n->rec_since + cfg->min_off_time_s);
			break;
		case MXQ_POWER_POWERING_OFF:
		case MXQ_POWER_POWERING_ON:
			transit_due(s, n, &until);
			break;
		case MXQ_POWER_ON:
			if (!n->jobs && idle_time >= 0)
				idle_due(s, n, idle_time, &until);
			for (uint32_t r = 0; r < n->n_run; r++)
				due_at(&until, now, s->job_start[n->run[r]] +
				       s->c->jobs[n->run[r]].expect + cfg->boot_time_s + 1);
			break;
		default:
			return !quiet;
		}
	}
	return quiet && until == until_kept;
}

/* The plan decided with the kept index, against one without: the same actions? */
static bool plan_matches(struct mxq_sim *s, const struct mxq_power_snapshot *snap,
			 const struct mxq_power_state *before, const struct mxq_power_plan *kept)
{
	struct mxq_power_snapshot fresh = *snap;
	struct mxq_power_state st = *before;
	struct mxq_power_plan plan;
	bool same;

	fresh.index = NULL;
	if (mxq_power_decide(&fresh, s->now, s->p.cfg, &st, &plan) < 0)
		return false;
	same = plan.n_actions == kept->n_actions && plan.recheck_at == kept->recheck_at &&
	       plan.next_change_at == kept->next_change_at &&
	       memcmp(&st, &s->pstate, sizeof(st)) == 0;
	for (size_t k = 0; same && k < plan.n_actions; k++)
		same = plan.actions[k].node_index == kept->actions[k].node_index &&
		       plan.actions[k].kind == kept->actions[k].kind &&
		       plan.actions[k].to == kept->actions[k].to;
	mxq_power_plan_free(&plan);
	return same;
}

static int policy_tick(struct mxq_sim *s)
{
	struct mxq_power_snapshot snap;
	struct mxq_power_plan plan;
	int r;

	if (!s->p.every_tick && s->quiet && !s->changed && s->now < s->quiet_until) {
		s->ticks_skipped++;
		return 0;
	}
	r = build_snapshot(s, &snap);
	if (r < 0)
		return r;
	struct mxq_power_state before;
	if (s->p.self_check)
		before = s->pstate;
	r = mxq_power_decide(&snap, s->now, s->p.cfg, &s->pstate, &plan);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return -EPROTO;
	if (s->p.self_check && !plan_matches(s, &snap, &before, &plan)) {
		mxq_power_plan_free(&plan);
		return -ENOTRECOVERABLE;
	}
	s->ticks++;
	s->changed = false;
	for (size_t k = 0; k < plan.n_actions && !plan.dry_run; k++) {
		r = apply_action(s, &plan.actions[k]);
		if (r < 0)
			break;
	}
	s->quiet = plan.n_actions == 0 && tick_is_quiet(s, &s->quiet_until);
	if (s->p.self_check && plan.n_actions == 0 && r >= 0 &&
	    !quiet_matches(s, s->quiet, s->quiet_until))
		r = -ENOTRECOVERABLE;
	if (s->quiet && plan.next_change_at > s->now && plan.next_change_at < s->quiet_until)
		s->quiet_until = plan.next_change_at;
	mxq_power_plan_free(&plan);
	return r < 0 ? r : 0;
}

/* --- creation ------------------------------------------------------------------------ */

void mxq_sim_free(struct mxq_sim *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->nodes && i < s->n_nodes; i++) {
		free(s->nodes[i].run);
		free(s->nodes[i].prun);
	}
	for (size_t q = 0; s->queues && q < s->c->n_queues; q++)
		free(s->queues[q].v);
	free(s->nodes);
	free(s->evq.v);
	free(s->queues);
	free(s->active);
	free(s->by_head);
	free(s->pass_heads);
	free(s->pass_heap);
	mx_blist_free(&s->up_sorted);
	free(s->held);
	free(s->sel);
	free(s->job_start);
	free(s->part_nodes);
	free(s->waits);
	free(s->job_live);
	free(s->hold_taken);
	free(s->ref_sel);
	free(s->ref_mark);
	free(s->m_sets);
	free(s->free_count);
	free(s->m_room);
	free(s->offq);
	free(s->dueq.v);
	free(s->pnodes);
	mxq_power_index_free(s->pindex);
	free(s->stale);
	free(s->pdemand);
	free(s->sig_pending);
	free(s->sig_stamp);
	free(s->sig_fail);
	free(s->s_pow);
	free(s->s_busy);
	free(s->s_cover);
	free(s);
}

int mxq_sim_new(const struct mxq_sim_cluster *c, const struct mxq_sim_params *params,
		struct mxq_sim **ret_sim)
{
	struct mxq_sim *s;
	size_t nn, nq, ns, nj;

	if (!c || !params || !ret_sim || (unsigned)params->policy >= _MXQ_SIM_POLICY_MAX ||
	    params->series_step_s < 0 ||
	    (params->policy == MXQ_SIM_TIMEOUT && (params->timeout_s < 0 || params->scan_s < 0)) ||
	    (params->policy == MXQ_SIM_POLICY && (!params->cfg || params->tick_s <= 0 ||
						    params->poll_s < 0)))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	s->p = *params;
	if (!s->p.stall_limit_s)
		s->p.stall_limit_s = DEFAULT_STALL_S;
	nn = c->n_nodes;
	nq = c->n_queues;
	ns = c->n_sigs;
	nj = c->n_jobs;
	s->n_nodes = nn;
	s->nodes = calloc(nn, sizeof(*s->nodes));
	s->queues = calloc(nq ? nq : 1, sizeof(*s->queues));
	s->active = calloc(nq ? nq : 1, sizeof(*s->active));
	s->by_head = calloc(nq ? nq : 1, sizeof(*s->by_head));
	s->pass_heads = calloc(nq ? nq : 1, sizeof(*s->pass_heads));
	s->pass_heap = calloc(nq + ns + 1, sizeof(*s->pass_heap));
	s->sig_fail = calloc(ns ? ns : 1, sizeof(*s->sig_fail));
	s->held = calloc(nn, sizeof(*s->held));
	s->sel = calloc(nn, sizeof(*s->sel));
	s->job_start = calloc(nj ? nj : 1, sizeof(*s->job_start));
	s->part_nodes = calloc(c->total_parts ? c->total_parts : 1, sizeof(*s->part_nodes));
	s->waits = calloc(nj ? nj : 1, sizeof(*s->waits));
	s->job_live = calloc(nj ? nj : 1, sizeof(*s->job_live));
	s->hold_taken = calloc(c->n_classes ? c->n_classes : 1, sizeof(*s->hold_taken));
	/* the node sets in one block: m_hold[], m_rtrans, m_onidle, m_vboot, m_voff,
	 * m_empty */
	size_t words = mx_bitmap_words(nn);
	s->m_sets = calloc((5 + _HOLD_KINDS) * words, sizeof(*s->m_sets));
	int up_r = mx_blist_init(&s->up_sorted, nn);
	s->free_count = calloc((size_t)c->max_cores + 1, sizeof(*s->free_count));
	if (s->free_count)
		s->free_count[0] = (uint32_t)nn;  /* c_free starts at 0 */
	s->n_room = c->max_cores < ROOM_LEVELS ? (c->max_cores ? c->max_cores : 1) : ROOM_LEVELS;
	s->m_room = calloc((size_t)s->n_room * words, sizeof(*s->m_room));
	if (params->self_check) {
		s->ref_sel = calloc(nn, sizeof(*s->ref_sel));
		s->ref_mark = calloc(nn, 1);
		if (!s->ref_sel || !s->ref_mark)
			goto nomem;
	}
	if (!s->nodes || !s->queues || !s->active || !s->by_head || !s->pass_heads ||
	    !s->pass_heap || !s->sig_fail ||
	    !s->held || !s->sel || !s->job_start || !s->part_nodes || !s->waits || !s->job_live ||
	    !s->hold_taken || !s->m_sets || up_r < 0 || !s->free_count || !s->m_room)
		goto nomem;
	for (int k = 0; k < _HOLD_KINDS; k++)
		s->m_hold[k] = s->m_sets + (size_t)k * words;
	s->m_rtrans = s->m_sets + (size_t)_HOLD_KINDS * words;
	s->m_onidle = s->m_rtrans + words;
	s->m_vboot = s->m_onidle + words;
	s->m_voff = s->m_vboot + words;
	s->m_empty = s->m_voff + words;
	if (params->policy == MXQ_SIM_POLICY) {
		s->pnodes = calloc(nn, sizeof(*s->pnodes));
		s->stale = calloc(nn, sizeof(*s->stale));
		s->snap_day = INT64_MIN;  /* the first snapshot writes every node */
		s->pdemand = calloc(ns + nq + 1, sizeof(*s->pdemand));
		s->sig_pending = calloc(ns + nq + 1, sizeof(*s->sig_pending));
		s->sig_stamp = calloc(ns + nq + 1, sizeof(*s->sig_stamp));
		s->pindex = mxq_power_index_new();
		if (!s->pnodes || !s->stale || !s->pdemand || !s->sig_pending || !s->sig_stamp ||
		    !s->pindex)
			goto nomem;
	}
	s->now = c->start;
	s->s_last = c->start;
	s->done_at = c->start;
	s->last_progress = c->start;
	s->hold_job = SIZE_MAX;
	s->next_tick_at = c->start;
	s->poll_at = NONE_TIME;
	for (size_t i = 0; i < nn; i++) {
		struct sim_node *n = &s->nodes[i];
		n->cls = &c->classes[c->nodes[i].cls];
		n->rec = MXQ_POWER_ON;
		n->rec_since = c->start;
		n->phys = PHYS_UP;
		n->since = c->start;
		n->cycles_day = day_of(c->start);
		n->offq_since = INT64_MIN;
		if (s->pnodes)
			s->pnodes[i] = (struct mxq_power_node) {
				.hostname = c->nodes[i].hostname,
				.node_class = n->cls->name,
				.efficiency_rank = n->cls->rank,
				.caps = &c->nodes[i].caps,
			};
		if (node_update(s, i) < 0)
			goto nomem;
	}
	if (params->policy == MXQ_SIM_POLICY && ev_push(s, c->start, EV_TICK, 0, 0) < 0)
		goto nomem;
	*ret_sim = s;
	return 0;
nomem:
	mxq_sim_free(s);
	return -ENOMEM;
}

/* --- the loop ----------------------------------------------------------------------- */

static int64_t next_time(const struct mxq_sim *s)
{
	int64_t t = NONE_TIME;

	if (s->evq.n)
		t = s->evq.v[0].t;
	if (s->next_submit < s->c->n_jobs && s->c->jobs[s->next_submit].submit < t)
		t = s->c->jobs[s->next_submit].submit;
	return t;
}

/*
 * The jobs from FIRST_NEW on were submitted just now and dispatch is done:
 * if one of them has to wait, the policy decides on it after the leader's
 * next poll (mxqd --power-poll sees a new pending job), unless a decision
 * comes sooner. Modelled as a whole poll interval after the submit, the
 * longest the leader can take to notice.
 */
static int poll_for(struct mxq_sim *s, size_t first_new)
{
	int64_t at = s->now + s->p.poll_s;

	if (s->p.policy != MXQ_SIM_POLICY || s->p.poll_s <= 0 || s->poll_at <= at ||
	    s->next_tick_at <= at)
		return 0;
	for (size_t j = first_new; j < s->next_submit; j++) {
		if (!s->job_live[j]) {
			s->poll_at = at;
			return ev_push(s, at, EV_POLL, 0, 0);
		}
	}
	return 0;
}

/*
 * The same for a fixed timeout: Slurm's power save thread, which starts
 * the boots of powered-down nodes a job was given, scans once a second,
 * so a job that cannot start at once wakes nodes only scan_s after its
 * submit (dispatch() holds it back until then). Each submit time that
 * leaves a job waiting gets its own scan.
 */
static int scan_for(struct mxq_sim *s, size_t first_new)
{
	if (s->p.policy != MXQ_SIM_TIMEOUT || s->p.scan_s <= 0 || s->n_off + s->n_transit == 0)
		return 0;
	for (size_t j = first_new; j < s->next_submit; j++)
		if (!s->job_live[j])
			return ev_push(s, s->now + s->p.scan_s, EV_POLL, 0, 0);
	return 0;
}

/* Process every time stamp before LIMIT; with UNTIL_DONE stop after the
 * one at which the last job ended. */
static int loop(struct mxq_sim *s, int64_t limit, bool until_done)
{
	int r = 0;

	if (until_done && s->ended == s->c->n_jobs)
		return 0;
	for (;;) {
		int64_t t = next_time(s);
		if (t == NONE_TIME || t >= limit)
			return 0;
		s->now = t;
		while (s->evq.n && s->evq.v[0].t == t && s->evq.v[0].type < EV_POLL) {
			struct event e = ev_pop(s);
			s->events++;
			if (e.type == EV_JOB_END)
				r = end_job(s, e.id);
			else if (e.type == EV_PHYS_DONE)
				r = phys_done(s, e.id, e.gen);
			else
				r = idle_timeout(s, e.id, e.gen);
			if (r < 0)
				return r;
		}
		size_t first_new = s->next_submit;
		while (s->next_submit < s->c->n_jobs && s->c->jobs[s->next_submit].submit == t) {
			uint32_t job = (uint32_t)s->next_submit++;
			r = queue_push(s, s->c->jobs[job].queue, job);
			if (r < 0)
				return r;
			s->waiting++;
			s->events++;
			s->dirty = true;
		}
		if (s->dirty) {
			r = dispatch(s);
			if (r < 0)
				return r;
		}
		if (first_new < s->next_submit &&
		    ((r = poll_for(s, first_new)) < 0 || (r = scan_for(s, first_new)) < 0))
			return r;
		if (s->evq.n && s->evq.v[0].t == t && s->evq.v[0].type == EV_POLL) {
			ev_pop(s);
			s->events++;
			if (s->p.policy == MXQ_SIM_TIMEOUT) {
				/* a scan (one per time, scan_for): its jobs may
				 * wake nodes now */
				s->polls++;
				if ((r = dispatch(s)) < 0)
					return r;
			} else {
				s->poll_at = NONE_TIME;
				/* a tick at the same time decides anyway */
				if (!(s->evq.n && s->evq.v[0].t == t &&
				      s->evq.v[0].type == EV_TICK)) {
					s->polls++;
					r = policy_tick(s);
					if (r < 0)
						return r;
					if (s->dirty && (r = dispatch(s)) < 0)
						return r;
				}
			}
		}
		if (s->evq.n && s->evq.v[0].t == t && s->evq.v[0].type == EV_TICK) {
			ev_pop(s);
			s->events++;
			r = policy_tick(s);
			if (r < 0)
				return r;
			s->next_tick_at = t + s->p.tick_s;
			r = ev_push(s, s->next_tick_at, EV_TICK, 0, 0);
			if (r < 0)
				return r;
			if (s->dirty) {
				r = dispatch(s);
				if (r < 0)
					return r;
			}
		}
		if (until_done && s->ended == s->c->n_jobs && s->next_submit == s->c->n_jobs)
			return 0;
		if (s->waiting && !s->running && !s->n_transit &&
		    t - s->last_progress > s->p.stall_limit_s)
			return -EDEADLK;
	}
}

int mxq_sim_run(struct mxq_sim *s)
{
	int r = loop(s, NONE_TIME, true);

	/* no event left, yet jobs wait: nothing will ever start them */
	if (r == 0 && s->ended < s->c->n_jobs)
		return -EDEADLK;
	return r;
}

int64_t mxq_sim_done_at(const struct mxq_sim *s)
{
	return s->done_at;
}

int mxq_sim_close(struct mxq_sim *s, int64_t end)
{
	int r;

	if (s->closed)
		return -EALREADY;
	if (end < s->now)
		return -EINVAL;
	r = loop(s, end, false);
	if (r < 0)
		return r;
	s->now = end;
	for (size_t i = 0; i < s->n_nodes; i++) {
		r = node_update(s, i);
		if (r < 0)
			return r;
	}
	series_advance(s, end);
	for (size_t b = 0; b < s->n_series; b++) {
		if (s->s_cover[b] > 0) {
			s->s_pow[b] /= s->s_cover[b];
			s->s_busy[b] /= s->s_cover[b];
		}
	}
	s->end = end;
	s->closed = true;
	return 0;
}

static void wait_stats(const double *w, size_t n, double *ret_mean, double *ret_max)
{
	double sum = 0.0, max = 0.0;

	for (size_t k = 0; k < n; k++) {
		sum += w[k];
		if (w[k] > max)
			max = w[k];
	}
	*ret_mean = n ? sum / (double)n : 0.0;
	*ret_max = max;
}

void mxq_sim_trim(struct mxq_sim *s)
{
	size_t n = s->c->n_jobs;

	if (s->trimmed || s->ended < n)
		return;
	wait_stats(s->waits, n, &s->wait_mean_s, &s->wait_max_s);
	s->wait_p95_s = mxq_sim_percentile(s->waits, n, 95.0);  /* sorts them: gone anyway */
	for (size_t q = 0; q < s->c->n_queues; q++) {
		free(s->queues[q].v);
		s->queues[q] = (struct sim_queue) { .active_pos = s->queues[q].active_pos };
	}
	free(s->job_start);
	free(s->part_nodes);
	free(s->waits);
	free(s->job_live);
	free(s->dueq.v);
	s->job_start = NULL;
	s->part_nodes = NULL;
	s->waits = NULL;
	s->job_live = NULL;
	s->dueq = (struct ev_heap) { 0 };
	s->trimmed = true;
}

void mxq_sim_get_result(const struct mxq_sim *s, struct mxq_sim_result *ret)
{
	struct mxq_sim_result res = { 0 };
	size_t n = s->c->n_jobs;

	res.busy_j = s->e[E_BUSY];
	res.idle_j = s->e[E_IDLE];
	res.transition_j = s->e[E_TRANSITION];
	res.off_j = s->e[E_OFF];
	res.energy_j = res.busy_j + res.idle_j + res.transition_j + res.off_j;
	res.bound_j = mxq_sim_lower_bound(s->c, s->end);
	for (size_t i = 0; i < s->n_nodes; i++) {
		res.boots += s->nodes[i].boots;
		if (s->nodes[i].boots > res.boots_max)
			res.boots_max = s->nodes[i].boots;
	}
	res.jobs = s->ended;
	if (s->trimmed) {
		res.wait_mean_s = s->wait_mean_s;
		res.wait_max_s = s->wait_max_s;
		res.wait_p95_s = s->wait_p95_s;
	} else if (n) {
		double *copy = malloc(n * sizeof(*copy));
		wait_stats(s->waits, n, &res.wait_mean_s, &res.wait_max_s);
		if (copy) {
			memcpy(copy, s->waits, n * sizeof(*copy));
			res.wait_p95_s = mxq_sim_percentile(copy, n, 95.0);
			free(copy);
		} else {
			res.wait_p95_s = NAN;
		}
	}
	res.start = s->c->start;
	res.end = s->end;
	res.events = s->events;
	res.ticks = s->ticks;
	res.ticks_skipped = s->ticks_skipped;
	res.polls = s->polls;
	memcpy(res.actions, s->actions, sizeof(res.actions));
	res.policy_errors = s->policy_errors;
	res.peak_powered_w = s->peak_powered_w;
	*ret = res;
}

const double *mxq_sim_waits(const struct mxq_sim *s, size_t *ret_n)
{
	*ret_n = s->trimmed ? 0 : s->c->n_jobs;
	return *ret_n ? s->waits : NULL;
}

size_t mxq_sim_series(const struct mxq_sim *s, const double **ret_powered, const double **ret_busy)
{
	*ret_powered = s->s_pow;
	*ret_busy = s->s_busy;
	return s->n_series;
}
