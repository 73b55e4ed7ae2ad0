#!/bin/sh
# bench_policy_front.sh - where our power policy lies against the sweep of
# fixed idle timeouts, on traces it was not tuned on and on the shipped
# ones: synthetic traces from tests/gen_swf.sh (several seeds, sizes, core
# counts and shapes, a nearly full 16-core cluster with gangs, mixed
# clusters of 64-core and 12-core hosts), the
# shipped KTH and HPC2N-slice traces with wide jobs split into one-host
# jobs (MXQ's own workload), and the three shipped traces as they are.
# One line per run: the fixed timeout using the least energy and ours
# (energy, mean wait, captured share of the saving) and whether ours lies
# on or beyond the timeouts' front. The figures of power.conf(5) "HOW THE
# DEFAULTS WERE CHOSEN" come from here. Prints figures only; exits 1 when
# a simulation fails, never for a policy result.
#
# usage: sh tests/bench_policy_front.sh [NAME...]   (default: every run)
# env: SIM (./mxq-power-sim), TRACES_DIR (../shared/traces), SIM_FLAGS
set -eu
SIM=${SIM:-./mxq-power-sim}
TRACES_DIR=${TRACES_DIR:-../shared/traces}
GEN="$(dirname "$0")/gen_swf.sh"
MIXED="--class name=big,count=10,cores=64 --class name=small,count=40,cores=12"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT INT TERM

# NAME|generator arguments, or @file in TRACES_DIR|simulator options
runs() {
	cat <<EOF
bursty16|3 60 50 16 400 bursty|
mixed64|4 60 50 64 300 steady|$MIXED
mixed12|4 60 50 12 600 steady|$MIXED
kth-split|@KTH-SP2-1996-2.1-cln.swf.gz|--wide split
steady1|5 60 100 1 500 steady|
bursty8|6 45 64 8 800 bursty|
wide2|7 40 128 2 200 wide|
bursty32|8 60 30 32 300 bursty|
wide4-split|9 40 200 4 300 wide|--wide split
mixed-bursty|10 60 50 24 800 bursty|$MIXED
alea-split|@alea-hpc2n.swf.gz|--wide split
steady12|11 60 40 12 500 steady|
bursty16-s21|21 60 50 16 400 bursty|
bursty16-s22|22 60 50 16 400 bursty|
bursty16-s23|23 60 50 16 400 bursty|
bursty16-s24|24 60 50 16 400 bursty|
bursty8-s31|31 45 64 8 800 bursty|
bursty8-s32|32 45 64 8 800 bursty|
steady12-s41|41 60 40 12 500 steady|
steady12-s42|42 60 40 12 500 steady|
mixed-bursty-s51|51 60 50 24 500 bursty|$MIXED
mixed-bursty-s52|52 60 50 24 500 bursty|$MIXED
bursty1|61 40 80 1 400 bursty|
wide4-split-s71|71 40 100 4 250 wide|--wide split
wide16-busy|81 30 200 16 420 wide|
HPC2N|@HPC2N-2002-2.1-cln.swf.gz|
KTH|@KTH-SP2-1996-2.1-cln.swf.gz|
alea|@alea-hpc2n.swf.gz|
EOF
}

wanted() {
	[ $# -le 1 ] && return 0
	n=$1; shift
	for w in "$@"; do [ "$w" = "$n" ] && return 0; done
	return 1
}

printf '%-17s %-11s %12s %9s %6s | %12s %9s %6s  %s\n' run best-fixed "energy kWh" \
	"wait s" capt "ours kWh" "wait s" capt front
fail=0
runs | while IFS='|' read -r name src opts; do
	wanted "$name" "$@" || continue
	case $src in
	@*)	t="$TRACES_DIR/${src#@}"
		if [ ! -e "$t" ]; then echo "$name: $t not found, skipped"; continue; fi ;;
	*)	t="$d/$name.swf"
		# shellcheck disable=SC2086
		sh "$GEN" $src >"$t" ;;
	esac
	# shellcheck disable=SC2086
	if ! "$SIM" ${SIM_FLAGS:-} --csv $opts "$t" >"$d/out.csv" 2>"$d/err"; then
		echo "$name: mxq-power-sim failed: $(tail -1 "$d/err")"
		echo 1 >"$d/failed"
		continue
	fi
	awk -F, -v name="$name" '
		$2 ~ /^timeout-/ && (best == "" || $3 + 0 < be) { best = $2; be = $3 + 0; bw = $9; bc = $13 }
		$2 == "mxq-policy" { oe = $3 + 0; ow = $9; oc = $13; of = $14; od = $15 }
		END {
			printf "%-17s %-11s %12.2f %9.0f %5.1f%% | %12.2f %9.0f %5.1f%%  %s%s\n",
				name, best, be, bw, 100 * bc, oe, ow, 100 * oc,
				of == "yes" ? "on or beyond" : "behind", od != "" ? " (" od ")" : ""
		}' "$d/out.csv"
done
[ ! -e "$d/failed" ] || fail=1
exit $fail
