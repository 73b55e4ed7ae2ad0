#!/bin/sh
# tests/test_mxqadmin_power.sh - `mxqadmin power ...` against a private
# MariaDB (tests/lib/mariadb.sh), with mxq_power, mxq_daemon, mxq_job,
# mxq_power_leader and mxq_power_event rows written by SQL (no daemon).
#
# Covers: list (table and JSON: states, jobs, slots, idle time, full and
# truncated reasons), status (leader, lease valid and expired, config hash
# compared with a local power.conf), events (host, relative and absolute
# --since, --limit, JSON, bad input), the admin actions (clear FAILED ->
# UNKNOWN with an admin event, on/off requests with their reason,
# exclude/include, repeating an action, unknown host, missing --reason),
# explain HOST (the leader's stored explanation plus live facts) and
# explain --group (the real policy on a fresh snapshot: a GPU group wakes
# the OFF GPU host; with that host admin-off it says why nothing wakes;
# nothing is written).
#
# Prints TAP lines; exits non-zero when any check failed.

. "$(dirname -- "$0")/lib/mariadb.sh"

mxqadmin=$MXQ_BUILD_DIR/mxqadmin

# ------------------------------------------------------------------ TAP

. "$MXQ_SRC_DIR/tests/lib/tap.sh"

# ------------------------------------------------------------- helpers

admin() {
	"$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" "$@"
}

# py EXPR: evaluate EXPR on the JSON document on stdin (bound to d)
py() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))
' "$1"
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

# power_row HOSTNAME: every column an admin could look at, one line
power_row() {
	mxq_sql "SELECT CONCAT_WS('|', state, admin_off, excluded, admin_request,
		admin_request_reason, failure_count) FROM mxq_power WHERE hostname = '$1'"
}

mxq_db_start || { echo "not ok 1 - database start"; exit 1; }
me=$(id -un)

# ------------------------------------------------------------- fixtures

long_reason='suspended: idle for 35m, longer than the idle time of 10m; most expensive idle node first'
mxq_sql "
INSERT INTO mxq_daemon (hostname, daemon_name, status, mxq_version, boot_id, pid_starttime,
	daemon_pid, daemon_slots, daemon_memory, daemon_maxtime, daemon_gpus_max,
	daemon_tmpdir_total_bytes, tags, prerequisites) VALUES
	('cpu1', 'main', 10, '0.9.0', 'b', 1, 11, 16, 65536, 0, 0, 0, '', ''),
	('idle1', 'main', 10, '0.9.0', 'b', 1, 12, 8, 32768, 0, 0, 0, '', ''),
	('gpu1', 'main', 250, '0.9.0', 'b', 1, 13, 8, 65536, 0, 2, 0, 'cuda', ''),
	('cpu2', 'main', 255, '0.9.0', 'b', 1, 14, 16, 65536, 0, 0, 0, '', '');
INSERT INTO mxq_power (hostname, state, state_since, efficiency_rank, transport_on,
	transport_off, reason, explanation, current_watts, last_job_end, failure_count,
	failure_reason, node_seen_at) VALUES
	('cpu1', 'ON', NOW(3) - INTERVAL 2 HOUR, 50, 'exec', 'self', 'registered by its mxqd',
	 'busy: 1 job running', 180.5, NULL, 0, '', NOW(3) - INTERVAL 2 HOUR),
	('idle1', 'ON', NOW(3) - INTERVAL 3 HOUR, 60, 'wol', 'ssh', 'boot completed',
	 'warm pool (1 of 1)', 95, NOW(3) - INTERVAL 15 MINUTE, 0, '', NOW(3) - INTERVAL 3 HOUR),
	('gpu1', 'OFF', NOW(3) - INTERVAL 1 HOUR, 10, 'ipmi', 'ipmi', '$long_reason',
	 'off: idle since the last GPU job; woken for GPU demand', 0, NULL, 0, '', NULL),
	('cpu2', 'FAILED', NOW(3) - INTERVAL 30 MINUTE, 100, 'exec', 'exec',
	 'boot deadline of 10m missed', 'failed: waits for an admin', 0, NULL, 2,
	 'boot deadline of 10m missed', NULL);
