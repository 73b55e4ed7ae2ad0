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
 * SQL: none here; the statements are in mxq_job.c (job rows) and
 * mxq_group.c (which groups have queued jobs).
 *
 * Status hooks: every start and every terminal outcome passes through
 * mxqd_hooks_job_started() / mxqd_hooks_job_ended() below.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_safefs.h"
#include "mx_util.h"
#include "mxq_group.h"
#include "mxq_identity.h"
#include "mxq_job.h"
#include "mxq_status.h"
#include "mxqd.h"
#include "mxqd_cgroup.h"

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

/* ------------------------------------------------------ dispatch profile */

static const char *const prof_names[MXQD_PROF__N] = {
	"candidates", "claim", "load", "spawn", "running", "outcomes", "record", "hooks",
	"spool", "cancel", "other", "wait",
};
static const char *const rprof_names[MXQD_RPROF__N] = {
	"setup", "cgroup create", "fork to exec", "job", "cgroup end", "tmpdir",
};
static uint64_t prof_us[MXQD_PROF__N];
static uint64_t prof_jobs;
static uint64_t rprof_us[MXQD_RPROF__N];
static uint64_t rprof_n;            /* outcomes with a reaper profile */
static uint64_t rlife_us, rlife_n;  /* reaper lifetimes, fork to reaped */

uint64_t mxqd_prof_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void mxqd_prof_add(enum mxqd_prof p, uint64_t since)
{
	prof_us[p] += mxqd_prof_now() - since;
}

void mxqd_prof_reaper(const struct mxqd_outcome *o)
{
	for (unsigned i = 0; i < MXQD_RPROF__N; i++)
		rprof_us[i] += o->prof_us[i];
	rprof_n++;
}

void mxqd_prof_reaper_gone(uint64_t fork_us)
{
	if (!fork_us)
		return;
	rlife_us += mxqd_prof_now() - fork_us;
	rlife_n++;
}

/* "name N us; ..." of N phases, mean over JOBS, appended at BUF + *OFF */
static void prof_append(char *buf, size_t len, size_t *off, const char *const *names,
			const uint64_t *us, unsigned n, uint64_t jobs)
{
	for (unsigned i = 0; i < n && *off < len; i++)
		*off += (size_t)snprintf(buf + *off, len - *off, "%s%s %.0f us", i ? "; " : "",
					 names[i], (double)us[i] / (double)jobs);
}

void mxqd_prof_log(void)
{
	char buf[1024], rbuf[512] = "";
	size_t off = 0, roff = 0;
	uint64_t busy = 0, rsum = 0;

	if (!prof_jobs)
		return;
	for (unsigned i = 0; i < MXQD_PROF__N; i++)
		if (i != MXQD_PROF_WAIT)
			busy += prof_us[i];
	prof_append(buf, sizeof(buf), &off, prof_names, prof_us, MXQD_PROF__N, prof_jobs);
	mx_log_info("dispatch profile: %" PRIu64 " jobs, main loop busy %.0f us per job; %s",
		    prof_jobs, (double)busy / (double)prof_jobs, buf);
	if (!rprof_n || !rlife_n)
		return;
	for (unsigned i = 0; i < MXQD_RPROF__N; i++)
		rsum += rprof_us[i];
	prof_append(rbuf, sizeof(rbuf), &roff, rprof_names, rprof_us, MXQD_RPROF__N, rprof_n);
	/* the rest of its life: writing the outcome (fsync, rename), exit, SIGCHLD */
	mx_log_info("reaper profile: %" PRIu64 " reapers, alive %.0f us per job; %s; outcome and exit %.0f us",
		    rprof_n, (double)rlife_us / (double)rlife_n, rbuf,
		    (double)rlife_us / (double)rlife_n - (double)rsum / (double)rprof_n);
}

/* ------------------------------------------------------------- job list */

