/*
 * bench_power - how long one power tick's decision takes on a large site.
 *
 * Builds a synthetic cluster (10,000 nodes of mixed kinds and states) and
 * 20,000 pending requirement signatures (mostly small CPU groups, some GPU,
 * tag-restricted, whitelisted, and some nobody can run), then times
 * mxq_power_decide() with a fresh policy state each round. Prints figures
 * only; it never fails on timing. The generator is seeded, so runs compare.
 *
 *   bench_power [NODES [GROUPS [ROUNDS]]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxq_power_policy.h"

#define NOW INT64_C(1700000000)

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64*: deterministic and good enough for a workload mix */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)(((rng_state * 0x2545F4914F6CDD1DULL) >> 32) % n);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct cluster {
	size_t n_nodes, n_demand;
	char (*names)[40];
	struct mxq_server_caps *caps;
	struct mxq_power_node *nodes;
	struct mxq_power_running_job *running;
	struct mxq_group_reqs *reqs;
	struct mxq_power_demand *demand;
};

static void build_nodes(struct cluster *c, unsigned unplaceable_pct)
{
	char err[256];

	for (size_t i = 0; i < c->n_nodes; i++) {
		uint32_t kind = rnd(100);
		const char *tags = kind < 5 ? "gpu avx512" : kind < 10 ? "bigmem avx512" :
				   kind < 60 ? "avx512" : "";
		uint32_t slots = kind < 10 ? 64 : 16 + 16 * rnd(4);
		uint64_t mem = kind >= 5 && kind < 10 ? 1024 * 1024 : (uint64_t)slots * 4096;
		uint32_t state_pick = rnd(100);
		struct mxq_power_node *n = &c->nodes[i];

		snprintf(c->names[i], sizeof(c->names[i]), "node%05zu.example.org", i);
		if (mxq_server_caps_init(&c->caps[i], c->names[i], tags, NULL, slots, mem, 0,
					 kind < 5 ? 4 : 0, 512 * 1024, err, sizeof(err)) < 0) {
			fprintf(stderr, "caps: %s\n", err);
			exit(1);
		}
		*n = (struct mxq_power_node) {
			.hostname = c->names[i],
			.state = MXQ_POWER_OFF,
			.state_since = NOW - 3600 - rnd(86400),
			.node_class = kind < 5 ? "gpu" : kind < 10 ? "bigmem" : "cpu",
			.efficiency_rank = (int32_t)rnd(1000),
			.caps = &c->caps[i],
			.cycles_today = rnd(6),
		};
		if (state_pick < 40) {
			n->state = MXQ_POWER_ON;
			if (state_pick < 30) {
				/* busy, mostly full; some jobs end within a few minutes */
				n->jobs_running = slots - rnd(slots / 4 + 1);
				n->used_slots = n->jobs_running;
				n->used_memory_mib = (uint64_t)n->jobs_running * 2048;
				c->running[i] = (struct mxq_power_running_job) {
					.expected_end = NOW + 60 + rnd(7200), .slots = 1,
					.memory_mib = 2048,
				};
				n->running = &c->running[i];
				n->n_running = 1;
			} else {
				n->last_job_end = NOW - rnd(7200);
			}
		} else if (state_pick < 45) {
			n->state = MXQ_POWER_POWERING_ON;
			n->state_since = NOW - rnd(300);
		} else if (state_pick < 47) {
			n->state = MXQ_POWER_DRAINING;
			n->state_since = NOW - rnd(120);
		} else if (state_pick < 49) {
			n->state = MXQ_POWER_FAILED;
		} else if (state_pick < 50) {
			n->admin_off = true;
		}
	}
	(void)unplaceable_pct;
}

static void build_demand(struct cluster *c, unsigned unplaceable_pct)
{
	for (size_t d = 0; d < c->n_demand; d++) {
		uint32_t kind = rnd(100);
		const char *prereq = NULL, *whitelist = NULL;
		char host[32];
		uint32_t threads = 1 + rnd(4), gpus = 0;
		uint64_t mem = 1024 * (1 + rnd(16));

		if (kind < unplaceable_pct) {
			prereq = "quantum";          /* no host has that tag */
		} else if (kind < unplaceable_pct + 5) {
			gpus = 1;
		} else if (kind < unplaceable_pct + 10) {
			prereq = "bigmem";
			mem = 256 * 1024;
		} else if (kind < unplaceable_pct + 12) {
			snprintf(host, sizeof(host), "node%05u", rnd((uint32_t)c->n_nodes));
			whitelist = host;
		} else if (kind < unplaceable_pct + 40) {
			prereq = "avx512";
		}
		if (mxq_group_reqs_init(&c->reqs[d], NULL, prereq, whitelist, NULL, threads, mem,
					60 + rnd(600), gpus, 0) < 0) {
			fprintf(stderr, "reqs: out of memory\n");
			exit(1);
		}
		c->demand[d] = (struct mxq_power_demand) {
			.reqs = &c->reqs[d],
			.jobs_pending = 1 + rnd(rnd(10) < 9 ? 5 : 200),
		};
	}
}

