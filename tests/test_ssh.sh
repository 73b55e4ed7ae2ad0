#!/bin/sh
# tests/test_ssh.sh - the ssh transport of the power manager (drain and
# poweroff of nodes whose mxqd is too old for the drain protocol) against a
# real sshd on 127.0.0.1, set up exactly as README.md "Restricted ssh key
# for the power manager" describes: one key for the power manager, limited
# in authorized_keys with command="SCRIPT",restrict to a script that
# dispatches on SSH_ORIGINAL_COMMAND (drain | poweroff).
#
#   old1  old mxqd (--no-power-node): drain over ssh, its mxqd exits,
#         the leader acknowledges, poweroff over ssh -> OFF
#   unk   host key not in its known_hosts file  -> FAILED naming the file
#   chg   host key changed                      -> FAILED naming the file
#   ex    the command exits 3                   -> FAILED with the status
#   hang  the command hangs                     -> cut at the timeout
# and old1 is woken again by Wake-on-LAN: a UDP listener on 127.0.0.1 checks
# the magic packets (6 x ff, the MAC 16 times), --power-wol-count of them.
#
# sshd runs in a private mount namespace (Debian's sshd needs /run/sshd).
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
POWER_LEASE=25
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/power.sh"

D=$MXQ_TEST_DIR/ssh
mkdir -p "$D"
chmod 700 "$D"
# root's login shell may take seconds (a slow .bashrc on a loaded machine)
SSH_TIMEOUT=10
sshd_pid=
wol_pid=

mxq_test_cleanup_hook() {
	local _p
	mxqd_cleanup
	power_cleanup
	if [ -n "$wol_pid" ]; then
		kill -TERM "$wol_pid" 2>/dev/null
		wait "$wol_pid" 2>/dev/null
	fi
	if [ -n "$sshd_pid" ]; then
		kill -TERM "$sshd_pid" 2>/dev/null
		wait "$sshd_pid" 2>/dev/null
	fi
	# what the hanging command left behind (not a child of ours: by its PID)
	if [ -f "$D/hang.pid" ]; then
		_p=$(cat "$D/hang.pid")
		tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null | grep -q '^sleep' && kill -KILL "$_p"
	fi
}

section "setup"
ssh-keygen -q -t ed25519 -N '' -C host -f "$D/host_key"
ssh-keygen -q -t ed25519 -N '' -C other-host -f "$D/other_host_key"
for k in ok exit hang; do
	ssh-keygen -q -t ed25519 -N '' -C "mxq-power-manager-$k" -f "$D/key_$k"
done
PORT=$(mxq_free_port tcp)

# the forced command: the README's script, with test paths and two
# misbehaviours selected by an argument (exit3, hang)
cat >"$D/mxq-power-ssh-command" <<EOF
#!/bin/sh
# the only thing the power manager's key may run (authorized_keys command=)
node=\$1
mode=\$2
echo "\$(date +%s.%N) \$node \$mode \$SSH_ORIGINAL_COMMAND" >>"$D/commands.log"
case \$mode in
exit3) exit 3 ;;
hang) echo \$\$ >"$D/hang.pid"; exec sleep 60 ;;
esac
case \$SSH_ORIGINAL_COMMAND in
drain)
	# stop taking jobs, let running ones finish, exit (mxqd's SIGTERM)
	kill -TERM "\$(cat "$MXQ_TEST_DIR/mxqd/\$node/mxqd.pid")" ;;
poweroff)
	# return first, then go down (here: only recorded)
	echo off >"$D/\$node.power" ;;
*)
	echo "mxq-power-ssh-command: refused: \$SSH_ORIGINAL_COMMAND" >&2
	exit 1 ;;
esac
EOF
chmod 755 "$D/mxq-power-ssh-command"
{
	echo "command=\"$D/mxq-power-ssh-command old1 normal\",restrict $(cat "$D/key_ok.pub")"
	echo "command=\"$D/mxq-power-ssh-command ex exit3\",restrict $(cat "$D/key_exit.pub")"
	echo "command=\"$D/mxq-power-ssh-command hang hang\",restrict $(cat "$D/key_hang.pub")"
} >"$D/authorized_keys"
chmod 600 "$D/authorized_keys"

