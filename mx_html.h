/*
 * mx_html - a growing output buffer and THE HTML escaper of the tree.
 *
 * Everything mxq-web prints that did not come from a string literal goes
 * through mx_html_text() (or mx_buf_printf() with numbers only), so the
 * question "is this escaped?" has one answer to review and one unit test.
 *
 * Errors: allocation failure is sticky: the buffer remembers it (failed)
 * and ignores further appends, so a page is built without checks at every
 * line and judged once at the end. Nothing here logs.
 */
#ifndef MX_HTML_H
#define MX_HTML_H

#include <stdbool.h>
#include <stddef.h>

struct mx_buf {
	char *data;       /* NUL-terminated while !failed; NULL before the first append */
	size_t len;       /* bytes used, without the NUL */
	size_t cap;
	size_t max;       /* 0: unlimited; else appends past it fail the buffer */
	bool failed;      /* an append failed (ENOMEM or over max) */
};

/* An empty buffer that may grow to MAX bytes (0 = unlimited). */
void mx_buf_init(struct mx_buf *b, size_t max);
/* Release the memory; the buffer is empty and usable again. NULL is fine. */
void mx_buf_free(struct mx_buf *b);
/* Append N bytes / a string / printf output. */
void mx_buf_add(struct mx_buf *b, const char *s, size_t n);
void mx_buf_puts(struct mx_buf *b, const char *s);
void mx_buf_printf(struct mx_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Take the contents (malloc'ed, NUL-terminated, *ret_len bytes); the buffer
 * is empty afterwards. NULL (and the buffer freed) when it failed.
 */
char *mx_buf_take(struct mx_buf *b, size_t *ret_len);

/*
 * Append S (NULL: nothing) HTML-escaped: & < > " ' become entities, so the
 * result is safe as element text and inside a quoted attribute value.
 * Control characters other than tab and newline become U+FFFD, so no
 * terminal or parser trick survives either.
 */
void mx_html_text(struct mx_buf *b, const char *s);

#endif
