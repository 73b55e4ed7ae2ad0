/*
 * fuzz_web - libFuzzer target for what mxq-web does with a request target
 * before anything else: mx_url_parse(), then the escaper.
 *
 * For every input (as a NUL-terminated string): parse it; on success every
 * segment, key and value must be free of control characters, no segment
 * may hold '/' or be "." or "..", encoding each segment again
 * (mx_url_encode) and parsing the rebuilt path must give the same
 * segments; every decoded string, HTML-escaped, must contain no '<', '>',
 * '"' or '\''. On failure there must be a reason. Any disagreement aborts.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_html.h"
#include "mx_url.h"
#include "fuzz.h"

static void check_text(const char *s, bool is_segment)
{
	struct mx_buf b;
	size_t len;
	char *e;

	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || (is_segment && *p == '/'))
			abort();
	if (is_segment && (!strcmp(s, ".") || !strcmp(s, "..")))
		abort();
	mx_buf_init(&b, 0);
	mx_html_text(&b, s);
	e = mx_buf_take(&b, &len);
	if (!e || strpbrk(e, "<>\"'") || strlen(e) != len)
		abort();
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mx_url u, again;
	struct mx_buf b;
	char *text, err[160] = "", *path;
	size_t len;

	if (size > MX_URL_MAX + 64)
		return 0;
	text = fuzz_text(data, size);
	if (!text)
		return 0;
	if (mx_url_parse(text, &u, err, sizeof(err)) < 0) {
		if (!*err)
			abort();
		free(text);
		return 0;
	}
	for (size_t i = 0; i < u.n_segs; i++)
		check_text(u.segs[i], true);
	for (size_t i = 0; i < u.n_params; i++) {
		check_text(u.keys[i], false);
		check_text(u.values[i], false);
		if (mx_url_param(&u, u.keys[i]) != u.values[i])
			abort();
	}
	mx_buf_init(&b, 0);
	mx_buf_puts(&b, "/");
	for (size_t i = 0; i < u.n_segs; i++) {
		mx_url_encode(&b, u.segs[i]);
		if (i + 1 < u.n_segs)
			mx_buf_puts(&b, "/");
	}
	path = mx_buf_take(&b, &len);
	if (!path)
		abort();
	if (len <= MX_URL_MAX) {
		if (mx_url_parse(path, &again, err, sizeof(err)) < 0 || again.n_segs != u.n_segs)
			abort();
		for (size_t i = 0; i < u.n_segs; i++)
			if (strcmp(again.segs[i], u.segs[i]))
				abort();
	}
	free(path);
	free(text);
	return 0;
}
