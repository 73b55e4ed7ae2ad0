/*
 * mxqadmin - subcommands. Each mxqadmin_*.c file implements one family and
 * exports one entry point; mxqadmin.c only dispatches.
 *
 * Contract of every entry point: argv[0] is the subcommand name ("db",
 * "expr", ...), options are parsed by the subcommand itself, the return value
 * is the process exit status (0 ok, 1 operational failure, 2 usage or input
 * error). Errors are printed as one line "mxqadmin: ..." on stderr.
 */
#ifndef MXQADMIN_H
#define MXQADMIN_H

/* Options common to subcommands that talk to the database. */
struct mxqadmin_db_options {
	const char *defaults_file; /* -M/--mysql-default-file, NULL = default */
	const char *group;         /* -S/--mysql-default-group, default mxqclient */
};

int mxqadmin_db_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
int mxqadmin_expr_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);
int mxqadmin_qualify_main(int argc, char **argv, const struct mxqadmin_db_options *dbopt);

#endif
