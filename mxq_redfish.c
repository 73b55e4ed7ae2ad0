/*
 * mxq_redfish - Redfish resources from their JSON text (see mxq_redfish.h).
 *
 * Facts used (DMTF Redfish schemas): ComputerSystem.PowerState is one of
 * On, Off, PoweringOn, PoweringOff, Paused; the reset action sits at
 * Actions["#ComputerSystem.Reset"] with "target" (the URI to POST
 * {"ResetType": ...} to) and optionally "ResetType@Redfish.AllowableValues";
 * a collection lists its members as Members[]["@odata.id"]; a Chassis
 * links EnvironmentMetrics (PowerWatts.Reading, schema 2021.1 and later)
 * and the deprecated Power (PowerControl[].PowerConsumedWatts); an error
 * answer is {"error": {"code", "message", "@Message.ExtendedInfo": [{
 * "MessageId", "Message"}]}}.
 */
#define _GNU_SOURCE
#include "mxq_redfish.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static const char *const reset_names[MXQ_REDFISH_RESET__COUNT] = {
	[MXQ_REDFISH_RESET_ON] = "On",
	[MXQ_REDFISH_RESET_FORCE_ON] = "ForceOn",
	[MXQ_REDFISH_RESET_GRACEFUL_SHUTDOWN] = "GracefulShutdown",
	[MXQ_REDFISH_RESET_FORCE_OFF] = "ForceOff",
	[MXQ_REDFISH_RESET_PUSH_POWER_BUTTON] = "PushPowerButton",
};

static const char *const power_names[] = {
	[MXQ_REDFISH_OFF] = "Off",
	[MXQ_REDFISH_ON] = "On",
	[MXQ_REDFISH_POWERING_ON] = "PoweringOn",
	[MXQ_REDFISH_POWERING_OFF] = "PoweringOff",
	[MXQ_REDFISH_PAUSED] = "Paused",
};

#define N_POWER (sizeof(power_names) / sizeof(power_names[0]))

const char *mxq_redfish_reset_name(enum mxq_redfish_reset r)
{
	return (unsigned)r < MXQ_REDFISH_RESET__COUNT ? reset_names[r] : "?";
}

const char *mxq_redfish_power_name(enum mxq_redfish_power p)
{
	return (size_t)p < N_POWER ? power_names[p] : "?";
}

/* BODY as a JSON object, or NULL with the reason in errbuf. */
static json_t *load_object(const char *body, char *errbuf, size_t errlen)
{
	json_error_t je;
	json_t *root;

	if (!body) {
		snprintf(errbuf, errlen, "empty answer");
		return NULL;
	}
	root = json_loads(body, 0, &je);  /* a BMC repeating a key: the last one counts */
	if (!root) {
		snprintf(errbuf, errlen, "answer is not JSON (line %d: %s)", je.line, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		snprintf(errbuf, errlen, "answer is not a JSON object");
		json_decref(root);
		return NULL;
	}
	return root;
}

/*
 * A path the BMC names, into buf: -EPROTO unless it is an absolute path
 * without spaces or control characters. The caller appends it to
 * "https://BMC", so anything else ("@host:port/...", ".domain/...",
 * ":port/...") would send the request and its credentials elsewhere.
 */
static int copy_path(const char *v, char *buf, size_t len)
{
	if (v[0] != '/')
		return -EPROTO;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f)
			return -EPROTO;
	if (strlen(v) >= len)
		return -ENAMETOOLONG;
	memcpy(buf, v, strlen(v) + 1);
	return 0;
}

/* The @odata.id string of a link object, or NULL. */
static const char *odata_id(const json_t *link)
{
	return json_string_value(json_object_get(link, "@odata.id"));
}

