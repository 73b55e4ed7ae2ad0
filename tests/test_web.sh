#!/bin/sh
# tests/test_web.sh - mxq-web, the status page, against a simulated
# power-managed cluster (tests/lib/cluster.sh), seen by headless Chromium.
#
# Two nodes with the model energy source and a power manager; a job that
# runs (energy recorded), a group named with a <script> tag, a job no node
# can run (why it waits); mxq-web on 127.0.0.1 with a read-only account
# (GRANT SELECT only, as mxq-web(8) documents). Then:
#
#   1. the overview, rendered by Chromium with JavaScript DISABLED, lists
#      every node with the power state the database has, and holds the
#      charts (cluster power, nodes on/off) and the savings table
#   2. a screenshot of the overview (JavaScript on) is kept in
#      tests/artifacts/ and its path printed
#   3. the job page shows the job's energy (the figure of mxq_power_job);
#      with JavaScript it refreshes itself in place (virtual time)
#   4. the group page shows the hostile name as text: no script element
#      from it, the raw HTML has it escaped; a waiting job's page says why
#   5. /api/nodes, /api/jobs/ID, /api/energy are valid JSON with the data;
#      a group's summary reads its newest 10000 jobs and says when cut;
#      /metrics passes `promtool check metrics` (or a format check of ours
#      when promtool is missing)
#   6. HTTP: POST 405, junk paths 400, unknown 404, bad parameters 400,
#      an overlong request target rejected (under /api/ as JSON errors);
#      the server still answers
#   7. --private: no user names, group names or commands; energy stays
#
# Chromium starts are slow: four launches in all.
. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
CLUSTER_BOOT_DELAY=1
CLUSTER_TICK=0.5
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"
. "$MXQ_SRC_DIR/tests/lib/cluster.sh"

web_bin=$MXQ_BUILD_DIR/mxq-web
W=$MXQ_TEST_DIR/web
mkdir -p "$W"
ARTIFACTS=$MXQ_BUILD_DIR/tests/artifacts
web_pid=
private_pid=
web_user=mxqweb19

mxq_test_cleanup_hook() {
	for _p in $web_pid $private_pid; do
		kill -TERM "$_p" 2>/dev/null
		wait "$_p" 2>/dev/null
	done
	cluster_cleanup
}

# ------------------------------------------------------------------ browser

browser=$(command -v chromium || command -v chromium-browser)

chrome_flags() { # the flags of every launch: headless, no network, own profile
	echo --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--disable-dev-shm-usage --user-data-dir="$(mktemp -d "$MXQ_TEST_DIR/chrome.XXXXXX")"
}
# chromium ARGS... URL
chrome() {
	timeout 60 "$browser" $(chrome_flags) "$@" 2>>"$W/chrome.err"
}
# URL DOM_OUT PNG_OUT: DOM and screenshot with JavaScript disabled
# (Chromium's --dump-dom needs scripts; tests/lib/cdp_dump.py does not)
chrome_nojs() {
	timeout 60 python3 "$MXQ_SRC_DIR/tests/lib/cdp_dump.py" "$@" -- "$browser" $(chrome_flags) \
		--blink-settings=scriptEnabled=false 2>>"$W/chrome.err"
}

get() { # PATH: the body
	curl -s --max-time 20 "http://$WEB/$1"
}
http_code() { # CURL ARGS... (last: URL path)
	local _a _last
	_last=
	for _a in "$@"; do _last=$_a; done
	curl -s -o /dev/null -w '%{http_code}' --max-time 20 \
		$(printf '%s\n' "$@" | sed '$d') "http://$WEB$_last"
}

# ------------------------------------------------------------------ cluster

section "cluster"
cluster_init || not_ok "cluster_init"
# --energy-timeline: jobs' power over time (mxq_power_job_sample) too
cluster_node_add n1 exec 1 generic 40:10 --slots 2 --energy-timeline || not_ok "node n1"
cluster_node_add n2 exec 2 generic 60:15 --slots 2 --energy-timeline || not_ok "node n2"
check "both nodes boot" cluster_boot_all 40
CONF=$MXQ_TEST_DIR/power.conf
cluster_conf "$CONF" idle_time=6s
check "a power manager starts" cluster_leader_start svc1 "$CONF"

