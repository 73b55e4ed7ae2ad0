/*
 * mxqd_job - the job lifecycle of one mxqd against the database.
 *
 *   INQ --claim--> ASSIGNED --reaper forked--> RUNNING --outcome--> FINISHED
 *                                                      |            FAILED
 *                                                      |            KILLED
 *   (mxqkill) CANCELLING --terminated------------------+----------> CANCELLED
 *
 * A job is claimed by ONE conditional UPDATE (status INQ): zero affected rows
 * means another daemon won. Every later status write is conditional on the
 * job still being in an active status, so concurrent admin actions are never
 * overwritten. Outcomes are files written by the reaper (mxqd_reaper.c); a
 * job leaves this daemon's list only after its outcome is in the database,
 * so a database outage delays bookkeeping but never loses a job.
 *
 * Status hooks: every start and every terminal outcome passes through
 * mxqd_hooks_job_started() / mxqd_hooks_job_ended() below.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_safefs.h"
#include "mx_util.h"
#include "mxq_group.h"
#include "mxq_identity.h"
#include "mxq_status.h"
#include "mxqd.h"

/* Job statuses in which a job holds a node (mysql/create_triggers.sql). */
#define ACTIVE_STATUSES "100,150,200,250,300,350,399,989"

/* ------------------------------------------------------------------ hooks */

static const struct mxqd_hooks *hooks[MXQD_MAX_HOOKS];
static unsigned n_hooks;

int mxqd_hooks_register(const struct mxqd_hooks *h)
{
	if (n_hooks >= MXQD_MAX_HOOKS)
		return -ENOSPC;
	hooks[n_hooks++] = h;
	return 0;
}

void mxqd_hooks_job_started(struct mxqd_server *server, const struct mxqd_job *job)
{
	for (unsigned i = 0; i < n_hooks; i++)
		if (hooks[i]->job_started)
			hooks[i]->job_started(hooks[i]->ctx, server, job);
}

void mxqd_hooks_job_ended(struct mxqd_server *server, const struct mxqd_job *job, int final_status)
{
	for (unsigned i = 0; i < n_hooks; i++)
		if (hooks[i]->job_ended)
			hooks[i]->job_ended(hooks[i]->ctx, server, job, final_status);
}

/* ------------------------------------------------------------- job list */

static void job_free(struct mxqd_job *job)
{
	if (!job)
		return;
	free(job->user_name);
	free(job->group_name);
	free(job->workdir);
	mx_strvec_free(job->argv);
	free(job->stdout_path);
	free(job->stderr_path);
	free(job->callback);
	free(job->outcome);
	free(job);
}

static void account(struct mxqd_server *server, const struct mxqd_job *job, int sign)
{
	server->jobs_running += (uint32_t)sign;
	server->slots_running += (uint32_t)(sign * (int64_t)job->slots);
	server->threads_running += (uint32_t)(sign * (int64_t)job->threads);
	server->gpus_running += (uint32_t)(sign * (int64_t)job->gpus);
	server->memory_running_mib += (uint64_t)(sign * (int64_t)job->memory_mib);
}

static void job_list_add(struct mxqd_server *server, struct mxqd_job *job)
{
	job->next = server->jobs;
	server->jobs = job;
	account(server, job, +1);
}

static void job_list_remove(struct mxqd_server *server, struct mxqd_job *job)
{
	for (struct mxqd_job **p = &server->jobs; *p; p = &(*p)->next) {
		if (*p == job) {
			*p = job->next;
			account(server, job, -1);
			return;
		}
	}
}

void mxqd_jobs_free_all(struct mxqd_server *server)
{
	while (server->jobs) {
		struct mxqd_job *job = server->jobs;
		job_list_remove(server, job);
		job_free(job);
	}
}

static uint32_t job_slots(const struct mxqd_server *server, uint32_t threads, uint64_t memory_mib)
{
	uint64_t by_memory = 0;

	if (server->memory_per_slot_mib)
		by_memory = (memory_mib + server->memory_per_slot_mib - 1) / server->memory_per_slot_mib;
	if (by_memory < threads)
		by_memory = threads;
	return by_memory ? (uint32_t)by_memory : 1;
}

/* Columns read for a job, joined with its group (see job_from_row). */
#define JOB_COLUMNS \
	"j.job_id, j.group_id, j.job_workdir, j.job_argv, j.job_stdout, j.job_stderr, " \
	"j.job_umask, j.job_callback, j.job_status, g.user_uid, g.user_name, g.user_gid, " \
	"g.user_group, g.job_threads, g.job_memory, g.job_time, g.job_gpu"

