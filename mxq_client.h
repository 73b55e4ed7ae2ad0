/*
 * mxq_client - what every program (mxqsub, mxqdump, mxqkill, mxqadmin,
 * mxqd, mxq-web, mxq-power-sim) shares on its command line: THE error
 * printer (one line "PROGRAM: message" on stderr), the exit convention and
 * the wording of getopt errors. getopt itself is told to stay quiet (":" at
 * the start of the short options) so that every tool reports bad options
 * alike.
 *
 * The convention, in every tool:
 *   - helpers return 0 or a negative errno, and complain themselves when
 *     they are the ones that know what went wrong;
 *   - main() and the subcommand entry points return an exit status:
 *     MXQ_EXIT_OK, MXQ_EXIT_FAILURE (the request was fine, doing it failed:
 *     database, files, network) or MXQ_EXIT_USAGE (bad option, argument or
 *     input: nothing was done). A usage complaint names the problem and
 *     what to do (usually "try 'PROGRAM --help'").
 */
#ifndef MXQ_CLIENT_H
#define MXQ_CLIENT_H

#include <stdint.h>

enum {
	MXQ_EXIT_OK = 0,
	MXQ_EXIT_FAILURE = 1,
	MXQ_EXIT_USAGE = 2,
};

/* Name used as prefix of complaints ("mxqsub") and of log lines
 * (mx_log_set_program()); not copied. */
void mxq_client_set_program(const char *name);
/* The name set above ("mxq" before). */
const char *mxq_client_program(void);

/* "PROGRAM: message" and a newline on stderr (with the journal's <3> prefix
 * when stderr is the journal). The only error printer of the tools. */
void mxq_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One complaint per line of TEXT (a loader's "file:line: ..." list);
 * empty lines are skipped. */
void mxq_complain_lines(const char *text);

/* mxq_complain(), then MXQ_EXIT_USAGE: `return mxq_usage_error(...);`. */
int mxq_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mxq_complain(), then -EINVAL: for helpers, `return mxq_invalid(...);`. */
int mxq_invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* mxq_complain(), then MXQ_EXIT_FAILURE: `return mxq_failure(...);`. */
int mxq_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Complain about what getopt_long() returned as C (':' for a missing value,
 * anything else for an unknown option) for the option at argv[optind - 1].
 */
void mxq_complain_getopt(int c, char **argv);

struct mx_db;
/*
 * Connect with the defaults file and group; on failure complain once, in one
 * line that names the file and group, and return the negative errno.
 */
int mxq_client_connect(struct mx_db **ret_db, const char *defaults_file, const char *group);

/* The same for tools that use the newest columns (mxqsub, mxqdump): also refuses,
 * with one line, a database older than this build's schema. */
int mxq_client_connect_current(struct mx_db **ret_db, const char *defaults_file,
			       const char *group);

/* A positive id (group, job) given as --OPTION; complains and returns
 * -EINVAL for anything else. RET may be NULL to only check. */
int mxq_parse_id(const char *option, const char *arg, uint64_t *ret);

/*
 * Route stdout through a filter that escapes control characters (except
 * newline and tab) and non-UTF-8 bytes, so text from the database cannot
 * drive the terminal. For table output only: JSON is written unfiltered
 * (jansson escapes it exactly). 0 or negative errno (stdout unchanged).
 */
int mxq_client_escape_stdout(void);

#endif
