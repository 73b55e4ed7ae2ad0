/*
 * test_power - the power policy, table driven.
 *
 * Each scenario is a small cluster, its pending demand, a power.conf text,
 * the time and the state carried from the previous tick. The expectations
 * name, per host, the action the plan must contain (or NONE) and a substring
 * of its reason (or, for NONE, of the node's explanation). Every action in
 * the plan must be expected, so an extra wake or drain fails the scenario.
 *
 * Capabilities and requirements are built with the real constructors of
 * mxqd_control.h, so qualification is the real server_is_qualified().
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "mxq_power_policy.h"

#define NOW INT64_C(1000000)
#define MIN 60
#define HOUR 3600
#define MAX_NODES 8
#define MAX_DEMAND 4
#define MAX_EXPECT 8

struct t_node {
	const char *host;
	const char *state;       /* state name, through mxq_power_state_from_string() */
	int64_t ago;             /* state_since = NOW - ago */
	int rank;
	const char *cls;
	const char *tags;
	uint32_t slots;          /* 0 = 16 */
	uint64_t mem;            /* MiB, 0 = 65536 */
	uint32_t gpus;
	uint32_t jobs;           /* running jobs, each 1 slot and 1024 MiB */
	int64_t end_in;          /* running jobs all expected to end in this many s; 0 = unknown */
	bool undetailed;         /* with end_in: n_running = jobs but running = NULL (unknown) */
	int64_t idle_ago;        /* last_job_end = NOW - idle_ago; 0 = none */
	int64_t started_ago;     /* with end_in: the running jobs started then; 0 = unknown */
	int64_t boot_ok_ago;     /* last_boot_ok_at = NOW - boot_ok_ago; 0 = never */
	uint32_t cycles;
	bool admin_off, excluded, acked, seen_up, seen_down, no_caps;
	const char *failure;
	uint32_t failures;       /* failure_count */
	/* leader facts (issue 13) */
	bool gone;               /* daemon_gone */
	const char *closed;      /* its mxqd starts no new jobs, why */
	int reading;             /* 0 none, 1 power on, 2 power off */
	bool readable, can_cut, off_busy, hard_done, ssh, ssh_sent, busy_ack, inherited, unsent;
	bool admin_wake, admin_req, off_by_node;
	int64_t fence_in;        /* fence_until = NOW + fence_in; 0 = none */
	const char *unmanaged;
	const char *failed_call;
	double watts;            /* current_watts reading, 0 = unknown */
};

struct t_demand {
	const char *prereq;
	const char *whitelist;
	uint32_t threads;        /* 0 = 1 */
	uint64_t mem;            /* MiB, 0 = 1024 */
	uint32_t gpus;
	uint64_t jobs;
	uint32_t max_per_node;
	const char *label;
	uint32_t at_once;        /* nodes_at_once: a gang of that many nodes */
	int64_t run_s;           /* requested run time of the first job, 0 = job_time */
};

struct t_expect {
	const char *host;
	const char *action;      /* "WAKE", ... or "NONE" */
	const char *text;        /* substring of the reason / explanation */
};

struct scenario {
	const char *name;
	const char *config;
	struct mxq_power_state prev;
	struct t_node nodes[MAX_NODES];
	struct t_demand demand[MAX_DEMAND];
	struct t_expect expect[MAX_EXPECT];
	int breaker_open;        /* 1 / 0 expected, -1 = don't care */
	int dry_run;             /* 1 / 0 expected, -1 = don't care */
	int64_t soon_jobs;       /* expected outcome[0].freeing_soon, -1 = don't care */
	int64_t soft_off;        /* snapshot soft_off_deadline_s */
	int64_t ssh_after;       /* snapshot ssh_drain_after_s */
	bool reconcile;          /* snapshot reconcile_due */
	int64_t change_in;       /* expected plan.next_change_at - now; 0 = not checked */
	const char *summary;     /* expected in plan.summary; NULL = not checked */
};

/* One node: host, state, seconds in that state, rank, then designated extras. */
#define N(host_, state_, ago_, rank_, ...) \
	{ .host = host_, .state = state_, .ago = ago_, .rank = rank_, __VA_ARGS__ }

/* The state a fresh leader has: full buckets are set up on the first tick. */
#define FRESH { 0 }
#define ANY .breaker_open = -1, .dry_run = -1, .soon_jobs = -1

