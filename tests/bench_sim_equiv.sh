#!/bin/sh
# bench_sim_equiv.sh - prove that the simulator's shortcuts change no figure:
# every trace is simulated with the default (ticks skipped while nothing can
# change) and with --every-tick (the policy asked at every tick), and the
# JSON documents must be byte-identical, except for the speed figures. With
# REF=PATH (an mxq-power-sim built from another commit) the default run is
# also compared with that binary's --every-tick run (its exact answer: the
# tick skipping of builds before next_change_at was not exact on the HPC2N
# traces). Exit 1 when any trace differs.
#
# usage: sh tests/bench_sim_equiv.sh [TRACE...]
#   default traces: the shipped ones (TRACES_DIR, ../shared/traces) and
#   synthetic ones from tests/gen_swf.sh
# env: SIM (./mxq-power-sim), REF, SIM_FLAGS (extra options, e.g. --days 30)
set -eu
SIM=${SIM:-./mxq-power-sim}
TRACES_DIR=${TRACES_DIR:-../shared/traces}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT INT TERM
if [ $# -eq 0 ]; then
	for t in "$TRACES_DIR"/*.swf.gz; do [ -e "$t" ] && set -- "$@" "$t"; done
	for g in "11 30 64 1 300 steady" "12 20 32 4 600 bursty" "13 20 128 2 1500 wide" \
		 "14 10 600 1 2500 wide"; do
		f="$d/gen-$(echo "$g" | tr ' ' _).swf"
		# shellcheck disable=SC2086
		sh "$(dirname "$0")/gen_swf.sh" $g >"$f"
		set -- "$@" "$f"
	done
fi
# the figures of the run itself (CPU, memory, how often the policy was asked)
strip() { sed -e '/"speed": {/,$d' "$1" | grep -v -e '"cpu_s"' -e '"decisions"' \
	-e '"quiet_ticks_skipped"'; }
fail=0
for t in "$@"; do
	# shellcheck disable=SC2086
	"$SIM" ${SIM_FLAGS:-} --json --threads 1 "$t" >"$d/skip.json"
	# shellcheck disable=SC2086
	"$SIM" ${SIM_FLAGS:-} --json --threads 1 --every-tick "$t" >"$d/every.json"
	strip "$d/skip.json" >"$d/a"; strip "$d/every.json" >"$d/b"
	if cmp -s "$d/a" "$d/b"; then r="identical to --every-tick"
	else r="DIFFERS from --every-tick"; fail=1; diff "$d/a" "$d/b" | head -20; fi
	if [ -n "${REF:-}" ]; then
		# shellcheck disable=SC2086
		"$REF" ${SIM_FLAGS:-} --json --threads 1 --every-tick "$t" >"$d/ref.json"
		strip "$d/ref.json" >"$d/c"
		if cmp -s "$d/a" "$d/c"; then r="$r, identical to REF --every-tick"
		else r="$r, DIFFERS from REF --every-tick"; fail=1; diff "$d/a" "$d/c" | head -20; fi
	fi
	echo "$(basename "$t"): $(wc -c <"$d/a") bytes of figures, $r"
done
exit $fail
