#!/bin/sh
# tests/test_energy_ipmi.sh - the ipmi energy source: mxqd reads its node's
# power from a BMC with DCMI Get Power Reading (libfreeipmi, over the LAN to
# an ipmi_sim on 127.0.0.1 that answers DCMI through tests/ipmi_sim_dcmi.so
# from a watts file the test writes).
#
#   1. constant power: the job's energy is the power times its window
#      (within 1 %), method power, complete; the node's watts and samples
#   2. power steps during a job: peak and energy between the bounds
#   3. the BMC fails the request (completion code) during a job: partial,
#      the reason logged once, mxqd keeps running, measures again after
#   4. the BMC has no measurement (reading state inactive): partial, said
#   5. a wrong password: the ipmi source is not used, the reason names the
#      BMC, the next source (model) measures
#   6. no BMC answering at start: the model measures, and the ipmi source
#      takes over once the BMC comes up
#   7. --energy-ipmi bad input: one clear line, exit 1 (nothing started)
#   (1 also: mxqd has one thread, the BMC reader is a child process)
# The in-band path (/dev/ipmi0) differs only in how the session opens; no
# kernel IPMI device exists here to test it.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/bmc.sh"
. "$MXQ_SRC_DIR/tests/lib/energy_bmc.sh"

command -v ipmi_sim >/dev/null || { echo "not ok 1 - ipmi_sim installed (package openipmi)"; exit 1; }
[ -f "$MXQ_BUILD_DIR/tests/ipmi_sim_dcmi.so" ] ||
	{ echo "not ok 1 - tests/ipmi_sim_dcmi.so built (make tests/ipmi_sim_dcmi.so)"; exit 1; }

D=$MXQ_TEST_DIR/bmc
mkdir -p "$D"
PW=$(mxq__random_hex 8)          # throwaway BMC password of this run
WATTS=$D/watts
PORT=$(mxq_free_port udp)
bmc_pid=

( umask 077
  printf '# power secrets of test_energy_ipmi.sh (throwaway)\n[default]\nipmi_user = admin\nipmi_password = %s\n' \
	"$PW" >"$D/secrets"
  printf '[default]\nipmi_user = admin\nipmi_password = wrong%s\n' "${PW%????}" >"$D/secrets.wrong" )

bmc_up() {
	ipmi_sim_start "$D" enode "$PORT" /bin/true "$PW" "$WATTS" || return 1
	bmc_pid=$ipmi_sim_pid
}

bmc_down() {
	[ -n "$bmc_pid" ] || return 0
	kill -TERM "$bmc_pid" 2>/dev/null
	wait "$bmc_pid" 2>/dev/null
	bmc_pid=
}

mxq_test_cleanup_hook() {
	mxqd_cleanup
	bmc_down
}

log_of() {
	cat "$(mxqd_dir "$1")/mxqd.log"
}

E_OPTS="--energy-sources ipmi,model --energy-model 10:0 --energy-interval 0.25
	--energy-flush-interval 1 --energy-ipmi 127.0.0.1:$PORT
	--energy-ipmi-workarounds opensesspriv"

# ------------------------------------------------------ 1. constant power

section "1. constant power"
echo 200 >"$WATTS"
check "BMC with DCMI starts on 127.0.0.1:$PORT" bmc_up
check "start mxqd enode" mxqd_start enode --slots 1 $E_OPTS --power-secrets "$D/secrets"
contains "mxqd measures with ipmi" "$(log_of enode)" "measuring with ipmi (power, 1 input(s))"
# fork safety: the BMC reader is a child process, mxqd itself has one thread
is "mxqd runs single-threaded (the BMC reader is a process)" \
	"$(ls "/proc/$(mxqd_pid enode)/task" | wc -l)" 1
kids=$(grep -l "^PPid:[[:space:]]*$(mxqd_pid enode)\$" /proc/[0-9]*/status 2>/dev/null | wc -l)
is "the BMC reader is mxqd's one child (no job runs yet)" "$kids" 1
j=$(run_job 3)
check "job 1 ran" test -n "$j"
set -- $(job_row "$j")
echo "# job $j: $3 J over $(( ${2%.*} - ${1%.*} )) ms, avg $4 W, peak $5 W, $6, $7"
check "job energy = 200 W x its window within 1 %" \
	within "$3" "$(awk -v a="$1" -v b="$2" 'BEGIN { print 200 * (b - a) / 1000 }')" 1
