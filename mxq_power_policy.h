/*
 * mxq_power_policy - the pure power management policy (DESIGN §5).
 *
 * One call, mxq_power_decide(), takes a snapshot of the managed nodes and of
 * the pending demand, the current time, the configuration and the policy
 * state carried from the previous tick, and returns a plan: the actions to
 * carry out (wake, drain, power off, mark ...) each with a reason a human
 * can read, and one explanation per node saying why it is in the state it
 * is in. It never reads a clock, never logs, never touches the database and
 * never runs anything; the leader's tick (mxqd_power.c), mxqadmin and the
 * simulator all drive the same function.
 *
 * Matching a node to pending work is done only by server_is_qualified()
 * (mxqd_control.h); this module adds capacity accounting on top of it.
 *
 * The configuration (power.conf, see power.conf(5)) is parsed here as well,
 * so that mxqd, mxqadmin and the simulator read the file the same way and
 * publish the same hash.
 */
#ifndef MXQ_POWER_POLICY_H
#define MXQ_POWER_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxqd_control.h"

/* ------------------------------------------------------------------------
 * Node power states
 *
 * The enum is called mxq_power_node_state because "struct mxq_power_state"
 * (the policy's memory between ticks, below) shares the C tag namespace;
 * the functions keep the shorter mxq_power_state_ prefix.
 */
enum mxq_power_node_state {
	MXQ_POWER_ON = 0,        /* powered, mxqd registered, may claim jobs */
	MXQ_POWER_DRAINING,      /* desired off: claims nothing new, waits for the node's ack */
	MXQ_POWER_POWERING_OFF,  /* node acknowledged the drain, power-off in progress */
	MXQ_POWER_OFF,           /* powered off by us */
	MXQ_POWER_POWERING_ON,   /* woken, waiting for mxqd to register */
	MXQ_POWER_FAILED,        /* missed a deadline or a call failed; retried with
	                            backoff (failed_retry_*), then left to an admin */
	MXQ_POWER_UNKNOWN,       /* no reliable knowledge (new row, lost contact) */
	_MXQ_POWER_STATE_MAX,
};

/* "ON", "DRAINING", "POWERING_OFF", "OFF", "POWERING_ON", "FAILED",
 * "UNKNOWN"; NULL for a value out of range. */
const char *mxq_power_state_to_string(enum mxq_power_node_state state);
/* Name (case-insensitive) to state; -EINVAL for anything else. */
int mxq_power_state_from_string(const char *name);

/* Can run jobs now or soon without a new wake: ON, POWERING_ON. */
bool mxq_power_state_counts_as_capacity(enum mxq_power_node_state state);
struct mxq_power_node;
/* N is ON or DRAINING and its mxqd is gone (daemon_gone): nothing starts
 * there. A booting node (POWERING_ON) has no mxqd yet and is not lost. */
bool mxq_power_node_daemon_lost(const struct mxq_power_node *n);
/* Draws power and counts against max_powered_on: ON, DRAINING, POWERING_ON. */
bool mxq_power_state_counts_as_powered(enum mxq_power_node_state state);
/* A suspend (DRAIN) may start from here: ON. */
bool mxq_power_state_can_suspend(enum mxq_power_node_state state);
/* A wake may start from here: OFF. */
bool mxq_power_state_can_resume(enum mxq_power_node_state state);
/* Waiting for something to happen, with a deadline:
 * DRAINING, POWERING_OFF, POWERING_ON. */
bool mxq_power_state_is_transitional(enum mxq_power_node_state state);
/* The policy takes no action for demand (only its retry backoff or an
 * admin moves it): FAILED. */
bool mxq_power_state_needs_admin(enum mxq_power_node_state state);
/* Whether a node moved from FROM to TO is desired off (its mxqd claims
 * nothing): DRAINING, POWERING_OFF, OFF, and FAILED unless a boot failed
 * (FAILED from POWERING_ON: nothing to keep closed). */
bool mxq_power_state_desired_off(enum mxq_power_node_state from, enum mxq_power_node_state to);

/* ------------------------------------------------------------------------
 * Configuration (power.conf)
 */

/* idle_time_s values with a special meaning */
#define MXQ_POWER_IDLE_AUTO  (-1)  /* computed from the break-even energy */
#define MXQ_POWER_IDLE_NEVER (-2)  /* never suspend automatically */

