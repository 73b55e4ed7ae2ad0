/*
 * mxq_json - JSON output of every program (mxq_json.h): one dumper, one
 * rounding rule per unit, one time convention. Library code: returns
 * errors, does not log.
 */
#define _GNU_SOURCE
#include "mxq_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_time.h"
#include "mx_util.h"

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
#define DEFAULT_DECIMALS 6

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int mxq_json_decimals(const char *key)
{
	static const struct { const char *suffix; int decimals; } rules[] = {
		{ "_unix", 3 }, { "_s", 3 }, { "_sec", 3 }, { "_seconds", 3 },
		{ "watts", 2 }, { "_w", 2 },
		{ "_j", 1 }, { "_joules", 1 }, { "_mb", 1 },
		{ "_kwh", 4 },
	};

	if (!key)
		return DEFAULT_DECIMALS;
	for (size_t i = 0; i < MX_ARRAY_SIZE(rules); i++)
		if (ends_with(key, rules[i].suffix))
			return rules[i].decimals;
	return DEFAULT_DECIMALS;
}

double mxq_json_round_value(double v, int decimals)
{
	static const double scale[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	double r;

	if (!isfinite(v) || decimals < 0 || decimals > 9)
		return v;
	r = round(v * scale[decimals]) / scale[decimals];
	/* beyond 2^53 the scaled value has no fraction left to round */
	return isfinite(r) ? r : v;
}

/* Round J (a value under KEY) and everything in it, in place. jansson holds
 * no non-finite reals (json_real(NAN) is NULL), so every real is a number. */
static int round_node(json_t *j, const char *key)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_real(j))
		return json_real_set(j, mxq_json_round_value(json_real_value(j),
							     mxq_json_decimals(key))) < 0 ? -ENOMEM : 0;
	if (json_is_object(j)) {
		json_object_foreach(j, k, v)
			if (round_node(v, k) < 0)
				return -ENOMEM;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			if (round_node(v, NULL) < 0)
				return -ENOMEM;
	}
	return 0;
}

int mxq_json_round(json_t *doc)
{
	return round_node(doc, NULL);
}

char *mxq_json_dumps(json_t *doc)
{
	if (!doc || mxq_json_round(doc) < 0)
		return NULL;
	return json_dumps(doc, DUMP_FLAGS | JSON_ENCODE_ANY);
}

int mxq_json_print(json_t *doc)
{
	char *text;
	int r = 0;

	if (!doc)
		return -ENOMEM;
	text = mxq_json_dumps(doc);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	if (fputs(text, stdout) == EOF || putchar('\n') == EOF)
		r = -EIO;
	free(text);
	return r;
}

json_t *mxq_json_text(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

int mxq_json_set_time(json_t *obj, const char *key, double epoch)
{
	char buf[40], unix_key[128];

	snprintf(unix_key, sizeof(unix_key), "%s_unix", key);
	if (epoch <= 0) {
		if (json_object_set_new(obj, key, json_null()) < 0 ||
		    json_object_set_new(obj, unix_key, json_null()) < 0)
			return -ENOMEM;
		return 0;
	}
	mx_time_format_rfc3339(epoch, buf, sizeof(buf));
	if (json_object_set_new(obj, key, json_string(buf)) < 0 ||
	    json_object_set_new(obj, unix_key, json_real(epoch)) < 0)
		return -ENOMEM;
	return 0;
}
