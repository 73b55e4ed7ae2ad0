/*
 * mxq_power_db - the power manager's tables (mxq_power, mxq_power_leader,
 * mxq_power_event): the leader lease with fencing, reading the snapshot the
 * policy decides on, and every state write. Used by the leader inside mxqd,
 * by each node's mxqd for its own row, and by mxqadmin; nothing else in the
 * tree writes these tables, so every write is visibly fenced or attributed.
 *
 * Time: the policy's clock is the DATABASE clock in seconds (UNIX
 * timestamps read with the snapshot), so nodes with skewed clocks agree.
 * The lease deadline is kept on the local MONOTONIC clock, started before
 * the renewing statement is sent, minus a safety margin: the leader never
 * acts past it even if the database still thinks it holds the lease.
 *
 * Errors: negative errno; the database's message via mx_db_error(). No
 * logging here.
 */
#ifndef MXQ_POWER_DB_H
#define MXQ_POWER_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mx_db.h"
#include "mxq_power_policy.h"

/* ----------------------------------------------------------------- lease */

struct mxq_power_lease {
	char holder[256];          /* "host/daemon[pid:starttime]": unique per process */
	uint64_t epoch;            /* valid while held */
	bool held;
	uint64_t deadline_ms;      /* local boottime (mx_now_boottime_ms: suspends count): act only before this */
	bool new_term;             /* set by acquire when this call started a new epoch */
};

/*
 * Acquire or renew the lease for lease_ms milliseconds on the database
 * clock; publish config_hash and dry_run in the leader row. Returns 1 when
 * held (lease->epoch/deadline updated; new_term when the epoch changed), 0
 * when another candidate holds it (lease->held false), negative errno on
 * database errors (lease->held false: an unknown lease is not held).
 * margin_ms is subtracted from the local deadline.
 */
int mxq_power_lease_acquire(struct mx_db *db, struct mxq_power_lease *lease, unsigned lease_ms,
			    unsigned margin_ms, const char *config_hash, bool dry_run);
/* True while the lease is held and its local deadline has not passed. */
bool mxq_power_lease_valid(const struct mxq_power_lease *lease);
/* Give the lease up (clean exit): expire it now if we still hold it. */
int mxq_power_lease_release(struct mx_db *db, struct mxq_power_lease *lease);

/*
 * The config hash the leader row publishes and its holder, into the
 * caller's buffers ("" when NULL, cut to fit). 0, -ENOENT when there is no
 * leader row, another negative errno on database errors.
 */
int mxq_power_lease_published(struct mx_db *db, char *hash, size_t hashlen, char *holder,
			      size_t holderlen);

/* Persist/restore the policy state (token buckets, breaker) in the leader
 * row, fenced by the lease. */
int mxq_power_state_save(struct mx_db *db, const struct mxq_power_lease *lease,
			 const struct mxq_power_state *state, const char *summary);
int mxq_power_state_load(struct mx_db *db, struct mxq_power_state *ret_state);

/* ------------------------------------------------------------- snapshot */

/* What the snapshot knows about a node beyond the policy's view. */
struct mxq_power_host {
	char *hostname;
	char *transport_on;        /* exec, ipmi, wol */
	char *transport_off;       /* self, exec, ipmi, ssh */
	char *bmc_address;
	char *mac_address;
	char *broadcast_address;
	char *reason;              /* last decision's reason */
	char *explanation;
	char *admin_request;       /* "", "ON", "OFF" */
	char *admin_request_reason;
	char *node_ack;
	bool has_daemon;           /* an mxq_daemon row exists */
	int daemon_status;         /* of the newest mxq_daemon row */
	char *daemon_closed;       /* why that mxqd starts no new jobs; NULL: it does */
	int64_t daemon_mtime;      /* heartbeat, DB clock seconds */
	uint32_t slots_total;
	double current_watts;
	uint64_t writer_epoch;
};

/*
 * Everything one tick needs. snap points into the arrays below; all memory
 * is owned by the struct (mxq_power_db_snapshot_free()).
 */
struct mxq_power_db_snapshot {
	int64_t now;                          /* database clock, seconds */
	struct mxq_power_snapshot snap;
	struct mxq_power_node *nodes;         /* n = snap.n_nodes */
	struct mxq_power_host *hosts;         /* same order as nodes */
	struct mxq_server_caps *caps;         /* same order; valid where has_daemon */
	struct mxq_power_running_job *running;/* all running jobs, grouped by node */
	size_t n_running;
	struct mxq_power_demand *demand;
	struct mxq_group_reqs *reqs;          /* same order as demand */
	char **labels;
	uint64_t *demand_group_ids;           /* lowest group id of each signature */
	uint64_t total_jobs_pending;
};