/* Build a job from a row of JOB_COLUMNS. NULL with errno set on failure;
 * job->argv is NULL when job_argv is malformed. */
static struct mxqd_job *job_from_row(const struct mxqd_server *server, struct mx_db_result *res)
{
	struct mxqd_job *job = calloc(1, sizeof(*job));
	int argc = 0, r;

	if (!job)
		return NULL;
	job->job_id = mx_db_u64(res, 0);
	job->group_id = mx_db_u64(res, 1);
	job->workdir = mx_db_strdup(res, 2);
	r = mx_db_str(res, 3) ? mx_argv_decode(mx_db_str(res, 3), &job->argv, &argc) : -EINVAL;
	job->stdout_path = mx_db_strdup(res, 4);
	job->stderr_path = mx_db_strdup(res, 5);
	job->umask = (mode_t)(mx_db_u64(res, 6) & 0777);
	job->callback = mx_db_strdup(res, 7);
	job->final_status = (int)mx_db_i64(res, 8); /* current status until it ends */
	job->uid = (uid_t)mx_db_u64(res, 9);
	job->user_name = mx_db_strdup(res, 10);
	job->gid = (gid_t)mx_db_u64(res, 11);
	job->group_name = mx_db_strdup(res, 12);
	job->threads = (uint32_t)mx_db_u64(res, 13);
	job->memory_mib = mx_db_u64(res, 14);
	job->time_min = mx_db_u64(res, 15);
	job->gpus = (uint32_t)mx_db_u64(res, 16);
	job->slots = job_slots(server, job->threads, job->memory_mib);
	if (!job->workdir || !job->stdout_path || !job->stderr_path || !job->callback ||
	    !job->user_name || !job->group_name) {
		job_free(job);
		errno = ENOMEM;
		return NULL;
	}
	if (r < 0 || argc < 1) {
		/* kept, so that the job ends FAILED through the usual hooks */
		mx_strvec_free(job->argv);
		job->argv = NULL;
	}
	return job;
}

/* ------------------------------------------------------ terminal outcome */

static int outcome_to_status(const struct mxqd_job *job, const struct mxqd_outcome *o)
{
	if (o->killed[0])
		return MXQ_JOB_STATUS_KILLED;           /* runtime or memory limit */
	if (job->kill_reason == MXQD_KILL_CANCEL)
		return MXQ_JOB_STATUS_CANCELLED;
	if (job->kill_reason == MXQD_KILL_SHUTDOWN)
		return MXQ_JOB_STATUS_KILLED;
	if (WIFEXITED(o->wait_status) && WEXITSTATUS(o->wait_status) == 0)
		return MXQ_JOB_STATUS_FINISHED;
	return MXQ_JOB_STATUS_FAILED;                   /* non-zero exit or own signal */
}

/* Record a terminal status. 1 when recorded, 0 when someone else already
 * ended the job, negative errno when the database must be asked again. */
static int record_end(struct mxqd_server *server, struct mxqd_job *job, int status,
		      const struct mxqd_outcome *o)
{
	static const struct mxqd_outcome none = { 0 };
	int64_t n;

	if (!o)
		o = &none;
	n = mx_db_exec(server->db,
		"UPDATE mxq_job SET job_status = ?, date_end = NOW(), stats_status = ?,"
		" stats_utime_sec = ?, stats_utime_usec = ?, stats_stime_sec = ?, stats_stime_usec = ?,"
		" stats_real_sec = ?, stats_real_usec = ?, stats_maxrss = ?, stats_minflt = ?,"
		" stats_majflt = ?, stats_nswap = ?, stats_inblock = ?, stats_oublock = ?,"
		" stats_nvcsw = ?, stats_nivcsw = ?, stats_max_sumrss = ?"
		" WHERE job_id = ? AND job_status IN (" ACTIVE_STATUSES ")",
		"iiUuUuUullllllllUU",
		status, o->wait_status,
		o->utime_us / 1000000, (unsigned)(o->utime_us % 1000000),
		o->stime_us / 1000000, (unsigned)(o->stime_us % 1000000),
		o->real_us / 1000000, (unsigned)(o->real_us % 1000000),
		o->maxrss_kib, o->minflt, o->majflt, o->nswap, o->inblock, o->oublock,
		o->nvcsw, o->nivcsw, o->max_sumrss_kib, job->job_id);
	if (n < 0)
		return (int)n;
	if (n == 0)
		mx_log_warning("job %" PRIu64 ": was no longer active in the database; status %s not recorded",
			       job->job_id, mxq_job_status_to_name(status));
	return n > 0;
}

