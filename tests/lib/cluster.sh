# tests/lib/cluster.sh - a simulated, power-managed cluster on one machine.
#
# POSIX sh plus `local`. Source it after tests/lib/mariadb.sh, mxq_db_start
# and tests/lib/mxqd.sh:
#
#   . "$(dirname -- "$0")/lib/mariadb.sh"
#   mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
#   . "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
#   . "$MXQ_SRC_DIR/tests/lib/cluster.sh"
#   cluster_init
#
# A node is an mxqd with its own --hostname and every path under
# $CLUSTER_DIR/nodes/HOST/, switched on and off by tests/lib/node-power.sh
# (see there: the "power supply" process group, boot delay, logs). How the
# power manager reaches the switch depends on the node's kind:
#
#   ipmi  an ipmi_sim BMC on its own 127.0.0.1 UDP port whose chassis_control
#         program is node-power.sh --chassis; transport ipmi both ways
#   exec  the power manager runs node-power.sh HOST on|off|status
#   wol   transport wol to switch on: the power manager sends magic packets
#         to 127.0.0.1:$CLUSTER_WOL_PORT, where node-power.sh --wol-listen
#         switches on the node with that MAC; off by itself ("self": its
#         mxqd runs node-power.sh HOST selfoff)
#
#   ssh   an "old-style" node: its mxqd runs with --no-power-node (too old
#         for the drain protocol); switched on by exec, drained and
#         powered off over ssh: one sshd on 127.0.0.1 (private mount
#         namespace), one throwaway key per node, restricted in
#         authorized_keys to node-power.sh --ssh-command HOST
#
# A kind whose transport has not landed in this mxqd (see cluster_has)
# falls back to exec; $CLUSTER_DIR/nodes/HOST/kind says what a node got.
#
# Nodes, BMCs started by node-power.sh are not children of the test shell:
# their PIDs are in files, and cluster_cleanup (called by the exit hook
# installed here, on EXIT, INT and TERM through mariadb.sh's trap) kills
# every one of them by PID. Leaders are mxqd_start instances (children).
#
# Setup
#   cluster_init            create $CLUSTER_DIR, the env file node-power.sh
#                           reads, the throwaway BMC password and secrets
#                           file, the WoL listener (if wol landed)
#   cluster_has FEATURE     ipmi | wol | ssh | energy: did it land in mxqd
#                           (and are ipmi_sim, python3, sshd there)?
#   cluster_node_add HOST KIND RANK CLASS WATTS [MXQD OPTIONS...]
#       declare a node: KIND as above, efficiency RANK (lower = woken
#       first), node CLASS, WATTS "IDLE:PER_SLOT" (energy model of its
#       mxqd, and of the modelled always-on figure); writes its mxq_power
#       row (state UNKNOWN; settings with `mxqadmin power set`, or SQL
#       where that is missing) and, for ipmi, starts its BMC (for ssh, the
#       sshd). Does not boot it.
#   cluster_node_boot HOST [SECS]   power on by hand, wait until its mxqd
#                           registered and (unless it is an old-style node)
#                           its row is ON
#   cluster_boot_all SECS   the same for every node at once
#   cluster_registered HOST true when HOST's mxqd runs and has registered
#   cluster_conf FILE [KEY=VALUE...]  a power.conf with the fast settings
#                           below; KEY=VALUE replaces or adds, KEY= drops
#   cluster_leader_start NAME CONF [MXQD OPTIONS...]
#       a power manager candidate: mxqd_start NAME --no-power-node
#       --power-manager, every transport option pointed at the simulation,
#       --power-tick $CLUSTER_TICK, --power-lease $CLUSTER_LEASE
#   cluster_bmc_stop HOST, cluster_bmc_start HOST   a BMC that stops answering
#   cluster_flag HOST FLAG on|off   node-power.sh flags: never_boots, fail_on
#
# Reading
#   cluster_state HOST, cluster_wait_state SECS HOST STATE...
#   cluster_running HOST    true while HOST's mxqd runs
#   cluster_power_ons HOST  times the node was switched on (power.log)
#   cluster_on_seconds HOST seconds the node drew power (open interval: now)
#   cluster_view            one snapshot: leader, `mxqadmin power list`, queue
#   cluster_queue_line      "queue: ..." one line
#
# Environment read: CLUSTER_BOOT_DELAY (2), CLUSTER_TICK (1),
# CLUSTER_LEASE (3). Set: CLUSTER_DIR, MXQ_CLUSTER_DIR (exported), CLUSTER_PW.

