/*
 * mxq_expr - the prerequisites language (grammar in parser.y).
 *
 *   expr := expr '|' expr | expr '&' expr | '!' expr | '(' expr ')' | IDENT
 *   precedence: '!' binds tighter than '&', which binds tighter than '|';
 *   '&' and '|' are left-associative.
 *   IDENT: one or more of [A-Za-z0-9_.-]. Whitespace anywhere between tokens.
 *
 * An IDENT is true when the tag set being tested contains it. The empty (or
 * all-blank) expression is true. Text is parsed once into a compact postfix
 * program and evaluated many times.
 *
 * Limits: input longer than MXQ_EXPR_MAX_LEN bytes or nested deeper than
 * MXQ_EXPR_MAX_DEPTH is refused as a syntax error, never a crash.
 */
#ifndef MXQ_EXPR_H
#define MXQ_EXPR_H

#include <stdbool.h>
#include <stddef.h>

#include "keywordset.h"

#define MXQ_EXPR_MAX_LEN   4096
#define MXQ_EXPR_MAX_DEPTH 64

struct mxq_expr;

/*
 * Parse TEXT. On success returns 0 and *ret_expr (free with
 * mxq_expr_free()). On a syntax error returns -EINVAL and writes a one-line
 * message into errbuf that says at which character (counted from 1) what was expected
 * ("at position 4: expected identifier, '!' or '(' but found end of input").
 * -ENOMEM on allocation failure. *ret_expr untouched on failure.
 */
int mxq_expr_parse(const char *text, struct mxq_expr **ret_expr,
		   char *errbuf, size_t errlen);
/* NULL is fine. */
void mxq_expr_free(struct mxq_expr *expr);

/* Evaluate against TAGS. A NULL expr (never parsed / syntax error) is false. */
bool mxq_expr_eval(const struct mxq_expr *expr, const struct keywordset *tags);

/*
 * Parse-and-evaluate in one call, for places that hold only text: syntax
 * errors give false, as DESIGN §4 requires.
 */
bool mxq_expr_eval_text(const char *text, const struct keywordset *tags);

/* The original text the expression was parsed from. */
const char *mxq_expr_text(const struct mxq_expr *expr);

#endif
