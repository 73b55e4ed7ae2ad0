# tests/lib/mxqd.sh - mxqd instances, bounded waits and TAP output for
# integration tests.
#
# POSIX sh. Source it AFTER tests/lib/mariadb.sh and after mxq_db_start
# (every path lives under $MXQ_TEST_DIR):
#
#   . "$(dirname -- "$0")/lib/mariadb.sh"
#   . "$(dirname -- "$0")/lib/mxqd.sh"
#   mxq_db_start || bail "no database"
#
# mxqd instances
#   mxqd_start HOST [MXQD OPTIONS...]
#       Start `mxqd --hostname HOST` as a child of the test shell with every
#       path explicit under $MXQ_TEST_DIR/mxqd/HOST/ (spool/, tmp/,
#       mxqd.log, mxqd.pid, stderr), --poll-interval 0.1,
#       --heartbeat-interval 1, --energy-boot none (test nodes share this
#       machine's kernel: its boot is not theirs) and the test database;
#       extra options are appended (later options win). $mxqd_wrap, when
#       set, is a command that execs mxqd (e.g. "unshare --time --boottime
#       N": the PID stays mxqd's). Jobs of these tests run as root (the
#       test's own uid), so --allow-root-jobs is passed unless the test sets
#       mxqd_root_jobs= (empty) first: tests/test_trust.sh does, to check
#       the identity rules with real users. Waits (bounded) until the daemon
#       has registered its mxq_daemon row. Returns 0 when it runs, 1 when it
#       exited or did not register in time (its stderr and log tail are
#       shown as TAP diagnostics). A HOST can be started again after it
#       stopped (same spool: recovery tests).
#   mxqd_pid HOST           PID of the running instance (empty if none)
#   mxqd_daemon_id HOST     daemon_id of its current mxq_daemon row
#   mxqd_signal HOST SIG    send SIG to the instance
#   mxqd_wait HOST [SECS]   wait (bounded, default 30 s) until it exited;
#                           sets $mxqd_rc to its exit status (or "timeout")
#   mxqd_stop HOST [SIG] [SECS]
#                           SIG (default TERM), then mxqd_wait
#   mxqd_forget HOST        after the instance was killed with SIGKILL and
#                           reaped: drop it from the list
#   mxqd_cleanup            stop every instance still running (SIGINT, then
#                           SIGKILL after 10 s) and kill what their jobs
#                           left behind (reapers and job process groups
#                           named in the spool pid files). Called from the
#                           default mxq_test_cleanup_hook below; a test that
#                           defines its own hook must call it there.
#   mxqd_dir HOST           $MXQ_TEST_DIR/mxqd/HOST
#
# Waiting
#   wait_for SECS "SQL"     poll (every 0.1 s) until the SQL's single value
#                           is 1; 0 when it became true, 1 on timeout with a
#                           diagnostic naming the condition and its last value
#   wait_until SECS CMD...  the same for a shell command's success
#   now_cs                  hundredths of seconds since the epoch
#
# TAP
#   ok DESC, not_ok DESC, diag (filter), check DESC CMD..., is DESC GOT WANT,
#   contains DESC TEXT NEEDLE, tap_done (prints the plan "1..N"),
#   section TITLE (a comment line with the seconds since the lib was sourced)
#
# Environment read: MXQ_BUILD_DIR, MXQ_TEST_DIR, MXQ_MYSQL_DEFAULT_FILE.

mxqd_bin=$MXQ_BUILD_DIR/mxqd
mxqsub_bin=$MXQ_BUILD_DIR/mxqsub
mxqkill_bin=$MXQ_BUILD_DIR/mxqkill
mxqd__hosts=
mxqd_root_jobs=--allow-root-jobs
mxqd_wrap=

# ------------------------------------------------------------------ TAP

. "$MXQ_SRC_DIR/tests/lib/tap.sh"
section() {
	echo "# --- $* (at $(( ($(now_cs) - tap_t0) / 100 ))s)"
}

