/*
 * mxq_chart - scaling and SVG rendering of time-series charts (see
 * mxq_chart.h). Coordinates are printed with one decimal: enough for a
 * screen, and it keeps a 1000-point path at a few KiB.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include "mx_util.h"
#include "mxq_chart.h"

#define PAD_LEFT 56
#define PAD_RIGHT 12
#define PAD_TOP 26
#define PAD_BOTTOM 34
#define MAX_SERIES 6
#define AXIS_LIMIT (DBL_MAX / 16)  /* largest magnitude an axis covers */

int mxq_chart_nice_axis(double min, double max, unsigned max_ticks, struct mxq_chart_axis *ret)
{
	static const double mult[] = { 1, 2, 2.5, 5, 10 };
	double span, mag, step = 1;

	if (max_ticks < 2)
		return -EINVAL;
	if (!isfinite(min) || !isfinite(max)) {
		min = 0;
		max = 1;
	}
	if (min > max) {
		double t = min;
		min = max;
		max = t;
	}
	/* near DBL_MAX the rounded ends (and a tick past them) would overflow
	 * to infinity and no tick loop would end: such values (a broken
	 * reading) are drawn at the axis end instead */
	if (max > AXIS_LIMIT)
		max = AXIS_LIMIT;
	if (min < -AXIS_LIMIT)
		min = -AXIS_LIMIT;
	if (min > max)
		min = max;
	if (max == min) {
		/* a flat line: from zero to half again its value (or a unit) */
		if (max > 0)
			max *= 1.5, min = 0;
		else if (max < 0)
			min *= 1.5, max = 0;
		else
			max = 1;
	}
	span = max - min;
	mag = pow(10, floor(log10(span / max_ticks)));
	for (size_t i = 0; i < MX_ARRAY_SIZE(mult); i++) {
		step = mult[i] * mag;
		if (ceil(max / step - 1e-9) - floor(min / step + 1e-9) <= max_ticks)
			break;
	}
	ret->step = step;
	ret->lo = floor(min / step + 1e-9) * step;
	ret->hi = ceil(max / step - 1e-9) * step;
	if (ret->hi <= ret->lo)
		ret->hi = ret->lo + step;
	return 0;
}

int mxq_chart_time_axis(double t0, double t1, unsigned max_ticks, struct mxq_chart_axis *ret)
{
	static const double steps[] = {
		60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800,
	};
	double step = steps[MX_ARRAY_SIZE(steps) - 1];

	if (!(t1 > t0) || max_ticks < 2)
		return -EINVAL;
	for (size_t i = 0; i < MX_ARRAY_SIZE(steps); i++) {
		if ((t1 - t0) / steps[i] <= max_ticks) {
			step = steps[i];
			break;
		}
	}
	while ((t1 - t0) / step > max_ticks)
		step *= 2;
	ret->step = step;
	ret->lo = ceil(t0 / step) * step;
	ret->hi = t1;
	return 0;
}

double mxq_chart_scale(double v, double lo, double hi, double p0, double p1)
{
	double f;

	if (hi == lo || !isfinite(v))
		return (p0 + p1) / 2;
	f = (v - lo) / (hi - lo);
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	return p0 + f * (p1 - p0);
}

/* "12:30" within two days, else "03-14"; local time. */
static void time_label(double t, double span, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm)) {
		buf[0] = '\0';
		return;
	}
	strftime(buf, len, span <= 2 * 86400 ? "%H:%M" : "%m-%d", &tm);
}

