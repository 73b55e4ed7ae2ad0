/*
 * mxq_identity - may mxqd run a job (or its callback) as the user a
 * database row names?
 *
 * A row of mxq_group names user_uid, user_name and user_gid. Nothing in the
 * database is trusted to say who a job runs as: the uid is resolved with the
 * system's user database, the name must be that uid's name, the gid must be
 * the user's primary group or one of their groups, and uid 0 and uids below
 * a floor are refused unless root jobs are allowed. The decision itself is
 * a pure function (mxq_identity_decide) so that it can be tested with
 * tables; mxq_identity_verify() feeds it from getpwuid_r()/getgrouplist().
 */
#ifndef MXQ_IDENTITY_H
#define MXQ_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a row claims. */
struct mxq_identity_claim {
	uint32_t uid;
	const char *user_name;
	uint32_t gid;
};

/* mxqd's rules (--min-uid, --allow-root-jobs). */
struct mxq_identity_policy {
	uint32_t min_uid;       /* default 1000 */
	bool allow_root_jobs;   /* lifts the floor and the uid 0 ban */
};

/* What the user database says about claim->uid. */
struct mxq_identity_facts {
	bool found;             /* getpwuid() knew the uid */
	const char *name;       /* pw_name when found */
	uint32_t primary_gid;   /* pw_gid when found */
	bool gid_is_member;     /* claim->gid is one of the user's groups (getgrouplist) */
};

enum mxq_identity_verdict {
	MXQ_IDENTITY_OK = 0,
	MXQ_IDENTITY_ROOT,          /* uid 0 without allow_root_jobs */
	MXQ_IDENTITY_BELOW_MIN,     /* uid < min_uid without allow_root_jobs */
	MXQ_IDENTITY_NO_SUCH_USER,  /* uid unknown to the user database */
	MXQ_IDENTITY_NAME_MISMATCH, /* stored name is not the uid's name */
	MXQ_IDENTITY_GID_MISMATCH,  /* gid neither primary nor a member group */
	MXQ_IDENTITY_LOOKUP_FAILED, /* the user database could not be read */
	MXQ_IDENTITY_NOBODY,        /* uid 65534 (nobody, the kernel's overflow uid) or
	                               (uint32_t)-1 without allow_root_jobs */
};

/* Pure decision; checks in the order of the enum. FACTS may be NULL only
 * when the verdict does not need them (a refused uid). */
enum mxq_identity_verdict mxq_identity_decide(const struct mxq_identity_claim *claim,
					      const struct mxq_identity_policy *policy,
					      const struct mxq_identity_facts *facts);

/* Short name of a verdict ("ok", "root", ...). */
const char *mxq_identity_verdict_name(enum mxq_identity_verdict v);

/*
 * Resolve claim->uid and decide. On MXQ_IDENTITY_OK the resolved user name
 * is copied to ret_name (ret_len bytes, may be 0/NULL). Otherwise a one-line
 * reason for the job's owner is written to reason (naming what the row says
 * and what the system says). Never logs.
 */
enum mxq_identity_verdict mxq_identity_verify(const struct mxq_identity_claim *claim,
					      const struct mxq_identity_policy *policy,
					      char *ret_name, size_t ret_len,
					      char *reason, size_t reason_len);

#endif
