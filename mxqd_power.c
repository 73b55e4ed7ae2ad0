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
 * Errors: database errors end the tick (the next tick starts from a fresh
 * snapshot); a failed actuation marks the node FAILED with the reason. The
 * leader never writes after its local lease deadline.
 */
#define _GNU_SOURCE
#include "mxqd_power.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
#include "mxq_power_policy.h"
#include "mxq_status.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define CONFIG_MAX_BYTES (1 << 20)

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
		.config_path = SYSCONFDIR "/mxq/power.conf",
		.tick_s = 10,
		.lease_s = 30,
		.exec_timeout_s = 60,
		.poweroff_command = "/sbin/poweroff",
		.node = true,
	};
}

/* ---------------------------------------------------------- configuration */

static int read_file(const char *path, char **ret_text)
{
	struct stat st;
	char *text;
	ssize_t n;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size > CONFIG_MAX_BYTES) {
		r = st.st_size > CONFIG_MAX_BYTES ? -EFBIG : -errno;
		close(fd);
		return r;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, text, (size_t)st.st_size);
	close(fd);
	if (n < 0) {
		free(text);
		return -errno;
	}
	text[n] = '\0';
	*ret_text = text;
	return 0;
}

static int load_config(const struct mxqd_power_options *opt, char *errbuf, size_t errlen)
{
	char *text = NULL;
	int r;

	mxq_power_config_defaults(&pm.cfg);
	r = read_file(opt->config_path, &text);
	if (r == -ENOENT && !opt->config_path_given) {
		/* no file: the documented defaults */
	} else if (r < 0) {
		snprintf(errbuf, errlen, "%s: %s", opt->config_path, strerror(-r));
		return r;
	} else {
		r = mxq_power_config_parse(&pm.cfg, text, opt->config_path, errbuf, errlen);
		free(text);
		if (r < 0)
			return r;
	}
	snprintf(pm.config_hash, sizeof(pm.config_hash), "%016" PRIx64, mxq_power_config_hash(&pm.cfg));
	return 0;
}

/* ----------------------------------------------------------- transports */

/*
 * Run the exec transport: CMD HOST ACTION, stdin /dev/null, stdout captured
 * (for "status"), killed after the timeout. Returns 0 on exit status 0,
 * otherwise -EIO with a reason in errbuf.
 */
static int exec_transport(const char *host, const char *action, char *out, size_t outlen,
			  char *errbuf, size_t errlen)
{
	const char *cmd = pm.opt.exec_command;
	uint64_t deadline = mx_now_monotonic_ms() + pm.opt.exec_timeout_s * 1000ULL;
	size_t got = 0;
	int fd, status = 0;
	pid_t pid;

	if (!cmd) {
		snprintf(errbuf, errlen, "no --power-exec-command configured");
		return -ENOTSUP;
	}
	pid = mx_fork_with_pipe(&fd);
	if (pid < 0)
		return (int)pid;
	if (pid == 0) {
		sigset_t none;
		int devnull = open("/dev/null", O_RDONLY);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		mx_log_close_other_fds(-1);
		execl(cmd, cmd, host, action, (char *)NULL);
		_exit(127);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		char buf[512];
		ssize_t n = read(fd, buf, sizeof(buf));
		pid_t w;

		if (n > 0) {
			size_t take = (size_t)n;
			if (out && got + 1 < outlen) {
				if (take > outlen - 1 - got)
					take = outlen - 1 - got;
				memcpy(out + got, buf, take);
				got += take;
			}
			continue;
		}
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (mx_now_monotonic_ms() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			close(fd);
			snprintf(errbuf, errlen, "'%s %s %s' did not finish within %u s", cmd, host, action,
				 pm.opt.exec_timeout_s);
			return -ETIMEDOUT;
		}
		usleep(20000);
	}
	close(fd);
	if (out)
		out[got] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		snprintf(errbuf, errlen, "'%s %s %s' exited with status %d", cmd, host, action,
			 WEXITSTATUS(status));
	else
		snprintf(errbuf, errlen, "'%s %s %s' ended by signal %d", cmd, host, action,
			 WTERMSIG(status));
	return -EIO;
}

/* Can the leader wake this host again? Nodes it could not wake are never
 * powered off. Returns NULL if yes, else why not. */