INSERT INTO mxq_group (group_id, group_name, user_uid, user_name, user_gid, user_group,
	job_command, job_threads, job_memory, group_jobs, group_jobs_running,
	group_slots_running) VALUES
	(1, 'busy', 1000, 'alice', 1000, 'alice', 'sleep', 4, 4096, 1, 1, 4);
INSERT INTO mxq_job (job_id, job_status, group_id, job_workdir, job_argc, job_argv,
	job_umask, host_hostname, host_slots, date_start) VALUES
	(1, 200, 1, '/tmp', 1, 'sleep', 18, 'cpu1', 4, NOW() - INTERVAL 5 MINUTE);
INSERT INTO mxq_power_leader (id, epoch, holder, lease_expires, acquired_at, renewed_at,
	last_tick_at, config_hash, dry_run, tick_summary) VALUES
	(1, 7, 'cpu1/main[11:1]', NOW(3) + INTERVAL 30 SECOND, NOW(3) - INTERVAL 1 HOUR,
	 NOW(3), NOW(3) - INTERVAL 4 SECOND, '0123456789abcdef', 0,
	 '1 action, 1 WAKE; 0 pending jobs unplaced');
INSERT INTO mxq_power_event (event_time, hostname, from_state, to_state, reason, epoch,
	actor) VALUES
	(NOW(3) - INTERVAL 3 DAY, 'cpu1', 'POWERING_ON', 'ON', 'boot completed', 0, 'node'),
	(NOW(3) - INTERVAL 70 MINUTE, 'gpu1', 'ON', 'DRAINING', 'idle for 35m', 7, 'leader'),
	(NOW(3) - INTERVAL 65 MINUTE, 'gpu1', 'DRAINING', 'POWERING_OFF', 'node acked', 7, 'leader'),
	(NOW(3) - INTERVAL 60 MINUTE, 'gpu1', 'POWERING_OFF', 'OFF', 'power is off', 7, 'leader'),
	(NOW(3) - INTERVAL 30 MINUTE, 'cpu2', 'POWERING_ON', 'FAILED', 'boot deadline of 10m missed',
	 7, 'leader');
" || { echo "not ok 1 - fixtures"; exit 1; }

# a local power.conf for every command that reads one (never the system's)
conf=$MXQ_TEST_DIR/power.conf
printf '# test policy\nmin_off_time = 5m\nresume_rate = 10\nmax_booting = 10\n' >"$conf"

# ------------------------------------------------------------------ list

out=$(admin power list)
is "list: exit 0" "$?" 0
contains "list: header" "$out" "HOST   STATE"
is "list: busy host with job and slots" "$(echo "$out" | awk '$1 == "cpu1" {print $4, $5, $6}')" "1 4/16 -"
is "list: watts, rank, transport" "$(echo "$out" | awk '$1 == "cpu1" {print $7, $8, $9}')" \
	"180 50 exec/self"
contains "list: idle time from the last job end" "$(echo "$out" | grep '^idle1 ')" "15m0"
is "list: OFF state and its age" "$(echo "$out" | awk '$1 == "gpu1" {print $2, $3}')" "OFF 1h00m"
contains "list: FAILED state" "$(echo "$out" | grep '^cpu2 ')" "FAILED"
contains "list: long reason cut in the table" "$(echo "$out" | grep '^gpu1 ')" \
	"suspended: idle for 35m, longer than the idle..."
not_contains "list: cut reason does not run on" "$(echo "$out" | grep '^gpu1 ')" "most expensive"