static void job_free(struct mxqd_job *job)
{
	if (!job)
		return;
	free(job->groups);
	free(job->user_name);
	free(job->group_name);
	free(job->workdir);
	mx_strvec_free(job->argv);
	free(job->stdout_path);
	free(job->stderr_path);
	free(job->callback);
	free(job->outcome);
	if (job->report_fd >= 0)
		close(job->report_fd);
	free(job->report);
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

static void ahead_drop(void);
static void cand_cache_drop(void);
static void leftovers_free(void);

void mxqd_jobs_free_all(struct mxqd_server *server)
{
	ahead_drop();
	cand_cache_drop();
	leftovers_free();
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

/* Build a job from a row of MXQ_JOB_COLUMNS. NULL with errno set on
 * failure; job->argv is NULL when job_argv is malformed (the job is kept,
 * so that it ends FAILED through the usual hooks). */
static struct mxqd_job *job_from_row(const struct mxqd_server *server, struct mx_db_result *res)
{
	struct mxqd_job *job = calloc(1, sizeof(*job));
	struct mxq_job_row row;

	if (!job || mxq_job_from_row(&row, res, 0) < 0) {
		free(job);
		errno = ENOMEM;
		return NULL;
	}
	job->ngroups = -1;
	job->report_fd = -1;
	job->job_id = row.job_id;
	job->group_id = row.group_id;
	job->workdir = row.workdir;
	job->argv = row.argv;
	job->stdout_path = row.stdout_path;
	job->stderr_path = row.stderr_path;
	job->umask = row.umask;
	job->callback = row.callback;
	job->final_status = row.status; /* current status until it ends */
	job->uid = row.uid;
	job->user_name = row.user_name;
	job->gid = row.gid;
	job->group_name = row.group_name;
	job->threads = row.threads;
	job->memory_mib = row.memory_mib;
	job->time_min = row.time_min;
	job->gpus = row.gpus;
	job->tmpdir_mib = row.tmpdir_mib;
	job->slots = job_slots(server, job->threads, job->memory_mib);
	return job;
}

/* ------------------------------------------------------ terminal outcome */

static int outcome_to_status(const struct mxqd_job *job, const struct mxqd_outcome *o)
{
	if (job->end_left)
		return job->final_status;               /* as on record (recover_ended) */
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
	struct mxq_job_stats st = { 0 };
	int64_t n;

	if (o)
		st = (struct mxq_job_stats) {
			.wait_status = o->wait_status, .utime_us = o->utime_us,
			.stime_us = o->stime_us, .real_us = o->real_us, .maxrss_kib = o->maxrss_kib,
			.minflt = o->minflt, .majflt = o->majflt, .nswap = o->nswap,
			.inblock = o->inblock, .oublock = o->oublock, .nvcsw = o->nvcsw,
			.nivcsw = o->nivcsw, .max_sumrss_kib = o->max_sumrss_kib,
		};
	/* a job that ended before its RUNNING was recorded: its start and pid */
	st.start_s = job->start_realtime_ms / 1000;
	st.pid = job->job_pid;
	n = mxq_job_record_end(server->db, job->job_id, status, &st);
	if (n == -ENOTCONN)
		job->end_unanswered = true;  /* it may have taken all the same */
	if (n < 0)
		return (int)n;
	if (n == 0 && (job->end_unanswered || job->end_left)) {
		/* the earlier attempt took and its answer was lost (or its
		 * mxqd died before the hooks), or someone else ended the job
		 * meanwhile: the row tells which */
		n = mxq_job_end_is(server->db, job->job_id, status, &st);
		if (n < 0)
			return (int)n;
		if (n > 0 && job->end_left) {
			mx_log_notice("job %" PRIu64 ": its end was recorded by the mxqd before, which "
				      "stopped before its callback and energy record: done now",
				      job->job_id);
			return 1;
		}
		if (n > 0) {
			mx_log_info("job %" PRIu64 ": its end was recorded by an attempt whose "
				    "answer the lost connection took", job->job_id);
			return 1;
		}
		if (job->end_left) {
			mx_log_warning("job %" PRIu64 ": its outcome was left in the spool, but the "
				       "end on record is another one: no callback, files removed",
				       job->job_id);
			return 0;
		}
	}
	if (n == 0)
		mx_log_warning("job %" PRIu64 ": was no longer active in the database; status %s not recorded",
			       job->job_id, mxq_job_status_to_name(status));
	return n > 0;
}

static void describe_outcome(const struct mxqd_job *job, int status, const struct mxqd_outcome *o)
{
	char how[64] = "";

	if (!o)
		snprintf(how, sizeof(how), "%s",
			 status == MXQ_JOB_STATUS_UNKNOWN ? "outcome lost" : "not started");
	else if (o->killed[0])
		snprintf(how, sizeof(how), "over its %s limit", o->killed);
	else if (WIFEXITED(o->wait_status))
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(o->wait_status));
	else if (WIFSIGNALED(o->wait_status))
		snprintf(how, sizeof(how), "signal %d", WTERMSIG(o->wait_status));
	mx_log_info("job %" PRIu64 " (group %" PRIu64 ", user %s) %s: %s%s%s",
		    job->job_id, job->group_id, job->user_name, mxq_job_status_to_name(status), how,
		    o && o->reason[0] ? "; " : "", o ? o->reason : "");
}

/*
 * A job given up as lost (UNKNOWN): its reaper, which would have ended
 * what the job left and removed its cgroup and tmpdir, is gone. Kill what
 * is still in the job's cgroup, so nothing of it runs on in slots that
 * are free again, and remove the cgroup and the tmpdir (unmounting its
 * quota tmpfs). Without cgroups nothing says reliably which processes
 * are the job's: they are left alone.
 */
static void end_lost_job(const struct mxqd_server *server, const struct mxqd_job *job)
{
	struct mxqd_cgroup cg;
	char path[4096];
	int r;

	if (!server->cgroups)
		return;
	mxqd_cgroup_job(&cg, job->job_id);
	if (!mxqd_cgroup_exists(&cg))
		return;
	r = mxqd_cgroup_clear(&cg, 2000);
	mxqd_cgroup_path(&cg, path, sizeof(path));
	if (r < 0) {
		mx_log_err("job %" PRIu64 ": processes of the lost job left in %s after SIGKILL: %s",
			   job->job_id, path, strerror(-r));
		return;
	}
	mx_log_warning("job %" PRIu64 ": lost; what it left in %s is killed", job->job_id, path);
	mxqd_job_tmpdir_path(server, job->job_id, path, sizeof(path));
	if (server->is_root)
		umount2(path, MNT_DETACH);  /* its quota tmpfs, if it had one */
	mx_rmtree(path);
}

const char *mxqd_db_hint(int r)
{
	switch (r) {
	case -ENOSPC:
		return "; the database server is out of disk space: free space in its data directory "
		       "(job outcomes wait in the spool meanwhile)";
	case -ENOENT:
		return "; is the schema upgraded? run mxqadmin db upgrade";
	default:
		return "";
	}
}

/* The reason the reaper gave (a job that could not start, output lost to
 * a full disk), before the end: 0, or -errno when the end must wait too
 * (lost connection, write conflict). Any other failure is said once and
 * the end recorded without it: the status matters more. */
static int record_reason(struct mxqd_server *server, struct mxqd_job *job)
{
	int64_t n;

	if (job->reason_done || !job->outcome || !job->outcome->reason[0])
		return 0;
	n = mxq_job_set_reason(server->db, job->job_id, job->outcome->reason);
	if (n == -ENOTCONN || n == -EAGAIN)
		return (int)n;
	if (n < 0)
		mx_log_warning("job %" PRIu64 ": cannot record its reason (%s): %s%s", job->job_id,
			       job->outcome->reason, mx_db_error(server->db), mxqd_db_hint((int)n));
	job->reason_done = true;
	return 0;
}

static void leftovers_add(const struct mxqd_server *server, uint64_t job_id, const char *what);
static int job_leftovers_remove(const struct mxqd_server *server, uint64_t job_id, bool tmpdir,
				char *what, size_t len);

/* For tests: MXQD_TEST_END_HOLD=STAGE=MS holds mxqd MS ms in finish_job()
 * at STAGE (mxqd(8), ENVIRONMENT): "recorded", the end is on record and
 * the hooks have not run; "hooked", they ran and the spool files are still
 * there. Where an mxqd that dies could run a callback never or twice. */
static void test_end_hold(const char *stage)
{
	const char *p = getenv("MXQD_TEST_END_HOLD");
	size_t len = strlen(stage);

	if (p && strncmp(p, stage, len) == 0 && p[len] == '=')
		mx_sleep_ms(strtoul(p + len + 1, NULL, 10));
}

/* Try to write the outcome of an ended job; on success the job is gone. */
static int finish_job(struct mxqd_server *server, struct mxqd_job *job)
{
	uint64_t t = mxqd_prof_now();
	char what[4200];
	int r = record_reason(server, job);

	if (r == 0)
		r = record_end(server, job, job->final_status, job->outcome);
	mxqd_prof_add(MXQD_PROF_RECORD, t);
	if (r < 0) {
		/* the outcome waits in the spool dir: now it must survive a crash */
		if (job->outcome && !job->synced && mxqd_outcome_sync(server->spooldir, job->job_id) == 0)
			job->synced = true;
		return r;
	}
	describe_outcome(job, job->final_status, job->outcome);
	test_end_hold("recorded");
	/* hooks (callbacks, energy) only for an outcome that is on record */
	t = mxqd_prof_now();
	if (r > 0)
		mxqd_hooks_job_ended(server, job, job->final_status);
	mxqd_prof_add(MXQD_PROF_HOOKS, t);
	t = mxqd_prof_now();
	/* from here a restart removes the files and runs no hooks; before,
	 * it runs them if the end on record is this one (recover_ended) */
	if (job->outcome)
		mxqd_outcome_mark_done(server->spooldir, job->job_id);
	test_end_hold("hooked");
	if (job_leftovers_remove(server, job->job_id, job->outcome && job->outcome->tmpdir_left,
				 what, sizeof(what)) < 0)
		leftovers_add(server, job->job_id, what);
	mxqd_prof_add(MXQD_PROF_SPOOL, t);
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
				mxqd_prof_reaper_gone(job->fork_us);
				break;
			}
		}
	}
}

static void collect_reports(struct mxqd_server *server);
static int reported_outcome(struct mxqd_job *job, struct mxqd_outcome *ret);

/*
 * JOB was adopted while its pid file said "not started", and its reaper is
 * gone without an outcome: if the pid file still says so, it ended without
 * starting the job (its mxqd was gone when it looked). The job goes back
 * to the queue, without its spool and tmpdir reservation, and off the
 * list (when it was cancelled meanwhile, mxqd_jobs_handle_cancel() ends
 * it CANCELLED). True when it did.
 */
static int requeue_claimed_job(struct mxqd_server *server, uint64_t job_id);

static bool never_started_here(struct mxqd_server *server, struct mxqd_job *job)
{
	pid_t reaper, job_pid = -1;
	unsigned long long st;
	char boot[37], what[4200];
	uint64_t job_id = job->job_id;

	if (mxqd_pidfile_read(server->spooldir, job_id, &reaper, &job_pid, &st, boot) == 0 &&
	    job_pid != 0)
		return false;  /* it started the job: lost, as any other */
	if (requeue_claimed_job(server, job_id) < 0) {
		mx_log_warning("job %" PRIu64 ": its reaper ended without starting it, and it could "
			       "not go back to the queue yet: %s", job_id, mx_db_error(server->db));
		return true;  /* asked again at the next round: still on the list */
	}
	/* (a row cancelled meanwhile is not requeued: it is ended CANCELLED) */
	mx_log_notice("job %" PRIu64 ": its reaper ended without starting it: back in the queue",
		      job_id);
	job_leftovers_remove(server, job_id, true, what, sizeof(what));
	job_list_remove(server, job);
	job_free(job);
	return true;
}

