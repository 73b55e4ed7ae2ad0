/*
 * mxq_sim - trace-replay simulation of a cluster under a power policy
 * (DESIGN §7): the library part of mxq-power-sim, kept apart from the
 * command line and the output formats so that test_sim can drive it on
 * hand-made traces.
 *
 * Four pieces, each built on the one before:
 *   trace    jobs read from Standard Workload Format text (header and lines);
 *   class    a node class of the modelled cluster (cores, memory, watts,
 *            boot and shutdown time and energy);
 *   cluster  the nodes of all classes plus the workload translated into
 *            MXQ terms (slots, memory, requirement signatures), read only
 *            and shared by every simulation of one run;
 *   sim      one discrete-event replay of the workload under one power
 *            policy (always-on, a fixed idle timeout, or the real
 *            mxq_power_decide()) with a virtual clock, energy accounting and
 *            job waits.
 *
 * Times are seconds on the trace's clock shifted to Unix time (the header's
 * UnixStartTime, 0 when absent), so that "boots today" in the policy counts
 * real days. Energies are joules, powers watts.
 *
 * Nothing here logs or reads a clock; errors are negative errno values and,
 * for parsers, one line of text in the caller's buffer.
 */
#ifndef MXQ_SIM_H
#define MXQ_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxq_power_policy.h"

/* ------------------------------------------------------------------------
 * Trace
 */

/* One SWF job as read (times in seconds relative to the trace start). */
struct mxq_sim_trace_job {
	int64_t number;              /* field 1 */
	int64_t submit;              /* field 2 */
	int64_t run;                 /* field 4, > 0 */
	int64_t req_time;            /* field 9, -1 = unknown */
	uint32_t procs;              /* field 5, or field 8 when 5 is unknown; > 0 */
	int64_t mem_kib_per_proc;    /* field 10, else field 7; -1 = unknown */
};

struct mxq_sim_trace {
	struct mxq_sim_trace_job *jobs; /* sorted by submit time after _finish() */
	size_t n_jobs;
	size_t cap;
	uint32_t max_nodes;          /* header MaxNodes, 0 = not given */
	uint32_t max_procs;          /* header MaxProcs, 0 = not given */
	int64_t unix_start;          /* header UnixStartTime, 0 = not given */
	uint64_t lines;              /* job lines read (blank and ';' lines not counted) */
	uint64_t skipped_runtime;    /* job lines with run time <= 0 */
	uint64_t skipped_procs;      /* job lines with processors <= 0 (fields 5 and 8) */
	uint64_t extra_fields;       /* job lines with more than 18 fields (the rest ignored) */
};

/* Empty trace. */
void mxq_sim_trace_init(struct mxq_sim_trace *trace);
/* Free the jobs; the trace is empty again. NULL is fine. */
void mxq_sim_trace_done(struct mxq_sim_trace *trace);
/* Free the jobs once a cluster was made of them (mxq_sim_cluster_new()
 * copies what it needs); the header and the counts stay, n_jobs too.
 * Adding lines or making a cluster of the trace then fails (-EINVAL). */
void mxq_sim_trace_drop_jobs(struct mxq_sim_trace *trace);

/*
 * Take one line (without or with its newline): a ';' header line (MaxNodes,
 * MaxProcs and UnixStartTime are kept, the rest ignored), a blank line
 * (ignored), or a job line of 18 numeric fields (more are counted in
 * extra_fields and ignored). Jobs without run time or
 * processors are counted and skipped. Returns 0, -EINVAL for a malformed
 * line (message in errbuf, without position), -ENOMEM.
 */
int mxq_sim_trace_add_line(struct mxq_sim_trace *trace, const char *line,
			   char *errbuf, size_t errlen);

/*
 * Every line of TEXT, then _finish(). Messages are "NAME:LINE: ...".
 * Stops at the first bad line. 0, -EINVAL or -ENOMEM.
 */
int mxq_sim_trace_parse(struct mxq_sim_trace *trace, const char *text, const char *name,
			char *errbuf, size_t errlen);

/*
 * Read the file PATH (plain or gzip-compressed) line by line, then
 * _finish(); with MAX_JOBS > 0 stop after that many jobs (a quick sample
 * of the trace's start). 0; -EINVAL for a bad line ("PATH:LINE: ..." in
 * errbuf); -EIO when the file cannot be read ("PATH: ..."); -ENOMEM.
 */