#define MXQ_POWER_CLASS_NAME_MAX 64   /* including the NUL */

/* power.conf's rule for node class names (class_pool.NAME, mxqadmin power
 * set class=): 1..63 letters, digits, '_', '-', '.'. 0 or -EINVAL, why in err. */
int mxq_power_class_name_check(const char *cls, char *err, size_t errlen);
#define MXQ_POWER_CLASS_POOLS_MAX 256 /* warm_pool.CLASS entries */
#define MXQ_POWER_EXCLUDE_MAX 65536   /* hosts in 'exclude' */

/* Idle ON nodes of one node class that are never suspended. */
struct mxq_power_class_pool {
	char name[MXQ_POWER_CLASS_NAME_MAX];
	uint32_t count;
};

/*
 * Every knob of the policy. Durations are seconds, energies joules, power
 * watts, rates per minute. Defaults are those of mxq_power_config_defaults()
 * and power.conf(5). Arrays are owned by the struct: release with
 * mxq_power_config_done().
 */
struct mxq_power_config {
	int64_t idle_time_s;         /* idle this long before a suspend, or
	                                MXQ_POWER_IDLE_AUTO (break-even, learned
	                                per class) / _NEVER; auto */
	int64_t idle_time_floor_s;   /* lower bound of the auto idle time; 0 */
	double idle_watts;           /* draw of an idle ON node (auto); 100 W */
	double busy_watts;           /* draw of a node with every slot busy: what a
	                                powered node may draw (max_power_watts); 250 W */
	double boot_energy_j;        /* energy of one boot (auto); 30000 J */
	double shutdown_energy_j;    /* energy of one shutdown (auto); 3000 J */
	uint32_t warm_pool;          /* idle ON nodes never suspended; 0 */
	struct mxq_power_class_pool *class_pools; /* same, per node class, sorted by name */
	size_t n_class_pools;
	double suspend_rate;         /* suspends (drains) per minute, token
	                                bucket holding max(1, rate); 0 = unlimited; 0 */
	double resume_rate;          /* wakes per minute, same bucket rules; 300 */
	uint32_t max_booting;        /* nodes POWERING_ON at once; 0 = unlimited; 0 */
	uint32_t max_powered_on;     /* ON + POWERING_ON + DRAINING; 0 = unlimited; 0 */
	double max_power_watts;      /* cluster budget: the powered nodes (ON,
	                                DRAINING, POWERING_ON, POWERING_OFF), each at
	                                max(its reading, busy_watts), plus one more
	                                node at busy_watts, for a wake; 0 = none; 0 */
	int64_t min_on_time_s;       /* ON at least this long before a suspend; 0 */
	int64_t min_off_time_s;      /* OFF at least this long before a wake; 30s */
	uint32_t max_cycles_per_day; /* boots per node per day; 0 = unlimited; 24 */
	int64_t boot_deadline_s;     /* POWERING_ON longer -> FAILED; 10m */
	int64_t shutdown_deadline_s; /* POWERING_OFF longer (and no power-off
	                                call running) -> FAILED; 5m */
	int64_t drain_timeout_s;     /* DRAINING without ack longer -> back to ON; 5m */
	uint32_t breaker_failures;   /* consecutive failed boots opening the
	                                breaker; 0 = no breaker; 3 */
	int64_t breaker_cooldown_s;  /* while open: no automatic wakes and no
	                                automatic suspends; 30m */
	int64_t boot_time_s;         /* expected boot duration; 3m */
	int64_t failed_retry_delay_s;/* FAILED: first automatic retry after; 10m */
	double failed_retry_factor;  /* each further retry waits this much longer; 2 */
	uint32_t failed_retries;     /* automatic retries before an admin is
	                                needed; 0 = none; 3 */
	bool dry_run;                /* plan is marked dry-run, nothing is done; no */
	char **exclude;              /* host names never touched, sorted, unique */
	size_t n_exclude;
};

/* Fill CFG with the defaults (no allocation; CFG need not be initialised). */
void mxq_power_config_defaults(struct mxq_power_config *cfg);
/* Free the arrays and reset CFG to the defaults. NULL is fine. */
void mxq_power_config_done(struct mxq_power_config *cfg);
/* Deep copy into *ret_copy (previous contents not freed). 0 or -ENOMEM. */
int mxq_power_config_copy(struct mxq_power_config *ret_copy,
			  const struct mxq_power_config *cfg);

