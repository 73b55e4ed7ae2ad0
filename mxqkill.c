/*
 * mxqkill - cancel a group or one job.
 *
 *   mxqkill -g ID    the group: no new jobs start, queued jobs are cancelled,
 *                    running ones are handed to their mxqd for termination
 *   mxqkill -J ID    one job, the same way
 *   -u USER          (with either) only if the group or job is USER's;
 *                    another user's name or uid is for root only
 *
 * Every state change is a conditional UPDATE (WHERE job_status = what we
 * expect), so racing an mxqd that is claiming a job is safe: a queued job
 * is either cancelled here or claimed there, never both; zero affected rows
 * means "look again". Queued jobs become CANCELLED directly; claimed or
 * running jobs become CANCELLING and their mxqd kills them and records the
 * final status. Group counters follow through the database triggers.
 *
 * Jobs held by an upstream MXQ mxqd (mxq_daemon_version_is_upstream() on
 * the job's daemon row) are different: upstream knows no CANCELLING (its
 * end-of-job UPDATE accepts only LOADED, RUNNING and KILLING, so a row we
 * moved to CANCELLING would stay there for good), kills the running jobs
 * of a group whose group_status is CANCELLED by itself, and cannot kill a
 * single job. So, as upstream's own mxqkill does, their status is left as
 * it is: -g cancels the group and that daemon terminates them; -J says it
 * cannot be done and exits 1. A row an earlier mxqkill moved to
 * CANCELLING on such a daemon is put back to the status upstream expects
 * (UPSTREAM_STATUS), so that daemon still records how the job ended.
 *
 * Only the owner of a group (user_uid) or root may cancel it.
 *
 * Configuration: -M/-S, else $MXQ_MYSQL_DEFAULT_FILE/$MXQ_MYSQL_DEFAULT_GROUP,
 * else the defaults of mx_db.h. Errors: one line "mxqkill: ..."; exit 0 on
 * success, 1 when the group/job does not exist, is not yours, has already
 * ended or the database failed, 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mx_db.h"
#include "mxq_client.h"
#include "mxq_daemon.h"
#include "mxq_privs.h"
#include "mx_util.h"
#include "mxq_status.h"

#ifndef MXQ_VERSION
#define MXQ_VERSION "unknown"
#endif


struct options {
	uint64_t group_id;          /* -g, 0 = not given */
	uint64_t job_id;            /* -J, 0 = not given */
	bool for_user;              /* -u given */
	uint64_t user_uid;          /* -u: the group must be this user's */
	const char *user_arg;       /* -u as given, for messages */
	const char *defaults_file;
	const char *db_group;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: mxqkill -g GROUP_ID | -J JOB_ID [-u USER] [OPTIONS]\n"
"\n"
"  -g, --group-id ID        cancel the group: queued jobs are cancelled,\n"
"                           running jobs are terminated by their node\n"
"  -J, --job-id ID          cancel one job\n"
"  -u, --user NAME|UID      only if the group or job is this user's\n"
"                           (another user's: root only)\n"
"  -M, --mysql-default-file FILE   MySQL defaults file (default: $MXQ_MYSQL_DEFAULT_FILE or %s)\n"
"  -S, --mysql-default-group NAME  group in that file (default: $MXQ_MYSQL_DEFAULT_GROUP or %s)\n"
"  -h, --help               show this help\n"
"  -V, --version            show the version\n",
		MX_DB_DEFAULT_FILE, MX_DB_GROUP_CLIENT);
}

/* Does a job in status CODE hold a node without being killed yet (one to
 * move to CANCELLING)? */
static bool is_terminable(int code)
{
	return mxq_job_status_to_name(code) && mxq_job_status_is_active(code) &&
	       code != MXQ_JOB_STATUS_CANCELLING && code != MXQ_JOB_STATUS_KILLING;
}

/*
 * "100,150,..." the statuses of jobs that hold a node and are not yet being
 * killed: these are the ones to move to CANCELLING. malloc'ed.
 */
