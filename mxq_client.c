/*
 * mxq_client - complaints of the command-line tools (see mxq_client.h).
 */
#include "mxq_client.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mx_db.h"
#include "mx_log.h"
#include "mx_util.h"

static const char *program = "mxq";

void mxq_client_set_program(const char *name)
{
	program = name;
}

void mxq_complain(const char *fmt, ...)
{
	va_list ap;

	/* complaints are errors: under systemd they reach the journal at LOG_ERR */
	fprintf(stderr, "%s%s: ", mx_log_stderr_is_journal() ? "<3>" : "", program);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void mxq_complain_getopt(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	bool is_long = strncmp(arg, "--", 2) == 0;

	if (c == ':')
		mxq_complain("option '%s' needs a value (try '%s --help')", arg, program);
	else if (is_long && strchr(arg, '='))
		mxq_complain("unknown option or unexpected value '%s' (try '%s --help')", arg, program);
	/* a long option's error leaves optopt at its value, or 0 */
	else if (is_long || !optopt || optopt >= 256)
		mxq_complain("unknown option '%s' (try '%s --help')", arg, program);
	else
		mxq_complain("unknown option '-%c' (try '%s --help')", optopt, program);
}

int mxq_parse_id(const char *option, const char *arg, uint64_t *ret)
{
	uint64_t v;

	if (mx_strtou64(arg, &v) < 0 || v == 0) {
		mxq_complain("--%s: '%s' is not a positive number", option, arg);
		return -EINVAL;
	}
	if (ret)
		*ret = v;
	return 0;
}

int mxq_client_connect(struct mx_db **ret_db, const char *defaults_file, const char *group)
{
	char err[1024];
	int r;

	r = mx_db_connect(ret_db, defaults_file, group, err, sizeof(err));
	if (r == -ENOMEM)
		mxq_complain("out of memory");
	else if (r < 0 && group && !strstr(err, group))
		mxq_complain("%s (group [%s])", err, group);
	else if (r < 0)
		mxq_complain("%s", err);
	return r;
}
