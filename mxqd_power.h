/*
 * mxqd_power - power management inside mxqd.
 *
 * Every mxqd takes part as a NODE: it registers its mxq_power row, refuses
 * claims while its host is being drained (the guard lives in the claim
 * UPDATE, mxqd_job.c), answers a drain (IDLE or BUSY), powers itself off
 * when its transport is "self", and records the end of every job.
 *
 * An mxqd started with --power-manager is also a CANDIDATE for the leader
 * lease; the leader runs one tick every --power-tick seconds:
 *   renew lease -> read snapshot (tables, transport settings and results,
 *   an earlier leader's in-flight windows) -> decide -> per action: fenced
 *   write, then the fenced transport call -> explanations -> save policy
 *   state
 */
#ifndef MXQD_POWER_H
#define MXQD_POWER_H

#include <stdbool.h>
#include <stdint.h>

#include "mxqd.h"

struct mxqd_power_options {
	bool manager;                 /* --power-manager: leader candidate */
	const char *config_path;      /* --power-config (default SYSCONFDIR/mxq/power.conf) */
	bool config_path_given;       /* a missing file is an error only when given */
	bool check_config;            /* --check-config: validate and exit */
	double tick_s;                /* --power-tick, default 10 */
	double lease_s;               /* --power-lease, default 30 (> 2 ticks) */
	double poll_s;                /* --power-poll: leader looks for new pending jobs
	                                 between ticks, default 1, 0 = never */
	const char *exec_command;     /* --power-exec-command: "CMD HOST on|off|status" */
	unsigned exec_timeout_s;      /* --power-exec-timeout, default 20 (keep < lease) */
	double node_timeout_s;        /* --power-node-timeout; 0 = 3 x heartbeat + 5 */
	const char *poweroff_command; /* --poweroff-command for transport "self" */
	bool node;                    /* take part as a node (default; --no-power-node) */
	/* transports (issue 5); see mxqd_power_transport.h */
	const char *secrets_path;     /* --power-secrets (default SYSCONFDIR/mxq/power-secrets) */
	bool secrets_path_given;      /* a missing file is an error only when given */
	double reconcile_s;           /* --power-reconcile-interval, default 60, 0 = never */
	double soft_off_deadline_s;   /* --power-soft-off-deadline: soft -> hard off, default 120 */
	double ipmi_timeout_s;        /* --power-ipmi-timeout: one session attempt, default 5 */
	unsigned ipmi_retries;        /* --power-ipmi-retries: after timeouts, default 2 */
	double ipmi_verify_s;         /* --power-ipmi-verify: on/hard off must show, default 10 */
	double redfish_timeout_s;     /* --power-redfish-timeout: one HTTPS request, default 10 */
	unsigned redfish_retries;     /* --power-redfish-retries: after timeouts, default 2 */
	unsigned wol_port;            /* --power-wol-port, default 9 */
	unsigned wol_count;           /* --power-wol-count, default 3 */
	unsigned ssh_timeout_s;       /* --power-ssh-timeout, default 10 (< lease) */
	const char *ssh_drain_command;    /* --power-ssh-drain-command, default "drain" */
	const char *ssh_poweroff_command; /* --power-ssh-poweroff-command, default "poweroff" */
	const char *ssh_known_hosts;  /* --power-ssh-known-hosts (default SYSCONFDIR/mxq/power-known-hosts) */
};

/* Defaults for the options above. */
void mxqd_power_options_init(struct mxqd_power_options *opt);

/*
 * Load and check the configuration (when manager or check_config) and
 * register the node's status hooks. Errors (config file:line messages, all
 * of them) are written to errbuf; returns 0 or negative errno.
 */
int mxqd_power_init(struct mxqd_server *server, const struct mxqd_power_options *opt,
		    char *errbuf, size_t errlen);

/* Node: after mxqd registered its daemon row. */
int mxqd_power_node_register(struct mxqd_server *server);

/*
 * Node: look at the own row and act on a drain or a power-off. Returns 0,
 * 1 when the daemon must stop now because its node powers off, or a
 * negative errno on database errors.
 */
int mxqd_power_node_tick(struct mxqd_server *server);

/* Leader candidate: run a tick if one is due. 0 or negative errno. */
int mxqd_power_leader_tick(struct mxqd_server *server);

/* Milliseconds until the next leader tick is due (UINT64_MAX if never). */
uint64_t mxqd_power_next_tick_in_ms(void);

/* Clean exit: give the lease up so another candidate takes over at once. */
void mxqd_power_fini(struct mxqd_server *server);

/*
 * Wipe and free the power secrets (BMC passwords, ssh key paths) of this
 * process. Called first in every child of mxqd that outlives the fork and
 * runs user code (the job reaper, the callback supervisor): they must not
 * carry what they never use. Power workers keep them.
 */
void mxqd_power_forget_secrets(void);

#endif
