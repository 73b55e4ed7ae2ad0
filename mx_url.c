/*
 * mx_url - request target parsing (see mx_url.h). Everything is decoded
 * into the struct's own store: no allocation, so a hostile target costs at
 * most MX_URL_MAX bytes of work.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "mx_url.h"
#include "mx_util.h"

static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf && errlen) {
		va_start(ap, fmt);
		vsnprintf(errbuf, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * Decode [s, end) to *out (advanced, NUL appended). plus: '+' is a space.
 * -EINVAL on a bad escape or a decoded control character or slash_bad and '/'.
 */
static int decode(const char *s, const char *end, char **out, bool plus, bool slash_bad)
{
	char *o = *out;

	while (s < end) {
		unsigned char c = (unsigned char)*s++;
		if (c == '%') {
			int hi, lo;
			if (end - s < 2 || (hi = mx_hex_digit(s[0])) < 0 || (lo = mx_hex_digit(s[1])) < 0)
				return -EINVAL;
			c = (unsigned char)(hi * 16 + lo);
			s += 2;
		} else if (c == '+' && plus) {
			c = ' ';
		}
		if (c < 0x20 || c == 0x7f || (slash_bad && c == '/'))
			return -EINVAL;
		*o++ = (char)c;
	}
	*o++ = '\0';
	*out = o;
	return 0;
}

static bool key_ok(const char *s, const char *end)
{
	if (s == end)
		return false;
	for (; s < end; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static int parse_path(const char *p, const char *end, struct mx_url *u, char **out,
		      char *errbuf, size_t errlen)
{
	p++; /* the leading '/' */
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *seg_end = slash ? slash : end;

		if (seg_end == p)
			return fail(errbuf, errlen, "empty path segment");
		if (u->n_segs == MX_URL_SEGMENTS)
			return fail(errbuf, errlen, "too many path segments (at most %d)",
				    MX_URL_SEGMENTS);
		u->segs[u->n_segs] = *out;
		if (decode(p, seg_end, out, false, true) < 0)
			return fail(errbuf, errlen, "bad character or escape in path segment %zu",
				    u->n_segs + 1);
		if (!strcmp(u->segs[u->n_segs], ".") || !strcmp(u->segs[u->n_segs], ".."))
			return fail(errbuf, errlen, "'.' and '..' are not allowed in paths");
		u->n_segs++;
		if (!slash)
			break;
		p = slash + 1; /* a single trailing slash ends the loop here */
	}
	return 0;
}

static int parse_query(const char *q, const char *end, struct mx_url *u, char **out,
		       char *errbuf, size_t errlen)
{
	while (q < end) {
		const char *amp = memchr(q, '&', (size_t)(end - q));
		const char *pair_end = amp ? amp : end;
		const char *eq = memchr(q, '=', (size_t)(pair_end - q));
		const char *key_end = eq ? eq : pair_end;

		if (!key_ok(q, key_end))
			return fail(errbuf, errlen, "bad query parameter name (letters a-z, digits, _)");
		if (u->n_params == MX_URL_PARAMS)
			return fail(errbuf, errlen, "too many query parameters (at most %d)",
				    MX_URL_PARAMS);
		u->keys[u->n_params] = *out;
		decode(q, key_end, out, false, false);
		if (mx_url_param(u, u->keys[u->n_params]))
			return fail(errbuf, errlen, "query parameter '%s' given twice",
				    u->keys[u->n_params]);
		u->values[u->n_params] = *out;
		if (decode(eq ? eq + 1 : pair_end, pair_end, out, true, false) < 0)
			return fail(errbuf, errlen, "bad character or escape in parameter '%s'",
				    u->keys[u->n_params]);
		u->n_params++;
		q = amp ? amp + 1 : end;
		if (amp && q == end)
			return fail(errbuf, errlen, "empty query parameter");
	}
	return 0;
}

int mx_url_parse(const char *raw, struct mx_url *u, char *errbuf, size_t errlen)
{
	size_t len = raw ? strlen(raw) : 0;
	const char *qmark, *end;
	char *out;

	memset(u, 0, offsetof(struct mx_url, store));
	if (!raw || raw[0] != '/')
		return fail(errbuf, errlen, "the request target must start with '/'");
	if (len > MX_URL_MAX)
		return fail(errbuf, errlen, "request target longer than %d bytes", MX_URL_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)raw[i] <= 0x20 || (unsigned char)raw[i] >= 0x7f)
			return fail(errbuf, errlen, "request target has a byte that is not "
				    "printable ASCII at offset %zu", i);
	if (strchr(raw, '#'))
		return fail(errbuf, errlen, "a fragment ('#') has no place in a request");
	end = raw + len;
	qmark = strchr(raw, '?');
	out = u->store;
	if (parse_path(raw, qmark ? qmark : end, u, &out, errbuf, errlen) < 0)
		return -EINVAL;
	if (qmark && parse_query(qmark + 1, end, u, &out, errbuf, errlen) < 0)
		return -EINVAL;
	return 0;
}

const char *mx_url_param(const struct mx_url *u, const char *key)
{
	for (size_t i = 0; i < u->n_params; i++)
		if (!strcmp(u->keys[i], key))
			return u->values[i];
	return NULL;
}

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

void mx_url_encode(struct mx_buf *b, const char *s)
{
	while (s && *s) {
		size_t run = 0;

		while (s[run] && unreserved((unsigned char)s[run]))
			run++;
		mx_buf_add(b, s, run);
		s += run;
		if (*s)
			mx_buf_printf(b, "%%%02X", (unsigned char)*s++);
	}
}

/* ------------------------------------------------------------------ */
/* Host header                                                         */

int mx_url_host_parse(const char *value, struct mx_url_host *ret)
{
	struct mx_url_host h = { .is_ip = false };
	unsigned char bin[sizeof(struct in6_addr)];
	const char *host = value, *end, *port = NULL;
	uint32_t p;
	size_t len;

	if (!value)
		return -EINVAL;
	if (value[0] == '[') {
		host = value + 1;
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		port = end[1] ? end + 2 : NULL;
	} else {
		end = strchr(host, ':');
		port = end ? end + 1 : NULL;
		if (!end)
			end = host + strlen(host);
	}
	len = (size_t)(end - host);
	if (len == 0 || len > MX_URL_HOST_MAX)
		return -EINVAL;
	/* digits only: strtou32 would also take a sign or blanks */
	if (port && (!port[0] || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 ||
		     mx_strtou32(port, &p) < 0 || p == 0 || p > 65535))
		return -EINVAL;
	memcpy(h.name, host, len);
	h.name[len] = '\0';
	if (value[0] == '[') {
		if (inet_pton(AF_INET6, h.name, bin) != 1)
			return -EINVAL;
		h.is_ip = true;
	} else if (inet_pton(AF_INET, h.name, bin) == 1) {
		h.is_ip = true;
	} else {
		if (h.name[len - 1] == '.')
			h.name[--len] = '\0';
		if (!mx_hostname_labels_ok(h.name, len))
			return -EINVAL;
	}
	for (char *c = h.name; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	h.has_port = port != NULL;
	*ret = h;
	return 0;
}

bool mx_url_host_allowed(const struct mx_url_host *host, const char *const *names,
			 size_t n_names)
{
	if (host->is_ip)
		return true;
	for (size_t i = 0; i < n_names; i++)
		if (!strcmp(names[i], "*") || !strcasecmp(names[i], host->name))
			return true;
	return false;
}
