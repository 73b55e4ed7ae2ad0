# tests/lib/power.sh - power-managed test nodes and power manager leaders
# for integration tests.
#
# POSIX sh plus `local`. Source it after tests/lib/mariadb.sh,
# mxq_db_start and tests/lib/mxqd.sh (whose TAP helpers, wait_for,
# wait_until, now_cs, submit and mxqd_start it uses):
#
#   . "$(dirname -- "$0")/lib/mariadb.sh"
#   mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
#   . "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
#   . "$MXQ_SRC_DIR/tests/lib/power.sh"
#
# Nodes are switched by tests/lib/power-exec.sh, the exec transport: "on"
# starts the node's mxqd in its own session, "off" stops it with SIGTERM.
# A node's mxqd is therefore NOT a child of the test shell; its PID is in
# $MXQ_POWER_TEST_DIR/nodes/HOST/pid and the cleanup hook installed here
# kills it by that PID. Leaders are ordinary mxqd_start instances (children
# of the test shell) with --no-power-node --power-manager.
#
# Nodes
#   power_node_add HOST [MXQD OPTIONS...]
#       Create the node HOST (its mxq_power row with transport_on and
#       transport_off 'exec', created before its first boot so that no
#       other transport is ever used), power it on and wait (bounded) until
#       its mxqd registered and its row is ON. Options are passed to its
#       mxqd on every boot (default --slots 2 --memory 2G first).
#   power_node_boot HOST        power on (exec "on") and wait until ON
#   power_node_pid HOST         PID of its running mxqd, empty when off
#   power_node_running HOST     true while its mxqd runs
#   power_node_flag HOST FLAG on|off [CONTENT]
#       set/clear a failure flag of power-exec.sh: fail_on, fake_on,
#       fail_off, crash_leader_on, crash_leader_off, slow_on, slow_off
#       (CONTENT: the seconds of a slow_* flag; see power-exec.sh)
#   power_node_log HOST         path of its mxqd log
#   power_exec HOST ACTION      run the transport script as the leader would
#
# Leaders
#   power_conf FILE [KEY=VALUE...]
#       Write a power.conf with the fast test settings below, KEY=VALUE
#       replacing or adding settings (an empty VALUE drops the key).
#   power_leader_start NAME CONF [MXQD OPTIONS...]
#       mxqd_start NAME as a leader candidate: --no-power-node
#       --power-manager, the exec transport above (--power-exec-timeout
#       $POWER_EXEC_TIMEOUT, 30), --power-tick $POWER_TICK (0.5),
#       --power-lease $POWER_LEASE (3), and
#       prerequisites no job satisfies (a leader runs no jobs).
#   power_leader_log NAME       path of its log
#
# Reading the tables
#   power_state HOST            state of HOST's mxq_power row
#   power_wait_state SECS HOST STATE...   bounded wait for one of the states
#   power_epoch, power_holder   the leader row
#   power_last_event_id         highest mxq_power_event id (0 when none)
#   power_events HOST [AFTER_ID]
#       one line "FROM>TO actor epoch" per event of HOST after AFTER_ID
#   power_wakes [AFTER_ID]      hosts with an OFF>POWERING_ON event after
#                               AFTER_ID, sorted, space-separated
#   power_admin ACTION HOST [REASON]
#       `mxqadmin power ACTION HOST --reason REASON` (on, off, clear)
#   admin_check ACTION HOST REASON
#       the same as one TAP line, checking that the row changed; when it
#       did not, "not ok ... # BUG" and the SQL equivalent (power_admin_sql
#       ACTION HOST REASON) is applied so that the test can go on
#
#   power_request HOST ON|OFF   an admin request for the leader, as SQL
#   power_failure HOST          failure_reason of HOST's row
#   power_call_secs KIND HOST   seconds the leader's first failed KIND call
#                               ("wake", "power off") of HOST took, from its
#                               log line "power: KIND of HOST failed after S s"
#
# Secrets (transport tests with a throwaway BMC password)
#   secret_watch_start PASSWORD sample every /proc/*/cmdline for PASSWORD
#                               (a background loop, every 0.1 s)
#   secret_checks PASSWORD DIR...
#       stop the sampler; TAP lines: no process had PASSWORD in its argv,
#       no file below DIR... and no mxq_power / mxq_power_event text has it
#
# Jobs
#   job_wait SECS JOB STATUS    bounded wait for a job status (1000 FINISHED)
#   host_of JOB                 host_hostname of a job
#
# Environment set: MXQ_POWER_TEST_DIR (exported: power-exec.sh needs it),
# power_exec_bin. Read: MXQ_SRC_DIR, MXQ_BUILD_DIR, MXQ_TEST_DIR,
# MXQ_MYSQL_DEFAULT_FILE, POWER_TICK, POWER_LEASE, POWER_EXEC_TIMEOUT.

