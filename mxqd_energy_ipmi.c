/*
 * mxqd_energy_ipmi - DCMI power readings from the node's BMC (see
 * mxqd_energy_ipmi.h).
 *
 * Target: a path ("/dev/ipmi0", the default) is the kernel's OpenIPMI
 * device (modules ipmi_si and ipmi_devintf); only that driver is used in
 * band, never port I/O probing (KCS/SSIF through libfreeipmi's own drivers
 * would poke at hardware on machines that have no BMC at all). Anything
 * else is the node's BMC on the LAN, "host[:port]", with ipmi_user and
 * ipmi_password of this host from the power secrets file, the same
 * account the ipmi transport uses, and like it at ADMIN privilege: DCMI
 * asks only USER for a power reading, but BMCs differ (ipmi_sim wants
 * ADMIN for every group extension command), and the account has ADMIN
 * anyway.
 *
 * Request: DCMI Get Power Reading, mode "system power statistics"; the
 * current power is used (the minimum, maximum and average over the BMC's
 * own statistics period are not: mxqd integrates its own samples). A BMC
 * that reports "no power measurement" gives -ENODATA, not 0 W.
 *
 * Reader: a process, not a thread. mxqd forks a reaper for every job, and
 * the reaper calls getpwuid() and initgroups() before it runs the job; a
 * fork taken while a thread held a libc lock (NSS, the resolver libfreeipmi
 * uses to look up the BMC, the time zone, malloc arenas of another
 * library) would leave the child stuck on that lock for good. With the
 * reader in a process of its own mxqd has no thread at all, so every fork
 * is of a single-threaded process. It is forked once, at start (mxqd is
 * single-threaded then), opens its own session, and sends each result as
 * one fixed-size record through a pipe; the main loop reads what arrived
 * when it samples, never waiting. The reader does not log (mxqd's main
 * loop logs, when it picks up a result, a failure when one starts and the
 * recovery when readings come back, not every attempt). A failed request
 * closes the session so the next attempt opens a fresh one. If the reader
 * dies, the source reports -EIO until mxqd restarts.
 */
#define _GNU_SOURCE
#include "mxqd_energy_ipmi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"
#include "mxq_power_secrets.h"
#include "mxqd_ipmi.h"

static struct {
	pid_t pid;                      /* the reader process */
	int fd;                         /* its results (non-blocking read end) */
	bool running;
	/* the BMC: the reader's (mxqd's own only for the first reading) */
	bool lan;
	char target[256];
	char workarounds[256];
	ipmi_ctx_t ctx;
	struct mxq_power_secrets *secrets;
	struct mxqd_power_target t;
	struct mxqd_power_transport_config tc;
	uint64_t interval_ms;
	uint64_t stale_ms;
	/* the latest result */
	double watts;
	uint64_t at_ms;                 /* monotonic time of the last good reading */
	int err;                        /* the last attempt: 0 or a negative errno */
	char errmsg[512];               /* its reason */
	/* the main loop's: what it logged last */
	int logged;
} bmc = { .fd = -1 };

/* Open the in-band device: 0, -ENOENT, or another negative errno. */
static int open_inband(char *errbuf, size_t errlen)
{
	ipmi_ctx_t ctx;
	int e;

	if (access(bmc.target, F_OK) < 0) {
		snprintf(errbuf, errlen, "no %s: this node has no BMC, or the kernel modules "
			 "ipmi_si and ipmi_devintf are not loaded", bmc.target);
		return -ENOENT;
	}
	ctx = ipmi_ctx_create();
	if (!ctx)
		return -ENOMEM;
	if (ipmi_ctx_open_inband(ctx, IPMI_DEVICE_OPENIPMI, 0, 0, 0, bmc.target, 0,
				 IPMI_FLAGS_DEFAULT) == 0) {
		bmc.ctx = ctx;
		return 0;
	}
	e = ipmi_ctx_errnum(ctx);
	snprintf(errbuf, errlen, "cannot open %s: %s", bmc.target, ipmi_ctx_errormsg(ctx));
	ipmi_ctx_destroy(ctx);
	return e == IPMI_ERR_PERMISSION ? -EACCES :
	       e == IPMI_ERR_DEVICE_NOT_FOUND || e == IPMI_ERR_DEVICE_NOT_SUPPORTED ? -ENOENT : -EIO;
}

