/*
 * mx_log - line-oriented logging to stderr or a file.
 *
 * Each call writes exactly one line with a single write(2) so lines from
 * several processes appending to the same file do not interleave; control
 * characters inside the message (a newline in a text from outside) become
 * spaces.
 *
 * When stderr is connected to the systemd journal (JOURNAL_STREAM names the
 * device and inode of our stderr, see systemd.exec(5)), each line starts
 * with the syslog priority as "<N>" and carries no timestamp of its own: the
 * journal records the time, and `journalctl -p warning` then selects by the
 * level of every line. A log file set with --log gets the plain format.
 *
 * Lines the log cannot take (a full or failing disk) are counted; the next
 * line that gets through is followed by one saying how many were lost and
 * why (per process).
 */
#define _GNU_SOURCE
#include "mx_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "mxq";
static enum mx_log_level log_level = MX_LOG_INFO;
static int log_fd = STDERR_FILENO;
static char log_path[4096];
static int stderr_is_journal = -1;	/* -1: not checked yet */
static unsigned long lines_lost;	/* since the last line that got through */
static int lost_errno;

static const char *level_name(enum mx_log_level level)
{
	switch (level) {
	case MX_LOG_ERR:     return "ERROR";
	case MX_LOG_WARNING: return "WARNING";
	case MX_LOG_NOTICE:  return "NOTICE";
	case MX_LOG_INFO:    return "INFO";
	case MX_LOG_DEBUG:   return "DEBUG";
	}
	return "LOG";
}

void mx_log_set_program(const char *name) { log_program = name; }
void mx_log_set_level(enum mx_log_level level) { log_level = level; }
enum mx_log_level mx_log_get_level(void) { return log_level; }

int mx_log_set_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	if (log_fd != STDERR_FILENO)
		close(log_fd);
	log_fd = fd;
	snprintf(log_path, sizeof(log_path), "%s", path);
	return 0;
}

int mx_log_reopen(void)
{
	if (!log_path[0])
		return 0;
	return mx_log_set_file(log_path);
}

int mx_log_fd(void) { return log_fd; }

bool mx_log_stderr_is_journal(void)
{
	const char *env;
	unsigned long long dev, ino;
	struct stat st;

	if (stderr_is_journal >= 0)
		return stderr_is_journal;
	stderr_is_journal = 0;
	env = getenv("JOURNAL_STREAM");
	if (env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
	    fstat(STDERR_FILENO, &st) == 0 &&
	    (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino)
		stderr_is_journal = 1;
	return stderr_is_journal;
}

void mx_log_close_other_fds(int keep_fd)
{
	int keep[2] = { log_fd, keep_fd };
	unsigned from = 3;

	if (keep[0] > keep[1]) {
		keep[0] = keep_fd;
		keep[1] = log_fd;
	}
	for (int i = 0; i < 2; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

void mx_vlog(enum mx_log_level level, const char *fmt, va_list ap)
{
	char line[4096];
	struct timespec ts;
	struct tm tm;
	size_t n, head;
	int saved_errno = errno;

	if (level > log_level)
		return;
	if (log_fd == STDERR_FILENO && mx_log_stderr_is_journal()) {
		n = (size_t)snprintf(line, sizeof(line), "<%d>%s: ", (int)level, level_name(level));
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		n = strftime(line, sizeof(line), "%Y-%m-%d %H:%M:%S", &tm);
		n += snprintf(line + n, sizeof(line) - n, ".%03ld %s[%d] %s: ",
			      ts.tv_nsec / 1000000, log_program, (int)getpid(),
			      level_name(level));
	}
	head = n;
	if (n < sizeof(line)) {
		int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		if (m > 0)
			n += (size_t)m;
	}
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	while (n > 0 && line[n - 1] == '\n')
		n--;
	/* one message, one line: text from outside (a BMC's error message, a
	 * database value) must not start a line of its own ("\n<0>..." on a
	 * journal stream) or drive a terminal */
	for (size_t i = head; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	line[n++] = '\n';
	if (write(log_fd, line, n) < 0) {
		lines_lost++;
		lost_errno = errno;
	} else if (lines_lost) {
		unsigned long lost = lines_lost;

		lines_lost = 0;
		mx_log(MX_LOG_WARNING, "log: %lu earlier line(s) lost: %s", lost,
		       strerror(lost_errno));
	}
	errno = saved_errno;
}

void mx_log(enum mx_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mx_vlog(level, fmt, ap);
	va_end(ap);
}
