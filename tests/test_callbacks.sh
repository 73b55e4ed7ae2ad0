#!/bin/sh
# tests/test_callbacks.sh - job callbacks (mxqsub --callback) run by mxqd.
#
#   1. a callback runs exactly once per terminal outcome, for FINISHED,
#      FAILED, KILLED (runtime limit) and CANCELLED jobs, with MXQ_JOB_ID,
#      MXQ_GROUP_ID, MXQ_JOB_STATUS, MXQ_JOB_WORKDIR and the job's workdir
#      as its current directory
#   2. a callback that sleeps and one that keeps forking do not stall mxqd
#      (the next jobs start promptly, measured with the jobs' own clock
#      readings) and are killed with everything they started after
#      --callback-timeout
#   3. a callback that has a helper stop and continue it again and again
#      (every stop and continue is a SIGCHLD to mxqd's supervisor) is
#      still killed at --callback-timeout; a callback starts with the
#      default signal dispositions (nothing ignored) and the umask of its
#      job, as the job does; a callback or an output file whose name
#      carries a newline and a forged log line cannot put that line into
#      mxqd's log
#   4. a job that ends while its mxqd is down (SIGQUIT) and one that runs
#      after the restart get one callback each, with their status
#   5. jobs cancelled before they started (mxqkill -J, mxqkill -g while no
#      mxqd runs; one claimed and cancelled before its start) get one
#      callback each, CANCELLED, from one of two mxqd; none where no host
#      qualifies, and none for rows cancelled days ago or before the
#      triggers wrote date_end; SIGTERM to a callback's supervisor ends
#      the callback too
#   6. a job whose end took on the server while the answer was lost
#      (tests/db_cut.py closes mxqd's connection right after the UPDATE
#      that records the end has run): after the reconnect mxqd knows the
#      end is its own, so the callback runs once and the energy row is
#      written; a job someone else ended meanwhile still gets neither
#   7. mxqd killed right after it recorded a job's end, before the
#      callback (MXQD_TEST_END_HOLD=recorded), and right after the
#      callback, before it removed the job's spool files (=hooked): the
#      restarted mxqd runs the callback once in the first case and not
#      again in the second, and the energy row gets its end
#   8. jobs cancelled around an mxqd that died: a running job cancelled
#      while no mxqd runs and then ending with status 0, a claimed job
#      cancelled before its reaper left a trace, and a job whose CANCELLED
#      was recorded just before mxqd died: CANCELLED, one callback each
#      with CANCELLED; also when the answer to the restarted mxqd's read
#      of such a job's row is lost
#
# Every callback writes its process group id (= its pid: mxqd makes it a
# group leader) to a file first, so this test can check that the group is
# gone and, on failure, kill exactly what it created.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

W=$MXQ_TEST_DIR/work
CB=$MXQ_TEST_DIR/cb
mkdir -p "$W/wd" "$CB"

# Process group ids the callbacks reported.
cb_pgids() {
	cat "$CB"/*.pgid 2>/dev/null
}

# Pids (not zombies) of the process group $1.
pgroup_members() {
	cat /proc/[0-9]*/stat 2>/dev/null |
		awk -v g="$1" '{ pid = $1; sub(/^.*\) /, ""); if ($3 == g && $1 != "Z") print pid }'
}

pgroup_gone() {
	[ -z "$(pgroup_members "$1")" ]
}

mxq_test_cleanup_hook() {
	for g in $(cb_pgids); do
		case $g in ''|*[!0-9]*|0|1) continue ;; esac
		kill -KILL "-$g" 2>/dev/null
	done
	mxqd_cleanup
	db_cut_stop
}

# The recording callback.
cat >"$CB/record.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/record.\$MXQ_JOB_ID.pgid"
echo "\$MXQ_JOB_ID \$MXQ_GROUP_ID \$MXQ_JOB_STATUS \$MXQ_JOB_WORKDIR \$(pwd)" >> "$CB/record.log"
EOF
# A callback that would sleep for a long time.
cat >"$CB/sleeper.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/sleeper.pgid"
sleep 1000
EOF
# A callback that keeps forking: without mxqd's timeout it would go on until
# the process table is full (each child lives 100 s). RLIMIT_AS and RLIMIT_CPU
# do not stop it; only the timeout does.
cat >"$CB/forker.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/forker.pgid"
while :; do
	sleep 100 &
	echo \$! >> "$CB/forker.children"
