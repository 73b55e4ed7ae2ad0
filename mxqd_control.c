/*
 * mxqd_control - server_is_qualified(): whether a server may ever run a
 * group, and the constructors for the two sides it compares.
 *
 * The rules are checked in the order of enum mxq_qual_rule and the first
 * one that fails is reported, so "why not" answers are stable: host lists
 * first (cheapest, most deliberate), then both prerequisites, then the
 * resources. A resource the group does not ask for (0 threads, 0 memory,
 * 0 GPUs, 0 tmpdir) always fits; a server limit of 0 means "unlimited" only
 * for maxtime. A server whose tmpdir size is unknown (0) never qualifies for
 * a group that needs tmpdir space, so such a group is not sent to a host
 * that may not have room.
 *
 * Errors: constructors return -ENOMEM, or -EINVAL with the parser message in
 * the caller's buffer. Nothing here logs.
 */
#include "mxqd_control.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const rule_names[_MXQ_QUAL_MAX] = {
	[MXQ_QUAL_OK]                   = "ok",
	[MXQ_QUAL_WHITELIST]            = "whitelist",
	[MXQ_QUAL_BLACKLIST]            = "blacklist",
	[MXQ_QUAL_GROUP_PREREQUISITES]  = "group-prerequisites",
	[MXQ_QUAL_SERVER_PREREQUISITES] = "server-prerequisites",
	[MXQ_QUAL_GPU]                  = "gpu",
	[MXQ_QUAL_THREADS]              = "threads",
	[MXQ_QUAL_MEMORY]               = "memory",
	[MXQ_QUAL_RUNTIME]              = "runtime",
	[MXQ_QUAL_TMPDIR]               = "tmpdir",
};

static const char *const rule_descriptions[_MXQ_QUAL_MAX] = {
	[MXQ_QUAL_OK]                   = "host may run the group",
	[MXQ_QUAL_WHITELIST]            = "host is not in the group's whitelist",
	[MXQ_QUAL_BLACKLIST]            = "host is in the group's blacklist",
	[MXQ_QUAL_GROUP_PREREQUISITES]  = "the group's prerequisites do not hold on the host's tags "
					  "(or do not parse)",
	[MXQ_QUAL_SERVER_PREREQUISITES] = "the host's prerequisites do not hold on the group's tags "
					  "(or do not parse)",
	[MXQ_QUAL_GPU]                  = "the group needs more GPUs than the host has",
	[MXQ_QUAL_THREADS]              = "the group needs more threads than the host has slots",
	[MXQ_QUAL_MEMORY]               = "the group needs more memory than the host offers",
	[MXQ_QUAL_RUNTIME]              = "the group's runtime exceeds the host's maximum job time",
	[MXQ_QUAL_TMPDIR]               = "the group needs more tmpdir space than the host has "
					  "(or the host's tmpdir size is unknown)",
};

const char *mxq_qual_rule_to_string(enum mxq_qual_rule rule)
{
	if ((unsigned)rule >= ELEMENTSOF(rule_names))
		return NULL;
	return rule_names[rule];
}

const char *mxq_qual_rule_describe(enum mxq_qual_rule rule)
{
	if ((unsigned)rule >= ELEMENTSOF(rule_descriptions))
		return NULL;
	return rule_descriptions[rule];
}

static bool names_host(const struct keywordset *list, const struct mxq_server_caps *server)
{
	return keywordset_contains(list, server->hostname) ||
	       keywordset_contains(list, server->short_hostname);
}

/* An absent expression holds; one that did not parse never does. */
static bool prerequisites_hold(const struct mxq_expr *prerequisites, bool invalid,
			       const struct keywordset *tags)
{
	if (invalid)
		return false;
	return !prerequisites || mxq_expr_eval(prerequisites, tags);
}

static enum mxq_qual_rule first_failed_rule(const struct mxq_server_caps *server,
					    const struct mxq_group_reqs *group)
{
	if (!keywordset_is_empty(group->whitelist) && !names_host(group->whitelist, server))
		return MXQ_QUAL_WHITELIST;
	if (names_host(group->blacklist, server))
		return MXQ_QUAL_BLACKLIST;
	if (!prerequisites_hold(group->prerequisites, group->prerequisites_invalid, server->tags))
		return MXQ_QUAL_GROUP_PREREQUISITES;
	if (!prerequisites_hold(server->prerequisites, server->prerequisites_invalid, group->tags))
		return MXQ_QUAL_SERVER_PREREQUISITES;
	if (group->gpus > server->gpus)
		return MXQ_QUAL_GPU;
	if (group->threads > server->slots)
		return MXQ_QUAL_THREADS;
	if (group->memory_mib > server->memory_mib)
		return MXQ_QUAL_MEMORY;
	if (server->maxtime_min != 0 && group->time_min > server->maxtime_min)
		return MXQ_QUAL_RUNTIME;
	/* an unknown (0) tmpdir size thereby refuses every group that needs some */
	if (group->tmpdir_mib > server->tmpdir_total_mib)
		return MXQ_QUAL_TMPDIR;
	return MXQ_QUAL_OK;
}

