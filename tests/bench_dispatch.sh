#!/bin/sh
# tests/bench_dispatch.sh - dispatch rate of one mxqd on a backlog of
# trivial jobs (run by `make bench`), optionally against upstream MXQ 0.22
# on the same database server, machine and run. Prints figures; never
# fails on timing, only when the jobs do not complete.
#
# A round: the daemon is stopped, BENCH_DISPATCH_JOBS (600) `true` jobs
# are queued in one SQL statement (copies of a job submitted with mxqsub),
# the daemon is started with S slots. A trigger added for the benchmark
# records the time (µs) of every job's change to FINISHED; the script
# only looks every 0.5 s whether all are done (polling faster would take
# CPU from the daemons). Rate = (jobs - 1) / (last FINISHED - first
# FINISHED), so the daemon's start-up is not counted. Per job, the CPU
# time of the database server and of the daemon with its children
# (reapers, jobs) and the statements the server ran are printed. Rounds
# alternate between the daemons, BENCH_DISPATCH_ROUNDS (3) each; printed
# are every round, the best and the median.
#
#   1. this mxqd, 1 daemon x 2 slots (and upstream's mxqd with 2 slots)
#   2. this mxqd, 1 daemon x 8 slots (upstream refuses more slots than
#      cores; it is run with 8 only where the machine has 8)
#   3. where the time goes per job (last round of each slot count):
#      mxqd's own profile of its main loop (claim, start, status updates,
#      spool files, cancel checks, waiting), logged at exit, and of its
#      reapers, which run in parallel and hold a slot until they exit
#      (setup, cgroup create, fork to exec, the job, cgroup kill/stats/
#      remove, tmpdir, outcome file and exit), mean per job
#
# Upstream: MXQ_UPSTREAM_DIR names a build directory of upstream MXQ 0.22
# (mxqd, mxqsub and mysql/create_tables.sql, mysql/create_trigger.sql; see
# HACKING.md for how to build one outside this tree). Unset: only this
# mxqd is measured. Upstream's database is a second database on the same
# server, latin1 like a 2016 one, with upstream's own tables and triggers.
#
# Environment: BENCH_DISPATCH_JOBS, BENCH_DISPATCH_ROUNDS,
# BENCH_DISPATCH_SLOTS ("2 8"), MXQ_UPSTREAM_DIR.

if [ "$(id -u)" != 0 ]; then
	echo "bench_dispatch: not run: needs root (a throwaway user submits the jobs, mxqd runs them as it)"
	exit 0
fi
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "bench_dispatch: cannot start a private MariaDB" >&2; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

jobs=${BENCH_DISPATCH_JOBS:-600}
rounds=${BENCH_DISPATCH_ROUNDS:-3}
slot_list=${BENCH_DISPATCH_SLOTS:-2 8}
UP=${MXQ_UPSTREAM_DIR:-}
W=$MXQ_TEST_DIR/work
mkdir -p "$W/up"
up_pid=
# Jobs are submitted by a throwaway user (upstream's mxqsub refuses root),
# with copies of the (throwaway) credentials it can read.
U=mxqb16$(mxq__random_hex 3)
UD=$(mktemp -d) || exit 1
chmod 755 "$UD"

fail() {
	echo "bench_dispatch: $*" >&2
	exit 1
}

mxq_test_cleanup_hook() {
	[ -n "$up_pid" ] && kill -INT "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null
	mxqd_cleanup
	id "$U" >/dev/null 2>&1 && userdel "$U"
	rm -rf "$UD"
}
useradd --no-create-home --shell /usr/sbin/nologin "$U" || fail "cannot create user $U"
# TCP: the server's socket is in the test directory, which only root can enter
cp "$MXQ_MYSQL_DEFAULT_FILE_TCP" "$UD/ours.cnf"
chmod 644 "$UD/ours.cnf"

clock() {
	date +%s.%N
}

# SQL on upstream's database
up_sql() {
	mxq_sql_db mxqup "$@"
}

if [ -n "$UP" ]; then
	for f in mxqd mxqsub mysql/create_tables.sql mysql/create_trigger.sql; do
		[ -e "$UP/$f" ] || fail "MXQ_UPSTREAM_DIR=$UP has no $f (an upstream 0.22 build dir)"
	done
	mxq_db_add mxqup || fail "cannot create upstream's database"
	up_sql "ALTER DATABASE mxqup CHARACTER SET latin1" || fail "cannot make it latin1"
	up_sql <"$UP/mysql/create_tables.sql" || fail "upstream's create_tables.sql failed"
	up_sql <"$UP/mysql/create_trigger.sql" || fail "upstream's create_trigger.sql failed"
	sed 's/^database=.*/database=mxqup/' "$MXQ_MYSQL_DEFAULT_FILE_TCP" >"$UD/up.cnf"
	chmod 644 "$UD/up.cnf"
