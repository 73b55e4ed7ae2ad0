/*
 * test_mx_db - the database server list of a defaults file (mx_db.c):
 * "host=H1[:P1],H2[:P2],..." as a Galera site writes it. No database: the
 * parser only, table-driven.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mx_db.h"

static const struct {
	const char *value;
	int rc;
	size_t n;
	const char *hosts[4];
	unsigned ports[4];
	const char *error;      /* part of the message on failure */
} cases[] = {
	{ "db1", 0, 1, { "db1" }, { 3306 }, NULL },
	{ "db1:3307", 0, 1, { "db1" }, { 3307 }, NULL },
	{ "db1,db2:3310, db3 ", 0, 3, { "db1", "db2", "db3" }, { 3306, 3310, 3306 }, NULL },
	{ "127.0.0.1:20001,127.0.0.1:20002", 0, 2, { "127.0.0.1", "127.0.0.1" },
	  { 20001, 20002 }, NULL },
	{ "'db1,db2'", 0, 2, { "'db1", "db2'" }, { 3306, 3306 }, NULL },
	{ "db1,,db2", -EINVAL, 0, { NULL }, { 0 }, "empty entry" },
	{ "db1:0", -EINVAL, 0, { NULL }, { 0 }, "bad port" },
	{ "db1:65536", -EINVAL, 0, { NULL }, { 0 }, "bad port" },
	{ "db1:33x", -EINVAL, 0, { NULL }, { 0 }, "bad port" },
	{ ":3306", -EINVAL, 0, { NULL }, { 0 }, "missing host" },
	{ "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", -E2BIG, 0, { NULL }, { 0 }, "more than 16" },
};

START_TEST(host_lists)
{
	struct mx_db_hosts h = { .n = 99 };
	char err[256] = "";
	int r = mx_db_hosts_parse(&h, cases[_i].value, 3306, err, sizeof(err));

	ck_assert_msg(r == cases[_i].rc, "'%s': rc %d, want %d (%s)", cases[_i].value, r,
		      cases[_i].rc, err);
	if (r < 0) {
		ck_assert_uint_eq(h.n, 99);  /* untouched on failure */
		ck_assert_msg(strstr(err, cases[_i].error), "'%s': message '%s' lacks '%s'",
			      cases[_i].value, err, cases[_i].error);
		return;
	}
	ck_assert_uint_eq(h.n, cases[_i].n);
	for (size_t k = 0; k < h.n; k++) {
		ck_assert_str_eq(h.host[k], cases[_i].hosts[k]);
		ck_assert_uint_eq(h.port[k], cases[_i].ports[k]);
	}
	mx_db_hosts_free(&h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mx_db");
	TCase *tc = tcase_create("hosts");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, host_lists, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
