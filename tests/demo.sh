#!/bin/sh
# demo.sh - the README's demo (./dev.sh demo): a simulated, power-managed
# cluster on this machine, time-scaled so that it runs in about two minutes.
#
# A private MariaDB, two power manager candidates and six nodes of
# different kinds and classes (tests/lib/cluster.sh): simulated BMCs
# (ipmi_sim), Wake-on-LAN, ssh and a script switch (exec). A workload with
# bursts and idle gaps, GPU-, bigmem- and ssd-restricted groups included,
# goes through while a live view shows node power states and the queue.
# The summary: jobs, power cycles, and each node's accounted energy (jobs,
# idle, boots, shutdowns) against the same nodes always on over the same
# interval.
# Everything lives in a temporary directory and is removed at the end,
# also on Ctrl-C. Needs root for nothing; talks only to 127.0.0.1.
#
#   sh tests/demo.sh            (DEMO_VIEW_INTERVAL=2, DEMO_MAX_SECONDS=240)
set -u
MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd)
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

CLUSTER_BOOT_DELAY=2.5
CLUSTER_TICK=1
CLUSTER_LEASE=10
IDLE_TIME=5
VIEW_INTERVAL=${DEMO_VIEW_INTERVAL:-2}
MAX_SECONDS=${DEMO_MAX_SECONDS:-240}

say "starting a private MariaDB"
mxq_db_start >/dev/null || die "cannot start MariaDB"
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/cluster.sh"
mxqadmin() { "$MXQ_BUILD_DIR/mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" "$@"; }
echo "database and cluster files in $MXQ_TEST_DIR (removed at the end)"

say "building the simulated cluster"
cluster_init || die "cannot set up the cluster"
conf=$CLUSTER_DIR/power.conf
cluster_conf "$conf" idle_time=${IDLE_TIME}s boot_deadline=30s
#                 host  kind rank class  idle:slot W   mxqd options
cluster_node_add std1 ipmi 1 std    60:15  --slots 4 --memory 4G &&
cluster_node_add std2 ipmi 2 std    65:15  --slots 4 --memory 4G &&
cluster_node_add big1 exec 3 bigmem 90:20  --slots 4 --memory 16G --tags bigmem &&
cluster_node_add ssd1 wol  4 ssd    70:20  --slots 2 --memory 4G --tags ssd &&
cluster_node_add gpu1 exec 5 gpu    150:50 --slots 2 --memory 8G --gpus 1 --tags gpu &&
cluster_node_add old1 ssh  8 old    120:30 --slots 2 --memory 2G ||
	die "cannot declare the nodes"
printf '  %-5s %-5s %-4s %-7s %-7s %s\n' HOST KIND RANK CLASS "IDLE W" "MXQD OPTIONS"
for n in std1 std2 big1 ssd1 gpu1 old1; do
	printf '  %-5s %-5s %-4s %-7s %-7s %s\n' "$n" "$(cluster_node_kind "$n")" \
		"$(mxq_sql "SELECT efficiency_rank FROM mxq_power WHERE hostname = '$n'")" \
		"$(mxq_sql "SELECT node_class FROM mxq_power WHERE hostname = '$n'")" \
		"$(cut -d: -f1 "$CLUSTER_DIR/nodes/$n/watts")" \
		"$(cat "$CLUSTER_DIR/nodes/$n/opts.given")$(grep -qx -- --no-power-node \
			"$CLUSTER_DIR/nodes/$n/opts" && echo ' --no-power-node')"
done
cluster_has ipmi || echo "  (the ipmi transport is not in this mxqd: std1 and std2 use exec)"
cluster_has wol || echo "  (the wol transport is not in this mxqd: ssd1 uses exec)"
if cluster_has ssh; then
	echo "  old1 is an old-style node (mxqd --no-power-node): drained and powered off over ssh"
	echo "  (sshd on 127.0.0.1, a throwaway key restricted to one command), switched on by exec"
else
	echo "  (the ssh transport is not in this mxqd: old1 uses exec)"