done
EOF
chmod 755 "$CB/record.sh" "$CB/sleeper.sh" "$CB/forker.sh"

# ------------------------------------------- 1. one call per outcome

section "1. one callback per terminal outcome"
check "start mxqd cbnode (--runtime-scale 0.02, --callback-timeout 3)" \
	mxqd_start cbnode --slots 4 --memory 4G --runtime-scale 0.02 --callback-timeout 3 \
	--kill-grace 1
rec=$CB/record.sh
j_fin=$(submit -N cb -m 64M -t 1h -w "$W/wd" --callback "$rec" true)
j_fail=$(submit -N cb -m 64M -t 1h -w "$W/wd" --callback "$rec" sh -c 'exit 3')
j_kill=$(submit -N cb-short -m 64M -t 1m -w "$W/wd" --callback "$rec" sleep 30)
j_canc=$(submit -N cb -m 64M -t 1h -w "$W/wd" --callback "$rec" sleep 60)
wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j_canc" ||
	not_ok "the job to cancel runs"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_canc" >/dev/null
wait_for 20 "SELECT COUNT(*) = 4 FROM mxq_job WHERE job_id IN ($j_fin, $j_fail, $j_kill, $j_canc)
	AND job_status IN (400, 750, 990, 1000)" || not_ok "the four jobs ended in time"
is "job outcomes: FINISHED FAILED KILLED CANCELLED" \
	"$(for j in $j_fin $j_fail $j_kill $j_canc; do status_of "$j"; done | tr '\n' ' ')" \
	"1000 750 400 990 "

lines_for() {
	grep -c "^$1 " "$CB/record.log" 2>/dev/null
}
if wait_until 10 test "$(cat "$CB/record.log" 2>/dev/null | wc -l)" -ge 4; then
	ok "four callbacks ran"
else
	not_ok "four callbacks ran"
fi
for jn in "$j_fin FINISHED" "$j_fail FAILED" "$j_kill KILLED" "$j_canc CANCELLED"; do
	set -- $jn
	g=$(group_of "$1")
	is "callback of job $1 ($2): id, group, status, workdir, current directory" \
		"$(grep "^$1 " "$CB/record.log")" "$1 $g $2 $W/wd $W/wd"
done

# ------------------------------------- 2. callbacks that misbehave

section "2. sleeping and forking callbacks"
mxqd_stop cbnode TERM 15
is "mxqd cbnode exits 0" "$mxqd_rc" 0
# one slot: the jobs run one after the other, each records its own clock
check "start mxqd cbnode1 (1 slot, --callback-timeout 3)" \
	mxqd_start cbnode1 --slots 1 --memory 4G --callback-timeout 3
# shellcheck disable=SC2016 # expanded by the job's shell
a=$(submit -N stall -m 64M -w "$W/wd" --callback "$CB/sleeper.sh" \
	sh -c 'date +%s.%N > a.end')
b=$(submit -N stall -m 64M -w "$W/wd" --callback "$CB/forker.sh" \
	sh -c 'date +%s.%N > b.start; date +%s.%N > b.end')
c=$(submit -N stall -m 64M -w "$W/wd" sh -c 'date +%s.%N > c.start')
wait_for 20 "SELECT COUNT(*) = 3 FROM mxq_job WHERE job_id IN ($a, $b, $c) AND job_status = 1000" ||
	not_ok "the three jobs ended in time"
is "the jobs ran in order a, b, c" \
	"$(mxq_sql "SELECT job_id FROM mxq_job WHERE job_id IN ($a, $b, $c) ORDER BY date_start, job_id" |
		tr '\n' ' ')" "$a $b $c "
gap() {
	awk -v s="$(cat "$W/wd/$1" 2>/dev/null)" -v e="$(cat "$W/wd/$2" 2>/dev/null)" \
		'BEGIN { if (s == "" || e == "") print "missing"; else printf "%.2f\n", s - e }'
}
gap_ab=$(gap b.start a.end)
gap_bc=$(gap c.start b.end)
echo "# start of the next job after a job with a sleeping callback: ${gap_ab}s," \
	"after a forking callback: ${gap_bc}s (poll interval 0.1s)"
