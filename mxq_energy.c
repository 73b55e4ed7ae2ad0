/*
 * mxq_energy - pure job energy arithmetic (see mxq_energy.h).
 *
 * Configuration: none; every parameter is an argument.
 * Errors: negative errno, outputs untouched; nothing here logs or reads a
 * clock, so test_energy.c checks it with tables of known profiles.
 */
#define _GNU_SOURCE
#include "mxq_energy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_util.h"

static const char *const method_names[MXQ_ENERGY_METHOD__COUNT] = {
	[MXQ_ENERGY_METHOD_COUNTER] = "counter",
	[MXQ_ENERGY_METHOD_POWER] = "power",
	[MXQ_ENERGY_METHOD_MODEL] = "model",
};

static const char *const completeness_names[MXQ_ENERGY_COMPLETENESS__COUNT] = {
	[MXQ_ENERGY_FULL] = "full",
	[MXQ_ENERGY_PARTIAL] = "partial",
	[MXQ_ENERGY_NONE] = "none",
};

const char *mxq_energy_method_to_string(enum mxq_energy_method m)
{
	return (unsigned)m < MXQ_ENERGY_METHOD__COUNT ? method_names[m] : NULL;
}

const char *mxq_energy_completeness_to_string(enum mxq_energy_completeness c)
{
	return (unsigned)c < MXQ_ENERGY_COMPLETENESS__COUNT ? completeness_names[c] : NULL;
}

int mxq_energy_counter_delta(uint64_t prev, uint64_t cur, uint64_t max_range, uint64_t *ret_delta)
{
	if (cur >= prev) {
		*ret_delta = cur - prev;
		return 0;
	}
	/* the kernel's RAPL counter runs from 0 to max_energy_range_uj and
	 * starts again at 0: one wrap is (max - prev) + cur */
	if (max_range == 0 || prev > max_range)
		return -ERANGE;
	*ret_delta = (max_range - prev) + cur;
	return 0;
}

double mxq_energy_trapezoid_j(double p0_w, double p1_w, uint64_t dt_ms)
{
	if (!(p0_w > 0))
		p0_w = 0;
	if (!(p1_w > 0))
		p1_w = 0;
	return (p0_w + p1_w) / 2.0 * (double)dt_ms / 1000.0;
}

double mxq_energy_model_watts(double idle_w, double per_slot_w, uint32_t busy_slots)
{
	return idle_w + per_slot_w * busy_slots;
}

/* ------------------------------------------------------------ ring buffer */