static char *terminable_status_list(void)
{
	size_t len = 0, cap = 256;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (int code = 0; code <= MXQ_JOB_STATUS_EXIT; code++) {
		if (!is_terminable(code))
			continue;
		len += (size_t)snprintf(s + len, cap - len, "%s%d", len ? "," : "", code);
		if (len >= cap - 16) {
			free(s);
			return NULL;
		}
	}
	return s;
}

/*
 * Ownership is also a condition inside every writing transaction, not only
 * of the SELECT that produced the friendly message: mxq_group's UPDATE
 * carries GROUP_OWNED in its WHERE; mxq_job's UPDATEs cannot name
 * mxq_group (its counter triggers write that table: MariaDB error 1442),
 * so they run in a transaction that first locks the group row FOR UPDATE
 * with the same condition (lock_owned_group) and only touch jobs of that
 * group. Bound as "iu": caller is root, caller's uid.
 */
#define GROUP_OWNED " AND (? OR user_uid = ?)"
#define OWNER_ARGS (getuid() == 0), (unsigned)getuid()

/* In an open transaction: lock group GROUP_ID if the caller owns it.
 * 0 when locked, -EPERM when not the caller's, other negative errno. */
static int lock_owned_group(struct mx_db *db, uint64_t group_id)
{
	struct mx_db_result *res = NULL;
	int64_t n = mx_db_query(db, &res, "SELECT group_id FROM mxq_group WHERE group_id = ?"
				GROUP_OWNED " FOR UPDATE", "Uiu", group_id, OWNER_ARGS);

	mx_db_result_free(res);
	if (n < 0)
		return (int)n;
	return n > 0 ? 0 : -EPERM;
}

struct owned_update {
	uint64_t group_id;
	const char *sql, *fmt;
	unsigned status, code;
	uint64_t id;
	int64_t changed;
};

static int owned_update_body(struct mx_db *db, void *ctx)
{
	struct owned_update *u = ctx;
	int r = lock_owned_group(db, u->group_id);

	if (r < 0)
		return r;
	u->changed = mx_db_exec(db, u->sql, u->fmt, u->status, u->id, u->group_id, u->code);
	return u->changed < 0 ? (int)u->changed : 0;
}

/* One UPDATE of jobs of GROUP_ID (SQL with four '?': status, id, group,
 * status), inside a transaction that holds the caller's group locked (rerun
 * by mx_db_transaction() after a deadlock). Rows changed, or negative
 * errno (-EPERM: not the caller's). */
static int64_t update_owned_jobs(struct mx_db *db, uint64_t group_id, const char *sql,
				 const char *fmt, unsigned status, uint64_t id, unsigned code)
{
	struct owned_update u = {
		.group_id = group_id, .sql = sql, .fmt = fmt,
		.status = status, .code = code, .id = id,
	};
	int r = mx_db_transaction(db, owned_update_body, &u);

	return r < 0 ? r : u.changed;
}

/* The caller may act on things owned by OWNER_UID. */
static bool may_cancel(uint64_t owner_uid)
{
	return getuid() == 0 || (uint64_t)getuid() == owner_uid;
}

static const char *status_name(int code)
{
	const char *name = mxq_job_status_to_name(code);

	return name ? name : "unknown status";
}

/*
 * The mxq_version of the daemon that holds job j: the row its daemon_id
 * names, else the newest registration of its host and daemon name
 * (server_id), else ''.
 */
#define JOB_DAEMON_VERSION \
	"COALESCE((SELECT d.mxq_version FROM mxq_daemon d WHERE d.daemon_id = j.daemon_id)," \
	" (SELECT d.mxq_version FROM mxq_daemon d WHERE d.hostname = j.host_hostname" \
	" AND d.daemon_name = j.server_id ORDER BY d.daemon_id DESC LIMIT 1), '')"

/*
 * For a job of an upstream daemon found CANCELLING (an earlier mxqkill):
 * the status that daemon holds it in, told by what its transitions wrote:
 * RUNNING sets host_pid, LOADED sets host_id, ASSIGNED neither. Bound "uuu"
 * with UPSTREAM_STATUS_ARGS.
 */
