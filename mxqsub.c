/*
 * mxqsub - submit one job: mxqsub [options] COMMAND [ARGS...]
 *
 * Flow: parse and validate every option (nothing touches the database until
 * all of it is known to be good), then in one transaction find the newest
 * open group of this user with identical group attributes or create one, and
 * insert the job. Prints mxq_group_id=, mxq_group_name= and mxq_job_id=.
 * Upstream's -g ID (join exactly that group, which must be found by the same
 * lookup; never create one) and -n (join only a group with work left or no
 * jobs yet) narrow that lookup.
 *
 * Upstream MXQ options are accepted with upstream's meaning: -r sets the
 * job_flags bits upstream sets (no daemon acts on them), -v, --debug and -D
 * change nothing, and the long forms upstream deprecated (--group-id and
 * --group_id for --group-name, --group_priority) work with a warning line.
 *
 * Configuration: the MySQL defaults file and group come from -M/-S, else
 * $MXQ_MYSQL_DEFAULT_FILE / $MXQ_MYSQL_DEFAULT_GROUP, else the built-in
 * defaults (mx_db.h).
 *
 * Errors: one line "mxqsub: ..." on stderr. Exit status 0 on success, 2 for
 * usage errors and bad option values (nothing was written), 1 when the
 * database could not be reached or refused the submission, also when the
 * group of -g cannot take the job (the transaction is rolled back).
 */
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keywordset.h"
#include "mx_db.h"
#include "mx_safefs.h"
#include "mxq_client.h"
#include "mxq_privs.h"
#include "mx_util.h"
#include "mxq_expr.h"
#include "mxq_status.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif


/* Column limits of mysql/create_tables.sql, checked before connecting. */
#define MAX_GROUP_NAME   128
#define MAX_COMMAND      256
#define MAX_PATH_COL     4096
#define MAX_ARGV_COL     32768
#define MAX_WORDS_COL    1000
#define MAX_USER_COL     256
#define MAX_HOST_COL     64

/* Everything one submission writes: the group attributes and the job. */
struct submission {
	/* group attributes: jobs with identical values share a group */
	const char *group_name;     /* --group-name, default "default" */
	unsigned group_priority;    /* --group-priority, default 127 */
	const char *job_command;    /* --command-alias, default COMMAND as given */
	unsigned job_threads;       /* --threads, default 1 */
	uint64_t job_memory;        /* --memory in MiB, default 2048 */
	uint64_t job_time;          /* --runtime in minutes, default 15 */
	unsigned job_max_per_node;  /* --max-jobs-per-node, 0 = no limit */
	unsigned job_tmpdir_size;   /* --tmpdir in GiB, 0 = none */
	unsigned job_gpu;           /* --gpu: number of GPUs (0 or 1) */
	char *tags;                 /* --tags, canonical (sorted, one blank) */
	const char *prerequisites;  /* --prerequisites, as given (validated) */
	char *whitelist;            /* --whitelist, canonical */
	char *blacklist;            /* --blacklist, canonical */

	/* the submitting user */
	uid_t user_uid;
	gid_t user_gid;
	char *user_name;
	char *user_group;

	/* the job */
	char *workdir;              /* absolute */
	char *job_stdout;           /* absolute */
	char *job_stderr;           /* absolute */
	unsigned job_umask;
	unsigned job_priority;      /* --priority, default 127 */
	int job_argc;
	char *job_argv;             /* mx_argv_encode() of COMMAND ARGS... */
	char host_submit[MAX_HOST_COL + 1];
	const char *callback;       /* --callback, "" = none */
	uint64_t job_flags;         /* -r: upstream's MXQ_JOB_FLAGS_*_ON_HOSTFAIL bits */

	/* which group: automatic (the newest open one with equal attributes) */
	uint64_t join_group_id;     /* -g ID: only this group, never a new one; 0 = any */
	bool with_work_only;        /* -n: only a group with queued/running jobs or none yet */
};

/* job_flags bits of upstream mxq_job.h (mxqsub -r); stored, acted on by no daemon */
#define JOB_FLAG_RESTART_ON_HOSTFAIL (1ULL << 0)
#define JOB_FLAG_REQUEUE_ON_HOSTFAIL (1ULL << 1)

