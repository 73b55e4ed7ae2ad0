/*
 * mx_util - strict parsers, the size/runtime unit syntax, human formatting,
 * the upstream job_argv encoding, /proc readers, mkdir -p / rm -rf and
 * clocks.
 *
 * Configuration: none. Everything here is a plain function of its inputs
 * (and of /proc for the process helpers).
 *
 * Error handling: every fallible function returns 0 or a negative errno
 * (-EINVAL malformed input, -ERANGE value out of range, otherwise what the
 * system call said) and leaves its ret_* outputs untouched on failure.
 * Nothing here logs.
 *
 * Unit arithmetic is exact: sizes are summed in bytes and runtimes in
 * seconds as 128-bit integers, fractions are converted with rounding up, and
 * only the total is rounded up to MiB / minutes. "0.1M" is therefore 1 MiB,
 * "1G512M" is exactly 1536 MiB and "30s" is 1 minute.
 */
#include "mx_util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

typedef unsigned __int128 mx_u128;

/* ------------------------------------------------------------------ */
/* cleanup helpers                                                     */

void mx_free_ptr(void *pp)
{
	void **p = pp;

	free(*p);
	*p = NULL;
}

void mx_close_fd(int *fd)
{
	int saved_errno = errno;

	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	errno = saved_errno;
}

/* ------------------------------------------------------------------ */
/* strict integers                                                     */

/*
 * Digits only, at least one, value must fit in u64. Accepts no sign, no
 * blanks, no base prefix; strtoull would silently accept all three.
 */
static int parse_digits_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

int mx_strtou64(const char *s, uint64_t *ret)
{
	return parse_digits_u64(s, ret);
}

int mx_strtoi64(const char *s, int64_t *ret)
{
	bool negative = false;
	uint64_t mag;
	int r;

	if (!s)
		return -EINVAL;
	if (*s == '-' || *s == '+') {
		negative = *s == '-';
		s++;
	}
	r = parse_digits_u64(s, &mag);
	if (r < 0)
		return r;
	if (negative) {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*ret = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > INT64_MAX)
			return -ERANGE;
		*ret = (int64_t)mag;
	}
	return 0;
}

int mx_strtou32(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r = mx_strtou64(s, &v);

	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int mx_strtoi32(const char *s, int32_t *ret)
{
	int64_t v;
	int r = mx_strtoi64(s, &v);

	if (r < 0)
		return r;
	if (v < INT32_MIN || v > INT32_MAX)
		return -ERANGE;
	*ret = (int32_t)v;
	return 0;
}

int mx_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int mx_strtod(const char *s, double *ret)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	/* decimal only: strtod would also take hex floats, "inf" and "nan" */
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
			return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL))
		return -ERANGE;
	if (!isfinite(v))
		return -ERANGE;
	*ret = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* unit terms: NUMBER[UNIT]NUMBER[UNIT]...                             */

/* Fraction digits beyond this only matter as "round up by one". */
#define FRACTION_DIGITS_MAX 18

struct unit {
	char name;
	uint64_t factor; /* bytes or seconds per unit */
};

/*
 * Sum the terms of S, each NUMBER (digits with an optional '.' and at least
 * one more digit) optionally followed by a unit from UNITS. A term without
 * unit uses DEFAULT_FACTOR. The total is in the base quantity (bytes or
 * seconds), rounded up per term, and must stay <= LIMIT.
 */
