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
 * Thread: it owns the libfreeipmi context; the main loop and the thread
 * share only the latest result and its error text, under one mutex. The
 * thread does not log: mxqd forks while it runs, and a fork taken while the
 * thread held a libc lock (the time zone's, in the log's timestamp) would
 * leave the child stuck on it. The main loop logs, when it picks up a
 * result, a failure when one starts and the recovery when readings come
 * back, not every attempt. A failed request closes the session so the next
 * attempt opens a fresh one.
 */
#define _GNU_SOURCE
#include "mxqd_energy_ipmi.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
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
	pthread_mutex_t lock;
	pthread_cond_t wake;            /* signalled to stop the thread */
	pthread_t thread;
	bool running;
	bool stop;
	/* the BMC: owned by the thread while it runs */
	bool lan;
	char target[256];
	char workarounds[256];
	ipmi_ctx_t ctx;
	struct mxq_power_secrets *secrets;
	struct mxqd_power_target t;
	struct mxqd_power_transport_config tc;
	uint64_t interval_ms;
	uint64_t stale_ms;
	/* the latest result, under lock */
	double watts;
	uint64_t at_ms;                 /* monotonic time of the last good reading */
	int err;                        /* the last attempt: 0 or a negative errno */
	char errmsg[512];               /* its reason */
	/* the main loop's: what it logged last */
	int logged;
} bmc = { .lock = PTHREAD_MUTEX_INITIALIZER };

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

static void publish(int r, double watts, const char *err)
{
	pthread_mutex_lock(&bmc.lock);
	bmc.err = r;
	if (r == 0) {
		bmc.watts = watts;
		bmc.at_ms = mx_now_monotonic_ms();
	} else {
		snprintf(bmc.errmsg, sizeof(bmc.errmsg), "%s", err);
	}
	pthread_mutex_unlock(&bmc.lock);
}

static void *reader(void *arg)
{
	char err[512];
	uint64_t next = mx_now_monotonic_ms() + bmc.interval_ms;

	(void)arg;
	pthread_mutex_lock(&bmc.lock);
	while (!bmc.stop) {
		uint64_t now = mx_now_monotonic_ms();
		double w = 0;
		struct timespec ts;
		int r;

		if (now < next) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (time_t)((next - now) / 1000);
			ts.tv_nsec += (long)((next - now) % 1000) * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&bmc.wake, &bmc.lock, &ts);
			continue;
		}
		pthread_mutex_unlock(&bmc.lock);
		r = take_reading(&w, err, sizeof(err));
		publish(r, w, err);
		now = mx_now_monotonic_ms();
		next += bmc.interval_ms;
		if (next <= now)
			next = now + bmc.interval_ms;
		pthread_mutex_lock(&bmc.lock);
	}
	pthread_mutex_unlock(&bmc.lock);
	return NULL;
}

void mxqd_energy_ipmi_forget_secrets(void)
{
	/* not the libfreeipmi context: closing it here would end the parent's
	 * BMC session (see the report of issue 12) */
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
	pthread_condattr_t ca;
	sigset_t all, old;
	const char *why;
	double w = 0;
	int r, e;

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
	bmc.stop = false;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&bmc.wake, &ca);
	pthread_condattr_destroy(&ca);
	/* every signal stays with the main loop */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&bmc.thread, NULL, reader, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		snprintf(errbuf, errlen, "cannot start the BMC reader thread: %s", strerror(e));
		pthread_cond_destroy(&bmc.wake);
		release();
		return -EAGAIN;
	}
	bmc.running = true;
	return r;
}

int mxqd_energy_ipmi_watts(double *ret_watts)
{
	int r;

	pthread_mutex_lock(&bmc.lock);
	if (!bmc.running)
		r = -ENOENT;
	else if (bmc.err < 0)
		r = bmc.err;
	else if (mx_now_monotonic_ms() - bmc.at_ms > bmc.stale_ms)
		r = -ESTALE;        /* the thread hangs in a request */
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
	pthread_mutex_unlock(&bmc.lock);
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
	pthread_mutex_lock(&bmc.lock);
	bmc.stop = true;
	pthread_cond_signal(&bmc.wake);
	pthread_mutex_unlock(&bmc.lock);
	pthread_join(bmc.thread, NULL);
	pthread_cond_destroy(&bmc.wake);
	bmc.running = false;
	release();
}
