#!/bin/sh
# tests/test_mxqd.sh - mxqd against a private MariaDB: many jobs through
# several daemons, job limits and environment, signals, mxqkill, bad input.
#
# Every mxqd is a child of this shell (tests/lib/mxqd.sh) with its own
# --hostname, spool, tmpdir and log under $MXQ_TEST_DIR. Jobs are
# submitted with the real mxqsub; outcomes are read from the database and
# from marker files the jobs write. No fixed sleeps: every wait is a
# bounded poll on a condition.
#
#   1. 300 jobs in 3 groups, submitted while 3 daemons run: each runs once,
#      ends FINISHED, counters equal COUNT(*), all hosts used
#   2. SIGTERM with running jobs: they finish, daemon exits 0, row EXITED
#   3. SIGINT with running jobs: they end KILLED, daemon exits
#   4. limits (runtime, memory), exit status, environment, workdir, umask,
#      stdout/stderr
#   5. mxqkill of a group with running and queued jobs
#   6. bad options and a missing database client configuration (a
#      database that is not reachable is waited for: test_power_faults.sh)
#   7. more slots than open files: mxqd started with an open file limit
#      of 64 and 40 slots runs the 40 jobs fewer at a time, and every one
#      FINISHED once (before: jobs FAILED with a false "cgroup left by an
#      earlier run", or were lost UNKNOWN, and the shortage was called a
#      disk fault); what it says at start is what its limit runs, and
#      the limit it tells to raise to runs one job per slot (before: it
#      left out its own descriptors, 20 said and 16 run; 7 of 12 ran at
#      the limit it named)

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"

# Is the process PID alive (not a zombie)?
alive() {
	mxq__alive "$1"
}

# --------------------------------------------- 1. 300 jobs, 3 daemons

section "1. 300 jobs, 3 daemons"
for h in node1 node2 node3; do
	check "start mxqd $h" mxqd_start "$h" --slots 4 --memory 4G
done

mkdir -p "$W/ran"
sub_pids=
for g in 1 2 3; do
	(
		n=0
		while [ "$n" -lt 100 ]; do
			n=$((n + 1))
			# shellcheck disable=SC2016 # expanded by the job's shell
			submit -N "many$g" -m 64M -w "$W/ran" \
				sh -c 'echo "$MXQ_JOBID $MXQ_HOSTNAME" >> "ran.$MXQ_JOBID"; sleep 0.0'"$g" \
				>>"$W/submitted.$g" || echo "submission $g/$n failed" >>"$W/submit.err"
		done
	) &
	sub_pids="$sub_pids $!"
done