static int parse_unit_terms(const char *s, const struct unit *units, size_t nunits,
			    bool case_insensitive, uint64_t default_factor,
			    mx_u128 limit, mx_u128 *ret_total)
{
	mx_u128 total = 0;
	const char *p = s;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		uint64_t whole = 0, frac = 0, frac_den = 1, factor = default_factor;
		bool frac_more = false;
		const char *start = p;
		mx_u128 term;

		while (*p >= '0' && *p <= '9') {
			unsigned d = (unsigned)(*p - '0');

			if (whole > (UINT64_MAX - d) / 10)
				return -ERANGE;
			whole = whole * 10 + d;
			p++;
		}
		if (p == start)
			return -EINVAL;
		if (*p == '.') {
			unsigned ndigits = 0;

			p++;
			if (*p < '0' || *p > '9')
				return -EINVAL;
			for (; *p >= '0' && *p <= '9'; p++, ndigits++) {
				if (ndigits < FRACTION_DIGITS_MAX) {
					frac = frac * 10 + (uint64_t)(*p - '0');
					frac_den *= 10;
				} else if (*p != '0') {
					frac_more = true;
				}
			}
		}
		if (*p) {
			size_t i;
			char c = case_insensitive ? (char)toupper((unsigned char)*p) : *p;

			for (i = 0; i < nunits; i++)
				if (units[i].name == c)
					break;
			if (i == nunits)
				return -EINVAL;
			factor = units[i].factor;
			p++;
		}
		if (frac_more)
			frac++;
		term = (mx_u128)whole * factor +
		       ((mx_u128)frac * factor + frac_den - 1) / frac_den;
		/* whole * factor < 2^104: neither the term nor the sum can wrap */
		total += term;
		if (total > limit)
			return -ERANGE;
	}
	*ret_total = total;
	return 0;
}

static const struct unit size_units[] = {
	{ 'T', 1ULL << 40 },
	{ 'G', 1ULL << 30 },
	{ 'M', 1ULL << 20 },
	{ 'K', 1ULL << 10 },
};

int mx_parse_size_mib(const char *s, char default_unit, uint64_t *ret_mib)
{
	const mx_u128 mib = 1ULL << 20;
	uint64_t default_factor = 0;
	mx_u128 bytes;
	int r;

	for (size_t i = 0; i < MX_ARRAY_SIZE(size_units); i++)
		if (size_units[i].name == toupper((unsigned char)default_unit))
			default_factor = size_units[i].factor;
	if (!default_factor)
		return -EINVAL;
	r = parse_unit_terms(s, size_units, MX_ARRAY_SIZE(size_units), true, default_factor,
			     (mx_u128)UINT64_MAX * mib, &bytes);
	if (r < 0)
		return r;
	*ret_mib = (uint64_t)((bytes + mib - 1) / mib);
	return 0;
}

/* Lower case only: an upper-case 'M' would invite reading it as months. */
static const struct unit runtime_units[] = {
	{ 'y', 365ULL * 24 * 3600 },
	{ 'w', 7ULL * 24 * 3600 },
	{ 'd', 24ULL * 3600 },
	{ 'h', 3600 },
	{ 'm', 60 },
	{ 's', 1 },
};

int mx_parse_runtime_min(const char *s, uint64_t *ret_minutes)
{
	mx_u128 seconds;
	int r;

	r = parse_unit_terms(s, runtime_units, MX_ARRAY_SIZE(runtime_units), false, 60,
			     (mx_u128)UINT64_MAX * 60, &seconds);
	if (r < 0)
		return r;
	*ret_minutes = (uint64_t)((seconds + 59) / 60);
	return 0;
}

int mx_parse_duration_s(const char *s, uint64_t *ret_seconds)
{
	mx_u128 seconds;
	int r;

	r = parse_unit_terms(s, runtime_units, MX_ARRAY_SIZE(runtime_units), false, 1,
			     (mx_u128)UINT64_MAX, &seconds);
	if (r < 0)
		return r;
	*ret_seconds = (uint64_t)seconds;
	return 0;
}

/* ------------------------------------------------------------------ */
/* human formatting                                                    */

void mx_format_size_mib(uint64_t mib, char *buf, size_t len)
{
	static const char names[] = { 'M', 'G', 'T', 'P', 'E' };
	unsigned idx = 0;
	uint64_t scale = 1;
	uint64_t whole, tenths;

	if (!buf || !len)
		return;
	while (idx + 1 < sizeof(names) && mib / scale >= 1024) {
		scale *= 1024;
		idx++;
	}
	whole = mib / scale;
	/* one decimal, rounded to nearest */
	tenths = (uint64_t)(((mx_u128)(mib % scale) * 10 + scale / 2) / scale);
	if (tenths == 10) {
		whole++;
		tenths = 0;
	}
	if (tenths)
		snprintf(buf, len, "%llu.%llu%c", (unsigned long long)whole,
			 (unsigned long long)tenths, names[idx]);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)whole, names[idx]);
}

