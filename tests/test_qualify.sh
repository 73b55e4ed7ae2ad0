#!/bin/sh
# tests/test_qualify.sh - `mxqadmin qualify` and qualification end to end,
# against a private MariaDB (tests/lib/mariadb.sh).
#
# Part 1: mxq_daemon rows written by SQL (hosts with different tags, GPUs,
# prerequisites, memory, runtime and tmpdir; one host only in mxq_power;
# one host with an older registration that offered more) and groups with
# a whitelist, blacklist, prerequisites, tags, GPU, too much memory, ...:
# every host must show exactly the rule that excludes it, judged on its
# newest row; bad input gives one line and the documented exit status.
#
# Part 2: three real mxqd instances (different --hostname, --tags, --gpus,
# --prerequisites; every path under $MXQ_TEST_DIR) and groups that only
# one of them qualifies for: every job must run on that daemon and nowhere
# else, a group no daemon qualifies for must stay queued, and `mxqadmin
# qualify` must name the rule that excludes each other daemon.
#
# Prints TAP lines; exits non-zero when any check failed.

. "$(dirname -- "$0")/lib/mariadb.sh"

mxqadmin=$MXQ_BUILD_DIR/mxqadmin
mxqsub=$MXQ_BUILD_DIR/mxqsub
mxqd=$MXQ_BUILD_DIR/mxqd

# ------------------------------------------------------------------ TAP

. "$MXQ_SRC_DIR/tests/lib/tap.sh"

# ------------------------------------------------------------- helpers

admin() {
	"$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" "$@"
}

# rules GROUP: "host=rule" lines (rule "unknown" for hosts never
# registered), from `qualify --json`, sorted by host.
rules() {
	admin qualify --group "$1" --json | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for h in doc["hosts"]:
    print("%s=%s" % (h["hostname"], h["rule"] if h["registered"] else "unknown"))
'
}

# rule_of GROUP HOST: the rule for one host, through --host.
rule_of() {
	admin qualify --group "$1" --host "$2" --json | python3 -c '
import json, sys
hosts = json.load(sys.stdin)["hosts"]
print(len(hosts) == 1 and hosts[0]["rule"] or "bad: %r" % hosts)
'
}

# fails DESC STATUS NEEDLE CMD...: CMD exits with STATUS, prints nothing
# on stdout and exactly one line on stderr containing NEEDLE.
fails() {
	_desc=$1 _want=$2 _needle=$3
	shift 3
	"$@" >"$MXQ_TEST_DIR/out" 2>"$MXQ_TEST_DIR/err"
	_rc=$?
	_lines=$(wc -l <"$MXQ_TEST_DIR/err")
	if [ "$_rc" = "$_want" ] && [ ! -s "$MXQ_TEST_DIR/out" ] && [ "$_lines" = 1 ] &&
		grep -qF -- "$_needle" "$MXQ_TEST_DIR/err"; then
		ok "$_desc"
	else
		not_ok "$_desc"
		{ echo "exit $_rc (want $_want), stdout:"; cat "$MXQ_TEST_DIR/out"
		  echo "stderr (want one line with '$_needle'):"; cat "$MXQ_TEST_DIR/err"; } | diag
	fi
}

# daemon_row HOST STATUS SLOTS MEMORY_MIB MAXTIME_MIN GPUS TMPDIR_GIB TAGS PREREQ
daemon_row() {
	mxq_sql "INSERT INTO mxq_daemon (hostname, daemon_name, status, mxq_version, boot_id,
		pid_starttime, daemon_pid, daemon_slots, daemon_memory, daemon_maxtime,
		daemon_gpus_max, daemon_tmpdir_total_bytes, tags, prerequisites)
		VALUES ('$1', 'main', $2, '0.9.0', 'boot', 1, 1, $3, $4, $5, $6,
		$7 * 1024 * 1024 * 1024, '$8', '$9')"
}

# group_row NAME COLUMN=VALUE...: a group with 3 queued jobs; prints its id.
group_row() {
	_name=$1
	shift
	_cols= _vals=
	for _cv in "$@"; do
		_cols="$_cols, ${_cv%%=*}"
		_vals="$_vals, ${_cv#*=}"
	done
	mxq_sql "INSERT INTO mxq_group (group_name, user_uid, user_name, user_gid, user_group,
		job_command, group_jobs, group_jobs_inq $_cols)
		VALUES ('$_name', 1000, 'alice', 1000, 'alice', 'true', 3, 3 $_vals);
		SELECT LAST_INSERT_ID()"
}

mxq_db_start || { echo "not ok 1 - database start"; exit 1; }

# ===================================================== part 1: rows by SQL

# cpu1 once offered 4 GPUs (an older row); its newest registration has none
daemon_row cpu1.example.org 250 64 262144 0 4 100 'big old' ''
daemon_row cpu1.example.org 10 16 65536 0 0 100 'big' ''
daemon_row gpu1.example.org 250 8 32768 1440 2 50 'cuda' ''
daemon_row strict.example.org 10 8 32768 0 0 50 '' 'secret'
daemon_row small.example.org 10 4 1024 60 0 0 '' ''
mxq_sql "INSERT INTO mxq_power (hostname, state) VALUES
	('gpu1.example.org', 'OFF'), ('ghost.example.org', 'FAILED')"

