/*
 * mxqd_power_work - transport calls in worker processes (see
 * mxqd_power_work.h).
 *
 * A worker is a fork of the leader's mxqd: the target and configuration
 * it was given are in its copy of memory, so nothing is copied or
 * serialised on the way in. It closes every descriptor it inherited but
 * its pipe and the log (the database socket, the spool lock: closing only
 * drops its own reference), unblocks signals (the main loop blocks them),
 * makes the call, writes "RC MS\nREASON" into its pipe in one write
 * (shorter than PIPE_BUF, so never torn) and leaves with _exit(), which
 * flushes none of the stdio buffers it inherited. The parent reads the
 * pipe without blocking; mxqd's main loop reaps the process with its other
 * children.
 *
 * Fencing: the worker compares the leader's lease deadline it was given
 * with the boot-time clock right before the call and refuses when it has
 * passed (result "-116 MS\nrefused ..."). It asks for SIGTERM when its
 * parent dies (PR_SET_PDEATHSIG, checked once more against getppid() for
 * a parent that died before the request); its SIGTERM handler kills the
 * process group of a running exec command (mxqd_power_child_pgid) and then
 * the worker itself with SIGKILL, both async-signal-safe.
 */
#define _GNU_SOURCE
#include "mxqd_power_work.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"

volatile sig_atomic_t mxqd_power_child_pgid;

struct worker {
	pid_t pid;
	int fd;
	uint64_t started_ms;
	char buf[600];           /* what it wrote so far */
	size_t len;
	struct mxqd_power_work_result res;
};

static struct worker *workers;
static size_t n_workers, cap_workers;

static const char *const kind_names[] = {
	[MXQD_WORK_WAKE] = "wake", [MXQD_WORK_OFF_SOFT] = "power off",
	[MXQD_WORK_OFF_HARD] = "hard power off", [MXQD_WORK_STATUS] = "status",
	[MXQD_WORK_RUN] = "run",
};

const char *mxqd_power_work_kind_to_string(enum mxqd_power_work_kind k)
{
	return (size_t)k < MX_ARRAY_SIZE(kind_names) ? kind_names[k] : "?";
}

/* The call itself, in the worker. */
static int call(const struct mxqd_power_transport *tr, enum mxqd_power_work_kind kind,
		const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		const char *command, char *errbuf, size_t errlen)
{
	switch (kind) {
	case MXQD_WORK_WAKE:
		if (tr->power_on)
			return tr->power_on(t, c, errbuf, errlen);
		break;
	case MXQD_WORK_OFF_SOFT:
	case MXQD_WORK_OFF_HARD:
		if (tr->power_off)
			return tr->power_off(t, c, kind == MXQD_WORK_OFF_HARD ? MXQD_POWER_OFF_HARD :
					     MXQD_POWER_OFF_SOFT, errbuf, errlen);
		break;
	case MXQD_WORK_STATUS:
		if (tr->status)
			return tr->status(t, c, errbuf, errlen);
		break;
	case MXQD_WORK_RUN:
		if (tr->run)
			return tr->run(t, c, command, errbuf, errlen);
		break;
	}
	snprintf(errbuf, errlen, "transport %s cannot %s", tr->name, mxqd_power_work_kind_to_string(kind));
	return -ENOTSUP;
}

/* The leader died (parent-death signal) or the worker is past its hard
 * limit: nothing it started may outlive it. */
static void worker_die(int sig)
{
	pid_t g = (pid_t)mxqd_power_child_pgid;

	(void)sig;
	if (g > 0)
		kill(-g, SIGKILL);
	kill(getpid(), SIGKILL);
}

/* MS from MXQD_POWER_TEST_HOLD for KIND, 0 when none (see the header). */
static unsigned long test_hold_ms(enum mxqd_power_work_kind kind)
{
	static const char *const names[] = {
		[MXQD_WORK_WAKE] = "wake", [MXQD_WORK_OFF_SOFT] = "off", [MXQD_WORK_OFF_HARD] = "off",
		[MXQD_WORK_STATUS] = "status", [MXQD_WORK_RUN] = "run",
	};
	const char *p = getenv("MXQD_POWER_TEST_HOLD");

	while (p && *p) {
		size_t len = strcspn(p, "=,");
		char *end;
		unsigned long ms;

		if (p[len] != '=')
			return 0;
		ms = strtoul(p + len + 1, &end, 10);
		if ((len == 3 && strncmp(p, "any", 3) == 0) ||
		    (len == strlen(names[kind]) && strncmp(p, names[kind], len) == 0))
			return ms;
		p = *end == ',' ? end + 1 : NULL;
	}
	return 0;
}

