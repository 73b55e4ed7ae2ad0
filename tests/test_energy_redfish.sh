#!/bin/sh
# tests/test_energy_redfish.sh - the redfish energy source: mxqd reads its
# node's power from the BMC's Redfish chassis power reading (libcurl, HTTPS
# to tests/redfish_emu.py on 127.0.0.1, whose reading is a file the test
# writes).
#
#   1. constant power from EnvironmentMetrics: job energy = watts x its
#      window (within 1 %), method power, complete; node watts
#   2. the older Power resource (PowerControl[].PowerConsumedWatts) and
#      basic authentication: the same within 1 %
#   3. the BMC fails the reading during a job (HTTP 500 with ExtendedInfo):
#      partial, the reason logged once with the Redfish message, mxqd keeps
#      running, measures again after
#   4. the reading is null (no measurement): partial, said; a negative
#      reading (a broken sensor) or one beyond 1 MW the same
#   5. a wrong password: the redfish source is not used, the reason names
#      the BMC; the model measures; no password in the log
#   6. a certificate of an unknown CA: not used, the reason says so
#   7. the reader's session is deleted when mxqd stops; a reader killed
#      is replaced and readings come back
#   9. --energy-redfish auto: the BMC found through the Redfish host
#      interface the firmware describes (SMBIOS type 42, in a fake
#      --energy-sysfs-root); none there: the source is absent, said
#   8. --energy-redfish bad input: one clear line, exit 1
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/redfish.sh"
. "$MXQ_SRC_DIR/tests/lib/energy_bmc.sh"

D=$MXQ_TEST_DIR/redfish
mkdir -p "$D/new" "$D/old"
PW=$(mxq__random_hex 8)          # throwaway BMC password of this run
PORT=$(mxq_free_port tcp)
PORT_OLD=$(mxq_free_port tcp)

( umask 077
  printf '# power secrets of test_energy_redfish.sh (throwaway)\n[default]\nredfish_user = admin\nredfish_password = %s\n' \
	"$PW" >"$D/secrets"
  printf '[default]\nredfish_user = admin\nredfish_password = wrong%s\n' "${PW%????}" >"$D/secrets.wrong"
  printf 'admin:%s\n' "$PW" >"$D/new/accounts"
  printf 'admin:%s\n' "$PW" >"$D/old/accounts" )

mxq_test_cleanup_hook() {
	mxqd_cleanup
	redfish_emu_stop "$D/new"
	redfish_emu_stop "$D/old"
}

log_of() {
	cat "$(mxqd_dir "$1")/mxqd.log"
}

# check_energy NODE_WATTS JOB: energy = watts x window within 1 %, power, full
check_energy() {
	set -- "$1" "$2" $(job_row "$2")
	echo "# job $2: $5 J over $(( ${4%.*} - ${3%.*} )) ms, avg $6 W, peak $7 W, $8, $9"
	check "job energy = $1 W x its window within 1 %" \
		within "$5" "$(awk -v a="$3" -v b="$4" -v w="$1" 'BEGIN { print w * (b - a) / 1000 }')" 1
	check "average power $1 W" within "$6" "$1" 1
	is "method" "$8" power
	is "completeness" "$9" full
}

E_OPTS="--energy-sources redfish,model --energy-model 10:0 --energy-interval 0.25
	--energy-flush-interval 1"
RF=127.0.0.1:$PORT,ca=$D/certs/ca.pem

section "setup"
check "throwaway CA and BMC certificate" redfish_certs "$D/certs"
echo 200 >"$D/new/watts"
echo 120 >"$D/old/watts"
check "Redfish BMC (EnvironmentMetrics) on 127.0.0.1:$PORT" redfish_emu_start "$D/new" enode "$PORT" "$D/certs"
check "Redfish BMC (Power) on 127.0.0.1:$PORT_OLD" redfish_emu_start "$D/old" enode4 "$PORT_OLD" \
	"$D/certs" --power-schema power

# ------------------------------------------------------ 1. constant power
section "1. constant power (EnvironmentMetrics)"
check "start mxqd enode" mxqd_start enode --slots 1 $E_OPTS --energy-redfish "$RF" \
	--power-secrets "$D/secrets"
contains "mxqd measures with redfish" "$(log_of enode)" "measuring with redfish (power, 1 input(s))"
# fork safety: libcurl runs in the reader process only, mxqd has one thread
is "mxqd runs single-threaded (the Redfish reader is a process)" \
	"$(ls "/proc/$(mxqd_pid enode)/task" | wc -l)" 1
j=$(run_job 3)
check "job 1 ran" test -n "$j"
check_energy 200 "$j"
check "node watts on mxq_power = 200" wait_for 5 \
	"SELECT current_watts BETWEEN 198 AND 202 FROM mxq_power WHERE hostname = 'enode'"