fi

# The benchmark's end-time recorder, on the database of sql function $1.
add_recorder() {
	$1 <<'EOF' || fail "cannot add the benchmark's trigger"
CREATE TABLE bench_end (group_id BIGINT UNSIGNED NOT NULL, t DATETIME(6) NOT NULL);
DELIMITER //
CREATE TRIGGER bench_end_t AFTER UPDATE ON mxq_job FOR EACH ROW
BEGIN
	IF NEW.job_status = 1000 AND OLD.job_status <> 1000 THEN
		INSERT INTO bench_end VALUES (NEW.group_id, NOW(6));
	END IF;
END//
DELIMITER ;
EOF
}
add_recorder mxq_sql
[ -z "$UP" ] || add_recorder up_sql

# Queue $jobs copies of one `true` job in group NAME; prints the group id.
# $1: sql function, $2: mxqsub binary, $3: defaults file, $4: group name
queue() {
	_sql=$1
	_tmpl=$(cd / && runuser -u "$U" -- "$2" -M "$3" -N "$4" -m 16M -t 10 -w / true |
		sed -n 's/^mxq_job_id=//p')
	[ -n "$_tmpl" ] || { echo "bench_dispatch: cannot submit the template job with $2" >&2; return 1; }
	_cols=$($_sql "SELECT GROUP_CONCAT(column_name ORDER BY ordinal_position)
		FROM information_schema.columns WHERE table_schema = DATABASE()
		AND table_name = 'mxq_job' AND column_name <> 'job_id'")
	$_sql "SET SESSION max_recursive_iterations = $jobs + 10;
		INSERT INTO mxq_job ($_cols)
		WITH RECURSIVE seq (n) AS (SELECT 2 UNION ALL SELECT n + 1 FROM seq WHERE n < $jobs)
		SELECT $_cols FROM seq JOIN mxq_job t ON t.job_id = $_tmpl" || return 1
	$_sql "SELECT group_id FROM mxq_job WHERE job_id = $_tmpl"
}

# Wait until all $jobs jobs of group $2 (sql function $1) are finished;
# prints the rate in jobs/s, or "stalled" after 60 s without progress.
measure() {
	_last_n=-1 _since=$(now_cs)
	while :; do
		_n=$($1 "SELECT COUNT(*) FROM bench_end WHERE group_id = $2")
		[ "$_n" = "$jobs" ] && break
		if [ "$_n" != "$_last_n" ]; then
			_last_n=$_n
			_since=$(now_cs)
		elif [ $(( $(now_cs) - _since )) -gt 6000 ]; then
			echo stalled
			return 1
		fi
		sleep 0.5
	done
	$1 "SELECT ROUND((COUNT(*) - 1) * 1e6 / TIMESTAMPDIFF(MICROSECOND, MIN(t), MAX(t)), 1)
		FROM bench_end WHERE group_id = $2"
}

# CPU time (clock ticks) of process $1 and its reaped children
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }'
}
# the same, split: "OWN CHILDREN"
cpu_split() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13, $14 + $15 }'
}
questions() {
	mxq_sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }'
}
# Before a round: remember the database server's CPU and statement count.
cost_start() {
	_db0=$(cpu_ticks "$MXQ_TEST_DB_PID")
	_q0=$(questions)
}
# After a round (daemon $1 still running): "RATE server_ms daemon_ms statements"
# per job on stdout, appended to RATE.
cost_line() {
	_hz=$(getconf CLK_TCK)
	set -- "$1" "$2" $(cpu_split "$1")
	awk -v r="$2" -v d0="$_db0" -v d1="$(cpu_ticks "$MXQ_TEST_DB_PID")" -v own="$3" -v ch="$4" \
		-v q0="$_q0" -v q1="$(questions)" -v n="$jobs" -v hz="$_hz" 'BEGIN {
		printf "%s %.2f %.2f %.1f %.2f %.2f\n", r, (d1 - d0) * 1000 / hz / n,
			(own + ch) * 1000 / hz / n, (q1 - q0) / n, own * 1000 / hz / n, ch * 1000 / hz / n }'
}

