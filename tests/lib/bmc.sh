# tests/lib/bmc.sh - an OpenIPMI ipmi_sim as the BMC of a simulated node
# (POSIX sh; needs now_cs, mxq__alive, mxq__random_hex, mxq__port_in_use
# and diag from tests/lib/mxqd.sh and tests/lib/mariadb.sh). Facts:
# shared/TESTING.md.
#
#   ipmi_sim_start DIR NAME PORT CHASSIS_CONTROL PASSWORD [WATTS_FILE]
#       Write DIR/lan.conf (mode 0600: it holds the password) and
#       DIR/node.emu, start ipmi_sim on 127.0.0.1:PORT with a fresh
#       DIR/state as a child of the calling shell, wait (bounded, 5 s)
#       until it listens. Sets ipmi_sim_pid and writes DIR/pid; returns 1
#       (its output as diagnostics) when it did not come up.
#       With WATTS_FILE the BMC also answers DCMI Get Power Reading from
#       that file through $MXQ_BUILD_DIR/tests/ipmi_sim_dcmi.so (make
#       builds it; the file's format is described in ipmi_sim_dcmi.c).
#   udp_stall_start DIR PORT TARGET_PORT
#       Start tests/udp_stall.py on 127.0.0.1:PORT, relaying to the BMC on
#       127.0.0.1:TARGET_PORT, with DIR for its fault files and logs (see
#       the script), as a child of the calling shell; wait (bounded, 5 s)
#       until it listens. Sets udp_stall_pid and writes DIR/pid.


ipmi_sim_start() {
	local _d _name _port _chassis _pw _watts _end
	_d=$1 _name=$2 _port=$3 _chassis=$4 _pw=$5 _watts=${6:-}
	mkdir -p "$_d" || return 1
	rm -rf "$_d/state"
	mkdir "$_d/state" || return 1
	( umask 077
	  cat >"$_d/lan.conf" <<LAN
name "$_name"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $_port
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid $(mxq__random_hex 16)
  endlan
  chassis_control "$_chassis"
user 2 true "admin" "$_pw" admin 10 none md2 md5 straight
LAN
	  # a top-level command; ipmi_sim loads the module after the whole file
	  [ -z "$_watts" ] ||
		printf 'loadlib "%s" "%s"\n' "$MXQ_BUILD_DIR/tests/ipmi_sim_dcmi.so" \
			"$_watts" >>"$_d/lan.conf"
	  cat >"$_d/node.emu" <<EMU
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 dynsens
mc_enable 0x20
EMU
	)
	ipmi_sim -n -c "$_d/lan.conf" -f "$_d/node.emu" -s "$_d/state" </dev/null >"$_d/sim.out" 2>&1 &
	ipmi_sim_pid=$!
	echo "$ipmi_sim_pid" >"$_d/pid"
	_end=$(( $(now_cs) + 500 ))
	until mxq__port_in_use "$_port" udp; do
		if ! mxq__alive "$ipmi_sim_pid" || [ "$(now_cs)" -ge "$_end" ]; then
			echo "ipmi_sim of $_name did not start" | diag
			diag <"$_d/sim.out"
			return 1
		fi
		sleep 0.05
	done
}

udp_stall_start() {
	local _d _port _to _end
	_d=$1 _port=$2 _to=$3
	mkdir -p "$_d" || return 1
	rm -f "$_d/port"
	python3 "$MXQ_SRC_DIR/tests/udp_stall.py" --dir "$_d" --port "$_port" --to "$_to" \
		</dev/null >>"$_d/relay.out" 2>&1 &
	udp_stall_pid=$!
	echo "$udp_stall_pid" >"$_d/pid"
	_end=$(( $(now_cs) + 500 ))
	until [ -s "$_d/port" ]; do
		if ! mxq__alive "$udp_stall_pid" || [ "$(now_cs)" -ge "$_end" ]; then
			echo "the UDP relay on port $_port did not start" | diag
			diag <"$_d/relay.out"
			return 1
		fi
		sleep 0.05
	done
}
