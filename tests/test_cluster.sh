#!/bin/sh
# tests/test_cluster.sh - a simulated power-managed cluster, end to end
# (tests/lib/cluster.sh): two power manager candidates and four nodes of
# different kinds and classes, driven only by submitted work.
#
#   cpu1  ipmi (ipmi_sim BMC), rank 1    generic
#   cpu2  exec, rank 2                   generic
#   gpu1  exec, rank 3, --gpus 1         the only GPU node
#   ssd1  wol + self power-off, rank 4   the only node tagged ssd
#   old1  exec on, ssh off, rank 9      an "old-style" node (mxqd with
#                                        --no-power-node), runs only
#                                        groups tagged old
#   svc1, svc2  power manager candidates (--no-power-node)
#
# A kind whose transport has not landed falls back to exec (the plan says
# which). Scenarios, in order:
#   1. idle nodes are powered off (each by its own transport)
#   2. GPU and ssd work wakes exactly the node that can run it
#   3. kill -9 of the leader while nodes boot: the standby takes over, the
#      burst finishes, every node settles
#   4. the database restarted mid-run: nothing actuated while it was
#      down, daemons reconnect, the jobs finish
#   5. a BMC that stops answering: FAILED with the reason, the work is
#      planned onto another node
#   6. a node that never boots: FAILED at its boot deadline; after
#      `mxqadmin power clear` it is woken again and runs the job
#   7. the old-style node: woken for work only it can run, drained and
#      powered off over ssh
# and at the end: every job finished exactly once.
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
CLUSTER_BOOT_DELAY=1.5
CLUSTER_TICK=0.5
# long enough for a transport call to a dead BMC within one tick
CLUSTER_LEASE=8
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/cluster.sh"
# count failures: the test exits non-zero when any check failed
failures=0
not_ok() {
	tap_n=$((tap_n + 1))
	failures=$((failures + 1))
	echo "not ok $tap_n - $*"
}

NODES="cpu1 cpu2 gpu1 ssd1 old1"
NODES_SQL="'cpu1', 'cpu2', 'gpu1', 'ssd1', 'old1'"
work=$MXQ_TEST_DIR/work
mkdir -p "$work"
: >"$work/ran"
BOOT_DEADLINE=15

# job SECS [MXQSUB OPTIONS...]: a job that records its id once when it ran
job() {
	local _s
	_s=$1
	shift
	submit -w "$work" -t 1m -m 256M "$@" sh -c "echo \$MXQ_JOBID >>ran; sleep $_s"
}

jobs_done() { # JOB...: 1 when all are FINISHED
	local _in
	_in=$(echo "$*" | tr ' ' ',')
	mxq_sql "SELECT COUNT(*) = $# FROM mxq_job WHERE job_id IN ($_in) AND job_status = 1000"
}

wait_jobs() { # SECS JOB...
	local _secs _in
	_secs=$1
	shift
	_in=$(echo "$*" | tr ' ' ',')
	wait_for "$_secs" "SELECT COUNT(*) = $# FROM mxq_job WHERE job_id IN ($_in)
		AND job_status = 1000"
}

all_off() {
	[ "$(mxq_sql "SELECT COUNT(*) FROM mxq_power WHERE state = 'OFF'
		AND hostname IN ($NODES_SQL)")" = 5 ]
}

wakes_after() { # EVENT_ID: hosts woken since, sorted
	mxq_sql "SELECT DISTINCT hostname FROM mxq_power_event WHERE event_id > $1
		AND to_state = 'POWERING_ON' ORDER BY hostname" | tr '\n' ' ' | sed 's/ $//'
}

last_event() {
	mxq_sql "SELECT COALESCE(MAX(event_id), 0) FROM mxq_power_event"
}

holder() {
	mxq_sql "SELECT holder FROM mxq_power_leader WHERE id = 1"
}

epoch() {
	mxq_sql "SELECT epoch FROM mxq_power_leader WHERE id = 1"
}

failure_reason() {
	mxq_sql "SELECT failure_reason FROM mxq_power WHERE hostname = '$1'"
}

show_state() {
	cluster_view | diag
}

