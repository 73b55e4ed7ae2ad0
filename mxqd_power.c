/*
 * mxqd_power - power management inside mxqd (see mxqd_power.h).
 *
 * Configuration: power.conf (policy knobs, parsed by mxq_power_policy.c so
 * that mxqd, mxqadmin and the simulator read it identically) and the mxqd
 * options of struct mxqd_power_options (lease, tick, transport commands).
 *
 * Transports in this file: "self" (the node's own mxqd runs
 * --poweroff-command when its row reaches POWERING_OFF) and "exec" (the
 * leader runs --power-exec-command HOST on|off|status, bounded by a
 * timeout, exit status checked). Nodes whose wake transport cannot work are
 * never powered off: the leader could not bring them back.
 *
 * Transport calls (every transport's on, off, status, run) run in worker
 * processes (mxqd_power_work.c), never in the tick: the tick starts them
 * and collects their results at a later tick, each checked against the
 * node's state then.
 *
 * Errors: database errors end the tick (the next tick starts from a fresh
 * snapshot); a failed actuation marks the node FAILED with the reason. The
 * leader never writes after its local lease deadline.
 */
#define _GNU_SOURCE
#include "mxqd_power.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_util.h"
#include "mxq_power_db.h"
#include "mxq_power_config.h"
#include "mxq_power_policy.h"
#include "mxq_status.h"
#include "mxq_power_secrets.h"
#include "mxq_discover.h"
#include "mxqd_power_transport.h"
#include "mxqd_power_work.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif


/* The module's state: one mxqd, one instance. */
static struct {
	struct mxqd_power_options opt;
	struct mxq_power_config cfg;
	char config_hash[17];
	struct mxq_power_lease lease;
	struct mxq_power_state policy_state;
	uint64_t next_tick_ms;
	uint64_t next_node_check_ms;
	char warned_hash[17];
	bool powering_off;
} pm;

void mxqd_power_options_init(struct mxqd_power_options *opt)
{
	*opt = (struct mxqd_power_options) {
		.config_path = MXQ_POWER_CONFIG_DEFAULT_PATH,
		.tick_s = 10,
		.lease_s = 30,
		.exec_timeout_s = 20,
		.poweroff_command = "/sbin/poweroff",
		.node = true,
		.secrets_path = SYSCONFDIR "/mxq/power-secrets",
		.reconcile_s = 60,
		.soft_off_deadline_s = 120,
		.ipmi_timeout_s = 5,
		.ipmi_retries = 2,
		.ipmi_verify_s = 10,
		.redfish_timeout_s = 10,
		.redfish_retries = 2,
		.wol_port = 9,
		.wol_count = 3,
		.ssh_timeout_s = 10,
		.ssh_drain_command = "drain",
		.ssh_poweroff_command = "poweroff",
		.ssh_known_hosts = SYSCONFDIR "/mxq/power-known-hosts",
	};
}

/* ---------------------------------------------------------- configuration */

static int load_config(const struct mxqd_power_options *opt, char *errbuf, size_t errlen)
{
	int r = mxq_power_config_load(&pm.cfg, opt->config_path_given ? opt->config_path : NULL,
				      NULL, errbuf, errlen);

	if (r < 0)
		return r;
	snprintf(pm.config_hash, sizeof(pm.config_hash), "%016" PRIx64, mxq_power_config_hash(&pm.cfg));
	return 0;
}

/* ----------------------------------------------------------- transports */

/*
 * The transports live in mxqd_power_exec.c (exec, self), mxqd_power_ipmi.c,
 * mxqd_power_wol.c and mxqd_power_ssh.c behind mxqd_power_transport.h; this
 * section picks one per host and action and logs what they report.
 */

/* The last "cannot read the power state" reason logged for a host. */
struct host_warning {
	char *hostname;
	char *text;
};

/* A leader-side ssh drain already sent for one DRAINING period of a host. */
struct ssh_drain_sent {
	char *hostname;
	int64_t state_since;
};

static struct {
	struct mxq_power_secrets *secrets;
	struct mxqd_power_transport_config cfg;
	struct mxq_power_transport_extra *extras;  /* refreshed every tick */
	size_t n_extras;
	struct ssh_drain_sent *drains;
	size_t n_drains;
	uint64_t next_reconcile_ms;
	char why[512];                              /* buffer of the *_impossible() answers */
	struct host_warning *warned;
	size_t n_warned;
	struct mxqd_power_work_result *results;     /* transport calls finished, this tick */
	size_t n_results;
} tp;

/* Log that HOST's power state cannot be read once, not on every tick:
 * again only when the reason changed or after a good read. */
static void warn_unreadable(const char *host, const char *why)
{
	struct host_warning *w = NULL, *m;
	char *text;

	for (size_t i = 0; i < tp.n_warned && !w; i++)
		if (strcmp(tp.warned[i].hostname, host) == 0)
			w = &tp.warned[i];
	if (w && strcmp(w->text, why) == 0)
		return;
	mx_log_warning("power: %s: cannot read the power state: %s", host, why);
	text = strdup(why);
	if (!text)
		return;
	if (w) {
		free(w->text);
		w->text = text;
		return;
	}
	m = realloc(tp.warned, (tp.n_warned + 1) * sizeof(*m));
	if (!m || !(m[tp.n_warned].hostname = strdup(host))) {
		if (m)
			tp.warned = m;
		free(text);
		return;
	}
	tp.warned = m;
	m[tp.n_warned++].text = text;
}