/* How to reach the database. */
struct db_options {
	const char *defaults_file;
	const char *group;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: mxqsub [OPTIONS] COMMAND [ARGS...]\n"
"\n"
"Queue COMMAND to run on a cluster node that offers what the job needs.\n"
"\n"
"Job environment:\n"
"  -w, --workdir DIR            working directory (default: current directory)\n"
"  -o, --stdout FILE            file for standard output (default: /dev/null)\n"
"  -e, --stderr FILE            file for standard error (default: the --stdout file)\n"
"  -u, --umask MASK             octal umask for the job (default: current umask)\n"
"  -p, --priority N             job priority within its group, 0-65535 (default: 127)\n"
"      --callback EXECUTABLE    run EXECUTABLE (absolute path) after the job ended\n"
"  -r, --restartable[=MODE]     upstream's restart mode: always (default), samehost or never;\n"
"                               stored only, no daemon restarts jobs after a host failure\n"
"\n"
"Resources (jobs with equal resources and names share a group):\n"
"  -j, --threads N              processors per job (alias: --processors; default: 1)\n"
"  -m, --memory SIZE            memory, e.g. 512, 2G, 1G512M (bare number: MiB; default: 2G)\n"
"  -t, --runtime TIME           run time, e.g. 90, 2h30m, 1d (bare number: minutes;\n"
"                               units y w d h m s; default: 15m)\n"
"      --tmpdir SIZE            private scratch space (bare number: GiB)\n"
"      --gpu                    the job needs one GPU\n"
"      --max-jobs-per-node N    at most N jobs of the group per node (default: 0 = no limit)\n"
"\n"
"Grouping and placement:\n"
"  -N, --group-name NAME        group name (default: default)\n"
"  -P, --group-priority N       group priority, 0-65535 (default: 127)\n"
"  -g ID                        add the job to group ID, which must be yours, open and\n"
"                               have exactly this job's attributes (else: error)\n"
"  -n, --new-group              join only a group with queued or running jobs or none\n"
"                               yet, else start a new group\n"
"  -a, --command-alias NAME     command name shown for the group (default: COMMAND as given)\n"
"      --tags WORDS             tags of the job, matched by servers' prerequisites\n"
"      --prerequisites EXPR     tag expression a server must satisfy, e.g. 'avx2 & !old'\n"
"      --whitelist HOSTS        run only on these hosts\n"
"      --blacklist HOSTS        never run on these hosts\n"
"\n"
"Database:\n"
"  -M, --mysql-default-file FILE   MySQL defaults file (default: $MXQ_MYSQL_DEFAULT_FILE or %s)\n"
"  -S, --mysql-default-group NAME  group in that file (default: $MXQ_MYSQL_DEFAULT_GROUP or %s)\n"
"\n"
"  -v, --verbose, --debug       accepted for upstream scripts (mxqsub prints no more)\n"
"  -D, --define VALUE           accepted and ignored, as upstream does\n"
"  -h, --help                   show this help\n"
"  -V, --version                show the version\n",
		MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
}

/* Complaint about a unit value: R is -EINVAL, -ERANGE or -EDOM (zero). */
static void complain_value(const char *name, const char *arg, int r, const char *what)
{
	if (r == -ERANGE)
		mxq_complain("--%s: '%s' is too large", name, arg);
	else if (r == -EDOM)
		mxq_complain("--%s: '%s' must be more than zero", name, arg);
	else
		mxq_complain("--%s: '%s' is not %s", name, arg, what);
}

