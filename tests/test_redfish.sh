#!/bin/sh
# tests/test_redfish.sh - the redfish transport of the power manager against
# Redfish BMC emulators (tests/redfish_emu.py, HTTPS on 127.0.0.1 with a
# throwaway CA made here), and the emulator against DMTF's redfishtool.
#
# Each simulated node has its own emulator; a power change there runs
# tests/lib/power-exec.sh HOST on|off, so the node's mxqd starts and stops
# with its power.
#
#   redfishtool  reads PowerState, resets On / ForceOff, over a session too
#   r1  session auth, CA configured, PoweringOn for 1 s -> on (one Reset,
#       PowerState read back until On), graceful off (no ForceOff)
#   r2  basic auth, GracefulShutdown ignored -> ForceOff after the deadline
#   r3  wrong password                     -> FAILED, reason, bounded; the
#       password its BMC quotes back is not in the reason or the log
#   r6  certificate of an unknown CA       -> FAILED (TLS); insecure: works, logged
#   r7  answers slower than the timeout    -> FAILED after timeout x attempts
#   r8  BMC answers 500 with ExtendedInfo  -> FAILED, the Redfish message in it
#   r9  BMC accepts On but stays Off       -> FAILED after --power-ipmi-verify
#   r10 answers just inside the timeout, its read-back after the Reset
#       times out: the retry would send a second Reset after the call's
#       bound (which the leader fences by); it is never sent
#   r4  emulator down, best rank, job waits -> FAILED, job re-planned on r5
#       (whose BMC hands out 600-byte session tokens)
# plus: the password never shows in any /proc/*/cmdline, log or table;
# sessions are deleted; bad `mxqadmin power set` values are refused.
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
POWER_LEASE=8
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/power.sh"
. "$MXQ_SRC_DIR/tests/lib/redfish.sh"

command -v openssl >/dev/null || { echo "not ok 1 - openssl installed"; exit 1; }

D=$MXQ_TEST_DIR/redfish
mkdir -p "$D"
PW=$(mxq__random_hex 8)          # throwaway BMC password of this run
TOOLPW=$(mxq__random_hex 8)      # redfishtool's account (its -p is in its argv)
R3PW=$(mxq__random_hex 8)        # r3's wrong one, which its BMC quotes back
SOFT_DEADLINE=3
RF_TIMEOUT=2
RF_RETRIES=1
NODES="r1 r2 r3 r4 r5 r6 r7 r8 r9 r10"

mxq_test_cleanup_hook() {
	local _n
	secret__stop
	mxqd_cleanup
	for _n in $NODES; do
		redfish_emu_stop "$D/$_n"
	done
	power_cleanup
}

port_of() {
	cat "$D/$1/port.want"
}

# emu_start NAME [EMULATOR OPTIONS]: NAME's BMC (power Off at first start)
emu_start() {
	local _n
	_n=$1
	shift
	mkdir -p "$D/$_n"
	[ -f "$D/$_n/port.want" ] || mxq_free_port tcp >"$D/$_n/port.want"
	( umask 077; printf 'admin:%s\ntool:%s\n' "$PW" "$TOOLPW" >"$D/$_n/accounts" )
	redfish_emu_start "$D/$_n" "$_n" "$(port_of "$_n")" "$D/certs" \
		--hook "$power_exec_bin $_n" "$@"
}

bmc_power() {
	cat "$D/$1/power" 2>/dev/null
}

bmc_is() {
	[ "$(bmc_power "$1")" = "$2" ]
}

# node NAME: its directory for power-exec.sh and its mxq_power row (OFF)
node() {
	local _d
	_d=$(power_node_dir "$1")
	mkdir -p "$_d/spool" "$_d/tmp"
	printf '%s\n' --slots 1 --memory 1G >"$_d/opts"
	power__nodes="$power__nodes $1"
	mxq_sql "INSERT INTO mxq_power (hostname, state, reason) VALUES ('$1', 'OFF', 'test node')"
}

set_host() {
	"$mxqadmin_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" power set "$@"
}

register_once() {
	power_exec "$1" on &&
		wait_for 15 "SELECT COUNT(*) > 0 FROM mxq_daemon WHERE hostname = '$1'" &&
		power_exec "$1" off &&
		mxq_sql "UPDATE mxq_power SET state = 'OFF', state_since = NOW() WHERE hostname = '$1'"
}