static void warn_readable(const char *host)
{
	for (size_t i = 0; i < tp.n_warned; i++) {
		if (strcmp(tp.warned[i].hostname, host) == 0) {
			free(tp.warned[i].hostname);
			free(tp.warned[i].text);
			tp.warned[i] = tp.warned[--tp.n_warned];
			return;
		}
	}
}

static int transports_init(const struct mxqd_power_options *opt, char *errbuf, size_t errlen)
{
	int r;

	tp.cfg = (struct mxqd_power_transport_config) {
		.exec_command = opt->exec_command,
		.exec_timeout_s = opt->exec_timeout_s,
		.ipmi_timeout_ms = (unsigned)(opt->ipmi_timeout_s * 1000),
		.ipmi_retries = opt->ipmi_retries,
		.ipmi_verify_ms = (unsigned)(opt->ipmi_verify_s * 1000),
		.wol_port = (uint16_t)opt->wol_port,
		.wol_count = opt->wol_count,
		.ssh_timeout_s = opt->ssh_timeout_s,
		.ssh_drain_command = opt->ssh_drain_command,
		.ssh_poweroff_command = opt->ssh_poweroff_command,
		.ssh_default_known_hosts = opt->ssh_known_hosts,
		.redfish_timeout_ms = (unsigned)(opt->redfish_timeout_s * 1000),
		.redfish_retries = opt->redfish_retries,
	};
	if (!opt->manager)
		return 0;
	/* transport calls run in workers (mxqd_power_work.c): a call outliving
	 * the lease cannot do harm, every write on its result is fenced */
	r = mxq_power_secrets_load(opt->secrets_path, &tp.secrets, errbuf, errlen);
	if (r == -ENOENT && !opt->secrets_path_given)
		return 0; /* no secrets: ipmi and ssh hosts are reported as not managed */
	return r;
}

static void transports_fini(void)
{
	mxq_power_secrets_free(tp.secrets);
	tp.secrets = NULL;
	mxq_power_db_transport_extras_free(tp.extras, tp.n_extras);
	tp.extras = NULL;
	tp.n_extras = 0;
	for (size_t i = 0; i < tp.n_drains; i++)
		free(tp.drains[i].hostname);
	free(tp.drains);
	tp.drains = NULL;
	tp.n_drains = 0;
	for (size_t i = 0; i < tp.n_warned; i++) {
		free(tp.warned[i].hostname);
		free(tp.warned[i].text);
	}
	free(tp.warned);
	tp.warned = NULL;
	tp.n_warned = 0;
	free(tp.results);
	tp.results = NULL;
	tp.n_results = 0;
	mxqd_power_work_fini();
}

/* The transport's view of H (settings, extras, secrets). */
static struct mxqd_power_target target_of(const struct mxq_power_host *h)
{
	struct mxqd_power_target t = {
		.hostname = h->hostname,
		.bmc_address = h->bmc_address,
		.mac_address = h->mac_address,
		.broadcast_address = h->broadcast_address,
		.ipmi_workarounds = "",
		.ssh_address = "",
		.redfish_system = "",
		.redfish_ca = "",
	};

	for (size_t i = 0; i < tp.n_extras; i++) {
		if (strcmp(tp.extras[i].hostname, h->hostname) == 0) {
			t.ipmi_workarounds = tp.extras[i].ipmi_workarounds;
			t.ssh_address = tp.extras[i].ssh_address;
			t.redfish_system = tp.extras[i].redfish_system;
			t.redfish_ca = tp.extras[i].redfish_ca;
			t.redfish_insecure = strcmp(tp.extras[i].redfish_tls, "insecure") == 0;
			t.redfish_basic = strcmp(tp.extras[i].redfish_auth, "basic") == 0;
			break;
		}
	}
	mxq_power_secrets_for(tp.secrets, h->hostname, &t.secrets);
	return t;
}

static const char *impossible(const struct mxq_power_host *h, const char *which, const char *name,
			      unsigned cap, const char *supported)
{
	const struct mxqd_power_transport *tr = mxqd_power_transport_find(name);
	struct mxqd_power_target t;
	const char *why;

	if (!tr || !(tr->caps & cap)) {
		snprintf(tp.why, sizeof(tp.why), "%s '%s' is not supported (supported: %s)", which, name,
			 supported);
		return tp.why;
	}
	if (!tr->unusable)
		return NULL;
	t = target_of(h);
	why = tr->unusable(&t, &tp.cfg, tp.why, sizeof(tp.why));
	if (why && why != tp.why) {
		snprintf(tp.why, sizeof(tp.why), "%s", why);
		why = tp.why;
	}
	return why;
}

/* Can the leader wake this host again? Nodes it could not wake are never
 * powered off. Returns NULL if yes, else why not. */
static const char *wake_impossible(const struct mxq_power_host *h)
{
	return impossible(h, "transport_on", h->transport_on, MXQD_TRANSPORT_CAN_ON,
			  "exec, ipmi, redfish, wol");
}

