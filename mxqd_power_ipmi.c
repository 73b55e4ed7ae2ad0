/*
 * mxqd_power_ipmi - the "ipmi" transport: chassis power on, soft off
 * (ACPI), hard off and power status over IPMI LAN, through libfreeipmi
 * (no ipmitool or ipmipower processes, so no password in any argv).
 *
 * Configuration: per host the BMC address (bmc_address, "host[:port]"),
 * workaround flags (ipmi_workarounds: comma-separated names as ipmipower's
 * -W: opensesspriv, authcap, intel20, supermicro20, sun20,
 * integritycheckvalue, nochecksumcheck, idzero, unexpectedauth,
 * forcepermsg, endianseq, noauthcodecheck) and the credentials from the
 * secrets file (ipmi_user, ipmi_password). Timeouts and retries from
 * struct mxqd_power_transport_config.
 *
 * Sessions: IPMI 2.0 (RMCP+, cipher suite 3) first; a BMC without 2.0
 * gets an IPMI 1.5 session (MD5). Every action is verified by reading the
 * chassis status back: power on and hard off wait (bounded) until the
 * status shows the new state; soft off checks the BMC answers, the leader
 * escalates to hard off when the node is still on after its deadline.
 *
 * Errors: a rejected login, an unreachable BMC and an unexpected completion
 * code each give one line naming the BMC; only timeouts are retried. A call
 * keeps to mxqd_power_ipmi_bound_ms(): a request that libfreeipmi could
 * still retransmit past it is not started, the call ends with -ETIME.
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"
#include "mxqd_ipmi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mx_util.h"

#define IPMI_CIPHER_SUITE 3

struct workaround {
	const char *name;
	unsigned flags_2_0;
	unsigned flags_1_5;
};

static const struct workaround workarounds[] = {
	{ "authcap", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_AUTHENTICATION_CAPABILITIES,
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_AUTHENTICATION_CAPABILITIES },
	{ "intel20", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_INTEL_2_0_SESSION, 0 },
	{ "supermicro20", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUPERMICRO_2_0_SESSION, 0 },
	{ "sun20", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUN_2_0_SESSION, 0 },
	{ "opensesspriv", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_OPEN_SESSION_PRIVILEGE, 0 },
	{ "integritycheckvalue", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NON_EMPTY_INTEGRITY_CHECK_VALUE, 0 },
	{ "nochecksumcheck", IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NO_CHECKSUM_CHECK,
	  IPMI_WORKAROUND_FLAGS_OUTOFBAND_NO_CHECKSUM_CHECK },
	{ "idzero", 0, IPMI_WORKAROUND_FLAGS_OUTOFBAND_ACCEPT_SESSION_ID_ZERO },
	{ "forcepermsg", 0, IPMI_WORKAROUND_FLAGS_OUTOFBAND_FORCE_PERMSG_AUTHENTICATION },
	{ "unexpectedauth", 0, IPMI_WORKAROUND_FLAGS_OUTOFBAND_CHECK_UNEXPECTED_AUTHCODE },
	{ "endianseq", 0, IPMI_WORKAROUND_FLAGS_OUTOFBAND_BIG_ENDIAN_SEQUENCE_NUMBER },
	{ "noauthcodecheck", 0, IPMI_WORKAROUND_FLAGS_OUTOFBAND_NO_AUTH_CODE_CHECK },
};

/* Parse a comma-separated list of workaround names. 0 or -EINVAL (the
 * offending name in errbuf). */
static int parse_workarounds(const char *text, unsigned *ret_20, unsigned *ret_15, char *errbuf,
			     size_t errlen)
{
	unsigned f20 = 0, f15 = 0;
	const char *p = text ? text : "";

	while (*p) {
		size_t len = strcspn(p, ", ");
		size_t i;

		for (i = 0; len && i < sizeof(workarounds) / sizeof(workarounds[0]); i++)
			if (strlen(workarounds[i].name) == len && strncmp(workarounds[i].name, p, len) == 0)
				break;
		if (len && i == sizeof(workarounds) / sizeof(workarounds[0])) {
			snprintf(errbuf, errlen, "unknown IPMI workaround '%.*s' (known: authcap, intel20, "
				 "supermicro20, sun20, opensesspriv, integritycheckvalue, nochecksumcheck, "
				 "idzero, forcepermsg, unexpectedauth, endianseq, noauthcodecheck)",
				 (int)len, p);
			return -EINVAL;
		}
		if (len) {
			f20 |= workarounds[i].flags_2_0;
			f15 |= workarounds[i].flags_1_5;
		}
		p += len;
		p += strspn(p, ", ");
	}
	*ret_20 = f20;
	*ret_15 = f15;
	return 0;
}