# a job that runs a few seconds (energy recorded), in a hostile group name
HOSTILE='<script>document.title="pwned"</script>&x'
J1=$(submit -w "$W" -t 1m -m 64M -N "$HOSTILE" sh -c 'sleep 4')
check "a job is submitted" test -n "$J1"
wait_for 60 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = ${J1:-0}" &&
	ok "the job finished" || not_ok "the job finished"
wait_for 30 "SELECT energy_j > 0 AND date_end IS NOT NULL FROM mxq_power_job
	WHERE job_id = ${J1:-0}" && ok "its energy is recorded" || not_ok "its energy is recorded"
# a job no node can run: it waits, and the page should say why
J2=$(submit -w "$W" -t 1m -m 64M -N waiter --prerequisites 'no_such_tag_19' sh -c true)
check "a job no node qualifies for is queued" test -n "$J2"
# let the idle nodes be powered off (events for the charts; states that
# stay while the pages are looked at)
cluster_wait_state 60 n1 OFF && cluster_wait_state 30 n2 OFF &&
	ok "the idle nodes are powered off" || not_ok "the idle nodes are powered off"

# an hour of older node samples (before the cluster started), so the power
# chart has a shape to draw: n1 40..70 W, n2 60 W, one a minute
mxq_sql "INSERT IGNORE INTO mxq_power_sample (hostname, sample_time, energy_j, watts)
	SELECT 'n1', NOW(3) - INTERVAL 2 MINUTE - INTERVAL seq MINUTE, 55 - seq,
		40 + 30 * (seq % 7 = 0) FROM seq_1_to_55
	UNION ALL SELECT 'n2', NOW(3) - INTERVAL 2 MINUTE - INTERVAL seq MINUTE,
		55 - seq, 60 FROM seq_1_to_55" || not_ok "older samples"

# ------------------------------------------------------------------ mxq-web

