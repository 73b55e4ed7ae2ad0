/*
 * mxqd_power_redfish - the "redfish" transport: power on, graceful
 * shutdown, forced off and the power state of a node through its BMC's
 * Redfish service (HTTPS, libcurl: mxqd_redfish.c), for servers whose
 * BMC has IPMI over LAN turned off.
 *
 * Configuration: per host (mxqadmin power set) the BMC address (bmc,
 * "host[:port]", as for ipmi), redfish_system (the ComputerSystem's path;
 * empty: the first member of /redfish/v1/Systems), redfish_ca (the CA
 * that signed the BMC's certificate), redfish_tls (verify, or insecure:
 * logged by the leader at every action), redfish_auth (session or basic);
 * credentials redfish_user and redfish_password from the secrets file.
 * Timeouts and retries: --power-redfish-timeout (each request),
 * --power-redfish-retries, --power-ipmi-verify (how long on / forced off
 * may take to show).
 *
 * One call = one connection: log in (session), find the system, read it,
 * POST the Reset with the ResetType the system lists in its
 * AllowableValues (mxq_redfish_pick_reset), read PowerState back until it
 * shows the new state (on, forced off; a graceful shutdown only has to be
 * accepted: the leader escalates to forced off after its deadline), log
 * out. A system already in the wanted state gets no Reset.
 *
 * Errors name the BMC, the method and path and the Redfish message; only
 * timeouts, refused connections and 5xx answers are retried (a rejected
 * login stays rejected).
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mx_util.h"
#include "mxq_redfish.h"
#include "mxqd_redfish.h"

static struct mxqd_redfish_settings settings_of(const struct mxqd_power_target *t,
						const struct mxqd_power_transport_config *c)
{
	return (struct mxqd_redfish_settings) {
		.bmc = t->bmc_address,
		.user = t->secrets.redfish_user,
		.password = t->secrets.redfish_password,
		.ca_file = t->redfish_ca,
		.insecure = t->redfish_insecure,
		.session = !t->redfish_basic,
		.timeout_ms = c->redfish_timeout_ms ? c->redfish_timeout_ms : 10000,
		.deadline_ms = mxqd_power_call_deadline_ms(),
	};
}

uint64_t mxqd_power_redfish_bound_ms(const struct mxqd_power_transport_config *c)
{
	uint64_t timeout = c->redfish_timeout_ms ? c->redfish_timeout_ms : 10000;

	/* a call is several requests (login, service root, systems, system,
	 * reset, read back) and the verify time */
	return timeout * 4 * (c->redfish_retries + 1) + c->ipmi_verify_ms;
}

static const char *redfish_unusable(const struct mxqd_power_target *t,
				    const struct mxqd_power_transport_config *c, char *buf, size_t len)
{
	struct mxqd_redfish_settings s = settings_of(t, c);

	return mxqd_redfish_unusable(&s);
}

/* GET the system at PATH and parse it. */
static int read_system(struct mxqd_redfish *rf, const char *path, struct mxq_redfish_system *sys,
		       char *errbuf, size_t errlen)
{
	char why[256];
	int r = mxqd_redfish_get(rf, path, errbuf, errlen);

	if (r < 0)
		return r;
	if (mxq_redfish_parse_system(rf->body, sys, why, sizeof(why)) < 0) {
		snprintf(errbuf, errlen, "BMC %s: GET %s: %s", rf->s.bmc, path, why);
		return -EPROTO;
	}
	return 0;
}

enum op { OP_ON, OP_SOFT_OFF, OP_HARD_OFF, OP_STATUS };

static bool is_off(enum mxq_redfish_power p)
{
	return p == MXQ_REDFISH_OFF;
}

/* Whether the system is where OP wants it (status: always). */
static bool arrived(enum op op, enum mxq_redfish_power p)
{
	switch (op) {
	case OP_ON:
		return p == MXQ_REDFISH_ON;
	case OP_SOFT_OFF:
		return is_off(p) || p == MXQ_REDFISH_POWERING_OFF;
	case OP_HARD_OFF:
		return is_off(p);
	default:
		return true;
	}
}

/* POST the Reset for OP (unless !SEND: already under way) and wait
 * (bounded) for its effect. */