int mxq_sim_trace_read(struct mxq_sim_trace *trace, const char *path, uint64_t max_jobs,
		       char *errbuf, size_t errlen);

/* Sort the jobs by submit time (then job number). Call once after the last
 * line. */
void mxq_sim_trace_finish(struct mxq_sim_trace *trace);

/* ------------------------------------------------------------------------
 * Node classes
 */

#define MXQ_SIM_TAGS_MAX 256

struct mxq_sim_class {
	char name[MXQ_POWER_CLASS_NAME_MAX]; /* also the policy's node class */
	uint32_t count;              /* nodes of this class */
	uint32_t cores;              /* slots per node, >= 1 */
	uint64_t memory_mib;         /* per node; 0 = memory not modelled */
	uint64_t maxtime_min;        /* longest job a node accepts; 0 = unlimited */
	char tags[MXQ_SIM_TAGS_MAX]; /* words separated by blanks */
	int32_t rank;                /* efficiency rank: lower is woken first */
	double idle_w;               /* ON, no job */
	double busy_w;               /* ON, every slot busy (linear in between) */
	double off_w;                /* powered off (BMC, standby) */
	int64_t boot_s;              /* wake to mxqd registered */
	double boot_j;               /* energy of one boot, spread over boot_s */
	int64_t shutdown_s;          /* power-off command to power off */
	double shutdown_j;           /* energy of one shutdown, spread over shutdown_s */
};

/* name "node", count 0, 1 core, memory and maxtime not modelled, no tags,
 * rank 0, 100 W idle, 250 W busy, 5 W off, boot 3 min / 30 kJ, shutdown
 * 1 min / 3 kJ (the boot and idle figures match the policy's defaults). */
void mxq_sim_class_defaults(struct mxq_sim_class *cls);

/*
 * Apply SPEC, "KEY=VALUE[,KEY=VALUE...]", on top of *cls. Keys: name,
 * count, cores, memory (size, bare = MiB), maxtime (duration, bare =
 * minutes), tags (words joined by '+'), rank, idle, busy, off (watts),
 * boot, shutdown (durations, bare = seconds), boot-energy, shutdown-energy
 * (joules). 0, or -EINVAL with one line in errbuf; *cls is untouched then.
 */
int mxq_sim_class_parse(struct mxq_sim_class *cls, const char *spec, char *errbuf, size_t errlen);

/* Durations as used on the command line: mx_parse_duration_s() ("90",
 * "3m", "1h30m"; a bare number is seconds), at most INT64_MAX / 2.
 * 0 or -EINVAL/-ERANGE. */
int mxq_sim_parse_duration(const char *s, int64_t *ret_s);

/* Cost, in joules, of one idle gap of GAP seconds on a node of CLS when the
 * future is known: the cheaper of staying on and powering off for it
 * (shutdown + off + boot; at the end of the run no boot is needed, TRAILING).
 * (ski rental with the future known). */
double mxq_sim_gap_cost(const struct mxq_sim_class *cls, int64_t gap, bool trailing);

/* Nearest-rank percentile P (0 < P <= 100) of V[0..n); sorts V in place.
 * 0 for n == 0. */
double mxq_sim_percentile(double *v, size_t n, double p);

/* ------------------------------------------------------------------------
 * Cluster: nodes + workload
 */

/* How a job asking more processors than the largest node has cores runs. */
enum mxq_sim_wide {
	MXQ_SIM_WIDE_GANG = 0,       /* whole nodes, all started together */
	MXQ_SIM_WIDE_CLAMP,          /* squeezed onto one node of the largest size */
	MXQ_SIM_WIDE_SPLIT,          /* independent jobs of the largest node's size, one
	                                per gang part, started whenever each fits (MXQ
	                                has no gang jobs: its users submit such work as
	                                many single-node jobs) */
	_MXQ_SIM_WIDE_MAX,
};
/* "gang", "clamp", "split"; NULL out of range / -EINVAL for other names. */
const char *mxq_sim_wide_to_string(enum mxq_sim_wide wide);
int mxq_sim_wide_from_string(const char *name);

