#!/bin/sh
# tests/test_power.sh - the power manager end to end: a leader mxqd with
# the exec transport (tests/lib/power-exec.sh starts and stops the nodes'
# mxqds), real mxqsub jobs, a private MariaDB.
#
#   a. idle nodes are drained and powered off (events, actor, epoch, reason)
#   b. work only one OFF node qualifies for wakes exactly that node
#      (prerequisites/tags, --gpu, --whitelist), the others stay OFF
#   c. no wake while an ON node has room for the demand
#   d. mxqadmin power off/on: drained although busy, never woken
#      automatically, woken by the admin
#   e. a failing power-on: FAILED with the reason, demand planned elsewhere,
#      left alone until mxqadmin power clear
#   f. boot deadline: "on" works but the node never registers -> FAILED
#   g. dry_run = yes: decisions logged, nothing changed
#   h. mxqd --check-config names every error with file:line
#   i. a DRAINING node with a running job: the leader cancels the drain
#   j. a DRAINING node that acknowledged (idle) while a job only it can run
#      is queued: the drain is taken back instead of a power cycle
#   k. idle_time = auto: the idle gap between two real jobs on one node is
#      counted in the leader's saved state, the first job after a wake not
#   l. --power-poll: a leader with 20 s ticks wakes a node for a new job
#      within seconds, and decides nothing extra while nothing new waits
#   m. a flood of submissions (a job every 0.2 s that no host can run)
#      makes the leader decide about once a second, not at every submit,
#      and does not rewrite every host's explanation at each decision
#   n. mxqadmin power on while the leader, held on the host's row, carries
#      out the older power off: the newer request is not marked done (and
#      its admin_off undone) by the older decision
#
# Every wait is a bounded poll on a condition; "stays" checks sample the
# state for a few leader ticks.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/power.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"
CONF=$MXQ_TEST_DIR/power.conf
power_conf "$CONF" idle_time=2s boot_deadline=5s