int mxq_energy_ring_init(struct mxq_energy_ring *ring, size_t capacity)
{
	struct mxq_energy_sample *s;

	if (capacity == 0)
		return -EINVAL;
	s = calloc(capacity, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*ring = (struct mxq_energy_ring) { .samples = s, .capacity = capacity };
	return 0;
}

void mxq_energy_ring_done(struct mxq_energy_ring *ring)
{
	if (!ring)
		return;
	free(ring->samples);
	*ring = (struct mxq_energy_ring) { 0 };
}

void mxq_energy_ring_push(struct mxq_energy_ring *ring, const struct mxq_energy_sample *s)
{
	ring->samples[ring->head] = *s;
	ring->head = (ring->head + 1) % ring->capacity;
	if (ring->count < ring->capacity)
		ring->count++;
	ring->pushed++;
}

const struct mxq_energy_sample *mxq_energy_ring_get(const struct mxq_energy_ring *ring, size_t i)
{
	size_t oldest;

	if (i >= ring->count)
		return NULL;
	oldest = (ring->head + ring->capacity - ring->count) % ring->capacity;
	return &ring->samples[(oldest + i) % ring->capacity];
}

const struct mxq_energy_sample *mxq_energy_ring_last(const struct mxq_energy_ring *ring)
{
	return ring->count ? mxq_energy_ring_get(ring, ring->count - 1) : NULL;
}

/* Index of the first held sample with time >= t (count if none): binary
 * search, samples are in time order. */
static size_t ring_lower_bound(const struct mxq_energy_ring *ring, uint64_t t_ms)
{
	size_t lo = 0, hi = ring->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mxq_energy_ring_get(ring, mid)->t_ms < t_ms)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int mxq_energy_ring_energy_at(const struct mxq_energy_ring *ring, uint64_t t_ms, double *ret_j)
{
	const struct mxq_energy_sample *a, *b;
	size_t i;

	if (ring->count == 0)
		return -ERANGE;
	i = ring_lower_bound(ring, t_ms);
	if (i == ring->count)
		return -ERANGE;
	b = mxq_energy_ring_get(ring, i);
	if (b->t_ms == t_ms) {
		*ret_j = b->energy_j;
		return 0;
	}
	if (i == 0)
		return -ERANGE;
	a = mxq_energy_ring_get(ring, i - 1);
	*ret_j = a->energy_j + (b->energy_j - a->energy_j) *
		 (double)(t_ms - a->t_ms) / (double)(b->t_ms - a->t_ms);
	return 0;
}

double mxq_energy_ring_peak_watts(const struct mxq_energy_ring *ring, uint64_t t0_ms, uint64_t t1_ms)
{
	double peak = 0;

	for (size_t i = ring_lower_bound(ring, t0_ms + 1); i < ring->count; i++) {
		const struct mxq_energy_sample *s = mxq_energy_ring_get(ring, i);
		if (s->t_ms > t1_ms)
			break;
		if (s->valid && s->watts > peak)
			peak = s->watts;
	}
	return peak;
}

/* ------------------------------------------------------------ attribution */

/* A job without slots (should not happen) counts as one. */
static uint32_t job_slots(const struct mxq_energy_share_in *job)
{
	return job->slots ? job->slots : 1;
}

int mxq_energy_attribute(double interval_j, uint64_t dt_ms, double idle_w, uint32_t node_slots,
			 const struct mxq_energy_share_in *jobs, size_t n,
			 struct mxq_energy_share_out *ret_out, double *ret_unattributed_j)
{
	double idle_j, active_j;
	uint64_t sum_slots = 0, sum_cpu = 0;
	bool by_cpu = true;

	if (!(interval_j >= 0))
		return -EINVAL;
	if (n == 0) {
		*ret_unattributed_j = interval_j;
		return 0;
	}
	idle_j = idle_w > 0 ? idle_w * (double)dt_ms / 1000.0 : 0;
	if (idle_j > interval_j)
		idle_j = interval_j;
	active_j = interval_j - idle_j;

	for (size_t i = 0; i < n; i++) {
		sum_slots += job_slots(&jobs[i]);
		sum_cpu += jobs[i].cpu_us;
		if (!jobs[i].cpu_known)
			by_cpu = false;
	}
	if (sum_cpu == 0)
		by_cpu = false;
	if (node_slots < sum_slots)
		node_slots = (uint32_t)sum_slots;

	*ret_unattributed_j = idle_j * (double)(node_slots - sum_slots) / node_slots;
	for (size_t i = 0; i < n; i++) {
		double slots = job_slots(&jobs[i]);
		double idle_share = idle_j * slots / node_slots;
		double active_share = by_cpu ? active_j * (double)jobs[i].cpu_us / (double)sum_cpu
					     : active_j * slots / (double)sum_slots;

		ret_out[i].energy_j = idle_share + active_share;
		ret_out[i].active_j = active_share;
	}
	return 0;
}

/* --------------------------------------------------------- per-job totals */

void mxq_energy_job_acc_init(struct mxq_energy_job_acc *acc)
{
	*acc = (struct mxq_energy_job_acc) { .method = MXQ_ENERGY_METHOD_COUNTER };
}

void mxq_energy_job_acc_add(struct mxq_energy_job_acc *acc, const struct mxq_energy_share_out *share,
			    uint64_t dt_ms, enum mxq_energy_method method)
{
	acc->energy_j += share->energy_j;
	acc->active_j += share->active_j;
	acc->measured_ms += dt_ms;
	acc->samples++;
	if (method > acc->method)
		acc->method = (uint8_t)method;
	if (dt_ms > 0) {
		double w = share->energy_j * 1000.0 / (double)dt_ms;
		if (w > acc->peak_w)
			acc->peak_w = w;
	}
}

void mxq_energy_job_acc_gap(struct mxq_energy_job_acc *acc, uint64_t dt_ms)
{
	acc->missing_ms += dt_ms;
}

enum mxq_energy_completeness mxq_energy_job_acc_completeness(const struct mxq_energy_job_acc *acc)
{
	if (acc->samples == 0)
		return MXQ_ENERGY_NONE;
	if (acc->missing_ms > 0 || acc->incomplete)
		return MXQ_ENERGY_PARTIAL;
	return MXQ_ENERGY_FULL;
}

double mxq_energy_job_acc_avg_watts(const struct mxq_energy_job_acc *acc)
{
	return acc->measured_ms ? acc->energy_j * 1000.0 / (double)acc->measured_ms : 0;
}

/* ------------------------------------------------------------ boot energy */

static bool boot_id_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '-';
}

