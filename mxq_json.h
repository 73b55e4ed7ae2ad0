/*
 * mxq_json - the one way every program writes JSON (the tools' --json,
 * mxq-power-sim's report, mxq-web's API): jansson documents dumped with one
 * number convention and times as RFC 3339 with the zone plus the epoch.
 *
 * Numbers are rounded to their meaning when written, by the unit suffix of
 * their key (mxq_json_decimals()): watts to 0.01 W, joules to 0.1 J, seconds
 * and epochs to the millisecond, kWh to 0.1 Wh, megabytes to 0.1 MB; any
 * other real to 6 decimals, which drops binary noise such as
 * 560.21000000000004 without touching what a value means. Integers are
 * written as they are. Builders therefore name keys by unit (energy_j,
 * avg_watts, cpu_s, date_start_unix) and never round themselves.
 */
#ifndef MXQ_JSON_H
#define MXQ_JSON_H

#include <jansson.h>

/*
 * Decimals a real under KEY is written with: 3 for *_unix, *_s, *_sec,
 * *_seconds (milliseconds); 2 for *watts, *_w; 1 for *_j, *_joules, *_mb;
 * 4 for *_kwh; 6 otherwise (also for KEY NULL: array elements).
 */
int mxq_json_decimals(const char *key);

/* V rounded to DECIMALS (0..9) places; non-finite values unchanged. */
double mxq_json_round_value(double v, int decimals);

/*
 * Round every real in DOC in place: an object member by its key, an array
 * element by the default rule (mxq_json_decimals(NULL)). Returns 0 or
 * -ENOMEM.
 */
int mxq_json_round(json_t *doc);

/*
 * DOC rounded (mxq_json_round()) and dumped indented, keys in insertion
 * order, reals with 15 significant digits; a malloc()ed string without a
 * final newline, or NULL when out of memory. DOC stays the caller's.
 */
char *mxq_json_dumps(json_t *doc);

/*
 * Write DOC to stdout as mxq_json_dumps() does, and a final newline.
 * Takes ownership of DOC (NULL: -ENOMEM, as when a builder ran out of
 * memory). Returns 0 or negative errno; never logs.
 */
int mxq_json_print(json_t *doc);

/* S as a JSON string, or null when S is NULL or empty (not set). */
json_t *mxq_json_text(const char *s);

/*
 * Set KEY to EPOCH as RFC 3339 with the local zone ("2026-12-01T10:30:00+01:00")
 * and KEY_unix to the epoch number; both null when EPOCH <= 0 (unknown).
 * Returns 0 or -ENOMEM.
 */
int mxq_json_set_time(json_t *obj, const char *key, double epoch);

#endif