# A job that records where and when it ran.
job() {
	# shellcheck disable=SC2016 # expanded by the job's shell
	submit -m 64M -w "$W" "$@" sh -c \
		'echo "$MXQ_HOSTNAME $(date +%s.%N)" >"ran.$MXQ_JOBID"'
}
# A job that runs until the file $W/release.NAME exists (at most 60 s).
held_job() {
	_name=$1
	shift
	# shellcheck disable=SC2016
	submit -m 64M -w "$W" "$@" sh -c \
		'echo "$MXQ_HOSTNAME" >"ran.$MXQ_JOBID"; i=0
		while [ ! -e "release.$0" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' "$_name"
}
ran_on() {
	cut -d' ' -f1 "$W/ran.$1" 2>/dev/null
}
# SECS HOST STATE: true when HOST's state stays STATE for SECS seconds
# (sampled every 0.1 s); prints what it saw otherwise.
stays() {
	_end=$(( $(now_cs) + $1 * 100 ))
	while [ "$(now_cs)" -lt "$_end" ]; do
		_st=$(power_state "$2")
		if [ "$_st" != "$3" ]; then
			echo "$2 left $3: now $_st" | diag
			return 1
		fi
		sleep 0.1
	done
}
# JOB stays queued for SECS seconds
stays_queued() {
	_end=$(( $(now_cs) + $2 * 100 ))
	while [ "$(now_cs)" -lt "$_end" ]; do
		[ "$(status_of "$1")" = 0 ] || { echo "job $1: status $(status_of "$1")" | diag; return 1; }
		sleep 0.1
	done
}

# ------------------------------------------------------------------ nodes

section "nodes"
check "node n1 (plain) boots" power_node_add n1
check "node g1 (--gpus 1) boots" power_node_add g1 --gpus 1
check "node t1 (--tags special) boots" power_node_add t1 --tags special
check "node w1 (plain, whitelist target) boots" power_node_add w1
check "node b1 (4 slots) boots" power_node_add b1 --slots 4 --memory 4G
check "node f1 (--tags etag, rank 10) boots" power_node_add f1 --tags etag
check "node a1 (--tags etag, rank 50) boots" power_node_add a1 --tags etag
mxq_sql "UPDATE mxq_power SET efficiency_rank = 10 WHERE hostname = 'f1';
	UPDATE mxq_power SET efficiency_rank = 50 WHERE hostname = 'a1'"
ALL="n1 g1 t1 w1 b1 f1 a1"
mark0=$(power_last_event_id)

# ------------------------------------------- a. idle nodes are powered off

section "a. idle nodes are drained and powered off"
check "leader1 starts" power_leader_start leader1 "$CONF"
check "leader1 holds the lease" wait_for 10 \
	"(SELECT holder FROM mxq_power_leader) LIKE 'leader1/%'"
E1=$(power_epoch)
for h in $ALL; do
	check "$h: idle, powered off" power_wait_state 30 "$h" OFF
done
is "n1: events ON>DRAINING>POWERING_OFF>OFF by the leader, epoch $E1" \
	"$(power_events n1 "$mark0")" \
	"ON>DRAINING leader $E1
DRAINING>POWERING_OFF leader $E1
POWERING_OFF>OFF leader $E1"
contains "n1: the drain event says why (idle time)" \
	"$(mxq_sql "SELECT reason FROM mxq_power_event WHERE hostname = 'n1'
		AND to_state = 'DRAINING' AND event_id > $mark0")" "idle time 2s"
is "n1: mxq_power.reason is readable" "$(mxq_sql "SELECT reason FROM mxq_power
	WHERE hostname = 'n1'")" "power-off confirmed"
is "n1: writer_epoch is the leader's" \
	"$(mxq_sql "SELECT writer_epoch FROM mxq_power WHERE hostname = 'n1'")" "$E1"
running=
for h in $ALL; do
	power_node_running "$h" && running="$running $h"
done
is "no node's mxqd runs any more" "$running" ""
is "every node: 3 leader events of epoch $E1" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event WHERE event_id > $mark0
		AND actor = 'leader' AND epoch = $E1")" 21

# ---------------------------------- b. wake exactly the qualified OFF node

section "b. work only one OFF node qualifies for"
mark=$(power_last_event_id)
jp=$(job -N needs-special --prerequisites special)
jg=$(job -N needs-gpu --gpu)
jw=$(job -N only-w1 --whitelist w1)
check "prerequisites job finished" job_wait 30 "$jp" 1000
check "gpu job finished" job_wait 30 "$jg" 1000
check "whitelist job finished" job_wait 30 "$jw" 1000
is "prerequisites 'special': ran on t1 (--tags special)" "$(ran_on "$jp")" t1
is "--gpu: ran on g1 (--gpus 1)" "$(ran_on "$jg")" g1
is "--whitelist w1: ran on w1" "$(ran_on "$jw")" w1
is "woken: exactly g1, t1, w1" "$(power_wakes "$mark")" "g1 t1 w1"
is "t1: OFF>POWERING_ON (leader), POWERING_ON>ON (node registered)" \
	"$(power_events t1 "$mark" | head -n 2)" \
	"OFF>POWERING_ON leader $E1
POWERING_ON>ON node 0"
contains "t1: the wake names the group" \
	"$(mxq_sql "SELECT reason FROM mxq_power_event WHERE hostname = 't1'
		AND to_state = 'POWERING_ON' AND event_id > $mark")" \
	"group $(group_of "$jp")"
for h in n1 b1 f1 a1; do
	is "$h: stayed OFF (no event)" "$(power_events "$h" "$mark")" ""
done
for h in g1 t1 w1; do
	check "$h: powered off again after its job" power_wait_state 30 "$h" OFF
done

# ------------------------------------ c. no wake when an ON node has room

section "c. no wake while an ON node has room"
ja=$(held_job A --whitelist b1)
check "b1 woken for its held job" power_wait_state 20 b1 ON
check "held job A runs on b1" job_wait 20 "$ja" 200
mark=$(power_last_event_id)
# b1 is paused (SIGSTOP) while B is submitted, so that the leader sees B
# pending for two ticks with b1 ON and room on it; b1's heartbeat stays
# fresh enough (the leader's timeout is 3 heartbeats + 5 s)
b1_pid=$(power_node_pid b1)
kill -STOP "$b1_pid"
t_sub=$(mxq_sql "SELECT UNIX_TIMESTAMP(NOW(3))")
jb=$(job -N anywhere)
check "the leader ticks twice while B is queued" wait_for 10 \
	"(SELECT UNIX_TIMESTAMP(last_tick_at) FROM mxq_power_leader) > $t_sub + 2 * $POWER_TICK"
is "B still queued" "$(status_of "$jb")" 0
kill -CONT "$b1_pid"
check "job B finished" job_wait 20 "$jb" 1000
is "job B ran on b1 (3 free slots)" "$(ran_on "$jb")" b1
is "no node woken for B" "$(power_wakes "$mark")" ""
contains "b1: explanation: busy" \
	"$(mxq_sql "SELECT explanation FROM mxq_power WHERE hostname = 'b1'")" "busy"

# ---------------------------------------------------------- d. admin off

section "d. mxqadmin power off / on"
mark=$(power_last_event_id)
admin_check off b1 x
check "b1 DRAINING although job A runs" power_wait_state 10 b1 DRAINING
contains "b1: reason says admin power off" \
	"$(mxq_sql "SELECT reason FROM mxq_power WHERE hostname = 'b1'")" "admin power off"
check "b1 stays DRAINING while A runs (no cancel for an admin drain)" stays 2 b1 DRAINING
: >"$W/release.A"
check "job A finished" job_wait 20 "$ja" 1000
check "b1 powered off" power_wait_state 20 b1 OFF
is "b1: DRAINING>POWERING_OFF>OFF by the leader" \
	"$(power_events b1 "$mark" | grep leader)" \
	"ON>DRAINING leader $E1
DRAINING>POWERING_OFF leader $E1
POWERING_OFF>OFF leader $E1"
is "b1: admin_off = 1" "$(mxq_sql "SELECT admin_off FROM mxq_power WHERE hostname = 'b1'")" 1
mark=$(power_last_event_id)
jc=$(job -N only-b1 --whitelist b1)
check "job for b1 only stays queued" stays_queued "$jc" 3
is "b1 not woken automatically" "$(power_events b1 "$mark")" ""
contains "b1: explanation says admin off" \
	"$(mxq_sql "SELECT explanation FROM mxq_power WHERE hostname = 'b1'")" "admin off"
out=$("$mxqadmin_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain --group "$(group_of "$jc")" 2>&1)
contains "mxqadmin power explain --group: says admin off" "$out" "admin off"
admin_check on b1 y
check "job for b1 finished after the admin's wake" job_wait 30 "$jc" 1000
is "it ran on b1" "$(ran_on "$jc")" b1
is "b1: admin_off = 0" "$(mxq_sql "SELECT admin_off FROM mxq_power WHERE hostname = 'b1'")" 0

# ---------------------------------------------------- e. failing power-on

section "e. a failing power-on"
power_node_flag f1 fail_on on
mark=$(power_last_event_id)
jd=$(job -N etag --prerequisites etag)
check "f1 (most efficient) FAILED" power_wait_state 20 f1 FAILED
contains "f1: failure_reason names the exit status" \
	"$(mxq_sql "SELECT failure_reason FROM mxq_power WHERE hostname = 'f1'")" \
	"f1 on' exited with status 1"
check "etag job finished (re-planned onto a1)" job_wait 30 "$jd" 1000
is "etag job ran on a1" "$(ran_on "$jd")" a1
is "f1: OFF>POWERING_ON>FAILED" "$(power_events f1 "$mark")" \
	"OFF>POWERING_ON leader $E1
POWERING_ON>FAILED leader $E1"
mark=$(power_last_event_id)
je=$(job -N only-f1 --whitelist f1)
check "FAILED f1 left alone while a job waits for it" stays 3 f1 FAILED
is "f1: no event while FAILED" "$(power_events f1 "$mark")" ""
contains "f1: explanation points to mxqadmin power clear" \
	"$(mxq_sql "SELECT explanation FROM mxq_power WHERE hostname = 'f1'")" \
	"mxqadmin power clear f1"

# ------------------------------------------------------ f. boot deadline

section "f. boot deadline"
power_node_flag f1 fail_on off
power_node_flag f1 fake_on on
admin_check clear f1 retry
check "f1 woken again after the clear" wait_for 10 \
	"(SELECT COUNT(*) FROM mxq_power_event WHERE hostname = 'f1'
	AND to_state = 'POWERING_ON' AND event_id > $mark) = 1"
t0=$(now_cs)
check "f1 FAILED after the 5 s boot deadline" power_wait_state 20 f1 FAILED
waited=$(( $(now_cs) - t0 ))
check "not before the deadline (${waited}0 ms)" [ "$waited" -ge 350 ]
contains "f1: reason: did not come back within 5s" \
	"$(mxq_sql "SELECT failure_reason FROM mxq_power WHERE hostname = 'f1'")" \
	"did not come back within 5s"
power_node_flag f1 fake_on off
admin_check clear f1 fixed
check "job for f1 finished after the clear" job_wait 30 "$je" 1000
is "it ran on f1" "$(ran_on "$je")" f1
for h in $ALL; do
	power_wait_state 30 "$h" OFF >/dev/null
done

# ------------------------------------------------------------ g. dry run

section "g. dry run"
check "leader1 stops" mxqd_stop leader1
check "n1 powered on by hand" power_node_boot n1
jf=$(job -N only-w1-dry --whitelist w1)
DRY=$MXQ_TEST_DIR/power-dry.conf
power_conf "$DRY" idle_time=2s boot_deadline=5s dry_run=yes
mark=$(power_last_event_id)
check "dry-run leader starts" power_leader_start dry1 "$DRY"
check "dry run: would drain n1 (logged)" wait_until 15 \
	grep -q "dry run: would DRAIN n1" "$(power_leader_log dry1)"
check "dry run: would wake w1 (logged)" wait_until 15 \
	grep -q "dry run: would WAKE w1" "$(power_leader_log dry1)"
ED=$(power_epoch)
is "leader row says dry_run" "$(mxq_sql "SELECT dry_run FROM mxq_power_leader")" 1
is "dry run: no events" "$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event WHERE event_id > $mark")" 0
is "dry run: n1 still ON, w1 still OFF" "$(power_state n1) $(power_state w1)" "ON OFF"
is "dry run: no row written with its epoch" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_power WHERE writer_epoch = $ED")" 0
is "dry run: job still queued" "$(status_of "$jf")" 0
check "dry-run leader stops" mxqd_stop dry1
check "leader2 starts (dry_run = no)" power_leader_start leader2 "$CONF"
check "the queued job runs on w1 now" job_wait 30 "$jf" 1000
check "n1 powered off now" power_wait_state 30 n1 OFF

