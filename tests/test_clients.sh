#!/bin/sh
# tests/test_clients.sh - mxqsub, mxqdump and mxqkill against a private
# MariaDB (tests/lib/mariadb.sh).
#
# Covers: what mxqsub stores (paths, argv encoding, units, attributes),
# grouping (equal attributes join, different ones split, cancelled groups
# are not reused, other users never share), that every bad input is one
# line on stderr, a non-zero exit and no new rows, mxqdump's table and JSON,
# and mxqkill on queued and running jobs, on whole groups, and by a user who
# does not own the group (run as nobody via setpriv when we are root).
# Upstream MXQ's options: mxqsub -g ID (joins exactly that group; a foreign,
# cancelled, closed or mismatching group is refused with exit 1 and nothing
# written), -n, -r, -v/--debug/-D and the deprecated long spellings; mxqdump
# -a, -u without a name, --groups and the status options -q/-r/-f/-F/-K/-C/-U
# for jobs and for groups.
#
# Prints TAP lines; exits non-zero when any check failed.

. "$(dirname -- "$0")/lib/mariadb.sh"

mxqsub=$MXQ_BUILD_DIR/mxqsub
mxqdump=$MXQ_BUILD_DIR/mxqdump
mxqkill=$MXQ_BUILD_DIR/mxqkill

# ------------------------------------------------------------------ TAP

. "$MXQ_SRC_DIR/tests/lib/tap.sh"

# ------------------------------------------------------------- helpers

# Value of KEY= in mxqsub output $1.
field() {
	printf '%s\n' "$1" | sed -n "s/^$2=//p"
}

row_counts() {
	mxq_sql "SELECT (SELECT COUNT(*) FROM mxq_group), (SELECT COUNT(*) FROM mxq_job)"
}

# rejects DESC NEEDLE CMD...: CMD must exit non-zero, print exactly one line
# on stderr starting with the program name and containing NEEDLE, print
# nothing on stdout, and leave the tables as they were.
rejects() {
	_desc=$1
	_needle=$2
	shift 2
	_before=$(row_counts)
	"$@" >"$work/out" 2>"$work/err"
	_rc=$?
	_after=$(row_counts)
	_lines=$(wc -l <"$work/err" | tr -d ' ')
	_err=$(cat "$work/err")
	_prog=
	for _a in "$@"; do
		case ${_a##*/} in mxq*) _prog=${_a##*/}; break ;; esac
	done
	if [ "$_rc" -ne 0 ] && [ "$_lines" = 1 ] && [ ! -s "$work/out" ] &&
		[ "$_before" = "$_after" ]; then
		case $_err in
		"$_prog: "*"$_needle"*) ok "$_desc"; return 0 ;;
		esac
	fi
	not_ok "$_desc"
	{
		echo "exit status $_rc, $_lines stderr lines, rows before/after: $_before / $_after"
		echo "expected '$_prog: ...$_needle...'"
		cat "$work/err" "$work/out"
	} | diag
	return 1
}

# submit ARGS...: run mxqsub, keep its output in $sub_out, ids in $gid/$jid.
submit() {
	sub_out=$("$mxqsub" "$@" 2>"$work/err")
	sub_rc=$?
	gid=$(field "$sub_out" mxq_group_id)
	jid=$(field "$sub_out" mxq_job_id)
	if [ "$sub_rc" -ne 0 ]; then
		printf 'mxqsub %s failed (%s):\n' "$*" "$sub_rc" | diag
		diag <"$work/err"
	fi
}

# A place for the unprivileged user, outside the 0700 test directory.
shared=
mxq_test_cleanup_hook() {
	[ -n "$shared" ] && rm -rf "$shared"
	return 0
}

# ---------------------------------------------------------------- start

if ! mxq_db_start; then
	not_ok "start a private MariaDB with the MXQ schema"
	exit 1
fi
work=$MXQ_TEST_DIR/work
mkdir "$work" "$work/sub" || exit 1
cd "$work" || exit 1
here=$(pwd -P)

# ------------------------------------------------------------ submitting

submit sleep 1
is "mxqsub succeeds" "$sub_rc" 0
case $sub_out in
mxq_group_id=[0-9]*"
mxq_group_name=default
mxq_job_id="[0-9]*) ok "mxqsub prints group id, group name and job id" ;;
*) not_ok "mxqsub prints group id, group name and job id"; printf '%s\n' "$sub_out" | diag ;;
esac
first_gid=$gid
first_jid=$jid