contains "the reader reads EnvironmentMetrics" "$(cat "$D/new/requests.log")" \
	"GET /redfish/v1/Chassis/1U/EnvironmentMetrics 200 token"
is "one session for the reader (and the first reading's, deleted)" "$(cat "$D/new/sessions")" 1

# ------------------------------------------- 3. the BMC fails the reading
section "3. BMC fails the reading during a job"
j=$(fault_job "$D/new/watts" fail 200)
fault_checks enode redfish "127.0.0.1:$PORT" "$j" \
	"BMC 127.0.0.1:$PORT: GET /redfish/v1/Chassis/1U/EnvironmentMetrics: HTTP 500: The power sensor could not be read."

# the reader process (mxqd's only child while no job runs) killed: replaced
section "7. the reader process killed"
reader=$(grep -l "^PPid:[[:space:]]*$(mxqd_pid enode)\$" /proc/[0-9]*/status 2>/dev/null |
	cut -d/ -f3)
check "the reader runs as mxqd's only child (pid ${reader:-none})" \
	awk -v p="$reader" 'BEGIN { exit !(p ~ /^[0-9]+$/) }'
[ -n "$reader" ] && kill -KILL $reader
check "mxqd says the reader ended" wait_until 10 grep -q "Redfish reader process (pid $reader) ended" \
	"$(mxqd_dir enode)/mxqd.log"
check "a new reader reads again" wait_until 10 \
	sh -c "grep 'reads again' '$(mxqd_dir enode)/mxqd.log' | tail -n 1 | grep -q 'BMC 127.0.0.1:$PORT reads again' &&
		[ \$(grep -c 'reads again' '$(mxqd_dir enode)/mxqd.log') -ge 2 ]"
check "mxqd still runs" mxq__alive "$(mxqd_pid enode)"

# ------------------------------------------------ 4. no measurement
section "4. a null reading"
j=$(fault_job "$D/new/watts" - 200)
is "job is partial" "$(mxq_sql "SELECT completeness FROM mxq_power_job WHERE job_id = $j")" partial
contains "the reason says there is no reading" "$(log_of enode)" "EnvironmentMetrics has no PowerWatts reading"

# a broken sensor: a negative reading is no measurement either (not 0 W
# of a complete record)
section "4b. a negative reading"
n=$(grep -c "redfish works again" "$(mxqd_dir enode)/mxqd.log")
check "redfish measures again after the null reading" wait_until 15 \
	sh -c "[ \$(grep -c 'redfish works again' '$(mxqd_dir enode)/mxqd.log') -gt $n ]"
j=$(fault_job "$D/new/watts" -40 200)
is "job is partial" "$(mxq_sql "SELECT completeness FROM mxq_power_job WHERE job_id = $j")" partial
contains "the reason says the reading is negative" "$(log_of enode)" \
	"EnvironmentMetrics PowerWatts.Reading -40 W is negative: no measurement"

# nor is one beyond anything a chassis draws: 1.7e308 W made the energy
# infinite, and every later write of the node's totals failed
section "4c. an absurd reading"
n=$(grep -c "redfish works again" "$(mxqd_dir enode)/mxqd.log")
check "redfish measures again after the negative reading" wait_until 15 \
	sh -c "[ \$(grep -c 'redfish works again' '$(mxqd_dir enode)/mxqd.log') -gt $n ]"
j=$(fault_job "$D/new/watts" 1.7e308 200)
is "job is partial" "$(mxq_sql "SELECT completeness FROM mxq_power_job WHERE job_id = $j")" partial
contains "the reason says the reading is no measurement" "$(log_of enode)" \
	"EnvironmentMetrics PowerWatts.Reading 1.7e+308 W is beyond 1 MW: no measurement"
not_contains "no write of the energy failed" "$(log_of enode)" "Out of range value"
check "the node's energy is still written" wait_for 10 \
	"SELECT energy_updated_at > NOW(3) - INTERVAL 3 SECOND FROM mxq_power WHERE hostname = 'enode'"
mxqd_stop enode
is "mxqd exits 0" "$mxqd_rc" 0
# the reader killed above had no chance to log out: its session stays
# (a BMC expires it); the running reader's is deleted at the stop
check "the reader's session was deleted at the BMC (the killed one's stays)" wait_until 10 \
	sh -c "[ \"\$(cat '$D/new/sessions')\" = 1 ]"

# -------------------------------------- 2. the older Power resource
section "2. the older Power resource, basic authentication"
check "start mxqd enode4" mxqd_start enode4 --slots 1 $E_OPTS \
	--energy-redfish "127.0.0.1:$PORT_OLD,ca=$D/certs/ca.pem,auth=basic" --power-secrets "$D/secrets"