#define UPSTREAM_STATUS "CASE WHEN host_pid > 0 THEN ? WHEN host_id <> '' THEN ? ELSE ? END"
#define UPSTREAM_STATUS_ARGS (unsigned)MXQ_JOB_STATUS_RUNNING, \
	(unsigned)MXQ_JOB_STATUS_LOADED, (unsigned)MXQ_JOB_STATUS_ASSIGNED

/* A comma-separated list of job ids, for FIND_IN_SET(). */
struct id_list {
	char *s;
	size_t len, cap;
	int64_t n;
};

static int id_list_add(struct id_list *l, uint64_t id)
{
	if (l->cap - l->len < 24) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		char *s = realloc(l->s, cap);

		if (!s)
			return -ENOMEM;
		l->s = s;
		l->cap = cap;
	}
	l->len += (size_t)snprintf(l->s + l->len, l->cap - l->len, "%s%llu", l->len ? "," : "",
				   (unsigned long long)id);
	l->n++;
	return 0;
}

static void id_list_reset(struct id_list *l)
{
	free(l->s);
	*l = (struct id_list){ 0 };
}

/* -u USER given and OWNER is not USER's uid? Says so. */
static bool not_for_user(const struct options *o, const char *what, uint64_t id, uint64_t owner)
{
	char shown[256];

	if (!o->for_user || owner == o->user_uid)
		return false;
	mxq_complain("%s %llu belongs to uid %llu, not to %s", what, (unsigned long long)id,
		     (unsigned long long)owner, mx_term_field(o->user_arg, shown, sizeof(shown)));
	return true;
}

/* ------------------------------------------------------------------ */
/* group                                                               */

struct group_outcome {
	bool was_cancelled;     /* group_status was CANCELLED before */
	int64_t queued;         /* INQ -> CANCELLED */
	int64_t terminating;    /* active -> CANCELLING */
	int64_t upstream;       /* active on upstream daemons: left to them */
	int64_t restored;       /* of these, CANCELLING put back (UPSTREAM_STATUS) */
};

struct cancel_group_tx {
	uint64_t group_id;
	const char *terminable;
	struct group_outcome out;
	struct id_list ours, stranded;  /* job ids to CANCELLING / to put back */
};

/* In the transaction: sort the group's active jobs (TERMINABLE, or
 * CANCELLING) by who holds them into T's lists, locking them. */
static int split_group_jobs(struct mx_db *db, struct cancel_group_tx *t)
{
	struct mx_db_result *res = NULL;
	int64_t n;
	int r = 0;

	id_list_reset(&t->ours);
	id_list_reset(&t->stranded);
	t->out.upstream = 0;
	n = mx_db_query(db, &res, "SELECT j.job_id, j.job_status, " JOB_DAEMON_VERSION
			" FROM mxq_job j WHERE j.group_id = ?"
			" AND (FIND_IN_SET(j.job_status, ?) > 0 OR j.job_status = ?) FOR UPDATE",
			"Usu", t->group_id, t->terminable, (unsigned)MXQ_JOB_STATUS_CANCELLING);
	if (n < 0)
		return (int)n;
	while (r == 0 && mx_db_next(res)) {
		bool upstream = mxq_daemon_version_is_upstream(mx_db_str(res, 2));
		bool cancelling = mx_db_i64(res, 1) == MXQ_JOB_STATUS_CANCELLING;

		if (upstream)
			t->out.upstream++;
		if (upstream && cancelling)
			r = id_list_add(&t->stranded, mx_db_u64(res, 0));
		else if (!upstream && !cancelling)
			r = id_list_add(&t->ours, mx_db_u64(res, 0));
	}
	mx_db_result_free(res);
	return r;
}

/* The body of one group cancellation (mx_db_transaction() reruns it after
 * a deadlock; every outcome field is set afresh). */
