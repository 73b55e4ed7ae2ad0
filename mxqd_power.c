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
 * snapshot); a failed transport call becomes a fact of the next snapshot
 * that the policy turns into FAILED with the reason. The leader never
 * writes after its local lease deadline, and its workers make no call
 * after it (mxqd_power_work.h); see mxqd(8), "Fenced actuation", for what
 * a new leader waits out. An intent whose commit failed (it may have
 * taken: a lost connection) or whose call the deadline overtook is sent
 * at a later tick of the same term when the host is found in it
 * (intent_unsent).
 */
#define _GNU_SOURCE
#include "mxqd_power.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mx_log.h"
#include "mx_safefs.h"
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
	uint64_t held_epoch;       /* the last epoch this process held, 0: none */
	uint64_t next_tick_ms;
	uint64_t next_poll_ms;
	uint64_t seen_pending;     /* newest pending job id the last decision saw */
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
		.poll_s = 1,
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

static void fences_clear(void);
static void unsent_clear(void);

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
	if (!opt->manager && !opt->check_config)
		return 0;       /* --check-config checks the secrets file's type, mode and owner too */
	/* transport calls run in workers (mxqd_power_work.c), fenced by the
	 * lease deadline; every write on their results is fenced too */
	r = mxq_power_secrets_load(opt->secrets_path, &tp.secrets, errbuf, errlen);
	if (r == -ENOENT && !opt->secrets_path_given)
		return 0; /* no secrets: ipmi and ssh hosts are reported as not managed */
	return r;
}

void mxqd_power_forget_secrets(void)
{
	mxq_power_secrets_free(tp.secrets);  /* wipes every value */
	tp.secrets = NULL;
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
	fences_clear();
	unsent_clear();
	mxqd_power_work_fini();
}

static int cmp_extra(const void *a, const void *b)
{
	return strcmp(((const struct mxq_power_transport_extra *)a)->hostname,
		      ((const struct mxq_power_transport_extra *)b)->hostname);
}