ours_round() {
	_g=$(queue mxq_sql "$mxqsub_bin" "$UD/ours.cnf" "ours$1x$2") || fail "cannot queue the jobs"
	cost_start
	mxqd_start disp --slots "$1" --memory 64G --poll-interval 0.1 --energy-sources none $BENCH_DISPATCH_MXQD_OPTS ||
		fail "cannot start mxqd"
	_r=$(measure mxq_sql "$_g")
	cost_line "$(mxqd_pid disp)" "$_r"
	mxqd_stop disp TERM 60 || fail "mxqd did not stop"
}

up_round() {
	_g=$(queue up_sql "$UP/mxqsub" "$UD/up.cnf" "up$1x$2") || fail "cannot queue upstream's jobs"
	"$UP/mxqd" --no-log -M "$MXQ_TEST_DIR/mxqup.cnf" --hostname uphost --slots "$1" \
		--memory 64G --initial-tmpdir "$W/up" </dev/null >>"$W/up/mxqd.out" 2>&1 &
	up_pid=$!
	cost_start
	_r=$(measure up_sql "$_g")
	cost_line "$up_pid" "$_r"
	kill -TERM "$up_pid" 2>/dev/null
	wait "$up_pid" 2>/dev/null
	up_pid=
}

# best and median of the rates in $*
summary() {
	printf '%s\n' "$@" | grep -v stalled | sort -n | awk '
		{ v[NR] = $1 }
		END { if (NR == 0) { print "no complete round"; exit }
		      printf "best %.1f jobs/s, median %.1f jobs/s\n", v[NR], v[int((NR + 1) / 2)] }'
}

echo "# mxqd dispatch benchmark: $jobs queued \`true\` jobs per round, $rounds round(s)," \
	"$(nproc) CPU(s), load average $(cut -d' ' -f1-3 /proc/loadavg)"
best_ours2= best_up2=
for s in $slot_list; do
	ours= up=
	r=0
	while [ "$r" -lt "$rounds" ]; do
		r=$((r + 1))
		x=$(ours_round "$s" "$r") || exit 1
		ours="$ours ${x%% *}"
		echo "$x" >>"$W/cost.ours.$s"
		if [ -n "$UP" ] && [ "$s" -le "$(nproc)" ]; then
			y=$(up_round "$s" "$r") || exit 1
			up="$up ${y%% *}"
			echo "$y" >>"$W/cost.up.$s"
		fi
	done
	echo "1 daemon x $s slots:"
	echo "   this mxqd:     rounds$ours jobs/s; $(summary $ours)"
	if [ -n "$up" ]; then
		echo "   upstream 0.22: rounds$up jobs/s; $(summary $up)"
		b_o=$(summary $ours | sed -n 's/^best \([0-9.]*\).*/\1/p')
		b_u=$(summary $up | sed -n 's/^best \([0-9.]*\).*/\1/p')
		[ -n "$b_o" ] && [ -n "$b_u" ] &&
			echo "   best round: this mxqd / upstream = $(awk -v a="$b_o" -v b="$b_u" 'BEGIN { printf "%.2f", a / b }')"
	elif [ -n "$UP" ]; then
		echo "   upstream 0.22: not run (it refuses more slots than the $(nproc) cores)"
	fi
	for who in ours up; do
		[ -s "$W/cost.$who.$s" ] || continue
		awk -v who="$who" '{ d += $2; m += $3; q += $4; o += $5; c += $6; n++ } END {
			printf "   %s per job (mean of %d rounds): database server %.2f ms CPU," \
				" daemon %.2f + its children (reapers, jobs) %.2f = %.2f ms CPU," \
				" %.1f statements\n", who == "ours" ? "this mxqd:    " : "upstream 0.22:",
				n, d / n, o / n, c / n, m / n, q / n }' \
			"$W/cost.$who.$s"
	done
	echo "   where the time goes (last round, mean per job):"
	grep 'dispatch profile' "$(mxqd_dir disp)/mxqd.log" | tail -n 1 |
		sed 's/.*dispatch profile: /      main loop: /; s/; /\n         /g'
	grep 'reaper profile' "$(mxqd_dir disp)/mxqd.log" | tail -n 1 |
		sed 's/.*reaper profile: /      reaper (in parallel): /; s/; /\n         /g'
done
exit 0
