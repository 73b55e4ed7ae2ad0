/*
 * mx_log - the one logging facility of the tree.
 *
 * Tools and daemons log; library code (mx_db, mx_util, keywordset, the
 * expression parser, the power policy) returns errors and never logs.
 * Messages go to stderr (or a log file set with mx_log_set_file()), one line
 * each, prefixed with a timestamp, the program name and the level; on a
 * journal stream with the priority as "<N>" instead of the timestamp.
 */
#ifndef MX_LOG_H
#define MX_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum mx_log_level {
	MX_LOG_ERR = 3,
	MX_LOG_WARNING = 4,
	MX_LOG_NOTICE = 5,
	MX_LOG_INFO = 6,
	MX_LOG_DEBUG = 7,
};

/* Program name used as prefix (not copied: pass a string that outlives use). */
void mx_log_set_program(const char *name);
/* Messages above this level are dropped. Default MX_LOG_INFO. */
void mx_log_set_level(enum mx_log_level level);
enum mx_log_level mx_log_get_level(void);
/* Append to PATH instead of stderr. Returns 0 or negative errno. */
int mx_log_set_file(const char *path);
/* Re-open the log file (after rotation). Returns 0 or negative errno. */
int mx_log_reopen(void);

/* True when stderr is a systemd journal stream (JOURNAL_STREAM matches it):
 * lines written there should start with "<N>", the syslog priority. Checked
 * once per process. */
bool mx_log_stderr_is_journal(void);

/* File descriptor log lines go to (stderr or the log file). */
int mx_log_fd(void);
/* Close every inherited descriptor >= 3 except the log's and KEEP_FD (-1
 * for none): for forked children (reapers, callback supervisors) that must
 * not hold the parent's database socket or lock files open. */
void mx_log_close_other_fds(int keep_fd);

void mx_log(enum mx_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mx_vlog(enum mx_log_level level, const char *fmt, va_list ap);

#define mx_log_err(...)     mx_log(MX_LOG_ERR, __VA_ARGS__)
#define mx_log_warning(...) mx_log(MX_LOG_WARNING, __VA_ARGS__)
#define mx_log_notice(...)  mx_log(MX_LOG_NOTICE, __VA_ARGS__)
#define mx_log_info(...)    mx_log(MX_LOG_INFO, __VA_ARGS__)
#define mx_log_debug(...)   mx_log(MX_LOG_DEBUG, __VA_ARGS__)

#endif
