/*
 * mx_safefs - safe directories and files for a root daemon (see mx_safefs.h).
 *
 * Checks are done on the resolved path from "/" down, each component with
 * lstat(), so an error names the first directory that is wrong. Nothing
 * here logs.
 */
#define _GNU_SOURCE
#include "mx_safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mx_util.h"

/* Who may own what is checked, besides root, and how messages name them. */
struct trusted {
	uid_t uid;
	const char *name;       /* NULL: root alone (uid 0) */
};

/* Is the entry with stat ST acceptable: LAST for the directory itself or
 * the file (no group/other write at all), else for a directory above it
 * (sticky is fine); IS_FILE: a regular file, not a directory. */
static int check_one(const char *path, const struct stat *st, const struct trusted *who, bool last,
		     bool is_file, char *err, size_t errlen)
{
	if (is_file ? !S_ISREG(st->st_mode) : !S_ISDIR(st->st_mode)) {
		snprintf(err, errlen, "%s is not a %s", path, is_file ? "regular file" : "directory");
		return is_file ? -EINVAL : -ENOTDIR;
	}
	if (st->st_uid != 0 && st->st_uid != who->uid) {
		snprintf(err, errlen, "%s belongs to uid %u, not to root%s%s: its owner could %s", path,
			 (unsigned)st->st_uid, who->name ? " or " : "", who->name ? who->name : "",
			 is_file ? "change what it runs" :
			 "swap what is in it (use a directory owned by root, mode 0755)");
		return -EPERM;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX))) {
		snprintf(err, errlen, "%s is writable by %s (mode %04o): other users could %s", path,
			 (st->st_mode & S_IWOTH) ? "others" : "its group",
			 (unsigned)(st->st_mode & 07777), is_file ? "change what it runs" :
			 "plant entries in it (use a directory only root can write, mode 0755)");
		return -EPERM;
	}
	return 0;
}

/* lstat PREFIX and check it (see check_one). */
static int check_prefix(const char *prefix, const struct trusted *who, bool last, bool is_file,
			char *err, size_t errlen)
{
	struct stat st;

	if (lstat(prefix, &st) < 0) {
		int r = -errno;
		snprintf(err, errlen, "%s: %s", prefix, strerror(errno));
		return r;
	}
	return check_one(prefix, &st, who, last, is_file, err, errlen);
}

/* Resolve PATH into REAL and check every directory from "/" down to it;
 * the last component is checked as the directory itself or, IS_FILE, as
 * a regular file. */
static int check_path(const char *path, const struct trusted *who, bool is_file, char *real,
		      char *err, size_t errlen)
{
	size_t len;
	int r;

	if (!realpath(path, real)) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	len = strlen(real);
	r = check_prefix("/", who, len == 1, false, err, errlen);
	for (size_t i = 1; r == 0 && i <= len; i++) {
		if (real[i] != '/' && real[i] != '\0')
			continue;
		real[i] = '\0';
		r = check_prefix(real, who, i == len, is_file && i == len, err, errlen);
		if (i < len)
			real[i] = '/';
	}
	return r;
}

int mx_dir_check_safe(const char *path, uid_t owner, char *err, size_t errlen)
{
	const struct trusted who = { owner, owner ? "this daemon's user" : NULL };
	char real[PATH_MAX];

	return check_path(path, &who, false, real, err, errlen);
}

int mx_file_check_safe(const char *path, uid_t owner, const char *owner_name, char *ret_real,
		       size_t real_len, char *err, size_t errlen)
{
	const struct trusted who = { owner, owner ? owner_name : NULL };
	char real[PATH_MAX];
	int r = check_path(path, &who, true, real, err, errlen);

	if (r == 0 && snprintf(ret_real, real_len, "%s", real) >= (int)real_len) {
		snprintf(err, errlen, "%s: the real path is too long", path);
		return -ENAMETOOLONG;
	}
	return r;
}

int mx_dir_ensure_safe(const char *path, uid_t owner, char *err, size_t errlen)
{
	int r = mx_mkdir_p(path, 0755);

	if (r < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-r));
		return r;
	}
	return mx_dir_check_safe(path, owner, err, errlen);
}

int mx_subdir_create(const char *parent, const char *name, bool do_chown, uid_t uid, gid_t gid)
{
	struct stat st;
	int pfd, fd, r = 0;

	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (mkdirat(pfd, name, 0700) < 0) {
		r = -errno;     /* EEXIST: whatever is there stays untouched */
		goto out;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid())
		r = -EPERM;     /* not the directory we just made */
	else if (do_chown && fchown(fd, uid, gid) < 0)
		r = -errno;
	close(fd);
out:
	close(pfd);
	return r;
}

int mx_open_create_nofollow(const char *path, bool exclusive, mode_t mode)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
	int fd;

	if (exclusive) {
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		flags |= O_EXCL;
	}
	fd = open(path, flags, mode);
	return fd < 0 ? -errno : fd;
}

FILE *mx_fopen_create_nofollow(const char *path, bool exclusive, mode_t mode)
{
	int fd = mx_open_create_nofollow(path, exclusive, mode);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

int mx_read_config_file(const char *path, size_t max, bool nofollow, char **ret_text,
			size_t *ret_len, struct stat *ret_st, char *err, size_t errlen)
{
	struct stat st;
	size_t got = 0;
	char *text;
	int fd, r;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file: refused", path);
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "%s: larger than %zu bytes: refused", path, max);
		close(fd);
		return -EFBIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			explicit_bzero(text, got);
			free(text);
			close(fd);
			return r;
		}
		if (n == 0)
			break;          /* shrank while we read: take what is there */
		got += (size_t)n;
	}
	close(fd);
	text[got] = '\0';
	if (memchr(text, '\0', got)) {
		snprintf(err, errlen, "%s: contains a NUL byte: not a text file, refused", path);
		explicit_bzero(text, got);
		free(text);
		return -EINVAL;
	}
	if (ret_st)
		*ret_st = st;
	if (ret_len)
		*ret_len = got;
	*ret_text = text;
	return 0;
}