/* One DCMI Get Power Reading on the open context. */
static int read_power(double *ret_watts, char *errbuf, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_dcmi_get_power_reading_rs);
	uint64_t watts = 0, active = 0, cc = 0;
	int r = 0;

	if (!rs)
		return -ENOMEM;
	if (ipmi_cmd_dcmi_get_power_reading(bmc.ctx, IPMI_DCMI_POWER_READING_MODE_SYSTEM_POWER_STATISTICS,
					    0, rs) < 0) {
		r = mxqd_ipmi_error(bmc.ctx, &bmc.t, &bmc.tc, "DCMI Get Power Reading", errbuf, errlen);
		if (ipmi_ctx_errnum(bmc.ctx) == IPMI_ERR_BAD_COMPLETION_CODE &&
		    fiid_obj_get(rs, "comp_code", &cc) >= 0)
			snprintf(errbuf, errlen, "BMC %s answered DCMI Get Power Reading with completion "
				 "code 0x%02x", bmc.target, (unsigned)cc);
	} else if (fiid_obj_get(rs, "current_power", &watts) < 0 ||
		   fiid_obj_get(rs, "power_reading_state.power_measurement", &active) < 0) {
		snprintf(errbuf, errlen, "BMC %s: DCMI Get Power Reading: short answer", bmc.target);
		r = -EPROTO;
	} else if (active != IPMI_DCMI_POWER_READING_STATE_POWER_MEASUREMENT_ACTIVE) {
		snprintf(errbuf, errlen, "BMC %s has no power measurement (DCMI power reading state "
			 "inactive)", bmc.target);
		r = -ENODATA;
	} else {
		*ret_watts = (double)watts;
	}
	fiid_obj_destroy(rs);
	return r;
}

/* Open when needed and read; a failed request closes the session. */
static int take_reading(double *ret_watts, char *errbuf, size_t errlen)
{
	int r;

	if (!bmc.ctx) {
		r = bmc.lan ? mxqd_ipmi_open_lan(&bmc.t, &bmc.tc, &bmc.ctx, errbuf, errlen)
			    : open_inband(errbuf, errlen);
		if (r < 0)
			return r;
	}
	r = read_power(ret_watts, errbuf, errlen);
	if (r < 0 && r != -ENODATA) {
		mxqd_ipmi_close(bmc.ctx);
		bmc.ctx = NULL;
	}
	return r;
}

/* One reading, as the reader process hands it over: written with one
 * write() below PIPE_BUF, so it arrives whole. */
struct reading {
	int32_t err;                    /* 0 or a negative errno */
	double watts;
	uint64_t at_ms;                 /* CLOCK_MONOTONIC (system-wide) of the answer */
	char errmsg[512];
};

/*
 * The reader process: one reading per interval into FD until mxqd closes
 * its end (or dies: PR_SET_PDEATHSIG) or stops it with SIGTERM. It holds
 * nothing of mxqd's (descriptors closed, signals unblocked), so neither
 * the database socket nor the spool lock outlives mxqd in it.
 */
