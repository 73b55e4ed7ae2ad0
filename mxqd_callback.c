/*
 * mxqd_callback - run a job's callback (mxqsub --callback) after every
 * terminal outcome. Registered as a job_ended status hook; mxqd_job.c
 * calls mxqd_callback_run() itself for jobs cancelled before they started.
 *
 * Process tree: mxqd forks a child that forks the supervisor and exits at
 * once (mxqd reaps it immediately: the daemon never waits for a callback).
 * The orphaned supervisor starts the callback in its own process group, as
 * the submitting user, in the job's workdir, with RLIMIT_CPU 60 s,
 * RLIMIT_AS 256 MiB and no core dumps; it kills the whole group when the
 * callback exits or after --callback-timeout, and logs anything unusual.
 * With cgroups (mxqd_cgroup.c) the callback runs in a cgroup of its own
 * (callback-JOBID, its memory limited to RLIMIT_AS's 256 MiB for all of
 * its processes together where a memory controller is; what an earlier one
 * left there is killed first, and without one it is not run), and at its
 * end or timeout every process in it is killed, daemonised ones included.
 * Like ssh's StrictModes, the callback is checked when it is about to run,
 * as the user it runs as: the file (symlinks resolved) and every directory
 * above it must be owned by that user or root and not writable by group or
 * others (a directory above may be, with the sticky bit: /tmp), so that no
 * other user can change what runs as this one; the real path is what is
 * run. Otherwise it is not run, and the daemon logs why in one line.
 * A callback's result never changes the job's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_safefs.h"
#include "mx_util.h"
#include "mxq_status.h"
#include "mxqd.h"
#include "mxqd_cgroup.h"
#include "mxqd_energy_ipmi.h"
#include "mxqd_power.h"

#define CALLBACK_CPU_SECONDS 60
#define CALLBACK_AS_BYTES    (256ULL << 20)

/* The callback process: never returns. If the callback may not run, the
 * reason goes to WHY_FD (close-on-exec, read by the supervisor), exit 126. */
static _Noreturn void exec_callback(const struct mxqd_server *server, const struct mxqd_job *job,
				    int final_status, int why_fd)
{
	struct rlimit cpu = { CALLBACK_CPU_SECONDS, CALLBACK_CPU_SECONDS };
	struct rlimit as = { CALLBACK_AS_BYTES, CALLBACK_AS_BYTES };
	struct rlimit core = { 0, 0 };
	const char *status_name = mxq_job_status_to_name(final_status);
	char num[32], real[4096], why[1024];
	int fd;

	setpgid(0, 0);
	/* the supervisor ignores some (and mxqd SIGPIPE): the callback, like a
	 * job, starts with the defaults, which an exec keeps otherwise */
	mx_signals_default();
	setrlimit(RLIMIT_CPU, &cpu);
	setrlimit(RLIMIT_AS, &as);
	setrlimit(RLIMIT_CORE, &core);
	if (server->is_root &&
	    (setgid(job->gid) < 0 || initgroups(job->user_name, job->gid) < 0 || setuid(job->uid) < 0))
		_exit(126);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	if (why_fd > 3)
		close_range(3, (unsigned)why_fd - 1, 0);
	close_range((unsigned)why_fd + 1, ~0U, 0);
	if (chdir(job->workdir) < 0 && chdir("/") < 0)
		_exit(126);
	umask(job->umask);  /* what the user chose for the job's files, not mxqd's */

	clearenv();
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
	setenv("USER", job->user_name, 1);
	setenv("LOGNAME", job->user_name, 1);
	{
		struct passwd *pw = getpwuid(job->uid);
		setenv("HOME", pw ? pw->pw_dir : "/", 1);
	}
	snprintf(num, sizeof(num), "%" PRIu64, job->job_id);
	setenv("MXQ_JOB_ID", num, 1);
	snprintf(num, sizeof(num), "%" PRIu64, job->group_id);
	setenv("MXQ_GROUP_ID", num, 1);
	setenv("MXQ_JOB_STATUS", status_name ? status_name : "UNKNOWN", 1);
	setenv("MXQ_JOB_WORKDIR", job->workdir, 1);
	setenv("MXQ_HOSTNAME", server->hostname, 1);
	if (job->outcome && WIFEXITED(job->outcome->wait_status)) {
		snprintf(num, sizeof(num), "%d", WEXITSTATUS(job->outcome->wait_status));
		setenv("MXQ_JOB_EXIT_CODE", num, 1);
	}
	/* as the user, where a relative name is resolved as the exec would */
	if (mx_file_check_safe(job->callback, geteuid(), "the job's user", real, sizeof(real),
			       why, sizeof(why)) < 0) {
		if (write(why_fd, why, strlen(why)) < 0) {
			/* the supervisor then says only that it could not run */
		}
		_exit(126);
	}
	execl(real, job->callback, (char *)NULL);
	_exit(127);
}

