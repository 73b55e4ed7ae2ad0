/*
 * mxqd.h - the node daemon's internal interfaces.
 *
 * mxqd.c        main loop, options, signals, registration and heartbeat
 * mxqd_job.c    job lifecycle against the database: claim, start, finish,
 *               cancel, recovery; the status hooks; job callbacks
 * mxqd_reaper.c the per-job reaper process: runs one job as its user,
 *               enforces its limits and leaves its outcome in the spool dir
 *
 * Every job start and every terminal outcome passes through
 * mxqd_hooks_job_started() / mxqd_hooks_job_ended(); power management and
 * energy accounting register there and never touch the job code.
 */
#ifndef MXQD_H
#define MXQD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "mx_db.h"
#include "mxqd_control.h"

struct mxqd_job;

/* The directories a job gets its tmpdir on ("/tmp", "/var/tmp"). */
#define MXQD_JOB_TMP_DIRS 2
extern const char *const mxqd_job_tmp_dirs[MXQD_JOB_TMP_DIRS];

/* Everything the daemon knows about itself; one instance, set up by main(). */
struct mxqd_server {
	/* configuration (options) */
	char *daemon_name;          /* --daemon-name, default "main" */
	char *hostname;             /* --hostname, default gethostname() */
	char *short_hostname;
	char *tags_text;            /* --tags as given */
	char *prerequisites_text;   /* --prerequisites as given */
	uint32_t slots;             /* --slots */
	uint64_t memory_mib;        /* --memory */
	uint64_t maxtime_min;       /* --max-time, 0 = unlimited */
	uint32_t gpus;              /* --gpus */
	char *tmpdir;               /* --tmpdir: parent of per-job tmpdirs */
	char *spooldir;             /* --spool: reaper outcome files, lock */
	const char *cgroup_root;    /* --cgroup-root: where cgroup filesystems are
	                               mounted; "" or a missing dir: no cgroups */
	const char *cgroup_v2_mount; /* --cgroup-v2-mount: mount cgroup2 here if
	                               the root has none (NULL: never) */
	const char *db_defaults_file;
	const char *db_group;
	unsigned poll_interval_ms;  /* how often the queue is looked at */
	unsigned heartbeat_interval_s;
	unsigned callback_timeout_s;
	unsigned kill_grace_s;      /* SIGTERM -> SIGKILL for killed jobs */
	unsigned memory_hard_pct;   /* --memory-limit-hard: a job is killed above this
	                               % of its memory request (soft limit: 100 %) */
	double runtime_scale;       /* --runtime-scale: job runtime limit = job_time
	                               minutes x this (time-scaled tests and demos) */
	uint32_t min_uid;           /* --min-uid: lowest uid a job may run as (1000) */
	bool allow_root_jobs;       /* --allow-root-jobs: lifts --min-uid and the uid 0 ban */
	bool shared_tmp;            /* --shared-tmp (older name --shared-dev-shm): jobs
	                               see the host's /dev/shm, /tmp and /var/tmp (default,
	                               as root: a tmpfs of the job's own on /dev/shm and
	                               its tmpdir on /tmp and /var/tmp) */
	struct rlimit job_core_limit; /* RLIMIT_CORE at start; mxqd itself runs with 0 */

	/* derived */
	struct mxq_server_caps caps;
	uint64_t memory_per_slot_mib;
	bool is_root;
	bool cgroups;               /* jobs and callbacks run in cgroups of their own */
	bool private_tmp[MXQD_JOB_TMP_DIRS]; /* mxqd_job_tmp_dirs[i] of a job is its tmpdir
	                               (root, not shared_tmp, --tmpdir not below it) */
	char boot_id[37];
	unsigned long long pid_starttime;