/*
 * Read the snapshot: managed hosts with their last registration and running
 * jobs, pending demand grouped by requirement signature (its cost grows with
 * the number of distinct signatures, never with queued jobs).
 * heartbeat_timeout_s: a node whose mxqd row is older than this, or EXITED
 * or CRASHED, counts as down (seen_down). Returns 0 or negative errno.
 */
int mxq_power_db_snapshot_read(struct mx_db *db, int64_t heartbeat_timeout_s,
			       struct mxq_power_db_snapshot **ret);
void mxq_power_db_snapshot_free(struct mxq_power_db_snapshot *s);
/*
 * The id of the newest job still waiting to start (0 if none), one index
 * lookup: a leader that has seen it since its last decision has nothing new
 * to decide on before its next tick (mxqd --power-poll). 0 or negative errno.
 */
int mxq_power_db_newest_pending(struct mx_db *db, uint64_t *ret_job_id);
/* Index of HOSTNAME in the snapshot, or -1. */
long mxq_power_db_snapshot_find(const struct mxq_power_db_snapshot *s, const char *hostname);

/* --------------------------------------------------------------- writes */

/*
 * Leader: move HOSTNAME from FROM to TO (desired state and reason with it)
 * and append the event, in one transaction that only commits while the
 * lease row still carries our epoch and holder and has not expired on the
 * database clock. Returns 1 when written, 0 when fenced off or the row was
 * no longer in FROM (nothing written), negative errno on errors.
 */
int mxq_power_db_transition(struct mx_db *db, const struct mxq_power_lease *lease,
			    const char *hostname, enum mxq_power_node_state from,
			    enum mxq_power_node_state to, const char *reason);
/*
 * Leader: an event for an action on HOSTNAME that leaves it in STATE (hard
 * off, ssh drain), fenced like a transition; only while the row is in
 * STATE. 1 written, 0 fenced off or moved on, negative errno.
 */
int mxq_power_db_note(struct mx_db *db, const struct mxq_power_lease *lease, const char *hostname,
		      enum mxq_power_node_state state, const char *reason);
/*
 * Leader: mark every job still active on HOSTNAME UNKNOWN (the group
 * counters follow through the triggers) with an event naming REASON and
 * the count, fenced; only while the decision still holds: the row in
 * STATE with ADMIN_OFF as the snapshot read it, and no mxqd of the host
 * registered since DECIDED_AT (the snapshot's database time, seconds).
 * *ret_jobs: how many. 1 done (also for none), 0 fenced off or moved on,
 * negative errno.
 */
int mxq_power_db_resolve_jobs(struct mx_db *db, const struct mxq_power_lease *lease,
			      const char *hostname, enum mxq_power_node_state state,
			      bool admin_off, int64_t decided_at, const char *reason,
			      uint64_t *ret_jobs);
/*
 * Leader: store PLAN's explanations of the hosts of snapshot S (fenced, no
 * event), sending an UPDATE only for a host whose text differs from the one
 * S read (a decision that changed nothing sends none; a host S read no text
 * of is always sent), in fenced transactions of a few dozen. Stops when the
 * lease is no longer valid. *ret_sent: how many UPDATEs went out. 0 or
 * negative errno.
 */
int mxq_power_db_explain_plan(struct mx_db *db, const struct mxq_power_lease *lease,
			      const struct mxq_power_db_snapshot *s,
			      const struct mxq_power_plan *plan, size_t *ret_sent);
/* Leader: mark the admin request REQUEST ("ON", "OFF") that the snapshot
 * read as handled (fenced). 1 done, 0 fenced off or the admin changed the
 * request meanwhile (it stays for the next tick), negative errno. */
int mxq_power_db_admin_request_done(struct mx_db *db, const struct mxq_power_lease *lease,
				    const char *hostname, const char *request, bool admin_off);

/*
 * Node: register (create the row if missing; POWERING_ON, OFF and UNKNOWN
 * become ON, a completed boot is counted; DRAINING, POWERING_OFF and FAILED
 * stay for the leader). Records an event when the state changed. Returns 0
 * or negative errno.
 */