g_plain=$(group_row plain)
g_white=$(group_row white "group_whitelist='gpu1'")
g_black=$(group_row black "group_blacklist='cpu1.example.org'")
g_prereq=$(group_row prereq "prerequisites='big & !cuda'")
g_gpu=$(group_row gpu "job_gpu=1")
g_mem=$(group_row mem "job_memory=100000")
g_secret=$(group_row secret "tags='secret'")
g_time=$(group_row time "job_time=120")
g_tmp=$(group_row tmp "job_tmpdir_size=1")
g_threads=$(group_row threads "job_threads=12")
g_badexpr=$(group_row badexpr "prerequisites='big &'")

is "plain group: every registered host but strict qualifies" "$(rules "$g_plain")" \
"cpu1.example.org=ok
ghost.example.org=unknown
gpu1.example.org=ok
small.example.org=ok
strict.example.org=server-prerequisites"

is "whitelist by short name: only gpu1" "$(rules "$g_white")" \
"cpu1.example.org=whitelist
ghost.example.org=unknown
gpu1.example.org=ok
small.example.org=whitelist
strict.example.org=whitelist"

is "blacklist by full name" "$(rules "$g_black")" \
"cpu1.example.org=blacklist
ghost.example.org=unknown
gpu1.example.org=ok
small.example.org=ok
strict.example.org=server-prerequisites"

is "group prerequisites on host tags" "$(rules "$g_prereq")" \
"cpu1.example.org=ok
ghost.example.org=unknown
gpu1.example.org=group-prerequisites
small.example.org=group-prerequisites
strict.example.org=group-prerequisites"

is "GPU group: newest cpu1 row (no GPUs) counts, not the older one" "$(rules "$g_gpu")" \
"cpu1.example.org=gpu
ghost.example.org=unknown
gpu1.example.org=ok
small.example.org=gpu
strict.example.org=server-prerequisites"

is "too much memory everywhere" "$(rules "$g_mem")" \
"cpu1.example.org=memory
ghost.example.org=unknown
gpu1.example.org=memory
small.example.org=memory
strict.example.org=server-prerequisites"

is "host prerequisites: strict takes only tagged groups" "$(rules "$g_secret")" \
"cpu1.example.org=ok
ghost.example.org=unknown
gpu1.example.org=ok
small.example.org=ok
strict.example.org=ok"

is "runtime above a host's maximum" "$(rule_of "$g_time" small.example.org)" runtime
is "tmpdir: a host of unknown tmpdir size does not qualify" \
	"$(rule_of "$g_tmp" small.example.org)" tmpdir
is "tmpdir: 1 GiB fits 100 GiB" "$(rule_of "$g_tmp" cpu1.example.org)" ok
is "threads above a host's slots" "$(rule_of "$g_threads" small.example.org)" threads
is "threads within a host's slots" "$(rule_of "$g_threads" cpu1.example.org)" ok
is "group prerequisites that do not parse qualify nowhere" \
	"$(rule_of "$g_badexpr" cpu1.example.org)" group-prerequisites

out=$(admin qualify --group "$g_gpu")
contains "table: header names the group and its needs" "$out" "group $g_gpu 'gpu' of alice"
contains "table: GPU host shown qualified with daemon and power state" "$out" \
	"gpu1.example.org    EXITED   OFF     qualified"
contains "table: excluded host shows rule and description" "$out" \
	"gpu: the group needs more GPUs than the host has"
contains "table: host only in mxq_power cannot be judged" "$out" \
	"ghost.example.org   -        FAILED  unknown: never registered"
contains "table: count line" "$out" "1 of 5 hosts qualified"

fails "unknown group: exit 1, one line" 1 "unknown group 99999" \
	admin qualify --group 99999
fails "unknown host: exit 1, one line" 1 "unknown host 'nosuch'" \
	admin qualify --group "$g_plain" --host nosuch
fails "missing --group: usage error" 2 "needs --group" admin qualify
fails "bad group id: usage error" 2 "--group: 'x1' is not a positive number" admin qualify --group x1
fails "stray argument: usage error" 2 "unexpected argument" \
	admin qualify --group "$g_plain" extra

# ================================================ part 2: real mxqd instances

mxqd_hosts="qa-big qa-gpu qa-secret"

mxq_test_cleanup_hook() {
	for _h in $mxqd_hosts; do
		eval "_pid=\${pid_$(echo "$_h" | tr - _):-}"
		[ -n "$_pid" ] || continue
		kill -TERM "$_pid" 2>/dev/null
		_t=100
		while mxq__alive "$_pid" && [ "$_t" -gt 0 ]; do
			sleep 0.1
			_t=$((_t - 1))
		done
		mxq__alive "$_pid" && kill -KILL "$_pid" 2>/dev/null
		wait "$_pid" 2>/dev/null
	done
}