. "$MXQ_SRC_DIR/tests/lib/bmc.sh"

CLUSTER_BOOT_DELAY=${CLUSTER_BOOT_DELAY:-2}
CLUSTER_TICK=${CLUSTER_TICK:-1}
CLUSTER_LEASE=${CLUSTER_LEASE:-3}
CLUSTER_DIR=$MXQ_TEST_DIR/cluster
MXQ_CLUSTER_DIR=$CLUSTER_DIR
export MXQ_CLUSTER_DIR
cluster_power_bin=$MXQ_SRC_DIR/tests/lib/node-power.sh
cluster_mxqadmin=$MXQ_BUILD_DIR/mxqadmin
cluster__nodes=
cluster__bmc_pids=
cluster__wol_pid=
cluster__sshd_pid=
CLUSTER_WOL_PORT=
CLUSTER_SSH_PORT=

# ------------------------------------------------------------------ setup

cluster_has() {
	[ -n "${cluster__help:-}" ] || cluster__help=$("$mxqd_bin" --help 2>&1)
	case $1 in
	ipmi) case $cluster__help in *--power-ipmi-timeout*) ;; *) return 1 ;; esac
	      command -v ipmi_sim >/dev/null 2>&1 ;;
	wol) case $cluster__help in *--power-wol-port*) ;; *) return 1 ;; esac
	     [ -x /usr/bin/python3 ] || command -v python3 >/dev/null 2>&1 ;;
	ssh) case $cluster__help in *--power-ssh-timeout*) ;; *) return 1 ;; esac
	     [ -x /usr/sbin/sshd ] && command -v unshare >/dev/null 2>&1 ;;
	energy) case $cluster__help in *--energy-model*) return 0 ;; esac; return 1 ;;
	*) return 1 ;;
	esac
}

cluster_init() {
	mkdir -p "$CLUSTER_DIR/nodes" || return 1
	chmod 700 "$CLUSTER_DIR"
	: >"$CLUSTER_DIR/calls.log"
	echo "$CLUSTER_BOOT_DELAY" >"$CLUSTER_DIR/boot_delay"
	printf 'MXQ_BUILD_DIR=%s\nMXQ_MYSQL_DEFAULT_FILE=%s\nexport MXQ_BUILD_DIR MXQ_MYSQL_DEFAULT_FILE\n' \
		"$MXQ_BUILD_DIR" "$MXQ_MYSQL_DEFAULT_FILE" >"$CLUSTER_DIR/env"
	CLUSTER_PW=$(mxq__random_hex 8)      # throwaway BMC password of this run
	( umask 077
	  printf '# power secrets of the simulated cluster (throwaway)\n[default]\nipmi_user = admin\nipmi_password = %s\n' \
		"$CLUSTER_PW" >"$CLUSTER_DIR/power-secrets" )
	if cluster_has wol; then
		cluster__wol_start || return 1
	fi
	return 0
}

cluster__wol_start() {
	local _end
	CLUSTER_WOL_PORT=$(mxq_free_port udp)
	rm -f "$CLUSTER_DIR/wol.ready"
	"$cluster_power_bin" --dir "$CLUSTER_DIR" --wol-listen "$CLUSTER_WOL_PORT" \
		</dev/null >"$CLUSTER_DIR/wol.out" 2>&1 &
	cluster__wol_pid=$!
	_end=$(( $(now_cs) + 3000 ))
	until [ -s "$CLUSTER_DIR/wol.ready" ]; do
		if ! mxq__alive "$cluster__wol_pid" || [ "$(now_cs)" -ge "$_end" ]; then
			echo "cluster: the Wake-on-LAN listener did not start" | diag
			diag <"$CLUSTER_DIR/wol.out"
			return 1
		fi
		sleep 0.05
	done
}

cluster_node_dir() {
	echo "$CLUSTER_DIR/nodes/$1"
}