int mxq_power_db_node_register(struct mx_db *db, const char *hostname);
/* Node: read own row's state and desired state. -ENOENT if no row. */
int mxq_power_db_node_state(struct mx_db *db, const char *hostname,
			    enum mxq_power_node_state *ret_state, bool *ret_desired_off,
			    char **ret_transport_off);
/*
 * Node: answer a drain. IDLE is only recorded when no job is active on the
 * host (checked in the same statement), so an ack can never hide a job.
 * Returns 1 when IDLE was recorded, 0 when the node is busy (BUSY recorded)
 * or not draining, negative errno on errors.
 */
int mxq_power_db_node_ack_drain(struct mx_db *db, const char *hostname);
/* Node: a job ended now. */
int mxq_power_db_node_job_ended(struct mx_db *db, const char *hostname);

/*
 * Admin: apply an admin action to HOSTNAME: "clear" (FAILED -> UNKNOWN,
 * failures reset), "exclude", "include", "on", "off" (recorded as a request
 * the leader carries out), with the admin's reason and name. -ENOENT for an
 * unknown host, -EALREADY when there was nothing to do.
 */
int mxq_power_db_admin(struct mx_db *db, const char *hostname, const char *action,
		       const char *reason, const char *admin_name);

/* ------------------------------------------------------ energy (node) */

/* What one energy flush adds to a node's row: totals since the last one. */
struct mxq_power_db_energy {
	double current_watts;
	double total_j, jobs_j, idle_j, boot_j, shutdown_j;
	const char *method;        /* mxq_energy_method_to_string() */
	double idle_baseline_watts;
};

/* Node: the node's energy total so far (energy_joules) into *RET_J. 1, 0
 * when HOSTNAME has no row (untouched), negative errno. */
int mxq_power_db_energy_total(struct mx_db *db, const char *hostname, double *ret_j);
/* Node: add E to HOSTNAME's energy columns (energy_updated_at now).
 * Affected rows (0: no row) or negative errno. */
int64_t mxq_power_db_energy_add(struct mx_db *db, const char *hostname,
				const struct mxq_power_db_energy *e);

/* ------------------------------------------------- transports (issue 5) */

/* Per-host transport settings that are not part of the snapshot. */
struct mxq_power_transport_extra {
	char *hostname;
	char *ipmi_workarounds;    /* comma-separated libfreeipmi workaround names */
	char *ssh_address;         /* host[:port]; empty: the hostname */
	char *redfish_system;      /* /redfish/v1/Systems/ID; empty: the first member */
	char *redfish_ca;          /* CA file of the BMC's certificate; empty: system CAs */
	char *redfish_tls;         /* verify | insecure */
	char *redfish_auth;        /* session | basic */
};

/*
 * Read the extra transport settings of every mxq_power row. *ret (n
 * entries) is owned by the caller: mxq_power_db_transport_extras_free().
 * Returns 0 or negative errno.
 */
int mxq_power_db_transport_extras(struct mx_db *db, struct mxq_power_transport_extra **ret,
				  size_t *ret_n);
void mxq_power_db_transport_extras_free(struct mxq_power_transport_extra *x, size_t n);

/*
 * Node: record what the node's mxqd discovered about itself (MAC address of
 * its primary interface, BMC LAN address). NULL or empty values are
 * skipped; a value only fills an EMPTY column, so a setting made with
 * `mxqadmin power set` wins. Returns the number of columns filled (0..2) or
 * negative errno (-ENOENT: no row).
 */
int mxq_power_db_node_discovered(struct mx_db *db, const char *hostname, const char *mac,
				 const char *bmc_address);

/*
 * Admin: set one per-host setting. KEY is one of transport_on, transport_off,
 * bmc, mac, broadcast, rank, class, ipmi_workarounds, ssh, redfish_system,
 * redfish_ca, redfish_tls, redfish_auth; VALUE is checked (transport names,
 * MAC syntax, integer rank, mxq_redfish_setting_check()). An event records the change
 * (actor admin). Returns 0, -ENOENT for an unknown host, -EINVAL for a bad
 * key or value (why in errbuf), other negative errno on database errors.
 */
int mxq_power_db_set(struct mx_db *db, const char *hostname, const char *key, const char *value,
		     const char *admin_name, char *errbuf, size_t errlen);
/* Check KEY=VALUE as mxq_power_db_set() would, without a database: a
 * non-negative index, or -EINVAL with the reason in errbuf. */
int mxq_power_db_set_check(const char *key, const char *value, char *errbuf, size_t errlen);

#endif
