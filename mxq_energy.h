/*
 * mxq_energy - the pure parts of job energy accounting.
 *
 * Counter arithmetic (wrap at max_energy_range_uj), integration of power
 * readings, a bounded ring buffer of node samples, the split of one
 * sampling interval's energy among the jobs running in it, the per-job
 * accumulator, and the once-per-boot decision on boot overhead. No I/O, no clock, no logging: every time is an argument, so
 * the unit tests drive it with tables (test_energy.c). The sources and
 * the sampling loop live in mxqd_energy.c, the statements on the energy
 * tables in mxq_energy_db.c.
 *
 * Units: energy in joules (double), power in watts, time in milliseconds,
 * CPU time in microseconds.
 */
#ifndef MXQ_ENERGY_H
#define MXQ_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a job's (or a sample's) energy was obtained, from exact to estimate.
 * Order matters: a job's method is the least exact one used during it. */
enum mxq_energy_method {
	MXQ_ENERGY_METHOD_COUNTER = 0, /* cumulative energy counters (RAPL, hwmon energy) */
	MXQ_ENERGY_METHOD_POWER,       /* instantaneous power readings, integrated */
	MXQ_ENERGY_METHOD_MODEL,       /* configured linear model: an estimate */
	MXQ_ENERGY_METHOD__COUNT,
};

/* Whether a job's energy covers its whole run. */
enum mxq_energy_completeness {
	MXQ_ENERGY_FULL = 0,    /* every interval of the run was measured */
	MXQ_ENERGY_PARTIAL,     /* some intervals are missing (source failed, adopted job) */
	MXQ_ENERGY_NONE,        /* nothing was measured */
	MXQ_ENERGY_COMPLETENESS__COUNT,
};

/* "counter", "power", "model"; NULL for values out of range. */
const char *mxq_energy_method_to_string(enum mxq_energy_method m);
/* "full", "partial", "none"; NULL for values out of range. */
const char *mxq_energy_completeness_to_string(enum mxq_energy_completeness c);

/*
 * Energy between two readings of a counter that wraps to 0 after reaching
 * max_range (RAPL: max_energy_range_uj; 0 = range unknown). A reading below
 * the previous one is one wrap when max_range is known and prev <= max_range;
 * otherwise the counter was reset and the interval is unknown: -ERANGE.
 * Units are whatever the counter counts. 0 and *ret_delta, or -ERANGE.
 */
int mxq_energy_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range,
			     uint64_t *ret_delta);

/* Energy (J) of an interval of dt_ms between power readings p0 and p1 (W),
 * by the trapezoid rule. Negative readings count as 0. */
double mxq_energy_trapezoid_j(double p0_w, double p1_w, uint64_t dt_ms);

/* Power (W) of the linear model: idle_w + per_slot_w x busy slots. */
double mxq_energy_model_watts(double idle_w, double per_slot_w, uint32_t busy_slots);

/* ---------------------------------------------------------- ring buffer */

/* One node sample: sizeof() is the memory per sample (see bench_energy). */
struct mxq_energy_sample {
	uint64_t t_ms;          /* realtime, ms since the epoch */
	double energy_j;        /* cumulative node energy measured by this mxqd */
	float watts;            /* average power over the interval ending here */
	uint8_t method;         /* enum mxq_energy_method */
	uint8_t valid;          /* 0: the interval ending here was not measured */
	uint16_t jobs;          /* jobs running during the interval */
};

/* A fixed-capacity ring of samples; the oldest is overwritten when full. */
struct mxq_energy_ring {
	struct mxq_energy_sample *samples;
	size_t capacity;
	size_t count;           /* samples held, <= capacity */
	size_t head;            /* index where the next sample goes */
	uint64_t pushed;        /* samples pushed ever: detects wrap-around */
};

/* Allocate CAPACITY (> 0) samples. 0, -EINVAL or -ENOMEM. */
int mxq_energy_ring_init(struct mxq_energy_ring *ring, size_t capacity);
/* Free the samples. NULL-safe, idempotent. */
void mxq_energy_ring_done(struct mxq_energy_ring *ring);
/* Append a sample (overwrites the oldest when full). */
void mxq_energy_ring_push(struct mxq_energy_ring *ring, const struct mxq_energy_sample *s);
/* The i-th held sample, 0 = oldest; NULL when i >= count. */
const struct mxq_energy_sample *mxq_energy_ring_get(const struct mxq_energy_ring *ring, size_t i);
/* The newest sample or NULL. */
const struct mxq_energy_sample *mxq_energy_ring_last(const struct mxq_energy_ring *ring);
/*
 * Cumulative energy at time T, interpolated linearly between the samples
 * around it. -ERANGE when T is before the oldest held sample (the buffer
 * no longer reaches back; also when empty) or after the newest.
 */
int mxq_energy_ring_energy_at(const struct mxq_energy_ring *ring, uint64_t t_ms, double *ret_j);
/* Highest interval power among samples in (t0, t1]; 0 when none. */
double mxq_energy_ring_peak_watts(const struct mxq_energy_ring *ring, uint64_t t0_ms, uint64_t t1_ms);

/* ----------------------------------------------------------- attribution */

/* One job during one interval. */
struct mxq_energy_share_in {
	uint32_t slots;         /* slots the job holds */
	uint64_t cpu_us;        /* CPU time (utime + stime) the job used in the interval */
	bool cpu_known;         /* false: its CPU time could not be read */
};

struct mxq_energy_share_out {
	double energy_j;        /* idle share + active share */
	double active_j;        /* share of the energy above the idle baseline */
};

