/*
 * mxqadmin - administration tool: database schema, qualification debugging,
 * power management. Global options (-M, -S) come before the subcommand;
 * everything after it belongs to the subcommand.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_db.h"
#include "mx_log.h"
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
		   "       mxqadmin --help | --version\n\n"
		   "  -M, --mysql-default-file FILE   MySQL defaults file (default %s)\n"
		   "  -S, --mysql-default-group GROUP group in it (default %s)\n\ncommands:\n",
		MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %s\n", subcommands[i].summary);
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
	/* '+': stop at the subcommand, its options are its own */
	while ((c = getopt_long(argc, argv, "+:M:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'M': dbopt.defaults_file = optarg; dbopt.chosen = true; break;
		case 'S': dbopt.group = optarg; dbopt.chosen = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("mxqadmin %s\n", MXQ_VERSION); return 0;
		default:  mxq_complain_getopt(c, argv); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "mxqadmin: missing command (try 'mxqadmin --help')\n");
		return 2;
	}
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
	fprintf(stderr, "mxqadmin: unknown command '%s' (try 'mxqadmin --help')\n", argv[optind]);
	return 2;
}
