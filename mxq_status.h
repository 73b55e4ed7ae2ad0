/*
 * mxq_status - job, group and daemon status codes (upstream MXQ numbers)
 * with their string tables and one predicate per question asked of them.
 */
#ifndef MXQ_STATUS_H
#define MXQ_STATUS_H

#include <stdbool.h>

enum mxq_job_status {
	MXQ_JOB_STATUS_INQ         = 0,
	MXQ_JOB_STATUS_ASSIGNED    = 100,
	MXQ_JOB_STATUS_LOADED      = 150,
	MXQ_JOB_STATUS_RUNNING     = 200,
	MXQ_JOB_STATUS_UNKNOWN_RUN = 250,
	MXQ_JOB_STATUS_EXTRUNNING  = 300,
	MXQ_JOB_STATUS_STOPPED     = 350,
	MXQ_JOB_STATUS_KILLING     = 399,
	MXQ_JOB_STATUS_KILLED      = 400,
	MXQ_JOB_STATUS_FAILED      = 750,
	MXQ_JOB_STATUS_UNKNOWN_PRE = 755,
	MXQ_JOB_STATUS_CANCELLING  = 989,
	MXQ_JOB_STATUS_CANCELLED   = 990,
	MXQ_JOB_STATUS_UNKNOWN     = 999,
	MXQ_JOB_STATUS_FINISHED    = 1000,
	MXQ_JOB_STATUS_EXIT        = 1024,
};

enum mxq_group_status {
	MXQ_GROUP_STATUS_OK        = 0,
	MXQ_GROUP_STATUS_CANCELLED = 99,
};

#define MXQ_GROUP_FLAG_CLOSED 0x1ULL
/*
 * Set (together with CLOSED) by the mxq_group triggers on groups with
 * requirements upstream MXQ 0.22 does not know (tags, prerequisites, GPUs,
 * white/blacklists, tmpdir): upstream mxqsub joins only groups without
 * CLOSED, so its jobs never land in such a group. For this version a group
 * is closed when its flags & (CLOSED | NEW_ONLY) == CLOSED; see
 * mxq_group_flags_closed().
 */
#define MXQ_GROUP_FLAG_NEW_ONLY 0x2ULL

/* Is a group with these flags closed to new jobs (for this version)? */
static inline int mxq_group_flags_closed(unsigned long long flags)
{
	return (flags & (MXQ_GROUP_FLAG_CLOSED | MXQ_GROUP_FLAG_NEW_ONLY)) == MXQ_GROUP_FLAG_CLOSED;
}

enum mxq_daemon_status {
	MXQ_DAEMON_STATUS_IDLE        = 0,
	MXQ_DAEMON_STATUS_RUNNING     = 10,
	MXQ_DAEMON_STATUS_WAITING     = 20,
	MXQ_DAEMON_STATUS_FULL        = 30,
	MXQ_DAEMON_STATUS_BACKFILL    = 40,
	MXQ_DAEMON_STATUS_CPUOPTIMAL  = 50,
	MXQ_DAEMON_STATUS_TERMINATING = 200,
	MXQ_DAEMON_STATUS_EXITED      = 250,
	MXQ_DAEMON_STATUS_CRASHED     = 255,
};

/* "INQ", "RUNNING", ...; "UNKNOWN(%d)"-style codes give NULL. */
const char *mxq_job_status_to_name(int status);
/* Name (case-insensitive) or decimal code to status; -EINVAL if neither. */
int mxq_job_status_from_name(const char *name);
const char *mxq_group_status_to_name(int status);
const char *mxq_daemon_status_to_name(int status);

/* The counter a job status is counted in: "inq", "running", "finished",
 * "failed", "cancelled" or "unknown" (mirrors mysql/create_triggers.sql). */
const char *mxq_job_status_category(int status);
/* No further transition will happen. */
bool mxq_job_status_is_terminal(int status);
/* Holds slots on a node (claimed, loaded, running, being killed). */
bool mxq_job_status_is_active(int status);

#endif
