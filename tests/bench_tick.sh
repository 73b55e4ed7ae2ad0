#!/bin/sh
# bench_tick.sh - a power manager tick against a database holding a million
# queued jobs (benchmark for `make bench`; prints figures, never fails on
# timing). Populates a private MariaDB: 10,000 managed nodes (half ON,
# MXQ_BENCH_NODES overrides), 1,000 groups of 1,000 queued jobs
# (MXQ_BENCH_JOBS_PER_GROUP overrides), then runs bench/bench_tick against it.
set -eu
MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd)
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"
. "$MXQ_SRC_DIR/tests/lib/bench.sh"
per_group=${MXQ_BENCH_JOBS_PER_GROUP:-1000}
nodes=${MXQ_BENCH_NODES:-10000}

mxq_db_start >/dev/null
start=$(date +%s)
bench_nodes "$nodes" $((nodes / 2))
bench_queue_fill "$per_group"
echo "populated in $(( $(date +%s) - start )) s: $(mxq_sql 'SELECT COUNT(*) FROM mxq_job') jobs"
MXQ_BENCH_DB=$MXQ_MYSQL_DEFAULT_FILE "$MXQ_BUILD_DIR/bench/bench_tick"