static const char *poweroff_impossible(const struct mxq_power_host *h)
{
	return impossible(h, "transport_off", h->transport_off, MXQD_TRANSPORT_CAN_OFF,
			  "self, exec, ipmi, redfish, ssh");
}

/*
 * Start KIND for H through TR in a worker (mxqd_power_work.c); its result
 * comes back at a later tick (collect_results). TAG is what the call is
 * for. A negative errno when it could not be started, errbuf says why.
 */
static int send_work(const struct mxqd_power_transport *tr, const struct mxq_power_host *h,
		     enum mxqd_power_work_kind kind, struct mxqd_power_work_tag tag,
		     const char *command, char *errbuf, size_t errlen)
{
	struct mxqd_power_target t = target_of(h);

	if (t.redfish_insecure && strcmp(tr->name, "redfish") == 0 && kind != MXQD_WORK_STATUS)
		mx_log_warning("power: %s: %s through BMC %s without TLS verification (redfish_tls=insecure)",
			       h->hostname, mxqd_power_work_kind_to_string(kind), t.bmc_address);
	return mxqd_power_work_start(tr, kind, &t, &tp.cfg, command, tag, errbuf, errlen);
}

static int actuate_wake(const struct mxq_power_host *h, struct mxqd_power_work_tag tag,
			char *errbuf, size_t errlen)
{
	const struct mxqd_power_transport *tr = mxqd_power_transport_find(h->transport_on);

	if (!tr || !tr->power_on) {
		snprintf(errbuf, errlen, "cannot wake with transport '%s'", h->transport_on);
		return -ENOTSUP;
	}
	return send_work(tr, h, MXQD_WORK_WAKE, tag, NULL, errbuf, errlen);
}

static int actuate_power_off(const struct mxq_power_host *h, struct mxqd_power_work_tag tag,
			     char *errbuf, size_t errlen)
{
	const struct mxqd_power_transport *tr = mxqd_power_transport_find(h->transport_off);

	if (!tr || !tr->power_off) {
		snprintf(errbuf, errlen, "cannot power off with transport '%s'", h->transport_off);
		return -ENOTSUP;
	}
	/* soft first; check_powering_off() escalates to hard off after the deadline */
	return send_work(tr, h, MXQD_WORK_OFF_SOFT, tag, NULL, errbuf, errlen);
}

/* The transport that can read HOST's real power state, or NULL. */
static const struct mxqd_power_transport *status_transport(const struct mxq_power_host *h)
{
	const struct mxqd_power_transport *on = mxqd_power_transport_find(h->transport_on);
	const struct mxqd_power_transport *off = mxqd_power_transport_find(h->transport_off);

	if (on && (on->caps & MXQD_TRANSPORT_CAN_STATUS) && !wake_impossible(h))
		return on;
	if (off && (off->caps & MXQD_TRANSPORT_CAN_STATUS) && !poweroff_impossible(h))
		return off;
	return NULL;
}

static struct mxqd_power_work_tag tag_of(const struct mxq_power_node *n)
{
	return (struct mxqd_power_work_tag) { .state = (int)n->state, .state_since = n->state_since };
}

/* Ask for HOST's real power state (answer: status_result() at a later
 * tick), unless a question is still out. */
static void ask_status(const struct mxq_power_host *h, const struct mxq_power_node *n)
{
	char err[512];

	if (mxqd_power_work_busy(h->hostname, MXQD_WORK_STATUS))
		return;
	if (send_work(status_transport(h), h, MXQD_WORK_STATUS, tag_of(n), NULL, err, sizeof(err)) < 0)
		warn_unreadable(h->hostname, err);
}

/* The newest result of KIND for HOST asked while the node was in its
 * present state (same state, same since), or NULL. */
static const struct mxqd_power_work_result *result_for(const struct mxq_power_host *h,
						       const struct mxq_power_node *n,
						       enum mxqd_power_work_kind kind)
{
	const struct mxqd_power_work_result *found = NULL;

	for (size_t k = 0; k < tp.n_results; k++) {
		const struct mxqd_power_work_result *r = &tp.results[k];

		if (r->kind == kind && r->tag.state == (int)n->state &&
		    r->tag.state_since == n->state_since && strcmp(r->hostname, h->hostname) == 0)
			found = r;
	}
	return found;
}

/* WHAT (e.g. "wake") of H failed: FAILED with the reason ERR. MS is how
 * long the transport call took (UINT64_MAX: none was made). */
static void mark_failed(struct mxqd_server *server, const struct mxq_power_host *h,
			struct mxq_power_node *n, const char *what, const char *err, uint64_t ms)
{
	int r;

	if (ms == UINT64_MAX)
		mx_log_err("power: %s of %s failed: %s", what, h->hostname, err);
	else
		mx_log_err("power: %s of %s failed after %.2f s: %s", what, h->hostname,
			   (double)ms / 1000.0, err);
	r = mxq_power_db_transition(server->db, &pm.lease, h->hostname, n->state, MXQ_POWER_FAILED, err);
	if (r < 0)
		mx_log_err("power: cannot mark %s FAILED: %s", h->hostname, mx_db_error(server->db));
	if (r == 1) {
		n->state = MXQ_POWER_FAILED;
		n->excluded = true; /* nothing more this tick */
	}
}

