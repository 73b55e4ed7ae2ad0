#!/bin/sh
# tests/test_power_race.sh - work submitted at the moment a node is drained
# (DESIGN 5.4: the claim guard closes the race in the database).
#
# Nodes r1..r3 (exec transport, poll every 0.05 s) and a leader with tiny
# times (idle_time 1s, tick 0.2 s): a node is drained 1-2 s after its last
# job. Per node, a loop of trials: after the previous job ended, either
# sleep a random 0-2 s or wait until the node is seen DRAINING (plus a
# random 0-0.4 s), then submit one job for that node only (--whitelist)
# and wait until it ended. Every job records its start and end with
# `date +%s.%N`. Trials run until 200 are done or the time budget
# (MXQ_RACE_SECONDS, default 140 s) is used up; at least 50 must run.
#
# Checks, after the queue is quiet:
#   - no job lost or stuck: every job FINISHED, on its node, exit 0
#   - no job started inside a power-off window of its node: from the
#     drain acknowledgement its mxqd logged (ms) until that drain ended
#     in ON, and from the DRAINING>POWERING_OFF event until the node's
#     next ON event
#   - no node powered off with a job running: no job of that node was
#     running at a DRAINING>POWERING_OFF event nor at the moment the
#     transport's "off" began (tests/lib/power-exec.sh log)
#   - the race was met: jobs that met a drain (cancelled, or woken again);
#     how many ran without a drain in the way is printed

POWER_TICK=0.2
POWER_LEASE=2
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/power.sh"

NODES="r1 r2 r3"
TRIALS=200
BUDGET=${MXQ_RACE_SECONDS:-140}
W=$MXQ_TEST_DIR/work
mkdir -p "$W"
CONF=$MXQ_TEST_DIR/power.conf
power_conf "$CONF" idle_time=1s boot_deadline=30s shutdown_deadline=30s

# hundredths -> seconds for sleep
cs() {
	printf '%d.%02d' $(($1 / 100)) $(($1 % 100))
}

section "setup"
for h in $NODES; do
	check "node $h boots" power_node_add "$h" --poll-interval 0.05
done
check "leader starts (tick $POWER_TICK s, idle_time 1s)" power_leader_start leader1 "$CONF"
check "leader holds the lease" wait_for 10 \
	"(SELECT holder LIKE 'leader1/%' AND lease_expires > NOW(3) FROM mxq_power_leader)"

# ------------------------------------------------------------ the trials

