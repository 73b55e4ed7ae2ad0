#!/bin/sh
# tests/test_systemd.sh - mxqd as systemd sees it, without systemd.
#
# A small listener plays the service manager's notify socket
# ($NOTIFY_SOCKET, sd_notify(3) datagrams); mxqd's stderr is a file named
# by JOURNAL_STREAM, as under systemd. Checks: READY=1 arrives, and only
# once the daemon's mxq_daemon and mxq_power rows exist (Type=notify means
# "registered"); every log line carries its syslog priority "<N>" and no
# timestamp of its own; SIGTERM sends STOPPING=1 and is logged at NOTICE
# (<5>), so `journalctl -p notice` finds it; mxqd exits 0.
#
# Prints TAP lines; exits non-zero when a check failed.

. "$(dirname -- "$0")/lib/mariadb.sh"
. "$(dirname -- "$0")/lib/mxqd.sh"

listener_pid= daemon_pid=
mxq_test_cleanup_hook() {
	[ -n "$daemon_pid" ] && kill -INT "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	[ -n "$listener_pid" ] && kill "$listener_pid" 2>/dev/null && wait "$listener_pid" 2>/dev/null
	mxqd_cleanup
}

mxq_db_start || { not_ok "private MariaDB started"; exit 1; }
d=$MXQ_TEST_DIR/sd
mkdir -p "$d/spool" "$d/tmp"

# the service manager's end: every datagram as one line of $d/notify
python3 - "$d/notify.sock" "$d/notify" <<'EOF_PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
with open(sys.argv[2], "a") as out:
    out.write("LISTENING\n"); out.flush()
    while True:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        out.write(msg.replace("\n", " ") + "\n"); out.flush()
EOF_PY
listener_pid=$!
wait_until 30 grep -qs LISTENING "$d/notify" || { not_ok "notify listener started"; exit 1; }

: >"$d/stderr"
NOTIFY_SOCKET=$d/notify.sock JOURNAL_STREAM=$(stat -L -c '%d:%i' "$d/stderr") \
	"$mxqd_bin" --hostname sd1 --spool "$d/spool" --tmpdir "$d/tmp" \
	--poll-interval 0.1 --heartbeat-interval 1 -M "$MXQ_MYSQL_DEFAULT_FILE" \
	</dev/null >>"$d/stderr" 2>&1 &
daemon_pid=$!

check "READY=1 arrives" wait_until 30 grep -q '^READY=1' "$d/notify"
# the rows are there the moment READY is seen (written before it was sent)
is "registered in mxq_daemon before READY" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_daemon WHERE hostname = 'sd1' AND daemon_pid = $daemon_pid")" 1
is "registered in mxq_power before READY" \
	"$(mxq_sql "SELECT COUNT(*) FROM mxq_power WHERE hostname = 'sd1'")" 1
is "READY=1 sent once" "$(grep -c '^READY=1' "$d/notify")" 1

kill -TERM "$daemon_pid"
wait "$daemon_pid"
rc=$?
daemon_pid=
is "SIGTERM: exit 0" "$rc" 0
check "STOPPING=1 on SIGTERM" grep -q '^STOPPING=1' "$d/notify"
is "every log line starts with its priority" "$(grep -vc '^<[0-7]>' "$d/stderr")" 0
check "start-up logged at INFO (<6>)" grep -q '^<6>INFO: ' "$d/stderr"
check "SIGTERM logged at NOTICE (<5>)" grep -q '^<5>NOTICE: SIGTERM' "$d/stderr"
is "no timestamps of its own (the journal has them)" \
	"$(grep -c '^<[0-7]>[0-9]\{4\}-' "$d/stderr")" 0
diag <"$d/stderr"

tap_done
[ "$tap_failed" = 0 ]
