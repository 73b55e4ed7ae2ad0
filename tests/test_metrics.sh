#!/bin/sh
# tests/test_metrics.sh - `mxqadmin power metrics` for the node exporter.
#
# Fills a private database with power rows (one node per state, events
# with transitions and failures), a leader lease, jobs in several statuses
# and job energy of two users, then checks the metrics: promtool accepts
# the output (package prometheus), the node power state is one-hot, the
# transition and failure counters per host, leader epoch and holder, queue
# depth per status, energy per user, and timestamps instead of ages; a
# label with a quote and a newline is escaped; a database error is one line
# and exit 1.
#
# Prints TAP lines; exits non-zero when a check failed.

. "$(dirname -- "$0")/lib/mariadb.sh"
. "$MXQ_SRC_DIR/tests/lib/tap.sh"

mxqadmin=$MXQ_BUILD_DIR/mxqadmin
mxq_db_start || { not_ok "private MariaDB started"; exit 1; }

mxq_sql <<'EOF' || not_ok "test rows inserted"
INSERT INTO mxq_power (hostname, state, state_since, node_seen_at, energy_joules, energy_updated_at)
VALUES ('n-on', 'ON', '2026-01-02 03:04:05', NOW(3), 100, '2026-01-02 03:04:05'),
       ('n-off', 'OFF', NOW(3), NULL, 0, NULL),
       ('n-failed', 'FAILED', NOW(3), NULL, 0, NULL);
INSERT INTO mxq_power_event (hostname, from_state, to_state, epoch, actor) VALUES
  ('n-off', 'ON', 'DRAINING', 3, 'leader'), ('n-off', 'DRAINING', 'POWERING_OFF', 3, 'leader'),
  ('n-off', 'POWERING_OFF', 'OFF', 3, 'leader'),
  ('n-failed', 'OFF', 'POWERING_ON', 3, 'leader'), ('n-failed', 'POWERING_ON', 'FAILED', 3, 'leader');
INSERT INTO mxq_power_leader (id, epoch, holder, lease_expires, last_tick_at, dry_run)
VALUES (1, 7, 'head/main[42:1]', NOW(3) + INTERVAL 30 SECOND, NOW(3), 1)
ON DUPLICATE KEY UPDATE epoch = 7, holder = 'head/main[42:1]',
  lease_expires = NOW(3) + INTERVAL 30 SECOND, last_tick_at = NOW(3), dry_run = 1;
INSERT INTO mxq_group (group_id, group_name, user_uid, user_name, user_gid, user_group, job_command)
VALUES (1, 'g1', 1001, 'alice', 1001, 'alice', 'true'), (2, 'g2', 1002, 'bob"x', 1002, 'bob', 'true');
INSERT INTO mxq_job (job_id, group_id, job_status, job_workdir, job_argc, job_argv, job_stdout, job_stderr, job_umask)
VALUES (1, 1, 0, '/', 1, 'true', '/dev/null', '/dev/null', 18), (2, 1, 0, '/', 1, 'true', '/dev/null', '/dev/null', 18),
       (3, 1, 1000, '/', 1, 'true', '/dev/null', '/dev/null', 18), (4, 2, 750, '/', 1, 'true', '/dev/null', '/dev/null', 18);
INSERT INTO mxq_power_job (job_id, hostname, energy_j, date_start, date_end)
VALUES (3, 'n-on', 560.21, NOW(3), NOW(3)), (4, 'n-on', 10.5, NOW(3), NOW(3));
EOF

out=$("$mxqadmin" power metrics 2>"$MXQ_TEST_DIR/err"); rc=$?
is "power metrics: exit 0" "$rc" 0
diag <"$MXQ_TEST_DIR/err"
printf '%s\n' "$out" >"$MXQ_TEST_DIR/mxq.prom"
if command -v promtool >/dev/null; then
	lint=$(promtool check metrics <"$MXQ_TEST_DIR/mxq.prom" 2>&1); rc=$?
	is "promtool check metrics: clean" "$rc:$lint" "0:"
else
	not_ok "promtool missing (package prometheus)"
fi

metric() {	# the value of the exact series $1
	printf '%s\n' "$out" | S=$1 awk '$1 == ENVIRON["S"] { print $2 }'
}
is "node power state one-hot: n-off OFF" "$(metric 'mxq_node_power_state{host="n-off",state="OFF"}')" 1
is "node power state one-hot: n-off not ON" "$(metric 'mxq_node_power_state{host="n-off",state="ON"}')" 0
is "every state listed per host" \
	"$(printf '%s\n' "$out" | grep -c '^mxq_node_power_state{host="n-on",')" 7
is "transitions per host" "$(metric 'mxq_node_power_transitions_total{host="n-off"}')" 3
is "transitions of a host without events: 0" "$(metric 'mxq_node_power_transitions_total{host="n-on"}')" 0
is "failures per host" "$(metric 'mxq_node_power_failures_total{host="n-failed"}')" 1
is "leader epoch" "$(metric 'mxq_power_leader_epoch')" 7
is "leader holder" "$(metric 'mxq_power_leader_info{holder="head/main[42:1]"}')" 1
is "dry run" "$(metric 'mxq_power_dry_run')" 1
is "queue depth INQ" "$(metric 'mxq_queue_jobs{status="INQ"}')" 2
is "queue depth FINISHED" "$(metric 'mxq_queue_jobs{status="FINISHED"}')" 1
is "queue depth of an empty status is 0, not absent" "$(metric 'mxq_queue_jobs{status="RUNNING"}')" 0
is "energy per user (no float noise)" "$(metric 'mxq_user_energy_joules_total{user="alice"}')" 560.21
is "user label escaped" "$(metric 'mxq_user_energy_joules_total{user="bob\"x"}')" 10.5
want=$(mxq_sql "SELECT UNIX_TIMESTAMP('2026-01-02 03:04:05')")
is "state since: a timestamp" "$(metric 'mxq_node_power_state_since_timestamp_seconds{host="n-on"}')" "$want"
is "energy updated: a timestamp, not an age" \
	"$(metric 'mxq_node_energy_updated_timestamp_seconds{host="n-on"}')" "$want.000"
not_contains "no age metrics left" "$out" "age_seconds"
now=$(date +%s)
gen=$(metric mxq_metrics_generated_timestamp_seconds)
check "generated timestamp is now" test "$((now - gen))" -le 60

mxq_sql "DROP TABLE mxq_power_leader"
"$mxqadmin" power metrics >/dev/null 2>"$MXQ_TEST_DIR/err"; rc=$?
is "database error: exit 1" "$rc" 1
is "database error: one line" "$(wc -l <"$MXQ_TEST_DIR/err")" 1

tap_done
[ "$tap_failed" = 0 ]