MXQ_POWER_TEST_DIR=$MXQ_TEST_DIR/power
export MXQ_POWER_TEST_DIR
mkdir -p "$MXQ_POWER_TEST_DIR/nodes"
: >"$MXQ_POWER_TEST_DIR/exec.log"
power_exec_bin=$MXQ_SRC_DIR/tests/lib/power-exec.sh
mxqadmin_bin=$MXQ_BUILD_DIR/mxqadmin
POWER_TICK=${POWER_TICK:-0.5}
POWER_LEASE=${POWER_LEASE:-3}
# also the in-flight window a new leader waits out (+1 s) for the nodes
# it inherits in a transition
POWER_EXEC_TIMEOUT=${POWER_EXEC_TIMEOUT:-30}
power__nodes=

# ------------------------------------------------------------------ nodes

power_node_dir() {
	echo "$MXQ_POWER_TEST_DIR/nodes/$1"
}

power_node_log() {
	echo "$MXQ_POWER_TEST_DIR/nodes/$1/mxqd.log"
}

power_exec() {
	"$power_exec_bin" "$1" "$2"
}

power_node_pid() {
	local _f _pid _state
	_f=$MXQ_POWER_TEST_DIR/nodes/$1/pid
	[ -f "$_f" ] || return 0
	read -r _pid 2>/dev/null <"$_f" || return 0
	case $_pid in ''|*[!0-9]*) return 0 ;; esac
	mxq__alive "$_pid" || return 0
	tr '\0' '\n' <"/proc/$_pid/cmdline" 2>/dev/null |
		grep -qxF -- "$MXQ_POWER_TEST_DIR/nodes/$1/spool" || return 0
	echo "$_pid"
}

power_node_running() {
	[ -n "$(power_node_pid "$1")" ]
}

power_node_flag() {
	if [ "$3" = on ]; then
		printf '%s' "${4:-}" >"$MXQ_POWER_TEST_DIR/nodes/$1/$2"
	else
		rm -f "$MXQ_POWER_TEST_DIR/nodes/$1/$2"
	fi
}

power__show_node() {
	local _d
	_d=$MXQ_POWER_TEST_DIR/nodes/$1
	{
		echo "node $1: stderr:"
		tail -n 10 "$_d/stderr" 2>/dev/null
		echo "node $1: end of log:"
		tail -n 20 "$_d/mxqd.log" 2>/dev/null
		echo "node $1: power row:"
		mxq_sql "SELECT state, desired_state, reason FROM mxq_power WHERE hostname = '$1'"
	} | diag
}

power_node_boot() {
	local _pid
	power_exec "$1" on || { echo "power_node_boot: exec on $1 failed" | diag; return 1; }
	_pid=$(power_node_pid "$1")
	if [ -z "$_pid" ]; then
		echo "power_node_boot: mxqd of $1 does not run" | diag
		power__show_node "$1"
		return 1
	fi
	if ! wait_for 15 "(SELECT COUNT(*) FROM mxq_daemon WHERE hostname = '$1'
		AND daemon_pid = $_pid AND status NOT IN (250, 255)) = 1
		AND (SELECT state FROM mxq_power WHERE hostname = '$1') = 'ON'"; then
		power__show_node "$1"
		return 1
	fi
}

power_node_add() {
	local _h _d
	_h=$1
	shift
	_d=$MXQ_POWER_TEST_DIR/nodes/$_h
	mkdir -p "$_d/spool" "$_d/tmp" || return 1
	: >"$_d/opts"
	for _o in --slots 2 --memory 2G "$@"; do
		printf '%s\n' "$_o" >>"$_d/opts"
	done
	case " $power__nodes " in
	*" $_h "*) ;;
	*) power__nodes="$power__nodes $_h" ;;
	esac
	mxq_sql "INSERT INTO mxq_power (hostname, state, transport_on, transport_off, reason)
		VALUES ('$_h', 'UNKNOWN', 'exec', 'exec', 'created by the test')" || return 1
	power_node_boot "$_h"
}

