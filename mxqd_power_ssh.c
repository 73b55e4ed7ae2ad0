/*
 * mxqd_power_ssh - the "ssh" transport: run a command on the node with
 * libssh (drain for mxqds too old for the drain protocol, then poweroff).
 *
 * Configuration: per host ssh_address ("host[:port]", default the
 * hostname, port 22); from the secrets file ssh_user (default root),
 * ssh_key (a private key file only root can read) and ssh_known_hosts
 * (default --power-ssh-known-hosts); --power-ssh-timeout bounds connect,
 * login and the command together; the commands themselves are mxqd
 * options (--power-ssh-drain-command, --power-ssh-poweroff-command). The
 * site restricts the key on the node (authorized_keys command=...,restrict;
 * README.md "Restricted ssh key for the power manager").
 *
 * Host keys are checked against that one known_hosts file only (no
 * ~/.ssh/config, no global file): an unknown or changed key is refused with
 * a message naming the file to fix. Errors: negative errno, one line.
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libssh/libssh.h>

#include "mx_util.h"

static const char *known_hosts_of(const struct mxqd_power_target *t,
				  const struct mxqd_power_transport_config *c)
{
	return t->secrets.ssh_known_hosts ? t->secrets.ssh_known_hosts : c->ssh_default_known_hosts;
}

static const char *ssh_unusable(const struct mxqd_power_target *t,
				const struct mxqd_power_transport_config *c, char *buf, size_t len)
{
	if (!t->secrets.ssh_key)
		return "transport ssh needs ssh_key in the power secrets file";
	if (!known_hosts_of(t, c))
		return "transport ssh needs ssh_known_hosts in the power secrets file";
	return NULL;
}

/* Split "host[:port]" ("[v6]:port" too) into host and port. */
static void split_address(const char *addr, char *host, size_t hostlen, unsigned *port)
{
	const char *colon;

	*port = 22;
	if (addr[0] == '[' && (colon = strchr(addr, ']'))) {
		snprintf(host, hostlen, "%.*s", (int)(colon - addr - 1), addr + 1);
		if (colon[1] == ':')
			*port = (unsigned)strtoul(colon + 2, NULL, 10);
		return;
	}
	colon = strchr(addr, ':');
	if (colon && !strchr(colon + 1, ':')) {
		snprintf(host, hostlen, "%.*s", (int)(colon - addr), addr);
		*port = (unsigned)strtoul(colon + 1, NULL, 10);
	} else {
		snprintf(host, hostlen, "%s", addr);
	}
}

static int ssh_connect_verified(ssh_session s, const struct mxqd_power_target *t,
				const struct mxqd_power_transport_config *c, const char *where,
				char *errbuf, size_t errlen)
{
	const char *kh = known_hosts_of(t, c);
	ssh_key key = NULL;
	enum ssh_known_hosts_e known;
	int r;

	if (ssh_connect(s) != SSH_OK) {
		snprintf(errbuf, errlen, "ssh %s: cannot connect: %s", where, ssh_get_error(s));
		return -EHOSTUNREACH;
	}
	known = ssh_session_is_known_server(s);
	switch (known) {
	case SSH_KNOWN_HOSTS_OK:
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		snprintf(errbuf, errlen, "ssh %s: host key CHANGED (does not match %s): refused; if the "
			 "node was reinstalled, replace its line in %s", where, kh, kh);
		return -EPERM;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		snprintf(errbuf, errlen, "ssh %s: host key UNKNOWN (not in %s): refused; add the node's "
			 "key to %s (ssh-keyscan)", where, kh, kh);
		return -EPERM;
	default:
		snprintf(errbuf, errlen, "ssh %s: cannot check the host key against %s: %s", where, kh,
			 ssh_get_error(s));
		return -EIO;
	}
	if (ssh_pki_import_privkey_file(t->secrets.ssh_key, NULL, NULL, NULL, &key) != SSH_OK) {
		snprintf(errbuf, errlen, "ssh %s: cannot read the private key %s", where, t->secrets.ssh_key);
		return -EINVAL;
	}
	r = ssh_userauth_publickey(s, NULL, key);
	ssh_key_free(key);
	if (r != SSH_AUTH_SUCCESS) {
		snprintf(errbuf, errlen, "ssh %s: key %s was not accepted", where, t->secrets.ssh_key);
		return -EACCES;
	}
	return 0;
}

