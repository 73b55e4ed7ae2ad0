/*
 * mxqd_energy - job energy accounting inside mxqd (see mxqd_energy.h).
 *
 * Configuration: mxqd --energy-* options (struct mxqd_energy_options).
 * Sources (read by mxq_energy_source.c), tried in --energy-sources order
 * (default rapl,hwmon,ipmi,redfish,model),
 * the first one that reads is used, and on a failure the list is probed
 * again at the next sample:
 *   rapl   SYSFS/class/powercap/<zone>/energy_uj of every package-N and
 *          dram zone (core/uncore are inside the package and not added;
 *          intel-rapl-mmio duplicates the package and is skipped), wrap at
 *          max_energy_range_uj handled;
 *   hwmon  SYSFS/class/hwmon/hwmon* /energy*_input (µJ counters), else
 *          power*_input or power*_average (µW, integrated by trapezoid);
 *   ipmi   the BMC's DCMI power reading (mxqd_energy_ipmi.c: in-band
 *          through /dev/ipmi0, or --energy-ipmi HOST[:PORT] over the LAN),
 *          taken by a reader process and integrated like hwmon power
 *          readings;
 *   model  --energy-model IDLE_W:PER_SLOT_W x busy slots: an estimate.
 *
 * Sampling runs in the main loop (mxqd_energy_tick), not in a thread: every
 * source here is a handful of sysfs reads (bench_energy: ~40 us) plus one
 * /proc scan while jobs run (the dominant cost, ~20 us per process on a
 * loaded test machine), nothing that blocks; the job set it splits energy
 * among is owned by the main loop, and the status hooks take a sample at
 * every job start and end, so interval boundaries are exact without any
 * locking. Counters integrate exactly even when a loop turn is late; only
 * the power and model sources interpolate over a late turn. The one source
 * that can block, the BMC, is read by a thread of its own
 * (mxqd_energy_ipmi.c); the main loop takes its latest reading.
 *
 * Attribution: each interval's energy is split at once (mxq_energy.c)
 * into per-job accumulators, so a wrapped ring buffer never loses job
 * energy. The ring holds the node's recent samples; one per flush interval
 * goes to mxq_power_sample, also those missed while the database was
 * away, as far as the ring reaches back. CPU time per job is its cgroup's
 * counter (mxqd_cgroup.c: cpu.stat usage_usec or cpuacct.usage, one pread
 * of a file kept open) when jobs run in cgroups, else the sum of utime,
 * stime, cutime and cstime of the processes in its session (sid =
 * job_pid), read from /proc; the last interval of an ended job uses the
 * CPU time in the reaper's outcome, the cgroup's or its rusage
 * (jobs_cpu_read: the one place to swap that source). Jobs re-adopted
 * from an earlier mxqd are tracked from the baseline sample
 * (mxqd_energy_adopt), which reads their CPU time, so the first interval
 * holds only what they used in it.
 *
 * Boot overhead: once per boot, the time from the boot's start to the
 * baseline sample times the first measured power, booked as its own
 * record (mxq_power.energy_boot_joules and the total), never into a node
 * sample. The boot is the kernel's boot_id with CLOCK_BOOTTIME, or what
 * --energy-boot says (none; ID@EPOCH for simulated nodes sharing one
 * kernel). SPOOL/energy.boot names the boot already recorded, written
 * once the boot is in mxq_power, so a restarted mxqd does not count it
 * again. An mxqd started more than BOOT_WINDOW_S after the boot books none.
 *
 * Shutdown overhead: from mxqd_energy_shutdown_begins() (SIGTERM, SIGINT,
 * power-off) on, the energy not attributed to jobs; before it, idle.
 *
 * Errors: a failing source makes the interval unmeasured (jobs running in
 * it become "partial") and is logged once until it works again. Database
 * errors are logged once per flush; pending node increments and ended
 * jobs' rows are kept and written at the next flush.
 */
#define _GNU_SOURCE
#include "mxqd_energy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"
#include "mxq_energy.h"
#include "mxq_energy_db.h"
#include "mxq_energy_source.h"
#include "mxq_power_db.h"
#include "mxqd_cgroup.h"
#include "mxqd_energy_ipmi.h"
#include "mxqd_energy_redfish.h"
#include "mxqd_ipmi.h"

#define BOOT_WINDOW_S 600       /* mxqd started this soon after boot: count boot energy */
#define BOOT_MARK_FILE "energy.boot" /* in the spool: the boot whose overhead is recorded */
#define PRUNE_INTERVAL_MS (3600 * 1000ULL)
#define UPGRADE_INTERVAL_MS (5 * 1000ULL) /* how often a preferred source is tried again */
#define IDLE_LEARN_WEIGHT 0.2   /* weight of a new idle interval in the learned baseline */
#define IPMI_TIMEOUT_MS 2000    /* one request to the BMC */
#define REDFISH_TIMEOUT_MS 5000 /* one HTTPS request to the BMC */
#define MAX_CLOCK_SKEW_MS 500   /* sample times follow the wall clock this closely */

/* A job whose energy is being accumulated. */
struct tracked {
	struct tracked *next;
	uint64_t job_id;
	pid_t sid;
	uint32_t slots;
	uint64_t start_ms;      /* realtime of its first sample */
	uint64_t end_ms;        /* realtime of its last sample; 0 while running */
	bool gone;              /* ended at a sample (its outcome in the spool), before
	                           its job_ended hook: that one only writes it */
	uint64_t since_ms;      /* realtime from which this mxqd accounts it */
	uint64_t cpu_us;        /* CPU time at the last sample */
	bool cpu_base;          /* cpu_us is a reading (adopted jobs: not before their first) */
	uint64_t cpu_now_us;    /* scratch: this sample's reading, UINT64_MAX unknown */
	unsigned procs;         /* scratch: processes found in its session */
	int cg_fd;              /* its cgroup's CPU counter, -1 = none: /proc scan */
	struct mxq_energy_job_acc acc;
	double timeline_j;      /* energy at the last timeline row */
	uint64_t timeline_ms;
	bool load_earlier;      /* adopted: add what an earlier mxqd wrote before writing */
};

