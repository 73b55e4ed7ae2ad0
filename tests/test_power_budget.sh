#!/bin/sh
# tests/test_power_budget.sh - max_power_watts end to end: a leader mxqd
# with the exec transport, three nodes whose mxqds report their power from
# the model energy source (--energy-model 100:50, 2 slots: at most 200 W),
# a budget of 450 W with busy_watts = 200: two nodes may be powered, never
# three.
#
#   a. idle nodes are powered off
#   b. three jobs, one per node: two nodes are woken, the third stays OFF
#      and mxqadmin power explain says the budget holds it back
#   c. the reported draw of the powered nodes stays within the budget
#   d. the third job runs on a node the first two free, no third wake
#
# Every wait is a bounded poll on a condition.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/power.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"
CONF=$MXQ_TEST_DIR/power.conf
power_conf "$CONF" max_power_watts=450 busy_watts=200
NODE_OPTS="--energy-sources model --energy-model 100:50 --energy-interval 0.25
	--energy-flush-interval 1"

# A whole-node job (2 slots) that runs until $W/release.NAME exists (at
# most 60 s).
held_job() {
	# shellcheck disable=SC2016 # expanded by the job's shell
	submit -j 2 -m 64M -w "$W" sh -c \
		'echo "$MXQ_HOSTNAME" >"ran.$MXQ_JOBID"; i=0
		while [ ! -e "release.$0" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' "$1"
}
powered_watts() {
	mxq_sql "SELECT COALESCE(SUM(current_watts), 0) FROM mxq_power
		WHERE state IN ('ON', 'DRAINING', 'POWERING_ON', 'POWERING_OFF')"
}
woken_at_least() {
	[ "$(power_wakes "$mark" | wc -w)" -ge "$1" ]
}
powered_count() {
	mxq_sql "SELECT COUNT(*) FROM mxq_power WHERE state <> 'OFF'"
}

section "nodes"
for h in n1 n2 n3; do
	# shellcheck disable=SC2086 # word splitting of the options is intended
	check "node $h (model energy source) boots" power_node_add $h $NODE_OPTS
done

section "a. idle nodes are powered off"
check "leader starts" power_leader_start leader1 "$CONF"
for h in n1 n2 n3; do
	check "$h: idle, powered off" power_wait_state 40 "$h" OFF
done
mark=$(power_last_event_id)

section "b. the budget holds the third wake back"
j1=$(held_job a)
j2=$(held_job b)
j3=$(held_job c)
check "three jobs submitted" test -n "$j1" -a -n "$j2" -a -n "$j3"
check "two nodes are woken" wait_until 40 woken_at_least 2
check "two jobs run" wait_for 40 "(SELECT COUNT(*) FROM mxq_job WHERE job_id IN ($j1, $j2, $j3)
	AND job_status = 200) = 2"
is "still two wakes, after the jobs started" "$(power_wakes "$mark" | wc -w)" 2
off=$(mxq_sql "SELECT hostname FROM mxq_power WHERE state = 'OFF'")
is "one node stays OFF" "$(printf '%s\n' "$off" | grep -c .)" 1
explain=$("$mxqadmin_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain "$off" 2>&1)
contains "power explain $off: the budget holds it back" "$explain" "max_power_watts reached"
contains "power explain $off: with the figures" "$explain" "400 W of 450 W"

section "c. the reported draw stays within the budget"
check "the powered nodes report their model power" wait_for 20 \
	"(SELECT MIN(current_watts) FROM mxq_power WHERE state = 'ON') > 0"
over=
i=0
while [ $i -lt 20 ]; do
	w=$(powered_watts)
	awk -v w="$w" 'BEGIN { exit !(w > 450) }' && over="$over $w"
	[ "$(powered_count)" -le 2 ] || over="$over count=$(powered_count)"
	sleep 0.1
	i=$((i + 1))
done
is "20 samples: draw <= 450 W, at most two nodes powered" "$over" ""

section "d. the third job runs where one of the first two ends"
first=$(mxq_sql "SELECT job_id FROM mxq_job WHERE job_id IN ($j1, $j2) AND job_status = 200
	ORDER BY job_id LIMIT 1")
name=a
[ "$first" = "$j2" ] && name=b
[ "$first" = "$j1" ] || [ "$first" = "$j2" ] || name=
check "one of the running jobs is one of the first two" test -n "$name"
host=$(cat "$W/ran.$first" 2>/dev/null)
touch "$W/release.$name"
check "the third job runs" wait_for 40 "(SELECT job_status FROM mxq_job WHERE job_id = $j3)
	IN (200, 1000)"
is "it runs on the freed node $host" "$(cat "$W/ran.$j3" 2>/dev/null)" "$host"
is "no third wake" "$(power_wakes "$mark" | wc -w)" 2
touch "$W/release.a" "$W/release.b" "$W/release.c"
for j in $j1 $j2 $j3; do
	check "job $j finishes" job_wait 40 "$j" 1000
done

tap_done