/* A transport call running longer than this is killed: twice the longest
 * bound any transport promises, and 10 s more. */
static uint64_t work_limit_ms(void)
{
	uint64_t exec = (uint64_t)tp.cfg.exec_timeout_s * 1000;
	uint64_t ipmi = (uint64_t)tp.cfg.ipmi_timeout_ms * (tp.cfg.ipmi_retries + 1) + tp.cfg.ipmi_verify_ms;
	uint64_t ssh = (uint64_t)tp.cfg.ssh_timeout_s * 1000;
	/* a redfish call is several requests (login, system, reset, read back, logout) */
	uint64_t redfish = (uint64_t)tp.cfg.redfish_timeout_ms * 4 * (tp.cfg.redfish_retries + 1) +
			   tp.cfg.ipmi_verify_ms;
	uint64_t m = exec > ipmi ? exec : ipmi;

	if (redfish > m)
		m = redfish;

	return 2 * (m > ssh ? m : ssh) + 10000;
}

/*
 * The transport calls that came back since the last tick. A failed wake,
 * power-off or drain marks its node FAILED if the node is still in the
 * state the call was made for (else it moved on: only logged). Status
 * answers are kept for check_powering_off() and reconcile() of this tick.
 */
static void collect_results(struct mxqd_server *server, struct mxq_power_db_snapshot *s)
{
	free(tp.results);
	tp.n_results = mxqd_power_work_collect(work_limit_ms(), &tp.results);
	for (size_t k = 0; k < tp.n_results; k++) {
		const struct mxqd_power_work_result *r = &tp.results[k];
		/* the leader runs commands only to drain old nodes over ssh */
		const char *what = r->kind == MXQD_WORK_RUN ? "ssh drain" :
				   mxqd_power_work_kind_to_string(r->kind);
		size_t i = 0;

		if (r->kind == MXQD_WORK_STATUS) {
			if (r->rc < 0)
				warn_unreadable(r->hostname, r->err);
			else
				warn_readable(r->hostname);
			continue;
		}
		mx_log_debug("power: %s of %s returned %d after %" PRIu64 " ms", what, r->hostname,
			     r->rc, r->ms);
		if (r->rc >= 0)
			continue;
		while (i < s->snap.n_nodes && strcmp(s->hosts[i].hostname, r->hostname) != 0)
			i++;
		if (r->tag.state < 0 || i == s->snap.n_nodes || (int)s->nodes[i].state != r->tag.state) {
			mx_log_warning("power: %s of %s failed after %.2f s: %s%s", what, r->hostname,
				       (double)r->ms / 1000.0, r->err,
				       r->tag.state < 0 ? " (left to the deadline)" :
				       " (the node has moved on since)");
			continue;
		}
		mark_failed(server, &s->hosts[i], &s->nodes[i], what, r->err, r->ms);
	}
}

/* POWERING_OFF: confirm with the transport; escalate soft -> hard off. A
 * transport that can cut the power (ipmi) is asked every tick and its word
 * beats the heartbeat; others only when the node's mxqd is gone. */
static void check_powering_off(struct mxqd_server *server, struct mxq_power_db_snapshot *s, size_t i)
{
	struct mxq_power_node *n = &s->nodes[i];
	const struct mxq_power_host *h = &s->hosts[i];
	const struct mxqd_power_transport *off = mxqd_power_transport_find(h->transport_off);
	bool can_cut = off && (off->caps & MXQD_TRANSPORT_CAN_HARD_OFF) && !poweroff_impossible(h);
	const struct mxqd_power_work_result *res;
	char err[512] = "";
	int st;

	if (!status_transport(h) || (!can_cut && !n->seen_down))
		return;
	ask_status(h, n);  /* the answer for the next tick */
	if ((res = result_for(h, n, MXQD_WORK_OFF_HARD)) && res->rc >= 0) {
		n->seen_down = true;  /* cut: the next status confirms it */
		return;
	}
	res = result_for(h, n, MXQD_WORK_STATUS);
	if (!res || res->rc < 0)
		return;  /* warned when it came back */
	st = res->rc;
	if (st == 0) {
		if (can_cut)
			n->seen_down = true;
		return;
	}
	n->seen_down = false; /* mxqd may be gone but the power is still on */
	/* both times are whole seconds: +1 so that the deadline is never cut short */
	if (!can_cut || s->now - n->state_since < (int64_t)ceil(pm.opt.soft_off_deadline_s) + 1)
		return;
	if (mxqd_power_work_busy(h->hostname, MXQD_WORK_OFF_HARD))
		return;
	mx_log_notice("power: %s still on %g s after soft off: hard power off", h->hostname,
		      pm.opt.soft_off_deadline_s);
	if (send_work(off, h, MXQD_WORK_OFF_HARD, tag_of(n), NULL, err, sizeof(err)) < 0)
		mark_failed(server, h, n, "hard power off", err, UINT64_MAX);
}

/* Nodes whose mxqd is too old for the drain protocol (no answer to a drain
 * after two ticks) and whose transport_off is ssh: run the drain command
 * once per drain, then acknowledge on the node's behalf when its mxq_daemon
 * row reached EXITED. */