both_stopped() {
	! power_node_running r1 && ! power_node_running r2
}

resets_of() {
	cut -d' ' -f2 "$D/$1/resets.log" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}

# ------------------------------------------------------------------ setup
section "setup"
check "throwaway CA and BMC certificate" redfish_certs "$D/certs"
for n in r1 r3 r5 r6 r8 r9 r10; do
	check "emulator of $n starts" emu_start "$n"
done
check "emulator of r2 starts (old Power schema, no PushPowerButton)" emu_start r2 \
	--power-schema power --reset-types On,ForceOff,GracefulShutdown
check "emulator of r7 starts" emu_start r7
mxq_free_port tcp >"$D/r4.port"            # r4: nobody listens there
echo 4 >"$D/r7/slow"
echo 500 >"$D/r8/fail"
echo 1 >"$D/r1/on_delay"
: >"$D/r3/echo_values"
echo 600 >"$D/r5/token_len"     # the spec sets no length: r5's are long
: >"$D/r9/ignore_on"
# r10: each answer 0.25 s inside the timeout (slack for a loaded machine),
# the first after a Reset beyond; the retry reaches its Reset ~1 s before
# the call's bound, which is less than a request's timeout
: >"$D/r10/ignore_on"
echo $((RF_TIMEOUT * 100 - 25)) | awk '{ print $1 / 100 }' >"$D/r10/slow"
echo $((RF_TIMEOUT + 1)) >"$D/r10/stall_after_reset"
: >"$D/r2/ignore_soft"

# ------------------------------------------------ the emulator is Redfish
section "redfishtool against the emulator"
rft() {
	redfishtool -r "127.0.0.1:$(port_of r5)" -u tool -p "$TOOLPW" -S Always -T 10 "$@"
}
if command -v redfishtool >/dev/null; then
	out=$(rft Systems -F get -P PowerState 2>&1)
	contains "redfishtool reads PowerState Off" "$out" '"PowerState": "Off"'
	out=$(rft Systems -F reset On 2>&1)
	is "redfishtool Systems reset On: exit 0 ($out)" "$?" 0
	is "the emulator is On" "$(bmc_power r5)" On
	out=$(rft -A Session Systems -F get -P PowerState 2>&1)
	contains "redfishtool over a session reads PowerState On" "$out" '"PowerState": "On"'
	out=$(rft Systems -F reset ForceOff 2>&1)
	is "redfishtool Systems reset ForceOff: exit 0" "$?" 0
	is "the emulator is Off" "$(bmc_power r5)" Off
	out=$(rft Systems -F reset Nmi 2>&1)
	is "the emulator also offers Nmi in AllowableValues" "$?" 0
	out=$(redfishtool -r "127.0.0.1:$(port_of r2)" -u tool -p "$TOOLPW" -S Always \
		Systems -F reset PushPowerButton 2>&1)
	contains "redfishtool refuses what AllowableValues lacks" "$out" "not supported by the remote service"
	check "redfishtool's session was deleted" [ "$(cat "$D/r5/sessions")" = 0 ]
	out=$(redfishtool -r "127.0.0.1:$(port_of r5)" -u tool -p wrong -S Always Systems -F get 2>&1)
	check "redfishtool with a wrong password fails" [ "$?" -ne 0 ]
else
	not_ok "redfishtool installed (Debian package redfishtool)"
fi
echo Off >"$D/r5/power"

# ------------------------------------------------ per-host settings
section "mxqadmin power set"
cat >"$D/secrets" <<EOF
# power secrets of test_redfish.sh (throwaway)
[default]
redfish_user = admin
redfish_password = $PW

[r3]
redfish_password = $R3PW
EOF
chmod 600 "$D/secrets"
for n in $NODES; do
	node "$n"
done
for n in r1 r2 r3 r5 r6 r7 r8 r9 r10; do
	out=$(set_host "$n" transport_on=redfish transport_off=redfish \
		"bmc=127.0.0.1:$(port_of "$n")" "redfish_ca=$D/certs/ca.pem" 2>&1)
	is "mxqadmin power set $n transport_on=redfish ...: exit 0" "$?" 0
done
set_host r4 transport_on=redfish transport_off=redfish "bmc=127.0.0.1:$(cat "$D/r4.port")" \
	"redfish_ca=$D/certs/ca.pem" >/dev/null