# --------------------------------------------------------- h. check-config

section "h. --check-config"
BAD=$MXQ_TEST_DIR/bad.conf
printf '%s\n' "# two errors" "idle_tim = 5m" "warm_pool = 1" "max_booting = two" >"$BAD"
out=$("$mxqd_bin" --check-config --power-config "$BAD" 2>&1)
rc=$?
check "broken power.conf: exit status non-zero" [ "$rc" -ne 0 ]
contains "names the first error's file:line" "$out" "$BAD:2:"
contains "names the second error's file:line" "$out" "$BAD:4:"
contains "suggests the key" "$out" "idle_time"
out=$("$mxqd_bin" --check-config --power-config "$CONF" 2>&1)
is "good power.conf: exit status 0" "$?" 0

# --------------------------------------------- i. drain cancelled by work

section "i. a DRAINING node that got a job"
E2=$(power_epoch)
jg2=$(held_job G --whitelist n1)
check "n1 woken for its held job" power_wait_state 20 n1 ON
check "held job G runs on n1" job_wait 20 "$jg2" 200
mark=$(power_last_event_id)
mxq_sql "UPDATE mxq_power SET state = 'DRAINING', desired_state = 'OFF', state_since = NOW(3),
	node_ack = '', node_ack_at = NULL WHERE hostname = 'n1'"
