/*
 * mxq_power_secrets - the power manager's secrets file (BMC credentials,
 * ssh key and known_hosts paths), /etc/mxq/power-secrets by default.
 *
 * Format (documented in README.md, "Power manager secrets"):
 *
 *   # comment
 *   [default]                 values for every host
 *   ipmi_user = ADMIN
 *   ipmi_password = ...
 *   [node017]                 values for one host (full or short name),
 *   ipmi_password = ...       overriding [default] key by key
 *
 * Keys: ipmi_user, ipmi_password, ssh_user, ssh_key, ssh_known_hosts,
 * redfish_user, redfish_password.
 * A value is the rest of the line after '=' with surrounding blanks removed.
 *
 * The file must be a regular file that neither group nor others can read or
 * write (mode 0600 or stricter); anything else is refused. Values never
 * leave this module except to the transports; memory holding them is
 * cleared on free.
 */
#ifndef MXQ_POWER_SECRETS_H
#define MXQ_POWER_SECRETS_H

#include <stddef.h>

struct mxq_power_secrets;

/* The merged values for one host; NULL where neither section set a key. */
struct mxq_power_host_secrets {
	const char *ipmi_user;
	const char *ipmi_password;
	const char *ssh_user;
	const char *ssh_key;
	const char *ssh_known_hosts;
	const char *redfish_user;
	const char *redfish_password;
};

/*
 * Load PATH. Refuses (-EPERM) a file that group or others can access, with
 * a message naming the file and its mode in errbuf; -ENOENT and other
 * errnos with the file named too; -EINVAL for syntax errors (file:line).
 * On success *ret is owned by the caller (mxq_power_secrets_free()).
 */
int mxq_power_secrets_load(const char *path, struct mxq_power_secrets **ret,
			   char *errbuf, size_t errlen);

/* Clear and free; NULL is fine. */
void mxq_power_secrets_free(struct mxq_power_secrets *s);

/*
 * The values that apply to HOSTNAME ([HOSTNAME], then [SHORTNAME], then
 * [default]). The strings belong to s. s may be NULL (all NULL then).
 */
void mxq_power_secrets_for(const struct mxq_power_secrets *s, const char *hostname,
			   struct mxq_power_host_secrets *ret);

/*
 * Check that PATH is a regular file not accessible by group or others.
 * 0, or negative errno with a message naming the file in errbuf.
 */
int mxq_power_secrets_check_private(const char *path, const char *what, char *errbuf,
				    size_t errlen);

#endif