check "the job after the sleeping callback's job starts within 2 s (${gap_ab}s)" \
	awk -v g="$gap_ab" 'BEGIN { exit !(g != "missing" && g < 2) }'
check "the job after the forking callback's job starts within 2 s (${gap_bc}s)" \
	awk -v g="$gap_bc" 'BEGIN { exit !(g != "missing" && g < 2) }'

check "the sleeping callback started" wait_until 10 test -s "$CB/sleeper.pgid"
check "the forking callback started" wait_until 10 test -s "$CB/forker.pgid"
sp=$(cat "$CB/sleeper.pgid" 2>/dev/null)
fp=$(cat "$CB/forker.pgid" 2>/dev/null)
if [ -n "$sp" ] && wait_until 10 pgroup_gone "$sp"; then
	ok "the sleeping callback and its sleep 1000 are killed after --callback-timeout"
else
	not_ok "the sleeping callback and its sleep 1000 are killed after --callback-timeout"
fi
if [ -n "$fp" ] && wait_until 10 pgroup_gone "$fp"; then
	ok "the forking callback and all its children are killed after --callback-timeout"
else
	not_ok "the forking callback and all its children are killed after --callback-timeout"
fi
left=
for p in $(cat "$CB/forker.children" 2>/dev/null); do
	mxq__alive "$p" && left="$left $p"
done
is "none of the forking callback's $(wc -l <"$CB/forker.children" 2>/dev/null) children is left" \
	"$left" ""
log=$(cat "$(mxqd_dir cbnode1)/mxqd.log")
contains "the log says the sleeping callback was killed" "$log" \
	"job $a: callback $CB/sleeper.sh still running after 3 s: killed"
# at the timeout, or before it by the kernel when its ever more processes
# fill the callback cgroup's 256 MiB
if printf '%s\n' "$log" | grep -qF -e "job $b: callback $CB/forker.sh still running after 3 s: killed" \
	-e "job $b: callback $CB/forker.sh ended by signal 9"; then
	ok "the log says the forking callback was killed"
else
	not_ok "the log says the forking callback was killed"
fi
check "mxqd still serves after the callbacks" mxq__alive "$(mxqd_pid cbnode1)"
d=$(submit -N stall -m 64M true)
if wait_for 10 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $d"; then
	ok "a later job runs"
else
	not_ok "a later job runs"
fi

# ------------------------------ 3. timeout against SIGCHLD, signals

section "3. a callback cannot stretch its timeout; its signal dispositions"
# The helper stops and continues the callback every 0.3 s: each is a state
# change of the supervisor's child, so a timeout that starts again at every
# SIGCHLD would never end.
cat >"$CB/stopper.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/stopper.pgid"
( while :; do sleep 0.3; kill -STOP \$\$; kill -CONT \$\$; done ) </dev/null &
exec sleep 1000
EOF
# SigIgn as the callback's exec'd program sees it
cat >"$CB/sigs.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/sigs.pgid"
exec grep '^SigIgn:' /proc/self/status > "$CB/sigs.out"
EOF
cat >"$CB/umask.sh" <<EOF
#!/bin/sh
echo \$\$ > "$CB/umask.pgid"
umask > "$CB/umask.out"
EOF
chmod 755 "$CB/stopper.sh" "$CB/sigs.sh" "$CB/umask.sh"
e=$(submit -N stop -m 64M -w "$W/wd" --callback "$CB/stopper.sh" true)
submit -N stop -m 64M -w "$W/wd" --callback "$CB/sigs.sh" true >/dev/null
submit -N stop -m 64M -w "$W/wd" -u 027 --callback "$CB/umask.sh" true >/dev/null
check "the stopping callback started" wait_until 10 test -s "$CB/stopper.pgid"
stp=$(cat "$CB/stopper.pgid" 2>/dev/null)
t_start=$(now_cs)
if [ -n "$stp" ] && wait_until 12 pgroup_gone "$stp"; then
	ok "a callback stopped and continued by its helper is killed after --callback-timeout" \
		"($(( ($(now_cs) - t_start) / 100 )) s)"
else
	not_ok "a callback stopped and continued by its helper is killed after --callback-timeout"
fi
contains "the log says the stopping callback was killed" \
	"$(cat "$(mxqd_dir cbnode1)/mxqd.log")" \
	"job $e: callback $CB/stopper.sh still running after 3 s: killed"
