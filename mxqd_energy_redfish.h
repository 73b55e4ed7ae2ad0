/*
 * mxqd_energy_redfish - the node's power as its BMC reports it over
 * Redfish: the chassis' EnvironmentMetrics PowerWatts reading where the
 * BMC has it, else the older Power resource's PowerControl[]
 * PowerConsumedWatts.
 *
 * An HTTPS request to a BMC can take seconds, so the readings are taken by
 * a reader process of its own (forked at start, one reading per sampling
 * interval, results through a pipe); the main loop only picks up the latest
 * one (mxqd_energy_redfish_watts, the redfish_watts callback of struct
 * mxq_energy_source_config) and never waits for the BMC.
 */
#ifndef MXQD_ENERGY_REDFISH_H
#define MXQD_ENERGY_REDFISH_H

#include <stdbool.h>
#include <stddef.h>

/* What --energy-redfish says: "HOST[:PORT][,chassis=PATH][,ca=FILE]
 * [,tls=insecure][,auth=basic]"; "auto" instead of HOST[:PORT]: the
 * Redfish host interface the firmware describes (SMBIOS type 42). */
struct mxqd_energy_redfish_spec {
	char bmc[256];            /* empty with discover */
	bool discover;
	char chassis[512];        /* empty: the system's chassis, else the first one */
	char ca[512];             /* empty: the system's CAs */
	bool insecure;
	bool basic;
};

/* Parse SPEC. 0, or -EINVAL with one line naming --energy-redfish. */
int mxqd_energy_redfish_parse(const char *spec, struct mxqd_energy_redfish_spec *ret, char *errbuf,
			      size_t errlen);

struct mxqd_energy_redfish_config {
	const char *spec;         /* --energy-redfish */
	const char *hostname;     /* this node: [HOSTNAME] of the secrets file */
	const char *secrets_path; /* redfish_user, redfish_password */
	const char *sysfs_root;   /* auto: where firmware/dmi/entries is (default /sys) */
	double interval_s;        /* one reading per interval */
	unsigned timeout_ms;      /* one HTTPS request */
};

/*
 * Find the power resource, take a first reading and start the reader
 * process. 0: readings are coming. -ENOENT: no --energy-redfish, or
 * "auto" and no Redfish host interface. Other
 * negative errnos with one line in errbuf: -EACCES (login rejected),
 * -EPERM (certificate not trusted), -EOPNOTSUPP (the chassis has no power
 * reading resource), -EINVAL (bad spec or secrets): no reader is started,
 * retrying cannot help. A BMC that does not answer yet (-ETIMEDOUT,
 * -ECONNREFUSED, -ENODATA, -EIO) leaves the reader running: it
 * returns that error with the reason in errbuf, and readings appear when
 * the BMC answers.
 */
int mxqd_energy_redfish_start(const struct mxqd_energy_redfish_config *cfg, char *errbuf,
			      size_t errlen);

/*
 * The latest reading in watts. 0; -ENOENT when no reader runs; the error of
 * the last attempt when it failed; -ESTALE when the last good reading is
 * older than three intervals plus the timeout. Main loop only: it logs when
 * readings stop and when they come back.
 */
int mxqd_energy_redfish_watts(double *ret_watts);

/* Whether the reader process runs (started, not stopped). */
bool mxqd_energy_redfish_running(void);

/* Stop the reader (it ends its session) and wait for it, bounded. */
void mxqd_energy_redfish_stop(void);

#endif
