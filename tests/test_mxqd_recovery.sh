#!/bin/sh
# tests/test_mxqd_recovery.sh - mxqd restarts: jobs outlive their daemon
# and are picked up again by the next one on the same host and spool.
#
# Twice, once after SIGQUIT (orderly "exit, leave jobs running") and once
# after SIGKILL (crash), with the daemon down:
#   - long jobs keep running (their processes exist) and are re-adopted by
#     the restarted daemon: FINISHED exactly once
#   - a short job ends while no daemon runs: FINISHED after the restart
#   - a job claimed but never started (ASSIGNED to this host, no spool
#     files; made by SQL) goes back to the queue and then runs
#   - a RUNNING row of this host without spool traces becomes UNKNOWN
#   - a stale mxq_daemon row of this host+name (RUNNING) becomes CRASHED
# Then a database error at the worst moment: recording RUNNING fails right
# after the job was started (injected with a trigger); the job must still
# run once and later claims must start the jobs they claimed. And mxqd
# killed while the reaper of a job it claimed is held before any trace of
# it, or with its pid file saying "not started": the restarted mxqd runs
# the job, the held reaper does not (it would be a second run). And the
# answer to the restart's query for the jobs left on the host lost: it
# asks again, the running job is adopted and its end recorded. And the
# update that moves an adopted job to the new daemon failing for a while:
# mxqkill of it works once the update is taken. And the update that puts
# a never-started job back in the queue failing for a while: asked again
# before mxqd serves, the job then runs once.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W/ran"
spool=$(mxqd_dir node1)/spool

# A job that leaves a marker line per run and lasts $1 seconds.
# shellcheck disable=SC2016 # expanded by the job's shell
marked_job() {
	submit -N "$2" -m 64M -t 1h -w "$W/ran" \
		sh -c 'echo "$MXQ_JOBID $MXQ_HOSTNAME" >> "ran.$MXQ_JOBID"; sleep '"$1"
}

lines_of() {
	if [ -f "$W/ran/ran.$1" ]; then wc -l <"$W/ran/ran.$1" | tr -d ' '; else echo 0; fi
}

