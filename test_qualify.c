/*
 * test_qualify - unit tests for server_is_qualified() and the constructors
 * of mxqd_control.c: every rule on its own, its boundaries, and which rule
 * is reported when several fail.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mxqd_control.h"

/* A server and a group that fit each other; tests change one field. */
#define HOST "node-1.example.org"

struct server_spec {
	const char *hostname, *tags, *prereq;
	uint32_t slots;
	uint64_t memory_mib, maxtime_min;
	uint32_t gpus;
	uint64_t tmpdir_total_mib;
};

struct group_spec {
	const char *tags, *prereq, *whitelist, *blacklist;
	uint32_t threads;
	uint64_t memory_mib, time_min;
	uint32_t gpus;
	uint64_t tmpdir_mib;
};

static const struct server_spec base_server = {
	.hostname = HOST, .tags = "gpu-node avx2", .prereq = NULL,
	.slots = 16, .memory_mib = 65536, .maxtime_min = 1440,
	.gpus = 2, .tmpdir_total_mib = 100000,
};

static const struct group_spec base_group = {
	.tags = "project-x", .prereq = NULL, .whitelist = NULL, .blacklist = NULL,
	.threads = 4, .memory_mib = 8192, .time_min = 60, .gpus = 0, .tmpdir_mib = 0,
};

static void make_server(struct mxq_server_caps *caps, const struct server_spec *s)
{
	char err[256];

	ck_assert_int_eq(mxq_server_caps_init(caps, s->hostname, s->tags, s->prereq, s->slots,
					      s->memory_mib, s->maxtime_min, s->gpus,
					      s->tmpdir_total_mib, err, sizeof(err)), 0);
}

static void make_group(struct mxq_group_reqs *reqs, const struct group_spec *g)
{
	ck_assert_int_eq(mxq_group_reqs_init(reqs, g->tags, g->prereq, g->whitelist, g->blacklist,
					     g->threads, g->memory_mib, g->time_min, g->gpus,
					     g->tmpdir_mib), 0);
}

/* The rule server_is_qualified() reports for S and G. */
static enum mxq_qual_rule check(const struct server_spec *s, const struct group_spec *g)
{
	struct mxq_server_caps caps;
	struct mxq_group_reqs reqs;
	enum mxq_qual_rule rule = _MXQ_QUAL_MAX;
	bool ok;

	make_server(&caps, s);
	make_group(&reqs, g);
	ok = server_is_qualified(&caps, &reqs, &rule);
	ck_assert(ok == (rule == MXQ_QUAL_OK));
	ck_assert(server_is_qualified(&caps, &reqs, NULL) == ok);
	mxq_group_reqs_done(&reqs);
	mxq_server_caps_done(&caps);
	return rule;
}

#define ck_assert_rule(s, g, expected) do {						\
	enum mxq_qual_rule _got = check(s, g);						\
	ck_assert_msg(_got == (expected), "rule %s, expected %s",			\
		      mxq_qual_rule_to_string(_got), mxq_qual_rule_to_string(expected)); \
} while (0)

START_TEST(test_base_fits)
{
	ck_assert_rule(&base_server, &base_group, MXQ_QUAL_OK);
}
END_TEST

START_TEST(test_whitelist)
{
	struct group_spec g = base_group;

	g.whitelist = "";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.whitelist = HOST;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.whitelist = "node-1";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.whitelist = "node-0 node-1 node-2";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.whitelist = "node-2";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_WHITELIST);
	g.whitelist = "node";		/* no prefix matching */
	ck_assert_rule(&base_server, &g, MXQ_QUAL_WHITELIST);
	g.whitelist = "node-1.example";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_WHITELIST);
	g.whitelist = "gpu-node";	/* a tag is not a host name */
	ck_assert_rule(&base_server, &g, MXQ_QUAL_WHITELIST);
	g.whitelist = "true";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_WHITELIST);
}
END_TEST

START_TEST(test_blacklist)
{
	struct group_spec g = base_group;

	g.blacklist = "";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.blacklist = HOST;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_BLACKLIST);
	g.blacklist = "node-2 node-1";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_BLACKLIST);
	g.blacklist = "node-2 node-10";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.blacklist = "gpu-node";
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	/* listed on both: the whitelist passes, the blacklist still refuses */
	g.whitelist = "node-1";
	g.blacklist = HOST;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_BLACKLIST);
}
END_TEST

