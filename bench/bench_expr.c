/*
 * bench_expr - how fast the prerequisites language parses and evaluates.
 *
 * A 20-term expression (every operator and parentheses) is evaluated
 * against a 50-word tag set a few million times, the way mxqd and the power
 * manager evaluate one group's prerequisites against many hosts. Prints
 * figures only; nothing here fails on timing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keywordset.h"
#include "mxq_expr.h"

#define EVALUATIONS 5000000
#define PARSES      200000
#define TAG_COUNT   50

static const char expression[] =
	"(t01 | t02) & !t03 & (t04 | t05 & !(t06 | t07)) "
	"| t08 & t09 & !t10 "
	"| (t11 | !t12) & (t13 & (t14 | t15)) "
	"| !(t16 & t17) & t18 & (t19 | node-20.example.org)";

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void)
{
	struct keywordset *tags = keywordset_new(NULL);
	struct mxq_expr *expr = NULL;
	char err[256], word[32];
	volatile unsigned sink = 0;
	double start, eval_ns, parse_ns;

	/* every other term present, the rest of the 50 words are unrelated */
	for (int i = 1; i <= 19; i += 2) {
		snprintf(word, sizeof(word), "t%02d", i);
		keywordset_add(tags, word);
	}
	for (int i = 0; keywordset_count(tags) < TAG_COUNT; i++) {
		snprintf(word, sizeof(word), "feature-%03d", i);
		keywordset_add(tags, word);
	}
	if (keywordset_count(tags) != TAG_COUNT) {
		fprintf(stderr, "bench_expr: could not build the tag set\n");
		return 1;
	}
	if (mxq_expr_parse(expression, &expr, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_expr: %s\n", err);
		return 1;
	}

	start = now_ns();
	for (int i = 0; i < EVALUATIONS; i++)
		sink += mxq_expr_eval(expr, tags);
	eval_ns = (now_ns() - start) / EVALUATIONS;

	start = now_ns();
	for (int i = 0; i < PARSES; i++) {
		struct mxq_expr *e = NULL;

		if (mxq_expr_parse(expression, &e, NULL, 0) == 0)
			sink += 1;
		mxq_expr_free(e);
	}
	parse_ns = (now_ns() - start) / PARSES;

	printf("expr eval: %.0f ns/evaluation (20 terms, %d tags)\n", eval_ns, TAG_COUNT);
	printf("expr parse: %.0f ns/parse (20 terms, %zu characters)\n", parse_ns,
	       strlen(expression));

	mxq_expr_free(expr);
	keywordset_free(tags);
	return 0;
}
