/*
 * mxqd_energy_redfish - Redfish power readings from the node's BMC (see
 * mxqd_energy_redfish.h).
 *
 * Target: --energy-redfish HOST[:PORT] with options (chassis=, ca=,
 * tls=insecure, auth=basic), or "auto": the BMC's address on the Redfish
 * host interface as the firmware's SMBIOS type 42 record gives it
 * (mxq_discover.c; reachable from this node only, which is all the energy
 * source needs), redfish_user and redfish_password of this
 * host from the power secrets file, the account the redfish transport
 * uses. The power resource is found once per connection: the chassis
 * given, else the one the first system links (Links.Chassis[0]), else the
 * first member of /redfish/v1/Chassis; of that chassis EnvironmentMetrics
 * (PowerWatts.Reading) where it links one and it has a reading, else Power
 * (PowerControl[].PowerConsumedWatts). A reading that is null gives
 * -ENODATA, not 0 W.
 *
 * Reader process: forked at start, it owns the HTTPS connection (and the
 * session, deleted when it ends), takes one reading per interval and
 * writes each result as one line "RC WATTS REASON" into a pipe (shorter
 * than PIPE_BUF: never torn; dropped when the pipe is full). It does not
 * log (the main loop does, when it picks a result up: a failure when one
 * starts, the recovery when readings come back) and dies with mxqd
 * (PR_SET_PDEATHSIG). A failed request closes the connection, so the next
 * attempt logs in afresh. A reader that dies (killed, crashed) is replaced
 * an interval later; the gap is unmeasured like any failure. A process, not a thread: libcurl and OpenSSL
 * then never share a process with mxqd's forks, and a hung request can be
 * killed.
 */
#define _GNU_SOURCE
#include "mxqd_energy_redfish.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"
#include "mxq_discover.h"
#include "mxq_power_secrets.h"
#include "mxq_redfish.h"
#include "mxqd_redfish.h"

static struct {
	struct mxqd_energy_redfish_spec spec;
	struct mxq_power_secrets *secrets;
	struct mxqd_redfish_settings settings;
	/* the reader's connection and what it found */
	struct mxqd_redfish rf;
	bool open;
	char env_path[MXQ_REDFISH_PATH_MAX];    /* EnvironmentMetrics; empty: none */
	char power_path[MXQ_REDFISH_PATH_MAX];  /* Power; empty: none */
	/* the main loop's side */
	bool running;
	pid_t pid;
	int fd;
	char buf[2048];
	size_t len;
	uint64_t interval_ms, stale_ms;
	uint64_t dead_ms;               /* when the reader was found gone (fd -1) */
	unsigned long lines;            /* results received */
	double watts;
	uint64_t at_ms;                 /* monotonic time of the last good reading */
	int err;
	char errmsg[512];
	int logged;
} rd = { .fd = -1 };

static volatile sig_atomic_t reader_stop;