static struct {
	struct mxqd_energy_options opt;
	bool enabled;
	enum mxq_energy_source_kind order[MXQ_ENERGY_SRC__COUNT];
	size_t n_order;
	struct mxq_energy_source_config cfg;
	struct mxq_energy_source src;
	bool have_src;
	bool failing;           /* logged that no source works */
	bool degraded;          /* a source failed since start: try to get back to the best */
	struct mxq_energy_ring ring;
	bool started;
	uint64_t last_mono_ms;
	uint64_t last_real_ms;
	int64_t real_offset_ms;   /* sample times: monotonic + this (sample_time_ms) */
	uint64_t next_sample_ms;
	uint64_t next_flush_ms;
	uint64_t next_prune_ms;
	uint64_t next_upgrade_ms;
	double energy_j;        /* node energy measured by this mxqd (samples: no boot) */
	double base_j;          /* mxq_power.energy_joules when this mxqd started */
	bool base_loaded;
	double watts;
	double idle_w;          /* idle baseline: model idle, or learned from idle intervals */
	bool idle_learned;
	/* boot overhead: decided at the baseline, booked at the first measured interval */
	bool boot_pending;      /* a boot to book at the first measured interval */
	char boot_id[MXQ_ENERGY_BOOT_ID_MAX];
	double boot_since_s;    /* boot start to the baseline sample */
	char boot_counted[MXQ_ENERGY_BOOT_ID_MAX]; /* the spool's mark: recorded earlier */
	bool boot_mark_due;     /* booked: write the mark once it is in mxq_power */
	bool shutdown;          /* shutdown began: unattributed energy is overhead */
	/* node increments not yet in mxq_power */
	double pend_total, pend_jobs, pend_idle, pend_boot, pend_shutdown;
	bool db_failing;
	bool node_written_any;     /* this mxqd wrote a node sample */
	uint64_t node_written_seq; /* its ring sequence number (mxq_energy_ring.pushed - 1 then) */
	uint64_t node_written_ms;  /* its time */
	double node_written_j;
	struct tracked *jobs;
	size_t n_jobs;
	/* per-sample scratch, one entry per tracked job */
	struct mxq_energy_share_in *in;
	struct mxq_energy_share_out *out;
	struct tracked **order_t;
	size_t scratch_len;
	pid_t *sids;
	uint64_t *cpu;
	unsigned *procs;
} en;

void mxqd_energy_options_init(struct mxqd_energy_options *opt)
{
	*opt = (struct mxqd_energy_options) {
		.sources = "rapl,hwmon,ipmi,redfish,model",
		.interval_s = 1,
		.flush_s = 60,
		.sysfs_root = "/sys",
		.retention_days = 30,
		.buffer_s = 3600,
		.ipmi_target = "/dev/ipmi0",
		.ipmi_workarounds = "",
		.boot = { .mode = MXQ_ENERGY_BOOT_KERNEL },
	};
}

static int opt_fail(char *errbuf, size_t errlen, const char *opt, const char *arg, const char *what)
{
	snprintf(errbuf, errlen, "%s: '%s' is not %s", opt, arg ? arg : "", what);
	return -EINVAL;
}

int mxqd_energy_option(struct mxqd_energy_options *opt, enum mxqd_energy_opt which,
		       const char *arg, char *errbuf, size_t errlen)
{
	enum mxq_energy_source_kind order[MXQ_ENERGY_SRC__COUNT];
	size_t n;
	double v;
	uint32_t u;

	switch (which) {
	case MXQD_ENERGY_OPT_SOURCES:
		if (mxq_energy_source_list_parse(arg, order, &n, errbuf, errlen) < 0)
			return -EINVAL;
		snprintf(opt->sources, sizeof(opt->sources), "%s", arg);
		return 0;
	case MXQD_ENERGY_OPT_INTERVAL:
		if (mx_strtod(arg, &v) < 0 || v < 0.05 || v > 3600)
			return opt_fail(errbuf, errlen, "--energy-interval", arg, "seconds in 0.05..3600");
		opt->interval_s = v;
		return 0;
	case MXQD_ENERGY_OPT_FLUSH:
		if (mx_strtod(arg, &v) < 0 || v < 0.1 || v > 86400)
			return opt_fail(errbuf, errlen, "--energy-flush-interval", arg, "seconds in 0.1..86400");
		opt->flush_s = v;
		return 0;
	case MXQD_ENERGY_OPT_SYSFS_ROOT:
		if (arg[0] != '/')
			return opt_fail(errbuf, errlen, "--energy-sysfs-root", arg, "an absolute path");
		opt->sysfs_root = arg;
		return 0;
	case MXQD_ENERGY_OPT_MODEL:
		if (mxq_energy_parse_model(arg, &opt->model_idle_w, &opt->model_slot_w) < 0)
			return opt_fail(errbuf, errlen, "--energy-model", arg,
					"IDLE_WATTS:WATTS_PER_SLOT like 80:12.5");
		opt->model_set = true;
		return 0;
	case MXQD_ENERGY_OPT_TIMELINE:
		opt->timeline = true;
		return 0;
	case MXQD_ENERGY_OPT_RETENTION:
		if (mx_strtou32(arg, &u) < 0 || u == 0)
			return opt_fail(errbuf, errlen, "--energy-retention", arg, "a positive number of days");
		opt->retention_days = u;
		return 0;
	case MXQD_ENERGY_OPT_BUFFER:
		if (mx_strtod(arg, &v) < 0 || v < 1 || v > 7 * 86400)
			return opt_fail(errbuf, errlen, "--energy-buffer", arg, "seconds in 1..604800");
		opt->buffer_s = v;
		return 0;
	case MXQD_ENERGY_OPT_IPMI:
		if (!arg[0] || strlen(arg) >= 256)
			return opt_fail(errbuf, errlen, "--energy-ipmi", arg,
					"a device path or a BMC address HOST[:PORT]");
		opt->ipmi_target = arg;
		return 0;
	case MXQD_ENERGY_OPT_REDFISH: {
		struct mxqd_energy_redfish_spec spec;

		if (mxqd_energy_redfish_parse(arg, &spec, errbuf, errlen) < 0)
			return -EINVAL;
		opt->redfish = arg;
		return 0;
	}
	case MXQD_ENERGY_OPT_IPMI_WORKAROUNDS:
		if (mxqd_ipmi_workarounds_check(arg, errbuf, errlen) < 0)
			return -EINVAL;
		opt->ipmi_workarounds = arg;
		return 0;
	case MXQD_ENERGY_OPT_BOOT:
		if (mxq_energy_boot_parse(arg, &opt->boot) < 0)
			return opt_fail(errbuf, errlen, "--energy-boot", arg,
					"kernel, none or BOOTID@EPOCH (a simulated node's boot)");
		return 0;
	default:
		snprintf(errbuf, errlen, "unknown energy option");
		return -EINVAL;
	}
}

