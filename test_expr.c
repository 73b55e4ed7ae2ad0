/*
 * test_expr - unit tests for the prerequisites language (parser.y).
 *
 * The core is a table of expression, tag set, expected outcome. Cases that
 * tell precedence or grouping apart are chosen so the wrong reading gives
 * the other answer (e.g. "a | b & c" on {a} is true, "(a | b) & c" false).
 * Limits and messages are tested separately, with generated input.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keywordset.h"
#include "mxq_expr.h"

struct expr_case {
	const char *expr;
	const char *tags;	/* exactly the tag set, no implicit words */
	char expect;		/* 'T' true, 'F' false, 'E' syntax error */
};

static const struct expr_case cases[] = {
	/* single identifiers: exact, case-sensitive, no prefix match */
	{ "a", "a", 'T' },
	{ "a", "", 'F' },
	{ "a", "b", 'F' },
	{ "a", "a b c", 'T' },
	{ "b", "a b c", 'T' },
	{ "d", "a b c", 'F' },
	{ "abc", "a b c", 'F' },
	{ "a", "abc", 'F' },
	{ "ab", "a b", 'F' },
	{ "A", "a", 'F' },
	{ "a", "A", 'F' },
	{ "true", "", 'F' },		/* "true" is a tag, not a keyword */
	{ "true", "true", 'T' },
	{ "false", "false", 'T' },
	{ "false", "", 'F' },
	{ "m & n", "a b c d e f g h i j k l m n", 'T' },
	{ "z", "a b c d e f g h i j k l m n", 'F' },

	/* empty and blank expressions are true, whatever the tags */
	{ "", "", 'T' },
	{ "", "a", 'T' },
	{ " ", "", 'T' },
	{ "\t\n ", "", 'T' },
	{ "\r\n\v\f", "", 'T' },

	/* not */
	{ "!a", "a", 'F' },
	{ "!a", "", 'T' },
	{ "!!a", "a", 'T' },
	{ "!!a", "", 'F' },
	{ "!!!a", "a", 'F' },
	{ "! a", "", 'T' },
	{ "!\ta", "a", 'F' },
	{ "!(a)", "a", 'F' },
	{ "(!a)", "", 'T' },
	{ "!(!a)", "a", 'T' },

	/* and, or: truth tables */
	{ "a & b", "a b", 'T' },
	{ "a & b", "a", 'F' },
	{ "a & b", "b", 'F' },
	{ "a & b", "", 'F' },
	{ "a&b", "a b", 'T' },
	{ "a &b", "b a", 'T' },
	{ "a | b", "a b", 'T' },
	{ "a | b", "a", 'T' },
	{ "a | b", "b", 'T' },
	{ "a | b", "", 'F' },
	{ "a|b", "c", 'F' },
	{ "a|b", "b c", 'T' },
	{ "a & a", "a", 'T' },
	{ "a | a", "", 'F' },
	{ "a & !a", "a", 'F' },
	{ "a & !a", "", 'F' },
	{ "a | !a", "", 'T' },
	{ "a | !a", "a", 'T' },

	/* '&' binds tighter than '|' */
	{ "a | b & c", "a", 'T' },
	{ "a | b & c", "b", 'F' },
	{ "a | b & c", "b c", 'T' },
	{ "a | b & c", "c", 'F' },
	{ "a & b | c", "c", 'T' },
	{ "a & b | c", "a b", 'T' },
	{ "a & b | c", "a", 'F' },
	{ "a & b | c", "", 'F' },
	{ "c | a & b", "c", 'T' },
	{ "b & c | a", "a", 'T' },
	{ "a | b & c | d", "d", 'T' },
	{ "a | b & c | d", "b", 'F' },
	{ "a & b | c & d", "c d", 'T' },
	{ "a & b | c & d", "a d", 'F' },
	{ "a & b | c & d", "a b", 'T' },
	{ "a & b | c & d", "b c", 'F' },

	/* '!' binds tighter than '&' and '|' */
	{ "!a & b", "b", 'T' },
	{ "!a & b", "a b", 'F' },
	{ "!a & b", "", 'F' },
	{ "!a & b", "a", 'F' },
	{ "!a | b", "", 'T' },
	{ "!a | b", "a b", 'T' },
	{ "!a | b", "a", 'F' },
	{ "a & !b", "a", 'T' },
	{ "a & !b", "a b", 'F' },
	{ "a | !b", "", 'T' },
	{ "a | !b", "b", 'F' },
	{ "!a & !b", "", 'T' },
	{ "!a & !b", "a", 'F' },
	{ "!a | !b", "a b", 'F' },
	{ "!a | !b", "a", 'T' },
	{ "!(a & b)", "a", 'T' },
	{ "!(a & b)", "a b", 'F' },
	{ "!(a | b)", "", 'T' },
	{ "!(a | b)", "b", 'F' },
	{ "!a | b & c", "a b c", 'T' },
	{ "!a | b & c", "a b", 'F' },
	{ "!a | b & c", "", 'T' },
	{ "a | !b & c", "c", 'T' },
	{ "a | !b & c", "b c", 'F' },
	{ "!a & b | c", "a c", 'T' },
	{ "!a & b | c", "a b", 'F' },
	{ "!a & b | c", "b", 'T' },
	{ "!!a & b", "a b", 'T' },
	{ "!!a & b", "b", 'F' },

	/* chains (left-associative) */
	{ "a & b & c", "a b c", 'T' },
	{ "a & b & c", "a b", 'F' },
	{ "a & b & c", "b c", 'F' },
	{ "a | b | c", "", 'F' },
	{ "a | b | c", "c", 'T' },
	{ "a | b | c", "b", 'T' },
	{ "a & b & c & d & e", "a b c d e", 'T' },
	{ "a & b & c & d & e", "a b c d", 'F' },
	{ "a | b | c | d | e", "e", 'T' },
	{ "a | b | c | d | e", "f", 'F' },
	{ "a & b & c | d", "d", 'T' },
	{ "a | b & c & d", "b c d", 'T' },
	{ "a | b & c & d", "b c", 'F' },
	{ "a & b | c | d", "c", 'T' },
	{ "a & b | c & d | e & f", "e f", 'T' },
	{ "a & b | c & d | e & f", "a c e", 'F' },
	{ "a & b | c & d | e & f", "b c d", 'T' },

	/* parentheses override precedence */
	{ "(a | b) & c", "a", 'F' },
	{ "(a | b) & c", "a c", 'T' },
	{ "(a | b) & c", "b c", 'T' },
	{ "(a | b) & c", "c", 'F' },
	{ "a & (b | c)", "a c", 'T' },
	{ "a & (b | c)", "c", 'F' },
	{ "a & (b | c)", "b c", 'F' },
	{ "(a & b) | c", "c", 'T' },
	{ "(a & b) | c", "a", 'F' },
	{ "a | (b & c)", "a", 'T' },
	{ "(a | b) & (c | d)", "a d", 'T' },
	{ "(a | b) & (c | d)", "a b", 'F' },
	{ "(a | b) & (c | d)", "b c", 'T' },
	{ "(a & b) | (c & d)", "a d", 'F' },
	{ "(a & b) | (c & d)", "c d", 'T' },
	{ "!(a | b) & c", "c", 'T' },
	{ "!(a | b) & c", "a c", 'F' },
	{ "!(a & b) | c", "a b", 'F' },
	{ "!(a & b) | c", "a b c", 'T' },

	/* nesting */
	{ "((a))", "a", 'T' },
	{ "((a))", "", 'F' },
	{ "(((a)))", "a", 'T' },
	{ "((a & b))", "a b", 'T' },
	{ "((a) & (b))", "a", 'F' },
	{ "(a & (b | (c & !d)))", "a c", 'T' },
	{ "(a & (b | (c & !d)))", "a c d", 'F' },
	{ "(a & (b | (c & !d)))", "a b d", 'T' },
	{ "!((a | b) & !(c | d))", "a", 'F' },
	{ "!((a | b) & !(c | d))", "a c", 'T' },
	{ "!((a | b) & !(c | d))", "", 'T' },
	{ "((a | b) & (c | (d & e))) | f", "a d e", 'T' },
	{ "((a | b) & (c | (d & e))) | f", "a d", 'F' },
	{ "((a | b) & (c | (d & e))) | f", "f", 'T' },
	{ "((a | b) & (c | (d & e))) | f", "b c", 'T' },
	{ "!(!(!(a)))", "a", 'F' },
	{ "!(!(!(a)))", "", 'T' },
	{ "(!a | (b & !(c | !d)))", "a b d", 'T' },
	{ "(!a | (b & !(c | !d)))", "a b", 'F' },
	{ "(!a | (b & !(c | !d)))", "a b c d", 'F' },
	{ "(!a | (b & !(c | !d)))", "", 'T' },

	/* whitespace anywhere between tokens, none needed */
	{ "  a  ", "a", 'T' },
	{ "\ta\t", "a", 'T' },
	{ "\na\n", "a", 'T' },
	{ "a\t&\tb", "a b", 'T' },
	{ "a\n|\nb", "b", 'T' },
	{ "a\r\n&\r\nb", "a", 'F' },
	{ "(\ta\n)", "a", 'T' },
	{ "!\n\ta", "", 'T' },
	{ "a&!b|c", "a", 'T' },
	{ "a&!b|c", "a b", 'F' },
	{ "(a|b)&!c", "b", 'T' },
	{ "(a|b)&!c", "b c", 'F' },
	{ " ( a | b ) & ! c ", "a", 'T' },
	{ "\v a \f", "a", 'T' },
	{ "a\v&\fb", "a b", 'T' },

	/* identifier characters: letters, digits, '_', '.', '-' */
	{ "node-1.example.org", "node-1.example.org", 'T' },
	{ "node-1.example.org", "node-1", 'F' },
	{ "node-1", "node-1.example.org", 'F' },
	{ "node-1 | node-2", "node-2", 'T' },
	{ "node-1.example.org & !node-2.example.org", "node-1.example.org", 'T' },
	{ "host_with_underscores", "host_with_underscores", 'T' },
	{ "_", "_", 'T' },
	{ ".", ".", 'T' },
	{ "-", "-", 'T' },
	{ "..", ".", 'F' },
	{ "--", "--", 'T' },
	{ "-a", "-a", 'T' },
	{ "-a", "a", 'F' },
	{ "a-", "a-", 'T' },
	{ "a.b", "a b", 'F' },
	{ "a.b", "a.b", 'T' },
	{ "123", "123", 'T' },
	{ "0", "", 'F' },
	{ "!-a", "a", 'T' },
	{ "a&-b", "a -b", 'T' },
	{ "a&-b", "a b", 'F' },
	{ "gpu.a100 & mem-1tb", "gpu.a100 mem-1tb", 'T' },
	{ "x86_64 | aarch64", "aarch64", 'T' },
	{ "x86_64 & !avx512", "x86_64 avx2", 'T' },
	{ "x86_64 & !avx512", "x86_64 avx512", 'F' },
	{ "A_b-C.d_9", "A_b-C.d_9", 'T' },
	{ "A_b-C.d_9", "a_b-c.d_9", 'F' },
	{ "(node-1.example.org)", "node-1.example.org", 'T' },
	{ "!(node-1.example.org|node-2.example.org)", "node-3.example.org", 'T' },
	{ "!(node-1.example.org|node-2.example.org)", "node-2.example.org", 'F' },
	{ "true & a", "true a", 'T' },
	{ "true | a", "", 'F' },
	{ "!true", "", 'T' },

	/* syntax errors: the shapes from the issue ... */
	{ "a &", "a", 'E' },
	{ "(a", "a", 'E' },
	{ "a b", "a b", 'E' },
	{ "&", "", 'E' },
	{ "!", "", 'E' },
	{ "a | | b", "a b", 'E' },
	{ ")(", "", 'E' },
	{ "a,b", "a b", 'E' },
	{ "a+b", "a b", 'E' },
	{ "$", "", 'E' },
	/* ... dangling and doubled operators ... */
	{ "|", "", 'E' },
	{ "a |", "a", 'E' },
	{ "& a", "a", 'E' },
	{ "| a", "a", 'E' },
	{ "a & & b", "a b", 'E' },
	{ "a ! b", "a", 'E' },
	{ "a !", "a", 'E' },
	{ "a && b", "a b", 'E' },
	{ "a || b", "a b", 'E' },
	{ "a & | b", "a b", 'E' },
	{ "!& a", "", 'E' },
	{ "a &!", "a", 'E' },
	{ "a | b &", "a b", 'E' },
	{ "! ! !", "", 'E' },
	/* ... parentheses ... */
	{ "()", "", 'E' },
	{ "( )", "", 'E' },
	{ "(a))", "a", 'E' },
	{ "((a)", "a", 'E' },
	{ "a)", "a", 'E' },
	{ ")", "", 'E' },
	{ "(", "", 'E' },
	{ "!()", "", 'E' },
	{ "a | ()", "a", 'E' },
	{ "a & ()", "a", 'E' },
	{ "(!)", "", 'E' },
	{ "(&)", "", 'E' },
	{ "(a & b) | (c", "a b", 'E' },
	{ "a & (b | c))", "a b", 'E' },
	/* ... juxtaposed operands ... */
	{ "a (b)", "a b", 'E' },
	{ "(a) b", "a b", 'E' },
	{ "(a)(b)", "a b", 'E' },
	{ "(a | b) c", "a c", 'E' },
	{ "a & b c", "a b c", 'E' },
	{ "a b c", "a b c", 'E' },
	{ "a - b", "a - b", 'E' },	/* three identifiers: "-" is one */
	/* ... characters outside the language */
	{ "a;b", "a", 'E' },
	{ "a:b", "a", 'E' },
	{ "a/b", "a", 'E' },
	{ "a=b", "a", 'E' },
	{ "a*", "a", 'E' },
	{ "a ^ b", "a", 'E' },
	{ "~a", "", 'E' },
	{ "a\\b", "a", 'E' },
	{ "\"a\"", "a", 'E' },
	{ "'a'", "a", 'E' },
	{ "a#comment", "a", 'E' },
	{ "[a]", "a", 'E' },
	{ "{a}", "a", 'E' },
	{ "a@host", "a", 'E' },
	{ "caf\xc3\xa9", "caf\xc3\xa9", 'E' },
	{ "a\x01", "a", 'E' },
	{ "a,", "a", 'E' },
	{ ",", "", 'E' },
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(test_table_size)
{
	/* the issue asks for at least 220 cases */
	ck_assert_uint_ge(N_CASES, 220);
}
END_TEST

START_TEST(test_table)
{
	const struct expr_case *c = &cases[_i];
	struct keywordset *tags = keywordset_new(c->tags);
	struct mxq_expr *expr = NULL;
	char err[256];
	int r;

	ck_assert_ptr_nonnull(tags);
	r = mxq_expr_parse(c->expr, &expr, err, sizeof(err));
	if (c->expect == 'E') {
		ck_assert_msg(r == -EINVAL, "case %d \"%s\": parse returned %d, expected -EINVAL",
			      _i, c->expr, r);
		ck_assert_ptr_null(expr);
		ck_assert_msg(strncmp(err, "at position ", 12) == 0,
			      "case %d \"%s\": message \"%s\"", _i, c->expr, err);
		ck_assert(!mxq_expr_eval_text(c->expr, tags));
	} else {
		bool want = c->expect == 'T';

		ck_assert_msg(r == 0, "case %d \"%s\": parse failed: %s", _i, c->expr, err);
		ck_assert_str_eq(mxq_expr_text(expr), c->expr);
		ck_assert_msg(mxq_expr_eval(expr, tags) == want,
			      "case %d \"%s\" on {%s}: expected %s", _i, c->expr, c->tags,
			      want ? "true" : "false");
		ck_assert(mxq_expr_eval_text(c->expr, tags) == want);
		/* evaluation does not change the program */
		ck_assert(mxq_expr_eval(expr, tags) == want);
	}
	mxq_expr_free(expr);
	keywordset_free(tags);
}
END_TEST

struct message_case {
	const char *expr;
	const char *message;
};

static const struct message_case messages[] = {
	{ "a &", "at position 4: expected identifier, '!' or '(' but found end of input" },
	{ "a b", "at position 3: expected '&', '|' or end of input but found identifier 'b'" },
	{ "(a", "at position 3: expected '&', '|' or ')' but found end of input" },
	{ "(a b)", "at position 4: expected '&', '|' or ')' but found identifier 'b'" },
	{ "&", "at position 1: expected identifier, '!' or '(' but found '&'" },
	{ "!", "at position 2: expected identifier, '!' or '(' but found end of input" },
	{ "a | | b", "at position 5: expected identifier, '!' or '(' but found '|'" },
	{ ")(", "at position 1: expected identifier, '!' or '(' but found ')'" },
	{ "a)", "at position 2: expected '&', '|' or end of input but found ')'" },
	{ "a !b", "at position 3: expected '&', '|' or end of input but found '!'" },
	{ "a,b", "at position 2: expected '&', '|' or end of input "
		 "but found invalid character ','" },
	{ "a+b", "at position 2: expected '&', '|' or end of input "
		 "but found invalid character '+'" },
	{ "$", "at position 1: expected identifier, '!' or '(' but found invalid character '$'" },
	{ "a\x01", "at position 2: expected '&', '|' or end of input "
		   "but found invalid character '\\x01'" },
	{ "  a  &  ", "at position 9: expected identifier, '!' or '(' but found end of input" },
	{ "a\n& b c", "at position 7: expected '&', '|' or end of input but found identifier 'c'" },
	{ "x y123456789012345678901234567890123456789",
	  "at position 3: expected '&', '|' or end of input "
	  "but found identifier 'y1234567890123456789012345678901...'" },
};

START_TEST(test_messages)
{
	const struct message_case *m = &messages[_i];
	struct mxq_expr *expr = NULL;
	char err[256] = "untouched";

	ck_assert_int_eq(mxq_expr_parse(m->expr, &expr, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(expr);
	ck_assert_str_eq(err, m->message);
}
END_TEST

/* Nesting helpers: OPEN repeated n times, then the core, then CLOSE n times. */
static char *nest(const char *open, size_t n, const char *core, const char *close)
{
	size_t len = strlen(open) * n + strlen(core) + strlen(close) * n + 1;
	char *s = malloc(len), *p = s;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++)
		p = stpcpy(p, open);
	p = stpcpy(p, core);
	for (size_t i = 0; i < n; i++)
		p = stpcpy(p, close);
	return s;
}

static int parse_status(const char *text, char *err, size_t errlen, bool *value,
			const char *tags_text)
{
	struct keywordset *tags = keywordset_new(tags_text);
	struct mxq_expr *expr = NULL;
	int r = mxq_expr_parse(text, &expr, err, errlen);

	if (r == 0)
		*value = mxq_expr_eval(expr, tags);
	mxq_expr_free(expr);
	keywordset_free(tags);
	return r;
}

START_TEST(test_depth_limit)
{
	const char *depth_msg = "at position 65: expression nested deeper than 64 levels";
	char err[256];
	bool v = false;
	char *s;

	/* parentheses: 64 levels fine, 65 refused */
	s = nest("(", MXQ_EXPR_MAX_DEPTH, "a", ")");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(v);
	free(s);
	s = nest("(", MXQ_EXPR_MAX_DEPTH + 1, "a", ")");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), -EINVAL);
	ck_assert_str_eq(err, depth_msg);
	free(s);

	/* stacked '!': 64 fine (even count: value unchanged), 65 refused */
	s = nest("!", MXQ_EXPR_MAX_DEPTH, "a", "");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(v);
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), 0);
	ck_assert(!v);
	free(s);
	s = nest("!", MXQ_EXPR_MAX_DEPTH - 1, "a", "");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(!v);
	free(s);
	s = nest("!", MXQ_EXPR_MAX_DEPTH + 1, "a", "");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), -EINVAL);
	ck_assert_str_eq(err, depth_msg);
	free(s);

	/* mixed: each "!(" is two levels */
	s = nest("!(", MXQ_EXPR_MAX_DEPTH / 2, "a", ")");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(v);
	free(s);
	s = nest("!(", MXQ_EXPR_MAX_DEPTH / 2, "!a", ")");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), -EINVAL);
	ck_assert_str_eq(err, depth_msg);
	free(s);

	/* unbalanced deep input hits the depth limit, not the stack */
	s = nest("(", 1000, "", "");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), -EINVAL);
	ck_assert_str_eq(err, depth_msg);
	free(s);
	s = nest("!", 4000, "", "");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), -EINVAL);
	ck_assert_str_eq(err, depth_msg);
	free(s);
}
END_TEST

