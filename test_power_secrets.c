/*
 * test_power_secrets - the power manager's secrets file (mxq_power_secrets.c):
 * refusal of files group or others can access (naming the file), sections
 * and per-host overrides, syntax errors with file:line, and that no error
 * message ever repeats a value.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxq_power_secrets.h"

static char dir[] = "/tmp/test_power_secrets.XXXXXX";

static const char *write_file(const char *name, const char *text, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

static const char *good =
	"# comment\n"
	"[default]\n"
	"ipmi_user = ADMIN\n"
	"ipmi_password =  s3cret-default  \n"
	"ssh_key = /etc/mxq/key\n"
	"redfish_user = rfadmin\n"
	"redfish_password = s3cret-rf-default\n"
	"\n"
	"[node1]\n"
	"ipmi_password = s3cret-node1\n"
	"redfish_password = s3cret-rf-node1\n"
	"[node2.example.org]\n"
	"ssh_user = maint\n";

START_TEST(refuses_group_or_other_access)
{
	static const mode_t modes[] = { 0640, 0604, 0660, 0644 };
	struct mxq_power_secrets *s = NULL;
	char err[512];

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *p = write_file("secrets", good, modes[i]);
		err[0] = '\0';
		ck_assert_int_eq(mxq_power_secrets_load(p, &s, err, sizeof(err)), -EPERM);
		ck_assert_ptr_null(s);
		ck_assert_ptr_nonnull(strstr(err, p));
		ck_assert_ptr_null(strstr(err, "s3cret"));
	}
}
END_TEST

START_TEST(sections_and_overrides)
{
	struct mxq_power_secrets *s = NULL;
	struct mxq_power_host_secrets h;
	char err[512] = "";
	const char *p = write_file("secrets", good, 0600);

	ck_assert_int_eq(mxq_power_secrets_load(p, &s, err, sizeof(err)), 0);
	mxq_power_secrets_for(s, "node1", &h);
	ck_assert_str_eq(h.ipmi_password, "s3cret-node1");
	ck_assert_str_eq(h.ipmi_user, "ADMIN");
	ck_assert_str_eq(h.redfish_user, "rfadmin");
	ck_assert_str_eq(h.redfish_password, "s3cret-rf-node1");
	mxq_power_secrets_for(s, "node1.example.org", &h);   /* short name section */
	ck_assert_str_eq(h.ipmi_password, "s3cret-node1");
	mxq_power_secrets_for(s, "node3", &h);
	ck_assert_str_eq(h.ipmi_password, "s3cret-default");
	ck_assert_str_eq(h.redfish_password, "s3cret-rf-default");
	ck_assert_ptr_null(h.ssh_known_hosts);
	mxq_power_secrets_for(s, "node2.example.org", &h);
	ck_assert_str_eq(h.ssh_user, "maint");
	ck_assert_str_eq(h.ssh_key, "/etc/mxq/key");
	mxq_power_secrets_free(s);
	mxq_power_secrets_for(NULL, "node1", &h);
	ck_assert_ptr_null(h.ipmi_password);
	mxq_power_secrets_free(NULL);
}
END_TEST

START_TEST(syntax_errors_name_file_and_line)
{
	struct mxq_power_secrets *s = NULL;
	char err[512] = "";
	const char *p;

	p = write_file("bad1", "[default]\nipmi_password = topsecret\nipmi_pasword = topsecret\n", 0600);
	ck_assert_int_eq(mxq_power_secrets_load(p, &s, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":3:"));
	ck_assert_ptr_nonnull(strstr(err, "ipmi_pasword"));
	ck_assert_ptr_null(strstr(err, "topsecret"));
	p = write_file("bad2", "ipmi_password = topsecret\n", 0600);
	ck_assert_int_eq(mxq_power_secrets_load(p, &s, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1:"));
	ck_assert_ptr_null(strstr(err, "topsecret"));
	p = write_file("bad3", "[default\n", 0600);
	ck_assert_int_eq(mxq_power_secrets_load(p, &s, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, p));
	ck_assert_int_eq(mxq_power_secrets_load("/nonexistent/secrets", &s, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/secrets"));
	ck_assert_ptr_null(s);
}
END_TEST

START_TEST(check_private)
{
	char err[512] = "";
	const char *p = write_file("key", "x", 0644);

	ck_assert_int_eq(mxq_power_secrets_check_private(p, "ssh key", err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, p));
	ck_assert_int_eq(chmod(p, 0600), 0);
	ck_assert_int_eq(mxq_power_secrets_check_private(p, "ssh key", err, sizeof(err)), 0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("power_secrets");
	TCase *tc = tcase_create("secrets");
	SRunner *sr;
	int failed;

	if (!mkdtemp(dir))
		return EXIT_FAILURE;
	tcase_add_test(tc, refuses_group_or_other_access);
	tcase_add_test(tc, sections_and_overrides);
	tcase_add_test(tc, syntax_errors_name_file_and_line);
	tcase_add_test(tc, check_private);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			failed++;
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