# Stop every node's mxqd (SIGINT: running jobs are killed), bounded, then
# SIGKILL; then what their jobs left behind.
power_cleanup() {
	local _h _pid _end
	for _h in $power__nodes; do
		_pid=$(power_node_pid "$_h")
		[ -n "$_pid" ] && kill -INT "$_pid" 2>/dev/null
	done
	_end=$(( $(now_cs) + 1000 ))
	for _h in $power__nodes; do
		while [ -n "$(power_node_pid "$_h")" ] && [ "$(now_cs)" -lt "$_end" ]; do
			sleep 0.05
		done
		_pid=$(power_node_pid "$_h")
		if [ -n "$_pid" ]; then
			kill -KILL "$_pid" 2>/dev/null
			while mxq__alive "$_pid"; do sleep 0.05; done
		fi
		mxqd__kill_spool_leftovers "$MXQ_POWER_TEST_DIR/nodes/$_h/spool"
	done
}

# Leaders first (no more wakes), then the nodes.
mxq_test_cleanup_hook() {
	secret__stop
	mxqd_cleanup
	power_cleanup
	power_cleanup
}

# ---------------------------------------------------------------- leaders

power_conf() {
	local _f
	_f=$1
	shift
	power_conf_write "$_f" "idle_time=2s min_on_time=0 min_off_time=0 warm_pool=0
		suspend_rate=0 resume_rate=0 max_booting=0 max_cycles_per_day=0
		breaker_failures=0 boot_time=1s boot_deadline=30s
		shutdown_deadline=30s drain_timeout=60s" "$@"
}

power_leader_start() {
	local _n _c
	_n=$1
	_c=$2
	shift 2
	mxqd_start "$_n" --no-power-node --power-manager --power-config "$_c" \
		--power-exec-command "$power_exec_bin" --power-exec-timeout "$POWER_EXEC_TIMEOUT" \
		--power-tick "$POWER_TICK" --power-lease "$POWER_LEASE" \
		--poweroff-command /bin/false \
		--slots 1 --memory 1G --prerequisites power_test_leader_runs_no_jobs "$@"
}

power_leader_log() {
	echo "$(mxqd_dir "$1")/mxqd.log"
}

# ----------------------------------------------------------- the tables

power_state() {
	mxq_sql "SELECT state FROM mxq_power WHERE hostname = '$1'"
}

power_wait_state() {
	local _secs _h _in _s
	_secs=$1
	_h=$2
	shift 2
	_in=
	for _s in "$@"; do
		_in="$_in${_in:+, }'$_s'"
	done
	wait_for "$_secs" "(SELECT state FROM mxq_power WHERE hostname = '$_h') IN ($_in)"
}

power_epoch() {
	mxq_sql "SELECT epoch FROM mxq_power_leader WHERE id = 1"
}

power_holder() {
	mxq_sql "SELECT holder FROM mxq_power_leader WHERE id = 1"
}

power_request() {
	mxq_sql "UPDATE mxq_power SET admin_request = '$2', admin_request_reason = 'test: $2',
		admin_off = $( [ "$2" = OFF ] && echo 1 || echo 0 ) WHERE hostname = '$1'"
}

power_failure() {
	mxq_sql "SELECT failure_reason FROM mxq_power WHERE hostname = '$1'"
}

power_call_secs() {
	awk -v p="power: $1 of $2 failed after " '
	index($0, p) { sub(/.* failed after /, ""); sub(/ s:.*/, ""); print; exit }
	' "$(power_leader_log leader)"
}

# ---------------------------------------------------------------- secrets

secret__pid=

secret_watch_start() {
	printf '%s\n' "$1" >"$MXQ_TEST_DIR/secret.pattern"
	: >"$MXQ_TEST_DIR/secret.hits"
	(
		while :; do
			grep -lsF -f "$MXQ_TEST_DIR/secret.pattern" /proc/[0-9]*/cmdline \
				>>"$MXQ_TEST_DIR/secret.hits" 2>/dev/null
			sleep 0.1
		done
	) &
	secret__pid=$!
}

secret__stop() {
	[ -n "$secret__pid" ] || return 0
	kill "$secret__pid" 2>/dev/null
	wait "$secret__pid" 2>/dev/null
	secret__pid=
}