# One round: $1 = QUIT or KILL
round() {
	sig=$1
	section "round: SIG$sig"
	if ! mxqd_start node1 --slots 4 --memory 4G; then
		not_ok "$sig: start mxqd node1"
		return
	fi
	old_id=$(mxqd_daemon_id node1)
	long1=$(marked_job 5 "long-$sig")
	long2=$(marked_job 5 "long-$sig")
	short=$(marked_job 1 "short-$sig")
	wait_for 15 "SELECT COUNT(*) = 3 FROM mxq_job WHERE job_id IN ($long1, $long2, $short)
		AND job_status = 200 AND daemon_id = $old_id" ||
		not_ok "$sig: three jobs run on node1"
	pids=$(mxq_sql "SELECT host_pid FROM mxq_job WHERE job_id IN ($long1, $long2) ORDER BY job_id")

	if [ "$sig" = QUIT ]; then
		mxqd_stop node1 QUIT 5
		is "SIGQUIT: mxqd exits at once with status 0" "$mxqd_rc" 0
	else
		mxqd_signal node1 KILL
		mxqd_wait node1 5
		is "SIGKILL: mxqd is gone" "$mxqd_rc" 137
		is "SIGKILL: its daemon row still looks alive" \
			"$(mxq_sql "SELECT status NOT IN (250, 255) FROM mxq_daemon WHERE daemon_id = $old_id")" 1
	fi
	left=0
	for p in $pids; do
		mxq__alive "$p" && left=$((left + 1))
	done
	is "$sig: the long jobs' processes still run without a daemon" "$left" 2
	is "$sig: the jobs are still RUNNING in the database" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($long1, $long2, $short)
			AND job_status = 200")" 3

	# the short job ends while no daemon runs: its reaper leaves the outcome
	if wait_until 10 test -f "$spool/$short.stat"; then
		ok "$sig: the short job ended while no daemon ran (outcome in the spool)"
	else
		not_ok "$sig: the short job ended while no daemon ran (outcome in the spool)"
	fi

	# a claimed-but-not-started job of this host: ASSIGNED, no spool files
	claimed=$(submit -N "claimed-$sig" -m 64M -t 1h -w "$W/ran" \
		sh -c 'echo "$MXQ_JOBID $MXQ_HOSTNAME" >> "ran.$MXQ_JOBID"')
	check "$sig: make a job ASSIGNED to node1 by SQL (claimed, not started)" \
		mxq_sql "UPDATE mxq_job SET job_status = 100, daemon_id = $old_id, host_hostname = 'node1',
		server_id = 'main', host_id = 'node1::main', host_slots = 1 WHERE job_id = $claimed"
	# a RUNNING job of this host that left nothing behind
	lost=$(submit -N "lost-$sig" -m 64M -t 1h true)
	check "$sig: make a job RUNNING on node1 by SQL (no spool traces)" \
		mxq_sql "UPDATE mxq_job SET job_status = 200, daemon_id = $old_id, host_hostname = 'node1',
		server_id = 'main', host_id = 'node1::main', host_slots = 1, host_pid = 1,
		date_start = NOW() WHERE job_id = $lost"
	# a stale daemon row of the same host and name
	check "$sig: insert a stale daemon row of node1/main (status RUNNING)" \
		mxq_sql "INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id,
		pid_starttime, daemon_pid, daemon_start)
		VALUES ('main', 10, 'node1', 'old', 'stale', 1, 1, NOW())"
	stale_id=$(mxq_sql "SELECT MAX(daemon_id) FROM mxq_daemon WHERE boot_id = 'stale'
		AND status = 10")
	# and one of another host, which must be left alone
	check "$sig: insert a RUNNING daemon row of another host" \
		mxq_sql "INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id,
		pid_starttime, daemon_pid, daemon_start)
		VALUES ('main', 10, 'elsewhere', 'old', 'other', 1, 1, NOW())"
	other_id=$(mxq_sql "SELECT MAX(daemon_id) FROM mxq_daemon WHERE hostname = 'elsewhere'")
	is "$sig: no counter drift from the SQL edits" "$(counter_mismatches)" ""

	if ! mxqd_start node1 --slots 4 --memory 4G; then
		not_ok "$sig: restart mxqd node1 with the same spool"
		return
	fi
	ok "$sig: restart mxqd node1 with the same spool"
	new_id=$(mxqd_daemon_id node1)
	is "$sig: the stale daemon row of node1/main is CRASHED" \
		"$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $stale_id")" 255
	if [ "$sig" = KILL ]; then
		is "SIGKILL: the killed daemon's row is CRASHED" \
			"$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $old_id")" 255
	else
		is "SIGQUIT: the daemon row of the quit mxqd is EXITED" \
			"$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $old_id")" 250
	fi
	is "$sig: another host's daemon row is left alone" \
		"$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $other_id")" 10
	mxq_sql "UPDATE mxq_daemon SET status = 250 WHERE daemon_id = $other_id"

	wait_for 20 "SELECT COUNT(*) = 0 FROM mxq_job
		WHERE job_id IN ($long1, $long2, $short, $claimed, $lost)
		AND job_status IN (0, 100, 150, 200, 250, 300, 350, 399, 989)" ||
		not_ok "$sig: every job ended in time"
	is "$sig: re-adopted long jobs FINISHED" \
		"$(mxq_sql "SELECT job_status FROM mxq_job WHERE job_id IN ($long1, $long2)")" "1000
1000"
	is "$sig: re-adopted jobs are recorded under the new daemon" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($long1, $long2, $short)
			AND daemon_id = $new_id")" 3
	is "$sig: the job that ended while no daemon ran is FINISHED, exit status 0" \
		"$(mxq_sql "SELECT job_status, stats_status FROM mxq_job WHERE job_id = $short")" \
		"1000	0"
	is "$sig: the claimed-not-started job went back to the queue and ran: FINISHED" \
		"$(status_of "$claimed")" 1000
	is "$sig: ... on the restarted daemon" \
		"$(mxq_sql "SELECT daemon_id FROM mxq_job WHERE job_id = $claimed")" "$new_id"
	contains "$sig: the log reports the recovery" "$(cat "$(mxqd_dir node1)/mxqd.log")" \
		"recovery: 1 claimed job(s) requeued, 3 adopted, 1 lost"
	is "$sig: the RUNNING job without spool traces is UNKNOWN" "$(status_of "$lost")" 999
	is "$sig: each job ran exactly once" \
		"$(lines_of "$long1") $(lines_of "$long2") $(lines_of "$short") $(lines_of "$claimed")" \
		"1 1 1 1"
	is "$sig: the lost job never ran" "$(lines_of "$lost")" 0
	left=$(ls "$spool" | grep -v '^mxqd\.lock$')
	is "$sig: nothing left in the spool directory" "$left" ""
	is "$sig: counters consistent" "$(counter_mismatches)" ""

	mxqd_stop node1 TERM 15
	is "$sig: the restarted mxqd exits 0 on SIGTERM" "$mxqd_rc" 0
}

round QUIT
round KILL

# Kill mxqd NODE (SIGKILL) and start it again with two slots and the
# options given; its log file in $L.
kill_restart() {
	_n=$1
	shift
	mxqd_signal "$_n" KILL
	mxqd_wait "$_n" 5
	check "restart mxqd $_n" mxqd_start "$_n" --slots 2 --memory 4G "$@"
	L=$(mxqd_dir "$_n")/mxqd.log
}