static int cancel_group_body(struct mx_db *db, void *ctx)
{
	struct cancel_group_tx *t = ctx;
	int64_t n;
	int r;

	r = lock_owned_group(db, t->group_id);
	if (r < 0)
		return r;
	/* group first: mxqsub adds no more jobs to it, mxqd starts no more */
	n = mx_db_exec(db, "UPDATE mxq_group SET group_status = ? WHERE group_id = ? AND group_status <> ?"
		       GROUP_OWNED, "uUuiu", (unsigned)MXQ_GROUP_STATUS_CANCELLED, t->group_id,
		       (unsigned)MXQ_GROUP_STATUS_CANCELLED, OWNER_ARGS);
	if (n < 0)
		return (int)n;
	t->out.was_cancelled = n == 0;
	/* queued before running: a job claimed in between is caught by the second */
	n = mx_db_exec(db, "UPDATE mxq_job SET job_status = ? WHERE group_id = ? AND job_status = ?",
		       "uUu", (unsigned)MXQ_JOB_STATUS_CANCELLED, t->group_id,
		       (unsigned)MXQ_JOB_STATUS_INQ);
	if (n < 0)
		return (int)n;
	t->out.queued = n;
	r = split_group_jobs(db, t);
	if (r < 0)
		return r;
	/* ours: CANCELLING, their mxqd kills them; upstream's kill them
	 * because the group is CANCELLED and must find them as they left them */
	t->out.terminating = 0;
	if (t->ours.n) {
		n = mx_db_exec(db, "UPDATE mxq_job SET job_status = ? WHERE group_id = ?"
			       " AND FIND_IN_SET(job_status, ?) > 0 AND FIND_IN_SET(job_id, ?) > 0",
			       "uUss", (unsigned)MXQ_JOB_STATUS_CANCELLING, t->group_id,
			       t->terminable, t->ours.s);
		if (n < 0)
			return (int)n;
		t->out.terminating = n;
	}
	t->out.restored = 0;
	if (t->stranded.n) {
		n = mx_db_exec(db, "UPDATE mxq_job SET job_status = " UPSTREAM_STATUS
			       " WHERE group_id = ? AND job_status = ? AND FIND_IN_SET(job_id, ?) > 0",
			       "uuuUus", UPSTREAM_STATUS_ARGS, t->group_id,
			       (unsigned)MXQ_JOB_STATUS_CANCELLING, t->stranded.s);
		if (n < 0)
			return (int)n;
		t->out.restored = n;
	}
	return 0;
}

static int cancel_group(struct mx_db *db, const struct options *o, const char *terminable)
{
	uint64_t group_id = o->group_id;
	struct mx_db_result *res = NULL;
	struct cancel_group_tx tx = { .group_id = group_id, .terminable = terminable };
	struct group_outcome *out = &tx.out;
	uint64_t owner;
	char *owner_name, shown[256];
	int64_t rows;
	int r;

	rows = mx_db_query(db, &res, "SELECT user_uid, user_name FROM mxq_group WHERE group_id = ?",
			   "U", group_id);
	if (rows < 0) {
		mxq_complain("cannot read group %llu: %s", (unsigned long long)group_id, mx_db_error(db));
		return (int)rows;
	}
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		mxq_complain("no group %llu", (unsigned long long)group_id);
		return -ENOENT;
	}
	owner = mx_db_u64(res, 0);
	owner_name = mx_db_strdup(res, 1);
	mx_db_result_free(res);
	if (not_for_user(o, "group", group_id, owner)) {
		free(owner_name);
		return -EPERM;
	}
	if (!may_cancel(owner)) {
		mxq_complain("group %llu belongs to %s (uid %llu): only its owner or root may cancel it",
			 (unsigned long long)group_id, mx_term_field(owner_name, shown, sizeof(shown)),
			 (unsigned long long)owner);
		free(owner_name);
		return -EPERM;
	}
	free(owner_name);

	r = mx_db_transaction(db, cancel_group_body, &tx);
	id_list_reset(&tx.ours);
	id_list_reset(&tx.stranded);
	if (r == -EPERM) {
		mxq_complain("group %llu is not yours: only its owner or root may cancel it",
			     (unsigned long long)group_id);
		return r;
	}
	if (r < 0) {
		mxq_complain("cancelling group %llu failed: %s", (unsigned long long)group_id,
			 mx_db_error(db));
		return r;
	}
	printf("%s group %llu: %lld queued jobs cancelled, %lld running jobs being terminated",
	       out->was_cancelled ? "already cancelled" : "cancelled", (unsigned long long)group_id,
	       (long long)out->queued, (long long)(out->terminating + out->upstream));
	if (out->upstream)
		printf(" (%lld of them by upstream mxqd, which ends them itself)",
		       (long long)out->upstream);
	putchar('\n');
	return 0;
}

