/*
 * parser.y - the prerequisites language (mxq_expr.h): grammar, lexer,
 * compiler and evaluator in one file.
 *
 * Parsing compiles straight into a postfix program: an LR parser reduces
 * operands before their operators, so every grammar action just appends one
 * instruction (PUSH_IDENT, NOT, AND, OR) and no syntax tree is built.
 * Evaluation walks the program once with a small fixed stack, no recursion.
 *
 * Limits: the text is at most MXQ_EXPR_MAX_LEN bytes and open constructs
 * ('(' not yet closed, '!' whose operand is not complete) never exceed
 * MXQ_EXPR_MAX_DEPTH. The lexer enforces the depth before the parser
 * shifts, which bounds both bison's stack (YYMAXDEPTH below) and the
 * evaluation stack (EVAL_STACK_MAX); see the comments there.
 *
 * Errors: -EINVAL with a one-line message in the caller's buffer naming the
 * 1-based character position and what was expected there; -ENOMEM. Nothing
 * here logs.
 */

%define api.pure full
%define api.prefix {mxq_expr_yy}
%define api.value.type {struct mxq_expr_span}
%define parse.error custom
%define parse.lac full
%param {struct mxq_expr_parser *p}
%expect 0

%code requires {
#include <stdint.h>

/* An identifier: offset and length in the expression text. */
struct mxq_expr_span {
	uint32_t off;
	uint32_t len;
};

struct mxq_expr_parser;
}

%code {
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keywordset.h"
#include "mxq_expr.h"

/*
 * Bison's stack holds, per open '(' at most "( expr | expr &" (5 entries),
 * per pending '!' one, plus the outermost level and the state 0. With at
 * most MXQ_EXPR_MAX_DEPTH open constructs that is below 5 * (depth + 2);
 * give it room and make the whole stack automatic so parsing never needs to
 * grow it.
 */
#define YYMAXDEPTH  (8 * (MXQ_EXPR_MAX_DEPTH + 2))
#define YYINITDEPTH YYMAXDEPTH

/*
 * Values waiting on the evaluation stack: per '(' level at most two
 * ("x | y & ..."), three at the innermost level; '!' adds none.
 */
#define EVAL_STACK_MAX (2 * MXQ_EXPR_MAX_DEPTH + 3)

enum expr_op {
	OP_TRUE,	/* push true (the empty expression) */
	OP_IDENT,	/* push "tag set contains identifier ARG" */
	OP_NOT,
	OP_AND,
	OP_OR,
};
#define OP_BITS 3
#define OP_CODE(insn) ((enum expr_op)((insn) & ((1u << OP_BITS) - 1)))
#define OP_ARG(insn)  ((insn) >> OP_BITS)

struct mxq_expr {
	char *text;			/* copy of the source; identifiers point into it */
	uint32_t *program;		/* postfix instructions: OP_BITS code, rest argument */
	size_t program_len;
	struct mxq_expr_span *idents;	/* string table of OP_IDENT */
	size_t idents_len;
};

struct mxq_expr_parser {
	const char *text;
	size_t len;
	size_t cursor;			/* lexer position */
	size_t token_pos;		/* start of the token returned last */
	size_t token_len;
	char nesting[MXQ_EXPR_MAX_DEPTH]; /* open '(' and pending '!', innermost last */
	size_t nesting_len;

	struct mxq_expr *expr;		/* program and string table being built */
	size_t program_cap;
	size_t idents_cap;
	size_t stack_depth;		/* evaluation stack depth after the program so far */

	char *errbuf;
	size_t errlen;
};

static int yylex(YYSTYPE *value, struct mxq_expr_parser *p);
static void yyerror(struct mxq_expr_parser *p, const char *msg);
static void emit(struct mxq_expr_parser *p, enum expr_op op, uint32_t arg);
static void emit_ident(struct mxq_expr_parser *p, struct mxq_expr_span ident);
}

%token IDENT "identifier"

%left '|'
%left '&'
%precedence '!'

%%

input
	: expr
	;

expr
	: IDENT			{ emit_ident(p, $1); }
	| '!' expr		{ emit(p, OP_NOT, 0); }
	| expr '&' expr		{ emit(p, OP_AND, 0); }
	| expr '|' expr		{ emit(p, OP_OR, 0); }
	| '(' expr ')'
	;

%%

static bool is_ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '-';
}