static const struct scenario scenarios[] = {
	/* ------------------------------------------------------------ idle time */
	{ "idle node suspended after idle time", "warm_pool = 0\nidle_time = 10m\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 20 * MIN) }, { { 0 } },
	  { { "n1", "DRAIN", "idle 20m (idle time 10m)" } }, ANY },
	{ "idle node not suspended before idle time", "warm_pool = 0\nidle_time = 10m\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 3 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough: idle since 1970-01-12 13:43:40 +0000, "
	        "suspended at 1970-01-12 13:53:40 +0000 (idle time 10m)" } }, ANY },
	{ "configured idle time", "warm_pool = 0\nidle_time = 30m\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 20 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "idle since 1970-01-12 13:26:40 +0000, suspended at "
	        "1970-01-12 13:56:40 +0000 (idle time 30m)" } }, ANY },
	/* B = 600 s; before anything is learned a quarter of it */
	{ "auto idle time from break-even energy",
	  "warm_pool = 0\nidle_time = auto\nboot_energy = 60000\nshutdown_energy = 0\n"
	  "idle_watts = 100\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 3 * MIN),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = 2 * MIN) }, { { 0 } },
	  { { "n1", "DRAIN", "idle time 2m30s" },
	    { "n2", "NONE", "suspended at 1970-01-12 13:47:10 +0000 (idle time 2m30s, "
	      "not learned" } }, ANY },
	{ "auto idle time never below its floor",
	  "warm_pool = 0\nidle_time = auto\nboot_energy = 1000\nshutdown_energy = 200\n"
	  "idle_time_floor = 15m\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 11 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "suspended at 1970-01-12 13:50:40 +0000 (idle time 15m, not "
	        "learned" } }, ANY },
	{ "idle_time = never disables suspend", "warm_pool = 0\nidle_time = never\n", FRESH,
	  { N("n1", "ON", 9 * HOUR, 1, .idle_ago = 8 * HOUR) }, { { 0 } },
	  { { "n1", "NONE", "automatic suspend disabled" } }, ANY },
	{ "busy node stays on", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .jobs = 3, .idle_ago = 50 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "busy: 3 jobs running" } }, ANY },
	{ "idle node never used since boot counts idle from state_since", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", 25 * MIN, 1) }, { { 0 } },
	  { { "n1", "DRAIN", "idle 25m" } }, ANY },

	/* ------------------------------------------------------------ warm pool */
	{ "global warm pool keeps the most efficient idle nodes", "warm_pool = 2\n", FRESH,
	  { N("n3", "ON", 2 * HOUR, 3, .idle_ago = HOUR),
	    N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "NONE", "warm pool (1 of 2)" }, { "n2", "NONE", "warm pool (2 of 2)" },
	    { "n3", "DRAIN", "rank 3" } }, ANY },
	{ "busy nodes are not part of the warm pool", "warm_pool = 1\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .jobs = 1),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR),
	    N("n3", "ON", 2 * HOUR, 3, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "NONE", "busy" }, { "n2", "NONE", "warm pool (1 of 1)" },
	    { "n3", "DRAIN", "suspend" } }, ANY },
	{ "class warm pool keeps a node of that class", "warm_pool = 0\nwarm_pool.gpu = 1\n", FRESH,
	  { N("g1", "ON", 2 * HOUR, 5, "gpu", .gpus = 2, .idle_ago = HOUR),
	    N("c1", "ON", 2 * HOUR, 1, "cpu", .idle_ago = HOUR) }, { { 0 } },
	  { { "g1", "NONE", "warm pool for class 'gpu' (1 of 1)" }, { "c1", "DRAIN", "idle" } },
	  ANY },
	{ "class and global warm pools together", "warm_pool = 1\nwarm_pool.gpu = 1\n", FRESH,
	  { N("c1", "ON", 2 * HOUR, 1, "cpu", .idle_ago = HOUR),
	    N("c2", "ON", 2 * HOUR, 2, "cpu", .idle_ago = HOUR),
	    N("g1", "ON", 2 * HOUR, 3, "gpu", .idle_ago = HOUR),
	    N("g2", "ON", 2 * HOUR, 4, "gpu", .idle_ago = HOUR) }, { { 0 } },
	  { { "c1", "NONE", "warm pool (1 of 1)" }, { "c2", "DRAIN", "rank 2" },
	    { "g1", "NONE", "class 'gpu' (1 of 1)" }, { "g2", "DRAIN", "rank 4" } }, ANY },

	/* ------------------------------------------------------------ suspend rate and order */
	{ "suspend rate limits drains, least efficient first", "warm_pool = 0\nsuspend_rate = 1\n",
	  FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR),
	    N("n3", "ON", 2 * HOUR, 3, .idle_ago = HOUR),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR) }, { { 0 } },
	  { { "n3", "DRAIN", "least efficient idle node (rank 3)" },
	    { "n2", "NONE", "suspend rate limit" }, { "n1", "NONE", "suspend rate limit" } }, ANY },
	{ "empty suspend bucket from the previous tick", "warm_pool = 0\nsuspend_rate = 1\n",
	  { .initialized = true, .tokens_at = NOW - 10, .suspend_tokens = 0, .resume_tokens = 1 },
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "NONE", "suspend rate limit reached (1 per minute)" } }, ANY },
	{ "suspend bucket refilled over time", "warm_pool = 0\nsuspend_rate = 1\n",
	  { .initialized = true, .tokens_at = NOW - 120, .suspend_tokens = 0, .resume_tokens = 1 },
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR) }, { { 0 } },
	  { { "n2", "DRAIN", "rank 2" }, { "n1", "NONE", "suspend rate limit" } }, ANY },
	{ "suspend_rate = 0 is unlimited", "warm_pool = 0\nsuspend_rate = 0\n",
	  { .initialized = true, .tokens_at = NOW, .suspend_tokens = 0, .resume_tokens = 0 },
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "DRAIN", "idle" }, { "n2", "DRAIN", "idle" } }, ANY },

	/* ------------------------------------------------------------ min on/off, cycles */
	{ "min on-time protects a fresh node", "warm_pool = 0\nidle_time = 1m\nmin_on_time = 10m\n",
	  FRESH,
	  { N("n1", "ON", 5 * MIN, 1) }, { { 0 } },
	  { { "n1", "NONE", "min on-time: not suspended before 1970-01-12 13:51:40 +0000" } }, ANY },
	{ "max cycles per day keeps a node on", "warm_pool = 0\nmax_cycles_per_day = 12\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR, .cycles = 12),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR, .cycles = 11) }, { { 0 } },
	  { { "n1", "NONE", "12 of 12 boots used today" }, { "n2", "DRAIN", "idle" } }, ANY },
	{ "min off-time protects a freshly stopped node", "min_off_time = 5m\n", FRESH,
	  { N("n1", "OFF", 2 * MIN, 1), N("n2", "OFF", HOUR, 2) },
	  { { .jobs = 4 } },
	  { { "n1", "NONE", "min off-time: not woken before 1970-01-12 13:49:40 +0000 "
	        "(off at least 5m)" }, { "n2", "WAKE", "rank 2" } }, ANY },
	{ "the default min off-time: a host off for 40 s is taken back first", "", FRESH,
	  { N("n1", "OFF", 40, 1), N("n2", "OFF", HOUR, 2) },
	  { { .jobs = 4 } },
	  { { "n1", "WAKE", "rank 1" }, { "n2", "NONE", "" } }, ANY },
	{ "the default min off-time: a host off for 20 s is not", "", FRESH,
	  { N("n1", "OFF", 20, 1), N("n2", "OFF", HOUR, 2) },
	  { { .jobs = 4 } },
	  { { "n1", "NONE", "min off-time: not woken before 1970-01-12 13:46:50 +0000 "
	        "(off at least 30s)" }, { "n2", "WAKE", "rank 2" } }, ANY },
	{ "max cycles per day stops wakes", "max_cycles_per_day = 3\n", FRESH,
	  { N("n1", "OFF", HOUR, 1, .cycles = 3), N("n2", "OFF", HOUR, 2, .cycles = 2) },
	  { { .jobs = 4 } },
	  { { "n1", "NONE", "3 of 3 boots used today" }, { "n2", "WAKE", "woken" } }, ANY },

	/* ------------------------------------------------------------ drain protocol */
	{ "draining node that got work goes back to ON", "", FRESH,
	  { N("n1", "DRAINING", 30, 1, .jobs = 1) }, { { 0 } },
	  { { "n1", "CANCEL_DRAIN", "node got work (1 job running)" } }, ANY },
	{ "acknowledged drain powers off", "", FRESH,
	  { N("n1", "DRAINING", 30, 1, .acked = true) }, { { 0 } },
	  { { "n1", "POWER_OFF", "drain acknowledged" } }, ANY },
	{ "unacknowledged drain times out", "drain_timeout = 5m\n", FRESH,
	  { N("n1", "DRAINING", 6 * MIN, 1) }, { { 0 } },
	  { { "n1", "CANCEL_DRAIN", "not acknowledged within 5m drain timeout" } }, ANY },
	{ "unacknowledged drain waits", "drain_timeout = 5m\n", FRESH,
	  { N("n1", "DRAINING", 1 * MIN, 1) }, { { 0 } },
	  { { "n1", "NONE", "draining since 1970-01-12 13:45:40 +0000: waiting for the "
	        "node's acknowledgement (drain timeout at 1970-01-12 "
	        "13:50:40 +0000)" } }, ANY },
	{ "acknowledged drain taken back for pending work instead of powered off", "", FRESH,
	  { N("d1", "DRAINING", 30, 5, .acked = true), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 2, .label = "group 9" } },
	  { { "d1", "CANCEL_DRAIN", "2 pending jobs of group 9" }, { "o1", "NONE", "" } }, ANY },
	{ "draining node taken back instead of a wake", "", FRESH,
	  { N("d1", "DRAINING", 30, 5), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 4, .label = "group 7" } },
	  { { "d1", "CANCEL_DRAIN", "4 pending jobs of group 7" },
	    { "o1", "NONE", "absorbs all pending demand" } }, ANY },
	{ "admin power off drains even a busy node", "", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .jobs = 2, .admin_off = true) }, { { 0 } },
	  { { "n1", "DRAIN", "admin power off: draining (2 jobs still running)" } }, ANY },
	{ "admin-off drain is not cancelled by its jobs", "", FRESH,
	  { N("n1", "DRAINING", 20 * MIN, 1, .jobs = 2, .admin_off = true) }, { { 0 } },
	  { { "n1", "NONE", "admin power off: waiting for 2 jobs" } }, ANY },

	/* ------------------------------------------------------------ deadlines */
	{ "power-off confirmed", "", FRESH,
	  { N("n1", "POWERING_OFF", 40, 1, .seen_down = true) }, { { 0 } },
	  { { "n1", "MARK_OFF", "power-off confirmed" } }, ANY },
	{ "shutdown deadline missed", "shutdown_deadline = 5m\n", FRESH,
	  { N("n1", "POWERING_OFF", 6 * MIN, 1) }, { { 0 } },
	  { { "n1", "MARK_FAILED", "did not power off within 5m shutdown deadline" } }, ANY },
	{ "shutdown deadline passed while the power-off call runs", "shutdown_deadline = 5m\n",
	  FRESH,
	  { N("n1", "POWERING_OFF", 6 * MIN, 1, .off_busy = true),
	    N("n2", "POWERING_OFF", 6 * MIN, 2, .off_busy = true, .can_cut = true, .reading = 1),
	    N("n3", "POWERING_OFF", 6 * MIN, 3) }, { { 0 } },
	  { { "n1", "NONE", "the 5m shutdown deadline has passed, but the power-off call is still "
	      "running (it may still switch the node off): FAILED only once it returned" },
	    { "n2", "NONE", "power-off call is still running" },
	    { "n3", "MARK_FAILED", "did not power off within 5m shutdown deadline" } }, ANY },
	{ "boot deadline missed", "boot_deadline = 10m\n", FRESH,
	  { N("n1", "POWERING_ON", 11 * MIN, 1) }, { { 0 } },
	  { { "n1", "MARK_FAILED", "did not come back within 10m boot deadline" } }, ANY },
	{ "booted node registers", "", FRESH,
	  { N("n1", "POWERING_ON", 2 * MIN, 1, .seen_up = true) }, { { 0 } },
	  { { "n1", "MARK_ON", "boot completed" } }, ANY },
	{ "unknown node registers or is seen down", "", FRESH,
	  { N("u1", "UNKNOWN", 60, 1, .seen_up = true), N("u2", "UNKNOWN", 60, 2, .seen_down = true),
	    N("u3", "UNKNOWN", 60, 3) }, { { 0 } },
	  { { "u1", "MARK_ON", "mxqd registered" }, { "u2", "MARK_OFF", "power off" },
	    { "u3", "NONE", "state unknown" } }, ANY },
	{ "OFF node powered on by hand is recorded ON", "", FRESH,
	  { N("n1", "OFF", HOUR, 1, .seen_up = true) }, { { 0 } },
	  { { "n1", "MARK_ON", "outside the power manager" } }, ANY },

	/* ------------------------------------------------------------ breaker */
	{ "breaker opens after consecutive failed boots",
	  "breaker_failures = 2\nbreaker_cooldown = 30m\n",
	  { .boot_failures = 1, .last_boot_failure_at = NOW - 300 },
	  { N("b1", "POWERING_ON", 11 * MIN, 2), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 4 } },
	  { { "b1", "MARK_FAILED", "boot deadline" },
	    { "o1", "NONE", "breaker open after 2 consecutive failed boots (until "
	          "1970-01-12 14:16:40 +0000)" } },
	  .breaker_open = 1, .dry_run = -1, .soon_jobs = -1 },
	{ "open breaker stops wakes", "breaker_failures = 3\n",
	  { .boot_failures = 3, .last_boot_failure_at = NOW - 600, .breaker_open_until = NOW + 600 },
	  { N("o1", "OFF", HOUR, 1) }, { { .jobs = 4 } },
	  { { "o1", "NONE", "automatic wakes stopped: breaker open" } },
	  .breaker_open = 1, .dry_run = -1, .soon_jobs = -1 },
	{ "breaker closes after its cooldown", "breaker_failures = 3\n",
	  { .boot_failures = 3, .last_boot_failure_at = NOW - 3600, .breaker_open_until = NOW - 1 },
	  { N("o1", "OFF", HOUR, 1) }, { { .jobs = 4 } },
	  { { "o1", "WAKE", "woken" } }, .breaker_open = 0, .dry_run = -1, .soon_jobs = -1 },
	{ "a completed boot ends the failure streak", "breaker_failures = 3\n",
	  { .boot_failures = 2, .last_boot_failure_at = NOW - 100 },
	  { N("ok", "ON", 50, 3, .jobs = 16, .boot_ok_ago = 50),
	    N("b1", "POWERING_ON", 11 * MIN, 2), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 4 } },
	  { { "b1", "MARK_FAILED", "boot deadline" }, { "o1", "WAKE", "woken" } },
	  .breaker_open = 0, .dry_run = -1, .soon_jobs = -1 },

	{ "no suspends while the breaker is open", "warm_pool = 0\nbreaker_failures = 3\n",
	  { .boot_failures = 3, .last_boot_failure_at = NOW - 600, .breaker_open_until = NOW + 600 },
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "NONE", "boots are failing (breaker open)" } },
	  .breaker_open = 1, .dry_run = -1, .soon_jobs = -1 },

	/* ------------------------------------------------------------ admin, excluded, failed */
	{ "admin-off node is never woken", "", FRESH,
	  { N("a1", "OFF", HOUR, 1, .admin_off = true), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 4 } },
	  { { "a1", "NONE", "admin off" }, { "o2", "WAKE", "rank 2" } }, ANY },
	{ "excluded nodes are untouched", "warm_pool = 0\n", FRESH,
	  { N("x1", "ON", 9 * HOUR, 1, .idle_ago = 8 * HOUR, .excluded = true),
	    N("x2", "POWERING_ON", 2 * HOUR, 2, .excluded = true),
	    N("x3", "OFF", 2 * HOUR, 3, .excluded = true) },
	  { { .jobs = 40 } },
	  { { "x1", "NONE", "excluded" }, { "x2", "NONE", "excluded" }, { "x3", "NONE", "excluded" } },
	  ANY },
	{ "hosts excluded in power.conf are untouched", "warm_pool = 0\nexclude = n1 other\n", FRESH,
	  { N("n1.example.org", "ON", 9 * HOUR, 1, .idle_ago = 8 * HOUR),
	    N("n2.example.org", "ON", 9 * HOUR, 2, .idle_ago = 8 * HOUR) }, { { 0 } },
	  { { "n1.example.org", "NONE", "excluded" }, { "n2.example.org", "DRAIN", "idle" } }, ANY },
	{ "failed node is left alone", "failed_retries = 0\n", FRESH,
	  { N("f1", "FAILED", HOUR, 1, .failure = "did not come back", .seen_up = true),
	    N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 4 } },
	  { { "f1", "NONE", "failed: did not come back; left alone until 'mxqadmin power clear f1'" },
	    { "o2", "WAKE", "woken" } }, ANY },

	/* ------------------------------------------------------------ faults (issue 13) */
	{ "dead node, no transport reads the power: recorded OFF when reconciling", "", FRESH,
	  { N("n1", "ON", HOUR, 1, .gone = true, .seen_down = true) }, { { 0 } },
	  { { "n1", "MARK_OFF", "no mxqd heartbeat and no transport reads the power state" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = -1, .reconcile = true },
	{ "dead node, no transport reads the power: neither drained nor recorded OFF before",
	  "warm_pool = 0\nidle_time = 1m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = HOUR, .gone = true, .seen_down = true),
	    N("n2", "ON", HOUR, 2, .gone = true, .seen_down = true, .admin_off = true) }, { { 0 } },
	  { { "n1", "NONE", "recorded OFF at the next reconciliation" },
	    { "n2", "DRAIN", "admin power off" } }, ANY },
	{ "dead node, power on: stays ON, never drained", "warm_pool = 0\nidle_time = 1m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = HOUR, .gone = true, .seen_down = true, .reading = 1),
	    N("n2", "ON", HOUR, 2, .jobs = 2, .gone = true, .seen_down = true, .reading = 1) },
	  { { 0 } },
	  { { "n1", "NONE", "mxqd gone, power on: not drained" },
	    { "n2", "NONE", "2 jobs wait for its next mxqd" } }, ANY },
	{ "an idle node takes the queued job (control for the next rows)",
	  "warm_pool = 0\nidle_time = 10m\n", FRESH,
	  { N("p1", "ON", HOUR, 1, .idle_ago = 2 * MIN), N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 1 } },
	  { { "p1", "NONE", "needed: 1 pending jobs" }, { "o1", "NONE", "" } }, ANY },
	{ "a paused node is no capacity: the queued job wakes another",
	  "warm_pool = 0\nidle_time = 10m\n", FRESH,
	  { N("p1", "ON", HOUR, 1, .idle_ago = 2 * MIN,
	      .closed = "its mxqd is paused: the tmpdir is read-only"), N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 1 } },
	  { { "p1", "NONE", "starts no new jobs (its mxqd is paused: the tmpdir is read-only)" },
	    { "o1", "WAKE", "rank 2" } }, ANY },
	{ "a stopping busy node: the end of its jobs frees no room", "", FRESH,
	  { N("s1", "ON", HOUR, 1, .jobs = 15, .end_in = 30, .closed = "its mxqd is stopping"),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 2 } },
	  { { "s1", "NONE", "busy: 15 jobs running; starts no new jobs: its mxqd is stopping" },
	    { "o1", "WAKE", "rank 2" } }, ANY },
	{ "a paused node is no warm pool; it is suspended when idle", "warm_pool = 1\n", FRESH,
	  { N("p1", "ON", 2 * HOUR, 1, .idle_ago = HOUR, .closed = "its mxqd is paused: disk"),
	    N("n2", "ON", 2 * HOUR, 2, .idle_ago = HOUR) }, { { 0 } },
	  { { "p1", "DRAIN", "idle" }, { "n2", "NONE", "warm pool (1 of 1)" } }, ANY },
	{ "a booting node (no mxqd yet: the leader says gone) is capacity: no second wake", "",
	  FRESH,
	  { N("b1", "POWERING_ON", 30, 1, .gone = true, .seen_down = true),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 1 } },
	  { { "b1", "NONE", "" }, { "o1", "NONE", "absorbs all pending demand" } }, ANY },
	{ "an ON node whose mxqd is gone is no capacity", "", FRESH,
	  { N("g1", "ON", HOUR, 1, .gone = true, .seen_down = true, .reading = 1),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 1 } },
	  { { "g1", "NONE", "mxqd gone, power on" }, { "o1", "WAKE", "rank 2" } }, ANY },
	{ "dead node, power off: recorded OFF once", "", FRESH,
	  { N("n1", "ON", HOUR, 1, .gone = true, .seen_down = true, .reading = 2) }, { { 0 } },
	  { { "n1", "MARK_OFF", "mxqd gone and exec reports power off: recorded OFF" } }, ANY },
	{ "dead node waits for the power reading", "warm_pool = 0\nidle_time = 1m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = HOUR, .gone = true, .seen_down = true,
	      .readable = true) }, { { 0 } },
	  { { "n1", "NONE", "waiting for the transport's power reading" } }, ANY },
	{ "dead node recorded OFF does not flap back (no fresh registration)", "", FRESH,
	  { N("n1", "OFF", 10, 1, .gone = true, .seen_down = true, .reading = 2) }, { { 0 } },
	  { { "n1", "NONE", "off" } }, ANY },
	{ "reconcile: switched off / on outside the power manager", "", FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 1, .reading = 2),
	    N("n2", "OFF", HOUR, 2, .reading = 1, .seen_down = true) }, { { 0 } },
	  { { "n1", "MARK_OFF", "reconciled: exec reports power off although recorded ON" },
	    { "n2", "MARK_ON", "reconciled: exec reports power on although recorded OFF" } }, ANY },
	{ "draining node whose mxqd is gone: powered off, not drained again", "", FRESH,
	  { N("n1", "DRAINING", 30, 1, .gone = true, .seen_down = true),
	    N("n2", "DRAINING", 30, 2, .gone = true, .seen_down = true, .reading = 2),
	    N("n3", "DRAINING", 30, 3, .gone = true, .seen_down = true, .off_by_node = true),
	    N("n4", "DRAINING", 30, 4, .jobs = 1, .admin_off = true, .gone = true,
	      .seen_down = true, .reading = 2) },
	  { { 0 } },
	  { { "n1", "POWER_OFF", "its mxqd exited or is gone, nothing can claim here" },
	    { "n2", "MARK_OFF", "mxqd gone while draining and the power is off" },
	    { "n3", "NONE", "draining" }, { "n4", "MARK_OFF", "mxqd gone while draining" } }, ANY },
	{ "ssh drain for an mxqd that does not answer, once per drain", "", FRESH,
	  { N("n1", "DRAINING", 30, 1, .ssh = true), N("n2", "DRAINING", 30, 2, .ssh = true,
	      .ssh_sent = true), N("n3", "DRAINING", 30, 3, .ssh = true, .busy_ack = true),
	    N("n4", "DRAINING", 5, 4, .ssh = true),
	    N("n5", "DRAINING", 30, 5, .ssh = true, .gone = true, .seen_down = true),
	    N("n6", "DRAINING", 30, 6, .ssh = true, .ssh_sent = true, .off_busy = true,
	      .gone = true, .seen_down = true),
	    N("n7", "DRAINING", 30, 7, .ssh = true, .ssh_sent = true, .gone = true,
	      .seen_down = true) }, { { 0 } },
	  { { "n1", "SSH_DRAIN", "did not answer the drain" }, { "n2", "NONE", "draining" },
	    { "n3", "NONE", "draining" }, { "n4", "NONE", "draining" },
	    { "n5", "SSH_DRAIN", "did not answer the drain" }, { "n6", "NONE", "draining" },
	    { "n7", "POWER_OFF", "its mxqd exited or is gone" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = -1, .ssh_after = 10 },
	{ "soft off escalates to hard off after the soft-off deadline", "", FRESH,
	  { N("n1", "POWERING_OFF", 200, 1, .can_cut = true, .reading = 1),
	    N("n2", "POWERING_OFF", 60, 2, .can_cut = true, .reading = 1),
	    N("n3", "POWERING_OFF", 200, 3, .can_cut = true, .reading = 1, .off_busy = true),
	    N("n4", "POWERING_OFF", 200, 4, .can_cut = true, .reading = 1, .hard_done = true),
	    N("n5", "POWERING_OFF", 200, 5, .reading = 1, .seen_down = true) }, { { 0 } },
	  { { "n1", "HARD_OFF", "still on 2m after the soft off: hard power off" },
	    { "n2", "NONE", "powering off" }, { "n3", "NONE", "powering off" },
	    { "n4", "MARK_OFF", "power-off confirmed" }, { "n5", "NONE", "powering off" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = -1, .soft_off = 120 },
	{ "power reading confirms an off only with a power cut or no mxqd", "", FRESH,
	  { N("n1", "POWERING_OFF", 20, 1, .reading = 2),
	    N("n2", "POWERING_OFF", 20, 2, .reading = 2, .seen_down = true),
	    N("n3", "POWERING_OFF", 20, 3, .reading = 2, .can_cut = true),
	    N("n4", "POWERING_OFF", 20, 4, .seen_down = true, .off_busy = true) }, { { 0 } },
	  { { "n1", "NONE", "powering off" }, { "n2", "MARK_OFF", "confirmed" },
	    { "n3", "MARK_OFF", "confirmed" }, { "n4", "NONE", "powering off" } }, ANY },
	{ "inherited transitions are sent again", "", FRESH,
	  { N("n1", "POWERING_ON", 60, 1, .inherited = true),
	    N("n2", "POWERING_OFF", 60, 2, .inherited = true),
	    N("n3", "POWERING_ON", 60, 3, .inherited = true, .seen_up = true),
	    N("n4", "POWERING_OFF", 60, 4, .inherited = true, .seen_down = true) }, { { 0 } },
	  { { "n1", "RESEND", "wake sent again by the new leader" },
	    { "n2", "RESEND", "power-off sent again by the new leader" },
	    { "n3", "MARK_ON", "boot completed" }, { "n4", "MARK_OFF", "confirmed" } }, ANY },
	{ "this leader's own unsent intents are sent, not left to the deadline",
	  "boot_deadline = 10m\nshutdown_deadline = 5m\n", FRESH,
	  { N("n1", "POWERING_ON", 20 * MIN, 1, .unsent = true),
	    N("n2", "POWERING_OFF", 20 * MIN, 2, .unsent = true),
	    N("n3", "POWERING_ON", 60, 3, .unsent = true, .seen_up = true),
	    N("n4", "POWERING_OFF", 60, 4, .unsent = true, .seen_down = true) }, { { 0 } },
	  { { "n1", "RESEND", "wake sent now: this leader wrote it at an earlier decision but did "
	      "not send it (the database connection was lost at the commit, or the lease ran "
	      "short before the call)" },
	    { "n2", "RESEND", "power-off sent now: this leader wrote it" },
	    { "n3", "MARK_ON", "boot completed" }, { "n4", "MARK_OFF", "confirmed" } }, ANY },
	{ "in-flight window of the previous leader: no wake, no power-off", "warm_pool = 0\n", FRESH,
	  { N("o1", "OFF", HOUR, 1, .fence_in = 20), N("n1", "ON", HOUR, 2, .idle_ago = HOUR,
	      .fence_in = 20), N("d1", "DRAINING", 30, 3, .acked = true, .admin_off = true,
	      .fence_in = 20), N("o2", "OFF", HOUR, 4, .fence_in = -1) },
	  { { .jobs = 20 } },
	  { { "o1", "NONE", "previous leader's in-flight power calls: no wake or "
	        "power-off before 1970-01-12 13:47:00 +0000" },
	    { "n1", "NONE", "needed" }, { "d1", "NONE", "in-flight" },
	    { "o2", "WAKE", "woken" } }, ANY },
	{ "in-flight window: a node off by its heartbeat stays POWERING_OFF", "", FRESH,
	  { N("n1", "POWERING_OFF", 60, 1, .inherited = true, .seen_down = true, .fence_in = 20),
	    N("n2", "POWERING_OFF", 60, 2, .seen_down = true, .fence_in = 20),
	    N("n3", "POWERING_OFF", 60, 3, .seen_down = true, .fence_in = -1) }, { { 0 } },
	  { { "n1", "NONE", "waiting out the previous leader's in-flight power calls" },
	    { "n2", "NONE", "waiting out the previous leader's in-flight power calls" },
	    { "n3", "MARK_OFF", "power-off confirmed" } }, ANY },
	{ "in-flight window keeps an idle node on", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", HOUR, 2, .idle_ago = HOUR, .fence_in = 20) }, { { 0 } },
	  { { "n1", "NONE", "lease expiry + the longest transport call" } }, ANY },
	{ "admin requests: wake, then done", "", FRESH,
	  { N("a1", "OFF", HOUR, 1, .admin_wake = true, .admin_req = true),
	    N("a2", "OFF", HOUR, 2, .admin_wake = true, .admin_req = true, .fence_in = 30),
	    N("a3", "ON", HOUR, 3, .admin_off = true, .admin_req = true) }, { { 0 } },
	  { { "a1", "WAKE", "on by admin: test" }, { "a1", "ADMIN_DONE", "power on request" },
	    { "a2", "NONE", "waiting out the previous leader's in-flight" },
	    { "a3", "DRAIN", "admin power off" }, { "a3", "ADMIN_DONE", "power off request" } }, ANY },
	{ "admin power on of a draining node takes the drain back", "warm_pool = 0\n", FRESH,
	  { N("d1", "DRAINING", 30, 1, .idle_ago = HOUR, .acked = true, .admin_wake = true,
	      .admin_req = true),
	    N("d2", "DRAINING", 30, 2, .idle_ago = HOUR, .admin_wake = true, .admin_req = true),
	    N("p3", "POWERING_OFF", 5, 3, .admin_wake = true, .admin_req = true),
	    N("o4", "OFF", HOUR, 4, .admin_wake = true, .admin_req = true) },
	  { { 0 } },
	  { { "d1", "CANCEL_DRAIN", "drain cancelled: on by admin: test" },
	    { "d1", "ADMIN_DONE", "power on request" },
	    { "d2", "CANCEL_DRAIN", "drain cancelled: on by admin: test" },
	    { "d2", "ADMIN_DONE", "power on request" }, { "p3", "NONE", "powering off" },
	    { "o4", "WAKE", "on by admin: test" }, { "o4", "ADMIN_DONE", "power on request" } },
	  ANY },
	{ "transport that cannot act: not managed", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = HOUR,
	      .unmanaged = "transport_on 'x' is not supported (supported: exec, ipmi, wol)") },
	  { { 0 } },
	  { { "n1", "NONE", "not managed: transport_on 'x' is not supported" } }, ANY },
	{ "a failed transport call marks the node FAILED", "", FRESH,
	  { N("n1", "POWERING_ON", 5, 1, .failed_call = "wake of n1 failed after 0.10 s: exit 1"),
	    N("n2", "POWERING_OFF", 5, 2, .failed_call = "power off of n2 failed: exit 1") },
	  { { 0 } },
	  { { "n1", "MARK_FAILED", "wake of n1 failed" }, { "n2", "MARK_FAILED", "power off of n2" } },
	  ANY },
	{ "FAILED nodes retried with exponential backoff",
	  "failed_retry_delay = 10m\nfailed_retry_factor = 2\nfailed_retries = 3\n", FRESH,
	  { N("f1", "FAILED", 5 * MIN, 1, .failures = 1, .failure = "boot"),
	    N("f2", "FAILED", 11 * MIN, 2, .failures = 1, .failure = "boot"),
	    N("f3", "FAILED", 15 * MIN, 3, .failures = 2, .failure = "boot"),
	    N("f4", "FAILED", 21 * MIN, 4, .failures = 2, .failure = "boot"),
	    N("f5", "FAILED", 39 * MIN, 5, .failures = 3, .failure = "boot"),
	    N("f6", "FAILED", 30 * HOUR, 6, .failures = 4, .failure = "boot") }, { { 0 } },
	  { { "f1", "NONE", "automatic retry 1 of 3 at 1970-01-12 13:51:40 +0000 (backoff 10m;" },
	    { "f2", "RETRY", "automatic retry 1 of 3 after 11m FAILED (boot)" },
	    { "f3", "NONE", "automatic retry 2 of 3 at 1970-01-12 13:51:40 +0000 (backoff 20m;" },
	    { "f4", "RETRY", "automatic retry 2 of 3" },
	    { "f5", "NONE", "automatic retry 3 of 3 at 1970-01-12 13:47:40 +0000 (backoff 40m;" },
	    { "f6", "NONE", "(automatic retries used up); left alone until 'mxqadmin power clear f6'" } },
	  ANY },
	{ "no automatic retry inside an earlier leader's in-flight window",
	  "failed_retry_delay = 10s\nfailed_retries = 3\n", FRESH,
	  { N("f1", "FAILED", 60, 1, .failures = 1, .failure = "power off", .fence_in = 20),
	    N("f2", "FAILED", 60, 2, .failures = 1, .failure = "power off", .fence_in = -1) },
	  { { 0 } },
	  { { "f1", "NONE", "waiting out the previous leader's in-flight power calls: no wake or "
	      "power-off before 1970-01-12 13:47:00 +0000" },
	    { "f2", "RETRY", "automatic retry 1 of 3" } }, ANY },
	{ "stranded jobs: woken to recover, or marked UNKNOWN", "failed_retries = 1\n", FRESH,
	  { N("s1", "OFF", 10, 1, .jobs = 2, .gone = true, .seen_down = true),
	    N("s2", "OFF", 10, 2, .jobs = 1, .gone = true, .seen_down = true, .admin_off = true),
	    N("s3", "FAILED", HOUR, 3, .jobs = 1, .gone = true, .seen_down = true, .failures = 2),
	    N("s4", "FAILED", 60, 4, .jobs = 1, .gone = true, .seen_down = true, .failures = 1),
	    N("s5", "OFF", 10, 5, .jobs = 1, .gone = true, .seen_down = true, .fence_in = 9) },
	  { { 0 } },
	  { { "s1", "WAKE", "woken to recover 2 jobs still active here" },
	    { "s2", "RESOLVE_JOBS", "1 job still active on a node that is off and stays off "
				    "(admin off): marked UNKNOWN" },
	    { "s3", "RESOLVE_JOBS", "(no automatic retry left): marked UNKNOWN" },
	    { "s4", "NONE", "automatic retry 1 of 1 at 1970-01-12 13:55:40 +0000" },
	    { "s5", "NONE", "waiting out the previous leader's in-flight power calls" } }, ANY },

	/* ------------------------------------------------------------ resume */
	{ "most efficient OFF node is woken", "", FRESH,
	  { N("o3", "OFF", HOUR, 3), N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 16, .label = "group 12" } },
	  { { "o1", "WAKE", "woken: 16 pending jobs of group 12" }, { "o2", "NONE", "off" },
	    { "o3", "NONE", "off" } }, ANY },
	{ "enough nodes are woken for the demand", "", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2), N("o3", "OFF", HOUR, 3),
	    N("o4", "OFF", HOUR, 4) },
	  { { .jobs = 40 } },
	  { { "o1", "WAKE", "takes 16" }, { "o2", "WAKE", "takes 16" }, { "o3", "WAKE", "takes 8" },
	    { "o4", "NONE", "not needed" } }, ANY },
	{ "no wake when ON capacity absorbs the demand", "", FRESH,
	  { N("n1", "ON", HOUR, 2, .jobs = 6), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 8 } },
	  { { "n1", "NONE", "busy" }, { "o1", "NONE", "absorbs all pending demand" } }, ANY },
	{ "idle ON node with work pending is needed, not suspended", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", HOUR, 2, .idle_ago = HOUR), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 2, .label = "group 3" } },
	  { { "n1", "NONE", "needed: 2 pending jobs (of group 3 first)" }, { "o1", "NONE", "off" } },
	  ANY },
	{ "booting node counts as capacity", "", FRESH,
	  { N("b1", "POWERING_ON", 60, 2), N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 10 } },
	  { { "b1", "NONE", "counted as capacity for 10 pending jobs" }, { "o1", "NONE", "off" } },
	  ANY },
	{ "GPU group wakes exactly the GPU node", "warm_pool = 1\n", FRESH,
	  { N("c1", "ON", HOUR, 1), N("o1", "OFF", HOUR, 2), N("g1", "OFF", HOUR, 9, .gpus = 2),
	    N("o3", "OFF", HOUR, 3) },
	  { { .gpus = 1, .jobs = 2, .label = "gpu group" } },
	  { { "g1", "WAKE", "2 pending jobs of gpu group (needs 1 thread, 1024 MiB, 1 GPU)" },
	    { "o1", "NONE", "off" }, { "o3", "NONE", "off" } }, ANY },
	{ "tag-restricted group wakes exactly the tagged node", "", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("t1", "OFF", HOUR, 7, .tags = "bigmem fast"),
	    N("o2", "OFF", HOUR, 2) },
	  { { .prereq = "bigmem & !slow", .jobs = 3 } },
	  { { "t1", "WAKE", "prerequisites 'bigmem & !slow'" }, { "o1", "NONE", "not needed" },
	    { "o2", "NONE", "not needed" } }, ANY },
	{ "whitelist naming one host wakes that host", "", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("node7.example.org", "OFF", HOUR, 8),
	    N("o2", "OFF", HOUR, 2) },
	  { { .whitelist = "node7", .jobs = 1 } },
	  { { "node7.example.org", "WAKE", "whitelist of 1 host" }, { "o1", "NONE", "not needed" },
	    { "o2", "NONE", "not needed" } }, ANY },
	{ "no wake when a busy node frees sooner than a boot", "boot_time = 3m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .jobs = 4, .end_in = 60), N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 3 } },
	  { { "n1", "NONE", "busy" }, { "o1", "NONE", "absorbs all pending demand" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = 3 },
	{ "wake when the busy node frees later than a boot", "boot_time = 3m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .jobs = 4, .end_in = 10 * MIN),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 3 } },
	  { { "o1", "WAKE", "no powered-on node has room" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = 0 },
	{ "a job overdue by more than a boot does not hold back a wake", "boot_time = 3m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .jobs = 4, .end_in = -10 * MIN),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 3 } },
	  { { "o1", "WAKE", "no powered-on node has room" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = 0 },
	{ "jobs counted but not detailed (running NULL) do not hold back a wake",
	  "boot_time = 3m\n", FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .jobs = 3, .end_in = 60, .undetailed = true),
	    N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 3 } },
	  { { "o1", "WAKE", "no powered-on node has room" } },
	  .breaker_open = -1, .dry_run = -1, .soon_jobs = 0 },
	/* gangs: nodes_at_once > 1 (the simulator's wide jobs) */
#define GANG_CONF "warm_pool = 0\nidle_time = 5m\nboot_time = 3m\n"
	{ "gang whose last node frees late: its idle node is not held, no wake", GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = 2 * HOUR),
	    N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "DRAIN", "idle 10m" }, { "n2", "NONE", "busy" },
	    { "o1", "NONE", "need several nodes at once, not free soon enough (expected "
	          "ends of running jobs): woken ahead at 1970-01-12 15:38:40 "
	          "+0000" } }, ANY },
	{ "gang beside a busy node whose jobs are not detailed: that node is not waited for",
	  GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = 60, .undetailed = true),
	    N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "NONE", "needed: 1 pending jobs" }, { "n2", "NONE", "busy" },
	    { "o1", "WAKE", "no powered-on node has room" } }, ANY },
	{ "gang whose last node frees within a boot plus the idle time: woken ahead",
	  GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = 7 * MIN),
	    N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "NONE", "needed: 1 pending jobs" }, { "n2", "NONE", "busy" },
	    { "o1", "WAKE", "woken: 2 pending jobs" } }, ANY },
	/* whole-node parts: busy capacity too full for one comes by the end of
	 * its jobs, with the full nodes (gang_deferral's busy_later) */
	{ "whole-node gang beside a partly busy node whose jobs end late: deferred", GANG_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 4, .jobs = 1, .end_in = 2 * HOUR),
	    N("o1", "OFF", HOUR, 3, .slots = 4) },
	  { { .threads = 4, .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "DRAIN", "idle 10m" }, { "n2", "NONE", "busy" },
	    { "o1", "NONE", "not free soon enough" } }, ANY, .change_in = 2 * HOUR - 8 * MIN },
	{ "whole-node gang beside a partly busy node freeing within a boot plus the idle time",
	  GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 4, .jobs = 1, .end_in = 7 * MIN),
	    N("o1", "OFF", HOUR, 3, .slots = 4) },
	  { { .threads = 4, .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "NONE", "needed: 1 pending jobs" }, { "n2", "NONE", "busy" },
	    { "o1", "WAKE", "woken: 2 pending jobs" } }, ANY },
	{ "half-node gang fits beside the late jobs of a partly busy node: served now", GANG_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .slots = 4, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 4, .jobs = 1, .end_in = 2 * HOUR),
	    N("o1", "OFF", HOUR, 3, .slots = 4) },
	  { { .threads = 2, .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "NONE", "needed: 1 pending jobs" }, { "n2", "NONE", "busy" },
	    { "o1", "WAKE", "woken: 1 pending jobs" } }, ANY },
	{ "gang that no set of nodes can ever take: served as independent jobs", GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN), N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "NONE", "needed" }, { "o1", "WAKE", "woken" } }, ANY },
	{ "a long job stays off the node a deferred gang waits for: wakes another", GANG_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 1 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = HOUR),
	    N("o1", "OFF", HOUR, 3) },
	  { { .whitelist = "n1 n2", .jobs = 2, .max_per_node = 1, .at_once = 2 },
	    { .jobs = 1, .run_s = 2 * HOUR } },
	  { { "n1", "NONE", "not idle long enough" }, { "n2", "NONE", "busy" },
	    { "o1", "WAKE", "woken: 1 pending jobs" } }, ANY },
	{ "a job that ends before the deferred gang can start takes its idle node", GANG_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 1 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = HOUR),
	    N("o1", "OFF", HOUR, 3) },
	  { { .whitelist = "n1 n2", .jobs = 2, .max_per_node = 1, .at_once = 2 },
	    { .jobs = 1, .run_s = 20 * MIN } },
	  { { "n1", "NONE", "needed: 1 pending jobs" }, { "n2", "NONE", "busy" },
	    { "o1", "NONE", "off" } }, ANY },
	{ "a gang served now reserves nothing: a later long job takes an idle node, no wake",
	  GANG_CONF, FRESH,
	  /* the gang goes to the booting node and the first idle one (the
	   * open list's order); the nodes free first are the two idle ones,
	   * and holding i2 for the gang would wake o1 for the long job */
	  { N("b1", "POWERING_ON", MIN, 1, .slots = 1),
	    N("i1", "ON", HOUR, 2, .slots = 1, .idle_ago = MIN),
	    N("i2", "ON", HOUR, 3, .slots = 1, .idle_ago = MIN),
	    N("o1", "OFF", HOUR, 4, .slots = 1) },
	  { { .jobs = 2, .max_per_node = 1, .at_once = 2 }, { .jobs = 1, .run_s = 2 * HOUR } },
	  { { "i2", "NONE", "needed: 1 pending jobs" }, { "o1", "NONE", "off" } }, ANY },
	/* next_change_at: when the clock alone may change the plan (the
	 * simulator asks again no later than that) */
	{ "next change: a deferred gang's deferral ends", GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = 2 * HOUR),
	    N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 3, .max_per_node = 1, .at_once = 3 } },
	  { { "n1", "DRAIN", "idle 10m" }, { "n2", "NONE", "busy" } }, ANY,
	  .change_in = 2 * HOUR - 8 * MIN },
	{ "next change: a later gang finds its nodes early enough (not the first)", GANG_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 10 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = 3 * HOUR),
	    N("n3", "ON", HOUR, 3, .slots = 1, .jobs = 1, .end_in = 2 * HOUR) },
	  { { .whitelist = "n1 n2", .jobs = 2, .max_per_node = 1, .at_once = 2 },
	    { .whitelist = "n1 n3", .jobs = 2, .max_per_node = 1, .at_once = 2 } },
	  { { "n1", "DRAIN", "idle" } }, ANY, .change_in = 2 * HOUR - 8 * MIN },
	{ "next change: a reserved node stops taking a job that would delay the gang",
	  GANG_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .idle_ago = 1 * MIN),
	    N("n2", "ON", HOUR, 2, .slots = 1, .jobs = 1, .end_in = HOUR),
	    N("o1", "OFF", HOUR, 3) },
	  { { .whitelist = "n1 n2", .jobs = 2, .max_per_node = 1, .at_once = 2 },
	    { .jobs = 1, .run_s = 20 * MIN } },
	  { { "n1", "NONE", "needed: 1 pending jobs" } }, ANY, .change_in = 40 * MIN + 1 },
	{ "next change: an idle node's idle time runs out", "warm_pool = 0\nidle_time = 10m\n",
	  FRESH, { N("n1", "ON", 2 * HOUR, 1, .idle_ago = 3 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough" } }, ANY, .change_in = 7 * MIN },
	/* idle_time = auto learns from wakes: break-even B = 330 s (defaults);
	 * the idle time is ceil(B x p / (2 (1 - p))) for a share p of short
	 * gaps, B from p = 2/3 on, never below idle_time_floor (default 0) */
#define LEARNED(cls_, idle_, seen_) \
	{ .learn = { { .node_class = cls_, .seen = seen_, .idle_time_s = idle_ } }, .n_learn = 1 }
	/* the idle time learned from the counted gaps (test_gap_idle_time) */
	{ "learned: a short idle time", "warm_pool = 0\n", LEARNED("", 62, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 2 * MIN) }, { { 0 } },
	  { { "n1", "DRAIN", "idle 2m (idle time 1m2s)" } }, ANY },
	{ "learned: a longer one waits", "warm_pool = 0\n", LEARNED("", 248, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 4 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough: idle since 1970-01-12 13:42:40 +0000, "
	        "suspended at 1970-01-12 13:46:48 +0000 (idle time 4m8s, "
	        "learned)" } }, ANY },
	{ "learned: beyond the break-even time", "warm_pool = 0\n", LEARNED("", 660, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 6 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough: idle since 1970-01-12 13:40:40 +0000, "
	        "suspended at 1970-01-12 13:51:40 +0000 (idle time 11m, "
	        "learned)" } }, ANY },
	{ "learned: 0 s, off at the first tick (floor 0)", "warm_pool = 0\n", LEARNED("", 0, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 20) }, { { 0 } },
	  { { "n1", "DRAIN", "idle 20s (idle time 0s)" } }, ANY },
	{ "learned: a configured idle_time_floor still bounds it",
	  "warm_pool = 0\nidle_time_floor = 1m\n", LEARNED("", 0, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 20) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough: idle since 1970-01-12 13:46:20 +0000, "
	        "suspended at 1970-01-12 13:47:20 +0000 (idle time 1m, "
	        "learned)" } }, ANY },
	{ "learned: too few gaps yet, a quarter of the break-even time", "warm_pool = 0\n",
	  LEARNED("", 0, 15),
	  { N("n1", "ON", HOUR, 1, .idle_ago = MIN) }, { { 0 } },
	  { { "n1", "NONE", "not idle long enough: idle since 1970-01-12 13:45:40 +0000, suspended at "
	      "1970-01-12 13:47:03 +0000 (idle time 1m23s, not learned: the class has "
	      "fewer than 16 idle gaps counted)" } }, ANY },
	{ "learned per class: another class keeps a quarter of the break-even time",
	  "warm_pool = 0\n", LEARNED("gpu", 0, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = MIN),
	    N("g1", "ON", HOUR, 2, .cls = "gpu", .idle_ago = MIN) }, { { 0 } },
	  { { "n1", "NONE", "suspended at 1970-01-12 13:47:03 +0000 (idle time 1m23s, "
	        "not learned" }, { "g1", "DRAIN", "(idle time 0s)" } }, ANY },
	{ "learned, but a fixed idle_time wins", "warm_pool = 0\nidle_time = 10m\n",
	  LEARNED("", 0, 32),
	  { N("n1", "ON", HOUR, 1, .idle_ago = 2 * MIN) }, { { 0 } },
	  { { "n1", "NONE", "idle since 1970-01-12 13:44:40 +0000, suspended at "
	        "1970-01-12 13:54:40 +0000 (idle time 10m)" } }, ANY },