int mxqd_ipmi_workarounds_check(const char *names, char *errbuf, size_t errlen)
{
	unsigned a, b;

	return parse_workarounds(names, &a, &b, errbuf, errlen);
}

const char *mxqd_ipmi_unusable(const struct mxqd_power_target *t,
			       const struct mxqd_power_transport_config *c, char *buf, size_t len)
{
	unsigned a, b;

	if (!t->bmc_address[0])
		return "transport ipmi needs the BMC address (mxqadmin power set HOST bmc=ADDRESS)";
	if (!t->secrets.ipmi_password)
		return "transport ipmi needs ipmi_password in the power secrets file";
	if (strlen(t->secrets.ipmi_password) > IPMI_2_0_MAX_PASSWORD_LENGTH)
		return "ipmi_password in the power secrets file is longer than IPMI allows (20)";
	if (t->secrets.ipmi_user && strlen(t->secrets.ipmi_user) > IPMI_MAX_USER_NAME_LENGTH)
		return "ipmi_user in the power secrets file is longer than IPMI allows (16)";
	if (parse_workarounds(t->ipmi_workarounds, &a, &b, buf, len) < 0)
		return buf;
	return NULL;
}

static const char *privilege_name(uint8_t privilege)
{
	return privilege == IPMI_PRIVILEGE_LEVEL_ADMIN ? "ADMIN" :
	       privilege == IPMI_PRIVILEGE_LEVEL_OPERATOR ? "OPERATOR" : "USER";
}

int mxqd_ipmi_error(ipmi_ctx_t ctx, const struct mxqd_power_target *t,
		    const struct mxqd_power_transport_config *c, const char *what,
		    char *errbuf, size_t errlen)
{
	int e = ipmi_ctx_errnum(ctx);
	const char *user = t->secrets.ipmi_user ? t->secrets.ipmi_user : "";

	switch (e) {
	case IPMI_ERR_USERNAME_INVALID:
		snprintf(errbuf, errlen, "BMC %s rejected the login: unknown user '%s'", t->bmc_address, user);
		return -EACCES;
	case IPMI_ERR_PASSWORD_INVALID:
	case IPMI_ERR_K_G_INVALID:
		snprintf(errbuf, errlen, "BMC %s rejected the login of user '%s': wrong password "
			 "(see the power secrets file)", t->bmc_address, user);
		return -EACCES;
	case IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT:
	case IPMI_ERR_PRIVILEGE_LEVEL_CANNOT_BE_OBTAINED:
		snprintf(errbuf, errlen, "BMC %s: user '%s' lacks the %s privilege (a BMC that echoes "
			 "the requested privilege needs ipmi_workarounds=opensesspriv)", t->bmc_address,
			 user, privilege_name(c->ipmi_privilege));
		return -EACCES;
	case IPMI_ERR_SESSION_TIMEOUT:
	case IPMI_ERR_CONNECTION_TIMEOUT:
	case IPMI_ERR_MESSAGE_TIMEOUT:
		snprintf(errbuf, errlen, "BMC %s did not answer %s within %u ms", t->bmc_address, what,
			 c->ipmi_timeout_ms);
		return -ETIMEDOUT;
	case IPMI_ERR_COMMAND_INVALID_OR_UNSUPPORTED:
		snprintf(errbuf, errlen, "BMC %s does not support %s", t->bmc_address, what);
		return -EOPNOTSUPP;
	case IPMI_ERR_HOSTNAME_INVALID:
		snprintf(errbuf, errlen, "BMC address '%s' is not valid", t->bmc_address);
		return -EINVAL;
	default:
		snprintf(errbuf, errlen, "BMC %s: %s failed: %s", t->bmc_address, what,
			 ipmi_ctx_errormsg(ctx));
		return e == IPMI_ERR_BAD_COMPLETION_CODE ? -EPROTO : -EIO;
	}
}