# cluster__mac HOST: a locally administered MAC made from the host name
cluster__mac() {
	printf '%s' "$1" | cksum | awk '{ n = $1; printf "02:00:%02x:%02x:%02x:%02x\n",
		int(n / 16777216) % 256, int(n / 65536) % 256, int(n / 256) % 256, n % 256 }'
}

cluster_node_add() {
	local _h _kind _rank _class _watts _d _on _off _bmc _mac _bc _wk _o
	_h=$1 _kind=$2 _rank=$3 _class=$4 _watts=$5
	shift 5
	_d=$CLUSTER_DIR/nodes/$_h
	mkdir -p "$_d/spool" "$_d/tmp" || return 1
	cluster_has "$_kind" || _kind=exec
	echo "$_kind" >"$_d/kind"
	echo "$_watts" >"$_d/watts"
	: >"$_d/opts"
	for _o in "$@"; do
		printf '%s\n' "$_o" >>"$_d/opts"
	done
	echo "$*" >"$_d/opts.given"
	if cluster_has energy; then
		printf '%s\n' --energy-sources model --energy-model "$_watts" \
			--energy-interval 1 --energy-flush-interval 2 >>"$_d/opts"
	fi
	_bmc='' _mac='' _bc='' _wk=''
	case $_kind in
	ipmi) _on=ipmi _off=ipmi _wk=opensesspriv
	      mxq_free_port udp >"$_d/bmc_port"
	      _bmc=127.0.0.1:$(cat "$_d/bmc_port")
	      cluster_bmc_start "$_h" || return 1 ;;
	wol)  _on=wol _off=self _bc=127.0.0.1
	      _mac=$(cluster__mac "$_h")
	      echo "$_mac" >"$_d/mac" ;;
	ssh)  _on=exec _off=ssh
	      cluster__sshd_start "$_h" || return 1
	      # an old-style node: its mxqd does not take part in the drain
	      # protocol; the power manager drains it over ssh
	      printf '%s\n' --no-power-node >>"$_d/opts" ;;
	*)    _on=exec _off=exec ;;
	esac
	case " $cluster__nodes " in
	*" $_h "*) ;;
	*) cluster__nodes="$cluster__nodes $_h" ;;
	esac
	# the row first (as an admin adds a host), then its settings with
	# `mxqadmin power set` where this mxqadmin has it, else with SQL
	mxq_sql "INSERT INTO mxq_power (hostname, state, reason)
		VALUES ('$_h', 'UNKNOWN', 'simulated node ($_kind)')" || return 1
	set -- transport_on="$_on" transport_off="$_off" rank="$_rank" class="$_class"
	[ -n "$_bmc" ] && set -- "$@" bmc="$_bmc" ipmi_workarounds="$_wk"
	[ -n "$_mac" ] && set -- "$@" mac="$_mac" broadcast="$_bc"
	[ "$_kind" = ssh ] && set -- "$@" ssh="127.0.0.1:$CLUSTER_SSH_PORT"
	if "$cluster_mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power set "$_h" "$@" \
		>"$_d/power-set.out" 2>&1; then
		return 0
	fi
	mxq_sql "UPDATE mxq_power SET transport_on = '$_on', transport_off = '$_off',
		efficiency_rank = $_rank, node_class = '$_class', bmc_address = '$_bmc',
		mac_address = '$_mac', broadcast_address = '$_bc' WHERE hostname = '$_h'" || return 1
	if cluster__has_column ipmi_workarounds; then
		mxq_sql "UPDATE mxq_power SET ipmi_workarounds = '$_wk',
			ssh_address = '$( [ "$_kind" = ssh ] && echo "127.0.0.1:$CLUSTER_SSH_PORT")'
			WHERE hostname = '$_h'" || return 1
	fi
}

cluster__has_column() {
	[ "$(mxq_sql "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = DATABASE()
		AND table_name = 'mxq_power' AND column_name = '$1'")" = 1 ]
}

cluster_node_kind() {
	cat "$CLUSTER_DIR/nodes/$1/kind"
}

cluster_flag() {
	if [ "$3" = on ]; then
		: >"$CLUSTER_DIR/nodes/$1/$2"
	else
		rm -f "$CLUSTER_DIR/nodes/$1/$2"
	fi
}