START_TEST(test_group_prerequisites)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	/* evaluated on the server's tags, implicit words included */
	g.prereq = "gpu-node & avx2";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.prereq = "gpu-node & !avx2";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = "true";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.prereq = "!true";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = HOST;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.prereq = "node-1";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.prereq = "!node-1";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = "node-2 | node-3";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	/* the group's own tags do not count */
	g.prereq = "project-x";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	/* blank means no prerequisites */
	g.prereq = "  ";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.prereq = "";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	/* text that does not parse never qualifies, whatever it mentions */
	g.prereq = "gpu-node |";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = "(true";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	/* server tags from the configured list */
	s.tags = NULL;
	g.prereq = "avx2";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = "true & node-1";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
}
END_TEST

START_TEST(test_server_prerequisites)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	/* evaluated on the group's tags */
	s.prereq = "project-x";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.prereq = "project-y | project-x & !test";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.prereq = "project-y";
	ck_assert_rule(&s, &g, MXQ_QUAL_SERVER_PREREQUISITES);
	/* not on the server's own tags */
	s.prereq = "gpu-node";
	ck_assert_rule(&s, &g, MXQ_QUAL_SERVER_PREREQUISITES);
	g.tags = "gpu-node";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	/* group tags are exactly what was given: no implicit "true" */
	g.tags = NULL;
	s.prereq = "true";
	ck_assert_rule(&s, &g, MXQ_QUAL_SERVER_PREREQUISITES);
	s.prereq = "!project-x";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.prereq = " \t";
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
}
END_TEST

START_TEST(test_server_prerequisites_invalid)
{
	struct mxq_server_caps caps;
	struct mxq_group_reqs reqs;
	enum mxq_qual_rule rule;
	char err[256] = "";

	ck_assert_int_eq(mxq_server_caps_init(&caps, HOST, "a", "a &", 16, 1024, 0, 0, 0,
					      err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "at position 4: expected identifier, '!' or '(' but found end of input");
	/* filled anyway, and refuses everything */
	ck_assert(caps.prerequisites_invalid);
	ck_assert_ptr_null(caps.prerequisites);
	ck_assert_str_eq(caps.hostname, HOST);
	ck_assert_uint_eq(caps.slots, 16);
	ck_assert(keywordset_contains(caps.tags, "a"));
	ck_assert_int_eq(mxq_group_reqs_init(&reqs, "a", NULL, NULL, NULL, 1, 1, 1, 0, 0), 0);
	ck_assert(!server_is_qualified(&caps, &reqs, &rule));
	ck_assert_int_eq(rule, MXQ_QUAL_SERVER_PREREQUISITES);
	mxq_group_reqs_done(&reqs);
	mxq_server_caps_done(&caps);
}
END_TEST

START_TEST(test_gpu)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	s.gpus = 0;
	g.gpus = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.gpus = 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_GPU);
	s.gpus = 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.gpus = 2;
	ck_assert_rule(&s, &g, MXQ_QUAL_GPU);
	s.gpus = 2;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.gpus = 8;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.gpus = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
}
END_TEST

START_TEST(test_threads)
{
	struct group_spec g = base_group;

	g.threads = base_server.slots;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.threads = base_server.slots + 1;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_THREADS);
	g.threads = 0;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_OK);
	g.threads = UINT32_MAX;
	ck_assert_rule(&base_server, &g, MXQ_QUAL_THREADS);
}
END_TEST

START_TEST(test_memory)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	g.memory_mib = s.memory_mib;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.memory_mib = s.memory_mib + 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_MEMORY);
	g.memory_mib = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.memory_mib = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.memory_mib = 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_MEMORY);
}
END_TEST

START_TEST(test_runtime)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	g.time_min = s.maxtime_min;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.time_min = s.maxtime_min + 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_RUNTIME);
	g.time_min = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	/* maxtime 0 = unlimited */
	s.maxtime_min = 0;
	g.time_min = UINT64_MAX;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	s.maxtime_min = 1;
	g.time_min = 2;
	ck_assert_rule(&s, &g, MXQ_QUAL_RUNTIME);
}
END_TEST

START_TEST(test_tmpdir)
{
	struct group_spec g = base_group;
	struct server_spec s = base_server;

	g.tmpdir_mib = s.tmpdir_total_mib;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	g.tmpdir_mib = s.tmpdir_total_mib + 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_TMPDIR);
	g.tmpdir_mib = 1;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
	/* unknown tmpdir size: only groups that need none */
	s.tmpdir_total_mib = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_TMPDIR);
	g.tmpdir_mib = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
}
END_TEST