# While submissions and jobs go on, the counters must always agree with
# the job rows (each check is one consistent SELECT). The wait ends when
# every job has ended, after 150 s, or when nothing moved for 20 s after
# the last submission (a stuck job).
mismatch_seen=
submitting=yes
end=$(( $(now_cs) + 15000 ))
last_state=
last_change=$(now_cs)
while :; do
	if [ -n "$submitting" ]; then
		submitting=
		for p in $sub_pids; do
			alive "$p" && submitting=yes
		done
	fi
	bad=$(counter_mismatches)
	if [ -n "$bad" ] && [ -z "$mismatch_seen" ]; then
		mismatch_seen=$bad
	fi
	state=$(mxq_sql "SELECT COUNT(*), COALESCE(SUM(job_status IN (0, 100, 150, 200, 250,
		300, 350, 399, 989)), 0) FROM mxq_job")
	active=${state#*	}
	now=$(now_cs)
	if [ "$state" != "$last_state" ] || [ -n "$submitting" ]; then
		last_state=$state
		last_change=$now
	fi
	[ -z "$submitting" ] && [ "$active" = 0 ] && break
	if [ "$now" -ge "$end" ] || [ $((now - last_change)) -gt 2000 ]; then
		printf 'gave up waiting: jobs not ended by status:\n%s\n' "$(mxq_sql "SELECT
			job_status, COUNT(*), GROUP_CONCAT(job_id) FROM mxq_job WHERE job_status < 400
			GROUP BY job_status")" | diag
		break
	fi
	sleep 0.2
done
for p in $sub_pids; do
	wait "$p"
done

# BUG (rare): mxqsub gives up after 5 deadlocks with the daemons' claims
# (lock order: mxqsub locks the group row, then inserts the job; a claim
# locks job index ranges, then its trigger updates the group row).
is "300 submissions succeeded" "$(cat "$W"/submitted.* | grep -c .)$(cat "$W/submit.err" 2>/dev/null)" 300
is "300 jobs in 3 groups" \
	"$(mxq_sql "SELECT COUNT(DISTINCT group_id), COUNT(*) FROM mxq_job")" "3	300"
# BUG: fails now and then here: after a failed UPDATE to RUNNING (e.g. a
# deadlock with a concurrent mxqsub, see test_mxqd_recovery.sh "recording
# RUNNING fails once") a job runs twice and another one stays ASSIGNED.
is "every job ended FINISHED" \
	"$(mxq_sql "SELECT job_status, COUNT(*) FROM mxq_job GROUP BY job_status")" "1000	300"
is "every job has stats_status 0, date_start and date_end" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE stats_status = 0
		AND date_start > 0 AND date_end >= date_start")" 300
is "300 marker files" "$(ls "$W/ran" | grep -c '^ran\.')" 300
is "every marker file has exactly one line (no job ran twice)" \
	"$(for f in "$W"/ran/ran.*; do wc -l <"$f"; done | sort | uniq -c | sed 's/^ *//')" "300 1"
# the host each job says it ran on is the host the database recorded
for f in "$W"/ran/ran.*; do cat "$f"; done | sort -n >"$W/ran.list"
is "each job ran on the host recorded in mxq_job" \
	"$(cat "$W/ran.list")" \
	"$(mxq_sql "SELECT job_id, host_hostname FROM mxq_job ORDER BY job_id" | tr '\t' ' ')"
is "jobs spread over all three hosts" \
	"$(mxq_sql "SELECT GROUP_CONCAT(DISTINCT host_hostname ORDER BY host_hostname) FROM mxq_job")" \
	"node1,node2,node3"
is "counters equal COUNT(*) per category after the run" "$(counter_mismatches)" ""
is "counters agreed with the job rows throughout the run" "$mismatch_seen" ""
is "group counters: 100 jobs, 100 finished, nothing running" \
	"$(mxq_sql "SELECT CONCAT_WS(' ', group_jobs, group_jobs_inq, group_jobs_running,
		group_jobs_finished, group_jobs_failed, group_jobs_cancelled, group_jobs_unknown,
		group_slots_running) FROM mxq_group ORDER BY group_id")" \
	"100 0 0 100 0 0 0 0
100 0 0 100 0 0 0 0
100 0 0 100 0 0 0 0"

# ------------------------------------------- 2. SIGTERM with running jobs

section "2. SIGTERM with running jobs"
# node2 and node3 are idle: SIGTERM ends them at once.
for h in node2 node3; do
	id=$(mxqd_daemon_id "$h")
	mxqd_stop "$h" TERM 15
	is "idle mxqd $h: SIGTERM exits 0" "$mxqd_rc" 0
	is "idle mxqd $h: daemon row EXITED" \
		"$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $id")" 250
done

id1=$(mxqd_daemon_id node1)
t1=$(submit -N term -t 10m sleep 3)
t2=$(submit -N term -t 10m sleep 3)
wait_for 15 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($t1, $t2)
	AND job_status = 200 AND host_hostname = 'node1'" ||
	not_ok "SIGTERM: both jobs run on node1"
mxqd_signal node1 TERM
# The heartbeat shows TERMINATING: the daemon is alive and got the signal.
if wait_for 10 "SELECT status = 200 FROM mxq_daemon WHERE daemon_id = $id1"; then
	ok "SIGTERM: daemon row TERMINATING while jobs run"
