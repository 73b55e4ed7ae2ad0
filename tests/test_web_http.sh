#!/bin/sh
# tests/test_web_http.sh - mxq-web against clients that misbehave: slow
# ones that would hold every connection, and requests for host names that
# are not the server's (DNS rebinding). A private MariaDB with the schema;
# no cluster, no browser. The slow clients are tests/lib/slow_http.py, from
# several addresses of 127.0.0.0/8 so the per-address limit does not stop
# them alone.
#
#   1. defaults (--max-connections 64, 16 per address, --request-timeout
#      10): 64 connections from 127.0.0.2-5 that send a header line every
#      second take every slot; a normal request from 127.0.0.1 is answered
#      within 3 s all the same (the connection that waited longest for its
#      request is closed to make room), and the others are closed at their
#      deadline: none before 9.5 s, all by 12.5 s; then the server answers
#   2. --max-per-address 2 --request-timeout 2: a third connection from
#      one address is closed at once, the two others at 2 s while they
#      trickle header lines; one that sends nothing after its request line
#      is closed at 2 s too (not after --timeout)
#   3. Host: IP addresses, localhost and the machine's names are served;
#      another name is 421 with one line (JSON under /api/), logged once;
#      malformed or twice is 400; HTTP/1.0 without Host is served;
#      --allow-host NAME serves NAME (any case, with a port), '*' any name
#   4. usage errors: --allow-host with junk or an address, --max-per-address
#      above --max-connections, --request-timeout 0
#
# Prints TAP lines; exits non-zero when a check failed.
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

web_bin=$MXQ_BUILD_DIR/mxq-web
slow=$MXQ_SRC_DIR/tests/lib/slow_http.py
T=$MXQ_TEST_DIR/web
mkdir -p "$T"
web_pids=
slow_pid=
silent_pid=

mxq_test_cleanup_hook() {
	for _p in $slow_pid $silent_pid $web_pids; do
		kill -TERM "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
}

# web_start NAME ARGS...: mxq-web on a free port ($port), log $T/NAME.out;
# a port taken between the check and the bind is retried on another one
web_start() {
	local _name _try _pid
	_name=$1
	shift
	for _try in 1 2 3; do
		port=$(mxq_free_port tcp)
		"$web_bin" --listen "127.0.0.1:$port" --threads 2 "$@" >"$T/$_name.out" 2>&1 &
		_pid=$!
		web_pids="$web_pids $_pid"
		wait_until 20 curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/api/nodes" && return 0
		if mxq__alive "$_pid" || ! grep -q 'Address already in use' "$T/$_name.out"; then
			break
		fi
		wait "$_pid" 2>/dev/null
	done
	diag <"$T/$_name.out"
	return 1
}
# code PORT PATH [CURL ARGS...]: the status of a request
code() {
	local _url
	_url=http://127.0.0.1:$1$2
	shift 2
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$@" "$_url"
}
# raw PORT REQUEST: the status line's code of a request sent as written
raw() {
	printf "$2" | python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.stdin.buffer.read())
print(s.recv(100).split(b" ")[1].decode())' "$1"
}
# closed_between FILE LO HI: how many "closed I AFTER" lines have LO <= AFTER < HI
closed_between() {
	awk -v lo="$2" -v hi="$3" '$1 == "closed" && $3 >= lo && $3 < hi { n++ } END { print n + 0 }' "$1"
}

# ------------------------------------------------------------------ 1.

section "1. slow clients with the defaults"
web_start defaults || not_ok "mxq-web starts with the defaults"
P1=$port
python3 "$slow" 127.0.0.1 "$P1" --from 127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5 \
	--count 64 --interval 1 --limit 30 >"$T/slow64.out" 2>&1 &
slow_pid=$!
check "64 slow connections are open" wait_until 10 grep -q '^open 64$' "$T/slow64.out"
got=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 15 \
	"http://127.0.0.1:$P1/api/nodes")
check "a normal request is still answered, within 3 s ($got)" \
	awk -v g="$got" 'BEGIN { split(g, a, " "); exit !(a[1] == 200 && a[2] < 3) }'
check "the slow connections end (slow_http.py finishes)" wait_until 25 grep -q '^done' "$T/slow64.out"
wait "$slow_pid"
slow_pid=
is "all 64 were closed by the server" "$(sed -n 's/^done //p' "$T/slow64.out")" "64 0"
is "one of them early, for the newcomer's slot" "$(closed_between "$T/slow64.out" 0 9.5)" 1
is "the other 63 at their deadline (10 s, all by 12.5 s)" \
	"$(closed_between "$T/slow64.out" 9.5 12.5)" 63
is "the server answers afterwards" "$(code "$P1" /api/nodes)" 200

# ------------------------------------------------------------------ 2.

section "2. --max-per-address 2 --request-timeout 2"
web_start limits --max-per-address 2 --request-timeout 2 --allow-host status.example.org ||
	not_ok "mxq-web starts with --max-per-address 2 --request-timeout 2"
P2=$port
python3 "$slow" 127.0.0.1 "$P2" --from 127.0.0.6 --count 3 --interval 0.5 --limit 10 \
	>"$T/slow3.out" 2>&1 &