section "mxq-web with a read-only account"
web_pw=$(mxq__random_hex 12)
mxq_sql "DROP USER IF EXISTS '$web_user'@'localhost'" >/dev/null 2>&1
mxq_sql "CREATE USER '$web_user'@'localhost' IDENTIFIED BY '$web_pw';
	GRANT SELECT ON \`$MXQ_TEST_DB_NAME\`.* TO '$web_user'@'localhost'" ||
	not_ok "create the read-only account"
( umask 077
  printf '[mxqweb]\ndatabase=%s\nuser=%s\npassword=%s\nsocket=%s\n' "$MXQ_TEST_DB_NAME" \
	"$web_user" "$web_pw" "$MXQ_TEST_DB_SOCKET" >"$W/web.cnf" )
PORT=$(mxq_free_port tcp)
WEB=127.0.0.1:$PORT
"$web_bin" --listen "$WEB" -M "$W/web.cnf" -S mxqweb --refresh 5 --threads 2 \
	>"$W/web.out" 2>&1 &
web_pid=$!
wait_until 20 curl -sf -o /dev/null --max-time 5 "http://$WEB/api/nodes" &&
	ok "mxq-web answers on $WEB" || { not_ok "mxq-web answers"; diag <"$W/web.out"; }
is "mxq-web --listen junk is a usage error" \
	"$("$web_bin" --listen nohost:80 >/dev/null 2>&1; echo $?)" 2

# ------------------------------------------------------------------ 1. overview, no JS

section "1. overview without JavaScript"
mkdir -p "$ARTIFACTS"
SHOT_NOJS=$ARTIFACTS/test_web-overview-nojs.png
rm -f "$SHOT_NOJS"
chrome_nojs "http://$WEB/?window=1h" "$W/overview.html" "$SHOT_NOJS" ||
	not_ok "Chromium renders the overview with JavaScript disabled"
for h in n1 n2; do
	st=$(cluster_state "$h")
	if grep -q "data-host=\"$h\" data-state=\"$st\"" "$W/overview.html"; then
		ok "overview lists $h as $st"
	else
		not_ok "overview lists $h as $st"
		grep -o "data-host=\"$h\"[^>]*" "$W/overview.html" | diag
		if [ "$h" = n1 ]; then
			echo "overview.html: $(wc -c <"$W/overview.html") bytes" | diag
			tail -n 5 "$W/chrome.err" | diag
		fi
	fi
done
check "overview has the cluster power chart" grep -q '<svg class="chart" id="chart-power"' "$W/overview.html"
check "overview has the nodes on/off chart" grep -q '<svg class="chart" id="chart-onoff"' "$W/overview.html"
check "the on/off chart has its series" grep -q 'class="series s0"' "$W/overview.html"
segs=$(sed -n 's/.*<svg class="chart" id="chart-power"\(.*\)/\1/p' "$W/overview.html" |
	sed 's|</svg>.*||' | grep -o ' L[0-9]' | wc -l)
check "the power chart draws the hour of samples ($segs segments)" test "$segs" -ge 20
check "overview shows the savings against always-on" grep -q 'id="savings"' "$W/overview.html"
check "overview names the leader" grep -q 'svc1' "$W/overview.html"
check "no script ran (JS off): the refresh script did not load" \
	sh -c "! grep -q 'data-updated' '$W/overview.html'"
check "without JavaScript the page refreshes itself (noscript meta refresh)" \
	grep -q '<noscript><meta http-equiv="refresh" content="5">' "$W/overview.html"
check "a screenshot without JavaScript is kept: $SHOT_NOJS" test -s "$SHOT_NOJS"

# ------------------------------------------------------------------ 2. screenshot

section "2. screenshot"
SHOT=$ARTIFACTS/test_web-overview.png
rm -f "$SHOT"
( cd "$W" && chrome --window-size=1280,1700 --hide-scrollbars --screenshot="$SHOT" \
	"http://$WEB/?window=1h" >/dev/null )
if [ -s "$SHOT" ] && [ "$(head -c 4 "$SHOT" | od -An -c | tr -d ' ')" = "211PNG" ]; then
	ok "screenshot kept: $SHOT"
	echo "# screenshot: $SHOT"
else
	not_ok "screenshot taken"
	tail -n 5 "$W/chrome.err" | diag
fi

# ------------------------------------------------------------------ 3. job page

section "3. job page"
# virtual time runs the page's refresh timer (5 s) before the dump
chrome --virtual-time-budget=8000 --dump-dom "http://$WEB/job/$J1" >"$W/job.html"
want=$(mxq_sql "SELECT energy_j FROM mxq_power_job WHERE job_id = $J1")
got=$(sed -n 's/.*<span id="job-energy">[^<]*<\/span> (\([0-9.]*\) J).*/\1/p' "$W/job.html")
check "the job page has an energy figure" test -n "$got"
check "it is the recorded energy ($got J, recorded $want J)" \
	awk -v a="$got" -v b="$want" 'BEGIN { exit !(a - b < 0.051 && b - a < 0.051) }'
check "the job page has the job's power chart" grep -q 'id="chart-job-power"' "$W/job.html"
check "which draws the job's power samples" sh -c "sed 's/.*id=\"chart-job-power\"//' '$W/job.html' |
	sed 's|</svg>.*||' | grep -q 'class=\"series s0\"'"
check "with JavaScript the page refreshed itself in place" grep -q 'data-updated="[0-9]' "$W/job.html"

# ------------------------------------------------------------------ 4. hostile name

section "4. escaping, why it waits"
G1=$(group_of "$J1")
chrome --dump-dom "http://$WEB/group/$G1" >"$W/group.html"
get "group/$G1" >"$W/group.raw"
check "the raw page has the name escaped" grep -qF '&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;&amp;x' "$W/group.raw"
check "the raw page has no <script> from it" sh -c "! grep -qF '<script>document.title' '$W/group.raw'"
check "the browser DOM shows it as text" grep -qF '&lt;script&gt;document.title' "$W/group.html"
check "the browser DOM has no such script element" sh -c "! grep -qF '<script>document.title' '$W/group.html'"
check "and the title was not changed" sh -c "! grep -q '<title>pwned' '$W/group.html'"
get "job/$J2" >"$W/waiting.html"
check "a waiting job's page says why" grep -q 'id="waiting"' "$W/waiting.html"
contains "no node qualifies for it" "$(cat "$W/waiting.html")" "No node qualifies"

# ------------------------------------------------------------------ 5. JSON, metrics

section "5. API and metrics"
get api/nodes >"$W/nodes.json"
jq_ok() { # FILTER FILE: the filter holds (quietly)
	jq -e "$1" "$2" >/dev/null
}
check "/api/nodes is valid JSON" jq_ok . "$W/nodes.json"
is "/api/nodes has both nodes" "$(jq -r '[.hosts[].hostname] | sort | join(" ")' "$W/nodes.json")" "n1 n2"
is "/api/nodes states are the database's" "$(jq -r '.hosts[] | "\(.hostname)=\(.state)"' "$W/nodes.json" | sort | tr '\n' ' ')" \
	"$(mxq_sql "SELECT CONCAT(hostname, '=', state) FROM mxq_power ORDER BY hostname" | tr '\n' ' ')"
get "api/jobs/$J1" >"$W/job.json"
check "/api/jobs/ID has the energy (to the 0.1 J JSON writes)" awk -v a="$(jq -r '.job.energy.energy_j' "$W/job.json")" \
	-v b="$(mxq_sql "SELECT energy_j FROM mxq_power_job WHERE job_id = $J1")" \
	'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 + 1e-9 * b) }'
get "api/energy?window=1d&by=host" >"$W/energy.json"
check "/api/energy is valid JSON with rows" jq_ok '.rows | length > 0' "$W/energy.json"
# a group with more jobs that ran than its summary reads: the newest
# 10000 (WEB_GROUP_JOBS_MAX) are counted and the answer says so, so the
# page of a group of a million jobs costs what one of ten thousand does
mxq_sql "INSERT INTO mxq_group (group_id, group_name, user_uid, user_name, user_gid, user_group,
	job_command, job_threads, job_memory, job_time) VALUES (9001, 'big', 0, 'root', 0, 'root',
	'true', 1, 64, 1);
	INSERT INTO mxq_job (group_id, job_workdir, job_argc, job_argv, job_umask, host_hostname,
	job_status, date_start, date_end) SELECT 9001, '/', 1, 'true\\\\0', 18, 'n1', 1000, NOW(),
	NOW() FROM seq_1_to_10001" || not_ok "a group of 10001 jobs"
get api/groups/9001 >"$W/big.json"
is "a big group's summary counts its newest 10000 jobs" \
	"$(jq -r '[.hosts[].jobs] | add' "$W/big.json")" 10000
is "and says the figure is cut" "$(jq -r '.energy.jobs_cut' "$W/big.json")" true
is "a small group's is not" "$(get "api/groups/$(group_of "$J1")" | jq -r '.energy.jobs_cut')" false
# a group that ran on more hosts than its page lists: the total is over all
mxq_sql "INSERT INTO mxq_group (group_id, group_name, user_uid, user_name, user_gid, user_group,
	job_command, job_threads, job_memory, job_time) VALUES (9002, 'wide', 0, 'root', 0, 'root',
	'true', 1, 64, 1);
	INSERT INTO mxq_job (job_id, group_id, job_workdir, job_argc, job_argv, job_umask,
	host_hostname, job_status, date_start, date_end) SELECT 900000 + seq, 9002, '/', 1,
	'true\\\\0', 18, CONCAT('w', seq), 1000, NOW(), NOW() FROM seq_1_to_101;
	INSERT INTO mxq_power_job (job_id, hostname, energy_j, date_start, date_end)
	SELECT 900000 + seq, CONCAT('w', seq), 10, NOW(), NOW() FROM seq_1_to_101" ||
	not_ok "a group of 101 jobs on 101 hosts"
get api/groups/9002 >"$W/wide.json"
is "a group on 101 hosts lists 100 of them" "$(jq -r '.hosts | length' "$W/wide.json")" 100
is "and its energy is that of all 101 jobs" \
	"$(jq -r '"\(.energy.energy_j) \(.energy.jobs_measured)"' "$W/wide.json")" "1010 101"
# a node OFF for days with no event of its own in the window: a day of
# savings, however recent the other nodes' events are
mxq_sql "INSERT INTO mxq_power (hostname, state, state_since, reason, idle_baseline_watts)
	VALUES ('soff', 'OFF', NOW() - INTERVAL 3 DAY, 'test: off for days', 100)" ||
	not_ok "a node off for days"
check "the day's savings count the whole day of a node off all day" \
	jq_ok '.savings[0].node_off_hours >= 24 and .savings[0].saved_kwh >= 2.4' \
	"$(get api/overview >"$W/savings.json"; echo "$W/savings.json")"
get metrics >"$W/metrics.txt"
check "/metrics has the node power" grep -q '^mxq_node_power_watts{host="n1"}' "$W/metrics.txt"
if command -v promtool >/dev/null 2>&1; then
	if promtool check metrics <"$W/metrics.txt" >"$W/promtool.out" 2>&1; then
		ok "/metrics passes promtool check metrics"
	else
		not_ok "/metrics passes promtool check metrics"
		diag <"$W/promtool.out"
	fi
else
	# every line: a comment (# HELP/# TYPE) or NAME{labels} VALUE
	bad=$(grep -vE '^(# (HELP|TYPE) [a-z_]+ .+|[a-z_]+(\{[a-z_]+="([^"\\]|\\.)*"\})? -?[0-9.e+]+)$' "$W/metrics.txt")
	is "/metrics lines are in the exposition format (promtool not installed)" "$bad" ""
fi

# ------------------------------------------------------------------ 6. HTTP

section "6. HTTP"
is "POST is refused" "$(http_code -X POST -d x=1 /)" 405
is "a '..' segment is a bad request" "$(http_code --path-as-is /node/..)" 400
is "an empty segment is a bad request" "$(http_code //node)" 400
is "a bad escape is a bad request" "$(http_code '/node/%zz')" 400
is "an unknown page is 404" "$(http_code /nope)" 404
is "a job id that is no number is 404" "$(http_code /job/abc)" 404
is "an unknown job is 404" "$(http_code /job/999999)" 404
is "an unknown node is 404" "$(http_code /node/nosuchnode)" 404
is "page=0 is a bad request" "$(http_code '/groups?page=0')" 400
is "an unknown window is a bad request" "$(http_code '/?window=2y')" 400
is "a parameter given twice is a bad request" "$(http_code '/groups?page=1&page=2')" 400
long=$(head -c 3000 /dev/zero | tr '\0' a)
code=$(http_code "/node/$long")
case $code in 400|414|431) ok "an overlong request target is refused ($code)" ;;
*) not_ok "an overlong request target is refused (got $code)" ;; esac
is "HEAD is served" "$(http_code -I /api/nodes)" 200
# the API answers every error with its JSON document (mxq-web(8))
is "API: a bad parameter name is a JSON 400" "$(get 'api/groups?Page=1' | jq -r .status)" 400
is "API: a bad escape is a JSON 400" "$(get 'api/nodes/%zz' | jq -r .status)" 400
is "API: an unknown path is a JSON 404" "$(get api/nope | jq -r .status)" 404
is "API: POST is a JSON 405" "$(curl -s -X POST --max-time 20 "http://$WEB/api/nodes" | jq -r .status)" 405
is "the server still answers" "$(http_code /api/nodes)" 200
check "mxq-web logged no database write error" sh -c "! grep -qi 'read.only\|denied' '$W/web.out'"

section "7. --private"
# a reason as the power manager writes it, naming a demand with its user
mxq_sql "INSERT INTO mxq_power_event (hostname, from_state, to_state, reason, actor)
	VALUES ('n1', 'OFF', 'OFF', 'kept off: group 77 (mxqsecretuser) needs a GPU', 'leader')"
PPORT=$(mxq_free_port tcp)
"$web_bin" --listen "127.0.0.1:$PPORT" -M "$W/web.cnf" -S mxqweb --private --threads 1 \
	>"$W/private.out" 2>&1 &
private_pid=$!
wait_until 20 curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$PPORT/api/nodes" ||
	not_ok "mxq-web --private answers"
pget() {
	curl -s --max-time 20 "http://127.0.0.1:$PPORT/$1"
}
pget "api/jobs/$J1" >"$W/private-job.json"
is "--private: no user name in a job" "$(jq -r '.job.user_name' "$W/private-job.json")" null
is "--private: no command" "$(jq -r '.job | has("argv")' "$W/private-job.json")" false
is "--private: but the energy" "$(jq -r '.job.energy | type' "$W/private-job.json")" object
check "--private: the group page has no group name" sh -c "! curl -s 'http://127.0.0.1:$PPORT/group/$G1' | grep -q 'pwned'"
check "--private: no user name in the power manager's reasons" \
	sh -c "! curl -s 'http://127.0.0.1:$PPORT/node/n1' | grep -q 'mxqsecretuser'"
contains "--private: the reason itself stays" "$(pget api/nodes/n1)" "group 77 (hidden) needs a GPU"
contains "(without --private it is shown)" "$(get api/nodes/n1)" "group 77 (mxqsecretuser)"
is "--private: energy by user is refused" \
	"$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PPORT/api/energy?by=user")" 403
kill -TERM "$private_pid"
wait "$private_pid"
private_pid=

kill -TERM "$web_pid" 2>/dev/null
wait "$web_pid"
is "mxq-web stops cleanly on SIGTERM" "$?" 0
web_pid=
tap_done
