/*
 * test_web - unit tests of the pieces mxq-web is built on, no database:
 * the HTML escaper and output buffer (mx_html), request target and Host
 * header parsing and encoding (mx_url), the request deadlines
 * (mx_sockguard: its decision as a table, its thread on socket pairs) and
 * the chart scaling and SVG (mxq_chart).
 */
#include <check.h>
#include <float.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mx_html.h"
#include "mx_sockguard.h"
#include "mx_url.h"
#include "mx_util.h"
#include "mxq_chart.h"

/* ------------------------------------------------------------------ */
/* escaper                                                             */

static const struct {
	const char *in, *out;
} escape_cases[] = {
	{ "", "" },
	{ "plain text 123", "plain text 123" },
	{ "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;" },
	{ "a & b", "a &amp; b" },
	{ "\"quoted\" 'single'", "&quot;quoted&quot; &#39;single&#39;" },
	{ "&amp;", "&amp;amp;" },                       /* never "already escaped" */
	{ "x\" onmouseover=\"y", "x&quot; onmouseover=&quot;y" },
	{ "tab\tnew\nline", "tab\tnew\nline" },
	{ "bell\a esc\x1b[31m del\x7f", "bell\xef\xbf\xbd esc\xef\xbf\xbd[31m del\xef\xbf\xbd" },
	{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" }, /* UTF-8 passes */
	{ "<<>>", "&lt;&lt;&gt;&gt;" },
};

START_TEST(test_escape)
{
	struct mx_buf b;
	size_t len;
	char *s;

	mx_buf_init(&b, 0);
	mx_html_text(&b, escape_cases[_i].in);
	s = mx_buf_take(&b, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, escape_cases[_i].out);
	ck_assert_uint_eq(len, strlen(escape_cases[_i].out));
	free(s);
}
END_TEST

START_TEST(test_escape_null_and_buffer)
{
	struct mx_buf b;
	size_t len;
	char *s;

	mx_buf_init(&b, 0);
	mx_html_text(&b, NULL);
	s = mx_buf_take(&b, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);

	/* growth past the first block */
	mx_buf_init(&b, 0);
	for (int i = 0; i < 10000; i++)
		mx_buf_printf(&b, "%d,", i % 10);
	s = mx_buf_take(&b, &len);
	ck_assert_uint_eq(len, 20000);
	ck_assert(!strncmp(s, "0,1,2,", 6));
	free(s);

	/* over the limit: failed, take gives NULL, the buffer is usable again */
	mx_buf_init(&b, 16);
	mx_buf_puts(&b, "0123456789");
	mx_buf_puts(&b, "0123456789");
	ck_assert(b.failed);
	mx_buf_puts(&b, "x");
	ck_assert_ptr_null(mx_buf_take(&b, &len));
	ck_assert(!b.failed);
	mx_buf_puts(&b, "ok");
	s = mx_buf_take(&b, &len);
	ck_assert_str_eq(s, "ok");
	free(s);
	mx_buf_free(NULL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* request targets                                                     */

static const struct {
	const char *raw;
	int ret;
	const char *segs;    /* segments joined by '|' */
	const char *params;  /* key=value pairs joined by '|' */
} url_cases[] = {
	{ "/", 0, "", "" },
	{ "/node/n1", 0, "node|n1", "" },
	{ "/node/n1/", 0, "node|n1", "" },
	{ "/api/jobs/42?x=1", 0, "api|jobs|42", "x=1" },
	{ "/?window=6h&page=2", 0, "", "window=6h|page=2" },
	{ "/energy?by=user&window=7d", 0, "energy", "by=user|window=7d" },
	{ "/node/a%20b", 0, "node|a b", "" },
	{ "/node/%3Cscript%3E", 0, "node|<script>", "" },
	{ "/x?q=a+b%2Bc", 0, "x", "q=a b+c" },
	{ "/x?flag", 0, "x", "flag=" },
	{ "/x?empty=", 0, "x", "empty=" },
	{ "/x?", 0, "x", "" },
	{ "", -EINVAL, NULL, NULL },
	{ "node", -EINVAL, NULL, NULL },
	{ "http://host/", -EINVAL, NULL, NULL },
	{ "//node", -EINVAL, NULL, NULL },
	{ "/node//n1", -EINVAL, NULL, NULL },
	{ "/node/..", -EINVAL, NULL, NULL },
	{ "/node/.", -EINVAL, NULL, NULL },
	{ "/node/%2e%2e", -EINVAL, NULL, NULL },
	{ "/node/a%2Fb", -EINVAL, NULL, NULL },   /* no slash smuggled into a segment */
	{ "/node/%00", -EINVAL, NULL, NULL },
	{ "/node/%0a", -EINVAL, NULL, NULL },
	{ "/node/%zz", -EINVAL, NULL, NULL },
	{ "/node/%4", -EINVAL, NULL, NULL },
	{ "/node/a b", -EINVAL, NULL, NULL },
	{ "/node/\x7f", -EINVAL, NULL, NULL },
	{ "/node/\xc3\xa9", -EINVAL, NULL, NULL }, /* raw non-ASCII: must be escaped */
	{ "/x#frag", -EINVAL, NULL, NULL },
	{ "/a/b/c/d/e/f/g/h/i", -EINVAL, NULL, NULL },
	{ "/a/b/c/d/e/f/g/h", 0, "a|b|c|d|e|f|g|h", "" },
	{ "/x?Page=1", -EINVAL, NULL, NULL },
	{ "/x?=1", -EINVAL, NULL, NULL },
	{ "/x?a=1&a=2", -EINVAL, NULL, NULL },
	{ "/x?a=1&", -EINVAL, NULL, NULL },
	{ "/x?a=1&&b=2", -EINVAL, NULL, NULL },
	{ "/x?a=%0d%0a", -EINVAL, NULL, NULL },
	{ "/x?a=%G1", -EINVAL, NULL, NULL },
	{ "/x?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16", 0,
	  "x", "a=1|b=2|c=3|d=4|e=5|f=6|g=7|h=8|i=9|j=10|k=11|l=12|m=13|n=14|o=15|p=16" },
	{ "/x?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&o=15&p=16&q=17",
	  -EINVAL, NULL, NULL },
};

START_TEST(test_url_parse)
{
	struct mx_url u;
	char err[128] = "", joined[2048];
	int r = mx_url_parse(url_cases[_i].raw, &u, err, sizeof(err));

	ck_assert_msg(r == url_cases[_i].ret, "'%s': got %d (%s), want %d", url_cases[_i].raw, r,
		      err, url_cases[_i].ret);
	if (r < 0) {
		ck_assert_msg(*err, "'%s': no reason given", url_cases[_i].raw);
		return;
	}
	joined[0] = '\0';
	for (size_t i = 0; i < u.n_segs; i++) {
		strcat(joined, i ? "|" : "");
		strcat(joined, u.segs[i]);
	}
	ck_assert_str_eq(joined, url_cases[_i].segs);
	joined[0] = '\0';
	for (size_t i = 0; i < u.n_params; i++) {
		strcat(joined, i ? "|" : "");
		strcat(joined, u.keys[i]);
		strcat(joined, "=");
		strcat(joined, u.values[i]);
		ck_assert_ptr_eq(mx_url_param(&u, u.keys[i]), u.values[i]);
	}
	ck_assert_str_eq(joined, url_cases[_i].params);
	ck_assert_ptr_null(mx_url_param(&u, "not_there"));
}
END_TEST

START_TEST(test_url_limits)
{
	char raw[MX_URL_MAX + 2], err[128];
	struct mx_url u;

	raw[0] = '/';
	memset(raw + 1, 'a', MX_URL_MAX - 1);
	raw[MX_URL_MAX] = '\0';
	ck_assert_int_eq(mx_url_parse(raw, &u, err, sizeof(err)), 0);
	ck_assert_uint_eq(strlen(u.segs[0]), MX_URL_MAX - 1);
	raw[MX_URL_MAX] = 'a';
	raw[MX_URL_MAX + 1] = '\0';
	ck_assert_int_eq(mx_url_parse(raw, &u, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(mx_url_parse(NULL, &u, NULL, 0), -EINVAL);
	/* worst case for the decoded store: every byte a one-character segment */
	for (int i = 0; i < 16; i++)
		raw[i] = i % 2 ? 'a' : '/';
	raw[16] = '\0';
	ck_assert_int_eq(mx_url_parse(raw, &u, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_url_encode_roundtrip)
{
	static const char *const names[] = {
		"n1", "node-1.example.org", "a b", "<script>&\"'", "caf\xc3\xa9", "x/y", "100%",
	};

	for (size_t k = 0; k < MX_ARRAY_SIZE(names); k++) {
		struct mx_buf b;
		struct mx_url u;
		char err[128], *s;
		size_t len;

		mx_buf_init(&b, 0);
		mx_buf_puts(&b, "/node/");
		mx_url_encode(&b, names[k]);
		s = mx_buf_take(&b, &len);
		ck_assert(!strpbrk(s + 6, "<>&\"' /%") || strchr(s + 6, '%'));
		ck_assert(!strpbrk(s, "<>&\"' "));
		ck_assert_int_eq(mx_url_parse(s, &u, err, sizeof(err)), strcmp(names[k], "x/y") ?
				 0 : -EINVAL);
		if (strcmp(names[k], "x/y"))
			ck_assert_str_eq(u.segs[1], names[k]);
		free(s);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* chart scaling                                                       */

static const struct {
	double min, max;
	unsigned ticks;
	double lo, hi, step;
} axis_cases[] = {
	{ 0, 100, 5, 0, 100, 20 },
	{ 0, 97, 5, 0, 100, 20 },
	{ 0, 1234, 5, 0, 1250, 250 },
	{ 3, 7, 5, 3, 7, 1 },
	{ 0, 1, 5, 0, 1, 0.2 },
	{ 0, 0.03, 4, 0, 0.03, 0.01 },
	{ -5, 5, 5, -5, 5, 2.5 },
	{ -7, -7, 5, -12.5, 0, 2.5 },       /* flat negative */
	{ 0, 0, 5, 0, 1, 0.2 },              /* flat zero: a unit range */
	{ 50, 50, 5, 0, 80, 20 },            /* flat value: around it, from zero */
	{ 100, 0, 5, 0, 100, 20 },           /* swapped */
	{ 0, 2, 5, 0, 2, 0.5 },
	{ 0, 1e6, 5, 0, 1e6, 2e5 },
	{ NAN, 3, 5, 0, 1, 0.2 },
	{ 0, INFINITY, 5, 0, 1, 0.2 },
};

START_TEST(test_nice_axis)
{
	struct mxq_chart_axis a;

	ck_assert_int_eq(mxq_chart_nice_axis(axis_cases[_i].min, axis_cases[_i].max,
					     axis_cases[_i].ticks, &a), 0);
	ck_assert_msg(fabs(a.lo - axis_cases[_i].lo) < 1e-9 && fabs(a.hi - axis_cases[_i].hi) < 1e-9 &&
		      fabs(a.step - axis_cases[_i].step) < 1e-9,
		      "[%g, %g]/%u: got [%g, %g] step %g, want [%g, %g] step %g",
		      axis_cases[_i].min, axis_cases[_i].max, axis_cases[_i].ticks, a.lo, a.hi, a.step,
		      axis_cases[_i].lo, axis_cases[_i].hi, axis_cases[_i].step);
	/* invariants: covers the input, at most TICKS intervals */
	if (isfinite(axis_cases[_i].min) && isfinite(axis_cases[_i].max)) {
		ck_assert(a.lo <= fmin(axis_cases[_i].min, axis_cases[_i].max) + 1e-9);
		ck_assert(a.hi >= fmax(axis_cases[_i].min, axis_cases[_i].max) - 1e-9);
	}
	ck_assert((a.hi - a.lo) / a.step <= axis_cases[_i].ticks + 1e-9);
}
END_TEST

/* A value near DBL_MAX (a broken power reading stored as a sample): the
 * rounded axis end must not overflow to infinity, or the chart's tick loop
 * never ends (a worker thread spinning for good). */
START_TEST(test_nice_axis_huge)
{
	static const double big[] = { 1.7e308, DBL_MAX, -DBL_MAX, 1e300 };
	struct mxq_chart_axis a;

	for (size_t i = 0; i < MX_ARRAY_SIZE(big); i++) {
		ck_assert_int_eq(mxq_chart_nice_axis(0, big[i], 5, &a), 0);
		ck_assert_msg(isfinite(a.lo) && isfinite(a.hi) && isfinite(a.hi + a.step) &&
			      a.step > 0 && (a.hi - a.lo) / a.step <= 5 + 1e-9,
			      "[0, %g]: got [%g, %g] step %g", big[i], a.lo, a.hi, a.step);
	}
}
END_TEST

START_TEST(test_chart_svg_huge)
{
	static const double t[] = { 0, 1800, 3600 }, v[] = { 10, 1.7e308, 30 };
	struct mxq_chart c = { .id = "c1", .title = "w", .unit = "W", .t0 = 0, .t1 = 3600,
			       .width = 400, .height = 200 };
	struct mxq_chart_series s = { .label = "x", .t = t, .v = v, .n = 3 };
	struct mx_buf b;
	size_t len;
	char *out;

	mx_buf_init(&b, 1 << 20);
	mxq_chart_svg(&b, &c, &s, 1);   /* used to loop for ever */
	out = mx_buf_take(&b, &len);
	ck_assert_ptr_nonnull(out);
	ck_assert(!strcmp(out + len - 6, "</svg>"));
	free(out);
}
END_TEST

static const struct {
	double t0, t1;
	unsigned ticks;
	double step, lo;
} time_cases[] = {
	{ 0, 3600, 8, 600, 0 },               /* 1 h: 10 min */
	{ 100, 3700, 8, 600, 600 },           /* the first tick on a multiple */
	{ 0, 6 * 3600, 8, 3600, 0 },          /* 6 h: hourly */
	{ 0, 86400, 8, 10800, 0 },            /* 1 d: 3 h */
	{ 0, 7 * 86400, 8, 86400, 0 },        /* 7 d: daily */
	{ 0, 30 * 86400, 8, 7 * 86400, 0 },   /* 30 d: weekly */
	{ 0, 300, 8, 60, 0 },
	{ 0, 200 * 86400, 8, 28 * 86400, 0 }, /* beyond the table: doubled */
};

START_TEST(test_time_axis)
{
	struct mxq_chart_axis a;

	ck_assert_int_eq(mxq_chart_time_axis(time_cases[_i].t0, time_cases[_i].t1,
					     time_cases[_i].ticks, &a), 0);
	ck_assert_msg(a.step == time_cases[_i].step && a.lo == time_cases[_i].lo,
		      "[%g, %g]: got step %g lo %g", time_cases[_i].t0, time_cases[_i].t1, a.step,
		      a.lo);
	ck_assert(a.hi == time_cases[_i].t1);
	ck_assert(a.lo >= time_cases[_i].t0);
}
END_TEST

START_TEST(test_scale_and_errors)
{
	struct mxq_chart_axis a;

	ck_assert(mxq_chart_scale(0, 0, 100, 10, 110) == 10);
	ck_assert(mxq_chart_scale(100, 0, 100, 10, 110) == 110);
	ck_assert(mxq_chart_scale(25, 0, 100, 10, 110) == 35);
	ck_assert(mxq_chart_scale(25, 0, 100, 200, 0) == 150);     /* y axis points up */
	ck_assert(mxq_chart_scale(-50, 0, 100, 10, 110) == 10);    /* clamped */
	ck_assert(mxq_chart_scale(500, 0, 100, 10, 110) == 110);
	ck_assert(mxq_chart_scale(5, 5, 5, 0, 100) == 50);         /* empty range: middle */
	ck_assert(mxq_chart_scale(NAN, 0, 1, 0, 100) == 50);
	ck_assert_int_eq(mxq_chart_nice_axis(0, 1, 1, &a), -EINVAL);
	ck_assert_int_eq(mxq_chart_time_axis(10, 10, 8, &a), -EINVAL);
	ck_assert_int_eq(mxq_chart_time_axis(0, 10, 1, &a), -EINVAL);
}
END_TEST

START_TEST(test_chart_svg)
{
	static const double t[] = { 0, 1800, 3600 }, v[] = { 10, 50, 30 };
	struct mxq_chart c = { .id = "c1", .title = "<b>watts</b>", .unit = "W&Co", .t0 = 0,
			       .t1 = 3600, .width = 400, .height = 200 };
	struct mxq_chart_series s = { .label = "<i>", .t = t, .v = v, .n = 3 };
	struct mx_buf b;
	size_t len;
	char *out;

	mx_buf_init(&b, 0);
	mxq_chart_svg(&b, &c, &s, 1);
	out = mx_buf_take(&b, &len);
	ck_assert(!strncmp(out, "<svg class=\"chart\" id=\"c1\"", 26));
	ck_assert(strstr(out, "&lt;b&gt;watts&lt;/b&gt;"));
	ck_assert(strstr(out, "W&amp;Co"));
	ck_assert(strstr(out, "&lt;i&gt;"));
	ck_assert(!strstr(out, "<b>") && !strstr(out, "<i>"));
	ck_assert(strstr(out, "<path class=\"series s0\" d=\"M"));
	ck_assert(!strcmp(out + len - 6, "</svg>"));
	free(out);

	/* the peak maps to the top of the plot: v 50 on an axis [0, 50] */
	mx_buf_init(&b, 0);
	mxq_chart_svg(&b, &c, &s, 1);
	out = mx_buf_take(&b, &len);
	ck_assert_msg(strstr(out, " L") && strstr(out, "L"), "%s", out);
	free(out);

	s.n = 0;
	mx_buf_init(&b, 0);
	mxq_chart_svg(&b, &c, &s, 1);
	out = mx_buf_take(&b, &len);
	ck_assert(strstr(out, "no data in this window"));
	ck_assert(!strstr(out, "<path"));
	free(out);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Host header                                                         */

static const struct {
	const char *value;
	int ret;
	const char *name;  /* as parsed */
	bool ip, port;
	bool allowed;      /* with names "localhost", "node1", "node1.example.org" */
} host_cases[] = {
	{ "localhost", 0, "localhost", false, false, true },
	{ "localhost:8095", 0, "localhost", false, true, true },
	{ "LocalHost.", 0, "localhost", false, false, true },       /* case, final dot */
	{ "node1.example.org:80", 0, "node1.example.org", false, true, true },
	{ "node1", 0, "node1", false, false, true },
	{ "127.0.0.1", 0, "127.0.0.1", true, false, true },
	{ "127.0.0.1:8095", 0, "127.0.0.1", true, true, true },
	{ "10.1.2.3:1", 0, "10.1.2.3", true, true, true },          /* any IP address */
	{ "[::1]", 0, "::1", true, false, true },
	{ "[::1]:8095", 0, "::1", true, true, true },
	{ "[2001:DB8::1]:443", 0, "2001:db8::1", true, true, true },
	{ "evil.example", 0, "evil.example", false, false, false },  /* a rebound name */
	{ "node1.evil.example", 0, "node1.evil.example", false, false, false },
	{ "localhost.evil.example", 0, "localhost.evil.example", false, false, false },
	{ "127.0.0.1.nip.io", 0, "127.0.0.1.nip.io", false, false, false },
	{ "2130706433", 0, "2130706433", false, false, false },     /* not dotted: a name */
	{ "my_proxy_upstream", 0, "my_proxy_upstream", false, false, false },
	{ "", -EINVAL, NULL, false, false, false },
	{ ":8095", -EINVAL, NULL, false, false, false },
	{ "localhost:", -EINVAL, NULL, false, false, false },
	{ "localhost:0", -EINVAL, NULL, false, false, false },
	{ "localhost:65536", -EINVAL, NULL, false, false, false },
	{ "localhost:+80", -EINVAL, NULL, false, false, false },
	{ "localhost:80:80", -EINVAL, NULL, false, false, false },
	{ "::1", -EINVAL, NULL, false, false, false },              /* v6 needs brackets */
	{ "[::1", -EINVAL, NULL, false, false, false },
	{ "[::1]x", -EINVAL, NULL, false, false, false },
	{ "[evil.example]", -EINVAL, NULL, false, false, false },
	{ "[fe80::1%25eth0]", -EINVAL, NULL, false, false, false },
	{ "a b", -EINVAL, NULL, false, false, false },
	{ "a/b", -EINVAL, NULL, false, false, false },
	{ "a..b", -EINVAL, NULL, false, false, false },
	{ ".", -EINVAL, NULL, false, false, false },
	{ "-x", -EINVAL, NULL, false, false, false },
	{ "user@localhost", -EINVAL, NULL, false, false, false },
	{ "localhost\r\nX: y", -EINVAL, NULL, false, false, false },
};

START_TEST(test_host_parse)
{
	static const char *const names[] = { "localhost", "node1", "node1.example.org" };
	struct mx_url_host h = { .name = "untouched" };
	int r = mx_url_host_parse(host_cases[_i].value, &h);

	ck_assert_msg(r == host_cases[_i].ret, "'%s': got %d, want %d", host_cases[_i].value, r,
		      host_cases[_i].ret);
	if (r < 0) {
		ck_assert_str_eq(h.name, "untouched");
		return;
	}
	ck_assert_str_eq(h.name, host_cases[_i].name);
	ck_assert_int_eq(h.is_ip, host_cases[_i].ip);
	ck_assert_int_eq(h.has_port, host_cases[_i].port);
	ck_assert_msg(mx_url_host_allowed(&h, names, MX_ARRAY_SIZE(names)) == host_cases[_i].allowed,
		      "'%s': allowed is not %d", host_cases[_i].value, host_cases[_i].allowed);
}
END_TEST

START_TEST(test_host_allowed_lists)
{
	static const char *const any[] = { "node1", "*" };
	struct mx_url_host h;
	char longest[MX_URL_HOST_MAX + 2];

	ck_assert_int_eq(mx_url_host_parse("evil.example:80", &h), 0);
	ck_assert(!mx_url_host_allowed(&h, NULL, 0));
	ck_assert(mx_url_host_allowed(&h, any, 2));
	ck_assert_int_eq(mx_url_host_parse("127.0.0.1", &h), 0);
	ck_assert(mx_url_host_allowed(&h, NULL, 0));    /* an address needs no name */
	ck_assert_int_eq(mx_url_host_parse(NULL, &h), -EINVAL);
	/* 253 characters are a name, 254 are not */
	memset(longest, 'a', sizeof(longest));
	for (size_t i = 63; i < MX_URL_HOST_MAX; i += 64)
		longest[i] = '.';
	longest[MX_URL_HOST_MAX] = '\0';
	ck_assert_int_eq(mx_url_host_parse(longest, &h), 0);
	ck_assert_uint_eq(strlen(h.name), MX_URL_HOST_MAX);
	longest[MX_URL_HOST_MAX] = 'a';
	longest[MX_URL_HOST_MAX + 1] = '\0';
	ck_assert_int_eq(mx_url_host_parse(longest, &h), -EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* request deadlines                                                   */

#define SLEEP MX_SOCKGUARD_SLEEP
#define LATE MX_SOCKGUARD_SHUT_LATE
#define ROOM MX_SOCKGUARD_SHUT_ROOM
#define NEVER UINT64_MAX

/* deadline 10 s, grace 1 s; the oldest waits since t = 100 000 ms */
static const struct {
	const char *what;
	bool waiting, full, queued;
	uint64_t now;
	enum mx_sockguard_action action;
	bool watch;
	uint64_t wake_at;
} plan_cases[] = {
	{ "nothing waits: sleep until an event", false, false, false, 100000, SLEEP, false, NEVER },
	{ "nothing waits, full, queued: no spin", false, true, true, 100000, SLEEP, false, NEVER },
	{ "one waits: wake at its deadline", true, false, false, 100000, SLEEP, false, 110000 },
	{ "just before the deadline", true, false, false, 109999, SLEEP, false, 110000 },
	{ "at the deadline: shut", true, false, false, 110000, LATE, false, 0 },
	{ "long past it: shut", true, false, false, 500000, LATE, false, 0 },
	{ "full, nobody queued: watch the queue", true, true, false, 100500, SLEEP, true, 110000 },
	{ "full, queued, too young: wake at grace", true, true, true, 100500, SLEEP, false, 101000 },
	{ "full, queued, waited the grace: room", true, true, true, 101000, ROOM, false, 0 },
	{ "full, queued, and late: late wins", true, true, true, 110000, LATE, false, 0 },
	{ "queued but not full: the queue moves", true, false, true, 105000, SLEEP, false, 110000 },
};

START_TEST(test_sockguard_plan)
{
	const struct mx_sockguard_config cfg = { .deadline_ms = 10000, .grace_ms = 1000, .slots = 4 };
	struct mx_sockguard_plan p = mx_sockguard_plan(&cfg, plan_cases[_i].waiting, 100000,
						       plan_cases[_i].full, plan_cases[_i].queued,
						       plan_cases[_i].now);

	ck_assert_msg(p.action == plan_cases[_i].action, "%s: %s, want %s", plan_cases[_i].what,
		      mx_sockguard_action_name(p.action),
		      mx_sockguard_action_name(plan_cases[_i].action));
	if (p.action != SLEEP)
		return;
	ck_assert_msg(p.watch_queue == plan_cases[_i].watch, "%s: watch %d", plan_cases[_i].what,
		      p.watch_queue);
	ck_assert_msg(p.wake_at == plan_cases[_i].wake_at, "%s: wake at %llu", plan_cases[_i].what,
		      (unsigned long long)p.wake_at);
}
END_TEST

/* Does the peer of FD see the connection closed within MS? */
static bool closed_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&p, 1, ms) == 1 && read(fd, &c, 1) == 0;
}

START_TEST(test_sockguard_deadline)
{
	const struct mx_sockguard_config cfg = { .deadline_ms = 300, .grace_ms = 100, .slots = 8 };
	struct mx_sockguard *g = NULL;
	struct mx_sockguard_entry *late, *met, *rearmed;
	struct mx_sockguard_stats st;
	int a[2], b[2], c[2];
	uint64_t t0;

	ck_assert_int_eq(mx_sockguard_new(&(struct mx_sockguard_config){ .slots = 1 }, &g), -EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(mx_sockguard_new(&cfg, &g), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, a), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, b), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, c), 0);
	ck_assert_int_eq(mx_sockguard_start(g, -1), 0);
	t0 = mx_now_monotonic_ms();
	late = mx_sockguard_add(g, a[0]);
	met = mx_sockguard_add(g, b[0]);
	rearmed = mx_sockguard_add(g, c[0]);
	mx_sockguard_disarm(g, met);            /* its request came in time */
	mx_sockguard_disarm(g, rearmed);
	ck_assert(closed_within(a[1], 2000));
	ck_assert_uint_ge(mx_now_monotonic_ms() - t0, 290);
	mx_sockguard_arm(g, rearmed);           /* a next request: a fresh deadline */
	t0 = mx_now_monotonic_ms();
	ck_assert(!closed_within(b[1], 100));
	ck_assert(closed_within(c[1], 2000));
	ck_assert_uint_ge(mx_now_monotonic_ms() - t0, 290);
	ck_assert(!closed_within(b[1], 400));   /* disarmed: never shut */
	mx_sockguard_arm(g, late);              /* shut stays shut */
	mx_sockguard_stats(g, &st);
	ck_assert_uint_eq(st.open, 3);
	ck_assert_uint_eq(st.waiting, 0);
	ck_assert_uint_eq(st.shut_late, 2);
	ck_assert_uint_eq(st.shut_room, 0);
	mx_sockguard_stop(g);
	mx_sockguard_remove(g, late);
	mx_sockguard_remove(g, met);
	mx_sockguard_remove(g, rearmed);
	mx_sockguard_remove(g, NULL);
	mx_sockguard_stats(g, &st);
	ck_assert_uint_eq(st.open, 0);
	mx_sockguard_free(g);
	mx_sockguard_free(NULL);
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
		close(c[i]);
	}
}
END_TEST

/* Every slot taken and a client in the listen queue: the longest waiting
 * connection goes after the grace, long before its deadline. */
START_TEST(test_sockguard_room)
{
	const struct mx_sockguard_config cfg = { .deadline_ms = 30000, .grace_ms = 200, .slots = 2 };
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	struct mx_sockguard *g = NULL;
	struct mx_sockguard_entry *e1, *e2;
	struct mx_sockguard_stats st;
	int lfd, client, p1[2], p2[2];
	uint64_t t0;

	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(lfd, 0);
	sa.ss_family = AF_UNIX;    /* autobind: an abstract name of the kernel's */
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa_family_t)), 0);
	ck_assert_int_eq(listen(lfd, 4), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sa, &sl), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, p1), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, p2), 0);
	ck_assert_int_eq(mx_sockguard_new(&cfg, &g), 0);
	ck_assert_int_eq(mx_sockguard_start(g, lfd), 0);
	e1 = mx_sockguard_add(g, p1[0]);
	usleep(20000);
	e2 = mx_sockguard_add(g, p2[0]);        /* full now, nobody queued */
	ck_assert(!closed_within(p1[1], 400));
	t0 = mx_now_monotonic_ms();
	client = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(client, (struct sockaddr *)&sa, sl), 0);
	ck_assert(closed_within(p1[1], 2000));  /* the longest waiting one */
	ck_assert_uint_lt(mx_now_monotonic_ms() - t0, 1000);
	ck_assert(!closed_within(p2[1], 400));  /* one for one newcomer */
	mx_sockguard_stats(g, &st);
	ck_assert_uint_eq(st.shut_room, 1);
	ck_assert_uint_eq(st.shut_late, 0);
	mx_sockguard_stop(g);
	mx_sockguard_remove(g, e1);
	mx_sockguard_remove(g, e2);
	mx_sockguard_free(g);
	close(client);
	close(lfd);
	for (int i = 0; i < 2; i++) {
		close(p1[i]);
		close(p2[i]);
	}
}
END_TEST

