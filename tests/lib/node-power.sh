#!/bin/sh
# tests/lib/node-power.sh - the power switch of a simulated cluster node.
#
# One script, three callers:
#
#   node-power.sh HOST on|off|status     the exec transport of the power
#                                        manager (mxqd --power-exec-command)
#                                        and the test shell
#   node-power.sh HOST selfoff           the node's own --poweroff-command
#                                        (transport "self")
#   node-power.sh --chassis HOST get power | set power 0|1 | set shutdown 1
#                                        the chassis_control program of the
#                                        node's simulated BMC (ipmi_sim);
#                                        other "set" requests are accepted
#   node-power.sh --ssh-command HOST     the forced command (authorized_keys
#                                        command=) of the power manager's
#                                        ssh key for HOST: drain | poweroff
#                                        in SSH_ORIGINAL_COMMAND
#   node-power.sh --wol-listen PORT      a Wake-on-LAN listener on
#                                        127.0.0.1:PORT: a valid magic
#                                        packet for a node's MAC powers the
#                                        node on (python3, runs until killed)
#
# Any of them may start with "--dir DIR" (the cluster directory); without
# it $MXQ_CLUSTER_DIR is used. tests/lib/cluster.sh writes the node
# directories DIR/nodes/HOST/:
#   opts        mxqd options, one per line
#   boot_delay  seconds between power on and the start of mxqd
#   mac         the node's (made up) MAC address, for Wake-on-LAN nodes
#   never_boots if present: power on succeeds, but mxqd is never started
#   fail_on     if present: "on" (exec) fails with exit status 1
# and reads DIR/env (MXQ_BUILD_DIR, MXQ_MYSQL_DEFAULT_FILE): the callers
# (ipmi_sim, mxqd, a detached helper) need not carry the test's environment.
#
# A node's "power supply" is one process group (setsid): a shell that
# waits out the boot delay, then runs the node's mxqd and waits for it,
# with --energy-boot sim-SUPPLYPID-ONTIME@ONTIME: each power-on is a boot
# of its own, whose overhead (power-on to mxqd's first sample) that node's
# mxqd records once, also when it is restarted (mxq_energy(7)).
# Power on = that group exists; power off = SIGTERM to mxqd, wait (bounded)
# until the group is gone, SIGKILL to the group after POWER_OFF_WAIT
# seconds (default 10; a hard off at the BMC: 2). The group's PID is in
# DIR/nodes/HOST/pid; processes started here in the background (the
# soft-off helper) append their PID to DIR/nodes/HOST/helpers, so that the
# test's cleanup can kill everything by PID. Each power change is appended
# to DIR/nodes/HOST/power.log as "EPOCH.NS on|up|off" (up = mxqd started),
# every call to DIR/calls.log as "EPOCH.NS HOST CALLER ACTION RESULT".

dir=${MXQ_CLUSTER_DIR:-}
if [ "${1:-}" = --dir ]; then
	dir=$2
	shift 2
fi
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
	echo "node-power.sh: no cluster directory (--dir DIR or MXQ_CLUSTER_DIR)" >&2
	exit 2
fi
MXQ_CLUSTER_DIR=$dir
export MXQ_CLUSTER_DIR
[ -f "$dir/env" ] && . "$dir/env"
# the path of this script, for the commands it hands to others
self_path() {
	echo "$(cd "$(dirname -- "$0")" && pwd -P)/$(basename -- "$0")"
}

now() {
	date +%s.%N
}

# proc_stat PID: the process's state and parent into _st and _ppid, from
# /proc/PID/stat with shell builtins only (ipmi_sim waits for "get power")
proc_stat() {
	local _l
	[ -r "/proc/$1/stat" ] || return 1
	read -r _l <"/proc/$1/stat" 2>/dev/null || return 1
	_l=${_l##*) }
	set -- $_l
	_st=$1 _ppid=$2
	case $_st in ''|Z|X) return 1 ;; esac
}

# The PID of HOST's power supply group while it exists: alive, and its
# working directory is the node directory (not a reused PID).
supply_pid() {
	local _pid
	[ -f "$node/pid" ] || return 1
	read -r _pid <"$node/pid" 2>/dev/null || return 1
	case $_pid in ''|*[!0-9]*) return 1 ;; esac
	proc_stat "$_pid" || return 1
	# -ef: dash and bash have it (the supply runs in its node directory)
	# shellcheck disable=SC3013
	[ "/proc/$_pid/cwd" -ef "$node" ] || return 1
	echo "$_pid"
}

