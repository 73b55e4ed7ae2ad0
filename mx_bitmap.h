/*
 * mx_bitmap - sets of small integers (node indices, positions) as arrays of
 * 64-bit words, walked in increasing order. The caller allocates
 * (n + 63) / 64 words, zeroed, for a set of 0..n-1.
 */
#ifndef MX_BITMAP_H
#define MX_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Words for a set of 0..n-1 (at least one). */
static inline size_t mx_bitmap_words(size_t n)
{
	return n ? (n + 63) / 64 : 1;
}

static inline void mx_bitmap_set(uint64_t *set, size_t k)
{
	set[k / 64] |= UINT64_C(1) << (k % 64);
}

static inline void mx_bitmap_clear(uint64_t *set, size_t k)
{
	set[k / 64] &= ~(UINT64_C(1) << (k % 64));
}

/* Set or clear K as ON says. */
static inline void mx_bitmap_put(uint64_t *set, size_t k, bool on)
{
	if (on)
		mx_bitmap_set(set, k);
	else
		mx_bitmap_clear(set, k);
}

static inline bool mx_bitmap_has(const uint64_t *set, size_t k)
{
	return (set[k / 64] >> (k % 64)) & 1;
}

/* The first member at or after K of the union of A, B and C (they may be
 * the same set); N when there is none. */
static inline size_t mx_bitmap_next3(const uint64_t *a, const uint64_t *b, const uint64_t *c,
				     size_t n, size_t k)
{
	if (k >= n)
		return n;
	size_t w = k / 64;
	uint64_t bits = (a[w] | b[w] | c[w]) & (~UINT64_C(0) << (k % 64));
	while (!bits) {
		if (++w * 64 >= n)
			return n;
		bits = a[w] | b[w] | c[w];
	}
	k = w * 64 + (size_t)__builtin_ctzll(bits);
	return k < n ? k : n;
}

static inline size_t mx_bitmap_next2(const uint64_t *a, const uint64_t *b, size_t n, size_t k)
{
	return mx_bitmap_next3(a, b, b, n, k);
}

/* The first member at or after K of A that is not in B; N when there is
 * none. */
static inline size_t mx_bitmap_next_without(const uint64_t *a, const uint64_t *b, size_t n,
					    size_t k)
{
	if (k >= n)
		return n;
	size_t w = k / 64;
	uint64_t bits = a[w] & ~b[w] & (~UINT64_C(0) << (k % 64));
	while (!bits) {
		if (++w * 64 >= n)
			return n;
		bits = a[w] & ~b[w];
	}
	k = w * 64 + (size_t)__builtin_ctzll(bits);
	return k < n ? k : n;
}

/* The first member of SET at or after K; N when there is none. */
static inline size_t mx_bitmap_next(const uint64_t *set, size_t n, size_t k)
{
	return mx_bitmap_next2(set, set, n, k);
}

#endif