# power_conf_write FILE DEFAULTS [KEY=VALUE...]: a power.conf for a test:
# the KEY=VALUE arguments, then every KEY=VALUE word of DEFAULTS whose key
# was not given. KEY= (empty) leaves that key out (the built-in default).
power_conf_write() {
	local _f _defaults _kv _k _seen
	_f=$1 _defaults=$2
	shift 2
	: >"$_f"
	_seen=" "
	for _kv in "$@"; do
		_k=${_kv%%=*}
		_seen="$_seen$_k "
		[ -n "${_kv#*=}" ] && printf '%s = %s\n' "$_k" "${_kv#*=}" >>"$_f"
	done
	for _kv in $_defaults; do
		_k=${_kv%%=*}
		case $_seen in *" $_k "*) continue ;; esac
		printf '%s = %s\n' "$_k" "${_kv#*=}" >>"$_f"
	done
	return 0
}

# --------------------------------------------------------------- waiting

# Hundredths of seconds since the epoch (for bounded loops).
now_cs() {
	_t=$(date +%s.%N)
	_s=${_t%.*}
	_f=${_t#*.}
	_f=${_f%"${_f#??}"}
	echo $((_s * 100 + 1${_f} - 100))
}

wait_for() {
	_wf_secs=$1
	_wf_sql=$2
	_wf_end=$(( $(now_cs) + _wf_secs * 100 ))
	while :; do
		_wf_val=$(mxq_sql "SELECT ($_wf_sql)" 2>&1)
		[ "$_wf_val" = 1 ] && return 0
		if [ "$(now_cs)" -ge "$_wf_end" ]; then
			printf 'wait_for: timed out after %ss waiting for: %s\nlast value: %s\n' \
				"$_wf_secs" "$_wf_sql" "$_wf_val" | diag
			return 1
		fi
		sleep 0.1
	done
}

wait_until() {
	_wu_secs=$1
	shift
	_wu_end=$(( $(now_cs) + _wu_secs * 100 ))
	while :; do
		"$@" && return 0
		if [ "$(now_cs)" -ge "$_wu_end" ]; then
			printf 'wait_until: timed out after %ss waiting for: %s\n' "$_wu_secs" "$*" | diag
			return 1
		fi
		sleep 0.1
	done
}

tap_t0=$(now_cs)

# ------------------------------------------------- a relay that cuts answers

# Start tests/db_cut.py in front of the private MariaDB with its control
# directory $1 (created): sets db_cut_pid and writes $1/relay.cnf, a client
# configuration that connects through it. 0 once it listens. Stopped by
# db_cut_stop (a test's cleanup hook calls it).
db_cut_pid=
db_cut_start() {
	mkdir -p "$1" || return 1
	_dc_port=$(mxq_free_port tcp)
	python3 "$MXQ_SRC_DIR/tests/db_cut.py" --dir "$1" --port "$_dc_port" \
		--to "$MXQ_TEST_DB_PORT" </dev/null >>"$1/relay.out" 2>&1 &
	db_cut_pid=$!
	sed "s/^port=.*/port=$_dc_port/" "$MXQ_MYSQL_DEFAULT_FILE_TCP" >"$1/relay.cnf" &&
		wait_until 10 [ -s "$1/port" ]
}

db_cut_stop() {
	[ -n "$db_cut_pid" ] || return 0
	kill -TERM "$db_cut_pid" 2>/dev/null
	wait "$db_cut_pid" 2>/dev/null
	db_cut_pid=
}

# ------------------------------------------------------------- instances

mxqd__var() {
	# shell variable name for HOST (host names may contain - and .)
	printf 'mxqd__pid_%s' "$(printf '%s' "$1" | tr -c 'A-Za-z0-9_' '_')"
}

mxqd_dir() {
	echo "$MXQ_TEST_DIR/mxqd/$1"
}

mxqd_pid() {
	eval "echo \${$(mxqd__var "$1"):-}"
}

mxqd__set_pid() {
	eval "$(mxqd__var "$1")=$2"
}

mxqd_daemon_id() {
	mxq_sql "SELECT MAX(daemon_id) FROM mxq_daemon WHERE hostname = '$1'"
}

mxqd__show_failure() {
	_d=$(mxqd_dir "$1")
	{
		echo "mxqd $1: stderr:"
		cat "$_d/stderr" 2>/dev/null
		echo "mxqd $1: end of log:"
		tail -n 20 "$_d/mxqd.log" 2>/dev/null
	} | diag
}

mxqd_start() {
	_host=$1
	shift
	if [ -n "$(mxqd_pid "$_host")" ]; then
		echo "mxqd_start: $_host already runs (pid $(mxqd_pid "$_host"))" | diag
		return 1
	fi
	_d=$(mxqd_dir "$_host")
	mkdir -p "$_d/spool" "$_d/tmp" || return 1
	: >"$_d/stderr"
	# shellcheck disable=SC2086
	$mxqd_wrap "$mxqd_bin" --hostname "$_host" \
		--spool "$_d/spool" --tmpdir "$_d/tmp" \
		--log "$_d/mxqd.log" --pid-file "$_d/mxqd.pid" \
		--poll-interval 0.1 --heartbeat-interval 1 --energy-boot none $mxqd_root_jobs \
		-M "$MXQ_MYSQL_DEFAULT_FILE" "$@" \
		</dev/null >>"$_d/stderr" 2>&1 &
	_pid=$!
	mxqd__set_pid "$_host" "$_pid"
	case " $mxqd__hosts " in
	*" $_host "*) ;;
	*) mxqd__hosts="$mxqd__hosts $_host" ;;
	esac
	_end=$(( $(now_cs) + 1500 ))
	while :; do
		if [ "$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon WHERE hostname = '$_host'
			AND daemon_pid = $_pid AND status NOT IN (250, 255)")" = 1 ]; then
			return 0
		fi
		if ! mxq__alive "$_pid"; then
			wait "$_pid"
			echo "mxqd_start: mxqd $_host exited with status $? during start-up" | diag
			mxqd__set_pid "$_host" ""
			mxqd__show_failure "$_host"
			return 1
		fi
		if [ "$(now_cs)" -ge "$_end" ]; then
			echo "mxqd_start: mxqd $_host (pid $_pid) did not register within 15s" | diag
			mxqd__show_failure "$_host"
			return 1
		fi
		sleep 0.05
	done
}

