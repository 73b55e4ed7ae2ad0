/*
 * mxq_power_db - lease, snapshot and every write of the power tables (see
 * mxq_power_db.h for the contracts).
 *
 * Fencing: a leader write is one transaction whose first statement is a
 * multi-table UPDATE joined with the leader row and conditional on our epoch,
 * our holder string and an unexpired lease on the database clock. Reading
 * the leader row inside an UPDATE takes a shared lock on it, so a takeover
 * (an UPDATE of that row) waits until our transaction has committed or
 * rolled back: after a takeover commits, no write of the old leader can
 * land. The event row is inserted in the same transaction.
 */
#define _GNU_SOURCE
#include "mxq_power_db.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mx_util.h"
#include "mxq_daemon.h"
#include "mxq_group.h"
#include "mxq_job.h"
#include "mxq_power_policy.h"
#include "mxq_redfish.h"
#include "mxq_status.h"

/* ----------------------------------------------------------------- lease */

int mxq_power_lease_acquire(struct mx_db *db, struct mxq_power_lease *lease, unsigned lease_ms,
			    unsigned margin_ms, const char *config_hash, bool dry_run)
{
	uint64_t t0 = mx_now_boottime_ms(), epoch = 0;
	uint64_t old_epoch = lease->held ? lease->epoch : 0;
	bool was_held = lease->held;
	int64_t n;
	int r;

	lease->held = false;
	n = mx_db_exec(db, "INSERT IGNORE INTO mxq_power_leader (id) VALUES (1)", NULL);
	if (n < 0)
		return (int)n;
	/* MariaDB assigns single-table SET clauses left to right: acquired_at
	 * and epoch look at the holder before it is overwritten. */
	n = mx_db_exec(db,
		"UPDATE mxq_power_leader SET"
		" acquired_at = IF(holder = ?, acquired_at, NOW(3)),"
		" epoch = IF(holder = ?, epoch, epoch + 1),"
		" holder = ?,"
		" lease_expires = TIMESTAMPADD(MICROSECOND, ?, NOW(3)),"
		" renewed_at = NOW(3), config_hash = ?, dry_run = ?"
		" WHERE id = 1 AND (holder = ? OR lease_expires < NOW(3))",
		"sssUsis", lease->holder, lease->holder, lease->holder, (uint64_t)lease_ms * 1000,
		config_hash ? config_hash : "", dry_run ? 1 : 0, lease->holder);
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	r = mx_db_query_u64(db, &epoch, "SELECT epoch FROM mxq_power_leader WHERE id = 1 AND holder = ?",
			    "s", lease->holder);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	lease->epoch = epoch;
	lease->held = true;
	lease->new_term = !was_held || epoch != old_epoch;
	lease->deadline_ms = t0 + lease_ms - (margin_ms < lease_ms ? margin_ms : lease_ms);
	return 1;
}

bool mxq_power_lease_valid(const struct mxq_power_lease *lease)
{
	return lease->held && mx_now_boottime_ms() < lease->deadline_ms;
}

int mxq_power_lease_release(struct mx_db *db, struct mxq_power_lease *lease)
{
	int64_t n;

	if (!lease->held)
		return 0;
	lease->held = false;
	n = mx_db_exec(db,
		"UPDATE mxq_power_leader SET lease_expires = '1970-01-01 00:00:01'"
		" WHERE id = 1 AND holder = ? AND epoch = ?",
		"sU", lease->holder, lease->epoch);
	return n < 0 ? (int)n : 0;
}

/* The fence every leader statement carries (leader row aliased l). */
#define FENCE " l.id = 1 AND l.epoch = ? AND l.holder = ? AND l.lease_expires > NOW(3)"
/* Every fenced write also writes the leader row. On one server the row
 * lock alone orders a takeover after our commit; Galera certifies only
 * written rows, so without this a takeover committed on another database
 * node would not conflict with a write we certify after it. */
#define FENCE_TOUCH " l.fence_writes = l.fence_writes + 1"

int mxq_power_state_save(struct mx_db *db, const struct mxq_power_lease *lease,
			 const struct mxq_power_state *st, const char *summary)
{
	char text[1001];  /* the column's VARCHAR(1000) */
	int64_t n;

	if (mxq_power_state_to_text(st, text, sizeof(text)) < 0)
		return -ENOSPC;
	n = mx_db_exec(db,
		"UPDATE mxq_power_leader l SET l.policy_state = ?, l.tick_summary = LEFT(?, 1000),"
		" l.last_tick_at = NOW(3)," FENCE_TOUCH " WHERE" FENCE,
		"ssUs", text, summary ? summary : "", lease->epoch, lease->holder);
	if (n < 0)
		return (int)n;
	return n > 0 ? 0 : -ESTALE;
}

int mxq_power_lease_published(struct mx_db *db, char *hash, size_t hashlen, char *holder,
			      size_t holderlen)
{
	struct mx_db_result *res = NULL;
	int r;

	r = mx_db_query_first(db, &res,
			      "SELECT config_hash, holder FROM mxq_power_leader WHERE id = 1", NULL);
	if (r <= 0)
		return r < 0 ? r : -ENOENT;
	snprintf(hash, hashlen, "%s", mx_db_str(res, 0) ? mx_db_str(res, 0) : "");
	snprintf(holder, holderlen, "%s", mx_db_str(res, 1) ? mx_db_str(res, 1) : "");
	mx_db_result_free(res);
	return 0;
}

int mxq_power_state_load(struct mx_db *db, struct mxq_power_state *ret)
{
	struct mx_db_result *res = NULL;
	struct mxq_power_state st = { 0 };
	int64_t n;

	n = mx_db_query(db, &res, "SELECT policy_state FROM mxq_power_leader WHERE id = 1", NULL);
	if (n < 0)
		return (int)n;
	/* an empty or unreadable text is a fresh start */
	if (mx_db_next(res))
		(void)mxq_power_state_from_text(mx_db_str(res, 0), &st);
	mx_db_result_free(res);
	*ret = st;
	return 0;
}

/* ------------------------------------------------------------- snapshot */

static void host_done(struct mxq_power_host *h)
{
	free(h->hostname);
	free(h->transport_on);
	free(h->transport_off);
	free(h->bmc_address);
	free(h->mac_address);
	free(h->broadcast_address);
	free(h->reason);
	free(h->explanation);
	free(h->admin_request);
	free(h->admin_request_reason);
	free(h->daemon_closed);
	free(h->node_ack);
}

