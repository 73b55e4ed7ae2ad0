/*
 * mxq_power_index - the node sets of a power decision, kept up to date
 * entry by entry (see mxq_power_index.h for what each set holds and why).
 *
 * Errors: -ENOMEM, -EINVAL for a bad snapshot entry. Nothing here reads a
 * clock: every set is decided by the entry alone, and the steps of
 * mxq_power_decide() apply the time-dependent rules to the members.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mxq_power_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mx_blist.h"
#include "mxqd_control.h"

/* --- the sorted lists (mx_blist.h) ---------------------------------------- */

/*
 * Node I was in L (WAS, under OLD_KEY) and is to be there now or not (IN),
 * under NEW_KEY. A node that stays under the same key is not touched.
 */
static void sorted_keep(struct mx_blist *l, uint32_t i, bool was, int64_t old_key,
			int64_t new_key, bool in)
{
	if (was && in)
		mx_blist_move(l, old_key, new_key, i);
	else if (was)
		mx_blist_remove(l, old_key, i);
	else if (in)
		mx_blist_insert(l, new_key, i);
}

/* --- the largest off node -------------------------------------------------- */

static void off_max_add(struct mxq_power_index *ix, const uint64_t *room)
{
	for (int u = 0; u < 4; u++) {
		if (room[u] > ix->off_max[u]) {
			ix->off_max[u] = room[u];
			ix->off_at_max[u] = 1;
		} else if (room[u] == ix->off_max[u]) {
			ix->off_at_max[u]++;
		}
	}
	if (!room[3])
		ix->off_no_tmpdir++;
}

static void off_max_remove(struct mxq_power_index *ix, const uint64_t *room)
{
	for (int u = 0; u < 4; u++)
		if (room[u] == ix->off_max[u] && ix->off_at_max[u] && --ix->off_at_max[u] == 0)
			ix->off_max_stale = true;
	if (!room[3] && ix->off_no_tmpdir)
		ix->off_no_tmpdir--;
}

static void off_max_recount(struct mxq_power_index *ix)
{
	memset(ix->off_max, 0, sizeof(ix->off_max));
	memset(ix->off_at_max, 0, sizeof(ix->off_at_max));
	ix->off_no_tmpdir = 0;
	for (struct mx_blist_it k = mx_blist_begin(&ix->off_since); !mx_blist_end(&k);
	     mx_blist_next(&k)) {
		const struct mxq_power_index_node *x = &ix->node[mx_blist_get(&k)->id];
		if (!x->no_caps)
			off_max_add(ix, x->room);
	}
	ix->off_max_stale = false;
}

/* --- one entry ------------------------------------------------------------ */

/* Nothing step_transitions does for this entry: ON or OFF with nothing to
 * reconcile, no failed call, no admin request, no stranded jobs. */
static bool plain(const struct mxq_power_node *n)
{
	if (n->failed_call && n->failed_call[0])
		return false;
	if (n->state == MXQ_POWER_ON)
		return !(n->power_read && n->power_reading == 0) && !n->daemon_gone && !n->admin_off;
	if (n->state == MXQ_POWER_OFF)
		return !n->seen_up && !(n->power_read && n->power_reading == 1) &&
		       !(n->jobs_running && n->daemon_gone) && !n->admin_wake;
	return false;
}

static size_t pos_of(const struct mxq_power_index *ix, size_t i)
{
	return ix->in_order ? i : ix->pos[i];
}

/* Which sorted lists a node was in before it is put in again (none: in
 * none), and its keys then. */
struct kept_places {
	bool off, ends, busy;
	int64_t since, max_end, min_end;
};

