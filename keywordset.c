/*
 * keywordset - a set of words (tags, whitelists, blacklists).
 *
 * The set is a sorted array of strdup'ed words with their lengths, ordered
 * bytewise (as strcmp orders them), so a lookup is a binary search and a
 * lookup by pointer + length needs no temporary copy. Words are separated
 * by any isspace() character; adding a word that is present is a no-op.
 *
 * Errors: -ENOMEM when an allocation fails (the set is unchanged), -EINVAL
 * for a NULL set or a "word" that is empty or contains whitespace. Nothing
 * here logs.
 */
#include "keywordset.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct keyword {
	char *word;
	size_t len;
};

struct keywordset {
	struct keyword *words; /* sorted, no duplicates */
	size_t count;
	size_t capacity;
};

static int compare_word(const char *a, size_t alen, const char *b, size_t blen)
{
	int r = memcmp(a, b, alen < blen ? alen : blen);

	if (r != 0)
		return r;
	return (alen > blen) - (alen < blen);
}

/*
 * Index of WORD in the set, or when absent the index where it would be
 * inserted; *found tells which.
 */
static size_t find_word(const struct keywordset *set, const char *word, size_t len, bool *found)
{
	size_t lo = 0, hi = set->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = compare_word(set->words[mid].word, set->words[mid].len, word, len);

		if (r == 0) {
			*found = true;
			return mid;
		}
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static int add_word_n(struct keywordset *set, const char *word, size_t len)
{
	bool found;
	size_t at = find_word(set, word, len, &found);
	char *copy;

	if (found)
		return 0;
	if (set->count == set->capacity) {
		size_t capacity = set->capacity ? set->capacity * 2 : 8;
		struct keyword *words = reallocarray(set->words, capacity, sizeof(*words));

		if (!words)
			return -ENOMEM;
		set->words = words;
		set->capacity = capacity;
	}
	copy = strndup(word, len);
	if (!copy)
		return -ENOMEM;
	memmove(&set->words[at + 1], &set->words[at], (set->count - at) * sizeof(set->words[0]));
	set->words[at] = (struct keyword){ .word = copy, .len = len };
	set->count++;
	return 0;
}

struct keywordset *keywordset_new(const char *words)
{
	struct keywordset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	if (keywordset_add_words(set, words) < 0) {
		keywordset_free(set);
		errno = ENOMEM;
		return NULL;
	}
	return set;
}

void keywordset_free(struct keywordset *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->count; i++)
		free(set->words[i].word);
	free(set->words);
	free(set);
}

int keywordset_add_words(struct keywordset *set, const char *words)
{
	const char *p = words;

	if (!set)
		return -EINVAL;
	if (!p)
		return 0;
	for (;;) {
		const char *start;
		int r;

		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			return 0;
		start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		r = add_word_n(set, start, (size_t)(p - start));
		if (r < 0)
			return r;
	}
}

int keywordset_add(struct keywordset *set, const char *word)
{
	if (!set || !word || !*word)
		return -EINVAL;
	for (const char *p = word; *p; p++)
		if (isspace((unsigned char)*p))
			return -EINVAL;
	return add_word_n(set, word, strlen(word));
}

int keywordset_remove(struct keywordset *set, const char *word)
{
	bool found;
	size_t at;

	if (!set || !word)
		return 0;
	at = find_word(set, word, strlen(word), &found);
	if (!found)
		return 0;
	free(set->words[at].word);
	set->count--;
	memmove(&set->words[at], &set->words[at + 1], (set->count - at) * sizeof(set->words[0]));
	return 0;
}

bool keywordset_contains(const struct keywordset *set, const char *word)
{
	/* an empty set first: the qualification of every node asks it for
	 * empty white- and blacklists, and the word's length is not needed */
	if (!word || !set || set->count == 0)
		return false;
	return keywordset_contains_n(set, word, strlen(word));
}

bool keywordset_contains_n(const struct keywordset *set, const char *word, size_t len)
{
	bool found = false;

	if (!set || !word || set->count == 0)
		return false;
	find_word(set, word, len, &found);
	return found;
}

size_t keywordset_count(const struct keywordset *set)
{
	return set ? set->count : 0;
}

bool keywordset_is_empty(const struct keywordset *set)
{
	return keywordset_count(set) == 0;
}

const char *keywordset_word(const struct keywordset *set, size_t i)
{
	if (!set || i >= set->count)
		return NULL;
	return set->words[i].word;
}

char *keywordset_to_string(const struct keywordset *set)
{
	size_t total = 1, count = keywordset_count(set);
	char *out, *p;

	for (size_t i = 0; i < count; i++)
		total += set->words[i].len + 1;
	out = malloc(total);
	if (!out)
		return NULL;
	p = out;
	for (size_t i = 0; i < count; i++) {
		if (i > 0)
			*p++ = ' ';
		memcpy(p, set->words[i].word, set->words[i].len);
		p += set->words[i].len;
	}
	*p = '\0';
	return out;
}