void mxq_power_db_snapshot_free(struct mxq_power_db_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		host_done(&s->hosts[i]);
		if (s->nodes[i].caps)
			mxq_server_caps_done(&s->caps[i]);
		free((char *)s->nodes[i].node_class);
		free((char *)s->nodes[i].failure_reason);
	}
	for (size_t i = 0; i < s->snap.n_demand; i++) {
		mxq_group_reqs_done(&s->reqs[i]);
		free(s->labels[i]);
	}
	free(s->nodes);
	free(s->hosts);
	free(s->caps);
	free(s->running);
	free(s->demand);
	free(s->reqs);
	free(s->labels);
	free(s->demand_group_ids);
	free(s);
}

long mxq_power_db_snapshot_find(const struct mxq_power_db_snapshot *s, const char *hostname)
{
	for (size_t i = 0; i < s->snap.n_nodes; i++)
		if (strcmp(s->hosts[i].hostname, hostname) == 0)
			return (long)i;
	return -1;
}

/* Columns of the node query, in order. */
enum {
	NC_HOSTNAME, NC_STATE, NC_SINCE, NC_ADMIN_OFF, NC_EXCLUDED, NC_CLASS, NC_RANK,
	NC_FAILURES, NC_FAILURE_REASON, NC_ACK_IDLE, NC_SEEN_AT, NC_LAST_JOB_END,
	NC_CYCLES_TODAY, NC_LAST_BOOT_OK, NC_TRANSPORT_ON, NC_TRANSPORT_OFF, NC_BMC, NC_MAC,
	NC_BCAST, NC_REASON, NC_EXPLANATION, NC_ADMIN_REQ, NC_ADMIN_REQ_REASON, NC_ACK,
	NC_WATTS, NC_WRITER_EPOCH,
	NC_D_ID, NC_D_STATUS, NC_D_PAUSE,
	NC_D_CAPS,              /* MXQ_DAEMON_CAPS_COLUMNS start here */
	NC_D_SLOTS = NC_D_CAPS + 2,
	NC_D_MTIME = NC_D_CAPS + MXQ_DAEMON_CAPS_NCOLS, NC_D_START,
};

static const char *node_sql =
	"SELECT p.hostname, p.state, UNIX_TIMESTAMP(p.state_since), p.admin_off, p.excluded,"
	" p.node_class, p.efficiency_rank, p.failure_count, p.failure_reason,"
	" (p.node_ack = 'IDLE' AND p.node_ack_at >= p.state_since),"
	/* registration time: the node's own record, or for an mxqd that does not
	 * take part (--no-power-node, old versions) the start of its daemon row
	 * (whole seconds, so counted as late in its second as possible) */
	" UNIX_TIMESTAMP(GREATEST(COALESCE(p.node_seen_at, '1970-01-01 00:00:01'),"
	"   COALESCE(TIMESTAMPADD(MICROSECOND, 999000, d.daemon_start), '1970-01-01 00:00:01'))),"
	" UNIX_TIMESTAMP(p.last_job_end),"
	" IF(p.cycles_day = CURDATE(), p.cycles_today, 0), UNIX_TIMESTAMP(p.last_boot_ok_at),"
	" p.transport_on, p.transport_off, p.bmc_address, p.mac_address, p.broadcast_address,"
	" p.reason, p.explanation, p.admin_request, p.admin_request_reason, p.node_ack,"
	" p.current_watts, p.writer_epoch,"
	" d.daemon_id, d.status, d.daemon_pause_reason, " MXQ_DAEMON_CAPS_COLUMNS ","
	" UNIX_TIMESTAMP(d.mtime), UNIX_TIMESTAMP(d.daemon_start)"
	" FROM mxq_power p" MXQ_DAEMON_NEWEST_JOIN("p.hostname")
	" ORDER BY p.hostname";

static char *dup_col(struct mx_db_result *res, unsigned col)
{
	return mx_db_strdup(res, col);
}

static int read_nodes(struct mx_db *db, struct mxq_power_db_snapshot *s, int64_t hb_timeout)
{
	struct mx_db_result *res = NULL;
	int64_t rows;
	size_t i = 0;

	rows = mx_db_query(db, &res, node_sql, NULL);
	if (rows < 0)
		return (int)rows;
	s->nodes = calloc((size_t)rows + 1, sizeof(*s->nodes));
	s->hosts = calloc((size_t)rows + 1, sizeof(*s->hosts));
	s->caps = calloc((size_t)rows + 1, sizeof(*s->caps));
	if (!s->nodes || !s->hosts || !s->caps) {
		mx_db_result_free(res);
		return -ENOMEM;
	}
	while (mx_db_next(res)) {
		struct mxq_power_node *n = &s->nodes[i];
		struct mxq_power_host *h = &s->hosts[i];
		int state = mxq_power_state_from_string(mx_db_str(res, NC_STATE) ? mx_db_str(res, NC_STATE) : "");
		bool alive;

		h->hostname = dup_col(res, NC_HOSTNAME);
		h->transport_on = dup_col(res, NC_TRANSPORT_ON);
		h->transport_off = dup_col(res, NC_TRANSPORT_OFF);
		h->bmc_address = dup_col(res, NC_BMC);
		h->mac_address = dup_col(res, NC_MAC);
		h->broadcast_address = dup_col(res, NC_BCAST);
		h->reason = dup_col(res, NC_REASON);
		h->explanation = dup_col(res, NC_EXPLANATION);
		h->admin_request = dup_col(res, NC_ADMIN_REQ);
		h->admin_request_reason = dup_col(res, NC_ADMIN_REQ_REASON);
		h->node_ack = dup_col(res, NC_ACK);
		h->current_watts = mx_db_double(res, NC_WATTS);
		n->watts = h->current_watts;   /* for max_power_watts */
		h->writer_epoch = mx_db_u64(res, NC_WRITER_EPOCH);
		n->node_class = dup_col(res, NC_CLASS);
		n->failure_reason = dup_col(res, NC_FAILURE_REASON);
		i++;
		s->snap.n_nodes = i; /* from here on, freeing covers this entry */
		if (!h->hostname || !h->transport_on || !h->transport_off || !h->bmc_address ||
		    !h->mac_address || !h->broadcast_address || !h->reason || !h->explanation ||
		    !h->admin_request || !h->admin_request_reason || !h->node_ack ||
		    !n->node_class || !n->failure_reason) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
		n->hostname = h->hostname;
		n->state = state < 0 ? MXQ_POWER_UNKNOWN : (enum mxq_power_node_state)state;
		n->state_since = (int64_t)floor(mx_db_double(res, NC_SINCE));
		n->admin_off = mx_db_u64(res, NC_ADMIN_OFF) != 0;
		n->excluded = mx_db_u64(res, NC_EXCLUDED) != 0;
		n->efficiency_rank = (int32_t)mx_db_i64(res, NC_RANK);
		n->failure_count = (uint32_t)mx_db_u64(res, NC_FAILURES);
		n->drain_acked = mx_db_u64(res, NC_ACK_IDLE) != 0;
		n->last_job_end = (int64_t)mx_db_double(res, NC_LAST_JOB_END);
		n->cycles_today = (uint32_t)mx_db_u64(res, NC_CYCLES_TODAY);
		n->last_boot_ok_at = (int64_t)mx_db_double(res, NC_LAST_BOOT_OK);

		h->has_daemon = !mx_db_is_null(res, NC_D_ID);
		if (h->has_daemon) {
			char err[256];
			int r;

			const char *pause = mx_db_str(res, NC_D_PAUSE);

			h->daemon_status = (int)mx_db_i64(res, NC_D_STATUS);
			if (h->daemon_status == MXQ_DAEMON_STATUS_TERMINATING)
				h->daemon_closed = strdup("its mxqd is stopping");
			else if (pause && pause[0] && asprintf(&h->daemon_closed, "its mxqd is paused: %s",
							  pause) < 0)
				h->daemon_closed = NULL;
			if ((h->daemon_status == MXQ_DAEMON_STATUS_TERMINATING || (pause && pause[0])) &&
			    !h->daemon_closed) {
				mx_db_result_free(res);
				return -ENOMEM;
			}
			h->daemon_mtime = (int64_t)mx_db_double(res, NC_D_MTIME);
			h->slots_total = (uint32_t)mx_db_u64(res, NC_D_SLOTS);
			r = mxq_daemon_caps_from_row(&s->caps[i - 1], h->hostname, res, NC_D_CAPS,
						     err, sizeof(err));
			if (r == -ENOMEM) {
				mx_db_result_free(res);
				return r;
			}
			n->caps = &s->caps[i - 1];
		}
		alive = h->has_daemon && h->daemon_status != MXQ_DAEMON_STATUS_EXITED &&
			h->daemon_status != MXQ_DAEMON_STATUS_CRASHED &&
			s->now - h->daemon_mtime <= hb_timeout;
		/* up: a live mxqd; a boot, or a node recorded OFF coming back,
		 * counts only when mxqd registered after the state began (an mxqd
		 * that never went away did not boot, and a dying one whose last
		 * heartbeat is still young must not flip an OFF row back to ON) */
		n->seen_up = alive && ((n->state != MXQ_POWER_POWERING_ON && n->state != MXQ_POWER_OFF) ||
				       (!mx_db_is_null(res, NC_SEEN_AT) &&
					mx_db_double(res, NC_SEEN_AT) >= mx_db_double(res, NC_SINCE)));
		/* down: no live mxqd; the leader may refine this with the transport */
		n->seen_down = !alive;
		n->daemon_gone = !alive;
		n->closed = alive ? h->daemon_closed : NULL;
		n->admin_request = h->admin_request[0] != '\0';
		n->admin_wake = strcmp(h->admin_request, "ON") == 0;
		n->admin_reason = h->admin_request_reason;
		n->drain_busy_ack = h->node_ack[0] != '\0' && !n->drain_acked;
	}
	mx_db_result_free(res);
	return 0;
}

