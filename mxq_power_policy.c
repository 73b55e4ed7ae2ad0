/*
 * mxq_power_policy - pure power decisions: snapshot + now + config + state
 * in, plan with reasons out (DESIGN §5, STYLE habit 1).
 *
 * Configuration: struct mxq_power_config, parsed from power.conf text by
 * mxq_power_config_parse(); documented in manpages/power.conf.5.
 *
 * Errors: allocation failures give -ENOMEM, bad arguments -EINVAL; config
 * errors are collected as "file:line: message" lines in the caller's
 * buffer. Nothing here logs, reads a clock, touches the database or runs a
 * program: the caller passes time in and carries out the plan.
 *
 * How a tick is decided (mxq_power_decide):
 *   1. refill the rate-limit buckets, count the idle gaps that ended since
 *      the last decision (idle_time = auto), settle the boot-failure
 *      breaker;
 *   2. per node: registrations, acknowledgements, deadlines and what the
 *      leader learnt from its transports (MARK_ON, MARK_OFF, MARK_FAILED
 *      also for a failed call, CANCEL_DRAIN for a draining node that got
 *      work, POWER_OFF for admin-off drains and for drains whose mxqd is
 *      gone, HARD_OFF after the soft-off deadline, SSH_DRAIN for an mxqd
 *      that does not answer, RESEND of an inherited transition or of the
 *      leader's own that it wrote and never sent, WAKE for
 *      an admin's request or to recover stranded jobs, RESOLVE_JOBS when
 *      that is impossible, RETRY of a FAILED node after its backoff); the
 *      dead-node rule lives here: a node whose mxqd is gone is recorded
 *      OFF once its power is known off and never drained automatically;
 *      an earlier leader's in-flight window (fence_until) holds back every
 *      wake and power-off of the node and the RETRY of a FAILED one, and
 *      a power-off whose call still runs is not FAILED at its deadline
 *      (either would reopen the claims under a late power-off);
 *   3. place the pending demand, one requirement signature at a time, on
 *      the free room of ON and POWERING_ON nodes, then on room that running
 *      jobs free before a boot would finish; what is left takes back
 *      DRAINING nodes, then wakes the most efficient qualified OFF nodes
 *      within the resume limits; acknowledged drains nobody took back are
 *      powered off;
 *   4. suspend idle ON nodes nobody needs, beyond the warm pools, least
 *      efficient first, within the suspend limits (each power-off's gap
 *      then waits for the class's next wake or taken-back drain);
 *   5. mark administrators' requests done (ADMIN_DONE);
 *   6. write one explanation per node.
 * Every "may this node run this work" question is server_is_qualified();
 * this file only counts room.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "mxq_power_policy.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "keywordset.h"
#include "mxq_expr.h"
#include "mxq_power_index.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ======================================================================
 * States and actions
 */

static const char *const state_names[_MXQ_POWER_STATE_MAX] = {
	[MXQ_POWER_ON]           = "ON",
	[MXQ_POWER_DRAINING]     = "DRAINING",
	[MXQ_POWER_POWERING_OFF] = "POWERING_OFF",
	[MXQ_POWER_OFF]          = "OFF",
	[MXQ_POWER_POWERING_ON]  = "POWERING_ON",
	[MXQ_POWER_FAILED]       = "FAILED",
	[MXQ_POWER_UNKNOWN]      = "UNKNOWN",
};

static const char *const action_names[_MXQ_POWER_ACTION_MAX] = {
	[MXQ_POWER_ACTION_WAKE]         = "WAKE",
	[MXQ_POWER_ACTION_DRAIN]        = "DRAIN",
	[MXQ_POWER_ACTION_CANCEL_DRAIN] = "CANCEL_DRAIN",
	[MXQ_POWER_ACTION_POWER_OFF]    = "POWER_OFF",
	[MXQ_POWER_ACTION_MARK_ON]      = "MARK_ON",
	[MXQ_POWER_ACTION_MARK_OFF]     = "MARK_OFF",
	[MXQ_POWER_ACTION_MARK_FAILED]  = "MARK_FAILED",
	[MXQ_POWER_ACTION_HARD_OFF]     = "HARD_OFF",
	[MXQ_POWER_ACTION_SSH_DRAIN]    = "SSH_DRAIN",
	[MXQ_POWER_ACTION_RESEND]       = "RESEND",
	[MXQ_POWER_ACTION_RETRY]        = "RETRY",
	[MXQ_POWER_ACTION_RESOLVE_JOBS] = "RESOLVE_JOBS",
	[MXQ_POWER_ACTION_ADMIN_DONE]   = "ADMIN_DONE",
};

static int name_lookup(const char *const *table, size_t n, const char *name)
{
	if (!name)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (table[i] && strcasecmp(table[i], name) == 0)
			return (int)i;
	return -EINVAL;
}

const char *mxq_power_state_to_string(enum mxq_power_node_state state)
{
	if ((unsigned)state >= _MXQ_POWER_STATE_MAX)
		return NULL;
	return state_names[state];
}

int mxq_power_state_from_string(const char *name)
{
	return name_lookup(state_names, ARRAY_SIZE(state_names), name);
}

const char *mxq_power_action_to_string(enum mxq_power_action_kind kind)
{
	if ((unsigned)kind >= _MXQ_POWER_ACTION_MAX)
		return NULL;
	return action_names[kind];
}

int mxq_power_action_from_string(const char *name)
{
	return name_lookup(action_names, ARRAY_SIZE(action_names), name);
}

bool mxq_power_state_counts_as_capacity(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_ON || state == MXQ_POWER_POWERING_ON;
}

bool mxq_power_node_daemon_lost(const struct mxq_power_node *n)
{
	return n->daemon_gone && (n->state == MXQ_POWER_ON || n->state == MXQ_POWER_DRAINING);
}

bool mxq_power_state_counts_as_powered(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_ON || state == MXQ_POWER_POWERING_ON ||
	       state == MXQ_POWER_DRAINING;
}

bool mxq_power_state_can_suspend(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_ON;
}

bool mxq_power_state_can_resume(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_OFF;
}

bool mxq_power_state_is_transitional(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_DRAINING || state == MXQ_POWER_POWERING_OFF ||
	       state == MXQ_POWER_POWERING_ON;
}

bool mxq_power_state_needs_admin(enum mxq_power_node_state state)
{
	return state == MXQ_POWER_FAILED;
}

bool mxq_power_state_desired_off(enum mxq_power_node_state from, enum mxq_power_node_state to)
{
	switch (to) {
	case MXQ_POWER_DRAINING:
	case MXQ_POWER_POWERING_OFF:
	case MXQ_POWER_OFF:
		return true;
	case MXQ_POWER_FAILED:
		/* a node that failed to power off may die any moment; a failed
		 * boot leaves nothing to keep closed */
		return from != MXQ_POWER_POWERING_ON;
	default:
		return false;
	}
}

bool mxq_power_action_is_transition(enum mxq_power_action_kind kind)
{
	switch (kind) {
	case MXQ_POWER_ACTION_HARD_OFF:
	case MXQ_POWER_ACTION_SSH_DRAIN:
	case MXQ_POWER_ACTION_RESOLVE_JOBS:
	case MXQ_POWER_ACTION_ADMIN_DONE:
		return false;
	default:
		return true;
	}
}

/* ======================================================================
 * Small helpers
 */

/* "45s", "4m", "1h30m", "2d3h" - for reasons, rounded to two units. */
static void format_duration(int64_t secs, char *buf, size_t len)
{
	static const struct { char unit; int64_t secs; } units[] = {
		{ 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
	};
	size_t pos = 0;
	int shown = 0;

	if (secs < 0)
		secs = 0;
	if (secs == 0) {
		snprintf(buf, len, "0s");
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(units) && shown < 2; i++) {
		int64_t n = secs / units[i].secs;
		if (n == 0) {
			if (shown)
				break;
			continue;
		}
		secs -= n * units[i].secs;
		int w = snprintf(buf + pos, len > pos ? len - pos : 0, "%" PRId64 "%c",
				 n, units[i].unit);
		if (w < 0 || (size_t)w >= len - pos)
			break;
		pos += (size_t)w;
		shown++;
	}
}

/* EPOCH as local time with its offset, "2026-12-02 04:00:34 +0100":
 * explanations name points in time rather than durations up to now, so
 * that a host's text stays the same from one decision to the next and is
 * written only when something changed. */
static void format_when(int64_t epoch, char *buf, size_t len)
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (epoch <= 0 || !localtime_r(&t, &tm) ||
	    strftime(buf, len, "%Y-%m-%d %H:%M:%S %z", &tm) == 0)
		snprintf(buf, len, "@%" PRId64, epoch);
}

/* Largest unit that expresses SECS exactly: "90m", "2h", "45s". */
static void format_duration_exact(int64_t secs, char *buf, size_t len)
{
	if (secs != 0 && secs % 86400 == 0)
		snprintf(buf, len, "%" PRId64 "d", secs / 86400);
	else if (secs != 0 && secs % 3600 == 0)
		snprintf(buf, len, "%" PRId64 "h", secs / 3600);
	else if (secs != 0 && secs % 60 == 0)
		snprintf(buf, len, "%" PRId64 "m", secs / 60);
	else
		snprintf(buf, len, "%" PRId64 "s", secs);
}