/*
 * A group that breaks every rule; repairing the rules one at a time in
 * enum order must move the reported rule to the next one each time.
 */
START_TEST(test_rule_order)
{
	struct server_spec s = base_server;
	struct group_spec g = {
		.tags = "other", .prereq = "!gpu-node", .whitelist = "node-9",
		.blacklist = "node-1", .threads = 17, .memory_mib = 65537,
		.time_min = 1441, .gpus = 3, .tmpdir_mib = 100001,
	};

	s.prereq = "project-x";
	ck_assert_rule(&s, &g, MXQ_QUAL_WHITELIST);
	g.whitelist = NULL;
	ck_assert_rule(&s, &g, MXQ_QUAL_BLACKLIST);
	g.blacklist = "node-2";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	g.prereq = "gpu-node";
	ck_assert_rule(&s, &g, MXQ_QUAL_SERVER_PREREQUISITES);
	g.tags = "project-x";
	ck_assert_rule(&s, &g, MXQ_QUAL_GPU);
	g.gpus = 2;
	ck_assert_rule(&s, &g, MXQ_QUAL_THREADS);
	g.threads = 16;
	ck_assert_rule(&s, &g, MXQ_QUAL_MEMORY);
	g.memory_mib = 65536;
	ck_assert_rule(&s, &g, MXQ_QUAL_RUNTIME);
	g.time_min = 1440;
	ck_assert_rule(&s, &g, MXQ_QUAL_TMPDIR);
	g.tmpdir_mib = 100000;
	ck_assert_rule(&s, &g, MXQ_QUAL_OK);
}
END_TEST

/* Each rule alone fails with exactly its own name, whatever comes later. */
START_TEST(test_single_failures)
{
	struct group_spec g;
	struct server_spec s;

	g = base_group; s = base_server; g.tmpdir_mib = 1; s.tmpdir_total_mib = 0;
	ck_assert_rule(&s, &g, MXQ_QUAL_TMPDIR);
	g = base_group; s = base_server; g.prereq = "(";
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	/* an invalid group prerequisite is reported before a failing memory rule */
	g.memory_mib = s.memory_mib * 2;
	ck_assert_rule(&s, &g, MXQ_QUAL_GROUP_PREREQUISITES);
	/* a GPU shortage is reported before thread and memory shortages */
	g = base_group; g.gpus = 5; g.threads = 99; g.memory_mib = UINT64_MAX;
	ck_assert_rule(&s, &g, MXQ_QUAL_GPU);
}
END_TEST