set_host r2 redfish_auth=basic >/dev/null
set_host r1 redfish_system=/redfish/v1/Systems/1 >/dev/null
set_host r6 redfish_ca= >/dev/null          # r6: the system's CAs, which do not know ours
is "settings written" "$(mxq_sql "SELECT CONCAT_WS(' ', transport_on, transport_off,
	redfish_system, redfish_tls, redfish_auth) FROM mxq_power WHERE hostname = 'r1'")" \
	"redfish redfish /redfish/v1/Systems/1 verify session"
is "r2: basic authentication" "$(mxq_sql "SELECT redfish_auth FROM mxq_power WHERE hostname = 'r2'")" basic
for bad in redfish_tls=off redfish_auth=digest redfish_ca=relative.pem \
	redfish_system=/redfish/v1/Chassis/1 transport_on=redfishx; do
	out=$(set_host r1 rank=7 "$bad" 2>&1)
	rc=$?
	check "power set $bad: refused (exit $rc)" [ "$rc" -ne 0 ]
	contains "power set $bad: the message names the key" "$out" "${bad%%=*}"
done
is "nothing written on bad input" \
	"$(mxq_sql "SELECT CONCAT(efficiency_rank, ' ', redfish_tls) FROM mxq_power WHERE hostname = 'r1'")" \
	"100 verify"
# the leader plans with what a node's mxqd registered last: r4 and r5
# run once (switched by hand), then are OFF
for n in r4 r5; do
	check "$n registers once" register_once "$n"
done
mxq_sql "UPDATE mxq_power SET efficiency_rank = 10 WHERE hostname = 'r4';
	UPDATE mxq_power SET efficiency_rank = 50 WHERE hostname = 'r5'"

# the password must never appear in a process's arguments: sample them
secret_watch_start "$PW"

power_conf "$D/power.conf" idle_time=1h
power_leader_start leader "$D/power.conf" --power-secrets "$D/secrets" \
	--power-soft-off-deadline "$SOFT_DEADLINE" --power-redfish-timeout "$RF_TIMEOUT" \
	--power-redfish-retries "$RF_RETRIES" --power-ipmi-verify 5 --power-reconcile-interval 3 ||
	{ not_ok "start the power manager"; tap_done; exit 1; }
wait_for 15 "(SELECT holder FROM mxq_power_leader WHERE id = 1) LIKE 'leader/%'"
ok "the power manager holds the lease"

# ------------------------------------------------------------ power on
section "power on"
power_request r1 ON
power_request r2 ON
check "r1: ON (its mxqd registered)" power_wait_state 30 r1 ON
check "r2: ON" power_wait_state 30 r2 ON
is "r1: BMC On" "$(bmc_power r1)" On
is "r1: ResetType On sent once (PoweringOn, then On)" "$(resets_of r1)" On
check "r1: its mxqd runs" power_node_running r1
contains "r1: logged in with a session" "$(cat "$D/r1/requests.log")" \
	"POST /redfish/v1/SessionService/Sessions 201"
is "r1: the system given per host, no walk of the collection" \
	"$(grep -c 'GET /redfish/v1/Systems ' "$D/r1/requests.log")" 0
contains "r2: found its system by walking /redfish/v1/Systems" "$(cat "$D/r2/requests.log")" \
	"GET /redfish/v1/Systems 200 basic"
not_contains "r2: basic auth, no session" "$(cat "$D/r2/requests.log")" "Sessions 201"
check "r1: every session deleted" [ "$(cat "$D/r1/sessions")" = 0 ]

# ----------------------------------------------------------- soft off
section "graceful shutdown, ForceOff after the deadline"
power_request r1 OFF
power_request r2 OFF
check "r1: OFF after GracefulShutdown" power_wait_state 30 r1 OFF
is "r1: GracefulShutdown, no ForceOff" "$(resets_of r1)" "On GracefulShutdown"
check "r2: OFF (GracefulShutdown ignored)" power_wait_state 40 r2 OFF
is "r2: BMC Off" "$(bmc_power r2)" Off
is "r2: GracefulShutdown then ForceOff" "$(resets_of r2)" "On GracefulShutdown ForceOff"
ts=$(grep -m1 GracefulShutdown "$D/r2/resets.log" | cut -d' ' -f1)
th=$(grep -m1 ForceOff "$D/r2/resets.log" | cut -d' ' -f1)
gap=$(echo "$ts $th" | awk '{ printf "%.2f", $2 - $1 }')
check "r2: ForceOff ${gap}s after GracefulShutdown (deadline ${SOFT_DEADLINE}s)" \
	awk "BEGIN { exit !($gap >= $SOFT_DEADLINE && $gap < $SOFT_DEADLINE + 10) }"
