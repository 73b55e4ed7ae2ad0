/*
 * mxq_identity - the identity check of job rows (see mxq_identity.h).
 *
 * The decision is pure; mxq_identity_verify() reads the user database with
 * the reentrant calls (mxqd may run it in a forked child) and turns the
 * verdict into one line for mxq_job.job_reason. Nothing here logs.
 */
#define _GNU_SOURCE
#include "mxq_identity.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mx_util.h"

enum mxq_identity_verdict mxq_identity_decide(const struct mxq_identity_claim *claim,
					      const struct mxq_identity_policy *policy,
					      const struct mxq_identity_facts *facts)
{
	if (!policy->allow_root_jobs && claim->uid == 0)
		return MXQ_IDENTITY_ROOT;
	if (!policy->allow_root_jobs && claim->uid < policy->min_uid)
		return MXQ_IDENTITY_BELOW_MIN;
	/* nobody is above any --min-uid, but it is a system account that
	 * daemons share: a job as nobody could signal or trace them */
	if (!policy->allow_root_jobs && (claim->uid == 65534 || claim->uid == UINT32_MAX))
		return MXQ_IDENTITY_NOBODY;
	if (!facts || !facts->found)
		return MXQ_IDENTITY_NO_SUCH_USER;
	if (!claim->user_name || !facts->name || strcmp(claim->user_name, facts->name) != 0)
		return MXQ_IDENTITY_NAME_MISMATCH;
	if (claim->gid != facts->primary_gid && !facts->gid_is_member)
		return MXQ_IDENTITY_GID_MISMATCH;
	return MXQ_IDENTITY_OK;
}

const char *mxq_identity_verdict_name(enum mxq_identity_verdict v)
{
	static const char *const names[] = {
		[MXQ_IDENTITY_OK] = "ok",
		[MXQ_IDENTITY_ROOT] = "root",
		[MXQ_IDENTITY_BELOW_MIN] = "below-min-uid",
		[MXQ_IDENTITY_NO_SUCH_USER] = "no-such-user",
		[MXQ_IDENTITY_NAME_MISMATCH] = "name-mismatch",
		[MXQ_IDENTITY_GID_MISMATCH] = "gid-mismatch",
		[MXQ_IDENTITY_LOOKUP_FAILED] = "lookup-failed",
		[MXQ_IDENTITY_NOBODY] = "nobody",
	};

	return (unsigned)v < MX_ARRAY_SIZE(names) ? names[v] : "unknown";
}

/* Is GID among NAME's groups (primary PRIMARY included)? */
static int user_in_group(const char *name, gid_t primary, gid_t gid, bool *ret)
{
	gid_t stack[64], *groups = stack;
	int n = (int)MX_ARRAY_SIZE(stack);
	bool found = false;

	if (getgrouplist(name, primary, groups, &n) < 0) {
		groups = calloc((size_t)n, sizeof(*groups));
		if (!groups)
			return -ENOMEM;
		if (getgrouplist(name, primary, groups, &n) < 0) {
			free(groups);
			return -EIO;
		}
	}
	for (int i = 0; i < n && !found; i++)
		found = groups[i] == gid;
	if (groups != stack)
		free(groups);
	*ret = found;
	return 0;
}

enum mxq_identity_verdict mxq_identity_verify(const struct mxq_identity_claim *claim,
					      const struct mxq_identity_policy *policy,
					      char *ret_name, size_t ret_len,
					      char *reason, size_t reason_len)
{
	struct mxq_identity_facts facts = { 0 };
	struct passwd pwbuf, *pw = NULL;
	enum mxq_identity_verdict v;
	const char *claimed = claim->user_name ? claim->user_name : "";
	char buf[16384];
	int r;

	v = mxq_identity_decide(claim, policy, NULL);
	if (v == MXQ_IDENTITY_ROOT || v == MXQ_IDENTITY_BELOW_MIN || v == MXQ_IDENTITY_NOBODY)
		goto out;
	r = getpwuid_r((uid_t)claim->uid, &pwbuf, buf, sizeof(buf), &pw);
	if (r != 0 && r != ENOENT && r != ESRCH) {
		v = MXQ_IDENTITY_LOOKUP_FAILED;
		snprintf(reason, reason_len, "refused: cannot look up uid %u: %s (job not run)",
			 claim->uid, strerror(r));
		return v;
	}
	if (pw) {
		facts.found = true;
		facts.name = pw->pw_name;
		facts.primary_gid = pw->pw_gid;
		if (claim->gid != pw->pw_gid &&
		    user_in_group(pw->pw_name, pw->pw_gid, (gid_t)claim->gid, &facts.gid_is_member) < 0) {
			snprintf(reason, reason_len, "refused: cannot read the groups of %s (job not run)",
				 pw->pw_name);
			return MXQ_IDENTITY_LOOKUP_FAILED;
		}
	}
	v = mxq_identity_decide(claim, policy, &facts);
out:
	switch (v) {
	case MXQ_IDENTITY_OK:
		if (ret_name && ret_len)
			snprintf(ret_name, ret_len, "%s", facts.name);
		if (reason_len)
			reason[0] = '\0';
		break;
	case MXQ_IDENTITY_ROOT:
		snprintf(reason, reason_len, "refused: jobs of uid 0 (root) do not run here "
			 "(mxqd without --allow-root-jobs)");
		break;
	case MXQ_IDENTITY_BELOW_MIN:
		snprintf(reason, reason_len, "refused: uid %u is below mxqd's --min-uid %u",
			 claim->uid, policy->min_uid);
		break;
	case MXQ_IDENTITY_NOBODY:
		snprintf(reason, reason_len, "refused: uid %u (nobody) is shared by system daemons "
			 "and runs no jobs (mxqd without --allow-root-jobs)", claim->uid);
		break;
	case MXQ_IDENTITY_NO_SUCH_USER:
		snprintf(reason, reason_len, "refused: uid %u is not a user on this node", claim->uid);
		break;
	case MXQ_IDENTITY_NAME_MISMATCH:
		snprintf(reason, reason_len, "refused: user_name '%.64s' is not the name of uid %u ('%.64s')",
			 claimed, claim->uid, facts.name);
		break;
	case MXQ_IDENTITY_GID_MISMATCH:
		snprintf(reason, reason_len, "refused: gid %u is not a group of user %.64s (uid %u)",
			 claim->gid, facts.name, claim->uid);
		break;
	case MXQ_IDENTITY_LOOKUP_FAILED:
		break;
	}
	return v;
}