/*
 * Parse TEXT (the whole power.conf) on top of the defaults: one
 * "key = value" per line, '#' starts a comment, blank lines ignored.
 * Durations take s/m/h/d suffixes (bare number = seconds), idle_time also
 * 'auto' and 'never'. FILENAME is only used in messages.
 *
 * Every error is reported, one line each, "FILE:LINE: message", into errbuf
 * (truncated to errlen, always terminated when errlen > 0); an unknown key
 * names the closest known one. Returns 0 and replaces *cfg (freeing what it
 * held) only when the whole text parsed; otherwise returns -EINVAL (or
 * -ENOMEM) and leaves *cfg untouched. *cfg must be initialised.
 */
int mxq_power_config_parse(struct mxq_power_config *cfg, const char *text,
			   const char *filename, char *errbuf, size_t errlen);

/*
 * The canonical text of CFG: every key once, in a fixed order, durations in
 * their largest exact unit. Parsing it gives back an equal config.
 * Malloc'ed; NULL on ENOMEM.
 */
char *mxq_power_config_dump(const struct mxq_power_config *cfg);

/* 64-bit FNV-1a over the canonical dump: equal configs, equal hashes,
 * whatever the file's layout. 0 only on ENOMEM. */
uint64_t mxq_power_config_hash(const struct mxq_power_config *cfg);

/* The idle time of the configuration: idle_time_s, or for auto
 * max(floor, ceil((boot_energy + shutdown_energy) / idle_watts)), the
 * break-even time B (what a gang's hosts may wait for it idle; a host's
 * own idle time is mxq_power_idle_time_for()).
 * MXQ_POWER_IDLE_NEVER stays as it is. */
int64_t mxq_power_config_idle_time(const struct mxq_power_config *cfg);

/* ------------------------------------------------------------------------
 * Snapshot: what the leader read this tick. All pointers are borrowed for
 * the duration of mxq_power_decide(); nothing is kept.
 */

/* One running job, for "will capacity free up sooner than a boot takes". */
struct mxq_power_running_job {
	int64_t expected_end;        /* date_start + job_time, same clock as now */
	int64_t started_at;          /* date_start; 0 = unknown (no idle gap is learned) */
	uint32_t slots;
	uint64_t memory_mib;
	uint32_t gpus;
	uint64_t tmpdir_mib;
};

/* One managed host. */
struct mxq_power_node {
	const char *hostname;
	enum mxq_power_node_state state;
	int64_t state_since;         /* when it entered STATE */
	bool admin_off;              /* admin powered it off: never woken automatically */
	bool excluded;               /* excluded by admin: no action at all */
	const char *node_class;      /* NULL or "" = none */
	int32_t efficiency_rank;     /* lower = more efficient: woken first, suspended last */
	const struct mxq_server_caps *caps; /* last registration; NULL = never
	                                registered (never woken for demand) */
	/* resources held by running jobs (used_* never exceed caps) */
	uint32_t jobs_running;
	uint32_t used_slots;
	uint64_t used_memory_mib;
	uint32_t used_gpus;
	uint64_t used_tmpdir_mib;
	const struct mxq_power_running_job *running; /* optional detail, NULL = unknown */
	size_t n_running;
	int64_t last_job_end;        /* 0 = no job since it came on */
	uint32_t cycles_today;       /* boots started since the start of the day */
	int64_t last_boot_ok_at;     /* last time a boot of it completed; 0 = never */
	uint32_t failure_count;      /* informational, shown in explanations */
	const char *failure_reason;  /* for FAILED, shown in explanations */
	bool drain_acked;            /* DRAINING: the node's mxqd acknowledged (idle, claims nothing) */
	bool seen_up;                /* a live mxqd; in POWERING_ON and OFF: one that
	                                registered after state_since */
	bool seen_down;              /* no live mxqd, or the transport reports the power off */