secret_checks() {
	local _pw _hits
	_pw=$1
	shift
	secret__stop
	if [ -s "$MXQ_TEST_DIR/secret.hits" ]; then
		not_ok "no process had the BMC password in its arguments"
		sort -u "$MXQ_TEST_DIR/secret.hits" | diag
	else
		ok "no process had the BMC password in its arguments"
	fi
	_hits=$(grep -rlsF -f "$MXQ_TEST_DIR/secret.pattern" "$@" 2>/dev/null)
	is "no mxqd log or output contains the BMC password" "$_hits" ""
	is "no mxq_power or mxq_power_event text contains the BMC password" \
		"$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event WHERE reason LIKE '%$_pw%'") $(mxq_sql \
		"SELECT COUNT(*) FROM mxq_power WHERE CONCAT(reason, failure_reason, explanation) LIKE '%$_pw%'")" \
		"0 0"
}

power_last_event_id() {
	mxq_sql "SELECT COALESCE(MAX(event_id), 0) FROM mxq_power_event"
}

power_events() {
	mxq_sql "SELECT CONCAT(from_state, '>', to_state, ' ', actor, ' ', epoch)
		FROM mxq_power_event WHERE hostname = '$1' AND event_id > ${2:-0}
		AND from_state <> to_state ORDER BY event_id"
}

power_wakes() {
	mxq_sql "SELECT DISTINCT hostname FROM mxq_power_event WHERE event_id > ${1:-0}
		AND to_state = 'POWERING_ON' ORDER BY hostname" | tr '\n' ' ' | sed 's/ $//'
}

power_admin() {
	"$mxqadmin_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" power "$1" "$2" --reason "${3:-by the test}"
}

# The effect `mxqadmin power ACTION HOST` must have had: 1 when it shows.
power__admin_applied() {
	case $1 in
	off) mxq_sql "SELECT admin_off = 1 AND admin_request IN ('OFF', '')
		FROM mxq_power WHERE hostname = '$2'" ;;
	on) mxq_sql "SELECT admin_off = 0 FROM mxq_power WHERE hostname = '$2'" ;;
	clear) mxq_sql "SELECT state <> 'FAILED' FROM mxq_power WHERE hostname = '$2'" ;;
	esac
}

# What mxq_power_db_admin() writes for on, off and clear, in SQL.
power_admin_sql() {
	local _t
	_t="$1 by test: $3"
	case $1 in
	off|on)
		mxq_sql "UPDATE mxq_power SET admin_request = UPPER('$1'),
			admin_request_reason = '$_t', admin_off = ('$1' = 'off'), reason = '$_t'
			WHERE hostname = '$2';
			INSERT INTO mxq_power_event (hostname, from_state, to_state, reason, epoch, actor)
			SELECT hostname, state, state, '$_t', 0, 'admin' FROM mxq_power
			WHERE hostname = '$2'" ;;
	clear)
		mxq_sql "INSERT INTO mxq_power_event (hostname, from_state, to_state, reason, epoch, actor)
			SELECT hostname, state, 'UNKNOWN', '$_t', 0, 'admin' FROM mxq_power
			WHERE hostname = '$2' AND state = 'FAILED';
			UPDATE mxq_power SET state = 'UNKNOWN', state_since = NOW(3), failure_count = 0,
			failure_reason = '', reason = '$_t' WHERE hostname = '$2' AND state = 'FAILED'" ;;
	esac
}

# admin_check ACTION HOST REASON: one TAP line for `mxqadmin power ACTION
# HOST --reason REASON`. When the command did not change the row, the
# line is "not ok ... # BUG: ..." and the SQL equivalent is applied, so
# that the rest of the test still exercises the leader.
admin_check() {
	local _out _rc
	_out=$(power_admin "$1" "$2" "$3" 2>&1)
	_rc=$?
	if [ "$_rc" = 0 ] && [ "$(power__admin_applied "$1" "$2")" = 1 ]; then
		ok "mxqadmin power $1 $2 --reason $3"
		return 0
	fi
	not_ok "mxqadmin power $1 $2 --reason $3 # BUG: row unchanged (exit $_rc: $_out);" \
		"the admin action did not reach mxq_power"
	power_admin_sql "$1" "$2" "$3"
	return 1
}

# ------------------------------------------------------------------- jobs

job_wait() {
	wait_for "$1" "(SELECT job_status FROM mxq_job WHERE job_id = $2) = $3"
}

host_of() {
	mxq_sql "SELECT host_hostname FROM mxq_job WHERE job_id = $1"
}