check "the leader cancels the drain: n1 ON" power_wait_state 10 n1 ON
is "n1: DRAINING>ON by the leader" "$(power_events n1 "$mark")" "DRAINING>ON leader $E2"
contains "n1: reason says the drain was cancelled" \
	"$(mxq_sql "SELECT reason FROM mxq_power WHERE hostname = 'n1'")" "drain cancelled"
is "n1: desired_state ON again" \
	"$(mxq_sql "SELECT desired_state FROM mxq_power WHERE hostname = 'n1'")" ON
: >"$W/release.G"
check "job G finished" job_wait 20 "$jg2" 1000

# ------------------------------------- j. acknowledged drain, work queued

section "j. an acknowledged drain while work for the node is queued"
# The leader is stopped while n1 is put into the state a drain leaves it
# in: DRAINING, acknowledged IDLE by its mxqd; then a job that only n1 can
# run is queued and a leader starts. Powering n1 off now means a full
# power cycle (and with the default min_off_time of 5m, a 5 minute wait
# for the job) where taking the drain back costs nothing.
check "n1 powered off after G" power_wait_state 30 n1 OFF
check "leader2 stops" mxqd_stop leader2
check "n1 powered on by hand" power_node_boot n1
mxq_sql "UPDATE mxq_power SET state = 'DRAINING', desired_state = 'OFF', state_since = NOW(3),
	node_ack = '', node_ack_at = NULL, reason = 'drain written by the test'
	WHERE hostname = 'n1'"