else
	not_ok "SIGTERM: daemon row TERMINATING while jobs run"
fi
is "SIGTERM: jobs still RUNNING after the signal" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($t1, $t2) AND job_status = 200")" 2
check "SIGTERM: mxqd still runs while its jobs do" alive "$(mxqd_pid node1)"
t3=$(submit -N term-late -t 10m true)
mxqd_wait node1 20
is "SIGTERM: mxqd exits 0 once the jobs are done" "$mxqd_rc" 0
is "SIGTERM: both jobs FINISHED (not killed)" \
	"$(mxq_sql "SELECT job_status FROM mxq_job WHERE job_id IN ($t1, $t2)")" "1000
1000"
is "SIGTERM: daemon row EXITED" "$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $id1")" 250
is "SIGTERM: a job submitted after the signal was not taken" "$(status_of "$t3")" 0
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$t3" >/dev/null
is "mxqkill of a queued job: CANCELLED" "$(status_of "$t3")" 990

# -------------------------------------------- 3. SIGINT with running jobs

section "3. SIGINT with running jobs"
check "restart mxqd node1" mxqd_start node1 --slots 4 --memory 4G --kill-grace 2
id1=$(mxqd_daemon_id node1)
k1=$(submit -N int -t 10m sleep 60)
k2=$(submit -N int -t 10m sleep 60)
wait_for 15 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($k1, $k2) AND job_status = 200" ||
	not_ok "SIGINT: both jobs run"
kpids=$(mxq_sql "SELECT host_pid FROM mxq_job WHERE job_id IN ($k1, $k2)")
mxqd_stop node1 INT 20
is "SIGINT: mxqd exits (status 0)" "$mxqd_rc" 0
is "SIGINT: both jobs KILLED" \
	"$(mxq_sql "SELECT job_status FROM mxq_job WHERE job_id IN ($k1, $k2)")" "400
400"
is "SIGINT: daemon row EXITED" "$(mxq_sql "SELECT status FROM mxq_daemon WHERE daemon_id = $id1")" 250
left=
for p in $kpids; do
	alive "$p" && left="$left $p"
done
is "SIGINT: the jobs' processes are gone" "$left" ""
is "counters consistent after SIGTERM and SIGINT" "$(counter_mismatches)" ""

# ------------------------------- 4. limits, exit status, environment

section "4. limits, exit status, environment"
check "start mxqd node4 (--runtime-scale 0.02)" \
	mxqd_start node4 --slots 4 --memory 4G --runtime-scale 0.02 --kill-grace 1
tmp4=$(mxqd_dir node4)/tmp

r_job=$(submit -N limits -t 1m sleep 30)
f_job=$(submit -N limits -t 1m sh -c 'exit 3')
m_job=$(submit -N limits-mem -m 20M -t 10m \
	perl -e '$x = "m" x (100 * 1024 * 1024); sleep 30')
