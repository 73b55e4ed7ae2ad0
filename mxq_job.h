/*
 * mxq_job - the mxq_job table: every statement mxqd makes on job rows and
 * the one mapping from a job row (joined with its group) to struct
 * mxq_job_row.
 *
 * A job moves INQ -> ASSIGNED (the claim) -> RUNNING -> a terminal status;
 * every write here is conditional on the status the caller expects, so a
 * concurrent admin action (mxqkill) or another daemon is never
 * overwritten: the affected-row count says who won. Single statements:
 * mx_db retries one that lost a deadlock or a Galera certification, never
 * one whose connection was lost (a claim must not run twice).
 *
 * Units: job_memory MiB, job_time minutes, job_tmpdir_size GiB in the row
 * and MiB in the struct (the conversion of mxq_group.h).
 *
 * Errors: negative errno, the database's message in mx_db_error(). No
 * logging here.
 */
#ifndef MXQ_JOB_H
#define MXQ_JOB_H

#include <stdint.h>
#include <sys/types.h>

struct mx_db;
struct mx_db_result;

/* Job statuses in which a job holds a node (mysql/create_triggers.sql),
 * for an IN (...) list. */
#define MXQ_JOB_ACTIVE_STATUSES "100,150,200,250,300,350,399,989"

/* The columns of a job joined with its group (aliases j and g), in the
 * order mxq_job_from_row() reads them. */
#define MXQ_JOB_COLUMNS \
	"j.job_id, j.group_id, j.job_workdir, j.job_argv, j.job_stdout, j.job_stderr, " \
	"j.job_umask, j.job_callback, j.job_status, g.user_uid, g.user_name, g.user_gid, " \
	"g.user_group, g.job_threads, g.job_memory, g.job_time, g.job_gpu, g.job_tmpdir_size"
/* How many columns MXQ_JOB_COLUMNS is, and where job_id is among them
 * (for a message about a row that could not be mapped). */
#define MXQ_JOB_NCOLS 18
#define MXQ_JOB_COL_ID 0

/* A job as mxqd runs it. Strings are owned ("" for NULL columns). */
struct mxq_job_row {
	uint64_t job_id, group_id;
	int status;                 /* job_status as read */
	char *workdir;
	char **argv;                /* NULL when job_argv is missing, malformed or empty */
	char *stdout_path, *stderr_path;
	mode_t umask;               /* permission bits only */
	char *callback;
	uid_t uid;
	char *user_name;
	gid_t gid;
	char *group_name;
	uint32_t threads;
	uint64_t memory_mib;
	uint64_t time_min;
	uint32_t gpus;
	uint64_t tmpdir_mib;        /* 0 = no tmpdir quota */
};

/*
 * Fill *RET from the MXQ_JOB_COLUMNS that start at column COL of the
 * current row of RES. A bad job_argv is not an error (argv NULL: the job
 * is to fail, not to vanish). 0 or -ENOMEM (then *RET is untouched);
 * release with mxq_job_row_done().
 */
int mxq_job_from_row(struct mxq_job_row *ret, const struct mx_db_result *res, unsigned col);
/* Free what a row owns and clear it. NULL is fine. */
void mxq_job_row_done(struct mxq_job_row *row);

/* Resource usage of an ended job, as recorded in the stats_* columns. */
struct mxq_job_stats {
	int wait_status;            /* as from wait4() */
	uint64_t utime_us, stime_us, real_us;
	int64_t maxrss_kib, minflt, majflt, nswap, inblock, oublock, nvcsw, nivcsw;
	uint64_t max_sumrss_kib;
	/* for a job whose RUNNING was never recorded (0: keep the row's) */
	uint64_t start_s;           /* date_start, Unix seconds */
	pid_t pid;                  /* host_pid */
};

/* Who claims: this mxqd's registration. */
struct mxq_job_claimer {
	uint64_t daemon_id;
	const char *hostname, *daemon_name;
};

/*
 * Read up to LIMIT queued jobs of GROUP_ID in claim order (job priority,
 * then id), MXQ_JOB_COLUMNS rows. Row count or negative errno.
 */
int64_t mxq_job_query_queued(struct mx_db *db, struct mx_db_result **ret_res, uint64_t group_id,
			     uint64_t limit);

/*
 * The claim: ONE conditional UPDATE, INQ -> ASSIGNED to C with SLOTS, that
 * claims nothing when the power manager's drain of C's host has
 * committed (the drain guard of DESIGN §5.4). 1 when claimed, 0 when
 * another daemon won, the job is no longer queued or the host is being
 * drained; negative errno (-ENOTCONN: the claim may have committed).
 */
int64_t mxq_job_claim(struct mx_db *db, const struct mxq_job_claimer *c, uint64_t job_id,
		      uint32_t slots);

/* ASSIGNED -> RUNNING with the job's PID and date_start. 1, 0 when the
 * job was no longer ASSIGNED (cancelled while starting), or -errno. */
int64_t mxq_job_set_running(struct mx_db *db, uint64_t job_id, pid_t pid);

/* Back to the queue, if still ASSIGNED (a claim never started). 0 or
 * negative errno. */
