#!/bin/sh
# tests/test_trust.sh - the trust boundary (README "Security model"),
# attacked end to end with real Unix users made here by useradd and removed
# on every exit path.
#
#   1. a row with user_uid 0 (and other forged identities: a name or gid
#      that does not belong to the uid, an unknown uid, a uid below
#      --min-uid): nothing runs, the job ends FAILED with a reason that
#      mxqdump shows, logged once; real rows run as the resolved user with
#      that user's groups; a refused job's callback does not run
#   2. planted tmpdir entries (a symlink to a root file, a directory) and
#      symlinks left by a job: no ownership changes outside, nothing
#      followed; a user-owned, world- or group-writable --tmpdir/--spool is
#      refused at start; a symlinked --pid-file is replaced, not followed
#   3. `mxqadmin power off` (and every other writer) by a non-admin: one
#      line, exit 1, the database unchanged; an admin group member may
#   4. a host name '--inject=$(id)' in mxq_power never reaches the exec
#      transport (and is flagged in power list / explain); power set
#      validates every field
#   5. mxqkill of another user's job refused; the client account's GRANTs
#      (mysql/grants.sql, real MariaDB) cannot write mxq_power, mxq_daemon
#      or a job's command; `make install` into a DESTDIR root creates the
#      set-id account and modes; the installed tools, run as the test
#      users (runuser) in a private mount namespace whose /etc/mxq holds
#      the credentials, take identity from the real uid, cannot be made to
#      read other credentials, and the users cannot read the credentials
#   6. the BMC password of a power manager is absent from a gcore dump of
#      a job's reaper (and, as a control, present in mxqd's own)
#   7. control characters in group names are escaped in tables, exact in
#      JSON
#   8. a callback runs only when its file and directories are owned by its
#      user or root and writable by no one else (StrictModes): one $UB can
#      write, one in a directory $UB can write, one of $UB's, a symlink to
#      one of $UB's: $UB changes each, none runs, one log line each says
#      why; a safe one under /tmp (sticky) runs as its user
#
# Needs root (useradd, runuser, setuid install, gcore). Prints TAP lines.

. "$(dirname -- "$0")/lib/mariadb.sh"
. "$(dirname -- "$0")/lib/mxqd.sh"

mxqdump=$MXQ_BUILD_DIR/mxqdump
mxqadmin=$MXQ_BUILD_DIR/mxqadmin
UA=mxqt12a UB=mxqt12b UM=mxqt12m GS=mxqt12s GADM=mxqt12adm

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (useradd, setuid install)"
	exit 0
fi

# --------------------------------------------------------- users, cleanup

remove_accounts() {
	for _u in $UA $UB $UM; do
		getent passwd "$_u" >/dev/null && userdel "$_u" 2>/dev/null
	done
	for _g in $GS $GADM $UA $UB $UM; do
		getent group "$_g" >/dev/null && groupdel "$_g" 2>/dev/null
	done
	return 0
}

W=
mxq_test_cleanup_hook() {
	mxqd_cleanup
	remove_accounts
	[ -n "$W" ] && rm -rf "$W"
}

mxqd_root_jobs=    # this test checks the identity rules: no --allow-root-jobs
mxq_db_start || { echo "not ok 1 - start the database"; exit 1; }
remove_accounts    # leftovers of an earlier run that was killed
W=$(mktemp -d "${TMPDIR:-/tmp}/mxqt12.XXXXXX") && chmod 755 "$W" || exit 1

groupadd "$GS"
groupadd "$GADM"
useradd -M -U -G "$GS" -s /bin/sh "$UA"
useradd -M -U -G "$GADM" -s /bin/sh "$UB"
check "test users $UA and $UB exist" getent passwd "$UA" "$UB" >/dev/null
uid_a=$(id -u "$UA") gid_a=$(id -g "$UA") uid_b=$(id -u "$UB") gid_b=$(id -g "$UB")
gid_s=$(getent group "$GS" | cut -d: -f3)
mkdir -p "$W/a" "$W/b" "$W/cb" "$W/keep" "$W/private" "$W/bin"
# the users run the developer build's tools from here (the build tree's
# parents may be closed to them)
cp "$MXQ_BUILD_DIR/mxqadmin" "$MXQ_BUILD_DIR/mxqkill" "$W/bin/"
etc_mxq_existed=no
[ -e /etc/mxq ] && etc_mxq_existed=yes
chown "$UA:$gid_a" "$W/a"; chown "$UB:$gid_b" "$W/b"
chmod 1777 "$W/cb"; chmod 700 "$W/private"
echo keep >"$W/keep/file"
echo secret >"$W/target" && chmod 600 "$W/target"
echo pid-target >"$W/pidtarget" && chmod 600 "$W/pidtarget"
ln -s "$W/pidtarget" "$W/pidlink"
# the callback writes who ran it
printf '#!/bin/sh\nid -u >"%s/cb/ran-$MXQ_JOB_ID"\n' "$W" >"$W/cb.sh"
chmod 755 "$W/cb.sh"
# the users' own copies of the test database's TCP credentials: a
# developer build has nothing else to keep users out (they stand for a
# leaked or shared client file)
for _u in a b; do
	cp "$MXQ_MYSQL_DEFAULT_FILE_TCP" "$W/$_u/my.cnf"
	chown "mxqt12$_u" "$W/$_u/my.cnf"; chmod 600 "$W/$_u/my.cnf"