static int read_running(struct mx_db *db, struct mxq_power_db_snapshot *s)
{
	struct mx_db_result *res = NULL;
	int64_t rows;
	size_t k = 0;

	rows = mx_db_query(db, &res,
		"SELECT j.host_hostname, UNIX_TIMESTAMP(j.date_start) + g.job_time * 60, j.host_slots,"
		" g.job_memory, g.job_gpu, " MXQ_GROUP_TMPDIR_MIB_SQL("g.job_tmpdir_size") ","
		" UNIX_TIMESTAMP(j.date_start)"
		" FROM mxq_job j JOIN mxq_group g ON g.group_id = j.group_id"
		" WHERE j.job_status IN (" MXQ_JOB_ACTIVE_STATUSES ") ORDER BY j.host_hostname", NULL);
	if (rows < 0)
		return (int)rows;
	s->running = calloc((size_t)rows + 1, sizeof(*s->running));
	if (!s->running) {
		mx_db_result_free(res);
		return -ENOMEM;
	}
	while (mx_db_next(res)) {
		long idx = mxq_power_db_snapshot_find(s, mx_db_str(res, 0) ? mx_db_str(res, 0) : "");
		struct mxq_power_running_job *rj = &s->running[k];
		struct mxq_power_node *n;

		if (idx < 0)
			continue; /* not a managed host */
		n = &s->nodes[idx];
		rj->expected_end = (int64_t)mx_db_double(res, 1);
		rj->slots = (uint32_t)mx_db_u64(res, 2);
		rj->memory_mib = mx_db_u64(res, 3);
		rj->gpus = (uint32_t)mx_db_u64(res, 4);
		rj->tmpdir_mib = mx_db_u64(res, 5);
		rj->started_at = (int64_t)mx_db_double(res, 6);
		if (!n->running)
			n->running = rj;  /* rows are ordered by host: contiguous */
		n->n_running++;
		n->jobs_running++;
		n->used_slots += rj->slots;
		n->used_memory_mib += rj->memory_mib;
		n->used_gpus += rj->gpus;
		n->used_tmpdir_mib += rj->tmpdir_mib;
		k++;
	}
	s->n_running = k;
	mx_db_result_free(res);
	/* resources never exceed what the node offers (the policy relies on it) */
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		struct mxq_power_node *n = &s->nodes[i];
		if (!n->caps)
			continue;
		if (n->used_slots > n->caps->slots)
			n->used_slots = n->caps->slots;
		if (n->used_memory_mib > n->caps->memory_mib)
			n->used_memory_mib = n->caps->memory_mib;
		if (n->used_gpus > n->caps->gpus)
			n->used_gpus = n->caps->gpus;
		if (n->used_tmpdir_mib > n->caps->tmpdir_total_mib)
			n->used_tmpdir_mib = n->caps->tmpdir_total_mib;
	}
	return 0;
}