int mxq_job_requeue_claimed(struct mx_db *db, uint64_t job_id);

/*
 * Record terminal STATUS with the usage ST of a job that is still active
 * (also straight from ASSIGNED: ST's start and pid fill date_start and
 * host_pid where they are not set). 1 when recorded, 0 when the job was no
 * longer active (someone else ended it), negative errno.
 */
int64_t mxq_job_record_end(struct mx_db *db, uint64_t job_id, int status,
			   const struct mxq_job_stats *st);

/* Whether the job row holds the end mxq_job_record_end(STATUS, ST) writes
 * (its status and usage figures): 1 yes, 0 no, negative errno. Tells an
 * end that took, its answer lost with the connection, from one someone
 * else recorded. */
int64_t mxq_job_end_is(struct mx_db *db, uint64_t job_id, int status,
		       const struct mxq_job_stats *st);

/* Store why a job was refused (job_reason, cut to 1000 characters).
 * Affected rows or negative errno (an old schema has no job_reason). */
int64_t mxq_job_set_reason(struct mx_db *db, uint64_t job_id, const char *reason);

/* The ids of DAEMON_ID's ASSIGNED jobs. Row count or negative errno. */
int64_t mxq_job_query_assigned(struct mx_db *db, struct mx_db_result **ret_res, uint64_t daemon_id);

/* The ids of DAEMON_ID's active jobs that are CANCELLING or whose group is
 * cancelled. Row count or negative errno. */
int64_t mxq_job_query_to_cancel(struct mx_db *db, struct mx_db_result **ret_res,
				uint64_t daemon_id);

/* CANCELLING -> CANCELLED for a job DAEMON_ID claimed but never started.
 * Affected rows or negative errno. */
int64_t mxq_job_cancel_unstarted(struct mx_db *db, uint64_t job_id, uint64_t daemon_id);

/* Cancel the queued, unclaimed jobs of GROUP_ID. Affected rows or
 * negative errno. */
int64_t mxq_job_cancel_queued(struct mx_db *db, uint64_t group_id);

/* The mark mysql/create_triggers.sql gives a queued job that only this
 * tree's mxqd may claim (every job with a callback carries it until its
 * claim writes the daemon's name instead). */
#define MXQ_JOB_NEEDS_OURS "mxq-needs-0.9"

/*
 * Callbacks of jobs cancelled before anyone claimed them (mxqkill, or mxqd
 * for a group that upstream's mxqkill cancelled): such a row is CANCELLED
 * with host_hostname '' and the mark above, and its date_end says when.
 * (The job trigger takes the mark from a job cancelled while queued that
 * has no callback, so the index range holds only those with one.)
 * mxq_job_query_cancelled_callbacks() reads up to LIMIT of those cancelled
 * within the last day (MXQ_JOB_COLUMNS, then the group's
 * MXQ_GROUP_REQS_COLUMNS; an index range of mxq_job_host); row count or
 * negative errno. mxq_job_claim_cancelled_callback() takes one over for
 * C's daemon, which then runs the callback: it writes C's host, name and
 * daemon id (the host of a CANCELLED job that never started is where its
 * callback ran). 1 when taken, 0 when another mxqd was first, or negative
 * errno. Rows cancelled before this existed have no date_end and are left
 * alone.
 */
int64_t mxq_job_query_cancelled_callbacks(struct mx_db *db, struct mx_db_result **ret_res,
					  uint64_t limit);
int64_t mxq_job_claim_cancelled_callback(struct mx_db *db, const struct mxq_job_claimer *c,
					 uint64_t job_id);

/* Job JOB_ID as MXQ_JOB_COLUMNS (one row or none). Row count or negative
 * errno. */
int64_t mxq_job_query_one(struct mx_db *db, struct mx_db_result **ret_res, uint64_t job_id);

/* Job JOB_ID as MXQ_JOB_COLUMNS when it ended (no longer active, date_end
 * set) on C's host and daemon name: one row or none. For recovery: an
 * outcome left in the spool of a job whose end is on record. Row count or
 * negative errno. */
int64_t mxq_job_query_ended_by(struct mx_db *db, struct mx_db_result **ret_res,
			       const struct mxq_job_claimer *c, uint64_t job_id);

/* The active jobs an mxqd of C's host and name left (MXQ_JOB_COLUMNS rows),
 * for recovery after a restart. Row count or negative errno. */
int64_t mxq_job_query_left_by(struct mx_db *db, struct mx_db_result **ret_res,
			      const struct mxq_job_claimer *c);

/* Take over an active job of an earlier mxqd for DAEMON_ID (an ASSIGNED
 * one that left traces becomes RUNNING). Affected rows or negative errno. */
int64_t mxq_job_adopt(struct mx_db *db, uint64_t job_id, uint64_t daemon_id);
/* The same, keeping the status: a claimed job whose reaper has not said
 * yet whether it starts it stays ASSIGNED (it can still go back to the
 * queue). Affected rows or negative errno. */
int64_t mxq_job_adopt_claimed(struct mx_db *db, uint64_t job_id, uint64_t daemon_id);

#endif
