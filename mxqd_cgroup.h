/*
 * mxqd_cgroup.h - one cgroup per job and per callback (mxqd_cgroup.c).
 *
 * mxqd_cgroup_init() detects the layout under the cgroup root once; every
 * other call works on the hierarchies it found. Forked processes (reapers,
 * callback supervisors) inherit the detected layout.
 */
#ifndef MXQD_CGROUP_H
#define MXQD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MXQD_CGROUP_DEFAULT_ROOT "/sys/fs/cgroup"

enum mxqd_cgroup_layout {
	MXQD_CGROUP_NONE,       /* no writable tree: session-based containment */
	MXQD_CGROUP_V2,         /* everything on the unified hierarchy */
	MXQD_CGROUP_HYBRID,     /* v2 (ROOT/unified) for membership, kill, cpu.stat;
	                           v1 memory for limits */
	MXQD_CGROUP_V1,         /* v1 freezer, cpuacct, memory */
};

/* Name of a layout ("none", "v2", "hybrid", "v1"). */
const char *mxqd_cgroup_layout_name(enum mxqd_cgroup_layout layout);

/*
 * The name of a daemon's parent cgroup: "mxqd-HOSTNAME@DAEMON_NAME.XXXXXXXX",
 * XXXXXXXX a hash of INSTANCE (mxqd passes the real path of its spool
 * directory, which one running mxqd holds alone). A host name has no '@',
 * so different (HOSTNAME, DAEMON_NAME) pairs never give one name, and two
 * mxqd of the same names with spools of their own (test instances on one
 * machine) get different ones; the same mxqd restarted gets the same.
 */
void mxqd_cgroup_parent_name(char *buf, size_t len, const char *hostname, const char *daemon_name,
			     const char *instance);

/*
 * Detect the layout under ROOT (the directory the cgroup filesystems are
 * mounted on), create this daemon's parent cgroup NAME below mxqd's own
 * cgroup in every hierarchy used and hold it for this process alone (an
 * exclusive lock until mxqd_cgroup_fini(), not inherited by an exec): what
 * is in it is then this daemon's, and mxqd_cgroup_clear() may kill it.
 * Writes one human sentence describing the result (or why containment is
 * off) into MSG. Returns 0 with *RET_LAYOUT (NONE when nothing writable
 * was found), or -EBUSY when another running process holds NAME (then
 * nothing is used or removed; MSG says so).
 */
int mxqd_cgroup_init(const char *root, const char *name, enum mxqd_cgroup_layout *ret_layout,
		     char *msg, size_t len);

/*
 * Where ROOT has v1 hierarchies but no cgroup2 tree: mount cgroup2 on
 * DIR (created if missing; an existing cgroup2 mount there is reused) so
 * that mxqd_cgroup_init() finds the hybrid layout. Call before it.
 * 0, -EEXIST when ROOT has a cgroup2 tree already, or -errno.
 */
int mxqd_cgroup_v2_mount(const char *root, const char *dir);

/* The layout found by mxqd_cgroup_init() (NONE before). */
enum mxqd_cgroup_layout mxqd_cgroup_layout(void);

/* Does the layout enforce memory limits (memory controller writable)? */
bool mxqd_cgroup_has_memory(void);

/* Remove this daemon's (empty) parent cgroups; at exit. */
void mxqd_cgroup_fini(void);

/* A job's or callback's cgroup: the same leaf name in every hierarchy used. */
struct mxqd_cgroup {
	char leaf[64];
};

/* Leaf name for a job ("job-ID") and a job's callback ("callback-ID"). */
void mxqd_cgroup_job(struct mxqd_cgroup *cg, uint64_t job_id);
void mxqd_cgroup_callback(struct mxqd_cgroup *cg, uint64_t job_id);

/*
 * Create the cgroup (an existing one is reused) with memory limits: SOFT
 * (v2 memory.high, v1 memory.soft_limit_in_bytes: above it the kernel
 * reclaims and throttles the cgroup first) and HARD (memory.max,
 * memory.limit_in_bytes: the OOM killer acts inside the cgroup; no swap
 * beyond it). 0 = no limit. 0 or -errno; on failure nothing is left behind.
 */
