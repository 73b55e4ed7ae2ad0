/*
 * mxqadmin - administration tool: database schema, qualification debugging,
 * power management. The global options (-M, -S) may stand anywhere before
 * "--", also after the subcommand (GNU style); everything else after the
 * subcommand belongs to it.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_db.h"
#include "mx_log.h"
#include "mx_util.h"
#include "mxq_client.h"
#include "mxq_privs.h"
#include "mxqadmin.h"

struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "db",      mxqadmin_db_main,      "db upgrade|status: create or upgrade the schema" },
	{ "expr",    mxqadmin_expr_main,    "expr EXPR [--tags WORDS]: evaluate a prerequisites expression" },
	{ "qualify", mxqadmin_qualify_main, "qualify --group ID [--host HOST]: which hosts may run a group, and why not" },
	{ "power",   mxqadmin_power_main,   "power list|status|events|explain|on|off|clear|exclude|include: power management" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mxqadmin [-M FILE] [-S GROUP] COMMAND [ARGS...]\n"
		   "       mxqadmin --help | --version\n"
		   "(-M and -S may also follow the command)\n\n"
		   "  -M, --mysql-default-file FILE   MySQL defaults file (default %s)\n"
		   "  -S, --mysql-default-group GROUP group in it (default %s)\n\ncommands:\n",
		MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %s\n", subcommands[i].summary);
}

/*
 * The global option at ARGV[I] ("-M FILE", "-MFILE", "--mysql-default-file
 * FILE", "--mysql-default-file=FILE", the same for -S): how many words it
 * takes (1 or 2; 0 = not one), its letter in *LETTER and its value in *VALUE
 * (NULL when the value is missing).
 */
static int global_option_at(int argc, char **argv, int i, int *letter, const char **value)
{
	static const struct { int letter; const char *name; } names[] = {
		{ 'M', "--mysql-default-file" },
		{ 'S', "--mysql-default-group" },
	};
	const char *w = argv[i];

	for (size_t k = 0; k < MX_ARRAY_SIZE(names); k++) {
		size_t len = strlen(names[k].name);
		const char *inline_value = NULL;

		if (w[0] == '-' && w[1] == names[k].letter)
			inline_value = w[2] ? w + 2 : NULL;
		else if (strncmp(w, names[k].name, len) == 0 && (!w[len] || w[len] == '='))
			inline_value = w[len] ? w + len + 1 : NULL;
		else
			continue;
		*letter = names[k].letter;
		if (inline_value) {
			*value = inline_value;
			return 1;
		}
		*value = i + 1 < argc ? argv[i + 1] : NULL;
		return 2;
	}
	return 0;
}

/*
 * Take -M/-S out of the words after the subcommand (up to "--") into DBOPT,
 * compacting argv. Returns the new argc, or -1 after a complaint.
 */
static int take_global_options(int argc, char **argv, int first,
			       struct mxqadmin_db_options *dbopt)
{
	int out = first, i = first;

	while (i < argc) {
		const char *value;
		int letter, n;

		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[out++] = argv[i++];
			break;
		}
		n = global_option_at(argc, argv, i, &letter, &value);
		if (n == 0) {
			argv[out++] = argv[i++];
			continue;
		}
		if (!value) {
			mxq_complain("option '%s' needs a value (try 'mxqadmin --help')", argv[i]);
			return -1;
		}
		if (letter == 'M')
			dbopt->defaults_file = value;
		else
			dbopt->group = value;
		dbopt->chosen = true;
		i += n;
	}
	argv[out] = NULL;
	return out;
}

/* --json, or -j alone or in a cluster of short options, anywhere. */
static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			return true;
		if (argv[i][0] == '-' && argv[i][1] != '-' && strchr(argv[i], 'j'))
			return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mysql-default-file",  required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "help",                no_argument,       NULL, 'h' },
		{ "version",             no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct mxqadmin_db_options dbopt = {
		.defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE"),
		.group = getenv("MXQ_MYSQL_DEFAULT_GROUP"),
	};
	int c;

	mx_log_set_program("mxqadmin");
	mxq_privs_init(); /* first: from here on we act as the caller */
	mxq_client_set_program("mxqadmin");
	dbopt.chosen = (dbopt.defaults_file && *dbopt.defaults_file) || (dbopt.group && *dbopt.group);
	if (!dbopt.group || !*dbopt.group)
		dbopt.group = MX_DB_GROUP_CLIENT;
	/* '+': stop at the subcommand, its options are its own (but for -M/-S,
	 * taken out of them below) */
	while ((c = getopt_long(argc, argv, "+:M:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'M': dbopt.defaults_file = optarg; dbopt.chosen = true; break;
		case 'S': dbopt.group = optarg; dbopt.chosen = true; break;
		case 'h': usage(stdout); return MXQ_EXIT_OK;
		case 'V': printf("mxqadmin %s\n", MXQ_VERSION); return 0;
		default:  mxq_complain_getopt(c, argv); return MXQ_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return mxq_usage_error("missing command (try 'mxqadmin --help')");
	argc = take_global_options(argc, argv, optind + 1, &dbopt);
	if (argc < 0)
		return MXQ_EXIT_USAGE;
	/* tables are printed through a filter that escapes control characters;
	 * JSON (jansson) is exact already and stays unfiltered */
	if (!wants_json(argc, argv))
		mxq_client_escape_stdout();
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[optind], subcommands[i].name) == 0) {
			int sub_argc = argc - optind;
			char **sub_argv = argv + optind;
			optind = 0; /* reset getopt for the subcommand */
			return subcommands[i].main(sub_argc, sub_argv, &dbopt);
		}
	}
	return mxq_usage_error("unknown command '%s' (try 'mxqadmin --help')", argv[optind]);
}
