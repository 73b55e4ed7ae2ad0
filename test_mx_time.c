/*
 * test_mx_time - unit tests for the one time-argument parser (mx_time.c):
 * a table of accepted and refused forms, with zones, evaluated at a fixed
 * NOW and in a fixed TZ so the results are exact; the RFC 3339 printer.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mx_time.h"
#include "mx_util.h"

#define NOW 1764581400.0	/* 2025-12-01T09:30:00Z */

static const struct {
	const char *s;
	int ret;
	double epoch;
} cases[] = {
	{ "now", 0, NOW },
	{ "@0", 0, 0 },
	{ "@1764581400", 0, 1764581400 },
	{ "@1764581400.25", 0, 1764581400.25 },
	{ "30m", 0, NOW - 1800 },
	{ "-30m", 0, NOW - 1800 },
	{ "1h30m", 0, NOW - 5400 },
	{ "2d", 0, NOW - 172800 },
	{ "1w", 0, NOW - 604800 },
	{ "90s", 0, NOW - 90 },
	{ "1.5h", 0, NOW - 5400 },
	{ "2025-12-01T09:30:00Z", 0, 1764581400 },
	{ "2025-12-01 09:30:00 UTC", 0, 1764581400 },
	{ "2025-12-01 10:30+01:00", 0, 1764581400 },
	{ "2025-12-01T04:30:00-0500", 0, 1764581400 },
	{ "2025-12-01Z", 0, 1764547200 },
	{ "2024-02-29T00:00:00Z", 0, 1709164800 },
	/* local time: TZ is set to CET (UTC+1 in December) by the test */
	{ "2025-12-01 10:30", 0, 1764581400 },
	{ "2025-12-01 10:30:00", 0, 1764581400 },
	{ "2025-12-01", 0, 1764543600 },
	/* refused */
	{ "", -EINVAL, 0 },
	{ "90", -EINVAL, 0 },		/* bare number: unit required */
	{ "-90", -EINVAL, 0 },
	{ "yesterday", -EINVAL, 0 },
	{ "@", -EINVAL, 0 },
	{ "@-5", -EINVAL, 0 },
	{ "@12x", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 },
	{ "2025-13-01", -EINVAL, 0 },
	{ "2025-02-29", -EINVAL, 0 },
	{ "2025-12-01 25:00", -EINVAL, 0 },
	{ "2025-12-01 10:3", -EINVAL, 0 },
	{ "2025-12-01T10:30+1", -EINVAL, 0 },
	{ "2025-12-01 10:30 CEST", -EINVAL, 0 },
	{ "2025-12-1", -EINVAL, 0 },
};

START_TEST(test_parse)
{
	double v = -1;
	int r = mx_time_parse(cases[_i].s, NOW, &v);

	ck_assert_msg(r == cases[_i].ret, "'%s': got %d, want %d", cases[_i].s, r, cases[_i].ret);
	if (r == 0)
		ck_assert_msg(v == cases[_i].epoch, "'%s': got %.3f, want %.3f", cases[_i].s, v,
			      cases[_i].epoch);
	else
		ck_assert_msg(v == -1, "'%s': output touched on failure", cases[_i].s);
}
END_TEST

START_TEST(test_format)
{
	char buf[32];

	mx_time_format_rfc3339(1764581400, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2025-12-01T10:30:00+01:00");
	mx_time_format_rfc3339(1751362200, buf, sizeof(buf));	/* summer: +02:00 */
	ck_assert_str_eq(buf, "2025-07-01T11:30:00+02:00");
	mx_time_format_rfc3339(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "-");
}
END_TEST

START_TEST(test_round_trip)
{
	char buf[32];
	double v;

	/* what the tools print, they accept */
	mx_time_format_rfc3339(1764581400, buf, sizeof(buf));
	ck_assert_int_eq(mx_time_parse(buf, NOW, &v), 0);
	ck_assert(v == 1764581400);
}
END_TEST

START_TEST(test_duration)
{
	uint64_t s;

	ck_assert_int_eq(mx_parse_duration_s("90", &s), 0);	/* bare number: seconds */
	ck_assert_uint_eq(s, 90);
	ck_assert_int_eq(mx_parse_duration_s("1h30m", &s), 0);
	ck_assert_uint_eq(s, 5400);
	ck_assert_int_eq(mx_parse_duration_s("1.5s", &s), 0);	/* rounded up */
	ck_assert_uint_eq(s, 2);
	ck_assert_int_eq(mx_parse_duration_s("1M", &s), -EINVAL);
	ck_assert_int_eq(mx_parse_duration_s("", &s), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mx_time");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	tcase_add_loop_test(tc, test_parse, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_duration);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