is "job row: workdir is the current directory, argc, stdout/stderr default" \
	"$(mxq_sql "SELECT job_workdir, job_argc, job_stdout, job_stderr, job_status
		FROM mxq_job WHERE job_id = $jid")" \
	"$(printf '%s\t2\t/dev/null\t/dev/null\t0' "$here")"
is "job_argv uses the upstream encoding (arg, backslash, '0')" \
	"$(mxq_sql "SELECT job_argv = CONCAT('sleep', CHAR(92), '0', '1', CHAR(92), '0')
		FROM mxq_job WHERE job_id = $jid")" 1
is "group row: defaults (name, command, threads, memory, time, priority, owner)" \
	"$(mxq_sql "SELECT group_name, job_command, job_threads, job_memory, job_time,
		group_priority, user_uid, user_name, group_jobs_inq
		FROM mxq_group WHERE group_id = $gid")" \
	"$(printf 'default\tsleep\t1\t2048\t15\t127\t%s\t%s\t1' "$(id -u)" "$(id -un)")"

submit sleep 2
is "equal attributes join the same group" "$gid" "$first_gid"
is "the group counts both queued jobs (trigger)" \
	"$(mxq_sql "SELECT group_jobs, group_jobs_inq FROM mxq_group WHERE group_id = $gid")" \
	"$(printf '2\t2')"

submit -m 1G sleep 2
isnt "different memory makes a new group" "$gid" "$first_gid"
mem_gid=$gid
submit --memory 1024 sleep 3
is "1G and 1024 are the same memory, same group" "$gid" "$mem_gid"

submit -N other sleep 1
isnt "a different group name makes a new group" "$gid" "$first_gid"
is "the new group's name is printed" "$(field "$sub_out" mxq_group_name)" other
submit -N Other sleep 1
other_gid=$(mxq_sql "SELECT group_id FROM mxq_group WHERE BINARY group_name = 'other'")
isnt "group names are compared case-sensitively" "$gid" "$other_gid"

submit --tags "b a a" true
tags_gid=$gid
submit --tags "a  b" true
is "tags are a set: order and repetition do not split groups" "$gid" "$tags_gid"
is "tags are stored canonically" \
	"$(mxq_sql "SELECT tags FROM mxq_group WHERE group_id = $gid")" "a b"

submit /bin/echo hi
is "command alias defaults to COMMAND as given (as upstream mxqsub stores it)" \
	"$(mxq_sql "SELECT job_command FROM mxq_group WHERE group_id = $gid")" /bin/echo
submit -a myalias /bin/echo hi
is "--command-alias sets job_command" \
	"$(mxq_sql "SELECT job_command FROM mxq_group WHERE group_id = $gid")" myalias

submit -j 4 -m 1G512M -t 1h30m --tmpdir 500M --gpu --max-jobs-per-node 2 -P 200 \
	--prerequisites '(a | b) & !c' --whitelist "n2 n1" --blacklist n3 true
is "resource options are stored in their units" \
	"$(mxq_sql "SELECT job_threads, job_memory, job_time, job_tmpdir_size, job_gpu,
		job_max_per_node, group_priority, prerequisites, group_whitelist, group_blacklist
		FROM mxq_group WHERE group_id = $gid")" \
	"$(printf '4\t1536\t90\t1\t1\t2\t200\t(a | b) & !c\tn1 n2\tn3')"
submit --processors 4 -m 1.5G -t 90 --tmpdir 1 --gpu --max-jobs-per-node 2 -P 200 \
	--prerequisites '(a | b) & !c' --whitelist "n1 n2" --blacklist n3 true
res_gid=$(mxq_sql "SELECT group_id FROM mxq_group WHERE job_threads = 4 ORDER BY group_id LIMIT 1")
is "the same resources spelled differently join that group" "$gid" "$res_gid"

