/*
 * mxq_power_config - reading power.conf from disk (mxq_power_config.h);
 * the parsing itself is mxq_power_config_parse() in mxq_power_policy.c.
 *
 * Errors: negative errno, human text in the caller's buffer; no logging.
 */
#define _GNU_SOURCE
#include "mxq_power_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole of PATH, NUL-terminated, at most MXQ_POWER_CONFIG_MAX_BYTES. */
static int read_text(const char *path, char **ret_text)
{
	struct stat st;
	char *text;
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	else if (st.st_size > MXQ_POWER_CONFIG_MAX_BYTES)
		r = -EFBIG;
	if (r < 0) {
		close(fd);
		return r;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, text, (size_t)st.st_size);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0) {
		free(text);
		return r;
	}
	text[n] = '\0';
	*ret_text = text;
	return 0;
}

int mxq_power_config_load(struct mxq_power_config *cfg, const char *path,
			  const char **ret_source, char *errbuf, size_t errlen)
{
	const char *file = path ? path : MXQ_POWER_CONFIG_DEFAULT_PATH;
	char *text = NULL;
	int r;

	if (errlen)
		errbuf[0] = '\0';
	mxq_power_config_defaults(cfg);
	if (ret_source)
		*ret_source = NULL;
	r = read_text(file, &text);
	if (r == -ENOENT && !path)
		return 0;	/* no file: the documented defaults */
	if (r < 0) {
		if (r == -EFBIG || r == -EINVAL)
			snprintf(errbuf, errlen, "%s: %s", file, r == -EFBIG ?
				 "larger than 1 MiB, not a power.conf" : "not a regular file");
		else
			snprintf(errbuf, errlen, "cannot read %s: %s", file, strerror(-r));
		return r;
	}
	r = mxq_power_config_parse(cfg, text, file, errbuf, errlen);
	free(text);
	if (r < 0) {
		if (errlen && !errbuf[0])
			snprintf(errbuf, errlen, "%s: %s", file, strerror(-r));
		return r;
	}
	if (ret_source)
		*ret_source = file;
	return 0;
}
