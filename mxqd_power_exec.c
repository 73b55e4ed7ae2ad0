/*
 * mxqd_power_exec - the "exec" and "self" transports.
 *
 * exec: the leader runs --power-exec-command HOST on|off|status (stdin
 * /dev/null, stdout captured for status: "on" or "off"), killed with its
 * process group after --power-exec-timeout; exit status 0 = done.
 * self: nothing for the leader to do; the node's own mxqd runs its
 * --poweroff-command when its row reaches POWERING_OFF (mxqd_power.c).
 *
 * Errors: negative errno with the command and its outcome in errbuf.
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"

static int exec_run(const struct mxqd_power_transport_config *c, const char *host,
		    const char *action, char *out, size_t outlen, char *errbuf, size_t errlen)
{
	const char *cmd = c->exec_command;
	uint64_t deadline = mx_now_monotonic_ms() + c->exec_timeout_s * 1000ULL;
	size_t got = 0;
	int pipefd[2], status = 0;
	sigset_t term, old;
	pid_t pid;

	if (!cmd) {
		snprintf(errbuf, errlen, "no --power-exec-command configured");
		return -ENOTSUP;
	}
	/* HOST becomes an argument of a root program: never an option, a path
	 * or shell syntax, whoever called us (mxqd_power.c checks it too) */
	if (mx_hostname_check(host, errbuf, errlen) < 0)
		return -EINVAL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &old);
	pid = fork();
	if (pid < 0) {
		int r = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	if (pid > 0) {
		setpgid(pid, pid);  /* also here: the group exists before it is recorded */
		mxqd_power_child_pgid = pid;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	if (pid == 0) {
		sigset_t none;
		int devnull = open("/dev/null", O_RDONLY);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		mx_log_close_other_fds(-1);
		execl(cmd, cmd, host, action, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	for (;;) {
		char buf[512];
		ssize_t n = read(pipefd[0], buf, sizeof(buf));
		pid_t w;

		if (n > 0) {
			size_t take = (size_t)n;
			if (out && got + 1 < outlen) {
				if (take > outlen - 1 - got)
					take = outlen - 1 - got;
				memcpy(out + got, buf, take);
				got += take;
			}
			continue;
		}
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (mx_now_monotonic_ms() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			mxqd_power_child_pgid = 0;
			close(pipefd[0]);
			snprintf(errbuf, errlen, "'%s %s %s' did not finish within %u s", cmd, host, action,
				 c->exec_timeout_s);
			return -ETIMEDOUT;
		}
		usleep(20000);
	}
	mxqd_power_child_pgid = 0;
	close(pipefd[0]);
	if (out)
		out[got] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		snprintf(errbuf, errlen, "'%s %s %s' exited with status %d", cmd, host, action,
			 WEXITSTATUS(status));
	else
		snprintf(errbuf, errlen, "'%s %s %s' ended by signal %d", cmd, host, action,
			 WTERMSIG(status));
	return -EIO;
}

static const char *exec_unusable(const struct mxqd_power_target *t,
				 const struct mxqd_power_transport_config *c, char *buf, size_t len)
{
	return c->exec_command ? NULL : "transport exec needs --power-exec-command on the leader";
}

static int exec_on(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   char *errbuf, size_t errlen)
{
	return exec_run(c, t->hostname, "on", NULL, 0, errbuf, errlen);
}

static int exec_off(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		    enum mxqd_power_off_mode mode, char *errbuf, size_t errlen)
{
	return exec_run(c, t->hostname, "off", NULL, 0, errbuf, errlen);
}

static int exec_status(const struct mxqd_power_target *t,
		       const struct mxqd_power_transport_config *c, char *errbuf, size_t errlen)
{
	char out[64];
	int r = exec_run(c, t->hostname, "status", out, sizeof(out), errbuf, errlen);

	if (r < 0)
		return r;
	if (strncmp(out, "off", 3) == 0)
		return 0;
	if (strncmp(out, "on", 2) == 0)
		return 1;
	snprintf(errbuf, errlen, "'%s %s status' printed neither on nor off", c->exec_command,
		 t->hostname);
	return -EINVAL;
}

const struct mxqd_power_transport mxqd_power_transport_exec = {
	.name = "exec",
	.caps = MXQD_TRANSPORT_CAN_ON | MXQD_TRANSPORT_CAN_OFF | MXQD_TRANSPORT_CAN_STATUS,
	.unusable = exec_unusable,
	.power_on = exec_on,
	.power_off = exec_off,
	.status = exec_status,
};

static int self_off(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		    enum mxqd_power_off_mode mode, char *errbuf, size_t errlen)
{
	return 0; /* the node's own mxqd sees POWERING_OFF and powers off */
}

const struct mxqd_power_transport mxqd_power_transport_self = {
	.name = "self",
	.caps = MXQD_TRANSPORT_CAN_OFF | MXQD_TRANSPORT_NODE_OFF,
	.power_off = self_off,
};