static void ssh_drain(struct mxqd_server *server, struct mxq_power_db_snapshot *s, size_t i)
{
	struct mxq_power_node *n = &s->nodes[i];
	const struct mxq_power_host *h = &s->hosts[i];
	const struct mxqd_power_transport *off = mxqd_power_transport_find(h->transport_off);
	struct ssh_drain_sent *d = NULL;
	char err[512] = "";
	int r;

	if (!off || !off->run || n->drain_acked || h->node_ack[0] || poweroff_impossible(h))
		return;
	for (size_t k = 0; k < tp.n_drains; k++)
		if (strcmp(tp.drains[k].hostname, h->hostname) == 0)
			d = &tp.drains[k];
	if (h->has_daemon && h->daemon_status == MXQ_DAEMON_STATUS_EXITED && d &&
	    d->state_since == n->state_since) {
		r = mxq_power_db_node_ack_drain(server->db, h->hostname);
		if (r == 1) {
			mx_log_notice("power: %s: mxqd exited after the ssh drain: drain acknowledged",
				      h->hostname);
			n->drain_acked = true;
		} else if (r < 0) {
			mx_log_err("power: %s: cannot acknowledge the drain: %s", h->hostname,
				   mx_db_error(server->db));
		}
		return;
	}
	if ((d && d->state_since == n->state_since) || s->now - n->state_since < 2 * pm.opt.tick_s)
		return;
	if (!d) {
		struct ssh_drain_sent *m = realloc(tp.drains, (tp.n_drains + 1) * sizeof(*m));
		char *name = strdup(h->hostname);
		if (!m || !name) {
			free(name);
			if (m)
				tp.drains = m;
			return;
		}
		tp.drains = m;
		d = &tp.drains[tp.n_drains++];
		d->hostname = name;
	}
	d->state_since = n->state_since;
	mx_log_notice("power: %s did not answer the drain: running '%s' over ssh", h->hostname,
		      tp.cfg.ssh_drain_command);
	if (send_work(off, h, MXQD_WORK_RUN, tag_of(n), tp.cfg.ssh_drain_command, err, sizeof(err)) < 0)
		mark_failed(server, h, n, "ssh drain", err, UINT64_MAX);
}

/*
 * Bring recorded ON/OFF states into agreement with the real power state:
 * the BMC's where a transport reads it (asked when ASK, every reconcile
 * interval; the answers are applied at the tick they come back, if the
 * node is still in the state it was asked in), the heartbeat otherwise.
 */
static void reconcile(struct mxqd_server *server, struct mxq_power_db_snapshot *s, bool ask)
{
	for (size_t i = 0; i < s->snap.n_nodes && mxq_power_lease_valid(&pm.lease); i++) {
		struct mxq_power_node *n = &s->nodes[i];
		const struct mxq_power_host *h = &s->hosts[i];
		const struct mxqd_power_work_result *res;
		enum mxq_power_node_state to;
		char why[700];
		int st;

		/* a pending admin request acts on the node this very tick */
		if (n->excluded || h->admin_request[0] ||
		    (n->state != MXQ_POWER_ON && n->state != MXQ_POWER_OFF))
			continue;
		if (status_transport(h)) {
			res = result_for(h, n, MXQD_WORK_STATUS);
			if (ask)
				ask_status(h, n);
			if (!res || res->rc < 0)
				continue;
			st = res->rc;
			if (st == 1 && n->state == MXQ_POWER_OFF && !n->seen_up) {
				to = MXQ_POWER_ON;
				snprintf(why, sizeof(why), "reconciled: %s reports power on although recorded "
					 "OFF (switched on outside the power manager)", h->transport_on);
			} else if (st == 0 && n->state == MXQ_POWER_ON) {
				to = MXQ_POWER_OFF;
				snprintf(why, sizeof(why), "reconciled: %s reports power off although recorded "
					 "ON (switched off outside the power manager)", h->transport_on);
			} else {
				continue;
			}
		} else if (ask && n->state == MXQ_POWER_ON && n->seen_down) {
			to = MXQ_POWER_OFF;
			snprintf(why, sizeof(why), "reconciled: no mxqd heartbeat and no transport reads "
				 "the power state: recorded OFF");
		} else {
			continue;
		}
		if (mxq_power_db_transition(server->db, &pm.lease, h->hostname, n->state, to, why) == 1) {
			mx_log_notice("power: %s %s -> %s: %s", h->hostname, mxq_power_state_to_string(n->state),
				      mxq_power_state_to_string(to), why);
			n->state = to;
			n->state_since = s->now;
			n->seen_down = to == MXQ_POWER_OFF;
		}
	}
}

/* ------------------------------------------------------------- node side */

static void node_job_ended(void *ctx, struct mxqd_server *server, const struct mxqd_job *job,
			   int final_status)
{
	int r = mxq_power_db_node_job_ended(server->db, server->hostname);
	if (r < 0 && r != -ENOENT)
		mx_log_warning("power: cannot record job end: %s", mx_db_error(server->db));
}

static const struct mxqd_hooks node_hooks = {
	.job_ended = node_job_ended,
};

