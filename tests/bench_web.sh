#!/bin/sh
# bench_web.sh - mxq-web's server time for its pages against a big
# cluster (benchmark for `make bench`; prints figures, never fails on
# timing). Populates a private MariaDB: 1,000 managed nodes (registered,
# half ON, half OFF), 1,000 groups of 1,000 queued jobs
# (MXQ_BENCH_JOBS_PER_GROUP overrides), a day of power events (4 per node)
# and 6 h of node power samples (one a minute per ON node). Then asks
# mxq-web for each page REPS times and prints the median and the largest
# server time (its Server-Timing header: building the response, database
# reads included, without the network). Target: the overview under 100 ms.
set -eu
MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd)
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"
. "$MXQ_SRC_DIR/tests/lib/bench.sh"
per_group=${MXQ_BENCH_JOBS_PER_GROUP:-1000}
reps=${MXQ_BENCH_REPS:-20}
web_pid=
mxq_test_cleanup_hook() {
	if [ -n "$web_pid" ]; then
		kill -TERM "$web_pid" 2>/dev/null || true
		wait "$web_pid" 2>/dev/null || true
	fi
}

mxq_db_start >/dev/null
start=$(date +%s)
bench_nodes 1000 500
mxq_sql "
INSERT INTO mxq_power_event (event_time, hostname, from_state, to_state, reason, actor)
  SELECT NOW(3) - INTERVAL (seq * 21) SECOND, CONCAT('node', 1 + seq % 1000),
         ELT(1 + seq % 4, 'ON', 'DRAINING', 'POWERING_OFF', 'OFF'),
         ELT(1 + seq % 4, 'DRAINING', 'POWERING_OFF', 'OFF', 'POWERING_ON'), 'bench', 'leader'
  FROM seq_1_to_4000;
INSERT INTO mxq_power_sample (hostname, sample_time, energy_j, watts)
  SELECT CONCAT('node', n.seq), NOW(3) - INTERVAL m.seq MINUTE, 1e7 - m.seq * 9000, 150
  FROM seq_1_to_500 n JOIN seq_0_to_359 m;
"
bench_queue_fill "$per_group"
echo "populated in $(( $(date +%s) - start )) s: $(mxq_sql 'SELECT COUNT(*) FROM mxq_job') jobs," \
	"$(mxq_sql 'SELECT COUNT(*) FROM mxq_power') nodes," \
	"$(mxq_sql 'SELECT COUNT(*) FROM mxq_power_sample') samples"

if [ -n "${MXQ_BENCH_HOLD:-}" ]; then
	# keep the populated database for profiling: MXQ_BENCH_HOLD seconds
	echo "holding: MXQ_MYSQL_DEFAULT_FILE=$MXQ_MYSQL_DEFAULT_FILE"
	sleep "$MXQ_BENCH_HOLD"
	exit 0
fi
port=$(mxq_free_port tcp)
"$MXQ_BUILD_DIR/mxq-web" --listen "127.0.0.1:$port" --threads 1 >"$MXQ_TEST_DIR/web.out" 2>&1 &
web_pid=$!
i=0
until curl -sf -o /dev/null --max-time 30 "http://127.0.0.1:$port/api/nodes"; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "bench_web: mxq-web did not answer"; cat "$MXQ_TEST_DIR/web.out"; exit 1; }
	sleep 0.1
done

# PATH [TARGET_MS]: median and maximum server time over $reps requests
# (after one request that fills the chart cache), and the median CPU time
# of mxq-web's thread in it
measure() {
	local _i
	curl -s -o /dev/null --max-time 60 "http://127.0.0.1:$port$1"
	_i=0
	while [ $_i -lt "$reps" ]; do
		curl -s -D - -o /dev/null --max-time 60 "http://127.0.0.1:$port$1" |
			sed -n 's/^Server-Timing: app;dur=\([0-9.]*\), cpu;dur=\([0-9.]*\).*/\1 \2/p'
		_i=$((_i + 1))
	done | awk -v p="$1" -v target="${2:-0}" '
		{ w[NR] = $1; c[NR] = $2 }
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return a[int((n + 1) / 2)]
		}
		END {
			if (NR == 0) { printf "  %-20s no answer\n", p; exit }
			cm = median(c, NR); wm = median(w, NR)
			printf "  %-20s median %7.1f ms  max %7.1f ms  (cpu %6.1f ms)%s\n", p, wm, w[NR], cm,
				target ? sprintf("  target < %d ms: %s", target, wm < target ? "met" : "MISSED") : ""
		}'
}
cold=$(curl -s -D - -o /dev/null --max-time 60 "http://127.0.0.1:$port/" |
	sed -n 's/^Server-Timing: app;dur=\([0-9.]*\).*/\1/p')
bytes=$(curl -s --max-time 60 "http://127.0.0.1:$port/" | wc -c)
echo "mxq-web server time (load average $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores)," \
	"$reps requests each; overview page $bytes bytes, first view (cold chart cache) $cold ms:"
measure / 100
measure /?window=1d
measure /api/nodes
measure /api/overview
measure /node/node7
measure /group/500
measure /groups
measure /metrics
measure "/energy?window=7d"