struct mxq_sim_workload_opts {
	bool has_start;              /* start of the window: START, else the first submit */
	int64_t start;               /* trace seconds (before the Unix shift) */
	int64_t skip_s;              /* window begins this long after its start */
	int64_t window_s;            /* window length; 0 = to the end of the trace */
	double scale;                /* > 0: superimpose this many time-shifted copies
	                                of the trace (fractions keep a share of the
	                                jobs of the last copy); 1 = as is */
	enum mxq_sim_wide wide;
	bool expect_actual;          /* expected end = start + actual run time
	                                (default: + requested time, as mxqd knows it) */
	bool keep_overruns;          /* run jobs for their full recorded time even past
	                                their requested time (default: ended at the
	                                requested time, as mxqd enforces job_time) */
};

/* Window from the first submit to the end, scale 1, gang, requested times. */
void mxq_sim_workload_opts_defaults(struct mxq_sim_workload_opts *opts);

/* Counts of what the translation did, for the report. */
struct mxq_sim_workload_stats {
	uint64_t trace_jobs;         /* jobs of the trace (after its own skips) */
	uint64_t jobs;               /* jobs in the window, after scaling */
	uint64_t wide;               /* jobs needing more than one node (gang) */
	uint64_t clamped_procs;      /* processors cut to what the cluster has */
	uint64_t clamped_memory;     /* memory cut to the largest node's */
	uint64_t split;              /* wide jobs split into single-node jobs (split) */
	uint64_t cut_to_limit;       /* run time cut to the requested time */
	uint64_t unrunnable;         /* no node qualifies at all: left out */
	uint64_t signatures;         /* distinct requirement signatures */
	uint64_t busy_core_seconds;  /* sum of slots x run time of the jobs kept */
};

struct mxq_sim_cluster;

/*
 * Build the nodes of CLASSES (each class's nodes are named CLASS-NNNN and
 * ordered as the policy orders them: by rank, then name) and translate
 * TRACE's jobs. Memory is
 * modelled when any class has memory. Returns 0 and *ret_cluster, -EINVAL
 * (bad classes: message in errbuf) or -ENOMEM.
 */
int mxq_sim_cluster_new(const struct mxq_sim_trace *trace, const struct mxq_sim_class *classes,
			size_t n_classes, const struct mxq_sim_workload_opts *opts,
			struct mxq_sim_cluster **ret_cluster, char *errbuf, size_t errlen);
/* NULL is fine. */
void mxq_sim_cluster_free(struct mxq_sim_cluster *cluster);

const struct mxq_sim_workload_stats *mxq_sim_cluster_stats(const struct mxq_sim_cluster *cluster);
size_t mxq_sim_cluster_nodes(const struct mxq_sim_cluster *cluster);
/*
 * The honest lower bound, in joules, on the energy of any schedule of the
 * cluster's jobs between the window start and END (>= every job's end):
 * every node draws at least its floor (the least of its off, idle, boot
 * and shutdown draw) all the time; a node is ON while any of its slots is
 * used, so the core-seconds (and, when every class has memory, the
 * MiB-seconds) of the jobs need at least that much ON time, bought at the
 * cheapest (idle - floor) per core (per MiB) of the classes; each job's
 * slots add their own draw ((busy - idle) / cores) on the cheapest class
 * that qualifies. No policy, schedule or packing can use less: waits,
 * boots and shutdowns only add.
 */
double mxq_sim_lower_bound(const struct mxq_sim_cluster *cluster, int64_t end);

/* Window start and last submit, on the simulation clock. */
int64_t mxq_sim_cluster_start(const struct mxq_sim_cluster *cluster);
int64_t mxq_sim_cluster_last_submit(const struct mxq_sim_cluster *cluster);

/* ------------------------------------------------------------------------
 * Simulation
 */

enum mxq_sim_policy {
	MXQ_SIM_ALWAYS_ON = 0,       /* every node stays on */
	MXQ_SIM_TIMEOUT,             /* off after a fixed idle time, woken for a waiting job */
	MXQ_SIM_POLICY,              /* mxq_power_decide() every tick */
	_MXQ_SIM_POLICY_MAX,
};
/* "always-on", "timeout", "policy". */
const char *mxq_sim_policy_to_string(enum mxq_sim_policy policy);