static void take_out(struct mxq_power_index *ix, size_t i, struct kept_places *kp)
{
	struct mxq_power_index_node *x = &ix->node[i];
	size_t k = pos_of(ix, i);

	if (x->sets & IX_TRANS)
		mx_bitmap_clear(ix->trans, i);
	if (x->sets & IX_CAP)
		mx_bitmap_clear(ix->cap, k);
	if (x->sets & IX_DRAIN)
		mx_bitmap_clear(ix->drain, k);
	*kp = (struct kept_places) {
		.off = x->sets & IX_OFF, .ends = x->sets & IX_ENDS, .busy = x->sets & IX_BUSY,
		.since = x->since, .max_end = x->max_end, .min_end = x->min_end,
	};
	if (x->sets & IX_BUSY)
		mx_bitmap_clear(ix->busy, k);
	if (x->sets & IX_IDLE)
		mx_bitmap_clear(ix->idle, k);
	if (x->sets & IX_OFF) {
		mx_bitmap_clear(ix->off, k);
		if (!x->no_caps)
			off_max_remove(ix, x->room);
	}
	ix->powered -= x->powered;
	ix->booting -= x->booting;
	ix->admin_requests -= x->admin_request;
	ix->nodes_without_caps -= x->no_caps;
	x->sets = 0;
}

/* Node I into the sorted lists that SETS name and out of the others; KP:
 * where take_out() found it, NULL: in none. */
static void sorted_place(struct mxq_power_index *ix, size_t i, const struct kept_places *kp,
			 uint32_t sets)
{
	const struct mxq_power_index_node *x = &ix->node[i];
	struct kept_places none = { false, false, false, 0, 0, 0 };

	if (!kp)
		kp = &none;
	sorted_keep(&ix->off_since, (uint32_t)i, kp->off, kp->since, x->since, sets & IX_OFF);
	sorted_keep(&ix->ends, (uint32_t)i, kp->ends, kp->max_end, x->max_end, sets & IX_ENDS);
	sorted_keep(&ix->busy_first, (uint32_t)i, kp->busy, kp->min_end, x->min_end,
		    sets & IX_BUSY);
}

/* Put node I into the sets; KP: where take_out() found it, NULL: in none. */
static int put_in(struct mxq_power_index *ix, const struct mxq_power_config *cfg, size_t i,
		  const struct kept_places *kp)
{
	const struct mxq_power_node *n = &ix->nodes[i];
	struct mxq_power_index_node *x = &ix->node[i];
	size_t k = pos_of(ix, i);
	uint32_t sets = 0;

	if (!n->hostname || (unsigned)n->state >= _MXQ_POWER_STATE_MAX) {
		/* in no set, so in none of the sorted lists take_out() kept it in */
		sorted_place(ix, i, kp, 0);
		return -EINVAL;
	}
	x->managed = !n->excluded && !mxq_power_config_excludes(cfg, n->hostname) &&
		     !(n->unmanaged_why && n->unmanaged_why[0]);
	x->since = n->state_since;
	x->min_end = x->max_end = 0;
	for (size_t j = 0; n->running && j < n->n_running; j++) {
		int64_t e = n->running[j].expected_end;
		if (j == 0 || e < x->min_end)
			x->min_end = e;
		if (j == 0 || e > x->max_end)
			x->max_end = e;
	}
	if (n->caps) {
		x->room[0] = n->caps->slots;
		x->room[1] = n->caps->memory_mib;
		x->room[2] = n->caps->gpus;
		x->room[3] = n->caps->tmpdir_total_mib;
	} else {
		memset(x->room, 0, sizeof(x->room));
	}
	x->powered = mxq_power_state_counts_as_powered(n->state);
	x->booting = n->state == MXQ_POWER_POWERING_ON;
	x->admin_request = n->admin_request;
	x->no_caps = !n->caps;

	if (x->managed && !plain(n))
		sets |= IX_TRANS;
	/* a node whose mxqd starts no jobs, or is gone from a node that is on
	 * (a booting node has none yet), is no capacity, and what its running
	 * jobs free is no room */
	bool takes_jobs = !n->closed && !mxq_power_node_daemon_lost(n);

	if (mxq_power_state_counts_as_capacity(n->state) && n->caps && takes_jobs) {
		uint64_t free_slots = n->caps->slots;
		if (n->state == MXQ_POWER_ON)
			free_slots -= free_slots < n->used_slots ? free_slots : n->used_slots;
		if (free_slots)
			sets |= IX_CAP;
	}
	if (n->state == MXQ_POWER_DRAINING && x->managed && n->caps && !n->admin_off && takes_jobs)
		sets |= IX_DRAIN;
	if (n->state == MXQ_POWER_OFF && x->managed)
		sets |= IX_OFF;
	if (n->state == MXQ_POWER_ON && n->caps && n->running && n->n_running && takes_jobs) {
		sets |= IX_BUSY;
		if (x->managed)
			sets |= IX_ENDS;
	}
	if (n->state == MXQ_POWER_ON && x->managed && !n->jobs_running && !n->daemon_gone)
		sets |= IX_IDLE;

	if (sets & IX_TRANS)
		mx_bitmap_set(ix->trans, i);
	if (sets & IX_CAP)
		mx_bitmap_set(ix->cap, k);
	if (sets & IX_DRAIN)
		mx_bitmap_set(ix->drain, k);
	if (sets & IX_BUSY)
		mx_bitmap_set(ix->busy, k);
	if (sets & IX_IDLE)
		mx_bitmap_set(ix->idle, k);
	if (sets & IX_OFF) {
		mx_bitmap_set(ix->off, k);
		if (!x->no_caps)
			off_max_add(ix, x->room);
	}
	sorted_place(ix, i, kp, sets);
	ix->powered += x->powered;
	ix->booting += x->booting;
	ix->admin_requests += x->admin_request;
	ix->nodes_without_caps += x->no_caps;
	x->sets = sets;
	if (sets & IX_BUSY)
		ix->synced[ix->n_synced++] = (uint32_t)i;  /* room: see mxq_power_index_sync */
	return 0;
}