bool server_is_qualified(const struct mxq_server_caps *server,
			 const struct mxq_group_reqs *group,
			 enum mxq_qual_rule *ret_rule)
{
	enum mxq_qual_rule rule = first_failed_rule(server, group);

	if (ret_rule)
		*ret_rule = rule;
	return rule == MXQ_QUAL_OK;
}

static bool is_blank(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

/*
 * Parse optional prerequisites text: NULL or blank means none (*ret stays
 * NULL). Returns 0, -EINVAL (syntax error, message in errbuf) or -ENOMEM.
 */
static int parse_prerequisites(const char *text, struct mxq_expr **ret, char *errbuf, size_t errlen)
{
	if (!text || is_blank(text))
		return 0;
	return mxq_expr_parse(text, ret, errbuf, errlen);
}

static void set_error(char *errbuf, size_t errlen, const char *msg)
{
	if (errbuf && errlen > 0)
		snprintf(errbuf, errlen, "%s", msg);
}

int mxq_server_caps_init(struct mxq_server_caps *caps, const char *hostname,
			 const char *tags_text, const char *prereq_text,
			 uint32_t slots, uint64_t memory_mib, uint64_t maxtime_min,
			 uint32_t gpus, uint64_t tmpdir_total_mib,
			 char *errbuf, size_t errlen)
{
	struct mxq_server_caps c = {
		.slots = slots,
		.memory_mib = memory_mib,
		.maxtime_min = maxtime_min,
		.gpus = gpus,
		.tmpdir_total_mib = tmpdir_total_mib,
	};
	int parsed;

	if (errbuf && errlen > 0)
		errbuf[0] = '\0';
	if (!caps || !hostname || !*hostname || strpbrk(hostname, " \t\n\v\f\r")) {
		set_error(errbuf, errlen, "invalid host name");
		return -EINVAL;
	}
	c.hostname = strdup(hostname);
	c.short_hostname = strndup(hostname, strcspn(hostname, "."));
	c.tags = keywordset_new(tags_text);
	if (!c.hostname || !c.short_hostname || !c.tags)
		goto nomem;
	/* a host name starting with '.' has no short name; the full one stands in */
	if (!*c.short_hostname) {
		free(c.short_hostname);
		c.short_hostname = strdup(c.hostname);
		if (!c.short_hostname)
			goto nomem;
	}
	if (keywordset_add(c.tags, "true") < 0 ||
	    keywordset_add(c.tags, c.hostname) < 0 ||
	    keywordset_add(c.tags, c.short_hostname) < 0)
		goto nomem;

	parsed = parse_prerequisites(prereq_text, &c.prerequisites, errbuf, errlen);
	if (parsed == -ENOMEM)
		goto nomem;
	c.prerequisites_invalid = parsed < 0;

	*caps = c;
	return parsed;

nomem:
	mxq_server_caps_done(&c);
	set_error(errbuf, errlen, "out of memory");
	return -ENOMEM;
}

void mxq_server_caps_done(struct mxq_server_caps *caps)
{
	if (!caps)
		return;
	free(caps->hostname);
	free(caps->short_hostname);
	keywordset_free(caps->tags);
	mxq_expr_free(caps->prerequisites);
	*caps = (struct mxq_server_caps){ 0 };
}

int mxq_group_reqs_init(struct mxq_group_reqs *reqs, const char *tags_text,
			const char *prereq_text, const char *whitelist_text,
			const char *blacklist_text, uint32_t threads,
			uint64_t memory_mib, uint64_t time_min, uint32_t gpus,
			uint64_t tmpdir_mib)
{
	struct mxq_group_reqs g = {
		.threads = threads,
		.memory_mib = memory_mib,
		.time_min = time_min,
		.gpus = gpus,
		.tmpdir_mib = tmpdir_mib,
	};
	int parsed;

	if (!reqs)
		return -EINVAL;
	g.tags = keywordset_new(tags_text);
	g.whitelist = keywordset_new(whitelist_text);
	g.blacklist = keywordset_new(blacklist_text);
	if (!g.tags || !g.whitelist || !g.blacklist)
		goto nomem;
	parsed = parse_prerequisites(prereq_text, &g.prerequisites, NULL, 0);
	if (parsed == -ENOMEM)
		goto nomem;
	g.prerequisites_invalid = parsed < 0;

	*reqs = g;
	return 0;

nomem:
	mxq_group_reqs_done(&g);
	return -ENOMEM;
}

void mxq_group_reqs_done(struct mxq_group_reqs *reqs)
{
	if (!reqs)
		return;
	keywordset_free(reqs->tags);
	mxq_expr_free(reqs->prerequisites);
	keywordset_free(reqs->whitelist);
	keywordset_free(reqs->blacklist);
	*reqs = (struct mxq_group_reqs){ 0 };
}