int mxq_redfish_parse_system(const char *body, struct mxq_redfish_system *ret, char *errbuf,
			     size_t errlen)
{
	json_t *root = load_object(body, errbuf, errlen), *reset, *allowed, *v;
	const char *state, *target;
	size_t i, p;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	if (!root)
		return -EPROTO;
	state = json_string_value(json_object_get(root, "PowerState"));
	for (p = 0; state && p < N_POWER && strcmp(state, power_names[p]) != 0; p++)
		;
	if (!state || p == N_POWER) {
		if (state)
			snprintf(errbuf, errlen, "unknown PowerState '%.40s'", state);
		else
			snprintf(errbuf, errlen, "ComputerSystem without a PowerState");
		json_decref(root);
		return -EPROTO;
	}
	ret->power = (enum mxq_redfish_power)p;
	reset = json_object_get(json_object_get(root, "Actions"), "#ComputerSystem.Reset");
	if (reset) {
		target = json_string_value(json_object_get(reset, "target"));
		if (!target || copy_path(target, ret->reset_target, sizeof(ret->reset_target)) < 0) {
			snprintf(errbuf, errlen, "#ComputerSystem.Reset without a usable target");
			r = -EPROTO;
		}
		allowed = json_object_get(reset, "ResetType@Redfish.AllowableValues");
		ret->reset_listed = json_is_array(allowed);
		json_array_foreach(allowed, i, v) {
			const char *name = json_string_value(v);

			for (unsigned k = 0; name && k < MXQ_REDFISH_RESET__COUNT; k++)
				if (strcmp(name, reset_names[k]) == 0)
					ret->reset_allowed |= 1u << k;
		}
	}
	v = json_array_get(json_object_get(json_object_get(root, "Links"), "Chassis"), 0);
	if (odata_id(v))
		copy_path(odata_id(v), ret->chassis, sizeof(ret->chassis));
	json_decref(root);
	return r;
}

int mxq_redfish_pick_reset(const struct mxq_redfish_system *s, enum mxq_redfish_action action,
			   enum mxq_redfish_reset *ret, char *errbuf, size_t errlen)
{
	static const enum mxq_redfish_reset prefs[][3] = {
		[MXQ_REDFISH_ACTION_ON] = { MXQ_REDFISH_RESET_ON, MXQ_REDFISH_RESET_FORCE_ON,
					    MXQ_REDFISH_RESET_PUSH_POWER_BUTTON },
		[MXQ_REDFISH_ACTION_SOFT_OFF] = { MXQ_REDFISH_RESET_GRACEFUL_SHUTDOWN,
						  MXQ_REDFISH_RESET_PUSH_POWER_BUTTON,
						  MXQ_REDFISH_RESET__COUNT },
		[MXQ_REDFISH_ACTION_HARD_OFF] = { MXQ_REDFISH_RESET_FORCE_OFF, MXQ_REDFISH_RESET__COUNT,
						  MXQ_REDFISH_RESET__COUNT },
	};
	static const char *const what[] = { "power on", "graceful shutdown", "forced power off" };
	size_t l = 0;

	if (!s->reset_target[0]) {
		snprintf(errbuf, errlen, "the system has no #ComputerSystem.Reset action");
		return -EOPNOTSUPP;
	}
	if (!s->reset_listed) {
		*ret = prefs[action][0];
		return 0;
	}
	for (int i = 0; i < 3 && prefs[action][i] != MXQ_REDFISH_RESET__COUNT; i++) {
		if (s->reset_allowed & (1u << prefs[action][i])) {
			*ret = prefs[action][i];
			return 0;
		}
	}
	l = (size_t)snprintf(errbuf, errlen, "no ResetType for %s among the system's "
			     "AllowableValues (usable ones listed:", what[action]);
	for (unsigned k = 0; k < MXQ_REDFISH_RESET__COUNT && l < errlen; k++)
		if (s->reset_allowed & (1u << k))
			l += (size_t)snprintf(errbuf + l, errlen - l, " %s", reset_names[k]);
	if (l < errlen)
		snprintf(errbuf + l, errlen - l, "%s)", s->reset_allowed ? "" : " none");
	return -EOPNOTSUPP;
}

int mxq_redfish_link(const char *body, const char *name, char *buf, size_t len)
{
	char err[128];
	json_t *root = load_object(body, err, sizeof(err));
	const char *id;
	int r;

	if (!root)
		return -EPROTO;
	id = odata_id(json_object_get(root, name));
	r = id ? copy_path(id, buf, len) : -ENOENT;
	json_decref(root);
	return r;
}

int mxq_redfish_member(const char *body, size_t i, char *buf, size_t len)
{
	char err[128];
	json_t *root = load_object(body, err, sizeof(err)), *members;
	const char *id;
	int r;

	if (!root)
		return -EPROTO;
	members = json_object_get(root, "Members");
	if (!json_is_array(members))
		r = -EPROTO;
	else if (i >= json_array_size(members))
		r = -ENOENT;
	else
		r = (id = odata_id(json_array_get(members, i))) ? copy_path(id, buf, len) : -EPROTO;
	json_decref(root);
	return r;
}

/* A reading a chassis can give: not negative (a broken sensor), and not
 * beyond MXQ_REDFISH_WATTS_MAX, whose energy could even overflow. */
static bool plausible_watts(double w)
{
	return w >= 0 && w <= MXQ_REDFISH_WATTS_MAX;
}

