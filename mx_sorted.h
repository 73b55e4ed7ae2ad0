/*
 * mx_sorted - arrays of indices (node indices) kept in (key, index) order,
 * the key read through a callback: the earliest first, ties to the lower
 * index. The caller owns the array (room for every index it may hold) and
 * its count. A key must not change while its index is in the array, except
 * through mx_sorted_fix().
 */
#ifndef MX_SORTED_H
#define MX_SORTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef int64_t (*mx_sorted_key)(const void *ctx, uint32_t i);

/* First place in V[0..n) whose (key, index) is not below (K, I). */
static inline size_t mx_sorted_lower_bound(const uint32_t *v, size_t n, mx_sorted_key key,
					   const void *ctx, int64_t k, uint32_t i)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int64_t km = key(ctx, v[mid]);
		if (km < k || (km == k && v[mid] < i))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where I is in V[0..n) under its key; N if it is not there. */
static inline size_t mx_sorted_find(const uint32_t *v, size_t n, mx_sorted_key key,
				    const void *ctx, uint32_t i)
{
	size_t at = mx_sorted_lower_bound(v, n, key, ctx, key(ctx, i), i);

	return at < n && v[at] == i ? at : n;
}

static inline void mx_sorted_insert(uint32_t *v, size_t *n, mx_sorted_key key, const void *ctx,
				    uint32_t i)
{
	size_t at = mx_sorted_lower_bound(v, *n, key, ctx, key(ctx, i), i);

	memmove(v + at + 1, v + at, (*n - at) * sizeof(*v));
	v[at] = i;
	(*n)++;
}

/* Take out V[at] (at < *n). */
static inline void mx_sorted_remove_at(uint32_t *v, size_t *n, size_t at)
{
	memmove(v + at, v + at + 1, (*n - at - 1) * sizeof(*v));
	(*n)--;
}

/* V[at]'s key has changed: move it to its place with one shift of what lies
 * between (keys that move a little move cheaply). */
static inline void mx_sorted_fix(uint32_t *v, size_t n, mx_sorted_key key, const void *ctx,
				 size_t at)
{
	uint32_t i = v[at];
	int64_t k = key(ctx, i);
	size_t to;

	if (at > 0 && mx_sorted_lower_bound(v + at - 1, 1, key, ctx, k, i) == 0) {
		/* below its left neighbour: its place is in v[0..at) */
		to = mx_sorted_lower_bound(v, at, key, ctx, k, i);
		memmove(v + to + 1, v + to, (at - to) * sizeof(*v));
	} else {
		to = at + mx_sorted_lower_bound(v + at + 1, n - at - 1, key, ctx, k, i);
		memmove(v + at, v + at + 1, (to - at) * sizeof(*v));
	}
	v[to] = i;
}

#endif