check "r1, r2: their mxqd stopped with the power" wait_until 15 both_stopped

# ------------------------------------------------------------ failures
section "wrong password, unknown CA, slow BMC, BMC errors"
# a wrong password is not retried; a slow BMC costs timeout x attempts
bound=$(awk "BEGIN { print $RF_TIMEOUT * ($RF_RETRIES + 1) + 3 }")
t0=$(now_cs)
for n in r3 r6 r7 r8 r9 r10; do
	power_request "$n" ON
done
for n in r3 r6 r7 r8 r9 r10; do
	power_wait_state 40 "$n" FAILED
done
dt=$(awk -v a="$t0" -v b="$(now_cs)" 'BEGIN { printf "%.1f", (b - a) / 100 }')
check "r3, r6, r7, r8, r9, r10: all FAILED ${dt}s after the requests (no hang)" awk "BEGIN { exit !($dt <= 30) }"
is "r3: FAILED" "$(power_state r3)" FAILED
contains "r3: reason says the login was rejected" "$(power_failure r3)" "HTTP 401"
contains "r3: reason has the Redfish message" "$(power_failure r3)" "invalid user name or password"
contains "r3: reason names the BMC and the path" "$(power_failure r3)" \
	"BMC 127.0.0.1:$(port_of r3): POST /redfish/v1/SessionService/Sessions"
d3=$(power_call_secs wake r3)
check "r3: the wrong password failed in ${d3:-?}s, within one request's timeout" \
	awk "BEGIN { exit !(\"$d3\" != \"\" && $d3 + 0 < $RF_TIMEOUT) }"
not_contains "r3: a rejected login is not retried" "$(power_failure r3)" "attempts)"
# its BMC quotes the password it was sent: the reason (shown by mxq-web
# and mxqadmin to everyone) and the log must not
contains "r3: the BMC quoted the password, the reason says so" "$(power_failure r3)" \
	"The value '(password)' for the property Password"
not_contains "r3: the reason does not carry the password" "$(power_failure r3)" "$R3PW"
not_contains "r3: nor does the leader's log" "$(cat "$(power_leader_log leader)")" "$R3PW"
is "r3: nor any power event" "$(mxq_sql "SELECT COUNT(*) FROM mxq_power_event
	WHERE reason LIKE '%$R3PW%'")" 0
is "r3: BMC still Off" "$(bmc_power r3)" Off
is "r6: FAILED" "$(power_state r6)" FAILED
contains "r6: reason says the certificate is not trusted" "$(power_failure r6)" "TLS certificate not trusted"
contains "r6: and how to configure it" "$(power_failure r6)" "redfish_ca=FILE"
is "r6: no request reached the BMC" "$(grep -c . "$D/r6/requests.log" 2>/dev/null || echo 0)" 0
is "r7: FAILED" "$(power_state r7)" FAILED
contains "r7: reason says the BMC did not answer in time" "$(power_failure r7)" \
	"did not answer POST /redfish/v1/SessionService/Sessions within $((RF_TIMEOUT * 1000)) ms ($((RF_RETRIES + 1)) attempts)"
d7=$(power_call_secs wake r7)
check "r7: failed in ${d7:-?}s (bound ${bound}s: ${RF_TIMEOUT}s x $((RF_RETRIES + 1)) attempts)" \
	awk "BEGIN { exit !(\"$d7\" != \"\" && $d7 >= $RF_TIMEOUT * ($RF_RETRIES + 1) - 0.5 && $d7 <= $bound) }"
is "r8: FAILED" "$(power_state r8)" FAILED
contains "r8: reason has the HTTP status and the ExtendedInfo message" "$(power_failure r8)" \
	"HTTP 500: simulated fault of the test BMC"
is "r9: FAILED" "$(power_state r9)" FAILED
contains "r9: reason says the reset did not show" "$(power_failure r9)" \
	"accepted ResetType On but /redfish/v1/Systems/1 still reports PowerState Off after 5000 ms"
