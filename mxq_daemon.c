/*
 * mxq_daemon - the mxq_daemon table (see mxq_daemon.h): an mxqd's own row
 * (register, heartbeat, unregister, earlier rows of its host marked
 * CRASHED), and the capability columns others read with their mapping.
 * Errors are returned as negative errno; the database's message stays in
 * mx_db_error() for the caller to log.
 */
#include "mxq_daemon.h"

#include <stdint.h>
#include <stdlib.h>

#include "mx_db.h"
#include "mxq_status.h"

int64_t mxq_daemon_mark_crashed(struct mx_db *db, const char *hostname, const char *daemon_name)
{
	return mx_db_exec(db,
		"UPDATE mxq_daemon SET status = ?, daemon_stop = NOW()"
		" WHERE hostname = ? AND daemon_name = ? AND status NOT IN (?, ?)",
		"issii", MXQ_DAEMON_STATUS_CRASHED, hostname, daemon_name,
		MXQ_DAEMON_STATUS_EXITED, MXQ_DAEMON_STATUS_CRASHED);
}

int mxq_daemon_register(struct mx_db *db, const struct mxq_daemon_reg *r, uint64_t *ret_id)
{
	int64_t n;

	n = mx_db_exec(db,
		"INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id,"
		" pid_starttime, daemon_pid, daemon_slots, daemon_memory, daemon_maxtime, daemon_time,"
		" daemon_memory_limit_slot_soft, daemon_memory_limit_slot_hard, tags, prerequisites,"
		" daemon_gpus_max, daemon_tmpdir_total_bytes, daemon_tmpdir_free_bytes, daemon_start)"
		/* daemon_time: upstream 0.22.3's name of daemon_maxtime, for its tools */
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, LEAST(?, 4294967295), ?, ?, ?, ?, ?, ?, ?, NOW())",
		"sisssUuuUUUUUssuUU", r->daemon_name, MXQ_DAEMON_STATUS_IDLE, r->hostname,
		r->mxq_version, r->boot_id, r->pid_starttime, r->pid, r->slots, r->memory_mib,
		r->maxtime_min, r->maxtime_min, r->memory_per_slot_mib, r->memory_per_slot_mib,
		r->tags, r->prerequisites, r->gpus, r->tmpdir_total_bytes, r->tmpdir_free_bytes);
	if (n < 0)
		return (int)n;
	*ret_id = mx_db_insert_id(db);
	return 0;
}

int mxq_daemon_heartbeat(struct mx_db *db, uint64_t daemon_id, const struct mxq_daemon_load *l)
{
	int64_t n = mx_db_exec(db,
		"UPDATE mxq_daemon SET mtime = NOW(), status = ?, daemon_jobs_running = ?,"
		" daemon_slots_running = ?, daemon_threads_running = ?, daemon_memory_used = ?,"
		" daemon_gpus_used = ?, daemon_tmpdir_total_bytes = ?, daemon_tmpdir_free_bytes = ?,"
		" daemon_pause_reason = LEFT(?, 1000) WHERE daemon_id = ?",
		"iuuuUuUUsU", l->status, l->jobs_running, l->slots_running, l->threads_running,
		l->memory_used_mib, l->gpus_used, l->tmpdir_total_bytes, l->tmpdir_free_bytes,
		l->pause_reason ? l->pause_reason : "", daemon_id);
	return n < 0 ? (int)n : 0;
}

int mxq_daemon_unregister(struct mx_db *db, uint64_t daemon_id, uint32_t jobs_running,
			  uint32_t slots_running)
{
	int64_t n = mx_db_exec(db,
		"UPDATE mxq_daemon SET status = ?, daemon_stop = NOW(), daemon_jobs_running = ?,"
		" daemon_slots_running = ? WHERE daemon_id = ?",
		"iuuU", MXQ_DAEMON_STATUS_EXITED, jobs_running, slots_running, daemon_id);
	return n < 0 ? (int)n : 0;
}

/* bytes in daemon_tmpdir_total_bytes, MiB everywhere in the code */
#define BYTES_PER_MIB_SHIFT 20

int mxq_daemon_caps_from_row(struct mxq_server_caps *caps, const char *hostname,
			     const struct mx_db_result *res, unsigned col,
			     char *errbuf, size_t errlen)
{
	return mxq_server_caps_init(caps, hostname, mx_db_str(res, col + 0),
				    mx_db_str(res, col + 1), (uint32_t)mx_db_u64(res, col + 2),
				    mx_db_u64(res, col + 3), mx_db_u64(res, col + 4),
				    (uint32_t)mx_db_u64(res, col + 5),
				    mx_db_u64(res, col + 6) >> BYTES_PER_MIB_SHIFT, errbuf, errlen);
}

bool mxq_daemon_version_is_upstream(const char *v)
{
	char *end;
	unsigned long major, minor;

	if (!v || *v < '0' || *v > '9')
		return false;
	major = strtoul(v, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	minor = strtoul(end + 1, &end, 10);
	return major == 0 && minor >= 10 && (*end == '\0' || *end == '.' || *end == '-');
}