# start_mxqd HOST OPTIONS...: every path under $MXQ_TEST_DIR/HOST; waits
# (bounded) for the daemon's registration.
start_mxqd() {
	_h=$1
	shift
	_d=$MXQ_TEST_DIR/$_h
	mkdir -p "$_d/spool" "$_d/tmp"
	"$mxqd" --hostname "$_h" --spool "$_d/spool" --tmpdir "$_d/tmp" \
		--log "$_d/mxqd.log" --pid-file "$_d/mxqd.pid" --poll-interval 0.1 \
		--heartbeat-interval 1 --no-power-node --allow-root-jobs -M "$MXQ_MYSQL_DEFAULT_FILE" "$@" \
		</dev/null >"$_d/stderr" 2>&1 &
	eval "pid_$(echo "$_h" | tr - _)=$!"
	_t=150
	while [ "$_t" -gt 0 ]; do
		[ "$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon WHERE hostname = '$_h'
			AND daemon_pid = $! AND status NOT IN (250, 255)")" = 1 ] && return 0
		mxq__alive "$!" || break
		sleep 0.1
		_t=$((_t - 1))
	done
	{ echo "mxqd $_h did not register; stderr and log:"; cat "$_d/stderr" "$_d/mxqd.log"; } |
		diag
	return 1
}

started=yes
start_mxqd qa-big --slots 2 --tags "big" || started=no
start_mxqd qa-gpu --slots 2 --gpus 1 --tags "cuda" || started=no
start_mxqd qa-secret --slots 2 --prerequisites "secret" --tags "vault" || started=no
is "three mxqd instances registered" "$started" yes

# submit NAME OPTIONS...: 4 jobs of one group; prints the group id
submit_group() {
	_name=$1
	shift
	for _i in 1 2 3 4; do
		"$mxqsub" -M "$MXQ_MYSQL_DEFAULT_FILE" -N "$_name" -w "$MXQ_TEST_DIR" \
			--runtime 1 --memory 64 "$@" /bin/true >"$MXQ_TEST_DIR/sub.out" ||
			{ echo "mxqsub $_name failed" | diag; return 1; }
	done
	sed -n 's/^mxq_group_id=//p' "$MXQ_TEST_DIR/sub.out"
}

r_white=$(submit_group white --whitelist qa-big)
r_black=$(submit_group black --blacklist "qa-big")
r_prereq=$(submit_group prereq --prerequisites "big")
r_hostpre=$(submit_group hostpre --tags secret --prerequisites "vault")
r_gpu=$(submit_group gpu --gpu)
r_none=$(submit_group none --prerequisites "vault")

# wait (bounded) until every job of the groups that can run has finished
t=300
while [ "$t" -gt 0 ]; do
	left=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id IN
		($r_white, $r_black, $r_prereq, $r_hostpre, $r_gpu) AND job_status <> 1000")
	[ "$left" = 0 ] && break
	sleep 0.1
	t=$((t - 1))
done
is "all jobs of runnable groups finished" "$left" 0

# hosts_of GROUP: the distinct hosts its jobs ran on
hosts_of() {
	mxq_sql "SELECT GROUP_CONCAT(DISTINCT host_hostname ORDER BY host_hostname)
		FROM mxq_job WHERE group_id = $1 AND job_status = 1000"
}
is "whitelist: jobs ran only on qa-big" "$(hosts_of "$r_white")" qa-big
is "blacklist: jobs ran only on qa-gpu" "$(hosts_of "$r_black")" qa-gpu
is "group prerequisites: jobs ran only on qa-big" "$(hosts_of "$r_prereq")" qa-big
is "host prerequisites: jobs ran only on qa-secret" "$(hosts_of "$r_hostpre")" qa-secret
is "GPU: jobs ran only on qa-gpu" "$(hosts_of "$r_gpu")" qa-gpu
is "nobody qualifies: jobs still queued" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $r_none AND job_status = 0")" 4

# the same verdicts from mxqadmin, restricted to the real daemons
live_rules() {
	rules "$1" | grep '^qa-'
}
is "qualify names the rules: whitelist" "$(live_rules "$r_white")" \
"qa-big=ok
qa-gpu=whitelist
qa-secret=whitelist"
is "qualify names the rules: blacklist" "$(live_rules "$r_black")" \
"qa-big=blacklist
qa-gpu=ok
qa-secret=server-prerequisites"
is "qualify names the rules: group prerequisites" "$(live_rules "$r_prereq")" \
"qa-big=ok
qa-gpu=group-prerequisites
qa-secret=group-prerequisites"
is "qualify names the rules: host prerequisites" "$(live_rules "$r_hostpre")" \
"qa-big=group-prerequisites
qa-gpu=group-prerequisites
qa-secret=ok"
is "qualify names the rules: GPU" "$(live_rules "$r_gpu")" \
"qa-big=gpu
qa-gpu=ok
qa-secret=server-prerequisites"
is "qualify names the rules: nobody" "$(live_rules "$r_none")" \
"qa-big=group-prerequisites
qa-gpu=group-prerequisites
qa-secret=server-prerequisites"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
