/*
 * test_mx_util - unit tests for mx_util: parser tables (valid, malformed,
 * overflow, rounding), formatting, the job_argv encoding, /proc helpers and
 * mkdir_p/rmtree on a scratch tree under $TMPDIR, and that an mx_log
 * message stays one line.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mx_bitmap.h"
#include "mx_blist.h"
#include "mx_log.h"
#include "mx_util.h"

/* ------------------------------------------------------------------ */
/* integers                                                            */

static const struct {
	const char *s;
	int ret;
	uint64_t v;
} u64_cases[] = {
	{ "0", 0, 0 },
	{ "7", 0, 7 },
	{ "007", 0, 7 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999999", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1.0", -EINVAL, 0 },
	{ "12a", -EINVAL, 0 },
};

START_TEST(test_strtou64)
{
	uint64_t v = 4242;
	int r = mx_strtou64(u64_cases[_i].s, &v);

	ck_assert_msg(r == u64_cases[_i].ret, "'%s': ret %d, want %d",
		      u64_cases[_i].s, r, u64_cases[_i].ret);
	if (r == 0)
		ck_assert_uint_eq(v, u64_cases[_i].v);
	else
		ck_assert_uint_eq(v, 4242); /* untouched */
}
END_TEST

static const struct {
	const char *s;
	int ret;
	int64_t v;
} i64_cases[] = {
	{ "0", 0, 0 },
	{ "-0", 0, 0 },
	{ "+5", 0, 5 },
	{ "-5", 0, -5 },
	{ "9223372036854775807", 0, INT64_MAX },
	{ "9223372036854775808", -ERANGE, 0 },
	{ "-9223372036854775808", 0, INT64_MIN },
	{ "-9223372036854775809", -ERANGE, 0 },
	{ "-", -EINVAL, 0 },
	{ "--1", -EINVAL, 0 },
	{ " -1", -EINVAL, 0 },
	{ "1e3", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
};

START_TEST(test_strtoi64)
{
	int64_t v = 4242;
	int r = mx_strtoi64(i64_cases[_i].s, &v);

	ck_assert_msg(r == i64_cases[_i].ret, "'%s': ret %d, want %d",
		      i64_cases[_i].s, r, i64_cases[_i].ret);
	if (r == 0)
		ck_assert_int_eq(v, i64_cases[_i].v);
	else
		ck_assert_int_eq(v, 4242);
}
END_TEST

START_TEST(test_strto32)
{
	uint32_t u = 1;
	int32_t i = 1;

	ck_assert_int_eq(mx_strtou32("4294967295", &u), 0);
	ck_assert_uint_eq(u, UINT32_MAX);
	ck_assert_int_eq(mx_strtou32("4294967296", &u), -ERANGE);
	ck_assert_uint_eq(u, UINT32_MAX);
	ck_assert_int_eq(mx_strtou32("-1", &u), -EINVAL);
	ck_assert_int_eq(mx_strtoi32("2147483647", &i), 0);
	ck_assert_int_eq(i, INT32_MAX);
	ck_assert_int_eq(mx_strtoi32("-2147483648", &i), 0);
	ck_assert_int_eq(i, INT32_MIN);
	ck_assert_int_eq(mx_strtoi32("2147483648", &i), -ERANGE);
	ck_assert_int_eq(mx_strtoi32("-2147483649", &i), -ERANGE);
	ck_assert_int_eq(i, INT32_MIN);
	ck_assert_int_eq(mx_strtoi32("x", &i), -EINVAL);
}
END_TEST

static const struct {
	const char *s;
	int ret;
	double v;
} dbl_cases[] = {
	{ "0", 0, 0.0 },
	{ "1.5", 0, 1.5 },
	{ "-2.25", 0, -2.25 },
	{ "1e3", 0, 1000.0 },
	{ ".5", 0, 0.5 },
	{ "1e999", -ERANGE, 0 },
	{ "inf", -EINVAL, 0 },
	{ "nan", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "1.2.3", -EINVAL, 0 },
	{ "e", -EINVAL, 0 },
};

START_TEST(test_strtod)
{
	double v = 42.0;
	int r = mx_strtod(dbl_cases[_i].s, &v);

	ck_assert_msg(r == dbl_cases[_i].ret, "'%s': ret %d, want %d",
		      dbl_cases[_i].s, r, dbl_cases[_i].ret);
	if (r == 0)
		ck_assert_double_eq(v, dbl_cases[_i].v);
	else
		ck_assert_double_eq(v, 42.0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* units                                                               */

static const struct {
	const char *s;
	char unit;
	int ret;
	uint64_t mib;
} size_cases[] = {
	{ "0", 'M', 0, 0 },
	{ "512", 'M', 0, 512 },
	{ "512", 'G', 0, 512 * 1024 },
	{ "2G", 'M', 0, 2048 },
	{ "2g", 'M', 0, 2048 },
	{ "1.5G", 'M', 0, 1536 },
	{ "1G512M", 'M', 0, 1536 },
	{ "1g512", 'M', 0, 1536 },
	{ "1T", 'M', 0, 1024 * 1024 },
	{ "0.5T", 'M', 0, 512 * 1024 },
	{ "1024K", 'M', 0, 1 },
	{ "1K", 'M', 0, 1 },          /* rounded up */
	{ "1025K", 'M', 0, 2 },
	{ "0.1M", 'M', 0, 1 },
	{ "1.0001G", 'M', 0, 1025 },  /* 1024.1024 MiB, rounded up */
	{ "512K512K", 'M', 0, 1 },    /* summed before rounding */
	{ "1.5", 'G', 0, 1536 },
	{ "0.0000000000000000000001G", 'M', 0, 1 }, /* beyond 18 digits still rounds up */
	{ "1.000000000000000000000", 'M', 0, 1 },
	{ "17592186044415T", 'M', 0, 17592186044415ULL * 1024 * 1024 },
	{ "17592186044416T", 'M', -ERANGE, 0 },     /* 2^64 MiB */
	{ "18446744073709551615", 'M', 0, UINT64_MAX },
	{ "18446744073709551616", 'M', -ERANGE, 0 },
	{ "18446744073709551615M1M", 'M', -ERANGE, 0 },
	{ "", 'M', -EINVAL, 0 },
	{ "G", 'M', -EINVAL, 0 },
	{ "12X", 'M', -EINVAL, 0 },
	{ "-1G", 'M', -EINVAL, 0 },
	{ "+1G", 'M', -EINVAL, 0 },
	{ "1 G", 'M', -EINVAL, 0 },
	{ " 1G", 'M', -EINVAL, 0 },
	{ "1G ", 'M', -EINVAL, 0 },
	{ "1.G", 'M', -EINVAL, 0 },
	{ ".5G", 'M', -EINVAL, 0 },
	{ "1..5G", 'M', -EINVAL, 0 },
	{ "1GB", 'M', -EINVAL, 0 },
	{ "1GG", 'M', -EINVAL, 0 },
	{ "1", 'X', -EINVAL, 0 },     /* bad default unit */
};

START_TEST(test_parse_size)
{
	uint64_t mib = 4242;
	int r = mx_parse_size_mib(size_cases[_i].s, size_cases[_i].unit, &mib);

	ck_assert_msg(r == size_cases[_i].ret, "'%s'/%c: ret %d, want %d",
		      size_cases[_i].s, size_cases[_i].unit, r, size_cases[_i].ret);
	if (r == 0)
		ck_assert_msg(mib == size_cases[_i].mib, "'%s': %llu MiB, want %llu",
			      size_cases[_i].s, (unsigned long long)mib,
			      (unsigned long long)size_cases[_i].mib);
	else
		ck_assert_uint_eq(mib, 4242);
}
END_TEST

static const struct {
	const char *s;
	int ret;
	uint64_t min;
} runtime_cases[] = {
	{ "0", 0, 0 },
	{ "60", 0, 60 },
	{ "90m", 0, 90 },
	{ "2h30m", 0, 150 },
	{ "1.5h", 0, 90 },
	{ "1d12h", 0, 36 * 60 },
	{ "1w", 0, 7 * 24 * 60 },
	{ "1y", 0, 365 * 24 * 60 },
	{ "1s", 0, 1 },               /* rounded up */
	{ "60s", 0, 1 },
	{ "61s", 0, 2 },
	{ "30s30s", 0, 1 },           /* summed before rounding */
	{ "0.5m", 0, 1 },
	{ "0.01h", 0, 1 },            /* 36 s */
	{ "1h1", 0, 61 },
	{ "1.25", 0, 2 },             /* 75 s */
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "18446744073709551615m1s", -ERANGE, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
	{ "h", -EINVAL, 0 },
	{ "1H", -EINVAL, 0 },         /* lower-case units only */
	{ "1M", -EINVAL, 0 },
	{ "1x", -EINVAL, 0 },
	{ "-1h", -EINVAL, 0 },
	{ "1h ", -EINVAL, 0 },
	{ "1 h", -EINVAL, 0 },
	{ "1.h", -EINVAL, 0 },
	{ "1hh", -EINVAL, 0 },
};

START_TEST(test_parse_runtime)
{
	uint64_t min = 4242;
	int r = mx_parse_runtime_min(runtime_cases[_i].s, &min);

	ck_assert_msg(r == runtime_cases[_i].ret, "'%s': ret %d, want %d",
		      runtime_cases[_i].s, r, runtime_cases[_i].ret);
	if (r == 0)
		ck_assert_msg(min == runtime_cases[_i].min, "'%s': %llu min, want %llu",
			      runtime_cases[_i].s, (unsigned long long)min,
			      (unsigned long long)runtime_cases[_i].min);
	else
		ck_assert_uint_eq(min, 4242);
}
END_TEST

START_TEST(test_format)
{
	char buf[32];

	mx_format_size_mib(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0M");
	mx_format_size_mib(512, buf, sizeof(buf));
	ck_assert_str_eq(buf, "512M");
	mx_format_size_mib(1024, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1G");
	mx_format_size_mib(1536, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.5G");
	mx_format_size_mib(2047, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2G");
	mx_format_size_mib(3 * 1024 * 1024, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3T");
	mx_format_size_mib(UINT64_MAX, buf, sizeof(buf));
	ck_assert_str_eq(buf, "16777216E"); /* 2^84 bytes */

	mx_format_runtime_min(0, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0m");
	mx_format_runtime_min(15, buf, sizeof(buf));
	ck_assert_str_eq(buf, "15m");
	mx_format_runtime_min(60, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1h");
	mx_format_runtime_min(3 * 1440 + 120, buf, sizeof(buf));
	ck_assert_str_eq(buf, "3d2h");
	mx_format_runtime_min(1440 + 61, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1d1h1m");

	/* truncation stays NUL-terminated */
	mx_format_runtime_min(1440 + 61, buf, 4);
	ck_assert_str_eq(buf, "1d1");
	mx_format_size_mib(1536, buf, 3);
	ck_assert_str_eq(buf, "1.");
}
END_TEST

/* every formatted value parses back to itself (when exact) */
START_TEST(test_format_roundtrip)
{
	static const uint64_t values[] = { 0, 1, 59, 60, 61, 1439, 1440, 10081, 525600 };
	char buf[64];

	for (size_t i = 0; i < MX_ARRAY_SIZE(values); i++) {
		uint64_t back = 0;

		mx_format_runtime_min(values[i], buf, sizeof(buf));
		ck_assert_int_eq(mx_parse_runtime_min(buf, &back), 0);
		ck_assert_uint_eq(back, values[i]);
	}
}
END_TEST

START_TEST(test_strings)
{
	char buf[16];
	char *s;

	mx_short_hostname("node1.example.org", buf, sizeof(buf));
	ck_assert_str_eq(buf, "node1");
	mx_short_hostname("node1", buf, sizeof(buf));
	ck_assert_str_eq(buf, "node1");
	mx_short_hostname("averyveryverylonghostname.x", buf, 5);
	ck_assert_str_eq(buf, "aver"); /* 4 chars + NUL */

	s = mx_asprintf("%s-%d", "a", 7);
	ck_assert_str_eq(s, "a-7");
	free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* job_argv                                                            */

static void check_roundtrip(char *const *argv, const char *want)
{
	char **back = NULL;
	int argc = -1, n = 0;
	char *enc = mx_argv_encode(argv);

	ck_assert_ptr_nonnull(enc);
	if (want)
		ck_assert_str_eq(enc, want);
	while (argv[n])
		n++;
	ck_assert_int_eq(mx_argv_decode(enc, &back, &argc), 0);
	ck_assert_int_eq(argc, n);
	for (int i = 0; i < n; i++)
		ck_assert_str_eq(back[i], argv[i]);
	ck_assert_ptr_null(back[n]);
	mx_strvec_free(back);
	free(enc);
}

START_TEST(test_argv_roundtrip)
{
	char *v0[] = { NULL };
	char *v1[] = { "a", "b\\c", NULL };
	char *v2[] = { "", NULL };
	char *v3[] = { "", "", "x", "", NULL };
	char *v4[] = { "\\", "\\\\", "\\0", "0\\", NULL };
	char *v5[] = { "/bin/sh", "-c", "echo 'a b' \"$HOME\" \\n; exit 3", NULL };
	char *v6[] = { "tab\there", "new\nline", "ümlaut", NULL };

	check_roundtrip(v0, "");
	check_roundtrip(v1, "a\\0b\\\\c\\0");
	check_roundtrip(v2, "\\0");
	check_roundtrip(v3, "\\0\\0x\\0\\0");
	check_roundtrip(v4, "\\\\\\0\\\\\\\\\\0\\\\0\\0" "0\\\\\\0");
	check_roundtrip(v5, NULL);
	check_roundtrip(v6, NULL);
}
END_TEST

static const char *const bad_argv[] = {
	"a",            /* no terminator */
	"a\\0b",        /* trailing text */
	"\\",           /* lone backslash */
	"a\\0\\",       /* trailing lone backslash */
	"a\\1\\0",      /* unknown escape */
	"a\\n\\0",
	"a\\\\0",       /* escaped backslash + '0': not a terminator */
	"\\\\",
};

START_TEST(test_argv_malformed)
{
	char **argv = (char **)0x1;
	int argc = 4242;

	ck_assert_msg(mx_argv_decode(bad_argv[_i], &argv, &argc) == -EINVAL,
		      "'%s' accepted", bad_argv[_i]);
	ck_assert_ptr_eq(argv, (char **)0x1);
	ck_assert_int_eq(argc, 4242);
}
END_TEST

/* ------------------------------------------------------------------ */
/* /proc                                                               */

START_TEST(test_proc)
{
	unsigned long long st1 = 0, st2 = 0;
	pid_t sid = -1;
	uint64_t rss = 0;
	char boot[37];
	char line[8];

	ck_assert_int_eq(mx_proc_starttime(getpid(), &st1), 0);
	ck_assert_int_eq(mx_proc_starttime(getpid(), &st2), 0);
	ck_assert_uint_eq(st1, st2);
	ck_assert_uint_gt(st1, 0);
	ck_assert_int_eq(mx_proc_session(getpid(), &sid), 0);
	ck_assert_int_eq(sid, getsid(0));
	ck_assert_int_eq(mx_session_rss_kib(sid, &rss), 0);
	ck_assert_uint_gt(rss, 0);
	ck_assert_int_lt(mx_proc_starttime(-5, &st1), 0);
	{
		/* open descriptors: three more while a pipe and a dup are open */
		int before = mx_fds_open(), p[2], d;

		ck_assert_int_ge(before, 3);
		ck_assert_int_eq(pipe(p), 0);
		d = dup(p[0]);
		ck_assert_int_eq(mx_fds_open(), before + 3);
		close(p[0]);
		close(p[1]);
		close(d);
		ck_assert_int_eq(mx_fds_open(), before);
	}
	{
		/* an ended child not reaped yet (a zombie) is not alive */
		pid_t child = fork();
		int r = 0;

		ck_assert_int_ge(child, 0);
		if (child == 0)
			_exit(0);
		for (int i = 0; i < 500 && (r = mx_proc_starttime(child, &st2)) == 0; i++)
			mx_sleep_ms(2);
		ck_assert_int_eq(r, -ESRCH);
		ck_assert_int_eq(waitpid(child, NULL, 0), child);
	}

	ck_assert_int_eq(mx_boot_id(boot), 0);
	ck_assert_uint_eq(strlen(boot), 36);
	ck_assert_int_eq(mx_read_first_line("/proc/sys/kernel/random/boot_id", line,
					    sizeof(line)), -ENOBUFS);
	ck_assert_int_eq(mx_read_first_line("/nonexistent/file", line, sizeof(line)), -ENOENT);
}
END_TEST

/* ------------------------------------------------------------------ */
/* directories                                                         */

static char scratch[256];

static void scratch_setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(scratch, sizeof(scratch), "%s/test_mx_util.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(scratch));
}

static void scratch_teardown(void)
{
	char cmd[sizeof(scratch) + 32];

	/* independent of the code under test */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", scratch);
}

/* Rotating buffers: a call like symlink(path_in(a), path_in(b)) needs two. */
static char *path_in(const char *rel)
{
	static char bufs[4][512];
	static unsigned next;
	char *buf = bufs[next++ % 4];

	snprintf(buf, sizeof(bufs[0]), "%s/%.200s", scratch, rel);
	return buf;
}

static void write_file(const char *rel, const char *content)
{
	FILE *f = fopen(path_in(rel), "w");

	ck_assert_ptr_nonnull(f);
	fputs(content, f);
	fclose(f);
}

static bool exists(const char *rel)
{
	struct stat st;

	return lstat(path_in(rel), &st) == 0;
}

/* mx_log: one message is one line, whatever text from outside it carries
 * (a BMC's error message, a database text): a "\n<0>..." inside must not
 * start a line of its own, which a journal stream reads as a priority. */
START_TEST(test_log_one_line)
{
	char buf[512];
	int fd, lines = 0;
	ssize_t n;

	ck_assert_int_eq(mx_log_set_file(path_in("log")), 0);
	mx_log_warning("power: wake of n1 failed: %s", "HTTP 500: a\n<0>EMERG: forged\r\x1b[2J");
	mx_log_warning("plain %s", "end\n");
	fd = open(path_in("log"), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	for (const char *p = buf; *p; p++)
		lines += *p == '\n';
	ck_assert_msg(lines == 2, "two messages, %d lines: '%s'", lines, buf);
	ck_assert_ptr_null(strchr(buf, '\r'));
	ck_assert_ptr_null(strchr(buf, '\x1b'));
	ck_assert_ptr_nonnull(strstr(buf, "HTTP 500: a <0>EMERG: forged"));
	ck_assert_ptr_nonnull(strstr(buf, "plain end\n"));
}
END_TEST

START_TEST(test_read_first_line)
{
	char buf[16] = "x";

	write_file("f1", "hello\nworld\n");
	ck_assert_int_eq(mx_read_first_line(path_in("f1"), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "hello");
	write_file("f2", "");
	ck_assert_int_eq(mx_read_first_line(path_in("f2"), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");
	write_file("f3", "no newline");
	ck_assert_int_eq(mx_read_first_line(path_in("f3"), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "no newline");
	write_file("f4", "123456789012345\n"); /* 15 chars: fits exactly */
	ck_assert_int_eq(mx_read_first_line(path_in("f4"), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "123456789012345");
	write_file("f5", "1234567890123456\n");
	ck_assert_int_eq(mx_read_first_line(path_in("f5"), buf, sizeof(buf)), -ENOBUFS);
	ck_assert_str_eq(buf, "123456789012345"); /* untouched */
}
END_TEST

START_TEST(test_mkdir_p)
{
	struct stat st;

	ck_assert_int_eq(mx_mkdir_p(path_in("a/b//c/"), 0750), 0);
	ck_assert_int_eq(stat(path_in("a/b/c"), &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(mx_mkdir_p(path_in("a/b/c"), 0750), 0); /* exists: fine */
	write_file("a/file", "x");
	ck_assert_int_eq(mx_mkdir_p(path_in("a/file"), 0750), -ENOTDIR);
	ck_assert_int_eq(mx_mkdir_p(path_in("a/file/sub"), 0750), -ENOTDIR);
	ck_assert_int_eq(mx_mkdir_p("", 0750), -EINVAL);
}
END_TEST

START_TEST(test_rmtree)
{
	ck_assert_int_eq(mx_mkdir_p(path_in("outside/keep"), 0755), 0);
	write_file("outside/keep/precious", "do not delete");
	ck_assert_int_eq(mx_mkdir_p(path_in("tree/d1/d2/d3"), 0755), 0);
	write_file("tree/f", "1");
	write_file("tree/d1/d2/d3/f", "2");
	/* symlinks pointing out of the tree, to a directory and a file */
	ck_assert_int_eq(symlink(path_in("outside/keep"), path_in("tree/d1/link_dir")), 0);
	ck_assert_int_eq(symlink(path_in("outside/keep/precious"), path_in("tree/link_file")), 0);
	ck_assert_int_eq(symlink("/nonexistent", path_in("tree/d1/d2/dangling")), 0);
	/* an empty directory and a deep one must both go */
	ck_assert_int_eq(mkdir(path_in("tree/empty"), 0700), 0);

	ck_assert_int_eq(mx_rmtree(path_in("tree")), 0);
	ck_assert(!exists("tree"));
	ck_assert(exists("outside/keep/precious"));
	ck_assert(exists("outside/keep"));

	/* a symlink given as the root is removed, its target kept */
	ck_assert_int_eq(symlink(path_in("outside"), path_in("rootlink")), 0);
	ck_assert_int_eq(mx_rmtree(path_in("rootlink")), 0);
	ck_assert(!exists("rootlink"));
	ck_assert(exists("outside/keep/precious"));

	/* a plain file; a missing path is fine, as with rm -rf */
	write_file("plain", "x");
	ck_assert_int_eq(mx_rmtree(path_in("plain")), 0);
	ck_assert(!exists("plain"));
	ck_assert_int_eq(mx_rmtree(path_in("missing")), 0);
	ck_assert_int_eq(mx_rmtree(""), -EINVAL);
}
END_TEST

/* A chain of DEPTH directories "d" below the open directory FD, with a
 * file every 100 levels and, at level FAN_AT, FAN siblings each FAN_DEPTH
 * deep (deeper than the walk holds open: their parent is opened again
 * through ".." for each). Built with *at() calls: the paths are far longer
 * than PATH_MAX. */
static void build_deep(int fd, int depth, int fan_at, int fan, int fan_depth)
{
	fd = dup(fd);
	for (int i = 0; i < depth; i++) {
		int next;
		if (i % 100 == 0) {
			int f = openat(fd, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
			ck_assert_int_ge(f, 0);
			ck_assert_int_eq(write(f, "x", 1), 1);
			close(f);
		}
		if (i == fan_at) {
			for (int k = 0; k < fan; k++) {
				char name[16];
				snprintf(name, sizeof(name), "fan%d", k);
				ck_assert_int_eq(mkdirat(fd, name, 0700), 0);
				int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				ck_assert_int_ge(sub, 0);
				build_deep(sub, fan_depth, -1, 0, 0);
				close(sub);
			}
		}
		ck_assert_int_eq(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_ge(next, 0);
		close(fd);
		fd = next;
	}
	close(fd);
}

/* A user can nest directories thousands deep in a job's tmpdir: removing
 * them must neither run out of descriptors (two per level did, at ~500
 * levels under the usual limit of 1024, and the tmpdir was left for ever)
 * nor recurse on the stack. */
START_TEST(test_rmtree_deep)
{
	struct rlimit old, low;
	int fd;

	ck_assert_int_eq(mx_mkdir_p(path_in("outside/keep"), 0755), 0);
	write_file("outside/keep/precious", "do not delete");
	ck_assert_int_eq(mkdir(path_in("deep"), 0700), 0);
	fd = open(path_in("deep"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	build_deep(fd, 3000, 1500, 20, 50);
	ck_assert_int_eq(symlinkat(path_in("outside/keep"), fd, "link"), 0);
	close(fd);

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = (struct rlimit) { 48, old.rlim_max };
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	int r = mx_rmtree(path_in("deep"));
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_int_eq(r, 0);
	ck_assert(!exists("deep"));
	ck_assert(exists("outside/keep/precious"));
}
END_TEST

START_TEST(test_clocks)
{
	uint64_t m1 = mx_now_monotonic_ms();
	uint64_t r1 = mx_now_realtime_ms();

	usleep(20000);
	ck_assert_uint_ge(mx_now_monotonic_ms() - m1, 15);
	ck_assert_uint_gt(r1, 1500000000000ULL); /* after 2017 */
}
END_TEST

START_TEST(test_cleanup_helpers)
{
	int fd = open("/dev/null", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	mx_close_fd(&fd);
	ck_assert_int_eq(fd, -1);
	mx_close_fd(&fd); /* no-op */
	{
		_mx_cleanup_free_ char *p = malloc(10);
		ck_assert_ptr_nonnull(p);
	}
}
END_TEST

static const struct {
	const char *path, *dir;
	bool below;
} below_cases[] = {
	{ "/tmp", "/tmp", true }, { "/tmp/a/b", "/tmp", true }, { "/tmp/a", "/tmp/", true },
	{ "/tmpx", "/tmp", false }, { "/var/tmp", "/tmp", false }, { "/", "/tmp", false },
	{ "/anything", "/", true }, { "/var/tmp/x", "/var/tmp", true }, { "/var", "/var/tmp", false },
};

START_TEST(test_path_below)
{
	ck_assert_msg(mx_path_is_below(below_cases[_i].path, below_cases[_i].dir) == below_cases[_i].below,
		      "%s below %s", below_cases[_i].path, below_cases[_i].dir);
}
END_TEST

/* symlinks count where they lead; of a file its directory */
START_TEST(test_path_resolved_below)
{
	char dir[600], link[600], file[700];

	snprintf(dir, sizeof(dir), "%s/real", scratch);
	snprintf(link, sizeof(link), "%s/link", scratch);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert(mx_path_resolved_below(link, false, dir));
	snprintf(file, sizeof(file), "%s/out.txt", link);
	ck_assert(mx_path_resolved_below(file, true, dir));
	ck_assert(!mx_path_resolved_below(scratch, false, dir));
	snprintf(file, sizeof(file), "%s/missing/x", scratch);
	ck_assert(mx_path_resolved_below(file, false, scratch));
}
END_TEST

/* The bitmap walks against a member-by-member answer, on random sets whose
 * sizes end inside, at and just past word boundaries. */
static size_t naive_next(const bool *a, const bool *b, const bool *c, const bool *without,
			 size_t n, size_t k)
{
	for (; k < n; k++)
		if ((a[k] || b[k] || c[k]) && !(without && without[k]))
			return k;
	return n;
}

START_TEST(test_bitmap_walks)
{
	static const size_t sizes[] = { 1, 5, 63, 64, 65, 127, 128, 129, 200 };
	uint64_t x = 99;

	for (size_t si = 0; si < MX_ARRAY_SIZE(sizes); si++) {
		size_t n = sizes[si], words = mx_bitmap_words(n);
		for (int round = 0; round < 40; round++) {
			uint64_t set[3][4] = { { 0 } };
			bool has[3][200] = { { false } };
			/* sparse, dense and empty sets alike */
			unsigned density = (unsigned)round % 4;
			for (int j = 0; j < 3; j++)
				for (size_t k = 0; k < n; k++) {
					x = x * 6364136223846793005ULL + 1442695040888963407ULL;
					has[j][k] = density && (x >> 33) % 8 < 2 * density - 1;
					mx_bitmap_put(set[j], k, has[j][k]);
				}
			ck_assert_uint_le(words, 4);
			for (size_t k = 0; k <= n + 1; k++) {
				ck_assert_uint_eq(mx_bitmap_next(set[0], n, k),
						  naive_next(has[0], has[0], has[0], NULL, n, k));
				ck_assert_uint_eq(mx_bitmap_next2(set[0], set[1], n, k),
						  naive_next(has[0], has[1], has[1], NULL, n, k));
				ck_assert_uint_eq(mx_bitmap_next3(set[0], set[1], set[2], n, k),
						  naive_next(has[0], has[1], has[2], NULL, n, k));
				ck_assert_msg(mx_bitmap_next_without(set[0], set[1], n, k) ==
					      naive_next(has[0], has[0], has[0], has[1], n, k),
					      "next_without, n %zu, k %zu, round %d", n, k, round);
				if (k < n)
					ck_assert(mx_bitmap_has(set[2], k) == has[2][k]);
			}
		}
	}
}
END_TEST

/* mx_blist against a plain sorted array, under random inserts, removals
 * and moves with many equal keys (ties go to the lower id), filling up to
 * its MAX and emptying again: the order, the counts, lower bounds, the
 * refusals, that the blocks stay within the bound of mx_blist.h (any
 * two neighbours more than half full together) and that the list of their
 * last entries is right. */
struct ref_entry {
	int64_t key;
	uint32_t id;
};

static bool ref_less(const struct ref_entry *a, const struct ref_entry *b)
{
	return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static size_t ref_lower_bound(const struct ref_entry *v, size_t n, int64_t key, uint32_t id)
{
	struct ref_entry e = { key, id };
	size_t k = 0;

	while (k < n && ref_less(&v[k], &e))
		k++;
	return k;
}

/* Whether L holds V[0..n) in order within the bound; plain tests, not
 * ck_assert: the runner writes down each assertion, and there are
 * millions. */
static bool blist_matches(const struct mx_blist *l, const struct ref_entry *v, size_t n)
{
	size_t k = 0;

	if (mx_blist_count(l) != n || l->n_order > 4 * l->max / MX_BLIST_BLOCK + 2)
		return false;
	for (struct mx_blist_it it = mx_blist_begin(l); !mx_blist_end(&it); mx_blist_next(&it), k++)
		if (k >= n || mx_blist_get(&it)->key != v[k].key || mx_blist_get(&it)->id != v[k].id)
			return false;
	for (size_t b = 0; b < l->n_order; b++) {
		uint32_t here = l->block[l->order[b]].n;
		if (here && (l->last[b].key != l->block[l->order[b]].e[here - 1].key ||
			     l->last[b].id != l->block[l->order[b]].e[here - 1].id))
			return false;
		if (here == 0 || (b + 1 < l->n_order &&
				  here + l->block[l->order[b + 1]].n <= MX_BLIST_BLOCK / 2))
			return false;
	}
	return k == n;
}

START_TEST(test_blist)
{
	static const size_t maxes[] = { 0, 1, 5, 64, 65, 300, 1000 };
	uint64_t x = 7;
#define RND(m) (x = x * 6364136223846793005ULL + 1442695040888963407ULL, (x >> 33) % (m))

	for (size_t mi = 0; mi < MX_ARRAY_SIZE(maxes); mi++) {
		size_t max = maxes[mi], n = 0;
		struct mx_blist l;
		struct ref_entry *v = calloc(max + 1, sizeof(*v));
		int64_t *key_of = calloc(max + 1, sizeof(*key_of));
		bool *in = calloc(max + 1, sizeof(*in));

		ck_assert(v && key_of && in);
		ck_assert_int_eq(mx_blist_init(&l, max), 0);
		/* ids 0..max, one more than fits: the last insert is refused */
		for (int round = 0; round < 3; round++) {
			int64_t span = round == 0 ? 3 : round == 1 ? 50 : 1000000;
			for (size_t step = 0; step < 6 * max + 20; step++) {
				uint32_t id = (uint32_t)RND(max + 1);
				/* fill in the first half of a round, empty in the second */
				bool fill = step < 3 * max + 10;
				if (!in[id] && (fill || RND(4) == 0)) {
					int64_t key = (int64_t)RND(span) - span / 2;
					bool ok = mx_blist_insert(&l, key, id);
					if (ok != (n < max))
						ck_abort_msg("max %zu: insert with %zu in", max, n);
					if (ok) {
						size_t at = ref_lower_bound(v, n, key, id);
						memmove(v + at + 1, v + at, (n - at) * sizeof(*v));
						v[at] = (struct ref_entry) { key, id };
						n++;
						in[id] = true;
						key_of[id] = key;
					}
				} else if (in[id] && n > 0 && RND(3) == 0) {
					int64_t key = (int64_t)RND(span) - span / 2;
					mx_blist_move(&l, key_of[id], key, id);
					size_t at = ref_lower_bound(v, n, key_of[id], id), rest = n - 1;
					memmove(v + at, v + at + 1, (rest - at) * sizeof(*v));
					at = ref_lower_bound(v, rest, key, id);
					memmove(v + at + 1, v + at, (rest - at) * sizeof(*v));
					v[at] = (struct ref_entry) { key, id };
					key_of[id] = key;
				} else if (in[id] && !fill) {
					if (!mx_blist_remove(&l, key_of[id], id))
						ck_abort_msg("max %zu: %u not removed", max, id);
					size_t at = ref_lower_bound(v, n, key_of[id], id);
					memmove(v + at, v + at + 1, (n - at - 1) * sizeof(*v));
					n--;
					in[id] = false;
				} else if (in[id]) {
					/* there; and not there under another key */
					if (mx_blist_insert(&l, key_of[id], id) ||
					    mx_blist_remove(&l, key_of[id] + 1, id))
						ck_abort_msg("max %zu: %u in twice", max, id);
				} else if (mx_blist_remove(&l, 0, id)) {
					ck_abort_msg("max %zu: %u removed, not there", max, id);
				}
				if (!blist_matches(&l, v, n))
					ck_abort_msg("max %zu, round %d, step %zu: the list differs",
						     max, round, step);
				int64_t key = (int64_t)RND(span) - span / 2;
				uint32_t lid = (uint32_t)RND(max + 1);
				struct mx_blist_it it = mx_blist_lower_bound(&l, key, lid);
				size_t at = ref_lower_bound(v, n, key, lid);
				if (mx_blist_end(&it) != (at == n) ||
				    (at < n && (mx_blist_get(&it)->key != v[at].key ||
						mx_blist_get(&it)->id != v[at].id)))
					ck_abort_msg("max %zu, round %d, step %zu: lower bound of (%lld, %u)",
						     max, round, step, (long long)key, lid);
			}
		}
		mx_blist_clear(&l);
		ck_assert_uint_eq(mx_blist_count(&l), 0);
		ck_assert(mx_blist_end(&(struct mx_blist_it) { &l, 0, 0 }));
		if (max) {
			ck_assert(mx_blist_insert(&l, 5, 0));
			ck_assert_uint_eq(mx_blist_count(&l), 1);
		}
		mx_blist_free(&l);
		free(v);
		free(key_of);
		free(in);
	}
#undef RND
}
END_TEST

static Suite *mx_util_suite(void)
{
	Suite *s = suite_create("mx_util");
	TCase *tc;

	tc = tcase_create("numbers");
	tcase_add_loop_test(tc, test_strtou64, 0, MX_ARRAY_SIZE(u64_cases));
	tcase_add_loop_test(tc, test_strtoi64, 0, MX_ARRAY_SIZE(i64_cases));
	tcase_add_test(tc, test_strto32);
	tcase_add_loop_test(tc, test_strtod, 0, MX_ARRAY_SIZE(dbl_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("units");
	tcase_add_loop_test(tc, test_parse_size, 0, MX_ARRAY_SIZE(size_cases));
	tcase_add_loop_test(tc, test_parse_runtime, 0, MX_ARRAY_SIZE(runtime_cases));
	tcase_add_test(tc, test_format);
	tcase_add_test(tc, test_format_roundtrip);
	tcase_add_test(tc, test_strings);
	tcase_add_test(tc, test_bitmap_walks);
	tcase_add_test(tc, test_blist);
	tcase_add_loop_test(tc, test_path_below, 0, MX_ARRAY_SIZE(below_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("argv");
	tcase_add_test(tc, test_argv_roundtrip);
	tcase_add_loop_test(tc, test_argv_malformed, 0, MX_ARRAY_SIZE(bad_argv));
	suite_add_tcase(s, tc);

	tc = tcase_create("proc");
	tcase_add_test(tc, test_proc);
	tcase_add_test(tc, test_clocks);
	tcase_add_test(tc, test_cleanup_helpers);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	/* unchecked: set up and torn down in the runner, so a failing test
	 * cannot leave the scratch directory behind */
	tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, test_read_first_line);
	tcase_add_test(tc, test_log_one_line);
	tcase_add_test(tc, test_mkdir_p);
	tcase_add_test(tc, test_rmtree);
	tcase_add_test(tc, test_rmtree_deep);
	tcase_add_test(tc, test_path_resolved_below);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mx_util_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