#undef LEARNED

	/* max_power_watts: powered nodes at max(reading, busy_watts) */
#define BUDGET_CONF "max_power_watts = 600\nbusy_watts = 250\n"
	{ "power budget: wakes stop where one more node could exceed it", BUDGET_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 16), N("o1", "OFF", HOUR, 2), N("o2", "OFF", HOUR, 3) },
	  { { .jobs = 40 } },
	  { { "n1", "NONE", "busy" }, { "o1", "WAKE", "woken" },
	    { "o2", "NONE", "max_power_watts reached (powered nodes may draw 500 W of 600 W; "
			    "a woken node may draw 250 W)" } }, ANY },
	{ "power budget: a reading above busy_watts counts as read", BUDGET_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 16, .watts = 400), N("o1", "OFF", HOUR, 2) },
	  { { .jobs = 40 } },
	  { { "o1", "NONE", "max_power_watts reached (the powered nodes and one more woken at "
	      "250 W could draw more than 600 W)" } },
	  ANY, .summary = "wakes stopped: max_power_watts reached (powered nodes may draw "
	  "400 W of 600 W" },
	{ "power budget: a node going off still counts, an idle one at busy_watts", BUDGET_CONF,
	  FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 16, .watts = 120),
	    N("p1", "POWERING_OFF", 30, 2, .watts = 60), N("o1", "OFF", HOUR, 3) },
	  { { .jobs = 40 } },
	  { { "o1", "NONE", "max_power_watts reached" } }, ANY,
	  .summary = "may draw 500 W of 600 W" },
	{ "power budget: an admin wake is not held back", BUDGET_CONF, FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 16), N("n2", "ON", HOUR, 2, .jobs = 16),
	    N("o1", "OFF", HOUR, 3, .admin_wake = true, .admin_req = true) },
	  { { 0 } },
	  { { "o1", "WAKE", "on by admin" }, { "o1", "ADMIN_DONE", "power on request" } }, ANY },
	{ "max_booting caps concurrent boots", "max_booting = 2\n", FRESH,
	  { N("b1", "POWERING_ON", 60, 9), N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 48 } },
	  { { "o1", "WAKE", "rank 1" }, { "o2", "NONE", "max_booting reached (2 of 2 booting)" },
	    { "b1", "NONE", "booting" } }, ANY },
	{ "max_powered_on caps powered nodes", "max_powered_on = 2\n", FRESH,
	  { N("n1", "ON", HOUR, 5, .jobs = 16), N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 40 } },
	  { { "o1", "WAKE", "rank 1" },
	    { "o2", "NONE", "max_powered_on reached (2 of 2 powered on)" } }, ANY },
	{ "resume rate limits wakes", "resume_rate = 1\n", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 40 } },
	  { { "o1", "WAKE", "rank 1" }, { "o2", "NONE", "resume rate limit reached (1 per minute)" } },
	  ANY },
	{ "empty resume bucket from the previous tick", "resume_rate = 2\n",
	  { .initialized = true, .tokens_at = NOW - 15, .suspend_tokens = 2, .resume_tokens = 0.2 },
	  { N("o1", "OFF", HOUR, 1) },
	  { { .jobs = 4 } },
	  { { "o1", "NONE", "resume rate limit" } }, ANY },
	{ "max jobs per node spreads a group", "", FRESH,
	  { N("n1", "ON", HOUR, 1, .jobs = 1), N("o1", "OFF", HOUR, 2), N("o2", "OFF", HOUR, 3),
	    N("o3", "OFF", HOUR, 4) },
	  { { .jobs = 3, .max_per_node = 1 } },
	  { { "o1", "WAKE", "takes 1" }, { "o2", "WAKE", "takes 1" }, { "o3", "NONE", "off" } }, ANY },
	{ "memory, not slots, limits jobs per node", "", FRESH,
	  { N("n1", "ON", HOUR, 1, .mem = 32768, .jobs = 1), N("o1", "OFF", HOUR, 2, .mem = 65536),
	    N("o2", "OFF", HOUR, 3, .mem = 65536) },
	  { { .mem = 40000, .jobs = 2 } },
	  { { "o1", "WAKE", "takes 1" }, { "o2", "WAKE", "takes 1" } }, ANY },
	{ "demand no node can ever run wakes nothing", "", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .threads = 64, .jobs = 5 } },
	  { { "o1", "NONE", "not chosen for the unplaced" }, { "o2", "NONE", "not chosen" } },
	  ANY },
	{ "never registered node is not woken", "", FRESH,
	  { N("o1", "OFF", HOUR, 1, .no_caps = true), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 2 } },
	  { { "o1", "NONE", "never registered" }, { "o2", "WAKE", "woken" } }, ANY },
	{ "two groups share one woken node", "", FRESH,
	  { N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2) },
	  { { .jobs = 4, .label = "first" }, { .jobs = 4, .label = "second" } },
	  { { "o1", "WAKE", "first" }, { "o2", "NONE", "not needed" } }, ANY },

	/* ------------------------------------------------------------ dry run */
	{ "dry run decides normally and says so", "warm_pool = 0\ndry_run = yes\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR), N("o1", "OFF", HOUR, 2) },
	  { { .gpus = 0, .jobs = 0 } },
	  { { "n1", "DRAIN", "idle" }, { "o1", "NONE", "off: no pending jobs" } },
	  .breaker_open = -1, .dry_run = 1, .soon_jobs = -1 },
	{ "no dry run by default", "warm_pool = 0\n", FRESH,
	  { N("n1", "ON", 2 * HOUR, 1, .idle_ago = HOUR) }, { { 0 } },
	  { { "n1", "DRAIN", "idle" } }, .breaker_open = 0, .dry_run = 0, .soon_jobs = -1 },
};