static const char *wake_impossible(const struct mxq_power_host *h)
{
	if (strcmp(h->transport_on, "exec") == 0)
		return pm.opt.exec_command ? NULL : "transport_on is exec but the leader has no --power-exec-command";
	return "transport_on is not supported by this mxqd (supported: exec)";
}

static const char *poweroff_impossible(const struct mxq_power_host *h)
{
	if (strcmp(h->transport_off, "self") == 0)
		return NULL;
	if (strcmp(h->transport_off, "exec") == 0)
		return pm.opt.exec_command ? NULL : "transport_off is exec but the leader has no --power-exec-command";
	return "transport_off is not supported by this mxqd (supported: self, exec)";
}

static int actuate_wake(const struct mxq_power_host *h, char *errbuf, size_t errlen)
{
	if (strcmp(h->transport_on, "exec") == 0)
		return exec_transport(h->hostname, "on", NULL, 0, errbuf, errlen);
	snprintf(errbuf, errlen, "cannot wake with transport '%s'", h->transport_on);
	return -ENOTSUP;
}

static int actuate_power_off(const struct mxq_power_host *h, char *errbuf, size_t errlen)
{
	if (strcmp(h->transport_off, "self") == 0)
		return 0; /* the node's own mxqd sees POWERING_OFF and powers off */
	if (strcmp(h->transport_off, "exec") == 0)
		return exec_transport(h->hostname, "off", NULL, 0, errbuf, errlen);
	snprintf(errbuf, errlen, "cannot power off with transport '%s'", h->transport_off);
	return -ENOTSUP;
}

/* What the transport says about the power of HOST: 1 on, 0 off, <0 unknown. */
static int transport_status(const struct mxq_power_host *h)
{
	char out[64], err[256];

	if (strcmp(h->transport_on, "exec") != 0 || !pm.opt.exec_command)
		return -ENOTSUP;
	if (exec_transport(h->hostname, "status", out, sizeof(out), err, sizeof(err)) < 0)
		return -EIO;
	if (strncmp(out, "off", 3) == 0)
		return 0;
	if (strncmp(out, "on", 2) == 0)
		return 1;
	return -EINVAL;
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
	if (opt->node)
		return mxqd_hooks_register(&node_hooks);
	return 0;
}

int mxqd_power_node_register(struct mxqd_server *server)
{
	if (!pm.opt.node)
		return 0;
	return mxq_power_db_node_register(server->db, server->hostname);
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

/* Mark the snapshot's nodes the leader cannot act on, and ask the transport
 * about nodes whose power-off must be confirmed. */
static void refine_snapshot(struct mxq_power_db_snapshot *s)
{
	for (size_t i = 0; i < s->snap.n_nodes; i++) {
		struct mxq_power_node *n = &s->nodes[i];
		const struct mxq_power_host *h = &s->hosts[i];

		if (!n->excluded && (wake_impossible(h) || poweroff_impossible(h)))
			n->excluded = true;
		if (n->state == MXQ_POWER_POWERING_OFF && n->seen_down) {
			int st = transport_status(h);
			if (st == 1)
				n->seen_down = false; /* mxqd is gone but the power is still on */
		}
	}
}

/* Carry out one action whose transition was written. */
static void actuate(struct mxqd_server *server, struct mxq_power_db_snapshot *s,
		    const struct mxq_power_action *a)
{
	const struct mxq_power_host *h = &s->hosts[a->node_index];
	char err[512] = "";
	int r = 0;

	if (a->kind == MXQ_POWER_ACTION_WAKE)
		r = actuate_wake(h, err, sizeof(err));
	else if (a->kind == MXQ_POWER_ACTION_POWER_OFF)
		r = actuate_power_off(h, err, sizeof(err));
	if (r >= 0)
		return;
	mx_log_err("power: %s %s failed: %s", mxq_power_action_to_string(a->kind), h->hostname, err);
	r = mxq_power_db_transition(server->db, &pm.lease, h->hostname, a->to, MXQ_POWER_FAILED, err);
	if (r < 0)
		mx_log_err("power: cannot mark %s FAILED: %s", h->hostname, mx_db_error(server->db));
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
	int64_t hb_timeout = 3 * (int64_t)server->heartbeat_interval_s + 5;
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
	refine_snapshot(s);
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
}
