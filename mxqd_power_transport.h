/*
 * mxqd_power_transport - one interface for every way the power manager can
 * switch a node: "self" (the node's own mxqd runs its poweroff command),
 * "exec" (a site command), "ipmi" (libfreeipmi, out of band), "redfish"
 * (libcurl, HTTPS to the BMC), "wol" (Wake-on-LAN magic packet), "ssh"
 * (libssh, a restricted command on the node). One small module each:
 * mxqd_power_exec.c (self and exec), mxqd_power_ipmi.c,
 * mxqd_power_redfish.c, mxqd_power_wol.c, mxqd_power_ssh.c.
 *
 * Contract for every operation: it returns within the bounds configured in
 * struct mxqd_power_transport_config (timeouts times retries), never logs,
 * and on failure returns a negative errno with one human-readable line in
 * errbuf that never contains a password.
 */
#ifndef MXQD_POWER_TRANSPORT_H
#define MXQD_POWER_TRANSPORT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxq_power_secrets.h"

/*
 * The process group of the command a transport runs at this moment (the
 * exec transport's child is the leader of its own group, so that its
 * timeout kills all it started), 0 when none. Set with SIGTERM blocked
 * around the fork, so that the worker's SIGTERM handler
 * (mxqd_power_work.c: the leader died) never misses a group it must kill.
 */
extern volatile sig_atomic_t mxqd_power_child_pgid;

/* Settings shared by all transports (mxqd options). */
struct mxqd_power_transport_config {
	const char *exec_command;      /* exec: "CMD HOST on|off|status" */
	unsigned exec_timeout_s;
	unsigned ipmi_timeout_ms;      /* one IPMI session attempt (--power-ipmi-timeout) */
	unsigned char ipmi_privilege;  /* session privilege, libfreeipmi's level; 0: ADMIN */
	unsigned ipmi_retries;         /* further attempts after a timeout (--power-ipmi-retries) */
	unsigned ipmi_verify_ms;       /* how long a power on / hard off may take to show */
	uint16_t wol_port;             /* --power-wol-port, default 9 */
	unsigned wol_count;            /* --power-wol-count, default 3 */
	unsigned ssh_timeout_s;        /* connect + command (--power-ssh-timeout) */
	const char *ssh_drain_command;    /* --power-ssh-drain-command */
	const char *ssh_poweroff_command; /* --power-ssh-poweroff-command */
	const char *ssh_default_known_hosts; /* used when the secrets file names none */
	unsigned redfish_timeout_ms;   /* one HTTPS request (--power-redfish-timeout) */
	unsigned redfish_retries;      /* further attempts after a timeout (--power-redfish-retries) */
};

/*
 * The longest one redfish power call of C may take: four requests' time per
 * attempt and the verify time. The leader fences an earlier leader's
 * calls by it, so the transport holds every call to it: no request starts
 * once it is used up, and each one's timeout is cut to what is left.
 */
uint64_t mxqd_power_redfish_bound_ms(const struct mxqd_power_transport_config *c);
/* The same for ipmi: attempts x --power-ipmi-timeout + --power-ipmi-verify;
 * no request (a retry's session, a status read, a Chassis Control) starts
 * that libfreeipmi could still retransmit after it, and the call ends as
 * final (-ETIME) when the next one would not fit. */
uint64_t mxqd_power_ipmi_bound_ms(const struct mxqd_power_transport_config *c);

/* One node as a transport sees it. Strings may be empty, never NULL. */
struct mxqd_power_target {
	const char *hostname;
	const char *bmc_address;       /* host[:port] */
	const char *ipmi_workarounds;  /* comma-separated names, see mxqd_power_ipmi.c */
	const char *mac_address;
	const char *broadcast_address;
	const char *ssh_address;       /* host[:port]; empty: hostname */
	const char *redfish_system;    /* /redfish/v1/Systems/ID; empty: the first member */
	const char *redfish_ca;        /* PEM CA file for the BMC's certificate; empty: system CAs */
	bool redfish_insecure;         /* redfish_tls=insecure: no TLS verification */
	bool redfish_basic;            /* redfish_auth=basic: no session */
	struct mxq_power_host_secrets secrets;
};