# mxqd PID of HOST while it runs (empty otherwise)
cluster_mxqd_pid() {
	local _d _pid
	_d=$CLUSTER_DIR/nodes/$1
	[ -f "$_d/mxqd.pid" ] || return 0
	read -r _pid <"$_d/mxqd.pid" 2>/dev/null || return 0
	case $_pid in ''|*[!0-9]*) return 0 ;; esac
	mxq__alive "$_pid" || return 0
	tr '\0' '\n' <"/proc/$_pid/cmdline" 2>/dev/null | grep -qF -- "$_d/" || return 0
	echo "$_pid"
}

# PID of HOST's power supply group while it exists
cluster_supply_pid() {
	local _d _pid
	_d=$CLUSTER_DIR/nodes/$1
	[ -f "$_d/pid" ] || return 0
	read -r _pid <"$_d/pid" 2>/dev/null || return 0
	case $_pid in ''|*[!0-9]*) return 0 ;; esac
	mxq__alive "$_pid" || return 0
	tr '\0' '\n' <"/proc/$_pid/cmdline" 2>/dev/null | grep -qF -- "$_d/" || return 0
	echo "$_pid"
}

cluster_running() {
	[ -n "$(cluster_mxqd_pid "$1")" ]
}

cluster__show_node() {
	local _d
	_d=$CLUSTER_DIR/nodes/$1
	{
		echo "node $1 ($(cat "$_d/kind")): end of log:"
		tail -n 15 "$_d/mxqd.log" 2>/dev/null
		tail -n 5 "$_d/stderr" 2>/dev/null
		echo "node $1: power row:"
		mxq_sql "SELECT state, desired_state, reason, failure_reason FROM mxq_power
			WHERE hostname = '$1'"
	} | diag
}

# true when HOST's mxqd runs and has registered its mxq_daemon row
cluster_registered() {
	local _m
	_m=$(cluster_mxqd_pid "$1")
	[ -n "$_m" ] && [ "$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon WHERE hostname = '$1'
		AND daemon_pid = $_m AND status NOT IN (250, 255)")" = 1 ]
}

# boot complete: mxqd registered, and its row is ON unless it is an
# old-style node (--no-power-node: only a leader moves that row)
cluster__booted() {
	cluster_registered "$1" || return 1
	grep -qx -- --no-power-node "$CLUSTER_DIR/nodes/$1/opts" && return 0
	[ "$(cluster_state "$1")" = ON ]
}

cluster_node_boot() {
	NODE_POWER_CALLER="test" "$cluster_power_bin" --dir "$CLUSTER_DIR" "$1" on ||
		{ echo "cluster_node_boot: power on $1 failed" | diag; return 1; }
	if ! wait_until "${2:-30}" cluster__booted "$1"; then
		cluster__show_node "$1"
		return 1
	fi
}

# cluster_boot_all SECS: switch every node on at once, wait until all are ON
cluster_boot_all() {
	local _h _rc
	_rc=0
	for _h in $cluster__nodes; do
		NODE_POWER_CALLER="test" "$cluster_power_bin" --dir "$CLUSTER_DIR" "$_h" on || _rc=1
	done
	for _h in $cluster__nodes; do
		if ! wait_until "$1" cluster__booted "$_h"; then
			cluster__show_node "$_h"
			_rc=1
		fi
	done
	return $_rc
}

# -------------------------------------------------------------------- ssh