static int act(struct mxqd_redfish *rf, const char *path, struct mxq_redfish_system *sys, enum op op,
	       const struct mxqd_power_transport_config *c, bool send, char *errbuf, size_t errlen)
{
	static const enum mxq_redfish_action actions[] = {
		[OP_ON] = MXQ_REDFISH_ACTION_ON, [OP_SOFT_OFF] = MXQ_REDFISH_ACTION_SOFT_OFF,
		[OP_HARD_OFF] = MXQ_REDFISH_ACTION_HARD_OFF,
	};
	enum mxq_redfish_reset reset;
	char body[64], why[384];
	uint64_t deadline;
	int r;

	r = mxq_redfish_pick_reset(sys, actions[op], &reset, why, sizeof(why));
	if (r < 0) {
		snprintf(errbuf, errlen, "BMC %s: %s: %s", rf->s.bmc, path, why);
		return r;
	}
	snprintf(body, sizeof(body), "{\"ResetType\": \"%s\"}", mxq_redfish_reset_name(reset));
	r = send ? mxqd_redfish_request(rf, "POST", sys->reset_target, body, errbuf, errlen) : 0;
	if (r < 0)
		return r;
	deadline = mx_now_monotonic_ms() + (op == OP_SOFT_OFF ? 0 : c->ipmi_verify_ms);
	for (;;) {
		r = read_system(rf, path, sys, errbuf, errlen);
		if (r < 0)
			return r;
		/* soft off: the OS takes its time; the BMC answered, the leader watches */
		if (op == OP_SOFT_OFF || arrived(op, sys->power) || mx_now_monotonic_ms() >= deadline)
			break;
		mx_sleep_ms(200);
	}
	if (op != OP_SOFT_OFF && !arrived(op, sys->power)) {
		snprintf(errbuf, errlen, "BMC %s accepted ResetType %s but %s still reports PowerState "
			 "%s after %u ms", rf->s.bmc, mxq_redfish_reset_name(reset), path,
			 mxq_redfish_power_name(sys->power), c->ipmi_verify_ms);
		return -EIO;
	}
	return 0;
}

/* One attempt of OP (enum op) on one connection. */
static int attempt(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   int op, char *errbuf, size_t errlen)
{
	struct mxqd_redfish_settings s = settings_of(t, c);
	struct mxq_redfish_system sys;
	char path[MXQ_REDFISH_PATH_MAX];
	struct mxqd_redfish rf;
	int r;

	r = mxqd_redfish_open(&rf, &s, errbuf, errlen);
	if (r < 0)
		return r;
	r = mxqd_redfish_find_system(&rf, t->redfish_system, path, sizeof(path), errbuf, errlen);
	if (r >= 0)
		r = read_system(&rf, path, &sys, errbuf, errlen);
	if (r >= 0 && op == OP_STATUS)
		r = is_off(sys.power) ? 0 : 1;
	else if (r >= 0 && !arrived(op, sys.power))
		r = act(&rf, path, &sys, op, c, !(op == OP_ON && sys.power == MXQ_REDFISH_POWERING_ON),
			errbuf, errlen);
	mxqd_redfish_close(&rf);
	return r;
}

/* Whether another attempt can help: a timeout, nobody listening (a BMC
 * restarting), a busy BMC (5xx). A rejected login stays rejected. */
static bool retryable(int r)
{
	return r == -ETIMEDOUT || r == -ECONNREFUSED || r == -EAGAIN;
}

/* Every attempt and request of one call within mxqd_power_redfish_bound_ms. */
static int with_retries(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
			enum op op, char *errbuf, size_t errlen)
{
	return mxqd_power_retry(attempt, t, c, (int)op, c->redfish_retries, retryable, 500,
				mxqd_power_redfish_bound_ms(c), errbuf, errlen);
}

static int redfish_on(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		      char *errbuf, size_t errlen)
{
	return with_retries(t, c, OP_ON, errbuf, errlen);
}

static int redfish_off(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		       enum mxqd_power_off_mode mode, char *errbuf, size_t errlen)
{
	return with_retries(t, c, mode == MXQD_POWER_OFF_HARD ? OP_HARD_OFF : OP_SOFT_OFF, errbuf,
			    errlen);
}

static int redfish_status(const struct mxqd_power_target *t,
			  const struct mxqd_power_transport_config *c, char *errbuf, size_t errlen)
{
	return with_retries(t, c, OP_STATUS, errbuf, errlen);
}

const struct mxqd_power_transport mxqd_power_transport_redfish = {
	.name = "redfish",
	.caps = MXQD_TRANSPORT_CAN_ON | MXQD_TRANSPORT_CAN_OFF | MXQD_TRANSPORT_CAN_HARD_OFF |
		MXQD_TRANSPORT_CAN_STATUS,
	.unusable = redfish_unusable,
	.power_on = redfish_on,
	.power_off = redfish_off,
	.status = redfish_status,
};
