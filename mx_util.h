/*
 * mx_util - small generic helpers: strict number parsing, the unit syntax
 * of mxqsub's --memory/--runtime/--tmpdir, string and /proc helpers.
 *
 * Every parser is strict: the whole string must be consumed, no sign where
 * none is allowed, overflow is an error. Functions return 0 or a negative
 * errno (-EINVAL malformed, -ERANGE out of range) and leave ret_* untouched
 * on failure. Nothing here logs.
 */
#ifndef MX_UTIL_H
#define MX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Cleanup helpers for __attribute__((cleanup)). */
void mx_free_ptr(void *pp);     /* frees *(void **)pp */
void mx_close_fd(int *fd);      /* closes *fd when >= 0 */
#define _mx_cleanup_free_ __attribute__((cleanup(mx_free_ptr)))

/* Decimal integers, whole string, optional surrounding blanks refused. */
int mx_strtou64(const char *s, uint64_t *ret);
int mx_strtoi64(const char *s, int64_t *ret);
int mx_strtou32(const char *s, uint32_t *ret);
int mx_strtoi32(const char *s, int32_t *ret);
/* Decimal floating point (strtod), whole string, finite. */
int mx_strtod(const char *s, double *ret);
/* Value of one hex digit (0-9, a-f, A-F), or -1 for any other character. */
int mx_hex_digit(char c);

/*
 * Memory/size string to MiB, rounded up: a sequence of NUMBER[UNIT] terms
 * added together ("2G", "1.5G", "1G512M", "512"). Units (case-insensitive):
 * T, G, M, K (KiB, rounded up to whole MiB). A term without unit uses
 * default_unit ('M' for --memory, 'G' for --tmpdir). Zero is allowed.
 */
int mx_parse_size_mib(const char *s, char default_unit, uint64_t *ret_mib);

/*
 * Runtime string to minutes, rounded up: terms NUMBER[UNIT] added together
 * ("1d12h", "90m", "2h30m", "1.5h", "60"); units y (365 d), w, d, h, m, s
 * (seconds, rounded up to minutes). A bare number means minutes.
 */
int mx_parse_runtime_min(const char *s, uint64_t *ret_minutes);
/*
 * Duration string to seconds, rounded up: the terms and units of
 * mx_parse_runtime_min() ("1h30m", "90s", "1.5d"), but a bare number means
 * seconds. The one duration syntax of every tool except mxqsub/mxqd
 * --runtime, whose bare number stays minutes as in upstream MXQ.
 */
int mx_parse_duration_s(const char *s, uint64_t *ret_seconds);

/* Human forms for output: "1.5G", "3d2h". buf receives at most len bytes. */
void mx_format_size_mib(uint64_t mib, char *buf, size_t len);
void mx_format_runtime_min(uint64_t minutes, char *buf, size_t len);

/* malloc'ed printf, NULL on ENOMEM. */
char *mx_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "node1.example.org" -> "node1" into buf (truncated to len). */
void mx_short_hostname(const char *hostname, char *buf, size_t len);

/*
 * The host-name rule of mxqd --hostname, applied to every host name read
 * from the database before it is handed to a transport: 1 to
 * MX_HOSTNAME_MAX characters, labels of letters, digits, '-' and '_' that
 * start with a letter or digit, separated by single dots (so never an
 * option, a path or shell syntax). 0, or -EINVAL with one line in err.
 */
#define MX_HOSTNAME_MAX 64
int mx_hostname_check(const char *name, char *err, size_t errlen);
/* The label rule above on the first LEN bytes of NAME, without the length
 * limit (for DNS names of up to 253 characters): true when it holds. */
bool mx_hostname_labels_ok(const char *name, size_t len);
/* HOST[:PORT] with HOST a host name (rule above) or IPv4 address,
 * [IPv6][:PORT], or a bare IPv6 address; PORT 1..65535. 0 or -EINVAL. */
int mx_host_port_check(const char *value, char *err, size_t errlen);
/* An IPv4 address in dotted form. 0 or -EINVAL. */
int mx_ipv4_check(const char *value, char *err, size_t errlen);

/*
 * Terminal safety of text from the database (names, reasons, commands):
 * control characters (C0, DEL, C1) and bytes that are not UTF-8 become
 * "\xNN"; valid UTF-8 text passes. KEEP_LINES lets '\n' and '\t' through
 * (for whole output streams). Unless FINAL, an incomplete UTF-8 sequence at
 * the end is left for the next call (*ret_used says how much was taken).
 * OUT must hold 4 * N + 1 bytes. Returns the length written to OUT.
 */
size_t mx_term_escape(const char *in, size_t n, bool keep_lines, bool final, char *out,
		      size_t *ret_used);
/* One field for a table: S escaped (newlines too) into BUF (truncated to
 * what fits); returns BUF, or "" for NULL. */
const char *mx_term_field(const char *s, char *buf, size_t len);

/* Write all LEN bytes of BUF to FD (again after EINTR and short writes).
 * 0 or negative errno (-EIO when write(2) wrote nothing without a reason). */
