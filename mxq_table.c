/*
 * mxq_table - plain-text tables for the tools (mxq_table.h). Cells are kept
 * escaped (control characters as \xNN) so widths are the printed
 * widths; a UTF-8 sequence counts as one column per code point.
 * Errors: negative errno; nothing is logged.
 */
#define _GNU_SOURCE
#include "mxq_table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mx_util.h"

#define MAX_COLS 32

struct mxq_table {
	size_t ncols, nrows, cap;
	bool right[MAX_COLS];
	size_t width[MAX_COLS];
	char **cells;		/* (nrows + 1) * ncols, row 0 is the header */
};

/* Printed columns of S: bytes that do not continue a UTF-8 sequence. */
static size_t columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* S escaped for a terminal (mx_term_escape(): control characters, C1 and
 * bytes that are not UTF-8 as \xNN, newlines and tabs too), malloc'ed. */
static char *escaped(const char *s, size_t len)
{
	char *out = malloc(len * 4 + 1);

	if (out)
		mx_term_escape(s, len, false, true, out, NULL);
	return out;
}

/* Split LINE at SEP into exactly t->ncols cells appended as a new row
 * (not counted in nrows: the caller does that). */
static int add_row(struct mxq_table *t, const char *line, char sep)
{
	const char *start = line;
	size_t base, col = 0;
	int r = 0;

	if (t->nrows + 1 >= t->cap) {
		size_t cap = t->cap * 2;
		char **cells = realloc(t->cells, cap * t->ncols * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	base = (t->nrows + (t->cells[0] ? 1 : 0)) * t->ncols;
	for (const char *p = line;; p++) {
		if (*p != sep && *p)
			continue;
		if (col == t->ncols) {
			r = -EINVAL;
			break;
		}
		t->cells[base + col] = escaped(start, (size_t)(p - start));
		if (!t->cells[base + col]) {
			r = -ENOMEM;
			break;
		}
		col++;
		if (!*p)
			break;
		start = p + 1;
	}
	if (r == 0 && col != t->ncols)
		r = -EINVAL;
	if (r < 0) {
		for (size_t c = 0; c < col; c++) {
			free(t->cells[base + c]);
			t->cells[base + c] = NULL;
		}
		return r;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		size_t w = columns(t->cells[base + c]);
		if (w > t->width[c])
			t->width[c] = w;
	}
	return 0;
}

struct mxq_table *mxq_table_new(const char *header)
{
	struct mxq_table *t = calloc(1, sizeof(*t));
	char *h = strdup(header ? header : "");
	size_t n = 1;

	if (!t || !h)
		goto nomem;
	for (const char *p = h; *p; p++)
		n += *p == '|';
	if (n > MAX_COLS) {
		free(h);
		free(t);
		errno = EINVAL;
		return NULL;
	}
	t->ncols = n;
	/* the titles: strip '>' markers first */
	for (size_t c = 0, i = 0, o = 0;; i++) {
		if (h[i] == '>' && (h[i + 1] == '|' || !h[i + 1])) {
			t->right[c] = true;
			continue;
		}
		h[o++] = h[i];
		if (h[i] == '|')
			c++;
		if (!h[i])
			break;
	}
	t->cap = 16;
	t->cells = calloc(t->cap * n, sizeof(*t->cells));
	if (!t->cells || add_row(t, h, '|') < 0)
		goto nomem;
	free(h);
	return t;
nomem:
	free(h);
	mxq_table_free(t);
	errno = ENOMEM;
	return NULL;
}

int mxq_table_addf(struct mxq_table *t, const char *fmt, ...)
{
	va_list ap;
	char *line;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	r = add_row(t, line, MXQ_TABLE_SEP[0]);
	free(line);
	if (r == 0)
		t->nrows++;
	return r;
}

size_t mxq_table_rows(const struct mxq_table *t)
{
	return t ? t->nrows : 0;
}

int mxq_table_print(const struct mxq_table *t, FILE *f)
{
	for (size_t r = 0; r <= t->nrows; r++) {
		char **row = t->cells + r * t->ncols;
		size_t end = t->ncols - 1;

		/* no trailing blanks: the row ends with its last non-empty cell */
		while (end > 0 && !row[end][0])
			end--;
		for (size_t c = 0; c <= end; c++) {
			size_t pad = t->width[c] - columns(row[c]);

			if (t->right[c])
				fprintf(f, "%*s%s", (int)pad, "", row[c]);
			else
				fprintf(f, "%s%*s", row[c], c == end ? 0 : (int)pad, "");
			fputs(c == end ? "\n" : "  ", f);
		}
	}
	return ferror(f) ? -EIO : 0;
}

void mxq_table_free(struct mxq_table *t)
{
	if (!t)
		return;
	if (t->cells)
		for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++)
			free(t->cells[i]);
	free(t->cells);
	free(t);
}