done

as_user() { # USER CMD...: run as USER with a clean environment
	_u=$1
	shift
	runuser -u "$_u" -- env -i PATH=/usr/bin:/bin HOME=/ "$@"
}

# job_as UID NAME GID GROUPNAME [MXQSUB ARGS] -- CMD...: submit as root,
# then make the group's row claim UID/NAME/GID (as a database writer
# could); prints the job id. Submitted for no host, released by the same
# UPDATE, so that no running mxqd sees the root row in between.
job_as() {
	_u=$1 _n=$2 _g=$3 _gn=$4
	shift 4
	_j=$(submit -N "$_gn" -w "$W" --whitelist job-as.invalid "$@") || return 1
	# CALLBACK: set as a database writer could; mxqsub, run here as root,
	# checks a callback as its caller and would refuse one of another user's
	if [ -n "${CALLBACK:-}" ]; then
		mxq_sql "UPDATE mxq_job SET job_callback = '$CALLBACK' WHERE job_id = $_j" || return 1
	fi
	mxq_sql "UPDATE mxq_group SET user_uid = $_u, user_name = '$_n', user_gid = $_g,
		group_whitelist = IF(group_whitelist = 'job-as.invalid', '', group_whitelist)
		WHERE group_id = (SELECT group_id FROM mxq_job WHERE job_id = $_j)" || return 1
	echo "$_j"
}
reason_of() { mxq_sql "SELECT job_reason FROM mxq_job WHERE job_id = $1"; }
power_digest() {
	mxq_sql "SELECT CONCAT(COUNT(*), ':', COALESCE(MD5(GROUP_CONCAT(CONCAT_WS(',', hostname,
		state, desired_state, admin_off, admin_request, excluded, bmc_address, node_class,
		efficiency_rank) ORDER BY hostname)), '-'),
		':', (SELECT COUNT(*) FROM mxq_power_event), ':', (SELECT COALESCE(MAX(version), 0)
		FROM mxq_schema_version)) FROM mxq_power"
}

# ------------------------------------------------- 1. forged identities

section "1. identities from the database are checked against the user database"
j_root=$(job_as 0 root 0 root -o "$W/cb/pwned-root" -- /usr/bin/id)
j_name=$(job_as "$uid_a" root "$gid_a" name --callback "$W/cb.sh" -o "$W/cb/pwned-name" -- /usr/bin/id)
j_gid=$(job_as "$uid_a" "$UA" 0 gid -o "$W/cb/pwned-gid" -- /usr/bin/id)
j_ghost=$(job_as 3999999 ghost 3999999 ghost -o "$W/cb/pwned-ghost" -- /usr/bin/id)
j_low=$(job_as 1 daemon 1 low -o "$W/cb/pwned-low" -- /usr/bin/id)
j_nobody=$(job_as 65534 nobody 65534 nobody -o "$W/cb/pwned-nobody" -- /usr/bin/id)
j_other=$(job_as "$uid_b" "$UB" "$gid_s" other -o "$W/cb/pwned-other" -- /usr/bin/id)
j_ok=$(job_as "$uid_a" "$UA" "$gid_a" ok --callback "$W/cb.sh" -o "$W/a/ok.out" -- /usr/bin/id)
j_supp=$(job_as "$uid_a" "$UA" "$gid_s" supp -o "$W/a/supp.out" -- /usr/bin/id -g)
# 2. (planted entries; the node's tmpdir is created by mxqd_start below)
j_sym=$(job_as "$uid_a" "$UA" "$gid_a" sym -o "$W/a/sym.out" -- /bin/true)
j_dir=$(job_as "$uid_a" "$UA" "$gid_a" dir -o "$W/a/dir.out" -- /bin/true)
j_rm=$(job_as "$uid_a" "$UA" "$gid_a" rm -o "$W/a/rm.out" -- \
	/bin/sh -c "ln -s $W/keep \"\$MXQ_JOB_TMPDIR/link\" && ln -s $W/keep/file \"\$MXQ_JOB_TMPDIR/f\" && mkdir \"\$MXQ_JOB_TMPDIR/d\" && touch \"\$MXQ_JOB_TMPDIR/d/x\"")
