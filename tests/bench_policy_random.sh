#!/bin/sh
# bench_policy_random.sh - our power policy against the sweep of fixed idle
# timeouts on random configurations nobody tuned on: each run draws a
# synthetic trace (tests/gen_swf.sh: seed, 15-40 days, 8-100 hosts of 1-48
# cores, 2-15 jobs per host and day, steady, bursty or wide, wide ones
# sometimes split) and the cluster's power figures (idle 50-250 W, busy
# +50-300 W, boot 1-10 min and 10-120 kJ). One line per run: ours against
# the 1-minute timeout (energy in %, mean wait in s) and whether ours lies on
# or beyond the timeouts' front, or the first timeout better on both; then the
# count of runs behind and the mean differences over the runs whose mean
# waits are under 100 s apart (overloaded clusters, where waits of days
# swamp everything, are left out of the means). Deterministic for a given
# SEED. Prints figures only; exits 1 when a simulation fails.
#
# usage: sh tests/bench_policy_random.sh [RUNS [SEED]]   (default: 40 1000)
# env: SIM (./mxq-power-sim), SIM_FLAGS (e.g. "--power-config FILE")
set -eu
SIM=${SIM:-./mxq-power-sim}
GEN="$(dirname "$0")/gen_swf.sh"
runs=${1:-40}
seed=${2:-1000}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT INT TERM

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
	# the simulator's own verdict (on_front, dominated_by), as in
	# bench_policy_front.sh
	awk -F, -v run="$k" -v what="$*" '
	$2 == "timeout-1m" { te = $3; tw = $9 }
	$2 == "mxq-policy" { oe = $3; ow = $9; of = $14; od = $15 }
	END {
		printf "%3d %-7s energy %+7.3f%% wait %+10.1f s vs timeout-1m | %s%s\n", run,
			of == "yes" ? "on" : "BEHIND", (oe / te - 1) * 100, ow - tw, what,
			of == "yes" ? "" : " | better on both: " od
	}' "$d/out.csv"
done | tee "$d/lines"
awk '{ b += ($2 == "BEHIND"); e = $4 + 0; w = $6 + 0
	if (w < 100 && w > -100) { n++; se += e; sw += w } }
	END { printf "behind the front: %d of %d runs; mean vs timeout-1m over %d runs with waits under 100 s apart: energy %+.3f%%, wait %+.2f s\n",
		b, NR, n, n ? se / n : 0, n ? sw / n : 0 }' "$d/lines"
# every run printed its line (a failing generator ends the loop early)
[ "$(wc -l <"$d/lines")" -eq "$runs" ] && ! grep -q "mxq-power-sim failed" "$d/lines"