	/* runtime */
	struct mx_db *db;
	uint64_t daemon_id;
	struct mxqd_job *jobs;      /* running and finishing jobs (list) */
	uint32_t slots_running;
	uint32_t threads_running;
	uint32_t jobs_running;
	uint32_t gpus_running;
	uint64_t memory_running_mib;
	bool accepting;             /* false after SIGTERM/SIGINT (a power drain is
	                               enforced by the claim guard instead) */
	bool claim_uncertain;       /* a claim UPDATE failed without an answer (lost
	                               connection): it may have committed */
	bool disk_fault;            /* the tmpdir or the spool cannot take a job: no
	                               claims until a probe succeeds (mxqd_jobs_disk_tick) */
	char disk_fault_reason[1024];
	bool fds_short;             /* too few descriptors for another job (said once) */
	bool fds_full;              /* the last claim found no room for another job's
	                               descriptors: the heartbeat says so (a pause
	                               reason) until a job's end makes room */
	uint32_t fds_full_jobs;     /* jobs running when it was found */
	char fds_full_reason[160];
	uint64_t short_until_ms;    /* monotonic: no claims before (a job start ran
	                               out of descriptors or memory) */
};

/* One job this daemon runs (or re-adopted after a restart). */
struct mxqd_job {
	struct mxqd_job *next;
	uint64_t job_id;
	uint64_t group_id;
	uid_t uid;
	gid_t gid;
	char *user_name;
	char *group_name;
	gid_t *groups;              /* supplementary groups of the user (from mxqd's */
	int ngroups;                /* cache: no NSS lookup per job); -1 = look up */
	char *workdir;
	char **argv;
	char *stdout_path;
	char *stderr_path;
	mode_t umask;
	uint32_t threads;
	uint64_t memory_mib;
	uint64_t time_min;
	uint32_t gpus;
	uint32_t slots;
	uint64_t tmpdir_mib;        /* --tmpdir SIZE of its group, 0 = no quota */
	char *callback;
	pid_t reaper_pid;           /* our child unless adopted; 0 once it is gone */
	unsigned long long reaper_starttime; /* to tell a reused pid from the reaper */
	pid_t job_pid;              /* = process group and session of the job */
	int report_fd;              /* the reaper's report pipe, -1 when none: the job's pid
	                               line ("!REASON" when the spool cannot take the job),
	                               and its outcome if the spool cannot take that */
	char *report;               /* what came on it so far (report_len bytes) */
	size_t report_len;
	bool starting;              /* reaper forked, job's pid not yet reported */
	bool kill_pending;          /* killed while starting: signal once the pid is known */
	bool running_pending;       /* runs, RUNNING not yet in the database (see
	                               mxqd_jobs_record_running) */
	uint64_t reported_ms;       /* monotonic: when its reaper reported its pid */
	uint64_t start_realtime_ms;
	uint64_t fork_us;           /* mxqd_prof_now() when its reaper was forked */
	uint64_t kill_sent_ms;      /* monotonic; 0 = not being killed */
	enum { MXQD_KILL_NONE, MXQD_KILL_CANCEL, MXQD_KILL_SHUTDOWN } kill_reason;
	bool adopted;               /* started by an earlier mxqd process */
	bool ended;                 /* outcome read, DB update pending */
	bool synced;                /* its outcome file was made durable */
	bool refused;               /* never run: identity check failed (no callback either) */
	bool reason_done;           /* the outcome's reason is recorded (or given up) */
	bool end_unanswered;        /* an attempt to record the end lost its answer */
	bool adopt_pending;         /* re-adopted, its row not yet moved to this daemon */
	bool adopted_unstarted;     /* re-adopted while its reaper had not said whether
	                               it starts it (pid file: job pid 0) */
	bool end_left;              /* ended under an earlier mxqd, which died before
	                               its hooks ran or before it knew (recovery) */
	int final_status;           /* MXQ_JOB_STATUS_* once ended */
	struct mxqd_outcome *outcome;
};

/* Phases of a reaper's life it times for the dispatch profile (prof_*
 * keys of its outcome file; mxqd_prof_reaper() adds them up). */