cat >"$D/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $D/host_key
PidFile $D/sshd.pid
AuthorizedKeysFile $D/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin forced-commands-only
EOF
unshare -m --propagation private sh -c "mount -t tmpfs -o mode=755 tmpfs /run &&
	mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f $D/sshd_config" \
	</dev/null >"$D/sshd.log" 2>&1 &
sshd_pid=$!
if wait_until 10 mxq__port_in_use "$PORT"; then
	ok "sshd listens on 127.0.0.1:$PORT"
else
	not_ok "sshd listens on 127.0.0.1:$PORT"
	diag <"$D/sshd.log"
	tap_done
	exit 1
fi

# known_hosts files: the right key, none, a different key
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$D/host_key.pub")" >"$D/known_hosts"
: >"$D/known_hosts_empty"
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$D/other_host_key.pub")" \
	>"$D/known_hosts_changed"

# the restriction itself: the key runs the script, whatever is asked
out=$(ssh -n -p "$PORT" -i "$D/key_ok" -o BatchMode=yes -o IdentitiesOnly=yes \
	-o UserKnownHostsFile="$D/known_hosts" -o GlobalKnownHostsFile=/dev/null \
	-F /dev/null root@127.0.0.1 "id; rm -rf /" 2>&1)
rc=$?
check "the restricted key cannot run another command (exit $rc)" [ "$rc" -eq 1 ]
contains "the forced command refused it" "$out" "refused: id; rm -rf /"

cat >"$D/secrets" <<EOF
[default]
ssh_user = root
ssh_key = $D/key_ok
ssh_known_hosts = $D/known_hosts

[unk]
ssh_known_hosts = $D/known_hosts_empty

[chg]
ssh_known_hosts = $D/known_hosts_changed

[ex]
ssh_key = $D/key_exit

[hang]
ssh_key = $D/key_hang
EOF
chmod 600 "$D/secrets"

WOL_PORT=$(mxq_free_port udp)
# a Wake-on-LAN "network": every UDP datagram on 127.0.0.1:WOL_PORT as hex
python3 -u -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    print(s.recv(4096).hex(), flush=True)
' "$WOL_PORT" >"$D/wol.received" 2>"$D/wol.err" &
wol_pid=$!
add_node() { # HOST STATE
	mxq_sql "INSERT INTO mxq_power (hostname, state, transport_on, transport_off, mac_address,
		broadcast_address, ssh_address, reason) VALUES ('$1', '$2', 'wol', 'ssh',
		'52:54:00:00:00:0$3', '127.0.0.1', '127.0.0.1:$PORT', 'test node')"
}
add_node old1 ON 1
add_node unk ON 2
add_node chg ON 3
add_node ex ON 4
add_node hang ON 5

# old1 runs an mxqd that does not take part in the drain protocol
mxqd_start old1 --no-power-node --slots 1 --memory 1G ||
	{ not_ok "start the old mxqd of old1"; tap_done; exit 1; }

power_conf "$D/power.conf" idle_time=1h shutdown_deadline=60s
power_leader_start leader "$D/power.conf" --power-secrets "$D/secrets" \
	--power-ssh-timeout "$SSH_TIMEOUT" --power-wol-port "$WOL_PORT" --power-wol-count 3 \
	--power-reconcile-interval 0 ||
	{ not_ok "start the power manager"; tap_done; exit 1; }
wait_for 15 "(SELECT holder FROM mxq_power_leader WHERE id = 1) LIKE 'leader/%'"
ok "the power manager holds the lease"

admin_off() {
	mxq_sql "UPDATE mxq_power SET admin_request = 'OFF', admin_request_reason = 'test',
		admin_off = 1 WHERE hostname = '$1'"
}
fail_reason() {
	mxq_sql "SELECT failure_reason FROM mxq_power WHERE hostname = '$1'"
}