void mx_format_runtime_min(uint64_t minutes, char *buf, size_t len)
{
	uint64_t d = minutes / (24 * 60);
	uint64_t h = minutes / 60 % 24;
	uint64_t m = minutes % 60;
	size_t n = 0;

	if (!buf || !len)
		return;
	buf[0] = '\0';
	if (d)
		n += (size_t)snprintf(buf + n, len - n, "%llud", (unsigned long long)d);
	if (h && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%lluh", (unsigned long long)h);
	if ((m || minutes == 0) && n < len)
		snprintf(buf + n, len - n, "%llum", (unsigned long long)m);
}

char *mx_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void mx_short_hostname(const char *hostname, char *buf, size_t len)
{
	size_t n;

	if (!buf || !len)
		return;
	n = strcspn(hostname, ".");
	if (n >= len)
		n = len - 1;
	memcpy(buf, hostname, n);
	buf[n] = '\0';
}

/* ------------------------------------------------------------------ */
/* files and /proc                                                     */

int mx_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int mx_read_first_line(const char *path, char *buf, size_t len)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int r = 0;

	if (!buf || !len)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	errno = 0;
	n = getline(&line, &cap, f);
	if (n < 0) {
		if (errno) {
			r = -errno;
		} else {
			buf[0] = '\0'; /* empty file: empty line */
		}
	} else {
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if ((size_t)n >= len)
			r = -ENOBUFS;
		else
			memcpy(buf, line, (size_t)n + 1);
	}
	free(line);
	fclose(f);
	return r;
}

/*
 * Fields of /proc/PID/stat after the command name. The name is in
 * parentheses and may itself contain blanks and ')', so parsing starts after
 * the LAST ')'. fields[0] is field 3 (state) of proc(5).
 */
#define STAT_FIELDS 22
static int read_proc_stat(pid_t pid, char *buf, size_t len, char *fields[STAT_FIELDS])
{
	char path[64];
	ssize_t n;
	char *p, *save = NULL;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (int i = 0; i < STAT_FIELDS; i++) {
		fields[i] = strtok_r(i == 0 ? p : NULL, " \n", &save);
		if (!fields[i])
			return -EINVAL;
	}
	return 0;
}

int mx_fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0;  /* the directory's own descriptor */
}

/* proc(5) field number -> index into fields[] */
#define STAT_FIELD(n) ((n) - 3)

