/*
 * mxqd_ipmi - IPMI LAN sessions through libfreeipmi, shared by the ipmi
 * power transport (mxqd_power_ipmi.c) and the BMC energy source
 * (mxqd_energy_ipmi.c). The only header that includes libfreeipmi.
 */
#ifndef MXQD_IPMI_H
#define MXQD_IPMI_H

#include <stddef.h>

#include <freeipmi/freeipmi.h>

#include "mxqd_power_transport.h"

/*
 * Open a session to T's BMC (t->bmc_address "host[:port]", credentials
 * from t->secrets, workaround flags from t->ipmi_workarounds): IPMI 2.0
 * with cipher suite 3, IPMI 1.5 (MD5) for a BMC without 2.0, at
 * c->ipmi_privilege, each attempt bounded by c->ipmi_timeout_ms. 0, or a
 * negative errno (-EACCES rejected login, -ETIMEDOUT, -EINVAL, -EIO) with
 * one line naming the BMC in errbuf.
 */
int mxqd_ipmi_open_lan(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		       ipmi_ctx_t *ret_ctx, char *errbuf, size_t errlen);

/*
 * Why T cannot be reached over IPMI at all (no BMC address, no password,
 * credentials longer than IPMI allows, unknown workaround names), or NULL.
 * The reason is a constant or written to buf.
 */
const char *mxqd_ipmi_unusable(const struct mxqd_power_target *t,
			       const struct mxqd_power_transport_config *c, char *buf, size_t len);

/* 0 when NAMES (comma-separated ipmipower -W names) are all known, else
 * -EINVAL with the unknown one and the known ones in errbuf. */
int mxqd_ipmi_workarounds_check(const char *names, char *errbuf, size_t errlen);

/* Close and free a context; NULL is fine. */
void mxqd_ipmi_close(ipmi_ctx_t ctx);

/*
 * The negative errno for the last error of CTX, with one line in errbuf
 * naming the BMC and WHAT was asked: -EACCES, -ETIMEDOUT, -EINVAL, -EPROTO
 * (a completion code other than success), -EIO.
 */
int mxqd_ipmi_error(ipmi_ctx_t ctx, const struct mxqd_power_target *t,
		    const struct mxqd_power_transport_config *c, const char *what,
		    char *errbuf, size_t errlen);

#endif