static void set_error(struct mxq_expr_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_error(struct mxq_expr_parser *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->errbuf || p->errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(p->errbuf, p->errlen, fmt, ap);
	va_end(ap);
}

/* Open a '(' or a '!'; refuses to go deeper than the limit. */
static int nesting_push(struct mxq_expr_parser *p, char what)
{
	if (p->nesting_len == MXQ_EXPR_MAX_DEPTH) {
		set_error(p, "at position %zu: expression nested deeper than %d levels",
			  p->token_pos + 1, MXQ_EXPR_MAX_DEPTH);
		return -EINVAL;
	}
	p->nesting[p->nesting_len++] = what;
	return 0;
}

/* An operand just ended: every '!' waiting for it is complete. */
static void nesting_operand_done(struct mxq_expr_parser *p)
{
	while (p->nesting_len > 0 && p->nesting[p->nesting_len - 1] == '!')
		p->nesting_len--;
}

static int yylex(YYSTYPE *value, struct mxq_expr_parser *p)
{
	const char *s = p->text;
	int c;

	while (p->cursor < p->len && isspace((unsigned char)s[p->cursor]))
		p->cursor++;
	p->token_pos = p->cursor;
	p->token_len = 0;
	if (p->cursor >= p->len)
		return MXQ_EXPR_YYEOF;

	c = (unsigned char)s[p->cursor];
	if (is_ident_char(c)) {
		size_t end = p->cursor;

		while (end < p->len && is_ident_char((unsigned char)s[end]))
			end++;
		value->off = (uint32_t)p->cursor;
		value->len = (uint32_t)(end - p->cursor);
		p->token_len = end - p->cursor;
		p->cursor = end;
		nesting_operand_done(p);
		return IDENT;
	}

	p->cursor++;
	p->token_len = 1;
	switch (c) {
	case '!':
	case '(':
		if (nesting_push(p, (char)c) < 0)
			return MXQ_EXPR_YYerror; /* reported, bison skips yyerror */
		return c;
	case ')':
		/* an unmatched ')' is the parser's to report */
		if (p->nesting_len > 0 && p->nesting[p->nesting_len - 1] == '(') {
			p->nesting_len--;
			nesting_operand_done(p);
		}
		return c;
	case '&':
	case '|':
		return c;
	default:
		return MXQ_EXPR_YYUNDEF;
	}
}

static void emit(struct mxq_expr_parser *p, enum expr_op op, uint32_t arg)
{
	/*
	 * Every instruction stands for at least one character of the text, so
	 * program_cap (length + 1) is never reached; the depth limit keeps the
	 * evaluation stack within EVAL_STACK_MAX.
	 */
	assert(p->expr->program_len < p->program_cap);
	p->expr->program[p->expr->program_len++] = (arg << OP_BITS) | (uint32_t)op;
	if (op == OP_IDENT || op == OP_TRUE)
		p->stack_depth++;
	else if (op != OP_NOT)
		p->stack_depth--;
	assert(p->stack_depth <= EVAL_STACK_MAX);
}

static void emit_ident(struct mxq_expr_parser *p, struct mxq_expr_span ident)
{
	/* identifiers are separated by at least one character */
	assert(p->expr->idents_len < p->idents_cap);
	p->expr->idents[p->expr->idents_len] = ident;
	emit(p, OP_IDENT, (uint32_t)p->expr->idents_len++);
}

/* "identifier 'name'", "'&'", "end of input" - the token the parser choked on. */
static void describe_found(const struct mxq_expr_parser *p, yysymbol_kind_t kind,
			   char *buf, size_t len)
{
	const char *s = p->text + p->token_pos;
	unsigned char c = (unsigned char)*s;

	switch (kind) {
	case YYSYMBOL_YYEOF:
		snprintf(buf, len, "end of input");
		break;
	case YYSYMBOL_IDENT:
		if (p->token_len > 32)
			snprintf(buf, len, "identifier '%.32s...'", s);
		else
			snprintf(buf, len, "identifier '%.*s'", (int)p->token_len, s);
		break;
	case YYSYMBOL_YYUNDEF:
		if (isprint(c))
			snprintf(buf, len, "invalid character '%c'", c);
		else
			snprintf(buf, len, "invalid character '\\x%02x'", c);
		break;
	default:
		snprintf(buf, len, "%s", yysymbol_name(kind));
		break;
	}
}

static const char *describe_expected(yysymbol_kind_t kind)
{
	switch (kind) {
	case YYSYMBOL_YYEOF:
		return "end of input";
	case YYSYMBOL_IDENT:
		return "identifier";
	default:
		return yysymbol_name(kind);
	}
}

/* Operands first, then operators, then closers: reads naturally in messages. */
static int expected_rank(yysymbol_kind_t kind)
{
	static const char order[] = "!(&|)";
	const char *name = yysymbol_name(kind);
	const char *at;

	if (kind == YYSYMBOL_IDENT)
		return 0;
	if (kind == YYSYMBOL_YYEOF)
		return (int)sizeof(order) + 1;
	/* character tokens are named "'&'" */
	if (name[0] == '\'' && name[1] && (at = strchr(order, name[1])))
		return 1 + (int)(at - order);
	return (int)sizeof(order);
}

static void sort_expected(yysymbol_kind_t *kinds, int n)
{
	for (int i = 1; i < n; i++) {
		yysymbol_kind_t k = kinds[i];
		int j = i;

		for (; j > 0 && expected_rank(kinds[j - 1]) > expected_rank(k); j--)
			kinds[j] = kinds[j - 1];
		kinds[j] = k;
	}
}

/* "at position 4: expected identifier, '!' or '(' but found end of input" */
static int yyreport_syntax_error(const yypcontext_t *ctx, struct mxq_expr_parser *p)
{
	yysymbol_kind_t expected[YYNTOKENS];
	char found[64], list[128] = "";
	size_t used = 0;
	int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);

	if (n < 0)
		return n;
	sort_expected(expected, n);
	for (int i = 0; i < n && used < sizeof(list); i++) {
		const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", sep,
				 describe_expected(expected[i]));

		if (w < 0)
			break;
		used += (size_t)w;
	}
	describe_found(p, yypcontext_token(ctx), found, sizeof(found));
	if (n == 0)
		set_error(p, "at position %zu: unexpected %s", p->token_pos + 1, found);
	else
		set_error(p, "at position %zu: expected %s but found %s",
			  p->token_pos + 1, list, found);
	return 0;
}