enum mxqd_rprof {
	MXQD_RPROF_SETUP,       /* fork until the job's cgroup: setsid, secrets, fds, tmpfs */
	MXQD_RPROF_CGROUP,      /* creating the job's cgroup with its limits */
	MXQD_RPROF_EXEC,        /* forking the job until its exec (pid file, report) */
	MXQD_RPROF_RUN,         /* the job itself, exec until wait4 */
	MXQD_RPROF_END,         /* killing what is left in the cgroup, its stats (rmdir: after the outcome) */
	MXQD_RPROF_TMPDIR,      /* unmounting and removing the job's tmpdir */
	MXQD_RPROF__N
};

/* The longest reason mxq_job.job_reason takes. */
#define MXQD_REASON_MAX 1000
/* The longest outcome text (file or report pipe; one pipe write). */
#define MXQD_OUTCOME_MAX 4096

/* What the reaper leaves in SPOOL/JOBID.stat (key=value lines). */
struct mxqd_outcome {
	int wait_status;            /* as from wait4() */
	uint64_t utime_us, stime_us, real_us;
	int64_t maxrss_kib, minflt, majflt, nswap, inblock, oublock, nvcsw, nivcsw;
	uint64_t max_sumrss_kib;    /* peak RSS of the whole job session */
	char killed[16];            /* "", "runtime", "memory" */
	char reason[MXQD_REASON_MAX + 1]; /* one line for the user's job_reason: why the job
	                               did not start, or what went wrong with its output; "" */
	bool tmpdir_left;           /* the reaper could not remove the job's tmpdir */
	uint64_t prof_us[MXQD_RPROF__N]; /* where the reaper's time went */
};

/* --- mxqd_reaper.c --- */

/* What the reaper needs to run one job; filled by mxqd_job.c. */
struct mxqd_reaper_args {
	const struct mxqd_server *server;
	const struct mxqd_job *job;
	int report_fd;              /* reaper writes "JOBPID\n" here once started */
	pid_t mxqd_pid;             /* ... and then sends SIGUSR2 to mxqd (the loop wakes) */
};

/*
 * Body of the reaper process (called in the child after fork, never
 * returns). Becomes a session leader, starts the job as its user with its
 * environment, enforces runtime and memory limits, waits for it, writes
 * SPOOL/JOBID.stat atomically and exits.
 */
_Noreturn void mxqd_reaper_run(const struct mxqd_reaper_args *args);

/* TMPDIR/mxq_job_JOBID, the job's own temporary directory. */
void mxqd_job_tmpdir_path(const struct mxqd_server *server, uint64_t job_id, char *buf, size_t len);

/* Read SPOOL/JOBID.stat. 0, -ENOENT if not (yet) there, other -errno. */
int mxqd_outcome_read(const char *spooldir, uint64_t job_id, struct mxqd_outcome *ret);
/* Parse an outcome text of LEN bytes (as in the file; unknown keys are
 * skipped). 0, or -EINVAL when it has no wait_status (not an outcome). */
int mxqd_outcome_parse(const char *text, size_t len, struct mxqd_outcome *ret);
/*
 * Reserve room in the spool for the outcome of JOB_ID (SPOOL/JOBID.stat.tmp,
 * empty, one block allocated), so that a spool that fills up while the job
 * runs still takes it; it also proves the spool takes writes now. A file of
 * that name is replaced; file systems without fallocate(2) get the file
 * without the reservation. 0 or -errno.
 */
int mxqd_outcome_reserve(const char *spooldir, uint64_t job_id);
/* Make SPOOL/JOBID.stat durable (fsync it and the spool dir), for an
 * outcome the database could not take at once. 0 or -errno. */
