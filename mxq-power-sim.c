/*
 * mxq-power-sim - replay a Standard Workload Format trace over a modelled
 * cluster and compare power policies (DESIGN §7, manpages/mxq-power-sim.1).
 *
 *   mxq-power-sim [OPTIONS] TRACE[.gz]
 *
 * One run simulates, on the same jobs and the same cluster: always-on, a
 * fixed idle timeout for each --timeouts value (Slurm SuspendTime style),
 * and our policy (the real mxq_power_decide(), default configuration or
 * --power-config FILE); the offline lower bound comes from the always-on
 * schedule. It prints energy, power cycles, job waits and the share of the
 * achievable saving each policy captures, as a table, --csv or --json, and
 * with --svg FILE a plot of powered-on against busy nodes over time.
 *
 * Configuration: command line only (plus the power.conf given). Errors:
 * one line "mxq-power-sim: ..." on stderr; exit 2 for bad usage or input,
 * 1 when a simulation fails (e.g. jobs wait forever), 0 otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "mx_util.h"
#include "mxq_client.h"
#include "mxq_json.h"
#include "mxq_power_config.h"
#include "mxq_power_policy.h"
#include "mxq_sim.h"
#include "mxq_table.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif

#define PROG "mxq-power-sim"
#define MAX_CLASSES 64
#define MAX_TIMEOUTS 16
#define MAX_RUNS (2 + MAX_TIMEOUTS)
#define SVG_POINTS 1200

enum output_format { OUT_TABLE, OUT_CSV, OUT_JSON };

/* Model option that was given explicitly (the rest come from the header). */
struct given {
	bool nodes, cores;
};

struct options {
	const char *trace_path;
	const char *power_config_path;
	const char *svg_path;
	enum output_format format;
	uint32_t nodes;              /* --nodes, single class only */
	struct given given;
	struct mxq_sim_class base;   /* --cores, --memory, --idle-watts, ...: defaults of every class */
	char *class_specs[MAX_CLASSES];
	size_t n_class_specs;
	int64_t timeouts[MAX_TIMEOUTS];
	size_t n_timeouts;
	int64_t tick_s;
	int64_t poll_s;              /* --poll, 0 = at ticks only */
	int64_t scan_s;              /* --timeout-scan, 0 = at once */
	double days;                 /* window length, 0 = all */
	double skip_days;
	double scale;                /* 0 = auto */
	bool scale_auto;
	enum mxq_sim_wide wide;
	bool expect_actual;
	bool keep_overruns;
	unsigned threads;            /* 0 = number of CPUs */
	bool every_tick;             /* --every-tick: no skipping of quiet ticks */
};

struct run {
	char name[32];
	struct mxq_sim_params params;
	const struct mxq_sim_cluster *cluster;
	struct mxq_sim *sim;             /* made when its turn comes */
	struct mxq_sim_result res;
	double cpu_s;                /* CPU time in mxq_sim_new(), _run(), _trim() and _close() */
	int rc;
};

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of the calling thread: the speed of one simulation, whatever
 * else the machine does. */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [OPTIONS] TRACE       (SWF file, optionally gzip-compressed)\n"
"\n"
"Cluster (defaults from the trace header: MaxNodes nodes of MaxProcs/MaxNodes cores):\n"
"      --nodes N              number of nodes (single class)\n"
"      --cores N              cores (slots) per node\n"
"      --memory SIZE          memory per node (e.g. 4G; default: not modelled)\n"
"      --maxtime TIME         longest job a node accepts (mxqsub units; default unlimited)\n"
"      --idle-watts W         draw of an idle node (100)\n"
"      --busy-watts W         draw of a node with every core busy (250)\n"
"      --off-watts W          draw of a powered-off node (5)\n"
"      --boot-time DUR        wake to usable (3m)\n"
"      --boot-energy J        energy of one boot (30000)\n"
"      --shutdown-time DUR    power-off command to off (1m)\n"
"      --shutdown-energy J    energy of one shutdown (3000)\n"
"      --class SPEC           a node class, repeatable: KEY=VALUE,... with keys name,\n"
"                             count, cores, memory, maxtime, tags (a+b), rank, idle,\n"
"                             busy, off, boot, boot-energy, shutdown, shutdown-energy;\n"
"                             unset keys take the values of the options above\n"
"Workload:\n"
"      --days D               simulate the jobs submitted in D days (default: all)\n"
"      --skip-days D          start the window D days after the first job\n"
"      --scale F|auto         superimpose F time-shifted copies of the trace; auto =\n"
"                             modelled cores / the trace's MaxProcs\n"
"      --wide gang|clamp|split\n"
"                             jobs wider than a node: whole nodes started together\n"
"                             (gang, default), squeezed onto one node (clamp), or\n"
"                             split into independent single-node jobs (split: MXQ's\n"
"                             own workload, which has no gangs)\n"
"      --expected-end requested|actual\n"
"                             what the policy is told about running jobs (requested)\n"
"      --keep-overruns        let jobs run past their requested time as recorded\n"
"                             (default: ended at it, as mxqd enforces job_time)\n"
"Policies:\n"
"      --timeouts LIST        the sweep of fixed idle timeouts (default\n"
"                             1m,2m,5m,10m,20m,30m,60m)\n"
"      --timeout-scan DUR     a job that cannot start wakes nodes for the fixed\n"
"                             timeouts this long after its submit (1s, as Slurm's\n"
"                             power save thread; 0 = at once)\n"
"      --power-config FILE    power.conf for our policy (default: built-in defaults)\n"
"      --tick DUR             time between two decisions of our policy (10s, as\n"
"                             mxqd --power-tick)\n"
"      --poll DUR             a job that cannot start is decided on this long after its\n"
"                             submit, when no tick comes sooner (1s, as mxqd\n"
"                             --power-poll; 0 = at ticks only)\n"
"      --every-tick           ask the policy at every tick, also when nothing can have\n"
"                             changed since its last empty plan (slower, same results)\n"
"Output:\n"
"      --csv                  one CSV row per policy instead of the table\n"
"      --json                 one JSON document instead of the table\n"
"      --svg FILE             plot powered-on vs busy nodes over time\n"
"      --threads N            simulations run in parallel (default: CPUs)\n"
"  -h, --help                 show this help\n"
"  -V, --version              show the version\n"
"\n"
"Durations: NUMBER[s|m|h|d] terms, bare = seconds (\"90\", \"3m\", \"1h30m\").\n");
}

/* ------------------------------------------------------------------------
 * Options
 */

static int parse_double_opt(const char *name, const char *arg, double min, double max,
			    double *ret)
{
	double d;

	if (mx_strtod(arg, &d) < 0 || d < min || d > max) {
		mxq_complain("--%s: '%s' is not a number between %g and %g", name, arg, min, max);
		return -EINVAL;
	}
	*ret = d;
	return 0;
}

static int parse_duration_opt(const char *name, const char *arg, int64_t *ret)
{
	if (mxq_sim_parse_duration(arg, ret) < 0) {
		mxq_complain("--%s: '%s' is not a duration (e.g. 90, 3m, 1h30m)", name, arg);
		return -EINVAL;
	}
	return 0;
}

static int parse_timeouts(const char *arg, struct options *o)
{
	char *copy = strdup(arg), *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	o->n_timeouts = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->n_timeouts == MAX_TIMEOUTS) {
			mxq_complain("--timeouts: at most %d values", MAX_TIMEOUTS);
			r = -EINVAL;
			break;
		}
		r = parse_duration_opt("timeouts", t, &o->timeouts[o->n_timeouts]);
		if (r < 0)
			break;
		o->n_timeouts++;
	}
	free(copy);
	return r;
}