struct mxq_sim_params {
	enum mxq_sim_policy policy;
	int64_t timeout_s;           /* MXQ_SIM_TIMEOUT: idle time before power-off */
	const struct mxq_power_config *cfg; /* MXQ_SIM_POLICY (borrowed) */
	int64_t tick_s;              /* MXQ_SIM_POLICY: seconds between decisions */
	int64_t poll_s;              /* MXQ_SIM_POLICY: a job submitted that cannot start
	                                at once is decided on this long after its submit,
	                                when no tick comes sooner (mxqd --power-poll);
	                                0 = at ticks only */
	int64_t scan_s;              /* MXQ_SIM_TIMEOUT: a job that cannot start wakes
	                                nodes this long after its submit (Slurm's power
	                                save thread scans once a second); 0 = at once */
	int64_t series_step_s;       /* width of the time series buckets; 0 = none */
	int64_t stall_limit_s;       /* give up when jobs wait and nothing runs or
	                                boots this long; 0 = 30 days */
	bool every_tick;             /* MXQ_SIM_POLICY: call decide() at every tick, even
	                                when the last decision was a fixed point that
	                                nothing has disturbed (same results, slower) */
	bool self_check;             /* for tests: at every dispatch pass and decision
	                                compare what the kept node sets and the policy's
	                                index give with a pass over every node; a
	                                difference ends the run with -ENOTRECOVERABLE */
};

struct mxq_sim;

/* A simulation at the window start with every node ON and idle.
 * 0, -EINVAL (bad params), -ENOMEM. CLUSTER must outlive the sim. */
int mxq_sim_new(const struct mxq_sim_cluster *cluster, const struct mxq_sim_params *params,
		struct mxq_sim **ret_sim);
/* NULL is fine. */
void mxq_sim_free(struct mxq_sim *sim);

/*
 * Run until every job of the window has ended. Returns 0; -EDEADLK when
 * jobs wait while nothing runs or boots for the stall limit (a policy that
 * never wakes a node); -ENOMEM; -EPROTO when mxq_power_decide() failed;
 * -ENOTRECOVERABLE when params.self_check found a difference.
 */
int mxq_sim_run(struct mxq_sim *sim);
/* Time the last job ended (valid after mxq_sim_run()). */
int64_t mxq_sim_done_at(const struct mxq_sim *sim);

/*
 * After mxq_sim_run() returned 0: free what only the jobs needed (their
 * waits are kept as the statistics of the result). Nine simulations of a
 * trace with millions of jobs held them all at once until their books
 * were closed. mxq_sim_waits() has nothing afterwards. No-op before every
 * job ended.
 */
void mxq_sim_trim(struct mxq_sim *sim);

/*
 * Keep the clock going (ticks, shutdowns) up to END, >= mxq_sim_done_at(),
 * and close the energy books there; all simulations of one comparison are
 * closed at the same END. 0 or negative errno as for _run().
 */
int mxq_sim_close(struct mxq_sim *sim, int64_t end);

struct mxq_sim_result {
	double energy_j;             /* everything below added up */
	double busy_j;               /* ON nodes running at least one job */
	double idle_j;               /* ON (or draining) nodes running nothing */
	double transition_j;         /* boots and shutdowns */
	double off_j;                /* powered off */
	double bound_j;              /* mxq_sim_lower_bound() at END */
	uint64_t boots;              /* all nodes */
	uint32_t boots_max;          /* of the node booted most */
	uint64_t jobs;
	double wait_mean_s;
	double wait_p95_s;
	double wait_max_s;
	int64_t start;               /* window start */
	int64_t end;                 /* where the books were closed */
	uint64_t events;             /* events processed */
	uint64_t ticks;              /* decisions taken */
	uint64_t ticks_skipped;      /* ticks at a known fixed point, not asked */
	uint64_t polls;              /* decisions between ticks, for a new job that waits */
	uint64_t actions[_MXQ_POWER_ACTION_MAX];
	uint64_t policy_errors;      /* actions that did not match the node's state */
	double peak_powered_w;       /* highest draw of the nodes not off (on, booting,
	                                shutting down) at any instant */
};

/* Results after mxq_sim_close(). */
void mxq_sim_get_result(const struct mxq_sim *sim, struct mxq_sim_result *ret);

/* Wait of every job, in window order (valid after _run(), until _trim());
 * NULL if none. */
const double *mxq_sim_waits(const struct mxq_sim *sim, size_t *ret_n);

/*
 * Time series (series_step_s > 0): mean number of powered nodes (drawing
 * more than standby: on, booting, shutting down) and of busy nodes (at
 * least one job) in each bucket from the window start. Valid after close.
 */
size_t mxq_sim_series(const struct mxq_sim *sim, const double **ret_powered,
		      const double **ret_busy);

#endif
