/*
 * fuzz.h - what the libFuzzer targets share: the input as a C string.
 */
#ifndef MXQ_FUZZ_H
#define MXQ_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* DATA as a malloc'ed NUL-terminated string (an embedded NUL ends it
 * early, as it would for the parser); NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
	}
	return text;
}

#endif
