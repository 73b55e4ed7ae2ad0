/*
 * mxqd_energy_ipmi - the node's power as its BMC measures it: DCMI Get
 * Power Reading through libfreeipmi, in-band through the kernel's IPMI
 * device (/dev/ipmi0) or over the LAN to the node's own BMC.
 *
 * A BMC can take seconds to answer (or not answer at all), so readings
 * are taken by a reader process of their own (not a thread: mxqd forks
 * job reapers, which must not inherit a lock held by a thread), one per
 * sampling interval; the main loop only picks up the latest one
 * (mxqd_energy_ipmi_watts, the ipmi_watts callback of struct
 * mxq_energy_source_config) and never waits for the BMC.
 */
#ifndef MXQD_ENERGY_IPMI_H
#define MXQD_ENERGY_IPMI_H

#include <stdbool.h>
#include <stddef.h>

struct mxqd_energy_ipmi_config {
	const char *target;       /* a device path ("/dev/ipmi0") or a BMC "host[:port]" */
	const char *workarounds;  /* LAN: ipmipower -W names (see mxqd_power_ipmi.c) */
	const char *hostname;     /* this node: [HOSTNAME] of the secrets file (LAN only) */
	const char *secrets_path; /* ipmi_user, ipmi_password (LAN only) */
	double interval_s;        /* one reading per interval */
	unsigned timeout_ms;      /* one request (LAN: one session attempt) */
};

/*
 * Open the BMC, take a first reading and start the reader process (call
 * it while mxqd has no thread; the process is reaped by stop, or by
 * mxqd's waitpid(-1) when it dies).
 * 0: readings are coming. -ENOENT: the device does not exist (no BMC, or
 * the kernel modules are not loaded). Other negative errnos with one line
 * in errbuf: -EACCES (login rejected, device not accessible),
 * -EOPNOTSUPP (the BMC has no DCMI power reading), -EINVAL (bad target or
 * secrets): no reader is started for those, retrying cannot help. A BMC
 * that does not answer yet (-ETIMEDOUT, -ENODATA: no measurement yet, -EIO)
 * leaves the reader running: it returns that error with the reason in
 * errbuf, and readings appear when the BMC answers.
 */
int mxqd_energy_ipmi_start(const struct mxqd_energy_ipmi_config *cfg, char *errbuf, size_t errlen);

/*
 * The latest reading in watts. 0; -ENOENT when the reader is not running;
 * -EIO when it died;
 * the error of the last attempt (see above) when it failed; -ESTALE when the
 * last good reading is older than three intervals plus the timeout. Main
 * loop only: it logs when readings stop and when they come back.
 */
int mxqd_energy_ipmi_watts(double *ret_watts);

/* Whether the reader process runs (started, not stopped). */
bool mxqd_energy_ipmi_running(void);

/* Stop the reader (SIGTERM, reaped) and forget the BMC. */
void mxqd_energy_ipmi_stop(void);

/* Wipe and free this process's copy of the BMC credentials (in a forked
 * child that never reads the BMC: reaper, callback supervisor). */
void mxqd_energy_ipmi_forget_secrets(void);

#endif
