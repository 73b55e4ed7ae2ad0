#!/bin/sh
# tests/test_energy_truth.sh - per-job energy against ground truth, across
# a SIGQUIT + restart of mxqd that re-adopts the running jobs.
#
# A fake RAPL tree (tests/lib/fake-rapl.sh: counters the test advances at
# a scheduled power, package-0 wrapping every few seconds) on a 2-slot
# node with an idle baseline of 10 W. Two jobs with known CPU shares
# (tests/lib/burn.pl, each reporting the CPU time it really got):
#   t0..tb  job A burns 0.3 of a CPU, job B sleeps     (50 W)
#   tb..t1  A 0.3, B 0.1 (3:1)                          (50 W)
#   else    both wait                                    (10 W = the baseline)
# mxqd gets SIGQUIT at tb + 2 s and is restarted a second later: it
# re-adopts both jobs while their shares are 3:1 and their CPU histories
# about 8:1. A re-adopted job that brought its history into its first
# interval (B loses about 4 %), or was left out of it (both lose one
# interval: 6 % and 10 %), misses by more than 2 %.
#
#   1. each job's energy equals its truth within 2 %: 5 W (half the
#      baseline: one of two slots) over its measured time plus its CPU
#      share of the true energy above the baseline, interval by interval
#      (tests/lib/split_truth.pl); its measured intervals cover the windows
#      mxqd measured (job start to the last sample before SIGQUIT, the
#      restart's first sample to the job's end)
#   2. both are partial (re-adopted), the node's energy equals the truth
#      over the same windows within 1 %, and jobs + idle + boot + shutdown
#      equal the node total exactly (to rounding)

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/fake-rapl.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"
echo "0 10" >"$W/schedule"

mxq_test_cleanup_hook() {
	mxqd_cleanup
	fake_rapl_stop
}
fake_rapl_start "$W" || not_ok "the writer publishes counters"

sql1() {
	mxq_sql "$@" | head -n 1
}
E_OPTS="--slots 2 --energy-sysfs-root $FAKE_RAPL_SYS --energy-interval 1 --energy-flush-interval 1
	--energy-model 10:0 --debug"

section "1. two jobs, a SIGQUIT and a restart"
# shellcheck disable=SC2086
check "start mxqd tnode" mxqd_start tnode $E_OPTS
t0=$(( $(now_ms) + 3000 ))
tb=$(( t0 + 5000 ))
t1=$(( t0 + 14000 ))
{ echo "$t0 50"; echo "$t1 10"; } >>"$W/schedule"
s() { awk -v t="$1" 'BEGIN { printf "%.3f", t / 1000 }'; }
burn=$MXQ_SRC_DIR/tests/lib/burn.pl
ja=$(submit -N a -t 10m perl "$burn" "$(s "$t0")" "$(s "$t1")" 0.3 "$W/cpu.a")
jb=$(submit -N b -t 10m perl "$burn" "$(s "$tb")" "$(s "$t1")" 0.1 "$W/cpu.b")
check "both jobs run" wait_for 15 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($ja, $jb) AND job_status = 200"
while [ "$(now_ms)" -lt $((tb + 2000)) ]; do sleep 0.1; done
mxqd_stop tnode QUIT
sleep 1
# shellcheck disable=SC2086
check "restart mxqd tnode" mxqd_start tnode $E_OPTS
# (the daemon registers before it re-adopts: wait for the log lines)
readopted() {
	test "$(grep -c 're-adopted) is accounted' "$(mxqd_dir tnode)/mxqd.log")" = 2
}
check "both jobs re-adopted" wait_until 10 readopted
check "both jobs end" wait_for 40 \
	"SELECT COUNT(*) = 2 FROM mxq_power_job WHERE job_id IN ($ja, $jb) AND date_end IS NOT NULL"
mxqd_stop tnode
is "mxqd tnode exits 0" "$mxqd_rc" 0

# the windows mxqd measured: up to q (the last sample before SIGQUIT),
# from r (the restart's first sample, a row after a gap) on
set -- $(mxq_sql "SELECT UNIX_TIMESTAMP(sample_time) * 1000 FROM mxq_power_sample
	WHERE hostname = 'tnode' AND prev_time IS NULL ORDER BY sample_time")
base=$1 r=$2
q=$(sql1 "SELECT MAX(UNIX_TIMESTAMP(sample_time) * 1000) FROM mxq_power_sample
	WHERE hostname = 'tnode' AND sample_time < FROM_UNIXTIME($r / 1000)")
last=$(sql1 "SELECT MAX(UNIX_TIMESTAMP(sample_time) * 1000) FROM mxq_power_sample WHERE hostname = 'tnode'")
echo "# t0 $t0 tb $tb t1 $t1; mxqd measured $base..$q and $r..$last"
check "the restart is a gap of its own" test -n "$q" -a -n "$r"

# each job's truth: its CPU share of the active true energy, interval by
# interval over mxqd's sample boundaries (the jobs' own CPU reports, the
# writer's log), plus 5 W (one of two slots of the 10 W baseline) over the
# intervals it was measured in; those must cover its windows
split=$(perl "$MXQ_SRC_DIR/tests/lib/split_truth.pl" --truth "$FAKE_RAPL_TRUTH" --idle 10 \
	"$(mxqd_dir tnode)/mxqd.log" "$ja=$W/cpu.a" "$jb=$W/cpu.b")
echo "$split" | sed 's/^/# split truth (job active_J measured_ms): /'

section "2. per-job energy against the truth"
for role in a b; do
	eval "j=\$j$role"
	set -- $(echo "$split" | awk -v j="$j" '$1 == j { print $2, $3 }')
	act=$1 ms=$2
	set -- $(mxq_sql "SELECT UNIX_TIMESTAMP(date_start) * 1000, UNIX_TIMESTAMP(date_end) * 1000
		FROM mxq_power_job WHERE job_id = $j")
	windows=$(awk -v s="$1" -v e="$2" -v q="$q" -v r="$r" 'BEGIN { printf "%d", (q - s) + (e - r) }')
	check "job $role's measured intervals cover its windows ($ms ms of $windows ms)" \
		within "$ms" "$windows" 0.5
	got=$(sql1 "SELECT energy_j FROM mxq_power_job WHERE job_id = $j")
	want=$(awk -v a="$act" -v ms="$ms" 'BEGIN { printf "%.4f", 5 * ms / 1000 + a }')
	echo "# job $role ($j): recorded $got J, truth $want J"
	check "job $role's energy equals its truth within 2 %" within "$got" "$want" 2
	is "job $role is partial (re-adopted)" "$(sql1 "SELECT completeness FROM mxq_power_job WHERE job_id = $j")" partial
done

section "3. the node"
row=$(mxq_sql "SELECT energy_joules, (SELECT SUM(energy_j) FROM mxq_power_job WHERE hostname = 'tnode')
	+ energy_idle_joules + energy_boot_joules + energy_shutdown_joules, energy_boot_joules
	FROM mxq_power WHERE hostname = 'tnode'")
set -- $row
want=$(awk -v a="$(truth_between "$base" "$q")" -v b="$(truth_between "$r" "$last")" 'BEGIN { print a + b }')
echo "# node total $1 J, jobs + idle + boot + shutdown $2 J (boot $3 J); truth over the windows $want J"
check "node energy equals the truth over the measured windows within 1 %" within "$1" "$want" 1
check "jobs + idle + boot + shutdown = node total (to rounding)" within "$2" "$1" 0.0001

tap_done
