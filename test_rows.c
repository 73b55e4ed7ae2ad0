/*
 * test_rows - the row mappers of the row layer: mxq_group_reqs_from_row(),
 * mxq_group_queued_from_row(), mxq_daemon_caps_from_row(),
 * mxq_job_from_row() and mxq_energy_db_job_from_row(), and which daemon
 * versions are upstream's (mxq_daemon_version_is_upstream()). No database: each
 * case is a row of text cells (NULL = SQL NULL) in a result built by
 * mx_db_result_from_text(), with the struct it must give. Covers NULL
 * columns, the unit conversions (tmpdir GiB -> MiB, bytes -> MiB), the
 * largest values the columns hold, and bad text (prerequisites, argv).
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keywordset.h"
#include "mx_db.h"
#include "mxq_daemon.h"
#include "mxq_energy_db.h"
#include "mxq_group.h"
#include "mxq_job.h"

#define MAX_COLS 32

/* A result holding the one row CELLS of NCOLS columns, positioned on it. */
static struct mx_db_result *one_row(unsigned ncols, const char *const *cells)
{
	struct mx_db_result *res = NULL;

	ck_assert_int_eq(mx_db_result_from_text(&res, ncols, 1, cells), 0);
	ck_assert(mx_db_next(res));
	return res;
}

/* Every word of the space-separated list WORDS is in SET, and SET has no
 * other words than those and EXTRA. */
static void assert_words(const struct keywordset *set, const char *words, size_t extra)
{
	struct keywordset *want = keywordset_new(words ? words : "");

	ck_assert_ptr_nonnull(want);
	for (size_t i = 0; i < keywordset_count(want); i++)
		ck_assert_msg(keywordset_contains(set, keywordset_word(want, i)), "missing word '%s'",
			      keywordset_word(want, i));
	ck_assert_uint_eq(keywordset_count(set), keywordset_count(want) + extra);
	keywordset_free(want);
}

/* ------------------------------------------------------------ mxq_group */