static void describe_outcome(const struct mxqd_job *job, int status, const struct mxqd_outcome *o)
{
	char how[64] = "";

	if (!o)
		snprintf(how, sizeof(how), "outcome lost");
	else if (o->killed[0])
		snprintf(how, sizeof(how), "over its %s limit", o->killed);
	else if (WIFEXITED(o->wait_status))
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(o->wait_status));
	else if (WIFSIGNALED(o->wait_status))
		snprintf(how, sizeof(how), "signal %d", WTERMSIG(o->wait_status));
	mx_log_info("job %" PRIu64 " (group %" PRIu64 ", user %s) %s: %s",
		    job->job_id, job->group_id, job->user_name, mxq_job_status_to_name(status), how);
}

/* Try to write the outcome of an ended job; on success the job is gone. */
static int finish_job(struct mxqd_server *server, struct mxqd_job *job)
{
	int r = record_end(server, job, job->final_status, job->outcome);

	if (r < 0)
		return r;
	describe_outcome(job, job->final_status, job->outcome);
	/* hooks (callbacks, energy) only for an outcome that is on record */
	if (r > 0)
		mxqd_hooks_job_ended(server, job, job->final_status);
	mxqd_outcome_remove(server->spooldir, job->job_id);
	job_list_remove(server, job);
	job_free(job);
	return 0;
}

static bool reaper_alive(const struct mxqd_server *server, const struct mxqd_job *job,
			 unsigned long long starttime)
{
	unsigned long long now_start;

	if (job->reaper_pid <= 0)
		return false;
	if (mx_proc_starttime(job->reaper_pid, &now_start) < 0)
		return false;
	return now_start == starttime;
}

void mxqd_children_reap(struct mxqd_server *server)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (struct mxqd_job *job = server->jobs; job; job = job->next) {
			if (job->reaper_pid == pid && !job->adopted) {
				job->reaper_pid = 0;  /* gone: the outcome file must be there */
				break;
			}
		}
	}
}

int mxqd_jobs_reap(struct mxqd_server *server)
{
	int ended = 0, first_error = 0;

	mxqd_children_reap(server);
	for (struct mxqd_job *job = server->jobs, *next; job; job = next) {
		next = job->next;
		if (!job->ended) {
			struct mxqd_outcome o;
			int r = mxqd_outcome_read(server->spooldir, job->job_id, &o);

			if (r == 0) {
				job->outcome = malloc(sizeof(*job->outcome));
				if (!job->outcome)
					return -ENOMEM;
				*job->outcome = o;
				job->final_status = outcome_to_status(job, &o);
				job->ended = true;
			} else if (job->reaper_pid == 0 ||
				   (job->adopted && !reaper_alive(server, job, job->reaper_starttime))) {
				/* the reaper is gone; a last look, then the job is lost */
				if (mxqd_outcome_read(server->spooldir, job->job_id, &o) == 0)
					continue;
				mx_log_err("job %" PRIu64 ": reaper vanished without an outcome", job->job_id);
				job->final_status = MXQ_JOB_STATUS_UNKNOWN;
				job->ended = true;
			}
		}
		if (job->ended) {
			int r = finish_job(server, job);
			if (r < 0) {
				if (!first_error)
					first_error = r;
				continue;
			}
			ended++;
		}
	}
	return first_error ? first_error : ended;
}

/* ------------------------------------------------------------ starting */

bool mxqd_job_identity_ok(const struct mxqd_server *server, const struct mxqd_job *job,
			  char *reason, size_t reason_len)
{
	struct mxq_identity_claim claim = { .uid = job->uid, .user_name = job->user_name,
					    .gid = job->gid };
	struct mxq_identity_policy policy = { .min_uid = server->min_uid,
					      .allow_root_jobs = server->allow_root_jobs };

	if (!server->is_root)
		return true;
	return mxq_identity_verify(&claim, &policy, NULL, 0, reason, reason_len) == MXQ_IDENTITY_OK;
}

/*
 * What must hold before anything of a claimed job runs: its identity, and
 * a fresh temporary directory of its own (an entry already there, of any
 * kind, is never reused or followed). Returns 0 when the job may start,
 * else a negative errno with a one-line reason for job_reason.
 */
