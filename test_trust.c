/*
 * test_trust - unit tests of the trust boundary's decisions (Check, no
 * database): the identity decision of job rows (mxq_identity_decide), the
 * host-name rule and the field validators of `mxqadmin power set`, the
 * terminal escaping of table output, and the safe-directory check.
 * Every decision is a table of cases.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mx_safefs.h"
#include "mx_util.h"
#include "mxq_identity.h"
#include "mxq_power_policy.h"

/* ------------------------------------------------------------ identity */

static const struct {
	const char *what;
	struct mxq_identity_claim claim;
	struct mxq_identity_policy policy;
	struct mxq_identity_facts facts;
	enum mxq_identity_verdict want;
} identity_cases[] = {
	{ "a real user, primary gid", { 1001, "alice", 1001 }, { 1000, false },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_OK },
	{ "a real user, a member group", { 1001, "alice", 2000 }, { 1000, false },
	  { true, "alice", 1001, true }, MXQ_IDENTITY_OK },
	{ "uid 0 refused", { 0, "root", 0 }, { 1000, false },
	  { true, "root", 0, false }, MXQ_IDENTITY_ROOT },
	{ "uid 0 refused even with --min-uid 0", { 0, "root", 0 }, { 0, false },
	  { true, "root", 0, false }, MXQ_IDENTITY_ROOT },
	{ "uid 0 with --allow-root-jobs", { 0, "root", 0 }, { 1000, true },
	  { true, "root", 0, false }, MXQ_IDENTITY_OK },
	{ "below --min-uid", { 999, "svc", 999 }, { 1000, false },
	  { true, "svc", 999, false }, MXQ_IDENTITY_BELOW_MIN },
	{ "at --min-uid", { 1000, "first", 1000 }, { 1000, false },
	  { true, "first", 1000, false }, MXQ_IDENTITY_OK },
	{ "below --min-uid with --allow-root-jobs", { 2, "bin", 2 }, { 1000, true },
	  { true, "bin", 2, false }, MXQ_IDENTITY_OK },
	{ "nobody (65534) refused although above --min-uid", { 65534, "nobody", 65534 },
	  { 1000, false }, { true, "nobody", 65534, false }, MXQ_IDENTITY_NOBODY },
	{ "uid (uint32_t)-1 refused", { UINT32_MAX, "x", 1001 }, { 1000, false },
	  { false, NULL, 0, false }, MXQ_IDENTITY_NOBODY },
	{ "nobody with --allow-root-jobs", { 65534, "nobody", 65534 }, { 1000, true },
	  { true, "nobody", 65534, false }, MXQ_IDENTITY_OK },
	{ "unknown uid", { 5000, "ghost", 5000 }, { 1000, false },
	  { false, NULL, 0, false }, MXQ_IDENTITY_NO_SUCH_USER },
	{ "unknown uid with --allow-root-jobs", { 5000, "ghost", 5000 }, { 1000, true },
	  { false, NULL, 0, false }, MXQ_IDENTITY_NO_SUCH_USER },
	{ "name of another user", { 1001, "bob", 1001 }, { 1000, false },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_NAME_MISMATCH },
	{ "name 'root' on a user's uid", { 1001, "root", 1001 }, { 1000, true },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_NAME_MISMATCH },
	{ "name differs in case", { 1001, "Alice", 1001 }, { 1000, false },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_NAME_MISMATCH },
	{ "no stored name", { 1001, NULL, 1001 }, { 1000, false },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_NAME_MISMATCH },
	{ "gid of a group the user is not in", { 1001, "alice", 0 }, { 1000, false },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_GID_MISMATCH },
	{ "gid 0 with --allow-root-jobs, not a member", { 1001, "alice", 0 }, { 1000, true },
	  { true, "alice", 1001, false }, MXQ_IDENTITY_GID_MISMATCH },
};

START_TEST(test_identity_decide)
{
	for (size_t i = 0; i < MX_ARRAY_SIZE(identity_cases); i++) {
		enum mxq_identity_verdict v = mxq_identity_decide(&identity_cases[i].claim,
								  &identity_cases[i].policy,
								  &identity_cases[i].facts);
		ck_assert_msg(v == identity_cases[i].want, "%s: got %s, want %s",
			      identity_cases[i].what, mxq_identity_verdict_name(v),
			      mxq_identity_verdict_name(identity_cases[i].want));
	}
}
END_TEST