check "average power 200 W" within "$4" 200 1
is "method" "$6" power
is "completeness" "$7" full
check "node watts on mxq_power = 200" wait_for 5 \
	"SELECT current_watts BETWEEN 198 AND 202 FROM mxq_power WHERE hostname = 'enode'"
check "node samples stored" wait_for 5 \
	"SELECT COUNT(*) > 0 FROM mxq_power_sample WHERE hostname = 'enode' AND watts BETWEEN 190 AND 210"

# ------------------------------------------------------ 2. power steps

section "2. power steps during a job"
put_watts "$WATTS" 100
sleep 0.6
j=$(submit -N e -t 10m sleep 3)
wait_for 10 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j"
sleep 1
put_watts "$WATTS" 300
sleep 1
put_watts "$WATTS" 100
wait_for 30 "SELECT date_end IS NOT NULL FROM mxq_power_job WHERE job_id = $j"
set -- $(job_row "$j")
echo "# job $j: $3 J over $(( ${2%.*} - ${1%.*} )) ms, avg $4 W, peak $5 W, $6, $7"
check "peak power 300 W" within "$5" 300 1
check "average between 100 and 300 W, well above 100" \
	awk -v a="$4" 'BEGIN { exit !(a > 130 && a < 270) }'
is "complete" "$7" full

# ------------------------------------------- 3. the BMC fails the request

section "3. BMC fails the request during a job"
j=$(fault_job "$WATTS" fail 200)
fault_checks enode ipmi "127.0.0.1:$PORT" "$j" \
	"answered DCMI Get Power Reading with completion code 0xd5"

# ------------------------------------------------ 4. no measurement

section "4. BMC without a measurement"
j=$(fault_job "$WATTS" - 200)
is "job is partial" "$(mxq_sql "SELECT completeness FROM mxq_power_job WHERE job_id = $j")" partial
contains "the reason says there is no measurement" "$(log_of enode)" "has no power measurement"
mxqd_stop enode
is "mxqd exits 0" "$mxqd_rc" 0

# ------------------------------------------------ 5. a wrong password

section "5. wrong password"
check "start mxqd enode2 with a wrong BMC password" \
	mxqd_start enode2 --slots 1 $E_OPTS --power-secrets "$D/secrets.wrong"
contains "the ipmi source is not used, the BMC named" "$(log_of enode2)" \
	"ipmi source not used: BMC 127.0.0.1:$PORT rejected the login"
contains "the model measures instead" "$(log_of enode2)" "measuring with model"
not_contains "no password in the log" "$(log_of enode2)" "$PW"
mxqd_stop enode2

# ----------------------------------------- 6. the BMC comes up later

section "6. BMC answers only after mxqd started"
bmc_down
check "start mxqd enode3 while the BMC is down" \
	mxqd_start enode3 --slots 1 $E_OPTS --power-secrets "$D/secrets"
contains "the silence is reported" "$(log_of enode3)" "did not answer"
contains "the model measures meanwhile" "$(log_of enode3)" "measuring with model"
check "BMC starts again" bmc_up
check "mxqd switches to the BMC once it answers" wait_until 20 \
	grep -q "ipmi works again" "$(mxqd_dir enode3)/mxqd.log"
j=$(run_job 1)
is "the next job is measured by the BMC" \
	"$(mxq_sql "SELECT method FROM mxq_power_job WHERE job_id = $j")" power
mxqd_stop enode3
is "mxqd exits 0" "$mxqd_rc" 0

# ----------------------------------------------------- 7. bad input

section "7. bad input"
out=$("$MXQ_BUILD_DIR/mxqd" --energy-ipmi '' 2>&1)
is "empty --energy-ipmi: a usage error, exit 2" "$?" 2
contains "empty --energy-ipmi: says what is wrong" "$out" "--energy-ipmi"
out=$("$MXQ_BUILD_DIR/mxqd" --energy-ipmi-workarounds bogus 2>&1)
is "unknown workaround: a usage error, exit 2" "$?" 2
contains "unknown workaround: named, known ones listed" "$out" "unknown IPMI workaround 'bogus' (known:"

tap_done
