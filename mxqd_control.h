/*
 * mxqd_control - the daemon's view of what a server offers and what a group
 * needs, and server_is_qualified(): the ONE function that decides whether a
 * server may run a group. mxqd dispatch, mxqadmin qualify, the power
 * manager's policy and the simulator all call it; no rule is implemented a
 * second time anywhere in the tree.
 */
#ifndef MXQD_CONTROL_H
#define MXQD_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "keywordset.h"
#include "mxq_expr.h"

/* What a server (an mxqd, running or last registered) offers. */
struct mxq_server_caps {
	char *hostname;                /* full host name, as in mxq_daemon.hostname */
	char *short_hostname;          /* up to the first '.' */
	struct keywordset *tags;       /* configured tags PLUS the implicit words:
	                                  "true", hostname, short_hostname */
	struct mxq_expr *prerequisites;/* server's own, tested on group tags; NULL = none */
	bool prerequisites_invalid;    /* text given but did not parse: nothing qualifies */
	uint32_t slots;                /* daemon_slots */
	uint64_t memory_mib;           /* daemon_memory */
	uint64_t maxtime_min;          /* daemon_maxtime, 0 = unlimited */
	uint32_t gpus;                 /* daemon_gpus_max */
	uint64_t tmpdir_total_mib;     /* size of the job tmpdir file system, 0 = unknown */
};

/* What a group needs (one job of it). */
struct mxq_group_reqs {
	struct keywordset *tags;       /* group tags */
	struct mxq_expr *prerequisites;/* tested on server tags; NULL = none */
	bool prerequisites_invalid;    /* text given but did not parse: never qualifies */
	struct keywordset *whitelist;  /* empty = any host */
	struct keywordset *blacklist;
	uint32_t threads;              /* job_threads */
	uint64_t memory_mib;           /* job_memory */
	uint64_t time_min;             /* job_time */
	uint32_t gpus;                 /* job_gpu */
	uint64_t tmpdir_mib;           /* job_tmpdir_size converted to MiB */
};

/* The rules, in the order they are checked. */
enum mxq_qual_rule {
	MXQ_QUAL_OK = 0,
	MXQ_QUAL_WHITELIST,
	MXQ_QUAL_BLACKLIST,
	MXQ_QUAL_GROUP_PREREQUISITES,
	MXQ_QUAL_SERVER_PREREQUISITES,
	MXQ_QUAL_GPU,
	MXQ_QUAL_THREADS,
	MXQ_QUAL_MEMORY,
	MXQ_QUAL_RUNTIME,
	MXQ_QUAL_TMPDIR,
	_MXQ_QUAL_MAX,
};

/* "ok", "whitelist", ... ; stable strings, used in output and JSON. */
const char *mxq_qual_rule_to_string(enum mxq_qual_rule rule);
/* Human explanation: "host not in the group's whitelist", ... */
const char *mxq_qual_rule_describe(enum mxq_qual_rule rule);

/*
 * True when SERVER may ever run GROUP. When ret_rule is non-NULL it receives
 * MXQ_QUAL_OK or the first rule that failed.
 */
bool server_is_qualified(const struct mxq_server_caps *server,
			 const struct mxq_group_reqs *group,
			 enum mxq_qual_rule *ret_rule);

/*
 * Build caps from the columns of an mxq_daemon row (or mxqd options).
 * tags_text/prereq_text may be NULL. Returns 0, -EINVAL when prereq_text
 * does not parse (caps are still filled, prerequisites_invalid set, and the
 * parser message written into errbuf), or -ENOMEM.
 */
int mxq_server_caps_init(struct mxq_server_caps *caps, const char *hostname,
			 const char *tags_text, const char *prereq_text,
			 uint32_t slots, uint64_t memory_mib, uint64_t maxtime_min,
			 uint32_t gpus, uint64_t tmpdir_total_mib,
			 char *errbuf, size_t errlen);
void mxq_server_caps_done(struct mxq_server_caps *caps);

/* Same for a group row. Never fails on bad text (marks invalid). 0 or -ENOMEM. */
int mxq_group_reqs_init(struct mxq_group_reqs *reqs, const char *tags_text,
			const char *prereq_text, const char *whitelist_text,
			const char *blacklist_text, uint32_t threads,
			uint64_t memory_mib, uint64_t time_min, uint32_t gpus,
			uint64_t tmpdir_mib);
void mxq_group_reqs_done(struct mxq_group_reqs *reqs);

#endif
