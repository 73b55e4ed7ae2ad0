/*
 * mxq_table - the one table printer of the tools: columns as wide as their
 * widest cell, control characters in cells shown escaped, so a long or
 * hostile host name can neither break the columns nor the terminal.
 */
#ifndef MXQ_TABLE_H
#define MXQ_TABLE_H

#include <stdio.h>

struct mxq_table;

/*
 * A table with the columns of HEADER, a '|'-separated list of titles; a
 * title ending in '>' is right-aligned (the '>' is not printed), e.g.
 * "HOST|STATE|JOBS>". NULL with errno set (ENOMEM, EINVAL for more than 32
 * columns).
 */
struct mxq_table *mxq_table_new(const char *header);

/* Append a row of one printf-formatted cell per column, cells separated
 * by '\x1f' (MXQ_TABLE_SEP) in FMT. 0 or -ENOMEM (or -EINVAL for a row
 * with the wrong number of cells). */
#define MXQ_TABLE_SEP "\x1f"
int mxq_table_addf(struct mxq_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Rows so far (without the header). */
size_t mxq_table_rows(const struct mxq_table *t);

/*
 * Print header and rows to F: columns two blanks apart, each as wide as its
 * widest cell, no blanks at the end of a line (empty cells at the end of a
 * row are left out); control characters (C0 with newline
 * and tab, DEL, C1) and bytes that are not UTF-8 are printed as \xNN
 * (mx_term_escape()), so no cell can move the cursor or break a line.
 * 0 or -EIO.
 */
int mxq_table_print(const struct mxq_table *t, FILE *f);

/* Free T; NULL is fine. */
void mxq_table_free(struct mxq_table *t);

#endif
