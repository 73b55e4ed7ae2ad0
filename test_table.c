/*
 * test_table - unit tests for the table printer (mxq_table.c): column
 * widths from the content, right alignment, escaping of control
 * characters, UTF-8 widths, rows with the wrong number of cells.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxq_table.h"

/* The printed table as a malloc'ed string. */
static char *printed(const struct mxq_table *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(mxq_table_print(t, f), 0);
	fclose(f);
	return buf;
}

START_TEST(test_widths)
{
	struct mxq_table *t = mxq_table_new("HOST|JOBS>|REASON");
	char *out;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(mxq_table_addf(t, "%s" MXQ_TABLE_SEP "%d" MXQ_TABLE_SEP "%s",
					 "a-very-long-host-name.example.org", 3, "idle"), 0);
	ck_assert_int_eq(mxq_table_addf(t, "n1" MXQ_TABLE_SEP "12" MXQ_TABLE_SEP ""), 0);
	ck_assert_uint_eq(mxq_table_rows(t), 2);
	out = printed(t);
	ck_assert_str_eq(out,
		"HOST                               JOBS  REASON\n"
		"a-very-long-host-name.example.org     3  idle\n"
		"n1                                   12\n");   /* no trailing blanks */
	free(out);
	mxq_table_free(t);
}
END_TEST

START_TEST(test_escaping)
{
	struct mxq_table *t = mxq_table_new("HOST|STATE");
	char *out;

	ck_assert_int_eq(mxq_table_addf(t, "evil\033[2J\nx" MXQ_TABLE_SEP "ON"), 0);
	ck_assert_int_eq(mxq_table_addf(t, "n\xc3\xa4" MXQ_TABLE_SEP "OFF"), 0);	/* "nä": 2 columns */
	/* C1 CSI (U+009B) and a byte that is not UTF-8 */
	ck_assert_int_eq(mxq_table_addf(t, "c1\xc2\x9b" "2J\xff" MXQ_TABLE_SEP "\t"), 0);
	out = printed(t);
	ck_assert_str_eq(out,
		"HOST              STATE\n"
		"evil\\x1b[2J\\x0ax  ON\n"
		"n\xc3\xa4                OFF\n"
		"c1\\xc2\\x9b2J\\xff  \\x09\n");
	ck_assert_ptr_null(strchr(out, '\033'));
	free(out);
	mxq_table_free(t);
}
END_TEST

START_TEST(test_bad_rows)
{
	struct mxq_table *t = mxq_table_new("A|B");

	ck_assert_int_eq(mxq_table_addf(t, "only one"), -EINVAL);
	ck_assert_int_eq(mxq_table_addf(t, "1" MXQ_TABLE_SEP "2" MXQ_TABLE_SEP "3"), -EINVAL);
	ck_assert_uint_eq(mxq_table_rows(t), 0);
	for (int i = 0; i < 100; i++)	/* grows past the first allocation */
		ck_assert_int_eq(mxq_table_addf(t, "%d" MXQ_TABLE_SEP "x", i), 0);
	ck_assert_uint_eq(mxq_table_rows(t), 100);
	mxq_table_free(t);
	mxq_table_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mxq_table");
	TCase *tc = tcase_create("table");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_widths);
	tcase_add_test(tc, test_escaping);
	tcase_add_test(tc, test_bad_rows);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