/* ---------------------------------------------------------------- sources */

/* The BMC reader, when ipmi is in the source list and the BMC answers. */
static void start_ipmi(const struct mxqd_server *server)
{
	struct mxqd_energy_ipmi_config c = {
		.target = en.opt.ipmi_target, .workarounds = en.opt.ipmi_workarounds,
		.hostname = server->hostname,
		.secrets_path = en.opt.secrets_path, .interval_s = en.opt.interval_s,
		.timeout_ms = IPMI_TIMEOUT_MS,
	};
	char err[512] = "";
	bool listed = false;
	int r;

	for (size_t i = 0; i < en.n_order; i++)
		listed = listed || en.order[i] == MXQ_ENERGY_SRC_IPMI;
	if (!listed)
		return;
	/* without a running reader the callback says -ENOENT: source absent */
	en.cfg.ipmi_watts = mxqd_energy_ipmi_watts;
	r = mxqd_energy_ipmi_start(&c, err, sizeof(err));
	if (r == -ENOENT)
		mx_log_info("energy: ipmi source absent: %s", err);
	else if (r < 0 && !mxqd_energy_ipmi_running())
		mx_log_warning("energy: ipmi source not used: %s", err);
	else if (r < 0)
		mx_log_warning("energy: %s; the ipmi source is used once the BMC answers", err);
}

/* The Redfish reader, when redfish is listed and --energy-redfish given. */
static void start_redfish(const struct mxqd_server *server)
{
	struct mxqd_energy_redfish_config c = {
		.spec = en.opt.redfish, .hostname = server->hostname,
		.secrets_path = en.opt.secrets_path, .interval_s = en.opt.interval_s,
		.timeout_ms = REDFISH_TIMEOUT_MS, .sysfs_root = en.opt.sysfs_root,
	};
	char err[512] = "";
	bool listed = false;
	int r;

	for (size_t i = 0; i < en.n_order; i++)
		listed = listed || en.order[i] == MXQ_ENERGY_SRC_REDFISH;
	if (!listed || !en.opt.redfish)
		return;
	en.cfg.redfish_watts = mxqd_energy_redfish_watts;
	r = mxqd_energy_redfish_start(&c, err, sizeof(err));
	if (r == -ENOENT)
		mx_log_info("energy: redfish source absent: %s", err);
	else if (r < 0 && !mxqd_energy_redfish_running())
		mx_log_warning("energy: redfish source not used: %s", err);
	else if (r < 0)
		mx_log_warning("energy: %s; the redfish source is used once the BMC answers", err);
}

/* First source of the list that probes fine. */
static int select_source(void)
{
	for (size_t i = 0; i < en.n_order; i++) {
		if (mxq_energy_source_probe(en.order[i], &en.cfg, &en.src) == 0) {
			en.have_src = true;
			return 0;
		}
	}
	en.have_src = false;
	return -ENOENT;
}

/*
 * While a fallback source is in use, see whether a preferred one works
 * again (a module loaded late, a file that came back). The new source takes
 * its baseline reading now, so the next interval is measured by it without
 * a gap.
 */
static void maybe_upgrade_source(void)
{
	struct mxq_energy_source better;
	double ignored;
	int r;

	for (size_t i = 0; i < en.n_order; i++) {
		bool same = en.order[i] == en.src.kind;

		if (mxq_energy_source_probe(en.order[i], &en.cfg, &better) < 0 ||
		    (same && better.n_zones <= en.src.n_zones)) {
			if (same)
				return;
			continue;
		}
		r = mxq_energy_source_read(&better, 0, 0, &ignored); /* baseline */
		if (r < 0 && r != -EAGAIN)
			continue;
		mx_log_notice("energy: %s works again (%zu input(s)), measuring with it instead of %s "
			      "(%zu input(s))", mxq_energy_source_kind_to_string(better.kind), better.n_zones,
			      mxq_energy_source_kind_to_string(en.src.kind), en.src.n_zones);
		en.src = better;
		return;
	}
}

/* ---------------------------------------------------------------- sampling */