/* Shortest decimal text that reads back as exactly D ("180", "0.5"). */
static void format_double(double d, char *buf, size_t len)
{
	if (d == floor(d) && fabs(d) < 1e15) {
		snprintf(buf, len, "%.0f", d);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

static int64_t ceil_div_s(double num, double den)
{
	double q = ceil(num / den);
	if (!(q < 9.0e15))
		return INT64_C(9000000000000000);
	return (int64_t)q;
}

/* ======================================================================
 * Plan memory: one arena per plan, freed at once.
 */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

struct mxq_power_arena {
	struct arena_chunk *head;
};

#define ARENA_CHUNK_SIZE (64 * 1024)

static void *arena_alloc(struct mxq_power_arena *a, size_t n)
{
	struct arena_chunk *c = a->head;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK_SIZE ? n : ARENA_CHUNK_SIZE;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

static void arena_free(struct mxq_power_arena *a)
{
	if (!a)
		return;
	while (a->head) {
		struct arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	free(a);
}

static const char *arena_strdup(struct mxq_power_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = arena_alloc(a, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

/* ======================================================================
 * Configuration
 */

enum knob_type {
	KNOB_IDLE,      /* duration, auto or never */
	KNOB_DURATION,  /* int64_t seconds */
	KNOB_UINT,      /* uint32_t */
	KNOB_DOUBLE,    /* double >= 0 */
	KNOB_BOOL,
	KNOB_HOSTS,     /* exclude list */
};

struct knob {
	const char *key;
	enum knob_type type;
	size_t offset;
};

#define KNOB(k, t, field) { k, t, offsetof(struct mxq_power_config, field) }

/* Canonical order of the dump. warm_pool.CLASS lines follow warm_pool. */
static const struct knob knobs[] = {
	KNOB("idle_time",           KNOB_IDLE,     idle_time_s),
	KNOB("idle_time_floor",     KNOB_DURATION, idle_time_floor_s),
	KNOB("idle_watts",          KNOB_DOUBLE,   idle_watts),
	KNOB("busy_watts",          KNOB_DOUBLE,   busy_watts),
	KNOB("boot_energy",         KNOB_DOUBLE,   boot_energy_j),
	KNOB("shutdown_energy",     KNOB_DOUBLE,   shutdown_energy_j),
	KNOB("warm_pool",           KNOB_UINT,     warm_pool),
	KNOB("suspend_rate",        KNOB_DOUBLE,   suspend_rate),
	KNOB("resume_rate",         KNOB_DOUBLE,   resume_rate),
	KNOB("max_booting",         KNOB_UINT,     max_booting),
	KNOB("max_powered_on",      KNOB_UINT,     max_powered_on),
	KNOB("max_power_watts",     KNOB_DOUBLE,   max_power_watts),
	KNOB("min_on_time",         KNOB_DURATION, min_on_time_s),
	KNOB("min_off_time",        KNOB_DURATION, min_off_time_s),
	KNOB("max_cycles_per_day",  KNOB_UINT,     max_cycles_per_day),
	KNOB("boot_time",           KNOB_DURATION, boot_time_s),
	KNOB("boot_deadline",       KNOB_DURATION, boot_deadline_s),
	KNOB("shutdown_deadline",   KNOB_DURATION, shutdown_deadline_s),
	KNOB("drain_timeout",       KNOB_DURATION, drain_timeout_s),
	KNOB("breaker_failures",    KNOB_UINT,     breaker_failures),
	KNOB("breaker_cooldown",    KNOB_DURATION, breaker_cooldown_s),
	KNOB("failed_retry_delay",  KNOB_DURATION, failed_retry_delay_s),
	KNOB("failed_retry_factor", KNOB_DOUBLE,   failed_retry_factor),
	KNOB("failed_retries",      KNOB_UINT,     failed_retries),
	KNOB("dry_run",             KNOB_BOOL,     dry_run),
	KNOB("exclude",             KNOB_HOSTS,    exclude),
};

#define CLASS_POOL_PREFIX "warm_pool."
#define MAX_DURATION_S (INT64_C(3650) * 86400)  /* ten years */
#define MAX_DOUBLE_VALUE 1.0e12

void mxq_power_config_defaults(struct mxq_power_config *cfg)
{
	*cfg = (struct mxq_power_config) {
		/* chosen on mxq-power-sim runs of the shipped traces (see
		 * mxqd(8), power.conf(5)): wake limits that do not scale with
		 * the cluster made wide demand wait for many boot rounds, and a
		 * warm pool or a long min_on_time cost energy without shortening
		 * waits measurably */
		.idle_time_s = MXQ_POWER_IDLE_AUTO,
		.idle_time_floor_s = 0,
		.idle_watts = 100.0,
		.busy_watts = 250.0,
		.boot_energy_j = 30000.0,
		.shutdown_energy_j = 3000.0,
		.warm_pool = 0,
		.suspend_rate = 0.0,
		.resume_rate = 300.0,
		.max_booting = 0,
		.max_powered_on = 0,
		.min_on_time_s = 0,
		.min_off_time_s = 30,
		.max_cycles_per_day = 24,
		.boot_deadline_s = 10 * 60,
		.shutdown_deadline_s = 5 * 60,
		.drain_timeout_s = 5 * 60,
		.breaker_failures = 3,
		.breaker_cooldown_s = 30 * 60,
		.failed_retry_delay_s = 10 * 60,
		.failed_retry_factor = 2.0,
		.failed_retries = 3,
		.boot_time_s = 3 * 60,
		.dry_run = false,
	};
}

static void free_exclude(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void mxq_power_config_done(struct mxq_power_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->class_pools);
	free_exclude(cfg->exclude, cfg->n_exclude);
	mxq_power_config_defaults(cfg);
}

int mxq_power_config_copy(struct mxq_power_config *ret_copy, const struct mxq_power_config *cfg)
{
	struct mxq_power_config c = *cfg;

	c.class_pools = NULL;
	c.exclude = NULL;
	if (cfg->n_class_pools) {
		c.class_pools = calloc(cfg->n_class_pools, sizeof(*c.class_pools));
		if (!c.class_pools)
			return -ENOMEM;
		memcpy(c.class_pools, cfg->class_pools, cfg->n_class_pools * sizeof(*c.class_pools));
	}
	if (cfg->n_exclude) {
		c.exclude = calloc(cfg->n_exclude, sizeof(*c.exclude));
		if (!c.exclude)
			goto fail;
		for (size_t i = 0; i < cfg->n_exclude; i++) {
			c.exclude[i] = strdup(cfg->exclude[i]);
			if (!c.exclude[i]) {
				c.n_exclude = i;
				goto fail;
			}
		}
	}
	*ret_copy = c;
	return 0;
fail:
	free(c.class_pools);
	free_exclude(c.exclude, c.n_exclude);
	return -ENOMEM;
}

/* Break-even time: an idle host uses the energy of a shutdown and a boot. */
static int64_t break_even_s(const struct mxq_power_config *cfg)
{
	if (!(cfg->idle_watts > 0.0))
		return 0;
	return ceil_div_s(cfg->boot_energy_j + cfg->shutdown_energy_j, cfg->idle_watts);
}

int64_t mxq_power_config_idle_time(const struct mxq_power_config *cfg)
{
	if (cfg->idle_time_s != MXQ_POWER_IDLE_AUTO)
		return cfg->idle_time_s;
	int64_t t = break_even_s(cfg);
	return t > cfg->idle_time_floor_s ? t : cfg->idle_time_floor_s;
}

static const struct mxq_power_gap_learn *learned_for(const struct mxq_power_state *state,
						     const char *node_class)
{
	const char *k = node_class ? node_class : "";

	for (uint32_t i = 0; i < state->n_learn && i < MXQ_POWER_LEARN_CLASSES; i++)
		if (strcmp(state->learn[i].node_class, k) == 0)
			return &state->learn[i];
	return NULL;
}

/* The learned entry of NODE_CLASS, made when there is none yet; NULL when
 * the table is full (that class is not learned). */
static struct mxq_power_gap_learn *learn_entry(struct mxq_power_state *st, const char *node_class)
{
	const char *k = node_class ? node_class : "";
	struct mxq_power_gap_learn *l = (struct mxq_power_gap_learn *)learned_for(st, k);

	if (!l) {
		if (st->n_learn >= MXQ_POWER_LEARN_CLASSES || strlen(k) >= MXQ_POWER_CLASS_NAME_MAX)
			return NULL;
		l = &st->learn[st->n_learn++];
		memset(l, 0, sizeof(*l));
		strcpy(l->node_class, k);
	}
	return l;
}

/* The candidate idle times in break-even times: fine where timeouts
 * usually win (a minute or two), then up to the horizon. */
static const double gap_edge_share[MXQ_POWER_GAP_EDGES] = {
	0.0, 1.0 / 32, 1.0 / 16, 1.0 / 8, 3.0 / 16, 1.0 / 4, 3.0 / 8, 1.0 / 2, 3.0 / 4,
	1.0, 1.5, MXQ_POWER_GAP_HORIZON,
};
#define GAP_FADE (1.0 - 1.0 / 4096) /* weight of the gaps before, per new gap */
#define GAP_TRUSTED 16               /* gaps counted before the idle time is learned */

int64_t mxq_power_gap_edge(const struct mxq_power_config *cfg, size_t k)
{
	if (k >= MXQ_POWER_GAP_EDGES)
		return INT64_MAX;
	return (int64_t)ceil((double)break_even_s(cfg) * gap_edge_share[k] - 1e-9);
}

/* Energy the gaps counted in L would have cost with idle time EDGE: a gap
 * not longer is idled through, a longer one idles EDGE and pays a power
 * cycle (the draw while off is not known to the policy and taken as 0). */
static double gap_cost(const struct mxq_power_config *cfg, const struct mxq_power_gap_learn *l,
		       size_t edge)
{
	double t = (double)mxq_power_gap_edge(cfg, edge);
	double cycle = cfg->boot_energy_j + cfg->shutdown_energy_j, cost = 0.0;

	for (size_t j = 0; j <= MXQ_POWER_GAP_EDGES; j++) {
		if (j <= edge)
			cost += cfg->idle_watts * l->length[j];
		else
			cost += l->weight[j] * (cfg->idle_watts * t + cycle);
	}
	return cost;
}

int64_t mxq_power_gap_idle_time(const struct mxq_power_config *cfg,
				const struct mxq_power_gap_learn *l)
{
	size_t best = 0;
	double best_cost = gap_cost(cfg, l, 0);

	for (size_t k = 1; k < MXQ_POWER_GAP_EDGES; k++) {
		double x = gap_cost(cfg, l, k);
		if (x < best_cost * (1.0 - 1e-9)) {
			best = k;
			best_cost = x;
		}
	}
	return mxq_power_gap_edge(cfg, best);
}

/* Count one gap of GAP seconds (INT64_MAX: longer than the horizon). */
static void gap_add(const struct mxq_power_config *cfg, struct mxq_power_gap_learn *l, int64_t gap)
{
	size_t j = 0;

	while (j < MXQ_POWER_GAP_EDGES && gap > mxq_power_gap_edge(cfg, j))
		j++;
	for (size_t k = 0; k <= MXQ_POWER_GAP_EDGES; k++) {
		l->weight[k] *= GAP_FADE;
		if (k < MXQ_POWER_GAP_EDGES)
			l->length[k] *= GAP_FADE;
	}
	l->weight[j] += 1.0;
	if (j < MXQ_POWER_GAP_EDGES)
		l->length[j] += (double)gap;
	if (l->seen < UINT32_MAX)
		l->seen++;
	l->idle_time_s = mxq_power_gap_idle_time(cfg, l);
}

/* NODE_CLASS's learned entry once it counted enough gaps to be used
 * (idle_time = auto); NULL before and otherwise. */
static const struct mxq_power_gap_learn *trusted_for(const struct mxq_power_config *cfg,
						     const struct mxq_power_state *state,
						     const char *node_class)
{
	const struct mxq_power_gap_learn *l;

	if (cfg->idle_time_s != MXQ_POWER_IDLE_AUTO || !state)
		return NULL;
	l = learned_for(state, node_class);
	return l && l->seen >= GAP_TRUSTED ? l : NULL;
}

bool mxq_power_idle_time_learned(const struct mxq_power_config *cfg,
				 const struct mxq_power_state *state, const char *node_class)
{
	return trusted_for(cfg, state, node_class) != NULL;
}

/* Before a class has its gaps counted: a quarter of the break-even time.
 * When the power manager first starts, every host that is idle is idle at
 * once, and a need wakes one host, not all of them: waiting a whole B
 * for each mostly buys idle energy (power.conf(5), HOW THE DEFAULTS WERE
 * CHOSEN). The first 16 gaps then say what the class's hosts need. */
int64_t mxq_power_idle_time_for(const struct mxq_power_config *cfg,
				const struct mxq_power_state *state, const char *node_class)
{
	const struct mxq_power_gap_learn *l = trusted_for(cfg, state, node_class);
	int64_t t;

	if (cfg->idle_time_s != MXQ_POWER_IDLE_AUTO)
		return cfg->idle_time_s;
	t = l ? l->idle_time_s : (break_even_s(cfg) + 3) / 4;  /* ceil(B / 4) */
	return t > cfg->idle_time_floor_s ? t : cfg->idle_time_floor_s;
}

/* Count what waited in L's windows before window W as longer than the
 * horizon, and make W the oldest one kept. */
static void gap_expire_before(const struct mxq_power_config *cfg, struct mxq_power_gap_learn *l,
			      int64_t w)
{
	int64_t stop = w - l->slot_first > MXQ_POWER_GAP_SLOTS ?
		       l->slot_first + MXQ_POWER_GAP_SLOTS : w;

	for (; l->slot_first < stop; l->slot_first++) {
		uint32_t *n = &l->slot[l->slot_first % MXQ_POWER_GAP_SLOTS];
		for (; *n; (*n)--)
			gap_add(cfg, l, INT64_MAX);
	}
	if (l->slot_first < w)
		l->slot_first = w;  /* the windows between were all empty */
}

/* L's windows for CFG's break-even time (all of them forgotten when it
 * changed); false when there are none (no break-even time). */
static bool gap_windows(const struct mxq_power_config *cfg, struct mxq_power_gap_learn *l)
{
	int64_t w = (break_even_s(cfg) + 31) / 32;

	if (w <= 0)
		return false;
	if (l->slot_s != w) {
		l->slot_s = w;
		l->slot_first = 0;
		memset(l->slot, 0, sizeof(l->slot));
	}
	return true;
}

/* L's windows as of NOW: the power-offs whose idle start is more than the
 * horizon before NOW counted as longer than it; false as gap_windows(). */
static bool gap_windows_at(const struct mxq_power_config *cfg, struct mxq_power_gap_learn *l,
			   int64_t now)
{
	int64_t t = now - mxq_power_gap_edge(cfg, MXQ_POWER_GAP_EDGES - 1);

	if (!gap_windows(cfg, l))
		return false;
	gap_expire_before(cfg, l, t >= 0 ? t / l->slot_s : 0);
	return true;
}

/* Power-offs and needs are matched (idle_time = auto); not in a dry run,
 * where nothing is powered off and every gap ends on its host. */
static bool matching_power_offs(const struct mxq_power_config *cfg)
{
	return cfg->idle_time_s == MXQ_POWER_IDLE_AUTO && !cfg->dry_run;
}

/* The policy decided to power off a host of NODE_CLASS idle since
 * IDLE_SINCE: its gap ends when the class next needs a host. */
static void learn_power_off(struct mxq_power_state *st, const struct mxq_power_config *cfg,
			    const char *node_class, int64_t idle_since, int64_t now)
{
	struct mxq_power_gap_learn *l;
	int64_t w;

	if (!matching_power_offs(cfg))
		return;
	l = learn_entry(st, node_class);
	if (!l || !gap_windows_at(cfg, l, now))
		return;
	w = idle_since / l->slot_s;
	if (w < l->slot_first) {
		gap_add(cfg, l, INT64_MAX);  /* idle longer than the horizon already */
		return;
	}
	gap_expire_before(cfg, l, w - MXQ_POWER_GAP_SLOTS + 1);
	l->slot[w % MXQ_POWER_GAP_SLOTS]++;
}

/* The class needs a host at NOW (an automatic wake, a cancelled drain): the
 * power-off of the latest idle start in the horizon would have served it
 * (the gap is taken to the middle of its window). */
static void learn_need(struct mxq_power_state *st, const struct mxq_power_config *cfg,
		       const char *node_class, int64_t now)
{
	struct mxq_power_gap_learn *l = (struct mxq_power_gap_learn *)learned_for(st, node_class);

	if (!matching_power_offs(cfg) || !l || !gap_windows_at(cfg, l, now))
		return;
	for (int64_t w = l->slot_first + MXQ_POWER_GAP_SLOTS - 1; w >= l->slot_first; w--) {
		uint32_t *n = &l->slot[w % MXQ_POWER_GAP_SLOTS];
		if (*n) {
			int64_t mid = w * l->slot_s + l->slot_s / 2;
			(*n)--;
			gap_add(cfg, l, now > mid ? now - mid : 0);
			return;
		}
	}
}

/* --- the state as text (mxq_power_leader.policy_state) ---------------- */

/* Count K of L in the order of the text: W0 .. W12, then L0 .. L11. */
#define GAP_FIELDS (2 * MXQ_POWER_GAP_EDGES + 1)
static const double *gap_field(const struct mxq_power_gap_learn *l, size_t k)
{
	return k <= MXQ_POWER_GAP_EDGES ? &l->weight[k] : &l->length[k - MXQ_POWER_GAP_EDGES - 1];
}

int mxq_power_state_to_text(const struct mxq_power_state *st, char *buf, size_t len)
{
	int n = snprintf(buf, len, "v1 %d %" PRId64 " %.6f %.6f %" PRIu32 " %" PRId64 " %" PRId64,
			 st->initialized ? 1 : 0, st->tokens_at, st->suspend_tokens,
			 st->resume_tokens, st->boot_failures, st->last_boot_failure_at,
			 st->breaker_open_until);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	for (uint32_t i = 0; i < st->n_learn && i < MXQ_POWER_LEARN_CLASSES; i++) {
		const struct mxq_power_gap_learn *l = &st->learn[i];
		int m = snprintf(buf + n, len - (size_t)n, " gaps %s %" PRIu32 " %" PRId64,
				 l->node_class[0] ? l->node_class : "*", l->seen, l->idle_time_s);
		for (size_t k = 0; m >= 0 && k < GAP_FIELDS; k++) {
			int x = snprintf(buf + n + m, (size_t)n + (size_t)m < len ?
					 len - (size_t)n - (size_t)m : 0, " %.4g", *gap_field(l, k));
			m = x < 0 ? -1 : m + x;
		}
		if (m < 0 || (size_t)(n + m) >= len) {
			buf[n] = '\0';  /* the rest is learned again */
			break;
		}
		n += m;
	}
	return n;
}

/* One "gaps CLASS SEEN IDLE W0 .. W12 L0 .. L11" part at P into L; the
 * length read, or -1. */
static int gaps_from_text(const char *p, struct mxq_power_gap_learn *l)
{
	char cls[MXQ_POWER_CLASS_NAME_MAX], err[128];
	int m = 0, x;

	memset(l, 0, sizeof(*l));
	if (sscanf(p, "gaps %63s %" SCNu32 " %" SCNd64 "%n", cls, &l->seen, &l->idle_time_s,
		   &m) != 3 || l->idle_time_s < 0 ||
	    (strcmp(cls, "*") != 0 && mxq_power_class_name_check(cls, err, sizeof(err)) < 0))
		return -1;
	snprintf(l->node_class, sizeof(l->node_class), "%s", strcmp(cls, "*") ? cls : "");
	for (size_t k = 0; k < GAP_FIELDS; k++) {
		double *v = (double *)gap_field(l, k);  /* L is ours to fill */
		if (sscanf(p + m, " %lf%n", v, &x) != 1 || !isfinite(*v) || *v < 0.0)
			return -1;
		m += x;
	}
	return m;
}

int mxq_power_state_from_text(const char *text, struct mxq_power_state *ret)
{
	struct mxq_power_state st = { 0 };
	int init = 0, used = 0;

	if (!text || sscanf(text, "v1 %d %" SCNd64 " %lf %lf %" SCNu32 " %" SCNd64 " %" SCNd64 "%n",
			    &init, &st.tokens_at, &st.suspend_tokens, &st.resume_tokens,
			    &st.boot_failures, &st.last_boot_failure_at, &st.breaker_open_until,
			    &used) != 7 || !isfinite(st.suspend_tokens) || !isfinite(st.resume_tokens)) {
		*ret = (struct mxq_power_state) { 0 };
		return -EINVAL;
	}
	st.initialized = init != 0;
	/* then what was learned per class, all or nothing; the "learn"
	 * parts of earlier versions (a share, not gaps) are learned again */
	for (const char *p = text + used; *p;) {
		int m = -1;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (st.n_learn < MXQ_POWER_LEARN_CLASSES)
			m = gaps_from_text(p, &st.learn[st.n_learn]);
		if (m < 0) {
			st.n_learn = 0;
			memset(st.learn, 0, sizeof(st.learn));
			break;
		}
		st.n_learn++;
		p += m;
	}
	*ret = st;
	return 0;
}

/* --- error collection ------------------------------------------------- */

struct errlist {
	char *buf;
	size_t len;
	size_t pos;
	unsigned count;
	const char *filename;
};

__attribute__((format(printf, 3, 4)))
static void parse_error(struct errlist *e, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	e->count++;
	if (!e->buf || e->len == 0 || e->pos + 1 >= e->len)
		return;
	if (e->pos > 0)
		e->buf[e->pos++] = '\n';
	if (line)
		n = snprintf(e->buf + e->pos, e->len - e->pos, "%s:%u: ", e->filename, line);
	else
		n = snprintf(e->buf + e->pos, e->len - e->pos, "%s: ", e->filename);
	if (n < 0 || (size_t)n >= e->len - e->pos) {
		e->pos = e->len - 1;
		return;
	}
	e->pos += (size_t)n;
	va_start(ap, fmt);
	n = vsnprintf(e->buf + e->pos, e->len - e->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= e->len - e->pos)
		e->pos = e->len - 1;
	else
		e->pos += (size_t)n;
}

/* --- value parsers: 0 or -EINVAL/-ERANGE, *ret untouched on failure ----- */

static int parse_duration(const char *s, int64_t *ret)
{
	double total = 0.0;
	bool any = false;

	while (*s) {
		char *end;
		double mult = 1.0;

		if (!isdigit((unsigned char)*s) && *s != '.')
			return -EINVAL;
		errno = 0;
		double v = strtod(s, &end);
		if (end == s || errno || !isfinite(v))
			return -EINVAL;
		s = end;
		switch (*s) {
		case 's': case 'S': mult = 1; s++; break;
		case 'm': case 'M': mult = 60; s++; break;
		case 'h': case 'H': mult = 3600; s++; break;
		case 'd': case 'D': mult = 86400; s++; break;
		case '\0': break;
		default: return -EINVAL;
		}
		total += v * mult;
		any = true;
		if (total > (double)MAX_DURATION_S)
			return -ERANGE;
	}
	if (!any)
		return -EINVAL;
	*ret = (int64_t)ceil(total);
	return 0;
}

static int parse_uint(const char *s, uint32_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return -ERANGE;
	}
	*ret = (uint32_t)v;
	return 0;
}

static int parse_double(const char *s, double *ret)
{
	char *end;

	if (!isdigit((unsigned char)*s) && *s != '.')
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return -EINVAL;
	if (v > MAX_DOUBLE_VALUE)
		return -ERANGE;
	*ret = v;
	return 0;
}

static int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

int mxq_power_class_name_check(const char *cls, char *err, size_t errlen)
{
	size_t len = strlen(cls);

	if (len == 0 || len >= MXQ_POWER_CLASS_NAME_MAX) {
		snprintf(err, errlen, "node class name must be 1 to %d characters",
			 MXQ_POWER_CLASS_NAME_MAX - 1);
		return -EINVAL;
	}
	for (const char *q = cls; *q; q++) {
		if (!is_name_char(*q)) {
			if ((unsigned char)*q > 0x20 && (unsigned char)*q < 0x7f)
				snprintf(err, errlen, "invalid character '%c' in node class '%.64s'",
					 *q, cls);
			else
				snprintf(err, errlen, "invalid character 0x%02x in a node class name",
					 (unsigned char)*q);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- "did you mean" ---------------------------------------------------- */

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];

	if (lb >= ARRAY_SIZE(row) || la >= 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (tolower((unsigned char)a[i - 1]) !=
					      tolower((unsigned char)b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *closest_key(const char *key)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (size_t i = 0; i < ARRAY_SIZE(knobs); i++) {
		size_t d = edit_distance(key, knobs[i].key);
		if (d < best_d) {
			best_d = d;
			best = knobs[i].key;
		}
	}
	size_t limit = strlen(key) / 3 + 1;
	return best_d <= (limit > 3 ? 3 : limit) ? best : NULL;
}

/* --- the parser ---------------------------------------------------------- */

struct parse_ctx {
	struct mxq_power_config cfg;    /* being built */
	struct errlist err;
	unsigned seen[ARRAY_SIZE(knobs)]; /* line a knob was set on, 0 = not set */
	unsigned class_seen[MXQ_POWER_CLASS_POOLS_MAX];
	bool nomem;
};

static int cmp_class_pool(const void *a, const void *b)
{
	return strcmp(((const struct mxq_power_class_pool *)a)->name,
		      ((const struct mxq_power_class_pool *)b)->name);
}

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_class_pool(struct parse_ctx *p, unsigned line, const char *cls, const char *value)
{
	struct mxq_power_config *c = &p->cfg;
	size_t len = strlen(cls);
	uint32_t count;
	char why[160];
	int r;

	if (mxq_power_class_name_check(cls, why, sizeof(why)) < 0) {
		parse_error(&p->err, line, "%s (after '%s')", why, CLASS_POOL_PREFIX);
		return;
	}
	r = parse_uint(value, &count);
	if (r < 0) {
		parse_error(&p->err, line, "warm_pool.%s: '%s' is not a node count%s", cls, value,
			    r == -ERANGE ? " (too large)" : "");
		return;
	}
	for (size_t i = 0; i < c->n_class_pools; i++) {
		if (strcmp(c->class_pools[i].name, cls) == 0) {
			parse_error(&p->err, line, "'warm_pool.%s' already set on line %u", cls,
				    p->class_seen[i]);
			return;
		}
	}
	if (c->n_class_pools >= MXQ_POWER_CLASS_POOLS_MAX) {
		parse_error(&p->err, line, "more than %d warm_pool.CLASS entries",
			    MXQ_POWER_CLASS_POOLS_MAX);
		return;
	}
	struct mxq_power_class_pool *np = realloc(c->class_pools,
						  (c->n_class_pools + 1) * sizeof(*np));
	if (!np) {
		p->nomem = true;
		return;
	}
	c->class_pools = np;
	memset(&np[c->n_class_pools], 0, sizeof(*np));
	memcpy(np[c->n_class_pools].name, cls, len + 1);
	np[c->n_class_pools].count = count;
	p->class_seen[c->n_class_pools] = line;
	c->n_class_pools++;
}

static void add_hosts(struct parse_ctx *p, unsigned line, char *value)
{
	struct mxq_power_config *c = &p->cfg;
	char *save = NULL;

	for (char *w = strtok_r(value, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		bool ok = true;
		for (const char *q = w; *q; q++)
			ok = ok && is_name_char(*q);
		if (!ok) {
			parse_error(&p->err, line, "exclude: '%s' is not a host name", w);
			continue;
		}
		if (c->n_exclude >= MXQ_POWER_EXCLUDE_MAX) {
			parse_error(&p->err, line, "exclude: more than %d hosts", MXQ_POWER_EXCLUDE_MAX);
			return;
		}
		char **nl = realloc(c->exclude, (c->n_exclude + 1) * sizeof(*nl));
		if (!nl) {
			p->nomem = true;
			return;
		}
		c->exclude = nl;
		if (!(nl[c->n_exclude] = strdup(w))) {
			p->nomem = true;
			return;
		}
		c->n_exclude++;
	}
}

static void set_knob(struct parse_ctx *p, unsigned line, size_t k, char *value)
{
	const struct knob *kn = &knobs[k];
	void *field = (char *)&p->cfg + kn->offset;
	int r = 0;

	if (kn->type != KNOB_HOSTS) {
		if (p->seen[k]) {
			parse_error(&p->err, line, "'%s' already set on line %u", kn->key, p->seen[k]);
			return;
		}
		if (!*value) {
			parse_error(&p->err, line, "'%s' needs a value", kn->key);
			return;
		}
	}
	p->seen[k] = line;

	switch (kn->type) {
	case KNOB_IDLE:
		if (strcasecmp(value, "auto") == 0) {
			*(int64_t *)field = MXQ_POWER_IDLE_AUTO;
			return;
		}
		if (strcasecmp(value, "never") == 0) {
			*(int64_t *)field = MXQ_POWER_IDLE_NEVER;
			return;
		}
		/* fall through */
	case KNOB_DURATION:
		r = parse_duration(value, (int64_t *)field);
		if (r < 0)
			parse_error(&p->err, line, "%s: '%s' is not a duration (NUMBER with s, m, h "
				    "or d, bare = seconds%s)%s", kn->key, value,
				    kn->type == KNOB_IDLE ? ", or auto, never" : "",
				    r == -ERANGE ? ": too long" : "");
		return;
	case KNOB_UINT:
		r = parse_uint(value, (uint32_t *)field);
		if (r < 0)
			parse_error(&p->err, line, "%s: '%s' is not a whole number%s", kn->key, value,
				    r == -ERANGE ? " in range" : "");
		return;
	case KNOB_DOUBLE:
		r = parse_double(value, (double *)field);
		if (r < 0)
			parse_error(&p->err, line, "%s: '%s' is not a number >= 0%s", kn->key, value,
				    r == -ERANGE ? " (too large)" : "");
		return;
	case KNOB_BOOL:
		if (parse_bool(value, (bool *)field) < 0)
			parse_error(&p->err, line, "%s: '%s' is not yes or no", kn->key, value);
		return;
	case KNOB_HOSTS:
		add_hosts(p, line, value);
		return;
	}
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

static void parse_line(struct parse_ctx *p, unsigned line, char *text)
{
	char *hash = strchr(text, '#');
	if (hash)
		*hash = '\0';
	text = trim(text);
	if (!*text)
		return;

	char *eq = strchr(text, '=');
	if (!eq) {
		parse_error(&p->err, line, "expected 'key = value', found '%s'", text);
		return;
	}
	*eq = '\0';
	char *key = trim(text);
	char *value = trim(eq + 1);

	if (!*key) {
		parse_error(&p->err, line, "missing key before '='");
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(knobs); k++) {
		if (strcmp(key, knobs[k].key) == 0) {
			set_knob(p, line, k, value);
			return;
		}
	}
	if (strncmp(key, CLASS_POOL_PREFIX, strlen(CLASS_POOL_PREFIX)) == 0) {
		set_class_pool(p, line, key + strlen(CLASS_POOL_PREFIX), value);
		return;
	}

	const char *dot = strchr(key, '.');
	if (dot) {
		/* a misspelt "warm_pool.CLASS" */
		char prefix[64];
		size_t n = (size_t)(dot - key);
		if (n < sizeof(prefix)) {
			memcpy(prefix, key, n);
			prefix[n] = '\0';
			if (edit_distance(prefix, "warm_pool") <= 3) {
				parse_error(&p->err, line, "unknown key '%s' (did you mean 'warm_pool%s'?)",
					    key, dot);
				return;
			}
		}
	}
	const char *hint = closest_key(key);
	if (hint)
		parse_error(&p->err, line, "unknown key '%s' (did you mean '%s'?)", key, hint);
	else
		parse_error(&p->err, line, "unknown key '%s'", key);
}

static unsigned seen_line(const struct parse_ctx *p, const char *key)
{
	for (size_t k = 0; k < ARRAY_SIZE(knobs); k++)
		if (strcmp(knobs[k].key, key) == 0)
			return p->seen[k];
	return 0;
}

/* Rules that involve more than one key. */
static void check_consistency(struct parse_ctx *p)
{
	struct mxq_power_config *c = &p->cfg;
	static const char *const positive[] = { "boot_deadline", "shutdown_deadline",
						"drain_timeout" };

	for (size_t i = 0; i < ARRAY_SIZE(positive); i++) {
		for (size_t k = 0; k < ARRAY_SIZE(knobs); k++) {
			if (strcmp(knobs[k].key, positive[i]) != 0)
				continue;
			if (*(int64_t *)((char *)c + knobs[k].offset) <= 0)
				parse_error(&p->err, p->seen[k], "%s must be longer than 0s",
					    knobs[k].key);
		}
	}
	if (c->failed_retry_factor < 1.0)
		parse_error(&p->err, seen_line(p, "failed_retry_factor"),
			    "failed_retry_factor must be at least 1 (each retry waits at least as "
			    "long as the one before)");
	if (c->idle_time_s == MXQ_POWER_IDLE_AUTO && !(c->idle_watts > 0.0))
		parse_error(&p->err, seen_line(p, "idle_time"),
			    "idle_time = auto needs idle_watts greater than 0");
	if (c->max_power_watts > 0.0 && !(c->busy_watts > 0.0))
		parse_error(&p->err, seen_line(p, "max_power_watts"),
			    "max_power_watts needs busy_watts greater than 0 (what one node may draw)");
	if (c->max_power_watts > 0.0 && c->busy_watts > c->max_power_watts)
		parse_error(&p->err, seen_line(p, "max_power_watts"),
			    "max_power_watts (%g W) is below busy_watts (%g W): no node could ever "
			    "be woken", c->max_power_watts, c->busy_watts);
	if (c->boot_deadline_s > 0 && c->boot_deadline_s < c->boot_time_s) {
		char a[32], b[32];
		unsigned l = seen_line(p, "boot_deadline");
		format_duration(c->boot_deadline_s, a, sizeof(a));
		format_duration(c->boot_time_s, b, sizeof(b));
		parse_error(&p->err, l ? l : seen_line(p, "boot_time"),
			    "boot_deadline (%s) is shorter than boot_time (%s): every boot would fail",
			    a, b);
	}
}

int mxq_power_config_parse(struct mxq_power_config *cfg, const char *text,
			   const char *filename, char *errbuf, size_t errlen)
{
	struct parse_ctx *p;
	char *copy, *line;
	unsigned lineno = 0;
	int r = 0;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!cfg || !text)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	copy = strdup(text);
	if (!p || !copy) {
		free(p);
		free(copy);
		return -ENOMEM;
	}
	mxq_power_config_defaults(&p->cfg);
	p->err = (struct errlist) { .buf = errbuf, .len = errlen,
				    .filename = filename ? filename : "power.conf" };

	/* by hand, not strtok: empty lines must still count */
	line = copy;
	while (line) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		parse_line(p, lineno, line);
		line = next;
	}
	if (!p->nomem)
		check_consistency(p);

	if (p->nomem) {
		r = -ENOMEM;
	} else if (p->err.count) {
		r = -EINVAL;
	} else {
		struct mxq_power_config *c = &p->cfg;
		if (c->n_class_pools)
			qsort(c->class_pools, c->n_class_pools, sizeof(*c->class_pools),
			      cmp_class_pool);
		if (c->n_exclude)
			qsort(c->exclude, c->n_exclude, sizeof(*c->exclude), cmp_str_ptr);
		size_t out = 0;
		for (size_t i = 0; i < c->n_exclude; i++) {
			if (out && strcmp(c->exclude[out - 1], c->exclude[i]) == 0)
				free(c->exclude[i]);
			else
				c->exclude[out++] = c->exclude[i];
		}
		c->n_exclude = out;
		mxq_power_config_done(cfg);
		*cfg = *c;
		mxq_power_config_defaults(c);   /* ownership moved */
	}
	mxq_power_config_done(&p->cfg);
	free(p);
	free(copy);
	return r;
}

/* --- dump and hash ------------------------------------------------------ */

struct strbuf {
	char *s;
	size_t len;
	size_t cap;
	bool nomem;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->nomem)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->nomem = true;
			return;
		}
		if (b->s && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
		char *ns = realloc(b->s, cap);
		if (!ns) {
			b->nomem = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
}

char *mxq_power_config_dump(const struct mxq_power_config *cfg)
{
	struct strbuf b = { 0 };
	char v[64];

	for (size_t k = 0; k < ARRAY_SIZE(knobs); k++) {
		const struct knob *kn = &knobs[k];
		const void *field = (const char *)cfg + kn->offset;

		switch (kn->type) {
		case KNOB_IDLE:
			if (*(const int64_t *)field == MXQ_POWER_IDLE_AUTO) {
				sb_printf(&b, "%s = auto\n", kn->key);
				break;
			}
			if (*(const int64_t *)field == MXQ_POWER_IDLE_NEVER) {
				sb_printf(&b, "%s = never\n", kn->key);
				break;
			}
			/* fall through */
		case KNOB_DURATION:
			format_duration_exact(*(const int64_t *)field, v, sizeof(v));
			sb_printf(&b, "%s = %s\n", kn->key, v);
			break;
		case KNOB_UINT:
			sb_printf(&b, "%s = %" PRIu32 "\n", kn->key, *(const uint32_t *)field);
			break;
		case KNOB_DOUBLE:
			format_double(*(const double *)field, v, sizeof(v));
			sb_printf(&b, "%s = %s\n", kn->key, v);
			break;
		case KNOB_BOOL:
			sb_printf(&b, "%s = %s\n", kn->key, *(const bool *)field ? "yes" : "no");
			break;
		case KNOB_HOSTS:
			sb_printf(&b, "%s =", kn->key);
			for (size_t i = 0; i < cfg->n_exclude; i++)
				sb_printf(&b, " %s", cfg->exclude[i]);
			sb_printf(&b, "\n");
			break;
		}
		if (strcmp(kn->key, "warm_pool") == 0)
			for (size_t i = 0; i < cfg->n_class_pools; i++)
				sb_printf(&b, CLASS_POOL_PREFIX "%s = %" PRIu32 "\n",
					  cfg->class_pools[i].name, cfg->class_pools[i].count);
	}
	if (b.nomem) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* 64-bit FNV-1a of the string S. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

uint64_t mxq_power_config_hash(const struct mxq_power_config *cfg)
{
	char *text = mxq_power_config_dump(cfg);
	uint64_t h;

	if (!text)
		return 0;
	h = fnv1a(text);
	free(text);
	return h ? h : 1;
}

bool mxq_power_config_excludes(const struct mxq_power_config *cfg, const char *hostname)
{
	char shortname[256];
	const char *dot;

	if (!cfg->n_exclude)
		return false;
	if (bsearch(&hostname, cfg->exclude, cfg->n_exclude, sizeof(char *), cmp_str_ptr))
		return true;
	dot = strchr(hostname, '.');
	if (!dot || (size_t)(dot - hostname) >= sizeof(shortname))
		return false;
	memcpy(shortname, hostname, (size_t)(dot - hostname));
	shortname[dot - hostname] = '\0';
	const char *key = shortname;
	return bsearch(&key, cfg->exclude, cfg->n_exclude, sizeof(char *), cmp_str_ptr) != NULL;
}

static uint32_t class_pool_count(const struct mxq_power_config *cfg, const char *cls, size_t *ret_idx)
{
	if (!cls || !*cls)
		return 0;
	for (size_t i = 0; i < cfg->n_class_pools; i++) {
		if (strcmp(cfg->class_pools[i].name, cls) == 0) {
			*ret_idx = i;
			return cfg->class_pools[i].count;
		}
	}
	return 0;
}

/* ======================================================================
 * Deciding
 */

#define NO_DEMAND SIZE_MAX
#define NIL SIZE_MAX

/* Room on a node, in the units a job asks for. */
struct room {
	uint64_t slots;
	uint64_t memory_mib;
	uint64_t gpus;
	uint64_t tmpdir_mib;
};

enum wake_limit {
	WAKE_LIMIT_NONE,
	WAKE_LIMIT_BREAKER,
	WAKE_LIMIT_RESUME_RATE,
	WAKE_LIMIT_MAX_BOOTING,
	WAKE_LIMIT_MAX_POWERED_ON,
	WAKE_LIMIT_POWER_BUDGET,
};

/* Working record of one node during a tick. */
struct work_node {
	const struct mxq_power_node *n;
	enum mxq_power_node_state eff;  /* state after this plan's actions */
	bool acted;
	bool managed;                   /* not excluded */
	bool capacity;                  /* may take demand this tick */
	bool tmpdir_known;
	struct room free;               /* free now */
	struct room soon;               /* freed by jobs ending before a boot finishes */
	uint64_t placed;                /* jobs of pending demand placed here */
	size_t placed_demand;           /* first demand placed here */
	size_t stamp;                   /* demand last looked at here */
	bool qualified;                 /* server_is_qualified() for that demand */
	bool reserved;                  /* one of the nodes the first gang waits for */
	uint64_t placed_this;           /* jobs of that demand placed here */
	const char *note;               /* explanation, when set */
	size_t next;                    /* list link */
	uint32_t gen;                   /* decision this record was set up for */
	bool cap_done;                  /* capacity_of() ran (or take_node()) */
};

/* Singly linked list of work nodes, kept in efficiency order. */
struct node_list {
	size_t head;
	size_t tail;
};

struct decide_ctx {
	const struct mxq_power_snapshot *snap;
	const struct mxq_power_config *cfg;
	int64_t now;
	struct mxq_power_state st;      /* copy, written back on success */
	struct work_node *w;
	struct mxq_power_plan plan;
	size_t actions_cap;
	bool nomem;

	int64_t idle_time_s;
	bool breaker_open;
	uint32_t booting;               /* POWERING_ON after this plan's actions */
	uint32_t powered;               /* ON + POWERING_ON + DRAINING, same */
	double powered_w;               /* what they may draw (max_power_watts), same */
	uint64_t pending;               /* pending jobs in the snapshot */
	uint64_t unplaced;              /* pending jobs no node takes */
	uint32_t woken;                 /* wakes in this plan */

	struct node_list open;          /* capacity with free room */
	struct node_list soon;          /* capacity with room freeing soon */
	struct node_list reclaim;       /* DRAINING nodes that may be taken back */
	struct room wake_max;           /* at least the largest room of any wakeable node */
	bool wake_max_tmpdir_known;
	struct room *smallest_from;     /* [d]: smallest job of demand d..end */
	struct mxq_power_free_time *gang_t; /* scratch of gang_deferral(), n_nodes long:
					       the gang_depth earliest candidates seen,
					       a heap of gang_h, the latest first */
	size_t gang_h, gang_depth;
	uint64_t busy_cap_slots;        /* most free slots of a busy capacity node */
	size_t shadow_demand;           /* the first gang demand, NO_DEMAND = none */
	int64_t shadow;                 /* when its nodes are all free */
	uint64_t deferred;              /* pending jobs of deferred gangs */
	int64_t deferred_wake;          /* the earliest of their wakes ahead; 0: none */
	enum wake_limit wake_blocked;   /* why wakes stopped, if they did */
	/* in the snapshot, so that passes over every node that would find
	 * nothing to do are left out (a 5,000-node simulation asks often) */
	size_t admin_requests;          /* nodes with admin_request */
	size_t nodes_without_caps;      /* nodes that never registered */
	struct mxq_power_index *ix;     /* which nodes each step looks at */
	uint32_t gen;                   /* this decision, for work() */
	size_t *acted;                  /* nodes with an action, in the order of the first */
	size_t n_acted;
	uint64_t *acted_pos;            /* the same by position, a bitmap */
	const uint64_t *no_nodes;       /* an empty one */
	size_t *reserved;               /* the nodes the first gang waits for */
	size_t n_reserved;
	uint64_t changes;               /* jobs placed and actions added so far */
	uint32_t max_need;              /* nodes_at_once of the widest pending gang */
	struct gang_memo {              /* the last later gang's candidates, by
	                                   whether the reserved nodes are lent */
		bool valid;
		uint64_t changes;       /* c->changes then: no node changed since */
		const struct mxq_group_reqs *reqs;
		bool lent_qualified;    /* one of the lent nodes qualified */
		uint32_t depth;         /* t holds at least the DEPTH earliest */
		uint32_t early;
		size_t n;
		struct mxq_power_free_time *t;  /* n_nodes long, the DEPTH
		                                   earliest of n first, sorted */
	} memo[2];
};

/*
 * Node I's working record for this decision, set up at its first use: the
 * nodes no step looks at (most of a large cluster) cost nothing.
 */
static struct work_node *work(struct decide_ctx *c, size_t i)
{
	struct work_node *wn = &c->w[i];

	if (wn->gen != c->gen) {
		const struct mxq_power_node *n = &c->snap->nodes[i];
		*wn = (struct work_node) {
			.n = n, .eff = n->state, .managed = c->ix->node[i].managed,
			.placed_demand = NO_DEMAND, .stamp = NO_DEMAND, .next = NIL,
			.gen = c->gen,
		};
	}
	return wn;
}

static void list_append(struct decide_ctx *c, struct node_list *l, size_t i)
{
	work(c, i)->next = NIL;
	if (l->tail == NIL)
		l->head = i;
	else
		work(c, l->tail)->next = i;
	l->tail = i;
}

static void list_prepend(struct decide_ctx *c, struct node_list *l, size_t i)
{
	work(c, i)->next = l->head;
	l->head = i;
	if (l->tail == NIL)
		l->tail = i;
}

/* Remove I, whose predecessor is PREV (NIL for the head). */
static void list_remove(struct decide_ctx *c, struct node_list *l, size_t prev, size_t i)
{
	size_t next = work(c, i)->next;

	if (prev == NIL)
		l->head = next;
	else
		work(c, prev)->next = next;
	if (l->tail == i)
		l->tail = prev;
	work(c, i)->next = NIL;
}

static const char *plan_str(struct decide_ctx *c, const char *s)
{
	const char *p = arena_strdup(c->plan.arena, s);
	if (!p)
		c->nomem = true;
	return p;
}

__attribute__((format(printf, 2, 3)))
static const char *plan_printf(struct decide_ctx *c, const char *fmt, ...)
{
	char small[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	return plan_str(c, small);
}

/* What node N may draw in STATE for max_power_watts: a powered node (also
 * one going off) at its reading, but at least busy_watts; nothing off. */
static double budget_watts(const struct mxq_power_config *cfg, const struct mxq_power_node *n,
			   enum mxq_power_node_state state)
{
	if (!mxq_power_state_counts_as_powered(state) && state != MXQ_POWER_POWERING_OFF)
		return 0.0;
	return n->watts > cfg->busy_watts ? n->watts : cfg->busy_watts;
}

static void add_action(struct decide_ctx *c, size_t i, enum mxq_power_action_kind kind,
		       enum mxq_power_node_state to, const char *reason)
{
	struct work_node *wn = work(c, i);

	if (c->plan.n_actions == c->actions_cap) {
		size_t cap = c->actions_cap ? c->actions_cap * 2 : 16;
		struct mxq_power_action *na = realloc(c->plan.actions, cap * sizeof(*na));
		if (!na) {
			c->nomem = true;
			return;
		}
		c->plan.actions = na;
		c->actions_cap = cap;
	}
	c->changes++;
	c->plan.actions[c->plan.n_actions++] = (struct mxq_power_action) {
		.hostname = plan_str(c, wn->n->hostname),
		.node_index = i,
		.kind = kind,
		.from = wn->eff,
		.to = to,
		.reason = reason,
	};
	if (mxq_power_state_counts_as_powered(wn->eff) && c->powered)
		c->powered--;
	if (wn->eff == MXQ_POWER_POWERING_ON && c->booting)
		c->booting--;
	if (mxq_power_state_counts_as_powered(to))
		c->powered++;
	if (to == MXQ_POWER_POWERING_ON)
		c->booting++;
	c->powered_w += budget_watts(c->cfg, wn->n, to) - budget_watts(c->cfg, wn->n, wn->eff);
	if (kind == MXQ_POWER_ACTION_WAKE && wn->eff == MXQ_POWER_OFF && !wn->n->admin_wake)
		learn_need(&c->st, c->cfg, wn->n->node_class, c->now);
	wn->eff = to;
	if (!wn->acted) {
		size_t k = c->ix->pos[i];
		c->acted[c->n_acted++] = i;
		c->acted_pos[k / 64] |= UINT64_C(1) << (k % 64);
	}
	wn->acted = true;
	wn->note = reason;
}

/* Whether the plan carries explanations (the simulator asks for none). */
static bool explaining(const struct decide_ctx *c)
{
	return !c->snap->no_explanations;
}

/* Set the explanation of WN, which is no action's reason: only formatted
 * when the plan carries explanations. */
#define EXPLAIN(c, wn, ...) do { \
		if (explaining(c)) \
			(wn)->note = plan_printf((c), __VA_ARGS__); \
	} while (0)

static void dur(int64_t secs, char *buf, size_t len)
{
	format_duration(secs, buf, len);
}

static void when(int64_t epoch, char *buf, size_t len)
{
	format_when(epoch, buf, len);
}

/* --- demand description ------------------------------------------------ */

static const char *demand_label(struct decide_ctx *c, size_t d, char *buf, size_t len)
{
	const struct mxq_power_demand *dm = &c->snap->demand[d];

	if (dm->label && *dm->label)
		return dm->label;
	snprintf(buf, len, "signature #%zu", d);
	return buf;
}

/* "needs 4 threads, 8192 MiB, 1 GPU, prerequisites 'a100'" */
static void describe_needs(const struct mxq_group_reqs *q, char *buf, size_t len)
{
	size_t pos = 0;
	int n;

#define APPEND(...) do { \
		n = snprintf(buf + pos, len - pos, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= len - pos) return; \
		pos += (size_t)n; \
	} while (0)

	buf[0] = '\0';
	APPEND("needs %" PRIu32 " thread%s, %" PRIu64 " MiB", q->threads ? q->threads : 1,
	       q->threads > 1 ? "s" : "", q->memory_mib);
	if (q->gpus)
		APPEND(", %" PRIu32 " GPU%s", q->gpus, q->gpus > 1 ? "s" : "");
	if (q->tmpdir_mib)
		APPEND(", %" PRIu64 " MiB tmpdir", q->tmpdir_mib);
	if (q->prerequisites_invalid)
		APPEND(", invalid prerequisites");
	else if (q->prerequisites)
		APPEND(", prerequisites '%s'", mxq_expr_text(q->prerequisites));
	if (q->whitelist && !keywordset_is_empty(q->whitelist))
		APPEND(", whitelist of %zu host%s", keywordset_count(q->whitelist),
		       keywordset_count(q->whitelist) > 1 ? "s" : "");
#undef APPEND
}

/* --- room accounting ------------------------------------------------------ */

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* How many jobs of Q fit into R. */
static uint64_t jobs_fitting(const struct room *r, const struct mxq_group_reqs *q, bool tmpdir_known)
{
	uint64_t n = r->slots / (q->threads ? q->threads : 1);

	if (q->memory_mib)
		n = min_u64(n, r->memory_mib / q->memory_mib);
	if (q->gpus)
		n = min_u64(n, r->gpus / q->gpus);
	if (q->tmpdir_mib && tmpdir_known)
		n = min_u64(n, r->tmpdir_mib / q->tmpdir_mib);
	return n;
}

static void room_take(struct room *r, const struct mxq_group_reqs *q, uint64_t jobs)
{
	uint64_t t = q->threads ? q->threads : 1;
	r->slots -= min_u64(r->slots, t * jobs);
	r->memory_mib -= min_u64(r->memory_mib, q->memory_mib * jobs);
	r->gpus -= min_u64(r->gpus, (uint64_t)q->gpus * jobs);
	r->tmpdir_mib -= min_u64(r->tmpdir_mib, q->tmpdir_mib * jobs);
}

static struct room room_sum(const struct room *a, const struct room *b)
{
	return (struct room) {
		.slots = a->slots + b->slots,
		.memory_mib = a->memory_mib + b->memory_mib,
		.gpus = a->gpus + b->gpus,
		.tmpdir_mib = a->tmpdir_mib + b->tmpdir_mib,
	};
}

/* Take from FREE first, the rest from SOON. */
static void room_take_split(struct room *fr, struct room *so, const struct mxq_group_reqs *q,
			    uint64_t jobs)
{
	struct room need = { 0 };
	uint64_t t = q->threads ? q->threads : 1;

	need.slots = t * jobs;
	need.memory_mib = q->memory_mib * jobs;
	need.gpus = (uint64_t)q->gpus * jobs;
	need.tmpdir_mib = q->tmpdir_mib * jobs;
#define SPLIT(f) do { \
		uint64_t a = min_u64(fr->f, need.f); \
		fr->f -= a; \
		so->f -= min_u64(so->f, need.f - a); \
	} while (0)
	SPLIT(slots);
	SPLIT(memory_mib);
	SPLIT(gpus);
	SPLIT(tmpdir_mib);
#undef SPLIT
}

static struct room caps_room(const struct mxq_server_caps *caps)
{
	return (struct room) {
		.slots = caps->slots,
		.memory_mib = caps->memory_mib,
		.gpus = caps->gpus,
		.tmpdir_mib = caps->tmpdir_total_mib,
	};
}

/* What node N's caps leave beside what its running jobs hold. */
static struct room room_left(const struct mxq_power_node *n)
{
	struct room r = caps_room(n->caps);

	r.slots -= min_u64(r.slots, n->used_slots);
	r.memory_mib -= min_u64(r.memory_mib, n->used_memory_mib);
	r.gpus -= min_u64(r.gpus, n->used_gpus);
	r.tmpdir_mib -= min_u64(r.tmpdir_mib, n->used_tmpdir_mib);
	return r;
}

static bool room_empty(const struct room *r)
{
	return r->slots == 0;
}

/*
 * Can R still take the smallest job of demand D or any later entry? Nodes
 * that cannot leave the lists, so a queue longer than the cluster does not
 * make every later signature walk past full nodes.
 */
static bool room_useful(const struct decide_ctx *c, const struct room *r, size_t d)
{
	const struct room *min = &c->smallest_from[d];

	return r->slots >= min->slots && r->memory_mib >= min->memory_mib &&
	       r->gpus >= min->gpus;
}

/* The plan for the same snapshot may differ from time T on (see
 * mxq_power_plan.next_change_at); times not after now are no change. */
static void change_at(struct decide_ctx *c, int64_t t)
{
	if (t > c->now && (!c->plan.next_change_at || t < c->plan.next_change_at))
		c->plan.next_change_at = t;
}

/* A decision at T depends on the clock alone (mxq_power_plan.recheck_at). */
static void recheck_at(struct decide_ctx *c, int64_t t)
{
	if (!c->plan.recheck_at || t < c->plan.recheck_at)
		c->plan.recheck_at = t;
}

/* Qualification of node I for demand D, asked once per pair. */
static bool qualified_for(struct decide_ctx *c, size_t i, size_t d)
{
	struct work_node *wn = work(c, i);

	if (wn->stamp != d) {
		wn->stamp = d;
		wn->placed_this = 0;
		wn->qualified = server_is_qualified(wn->n->caps, c->snap->demand[d].reqs, NULL);
		int64_t run = c->snap->demand[d].run_s ? c->snap->demand[d].run_s :
			      (int64_t)c->snap->demand[d].reqs->time_min * 60;
		if (wn->qualified && wn->reserved && d != c->shadow_demand &&
		    (!run || c->now + run > c->shadow))
			wn->qualified = false;   /* would delay the gang it is kept for */
		else if (wn->qualified && wn->reserved && d != c->shadow_demand)
			change_at(c, c->shadow - run + 1);  /* from then on it would */
	}
	return wn->qualified;
}

/* Jobs of D node I may still take under max_per_node. */
static uint64_t per_node_left(struct decide_ctx *c, size_t i, size_t d)
{
	uint32_t max = c->snap->demand[d].max_per_node;
	struct work_node *wn = work(c, i);

	if (!max)
		return UINT64_MAX;
	return wn->placed_this >= max ? 0 : max - wn->placed_this;
}

static void note_placed(struct decide_ctx *c, size_t i, size_t d, uint64_t jobs)
{
	struct work_node *wn = work(c, i);

	c->changes++;
	wn->placed += jobs;
	wn->placed_this += jobs;
	if (wn->placed_demand == NO_DEMAND)
		wn->placed_demand = d;
}

/*
 * Place up to *remaining jobs of D on the nodes of L. With USE_SOON the room
 * freeing soon counts as well. Nodes left without room leave the list.
 * Returns the number of jobs placed.
 */
static uint64_t place_on_list(struct decide_ctx *c, struct node_list *l, size_t d,
			      uint64_t *remaining, bool use_soon)
{
	const struct mxq_group_reqs *q = c->snap->demand[d].reqs;
	uint64_t placed = 0;
	size_t prev = NIL;

	for (size_t i = l->head; i != NIL && *remaining > 0;) {
		struct work_node *wn = work(c, i);
		size_t next = wn->next;
		struct room avail = use_soon ? room_sum(&wn->free, &wn->soon) : wn->free;

		if (!room_useful(c, &avail, d)) {
			list_remove(c, l, prev, i);
			i = next;
			continue;
		}
		uint64_t fit = jobs_fitting(&avail, q, wn->tmpdir_known);
		if (fit > 0 && qualified_for(c, i, d)) {
			fit = min_u64(fit, per_node_left(c, i, d));
			fit = min_u64(fit, *remaining);
			if (fit > 0) {
				if (use_soon)
					room_take_split(&wn->free, &wn->soon, q, fit);
				else
					room_take(&wn->free, q, fit);
				note_placed(c, i, d, fit);
				*remaining -= fit;
				placed += fit;
			}
		}
		avail = use_soon ? room_sum(&wn->free, &wn->soon) : wn->free;
		if (!room_useful(c, &avail, d)) {
			list_remove(c, l, prev, i);
		} else {
			prev = i;
		}
		i = next;
	}
	return placed;
}

/* --- step 1: buckets and breaker ------------------------------------------ */

static double bucket_size(double rate)
{
	return rate > 1.0 ? rate : 1.0;
}

static void refill_buckets(struct decide_ctx *c)
{
	struct mxq_power_state *st = &c->st;
	const struct mxq_power_config *cfg = c->cfg;

	if (!st->initialized) {
		st->initialized = true;
		st->suspend_tokens = bucket_size(cfg->suspend_rate);
		st->resume_tokens = bucket_size(cfg->resume_rate);
		st->tokens_at = c->now;
		return;
	}
	if (c->now > st->tokens_at) {
		double minutes = (double)(c->now - st->tokens_at) / 60.0;
		st->suspend_tokens += cfg->suspend_rate * minutes;
		st->resume_tokens += cfg->resume_rate * minutes;
	}
	/* a clock stepping back refills nothing, it only moves the mark */
	st->tokens_at = c->now;
	if (st->suspend_tokens > bucket_size(cfg->suspend_rate))
		st->suspend_tokens = bucket_size(cfg->suspend_rate);
	if (st->resume_tokens > bucket_size(cfg->resume_rate))
		st->resume_tokens = bucket_size(cfg->resume_rate);
	if (st->suspend_tokens < 0)
		st->suspend_tokens = 0;
	if (st->resume_tokens < 0)
		st->resume_tokens = 0;
}

static void settle_breaker_before(struct decide_ctx *c)
{
	struct mxq_power_state *st = &c->st;

	/* a boot that completed after the last failure ends the streak */
	for (size_t i = 0; i < c->snap->n_nodes && st->boot_failures; i++)
		if (c->snap->nodes[i].last_boot_ok_at > st->last_boot_failure_at)
			st->boot_failures = 0;
}

static void record_boot_result(struct decide_ctx *c, bool ok)
{
	struct mxq_power_state *st = &c->st;

	if (ok) {
		st->boot_failures = 0;
		return;
	}
	st->boot_failures++;
	st->last_boot_failure_at = c->now;
	if (c->cfg->breaker_failures && st->boot_failures >= c->cfg->breaker_failures)
		st->breaker_open_until = c->now + c->cfg->breaker_cooldown_s;
}

/* --- step 2: per-node transitions ------------------------------------------ */

/* The reason of a RESEND of this leader's own intent that it never sent. */
#define UNSENT_TEXT(what) \
	what " sent now: this leader wrote it at an earlier decision but did not send it " \
	"(the database connection was lost at the commit, or the lease ran short before " \
	"the call)"

/* An earlier leader's call may still land: no wake or power-off yet. */
static bool fenced(const struct decide_ctx *c, size_t i)
{
	return c->snap->nodes[i].fence_until > c->now;
}

static const char *fence_text(struct decide_ctx *c, size_t i)
{
	char a[32];

	when(work(c, i)->n->fence_until, a, sizeof(a));
	return plan_printf(c, "waiting out the previous leader's in-flight power calls: no wake or "
			   "power-off before %s (its lease expiry + the longest transport call)", a);
}

/* The power is known to be off. A transport reading beats the heartbeat
 * only for a transport that cuts the power itself (ipmi): a soft off or an
 * exec script may still be shutting the node down while mxqd runs. */
static bool power_off_known(const struct mxq_power_node *n)
{
	if (n->off_call_busy)
		return false;  /* its failure must still find the node POWERING_OFF */
	if (n->hard_off_done)
		return true;
	if (n->power_read)
		return n->power_reading == 0 && (n->can_cut || n->seen_down);
	return n->seen_down;
}

/* FAILED: when its next automatic retry is due (INT64_MAX: none left). */
static int64_t retry_due(const struct decide_ctx *c, const struct mxq_power_node *n,
			 uint32_t *ret_attempt)
{
	uint32_t attempt = n->failure_count ? n->failure_count : 1;
	double delay = (double)c->cfg->failed_retry_delay_s;

	*ret_attempt = attempt;
	if (attempt > c->cfg->failed_retries)
		return INT64_MAX;
	for (uint32_t k = 1; k < attempt && delay < (double)MAX_DURATION_S; k++)
		delay *= c->cfg->failed_retry_factor;
	if (delay > (double)MAX_DURATION_S)
		delay = (double)MAX_DURATION_S;
	return n->state_since + (int64_t)ceil(delay);
}

static const char *jobs_text(uint32_t jobs)
{
	return jobs == 1 ? "job" : "jobs";
}

/* OFF or FAILED with jobs still active (its mxqd went away with them):
 * wake it so that its mxqd resolves them from its spool, or, when it
 * cannot be woken, mark them UNKNOWN. True when an action was added. */
static bool resolve_stranded(struct decide_ctx *c, size_t i, bool can_wake)
{
	const struct mxq_power_node *n = work(c, i)->n;

	if (!n->jobs_running || !n->daemon_gone)
		return false;
	if (can_wake && !n->admin_off) {
		if (fenced(c, i)) {
			work(c, i)->note = fence_text(c, i);
			return true;
		}
		add_action(c, i, MXQ_POWER_ACTION_WAKE, MXQ_POWER_POWERING_ON,
			   plan_printf(c, "woken to recover %" PRIu32 " %s still active here: its mxqd "
				       "went away with them and resolves them from its spool at start",
				       n->jobs_running, jobs_text(n->jobs_running)));
		return true;
	}
	add_action(c, i, MXQ_POWER_ACTION_RESOLVE_JOBS, n->state,
		   plan_printf(c, "%" PRIu32 " %s still active on a node that is off and stays off "
			       "(%s): marked UNKNOWN", n->jobs_running, jobs_text(n->jobs_running),
			       n->admin_off ? "admin off" : "no automatic retry left"));
	return true;
}

static void transition_off(struct decide_ctx *c, size_t i)
{
	const struct mxq_power_node *n = work(c, i)->n;

	if (n->seen_up) {
		add_action(c, i, MXQ_POWER_ACTION_MARK_ON, MXQ_POWER_ON,
			   plan_str(c, "mxqd registered although recorded OFF "
				    "(powered on outside the power manager)"));
	} else if (n->power_read && n->power_reading == 1) {
		add_action(c, i, MXQ_POWER_ACTION_MARK_ON, MXQ_POWER_ON,
			   plan_printf(c, "reconciled: %s reports power on although recorded OFF "
				       "(switched on outside the power manager)",
				       n->power_source ? n->power_source : "the transport"));
	} else if (resolve_stranded(c, i, true)) {
		/* done */
	} else if (n->admin_wake) {
		if (fenced(c, i))
			work(c, i)->note = fence_text(c, i);
		else
			add_action(c, i, MXQ_POWER_ACTION_WAKE, MXQ_POWER_POWERING_ON,
				   plan_str(c, n->admin_reason && n->admin_reason[0] ?
					    n->admin_reason : "admin power on"));
	}
}

/* ON: the dead-node rule (mxqd gone) and reconciliation with the power
 * reading; admin off starts a drain (the drain handles a dead node too). */
static void transition_on(struct decide_ctx *c, size_t i)
{
	const struct mxq_power_node *n = work(c, i)->n;
	char b[64];

	if (n->power_read && n->power_reading == 0) {
		add_action(c, i, MXQ_POWER_ACTION_MARK_OFF, MXQ_POWER_OFF,
			   plan_printf(c, n->daemon_gone ?
				       "mxqd gone and %s reports power off: recorded OFF" :
				       "reconciled: %s reports power off although recorded ON "
				       "(switched off outside the power manager)",
				       n->power_source ? n->power_source : "the transport"));
	} else if (n->daemon_gone && !n->power_readable && c->snap->reconcile_due) {
		add_action(c, i, MXQ_POWER_ACTION_MARK_OFF, MXQ_POWER_OFF,
			   plan_str(c, "reconciled: no mxqd heartbeat and no transport reads the power "
				    "state: recorded OFF"));
	} else if (n->admin_off) {
		if (fenced(c, i)) {
			work(c, i)->note = fence_text(c, i);
			return;
		}
		if (n->jobs_running)
			snprintf(b, sizeof(b), " (%" PRIu32 " jobs still running)", n->jobs_running);
		else
			b[0] = '\0';
		add_action(c, i, MXQ_POWER_ACTION_DRAIN, MXQ_POWER_DRAINING,
			   plan_printf(c, "admin power off: draining%s", b));
	} else if (n->daemon_gone) {
		/* no automatic drain: nothing would answer it; its next mxqd
		 * adopts the jobs */
		work(c, i)->note = n->jobs_running ?
			plan_printf(c, "mxqd gone, power on: %" PRIu32 " %s wait for its next mxqd "
				    "(it adopts or resolves them from its spool)", n->jobs_running,
				    jobs_text(n->jobs_running)) :
			plan_str(c, n->power_read ? "mxqd gone, power on: not drained, waiting for "
				 "its mxqd" : n->power_readable ?
				 "mxqd gone: waiting for the transport's power reading" :
				 "mxqd gone: not drained; recorded OFF at the next reconciliation");
	}
}

static void transition_draining(struct decide_ctx *c, size_t i)
{
	const struct mxq_power_node *n = work(c, i)->n;
	int64_t in_state = c->now - n->state_since;

	if (n->daemon_gone && n->power_read && n->power_reading == 0) {
		/* its jobs, if any, are resolved once it is recorded OFF */
		add_action(c, i, MXQ_POWER_ACTION_MARK_OFF, MXQ_POWER_OFF,
			   plan_str(c, "mxqd gone while draining and the power is off: recorded OFF"));
	} else if (n->admin_wake) {
		/* the admin asked for the host on: powering it off instead would
		 * mark that request done all the same */
		add_action(c, i, MXQ_POWER_ACTION_CANCEL_DRAIN, MXQ_POWER_ON,
			   plan_printf(c, "drain cancelled: %s", n->admin_reason && n->admin_reason[0] ?
				       n->admin_reason : "admin power on"));
	} else if (n->jobs_running > 0 && !n->admin_off) {
		learn_need(&c->st, c->cfg, n->node_class, c->now);
		add_action(c, i, MXQ_POWER_ACTION_CANCEL_DRAIN, MXQ_POWER_ON,
			   plan_printf(c, "drain cancelled: node got work (%" PRIu32 " job%s running)",
				       n->jobs_running, n->jobs_running > 1 ? "s" : ""));
	} else if (n->daemon_gone && n->jobs_running == 0 && !n->off_call_busy &&
		   (!n->ssh_drain || n->ssh_drain_sent)) {
		/* nothing can claim here any more (after the node's own drain
		 * command, where it has one): no second drain, no waiting for
		 * an acknowledgement nobody sends */
		if (fenced(c, i))
			work(c, i)->note = fence_text(c, i);
		else if (!n->off_by_node)
			add_action(c, i, MXQ_POWER_ACTION_POWER_OFF, MXQ_POWER_POWERING_OFF,
				   plan_str(c, "drain: its mxqd exited or is gone, nothing can claim "
					    "here: powering off"));
	} else if (n->drain_acked && n->jobs_running == 0 && (n->admin_off || !n->caps)) {
		/* nothing can take these back for demand */
		if (fenced(c, i))
			work(c, i)->note = fence_text(c, i);
		else
			add_action(c, i, MXQ_POWER_ACTION_POWER_OFF, MXQ_POWER_POWERING_OFF,
				   plan_str(c, n->admin_off ?
					    "drain acknowledged: powering off (admin off)" :
					    "drain acknowledged: powering off"));
	} else if (n->ssh_drain && !n->drain_acked && !n->drain_busy_ack && !n->ssh_drain_sent &&
		   c->snap->ssh_drain_after_s > 0 && in_state >= c->snap->ssh_drain_after_s) {
		/* an mxqd too old for the drain protocol: the dead-node rule
		 * above powers it off once its mxqd exited */
		add_action(c, i, MXQ_POWER_ACTION_SSH_DRAIN, MXQ_POWER_DRAINING,
			   plan_str(c, "did not answer the drain: running the drain command over ssh"));
	}
	/* other drains wait for the demand step: pending work may take them
	 * back (step_power_off_acked powers off the rest) */
}

static void transition_powering_off(struct decide_ctx *c, size_t i)
{
	const struct mxq_power_node *n = work(c, i)->n;
	int64_t in_state = c->now - n->state_since;
	int64_t soft = c->snap->soft_off_deadline_s;
	char a[32];

	if (power_off_known(n)) {
		/* not while the previous leader's power-off may still land: an
		 * mxqd registering on an OFF row reopens the claim under it */
		if (fenced(c, i))
			work(c, i)->note = fence_text(c, i);
		else
			add_action(c, i, MXQ_POWER_ACTION_MARK_OFF, MXQ_POWER_OFF,
				   plan_str(c, "power-off confirmed"));
	} else if (n->inherited && !n->off_call_busy) {
		add_action(c, i, MXQ_POWER_ACTION_RESEND, MXQ_POWER_POWERING_OFF,
			   plan_str(c, "power-off sent again by the new leader (the previous "
				    "leader wrote it and may not have sent it)"));
	} else if (n->intent_unsent && !n->off_call_busy) {
		add_action(c, i, MXQ_POWER_ACTION_RESEND, MXQ_POWER_POWERING_OFF,
			   plan_str(c, UNSENT_TEXT("power-off")));
	} else if (in_state >= c->cfg->shutdown_deadline_s && n->off_call_busy) {
		/* the call may still switch the node off, within its bound:
		 * FAILED would be retried, which reopens the claims under it */
		dur(c->cfg->shutdown_deadline_s, a, sizeof(a));
		work(c, i)->note = plan_printf(c, "powering off: the %s shutdown deadline has passed, "
					       "but the power-off call is still running (it may "
					       "still switch the node off): FAILED only once it "
					       "returned", a);
	} else if (in_state >= c->cfg->shutdown_deadline_s) {
		dur(c->cfg->shutdown_deadline_s, a, sizeof(a));
		add_action(c, i, MXQ_POWER_ACTION_MARK_FAILED, MXQ_POWER_FAILED,
			   plan_printf(c, "did not power off within %s shutdown deadline", a));
	} else if (n->can_cut && n->power_read && n->power_reading == 1 && !n->off_call_busy &&
		   soft > 0 && in_state >= soft + 1) {
		/* both times are whole seconds: +1 so that the deadline is never cut short */
		dur(soft, a, sizeof(a));
		add_action(c, i, MXQ_POWER_ACTION_HARD_OFF, MXQ_POWER_POWERING_OFF,
			   plan_printf(c, "still on %s after the soft off: hard power off", a));
	}
}

static void transition_failed(struct decide_ctx *c, size_t i)
{
	const struct mxq_power_node *n = work(c, i)->n;
	uint32_t attempt;
	int64_t due = retry_due(c, n, &attempt);
	char a[32];

	if (due == INT64_MAX) {
		resolve_stranded(c, i, false);
		return;
	}
	if (c->now < due)
		return;  /* explain_node says when */
	if (fenced(c, i)) {
		/* a retry reopens the claims: not while an earlier leader's
		 * power-off may still land */
		work(c, i)->note = fence_text(c, i);
		return;
	}
	dur(c->now - n->state_since, a, sizeof(a));
	add_action(c, i, MXQ_POWER_ACTION_RETRY, MXQ_POWER_UNKNOWN,
		   plan_printf(c, "automatic retry %" PRIu32 " of %" PRIu32 " after %s FAILED (%s)",
			       attempt, c->cfg->failed_retries, a,
			       n->failure_reason && n->failure_reason[0] ? n->failure_reason : "?"));
}

static void step_transitions(struct decide_ctx *c)
{
	const struct mxq_power_config *cfg = c->cfg;
	char a[32];

	/* successes first so that a failure in the same tick still counts */
	size_t n_nodes = c->snap->n_nodes;
	const uint64_t *trans = c->ix->trans;

	/* the others (plain ON and OFF nodes) have nothing to do here */
	for (size_t i = mx_bitmap_next(trans, n_nodes, 0); c->booting && i < n_nodes;
	     i = mx_bitmap_next(trans, n_nodes, i + 1)) {
		struct work_node *wn = work(c, i);
		const struct mxq_power_node *n = wn->n;
		if (wn->managed && n->state == MXQ_POWER_POWERING_ON && n->seen_up) {
			add_action(c, i, MXQ_POWER_ACTION_MARK_ON, MXQ_POWER_ON,
				   plan_str(c, "mxqd registered: boot completed"));
			record_boot_result(c, true);
		}
	}

	for (size_t i = mx_bitmap_next(trans, n_nodes, 0); i < n_nodes;
	     i = mx_bitmap_next(trans, n_nodes, i + 1)) {
		struct work_node *wn = work(c, i);
		const struct mxq_power_node *n = wn->n;
		int64_t in_state = c->now - n->state_since;

		if (!wn->managed || wn->acted)
			continue;
		if (n->failed_call && n->failed_call[0] && n->state != MXQ_POWER_FAILED) {
			/* the wake, power-off or drain made for this state failed */
			add_action(c, i, MXQ_POWER_ACTION_MARK_FAILED, MXQ_POWER_FAILED,
				   plan_str(c, n->failed_call));
			continue;  /* not a missed boot deadline: the breaker counts those */
		}
		switch (n->state) {
		case MXQ_POWER_POWERING_ON:
			if (n->inherited) {
				add_action(c, i, MXQ_POWER_ACTION_RESEND, MXQ_POWER_POWERING_ON,
					   plan_str(c, "wake sent again by the new leader (the previous "
						    "leader wrote it and may not have sent it)"));
			} else if (n->intent_unsent) {
				add_action(c, i, MXQ_POWER_ACTION_RESEND, MXQ_POWER_POWERING_ON,
					   plan_str(c, UNSENT_TEXT("wake")));
			} else if (in_state >= cfg->boot_deadline_s) {
				dur(cfg->boot_deadline_s, a, sizeof(a));
				add_action(c, i, MXQ_POWER_ACTION_MARK_FAILED, MXQ_POWER_FAILED,
					   plan_printf(c, "did not come back within %s boot deadline", a));
				record_boot_result(c, false);
			}
			break;
		case MXQ_POWER_POWERING_OFF:
			transition_powering_off(c, i);
			break;
		case MXQ_POWER_DRAINING:
			transition_draining(c, i);
			break;
		case MXQ_POWER_OFF:
			transition_off(c, i);
			break;
		case MXQ_POWER_UNKNOWN:
			if (n->seen_up)
				add_action(c, i, MXQ_POWER_ACTION_MARK_ON, MXQ_POWER_ON,
					   plan_str(c, "state was unknown; mxqd registered"));
			else if (n->seen_down)
				add_action(c, i, MXQ_POWER_ACTION_MARK_OFF, MXQ_POWER_OFF,
					   plan_str(c, "state was unknown; transport reports power off"));
			break;
		case MXQ_POWER_ON:
			transition_on(c, i);
			break;
		case MXQ_POWER_FAILED:
			transition_failed(c, i);
			break;
		case _MXQ_POWER_STATE_MAX:
			break;
		}
	}
}

/* Admin requests carried out (or overtaken: admin_off is already in the
 * row): mark them done, last, without changing any node's explanation. A
 * wake held back by an earlier leader's in-flight window stays pending. */
static void step_admin_done(struct decide_ctx *c)
{
	for (size_t i = 0; c->admin_requests && i < c->snap->n_nodes; i++) {
		struct work_node *wn = work(c, i);
		const char *note = wn->note;
		bool acted = wn->acted;

		if (!wn->n->admin_request)
			continue;
		if (wn->n->admin_wake && wn->eff == MXQ_POWER_OFF && fenced(c, i))
			continue;  /* the wake waits for the window, the request with it */
		if (wn->n->admin_wake && wn->eff == MXQ_POWER_POWERING_OFF)
			continue;  /* the power-off cannot be taken back: woken once OFF */
		add_action(c, i, MXQ_POWER_ACTION_ADMIN_DONE, wn->eff,
			   plan_str(c, wn->n->admin_off ? "admin power off request taken" :
				    "admin power on request taken"));
		wn->note = note;
		wn->acted = acted;
	}
}

/* --- step 3: demand --------------------------------------------------------- */


static bool off_wake_blocker(struct decide_ctx *c, size_t i, char *buf, size_t len)
{
	const struct mxq_power_config *cfg = c->cfg;
	const struct mxq_power_node *n = work(c, i)->n;
	char a[32], b[32];

	if (n->admin_off) {
		if (buf)
			snprintf(buf, len, "admin off: never woken automatically");
		return true;
	}
	if (fenced(c, i)) {
		if (buf)
			snprintf(buf, len, "%s", fence_text(c, i));
		return true;
	}
	if (!n->caps) {
		if (buf)
			snprintf(buf, len, "never registered: capabilities unknown, not woken "
				 "for demand");
		return true;
	}
	if (c->now - n->state_since < cfg->min_off_time_s) {
		if (buf) {
			when(n->state_since + cfg->min_off_time_s, a, sizeof(a));
			dur(cfg->min_off_time_s, b, sizeof(b));
			snprintf(buf, len, "min off-time: not woken before %s (off at least %s)", a, b);
		}
		return true;
	}
	if (cfg->max_cycles_per_day && n->cycles_today >= cfg->max_cycles_per_day) {
		if (buf)
			snprintf(buf, len, "%" PRIu32 " of %" PRIu32 " boots used today",
				 n->cycles_today, cfg->max_cycles_per_day);
		return true;
	}
	return false;
}

/* How many of node N's running jobs the snapshot details (none when
 * running is NULL: the detail is unknown, whatever n_running says). */
static size_t running_known(const struct mxq_power_node *n)
{
	return n->running ? n->n_running : 0;
}

/*
 * The free room of capacity node I (ON or POWERING_ON with caps, as the
 * plan has it so far) and the room its running jobs free before a boot
 * would finish; once per decision, at the node's first use as capacity.
 */
static void capacity_of(struct decide_ctx *c, size_t i)
{
	struct work_node *wn = work(c, i);
	const struct mxq_power_node *n = wn->n;
	int64_t horizon = c->now + c->cfg->boot_time_s;

	if (wn->cap_done)
		return;
	wn->cap_done = true;
	if (!mxq_power_state_counts_as_capacity(wn->eff) || !n->caps || n->closed ||
	    (wn->eff == MXQ_POWER_ON && n->daemon_gone))
		return;  /* no capacity: not now, and not once its jobs end */
	wn->capacity = true;
	wn->tmpdir_known = n->caps->tmpdir_total_mib > 0;
	if (wn->eff != MXQ_POWER_ON) {
		wn->free = caps_room(n->caps);
		return;
	}
	wn->free = room_left(n);
	for (size_t j = 0; j < running_known(n); j++) {
		const struct mxq_power_running_job *rj = &n->running[j];
		/* an overdue job is about to be killed by its mxqd; one overdue
		 * longer than a boot is not (limits not enforced): don't wait
		 * for it */
		if (rj->expected_end > horizon || rj->expected_end < c->now - c->cfg->boot_time_s)
			continue;
		wn->soon.slots += rj->slots;
		wn->soon.memory_mib += rj->memory_mib;
		wn->soon.gpus += rj->gpus;
		wn->soon.tmpdir_mib += rj->tmpdir_mib;
	}
}

/*
 * The open list (capacity with room for some pending job: busy nodes,
 * then booting ones, then idle ones, each in efficiency order) and the
 * reclaim list. Only capacity with a free slot, reclaimable drains and
 * nodes this plan acted on can be on them. The wakeable OFF nodes are not
 * listed: the wake step walks the index's off set in order and asks
 * off_wake_blocker() there (the same answer all decision long).
 */
static void build_lists(struct decide_ctx *c)
{
	const struct mxq_power_index *ix = c->ix;
	size_t n_nodes = c->snap->n_nodes;
	struct node_list busy = { NIL, NIL }, booting = { NIL, NIL }, idle = { NIL, NIL };
	char buf[256];

	for (size_t k = mx_bitmap_next3(ix->cap, ix->drain, c->acted_pos, n_nodes, 0); k < n_nodes;
	     k = mx_bitmap_next3(ix->cap, ix->drain, c->acted_pos, n_nodes, k + 1)) {
		size_t i = ix->order[k];
		struct work_node *wn = work(c, i);
		const struct mxq_power_node *n = wn->n;

		if (mxq_power_state_counts_as_capacity(wn->eff) && n->caps) {
			capacity_of(c, i);
			if ((ix->node[i].sets & IX_BUSY) && wn->free.slots > c->busy_cap_slots)
				c->busy_cap_slots = wn->free.slots;
			if (room_useful(c, &wn->free, 0)) {
				if (wn->eff == MXQ_POWER_POWERING_ON)
					list_append(c, &booting, i);
				else if (n->jobs_running > 0)
					list_append(c, &busy, i);
				else
					list_append(c, &idle, i);
			}
			continue;
		}
		if (!wn->managed || wn->acted)
			continue;
		if (wn->eff == MXQ_POWER_DRAINING && !n->admin_off && n->caps)
			list_append(c, &c->reclaim, i);
	}
	for (size_t k = mx_bitmap_next(ix->off, n_nodes, 0); explaining(c) && k < n_nodes;
	     k = mx_bitmap_next(ix->off, n_nodes, k + 1)) {
		size_t i = ix->order[k];
		struct work_node *wn = work(c, i);
		if (!wn->acted && off_wake_blocker(c, i, buf, sizeof(buf)))
			wn->note = plan_printf(c, "off: %s", buf);
	}
	/* a bound, not always the least: a fit there is still tried node by node */
	c->wake_max = (struct room) { ix->off_max[0], ix->off_max[1], ix->off_max[2],
				      ix->off_max[3] };
	c->wake_max_tmpdir_known = !ix->off_no_tmpdir;

	/* busy nodes stay on anyway: fill them first, then the booting ones
	 * (woken for this demand), then idle ones, most efficient first */
	c->open = busy;
	for (size_t i = booting.head; i != NIL;) {
		size_t next = work(c, i)->next;
		list_append(c, &c->open, i);
		i = next;
	}
	for (size_t i = idle.head; i != NIL;) {
		size_t next = work(c, i)->next;
		list_append(c, &c->open, i);
		i = next;
	}
}

/*
 * The soon list needs its own links because a node can be on the open list
 * too; it is small (busy nodes with jobs ending soon), so an index array
 * serves.
 */
struct index_vec {
	size_t *v;
	size_t n;
};

static uint64_t place_on_soon(struct decide_ctx *c, struct index_vec *soon, size_t d,
			      uint64_t *remaining)
{
	const struct mxq_group_reqs *q = c->snap->demand[d].reqs;
	uint64_t placed = 0;
	size_t out = 0;

	for (size_t k = 0; k < soon->n; k++) {
		size_t i = soon->v[k];
		struct work_node *wn = work(c, i);
		if (*remaining > 0) {
			struct room avail = room_sum(&wn->free, &wn->soon);
			uint64_t fit = jobs_fitting(&avail, q, wn->tmpdir_known);
			if (fit > 0 && qualified_for(c, i, d)) {
				fit = min_u64(min_u64(fit, per_node_left(c, i, d)), *remaining);
				if (fit > 0) {
					room_take_split(&wn->free, &wn->soon, q, fit);
					note_placed(c, i, d, fit);
					*remaining -= fit;
					placed += fit;
				}
			}
		}
		struct room left = room_sum(&wn->free, &wn->soon);
		if (!room_empty(&wn->soon) && room_useful(c, &left, d))
			soon->v[out++] = i;
	}
	soon->n = out;
	return placed;
}

/* How many more wakes the limits allow, and which limit binds first. */
static uint64_t wake_budget(struct decide_ctx *c, enum wake_limit *ret_why)
{
	const struct mxq_power_config *cfg = c->cfg;
	uint64_t budget = UINT64_MAX;

	*ret_why = WAKE_LIMIT_NONE;
	if (c->breaker_open) {
		*ret_why = WAKE_LIMIT_BREAKER;
		return 0;
	}
	if (cfg->resume_rate > 0) {
		uint64_t t = (uint64_t)floor(c->st.resume_tokens);
		if (t < budget) {
			budget = t;
			*ret_why = WAKE_LIMIT_RESUME_RATE;
		}
	}
	if (cfg->max_booting) {
		uint64_t t = c->booting >= cfg->max_booting ? 0 : cfg->max_booting - c->booting;
		if (t < budget) {
			budget = t;
			*ret_why = WAKE_LIMIT_MAX_BOOTING;
		}
	}
	if (cfg->max_powered_on) {
		uint64_t t = c->powered >= cfg->max_powered_on ? 0 : cfg->max_powered_on - c->powered;
		if (t < budget) {
			budget = t;
			*ret_why = WAKE_LIMIT_MAX_POWERED_ON;
		}
	}
	if (cfg->max_power_watts > 0.0) {
		double left = cfg->max_power_watts - c->powered_w;
		uint64_t t = left < cfg->busy_watts ? 0 : (uint64_t)floor(left / cfg->busy_watts);
		if (t < budget) {
			budget = t;
			*ret_why = WAKE_LIMIT_POWER_BUDGET;
		}
	}
	return budget;
}

/* Why wakes stop. LIVE: with the powered nodes' draw now, which moves
 * with every reading: only in the one text of the best candidate, not in
 * every OFF host's (those would be rewritten at each decision). */
static const char *wake_block_text(struct decide_ctx *c, enum wake_limit why, bool live,
				   char *buf, size_t len)
{
	const struct mxq_power_config *cfg = c->cfg;
	char a[32];

	if (why == WAKE_LIMIT_BREAKER) {
		when(c->st.breaker_open_until, a, sizeof(a));
		snprintf(buf, len, "automatic wakes stopped: breaker open after %" PRIu32
			 " consecutive failed boots (until %s)", c->st.boot_failures, a);
	} else if (why == WAKE_LIMIT_RESUME_RATE) {
		char r[32];
		format_double(cfg->resume_rate, r, sizeof(r));
		snprintf(buf, len, "resume rate limit reached (%s per minute)", r);
	} else if (why == WAKE_LIMIT_MAX_BOOTING) {
		snprintf(buf, len, "max_booting reached (%" PRIu32 " of %" PRIu32 " booting)",
			 c->booting, cfg->max_booting);
	} else if (why == WAKE_LIMIT_POWER_BUDGET) {
		char w[32], m[32], b[32];
		format_double(c->powered_w, w, sizeof(w));
		format_double(cfg->max_power_watts, m, sizeof(m));
		format_double(cfg->busy_watts, b, sizeof(b));
		if (live)
			snprintf(buf, len, "max_power_watts reached (powered nodes may draw %s W "
				 "of %s W; a woken node may draw %s W)", w, m, b);
		else
			snprintf(buf, len, "max_power_watts reached (the powered nodes and one "
				 "more woken at %s W could draw more than %s W)", b, m);
	} else if (why == WAKE_LIMIT_MAX_POWERED_ON) {
		snprintf(buf, len, "max_powered_on reached (%" PRIu32 " of %" PRIu32 " powered on)",
			 c->powered, cfg->max_powered_on);
	} else {
		snprintf(buf, len, "no wake allowed");
	}
	return buf;
}

static void take_node(struct decide_ctx *c, size_t i, size_t d, uint64_t *remaining)
{
	struct work_node *wn = work(c, i);
	const struct mxq_group_reqs *q = c->snap->demand[d].reqs;

	wn->capacity = true;
	wn->cap_done = true;
	wn->tmpdir_known = wn->n->caps->tmpdir_total_mib > 0;
	/* a drained node is idle, but be exact if it is not */
	wn->free = wn->eff == MXQ_POWER_ON || wn->eff == MXQ_POWER_DRAINING ?
		   room_left(wn->n) : caps_room(wn->n->caps);
	uint64_t fit = min_u64(jobs_fitting(&wn->free, q, wn->tmpdir_known), per_node_left(c, i, d));
	fit = min_u64(fit, *remaining);
	room_take(&wn->free, q, fit);
	note_placed(c, i, d, fit);
	*remaining -= fit;
}

/* Does a job of Q fit on any wakeable node at all (by size only)? */
static bool fits_some_wakeable(struct decide_ctx *c, const struct mxq_group_reqs *q)
{
	return jobs_fitting(&c->wake_max, q, c->wake_max_tmpdir_known) > 0;
}

static bool free_time_less(const struct mxq_power_free_time *x,
			   const struct mxq_power_free_time *y)
{
	return x->t != y->t ? x->t < y->t : x->i < y->i;
}

static void swap_free_time(struct mxq_power_free_time *x, struct mxq_power_free_time *y)
{
	struct mxq_power_free_time t = *x;
	*x = *y;
	*y = t;
}

/* Sorting the whole cluster for every gang was the tick's largest cost. */
void mxq_power_select_earliest(struct mxq_power_free_time *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t store = lo;
		swap_free_time(&v[lo + (hi - lo) / 2], &v[hi - 1]);
		for (size_t i = lo; i < hi - 1; i++)
			if (free_time_less(&v[i], &v[hi - 1]))
				swap_free_time(&v[i], &v[store++]);
		swap_free_time(&v[store], &v[hi - 1]);
		if (store == k - 1)
			return;
		if (store > k - 1)
			hi = store;
		else
			lo = store + 1;
	}
}

/*
 * When could NODE take one job of demand D, as far as the snapshot tells:
 * now (room now, or a drain to take back), when its boot is done
 * (booting), after its min off-time and a boot (off or going off), at the
 * expected end of its running jobs (busy), or never (INT64_MAX: admin off,
 * boots used up, no detail of what runs there). The dispatcher's reservation (mxq_sim's
 * EASY hold) counts the same way, so both keep the same nodes.
 */
static int64_t free_for_one(struct decide_ctx *c, size_t i, size_t d)
{
	const struct mxq_power_config *cfg = c->cfg;
	struct work_node *wn = work(c, i);
	const struct mxq_power_node *n = wn->n;
	const struct mxq_group_reqs *q = c->snap->demand[d].reqs;
	int64_t t;

	if (!wn->managed || !n->caps || n->admin_off || !qualified_for(c, i, d))
		return INT64_MAX;
	if ((wn->eff == MXQ_POWER_ON || wn->eff == MXQ_POWER_DRAINING) &&
	    (n->closed || n->daemon_gone))
		return INT64_MAX;  /* starts no jobs: no end of its jobs frees room */
	capacity_of(c, i);
	struct room whole = caps_room(n->caps);
	if (jobs_fitting(&whole, q, whole.tmpdir_mib > 0) == 0)
		return INT64_MAX;
	switch (wn->eff) {
	case MXQ_POWER_POWERING_ON:
		t = n->state_since + cfg->boot_time_s;
		return t > c->now ? t : c->now;
	case MXQ_POWER_ON:
		if (wn->capacity && jobs_fitting(&wn->free, q, wn->tmpdir_known) > 0)
			return c->now;
		if (!running_known(n))
			return INT64_MAX;
		t = c->now;
		for (size_t j = 0; j < running_known(n); j++)
			if (n->running[j].expected_end > t)
				t = n->running[j].expected_end;
		return t;
	case MXQ_POWER_DRAINING:
		return c->now;        /* can be taken back at once */
	case MXQ_POWER_OFF:
	case MXQ_POWER_POWERING_OFF:
		if (cfg->max_cycles_per_day && n->cycles_today >= cfg->max_cycles_per_day)
			return INT64_MAX;
		t = n->state_since + cfg->min_off_time_s;
		return (t > c->now ? t : c->now) + cfg->boot_time_s;
	default:
		return INT64_MAX;
	}
}

/*
 * Capacity for a gang that frees late: when the first job of demand D needs
 * nodes_at_once nodes together and, counting every node it could use (free
 * ones, wakeable ones, busy ones at their jobs' expected ends), the last of
 * them is free more than a boot plus the idle time from now, nodes held
 * idle or woken for it now would only wait. Then the demand is deferred:
 * nothing is placed or woken for it, its idle nodes may be suspended, and
 * the wakes come when the deferral ends (plan.recheck_at), one boot plus
 * one idle time before the gang can start. Returns the end of the deferral,
 * or 0 when D is served now.
 */
/* Add node I to the gang's candidates when it can take a job of D at all;
 * a node free too late to be early gets its time of change noted. */
/* Keep X if it is among the gang_depth earliest so far. A heap rather
 * than a selection over all candidates each time a late one came in
 * early: that was a tenth of a decision's time on a full cluster. */
static void gang_keep(struct decide_ctx *c, struct mxq_power_free_time x)
{
	struct mxq_power_free_time *h = c->gang_t;
	size_t k;

	if (c->gang_h < c->gang_depth) {
		for (k = c->gang_h++; k > 0 && free_time_less(&h[(k - 1) / 2], &x); k = (k - 1) / 2)
			h[k] = h[(k - 1) / 2];
		h[k] = x;
		return;
	}
	if (!c->gang_h || !free_time_less(&x, &h[0]))
		return;
	for (k = 0;;) {
		size_t l = 2 * k + 1, m = l;
		if (l >= c->gang_h)
			break;
		if (l + 1 < c->gang_h && free_time_less(&h[l], &h[l + 1]))
			m = l + 1;
		if (!free_time_less(&x, &h[m]))
			break;
		h[k] = h[m];
		k = m;
	}
	h[k] = x;
}

/* The gang_depth-th earliest time of the candidates kept, INT64_MAX while
 * there are fewer. */
static int64_t gang_kth(const struct decide_ctx *c)
{
	return c->gang_h && c->gang_h == c->gang_depth ? c->gang_t[0].t : INT64_MAX;
}

static void gang_candidate(struct decide_ctx *c, size_t i, size_t d, int64_t soon_enough,
			   size_t *n, uint32_t *early)
{
	int64_t t = free_for_one(c, i, d);

	if (t == INT64_MAX)
		return;
	(*n)++;
	gang_keep(c, (struct mxq_power_free_time) { t, i });
	if (t > soon_enough)
		change_at(c, t - c->cfg->boot_time_s - c->idle_time_s);  /* early from then */
	else
		(*early)++;
}

static int cmp_free_time(const void *a, const void *b)
{
	return free_time_less(a, b) ? -1 : free_time_less(b, a) ? 1 : 0;
}

/* The end of a later gang's deferral from its candidates T[0..n) sorted,
 * EARLY of them free soon enough; 0 when it is served now. */
static int64_t deferral_end(struct decide_ctx *c, const struct mxq_power_free_time *t, size_t n,
			    uint32_t need, uint32_t early)
{
	if (early >= need || n < need)
		return 0;     /* served now, or it can never fit as far as we know */
	int64_t until = t[need - 1].t - c->cfg->boot_time_s - c->idle_time_s;
	return until > c->now ? until : 0;
}

static int64_t gang_deferral(struct decide_ctx *c, size_t d)
{
	const struct mxq_power_demand *dm = &c->snap->demand[d];
	const struct mxq_power_index *ix = c->ix;
	const struct mxq_power_config *cfg = c->cfg;
	size_t n_nodes = c->snap->n_nodes;
	uint32_t need = dm->nodes_at_once;
	size_t n = 0;
	uint32_t early = 0;

	if (need <= 1 || c->idle_time_s < 0 || !dm->jobs_pending)
		return 0;
	/*
	 * A later gang of the same needs as the one before it, with nothing
	 * placed or acted on in between, has the same candidates at the same
	 * times: only how many of them it needs differs. An overloaded
	 * cluster queues hundreds of such gangs, and a pass over the nodes
	 * for each was most of a decision's time. The pass after the first
	 * of a kind looks as deep as the widest gang needs, once.
	 */
	struct gang_memo *m = NULL;
	uint32_t depth = need;
	if (c->shadow_demand != NO_DEMAND) {
		int64_t run = dm->run_s ? dm->run_s : (int64_t)dm->reqs->time_min * 60;
		m = &c->memo[run && c->now + run <= c->shadow];
		if (m->valid && m->changes == c->changes && m->reqs == dm->reqs) {
			if (need <= m->depth) {
				if (m == &c->memo[1] && m->lent_qualified)
					change_at(c, c->shadow - run + 1);
				return deferral_end(c, m->t, m->n, need, m->early);
			}
			if (c->max_need > depth)
				depth = c->max_need;
		}
	}
	if (!c->gang_t) {
		c->gang_t = malloc((n_nodes ? n_nodes : 1) * sizeof(*c->gang_t));
		if (!c->gang_t) {
			c->nomem = true;
			return 0;
		}
	}
	c->gang_h = 0;
	c->gang_depth = depth;
	/* a reserved node lent to later demand brings its own time of change */
	bool lent_qualified = false;
	for (size_t r = 0; c->shadow_demand != NO_DEMAND && r < c->n_reserved; r++) {
		struct work_node *wn = work(c, c->reserved[r]);
		if (wn->managed && wn->n->caps && !wn->n->admin_off)
			lent_qualified |= qualified_for(c, c->reserved[r], d);
	}

	/*
	 * Every node free_for_one() gives a time, without looking at all of
	 * them: nodes this plan acted on, capacity with a free slot, nodes
	 * in transition, OFF nodes still in their min off-time, busy nodes
	 * by the end of their jobs (as far as they can matter), and of the
	 * OFF nodes free after one boot, which all have the same time, the
	 * NEED with the lowest index (ties go to the lower index).
	 * When no busy capacity node has the free slots for one part now
	 * (whole-node parts on a busy cluster: thousands of them), those
	 * nodes too are free only at the end of their jobs and come with the
	 * busy ones, by that end; else with the rest of the capacity.
	 */
	int64_t soon_enough = c->now + cfg->boot_time_s + c->idle_time_s;
	uint64_t part = dm->reqs->threads ? dm->reqs->threads : 1;
	const uint64_t *busy_later = part > c->busy_cap_slots ? ix->busy : c->no_nodes;
	for (size_t a = 0; a < c->n_acted; a++)
		gang_candidate(c, c->acted[a], d, soon_enough, &n, &early);
	for (size_t k = mx_bitmap_next_without(ix->cap, busy_later, n_nodes, 0); k < n_nodes;
	     k = mx_bitmap_next_without(ix->cap, busy_later, n_nodes, k + 1))
		if (!work(c, ix->order[k])->acted)
			gang_candidate(c, ix->order[k], d, soon_enough, &n, &early);
	for (size_t i = mx_bitmap_next(ix->trans, n_nodes, 0); i < n_nodes;
	     i = mx_bitmap_next(ix->trans, n_nodes, i + 1)) {
		enum mxq_power_node_state st = c->snap->nodes[i].state;
		if (st != MXQ_POWER_ON && st != MXQ_POWER_OFF && !work(c, i)->acted &&
		    !(ix->node[i].sets & IX_CAP))
			gang_candidate(c, i, d, soon_enough, &n, &early);
	}
	/* OFF nodes by state_since: those still in their min off-time last */
	for (struct mx_blist_it k = mx_blist_lower_bound(&ix->off_since,
							 c->now - cfg->min_off_time_s + 1, 0);
	     !mx_blist_end(&k); mx_blist_next(&k))
		if (!work(c, mx_blist_get(&k)->id)->acted)
			gang_candidate(c, mx_blist_get(&k)->id, d, soon_enough, &n, &early);
	uint32_t ready = 0;
	for (size_t k = mx_bitmap_next(ix->off, n_nodes, 0);
	     k < n_nodes && (ready < depth || !ix->in_order);
	     k = mx_bitmap_next(ix->off, n_nodes, k + 1)) {
		size_t i = ix->order[k];
		size_t before = n;
		if (work(c, i)->acted || ix->node[i].since + cfg->min_off_time_s > c->now)
			continue;
		gang_candidate(c, i, d, soon_enough, &n, &early);
		ready += n > before;
	}
	/* busy nodes not seen as capacity above, earliest end first: all
	 * that are early, then the late ones until the first (the earliest
	 * change) and as long as one could be among the NEED earliest */
	bool cap_seen = busy_later == c->no_nodes;
	struct mx_blist_it kf = mx_blist_begin(&ix->ends);
	for (; !mx_blist_end(&kf) && mx_blist_get(&kf)->key <= soon_enough; mx_blist_next(&kf)) {
		size_t i = mx_blist_get(&kf)->id;
		if (!work(c, i)->acted && !(cap_seen && (ix->node[i].sets & IX_CAP)))
			gang_candidate(c, i, d, soon_enough, &n, &early);
	}
	bool late_seen = false;
	for (; !mx_blist_end(&kf); mx_blist_next(&kf)) {
		size_t i = mx_blist_get(&kf)->id, before = n;
		if (late_seen && ix->node[i].max_end > gang_kth(c))
			break;
		if (work(c, i)->acted || (cap_seen && (ix->node[i].sets & IX_CAP)))
			continue;
		gang_candidate(c, i, d, soon_enough, &n, &early);
		late_seen |= n > before;
	}

	/* a later gang needs no reservation: it is served now as soon as
	 * NEED nodes are free soon enough */
	if (m) {
		/* its DEPTH earliest kept sorted for the next gang like it;
		 * the scratch array becomes the memo's, the memo's old one
		 * the scratch */
		struct mxq_power_free_time *t = c->gang_t;
		qsort(t, c->gang_h, sizeof(*t), cmp_free_time);
		c->gang_t = m->t;
		*m = (struct gang_memo) { true, c->changes, dm->reqs, lent_qualified, depth,
					  early, n, t };
		return deferral_end(c, t, n, need, early);
	}
	if (n < need)
		return 0;             /* it can never fit as far as we know: as before */
	int64_t start = gang_kth(c);  /* DEPTH is NEED here: the gang's NEED earliest */
	int64_t until = start - cfg->boot_time_s - c->idle_time_s;  /* deferred until */
	if (c->shadow_demand == NO_DEMAND) {
		/* the first gang reserves the nodes that free first, as the
		 * dispatcher does (EASY): later demand gets them only for jobs
		 * that end before the gang can start */
		c->shadow_demand = d;
		c->shadow = start;
		c->n_reserved = 0;
		c->reserved = malloc(need * sizeof(*c->reserved));
		if (!c->reserved) {
			c->nomem = true;
			return 0;
		}
		/* only while it waits: a gang served now is placed where the
		 * open list has room (booting nodes first), which need not be
		 * the nodes free first, and holding those would wake others
		 * for later demand while they stay idle */
		for (size_t k = 0; until > c->now && k < need; k++) {
			work(c, c->gang_t[k].i)->reserved = true;
			c->reserved[c->n_reserved++] = c->gang_t[k].i;
		}
	}
	return until > c->now ? until : 0;
}

/* Node I has room a boot from now when its jobs end as expected? */
static void soon_candidate(struct decide_ctx *c, size_t i, int64_t horizon, struct index_vec *soon)
{
	const struct mxq_power_index_node *x = &c->ix->node[i];

	if (!running_known(&c->snap->nodes[i]) || x->min_end > horizon ||
	    x->max_end < c->now - c->cfg->boot_time_s)
		return;
	capacity_of(c, i);
	if (work(c, i)->capacity && !room_empty(&work(c, i)->soon))
		soon->v[soon->n++] = i;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static void step_demand(struct decide_ctx *c)
{
	const struct mxq_power_index *ix = c->ix;
	int64_t horizon = c->now + c->cfg->boot_time_s;
	const struct mxq_power_snapshot *snap = c->snap;
	struct index_vec soon = { NULL, 0 };
	char label_buf[64], needs[256], blocked[256], a[32];

	c->smallest_from = malloc((snap->n_demand + 1) * sizeof(*c->smallest_from));
	if (!c->smallest_from) {
		c->nomem = true;
		return;
	}
	c->smallest_from[snap->n_demand] = (struct room) { UINT64_MAX, UINT64_MAX, UINT64_MAX,
							   UINT64_MAX };
	for (size_t d = snap->n_demand; d-- > 0;) {
		const struct mxq_group_reqs *q = snap->demand[d].reqs;
		struct room m = c->smallest_from[d + 1];
		if (snap->demand[d].jobs_pending) {
			m.slots = min_u64(m.slots, q->threads ? q->threads : 1);
			m.memory_mib = min_u64(m.memory_mib, q->memory_mib);
			m.gpus = min_u64(m.gpus, q->gpus);
		}
		c->smallest_from[d] = m;
	}

	build_lists(c);
	for (size_t d = 0; d < snap->n_demand; d++)
		if (snap->demand[d].jobs_pending && snap->demand[d].nodes_at_once > c->max_need)
			c->max_need = snap->demand[d].nodes_at_once;

	soon.v = malloc((snap->n_nodes ? snap->n_nodes : 1) * sizeof(*soon.v));
	if (!soon.v) {
		c->nomem = true;
		return;
	}
	/* capacity with a job ending within a boot from now, in efficiency
	 * order: busy nodes by their first expected end, as far as that is
	 * within a boot, and nodes this plan acted on (a cancelled drain) */
	for (struct mx_blist_it k = mx_blist_begin(&ix->busy_first);
	     !mx_blist_end(&k) && mx_blist_get(&k)->key <= horizon; mx_blist_next(&k))
		soon_candidate(c, mx_blist_get(&k)->id, horizon, &soon);
	for (size_t k = 0; k < c->n_acted; k++)
		if (!(ix->node[c->acted[k]].sets & IX_BUSY))
			soon_candidate(c, c->acted[k], horizon, &soon);
	/* into efficiency order: sort their places in it, then map back */
	for (size_t k = 0; k < soon.n; k++)
		soon.v[k] = ix->pos[soon.v[k]];
	if (soon.n)
		qsort(soon.v, soon.n, sizeof(*soon.v), cmp_size);
	for (size_t k = 0; k < soon.n; k++)
		soon.v[k] = ix->order[soon.v[k]];

	for (size_t d = 0; d < snap->n_demand; d++) {
		const struct mxq_power_demand *dm = &snap->demand[d];
		struct mxq_power_demand_outcome *out = &c->plan.outcomes[d];
		uint64_t remaining = dm->jobs_pending;

		c->pending += dm->jobs_pending;
		out->deferred_until = gang_deferral(c, d);
		if (out->deferred_until) {
			recheck_at(c, out->deferred_until);
			out->unplaced = remaining;
			c->unplaced += remaining;
			c->deferred += remaining;
			if (!c->deferred_wake || out->deferred_until < c->deferred_wake)
				c->deferred_wake = out->deferred_until;
			continue;
		}
		out->on_capacity = place_on_list(c, &c->open, d, &remaining, false);
		if (remaining && soon.n)
			out->freeing_soon = place_on_soon(c, &soon, d, &remaining);
		if (!remaining)
			continue;

		/* take back draining nodes before waking anything */
		size_t prev = NIL;
		for (size_t i = c->reclaim.head; i != NIL && remaining;) {
			size_t next = work(c, i)->next;
			struct room r = caps_room(work(c, i)->n->caps);
			if (jobs_fitting(&r, dm->reqs, r.tmpdir_mib > 0) > 0 && qualified_for(c, i, d)) {
				uint64_t before = remaining;
				list_remove(c, &c->reclaim, prev, i);
				learn_need(&c->st, c->cfg, work(c, i)->n->node_class, c->now);
				add_action(c, i, MXQ_POWER_ACTION_CANCEL_DRAIN, MXQ_POWER_ON, NULL);
				take_node(c, i, d, &remaining);
				out->reclaimed += before - remaining;
				describe_needs(dm->reqs, needs, sizeof(needs));
				c->plan.actions[c->plan.n_actions - 1].reason = work(c, i)->note =
					plan_printf(c, "drain cancelled: %" PRIu64 " pending jobs of %s "
						    "(%s) need it; cheaper than a wake, takes %" PRIu64,
						    before, demand_label(c, d, label_buf,
									 sizeof(label_buf)),
						    needs, before - remaining);
				if (room_useful(c, &work(c, i)->free, d))
					list_prepend(c, &c->open, i);
			} else {
				prev = i;
			}
			i = next;
		}
		if (!remaining)
			continue;

		/* wake the most efficient qualified OFF nodes; once a limit is
		 * reached it stays reached for this tick, so stop looking */
		enum wake_limit why;
		if (c->wake_blocked == WAKE_LIMIT_NONE && wake_budget(c, &why) == 0)
			c->wake_blocked = why;
		if (c->wake_blocked == WAKE_LIMIT_NONE && fits_some_wakeable(c, dm->reqs)) {
			/* the OFF nodes in efficiency order, but for those this plan
			 * acted on (woken already) and those that may not be woken */
			for (size_t k = mx_bitmap_next(ix->off, snap->n_nodes, 0);
			     k < snap->n_nodes && remaining;
			     k = mx_bitmap_next(ix->off, snap->n_nodes, k + 1)) {
				size_t i = ix->order[k];
				struct work_node *wn = work(c, i);

				if (wn->acted || off_wake_blocker(c, i, NULL, 0))
					continue;
				struct room r = caps_room(wn->n->caps);
				if (jobs_fitting(&r, dm->reqs, r.tmpdir_mib > 0) == 0 ||
				    !qualified_for(c, i, d) || per_node_left(c, i, d) == 0)
					continue;
				if (wake_budget(c, &why) == 0) {
					/* the best candidate says why it stays off; stop here */
					if (!wn->note) {
						wake_block_text(c, why, true, blocked,
								sizeof(blocked));
						wn->note = plan_printf(c, "off: would be woken for "
								       "pending jobs of %s, but %s",
								       demand_label(c, d, label_buf,
										    sizeof(label_buf)),
								       blocked);
					}
					c->wake_blocked = why;
					break;
				}
				uint64_t before = remaining;
				add_action(c, i, MXQ_POWER_ACTION_WAKE, MXQ_POWER_POWERING_ON, NULL);
				if (c->cfg->resume_rate > 0)
					c->st.resume_tokens -= 1.0;
				c->woken++;
				take_node(c, i, d, &remaining);
				out->woken += before - remaining;
				describe_needs(dm->reqs, needs, sizeof(needs));
				snprintf(a, sizeof(a), "%" PRId32, wn->n->efficiency_rank);
				c->plan.actions[c->plan.n_actions - 1].reason = wn->note =
					plan_printf(c, "woken: %" PRIu64 " pending jobs of %s (%s) that "
						    "no powered-on node has room for; most efficient "
						    "qualified OFF node (rank %s), takes %" PRIu64,
						    before, demand_label(c, d, label_buf,
									 sizeof(label_buf)),
						    needs, a, before - remaining);
				if (room_useful(c, &wn->free, d))
					list_prepend(c, &c->open, i);
			}
		}
		out->unplaced = remaining;
		c->unplaced += remaining;
	}
	free(soon.v);
	free(c->gang_t);
	c->gang_t = NULL;
	for (size_t k = 0; k < ARRAY_SIZE(c->memo); k++) {
		free(c->memo[k].t);
		c->memo[k] = (struct gang_memo) { 0 };
	}
	free(c->smallest_from);
	c->smallest_from = NULL;
}

/* --- idle gaps (idle_time = auto) ------------------------------------------ */

struct gap_seen {
	size_t i;
	int64_t gap, first;
	uint64_t host;               /* fnv1a() of the hostname: node indices need
	                                not be the same from snapshot to snapshot */
};

static int cmp_gap_seen(const void *a, const void *b)
{
	const struct gap_seen *x = a, *y = b;
	return x->i < y->i ? -1 : x->i > y->i;
}

static bool counted_at_edge(const struct mxq_power_state *st, uint64_t host)
{
	for (uint32_t k = 0; k < st->n_gap_edge; k++)
		if (st->gap_edge[k] == host)
			return true;
	return false;
}

/* The gap that ended on node I by a job started since the last decision,
 * its start in *RET_FIRST: ON, its running jobs all started after its last
 * job ended; -1: none. Whole seconds: a start in the second of the last
 * decision counts unless that decision counted the host already. */
static int64_t gap_ended(const struct decide_ctx *c, size_t i, int64_t *ret_first)
{
	const struct mxq_power_node *n = &c->snap->nodes[i];
	int64_t first = INT64_MAX;

	if (n->state != MXQ_POWER_ON || !n->running || !n->n_running || !n->last_job_end ||
	    n->last_job_end < n->state_since)
		return -1;  /* a woken host's first job waited for it: no gap
			       (the same second: a job that ended as it came on) */
	for (size_t j = 0; j < n->n_running; j++) {
		int64_t t = n->running[j].started_at;
		if (t <= n->last_job_end)
			return -1;  /* unknown, or it was never idle since */
		if (t < first)
			first = t;
	}
	if (first < c->st.gaps_at || first > c->now)
		return -1;
	*ret_first = first;
	return first - n->last_job_end;
}

/*
 * Count the idle gaps that ended since the last decision: on the busy
 * hosts the index put in again (a kept index: those reported changed,
 * which every job start is; a fresh one: all), in node order, so that both
 * count alike; and
 * the power-offs no need matched within the horizon (longer than it).
 */
static void step_learn_gaps(struct decide_ctx *c)
{
	const struct mxq_power_index *ix = c->ix;
	const struct mxq_power_config *cfg = c->cfg;
	int64_t horizon = mxq_power_gap_edge(cfg, MXQ_POWER_GAP_EDGES - 1);
	struct gap_seen *seen = NULL;
	size_t n_seen = 0;

	if (cfg->idle_time_s != MXQ_POWER_IDLE_AUTO)
		return;
	if (!c->st.gaps_at) {
		c->st.gaps_at = c->now;  /* a fresh start: from now on */
		c->st.n_gap_edge = 0;
		return;
	}
	for (uint32_t k = 0; k < c->st.n_learn; k++) {
		struct mxq_power_gap_learn *l = &c->st.learn[k];
		if (!gap_windows_at(cfg, l, c->now))
			continue;
		/* the next window to count as longer than the horizon */
		for (int64_t w = l->slot_first; w < l->slot_first + MXQ_POWER_GAP_SLOTS; w++)
			if (l->slot[w % MXQ_POWER_GAP_SLOTS]) {
				recheck_at(c, (w + 1) * l->slot_s + horizon);
				break;
			}
	}
	if (ix->n_synced)
		seen = malloc(ix->n_synced * sizeof(*seen));
	if (ix->n_synced && !seen) {
		c->nomem = true;
		return;
	}
	for (size_t k = 0; k < ix->n_synced; k++) {
		size_t i = ix->synced[k];
		int64_t first = 0, g = gap_ended(c, i, &first);
		if (g < 0)
			continue;
		uint64_t h = fnv1a(c->snap->nodes[i].hostname);
		if (first == c->st.gaps_at && counted_at_edge(&c->st, h))
			continue;  /* counted by the last decision, in this second */
		seen[n_seen++] = (struct gap_seen) { i, g, first, h };
	}
	if (n_seen)
		qsort(seen, n_seen, sizeof(*seen), cmp_gap_seen);
	if (c->now != c->st.gaps_at)
		c->st.n_gap_edge = 0;
	for (size_t k = 0; k < n_seen; k++) {
		if (k && seen[k].i == seen[k - 1].i)
			continue;  /* reported changed twice */
		struct mxq_power_gap_learn *l =
			learn_entry(&c->st, c->snap->nodes[seen[k].i].node_class);
		if (l)
			gap_add(cfg, l, seen[k].gap);
		if (seen[k].first == c->now && c->st.n_gap_edge < MXQ_POWER_GAP_EDGE_HOSTS)
			c->st.gap_edge[c->st.n_gap_edge++] = seen[k].host;
	}
	free(seen);
	c->st.gaps_at = c->now;
}

/* --- step 4: suspend ---------------------------------------------------------- */

static void step_suspend(struct decide_ctx *c)
{
	const struct mxq_power_index *ix = c->ix;
	/* explanations are written for every node; else only idle ones matter */
	const uint64_t *look = explaining(c) ? NULL : ix->idle;
	const struct mxq_power_config *cfg = c->cfg;
	size_t n_nodes = c->snap->n_nodes;
	uint32_t warm_kept = 0;
	uint32_t *class_kept = NULL;
	size_t *eligible = NULL, n_eligible = 0;
	char a[32], b[32], label_buf[64];

	if (cfg->n_class_pools) {
		class_kept = calloc(cfg->n_class_pools, sizeof(*class_kept));
		if (!class_kept) {
			c->nomem = true;
			return;
		}
	}
	eligible = malloc((n_nodes ? n_nodes : 1) * sizeof(*eligible));
	if (!eligible) {
		free(class_kept);
		c->nomem = true;
		return;
	}

	/* most efficient first: the warm pools keep the best idle nodes */
	for (size_t k = look ? mx_bitmap_next(look, n_nodes, 0) : 0; k < n_nodes;
	     k = look ? mx_bitmap_next(look, n_nodes, k + 1) : k + 1) {
		size_t i = ix->order[k];
		struct work_node *wn = work(c, i);
		const struct mxq_power_node *n = wn->n;
		int64_t idle_since;

		if (!wn->managed || wn->acted || wn->eff != MXQ_POWER_ON || n->daemon_gone)
			continue;  /* a node whose mxqd is gone has its note already */
		if (n->jobs_running > 0) {
			EXPLAIN(c, wn, "busy: %" PRIu32 " job%s running%s%s", n->jobs_running,
					       n->jobs_running > 1 ? "s" : "",
					       n->closed ? "; starts no new jobs: " : "",
					       n->closed ? n->closed : "");
			continue;
		}
		if (wn->placed > 0) {
			if (explaining(c))
				EXPLAIN(c, wn, "needed: %" PRIu64 " pending jobs (of %s first) "
					"would run here", wn->placed,
					demand_label(c, wn->placed_demand, label_buf,
						     sizeof(label_buf)));
			continue;
		}

		/* a node that starts no jobs is no warm pool */
		size_t ci = 0;
		uint32_t class_want = n->closed ? 0 : class_pool_count(cfg, n->node_class, &ci);
		if (class_want && class_kept[ci] < class_want) {
			class_kept[ci]++;
			warm_kept++;
			EXPLAIN(c, wn, "warm pool for class '%s' (%" PRIu32 " of %" PRIu32 ")",
					       n->node_class, class_kept[ci], class_want);
			continue;
		}
		if (!n->closed && warm_kept < cfg->warm_pool) {
			warm_kept++;
			if (class_want)
				class_kept[ci]++;
			EXPLAIN(c, wn, "warm pool (%" PRIu32 " of %" PRIu32 ")",
					       warm_kept, cfg->warm_pool);
			continue;
		}

		if (c->breaker_open) {
			EXPLAIN(c, wn, "%s", "idle, kept on: boots are failing (breaker open), "
					       "a suspended node might not come back");
			continue;
		}
		if (fenced(c, i)) {
			wn->note = fence_text(c, i);
			continue;
		}
		if (c->idle_time_s == MXQ_POWER_IDLE_NEVER) {
			EXPLAIN(c, wn, "%s", "idle, automatic suspend disabled (idle_time = never)");
			continue;
		}
		int64_t on_for = c->now - n->state_since;
		if (on_for < cfg->min_on_time_s) {
			if (explaining(c)) {
				when(n->state_since + cfg->min_on_time_s, a, sizeof(a));
				EXPLAIN(c, wn, "min on-time: not suspended before %s", a);
			}
			continue;
		}
		idle_since = n->last_job_end > n->state_since ? n->last_job_end : n->state_since;
		int64_t idle_time = mxq_power_idle_time_for(cfg, &c->st, n->node_class);
		if (c->now - idle_since < idle_time) {
			int64_t due = idle_since + idle_time;
			recheck_at(c, due);
			if (explaining(c)) {
				char at[40];
				when(idle_since, a, sizeof(a));
				dur(idle_time, b, sizeof(b));
				when(due, at, sizeof(at));
				EXPLAIN(c, wn, "not idle long enough: idle since %s, suspended at %s "
					"(idle time %s%s)", a, at, b,
					cfg->idle_time_s != MXQ_POWER_IDLE_AUTO ? "" :
					mxq_power_idle_time_learned(cfg, &c->st, n->node_class) ?
					", learned" : ", not learned: the class has fewer than 16 "
					"idle gaps counted");
			}
			continue;
		}
		if (cfg->max_cycles_per_day && n->cycles_today >= cfg->max_cycles_per_day) {
			EXPLAIN(c, wn, "stays on: %" PRIu32 " of %" PRIu32 " boots used today, "
					       "could not be woken again", n->cycles_today,
					       cfg->max_cycles_per_day);
			continue;
		}
		eligible[n_eligible++] = i;
	}

	/* least efficient first */
	for (size_t k = n_eligible; k-- > 0;) {
		size_t i = eligible[k];
		struct work_node *wn = work(c, i);
		const struct mxq_power_node *n = wn->n;
		int64_t idle_since = n->last_job_end > n->state_since ? n->last_job_end : n->state_since;

		if (cfg->suspend_rate > 0 && c->st.suspend_tokens < 1.0) {
			char r[32];
			format_double(cfg->suspend_rate, r, sizeof(r));
			EXPLAIN(c, wn, "idle, would be suspended, but suspend rate limit "
					       "reached (%s per minute)", r);
			continue;
		}
		if (cfg->suspend_rate > 0)
			c->st.suspend_tokens -= 1.0;
		dur(c->now - idle_since, a, sizeof(a));
		dur(mxq_power_idle_time_for(cfg, &c->st, n->node_class), b, sizeof(b));
		add_action(c, i, MXQ_POWER_ACTION_DRAIN, MXQ_POWER_DRAINING,
			   plan_printf(c, "suspend: idle %s (idle time %s), no pending demand needs "
				       "it, beyond the warm pool; least efficient idle node (rank %"
				       PRId32 ")", a, b, n->efficiency_rank));
		learn_power_off(&c->st, cfg, n->node_class, idle_since, c->now);
	}
	free(eligible);
	free(class_kept);
}

/* --- step 5: explanations ------------------------------------------------------- */

static const char *explain_node(struct decide_ctx *c, size_t i)
{
	struct work_node *wn = work(c, i);
	const struct mxq_power_node *n = wn->n;
	const struct mxq_power_config *cfg = c->cfg;
	char a[32], b[32];

	if (n->unmanaged_why && n->unmanaged_why[0])
		return plan_printf(c, "not managed: %s", n->unmanaged_why);
	if (!wn->managed)
		return plan_str(c, "excluded from power management: no automatic action");
	if (n->closed && wn->eff == MXQ_POWER_ON && !(wn->note && strstr(wn->note, n->closed)))
		return plan_printf(c, "starts no new jobs (%s); %s", n->closed,
				   wn->note ? wn->note : "on");
	if (wn->note)
		return wn->note;

	switch (wn->eff) {
	case MXQ_POWER_ON:
		return plan_str(c, "on");
	case MXQ_POWER_DRAINING:
		if (n->admin_off && n->jobs_running)
			return plan_printf(c, "admin power off: waiting for %" PRIu32 " jobs to end",
					   n->jobs_running);
		when(n->state_since, a, sizeof(a));
		when(n->state_since + cfg->drain_timeout_s, b, sizeof(b));
		return plan_printf(c, "draining since %s: waiting for the node's acknowledgement "
				   "(drain timeout at %s)", a, b);
	case MXQ_POWER_POWERING_OFF:
		when(n->state_since, a, sizeof(a));
		when(n->state_since + cfg->shutdown_deadline_s, b, sizeof(b));
		return plan_printf(c, "powering off since %s (deadline %s)", a, b);
	case MXQ_POWER_OFF:
		if (n->admin_off)
			return plan_str(c, "off: admin off, never woken automatically");
		if (!c->pending)
			return plan_str(c, "off: no pending jobs");
		if (!c->unplaced && !c->woken)
			return plan_str(c, "off: powered-on capacity absorbs all pending demand");
		if (!c->unplaced)
			return plan_str(c, "off: not needed: the pending demand fits on powered-on "
					   "nodes and the nodes woken for it");
		if (c->deferred == c->unplaced) {
			when(c->deferred_wake, a, sizeof(a));
			return plan_printf(c, "off: the unplaced pending jobs need several nodes "
					   "at once, not free soon enough (expected ends of "
					   "running jobs): woken ahead at %s", a);
		}
		/* no counts here: an OFF host's text is rewritten only when it
		 * changes, and the queue changes at every decision (the counts
		 * are in the tick's summary) */
		if (c->wake_blocked != WAKE_LIMIT_NONE) {
			char blocked[256];
			wake_block_text(c, c->wake_blocked, false, blocked, sizeof(blocked));
			return plan_printf(c, "off: pending jobs unplaced, but %s", blocked);
		}
		return plan_str(c, "off: not chosen for the unplaced pending jobs "
				   "(does not qualify or too small, or the wake limits stopped at a "
				   "more efficient node)");
	case MXQ_POWER_POWERING_ON:
		when(n->state_since, a, sizeof(a));
		when(n->state_since + cfg->boot_deadline_s, b, sizeof(b));
		if (wn->placed)
			return plan_printf(c, "booting since %s (deadline %s), counted as capacity for "
					   "%" PRIu64 " pending jobs", a, b, wn->placed);
		return plan_printf(c, "booting since %s (deadline %s)", a, b);
	case MXQ_POWER_FAILED: {
		uint32_t attempt;
		int64_t due = retry_due(c, n, &attempt);

		if (due != INT64_MAX) {
			when(due, a, sizeof(a));
			dur(due - n->state_since, b, sizeof(b));
			return plan_printf(c, "failed%s%s; automatic retry %" PRIu32 " of %" PRIu32
					   " at %s (backoff %s; 'mxqadmin power clear %s' retries now)",
					   n->failure_reason ? ": " : "",
					   n->failure_reason ? n->failure_reason : "", attempt,
					   cfg->failed_retries, a, b, n->hostname);
		}
		return plan_printf(c, "failed%s%s%s; left alone until 'mxqadmin power clear %s'",
				   n->failure_reason ? ": " : "",
				   n->failure_reason ? n->failure_reason : "",
				   cfg->failed_retries ? " (automatic retries used up)" :
				   n->failure_count > 1 ? " (repeatedly)" : "", n->hostname);
	}
	case MXQ_POWER_UNKNOWN:
	case _MXQ_POWER_STATE_MAX:
		break;
	}
	return plan_str(c, "state unknown: waiting for mxqd to register or the transport to "
			   "report power off");
}

/* Acknowledged drains that the demand step did not take back: power off.
 * Deciding this after the demand step keeps a node that pending work needs
 * from being powered off and woken again a minute later. */
static void step_power_off_acked(struct decide_ctx *c)
{
	for (size_t i = c->reclaim.head; i != NIL; i = work(c, i)->next) {
		struct work_node *wn = work(c, i);
		if (wn->acted || !wn->n->drain_acked || wn->n->jobs_running)
			continue;
		if (fenced(c, i)) {
			wn->note = fence_text(c, i);
			continue;
		}
		add_action(c, i, MXQ_POWER_ACTION_POWER_OFF, MXQ_POWER_POWERING_OFF,
			   plan_str(c, "drain acknowledged: powering off"));
	}
}

/* Unacknowledged drains not taken back: time out, or keep waiting. */
static void step_drain_timeouts(struct decide_ctx *c)
{
	char a[32];

	for (size_t i = c->reclaim.head; i != NIL; i = work(c, i)->next) {
		struct work_node *wn = work(c, i);
		if (wn->acted || wn->n->admin_off)
			continue;
		if (c->now - wn->n->state_since >= c->cfg->drain_timeout_s) {
			dur(c->cfg->drain_timeout_s, a, sizeof(a));
			add_action(c, i, MXQ_POWER_ACTION_CANCEL_DRAIN, MXQ_POWER_ON,
				   plan_printf(c, "drain cancelled: not acknowledged within %s "
					       "drain timeout", a));
		}
	}
	/* DRAINING nodes without caps never made it onto the reclaim list */
	for (size_t i = 0; c->nodes_without_caps && i < c->snap->n_nodes; i++) {
		struct work_node *wn = work(c, i);
		if (!wn->managed || wn->acted || wn->n->admin_off || wn->n->caps ||
		    wn->eff != MXQ_POWER_DRAINING)
			continue;
		if (c->now - wn->n->state_since >= c->cfg->drain_timeout_s) {
			dur(c->cfg->drain_timeout_s, a, sizeof(a));
			add_action(c, i, MXQ_POWER_ACTION_CANCEL_DRAIN, MXQ_POWER_ON,
				   plan_printf(c, "drain cancelled: not acknowledged within %s "
					       "drain timeout", a));
		}
	}
}

static void write_summary(struct decide_ctx *c)
{
	size_t count[_MXQ_POWER_ACTION_MAX] = { 0 };
	uint64_t unplaced = 0;
	char text[512], a[32];
	size_t pos = 0;

	for (size_t k = 0; k < c->plan.n_actions; k++)
		count[c->plan.actions[k].kind]++;
	for (size_t d = 0; d < c->plan.n_outcomes; d++)
		unplaced += c->plan.outcomes[d].unplaced;
	pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "%s%zu action%s",
				c->plan.dry_run ? "dry run: " : "", c->plan.n_actions,
				c->plan.n_actions == 1 ? "" : "s");
	for (int k = 0; k < _MXQ_POWER_ACTION_MAX && pos < sizeof(text); k++)
		if (count[k])
			pos += (size_t)snprintf(text + pos, sizeof(text) - pos, ", %zu %s", count[k],
						action_names[k]);
	if (pos < sizeof(text) && c->breaker_open) {
		dur(c->st.breaker_open_until - c->now, a, sizeof(a));
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "; breaker open (%s left)", a);
	}
	if (pos < sizeof(text) && c->wake_blocked != WAKE_LIMIT_NONE) {
		char blocked[256];
		wake_block_text(c, c->wake_blocked, true, blocked, sizeof(blocked));
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "; wakes stopped: %s",
					blocked);
	}
	if (pos < sizeof(text))
		snprintf(text + pos, sizeof(text) - pos, "; %" PRIu64 " pending jobs unplaced; "
			 "tokens: %.1f resume, %.1f suspend", unplaced, c->st.resume_tokens,
			 c->st.suspend_tokens);
	c->plan.summary = plan_str(c, text);
}

/* The working records of IX's nodes, kept in IX from decision to
 * decision; a new generation makes them all unset at once. */
static struct work_node *work_records(struct mxq_power_index *ix, size_t n, uint32_t *ret_gen)
{
	size_t size = (n ? n : 1) * sizeof(struct work_node);

	if (ix->work_size != size) {
		free(ix->work);
		ix->work = calloc(1, size);
		ix->work_size = ix->work ? size : 0;
		ix->work_gen = 0;
		if (!ix->work)
			return NULL;
	}
	if (++ix->work_gen == 0) {
		memset(ix->work, 0, size);
		ix->work_gen = 1;
	}
	*ret_gen = ix->work_gen;
	return ix->work;
}

int mxq_power_decide(const struct mxq_power_snapshot *snap, int64_t now,
		     const struct mxq_power_config *cfg, struct mxq_power_state *state,
		     struct mxq_power_plan *ret_plan)
{
	struct decide_ctx c = { 0 };
	struct mxq_power_index local = { 0 };
	int r;

	if (!snap || !cfg || !state || !ret_plan)
		return -EINVAL;
	if ((snap->n_nodes && !snap->nodes) || (snap->n_demand && !snap->demand))
		return -EINVAL;
	for (size_t d = 0; d < snap->n_demand; d++)
		if (!snap->demand[d].reqs)
			return -EINVAL;

	/* which nodes each step looks at; checks every entry it takes in */
	c.ix = snap->index ? snap->index : &local;
	r = mxq_power_index_sync(c.ix, snap, cfg);
	if (r < 0) {
		mxq_power_index_done(&local);
		return r;
	}

	c.snap = snap;
	c.cfg = cfg;
	c.now = now;
	c.st = *state;
	c.open = c.reclaim = (struct node_list) { NIL, NIL };
	c.shadow_demand = NO_DEMAND;
	c.wake_max_tmpdir_known = true;
	c.plan.now = now;
	c.plan.dry_run = cfg->dry_run;
	c.plan.idle_time_s = mxq_power_config_idle_time(cfg);
	c.idle_time_s = c.plan.idle_time_s;
	c.plan.arena = calloc(1, sizeof(*c.plan.arena));
	c.w = work_records(c.ix, snap->n_nodes, &c.gen);
	c.acted = malloc((snap->n_nodes ? snap->n_nodes : 1) * sizeof(*c.acted));
	c.acted_pos = calloc(2 * c.ix->words, sizeof(*c.acted_pos));
	c.no_nodes = c.acted_pos + c.ix->words;
	c.plan.explanations = calloc(snap->n_nodes && !snap->no_explanations ? snap->n_nodes : 1,
				     sizeof(*c.plan.explanations));
	c.plan.outcomes = calloc(snap->n_demand ? snap->n_demand : 1, sizeof(*c.plan.outcomes));
	if (!c.plan.arena || !c.w || !c.acted || !c.acted_pos || !c.plan.explanations ||
	    !c.plan.outcomes) {
		r = -ENOMEM;
		goto fail;
	}
	c.plan.n_outcomes = snap->n_demand;

	c.powered = c.ix->powered;
	c.booting = c.ix->booting;
	c.admin_requests = c.ix->admin_requests;
	c.nodes_without_caps = c.ix->nodes_without_caps;
	for (size_t i = 0; cfg->max_power_watts > 0.0 && i < snap->n_nodes; i++)
		c.powered_w += budget_watts(cfg, &snap->nodes[i], snap->nodes[i].state);

	refill_buckets(&c);
	step_learn_gaps(&c);
	settle_breaker_before(&c);
	step_transitions(&c);
	c.breaker_open = c.st.breaker_open_until > now;
	c.plan.breaker_open = c.breaker_open;
	step_demand(&c);
	step_power_off_acked(&c);
	step_drain_timeouts(&c);
	step_suspend(&c);
	step_admin_done(&c);

	for (size_t i = 0; i < snap->n_nodes && !c.nomem && !snap->no_explanations; i++) {
		c.plan.explanations[i] = (struct mxq_power_explanation) {
			.hostname = plan_str(&c, snap->nodes[i].hostname),
			.state = work(&c, i)->eff,
			.text = explain_node(&c, i),
		};
	}
	c.plan.n_explanations = snap->no_explanations ? 0 : snap->n_nodes;
	change_at(&c, c.plan.recheck_at);
	write_summary(&c);
	if (c.nomem) {
		r = -ENOMEM;
		goto fail;
	}

	free(c.acted);
	free(c.acted_pos);
	free(c.reserved);
	mxq_power_index_done(&local);
	*state = c.st;
	*ret_plan = c.plan;
	return (int)(c.plan.n_actions > INT32_MAX ? INT32_MAX : c.plan.n_actions);

fail:
	free(c.acted);
	free(c.acted_pos);
	free(c.reserved);
	mxq_power_index_done(&local);
	mxq_power_plan_free(&c.plan);
	return r;
}

void mxq_power_plan_free(struct mxq_power_plan *plan)
{
	if (!plan)
		return;
	free(plan->actions);
	free(plan->explanations);
	free(plan->outcomes);
	arena_free(plan->arena);
	memset(plan, 0, sizeof(*plan));
}

const char *mxq_power_plan_explain(const struct mxq_power_plan *plan, const char *hostname)
{
	if (!plan || !hostname)
		return NULL;
	for (size_t i = 0; i < plan->n_explanations; i++)
		if (plan->explanations[i].hostname &&
		    strcmp(plan->explanations[i].hostname, hostname) == 0)
			return plan->explanations[i].text;
	return NULL;
}