static int read_demand(struct mx_db *db, struct mxq_power_db_snapshot *s)
{
	struct mx_db_result *res = NULL;
	int64_t rows;
	size_t i = 0;

	/* One row per requirement signature; the group counters are kept by
	 * triggers, so this never reads job rows. */
	rows = mx_db_query(db, &res,
		"SELECT " MXQ_GROUP_REQS_COLUMNS ", job_max_per_node,"
		" SUM(group_jobs_inq), MIN(group_id), COUNT(*), MIN(user_name), MAX(group_priority)"
		" FROM mxq_group WHERE group_status = ? AND group_jobs_inq > 0"
		" GROUP BY " MXQ_GROUP_REQS_COLUMNS ", job_max_per_node"
		" ORDER BY MAX(group_priority) DESC, MIN(group_id)",
		"i", MXQ_GROUP_STATUS_OK);
	if (rows < 0)
		return (int)rows;
	s->demand = calloc((size_t)rows + 1, sizeof(*s->demand));
	s->reqs = calloc((size_t)rows + 1, sizeof(*s->reqs));
	s->labels = calloc((size_t)rows + 1, sizeof(*s->labels));
	s->demand_group_ids = calloc((size_t)rows + 1, sizeof(*s->demand_group_ids));
	if (!s->demand || !s->reqs || !s->labels || !s->demand_group_ids) {
		mx_db_result_free(res);
		return -ENOMEM;
	}
	while (mx_db_next(res)) {
		uint64_t groups = mx_db_u64(res, 12);
		int r = mxq_group_reqs_from_row(&s->reqs[i], res, 0);
		if (r < 0) {
			mx_db_result_free(res);
			return r;
		}
		s->snap.n_demand = ++i;
		s->demand_group_ids[i - 1] = mx_db_u64(res, 11);
		if (groups > 1)
			s->labels[i - 1] = mx_asprintf("group %" PRIu64 " and %" PRIu64 " more alike",
						       mx_db_u64(res, 11), groups - 1);
		else
			s->labels[i - 1] = mx_asprintf("group %" PRIu64 " (%s)", mx_db_u64(res, 11),
						       mx_db_str(res, 13) ? mx_db_str(res, 13) : "?");
		if (!s->labels[i - 1]) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
		s->demand[i - 1].reqs = &s->reqs[i - 1];
		s->demand[i - 1].label = s->labels[i - 1];
		s->demand[i - 1].jobs_pending = mx_db_u64(res, 10);
		s->demand[i - 1].max_per_node = (uint32_t)mx_db_u64(res, 9);
		s->total_jobs_pending += mx_db_u64(res, 10);
	}
	mx_db_result_free(res);
	return 0;
}

int mxq_power_db_snapshot_read(struct mx_db *db, int64_t heartbeat_timeout_s,
			       struct mxq_power_db_snapshot **ret)
{
	struct mxq_power_db_snapshot *s = calloc(1, sizeof(*s));
	struct mx_db_result *res = NULL;
	int64_t n;
	int r;

	if (!s)
		return -ENOMEM;
	n = mx_db_query(db, &res, "SELECT UNIX_TIMESTAMP(NOW(3))", NULL);
	if (n < 0) {
		free(s);
		return (int)n;
	}
	mx_db_next(res);
	s->now = (int64_t)floor(mx_db_double(res, 0));
	mx_db_result_free(res);

	r = read_nodes(db, s, heartbeat_timeout_s);
	if (r >= 0)
		r = read_running(db, s);
	if (r >= 0)
		r = read_demand(db, s);
	if (r < 0) {
		mxq_power_db_snapshot_free(s);
		return r;
	}
	s->snap.nodes = s->nodes;
	s->snap.demand = s->demand;
	*ret = s;
	return 0;
}

int mxq_power_db_newest_pending(struct mx_db *db, uint64_t *ret_job_id)
{
	uint64_t id = 0;
	int r = mx_db_query_u64(db, &id, "SELECT COALESCE(MAX(job_id), 0) FROM mxq_job"
				" WHERE job_status = ?", "i", MXQ_JOB_STATUS_INQ);

	if (r < 0)
		return r;
	*ret_job_id = id;
	return 0;
}

/* --------------------------------------------------------------- writes */

static int insert_event(struct mx_db *db, const char *hostname, const char *from, const char *to,
			const char *reason, uint64_t epoch, const char *actor)
{
	int64_t n = mx_db_exec(db,
		"INSERT INTO mxq_power_event (hostname, from_state, to_state, reason, epoch, actor)"
		" VALUES (?, ?, ?, LEFT(?, 1000), ?, ?)",
		"ssssUs", hostname, from, to, reason ? reason : "", epoch, actor);
	return n < 0 ? (int)n : 0;
}

/* The fence of every leader transaction: write the leader row first and
 * hold it until commit: a takeover, which updates it, waits for this
 * transaction (one server) or conflicts with it at certification
 * (Galera), so nothing of ours lands after it. 1 inside the fence, 0
 * fenced off (also past the local deadline: retries must not outlast the
 * lease), negative errno. */
static int enter_fence(struct mx_db *db, const struct mxq_power_lease *lease)
{
	int64_t n;

	if (!mxq_power_lease_valid(lease))
		return 0;
	n = mx_db_exec(db, "UPDATE mxq_power_leader l SET" FENCE_TOUCH " WHERE" FENCE,
		       "Us", lease->epoch, lease->holder);
	return n < 0 ? (int)n : n > 0;
}

struct transition_tx {
	const struct mxq_power_lease *lease;
	const char *hostname, *from_s, *to_s, *desired, *reason;
	enum mxq_power_node_state from, to;
};

/* The body of one fenced transition (mx_db_transaction() runs it again
 * after a deadlock or a Galera certification failure, when the fence and
 * the state are read afresh). 1 when done, 0 when fenced off or the node
 * has moved on. */
static int transition_body(struct mx_db *db, void *ctx)
{
	const struct transition_tx *t = ctx;
	const struct mxq_power_lease *lease = t->lease;
	const char *reason = t->reason ? t->reason : "";
	int64_t n;

	n = enter_fence(db, lease);
	if (n <= 0)
		return (int)n; /* 0: fenced off */
	n = mx_db_exec(db,
		"UPDATE mxq_power p JOIN mxq_power_leader l SET p.state = ?, p.state_since = NOW(3),"
		" p.desired_state = ?, p.reason = LEFT(?, 1000), p.writer_epoch = l.epoch"
		" WHERE p.hostname = ? AND p.state = ? AND" FENCE,
		"sssssUs", t->to_s, t->desired, reason, t->hostname, t->from_s, lease->epoch,
		lease->holder);
	if (n <= 0)
		return (int)n;
	/* details that depend on the kind of transition, inside the fence */
	if (t->to == MXQ_POWER_DRAINING)
		n = mx_db_exec(db, "UPDATE mxq_power SET node_ack = '', node_ack_at = NULL WHERE hostname = ?",
			       "s", t->hostname);
	else if (t->to == MXQ_POWER_POWERING_ON && t->from != t->to)
		n = mx_db_exec(db,
			"UPDATE mxq_power SET cycles_today = IF(cycles_day = CURDATE(), cycles_today + 1, 1),"
			" cycles_day = CURDATE() WHERE hostname = ?", "s", t->hostname);
	else if (t->to == MXQ_POWER_FAILED)
		n = mx_db_exec(db,
			"UPDATE mxq_power SET failure_count = failure_count + 1, failure_reason = LEFT(?, 1000)"
			" WHERE hostname = ?", "ss", reason, t->hostname);
	else if (t->to == MXQ_POWER_ON && t->from == MXQ_POWER_POWERING_ON)
		n = mx_db_exec(db,
			"UPDATE mxq_power SET boot_count = boot_count + 1, last_boot_ok_at = NOW(3),"
			" failure_count = 0 WHERE hostname = ?", "s", t->hostname);
	else if (t->to == MXQ_POWER_OFF && t->from == MXQ_POWER_POWERING_OFF)
		/* a transition that worked ends the FAILED backoff streak */
		n = mx_db_exec(db, "UPDATE mxq_power SET failure_count = 0 WHERE hostname = ?",
			       "s", t->hostname);
	if (n >= 0)
		n = insert_event(db, t->hostname, t->from_s, t->to_s, reason, lease->epoch, "leader");
	return n < 0 ? (int)n : 1;
}