/*
 * CPU time of a job whose session has no process left but whose end has
 * not been handled yet (several jobs ending together): the rusage its
 * reaper wrote into the spool, or UINT64_MAX (unknown) when not there yet.
 * Counting it as 0 would hand its last interval to the jobs ended first.
 */
static uint64_t gone_job_cpu(const struct mxqd_server *server, const struct tracked *t)
{
	struct mxqd_outcome o;

	if (mxqd_outcome_read(server->spooldir, t->job_id, &o) < 0)
		return UINT64_MAX;
	return o.utime_us + o.stime_us;
}

/*
 * THE CPU-time source of the energy split, the one function to change for
 * another one: each running tracked job's cumulative CPU time in
 * microseconds into t->cpu_now_us, UINT64_MAX when it cannot be known now.
 * Only differences between two readings of a job are used, so the origin
 * does not matter. A job in a cgroup: the cgroup's counter (every process
 * that ran in it, daemonised ones too; one pread per job). Otherwise
 * utime + stime + cutime + cstime of the processes in the job's session
 * (sid = job_pid) from one pass over /proc. A job whose processes are all
 * gone (its cgroup removed): the CPU time its reaper left in the spool.
 */
static void jobs_cpu_read(const struct mxqd_server *server)
{
	size_t n = 0, i = 0;
	int r;

	for (struct tracked *t = en.jobs; t; t = t->next) {
		if (t->end_ms)
			continue;
		if (t->cg_fd >= 0) {
			t->procs = mxqd_cgroup_cpu_read(t->cg_fd, &t->cpu_now_us) == 0;
			if (!t->procs)
				t->cpu_now_us = gone_job_cpu(server, t);
		} else if (n < en.scratch_len) {
			en.sids[n++] = t->sid;
		}
	}
	r = mxq_energy_sessions_cpu(en.sids, n, en.cpu, en.procs);
	for (struct tracked *t = en.jobs; t && i < n; t = t->next) {
		if (t->end_ms || t->cg_fd >= 0)
			continue;
		t->procs = r < 0 ? 0 : en.procs[i];
		t->cpu_now_us = r < 0 ? UINT64_MAX : t->procs ? en.cpu[i] : gone_job_cpu(server, t);
		i++;
	}
}

static uint32_t busy_slots(void)
{
	uint32_t n = 0;

	for (struct tracked *t = en.jobs; t; t = t->next)
		if (!t->end_ms)
			n += t->slots;
	return n;
}

/* Resize the array *PP to N elements of SIZE; *PP is kept on failure. */
static bool grow(void *pp, size_t n, size_t size)
{
	void *p = realloc(*(void **)pp, n * size);

	if (p)
		*(void **)pp = p;
	return p != NULL;
}

/* Grow the per-sample scratch arrays to the number of tracked jobs. */
static int ensure_scratch(void)
{
	size_t want = en.n_jobs;
	bool ok;

	if (want <= en.scratch_len)
		return 0;
	want = want < 16 ? 16 : want * 2;
	/* every array is tried, so none is shorter than the others think */
	ok = grow(&en.sids, want, sizeof(*en.sids));
	ok = grow(&en.cpu, want, sizeof(*en.cpu)) && ok;
	ok = grow(&en.procs, want, sizeof(*en.procs)) && ok;
	ok = grow(&en.in, want, sizeof(*en.in)) && ok;
	ok = grow(&en.out, want, sizeof(*en.out)) && ok;
	ok = grow(&en.order_t, want, sizeof(*en.order_t)) && ok;
	if (!ok)
		return -ENOMEM;
	en.scratch_len = want;
	return 0;
}

/* ------------------------------------------------------------------- boot */

static void boot_mark_path(const struct mxqd_server *server, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", server->spooldir, BOOT_MARK_FILE);
}

/* At the baseline sample: which boot this is, how long ago it began, and
 * whether an earlier mxqd of this node (same spool) recorded it already. */