long=a-very-long-host-name-that-used-to-break-the-columns.example.org
mxq_sql "INSERT INTO mxq_power (hostname, state) VALUES ('$long', 'UNKNOWN')"
out=$(admin power list)
is "list: columns sized to the longest host name (STATE at one offset on every line)" \
	"$(echo "$out" | awk 'NR == 1 { o = index($0, "STATE") } NR > 1 { print (index($0, $2) == o) }' | sort -u)" 1
mxq_sql "DELETE FROM mxq_power WHERE hostname = '$long'"

json=$(admin power list --json)
is "list --json: states" "$(echo "$json" |
	py '" ".join(h["hostname"] + "=" + h["state"] for h in d["hosts"])')" \
	"cpu1=ON cpu2=FAILED gpu1=OFF idle1=ON"
is "list --json: full reason" "$(echo "$json" |
	py '[h["reason"] for h in d["hosts"] if h["hostname"] == "gpu1"][0]')" "$long_reason"
is "list --json: jobs and slots of cpu1" "$(echo "$json" |
	py '[(h["jobs_running"], h["slots_used"], h["slots_total"]) for h in d["hosts"]
	    if h["hostname"] == "cpu1"][0]')" "(1, 4, 16)"
is "list --json: idle time of idle1 from its last job end" "$(echo "$json" |
	py '[900 <= h["idle_s"] < 960 for h in d["hosts"] if h["hostname"] == "idle1"][0]')" True
is "list --json: no idle time while a job runs" "$(echo "$json" |
	py '[h["idle_s"] for h in d["hosts"] if h["hostname"] == "cpu1"][0]')" None
fails "list: takes no --host" 2 "does not take --host" admin power list --host cpu1

# ---------------------------------------------------------------- status

out=$(admin power status)
contains "status: holder" "$out" "leader:      cpu1/main[11:1]"
contains "status: epoch" "$out" "epoch:       7"
contains "status: lease valid" "$out" "(in "
contains "status: config hash" "$out" "config hash: 0123456789abcdef"
contains "status: last tick age" "$out" "s ago)"
contains "status: dry run" "$out" "dry run:     no"
contains "status: tick summary" "$out" "tick:        1 action, 1 WAKE"
contains "status: node counts" "$out" "1 FAILED, 1 OFF, 2 ON"

local_hash=$(admin power status --json --power-config "$conf" | py 'd["local_config_hash"]')
is "status --json: local config differs" \
	"$(admin power status --json --power-config "$conf" | py 'd["config_matches"]')" False
mxq_sql "UPDATE mxq_power_leader SET config_hash = '$local_hash',
	lease_expires = NOW(3) - INTERVAL 2 MINUTE"
out=$(admin power status --power-config "$conf")
contains "status: same config as the local one" "$out" "(same as the local config)"
contains "status: expired lease" "$out" "EXPIRED 2m0"
is "status --json: lease_valid false" \
	"$(admin power status --json | py 'd["leader"]["lease_valid"]')" False
fails "status: bad --power-config" 1 "cannot read" \
	admin power status --power-config "$MXQ_TEST_DIR/nonexistent.conf"

# ------------------------------------------------------------ list --watch

"$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power list --watch=1 >"$MXQ_TEST_DIR/watch" 2>&1 </dev/null &
watch_pid=$!
views=0 tries=300
while [ "$views" -lt 2 ] && [ "$tries" -gt 0 ] && kill -0 "$watch_pid" 2>/dev/null; do
	sleep 0.1
	tries=$((tries - 1))
	views=$(grep -c "^Every 1s: mxqadmin power list" "$MXQ_TEST_DIR/watch")
done
is "list --watch refreshes (two views within 30 s)" "$views" 2
# SIGTERM: a background job of sh has SIGINT ignored
kill -TERM "$watch_pid"
wait "$watch_pid"
is "list --watch: SIGTERM quits cleanly (exit 0)" "$?" 0
contains "list --watch shows the hosts" "$(cat "$MXQ_TEST_DIR/watch")" "gpu1"
fails "list --watch: bad interval" 2 "--watch: 'soon' is not a duration" admin power list --watch=soon