struct note_tx {
	const struct mxq_power_lease *lease;
	const char *hostname, *state_s, *reason;
	bool admin_off;          /* resolve_jobs: as decided */
	int64_t decided_at;      /* resolve_jobs: the snapshot's time */
	uint64_t jobs;           /* resolve_jobs: how many */
};

static int note_body(struct mx_db *db, void *ctx)
{
	struct note_tx *t = ctx;
	uint64_t one;
	int r = enter_fence(db, t->lease);

	if (r <= 0)
		return r;
	r = mx_db_query_u64(db, &one, "SELECT 1 FROM mxq_power WHERE hostname = ? AND state = ?"
			    " LOCK IN SHARE MODE", "ss", t->hostname, t->state_s);
	if (r == -ENOENT)
		return 0;  /* moved on meanwhile */
	if (r >= 0)
		r = insert_event(db, t->hostname, t->state_s, t->state_s, t->reason, t->lease->epoch,
				 "leader");
	return r < 0 ? r : 1;
}

int mxq_power_db_note(struct mx_db *db, const struct mxq_power_lease *lease, const char *hostname,
		      enum mxq_power_node_state state, const char *reason)
{
	struct note_tx t = {
		.lease = lease, .hostname = hostname, .state_s = mxq_power_state_to_string(state),
		.reason = reason ? reason : "",
	};

	if (!t.state_s)
		return -EINVAL;
	if (!mxq_power_lease_valid(lease))
		return 0;
	return mx_db_transaction(db, note_body, &t);
}

static int resolve_body(struct mx_db *db, void *ctx)
{
	struct note_tx *t = ctx;
	char text[1200];
	uint64_t one;
	int64_t n;
	int r = enter_fence(db, t->lease);

	t->jobs = 0;
	if (r <= 0)
		return r;
	/* the decision was read from an older snapshot (a tick held up, a
	 * leader stalled within its lease): an admin's power on or an mxqd
	 * that came back since means the jobs can still be recovered */
	r = mx_db_query_u64(db, &one, "SELECT 1 FROM mxq_power p WHERE p.hostname = ? AND p.state = ?"
			    " AND p.admin_off = ? AND NOT EXISTS (SELECT 1 FROM mxq_daemon d"
			    "   WHERE d.hostname = p.hostname AND d.daemon_start >= FROM_UNIXTIME(?))"
			    " LOCK IN SHARE MODE", "ssil", t->hostname, t->state_s, t->admin_off ? 1 : 0,
			    t->decided_at);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	/* the triggers move the group counters from running to unknown */
	n = mx_db_exec(db,
		"UPDATE mxq_job SET job_status = ?, date_end = NOW()"
		" WHERE host_hostname = ? AND job_status IN (" MXQ_JOB_ACTIVE_STATUSES ")",
		"is", MXQ_JOB_STATUS_UNKNOWN, t->hostname);
	if (n <= 0)
		return n < 0 ? (int)n : 1;
	snprintf(text, sizeof(text), "%s (%" PRId64 " job%s)", t->reason, n, n == 1 ? "" : "s");
	r = insert_event(db, t->hostname, t->state_s, t->state_s, text, t->lease->epoch, "leader");
	if (r < 0)
		return r;
	t->jobs = (uint64_t)n;
	return 1;
}

int mxq_power_db_resolve_jobs(struct mx_db *db, const struct mxq_power_lease *lease,
			      const char *hostname, enum mxq_power_node_state state,
			      bool admin_off, int64_t decided_at, const char *reason,
			      uint64_t *ret_jobs)
{
	struct note_tx t = {
		.lease = lease, .hostname = hostname, .state_s = mxq_power_state_to_string(state),
		.reason = reason ? reason : "", .admin_off = admin_off, .decided_at = decided_at,
	};
	int r;

	*ret_jobs = 0;
	if (!t.state_s)
		return -EINVAL;
	if (!mxq_power_lease_valid(lease))
		return 0;
	r = mx_db_transaction(db, resolve_body, &t);
	if (r > 0)
		*ret_jobs = t.jobs;
	return r;
}

int mxq_power_db_transition(struct mx_db *db, const struct mxq_power_lease *lease,
			    const char *hostname, enum mxq_power_node_state from,
			    enum mxq_power_node_state to, const char *reason)
{
	struct transition_tx t = {
		.lease = lease, .hostname = hostname, .reason = reason, .from = from, .to = to,
		.from_s = mxq_power_state_to_string(from), .to_s = mxq_power_state_to_string(to),
		.desired = mxq_power_state_desired_off(from, to) ? "OFF" : "ON",
	};

	if (!t.from_s || !t.to_s)
		return -EINVAL;
	if (!mxq_power_lease_valid(lease))
		return 0;
	return mx_db_transaction(db, transition_body, &t);
}

/* Host I's new text when it differs from the one the snapshot read (or
 * the snapshot read none), NULL when it is stored already. */
static const char *explain_text_changed(const struct mxq_power_db_snapshot *s,
					const struct mxq_power_plan *plan, size_t i)
{
	const char *text = plan->explanations[i].text ? plan->explanations[i].text : "";
	const char *had = s->hosts[i].explanation;

	return had && strcmp(had, text) == 0 ? NULL : text;  /* over 2000: sent */
}

/* A run of explanations in one fenced transaction: the leader row is
 * entered once and held to the commit, then one UPDATE per changed text
 * (no commit, no fence join each). Short runs: on Galera a transaction
 * whose rows a node writes meanwhile (its energy counters, once a minute)
 * fails certification and runs again, and the longer it is open the more
 * often that happens; 64 already shares one commit among 64 UPDATEs. */
#define EXPLAIN_PER_TX 64
struct explain_tx {
	const struct mxq_power_lease *lease;
	const struct mxq_power_db_snapshot *s;
	const struct mxq_power_plan *plan;
	size_t from, to, sent;
};