/* Depth is nesting, not count: closed constructs give their levels back. */
START_TEST(test_depth_is_not_cumulative)
{
	char *deep = nest("(", MXQ_EXPR_MAX_DEPTH, "a", ")");
	char *nots = nest("!", MXQ_EXPR_MAX_DEPTH, "b", "");
	char err[256], text[4096];
	bool v = true;

	snprintf(text, sizeof(text), "%s & %s & %s | %s", deep, deep, nots, nots);
	ck_assert_int_eq(parse_status(text, err, sizeof(err), &v, "a b"), 0);
	ck_assert(v);
	ck_assert_int_eq(parse_status(text, err, sizeof(err), &v, "a"), 0);
	ck_assert(!v);
	/* a '!' ends with its operand, so "!a & !b & ..." never gets deep */
	snprintf(text, sizeof(text), "(%s) & !(%s)", nots, nots);
	ck_assert_int_eq(parse_status(text, err, sizeof(err), &v, ""), -EINVAL);
	snprintf(text, sizeof(text), "(%s) & !(%s)", nots + 2, nots + 2);
	ck_assert_int_eq(parse_status(text, err, sizeof(err), &v, "b"), 0);
	ck_assert(!v);
	free(deep);
	free(nots);
}
END_TEST

/*
 * The deepest evaluation stack the limits allow: "a | b & (" at every level
 * leaves two values waiting per level. Checks it parses and evaluates right.
 */