check "the signal callback ran" wait_until 10 test -s "$CB/sigs.out"
# (glibc keeps signals 32 and 33 for itself: no program can set them back,
# and a harness that started mxqd with them ignored passes that on)
ign=$(awk '{ print $2 }' "$CB/sigs.out" 2>/dev/null)
is "the callback ignores no signal (SIGPIPE, SIGINT, SIGQUIT, SIGHUP at their defaults)" \
	"$(printf '%016x' $(( 0x${ign:-ffffffffffffffff} & ~0x180000000 )))" 0000000000000000
check "the umask callback ran" wait_until 10 test -s "$CB/umask.out"
is "the callback has the job's umask (mxqsub -u 027)" "$(cat "$CB/umask.out" 2>/dev/null)" 0027

# a callback and an output file whose names carry a forged log line
nl='
'
evil="$CB/evil${nl}FORGED1 mxqd[1] ERROR: forged by a callback name"
printf '#!/bin/sh\nexit 1\n' >"$evil"
chmod 755 "$evil"
j_evil=$(submit -N evil -m 64M -w "$W/wd" --callback "$evil" true)
j_evil2=$(submit -N evil -m 64M -w "$W/wd" -o "$W/none${nl}FORGED2 mxqd[1] ERROR: forged/out" true)
wait_for 15 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($j_evil, $j_evil2) AND job_status >= 400" ||
	not_ok "the jobs with odd names ended"
check "the callback with a newline in its name was logged" \
	wait_until 10 grep -q "job $j_evil: callback $CB/evil" "$(mxqd_dir cbnode1)/mxqd.log"
check "the log has no line forged by a callback's name" \
	sh -c "! grep -q '^FORGED1' '$(mxqd_dir cbnode1)/mxqd.log'"
check "the log has no line forged by an output file's name" \
	sh -c "! grep -q '^FORGED2' '$(mxqd_dir cbnode1)/mxqd.log'"

# ------------------------------------------ 4. across a restart

section "4. callbacks of jobs that outlive their mxqd"
# (one slot) one ends while no mxqd runs, one runs after the restart
j_down=$(submit -N rs -m 64M -w "$W/wd" --callback "$rec" sh -c 'sleep 1; exit 4')
j_after=$(submit -N rs -m 64M -w "$W/wd" --callback "$rec" sleep 1)
wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j_down" ||
	not_ok "the first job runs"
mxqd_stop cbnode1 QUIT 15
is "mxqd cbnode1 exits at SIGQUIT" "$mxqd_rc" 0
sleep 2
check "restart mxqd cbnode1" mxqd_start cbnode1 --slots 2 --memory 4G --callback-timeout 3
wait_for 20 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($j_down, $j_after) AND job_status >= 400" ||
	not_ok "both jobs ended"
check "both callbacks ran" wait_until 10 sh -c "grep -q '^$j_down ' '$CB/record.log' &&
	grep -q '^$j_after ' '$CB/record.log'"
is "the callback of the job that ended while mxqd was down: FAILED" \
	"$(grep "^$j_down " "$CB/record.log" | cut -d' ' -f3)" FAILED
is "the callback of the job that ended after the restart: FINISHED" \
	"$(grep "^$j_after " "$CB/record.log" | cut -d' ' -f3)" FINISHED
is "each ran once" "$(lines_for "$j_down") $(lines_for "$j_after")" "1 1"

# ------------------------------- 5. cancelled before they started

