/*
 * mx_url - strict parsing of a request target ("/node/n1?window=6h"), as
 * mxq-web receives it from the client, before anything looks at it.
 *
 * Accepted: printable ASCII only, at most MX_URL_MAX bytes; a path of at
 * most MX_URL_SEGMENTS segments, each percent-decoded (no "/", control
 * characters or NUL after decoding, never "." or ".."), no empty segment
 * except a single trailing slash; a query of at most MX_URL_PARAMS
 * "key=value" pairs, keys [a-z0-9_] and unique, values percent-decoded
 * ("+" is a space) without control characters. No fragment.
 *
 * Errors: -EINVAL, with one line for the client in the caller's buffer
 * (no input echoed back beyond what was parsed). Nothing here logs.
 */
#ifndef MX_URL_H
#define MX_URL_H

#include <stddef.h>

#include "mx_html.h"

#define MX_URL_MAX 1024
#define MX_URL_SEGMENTS 8
#define MX_URL_PARAMS 16

struct mx_url {
	size_t n_segs;
	const char *segs[MX_URL_SEGMENTS];      /* decoded, point into store */
	size_t n_params;
	const char *keys[MX_URL_PARAMS];
	const char *values[MX_URL_PARAMS];
	char store[MX_URL_MAX + MX_URL_SEGMENTS + 2 * MX_URL_PARAMS + 2];
};

/*
 * Parse RAW into *RET. 0, or -EINVAL with a reason in ERRBUF (*RET is then
 * unspecified). "/" gives no segments.
 */
int mx_url_parse(const char *raw, struct mx_url *ret, char *errbuf, size_t errlen);
/* The decoded value of query KEY, or NULL when absent. */
const char *mx_url_param(const struct mx_url *u, const char *key);
/*
 * Append S percent-encoded as one path segment or query value: every byte
 * but A-Z a-z 0-9 - . _ ~ becomes %XX, so the result is also safe inside an
 * HTML attribute. mx_url_parse() decodes it back to S.
 */
void mx_url_encode(struct mx_buf *b, const char *s);

#endif
