/*
 * mxq_power_secrets - parse the power manager's secrets file (see
 * mxq_power_secrets.h for the format).
 *
 * Configuration: one file, read once at mxqd start (and never written).
 * Errors: negative errno plus one line in the caller's buffer naming the
 * file (and line); no logging. The values are never copied into messages.
 */
#define _GNU_SOURCE
#include "mxq_power_secrets.h"
#include "mx_safefs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECRETS_MAX_BYTES (256 * 1024)

enum { K_IPMI_USER, K_IPMI_PASSWORD, K_SSH_USER, K_SSH_KEY, K_SSH_KNOWN_HOSTS, K_REDFISH_USER,
       K_REDFISH_PASSWORD, K_COUNT };

static const char *const key_names[K_COUNT] = {
	[K_IPMI_USER] = "ipmi_user",
	[K_IPMI_PASSWORD] = "ipmi_password",
	[K_SSH_USER] = "ssh_user",
	[K_SSH_KEY] = "ssh_key",
	[K_SSH_KNOWN_HOSTS] = "ssh_known_hosts",
	[K_REDFISH_USER] = "redfish_user",
	[K_REDFISH_PASSWORD] = "redfish_password",
};

struct section {
	char *name;
	char *value[K_COUNT];
};

struct mxq_power_secrets {
	struct section *sections;
	size_t n;
};

static void wipe_free(char *p)
{
	if (p) {
		explicit_bzero(p, strlen(p));
		free(p);
	}
}

void mxq_power_secrets_free(struct mxq_power_secrets *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->sections[i].name);
		for (int k = 0; k < K_COUNT; k++)
			wipe_free(s->sections[i].value[k]);
	}
	free(s->sections);
	free(s);
}

int mxq_power_secrets_check_private(const char *path, const char *what, char *errbuf,
				    size_t errlen)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int r = -errno;
		snprintf(errbuf, errlen, "%s %s: %s", what, path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(errbuf, errlen, "%s %s: not a regular file", what, path);
		return -EINVAL;
	}
	if (st.st_mode & 077) {
		snprintf(errbuf, errlen,
			 "%s %s is accessible by group or others (mode %04o): refused; "
			 "run chmod 600 %s", what, path, (unsigned)(st.st_mode & 07777), path);
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(errbuf, errlen, "%s %s: owned by uid %u, not by root or this user: refused",
			 what, path, (unsigned)st.st_uid);
		return -EPERM;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int add_section(struct mxq_power_secrets *s, const char *name)
{
	struct section *n = realloc(s->sections, (s->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->sections = n;
	memset(&n[s->n], 0, sizeof(n[s->n]));
	n[s->n].name = strdup(name);
	if (!n[s->n].name)
		return -ENOMEM;
	s->n++;
	return 0;
}

static int parse(struct mxq_power_secrets *s, char *text, const char *path, char *errbuf,
		 size_t errlen)
{
	unsigned lineno = 0;
	char *next = text;
	int r;

	while (next) {
		char *l = next, *eq, *key, *value;
		int k;

		next = strchr(next, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		l = trim(l);
		if (!*l || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			char *end = strchr(l, ']');
			if (!end || end[1] || end == l + 1) {
				snprintf(errbuf, errlen, "%s:%u: a section is written [default] or [HOSTNAME]",
					 path, lineno);
				return -EINVAL;
			}
			*end = '\0';
			r = add_section(s, trim(l + 1));
			if (r < 0)
				return r;
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			snprintf(errbuf, errlen, "%s:%u: expected 'key = value'", path, lineno);
			return -EINVAL;
		}
		*eq = '\0';
		key = trim(l);
		value = trim(eq + 1);
		for (k = 0; k < K_COUNT && strcmp(key, key_names[k]) != 0; k++)
			;
		if (k == K_COUNT) {
			snprintf(errbuf, errlen, "%s:%u: unknown key '%s' (known: ipmi_user, "
				 "ipmi_password, ssh_user, ssh_key, ssh_known_hosts, redfish_user, redfish_password)",
				 path, lineno, key);
			return -EINVAL;
		}
		if (!s->n) {
			snprintf(errbuf, errlen, "%s:%u: '%s' outside a section ([default] or [HOSTNAME])",
				 path, lineno, key);
			return -EINVAL;
		}
		wipe_free(s->sections[s->n - 1].value[k]);
		s->sections[s->n - 1].value[k] = strdup(value);
		if (!s->sections[s->n - 1].value[k])
			return -ENOMEM;
	}
	return 0;
}

int mxq_power_secrets_load(const char *path, struct mxq_power_secrets **ret,
			   char *errbuf, size_t errlen)
{
	struct mxq_power_secrets *s;
	struct stat st;
	char *text = NULL, why[600];
	size_t len = 0;
	int r;

	r = mx_read_config_file(path, SECRETS_MAX_BYTES, true, &text, &len, &st, why, sizeof(why));
	if (r < 0) {
		snprintf(errbuf, errlen, "power secrets file %s", why);
		return r;
	}
	if (st.st_mode & 077) {
		snprintf(errbuf, errlen,
			 "power secrets file %s is accessible by group or others (mode %04o): "
			 "refused; run chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
		explicit_bzero(text, len);
		free(text);
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(errbuf, errlen, "power secrets file %s: owned by uid %u, not by root or "
			 "this user: refused", path, (unsigned)st.st_uid);
		explicit_bzero(text, len);
		free(text);
		return -EPERM;
	}
	s = calloc(1, sizeof(*s));
	r = s ? parse(s, text, path, errbuf, errlen) : -ENOMEM;
	explicit_bzero(text, len);
	free(text);
	if (r < 0) {
		mxq_power_secrets_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

static const struct section *find(const struct mxq_power_secrets *s, const char *name, size_t len)
{
	for (size_t i = s->n; i-- > 0;)
		if (strlen(s->sections[i].name) == len && strncmp(s->sections[i].name, name, len) == 0)
			return &s->sections[i];
	return NULL;
}

void mxq_power_secrets_for(const struct mxq_power_secrets *s, const char *hostname,
			   struct mxq_power_host_secrets *ret)
{
	const struct section *chain[3] = { NULL, NULL, NULL };
	const char *v[K_COUNT] = { NULL };
	const char *dot;

	if (s && hostname) {
		dot = strchr(hostname, '.');
		chain[0] = find(s, hostname, strlen(hostname));
		if (dot)
			chain[1] = find(s, hostname, (size_t)(dot - hostname));
		chain[2] = find(s, "default", 7);
	}
	for (int k = 0; k < K_COUNT; k++)
		for (int c = 0; c < 3 && !v[k]; c++)
			if (chain[c])
				v[k] = chain[c]->value[k];
	*ret = (struct mxq_power_host_secrets) {
		.ipmi_user = v[K_IPMI_USER],
		.ipmi_password = v[K_IPMI_PASSWORD],
		.ssh_user = v[K_SSH_USER],
		.ssh_key = v[K_SSH_KEY],
		.ssh_known_hosts = v[K_SSH_KNOWN_HOSTS],
		.redfish_user = v[K_REDFISH_USER],
		.redfish_password = v[K_REDFISH_PASSWORD],
	};
}
