#!/bin/sh
# tests/test_upstream.sh - a mixed cluster on an upgraded upstream MXQ 0.22
# database: upstream daemons and tools next to ours.
#
# For each upstream variant (tests/fixtures/upstream-0.22.sql, 0.22.3 and
# upstream-master) database `mxq` is loaded from the fixture and upgraded
# with `mxqadmin db upgrade`; then
#   1. our mxqd runs the fixture's queued jobs; counters equal the job rows
#   2. an old daemon, emulated with upstream's own dispatch statements
#      (group selection, the claim UPDATE, ASSIGNED -> LOADED -> RUNNING ->
#      FINISHED), takes plain jobs but never one with --tags,
#      --prerequisites, --gpu, --whitelist, --blacklist or --tmpdir, not even
#      after our mxqd requeued it; the triggers keep what old tools read
#      (date_start, group_sum_starttime, daemon_*_running, stats_*)
#   3. an old mxqsub (its INSERTs) and ours put the same command in one group
#   4. our mxqd with the right tags, GPU and name runs the hidden jobs
#   5. our mxqkill on jobs the old daemon runs: -g leaves them as upstream
#      expects (never CANCELLING, which its end UPDATE does not match) and
#      upstream's end UPDATE ends them; -J says in one line that upstream
#      cannot kill single jobs, exits 1 and leaves the job RUNNING; a job an
#      earlier mxqkill left CANCELLING is put back
#   6. the same with a real upstream mxqd, when MXQ_UPSTREAM_DIR names a
#      build of it (else skipped)
# The other real upstream binaries were run by hand against the same
# databases (README.md, "Upgrading from upstream MXQ 0.22").

. "$(dirname -- "$0")/lib/mariadb.sh"
. "$(dirname -- "$0")/lib/upstream.sh"
mxq_db_start --no-schema || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"
uid=$(id -u)
user=$(id -un)
gid=$(id -g)
grp=$(id -gn)
mxqadmin=$MXQ_BUILD_DIR/mxqadmin
hidden=mxq-needs-0.9
running_statuses="100, 150, 200, 250, 300, 350, 399, 989"