int mxq_redfish_parse_environment_watts(const char *body, double *ret_watts, char *errbuf,
					size_t errlen)
{
	json_t *root = load_object(body, errbuf, errlen), *pw, *reading;
	int r = 0;

	if (!root)
		return -EPROTO;
	pw = json_object_get(root, "PowerWatts");
	reading = json_object_get(pw, "Reading");
	if (json_is_number(reading) && !plausible_watts(json_number_value(reading))) {
		snprintf(errbuf, errlen, "EnvironmentMetrics PowerWatts.Reading %g W is %s: no "
			 "measurement", json_number_value(reading),
			 json_number_value(reading) < 0 ? "negative" : "beyond 1 MW");
		r = -ENODATA;
	} else if (json_is_number(reading)) {
		*ret_watts = json_number_value(reading);
	} else if (!reading || json_is_null(reading)) {
		snprintf(errbuf, errlen, "EnvironmentMetrics has no PowerWatts reading");
		r = -ENODATA;
	} else {
		snprintf(errbuf, errlen, "EnvironmentMetrics PowerWatts.Reading is not a number");
		r = -EPROTO;
	}
	json_decref(root);
	return r;
}

int mxq_redfish_parse_power_watts(const char *body, double *ret_watts, char *errbuf,
				  size_t errlen)
{
	json_t *root = load_object(body, errbuf, errlen), *controls, *c;
	double bad = 0;
	size_t i;
	int r = -ENODATA;

	if (!root)
		return -EPROTO;
	controls = json_object_get(root, "PowerControl");
	json_array_foreach(controls, i, c) {
		json_t *w = json_object_get(c, "PowerConsumedWatts");

		if (json_is_number(w) && !plausible_watts(json_number_value(w))) {
			bad = json_number_value(w);
		} else if (json_is_number(w)) {
			*ret_watts = json_number_value(w);
			r = 0;
			break;
		}
	}
	if (r < 0 && bad != 0)
		snprintf(errbuf, errlen, "Power PowerControl[] PowerConsumedWatts %g W is %s: no "
			 "measurement", bad, bad < 0 ? "negative" : "beyond 1 MW");
	else if (r < 0)
		snprintf(errbuf, errlen, "Power has no PowerControl[] entry with PowerConsumedWatts");
	json_decref(root);
	return r;
}

void mxq_redfish_error_message(const char *body, char *buf, size_t len)
{
	char err[128];
	json_t *root, *error, *info, *e;
	const char *msg;
	size_t i, l = 0;

	if (len)
		buf[0] = '\0';
	root = body ? load_object(body, err, sizeof(err)) : NULL;
	if (!root)
		return;
	error = json_object_get(root, "error");
	info = json_object_get(error, "@Message.ExtendedInfo");
	json_array_foreach(info, i, e) {
		msg = json_string_value(json_object_get(e, "Message"));
		if (msg && l < len)
			l += (size_t)snprintf(buf + l, len - l, "%s%s", l ? "; " : "", msg);
	}
	msg = json_string_value(json_object_get(error, "message"));
	if (!l && msg)
		snprintf(buf, len, "%s", msg);
	json_decref(root);
}

int mxq_redfish_setting_check(const char *key, const char *value, char *errbuf, size_t errlen)
{
	static const char systems[] = "/redfish/v1/Systems/";

	if (strcmp(key, "redfish_system") == 0) {
		if (value[0] && (strncmp(value, systems, strlen(systems)) != 0 ||
				 !value[strlen(systems)] || strpbrk(value, " \t\"?#%\\"))) {
			snprintf(errbuf, errlen, "redfish_system: '%s' is not a system path like "
				 "/redfish/v1/Systems/1 (empty: the first member of /redfish/v1/Systems)",
				 value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "redfish_ca") == 0) {
		if (value[0] && value[0] != '/') {
			snprintf(errbuf, errlen, "redfish_ca: '%s' is not an absolute path of a PEM CA file "
				 "(empty: the system's CAs)", value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "redfish_tls") == 0) {
		if (strcmp(value, "verify") != 0 && strcmp(value, "insecure") != 0) {
			snprintf(errbuf, errlen, "redfish_tls: '%s' is not verify or insecure", value);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "redfish_auth") == 0) {
		if (strcmp(value, "session") != 0 && strcmp(value, "basic") != 0) {
			snprintf(errbuf, errlen, "redfish_auth: '%s' is not session or basic", value);
			return -EINVAL;
		}
		return 0;
	}
	return -ENOENT;
}
