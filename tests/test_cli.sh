#!/bin/sh
# tests/test_cli.sh - the command-line conventions every tool shares.
#
# For each of mxqd mxqsub mxqdump mxqkill mxqadmin mxq-power-sim mxq-web: --version
# prints "TOOL VERSION" and exits 0, --help exits 0, a usage error (unknown
# option, missing value, stray argument, bad value) exits 2 with exactly one
# line on stderr naming the tool and nothing on stdout, a runtime error (no
# database defaults file) exits 1 with one line. Also: mxqd --check-config
# does not call a missing file ok; under a journal stream (JOURNAL_STREAM
# naming stderr) complaints carry the syslog priority "<3>"; the bash
# completion offers each tool's options and mxqadmin's commands; mxqadmin
# takes -M/-S after the command but not after --; --group goes through the
# shared id parser; mxqd and mxq-power-sim report a broken or oversized
# power.conf in the same words (one loader); power.conf(5) states every
# built-in default as it is.
#
# Needs no database. Prints TAP lines; exits non-zero when a check failed.

MXQ_SRC_DIR=${MXQ_SRC_DIR:-$(cd "$(dirname -- "$0")/.." && pwd -P)}
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
. "$MXQ_SRC_DIR/tests/lib/tap.sh"

dir=$(mktemp -d "${TMPDIR:-/tmp}/mxq-cli.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'rm -rf "$dir"; trap - EXIT; exit 130' INT
trap 'rm -rf "$dir"; trap - EXIT; exit 143' TERM
# nothing may reach a real database or configuration
MXQ_MYSQL_DEFAULT_FILE=$dir/absent.cnf
export MXQ_MYSQL_DEFAULT_FILE
version=$(sed -n 's/^VERSION := //p' "$MXQ_SRC_DIR/Makefile")

# exits DESC RC NEEDLE CMD...: CMD exits RC, prints nothing on stdout and
# exactly one line on stderr that starts with the tool's name and contains
# NEEDLE.
exits() {
	_desc=$1 _want=$2 _needle=$3
	shift 3
	"$@" >"$dir/out" 2>"$dir/err" </dev/null
	_rc=$?
	_tool=${1##*/}
	if [ "$_rc" = "$_want" ] && [ ! -s "$dir/out" ] && [ "$(wc -l <"$dir/err")" = 1 ] &&
	   grep -q "^$_tool: " "$dir/err" && grep -qF -- "$_needle" "$dir/err"; then
		ok "$_desc"
	else
		not_ok "$_desc"
		{ echo "exit $_rc (want $_want); stdout:"; cat "$dir/out"; echo "stderr:"; cat "$dir/err"; } | diag
	fi
}

for t in mxqd mxqsub mxqdump mxqkill mxqadmin mxq-power-sim mxq-web; do
	bin=$MXQ_BUILD_DIR/$t
	out=$("$bin" --version 2>&1); rc=$?
	is "$t --version: exit 0" "$rc" 0
	is "$t --version: one line, name and version" "$out" "$t $version"
	"$bin" --help >"$dir/help" 2>&1; rc=$?
	is "$t --help: exit 0" "$rc" 0
	exits "$t --no-such-option: usage error" 2 "'--no-such-option'" "$bin" --no-such-option
done

exits "mxqd: option without its value" 2 "needs a value" "$MXQ_BUILD_DIR/mxqd" --slots
exits "mxqd: bad value" 2 "--slots" "$MXQ_BUILD_DIR/mxqd" --slots many
exits "mxqd: stray argument" 2 "unexpected argument" "$MXQ_BUILD_DIR/mxqd" extra
exits "mxqsub: no command" 2 "no command" "$MXQ_BUILD_DIR/mxqsub"
exits "mxqsub: bad --runtime" 2 "--runtime" "$MXQ_BUILD_DIR/mxqsub" --runtime 3x true
exits "mxqdump: stray argument" 2 "unexpected argument" "$MXQ_BUILD_DIR/mxqdump" extra
exits "mxqkill: nothing to kill" 2 "--group-id" "$MXQ_BUILD_DIR/mxqkill"
exits "mxqadmin: option without its value" 2 "needs a value" "$MXQ_BUILD_DIR/mxqadmin" -M
exits "mxqadmin: no command" 2 "missing command" "$MXQ_BUILD_DIR/mxqadmin"
exits "mxqadmin: unknown command" 2 "unknown command" "$MXQ_BUILD_DIR/mxqadmin" frobnicate
exits "mxqadmin db: unknown action" 2 "unknown action" "$MXQ_BUILD_DIR/mxqadmin" db frobnicate
exits "mxqadmin power: unknown command" 2 "unknown command" "$MXQ_BUILD_DIR/mxqadmin" power frobnicate
exits "mxqadmin power events: bad --since" 2 "is not a time" \
	"$MXQ_BUILD_DIR/mxqadmin" power events --since yesterday
exits "mxqadmin power jobs: bad --since" 2 "is not a time" \
	"$MXQ_BUILD_DIR/mxqadmin" power jobs --since 90
exits "mxqadmin power job: option after the argument is still checked" 2 "unknown" \
	"$MXQ_BUILD_DIR/mxqadmin" power job 6 --frobnicate
exits "mxqadmin expr: syntax error" 2 "syntax error" "$MXQ_BUILD_DIR/mxqadmin" expr 'a &'
exits "mxq-power-sim: no trace" 2 "no trace" "$MXQ_BUILD_DIR/mxq-power-sim"
exits "mxq-web: option without its value" 2 "needs a value" "$MXQ_BUILD_DIR/mxq-web" --listen
exits "mxq-web: stray argument" 2 "unexpected argument" "$MXQ_BUILD_DIR/mxq-web" extra
exits "mxq-web: bad --threads" 2 "--threads" "$MXQ_BUILD_DIR/mxq-web" --threads 0
exits "mxqadmin: -M after the command still needs its value" 2 "needs a value" \
	"$MXQ_BUILD_DIR/mxqadmin" power list -M
exits "mxqadmin qualify --group: the shared id parser" 2 "--group: 'x' is not a positive number" \
	"$MXQ_BUILD_DIR/mxqadmin" qualify --group x
exits "mxqadmin power explain --group: the shared id parser" 2 \
	"--group: '0' is not a positive number" "$MXQ_BUILD_DIR/mxqadmin" power explain --group=0
exits "mxqadmin expr: unknown short option" 2 "unknown option '-q'" "$MXQ_BUILD_DIR/mxqadmin" expr -q a
exits "mxqadmin power usage: missing --to" 2 "--from T and --to T" \
	"$MXQ_BUILD_DIR/mxqadmin" power usage --from now
exits "mxqsub: option after the command's first word belongs to the command" 1 "absent.cnf" \
	"$MXQ_BUILD_DIR/mxqsub" true --no-such-option

# runtime errors: 1
for t in mxqsub mxqdump mxqkill mxqadmin; do
	case $t in
	mxqsub) args="true" ;; mxqkill) args="-g 1" ;; mxqadmin) args="db status" ;; *) args= ;;
	esac
	# shellcheck disable=SC2086
	exits "$t: missing defaults file is a runtime error" 1 "absent.cnf" "$MXQ_BUILD_DIR/$t" $args
