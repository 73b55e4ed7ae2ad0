/*
 * test_json - unit tests for the JSON writer (mxq_json.c): the decimals of
 * every unit suffix, rounding of values with binary noise, a document's
 * reals rounded by their keys (nested objects, arrays),
 * times as RFC 3339 plus the epoch, texts that are not set as null.
 */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxq_json.h"

START_TEST(test_decimals)
{
	static const struct { const char *key; int decimals; } cases[] = {
		{ "date_start_unix", 3 }, { "cpu_s", 3 }, { "runtime_sec", 3 },
		{ "timeout_seconds", 3 }, { "avg_watts", 2 }, { "watts", 2 },
		{ "idle_w", 2 }, { "energy_j", 1 }, { "boot_energy_joules", 1 },
		{ "peak_memory_mb", 1 }, { "energy_kwh", 4 }, { "coverage", 6 },
		{ "scale", 6 }, { "", 6 }, { NULL, 6 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(mxq_json_decimals(cases[i].key) == cases[i].decimals,
			      "key %s: %d decimals, want %d", cases[i].key ? cases[i].key : "(null)",
			      mxq_json_decimals(cases[i].key), cases[i].decimals);
}
END_TEST

START_TEST(test_round_value)
{
	static const struct { double v; int decimals; double want; } cases[] = {
		{ 560.21000000000004, 2, 560.21 },
		{ 0.1 + 0.2, 6, 0.3 },
		{ 1234.5678, 1, 1234.6 },
		{ -1234.5678, 1, -1234.6 },
		{ 1764590000.12345, 3, 1764590000.123 },
		{ 0.000001, 6, 0.000001 },
		{ 0.0000004, 6, 0 },
		{ 1e300, 6, 1e300 },      /* too large to scale: unchanged */
		{ 2.5, 0, 3 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(mxq_json_round_value(cases[i].v, cases[i].decimals) == cases[i].want,
			      "case %zu: %.17g to %d decimals gave %.17g", i, cases[i].v,
			      cases[i].decimals, mxq_json_round_value(cases[i].v, cases[i].decimals));
	ck_assert(isnan(mxq_json_round_value(NAN, 2)));
	ck_assert(isinf(mxq_json_round_value(INFINITY, 2)));
}
END_TEST

START_TEST(test_document)
{
	json_t *doc = json_pack("{s:f, s:f, s:f, s:I, s:{s:f, s:f}, s:[f, f]}",
				"energy_j", 123456.78901, "avg_watts", 560.21000000000004,
				"cpu_s", 1.23456789, "samples", (json_int_t)42,
				"host", "peak_watts", 99.999, "coverage", 0.123456789,
				"points", 1764590000.5, 0.30000000000000004);
	char *text;

	ck_assert_ptr_nonnull(doc);
	text = mxq_json_dumps(doc);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text,
		"{\n"
		"  \"energy_j\": 123456.8,\n"
		"  \"avg_watts\": 560.21,\n"
		"  \"cpu_s\": 1.235,\n"
		"  \"samples\": 42,\n"
		"  \"host\": {\n"
		"    \"peak_watts\": 100.0,\n"
		"    \"coverage\": 0.123457\n"
		"  },\n"
		"  \"points\": [\n"
		"    1764590000.5,\n"
		"    0.3\n"
		"  ]\n"
		"}");
	free(text);
	json_decref(doc);
	ck_assert_ptr_null(mxq_json_dumps(NULL));
}
END_TEST

START_TEST(test_time)
{
	json_t *o = json_object();
	char *text;

	setenv("TZ", "UTC", 1);
	tzset();
	ck_assert_int_eq(mxq_json_set_time(o, "date_start", 1764585000.1234), 0);
	ck_assert_int_eq(mxq_json_set_time(o, "date_end", 0), 0);
	text = mxq_json_dumps(o);
	ck_assert_str_eq(text,
		"{\n"
		"  \"date_start\": \"2025-12-01T10:30:00+00:00\",\n"
		"  \"date_start_unix\": 1764585000.123,\n"
		"  \"date_end\": null,\n"
		"  \"date_end_unix\": null\n"
		"}");
	free(text);
	json_decref(o);
}
END_TEST

START_TEST(test_text)
{
	json_t *a = mxq_json_text("x"), *b = mxq_json_text(""), *c = mxq_json_text(NULL);

	ck_assert_str_eq(json_string_value(a), "x");
	ck_assert(json_is_null(b));
	ck_assert(json_is_null(c));
	json_decref(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mxq_json");
	TCase *tc = tcase_create("json");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_decimals);
	tcase_add_test(tc, test_round_value);
	tcase_add_test(tc, test_document);
	tcase_add_test(tc, test_time);
	tcase_add_test(tc, test_text);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
