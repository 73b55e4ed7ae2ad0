/*
 * test_keywordset - unit tests for keywordset.c: splitting, ordering,
 * duplicates, lookup by pointer + length, add/remove and the canonical string.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keywordset.h"

/* The canonical string of SET, compared and freed. */
static void assert_set_string(const struct keywordset *set, const char *expected)
{
	char *s = keywordset_to_string(set);

	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, expected);
	free(s);
}

START_TEST(test_empty_inputs)
{
	const char *inputs[] = { NULL, "", " ", "\t\n\r\v\f  " };

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct keywordset *set = keywordset_new(inputs[i]);

		ck_assert_ptr_nonnull(set);
		ck_assert(keywordset_is_empty(set));
		ck_assert_uint_eq(keywordset_count(set), 0);
		ck_assert_ptr_null(keywordset_word(set, 0));
		ck_assert(!keywordset_contains(set, ""));
		ck_assert(!keywordset_contains(set, " "));
		assert_set_string(set, "");
		keywordset_free(set);
	}
}
END_TEST

START_TEST(test_split_on_any_whitespace)
{
	struct keywordset *set = keywordset_new("g\tf\ne\rd\vc\fb a  \t\n h");

	ck_assert_uint_eq(keywordset_count(set), 8);
	assert_set_string(set, "a b c d e f g h");
	ck_assert(keywordset_contains(set, "d"));
	ck_assert(!keywordset_contains(set, "d\r"));
	keywordset_free(set);
}
END_TEST

START_TEST(test_duplicates_collapse)
{
	struct keywordset *set = keywordset_new("x y x  y z x");

	ck_assert_uint_eq(keywordset_count(set), 3);
	assert_set_string(set, "x y z");
	ck_assert_int_eq(keywordset_add(set, "y"), 0);
	ck_assert_int_eq(keywordset_add_words(set, "z x w"), 0);
	ck_assert_uint_eq(keywordset_count(set), 4);
	assert_set_string(set, "w x y z");
	keywordset_free(set);
}
END_TEST

START_TEST(test_bytewise_order)
{
	/* ASCII: '-' < '.' < digits < upper case < '_' < lower case */
	struct keywordset *set = keywordset_new("b B a A 1 _ node-1 node.1 node1 node");

	assert_set_string(set, "1 A B _ a b node node-1 node.1 node1");
	ck_assert_str_eq(keywordset_word(set, 0), "1");
	ck_assert_str_eq(keywordset_word(set, 9), "node1");
	ck_assert_ptr_null(keywordset_word(set, 10));
	keywordset_free(set);
}
END_TEST

START_TEST(test_contains_exact_words_only)
{
	struct keywordset *set = keywordset_new("node node-1.example.org gpu café x86_64");

	ck_assert(keywordset_contains(set, "node"));
	ck_assert(keywordset_contains(set, "node-1.example.org"));
	ck_assert(keywordset_contains(set, "café"));
	ck_assert(keywordset_contains(set, "x86_64"));
	ck_assert(!keywordset_contains(set, "nod"));
	ck_assert(!keywordset_contains(set, "nodes"));
	ck_assert(!keywordset_contains(set, "node-1"));
	ck_assert(!keywordset_contains(set, "GPU"));
	ck_assert(!keywordset_contains(set, ""));
	ck_assert(!keywordset_contains(set, NULL));
	keywordset_free(set);
}
END_TEST

START_TEST(test_contains_n)
{
	const char *text = "node-1.example.org";
	struct keywordset *set = keywordset_new("node node-1 org");

	ck_assert(keywordset_contains_n(set, text, 4));        /* "node" */
	ck_assert(!keywordset_contains_n(set, text, 5));       /* "node-" */
	ck_assert(keywordset_contains_n(set, text, 6));        /* "node-1" */
	ck_assert(!keywordset_contains_n(set, text, 7));       /* "node-1." */
	ck_assert(keywordset_contains_n(set, text + 15, 3));   /* "org" */
	ck_assert(!keywordset_contains_n(set, text + 15, 2));  /* "or" */
	ck_assert(!keywordset_contains_n(set, text, 0));
	/* an embedded NUL is never part of a word */
	ck_assert(!keywordset_contains_n(set, "node\0x", 6));
	keywordset_free(set);
}
END_TEST