# The PID of HOST's mxqd while it runs: a child of the supply.
mxqd_pid() {
	local _pid _sup
	_sup=$(supply_pid) || return 1
	[ -f "$node/mxqd.pid" ] || return 1
	read -r _pid <"$node/mxqd.pid" 2>/dev/null || return 1
	case $_pid in ''|*[!0-9]*) return 1 ;; esac
	proc_stat "$_pid" || return 1
	[ "$_ppid" = "$_sup" ] || return 1
	echo "$_pid"
}

note() {
	echo "$(now) $host $caller $action $*" >>"$dir/calls.log"
}

power_on() {
	local _delay _n _line
	if supply_pid >/dev/null; then
		note "already-on"
		return 0
	fi
	_delay=$(cat "$dir/boot_delay" 2>/dev/null)
	[ -f "$node/boot_delay" ] && _delay=$(cat "$node/boot_delay")
	mkdir -p "$node/spool" "$node/tmp"
	rm -f "$node/pid" "$node/mxqd.pid" "$node/drained"
	# the options file: one option or value per line
	set --
	if [ -f "$node/opts" ]; then
		while IFS= read -r _line; do
			set -- "$@" "$_line"
		done <"$node/opts"
	fi
	# the supply: $1 node dir, $2 delay, $3 never_boots flag, then mxqd and
	# its options; it waits for mxqd as a child so that it can log "off"
	setsid sh -c '
		d=$1 delay=$2 flag=$3
		shift 3
		cd "$d" || exit 1
		echo $$ >"$d/pid"
		on_t=$(date +%s.%N)
		echo "$on_t on" >>"$d/power.log"
		sleep "$delay"
		if [ -e "$flag" ]; then
			# a machine that hangs in its firmware: on, but never boots
			while :; do sleep 1; done
		fi
		# like systemd with Restart=on-failure: mxqd exits 1 when it
		# cannot start (database down); any other end powers off
		while :; do
			# this power-on is the boot of the node: mxqd counts the
			# time from here to its first sample once (restarts too)
			"$@" --energy-boot "sim-$$-$on_t@$on_t" </dev/null >>"$d/stderr" 2>&1 &
			m=$!
			echo $m >"$d/mxqd.pid"
			echo "$(date +%s.%N) up" >>"$d/power.log"
			trap "kill -TERM $m 2>/dev/null" TERM
			trap "kill -INT $m 2>/dev/null" INT
			while :; do
				wait $m
				rc=$?
				[ -r /proc/$m/stat ] || break
				case $(sed "s/^.*) //" /proc/$m/stat | cut -d" " -f1) in Z|X) break ;; esac
			done
			[ "$rc" = 1 ] || break
			echo "$(date +%s.%N) mxqd exited with status 1, restarting" >>"$d/power.log"
			sleep 1
		done
		# drained over ssh: mxqd ended, the machine stays on until poweroff
		while [ -e "$d/drained" ]; do sleep 1; done
		echo "$(date +%s.%N) off" >>"$d/power.log"
	' sh "$node" "${_delay:-2}" "$node/never_boots" \
		"$MXQ_BUILD_DIR/mxqd" --hostname "$host" \
		--spool "$node/spool" --tmpdir "$node/tmp" \
		--log "$node/mxqd.log" --pid-file "$node/mxqd.pidfile" \
		--poll-interval 0.2 --heartbeat-interval 1 --allow-root-jobs \
		--poweroff-command "$(self_path) --dir $dir $host selfoff" \
		-M "$MXQ_MYSQL_DEFAULT_FILE" "$@" \
		</dev/null >/dev/null 2>&1 &
	# the pid file: bounded, so that "status" and "off" see the new group
	_n=$(( $(date +%s) + 5 ))
	while ! supply_pid >/dev/null && [ "$(date +%s)" -lt "$_n" ]; do
		sleep 0.02
	done
	note "started $(cat "$node/pid" 2>/dev/null)"
}

# power_off SECS: TERM to mxqd (or to the whole group while it boots),
# wait up to SECS (wall clock), then SIGKILL to the group
power_off() {
	local _pid _m _end
	if ! _pid=$(supply_pid); then
		note "already-off"
		return 0
	fi
	if _m=$(mxqd_pid); then
		kill -TERM "$_m" 2>/dev/null
	else
		kill -TERM "-$_pid" 2>/dev/null
		echo "$(now) off" >>"$node/power.log"
	fi
	_end=$(( $(date +%s) + $1 ))
	while supply_pid >/dev/null; do
		if [ "$(date +%s)" -ge "$_end" ]; then
			kill -KILL "-$_pid" 2>/dev/null
			echo "$(now) off" >>"$node/power.log"
			note "killed $_pid"
			return 0
		fi
		sleep 0.05
	done
	note "done $_pid"
}

