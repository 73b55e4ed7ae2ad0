/*
 * test_redfish - the Redfish resource parsing of mxq_redfish.c, table
 * driven: PowerState values, the Reset action and its AllowableValues and
 * the ResetType chosen from them, collection members and links, both power
 * reading schemas (EnvironmentMetrics, Power/PowerControl), the message of
 * error answers (ExtendedInfo), and the per-host setting checks.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxq_redfish.h"

#define RESET_ACTION(allowable) \
	"\"Actions\": {\"#ComputerSystem.Reset\": {\"target\": " \
	"\"/redfish/v1/Systems/1/Actions/ComputerSystem.Reset\"" allowable "}}"

static const struct {
	const char *body;
	int rc;
	enum mxq_redfish_power power;
	bool listed;
	unsigned allowed;
	const char *chassis;
	const char *err;          /* substring of errbuf when rc < 0 */
} systems[] = {
	{ "{\"PowerState\": \"On\"}", 0, MXQ_REDFISH_ON, false, 0, "", NULL },
	{ "{\"PowerState\": \"Off\", " RESET_ACTION("") "}", 0, MXQ_REDFISH_OFF, false, 0, "", NULL },
	{ "{\"PowerState\": \"PoweringOn\"}", 0, MXQ_REDFISH_POWERING_ON, false, 0, "", NULL },
	{ "{\"PowerState\": \"PoweringOff\"}", 0, MXQ_REDFISH_POWERING_OFF, false, 0, "", NULL },
	{ "{\"PowerState\": \"Paused\"}", 0, MXQ_REDFISH_PAUSED, false, 0, "", NULL },
	{ "{\"PowerState\": \"On\", " RESET_ACTION(", \"ResetType@Redfish.AllowableValues\": "
	  "[\"On\", \"ForceOff\", \"GracefulShutdown\", \"GracefulRestart\", \"Nmi\"]") ", "
	  "\"Links\": {\"Chassis\": [{\"@odata.id\": \"/redfish/v1/Chassis/1U\"}]}}",
	  0, MXQ_REDFISH_ON, true, (1u << MXQ_REDFISH_RESET_ON) | (1u << MXQ_REDFISH_RESET_FORCE_OFF) |
	  (1u << MXQ_REDFISH_RESET_GRACEFUL_SHUTDOWN), "/redfish/v1/Chassis/1U", NULL },
	{ "{\"PowerState\": \"On\", " RESET_ACTION(", \"ResetType@Redfish.AllowableValues\": []") "}",
	  0, MXQ_REDFISH_ON, true, 0, "", NULL },
	{ "{\"PowerState\": \"Standby\"}", -EPROTO, 0, false, 0, "", "unknown PowerState 'Standby'" },
	{ "{\"Name\": \"System\"}", -EPROTO, 0, false, 0, "", "without a PowerState" },
	{ "{\"PowerState\": 1}", -EPROTO, 0, false, 0, "", "without a PowerState" },
	{ "<html>login</html>", -EPROTO, 0, false, 0, "", "not JSON" },
	{ "[1, 2]", -EPROTO, 0, false, 0, "", "not a JSON object" },
	{ "{\"PowerState\": \"On\", \"Actions\": {\"#ComputerSystem.Reset\": {}}}", -EPROTO,
	  MXQ_REDFISH_ON, false, 0, "", "without a usable target" },
};

START_TEST(parse_system)
{
	struct mxq_redfish_system s;
	char err[256] = "";
	int r = mxq_redfish_parse_system(systems[_i].body, &s, err, sizeof(err));

	ck_assert_msg(r == systems[_i].rc, "row %d: rc %d, want %d (%s)", _i, r, systems[_i].rc, err);
	if (r < 0) {
		ck_assert_msg(strstr(err, systems[_i].err), "row %d: '%s' lacks '%s'", _i, err,
			      systems[_i].err);
		return;
	}
	ck_assert_int_eq(s.power, systems[_i].power);
	ck_assert_int_eq(s.reset_listed, systems[_i].listed);
	ck_assert_uint_eq(s.reset_allowed, systems[_i].allowed);
	ck_assert_str_eq(s.chassis, systems[_i].chassis);
}
END_TEST

#define A(x) (1u << MXQ_REDFISH_RESET_##x)