/* ---------------------------------------------------------------- fixture */

struct built {
	struct mxq_power_config cfg;
	struct mxq_server_caps caps[MAX_NODES];
	struct mxq_power_running_job running[MAX_NODES][1];
	struct mxq_power_node nodes[MAX_NODES];
	struct mxq_group_reqs reqs[MAX_DEMAND];
	struct mxq_power_demand demand[MAX_DEMAND];
	struct mxq_power_snapshot snap;
};

static void build(const struct scenario *s, struct built *b)
{
	char err[2048];
	size_t n = 0, d = 0;

	memset(b, 0, sizeof(*b));
	mxq_power_config_defaults(&b->cfg);
	ck_assert_msg(mxq_power_config_parse(&b->cfg, s->config, "test.conf", err, sizeof(err)) == 0,
		      "%s: config: %s", s->name, err);

	for (; n < MAX_NODES && s->nodes[n].host; n++) {
		const struct t_node *t = &s->nodes[n];
		struct mxq_power_node *pn = &b->nodes[n];
		int st = mxq_power_state_from_string(t->state);
		uint32_t slots = t->slots ? t->slots : 16;

		ck_assert_msg(st >= 0, "%s: bad state %s", s->name, t->state);
		if (!t->no_caps)
			ck_assert_int_eq(mxq_server_caps_init(&b->caps[n], t->host, t->tags, NULL, slots,
							      t->mem ? t->mem : 65536, 0, t->gpus, 0,
							      err, sizeof(err)), 0);
		*pn = (struct mxq_power_node) {
			.hostname = t->host,
			.state = (enum mxq_power_node_state)st,
			.state_since = NOW - t->ago,
			.admin_off = t->admin_off,
			.excluded = t->excluded,
			.node_class = t->cls,
			.efficiency_rank = t->rank,
			.caps = t->no_caps ? NULL : &b->caps[n],
			.jobs_running = t->jobs,
			.used_slots = t->jobs,
			.used_memory_mib = (uint64_t)t->jobs * 1024,
			.last_job_end = t->idle_ago ? NOW - t->idle_ago : 0,
			.cycles_today = t->cycles,
			.last_boot_ok_at = t->boot_ok_ago ? NOW - t->boot_ok_ago : 0,
			.failure_reason = t->failure,
			.drain_acked = t->acked,
			.seen_up = t->seen_up,
			.seen_down = t->seen_down,
			.failure_count = t->failures,
			.daemon_gone = t->gone,
			.closed = t->closed,
			.power_read = t->reading != 0,
			.power_reading = t->reading == 1,
			.power_readable = t->readable || t->reading != 0,
			.power_source = t->readable || t->reading ? "exec" : NULL,
			.can_cut = t->can_cut,
			.off_call_busy = t->off_busy,
			.hard_off_done = t->hard_done,
			.ssh_drain = t->ssh,
			.ssh_drain_sent = t->ssh_sent,
			.drain_busy_ack = t->busy_ack,
			.inherited = t->inherited,
			.intent_unsent = t->unsent,
			.fence_until = t->fence_in ? NOW + t->fence_in : 0,
			.admin_wake = t->admin_wake,
			.admin_request = t->admin_req,
			.admin_reason = t->admin_wake ? "on by admin: test" : NULL,
			.off_by_node = t->off_by_node,
			.unmanaged_why = t->unmanaged,
			.failed_call = t->failed_call,
			.watts = t->watts,
		};
		if (t->end_in && t->jobs) {
			b->running[n][0] = (struct mxq_power_running_job) {
				.expected_end = NOW + t->end_in, .slots = t->jobs,
				.memory_mib = (uint64_t)t->jobs * 1024,
				.started_at = t->started_ago ? NOW - t->started_ago : 0,
			};
			pn->running = t->undetailed ? NULL : b->running[n];
			pn->n_running = t->undetailed ? t->jobs : 1;
		}
	}
	for (; d < MAX_DEMAND && s->demand[d].jobs; d++) {
		const struct t_demand *t = &s->demand[d];
		ck_assert_int_eq(mxq_group_reqs_init(&b->reqs[d], NULL, t->prereq, t->whitelist, NULL,
						     t->threads ? t->threads : 1,
						     t->mem ? t->mem : 1024, 60, t->gpus, 0), 0);
		b->demand[d] = (struct mxq_power_demand) {
			.reqs = &b->reqs[d], .label = t->label, .jobs_pending = t->jobs,
			.max_per_node = t->max_per_node,
			.nodes_at_once = t->at_once, .run_s = t->run_s,
		};
	}
	b->snap = (struct mxq_power_snapshot) { .nodes = b->nodes, .n_nodes = n,
						.demand = b->demand, .n_demand = d,
						.soft_off_deadline_s = s->soft_off,
						.ssh_drain_after_s = s->ssh_after,
						.reconcile_due = s->reconcile };
}