START_TEST(test_add_rejects_non_words)
{
	struct keywordset *set = keywordset_new("a");

	ck_assert_int_eq(keywordset_add(set, ""), -EINVAL);
	ck_assert_int_eq(keywordset_add(set, "b c"), -EINVAL);
	ck_assert_int_eq(keywordset_add(set, "b\t"), -EINVAL);
	ck_assert_int_eq(keywordset_add(set, NULL), -EINVAL);
	ck_assert_int_eq(keywordset_add(NULL, "b"), -EINVAL);
	ck_assert_int_eq(keywordset_add_words(NULL, "b"), -EINVAL);
	ck_assert_int_eq(keywordset_add_words(set, NULL), 0);
	assert_set_string(set, "a");
	ck_assert_int_eq(keywordset_add(set, "b"), 0);
	assert_set_string(set, "a b");
	keywordset_free(set);
}
END_TEST

START_TEST(test_remove)
{
	struct keywordset *set = keywordset_new("a b c d e");

	ck_assert_int_eq(keywordset_remove(set, "c"), 0);
	assert_set_string(set, "a b d e");
	ck_assert_int_eq(keywordset_remove(set, "a"), 0);
	ck_assert_int_eq(keywordset_remove(set, "e"), 0);
	assert_set_string(set, "b d");
	ck_assert_int_eq(keywordset_remove(set, "zz"), 0);
	ck_assert_int_eq(keywordset_remove(set, "b"), 0);
	ck_assert_int_eq(keywordset_remove(set, "b"), 0);
	ck_assert(!keywordset_contains(set, "b"));
	ck_assert(keywordset_contains(set, "d"));
	ck_assert_int_eq(keywordset_remove(set, "d"), 0);
	ck_assert(keywordset_is_empty(set));
	ck_assert_int_eq(keywordset_add(set, "again"), 0);
	assert_set_string(set, "again");
	ck_assert_int_eq(keywordset_remove(NULL, "x"), 0);
	keywordset_free(set);
}
END_TEST

START_TEST(test_null_is_empty)
{
	keywordset_free(NULL);
	ck_assert_uint_eq(keywordset_count(NULL), 0);
	ck_assert(keywordset_is_empty(NULL));
	ck_assert(!keywordset_contains(NULL, "a"));
	ck_assert(!keywordset_contains_n(NULL, "a", 1));
	ck_assert_ptr_null(keywordset_word(NULL, 0));
	assert_set_string(NULL, "");
}
END_TEST

/* Many words in scrambled order: the array must stay sorted and complete. */
START_TEST(test_many_words)
{
	enum { N = 2000 };
	struct keywordset *set = keywordset_new(NULL);
	char word[32];

	/* 7919 is prime, so i * 7919 mod N visits every value once */
	for (unsigned i = 0; i < N; i++) {
		snprintf(word, sizeof(word), "w%05u", (i * 7919u) % N);
		ck_assert_int_eq(keywordset_add(set, word), 0);
	}
	ck_assert_uint_eq(keywordset_count(set), N);
	for (unsigned i = 0; i < N; i++) {
		snprintf(word, sizeof(word), "w%05u", i);
		ck_assert_str_eq(keywordset_word(set, i), word);
		ck_assert(keywordset_contains(set, word));
		snprintf(word, sizeof(word), "w%05ux", i);
		ck_assert(!keywordset_contains(set, word));
	}
	for (unsigned i = 0; i < N; i += 2) {
		snprintf(word, sizeof(word), "w%05u", i);
		keywordset_remove(set, word);
	}
	ck_assert_uint_eq(keywordset_count(set), N / 2);
	for (unsigned i = 0; i < N; i++) {
		snprintf(word, sizeof(word), "w%05u", i);
		ck_assert(keywordset_contains(set, word) == (i % 2 == 1));
	}
	keywordset_free(set);
}
END_TEST

START_TEST(test_string_round_trip)
{
	struct keywordset *a = keywordset_new("  zeta alpha\tgamma alpha beta\n");
	char *s = keywordset_to_string(a);
	struct keywordset *b = keywordset_new(s);
	char *t = keywordset_to_string(b);

	ck_assert_str_eq(s, "alpha beta gamma zeta");
	ck_assert_str_eq(s, t);
	ck_assert_uint_eq(keywordset_count(a), keywordset_count(b));
	free(s);
	free(t);
	keywordset_free(a);
	keywordset_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keywordset");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_empty_inputs);
	tcase_add_test(tc, test_split_on_any_whitespace);
	tcase_add_test(tc, test_duplicates_collapse);
	tcase_add_test(tc, test_bytewise_order);
	tcase_add_test(tc, test_contains_exact_words_only);
	tcase_add_test(tc, test_contains_n);
	tcase_add_test(tc, test_add_rejects_non_words);
	tcase_add_test(tc, test_remove);
	tcase_add_test(tc, test_null_is_empty);
	tcase_add_test(tc, test_many_words);
	tcase_add_test(tc, test_string_round_trip);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