check "jobs with forged and real identities submitted" \
	[ -n "$j_root" ] && [ -n "$j_ok" ] && [ -n "$j_rm" ]

T1=$W/tmp1    # jobs reach their tmpdir: its parents must be open to them
mkdir -p "$T1"
ln -s "$W/target" "$T1/mxq_job_$j_sym"
mkdir -m 700 "$T1/mxq_job_$j_dir"
mxqd_start tnode1 --slots 4 --memory 4G --pid-file "$W/pidlink" --tmpdir "$T1" ||
	{ not_ok "start mxqd tnode1"; tap_done; exit 1; }
ALL="$j_root,$j_name,$j_gid,$j_ghost,$j_low,$j_nobody,$j_other,$j_ok,$j_supp,$j_sym,$j_dir,$j_rm"
wait_for 60 "SELECT COUNT(*) = 12 FROM mxq_job WHERE job_id IN ($ALL) AND job_status IN (750, 1000)"
for j in "$j_root:uid 0" "$j_name:is not the name of uid $uid_a" "$j_gid:gid 0 is not a group of user $UA" \
	"$j_ghost:uid 3999999 is not a user" "$j_low:below mxqd's --min-uid 1000" "$j_nobody:uid 65534 (nobody) is shared by system daemons" \
	"$j_other:gid $gid_s is not a group of user $UB"; do
	is "forged row (${j#*:}): job FAILED" "$(status_of "${j%%:*}")" 750
	contains "forged row (${j#*:}): the reason says so" "$(reason_of "${j%%:*}")" "${j#*:}"
done
ls "$W"/cb/pwned-* >/dev/null 2>&1 && pwned=yes || pwned=no
is "no forged row ran anything (no output file created)" "$pwned" no
check "the refused job's callback did not run" [ ! -e "$W/cb/ran-$j_name" ]
is "the uid 0 refusal is logged once" \
	"$(grep -c "job $j_root (group .*uid 0 (root)" "$(mxqd_dir tnode1)/mxqd.log")" 1
out=$("$mxqdump" -M "$MXQ_MYSQL_DEFAULT_FILE" -j -A -i -J "$j_root")
is "mxqdump -j shows the reason in its last column, REASON" \
	"$(printf '%s\n' "$out" | sed -n '1s/.*  //p; 2s/.*  refused: /refused: /p')" \
	"REASON
refused: jobs of uid 0 (root) do not run here (mxqd without --allow-root-jobs)"
contains "mxqdump --json has job_reason" \
	"$("$mxqdump" -M "$MXQ_MYSQL_DEFAULT_FILE" -j -A -i -J "$j_root" --json)" '"job_reason": "refused: jobs of uid 0'
is "real row: FINISHED" "$(status_of "$j_ok")" 1000
contains "real row: runs as the user" "$(cat "$W/a/ok.out")" "uid=$uid_a($UA)"
contains "real row: supplementary groups of the resolved user" "$(cat "$W/a/ok.out")" "$gid_s($GS)"
is "real row: its output file belongs to the user" "$(stat -c %u "$W/a/ok.out")" "$uid_a"
is "row with a member group as gid: runs with that gid" "$(cat "$W/a/supp.out" 2>/dev/null)" "$gid_s"
wait_until 20 test -e "$W/cb/ran-$j_ok"
is "the real job's callback ran, as the user" "$(cat "$W/cb/ran-$j_ok" 2>/dev/null)" "$uid_a"

# ------------------------------------------------------ 2. directories

section "2. tmpdir, spool and pid file"
is "planted symlink: job FAILED" "$(status_of "$j_sym")" 750
contains "planted symlink: the reason names the entry" "$(reason_of "$j_sym")" "mxq_job_$j_sym already exists"
is "planted symlink: its target keeps owner and mode" "$(stat -c '%u:%g %a' "$W/target")" "0:0 600"
check "planted symlink: still there, not followed or removed" [ -L "$T1/mxq_job_$j_sym" ]
is "planted directory: job FAILED" "$(status_of "$j_dir")" 750
is "planted directory: still root's" "$(stat -c '%u %a' "$T1/mxq_job_$j_dir")" "0 700"
is "a job's symlinks in its tmpdir: job FINISHED" "$(status_of "$j_rm")" 1000
check "a job's symlinks in its tmpdir: tmpdir removed" [ ! -e "$T1/mxq_job_$j_rm" ]
is "a job's symlinks in its tmpdir: their targets untouched" \
	"$(cat "$W/keep/file" 2>/dev/null) $(stat -c '%u' "$W/keep")" "keep 0"
check "--pid-file: the planted symlink was replaced by a file" [ -f "$W/pidlink" ] && [ ! -L "$W/pidlink" ]
is "--pid-file: its target untouched" "$(cat "$W/pidtarget")" pid-target
contains "mxqd --help: the default tmpdir is out of /tmp" "$("$mxqd_bin" --help)" "/var/lib/mxqd/tmp"
mkdir -p "$W/gw" && chmod 775 "$W/gw"
for bad in "$W/a:belongs to uid $uid_a" "/tmp:is writable by others" "$W/gw:is writable by its group"; do
	d=${bad%%:*}
	out=$("$mxqd_bin" --hostname badt --tmpdir "$d" --spool "$W/spool-ok" -M "$MXQ_MYSQL_DEFAULT_FILE" 2>&1)
	rc=$?
	check "--tmpdir $d refused at start (exit $rc)" [ "$rc" = 1 ]
	contains "--tmpdir $d: one line naming the problem" "$out" "--tmpdir refused: $d ${bad#*:}"
	out=$("$mxqd_bin" --hostname badt --spool "$d" --tmpdir "$W/tmp-ok" -M "$MXQ_MYSQL_DEFAULT_FILE" 2>&1)
	contains "--spool $d refused at start" "$out" "--spool refused: $d ${bad#*:}"
done

# ------------------------------------------------------- 3. mxqadmin

section "3. mxqadmin: writers need root or the admin group"
before=$(power_digest)
for cmd in "power off tnode1 --reason x" "power on tnode1 --reason x" "power clear tnode1" \
	"power exclude tnode1" "power include tnode1" "power set tnode1 rank=5" "db upgrade"; do
	# shellcheck disable=SC2086 # word splitting of cmd is intended
	out=$(as_user "$UA" "$W/bin/mxqadmin" -M "$W/a/my.cnf" $cmd 2>&1)
	rc=$?
	check "non-admin 'mxqadmin $cmd': refused (exit $rc)" [ "$rc" = 1 ]
	contains "non-admin 'mxqadmin $cmd': says who may" "$out" "only root and members of the group 'mxqadmin'"
done
is "non-admin writers: the database is unchanged" "$(power_digest)" "$before"
out=$(as_user "$UA" "$W/bin/mxqadmin" -M "$W/a/my.cnf" power list 2>&1)
contains "non-admin 'power list' works (read-only)" "$out" tnode1
out=$(as_user "$UB" env MXQ_ADMIN_GROUP="$GADM" "$W/bin/mxqadmin" -M "$W/b/my.cnf" power exclude tnode1 --reason "admin test" 2>&1)
is "a member of the admin group (developer build, MXQ_ADMIN_GROUP) may exclude" "$?" 0
is "... and the row changed" "$(mxq_sql "SELECT excluded FROM mxq_power WHERE hostname = 'tnode1'")" 1
"$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power include tnode1 >/dev/null
before=$(power_digest)
for kv in "bmc=--x" "bmc=node1:0" "ssh=[::1]:70000" "bmc=[::1" "broadcast=1.2.3" "broadcast=--x" \
	"class=a b" "ipmi_workarounds=bogus" "mac=zz"; do
	out=$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power set tnode1 "$kv" 2>&1)
	rc=$?
	check "power set $kv: refused with one line (exit $rc)" [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]
