#!/bin/sh
# demo.sh - the README's demo: a private MariaDB, two mxqd acting as two
# nodes, a batch of jobs in three groups (one of them failing on purpose),
# then what mxqdump shows. Everything lives in a temporary directory and is
# removed on exit, also on Ctrl-C.
set -eu
MXQ_SRC_DIR=$(cd "$(dirname -- "$0")/.." && pwd)
MXQ_BUILD_DIR=${MXQ_BUILD_DIR:-$MXQ_SRC_DIR}
export MXQ_SRC_DIR MXQ_BUILD_DIR
. "$MXQ_SRC_DIR/tests/lib/mariadb.sh"
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

say() { printf '\n== %s\n' "$*"; }

say "starting a private MariaDB"
mxq_db_start >/dev/null
echo "database ready in $MXQ_TEST_DIR"

say "starting two nodes: node1 (4 slots), node2 (2 slots, tag 'bigmem')"
mxqd_start node1 --slots 4 --memory 4G >/dev/null
mxqd_start node2 --slots 2 --memory 8G --tags bigmem >/dev/null
"$MXQ_BUILD_DIR/mxqadmin" power list 2>/dev/null || true

say "submitting 24 jobs in three groups"
work=$MXQ_TEST_DIR/work
mkdir -p "$work"
i=0
while [ $i -lt 12 ]; do
	"$MXQ_BUILD_DIR/mxqsub" -w "$work" --group-name demo-short -m 100M -t 5m \
		sh -c 'echo "job $MXQ_JOBID on $MXQ_HOSTNAME"; sleep 0.5' >/dev/null
	i=$((i + 1))
done
i=0
while [ $i -lt 8 ]; do
	"$MXQ_BUILD_DIR/mxqsub" -w "$work" --group-name demo-bigmem -m 1G --prerequisites bigmem \
		sh -c 'sleep 1' >/dev/null
	i=$((i + 1))
done
i=0
while [ $i -lt 4 ]; do
	"$MXQ_BUILD_DIR/mxqsub" -w "$work" --group-name demo-failing -m 100M sh -c 'exit 3' >/dev/null
	i=$((i + 1))
done
echo "queued; waiting for the nodes to run them"
wait_for 120 "SELECT COUNT(*) = 0 FROM mxq_job WHERE job_status < 400" >/dev/null || true

say "groups (mxqdump --all --inactive)"
"$MXQ_BUILD_DIR/mxqdump" --all --inactive
say "the failing group's jobs (mxqdump -j --status failed)"
"$MXQ_BUILD_DIR/mxqdump" -j --all --inactive --status FAILED
say "where the jobs ran"
mxq_sql "SELECT g.group_name, j.host_hostname, COUNT(*) FROM mxq_job j JOIN mxq_group g USING (group_id)
	 GROUP BY g.group_name, j.host_hostname ORDER BY 1, 2" |
	awk -F'\t' '{ printf "  %-14s %-6s %s jobs\n", $1, $2, $3 }'
say "stopping the nodes and the database"
mxqd_stop node1 TERM >/dev/null
mxqd_stop node2 TERM >/dev/null
echo "done"