/* 0 go on, 1 exit successfully, negative: usage error (already reported). */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum {
		O_NODES = 256, O_CORES, O_MEMORY, O_MAXTIME, O_IDLE, O_BUSY, O_OFF, O_BOOT_TIME,
		O_BOOT_ENERGY, O_SHUTDOWN_TIME, O_SHUTDOWN_ENERGY, O_CLASS, O_DAYS, O_SKIP_DAYS,
		O_SCALE, O_WIDE, O_EXPECTED_END, O_TIMEOUTS, O_POWER_CONFIG, O_TICK, O_CSV, O_JSON,
		O_SVG, O_THREADS, O_EVERY_TICK, O_KEEP_OVERRUNS, O_POLL, O_TIMEOUT_SCAN,
	};
	static const struct option opts[] = {
		{ "nodes",           required_argument, NULL, O_NODES },
		{ "cores",           required_argument, NULL, O_CORES },
		{ "memory",          required_argument, NULL, O_MEMORY },
		{ "maxtime",         required_argument, NULL, O_MAXTIME },
		{ "idle-watts",      required_argument, NULL, O_IDLE },
		{ "busy-watts",      required_argument, NULL, O_BUSY },
		{ "off-watts",       required_argument, NULL, O_OFF },
		{ "boot-time",       required_argument, NULL, O_BOOT_TIME },
		{ "boot-energy",     required_argument, NULL, O_BOOT_ENERGY },
		{ "shutdown-time",   required_argument, NULL, O_SHUTDOWN_TIME },
		{ "shutdown-energy", required_argument, NULL, O_SHUTDOWN_ENERGY },
		{ "class",           required_argument, NULL, O_CLASS },
		{ "days",            required_argument, NULL, O_DAYS },
		{ "skip-days",       required_argument, NULL, O_SKIP_DAYS },
		{ "scale",           required_argument, NULL, O_SCALE },
		{ "wide",            required_argument, NULL, O_WIDE },
		{ "expected-end",    required_argument, NULL, O_EXPECTED_END },
		{ "keep-overruns",   no_argument,       NULL, O_KEEP_OVERRUNS },
		{ "timeouts",        required_argument, NULL, O_TIMEOUTS },
		{ "power-config",    required_argument, NULL, O_POWER_CONFIG },
		{ "tick",            required_argument, NULL, O_TICK },
		{ "csv",             no_argument,       NULL, O_CSV },
		{ "json",            no_argument,       NULL, O_JSON },
		{ "svg",             required_argument, NULL, O_SVG },
		{ "threads",         required_argument, NULL, O_THREADS },
		{ "every-tick",      no_argument,       NULL, O_EVERY_TICK },
		{ "poll",            required_argument, NULL, O_POLL },
		{ "timeout-scan",    required_argument, NULL, O_TIMEOUT_SCAN },
		{ "help",            no_argument,       NULL, 'h' },
		{ "version",         no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, r = 0;
	uint32_t u32;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		switch (c) {
		case O_NODES:
			if (mx_strtou32(optarg, &o->nodes) < 0 || o->nodes == 0) {
				mxq_complain("--nodes: '%s' is not a positive number", optarg);
				return -EINVAL;
			}
			o->given.nodes = true;
			break;
		case O_CORES:
			if (mx_strtou32(optarg, &o->base.cores) < 0 || o->base.cores == 0) {
				mxq_complain("--cores: '%s' is not a positive number", optarg);
				return -EINVAL;
			}
			o->given.cores = true;
			break;
		case O_MEMORY:
			if (mx_parse_size_mib(optarg, 'M', &o->base.memory_mib) < 0) {
				mxq_complain("--memory: '%s' is not a size (e.g. 4G, 512M)", optarg);
				return -EINVAL;
			}
			break;
		case O_MAXTIME:
			if (mx_parse_runtime_min(optarg, &o->base.maxtime_min) < 0) {
				mxq_complain("--maxtime: '%s' is not a run time (e.g. 2d, 12h)", optarg);
				return -EINVAL;
			}
			break;
		case O_IDLE:
			r = parse_double_opt("idle-watts", optarg, 0, 1e6, &o->base.idle_w);
			break;
		case O_BUSY:
			r = parse_double_opt("busy-watts", optarg, 0, 1e6, &o->base.busy_w);
			break;
		case O_OFF:
			r = parse_double_opt("off-watts", optarg, 0, 1e6, &o->base.off_w);
			break;
		case O_BOOT_TIME:
			r = parse_duration_opt("boot-time", optarg, &o->base.boot_s);
			break;
		case O_BOOT_ENERGY:
			r = parse_double_opt("boot-energy", optarg, 0, 1e12, &o->base.boot_j);
			break;
		case O_SHUTDOWN_TIME:
			r = parse_duration_opt("shutdown-time", optarg, &o->base.shutdown_s);
			break;
		case O_SHUTDOWN_ENERGY:
			r = parse_double_opt("shutdown-energy", optarg, 0, 1e12, &o->base.shutdown_j);
			break;
		case O_CLASS:
			if (o->n_class_specs == MAX_CLASSES) {
				mxq_complain("--class: at most %d classes", MAX_CLASSES);
				return -EINVAL;
			}
			o->class_specs[o->n_class_specs++] = optarg;
			break;
		case O_DAYS:
			r = parse_double_opt("days", optarg, 1.0 / 1440, 1e6, &o->days);
			break;
		case O_SKIP_DAYS:
			r = parse_double_opt("skip-days", optarg, 0, 1e6, &o->skip_days);
			break;
		case O_SCALE:
			if (strcmp(optarg, "auto") == 0) {
				o->scale_auto = true;
				break;
			}
			o->scale_auto = false;
			r = parse_double_opt("scale", optarg, 0.001, 1000, &o->scale);
			break;
		case O_WIDE:
			r = mxq_sim_wide_from_string(optarg);
			if (r < 0) {
				mxq_complain("--wide: '%s' is not gang, clamp or split", optarg);
				return r;
			}
			o->wide = (enum mxq_sim_wide)r;
			r = 0;
			break;
		case O_EXPECTED_END:
			if (strcmp(optarg, "requested") == 0) {
				o->expect_actual = false;
			} else if (strcmp(optarg, "actual") == 0) {
				o->expect_actual = true;
			} else {
				mxq_complain("--expected-end: '%s' is neither requested nor actual", optarg);
				return -EINVAL;
			}
			break;
		case O_KEEP_OVERRUNS:
			o->keep_overruns = true;
			break;
		case O_TIMEOUTS:
			r = parse_timeouts(optarg, o);
			break;
		case O_POWER_CONFIG:
			o->power_config_path = optarg;
			break;
		case O_TICK:
			r = parse_duration_opt("tick", optarg, &o->tick_s);
			if (r == 0 && o->tick_s <= 0) {
				mxq_complain("--tick: must be at least 1s");
				r = -EINVAL;
			}
			break;
		case O_POLL:
			r = parse_duration_opt("poll", optarg, &o->poll_s);
			break;
		case O_TIMEOUT_SCAN:
			r = parse_duration_opt("timeout-scan", optarg, &o->scan_s);
			break;
		case O_EVERY_TICK:
			o->every_tick = true;
			break;
		case O_CSV:
			o->format = OUT_CSV;
			break;
		case O_JSON:
			o->format = OUT_JSON;
			break;
		case O_SVG:
			o->svg_path = optarg;
			break;
		case O_THREADS:
			if (mx_strtou32(optarg, &u32) < 0 || u32 == 0 || u32 > 64) {
				mxq_complain("--threads: '%s' is not a number from 1 to 64", optarg);
				return -EINVAL;
			}
			o->threads = u32;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf(PROG " %s\n", MXQ_VERSION);
			return 1;
		default:
			mxq_complain_getopt(c, argv);
			return -EINVAL;
		}
		if (r < 0)
			return r;
	}
	if (optind != argc - 1) {
		mxq_complain(optind >= argc ? "no trace file given (try '" PROG " --help')" :
			 "only one trace file, please (try '" PROG " --help')");
		return -EINVAL;
	}
	o->trace_path = argv[optind];
	if (o->n_class_specs && (o->given.nodes)) {
		mxq_complain("--nodes cannot be combined with --class (give count= in each class)");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * Input
 */

static int read_trace(const char *path, struct mxq_sim_trace *trace)
{
	char err[512];
	int r = mxq_sim_trace_read(trace, path, 0, err, sizeof(err));

	if (r == -ENOMEM)
		mxq_complain("%s: out of memory", path);
	else if (r < 0)
		mxq_complain("%s", err);
	if (r < 0)
		return r;
	if (trace->extra_fields)
		mxq_complain("warning: %s: %" PRIu64 " job lines have more than 18 fields; the "
			     "fields after the 18th are ignored", path, trace->extra_fields);
	if (trace->lines == 0) {
		mxq_complain("%s: no job lines (an empty or header-only trace); give an SWF trace "
			     "with jobs", path);
		return -EINVAL;
	}
	if (trace->n_jobs == 0) {
		mxq_complain("%s: all %" PRIu64 " job lines were skipped (%" PRIu64 " with run time "
			     "<= 0, %" PRIu64 " with processors <= 0): nothing to simulate", path,
			     trace->lines, trace->skipped_runtime, trace->skipped_procs);
		return -EINVAL;
	}
	return 0;
}

/* The policy's power figures the file does not set itself. */
struct cfg_given {
	bool idle_watts, busy_watts, boot_energy, shutdown_energy, boot_time;
};

static int load_power_config(const char *path, struct mxq_power_config *cfg,
			     struct cfg_given *given)
{
	char err[4096];
	char *text = NULL;
	int r;

	mxq_power_config_defaults(cfg);
	*given = (struct cfg_given) { false };
	if (!path)
		return 0;
	/* the loader of mxqd and mxqadmin: same size limit, same errors */
	r = mxq_power_config_load_text(cfg, path, NULL, &text, err, sizeof(err));
	if (r < 0) {
		mxq_complain_lines(err);
		return r;
	}
	*given = (struct cfg_given) {
		.idle_watts = mxq_power_config_text_sets(text, "idle_watts"),
		.busy_watts = mxq_power_config_text_sets(text, "busy_watts"),
		.boot_energy = mxq_power_config_text_sets(text, "boot_energy"),
		.shutdown_energy = mxq_power_config_text_sets(text, "shutdown_energy"),
		.boot_time = mxq_power_config_text_sets(text, "boot_time"),
	};
	free(text);
	return 0;
}

/*
 * The policy knows the cluster's power figures as a site would configure
 * them: what power.conf does not set comes from the simulated classes
 * (node-weighted means; the longest boot time, the highest busy draw),
 * never silently from the policy's built-in defaults.
 */
static void calibrate_policy(struct mxq_power_config *cfg, const struct cfg_given *given,
			     const struct mxq_sim_class *classes, size_t n_classes)
{
	double nodes = 0, idle = 0, busy_max = 0, boot_j = 0, shut_j = 0;
	int64_t boot_s = 0;

	for (size_t i = 0; i < n_classes; i++) {
		double c = classes[i].count;
		nodes += c;
		idle += c * classes[i].idle_w;
		boot_j += c * classes[i].boot_j;
		shut_j += c * classes[i].shutdown_j;
		if (classes[i].boot_s > boot_s)
			boot_s = classes[i].boot_s;
		if (classes[i].busy_w > busy_max)
			busy_max = classes[i].busy_w;
	}
	if (nodes <= 0)
		return;
	if (!given->idle_watts && idle > 0)
		cfg->idle_watts = idle / nodes;
	if (!given->busy_watts && busy_max > 0)
		cfg->busy_watts = busy_max;   /* what any node may draw */
	if (!given->boot_energy)
		cfg->boot_energy_j = boot_j / nodes;
	if (!given->shutdown_energy)
		cfg->shutdown_energy_j = shut_j / nodes;
	if (!given->boot_time)
		cfg->boot_time_s = boot_s;
}

/* The classes of the cluster: --class specs, else one class sized from the
 * options and the trace header. */
static int build_classes(struct options *o, const struct mxq_sim_trace *trace,
			 struct mxq_sim_class *classes, size_t *ret_n)
{
	char err[512];

	if (o->n_class_specs) {
		for (size_t i = 0; i < o->n_class_specs; i++) {
			classes[i] = o->base;
			snprintf(classes[i].name, sizeof(classes[i].name), "class%zu", i + 1);
			if (mxq_sim_class_parse(&classes[i], o->class_specs[i], err, sizeof(err)) < 0) {
				mxq_complain("--class '%s': %s", o->class_specs[i], err);
				return -EINVAL;
			}
			if (classes[i].count == 0) {
				mxq_complain("--class '%s': needs count=N", o->class_specs[i]);
				return -EINVAL;
			}
		}
		*ret_n = o->n_class_specs;
		return 0;
	}

	if (!trace->max_procs && !trace->max_nodes && !(o->given.nodes && o->given.cores)) {
		mxq_complain("%s: the trace has no MaxNodes/MaxProcs header: give the cluster with "
			     "--nodes N --cores N (or --class count=N,cores=N,...)", o->trace_path);
		return -EINVAL;
	}
	classes[0] = o->base;
	if (!o->given.cores) {
		uint32_t cores = 1;
		if (trace->max_nodes && trace->max_procs >= trace->max_nodes)
			cores = trace->max_procs / trace->max_nodes;
		classes[0].cores = cores;
	}
	if (o->given.nodes) {
		classes[0].count = o->nodes;
	} else {
		uint32_t procs = trace->max_procs ? trace->max_procs : trace->max_nodes;
		uint32_t nodes = procs / classes[0].cores;
		if (!o->given.cores && trace->max_nodes)
			nodes = trace->max_nodes;
		classes[0].count = nodes ? nodes : 1;
	}
	*ret_n = 1;
	return 0;
}

/* ------------------------------------------------------------------------
 * Running
 */

static void *run_thread(void *arg)
{
	struct run *run = arg;
	double t0 = cpu_s();

	/* made here and trimmed after its last job: only the simulations
	 * running at the same time hold their per-job arrays */
	run->rc = mxq_sim_new(run->cluster, &run->params, &run->sim);
	if (run->rc == 0)
		run->rc = mxq_sim_run(run->sim);
	if (run->rc == 0)
		mxq_sim_trim(run->sim);
	run->cpu_s = cpu_s() - t0;
	return NULL;
}

/* Run every simulation to its last job, N_THREADS at a time. */
static void run_all(struct run *runs, size_t n, unsigned n_threads)
{
	pthread_t tid[MAX_RUNS];
	bool started[MAX_RUNS] = { false };

	for (size_t base = 0; base < n; base += n_threads) {
		for (size_t k = base; k < n && k < base + n_threads; k++)
			started[k] = n_threads > 1 &&
				     pthread_create(&tid[k], NULL, run_thread, &runs[k]) == 0;
		for (size_t k = base; k < n && k < base + n_threads; k++) {
			if (started[k])
				pthread_join(tid[k], NULL);
			else
				run_thread(&runs[k]);
		}
	}
}

static const char *sim_error(int rc)
{
	switch (rc) {
	case -EDEADLK:
		return "jobs wait while no node runs or boots (the policy never wakes a node "
		       "they fit on)";
	case -EPROTO:
		return "mxq_power_decide() rejected the snapshot";
	default:
		return strerror(-rc);
	}
}

/* ------------------------------------------------------------------------
 * Output
 */

struct row {
	const char *name;
	const struct mxq_sim_result *res; /* NULL for the bound */
	double energy_j, idle_j, transition_j;
	double wait_mean, wait_p95, wait_max;
	double cycles_mean;
	uint32_t cycles_max;
	bool has_cycles;
	double captured;             /* NAN when there is nothing to capture */
	double saved_pct;
	double wait_delta_pct;       /* NAN when always-on waits nothing */
	bool timeout;                /* a fixed timeout of the sweep */
	bool on_front;               /* no timeout of the sweep is better on both */
	const char *dominated_by;    /* the first timeout that is, or NULL */
};

/* A better than B: no more energy and no longer mean wait, less of one. */
static bool dominates(const struct row *a, const struct row *b)
{
	return a->energy_j <= b->energy_j && a->wait_mean <= b->wait_mean &&
	       (a->energy_j < b->energy_j || a->wait_mean < b->wait_mean);
}

/* Mark, for every simulated row, whether a fixed timeout of the sweep beats
 * it on energy and mean wait at once (the sweep's front: what the best
 * fixed timeout in hindsight can reach). */
static void mark_front(struct row *rows, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		rows[k].on_front = rows[k].res != NULL;
		rows[k].dominated_by = NULL;
		for (size_t t = 0; t < n && rows[k].res; t++) {
			if (!rows[t].timeout || t == k || !dominates(&rows[t], &rows[k]))
				continue;
			rows[k].on_front = false;
			rows[k].dominated_by = rows[t].name;
			break;
		}
	}
}

static double kwh(double j)
{
	return j / 3.6e6;
}

static void make_rows(const struct run *runs, size_t n_runs, size_t n_nodes, struct row *rows,
		      size_t *ret_n)
{
	const struct mxq_sim_result *base = &runs[0].res;
	double achievable = base->energy_j - base->bound_j;
	size_t n = 0;

	for (size_t k = 0; k < n_runs; k++) {
		const struct mxq_sim_result *r = &runs[k].res;
		rows[n++] = (struct row) {
			.name = runs[k].name, .res = r, .energy_j = r->energy_j, .idle_j = r->idle_j,
			.transition_j = r->transition_j, .wait_mean = r->wait_mean_s,
			.wait_p95 = r->wait_p95_s, .wait_max = r->wait_max_s,
			.cycles_mean = n_nodes ? (double)r->boots / (double)n_nodes : 0.0,
			.cycles_max = r->boots_max, .has_cycles = true,
			.timeout = runs[k].params.policy == MXQ_SIM_TIMEOUT,
		};
	}
	/* the lower bound: no schedule of these jobs can use less */
	rows[n++] = (struct row) {
		.name = "lower-bound", .energy_j = base->bound_j,
		.idle_j = NAN, .transition_j = NAN,
		.wait_mean = base->wait_mean_s, .wait_p95 = base->wait_p95_s,
		.wait_max = base->wait_max_s,
	};
	for (size_t k = 0; k < n; k++) {
		struct row *w = &rows[k];
		w->captured = achievable > 0 ? (base->energy_j - w->energy_j) / achievable : NAN;
		w->saved_pct = base->energy_j > 0 ?
			       100.0 * (base->energy_j - w->energy_j) / base->energy_j : 0.0;
		w->wait_delta_pct = base->wait_mean_s > 0 ?
				    100.0 * (w->wait_mean - base->wait_mean_s) / base->wait_mean_s :
				    (w->wait_mean > 0 ? INFINITY : 0.0);
	}
	mark_front(rows, n);
	*ret_n = n;
}

/* The sweep's best energy, and where each of our policies stands to it. */
static void print_verdict(const struct row *rows, size_t n)
{
	const struct row *best = NULL;

	for (size_t k = 0; k < n; k++)
		if (rows[k].timeout && (!best || rows[k].energy_j < best->energy_j))
			best = &rows[k];
	if (!best)
		return;
	printf("\nsweep: least energy of the fixed timeouts: %s, %.1f%% of the saving captured\n",
	       best->name, 100.0 * best->captured);
	for (size_t k = 0; k < n; k++) {
		const struct row *w = &rows[k];
		if (!w->res || w->timeout || w->res->energy_j == rows[0].res->energy_j)
			continue;
		if (w->on_front)
			printf("%s: on or beyond the front (no fixed timeout is better on both energy "
			       "and mean wait), %.1f%% captured (%.1f%% of %s's)\n", w->name,
			       100.0 * w->captured, 100.0 * w->captured / best->captured, best->name);
		else
			printf("%s: behind the front: %s uses less energy and waits less\n", w->name,
			       w->dominated_by);
	}
}

struct speed {
	double wall_s;               /* whole program, start to end */
	double proc_cpu_s;           /* getrusage(RUSAGE_SELF): user + system */
	double peak_mb;              /* getrusage(RUSAGE_SELF): maximum resident set */
	double sim_s;                /* CPU time, summed over simulations */
	double sim_days;             /* sum over simulations */
	uint64_t events;
};

/* V with DECIMALS digits and SUFFIX, or "-" when it is not a number. */
static void fmt_or_dash(char *buf, size_t len, int decimals, const char *suffix, bool sign,
			double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (sign)
		snprintf(buf, len, "%+.*f%s", decimals, v, suffix);
	else
		snprintf(buf, len, "%.*f%s", decimals, v, suffix);
}

static void print_table(const char *trace_name, const struct mxq_sim_trace *trace,
			const struct mxq_sim_cluster *cluster, const struct mxq_sim_class *classes,
			size_t n_classes, const struct options *o, const struct row *rows,
			size_t n_rows, const struct run *runs, size_t n_runs, const struct speed *sp)
{
	const struct mxq_sim_workload_stats *st = mxq_sim_cluster_stats(cluster);
	const struct mxq_sim_result *base = &runs[0].res;
	double days = (double)(base->end - base->start) / 86400.0;
	double cap_s = 0;
	char a[32], b[32], c[32], d[32];
	struct mxq_table *t;

	for (size_t i = 0; i < n_classes; i++)
		cap_s += (double)classes[i].count * classes[i].cores;
	printf("trace %s: %" PRIu64 " jobs simulated of %" PRIu64 " (skipped: %" PRIu64
	       " run time <= 0, %" PRIu64 " processors <= 0, %" PRIu64 " unrunnable), "
	       "%" PRIu64 " gang, %" PRIu64 " cut to their requested time, %.1f days, "
	       "utilisation %.2f\n",
	       trace_name, st->jobs, st->trace_jobs, trace->skipped_runtime, trace->skipped_procs,
	       st->unrunnable, st->wide, st->cut_to_limit, days,
	       cap_s > 0 && days > 0 ? (double)st->busy_core_seconds / (cap_s * days * 86400) : 0);
	if (o->wide == MXQ_SIM_WIDE_SPLIT)
		printf("MXQ workload (--wide split): %" PRIu64 " wide jobs split into independent "
		       "single-node jobs, counted above as jobs\n", st->split);
	if (o->scale != 1.0 || o->days > 0 || o->skip_days > 0) {
		if (o->days > 0)
			snprintf(a, sizeof(a), "%.2f days", o->days);
		else
			snprintf(a, sizeof(a), "to the end");
		printf("window: from %.2f days after the first job, %s, trace scaled %.3f times\n",
		       o->skip_days, a, o->scale);
	}
	for (size_t i = 0; i < n_classes; i++) {
		const struct mxq_sim_class *k = &classes[i];
		if (k->memory_mib)
			mx_format_size_mib(k->memory_mib, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "-");
		printf("class %s: %" PRIu32 " nodes x %" PRIu32 " cores, memory %s, idle %g W, "
		       "busy %g W, off %g W, boot %" PRId64 " s / %g J, shutdown %" PRId64
		       " s / %g J\n", k->name, k->count, k->cores, a, k->idle_w, k->busy_w,
		       k->off_w, k->boot_s, k->boot_j, k->shutdown_s, k->shutdown_j);
	}
	t = mxq_table_new("policy|energy_kWh>|saved%>|idle_kWh>|trans_kWh>|cyc/n>|cmax>|"
			  "wait_mean>|wait_p95>|wait_max>|wait+%>|captured>|front>");
	for (size_t k = 0; t && k < n_rows; k++) {
		const struct row *w = &rows[k];
		char cyc[32] = "-", cmax[32] = "-";

		fmt_or_dash(a, sizeof(a), 1, "", false, kwh(w->idle_j));
		fmt_or_dash(b, sizeof(b), 1, "", false, kwh(w->transition_j));
		fmt_or_dash(c, sizeof(c), 1, "%", false, 100.0 * w->captured);
		fmt_or_dash(d, sizeof(d), 2, "", true, w->wait_delta_pct);
		if (w->has_cycles) {
			snprintf(cyc, sizeof(cyc), "%.1f", w->cycles_mean);
			snprintf(cmax, sizeof(cmax), "%" PRIu32, w->cycles_max);
		}
		if (mxq_table_addf(t, "%s" MXQ_TABLE_SEP "%.1f" MXQ_TABLE_SEP "%.2f" MXQ_TABLE_SEP
				   "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s"
				   MXQ_TABLE_SEP "%.0fs" MXQ_TABLE_SEP "%.0fs" MXQ_TABLE_SEP "%.0fs"
				   MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s" MXQ_TABLE_SEP "%s",
				   w->name, kwh(w->energy_j), w->saved_pct, a, b, cyc, cmax,
				   w->wait_mean, w->wait_p95, w->wait_max, d, c,
				   !w->has_cycles ? "-" : w->on_front ? "yes" : "no") < 0) {
			mxq_table_free(t);
			t = NULL;
		}
	}
	printf("\n");
	if (!t || mxq_table_print(t, stdout) < 0)
		mxq_complain("cannot print the results table: %s", strerror(t ? EIO : ENOMEM));
	mxq_table_free(t);
	print_verdict(rows, n_rows);
	for (size_t k = 0; k < n_runs; k++) {
		const struct mxq_sim_result *r = &runs[k].res;
		if (runs[k].params.policy != MXQ_SIM_POLICY)
			continue;
		printf("\n%s: %" PRIu64 " decisions (%" PRIu64 " between ticks for new jobs, %" PRIu64 " quiet ticks skipped), %" PRIu64 " WAKE, %" PRIu64 " DRAIN, %" PRIu64
		       " CANCEL_DRAIN, %" PRIu64 " POWER_OFF, %" PRIu64 " MARK_FAILED, %" PRIu64
		       " actions rejected\n", runs[k].name, r->ticks, r->polls, r->ticks_skipped,
		       r->actions[MXQ_POWER_ACTION_WAKE], r->actions[MXQ_POWER_ACTION_DRAIN],
		       r->actions[MXQ_POWER_ACTION_CANCEL_DRAIN],
		       r->actions[MXQ_POWER_ACTION_POWER_OFF],
		       r->actions[MXQ_POWER_ACTION_MARK_FAILED], r->policy_errors);
		printf("%s: peak draw of the powered nodes %.0f W", runs[k].name,
		       r->peak_powered_w);
		if (runs[k].params.cfg->max_power_watts > 0)
			printf(" (max_power_watts %.0f W)", runs[k].params.cfg->max_power_watts);
		printf("\n");
	}
	printf("\nspeed: %zu simulations of %.1f days (%zu nodes) in %.2f s CPU, %.2f s wall: "
	       "%.1f simulated days/s, %.3f M events/s\n", n_runs, days,
	       mxq_sim_cluster_nodes(cluster), sp->sim_s, sp->wall_s,
	       sp->sim_s > 0 ? sp->sim_days / sp->sim_s : 0,
	       sp->sim_s > 0 ? (double)sp->events / sp->sim_s / 1e6 : 0);
	printf("process: %.2f s CPU (user + system, all threads) = %.3f s CPU per simulated day "
	       "of the %zu simulations, peak memory %.1f MB\n", sp->proc_cpu_s,
	       days > 0 ? sp->proc_cpu_s / days : 0, n_runs, sp->peak_mb);
	for (size_t k = 0; k < n_runs; k++)
		printf("  %-14s %8.2f s CPU %10.1f days/s %8.3f M events/s\n", runs[k].name,
		       runs[k].cpu_s, runs[k].cpu_s > 0 ? days / runs[k].cpu_s : 0,
		       runs[k].cpu_s > 0 ? (double)runs[k].res.events / runs[k].cpu_s / 1e6 : 0);
}

/* ",V" with DECIMALS digits, or "," alone when V is not a finite number. */
static void csv_num(double v, int decimals)
{
	if (isnan(v) || isinf(v))
		fputs(",", stdout);
	else
		printf(",%.*f", decimals, v);
}

static void print_csv(const char *trace_name, const struct row *rows, size_t n_rows)
{
	printf("trace,policy,energy_kwh,saved_pct,idle_kwh,transition_kwh,cycles_mean,"
	       "cycles_max,wait_mean_s,wait_p95_s,wait_max_s,wait_delta_pct,captured,on_front,"
	       "dominated_by\n");
	for (size_t k = 0; k < n_rows; k++) {
		const struct row *w = &rows[k];
		/* names are ours (no commas or quotes); the trace name is quoted */
		putchar('"');
		for (const char *p = trace_name; *p; p++) {
			if (*p == '"')
				putchar('"');
			putchar(*p);
		}
		printf("\",%s", w->name);
		csv_num(kwh(w->energy_j), 3);
		csv_num(w->saved_pct, 3);
		csv_num(kwh(w->idle_j), 3);
		csv_num(kwh(w->transition_j), 3);
		csv_num(w->has_cycles ? w->cycles_mean : NAN, 3);
		csv_num(w->has_cycles ? w->cycles_max : NAN, 0);
		csv_num(w->wait_mean, 1);
		csv_num(w->wait_p95, 1);
		csv_num(w->wait_max, 1);
		csv_num(w->wait_delta_pct, 3);
		csv_num(w->captured, 4);
		printf(",%s,%s\n", w->res ? (w->on_front ? "yes" : "no") : "",
		       w->dominated_by ? w->dominated_by : "");
	}
}

static json_t *json_num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static int print_json(const char *trace_name, const struct mxq_sim_trace *trace,
		      const struct mxq_sim_cluster *cluster, const struct mxq_sim_class *classes,
		      size_t n_classes, const struct mxq_power_config *cfg, const struct options *o,
		      const struct row *rows, size_t n_rows, const struct run *runs, size_t n_runs,
		      const struct speed *sp)
{
	const struct mxq_sim_workload_stats *st = mxq_sim_cluster_stats(cluster);
	json_t *doc = json_object(), *jt = json_object(), *jc = json_array(),
	       *jp = json_array(), *js = json_object();
	char *cfg_text = mxq_power_config_dump(cfg);
	int r = 0;

	if (!doc || !jt || !jc || !jp || !js || !cfg_text) {
		json_decref(doc);
		json_decref(jt);
		json_decref(jc);
		json_decref(jp);
		json_decref(js);
		free(cfg_text);
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	json_object_set_new(jt, "file", json_string(trace_name));
	json_object_set_new(jt, "jobs_in_trace", json_integer((json_int_t)st->trace_jobs));
	json_object_set_new(jt, "jobs_simulated", json_integer((json_int_t)st->jobs));
	json_object_set_new(jt, "skipped_runtime", json_integer((json_int_t)trace->skipped_runtime));
	json_object_set_new(jt, "skipped_procs", json_integer((json_int_t)trace->skipped_procs));
	json_object_set_new(jt, "unrunnable", json_integer((json_int_t)st->unrunnable));
	json_object_set_new(jt, "gang_jobs", json_integer((json_int_t)st->wide));
	json_object_set_new(jt, "clamped_procs", json_integer((json_int_t)st->clamped_procs));
	json_object_set_new(jt, "clamped_memory", json_integer((json_int_t)st->clamped_memory));
	json_object_set_new(jt, "split_jobs", json_integer((json_int_t)st->split));
	json_object_set_new(jt, "cut_to_requested_time", json_integer((json_int_t)st->cut_to_limit));
	json_object_set_new(jt, "keep_overruns", json_boolean(o->keep_overruns));
	json_object_set_new(jt, "signatures", json_integer((json_int_t)st->signatures));
	json_object_set_new(jt, "max_nodes", json_integer(trace->max_nodes));
	json_object_set_new(jt, "max_procs", json_integer(trace->max_procs));
	json_object_set_new(jt, "start", json_integer(runs[0].res.start));
	json_object_set_new(jt, "end", json_integer(runs[0].res.end));
	json_object_set_new(jt, "days", json_real((double)(runs[0].res.end - runs[0].res.start) /
						  86400.0));
	json_object_set_new(jt, "skip_days", json_real(o->skip_days));
	json_object_set_new(jt, "window_days", json_real(o->days));
	json_object_set_new(jt, "scale", json_real(o->scale));
	json_object_set_new(jt, "wide", json_string(mxq_sim_wide_to_string(o->wide)));
	json_object_set_new(jt, "expected_end", json_string(o->expect_actual ? "actual" :
							    "requested"));
	json_object_set_new(doc, "trace", jt);
	for (size_t i = 0; i < n_classes; i++) {
		const struct mxq_sim_class *k = &classes[i];
		json_t *jk = json_object();
		if (!jk) {
			r = -ENOMEM;
			break;
		}
		json_object_set_new(jk, "name", json_string(k->name));
		json_object_set_new(jk, "count", json_integer(k->count));
		json_object_set_new(jk, "cores", json_integer(k->cores));
		json_object_set_new(jk, "memory_mib", json_integer((json_int_t)k->memory_mib));
		json_object_set_new(jk, "maxtime_min", json_integer((json_int_t)k->maxtime_min));
		json_object_set_new(jk, "tags", json_string(k->tags));
		json_object_set_new(jk, "rank", json_integer(k->rank));
		json_object_set_new(jk, "idle_watts", json_real(k->idle_w));
		json_object_set_new(jk, "busy_watts", json_real(k->busy_w));
		json_object_set_new(jk, "off_watts", json_real(k->off_w));
		json_object_set_new(jk, "boot_s", json_integer(k->boot_s));
		json_object_set_new(jk, "boot_energy_j", json_real(k->boot_j));
		json_object_set_new(jk, "shutdown_s", json_integer(k->shutdown_s));
		json_object_set_new(jk, "shutdown_energy_j", json_real(k->shutdown_j));
		json_array_append_new(jc, jk);
	}
	json_object_set_new(doc, "classes", jc);
	json_object_set_new(doc, "power_config", json_string(cfg_text));
	json_object_set_new(doc, "tick_s", json_integer(o->tick_s));
	json_object_set_new(doc, "poll_s", json_integer(o->poll_s));
	json_object_set_new(doc, "timeout_scan_s", json_integer(o->scan_s));
	for (size_t k = 0; k < n_rows && r == 0; k++) {
		const struct row *w = &rows[k];
		json_t *jr = json_object();
		if (!jr) {
			r = -ENOMEM;
			break;
		}
		json_object_set_new(jr, "policy", json_string(w->name));
		json_object_set_new(jr, "energy_kwh", json_num(kwh(w->energy_j)));
		json_object_set_new(jr, "saved_pct", json_num(w->saved_pct));
		json_object_set_new(jr, "idle_kwh", json_num(kwh(w->idle_j)));
		json_object_set_new(jr, "transition_kwh", json_num(kwh(w->transition_j)));
		if (w->res) {
			json_object_set_new(jr, "busy_kwh", json_num(kwh(w->res->busy_j)));
			json_object_set_new(jr, "off_kwh", json_num(kwh(w->res->off_j)));
			json_object_set_new(jr, "boots", json_integer((json_int_t)w->res->boots));
			json_object_set_new(jr, "events", json_integer((json_int_t)w->res->events));
		}
		json_object_set_new(jr, "cycles_mean", w->has_cycles ? json_real(w->cycles_mean) :
							 json_null());
		json_object_set_new(jr, "cycles_max", w->has_cycles ? json_integer(w->cycles_max) :
							json_null());
		json_object_set_new(jr, "wait_mean_s", json_num(w->wait_mean));
		json_object_set_new(jr, "wait_p95_s", json_num(w->wait_p95));
		json_object_set_new(jr, "wait_max_s", json_num(w->wait_max));
		json_object_set_new(jr, "wait_delta_pct", json_num(w->wait_delta_pct));
		json_object_set_new(jr, "saving_captured", json_num(w->captured));
		if (w->res) {
			json_object_set_new(jr, "on_front", json_boolean(w->on_front));
			json_object_set_new(jr, "dominated_by", w->dominated_by ?
					    json_string(w->dominated_by) : json_null());
		}
		for (size_t q = 0; q < n_runs; q++) {
			if (w->res != &runs[q].res)
				continue;
			json_object_set_new(jr, "cpu_s", json_real(runs[q].cpu_s));
			if (runs[q].params.policy == MXQ_SIM_TIMEOUT)
				json_object_set_new(jr, "timeout_s",
						    json_integer(runs[q].params.timeout_s));
			if (runs[q].params.policy == MXQ_SIM_POLICY) {
				json_t *ja = json_object();
				for (int a = 0; a < _MXQ_POWER_ACTION_MAX; a++)
					json_object_set_new(ja, mxq_power_action_to_string(a),
						json_integer((json_int_t)w->res->actions[a]));
				json_object_set_new(jr, "actions", ja);
				json_object_set_new(jr, "decisions",
						    json_integer((json_int_t)w->res->ticks));
				json_object_set_new(jr, "poll_decisions",
						    json_integer((json_int_t)w->res->polls));
				json_object_set_new(jr, "quiet_ticks_skipped",
						    json_integer((json_int_t)w->res->ticks_skipped));
				json_object_set_new(jr, "actions_rejected",
						    json_integer((json_int_t)w->res->policy_errors));
			}
		}
		json_array_append_new(jp, jr);
	}
	json_object_set_new(doc, "policies", jp);
	json_object_set_new(js, "simulations", json_integer((json_int_t)n_runs));
	json_object_set_new(js, "simulated_days", json_real(sp->sim_days));
	json_object_set_new(js, "cpu_s", json_real(sp->sim_s));
	json_object_set_new(js, "wall_s", json_real(sp->wall_s));
	json_object_set_new(js, "process_cpu_s", json_real(sp->proc_cpu_s));
	json_object_set_new(js, "peak_memory_mb", json_real(sp->peak_mb));
	json_object_set_new(js, "days_per_s", json_real(sp->sim_s > 0 ? sp->sim_days / sp->sim_s : 0));
	json_object_set_new(js, "events_per_s", json_real(sp->sim_s > 0 ?
							  (double)sp->events / sp->sim_s : 0));
	json_object_set_new(doc, "speed", js);
	if (r == 0)
		r = mxq_json_print(doc);
	else
		json_decref(doc);
	if (r < 0)
		mxq_complain("could not write the JSON document");
	free(cfg_text);
	return r;
}

/* One panel per simulated policy: busy nodes as a grey area, powered nodes as
 * a line, time in days on the x axis. */
/*
 * The energy / mean-wait plane: every simulated policy a dot, the fixed
 * timeouts of the sweep joined by a line (their front), the lower bound
 * as a dashed line. Below the time-series panels, starting at Y0.
 */
static void svg_front(FILE *f, const struct row *rows, size_t n_rows, double y0, double left,
		      double plot_w, double plot_h)
{
	double e_min = INFINITY, e_max = -INFINITY, w_min = INFINITY, w_max = -INFINITY;

	for (size_t k = 0; k < n_rows; k++) {
		if (rows[k].energy_j < e_min)
			e_min = rows[k].energy_j;
		if (rows[k].energy_j > e_max)
			e_max = rows[k].energy_j;
		if (rows[k].res && rows[k].wait_mean > w_max)
			w_max = rows[k].wait_mean;
		if (rows[k].res && rows[k].wait_mean < w_min)
			w_min = rows[k].wait_mean;
	}
	if (!(w_max > w_min))
		w_max = w_min + 1.0;
	if (!(e_max > e_min))
		e_max = e_min + 1.0;
	double e_pad = (e_max - e_min) * 0.05;
	e_min -= e_pad;
	e_max += e_pad;
	double w_pad = (w_max - w_min) * 0.05;
	w_min -= w_pad;
	w_max += w_pad * 3;          /* room for the labels */
#define SVG_X(w) (left + plot_w * ((w) - w_min) / (w_max - w_min))
#define SVG_Y(e) (y0 + plot_h - plot_h * ((e) - e_min) / (e_max - e_min))
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">energy (kWh) against mean "
		"wait (s): fixed timeouts joined, their front is what the best one in hindsight "
		"reaches</text>\n", left, y0 - 6);
	fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
		"stroke=\"#888\"/>\n", left, y0, plot_w, plot_h);
	fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f</text>\n"
		"<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f</text>\n"
		"<text x=\"%.0f\" y=\"%.0f\">%.0f s</text>\n"
		"<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f s</text>\n",
		left - 4, y0 + 10, kwh(e_max), left - 4, y0 + plot_h, kwh(e_min), left,
		y0 + plot_h + 14, w_min, left + plot_w, y0 + plot_h + 14, w_max);
	fputs("<polyline fill=\"none\" stroke=\"#36c\" points=\"", f);
	for (size_t k = 0; k < n_rows; k++)
		if (rows[k].timeout)
			fprintf(f, " %.1f,%.1f", SVG_X(rows[k].wait_mean), SVG_Y(rows[k].energy_j));
	fputs("\"/>\n", f);
	for (size_t k = 0; k < n_rows; k++) {
		const struct row *w = &rows[k];
		if (!w->res) {
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				"stroke=\"#393\" stroke-dasharray=\"4 3\"/>\n<text x=\"%.1f\" "
				"y=\"%.1f\" fill=\"#393\">%s</text>\n", left, SVG_Y(w->energy_j),
				left + plot_w, SVG_Y(w->energy_j), left + 4, SVG_Y(w->energy_j) - 3,
				w->name);
			continue;
		}
		const char *color = w->timeout ? "#36c" : "#c03";
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n"
			"<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"10\">%s</text>\n",
			SVG_X(w->wait_mean), SVG_Y(w->energy_j), color, SVG_X(w->wait_mean) + 5,
			SVG_Y(w->energy_j) - 4, color, w->name);
	}