check "n1 acknowledges the drain (IDLE)" wait_for 10 \
	"(SELECT node_ack FROM mxq_power WHERE hostname = 'n1') = 'IDLE'"
jj=$(job -N only-n1-acked --whitelist n1)
mark=$(power_last_event_id)
check "leader3 starts" power_leader_start leader3 "$CONF"
check "n1 leaves DRAINING" power_wait_state 10 n1 ON POWERING_OFF OFF POWERING_ON
first=$(power_events n1 "$mark" | head -n 1)
case $first in
"DRAINING>ON "*)
	ok "the acknowledged drain of n1 is taken back for the queued job" ;;
*)
	not_ok "the acknowledged drain of n1 is taken back for the queued job # BUG: policy" \
		"powers an acknowledged DRAINING node off although queued work only it can run" \
		"is waiting (step 2 POWER_OFF comes before step 3 takes DRAINING nodes back)"
	power_events n1 "$mark" | diag ;;
esac
check "the job finished" job_wait 30 "$jj" 1000
is "it ran on n1" "$(ran_on "$jj")" n1

# ------------------------------------------- k. idle gaps learned (auto)

section "k. idle_time = auto: the gaps between jobs are counted"
# a break-even time of 10^6 s: nothing is suspended while this runs
AUTO=$MXQ_TEST_DIR/auto.conf
power_conf "$AUTO" idle_time=auto idle_watts=1 boot_energy=1000000 shutdown_energy=0
check "leader3 stops" mxqd_stop leader3
check "leader4 starts" power_leader_start leader4 "$AUTO"
check "leader4 holds the lease" wait_for 10 \
	"(SELECT holder FROM mxq_power_leader) LIKE 'leader4/%'"
# the saved gaps of the hosts without class: "gaps * SEEN ..."
gaps_seen() {
	mxq_sql "SELECT policy_state FROM mxq_power_leader" |
		sed -n 's/.* gaps \* \([0-9]*\) .*/\1/p'
}
# held until the leader recorded n1 ON: a gap counts from a job's end in
# the host's ON period (before, the host's first job waited for it)
jx=$(held_job J --whitelist n1)
check "first job runs" job_wait 60 "$jx" 200
is "it runs on n1" "$(ran_on "$jx")" n1
check "n1 recorded ON while it runs" power_wait_state 10 n1 ON
mark=$(power_last_event_id)
: >"$W/release.J"
check "first job finished" job_wait 30 "$jx" 1000
sleep 3
# held until counted: the leader sees it running at a tick
jy=$(held_job K --whitelist n1)
check "second job runs" job_wait 30 "$jy" 200
is "it runs on n1 too" "$(ran_on "$jy")" n1
is "no power transition of n1 between the two jobs" "$(power_events n1 "$mark")" ""
check "the leader counted one gap, n1's between the two jobs" wait_for 10 \
	"(SELECT policy_state FROM mxq_power_leader) LIKE '% gaps * 1 %'"
