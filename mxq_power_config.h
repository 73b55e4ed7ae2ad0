/*
 * mxq_power_config - the one loader of power.conf, used by mxqd, mxqadmin
 * and mxq-power-sim, so the three read the same file the same way (same
 * default path, same size limit, same errors).
 */
#ifndef MXQ_POWER_CONFIG_H
#define MXQ_POWER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "mxq_power_policy.h"

/* The default file, and the largest file accepted. */
#define MXQ_POWER_CONFIG_DEFAULT_PATH SYSCONFDIR "/mxq/power.conf"
#define MXQ_POWER_CONFIG_MAX_BYTES (1 << 20)

/*
 * Load power.conf into *CFG (initialised, or zeroed): the file PATH, or
 * with PATH NULL the default file when it exists and the built-in defaults
 * when it does not. *ret_source (may be NULL) is set to the file read, or
 * to NULL for the built-in defaults. Returns 0, or a negative errno with
 * the errors in ERRBUF, one line each ("FILE:LINE: ..." from the parser, or
 * "FILE: reason"); *CFG then holds the defaults. Never logs.
 */
int mxq_power_config_load(struct mxq_power_config *cfg, const char *path,
			  const char **ret_source, char *errbuf, size_t errlen);

/*
 * mxq_power_config_load(), and also the file's text in *RET_TEXT (malloc()ed,
 * NUL-terminated; NULL when the defaults were used or on error) for a caller
 * that wants to know what the file itself sets (mxq_power_config_text_sets()).
 */
int mxq_power_config_load_text(struct mxq_power_config *cfg, const char *path,
			       const char **ret_source, char **ret_text,
			       char *errbuf, size_t errlen);

/* Does power.conf TEXT itself set KEY (a line "KEY = ...", blanks allowed
 * around KEY)? What is not set comes from the defaults. */
bool mxq_power_config_text_sets(const char *text, const char *key);

#endif