/* This tick's per-host transport settings, sorted for target_of(). */
static int read_extras(struct mx_db *db)
{
	int r;

	mxq_power_db_transport_extras_free(tp.extras, tp.n_extras);
	tp.extras = NULL;
	tp.n_extras = 0;
	r = mxq_power_db_transport_extras(db, &tp.extras, &tp.n_extras);
	if (r >= 0 && tp.n_extras)
		qsort(tp.extras, tp.n_extras, sizeof(*tp.extras), cmp_extra);
	return r;
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

	const struct mxq_power_transport_extra key = { .hostname = h->hostname }, *x;

	/* sorted by read_extras(): a tick looks every node up, 10,000 of them */
	x = tp.n_extras ? bsearch(&key, tp.extras, tp.n_extras, sizeof(*tp.extras), cmp_extra) : NULL;
	if (x) {
		t.ipmi_workarounds = x->ipmi_workarounds;
		t.ssh_address = x->ssh_address;
		t.redfish_system = x->redfish_system;
		t.redfish_ca = x->redfish_ca;
		t.redfish_insecure = strcmp(x->redfish_tls, "insecure") == 0;
		t.redfish_basic = strcmp(x->redfish_auth, "basic") == 0;
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
	char err[256];

	/* a name from the database becomes a transport's argument: never unchecked */
	if (mx_hostname_check(h->hostname, err, sizeof(err)) < 0) {
		snprintf(tp.why, sizeof(tp.why), "never actuated: %s (fix or delete the mxq_power row)", err);
		return tp.why;
	}
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
	struct mxqd_power_work_fence fence = {
		.deadline_ms = pm.lease.deadline_ms, .epoch = pm.lease.epoch,
	};

	if (mx_hostname_check(h->hostname, errbuf, errlen) < 0)
		return -EINVAL;
	if (t.redfish_insecure && strcmp(tr->name, "redfish") == 0 && kind != MXQD_WORK_STATUS)
		mx_log_warning("power: %s: %s through BMC %s without TLS verification (redfish_tls=insecure)",
			       h->hostname, mxqd_power_work_kind_to_string(kind), t.bmc_address);
	return mxqd_power_work_start(tr, kind, &t, &tp.cfg, command, tag, fence, errbuf, errlen);
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

/* The longest a call of transport NAME may take, as it promises: exec
 * timeout, ipmi attempts x timeout + verify, ssh timeout, 1 s for the
 * packets of wol, redfish requests x attempts + verify; self makes no call
 * from the leader. */
static uint64_t call_bound_ms(const char *name)
{
	if (!name)
		return 0;
	if (strcmp(name, "exec") == 0)
		return (uint64_t)tp.cfg.exec_timeout_s * 1000;
	if (strcmp(name, "ipmi") == 0)
		return mxqd_power_ipmi_bound_ms(&tp.cfg);     /* which the transport holds to */
	if (strcmp(name, "ssh") == 0)
		return (uint64_t)tp.cfg.ssh_timeout_s * 1000;
	if (strcmp(name, "wol") == 0)
		return 1000;
	if (strcmp(name, "redfish") == 0)
		return mxqd_power_redfish_bound_ms(&tp.cfg);  /* which the transport holds to */
	return 0;
}

static uint64_t longest_call_ms(void)
{
	static const char *const all[] = { "exec", "ipmi", "ssh", "wol", "redfish" };
	uint64_t m = 0;

	for (size_t i = 0; i < MX_ARRAY_SIZE(all); i++)
		if (call_bound_ms(all[i]) > m)
			m = call_bound_ms(all[i]);
	return m;
}

/* A transport call running longer than this is killed: twice the longest
 * bound any transport promises, and 10 s more. */
static uint64_t work_limit_ms(void)
{
	return 2 * longest_call_ms() + 10000;
}

/* Per-tick text the snapshot's nodes point to (freed with the snapshot). */
static struct {
	char **v;
	size_t n;
} tick_text;

static const char *keep_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *keep_text(const char *fmt, ...)
{
	char **m = realloc(tick_text.v, (tick_text.n + 1) * sizeof(*m));
	va_list ap;
	char *t;
	int r;

	if (!m)
		return NULL;
	tick_text.v = m;
	va_start(ap, fmt);
	r = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (r < 0)
		return NULL;
	tick_text.v[tick_text.n++] = t;
	return t;
}

static void tick_text_free(void)
{
	for (size_t i = 0; i < tick_text.n; i++)
		free(tick_text.v[i]);
	free(tick_text.v);
	tick_text.v = NULL;
	tick_text.n = 0;
}

/* What a result of KIND is called in messages (the leader runs commands
 * only to drain old nodes over ssh). */
static const char *work_what(enum mxqd_power_work_kind kind)
{
	return kind == MXQD_WORK_RUN ? "ssh drain" : mxqd_power_work_kind_to_string(kind);
}

/*
 * The transport calls that came back since the last tick: logged here,
 * kept for node_facts() of this tick. Nothing is written: a failure of a
 * call made for the node's present state becomes the node's failed_call,
 * which the policy turns into MARK_FAILED.
 */
static void collect_results(void)
{
	free(tp.results);
	tp.n_results = mxqd_power_work_collect(work_limit_ms(), &tp.results);
	for (size_t k = 0; k < tp.n_results; k++) {
		const struct mxqd_power_work_result *r = &tp.results[k];

		if (r->refused) {
			/* fenced: the lease ran out between intent and call */
			mx_log_warning("power: %s of %s not sent: %s", work_what(r->kind), r->hostname,
				       r->err);
			continue;
		}
		if (r->kind == MXQD_WORK_STATUS) {
			if (r->rc < 0)
				warn_unreadable(r->hostname, r->err);
			else
				warn_readable(r->hostname);
			continue;
		}
		mx_log_debug("power: %s of %s returned %d after %" PRIu64 " ms", work_what(r->kind),
			     r->hostname, r->rc, r->ms);
		if (r->rc < 0 && r->tag.state < 0)
			mx_log_warning("power: %s of %s failed after %.2f s: %s (left to the deadline)",
				       work_what(r->kind), r->hostname, (double)r->ms / 1000.0, r->err);
	}
}

/* An earlier leader's in-flight window per host (DB seconds), set when
 * this leader's term began; see inherit_fences(). */
struct fence {
	char *hostname;
	int64_t until;
};

static struct {
	struct fence *v;
	size_t n;
} fences;

static void fences_clear(void)
{
	for (size_t i = 0; i < fences.n; i++)
		free(fences.v[i].hostname);
	free(fences.v);
	fences.v = NULL;
	fences.n = 0;
}

static int64_t fence_of(const char *hostname, int64_t now)
{
	for (size_t i = 0; i < fences.n; i++)
		if (fences.v[i].until > now && strcmp(fences.v[i].hostname, hostname) == 0)
			return fences.v[i].until;
	return 0;
}

/*
 * First tick of a term: every node in a transition an earlier leader
 * wrote (DRAINING, POWERING_OFF, POWERING_ON) may still receive that
 * leader's call. Its workers check their lease deadline right before each
 * call, so the last call can start no later than the old lease's expiry,
 * which is before our takeover, and it lands within the longest call of
 * the node's transports after that. Until takeover + that call + 1 s no
 * wake or power-off of those nodes is started (mxq_power_node.fence_until).
 */
static void inherit_fences(const struct mxq_power_db_snapshot *s)
{
	int64_t longest = 0;

	fences_clear();
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		const struct mxq_power_host *h = &s->hosts[i];
		uint64_t on = call_bound_ms(h->transport_on), off = call_bound_ms(h->transport_off);
		int64_t until = s->now + (int64_t)(((on > off ? on : off) + 999) / 1000) + 1;
		struct fence *m;

		if (!mxq_power_state_is_transitional(s->nodes[i].state))
			continue;
		if (until - s->now > longest)
			longest = until - s->now;
		m = realloc(fences.v, (fences.n + 1) * sizeof(*m));
		if (!m)
			return;
		fences.v = m;
		if (!(m[fences.n].hostname = strdup(s->hosts[i].hostname)))
			return;
		m[fences.n++].until = until;
	}
	if (fences.n)
		mx_log_notice("power: %zu node(s) in a transition of the previous leader: no wake or "
			      "power-off of them for up to %" PRId64 " s (its lease expiry + the "
			      "longest call of their transports)", fences.n, longest);
}

/*
 * Intents this leader wrote, or tried to write, in its present term whose
 * call it has not started: a wake or power-off whose commit returned an
 * error (a lost connection: the server may have applied it all the same)
 * or that the lease's deadline overtook before the call. Each is noted
 * before its write and dropped once its worker runs; a later snapshot
 * that finds the host in the state written makes it the node's
 * intent_unsent (the policy sends it then), one that finds it elsewhere
 * drops it. A new term starts empty: inherited transitions are sent
 * again anyway.
 */
struct unsent_intent {
	char *hostname;
	enum mxq_power_node_state to;
};

static struct {
	struct unsent_intent *v;
	size_t n;
} unsent;

static struct unsent_intent *unsent_find(const char *hostname)
{
	for (size_t i = 0; i < unsent.n; i++)
		if (strcmp(unsent.v[i].hostname, hostname) == 0)
			return &unsent.v[i];
	return NULL;
}

static int unsent_note(const char *hostname, enum mxq_power_node_state to)
{
	struct unsent_intent *u = unsent_find(hostname), *m;

	if (!u) {
		m = realloc(unsent.v, (unsent.n + 1) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		unsent.v = m;
		if (!(m[unsent.n].hostname = strdup(hostname)))
			return -ENOMEM;
		u = &m[unsent.n++];
	}
	u->to = to;
	return 0;
}

static void unsent_drop(const char *hostname)
{
	struct unsent_intent *u = unsent_find(hostname);

	if (!u)
		return;
	free(u->hostname);
	*u = unsent.v[--unsent.n];
}

static void unsent_clear(void)
{
	for (size_t i = 0; i < unsent.n; i++)
		free(unsent.v[i].hostname);
	free(unsent.v);
	unsent.v = NULL;
	unsent.n = 0;
}

/* Whether N (host H) is in a state this leader wrote and never sent the
 * call of; forgets an intent the node has left. */
static bool intent_unsent(const struct mxq_power_host *h, const struct mxq_power_node *n)
{
	const struct unsent_intent *u = unsent_find(h->hostname);

	if (!u)
		return false;
	if (u->to == n->state && !pm.lease.new_term)
		return true;
	unsent_drop(h->hostname);
	return false;
}

/* The ssh drain already sent for this DRAINING period of H. */
static struct ssh_drain_sent *drain_sent(const struct mxq_power_host *h)
{
	for (size_t k = 0; k < tp.n_drains; k++)
		if (strcmp(tp.drains[k].hostname, h->hostname) == 0)
			return &tp.drains[k];
	return NULL;
}

static void remember_drain(const struct mxq_power_host *h, int64_t since)
{
	struct ssh_drain_sent *d = drain_sent(h), *m;
	char *name;

	if (!d) {
		m = realloc(tp.drains, (tp.n_drains + 1) * sizeof(*m));
		name = strdup(h->hostname);
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
	d->state_since = since;
}

/*
 * What the leader knows about node I beyond the tables, for the policy:
 * which transports can act on it, the results of the calls made for its
 * present state, calls still running, and an earlier leader's window. The
 * status question for the next tick is asked here too when it is due (a
 * read, not a decision). ASK: the reconcile interval is due. Without ACT
 * (dry run, lease past its deadline) only whether it is managed at all.
 */
static void node_facts(struct mxq_power_db_snapshot *s, size_t i, bool ask, bool act)
{
	struct mxq_power_node *n = &s->nodes[i];
	const struct mxq_power_host *h = &s->hosts[i];
	const struct mxqd_power_transport *off = mxqd_power_transport_find(h->transport_off);
	const struct mxqd_power_transport *st;
	const struct mxqd_power_work_result *res;
	const char *why = wake_impossible(h);
	struct ssh_drain_sent *d;

	if (!why)
		why = poweroff_impossible(h);
	if (why) {
		n->unmanaged_why = keep_text("%s", why);
		return;
	}
	if (!act)
		return;
	n->off_by_node = off && (off->caps & MXQD_TRANSPORT_NODE_OFF);
	n->can_cut = off && (off->caps & MXQD_TRANSPORT_CAN_HARD_OFF);
	n->ssh_drain = off && off->run;
	n->ssh_drain_sent = n->ssh_drain && (d = drain_sent(h)) && d->state_since == n->state_since;
	n->off_call_busy = (n->state == MXQ_POWER_POWERING_OFF &&
			    (mxqd_power_work_busy(h->hostname, MXQD_WORK_OFF_SOFT) ||
			     mxqd_power_work_busy(h->hostname, MXQD_WORK_OFF_HARD))) ||
			   (n->state == MXQ_POWER_DRAINING && mxqd_power_work_busy(h->hostname, MXQD_WORK_RUN));
	n->fence_until = fence_of(h->hostname, s->now);
	n->inherited = pm.lease.new_term &&
		       (n->state == MXQ_POWER_POWERING_ON || n->state == MXQ_POWER_POWERING_OFF);
	n->intent_unsent = intent_unsent(h, n);
	for (size_t k = 0; k < tp.n_results; k++) {
		const struct mxqd_power_work_result *r = &tp.results[k];

		if (r->refused || r->rc >= 0 || r->kind == MXQD_WORK_STATUS || r->tag.state < 0 ||
		    strcmp(r->hostname, h->hostname) != 0)
			continue;
		if (r->tag.state == (int)n->state) {
			n->failed_call = keep_text("%s of %s failed after %.2f s: %s", work_what(r->kind),
						   h->hostname, (double)r->ms / 1000.0, r->err);
			mx_log_err("power: %s", n->failed_call ? n->failed_call : r->err);
		} else
			mx_log_warning("power: %s of %s failed after %.2f s: %s (the node has moved on "
				       "since)", work_what(r->kind), h->hostname,
				       (double)r->ms / 1000.0, r->err);
	}
	if ((res = result_for(h, n, MXQD_WORK_OFF_HARD)) && res->rc >= 0)
		n->hard_off_done = true;
	st = status_transport(h);
	if (!st)
		return;
	n->power_readable = true;
	n->power_source = st->name;
	if ((res = result_for(h, n, MXQD_WORK_STATUS)) && res->rc >= 0) {
		n->power_read = true;
		n->power_reading = res->rc;
	}
	/* the answer comes back at a later tick */
	if ((n->state == MXQ_POWER_POWERING_OFF && (n->can_cut || n->seen_down)) ||
	    ((n->state == MXQ_POWER_ON || n->state == MXQ_POWER_DRAINING) && n->daemon_gone) ||
	    (ask && (n->state == MXQ_POWER_ON || n->state == MXQ_POWER_OFF) && !h->admin_request[0]))
		ask_status(h, n);
}

/* ------------------------------------------------------------- node side */

static void node_job_ended(void *ctx, struct mxqd_server *server, const struct mxqd_job *job,
			   int final_status)
{
	int r;

	/* last_job_end only tells how long an idle node has been idle: only the
	 * end of the last running job (still counted here) makes the node idle,
	 * so a busy node writes nothing per job (dispatch fast path) */
	if (server->jobs_running > 1)
		return;
	r = mxq_power_db_node_job_ended(server->db, server->hostname);
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

/* Whether the leader looks for new pending jobs between its ticks now:
 * polls on, and the lease valid by its local deadline. */
static bool polling(void)
{
	return pm.opt.poll_s > 0 && mxq_power_lease_valid(&pm.lease);
}

uint64_t mxqd_power_next_tick_in_ms(void)
{
	uint64_t now = mx_now_monotonic_ms(), next;

	if (!pm.opt.manager)
		return UINT64_MAX;
	next = pm.next_tick_ms;
	/* as poll_pending(): a poll it would not make must not wake the loop
	 * (it would find the poll still due, and spin) */
	if (polling() && pm.next_poll_ms < next)
		next = pm.next_poll_ms;
	return next > now ? next - now : 0;
}

static void warn_other_config(struct mxqd_server *server)
{
	char hash[sizeof(pm.config_hash)], holder[256];

	if (mxq_power_lease_published(server->db, hash, sizeof(hash), holder, sizeof(holder)) < 0)
		return;
	if (hash[0] && strcmp(hash, pm.config_hash) != 0 && strcmp(hash, pm.warned_hash) != 0) {
		mx_log_warning("power: the leader %s runs power.conf with hash %s, this candidate has %s: "
			       "the policy will change if this candidate takes over - keep power.conf "
			       "identical on every --power-manager",
			       holder, hash, pm.config_hash);
		snprintf(pm.warned_hash, sizeof(pm.warned_hash), "%s", hash);
	}
}

/* Send the call that goes with action A (its transition or event is
 * written). Returns 0, or a negative errno with errbuf when none could be
 * started. */
static int actuate(struct mxq_power_db_snapshot *s, const struct mxq_power_action *a,
		   char *errbuf, size_t errlen)
{
	const struct mxq_power_host *h = &s->hosts[a->node_index];
	const struct mxq_power_node *n = &s->nodes[a->node_index];
	struct mxqd_power_work_tag tag = { .state = (int)a->to, .state_since = s->now };
	/* a re-sent call carries no state: its failure is left to the deadline */
	struct mxqd_power_work_tag untagged = { .state = -1 };
	const struct mxqd_power_transport *off = mxqd_power_transport_find(h->transport_off);

	switch (a->kind) {
	case MXQ_POWER_ACTION_WAKE:
		return actuate_wake(h, tag, errbuf, errlen);
	case MXQ_POWER_ACTION_POWER_OFF:
		return actuate_power_off(h, tag, errbuf, errlen);
	case MXQ_POWER_ACTION_RESEND:
		return a->to == MXQ_POWER_POWERING_ON ? actuate_wake(h, untagged, errbuf, errlen) :
		       actuate_power_off(h, untagged, errbuf, errlen);
	case MXQ_POWER_ACTION_HARD_OFF:
		return send_work(off, h, MXQD_WORK_OFF_HARD, tag_of(n), NULL, errbuf, errlen);
	case MXQ_POWER_ACTION_SSH_DRAIN:
		remember_drain(h, n->state_since);
		return send_work(off, h, MXQD_WORK_RUN, tag_of(n), tp.cfg.ssh_drain_command, errbuf,
				 errlen);
	default:
		return 0;
	}
}

/*
 * Carry out action A: its fenced write (a transition with its event, or an
 * event for an action that leaves the node where it is), then its call.
 * A call that cannot even be started marks the node FAILED at once.
 * Returns the write's result: 1 done, 0 fenced or moved on, negative errno
 * (ends the tick).
 */
static int execute(struct mxqd_server *server, struct mxq_power_db_snapshot *s,
		   const struct mxq_power_action *a)
{
	const struct mxq_power_node *n = &s->nodes[a->node_index];
	char err[512] = "";
	uint64_t jobs = 0;
	/* a call follows the write: until it runs, the intent may be unsent */
	bool calls = a->kind == MXQ_POWER_ACTION_WAKE || a->kind == MXQ_POWER_ACTION_POWER_OFF ||
		     a->kind == MXQ_POWER_ACTION_RESEND;
	int r;

	if (calls && (r = unsent_note(a->hostname, a->to)) < 0)
		return r;
	switch (a->kind) {
	case MXQ_POWER_ACTION_ADMIN_DONE:
		return mxq_power_db_admin_request_done(server->db, &pm.lease, a->hostname,
						       s->hosts[a->node_index].admin_request,
						       n->admin_off);
	case MXQ_POWER_ACTION_RESOLVE_JOBS:
		r = mxq_power_db_resolve_jobs(server->db, &pm.lease, a->hostname, a->from,
					      n->admin_off, s->now, a->reason, &jobs);
		if (r == 1 && jobs)
			mx_log_warning("power: %s: %" PRIu64 " job(s) marked UNKNOWN: %s", a->hostname,
				       jobs, a->reason);
		return r;
	case MXQ_POWER_ACTION_HARD_OFF:
	case MXQ_POWER_ACTION_SSH_DRAIN:
		r = mxq_power_db_note(server->db, &pm.lease, a->hostname, a->from, a->reason);
		break;
	default:
		r = mxq_power_db_transition(server->db, &pm.lease, a->hostname, a->from, a->to,
					    a->reason);
		break;
	}
	if (r != 1)
		return r; /* fenced, or the row moved meanwhile: next tick decides again */
	if (mxq_power_action_is_transition(a->kind))
		mx_log_notice("power: %s %s -> %s: %s", a->hostname, mxq_power_state_to_string(a->from),
			      mxq_power_state_to_string(a->to), a->reason);
	else
		mx_log_notice("power: %s %s", a->hostname, a->reason);
	if (!mxq_power_lease_valid(&pm.lease))
		return 1;  /* nothing is sent past the deadline: our next tick (intent_unsent),
			    * our next term or the next leader sends it */
	if (actuate(s, a, err, sizeof(err)) >= 0) {
		if (calls)
			unsent_drop(a->hostname);
		return 1;
	}
	mx_log_err("power: %s %s failed: %s", mxq_power_action_to_string(a->kind), a->hostname, err);
	r = mxq_power_db_transition(server->db, &pm.lease, a->hostname, a->to, MXQ_POWER_FAILED, err);
	return r < 0 ? r : 1;
}

/*
 * The tick, DESIGN §3: renew the lease -> read the snapshot (tables,
 * transport settings and results, an earlier leader's in-flight windows)
 * -> decide -> for each action: its fenced write, then its call ->
 * explanations and policy state. Database errors end the tick; the next
 * one starts from a fresh snapshot.
 */
static int leader_tick(struct mxqd_server *server)
{
	struct mxq_power_db_snapshot *s = NULL;
	struct mxq_power_plan plan = { 0 };
	int64_t hb_timeout = pm.opt.node_timeout_s > 0 ? (int64_t)pm.opt.node_timeout_s :
			     3 * (int64_t)server->heartbeat_interval_s + 5;
	uint64_t now_ms = mx_now_monotonic_ms();
	bool ask = false;
	int r;

	/* what our workers answered, also when we lost the lease: a refused
	 * call is logged by the candidate that made it */
	collect_results();

	/* 1. renew the lease */
	r = mxq_power_lease_acquire(server->db, &pm.lease, (unsigned)(pm.opt.lease_s * 1000),
				    (unsigned)(pm.opt.tick_s * 1000 / 2), pm.config_hash,
				    pm.cfg.dry_run);
	if (r < 0)
		return r;
	if (r == 0) {
		unsent_clear();  /* another leader's now: it sends what it inherits */
		warn_other_config(server);
		return 0;
	}
	if (pm.lease.new_term) {
		unsent_clear();  /* inherited transitions are sent again anyway */
		mx_log_notice("power: this mxqd is the power manager now (epoch %" PRIu64 ", config %s%s)",
			      pm.lease.epoch, pm.config_hash, pm.cfg.dry_run ? ", dry run" : "");
		r = mxq_power_state_load(server->db, &pm.policy_state);
		if (r < 0)
			return r;
	}

	/* 2. the snapshot, and the newest pending job in it or before it */
	if (pm.opt.poll_s > 0 && (r = mxq_power_db_newest_pending(server->db, &pm.seen_pending)) < 0)
		return r;
	r = mxq_power_db_snapshot_read(server->db, hb_timeout, &s);
	if (r < 0)
		return r;
	r = read_extras(server->db);
	if (r < 0)
		goto out;
	/* a term of our own epoch again (the lease lapsed, nobody else took
	 * it): no other leader's calls can be in flight */
	if (pm.lease.new_term && !pm.cfg.dry_run && pm.lease.epoch != pm.held_epoch)
		inherit_fences(s);
	pm.held_epoch = pm.lease.epoch;
	if (pm.opt.reconcile_s > 0 && !tp.next_reconcile_ms) /* first one an interval after start */
		tp.next_reconcile_ms = now_ms + (uint64_t)(pm.opt.reconcile_s * 1000);
	if (pm.opt.reconcile_s > 0 && now_ms >= tp.next_reconcile_ms) {
		ask = true;
		tp.next_reconcile_ms = now_ms + (uint64_t)(pm.opt.reconcile_s * 1000);
	}
	for (size_t i = 0; i < s->snap.n_nodes; i++)
		if (!s->nodes[i].excluded)
			node_facts(s, i, ask, !pm.cfg.dry_run && mxq_power_lease_valid(&pm.lease));
	s->snap.soft_off_deadline_s = (int64_t)ceil(pm.opt.soft_off_deadline_s);
	s->snap.ssh_drain_after_s = (int64_t)ceil(2 * pm.opt.tick_s);
	s->snap.reconcile_due = ask;

	/* 3. decide */
	r = mxq_power_decide(&s->snap, s->now, &pm.cfg, &pm.policy_state, &plan);
	if (r < 0)
		goto out;

	/* 4. carry it out */
	r = 0;
	for (size_t i = 0; i < plan.n_actions && mxq_power_lease_valid(&pm.lease); i++) {
		const struct mxq_power_action *a = &plan.actions[i];

		if (plan.dry_run) {
			mx_log_info("power: dry run: would %s %s (%s -> %s): %s",
				    mxq_power_action_to_string(a->kind), a->hostname,
				    mxq_power_state_to_string(a->from), mxq_power_state_to_string(a->to),
				    a->reason);
			continue;
		}
		r = execute(server, s, a);
		if (r < 0)
			goto out;
	}

	/* 5. explanations and the policy state */
	r = mxq_power_db_explain_plan(server->db, &pm.lease, s, &plan, NULL);
	if (r < 0)
		goto out;
	if (mxq_power_lease_valid(&pm.lease))
		r = mxq_power_state_save(server->db, &pm.lease, &pm.policy_state, plan.summary);
	if (r == -ESTALE)
		r = 0;
out:
	mxq_power_plan_free(&plan);
	mxq_power_db_snapshot_free(s);
	tick_text_free();
	return r < 0 ? r : 0;
}

/*
 * Between ticks the leader looks every --power-poll seconds for a job
 * submitted since its last decision that still waits, and decides at once
 * when there is one: a job that needs a host woken then waits for the boot,
 * not for the boot and the rest of a tick. Extra decisions wait until ten
 * times the last one's duration has passed since it, so that however fast
 * jobs are submitted, they take at most a tenth of the leader's time.
 * 1 when it is time to decide.
 */
static int poll_pending(struct mxqd_server *server, uint64_t now)
{
	uint64_t newest = 0;
	int r;

	if (!polling() || now < pm.next_poll_ms)
		return 0;
	pm.next_poll_ms = now + (uint64_t)(pm.opt.poll_s * 1000);
	r = mxq_power_db_newest_pending(server->db, &newest);
	if (r < 0)
		return r;
	return newest > pm.seen_pending;
}

int mxqd_power_leader_tick(struct mxqd_server *server)
{
	uint64_t now = mx_now_monotonic_ms();
	bool was_held = pm.lease.held;
	int r;

	if (!pm.opt.manager)
		return 0;
	if (now < pm.next_tick_ms) {
		r = poll_pending(server, now);
		if (r <= 0)
			return r;
		/* an extra decision: the ticks keep their pace */
	} else {
		pm.next_tick_ms = now + (uint64_t)(pm.opt.tick_s * 1000);
	}
	r = leader_tick(server);
	{
		uint64_t done = mx_now_monotonic_ms(), pause = (uint64_t)(pm.opt.poll_s * 1000);
		if (pause < 10 * (done - now))
			pause = 10 * (done - now);
		pm.next_poll_ms = done + pause;
	}
	if (was_held && !pm.lease.held)
		mx_log_warning("power: lost the power manager lease (epoch %" PRIu64 ")", pm.lease.epoch);
	return r;
}

void mxqd_power_fini(struct mxqd_server *server)
{
	/* before the lease goes: a worker still before its deadline check
	 * would otherwise make its call after another candidate took over */
	mxqd_power_work_stop_all();
	if (pm.opt.manager && pm.lease.held) {
		if (mxq_power_lease_release(server->db, &pm.lease) < 0)
			mx_log_warning("power: cannot release the lease: %s", mx_db_error(server->db));
		else
			mx_log_notice("power: lease released");
	}
	mxq_power_config_done(&pm.cfg);
	transports_fini();
}