# ---------------------------------------------------------------- events

out=$(admin power events)
is "events: all five, with a header" "$(echo "$out" | wc -l)" 6
contains "events: oldest first" "$(echo "$out" | sed -n 2p)" "POWERING_ON   ->  ON"
contains "events: leader actor and epoch" "$out" "gpu1  POWERING_OFF  ->  OFF           leader      7  power is off"
is "events --host gpu1" "$(admin power events --host gpu1 | tail -n +2 | awk '{print $3}' | sort -u)" gpu1
is "events --since 62m: the two newest" "$(admin power events --since 62m | tail -n +2 | wc -l)" 2
is "events --since 1h7m30s" "$(admin power events --since 1h7m30s | tail -n +2 | wc -l)" 3
abs=$(mxq_sql "SELECT DATE_FORMAT(NOW() - INTERVAL 2 HOUR, '%Y-%m-%d %H:%i')")
is "events --since 'YYYY-MM-DD HH:MM'" "$(admin power events --since "$abs" | tail -n +2 | wc -l)" 4
is "events --limit 2: the newest two" \
	"$(admin power events --limit 2 --json | py '[e["to_state"] for e in d]')" "['OFF', 'FAILED']"
is "events --json: fields" "$(admin power events --host cpu2 --json |
	py '(d[0]["from_state"], d[0]["to_state"], d[0]["actor"], d[0]["epoch"])')" \
	"('POWERING_ON', 'FAILED', 'leader', 7)"
is "events --json: time in RFC 3339 with zone, and the same instant as a number" \
	"$(admin power events --limit 1 --json | py '__import__("re").fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", d[0]["time"]) is not None and abs(__import__("datetime").datetime.fromisoformat(d[0]["time"]).timestamp() - d[0]["time_unix"]) < 1')" True
contains "events: none match" "$(admin power events --host cpu1 --since 1d)" "(no events)"
contains "events --since now: none newer" "$(admin power events --since now)" "(no events)"
at=$(mxq_sql "SELECT UNIX_TIMESTAMP(NOW() - INTERVAL 2 HOUR)")
is "events --since @EPOCH (the shared time parser)" "$(admin power events --since "@$at" | tail -n +2 | wc -l)" 4
is "events: option order does not matter" "$(admin power events --since 62m --host gpu1 | tail -n +2 | wc -l)" \
	"$(admin power events --host gpu1 --since 62m | tail -n +2 | wc -l)"
fails "events: bad --since" 2 "--since: 'yesterday' is not a time" admin power events --since yesterday
fails "events: bad date" 2 "is not a time" admin power events --since '2026-13-01 10:00'
fails "events: bad --limit" 2 "invalid --limit" admin power events --limit 0

# ------------------------------------------------------------ explain HOST

out=$(admin power explain gpu1)
contains "explain HOST: stored explanation" "$out" \
	"leader's explanation: off: idle since the last GPU job; woken for GPU demand"
contains "explain HOST: state and age" "$out" "gpu1: OFF for 1h00m"
contains "explain HOST: last reason" "$out" "$long_reason"
contains "explain HOST: mxqd status" "$out" "mxqd: EXITED"
out=$(admin power explain cpu2)
contains "explain HOST: failures" "$out" "failures: 2, last: boot deadline of 10m missed"
contains "explain HOST: FAILED needs clear" "$out" "mxqadmin power clear cpu2"
is "explain HOST --json: explanation" \
	"$(admin power explain idle1 --json | py '(d["explanation"], d["jobs_running"])')" \
	"('warm pool (1 of 1)', 0)"
fails "explain: unknown host" 1 "unknown host 'nosuch' (not in mxq_power; known: cpu1, cpu2, gpu1, idle1)" \
	admin power explain nosuch
fails "explain: HOST and --group together" 2 "either HOST or --group" \
	admin power explain gpu1 --group 1