static Suite *web_suite(void)
{
	Suite *s = suite_create("web");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_escape, 0, MX_ARRAY_SIZE(escape_cases));
	tcase_add_test(tc, test_escape_null_and_buffer);
	tcase_add_loop_test(tc, test_url_parse, 0, MX_ARRAY_SIZE(url_cases));
	tcase_add_test(tc, test_url_limits);
	tcase_add_test(tc, test_url_encode_roundtrip);
	tcase_add_loop_test(tc, test_host_parse, 0, MX_ARRAY_SIZE(host_cases));
	tcase_add_test(tc, test_host_allowed_lists);
	tcase_add_loop_test(tc, test_sockguard_plan, 0, MX_ARRAY_SIZE(plan_cases));
	tcase_add_test(tc, test_sockguard_deadline);
	tcase_add_test(tc, test_sockguard_room);
	tcase_add_loop_test(tc, test_nice_axis, 0, MX_ARRAY_SIZE(axis_cases));
	tcase_add_test(tc, test_nice_axis_huge);
	tcase_add_test(tc, test_chart_svg_huge);
	tcase_add_loop_test(tc, test_time_axis, 0, MX_ARRAY_SIZE(time_cases));
	tcase_add_test(tc, test_scale_and_errors);
	tcase_add_test(tc, test_chart_svg);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(web_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