static _Noreturn void reader_main(int fd, pid_t parent)
{
	uint64_t next = mx_now_monotonic_ms() + bmc.interval_ms;
	sigset_t none;

	mx_log_close_other_fds(fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(0);
	for (;;) {
		struct reading rd = { 0 };
		uint64_t now = mx_now_monotonic_ms();

		if (now < next) {
			struct timespec ts = { .tv_sec = (time_t)((next - now) / 1000),
					       .tv_nsec = (long)((next - now) % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			continue;
		}
		rd.err = take_reading(&rd.watts, rd.errmsg, sizeof(rd.errmsg));
		rd.at_ms = mx_now_monotonic_ms();
		if (write(fd, &rd, sizeof(rd)) != (ssize_t)sizeof(rd))
			_exit(0);       /* mxqd is gone (EPIPE) */
		next += bmc.interval_ms;
		if (next <= rd.at_ms)
			next = rd.at_ms + bmc.interval_ms;
	}
}

/* Take every reading the reader process sent since the last call. */
static void drain(void)
{
	struct reading rd;
	ssize_t n;

	while ((n = read(bmc.fd, &rd, sizeof(rd))) == (ssize_t)sizeof(rd)) {
		bmc.err = rd.err;
		if (rd.err == 0) {
			bmc.watts = rd.watts;
			bmc.at_ms = rd.at_ms;
		} else {
			rd.errmsg[sizeof(rd.errmsg) - 1] = '\0';
			snprintf(bmc.errmsg, sizeof(bmc.errmsg), "%s", rd.errmsg);
		}
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || (n > 0 && n < (ssize_t)sizeof(rd))) {
		bmc.err = -EIO;
		snprintf(bmc.errmsg, sizeof(bmc.errmsg), "the BMC reader process (pid %d) ended",
			 (int)bmc.pid);
		close(bmc.fd);
		bmc.fd = -1;
	}
}

void mxqd_energy_ipmi_forget_secrets(void)
{
	/* not the libfreeipmi context: closing it in a child would end the
	 * parent's BMC session; its copy of the password stays (README,
	 * "Security model") */
	mxq_power_secrets_free(bmc.secrets);
	bmc.secrets = NULL;
	memset(&bmc.t, 0, sizeof(bmc.t));
}

static void release(void)
{
	mxqd_ipmi_close(bmc.ctx);
	bmc.ctx = NULL;
	mxq_power_secrets_free(bmc.secrets);
	bmc.secrets = NULL;
	memset(&bmc.t, 0, sizeof(bmc.t));
}

int mxqd_energy_ipmi_start(const struct mxqd_energy_ipmi_config *cfg, char *errbuf, size_t errlen)
{
	const char *why;
	pid_t parent, pid;
	double w = 0;
	int r, fd;

	if (bmc.running)
		return -EALREADY;
	snprintf(bmc.target, sizeof(bmc.target), "%s", cfg->target);
	bmc.lan = cfg->target[0] != '/';
	bmc.interval_ms = (uint64_t)(cfg->interval_s * 1000);
	if (bmc.interval_ms == 0)
		bmc.interval_ms = 1;
	bmc.stale_ms = 3 * bmc.interval_ms + cfg->timeout_ms;
	bmc.tc = (struct mxqd_power_transport_config) {
		.ipmi_timeout_ms = cfg->timeout_ms,
		.ipmi_privilege = IPMI_PRIVILEGE_LEVEL_ADMIN,
	};
	snprintf(bmc.workarounds, sizeof(bmc.workarounds), "%s", cfg->workarounds ? cfg->workarounds : "");
	bmc.t = (struct mxqd_power_target) { .hostname = cfg->hostname, .bmc_address = bmc.target,
					     .ipmi_workarounds = bmc.workarounds };
	if (bmc.lan) {
		r = mxq_power_secrets_load(cfg->secrets_path, &bmc.secrets, errbuf, errlen);
		if (r < 0) {
			release();
			return r == -ENOENT ? -EINVAL : r;
		}
		mxq_power_secrets_for(bmc.secrets, cfg->hostname, &bmc.t.secrets);
		why = mxqd_ipmi_unusable(&bmc.t, &bmc.tc, errbuf, errlen);
		if (why) {
			if (why != errbuf)
				snprintf(errbuf, errlen, "BMC %s: %s (host %s, %s)", bmc.target, why,
					 cfg->hostname, cfg->secrets_path);
			release();
			return -EINVAL;
		}
	}
	r = take_reading(&w, errbuf, errlen);
	if (r == -ENOENT || r == -EACCES || r == -EOPNOTSUPP || r == -EINVAL || r == -ENOMEM) {
		release();
		return r;
	}
	bmc.err = r;
	bmc.logged = r;         /* the caller logs this first result */
	bmc.watts = w;
	bmc.at_ms = r == 0 ? mx_now_monotonic_ms() : 0;
	/* the reader opens its own session: this one is mxqd's and closed */
	mxqd_ipmi_close(bmc.ctx);
	bmc.ctx = NULL;
	parent = getpid();
	pid = mx_fork_with_pipe(&fd);
	if (pid < 0) {
		snprintf(errbuf, errlen, "cannot start the BMC reader process: %s", strerror((int)-pid));
		release();
		return -EAGAIN;
	}
	if (pid == 0)
		reader_main(fd, parent);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	bmc.pid = pid;
	bmc.fd = fd;
	bmc.running = true;
	return r;
}

int mxqd_energy_ipmi_watts(double *ret_watts)
{
	int r;

	if (bmc.running && bmc.fd >= 0)
		drain();
	if (!bmc.running)
		r = -ENOENT;
	else if (bmc.err < 0)
		r = bmc.err;
	else if (mx_now_monotonic_ms() - bmc.at_ms > bmc.stale_ms)
		r = -ESTALE;        /* the reader hangs in a request */
	else
		r = 0;
	if (r == 0)
		*ret_watts = bmc.watts;
	if (bmc.running && (r < 0) != (bmc.logged < 0)) {
		if (r < 0 && r != -ESTALE)
			mx_log_warning("energy: %s; the ipmi source is unmeasured until the BMC answers "
				       "(asked every %.3g s)", bmc.errmsg, (double)bmc.interval_ms / 1000.0);
		else if (r < 0)
			mx_log_warning("energy: BMC %s has not answered for %.3g s", bmc.target,
				       (double)(mx_now_monotonic_ms() - bmc.at_ms) / 1000.0);
		else
			mx_log_notice("energy: BMC %s reads again (%.0f W)", bmc.target, bmc.watts);
		bmc.logged = r;
	}
	return r;
}

bool mxqd_energy_ipmi_running(void)
{
	return bmc.running;
}

void mxqd_energy_ipmi_stop(void)
{
	if (!bmc.running)
		return;
	kill(bmc.pid, SIGTERM);
	while (waitpid(bmc.pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (bmc.fd >= 0)
		close(bmc.fd);
	bmc.fd = -1;
	bmc.running = false;
	release();
}