/* mxq_identity_verify with the real user database: root is in every one */
START_TEST(test_identity_verify_root)
{
	struct mxq_identity_claim root = { 0, "root", 0 }, fake = { 0, "toor", 0 };
	struct mxq_identity_policy strict = { 1000, false }, open = { 1000, true };
	char name[64] = "", reason[256];

	ck_assert_int_eq(mxq_identity_verify(&root, &strict, name, sizeof(name), reason, sizeof(reason)),
			 MXQ_IDENTITY_ROOT);
	ck_assert_msg(strstr(reason, "--allow-root-jobs"), "reason: %s", reason);
	ck_assert_int_eq(mxq_identity_verify(&root, &open, name, sizeof(name), reason, sizeof(reason)),
			 MXQ_IDENTITY_OK);
	ck_assert_str_eq(name, "root");
	ck_assert_int_eq(mxq_identity_verify(&fake, &open, NULL, 0, reason, sizeof(reason)),
			 MXQ_IDENTITY_NAME_MISMATCH);
	ck_assert_msg(strstr(reason, "'toor' is not the name of uid 0 ('root')"), "reason: %s", reason);
}
END_TEST

/* ------------------------------------------------------ host names etc. */

static const struct {
	const char *name;
	bool valid;
} hostname_cases[] = {
	{ "node1", true }, { "node-1.example.org", true }, { "n_2", true }, { "10.1.2.3", true },
	{ "A", true }, { "x.y", true },
	{ "", false }, { "--inject=$(id)", false }, { "-n", false }, { ".node", false },
	{ "node.", false }, { "a..b", false }, { "a b", false }, { "a;b", false },
	{ "a/b", false }, { "a\nb", false }, { "a$b", false }, { "_x", false }, { "x.-y", false },
	{ "\033[2J", false }, { "n\xc3\xa9", false },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true },    /* 64 */
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false },   /* 65 */
};

START_TEST(test_hostname_rule)
{
	char err[256];

	for (size_t i = 0; i < MX_ARRAY_SIZE(hostname_cases); i++) {
		int r = mx_hostname_check(hostname_cases[i].name, err, sizeof(err));
		ck_assert_msg((r == 0) == hostname_cases[i].valid, "'%s': got %d (%s)",
			      hostname_cases[i].name, r, r ? err : "ok");
		if (r < 0)
			for (const char *p = err; *p; p++)
				ck_assert_msg((unsigned char)*p >= 0x20 && *p != 0x7f,
					      "control character in the message for case %zu", i);
	}
}
END_TEST

static const struct {
	const char *value;
	bool valid;
} host_port_cases[] = {
	{ "bmc1", true }, { "bmc1:623", true }, { "10.0.0.1", true }, { "10.0.0.1:22", true },
	{ "[::1]", true }, { "[::1]:623", true }, { "fe80::1", true }, { "[2001:db8::2]:65535", true },
	{ "bmc1:0", false }, { "bmc1:65536", false }, { "bmc1:", false }, { "bmc1:x", false },
	{ "--x", false }, { "-oProxyCommand=x", false }, { "[::1", false }, { "[::1]x", false },
	{ "[]:1", false }, { "[zz::1]:1", false }, { "fe80::1::2", false }, { "a b:1", false },
	{ "bmc1:+22", false }, { "", false },
};

START_TEST(test_host_port_rule)
{
	char err[256];

	for (size_t i = 0; i < MX_ARRAY_SIZE(host_port_cases); i++) {
		int r = mx_host_port_check(host_port_cases[i].value, err, sizeof(err));
		ck_assert_msg((r == 0) == host_port_cases[i].valid, "'%s': got %d (%s)",
			      host_port_cases[i].value, r, r ? err : "ok");
	}
}
END_TEST

