/*
 * mxq_client - what the command-line tools (mxqsub, mxqdump, mxqkill)
 * share: one-line complaints prefixed with the program's name and the
 * wording of getopt errors. getopt itself is told to stay quiet (":" at the
 * start of the short options) so that every tool reports bad options alike.
 */
#ifndef MXQ_CLIENT_H
#define MXQ_CLIENT_H

#include <stdint.h>

/* Name used as prefix of complaints ("mxqsub"); not copied. */
void mxq_client_set_program(const char *name);

/* "PROGRAM: message" and a newline on stderr. */
void mxq_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