done
exits "mxqadmin power job JOBID --json: options after arguments reach the database step" 1 \
	"absent.cnf" "$MXQ_BUILD_DIR/mxqadmin" power job 6 --json
out=$("$MXQ_BUILD_DIR/mxqadmin" expr -- -M 2>&1); rc=$?
is "mxqadmin: after -- a word like -M is an argument, not the global option" "$rc:$out" "0:false"
exits "mxqadmin: -M FILE after the command (GNU style) is taken" 1 "$dir/other.cnf" \
	"$MXQ_BUILD_DIR/mxqadmin" power list -M "$dir/other.cnf"
exits "mxqadmin: --mysql-default-file=FILE after the command is taken" 1 "$dir/other.cnf" \
	"$MXQ_BUILD_DIR/mxqadmin" qualify --group 1 --mysql-default-file="$dir/other.cnf"
exits "mxqadmin: -S GROUP after the command is taken" 1 "group [othergroup]" \
	"$MXQ_BUILD_DIR/mxqadmin" db status -S othergroup
exits "mxqd: missing defaults file is a runtime error" 1 "absent.cnf" \
	"$MXQ_BUILD_DIR/mxqd" --spool "$dir/spool" --tmpdir "$dir/tmp"
exits "mxq-web: missing defaults file is a runtime error, not a wait" 1 "absent.cnf" \
	"$MXQ_BUILD_DIR/mxq-web" --listen 127.0.0.1:1

# --check-config of a file that is not there
exits "mxqd --check-config: missing default file is not ok" 1 "nothing to check" \
	"$MXQ_BUILD_DIR/mxqd" --check-config --power-config "$dir/power.conf"
printf 'dry_run = yes\n' >"$dir/power.conf"
out=$("$MXQ_BUILD_DIR/mxqd" --check-config --power-config "$dir/power.conf" 2>&1); rc=$?
is "mxqd --check-config: an existing good file is ok" "$rc:$(printf '%s\n' "$out" | head -n 1)" "0:$dir/power.conf: ok"
check "mxqd --check-config: the shipped example parses" sh -c \
	'"$0" --check-config --power-config "$1" >/dev/null' "$MXQ_BUILD_DIR/mxqd" "$MXQ_SRC_DIR/etc/power.conf"

# one power.conf loader: mxqd and the simulator say the same about the same file
printf '%s\n' "# two errors" "idle_tim = 5m" "max_booting = two" >"$dir/bad.conf"
head -c 1100000 /dev/zero | tr '\0' '#' >"$dir/big.conf"
for f in bad big; do
	"$MXQ_BUILD_DIR/mxqd" --check-config --power-config "$dir/$f.conf" 2>&1 >/dev/null |
		sed 's/^mxqd: //' >"$dir/$f.mxqd"
	"$MXQ_BUILD_DIR/mxq-power-sim" --power-config "$dir/$f.conf" "$dir/absent.swf" 2>&1 >/dev/null |
		sed 's/^mxq-power-sim: //' >"$dir/$f.sim"
	check "power.conf loader: mxqd and mxq-power-sim report $f.conf alike" \
		sh -c 'test -s "$0" && cmp -s "$0" "$1"' "$dir/$f.mxqd" "$dir/$f.sim"