	/* What the leader knows beyond the tables (all zero: nothing known,
	 * which is what mxqadmin and the simulator pass). */
	bool daemon_gone;            /* no live mxqd: heartbeat older than the node
	                                timeout, EXITED or CRASHED */
	const char *closed;          /* its live mxqd starts no new jobs, why (it is
	                                stopping, or paused by a disk fault); NULL:
	                                it does. Like daemon_gone, no capacity */
	int power_reading;           /* the transport's reading in this state: 1 on,
	                                0 off, -1 or 0 with !power_read: none */
	bool power_read;             /* power_reading is valid */
	bool power_readable;         /* some transport reads the real power state */
	const char *power_source;    /* transport that reads it, for reasons */
	bool off_by_node;            /* the node's own mxqd powers it off (self) */
	const char *failed_call;     /* the wake, power-off or drain call made for this
	                                state failed: why (NULL = none) */
	bool can_cut;                /* the off transport can cut the power (hard off) */
	bool off_call_busy;          /* a power-off call (POWERING_OFF) or the ssh drain
	                                (DRAINING) is still running: no FAILED at the
	                                shutdown deadline meanwhile */
	bool hard_off_done;          /* a hard off returned success in this state */
	bool ssh_drain;              /* the off transport can run the drain command */
	bool ssh_drain_sent;         /* ... and did, for this DRAINING period */
	bool drain_busy_ack;         /* the node answered the drain BUSY */
	bool inherited;              /* POWERING_ON/OFF written by an earlier leader,
	                                first tick of this one: send it again */
	bool intent_unsent;          /* POWERING_ON/OFF written by this leader in this
	                                term whose call it never started (the commit's
	                                answer was lost, the lease ran short before
	                                the call): send it now */
	int64_t fence_until;         /* an earlier leader's call may still land until
	                                then: no wake or power-off before; 0 = none */
	bool admin_wake;             /* an admin asked to power it on */
	bool admin_request;          /* an admin request waits to be marked done */
	const char *admin_reason;    /* the admin's text, for the wake's reason */
	const char *unmanaged_why;   /* its transports cannot act on it: not managed */
	double watts;                /* its current draw as measured or modelled by
	                                its mxqd (mxq_power.current_watts); 0 = unknown */
};

/* Pending jobs that share one requirement signature (NOT one per job). */
struct mxq_power_demand {
	const struct mxq_group_reqs *reqs; /* what one job needs: threads are
	                                      slots, memory, gpus, tmpdir */
	const char *label;           /* for reasons, e.g. "group 42 (alice)"; NULL = generated */
	uint64_t jobs_pending;
	uint32_t max_per_node;       /* job_max_per_node, 0 = unlimited */
	uint32_t nodes_at_once;      /* its first job needs this many nodes started
	                                together (a gang, as in the simulator's
	                                wide SWF jobs); 0 or 1 = independent jobs,
	                                which is all MXQ itself has */
	int64_t run_s;               /* requested run time of its first job;
	                                0 = reqs->time_min (0 there too: unlimited) */
};

struct mxq_power_snapshot {
	const struct mxq_power_node *nodes;
	size_t n_nodes;
	const struct mxq_power_demand *demand; /* served in this order (priority first) */
	size_t n_demand;
	/* leader options (mxqd), 0 = not used */
	int64_t soft_off_deadline_s; /* POWERING_OFF, power still on this long: hard off */
	int64_t ssh_drain_after_s;   /* DRAINING without an answer this long: ssh drain */
	bool reconcile_due;          /* this tick reconciles: an ON node whose mxqd is
	                                gone and whose power nothing reads is recorded OFF */
	bool nodes_in_order;         /* the caller promises nodes are sorted by
	                                efficiency_rank, then hostname: not sorted again */
	bool no_explanations;        /* plan without explanations (n_explanations 0):
	                                for the simulator, which never reads them */
	struct mxq_power_index *index; /* NULL, or kept from the previous decision on
	                                these nodes: see mxq_power_index_new() */
};

/*
 * A caller that decides again and again on one array of node entries and
 * rewrites only a few of them between decisions (the simulator) keeps an
 * index in snapshot.index and reports each entry it rewrote, added to or
 * reused with mxq_power_index_changed() before the next decision: a
 * decision then looks at the nodes its steps can act on instead of at
 * every node, with the same plan. The index is rebuilt by itself when the
 * node array, its size or the configuration's exclude list differ from the
 * last decision, or when the snapshot is not nodes_in_order (then it
 * saves nothing). Entries not reported must be unchanged, including what
 * their pointers point to (caps, running). NULL from new() on allocation
 * failure; free(NULL) is fine; changed() returns -EINVAL for a NULL index.
 */