/* ------------------------------------------------------------------ */
/* job                                                                 */

/* Current status and owner of a job. */
static int read_job(struct mx_db *db, uint64_t job_id, int *ret_status, uint64_t *ret_owner,
		    uint64_t *ret_group, char **ret_owner_name)
{
	struct mx_db_result *res = NULL;
	int64_t rows;

	rows = mx_db_query(db, &res,
			   "SELECT j.job_status, g.user_uid, g.user_name, j.group_id FROM mxq_job j"
			   " JOIN mxq_group g ON g.group_id = j.group_id WHERE j.job_id = ?",
			   "U", job_id);
	if (rows < 0) {
		mxq_complain("cannot read job %llu: %s", (unsigned long long)job_id, mx_db_error(db));
		return (int)rows;
	}
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		mxq_complain("no job %llu", (unsigned long long)job_id);
		return -ENOENT;
	}
	*ret_status = (int)mx_db_i64(res, 0);
	*ret_owner = mx_db_u64(res, 1);
	if (ret_group)
		*ret_group = mx_db_u64(res, 3);
	if (ret_owner_name)
		*ret_owner_name = mx_db_strdup(res, 2);
	mx_db_result_free(res);
	return 0;
}

struct cancel_job_tx {
	uint64_t job_id, group_id;
	/* set afresh by each run of the body */
	int status;             /* as found */
	bool upstream;          /* held by an upstream daemon */
	char *host, *version;   /* of that daemon */
	int64_t changed;        /* to CANCELLING (ours) or put back (upstream's) */
};

/* The body that hands a taken job to its daemon: ours get CANCELLING; an
 * upstream daemon's job keeps its status (found CANCELLING: put back). */
static int cancel_taken_job_body(struct mx_db *db, void *ctx)
{
	struct cancel_job_tx *t = ctx;
	struct mx_db_result *res = NULL;
	int64_t n;
	int r = lock_owned_group(db, t->group_id);

	if (r < 0)
		return r;
	free(t->host);
	free(t->version);
	t->host = t->version = NULL;
	t->changed = 0;
	t->upstream = false;
	n = mx_db_query(db, &res, "SELECT j.job_status, j.host_hostname, " JOB_DAEMON_VERSION
			" FROM mxq_job j WHERE j.job_id = ? AND j.group_id = ? FOR UPDATE",
			"UU", t->job_id, t->group_id);
	if (n < 0)
		return (int)n;
	if (!mx_db_next(res)) {
		mx_db_result_free(res);
		return -ENOENT;
	}
	t->status = (int)mx_db_i64(res, 0);
	t->host = mx_db_strdup(res, 1);
	t->version = mx_db_strdup(res, 2);
	mx_db_result_free(res);
	if (!t->host || !t->version)
		return -ENOMEM;
	t->upstream = mxq_daemon_version_is_upstream(t->version);
	if (t->upstream && t->status == MXQ_JOB_STATUS_CANCELLING)
		n = mx_db_exec(db, "UPDATE mxq_job SET job_status = " UPSTREAM_STATUS
			       " WHERE job_id = ? AND job_status = ?", "uuuUu", UPSTREAM_STATUS_ARGS,
			       t->job_id, (unsigned)MXQ_JOB_STATUS_CANCELLING);
	else if (!t->upstream && is_terminable(t->status))
		n = mx_db_exec(db, "UPDATE mxq_job SET job_status = ? WHERE job_id = ? AND job_status = ?",
			       "uUu", (unsigned)MXQ_JOB_STATUS_CANCELLING, t->job_id,
			       (unsigned)t->status);
	else
		n = 0;
	if (n < 0)
		return (int)n;
	t->changed = n;
	return 0;
}