START_TEST(test_ipv4_and_class)
{
	static const struct { const char *v; bool ipv4, cls; } cases[] = {
		{ "10.1.255.255", true, true }, { "255.255.255.255", true, true },
		{ "1.2.3", false, true }, { "256.1.1.1", false, true }, { "::1", false, false },
		{ "--x", false, true }, { "big.1", false, true }, { "a b", false, false },
		{ "a$b", false, false }, { "", false, false }, { "x\033y", false, false },
	};
	char err[256];

	for (size_t i = 0; i < MX_ARRAY_SIZE(cases); i++) {
		ck_assert_msg((mx_ipv4_check(cases[i].v, err, sizeof(err)) == 0) == cases[i].ipv4,
			      "ipv4 '%s'", cases[i].v);
		ck_assert_msg((mxq_power_class_name_check(cases[i].v, err, sizeof(err)) == 0) ==
			      cases[i].cls, "class '%s'", cases[i].v);
	}
}
END_TEST

/* ------------------------------------------------------ terminal text */

START_TEST(test_term_escape)
{
	static const struct { const char *in, *field, *stream; } cases[] = {
		{ "plain", "plain", "plain" },
		{ "a\033[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb" },
		{ "bell\007", "bell\\x07", "bell\\x07" },
		{ "line\nnext\tx", "line\\x0anext\\x09x", "line\nnext\tx" },
		{ "cr\r", "cr\\x0d", "cr\\x0d" },
		{ "del\x7f", "del\\x7f", "del\\x7f" },
		{ "caf\xc3\xa9", "caf\xc3\xa9", "caf\xc3\xa9" },             /* UTF-8 passes */
		{ "csi\xc2\x9b", "csi\\xc2\\x9b", "csi\\xc2\\x9b" },          /* C1 CSI as UTF-8 */
		{ "raw\x9b", "raw\\x9b", "raw\\x9b" },                          /* not UTF-8 */
		{ "cut\xe2\x82", "cut\\xe2\\x82", "cut\\xe2\\x82" },            /* truncated */
		{ "\xe2\x82\xac", "\xe2\x82\xac", "\xe2\x82\xac" },             /* euro sign */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80" },       /* surrogate */
	};
	char out[256];

	for (size_t i = 0; i < MX_ARRAY_SIZE(cases); i++) {
		size_t n = strlen(cases[i].in);

		ck_assert_str_eq(mx_term_field(cases[i].in, out, sizeof(out)), cases[i].field);
		mx_term_escape(cases[i].in, n, true, true, out, NULL);
		ck_assert_str_eq(out, cases[i].stream);
	}
	ck_assert_str_eq(mx_term_field(NULL, out, sizeof(out)), "");
}
END_TEST

/* A stream split inside a UTF-8 sequence is put together again. */
START_TEST(test_term_escape_split)
{
	const char *text = "x\xe2\x82\xac";
	char out[64];
	size_t used = 0, len;

	len = mx_term_escape(text, 3, true, false, out, &used);
	ck_assert_uint_eq(used, 1);
	ck_assert_uint_eq(len, 1);
	ck_assert_str_eq(out, "x");
	mx_term_escape(text + used, 3, true, true, out, NULL);
	ck_assert_str_eq(out, "\xe2\x82\xac");
}
END_TEST

/* ------------------------------------------------------ safe directories */

START_TEST(test_dir_check_safe)
{
	char base[] = "/tmp/test_trust.XXXXXX", path[256], err[512];
	uid_t me = geteuid();

	ck_assert_ptr_nonnull(mkdtemp(base));
	ck_assert_int_eq(chmod(base, 0755), 0);
	snprintf(path, sizeof(path), "%s/ok", base);
	ck_assert_int_eq(mx_dir_ensure_safe(path, me, err, sizeof(err)), 0);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), 0);
	/* the directory itself: no group or other write, sticky or not */
	ck_assert_int_eq(chmod(path, 01777), 0);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "writable by others"), "%s", err);
	ck_assert_int_eq(chmod(path, 0775), 0);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "writable by its group"), "%s", err);
	/* a directory above: sticky is fine, writable without sticky is not */
	ck_assert_int_eq(chmod(path, 0755), 0);
	ck_assert_int_eq(chmod(base, 01777), 0);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), 0);
	ck_assert_int_eq(chmod(base, 0777), 0);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, base), "%s", err);
	ck_assert_int_eq(chmod(base, 0755), 0);
	/* a file is not a directory; a missing one is -ENOENT */
	snprintf(path, sizeof(path), "%s/missing", base);
	ck_assert_int_eq(mx_dir_check_safe(path, me, err, sizeof(err)), -ENOENT);
	/* per-job directories: an existing entry is never reused */
	snprintf(path, sizeof(path), "%s/ok", base);
	ck_assert_int_eq(mx_subdir_create(path, "job1", false, 0, 0), 0);
	ck_assert_int_eq(mx_subdir_create(path, "job1", false, 0, 0), -EEXIST);
	ck_assert_int_eq(mx_subdir_create(path, "../x", false, 0, 0), -EINVAL);
	snprintf(path, sizeof(path), "%s/ok/link", base);
	ck_assert_int_eq(symlink(base, path), 0);
	snprintf(path, sizeof(path), "%s/ok", base);
	ck_assert_int_eq(mx_subdir_create(path, "link", false, 0, 0), -EEXIST);
	ck_assert_int_eq(mx_rmtree(base), 0);
}
END_TEST

