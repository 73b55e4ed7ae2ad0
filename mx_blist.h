/*
 * mx_blist - a sorted set of (key, id) pairs kept in blocks: the earliest
 * key first, ties to the lower id. An insert or a removal moves the entries
 * of one block (and, when a block splits or two merge, the short list of
 * blocks) where one sorted array moves up to all of them, and the keys lie
 * next to their ids, so a search reads a few cache lines: the simulator and
 * the power index keep thousands of nodes sorted by a time that changes at
 * every job start and end.
 *
 * A block holds up to MX_BLIST_BLOCK entries and any two neighbours more
 * than half a block together, so MAX entries never need more than
 * 4 MAX / MX_BLIST_BLOCK + 2 blocks: mx_blist_init() allocates them all,
 * and nothing after it allocates or fails.
 */
#ifndef MX_BLIST_H
#define MX_BLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MX_BLIST_BLOCK 64

struct mx_blist_entry {
	int64_t key;
	uint32_t id;
};

struct mx_blist_block {
	uint32_t n;
	struct mx_blist_entry e[MX_BLIST_BLOCK];
};

struct mx_blist {
	struct mx_blist_block *block;  /* the pool */
	uint32_t *order;               /* the blocks in use, in key order */
	struct mx_blist_entry *last;   /* their last entries, in that order */
	uint32_t *spare;               /* the blocks not in use */
	size_t n_order, n_spare;
	size_t n;                      /* entries */
	size_t max;                    /* entries at most */
};

/* A place in the list: block B of the order, entry K of it. */
struct mx_blist_it {
	const struct mx_blist *l;
	size_t b;
	uint32_t k;
};

/* Room for MAX entries; 0 or -ENOMEM. mx_blist_free() releases it. */
int mx_blist_init(struct mx_blist *l, size_t max);
void mx_blist_free(struct mx_blist *l);
void mx_blist_clear(struct mx_blist *l);

/* (KEY, ID) into L; false when it is there already or L holds its MAX. */
bool mx_blist_insert(struct mx_blist *l, int64_t key, uint32_t id);
/* (KEY, ID) out of L; false when it was not there. */
bool mx_blist_remove(struct mx_blist *l, int64_t key, uint32_t id);
/* ID's key goes from OLD to NEW: out and back in. */
void mx_blist_move(struct mx_blist *l, int64_t old_key, int64_t new_key, uint32_t id);

/* The first entry not below (KEY, ID); mx_blist_end() when there is none. */
struct mx_blist_it mx_blist_lower_bound(const struct mx_blist *l, int64_t key, uint32_t id);

static inline size_t mx_blist_count(const struct mx_blist *l)
{
	return l->n;
}

static inline struct mx_blist_it mx_blist_begin(const struct mx_blist *l)
{
	return (struct mx_blist_it) { l, 0, 0 };
}

static inline bool mx_blist_end(const struct mx_blist_it *it)
{
	return it->b >= it->l->n_order;
}

/* The entry at IT (not at the end). */
static inline const struct mx_blist_entry *mx_blist_get(const struct mx_blist_it *it)
{
	return &it->l->block[it->l->order[it->b]].e[it->k];
}

static inline void mx_blist_next(struct mx_blist_it *it)
{
	if (++it->k == it->l->block[it->l->order[it->b]].n) {
		it->b++;
		it->k = 0;
	}
}

#endif
