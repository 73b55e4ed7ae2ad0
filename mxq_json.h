/*
 * mxq_json - the one way the tools write --json: jansson documents dumped
 * with one number convention and times as RFC 3339 plus the epoch.
 */
#ifndef MXQ_JSON_H
#define MXQ_JSON_H

#include <jansson.h>

/*
 * Write DOC to stdout, indented, keys in insertion order, reals with 15
 * significant digits (so 560.21 prints as 560.21, not 560.21000000000004),
 * and a final newline. Takes ownership of DOC (NULL: -ENOMEM, as when a
 * builder ran out of memory). Returns 0 or negative errno; never logs.
 */
int mxq_json_print(json_t *doc);

/*
 * Set KEY to EPOCH as RFC 3339 with the local zone ("2026-12-01T10:30:00+01:00")
 * and KEY_unix to the epoch number; both null when EPOCH <= 0 (unknown).
 * Returns 0 or -ENOMEM.
 */
int mxq_json_set_time(json_t *obj, const char *key, double epoch);

#endif