# cluster__sshd_start HOST: the first call starts an sshd on 127.0.0.1 in
# a private mount namespace (Debian's sshd needs /run/sshd); every call
# adds a throwaway key for HOST, restricted in authorized_keys to
# node-power.sh --ssh-command HOST, and a [HOST] section to the secrets
cluster__sshd_start() {
	local _s _k
	_s=$CLUSTER_DIR/ssh
	_k=$_s/key_$1
	mkdir -p "$_s" && chmod 700 "$_s" || return 1
	ssh-keygen -q -t ed25519 -N '' -C "mxq-power-manager-$1" -f "$_k" || return 1
	echo "command=\"$cluster_power_bin --dir $CLUSTER_DIR --ssh-command $1\",restrict $(cat "$_k.pub")" \
		>>"$_s/authorized_keys"
	chmod 600 "$_s/authorized_keys"
	printf '\n[%s]\nssh_user = root\nssh_key = %s\nssh_known_hosts = %s\n' \
		"$1" "$_k" "$_s/known_hosts" >>"$CLUSTER_DIR/power-secrets"
	[ -n "$cluster__sshd_pid" ] && return 0
	ssh-keygen -q -t ed25519 -N '' -C cluster-host -f "$_s/host_key" || return 1
	CLUSTER_SSH_PORT=$(mxq_free_port tcp)
	cat >"$_s/sshd_config" <<EOF
Port $CLUSTER_SSH_PORT
ListenAddress 127.0.0.1
HostKey $_s/host_key
PidFile $_s/sshd.pid
AuthorizedKeysFile $_s/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin forced-commands-only
EOF
	printf '[127.0.0.1]:%s %s\n' "$CLUSTER_SSH_PORT" "$(cut -d' ' -f1,2 "$_s/host_key.pub")" \
		>"$_s/known_hosts"
	unshare -m --propagation private sh -c "mount -t tmpfs -o mode=755 tmpfs /run &&
		mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f $_s/sshd_config" \
		</dev/null >"$_s/sshd.log" 2>&1 &
	cluster__sshd_pid=$!
	if ! wait_until 15 mxq__port_in_use "$CLUSTER_SSH_PORT"; then
		echo "cluster: sshd did not start" | diag
		diag <"$_s/sshd.log"
		return 1
	fi
}

# ------------------------------------------------------------------- BMCs

cluster_bmc_start() {
	local _h _d _port
	_h=$1
	_d=$CLUSTER_DIR/nodes/$_h/bmc
	_port=$(cat "$CLUSTER_DIR/nodes/$_h/bmc_port")
	ipmi_sim_start "$_d" "$_h" "$_port" \
		"$cluster_power_bin --dir $CLUSTER_DIR --chassis $_h" "$CLUSTER_PW" || return 1
	cluster__bmc_pids="$cluster__bmc_pids $ipmi_sim_pid"
}

cluster_bmc_stop() {
	local _f _pid
	_f=$CLUSTER_DIR/nodes/$1/bmc/pid
	[ -s "$_f" ] || return 0
	_pid=$(cat "$_f")
	kill -TERM "$_pid" 2>/dev/null
	wait "$_pid" 2>/dev/null
	: >"$_f"
}

# ---------------------------------------------------------------- leaders

cluster_conf() {
	local _f
	_f=$1
	shift
	power_conf_write "$_f" "idle_time=4s min_on_time=0 min_off_time=0 warm_pool=0
		suspend_rate=0 resume_rate=0 max_booting=0 max_cycles_per_day=0
		breaker_failures=0 boot_time=${CLUSTER_BOOT_DELAY}s boot_deadline=20s
		shutdown_deadline=20s drain_timeout=20s" "$@"
}

cluster_leader_start() {
	local _n _c
	_n=$1 _c=$2
	shift 2
	if cluster_has ipmi; then
		set -- --power-secrets "$CLUSTER_DIR/power-secrets" --power-soft-off-deadline 4 \
			--power-ipmi-timeout 2 --power-ipmi-retries 1 --power-ipmi-verify 3 "$@"
	fi
	if cluster_has wol; then
		set -- --power-wol-port "$CLUSTER_WOL_PORT" --power-wol-count 2 "$@"
	fi
	if cluster_has energy; then
		set -- --energy-sources none "$@"
	fi
	if cluster_has ssh; then
		# root's login shell runs the forced command; it may be slow
		set -- --power-ssh-timeout 15 "$@"
	fi
	mxqd_start "$_n" --no-power-node --power-manager --power-config "$_c" \
		--power-exec-command "$cluster_power_bin" --power-exec-timeout 20 \
		--power-tick "$CLUSTER_TICK" --power-lease "$CLUSTER_LEASE" \
		--power-reconcile-interval 5 --poweroff-command /bin/false \
		--slots 1 --memory 1G --prerequisites cluster_service_host_runs_no_jobs "$@"
}

cluster_leader_log() {
	echo "$(mxqd_dir "$1")/mxqd.log"
}