int mxqd_cgroup_create(const struct mxqd_cgroup *cg, uint64_t soft_bytes, uint64_t hard_bytes);

/* Does the cgroup exist (re-adoption)? */
bool mxqd_cgroup_exists(const struct mxqd_cgroup *cg);

/* Move the calling process into the cgroup (before it drops privileges). */
int mxqd_cgroup_join(const struct mxqd_cgroup *cg);

/* For a child forked straight into the unified cgroup (mxqd_cgroup_v2_fd):
 * join the other hierarchies in use (v1 memory in a hybrid layout). */
int mxqd_cgroup_join_rest(const struct mxqd_cgroup *cg);

/* The cgroup's unified (v2) directory, open O_CLOEXEC, for
 * mx_fork_into_cgroup_with_pipe(); -ENOTSUP without one. */
int mxqd_cgroup_v2_fd(const struct mxqd_cgroup *cg);

/* Send SIG to every process in the cgroup. Returns the number signalled. */
int mxqd_cgroup_signal(const struct mxqd_cgroup *cg, int sig);

/* Sum of the resident set size, in KiB, of every process in the cgroup:
 * the memory to poll where no memory controller enforces a limit.
 * 0 or -errno; *RET_KIB untouched on failure. */
int mxqd_cgroup_rss_kib(const struct mxqd_cgroup *cg, uint64_t *ret_kib);

/*
 * Kill every process in the cgroup (v2 cgroup.kill; v1 freeze, SIGKILL,
 * thaw) and wait up to TIMEOUT_MS until it is empty. 0, or -EBUSY when
 * processes remain.
 */
int mxqd_cgroup_kill(const struct mxqd_cgroup *cg, unsigned timeout_ms);

/* Remove the (empty) cgroup in every hierarchy. 0 or the first -errno. */
int mxqd_cgroup_remove(const struct mxqd_cgroup *cg);

/*
 * Make sure nothing is left under CG's name (a job id used again: requeued,
 * or a new database; a job given up as lost): kill every process in it, in
 * every hierarchy, wait up to TIMEOUT_MS until it is empty, and remove it.
 * What is there is this daemon's own (its parent is held by
 * mxqd_cgroup_init). Returns how many processes it held (0: none, or no
 * such cgroup), -EBUSY when processes survive SIGKILL or it cannot be
 * removed (sub-cgroups), or another -errno.
 */
int mxqd_cgroup_clear(const struct mxqd_cgroup *cg, unsigned timeout_ms);

/* What the kernel accounted for a cgroup. Fields it cannot give are 0. */
struct mxqd_cgroup_stats {
	uint64_t user_us, system_us;  /* CPU time of every process ever in it */
	uint64_t memory_peak_bytes;   /* memory high-water mark */
	uint64_t oom_kills;           /* processes the OOM killer ended in it */
	bool have_cpu, have_memory;
};

/* Processes the OOM killer ended in the cgroup (0 also when unknown). */
uint64_t mxqd_cgroup_oom_kills(const struct mxqd_cgroup *cg);

/* Read the cgroup's accounting. 0 or -errno. */
int mxqd_cgroup_stats(const struct mxqd_cgroup *cg, struct mxqd_cgroup_stats *ret);

/*
 * Open the cgroup's CPU counter for repeated cheap reads (energy split).
 * Returns an fd or -errno; close() it when done.
 */
int mxqd_cgroup_cpu_open(const struct mxqd_cgroup *cg);
/* mxqd_cgroup_cpu_open() of job JOB_ID's cgroup; -ENOTSUP without cgroups. */
int mxqd_cgroup_job_cpu_open(uint64_t job_id);
/* Read the CPU time (µs) from an fd of mxqd_cgroup_cpu_open(). 0 or -errno. */
int mxqd_cgroup_cpu_read(int fd, uint64_t *ret_us);

/* Path of the cgroup in its main hierarchy (for log lines). */
void mxqd_cgroup_path(const struct mxqd_cgroup *cg, char *buf, size_t len);

#endif
