/*
 * mxq_daemon - the mxq_daemon table.
 *
 * An mxqd's own row: mxq_daemon_mark_crashed(), mxq_daemon_register(),
 * mxq_daemon_heartbeat(), mxq_daemon_unregister(). All return a negative
 * errno on failure with the database's message in mx_db_error().
 *
 * A host may have many daemon rows (one per mxqd start); what it offers is
 * judged on its newest registration. MXQ_DAEMON_NEWEST_JOIN() is the one
 * way to join that row, MXQ_DAEMON_CAPS_COLUMNS the capability columns and
 * mxq_daemon_caps_from_row() the one mapping from them to struct
 * mxq_server_caps (power manager snapshot, `mxqadmin qualify`). Units:
 * daemon_memory MiB, daemon_maxtime minutes, daemon_tmpdir_total_bytes
 * bytes in the row and MiB in the struct.
 */
#ifndef MXQ_DAEMON_H
#define MXQ_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxqd_control.h"

struct mx_db;
struct mx_db_result;

/* What an mxqd registers (a new row per start, status IDLE). */
struct mxq_daemon_reg {
	const char *daemon_name, *hostname, *mxq_version, *boot_id;
	uint64_t pid_starttime;        /* of the mxqd process, clock ticks since boot */
	unsigned pid;
	uint32_t slots;
	uint64_t memory_mib;
	uint64_t maxtime_min;          /* 0 = unlimited; also written as daemon_time */
	uint64_t memory_per_slot_mib;  /* soft and hard limit per slot */
	const char *tags, *prerequisites;  /* "" when none */
	uint32_t gpus;
	uint64_t tmpdir_total_bytes, tmpdir_free_bytes;
};

/* What a heartbeat refreshes (absolute values; mtime becomes NOW()). */
struct mxq_daemon_load {
	int status;                    /* MXQ_DAEMON_STATUS_* */
	uint32_t jobs_running, slots_running, threads_running;
	uint64_t memory_used_mib;
	uint32_t gpus_used;
	uint64_t tmpdir_total_bytes, tmpdir_free_bytes;
	const char *pause_reason;      /* why it takes no new jobs now; NULL or "": it does */
};

/* Mark the rows of HOSTNAME/DAEMON_NAME that are neither EXITED nor
 * CRASHED as CRASHED (daemon_stop = NOW()); returns how many. */
int64_t mxq_daemon_mark_crashed(struct mx_db *db, const char *hostname, const char *daemon_name);

/* Insert a row for R; its daemon_id into *RET_ID. 0 or negative errno. */
int mxq_daemon_register(struct mx_db *db, const struct mxq_daemon_reg *r, uint64_t *ret_id);

/* Refresh row DAEMON_ID with L. 0 or negative errno. */
int mxq_daemon_heartbeat(struct mx_db *db, uint64_t daemon_id, const struct mxq_daemon_load *l);

/* Mark row DAEMON_ID EXITED with the jobs it leaves running. 0 or
 * negative errno. */
int mxq_daemon_unregister(struct mx_db *db, uint64_t daemon_id, uint32_t jobs_running,
			  uint32_t slots_running);

/*
 * Was a daemon row with this mxq_version written by an upstream MXQ mxqd
 * (which kills the running jobs of a CANCELLED group, but knows neither
 * CANCELLING nor how to kill a single job)? Upstream numbers its releases
 * 0.MINOR with MINOR >= 10 (0.22.x, 0.24.x; later site builds 0.25 and up),
 * this tree 0.9.x (MXQ_VERSION, which test_rows.c checks is not taken for
 * upstream's). Anything else (NULL, empty, unparsable) is not upstream's.
 */
bool mxq_daemon_version_is_upstream(const char *mxq_version);

/* "LEFT JOIN mxq_daemon d ON <the newest row of host HOSTNAME_SQL>", where
 * HOSTNAME_SQL is a column of the outer query such as "p.hostname". */
#define MXQ_DAEMON_NEWEST_JOIN(hostname_sql) \
	" LEFT JOIN mxq_daemon d ON d.daemon_id =" \
	" (SELECT MAX(d2.daemon_id) FROM mxq_daemon d2 WHERE d2.hostname = " hostname_sql ")"

/* The capability columns of alias d, in the order mxq_daemon_caps_from_row()
 * reads them. */
#define MXQ_DAEMON_CAPS_COLUMNS \
	"d.tags, d.prerequisites, d.daemon_slots, d.daemon_memory, d.daemon_maxtime," \
	" d.daemon_gpus_max, d.daemon_tmpdir_total_bytes"
/* How many columns MXQ_DAEMON_CAPS_COLUMNS is. */
#define MXQ_DAEMON_CAPS_NCOLS 7

/*
 * Fill CAPS for HOSTNAME from the MXQ_DAEMON_CAPS_COLUMNS that start at
 * column COL of the current row of RES; returns what
 * mxq_server_caps_init() returns (0, -EINVAL with the parser's message in
 * ERRBUF for prerequisites that do not parse, -ENOMEM).
 */
int mxq_daemon_caps_from_row(struct mxq_server_caps *caps, const char *hostname,
			     const struct mx_db_result *res, unsigned col,
			     char *errbuf, size_t errlen);

#endif