int mxqd_outcome_sync(const char *spooldir, uint64_t job_id);
/* The job's end hooks ran: SPOOL/JOBID.stat becomes SPOOL/JOBID.done, so
 * that an mxqd that dies before the files are removed is not taken for one
 * that died between recording the end and running the hooks (a restart
 * runs the hooks of a JOBID.stat whose end is on record). 0 or -errno. */
int mxqd_outcome_mark_done(const char *spooldir, uint64_t job_id);
/* Remove the spool files of a job (after its outcome is in the database,
 * or when it goes back to the queue). 0, or the first -errno of a file
 * that is there and could not be removed. */
int mxqd_outcome_remove(const char *spooldir, uint64_t job_id);
/* Reaper pid file SPOOL/JOBID.pid: "REAPERPID JOBPID STARTTIME BOOTID". */
int mxqd_pidfile_read(const char *spooldir, uint64_t job_id, pid_t *ret_reaper,
		      pid_t *ret_job, unsigned long long *ret_starttime, char ret_boot_id[37]);

/* --- mxqd_job.c --- */

/* Claim and start as many jobs as fit. Returns number started or -errno. */
int mxqd_jobs_start_some(struct mxqd_server *server);
/* At start: -EMFILE with the reason in ERRBUF when the open file limit
 * lets no job run; with WARN, say when it lets fewer jobs run at once than
 * --slots would (each running job keeps about two descriptors: best once
 * everything of mxqd's own is open). */
int mxqd_jobs_check_fd_limit(const struct mxqd_server *server, bool warn, char *errbuf,
			     size_t errlen);
/* Clear server->fds_full once a job ended since and room for another
 * job's descriptors is there again. */
void mxqd_jobs_fds_recheck(struct mxqd_server *server);
/* Collect ended jobs (children and adopted ones) and record them. */
int mxqd_jobs_reap(struct mxqd_server *server);
/*
 * Record RUNNING for jobs started at least MXQD_RUNNING_DELAY_MS ago (ALL:
 * every started job). A job that ends sooner goes from ASSIGNED to its end
 * in one statement (dispatch fast path: one UPDATE and its triggers less
 * per short job). A failed update is logged and not repeated (the job's
 * end is recorded from ASSIGNED). Returns the ms until the next one is
 * due (INT64_MAX: none).
 */
#define MXQD_RUNNING_DELAY_MS 50
int64_t mxqd_jobs_record_running(struct mxqd_server *server, bool all);
/* Act on cancellations requested through the database (mxqkill). */
int mxqd_jobs_handle_cancel(struct mxqd_server *server);
/*
 * The node's disks, once per loop round (cheap when all is well): while
 * server->disk_fault is set, probe the tmpdir and the spool (as a job's
 * start would use them) and clear it when they work again; retry removing
 * what ended jobs left there (a tmpdir, spool files) that could not be
 * removed at the job's end. Both every ten poll intervals, 1 to 30 s.
 */
void mxqd_jobs_disk_tick(struct mxqd_server *server);
/* What to do about database error R, as a clause to append to a log line
 * ("; ..."), or "" when there is nothing particular to say. */
const char *mxqd_db_hint(int r);
/* Escalate SIGTERM to SIGKILL for jobs past their grace time. */
void mxqd_jobs_escalate_kills(struct mxqd_server *server);
/* Terminate every job (SIGINT shutdown). */
void mxqd_jobs_kill_all(struct mxqd_server *server);
/* After registration: requeue claimed-not-started jobs (or end them
 * CANCELLED when cancelled meanwhile), adopt surviving ones, mark lost
 * ones UNKNOWN, finish the ends left in the spool. Returns 0 or -errno
 * when the database did not take all of it; calling it again is safe (what
 * is listed already is skipped). */
int mxqd_jobs_recover(struct mxqd_server *server);
/*
 * May JOB (or its callback) run as the user its row names? Always true for
 * a non-root mxqd (it runs jobs only as itself). Otherwise the row is
 * checked against the user database and --min-uid/--allow-root-jobs
 * (mxq_identity.h); false with a one-line reason when it may not.
 */