static const struct {
	bool has_action;
	bool listed;
	unsigned allowed;
	enum mxq_redfish_action action;
	int rc;
	enum mxq_redfish_reset want;
} picks[] = {
	/* nothing listed: the standard value */
	{ true, false, 0, MXQ_REDFISH_ACTION_ON, 0, MXQ_REDFISH_RESET_ON },
	{ true, false, 0, MXQ_REDFISH_ACTION_SOFT_OFF, 0, MXQ_REDFISH_RESET_GRACEFUL_SHUTDOWN },
	{ true, false, 0, MXQ_REDFISH_ACTION_HARD_OFF, 0, MXQ_REDFISH_RESET_FORCE_OFF },
	/* the full set */
	{ true, true, A(ON) | A(FORCE_ON) | A(GRACEFUL_SHUTDOWN) | A(FORCE_OFF) | A(PUSH_POWER_BUTTON),
	  MXQ_REDFISH_ACTION_ON, 0, MXQ_REDFISH_RESET_ON },
	/* fallbacks in order */
	{ true, true, A(FORCE_ON) | A(PUSH_POWER_BUTTON), MXQ_REDFISH_ACTION_ON, 0,
	  MXQ_REDFISH_RESET_FORCE_ON },
	{ true, true, A(PUSH_POWER_BUTTON), MXQ_REDFISH_ACTION_ON, 0,
	  MXQ_REDFISH_RESET_PUSH_POWER_BUTTON },
	{ true, true, A(PUSH_POWER_BUTTON) | A(FORCE_OFF), MXQ_REDFISH_ACTION_SOFT_OFF, 0,
	  MXQ_REDFISH_RESET_PUSH_POWER_BUTTON },
	/* a power button is no power cut */
	{ true, true, A(PUSH_POWER_BUTTON) | A(GRACEFUL_SHUTDOWN), MXQ_REDFISH_ACTION_HARD_OFF,
	  -EOPNOTSUPP, 0 },
	{ true, true, A(ON) | A(FORCE_OFF), MXQ_REDFISH_ACTION_SOFT_OFF, -EOPNOTSUPP, 0 },
	{ true, true, 0, MXQ_REDFISH_ACTION_ON, -EOPNOTSUPP, 0 },
	{ false, false, 0, MXQ_REDFISH_ACTION_ON, -EOPNOTSUPP, 0 },
};

START_TEST(pick_reset)
{
	struct mxq_redfish_system s = { .reset_listed = picks[_i].listed,
					.reset_allowed = picks[_i].allowed };
	enum mxq_redfish_reset got = MXQ_REDFISH_RESET__COUNT;
	char err[256] = "";
	int r;

	if (picks[_i].has_action)
		strcpy(s.reset_target, "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset");
	r = mxq_redfish_pick_reset(&s, picks[_i].action, &got, err, sizeof(err));
	ck_assert_msg(r == picks[_i].rc, "row %d: rc %d (%s)", _i, r, err);
	if (r == 0)
		ck_assert_str_eq(mxq_redfish_reset_name(got), mxq_redfish_reset_name(picks[_i].want));
	else
		ck_assert_msg(err[0], "row %d: no reason", _i);
}
END_TEST

START_TEST(pick_reset_names_offer)
{
	struct mxq_redfish_system s = { .reset_listed = true, .reset_allowed = A(ON) | A(FORCE_OFF) };
	enum mxq_redfish_reset got;
	char err[256];

	strcpy(s.reset_target, "/x");
	ck_assert_int_eq(mxq_redfish_pick_reset(&s, MXQ_REDFISH_ACTION_SOFT_OFF, &got, err, sizeof(err)),
			 -EOPNOTSUPP);
	ck_assert_ptr_nonnull(strstr(err, "graceful shutdown"));
	ck_assert_ptr_nonnull(strstr(err, "listed: On ForceOff)"));
}
END_TEST

static const struct {
	const char *body;
	int rc;
	double watts;
} env_watts[] = {
	{ "{\"PowerWatts\": {\"DataSourceUri\": \"/redfish/v1/Chassis/1/Sensors/TotalPower\", "
	  "\"Reading\": 231.5}}", 0, 231.5 },
	{ "{\"PowerWatts\": {\"Reading\": 0}}", 0, 0 },
	{ "{\"PowerWatts\": {\"Reading\": null}}", -ENODATA, 0 },
	{ "{\"PowerWatts\": {\"Reading\": -40}}", -ENODATA, 0 },       /* a broken sensor */
	{ "{\"PowerWatts\": {\"Reading\": -0.5}}", -ENODATA, 0 },
	{ "{\"PowerWatts\": {\"Reading\": 1.7e308}}", -ENODATA, 0 },  /* its energy overflows */
	{ "{\"PowerWatts\": {\"Reading\": 1000000}}", 0, 1e6 },
	{ "{\"TemperatureCelsius\": {\"Reading\": 31}}", -ENODATA, 0 },
	{ "{\"PowerWatts\": {\"Reading\": \"231\"}}", -EPROTO, 0 },
	{ "nonsense", -EPROTO, 0 },
};