/* The supervisor: start, bound and clean up one callback. Never returns. */
static _Noreturn void supervise(const struct mxqd_server *server, const struct mxqd_job *job,
				int final_status)
{
	uint64_t deadline_ms = mx_now_monotonic_ms() + (uint64_t)server->callback_timeout_s * 1000;
	sigset_t chld, none;
	struct mxqd_cgroup cg;
	bool in_cg = false;
	int status = 0, r, why_fd = -1;
	pid_t pid;
	ssize_t n;
	char shown[4096], why[1024], why_shown[4096];
	/* the name comes from the job's row: no control characters into the log */
	const char *cb = mx_term_field(job->callback, shown, sizeof(shown));

	setsid();
	mx_log_close_other_fds(-1);
	sigemptyset(&none);
	/* waited for, not handled: SIGTERM (an admin's kill or killall of
	 * mxqd's processes) ends the callback with its supervisor, which must
	 * not leave it running without its timeout */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigaddset(&chld, SIGTERM);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigprocmask(SIG_SETMASK, &chld, NULL);

	if (server->cgroups) {
		/* as for a job: what an earlier one left under the name is
		 * killed, and without a cgroup of its own it does not run */
		mxqd_cgroup_callback(&cg, job->job_id);
		r = mxqd_cgroup_clear(&cg, 2000);
		if (r > 0)
			mx_log_warning("job %" PRIu64 ": the cgroup of callback %s held %d process(es) "
				       "of an earlier one: killed", job->job_id, cb, r);
		if (r >= 0)
			/* RLIMIT_AS bounds each process, the cgroup all of them:
			 * a callback cannot fork its way past it */
			r = mxqd_cgroup_create(&cg, 0, CALLBACK_AS_BYTES);
		if (r < 0) {
			mx_log_err("job %" PRIu64 ": callback %s not run: cannot have a cgroup of its "
				   "own: %s", job->job_id, cb, strerror(-r));
			_exit(1);
		}
		in_cg = true;
	}
	pid = mx_fork_with_pipe(&why_fd);
	if (pid < 0) {
		mx_log_err("job %" PRIu64 ": cannot fork callback %s: %s", job->job_id, cb,
			   strerror((int)-pid));
		if (in_cg)
			mxqd_cgroup_remove(&cg);
		_exit(1);
	}
	if (pid == 0) {
		if (in_cg && mxqd_cgroup_join(&cg) < 0)
			_exit(126);
		sigprocmask(SIG_SETMASK, &none, NULL);
		exec_callback(server, job, final_status, why_fd);
	}
	fcntl(why_fd, F_SETFL, O_NONBLOCK);
	setpgid(pid, pid); /* also done by the child: no race on who is first */

	/* one deadline: every stop and continue of the callback is a SIGCHLD,
	 * and a timeout started afresh at each would never end */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		uint64_t now = mx_now_monotonic_ms(), left = deadline_ms > now ? deadline_ms - now : 0;
		struct timespec timeout = { .tv_sec = (time_t)(left / 1000),
					    .tv_nsec = (long)(left % 1000) * 1000000L };

		int sig;

		if (w == pid)
			break;
		sig = left == 0 ? -1 : sigtimedwait(&chld, NULL, &timeout);
		if (sig == SIGTERM) {
			mx_log_warning("job %" PRIu64 ": callback %s: its supervisor was terminated: killed",
				       job->job_id, cb);
		} else if (left == 0 || (sig < 0 && errno == EAGAIN)) {
			mx_log_warning("job %" PRIu64 ": callback %s still running after %u s: killed",
				       job->job_id, cb, server->callback_timeout_s);
		} else {
			continue;
		}
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		break;
	}
	kill(-pid, SIGKILL); /* whatever it forked goes with it */
	if (in_cg) {
		/* also what left its process group (setsid) */
		if (mxqd_cgroup_kill(&cg, 10000) < 0)
			mx_log_err("job %" PRIu64 ": processes of callback %s survive SIGKILL",
				   job->job_id, cb);
		mxqd_cgroup_remove(&cg);
	}
	/* written before its exit, if it refused to run the callback */
	n = read(why_fd, why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	if (n > 0)
		mx_log_err("job %" PRIu64 ": callback %s not run: %s", job->job_id, cb,
			   mx_term_field(why, why_shown, sizeof(why_shown)));
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		mx_log_warning("job %" PRIu64 ": callback %s could not be executed", job->job_id, cb);
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		mx_log_warning("job %" PRIu64 ": callback %s exited with status %d",
			       job->job_id, cb, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		mx_log_warning("job %" PRIu64 ": callback %s ended by signal %d",
			       job->job_id, cb, WTERMSIG(status));
	else
		mx_log_debug("job %" PRIu64 ": callback %s done", job->job_id, cb);
	_exit(0);
}

void mxqd_callback_run(struct mxqd_server *server, const struct mxqd_job *job, int final_status)
{
	pid_t pid;
	char reason[1024], shown[4096];

	if (!job->callback || !job->callback[0] || job->refused)
		return;
	if (!mxqd_job_identity_ok(server, job, reason, sizeof(reason))) {
		mx_log_err("job %" PRIu64 ": callback %s not run: %s", job->job_id,
			   mx_term_field(job->callback, shown, sizeof(shown)), reason);
		return;
	}
	pid = fork();
	if (pid < 0) {
		mx_log_err("job %" PRIu64 ": cannot fork for callback: %m", job->job_id);
		return;
	}
	if (pid == 0) {
		pid_t s;

		/* a copy of mxqd: the BMC passwords of a power manager go first */
		mxqd_power_forget_secrets();
		mxqd_energy_ipmi_forget_secrets();
		mx_db_forget_credentials(server->db);
		s = fork();
		if (s != 0)
			_exit(s < 0 ? 1 : 0);
		supervise(server, job, final_status);
	}
	/* the intermediate child exits right away */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static void callback_job_ended(void *ctx, struct mxqd_server *server, const struct mxqd_job *job,
			       int final_status)
{
	mxqd_callback_run(server, job, final_status);
}

const struct mxqd_hooks mxqd_callback_hooks = {
	.job_ended = callback_job_ended,
};