bool mxqd_job_identity_ok(const struct mxqd_server *server, const struct mxqd_job *job,
			  char *reason, size_t reason_len);
/* Free the job list (exit path). */
void mxqd_jobs_free_all(struct mxqd_server *server);
/* Reap exited callback supervisors and other stray children; never blocks. */
void mxqd_children_reap(struct mxqd_server *server);

/* --- dispatch profile (mxqd_job.c): where the main loop's time goes --- */

enum mxqd_prof {
	MXQD_PROF_CANDIDATES,   /* reading the groups that could run here */
	MXQD_PROF_CLAIM,        /* the claiming UPDATE */
	MXQD_PROF_LOAD,         /* reading the claimed job */
	MXQD_PROF_SPAWN,        /* forking the reaper until it reports the job's pid */
	MXQD_PROF_RUNNING,      /* recording RUNNING */
	MXQD_PROF_OUTCOMES,     /* looking for outcome files */
	MXQD_PROF_RECORD,       /* recording the terminal status */
	MXQD_PROF_HOOKS,        /* status hooks (energy, callbacks, power) */
	MXQD_PROF_SPOOL,        /* removing a job's spool files */
	MXQD_PROF_CANCEL,       /* reading cancellations */
	MXQD_PROF_OTHER,        /* heartbeat, power and energy ticks */
	MXQD_PROF_WAIT,         /* waiting for signals or the poll interval */
	MXQD_PROF__N
};

/* Monotonic microseconds, for mxqd_prof_add(). */
uint64_t mxqd_prof_now(void);
/* Add the time since SINCE (from mxqd_prof_now) to phase P. */
void mxqd_prof_add(enum mxqd_prof p, uint64_t since);
/* Add the phases timed by a reaper (from its outcome file). */
void mxqd_prof_reaper(const struct mxqd_outcome *o);
/* A reaper forked at FORK_US (mxqd_prof_now clock) has been reaped. */
void mxqd_prof_reaper_gone(uint64_t fork_us);
/* Log the profile (mean per job started) once, at exit. */
void mxqd_prof_log(void);

/* --- status hooks (mxqd_job.c) --- */

struct mxqd_hooks {
	void *ctx;
	/* Job is running (status RUNNING recorded). */
	void (*job_started)(void *ctx, struct mxqd_server *server, const struct mxqd_job *job);
	/* Job reached a terminal status (recorded in the database). */
	void (*job_ended)(void *ctx, struct mxqd_server *server, const struct mxqd_job *job,
			  int final_status);
};

/* Register a hook set (kept by pointer). At most MXQD_MAX_HOOKS. 0 or -ENOSPC. */
#define MXQD_MAX_HOOKS 8
int mxqd_hooks_register(const struct mxqd_hooks *hooks);
void mxqd_hooks_job_started(struct mxqd_server *server, const struct mxqd_job *job);
void mxqd_hooks_job_ended(struct mxqd_server *server, const struct mxqd_job *job, int final_status);

/* Put the calling process (a job, before its exec) into a mount namespace
 * of its own with a tmpfs of SIZE_MIB on /dev/shm. 0 or negative errno. */
int mxqd_job_private_dev_shm(uint64_t size_mib);
/* In that namespace, bind DIR (the job's tmpdir) on TARGET (an entry of
 * mxqd_job_tmp_dirs), nosuid and nodev. 0 or negative errno. */
int mxqd_job_bind_tmp(const char *dir, const char *target);

/* The job-callback runner, registered as a job_ended hook by main(). */
extern const struct mxqd_hooks mxqd_callback_hooks;
/* Run JOB's callback (if it has one and may run as its user) for
 * FINAL_STATUS; never waits for it. Also for a job that never started. */
void mxqd_callback_run(struct mxqd_server *server, const struct mxqd_job *job, int final_status);

#endif