int mx_proc_starttime(pid_t pid, unsigned long long *ret)
{
	char buf[1024];
	char *fields[STAT_FIELDS];
	uint64_t v;
	int r;

	r = read_proc_stat(pid, buf, sizeof(buf), fields);
	if (r < 0)
		return r;
	if (fields[STAT_FIELD(3)][0] == 'Z' || fields[STAT_FIELD(3)][0] == 'X')
		return -ESRCH;  /* it has ended: only its parent has not reaped it yet */
	r = mx_strtou64(fields[STAT_FIELD(22)], &v);
	if (r < 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int mx_proc_session(pid_t pid, pid_t *ret)
{
	char buf[1024];
	char *fields[STAT_FIELDS];
	int32_t v;
	int r;

	r = read_proc_stat(pid, buf, sizeof(buf), fields);
	if (r < 0)
		return r;
	r = mx_strtoi32(fields[STAT_FIELD(6)], &v);
	if (r < 0)
		return -EINVAL;
	*ret = (pid_t)v;
	return 0;
}

int mx_proc_stat_read(pid_t pid, struct mx_proc_stat *ret)
{
	char buf[1024];
	char *fields[STAT_FIELDS];
	int32_t session;
	uint64_t utime, stime;
	int64_t rss;
	int r = read_proc_stat(pid, buf, sizeof(buf), fields);

	if (r < 0)
		return r;
	if (mx_strtoi32(fields[STAT_FIELD(6)], &session) < 0 ||
	    mx_strtou64(fields[STAT_FIELD(14)], &utime) < 0 ||
	    mx_strtou64(fields[STAT_FIELD(15)], &stime) < 0 ||
	    mx_strtoi64(fields[STAT_FIELD(24)], &rss) < 0)
		return -EINVAL;
	ret->pid = pid;
	ret->session = session;
	ret->utime_ticks = utime;
	ret->stime_ticks = stime;
	ret->rss_pages = rss < 0 ? 0 : (uint64_t)rss;
	return 0;
}

uint64_t mx_pages_kib(uint64_t pages)
{
	long page_kib = sysconf(_SC_PAGESIZE) / 1024;

	return pages * (uint64_t)(page_kib > 0 ? page_kib : 4);
}

int mx_proc_scan(int (*fn)(const struct mx_proc_stat *st, void *ctx), void *ctx)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while (r == 0 && (de = readdir(dir))) {
		struct mx_proc_stat st;
		uint32_t pid;

		if (mx_strtou32(de->d_name, &pid) < 0 || pid == 0 || pid > INT32_MAX)
			continue;
		/* processes come and go while we scan: skip what vanished */
		if (mx_proc_stat_read((pid_t)pid, &st) < 0)
			continue;
		r = fn(&st, ctx);
	}
	closedir(dir);
	return r < 0 ? r : 0;
}

struct session_sum {
	pid_t sid;
	uint64_t pages;
};

static int add_session_rss(const struct mx_proc_stat *st, void *ctx)
{
	struct session_sum *sum = ctx;

	if (st->session == sum->sid)
		sum->pages += st->rss_pages;
	return 0;
}

int mx_session_rss_kib(pid_t sid, uint64_t *ret_kib)
{
	struct session_sum sum = { .sid = sid };
	int r = mx_proc_scan(add_session_rss, &sum);

	if (r < 0)
		return r;
	*ret_kib = mx_pages_kib(sum.pages);
	return 0;
}

struct session_signal {
	pid_t sid;
	int sig;
	unsigned count;
};

static int signal_session_member(const struct mx_proc_stat *st, void *ctx)
{
	struct session_signal *ss = ctx;

	if (st->session == ss->sid && kill(st->pid, ss->sig) == 0)
		ss->count++;
	return 0;
}

int mx_session_kill(pid_t sid, int sig)
{
	struct session_signal ss = { .sid = sid, .sig = sig };
	int r;

	if (sid <= 1)
		return -EINVAL;
	r = mx_proc_scan(signal_session_member, &ss);
	return r < 0 ? r : (int)ss.count;
}

int mx_boot_id(char buf[static 37])
{
	char line[64];
	int r;

	r = mx_read_first_line("/proc/sys/kernel/random/boot_id", line, sizeof(line));
	if (r < 0)
		return r;
	if (strlen(line) != 36)
		return -EINVAL;
	memcpy(buf, line, 37);
	return 0;
}

/* ------------------------------------------------------------------ */
/* job_argv encoding                                                   */

char *mx_argv_encode(char *const *argv)
{
	size_t len = 1;
	char *out, *q;

	for (char *const *a = argv; a && *a; a++) {
		for (const char *p = *a; *p; p++)
			len += *p == '\\' ? 2 : 1;
		len += 2;
	}
	out = malloc(len);
	if (!out)
		return NULL;
	q = out;
	for (char *const *a = argv; a && *a; a++) {
		for (const char *p = *a; *p; p++) {
			if (*p == '\\')
				*q++ = '\\';
			*q++ = *p;
		}
		*q++ = '\\';
		*q++ = '0';
	}
	*q = '\0';
	return out;
}

void mx_strvec_free(char **strvec)
{
	if (!strvec)
		return;
	for (char **s = strvec; *s; s++)
		free(*s);
	free(strvec);
}

/*
 * Two passes: the first validates and counts, so that a malformed string is
 * refused before anything is allocated. Malformed: a backslash followed by
 * anything but '\' or '0', a lone trailing backslash, or text after the last
 * terminator.
 */
int mx_argv_decode(const char *s, char ***ret_argv, int *ret_argc)
{
	bool terminated = true; /* the empty string is the empty vector */
	size_t argc = 0;
	char **argv;
	const char *p;

	if (!s)
		return -EINVAL;
	for (p = s; *p; p++) {
		terminated = false;
		if (*p != '\\')
			continue;
		p++;
		if (*p == '0') {
			argc++;
			terminated = true;
		} else if (*p != '\\') {
			return -EINVAL;
		}
	}
	if (!terminated)
		return -EINVAL;
	if (argc > INT_MAX - 1)
		return -ERANGE;

	argv = calloc(argc + 1, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	p = s;
	for (size_t i = 0; i < argc; i++) {
		size_t n = 0;
		char *arg;
		const char *q;

		for (q = p; !(q[0] == '\\' && q[1] == '0'); q += q[0] == '\\' ? 2 : 1)
			n++;
		arg = malloc(n + 1);
		if (!arg) {
			mx_strvec_free(argv);
			return -ENOMEM;
		}
		argv[i] = arg;
		for (q = p; !(q[0] == '\\' && q[1] == '0'); q += q[0] == '\\' ? 2 : 1)
			*arg++ = *q;
		*arg = '\0';
		p = q + 2;
	}
	*ret_argv = argv;
	*ret_argc = (int)argc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* directories                                                         */

static int mkdir_one(const char *path, mode_t mode)
{
	struct stat st;

	if (mkdir(path, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int mx_mkdir_p(const char *path, mode_t mode)
{
	char *copy;
	int r = 0;

	if (!path || !*path)
		return -EINVAL;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/' || p[-1] == '/')
			continue;
		*p = '\0';
		r = mkdir_one(copy, mode);
		*p = '/';
		if (r < 0)
			goto out;
	}
	r = mkdir_one(copy, mode);
out:
	free(copy);
	return r;
}

/*
 * Removing a tree whose owner may still be at work in it (a job's tmpdir):
 * only *at() calls on directories opened with O_NOFOLLOW, never a path, so
 * a directory swapped for a symlink is never followed. The tree may be
 * deep (a user can nest thousands of directories): the walk is a loop,
 * not recursion, and holds at most RM_OPEN_MAX directories open. One whose
 * stream was closed is opened again through ".." of the child just
 * emptied, and used only if it is the same directory (device and inode)
 * as before: a tree moved meanwhile stops the walk (-ESTALE), it never
 * leads outside.
 */
#define RM_OPEN_MAX 32

struct rm_frame {
	DIR *dir;                /* NULL while closed */
	dev_t dev;
	ino_t ino;
	char *name;              /* in the parent; NULL for the top */
	int err;                 /* first error at or below it */
};

struct rm_walk {
	struct rm_frame *fr;
	size_t n, cap, low;      /* frames [low, n) are open */
	struct rm_id { dev_t dev; ino_t ino; } *failed; /* not entered again */
	size_t n_failed, cap_failed;
};

static void rm_note(int *err, int e)
{
	if (e < 0 && !*err)
		*err = e;
}

static int rm_push(struct rm_walk *w, DIR *dir, const struct stat *st, const char *name)
{
	char *copy = NULL;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 16;
		struct rm_frame *v = realloc(w->fr, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		w->fr = v;
		w->cap = cap;
	}
	if (name && !(copy = strdup(name)))
		return -ENOMEM;
	w->fr[w->n++] = (struct rm_frame) { dir, st->st_dev, st->st_ino, copy, 0 };
	if (w->n - w->low > RM_OPEN_MAX) {
		closedir(w->fr[w->low].dir);
		w->fr[w->low++].dir = NULL;
	}
	return 0;
}

static bool rm_failed_before(const struct rm_walk *w, const struct stat *st)
{
	for (size_t k = 0; k < w->n_failed; k++)
		if (w->failed[k].dev == st->st_dev && w->failed[k].ino == st->st_ino)
			return true;
	return false;
}

static void rm_remember_failed(struct rm_walk *w, dev_t dev, ino_t ino)
{
	if (w->n_failed == w->cap_failed) {
		size_t cap = w->cap_failed ? 2 * w->cap_failed : 8;
		struct rm_id *v = realloc(w->failed, cap * sizeof(*v));
		if (!v)
			return;  /* entered again: slower, the same result */
		w->failed = v;
		w->cap_failed = cap;
	}
	w->failed[w->n_failed++] = (struct rm_id) { dev, ino };
}

/* Frame I's parent, open again through ".." of I if it was closed. */
static int rm_reopen_parent(struct rm_walk *w, size_t i)
{
	struct rm_frame *p = &w->fr[i - 1];
	struct stat st;
	int fd;
	DIR *dir;

	if (p->dir)
		return 0;
	fd = openat(dirfd(w->fr[i].dir), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != p->dev || st.st_ino != p->ino) {
		close(fd);
		return -ESTALE;  /* moved while it was removed */
	}
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -ENOMEM;
	}
	p->dir = dir;  /* read from its start again: what is gone is gone */
	w->low = i - 1;
	return 0;
}

/*
 * Remove everything below the open directory DFD, which lives on device
 * DEV. Subdirectories on another device (mount points) are left alone and
 * reported as -EXDEV; symlinks are removed, never followed. Keeps going
 * after errors and returns the first one.
 */
static int rm_contents(int dfd, dev_t dev)
{
	struct rm_walk w = { 0 };
	struct stat st;
	int fd, r;
	DIR *dir;

	if (fstat(dfd, &st) < 0 || (fd = dup(dfd)) < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -ENOMEM;
	}
	if ((r = rm_push(&w, dir, &st, NULL)) < 0) {
		closedir(dir);
		return r;
	}
	while (w.n > 0) {
		struct rm_frame *f = &w.fr[w.n - 1];
		int pfd = dirfd(f->dir), sub;
		struct dirent *de = readdir(f->dir);

		if (!de) {
			/* F holds nothing more that can go: up, and F itself */
			size_t i = w.n - 1;
			int q = f->err;
			if (i == 0) {
				r = q;
				closedir(f->dir);
				w.n = 0;
				break;
			}
			if ((r = rm_reopen_parent(&w, i)) < 0)
				break;  /* F is still open: freed below */
			closedir(f->dir);
			f->dir = NULL;
			struct rm_frame *p = &w.fr[i - 1];
			if (!q && unlinkat(dirfd(p->dir), f->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
				q = -errno;
			if (q < 0) {
				rm_note(&p->err, q);
				rm_remember_failed(&w, f->dev, f->ino);
			}
			free(f->name);
			w.n--;
			continue;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(pfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				rm_note(&f->err, -errno);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(pfd, de->d_name, 0) < 0 && errno != ENOENT)
				rm_note(&f->err, -errno);
			continue;
		}
		if (st.st_dev != dev) {
			rm_note(&f->err, -EXDEV);
			continue;
		}
		if (rm_failed_before(&w, &st))
			continue;
		sub = openat(pfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			rm_note(&f->err, -errno);
			continue;
		}
		if (fstat(sub, &st) < 0 || st.st_dev != dev) {
			rm_note(&f->err, st.st_dev != dev ? -EXDEV : -errno);
			close(sub);
			continue;
		}
		dir = fdopendir(sub);
		if (!dir) {
			close(sub);
			r = -ENOMEM;
			break;
		}
		if ((r = rm_push(&w, dir, &st, de->d_name)) < 0) {
			closedir(dir);
			break;
		}
	}
	for (size_t k = 0; k < w.n; k++) {
		if (w.fr[k].dir)
			closedir(w.fr[k].dir);
		free(w.fr[k].name);
	}
	free(w.fr);
	free(w.failed);
	return r;
}

bool mx_path_is_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 0 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

bool mx_path_resolved_below(const char *path, bool is_file, const char *dir)
{
	char name[PATH_MAX], real_path[PATH_MAX], real_dir[PATH_MAX];

	snprintf(name, sizeof(name), "%s", path);
	if (is_file) {
		char *slash = strrchr(name, '/');
		if (slash)
			*(slash == name ? slash + 1 : slash) = '\0';
	}
	if (!realpath(name, real_path))
		snprintf(real_path, sizeof(real_path), "%s", name);
	if (!realpath(dir, real_dir))
		snprintf(real_dir, sizeof(real_dir), "%s", dir);
	return mx_path_is_below(real_path, real_dir);
}

int mx_rmtree(const char *path)
{
	struct stat st;
	int fd, r;

	if (!path || !*path)
		return -EINVAL;
	/* the common case, an empty directory, in one call (rmdir never
	 * follows a symlink: ENOTDIR, and the walk below decides) */
	if (rmdir(path) == 0)
		return 0;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = rm_contents(fd, st.st_dev);
	close(fd);
	if (r < 0)
		return r;
	if (rmdir(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* clocks                                                              */

static uint64_t clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t mx_now_monotonic_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

uint64_t mx_now_realtime_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

void mx_sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void mx_signals_default(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	sigemptyset(&sa.sa_mask);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			sigaction(s, &sa, NULL);  /* EINVAL for glibc's own: left */
}

uint64_t mx_now_boottime_ms(void)
{
	return clock_ms(CLOCK_BOOTTIME);
}

/* fork(), or with CGROUP_FD >= 0 clone3() straight into that cgroup */
static pid_t fork_with_pipe(int cgroup_fd, int *ret_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	if (cgroup_fd < 0) {
		pid = fork();
	} else {
#ifdef CLONE_INTO_CGROUP
		struct clone_args ca = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
					 .cgroup = (uint64_t)cgroup_fd };

		pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
#else
		errno = ENOSYS;
		pid = -1;
#endif
	}
	if (pid < 0) {
		int r = -errno;
		close(fds[0]);
		close(fds[1]);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		*ret_fd = fds[1];
	} else {
		close(fds[1]);
		*ret_fd = fds[0];
	}
	return pid;
}

pid_t mx_fork_with_pipe(int *ret_fd)
{
	return fork_with_pipe(-1, ret_fd);
}

pid_t mx_fork_into_cgroup_with_pipe(int cgroup_fd, int *ret_fd)
{
	return fork_with_pipe(cgroup_fd, ret_fd);
}

/* ------------------------------------------------------------------ */
/* host names                                                          */

int mx_hostname_check(const char *name, char *err, size_t errlen)
{
	size_t len = name ? strlen(name) : 0;

	if (len == 0 || len > MX_HOSTNAME_MAX) {
		snprintf(err, errlen, "host name '%.80s' must have 1 to %d characters",
			 name ? name : "", MX_HOSTNAME_MAX);
		return -EINVAL;
	}
	if (!mx_hostname_labels_ok(name, len)) {
		snprintf(err, errlen, "'%.*s%s' is not a host name: letters, digits, '-' and '_' "
			 "in labels that start with a letter or digit, separated by single dots",
			 (int)(len > 64 ? 64 : len), name, len > 64 ? "..." : "");
		/* the name itself may carry control characters: never print them raw */
		for (char *p = err; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		return -EINVAL;
	}
	return 0;
}

bool mx_hostname_labels_ok(const char *name, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		bool first = i == 0 || name[i - 1] == '.';

		if (!alnum && !(!first && (c == '-' || c == '_')) && !(c == '.' && !first && i + 1 < len))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* terminal escaping                                                   */

/* Length of the UTF-8 sequence at S (N bytes there): its length when it
 * is complete and valid, 0 when it is a valid but incomplete start, -1
 * when it is invalid. */
static int utf8_seq_len(const unsigned char *s, size_t n)
{
	int len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return -1;
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return 0;
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	return len;
}

size_t mx_term_escape(const char *in, size_t n, bool keep_lines, bool final, char *out,
		      size_t *ret_used)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;

	while (i < n) {
		int len = utf8_seq_len(s + i, n - i);
		bool c1 = len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;   /* U+0080..U+009F */

		if (len == 0 && !final)
			break;                  /* the rest comes with the next call */
		if (len == 1 && ((s[i] >= 0x20 && s[i] != 0x7f) ||
				 (keep_lines && (s[i] == '\n' || s[i] == '\t')))) {
			out[o++] = (char)s[i++];
		} else if (len > 1 && !c1) {
			memcpy(out + o, s + i, (size_t)len);
			o += (size_t)len;
			i += (size_t)len;
		} else {
			/* a control character, C1, or a byte that is not UTF-8 */
			int k = len > 1 ? len : 1;
			for (int j = 0; j < k; j++)
				o += (size_t)sprintf(out + o, "\\x%02x", s[i++]);
		}
	}
	out[o] = '\0';
	if (ret_used)
		*ret_used = i;
	return o;
}

const char *mx_term_field(const char *s, char *buf, size_t len)
{
	size_t n = s ? strlen(s) : 0;

	if (!s)
		return "";
	if (n > (len - 1) / 4)
		n = (len - 1) / 4;     /* worst case: every byte becomes \xNN */
	mx_term_escape(s, n, false, true, buf, NULL);
	return buf;
}

int mx_host_port_check(const char *value, char *err, size_t errlen)
{
	char host[300], v6[INET6_ADDRSTRLEN + 1];
	unsigned char bin[sizeof(struct in6_addr)];
	const char *port = NULL, *colon;
	uint32_t p;
	size_t hl;

	if (value[0] == '[') {                  /* [IPv6] or [IPv6]:PORT */
		const char *end = strchr(value, ']');
		hl = end ? (size_t)(end - value - 1) : 0;
		if (!end || hl == 0 || hl >= sizeof(v6) || (end[1] && end[1] != ':')) {
			snprintf(err, errlen, "'%.80s' is not [IPv6 address] or [IPv6 address]:PORT", value);
			return -EINVAL;
		}
		memcpy(v6, value + 1, hl);
		v6[hl] = '\0';
		if (inet_pton(AF_INET6, v6, bin) != 1) {
			snprintf(err, errlen, "'%s' is not an IPv6 address", v6);
			return -EINVAL;
		}
		port = end[1] ? end + 2 : NULL;
	} else if ((colon = strchr(value, ':')) && strchr(colon + 1, ':')) {
		if (inet_pton(AF_INET6, value, bin) != 1) {  /* bare IPv6, no port */
			snprintf(err, errlen, "'%.80s' is not an IPv6 address (with a port: [ADDRESS]:PORT)",
				 value);
			return -EINVAL;
		}
	} else {
		hl = colon ? (size_t)(colon - value) : strlen(value);
		if (hl >= sizeof(host)) {
			snprintf(err, errlen, "host name too long");
			return -EINVAL;
		}
		memcpy(host, value, hl);
		host[hl] = '\0';
		/* an IPv4 address passes the host-name rule too */
		if (mx_hostname_check(host, err, errlen) < 0)
			return -EINVAL;
		port = colon ? colon + 1 : NULL;
	}
	if (port && (mx_strtou32(port, &p) < 0 || p == 0 || p > 65535)) {
		snprintf(err, errlen, "port '%.20s' is not a number from 1 to 65535", port);
		return -EINVAL;
	}
	return 0;
}

int mx_ipv4_check(const char *value, char *err, size_t errlen)
{
	struct in_addr a;

	if (inet_pton(AF_INET, value, &a) != 1) {
		snprintf(err, errlen, "'%.80s' is not an IPv4 address like 10.1.255.255", value);
		return -EINVAL;
	}
	return 0;
}