int mxqd_power_init(struct mxqd_server *server, const struct mxqd_power_options *opt,
		    char *errbuf, size_t errlen)
{
	int r;

	pm.opt = *opt;
	if (opt->manager || opt->check_config) {
		r = load_config(opt, errbuf, errlen);
		if (r < 0)
			return r;
	}
	if (opt->manager) {
		unsigned long long st = 0;
		mx_proc_starttime(getpid(), &st);
		snprintf(pm.lease.holder, sizeof(pm.lease.holder), "%s/%s[%d:%llu]", server->hostname,
			 server->daemon_name, (int)getpid(), st);
		if (opt->lease_s < 2 * opt->tick_s) {
			snprintf(errbuf, errlen, "--power-lease (%g s) must be at least twice --power-tick (%g s)",
				 opt->lease_s, opt->tick_s);
			return -EINVAL;
		}
	}
	r = transports_init(opt, errbuf, errlen);
	if (r < 0)
		return r;
	if (opt->node)
		return mxqd_hooks_register(&node_hooks);
	return 0;
}

int mxqd_power_node_register(struct mxqd_server *server)
{
	char mac[18], iface[256];
	int r;

	if (!pm.opt.node)
		return 0;
	r = mxq_power_db_node_register(server->db, server->hostname);
	if (r < 0)
		return r;
	/* discovery: fills only empty columns, an admin's setting wins */
	if (mxq_discover_mac(NULL, NULL, mac, iface, sizeof(iface)) == 0 &&
	    mxq_power_db_node_discovered(server->db, server->hostname, mac, NULL) > 0)
		mx_log_info("power: recorded MAC address %s of %s for Wake-on-LAN", mac, iface);
	return 0;
}

static int run_poweroff_command(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		mx_log_close_other_fds(-1);
		execl("/bin/sh", "sh", "-c", pm.opt.poweroff_command, (char *)NULL);
		_exit(127);
	}
	return 0; /* not waited for: the machine goes down under us */
}

int mxqd_power_node_tick(struct mxqd_server *server)
{
	enum mxq_power_node_state state;
	char *transport_off = NULL;
	uint64_t now = mx_now_monotonic_ms();
	bool desired_off;
	int r;

	if (!pm.opt.node || now < pm.next_node_check_ms)
		return 0;
	pm.next_node_check_ms = now + 500;
	r = mxq_power_db_node_state(server->db, server->hostname, &state, &desired_off, &transport_off);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	if (state == MXQ_POWER_DRAINING) {
		r = mxq_power_db_node_ack_drain(server->db, server->hostname);
		if (r == 1)
			mx_log_notice("power: drain acknowledged, node is idle");
	} else if (state == MXQ_POWER_POWERING_OFF && strcmp(transport_off, "self") == 0 &&
		   server->jobs_running == 0 && !pm.powering_off) {
		mx_log_notice("power: powering this node off: %s", pm.opt.poweroff_command);
		pm.powering_off = true;
		r = run_poweroff_command();
		if (r < 0) {
			mx_log_err("power: cannot run %s: %s", pm.opt.poweroff_command, strerror(-r));
		} else {
			free(transport_off);
			return 1;
		}
	}
	free(transport_off);
	return r < 0 ? r : 0;
}

/* ---------------------------------------------------------------- leader */

uint64_t mxqd_power_next_tick_in_ms(void)
{
	uint64_t now = mx_now_monotonic_ms();

	if (!pm.opt.manager)
		return UINT64_MAX;
	return pm.next_tick_ms > now ? pm.next_tick_ms - now : 0;
}

static void warn_other_config(struct mxqd_server *server)
{
	struct mx_db_result *res = NULL;

	if (mx_db_query(server->db, &res, "SELECT config_hash, holder FROM mxq_power_leader WHERE id = 1",
			NULL) <= 0) {
		mx_db_result_free(res);
		return;
	}
	mx_db_next(res);
	if (mx_db_str(res, 0) && mx_db_str(res, 0)[0] && strcmp(mx_db_str(res, 0), pm.config_hash) != 0 &&
	    strcmp(mx_db_str(res, 0), pm.warned_hash) != 0) {
		mx_log_warning("power: the leader %s runs power.conf with hash %s, this candidate has %s: "
			       "the policy will change if this candidate takes over - keep power.conf "
			       "identical on every --power-manager",
			       mx_db_str(res, 1), mx_db_str(res, 0), pm.config_hash);
		snprintf(pm.warned_hash, sizeof(pm.warned_hash), "%s", mx_db_str(res, 0));
	}
	mx_db_result_free(res);
}

/* Mark the snapshot's nodes the leader cannot act on, confirm power-offs
 * with the transport (escalating soft to hard off), run ssh drains for old
 * nodes, and reconcile recorded states with real ones when due. */