# ------------------------------------------------------------------ setup
section "setup"
cluster_init || { not_ok "set up the simulated cluster"; tap_done; exit 1; }
conf=$CLUSTER_DIR/power.conf
cluster_conf "$conf" idle_time=3s boot_deadline=${BOOT_DEADLINE}s
cluster_node_add cpu1 ipmi 1 std 60:20 --slots 2 --memory 2G &&
cluster_node_add cpu2 exec 2 std 90:30 --slots 2 --memory 2G &&
cluster_node_add gpu1 exec 3 gpu 150:40 --slots 2 --memory 4G --gpus 1 --tags gpu &&
cluster_node_add ssd1 wol 4 ssd 70:20 --slots 2 --memory 2G --tags ssd &&
cluster_node_add old1 ssh 9 old 120:30 --slots 1 --memory 1G --tags old --prerequisites old ||
	{ not_ok "declare the nodes"; tap_done; exit 1; }
for n in $NODES; do
	echo "node $n: $(cluster_node_kind "$n")"
done | diag
cluster_has ipmi || echo "# ipmi transport not in this mxqd: cpu1 uses exec"
cluster_has wol || echo "# wol transport not in this mxqd: ssd1 uses exec"
cluster_has ssh || echo "# ssh transport not in this mxqd: old1 uses exec"

check "all five nodes booted, their mxqd registered" cluster_boot_all 40
cluster_leader_start svc1 "$conf" || { not_ok "start power manager svc1"; tap_done; exit 1; }
check "svc1 holds the lease" wait_for 15 "(SELECT holder FROM mxq_power_leader WHERE id = 1) LIKE 'svc1/%'"
cluster_leader_start svc2 "$conf" || { not_ok "start power manager svc2"; tap_done; exit 1; }
contains "svc2 stands by" "$(holder)" "svc1/"

# ------------------------------------------------------- 1. idle -> off
section "1. idle nodes are powered off"
if wait_until 40 all_off; then
	ok "all nodes powered off when idle"
else
	not_ok "all nodes powered off when idle"
	show_state
fi
stray=
for n in $NODES; do
	cluster_running "$n" && stray="$stray $n"
done
is "no node's mxqd runs any more" "$stray" ""
if [ "$(cluster_node_kind cpu1)" = ipmi ]; then
	contains "cpu1 went down by a soft off at its BMC" "$(grep ' cpu1 bmc ' "$CLUSTER_DIR/calls.log")" \
		"set shutdown 1"
fi
if [ "$(cluster_node_kind ssd1)" = wol ]; then
	contains "ssd1 powered itself off (transport self)" \
		"$(grep ' ssd1 node ' "$CLUSTER_DIR/calls.log")" "selfoff requested"
fi
if [ "$(cluster_node_kind old1)" = ssh ]; then
	contains "old1 (old mxqd) was drained over ssh" \
		"$(grep ' old1 ssh ' "$CLUSTER_DIR/calls.log")" "old1 ssh drain ok"
	contains "old1 was powered off over ssh" \
		"$(grep ' old1 ssh ' "$CLUSTER_DIR/calls.log")" "old1 ssh poweroff ok"
fi

# ----------------------------------------- 2. work only one node can run
section "2. GPU and ssd work wake exactly their nodes"
ev=$(last_event)
jg=$(job 1 -N gpu-work --gpu)
js=$(job 1 -N ssd-work --prerequisites ssd)
if wait_jobs 40 "$jg" "$js"; then
	ok "the GPU job and the ssd job finished"
else
	not_ok "the GPU job and the ssd job finished"
	show_state
fi
is "the GPU job ran on gpu1" "$(mxq_sql "SELECT host_hostname FROM mxq_job WHERE job_id = $jg")" gpu1
is "the ssd job ran on ssd1" "$(mxq_sql "SELECT host_hostname FROM mxq_job WHERE job_id = $js")" ssd1
is "only gpu1 and ssd1 were woken" "$(wakes_after "$ev")" "gpu1 ssd1"
if [ "$(cluster_node_kind ssd1)" = wol ]; then
	contains "ssd1 was switched on by a Wake-on-LAN packet" \
		"$(grep ' ssd1 wol on ' "$CLUSTER_DIR/calls.log")" "started"
fi
check "and both are powered off again when idle" wait_until 40 all_off

# ------------------------------------------- 3. leader killed mid-transition
section "3. kill -9 of the leader while nodes boot"
ev=$(last_event)
e0=$(epoch)
burst=
for _ in 1 2 3 4 5 6; do
	burst="$burst $(job 3 -N burst)"
done
if wait_for 20 "SELECT COUNT(*) > 0 FROM mxq_power WHERE state = 'POWERING_ON'"; then
	transit=$(mxq_sql "SELECT GROUP_CONCAT(hostname) FROM mxq_power WHERE state = 'POWERING_ON'")
	mxqd_signal svc1 KILL
	mxqd_wait svc1 10
	mxqd_forget svc1
	ok "svc1 killed with SIGKILL while $transit were POWERING_ON"