/* A program to run as a user (callbacks): the file and its directories. */
START_TEST(test_file_check_safe)
{
	char base[] = "/tmp/test_trust.XXXXXX", dir[256], file[300], link[300], real[4096], err[512];
	uid_t me = geteuid();
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(base));
	ck_assert_int_eq(chmod(base, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/bin", base);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/cb", dir);
	fd = open(file, O_WRONLY | O_CREAT, 0755);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(chmod(file, 0755), 0);
	ck_assert_int_eq(mx_file_check_safe(file, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), 0);
	ck_assert_str_eq(real, file);
	/* a symlink counts where it leads, and that is what runs */
	snprintf(link, sizeof(link), "%s/link", base);
	ck_assert_int_eq(symlink(file, link), 0);
	ck_assert_int_eq(mx_file_check_safe(link, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), 0);
	ck_assert_str_eq(real, file);
	/* the file: no group or other write */
	ck_assert_int_eq(chmod(file, 0775), 0);
	ck_assert_int_eq(mx_file_check_safe(link, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "is writable by its group (mode 0775)") && strstr(err, file), "%s", err);
	ck_assert_int_eq(chmod(file, 0757), 0);
	ck_assert_int_eq(mx_file_check_safe(file, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, "is writable by others"), "%s", err);
	ck_assert_int_eq(chmod(file, 0755), 0);
	/* its directory: writable by others only with the sticky bit */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert_int_eq(mx_file_check_safe(file, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), -EPERM);
	ck_assert_msg(strstr(err, dir) && strstr(err, "is writable by others"), "%s", err);
	ck_assert_int_eq(chmod(dir, 01777), 0);
	ck_assert_int_eq(mx_file_check_safe(file, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), 0);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	/* owned by somebody else */
	if (me == 0) {
		ck_assert_int_eq(chown(file, 4242, 0), 0);
		ck_assert_int_eq(mx_file_check_safe(file, 1000, "the job's user", real, sizeof(real),
						    err, sizeof(err)), -EPERM);
		ck_assert_msg(strstr(err, "belongs to uid 4242, not to root or the job's user"), "%s", err);
		ck_assert_int_eq(chown(file, 0, 0), 0);
		ck_assert_int_eq(mx_file_check_safe(file, 1000, "the job's user", real, sizeof(real),
						    err, sizeof(err)), 0);
	}
	/* not a regular file; missing */
	ck_assert_int_eq(mx_file_check_safe(dir, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "is not a regular file"), "%s", err);
	snprintf(file, sizeof(file), "%s/missing", dir);
	ck_assert_int_eq(mx_file_check_safe(file, me, "the job's user", real, sizeof(real), err,
					    sizeof(err)), -ENOENT);
	ck_assert_int_eq(mx_rmtree(base), 0);
}
END_TEST

static Suite *trust_suite(void)
{
	Suite *s = suite_create("trust");
	TCase *tc = tcase_create("trust");

	tcase_add_test(tc, test_identity_decide);
	tcase_add_test(tc, test_identity_verify_root);
	tcase_add_test(tc, test_hostname_rule);
	tcase_add_test(tc, test_host_port_rule);
	tcase_add_test(tc, test_ipv4_and_class);
	tcase_add_test(tc, test_term_escape);
	tcase_add_test(tc, test_term_escape_split);
	tcase_add_test(tc, test_dir_check_safe);
	tcase_add_test(tc, test_file_check_safe);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trust_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