/* The rounds of cancel_job() (TX names the job and its group). */
static int cancel_job_rounds(struct mx_db *db, struct cancel_job_tx *tx)
{
	uint64_t job_id = tx->job_id, owner;
	int status = MXQ_JOB_STATUS_INQ, r;
	int64_t n;

	/*
	 * Each round tries both transitions; a zero count means the job moved
	 * (an mxqd claimed or finished it) and the next round sees where to.
	 */
	for (int round = 0; round < 10; round++) {
		n = update_owned_jobs(db, tx->group_id,
			"UPDATE mxq_job SET job_status = ? WHERE job_id = ? AND group_id = ? AND job_status = ?",
			"uUUu", (unsigned)MXQ_JOB_STATUS_CANCELLED, job_id, (unsigned)MXQ_JOB_STATUS_INQ);
		if (n == -EPERM)
			goto not_owned;
		if (n < 0)
			goto db_error;
		if (n > 0) {
			printf("cancelled job %llu: it was queued\n", (unsigned long long)job_id);
			return 0;
		}
		n = mx_db_transaction(db, cancel_taken_job_body, tx);
		if (n == -EPERM)
			goto not_owned;
		if (n == -ENOENT) {
			mxq_complain("no job %llu", (unsigned long long)job_id);
			return -ENOENT;
		}
		if (n < 0)
			goto db_error;
		if (tx->upstream && (tx->changed > 0 || is_terminable(tx->status))) {
			char host[256], version[64], left[64];

			snprintf(left, sizeof(left), "left %s", status_name(tx->status));
			mxq_complain("job %llu runs on an upstream mxqd (%s, MXQ %s) that cannot kill"
				     " single jobs: %s; cancel its group %llu with -g, or kill it there",
				     (unsigned long long)job_id,
				     mx_term_field(tx->host, host, sizeof(host)),
				     mx_term_field(tx->version, version, sizeof(version)),
				     tx->changed > 0 ? "it was CANCELLING, put back so that mxqd ends it"
						     : left,
				     (unsigned long long)tx->group_id);
			return -EOPNOTSUPP;
		}
		if (tx->changed > 0) {
			printf("cancelling job %llu: its node will terminate it\n",
			       (unsigned long long)job_id);
			return 0;
		}
		r = read_job(db, job_id, &status, &owner, NULL, NULL);
		if (r < 0)
			return r;
		if (mxq_job_status_is_terminal(status)) {
			mxq_complain("job %llu already ended (%s)", (unsigned long long)job_id,
				 status_name(status));
			return -EALREADY;
		}
		if (status == MXQ_JOB_STATUS_CANCELLING || status == MXQ_JOB_STATUS_KILLING) {
			printf("job %llu is already being terminated (%s)\n",
			       (unsigned long long)job_id, status_name(status));
			return 0;
		}
	}
	mxq_complain("job %llu keeps changing its status (now %s); try again",
		 (unsigned long long)job_id, status_name(status));
	return -EAGAIN;
db_error:
	mxq_complain("cancelling job %llu failed: %s", (unsigned long long)job_id, mx_db_error(db));
	return (int)n;
not_owned:
	mxq_complain("job %llu is not yours: only its owner or root may cancel it",
		     (unsigned long long)job_id);
	return -EPERM;
}