static void unbuild(struct built *b)
{
	for (size_t i = 0; i < MAX_NODES; i++)
		mxq_server_caps_done(&b->caps[i]);
	for (size_t d = 0; d < MAX_DEMAND; d++)
		if (b->reqs[d].tags)
			mxq_group_reqs_done(&b->reqs[d]);
	mxq_power_config_done(&b->cfg);
}

static void print_plan(const char *name, const struct mxq_power_plan *plan)
{
	fprintf(stderr, "--- %s: %s\n", name, plan->summary);
	for (size_t k = 0; k < plan->n_actions; k++)
		fprintf(stderr, "  %-10s %-12s %s -> %s: %s\n", plan->actions[k].hostname,
			mxq_power_action_to_string(plan->actions[k].kind),
			mxq_power_state_to_string(plan->actions[k].from),
			mxq_power_state_to_string(plan->actions[k].to), plan->actions[k].reason);
	for (size_t i = 0; i < plan->n_explanations; i++)
		fprintf(stderr, "  why %-10s %-12s %s\n", plan->explanations[i].hostname,
			mxq_power_state_to_string(plan->explanations[i].state),
			plan->explanations[i].text);
}

/* The action of KIND for HOST, or with KIND < 0 the first one for HOST. */
static const struct mxq_power_action *find_action(const struct mxq_power_plan *plan, const char *host,
						  int kind)
{
	for (size_t k = 0; k < plan->n_actions; k++)
		if (strcmp(plan->actions[k].hostname, host) == 0 &&
		    (kind < 0 || (int)plan->actions[k].kind == kind))
			return &plan->actions[k];
	return NULL;
}

static size_t actions_for(const struct mxq_power_plan *plan, const char *host)
{
	size_t c = 0;
	for (size_t k = 0; k < plan->n_actions; k++)
		c += strcmp(plan->actions[k].hostname, host) == 0;
	return c;
}

START_TEST(test_scenario)
{
	const struct scenario *s = &scenarios[_i];
	struct built b;
	struct mxq_power_state st = s->prev;
	struct mxq_power_plan plan = { 0 };
	size_t expected_actions = 0;
	bool ok = true;
	int r;

	build(s, &b);
	r = mxq_power_decide(&b.snap, NOW, &b.cfg, &st, &plan);
	ck_assert_msg(r >= 0, "%s: decide returned %d", s->name, r);
	ck_assert_int_eq((size_t)r, plan.n_actions);
	ck_assert_uint_eq(plan.n_explanations, b.snap.n_nodes);

	for (size_t e = 0; e < MAX_EXPECT && s->expect[e].host; e++) {
		const struct t_expect *x = &s->expect[e];
		bool none = strcmp(x->action, "NONE") == 0;
		const struct mxq_power_action *a =
			find_action(&plan, x->host, none ? -1 : mxq_power_action_from_string(x->action));
		const char *text;

		if (strcmp(x->action, "NONE") == 0) {
			if (a) {
				fprintf(stderr, "%s: %s: unexpected %s\n", s->name, x->host,
					mxq_power_action_to_string(a->kind));
				ok = false;
			}
			text = mxq_power_plan_explain(&plan, x->host);
		} else {
			expected_actions++;
			if (!a || (int)a->kind != mxq_power_action_from_string(x->action)) {
				fprintf(stderr, "%s: %s: expected %s, got %s\n", s->name, x->host,
					x->action, a ? mxq_power_action_to_string(a->kind) : "nothing");
				ok = false;
				continue;
			}
			text = a->reason;
			/* the explanation of a node acted on once is its reason */
			if (actions_for(&plan, x->host) == 1 &&
			    strcmp(mxq_power_plan_explain(&plan, x->host), a->reason) != 0)
				ok = false;
		}
		if (!text || !strstr(text, x->text)) {
			fprintf(stderr, "%s: %s: '%s' does not contain '%s'\n", s->name, x->host,
				text ? text : "(null)", x->text);
			ok = false;
		}
	}
	if (plan.n_actions != expected_actions) {
		fprintf(stderr, "%s: %zu actions, expected %zu\n", s->name, plan.n_actions,
			expected_actions);
		ok = false;
	}
	if (s->breaker_open >= 0 && plan.breaker_open != (s->breaker_open == 1)) {
		fprintf(stderr, "%s: breaker_open %d\n", s->name, plan.breaker_open);
		ok = false;
	}
	if (s->dry_run >= 0 && plan.dry_run != (s->dry_run == 1)) {
		fprintf(stderr, "%s: dry_run %d\n", s->name, plan.dry_run);
		ok = false;
	}
	if (s->soon_jobs >= 0 && (plan.n_outcomes < 1 ||
				  plan.outcomes[0].freeing_soon != (uint64_t)s->soon_jobs)) {
		fprintf(stderr, "%s: freeing_soon %llu\n", s->name,
			plan.n_outcomes ? (unsigned long long)plan.outcomes[0].freeing_soon : 0ULL);
		ok = false;
	}
	if (s->summary && (!plan.summary || !strstr(plan.summary, s->summary))) {
		fprintf(stderr, "%s: summary '%s' does not contain '%s'\n", s->name,
			plan.summary ? plan.summary : "(none)", s->summary);
		ok = false;
	}
	if (s->change_in && plan.next_change_at - NOW != s->change_in) {
		fprintf(stderr, "%s: next_change_at now + %lld\n", s->name,
			(long long)(plan.next_change_at - NOW));
		ok = false;
	}
	if (!ok)
		print_plan(s->name, &plan);
	ck_assert_msg(ok, "scenario failed: %s", s->name);

	mxq_power_plan_free(&plan);
	mxq_power_plan_free(&plan);    /* twice: a freed plan is empty */
	unbuild(&b);
}
END_TEST

/* ---------------------------------------------------------------- across ticks */

/* Carry out a plan on the snapshot, as the executor would. */
static void apply(struct built *b, const struct mxq_power_plan *plan, int64_t now)
{
	for (size_t k = 0; k < plan->n_actions; k++) {
		struct mxq_power_node *n = &b->nodes[plan->actions[k].node_index];
		n->state = plan->actions[k].to;
		n->state_since = now;
	}
}

static size_t count_kind(const struct mxq_power_plan *plan, enum mxq_power_action_kind kind)
{
	size_t c = 0;
	for (size_t k = 0; k < plan->n_actions; k++)
		c += plan->actions[k].kind == kind;
	return c;
}

/* Gaps of a class, as the policy counts them: N of G seconds each (G =
 * INT64_MAX: longer than the horizon). */
static void count_gaps(const struct mxq_power_config *cfg, struct mxq_power_gap_learn *l,
		       uint32_t n, int64_t g)
{
	size_t j = 0;

	while (j < MXQ_POWER_GAP_EDGES && g > mxq_power_gap_edge(cfg, j))
		j++;
	l->weight[j] += n;
	if (j < MXQ_POWER_GAP_EDGES)
		l->length[j] += (double)n * (double)g;
	l->seen += n;
}

/* The candidates of the default power figures: 330 s break-even time. */
START_TEST(test_gap_edges)
{
	static const int64_t want[MXQ_POWER_GAP_EDGES] = {
		0, 11, 21, 42, 62, 83, 124, 165, 248, 330, 495, 660 };
	struct mxq_power_config cfg;

	mxq_power_config_defaults(&cfg);
	for (size_t k = 0; k < MXQ_POWER_GAP_EDGES; k++)
		ck_assert_int_eq(mxq_power_gap_edge(&cfg, k), want[k]);
	ck_assert_int_eq(mxq_power_gap_edge(&cfg, MXQ_POWER_GAP_EDGES), INT64_MAX);
	mxq_power_config_done(&cfg);
}
END_TEST

/* The idle time the counted gaps call for, computed by hand with 100 W
 * idle and 33 kJ a power cycle: a gap kept costs 100 W x its length, one
 * cut at candidate T costs 100 W x T + 33 kJ. */
static const struct {
	const char *name;
	uint32_t n1; int64_t g1;
	uint32_t n2; int64_t g2;
	int64_t want;
} gap_rows[] = {
	/* 20 x 33 kJ beats waiting for any of them */
	{ "all longer than the horizon", 20, INT64_MAX, 0, 0, 0 },
	/* kept: 20 x 10 kJ; cut at 83 s: 20 x 41.3 kJ */
	{ "all 100 s", 20, 100, 0, 0, 124 },
	/* 124 s: 10 x 10 kJ + 10 x 45.4 kJ = 554 kJ; 0 s: 660 kJ */
	{ "half 100 s, half long", 10, 100, 10, INT64_MAX, 124 },
	/* 124 s: 10 kJ + 19 x 45.4 kJ = 873 kJ; 0 s: 660 kJ */
	{ "one 100 s in 20", 1, 100, 19, INT64_MAX, 0 },
	/* 400 s is beyond the break-even time: kept, each costs 40 kJ */
	{ "all 400 s", 20, 400, 0, 0, 0 },
	/* 300 s is below it: kept 30 kJ, cut 33 kJ */
	{ "all 300 s", 20, 300, 0, 0, 330 },
	/* 62 s: 10 x 5 kJ + 10 x 39.2 kJ = 442 kJ; 495 s: 450 kJ; 0 s: 660 kJ */
	{ "50 s and 400 s", 10, 50, 10, 400, 62 },
	/* 42 s: 10 x 3 kJ + 10 x 37.2 kJ = 402 kJ; 660 s: 630 kJ */
	{ "30 s and 600 s", 10, 30, 10, 600, 42 },
	/* nothing counted: every candidate costs 0, the shortest wins */
	{ "nothing counted", 0, 0, 0, 0, 0 },
};

START_TEST(test_gap_idle_time)
{
	struct mxq_power_config cfg;
	struct mxq_power_gap_learn l = { 0 };

	mxq_power_config_defaults(&cfg);
	count_gaps(&cfg, &l, gap_rows[_i].n1, gap_rows[_i].g1);
	if (gap_rows[_i].n2)
		count_gaps(&cfg, &l, gap_rows[_i].n2, gap_rows[_i].g2);
	ck_assert_msg(mxq_power_gap_idle_time(&cfg, &l) == gap_rows[_i].want,
		      "%s: %lld s, expected %lld s", gap_rows[_i].name,
		      (long long)mxq_power_gap_idle_time(&cfg, &l), (long long)gap_rows[_i].want);
	mxq_power_config_done(&cfg);
}
END_TEST

/* A learned idle time is used once 16 gaps were counted, never below the
 * floor; a class with fewer, or unknown, gets the break-even time. */
