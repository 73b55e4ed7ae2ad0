/*
 * mxq_chart - small time-series charts rendered on the server as inline
 * SVG (mxq-web): no script and no external file is needed to see them.
 *
 * The scaling is pure and unit-tested: "nice" axis ranges and ticks (1, 2,
 * 2.5, 5 x 10^k; time steps from a minute to a week) and the linear map of
 * a value to pixels. Rendering appends to an mx_buf; every text in it
 * (title, unit, labels) goes through mx_html_text().
 *
 * Errors: only the buffer's (sticky, see mx_html.h). Nothing here logs.
 */
#ifndef MXQ_CHART_H
#define MXQ_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "mx_html.h"

struct mxq_chart_axis {
	double lo, hi;     /* the axis range, multiples of step */
	double step;       /* distance of the ticks */
};

/*
 * A value axis covering [MIN, MAX] with at most MAX_TICKS (>= 2) intervals
 * of a "nice" step. MIN == MAX gets the range from zero to 1.5 times it
 * ([0, 1] for 0); NaN or infinite input gives [0, 1]; magnitudes beyond
 * DBL_MAX / 16 are cut to that, so every end and step stays finite. 0 or
 * -EINVAL (max_ticks < 2).
 */
int mxq_chart_nice_axis(double min, double max, unsigned max_ticks, struct mxq_chart_axis *ret);
/*
 * Ticks for a time axis over [T0, T1] (epoch seconds): the smallest step of
 * 1, 5, 10, 15, 30 minutes, 1, 2, 3, 6, 12 hours, 1, 2, 7 days giving at
 * most MAX_TICKS intervals; lo is the first multiple of it >= T0 and hi is
 * T1. Returns 0 or -EINVAL (t1 <= t0 or max_ticks < 2).
 */
int mxq_chart_time_axis(double t0, double t1, unsigned max_ticks, struct mxq_chart_axis *ret);
/* V mapped linearly from [LO, HI] to [P0, P1] (P1 < P0 for a y axis),
 * clamped to the pixel range; the middle when LO == HI. */
double mxq_chart_scale(double v, double lo, double hi, double p0, double p1);

enum mxq_chart_style {
	MXQ_CHART_LINE = 0,   /* straight segments between points */
	MXQ_CHART_STEP,       /* the value holds until the next point */
};

struct mxq_chart_series {
	const char *label;    /* legend text */
	const double *t;      /* epoch seconds, ascending */
	const double *v;
	size_t n;
	enum mxq_chart_style style;
};

struct mxq_chart {
	const char *id;       /* DOM id of the <svg> ([a-z0-9-] only) */
	const char *title;
	const char *unit;     /* of the y axis, e.g. "W" */
	double t0, t1;        /* the time window shown */
	unsigned width, height;
};

/*
 * Append an <svg> element (class "chart") with axes, grid, one path per
 * series (classes "series s0", "s1", ...) and a legend; with no points at
 * all it says so instead of drawing empty axes. N_SERIES <= 6.
 */
void mxq_chart_svg(struct mx_buf *b, const struct mxq_chart *c,
		   const struct mxq_chart_series *series, size_t n_series);

#endif