section "old node: drain over ssh, wait for EXITED, poweroff over ssh"
admin_off old1
check "old1: OFF" power_wait_state 40 old1 OFF
log=$(cat "$D/commands.log" 2>/dev/null)
contains "old1: the drain command ran through the restricted key" "$log" "old1 normal drain"
contains "old1: then the poweroff command" "$log" "old1 normal poweroff"
check "old1: drain before poweroff" sh -c "grep -E 'old1 normal (drain|poweroff)' '$D/commands.log' | head -1 | grep -q drain"
is "old1: its mxq_daemon row is EXITED" \
	"$(mxq_sql "SELECT status FROM mxq_daemon WHERE hostname = 'old1' ORDER BY daemon_id DESC LIMIT 1")" 250
is "old1: the node recorded the poweroff" "$(cat "$D/old1.power" 2>/dev/null)" off
mxqd_wait old1 10
is "old1: events ON>DRAINING>POWERING_OFF>OFF" "$(power_events old1 | cut -d' ' -f1 | tr '\n' ' ')" \
	"ON>DRAINING DRAINING>POWERING_OFF POWERING_OFF>OFF "

section "wake by Wake-on-LAN"
mxq_sql "UPDATE mxq_power SET admin_request = 'ON', admin_request_reason = 'test',
	admin_off = 0 WHERE hostname = 'old1'"
check "old1: woken (POWERING_ON)" power_wait_state 20 old1 POWERING_ON FAILED
want=ffffffffffff$(printf '525400000001%.0s' 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
wol_got() {
	[ "$(grep -c . "$D/wol.received")" -ge 3 ]
}
wait_until 5 wol_got
is "old1: three magic packets arrived" "$(grep -c . "$D/wol.received")" 3
is "old1: each is 6 x ff and its MAC 16 times" "$(sort -u "$D/wol.received")" "$want"

section "refusals and failures"
t0=$(now_cs)
for h in unk chg ex hang; do admin_off "$h"; done
for h in unk chg ex; do power_wait_state 30 "$h" FAILED; done
r=$(fail_reason unk)
is "unk: FAILED" "$(power_state unk)" FAILED
contains "unk: refused as an unknown host key" "$r" "UNKNOWN"
contains "unk: the message names the known_hosts file" "$r" "$D/known_hosts_empty"
r=$(fail_reason chg)
is "chg: FAILED" "$(power_state chg)" FAILED
contains "chg: refused as a changed host key" "$r" "CHANGED"
contains "chg: the message names the known_hosts file" "$r" "$D/known_hosts_changed"
r=$(fail_reason ex)
is "ex: FAILED" "$(power_state ex)" FAILED
contains "ex: the non-zero exit status is reported" "$r" "exited with status 3"
grep -q "ex exit3 drain" "$D/commands.log"
is "ex: the command did run" "$?" 0
power_wait_state 30 hang FAILED
t1=$(now_cs)
r=$(fail_reason hang)
is "hang: FAILED" "$(power_state hang)" FAILED
contains "hang: cut at the timeout" "$r" "did not finish within $SSH_TIMEOUT s"
# the hanging command is cut at the timeout: from its start on the node
# (its log line) to the FAILED event; the timeout also covers connect and
# login, so the command itself ran less than SSH_TIMEOUT
ts=$(grep -m1 "hang hang drain" "$D/commands.log" | cut -d' ' -f1)
tf=$(mxq_sql "SELECT UNIX_TIMESTAMP(event_time) FROM mxq_power_event WHERE hostname = 'hang'
	AND to_state = 'FAILED' ORDER BY event_id LIMIT 1")
cut=$(echo "$ts $tf" | awk '{ printf "%.2f", $2 - $1 }')
check "hang: cut ${cut}s after the command started (timeout ${SSH_TIMEOUT}s)" \
	awk "BEGIN { exit !($cut > 0 && $cut <= $SSH_TIMEOUT + 1) }"
el=$(echo "$t0 $t1" | awk '{ printf "%.2f", ($2 - $1) / 100 }')
check "hang: FAILED ${el}s after the request: bounded (ticks + ex + timeout < $((SSH_TIMEOUT + 20))s)" \
	awk "BEGIN { exit !($el <= $SSH_TIMEOUT + 20) }"
check "the leader still renews its lease after the hang" \
	wait_for 5 "(SELECT renewed_at > NOW(3) - INTERVAL 3 SECOND FROM mxq_power_leader WHERE id = 1)"

tap_done