# One node's trials: lines "JOB SUBMIT_TIME MODE" in $W/trials.HOST;
# problems in $W/problems.HOST. The next trial starts as soon as the job's
# end file appears (its FINISHED status is checked for all jobs at the
# end); waits poll files, random numbers come from one od call: under
# load every process spawned here delays the trials.
trials() {
	_h=$1
	_quota=$2
	_end=$3
	_n=0
	_R=
	while [ "$_n" -lt "$_quota" ] && [ "$(now_cs)" -lt "$_end" ]; do
		_n=$((_n + 1))
		_R=${_R# }
		[ -n "$_R" ] || _R=$(od -An -v -N600 -tu2 /dev/urandom | tr -s ' \n' '  ')
		_R=${_R# }; _r=${_R%% *}; _R=${_R#"$_r"}
		_mode=$((_r % 2))
		if [ "$_mode" = 0 ]; then
			# anywhere from "still ON and idle" to "already OFF"
			sleep "$(cs $((_r / 2 % 200)))"
		else
			# right at the drain: seen DRAINING, then up to 0.4 s
			_w=$(( $(now_cs) + 400 ))
			while [ "$(power_state "$_h")" != DRAINING ] && [ "$(now_cs)" -lt "$_w" ]; do
				sleep 0.05
			done
			sleep "$(cs $((_r / 2 % 40)))"
		fi
		_t=$(date +%s.%N)
		# shellcheck disable=SC2016 # expanded by the job's shell
		_j=$(submit -N "race-$_h" --whitelist "$_h" -m 64M -w "$W" sh -c \
			'date +%s.%N >"start.$MXQ_JOBID"; echo "$MXQ_HOSTNAME" >"host.$MXQ_JOBID"
			sleep "$0"; date +%s.%N >"end.$MXQ_JOBID"' "0.$((_r % 3))") || {
			echo "trial $_n: mxqsub failed" >>"$W/problems.$_h"
			continue
		}
		echo "$_j $_t $_mode" >>"$W/trials.$_h"
		_w=$(( $(now_cs) + 4000 ))
		while [ ! -s "$W/end.$_j" ]; do
			if [ "$(now_cs)" -ge "$_w" ]; then
				echo "trial $_n: job $_j did not end within 40 s (status $(status_of "$_j"), node $(power_state "$_h"))" \
					>>"$W/problems.$_h"
				return 1
			fi
			sleep 0.02
		done
	done
}

section "trials"
t0=$(now_cs)
end=$(( t0 + BUDGET * 100 ))
n_nodes=$(echo "$NODES" | wc -w)
pids=
for h in $NODES; do
	: >"$W/trials.$h"
	trials "$h" $(( (TRIALS + n_nodes - 1) / n_nodes )) "$end" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
elapsed=$(( ($(now_cs) - t0) / 100 ))
cat "$W"/trials.* >"$W/trials"
n=$(wc -l <"$W/trials")
echo "# $n trials in ${elapsed}s on $n_nodes nodes"
check "at least 50 trials ran ($n; goal $TRIALS)" [ "$n" -ge 50 ]
is "no trial reported a problem" "$(cat "$W"/problems.* 2>/dev/null)" ""

# -------------------------------------------------------------- quiet

check "queue quiet: no job queued or active" wait_for 60 \
	"(SELECT COUNT(*) FROM mxq_job WHERE job_status IN (0, 100, 150, 200, 250, 300, 350, 399, 989)) = 0"
check "nodes settled (OFF, no transition pending)" wait_for 30 \
	"(SELECT COUNT(*) FROM mxq_power WHERE state <> 'OFF') = 0"

# ------------------------------------------------------------ checking

is "every job FINISHED" "$(mxq_sql "SELECT CONCAT(job_id, ' ', job_status) FROM mxq_job
	WHERE job_status <> 1000")" ""
is "every job exited 0" "$(mxq_sql "SELECT job_id FROM mxq_job WHERE job_status = 1000
	AND stats_status <> 0")" ""
is "job rows = trials" "$(mxq_sql "SELECT COUNT(*) FROM mxq_job")" "$n"
wrong=
missing=
while read -r j _rest; do
	if [ ! -s "$W/start.$j" ] || [ ! -s "$W/end.$j" ]; then
		missing="$missing $j"
	fi
	[ "$(cat "$W/host.$j" 2>/dev/null)" = "$(host_of "$j")" ] || wrong="$wrong $j"
done <"$W/trials"
is "every job recorded its start and end" "$missing" ""
is "every job ran where the database says" "$wrong" ""
is "group counters agree with the jobs" "$(counter_mismatches)" ""

# the facts, one line each:
#   E HOST TIME FROM TO        power events (ms)
#   J JOB HOST START END SUBMIT  jobs (ns)
#   O HOST TIME                the transport's "off" began (ns)
#   A HOST TIME                the node's mxqd logged its drain acknowledgement (ms)
{
	mxq_sql "SELECT CONCAT_WS(' ', 'E', hostname, UNIX_TIMESTAMP(event_time), from_state, to_state)
		FROM mxq_power_event ORDER BY event_id"
	while read -r j t _rest; do
		echo "J $j $(host_of "$j") $(cat "$W/start.$j" 2>/dev/null || echo 0)" \
			"$(cat "$W/end.$j" 2>/dev/null || echo 0) $t"
	done <"$W/trials"
	awk '$3 == "off" && $4 == "begin" { print "O", $2, $1 }' "$MXQ_POWER_TEST_DIR/exec.log"
	for h in $NODES; do
		grep "power: drain acknowledged" "$(power_node_log "$h")" | cut -c1-23 >"$W/acks.$h"
		[ -s "$W/acks.$h" ] && date -f "$W/acks.$h" +%s.%N | sed "s/^/A $h /"
	done
} >"$W/facts"

awk -v out="$W/stats" '
$1 == "E" {
	ne[$2]++; et[$2, ne[$2]] = $3; ef[$2, ne[$2]] = $4; eto[$2, ne[$2]] = $5
}
$1 == "J" { nj++; jid[nj] = $2; jh[nj] = $3; js[nj] = $4; je[nj] = $5; jsub[nj] = $6 }
$1 == "O" { no++; oh[no] = $2; ot[no] = $3 }
$1 == "A" { na++; ah[na] = $2; at[na] = $3 }
END {
	bad = 0
	# windows from a drain acknowledgement until the drain it acknowledged
	# ended in ON: the first ...>ON after the last ...>DRAINING before the
	# log line of the ack. Not "the first ON after the log line": the line
	# is written after the ack committed, and a cancel (DRAINING>ON, stamped
	# by the database) can land between the two, a few ms apart on a loaded
	# machine; the node may then rightly claim work at once.
	for (a = 1; a <= na; a++) {
		h = ah[a]
		nw[h]++; wo[h, nw[h]] = at[a]; wc[h, nw[h]] = 1e12; wk[h, nw[h]] = "acknowledged drain"
		d = 0
		for (k = 1; k <= ne[h]; k++)
			if (eto[h, k] == "DRAINING" && et[h, k] <= at[a])
				d = k
		for (k = d + 1; k <= ne[h]; k++)
			if (eto[h, k] == "ON") { wc[h, nw[h]] = et[h, k]; break }
		if (wc[h, nw[h]] < at[a])
			overtaken++
	}
	# off windows: DRAINING>POWERING_OFF until the next ...>ON of the host
	for (h in ne) {
		for (i = 1; i <= ne[h]; i++) {
			if (!(ef[h, i] == "DRAINING" && eto[h, i] == "POWERING_OFF"))
				continue
			nw[h]++; wo[h, nw[h]] = et[h, i]; wc[h, nw[h]] = 1e12; wk[h, nw[h]] = "power-off"
			for (k = i + 1; k <= ne[h]; k++)
				if (eto[h, k] == "ON") { wc[h, nw[h]] = et[h, k]; break }
			npo++; poh[npo] = h; pot[npo] = et[h, i]
		}
	}
	for (j = 1; j <= nj; j++) {
		h = jh[j]
		for (w = 1; w <= nw[h]; w++)
			if (js[j] >= wo[h, w] && js[j] <= wc[h, w]) {
				printf "job %s started at %.3f on %s inside a window %.3f..%.3f (%s until ON)\n",
					jid[j], js[j], h, wo[h, w], wc[h, w], wk[h, w]
				bad++
			}
		for (p = 1; p <= npo; p++)
			if (poh[p] == h && js[j] <= pot[p] && pot[p] <= je[j]) {
				printf "%s went POWERING_OFF at %.3f while job %s ran (%.3f..%.3f)\n",
					h, pot[p], jid[j], js[j], je[j]
				bad++
			}
		for (o = 1; o <= no; o++)
			if (oh[o] == h && js[j] <= ot[o] && ot[o] <= je[j]) {
				printf "%s was switched off at %.3f while job %s ran (%.3f..%.3f)\n",
					h, ot[o], jid[j], js[j], je[j]
				bad++
			}
		# what the job met between its submission and its start
		cyc = 0; can = 0
		for (i = 1; i <= ne[h]; i++) {
			if (et[h, i] < jsub[j] - 0.001 || et[h, i] > js[j])
				continue
			if (ef[h, i] == "DRAINING" && eto[h, i] == "ON") can = 1
			if (eto[h, i] == "POWERING_ON") cyc = 1
		}
		if (cyc) woken++
		else if (can) cancelled++
		else direct++
		# queued for this node for over 0.5 s when it was powered off
		for (p = 1; p <= npo; p++)
			if (poh[p] == h && jsub[j] < pot[p] - 0.5 && js[j] > pot[p]) { late++; break }
	}
	printf "%d %d %d %d %d %d %d %d\n", nj, direct + 0, cancelled + 0, woken + 0, npo + 0, na + 0,
		late + 0, overtaken + 0 >out
}' "$W/facts" >"$W/violations"

is "no job started in an off window, no node powered off under a job" \
	"$(head -n 20 "$W/violations")" ""
read -r nj direct cancelled woken npo nack late overtaken <"$W/stats"
echo "# $nj jobs: $direct ran without a drain in the way, $cancelled met a drain that was" \
	"cancelled, $woken met a power-off and woke their node again; $npo power-offs," \
	"$nack drain acknowledgements ($overtaken cancelled before the node logged them);" \
	"$late jobs were queued for their node (> 0.5 s) when it was powered off"
echo "# exec transport calls: $(grep -c ' on started' "$MXQ_POWER_TEST_DIR/exec.log") on," \
	"$(grep -c ' off begin' "$MXQ_POWER_TEST_DIR/exec.log") off"
check "some jobs met a drain ($((cancelled + woken)))" [ $((cancelled + woken)) -ge 1 ]
check "power-offs happened during the trials ($npo)" [ "$npo" -ge 1 ]
check "every power-off follows an acknowledgement the node logged ($nack >= $npo)" \
	[ "$nack" -ge "$npo" ]

tap_done
