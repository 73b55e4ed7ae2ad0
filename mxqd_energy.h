/*
 * mxqd_energy - job energy accounting inside mxqd.
 *
 * Every mxqd samples its node's energy (RAPL/powercap counters, hwmon
 * energy counters or power readings, the BMC's DCMI or Redfish power reading, or a
 * configured linear model as the last resort), keeps the samples in a
 * bounded ring buffer, splits each interval's energy among the jobs
 * running in it (mxq_energy.c) and writes
 * per-job energy to mxq_power_job (every flush interval while a job runs,
 * and at its end), node totals to mxq_power and node samples to
 * mxq_power_sample. It hooks into the job status hooks of mxqd.h; mxqd.c
 * calls init, adopt (after recovery), one tick per loop, shutdown_begins
 * and fini.
 */
#ifndef MXQD_ENERGY_H
#define MXQD_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxq_energy.h"
#include "mxqd.h"

/* The mxqd options of this module, in the order of mxqd --help. */
enum mxqd_energy_opt {
	MXQD_ENERGY_OPT_SOURCES = 0,    /* --energy-sources LIST */
	MXQD_ENERGY_OPT_INTERVAL,       /* --energy-interval SECONDS */
	MXQD_ENERGY_OPT_FLUSH,          /* --energy-flush-interval SECONDS */
	MXQD_ENERGY_OPT_SYSFS_ROOT,     /* --energy-sysfs-root DIR */
	MXQD_ENERGY_OPT_MODEL,          /* --energy-model IDLE_W:PER_SLOT_W */
	MXQD_ENERGY_OPT_TIMELINE,       /* --energy-timeline (no argument) */
	MXQD_ENERGY_OPT_RETENTION,      /* --energy-retention DAYS */
	MXQD_ENERGY_OPT_BUFFER,         /* --energy-buffer SECONDS */
	MXQD_ENERGY_OPT_IPMI,           /* --energy-ipmi DEVICE|HOST[:PORT] */
	MXQD_ENERGY_OPT_IPMI_WORKAROUNDS, /* --energy-ipmi-workarounds NAMES */
	MXQD_ENERGY_OPT_REDFISH,        /* --energy-redfish HOST[:PORT][,OPTION...] */
	MXQD_ENERGY_OPT_BOOT,           /* --energy-boot kernel|none|ID@EPOCH */
	MXQD_ENERGY_OPT__COUNT,
};

struct mxqd_energy_options {
	char sources[128];      /* comma list of rapl, hwmon, ipmi, redfish, model; "none" disables */
	double interval_s;      /* sampling interval, default 1 */
	double flush_s;         /* running jobs and node totals to the database, default 60 */
	const char *sysfs_root; /* where class/powercap and class/hwmon are, default /sys */
	bool model_set;         /* --energy-model given */
	double model_idle_w;    /* model: node power with no job */
	double model_slot_w;    /* model: additional power per busy slot */
	bool timeline;          /* write mxq_power_job_sample rows */
	unsigned retention_days;/* node and job samples kept this long, default 30 */
	double buffer_s;        /* history the ring buffer holds, default 3600 */
	const char *ipmi_target;/* ipmi source: device path or BMC host[:port], default /dev/ipmi0 */
	const char *ipmi_workarounds; /* LAN: ipmipower -W names, as ipmi_workarounds of the transport */
	const char *redfish;    /* redfish source: --energy-redfish spec; NULL: none */
	const char *secrets_path; /* BMC credentials for a LAN ipmi_target and redfish (--power-secrets) */
	struct mxq_energy_boot_spec boot; /* where the boot comes from, default kernel */
};

/* The defaults above. */
void mxqd_energy_options_init(struct mxqd_energy_options *opt);

/*
 * Apply one option (WHICH, ARG; ARG is NULL for --energy-timeline). On a bad
 * value returns -EINVAL with one line naming the option in errbuf.
 */
int mxqd_energy_option(struct mxqd_energy_options *opt, enum mxqd_energy_opt which,
		       const char *arg, char *errbuf, size_t errlen);

/*
 * Pick the first working source of the configured list, allocate the ring
 * buffer and register the status hooks. A node without any working source
 * is not an error: accounting is off and the reason is logged. Returns 0 or
 * a negative errno (-ENOMEM, -ENOSPC for hooks) with a reason in errbuf.
 */
int mxqd_energy_init(struct mxqd_server *server, const struct mxqd_energy_options *opt,
		     char *errbuf, size_t errlen);

/*
 * After mxqd_jobs_recover(): the baseline sample, with the jobs re-adopted
 * from an earlier mxqd tracked in it (their CPU time read there, so the
 * first interval splits only what they use from now on). Boot overhead is
 * decided at this sample (see mxq_energy_boot_j). Without this call the
 * first tick takes the baseline and adopted jobs are not accounted.
 */
void mxqd_energy_adopt(struct mxqd_server *server);

/*
 * Shutdown begins now (SIGTERM, SIGINT, this node powers off): the
 * interval so far is closed as before; from here on the energy not
 * attributed to jobs is shutdown overhead. Idempotent.
 */
void mxqd_energy_shutdown_begins(struct mxqd_server *server);

/*
 * Per main-loop call: take a sample when one is due (cheap sysfs and /proc
 * reads, never the database) and, when DB_OK, flush when due. Never fails:
 * database errors are logged once and retried at the next flush.
 */
void mxqd_energy_tick(struct mxqd_server *server, bool db_ok);

/* Milliseconds until the next sample or flush is due (UINT64_MAX if off). */
uint64_t mxqd_energy_next_in_ms(void);

/* Last sample and flush before exit; frees everything. */
void mxqd_energy_fini(struct mxqd_server *server);

#endif
