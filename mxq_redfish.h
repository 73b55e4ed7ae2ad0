/*
 * mxq_redfish - reading the Redfish resources the power manager and the
 * energy accounting need, from their JSON text (jansson): the service
 * root's and a collection's links, a ComputerSystem's PowerState and its
 * ComputerSystem.Reset action, a Chassis' power reading (EnvironmentMetrics
 * PowerWatts, or the older Power resource's PowerControl[]), and the
 * message of a Redfish error answer.
 *
 * No HTTP here (mxqd_redfish.c talks to the BMC), no logging, no state:
 * every function takes the body of one answer, so the unit tests feed it
 * tables of documents.
 */
#ifndef MXQ_REDFISH_H
#define MXQ_REDFISH_H

#include <stdbool.h>
#include <stddef.h>

enum mxq_redfish_power {
	MXQ_REDFISH_OFF = 0,
	MXQ_REDFISH_ON,
	MXQ_REDFISH_POWERING_ON,
	MXQ_REDFISH_POWERING_OFF,
	MXQ_REDFISH_PAUSED,
};

/* The ResetType values this tree may send (ComputerSystem.Reset). */
enum mxq_redfish_reset {
	MXQ_REDFISH_RESET_ON = 0,
	MXQ_REDFISH_RESET_FORCE_ON,
	MXQ_REDFISH_RESET_GRACEFUL_SHUTDOWN,
	MXQ_REDFISH_RESET_FORCE_OFF,
	MXQ_REDFISH_RESET_PUSH_POWER_BUTTON,
	MXQ_REDFISH_RESET__COUNT,
};

/* What a power action needs: on, orderly off, power cut. */
enum mxq_redfish_action {
	MXQ_REDFISH_ACTION_ON = 0,
	MXQ_REDFISH_ACTION_SOFT_OFF,
	MXQ_REDFISH_ACTION_HARD_OFF,
};

#define MXQ_REDFISH_PATH_MAX 512

struct mxq_redfish_system {
	enum mxq_redfish_power power;
	char reset_target[MXQ_REDFISH_PATH_MAX]; /* the action's "target"; empty: no Reset action */
	bool reset_listed;          /* ResetType@Redfish.AllowableValues was there */
	unsigned reset_allowed;     /* bit (1 << enum mxq_redfish_reset) for each listed value */
	char chassis[MXQ_REDFISH_PATH_MAX]; /* Links.Chassis[0]; empty: none */
};

/* "On", "ForceOn", "GracefulShutdown", "ForceOff", "PushPowerButton". */
const char *mxq_redfish_reset_name(enum mxq_redfish_reset r);

/* "On", "Off", "PoweringOn", "PoweringOff", "Paused". */
const char *mxq_redfish_power_name(enum mxq_redfish_power p);

/*
 * Parse a ComputerSystem. 0; -EPROTO with the reason in errbuf for a body
 * that is not JSON, has no PowerState or an unknown one, or a Reset
 * action without a target.
 */
int mxq_redfish_parse_system(const char *body, struct mxq_redfish_system *ret, char *errbuf,
			     size_t errlen);

/*
 * The ResetType to send for ACTION to system S, or -EOPNOTSUPP (errbuf
 * lists what the system offers) when it advertises none that fits. Order
 * of preference: on: On, ForceOn, PushPowerButton; soft off:
 * GracefulShutdown, PushPowerButton; hard off: ForceOff. A system that
 * lists no AllowableValues gets the first of each.
 */
int mxq_redfish_pick_reset(const struct mxq_redfish_system *s, enum mxq_redfish_action action,
			   enum mxq_redfish_reset *ret, char *errbuf, size_t errlen);

/*
 * The @odata.id of the resource NAME links to at the top level of BODY
 * ({"NAME": {"@odata.id": PATH}}) into buf. 0, -ENOENT when not there,
 * -EPROTO when BODY is not JSON or PATH is not an absolute path (starting
 * with /, no spaces or control characters: every path this module returns
 * is one, so that it stays on the BMC it came from), -ENAMETOOLONG.
 */
int mxq_redfish_link(const char *body, const char *name, char *buf, size_t len);

/*
 * Member I (from 0) of a collection (Members[I]["@odata.id"]) into buf.
 * 0, -ENOENT past the end, -EPROTO (not a collection, or not an absolute
 * path), -ENAMETOOLONG.
 */
int mxq_redfish_member(const char *body, size_t i, char *buf, size_t len);

/* The largest power reading taken (1 MW: more than any chassis draws). */
#define MXQ_REDFISH_WATTS_MAX 1e6

/*
 * EnvironmentMetrics: PowerWatts.Reading in watts. 0; -ENODATA when the
 * reading is null or missing (a sensor without a value) or negative or
 * above MXQ_REDFISH_WATTS_MAX (a broken one); -EPROTO.
 */
int mxq_redfish_parse_environment_watts(const char *body, double *ret_watts, char *errbuf,
					size_t errlen);

/*
 * Power (deprecated since 2020.4 but still the common one): the first
 * PowerControl[] entry with a PowerConsumedWatts number from 0 to
 * MXQ_REDFISH_WATTS_MAX. 0; -ENODATA when no entry has one; -EPROTO.
 */
int mxq_redfish_parse_power_watts(const char *body, double *ret_watts, char *errbuf,
				  size_t errlen);

/*
 * The message of a Redfish error answer into buf: the Message of every
 * error.@Message.ExtendedInfo[] entry ("; "-joined), else error.message,
 * else nothing (buf empty). Never fails; a NULL or non-JSON body gives "".
 */
void mxq_redfish_error_message(const char *body, char *buf, size_t len);

/*
 * Check a per-host value of `mxqadmin power set`: redfish_system (empty,
 * or a path below /redfish/v1/Systems/), redfish_ca (empty or an absolute
 * path), redfish_tls (verify or insecure), redfish_auth (session or
 * basic). 0, -ENOENT when KEY is none of these, -EINVAL with one line in
 * errbuf.
 */
int mxq_redfish_setting_check(const char *key, const char *value, char *errbuf, size_t errlen);

#endif