int mxqd_ipmi_open_lan(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		       ipmi_ctx_t *ret_ctx, char *errbuf, size_t errlen)
{
	uint8_t priv = c->ipmi_privilege ? c->ipmi_privilege : IPMI_PRIVILEGE_LEVEL_ADMIN;
	unsigned f20 = 0, f15 = 0, retrans;
	ipmi_ctx_t ctx;
	int r;

	r = parse_workarounds(t->ipmi_workarounds, &f20, &f15, errbuf, errlen);
	if (r < 0)
		return r;
	ctx = ipmi_ctx_create();
	if (!ctx)
		return -ENOMEM;
	retrans = c->ipmi_timeout_ms / 4 < 250 ? 250 : c->ipmi_timeout_ms / 4;
	if (retrans >= c->ipmi_timeout_ms)
		retrans = c->ipmi_timeout_ms / 2 ? c->ipmi_timeout_ms / 2 : 1;
	if (ipmi_ctx_open_outofband_2_0(ctx, t->bmc_address, t->secrets.ipmi_user,
					t->secrets.ipmi_password, NULL, 0, priv,
					IPMI_CIPHER_SUITE, c->ipmi_timeout_ms, retrans, f20,
					IPMI_FLAGS_DEFAULT) == 0) {
		*ret_ctx = ctx;
		return 0;
	}
	if (ipmi_ctx_errnum(ctx) == IPMI_ERR_IPMI_2_0_UNAVAILABLE) {
		ipmi_ctx_destroy(ctx);
		ctx = ipmi_ctx_create();
		if (!ctx)
			return -ENOMEM;
		if (ipmi_ctx_open_outofband(ctx, t->bmc_address, t->secrets.ipmi_user,
					    t->secrets.ipmi_password, IPMI_AUTHENTICATION_TYPE_MD5,
					    priv, c->ipmi_timeout_ms, retrans, f15,
					    IPMI_FLAGS_DEFAULT) == 0) {
			*ret_ctx = ctx;
			return 0;
		}
	}
	r = mxqd_ipmi_error(ctx, t, c, "a session request", errbuf, errlen);
	ipmi_ctx_destroy(ctx);
	return r;
}

void mxqd_ipmi_close(ipmi_ctx_t ctx)
{
	if (!ctx)
		return;
	ipmi_ctx_close(ctx);
	ipmi_ctx_destroy(ctx);
}

/* 1 on, 0 off, negative errno. */
static int read_power(ipmi_ctx_t ctx, const struct mxqd_power_target *t,
		      const struct mxqd_power_transport_config *c, char *errbuf, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_get_chassis_status_rs);
	uint64_t on = 0, cc = 0;
	int r;

	if (!rs)
		return -ENOMEM;
	if (ipmi_cmd_get_chassis_status(ctx, rs) < 0) {
		r = mxqd_ipmi_error(ctx, t, c, "Get Chassis Status", errbuf, errlen);
		if (ipmi_ctx_errnum(ctx) == IPMI_ERR_BAD_COMPLETION_CODE &&
		    fiid_obj_get(rs, "comp_code", &cc) >= 0)
			snprintf(errbuf, errlen, "BMC %s answered Get Chassis Status with completion code "
				 "0x%02x", t->bmc_address, (unsigned)cc);
		fiid_obj_destroy(rs);
		return r;
	}
	r = fiid_obj_get(rs, "current_power_state.power_is_on", &on);
	fiid_obj_destroy(rs);
	if (r < 0) {
		snprintf(errbuf, errlen, "BMC %s: chassis status without a power state", t->bmc_address);
		return -EPROTO;
	}
	return on ? 1 : 0;
}

static int chassis_control(ipmi_ctx_t ctx, const struct mxqd_power_target *t,
			   const struct mxqd_power_transport_config *c, uint8_t control,
			   const char *what, char *errbuf, size_t errlen)
{
	fiid_obj_t rs = fiid_obj_create(tmpl_cmd_chassis_control_rs);
	uint64_t cc = 0;
	int r = 0;

	if (!rs)
		return -ENOMEM;
	if (ipmi_cmd_chassis_control(ctx, control, rs) < 0) {
		r = mxqd_ipmi_error(ctx, t, c, what, errbuf, errlen);
		if (ipmi_ctx_errnum(ctx) == IPMI_ERR_BAD_COMPLETION_CODE &&
		    fiid_obj_get(rs, "comp_code", &cc) >= 0)
			snprintf(errbuf, errlen, "BMC %s answered %s with completion code 0x%02x",
				 t->bmc_address, what, (unsigned)cc);
	}
	fiid_obj_destroy(rs);
	return r;
}

enum op { OP_ON, OP_SOFT_OFF, OP_HARD_OFF, OP_STATUS };

/*
 * Whether a request started now still ends, with libfreeipmi's
 * retransmissions for up to one timeout, within the running call's bound
 * (mxqd_power_call_deadline_ms; always outside a call). The leader fences
 * by that bound, so nothing is sent that could arrive later.
 */
static bool request_fits(const struct mxqd_power_transport_config *c)
{
	uint64_t end = mxqd_power_call_deadline_ms();

	return !end || mx_now_boottime_ms() + c->ipmi_timeout_ms <= end;
}

/* The final error of an attempt that stops because the bound is used up:
 * no attempt may follow (-ETIME). */
static int bound_used_up(const struct mxqd_power_target *t, const char *what, char *errbuf,
			 size_t errlen)
{
	snprintf(errbuf, errlen, "BMC %s: %s not sent: the call's time bound is used up",
		 t->bmc_address, what);
	return -ETIME;
}