static void boot_identify(const struct mxqd_server *server, uint64_t now_real_ms)
{
	const char *kernel_id = strcmp(server->boot_id, "unknown") == 0 ? "" : server->boot_id;
	struct timespec ts;
	char path[4096];

	if (clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		ts = (struct timespec) { 0 };
	if (mxq_energy_boot_identify(&en.opt.boot, kernel_id, (double)ts.tv_sec + ts.tv_nsec / 1e9,
				     now_real_ms, en.boot_id, &en.boot_since_s) < 0)
		return;
	boot_mark_path(server, path, sizeof(path));
	if (mx_read_first_line(path, en.boot_counted, sizeof(en.boot_counted)) < 0)
		en.boot_counted[0] = '\0';
	en.boot_pending = true;
}

/*
 * At the first measured interval: the boot's overhead is the time from the
 * boot to the baseline sample at the power of that interval. Its own
 * record (mxq_power.energy_boot_joules and the total), never part of a
 * sample: samples carry measured power only.
 */
static void boot_book(double watts)
{
	double j = mxq_energy_boot_j(en.boot_id, en.boot_counted, en.boot_since_s, BOOT_WINDOW_S, watts);

	en.boot_pending = false;
	if (strcmp(en.boot_id, en.boot_counted) == 0) {
		mx_log_info("energy: boot %s is recorded already (an earlier mxqd of this node)", en.boot_id);
		return;
	}
	if (j <= 0) {
		mx_log_info("energy: boot %s began %.1f s before mxqd (more than %d s): no boot overhead",
			    en.boot_id, en.boot_since_s, BOOT_WINDOW_S);
		return;
	}
	mx_log_info("energy: boot %s began %.1f s before mxqd: %.1f J of boot overhead at %.1f W",
		    en.boot_id, en.boot_since_s, j, watts);
	en.pend_boot += j;
	en.pend_total += j;
	en.boot_mark_due = true;
}

/* Once the boot is in mxq_power: remember it in the spool, so that a
 * restarted mxqd does not record it again. */
static void boot_mark(const struct mxqd_server *server)
{
	char path[4096], tmp[4100];
	FILE *f;

	boot_mark_path(server, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%s\n", en.boot_id) < 0 || fclose(f) != 0 || rename(tmp, path) < 0) {
		mx_log_warning("energy: cannot write %s: %m; a restarted mxqd records this boot again",
			       path);
		if (f)
			unlink(tmp);
	}
	snprintf(en.boot_counted, sizeof(en.boot_counted), "%s", en.boot_id);
	en.boot_mark_due = false;
}

/*
 * The wall-clock time of a sample: the monotonic clock plus an offset, so
 * that the time between two samples is the time their energy was measured
 * over (node rows' watts = energy / time exactly), re-anchored to the
 * wall clock when the two differ by more than MAX_CLOCK_SKEW_MS (a clock
 * step or a long slew).
 */
static uint64_t sample_time_ms(uint64_t now_mono)
{
	uint64_t real = mx_now_realtime_ms(), t = now_mono + (uint64_t)en.real_offset_ms;
	int64_t skew = (int64_t)(t - real);

	if (!en.started || skew > MAX_CLOCK_SKEW_MS || skew < -MAX_CLOCK_SKEW_MS) {
		en.real_offset_ms = (int64_t)(real - now_mono);
		t = real;
	}
	return t;
}

/*
 * Close the interval since the last sample. ENDED, if non-NULL, is a job
 * whose processes are gone: its CPU time in this interval comes from
 * ENDED_CPU_US (its total from rusage; UINT64_MAX when unknown).
 */
static void sample_now(struct mxqd_server *server, struct tracked *ended, uint64_t ended_cpu_us)
{
	struct mxq_energy_sample smp = { 0 };
	uint64_t now_mono = mx_now_monotonic_ms(), now_real = sample_time_ms(now_mono), dt;
	size_t n = 0;
	double interval_j = 0, unattributed = 0;
	bool valid;
	int r;

	if (ensure_scratch() < 0)
		mx_log_err("energy: out of memory: some jobs are left out of this interval");
	dt = now_mono - en.last_mono_ms;
	if (!en.have_src && select_source() == 0) {
		mx_log_notice("energy: measuring with %s (%s, %zu input(s))",
			      mxq_energy_source_kind_to_string(en.src.kind),
			      mxq_energy_method_to_string(en.src.method), en.src.n_zones);
		en.failing = false;
	}
	r = en.have_src ? mxq_energy_source_read(&en.src, dt, busy_slots(), &interval_j) : -ENOENT;
	if (r < 0 && r != -EAGAIN) {
		if (!en.failing)
			mx_log_warning("energy: source %s failed (%s); intervals are unmeasured until "
				       "a source in '%s' works",
				       en.have_src ? mxq_energy_source_kind_to_string(en.src.kind) : "-",
				       strerror(-r), en.opt.sources);
		en.failing = true;
		en.degraded = true;
		en.have_src = false; /* probe the list again next time */
	} else if (r == 0 && en.failing) {
		en.failing = false;
	}
	valid = en.started && r == 0;
	if (!en.started)
		boot_identify(server, now_real);
	jobs_cpu_read(server);

	for (struct tracked *t = en.jobs; t && n < en.scratch_len; t = t->next) {
		uint64_t now_cpu;

		if (t->end_ms)
			continue;
		now_cpu = t == ended ? ended_cpu_us : t->cpu_now_us;
		en.in[n].slots = t->slots;
		en.in[n].cpu_known = t->cpu_base && now_cpu != UINT64_MAX;
		en.in[n].cpu_us = en.in[n].cpu_known && now_cpu > t->cpu_us ? now_cpu - t->cpu_us : 0;
		if (now_cpu != UINT64_MAX) {
			t->cpu_us = now_cpu;
			t->cpu_base = true;
		}
		en.order_t[n++] = t;
	}
	if (valid && mxq_energy_attribute(interval_j, dt, en.idle_w, server->slots, en.in, n, en.out,
					  &unattributed) == 0) {
		double jobs_j = 0;

		for (size_t i = 0; i < n; i++) {
			mxq_energy_job_acc_add(&en.order_t[i]->acc, &en.out[i], dt, en.src.method);
			jobs_j += en.out[i].energy_j;
			mx_log_debug("energy: %" PRIu64 " ms to %" PRIu64 ", %.3f J: job %" PRIu64
				     " cpu %s%" PRIu64 " us -> %.3f J (active %.3f J)", dt, now_real,
				     interval_j,
				     en.order_t[i]->job_id, en.in[i].cpu_known ? "" : "unknown ",
				     en.in[i].cpu_us, en.out[i].energy_j, en.out[i].active_j);
		}
		en.watts = dt ? interval_j * 1000.0 / (double)dt : en.watts;
		if (en.boot_pending && dt > 0)
			boot_book(en.watts);
		en.energy_j += interval_j;
		en.pend_total += interval_j;
		en.pend_jobs += jobs_j;
		if (en.shutdown)
			en.pend_shutdown += unattributed;
		else
			en.pend_idle += unattributed;
		if (n == 0 && !en.opt.model_set && !en.shutdown && dt > 0) {
			en.idle_w = en.idle_learned ? (1 - IDLE_LEARN_WEIGHT) * en.idle_w +
						      IDLE_LEARN_WEIGHT * en.watts : en.watts;
			en.idle_learned = true;
		}
	} else if (en.started) {
		for (size_t i = 0; i < n; i++)
			mxq_energy_job_acc_gap(&en.order_t[i]->acc, dt);
	}
	/* A job with no process left whose outcome is in the spool has ended:
	 * its share stops here, also when its job_ended hook comes much later
	 * (it waits for the database to take the outcome). */
	for (size_t i = 0; i < n; i++) {
		struct tracked *t = en.order_t[i];

		if (t != ended && !t->procs && t->cpu_now_us != UINT64_MAX) {
			t->end_ms = now_real;
			t->gone = true;
		}
	}
	smp.t_ms = now_real;
	smp.energy_j = en.energy_j;
	smp.watts = (float)en.watts;
	smp.method = (uint8_t)en.src.method;
	smp.valid = valid;
	smp.jobs = (uint16_t)n;
	mxq_energy_ring_push(&en.ring, &smp);
	en.started = true;
	en.last_mono_ms = now_mono;
	en.last_real_ms = now_real;
	en.next_sample_ms = now_mono + (uint64_t)(en.opt.interval_s * 1000);
	if (en.have_src && en.degraded && now_mono >= en.next_upgrade_ms) {
		maybe_upgrade_source();
		en.next_upgrade_ms = now_mono + UPGRADE_INTERVAL_MS;
	}
}

/* ---------------------------------------------------------------- database */

/* Add the energy an earlier mxqd recorded for an adopted job. */
static int load_earlier(struct mxqd_server *server, struct tracked *t)
{
	struct mxq_energy_db_job earlier;
	double earlier_j = 0;
	int n;

	n = mxq_energy_db_job_read(server->db, t->job_id, &earlier);
	if (n < 0)
		return n;
	if (n > 0) {
		double e = earlier.energy_j, avg = earlier.avg_watts;
		uint64_t start = earlier.start_ms;

		earlier_j = e;
		t->acc.energy_j += e;
		t->acc.active_j += earlier.active_energy_j;
		t->acc.samples += earlier.samples;
		if (earlier.peak_watts > t->acc.peak_w)
			t->acc.peak_w = earlier.peak_watts;
		if (avg > 0)
			t->acc.measured_ms += (uint64_t)(e / avg * 1000);
		if (start && start < t->start_ms)
			t->start_ms = start;
	}
	t->load_earlier = false; /* added: never twice, whatever fails below */
	/* the timeline goes on from the earlier mxqd's last row, or from
	 * here when it wrote none */
	t->timeline_ms = t->since_ms;
	t->timeline_j = earlier_j;
	if (en.opt.timeline) {
		n = mxq_energy_db_job_last_sample(server->db, t->job_id, &t->timeline_ms,
						  &t->timeline_j);
		if (n < 0)
			return n;
	}
	return 0;
}

static int write_job(struct mxqd_server *server, struct tracked *t)
{
	const struct mxq_energy_job_acc *a = &t->acc;
	struct mxq_energy_db_job row;
	int n;

	if (t->load_earlier && (n = load_earlier(server, t)) < 0)
		return n;

	row = (struct mxq_energy_db_job) {
		.job_id = t->job_id, .hostname = server->hostname, .energy_j = a->energy_j,
		.active_energy_j = a->active_j, .avg_watts = mxq_energy_job_acc_avg_watts(a),
		.peak_watts = a->peak_w, .samples = a->samples,
		.method = mxq_energy_method_to_string(a->method),
		.completeness = mxq_energy_completeness_to_string(mxq_energy_job_acc_completeness(a)),
		.idle_baseline_watts = en.idle_w, .start_ms = t->start_ms, .end_ms = t->end_ms,
	};
	n = mxq_energy_db_job_write(server->db, &row);
	if (n < 0)
		return n;
	if (en.opt.timeline && en.last_real_ms > t->timeline_ms) {
		/* watts since the previous row (the first: since the job
		 * started), so rows' watts x their intervals add up to energy_j */
		uint64_t at = t->end_ms ? t->end_ms : en.last_real_ms;
		uint64_t from = t->timeline_ms ? t->timeline_ms : t->start_ms;
		double w = at > from ? (a->energy_j - t->timeline_j) * 1000.0 / (double)(at - from) : 0;

		n = mxq_energy_db_job_sample_add(server->db, t->job_id, at, a->energy_j, w);
		if (n < 0)
			return n;
		t->timeline_ms = at;
		t->timeline_j = a->energy_j;
	}
	return 0;
}

/*
 * Node samples from the ring: one per flush interval since the last one
 * written, so a database outage shorter than the ring leaves no gap in
 * mxq_power_sample, plus one at each edge of a stretch of unmeasured
 * intervals. A row's prev_time is the previous row's sample_time when
 * every interval between them was measured by this mxqd, NULL when not
 * (its first row, a source that failed, ring samples overwritten before
 * they were written): the gaps are explicit, `mxqadmin power usage` never
 * guesses them from energy values. watts: the average since prev_time (0
 * after a gap).
 */
static int write_node_samples(struct mxqd_server *server)
{
	uint64_t step = (uint64_t)(en.opt.flush_s * 1000 * 0.9);
	uint64_t first_seq = en.ring.pushed - en.ring.count;
	bool gap = !en.node_written_any || first_seq > en.node_written_seq + 1;

	for (size_t i = 0; i < en.ring.count; i++) {
		const struct mxq_energy_sample *smp = mxq_energy_ring_get(&en.ring, i);
		const struct mxq_energy_sample *next = mxq_energy_ring_get(&en.ring, i + 1);
		uint64_t prev_ms = gap ? 0 : en.node_written_ms;
		double watts = 0;
		int n;

		if (en.node_written_any && (first_seq + i <= en.node_written_seq ||
					    smp->t_ms <= en.node_written_ms))
			continue;
		if (!smp->valid) {
			gap = true;
			prev_ms = 0;
		}
		if (next && next->valid == smp->valid && smp->t_ms < en.node_written_ms + step)
			continue;
		if (prev_ms)
			watts = (smp->energy_j - en.node_written_j) * 1000.0 / (double)(smp->t_ms - prev_ms);
		n = mxq_energy_db_node_sample_add(server->db, server->hostname, smp->t_ms,
						  en.base_j + smp->energy_j, watts, prev_ms);
		if (n < 0)
			return n;
		en.node_written_any = true;
		en.node_written_seq = first_seq + i;
		en.node_written_ms = smp->t_ms;
		en.node_written_j = smp->energy_j;
		gap = false;
	}
	return 0;
}

static int write_node(struct mxqd_server *server)
{
	const struct mxq_power_db_energy add = {
		.current_watts = en.watts, .total_j = en.pend_total, .jobs_j = en.pend_jobs,
		.idle_j = en.pend_idle, .boot_j = en.pend_boot, .shutdown_j = en.pend_shutdown,
		.method = mxq_energy_method_to_string(en.src.method),
		.idle_baseline_watts = en.idle_w,
	};
	int64_t n;

	if (!en.base_loaded) {
		n = mxq_power_db_energy_total(server->db, server->hostname, &en.base_j);
		if (n < 0)
			return (int)n;
		en.base_loaded = true;
	}
	n = mxq_power_db_energy_add(server->db, server->hostname, &add);
	if (n < 0)
		return (int)n;
	en.pend_total = en.pend_jobs = en.pend_idle = en.pend_boot = en.pend_shutdown = 0;
	if (en.boot_mark_due && n > 0)
		boot_mark(server);
	return write_node_samples(server);
}

static int prune(struct mxqd_server *server)
{
	return mxq_energy_db_prune(server->db, server->hostname, en.opt.retention_days);
}

static void tracked_free(struct tracked *t)
{
	if (t->cg_fd >= 0)
		close(t->cg_fd);
	free(t);
}

static void tracked_remove(struct tracked *t)
{
	for (struct tracked **p = &en.jobs; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			tracked_free(t);
			en.n_jobs--;
			return;
		}
	}
}