static int explain_body(struct mx_db *db, void *ctx)
{
	struct explain_tx *t = ctx;
	int r = enter_fence(db, t->lease);

	t->sent = 0;
	if (r <= 0)
		return r;
	for (size_t i = t->from; i < t->to; i++) {
		const char *text = explain_text_changed(t->s, t->plan, i);
		int64_t n;

		if (!text)
			continue;
		/* BINARY: a change in case or trailing blanks is a change too */
		n = mx_db_exec(db, "UPDATE mxq_power SET explanation = LEFT(?, 2000)"
			       " WHERE hostname = ? AND BINARY explanation <> BINARY LEFT(?, 2000)",
			       "sss", text, t->s->hosts[i].hostname, text);
		if (n < 0)
			return (int)n;
		t->sent++;
	}
	return 1;
}

int mxq_power_db_explain_plan(struct mx_db *db, const struct mxq_power_lease *lease,
			      const struct mxq_power_db_snapshot *s,
			      const struct mxq_power_plan *plan, size_t *ret_sent)
{
	size_t n = plan->n_explanations < s->snap.n_nodes ? plan->n_explanations : s->snap.n_nodes;
	size_t sent = 0;
	int r = 0;

	for (size_t i = 0; i < n && r >= 0;) {
		struct explain_tx t = { .lease = lease, .s = s, .plan = plan, .from = i };
		size_t k = 0;

		/* the next EXPLAIN_PER_TX changed texts, unchanged ones between */
		for (t.to = i; t.to < n && k < EXPLAIN_PER_TX; t.to++)
			k += explain_text_changed(s, plan, t.to) != NULL;
		i = t.to;
		if (!k)
			break;
		if (!mxq_power_lease_valid(lease))
			break;
		r = mx_db_transaction(db, explain_body, &t);
		if (r == 0)
			break;  /* fenced off: another leader */
		sent += t.sent;
	}
	if (ret_sent)
		*ret_sent = sent;
	return r < 0 ? r : 0;
}

int mxq_power_db_admin_request_done(struct mx_db *db, const struct mxq_power_lease *lease,
				    const char *hostname, const char *request, bool admin_off)
{
	int64_t n;

	if (!mxq_power_lease_valid(lease))
		return 0;
	/* only the request decided on: an admin's newer one (and the
	 * admin_off it set) must not be undone by an older snapshot */
	n = mx_db_exec(db,
		"UPDATE mxq_power p JOIN mxq_power_leader l SET p.admin_request = '',"
		" p.admin_off = ?," FENCE_TOUCH " WHERE p.hostname = ? AND p.admin_request = ? AND" FENCE,
		"issUs", admin_off ? 1 : 0, hostname, request, lease->epoch, lease->holder);
	return n < 0 ? (int)n : (n > 0);
}

/* ------------------------------------------------------------- node side */

/* Start a transaction and lock HOSTNAME's row, its state into STATE.
 * 0, or -ENOENT for an unknown host / negative errno, rolled back then. */
static int begin_locked(struct mx_db *db, const char *hostname, char *state, size_t len)
{
	struct mx_db_result *res = NULL;
	int64_t n;
	int r;

	r = mx_db_begin(db);
	if (r < 0)
		return r;
	n = mx_db_query(db, &res, "SELECT state FROM mxq_power WHERE hostname = ? FOR UPDATE",
			"s", hostname);
	if (n <= 0) {
		mx_db_result_free(res);
		mx_db_rollback(db);
		return n < 0 ? (int)n : -ENOENT;
	}
	mx_db_next(res);
	snprintf(state, len, "%s", mx_db_str(res, 0) ? mx_db_str(res, 0) : "");
	mx_db_result_free(res);
	return 0;
}

int mxq_power_db_node_register(struct mx_db *db, const char *hostname)
{
	char from[32];
	bool booted;
	int64_t n;
	int r;

	n = mx_db_exec(db,
		"INSERT IGNORE INTO mxq_power (hostname, state, state_since, desired_state, reason, node_seen_at)"
		" VALUES (?, 'ON', NOW(3), 'ON', 'registered by its mxqd', NOW(3))", "s", hostname);
	if (n < 0)
		return (int)n;
	if (n == 1)
		return insert_event(db, hostname, "", "ON", "first registration of its mxqd", 0, "node");

	r = begin_locked(db, hostname, from, sizeof(from));
	if (r < 0)
		return r;
	booted = strcmp(from, "POWERING_ON") == 0;
	/* not POWERING_OFF: the leader's power-off may still be on its way
	 * (a slow BMC, a script), and ON would open the claim to jobs it
	 * would then cut; the leader settles that row (OFF once the call
	 * took, else FAILED at the shutdown deadline and retried) */
	if (booted || strcmp(from, "OFF") == 0 || strcmp(from, "UNKNOWN") == 0) {
		const char *reason = booted ? "boot completed: mxqd registered" :
				     "mxqd registered (node is up)";
		n = mx_db_exec(db,
			"UPDATE mxq_power SET state = 'ON', state_since = NOW(3), desired_state = 'ON',"
			" reason = ?, node_seen_at = NOW(3),"
			" boot_count = boot_count + ?, last_boot_ok_at = IF(?, NOW(3), last_boot_ok_at),"
			" failure_count = IF(?, 0, failure_count)"  /* a boot worked: no backoff */
			" WHERE hostname = ?",
			"siiis", reason, booted ? 1 : 0, booted ? 1 : 0, booted ? 1 : 0, hostname);
		if (n >= 0)
			n = insert_event(db, hostname, from, "ON", reason, 0, "node");
	} else {
		n = mx_db_exec(db, "UPDATE mxq_power SET node_seen_at = NOW(3) WHERE hostname = ?",
			       "s", hostname);
	}
	if (n < 0) {
		mx_db_rollback(db);
		return (int)n;
	}
	return mx_db_commit(db);
}

int mxq_power_db_node_state(struct mx_db *db, const char *hostname,
			    enum mxq_power_node_state *ret_state, bool *ret_desired_off,
			    char **ret_transport_off)
{
	struct mx_db_result *res = NULL;
	int64_t n;
	int st;

	n = mx_db_query(db, &res,
		"SELECT state, desired_state, transport_off FROM mxq_power WHERE hostname = ?",
		"s", hostname);
	if (n <= 0) {
		mx_db_result_free(res);
		return n < 0 ? (int)n : -ENOENT;
	}
	mx_db_next(res);
	st = mxq_power_state_from_string(mx_db_str(res, 0) ? mx_db_str(res, 0) : "");
	if (ret_transport_off) {
		*ret_transport_off = mx_db_strdup(res, 2);
		if (!*ret_transport_off) {
			mx_db_result_free(res);
			return -ENOMEM;
		}
	}
	*ret_state = st < 0 ? MXQ_POWER_UNKNOWN : (enum mxq_power_node_state)st;
	*ret_desired_off = mx_db_str(res, 1) && strcmp(mx_db_str(res, 1), "OFF") == 0;
	mx_db_result_free(res);
	return 0;
}

