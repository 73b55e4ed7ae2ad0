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

#include "mx_safefs.h"

int mxq_power_config_load_text(struct mxq_power_config *cfg, const char *path,
			       const char **ret_source, char **ret_text,
			       char *errbuf, size_t errlen)
{
	const char *file = path ? path : MXQ_POWER_CONFIG_DEFAULT_PATH;
	char *text = NULL;
	int r;

	if (errlen)
		errbuf[0] = '\0';
	mxq_power_config_defaults(cfg);
	if (ret_source)
		*ret_source = NULL;
	if (ret_text)
		*ret_text = NULL;
	/* regular files only, size-limited, no NUL bytes (mx_safefs) */
	r = mx_read_config_file(file, MXQ_POWER_CONFIG_MAX_BYTES, false, &text, NULL, NULL,
				errbuf, errlen);
	if (r == -ENOENT && !path) {
		if (errlen)
			errbuf[0] = '\0';
		return 0;	/* no file: the documented defaults */
	}
	if (r < 0) {
		if (r != -EINVAL && r != -EFBIG)	/* those mx_safefs words itself */
			snprintf(errbuf, errlen, "cannot read %s: %s", file, strerror(-r));
		return r;
	}
	r = mxq_power_config_parse(cfg, text, file, errbuf, errlen);
	if (r < 0) {
		free(text);
		if (errlen && !errbuf[0])
			snprintf(errbuf, errlen, "%s: %s", file, strerror(-r));
		return r;
	}
	if (ret_source)
		*ret_source = file;
	if (ret_text)
		*ret_text = text;
	else
		free(text);
	return 0;
}

int mxq_power_config_load(struct mxq_power_config *cfg, const char *path,
			  const char **ret_source, char *errbuf, size_t errlen)
{
	return mxq_power_config_load_text(cfg, path, ret_source, NULL, errbuf, errlen);
}

bool mxq_power_config_text_sets(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, key, n) != 0)
			continue;
		p += n;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '=')
			return true;
	}
	return false;
}