static void worker_main(int fd, const struct mxqd_power_transport *tr, enum mxqd_power_work_kind kind,
			const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
			const char *command, struct mxqd_power_work_fence fence, pid_t leader)
{
	char err[512] = "", out[600], epoch[32];
	uint64_t t0, now;
	sigset_t none;
	int rc, n;

	/* die with the leader, and take the transport's command along */
	signal(SIGTERM, worker_die);
	signal(SIGINT, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (getppid() != leader)
		_exit(0);  /* it died before we asked */
	/* not the database socket, the spool lock or anything else of the
	 * leader: a restarted mxqd must not find its spool still locked */
	mx_log_close_other_fds(fd);
	snprintf(epoch, sizeof(epoch), "%" PRIu64, fence.epoch);
	setenv("MXQ_POWER_EPOCH", epoch, 1);
	mx_sleep_ms(test_hold_ms(kind));
	t0 = mx_now_monotonic_ms();
	now = mx_now_boottime_ms();  /* the lease's clock */
	if (fence.deadline_ms && now >= fence.deadline_ms) {
		rc = -ESTALE;
		snprintf(err, sizeof(err), "refused: the lease of epoch %" PRIu64 " ended %.3f s before "
			 "the call", fence.epoch, (double)(now - fence.deadline_ms) / 1000.0);
	} else {
		rc = call(tr, kind, t, c, command, err, sizeof(err));
	}
	n = snprintf(out, sizeof(out), "%d %" PRIu64 "\n%s", rc, mx_now_monotonic_ms() - t0, err);
	if (n > (int)sizeof(out) - 1)
		n = (int)sizeof(out) - 1;
	if (write(fd, out, (size_t)n) < 0) {
		/* the leader is gone: nobody to tell */
	}
	_exit(0);
}

int mxqd_power_work_start(const struct mxqd_power_transport *tr, enum mxqd_power_work_kind kind,
			  const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
			  const char *command, struct mxqd_power_work_tag tag,
			  struct mxqd_power_work_fence fence, char *errbuf, size_t errlen)
{
	pid_t leader = getpid();
	struct worker *w;
	pid_t pid;
	int fd;

	if (fence.deadline_ms && mx_now_boottime_ms() >= fence.deadline_ms) {
		snprintf(errbuf, errlen, "refused: the lease of epoch %" PRIu64 " has ended", fence.epoch);
		return -ESTALE;
	}

	if (n_workers == cap_workers) {
		size_t cap = cap_workers ? 2 * cap_workers : 16;
		struct worker *m = realloc(workers, cap * sizeof(*m));

		if (!m) {
			snprintf(errbuf, errlen, "no memory for a transport worker");
			return -ENOMEM;
		}
		workers = m;
		cap_workers = cap;
	}
	pid = mx_fork_with_pipe(&fd);
	if (pid < 0) {
		snprintf(errbuf, errlen, "cannot start a transport worker: %s", strerror((int)-pid));
		return (int)pid;
	}
	if (pid == 0)
		worker_main(fd, tr, kind, t, c, command, fence, leader);  /* does not return */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	w = &workers[n_workers++];
	*w = (struct worker) { .pid = pid, .fd = fd, .started_ms = mx_now_monotonic_ms() };
	snprintf(w->res.hostname, sizeof(w->res.hostname), "%s", t->hostname);
	w->res.kind = kind;
	w->res.tag = tag;
	w->res.fence = fence;
	return 0;
}

bool mxqd_power_work_busy(const char *hostname, enum mxqd_power_work_kind kind)
{
	for (size_t i = 0; i < n_workers; i++)
		if (workers[i].res.kind == kind && strcmp(workers[i].res.hostname, hostname) == 0)
			return true;
	return false;
}

size_t mxqd_power_work_running(void)
{
	return n_workers;
}

/* Read what is there: 1 when the worker is done (EOF), 0 while it runs. */
static int drain(struct worker *w)
{
	for (;;) {
		ssize_t n = read(w->fd, w->buf + w->len, sizeof(w->buf) - 1 - w->len);

		if (n > 0) {
			w->len += (size_t)n;
			if (w->len < sizeof(w->buf) - 1)
				continue;
			return 1;  /* full: a worker writes no more than this */
		}
		if (n == 0)
			return 1;
		if (errno == EINTR)
			continue;
		return errno == EAGAIN ? 0 : 1;
	}
}

static void finish(struct worker *w, uint64_t now)
{
	char *nl;

	w->buf[w->len] = '\0';
	w->res.ms = now - w->started_ms;  /* the worker's own figure replaces it */
	nl = strchr(w->buf, '\n');
	if (!nl) {
		w->res.rc = -EIO;
		snprintf(w->res.err, sizeof(w->res.err), "the transport worker (pid %d) ended without "
			 "a result", (int)w->pid);
		return;
	}
	*nl = '\0';
	if (sscanf(w->buf, "%d %" SCNu64, &w->res.rc, &w->res.ms) != 2) {
		w->res.rc = -EIO;
		snprintf(w->res.err, sizeof(w->res.err), "the transport worker (pid %d) wrote no "
			 "result", (int)w->pid);
		return;
	}
	snprintf(w->res.err, sizeof(w->res.err), "%s", nl + 1);
	w->res.refused = w->res.rc == -ESTALE && strncmp(w->res.err, "refused:", 8) == 0;
}

size_t mxqd_power_work_collect(uint64_t hard_limit_ms, struct mxqd_power_work_result **ret)
{
	uint64_t now = mx_now_monotonic_ms();
	struct mxqd_power_work_result *out;
	size_t n_out = 0, keep = 0;

	*ret = NULL;
	if (n_workers == 0)
		return 0;
	out = calloc(n_workers, sizeof(*out));
	if (!out)
		return 0;
	for (size_t i = 0; i < n_workers; i++) {
		struct worker *w = &workers[i];

		if (drain(w)) {
			finish(w, now);
		} else if (now - w->started_ms > hard_limit_ms) {
			kill(w->pid, SIGTERM);  /* worker_die(): its command's group too */
			w->res.rc = -ETIMEDOUT;
			w->res.ms = now - w->started_ms;
			snprintf(w->res.err, sizeof(w->res.err), "%s of %s did not return within %.0f s: "
				 "transport worker killed", mxqd_power_work_kind_to_string(w->res.kind),
				 w->res.hostname, (double)hard_limit_ms / 1000.0);
		} else {
			workers[keep++] = *w;
			continue;
		}
		close(w->fd);
		out[n_out++] = w->res;
	}
	n_workers = keep;
	if (n_out == 0) {
		free(out);
		return 0;
	}
	*ret = out;
	return n_out;
}

/* How long a leader that stops lets its power-state reads end. */
#define STATUS_GRACE_MS 5000

/* Kill worker W (kinds other than reads, or every one with ALL) unless it
 * is done already (its result in the pipe), and wait for it. */
static void stop_worker(struct worker *w, bool all)
{
	if ((!all && w->res.kind == MXQD_WORK_STATUS) || w->pid <= 0 || drain(w))
		return;
	kill(w->pid, SIGTERM);
	while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
}

void mxqd_power_work_stop_all(void)
{
	/* every call that acts is killed now; a read of a node's power state
	 * changes nothing: it may end (and log out of the BMC session it
	 * opened, of which a BMC has few) for a few seconds before it is
	 * killed too */
	uint64_t until = mx_now_monotonic_ms() + STATUS_GRACE_MS;

	for (size_t i = 0; i < n_workers; i++)
		stop_worker(&workers[i], false);
	for (;;) {
		bool reading = false;

		for (size_t i = 0; i < n_workers; i++)
			if (workers[i].res.kind == MXQD_WORK_STATUS && !drain(&workers[i]))
				reading = true;
		if (!reading || mx_now_monotonic_ms() >= until)
			break;
		mx_sleep_ms(20);
	}
	for (size_t i = 0; i < n_workers; i++)
		stop_worker(&workers[i], true);
	mxqd_power_work_fini();
}

void mxqd_power_work_fini(void)
{
	for (size_t i = 0; i < n_workers; i++)
		close(workers[i].fd);
	free(workers);
	workers = NULL;
	n_workers = cap_workers = 0;
}