int mxqd_jobs_reap(struct mxqd_server *server)
{
	int ended = 0, first_error = 0;

	mxqd_children_reap(server);
	collect_reports(server);
	for (struct mxqd_job *job = server->jobs, *next; job; job = next) {
		next = job->next;
		if (job->starting)
			continue;
		if (!job->ended) {
			struct mxqd_outcome o;
			uint64_t t = mxqd_prof_now();
			int r = mxqd_outcome_read(server->spooldir, job->job_id, &o);

			mxqd_prof_add(MXQD_PROF_OUTCOMES, t);
			if (r == 0) {
				job->outcome = malloc(sizeof(*job->outcome));
				if (!job->outcome)
					return -ENOMEM;
				*job->outcome = o;
				if (!job->adopted)
					mxqd_prof_reaper(&o);
				job->final_status = outcome_to_status(job, &o);
				job->ended = true;
			} else if (job->reaper_pid == 0 ||
				   (job->adopted && !reaper_alive(server, job, job->reaper_starttime))) {
				/* the reaper is gone; a last look, then the job is lost */
				if (mxqd_outcome_read(server->spooldir, job->job_id, &o) == 0)
					continue;
				if (reported_outcome(job, &o) == 0) {
					/* the spool could not take it (its reaper said why) */
					job->outcome = malloc(sizeof(*job->outcome));
					if (!job->outcome)
						return -ENOMEM;
					*job->outcome = o;
					job->final_status = outcome_to_status(job, &o);
					job->ended = true;
					job->synced = true;  /* nothing in the spool to sync */
					mx_log_warning("job %" PRIu64 ": outcome taken from its reaper: "
						       "lost if mxqd stops before the database has it",
						       job->job_id);
				} else if (job->adopted_unstarted && never_started_here(server, job)) {
					continue;  /* back in the queue, off the list */
				} else {
					mx_log_err("job %" PRIu64 ": reaper vanished without an outcome",
						   job->job_id);
					end_lost_job(server, job);
					job->final_status = MXQ_JOB_STATUS_UNKNOWN;
					job->ended = true;
				}
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

/* Has the tmpdir's file system room for a job: not mounted read-only, a
 * free block for its user (f_bavail)? 0 or -errno with REASON. A tmpfs
 * takes a mkdir when full: this is what tells. */
static int tmpdir_room(const struct mxqd_server *server, char *reason, size_t len)
{
	struct statvfs vfs;

	if (statvfs(server->tmpdir, &vfs) < 0)
		return 0;  /* the job's writes will tell */
	if (vfs.f_flag & ST_RDONLY) {
		snprintf(reason, len, "the tmpdir %.900s is read-only", server->tmpdir);
		return -EROFS;
	}
	if (vfs.f_bavail == 0) {
		snprintf(reason, len, "the tmpdir %.900s has no space left", server->tmpdir);
		return -ENOSPC;
	}
	return 0;
}

/*
 * A cgroup of the job's name that is still there (the id used again: the
 * job requeued, or a new database) was left by an earlier life of this
 * daemon, whose parent cgroup no other daemon can hold: what is in it is
 * killed, and the reaper makes the job's cgroup afresh. If it cannot be
 * emptied the job must not run (without a cgroup of its own it would have
 * no memory limit and no kill at its end): -EBUSY with a reason.
 */
static int clear_job_cgroup(const struct mxqd_server *server, const struct mxqd_job *job,
			    char *reason, size_t len)
{
	struct mxqd_cgroup cg;
	char path[4096];
	int r, left;

	if (!server->cgroups)
		return 0;
	mxqd_cgroup_job(&cg, job->job_id);
	r = mxqd_cgroup_clear(&cg, 2000);
	if (r == 0)
		return 0;
	mxqd_cgroup_path(&cg, path, sizeof(path));
	if (r > 0) {
		mx_log_warning("job %" PRIu64 ": its cgroup %s held %d process(es) of an earlier run "
			       "on this node: killed before the job starts", job->job_id, path, r);
		return 0;
	}
	left = mxqd_cgroup_signal(&cg, 0);
	if (left > 0)
		snprintf(reason, len, "refused: its cgroup %.600s holds %d process(es) of an earlier "
			 "run that survive SIGKILL (nothing was run: it would run without a cgroup; an "
			 "admin must look at them)", path, left);
	else
		snprintf(reason, len, "refused: its cgroup %.600s, left by an earlier run, cannot be "
			 "removed: %s (nothing was run: it would run without a cgroup; an admin must "
			 "remove it)", path, strerror(-r));
	return r;
}

/*
 * The node's side of a job's start in the main loop: a fresh temporary
 * directory of its own (an entry already there, of any kind, is never
 * reused or followed) on a file system with room left; the reaper checks
 * the spool (mxqd_outcome_reserve). Returns 0; -EEXIST when the tmpdir
 * entry was there (refused: the job fails); any other -errno when the
 * node's disks cannot take a job now (the job goes back to the queue).
 * REASON says why in one line. On failure nothing of it is left.
 */
static int job_disk_prepare(const struct mxqd_server *server, uint64_t job_id, uid_t uid,
			    gid_t gid, char *reason, size_t len)
{
	char path[4096], name[64];
	int r;

	snprintf(name, sizeof(name), "mxq_job_%" PRIu64, job_id);
	mxqd_job_tmpdir_path(server, job_id, path, sizeof(path));
	r = mx_subdir_create(server->tmpdir, name, server->is_root, uid, gid);
	if (r == -EEXIST) {
		snprintf(reason, len, "refused: %.900s already exists (nothing was run, nothing followed; "
			 "an admin must remove it)", path);
		return r;
	}
	if (r < 0) {
		snprintf(reason, len, "cannot create the job's tmpdir %.900s: %s", path, strerror(-r));
		return r;
	}
	r = tmpdir_room(server, reason, len);
	if (r < 0)
		mx_rmtree(path);
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
	n = mxq_job_set_reason(server->db, job->job_id, reason);
	if (n < 0)
		mx_log_warning("job %" PRIu64 ": cannot record the reason: %s%s", job->job_id,
			       mx_db_error(server->db), mxqd_db_hint((int)n));
	job->final_status = MXQ_JOB_STATUS_FAILED;
	job->ended = true;
	job_list_add(server, job);
	finish_job(server, job);  /* on a database error the reaping loop retries */
}

/* For tests: MXQD_TEST_START_FAIL=ERRNO:COUNT fails the first COUNT reaper
 * forks with ERRNO (EMFILE, ENFILE, ENOMEM, EAGAIN or EIO; mxqd(8),
 * ENVIRONMENT): what a node short of descriptors or memory does to a
 * job start that got past the checks before it. */
static int test_start_fail(void)
{
	static const struct { const char *name; int err; } names[] = {
		{ "EMFILE", EMFILE }, { "ENFILE", ENFILE }, { "ENOMEM", ENOMEM },
		{ "EAGAIN", EAGAIN }, { "EIO", EIO },
	};
	static long left = -1;
	static int err;
	const char *p;
	char *end;

	if (left < 0) {
		left = 0;
		p = getenv("MXQD_TEST_START_FAIL");
		for (size_t k = 0; p && k < MX_ARRAY_SIZE(names); k++) {
			size_t n = strlen(names[k].name);
			if (strncmp(p, names[k].name, n) == 0 && p[n] == ':') {
				long c = strtol(p + n + 1, &end, 10);
				if (c > 0 && *end == '\0') {
					left = c;
					err = names[k].err;
				}
			}
		}
		if (p && !left)
			mx_log_warning("MXQD_TEST_START_FAIL=%s ignored: not ERRNO:COUNT", p);
	}
	if (!left)
		return 0;
	left--;
	return -err;
}

/*
 * Fork the reaper; returns 0 with job->reaper_pid set and the job starting:
 * mxqd does not wait for the reaper to start the job (dispatch fast path);
 * the reaper reports the job's pid through job->report_fd and wakes the
 * loop with SIGUSR2, and collect_reports() takes it from there.
 */
static int spawn_reaper(struct mxqd_server *server, struct mxqd_job *job)
{
	struct mxqd_reaper_args args = { .server = server, .job = job, .mxqd_pid = getpid() };
	int fd, r;
	pid_t pid;

	job->fork_us = mxqd_prof_now();
	if ((r = test_start_fail()) < 0)
		return r;
	pid = mx_fork_with_pipe(&fd);
	if (pid < 0)
		return (int)pid;
	if (pid == 0) {
		args.report_fd = fd;
		mxqd_reaper_run(&args);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	job->reaper_pid = pid;
	mx_proc_starttime(pid, &job->reaper_starttime);
	job->report_fd = fd;
	job->starting = true;
	return 0;
}

static int requeue_claimed_job(struct mxqd_server *server, uint64_t job_id)
{
	return mxq_job_requeue_claimed(server->db, job_id);
}

/* Signal the job's session and, with cgroups, every process in its cgroup
 * (daemonised ones included; its reaper kills the rest at the job's end). */
static void signal_job(const struct mxqd_server *server, const struct mxqd_job *job, int sig)
{
	struct mxqd_cgroup cg;

	mxqd_cgroup_job(&cg, job->job_id);
	/* the cgroup holds the whole session: no scan of /proc needed */
	if (!server->cgroups || mxqd_cgroup_signal(&cg, sig) < 0)
		mx_session_kill(job->job_pid, sig);
}

static void kill_job(const struct mxqd_server *server, struct mxqd_job *job, int reason)
{
	if (job->starting && !job->kill_sent_ms) {
		job->kill_reason = reason;
		job->kill_pending = true;  /* job_running() signals it */
		return;
	}
	if (job->job_pid <= 0 || job->kill_sent_ms)
		return;
	job->kill_reason = reason;
	job->kill_sent_ms = mx_now_monotonic_ms();
	signal_job(server, job, SIGTERM);
	signal_job(server, job, SIGCONT);
}

/*
 * Supplementary groups per user, looked up (getgrouplist) at most once a
 * minute: with NSS modules such as systemd's, initgroups() in every job
 * would cost about 40 file opens (dispatch fast path). A failed lookup
 * leaves job->ngroups -1: the reaper calls initgroups() itself.
 */
#define GROUPS_CACHE 16
#define GROUPS_TTL_MS 60000

static struct groups_entry {
	uid_t uid;
	gid_t gid;
	int n;
	gid_t *groups;
	uint64_t at_ms;
} groups_cache[GROUPS_CACHE];

static void job_set_groups(struct mxqd_job *job)
{
	struct groups_entry *e = NULL, *oldest = &groups_cache[0];
	uint64_t now = mx_now_monotonic_ms();

	job->ngroups = -1;
	for (size_t i = 0; i < GROUPS_CACHE && !e; i++) {
		struct groups_entry *c = &groups_cache[i];
		if (c->groups && c->uid == job->uid && c->gid == job->gid && now - c->at_ms < GROUPS_TTL_MS)
			e = c;
		else if (c->at_ms < oldest->at_ms)
			oldest = c;
	}
	if (!e) {
		int n = 64;
		gid_t *g = malloc(sizeof(*g) * (size_t)n);

		if (g && getgrouplist(job->user_name, job->gid, g, &n) < 0) {
			gid_t *bigger = realloc(g, sizeof(*g) * (size_t)n);
			g = bigger ? bigger : g;
			if (!bigger || getgrouplist(job->user_name, job->gid, g, &n) < 0) {
				free(g);
				return;
			}
		}
		if (!g)
			return;
		e = oldest;
		free(e->groups);
		*e = (struct groups_entry) { job->uid, job->gid, n, g, now };
	}
	job->groups = malloc(sizeof(*job->groups) * (size_t)(e->n ? e->n : 1));
	if (!job->groups)
		return;
	memcpy(job->groups, e->groups, sizeof(*job->groups) * (size_t)e->n);
	job->ngroups = e->n;
}

/* ------------------------------------------------------- the node's disks */

/*
 * A tmpdir or spool that cannot take a job (full, read-only, failing) is
 * the node's fault, not the job's: the claimed job goes back to the queue
 * untouched (nothing of it ran), and this mxqd claims nothing until a probe
 * of both succeeds, instead of failing every job of the queue in turn.
 * What an ended job left there and could not be removed is removed later.
 * Both are retried every disk_retry_ms(), and said once when they
 * start failing and once when they work again.
 */
#define LEFTOVERS_MAX 4096

static uint64_t disk_next_ms;   /* next probe or leftover removal */
static struct {
	uint64_t *ids;          /* jobs whose tmpdir or spool files are left */
	size_t n, cap;
} leftovers;

static struct mxqd_job *find_job(struct mxqd_server *server, uint64_t job_id);

/* Ten poll intervals, 1 to 30 s. */
static uint64_t disk_retry_ms(const struct mxqd_server *server)
{
	uint64_t ms = (uint64_t)server->poll_interval_ms * 10;

	return ms < 1000 ? 1000 : ms > 30000 ? 30000 : ms;
}

/* Remove what job JOB_ID has in the spool and, with TMPDIR, its tmpdir
 * (unmounting its quota tmpfs first). 0, or the first -errno, with WHAT
 * naming what is left. */
static int job_leftovers_remove(const struct mxqd_server *server, uint64_t job_id, bool tmpdir,
				char *what, size_t len)
{
	char path[4096];
	int r = 0, r2;

	if (tmpdir) {
		mxqd_job_tmpdir_path(server, job_id, path, sizeof(path));
		if (server->is_root)
			umount2(path, MNT_DETACH);  /* EINVAL when none is mounted */
		if ((r = mx_rmtree(path)) < 0)
			snprintf(what, len, "its tmpdir %s: %s", path, strerror(-r));
	}
	if ((r2 = mxqd_outcome_remove(server->spooldir, job_id)) < 0 && r == 0) {
		snprintf(what, len, "its files in the spool %s: %s", server->spooldir, strerror(-r2));
		r = r2;
	}
	return r;
}

static void leftovers_free(void)
{
	free(leftovers.ids);
	leftovers.ids = NULL;
	leftovers.n = leftovers.cap = 0;
}

static void leftovers_add(const struct mxqd_server *server, uint64_t job_id, const char *what)
{
	double every_s = (double)disk_retry_ms(server) / 1000;

	if (leftovers.n == leftovers.cap && leftovers.cap < LEFTOVERS_MAX) {
		size_t cap = leftovers.cap ? leftovers.cap * 2 : 16;
		uint64_t *ids = realloc(leftovers.ids, cap * sizeof(*ids));

		if (ids) {
			leftovers.ids = ids;
			leftovers.cap = cap;
		}
	}
	if (leftovers.n == leftovers.cap) {
		mx_log_err("job %" PRIu64 ": cannot remove %s; too many such, not retried", job_id, what);
		return;
	}
	leftovers.ids[leftovers.n++] = job_id;
	mx_log_warning("job %" PRIu64 ": cannot remove %s; retrying every %g s", job_id, what, every_s);
}

static void leftovers_retry(struct mxqd_server *server)
{
	char what[4200];
	size_t kept = 0;

	for (size_t i = 0; i < leftovers.n; i++) {
		uint64_t id = leftovers.ids[i];

		/* run here again (an admin requeued it): what is there is its own */
		if (find_job(server, id))
			continue;
		if (job_leftovers_remove(server, id, true, what, sizeof(what)) < 0)
			leftovers.ids[kept++] = id;
		else
			mx_log_notice("job %" PRIu64 ": what it left in the tmpdir and spool is removed",
				      id);
	}
	leftovers.n = kept;
}

/* Would a job start now, as far as the disks go? Tried with job id 0,
 * which no job has. Clears the fault when it would. */
static void disk_probe(struct mxqd_server *server)
{
	char reason[1024], what[4200];
	int r;

	job_leftovers_remove(server, 0, true, what, sizeof(what));
	r = job_disk_prepare(server, 0, geteuid(), getegid(), reason, sizeof(reason));
	if (r == 0 && (r = mxqd_outcome_reserve(server->spooldir, 0)) < 0)
		snprintf(reason, sizeof(reason), "cannot reserve room for the job's outcome in the "
			 "spool %s: %s", server->spooldir, strerror(-r));
	if (r == 0)
		r = job_leftovers_remove(server, 0, true, reason, sizeof(reason));
	else
		job_leftovers_remove(server, 0, true, what, sizeof(what));
	if (r < 0) {
		if (strcmp(reason, server->disk_fault_reason) != 0) {
			mx_log_err("node disk: %s; still taking no jobs", reason);
			snprintf(server->disk_fault_reason, sizeof(server->disk_fault_reason), "%s", reason);
		}
		return;
	}
	mx_log_notice("node disk: the tmpdir %s and the spool %s take jobs again; taking jobs",
		      server->tmpdir, server->spooldir);
	server->disk_fault = false;
	server->disk_fault_reason[0] = '\0';
}

void mxqd_jobs_disk_tick(struct mxqd_server *server)
{
	uint64_t now = mx_now_monotonic_ms();

	if ((!server->disk_fault && !leftovers.n) || now < disk_next_ms)
		return;
	disk_next_ms = now + disk_retry_ms(server);
	leftovers_retry(server);
	if (server->disk_fault)
		disk_probe(server);
}

/* A claimed job the node's disks cannot take (REASON): back to the queue,
 * and no claims until they can. */
static void node_disk_failed(struct mxqd_server *server, struct mxqd_job *job, const char *reason)
{
	uint64_t every = disk_retry_ms(server);

	/* if this fails, requeue_uncertain_claims() does it before the next claim */
	if (requeue_claimed_job(server, job->job_id) < 0)
		server->claim_uncertain = true;
	if (server->disk_fault) {
		/* started before the first one said it */
		mx_log_info("job %" PRIu64 ": back to the queue (node disk: %s)", job->job_id, reason);
	} else {
		mx_log_err("node disk: %s; job %" PRIu64 " goes back to the queue and no job is taken "
			   "until the disk works again (free space or repair the file system; checked "
			   "every %g s)", reason, job->job_id, (double)every / 1000);
		server->disk_fault = true;
		snprintf(server->disk_fault_reason, sizeof(server->disk_fault_reason), "%s", reason);
		disk_next_ms = mx_now_monotonic_ms() + every;
	}
	job_free(job);
}

/*
 * Descriptors: each running job keeps about two (its report pipe, its
 * energy cgroup's cpu.stat); starting one needs more for a moment (the
 * reaper's pipes, its cgroup and tmpdir), and the rest of mxqd may open
 * some meanwhile (a reconnect, power workers, callbacks, energy sources:
 * an eighth of the limit, at most 64). A claim is made only with that
 * much left below the open file limit, so
 * a node with more slots than descriptors runs fewer jobs at once instead
 * of failing the queue job by job.
 */
#define FDS_PER_JOB   2
#define FDS_START     16
#define FDS_RESERVE(lim) ((lim) / 8 < 64 ? (lim) / 8 : 64)

static rlim_t fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;  /* none known */
	return rl.rlim_cur;
}

/* How many jobs can run at once under the open file limit LIM with OPEN
 * descriptors open before any job: the claim of the (k+1)-th needs
 * FDS_START + FDS_RESERVE(LIM) + OPEN + k * FDS_PER_JOB <= LIM (fds_left). */
static uint64_t fd_jobs_fit(rlim_t lim, uint64_t open)
{
	uint64_t fixed = FDS_START + FDS_RESERVE(lim) + open;

	return lim < fixed ? 0 : (lim - fixed) / FDS_PER_JOB + 1;
}

int mxqd_jobs_check_fd_limit(const struct mxqd_server *server, bool warn, char *errbuf,
			      size_t errlen)
{
	rlim_t lim = fd_limit();
	int n = mx_fds_open();
	uint64_t open = n < 0 ? 0 : (uint64_t)n, fit, need;

	if (!lim || !server->slots || (fit = fd_jobs_fit(lim, open)) >= server->slots)
		return 0;
	/* the smallest limit that fits every slot, the reserve taken at it */
	for (need = lim + 1; fd_jobs_fit(need, open) < server->slots; need++)
		;
	if (fit == 0) {
		/* it would register its slots and never claim a job: queued
		 * work would wait for it, and the power manager count it */
		uint64_t one = lim + 1;
		while (fd_jobs_fit(one, open) < 1)
			one++;
		snprintf(errbuf, errlen, "the open file limit of %llu lets no job run (%llu "
			 "descriptors open before the first): raise LimitNOFILE in mxqd.service "
			 "to at least %llu, or %llu for --slots %u", (unsigned long long)lim,
			 (unsigned long long)open, (unsigned long long)one,
			 (unsigned long long)need, server->slots);
		return -EMFILE;
	}
	if (!warn)
		return 0;
	mx_log_warning("open files: the limit of %llu lets about %llu jobs run at once "
		       "(%llu descriptors open before the first), fewer than --slots %u; raise "
		       "LimitNOFILE in mxqd.service to %llu to run one per slot",
		       (unsigned long long)lim, (unsigned long long)fit, (unsigned long long)open,
		       server->slots, (unsigned long long)need);
	return 0;
}

/* How many more jobs can start under the limit LIM (0: none known) with
 * OPEN descriptors open (negative: not known, none). */
static uint64_t fd_room(rlim_t lim, int open)
{
	if (!lim)
		return UINT64_MAX;
	return open < 0 ? 0 : fd_jobs_fit(lim, (uint64_t)open);
}

/* Whether descriptors are left for one more job start; *OPEN: how many
 * are open (counted when negative; the caller adds what it starts). A
 * shortage is said once, and its end once there is room for eight more
 * jobs (not at every job that ends and the next that takes its place). */
static bool fds_left(struct mxqd_server *server, int *open_count)
{
	rlim_t lim = fd_limit();
	int open = *open_count < 0 ? (*open_count = mx_fds_open()) : *open_count;
	uint64_t room = fd_room(lim, open);
	bool ok = room > 0;

	server->fds_full = !ok;
	if (!ok) {
		server->fds_full_jobs = server->jobs_running;
		snprintf(server->fds_full_reason, sizeof(server->fds_full_reason),
			 "open files: %d of the limit of %llu in use, no room for another job",
			 open, (unsigned long long)lim);
	}
	if (!ok && !server->fds_short) {
		mx_log_warning("open files: %d of the limit of %llu in use with %u job(s) running: "
			       "no new job until some end (raise LimitNOFILE in mxqd.service to "
			       "run more at once)", open, (unsigned long long)lim,
			       server->jobs_running);
		server->fds_short = true;
	} else if (server->fds_short && room > 8) {
		mx_log_notice("open files: %d of the limit of %llu in use: room for jobs again",
			      open, (unsigned long long)lim);
		server->fds_short = false;
	}
	return ok;
}

void mxqd_jobs_fds_recheck(struct mxqd_server *server)
{
	if (!server->fds_full || server->jobs_running >= server->fds_full_jobs)
		return;
	if (fd_room(fd_limit(), mx_fds_open()) > 0)
		server->fds_full = false;
	else
		server->fds_full_jobs = server->jobs_running;
}

/* The node is short of descriptors or memory, not of a working disk. */
static bool resource_short(int r)
{
	return r == -EMFILE || r == -ENFILE || r == -ENOMEM || r == -EAGAIN;
}

/* A claimed job whose start ran out of descriptors or memory in STEP
 * (error R): back to the queue unrun; no claim for a second. */
static void node_short(struct mxqd_server *server, struct mxqd_job *job, const char *step, int r)
{
	if (requeue_claimed_job(server, job->job_id) < 0)
		server->claim_uncertain = true;
	mx_log_warning("job %" PRIu64 ": back to the queue, not run: %s: %s (the node is short of "
		       "%s); no job is taken for a second", job->job_id, step, strerror(-r),
		       r == -ENOMEM || r == -EAGAIN ? "memory or processes" : "open files");
	server->short_until_ms = mx_now_monotonic_ms() + 1000;
	job_free(job);
}

/* Start a job we have just claimed (status ASSIGNED, our daemon id). */
static int start_job(struct mxqd_server *server, struct mxqd_job *job)
{
	uint64_t t;
	int r;

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

		if (!mxqd_job_identity_ok(server, job, reason, sizeof(reason))) {
			job->refused = true;
			refuse_job(server, job, reason);
			return 0;
		}
		r = clear_job_cgroup(server, job, reason, sizeof(reason));
		if (resource_short(r)) {
			node_short(server, job, "cannot look at its cgroup", r);
			return 0;
		}
		if (r < 0) {
			refuse_job(server, job, reason);
			return 0;
		}
		r = job_disk_prepare(server, job->job_id, job->uid, job->gid, reason, sizeof(reason));
		if (r == -EEXIST) {
			refuse_job(server, job, reason);
			return 0;
		}
		if (resource_short(r)) {
			node_short(server, job, reason, r);
			return 0;
		}
		if (r < 0) {
			node_disk_failed(server, job, reason);
			return 0;
		}
	}
	if (server->is_root)
		job_set_groups(job);
	t = mxqd_prof_now();
	r = spawn_reaper(server, job);
	mxqd_prof_add(MXQD_PROF_SPAWN, t);
	prof_jobs++;
	if (r < 0) {
		char path[4096];

		job_leftovers_remove(server, job->job_id, true, path, sizeof(path));
		if (resource_short(r)) {
			node_short(server, job, "cannot start a reaper", r);
			return 0;
		}
		mx_log_err("job %" PRIu64 ": cannot start a reaper: %s; back to the queue",
			   job->job_id, strerror(-r));
		requeue_claimed_job(server, job->job_id);
		job_free(job);
		return r;
	}
	job_list_add(server, job);
	return 1;
}

/* The reaper reported the job's pid: it runs; run the hooks. RUNNING is
 * recorded by mxqd_jobs_record_running() once it has run for a while. */
static void job_running(struct mxqd_server *server, struct mxqd_job *job)
{
	uint64_t t;

	job->start_realtime_ms = mx_now_realtime_ms();
	job->reported_ms = mx_now_monotonic_ms();
	job->running_pending = true;
	job->final_status = MXQ_JOB_STATUS_RUNNING;
	mx_log_info("job %" PRIu64 " (group %" PRIu64 ", user %s) started: pid %d, %u slot(s)",
		    job->job_id, job->group_id, job->user_name, (int)job->job_pid, job->slots);
	t = mxqd_prof_now();
	mxqd_hooks_job_started(server, job);
	mxqd_prof_add(MXQD_PROF_HOOKS, t);
	if (job->kill_pending) {
		job->kill_pending = false;
		kill_job(server, job, job->kill_reason);
	}
}

/* Record RUNNING of one job. 0 or -errno (logged; the outcome is recorded
 * as for any job, from ASSIGNED). */
static int record_running(struct mxqd_server *server, struct mxqd_job *job)
{
	uint64_t t = mxqd_prof_now();
	int64_t n;

	n = mxq_job_set_running(server->db, job->job_id, job->job_pid);
	mxqd_prof_add(MXQD_PROF_RUNNING, t);
	job->running_pending = false;
	if (n < 0) {
		/* the job runs; its outcome will be recorded once the database is back */
		mx_log_warning("job %" PRIu64 ": could not record RUNNING: %s", job->job_id,
			       mx_db_error(server->db));
		return (int)n;
	}
	if (n == 0 && !job->kill_sent_ms) {
		/* cancelled between claim and start */
		mx_log_info("job %" PRIu64 ": cancelled while starting", job->job_id);
		kill_job(server, job, MXQD_KILL_CANCEL);
	}
	return 0;
}

int64_t mxqd_jobs_record_running(struct mxqd_server *server, bool all)
{
	uint64_t now = mx_now_monotonic_ms(), next = UINT64_MAX;

	for (struct mxqd_job *job = server->jobs; job; job = job->next) {
		uint64_t due;

		if (!job->running_pending || job->ended)
			continue;
		due = job->reported_ms + MXQD_RUNNING_DELAY_MS;
		if (!all && now < due) {
			if (due - now < next)
				next = due - now;
			continue;
		}
		record_running(server, job);  /* a failure is logged, not retried */
	}
	return next > INT64_MAX ? INT64_MAX : (int64_t)next;
}

/* What a report pipe may carry: the job's pid line and an outcome. */
#define REPORT_MAX (32 + MXQD_OUTCOME_MAX)

/* Take what the reaper wrote on its report pipe into job->report (the
 * pipe is non-blocking). Closes it at end of file (the reaper is gone). */
static void report_take(struct mxqd_job *job)
{
	if (job->report_fd < 0)
		return;
	if (!job->report && !(job->report = malloc(REPORT_MAX)))
		return;  /* next time */
	while (job->report_len < REPORT_MAX) {
		ssize_t n = read(job->report_fd, job->report + job->report_len,
				 REPORT_MAX - job->report_len);

		if (n > 0) {
			job->report_len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		break;  /* end of file (or an error: no more to come either way) */
	}
	close(job->report_fd);
	job->report_fd = -1;
}

/* The outcome a gone reaper sent on its report pipe after the pid line
 * (the spool could not take it). 0, or -ENOENT when there is none. */
static int reported_outcome(struct mxqd_job *job, struct mxqd_outcome *ret)
{
	const char *nl;

	report_take(job);
	nl = job->report ? memchr(job->report, '\n', job->report_len) : NULL;
	if (!nl)
		return -ENOENT;
	nl++;
	return mxqd_outcome_parse(nl, job->report_len - (size_t)(nl - job->report), ret) == 0 ?
	       0 : -ENOENT;
}

/* Take the pids the reapers of starting jobs have reported. */
static void collect_reports(struct mxqd_server *server)
{
	for (struct mxqd_job *job = server->jobs, *next; job; job = next) {
		const char *nl;

		next = job->next;
		if (!job->starting)
			continue;
		report_take(job);
		nl = job->report ? memchr(job->report, '\n', job->report_len) : NULL;
		if (!nl && job->report_fd >= 0)
			continue;       /* not yet */
		job->starting = false;
		if (nl && job->report[0] == '!') {
			/* the spool cannot take the job: it did not run */
			char reason[1024], what[4200];

			snprintf(reason, sizeof(reason), "%.*s", (int)(nl - job->report - 1),
				 job->report + 1);
			job_list_remove(server, job);
			job_leftovers_remove(server, job->job_id, true, what, sizeof(what));
			node_disk_failed(server, job, reason);
			continue;
		}
		job->job_pid = nl ? (pid_t)atoi(job->report) : 0;
		if (job->job_pid > 0)
			job_running(server, job);
		/* else the reaper could not fork the job; its outcome says so */
	}
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

	rows = mxq_group_query_queued(server->db, &res, server->is_root, (unsigned)getuid());
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
		struct mxq_group_queued g;
		struct candidate *c = &cands[n];
		enum mxq_qual_rule rule;
		bool ok;

		if (mxq_group_queued_from_row(&g, res) < 0) {
			free(cands);
			free(users);
			mx_db_result_free(res);
			return -ENOMEM;
		}
		ok = server_is_qualified(&server->caps, &g.reqs, &rule);
		c->threads = g.reqs.threads;
		c->memory_mib = g.reqs.memory_mib;
		c->gpus = g.reqs.gpus;
		mxq_group_reqs_done(&g.reqs);
		if (!ok)
			continue;
		c->group_id = g.group_id;
		c->uid = g.uid;
		c->priority = g.priority;
		c->max_per_node = g.max_per_node;
		c->jobs_inq = g.jobs_inq;
		c->slots = job_slots(server, c->threads, c->memory_mib);
		if (!user_slots(users, nusers, c->uid)) {
			users[nusers].uid = c->uid;
			users[nusers].slots = g.user_slots_running;
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

/*
 * Jobs of one group read ahead (JOB_COLUMNS rows), so that claiming a job
 * is one UPDATE by primary key and needs no further SELECT: the next jobs
 * in claim order are read once per PREFETCH_MAX claims. They are only
 * candidates: each is claimed conditionally. A lost claim (another daemon
 * took the job, it was cancelled) moves on to the next one read ahead, and
 * past the last one reads afresh: a daemon that loses a race keeps
 * claiming instead of idling until the next poll. LOST_CLAIMS_MAX lost
 * claims in a row end the pass for the group (a drained host loses
 * every claim). The read-ahead is dropped when older than the poll
 * interval (new priorities).
 */
#define PREFETCH_MAX 32
#define LOST_CLAIMS_MAX 4

static struct {
	uint64_t group_id;
	uint64_t fetched_ms;
	struct mxqd_job *jobs[PREFETCH_MAX];
	size_t n, next;
} ahead;

static void ahead_drop(void)
{
	for (size_t i = ahead.next; i < ahead.n; i++)
		job_free(ahead.jobs[i]);
	ahead.n = ahead.next = 0;
	ahead.group_id = 0;
}

/* The next job of candidate C to try, or NULL (none left, or -errno in *ret_err). */
static struct mxqd_job *ahead_next(struct mxqd_server *server, const struct candidate *c, int *ret_err)
{
	struct mx_db_result *res = NULL;
	uint64_t now = mx_now_monotonic_ms(), t;
	uint64_t want = c->jobs_inq < PREFETCH_MAX ? c->jobs_inq : PREFETCH_MAX;
	int64_t n;

	*ret_err = 0;
	if (ahead.group_id != c->group_id || now - ahead.fetched_ms > server->poll_interval_ms)
		ahead_drop();
	if (ahead.next < ahead.n)
		return ahead.jobs[ahead.next++];
	ahead_drop();
	t = mxqd_prof_now();
	n = mxq_job_query_queued(server->db, &res, c->group_id, want ? want : 1);
	mxqd_prof_add(MXQD_PROF_LOAD, t);
	if (n < 0) {
		*ret_err = (int)n;
		return NULL;
	}
	while (mx_db_next(res) && ahead.n < PREFETCH_MAX) {
		struct mxqd_job *job = job_from_row(server, res);
		if (!job) {
			*ret_err = -ENOMEM;
			break;
		}
		ahead.jobs[ahead.n++] = job;
	}
	mx_db_result_free(res);
	ahead.group_id = c->group_id;
	ahead.fetched_ms = now;
	return ahead.next < ahead.n ? ahead.jobs[ahead.next++] : NULL;
}

/* The claim: one conditional UPDATE of the job; 0 rows means another
 * daemon won, the job is no longer queued or this host is being drained. */
static int claim_job(struct mxqd_server *server, const struct candidate *c, struct mxqd_job *job)
{
	const struct mxq_job_claimer me = {
		.daemon_id = server->daemon_id, .hostname = server->hostname,
		.daemon_name = server->daemon_name,
	};
	int64_t n;

	n = mxq_job_claim(server->db, &me, job->job_id, c->slots);
	if (n > 0)
		job->final_status = MXQ_JOB_STATUS_ASSIGNED;
	return n < 0 ? (int)n : (int)n;
}

/*
 * The groups that could run here, read at most once per poll interval
 * while jobs keep starting (a job end does not need a fresh read: the
 * counters that change are kept up to date here). A pass that starts
 * nothing, or a failed claim, reads them again next time.
 */
static struct cand_cache {
	struct candidate *cands;
	struct user_load *users;
	size_t n, nusers;
	uint64_t read_ms;
	bool valid;
} cand_cache;

static void cand_cache_drop(void)
{
	free(cand_cache.cands);
	free(cand_cache.users);
	cand_cache = (struct cand_cache) { 0 };
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

	n = mxq_job_query_assigned(server->db, &res, server->daemon_id);
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
	uint64_t now = mx_now_monotonic_ms(), t;
	int started = 0, r = 0;
	int fds = -1;           /* descriptors open (counted at the first claim) */
	unsigned lost = 0;      /* claims lost in a row */

	if (server->claim_uncertain) {
		r = requeue_uncertain_claims(server);
		if (r < 0)
			return r;
	}
	if (!server->accepting || server->disk_fault || server->slots_running >= server->slots ||
	    now < server->short_until_ms)
		return 0;
	if (!cand_cache.valid || now - cand_cache.read_ms > server->poll_interval_ms) {
		int n;

		cand_cache_drop();
		t = mxqd_prof_now();
		n = load_candidates(server, &cand_cache.cands, &cand_cache.users, &cand_cache.nusers);
		mxqd_prof_add(MXQD_PROF_CANDIDATES, t);
		if (n < 0)
			return n;
		cand_cache.n = (size_t)n;
		cand_cache.read_ms = now;
		cand_cache.valid = true;
	}
	for (;;) {
		struct candidate *c = pick(server, cand_cache.cands, cand_cache.n, cand_cache.users,
					   cand_cache.nusers);
		struct mxqd_job *job;

		if (!c || !fds_left(server, &fds))
			break;
		job = ahead_next(server, c, &r);
		if (!job) {
			if (r < 0)
				break;
			c->exhausted = true;  /* nothing queued any more */
			continue;
		}
		t = mxqd_prof_now();
		r = claim_job(server, c, job);
		mxqd_prof_add(MXQD_PROF_CLAIM, t);
		if (r <= 0) {
			job_free(job);
			if (r == -EAGAIN) {
				ahead_drop();   /* deadlock victim: rolled back; read afresh */
				continue;
			}
			if (r < 0) {
				ahead_drop();
				server->claim_uncertain = true;
				break;
			}
			/* others took it, or this host is drained: try the next one */
			if (++lost >= LOST_CLAIMS_MAX) {
				ahead_drop();
				c->exhausted = true;
				lost = 0;
			}
			continue;
		}
		lost = 0;
		r = start_job(server, job);
		if (r < 0 || server->disk_fault || mx_now_monotonic_ms() < server->short_until_ms)
			break;
		if (fds >= 0)
			fds += FDS_PER_JOB;
		started++;
		c->jobs_inq--;
		*user_slots(cand_cache.users, cand_cache.nusers, c->uid) += c->slots;
	}
	if (started == 0 || r < 0)
		cand_cache_drop();
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

/* Run the callback of the job in the current row of RES (MXQ_JOB_COLUMNS),
 * which was cancelled before it started. */
static void run_cancelled_callback(struct mxqd_server *server, struct mx_db_result *res)
{
	struct mxqd_job *job = job_from_row(server, res);

	if (!job) {
		mx_log_err("job %s: no memory for its callback", mx_db_str(res, MXQ_JOB_COL_ID));
		return;
	}
	if (job->callback && job->callback[0]) {
		mx_log_info("job %" PRIu64 ": cancelled before it started, running its callback",
			    job->job_id);
		mxqd_callback_run(server, job, MXQ_JOB_STATUS_CANCELLED);
	}
	job_free(job);
}

/*
 * Callbacks of jobs cancelled before any mxqd claimed them: this mxqd
 * takes over those of groups it qualifies for (where the job could have
 * run, so the callback's path is likely there too) and runs them, unless
 * it is shutting down or being drained (the claim's drain guard).
 */
static int cancelled_callbacks(struct mxqd_server *server)
{
	const struct mxq_job_claimer me = {
		.daemon_id = server->daemon_id, .hostname = server->hostname,
		.daemon_name = server->daemon_name,
	};
	static uint64_t next_ms;   /* every 10 s: a callback is not urgent */
	struct mx_db_result *res = NULL;
	uint64_t now = mx_now_monotonic_ms();
	int64_t n;

	if (!server->accepting || now < next_ms)
		return 0;
	next_ms = now + 10000;
	n = mxq_job_query_cancelled_callbacks(server->db, &res, 100);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		struct mxq_group_reqs reqs;
		enum mxq_qual_rule rule;
		bool ok;

		if (mxq_group_reqs_from_row(&reqs, res, MXQ_JOB_NCOLS) < 0) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
		ok = server_is_qualified(&server->caps, &reqs, &rule);
		mxq_group_reqs_done(&reqs);
		if (!ok)
			continue;
		n = mxq_job_claim_cancelled_callback(server->db, &me, mx_db_u64(res, MXQ_JOB_COL_ID));
		if (n < 0) {
			mx_db_result_free(res);
			return (int)n;
		}
		if (n > 0)
			run_cancelled_callback(server, res);
	}
	mx_db_result_free(res);
	return 0;
}

/* Move an adopted job's row to this daemon; one whose reaper has not
 * started it stays ASSIGNED (never_started_here() can requeue it). */
static int64_t adopt_row(struct mxqd_server *server, const struct mxqd_job *job)
{
	return job->adopted_unstarted ?
	       mxq_job_adopt_claimed(server->db, job->job_id, server->daemon_id) :
	       mxq_job_adopt(server->db, job->job_id, server->daemon_id);
}

int mxqd_jobs_handle_cancel(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	int64_t n;

	/* re-adopted jobs whose row still names the earlier daemon: the query
	 * below finds this daemon's */
	for (struct mxqd_job *job = server->jobs; job; job = job->next)
		if (job->adopt_pending && !job->ended &&
		    adopt_row(server, job) >= 0) {
			job->adopt_pending = false;
			mx_log_info("job %" PRIu64 ": moved to this daemon", job->job_id);
		}
	n = mxq_job_query_to_cancel(server->db, &res, server->daemon_id);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		uint64_t job_id = mx_db_u64(res, 0);
		struct mxqd_job *job = find_job(server, job_id);

		if (!job) {
			/* cancelled between our claim and its start: it never ran.
			 * Its row is read first: once it is CANCELLED nothing would
			 * run the callback a failed read had kept from running */
			struct mx_db_result *one = NULL;

			if (mxq_job_query_one(server->db, &one, job_id) > 0 && mx_db_next(one) &&
			    mxq_job_cancel_unstarted(server->db, job_id, server->daemon_id) > 0) {
				mx_log_info("job %" PRIu64 ": cancelled before it started", job_id);
				/* it was ours: so is its callback */
				run_cancelled_callback(server, one);
			}
			mx_db_result_free(one);
			continue;
		}
		if (!job->ended && !job->kill_sent_ms) {
			mx_log_info("job %" PRIu64 ": cancelled, terminating process group %d",
				    job->job_id, (int)job->job_pid);
			kill_job(server, job, MXQD_KILL_CANCEL);
		}
	}
	mx_db_result_free(res);
	/* Queued jobs of a cancelled group. Upstream's mxqkill cancels only
	 * the ones an upstream daemon could claim (server_id = ''), and
	 * leaves those hidden from upstream daemons queued (create_triggers.sql).
	 * Two statements: the job triggers update mxq_group, which a statement
	 * on mxq_job must then not read. */
	n = mxq_group_query_cancelled_queued(server->db, &res);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		int64_t m = mxq_job_cancel_queued(server->db, mx_db_u64(res, 0));
		if (m > 0)
			mx_log_info("group %" PRIu64 ": cancelled, %" PRId64 " queued job(s) cancelled",
				    mx_db_u64(res, 0), m);
	}
	mx_db_result_free(res);
	return cancelled_callbacks(server);
}

void mxqd_jobs_escalate_kills(struct mxqd_server *server)
{
	uint64_t now = mx_now_monotonic_ms();

	for (struct mxqd_job *job = server->jobs; job; job = job->next) {
		if (job->kill_sent_ms && !job->ended && job->job_pid > 0 &&
		    now - job->kill_sent_ms > (uint64_t)server->kill_grace_s * 1000) {
			signal_job(server, job, SIGKILL);
			job->kill_sent_ms = now; /* repeat every grace period until gone */
		}
	}
}

void mxqd_jobs_kill_all(struct mxqd_server *server)
{
	for (struct mxqd_job *job = server->jobs; job; job = job->next)
		if (!job->ended)
			kill_job(server, job, MXQD_KILL_SHUTDOWN);
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

/*
 * A claimed job whose reaper said "not started" in its pid file (job pid
 * 0): it was between that and the job's start when its mxqd went, and
 * starts it only if it saw that mxqd alive after writing it (mxqd_reaper.c).
 * Give it a moment to do one or the other. True when the job did not start
 * and never will (its reaper is gone, no outcome): it goes back to the
 * queue.
 */
static bool job_never_started(const struct mxqd_server *server, uint64_t job_id)
{
	for (int i = 0; i < 200; i++) {
		struct mxqd_outcome o;
		pid_t reaper, job_pid;
		unsigned long long st, now_st;
		char boot[37];

		if (mxqd_pidfile_read(server->spooldir, job_id, &reaper, &job_pid, &st, boot) < 0 ||
		    job_pid != 0 || mxqd_outcome_read(server->spooldir, job_id, &o) == 0)
			return false;
		if (strcmp(boot, server->boot_id) != 0 || mx_proc_starttime(reaper, &now_st) < 0 ||
		    now_st != st)
			return true;
		mx_sleep_ms(10);
	}
	return false;  /* its reaper still deciding after 2 s: adopted, it tells */
}

static void log_adopted(const struct mxqd_server *server, const struct mxqd_job *job)
{
	struct mxqd_cgroup cg;
	char path[4096] = "";

	mxqd_cgroup_job(&cg, job->job_id);
	if (server->cgroups && mxqd_cgroup_exists(&cg))
		mxqd_cgroup_path(&cg, path, sizeof(path));
	mx_log_info("job %" PRIu64 ": re-adopted (reaper %d, job %d%s%s)", job->job_id,
		    (int)job->reaper_pid, (int)job->job_pid, path[0] ? ", cgroup " : "", path);
}

/*
 * Outcomes in the spool of jobs that are no longer active, from an mxqd
 * that died after it recorded the end: before the hooks ran (JOBID.stat)
 * or after (JOBID.done, see mxqd_outcome_mark_done). A .stat job is
 * listed again and finished by the reaping loop: finish_job() runs the
 * hooks if the end on record is this outcome's, as after a lost answer. A
 * .done job's files are removed. An outcome whose row is not an end of
 * this host and daemon name is left alone. Returns the jobs listed.
 */
static unsigned recover_ended(struct mxqd_server *server, const struct mxq_job_claimer *me)
{
	DIR *dir = opendir(server->spooldir);
	struct dirent *de;
	unsigned listed = 0;

	if (!dir) {
		mx_log_warning("recovery: cannot read the spool %s: %m", server->spooldir);
		return 0;
	}
	while ((de = readdir(dir))) {
		char *end;
		struct mx_db_result *res = NULL;
		struct mxqd_job *job;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		errno = 0;
		uint64_t job_id = strtoull(de->d_name, &end, 10);
		bool done = strcmp(end, ".done") == 0;
		if (errno || job_id == 0 || (!done && strcmp(end, ".stat") != 0) ||
		    find_job(server, job_id))
			continue;
		if (done) {
			mxqd_outcome_remove(server->spooldir, job_id);
			continue;
		}
		if (mxq_job_query_ended_by(server->db, &res, me, job_id) > 0 && mx_db_next(res) &&
		    (job = job_from_row(server, res))) {
			job->adopted = true;
			job->end_left = true;
			job->reaper_pid = job->job_pid = 0;  /* nothing of it runs */
			job->start_realtime_ms = mx_now_realtime_ms();
			job_list_add(server, job);
			listed++;
		}
		mx_db_result_free(res);
	}
	closedir(dir);
	return listed;
}

int mxqd_jobs_recover(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;
	const struct mxq_job_claimer me = {
		.daemon_id = server->daemon_id, .hostname = server->hostname,
		.daemon_name = server->daemon_name,
	};
	unsigned requeued = 0, adopted = 0, lost = 0, cancelled = 0;
	int first_error = 0;
	int64_t n;

	n = mxq_job_query_left_by(server->db, &res, &me);
	if (n < 0)
		return (int)n;
	while (mx_db_next(res)) {
		struct mxqd_job *job;
		uint64_t job_id;
		int status;
		pid_t reaper = 0, job_pid = 0;
		unsigned long long starttime = 0;
		bool alive, traces;

		/* listed by an earlier call that failed later on */
		if (find_job(server, mx_db_u64(res, MXQ_JOB_COL_ID)))
			continue;
		job = job_from_row(server, res);
		if (!job) {
			mx_log_err("job %" PRIu64 ": cannot be recovered: %m",
				   mx_db_u64(res, MXQ_JOB_COL_ID));
			continue;
		}
		job_id = job->job_id;
		status = job->final_status;
		traces = job_left_traces(server, job_id, &reaper, &job_pid, &starttime, &alive);
		if ((status == MXQ_JOB_STATUS_ASSIGNED || status == MXQ_JOB_STATUS_CANCELLING) &&
		    (!traces || (job_pid == 0 && job_never_started(server, job_id)))) {
			char what[4200];

			/* claimed, never started (no trace, or its reaper said "not
			 * started" and is gone): without the tmpdir and spool
			 * reservation made for it (the next claim here would be
			 * refused over the tmpdir), back to the queue; or, when it
			 * was cancelled meanwhile, made this daemon's, so that
			 * mxqd_jobs_handle_cancel() ends it CANCELLED with its
			 * callback, as one cancelled between claim and start */
			job_free(job);
			job_leftovers_remove(server, job_id, true, what, sizeof(what));
			if (status == MXQ_JOB_STATUS_CANCELLING) {
				if ((n = mxq_job_adopt(server->db, job_id, server->daemon_id)) > 0)
					cancelled++;
			} else if ((n = requeue_claimed_job(server, job_id)) == 0) {
				requeued++;
			}
			/* the row still names the dead daemon and nothing would
			 * look at it again: the caller asks once more */
			if (n < 0 && !first_error)
				first_error = (int)n;
			continue;
		}
		job->adopted = true;
		/* cancelled while no mxqd watched (mxqkill sets CANCELLING, or its
		 * mxqd had sent the SIGTERM already): it ends CANCELLED, whatever
		 * its exit status, as if this mxqd had killed it */
		if (status == MXQ_JOB_STATUS_CANCELLING)
			job->kill_reason = MXQD_KILL_CANCEL;
		job->reaper_pid = reaper;
		job->job_pid = job_pid;
		job->reaper_starttime = starttime;
		job->start_realtime_ms = mx_now_realtime_ms();
		job_list_add(server, job);
		if (traces) {
			/* running, or ended while no mxqd watched: the reaping loop decides */
			/* a reaper still deciding whether it starts its job: the row
			 * stays ASSIGNED, so that the job can go back to the queue
			 * when the reaper ends without starting it */
			job->adopted_unstarted = status == MXQ_JOB_STATUS_ASSIGNED && alive &&
						 job_pid == 0;
			if (adopt_row(server, job) < 0) {
				/* until its row names this daemon, nothing here
				 * sees an mxqkill of it: asked again each round */
				job->adopt_pending = true;
				mx_log_warning("job %" PRIu64 ": cannot move it to this daemon: %s; "
					       "trying again", job_id, mx_db_error(server->db));
			}
			adopted++;
			if (!alive)
				job->reaper_pid = 0;  /* reaper gone: outcome file or lost */
			else
				log_adopted(server, job);
		} else {
			mx_log_warning("job %" PRIu64 ": was %s on this node but left no trace: UNKNOWN",
				       job_id, mxq_job_status_to_name(status));
			end_lost_job(server, job);
			job->final_status = MXQ_JOB_STATUS_UNKNOWN;
			job->ended = true;
			lost++;
		}
	}
	mx_db_result_free(res);
	adopted += recover_ended(server, &me);
	if (requeued || adopted || lost || cancelled)
		mx_log_notice("recovery: %u claimed job(s) requeued, %u adopted, %u lost, "
			      "%u cancelled before they started", requeued, adopted, lost, cancelled);
	return first_error;
}