struct mxq_power_index;
struct mxq_power_index *mxq_power_index_new(void);
void mxq_power_index_free(struct mxq_power_index *ix);
int mxq_power_index_changed(struct mxq_power_index *ix, size_t node_index);

/* ------------------------------------------------------------------------
 * Policy state carried from tick to tick (persisted by the leader). A
 * zeroed struct is a fresh start: buckets are filled on the first tick.
 */
#define MXQ_POWER_LEARN_CLASSES 16  /* node classes whose idle gaps are learned */

/*
 * What the policy learned about the idle gaps of one node class (idle_time
 * = auto): how long its hosts stay idle before the next job needs one. A
 * gap that ends on the idle host itself is measured there; for a host
 * powered off, the gap ends when the class next needs a host it could have
 * served - a wake or a cancelled drain within MXQ_POWER_GAP_HORIZON break-
 * even times, matched to the power-off with the latest idle start (on
 * identical hosts the one woken is seldom the one powered off); one still
 * unmatched then is longer than the horizon. The gaps are counted in
 * buckets between the candidate idle times (fractions of the break-even
 * time, see mxq_power_gap_edge()), each new one fading the ones before by
 * 1/4096 (a gap counted 4096 gaps ago weighs about a third), and the idle
 * time is the candidate under which those gaps would have cost the least
 * energy. At most MXQ_POWER_GAP_EDGE_HOSTS hosts are remembered as counted
 * in a decision's second; beyond that a gap can be counted twice.
 */
#define MXQ_POWER_GAP_EDGES 12       /* candidate idle times */
#define MXQ_POWER_GAP_SLOTS 66       /* windows of the power-offs awaiting a match */
#define MXQ_POWER_GAP_HORIZON 2      /* in break-even times: the largest candidate */
#define MXQ_POWER_GAP_EDGE_HOSTS 32  /* hosts remembered as counted in a decision's second */
struct mxq_power_gap_learn {
	char node_class[MXQ_POWER_CLASS_NAME_MAX]; /* "" = hosts without class */
	double weight[MXQ_POWER_GAP_EDGES + 1]; /* gaps per bucket: <= edge 0, ...,
	                                above the last edge (censored) */
	double length[MXQ_POWER_GAP_EDGES]; /* the sum of their lengths (s) */
	uint32_t seen;               /* gaps counted, saturating */
	int64_t idle_time_s;         /* the cheapest candidate (recomputed) */
	/* the power-offs awaiting a match, counted by the window of their
	 * idle start: window w (slot w % MXQ_POWER_GAP_SLOTS) covers
	 * [w x slot_s, (w + 1) x slot_s); all windows from slot_first on */
	int64_t slot_s;              /* a 32nd of the break-even time; 0: none yet */
	int64_t slot_first;
	uint32_t slot[MXQ_POWER_GAP_SLOTS];
};

struct mxq_power_state {
	bool initialized;
	int64_t tokens_at;           /* time the buckets were last refilled */
	double suspend_tokens;
	double resume_tokens;
	uint32_t boot_failures;      /* consecutive failed boots */
	int64_t last_boot_failure_at;
	int64_t breaker_open_until;  /* 0 = closed */
	struct mxq_power_gap_learn learn[MXQ_POWER_LEARN_CLASSES]; /* idle_time = auto */
	uint32_t n_learn;
	int64_t gaps_at;             /* gaps ended by jobs started up to then are
	                                counted; 0: not yet (not kept as text) */
	uint64_t gap_edge[MXQ_POWER_GAP_EDGE_HOSTS]; /* hosts (hashed) whose gap
	                                ended in the second gaps_at, counted */
	uint32_t n_gap_edge;
};

/*
 * STATE as one line of text, as the leader keeps it in
 * mxq_power_leader.policy_state: "v1" and the seven bucket and breaker
 * fields (all a reader before the learned idle times reads), then
 * " gaps CLASS SEEN IDLE W0 .. W12 L0 .. L11" per learned class ("*" for
 * hosts without class), as many as fit into LEN. The power-offs awaiting
 * a match are not kept (a new leader counts from its first decision).
 * Returns the length or -ENOSPC.
 */
