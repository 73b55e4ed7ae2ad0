#!/bin/sh
# tests/bench_throughput.sh - job throughput and dispatch latency of mxqd
# (run by `make bench`). Prints figures; never fails on timing, only when
# the jobs do not complete at all.
#
# A private MariaDB and 2 mxqd (bench1, bench2), 8 slots each, --memory 64G;
# jobs ask for BENCH_JOB_MEMORY (16M) of memory, so a job takes one slot
# (slots by threads). Not 1M: mxqd samples a job's memory right after the
# fork, when the process is still a copy of the reaper (about 3 MB), and
# kills jobs with limits that small (see the BUG note in test_mxqd.sh).
#
#   1. submission while the daemons run: BENCH_JOBS (2000) `true` jobs via
#      mxqsub from BENCH_SUBMITTERS (4) parallel loops; figures: submission
#      rate, and jobs/s over the wall clock from the first submission to the
#      last job end
#   2. daemon throughput on a backlog: the daemons are stopped, BENCH_JOBS
#      `true` jobs are inserted in one SQL statement (copies of a job
#      submitted with mxqsub), the daemons are started; jobs/s from the
#      first job start to the last job end
#   3. dispatch latency on idle daemons: BENCH_LATENCY_JOBS (50) jobs
#      submitted one at a time; each job's first action records the clock
#      (date +%s.%N), the script records the clock when mxqsub returned
#      (the job is committed by then); latency = difference
#
# Job start and end times of 1 and 2 come from the mxqd logs, which carry
# millisecond timestamps ("started" is logged after RUNNING is recorded,
# the outcome after the terminal status is recorded). The database's
# TIMESTAMP columns have one-second resolution and are not used.
#
# Environment: BENCH_JOBS, BENCH_SUBMITTERS, BENCH_LATENCY_JOBS,
# BENCH_POLL_INTERVAL (mxqd --poll-interval, default 0.1), BENCH_JOB_MEMORY.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "bench_throughput: cannot start a private MariaDB" >&2; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

jobs=${BENCH_JOBS:-2000}
submitters=${BENCH_SUBMITTERS:-4}
latency_jobs=${BENCH_LATENCY_JOBS:-50}
poll=${BENCH_POLL_INTERVAL:-0.1}
mem=${BENCH_JOB_MEMORY:-16M}
W=$MXQ_TEST_DIR/work
mkdir -p "$W/lat"

fail() {
	echo "bench_throughput: $*" >&2
	exit 1
}

# seconds with nanoseconds, as a decimal string
clock() {
	date +%s.%N
}

# awk arithmetic on decimal strings: calc EXPR [VAR=VALUE...]
calc() {
	_e=$1
	shift
	awk "$@" "BEGIN { printf \"%.3f\\n\", $_e }"
}

start_daemons() {
	for h in bench1 bench2; do
		mxqd_start "$h" --slots 8 --memory 64G --poll-interval "$poll" ||
			fail "cannot start mxqd $h"
	done
}

stop_daemons() {
	for h in bench1 bench2; do
		mxqd_stop "$h" TERM 60 || fail "mxqd $h did not stop"
	done
}

# Times (seconds of the day, ms resolution) of the mxqd log lines about
# jobs of group $1: "started" (first) and terminal outcomes (last).
# Prints "FIRST_START LAST_END COUNT_ENDED".
log_span() {
	cat "$(mxqd_dir bench1)/mxqd.log" "$(mxqd_dir bench2)/mxqd.log" |
	awk -v g="(group $1," '
		function t(s,   a) { split(s, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
		index($0, g) == 0 { next }
		/\) started: / { s = t($2); if (first == "" || s < first) first = s }
		/\) (FINISHED|FAILED|KILLED|CANCELLED|UNKNOWN): / {
			e = t($2); n++; if (last == "" || e > last) last = e }
		END {
			if (first == "" || last == "") { print "0 0 0"; exit }
			if (last < first) last += 86400   # midnight in between
			printf "%.3f %.3f %d\n", first, last, n
		}'
}

echo "# mxqd throughput benchmark: $jobs jobs (--memory $mem), 2 daemons x 8 slots," \
	"--poll-interval $poll, $(nproc 2>/dev/null || echo '?') CPU(s)"

# ------------------------------------- 1. submission while daemons run

start_daemons
t_sub0=$(clock)
n_per=$(( (jobs + submitters - 1) / submitters ))
pids=
s=0
while [ "$s" -lt "$submitters" ]; do
	s=$((s + 1))
	(
		n=0
		while [ "$n" -lt "$n_per" ] && [ $(( (s - 1) * n_per + n )) -lt "$jobs" ]; do
			n=$((n + 1))
			# BUG: mxqsub can give up with "Deadlock found" while daemons
			# claim from the same group; count it and submit again
			try=0
			until "$mxqsub_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -N live -m "$mem" -t 10m true \
				>/dev/null 2>>"$W/submit.log"; do
				echo x >>"$W/submit.retries"
				try=$((try + 1))
				[ "$try" -lt 5 ] || { echo x >>"$W/submit.err"; break; }
			done
		done
	) &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
t_sub1=$(clock)
[ -s "$W/submit.err" ] && fail "$(wc -l <"$W/submit.err") submissions failed"
g_live=$(mxq_sql "SELECT group_id FROM mxq_group WHERE group_name = 'live'")
wait_for 600 "SELECT COUNT(*) = 0 FROM mxq_job WHERE group_id = $g_live AND job_status < 400" ||
	fail "phase 1: jobs did not complete within 600 s"