int mxqd_energy_redfish_parse(const char *spec, struct mxqd_energy_redfish_spec *ret, char *errbuf,
			      size_t errlen)
{
	char copy[1024], *save = NULL, *w;
	bool first = true;

	memset(ret, 0, sizeof(*ret));
	if (strlen(spec) >= sizeof(copy)) {
		snprintf(errbuf, errlen, "--energy-redfish: too long");
		return -EINVAL;
	}
	snprintf(copy, sizeof(copy), "%s", spec);
	for (w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save), first = false) {
		if (first) {
			if (!w[0] || strpbrk(w, "/@?#= \t") || strlen(w) >= sizeof(ret->bmc))
				break;
			ret->discover = strcmp(w, "auto") == 0;
			if (!ret->discover)
				snprintf(ret->bmc, sizeof(ret->bmc), "%s", w);
		} else if (strncmp(w, "chassis=", 8) == 0 && strncmp(w + 8, "/redfish/v1/Chassis/", 20) == 0 &&
			   w[28] && strlen(w + 8) < sizeof(ret->chassis)) {
			snprintf(ret->chassis, sizeof(ret->chassis), "%s", w + 8);
		} else if (strncmp(w, "ca=", 3) == 0 && w[3] == '/' && strlen(w + 3) < sizeof(ret->ca)) {
			snprintf(ret->ca, sizeof(ret->ca), "%s", w + 3);
		} else if (strcmp(w, "tls=insecure") == 0 || strcmp(w, "tls=verify") == 0) {
			ret->insecure = w[4] == 'i';
		} else if (strcmp(w, "auth=basic") == 0 || strcmp(w, "auth=session") == 0) {
			ret->basic = w[5] == 'b';
		} else {
			snprintf(errbuf, errlen, "--energy-redfish: '%s' is not one of chassis=/redfish/v1/"
				 "Chassis/ID, ca=/ABSOLUTE/FILE, tls=verify|insecure, auth=session|basic", w);
			return -EINVAL;
		}
	}
	if (!ret->bmc[0] && !ret->discover) {
		snprintf(errbuf, errlen, "--energy-redfish: '%s' does not start with the BMC address "
			 "HOST[:PORT] or auto", spec);
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------- reading */

/* One reason line into buf, cut to its length. */
static void __attribute__((format(printf, 3, 4))) say(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static void close_bmc(void)
{
	if (rd.open)
		mxqd_redfish_close(&rd.rf);
	rd.open = false;
	rd.env_path[0] = rd.power_path[0] = '\0';
}

/* The chassis to read: given, linked by the system, or the first one. */
static int find_chassis(char *buf, size_t len, char *errbuf, size_t errlen)
{
	struct mxq_redfish_system sys;
	char path[MXQ_REDFISH_PATH_MAX], why[256];
	int r;

	if (rd.spec.chassis[0]) {
		snprintf(buf, len, "%s", rd.spec.chassis);
		return 0;
	}
	r = mxqd_redfish_find_system(&rd.rf, "", path, sizeof(path), errbuf, errlen);
	if (r == 0 && (r = mxqd_redfish_get(&rd.rf, path, errbuf, errlen)) == 0 &&
	    mxq_redfish_parse_system(rd.rf.body, &sys, why, sizeof(why)) == 0 && sys.chassis[0]) {
		snprintf(buf, len, "%s", sys.chassis);
		return 0;
	}
	if (r == -EACCES || r == -EPERM || r == -ETIMEDOUT || r == -ECONNREFUSED)
		return r;
	r = mxqd_redfish_get(&rd.rf, "/redfish/v1/Chassis", errbuf, errlen);
	if (r < 0)
		return r;
	if (mxq_redfish_member(rd.rf.body, 0, buf, len) < 0) {
		snprintf(errbuf, errlen, "BMC %s: GET /redfish/v1/Chassis: no chassis", rd.spec.bmc);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Log in and find the power resource of the chassis. */
static int open_bmc(char *errbuf, size_t errlen)
{
	char chassis[MXQ_REDFISH_PATH_MAX];
	int r;

	r = mxqd_redfish_open(&rd.rf, &rd.settings, errbuf, errlen);
	if (r < 0)
		return r;
	rd.open = true;
	r = find_chassis(chassis, sizeof(chassis), errbuf, errlen);
	if (r == 0)
		r = mxqd_redfish_get(&rd.rf, chassis, errbuf, errlen);
	if (r < 0) {
		close_bmc();
		return r;
	}
	if (mxq_redfish_link(rd.rf.body, "EnvironmentMetrics", rd.env_path, sizeof(rd.env_path)) < 0)
		rd.env_path[0] = '\0';
	if (mxq_redfish_link(rd.rf.body, "Power", rd.power_path, sizeof(rd.power_path)) < 0)
		rd.power_path[0] = '\0';
	if (!rd.env_path[0] && !rd.power_path[0]) {
		say(errbuf, errlen, "BMC %s: GET %s: the chassis links neither EnvironmentMetrics "
		    "nor Power: no power reading", rd.spec.bmc, chassis);
		close_bmc();
		return -EOPNOTSUPP;
	}
	return 0;
}

/* One reading of PATH (EnvironmentMetrics when ENV, else Power). */
static int read_resource(const char *path, bool env, double *ret_watts, char *errbuf, size_t errlen)
{
	char why[256];
	int r = mxqd_redfish_get(&rd.rf, path, errbuf, errlen);

	if (r < 0)
		return r;
	r = env ? mxq_redfish_parse_environment_watts(rd.rf.body, ret_watts, why, sizeof(why))
		: mxq_redfish_parse_power_watts(rd.rf.body, ret_watts, why, sizeof(why));
	if (r < 0)
		say(errbuf, errlen, "BMC %s: GET %s: %s", rd.spec.bmc, path, why);
	return r;
}

/* Open when needed and read; a failed request closes the connection. */
static int take_reading(double *ret_watts, char *errbuf, size_t errlen)
{
	int r;

	if (!rd.open && (r = open_bmc(errbuf, errlen)) < 0)
		return r;
	if (rd.env_path[0]) {
		r = read_resource(rd.env_path, true, ret_watts, errbuf, errlen);
		if (r != -ENODATA || !rd.power_path[0])
			goto done;
		rd.env_path[0] = '\0';  /* metrics without a power reading: the older resource */
	}
	r = read_resource(rd.power_path, false, ret_watts, errbuf, errlen);
done:
	if (r < 0 && r != -ENODATA)
		close_bmc();
	/* -EAGAIN means "baseline only" to mxq_energy_source_read(): a busy BMC is -EIO */
	return r == -EAGAIN ? -EIO : r;
}

/* ---------------------------------------------------------- reader process */

static void on_term(int sig)
{
	(void)sig;
	reader_stop = 1;
}

static void reader_main(int fd)
{
	struct sigaction sa = { .sa_handler = on_term };
	uint64_t next = mx_now_monotonic_ms();
	sigset_t none;

	mx_log_close_other_fds(fd);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (getppid() == 1)
		reader_stop = 1;
	while (!reader_stop) {
		char err[512] = "", line[600];
		uint64_t now;
		double w = 0;
		int r, n;

		next += rd.interval_ms;
		r = take_reading(&w, err, sizeof(err));
		n = snprintf(line, sizeof(line), "%d %.6f %s", r, w, r < 0 ? err : "");
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
		for (int i = 0; i < n; i++)
			if (line[i] == '\n')
				line[i] = ' ';
		line[n++] = '\n';
		if (write(fd, line, (size_t)n) < 0 && errno == EPIPE)
			break;
		now = mx_now_monotonic_ms();
		if (next <= now)
			next = now + rd.interval_ms;
		while (!reader_stop && (now = mx_now_monotonic_ms()) < next) {
			struct timespec ts = { (time_t)((next - now) / 1000),
					       (long)((next - now) % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	close_bmc();        /* ends the session at the BMC */
	_exit(0);
}

/* ------------------------------------------------------------- main loop */

static int first_result(void);

/* Fork the reader. 0 or a negative errno with the reason in errbuf. */
static int spawn(char *errbuf, size_t errlen)
{
	pid_t pid;
	int fd;

	pid = mx_fork_with_pipe(&fd);
	if (pid < 0) {
		snprintf(errbuf, errlen, "cannot start the Redfish reader process: %s", strerror((int)-pid));
		return (int)pid;
	}
	if (pid == 0)
		reader_main(fd);        /* does not return */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	rd.pid = pid;
	rd.fd = fd;
	rd.len = 0;
	rd.dead_ms = 0;
	return 0;
}

static void release(void)
{
	close_bmc();
	mxq_power_secrets_free(rd.secrets);
	rd.secrets = NULL;
	memset(&rd.settings, 0, sizeof(rd.settings));
}

int mxqd_energy_redfish_start(const struct mxqd_energy_redfish_config *cfg, char *errbuf,
			      size_t errlen)
{
	struct mxq_power_host_secrets hs;
	const char *why;
	int r;

	if (rd.running)
		return -EALREADY;
	if (!cfg->spec || !cfg->spec[0]) {
		snprintf(errbuf, errlen, "no --energy-redfish BMC given");
		return -ENOENT;
	}
	r = mxqd_energy_redfish_parse(cfg->spec, &rd.spec, errbuf, errlen);
	if (r < 0)
		return r;
	if (rd.spec.discover) {
		r = mxq_discover_redfish(cfg->sysfs_root, rd.spec.bmc, sizeof(rd.spec.bmc));
		if (r < 0) {
			snprintf(errbuf, errlen, "--energy-redfish auto: %s under %s/firmware/dmi/entries",
				 r == -EADDRNOTAVAIL ? "the Redfish host interface has no fixed service "
				 "address (DHCP)" : "no Redfish host interface (SMBIOS type 42)",
				 cfg->sysfs_root ? cfg->sysfs_root : "/sys");
			return -ENOENT;
		}
		mx_log_info("energy: Redfish host interface: BMC at %s", rd.spec.bmc);
	}
	rd.interval_ms = (uint64_t)(cfg->interval_s * 1000);
	if (rd.interval_ms == 0)
		rd.interval_ms = 1;
	rd.stale_ms = 3 * rd.interval_ms + cfg->timeout_ms;
	r = mxq_power_secrets_load(cfg->secrets_path, &rd.secrets, errbuf, errlen);
	if (r < 0) {
		release();
		return r == -ENOENT ? -EINVAL : r;
	}
	mxq_power_secrets_for(rd.secrets, cfg->hostname, &hs);
	rd.settings = (struct mxqd_redfish_settings) {
		.bmc = rd.spec.bmc, .user = hs.redfish_user, .password = hs.redfish_password,
		.ca_file = rd.spec.ca, .insecure = rd.spec.insecure, .session = !rd.spec.basic,
		.timeout_ms = cfg->timeout_ms,
	};
	why = mxqd_redfish_unusable(&rd.settings);
	if (why) {
		snprintf(errbuf, errlen, "BMC %s: %s (host %s, %s)", rd.spec.bmc, why, cfg->hostname,
			 cfg->secrets_path);
		release();
		return -EINVAL;
	}
	if (rd.spec.insecure)
		mx_log_warning("energy: BMC %s is read without TLS verification (tls=insecure)",
			       rd.spec.bmc);
	if (spawn(errbuf, errlen) < 0) {
		release();
		return -EAGAIN;
	}
	rd.running = true;
	/* the reader's first reading decides, so libcurl never runs in mxqd itself */
	r = first_result();
	if (r < 0)
		snprintf(errbuf, errlen, "%s", rd.errmsg);
	if (r == -EACCES || r == -EPERM || r == -EOPNOTSUPP || r == -EINVAL || r == -ENOMEM ||
	    r == -ENOENT || r == -EPROTO) {
		mxqd_energy_redfish_stop();
		return r;
	}
	rd.logged = r;          /* the caller logs this first result */
	return r;
}

static void pick_up(void);

/* Wait (bounded: a first reading is a few requests) for the reader's first
 * line; its result, or -ETIMEDOUT when none came. */
static int first_result(void)
{
	uint64_t wait_ms = 6ULL * rd.settings.timeout_ms + 1000;
	uint64_t end = mx_now_monotonic_ms() + wait_ms;

	while (!rd.lines && rd.fd >= 0) {
		uint64_t now = mx_now_monotonic_ms();
		struct pollfd p = { .fd = rd.fd, .events = POLLIN };

		if (now >= end) {
			snprintf(rd.errmsg, sizeof(rd.errmsg), "BMC %s gave no first reading within %.0f s",
				 rd.spec.bmc, (double)wait_ms / 1000.0);
			rd.err = -ETIMEDOUT;
			return rd.err;
		}
		if (poll(&p, 1, (int)(end - now)) > 0)
			pick_up();
	}
	return rd.err;
}

/* Take every complete line the reader wrote; the last one counts. */
static void pick_up(void)
{
	for (;;) {
		ssize_t n = read(rd.fd, rd.buf + rd.len, sizeof(rd.buf) - 1 - rd.len);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			/* killed or crashed: mxqd's main loop reaps it, a new one
			 * starts an interval later */
			rd.err = -EIO;
			snprintf(rd.errmsg, sizeof(rd.errmsg), "the Redfish reader process (pid %d) ended",
				 (int)rd.pid);
			close(rd.fd);
			rd.fd = -1;
			rd.dead_ms = mx_now_monotonic_ms();
			return;
		}
		if (n < 0)
			return;
		rd.len += (size_t)n;
		rd.buf[rd.len] = '\0';
		line = rd.buf;
		while ((nl = strchr(line, '\n'))) {
			int rc, off = 0;
			double w;

			*nl = '\0';
			if (sscanf(line, "%d %lf %n", &rc, &w, &off) >= 2) {
				rd.lines++;
				rd.err = rc;
				if (rc == 0) {
					rd.watts = w;
					rd.at_ms = mx_now_monotonic_ms();
				} else {
					snprintf(rd.errmsg, sizeof(rd.errmsg), "%s", line + off);
				}
			}
			line = nl + 1;
		}
		rd.len = strlen(line);
		memmove(rd.buf, line, rd.len + 1);
		if (rd.len >= sizeof(rd.buf) - 1)
			rd.len = 0;  /* no line that long is ever written */
	}
}

int mxqd_energy_redfish_watts(double *ret_watts)
{
	int r;

	if (!rd.running)
		return -ENOENT;
	if (rd.fd < 0 && mx_now_monotonic_ms() - rd.dead_ms >= rd.interval_ms) {
		char err[256];

		if (spawn(err, sizeof(err)) < 0)
			rd.dead_ms = mx_now_monotonic_ms();
	}
	if (rd.fd >= 0)
		pick_up();
	if (rd.err < 0)
		r = rd.err;
	else if (mx_now_monotonic_ms() - rd.at_ms > rd.stale_ms)
		r = -ESTALE;        /* the reader hangs in a request */
	else
		r = 0;
	if (r == 0)
		*ret_watts = rd.watts;
	if ((r < 0) != (rd.logged < 0)) {
		if (r < 0 && r != -ESTALE)
			mx_log_warning("energy: %s; the redfish source is unmeasured until the BMC answers "
				       "(asked every %.3g s)", rd.errmsg, (double)rd.interval_ms / 1000.0);
		else if (r < 0)
			mx_log_warning("energy: BMC %s has not answered for %.3g s", rd.spec.bmc,
				       (double)(mx_now_monotonic_ms() - rd.at_ms) / 1000.0);
		else
			mx_log_notice("energy: BMC %s reads again (%.0f W)", rd.spec.bmc, rd.watts);
		rd.logged = r;
	}
	return r;
}

bool mxqd_energy_redfish_running(void)
{
	return rd.running;
}

void mxqd_energy_redfish_stop(void)
{
	uint64_t end;

	if (!rd.running)
		return;
	if (rd.fd >= 0)
		kill(rd.pid, SIGTERM);
	/* it finishes its request (bounded by the timeout) and logs out */
	end = mx_now_monotonic_ms() + rd.settings.timeout_ms + 1000;
	while (rd.fd >= 0 && waitpid(rd.pid, NULL, WNOHANG) == 0) {
		struct timespec ts = { 0, 20 * 1000000L };

		if (mx_now_monotonic_ms() >= end) {
			kill(rd.pid, SIGKILL);
			waitpid(rd.pid, NULL, 0);
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (rd.fd >= 0)
		close(rd.fd);
	rd.fd = -1;
	rd.running = false;
	release();
}