done
is "refused power set: the database is unchanged" "$(power_digest)" "$before"
out=$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power set tnode1 "bmc=[::1]:623" "ssh=10.0.0.1:22" \
	broadcast=10.1.255.255 class=big.1 ipmi_workarounds=opensesspriv 2>&1)
is "power set with valid fields: accepted" "$?" 0

# ------------------------------------------------ 4. host names as options

section "4. host names from the database never become options"
mxqd_stop tnode1 TERM 30
printf '#!/bin/sh\necho "$*" >>"%s/exec.log"\n[ "$2" = status ] && echo on\nexit 0\n' "$W" >"$W/exec.sh"
chmod 755 "$W/exec.sh"
: >"$W/exec.log"
mxq_sql "INSERT INTO mxq_power (hostname, state, transport_on, transport_off, reason, admin_request,
	admin_request_reason) VALUES ('good1', 'ON', 'exec', 'exec', 'test', '', ''),
	('--inject=\$(id)', 'ON', 'exec', 'exec', 'test', 'OFF', 'attack')"
PW=mxqt12pw$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
printf '[default]\nipmi_user = admin\nipmi_password = %s\n' "$PW" >"$W/secrets"
chmod 600 "$W/secrets"
printf 'idle_time = 1h\n' >"$W/power.conf"
# the database password reaches mxqd through its defaults file only (the
# harness exports it too: not into this daemon's environment)
DBPW=$MXQ_TEST_DB_PASSWORD
unset MXQ_TEST_DB_PASSWORD
mxqd_start tpm --no-power-node --power-manager --power-config "$W/power.conf" --power-secrets "$W/secrets" \
	--power-exec-command "$W/exec.sh" --power-tick 0.5 --power-lease 3 \
	--power-reconcile-interval 1 --poweroff-command /bin/false --slots 2 --memory 2G ||
	{ not_ok "start the power manager"; tap_done; exit 1; }