# ----------------------------------------------------- explain --group

mxq_sql "INSERT INTO mxq_group (group_id, group_name, user_uid, user_name, user_gid, user_group,
	job_command, job_gpu, job_memory, group_jobs, group_jobs_inq) VALUES
	(2, 'train', 1001, 'bob', 1001, 'bob', 'train', 1, 2048, 3, 3)"
before=$(mxq_sql "SELECT COUNT(*), MAX(mtime) FROM mxq_power; SELECT COUNT(*) FROM mxq_power_event")
out=$(admin power explain --group 2 --power-config "$conf")
is "explain --group: exit 0" "$?" 0
out=$(echo "$out" | tr -s ' ')
contains "explain --group: names the group" "$out" "group 2 'train' of bob: 3 queued"
contains "explain --group: cpu1 excluded by the gpu rule" "$out" \
	"cpu1 ON gpu: the group needs more GPUs than the host has"
contains "explain --group: gpu1 qualifies" "$out" "gpu1 OFF qualified"
contains "explain --group: ON capacity absorbs nothing" "$out" \
	"absorbed by powered-on capacity: 0"
contains "explain --group: a woken gpu1 takes two (2 GPUs)" "$out" \
	"placed on nodes that would be woken: 2"
contains "explain --group: would wake gpu1" "$out" "wake gpu1 (OFF -> POWERING_ON): woken:"
contains "explain --group: says it is not acting" "$out" "nothing was done"
is "explain --group --json: the WAKE serves this demand" \
	"$(admin power explain --group 2 --power-config "$conf" --json |
	   py '[(a["hostname"], a["action"]) for a in d["serving_actions"]]')" "[('gpu1', 'WAKE')]"
is "explain --group writes nothing" \
	"$(mxq_sql "SELECT COUNT(*), MAX(mtime) FROM mxq_power; SELECT COUNT(*) FROM mxq_power_event")" \
	"$before"

mxq_sql "UPDATE mxq_power SET admin_off = 1 WHERE hostname = 'gpu1'"
out=$(admin power explain --group 2 --power-config "$conf")
contains "explain --group, admin-off host: nothing woken" "$out" "would wake: nothing"
contains "explain --group, admin-off host: says why" "$out" \
	"gpu1 (OFF): off: admin off: never woken automatically"
contains "explain --group, admin-off host: jobs unplaced" "$(echo "$out" | tr -s ' ')" \
	"left unplaced: 3"
mxq_sql "UPDATE mxq_power SET admin_off = 0 WHERE hostname = 'gpu1'"

# the idle times the leader learned come with its stored policy state
printf 'idle_time = auto\nmin_off_time = 5m\n' >"$MXQ_TEST_DIR/auto.conf"
idle1_reason() {
	admin power explain --group 2 --power-config "$MXQ_TEST_DIR/auto.conf" --json |
		py '[a["reason"] for a in d["actions"] if a["hostname"] == "idle1"][0]'
}
# nothing stored: gpu1's wake matches no power-off of this plan, nothing
# is learned, the idle time is a quarter of the break-even time
contains "explain --group, nothing stored: a quarter of the break-even time" "$(idle1_reason)" \
	"(idle time 1m23s)"
# stored: 20 gaps of the hosts without class counted, the cheapest
# candidate for them 2m4s (3/8 of the break-even time)
mxq_sql "UPDATE mxq_power_leader SET policy_state = 'v1 0 0 0 0 0 0 0 gaps * 20 124 0 0 0 0 0 0 20 0 0 0 0 0 0 0 0 0 0 0 0 2000 0 0 0 0 0'"
contains "explain --group: the leader's learned idle time" "$(idle1_reason)" \
	"(idle time 2m4s)"
mxq_sql "UPDATE mxq_power_leader SET policy_state = ''"

out=$(admin power explain --group 1 --power-config "$conf")
contains "explain --group without queued jobs" "$out" "pending demand: none for this group"
fails "explain --group: unknown group" 1 "unknown group 99" \
	admin power explain --group 99 --power-config "$conf"