section "5. callbacks of jobs cancelled before they started"
# No mxqd runs: the jobs stay queued until mxqkill cancels them.
mxqd_stop cbnode1 TERM 15
j_q1=$(submit -N q1 -m 64M -w "$W/wd" --callback "$rec" true)
j_q2=$(submit -N q2 -m 64M -w "$W/wd" --callback "$rec" true)
j_q3=$(submit -N q2 -m 64M -w "$W/wd" --callback "$rec" true)
j_nq=$(submit -N q1 -m 64M -w "$W/wd" --whitelist nosuchhost --callback "$rec" true)
j_old=$(submit -N q1 -m 64M -w "$W/wd" --callback "$rec" true)
j_older=$(submit -N q1 -m 64M -w "$W/wd" --callback "$rec" true)
j_p3=$(submit -N q3 -m 64M -w "$W/wd" --whitelist nosuchhost --callback "$rec" true)
j_nocb=$(submit -N q4 -m 64M -w "$W/wd" --whitelist nosuchhost true)
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_nocb" >/dev/null
is "a job cancelled while queued without a callback loses the mark mxqd looks for" \
	"$(mxq_sql "SELECT CONCAT(job_status, ':', server_id) FROM mxq_job WHERE job_id = $j_nocb")" "990:"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_q1" >/dev/null
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$(group_of "$j_q2")" >/dev/null
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_nq" >/dev/null
# a row cancelled before the triggers wrote date_end, and one two days ago
mxq_sql "UPDATE mxq_job SET job_status = 990 WHERE job_id IN ($j_old, $j_older)"
mxq_sql "UPDATE mxq_job SET date_end = 0 WHERE job_id = $j_old"
mxq_sql "UPDATE mxq_job SET date_end = NOW() - INTERVAL 2 DAY WHERE job_id = $j_older"
is "mxqkill: the queued jobs are CANCELLED, the triggers wrote when" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($j_q1, $j_q2, $j_q3, $j_nq)
		AND job_status = 990 AND date_end > NOW() - INTERVAL 1 MINUTE")" 4
check "start mxqd cbnode1" mxqd_start cbnode1 --slots 2 --memory 4G --callback-timeout 3
check "start mxqd cbnode2" mxqd_start cbnode2 --slots 2 --memory 4G --callback-timeout 3
# claimed by cbnode2 and cancelled before it started (the race the
# daemon settles itself): it is that daemon's callback
wait_for 15 "SELECT COUNT(*) > 0 FROM mxq_daemon WHERE hostname = 'cbnode2'" ||
	not_ok "cbnode2 registered"
d2=$(mxq_sql "SELECT MAX(daemon_id) FROM mxq_daemon WHERE hostname = 'cbnode2'")
mxq_sql "UPDATE mxq_job SET job_status = 989, host_hostname = 'cbnode2', server_id = 'main',
	daemon_id = $d2 WHERE job_id = $j_p3"
check "the callbacks of the three cancelled jobs and of the claimed one ran" wait_until 15 sh -c "
	for j in $j_q1 $j_q2 $j_q3 $j_p3; do grep -q \"^\$j \" '$CB/record.log' || exit 1; done"
sleep 2  # time for a second, wrong, run
for j in $j_q1 $j_q2 $j_q3 $j_p3; do
	is "job $j: one callback, CANCELLED, in the job's workdir" \
		"$(grep "^$j " "$CB/record.log" | cut -d' ' -f3,4,5 | tr '\n' '|')" "CANCELLED $W/wd $W/wd|"
done
is "no callback where no host qualifies, nor for rows cancelled long ago or before date_end" \
	"$(lines_for "$j_nq") $(lines_for "$j_old") $(lines_for "$j_older")" "0 0 0"
is "the job names the host whose mxqd ran its callback" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($j_q1, $j_q2, $j_q3)
		AND host_hostname IN ('cbnode1', 'cbnode2') AND job_status = 990 AND host_pid = 0")" 3
is "and the others stay unclaimed" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($j_nq, $j_old, $j_older)
		AND host_hostname = '' AND job_status = 990")" 3
is "group counters agree with the job rows" "$(counter_mismatches)" ""
mxqd_stop cbnode2 TERM 15
is "mxqd cbnode2 exits 0" "$mxqd_rc" 0

# the supervisor terminated (an admin's killall): it takes its callback along
rm -f "$CB/sleeper.pgid"
j_t=$(submit -N term -m 64M -w "$W/wd" --callback "$CB/sleeper.sh" true)
check "the sleeping callback started again" wait_until 10 test -s "$CB/sleeper.pgid"
sp=$(cat "$CB/sleeper.pgid" 2>/dev/null)
sup=$(awk '{ sub(/^.*\) /, ""); print $2 }' "/proc/$sp/stat" 2>/dev/null)
kill -TERM "$sup" 2>/dev/null
if [ -n "$sp" ] && wait_until 2 pgroup_gone "$sp"; then
	ok "SIGTERM to the supervisor ends its callback (not left without a timeout)"
else
	not_ok "SIGTERM to the supervisor ends its callback (not left without a timeout)"
fi
check "the log says so" wait_until 5 grep -qF \
	"job $j_t: callback $CB/sleeper.sh: its supervisor was terminated: killed" \
	"$(mxqd_dir cbnode1)/mxqd.log"