else
	not_ok "a node POWERING_ON for the burst"
	show_state
fi
check "svc2 takes over the lease with a new epoch" \
	wait_for 20 "(SELECT holder FROM mxq_power_leader WHERE id = 1) LIKE 'svc2/%'
		AND (SELECT epoch FROM mxq_power_leader WHERE id = 1) > $e0"
# shellcheck disable=SC2086
if wait_jobs 60 $burst; then
	ok "all six burst jobs finished"
else
	not_ok "all six burst jobs finished"
	show_state
fi
if wait_until 40 all_off; then
	ok "the cluster converges: every node OFF again, none stuck in a transition"
else
	not_ok "the cluster converges: every node OFF again, none stuck in a transition"
	show_state
fi
cluster_leader_start svc1 "$conf" || not_ok "restart svc1 as the standby"

# ---------------------------------------------------- 4. database restart
section "4. the database restarted mid-run"
dbjobs=
for _ in 1 2 3 4; do
	dbjobs="$dbjobs $(job 4 -N db-restart)"
done
in=$(echo $dbjobs | tr ' ' ',')
if wait_for 30 "SELECT COUNT(*) >= 2 FROM mxq_job WHERE job_id IN ($in) AND job_status = 200"; then
	ok "jobs run when the database goes down"
else
	not_ok "jobs run when the database goes down"
