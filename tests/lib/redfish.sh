# tests/lib/redfish.sh - Redfish BMCs of simulated nodes: tests/redfish_emu.py
# on 127.0.0.1 with throwaway certificates (POSIX sh; needs now_cs,
# mxq__alive, mxq__port_in_use and diag from tests/lib/mxqd.sh and
# tests/lib/mariadb.sh).
#
#   redfish_certs DIR
#       Make a throwaway CA (DIR/ca.pem) and a certificate for 127.0.0.1
#       signed by it (DIR/bmc.pem, DIR/bmc.key), and a second CA that
#       signed nothing (DIR/other-ca.pem). EC keys: fast. Returns 1 with
#       openssl's output as diagnostics on failure.
#   redfish_emu_start DIR NAME PORT CERTDIR [EMULATOR OPTIONS...]
#       Start the emulator for node NAME with state directory DIR as a
#       child of the calling shell and wait (bounded, 10 s) until it
#       listens. DIR/accounts must exist (user:password lines). Sets
#       redfish_emu_pid and writes DIR/pid.
#   redfish_emu_stop DIR
#       Stop the emulator whose pid is in DIR/pid (by that pid) and wait.

redfish_certs() {
	local _d
	_d=$1
	mkdir -p "$_d" || return 1
	( umask 077
	  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$_d/ca.key" -out "$_d/ca.pem" -days 2 -subj "/CN=mxq test CA" &&
	  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$_d/bmc.key" -out "$_d/bmc.csr" -subj "/CN=127.0.0.1" &&
	  printf 'subjectAltName=IP:127.0.0.1\n' >"$_d/san.ext" &&
	  openssl x509 -req -in "$_d/bmc.csr" -CA "$_d/ca.pem" -CAkey "$_d/ca.key" \
		-CAcreateserial -out "$_d/bmc.pem" -days 2 -extfile "$_d/san.ext" &&
	  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout "$_d/other-ca.key" -out "$_d/other-ca.pem" -days 2 -subj "/CN=unrelated CA"
	) >"$_d/openssl.out" 2>&1 || { diag <"$_d/openssl.out"; return 1; }
	chmod 644 "$_d/ca.pem" "$_d/other-ca.pem"
}

redfish_emu_start() {
	local _d _name _port _certs _end
	_d=$1 _name=$2 _port=$3 _certs=$4
	shift 4
	mkdir -p "$_d" || return 1
	rm -f "$_d/port"
	python3 "$MXQ_SRC_DIR/tests/redfish_emu.py" --dir "$_d" --port "$_port" \
		--cert "$_certs/bmc.pem" --key "$_certs/bmc.key" --node-name "$_name" "$@" \
		</dev/null >>"$_d/emu.out" 2>&1 &
	redfish_emu_pid=$!
	echo "$redfish_emu_pid" >"$_d/pid"
	_end=$(( $(now_cs) + 1000 ))
	until [ -s "$_d/port" ] && mxq__port_in_use "$_port" tcp; do
		if ! mxq__alive "$redfish_emu_pid" || [ "$(now_cs)" -ge "$_end" ]; then
			echo "the Redfish emulator of $_name did not start" | diag
			diag <"$_d/emu.out"
			return 1
		fi
		sleep 0.05
	done
}

redfish_emu_stop() {
	local _pid
	_pid=$(cat "$1/pid" 2>/dev/null)
	[ -n "$_pid" ] || return 0
	kill -TERM "$_pid" 2>/dev/null
	wait "$_pid" 2>/dev/null
	: >"$1/pid"
}