static int job_prepare(const struct mxqd_server *server, struct mxqd_job *job, char *reason,
		       size_t len)
{
	char path[4096], name[64];
	int r;

	if (!mxqd_job_identity_ok(server, job, reason, len)) {
		job->refused = true;
		return -EPERM;
	}
	snprintf(name, sizeof(name), "mxq_job_%" PRIu64, job->job_id);
	r = mx_subdir_create(server->tmpdir, name, server->is_root, job->uid, job->gid);
	mxqd_job_tmpdir_path(server, job->job_id, path, sizeof(path));
	if (r == -EEXIST)
		snprintf(reason, len, "refused: %.900s already exists (nothing was run, nothing followed; "
			 "an admin must remove it)", path);
	else if (r < 0)
		snprintf(reason, len, "cannot create the job's tmpdir %.900s: %s", path, strerror(-r));
	return r;
}

/* A claimed job that must not run: FAILED with its reason, logged once. */
static void refuse_job(struct mxqd_server *server, struct mxqd_job *job, const char *reason)
{
	char user[256], why[4096];
	int64_t n;

	/* both carry text from the row: no control characters into the log */
	mx_log_err("job %" PRIu64 " (group %" PRIu64 ", uid %u, user '%s'): %s", job->job_id,
		   job->group_id, (unsigned)job->uid, mx_term_field(job->user_name, user, sizeof(user)),
		   mx_term_field(reason, why, sizeof(why)));
	n = mx_db_exec(server->db, "UPDATE mxq_job SET job_reason = LEFT(?, 1000) WHERE job_id = ?",
		       "sU", reason, job->job_id);
	if (n < 0)
		mx_log_warning("job %" PRIu64 ": cannot record the reason (is the schema upgraded? "
			       "run mxqadmin db upgrade): %s", job->job_id, mx_db_error(server->db));
	job->final_status = MXQ_JOB_STATUS_FAILED;
	job->ended = true;
	job_list_add(server, job);
	finish_job(server, job);  /* on a database error the reaping loop retries */
}

/* Fork the reaper; returns 0 with job->reaper_pid and job->job_pid set. */
static int spawn_reaper(struct mxqd_server *server, struct mxqd_job *job)
{
	struct mxqd_reaper_args args = { .server = server, .job = job };
	char buf[32];
	ssize_t n, got = 0;
	int fd;
	pid_t pid;

	pid = mx_fork_with_pipe(&fd);
	if (pid < 0)
		return (int)pid;
	if (pid == 0) {
		args.report_fd = fd;
		mxqd_reaper_run(&args);
	}
	job->reaper_pid = pid;
	mx_proc_starttime(pid, &job->reaper_starttime);
	/* the reaper answers right after its fork(); nothing slow happens before */
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0) {
		got += n;
		if (memchr(buf, '\n', (size_t)got))
			break;
	}
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
	job->job_pid = (pid_t)atoi(buf);
	return 0;
}

static int requeue_claimed_job(struct mxqd_server *server, uint64_t job_id)
{
	int64_t n = mx_db_exec(server->db,
		"UPDATE mxq_job SET job_status = 0, daemon_id = 0, host_hostname = '', server_id = '',"
		" host_id = '', host_slots = 0, host_pid = 0 WHERE job_id = ? AND job_status = ?",
		"Ui", job_id, MXQ_JOB_STATUS_ASSIGNED);
	return n < 0 ? (int)n : 0;
}

static void kill_job(struct mxqd_job *job, int reason)
{
	if (job->job_pid <= 0 || job->kill_sent_ms)
		return;
	job->kill_reason = reason;
	job->kill_sent_ms = mx_now_monotonic_ms();
	mx_session_kill(job->job_pid, SIGTERM);
	mx_session_kill(job->job_pid, SIGCONT);
}

/* Start the job we just claimed (status ASSIGNED, our daemon id). */
static struct mxqd_job *find_job(struct mxqd_server *server, uint64_t job_id);