static const struct {
	const char *name;
	const char *cells[MXQ_GROUP_REQS_NCOLS];
	uint32_t threads;
	uint64_t memory_mib, time_min;
	uint32_t gpus;
	uint64_t tmpdir_mib;
	const char *tags, *whitelist, *blacklist;
	bool has_prereq, prereq_invalid;
} group_cases[] = {
	{ "typical", { "4", "8192", "60", "1", "10", "a b", "a & !c", "node1 node2", "node3" },
	  4, 8192, 60, 1, 10 * 1024, "a b", "node1 node2", "node3", true, false },
	{ "all NULL", { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
	  0, 0, 0, 0, 0, "", "", "", false, false },
	{ "empty texts", { "1", "1", "1", "0", "0", "", "", "", "" },
	  1, 1, 1, 0, 0, "", "", "", false, false },
	{ "bad prerequisites", { "1", "100", "10", "0", "0", "x", "a &", "", "" },
	  1, 100, 10, 0, 0, "x", "", "", false, true },
	{ "largest values", { "4294967295", "18446744073709551615", "4294967295", "4294967295",
			      "4294967295", NULL, NULL, NULL, NULL },
	  UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, 4294967295ULL * 1024,
	  "", "", "", false, false },
};

static void assert_reqs(const struct mxq_group_reqs *r, unsigned i)
{
	ck_assert_uint_eq(r->threads, group_cases[i].threads);
	ck_assert_uint_eq(r->memory_mib, group_cases[i].memory_mib);
	ck_assert_uint_eq(r->time_min, group_cases[i].time_min);
	ck_assert_uint_eq(r->gpus, group_cases[i].gpus);
	ck_assert_uint_eq(r->tmpdir_mib, group_cases[i].tmpdir_mib);
	assert_words(r->tags, group_cases[i].tags, 0);
	assert_words(r->whitelist, group_cases[i].whitelist, 0);
	assert_words(r->blacklist, group_cases[i].blacklist, 0);
	ck_assert_int_eq(r->prerequisites != NULL, group_cases[i].has_prereq);
	ck_assert_int_eq(r->prerequisites_invalid, group_cases[i].prereq_invalid);
}

START_TEST(group_reqs)
{
	/* two columns in front: the mapper starts where it is told */
	const char *cells[2 + MXQ_GROUP_REQS_NCOLS] = { "x", "y" };
	struct mx_db_result *res;
	struct mxq_group_reqs reqs;

	memcpy(cells + 2, group_cases[_i].cells, sizeof(group_cases[_i].cells));
	res = one_row(2 + MXQ_GROUP_REQS_NCOLS, cells);
	ck_assert_int_eq(mxq_group_reqs_from_row(&reqs, res, 2), 0);
	assert_reqs(&reqs, (unsigned)_i);
	mxq_group_reqs_done(&reqs);
	mx_db_result_free(res);
}
END_TEST

START_TEST(group_queued)
{
	static const char *const head[][6] = {
		{ "17", "1000", "5", "2", "30", "12" },
		{ "18446744073709551615", "4294967295", "127", NULL, NULL, NULL },
	};
	const char *cells[6 + MXQ_GROUP_REQS_NCOLS];
	struct mx_db_result *res;
	struct mxq_group_queued g;

	for (unsigned h = 0; h < 2; h++) {
		memcpy(cells, head[h], sizeof(head[h]));
		memcpy(cells + 6, group_cases[_i].cells, sizeof(group_cases[_i].cells));
		res = one_row(6 + MXQ_GROUP_REQS_NCOLS, cells);
		ck_assert_int_eq(mxq_group_queued_from_row(&g, res), 0);
		if (h == 0) {
			ck_assert_uint_eq(g.group_id, 17);
			ck_assert_uint_eq(g.uid, 1000);
			ck_assert_uint_eq(g.priority, 5);
			ck_assert_uint_eq(g.max_per_node, 2);
			ck_assert_uint_eq(g.jobs_inq, 30);
			ck_assert_uint_eq(g.user_slots_running, 12);
		} else {
			ck_assert_uint_eq(g.group_id, UINT64_MAX);
			ck_assert_uint_eq(g.uid, UINT32_MAX);
			ck_assert_uint_eq(g.priority, 127);
			/* NULL: no limit, nothing queued, nothing running */
			ck_assert_uint_eq(g.max_per_node, 0);
			ck_assert_uint_eq(g.jobs_inq, 0);
			ck_assert_uint_eq(g.user_slots_running, 0);
		}
		assert_reqs(&g.reqs, (unsigned)_i);
		mxq_group_reqs_done(&g.reqs);
		mx_db_result_free(res);
	}
}
END_TEST

/* ----------------------------------------------------------- mxq_daemon */

#define HOST "node-1.example.org"

static const struct {
	const char *name;
	const char *cells[MXQ_DAEMON_CAPS_NCOLS];
	int rc;
	const char *tags;           /* configured ones; the 3 implicit words come on top */
	bool has_prereq, prereq_invalid;
	uint32_t slots;
	uint64_t memory_mib, maxtime_min;
	uint32_t gpus;
	uint64_t tmpdir_mib;
} daemon_cases[] = {
	{ "typical", { "gpu avx2", "!bigmem", "16", "65536", "1440", "2", "107374182400" },
	  0, "gpu avx2", true, false, 16, 65536, 1440, 2, 100 * 1024 },
	{ "all NULL", { NULL, NULL, NULL, NULL, NULL, NULL, NULL },
	  0, "", false, false, 0, 0, 0, 0, 0 },
	/* bytes are floored to whole MiB: just under one MiB is 0 = unknown */
	{ "tmpdir under 1 MiB", { "", "", "1", "1", "0", "0", "1048575" },
	  0, "", false, false, 1, 1, 0, 0, 0 },
	{ "tmpdir 1 MiB + 1 byte", { "", "", "1", "1", "0", "0", "1048577" },
	  0, "", false, false, 1, 1, 0, 0, 1 },
	{ "largest values", { NULL, NULL, "4294967295", "18446744073709551615", "18446744073709551615",
			      "4294967295", "18446744073709551615" },
	  0, "", false, false, UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT64_MAX >> 20 },
	{ "bad prerequisites", { "t", "(a", "4", "100", "10", "0", "0" },
	  -EINVAL, "t", false, true, 4, 100, 10, 0, 0 },
};

START_TEST(daemon_caps)
{
	const char *cells[1 + MXQ_DAEMON_CAPS_NCOLS] = { "999" };
	struct mxq_server_caps caps;
	struct mx_db_result *res;
	char err[256] = "";
	int r;

	memcpy(cells + 1, daemon_cases[_i].cells, sizeof(daemon_cases[_i].cells));
	res = one_row(1 + MXQ_DAEMON_CAPS_NCOLS, cells);
	r = mxq_daemon_caps_from_row(&caps, HOST, res, 1, err, sizeof(err));
	ck_assert_int_eq(r, daemon_cases[_i].rc);
	if (r < 0)
		ck_assert_msg(err[0] != '\0', "no parser message for '%s'", daemon_cases[_i].name);
	ck_assert_str_eq(caps.hostname, HOST);
	ck_assert_str_eq(caps.short_hostname, "node-1");
	/* implicit words: true, the full and the short host name */
	assert_words(caps.tags, daemon_cases[_i].tags, 3);
	ck_assert(keywordset_contains(caps.tags, "true"));
	ck_assert(keywordset_contains(caps.tags, "node-1"));
	ck_assert_int_eq(caps.prerequisites != NULL, daemon_cases[_i].has_prereq);
	ck_assert_int_eq(caps.prerequisites_invalid, daemon_cases[_i].prereq_invalid);
	ck_assert_uint_eq(caps.slots, daemon_cases[_i].slots);
	ck_assert_uint_eq(caps.memory_mib, daemon_cases[_i].memory_mib);
	ck_assert_uint_eq(caps.maxtime_min, daemon_cases[_i].maxtime_min);
	ck_assert_uint_eq(caps.gpus, daemon_cases[_i].gpus);
	ck_assert_uint_eq(caps.tmpdir_total_mib, daemon_cases[_i].tmpdir_mib);
	mxq_server_caps_done(&caps);
	mx_db_result_free(res);
}
END_TEST

/* -------------------------------------------------------------- mxq_job */

static const struct {
	const char *name;
	const char *cells[MXQ_JOB_NCOLS];
	uint64_t job_id, group_id;
	int status;
	const char *workdir;
	int argc;                   /* -1: argv NULL */
	const char *argv[3];
	mode_t umask;
	uid_t uid;
	gid_t gid;
	uint32_t threads;
	uint64_t memory_mib, time_min;
	uint32_t gpus;
	uint64_t tmpdir_mib;
} job_cases[] = {
	{ "typical", { "42", "7", "/home/u", "sleep\\01\\0", "/o", "/e", "23", "/cb", "0",
		       "1000", "u", "100", "users", "2", "512", "5", "1", "3" },
	  42, 7, 0, "/home/u", 2, { "sleep", "1" }, 027, 1000, 100, 2, 512, 5, 1, 3 * 1024 },
	{ "backslash in an argument", { "1", "1", "/", "a\\\\b\\0", "", "", "18", "", "200",
					"0", "root", "0", "root", "1", "1", "1", "0", "0" },
	  1, 1, 200, "/", 1, { "a\\b" }, 022, 0, 0, 1, 1, 1, 0, 0 },
	/* every column NULL: numbers 0, texts "", no command */
	{ "all NULL", { NULL },
	  0, 0, 0, "", -1, { NULL }, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "malformed argv", { "5", "2", "/w", "no terminator", "/o", "/e", "18", "", "100",
			      "1", "n", "1", "g", "1", "10", "1", "0", "0" },
	  5, 2, 100, "/w", -1, { NULL }, 022, 1, 1, 1, 10, 1, 0, 0 },
	{ "empty argv", { "6", "2", "/w", "", "/o", "/e", "18", "", "0",
			  "1", "n", "1", "g", "1", "10", "1", "0", "0" },
	  6, 2, 0, "/w", -1, { NULL }, 022, 1, 1, 1, 10, 1, 0, 0 },
	/* umask keeps the permission bits only; largest sizes */
	{ "limits", { "18446744073709551615", "18446744073709551615", "/", "x\\0", "", "", "4095",
		      "", "1024", "4294967294", "n", "4294967294", "g", "4294967295",
		      "18446744073709551615", "4294967295", "4294967295", "4294967295" },
	  UINT64_MAX, UINT64_MAX, 1024, "/", 1, { "x" }, 0777, 4294967294U, 4294967294U,
	  UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX, 4294967295ULL * 1024 },
};

START_TEST(job_row)
{
	struct mx_db_result *res = one_row(MXQ_JOB_NCOLS, job_cases[_i].cells);
	struct mxq_job_row j;

	ck_assert_int_eq(mxq_job_from_row(&j, res, 0), 0);
	ck_assert_uint_eq(j.job_id, job_cases[_i].job_id);
	ck_assert_uint_eq(j.group_id, job_cases[_i].group_id);
	ck_assert_int_eq(j.status, job_cases[_i].status);
	ck_assert_str_eq(j.workdir, job_cases[_i].workdir);
	if (job_cases[_i].argc < 0) {
		ck_assert_ptr_null(j.argv);
	} else {
		ck_assert_ptr_nonnull(j.argv);
		for (int a = 0; a < job_cases[_i].argc; a++)
			ck_assert_str_eq(j.argv[a], job_cases[_i].argv[a]);
		ck_assert_ptr_null(j.argv[job_cases[_i].argc]);
	}
	ck_assert_str_eq(j.stdout_path, job_cases[_i].cells[4] ? job_cases[_i].cells[4] : "");
	ck_assert_str_eq(j.stderr_path, job_cases[_i].cells[5] ? job_cases[_i].cells[5] : "");
	ck_assert_uint_eq(j.umask, job_cases[_i].umask);
	ck_assert_str_eq(j.callback, job_cases[_i].cells[7] ? job_cases[_i].cells[7] : "");
	ck_assert_uint_eq(j.uid, job_cases[_i].uid);
	ck_assert_str_eq(j.user_name, job_cases[_i].cells[10] ? job_cases[_i].cells[10] : "");
	ck_assert_uint_eq(j.gid, job_cases[_i].gid);
	ck_assert_str_eq(j.group_name, job_cases[_i].cells[12] ? job_cases[_i].cells[12] : "");
	ck_assert_uint_eq(j.threads, job_cases[_i].threads);
	ck_assert_uint_eq(j.memory_mib, job_cases[_i].memory_mib);
	ck_assert_uint_eq(j.time_min, job_cases[_i].time_min);
	ck_assert_uint_eq(j.gpus, job_cases[_i].gpus);
	ck_assert_uint_eq(j.tmpdir_mib, job_cases[_i].tmpdir_mib);
	mxq_job_row_done(&j);
	ck_assert_ptr_null(j.workdir);
	mxq_job_row_done(&j);   /* twice is harmless */
	mxq_job_row_done(NULL);
	mx_db_result_free(res);
}
END_TEST

/* The mapper starts at the column it is told, like the others. */
START_TEST(job_row_offset)
{
	const char *cells[1 + MXQ_JOB_NCOLS] = { "junk" };
	struct mx_db_result *res;
	struct mxq_job_row j;

	memcpy(cells + 1, job_cases[0].cells, sizeof(job_cases[0].cells));
	res = one_row(1 + MXQ_JOB_NCOLS, cells);
	ck_assert_int_eq(mxq_job_from_row(&j, res, 1), 0);
	ck_assert_uint_eq(j.job_id, 42);
	ck_assert_uint_eq(j.tmpdir_mib, 3 * 1024);
	mxq_job_row_done(&j);
	mx_db_result_free(res);
}
END_TEST

/* -------------------------------------------------------- mxq_energy_db */

static const struct {
	const char *name;
	const char *cells[6];
	double energy_j, active_j;
	uint32_t samples;
	double peak_w, avg_w;
	uint64_t start_ms;
} energy_cases[] = {
	{ "typical", { "1234.5", "1000.25", "61", "250.5", "180", "1700000000123.000" },
	  1234.5, 1000.25, 61, 250.5, 180, 1700000000123ULL },
	/* an 'none' row: no figures, no start */
	{ "all NULL", { NULL, NULL, NULL, NULL, NULL, NULL }, 0, 0, 0, 0, 0, 0 },
	{ "whole seconds", { "0", "0", "0", "0", "0", "1700000000000" }, 0, 0, 0, 0, 0,
	  1700000000000ULL },
};

START_TEST(energy_job_row)
{
	struct mx_db_result *res = one_row(6, energy_cases[_i].cells);
	struct mxq_energy_db_job j;

	memset(&j, 0x55, sizeof(j));
	mxq_energy_db_job_from_row(&j, res);
	ck_assert_double_eq(j.energy_j, energy_cases[_i].energy_j);
	ck_assert_double_eq(j.active_energy_j, energy_cases[_i].active_j);
	ck_assert_uint_eq(j.samples, energy_cases[_i].samples);
	ck_assert_double_eq(j.peak_watts, energy_cases[_i].peak_w);
	ck_assert_double_eq(j.avg_watts, energy_cases[_i].avg_w);
	ck_assert_uint_eq(j.start_ms, energy_cases[_i].start_ms);
	ck_assert_ptr_null(j.hostname);
	ck_assert_ptr_null(j.method);
	mx_db_result_free(res);
}
END_TEST

/* ------------------------------------------------ mx_db_result_from_text */

START_TEST(result_from_text)
{
	static const char *const cells[] = { "1", NULL, "3", "4" };
	struct mx_db_result *res = NULL;

	ck_assert_int_eq(mx_db_result_from_text(&res, 0, 1, cells), -EINVAL);
	ck_assert_ptr_null(res);
	ck_assert_int_eq(mx_db_result_from_text(&res, 2, 2, cells), 0);
	ck_assert_uint_eq(mx_db_ncols(res), 2);
	ck_assert(mx_db_next(res));
	ck_assert_uint_eq(mx_db_u64(res, 0), 1);
	ck_assert(mx_db_is_null(res, 1));
	ck_assert(mx_db_next(res));
	ck_assert_str_eq(mx_db_str(res, 1), "4");
	ck_assert(!mx_db_next(res));
	mx_db_result_free(res);
	ck_assert_int_eq(mx_db_result_from_text(&res, 3, 0, NULL), 0);
	ck_assert(!mx_db_next(res));
	mx_db_result_free(res);
}
END_TEST

/* mxq_daemon_version_is_upstream(): upstream's releases, and ours never */
START_TEST(daemon_version)
{
	static const char *const upstream[] = { "0.22.3", "0.24.1", "0.10", "0.30.7-rc1", "0.22" };
	static const char *const not_upstream[] = {
		MXQ_VERSION, "0.9.0", "0.9.12", "0.9", "1.0.0", "", "unknown", "0.", "0.x", "v0.22.3",
		"0.22x",
	};

	for (size_t i = 0; i < sizeof(upstream) / sizeof(*upstream); i++)
		ck_assert_msg(mxq_daemon_version_is_upstream(upstream[i]), "%s", upstream[i]);
	for (size_t i = 0; i < sizeof(not_upstream) / sizeof(*not_upstream); i++)
		ck_assert_msg(!mxq_daemon_version_is_upstream(not_upstream[i]), "%s", not_upstream[i]);
	ck_assert(!mxq_daemon_version_is_upstream(NULL));
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(void)
{
	Suite *s = suite_create("rows");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, group_reqs, 0, N(group_cases));
	tcase_add_loop_test(tc, group_queued, 0, N(group_cases));
	tcase_add_loop_test(tc, daemon_caps, 0, N(daemon_cases));
	tcase_add_loop_test(tc, job_row, 0, N(job_cases));
	tcase_add_test(tc, job_row_offset);
	tcase_add_loop_test(tc, energy_job_row, 0, N(energy_cases));
	tcase_add_test(tc, result_from_text);
	tcase_add_test(tc, daemon_version);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