int mxq_power_db_node_ack_drain(struct mx_db *db, const char *hostname)
{
	int64_t n;

	n = mx_db_exec(db,
		"UPDATE mxq_power SET node_ack = 'IDLE', node_ack_at = NOW(3)"
		" WHERE hostname = ? AND state = 'DRAINING' AND node_ack <> 'IDLE'"
		" AND NOT EXISTS (SELECT 1 FROM mxq_job WHERE host_hostname = ?"
		"   AND job_status IN (" MXQ_JOB_ACTIVE_STATUSES "))",
		"ss", hostname, hostname);
	if (n != 0)
		return n < 0 ? (int)n : 1;
	n = mx_db_exec(db,
		"UPDATE mxq_power SET node_ack = 'BUSY', node_ack_at = NOW(3)"
		" WHERE hostname = ? AND state = 'DRAINING' AND node_ack = ''"
		" AND EXISTS (SELECT 1 FROM mxq_job WHERE host_hostname = ?"
		"   AND job_status IN (" MXQ_JOB_ACTIVE_STATUSES "))",
		"ss", hostname, hostname);
	return n < 0 ? (int)n : 0;
}

int mxq_power_db_node_job_ended(struct mx_db *db, const char *hostname)
{
	int64_t n = mx_db_exec(db, "UPDATE mxq_power SET last_job_end = NOW(3) WHERE hostname = ?",
			       "s", hostname);
	return n < 0 ? (int)n : 0;
}

/* ------------------------------------------------------------ admin side */

int mxq_power_db_admin(struct mx_db *db, const char *hostname, const char *action,
		       const char *reason, const char *admin_name)
{
	char state[32], text[1200];
	int64_t n;
	int r;

	r = begin_locked(db, hostname, state, sizeof(state));
	if (r < 0)
		return r;
	snprintf(text, sizeof(text), "%s by %s%s%s", action, admin_name ? admin_name : "admin",
		 reason && reason[0] ? ": " : "", reason ? reason : "");

	if (strcmp(action, "clear") == 0) {
		n = mx_db_exec(db,
			"UPDATE mxq_power SET state = 'UNKNOWN', state_since = NOW(3), failure_count = 0,"
			" failure_reason = '', reason = LEFT(?, 1000) WHERE hostname = ? AND state = 'FAILED'",
			"ss", text, hostname);
		if (n > 0 && (r = insert_event(db, hostname, state, "UNKNOWN", text, 0, "admin")) < 0)
			n = r;
	} else if (strcmp(action, "exclude") == 0 || strcmp(action, "include") == 0) {
		bool exclude = action[0] == 'e';
		n = mx_db_exec(db, "UPDATE mxq_power SET excluded = ?, reason = LEFT(?, 1000)"
			       " WHERE hostname = ? AND excluded <> ?",
			       "issi", exclude ? 1 : 0, text, hostname, exclude ? 1 : 0);
		if (n > 0 && (r = insert_event(db, hostname, state, state, text, 0, "admin")) < 0)
			n = r;
	} else if (strcmp(action, "on") == 0 || strcmp(action, "off") == 0) {
		bool off = strcmp(action, "off") == 0;
		if (!off && strcmp(state, "FAILED") == 0) {
			mx_db_rollback(db);
			return -EBUSY;
		}
		/* admin_off is set at once so that no wake can race the request;
		 * the leader carries out the power action itself */
		n = mx_db_exec(db,
			"UPDATE mxq_power SET admin_request = ?, admin_request_reason = LEFT(?, 1000),"
			" admin_off = ?, reason = LEFT(?, 1000) WHERE hostname = ?",
			"ssiss", off ? "OFF" : "ON", text, off ? 1 : 0, text, hostname);
		if (n > 0 && (r = insert_event(db, hostname, state, state, text, 0, "admin")) < 0)
			n = r;
	} else {
		mx_db_rollback(db);
		return -EINVAL;
	}
	if (n < 0) {
		mx_db_rollback(db);
		return (int)n;
	}
	if (n == 0) {
		mx_db_rollback(db);
		return -EALREADY;
	}
	return mx_db_commit(db);
}

/* ------------------------------------------------------ energy (node) */

int mxq_power_db_energy_total(struct mx_db *db, const char *hostname, double *ret_j)
{
	struct mx_db_result *res = NULL;
	int r;

	r = mx_db_query_first(db, &res, "SELECT energy_joules FROM mxq_power WHERE hostname = ?",
			      "s", hostname);
	if (r <= 0)
		return r;
	*ret_j = mx_db_double(res, 0);
	mx_db_result_free(res);
	return 1;
}

int64_t mxq_power_db_energy_add(struct mx_db *db, const char *hostname,
				const struct mxq_power_db_energy *e)
{
	return mx_db_exec(db,
		"UPDATE mxq_power SET current_watts = ?, energy_joules = energy_joules + ?,"
		" energy_jobs_joules = energy_jobs_joules + ?, energy_idle_joules = energy_idle_joules + ?,"
		" energy_boot_joules = energy_boot_joules + ?,"
		" energy_shutdown_joules = energy_shutdown_joules + ?, energy_method = ?,"
		" idle_baseline_watts = ?, energy_updated_at = NOW(3) WHERE hostname = ?",
		"ddddddsds", e->current_watts, e->total_j, e->jobs_j, e->idle_j, e->boot_j,
		e->shutdown_j, e->method, e->idle_baseline_watts, hostname);
}

/* ------------------------------------------------- transports (issue 5) */

void mxq_power_db_transport_extras_free(struct mxq_power_transport_extra *x, size_t n)
{
	if (!x)
		return;
	for (size_t i = 0; i < n; i++) {
		free(x[i].hostname);
		free(x[i].ipmi_workarounds);
		free(x[i].ssh_address);
		free(x[i].redfish_system);
		free(x[i].redfish_ca);
		free(x[i].redfish_tls);
		free(x[i].redfish_auth);
	}
	free(x);
}