static void cluster_free(struct cluster *c)
{
	for (size_t i = 0; i < c->n_nodes; i++)
		mxq_server_caps_done(&c->caps[i]);
	for (size_t d = 0; d < c->n_demand; d++)
		mxq_group_reqs_done(&c->reqs[d]);
	free(c->names);
	free(c->caps);
	free(c->nodes);
	free(c->running);
	free(c->reqs);
	free(c->demand);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void run(size_t n_nodes, size_t n_demand, unsigned unplaceable_pct, unsigned rounds,
		const char *config, const char *what)
{
	struct cluster c = { .n_nodes = n_nodes, .n_demand = n_demand };
	struct mxq_power_config cfg;
	double *ms = calloc(rounds, sizeof(*ms));
	struct mxq_power_plan plan = { 0 };
	uint64_t placed = 0, woken = 0, unplaced = 0, pending = 0;
	int actions = 0;

	c.names = calloc(n_nodes, sizeof(*c.names));
	c.caps = calloc(n_nodes, sizeof(*c.caps));
	c.nodes = calloc(n_nodes, sizeof(*c.nodes));
	c.running = calloc(n_nodes, sizeof(*c.running));
	c.reqs = calloc(n_demand ? n_demand : 1, sizeof(*c.reqs));
	c.demand = calloc(n_demand ? n_demand : 1, sizeof(*c.demand));
	if (!ms || !c.names || !c.caps || !c.nodes || !c.running || !c.reqs || !c.demand) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	build_nodes(&c, unplaceable_pct);
	build_demand(&c, unplaceable_pct);
	for (size_t d = 0; d < n_demand; d++)
		pending += c.demand[d].jobs_pending;

	char err[512];
	mxq_power_config_defaults(&cfg);
	if (mxq_power_config_parse(&cfg, config, "bench", err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	struct mxq_power_snapshot snap = { .nodes = c.nodes, .n_nodes = n_nodes,
					   .demand = c.demand, .n_demand = n_demand };
	for (unsigned r = 0; r < rounds; r++) {
		struct mxq_power_state st = { 0 };
		double t0 = now_ms();
		actions = mxq_power_decide(&snap, NOW, &cfg, &st, &plan);
		ms[r] = now_ms() - t0;
		if (actions < 0) {
			fprintf(stderr, "decide: %d\n", actions);
			exit(1);
		}
		if (r + 1 < rounds)
			mxq_power_plan_free(&plan);
	}
	for (size_t d = 0; d < plan.n_outcomes; d++) {
		placed += plan.outcomes[d].on_capacity + plan.outcomes[d].freeing_soon +
			  plan.outcomes[d].reclaimed;
		woken += plan.outcomes[d].woken;
		unplaced += plan.outcomes[d].unplaced;
	}
	qsort(ms, rounds, sizeof(*ms), cmp_double);
	printf("decide(): %zu nodes x %zu pending groups (%s): %.1f ms median, %.1f ms min, "
	       "%.1f ms max over %u rounds\n", n_nodes, n_demand, what, ms[rounds / 2], ms[0],
	       ms[rounds - 1], rounds);
	printf("  %" PRIu64 " pending jobs: %" PRIu64 " on powered capacity, %" PRIu64
	       " on woken nodes, %" PRIu64 " unplaced; %d actions\n", pending, placed, woken,
	       unplaced, actions);
	printf("  %s\n", plan.summary);
	mxq_power_plan_free(&plan);
	mxq_power_config_done(&cfg);
	cluster_free(&c);
	free(ms);
}

int main(int argc, char **argv)
{
	size_t n_nodes = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	size_t n_demand = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000;
	unsigned rounds = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 5;

	if (!n_nodes || !rounds) {
		fprintf(stderr, "usage: bench_power [NODES [GROUPS [ROUNDS]]]\n");
		return 2;
	}
	/* default limits: the wake budget runs out early */
	run(n_nodes, n_demand, 1, rounds, "", "default limits, 1% unplaceable");
	run(n_nodes, n_demand, 10, rounds, "", "default limits, 10% unplaceable");
	/* no wake limits: every leftover signature searches the OFF nodes */
	run(n_nodes, n_demand, 1, rounds, "resume_rate = 0\nmax_booting = 0\n",
	    "no wake limits, 1% unplaceable");
	run(n_nodes, n_demand, 10, rounds, "resume_rate = 0\nmax_booting = 0\n",
	    "no wake limits, 10% unplaceable");
	run(n_nodes, 0, 0, rounds, "", "no demand, suspend side only");
	return 0;
}