# the leader fences an earlier leader's call by its bound: no Reset later
rf_bound=$((RF_TIMEOUT * 4 * (RF_RETRIES + 1) + 5))
first=$(awk 'NR == 1 { print $1 }' "$D/r10/requests.log" 2>/dev/null)
late=$(awk -v f="${first:-0}" -v b="$rf_bound" '$1 > f + b' "$D/r10/resets.log" 2>/dev/null)
is "r10: FAILED" "$(power_state r10)" FAILED
check "r10: its first Reset was sent" test -s "$D/r10/resets.log"
is "r10: no Reset later than the call's bound (${rf_bound}s) after its first request" "$late" ""
contains "r10: the retry stopped at the bound, not at a timeout" "$(power_failure r10)" \
	"not sent: the call's time bound is used up"
echo "# r10: requests at $(cut -d' ' -f1,2 "$D/r10/requests.log" 2>/dev/null | tr '\n' ';'); resets at $(tr '\n' ';' <"$D/r10/resets.log" 2>/dev/null); reason: $(power_failure r10)"

# TLS verification can be turned off per host, and that is logged
set_host r6 redfish_tls=insecure >/dev/null
power_admin clear r6 "test: insecure now" >/dev/null 2>&1
check "r6 cleared: its power state read without TLS verification (OFF)" power_wait_state 20 r6 OFF
power_request r6 ON
check "r6 with redfish_tls=insecure: ON" power_wait_state 30 r6 ON
contains "r6: the leader logged the missing TLS verification" \
	"$(cat "$(power_leader_log leader)")" "r6: wake through BMC 127.0.0.1:$(port_of r6) without TLS verification"

# ---------------------------------------------------- emulator down
section "BMC down: FAILED, the demand re-planned"
mark=$(power_last_event_id)
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(submit -m 64M -N replan --whitelist "r4 r5" sh -c 'echo "$MXQ_HOSTNAME" >"'"$D"'/ran.$MXQ_JOBID"')
check "job $j submitted" test -n "$j"
check "r4 (best rank, BMC down): FAILED" power_wait_state 30 r4 FAILED
contains "r4: reason says nobody listens" "$(power_failure r4)" "cannot connect"
contains "r4: reason names the BMC" "$(power_failure r4)" "BMC 127.0.0.1:$(cat "$D/r4.port")"
check "the job finished (re-planned onto r5)" job_wait 60 "$j" 1000
is "it ran on r5" "$(cat "$D/ran.$j" 2>/dev/null)" r5
# a booting node (no mxqd yet) is capacity: r5 is woken only once r4 failed
is "r5 was woken after r4 FAILED, not beside the booting r4" "$(mxq_sql "SELECT
	(SELECT MIN(event_id) FROM mxq_power_event WHERE hostname = 'r5' AND to_state = 'POWERING_ON') >
	(SELECT MAX(event_id) FROM mxq_power_event WHERE hostname = 'r4' AND to_state = 'FAILED')")" 1
is "r5: woken through its BMC" "$(resets_of r5 | sed 's/.* //')" On
contains "r5: over a session with its 600-byte token" "$(cat "$D/r5/requests.log")" \
	"POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset 204 token"

# ------------------------------------------------------------ secrecy
section "the password stays secret"
secret_checks "$PW" "$MXQ_TEST_DIR/mxqd" "$MXQ_POWER_TEST_DIR"
# a call of the leader may be under way: stop it, then its workers end
mxqd_stop leader
no_open_sessions() {
	local _n
	# (r8 answers every authenticated request with 500: the DELETE too)
	for _n in r1 r2 r3 r5 r6; do
		[ "$(cat "$D/$_n/sessions" 2>/dev/null || echo 0)" = 0 ] || return 1
	done
}
if wait_until 20 no_open_sessions; then
	ok "no session left open on any BMC once the leader stopped"
else
	not_ok "no session left open on any BMC once the leader stopped"
	for _n in r1 r2 r3 r5 r6; do
		echo "$_n: $(cat "$D/$_n/sessions" 2>/dev/null) open; last requests:" \
			"$(tail -4 "$D/$_n/requests.log" 2>/dev/null | tr '\n' ';')"
	done | diag
	tail -25 "$MXQ_TEST_DIR"/mxqd/leader/mxqd.log 2>/dev/null | diag
fi

tap_done