mkdir -p "$W/wd" "$W/out"
# shellcheck disable=SC2016 # expanded by the job's shell
e_job=$(submit -N env -j 2 -m 100M -t 5m -w "$W/wd" -u 027 \
	-o "$W/out/env.out" -e "$W/out/env.err" \
	sh -c 'env; [ -d "$MXQ_JOB_TMPDIR" ] && echo TMPDIR_EXISTS;
		echo "PWD_IS $(pwd)"; echo "UMASK_IS $(umask)"; : > created; echo to-stderr >&2')

wait_for 20 "SELECT COUNT(*) = 4 FROM mxq_job WHERE job_id IN ($r_job, $f_job, $m_job, $e_job)
	AND job_status >= 400 AND job_status NOT IN (989)" ||
	not_ok "limit jobs ended in time"

is "runtime limit (1m x 0.02): job KILLED" "$(status_of "$r_job")" 400
real=$(mxq_sql "SELECT stats_real_sec FROM mxq_job WHERE job_id = $r_job")
check "runtime limit: killed after about 1.2 s, not 30 s (real ${real}s)" test "${real:-99}" -le 5
contains "runtime limit: the log says why" "$(cat "$(mxqd_dir node4)/mxqd.log")" \
	"job $r_job (group $(group_of "$r_job"), user root) KILLED: over its runtime limit"

is "exit 3: job FAILED" "$(status_of "$f_job")" 750
is "exit 3: stats_status is the wait status 3 << 8" \
	"$(mxq_sql "SELECT stats_status FROM mxq_job WHERE job_id = $f_job")" 768

is "memory limit (20M, job holds 100M): job KILLED" "$(status_of "$m_job")" 400
contains "memory limit: the log says why" "$(cat "$(mxqd_dir node4)/mxqd.log")" \
	"job $m_job (group $(group_of "$m_job"), user root) KILLED: over its memory limit"
# polled RSS overshoots the limit; in a memory cgroup the kernel stops the
# job at it (then the high-water mark is the limit)
check "memory limit: peak RSS recorded at or above the limit" \
	test "$(mxq_sql "SELECT stats_max_sumrss FROM mxq_job WHERE job_id = $m_job")" -ge 19456

# (fixed) the reaper used to sample the job's memory right after fork(), while the
# child is still a copy of the reaper (about 2-3.5 MB RSS) and has not
# exec'd the command yet, so jobs with small limits are KILLED for memory
# they never used. `sleep` needs about 1.7 MB; under a 2M limit about half
# of such jobs were killed within 15-60 ms ("over its memory limit").
small=
for n in 1 2 3 4 5 6 7 8; do
	small="$small${small:+,}$(submit -N small-mem -m 2M -t 10m sleep 0.5)"
done
wait_for 20 "SELECT COUNT(*) = 8 FROM mxq_job WHERE job_id IN ($small) AND job_status >= 400" ||
	not_ok "small-memory jobs ended in time"
is "jobs that stay within a small memory limit (2M, sleep 0.5) are not killed" \
	"$(mxq_sql "SELECT job_status, COUNT(*) FROM mxq_job WHERE job_id IN ($small)
		GROUP BY job_status")" "1000	8"

is "environment job FINISHED" "$(status_of "$e_job")" 1000
out=$(cat "$W/out/env.out" 2>/dev/null)
for kv in "MXQ_JOBID=$e_job" MXQ_THREADS=2 MXQ_SLOTS=2 MXQ_MEMORY=100 MXQ_TIME=5 \
	MXQ_HOSTNAME=node4 "MXQ_JOB_TMPDIR=$tmp4/mxq_job_$e_job"; do
	case "
$out
" in
	*"
$kv
"*) ok "environment: $kv" ;;
	*) not_ok "environment: $kv"; printf '%s\n' "$out" | grep MXQ_ | diag ;;
	esac
done
contains "MXQ_JOB_TMPDIR exists while the job runs" "$out" TMPDIR_EXISTS
check "MXQ_JOB_TMPDIR is removed after the job" test ! -e "$tmp4/mxq_job_$e_job"
contains "the job runs in its workdir" "$out" "PWD_IS $W/wd"
contains "the job runs with its umask" "$out" "UMASK_IS 0027"
is "a file the job creates has mode 640 (umask 027)" "$(stat -c %a "$W/wd/created" 2>&1)" 640
is "stderr goes to the stderr file" "$(cat "$W/out/env.err" 2>&1)" to-stderr

# --------------------------------------------------- 5. mxqkill a group

section "5. mxqkill a group"
# -m 64M: one slot per job; -t 2h: 144 s under --runtime-scale 0.02
c_first=$(submit -N cancel -m 64M -t 2h sleep 60)
for n in 2 3 4 5 6; do
	submit -N cancel -m 64M -t 2h sleep 60 >/dev/null
done
cg=$(group_of "$c_first")
wait_for 15 "SELECT COUNT(*) = 4 FROM mxq_job WHERE group_id = $cg AND job_status = 200" ||
	not_ok "mxqkill: 4 of the 6 jobs run (4 slots)"