START_TEST(test_gap_trusted)
{
	struct mxq_power_config cfg;
	struct mxq_power_state st = FRESH;
	char err[256];

	mxq_power_config_defaults(&cfg);
	st.n_learn = 2;
	snprintf(st.learn[0].node_class, sizeof(st.learn[0].node_class), "a");
	st.learn[0].seen = 16;
	st.learn[0].idle_time_s = 124;
	snprintf(st.learn[1].node_class, sizeof(st.learn[1].node_class), "b");
	st.learn[1].seen = 15;
	st.learn[1].idle_time_s = 0;
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &st, "a"), 124);
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &st, "b"), 83);  /* ceil(330 / 4) */
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &st, "c"), 83);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "idle_time_floor = 3m\n", "t", err,
						sizeof(err)), 0);
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &st, "a"), 180);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "idle_time = 10m\n", "t", err,
						sizeof(err)), 0);
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &st, "a"), 600);  /* not auto */
	mxq_power_config_done(&cfg);
}
END_TEST

/* Gaps that end on the idle host: a job started since the last decision
 * on a host whose jobs all started after its last job ended. */
START_TEST(test_gap_on_busy_host)
{
	static const struct scenario s = {
		"gap on a busy host", "warm_pool = 0\n", FRESH,
		{ N("b1", "ON", HOUR, 1, .cls = "a", .jobs = 1, .end_in = HOUR,
		    .idle_ago = 5 * MIN, .started_ago = 3 * MIN),
		  /* a job that started before the last one ended: never idle */
		  N("b2", "ON", HOUR, 2, .cls = "a", .jobs = 1, .end_in = HOUR,
		    .idle_ago = 1 * MIN, .started_ago = 3 * MIN),
		  /* woken for its job: the wait was for it, no gap */
		  N("b3", "ON", 4 * MIN, 3, .cls = "a", .jobs = 1, .end_in = HOUR,
		    .idle_ago = 5 * MIN, .started_ago = 3 * MIN),
		  /* started before the last decision: counted then */
		  N("b4", "ON", HOUR, 4, .cls = "a", .jobs = 1, .end_in = HOUR,
		    .idle_ago = 20 * MIN, .started_ago = 10 * MIN) },
		{ { 0 } }, { { 0 } }, ANY,
	};
	struct built b;
	struct mxq_power_state st = FRESH;
	struct mxq_power_plan plan;

	build(&s, &b);
	/* a fresh state counts from its first decision on */
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW, &b.cfg, &st, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(st.n_learn, 0);
	ck_assert_int_eq(st.gaps_at, NOW);

	st.gaps_at = NOW - 4 * MIN;
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW, &b.cfg, &st, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(st.n_learn, 1);
	ck_assert_str_eq(st.learn[0].node_class, "a");
	ck_assert_uint_eq(st.learn[0].seen, 1);
	ck_assert_double_eq(st.learn[0].weight[6], 1.0);   /* 2m in (83 s, 124 s] */
	ck_assert_double_eq(st.learn[0].length[6], 120.0);
	/* the next decision does not count it again */
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW + 10, &b.cfg, &st, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(st.learn[0].seen, 1);
	/* whole seconds: a start in the second of the last decision is
	 * counted, once, also by decisions within that second */
	struct mxq_power_state edge = FRESH;
	edge.gaps_at = NOW - 3 * MIN;
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW - 3 * MIN, &b.cfg, &edge, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(edge.learn[0].seen, 1);
	ck_assert_uint_eq(edge.n_gap_edge, 1);
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW - 3 * MIN, &b.cfg, &edge, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW, &b.cfg, &edge, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(edge.learn[0].seen, 1);
	/* with a fixed idle time nothing is counted */
	struct mxq_power_state fixed = FRESH;
	char err[256];
	ck_assert_int_eq(mxq_power_config_parse(&b.cfg, "idle_time = 10m\n", "t", err,
						sizeof(err)), 0);
	fixed.gaps_at = NOW - 4 * MIN;
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW, &b.cfg, &fixed, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(fixed.n_learn, 0);
	unbuild(&b);
}
END_TEST

/* A power-off waits for the class's next need of a host: a wake of another
 * host of the class within the horizon ends its gap there; unmatched, it
 * is counted as longer than the horizon once that has passed, and the
 * plan asks to be decided again then. */
START_TEST(test_gap_power_off_matched)
{
	static const struct scenario off = {
		"power-off", "warm_pool = 0\nmin_off_time = 0\n", FRESH,
		{ N("i1", "ON", HOUR, 1, .cls = "a", .idle_ago = 6 * MIN) },
		{ { 0 } }, { { "i1", "DRAIN", "idle 6m" } }, ANY,
	};
	static const struct scenario wake = {
		"wake", "warm_pool = 0\nmin_off_time = 0\n", FRESH,
		{ N("o1", "OFF", HOUR, 1, .cls = "a") },
		{ { .jobs = 1 } }, { { "o1", "WAKE", "" } }, ANY,
	};
	struct built b;
	struct mxq_power_state st = FRESH, later;
	struct mxq_power_plan plan;
	/* idle since NOW - 360 = 999640: window 90876 of 11 s, middle 999641 */
	const int64_t window_end = 90877 * 11;

	st.gaps_at = NOW - 10;
	build(&off, &b);
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW, &b.cfg, &st, &plan), 1);
	ck_assert_uint_eq(count_kind(&plan, MXQ_POWER_ACTION_DRAIN), 1);
	mxq_power_plan_free(&plan);
	unbuild(&b);
	ck_assert_uint_eq(st.n_learn, 1);
	ck_assert_uint_eq(st.learn[0].seen, 0);
	later = st;

	/* a wake of o1 (class a) a minute later: the gap ended after 419 s */
	build(&wake, &b);
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW + MIN, &b.cfg, &st, &plan), 1);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(st.learn[0].seen, 1);
	ck_assert_double_eq(st.learn[0].weight[10], 1.0);   /* in (330 s, 495 s] */
	ck_assert_double_eq(st.learn[0].length[10], 419.0);
	/* matched once: the next wake finds nothing to match */
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW + 2 * MIN, &b.cfg, &st, &plan), 1);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(st.learn[0].seen, 1);

	/* a dry run powers nothing off: its gaps end on the hosts */
	struct mxq_power_state dry = FRESH;
	char err[256];
	dry.gaps_at = NOW - 10;
	unbuild(&b);
	build(&off, &b);
	ck_assert_int_eq(mxq_power_config_parse(&b.cfg, "warm_pool = 0\nmin_off_time = 0\n"
						"dry_run = yes\n", "t", err, sizeof(err)), 0);
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW, &b.cfg, &dry, &plan), 1);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(dry.n_learn, 0);

	/* no need within the horizon: the decision before says when to look
	 * again, the first after it counts the gap as longer */
	unbuild(&b);
	build(&off, &b);
	b.nodes[0].state = MXQ_POWER_OFF;   /* the power-off went through */
	b.nodes[0].state_since = NOW + 20;
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW + 30, &b.cfg, &later, &plan), 0);
	ck_assert_int_eq(plan.recheck_at, window_end + 660);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(later.learn[0].seen, 0);
	ck_assert_int_eq(mxq_power_decide(&b.snap, window_end + 660, &b.cfg, &later, &plan), 0);
	mxq_power_plan_free(&plan);
	ck_assert_uint_eq(later.learn[0].seen, 1);
	ck_assert_double_eq(later.learn[0].weight[MXQ_POWER_GAP_EDGES], 1.0);
	unbuild(&b);
}
END_TEST

/* What the leader keeps of the policy state across takeovers and what
 * 'mxqadmin power explain' reads back: buckets, breaker and the learned
 * idle gaps, in a line an older reader of the first seven fields still
 * reads. */
START_TEST(test_state_text)
{
	struct mxq_power_config cfg;
	struct mxq_power_state st = { .initialized = true, .tokens_at = 1234, .suspend_tokens = 2.5,
				      .resume_tokens = 7.25, .boot_failures = 2,
				      .last_boot_failure_at = 1200, .breaker_open_until = 1500 };
	struct mxq_power_state back;
	char text[1001], err[256];
	int init, n7;
	int64_t a, e, f;
	double x, y;
	uint32_t b;

	mxq_power_config_defaults(&cfg);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "idle_time = auto\n", "t", err, sizeof(err)), 0);
	st.n_learn = 2;
	snprintf(st.learn[0].node_class, sizeof(st.learn[0].node_class), "gpu");
	st.learn[0].seen = 20;
	st.learn[0].idle_time_s = 62;
	st.learn[0].weight[4] = 12.5;
	st.learn[0].length[4] = 700;
	st.learn[0].weight[MXQ_POWER_GAP_EDGES] = 7.5;
	st.learn[0].slot_s = 11;           /* the power-offs awaiting a match: not kept */
	st.learn[0].slot[3] = 2;
	st.learn[1].seen = 3;              /* hosts without class */
	st.learn[1].idle_time_s = 0;
	st.gaps_at = 1230;                 /* not kept either */
	ck_assert_int_gt(mxq_power_state_to_text(&st, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "v1 1 1234 2.500000 7.250000 2 1200 1500 "
			 "gaps gpu 20 62 0 0 0 0 12.5 0 0 0 0 0 0 0 7.5 0 0 0 0 700 0 0 0 0 0 0 0 "
			 "gaps * 3 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0");
	ck_assert_int_eq(mxq_power_state_from_text(text, &back), 0);
	ck_assert(back.initialized);
	ck_assert_int_eq(back.tokens_at, 1234);
	ck_assert_double_eq(back.resume_tokens, 7.25);
	ck_assert_int_eq(back.breaker_open_until, 1500);
	ck_assert_uint_eq(back.n_learn, 2);
	ck_assert_str_eq(back.learn[1].node_class, "");
	ck_assert_double_eq(back.learn[0].weight[4], 12.5);
	ck_assert_double_eq(back.learn[0].length[4], 700.0);
	ck_assert_double_eq(back.learn[0].weight[MXQ_POWER_GAP_EDGES], 7.5);
	ck_assert_uint_eq(back.learn[0].slot[3], 0);
	ck_assert_int_eq(back.gaps_at, 0);
	/* the learned idle time survives */
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &back, "gpu"), 62);
	ck_assert_int_eq(mxq_power_idle_time_for(&cfg, &back, NULL), 83);  /* 3 gaps: too few */
	/* a reader of the first seven fields only */
	n7 = sscanf(text, "v1 %d %" SCNd64 " %lf %lf %" SCNu32 " %" SCNd64 " %" SCNd64, &init, &a, &x,
		    &y, &b, &e, &f);
	ck_assert_int_eq(n7, 7);
	/* what such a reader writes is read with nothing learned */
	ck_assert_int_eq(mxq_power_state_from_text("v1 1 10 1.0 2.0 0 0 0", &back), 0);
	ck_assert_uint_eq(back.n_learn, 0);
	ck_assert_double_eq(back.resume_tokens, 2.0);
	/* a damaged learned part is dropped, the buckets kept; so is the
	 * learned share an earlier version wrote */
	static const char *const damaged[] = {
		"v1 1 10 1.0 2.0 0 0 0 learn gpu 0.5 1",
		"v1 1 10 1.0 2.0 0 0 0 gaps g/u 20 62 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"v1 1 10 1.0 2.0 0 0 0 gaps gpu 20 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"v1 1 10 1.0 2.0 0 0 0 gaps gpu 20 62 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"v1 1 10 1.0 2.0 0 0 0 gaps gpu 20 62 0 0 0 0 -4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"v1 1 10 1.0 2.0 0 0 0 gaps gpu 20 62 0 0 0 0 nan 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
		"v1 1 10 1.0 2.0 0 0 0 gaps",
	};
	for (size_t k = 0; k < sizeof(damaged) / sizeof(damaged[0]); k++) {
		ck_assert_int_eq(mxq_power_state_from_text(damaged[k], &back), 0);
		ck_assert_msg(back.n_learn == 0, "kept: %s", damaged[k]);
		ck_assert_double_eq(back.suspend_tokens, 1.0);
	}
	/* not a state at all: fresh */
	ck_assert_int_eq(mxq_power_state_from_text("", &back), -EINVAL);
	ck_assert(!back.initialized);
	ck_assert_int_eq(mxq_power_state_from_text("v1 1 nan", &back), -EINVAL);
	ck_assert_int_eq(mxq_power_state_from_text(NULL, &back), -EINVAL);
	/* a full table of long class names: what fits in the column is kept whole */
	st.n_learn = MXQ_POWER_LEARN_CLASSES;
	for (int k = 0; k < MXQ_POWER_LEARN_CLASSES; k++) {
		memset(st.learn[k].node_class, 'a' + k, MXQ_POWER_CLASS_NAME_MAX - 1);
		st.learn[k].node_class[MXQ_POWER_CLASS_NAME_MAX - 1] = '\0';
		st.learn[k].seen = 32;
		st.learn[k].idle_time_s = 124;
		for (size_t j = 0; j <= MXQ_POWER_GAP_EDGES; j++)
			st.learn[k].weight[j] = 0.5;
	}
	int len = mxq_power_state_to_text(&st, text, sizeof(text));
	ck_assert_int_gt(len, 0);
	ck_assert_int_lt(len, 1001);
	ck_assert_int_eq(mxq_power_state_from_text(text, &back), 0);
	ck_assert_uint_gt(back.n_learn, 5);
	ck_assert_uint_lt(back.n_learn, MXQ_POWER_LEARN_CLASSES);
	ck_assert_str_eq(back.learn[back.n_learn - 1].node_class,
			 st.learn[back.n_learn - 1].node_class);
	ck_assert_int_eq(mxq_power_state_to_text(&st, text, 10), -ENOSPC);
	mxq_power_config_done(&cfg);
}
END_TEST

START_TEST(test_resume_tokens_across_ticks)
{
	static const struct scenario s = {
		"tokens", "resume_rate = 1\nmax_booting = 0\n", FRESH,
		{ N("o1", "OFF", HOUR, 1), N("o2", "OFF", HOUR, 2), N("o3", "OFF", HOUR, 3),
		  N("o4", "OFF", HOUR, 4) },
		{ { .jobs = 64 } }, { { 0 } }, ANY,
	};
	struct built b;
	struct mxq_power_state st = FRESH;
	struct mxq_power_plan plan;

	build(&s, &b);
	/* tick 1: a full bucket holds one token */
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW, &b.cfg, &st, &plan), 1);
	ck_assert_uint_eq(count_kind(&plan, MXQ_POWER_ACTION_WAKE), 1);
	ck_assert_str_eq(plan.actions[0].hostname, "o1");
	apply(&b, &plan, NOW);
	mxq_power_plan_free(&plan);

	/* tick 2, 20 s later: a third of a token, no wake */
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW + 20, &b.cfg, &st, &plan), 0);
	ck_assert_ptr_nonnull(strstr(mxq_power_plan_explain(&plan, "o2"), "resume rate limit"));
	mxq_power_plan_free(&plan);

	/* tick 3, a minute after tick 1: one more */
	ck_assert_int_eq(mxq_power_decide(&b.snap, NOW + 60, &b.cfg, &st, &plan), 1);
	ck_assert_str_eq(plan.actions[0].hostname, "o2");
	apply(&b, &plan, NOW + 60);
	mxq_power_plan_free(&plan);

	/* a long pause does not save up more than the bucket holds (the two
	 * nodes that never came back are marked FAILED meanwhile) */
	ck_assert_int_ge(mxq_power_decide(&b.snap, NOW + 3600, &b.cfg, &st, &plan), 1);
	ck_assert_uint_eq(count_kind(&plan, MXQ_POWER_ACTION_WAKE), 1);
	ck_assert_uint_eq(count_kind(&plan, MXQ_POWER_ACTION_MARK_FAILED), 2);
	mxq_power_plan_free(&plan);
	unbuild(&b);
}
END_TEST

