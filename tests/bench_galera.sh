#!/bin/sh
# tests/bench_galera.sh - job claims per second on one MariaDB server and on
# a 3-node Galera cluster on 127.0.0.1, and the write-conflict retry rate
# (run by `make bench-galera`). Prints figures; fails only when the jobs do
# not complete.
#
# For each backend: a backlog of BENCH_JOBS (600) `true` jobs in one group
# (one mxqsub, then copies in one INSERT), then BENCH_DAEMONS (3) mxqd with
# BENCH_SLOTS (4) slots each are started; on Galera daemon N talks to
# database node N first, so every claim competes with claims certified on
# the other nodes. Figures: jobs/s from the daemons' start to the last job
# end (each job is one claim UPDATE plus its RUNNING and FINISHED updates),
# and from the daemons' exit lines the write conflicts that mx_db retried
# and those it gave up on, per 100 jobs.

jobs=${BENCH_JOBS:-600}
ndaemons=${BENCH_DAEMONS:-3}
slots=${BENCH_SLOTS:-4}

calc() {
	_e=$1
	shift
	awk "$@" "BEGIN { printf \"%.2f\\n\", $_e }"
}

# Queue $jobs jobs, start the daemons (daemon i with defaults file
# "$(cnf_of i)"), wait until all ended, print one line of figures for $1.
run_backend() {
	local _label _tmpl _g _t0 _t1 _i _retries _given _n
	_label=$1
	_tmpl=$(submit -M "$(cnf_of 1)" -N claims -m 16M -t 10m true) || return 1
	_g=$(group_of "$_tmpl")
	clone_job "$_tmpl" "$jobs" || return 1
	_t0=$(date +%s.%N)
	_i=1
	while [ "$_i" -le "$ndaemons" ]; do
		mxqd_start "b$_i" -M "$(cnf_of "$_i")" --slots "$slots" --memory 64G || return 1
		_i=$((_i + 1))
	done
	wait_for 300 "(SELECT COUNT(*) FROM mxq_job WHERE group_id = $_g
		AND job_status IN (0, 100, 150, 200)) = 0" || return 1
	_t1=$(date +%s.%N)
	_i=1
	while [ "$_i" -le "$ndaemons" ]; do
		mxqd_stop "b$_i" TERM 60 >/dev/null
		_i=$((_i + 1))
	done
	_n=$(mxq_sql "SELECT COUNT(*) FROM mxq_job WHERE group_id = $_g AND job_status = 1000")
	set -- $(cat "$MXQ_TEST_DIR"/mxqd/b*/mxqd.log | awk '/ database: .* connect\(s\)/ {
		for (i = 1; i <= NF; i++) { if ($i == "conflict(s)") r += $(i - 2);
			if ($i == "given") g += $(i - 1) } } END { print r + 0, g + 0 }')
	_retries=$1 _given=$2
	printf '%-28s %7s jobs/s  (%s of %s FINISHED in %s s); write conflicts retried: %s (%s per 100 jobs), given up: %s\n' \
		"$_label" "$(calc "n / (b - a)" -v n="$_n" -v a="$_t0" -v b="$_t1")" "$_n" "$jobs" \
		"$(calc "b - a" -v a="$_t0" -v b="$_t1")" "$_retries" \
		"$(calc "100 * r / n" -v r="$_retries" -v n="$jobs")" "$_given"
}

echo "# claims: $jobs trivial jobs, $ndaemons mxqd x $slots slots, $(nproc) CPU(s)," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
(
	. "$(dirname -- "$0")/lib/mariadb.sh"
	mxq_db_start || { echo "bench_galera: no MariaDB" >&2; exit 1; }
	. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
	cnf_of() { echo "$MXQ_MYSQL_DEFAULT_FILE_TCP"; }
	run_backend "one server (TCP):" || exit 1
) || exit 1
(
	. "$(dirname -- "$0")/lib/mariadb.sh"
	. "$(dirname -- "$0")/lib/galera.sh"
	mxq_galera_start 3 || { echo "bench_galera: no Galera cluster" >&2; exit 1; }
	. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
	cnf_of() { echo "$MXQ_TEST_DIR/galera-$(( ($1 - 1) % 3 + 1 )).cnf"; }
	run_backend "3-node Galera (1 per node):" || exit 1
) || exit 1