# a detached helper: HOST off in the background, its PID recorded
power_off_detached() {
	NODE_POWER_CALLER=$1 setsid "$(self_path)" --dir "$dir" "$host" off </dev/null >/dev/null 2>&1 &
	echo $! >>"$node/helpers"
}

wol_listen() {
	# Debian's python3 first: a version manager's shim may take seconds
	local _py
	_py=/usr/bin/python3
	[ -x "$_py" ] || _py=python3
	exec "$_py" - "$dir" "$(self_path)" "$1" <<'EOF'
import os, socket, subprocess, sys, time
cluster, prog, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", port))
with open(os.path.join(cluster, "wol.ready"), "w") as f:
    f.write("%d\n" % os.getpid())
log = open(os.path.join(cluster, "calls.log"), "a")
last = {}
while True:
    data, peer = s.recvfrom(2048)
    if len(data) != 102 or data[:6] != b"\xff" * 6 or data[6:] != data[6:12] * 16:
        log.write("%.9f - wol bad-packet %d bytes\n" % (time.time(), len(data)))
        log.flush()
        continue
    mac = ":".join("%02x" % b for b in data[6:12])
    for host in sorted(os.listdir(os.path.join(cluster, "nodes"))):
        try:
            with open(os.path.join(cluster, "nodes", host, "mac")) as f:
                if f.read().strip().lower() != mac:
                    continue
        except OSError:
            continue
        # several packets per wake: one power-on is enough
        if time.time() - last.get(host, 0) < 1:
            continue
        last[host] = time.time()
        subprocess.run([prog, "--dir", cluster, host, "on"], stdin=subprocess.DEVNULL,
                       env=dict(os.environ, NODE_POWER_CALLER="wol"))
EOF
}

case ${1:-} in
--ssh-command)
	# the forced command of the power manager's ssh key for node $2
	# (authorized_keys command=...,restrict): the request is in
	# SSH_ORIGINAL_COMMAND
	host=$2
	caller=ssh
	action=${SSH_ORIGINAL_COMMAND:-}
	node=$dir/nodes/$host
	[ -d "$node" ] || { note "unknown-node"; exit 1; }
	case $action in
	drain)
		# an old mxqd: SIGTERM makes it finish its jobs and exit
		: >"$node/drained"
		if m=$(mxqd_pid); then kill -TERM "$m"; fi
		note "ok"
		;;
	poweroff)
		# return first, then go down
		rm -f "$node/drained"
		power_off_detached ssh-poweroff
		note "ok"
		;;
	*)
		note "refused"
		echo "node-power.sh: refused: $action" >&2
		exit 1
		;;
	esac
	exit 0
	;;
--wol-listen)
	wol_listen "$2"
	;;
--chassis)
	# ipmi_sim hands its own descriptors down (epoll, self-pipe): a node
	# switched on here must not hold them
	exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-
	host=$2
	caller=bmc
	shift 2
	action="$*"
	node=$dir/nodes/$host
	[ -d "$node" ] || { note "unknown-node"; exit 1; }
	case "$1 ${2:-}" in
	"get power")
		if supply_pid >/dev/null; then echo "power:1"; else echo "power:0"; fi
		;;
	"set power")
		case $3 in
		1) power_on ;;
		0) POWER_OFF_WAIT=2 power_off 2 ;;
		*) note "bad-value"; exit 1 ;;
		esac
		;;
	"set shutdown")
		# ACPI soft off: the node shuts down on its own, a little later
		supply_pid >/dev/null && power_off_detached bmc-soft-off
		note "soft-off"
		;;
	set*)
		note "ignored"
		;;
	*)
		note "unknown-request"
		exit 1
		;;
	esac
	exit 0
	;;
esac

host=${1:-}
action=${2:-}
caller=${NODE_POWER_CALLER:-exec}
node=$dir/nodes/$host
if [ -z "$host" ] || [ ! -d "$node" ]; then
	echo "node-power.sh: unknown node '$host'" >&2
	exit 2
fi
case $action in
on)
	if [ -e "$node/fail_on" ]; then
		note "failed"
		echo "node-power.sh: $host: simulated power-on failure" >&2
		exit 1
	fi
	power_on
	;;
off)
	power_off "${POWER_OFF_WAIT:-10}"
	;;
status)
	if supply_pid >/dev/null; then echo on; else echo off; fi
	;;
selfoff)
	# called by the node's mxqd: go down after it returned
	caller=node
	power_off_detached node-self-off
	note "requested"
	;;
*)
	echo "usage: node-power.sh [--dir DIR] HOST on|off|status|selfoff" >&2
	echo "       node-power.sh [--dir DIR] --chassis HOST get power|set power 0|1|set shutdown 1" >&2
	echo "       node-power.sh [--dir DIR] --wol-listen PORT" >&2
	exit 2
	;;
esac
