/*
 * mx_html - output buffer and HTML escaper (see mx_html.h).
 *
 * The buffer doubles its capacity (from 4 KiB) so a page of a few hundred
 * KiB costs a handful of reallocations; a failed append marks the buffer
 * failed and later appends are no-ops.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_html.h"

void mx_buf_init(struct mx_buf *b, size_t max)
{
	*b = (struct mx_buf){ .max = max };
}

void mx_buf_free(struct mx_buf *b)
{
	if (!b)
		return;
	free(b->data);
	mx_buf_init(b, b->max);
}

/* Room for N more bytes plus the NUL; false (buffer failed) otherwise. */
static bool reserve(struct mx_buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->failed)
		return false;
	if (n > (size_t)-1 / 2 - b->len - 1 || (b->max && b->len + n > b->max)) {
		b->failed = true;
		return false;
	}
	want = b->len + n + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void mx_buf_add(struct mx_buf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void mx_buf_puts(struct mx_buf *b, const char *s)
{
	if (s)
		mx_buf_add(b, s, strlen(s));
}

void mx_buf_printf(struct mx_buf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	if (b->failed || !reserve(b, 64))
		return;
	/* usually one pass: print into the room there is, grow only if short */
	room = b->cap - b->len;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->data[b->len] = '\0';
		b->failed = true;
		return;
	}
	if ((size_t)n >= room) {
		if (!reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

char *mx_buf_take(struct mx_buf *b, size_t *ret_len)
{
	char *p;

	if (b->failed || !reserve(b, 0)) {
		mx_buf_free(b);
		b->failed = false;
		return NULL;
	}
	b->data[b->len] = '\0';   /* nothing added yet: reserve() left it unset */
	p = b->data;
	*ret_len = b->len;
	mx_buf_init(b, b->max);
	return p;
}

void mx_html_text(struct mx_buf *b, const char *s)
{
	const char *run;

	if (!s)
		return;
	for (run = s; *s; s++) {
		const char *rep;
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
				rep = "\xef\xbf\xbd";
			else
				continue;
		}
		mx_buf_add(b, run, (size_t)(s - run));
		mx_buf_puts(b, rep);
		run = s + 1;
	}
	mx_buf_add(b, run, (size_t)(s - run));
}
