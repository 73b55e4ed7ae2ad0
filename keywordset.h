/*
 * keywordset - a set of words, as used for tags, whitelists and blacklists.
 *
 * Words are split on any whitespace; duplicates collapse; order is not
 * significant. Lookup is O(log n) (sorted array) so evaluating an expression
 * against a host's tag set stays cheap.
 */
#ifndef KEYWORDSET_H
#define KEYWORDSET_H

#include <stdbool.h>
#include <stddef.h>

struct keywordset;

/* New set from a whitespace-separated string (NULL or "" = empty set).
 * NULL with errno=ENOMEM on allocation failure. */
struct keywordset *keywordset_new(const char *words);
/* NULL is fine. */
void keywordset_free(struct keywordset *set);

/* Add every word of WORDS / one word. 0 or -ENOMEM (-EINVAL: NULL set, or a
 * single WORD that is empty or contains whitespace). */
int keywordset_add_words(struct keywordset *set, const char *words);
int keywordset_add(struct keywordset *set, const char *word);
/* Remove one word; 0 whether or not it was present. */
int keywordset_remove(struct keywordset *set, const char *word);

bool keywordset_contains(const struct keywordset *set, const char *word);
/* Same, for a word given as pointer + length (not NUL-terminated). */
bool keywordset_contains_n(const struct keywordset *set, const char *word, size_t len);
size_t keywordset_count(const struct keywordset *set);
bool keywordset_is_empty(const struct keywordset *set);
/* I-th word in sorted order, NULL past the end. */
const char *keywordset_word(const struct keywordset *set, size_t i);

/* Canonical form: sorted words joined by one space; malloc'ed, NULL on ENOMEM. */
char *keywordset_to_string(const struct keywordset *set);

#endif