j=$(run_job 3)
check "job ran" test -n "$j"
check_energy 120 "$j"
contains "the reader reads Power" "$(cat "$D/old/requests.log")" "GET /redfish/v1/Chassis/1U/Power 200 basic"
mxqd_stop enode4

# ------------------------------------------------ 5. a wrong password
section "5. wrong password"
check "start mxqd enode2 with a wrong BMC password" \
	mxqd_start enode2 --slots 1 $E_OPTS --energy-redfish "$RF" --power-secrets "$D/secrets.wrong"
contains "the redfish source is not used, the BMC and the Redfish message named" "$(log_of enode2)" \
	"redfish source not used: BMC 127.0.0.1:$PORT: POST /redfish/v1/SessionService/Sessions: HTTP 401: While accessing"
contains "the model measures instead" "$(log_of enode2)" "measuring with model"
not_contains "no password in the log" "$(log_of enode2)" "$PW"
mxqd_stop enode2

# ------------------------------------------------ 6. unknown CA
section "6. certificate of an unknown CA"
check "start mxqd enode3 with another CA" mxqd_start enode3 --slots 1 $E_OPTS \
	--energy-redfish "127.0.0.1:$PORT,ca=$D/certs/other-ca.pem" --power-secrets "$D/secrets"
contains "not used: the certificate is not trusted" "$(log_of enode3)" \
	"redfish source not used: BMC 127.0.0.1:$PORT: POST /redfish/v1/SessionService/Sessions: TLS certificate not trusted"
mxqd_stop enode3
not_contains "no password in any mxqd log" "$(cat "$MXQ_TEST_DIR"/mxqd/*/mxqd.log)" "$PW"

# --------------------------------------- 9. the Redfish host interface
section "9. --energy-redfish auto"
# an SMBIOS type 42 record: network host interface, Redfish over IP,
# service 127.0.0.1:PORT (DSP0270 layout)
mkdir -p "$D/sys/firmware/dmi/entries/42-0" "$D/nosys/firmware/dmi/entries"
python3 - "$PORT" "$D/sys/firmware/dmi/entries/42-0/raw" <<'PY'
import struct, sys
port, path = int(sys.argv[1]), sys.argv[2]
rec = bytearray(91)
rec[16] = 1; rec[50] = 1; rec[51] = 1          # static addresses, service IPv4
rec[52:56] = bytes([127, 0, 0, 1])
rec[84:86] = struct.pack("<H", port)
body = bytes([0x40, 3, 2, 0x34, 0x12, 1, 0x04, len(rec)]) + bytes(rec)
raw = bytes([42, 4 + len(body), 0x2a, 0]) + body + b"\0\0"
open(path, "wb").write(raw)
PY
check "start mxqd enode5 with a host interface in its sysfs root" mxqd_start enode5 --slots 1 \
	$E_OPTS --energy-sysfs-root "$D/sys" --energy-redfish "auto,ca=$D/certs/ca.pem" \
	--power-secrets "$D/secrets"
contains "the BMC was found on the host interface" "$(log_of enode5)" \
	"Redfish host interface: BMC at 127.0.0.1:$PORT"
j=$(run_job 2)
check "job ran" test -n "$j"
check_energy 200 "$j"
mxqd_stop enode5
check "start mxqd enode6 without a host interface" mxqd_start enode6 --slots 1 \
	$E_OPTS --energy-sysfs-root "$D/nosys" --energy-redfish auto --power-secrets "$D/secrets"
contains "the source is absent, and why" "$(log_of enode6)" \
	"redfish source absent: --energy-redfish auto: no Redfish host interface (SMBIOS type 42)"
contains "the model measures" "$(log_of enode6)" "measuring with model"
mxqd_stop enode6

# ----------------------------------------------------- 8. bad input
section "8. bad input"
out=$("$MXQ_BUILD_DIR/mxqd" --energy-redfish '' 2>&1)
is "empty --energy-redfish: a usage error, exit 2" "$?" 2
contains "empty --energy-redfish: says what is wrong" "$out" "--energy-redfish: '' does not start with the BMC address"
out=$("$MXQ_BUILD_DIR/mxqd" --energy-redfish 127.0.0.1,tls=off 2>&1)
is "unknown option: a usage error, exit 2" "$?" 2
contains "unknown option: named, known ones listed" "$out" "'tls=off' is not one of chassis="
out=$("$MXQ_BUILD_DIR/mxqd" --energy-redfish https://127.0.0.1/ 2>&1)
is "a URL instead of HOST[:PORT]: a usage error, exit 2" "$?" 2

tap_done