int mxq_power_state_to_text(const struct mxq_power_state *state, char *buf, size_t len);
/* The reverse: 0, or -EINVAL for text that is not such a line (then
 * *ret is a fresh state). A learned part that does not parse (also the
 * " learn CLASS SHARE SEEN" of earlier versions) is dropped as a whole
 * (learned again), the rest kept. */
int mxq_power_state_from_text(const char *text, struct mxq_power_state *ret);

/*
 * The idle time for a host of NODE_CLASS (NULL = none) under CFG and what
 * STATE (NULL: nothing) learned: a fixed idle_time as it is; with
 * idle_time = auto, once GAP_TRUSTED (16) gaps of the class were counted,
 * the cheapest candidate for them (mxq_power_gap_idle_time()), before that
 * a quarter of the break-even time, never below idle_time_floor.
 */
int64_t mxq_power_idle_time_for(const struct mxq_power_config *cfg,
				const struct mxq_power_state *state, const char *node_class);
/* Whether that idle time is the learned one (auto, enough gaps counted). */
bool mxq_power_idle_time_learned(const struct mxq_power_config *cfg,
				 const struct mxq_power_state *state, const char *node_class);

/* Candidate idle time K (0 .. MXQ_POWER_GAP_EDGES - 1) under CFG: a share
 * of the break-even time (0, 1/32, 1/16, 1/8, 3/16, 1/4, 3/8, 1/2, 3/4,
 * 1, 3/2, 2), whole seconds rounded up; INT64_MAX beyond the last. */
int64_t mxq_power_gap_edge(const struct mxq_power_config *cfg, size_t k);

/*
 * The candidate under which the gaps counted in L would have cost the
 * least energy (ties: the shorter one): a gap not longer than it idles
 * through at idle_watts; a longer one idles the candidate's time and pays
 * boot_energy + shutdown_energy (the draw while off taken as 0). Counted
 * gaps beyond the horizon (weight[MXQ_POWER_GAP_EDGES]) are longer than
 * every candidate.
 */
int64_t mxq_power_gap_idle_time(const struct mxq_power_config *cfg,
				const struct mxq_power_gap_learn *l);

/* ------------------------------------------------------------------------
 * Plan
 */
enum mxq_power_action_kind {
	MXQ_POWER_ACTION_WAKE = 0,     /* OFF -> POWERING_ON: send the wake */
	MXQ_POWER_ACTION_DRAIN,        /* ON -> DRAINING: desired off */
	MXQ_POWER_ACTION_CANCEL_DRAIN, /* DRAINING -> ON */
	MXQ_POWER_ACTION_POWER_OFF,    /* DRAINING (acked) -> POWERING_OFF */
	MXQ_POWER_ACTION_MARK_ON,      /* record ON: mxqd registered */
	MXQ_POWER_ACTION_MARK_OFF,     /* record OFF: power is off */
	MXQ_POWER_ACTION_MARK_FAILED,  /* record FAILED with the reason */
	MXQ_POWER_ACTION_HARD_OFF,     /* POWERING_OFF (same): cut the power */
	MXQ_POWER_ACTION_SSH_DRAIN,    /* DRAINING (same): run the drain command over ssh */
	MXQ_POWER_ACTION_RESEND,       /* POWERING_ON/OFF (same, deadline restarts):
	                                  send the inherited (or unsent) wake /
	                                  power-off again */
	MXQ_POWER_ACTION_RETRY,        /* FAILED -> UNKNOWN: automatic retry (backoff) */
	MXQ_POWER_ACTION_RESOLVE_JOBS, /* (same): mark the jobs still active on a
	                                  node that is off and stays off UNKNOWN */
	MXQ_POWER_ACTION_ADMIN_DONE,   /* (same): the admin request was carried out */
	_MXQ_POWER_ACTION_MAX,
};

/* "WAKE", "DRAIN", "CANCEL_DRAIN", "POWER_OFF", "MARK_ON", "MARK_OFF",
 * "MARK_FAILED", "HARD_OFF", "SSH_DRAIN", "RESEND", "RETRY", "RESOLVE_JOBS",
 * "ADMIN_DONE"; NULL out of range. */
