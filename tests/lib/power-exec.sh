#!/bin/sh
# tests/lib/power-exec.sh - a simulated node power switch for the exec
# transport of the power manager (mxqd --power-exec-command).
#
#   power-exec.sh HOST on       "power on": start HOST's mxqd in its own
#                               session (setsid), in the background
#   power-exec.sh HOST off      "power off": SIGTERM to HOST's mxqd, wait
#                               (bounded) until it exited, SIGKILL if not
#   power-exec.sh HOST status   print "on" while HOST's mxqd runs, else "off"
#   power-exec.sh HOST selfoff  for --poweroff-command of the node's mxqd
#                               (transport "self"): only logged, harmless
#
# Its mxqd gets --energy-boot none (it shares this machine's kernel, whose
# boot is not the node's). A "node" is a directory
# $MXQ_POWER_TEST_DIR/nodes/HOST/ written by
# tests/lib/power.sh:
#   opts      extra mxqd options, one per line (e.g. "--tags" "gpu")
#   pid       PID of the running mxqd (written here)
#   fail_on   if present: "on" fails (exit 1) - a broken BMC
#   fake_on   if present: "on" succeeds but starts nothing - a node that
#             never boots
#   fail_off  if present: "off" fails (exit 1)
#   crash_leader_on, crash_leader_off
#             if present (removed when used): "on"/"off" kills the leader
#             mxqd (the parent of the transport worker that runs this
#             script) with SIGKILL and does nothing - a leader that died
#             after writing its intent, before actuating it
#   slow_on, slow_off
#             if present: "on"/"off" first logs "slow SECS" and sleeps the
#             number of seconds the file holds - a BMC that answers late
# Every call is appended to $MXQ_POWER_TEST_DIR/exec.log as
#   EPOCH.NANOSECONDS HOST ACTION RESULT... caller=PID epoch=E pid=PID
# caller: the leader mxqd (parent of the transport worker that runs this
# script), epoch: MXQ_POWER_EPOCH the worker exported ("-" when called
# otherwise), pid: this script.
#
# The script runs with the environment of whoever calls it (the leader
# mxqd, or the test shell): MXQ_POWER_TEST_DIR, MXQ_BUILD_DIR and
# MXQ_MYSQL_DEFAULT_FILE must be exported. The node's mxqd is not a child
# of the test shell: its PID is in the pid file, and the test's cleanup
# kills it by that PID.

host=$1
action=$2
dir=${MXQ_POWER_TEST_DIR:?MXQ_POWER_TEST_DIR is not set}/nodes/$host
log=$MXQ_POWER_TEST_DIR/exec.log

say() {
	echo "$(date +%s.%N) $host $action $* caller=$caller epoch=${MXQ_POWER_EPOCH:--} pid=$$" >>"$log"
}

# True while PID $1 runs and is not a zombie (shell builtins only: this is
# polled while waiting for a node's mxqd to exit).
alive() {
	local _line _rest
	read -r _line 2>/dev/null <"/proc/$1/stat" || return 1
	_rest=${_line##*) }
	case ${_rest%% *} in ''|Z|X) return 1 ;; esac
	return 0
}

# The PID in the pid file, if that process is alive and is this node's
# mxqd (not a reused PID).
node_pid() {
	local _pid
	[ -f "$dir/pid" ] || return 1
	read -r _pid 2>/dev/null <"$dir/pid" || return 1
	case $_pid in ''|*[!0-9]*) return 1 ;; esac
	alive "$_pid" || return 1
	tr '\0' '\n' <"/proc/$_pid/cmdline" 2>/dev/null | grep -qxF -- "$dir/spool" || return 1
	echo "$_pid"
}

# $PPID is the leader's transport worker; field 4 of its stat is its
# parent, the leader (comm has no blanks: mxqd)
caller=$(cut -d' ' -f4 "/proc/$PPID/stat" 2>/dev/null)

if [ -z "$host" ] || [ ! -d "$dir" ]; then
	echo "power-exec.sh: unknown node '$host'" >&2
	[ -n "${MXQ_POWER_TEST_DIR:-}" ] && echo "$(date +%s.%N) $host $action unknown-node" >>"$log"
	exit 2
fi

case $action in
on|off)
	if [ -e "$dir/crash_leader_$action" ]; then
		rm -f "$dir/crash_leader_$action"
		say "crash-leader $caller"
		kill -KILL "$caller"
		exit 1
	fi
	if [ -s "$dir/slow_$action" ]; then
		say "slow $(cat "$dir/slow_$action")"
		sleep "$(cat "$dir/slow_$action")"
	fi
	;;
esac

case $action in
on)
	if [ -e "$dir/fail_on" ]; then
		say "failed"
		echo "power-exec.sh: $host: simulated power-on failure" >&2
		exit 1
	fi
	if [ -e "$dir/fake_on" ]; then
		say "ok-but-never-boots"
		exit 0
	fi
	if pid=$(node_pid); then
		say "already-on $pid"
		exit 0
	fi
	# the options file: one option or value per line
	set --
	if [ -f "$dir/opts" ]; then
		while IFS= read -r line; do
			set -- "$@" "$line"
		done <"$dir/opts"
	fi
	mkdir -p "$dir/spool" "$dir/tmp"
	rm -f "$dir/pid"
	# setsid: the node's mxqd must survive this script and the leader's
	# kill of the transport's process group; sh writes its own PID, then
	# becomes mxqd with exec
	# shellcheck disable=SC2016 # expanded by the inner sh
	setsid sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$dir/pid" \
		"$MXQ_BUILD_DIR/mxqd" --hostname "$host" \
		--spool "$dir/spool" --tmpdir "$dir/tmp" \
		--log "$dir/mxqd.log" --pid-file "$dir/mxqd.pid" \
		--poll-interval 0.2 --heartbeat-interval 1 --energy-boot none --allow-root-jobs \
		--poweroff-command "$0 $host selfoff" \
		-M "$MXQ_MYSQL_DEFAULT_FILE" "$@" \
		</dev/null >>"$dir/stderr" 2>&1 &
	# wait (bounded) for the pid file, so that "status" and "off" see it
	n=0
	while [ ! -s "$dir/pid" ] && [ "$n" -lt 100 ]; do
		sleep 0.01
		n=$((n + 1))
	done
	say "started $(cat "$dir/pid" 2>/dev/null)"
	exit 0
	;;
off)
	if [ -e "$dir/fail_off" ]; then
		say "failed"
		echo "power-exec.sh: $host: simulated power-off failure" >&2
		exit 1
	fi
	if ! pid=$(node_pid); then
		say "already-off"
		exit 0
	fi
	say "begin $pid"
	kill -TERM "$pid" 2>/dev/null
	n=0
	while alive "$pid"; do
		if [ "$n" -eq 750 ]; then
			say "sigkill $pid"
			kill -KILL "$pid" 2>/dev/null
		fi
		if [ "$n" -ge 1000 ]; then
			say "still-running $pid"
			exit 1
		fi
		sleep 0.02
		n=$((n + 1))
	done
	say "done $pid"
	exit 0
	;;
status)
	if node_pid >/dev/null; then
		echo on
	else
		echo off
	fi
	exit 0
	;;
selfoff)
	say "self-poweroff-requested"
	exit 0
	;;
*)
	echo "usage: power-exec.sh HOST on|off|status|selfoff" >&2
	exit 2
	;;
esac
