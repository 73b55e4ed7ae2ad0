/*
 * mxqadmin_energy - the energy queries of `mxqadmin power`:
 *
 *   power usage [--hosts H1,H2] --from T --to T [--json]
 *         energy, average and peak power of nodes over a window, from the
 *         node samples (mxq_power_sample) every mxqd writes
 *   power job JOBID [--json]     one job's energy (mxq_power_job)
 *   power jobs [--user U] [--group G] [--since T] [--limit N] [--json]
 *   power metrics                Prometheus text format (node exporter
 *                                textfile collector): node and cluster
 *
 * Times T: "now", an age "30m" / "-2h" / "7d" / "90s" / "1w", "@EPOCH",
 * or local "YYYY-MM-DD[ HH:MM[:SS]]" (also with a T).
 *
 * Errors: bad input is one line naming it and exit status 2; database
 * errors exit 1. Nothing is written to the database.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mx_db.h"
#include "mx_time.h"
#include "mxq_json.h"
#include "mxq_table.h"
#include "mx_util.h"
#include "mxq_metrics.h"
#include "mxqadmin.h"


#define TIME_FORMS MX_TIME_FORMS

struct energy_args {
	const char *hosts;      /* comma list or NULL */
	const char *user;
	const char *group;
	bool have_from, have_to, have_since;
	double from, to, since; /* epoch seconds */
	unsigned limit;
	bool json;
};

/* A time argument (mx_time_parse(), the syntax of every tool) into epoch
 * seconds. 0 or -EINVAL. */
static int parse_time(const char *s, double *ret)
{
	return mx_time_parse(s, (double)time(NULL), ret);
}