# ---------------------------------------------------------------- reading

cluster_state() {
	mxq_sql "SELECT state FROM mxq_power WHERE hostname = '$1'"
}

cluster_wait_state() {
	local _secs _h _in _s
	_secs=$1 _h=$2
	shift 2
	_in=
	for _s in "$@"; do
		_in="$_in${_in:+, }'$_s'"
	done
	wait_for "$_secs" "(SELECT state FROM mxq_power WHERE hostname = '$_h') IN ($_in)"
}

cluster_power_ons() {
	grep -c ' on$' "$CLUSTER_DIR/nodes/$1/power.log" 2>/dev/null || echo 0
}

cluster_on_seconds() {
	awk -v now="$(date +%s.%N)" '
		$2 == "on" && !on { on = 1; t = $1 }
		$2 == "off" && on { on = 0; sum += $1 - t }
		END { if (on) sum += now - t; printf "%.1f\n", sum }' \
		"$CLUSTER_DIR/nodes/$1/power.log" 2>/dev/null || echo 0
}

cluster_queue_line() {
	mxq_sql "SELECT CONCAT('queue: ', COUNT(job_id), ' jobs: ',
		COALESCE(SUM(job_status = 0), 0), ' waiting, ',
		COALESCE(SUM(job_status IN (100, 150, 200, 250, 300)), 0), ' running, ',
		COALESCE(SUM(job_status = 1000), 0), ' finished, ',
		COALESCE(SUM(job_status IN (400, 750, 755, 999, 1024)), 0), ' failed')
		FROM mxq_job"
}

cluster_view() {
	mxq_sql "SELECT CONCAT('leader: ', holder, ' (epoch ', epoch, ')',
		IF(lease_expires < NOW(3), ' - lease expired', '')) FROM mxq_power_leader WHERE id = 1"
	"$cluster_mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power list 2>&1
	cluster_queue_line
}

# ---------------------------------------------------------------- cleanup

# Kill by PID every process of the simulation: leaders stop first (no
# more wakes), then the WoL listener and the BMCs, then the nodes (SIGINT
# to mxqd kills its jobs; SIGKILL to the supply group after 5 s) and the
# detached helpers, then what jobs left behind.
cluster_cleanup() {
	local _h _d _pid _m _end _p
	mxqd_cleanup
	if [ -n "$cluster__wol_pid" ]; then
		kill -TERM "$cluster__wol_pid" 2>/dev/null
		wait "$cluster__wol_pid" 2>/dev/null
		cluster__wol_pid=
	fi
	if [ -n "$cluster__sshd_pid" ]; then
		kill -TERM "$cluster__sshd_pid" 2>/dev/null
		wait "$cluster__sshd_pid" 2>/dev/null
		cluster__sshd_pid=
	fi
	for _p in $cluster__bmc_pids; do
		kill -TERM "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	cluster__bmc_pids=
	for _pass in 1 2; do
		for _h in $cluster__nodes; do
			_m=$(cluster_mxqd_pid "$_h")
			[ -n "$_m" ] && kill -INT "$_m" 2>/dev/null
		done
		_end=$(( $(now_cs) + 500 ))
		for _h in $cluster__nodes; do
			while [ -n "$(cluster_supply_pid "$_h")" ] && [ "$(now_cs)" -lt "$_end" ]; do
				sleep 0.05
			done
			_pid=$(cluster_supply_pid "$_h")
			[ -n "$_pid" ] && kill -KILL "-$_pid" 2>/dev/null
			_d=$CLUSTER_DIR/nodes/$_h
			if [ -f "$_d/helpers" ]; then
				while read -r _p; do
					case $_p in ''|*[!0-9]*) continue ;; esac
					if mxq__alive "$_p" && tr '\0' '\n' <"/proc/$_p/cmdline" 2>/dev/null |
						grep -qxF -- "$_h"; then
						kill -KILL "-$_p" 2>/dev/null
						kill -KILL "$_p" 2>/dev/null
					fi
				done <"$_d/helpers"
			fi
			mxqd__kill_spool_leftovers "$_d/spool"
		done
	done
}

mxq_test_cleanup_hook() {
	cluster_cleanup
}
