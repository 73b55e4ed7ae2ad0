/*
 * mxq_json - --json output of every tool (mxq_json.h): one dumper, one
 * time convention. Library code: returns errors, does not log.
 */
#define _GNU_SOURCE
#include "mxq_json.h"

#include <errno.h>
#include <stdio.h>

#include "mx_time.h"

int mxq_json_print(json_t *doc)
{
	int r = 0;

	if (!doc)
		return -ENOMEM;
	if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) < 0 ||
	    putchar('\n') == EOF)
		r = -EIO;
	json_decref(doc);
	return r;
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