#undef SVG_X
#undef SVG_Y
}

static int write_svg(const char *path, const char *trace_name, const struct run *runs,
		     size_t n_runs, size_t n_nodes, int64_t step, const struct row *rows,
		     size_t n_rows)
{
	const double w = 960, ph = 170, left = 60, right = 20, top = 40, gap = 40;
	double plot_w = w - left - right, plot_h = ph - 30;
	FILE *f = fopen(path, "w");
	size_t max_n = 0;

	if (!f) {
		mxq_complain("%s: %s", path, strerror(errno));
		return -errno;
	}
	for (size_t k = 0; k < n_runs; k++) {
		const double *p, *b;
		size_t n = mxq_sim_series(runs[k].sim, &p, &b);
		if (n > max_n)
			max_n = n;
	}
	double days = (double)max_n * (double)step / 86400.0;
	double height = top + (double)(n_runs + 2) * (ph + gap);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, height, w, height);
	fputs("<text x=\"10\" y=\"20\" font-size=\"15\">", f);
	for (const char *p = trace_name; *p; p++) {
		if (*p == '<')
			fputs("&lt;", f);
		else if (*p == '&')
			fputs("&amp;", f);
		else if (*p == '>')
			fputs("&gt;", f);
		else
			fputc(*p, f);
	}
	fprintf(f, ": powered-on nodes (line) and busy nodes (grey) of %zu, over %.1f days"
		"</text>\n", n_nodes, days);
	for (size_t k = 0; k < n_runs; k++) {
		const double *pw, *bz;
		size_t n = mxq_sim_series(runs[k].sim, &pw, &bz);
		double y0 = top + (double)k * (ph + gap) + 20;
		size_t stride = n > SVG_POINTS ? (n + SVG_POINTS - 1) / SVG_POINTS : 1;

		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">%s</text>\n", left,
			y0 - 6, runs[k].name);
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
			"stroke=\"#888\"/>\n", left, y0, plot_w, plot_h);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%zu</text>\n"
			"<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0</text>\n",
			left - 4, y0 + 10, n_nodes, left - 4, y0 + plot_h);
		for (int t = 0; t <= 4; t++)
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.1f d</text>\n",
				left + plot_w * t / 4, y0 + plot_h + 14, days * t / 4);
		if (n == 0 || max_n == 0)
			continue;
		/* averaged over STRIDE buckets so that the file stays small */
		for (int pass = 0; pass < 2; pass++) {
			const double *v = pass == 0 ? bz : pw;
			if (pass == 0)
				fprintf(f, "<polygon fill=\"#bbb\" stroke=\"none\" points=\"%.1f,%.1f",
					left, y0 + plot_h);
			else
				fputs("<polyline fill=\"none\" stroke=\"#c03\" stroke-width=\"1\" points=\"",
				      f);
			for (size_t i = 0; i < n; i += stride) {
				double sum = 0;
				size_t m = 0;
				for (size_t j = i; j < n && j < i + stride; j++, m++)
					sum += v[j];
				double x = left + plot_w * (double)(i + m / 2.0) / (double)max_n;
				double y = y0 + plot_h - plot_h * (sum / (double)m) / (double)n_nodes;
				fprintf(f, " %.1f,%.1f", x, y);
			}
			if (pass == 0)
				fprintf(f, " %.1f,%.1f\"/>\n", left + plot_w * (double)n / (double)max_n,
					y0 + plot_h);
			else
				fputs("\"/>\n", f);
		}
	}
	svg_front(f, rows, n_rows, top + (double)n_runs * (ph + gap) + 20, left, plot_w,
		  2 * ph - 30);
	fputs("</svg>\n", f);
	if (fclose(f) != 0) {
		mxq_complain("%s: %s", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * main
 */

int main(int argc, char **argv)
{
	struct options o = {
		.timeouts = { 60, 120, 300, 600, 1200, 1800, 3600 }, .n_timeouts = 7, .tick_s = 10, .poll_s = 1, .scan_s = 1, .scale = 1.0,
		.wide = MXQ_SIM_WIDE_GANG,
	};
	struct mxq_sim_trace trace;
	struct mxq_power_config cfg;
	struct cfg_given cfg_given;
	struct mxq_sim_class classes[MAX_CLASSES];
	struct mxq_sim_workload_opts wopts;
	struct mxq_sim_cluster *cluster = NULL;
	struct run runs[MAX_RUNS];
	struct row rows[MAX_RUNS + 1];
	size_t n_classes = 0, n_runs = 0, n_rows = 0;
	struct speed sp = { 0 };
	double t_start = now_s();
	char err[512];
	int r, rc = MXQ_EXIT_USAGE;

	mxq_client_set_program(PROG);
	mxq_sim_class_defaults(&o.base);
	mxq_sim_trace_init(&trace);
	mxq_power_config_defaults(&cfg);
	memset(runs, 0, sizeof(runs));

	r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? 0 : MXQ_EXIT_USAGE;
	if (load_power_config(o.power_config_path, &cfg, &cfg_given) < 0)
		goto out;
	if (read_trace(o.trace_path, &trace) < 0)
		goto out;
	if (build_classes(&o, &trace, classes, &n_classes) < 0)
		goto out;
	calibrate_policy(&cfg, &cfg_given, classes, n_classes);

	mxq_sim_workload_opts_defaults(&wopts);
	wopts.skip_s = (int64_t)llround(o.skip_days * 86400.0);
	wopts.window_s = (int64_t)llround(o.days * 86400.0);
	wopts.wide = o.wide;
	wopts.expect_actual = o.expect_actual;
	wopts.keep_overruns = o.keep_overruns;
	if (o.scale_auto) {
		double cores = 0;
		for (size_t i = 0; i < n_classes; i++)
			cores += (double)classes[i].count * classes[i].cores;
		double procs = trace.max_procs ? trace.max_procs : trace.max_nodes;
		if (!(procs > 0)) {
			mxq_complain("--scale auto: the trace header gives neither MaxProcs nor MaxNodes");
			goto out;
		}
		o.scale = cores / procs;
		if (o.scale < 0.001 || o.scale > 1000) {
			mxq_complain("--scale auto: factor %g out of range", o.scale);
			goto out;
		}
	}
	wopts.scale = o.scale;
	r = mxq_sim_cluster_new(&trace, classes, n_classes, &wopts, &cluster, err, sizeof(err));
	if (r < 0) {
		mxq_complain("%s", r == -EINVAL ? err : strerror(-r));
		goto out;
	}
	mxq_sim_trace_drop_jobs(&trace);
	if (mxq_sim_cluster_stats(cluster)->jobs == 0) {
		mxq_complain("%s: no job to simulate in the window (%" PRIu64 " fit no node): "
			     "change --days/--skip-days or the cluster", o.trace_path,
			     mxq_sim_cluster_stats(cluster)->unrunnable);
		goto out;
	}

	/* warn about settings that make our policy look worse than it is */
	for (size_t i = 0; i < n_classes; i++) {
		if (classes[i].boot_s + o.tick_s >= cfg.boot_deadline_s)
			mxq_complain("warning: class %s boots in %" PRId64 " s, the policy's boot deadline "
				 "is %" PRId64 " s: boots will be marked FAILED", classes[i].name,
				 classes[i].boot_s, cfg.boot_deadline_s);
		if (classes[i].shutdown_s + o.tick_s >= cfg.shutdown_deadline_s)
			mxq_complain("warning: class %s shuts down in %" PRId64 " s, the policy's shutdown "
				 "deadline is %" PRId64 " s", classes[i].name, classes[i].shutdown_s,
				 cfg.shutdown_deadline_s);
	}

	int64_t span = mxq_sim_cluster_last_submit(cluster) - mxq_sim_cluster_start(cluster);
	int64_t step = o.svg_path ? (span + 86400) / SVG_POINTS + 1 : 0;
	if (o.svg_path && step < 60)
		step = 60;
	runs[n_runs++] = (struct run) {
		.name = "always-on",
		.params = { .policy = MXQ_SIM_ALWAYS_ON, .series_step_s = step },
	};
	for (size_t k = 0; k < o.n_timeouts; k++) {
		struct run *run = &runs[n_runs++];
		char d[24];
		if (o.timeouts[k] % 3600 == 0 && o.timeouts[k])
			snprintf(d, sizeof(d), "%" PRId64 "h", o.timeouts[k] / 3600);
		else if (o.timeouts[k] % 60 == 0 && o.timeouts[k])
			snprintf(d, sizeof(d), "%" PRId64 "m", o.timeouts[k] / 60);
		else
			snprintf(d, sizeof(d), "%" PRId64 "s", o.timeouts[k]);
		*run = (struct run) {
			.params = { .policy = MXQ_SIM_TIMEOUT, .timeout_s = o.timeouts[k],
				    .scan_s = o.scan_s, .series_step_s = step },
		};
		snprintf(run->name, sizeof(run->name), "timeout-%s", d);
	}
	runs[n_runs++] = (struct run) {
		.name = "mxq-policy",
		.params = { .policy = MXQ_SIM_POLICY, .cfg = &cfg, .tick_s = o.tick_s,
			    .poll_s = o.poll_s,
			    .series_step_s = step, .every_tick = o.every_tick },
	};
	for (size_t k = 0; k < n_runs; k++)
		runs[k].cluster = cluster;

	unsigned n_threads = o.threads;
	if (!n_threads) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		n_threads = cpus > 0 ? (unsigned)cpus : 1;
	}
	run_all(runs, n_runs, n_threads);
	int64_t end = mxq_sim_cluster_start(cluster);
	for (size_t k = 0; k < n_runs; k++) {
		if (runs[k].rc < 0) {
			mxq_complain("%s: %s", runs[k].name, sim_error(runs[k].rc));
			rc = 1;
			goto out;
		}
		if (mxq_sim_done_at(runs[k].sim) > end)
			end = mxq_sim_done_at(runs[k].sim);
	}
	/* every policy is charged over the same time: up to the last job of the slowest */
	for (size_t k = 0; k < n_runs; k++) {
		double t0 = cpu_s();
		r = mxq_sim_close(runs[k].sim, end);
		runs[k].cpu_s += cpu_s() - t0;
		if (r < 0) {
			mxq_complain("%s: %s", runs[k].name, sim_error(r));
			rc = 1;
			goto out;
		}
		mxq_sim_get_result(runs[k].sim, &runs[k].res);
		if (runs[k].res.policy_errors)
			mxq_complain("warning: %s: %" PRIu64 " planned actions did not match the node's "
				 "state and were not carried out", runs[k].name,
				 runs[k].res.policy_errors);
		if (runs[k].res.actions[MXQ_POWER_ACTION_MARK_FAILED])
			mxq_complain("warning: %s: %" PRIu64 " nodes were marked FAILED", runs[k].name,
				 runs[k].res.actions[MXQ_POWER_ACTION_MARK_FAILED]);
		sp.sim_s += runs[k].cpu_s;
		sp.sim_days += (double)(end - runs[k].res.start) / 86400.0;
		sp.events += runs[k].res.events;
	}
	sp.wall_s = now_s() - t_start;
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		sp.proc_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		sp.peak_mb = (double)ru.ru_maxrss / 1024.0;
	}

	make_rows(runs, n_runs, mxq_sim_cluster_nodes(cluster), rows, &n_rows);
	const char *trace_name = strrchr(o.trace_path, '/') ? strrchr(o.trace_path, '/') + 1 :
				 o.trace_path;
	rc = 0;
	if (o.format == OUT_TABLE) {
		print_table(trace_name, &trace, cluster, classes, n_classes, &o, rows, n_rows, runs,
			    n_runs, &sp);
	} else if (o.format == OUT_CSV) {
		print_csv(trace_name, rows, n_rows);
		fprintf(stderr, PROG ": speed: %.1f simulated days/s, %.3f M events/s (CPU)\n",
			sp.sim_s > 0 ? sp.sim_days / sp.sim_s : 0,
			sp.sim_s > 0 ? (double)sp.events / sp.sim_s / 1e6 : 0);
	} else if (print_json(trace_name, &trace, cluster, classes, n_classes, &cfg, &o, rows,
			      n_rows, runs, n_runs, &sp) < 0) {
		rc = 1;
	}
	if (o.svg_path && write_svg(o.svg_path, trace_name, runs, n_runs,
				    mxq_sim_cluster_nodes(cluster), step, rows, n_rows) < 0)
		rc = 1;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		mxq_complain("writing the output failed");
		rc = 1;
	}
out:
	for (size_t k = 0; k < n_runs; k++)
		mxq_sim_free(runs[k].sim);
	mxq_sim_cluster_free(cluster);
	mxq_sim_trace_done(&trace);
	mxq_power_config_done(&cfg);
	return rc;
}