START_TEST(test_caps_init)
{
	struct mxq_server_caps caps;
	char err[64] = "x";

	ck_assert_int_eq(mxq_server_caps_init(&caps, HOST, " avx2\tgpu-node avx2 ", NULL, 8, 2048,
					      0, 1, 10, err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(caps.hostname, HOST);
	ck_assert_str_eq(caps.short_hostname, "node-1");
	ck_assert_ptr_null(caps.prerequisites);
	ck_assert(!caps.prerequisites_invalid);
	ck_assert_uint_eq(keywordset_count(caps.tags), 5);
	ck_assert(keywordset_contains(caps.tags, "true"));
	ck_assert(keywordset_contains(caps.tags, HOST));
	ck_assert(keywordset_contains(caps.tags, "node-1"));
	ck_assert(keywordset_contains(caps.tags, "avx2"));
	ck_assert(keywordset_contains(caps.tags, "gpu-node"));
	ck_assert_uint_eq(caps.slots, 8);
	ck_assert_uint_eq(caps.memory_mib, 2048);
	ck_assert_uint_eq(caps.maxtime_min, 0);
	ck_assert_uint_eq(caps.gpus, 1);
	ck_assert_uint_eq(caps.tmpdir_total_mib, 10);
	mxq_server_caps_done(&caps);
	ck_assert_ptr_null(caps.hostname);
	ck_assert_ptr_null(caps.tags);
	mxq_server_caps_done(&caps);	/* twice is harmless */
	mxq_server_caps_done(NULL);

	/* a host name without a domain is its own short name */
	ck_assert_int_eq(mxq_server_caps_init(&caps, "gpu7", NULL, "true", 1, 1, 1, 0, 0,
					      NULL, 0), 0);
	ck_assert_str_eq(caps.short_hostname, "gpu7");
	ck_assert_uint_eq(keywordset_count(caps.tags), 2);
	ck_assert_ptr_nonnull(caps.prerequisites);
	ck_assert_str_eq(mxq_expr_text(caps.prerequisites), "true");
	mxq_server_caps_done(&caps);

	/* no host name, no caps; the struct is untouched */
	memset(&caps, 0xa5, sizeof(caps));
	ck_assert_int_eq(mxq_server_caps_init(&caps, "", NULL, NULL, 1, 1, 1, 0, 0,
					      err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_server_caps_init(&caps, "a b", NULL, NULL, 1, 1, 1, 0, 0,
					      err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mxq_server_caps_init(&caps, NULL, NULL, NULL, 1, 1, 1, 0, 0,
					      err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "invalid host name");
	ck_assert_uint_eq(caps.slots, 0xa5a5a5a5u);
}
END_TEST

START_TEST(test_group_reqs_init)
{
	struct mxq_group_reqs reqs;

	ck_assert_int_eq(mxq_group_reqs_init(&reqs, "b a b", "a & (", "h1 h2", NULL,
					     2, 3, 4, 5, 6), 0);
	ck_assert(reqs.prerequisites_invalid);
	ck_assert_ptr_null(reqs.prerequisites);
	ck_assert_uint_eq(keywordset_count(reqs.tags), 2);
	ck_assert(!keywordset_contains(reqs.tags, "true"));
	ck_assert_uint_eq(keywordset_count(reqs.whitelist), 2);
	ck_assert(keywordset_is_empty(reqs.blacklist));
	ck_assert_uint_eq(reqs.threads, 2);
	ck_assert_uint_eq(reqs.memory_mib, 3);
	ck_assert_uint_eq(reqs.time_min, 4);
	ck_assert_uint_eq(reqs.gpus, 5);
	ck_assert_uint_eq(reqs.tmpdir_mib, 6);
	mxq_group_reqs_done(&reqs);
	ck_assert_ptr_null(reqs.tags);
	mxq_group_reqs_done(&reqs);
	mxq_group_reqs_done(NULL);

	ck_assert_int_eq(mxq_group_reqs_init(&reqs, NULL, "a|b", NULL, NULL, 0, 0, 0, 0, 0), 0);
	ck_assert(!reqs.prerequisites_invalid);
	ck_assert_str_eq(mxq_expr_text(reqs.prerequisites), "a|b");
	mxq_group_reqs_done(&reqs);
}
END_TEST

START_TEST(test_string_tables)
{
	static const char *const names[] = {
		"ok", "whitelist", "blacklist", "group-prerequisites", "server-prerequisites",
		"gpu", "threads", "memory", "runtime", "tmpdir",
	};

	ck_assert_uint_eq(sizeof(names) / sizeof(names[0]), _MXQ_QUAL_MAX);
	for (int r = 0; r < _MXQ_QUAL_MAX; r++) {
		const char *d = mxq_qual_rule_describe((enum mxq_qual_rule)r);

		ck_assert_str_eq(mxq_qual_rule_to_string((enum mxq_qual_rule)r), names[r]);
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_gt(strlen(d), 10);
		for (int q = 0; q < r; q++)
			ck_assert_str_ne(d, mxq_qual_rule_describe((enum mxq_qual_rule)q));
	}
	ck_assert_str_eq(mxq_qual_rule_describe(MXQ_QUAL_WHITELIST),
			 "host is not in the group's whitelist");
	ck_assert_ptr_null(mxq_qual_rule_to_string(_MXQ_QUAL_MAX));
	ck_assert_ptr_null(mxq_qual_rule_describe(_MXQ_QUAL_MAX));
	ck_assert_ptr_null(mxq_qual_rule_to_string((enum mxq_qual_rule)-1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qualify");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_base_fits);
	tcase_add_test(tc, test_whitelist);
	tcase_add_test(tc, test_blacklist);
	tcase_add_test(tc, test_group_prerequisites);
	tcase_add_test(tc, test_server_prerequisites);
	tcase_add_test(tc, test_server_prerequisites_invalid);
	tcase_add_test(tc, test_gpu);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_memory);
	tcase_add_test(tc, test_runtime);
	tcase_add_test(tc, test_tmpdir);
	tcase_add_test(tc, test_rule_order);
	tcase_add_test(tc, test_single_failures);
	tcase_add_test(tc, test_caps_init);
	tcase_add_test(tc, test_group_reqs_init);
	tcase_add_test(tc, test_string_tables);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
