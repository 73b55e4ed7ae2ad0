#!/bin/sh
# bench_policy_random.sh - our power policy against the sweep of fixed idle
# timeouts on random configurations nobody tuned on: each run draws a
# synthetic trace (tests/gen_swf.sh: seed, 15-40 days, 8-100 hosts of 1-48
# cores, 2-15 jobs per host and day, steady, bursty or wide, wide ones
# sometimes split) and the cluster's power figures (idle 50-250 W, busy
# +50-300 W, boot 1-10 min and 10-120 kJ). One line per run: ours against
# the 1-minute timeout (energy in %, mean wait in s) and whether ours lies on
# or beyond the timeouts' front, or the first timeout better on both, by how
# much, and how much placement alone moves the figures there: ours with
# idle_time = 1m against the 1-minute timeout, which differ only in where
# the jobs land (on a multi-core cluster a job that starts a few seconds
# later can land on another host, and what the hosts run together moves
# the energy) and in the drain protocol's tick; then the count of runs
# behind, of them those behind by more than that (BEYOND) on both energy
# and wait, and the mean differences over the runs whose mean
# waits are under 100 s apart (overloaded clusters, where waits of days
# swamp everything, are left out of the means). Deterministic for a given
# SEED. Prints figures only; exits 1 when a simulation fails.
#
# usage: sh tests/bench_policy_random.sh [RUNS [SEED]]   (default: 40 1000)
# env: SIM (./mxq-power-sim), SIM_FLAGS (e.g. "--power-config FILE"; the
#      placement run replaces a --power-config by idle_time = 1m)
set -eu
SIM=${SIM:-./mxq-power-sim}
GEN="$(dirname "$0")/gen_swf.sh"
runs=${1:-40}
seed=${2:-1000}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT INT TERM
echo "idle_time = 1m" >"$d/fixed.conf"

k=0
while [ "$k" -lt "$runs" ]; do
	# shellcheck disable=SC2046
	set -- $(awk -v s=$((seed + k)) 'function pick(n) { return int(rand() * n) }
	BEGIN {
		srand(s)
		split("8 16 24 40 64 100", nodes); split("1 4 8 16 32 48", cores)
		split("steady bursty wide", shape); split("50 100 150 250", idle)
		split("50 150 300", extra); split("1m 3m 5m 10m", boot)
		split("10000 30000 60000 120000", energy)
		n = nodes[pick(6) + 1]; c = cores[pick(6) + 1]; sh = shape[pick(3) + 1]
		rate = int(n * (2 + 13 * rand()) * (c > 8 ? sqrt(c / 8) : 1))
		i = idle[pick(4) + 1]
		printf "%d %d %d %d %d %s %d %d %s %d %s\n", 100 + pick(9900), 15 + pick(26),
			n, c, rate, sh, i, i + extra[pick(3) + 1], boot[pick(4) + 1],
			energy[pick(4) + 1], (sh == "wide" && rand() < 0.5) ? "split" : "gang"
	}')
	k=$((k + 1))
	sh "$GEN" "$1" "$2" "$3" "$4" "$5" "$6" >"$d/t.swf"
	# shellcheck disable=SC2086
	if ! "$SIM" ${SIM_FLAGS:-} --csv --idle-watts "$7" --busy-watts "$8" --boot-time "$9" \
		--boot-energy "${10}" --wide "${11}" "$d/t.swf" >"$d/out.csv" 2>"$d/err"; then
		echo "run $k: mxq-power-sim failed: $(tail -1 "$d/err")"
		continue
	fi
	# what where the jobs land alone does: ours with its idle time fixed at
	# 1 minute differs from the 1-minute timeout by nothing else (and by
	# its drain taking a tick)
	# shellcheck disable=SC2086
	if ! "$SIM" ${SIM_FLAGS:-} --power-config "$d/fixed.conf" --csv --timeouts 1m \
		--idle-watts "$7" --busy-watts "$8" --boot-time "$9" --boot-energy "${10}" \
		--wide "${11}" "$d/t.swf" >"$d/moved.csv" 2>"$d/err"; then
		echo "run $k: mxq-power-sim failed with idle_time = 1m: $(tail -1 "$d/err")"
		continue
	fi
	# the simulator's own verdict (on_front, dominated_by), as in
	# bench_policy_front.sh
	awk -F, -v run="$k" -v what="$*" '
	FILENAME ~ /moved/ { if ($2 == "mxq-policy") { me = $3; mw = $9 }
		else if ($2 == "timeout-1m") { te = $3; tw = $9 }
		next }
	{ e[$2] = $3; w[$2] = $9 }
	$2 == "mxq-policy" { of = $14; od = $15 }
	END {
		oe = e["mxq-policy"]; ow = w["mxq-policy"]
		printf "%3d %-7s energy %+7.3f%% wait %+10.1f s vs timeout-1m | %s", run,
			of == "yes" ? "on" : "BEHIND", (oe / e["timeout-1m"] - 1) * 100,
			ow - w["timeout-1m"], what
		if (of != "yes") {
			de = (oe - e[od]) / oe * 100; dw = ow - w[od]
			ne = (me > te ? me - te : te - me) / te * 100
			nw = mw > tw ? mw - tw : tw - mw
			printf " | better on both: %s, by %.3f%% and %.1f s; placement alone: %.3f%% and %.1f s%s",
				od, de, dw, ne, nw, (de > ne && dw > nw) ? " BEYOND" : ""
		}
		printf "\n"
	}' "$d/out.csv" "$d/moved.csv"
done | tee "$d/lines"
awk '{ b += ($2 == "BEHIND"); beyond += / BEYOND$/; e = $4 + 0; w = $6 + 0
	if (w < 100 && w > -100) { n++; se += e; sw += w } }
	END { printf "behind the front: %d of %d runs, %d of them by more than placement alone moves; mean vs timeout-1m over %d runs with waits under 100 s apart: energy %+.3f%%, wait %+.2f s\n",
		b, NR, beyond, n, n ? se / n : 0, n ? sw / n : 0 }' "$d/lines"
# every run printed its line (a failing generator ends the loop early)
[ "$(wc -l <"$d/lines")" -eq "$runs" ] && ! grep -q "mxq-power-sim failed" "$d/lines"
