#!/bin/sh
# bench_tick.sh - a power manager tick against a database holding a million
# queued jobs (benchmark for `make bench`; prints figures, never fails on
# timing). Populates a private MariaDB: 10,000 managed nodes (half ON,
# MXQ_BENCH_NODES overrides), 1,000 groups of 1,000 queued jobs
# (MXQ_BENCH_JOBS_PER_GROUP overrides), then runs ./bench_tick against it.
set -eu
MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd)
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"
per_group=${MXQ_BENCH_JOBS_PER_GROUP:-1000}
nodes=${MXQ_BENCH_NODES:-10000}

mxq_db_start >/dev/null
start=$(date +%s)
mxq_sql "
INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id, pid_starttime, daemon_pid,
    daemon_slots, daemon_memory, tags, mtime)
  SELECT 'main', 0, CONCAT('node', seq), 'bench', 'x', 1, 1, 32, 131072,
         IF(seq % 10 = 0, 'gpu', ''), NOW() FROM seq_1_to_$nodes;
INSERT INTO mxq_power (hostname, state, transport_on, transport_off, efficiency_rank, node_seen_at)
  SELECT CONCAT('node', seq), IF(seq <= $nodes / 2, 'ON', 'OFF'), 'exec', 'exec', seq, NOW(3)
  FROM seq_1_to_$nodes;
INSERT INTO mxq_group (user_uid, user_name, user_gid, user_group, job_command, job_threads, job_memory,
    job_time, prerequisites)
  SELECT 1000 + seq % 20, CONCAT('user', seq % 20), 1000, 'users', 'bench', 1 + seq % 4,
         512 * (1 + seq % 8), 60, IF(seq % 50 = 0, 'gpu', '') FROM seq_1_to_1000;
-- a per-row counter trigger would make this take minutes: insert without
-- it, set the (trivially known) counters, reinstall the triggers below
DROP TRIGGER mxq_job_after_insert;
UPDATE mxq_group SET group_jobs = $per_group, group_jobs_inq = $per_group;
"
# in slices of 100 jobs per group: one huge transaction would overrun the
# test server's small redo log
done_jobs=0
while [ $done_jobs -lt $per_group ]; do
	n=$((per_group - done_jobs)); [ $n -le 100 ] || n=100
	mxq_sql "INSERT INTO mxq_job (group_id, job_workdir, job_argc, job_argv, job_umask)
	  SELECT g.group_id, '/tmp', 1, 'true\\\\0', 18 FROM mxq_group g JOIN seq_1_to_$n"
	done_jobs=$((done_jobs + n))
done
"$MXQ_BUILD_DIR/mxqadmin" db upgrade >/dev/null
echo "populated in $(( $(date +%s) - start )) s: $(mxq_sql 'SELECT COUNT(*) FROM mxq_job') jobs"
MXQ_BENCH_DB=$MXQ_MYSQL_DEFAULT_FILE "$MXQ_BUILD_DIR/bench_tick"
