/*
 * mxq_energy_source - reading a node's energy: RAPL/powercap counters,
 * hwmon energy counters or power readings, the linear model; and the CPU
 * time of job sessions from /proc.
 *
 * Reads files only (the ipmi and redfish sources ask a callback): no database, no
 * clock (interval lengths are arguments), no logging. Used by mxqd (mxqd_energy.c) and bench_energy.
 * Sysfs paths are below a configurable root so tests use a fake tree.
 */
#ifndef MXQ_ENERGY_SOURCE_H
#define MXQ_ENERGY_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mxq_energy.h"

enum mxq_energy_source_kind {
	MXQ_ENERGY_SRC_RAPL = 0,  /* class/powercap: package-N and dram zones */
	MXQ_ENERGY_SRC_HWMON,     /* class/hwmon: energy*_input, else power*_input/_average */
	MXQ_ENERGY_SRC_IPMI,      /* the BMC's DCMI power reading, through cfg.ipmi_watts */
	MXQ_ENERGY_SRC_REDFISH,   /* the BMC's Redfish chassis power reading, cfg.redfish_watts */
	MXQ_ENERGY_SRC_MODEL,     /* idle watts + watts per busy slot: an estimate */
	MXQ_ENERGY_SRC__COUNT,
};

/* "rapl", "hwmon", "ipmi", "redfish", "model"; NULL out of range. */
const char *mxq_energy_source_kind_to_string(enum mxq_energy_source_kind k);

/*
 * Parse a comma list of source names into ret_order (room for
 * MXQ_ENERGY_SRC__COUNT). "none" gives *ret_n = 0. Unknown or repeated
 * names: -EINVAL with one line in errbuf.
 */
int mxq_energy_source_list_parse(const char *list, enum mxq_energy_source_kind *ret_order,
				 size_t *ret_n, char *errbuf, size_t errlen);

struct mxq_energy_source_config {
	const char *sysfs_root;   /* "/sys" on a real node */
	bool model_set;           /* the model source needs its two figures */
	double model_idle_w;
	double model_slot_w;
	/*
	 * ipmi: the BMC's latest DCMI power reading (W), kept fresh by mxqd's
	 * reader thread (mxqd_energy_ipmi.c); 0, or a negative errno when there
	 * is no usable reading now. NULL: no BMC, the source is absent.
	 */
	int (*ipmi_watts)(double *ret_watts);
	/* redfish: the same from the Redfish reader (mxqd_energy_redfish.c) */
	int (*redfish_watts)(double *ret_watts);
};

#define MXQ_ENERGY_MAX_ZONES 64

struct mxq_energy_zone {
	char path[512];
	uint64_t max_range;       /* counter wraps after this; 0: unknown */
	uint64_t prev;
	bool have_prev;
};

/* A probed source; plain data, no resources to free. */
struct mxq_energy_source {
	enum mxq_energy_source_kind kind;
	enum mxq_energy_method method;
	struct mxq_energy_zone zones[MXQ_ENERGY_MAX_ZONES];
	size_t n_zones;
	double prev_watts;        /* power method: previous reading */
	bool have_prev;
	struct mxq_energy_source_config cfg;
};

/*
 * Find the inputs of source KIND. 0 when it has at least one readable
 * input (ipmi, redfish: a current reading; model: configured), -ENOENT when not
 * present, another negative errno from ipmi_watts. *ret is overwritten
 * either way.
 */
int mxq_energy_source_probe(enum mxq_energy_source_kind kind,
			    const struct mxq_energy_source_config *cfg, struct mxq_energy_source *ret);

/*
 * Energy (J) of the interval of DT_MS ending now. BUSY_SLOTS is used by
 * the model. Returns 0; -EAGAIN when this read only took a baseline (first
 * read, counter reset); another negative errno when an input could not be
 * read (then every counter baseline is dropped).
 */
int mxq_energy_source_read(struct mxq_energy_source *s, uint64_t dt_ms, uint32_t busy_slots,
			   double *ret_j);

/*
 * One pass over /proc: for each of the N session ids, the summed utime,
 * stime, cutime and cstime (µs) of its processes and how many there are.
 * 0 or negative errno (outputs zeroed first).
 */
int mxq_energy_sessions_cpu(const pid_t *sids, size_t n, uint64_t *ret_cpu_us, unsigned *ret_procs);

#endif