is "mxqkill: 2 jobs still queued" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $cg AND job_status = 0")" 2
cpids=$(mxq_sql "SELECT host_pid FROM mxq_job WHERE group_id = $cg AND job_status = 200")
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$cg" >"$W/kill.out" 2>&1
is "mxqkill -g exits 0" "$?" 0
wait_for 15 "SELECT COUNT(*) = 6 FROM mxq_job WHERE group_id = $cg AND job_status = 990" ||
	not_ok "mxqkill: all 6 jobs end CANCELLED in time"
is "mxqkill: all jobs of the group CANCELLED" \
	"$(mxq_sql "SELECT job_status, COUNT(*) FROM mxq_job WHERE group_id = $cg GROUP BY job_status")" \
	"990	6"
is "mxqkill: group counters" \
	"$(mxq_sql "SELECT CONCAT_WS(' ', group_status, group_jobs, group_jobs_inq, group_jobs_running,
		group_jobs_cancelled, group_slots_running) FROM mxq_group WHERE group_id = $cg")" \
	"99 6 0 0 6 0"
left=
for p in $cpids; do
	alive "$p" && left="$left $p"
done
is "mxqkill: the running jobs' processes are gone" "$left" ""
is "counters consistent after everything" "$(counter_mismatches)" ""
mxqd_stop node4 TERM 15
is "mxqd node4 exits 0 on SIGTERM" "$mxqd_rc" 0

# ------------------------------------------------------ 6. bad input

section "6. bad input"
rows_before=$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon")
bad_run() {
	_d=$MXQ_TEST_DIR/bad
	mkdir -p "$_d"
	timeout 20 "$mxqd_bin" --hostname badnode --spool "$_d/spool" --tmpdir "$_d/tmp" \
		--log "$_d/log" --poll-interval 0.1 "$@" </dev/null >"$_d/stdout" 2>"$_d/stderr"
	bad_rc=$?
	bad_err=$(cat "$_d/stderr")
}
while IFS='|' read -r desc cnf args; do
	[ -n "$desc" ] || continue
	case $cnf in
	missing) cnf=$MXQ_TEST_DIR/no-such.cnf ;;
	*) cnf=$MXQ_MYSQL_DEFAULT_FILE ;;
	esac
	eval "set -- $args"
	bad_run -M "$cnf" "$@"
	check "bad input ($desc): exit status non-zero (got $bad_rc)" \
		test "$bad_rc" -ne 0 -a "$bad_rc" -ne 124
	is "bad input ($desc): one line on stderr" "$(printf '%s\n' "$bad_err" | grep -c .)" 1
	[ "$(printf '%s\n' "$bad_err" | grep -c .)" = 1 ] || printf '%s\n' "$bad_err" | diag
done <<'EOF'
unknown option|ok|--no-such-option
bad --memory|ok|--memory 12Q
bad --prerequisites|ok|--prerequisites 'a &'
missing database configuration|missing|
EOF
contains "bad --memory: the line names the option" "$(bad_run -M "$MXQ_MYSQL_DEFAULT_FILE" \
	--memory 12Q; echo "$bad_err")" "--memory"
is "bad input: no mxq_daemon row written" "$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon")" "$rows_before"

# ------------------------------------------- 7. more slots than open files

section "7. more slots than open files"
mxq_sql "DELETE FROM mxq_job WHERE job_status >= 400" >/dev/null
mxqd_wrap="prlimit --nofile=64:64 --"
check "start mxqd fdnode (40 slots, open file limit 64)" \
	mxqd_start fdnode --slots 40 --memory 40G
mxqd_wrap=
# submit_n COUNT NAME SECONDS: COUNT jobs of sleep SECONDS; prints the first id
submit_n() {
	_sn_first=$(submit -N "$2" -m 64M -w "$W" sleep "$3")
	_sn_i=1
	while [ "$_sn_i" -lt "$1" ]; do
		submit -N "$2" -m 64M -w "$W" sleep "$3" >/dev/null
		_sn_i=$((_sn_i + 1))
	done
	echo "$_sn_first"
}
first=$(submit_n 40 fd 3)
fd_pause="SELECT daemon_pause_reason FROM mxq_daemon WHERE hostname = 'fdnode'
	ORDER BY daemon_id DESC LIMIT 1"