fi
if cluster_has energy; then
	echo "  every node's mxqd accounts job energy with its power model (IDLE:PER_SLOT watts)"
else
	echo "  energy accounting is not in this mxqd: no energy figures below"
fi

say "powering on every node (boot takes ${CLUSTER_BOOT_DELAY}s), then two power manager candidates"
cluster_boot_all 60 || die "the nodes did not come up"
cluster_leader_start svc1 "$conf" >/dev/null || die "cannot start svc1"
wait_for 20 "(SELECT holder FROM mxq_power_leader WHERE id = 1) LIKE 'svc1/%'" >/dev/null ||
	die "svc1 did not take the lease"
cluster_leader_start svc2 "$conf" >/dev/null || die "cannot start svc2"
echo "svc1 holds the lease, svc2 stands by; policy: idle_time ${IDLE_TIME}s, no warm pool," \
	"tick ${CLUSTER_TICK}s"

# ------------------------------------------------------------- workload
work=$MXQ_TEST_DIR/work
mkdir -p "$work"
sub() { # GROUP SECS [MXQSUB OPTIONS...]
	local _g _s
	_g=$1 _s=$2
	shift 2
	"$MXQ_BUILD_DIR/mxqsub" -M "$MXQ_MYSQL_DEFAULT_FILE" -w "$work" -N "$_g" -t 5m "$@" \
		sh -c "sleep $_s" | sed -n 's/^mxq_job_id=//p'
}
# the timeline: seconds after the start, what arrives
plan="8 burst-a 10 3 -m 500M
30 gpu 3 4 --gpu -m 2G
32 bigmem 4 4 -m 6G --prerequisites bigmem
52 ssd 3 3 --prerequisites ssd -m 1G
70 burst-b 14 2 -m 500M"
echo "workload (seconds from now: group, jobs, seconds each):"
printf '%s\n' "$plan" | awk '{ printf "  t+%-3s %-8s %2s jobs of %ss  %s %s %s %s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'

# submit what is due at ELAPSED; prints "group: N jobs" lines
submit_due() {
	local _t _g _n _s _opts _i _line
	printf '%s\n' "$plan" | while read -r _t _g _n _s _opts; do
		[ "$_t" -le "$1" ] || continue
		[ -e "$work/.submitted.$_g" ] && continue
		: >"$work/.submitted.$_g"
		_i=0
		while [ "$_i" -lt "$_n" ]; do
			# shellcheck disable=SC2086
			sub "$_g" "$_s" $_opts >>"$work/jobs.$_g"
			_i=$((_i + 1))
		done
		echo "submitted $_n jobs of group $_g"
	done
}

# -------------------------------------------------------------- the view
if [ -t 1 ]; then tty=yes; else tty=no; fi
events_tail() {
	mxq_sql "SELECT CONCAT(DATE_FORMAT(event_time, '%H:%i:%s'), '  ', hostname, ' ',
		from_state, ' -> ', to_state, '  (', actor, ') ', LEFT(reason, 70))
		FROM mxq_power_event WHERE from_state <> to_state ORDER BY event_id DESC LIMIT 4" |
		sed 's/^/  /'
}
view() { # ELAPSED NOTE
	local _body
	_body=$(cluster_view; echo "last power events:"; events_tail)
	if [ "$tty" = yes ]; then
		printf '\033[H\033[2J'
	else
		echo
	fi
	printf -- '--- t+%ss%s\n%s\n' "$1" "${2:+  ($2)}" "$_body"
}
settled() {
	[ "$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_status < 400")" = 0 ] &&
	[ "$(mxq_sql "SELECT COUNT(*) FROM mxq_power WHERE state NOT IN ('OFF', 'FAILED')")" = 0 ]
}