slow_pid=$!
# one that sends nothing after its first line: a connection, no request
python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), source_address=("127.0.0.7", 0))
s.sendall(b"GET / HTTP/1.1\r\n")
t = time.monotonic()
s.settimeout(10)
try:
    s.recv(100)
except OSError:
    pass
print("%.2f" % (time.monotonic() - t))' "$P2" >"$T/silent.out" 2>&1 &
silent_pid=$!
check "the slow client finishes" wait_until 15 grep -q '^done' "$T/slow3.out"
wait "$slow_pid"
slow_pid=
wait "$silent_pid"
silent_pid=
is "a third connection from one address is closed at once" "$(closed_between "$T/slow3.out" 0 0.5)" 1
is "the two others at their deadline of 2 s" "$(closed_between "$T/slow3.out" 1.9 3.5)" 2
check "a silent connection too ($(cat "$T/silent.out") s)" \
	awk -v t="$(cat "$T/silent.out")" 'BEGIN { exit !(t >= 1.9 && t < 3.5) }'

# ------------------------------------------------------------------ 3.

section "3. Host"
is "Host 127.0.0.1:PORT" "$(code "$P1" /api/nodes)" 200
is "Host localhost:PORT" "$(code "$P1" /api/nodes -H "Host: localhost:$P1")" 200
is "Host LOCALHOST. (case, final dot)" "$(code "$P1" /api/nodes -H "Host: LOCALHOST.")" 200
is "Host [::1]:PORT" "$(code "$P1" /api/nodes -H "Host: [::1]:$P1")" 200
is "Host another address (10.1.2.3)" "$(code "$P1" /api/nodes -H "Host: 10.1.2.3")" 200
me=$(hostname)
is "Host $me (this machine)" "$(code "$P1" /api/nodes -H "Host: $me:$P1")" 200
fqdn=$(hostname -f 2>/dev/null)
if [ -n "$fqdn" ] && [ "$fqdn" != "$me" ]; then
	is "Host $fqdn (its FQDN)" "$(code "$P1" /api/nodes -H "Host: $fqdn")" 200
else
	skip "this machine has no FQDN apart from its name"
fi
is "HTTP/1.0 without Host is served" "$(code "$P1" /api/nodes --http1.0 -H "Host:")" 200
is "Host evil.example is refused with 421" "$(code "$P1" /api/nodes -H "Host: evil.example:$P1")" 421
is "so is a name that merely contains a served one" \
	"$(code "$P1" / -H "Host: localhost.evil.example")" 421
api=$(curl -s --max-time 20 -H "Host: evil.example" "http://127.0.0.1:$P1/api/nodes")
is "under /api/ the refusal is the JSON error document" "$(printf '%s' "$api" | jq -r .status)" 421
contains "which names the host" "$(printf '%s' "$api" | jq -r .error)" "host 'evil.example' is not a name of this server"
page=$(curl -s --max-time 20 -H "Host: evil.example" "http://127.0.0.1:$P1/")
is "a page's refusal is one line" "$(printf '%s\n' "$page" | wc -l)" 1
is "a malformed Host is 400" "$(code "$P1" /api/nodes -H "Host: a b")" 400
is "two Host headers are 400" \
	"$(raw "$P1" 'GET /api/nodes HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n')" 400
is "the refusal was logged once (at most once a minute)" \
	"$(grep -c "refused a request for host 'evil.example'" "$T/defaults.out")" 1
is "--allow-host status.example.org serves it" \
	"$(code "$P2" /api/nodes -H "Host: STATUS.example.org:443")" 200
is "but not another name" "$(code "$P2" /api/nodes -H "Host: other.example.org")" 421
is "nor an IPv6 address in brackets with junk" "$(code "$P2" /api/nodes -H "Host: [::1]x")" 400
web_start any --allow-host '*' || not_ok "mxq-web starts with --allow-host '*'"
is "--allow-host '*' serves any name" "$(code "$port" /api/nodes -H "Host: anything.example")" 200
contains "the names served are logged at start" "$(cat "$T/limits.out")" "status.example.org, localhost"

# ------------------------------------------------------------------ 4.

section "4. usage errors"
usage() { # ARGS...: exit status and the number of lines on stderr
	local _rc _lines
	"$web_bin" --listen 127.0.0.1:1 "$@" >/dev/null 2>"$T/usage.err"
	_rc=$?
	_lines=$(wc -l <"$T/usage.err")
	echo "$_rc $_lines"
}
is "--allow-host 'bad name'" "$(usage --allow-host 'bad name')" "2 1"
is "--allow-host with a port" "$(usage --allow-host example.org:80)" "2 1"
is "--allow-host an address" "$(usage --allow-host 10.0.0.1)" "2 1"
is "--max-per-address above --max-connections" "$(usage --max-connections 8 --max-per-address 9)" "2 1"
is "--request-timeout 0" "$(usage --request-timeout 0)" "2 1"

for _p in $web_pids; do
	kill -TERM "$_p"
	wait "$_p"
done
web_pids=
contains "mxq-web says at exit how many it closed" "$(cat "$T/defaults.out")" \
	"closed 63 connections whose request was late, 1 to make room"
tap_done