wait_until 40 grep -q "^good1 status" "$W/exec.log"
contains "a valid host is asked through the exec transport" "$(cat "$W/exec.log")" "good1 status"
sleep 2   # a few more ticks with the admin request pending on the bad row
not_contains "the '--inject=\$(id)' row never reached the exec transport" "$(cat "$W/exec.log")" "inject"
contains "power list flags the row" "$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power list)" "invalid-name"
contains "power explain says it is never actuated" \
	"$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain -- '--inject=$(id)')" "never actuated"
contains "power list --json: hostname_valid false" \
	"$("$mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power list --json)" '"hostname_valid": false'
out=$("$mxqd_bin" --hostname '--inject=$(id)' 2>&1)
contains "mxqd --hostname applies the same rule" "$out" "is not a host name"

# -------------------------------------------- 6. secrets and the reaper

section "6. the BMC password is not in a reaper's memory"
j_sleep=$(job_as "$uid_a" "$UA" "$gid_a" sleeper -o "$W/a/sleep.out" -m 100M -- /bin/sleep 60)
wait_for 30 "SELECT job_status = 200 FROM mxq_job WHERE job_id = $j_sleep"
read -r reaper _rest <"$(mxqd_dir tpm)/spool/$j_sleep.pid"
gcore -o "$W/core-reaper" "$reaper" >"$W/gcore.log" 2>&1
check "gcore wrote a core of the reaper $reaper" [ -s "$W/core-reaper.$reaper" ]
is "the BMC password is absent from the reaper's core" \
	"$(grep -c -a -F "$PW" "$W/core-reaper.$reaper" 2>/dev/null)" 0
is "the database password is absent from the reaper's core" \
	"$(grep -c -a -F "$DBPW" "$W/core-reaper.$reaper" 2>/dev/null)" 0
gcore -o "$W/core-mxqd" "$(mxqd_pid tpm)" >>"$W/gcore.log" 2>&1
check "control: the BMC password IS in the power manager's own core" \
	grep -q -a -F "$PW" "$W/core-mxqd.$(mxqd_pid tpm)"
check "control: the database password IS in the power manager's own core" \
	grep -q -a -F "$DBPW" "$W/core-mxqd.$(mxqd_pid tpm)"
rm -f "$W"/core-*
is "mxqd runs with RLIMIT_CORE 0" \
	"$(awk '$1 == "Max" && $2 == "core" {print $5}' "/proc/$(mxqd_pid tpm)/limits")" 0
"$MXQ_BUILD_DIR/mxqkill" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_sleep" >/dev/null
mxqd_stop tpm TERM 30

# ------------------------------------- 5. mxqkill, GRANTs, set-id install

section "5. mxqkill, the client account's GRANTs, the set-id installation"
j_qa=$(job_as "$uid_a" "$UA" "$gid_a" queued --whitelist nohost.invalid -- /bin/true)
out=$(as_user "$UB" "$W/bin/mxqkill" -M "$W/b/my.cnf" -J "$j_qa" 2>&1)
rc=$?
check "mxqkill of $UA's job by $UB: refused (exit $rc)" [ "$rc" = 1 ]
contains "... saying whose it is" "$out" "belongs to $UA"
is "... and the job is still queued" "$(status_of "$j_qa")" 0

R=$W/root
out=$(make -s -C "$MXQ_SRC_DIR" install DESTDIR="$R" PREFIX=/usr SYSCONFDIR=/etc MXQ_USER="$UM" 2>&1)
is "make install into a DESTDIR root" "$?" 0
printf '%s\n' "$out" | diag
check "make install created the set-id account $UM" getent passwd "$UM" >/dev/null
# setgid only: a binary owned by the account could be rewritten by
# anything running as it, and every user and root run these tools
for t in mxqsub mxqdump mxqkill; do
	is "$t: root:$UM 2755" "$(stat -c '%U:%G %a' "$R/usr/bin/$t")" "root:$UM 2755"
done
is "mxqadmin: root:$UM 2755" "$(stat -c '%U:%G %a' "$R/usr/bin/mxqadmin")" "root:$UM 2755"
chmod 755 "$R"   # mktemp-like parents must let the users reach the tools

# mxq-metrics.service: the query runs as the account, root only renames a
# file it made itself (a root copy out of a directory of the account's
# followed a symlink the account planted there: /etc/shadow readable by all)
unit=$R/usr/lib/systemd/system/mxq-metrics.service
cmd=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$unit" | sed -n 's/^ExecStart=//p' | sed 's/\$\$/$/g')
check "mxq-metrics.service: no User= (root runs the steps, the query drops to mxq)" \
	sh -c "! grep -q '^User=' '$unit'"