enum mxqd_power_off_mode {
	MXQD_POWER_OFF_SOFT,           /* orderly (ACPI, poweroff command) */
	MXQD_POWER_OFF_HARD,           /* cut the power now */
};

enum {
	MXQD_TRANSPORT_CAN_ON       = 1 << 0,
	MXQD_TRANSPORT_CAN_OFF      = 1 << 1,
	MXQD_TRANSPORT_CAN_HARD_OFF = 1 << 2,  /* power_off(HARD) is a real power cut */
	MXQD_TRANSPORT_CAN_STATUS   = 1 << 3,  /* reads the real power state */
	MXQD_TRANSPORT_CAN_RUN      = 1 << 4,  /* run(): a command on the node (ssh) */
	MXQD_TRANSPORT_NODE_OFF     = 1 << 5,  /* the node powers itself off (self) */
};

struct mxqd_power_transport {
	const char *name;
	unsigned caps;
	/* NULL if the transport can act on T, else why not (static text or
	 * written into buf). */
	const char *(*unusable)(const struct mxqd_power_target *t,
				const struct mxqd_power_transport_config *c, char *buf, size_t len);
	int (*power_on)(const struct mxqd_power_target *t,
			const struct mxqd_power_transport_config *c, char *errbuf, size_t errlen);
	int (*power_off)(const struct mxqd_power_target *t,
			 const struct mxqd_power_transport_config *c, enum mxqd_power_off_mode mode,
			 char *errbuf, size_t errlen);
	/* 1 power on, 0 power off, negative errno when unknown. */
	int (*status)(const struct mxqd_power_target *t,
		      const struct mxqd_power_transport_config *c, char *errbuf, size_t errlen);
	/* Run COMMAND on the node: 0 on exit status 0, -EIO for another exit
	 * status, -ETIMEDOUT when cut at the timeout. */
	int (*run)(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   const char *command, char *errbuf, size_t errlen);
};

extern const struct mxqd_power_transport mxqd_power_transport_self;
extern const struct mxqd_power_transport mxqd_power_transport_exec;
extern const struct mxqd_power_transport mxqd_power_transport_ipmi;
extern const struct mxqd_power_transport mxqd_power_transport_redfish;
extern const struct mxqd_power_transport mxqd_power_transport_wol;
extern const struct mxqd_power_transport mxqd_power_transport_ssh;

/* One try of operation OP (the transport's own numbering) on T. */
typedef int (*mxqd_power_attempt_fn)(const struct mxqd_power_target *t,
				     const struct mxqd_power_transport_config *c, int op,
				     char *errbuf, size_t errlen);

/*
 * ATTEMPT once and, while its result is RETRYABLE, up to RETRIES more
 * times, NAP_MS apart (mxqd_power_retry.c). After more than one failed
 * attempt the reason in errbuf ends in " (N attempts)". The last result.
 * The whole call is BOUND_MS long at most (the transport's promise, which
 * the leader fences by): meanwhile mxqd_power_call_deadline_ms() says
 * until when, and the attempts send nothing that could arrive later.
 */
int mxqd_power_retry(mxqd_power_attempt_fn attempt, const struct mxqd_power_target *t,
		     const struct mxqd_power_transport_config *c, int op, unsigned retries,
		     bool (*retryable)(int r), unsigned nap_ms, uint64_t bound_ms, char *errbuf,
		     size_t errlen);

/* The end of the running mxqd_power_retry() call's bound (mx_now_boottime_ms
 * clock), 0 outside one. A worker process makes one call at a time. */
uint64_t mxqd_power_call_deadline_ms(void);

/* The transport called NAME, or NULL. */
static inline const struct mxqd_power_transport *mxqd_power_transport_find(const char *name)
{
	static const struct mxqd_power_transport *const all[] = {
		&mxqd_power_transport_self, &mxqd_power_transport_exec, &mxqd_power_transport_ipmi,
		&mxqd_power_transport_wol, &mxqd_power_transport_ssh, &mxqd_power_transport_redfish,
	};
	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (__builtin_strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

#endif