mxqd_signal() {
	_pid=$(mxqd_pid "$1")
	[ -n "$_pid" ] || return 1
	kill -"$2" "$_pid"
}

mxqd_wait() {
	_host=$1
	_secs=${2:-30}
	_pid=$(mxqd_pid "$_host")
	mxqd_rc=
	if [ -z "$_pid" ]; then
		mxqd_rc=none
		return 1
	fi
	_end=$(( $(now_cs) + _secs * 100 ))
	while mxq__alive "$_pid"; do
		if [ "$(now_cs)" -ge "$_end" ]; then
			mxqd_rc=timeout
			echo "mxqd_wait: mxqd $_host (pid $_pid) still runs after ${_secs}s" | diag
			return 1
		fi
		sleep 0.05
	done
	wait "$_pid"
	mxqd_rc=$?
	mxqd__set_pid "$_host" ""
	return 0
}

mxqd_stop() {
	mxqd_signal "$1" "${2:-TERM}" || { mxqd_rc=none; return 1; }
	mxqd_wait "$1" "${3:-30}"
}

mxqd_forget() {
	_pid=$(mxqd_pid "$1")
	[ -n "$_pid" ] && wait "$_pid" 2>/dev/null
	mxqd__set_pid "$1" ""
}

# Kill the reapers and job process groups a spool directory names.
mxqd__kill_spool_leftovers() {
	for _pf in "$1"/*.pid; do
		[ -f "$_pf" ] || continue
		read -r _reaper _job _rest <"$_pf" || continue
		for _p in "$_job" "$_reaper"; do
			case $_p in ''|*[!0-9]*|0|1) continue ;; esac
			# only while it still is a session leader (ours, not a reused pid)
			_sid=$(sed 's/^.*) //' "/proc/$_p/stat" 2>/dev/null | cut -d' ' -f4)
			[ "$_sid" = "$_p" ] || continue
			kill -KILL "-$_p" 2>/dev/null
			kill -KILL "$_p" 2>/dev/null
		done
	done
}

mxqd_cleanup() {
	for _h in $mxqd__hosts; do
		_pid=$(mxqd_pid "$_h")
		[ -n "$_pid" ] || continue
		kill -INT "$_pid" 2>/dev/null
	done
	for _h in $mxqd__hosts; do
		_pid=$(mxqd_pid "$_h")
		[ -n "$_pid" ] || continue
		if ! mxqd_wait "$_h" 10 >/dev/null; then
			kill -KILL "$_pid" 2>/dev/null
			wait "$_pid" 2>/dev/null
			mxqd__set_pid "$_h" ""
		fi
	done
	for _h in $mxqd__hosts; do
		mxqd__kill_spool_leftovers "$(mxqd_dir "$_h")/spool"
	done
}

mxq_test_cleanup_hook() {
	mxqd_cleanup
}

# ------------------------------------------------------------ submitting

# mxqsub against the test database; prints the job id on success.
submit() {
	_out=$("$mxqsub_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" "$@") || return 1
	printf '%s\n' "$_out" | sed -n 's/^mxq_job_id=//p'
}

# Copy job $1 (its command, files, group) until its group holds $2 jobs,
# in one INSERT: a backlog for benchmarks without $2 mxqsub runs.
clone_job() {
	mxq_sql "SET SESSION max_recursive_iterations = $2 + 10;
		INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
			job_stdout, job_stderr, job_umask, host_submit)
		WITH RECURSIVE seq (n) AS (SELECT 2 UNION ALL SELECT n + 1 FROM seq WHERE n < $2)
		SELECT t.job_priority, t.group_id, t.job_workdir, t.job_argc, t.job_argv,
			t.job_stdout, t.job_stderr, t.job_umask, t.host_submit
		FROM seq JOIN mxq_job t ON t.job_id = $1"
}

# Group id of a job.
group_of() {
	mxq_sql "SELECT group_id FROM mxq_job WHERE job_id = $1"
}

# Job status.
status_of() {
	mxq_sql "SELECT job_status FROM mxq_job WHERE job_id = $1"
}

# Rows of groups whose counters differ from COUNT(*) over their jobs, by
# the categories of mysql/create_tables.sql; empty when all agree.
counter_mismatches() {
	mxq_sql "SELECT g.group_id,
		CONCAT_WS(' ', g.group_jobs, g.group_jobs_inq, g.group_jobs_running,
			g.group_jobs_finished, g.group_jobs_failed, g.group_jobs_cancelled,
			g.group_jobs_unknown, g.group_slots_running) AS have,
		CONCAT_WS(' ', COUNT(j.job_id),
			COALESCE(SUM(j.job_status = 0), 0),
			COALESCE(SUM(j.job_status IN (100, 150, 200, 250, 300, 350, 399, 989)), 0),
			COALESCE(SUM(j.job_status = 1000), 0),
			COALESCE(SUM(j.job_status IN (400, 750, 1024)), 0),
			COALESCE(SUM(j.job_status = 990), 0),
			COALESCE(SUM(j.job_status IN (755, 999)), 0),
			COALESCE(SUM(IF(j.job_status IN (100, 150, 200, 250, 300, 350, 399, 989),
				j.host_slots, 0)), 0)) AS want
		FROM mxq_group g LEFT JOIN mxq_job j ON j.group_id = g.group_id
		GROUP BY g.group_id HAVING have <> want"
}