static void format_time(double epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (epoch <= 0 || !localtime_r(&t, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

#define C MXQ_TABLE_SEP

/* ------------------------------------------------------------------ usage */

struct host_usage {
	char host[65];
	double energy_j, covered_s, peak_w;
	unsigned samples;
};

/*
 * Fold one segment of a host's samples into its usage over [from, to]:
 * two consecutive rows the later of which says (prev_time) that it
 * continues the earlier one, so the energy between them is measured; the
 * part inside the window counts, linearly. Segments without that mark are
 * gaps (mxqd was not running, the source failed): never covered, whatever
 * their energy values.
 */
static void usage_add_segment(struct host_usage *u, double t0, double e0, double t1, double e1,
			      double from, double to)
{
	double a = t0 > from ? t0 : from, b = t1 < to ? t1 : to, frac, w;

	if (t1 <= t0 || b <= a)
		return;
	frac = (b - a) / (t1 - t0);
	u->energy_j += (e1 - e0) * frac;
	u->covered_s += b - a;
	w = (e1 - e0) / (t1 - t0);
	if (w > u->peak_w)
		u->peak_w = w;
}

/* AVG_W: the host's energy over the time its samples cover (0 when none). */
static double usage_avg_w(const struct host_usage *u)
{
	return u->covered_s > 0 ? u->energy_j / u->covered_s : 0.0;
}

static bool host_selected(const char *hosts, const char *host)
{
	const char *p = hosts;
	size_t len = strlen(host);

	if (!hosts)
		return true;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n == len && strncmp(p, host, n) == 0)
			return true;
		if (!comma)
			break;
		p = comma + 1;
	}
	return false;
}

static int cmd_usage(struct mx_db *db, const struct energy_args *a)
{
	struct mx_db_result *res = NULL;
	struct host_usage *hosts = NULL, *u = NULL;
	size_t n_hosts = 0;
	double prev_t = 0, prev_e = 0, total_j = 0, total_avg = 0, window;
	char from_s[32], to_s[32];
	int64_t n;

	if (!a->have_from || !a->have_to)
		return mxq_usage_error("power: usage needs --from T and --to T");
	if (a->to <= a->from)
		return mxq_usage_error("power: usage: --to must be after --from");
	window = a->to - a->from;
	/* one sample before the window and one after it bound the edges; a
	 * day of margin covers any sane flush interval */
	n = mx_db_query(db, &res,
		"SELECT hostname, UNIX_TIMESTAMP(sample_time), energy_j,"
		" COALESCE(prev_time = LAG(sample_time) OVER (PARTITION BY hostname ORDER BY sample_time), 0)"
		" FROM mxq_power_sample"
		" WHERE sample_time BETWEEN FROM_UNIXTIME(?) - INTERVAL 1 DAY"
		" AND FROM_UNIXTIME(?) + INTERVAL 1 DAY"
		" ORDER BY hostname, sample_time", "dd", a->from, a->to);
	if (n < 0)
		return mxq_failure("power usage: %s", mx_db_error(db));
	while (mx_db_next(res)) {
		const char *host = mx_db_str(res, 0);
		double t = mx_db_double(res, 1), e = mx_db_double(res, 2);

		if (!host_selected(a->hosts, host))
			continue;
		if (!u || strcmp(u->host, host) != 0) {
			struct host_usage *nh = realloc(hosts, (n_hosts + 1) * sizeof(*hosts));
			if (!nh) {
				free(hosts);
				mx_db_result_free(res);
				return mxq_failure("out of memory");
			}
			hosts = nh;
			u = &hosts[n_hosts++];
			*u = (struct host_usage) { 0 };
			snprintf(u->host, sizeof(u->host), "%s", host);
		} else if (mx_db_u64(res, 3)) {
			usage_add_segment(u, prev_t, prev_e, t, e, a->from, a->to);
		}
		if (t >= a->from && t <= a->to)
			u->samples++;
		prev_t = t;
		prev_e = e;
	}
	mx_db_result_free(res);

	format_time(a->from, from_s, sizeof(from_s));
	format_time(a->to, to_s, sizeof(to_s));
	/* AVG_W, everywhere: energy over the covered time (the average power
	 * while measured); the total row adds up the host rows */
	for (size_t i = 0; i < n_hosts; i++) {
		total_j += hosts[i].energy_j;
		total_avg += usage_avg_w(&hosts[i]);
	}
	if (a->json) {
		json_t *doc = json_object(), *arr = json_array();
		for (size_t i = 0; i < n_hosts; i++) {
			const struct host_usage *h = &hosts[i];
			json_array_append_new(arr, json_pack("{s:s, s:f, s:f, s:f, s:f, s:i}",
				"host", h->host, "energy_j", h->energy_j,
				"avg_watts", usage_avg_w(h),
				"peak_watts", h->peak_w, "coverage", h->covered_s / window,
				"samples", (json_int_t)h->samples));
		}
		mxq_json_set_time(doc, "from", a->from);
		mxq_json_set_time(doc, "to", a->to);
		json_object_set_new(doc, "hosts", arr);
		json_object_set_new(doc, "energy_j", json_real(total_j));
		json_object_set_new(doc, "avg_watts", json_real(total_avg));
		free(hosts);
		return mxq_json_print(doc) < 0 ? MXQ_EXIT_FAILURE : MXQ_EXIT_OK;
	}
	printf("energy from %s to %s (%.0f s)\n", from_s, to_s, window);
	{
		struct mxq_table *t = mxq_table_new("HOST|ENERGY_J>|KWH>|AVG_W>|PEAK_W>|COVERED>");
		int r = t ? 0 : -ENOMEM;
		for (size_t i = 0; r == 0 && i < n_hosts; i++) {
			const struct host_usage *h = &hosts[i];
			r = mxq_table_addf(t, "%s" C "%.1f" C "%.4f" C "%.1f" C "%.1f" C "%.0f%%", h->host,
					   h->energy_j, h->energy_j / 3.6e6,
					   usage_avg_w(h), h->peak_w, 100.0 * h->covered_s / window);
		}
		if (r == 0)
			r = mxq_table_addf(t, "total" C "%.1f" C "%.4f" C "%.1f" C "-" C "", total_j,
					   total_j / 3.6e6, total_avg);
		if (r == 0)
			r = mxq_table_print(t, stdout);
		mxq_table_free(t);
		if (r < 0) {
			free(hosts);
			return mxq_failure("power usage: %s", strerror(-r));
		}
	}
	if (n_hosts == 0)
		printf("(no node samples in this window)\n");
	free(hosts);
	return 0;
}

/* -------------------------------------------------------------- job, jobs */

enum job_col {
	J_ID, J_HOST, J_ENERGY, J_ACTIVE, J_AVG, J_PEAK, J_SAMPLES, J_METHOD, J_COMPLETE, J_IDLE,
	J_START, J_END, J_UPDATED, J_USER, J_GROUP_ID, J_GROUP_NAME, J_STATUS,
};

#define JOB_SELECT \
	"SELECT p.job_id, p.hostname, p.energy_j, p.active_energy_j, p.avg_watts, p.peak_watts," \
	" p.samples, p.method, p.completeness, p.idle_baseline_watts," \
	" UNIX_TIMESTAMP(p.date_start), UNIX_TIMESTAMP(p.date_end), UNIX_TIMESTAMP(p.updated)," \
	" g.user_name, j.group_id, g.group_name, j.job_status" \
	" FROM mxq_power_job p LEFT JOIN mxq_job j ON j.job_id = p.job_id" \
	" LEFT JOIN mxq_group g ON g.group_id = j.group_id"

static json_t *job_json(struct mx_db_result *res)
{
	json_t *o = json_pack("{s:I, s:s, s:f, s:f, s:f, s:f, s:I, s:s, s:s, s:f}",
		"job_id", (json_int_t)mx_db_u64(res, J_ID), "host", mx_db_str(res, J_HOST),
		"energy_j", mx_db_double(res, J_ENERGY), "active_energy_j", mx_db_double(res, J_ACTIVE),
		"avg_watts", mx_db_double(res, J_AVG), "peak_watts", mx_db_double(res, J_PEAK),
		"samples", (json_int_t)mx_db_u64(res, J_SAMPLES), "method", mx_db_str(res, J_METHOD),
		"completeness", mx_db_str(res, J_COMPLETE),
		"idle_baseline_watts", mx_db_double(res, J_IDLE));

	mxq_json_set_time(o, "date_start", mx_db_double(res, J_START));
	if (mx_db_is_null(res, J_END)) {
		mxq_json_set_time(o, "date_end", 0);
		json_object_set_new(o, "running", json_true());
	} else {
		mxq_json_set_time(o, "date_end", mx_db_double(res, J_END));
		json_object_set_new(o, "running", json_false());
	}
	json_object_set_new(o, "user", mx_db_is_null(res, J_USER) ? json_null()
				      : json_string(mx_db_str(res, J_USER)));
	json_object_set_new(o, "group_id", mx_db_is_null(res, J_GROUP_ID) ? json_null()
					  : json_integer((json_int_t)mx_db_u64(res, J_GROUP_ID)));
	json_object_set_new(o, "group_name", mx_db_is_null(res, J_GROUP_NAME) ? json_null()
					    : json_string(mx_db_str(res, J_GROUP_NAME)));
	return o;
}

static int cmd_job(struct mx_db *db, const char *id_text, const struct energy_args *a)
{
	struct mx_db_result *res = NULL;
	uint64_t id;
	char start[32], end[32], upd[32];
	int64_t n;

	if (mx_strtou64(id_text, &id) < 0)
		return mxq_usage_error("power: job: '%s' is not a job id", id_text);
	n = mx_db_query(db, &res, JOB_SELECT " WHERE p.job_id = ?", "U", id);
	if (n < 0)
		return mxq_failure("power job: %s", mx_db_error(db));
	if (n == 0) {
		mx_db_result_free(res);
		return mxq_failure("power job: no energy recorded for job %" PRIu64, id);
	}
	mx_db_next(res);
	if (a->json) {
		int r = mxq_json_print(job_json(res));
		mx_db_result_free(res);
		return r < 0 ? MXQ_EXIT_FAILURE : MXQ_EXIT_OK;
	}
	format_time(mx_db_double(res, J_START), start, sizeof(start));
	format_time(mx_db_double(res, J_END), end, sizeof(end));
	format_time(mx_db_double(res, J_UPDATED), upd, sizeof(upd));
	printf("job_id:              %" PRIu64 "\n", id);
	printf("host:                %s\n", mx_db_str(res, J_HOST));
	printf("user:                %s\n", mx_db_str(res, J_USER) ? mx_db_str(res, J_USER) : "-");
	printf("group:               %s (%s)\n",
	       mx_db_str(res, J_GROUP_ID) ? mx_db_str(res, J_GROUP_ID) : "-",
	       mx_db_str(res, J_GROUP_NAME) ? mx_db_str(res, J_GROUP_NAME) : "-");
	printf("energy:              %.1f J (%.6f kWh)\n", mx_db_double(res, J_ENERGY),
	       mx_db_double(res, J_ENERGY) / 3.6e6);
	printf("active energy:       %.1f J (above the idle baseline)\n", mx_db_double(res, J_ACTIVE));
	printf("average power:       %.1f W\n", mx_db_double(res, J_AVG));
	printf("peak power:          %.1f W\n", mx_db_double(res, J_PEAK));
	printf("idle baseline:       %.1f W (node)\n", mx_db_double(res, J_IDLE));
	printf("samples:             %" PRIu64 "\n", mx_db_u64(res, J_SAMPLES));
	printf("method:              %s%s\n", mx_db_str(res, J_METHOD),
	       strcmp(mx_db_str(res, J_METHOD), "model") == 0 ? " (an estimate)" : "");
	printf("completeness:        %s\n", mx_db_str(res, J_COMPLETE));
	printf("start:               %s\n", start);
	printf("end:                 %s\n", mx_db_is_null(res, J_END) ? "(running)" : end);
	printf("updated:             %s\n", upd);
	mx_db_result_free(res);
	return 0;
}

static int cmd_jobs(struct mx_db *db, const struct energy_args *a)
{
	struct mx_db_result *res = NULL;
	uint64_t gid = 0;
	bool gid_given = a->group && mx_strtou64(a->group, &gid) == 0;
	struct mxq_table *t;
	double total = 0;
	int64_t n;
	int r;

	n = mx_db_query(db, &res, JOB_SELECT
		" WHERE (? IS NULL OR g.user_name = ?)"
		" AND (? IS NULL OR j.group_id = ? OR (? = 0 AND g.group_name = ?))"
		" AND (? = 0 OR p.date_start >= FROM_UNIXTIME(?))"
		" ORDER BY p.date_start DESC, p.job_id DESC LIMIT ?",
		"ssslisidu", a->user, a->user, a->group, (int64_t)gid, gid_given ? 1 : 0, a->group,
		a->have_since ? 1 : 0, a->since, a->limit);
	if (n < 0)
		return mxq_failure("power jobs: %s", mx_db_error(db));
	if (a->json) {
		json_t *arr = json_array();
		while (mx_db_next(res))
			json_array_append_new(arr, job_json(res));
		mx_db_result_free(res);
		return mxq_json_print(arr) < 0 ? MXQ_EXIT_FAILURE : MXQ_EXIT_OK;
	}
	t = mxq_table_new("JOB_ID>|HOST|USER|GROUP>|ENERGY_J>|ACTIVE_J>|AVG_W>|PEAK_W>|METHOD"
			  "|COMPLETE|START|");
	r = t ? 0 : -ENOMEM;
	while (r == 0 && mx_db_next(res)) {
		char start[32];
		format_time(mx_db_double(res, J_START), start, sizeof(start));
		r = mxq_table_addf(t, "%" PRIu64 C "%s" C "%s" C "%s" C "%.1f" C "%.1f" C "%.1f" C
				   "%.1f" C "%s" C "%s" C "%s" C "%s",
				   mx_db_u64(res, J_ID), mx_db_str(res, J_HOST),
				   mx_db_str(res, J_USER) ? mx_db_str(res, J_USER) : "-",
				   mx_db_str(res, J_GROUP_ID) ? mx_db_str(res, J_GROUP_ID) : "-",
				   mx_db_double(res, J_ENERGY), mx_db_double(res, J_ACTIVE),
				   mx_db_double(res, J_AVG), mx_db_double(res, J_PEAK),
				   mx_db_str(res, J_METHOD), mx_db_str(res, J_COMPLETE), start,
				   mx_db_is_null(res, J_END) ? "(running)" : "");
		total += mx_db_double(res, J_ENERGY);
	}
	mx_db_result_free(res);
	if (r == 0)
		r = mxq_table_print(t, stdout);
	mxq_table_free(t);
	if (r < 0)
		return mxq_failure("power jobs: %s", strerror(-r));
	printf("%" PRId64 " job(s), %.1f J (%.6f kWh)\n", n, total, total / 3.6e6);
	return 0;
}

/* ---------------------------------------------------------------- metrics */

static int cmd_metrics(struct mx_db *db)
{
	int r = mxq_metrics_write(db, stdout);

	if (r == -ENOMEM)
		mxq_complain("out of memory");
	else if (r < 0)
		mxq_complain("power metrics: %s", mx_db_error(db));
	if (r < 0)
		return MXQ_EXIT_FAILURE;
	return mxqadmin_metrics_power(db);	/* power management and queue */
}

/* ------------------------------------------------------------------- main */

static void energy_usage(FILE *f)
{
	fprintf(f,
"usage: mxqadmin power usage [--hosts H1,H2] --from T --to T [--json]\n"
"       mxqadmin power job JOBID [--json]\n"
"       mxqadmin power jobs [--user U] [--group ID|NAME] [--since T] [--limit N] [--json]\n"
"       mxqadmin power metrics\n"
"T: " MX_TIME_FORMS " (no zone: local time)\n");
}

int mxqadmin_energy_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt)
{
	static const struct option opts[] = {
		{ "hosts", required_argument, NULL, 'H' },
		{ "from",  required_argument, NULL, 'f' },
		{ "to",    required_argument, NULL, 't' },
		{ "user",  required_argument, NULL, 'u' },
		{ "group", required_argument, NULL, 'g' },
		{ "since", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "json",  no_argument,       NULL, 'j' },
		{ "help",  no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct energy_args a = { .limit = 1000 };
	const char *cmd = argv[0];
	struct mx_db *db = NULL;
	int c, rc;

	optind = 0;	/* a fresh getopt: permute, unlike mxqadmin's "+" */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H': a.hosts = optarg; break;
		case 'u': a.user = optarg; break;
		case 'g': a.group = optarg; break;
		case 'j': a.json = true; break;
		case 'f':
			if (parse_time(optarg, &a.from) < 0)
				return mxq_usage_error("power: --from: '%s' is not a time (" TIME_FORMS ")", optarg);
			a.have_from = true;
			break;
		case 't':
			if (parse_time(optarg, &a.to) < 0)
				return mxq_usage_error("power: --to: '%s' is not a time (" TIME_FORMS ")", optarg);
			a.have_to = true;
			break;
		case 's':
			if (parse_time(optarg, &a.since) < 0)
				return mxq_usage_error("power: --since: '%s' is not a time (" TIME_FORMS ")", optarg);
			a.have_since = true;
			break;
		case 'l':
			if (mx_strtou32(optarg, &a.limit) < 0 || a.limit == 0)
				return mxq_usage_error("power: --limit: '%s' is not a positive number", optarg);
			break;
		case 'h':
			energy_usage(stdout);
			return 0;
		default:
			return mxq_usage_error("power: %s: unknown or incomplete option '%s' (try 'mxqadmin power --help')",
				   cmd, argv[optind - 1]);
		}
	}
	if (strcmp(cmd, "job") == 0 && optind + 1 != argc)
		return mxq_usage_error("power: usage: mxqadmin power job JOBID [--json]");
	if (strcmp(cmd, "job") != 0 && optind != argc)
		return mxq_usage_error("power: %s: unexpected argument '%s'", cmd, argv[optind]);
	if (strcmp(cmd, "usage") && strcmp(cmd, "job") && strcmp(cmd, "jobs") && strcmp(cmd, "metrics"))
		return mxq_usage_error("power: unknown energy command '%s'", cmd);
	if (strcmp(cmd, "usage") == 0 && (!a.have_from || !a.have_to))
		return mxq_usage_error("power: usage needs --from T and --to T");

	if (mxqadmin_connect(&db, dbopt) < 0)
		return MXQ_EXIT_FAILURE;
	if (strcmp(cmd, "usage") == 0)
		rc = cmd_usage(db, &a);
	else if (strcmp(cmd, "job") == 0)
		rc = cmd_job(db, argv[optind], &a);
	else if (strcmp(cmd, "jobs") == 0)
		rc = cmd_jobs(db, &a);
	else
		rc = cmd_metrics(db);
	mx_db_close(db);
	return rc;
}