say "running the workload (view every ${VIEW_INTERVAL}s; ends when the queue is empty and every node is off)"
[ "$tty" = yes ] && sleep 2
t0=$(date +%s)
last_plan_t=$(printf '%s\n' "$plan" | tail -n 1 | cut -d' ' -f1)
last_shown=
news=
while :; do
	el=$(( $(date +%s) - t0 ))
	news=$(submit_due "$el" | tr '\n' ';' | sed 's/;$//; s/;/; /g')
	# without a terminal: a snapshot when something changed, at least every 10 s
	now_state=$(mxq_sql "SELECT GROUP_CONCAT(hostname, state) FROM mxq_power")$(cluster_queue_line)
	if [ "$tty" = yes ] || [ -n "$news" ] || [ "$now_state" != "$last_shown" ] ||
		[ $((el % 10)) -lt "$VIEW_INTERVAL" ]; then
		view "$el" "$news"
		last_shown=$now_state
	fi
	if [ "$el" -gt "$last_plan_t" ] && settled; then
		break
	fi
	if [ "$el" -ge "$MAX_SECONDS" ]; then
		echo "demo: stopping the view after ${MAX_SECONDS}s (not everything settled)"
		break
	fi
	sleep "$VIEW_INTERVAL"
done
t_end=$(date +%s)
duration=$((t_end - t0))

# --------------------------------------------------------------- summary
say "summary after ${duration}s"
mxq_sql "SELECT CONCAT('jobs: ', COUNT(*), ' submitted, ', SUM(job_status = 1000), ' finished, ',
	SUM(job_status IN (400, 750, 755, 999, 1024)), ' failed, ', SUM(job_status < 400), ' not done')
	FROM mxq_job"
echo "groups and where their jobs ran:"
mxq_sql "SELECT g.group_name, j.host_hostname, COUNT(*),
	ROUND(AVG(TIMESTAMPDIFF(MICROSECOND, j.date_submit, j.date_start)) / 1e6, 1)
	FROM mxq_job j JOIN mxq_group g USING (group_id)
	GROUP BY g.group_name, j.host_hostname ORDER BY MIN(j.job_id), 2" |
	awk -F'\t' '{ printf "  %-8s on %-5s %3s jobs, waited %5ss on average\n", $1, $2, $3, $4 }'

echo
echo "power per node (from the simulated power switches):"
printf '  %-5s %-6s %9s %8s\n' HOST STATE POWER-ONS "ON (s)"
for n in std1 std2 big1 ssd1 gpu1 old1; do
	printf '  %-5s %-6s %9s %8s\n' "$n" "$(cluster_state "$n")" "$(cluster_power_ons "$n")" \
		"$(cluster_on_seconds "$n")"
done