fi
running_nodes=$(mxq_sql "SELECT DISTINCT host_hostname FROM mxq_job
	WHERE job_id IN ($in) AND job_status = 200")
t_down=$(date +%s.%N)
mxq_db_kill
# an outage longer than the lease: the leader must stop acting on what it knew
sleep $((CLUSTER_LEASE + 2))
t_up=$(date +%s.%N)
if mxq_db_restart; then
	ok "the database is back"
else
	not_ok "the database is back"
	tap_done
	exit 1
fi
# leader actuations: exec calls, BMC requests, magic packets (status reads
# are not logged)
acted=$(awk -v a="$t_down" -v b="$t_up" '$1 > a && $1 < b &&
	($3 == "exec" || $3 == "bmc" || $3 == "wol")' "$CLUSTER_DIR/calls.log")
is "no power actuation while the database was down" "$acted" ""
check "a leader ticks again after the restart" wait_for 20 \
	"(SELECT last_tick_at FROM mxq_power_leader WHERE id = 1) > FROM_UNIXTIME($t_up)"
# shellcheck disable=SC2086
if wait_jobs 60 $dbjobs; then
	ok "the four jobs finished after the restart"
else
	not_ok "the four jobs finished after the restart"
	show_state
	mxq_sql "SELECT job_id, job_status, host_hostname FROM mxq_job WHERE job_id IN ($in)" | diag
fi
for n in $running_nodes; do
	check "$n's mxqd reconnected (heartbeat after the restart)" wait_for 20 \
		"(SELECT MAX(mtime) FROM mxq_daemon WHERE hostname = '$n') > FROM_UNIXTIME($t_up)"
done
if wait_until 40 all_off; then
	ok "settled after the restart: every node OFF"
else
	not_ok "settled after the restart: every node OFF"
	show_state
fi

# ------------------------------------------------ 5. a BMC stops answering
section "5. a BMC that stops answering"
check "cpu1 is OFF" cluster_wait_state 30 cpu1 OFF
if [ "$(cluster_node_kind cpu1)" = ipmi ]; then
	cluster_bmc_stop cpu1
	what="BMC of cpu1 stopped"
	want_reason="did not answer"
else
	cluster_flag cpu1 fail_on on
	what="cpu1's power switch fails (exec: ipmi not landed)"
	want_reason="exit"
fi
ev=$(last_event)
j5a=$(job 1 -N bmc-gone)
j5b=$(job 1 -N bmc-gone)
if cluster_wait_state 30 cpu1 FAILED; then
	ok "$what: cpu1 FAILED"
else
	not_ok "$what: cpu1 FAILED"
	show_state
fi
contains "cpu1's failure reason says why" "$(failure_reason cpu1)" "$want_reason"
if wait_jobs 40 "$j5a" "$j5b"; then
	ok "the work was re-planned and finished"
else
	not_ok "the work was re-planned and finished"
	show_state
fi
is "it ran elsewhere" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($j5a, $j5b)
	AND host_hostname <> 'cpu1'")" 2
echo "# woken: $(wakes_after "$ev")"

# --------------------------------------- 6. a node that does not come back
section "6. a node that misses its boot deadline"
check "gpu1 is OFF" cluster_wait_state 30 gpu1 OFF
cluster_flag gpu1 never_boots on
t6=$(now_cs)
j6=$(job 1 -N gpu-late --gpu)
if cluster_wait_state $((BOOT_DEADLINE + 20)) gpu1 FAILED; then
	ok "gpu1 FAILED after $(( ($(now_cs) - t6) / 100 ))s (boot deadline ${BOOT_DEADLINE}s)"
else
	not_ok "gpu1 FAILED at its boot deadline"
	show_state
fi
contains "its failure reason names the deadline" "$(failure_reason gpu1)" "deadline"
is "the GPU job still waits" "$(status_of "$j6")" 0
# the admin power-cycles the hung machine by hand, then re-admits it
cluster_flag gpu1 never_boots off
NODE_POWER_CALLER=admin "$cluster_power_bin" --dir "$CLUSTER_DIR" gpu1 off
if "$cluster_mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power clear gpu1 --reason "fixed by the test" \
	>/dev/null 2>&1; then
	ok "mxqadmin power clear gpu1"
else
	not_ok "mxqadmin power clear gpu1"
fi
if wait_jobs 40 "$j6"; then
	ok "gpu1 was re-admitted, woken and ran the GPU job"
else
	not_ok "gpu1 was re-admitted, woken and ran the GPU job"
	show_state
fi
is "the GPU job ran on gpu1" "$(mxq_sql "SELECT host_hostname FROM mxq_job WHERE job_id = $j6")" gpu1

# re-admit cpu1 too, with its BMC back
if [ "$(cluster_node_kind cpu1)" = ipmi ]; then
	cluster_bmc_start cpu1
else
	cluster_flag cpu1 fail_on off
fi
"$cluster_mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power clear cpu1 --reason "BMC back" >/dev/null 2>&1
check "cpu1 re-admitted after mxqadmin power clear" cluster_wait_state 20 cpu1 OFF ON

# ------------------------------------------- 7. the old-style node again
section "7. the old-style node: woken for its work, powered off over ssh"
check "old1 is OFF" cluster_wait_state 30 old1 OFF
ev=$(last_event)
j7=$(job 1 -N old-work --tags old --prerequisites old)
if wait_jobs 40 "$j7"; then
	ok "the job for old1 finished"
else
	not_ok "the job for old1 finished"
	show_state
fi
is "it ran on old1" "$(mxq_sql "SELECT host_hostname FROM mxq_job WHERE job_id = $j7")" old1
is "only old1 was woken" "$(wakes_after "$ev")" old1
if [ "$(cluster_node_kind old1)" = ssh ]; then
	# a woken old mxqd registers, but never writes mxq_power.node_seen_at
	# (--no-power-node); the leader counts a boot only by that column
	if cluster_wait_state 20 old1 ON OFF DRAINING POWERING_OFF; then
		ok "old1 counted as booted once its old mxqd registered"
	else
		not_ok "old1 counted as booted once its old mxqd registered # BUG: an mxqd with" \
			"--no-power-node never sets node_seen_at, so read_nodes() (mxq_power_db.c)" \
			"never sees the boot: FAILED at the boot deadline although it runs jobs"
		show_state
	fi
	n0=$(grep -c ' old1 ssh poweroff ok' "$CLUSTER_DIR/calls.log")
	if [ "$(cluster_state old1)" = FAILED ]; then
		ok "old1 drained and powered off over ssh again when idle # SKIP old1 is FAILED (BUG above)"
	elif wait_until 40 sh -c "[ \$(grep -c ' old1 ssh poweroff ok' '$CLUSTER_DIR/calls.log') -gt $n0 ]"; then
		ok "old1 drained and powered off over ssh again when idle"
	else
		not_ok "old1 drained and powered off over ssh again when idle"
		show_state
	fi
fi

# ------------------------------------------------------------ exactly once
section "every job exactly once"
total=$(mxq_sql "SELECT COUNT(*) FROM mxq_job")
is "all $total jobs FINISHED" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_status = 1000")" "$total"
is "each job ran exactly once" "$(sort "$work/ran" | uniq -c | awk '$1 != 1' | wc -l) $(sort -u "$work/ran" | wc -l)" \
	"0 $total"
is "group counters agree with the jobs" "$(counter_mismatches)" ""
echo "# power-ons: $(for n in $NODES; do printf '%s=%s ' "$n" "$(cluster_power_ons "$n")"; done)"

tap_done
[ "$failures" -eq 0 ]