/* Only reached for "memory exhausted"; syntax errors go through the above. */
static void yyerror(struct mxq_expr_parser *p, const char *msg)
{
	set_error(p, "%s", msg);
}

static bool is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

void mxq_expr_free(struct mxq_expr *expr)
{
	if (!expr)
		return;
	free(expr->text);
	free(expr->program);
	free(expr->idents);
	free(expr);
}

int mxq_expr_parse(const char *text, struct mxq_expr **ret_expr,
		   char *errbuf, size_t errlen)
{
	struct mxq_expr_parser p = { .errbuf = errbuf, .errlen = errlen };
	struct mxq_expr *expr;
	size_t len;
	int r;

	if (errbuf && errlen > 0)
		errbuf[0] = '\0';
	if (!text || !ret_expr) {
		set_error(&p, "no expression given");
		return -EINVAL;
	}
	len = strnlen(text, MXQ_EXPR_MAX_LEN + 1);
	if (len > MXQ_EXPR_MAX_LEN) {
		set_error(&p, "expression longer than %d characters", MXQ_EXPR_MAX_LEN);
		return -EINVAL;
	}

	expr = calloc(1, sizeof(*expr));
	if (!expr)
		goto nomem;
	p.expr = expr;
	p.text = text;
	p.len = len;
	/* one instruction per character at most; identifiers need a separator */
	p.program_cap = len + 1;
	p.idents_cap = len / 2 + 1;
	expr->text = strndup(text, len);
	expr->program = calloc(p.program_cap, sizeof(*expr->program));
	expr->idents = calloc(p.idents_cap, sizeof(*expr->idents));
	if (!expr->text || !expr->program || !expr->idents)
		goto nomem;

	if (is_blank(text, len)) {
		emit(&p, OP_TRUE, 0);
	} else {
		r = mxq_expr_yyparse(&p);
		if (r == 1) {
			mxq_expr_free(expr);
			return -EINVAL;
		}
		if (r != 0)
			goto nomem;
	}

	/* give back the slack; keeping the larger block is fine if this fails */
	if (expr->program_len < p.program_cap) {
		uint32_t *shrunk = realloc(expr->program, expr->program_len * sizeof(*shrunk));

		if (shrunk)
			expr->program = shrunk;
	}
	if (expr->idents_len == 0) {
		free(expr->idents);
		expr->idents = NULL;
	} else if (expr->idents_len < p.idents_cap) {
		struct mxq_expr_span *shrunk =
			realloc(expr->idents, expr->idents_len * sizeof(*shrunk));

		if (shrunk)
			expr->idents = shrunk;
	}
	*ret_expr = expr;
	return 0;

nomem:
	mxq_expr_free(expr);
	set_error(&p, "out of memory");
	return -ENOMEM;
}

bool mxq_expr_eval(const struct mxq_expr *expr, const struct keywordset *tags)
{
	bool stack[EVAL_STACK_MAX];
	size_t sp = 0;

	if (!expr)
		return false;
	for (size_t i = 0; i < expr->program_len; i++) {
		uint32_t insn = expr->program[i];
		const struct mxq_expr_span *id;

		switch (OP_CODE(insn)) {
		case OP_TRUE:
			stack[sp++] = true;
			break;
		case OP_IDENT:
			id = &expr->idents[OP_ARG(insn)];
			stack[sp++] = keywordset_contains_n(tags, expr->text + id->off, id->len);
			break;
		case OP_NOT:
			stack[sp - 1] = !stack[sp - 1];
			break;
		case OP_AND:
			sp--;
			stack[sp - 1] = stack[sp - 1] && stack[sp];
			break;
		case OP_OR:
			sp--;
			stack[sp - 1] = stack[sp - 1] || stack[sp];
			break;
		}
	}
	return sp == 1 && stack[0];
}

bool mxq_expr_eval_text(const char *text, const struct keywordset *tags)
{
	struct mxq_expr *expr = NULL;
	bool result;

	if (mxq_expr_parse(text, &expr, NULL, 0) < 0)
		return false;
	result = mxq_expr_eval(expr, tags);
	mxq_expr_free(expr);
	return result;
}

const char *mxq_expr_text(const struct mxq_expr *expr)
{
	return expr ? expr->text : NULL;
}