printf 'idle_tme = 5m\n' >"$MXQ_TEST_DIR/bad.conf"
fails "explain --group: config errors name file and line" 1 "bad.conf:1:" \
	admin power explain --group 2 --power-config "$MXQ_TEST_DIR/bad.conf"

# -------------------------------------------------------- admin actions

out=$(admin power clear cpu2 --reason "PSU replaced")
is "clear: exit 0" "$?" 0
contains "clear: says what it did" "$out" "cpu2: cleared"
is "clear: FAILED -> UNKNOWN, failures reset" "$(power_row cpu2)" "UNKNOWN|0|0|||0"
is "clear: admin event" "$(mxq_sql "SELECT CONCAT_WS('|', from_state, to_state, actor, epoch)
	FROM mxq_power_event WHERE hostname = 'cpu2' ORDER BY event_id DESC LIMIT 1")" \
	"FAILED|UNKNOWN|admin|0"
contains "clear: event names the admin and the reason" \
	"$(mxq_sql "SELECT reason FROM mxq_power_event WHERE hostname = 'cpu2'
		ORDER BY event_id DESC LIMIT 1")" "$me: PSU replaced"
out=$(admin power clear cpu2)
is "clear again: exit 0" "$?" 0
contains "clear again: nothing to clear" "$out" "not FAILED (state UNKNOWN): nothing to clear"

admin power off idle1 --reason "rack maintenance" >/dev/null
is "off: exit 0" "$?" 0
is "off: request recorded with reason, admin_off set" "$(power_row idle1 | cut -d'|' -f1-4)" \
	"ON|1|0|OFF"
contains "off: request reason names the admin" "$(power_row idle1 | cut -d'|' -f5)" \
	"$me: rack maintenance"
is "off: admin event" "$(mxq_sql "SELECT CONCAT_WS('|', actor, from_state, to_state)
	FROM mxq_power_event WHERE hostname = 'idle1' ORDER BY event_id DESC LIMIT 1")" "admin|ON|ON"
contains "list shows the request" "$(admin power list | grep '^idle1 ')" "admin-off,request-OFF"
admin power on gpu1 --reason "GPU jobs waiting" >/dev/null
is "on: request recorded" "$(power_row gpu1 | cut -d'|' -f1-4)" "OFF|0|0|ON"

events_before=$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event")
fails "off without --reason: usage error" 2 "power off needs --reason" admin power off cpu1
fails "on with empty --reason: usage error" 2 "power on needs --reason" \
	admin power on cpu1 --reason ""
is "missing reason: nothing written" "$(power_row cpu1)|$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event")" \
	"ON|0|0|||0|$events_before"
fails "unknown host: exit 1 and the known hosts" 1 \
	"unknown host 'nosuch' (not in mxq_power; known: cpu1, cpu2, gpu1, idle1)" \
	admin power exclude nosuch
fails "off for an unknown host" 1 "unknown host 'gpu9'" admin power off gpu9 --reason x
fails "missing HOST" 2 "missing HOST" admin power exclude
fails "unknown power command" 2 "unknown command 'reboot'" admin power reboot cpu1

admin power exclude gpu1 --reason "firmware tests" >/dev/null
is "exclude: excluded set" "$(power_row gpu1 | cut -d'|' -f3)" 1
contains "exclude: list flags it" "$(admin power list | grep '^gpu1 ')" "excluded"
out=$(admin power exclude gpu1)
is "exclude again: exit 0" "$?" 0
contains "exclude again: nothing changed" "$out" "already excluded"
admin power include gpu1 >/dev/null
is "include: excluded cleared" "$(power_row gpu1 | cut -d'|' -f3)" 0
is "on, exclude, include: three admin events" "$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event
	WHERE hostname = 'gpu1' AND actor = 'admin'")" 3

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