int mxq_energy_boot_parse(const char *s, struct mxq_energy_boot_spec *ret)
{
	struct mxq_energy_boot_spec spec = { 0 };
	const char *at;
	double epoch;
	size_t len;

	if (strcmp(s, "kernel") == 0) {
		spec.mode = MXQ_ENERGY_BOOT_KERNEL;
	} else if (strcmp(s, "none") == 0) {
		spec.mode = MXQ_ENERGY_BOOT_NONE;
	} else {
		at = strchr(s, '@');
		len = at ? (size_t)(at - s) : 0;
		if (len == 0 || len >= sizeof(spec.id))
			return -EINVAL;
		for (size_t i = 0; i < len; i++)
			if (!boot_id_char(s[i]))
				return -EINVAL;
		if (mx_strtod(at + 1, &epoch) < 0 || !(epoch >= 0) || epoch > 1e11)
			return -EINVAL;
		spec.mode = MXQ_ENERGY_BOOT_GIVEN;
		memcpy(spec.id, s, len);
		spec.at_ms = (uint64_t)(epoch * 1000.0 + 0.5);
	}
	*ret = spec;
	return 0;
}

int mxq_energy_boot_identify(const struct mxq_energy_boot_spec *spec, const char *kernel_boot_id,
			     double kernel_uptime_s, uint64_t now_real_ms,
			     char ret_id[MXQ_ENERGY_BOOT_ID_MAX], double *ret_since_s)
{
	switch (spec->mode) {
	case MXQ_ENERGY_BOOT_KERNEL:
		if (!kernel_boot_id || !kernel_boot_id[0] ||
		    strlen(kernel_boot_id) >= MXQ_ENERGY_BOOT_ID_MAX)
			return -ENOENT;
		snprintf(ret_id, MXQ_ENERGY_BOOT_ID_MAX, "%s", kernel_boot_id);
		*ret_since_s = kernel_uptime_s;
		return 0;
	case MXQ_ENERGY_BOOT_GIVEN:
		snprintf(ret_id, MXQ_ENERGY_BOOT_ID_MAX, "%s", spec->id);
		*ret_since_s = ((double)now_real_ms - (double)spec->at_ms) / 1000.0;
		return 0;
	default:
		return -ENOENT;
	}
}

double mxq_energy_boot_j(const char *boot_id, const char *counted_id, double since_boot_s,
			 double window_s, double watts)
{
	if (!boot_id[0] || strcmp(boot_id, counted_id) == 0)
		return 0;
	if (!(since_boot_s > 0) || since_boot_s > window_s || !(watts > 0))
		return 0;
	return since_boot_s * watts;
}

/* ----------------------------------------------------------------- config */

int mxq_energy_parse_model(const char *s, double *ret_idle_w, double *ret_per_slot_w)
{
	const char *colon = strchr(s, ':');
	char idle[64];
	double a, b;
	size_t len;

	if (!colon)
		return -EINVAL;
	len = (size_t)(colon - s);
	if (len == 0 || len >= sizeof(idle))
		return -EINVAL;
	memcpy(idle, s, len);
	idle[len] = '\0';
	if (mx_strtod(idle, &a) < 0 || mx_strtod(colon + 1, &b) < 0 || a < 0 || b < 0)
		return -EINVAL;
	*ret_idle_w = a;
	*ret_per_slot_w = b;
	return 0;
}
