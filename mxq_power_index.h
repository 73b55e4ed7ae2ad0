/*
 * mxq_power_index - which nodes of a power snapshot each step of
 * mxq_power_decide() has to look at (private to mxq_power_policy.c and its
 * tests; callers see only the mxq_power_index_* functions of
 * mxq_power_policy.h).
 *
 * A decision over a 5,000-node cluster in which most nodes are off or busy
 * used to look at every node in every step. The index sorts the nodes into
 * the sets the steps need, by what their snapshot entry says (never by the
 * clock): a node a step does not find in its set is one for which that step
 * would have done nothing. Kept from decision to decision, only the entries
 * the caller reports as changed are sorted again; without one, each decision
 * builds a fresh index of every node.
 *
 * Sets by node index: trans. Sets by position (the efficiency order of the
 * decision, = index when the snapshot has nodes_in_order): cap, drain, off,
 * busy, idle. Two arrays keep the off nodes by state_since and the busy
 * managed nodes by the last expected end of their running jobs, so that
 * the gang planner finds the earliest-free nodes without looking at all; a
 * third keeps every busy node by its first expected end, for the capacity
 * that frees within a boot.
 */
#ifndef MXQ_POWER_INDEX_H
#define MXQ_POWER_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mx_bitmap.h"
#include "mx_blist.h"
#include "mxq_power_policy.h"

/* What the index remembers of one node entry, to take it out again. */
struct mxq_power_index_node {
	int64_t since;               /* state_since (key of the off array) */
	int64_t min_end, max_end;    /* of its running jobs' expected ends (max_end:
	                                key of the ends array); 0/0 without jobs */
	uint64_t room[4];            /* its caps: slots, memory, gpus, tmpdir (off max) */
	uint32_t sets;               /* IX_* bits */
	bool managed;                /* not excluded, not unmanaged */
	bool powered, booting, admin_request, no_caps;
};

enum {
	IX_TRANS = 1 << 0,  /* step_transitions may act on it or note it */
	IX_CAP   = 1 << 1,  /* ON or POWERING_ON with caps and a free slot, its
	                       mxqd neither gone nor closed (takes jobs) */
	IX_DRAIN = 1 << 2,  /* DRAINING, managed, caps, not admin off, takes jobs:
	                       reclaimable */
	IX_OFF   = 1 << 3,  /* OFF and managed: may be woken (off array too) */
	IX_BUSY  = 1 << 4,  /* ON with caps and running jobs in the detail, takes
	                       jobs (what they free is room) */
	IX_IDLE  = 1 << 5,  /* ON, managed, no job, mxqd alive: may be suspended */
	IX_ENDS  = 1 << 6,  /* IX_BUSY and managed (ends array) */
};

struct mxq_power_index {
	/* the snapshot and configuration it was built for */
	const struct mxq_power_node *nodes;
	size_t n;
	bool in_order;
	char *const *exclude;
	size_t n_exclude;
	bool valid;                  /* false: rebuild everything at the next sync */

	struct mxq_power_index_node *node;
	size_t *order;               /* position -> index */
	size_t *pos;                 /* index -> position */
	size_t words;                /* 64-bit words per bitmap */
	uint64_t *trans;             /* by index */
	uint64_t *cap, *drain, *off, *busy, *idle;  /* by position */
	struct mx_blist off_since;   /* IX_OFF nodes by (since, index) */
	struct mx_blist ends;        /* IX_ENDS nodes by (max_end, index) */
	struct mx_blist busy_first;  /* IX_BUSY nodes by (min_end, index) */

	/* counts over every node */
	uint32_t powered, booting;
	size_t admin_requests, nodes_without_caps;

	/* the largest caps of any IX_OFF node with caps, per unit, and how
	 * many reach it; recounted when the last one leaves */
	uint64_t off_max[4];
	size_t off_at_max[4];
	size_t off_no_tmpdir;        /* IX_OFF nodes with caps but no tmpdir size */
	bool off_max_stale;

	/* entries rewritten since the last sync */
	uint32_t *changed;
	size_t n_changed, cap_changed;
	bool all_changed;

	/* the IX_BUSY entries the last sync put in (again): those reported
	 * changed, or every one after a rebuild; in the order put in */
	uint32_t *synced;
	size_t n_synced, cap_synced;

	/* the decision's working records, kept to spare the allocation */
	void *work;
	size_t work_size;
	uint32_t work_gen;
};

/* Bring IX up to date with SNAP under CFG: a full rebuild when IX is new,
 * was built for another node array, size or exclude list, or the snapshot
 * is not in order; else only the entries reported changed. -EINVAL for a
 * node without hostname or with a bad state (IX is then rebuilt next
 * time), -ENOMEM. */
int mxq_power_index_sync(struct mxq_power_index *ix, const struct mxq_power_snapshot *snap,
			 const struct mxq_power_config *cfg);

/* Release what IX holds, leaving it zeroed (for an index on the stack). */
void mxq_power_index_done(struct mxq_power_index *ix);

/* Is HOSTNAME in CFG's exclude list (full or short name)? */
bool mxq_power_config_excludes(const struct mxq_power_config *cfg, const char *hostname);

#endif