START_TEST(test_widest_nesting)
{
	char *s = nest("a | b & (", MXQ_EXPR_MAX_DEPTH, "c", ")");
	char err[256];
	bool v;

	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "b c"), 0);
	ck_assert(v);
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "b"), 0);
	ck_assert(!v);
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(v);
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "c"), 0);
	ck_assert(!v);
	free(s);
	/* the same with '!' levels in between */
	s = nest("a | b & !(", MXQ_EXPR_MAX_DEPTH / 2, "c", ")");
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "b"), 0);
	/* innermost c=F: b & !F = T, then b & !T = F, alternating over 32 levels */
	ck_assert(!v);
	free(s);
}
END_TEST

START_TEST(test_length_limit)
{
	char *s = malloc(MXQ_EXPR_MAX_LEN + 2);
	char err[256];
	bool v = false;

	ck_assert_ptr_nonnull(s);
	/* one identifier of exactly the limit */
	memset(s, 'x', MXQ_EXPR_MAX_LEN);
	s[MXQ_EXPR_MAX_LEN] = '\0';
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), 0);
	ck_assert(!v);
	/* one byte more */
	s[MXQ_EXPR_MAX_LEN] = 'x';
	s[MXQ_EXPR_MAX_LEN + 1] = '\0';
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), -EINVAL);
	ck_assert_str_eq(err, "expression longer than 4096 characters");

	/* "a|a|...|a " filling the limit exactly, and blanks one over */
	for (size_t i = 0; i < MXQ_EXPR_MAX_LEN; i++)
		s[i] = i % 2 == 0 ? 'a' : '|';
	s[MXQ_EXPR_MAX_LEN - 1] = ' ';
	s[MXQ_EXPR_MAX_LEN] = '\0';
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "a"), 0);
	ck_assert(v);
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, "b"), 0);
	ck_assert(!v);
	memset(s, ' ', MXQ_EXPR_MAX_LEN + 1);
	s[MXQ_EXPR_MAX_LEN + 1] = '\0';
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), -EINVAL);
	s[MXQ_EXPR_MAX_LEN] = '\0';
	ck_assert_int_eq(parse_status(s, err, sizeof(err), &v, ""), 0);
	ck_assert(v);
	free(s);
}
END_TEST