is "one gap only (a job on a host woken for it waited for the host)" "$(gaps_seen)" 1
# "gaps * 1 IDLE W0 W1 ...": a gap of a few seconds, in (0, B/32]
is "the gap is counted as a few seconds long" "$(mxq_sql "SELECT policy_state
	FROM mxq_power_leader" | sed -n 's/.* gaps \* 1 [0-9]* \([^ ]*\) \([^ ]*\) .*/\1 \2/p')" "0 1"
: >"$W/release.K"
check "second job finished" job_wait 30 "$jy" 1000
check "leader4 stops" mxqd_stop leader4

# ---------------------------- l. a new job is decided on between ticks

section "l. --power-poll: a new job that waits is decided on between ticks"
check "leader5 starts" power_leader_start leader5 "$CONF"
check "n1 powered off by leader5" power_wait_state 30 n1 OFF
check "leader5 stops" mxqd_stop leader5
# ticks 20 s apart: a wake within 5 s of the submit came from a poll
t_start=$(mxq_sql "SELECT UNIX_TIMESTAMP(NOW(3))")
check "leader6 starts (--power-tick 20, --power-poll 0.5)" \
	power_leader_start leader6 "$CONF" --power-tick 20 --power-lease 45 --power-poll 0.5
check "leader6 holds the lease and decided once" wait_for 10 \
	"(SELECT holder LIKE 'leader6/%' AND UNIX_TIMESTAMP(last_tick_at) > $t_start
		FROM mxq_power_leader)"
tick0=$(mxq_sql "SELECT UNIX_TIMESTAMP(last_tick_at) FROM mxq_power_leader")
sleep 2
is "nothing new waits: no decision between ticks" \
	"$(mxq_sql "SELECT UNIX_TIMESTAMP(last_tick_at) FROM mxq_power_leader")" "$tick0"
mark=$(power_last_event_id)
jl=$(job -N only-n1-polled --whitelist n1)
check "n1 woken within 5 s of the submit, not at the next tick" \
	power_wait_state 5 n1 POWERING_ON ON
is "woken: n1 only" "$(power_wakes "$mark")" n1
check "the job finished" job_wait 30 "$jl" 1000
is "it ran on n1" "$(ran_on "$jl")" n1
check "leader6 stops" mxqd_stop leader6

# ------------------------------------------------------------------- end

section "end"
is "no job lost: all FINISHED" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_status <> 1000")" 0
is "group counters agree with the jobs" "$(counter_mismatches)" ""

# -------------------------------------------- m. a flood of submissions

section "m. a flood of submissions: decisions bounded by --power-poll"
# after the checks above: these jobs never run and are cancelled at the end;
# idle_time = 1h: no drain writes in the count, one fenced write (the
# policy state) per decision, and the idle ON hosts' texts ("idle since
# ..., suspended at ...") the same from one decision to the next
FLOOD=$MXQ_TEST_DIR/flood.conf
power_conf "$FLOOD" idle_time=1h boot_deadline=5s
check "leader7 starts (--power-tick 30, --power-poll 1)" \
	power_leader_start leader7 "$FLOOD" --power-tick 30 --power-lease 65 --power-poll 1
check "leader7 holds the lease" wait_for 10 \
	"(SELECT holder LIKE 'leader7/%' FROM mxq_power_leader)"
sleep 1
check "an ON host is idle under leader7 (the texts below are of it)" wait_for 10 \
	"(SELECT COUNT(*) FROM mxq_power WHERE state = 'ON'
		AND explanation LIKE 'not idle long enough: idle since %') > 0"
