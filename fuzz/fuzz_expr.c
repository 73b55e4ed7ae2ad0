/*
 * fuzz_expr - libFuzzer target for the prerequisites language.
 *
 * For every input: parse it (as a NUL-terminated string); on success
 * evaluate it against a few fixed tag sets and one built from the input's
 * own identifiers, and check
 *   - mxq_expr_eval(expr) == mxq_expr_eval_text(text),
 *   - the result agrees with a small recursive-descent reference evaluator
 *     written independently of the bison grammar,
 *   - mxq_expr_text() gives the input back;
 * on failure check the error is -EINVAL with a message, and that the
 * reference agrees the input is malformed (unless a limit was hit).
 * Any disagreement aborts, so libFuzzer records the input.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keywordset.h"
#include "mxq_expr.h"
#include "fuzz.h"

/* Inputs much longer than the limit only test strnlen; keep runs fast. */
#define MAX_INPUT (MXQ_EXPR_MAX_LEN + 64)
/* The reference recurses; give up (no verdict) beyond this nesting. */
#define REF_MAX_DEPTH 200

static const char *const fixed_tag_sets[] = {
	"",
	"a",
	"a b c",
	"true node-1.example.org node-1 gpu x86_64",
};

enum ref_verdict { REF_FALSE, REF_TRUE, REF_INVALID, REF_TOO_DEEP };

struct ref {
	const char *s;
	size_t pos;
	unsigned depth;
	bool invalid;
	bool too_deep;
	const struct keywordset *tags;
};

static bool ref_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-';
}

static char ref_peek(struct ref *r)
{
	while (isspace((unsigned char)r->s[r->pos]))
		r->pos++;
	return r->s[r->pos];
}

static bool ref_or(struct ref *r);

/* primary := IDENT | '(' or ')' ; unary := '!' unary | primary */
static bool ref_unary(struct ref *r)
{
	char c = ref_peek(r);
	bool v = false;

	if (++r->depth > REF_MAX_DEPTH) {
		r->too_deep = true;
		r->depth--;
		return false;
	}
	if (c == '!') {
		r->pos++;
		v = !ref_unary(r);
	} else if (c == '(') {
		r->pos++;
		v = ref_or(r);
		if (ref_peek(r) == ')')
			r->pos++;
		else
			r->invalid = true;
	} else if (ref_ident_char(c)) {
		size_t start = r->pos;

		while (ref_ident_char(r->s[r->pos]))
			r->pos++;
		v = keywordset_contains_n(r->tags, r->s + start, r->pos - start);
	} else {
		r->invalid = true;
	}
	r->depth--;
	return v;
}

static bool ref_and(struct ref *r)
{
	bool v = ref_unary(r);

	while (!r->invalid && !r->too_deep && ref_peek(r) == '&') {
		bool rhs;

		r->pos++;
		rhs = ref_unary(r);
		v = v && rhs;
	}
	return v;
}

static bool ref_or(struct ref *r)
{
	bool v = ref_and(r);

	while (!r->invalid && !r->too_deep && ref_peek(r) == '|') {
		bool rhs;

		r->pos++;
		rhs = ref_and(r);
		v = v || rhs;
	}
	return v;
}

static enum ref_verdict ref_eval(const char *text, const struct keywordset *tags)
{
	struct ref r = { .s = text, .tags = tags };
	bool v;

	if (ref_peek(&r) == '\0')
		return REF_TRUE;
	v = ref_or(&r);
	if (r.too_deep)
		return REF_TOO_DEEP;
	if (r.invalid || ref_peek(&r) != '\0')
		return REF_INVALID;
	return v ? REF_TRUE : REF_FALSE;
}

/* Tags made of the input's identifiers of odd length: exercises true leaves. */
static struct keywordset *tags_from_text(const char *text)
{
	struct keywordset *tags = keywordset_new(NULL);
	const char *p = text;

	if (!tags)
		abort();
	while (*p) {
		const char *start = p;
		char word[64];

		while (ref_ident_char(*p))
			p++;
		if (p == start) {
			p++;
			continue;
		}
		if ((p - start) % 2 == 1 && p - start < (long)sizeof(word)) {
			memcpy(word, start, (size_t)(p - start));
			word[p - start] = '\0';
			if (keywordset_add(tags, word) < 0)
				abort();
		}
	}
	return tags;
}

static void check_one(const char *text, const struct mxq_expr *expr, int parsed,
		      const char *err, const struct keywordset *tags)
{
	enum ref_verdict ref = ref_eval(text, tags);

	if (parsed == 0) {
		bool v = mxq_expr_eval(expr, tags);

		if (v != mxq_expr_eval_text(text, tags))
			abort();
		if (ref != REF_TOO_DEEP && ref != (v ? REF_TRUE : REF_FALSE))
			abort();
		return;
	}
	if (mxq_expr_eval_text(text, tags))
		abort();
	/* a plain syntax error must be one for the reference too */
	if (!strstr(err, "nested deeper") && ref != REF_INVALID && ref != REF_TOO_DEEP)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mxq_expr *expr = NULL;
	struct keywordset *own;
	char err[256];
	char *text;
	int r;

	if (size > MAX_INPUT)
		return 0;
	text = fuzz_text(data, size);
	if (!text)
		return 0;

	err[0] = '\0';
	r = mxq_expr_parse(text, &expr, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		abort();
	if (r == 0 && (!expr || strcmp(mxq_expr_text(expr), text) != 0))
		abort();
	if (r == -EINVAL && (expr || err[0] == '\0'))
		abort();

	if (strlen(text) <= MXQ_EXPR_MAX_LEN) {
		for (size_t i = 0; i < sizeof(fixed_tag_sets) / sizeof(fixed_tag_sets[0]); i++) {
			struct keywordset *tags = keywordset_new(fixed_tag_sets[i]);

			if (!tags)
				abort();
			check_one(text, expr, r, err, tags);
			keywordset_free(tags);
		}
		own = tags_from_text(text);
		check_one(text, expr, r, err, own);
		keywordset_free(own);
	} else if (r != -EINVAL) {
		abort();
	}

	mxq_expr_free(expr);
	free(text);
	return 0;
}