START_TEST(test_api_edges)
{
	struct keywordset *tags = keywordset_new("a");
	struct mxq_expr *expr = (struct mxq_expr *)&tags; /* sentinel, must stay */
	char small[8];

	ck_assert(!mxq_expr_eval(NULL, tags));
	ck_assert(!mxq_expr_eval_text("a &", tags));
	ck_assert(mxq_expr_eval_text("a", tags));
	ck_assert(!mxq_expr_eval_text(NULL, tags));
	ck_assert_ptr_null(mxq_expr_text(NULL));
	mxq_expr_free(NULL);

	/* ret_expr untouched on failure; no buffer or a tiny one is fine */
	ck_assert_int_eq(mxq_expr_parse("a &", &expr, NULL, 0), -EINVAL);
	ck_assert_ptr_eq(expr, (struct mxq_expr *)&tags);
	ck_assert_int_eq(mxq_expr_parse("a &", &expr, small, sizeof(small)), -EINVAL);
	ck_assert_str_eq(small, "at posi");
	ck_assert_int_eq(mxq_expr_parse(NULL, &expr, small, sizeof(small)), -EINVAL);
	ck_assert_ptr_eq(expr, (struct mxq_expr *)&tags);

	/* a NULL tag set is the empty set */
	expr = NULL;
	ck_assert_int_eq(mxq_expr_parse("!a", &expr, NULL, 0), 0);
	ck_assert(mxq_expr_eval(expr, NULL));
	ck_assert(!mxq_expr_eval(expr, tags));
	mxq_expr_free(expr);
	expr = NULL;
	ck_assert_int_eq(mxq_expr_parse("  ", &expr, NULL, 0), 0);
	ck_assert(mxq_expr_eval(expr, NULL));
	ck_assert_str_eq(mxq_expr_text(expr), "  ");
	mxq_expr_free(expr);
	keywordset_free(tags);
}
END_TEST