int mxq_power_db_transport_extras(struct mx_db *db, struct mxq_power_transport_extra **ret,
				  size_t *ret_n)
{
	struct mxq_power_transport_extra *x;
	struct mx_db_result *res = NULL;
	int64_t rows;
	size_t i = 0;

	rows = mx_db_query(db, &res, "SELECT hostname, ipmi_workarounds, ssh_address, redfish_system,"
			   " redfish_ca, redfish_tls, redfish_auth FROM mxq_power ORDER BY hostname", NULL);
	if (rows < 0)
		return (int)rows;
	x = calloc((size_t)rows + 1, sizeof(*x));
	if (!x) {
		mx_db_result_free(res);
		return -ENOMEM;
	}
	while (mx_db_next(res)) {
		x[i].hostname = mx_db_strdup(res, 0);
		x[i].ipmi_workarounds = mx_db_strdup(res, 1);
		x[i].ssh_address = mx_db_strdup(res, 2);
		x[i].redfish_system = mx_db_strdup(res, 3);
		x[i].redfish_ca = mx_db_strdup(res, 4);
		x[i].redfish_tls = mx_db_strdup(res, 5);
		x[i].redfish_auth = mx_db_strdup(res, 6);
		i++;
		if (!x[i - 1].hostname || !x[i - 1].ipmi_workarounds || !x[i - 1].ssh_address ||
		    !x[i - 1].redfish_system || !x[i - 1].redfish_ca || !x[i - 1].redfish_tls ||
		    !x[i - 1].redfish_auth) {
			mx_db_result_free(res);
			mxq_power_db_transport_extras_free(x, i);
			return -ENOMEM;
		}
	}
	mx_db_result_free(res);
	*ret = x;
	*ret_n = i;
	return 0;
}

int mxq_power_db_node_discovered(struct mx_db *db, const char *hostname, const char *mac,
				 const char *bmc_address)
{
	int64_t n;
	int filled = 0;

	if (mac && mac[0]) {
		n = mx_db_exec(db, "UPDATE mxq_power SET mac_address = ? WHERE hostname = ?"
			       " AND mac_address = ''", "ss", mac, hostname);
		if (n < 0)
			return (int)n;
		filled += n > 0;
	}
	if (bmc_address && bmc_address[0]) {
		n = mx_db_exec(db, "UPDATE mxq_power SET bmc_address = ? WHERE hostname = ?"
			       " AND bmc_address = ''", "ss", bmc_address, hostname);
		if (n < 0)
			return (int)n;
		filled += n > 0;
	}
	return filled;
}

static bool valid_mac(const char *v)
{
	if (strlen(v) != 17)
		return false;
	for (int i = 0; i < 17; i++) {
		if (i % 3 == 2 ? v[i] != ':' : !strchr("0123456789abcdefABCDEF", v[i]) || !v[i])
			return false;
	}
	return true;
}

static bool one_of(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(v, *list) == 0)
			return true;
	return false;
}

static const struct { const char *key, *column; size_t max; } set_keys[] = {
	{ "transport_on", "transport_on", 16 }, { "transport_off", "transport_off", 16 },
	{ "bmc", "bmc_address", 255 }, { "mac", "mac_address", 17 },
	{ "broadcast", "broadcast_address", 64 }, { "rank", "efficiency_rank", 11 },
	{ "class", "node_class", 64 }, { "ipmi_workarounds", "ipmi_workarounds", 255 },
	{ "ssh", "ssh_address", 255 }, { "redfish_system", "redfish_system", 255 },
	{ "redfish_ca", "redfish_ca", 255 }, { "redfish_tls", "redfish_tls", 16 },
	{ "redfish_auth", "redfish_auth", 16 },
};

int mxq_power_db_set_check(const char *key, const char *value, char *errbuf, size_t errlen)
{
	static const char *const ons[] = { "exec", "ipmi", "redfish", "wol", NULL };
	static const char *const offs[] = { "self", "exec", "ipmi", "redfish", "ssh", NULL };
	char why[400];
	size_t k;
	int64_t rank;

	for (k = 0; k < sizeof(set_keys) / sizeof(set_keys[0]) && strcmp(set_keys[k].key, key) != 0; k++)
		;
	if (k == sizeof(set_keys) / sizeof(set_keys[0])) {
		snprintf(errbuf, errlen, "unknown key '%s' (known: transport_on, transport_off, bmc, mac, "
			 "broadcast, rank, class, ipmi_workarounds, ssh, redfish_system, redfish_ca, "
			 "redfish_tls, redfish_auth)", key);
		return -EINVAL;
	}
	if (strlen(value) > set_keys[k].max) {
		snprintf(errbuf, errlen, "%s: value longer than %zu characters", key, set_keys[k].max);
		return -EINVAL;
	}
	if ((!strcmp(key, "transport_on") && !one_of(value, ons)) ||
	    (!strcmp(key, "transport_off") && !one_of(value, offs))) {
		snprintf(errbuf, errlen, "%s: '%s' is not a transport (%s)", key, value,
			 !strcmp(key, "transport_on") ? "exec, ipmi, redfish, wol" :
			 "self, exec, ipmi, redfish, ssh");
		return -EINVAL;
	}
	if (mxq_redfish_setting_check(key, value, errbuf, errlen) == -EINVAL)
		return -EINVAL;
	if (!strcmp(key, "mac") && value[0] && !valid_mac(value)) {
		snprintf(errbuf, errlen, "mac: '%s' is not a MAC address like 00:11:22:33:44:55", value);
		return -EINVAL;
	}
	if (value[0] && (!strcmp(key, "bmc") || !strcmp(key, "ssh")) &&
	    mx_host_port_check(value, why, sizeof(why)) < 0) {
		snprintf(errbuf, errlen, "%s: %s", key, why);
		return -EINVAL;
	}
	if (value[0] && !strcmp(key, "broadcast") && mx_ipv4_check(value, why, sizeof(why)) < 0) {
		snprintf(errbuf, errlen, "broadcast: %s", why);
		return -EINVAL;
	}
	if (value[0] && !strcmp(key, "class") && mxq_power_class_name_check(value, why, sizeof(why)) < 0) {
		snprintf(errbuf, errlen, "class: %s", why);
		return -EINVAL;
	}
	if (!strcmp(key, "rank") && (mx_strtoi64(value, &rank) < 0 || rank < INT32_MIN ||
				     rank > INT32_MAX)) {
		snprintf(errbuf, errlen, "rank: '%s' is not an integer", value);
		return -EINVAL;
	}
	return (int)k;
}

int mxq_power_db_set(struct mx_db *db, const char *hostname, const char *key, const char *value,
		     const char *admin_name, char *errbuf, size_t errlen)
{
	char sql[256], text[1200], state[32];
	int64_t n;
	int k, r;

	k = mxq_power_db_set_check(key, value, errbuf, errlen);
	if (k < 0)
		return k;
	snprintf(sql, sizeof(sql), "UPDATE mxq_power SET %s = ? WHERE hostname = ?", set_keys[k].column);
	snprintf(text, sizeof(text), "set %s=%s by %s", key, value, admin_name ? admin_name : "admin");
	r = begin_locked(db, hostname, state, sizeof(state));
	if (r < 0)
		return r;
	n = mx_db_exec(db, sql, "ss", value, hostname);
	if (n >= 0 && (r = insert_event(db, hostname, state, state, text, 0, "admin")) < 0)
		n = r;
	if (n < 0) {
		mx_db_rollback(db);
		return (int)n;
	}
	return mx_db_commit(db);
}
