#!/bin/sh
# tests/test_sim_input.sh - mxq-power-sim refuses bad traces with one clear
# line and exit status 2, writes nothing to stdout then, and takes what it
# can: an empty file, a header-only file, a trace whose jobs are all
# skipped, a trace without a header and no --nodes/--cores, a window with
# no job; a line with more than 18 fields gives one warning and runs.
# No database, no daemons: only the simulator on tiny hand-made traces.
#
# Prints TAP lines; exits non-zero when any check failed.

MXQ_SRC_DIR=${MXQ_SRC_DIR:-$(cd "$(dirname -- "$0")/.." && pwd -P)}
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
. "$MXQ_SRC_DIR/tests/lib/tap.sh"

sim=$MXQ_BUILD_DIR/mxq-power-sim
dir=$(mktemp -d "${TMPDIR:-/tmp}/mxq-sim-input.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
trap 'exit 1' INT TERM

job() { # number submit run procs
	echo "$1 $2 -1 $3 $4 -1 -1 $4 $3 -1 1 1 1 -1 -1 -1 -1 -1"
}
header='; MaxNodes: 4
; MaxProcs: 4'

# refused CASE FILE NEEDLE [OPTIONS...]: exit 2, one stderr line with NEEDLE,
# empty stdout
refused() {
	_case=$1 _file=$2 _needle=$3
	shift 3
	"$sim" --threads 1 "$@" "$_file" >"$dir/out" 2>"$dir/err"
	_rc=$?
	is "$_case: exit 2" "$_rc" 2
	is "$_case: one line on stderr" "$(wc -l <"$dir/err" | tr -d ' ')" 1
	contains "$_case: says why" "$(cat "$dir/err")" "$_needle"
	is "$_case: nothing on stdout" "$(wc -c <"$dir/out" | tr -d ' ')" 0
}

: >"$dir/empty.swf"
refused "empty file" "$dir/empty.swf" "no job lines"

printf '%s\n' "$header" >"$dir/header.swf"
refused "header only" "$dir/header.swf" "no job lines"

{ printf '%s\n' "$header"; job 1 0 0 1; job 2 5 -1 1; job 3 9 30 0; } >"$dir/skipped.swf"
refused "all jobs skipped" "$dir/skipped.swf" "all 3 job lines were skipped"

{ job 1 0 30 1; job 2 5 30 2; } >"$dir/noheader.swf"
refused "no header" "$dir/noheader.swf" "--nodes N --cores N"
refused "no header, --nodes only" "$dir/noheader.swf" "--nodes N --cores N" --nodes 2

{ printf '%s\n' "$header"; job 1 0 30 1; job 2 5 30 8; } >"$dir/window.swf"
refused "empty window" "$dir/window.swf" "no job to simulate" --skip-days 1

"$sim" --threads 1 --nodes 2 --cores 2 --timeouts 1m "$dir/noheader.swf" >"$dir/out" 2>"$dir/err"
is "no header with --nodes --cores: runs" "$?" 0
contains "no header with --nodes --cores: 2 nodes x 2 cores" "$(cat "$dir/out")" "2 nodes x 2 cores"

{ printf '%s\n' "$header"; job 1 0 30 1 | sed 's/$/ 7 8/'; job 2 5 30 1 | sed 's/$/ 9/'; } \
	>"$dir/extra.swf"
"$sim" --threads 1 --timeouts 1m "$dir/extra.swf" >"$dir/out" 2>"$dir/err"
is "extra fields: runs" "$?" 0
is "extra fields: one warning" "$(wc -l <"$dir/err" | tr -d ' ')" 1
contains "extra fields: the warning says so" "$(cat "$dir/err")" "2 job lines have more than 18 fields"
contains "extra fields: both jobs simulated" "$(cat "$dir/out")" "2 jobs simulated"

tap_done
[ "$tap_failed" -eq 0 ]