static int start_claimed_job(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	struct mxqd_job *job;
	int64_t n;
	int r;

	/* The claimed job is the ASSIGNED job of this daemon that it does not
	 * run yet: a started job whose RUNNING update failed is ASSIGNED too. */
	n = mx_db_query(server->db, &res,
		"SELECT " JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.daemon_id = ? AND j.job_status = ? ORDER BY j.job_id",
		"Ui", server->daemon_id, MXQ_JOB_STATUS_ASSIGNED);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res) && find_job(server, mx_db_u64(res, 0)))
		;
	if (mx_db_is_null(res, 0) || find_job(server, mx_db_u64(res, 0))) {
		mx_db_result_free(res);
		return -ENOENT;
	}
	job = job_from_row(server, res);
	mx_db_result_free(res);
	if (!job)
		return -errno;
	if (!job->argv) {
		mx_log_err("job %" PRIu64 ": job_argv is malformed: cannot be started", job->job_id);
		job->final_status = MXQ_JOB_STATUS_FAILED;
		job->ended = true;
		job_list_add(server, job);
		finish_job(server, job);  /* on a database error the reaping loop retries */
		return 0;
	}

	{
		char reason[1024];

		if (job_prepare(server, job, reason, sizeof(reason)) < 0) {
			refuse_job(server, job, reason);
			return 0;
		}
	}
	r = spawn_reaper(server, job);
	if (r < 0) {
		char path[4096];

		mx_log_err("job %" PRIu64 ": cannot start a reaper: %s; back to the queue",
			   job->job_id, strerror(-r));
		mxqd_job_tmpdir_path(server, job->job_id, path, sizeof(path));
		mx_rmtree(path);
		requeue_claimed_job(server, job->job_id);
		job_free(job);
		return r;
	}
	if (job->job_pid <= 0) {
		/* the reaper could not fork the job; its outcome file says so */
		job_list_add(server, job);
		return 0;
	}
	job->start_realtime_ms = mx_now_realtime_ms();
	job_list_add(server, job);
	n = mx_db_exec(server->db,
		"UPDATE mxq_job SET job_status = ?, host_pid = ?, date_start = NOW()"
		" WHERE job_id = ? AND job_status = ?",
		"iiUi", MXQ_JOB_STATUS_RUNNING, (int)job->job_pid, job->job_id, MXQ_JOB_STATUS_ASSIGNED);
	if (n == 0) {
		/* cancelled between claim and start */
		mx_log_info("job %" PRIu64 ": cancelled while starting", job->job_id);
		kill_job(job, MXQD_KILL_CANCEL);
	} else if (n < 0) {
		/* the job runs; its outcome will be recorded once the database is back */
		mx_log_warning("job %" PRIu64 ": could not record RUNNING: %s", job->job_id,
			       mx_db_error(server->db));
	}
	job->final_status = MXQ_JOB_STATUS_RUNNING;
	mx_log_info("job %" PRIu64 " (group %" PRIu64 ", user %s) started: pid %d, %u slot(s)",
		    job->job_id, job->group_id, job->user_name, (int)job->job_pid, job->slots);
	mxqd_hooks_job_started(server, job);
	return 1;
}

/* A group this daemon could run, with what is needed to pick among them. */
struct candidate {
	uint64_t group_id;
	uint32_t uid;
	unsigned priority;
	uint32_t threads;
	uint64_t memory_mib;
	uint32_t gpus;
	uint32_t max_per_node;
	uint64_t jobs_inq;
	uint32_t slots;          /* per job on this server */
	bool exhausted;          /* nothing left to claim in this pass */
};

struct user_load {
	uint32_t uid;
	uint64_t slots;
};

static uint64_t *user_slots(struct user_load *users, size_t n, uint32_t uid)
{
	for (size_t i = 0; i < n; i++)
		if (users[i].uid == uid)
			return &users[i].slots;
	return NULL;
}

static uint32_t running_in_group(const struct mxqd_server *server, uint64_t group_id)
{
	uint32_t n = 0;

	for (const struct mxqd_job *job = server->jobs; job; job = job->next)
		if (job->group_id == group_id)
			n++;
	return n;
}

static bool candidate_fits(const struct mxqd_server *server, const struct candidate *c)
{
	if (c->exhausted || c->jobs_inq == 0)
		return false;
	if (server->slots_running + c->slots > server->slots)
		return false;
	if (server->memory_running_mib + c->memory_mib > server->memory_mib)
		return false;
	if (server->gpus_running + c->gpus > server->gpus)
		return false;
	if (c->max_per_node && running_in_group(server, c->group_id) >= c->max_per_node)
		return false;
	return true;
}

/* Read active groups this server qualifies for. Returns count or -errno. */
static int load_candidates(struct mxqd_server *server, struct candidate **ret,
			   struct user_load **ret_users, size_t *ret_nusers)
{
	struct mx_db_result *res = NULL;
	struct candidate *cands = NULL;
	struct user_load *users = NULL;
	size_t n = 0, nusers = 0;
	int64_t rows;

