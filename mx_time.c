/*
 * mx_time - parsing of time arguments (mx_time.h) and their RFC 3339 form.
 *
 * Every tool that takes a point in time (mxqadmin power events/jobs/usage,
 * ...) calls mx_time_parse(), so "now", "@EPOCH", "1h30m" and zoned dates
 * mean the same everywhere. Pure functions apart from the local time zone;
 * errors are -EINVAL, nothing is logged.
 */
#define _GNU_SOURCE
#include "mx_time.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mx_util.h"

/* Exactly N decimal digits at S into *ret; returns the end or NULL. */
static const char *digits(const char *s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return s + n;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (no time zone). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

static int parse_date(const char *s, double *ret)
{
	int y, mo, d, h = 0, mi = 0, sec = 0, zh, zm, off_s = 0;
	bool zoned = false;
	const char *p = s;

	if (!(p = digits(p, 4, &y)) || *p++ != '-' || !(p = digits(p, 2, &mo)) ||
	    *p++ != '-' || !(p = digits(p, 2, &d)))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return -EINVAL;
	if (*p == ' ' || *p == 'T') {
		p++;
		if (!(p = digits(p, 2, &h)) || *p++ != ':' || !(p = digits(p, 2, &mi)))
			return -EINVAL;
		if (*p == ':' && !(p = digits(p + 1, 2, &sec)))
			return -EINVAL;
		if (h > 23 || mi > 59 || sec > 60)
			return -EINVAL;
	}
	if (*p == ' ')
		p++;
	if (strcmp(p, "Z") == 0 || strcmp(p, "UTC") == 0) {
		zoned = true;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;
		const char *q = digits(p + 1, 2, &zh);
		if (!q)
			return -EINVAL;
		if (*q == ':')
			q++;
		if (!(q = digits(q, 2, &zm)) || *q || zh > 23 || zm > 59)
			return -EINVAL;
		off_s = sign * (zh * 3600 + zm * 60);
		zoned = true;
	} else if (*p) {
		return -EINVAL;
	}
	if (zoned) {
		*ret = (double)(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off_s);
	} else {
		struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
				 .tm_hour = h, .tm_min = mi, .tm_sec = sec, .tm_isdst = -1 };
		time_t t = mktime(&tm);
		if (t == (time_t)-1 && !(y == 1969 && mo == 12 && d == 31))
			return -EINVAL;
		*ret = (double)t;
	}
	return 0;
}

int mx_time_parse(const char *s, double now, double *ret_epoch)
{
	uint64_t secs;
	double v;

	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret_epoch = now;
		return 0;
	}
	if (s[0] == '@') {
		if (mx_strtod(s + 1, &v) < 0 || v < 0)
			return -EINVAL;
		*ret_epoch = v;
		return 0;
	}
	if (strlen(s) >= 10 && s[4] == '-')
		return parse_date(s, ret_epoch);
	{
		const char *d = s[0] == '-' ? s + 1 : s;
		size_t n = strlen(d);
		/* a unit is required: "90" could mean seconds, minutes or an epoch */
		if (n == 0 || (d[n - 1] >= '0' && d[n - 1] <= '9') ||
		    mx_parse_duration_s(d, &secs) < 0)
			return -EINVAL;
		*ret_epoch = now - (double)secs;
	}
	return 0;
}

void mx_time_format_rfc3339(double epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;
	char off[8];
	size_t n;

	if (!buf || !len)
		return;
	if (epoch <= 0 || !localtime_r(&t, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (strftime(off, sizeof(off), "%z", &tm) == 5 && n + 7 <= len)
		snprintf(buf + n, len - n, "%.3s:%s", off, off + 3);
}