mkdir -p "$W/ne" && printf 'old 1\n' >"$W/ne/mxq.prom"
printf '#!/bin/sh\necho "# run as $(id -un):$(id -gn)"\n' >"$W/metrics_ok"
printf '#!/bin/sh\necho partial; exit 1\n' >"$W/metrics_fail"
chmod 755 "$W/metrics_ok" "$W/metrics_fail"
metrics_unit() { # the unit's command with the test's directory, account and tool
	c=$(printf '%s' "$cmd" | sed -e "s#/var/lib/prometheus/node-exporter#$W/ne#" \
		-e "s#--reuid=mxq --regid=mxq#--reuid=$UM --regid=$UM#" -e "s#/usr/bin/mxqadmin power metrics#$1#")
	eval "$c"
}
metrics_unit "$W/metrics_fail"
is "metrics unit: a failed query keeps the old file, leaves no temporary" \
	"$(cat "$W/ne/mxq.prom"; ls -A "$W/ne")" "old 1
mxq.prom"
metrics_unit "$W/metrics_ok"
is "metrics unit: the query ran as $UM, the file is root's, 0644" \
	"$(cat "$W/ne/mxq.prom"; stat -c '%U %a' "$W/ne/mxq.prom")" "# run as $UM:$UM
root 644"

CPW=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
for h in localhost 127.0.0.1; do
	mariadb --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot mxq <<EOF || not_ok "grants.sql for $h"
SET @mxq_db = 'mxq', @mxq_host = '$h';
SET @mxqclient_pw = '$CPW', @mxqd_pw = 'd$CPW', @mxqadmin_pw = 'a$CPW';
SOURCE $MXQ_SRC_DIR/mysql/grants.sql;
EOF
done
client_sql() { # the client account over TCP, as root
	mariadb --no-defaults -h 127.0.0.1 -P "$MXQ_TEST_DB_PORT" -umxqclient -p"$CPW" mxq -e "$1" 2>&1
}
for sql in "UPDATE mxq_power SET admin_request = 'OFF' WHERE hostname = 'good1'" \
	"INSERT INTO mxq_power (hostname) VALUES ('x')" \
	"UPDATE mxq_power_leader SET holder = 'me'" "DELETE FROM mxq_power_event" \
	"INSERT INTO mxq_power_job (job_id) VALUES (1)" \
	"INSERT INTO mxq_daemon (daemon_name, hostname) VALUES ('x', 'x')" \
	"UPDATE mxq_daemon SET status = 1" \
	"UPDATE mxq_job SET job_argv = 'rm\\\\0' WHERE job_id = $j_qa" \
	"UPDATE mxq_group SET user_uid = 0" "DELETE FROM mxq_job" "DROP TABLE mxq_power_event" \
	"CREATE TABLE t (i INT)"; do
	contains "client account: '$sql' denied" "$(client_sql "$sql")" "denied"
done
is "client account: mxq_power unchanged" \
	"$(mxq_sql "SELECT admin_request FROM mxq_power WHERE hostname = 'good1'")" ""
contains "client account: may read (mxqdump's SELECTs)" \
	"$(client_sql "SELECT COUNT(*) FROM mxq_job")" "COUNT"

# the installed tools, in a mount namespace whose /etc/mxq has the
# credentials (root:$UM 0640): nothing of the host's /etc is touched
printf '[mxqclient]\ndatabase=mxq\nuser=mxqclient\npassword=%s\nhost=127.0.0.1\nport=%s\nprotocol=TCP\n' \
	"$CPW" "$MXQ_TEST_DB_PORT" >"$W/client.cnf"
cat >"$W/inner.sh" <<'EOF'
set -u
W=$1 R=$2 UA=$3 UB=$4 UM=$5 GADM=$6 JQA=$7
mount -t tmpfs tmpfs "$W/ov" && mkdir "$W/ov/u" "$W/ov/w" &&
	mount -t overlay overlay -o "lowerdir=/etc,upperdir=$W/ov/u,workdir=$W/ov/w" /etc || exit 3
mkdir -p /etc/mxq && cp "$W/client.cnf" /etc/mxq/mysql.cnf &&
	chown "root:$UM" /etc/mxq/mysql.cnf && chmod 640 /etc/mxq/mysql.cnf || exit 3
u() { _u=$1; shift; runuser -u "$_u" -- env -i PATH=/usr/bin:/bin HOME=/ "$@"; }
echo "== cat"; u "$UA" cat /etc/mxq/mysql.cnf 2>&1; echo "rc=$?"
echo "== mariadb"; u "$UA" mariadb --defaults-file=/etc/mxq/mysql.cnf \
	-e "UPDATE mxq_job SET job_status = 990 WHERE job_id = $JQA" 2>&1; echo "rc=$?"
