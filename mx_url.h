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
 * Also the Host header's syntax and the decision which hosts are served.
 *
 * Errors: -EINVAL, with one line for the client in the caller's buffer
 * (no input echoed back beyond what was parsed). Nothing here logs.
 */
#ifndef MX_URL_H
#define MX_URL_H

#include <stdbool.h>
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

/*
 * The Host header of a request (RFC 9110 7.2): HOST or HOST:PORT, HOST an
 * IPv4 address (dotted), an IPv6 address in brackets or a DNS name (the
 * label rule of mx_hostname_check(), at most MX_URL_HOST_MAX characters,
 * one trailing dot allowed), PORT a number from 1 to 65535.
 */
#define MX_URL_HOST_MAX 253
struct mx_url_host {
	char name[MX_URL_HOST_MAX + 1]; /* lower case; no brackets, port or final dot */
	bool is_ip;                      /* an IPv4 or IPv6 address */
	bool has_port;
};
/* Parse VALUE into *RET: 0, or -EINVAL (*RET untouched) for anything else. */
int mx_url_host_parse(const char *value, struct mx_url_host *ret);
/*
 * May a request for HOST be answered? IP addresses always (a page can only
 * be rebound to another server through a DNS name); a name when it is one
 * of NAMES (lower case, as mx_url_host_parse() gives them) or NAMES holds
 * "*". Against DNS rebinding: a browser sends the name it resolved.
 */
bool mx_url_host_allowed(const struct mx_url_host *host, const char *const *names,
			 size_t n_names);

#endif