# --------------------------------------- 6. the end's answer lost

section "6. an end that took while its answer was lost"
R=$MXQ_TEST_DIR/relay
check "the relay in front of MariaDB listens" db_cut_start "$R"
check "start mxqd cbnode3 through the relay (model energy source)" \
	mxqd_start cbnode3 --slots 2 --memory 4G --callback-timeout 3 \
	-M "$R/relay.cnf" --energy-sources model --energy-model 10:20 \
	--energy-interval 0.25 --energy-flush-interval 1
# the UPDATE that records a job's end, and no other statement, names this
printf 'stats_max_sumrss' >"$R/cut_statement"
j_cut=$(submit -N cut --whitelist cbnode3 -m 64M -w "$W/wd" --callback "$rec" sh -c 'sleep 1; exit 5')
check "the relay cut the answer to the job's end" wait_until 20 [ -s "$R/cuts.log" ]
is "the end took: FAILED, exit status 5" "$(mxq_sql "SELECT job_status, stats_status >> 8
	FROM mxq_job WHERE job_id = $j_cut")" "750	5"
if wait_until 15 grep -q "^$j_cut " "$CB/record.log"; then
	ok "its callback ran all the same"
else
	not_ok "its callback ran all the same # BUG: mxqd took the end for someone else's"
fi
check "its energy row is complete" wait_for 15 "SELECT COUNT(*) = 1 FROM mxq_power_job
	WHERE job_id = $j_cut AND date_end IS NOT NULL"
L=$(mxqd_dir cbnode3)/mxqd.log
check "the log says whose end it was" grep -qF \
	"job $j_cut: its end was recorded by an attempt whose answer the lost connection took" "$L"
if grep -qF "job $j_cut: was no longer active" "$L"; then
	not_ok "no warning that someone else ended it"
else
	ok "no warning that someone else ended it"
fi

# the same lost answer, but the row changed meanwhile (an admin set it
# FINISHED by hand): not mxqd's end, no callback
printf 'stats_max_sumrss' >"$R/cut_statement"
: >"$R/cuts.log"
j_other=$(submit -N cut --whitelist cbnode3 -m 64M -w "$W/wd" --callback "$rec" sh -c 'sleep 1; exit 6')
check "the relay cut the answer to the second job's end" wait_until 20 [ -s "$R/cuts.log" ]
mxq_sql "UPDATE mxq_job SET job_status = 1000, stats_status = 0 WHERE job_id = $j_other"
check "mxqd says it was no longer its end" wait_until 15 \
	grep -qF "job $j_other: was no longer active in the database" "$L"
sleep 1
is "no callback for the job someone else ended" "$(lines_for "$j_other")" 0
mxqd_stop cbnode3 TERM 15
is "mxqd cbnode3 exits 0" "$mxqd_rc" 0
is "each callback of this section ran once (or not at all)" \
	"$(lines_for "$j_cut") $(lines_for "$j_other")" "1 0"

# ------------------------- 7. mxqd killed between an end and its hooks