/* Running jobs' energy so far, ended jobs not yet written, node totals. */
static void flush(struct mxqd_server *server)
{
	struct tracked *t, *next;
	int r = 0;

	for (t = en.jobs; t && r >= 0; t = next) {
		next = t->next;
		r = write_job(server, t);
		if (r >= 0 && t->end_ms && !t->gone)
			tracked_remove(t);
	}
	if (r >= 0)
		r = write_node(server);
	if (r >= 0 && mx_now_monotonic_ms() >= en.next_prune_ms) {
		r = prune(server);
		en.next_prune_ms = mx_now_monotonic_ms() + PRUNE_INTERVAL_MS;
	}
	if (r < 0 && !en.db_failing)
		mx_log_warning("energy: cannot write to the database: %s; retrying at the next flush",
			       mx_db_error(server->db));
	en.db_failing = r < 0;
	en.next_flush_ms = mx_now_monotonic_ms() + (uint64_t)(en.opt.flush_s * 1000);
}

/* ------------------------------------------------------------------- hooks */

/* The tracked running job JOB_ID, or one that ended at a sample and
 * waits for its job_ended hook. */
static struct tracked *tracked_find(uint64_t job_id)
{
	for (struct tracked *t = en.jobs; t; t = t->next)
		if (t->job_id == job_id && (!t->end_ms || t->gone))
			return t;
	return NULL;
}