# A trigger and table NAME: an UPDATE of mxq_job where COND holds (on OLD
# and NEW) fails with SQLSTATE 45000 for the job ids in table NAME.
fail_trigger() {
	mxq_sql <<EOF
CREATE TABLE $1 (job_id BIGINT UNSIGNED PRIMARY KEY);
DELIMITER //
CREATE TRIGGER $1 BEFORE UPDATE ON mxq_job FOR EACH ROW
BEGIN
	IF $2 AND EXISTS (SELECT 1 FROM $1 WHERE job_id = NEW.job_id) THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'injected failure (test)';
	END IF;
END//
DELIMITER ;
EOF
}

# ------------------------------- a failed RUNNING update (injected)

section "recording RUNNING fails once"
fail_trigger test_fail_running "OLD.job_status = 100 AND NEW.job_status = 200" ||
	not_ok "install the failure-injection trigger"
fa=$(marked_job 4 inject)
mxq_sql "INSERT INTO test_fail_running VALUES ($fa)"
check "start mxqd node2" mxqd_start node2 --slots 4 --memory 4G
if wait_until 15 test -f "$W/ran/ran.$fa"; then
	ok "the job whose RUNNING update fails is started"
else
	not_ok "the job whose RUNNING update fails is started"
fi
# (RUNNING is recorded after the start, when the reaper reports it)
check "the log names the failed update" wait_until 5 \
	grep -qF "job $fa: could not record RUNNING" "$(mxqd_dir node2)/mxqd.log"
mxq_sql "DELETE FROM test_fail_running"
fb=$(marked_job 0 inject-next)
wait_for 12 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($fa, $fb)
	AND job_status >= 400 AND job_status <> 989" || not_ok "both jobs ended in time"
# (fixed) start_claimed_job() used to load "the" claimed job as the lowest ASSIGNED
# job of this daemon. The first job is still ASSIGNED (its RUNNING update
# failed) and still runs, so claiming the second job starts the first one
# a second time, and the second job stays ASSIGNED until another claim
# (or for ever, if the queue is empty).
is "the job whose RUNNING update failed ran exactly once" "$(lines_of "$fa")" 1
is "the job whose RUNNING update failed ends FINISHED" "$(status_of "$fa")" 1000
is "the next job claimed runs: FINISHED" "$(status_of "$fb")" 1000
is "counters consistent" "$(counter_mismatches)" ""
mxqd_stop node2 INT 15

# --------------------- mxqd killed while its reaper has left no trace yet

# A reaper held (MXQD_TEST_REAPER_HOLD) at STAGE while its mxqd is killed
# and restarted: the restarted mxqd puts the claimed job back in the queue
# and runs it; the held reaper must not run it as well.
held_round() {
	stage=$1 ms=$2 node=node-$1-$2
	section "mxqd killed, its reaper held at '$stage' ($ms ms)"
	MXQD_TEST_REAPER_HOLD=$stage=$ms
	export MXQD_TEST_REAPER_HOLD
	mxqd_start "$node" --slots 4 --memory 4G
	_rc=$?
	unset MXQD_TEST_REAPER_HOLD
	[ "$_rc" = 0 ] || { not_ok "$stage: start mxqd $node"; return; }
	j=$(marked_job 0 "held-$stage")
	if [ "$stage" = unstarted ]; then
		wait_until 10 test -s "$(mxqd_dir "$node")/spool/$j.pid" ||
			not_ok "$stage: the reaper wrote its pid file"
	else
		wait_for 10 "SELECT job_status = 100 FROM mxq_job WHERE job_id = $j" ||
			not_ok "$stage: the job is claimed"
	fi
	mxqd_signal "$node" KILL
	mxqd_wait "$node" 5
	check "$stage: restart mxqd $node" mxqd_start "$node" --slots 4 --memory 4G
	wait_for 15 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j" ||
		not_ok "$stage: the job ended"
	sleep "$(( ms / 1000 + 2 ))"   # the held reaper has gone on by now
	is "$stage: the job ran exactly once" "$(lines_of "$j")" 1
	is "$stage: FINISHED" "$(status_of "$j")" 1000
	contains "$stage: the restarted mxqd put it back in the queue" \
		"$(cat "$(mxqd_dir "$node")/mxqd.log")" "${3:-1 claimed job(s) requeued}"
	is "$stage: nothing left in the spool directory" \
		"$(ls "$(mxqd_dir "$node")/spool" | grep -c "^$j\.")" 0
	mxqd_stop "$node" TERM 15
}
held_round trace 3000
held_round unstarted 1200
# held longer than the restarted mxqd waits for it (2 s): adopted, and
# back in the queue once the reaper ends without starting it (before,
# the job ended UNKNOWN without having run)
held_round unstarted 4000 "its reaper ended without starting it: back in the queue"

# ------------------ the answer to the recovery query lost at the restart