# mxqd held (MXQD_TEST_END_HOLD) at STAGE of finishing a job and killed
# there: "recorded" (the end is in the database, no callback yet), the
# restart must run the callback once; "hooked" (it ran, the spool files
# are still there), the restart must not run it again. Both times the
# energy row gets its end and the spool is left empty.
end_hold_round() {
	stage=$1 node=cbhold-$1
	section "7. mxqd killed at '$stage' of finishing a job"
	MXQD_TEST_END_HOLD=$stage=60000
	export MXQD_TEST_END_HOLD
	mxqd_start "$node" --slots 2 --memory 4G --callback-timeout 3 \
		--energy-sources model --energy-model 10:20 --energy-interval 0.25 \
		--energy-flush-interval 1
	_rc=$?
	unset MXQD_TEST_END_HOLD
	[ "$_rc" = 0 ] || { not_ok "$stage: start mxqd $node"; return; }
	j=$(submit -N "hold-$stage" --whitelist "$node" -m 64M -w "$W/wd" --callback "$rec" \
		sh -c 'sleep 1; exit 3')
	check "$stage: the end is on record: FAILED" wait_for 15 \
		"SELECT job_status = 750 FROM mxq_job WHERE job_id = $j"
	if [ "$stage" = hooked ]; then
		check "$stage: the callback ran before mxqd died" wait_until 10 \
			grep -q "^$j " "$CB/record.log"
	else
		sleep 1
		is "$stage: no callback before mxqd died" "$(lines_for "$j")" 0
	fi
	mxqd_signal "$node" KILL
	mxqd_wait "$node" 5
	check "$stage: restart mxqd $node" mxqd_start "$node" --slots 2 --memory 4G \
		--callback-timeout 3 --energy-sources model --energy-model 10:20 \
		--energy-interval 0.25 --energy-flush-interval 1
	sp=$(mxqd_dir "$node")/spool
	check "$stage: the restarted mxqd removes the job's spool files" wait_until 10 \
		sh -c "! ls '$sp' | grep -q '^$j\\.'"
	if [ "$stage" = recorded ]; then
		check "$stage: the restarted mxqd runs the callback" wait_until 10 \
			grep -q "^$j " "$CB/record.log"
		check "$stage: its log says why" grep -qF "job $j: its end was recorded by the mxqd before" \
			"$(mxqd_dir "$node")/mxqd.log"
	fi
	sleep 1
	is "$stage: the callback ran exactly once" "$(lines_for "$j")" 1
	is "$stage: with the recorded status" "$(grep "^$j " "$CB/record.log" | cut -d' ' -f3)" FAILED
	check "$stage: the energy row has its end" wait_for 10 "SELECT COUNT(*) = 1 FROM mxq_power_job
		WHERE job_id = $j AND date_end IS NOT NULL"
	is "$stage: the job is still FAILED" "$(status_of "$j")" 750
	mxqd_stop "$node" TERM 15
	is "$stage: mxqd $node exits 0" "$mxqd_rc" 0
}
end_hold_round recorded
end_hold_round hooked

# ------------------------- 8. cancelled while no mxqd watched the job

section "8. jobs cancelled around an mxqd that died"
node=cbdown
start_cbdown() {
	mxqd_start "$node" --slots 2 --memory 4G --callback-timeout 3 "$@"
}
mxqk() {
	"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$1" >/dev/null
}
# (a) a running job cancelled while its mxqd is down, and which then ends
# by itself with exit status 0: CANCELLED all the same
check "start mxqd $node" start_cbdown
j_run=$(submit -N down-run --whitelist "$node" -m 64M -w "$W/wd" --callback "$rec" sleep 3)
check "(a) the job runs" wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j_run"
mxqd_signal "$node" KILL
mxqd_wait "$node" 5
mxqk "$j_run"
is "(a) mxqkill marks it CANCELLING" "$(status_of "$j_run")" 989
sleep 4   # it ends while no mxqd runs
check "(a) restart mxqd $node" start_cbdown
check "(a) it ends" wait_for 15 "SELECT job_status >= 400 FROM mxq_job WHERE job_id = $j_run"
is "(a) CANCELLED, not FINISHED" "$(status_of "$j_run")" 990
check "(a) its callback ran" wait_until 10 grep -q "^$j_run " "$CB/record.log"
is "(a) with CANCELLED" "$(grep "^$j_run " "$CB/record.log" | cut -d' ' -f3)" CANCELLED
mxqd_stop "$node" TERM 15

# (b) a job claimed by an mxqd that died before its reaper left a trace,
# cancelled meanwhile: it never ran, CANCELLED, not UNKNOWN
MXQD_TEST_REAPER_HOLD=trace=3000
export MXQD_TEST_REAPER_HOLD
check "(b) start mxqd $node, reapers held before any trace" start_cbdown
unset MXQD_TEST_REAPER_HOLD
j_cl=$(submit -N down-claim --whitelist "$node" -m 64M -w "$W/wd" --callback "$rec" \
	sh -c 'echo ran >> "$MXQ_JOBID.ran"')
