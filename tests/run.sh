#!/bin/sh
# tests/run.sh - run the integration tests.
#
#   sh tests/run.sh [TEST...]     default: every tests/test_*.sh
#
# Each test runs in its own process (bash for a bash shebang, else sh),
# with a time limit (MXQ_TEST_TIMEOUT seconds, default 600), and prints TAP
# lines ("ok N - ...", "not ok N - ..."). A test that exits non-zero, or
# prints no result at all, counts as one more failure. The last line is
# "N passed, N failed"; the exit status is non-zero when anything failed.
#
# A pristine MariaDB datadir is installed once per run and shared as a
# template (MXQ_TEST_DB_TEMPLATE); each test copies it. It is removed at
# the end, also on INT/TERM.

MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd -P) || exit 2
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"

if [ $# -gt 0 ]; then
	tests=
	for t in "$@"; do
		case $t in
		*/*) ;;
		*) t=$MXQ_SRC_DIR/tests/$t ;;
		esac
		[ -f "$t" ] || [ ! -f "$t.sh" ] || t=$t.sh
		if [ ! -f "$t" ]; then
			echo "run.sh: no such test: $t" >&2
			exit 2
		fi
		tests="$tests $t"
	done
else
	tests=$(ls "$MXQ_SRC_DIR"/tests/test_*.sh 2>/dev/null)
fi

run_dir=$(mktemp -d "${TMPDIR:-/tmp}/mxq-run.XXXXXX") || exit 2
cleanup() {
	rm -rf "$run_dir"
}
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT
trap 'cleanup; trap - EXIT; exit 143' TERM

MXQ_TEST_DB_TEMPLATE=$run_dir/datadir
export MXQ_TEST_DB_TEMPLATE
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac
if ! mxq_db_template_build "$MXQ_TEST_DB_TEMPLATE"; then
	echo "run.sh: cannot install the MariaDB template datadir" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

timeout=${MXQ_TEST_TIMEOUT:-600}
passed=0
failed=0
failed_names=

for t in $tests; do
	name=${t##*/}
	log=$run_dir/$name.log
	echo "# $name"
	t0=$(date +%s)
	case $(head -n 1 "$t") in
	'#!'*bash*) interp=bash ;;
	*) interp='sh' ;;
	esac
	if command -v timeout >/dev/null 2>&1; then
		timeout --foreground -k 10 "$timeout" "$interp" "$t" </dev/null >"$log" 2>&1
	else
		"$interp" "$t" </dev/null >"$log" 2>&1
	fi
	rc=$?
	cat "$log"
	p=$(grep -c '^ok' "$log")
	f=$(grep -c '^not ok' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ]; then
			echo "not ok - $name timed out after ${timeout}s"
		else
			echo "not ok - $name exited with status $rc"
		fi
		f=1
	elif [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name reported no results"
		f=1
	fi
	echo "# $name: $p passed, $f failed, $(( $(date +%s) - t0 )) s"
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ] || failed_names="$failed_names $name"
done

[ -z "$failed_names" ] || echo "# failed:$failed_names"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