cd "$W/a" || exit 3
echo "== sub"; u "$UA" "$R/usr/bin/mxqsub" -N setid -w "$W/a" --whitelist nohost.invalid /bin/true 2>&1; echo "rc=$?"
echo "== subpriv"; u "$UA" "$R/usr/bin/mxqsub" -w "$W/mxqonly/sub" /bin/true 2>&1; echo "rc=$?"
echo "== subgroup"; u "$UA" "$R/usr/bin/mxqsub" -S mxqd -w "$W/a" /bin/true 2>&1; echo "rc=$?"
echo "== subenv"; u "$UA" env MARIADB_PLUGIN_DIR="$W/a" LIBMYSQL_PLUGINS=evil "$R/usr/bin/mxqsub" \
	-N setenv -w "$W/a" --whitelist nohost.invalid /bin/true 2>&1; echo "rc=$?"
echo "== dump"; u "$UA" "$R/usr/bin/mxqdump" 2>&1; echo "rc=$?"
echo "== killother"; u "$UB" "$R/usr/bin/mxqkill" -J "$JQA" 2>&1; echo "rc=$?"
echo "== killown"; u "$UA" "$R/usr/bin/mxqkill" -J "$JQA" 2>&1; echo "rc=$?"
echo "== adminlist"; u "$UA" "$R/usr/bin/mxqadmin" power list 2>&1; echo "rc=$?"
echo "== adminoff"; u "$UB" env MXQ_ADMIN_GROUP="$GADM" "$R/usr/bin/mxqadmin" power off good1 --reason x 2>&1; echo "rc=$?"
echo "== end"
EOF
mkdir -p "$W/ov" "$W/mxqonly/sub"   # only the set-id account could look in there
chown -R "$UM:$UM" "$W/mxqonly" && chmod 700 "$W/mxqonly"
before=$(power_digest)
unshare -m --propagation private sh "$W/inner.sh" "$W" "$R" "$UA" "$UB" "$UM" "$GADM" "$j_qa" >"$W/inner.out" 2>&1
is "the set-id checks ran in their mount namespace" "$?" 0
part() { sed -n "/^== $1\$/,/^== /p" "$W/inner.out" | sed '1d;$d'; }
[ -e /etc/mxq ] && etc_mxq_now=yes || etc_mxq_now=no
is "the host's /etc is untouched (the overlay held /etc/mxq)" "$etc_mxq_now" "$etc_mxq_existed"
contains "$UA cannot read the client credentials" "$(part cat)" "Permission denied"
contains "$UA cannot use the client account for direct SQL" "$(part mariadb)" "rc=1"
contains "set-id mxqsub as $UA: submitted" "$(part sub)" "mxq_job_id="
is "set-id mxqsub: the group belongs to the real uid" \
	"$(mxq_sql "SELECT CONCAT(user_uid, ' ', user_name, ' ', user_gid) FROM mxq_group WHERE group_name = 'setid'")" \
	"$uid_a $UA $gid_a"
contains "set-id mxqsub: the workdir is checked as the caller (not as $UM)" "$(part subpriv)" "Permission denied"
contains "set-id mxqsub -S mxqd: read as the caller, so refused" "$(part subgroup)" "rc=1"
contains "set-id mxqsub ignores MYSQL_HOST/MARIADB_PLUGIN_DIR" "$(part subenv)" "mxq_job_id="
contains "set-id mxqdump as $UA: sees the own group" "$(part dump)" "setid"
contains "set-id mxqkill by $UB of $UA's job: refused" "$(part killother)" "belongs to $UA"
contains "set-id mxqkill by $UA of the own job: cancelled" "$(part killown)" "cancelled job $j_qa"
contains "setgid mxqadmin: power list for everyone" "$(part adminlist)" "good1"
contains "setgid mxqadmin ignores MXQ_ADMIN_GROUP: refused" "$(part adminoff)" "only root and members"
is "set-id tools: mxq_power unchanged" "$(power_digest)" "$before"
grep -q '^== end$' "$W/inner.out" || diag <"$W/inner.out"

# ------------------------------------------------- 7. terminal escaping

section "7. control characters in tables"
esc=$(printf '\033')
j_esc=$(submit -N "evil${esc}]0;owned$(printf '\007')name" -w "$W" --whitelist nohost.invalid -- /bin/true)
out=$("$mxqdump" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$(group_of "$j_esc")")
contains "mxqdump table: the ESC is shown as \\x1b" "$out" 'evil\x1b]0;owned\x07name'
case $out in *"$esc"*) not_ok "mxqdump table: no raw ESC byte" ;; *) ok "mxqdump table: no raw ESC byte" ;; esac
contains "mxqdump --json: exact (\\u001b)" \
	"$("$mxqdump" -M "$MXQ_MYSQL_DEFAULT_FILE" -g "$(group_of "$j_esc")" --json)" 'evil\u001B]0;owned\u0007name'