/* "1.5k", "250", "0.25": short enough for the y axis. */
static void value_label(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (a < 1e-12)
		v = 0; /* no "-0" */
	if (a >= 1e6)
		snprintf(buf, len, "%gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(buf, len, "%gk", v / 1e3);
	else
		snprintf(buf, len, "%g", v);
}

static void series_path(struct mx_buf *b, const struct mxq_chart_series *s,
			const struct mxq_chart *c, const struct mxq_chart_axis *y,
			double x0, double x1, double y0, double y1)
{
	bool first = true;

	mx_buf_puts(b, "M");
	for (size_t i = 0; i < s->n; i++) {
		double px = mxq_chart_scale(s->t[i], c->t0, c->t1, x0, x1);
		double py = mxq_chart_scale(s->v[i], y->lo, y->hi, y0, y1);

		if (first)
			mx_buf_printf(b, "%.1f %.1f", px, py);
		else if (s->style == MXQ_CHART_STEP)
			mx_buf_printf(b, " H%.1f V%.1f", px, py);
		else
			mx_buf_printf(b, " L%.1f %.1f", px, py);
		first = false;
	}
	if (s->style == MXQ_CHART_STEP && s->n)
		mx_buf_printf(b, " H%.1f", x1);
}

void mxq_chart_svg(struct mx_buf *b, const struct mxq_chart *c,
		   const struct mxq_chart_series *series, size_t n_series)
{
	double vmin = INFINITY, vmax = -INFINITY;
	double x0 = PAD_LEFT, x1 = (double)c->width - PAD_RIGHT;
	double y0 = (double)c->height - PAD_BOTTOM, y1 = PAD_TOP;
	struct mxq_chart_axis ya, ta;
	size_t points = 0;
	char label[32];

	if (n_series > MAX_SERIES)
		n_series = MAX_SERIES;
	for (size_t k = 0; k < n_series; k++) {
		for (size_t i = 0; i < series[k].n; i++) {
			if (!isfinite(series[k].v[i]))
				continue;
			if (series[k].v[i] < vmin)
				vmin = series[k].v[i];
			if (series[k].v[i] > vmax)
				vmax = series[k].v[i];
		}
		points += series[k].n;
	}
	mx_buf_printf(b, "<svg class=\"chart\" id=\"%s\" viewBox=\"0 0 %u %u\" "
		      "width=\"%u\" height=\"%u\" role=\"img\" aria-label=\"", c->id,
		      c->width, c->height, c->width, c->height);
	mx_html_text(b, c->title);
	mx_buf_puts(b, "\"><title>");
	mx_html_text(b, c->title);
	mx_buf_printf(b, "</title><text class=\"ctitle\" x=\"%d\" y=\"16\">", PAD_LEFT);
	mx_html_text(b, c->title);
	mx_buf_puts(b, " (");
	mx_html_text(b, c->unit);
	mx_buf_puts(b, ")</text>");
	if (!points || vmin > vmax || mxq_chart_time_axis(c->t0, c->t1, 8, &ta) < 0) {
		mx_buf_printf(b, "<text class=\"nodata\" x=\"%.0f\" y=\"%.0f\">no data in this "
			      "window</text></svg>", (x0 + x1) / 2, (y0 + y1) / 2);
		return;
	}
	if (vmin > 0)
		vmin = 0; /* power and counts read best from zero */
	mxq_chart_nice_axis(vmin, vmax, 5, &ya);
	mx_buf_puts(b, "<g class=\"grid\">");
	for (double v = ya.lo; v <= ya.hi + ya.step / 2; v += ya.step) {
		double py = mxq_chart_scale(v, ya.lo, ya.hi, y0, y1);
		value_label(v, label, sizeof(label));
		mx_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			      "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\">%s</text>",
			      x0, py, x1, py, x0 - 4, py + 4, label);
	}
	for (double t = ta.lo; t <= ta.hi; t += ta.step) {
		double px = mxq_chart_scale(t, c->t0, c->t1, x0, x1);
		time_label(t, c->t1 - c->t0, label, sizeof(label));
		mx_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			      "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>",
			      px, y0, px, y1, px, y0 + 16, label);
	}
	mx_buf_puts(b, "</g>");
	for (size_t k = 0; k < n_series; k++) {
		if (!series[k].n)
			continue;
		if (series[k].n == 1 && series[k].style == MXQ_CHART_LINE) {
			/* one point makes no line: a dot */
			mx_buf_printf(b, "<circle class=\"dot s%zu\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
				      k, mxq_chart_scale(series[k].t[0], c->t0, c->t1, x0, x1),
				      mxq_chart_scale(series[k].v[0], ya.lo, ya.hi, y0, y1));
			continue;
		}
		mx_buf_printf(b, "<path class=\"series s%zu\" d=\"", k);
		series_path(b, &series[k], c, &ya, x0, x1, y0, y1);
		mx_buf_puts(b, "\"/>");
	}
	for (size_t k = 0; k < n_series; k++) {
		double lx = x0 + 8 + (double)k * 150;
		mx_buf_printf(b, "<rect class=\"key s%zu\" x=\"%.1f\" y=\"%.1f\" width=\"10\" "
			      "height=\"10\"/><text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", k, lx,
			      (double)c->height - 12, lx + 14, (double)c->height - 3);
		mx_html_text(b, series[k].label);
		mx_buf_puts(b, "</text>");
	}
	mx_buf_puts(b, "</svg>");
}