done
contains "power.conf loader: one line per error, file:line" "$(cat "$dir/bad.sim")" "$dir/bad.conf:3:"
is "power.conf loader: two errors, two lines" "$(wc -l <"$dir/bad.sim" | tr -d ' ')" 2
contains "power.conf loader: the one size limit" "$(cat "$dir/big.sim")" "big.conf"

# journal priorities: stderr is the journal when JOURNAL_STREAM names it
: >"$dir/journal"
JOURNAL_STREAM=$(stat -L -c '%d:%i' "$dir/journal") \
	"$MXQ_BUILD_DIR/mxqd" --no-such-option 2>>"$dir/journal"
is "journal stream: the complaint has priority <3>" "$(cat "$dir/journal")" \
	"<3>mxqd: unknown option '--no-such-option' (try 'mxqd --help')"
: >"$dir/journal"
JOURNAL_STREAM=1:1 "$MXQ_BUILD_DIR/mxqsub" --no-such-option 2>>"$dir/journal"
contains "JOURNAL_STREAM naming another file: no prefix" "$(cat "$dir/journal")" "mxqsub: unknown"

# man pages: one footer, with the version the tools print
for m in "$MXQ_SRC_DIR"/manpages/*.[1578]; do sed -n '/^\.TH/{s/^\.TH [^ ]* [0-9] //p;q}' "$m"; done |
	sort -u >"$dir/feet"
is "man pages: one footer, with the version" "$(cat "$dir/feet")" "\"2026\" \"mxq $version\" \"MXQ batch system\""
for sec in 'power usage' 'power jobs' 'power metrics' 'list \[\\-\\-json\] \[\\-\\-watch'; do
	check "mxqadmin(8) documents $sec" grep -q "^\.SS.*$sec" "$MXQ_SRC_DIR/manpages/mxqadmin.8"
done
for k in ipmi_user ipmi_password ssh_user ssh_key ssh_known_hosts; do
	check "power.conf(5) documents the secrets key $k" grep -q "^\.B $k\$" "$MXQ_SRC_DIR/manpages/power.conf.5"
done
check "mysql.cnf(5) exists" test -f "$MXQ_SRC_DIR/manpages/mysql.cnf.5"

# bash completion (bash-completion installed)
if [ -r /usr/share/bash-completion/bash_completion ] && command -v bash >/dev/null; then
	cat >"$dir/comp.bash" <<'EOS'
. /usr/share/bash-completion/bash_completion
. "$1"
PATH=$2:$PATH
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
	COMPREPLY=(); _mxq_complete; echo "${COMPREPLY[*]}"; }
comp mxqadmin po
comp mxqadmin power ev
comp mxqadmin power events --si
comp mxqsub --thr
comp mxqd --check-c
comp mxqdump --vers
comp mxqkill --group-i
comp mxq-power-sim --ti
comp mxq-web --lis
comp mxqadmin db sch
EOS
	out=$(bash "$dir/comp.bash" "$MXQ_SRC_DIR/bash-completion/mxq" "$MXQ_BUILD_DIR" 2>&1)
	is "bash completion: commands and options of every tool" "$out" "power
events
--since
--threads
--check-config
--version
--group-id
--tick --timeout-scan --timeouts
--listen
schema"
else
	not_ok "bash completion: /usr/share/bash-completion/bash_completion missing (package bash-completion)"
fi

# power.conf(5) states each knob's default ("Default:" then the value on the
# next line); the built-in defaults, as the simulator prints the policy it
# ran, must say the same (a zero duration reads "0" in the page, "0s" here).
printf '; MaxNodes: 1\n; MaxProcs: 1\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 1 -1 -1\n' >"$dir/one.swf"
"$MXQ_BUILD_DIR/mxq-power-sim" --json "$dir/one.swf" 2>/dev/null |
	sed -n 's/^ *"power_config": "\(.*\)",$/\1/p' | sed 's/\\n/\n/g' |
	sed -n 's/^\([a-z_]*\) = \(..*\)$/\1 \2/p' | sed 's/ 0s$/ 0/' | sort >"$dir/built-in"
awk '/^\.BI [a-z_]+ /{k=$2} /^Default:$/{getline; sub(/^\.BR? /, ""); sub(/ \.$/, ""); print k, $0}' \
	"$MXQ_SRC_DIR/manpages/power.conf.5" | sort >"$dir/documented"
check "power.conf(5): the built-in defaults were read" test "$(wc -l <"$dir/built-in")" -ge 20
is "power.conf(5) states every built-in default as it is" "$(cat "$dir/documented")" "$(cat "$dir/built-in")"

tap_done
[ "$tap_failed" = 0 ]