START_TEST(environment_watts)
{
	double w = -1;
	char err[256] = "";
	int r = mxq_redfish_parse_environment_watts(env_watts[_i].body, &w, err, sizeof(err));

	ck_assert_msg(r == env_watts[_i].rc, "row %d: rc %d (%s)", _i, r, err);
	if (r == 0)
		ck_assert_double_eq(w, env_watts[_i].watts);
	else
		ck_assert_msg(err[0], "row %d: no reason", _i);
}
END_TEST

static const struct {
	const char *body;
	int rc;
	double watts;
} power_watts[] = {
	{ "{\"PowerControl\": [{\"MemberId\": \"0\", \"PowerConsumedWatts\": 344, "
	  "\"PowerMetrics\": {\"AverageConsumedWatts\": 300}}]}", 0, 344 },
	{ "{\"PowerControl\": [{\"MemberId\": \"0\", \"PowerConsumedWatts\": null}, "
	  "{\"MemberId\": \"1\", \"PowerConsumedWatts\": 87.25}]}", 0, 87.25 },
	{ "{\"PowerControl\": []}", -ENODATA, 0 },
	{ "{\"PowerControl\": [{\"PowerConsumedWatts\": -1}]}", -ENODATA, 0 },
	{ "{\"PowerControl\": [{\"PowerConsumedWatts\": -1}, {\"PowerConsumedWatts\": 90}]}", 0, 90 },
	{ "{\"PowerControl\": [{\"PowerConsumedWatts\": 1e9}]}", -ENODATA, 0 },
	{ "{\"PowerSupplies\": [{\"PowerInputWatts\": 100}]}", -ENODATA, 0 },
	{ "{\"PowerControl\": [{\"PowerConsumedWatts\": \"344\"}]}", -ENODATA, 0 },
	{ "", -EPROTO, 0 },
};

START_TEST(power_control_watts)
{
	double w = -1;
	char err[256] = "";
	int r = mxq_redfish_parse_power_watts(power_watts[_i].body, &w, err, sizeof(err));

	ck_assert_msg(r == power_watts[_i].rc, "row %d: rc %d (%s)", _i, r, err);
	if (r == 0)
		ck_assert_double_eq(w, power_watts[_i].watts);
	else
		ck_assert_msg(err[0], "row %d: no reason", _i);
}
END_TEST

static const struct {
	const char *body;
	const char *want;
} errors[] = {
	{ "{\"error\": {\"code\": \"Base.1.8.GeneralError\", \"message\": \"A general error has "
	  "occurred. See ExtendedInfo for more information.\", \"@Message.ExtendedInfo\": [{"
	  "\"MessageId\": \"Base.1.8.ActionParameterValueNotInList\", \"Message\": \"The value "
	  "Bogus for the parameter ResetType is not in the list of acceptable values.\"}]}}",
	  "The value Bogus for the parameter ResetType is not in the list of acceptable values." },
	{ "{\"error\": {\"code\": \"Base.1.8.GeneralError\", \"message\": \"general\", "
	  "\"@Message.ExtendedInfo\": [{\"Message\": \"first\"}, {\"MessageId\": \"x\"}, "
	  "{\"Message\": \"second\"}]}}", "first; second" },
	{ "{\"error\": {\"code\": \"Base.1.8.GeneralError\", \"message\": \"only the message\"}}",
	  "only the message" },
	{ "{\"error\": {\"code\": \"x\", \"@Message.ExtendedInfo\": []}}", "" },
	{ "{\"PowerState\": \"On\"}", "" },
	{ "<html>500</html>", "" },
	{ NULL, "" },
};

START_TEST(error_message)
{
	char buf[512] = "unchanged";

	mxq_redfish_error_message(errors[_i].body, buf, sizeof(buf));
	ck_assert_str_eq(buf, errors[_i].want);
}
END_TEST

START_TEST(error_message_truncated)
{
	char buf[8];

	mxq_redfish_error_message(errors[1].body, buf, sizeof(buf));
	ck_assert_str_eq(buf, "first; ");
}
END_TEST