/* Unsigned decimal option value in [min, max]. */
static int parse_uint_option(const char *name, const char *arg, unsigned min, unsigned max,
			     unsigned *ret)
{
	uint32_t v;
	int r = mx_strtou32(arg, &v);

	if (r < 0 || v < min || v > max) {
		mxq_complain("--%s: '%s' is not a number from %u to %u", name, arg, min, max);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

static int parse_umask(const char *arg, unsigned *ret)
{
	unsigned v = 0;

	if (!*arg)
		goto bad;
	for (const char *p = arg; *p; p++) {
		if (*p < '0' || *p > '7')
			goto bad;
		v = v * 8 + (unsigned)(*p - '0');
		if (v > 0777)
			goto bad;
	}
	*ret = v;
	return 0;
bad:
	mxq_complain("--umask: '%s' is not an octal mask from 0 to 0777", arg);
	return -EINVAL;
}

/*
 * Absolute form of PATH relative to BASE, lexically tidied: empty and "."
 * components and repeated slashes go; ".." stays, because resolving it
 * without the file system would be wrong under symlinks. malloc'ed.
 */
static char *absolute_path(const char *base, const char *path)
{
	char *joined, *out, *q, *save = NULL;

	joined = path[0] == '/' ? strdup(path) : mx_asprintf("%s/%s", base, path);
	if (!joined)
		return NULL;
	out = malloc(strlen(joined) + 2);
	if (!out) {
		free(joined);
		return NULL;
	}
	q = out;
	for (char *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		*q++ = '/';
		q = stpcpy(q, c);
	}
	if (q == out)
		*q++ = '/';
	*q = '\0';
	free(joined);
	return out;
}

/* Canonical word list of --tags/--whitelist/--blacklist. */
static int canonical_words(const char *name, const char *arg, char **ret)
{
	struct keywordset *set = keywordset_new(arg);
	char *s;

	if (!set) {
		mxq_complain("--%s: out of memory", name);
		return -ENOMEM;
	}
	s = keywordset_to_string(set);
	keywordset_free(set);
	if (!s) {
		mxq_complain("--%s: out of memory", name);
		return -ENOMEM;
	}
	if (strlen(s) > MAX_WORDS_COL) {
		mxq_complain("--%s: longer than %d characters", name, MAX_WORDS_COL);
		free(s);
		return -EINVAL;
	}
	free(*ret);
	*ret = s;
	return 0;
}

static int check_callback(const char *path)
{
	char real[PATH_MAX], err[1024];
	struct stat st;

	if (path[0] != '/') {
		mxq_complain("--callback: '%s' is not an absolute path", path);
		return -EINVAL;
	}
	if (stat(path, &st) < 0) {
		mxq_complain("--callback: %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		mxq_complain("--callback: %s is not a regular file", path);
		return -EINVAL;
	}
	if (access(path, X_OK) < 0) {
		mxq_complain("--callback: %s is not executable by you", path);
		return -EINVAL;
	}
	if (strlen(path) > MAX_PATH_COL) {
		mxq_complain("--callback: path longer than %d characters", MAX_PATH_COL);
		return -EINVAL;
	}
	/* the rule mxqd applies right before it runs the callback: said now,
	 * not found later in a node's log the user cannot read */
	if (mx_file_check_safe(path, getuid(), "you", real, sizeof(real), err, sizeof(err)) < 0) {
		mxq_complain("--callback: %s; mxqd would not run it", err);
		return -EINVAL;
	}
	return 0;
}

static int check_prerequisites(const char *expr)
{
	struct mxq_expr *e = NULL;
	char err[256] = "";
	int r;

	if (strlen(expr) > MAX_WORDS_COL) {
		mxq_complain("--prerequisites: longer than %d characters", MAX_WORDS_COL);
		return -EINVAL;
	}
	r = mxq_expr_parse(expr, &e, err, sizeof(err));
	if (r < 0) {
		mxq_complain("--prerequisites: %s", r == -ENOMEM ? "out of memory" : err);
		return r;
	}
	mxq_expr_free(e);
	return 0;
}

static int lookup_user(struct submission *sub)
{
	struct passwd *pw;
	struct group *gr;

	sub->user_uid = getuid();
	sub->user_gid = getgid();
	errno = 0;
	pw = getpwuid(sub->user_uid);
	if (!pw) {
		mxq_complain("cannot look up user id %u: %s", (unsigned)sub->user_uid,
			 errno ? strerror(errno) : "no such user");
		return -ENOENT;
	}
	errno = 0;
	gr = getgrgid(sub->user_gid);
	if (!gr) {
		mxq_complain("cannot look up group id %u: %s", (unsigned)sub->user_gid,
			 errno ? strerror(errno) : "no such group");
		return -ENOENT;
	}
	sub->user_name = strdup(pw->pw_name);
	sub->user_group = strdup(gr->gr_name);
	if (!sub->user_name || !sub->user_group) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	if (strlen(sub->user_name) > MAX_USER_COL || strlen(sub->user_group) > MAX_USER_COL) {
		mxq_complain("user or group name longer than %d characters", MAX_USER_COL);
		return -EINVAL;
	}
	return 0;
}

static int resolve_paths(struct submission *sub, const char *workdir, const char *out,
			 const char *err)
{
	char cwd[PATH_MAX];
	struct stat st;

	if (!getcwd(cwd, sizeof(cwd))) {
		/* only fatal when something is relative to it */
		if (!workdir || workdir[0] != '/') {
			mxq_complain("cannot determine the current directory: %s", strerror(errno));
			return -errno;
		}
		cwd[0] = '\0';
	}
	sub->workdir = absolute_path(cwd, workdir ? workdir : cwd);
	if (!sub->workdir) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	if (stat(sub->workdir, &st) < 0) {
		mxq_complain("--workdir: %s: %s", sub->workdir, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		mxq_complain("--workdir: %s is not a directory", sub->workdir);
		return -EINVAL;
	}
	sub->job_stdout = absolute_path(sub->workdir, out ? out : "/dev/null");
	sub->job_stderr = absolute_path(sub->workdir, err ? err : out ? out : "/dev/null");
	if (!sub->job_stdout || !sub->job_stderr) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	if (strlen(sub->workdir) > MAX_PATH_COL || strlen(sub->job_stdout) > MAX_PATH_COL ||
	    strlen(sub->job_stderr) > MAX_PATH_COL) {
		mxq_complain("--workdir/--stdout/--stderr: path longer than %d characters", MAX_PATH_COL);
		return -EINVAL;
	}
	return 0;
}

static int set_command(struct submission *sub, char **cmd_argv, int cmd_argc)
{
	if (cmd_argc > 65535) {
		mxq_complain("too many arguments (%d, at most 65535)", cmd_argc);
		return -EINVAL;
	}
	if (!cmd_argv[0][0]) {
		mxq_complain("the command is an empty string");
		return -EINVAL;
	}
	sub->job_argc = cmd_argc;
	sub->job_argv = mx_argv_encode(cmd_argv);
	if (!sub->job_argv) {
		mxq_complain("out of memory");
		return -ENOMEM;
	}
	if (strlen(sub->job_argv) > MAX_ARGV_COL) {
		mxq_complain("the command line is too long (more than %d characters encoded)",
			 MAX_ARGV_COL);
		return -EINVAL;
	}
	/* COMMAND as given, like upstream mxqsub: the same command from old
	 * and new mxqsub joins the same group */
	if (!sub->job_command)
		sub->job_command = cmd_argv[0];
	if (!*sub->job_command || strlen(sub->job_command) > MAX_COMMAND) {
		mxq_complain("--command-alias: must be 1 to %d characters", MAX_COMMAND);
		return -EINVAL;
	}
	return 0;
}

static void submission_free(struct submission *sub)
{
	free(sub->tags);
	free(sub->whitelist);
	free(sub->blacklist);
	free(sub->user_name);
	free(sub->user_group);
	free(sub->workdir);
	free(sub->job_stdout);
	free(sub->job_stderr);
	free(sub->job_argv);
}

enum {
	OPT_TMPDIR = 256,
	OPT_MAX_PER_NODE,
	OPT_TAGS,
	OPT_PREREQUISITES,
	OPT_WHITELIST,
	OPT_BLACKLIST,
	OPT_CALLBACK,
	OPT_GPU,
	OPT_DEBUG,
	OPT_GROUP_NAME_UPSTREAM_ID,     /* --group-id: upstream's deprecated --group-name */
	OPT_GROUP_NAME_UPSTREAM_UNDER,  /* --group_id: likewise */
	OPT_GROUP_PRIORITY_UPSTREAM,    /* --group_priority */
};

/* Upstream's -r modes and the job_flags they give; NULL (bare -r) is "always". */
static const struct {
	const char *name;
	uint64_t flags;
} restart_modes[] = {
	{ "always",   JOB_FLAG_RESTART_ON_HOSTFAIL | JOB_FLAG_REQUEUE_ON_HOSTFAIL },
	{ "samehost", JOB_FLAG_RESTART_ON_HOSTFAIL },
	{ "never",    0 },
};

/* Index into restart_modes of MODE, or -1. */
static int restart_mode_index(const char *mode)
{
	for (size_t i = 0; i < MX_ARRAY_SIZE(restart_modes); i++)
		if (!strcmp(mode, restart_modes[i].name))
			return (int)i;
	return -1;
}

/*
 * Parse and validate the command line into SUB and DBO. Returns 0 to go on,
 * 1 when the program should exit successfully (--help, --version), or a
 * negative errno after printing the one-line complaint.
 */
static int parse_args(int argc, char **argv, struct submission *sub, struct db_options *dbo)
{
	static const struct option opts[] = {
		{ "workdir",             required_argument, NULL, 'w' },
		{ "stdout",              required_argument, NULL, 'o' },
		{ "stderr",              required_argument, NULL, 'e' },
		{ "umask",               required_argument, NULL, 'u' },
		{ "priority",            required_argument, NULL, 'p' },
		{ "threads",             required_argument, NULL, 'j' },
		{ "processors",          required_argument, NULL, 'j' },
		{ "memory",              required_argument, NULL, 'm' },
		{ "runtime",             required_argument, NULL, 't' },
		{ "time",                required_argument, NULL, 't' },
		{ "tmpdir",              required_argument, NULL, OPT_TMPDIR },
		{ "gpu",                 no_argument,       NULL, OPT_GPU },
		{ "max-jobs-per-node",   required_argument, NULL, OPT_MAX_PER_NODE },
		{ "group-name",          required_argument, NULL, 'N' },
		{ "group-priority",      required_argument, NULL, 'P' },
		/* upstream mxqsub's spellings: its long --group-id is (deprecated)
		 * --group-name, only the short -g takes a group id */
		{ "group-id",            required_argument, NULL, OPT_GROUP_NAME_UPSTREAM_ID },
		{ "group_id",            required_argument, NULL, OPT_GROUP_NAME_UPSTREAM_UNDER },
		{ "group_priority",      required_argument, NULL, OPT_GROUP_PRIORITY_UPSTREAM },
		{ "new-group",           no_argument,       NULL, 'n' },
		{ "restartable",         optional_argument, NULL, 'r' },
		{ "verbose",             no_argument,       NULL, 'v' },
		{ "debug",               no_argument,       NULL, OPT_DEBUG },
		{ "define",              required_argument, NULL, 'D' },
		{ "command-alias",       required_argument, NULL, 'a' },
		{ "tags",                required_argument, NULL, OPT_TAGS },
		{ "prerequisites",       required_argument, NULL, OPT_PREREQUISITES },
		{ "whitelist",           required_argument, NULL, OPT_WHITELIST },
		{ "blacklist",           required_argument, NULL, OPT_BLACKLIST },
		{ "callback",            required_argument, NULL, OPT_CALLBACK },
		{ "mysql-default-file",  required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "help",                no_argument,       NULL, 'h' },
		{ "version",             no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *workdir = NULL, *out = NULL, *err = NULL;
	const char *deprecated = NULL, *replacement = NULL;
	mode_t old_umask;
	uint64_t v;
	int c, r;

	old_umask = umask(0);
	umask(old_umask);
	sub->job_umask = old_umask;

	opterr = 0;
	/* '+': options end at COMMAND, whose own options are left alone */
	while ((c = getopt_long(argc, argv, "+:w:o:e:u:p:j:m:t:g:nr::vD:N:P:a:M:S:hV",
				opts, NULL)) != -1) {
		switch (c) {
		case 'w': workdir = optarg; break;
		case 'o': out = optarg; break;
		case 'e': err = optarg; break;
		case 'u':
			if (parse_umask(optarg, &sub->job_umask) < 0)
				return -EINVAL;
			break;
		case 'p':
			if (parse_uint_option("priority", optarg, 0, 65535, &sub->job_priority) < 0)
				return -EINVAL;
			break;
		case OPT_GROUP_PRIORITY_UPSTREAM:
			deprecated = "--group_priority";
			replacement = "--group-priority";
			/* fall through */
		case 'P':
			if (parse_uint_option("group-priority", optarg, 0, 65535,
					      &sub->group_priority) < 0)
				return -EINVAL;
			break;
		case 'j':
			if (parse_uint_option("threads", optarg, 1, 65535, &sub->job_threads) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_PER_NODE:
			if (parse_uint_option("max-jobs-per-node", optarg, 0, 65535,
					      &sub->job_max_per_node) < 0)
				return -EINVAL;
			break;
		case 'm':
			r = mx_parse_size_mib(optarg, 'M', &v);
			if (r == 0 && v == 0)
				r = -EDOM;
			if (r < 0) {
				complain_value("memory", optarg, r, "a size like 512, 2G or 1G512M");
				return -EINVAL;
			}
			sub->job_memory = v;
			break;
		case 't':
			r = mx_parse_runtime_min(optarg, &v);
			if (r == 0 && v == 0)
				r = -EDOM;
			if (r == 0 && v > UINT32_MAX)
				r = -ERANGE;
			if (r < 0) {
				complain_value("runtime", optarg, r, "a time like 90, 2h30m or 1d");
				return -EINVAL;
			}
			sub->job_time = v;
			break;
		case OPT_TMPDIR:
			r = mx_parse_size_mib(optarg, 'G', &v);
			if (r == 0 && (v + 1023) / 1024 > UINT32_MAX)
				r = -ERANGE;
			if (r < 0) {
				complain_value("tmpdir", optarg, r, "a size like 10, 10G or 500M");
				return -EINVAL;
			}
			sub->job_tmpdir_size = (unsigned)((v + 1023) / 1024);
			break;
		case OPT_GPU: sub->job_gpu = 1; break;
		case 'g':
			if (mx_strtou64(optarg, &v) < 0 || v == 0) {
				mxq_complain("-g: '%s' is not a group id (a positive number)", optarg);
				return -EINVAL;
			}
			sub->join_group_id = v;
			break;
		case 'n': sub->with_work_only = true; break;
		case 'r': {
			const char *mode = optarg;
			int i;

			/* "-r MODE" as upstream writes it; any other word is the command */
			if (!mode && optind < argc && restart_mode_index(argv[optind]) >= 0)
				mode = argv[optind++];
			i = mode ? restart_mode_index(mode) : 0;
			if (i < 0) {
				mxq_complain("--restartable: unknown mode '%s' (always, samehost or never)",
					     mode);
				return -EINVAL;
			}
			sub->job_flags = restart_modes[i].flags;
			break;
		}
		case 'v': case OPT_DEBUG: case 'D':
			break; /* upstream's log levels and its ignored --define */
		case OPT_GROUP_NAME_UPSTREAM_ID:
		case OPT_GROUP_NAME_UPSTREAM_UNDER:
			deprecated = c == OPT_GROUP_NAME_UPSTREAM_ID ? "--group-id" : "--group_id";
			replacement = "--group-name";
			/* fall through */
		case 'N':
			if (!*optarg || strlen(optarg) > MAX_GROUP_NAME) {
				mxq_complain("--group-name: must be 1 to %d characters", MAX_GROUP_NAME);
				return -EINVAL;
			}
			sub->group_name = optarg;
			break;
		case 'a': sub->job_command = optarg; break;
		case OPT_TAGS:
			if (canonical_words("tags", optarg, &sub->tags) < 0)
				return -EINVAL;
			break;
		case OPT_WHITELIST:
			if (canonical_words("whitelist", optarg, &sub->whitelist) < 0)
				return -EINVAL;
			break;
		case OPT_BLACKLIST:
			if (canonical_words("blacklist", optarg, &sub->blacklist) < 0)
				return -EINVAL;
			break;
		case OPT_PREREQUISITES:
			if (check_prerequisites(optarg) < 0)
				return -EINVAL;
			sub->prerequisites = optarg;
			break;
		case OPT_CALLBACK:
			if (check_callback(optarg) < 0)
				return -EINVAL;
			sub->callback = optarg;
			break;
		case 'M': dbo->defaults_file = optarg; break;
		case 'S': dbo->group = optarg; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("mxqsub %s\n", MXQ_VERSION); return 1;
		default:
			mxq_complain_getopt(c, argv);
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		mxq_complain("no command given (try 'mxqsub --help')");
		return -EINVAL;
	}
	if (sub->join_group_id && sub->with_work_only) {
		mxq_complain("-g ID and -n/--new-group exclude each other");
		return -EINVAL;
	}
	if (resolve_paths(sub, workdir, out, err) < 0)
		return -EINVAL;
	if (set_command(sub, argv + optind, argc - optind) < 0)
		return -EINVAL;
	if (lookup_user(sub) < 0)
		return -EINVAL;
	if (gethostname(sub->host_submit, sizeof(sub->host_submit)) < 0)
		snprintf(sub->host_submit, sizeof(sub->host_submit), "localhost");
	sub->host_submit[sizeof(sub->host_submit) - 1] = '\0';
	/* only now: a usage error stays the one line it must be */
	if (deprecated)
		mxq_complain("warning: %s is deprecated (upstream MXQ), using it as %s%s", deprecated,
			     replacement, strcmp(deprecated, "--group-id") ? ""
			     : "; to add the job to group ID use -g ID");
	return 0;
}

struct submit_tx {
	const struct submission *sub;
	uint64_t group_id, job_id;
	char refusal[256];          /* why -g's group cannot take the job; "" = not refused */
};

/*
 * The group attributes automatic grouping compares, in this order both in
 * GROUP_ATTR_COLUMNS and in attr_labels[] (for the -g complaint).
 */
#define GROUP_ATTR_COLUMNS \
	"group_name, job_command, job_threads, job_memory, job_time, job_max_per_node," \
	" group_priority, job_tmpdir_size, job_gpu, tags, prerequisites," \
	" group_whitelist, group_blacklist"
static const char *const attr_labels[] = {
	"group name (-N)", "command alias (-a)", "threads (-j)", "memory (-m)", "run time (-t)",
	"--max-jobs-per-node", "group priority (-P)", "--tmpdir", "--gpu", "--tags",
	"--prerequisites", "--whitelist", "--blacklist",
};
#define N_ATTRS MX_ARRAY_SIZE(attr_labels)

/* Index of the first attribute in which row RES (GROUP_ATTR_COLUMNS from
 * column FIRST on) differs from SUB, or -1. */
static int first_differing_attr(const struct mx_db_result *res, unsigned first,
				const struct submission *sub)
{
	const uint64_t nums[N_ATTRS] = {
		[2] = sub->job_threads, [3] = sub->job_memory, [4] = sub->job_time,
		[5] = sub->job_max_per_node, [6] = sub->group_priority, [7] = sub->job_tmpdir_size,
		[8] = sub->job_gpu,
	};
	const char *texts[N_ATTRS] = {
		[0] = sub->group_name, [1] = sub->job_command, [9] = sub->tags,
		[10] = sub->prerequisites, [11] = sub->whitelist, [12] = sub->blacklist,
	};

	for (unsigned i = 0; i < N_ATTRS; i++) {
		const char *cell = mx_db_str(res, first + i);
		char num[24];

		if (!texts[i])
			snprintf(num, sizeof(num), "%" PRIu64, nums[i]);
		if (strcmp(cell ? cell : "", texts[i] ? texts[i] : num) != 0)
			return (int)i;
	}
	return -1;
}

/*
 * Why group ID, which the lookup did not return, cannot take SUB's job: one
 * line into BUF. Reads inside the caller's transaction. 0 or negative errno.
 */
static int explain_refusal(struct mx_db *db, const struct submission *sub, uint64_t id,
			   char *buf, size_t len)
{
	struct mx_db_result *res = NULL;
	int r, attr;

	r = mx_db_query_first(db, &res,
		"SELECT user_uid, user_gid, group_status, group_flags, " GROUP_ATTR_COLUMNS
		" FROM mxq_group WHERE group_id = ?", "U", id);
	if (r == 0) {
		snprintf(buf, len, "-g: there is no group %" PRIu64, id);
		return 0;
	}
	if (r < 0)
		return r;
	attr = first_differing_attr(res, 4, sub);
	if (mx_db_u64(res, 0) != sub->user_uid || mx_db_u64(res, 1) != sub->user_gid)
		snprintf(buf, len, "-g: group %" PRIu64 " is not yours (another user or primary group)",
			 id);
	else if (mx_db_u64(res, 2) != MXQ_GROUP_STATUS_OK)
		snprintf(buf, len, "-g: group %" PRIu64 " is cancelled", id);
	else if (mxq_group_flags_closed(mx_db_u64(res, 3)))
		snprintf(buf, len, "-g: group %" PRIu64 " is closed", id);
	else if (attr >= 0)
		snprintf(buf, len, "-g: group %" PRIu64 " does not match this job: its %s differs"
			 " (see mxqdump -g %" PRIu64 " --json)", id, attr_labels[attr], id);
	else
		snprintf(buf, len, "-g: group %" PRIu64 " does not match this job", id);
	mx_db_result_free(res);
	return 0;
}

/*
 * Group and job, the body of one transaction (mx_db_transaction() runs it
 * again after a deadlock). The SELECT ... FOR UPDATE keeps the chosen group
 * from being closed or cancelled under us before the job row exists.
 * With -g the lookup is confined to that group and a miss is a refusal
 * (tx->refusal says why, -EPERM); with -n to groups with work left or no
 * jobs yet (upstream's "running or waiting" groups).
 * Returns 0 or a negative errno.
 */
static int submit_body(struct mx_db *db, void *ctx)
{
	struct submit_tx *tx = ctx;
	const struct submission *sub = tx->sub;
	uint64_t group_id = 0;
	int64_t n;
	int r;

	tx->refusal[0] = '\0';
	/* BINARY: the column collation would call "Foo" and "foo " equal;
	 * the attributes compared are GROUP_ATTR_COLUMNS (keep them in step) */
	r = mx_db_query_u64(db, &group_id,
		"SELECT group_id FROM mxq_group"
		" WHERE (? = 0 OR group_id = ?)"
		"   AND (? = 0 OR group_jobs_running > 0 OR group_jobs_inq > 0 OR group_jobs = 0)"
		"   AND user_uid = ? AND user_gid = ?"
		/* open, or CLOSED only to upstream mxqsub (MXQ_GROUP_FLAG_NEW_ONLY) */
		"   AND group_status = ? AND (group_flags & ?) IN (0, ?)"
		"   AND BINARY group_name = ? AND BINARY job_command = ?"
		"   AND job_threads = ? AND job_memory = ? AND job_time = ?"
		"   AND job_max_per_node = ? AND group_priority = ?"
		"   AND job_tmpdir_size = ? AND job_gpu = ?"
		"   AND BINARY tags = ? AND BINARY prerequisites = ?"
		"   AND BINARY group_whitelist = ? AND BINARY group_blacklist = ?"
		" ORDER BY group_id DESC LIMIT 1 FOR UPDATE",
		"UUuuuuUUssuUUuuuussss",
		sub->join_group_id, sub->join_group_id, (unsigned)sub->with_work_only,
		(unsigned)sub->user_uid, (unsigned)sub->user_gid,
		(unsigned)MXQ_GROUP_STATUS_OK,
		(uint64_t)(MXQ_GROUP_FLAG_CLOSED | MXQ_GROUP_FLAG_NEW_ONLY),
		(uint64_t)(MXQ_GROUP_FLAG_CLOSED | MXQ_GROUP_FLAG_NEW_ONLY),
		sub->group_name, sub->job_command,
		sub->job_threads, sub->job_memory, sub->job_time,
		sub->job_max_per_node, sub->group_priority,
		sub->job_tmpdir_size, sub->job_gpu,
		sub->tags, sub->prerequisites, sub->whitelist, sub->blacklist);
	if (r == -ENOENT && sub->join_group_id) {
		r = explain_refusal(db, sub, sub->join_group_id, tx->refusal, sizeof(tx->refusal));
		return r < 0 ? r : -EPERM;
	}
	if (r == -ENOENT) {
		n = mx_db_exec(db,
			"INSERT INTO mxq_group (group_name, group_priority,"
			" user_uid, user_name, user_gid, user_group,"
			" job_command, job_threads, job_memory, job_time, job_max_per_node,"
			" job_tmpdir_size, job_gpu, tags, prerequisites,"
			" group_whitelist, group_blacklist)"
			" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			"suusussuUUuuussss",
			sub->group_name, sub->group_priority,
			(unsigned)sub->user_uid, sub->user_name, (unsigned)sub->user_gid,
			sub->user_group,
			sub->job_command, sub->job_threads, sub->job_memory, sub->job_time,
			sub->job_max_per_node, sub->job_tmpdir_size, sub->job_gpu,
			sub->tags, sub->prerequisites, sub->whitelist, sub->blacklist);
		if (n < 0)
			return (int)n;
		group_id = mx_db_insert_id(db);
	} else if (r < 0) {
		return r;
	}

	n = mx_db_exec(db,
		"INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,"
		" job_stdout, job_stderr, job_umask, host_submit, job_callback, job_flags)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		"uUsisssussU",
		sub->job_priority, group_id, sub->workdir, sub->job_argc, sub->job_argv,
		sub->job_stdout, sub->job_stderr, sub->job_umask, sub->host_submit,
		sub->callback, sub->job_flags);
	if (n < 0)
		return (int)n;
	tx->job_id = mx_db_insert_id(db);
	tx->group_id = group_id;
	return 0;
}

int main(int argc, char **argv)
{
	struct submission sub = {
		.group_name = "default",
		.group_priority = 127,
		.job_threads = 1,
		.job_memory = 2048,
		.job_time = 15,
		.prerequisites = "",
		.job_priority = 127,
		.callback = "",
	};
	struct db_options dbo = {
		.defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE"),
		.group = getenv("MXQ_MYSQL_DEFAULT_GROUP"),
	};
	uint64_t group_id = 0, job_id = 0;
	struct submit_tx tx = { 0 };
	struct mx_db *db = NULL;
	int r, status = MXQ_EXIT_FAILURE;

	mxq_privs_init(); /* first: from here on we act as the caller */
	mxq_client_set_program("mxqsub");

	if (!dbo.defaults_file || !*dbo.defaults_file)
		dbo.defaults_file = MX_DB_DEFAULT_FILE;
	if (!dbo.group || !*dbo.group)
		dbo.group = MX_DB_GROUP_CLIENT;
	sub.tags = strdup("");
	sub.whitelist = strdup("");
	sub.blacklist = strdup("");
	if (!sub.tags || !sub.whitelist || !sub.blacklist) {
		mxq_complain("out of memory");
		goto out;
	}

	r = parse_args(argc, argv, &sub, &dbo);
	if (r != 0) {
		status = r > 0 ? MXQ_EXIT_OK : MXQ_EXIT_USAGE;
		goto out;
	}

	r = mxq_client_connect_current(&db, dbo.defaults_file, dbo.group);
	if (r < 0)
		goto out;
	/* deadlocks between submitters creating groups, and on Galera
	 * certification conflicts with daemons updating the group's counters,
	 * are retried by mx_db_transaction() */
	tx.sub = &sub;
	r = mx_db_transaction(db, submit_body, &tx);
	if (r < 0) {
		if (tx.refusal[0])
			mxq_complain("%s", tx.refusal);
		else
			mxq_complain("submitting the job failed: %s", mx_db_error(db));
		goto out;
	}
	group_id = tx.group_id;
	job_id = tx.job_id;
	printf("mxq_group_id=%llu\nmxq_group_name=%s\nmxq_job_id=%llu\n",
	       (unsigned long long)group_id, sub.group_name, (unsigned long long)job_id);
	if (fflush(stdout) != 0) {
		mxq_complain("writing the result: %s", strerror(errno));
		goto out;
	}
	status = MXQ_EXIT_OK;
out:
	mx_db_close(db);
	submission_free(&sub);
	return status;
}