static int cancel_job(struct mx_db *db, const struct options *o)
{
	struct cancel_job_tx tx = { .job_id = o->job_id };
	char *owner_name = NULL, shown[256];
	uint64_t owner;
	int status, r;

	r = read_job(db, tx.job_id, &status, &owner, &tx.group_id, &owner_name);
	if (r < 0)
		return r;
	if (!may_cancel(owner)) {
		mxq_complain("job %llu belongs to %s (uid %llu): only its owner or root may cancel it",
			 (unsigned long long)tx.job_id, mx_term_field(owner_name, shown, sizeof(shown)),
			 (unsigned long long)owner);
		free(owner_name);
		return -EPERM;
	}
	free(owner_name);
	if (not_for_user(o, "job", tx.job_id, owner))
		return -EPERM;
	r = cancel_job_rounds(db, &tx);
	free(tx.host);
	free(tx.version);
	return r;
}

/* ------------------------------------------------------------------ */

/* -u NAME|UID, as upstream's mxqkill takes it: a user name, else a uid;
 * only root may name someone else. 0, or -EINVAL (reported). */
static int parse_user(const char *arg, struct options *o)
{
	struct passwd *pw = getpwnam(arg);
	uint32_t uid;
	char shown[256];

	if (pw)
		uid = pw->pw_uid;
	else if (mx_strtou32(arg, &uid) < 0)
		return mxq_invalid("--user: no user '%s'", mx_term_field(arg, shown, sizeof(shown)));
	if (getuid() != 0 && uid != getuid())
		return mxq_invalid("--user: only root may cancel another user's jobs");
	o->for_user = true;
	o->user_uid = uid;
	o->user_arg = arg;
	return 0;
}

/* 0 go on, 1 exit successfully, negative: usage error (already reported). */
static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "group-id",            required_argument, NULL, 'g' },
		{ "job-id",              required_argument, NULL, 'J' },
		{ "user",                required_argument, NULL, 'u' },
		{ "mysql-default-file",  required_argument, NULL, 'M' },
		{ "mysql-default-group", required_argument, NULL, 'S' },
		{ "help",                no_argument,       NULL, 'h' },
		{ "version",             no_argument,       NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":g:J:u:M:S:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (mxq_parse_id("group-id", optarg, &o->group_id) < 0)
				return -EINVAL;
			break;
		case 'J':
			if (mxq_parse_id("job-id", optarg, &o->job_id) < 0)
				return -EINVAL;
			break;
		case 'u':
			if (parse_user(optarg, o) < 0)
				return -EINVAL;
			break;
		case 'M': o->defaults_file = optarg; break;
		case 'S': o->db_group = optarg; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("mxqkill %s\n", MXQ_VERSION); return 1;
		default:
			mxq_complain_getopt(c, argv);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		mxq_complain("unexpected argument '%s' (try 'mxqkill --help')", argv[optind]);
		return -EINVAL;
	}
	if (!o->group_id == !o->job_id) {
		mxq_complain("give exactly one of --group-id and --job-id (try 'mxqkill --help')");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {
		.defaults_file = getenv("MXQ_MYSQL_DEFAULT_FILE"),
		.db_group = getenv("MXQ_MYSQL_DEFAULT_GROUP"),
	};
	struct mx_db *db = NULL;
	char *terminable = NULL;
	int r, status = MXQ_EXIT_FAILURE;

	mxq_privs_init(); /* first: from here on we act as the caller */
	mxq_client_set_program("mxqkill");

	if (!o.defaults_file || !*o.defaults_file)
		o.defaults_file = MX_DB_DEFAULT_FILE;
	if (!o.db_group || !*o.db_group)
		o.db_group = MX_DB_GROUP_CLIENT;
	r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? MXQ_EXIT_OK : MXQ_EXIT_USAGE;
	terminable = terminable_status_list();
	if (!terminable) {
		mxq_complain("out of memory");
		return MXQ_EXIT_FAILURE;
	}

	r = mxq_client_connect(&db, o.defaults_file, o.db_group);
	if (r < 0)
		goto out;
	if (o.group_id)
		r = cancel_group(db, &o, terminable);
	else
		r = cancel_job(db, &o);
	if (r == 0)
		status = MXQ_EXIT_OK;
out:
	mx_db_close(db);
	free(terminable);
	return status;
}