# the power manager must not count the slots it cannot fill as capacity
if wait_for 20 "SELECT ($fd_pause) LIKE 'open files: % in use, no room for another job'"; then
	ok "while held back, its daemon row says why it takes no job"
else
	not_ok "while held back, its daemon row says why it takes no job"
fi
fd_sql="SELECT COUNT(*) FROM mxq_job WHERE job_id >= $first AND job_status = 1000"
wait_for 60 "SELECT ($fd_sql) = 40" || not_ok "the 40 jobs ended"
if wait_for 10 "SELECT ($fd_pause) = ''"; then
	ok "once the jobs ended, no pause is left in its row"
else
	not_ok "once the jobs ended, no pause is left in its row"
fi
is "all 40 FINISHED" "$(mxq_sql "$fd_sql")" 40
is "none FAILED, KILLED or UNKNOWN" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job
	WHERE job_id >= $first AND job_status IN (400, 750, 999)")" 0
is "each started once" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id >= $first
	AND host_hostname = 'fdnode' AND date_start > 0")" 40
L=$(mxqd_dir fdnode)/mxqd.log
check "mxqd said at start how many jobs its limit lets run" grep -qE \
	"open files: the limit of 64 lets about [0-9]+ jobs run at once.*fewer than --slots 40" "$L"
check "and when it held jobs back" grep -qF "no new job until some end" "$L"
# the most jobs that ran at once among those from job id $1 on
most_at_once() {
	mxq_sql "SELECT MAX(n) FROM (SELECT (SELECT COUNT(*) FROM mxq_job b
	WHERE b.job_id >= $1 AND b.date_start <= a.date_start AND b.date_end > a.date_start) n
	FROM mxq_job a WHERE a.job_id >= $1) t"
}
most=$(most_at_once "$first")
said=$(sed -n 's/.*open files: the limit of 64 lets about \([0-9]*\) jobs.*/\1/p' "$L" | head -1)
# (one off either way: the rows have whole seconds, and an end is
# recorded a moment after the job's descriptors are free)
check "at most as many ran at once ($most) as it said ($said)" \
	test "${most:-99}" -le $(( ${said:-0} + 1 ))
# mxqd's own descriptors (database, log, spool lock, ...) count too: what
# it says at start is what it runs, not more
check "and it said no more than ran ($said, $most)" test "${said:-99}" -le $(( ${most:-0} + 1 ))
if grep -q "node disk\|Too many open files" "$L"; then
	not_ok "no descriptor shortage reached a job or was called a disk fault"
	grep "node disk\|Too many open files" "$L" | head -5 | diag
else
	ok "no descriptor shortage reached a job or was called a disk fault"
fi
mxqd_stop fdnode TERM 15

# the limit it tells to raise to runs one job per slot
mxqd_wrap="prlimit --nofile=32:32 --"
check "start mxqd fdnode2 (12 slots, open file limit 32)" \
	mxqd_start fdnode2 --slots 12 --memory 12G
mxqd_wrap=
L2=$(mxqd_dir fdnode2)/mxqd.log
wait_until 10 grep -qF "open files: the limit of 32" "$L2"
mxqd_stop fdnode2 TERM 15
raise=$(sed -n 's/.*raise LimitNOFILE in mxqd.service to \([0-9]*\) to run one per slot.*/\1/p' \
	"$L2" | head -1)
check "fdnode2 said which limit runs one job per slot ($raise)" test -n "$raise"
mxqd_wrap="prlimit --nofile=${raise:-32}:${raise:-32} --"
check "start mxqd fdnode3 (12 slots, open file limit $raise)" \
	mxqd_start fdnode3 --slots 12 --memory 12G