# Upstream mxqd's dispatch, as SQL: every group its group query returns, in
# its order; for each the claim UPDATE of upstream mxq_job.c; then the
# transitions it makes for a claimed job. Prints the claimed job ids.
# $1 hostname, $2 daemon_id
old_daemon_claim_all() {
	for _g in $(mxq_sql "SELECT group_id FROM mxq_group
			WHERE (group_jobs_inq > 0 OR group_jobs_running > 0)
			ORDER BY user_name, group_mtime"); do
		while :; do
			_n=$(mxq_sql "UPDATE mxq_job SET daemon_id = $2, host_hostname = '$1',
					server_id = 'main', job_status = 100
				WHERE group_id = $_g AND job_status = 0 AND daemon_id = 0
				  AND host_hostname = '' AND server_id = '' AND host_pid = 0
				ORDER BY job_priority, job_id LIMIT 1;
				SELECT ROW_COUNT()")
			[ "$_n" = 1 ] || break
			mxq_sql "SELECT job_id FROM mxq_job WHERE daemon_id = $2 AND job_status = 100
				AND host_hostname = '$1' ORDER BY job_id DESC LIMIT 1"
		done
	done
}
# $1 job id: LOADED (slots), RUNNING (pid), FINISHED (rusage), as upstream
old_daemon_load() {
	mxq_sql "UPDATE mxq_job SET job_status = 150, host_slots = 2 WHERE job_id = $1 AND job_status = 100"
}
old_daemon_run() {
	mxq_sql "UPDATE mxq_job SET job_status = 200, host_pid = 4242 WHERE job_id = $1 AND job_status = 150"
}
# $1 job id, $2 status: upstream's end-of-job UPDATE (mxq_set_job_status_exited)
old_daemon_end() {
	mxq_sql "UPDATE mxq_job SET job_status = $2, date_end = NOW(), stats_status = 15
		WHERE job_status IN (150, 200, 399) AND job_id = $1 AND daemon_id = $old_id
		  AND host_pid = 4242"
}
old_daemon_finish() {
	mxq_sql "UPDATE mxq_job SET job_status = 1000, date_end = NOW(), stats_status = 0,
		stats_utime_sec = 3, stats_stime_sec = 1, stats_real_sec = 5, stats_maxrss = 777
		WHERE job_id = $1 AND job_status = 200"
}

# A real upstream mxqd (MXQ_UPSTREAM_DIR: a build of upstream MXQ made
# outside this tree, see HACKING.md, with MXQ_FINISHED_JOBSDIR=$UP/finished)
# on host uphost, 2 slots, on database mxq.
UP=${MXQ_UPSTREAM_DIR:-}
up_pid=
up_start() {
	mkdir -p "$W/up" "$UP/finished"
	"$UP/mxqd" --no-log -M "$MXQ_MYSQL_DEFAULT_FILE" --hostname uphost --slots 2 \
		--memory 1G --initial-tmpdir "$W/up" </dev/null >>"$W/up/mxqd.out" 2>&1 &
	up_pid=$!
}
up_stop() {
	[ -n "$up_pid" ] || return 0
	kill -TERM "$up_pid" 2>/dev/null
	wait "$up_pid" 2>/dev/null
	up_pid=
}
mxq_test_cleanup_hook() {
	[ -z "$up_pid" ] || kill -KILL "$up_pid" 2>/dev/null
	mxqd_cleanup
}

for variant in $upstream_variants; do
	section "upstream $variant"
	timecol=daemon_maxtime
	[ "$variant" = 0.22.3 ] && timecol=daemon_time
	mxq_sql "DROP DATABASE mxq; CREATE DATABASE mxq CHARACTER SET latin1" &&
		grep -v -- "-- only:$([ "$variant" = 0.22.3 ] && echo master || echo 0.22.3)\$" \
			"$MXQ_SRC_DIR/tests/fixtures/upstream-0.22.sql" | mxq_sql ||
		{ not_ok "$variant: load the fixture"; continue; }
	out=$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" db upgrade 2>&1)
	is "$variant: db upgrade exits 0" "$?" 0
	# the queued jobs belong to this test's user and run in its work dir
	mxq_sql "UPDATE mxq_group SET user_uid = $uid, user_name = '$user', user_gid = $gid,
			user_group = '$grp', job_threads = 1, job_memory = 64, job_command = 'true'
		WHERE group_jobs_inq > 0;
		UPDATE mxq_job SET job_workdir = '$W', job_stdout = '/dev/null',
			job_stderr = '/dev/null', job_argc = 1, job_argv = 'true\\\\0'
		WHERE job_status = 0"
	queued=$(mxq_sql "SELECT GROUP_CONCAT(job_id ORDER BY job_id) FROM mxq_job WHERE job_status = 0")
	is "$variant: the fixture's queued jobs" "$queued" "8,9,10,15,16,21"

	# ------------------------------------------- 1. ours runs the queue
	check "$variant: our mxqd starts on the upgraded database" \
		mxqd_start new1 --slots 2 --memory 1G --no-power-node --energy-sources none
	wait_for 60 "SELECT COUNT(*) = 6 FROM mxq_job WHERE job_id IN ($queued) AND job_status = 1000" &&
		ok "$variant: our mxqd ran the 6 queued jobs of the fixture"
	is "$variant: each has a start time old tools can show" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($queued)
			AND date_start > 0 AND date_end >= date_start")" 6
	is "$variant: counters equal the job rows" "$(counter_mismatches mxq)" ""
	is "$variant: group_sum_starttime = start x slots of the jobs still running" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_group g WHERE group_sum_starttime <>
			(SELECT COALESCE(SUM(UNIX_TIMESTAMP(date_start) * host_slots), 0) FROM mxq_job j
			 WHERE j.group_id = g.group_id AND job_status IN ($running_statuses) AND date_start <> 0)")" 0
	is "$variant: the fixture's running jobs are untouched" \
		"$(mxq_sql "SELECT GROUP_CONCAT(CONCAT(job_id, ':', job_status, '@', host_hostname))
			FROM mxq_job WHERE job_id IN (6, 7, 20)")" "6:200@node1,7:200@node2,20:150@node2"
	mxqd_stop new1 TERM 30
	is "$variant: our mxqd stops" "$mxqd_rc" 0

	# ---------------------- 2. what an old daemon can and cannot take
	plain=$(submit -w "$W" -m 64M -t 10m true)
	feat=
	for opt in "--tags t15a" "--prerequisites t15a" "--gpu" "--whitelist newnode" \
		   "--blacklist oldnode" "--tmpdir 1M"; do
		# shellcheck disable=SC2086 # opt is an option and its value
		feat="$feat${feat:+,}$(submit -w "$W" -m 64M -t 10m $opt true)"
	done
	is "$variant: jobs of groups with new requirements are marked for new daemons only" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($feat) AND server_id = '$hidden'")" 6
	is "$variant: a plain job is not marked" \
		"$(mxq_sql "SELECT server_id FROM mxq_job WHERE job_id = $plain")" ""
	fgroups=$(mxq_sql "SELECT GROUP_CONCAT(DISTINCT group_id) FROM mxq_job WHERE job_id IN ($feat)")
	# upstream mxqsub joins the newest group WHERE ... AND group_status = 0
	# AND group_flags & CLOSED = 0 (its three lookups)
	is "$variant: upstream mxqsub's group lookup can join none of these groups" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_group WHERE group_id IN ($fgroups)
			AND group_status = 0 AND group_flags & 1 = 0")" 0
	is "$variant: our mxqsub still joins them (same tags: same group)" \
		"$(group_of "$(submit -w "$W" -m 64M -t 10m --tags t15a true)")" \
		"$(group_of "${feat%%,*}")"
	mxq_sql "INSERT INTO mxq_daemon (daemon_name, status, hostname, mxq_version, boot_id,
			pid_starttime, daemon_pid, daemon_slots, daemon_memory, $timecol,
			daemon_memory_limit_slot_soft, daemon_memory_limit_slot_hard,
			daemon_jobs_running, daemon_slots_running, daemon_threads_running,
			daemon_memory_used, mtime, daemon_start, daemon_stop)
		VALUES ('main', 0, 'oldnode', '0.22.3', 'b00700aa-0000-4000-8000-000000000015', 1, 4242,
			4, 4096, 60, 1024, 1024, 0, 0, 0, 0, NULL, NULL, 0)"
	old_id=$(mxq_sql "SELECT MAX(daemon_id) FROM mxq_daemon WHERE hostname = 'oldnode'")
	check "$variant: an old daemon registers with upstream's INSERT" test -n "$old_id"
	claimed=$(old_daemon_claim_all oldnode "$old_id" | tr '\n' ',' | sed 's/,$//')
	is "$variant: the old daemon's dispatch claims exactly the plain job" "$claimed" "$plain"
	old_daemon_load "$plain"
	is "$variant: LOADED sets date_start (upstream's trigger did)" \
		"$(mxq_sql "SELECT date_start > 0 FROM mxq_job WHERE job_id = $plain")" 1
	is "$variant: LOADED counts the job on the old daemon's row" \
		"$(mxq_sql "SELECT CONCAT(daemon_jobs_running, '/', daemon_slots_running) FROM mxq_daemon
			WHERE daemon_id = $old_id")" "1/2"
	pg=$(group_of "$plain")
	is "$variant: LOADED adds start x slots to group_sum_starttime" \
		"$(mxq_sql "SELECT g.group_sum_starttime = UNIX_TIMESTAMP(j.date_start) * 2
			FROM mxq_group g JOIN mxq_job j ON j.group_id = g.group_id WHERE j.job_id = $plain")" 1
	start=$(mxq_sql "SELECT date_start FROM mxq_job WHERE job_id = $plain")
	old_daemon_run "$plain"
	is "$variant: RUNNING keeps date_start" \
		"$(mxq_sql "SELECT date_start FROM mxq_job WHERE job_id = $plain")" "$start"
	old_daemon_finish "$plain"
	is "$variant: FINISHED: counters equal the job rows" "$(counter_mismatches mxq)" ""
	is "$variant: FINISHED: daemon counters, sum_starttime back to 0; stats folded in" \
		"$(mxq_sql "SELECT CONCAT_WS(' ', d.daemon_jobs_running, d.daemon_slots_running,
			g.group_sum_starttime, g.stats_total_real_sec_finished, g.stats_max_maxrss,
			g.stats_total_utime_sec)
			FROM mxq_daemon d, mxq_group g WHERE d.daemon_id = $old_id AND g.group_id = $pg")" \
		"0 0 0 5 777 3"
	# our mxqd requeues a claimed job with server_id = ''; still hidden
	f1=${feat%%,*}
	mxq_sql "UPDATE mxq_job SET job_status = 100, daemon_id = 99, host_hostname = 'x',
			server_id = 'main' WHERE job_id = $f1;
		UPDATE mxq_job SET job_status = 0, daemon_id = 0, host_hostname = '', server_id = '',
			host_slots = 0 WHERE job_id = $f1"
	is "$variant: a requeued job with new requirements is hidden again" \
		"$(mxq_sql "SELECT server_id FROM mxq_job WHERE job_id = $f1")" "$hidden"
	is "$variant: the old daemon's dispatch still claims nothing" \
		"$(old_daemon_claim_all oldnode "$old_id")" ""

	# ------------------- 3. old mxqsub and ours: one group per command
	mxq_sql "INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
			job_stdout, job_stderr, job_umask, host_submit)
		VALUES (127, $pg, '$W', 1, 'true\\\\0', '/dev/null', '/dev/null', 18, 'login1')"
	again=$(submit -w "$W" -m 64M -t 10m true)
	is "$variant: our mxqsub joins the group an old mxqsub's job is in (command as given)" \
		"$(group_of "$again")" "$pg"
	is "$variant: the old daemon takes the old mxqsub's job and ours" \
		"$(old_daemon_claim_all oldnode "$old_id" | wc -l)" 2
	mxq_sql "UPDATE mxq_job SET job_status = 0, daemon_id = 0, host_hostname = '',
		server_id = '' WHERE group_id = $pg AND job_status = 100"

	# ----------------------------- 4. new daemons run the hidden jobs
	check "$variant: our mxqd for the new requirements starts" \
		mxqd_start newnode --slots 2 --memory 1G --tags t15a --gpus 1 --no-power-node \
		--energy-sources none
	wait_for 60 "SELECT COUNT(*) = 0 FROM mxq_job WHERE group_id IN ($fgroups) AND job_status <> 1000" &&
		ok "$variant: our mxqd ran every job with new requirements"
	is "$variant: ... on newnode, never on oldnode" \
		"$(mxq_sql "SELECT GROUP_CONCAT(DISTINCT host_hostname) FROM mxq_job
			WHERE group_id IN ($fgroups)")" newnode
	wait_for 60 "SELECT COUNT(*) = 0 FROM mxq_job WHERE group_id = $pg AND job_status = 0" &&
		ok "$variant: and the plain jobs the old daemon left"
	is "$variant: counters equal the job rows at the end" "$(counter_mismatches mxq)" ""
	mxqd_stop newnode TERM 30
	is "$variant: daemon counters of our stopped daemons are 0" \
		"$(mxq_sql "SELECT SUM(daemon_jobs_running + daemon_slots_running)
			FROM mxq_daemon WHERE hostname IN ('new1', 'newnode')")" 0
	# --------- 5. our mxqkill on jobs an old daemon runs (emulated)
	# Upstream mxqd knows no CANCELLING: it kills the running jobs of a
	# CANCELLED group itself and ends them with the UPDATE of upstream
	# mxq_job.c (old_daemon_end), which matches LOADED, RUNNING, KILLING only.
	kg=$(group_of "$(submit -w "$W" -m 64M -t 10m -N kill-g true)")
	submit -w "$W" -m 64M -t 10m -N kill-g true >/dev/null
	kjobs=$(old_daemon_claim_all oldnode "$old_id" | tr '\n' ' ')
	for j in $kjobs; do old_daemon_load "$j"; old_daemon_run "$j"; done
	is "$variant: the old daemon runs both jobs of the group" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $kg AND job_status = 200
			AND daemon_id = $old_id")" 2
	out=$("$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$kg" 2>&1)
	is "$variant: mxqkill -g on the old daemon's group exits 0" "$?" 0
	is "$variant: ... and says who terminates the jobs" "$out" \
		"cancelled group $kg: 0 queued jobs cancelled, 2 running jobs being terminated (2 of them by upstream mxqd, which ends them itself)"
	is "$variant: ... leaves them as upstream's daemon expects them, never CANCELLING" \
		"$(mxq_sql "SELECT GROUP_CONCAT(DISTINCT job_status) FROM mxq_job WHERE group_id = $kg")" 200
	for j in $kjobs; do old_daemon_end "$j" 400; done
	is "$variant: the old daemon's end UPDATE records both as KILLED" \
		"$(mxq_sql "SELECT GROUP_CONCAT(DISTINCT job_status) FROM mxq_job WHERE group_id = $kg")" 400
	is "$variant: ... and the group's running counters return to 0" \
		"$(mxq_sql "SELECT CONCAT(group_jobs_running, '/', group_slots_running, '/', group_jobs_failed)
			FROM mxq_group WHERE group_id = $kg")" "0/0/2"
	kj=$(submit -w "$W" -m 64M -t 10m -N kill-j true)
	kjg=$(group_of "$kj")
	is "$variant: the old daemon runs a job to cancel alone" \
		"$(old_daemon_claim_all oldnode "$old_id")" "$kj"
	old_daemon_load "$kj"
	old_daemon_run "$kj"
	"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$kj" >"$W/kill.out" 2>"$W/kill.err"
	is "$variant: mxqkill -J on the old daemon's job exits 1" "$?" 1
	is "$variant: ... prints nothing on stdout" "$(cat "$W/kill.out")" ""
	is "$variant: ... one line on stderr" "$(wc -l <"$W/kill.err")" 1
	contains "$variant: ... saying an upstream mxqd cannot kill single jobs" "$(cat "$W/kill.err")" \
		"mxqkill: job $kj runs on an upstream mxqd (oldnode, MXQ 0.22.3) that cannot kill single jobs: left RUNNING"
	is "$variant: ... and leaves the job RUNNING" "$(status_of "$kj")" 200
	# a row an earlier mxqkill moved to CANCELLING is put back
	mxq_sql "UPDATE mxq_job SET job_status = 989 WHERE job_id = $kj"
	out=$("$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$kj" 2>&1)
	is "$variant: mxqkill -J on an old daemon's CANCELLING job exits 1" "$?" 1
	contains "$variant: ... says it put the job back" "$out" "it was CANCELLING, put back"
	is "$variant: ... RUNNING again, as the old daemon holds it" "$(status_of "$kj")" 200
	mxq_sql "UPDATE mxq_job SET job_status = 989 WHERE job_id = $kj"
	"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$kjg" >/dev/null 2>&1
	is "$variant: mxqkill -g puts an old daemon's CANCELLING job back too" "$(status_of "$kj")" 200
	old_daemon_end "$kj" 1000
	is "$variant: ... so the old daemon's end UPDATE finishes it" "$(status_of "$kj")" 1000
	is "$variant: counters equal the job rows after the kills" "$(counter_mismatches mxq)" ""

	# ------- 6. the same with a real upstream mxqd (MXQ_UPSTREAM_DIR)
	if [ -z "$UP" ]; then
		skip "$variant: real upstream mxqd: MXQ_UPSTREAM_DIR not set"
	else
		up_start
		rg=$(group_of "$(submit -w "$W" -m 64M -t 10m -N kill-up sleep 300)")
		submit -w "$W" -m 64M -t 10m -N kill-up sleep 300 >/dev/null
		check "$variant: upstream mxqd runs both jobs of a group" \
			wait_for 60 "SELECT COUNT(*) = 2 FROM mxq_job WHERE group_id = $rg AND job_status = 200
			AND host_hostname = 'uphost'"
		out=$("$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$rg" 2>&1)
		is "$variant: mxqkill -g on upstream mxqd's group exits 0" "$?" 0
		contains "$variant: ... 2 by upstream mxqd" "$out" "(2 of them by upstream mxqd"
		check "$variant: upstream mxqd kills them and records a final status" \
			wait_for 60 "SELECT COUNT(*) = 2 FROM mxq_job WHERE group_id = $rg
			AND job_status IN (400, 750, 1000)"
		is "$variant: ... the group's running counters are 0 again" \
			"$(mxq_sql "SELECT CONCAT(group_jobs_running, '/', group_slots_running)
				FROM mxq_group WHERE group_id = $rg")" "0/0"
		rj=$(submit -w "$W" -m 64M -t 10m -N kill-up1 sleep 300)
		check "$variant: upstream mxqd runs a job to cancel alone" \
			wait_for 60 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $rj"
		"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$rj" >/dev/null 2>"$W/kill.err"
		is "$variant: mxqkill -J on it exits 1" "$?" 1
		is "$variant: ... with one line on stderr" "$(wc -l <"$W/kill.err")" 1
		contains "$variant: ... naming the upstream mxqd" "$(cat "$W/kill.err")" \
			"runs on an upstream mxqd (uphost, MXQ 0.2"
		sleep 2
		is "$variant: ... the job still runs, not stranded at CANCELLING" "$(status_of "$rj")" 200
		"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$(group_of "$rj")" >/dev/null
		check "$variant: ... and ends for good when its group is cancelled" \
			wait_for 60 "SELECT job_status IN (400, 750, 1000) FROM mxq_job WHERE job_id = $rj"
		is "$variant: counters equal the job rows after upstream's kills" \
			"$(counter_mismatches mxq)" ""
		up_stop
	fi
	out=$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" db status 2>&1)
	contains "$variant: db status: schema as expected after the mixed run" "$out" "schema: as expected"
done

tap_done