	rows = mx_db_query(server->db, &res,
		"SELECT group_id, user_uid, group_priority, job_max_per_node, group_jobs_inq,"
		" (SELECT COALESCE(SUM(g2.group_slots_running), 0) FROM mxq_group g2"
		"   WHERE g2.user_uid = g.user_uid AND g2.group_jobs_running > 0),"
		" " MXQ_GROUP_REQS_COLUMNS
		" FROM mxq_group g WHERE group_status = ? AND group_jobs_inq > 0"
		" AND (? OR user_uid = ?)",
		"iiu", MXQ_GROUP_STATUS_OK, server->is_root ? 1 : 0, (unsigned)getuid());
	if (rows < 0)
		return (int)rows;
	if (rows > 0) {
		cands = calloc((size_t)rows, sizeof(*cands));
		users = calloc((size_t)rows, sizeof(*users));
		if (!cands || !users) {
			free(cands);
			free(users);
			mx_db_result_free(res);
			return -ENOMEM;
		}
	}
	while (mx_db_next(res)) {
		struct mxq_group_reqs reqs;
		struct candidate *c = &cands[n];
		enum mxq_qual_rule rule;
		bool ok;

		if (mxq_group_reqs_from_row(&reqs, res, 6) < 0) {
			free(cands);
			free(users);
			mx_db_result_free(res);
			return -ENOMEM;
		}
		ok = server_is_qualified(&server->caps, &reqs, &rule);
		c->threads = reqs.threads;
		c->memory_mib = reqs.memory_mib;
		c->gpus = reqs.gpus;
		mxq_group_reqs_done(&reqs);
		if (!ok)
			continue;
		c->group_id = mx_db_u64(res, 0);
		c->uid = (uint32_t)mx_db_u64(res, 1);
		c->priority = (unsigned)mx_db_u64(res, 2);
		c->max_per_node = (uint32_t)mx_db_u64(res, 3);
		c->jobs_inq = mx_db_u64(res, 4);
		c->slots = job_slots(server, c->threads, c->memory_mib);
		if (!user_slots(users, nusers, c->uid)) {
			users[nusers].uid = c->uid;
			users[nusers].slots = mx_db_u64(res, 5);
			nusers++;
		}
		n++;
	}
	mx_db_result_free(res);
	*ret = cands;
	*ret_users = users;
	*ret_nusers = nusers;
	return (int)n;
}

/* Highest group priority first; among equals the user with the fewest
 * running slots (fair share between users), then the oldest group. */
static struct candidate *pick(const struct mxqd_server *server, struct candidate *cands, size_t n,
			      struct user_load *users, size_t nusers)
{
	struct candidate *best = NULL;
	uint64_t best_load = 0;

	for (size_t i = 0; i < n; i++) {
		struct candidate *c = &cands[i];
		uint64_t load;

		if (!candidate_fits(server, c))
			continue;
		load = *user_slots(users, nusers, c->uid);
		if (!best || c->priority > best->priority ||
		    (c->priority == best->priority &&
		     (load < best_load || (load == best_load && c->group_id < best->group_id)))) {
			best = c;
			best_load = load;
		}
	}
	return best;
}

/* The claim: one conditional UPDATE; 0 rows means another daemon won or
 * this host is being drained. */
static int claim_one(struct mxqd_server *server, const struct candidate *c)
{
	char host_id[256];
	int64_t n;

	snprintf(host_id, sizeof(host_id), "%s::%s", server->hostname, server->daemon_name);
	n = mx_db_exec(server->db,
		"UPDATE mxq_job SET job_status = ?, daemon_id = ?, host_hostname = ?, server_id = ?,"
		" host_id = ?, host_slots = ?"
		" WHERE group_id = ? AND job_status = ?"
		/* drain guard: once the power manager's drain of this host has
		 * committed, this statement cannot claim anything here */
		" AND NOT EXISTS (SELECT 1 FROM mxq_power p WHERE p.hostname = ? AND p.desired_state = 'OFF')"
		" ORDER BY job_priority, job_id LIMIT 1",
		"iUsssuUis", MXQ_JOB_STATUS_ASSIGNED, server->daemon_id, server->hostname,
		server->daemon_name, host_id, c->slots, c->group_id, MXQ_JOB_STATUS_INQ,
		server->hostname);
	return n < 0 ? (int)n : (int)n;
}

/* A claim whose answer was lost (the database server died, or a Galera
 * node left the cluster, during the UPDATE) may have committed: such a job
 * is ASSIGNED to us but we never started it. Put every such job back in
 * the queue (conditional on ASSIGNED, so a job we did start, whose RUNNING
 * update failed, is not touched: it is in our list and skipped). */