static int ssh_run(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   const char *command, char *errbuf, size_t errlen)
{
	char host[256], where[300], keyerr[512];
	const char *user = t->secrets.ssh_user ? t->secrets.ssh_user : "root";
	const char *kh = known_hosts_of(t, c);
	uint64_t deadline = mx_now_monotonic_ms() + c->ssh_timeout_s * 1000ULL;
	long timeout = (long)c->ssh_timeout_s, zero = 0;
	ssh_channel ch = NULL;
	unsigned port;
	int on = 0, exit_status, r;
	ssh_session s;

	if (ssh_unusable(t, c, NULL, 0)) {
		snprintf(errbuf, errlen, "%s", ssh_unusable(t, c, NULL, 0));
		return -EINVAL;
	}
	r = mxq_power_secrets_check_private(t->secrets.ssh_key, "ssh key", keyerr, sizeof(keyerr));
	if (r < 0) {
		snprintf(errbuf, errlen, "%s", keyerr);
		return r;
	}
	split_address(t->ssh_address[0] ? t->ssh_address : t->hostname, host, sizeof(host), &port);
	snprintf(where, sizeof(where), "%s@%s:%u", user, host, port);
	s = ssh_new();
	if (!s)
		return -ENOMEM;
	if (ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &on) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_HOST, host) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_PORT, &port) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_USER, user) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, kh) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null") < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) < 0 ||
	    ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &zero) < 0) {
		snprintf(errbuf, errlen, "ssh %s: cannot set session options: %s", where, ssh_get_error(s));
		ssh_free(s);
		return -EINVAL;
	}
	r = ssh_connect_verified(s, t, c, where, errbuf, errlen);
	if (r < 0)
		goto out;
	ch = ssh_channel_new(s);
	if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, command) != SSH_OK) {
		snprintf(errbuf, errlen, "ssh %s: cannot run '%s': %s", where, command, ssh_get_error(s));
		r = -EIO;
		goto out;
	}
	for (;;) {
		char buf[1024];
		uint64_t now = mx_now_monotonic_ms();
		int n;

		if (ssh_channel_is_eof(ch))
			break;
		if (now >= deadline) {
			snprintf(errbuf, errlen, "ssh %s: '%s' did not finish within %u s: cut", where,
				 command, c->ssh_timeout_s);
			r = -ETIMEDOUT;
			goto out;
		}
		n = ssh_channel_read_timeout(ch, buf, sizeof(buf), 0,
					     (int)(deadline - now > 200 ? 200 : deadline - now));
		if (n == SSH_ERROR) {
			snprintf(errbuf, errlen, "ssh %s: '%s': connection lost: %s", where, command,
				 ssh_get_error(s));
			r = -EIO;
			goto out;
		}
		if (n == 0)
			ssh_channel_read_timeout(ch, buf, sizeof(buf), 1, 0); /* drain stderr */
	}
	ssh_channel_send_eof(ch);
	exit_status = ssh_channel_get_exit_status(ch);
	if (exit_status != 0) {
		if (exit_status < 0)
			snprintf(errbuf, errlen, "ssh %s: '%s' ended without an exit status", where, command);
		else
			snprintf(errbuf, errlen, "ssh %s: '%s' exited with status %d", where, command,
				 exit_status);
		r = -EIO;
	}
out:
	if (ch) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	ssh_disconnect(s);
	ssh_free(s);
	return r;
}

static int ssh_off(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		   enum mxqd_power_off_mode mode, char *errbuf, size_t errlen)
{
	return ssh_run(t, c, c->ssh_poweroff_command, errbuf, errlen);
}

const struct mxqd_power_transport mxqd_power_transport_ssh = {
	.name = "ssh",
	.caps = MXQD_TRANSPORT_CAN_OFF | MXQD_TRANSPORT_CAN_RUN,
	.unusable = ssh_unusable,
	.power_off = ssh_off,
	.run = ssh_run,
};