START_TEST(test_full_cycle)
{
	/* suspend and wake one node through every state, as the leader would */
	static const struct scenario s = {
		"cycle", "warm_pool = 0\nidle_time = 1m\nmin_on_time = 0\nmin_off_time = 0\n", FRESH,
		{ N("n1", "ON", HOUR, 1, .idle_ago = HOUR) }, { { 0 } }, { { 0 } }, ANY,
	};
	struct built b;
	struct mxq_power_state st = FRESH;
	struct mxq_power_plan plan;
	int64_t t = NOW;

	build(&s, &b);
	ck_assert_int_eq(mxq_power_decide(&b.snap, t, &b.cfg, &st, &plan), 1);
	ck_assert_int_eq(plan.actions[0].kind, MXQ_POWER_ACTION_DRAIN);
	apply(&b, &plan, t);
	mxq_power_plan_free(&plan);

	b.nodes[0].drain_acked = true;
	ck_assert_int_eq(mxq_power_decide(&b.snap, t += 10, &b.cfg, &st, &plan), 1);
	ck_assert_int_eq(plan.actions[0].kind, MXQ_POWER_ACTION_POWER_OFF);
	ck_assert_int_eq(plan.actions[0].to, MXQ_POWER_POWERING_OFF);
	apply(&b, &plan, t);
	mxq_power_plan_free(&plan);

	b.nodes[0].seen_down = true;
	ck_assert_int_eq(mxq_power_decide(&b.snap, t += 10, &b.cfg, &st, &plan), 1);
	ck_assert_int_eq(plan.actions[0].kind, MXQ_POWER_ACTION_MARK_OFF);
	apply(&b, &plan, t);
	mxq_power_plan_free(&plan);

	/* work arrives */
	ck_assert_int_eq(mxq_group_reqs_init(&b.reqs[0], NULL, NULL, NULL, NULL, 1, 100, 10, 0, 0), 0);
	b.demand[0] = (struct mxq_power_demand) { .reqs = &b.reqs[0], .jobs_pending = 1 };
	b.snap.n_demand = 1;
	b.nodes[0].seen_down = false;
	ck_assert_int_eq(mxq_power_decide(&b.snap, t += 10, &b.cfg, &st, &plan), 1);
	ck_assert_int_eq(plan.actions[0].kind, MXQ_POWER_ACTION_WAKE);
	apply(&b, &plan, t);
	mxq_power_plan_free(&plan);

	/* still booting: counted as capacity, nothing to do */
	ck_assert_int_eq(mxq_power_decide(&b.snap, t += 60, &b.cfg, &st, &plan), 0);
	mxq_power_plan_free(&plan);

	b.nodes[0].seen_up = true;
	ck_assert_int_eq(mxq_power_decide(&b.snap, t += 60, &b.cfg, &st, &plan), 1);
	ck_assert_int_eq(plan.actions[0].kind, MXQ_POWER_ACTION_MARK_ON);
	mxq_power_plan_free(&plan);
	unbuild(&b);
}
END_TEST

/*
 * Later gangs of one kind share a pass over the nodes within a decision
 * (gang_deferral()'s memo). The plan must be the same as when every gang
 * has needs of its own (its own mxq_group_reqs, so nothing is shared): a
 * differential check over random gang-heavy snapshots, with jobs placed
 * and nodes woken between gangs, and reserved nodes lent to some.
 */
#define MEMO_NODES 24
#define MEMO_DEMAND 14

struct memo_case {
	struct mxq_power_config cfg;
	struct mxq_server_caps caps[MEMO_NODES];
	struct mxq_power_running_job running[MEMO_NODES];
	struct mxq_power_node nodes[MEMO_NODES];
	char hosts[MEMO_NODES][8];
	struct mxq_group_reqs reqs[MEMO_DEMAND];   /* one per demand */
	struct mxq_power_demand demand[MEMO_DEMAND];
	struct mxq_power_snapshot snap;
};

static uint32_t memo_rand(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 8) & 0xffffff;
}

/* Snapshot number SEED; with SHARED, demands of one kind point to one
 * mxq_group_reqs (the simulator's way), else each to its own copy. */
static void memo_build(struct memo_case *m, uint32_t seed, bool shared)
{
	static const char *const states[] = { "ON", "ON", "ON", "OFF", "OFF", "POWERING_ON",
					      "DRAINING" };
	char err[256], white[MEMO_NODES * 8] = "";
	size_t kind_first[2] = { SIZE_MAX, SIZE_MAX };

	memset(m, 0, sizeof(*m));
	mxq_power_config_defaults(&m->cfg);
	ck_assert_int_eq(mxq_power_config_parse(&m->cfg, "warm_pool = 0\nidle_time = 5m\n"
						"boot_time = 3m\n", "memo.conf", err, sizeof(err)), 0);
	for (size_t i = 0; i < MEMO_NODES; i++) {
		struct mxq_power_node *pn = &m->nodes[i];
		int st = mxq_power_state_from_string(states[memo_rand(&seed) % 7]);
		bool busy = st == MXQ_POWER_ON && memo_rand(&seed) % 3 != 0;

		snprintf(m->hosts[i], sizeof(m->hosts[i]), "h%zu", i);
		ck_assert_int_eq(mxq_server_caps_init(&m->caps[i], m->hosts[i], NULL, NULL, 1, 65536,
						      0, 0, 0, err, sizeof(err)), 0);
		if (memo_rand(&seed) % 2) {
			strcat(white, white[0] ? " " : "");
			strcat(white, m->hosts[i]);
		}
		/* booting and draining nodes within their deadlines */
		int64_t ago = (int64_t)(memo_rand(&seed) % (st == MXQ_POWER_ON || st == MXQ_POWER_OFF ?
							    2 * HOUR : 3 * MIN));
		*pn = (struct mxq_power_node) {
			.hostname = m->hosts[i],
			.state = (enum mxq_power_node_state)st,
			.state_since = NOW - ago,
			.efficiency_rank = (int32_t)i + 1,
			.caps = &m->caps[i],
			.last_job_end = NOW - (int64_t)(memo_rand(&seed) % HOUR),
			.seen_up = st == MXQ_POWER_ON || st == MXQ_POWER_DRAINING,
		};
		if (busy) {
			m->running[i] = (struct mxq_power_running_job) {
				.expected_end = NOW - 5 * MIN + (int64_t)(memo_rand(&seed) % (3 * HOUR)),
				.slots = 1, .memory_mib = 1024,
			};
			pn->running = &m->running[i];
			pn->n_running = pn->jobs_running = 1;
			pn->used_slots = 1;
			pn->used_memory_mib = 1024;
		}
	}
	for (size_t d = 0; d < MEMO_DEMAND; d++) {
		size_t kind = memo_rand(&seed) % 2;
		bool gang = memo_rand(&seed) % 4 != 0;
		size_t r = shared && kind_first[kind] != SIZE_MAX ? kind_first[kind] : d;

		if (r == d) {
			ck_assert_int_eq(mxq_group_reqs_init(&m->reqs[d], NULL, NULL,
							     kind ? white : NULL, NULL, 1, 1024,
							     60, 0, 0), 0);
			if (kind_first[kind] == SIZE_MAX)
				kind_first[kind] = d;
		}
		m->demand[d] = (struct mxq_power_demand) {
			.reqs = &m->reqs[r],
			.jobs_pending = gang ? 1 : 1 + memo_rand(&seed) % 3,
			.max_per_node = gang ? 1 : 0,
			.nodes_at_once = gang ? 2 + memo_rand(&seed) % 9 : 0,
			.run_s = (int64_t)(5 * MIN + memo_rand(&seed) % (4 * HOUR)),
		};
	}
	m->snap = (struct mxq_power_snapshot) { .nodes = m->nodes, .n_nodes = MEMO_NODES,
						.demand = m->demand, .n_demand = MEMO_DEMAND };
}

static void memo_free(struct memo_case *m)
{
	for (size_t i = 0; i < MEMO_NODES; i++)
		mxq_server_caps_done(&m->caps[i]);
	for (size_t d = 0; d < MEMO_DEMAND; d++)
		if (m->reqs[d].tags || m->reqs[d].whitelist)
			mxq_group_reqs_done(&m->reqs[d]);
	mxq_power_config_done(&m->cfg);
}

START_TEST(test_gang_memo_same_plans)
{
	size_t deferred = 0, woken = 0;

	for (uint32_t seed = 1; seed <= 400; seed++) {
		static struct memo_case a, b;
		struct mxq_power_state sa = { 0 }, sb = { 0 };
		struct mxq_power_plan pa = { 0 }, pb = { 0 };

		memo_build(&a, seed, false);
		memo_build(&b, seed, true);
		ck_assert_int_ge(mxq_power_decide(&a.snap, NOW, &a.cfg, &sa, &pa), 0);
		ck_assert_int_ge(mxq_power_decide(&b.snap, NOW, &b.cfg, &sb, &pb), 0);
		ck_assert_msg(pa.n_actions == pb.n_actions, "seed %u: %zu actions, shared %zu",
			      seed, pa.n_actions, pb.n_actions);
		for (size_t k = 0; k < pa.n_actions; k++) {
			ck_assert_str_eq(pa.actions[k].hostname, pb.actions[k].hostname);
			ck_assert_int_eq(pa.actions[k].kind, pb.actions[k].kind);
			ck_assert_str_eq(pa.actions[k].reason ? pa.actions[k].reason : "",
					 pb.actions[k].reason ? pb.actions[k].reason : "");
			woken += pa.actions[k].kind == MXQ_POWER_ACTION_WAKE;
		}
		for (size_t d = 0; d < MEMO_DEMAND; d++) {
			const struct mxq_power_demand_outcome *x = &pa.outcomes[d], *y = &pb.outcomes[d];
			ck_assert_msg(memcmp(x, y, sizeof(*x)) == 0,
				      "seed %u demand %zu: deferred until %" PRId64 ", shared %" PRId64,
				      seed, d, x->deferred_until, y->deferred_until);
			deferred += x->deferred_until != 0;
		}
		ck_assert_int_eq(pa.next_change_at, pb.next_change_at);
		ck_assert_int_eq(pa.recheck_at, pb.recheck_at);
		ck_assert_str_eq(pa.summary, pb.summary);
		for (size_t i = 0; i < pa.n_explanations; i++)
			ck_assert_str_eq(pa.explanations[i].text, pb.explanations[i].text);
		mxq_power_plan_free(&pa);
		mxq_power_plan_free(&pb);
		memo_free(&a);
		memo_free(&b);
	}
	/* the snapshots exercise both deferral and wakes */
	ck_assert_uint_gt(deferred, 400);
	ck_assert_uint_gt(woken, 100);
}
END_TEST

START_TEST(test_decide_bad_arguments)
{
	struct mxq_power_config cfg;
	struct mxq_power_state st = { .initialized = true, .resume_tokens = 3 };
	struct mxq_power_plan plan = { .n_actions = 42 };
	struct mxq_power_node node = { .hostname = NULL };
	struct mxq_power_snapshot snap = { .nodes = &node, .n_nodes = 1 };

	mxq_power_config_defaults(&cfg);
	ck_assert_int_eq(mxq_power_decide(NULL, NOW, &cfg, &st, &plan), -EINVAL);
	ck_assert_int_eq(mxq_power_decide(&snap, NOW, &cfg, &st, &plan), -EINVAL);
	node.hostname = "n1";
	node.state = _MXQ_POWER_STATE_MAX;
	ck_assert_int_eq(mxq_power_decide(&snap, NOW, &cfg, &st, &plan), -EINVAL);
	/* untouched on failure */
	ck_assert_uint_eq(plan.n_actions, 42);
	ck_assert(st.resume_tokens == 3);

	snap.n_nodes = 0;
	ck_assert_int_eq(mxq_power_decide(&snap, NOW, &cfg, &st, &plan), 0);
	ck_assert_ptr_nonnull(plan.summary);
	mxq_power_plan_free(&plan);
	mxq_power_plan_free(NULL);
}
END_TEST

/* ---------------------------------------------------------------- state tables */