# mxqd killed while a job runs; its restart loses the answer to the query
# for the jobs left on the host (tests/db_cut.py closes the connection
# after it ran): it asks again instead of serving without them, so the job
# is adopted and its end recorded (before, it stayed RUNNING for ever)
section "the answer to the recovery query lost"
mxq_test_cleanup_hook() {
	mxqd_cleanup
	db_cut_stop
}
R=$MXQ_TEST_DIR/relay
check "the relay in front of MariaDB listens" db_cut_start "$R"
node=node-cut
check "start mxqd $node through the relay" mxqd_start "$node" --slots 2 --memory 4G \
	-M "$R/relay.cnf"
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(submit -N cut --whitelist "$node" -m 64M -t 1h -w "$W/ran" \
	sh -c 'echo "$MXQ_JOBID" >> "ran.$MXQ_JOBID"; sleep 4')
wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j" ||
	not_ok "the job runs on $node"
printf 'j.server_id = ? AND j.job_status IN (' >"$R/cut_statement"
kill_restart "$node" -M "$R/relay.cnf"
check "the relay cut the answer to the recovery query" wait_until 10 [ -s "$R/cuts.log" ]
check "the job's end is recorded: FINISHED" wait_for 20 \
	"SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j"
is "it ran once" "$(lines_of "$j")" 1
contains "mxqd said it asks again" "$(cat "$L")" "asking again every 2 s"
mxqd_stop "$node" TERM 15
db_cut_stop

# ---------------------------- the re-adoption's UPDATE fails (injected)

# the restarted mxqd cannot move a running job's row to itself (a trigger
# refuses it while the test wants); until it can, mxqkill of that job is
# not seen (its row names the dead daemon). It tries again each round, so
# the cancel works once the database takes the update
section "moving an adopted job to the new daemon fails for a while"
fail_trigger test_fail_adopt "NEW.daemon_id <> OLD.daemon_id" ||
	not_ok "install the failure-injection trigger"
node=node-adopt
check "start mxqd $node" mxqd_start "$node" --slots 2 --memory 4G
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(submit -N adopt --whitelist "$node" -m 64M -t 1h -w "$W/ran" \
	sh -c 'echo "$MXQ_JOBID" >> "ran.$MXQ_JOBID"; sleep 60')
wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j" ||
	not_ok "the job runs on $node"
mxq_sql "INSERT INTO test_fail_adopt VALUES ($j)"
kill_restart "$node"
check "it says it cannot move the job yet" wait_until 10 \
	grep -qF "job $j: cannot move it to this daemon" "$L"
mxq_sql "DELETE FROM test_fail_adopt"
check "then it does" wait_until 10 grep -qF "job $j: moved to this daemon" "$L"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j" >/dev/null
check "mxqkill of the adopted job: CANCELLED well before its 60 s" wait_for 15 \
	"SELECT job_status = 990 FROM mxq_job WHERE job_id = $j"
is "it ran once" "$(lines_of "$j")" 1
mxqd_stop "$node" TERM 15
mxq_sql "DROP TRIGGER test_fail_adopt; DROP TABLE test_fail_adopt"

# ------------------ putting a never-started job back fails (injected)

# a claimed job whose reaper left no trace, and the restart's UPDATE that
# puts it back in the queue refused for a while: its spool reservation is
# gone, so nothing would look at the row again; mxqd asks again before it
# serves, and the job then runs, once
section "putting a never-started job back in the queue fails for a while"
fail_trigger test_fail_requeue "OLD.job_status = 100 AND NEW.job_status = 0" ||
	not_ok "install the failure-injection trigger"
node=node-requeue
MXQD_TEST_REAPER_HOLD=trace=3000
export MXQD_TEST_REAPER_HOLD
check "start mxqd $node, reapers held before any trace" mxqd_start "$node" --slots 2 --memory 4G
unset MXQD_TEST_REAPER_HOLD
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(submit -N requeue --whitelist "$node" -m 64M -t 1h -w "$W/ran" \
	sh -c 'echo "$MXQ_JOBID" >> "ran.$MXQ_JOBID"')
wait_for 10 "SELECT job_status = 100 FROM mxq_job WHERE job_id = $j" ||
	not_ok "the job is claimed"
mxq_sql "INSERT INTO test_fail_requeue VALUES ($j)"
kill_restart "$node"
check "the restarted mxqd asks again" wait_until 15 grep -qF "asking again every 2 s" "$L"
mxq_sql "DELETE FROM test_fail_requeue"
check "the job runs after all: FINISHED" wait_for 20 \
	"SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j"
sleep 4   # the held reaper has gone on by now
is "it ran once" "$(lines_of "$j")" 1
mxqd_stop "$node" TERM 15
mxq_sql "DROP TRIGGER test_fail_requeue; DROP TABLE test_fail_requeue"

tap_done
