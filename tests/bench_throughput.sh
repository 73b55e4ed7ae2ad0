#!/bin/sh
# tests/bench_throughput.sh - job throughput and dispatch latency of mxqd
# (run by `make bench`). Prints figures; never fails on timing, only when
# the jobs do not complete at all.
#
# A private MariaDB and 2 mxqd (bench1, bench2), 8 slots each, --memory 64G;
# jobs ask for BENCH_JOB_MEMORY (16M) of memory, so a job takes one slot
# (slots by threads). Not 1M: `true` alone peaks at about 1000 KiB of RSS,
# so a 1M limit would measure the memory check rather than the dispatch.
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
#      (date +%s.%N), the script records the clock before it runs mxqsub
#      and when mxqsub returned (the job is committed in between, so the
#      two differences bound the latency from above and below)
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

# Wait until every job of group $1 has ended; give up (with a warning, not
# a failure) when nothing ended for 30 s. Sets $drained_at to the clock of
# the last progress and $drain_note to a warning line (empty if all ended).
wait_drained() {
	_last=
	_since=$(now_cs)
	drained_at=$(clock)
	drain_note=
	while :; do
		_n=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $1
			AND job_status IN (0, 100, 150, 200, 250, 300, 350, 399, 989)")
		if [ "$_n" != "$_last" ]; then
			_last=$_n
			_since=$(now_cs)
			drained_at=$(clock)
		fi
		[ "$_n" = 0 ] && return 0
		if [ $(( $(now_cs) - _since )) -gt 3000 ]; then
			drain_note="   WARNING: $_n job(s) never ended (nothing moved for 30 s): $(mxq_sql "
				SELECT GROUP_CONCAT(CONCAT(job_id, ' status ', job_status, ' on ',
					host_hostname) SEPARATOR ', ') FROM mxq_job WHERE group_id = $1
				AND job_status IN (0, 100, 150, 200, 250, 300, 350, 399, 989)")"
			return 1
		fi
		sleep 0.1
	done
}

# Warnings and errors the daemons logged (they explain odd figures).
log_trouble() {
	_t=$(cat "$(mxqd_dir bench1)/mxqd.log" "$(mxqd_dir bench2)/mxqd.log" |
		grep -E ' (WARNING|ERROR): ' | sed 's/^[^ ]* [^ ]* mxqd\[[0-9]*\] //;
			s/job [0-9][0-9]*/job N/g' | sort | uniq -c | sort -rn | head -n 5)
	if [ -n "$_t" ]; then
		echo "daemon log warnings and errors (count, message):"
		printf '%s\n' "$_t" | sed 's/^ */   /'
	fi
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
	"--poll-interval $poll, $(nproc 2>/dev/null || echo '?') CPU(s)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

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
wait_drained "$g_live"
t_done=$drained_at
set -- $(log_span "$g_live")
first=$1 last=$2 ended=$3
nf=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $g_live AND job_status = 1000")
echo "1. submission while 2 daemons run ($jobs jobs, $submitters parallel mxqsub loops):"
[ -z "$drain_note" ] || echo "$drain_note"
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
clone_job "$tmpl" "$jobs" || fail "bulk insert failed"
[ "$(mxq_sql "SELECT group_jobs_inq FROM mxq_group WHERE group_id = $g_back")" = "$jobs" ] ||
	fail "bulk insert: the group does not have $jobs queued jobs"
t_b0=$(clock)
start_daemons
wait_drained "$g_back"
t_b1=$drained_at
set -- $(log_span "$g_back")
first=$1 last=$2 ended=$3
nf=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $g_back AND job_status = 1000")
spread=$(mxq_sql "SELECT GROUP_CONCAT(CONCAT(host_hostname, ' ', n) SEPARATOR ', ') FROM
	(SELECT host_hostname, COUNT(*) AS n FROM mxq_job WHERE group_id = $g_back
	 GROUP BY host_hostname) x")
echo "2. backlog of $jobs queued jobs, 2 daemons started on it:"
[ -z "$drain_note" ] || echo "$drain_note"
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
	t_before=$(clock)
	# shellcheck disable=SC2016 # expanded by the job's shell
	"$mxqsub_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -N latency -m "$mem" -t 10m -w "$W/lat" \
		sh -c 'date +%s.%N > "start.$MXQ_JOBID"' >"$W/lat.out"
	t_after=$(clock)
	echo "$(sed -n 's/^mxq_job_id=//p' "$W/lat.out") $t_before $t_after" >>"$W/lat.submitted"
done
g_lat=$(mxq_sql "SELECT MAX(group_id) FROM mxq_group WHERE group_name = 'latency'")
wait_drained "$g_lat"
lat_note=$drain_note
# one line per job: latency from mxqsub's start and from its return
while read -r id tb ta; do
	st=$(cat "$W/lat/start.$id" 2>/dev/null)
	[ -n "$st" ] && echo "$tb $ta $st"
done <"$W/lat.submitted" >"$W/lat.times"
stats() {
	sort -n | awk -v what="$1" '
		{ v[NR] = $1; sum += $1 }
		END {
			if (NR == 0) exit
			printf "   %s: mean %.3f s, median %.3f s, min %.3f s, max %.3f s\n",
				what, sum / NR, v[int((NR + 1) / 2)], v[1], v[NR]
		}'
}
echo "3. dispatch latency on idle daemons ($(wc -l <"$W/lat.times") of $latency_jobs jobs" \
	"recorded their start; submitted one at a time):"
awk '{ printf "%.6f\n", $3 - $1 }' "$W/lat.times" |
	stats "mxqsub started  -> job running (upper bound)"
awk '{ printf "%.6f\n", $3 - $2 }' "$W/lat.times" |
	stats "mxqsub returned -> job running (lower bound)"
echo "   (includes starting sh and date in the job; poll interval $poll s," \
	"expected mean about half of it plus the start-up)"
[ -z "$lat_note" ] || echo "$lat_note"
log_trouble

stop_daemons
exit 0