int mx_write_all(int fd, const void *buf, size_t len);
/* First line of a file (without newline) into buf. 0 or negative errno. */
int mx_read_first_line(const char *path, char *buf, size_t len);

/* Start time of PID in clock ticks since boot (field 22 of /proc/PID/stat);
 * -ESRCH for a process that has ended and waits to be reaped (a zombie):
 * liveness checks (PID and this time) must not take it for alive. */
int mx_proc_starttime(pid_t pid, unsigned long long *ret);
/* How many file descriptors this process has open (entries of
 * /proc/self/fd, not counting the one that reads it); negative errno
 * (-EMFILE when not even that one can be opened). */
int mx_fds_open(void);
/* Session id of PID (field 6 of /proc/PID/stat). */
int mx_proc_session(pid_t pid, pid_t *ret);
/* What mx_proc_scan() reports of each process (from /proc/PID/stat). */
struct mx_proc_stat {
	pid_t pid;
	pid_t session;
	uint64_t utime_ticks;   /* clock ticks (sysconf(_SC_CLK_TCK)) */
	uint64_t stime_ticks;
	uint64_t rss_pages;
};
/* /proc/PID/stat of one process. 0 or negative errno (-ENOENT: gone). */
int mx_proc_stat_read(pid_t pid, struct mx_proc_stat *ret);
/* PAGES memory pages in KiB. */
uint64_t mx_pages_kib(uint64_t pages);
/* Call FN for every process readable in /proc (processes that vanish
 * during the scan are skipped). FN returns 0 to go on, anything else stops
 * the scan; a negative value is returned. 0 or negative errno. */
int mx_proc_scan(int (*fn)(const struct mx_proc_stat *st, void *ctx), void *ctx);
/* Sum of the resident set size, in KiB, of every process in session SID. */
int mx_session_rss_kib(pid_t sid, uint64_t *ret_kib);
/* Send SIG to every process of session SID (also to those that moved to a
 * process group of their own). Returns how many were signalled, or
 * negative errno; SID <= 1 is refused with -EINVAL. */
int mx_session_kill(pid_t sid, int sig);
/* This boot's id (/proc/sys/kernel/random/boot_id), 36 chars + NUL. */
int mx_boot_id(char buf[static 37]);

/*
 * job_argv encoding, as upstream MXQ stores it: every argument with each
 * backslash doubled, followed by the two characters backslash and '0'.
 * ["a", "b\\c"] <-> "a\\0b\\\\c\\0". Encode returns a malloc'ed string or
 * NULL (ENOMEM). Decode returns a malloc'ed NULL-terminated vector (free
 * with mx_strvec_free) in *ret_argv and its length in *ret_argc, or -EINVAL
 * for a malformed string.
 */
char *mx_argv_encode(char *const *argv);
int mx_argv_decode(const char *s, char ***ret_argv, int *ret_argc);
void mx_strvec_free(char **strvec);

/* mkdir -p with MODE for created components. 0 or negative errno. */
int mx_mkdir_p(const char *path, mode_t mode);
/* rm -rf, not crossing file systems, not following symlinks. */
int mx_rmtree(const char *path);
/* Is the absolute PATH DIR itself or inside it, by the names alone
 * ("/tmp/a" is below "/tmp", "/tmpx" is not; everything is below "/")? */
bool mx_path_is_below(const char *path, const char *dir);
/* The same with symlinks resolved (realpath) in both; of a file (IS_FILE)
 * its directory counts. A name that cannot be resolved is taken as it is. */
bool mx_path_resolved_below(const char *path, bool is_file, const char *dir);

/*
 * fork() with a pipe from the child to the parent. Returns the child's pid
 * in the parent (*ret_fd = read end) and 0 in the child (*ret_fd = write
 * end); the other end is closed on each side, both are O_CLOEXEC. Negative
 * errno when the pipe or the fork fails (nothing left open).
 */
pid_t mx_fork_with_pipe(int *ret_fd);
/*
 * The same, the child born in the cgroup v2 directory CGROUP_FD (clone3
 * CLONE_INTO_CGROUP: no migration afterwards, which costs a write to
 * cgroup.procs and the kernel's cgroup lock). Negative errno (-ENOSYS,
 * -EINVAL on older kernels) when the kernel cannot: then fork and join.
 * Not for a threaded caller (atfork handlers are not run).
 */
pid_t mx_fork_into_cgroup_with_pipe(int cgroup_fd, int *ret_fd);

/* Every signal a program may set back to SIG_DFL, set so: before an exec
 * of something else (a job, a callback), which keeps the ignored ones
 * ignored. (glibc keeps two real-time signals for itself; whatever the
 * parent left on them stays.) */
void mx_signals_default(void);

/* Sleep MS milliseconds (on after a signal that interrupts it). */
void mx_sleep_ms(unsigned long ms);

/* Monotonic and realtime clocks in milliseconds. */
uint64_t mx_now_monotonic_ms(void);
uint64_t mx_now_realtime_ms(void);
/* Monotonic including the time the machine was suspended (or a VM paused,
 * where the guest kernel counts it): for deadlines that other hosts wait
 * out by their clocks (the power manager's lease, its calls' bounds). */
uint64_t mx_now_boottime_ms(void);

#endif