check "(b) the job is claimed" wait_for 10 "SELECT job_status = 100 FROM mxq_job WHERE job_id = $j_cl"
mxqd_signal "$node" KILL
mxqd_wait "$node" 5
mxqk "$j_cl"
is "(b) mxqkill marks it CANCELLING" "$(status_of "$j_cl")" 989
check "(b) restart mxqd $node" start_cbdown
check "(b) it ends" wait_for 15 "SELECT job_status >= 400 FROM mxq_job WHERE job_id = $j_cl"
is "(b) CANCELLED, not UNKNOWN" "$(status_of "$j_cl")" 990
check "(b) its callback ran" wait_until 10 grep -q "^$j_cl " "$CB/record.log"
is "(b) with CANCELLED" "$(grep "^$j_cl " "$CB/record.log" | cut -d' ' -f3)" CANCELLED
sleep 3   # the held reaper has gone on by now
is "(b) the job never ran" "$(cat "$W/wd/$j_cl.ran" 2>/dev/null)" ""
mxqd_stop "$node" TERM 15

# (c) a job mxqd killed for mxqkill and whose CANCELLED it recorded, then
# died before the callback: the restart runs it with CANCELLED
MXQD_TEST_END_HOLD=recorded=60000
export MXQD_TEST_END_HOLD
check "(c) start mxqd $node, held after recording an end" start_cbdown
unset MXQD_TEST_END_HOLD
j_ck=$(submit -N down-kill --whitelist "$node" -m 64M -w "$W/wd" --callback "$rec" sleep 60)
check "(c) the job runs" wait_for 15 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j_ck"
mxqk "$j_ck"
check "(c) mxqd records CANCELLED" wait_for 20 "SELECT job_status = 990 FROM mxq_job WHERE job_id = $j_ck"
sleep 1
is "(c) no callback before mxqd died" "$(lines_for "$j_ck")" 0
mxqd_signal "$node" KILL
mxqd_wait "$node" 5
check "(c) restart mxqd $node" start_cbdown
check "(c) its callback ran" wait_until 10 grep -q "^$j_ck " "$CB/record.log"
is "(c) with CANCELLED" "$(grep "^$j_ck " "$CB/record.log" | cut -d' ' -f3)" CANCELLED
mxqd_stop "$node" TERM 15
sleep 1
is "(a) (b) (c) one callback each" \
	"$(lines_for "$j_run") $(lines_for "$j_cl") $(lines_for "$j_ck")" "1 1 1"

# (d) as (b), and the restarted mxqd loses the answer to its read of the
# job's row (tests/db_cut.py): the job is ended CANCELLED only once its row
# is read, so the callback still runs (it was lost when the row was ended
# first)
R=$MXQ_TEST_DIR/relay-d
check "(d) the relay in front of MariaDB listens" db_cut_start "$R"
MXQD_TEST_REAPER_HOLD=trace=3000
export MXQD_TEST_REAPER_HOLD
check "(d) start mxqd $node, reapers held before any trace" start_cbdown -M "$R/relay.cnf"
unset MXQD_TEST_REAPER_HOLD
j_rd=$(submit -N down-read --whitelist "$node" -m 64M -w "$W/wd" --callback "$rec" true)
check "(d) the job is claimed" wait_for 10 "SELECT job_status = 100 FROM mxq_job WHERE job_id = $j_rd"
mxqd_signal "$node" KILL
mxqd_wait "$node" 5
mxqk "$j_rd"
printf 'g.group_id = j.group_id WHERE j.job_id = ?' >"$R/cut_statement"
check "(d) restart mxqd $node" start_cbdown -M "$R/relay.cnf"
check "(d) the relay cut the answer to the read of the row" wait_until 10 [ -s "$R/cuts.log" ]
check "(d) it ends CANCELLED" wait_for 15 "SELECT job_status = 990 FROM mxq_job WHERE job_id = $j_rd"
check "(d) its callback ran" wait_until 10 grep -q "^$j_rd " "$CB/record.log"
mxqd_stop "$node" TERM 15
db_cut_stop
sleep 3   # the held reaper has gone on by now
is "(d) one callback" "$(lines_for "$j_rd")" 1

# Callbacks ran once per outcome, also counted at the very end.
is "each callback ran exactly once per job" \
	"$(for j in $j_fin $j_fail $j_kill $j_canc; do lines_for "$j"; done | tr '\n' ' ')" "1 1 1 1 "
is "callbacks did not change job outcomes" \
	"$(for j in $j_fin $j_fail $j_kill $j_canc $a $b; do status_of "$j"; done | tr '\n' ' ')" \
	"1000 750 400 990 1000 1000 "
mxqd_stop cbnode1 TERM 15
is "mxqd cbnode1 exits 0" "$mxqd_rc" 0

tap_done