# ------------------------------------------------ 8. callbacks' files

section "8. a callback runs only if no one but its user (and root) can change it"
C=$W/a/cbs    # $UA's own directory of callbacks
mkdir -p "$C" "$C/shared" && chown "$UA:$gid_a" "$C" && chown "$UA:$gid_b" "$C/shared" &&
	chmod 755 "$C" && chmod 775 "$C/shared"
# cb8 FILE TAG OWNER:GROUP MODE: a callback that writes who ran it
cb8() {
	printf '#!/bin/sh\nid -u >"%s/cb/ran8-%s-$MXQ_JOB_ID"\n' "$W" "$2" >"$1" &&
		chown "$3" "$1" && chmod "$4" "$1"
}
cb8 "$C/ok.sh" ok "$UA:$gid_a" 755
cb8 "$C/gw.sh" gw "$UA:$gid_b" 775                 # its group ($UB's) can write it
cb8 "$C/shared/cb.sh" dir "$UA:$gid_a" 755         # in a directory $UB can write
cb8 "$C/ub.sh" ub "$UB:$gid_b" 755                 # $UB's file (given to $UA)
cb8 "$W/b/cb.sh" link "$UB:$gid_b" 755 && ln -sf "$W/b/cb.sh" "$C/link.sh"
# $UB puts its own code into every one it can change: run as $UA, it
# would leave $UA's uid in a pwned8 file
payload=$(printf '#!/bin/sh\nid -u >"%s/cb/pwned8-$MXQ_JOB_ID"\n' "$W")
as_user "$UB" sh -c "printf '%s\n' '$payload' >'$C/gw.sh'" &&
	as_user "$UB" sh -c "rm -f '$C/shared/cb.sh' && printf '%s\n' '$payload' >'$C/shared/cb.sh' &&
		chmod 755 '$C/shared/cb.sh'" &&
	as_user "$UB" sh -c "printf '%s\n' '$payload' >'$C/ub.sh'" &&
	as_user "$UB" sh -c "printf '%s\n' '$payload' >'$W/b/cb.sh'"
is "$UB could change the callbacks it can write" "$?" 0
j8_ok=$(CALLBACK=$C/ok.sh job_as "$uid_a" "$UA" "$gid_a" cb8ok -o "$W/a/cb8.out" -- /bin/true)
j8_gw=$(CALLBACK=$C/gw.sh job_as "$uid_a" "$UA" "$gid_a" cb8gw -o "$W/a/cb8.out" -- /bin/true)
j8_dir=$(CALLBACK=$C/shared/cb.sh job_as "$uid_a" "$UA" "$gid_a" cb8dir -o "$W/a/cb8.out" -- /bin/true)
j8_ub=$(CALLBACK=$C/ub.sh job_as "$uid_a" "$UA" "$gid_a" cb8ub -o "$W/a/cb8.out" -- /bin/true)
j8_link=$(CALLBACK=$C/link.sh job_as "$uid_a" "$UA" "$gid_a" cb8link -o "$W/a/cb8.out" -- /bin/true)
mxqd_start tnode8 --slots 4 --memory 4G || { not_ok "start mxqd tnode8"; tap_done; exit 1; }
log8=$(mxqd_dir tnode8)/mxqd.log
check "the safe callback ran" wait_until 20 test -s "$W/cb/ran8-ok-$j8_ok"
is "... as $UA" "$(cat "$W/cb/ran8-ok-$j8_ok" 2>/dev/null)" "$uid_a"
# JOB|CALLBACK|WHY: the one log line of a callback not run
for c in "$j8_gw|$C/gw.sh|$C/gw.sh is writable by its group (mode 0775)" \
	"$j8_dir|$C/shared/cb.sh|$C/shared is writable by its group (mode 0775)" \
	"$j8_ub|$C/ub.sh|$C/ub.sh belongs to uid $uid_b, not to root or the job's user" \
	"$j8_link|$C/link.sh|$W/b belongs to uid $uid_b, not to root or the job's user"; do
	j=${c%%|*} rest=${c#*|}
	cbp=${rest%%|*} why=${rest#*|}
	check "callback ${cbp#"$W"/} is not run: ${why#"$W"/}" wait_until 20 grep -qF \
		"job $j: callback $cbp not run: $why" "$log8"
	is "... the log says so in one line" "$(grep -cF "job $j: callback" "$log8")" 1
done
ls "$W"/cb/pwned8-* >/dev/null 2>&1 && pwned=yes || pwned=no
is "none of $UB's code ran as $UA" "$pwned" no
mxqd_stop tnode8 TERM 30

tap_done