static int requeue_uncertain_claims(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	int64_t n;

	n = mx_db_query(server->db, &res,
		"SELECT job_id FROM mxq_job WHERE daemon_id = ? AND job_status = ?",
		"Ui", server->daemon_id, MXQ_JOB_STATUS_ASSIGNED);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		uint64_t job_id = mx_db_u64(res, 0);
		int r;

		if (find_job(server, job_id))
			continue;
		r = requeue_claimed_job(server, job_id);
		if (r < 0) {
			mx_db_result_free(res);
			return r;
		}
		mx_log_info("job %" PRIu64 ": claimed while the database connection failed;"
			    " back to the queue", job_id);
	}
	mx_db_result_free(res);
	server->claim_uncertain = false;
	return 0;
}

int mxqd_jobs_start_some(struct mxqd_server *server)
{
	struct candidate *cands = NULL;
	struct user_load *users = NULL;
	size_t nusers = 0;
	int n, started = 0, r = 0;

	if (server->claim_uncertain) {
		r = requeue_uncertain_claims(server);
		if (r < 0)
			return r;
	}
	if (!server->accepting || server->slots_running >= server->slots)
		return 0;
	n = load_candidates(server, &cands, &users, &nusers);
	if (n <= 0) {
		free(cands);
		free(users);
		return n;
	}
	for (;;) {
		struct candidate *c = pick(server, cands, (size_t)n, users, nusers);
		if (!c)
			break;
		r = claim_one(server, c);
		if (r == -EAGAIN)
			continue;       /* deadlock victim: the claim was rolled back */
		if (r < 0) {
			server->claim_uncertain = true;
			break;
		}
		if (r == 0) {
			c->exhausted = true; /* others took the rest */
			continue;
		}
		r = start_claimed_job(server);
		if (r < 0)
			break;
		started++;
		c->jobs_inq--;
		*user_slots(users, nusers, c->uid) += c->slots;
	}
	free(cands);
	free(users);
	return r < 0 && started == 0 ? r : started;
}

/* ----------------------------------------------------------- cancelling */

static struct mxqd_job *find_job(struct mxqd_server *server, uint64_t job_id)
{
	for (struct mxqd_job *job = server->jobs; job; job = job->next)
		if (job->job_id == job_id)
			return job;
	return NULL;
}

int mxqd_jobs_handle_cancel(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	int64_t n;

	n = mx_db_query(server->db, &res,
		"SELECT j.job_id FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.daemon_id = ? AND j.job_status IN (" ACTIVE_STATUSES ")"
		" AND (j.job_status = ? OR g.group_status = ?)",
		"Uii", server->daemon_id, MXQ_JOB_STATUS_CANCELLING, MXQ_GROUP_STATUS_CANCELLED);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		uint64_t job_id = mx_db_u64(res, 0);
		struct mxqd_job *job = find_job(server, job_id);

		if (!job) {
			/* cancelled between our claim and its start: it never ran */
			int64_t m = mx_db_exec(server->db,
				"UPDATE mxq_job SET job_status = ?, date_end = NOW()"
				" WHERE job_id = ? AND daemon_id = ? AND job_status = ?",
				"iUUi", MXQ_JOB_STATUS_CANCELLED, job_id, server->daemon_id,
				MXQ_JOB_STATUS_CANCELLING);
			if (m > 0)
				mx_log_info("job %" PRIu64 ": cancelled before it started", job_id);
			continue;
		}
		if (!job->ended && !job->kill_sent_ms) {
			mx_log_info("job %" PRIu64 ": cancelled, terminating process group %d",
				    job->job_id, (int)job->job_pid);
			kill_job(job, MXQD_KILL_CANCEL);
		}
	}
	mx_db_result_free(res);
	/* Queued jobs of a cancelled group. Upstream's mxqkill cancels only
	 * the ones an upstream daemon could claim (server_id = ''), and
	 * leaves those hidden from upstream daemons queued (create_triggers.sql).
	 * Two statements: the job triggers update mxq_group, which a statement
	 * on mxq_job must then not read. */
	n = mx_db_query(server->db, &res,
		"SELECT group_id FROM mxq_group WHERE group_status = ? AND group_jobs_inq > 0",
		"i", MXQ_GROUP_STATUS_CANCELLED);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		int64_t m = mx_db_exec(server->db,
			"UPDATE mxq_job SET job_status = ?, date_end = NOW()"
			" WHERE group_id = ? AND job_status = ? AND daemon_id = 0",
			"iUi", MXQ_JOB_STATUS_CANCELLED, mx_db_u64(res, 0), MXQ_JOB_STATUS_INQ);
		if (m > 0)
			mx_log_info("group %" PRIu64 ": cancelled, %" PRId64 " queued job(s) cancelled",
				    mx_db_u64(res, 0), m);
	}
	mx_db_result_free(res);
	return 0;
}

