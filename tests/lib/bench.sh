# tests/lib/bench.sh - filling a private MariaDB for the benchmarks.
#
# Source it after tests/lib/mariadb.sh and mxq_db_start.
#
#   bench_nodes N ON
#       N managed nodes node1..nodeN, each registered (an mxq_daemon row:
#       32 slots, 128 GiB, every tenth tagged gpu); node1..nodeON are ON
#       (150 W), the others OFF; idle baseline 100 W each.
#   bench_queue_fill PER_GROUP
#       1,000 groups of 20 users (threads, memory and a 'gpu' prerequisite
#       varied by group) with PER_GROUP queued jobs each; the counters are
#       set directly and the triggers reinstalled afterwards (`mxqadmin db
#       upgrade`), since a per-row counter trigger would make a million
#       inserts take minutes.

bench_nodes() {
	mxq_sql "
INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id, pid_starttime, daemon_pid,
    daemon_slots, daemon_memory, tags, mtime)
  SELECT 'main', 0, CONCAT('node', seq), 'bench', 'x', 1, 1, 32, 131072,
         IF(seq % 10 = 0, 'gpu', ''), NOW() FROM seq_1_to_$1;
INSERT INTO mxq_power (hostname, state, transport_on, transport_off, efficiency_rank, node_seen_at,
    current_watts, idle_baseline_watts, energy_joules, energy_updated_at, reason)
  SELECT CONCAT('node', seq), IF(seq <= $2, 'ON', 'OFF'), 'exec', 'exec', seq, NOW(3),
         IF(seq <= $2, 150, 0), 100, 1e7, NOW(3), 'bench' FROM seq_1_to_$1;
"
}

bench_queue_fill() {
	local _per _done _n
	_per=$1
	mxq_sql "
INSERT INTO mxq_group (user_uid, user_name, user_gid, user_group, job_command, job_threads, job_memory,
    job_time, prerequisites)
  SELECT 1000 + seq % 20, CONCAT('user', seq % 20), 1000, 'users', 'bench', 1 + seq % 4,
         512 * (1 + seq % 8), 60, IF(seq % 50 = 0, 'gpu', '') FROM seq_1_to_1000;
DROP TRIGGER mxq_job_after_insert;
UPDATE mxq_group SET group_jobs = $_per, group_jobs_inq = $_per;
" || return 1
	# in slices of 100 jobs per group: one huge transaction would overrun
	# the test server's small redo log
	_done=0
	while [ "$_done" -lt "$_per" ]; do
		_n=$((_per - _done)); [ $_n -le 100 ] || _n=100
		mxq_sql "INSERT INTO mxq_job (group_id, job_workdir, job_argc, job_argv, job_umask)
		  SELECT g.group_id, '/tmp', 1, 'true\\\\0', 18 FROM mxq_group g JOIN seq_1_to_$_n" ||
			return 1
		_done=$((_done + _n))
	done
	"$MXQ_BUILD_DIR/mxqadmin" db upgrade >/dev/null
}