/* One parsed expression, many tag sets: compare against the formula in C. */
START_TEST(test_all_assignments)
{
	static const char *names[] = { "a", "b", "c", "d" };
	const char *text = "!(a & b) & (c | !d) | a & !c & d";
	struct mxq_expr *expr = NULL;

	ck_assert_int_eq(mxq_expr_parse(text, &expr, NULL, 0), 0);
	for (unsigned m = 0; m < 16; m++) {
		struct keywordset *tags = keywordset_new(NULL);
		bool a = m & 1, b = m & 2, c = m & 4, d = m & 8;

		for (unsigned i = 0; i < 4; i++)
			if (m & (1u << i))
				keywordset_add(tags, names[i]);
		ck_assert_msg(mxq_expr_eval(expr, tags) ==
			      ((!(a && b) && (c || !d)) || (a && !c && d)), "assignment %u", m);
		keywordset_free(tags);
	}
	mxq_expr_free(expr);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("expr");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_table_size);
	tcase_add_loop_test(tc, test_table, 0, (int)N_CASES);
	tcase_add_loop_test(tc, test_messages, 0, (int)(sizeof(messages) / sizeof(messages[0])));
	tcase_add_test(tc, test_depth_limit);
	tcase_add_test(tc, test_depth_is_not_cumulative);
	tcase_add_test(tc, test_widest_nesting);
	tcase_add_test(tc, test_length_limit);
	tcase_add_test(tc, test_api_edges);
	tcase_add_test(tc, test_all_assignments);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