const char *mxq_power_action_to_string(enum mxq_power_action_kind kind);
/* Name (case-insensitive) to kind; -EINVAL otherwise. */
int mxq_power_action_from_string(const char *name);

struct mxq_power_action {
	const char *hostname;
	size_t node_index;           /* index into snapshot nodes */
	enum mxq_power_action_kind kind;
	enum mxq_power_node_state from;
	enum mxq_power_node_state to;
	const char *reason;
};

/* Whether carrying out KIND changes the node's row state (a transition
 * with an event), as opposed to acting on a node that stays where it is. */
bool mxq_power_action_is_transition(enum mxq_power_action_kind kind);

/* Why a node is where it is (one per snapshot node, same order). */
struct mxq_power_explanation {
	const char *hostname;
	enum mxq_power_node_state state;   /* state after the plan */
	const char *text;
};

/* What became of one demand entry (same order as the snapshot). */
struct mxq_power_demand_outcome {
	uint64_t on_capacity;        /* jobs fitting free room of ON/POWERING_ON nodes */
	uint64_t freeing_soon;       /* jobs fitting room that frees before a boot would finish */
	uint64_t reclaimed;          /* jobs placed on DRAINING nodes taken back */
	uint64_t woken;              /* jobs placed on nodes woken by this plan */
	uint64_t unplaced;           /* the rest */
	int64_t deferred_until;      /* nodes_at_once > 1 and that many nodes are
	                                not free before this time (running jobs'
	                                expected ends): nothing held or woken for
	                                it yet, all its jobs are in unplaced; 0 = not */
};

/* All strings live in the plan's own memory. */
struct mxq_power_plan {
	int64_t now;
	bool dry_run;                /* copied from the config: do not act */
	int64_t idle_time_s;         /* effective idle time used */
	bool breaker_open;
	struct mxq_power_action *actions;
	size_t n_actions;
	struct mxq_power_explanation *explanations;
	size_t n_explanations;
	struct mxq_power_demand_outcome *outcomes;
	size_t n_outcomes;
	int64_t recheck_at;          /* a decision that depends on the clock alone
	                                comes due then (a deferral ending); the same
	                                snapshot may get another plan from then on;
	                                0 = none */
	int64_t next_change_at;      /* no later than recheck_at, and also the other
	                                times from which the clock alone may change
	                                the plan for the same snapshot, as far as the
	                                gang planner sees them (a node freeing in
	                                time for a gang, a reserved node no longer
	                                lent); the caller adds the thresholds of
	                                the snapshot itself (idle times, deadlines,
	                                min off-times, day boundary); 0 = none */
	const char *summary;         /* one line: counts of actions, breaker, limits */
	struct mxq_power_arena *arena; /* private */
};

/*
 * Decide one tick. SNAP, NOW and CFG are read only; STATE is read and
 * updated (tokens, breaker). On success returns the number of actions and
 * fills *ret_plan (free with mxq_power_plan_free()). Returns -EINVAL for
 * NULL arguments or a node without hostname, -ENOMEM on allocation failure;
 * then *ret_plan and *state are untouched.
 *
 * Cost grows with nodes and demand entries, never with the number of jobs;
 * with a kept snapshot.index, with the nodes the steps can act on (off and
 * busy nodes that nothing wakes, drains or reserves cost about nothing).
 */
int mxq_power_decide(const struct mxq_power_snapshot *snap, int64_t now,
		     const struct mxq_power_config *cfg, struct mxq_power_state *state,
		     struct mxq_power_plan *ret_plan);

/* A time and a node index; ordered by time, then index (keys are unique). */
struct mxq_power_free_time {
	int64_t t;
	size_t i;
};

/* Put the K earliest of V[0..n) first, in any order, the K-th of them at
 * V[k - 1] (quickselect, linear on average; 1 <= k <= n). Used for the
 * nodes a gang waits for, by the policy and by the simulator's dispatcher. */
void mxq_power_select_earliest(struct mxq_power_free_time *v, size_t n, size_t k);

/* Release what mxq_power_decide() allocated; zeroes the plan. NULL is fine. */
void mxq_power_plan_free(struct mxq_power_plan *plan);

/* The explanation for HOSTNAME in PLAN, or NULL. */
const char *mxq_power_plan_explain(const struct mxq_power_plan *plan, const char *hostname);

#endif