void mxqd_jobs_escalate_kills(struct mxqd_server *server)
{
	uint64_t now = mx_now_monotonic_ms();

	for (struct mxqd_job *job = server->jobs; job; job = job->next) {
		if (job->kill_sent_ms && !job->ended && job->job_pid > 0 &&
		    now - job->kill_sent_ms > (uint64_t)server->kill_grace_s * 1000) {
			mx_session_kill(job->job_pid, SIGKILL);
			job->kill_sent_ms = now; /* repeat every grace period until gone */
		}
	}
}

void mxqd_jobs_kill_all(struct mxqd_server *server)
{
	for (struct mxqd_job *job = server->jobs; job; job = job->next)
		if (!job->ended)
			kill_job(job, MXQD_KILL_SHUTDOWN);
}

/* -------------------------------------------------------------- recovery */

/* Does a job of an earlier mxqd still have a reaper or an outcome here? */
static bool job_left_traces(const struct mxqd_server *server, uint64_t job_id, pid_t *ret_reaper,
			    pid_t *ret_job, unsigned long long *ret_starttime, bool *ret_alive)
{
	struct mxqd_outcome o;
	char boot[37];
	unsigned long long now_start;

	*ret_alive = false;
	if (mxqd_pidfile_read(server->spooldir, job_id, ret_reaper, ret_job, ret_starttime, boot) == 0) {
		*ret_alive = strcmp(boot, server->boot_id) == 0 &&
			     mx_proc_starttime(*ret_reaper, &now_start) == 0 &&
			     now_start == *ret_starttime;
		return true;
	}
	return mxqd_outcome_read(server->spooldir, job_id, &o) == 0;
}

int mxqd_jobs_recover(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	unsigned requeued = 0, adopted = 0, lost = 0;
	int64_t n;

	n = mx_db_query(server->db, &res,
		"SELECT " JOB_COLUMNS " FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.host_hostname = ? AND j.server_id = ? AND j.job_status IN (" ACTIVE_STATUSES ")",
		"ss", server->hostname, server->daemon_name);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		uint64_t job_id = mx_db_u64(res, 0);
		int status = (int)mx_db_i64(res, 8);
		pid_t reaper = 0, job_pid = 0;
		unsigned long long starttime = 0;
		bool alive;
		bool traces = job_left_traces(server, job_id, &reaper, &job_pid, &starttime, &alive);
		struct mxqd_job *job;

		if (!traces && status == MXQ_JOB_STATUS_ASSIGNED) {
			/* claimed, never started: give it back to the queue */
			if (requeue_claimed_job(server, job_id) == 0)
				requeued++;
			continue;
		}
		job = job_from_row(server, res);
		if (!job) {
			mx_log_err("job %" PRIu64 ": cannot be recovered: %m", job_id);
			continue;
		}
		job->adopted = true;
		job->reaper_pid = reaper;
		job->job_pid = job_pid;
		job->reaper_starttime = starttime;
		job->start_realtime_ms = mx_now_realtime_ms();
		job_list_add(server, job);
		if (traces) {
			/* running, or ended while no mxqd watched: the reaping loop decides */
			mx_db_exec(server->db,
				   "UPDATE mxq_job SET daemon_id = ?, job_status = IF(job_status = ?, ?, job_status)"
				   " WHERE job_id = ? AND job_status IN (" ACTIVE_STATUSES ")",
				   "UiiU", server->daemon_id, MXQ_JOB_STATUS_ASSIGNED, MXQ_JOB_STATUS_RUNNING, job_id);
			adopted++;
			if (!alive)
				job->reaper_pid = 0;  /* reaper gone: outcome file or lost */
			else
				mx_log_info("job %" PRIu64 ": re-adopted (reaper %d, job %d)",
					    job_id, (int)reaper, (int)job_pid);
		} else {
			mx_log_warning("job %" PRIu64 ": was %s on this node but left no trace: UNKNOWN",
				       job_id, mxq_job_status_to_name(status));
			job->final_status = MXQ_JOB_STATUS_UNKNOWN;
			job->ended = true;
			lost++;
		}
	}
	mx_db_result_free(res);
	if (requeued || adopted || lost)
		mx_log_notice("recovery: %u claimed job(s) requeued, %u adopted, %u lost",
			      requeued, adopted, lost);
	return 0;
}