/* Start accumulating JOB from the sample just taken. */
static struct tracked *track(const struct mxqd_job *job)
{
	struct tracked *t = calloc(1, sizeof(*t));

	if (!t) {
		mx_log_err("energy: job %" PRIu64 ": out of memory, not accounted", job->job_id);
		return NULL;
	}
	t->job_id = job->job_id;
	t->sid = job->job_pid;
	t->slots = job->slots;
	t->cg_fd = mxqd_cgroup_job_cpu_open(job->job_id);
	t->start_ms = en.last_real_ms;
	t->since_ms = en.last_real_ms;
	t->cpu_base = !job->adopted; /* a new session starts at (nearly) no CPU time */
	mxq_energy_job_acc_init(&t->acc);
	t->next = en.jobs;
	en.jobs = t;
	en.n_jobs++;
	return t;
}

static void hook_job_started(void *ctx, struct mxqd_server *server, const struct mxqd_job *job)
{
	sample_now(server, NULL, 0); /* the interval before belongs to the jobs before */
	track(job);
}

/*
 * Jobs re-adopted after a restart of mxqd never pass job_started: account
 * them from the next sample on (which reads their CPU baseline), marked
 * partial (the time without an mxqd is lost), on top of what the earlier
 * mxqd wrote (loaded before the first write).
 */
static void track_adopted(struct mxqd_server *server)
{
	for (const struct mxqd_job *job = server->jobs; job; job = job->next) {
		struct tracked *t;

		if (!job->adopted || job->ended || job->job_pid <= 0 || tracked_find(job->job_id))
			continue;
		t = track(job);
		if (!t)
			return;
		t->acc.incomplete = true;
		t->load_earlier = true;
		mx_log_info("energy: job %" PRIu64 " (re-adopted) is accounted from now on", job->job_id);
	}
}

