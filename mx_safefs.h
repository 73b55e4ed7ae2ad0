/*
 * mx_safefs - files and directories a root daemon creates in places whose
 * every component it must be able to trust.
 *
 * A directory is "safe" for a daemon running as OWNER (root, or the
 * unprivileged user of a developer's mxqd) when it is a real directory
 * owned by root or OWNER and writable by neither group nor others (a sticky
 * bit does not help: others could still create entries), and when every
 * directory above it is owned by root or OWNER and either not writable by
 * group and others or sticky (others cannot rename our entries in it).
 * Symlinks in the path are resolved first and the real path is checked.
 *
 * A file is "safe" to run as OWNER (a callback, like ssh's StrictModes)
 * when it is a regular file owned by root or OWNER and writable by
 * neither group nor others, and every directory above it follows the rule
 * for directories above (owned by root or OWNER; not writable by group and
 * others, or sticky): then nobody else can change what runs.
 *
 * Per-job directories are created with mkdirat() in such a directory; an
 * existing entry of any kind is an error (never reused, never followed);
 * their owner is set through a descriptor opened O_NOFOLLOW|O_DIRECTORY.
 * Functions return 0 or a negative errno; human text goes to a caller's
 * buffer. Nothing here logs.
 */
#ifndef MX_SAFEFS_H
#define MX_SAFEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Check that PATH is a safe directory for a daemon running as OWNER (see
 * above). -ENOENT when it does not exist, -EPERM when it is not safe,
 * other negative errno when it cannot be checked; err names the offending
 * directory and what is wrong with it.
 */
int mx_dir_check_safe(const char *path, uid_t owner, char *err, size_t errlen);

/*
 * Check that PATH (symlinks resolved) is a safe file to run as OWNER (see
 * above); OWNER_NAME names OWNER in the error ("the job's user"). On
 * success its real path is in RET_REAL (run that one: the checked
 * directories lead there). -ENOENT, -EPERM when it is not safe, -EINVAL
 * when it is not a regular file, other negative errno; err says which
 * entry is wrong and why, in one line.
 */
int mx_file_check_safe(const char *path, uid_t owner, const char *owner_name, char *ret_real,
		       size_t real_len, char *err, size_t errlen);

/*
 * Create PATH (mkdir -p, new components 0755) if it is missing, then
 * mx_dir_check_safe() it. Same returns.
 */
int mx_dir_ensure_safe(const char *path, uid_t owner, char *err, size_t errlen);

/*
 * Create the directory NAME (a single component) in the directory PARENT
 * with mode 0700 and, if DO_CHOWN, hand it to UID:GID through an
 * O_NOFOLLOW|O_DIRECTORY descriptor. -EEXIST when an entry of that name
 * exists (nothing is touched then), -EINVAL for a NAME with a '/'.
 */
int mx_subdir_create(const char *parent, const char *name, bool do_chown, uid_t uid, gid_t gid);

/*
 * Open PATH for writing, created with MODE, never through a symlink
 * (O_NOFOLLOW). With EXCLUSIVE an existing PATH is unlinked first and the
 * file is created with O_EXCL (for temporary names that are renamed into
 * place). Returns the descriptor (O_CLOEXEC) or a negative errno.
 */
int mx_open_create_nofollow(const char *path, bool exclusive, mode_t mode);
/* The same as a stdio stream ("w"); NULL with errno set. */
FILE *mx_fopen_create_nofollow(const char *path, bool exclusive, mode_t mode);

/*
 * Read a whole configuration file into a malloc'ed, NUL-terminated buffer:
 * only a regular file (a FIFO or device is refused without blocking: it is
 * opened O_NONBLOCK), at most MAX bytes, without NUL bytes. NOFOLLOW refuses
 * a symlink as the last component. ret_st (may be NULL) receives its
 * fstat(). Returns 0; -ENOENT; -EINVAL (not a regular file, or a NUL byte),
 * -EFBIG (too big), other negative errno; err says which in one line.
 * The caller frees (and for secrets wipes) *ret_text.
 */
struct stat;
int mx_read_config_file(const char *path, size_t max, bool nofollow, char **ret_text,
			size_t *ret_len, struct stat *ret_st, char *err, size_t errlen);

#endif