START_TEST(test_state_strings)
{
	static const char *const names[] = { "ON", "DRAINING", "POWERING_OFF", "OFF",
					     "POWERING_ON", "FAILED", "UNKNOWN" };

	ck_assert_int_eq(sizeof(names) / sizeof(names[0]), _MXQ_POWER_STATE_MAX);
	for (int s = 0; s < _MXQ_POWER_STATE_MAX; s++) {
		const char *name = mxq_power_state_to_string(s);
		char lower[32];
		ck_assert_str_eq(name, names[s]);
		ck_assert_int_eq(mxq_power_state_from_string(name), s);
		for (size_t k = 0; k <= strlen(name); k++)
			lower[k] = (char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
		ck_assert_int_eq(mxq_power_state_from_string(lower), s);
	}
	ck_assert_ptr_null(mxq_power_state_to_string(_MXQ_POWER_STATE_MAX));
	ck_assert_ptr_null(mxq_power_state_to_string((enum mxq_power_node_state)-1));
	ck_assert_int_eq(mxq_power_state_from_string("SLEEPING"), -EINVAL);
	ck_assert_int_eq(mxq_power_state_from_string(""), -EINVAL);
	ck_assert_int_eq(mxq_power_state_from_string(NULL), -EINVAL);

	for (int k = 0; k < _MXQ_POWER_ACTION_MAX; k++)
		ck_assert_int_eq(mxq_power_action_from_string(mxq_power_action_to_string(k)), k);
	ck_assert_ptr_null(mxq_power_action_to_string(_MXQ_POWER_ACTION_MAX));
	ck_assert_int_eq(mxq_power_action_from_string("REBOOT"), -EINVAL);
}
END_TEST

START_TEST(test_state_predicates)
{
	/* one row per state: capacity, powered, can_suspend, can_resume, transitional, admin */
	static const bool table[_MXQ_POWER_STATE_MAX][6] = {
		[MXQ_POWER_ON]           = { 1, 1, 1, 0, 0, 0 },
		[MXQ_POWER_DRAINING]     = { 0, 1, 0, 0, 1, 0 },
		[MXQ_POWER_POWERING_OFF] = { 0, 0, 0, 0, 1, 0 },
		[MXQ_POWER_OFF]          = { 0, 0, 0, 1, 0, 0 },
		[MXQ_POWER_POWERING_ON]  = { 1, 1, 0, 0, 1, 0 },
		[MXQ_POWER_FAILED]       = { 0, 0, 0, 0, 0, 1 },
		[MXQ_POWER_UNKNOWN]      = { 0, 0, 0, 0, 0, 0 },
	};
	for (int s = 0; s < _MXQ_POWER_STATE_MAX; s++) {
		ck_assert_int_eq(mxq_power_state_counts_as_capacity(s), table[s][0]);
		ck_assert_int_eq(mxq_power_state_counts_as_powered(s), table[s][1]);
		ck_assert_int_eq(mxq_power_state_can_suspend(s), table[s][2]);
		ck_assert_int_eq(mxq_power_state_can_resume(s), table[s][3]);
		ck_assert_int_eq(mxq_power_state_is_transitional(s), table[s][4]);
		ck_assert_int_eq(mxq_power_state_needs_admin(s), table[s][5]);
	}
	ck_assert(mxq_power_state_desired_off(MXQ_POWER_ON, MXQ_POWER_DRAINING));
	ck_assert(mxq_power_state_desired_off(MXQ_POWER_DRAINING, MXQ_POWER_POWERING_OFF));
	ck_assert(mxq_power_state_desired_off(MXQ_POWER_POWERING_OFF, MXQ_POWER_OFF));
	ck_assert(mxq_power_state_desired_off(MXQ_POWER_POWERING_OFF, MXQ_POWER_FAILED));
	ck_assert(!mxq_power_state_desired_off(MXQ_POWER_POWERING_ON, MXQ_POWER_FAILED));
	ck_assert(!mxq_power_state_desired_off(MXQ_POWER_OFF, MXQ_POWER_POWERING_ON));
	ck_assert(!mxq_power_state_desired_off(MXQ_POWER_FAILED, MXQ_POWER_UNKNOWN));
	ck_assert(mxq_power_action_is_transition(MXQ_POWER_ACTION_RETRY));
	ck_assert(!mxq_power_action_is_transition(MXQ_POWER_ACTION_HARD_OFF));
	ck_assert(!mxq_power_action_is_transition(MXQ_POWER_ACTION_ADMIN_DONE));
}
END_TEST

/* ---------------------------------------------------------------- config */

struct config_case {
	const char *text;
	int ret;
	const char *errors;      /* substrings separated by '|', each must appear */
	unsigned error_lines;    /* lines in errbuf */
};

static const struct config_case config_cases[] = {
	{ "", 0, NULL, 0 },
	{ "# only a comment\n\n   \n", 0, NULL, 0 },
	{ "idle_time = 15m\nwarm_pool = 3 # trailing comment\r\n", 0, NULL, 0 },
	{ "idle_tim = 5m\n", -EINVAL,
	  "power.conf:1: unknown key 'idle_tim' (did you mean 'idle_time'?)", 1 },
	{ "warm_pool = 1\n\nmax_bootng = 3\n", -EINVAL,
	  "power.conf:3: unknown key 'max_bootng' (did you mean 'max_booting'?)", 1 },
	{ "warmpool.gpu = 1\n", -EINVAL,
	  "power.conf:1: unknown key 'warmpool.gpu' (did you mean 'warm_pool.gpu'?)", 1 },
	{ "frobnicate = 1\n", -EINVAL, "power.conf:1: unknown key 'frobnicate'", 1 },
	{ "idle_time = 10x\n", -EINVAL, "power.conf:1: idle_time: '10x' is not a duration", 1 },
	{ "idle_time = -5\n", -EINVAL, "power.conf:1: idle_time", 1 },
	{ "warm_pool = two\n", -EINVAL, "power.conf:1: warm_pool: 'two' is not a whole number", 1 },
	{ "warm_pool = 99999999999\n", -EINVAL, "in range", 1 },
	{ "suspend_rate = fast\n", -EINVAL, "suspend_rate: 'fast' is not a number", 1 },
	{ "dry_run = maybe\n", -EINVAL, "dry_run: 'maybe' is not yes or no", 1 },
	{ "just some words\n", -EINVAL, "power.conf:1: expected 'key = value'", 1 },
	{ "= 5\n", -EINVAL, "missing key", 1 },
	{ "warm_pool =\n", -EINVAL, "'warm_pool' needs a value", 1 },
	{ "warm_pool = 1\nwarm_pool = 2\n", -EINVAL,
	  "power.conf:2: 'warm_pool' already set on line 1", 1 },
	{ "warm_pool.gpu = 1\nwarm_pool.gpu = 2\n", -EINVAL, "already set on line 1", 1 },
	{ "warm_pool.g$u = 1\n", -EINVAL, "invalid character '$'", 1 },
	{ "exclude = n1 n/2\n", -EINVAL, "'n/2' is not a host name", 1 },
	{ "boot_deadline = 1m\nboot_time = 3m\n", -EINVAL,
	  "power.conf:1: boot_deadline (1m) is shorter than boot_time (3m)", 1 },
	{ "shutdown_deadline = 0\n", -EINVAL, "shutdown_deadline must be longer than 0s", 1 },
	{ "idle_time = auto\nidle_watts = 0\n", -EINVAL, "needs idle_watts greater than 0", 1 },
	{ "max_power_watts = 5000\nbusy_watts = 300\n", 0, NULL, 0 },
	{ "max_power_watts = 200\nbusy_watts = 300\n", -EINVAL,
	  "power.conf:1: max_power_watts (200 W) is below busy_watts (300 W)", 1 },
	{ "busy_watts = 0\nmax_power_watts = 1000\n", -EINVAL,
	  "power.conf:2: max_power_watts needs busy_watts greater than 0", 1 },
	{ "max_power_watts = lots\n", -EINVAL, "max_power_watts: 'lots' is not a number", 1 },
	/* every error is reported, each with its line */
	{ "idle_tim = 5m\nwarm_pool = x\n# fine\nresume_rate = 2\nmax_booting = -1\nbogus\n", -EINVAL,
	  "power.conf:1: unknown key 'idle_tim'|power.conf:2: warm_pool|"
	  "power.conf:5: max_booting|power.conf:6: expected", 4 },
};

START_TEST(test_config_parse)
{
	const struct config_case *t = &config_cases[_i];
	struct mxq_power_config cfg;
	char err[4096];
	unsigned lines = 0;
	uint64_t before;

	mxq_power_config_defaults(&cfg);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "warm_pool = 7\n", "x", err, sizeof(err)), 0);
	before = mxq_power_config_hash(&cfg);

	memset(err, 'Z', sizeof(err));
	ck_assert_int_eq(mxq_power_config_parse(&cfg, t->text, "power.conf", err, sizeof(err)),
			 t->ret);
	if (t->ret == 0) {
		ck_assert_str_eq(err, "");
		mxq_power_config_done(&cfg);
		return;
	}
	/* a config that did not parse leaves the old one in place */
	ck_assert_uint_eq(cfg.warm_pool, 7);
	ck_assert(mxq_power_config_hash(&cfg) == before);

	char want[1024];
	snprintf(want, sizeof(want), "%s", t->errors);
	for (char *save = NULL, *w = strtok_r(want, "|", &save); w; w = strtok_r(NULL, "|", &save))
		ck_assert_msg(strstr(err, w), "'%s' not in '%s'", w, err);
	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	ck_assert_msg(lines + 1 == t->error_lines, "%u error lines in '%s'", lines + 1, err);
	mxq_power_config_done(&cfg);
}
END_TEST

START_TEST(test_config_values)
{
	struct mxq_power_config cfg;
	char err[1024];
	const char *text =
		"idle_time = 1h30m\n"
		"min_on_time = 90\n"
		"min_off_time = 1.5m\n"
		"boot_deadline = 2d\n"
		"warm_pool = 4\n"
		"warm_pool.gpu = 2\n"
		"warm_pool.bigmem = 1\n"
		"suspend_rate = 0.5\n"
		"max_powered_on = 100\n"
		"dry_run = yes\n"
		"exclude = n3 n1\n"
		"exclude = n2 n1\n";

	mxq_power_config_defaults(&cfg);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, text, "t", err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.idle_time_s, 5400);
	ck_assert_int_eq(cfg.min_on_time_s, 90);
	ck_assert_int_eq(cfg.min_off_time_s, 90);
	ck_assert_int_eq(cfg.boot_deadline_s, 2 * 86400);
	ck_assert_uint_eq(cfg.warm_pool, 4);
	ck_assert_uint_eq(cfg.n_class_pools, 2);
	ck_assert_str_eq(cfg.class_pools[0].name, "bigmem");
	ck_assert_uint_eq(cfg.class_pools[1].count, 2);
	ck_assert(cfg.suspend_rate == 0.5);
	ck_assert_uint_eq(cfg.max_powered_on, 100);
	ck_assert(cfg.dry_run);
	ck_assert_uint_eq(cfg.n_exclude, 3);
	ck_assert_str_eq(cfg.exclude[0], "n1");
	ck_assert_str_eq(cfg.exclude[2], "n3");
	/* untouched keys keep their defaults */
	ck_assert_int_eq(cfg.shutdown_deadline_s, 300);
	ck_assert_uint_eq(cfg.breaker_failures, 3);

	ck_assert_int_eq(mxq_power_config_parse(&cfg, "idle_time = auto\nboot_energy = 90000\n"
						"shutdown_energy = 0\nidle_watts = 50\n",
						"t", err, sizeof(err)), 0);
	ck_assert_int_eq(cfg.idle_time_s, MXQ_POWER_IDLE_AUTO);
	ck_assert_int_eq(mxq_power_config_idle_time(&cfg), 1800);
	/* the new file replaced everything, back to defaults where not set */
	ck_assert_uint_eq(cfg.n_exclude, 0);
	ck_assert_uint_eq(cfg.warm_pool, 0);
	mxq_power_config_done(&cfg);
}
END_TEST

START_TEST(test_config_hash)
{
	struct mxq_power_config a, b, c;
	char err[1024];
	char *dump;

	mxq_power_config_defaults(&a);
	mxq_power_config_defaults(&b);
	mxq_power_config_defaults(&c);
	/* same meaning, different layout */
	ck_assert_int_eq(mxq_power_config_parse(&a, "idle_time = 20m\nexclude = b a\n"
						"warm_pool.x = 1\nwarm_pool.a = 2\n", "a", err,
						sizeof(err)), 0);
	ck_assert_int_eq(mxq_power_config_parse(&b, "# comment\nwarm_pool.a=2\n  exclude = a\n"
						"warm_pool.x = 1\nidle_time = 1200\nexclude = b a\n",
						"b", err, sizeof(err)), 0);
	ck_assert(mxq_power_config_hash(&a) == mxq_power_config_hash(&b));
	ck_assert(mxq_power_config_hash(&a) != 0);
	/* stable across calls */
	ck_assert(mxq_power_config_hash(&a) == mxq_power_config_hash(&a));

	/* one value changes the hash */
	ck_assert_int_eq(mxq_power_config_parse(&b, "idle_time = 21m\nexclude = b a\n"
						"warm_pool.x = 1\nwarm_pool.a = 2\n", "b", err,
						sizeof(err)), 0);
	ck_assert(mxq_power_config_hash(&a) != mxq_power_config_hash(&b));

	/* the dump parses back to the same config */
	dump = mxq_power_config_dump(&a);
	ck_assert_ptr_nonnull(dump);
	ck_assert_ptr_nonnull(strstr(dump, "idle_time = 20m\n"));
	ck_assert_ptr_nonnull(strstr(dump, "warm_pool.a = 2\nwarm_pool.x = 1\n"));
	ck_assert_ptr_nonnull(strstr(dump, "exclude = a b\n"));
	ck_assert_int_eq(mxq_power_config_parse(&c, dump, "dump", err, sizeof(err)), 0);
	ck_assert(mxq_power_config_hash(&a) == mxq_power_config_hash(&c));
	free(dump);

	/* defaults dump and parse back too, doubles included */
	mxq_power_config_done(&c);
	c.suspend_rate = 0.1;
	c.idle_watts = 123.456;
	dump = mxq_power_config_dump(&c);
	ck_assert_int_eq(mxq_power_config_parse(&b, dump, "dump", err, sizeof(err)), 0);
	ck_assert(b.suspend_rate == 0.1 && b.idle_watts == 123.456);
	ck_assert(mxq_power_config_hash(&b) == mxq_power_config_hash(&c));
	free(dump);

	/* a copy is equal and independent */
	struct mxq_power_config d;
	ck_assert_int_eq(mxq_power_config_copy(&d, &a), 0);
	ck_assert(mxq_power_config_hash(&d) == mxq_power_config_hash(&a));
	mxq_power_config_done(&a);
	ck_assert_uint_eq(d.n_exclude, 2);
	mxq_power_config_done(&d);
	mxq_power_config_done(&b);
	mxq_power_config_done(&c);
}
END_TEST

START_TEST(test_config_small_errbuf)
{
	struct mxq_power_config cfg;
	char err[16];

	mxq_power_config_defaults(&cfg);
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "a = 1\nb = 2\nc = 3\n", "very-long-name.conf",
						err, sizeof(err)), -EINVAL);
	ck_assert_uint_lt(strlen(err), sizeof(err));
	ck_assert_int_eq(mxq_power_config_parse(&cfg, "a = 1\n", "x", NULL, 0), -EINVAL);
}
END_TEST

static Suite *power_suite(void)
{
	Suite *s = suite_create("power");
	TCase *tc = tcase_create("policy");

	tcase_add_loop_test(tc, test_scenario, 0, sizeof(scenarios) / sizeof(scenarios[0]));
	tcase_add_test(tc, test_resume_tokens_across_ticks);
	tcase_add_test(tc, test_state_text);
	tcase_add_test(tc, test_gap_edges);
	tcase_add_loop_test(tc, test_gap_idle_time, 0, sizeof(gap_rows) / sizeof(gap_rows[0]));
	tcase_add_test(tc, test_gap_trusted);
	tcase_add_test(tc, test_gap_on_busy_host);
	tcase_add_test(tc, test_gap_power_off_matched);
	tcase_add_test(tc, test_full_cycle);
	tcase_add_test(tc, test_gang_memo_same_plans);
	tcase_add_test(tc, test_decide_bad_arguments);
	tcase_add_test(tc, test_state_strings);
	tcase_add_test(tc, test_state_predicates);
	suite_add_tcase(s, tc);

	tc = tcase_create("config");
	tcase_add_loop_test(tc, test_config_parse, 0, sizeof(config_cases) / sizeof(config_cases[0]));
	tcase_add_test(tc, test_config_values);
	tcase_add_test(tc, test_config_hash);
	tcase_add_test(tc, test_config_small_errbuf);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(power_suite());
	int failed;

	/* explanations name points in time in local time: the expected texts
	 * are in UTC (NOW is 1970-01-12 13:46:40 UTC) */
	setenv("TZ", "UTC", 1);
	tzset();

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	fprintf(stderr, "%zu policy scenarios, %zu config cases\n",
		sizeof(scenarios) / sizeof(scenarios[0]),
		sizeof(config_cases) / sizeof(config_cases[0]));
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