static void hook_job_ended(void *ctx, struct mxqd_server *server, const struct mxqd_job *job,
			   int final_status)
{
	struct tracked *t = tracked_find(job->job_id);
	uint64_t cpu = UINT64_MAX;
	int64_t n;

	if (!t) {
		/* started by an earlier mxqd (adopted) or never started: keep
		 * what an earlier mxqd measured, say it is incomplete */
		n = mxq_energy_db_job_unmeasured(server->db, job->job_id, server->hostname);
		if (n < 0)
			mx_log_warning("energy: job %" PRIu64 ": cannot record: %s", job->job_id,
				       mx_db_error(server->db));
		return;
	}
	if (!t->gone) {
		if (job->outcome)
			cpu = job->outcome->utime_us + job->outcome->stime_us;
		sample_now(server, t, cpu);
		t->end_ms = en.last_real_ms;
	}
	t->gone = false;
	if (write_job(server, t) == 0)
		tracked_remove(t);
	else
		mx_log_warning("energy: job %" PRIu64 ": cannot record (retrying at the next flush): %s",
			       job->job_id, mx_db_error(server->db));
}

static const struct mxqd_hooks energy_hooks = {
	.job_started = hook_job_started,
	.job_ended = hook_job_ended,
};

/* ------------------------------------------------------------------- public */

int mxqd_energy_init(struct mxqd_server *server, const struct mxqd_energy_options *opt,
		     char *errbuf, size_t errlen)
{
	size_t capacity;
	int r;

	en.opt = *opt;
	r = mxq_energy_source_list_parse(opt->sources, en.order, &en.n_order, errbuf, errlen);
	if (r < 0)
		return r;
	if (en.n_order == 0) {
		mx_log_info("energy: accounting disabled (--energy-sources none)");
		return 0;
	}
	en.cfg = (struct mxq_energy_source_config) {
		.sysfs_root = opt->sysfs_root, .model_set = opt->model_set,
		.model_idle_w = opt->model_idle_w, .model_slot_w = opt->model_slot_w,
	};
	capacity = (size_t)(opt->buffer_s / opt->interval_s) + 1;
	r = mxq_energy_ring_init(&en.ring, capacity);
	if (r < 0) {
		snprintf(errbuf, errlen, "energy: cannot allocate %zu samples: %s", capacity, strerror(-r));
		return r;
	}
	if (opt->model_set)
		en.idle_w = opt->model_idle_w;
	start_ipmi(server);
	start_redfish(server);
	r = select_source();
	/* a preferred source that is not there yet is looked for again */
	en.degraded = r < 0 || en.src.kind != en.order[0];
	if (r == 0)
		mx_log_notice("energy: measuring with %s (%s, %zu input(s)); ring of %zu samples "
			      "(%zu bytes)", mxq_energy_source_kind_to_string(en.src.kind),
			      mxq_energy_method_to_string(en.src.method), en.src.n_zones, capacity,
			      capacity * sizeof(struct mxq_energy_sample));
	else
		mx_log_warning("energy: no source of '%s' works on this node (sysfs root %s); "
			       "job energy is not measured until one does", opt->sources,
			       opt->sysfs_root);
	r = mxqd_hooks_register(&energy_hooks);
	if (r < 0) {
		snprintf(errbuf, errlen, "energy: cannot register status hooks: %s", strerror(-r));
		mxqd_energy_ipmi_stop();
		mxqd_energy_redfish_stop();
		mxq_energy_ring_done(&en.ring);
		return r;
	}
	en.enabled = true;
	/* the baseline sample is mxqd_energy_adopt's (or the first tick's) */
	en.next_sample_ms = 0;
	en.next_flush_ms = mx_now_monotonic_ms() + (uint64_t)(opt->flush_s * 1000);
	return 0;
}

void mxqd_energy_adopt(struct mxqd_server *server)
{
	if (!en.enabled)
		return;
	if (en.started)
		sample_now(server, NULL, 0); /* what came before is not theirs */
	track_adopted(server);
	sample_now(server, NULL, 0);    /* their CPU baseline (and the node's) */
	for (struct tracked *t = en.jobs; t; t = t->next)
		if (!t->since_ms)
			t->start_ms = t->since_ms = en.last_real_ms; /* tracked before the first sample */
}

void mxqd_energy_shutdown_begins(struct mxqd_server *server)
{
	if (!en.enabled || en.shutdown)
		return;
	sample_now(server, NULL, 0);
	en.shutdown = true;
}

void mxqd_energy_tick(struct mxqd_server *server, bool db_ok)
{
	uint64_t now;

	if (!en.enabled)
		return;
	now = mx_now_monotonic_ms();
	if (now >= en.next_sample_ms)
		sample_now(server, NULL, 0);
	if (db_ok && now >= en.next_flush_ms)
		flush(server);
}

uint64_t mxqd_energy_next_in_ms(void)
{
	uint64_t now = mx_now_monotonic_ms(), next;

	if (!en.enabled)
		return UINT64_MAX;
	next = en.next_sample_ms < en.next_flush_ms ? en.next_sample_ms : en.next_flush_ms;
	return next > now ? next - now : 0;
}

void mxqd_energy_fini(struct mxqd_server *server)
{
	if (!en.enabled)
		return;
	sample_now(server, NULL, 0);
	flush(server);
	while (en.jobs) {
		struct tracked *t = en.jobs;
		en.jobs = t->next;
		tracked_free(t);
	}
	en.n_jobs = 0;
	free(en.in);
	free(en.out);
	free(en.order_t);
	free(en.sids);
	free(en.cpu);
	free(en.procs);
	en.sids = NULL;
	en.cpu = NULL;
	en.procs = NULL;
	en.in = NULL;
	en.out = NULL;
	en.order_t = NULL;
	en.scratch_len = 0;
	mxqd_energy_ipmi_stop();
	en.cfg.ipmi_watts = NULL;
	mxqd_energy_redfish_stop();
	en.cfg.redfish_watts = NULL;
	mxq_energy_ring_done(&en.ring);
	en.enabled = false;
}
