/*
 * mx_blist - blocks of a sorted set (see mx_blist.h for why and the bound
 * on the blocks).
 *
 * The bound holds because any two neighbouring blocks hold more than
 * HALF = MX_BLIST_BLOCK / 2 entries together: a split leaves two blocks of
 * HALF and HALF + 1; after a removal a block that is empty goes, and one
 * that holds at most HALF together with a neighbour is merged into it
 * (once is enough: the pair on the other side held more than HALF before
 * the removal and has the neighbour's entries now). k blocks hold
 * floor(k / 2) disjoint pairs of more than HALF entries each.
 */
#include "mx_blist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HALF (MX_BLIST_BLOCK / 2)

static bool less(int64_t ka, uint32_t ia, int64_t kb, uint32_t ib)
{
	return ka < kb || (ka == kb && ia < ib);
}

/* The first of V[0..n) not below (KEY, ID); N when there is none. */
static size_t lower_bound(const struct mx_blist_entry *v, size_t n, int64_t key, uint32_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (less(v[mid].key, v[mid].id, key, id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct mx_blist_block *at(const struct mx_blist *l, size_t b)
{
	return &l->block[l->order[b]];
}

int mx_blist_init(struct mx_blist *l, size_t max)
{
	size_t blocks = 4 * max / MX_BLIST_BLOCK + 2;

	*l = (struct mx_blist) { 0 };
	l->block = malloc(blocks * sizeof(*l->block));
	l->order = malloc(blocks * sizeof(*l->order));
	l->last = malloc(blocks * sizeof(*l->last));
	l->spare = malloc(blocks * sizeof(*l->spare));
	if (!l->block || !l->order || !l->last || !l->spare) {
		mx_blist_free(l);
		return -ENOMEM;
	}
	l->max = max;
	l->n_spare = blocks;
	mx_blist_clear(l);
	return 0;
}

void mx_blist_free(struct mx_blist *l)
{
	free(l->block);
	free(l->order);
	free(l->last);
	free(l->spare);
	*l = (struct mx_blist) { 0 };
}

void mx_blist_clear(struct mx_blist *l)
{
	size_t blocks = l->n_spare + l->n_order;

	for (size_t b = 0; b < blocks; b++)
		l->spare[b] = (uint32_t)(blocks - 1 - b);
	l->n_spare = blocks;
	l->n_order = 0;
	l->n = 0;
}

/* The first block of the order whose last entry is not below (KEY, ID);
 * n_order when there is none (the last entries lie together: a search
 * reads the blocks' records only at the end). */
static size_t block_of(const struct mx_blist *l, int64_t key, uint32_t id)
{
	return lower_bound(l->last, l->n_order, key, id);
}

/* Block B of the order changed its entries: its last entry again. */
static void last_update(struct mx_blist *l, size_t b)
{
	const struct mx_blist_block *bl = at(l, b);

	l->last[b] = bl->e[bl->n - 1];
}

/* The first entry of BL not below (KEY, ID); BL->n when there is none. */
static uint32_t entry_of(const struct mx_blist_block *bl, int64_t key, uint32_t id)
{
	return (uint32_t)lower_bound(bl->e, bl->n, key, id);
}

/* A spare block, in the order at place B. */
static struct mx_blist_block *block_add(struct mx_blist *l, size_t b)
{
	uint32_t nb = l->spare[--l->n_spare];

	memmove(l->order + b + 1, l->order + b, (l->n_order - b) * sizeof(*l->order));
	memmove(l->last + b + 1, l->last + b, (l->n_order - b) * sizeof(*l->last));
	l->order[b] = nb;
	l->n_order++;
	l->block[nb].n = 0;
	return &l->block[nb];
}

static void block_drop(struct mx_blist *l, size_t b)
{
	l->spare[l->n_spare++] = l->order[b];
	memmove(l->order + b, l->order + b + 1, (l->n_order - b - 1) * sizeof(*l->order));
	memmove(l->last + b, l->last + b + 1, (l->n_order - b - 1) * sizeof(*l->last));
	l->n_order--;
}

bool mx_blist_insert(struct mx_blist *l, int64_t key, uint32_t id)
{
	if (l->n >= l->max)
		return false;
	size_t b = block_of(l, key, id);
	if (l->n_order == 0)
		block_add(l, 0);     /* the first */
	else if (b == l->n_order)
		b--;                 /* after every entry: at the end of the last block */
	struct mx_blist_block *bl = at(l, b);
	uint32_t k = entry_of(bl, key, id);
	if (k < bl->n && bl->e[k].key == key && bl->e[k].id == id)
		return false;
	if (bl->n == MX_BLIST_BLOCK) {
		struct mx_blist_block *next = block_add(l, b + 1);
		bl = at(l, b);
		memcpy(next->e, bl->e + HALF, (MX_BLIST_BLOCK - HALF) * sizeof(*bl->e));
		next->n = MX_BLIST_BLOCK - HALF;
		bl->n = HALF;
		last_update(l, b);
		last_update(l, b + 1);
		if (k > HALF) {
			bl = next;
			b++;
			k -= HALF;
		}
	}
	memmove(bl->e + k + 1, bl->e + k, (bl->n - k) * sizeof(*bl->e));
	bl->e[k] = (struct mx_blist_entry) { key, id };
	bl->n++;
	l->n++;
	last_update(l, b);
	return true;
}

/* Block A+1's entries to the end of block A, and A+1 out. */
static void merge_next(struct mx_blist *l, size_t a)
{
	struct mx_blist_block *x = at(l, a), *y = at(l, a + 1);

	memcpy(x->e + x->n, y->e, y->n * sizeof(*y->e));
	x->n += y->n;
	block_drop(l, a + 1);
	last_update(l, a);
}

bool mx_blist_remove(struct mx_blist *l, int64_t key, uint32_t id)
{
	size_t b = block_of(l, key, id);

	if (b == l->n_order)
		return false;
	struct mx_blist_block *bl = at(l, b);
	uint32_t k = entry_of(bl, key, id);
	if (k == bl->n || bl->e[k].key != key || bl->e[k].id != id)
		return false;
	memmove(bl->e + k, bl->e + k + 1, (bl->n - k - 1) * sizeof(*bl->e));
	bl->n--;
	l->n--;
	if (bl->n == 0)
		block_drop(l, b);
	else if (b > 0 && at(l, b - 1)->n + bl->n <= HALF)
		merge_next(l, b - 1);
	else if (b + 1 < l->n_order && bl->n + at(l, b + 1)->n <= HALF)
		merge_next(l, b);
	else
		last_update(l, b);
	return true;
}

void mx_blist_move(struct mx_blist *l, int64_t old_key, int64_t new_key, uint32_t id)
{
	if (old_key == new_key)
		return;
	mx_blist_remove(l, old_key, id);
	mx_blist_insert(l, new_key, id);
}

struct mx_blist_it mx_blist_lower_bound(const struct mx_blist *l, int64_t key, uint32_t id)
{
	struct mx_blist_it it = { l, block_of(l, key, id), 0 };

	if (!mx_blist_end(&it))
		it.k = entry_of(at(l, it.b), key, id);
	return it;
}