/* One attempt of OP (enum op) in one session. */
static int attempt(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   int op, char *errbuf, size_t errlen)
{
	static const struct { uint8_t control; const char *what; int want; } ops[] = {
		[OP_ON] = { IPMI_CHASSIS_CONTROL_POWER_UP, "Chassis Control power up", 1 },
		[OP_SOFT_OFF] = { IPMI_CHASSIS_CONTROL_INITIATE_SOFT_SHUTDOWN,
				  "Chassis Control soft shutdown", 0 },
		[OP_HARD_OFF] = { IPMI_CHASSIS_CONTROL_POWER_DOWN, "Chassis Control power down", 0 },
		[OP_STATUS] = { 0, NULL, -1 },
	};
	ipmi_ctx_t ctx = NULL;
	uint64_t deadline;
	int r, st;

	/* every request, the session's too, must fit into the call's bound:
	 * a retry's session is not even opened when it would not */
	if (!request_fits(c))
		return bound_used_up(t, "session request", errbuf, errlen);
	r = mxqd_ipmi_open_lan(t, c, &ctx, errbuf, errlen);
	if (r < 0)
		return r;
	st = request_fits(c) ? read_power(ctx, t, c, errbuf, errlen) :
	     bound_used_up(t, "Get Chassis Status", errbuf, errlen);
	if (st < 0 || op == OP_STATUS || st == ops[op].want) {
		mxqd_ipmi_close(ctx);
		return op == OP_STATUS || st < 0 ? st : 0;  /* already there: nothing to do */
	}
	if (!request_fits(c)) {
		mxqd_ipmi_close(ctx);
		return bound_used_up(t, ops[op].what, errbuf, errlen);
	}
	r = chassis_control(ctx, t, c, ops[op].control, ops[op].what, errbuf, errlen);
	if (r >= 0 && op == OP_SOFT_OFF && request_fits(c)) {
		/* soft off: the OS takes its time; reading the status back shows
		 * the BMC still answers, the leader watches and escalates */
		st = read_power(ctx, t, c, errbuf, errlen);
		r = st < 0 ? st : 0;
	}
	if (r < 0 || op == OP_SOFT_OFF) {
		mxqd_ipmi_close(ctx);
		return r;
	}
	deadline = mx_now_monotonic_ms() + c->ipmi_verify_ms;
	for (;;) {
		if (!request_fits(c)) {
			mxqd_ipmi_close(ctx);
			snprintf(errbuf, errlen, "BMC %s accepted %s but the call's time bound was used "
				 "up before the chassis showed it", t->bmc_address, ops[op].what);
			return -ETIME;
		}
		st = read_power(ctx, t, c, errbuf, errlen);
		if (st < 0 || st == ops[op].want || mx_now_monotonic_ms() >= deadline)
			break;
		mx_sleep_ms(200);
	}
	mxqd_ipmi_close(ctx);
	if (st < 0)
		return st;
	if (st != ops[op].want) {
		snprintf(errbuf, errlen, "BMC %s accepted %s but the chassis still reports power %s "
			 "after %u ms", t->bmc_address, ops[op].what, st ? "on" : "off", c->ipmi_verify_ms);
		return -EIO;
	}
	return 0;
}

static bool timed_out(int r)
{
	return r == -ETIMEDOUT;
}

uint64_t mxqd_power_ipmi_bound_ms(const struct mxqd_power_transport_config *c)
{
	return (uint64_t)c->ipmi_timeout_ms * (c->ipmi_retries + 1) + c->ipmi_verify_ms;
}

/* OP with retries on timeouts only: a wrong password stays wrong. The
 * whole call within mxqd_power_ipmi_bound_ms. */
static int with_retries(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
			enum op op, char *errbuf, size_t errlen)
{
	return mxqd_power_retry(attempt, t, c, (int)op, c->ipmi_retries, timed_out, 0,
				mxqd_power_ipmi_bound_ms(c), errbuf, errlen);
}

static int ipmi_on(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   char *errbuf, size_t errlen)
{
	return with_retries(t, c, OP_ON, errbuf, errlen);
}

static int ipmi_off(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		    enum mxqd_power_off_mode mode, char *errbuf, size_t errlen)
{
	return with_retries(t, c, mode == MXQD_POWER_OFF_HARD ? OP_HARD_OFF : OP_SOFT_OFF, errbuf,
			    errlen);
}

static int ipmi_status(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		       char *errbuf, size_t errlen)
{
	return with_retries(t, c, OP_STATUS, errbuf, errlen);
}

const struct mxqd_power_transport mxqd_power_transport_ipmi = {
	.name = "ipmi",
	.caps = MXQD_TRANSPORT_CAN_ON | MXQD_TRANSPORT_CAN_OFF | MXQD_TRANSPORT_CAN_HARD_OFF |
		MXQD_TRANSPORT_CAN_STATUS,
	.unusable = mxqd_ipmi_unusable,
	.power_on = ipmi_on,
	.power_off = ipmi_off,
	.status = ipmi_status,
};
