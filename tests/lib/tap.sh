# tests/lib/tap.sh - TAP output for the integration tests (POSIX sh).
#
# Source it (tests/lib/mxqd.sh does); every test script then prints
# "ok N - ..." / "not ok N - ..." lines that tests/run.sh counts.
#
#   ok DESC / not_ok DESC / skip DESC     one result
#   check DESC CMD...                     passes when CMD succeeds
#   is DESC GOT WANT                      equal strings (a diff if not)
#   isnt DESC GOT UNWANTED                different strings
#   contains DESC TEXT NEEDLE             TEXT contains NEEDLE
#   not_contains DESC TEXT NEEDLE         TEXT does not contain NEEDLE
#   diag                                  stdin as TAP comment lines
#   tap_done                              the plan line "1..N"
#   tap_failed                            number of "not ok" so far
#   within A B PCT                        true when |A - B| <= PCT % of |B|
#                                         (B not 0): for check

tap_n=0
tap_failed=0
ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}
not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}
skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - # SKIP $*"
}
diag() {
	sed 's/^/#   /'
}
check() {
	_tap_desc=$1
	shift
	if "$@"; then ok "$_tap_desc"; else not_ok "$_tap_desc"; fi
}
is() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		_tap_dir=${MXQ_TEST_DIR:-${TMPDIR:-/tmp}}
		printf '%s\n' "$2" >"$_tap_dir/tap.got"
		printf '%s\n' "$3" >"$_tap_dir/tap.want"
		diff -u "$_tap_dir/tap.want" "$_tap_dir/tap.got" | head -n 40 | diag
	fi
}
isnt() {
	if [ "$2" != "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf 'got the unwanted value: %s\n' "$2" | diag
	fi
}
contains() {
	case $2 in
	*"$3"*) ok "$1" ;;
	*) not_ok "$1"; printf '%s\n' "expected to contain: $3" "$2" | head -n 40 | diag ;;
	esac
}
not_contains() {
	case $2 in
	*"$3"*) not_ok "$1"; printf '%s\n' "expected not to contain: $3" "$2" | head -n 40 | diag ;;
	*) ok "$1" ;;
	esac
}
tap_done() {
	echo "1..$tap_n"
}

within() {
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN {
		d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
		exit !(m > 0 && d <= m * p / 100) }'
}
