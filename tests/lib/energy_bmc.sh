# tests/lib/energy_bmc.sh - the steps the BMC energy source tests share
# (tests/test_energy_ipmi.sh, tests/test_energy_redfish.sh; POSIX sh plus
# `local`, after tests/lib/mxqd.sh).
#
#   job_row JOB     START_MS END_MS ENERGY_J AVG_W PEAK_W METHOD COMPLETENESS
#   run_job SECONDS a job of that length -> its id, once its energy row is final
#   put_watts WATTS_FILE TEXT  replace the reading in one step
#   fault_job WATTS_FILE BAD GOOD
#       a 3 s job during which the BMC's reading (the file the simulated BMC
#       reads) is BAD for a second ("-": the file removed), then GOOD again
#       -> its id, once its energy row is final
#   fault_checks HOST SOURCE BMC JOB REASON
#       TAP lines after fault_job: the job is partial and keeps the energy
#       measured before, HOST's mxqd runs, REASON is logged exactly once,
#       the BMC reads again and SOURCE takes over from the model again, and
#       the next job is measured completely

job_row() {
	mxq_sql "SELECT UNIX_TIMESTAMP(date_start) * 1000, UNIX_TIMESTAMP(date_end) * 1000, energy_j,
		avg_watts, peak_watts, method, completeness FROM mxq_power_job WHERE job_id = $1"
}

run_job() {
	local _j
	_j=$(submit -N e -t 10m sleep "$1") || return 1
	wait_for 30 "SELECT date_end IS NOT NULL FROM mxq_power_job WHERE job_id = $_j" || return 1
	echo "$_j"
}

# FILE holds TEXT at once: the simulated BMC never reads the empty file a
# truncating write leaves for an instant (it would answer "no reading", a
# fault the test did not ask for)
put_watts() {
	echo "$2" >"$1.tmp" && mv -f "$1.tmp" "$1"
}

fault_job() {
	local _j
	_j=$(submit -N e -t 10m sleep 3) || return 1
	wait_for 10 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $_j" >/dev/null
	sleep 1
	if [ "$2" = - ]; then rm -f "$1"; else put_watts "$1" "$2"; fi
	sleep 1
	put_watts "$1" "$3"
	wait_for 30 "SELECT date_end IS NOT NULL FROM mxq_power_job WHERE job_id = $_j" >/dev/null
	echo "$_j"
}

fault_checks() {
	local _log _j
	_log=$(mxqd_dir "$1")/mxqd.log
	set -- "$1" "$2" "$3" "$4" "$5" $(job_row "$4")
	echo "# job $4: $8 J, ${11}, ${12}"
	is "job is partial" "${12}" partial
	check "energy measured before is kept" awk -v a="$8" 'BEGIN { exit !(a > 100) }'
	check "mxqd still runs" mxq__alive "$(mxqd_pid "$1")"
	contains "the reason is logged: $5" "$(cat "$_log")" "$5"
	is "logged once, not per attempt" "$(grep -cF -- "$5" "$_log")" 1
	check "mxqd says when the BMC reads again" wait_until 10 grep -q "BMC $3 reads again" "$_log"
	check "and measures with it again (the model filled in)" wait_until 15 \
		grep -q "$2 works again" "$_log"
	_j=$(run_job 1)
	is "next job measured by the BMC again" \
		"$(mxq_sql "SELECT CONCAT(method, ' ', completeness) FROM mxq_power_job WHERE job_id = $_j")" \
		"power full"
}