static void refine_snapshot(struct mxqd_server *server, struct mxq_power_db_snapshot *s)
{
	uint64_t now_ms = mx_now_monotonic_ms();
	int r;

	mxq_power_db_transport_extras_free(tp.extras, tp.n_extras);
	tp.extras = NULL;
	tp.n_extras = 0;
	r = mxq_power_db_transport_extras(server->db, &tp.extras, &tp.n_extras);
	if (r < 0)
		mx_log_warning("power: cannot read transport settings: %s", mx_db_error(server->db));

	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		struct mxq_power_node *n = &s->nodes[i];
		const struct mxq_power_host *h = &s->hosts[i];

		if (!n->excluded && (wake_impossible(h) || poweroff_impossible(h)))
			n->excluded = true;
		if (n->excluded || pm.cfg.dry_run || !mxq_power_lease_valid(&pm.lease))
			continue;
		/* not off before the power-off call returned: its failure must
		 * still find the node POWERING_OFF and mark it FAILED */
		if (n->state == MXQ_POWER_POWERING_OFF &&
		    (mxqd_power_work_busy(h->hostname, MXQD_WORK_OFF_SOFT) ||
		     mxqd_power_work_busy(h->hostname, MXQD_WORK_OFF_HARD)))
			n->seen_down = false;
		if (n->state == MXQ_POWER_POWERING_OFF)
			check_powering_off(server, s, i);
		else if (n->state == MXQ_POWER_DRAINING)
			ssh_drain(server, s, i);
	}
	if (pm.opt.reconcile_s > 0 && !tp.next_reconcile_ms) /* first one an interval after start */
		tp.next_reconcile_ms = now_ms + (uint64_t)(pm.opt.reconcile_s * 1000);
	if (pm.opt.reconcile_s > 0 && !pm.cfg.dry_run) {
		bool ask = now_ms >= tp.next_reconcile_ms;

		if (ask)
			tp.next_reconcile_ms = now_ms + (uint64_t)(pm.opt.reconcile_s * 1000);
		reconcile(server, s, ask);
	}
}

/* Carry out one action whose transition was written. Past the lease
 * deadline nothing is sent: the next leader finishes what we wrote. */
static void actuate(struct mxqd_server *server, struct mxq_power_db_snapshot *s,
		    const struct mxq_power_action *a)
{
	const struct mxq_power_host *h = &s->hosts[a->node_index];
	struct mxqd_power_work_tag tag = { .state = (int)a->to, .state_since = s->now };
	char err[512] = "";
	int r = 0;

	if (!mxq_power_lease_valid(&pm.lease))
		return;
	if (a->kind == MXQ_POWER_ACTION_WAKE)
		r = actuate_wake(h, tag, err, sizeof(err));
	else if (a->kind == MXQ_POWER_ACTION_POWER_OFF)
		r = actuate_power_off(h, tag, err, sizeof(err));
	if (r >= 0)
		return;
	mx_log_err("power: %s %s failed: %s", mxq_power_action_to_string(a->kind), h->hostname, err);
	r = mxq_power_db_transition(server->db, &pm.lease, h->hostname, a->to, MXQ_POWER_FAILED, err);
	if (r < 0)
		mx_log_err("power: cannot mark %s FAILED: %s", h->hostname, mx_db_error(server->db));
}

/*
 * A new leader finishes what its predecessor wrote but may not have sent:
 * intent is written before actuation (DESIGN 5.3), so a node found in
 * POWERING_ON or POWERING_OFF gets its wake or power-off again. Both are
 * idempotent. The re-sent action starts its deadline afresh (a same-state
 * transition with an event): time the previous leader, or the database,
 * was gone is not the node's fault. A failure is left to that deadline.
 */
static void finish_inherited_transitions(struct mxqd_server *server, struct mxq_power_db_snapshot *s)
{
	for (size_t i = 0; i < s->snap.n_nodes && mxq_power_lease_valid(&pm.lease); i++) {
		struct mxq_power_node *n = &s->nodes[i];
		const struct mxq_power_host *h = &s->hosts[i];
		bool wake = n->state == MXQ_POWER_POWERING_ON && !n->seen_up;
		char err[512] = "", why[128];
		int r;

		if (n->excluded || !(wake || (n->state == MXQ_POWER_POWERING_OFF && !n->seen_down)))
			continue;
		snprintf(why, sizeof(why), "%s sent again by the new leader (epoch %" PRIu64 ")",
			 wake ? "wake" : "power-off", pm.lease.epoch);
		if (mxq_power_db_transition(server->db, &pm.lease, h->hostname, n->state, n->state, why) != 1)
			continue;
		n->state_since = s->now;
		/* no state in the tag: a failure is left to the deadline */
		r = wake ? actuate_wake(h, (struct mxqd_power_work_tag) { .state = -1 }, err, sizeof(err))
			 : actuate_power_off(h, (struct mxqd_power_work_tag) { .state = -1 }, err,
					     sizeof(err));
		mx_log_notice("power: %s: %s%s%s", h->hostname, why, r < 0 ? ", failed: " : "",
			      r < 0 ? err : "");
	}
}