t_done=$(clock)
set -- $(log_span "$g_live")
first=$1 last=$2 ended=$3
nf=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $g_live AND job_status = 1000")
echo "1. submission while 2 daemons run ($jobs jobs, $submitters parallel mxqsub loops):"
if [ -s "$W/submit.retries" ]; then
	echo "   note: $(wc -l <"$W/submit.retries") mxqsub run(s) failed and were repeated:" \
		"$(sort "$W/submit.log" | uniq -c | sort -rn | head -n 1 | sed 's/^ *//')"
fi
echo "   submission:         $(calc "$jobs / (b - a)" -v a="$t_sub0" -v b="$t_sub1") jobs/s" \
	"($(calc "b - a" -v a="$t_sub0" -v b="$t_sub1") s for $jobs mxqsub runs)"
echo "   wall clock:         $(calc "b - a" -v a="$t_sub0" -v b="$t_done") s from the first" \
	"submission to the last job end seen (polled every 0.1 s):" \
	"$(calc "$jobs / (b - a)" -v a="$t_sub0" -v b="$t_done") jobs/s"
echo "   first start -> last end (mxqd logs): $(calc "b - a" -v a="$first" -v b="$last") s," \
	"$(calc "n / (b - a)" -v a="$first" -v b="$last" -v n="$ended") jobs/s;" \
	"$nf of $jobs FINISHED"

# --------------------------------------- 2. daemon throughput, backlog

stop_daemons
tmpl=$(submit -N backlog -m "$mem" -t 10m true) || fail "cannot submit the template job"
g_back=$(group_of "$tmpl")
mxq_sql "INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
		job_stdout, job_stderr, job_umask, host_submit)
	WITH RECURSIVE seq (n) AS (SELECT 2 UNION ALL SELECT n + 1 FROM seq WHERE n < $jobs)
	SELECT t.job_priority, t.group_id, t.job_workdir, t.job_argc, t.job_argv,
		t.job_stdout, t.job_stderr, t.job_umask, t.host_submit
	FROM seq JOIN mxq_job t ON t.job_id = $tmpl" || fail "bulk insert failed"
[ "$(mxq_sql "SELECT group_jobs_inq FROM mxq_group WHERE group_id = $g_back")" = "$jobs" ] ||
	fail "bulk insert: the group does not have $jobs queued jobs"
t_b0=$(clock)
start_daemons
wait_for 600 "SELECT COUNT(*) = 0 FROM mxq_job WHERE group_id = $g_back AND job_status < 400" ||
	fail "phase 2: jobs did not complete within 600 s"
t_b1=$(clock)
set -- $(log_span "$g_back")
first=$1 last=$2 ended=$3
nf=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $g_back AND job_status = 1000")
spread=$(mxq_sql "SELECT GROUP_CONCAT(CONCAT(host_hostname, ' ', n) SEPARATOR ', ') FROM
	(SELECT host_hostname, COUNT(*) AS n FROM mxq_job WHERE group_id = $g_back
	 GROUP BY host_hostname) x")
echo "2. backlog of $jobs queued jobs, 2 daemons started on it:"
echo "   first start -> last end (mxqd logs): $(calc "b - a" -v a="$first" -v b="$last") s," \
	"$(calc "n / (b - a)" -v a="$first" -v b="$last" -v n="$ended") jobs/s;" \
	"$nf of $jobs FINISHED ($spread)"
echo "   wall clock from starting the daemons to the last job end seen:" \
	"$(calc "b - a" -v a="$t_b0" -v b="$t_b1") s"

# ------------------------------------------ 3. dispatch latency, idle

n=0
: >"$W/lat.submitted"
while [ "$n" -lt "$latency_jobs" ]; do
	n=$((n + 1))
	# shellcheck disable=SC2016 # expanded by the job's shell
	id=$("$mxqsub_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -N latency -m "$mem" -t 10m -w "$W/lat" \
		sh -c 'date +%s.%N > "start.$MXQ_JOBID"' | sed -n 's/^mxq_job_id=//p')
	echo "$id $(clock)" >>"$W/lat.submitted"
done
g_lat=$(mxq_sql "SELECT MAX(group_id) FROM mxq_group WHERE group_name = 'latency'")
wait_for 120 "SELECT COUNT(*) = 0 FROM mxq_job WHERE group_id = $g_lat AND job_status < 400" ||
	fail "phase 3: jobs did not complete within 120 s"
while read -r id t; do
	st=$(cat "$W/lat/start.$id" 2>/dev/null)
	[ -n "$st" ] && echo "$t $st"
done <"$W/lat.submitted" | sort -k1,1n | awk '
	{ d = $2 - $1; v[NR] = d; sum += d; if (NR == 1 || d > max) max = d
	  if (NR == 1 || d < min) min = d }
	END {
		if (NR == 0) { print "3. dispatch latency: no job recorded its start"; exit }
		asort(v)
		printf "3. dispatch latency on idle daemons (%d jobs, one at a time):\n", NR
		printf "   mxqsub returned -> job running (its own clock): mean %.3f s, median %.3f s," \
			" min %.3f s, max %.3f s\n", sum / NR, v[int((NR + 1) / 2)], min, max
	}'
echo "   (includes starting sh and date in the job; poll interval $poll s," \
	"expected mean about half of it plus the start-up)"

stop_daemons
exit 0
