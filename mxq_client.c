/*
 * mxq_client - complaints of the command-line tools (see mxq_client.h).
 */
#include "mxq_client.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mx_db.h"
#include "mx_log.h"
#include "mx_util.h"
#include "mxq_privs.h"
#include "mxq_schema.h"

static const char *program = "mxq";

void mxq_client_set_program(const char *name)
{
	program = name;
	mx_log_set_program(name);
}

const char *mxq_client_program(void)
{
	return program;
}

static void vcomplain(const char *fmt, va_list ap)
{
	/* complaints are errors: under systemd they reach the journal at LOG_ERR */
	fprintf(stderr, "%s%s: ", mx_log_stderr_is_journal() ? "<3>" : "", program);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void mxq_complain(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
}

void mxq_complain_lines(const char *text)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");

		if (n)
			mxq_complain("%.*s", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

int mxq_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
	return MXQ_EXIT_USAGE;
}

int mxq_invalid(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int mxq_failure(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcomplain(fmt, ap);
	va_end(ap);
	return MXQ_EXIT_FAILURE;
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

static int connect_checked(struct mx_db **ret_db, const char *defaults_file, const char *group,
			   bool need_current)
{
	bool builtin = (!defaults_file || strcmp(defaults_file, MX_DB_DEFAULT_FILE) == 0) &&
		       group && strcmp(group, MX_DB_GROUP_CLIENT) == 0;
	char err[1024];
	int r, d;

	/* Installed set-id, the elevated ids read the built-in client
	 * credentials and nothing else: a file or group the caller chose is
	 * read with the caller's own rights. Either way they are gone for good
	 * before the first query. */
	r = builtin ? mxq_privs_raise() : mxq_privs_drop();
	if (r == 0)
		r = mx_db_connect(ret_db, defaults_file, group, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "cannot change privileges: %s", strerror(-r));
	d = mxq_privs_drop();
	if (d < 0) {
		mxq_complain("cannot drop privileges: %s", strerror(-d));
		_exit(1);
	}
	if (r == -ENOMEM)
		mxq_complain("out of memory");
	else if (r < 0 && group && !strstr(err, group))
		mxq_complain("%s (group [%s])", err, group);
	else if (r < 0)
		mxq_complain("%s", err);
	if (r < 0)
		return r;
	r = mxq_schema_check(*ret_db, need_current, err, sizeof(err));
	if (r < 0) {
		mxq_complain("%s", err);
		mx_db_close(*ret_db);
		*ret_db = NULL;
	}
	return r;
}

int mxq_client_connect(struct mx_db **ret_db, const char *defaults_file, const char *group)
{
	return connect_checked(ret_db, defaults_file, group, false);
}

int mxq_client_connect_current(struct mx_db **ret_db, const char *defaults_file,
			       const char *group)
{
	return connect_checked(ret_db, defaults_file, group, true);
}

/* ------------------------------------------------------------------ */
/* terminal-safe stdout                                                */

struct escape_cookie {
	int fd;
	char pending[4];        /* an incomplete UTF-8 sequence from the last write */
	size_t npending;
};

static bool write_all(int fd, const char *p, size_t n)
{
	return mx_write_all(fd, p, n) == 0;
}

static ssize_t escape_write(void *cookie, const char *buf, size_t n)
{
	struct escape_cookie *c = cookie;
	size_t total = c->npending + n, used = 0, len;
	char *in = malloc(total), *out = malloc(4 * total + 1);

	if (!in || !out) {
		free(in);
		free(out);
		errno = ENOMEM;
		return -1;
	}
	memcpy(in, c->pending, c->npending);
	memcpy(in + c->npending, buf, n);
	len = mx_term_escape(in, total, true, false, out, &used);
	c->npending = total - used;   /* at most 3 bytes of a started sequence */
	memcpy(c->pending, in + used, c->npending);
	free(in);
	if (!write_all(c->fd, out, len)) {
		free(out);
		return -1;
	}
	free(out);
	return (ssize_t)n;
}

static int escape_close(void *cookie)
{
	struct escape_cookie *c = cookie;
	char out[4 * sizeof(c->pending) + 1];
	size_t len = mx_term_escape(c->pending, c->npending, true, true, out, NULL);

	write_all(c->fd, out, len);
	free(c);
	return 0;
}

int mxq_client_escape_stdout(void)
{
	cookie_io_functions_t io = { .write = escape_write, .close = escape_close };
	struct escape_cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c)
		return -ENOMEM;
	c->fd = STDOUT_FILENO;
	fflush(stdout);
	f = fopencookie(c, "w", io);
	if (!f) {
		free(c);
		return -errno;
	}
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	stdout = f;
	return 0;
}