static void apply_admin_requests(struct mxqd_server *server, struct mxq_power_db_snapshot *s)
{
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		struct mxq_power_host *h = &s->hosts[i];
		struct mxq_power_node *n = &s->nodes[i];
		bool off = strcmp(h->admin_request, "OFF") == 0;

		if (!h->admin_request[0])
			continue;
		if (!off && n->state == MXQ_POWER_OFF) {
			struct mxq_power_action a = {
				.hostname = h->hostname, .node_index = i, .kind = MXQ_POWER_ACTION_WAKE,
				.from = MXQ_POWER_OFF, .to = MXQ_POWER_POWERING_ON,
				.reason = h->admin_request_reason,
			};
			if (mxq_power_db_transition(server->db, &pm.lease, h->hostname, MXQ_POWER_OFF,
						    MXQ_POWER_POWERING_ON, h->admin_request_reason) == 1) {
				mx_log_notice("power: %s: %s", h->hostname, h->admin_request_reason);
				actuate(server, s, &a);
				n->state = MXQ_POWER_POWERING_ON;
				n->state_since = s->now;
			}
		}
		n->admin_off = off;
		mxq_power_db_admin_request_done(server->db, &pm.lease, h->hostname, off);
	}
}

static int leader_tick(struct mxqd_server *server)
{
	struct mxq_power_db_snapshot *s = NULL;
	struct mxq_power_plan plan = { 0 };
	int64_t hb_timeout = pm.opt.node_timeout_s > 0 ? (int64_t)pm.opt.node_timeout_s :
			     3 * (int64_t)server->heartbeat_interval_s + 5;
	int r;

	r = mxq_power_lease_acquire(server->db, &pm.lease, (unsigned)(pm.opt.lease_s * 1000),
				    (unsigned)(pm.opt.tick_s * 1000 / 2), pm.config_hash,
				    pm.cfg.dry_run);
	if (r < 0)
		return r;
	if (r == 0) {
		warn_other_config(server);
		return 0;
	}
	if (pm.lease.new_term) {
		mx_log_notice("power: this mxqd is the power manager now (epoch %" PRIu64 ", config %s%s)",
			      pm.lease.epoch, pm.config_hash, pm.cfg.dry_run ? ", dry run" : "");
		r = mxq_power_state_load(server->db, &pm.policy_state);
		if (r < 0)
			return r;
	}

	r = mxq_power_db_snapshot_read(server->db, hb_timeout, &s);
	if (r < 0)
		return r;
	collect_results(server, s);
	refine_snapshot(server, s);
	if (pm.lease.new_term && !pm.cfg.dry_run)
		finish_inherited_transitions(server, s);
	if (!pm.cfg.dry_run)
		apply_admin_requests(server, s);

	r = mxq_power_decide(&s->snap, s->now, &pm.cfg, &pm.policy_state, &plan);
	if (r < 0) {
		mxq_power_db_snapshot_free(s);
		return r;
	}
	for (size_t i = 0; i < plan.n_actions && mxq_power_lease_valid(&pm.lease); i++) {
		const struct mxq_power_action *a = &plan.actions[i];

		if (plan.dry_run) {
			mx_log_info("power: dry run: would %s %s (%s -> %s): %s",
				    mxq_power_action_to_string(a->kind), a->hostname,
				    mxq_power_state_to_string(a->from), mxq_power_state_to_string(a->to),
				    a->reason);
			continue;
		}
		r = mxq_power_db_transition(server->db, &pm.lease, a->hostname, a->from, a->to, a->reason);
		if (r < 0)
			break;
		if (r == 0)
			continue; /* fenced, or the row moved meanwhile: next tick decides again */
		mx_log_notice("power: %s %s -> %s: %s", a->hostname, mxq_power_state_to_string(a->from),
			      mxq_power_state_to_string(a->to), a->reason);
		actuate(server, s, a);
	}
	for (size_t i = 0; r >= 0 && i < plan.n_explanations && mxq_power_lease_valid(&pm.lease); i++) {
		const struct mxq_power_host *h = &s->hosts[i];
		const char *text = plan.explanations[i].text;
		char buf[2048];

		if (s->nodes[i].excluded && !h->explanation[0]) {
			const char *why = wake_impossible(h) ? wake_impossible(h) : poweroff_impossible(h);
			if (why) {
				snprintf(buf, sizeof(buf), "not managed: %s", why);
				text = buf;
			}
		}
		if (mxq_power_db_explain(server->db, &pm.lease, h->hostname, text) < 0)
			break;
	}
	if (r >= 0 && mxq_power_lease_valid(&pm.lease))
		r = mxq_power_state_save(server->db, &pm.lease, &pm.policy_state, plan.summary);
	if (r == -ESTALE)
		r = 0;
	mxq_power_plan_free(&plan);
	mxq_power_db_snapshot_free(s);
	return r;
}

int mxqd_power_leader_tick(struct mxqd_server *server)
{
	uint64_t now = mx_now_monotonic_ms();
	bool was_held = pm.lease.held;
	int r;

	if (!pm.opt.manager || now < pm.next_tick_ms)
		return 0;
	pm.next_tick_ms = now + (uint64_t)(pm.opt.tick_s * 1000);
	r = leader_tick(server);
	if (was_held && !pm.lease.held)
		mx_log_warning("power: lost the power manager lease (epoch %" PRIu64 ")", pm.lease.epoch);
	return r;
}

void mxqd_power_fini(struct mxqd_server *server)
{
	if (pm.opt.manager && pm.lease.held) {
		if (mxq_power_lease_release(server->db, &pm.lease) < 0)
			mx_log_warning("power: cannot release the lease: %s", mx_db_error(server->db));
		else
			mx_log_notice("power: lease released");
	}
	mxq_power_config_done(&pm.cfg);
	transports_fini();
}