submit -w sub -o out.txt -u 027 -p 300 sleep 1
is "relative stdout is relative to the workdir; stderr follows stdout; umask octal" \
	"$(mxq_sql "SELECT job_workdir, job_stdout, job_stderr, job_umask, job_priority
		FROM mxq_job WHERE job_id = $jid")" \
	"$(printf '%s/sub\t%s/sub/out.txt\t%s/sub/out.txt\t23\t300' "$here" "$here" "$here")"
submit -w "$here/sub/" -o ./a/../b.txt -e /tmp/err.txt sleep 1
is "paths are stored absolute and tidied; an absolute stderr is kept" \
	"$(mxq_sql "SELECT job_workdir, job_stdout, job_stderr FROM mxq_job WHERE job_id = $jid")" \
	"$(printf '%s/sub\t%s/sub/a/../b.txt\t/tmp/err.txt' "$here" "$here")"

printf '#!/bin/sh\nexit 0\n' >"$work/callback.sh"
chmod 755 "$work/callback.sh"
submit --callback "$work/callback.sh" true
is "--callback stores the executable" \
	"$(mxq_sql "SELECT job_callback FROM mxq_job WHERE job_id = $jid")" "$work/callback.sh"

# awkward arguments survive the round trip through job_argv and mxqdump
submit printf '%s|' 'back\slash' '' 'two  spaces' 'tr\\ailing\' '\0'
argv_jid=$jid
got=$("$mxqdump" --jobs --job-id "$argv_jid" --json | python3 -c '
import json, sys
print(json.dumps(json.load(sys.stdin)[0]["job_argv"]))')
is "argv with backslashes and empty arguments round-trips" "$got" \
	'["printf", "%s|", "back\\slash", "", "two  spaces", "tr\\\\ailing\\", "\\0"]'
is "job_argc counts empty arguments" \
	"$(mxq_sql "SELECT job_argc FROM mxq_job WHERE job_id = $argv_jid")" 7

# options after COMMAND belong to the command
submit sh -c 'exit 0' -m 12X
is "options after COMMAND are the command's arguments" "$sub_rc" 0

# environment fallback for the defaults group, -S overrides
MXQ_MYSQL_DEFAULT_GROUP=mxqd "$mxqsub" true >/dev/null 2>&1
is "MXQ_MYSQL_DEFAULT_GROUP is honoured" "$?" 0

# ------------------------------------------------------------ bad input

printf 'not executable\n' >"$work/plain.sh"
chmod 644 "$work/plain.sh"
printf '[mxqclient]\nhost=127.0.0.1\nport=1\nprotocol=TCP\nuser=nobody\npassword=x\n' \
	>"$work/unreachable.cnf"

rejects "unknown long option" "--bogus" "$mxqsub" --bogus true
rejects "unknown short option" "'-x'" "$mxqsub" -x true
rejects "option without its value" "-m" "$mxqsub" -m
rejects "no command" "no command" "$mxqsub" -m 1G
rejects "bad memory 12X" "--memory: '12X'" "$mxqsub" -m 12X true
rejects "memory with a blank" "--memory" "$mxqsub" -m "1 G" true
rejects "memory too large" "too large" "$mxqsub" -m 99999999999999999999T true
rejects "zero memory" "--memory" "$mxqsub" -m 0 true
rejects "bad runtime abc" "--runtime: 'abc'" "$mxqsub" -t abc true
rejects "runtime with upper-case unit" "--runtime" "$mxqsub" -t 1H true
rejects "bad tmpdir" "--tmpdir" "$mxqsub" --tmpdir 5X true
rejects "zero threads" "--threads" "$mxqsub" -j 0 true
rejects "negative priority" "--priority" "$mxqsub" -p -1 true
rejects "non-octal umask" "--umask" "$mxqsub" -u 0789 true
rejects "workdir that does not exist" "--workdir" "$mxqsub" -w "$work/nonexistent" true
rejects "workdir that is a file" "not a directory" "$mxqsub" -w "$work/plain.sh" true
rejects "callback not absolute" "not an absolute path" "$mxqsub" --callback callback.sh true
rejects "callback not executable" "not executable" "$mxqsub" --callback "$work/plain.sh" true
rejects "callback missing" "--callback" "$mxqsub" --callback "$work/none.sh" true
rejects "callback is a directory" "not a regular file" "$mxqsub" --callback "$work" true
# the rule mxqd applies before it runs one (mx_file_check_safe), said at submit
printf '#!/bin/sh\nexit 0\n' >"$work/cb-gw.sh"
chmod 775 "$work/cb-gw.sh"
rejects "group-writable callback" "writable by its group" "$mxqsub" --callback "$work/cb-gw.sh" true
mkdir -m 755 "$work/cbdir" && cp "$work/callback.sh" "$work/cbdir/cb.sh" && chmod 777 "$work/cbdir"
rejects "callback in a directory anyone can write" "writable by others" \
	"$mxqsub" --callback "$work/cbdir/cb.sh" true
chmod 755 "$work/cbdir"
rejects "prerequisites syntax error 'a &'" "--prerequisites: " \
	"$mxqsub" --prerequisites 'a &' true
rejects "prerequisites unbalanced" "--prerequisites: " "$mxqsub" --prerequisites '(a' true
rejects "empty group name" "--group-name" "$mxqsub" -N '' true
rejects "defaults file missing" "$work/none.cnf" "$mxqsub" -M "$work/none.cnf" true
rejects "unreachable database names the file" "$work/unreachable.cnf" \
	"$mxqsub" -M "$work/unreachable.cnf" true
rejects "unreachable database names the group" "[mxqclient]" \
	"$mxqsub" -M "$work/unreachable.cnf" true
rejects "mxqdump: unknown option" "--bogus" "$mxqdump" --bogus
rejects "mxqdump: unknown status" "'SLEEPING'" "$mxqdump" --jobs --status SLEEPING
rejects "mxqdump: bad group id" "--group-id" "$mxqdump" -g x
rejects "mxqdump: unreachable database" "$work/unreachable.cnf" \
	"$mxqdump" -M "$work/unreachable.cnf"
rejects "mxqkill: neither group nor job" "exactly one" "$mxqkill"
rejects "mxqkill: both group and job" "exactly one" "$mxqkill" -g 1 -J 1
rejects "mxqkill: bad job id" "--job-id" "$mxqkill" -J 0
rejects "mxqkill: unknown group" "no group 999999" "$mxqkill" -g 999999
rejects "mxqkill: unknown job" "no job 999999" "$mxqkill" -J 999999

"$mxqsub" --help >"$work/out" 2>&1
is "mxqsub --help exits 0" "$?" 0
contains "mxqsub --help names --prerequisites" "$(cat "$work/out")" "--prerequisites"

# ---------------------------------------------------------------- mxqdump

own_active=$(mxq_sql "SELECT COUNT(*) FROM mxq_group WHERE user_uid = $(id -u)
	AND (group_jobs_inq > 0 OR group_jobs_running > 0)")
json_count=$("$mxqdump" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
is "mxqdump --json lists the active groups as parseable JSON" "$json_count" "$own_active"
table_rows=$("$mxqdump" | tail -n +2 | wc -l | tr -d ' ')
is "mxqdump table: one header plus one line per group" "$table_rows" "$own_active"
contains "mxqdump table shows status names" "$("$mxqdump" -g "$first_gid")" " OK "

got=$("$mxqdump" -g "$first_gid" --json | python3 -c '
import json, sys
g = json.load(sys.stdin)[0]
print(g["group_id"], g["group_status"], g["group_jobs_inq"], g["job_memory"], g["job_command"])')
first_inq=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $first_gid AND job_status = 0")
is "mxqdump --group-id --json carries counters and attributes" "$got" \
	"$first_gid OK $first_inq 2048 sleep"

jobs_inq=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE job_status = 0")
got=$("$mxqdump" --jobs --status inq --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
is "mxqdump --jobs --status inq (name, any case)" "$got" "$jobs_inq"
got=$("$mxqdump" --jobs --status 0 --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
is "mxqdump --jobs --status 0 (code)" "$got" "$jobs_inq"

# a job that ran: exit status decoding and runtime
mxq_sql "UPDATE mxq_job SET job_status = 1024, host_hostname = 'node1', server_id = 'main',
	date_start = NOW() - INTERVAL 90 SECOND, date_end = NOW(), stats_status = 3 * 256
	WHERE job_id = $first_jid"
got=$("$mxqdump" --jobs --job-id "$first_jid" --json | python3 -c '
import json, sys
j = json.load(sys.stdin)[0]
print(j["job_status"], j["result"], j["host_hostname"], j["server_id"], j["runtime_sec"])')
is "mxqdump --json decodes an exit status and the runtime" "$got" "EXIT exit 3 node1 main 90"
line=$("$mxqdump" --jobs --job-id "$first_jid" | tail -n 1)
contains "mxqdump table shows 'exit 3'" "$line" "exit 3"
contains "mxqdump table shows the runtime" "$line" "1m30s"
mxq_sql "UPDATE mxq_job SET job_status = 400, stats_status = 9 WHERE job_id = $first_jid"
contains "mxqdump shows 'signal 9' for a killed job" \
	"$("$mxqdump" --jobs --job-id "$first_jid")" "signal 9"
is "mxqdump --jobs hides ended jobs by default" \
	"$("$mxqdump" --jobs --json | python3 -c '
import json, sys
print(any(j["job_id"] == '"$first_jid"' for j in json.load(sys.stdin)))')" False
is "mxqdump --jobs --inactive shows them" \
	"$("$mxqdump" --jobs --inactive --json | python3 -c '
import json, sys
print(any(j["job_id"] == '"$first_jid"' for j in json.load(sys.stdin)))')" True
is "mxqdump --json with no match is an empty array" \
	"$("$mxqdump" --user no-such-user --json | tr -d ' \n')" "[]"

# ---------------------------------------------------------------- mxqkill

submit -N killme sleep 100
kill_gid=$gid
kill_jid1=$jid
submit -N killme sleep 101
kill_jid2=$jid
submit -N killme sleep 102
kill_jid3=$jid
submit -N killme sleep 103
kill_jid4=$jid

out=$("$mxqkill" -J "$kill_jid1" 2>&1)
is "mxqkill -J on a queued job exits 0" "$?" 0
is "mxqkill -J reports the queued job cancelled" "$out" "cancelled job $kill_jid1: it was queued"
is "the queued job is CANCELLED, counters follow" \
	"$(mxq_sql "SELECT j.job_status, g.group_jobs_inq, g.group_jobs_cancelled
		FROM mxq_job j JOIN mxq_group g USING (group_id) WHERE j.job_id = $kill_jid1")" \
	"$(printf '990\t3\t1')"
rejects "mxqkill -J on an ended job" "job $kill_jid1 already ended (CANCELLED)" \
	"$mxqkill" -J "$kill_jid1"

# pretend a node runs one job, with one slot
mxq_sql "UPDATE mxq_job SET job_status = 200, host_slots = 1, host_hostname = 'node1',
	date_start = NOW() WHERE job_id = $kill_jid2"
out=$("$mxqkill" -g "$kill_gid" 2>&1)
is "mxqkill -g exits 0" "$?" 0
is "mxqkill -g reports what it did" "$out" \
	"cancelled group $kill_gid: 2 queued jobs cancelled, 1 running jobs being terminated"
is "group CANCELLED, queued jobs CANCELLED, running job CANCELLING" \
	"$(mxq_sql "SELECT group_status FROM mxq_group WHERE group_id = $kill_gid";
	   mxq_sql "SELECT job_status FROM mxq_job WHERE group_id = $kill_gid ORDER BY job_id")" \
	"$(printf '99\n990\n989\n990\n990')"
is "counters after the group cancel (inq, running, cancelled, slots)" \
	"$(mxq_sql "SELECT group_jobs_inq, group_jobs_running, group_jobs_cancelled,
		group_slots_running FROM mxq_group WHERE group_id = $kill_gid")" \
	"$(printf '0\t1\t3\t1')"
out=$("$mxqkill" -J "$kill_jid2" 2>&1)
is "mxqkill -J on a CANCELLING job says so and exits 0" "$?:$out" \
	"0:job $kill_jid2 is already being terminated (CANCELLING)"
out=$("$mxqkill" -g "$kill_gid" 2>&1)
is "mxqkill -g twice reports the group as already cancelled" "$out" \
	"already cancelled group $kill_gid: 0 queued jobs cancelled, 0 running jobs being terminated"
submit -N killme sleep 100
isnt "a cancelled group is not reused by mxqsub" "$gid" "$kill_gid"

submit -N killjob sleep 5
mxq_sql "UPDATE mxq_job SET job_status = 100, host_slots = 1 WHERE job_id = $jid"
out=$("$mxqkill" --job-id "$jid" 2>&1)
is "mxqkill -J on an ASSIGNED job hands it to its node" \
	"$out:$(mxq_sql "SELECT job_status FROM mxq_job WHERE job_id = $jid")" \
	"cancelling job $jid: its node will terminate it:989"

# a closed group (flag bit 0) is not reused either
submit -N closeme true
closed_gid=$gid
mxq_sql "UPDATE mxq_group SET group_flags = group_flags | 1 WHERE group_id = $closed_gid"
submit -N closeme true
isnt "a closed group is not reused by mxqsub" "$gid" "$closed_gid"

# ------------------------------------------------ upstream mxqsub options

# ids KEY: the values of KEY in mxqdump's JSON on stdin, comma-separated
ids() {
	python3 -c 'import json, sys
print(",".join(str(o[sys.argv[1]]) for o in json.load(sys.stdin)))' "$1"
}
me=$(id -u)

submit -N upst true
upst_a=$gid
mxq_sql "UPDATE mxq_job SET job_status = 1000 WHERE job_id = $jid"
is "a group whose only job finished has no work left" \
	"$(mxq_sql "SELECT group_jobs, group_jobs_inq, group_jobs_running FROM mxq_group
		WHERE group_id = $upst_a")" "$(printf '1\t0\t0')"
submit -n -N upst true
upst_b=$gid
isnt "-n starts a new group when the matching one has no work left" "$upst_b" "$upst_a"
submit --new-group -N upst true
is "-n joins a matching group with queued jobs" "$gid" "$upst_b"
submit -N upst true
is "without -g the newest matching group is joined" "$gid" "$upst_b"
submit -g "$upst_a" -N upst true 7
is "-g ID adds the job to group ID, not to the newest match" "$gid" "$upst_a"
is "the job row is in group ID" \
	"$(mxq_sql "SELECT group_id, job_argc FROM mxq_job WHERE job_id = $jid")" \
	"$(printf '%s\t2' "$upst_a")"

submit -N upst-tagged --tags t1 true
tagged_gid=$gid
is "a group with new requirements is CLOSED|NEW_ONLY for upstream mxqsub" \
	"$(mxq_sql "SELECT group_flags FROM mxq_group WHERE group_id = $tagged_gid")" 3
submit -n -N upst-tagged --tags t1 true
submit -g "$tagged_gid" -N upst-tagged --tags t1 true 1
is "-g joins such a group: it is open to this mxqsub" "$gid:$sub_rc" "$tagged_gid:0"

submit -N upst-foreign true
foreign_gid=$gid
mxq_sql "UPDATE mxq_group SET user_uid = user_uid + 4242, user_name = 'upst-other'
	WHERE group_id = $foreign_gid"
rejects "-g: another user's group is refused" "-g: group $foreign_gid is not yours" \
	"$mxqsub" -g "$foreign_gid" -N upst-foreign true
is "... with exit status 1" "$_rc" 1
rejects "-g: a cancelled group is refused" "-g: group $kill_gid is cancelled" \
	"$mxqsub" -g "$kill_gid" -N killme sleep 100
is "... with exit status 1" "$_rc" 1
rejects "-g: a closed group is refused" "-g: group $closed_gid is closed" \
	"$mxqsub" -g "$closed_gid" -N closeme true
is "... with exit status 1" "$_rc" 1
rejects "-g: a group with other attributes is refused, naming the first" \
	"-g: group $upst_a does not match this job: its memory (-m) differs" \
	"$mxqsub" -g "$upst_a" -N upst -m 1G true
is "... with exit status 1" "$_rc" 1
rejects "-g: another command alias is refused" "its command alias (-a) differs" \
	"$mxqsub" -g "$upst_a" -N upst -a other true
rejects "-g: a group that does not exist" "-g: there is no group 999999" \
	"$mxqsub" -g 999999 true
is "... with exit status 1" "$_rc" 1
rejects "-g without a group id is a usage error" "option '-g' needs a value" "$mxqsub" -g
is "... with exit status 2" "$_rc" 2
rejects "-g COMMAND (no id) is a usage error" "-g: 'true' is not a group id" "$mxqsub" -g true
is "... with exit status 2" "$_rc" 2
rejects "-g and -n together are a usage error" "exclude each other" \
	"$mxqsub" -g "$upst_a" -n true
is "... with exit status 2" "$_rc" 2

submit -r samehost true
is "-r samehost sets upstream's restart flag" \
	"$(mxq_sql "SELECT job_flags, job_argv = CONCAT('true', CHAR(92), '0') FROM mxq_job
		WHERE job_id = $jid")" "$(printf '1\t1')"
submit -r sleep 2
is "bare -r is 'always' (restart and requeue flags); the next word is the command" \
	"$(mxq_sql "SELECT job_flags, job_argc FROM mxq_job WHERE job_id = $jid")" "$(printf '3\t2')"
submit --restartable=never true
is "--restartable=never sets no flag" \
	"$(mxq_sql "SELECT job_flags FROM mxq_job WHERE job_id = $jid")" 0
is "mxqdump --json names the restart mode" \
	"$("$mxqdump" -J "$jid" --json | ids job_restart)" never
rejects "an unknown restart mode" "--restartable: unknown mode 'often'" \
	"$mxqsub" --restartable=often true
submit -v --debug -D FOO=bar true
is "-v, --debug and -D VALUE are accepted" "$sub_rc" 0

sub_out=$("$mxqsub" --group-id legacy --group_priority 42 true 2>"$work/err")
is "upstream's long --group-id is a deprecated --group-name" \
	"$(field "$sub_out" mxq_group_name):$(mxq_sql "SELECT group_name, group_priority
		FROM mxq_group WHERE group_id = $(field "$sub_out" mxq_group_id)")" \
	"$(printf 'legacy:legacy\t42')"
contains "... with a warning" "$(cat "$work/err")" "mxqsub: warning: --group_priority is deprecated"
sub_out=$("$mxqsub" --group_id legacy true 2>"$work/err")
is "--group_id is --group-name too" "$(field "$sub_out" mxq_group_name)" legacy
contains "... with a warning" "$(cat "$work/err")" "--group_id is deprecated"

# ------------------------------------------------ upstream mxqdump options

submit -N upst-done true
done_gid=$gid
mxq_sql "UPDATE mxq_job SET job_status = 1000 WHERE job_id = $jid"
default_ids=$("$mxqdump" --json | ids group_id)
inactive_ids=$("$mxqdump" --inactive --json | ids group_id)
isnt "(some own groups are inactive)" "$inactive_ids" "$default_ids"
is "mxqdump -a is --inactive" "$("$mxqdump" -a --json | ids group_id)" "$inactive_ids"
is "mxqdump --groups is the default listing" "$("$mxqdump" --groups --json | ids group_id)" \
	"$default_ids"
rejects "mxqdump --groups --jobs is a usage error" "exclude each other" \
	"$mxqdump" --groups --jobs
is "mxqdump --groups=ID is group ID, as upstream" \
	"$("$mxqdump" -a --groups="$done_gid" --json | ids group_id)" "$done_gid"
is "mxqdump --groups ID likewise" "$("$mxqdump" -a --groups "$done_gid" --json | ids group_id)" \
	"$done_gid"
is "mxqdump -r (groups): only groups with queued or running jobs, even with -a" \
	"$("$mxqdump" -r -a --json | ids group_id)" "$default_ids"
is "mxqdump -f (groups): the groups with a finished job" \
	"$("$mxqdump" -f --json | ids group_id)" \
	"$(mxq_sql "SELECT GROUP_CONCAT(group_id ORDER BY group_id) FROM mxq_group g
		WHERE user_uid = $me AND EXISTS (SELECT 1 FROM mxq_job j
		WHERE j.group_id = g.group_id AND j.job_status = 1000)")"
contains "... which include the inactive one" ",$("$mxqdump" -f --json | ids group_id)," \
	",$done_gid,"
for st in q:0 r:200 f:1000 F:750 K:400 C:990 U:999; do
	want=$(mxq_sql "SELECT COALESCE(GROUP_CONCAT(j.job_id ORDER BY j.job_id), '')
		FROM mxq_job j JOIN mxq_group g USING (group_id)
		WHERE g.user_uid = $me AND j.job_status = ${st#*:}")
	is "mxqdump -j -${st%%:*}: own jobs with status ${st#*:}" \
		"$("$mxqdump" -j "-${st%%:*}" --json | ids job_id)" "$want"
done
check "(there is a KILLED job to show)" test -n "$("$mxqdump" -j -K --json | ids job_id)"
is "mxqdump -j: the later of --status and a status option counts" \
	"$("$mxqdump" -j -s inq -K --json | ids job_id)" "$("$mxqdump" -j -K --json | ids job_id)"
is "mxqdump -u (no name) is every user" \
	"$("$mxqdump" -u --json | ids group_id)" "$("$mxqdump" --all --json | ids group_id)"
contains "... and shows the other user's group" ",$("$mxqdump" -u -j --json | ids group_id)," \
	",$foreign_gid,"
is "mxqdump -u NAME still takes the name" \
	"$("$mxqdump" -u "$(id -un)" --json | ids group_id)" "$default_ids"
is "mxqdump --users=NAME (upstream's spelling)" \
	"$("$mxqdump" --users="$(id -un)" --json | ids group_id)" "$default_ids"
"$mxqdump" -v --debug >/dev/null 2>&1
is "mxqdump -v and --debug are accepted" "$?" 0
# the other user's group was a pretence: give it back
mxq_sql "UPDATE mxq_group SET user_uid = $me, user_name = '$(id -un)' WHERE group_id = $foreign_gid"

# ----------------------------------------------------- another user

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	shared=$(mktemp -d "${TMPDIR:-/tmp}/mxq-clients.XXXXXX")
	chmod 755 "$shared"
	cp "$MXQ_MYSQL_DEFAULT_FILE_TCP" "$shared/mysql.cnf"
	chmod 644 "$shared/mysql.cnf"
	as_nobody() {
		(cd "$shared" && setpriv --reuid=65534 --regid=65534 --clear-groups \
			env MXQ_MYSQL_DEFAULT_FILE="$shared/mysql.cnf" "$@")
	}
	nobody_out=$(as_nobody "$mxqsub" sleep 1 2>"$work/err")
	nobody_gid=$(field "$nobody_out" mxq_group_id)
	nobody_jid=$(field "$nobody_out" mxq_job_id)
	if [ -n "$nobody_gid" ]; then
		ok "another user can submit"
	else
		not_ok "another user can submit"
		diag <"$work/err"
	fi
	isnt "another user's equal job does not join root's group" "$nobody_gid" "$first_gid"
	is "the group records the other user" \
		"$(mxq_sql "SELECT user_uid FROM mxq_group WHERE group_id = $nobody_gid")" 65534

	victim=$(mxq_sql "SELECT group_id FROM mxq_group WHERE user_uid = 0 AND group_status = 0
		AND group_jobs_inq > 0 ORDER BY group_id LIMIT 1")
	victim_job=$(mxq_sql "SELECT job_id FROM mxq_job WHERE group_id = $victim AND job_status = 0
		ORDER BY job_id LIMIT 1")
	rejects "mxqkill -g of someone else's group is refused" "only its owner or root" \
		as_nobody "$mxqkill" -g "$victim"
	rejects "mxqkill -J of someone else's job is refused" "only its owner or root" \
		as_nobody "$mxqkill" -J "$victim_job"
	is "the refused group is unchanged" \
		"$(mxq_sql "SELECT group_status FROM mxq_group WHERE group_id = $victim")" 0
	out=$(as_nobody "$mxqkill" -J "$nobody_jid" 2>&1)
	is "a user may cancel their own job" "$out" "cancelled job $nobody_jid: it was queued"

	got=$("$mxqdump" --all --inactive --json | python3 -c '
import json, sys
print(sorted(set(g["user_uid"] for g in json.load(sys.stdin))))')
	is "mxqdump --all shows every user" "$got" "[0, 65534]"
	got=$("$mxqdump" --inactive --json | python3 -c '
import json, sys
print(sorted(set(g["user_uid"] for g in json.load(sys.stdin))))')
	is "mxqdump shows only your own groups by default" "$got" "[0]"
	got=$("$mxqdump" --user nobody --inactive --json | python3 -c '
import json, sys
print([g["group_id"] for g in json.load(sys.stdin)])')
	is "mxqdump --user NAME" "$got" "[$nobody_gid]"
else
	skip "another user (needs root and setpriv)"
fi

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