START_TEST(links_and_members)
{
	const char *root = "{\"@odata.id\": \"/redfish/v1\", \"Systems\": {\"@odata.id\": "
			   "\"/redfish/v1/Systems\"}, \"Chassis\": {}}";
	const char *coll = "{\"Members@odata.count\": 2, \"Members\": [{\"@odata.id\": "
			   "\"/redfish/v1/Systems/a\"}, {\"@odata.id\": \"/redfish/v1/Systems/b\"}]}";
	char buf[64], tiny[8];

	ck_assert_int_eq(mxq_redfish_link(root, "Systems", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/redfish/v1/Systems");
	ck_assert_int_eq(mxq_redfish_link(root, "Chassis", buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(mxq_redfish_link(root, "SessionService", buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(mxq_redfish_link(root, "Systems", tiny, sizeof(tiny)), -ENAMETOOLONG);
	ck_assert_int_eq(mxq_redfish_link("x", "Systems", buf, sizeof(buf)), -EPROTO);
	ck_assert_int_eq(mxq_redfish_member(coll, 0, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/redfish/v1/Systems/a");
	ck_assert_int_eq(mxq_redfish_member(coll, 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/redfish/v1/Systems/b");
	ck_assert_int_eq(mxq_redfish_member(coll, 2, buf, sizeof(buf)), -ENOENT);
	ck_assert_int_eq(mxq_redfish_member(root, 0, buf, sizeof(buf)), -EPROTO);
	ck_assert_int_eq(mxq_redfish_member("{\"Members\": [{}]}", 0, buf, sizeof(buf)), -EPROTO);
}
END_TEST

/* Paths a BMC answer names are appended to https://BMC: anything but an
 * absolute path there would move the request, with the credentials, to
 * another host or port ("https://BMC" "@other:443/..."). */
static const char *const foreign_paths[] = {
	"@127.0.0.1:8443/redfish/v1/Systems",
	".attacker.example/redfish/v1/Systems",
	":8443/redfish/v1/Systems",
	"redfish/v1/Systems",
	"",
	"/redfish/v1/Sys tems",
	"/redfish/v1/Systems\\r\\nX-Injected: 1",  /* JSON escapes: CR LF */
};

START_TEST(foreign_path_refused)
{
	char root[256], coll[256], sys[256], buf[128];
	struct mxq_redfish_system s;
	char err[256] = "";

	snprintf(root, sizeof(root), "{\"Systems\": {\"@odata.id\": \"%s\"}}", foreign_paths[_i]);
	snprintf(coll, sizeof(coll), "{\"Members\": [{\"@odata.id\": \"%s\"}]}", foreign_paths[_i]);
	snprintf(sys, sizeof(sys), "{\"PowerState\": \"On\", \"Links\": {\"Chassis\": "
		 "[{\"@odata.id\": \"%s\"}]}}", foreign_paths[_i]);
	ck_assert_int_eq(mxq_redfish_link(root, "Systems", buf, sizeof(buf)), -EPROTO);
	ck_assert_int_eq(mxq_redfish_member(coll, 0, buf, sizeof(buf)), -EPROTO);
	ck_assert_int_eq(mxq_redfish_parse_system(sys, &s, err, sizeof(err)), 0);
	ck_assert_str_eq(s.chassis, "");
}
END_TEST

static const struct {
	const char *key, *value;
	int rc;
} settings[] = {
	{ "redfish_system", "", 0 },
	{ "redfish_system", "/redfish/v1/Systems/System.Embedded.1", 0 },
	{ "redfish_system", "/redfish/v1/Systems/", -EINVAL },
	{ "redfish_system", "/redfish/v1/Chassis/1", -EINVAL },
	{ "redfish_system", "Systems/1", -EINVAL },
	{ "redfish_system", "/redfish/v1/Systems/1?x=1", -EINVAL },
	{ "redfish_ca", "", 0 },
	{ "redfish_ca", "/etc/mxq/bmc-ca.pem", 0 },
	{ "redfish_ca", "bmc-ca.pem", -EINVAL },
	{ "redfish_tls", "verify", 0 },
	{ "redfish_tls", "insecure", 0 },
	{ "redfish_tls", "off", -EINVAL },
	{ "redfish_tls", "", -EINVAL },
	{ "redfish_auth", "session", 0 },
	{ "redfish_auth", "basic", 0 },
	{ "redfish_auth", "digest", -EINVAL },
	{ "bmc", "127.0.0.1", -ENOENT },
};

START_TEST(setting_check)
{
	char err[256] = "";
	int r = mxq_redfish_setting_check(settings[_i].key, settings[_i].value, err, sizeof(err));

	ck_assert_msg(r == settings[_i].rc, "row %d (%s=%s): rc %d", _i, settings[_i].key,
		      settings[_i].value, r);
	if (r == -EINVAL)
		ck_assert_ptr_nonnull(strstr(err, settings[_i].key));
}
END_TEST

#define N(a) (int)(sizeof(a) / sizeof(a[0]))

int main(void)
{
	Suite *s = suite_create("redfish");
	TCase *tc = tcase_create("redfish");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, parse_system, 0, N(systems));
	tcase_add_loop_test(tc, pick_reset, 0, N(picks));
	tcase_add_test(tc, pick_reset_names_offer);
	tcase_add_loop_test(tc, environment_watts, 0, N(env_watts));
	tcase_add_loop_test(tc, power_control_watts, 0, N(power_watts));
	tcase_add_loop_test(tc, error_message, 0, N(errors));
	tcase_add_test(tc, error_message_truncated);
	tcase_add_test(tc, links_and_members);
	tcase_add_loop_test(tc, foreign_path_refused, 0, N(foreign_paths));
	tcase_add_loop_test(tc, setting_check, 0, N(settings));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