/*
 * Split INTERVAL_J, measured over DT_MS, among N jobs.
 *   idle part   = min(interval, idle_w x dt): each job gets slots/node_slots
 *                 of it (node_slots is raised to the jobs' sum when smaller);
 *                 the rest belongs to the node as idle energy.
 *   active part = the remainder: split by each job's share of the jobs' CPU
 *                 time; by slots when any job's CPU time is unknown or all
 *                 are zero.
 * With no jobs everything is idle energy. ret_out has N entries;
 * *ret_unattributed_j gets the node's idle energy. 0, or -EINVAL for a
 * negative interval.
 */
int mxq_energy_attribute(double interval_j, uint64_t dt_ms, double idle_w, uint32_t node_slots,
			 const struct mxq_energy_share_in *jobs, size_t n,
			 struct mxq_energy_share_out *ret_out, double *ret_unattributed_j);

/* ------------------------------------------------------- per-job totals */

struct mxq_energy_job_acc {
	double energy_j;
	double active_j;
	double peak_w;          /* highest interval power of the job's share */
	uint64_t measured_ms;   /* time covered by measured intervals */
	uint64_t missing_ms;    /* time of intervals that could not be measured */
	uint32_t samples;       /* measured intervals */
	uint8_t method;         /* least exact method used (enum mxq_energy_method) */
	bool incomplete;        /* known to miss energy (e.g. started before this mxqd) */
};

/* Start an accumulator (all zero, method counter). */
void mxq_energy_job_acc_init(struct mxq_energy_job_acc *acc);
/* Add one measured interval's share. */
void mxq_energy_job_acc_add(struct mxq_energy_job_acc *acc, const struct mxq_energy_share_out *share,
			    uint64_t dt_ms, enum mxq_energy_method method);
/* Record an interval of DT_MS that could not be measured. */
void mxq_energy_job_acc_gap(struct mxq_energy_job_acc *acc, uint64_t dt_ms);
/* none: nothing measured; partial: gaps or marked incomplete; else full. */
enum mxq_energy_completeness mxq_energy_job_acc_completeness(const struct mxq_energy_job_acc *acc);
/* Average power over the measured time (0 when none). */
double mxq_energy_job_acc_avg_watts(const struct mxq_energy_job_acc *acc);

/* ----------------------------------------------------------- boot energy */

/*
 * Boot overhead: the energy a node used from its boot until the first
 * sample of its mxqd, counted once per boot. Which boot a node is in, and
 * how long ago it began, comes from one of three sources (mxqd
 * --energy-boot):
 *   kernel  the kernel's boot_id and CLOCK_BOOTTIME (a real node)
 *   none    no boot overhead: simulated or container nodes that share one
 *           kernel, whose boot is not theirs
 *   ID@EPOCH  a boot named ID that began at EPOCH (realtime seconds): a
 *           simulated node whose power switch knows when it was switched on
 */
enum mxq_energy_boot_mode {
	MXQ_ENERGY_BOOT_KERNEL = 0,
	MXQ_ENERGY_BOOT_NONE,
	MXQ_ENERGY_BOOT_GIVEN,
};

#define MXQ_ENERGY_BOOT_ID_MAX 64   /* bytes of a boot id, with the NUL */

struct mxq_energy_boot_spec {
	enum mxq_energy_boot_mode mode;
	char id[MXQ_ENERGY_BOOT_ID_MAX]; /* GIVEN: the boot's name */
	uint64_t at_ms;                  /* GIVEN: realtime of its start */
};

/*
 * Parse an --energy-boot value: "kernel", "none" or "ID@EPOCH" (ID 1..63
 * characters of A-Z a-z 0-9 . _ : -, EPOCH non-negative seconds, decimals
 * allowed). 0 or -EINVAL; *ret untouched on failure.
 */
int mxq_energy_boot_parse(const char *s, struct mxq_energy_boot_spec *ret);

/*
 * The boot this node is in and the seconds from its start to NOW_REAL_MS:
 * for kernel, KERNEL_BOOT_ID and KERNEL_UPTIME_S (the caller reads them:
 * /proc/sys/kernel/random/boot_id and CLOCK_BOOTTIME, so tests inject
 * any); for ID@EPOCH, the spec's ID and NOW_REAL_MS - EPOCH. 0, or
 * -ENOENT when there is no boot to count (none; an empty kernel boot id).
 */
int mxq_energy_boot_identify(const struct mxq_energy_boot_spec *spec, const char *kernel_boot_id,
			     double kernel_uptime_s, uint64_t now_real_ms,
			     char ret_id[MXQ_ENERGY_BOOT_ID_MAX], double *ret_since_s);

/*
 * Boot overhead (J) to record: SINCE_BOOT_S (boot start to mxqd's baseline
 * sample) x WATTS (the first measured power) when BOOT_ID is not
 * COUNTED_ID (the boot an earlier mxqd of this node recorded; "" none) and
 * SINCE_BOOT_S is in (0, WINDOW_S] (an mxqd started long after its boot
 * did not see it). 0 otherwise, also for negative WATTS.
 */
double mxq_energy_boot_j(const char *boot_id, const char *counted_id, double since_boot_s,
			 double window_s, double watts);

/* ---------------------------------------------------------------- config */

/*
 * Parse "IDLE_W:PER_SLOT_W" (non-negative decimals, e.g. "80:12.5").
 * 0 or -EINVAL; outputs untouched on failure.
 */
int mxq_energy_parse_model(const char *s, double *ret_idle_w, double *ret_per_slot_w);

#endif