if cluster_has energy; then
	# The interval: from the first power-on of any node to now (every node
	# is off again). Each node's mxqd accounted its part of it: boots (from
	# power-on to its first sample, once per power-on), jobs, idle, and
	# shutdowns (from SIGTERM to its exit); it measured nothing while the
	# node was off, which is the point. Always on: the same nodes running
	# the whole interval at their idle baseline, plus the same jobs' energy
	# above the baseline.
	t_first_on=$(cat "$CLUSTER_DIR"/nodes/*/power.log 2>/dev/null |
		awk '$2 == "on" && (m == "" || $1 < m) { m = $1 } END { print m }')
	span=$(awk -v a="$t_first_on" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo
	echo "energy as accounted by each node's mxqd (mxq_power; power model source), kJ,"
	echo "over the ${span}s since the first power-on:"
	mxq_sql "SELECT p.hostname, p.energy_joules, p.energy_jobs_joules, p.energy_idle_joules,
		p.energy_boot_joules, p.energy_shutdown_joules, p.idle_baseline_watts,
		(SELECT COALESCE(SUM(j.active_energy_j), 0) FROM mxq_power_job j WHERE j.hostname = p.hostname)
		FROM mxq_power p WHERE p.energy_method <> '' ORDER BY p.efficiency_rank" |
	awk -F'\t' -v span="$span" '
		BEGIN {
			printf "  %-5s %7s   %6s   %6s   %6s   %8s %s  %7s %8s   %7s\n", "HOST", "TOTAL", "JOBS",
				"IDLE", "BOOT", "SHUTDOWN", "", "IDLE W", "ACTIVE", "ALWAYS"
		}
		{
			parts = $3 + $4 + $5 + $6
			always_n = $7 * span + $8
			d = $2 - parts; if (d < 0) d = -d
			printf "  %-5s %7.2f = %6.2f + %6.2f + %6.2f + %8.2f %s  %7.0f %8.2f   %7.2f\n",
				$1, $2 / 1000, $3 / 1000, $4 / 1000, $5 / 1000, $6 / 1000,
				(d <= 1e-6 * $2 + 0.001 ? "ok" : "!!"), $7, $8 / 1000, always_n / 1000
			used += $2; always += always_n; if (d > 1e-6 * $2 + 0.001) bad++
		}
		END {
			printf "  (ok: TOTAL = JOBS + IDLE + BOOT + SHUTDOWN exactly; ALWAYS = IDLE W x %ss + ACTIVE,\n", span
			printf "   ACTIVE = the energy of the node'"'"'s jobs above its idle baseline; time a node is\n"
			printf "   switched on without a running mxqd, after mxqd exited and before the switch is off, is in no TOTAL)\n"
			if (bad)
				printf "  %d node(s) whose parts do not add up to their total (!!)\n", bad
			printf "  with power management %.2f kJ (the TOTALs), always on %.2f kJ (the ALWAYS): %.0f%% saved\n",
				used / 1000, always / 1000, (always > 0 ? 100 * (always - used) / always : 0)
		}'
	for n in std1 std2 big1 ssd1 gpu1 old1; do
		[ -n "$(mxq_sql "SELECT hostname FROM mxq_power WHERE hostname = '$n' AND energy_method <> ''")" ] &&
			continue
		echo "  $n: no node totals (its mxqd runs with --no-power-node, so it has no mxq_power row);"
		echo "    left out of both sides; its jobs' energy is in mxq_power_job"
	done
	echo
	echo "energy of the first job of each group (mxq_power_job):"
	printf '  %-6s %-8s %-5s %9s %10s %7s  %s\n' JOB GROUP HOST "ENERGY J" "ACTIVE J" "AVG W" "METHOD"
	for g in burst-a gpu bigmem ssd burst-b; do
		j=$(head -n 1 "$work/jobs.$g" 2>/dev/null)
		[ -n "$j" ] || continue
		mxq_sql "SELECT job_id, '$g', hostname, ROUND(energy_j, 1), ROUND(active_energy_j, 1),
			ROUND(avg_watts, 1), CONCAT(method, ' ', completeness) FROM mxq_power_job
			WHERE job_id = $j" |
			awk -F'\t' '{ printf "  %-6s %-8s %-5s %9s %10s %7s  %s\n", $1, $2, $3, $4, $5, $6, $7 }'
	done
	j=$(head -n 1 "$work/jobs.gpu" 2>/dev/null)
	if [ -n "$j" ]; then
		echo "one of them in full (mxqadmin power job $j):"
		mxqadmin power job "$j" 2>&1 | sed 's/^/    /'
	fi
else
	echo "(energy: the energy accounting has not landed in this mxqd)"
fi

echo
echo "power events per node (mxqadmin power events):"
mxq_sql "SELECT hostname, COUNT(*), SUM(to_state = 'POWERING_ON'), SUM(to_state = 'OFF'),
	SUM(to_state = 'FAILED') FROM mxq_power_event WHERE from_state <> to_state GROUP BY hostname
	ORDER BY hostname" | awk -F'\t' '{ printf "  %-5s %3s transitions, %2s wakes, %2s times off, %s failures\n", $1, $2, $3, $4, $5 }'
echo "leader: $(mxq_sql "SELECT CONCAT(holder, ', epoch ', epoch, ', config ', config_hash)
	FROM mxq_power_leader WHERE id = 1")"

say "cleaning up (nodes, BMCs, power managers, database)"
# the EXIT trap of mariadb.sh runs cluster_cleanup and removes the directory
exit 0