idle_texts() {
	mxq_sql "SELECT hostname, explanation FROM mxq_power WHERE state = 'ON' ORDER BY hostname"
}
texts0=$(idle_texts)
# every decision stamps last_tick_at (ms); sampled after each submit
last_tick() {
	mxq_sql "SELECT UNIX_TIMESTAMP(last_tick_at) FROM mxq_power_leader"
}
t0=$(last_tick)
w0=$(mxq_sql "SELECT fence_writes FROM mxq_power_leader")
mark=$(power_last_event_id)
end_cs=$(( $(now_cs) + 600 ))
jf=
: >"$W/ticks"
while [ "$(now_cs)" -lt "$end_cs" ]; do
	jf=$(submit -m 64M -w "$W" -N flood --prerequisites no_host_has_this true) || break
	sleep 0.2
	last_tick >>"$W/ticks"
done
decisions=$(grep -vxF "$t0" "$W/ticks" | sort -u | wc -l)
writes=$(( $(mxq_sql "SELECT fence_writes FROM mxq_power_leader") - w0 ))
echo "flood: $(wc -l <"$W/ticks") submits, $decisions decisions seen, $writes fenced writes in 6 s" | diag
check "the flood asked for decisions between ticks (at least 3 in 6 s)" \
	test "$decisions" -ge 3
check "no more than one a second (at most 8 in 6 s)" test "$decisions" -le 8
# the OFF hosts' explanations name no queue counts and the idle ones name
# points in time: a host's text changes once (when the queue fills), not at
# each decision
hosts=$(mxq_sql "SELECT COUNT(*) FROM mxq_power")
check "a fenced write per decision and at most one per host ($writes)" \
	test "$writes" -le $(( decisions + hosts ))
is "the ON hosts' explanations did not change" "$(idle_texts)" "$texts0"
is "no power event: no host woken for work none can run" \
	"$(power_events n1 "$mark")$(power_wakes "$mark")" ""
check "flood jobs cancelled" "$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" \
	-g "$(group_of "$jf")"
check "leader7 stops" mxqd_stop leader7

# ------------------------------ n. an admin request changed under the leader

section "n. mxqadmin power on while the leader carries out an older power off"
# leader8 decides every 3 s; right after a decision the admin switches an
# ON host off, and the host's row is held (a slow statement, a stalled
# leader) until the leader carried out its drain; the admin switches the
# host on meanwhile: the leader must not mark the older request done over
# the newer one and undo its admin_off
check "leader8 starts (--power-tick 3)" \
	power_leader_start leader8 "$FLOOD" --power-tick 3 --power-lease 12 --power-poll 0
check "leader8 holds the lease" wait_for 10 \
	"(SELECT holder LIKE 'leader8/%' AND last_tick_at IS NOT NULL FROM mxq_power_leader)"
h=$(mxq_sql "SELECT hostname FROM mxq_power WHERE state = 'ON' AND admin_off = 0
	ORDER BY hostname LIMIT 1")
t=$(mxq_sql "SELECT last_tick_at FROM mxq_power_leader")
check "leader8 decides" wait_for 10 "(SELECT last_tick_at <> '$t' FROM mxq_power_leader)"
admin_check off "$h" "first"
mxq_sql "BEGIN; SELECT 1 FROM mxq_power WHERE hostname = '$h' FOR UPDATE; SELECT SLEEP(5);
	COMMIT" >/dev/null &
lk=$!
check "leader8's drain of $h waits for the row" wait_for 8 \
	"(SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT') >= 1"
power_admin on "$h" "changed my mind" >/dev/null 2>&1 &
ad=$!
wait "$lk"
wait "$ad"
check "the admin's power on is in the events" wait_for 5 \
	"(SELECT COUNT(*) FROM mxq_power_event WHERE hostname = '$h' AND actor = 'admin'
	AND reason LIKE 'on by %changed my mind') = 1"
sleep 4
is "$h: the admin's later power on stands (admin_off = 0)" \
	"$(mxq_sql "SELECT admin_off FROM mxq_power WHERE hostname = '$h'")" 0
check "leader8 stops" mxqd_stop leader8
tap_done
