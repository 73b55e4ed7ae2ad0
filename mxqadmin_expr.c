/*
 * mxqadmin expr - evaluate a prerequisites expression against a tag set,
 * to try out what a --prerequisites option will do. No database.
 *
 *   mxqadmin expr EXPR [--tags "WORD ..."]
 *
 * The tags given are exactly the tag set: unlike a host's tags, no implicit
 * "true" or host names are added. Prints "true" or "false" and exits 0; a
 * syntax error is reported on stderr with exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "keywordset.h"
#include "mxq_expr.h"
#include "mxqadmin.h"

static void expr_usage(FILE *f)
{
	fprintf(f, "usage: mxqadmin expr EXPR [-t|--tags \"WORD ...\"]\n"
		   "  Evaluate a prerequisites expression against exactly the given tags\n"
		   "  (no implicit words) and print true or false.\n");
}

int mxqadmin_expr_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt)
{
	static const struct option opts[] = {
		{ "tags", required_argument, NULL, 't' },
		{ "help", no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tags_text = NULL;
	struct keywordset *tags = NULL;
	struct mxq_expr *expr = NULL;
	char err[256];
	int c, r;

	(void)dbopt;
	opterr = 0; /* one "mxqadmin: ..." line instead of getopt's own */
	while ((c = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tags_text = optarg;
			break;
		case 'h':
			expr_usage(stdout);
			return 0;
		case ':':
			return mxq_usage_error("expr: option '%s' needs an argument",
				argv[optind - 1]);
		default:
			if (optopt)
				return mxq_usage_error("expr: unknown option '-%c'"
						       " (try 'mxqadmin expr --help')", optopt);
			return mxq_usage_error("expr: unknown option '%s' (try 'mxqadmin expr --help')",
					       argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return mxq_usage_error("expr needs exactly one expression "
				"(quote it; use -- before one starting with '-')");

	r = mxq_expr_parse(argv[optind], &expr, err, sizeof(err));
	if (r == -EINVAL)
		return mxq_usage_error("syntax error in expression: %s", err);
	if (r < 0)
		return mxq_failure("cannot parse expression: out of memory");
	tags = keywordset_new(tags_text);
	if (!tags) {
		mxq_complain("out of memory");
		mxq_expr_free(expr);
		return MXQ_EXIT_FAILURE;
	}

	puts(mxq_expr_eval(expr, tags) ? "true" : "false");

	keywordset_free(tags);
	mxq_expr_free(expr);
	return 0;
}