/* --- building ------------------------------------------------------------- */

struct order_key {
	int32_t rank;
	const char *hostname;
	size_t index;
};

static int cmp_order_key(const void *a, const void *b)
{
	const struct order_key *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->hostname, y->hostname);
}

static void release(struct mxq_power_index *ix)
{
	free(ix->node);
	free(ix->order);
	free(ix->pos);
	free(ix->trans);
	mx_blist_free(&ix->off_since);
	mx_blist_free(&ix->ends);
	mx_blist_free(&ix->busy_first);
	ix->node = NULL;
	ix->order = ix->pos = NULL;
	ix->trans = NULL;
	ix->cap = ix->drain = ix->off = ix->busy = ix->idle = NULL;
}

static int rebuild(struct mxq_power_index *ix, const struct mxq_power_snapshot *snap,
		   const struct mxq_power_config *cfg)
{
	size_t n = snap->n_nodes, words = mx_bitmap_words(n);

	release(ix);
	ix->valid = false;
	ix->nodes = snap->nodes;
	ix->n = n;
	ix->in_order = snap->nodes_in_order;
	ix->exclude = cfg->exclude;
	ix->n_exclude = cfg->n_exclude;
	ix->words = words;
	ix->node = calloc(n ? n : 1, sizeof(*ix->node));
	ix->order = malloc((n ? n : 1) * sizeof(*ix->order));
	ix->pos = malloc((n ? n : 1) * sizeof(*ix->pos));
	ix->trans = calloc(6 * words, sizeof(*ix->trans));  /* the six bitmaps in one block */
	int r = mx_blist_init(&ix->off_since, n);
	if (r == 0)
		r = mx_blist_init(&ix->ends, n);
	if (r == 0)
		r = mx_blist_init(&ix->busy_first, n);
	if (!ix->node || !ix->order || !ix->pos || !ix->trans || r < 0) {
		release(ix);
		return -ENOMEM;
	}
	ix->cap = ix->trans + words;
	ix->drain = ix->cap + words;
	ix->off = ix->drain + words;
	ix->busy = ix->off + words;
	ix->idle = ix->busy + words;
	ix->powered = ix->booting = 0;
	ix->admin_requests = ix->nodes_without_caps = 0;
	memset(ix->off_max, 0, sizeof(ix->off_max));
	memset(ix->off_at_max, 0, sizeof(ix->off_at_max));
	ix->off_no_tmpdir = 0;
	ix->off_max_stale = false;

	for (size_t i = 0; i < n; i++)
		if (!snap->nodes[i].hostname)
			return -EINVAL;
	if (ix->in_order) {
		for (size_t i = 0; i < n; i++)
			ix->order[i] = ix->pos[i] = i;
	} else {
		struct order_key *keys = malloc((n ? n : 1) * sizeof(*keys));
		if (!keys) {
			release(ix);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			keys[i] = (struct order_key) { snap->nodes[i].efficiency_rank,
						       snap->nodes[i].hostname, i };
		qsort(keys, n, sizeof(*keys), cmp_order_key);
		for (size_t k = 0; k < n; k++) {
			ix->order[k] = keys[k].index;
			ix->pos[keys[k].index] = k;
		}
		free(keys);
	}
	for (size_t i = 0; i < n; i++) {
		r = put_in(ix, cfg, i, NULL);
		if (r < 0)
			return r;
	}
	ix->valid = true;
	return 0;
}

int mxq_power_index_sync(struct mxq_power_index *ix, const struct mxq_power_snapshot *snap,
			 const struct mxq_power_config *cfg)
{
	bool full = !ix->valid || ix->all_changed || ix->nodes != snap->nodes ||
		    ix->n != snap->n_nodes || !snap->nodes_in_order || !ix->in_order ||
		    ix->exclude != cfg->exclude || ix->n_exclude != cfg->n_exclude;
	size_t most = full ? snap->n_nodes : ix->n_changed;  /* entries put in */
	int r = 0;

	ix->n_synced = 0;
	if (most > ix->cap_synced) {
		uint32_t *v = realloc(ix->synced, most * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ix->synced = v;
		ix->cap_synced = most;
	}
	if (full) {
		r = rebuild(ix, snap, cfg);
	} else {
		for (size_t c = 0; c < ix->n_changed && r == 0; c++) {
			size_t i = ix->changed[c];
			if (i >= ix->n) {
				r = -EINVAL;
				break;
			}
			struct kept_places kp;
			take_out(ix, i, &kp);
			r = put_in(ix, cfg, i, &kp);
		}
		if (r < 0)
			ix->valid = false;
	}
	ix->n_changed = 0;
	ix->all_changed = false;
	if (r == 0 && ix->off_max_stale)
		off_max_recount(ix);
	return r;
}

void mxq_power_index_done(struct mxq_power_index *ix)
{
	release(ix);
	free(ix->changed);
	free(ix->synced);
	free(ix->work);
	memset(ix, 0, sizeof(*ix));
}

/* --- the public part ------------------------------------------------------ */

struct mxq_power_index *mxq_power_index_new(void)
{
	return calloc(1, sizeof(struct mxq_power_index));
}

void mxq_power_index_free(struct mxq_power_index *ix)
{
	if (!ix)
		return;
	mxq_power_index_done(ix);
	free(ix);
}

int mxq_power_index_changed(struct mxq_power_index *ix, size_t i)
{
	if (!ix)
		return -EINVAL;
	if (ix->all_changed || i > UINT32_MAX)
		return 0;
	if (ix->valid && ix->n_changed >= ix->n) {
		/* as many reports as nodes: a rebuild costs no more */
		ix->all_changed = true;
		return 0;
	}
	if (ix->n_changed == ix->cap_changed) {
		size_t cap = ix->cap_changed ? ix->cap_changed * 2 : 64;
		uint32_t *v = realloc(ix->changed, cap * sizeof(*v));
		if (!v) {
			ix->all_changed = true;  /* nothing is lost: rebuilt at the next sync */
			return 0;
		}
		ix->changed = v;
		ix->cap_changed = cap;
	}
	ix->changed[ix->n_changed++] = (uint32_t)i;
	return 0;
}