mxqd_wrap=
first3=$(submit_n 12 fd3 4)
wait_for 60 "SELECT COUNT(*) = 12 FROM mxq_job WHERE job_id >= $first3 AND job_status = 1000" ||
	not_ok "the 12 jobs ended"
L3=$(mxqd_dir fdnode3)/mxqd.log
is "with the limit it said, all 12 ran at once" "$(most_at_once "$first3")" 12
if grep -qF "no new job until some end" "$L3"; then
	not_ok "with the limit it said, no job was held back"
	grep -F "open files" "$L3" | head -3 | diag
else
	ok "with the limit it said, no job was held back"
fi
mxqd_stop fdnode3 TERM 15

# a limit that lets no job run (a start alone needs 16 above what is open):
# it would register slots it never fills
rows_before=$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon")
prlimit --nofile=16:16 -- true 2>/dev/null || not_ok "prlimit works"
bad_err=$(prlimit --nofile=16:16 -- timeout 20 "$mxqd_bin" --hostname fdnode4 \
	-M "$MXQ_MYSQL_DEFAULT_FILE" --spool "$MXQ_TEST_DIR/fd4/spool" \
	--tmpdir "$MXQ_TEST_DIR/fd4/tmp" --log "$MXQ_TEST_DIR/fd4.log" --slots 4 \
	</dev/null 2>&1 >/dev/null)
bad_rc=$?
check "open file limit 16: mxqd refuses to start (exit $bad_rc)" test "$bad_rc" -ne 0
is "with one line" "$(printf '%s\n' "$bad_err" | grep -c .)" 1
contains "that says which limit lets a job run" "$bad_err" \
	"the open file limit of 16 lets no job run"
is "and registers no daemon row" "$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon")" "$rows_before"

# ----------------------------- 8. a start that runs short past the checks

# The descriptor guard of section 7 counts this process's own descriptors;
# ENFILE (the whole system's table is full) or a fork that fails for lack
# of memory gets past it. The first two reaper forks fail as they would.
section "8. a start that runs short past the checks"
mxqd_wrap="env MXQD_TEST_START_FAIL=ENFILE:2"
check "start mxqd shortnode (its first two job starts fail with ENFILE)" \
	mxqd_start shortnode --slots 4 --memory 4G
mxqd_wrap=
first=$(submit -N short -m 64M -w "$W" sleep 1)
submit -N short -m 64M -w "$W" sleep 1 >/dev/null
submit -N short -m 64M -w "$W" sleep 1 >/dev/null
short_sql="SELECT COUNT(*) FROM mxq_job WHERE job_id >= $first AND job_status = 1000"
wait_for 60 "SELECT ($short_sql) = 3" || not_ok "the 3 jobs ended"
is "all 3 FINISHED" "$(mxq_sql "$short_sql")" 3
is "none FAILED, KILLED or UNKNOWN" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job
	WHERE job_id >= $first AND job_status IN (400, 750, 999)")" 0
L=$(mxqd_dir shortnode)/mxqd.log
is "two starts put their job back in the queue" "$(grep -c "back to the queue, not run: \
cannot start a reaper: Too many open files in system (the node is short of open files)" "$L")" 2
is "the group counts 3 finished jobs, none failed" "$(mxq_sql "SELECT group_jobs_finished,
	group_jobs_failed FROM mxq_group g JOIN mxq_job j ON j.group_id = g.group_id
	WHERE j.job_id = $first" | tr '\t' ' ')" "3 0"
if grep -q "node disk\|disk fault\|paused" "$L"; then
	not_ok "the shortage was not taken for a disk fault"
	grep "node disk\|disk fault\|paused" "$L" | head -5 | diag
else
	ok "the shortage was not taken for a disk fault"
fi
is "its daemon row names no pause" "$(mxq_sql "SELECT COALESCE(daemon_pause_reason, '')
	FROM mxq_daemon WHERE hostname = 'shortnode' ORDER BY daemon_id DESC LIMIT 1")" ""
mxqd_stop shortnode TERM 15

tap_done
