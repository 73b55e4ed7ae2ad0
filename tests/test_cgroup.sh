#!/bin/sh
# tests/test_cgroup.sh - job and callback containment with real cgroups
# (as root, on the machine's cgroup tree), tmpdir quotas and the fallback.
#
#   1. the layout is detected and logged once; a job's processes, also a
#      daemonised one (setsid -f), run in the job's cgroup; the parent
#      cgroup mxqd-HOST@DAEMON.HASH of host "N-p", daemon "q" is not the
#      one of host "N", daemon "p-q"; a daemon name with '/' is refused
#   2. a daemonised child does not survive its job's end (FINISHED), its
#      cancellation (mxqkill: CANCELLED) or its kill (runtime: KILLED); the
#      cgroups are removed; a job whose id has a leftover cgroup (frozen,
#      or holding a process of an earlier run) runs in a fresh one of its
#      own, the leftover process killed; one whose leftover survives
#      SIGKILL (frozen by a v1 freezer) is refused with a reason, unrun
#   3. a daemonised child over the job's memory request (-m 100M, 300 MB)
#      gets the job KILLED, reason memory; the memory high-water mark of
#      a job whose daemonised child used 200 MB is in stats_max_sumrss;
#      (in 7.) with --memory-limit-hard 200 a -m 100M job may use 150 MB
#   4. a callback's daemonised child is killed at --callback-timeout; a
#      leftover callback cgroup with a process: the process is killed, the
#      callback runs in a fresh one; three callback processes of 120 MB
#      each do not all live (the cgroup holds 256 MiB for all)
#   5. a job writing past its --tmpdir 1 (GiB) gets ENOSPC on a tmpfs; the
#      node's tmpdir filesystem gets none of it; the mount is gone after
#   6. SIGQUIT + restart: the job's cgroup and its daemonised child stay,
#      the new mxqd re-adopts the job with its cgroup, cancelling it kills
#      the daemonised child too
#   7. energy split from cgroup CPU: two jobs of 3:1 CPU time where the
#      busy one burns in a daemonised child (a session scan cannot see it):
#      its CPU time counts, the active energy splits like the CPU times,
#      interval by interval
#   8. fallback: --cgroup-root pointing at a missing directory: one log
#      line, jobs run contained by their session as before
#   9. the v1 layout (a root with only v1 hierarchies, bind-mounted), the
#      same with --cgroup-v2-mount (mxqd mounts cgroup2: hybrid) and the v2
#      layout (a cgroup2 tree as the root): a daemonised child dies with its
#      job, a memory hog is KILLED, also one that daemonised itself (on
#      the v2 root without a memory controller: by polling the cgroup)
#  10. a job of a real user (useradd, removed on every exit path) cannot
#      leave its cgroup: writing its pid into its parent's or the root's
#      cgroup.procs (every hierarchy, also from a user namespace), making
#      a sub-cgroup or raising its memory limit all fail; its callback is
#      held the same way; a daemonised child that ignores SIGTERM dies
#      when the job is cancelled, and when its reaper is killed and the
#      job is given up as UNKNOWN (cgroup and tmpdir removed too)
#  11. a job's /dev/shm is a tmpfs of its own: what it writes there is
#      gone with the job; with --shared-dev-shm it is the host's
#  12. with --tmpdir outside /tmp, a real user's job has its TMPDIR as /tmp
#      and /var/tmp: its files there are not on the host while it runs,
#      not seen by another user's job beside it, gone after it; it cannot
#      unmount them (also not in a user namespace); a job with its workdir
#      in /tmp keeps the host's; --shared-tmp keeps the host's for all
#
# Daemonised children write their pid into a file first; they are
# "alive" while /proc/PID/cmdline still names the test's marker.

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

W=$MXQ_TEST_DIR/work
mkdir -p "$W"
H=cg16$(mxq__random_hex 3)
H2=${H}b

if [ "$(id -u)" != 0 ]; then
	skip "cgroup containment needs root (mxqd runs jobs in cgroups only as root)"
	tap_done
	exit 0
fi

# Processes this test started that may survive a failure: every pid file.
kill_marked() {
	for f in "$W"/*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		case $p in ''|*[!0-9]*|0|1) continue ;; esac
		alive "$p" && kill -KILL "$p" 2>/dev/null
	done
}
# The parent cgroup in the unified (main) hierarchy of daemon HOST.
cg_base_of() {
	sed -n 's/.*cgroups: .* jobs in \([^ ]*\)\/job-ID.*/\1/p' "$(mxqd_dir "$1")/mxqd.log" 2>/dev/null
}
U=mxqt16u
V=mxqt16v
remove_user() {
	for _u in "$U" "$V"; do
		getent passwd "$_u" >/dev/null && userdel "$_u" 2>/dev/null
		getent group "$_u" >/dev/null && groupdel "$_u" 2>/dev/null
	done
	return 0
}
UW=
# section 12: a root-owned directory outside /tmp and /var/tmp
B=
mxq_test_cleanup_hook() {
	[ -d "/sys/fs/cgroup/freezer/mxqt-$H" ] && echo THAWED >"/sys/fs/cgroup/freezer/mxqt-$H/freezer.state"
	mxqd_cleanup
	kill_marked
	rm -f /dev/shm/"$H"-shm.*
	[ -n "$UW" ] && for f in "$UW"/*.pid; do
		[ -f "$f" ] && kill -KILL "$(cat "$f")" 2>/dev/null
	done
	remove_user
	[ -n "$UW" ] && rm -rf "$UW"
	rm -f /tmp/"mxqt16-$H"-* /var/tmp/"mxqt16-$H"-*
	# every daemon's parent cgroup of this test, in whichever hierarchy
	for b in $(find /sys/fs/cgroup "$MXQ_TEST_DIR" -maxdepth 6 -type d -name "mxqd-$H*" 2>/dev/null); do
		for d in "$b"/*/; do
			[ -d "$d" ] || continue
			[ -f "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null
			for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
			sleep 0.2
			rmdir "$d" 2>/dev/null
		done
		rmdir "$b" 2>/dev/null
	done
	for m in $(awk -v d="$MXQ_TEST_DIR" -v b="${B:-/nonexistent}" \
		'index($2, d) == 1 || index($2, b) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rmdir "/sys/fs/cgroup/freezer/mxqt-$H" 2>/dev/null
	[ -n "$B" ] && rm -rf "$B"
}

# alive PID: the process runs and carries our marker in its command line
alive() {
	{ tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | grep -q "mxq16marker"
}
pid_of() {
	cat "$W/$1.pid" 2>/dev/null
}
gone() {
	_p=$(pid_of "$1")
	[ -n "$_p" ] && ! alive "$_p"
}

# The cgroup root the daemons use: where the machine has v1 controllers
# (hybrid or v1 machines), a private one with its v1 freezer, cpuacct and
# memory bind-mounted and a cgroup2 tree mounted beside them, so the test
# sees the hybrid layout whether or not the machine mounts cgroup2
# itself; on a pure v2 machine the machine's root.
CG=/sys/fs/cgroup
if [ -e /sys/fs/cgroup/memory/tasks ]; then
	CG=$MXQ_TEST_DIR/cgroot
	for c in freezer cpuacct memory; do
		mkdir -p "$CG/$c" && mount --bind "/sys/fs/cgroup/$c" "$CG/$c" ||
			{ not_ok "bind-mount the v1 $c hierarchy"; tap_done; exit 1; }
	done
	mkdir -p "$CG/unified" && mount -t cgroup2 none "$CG/unified" ||
		{ not_ok "mount a cgroup2 tree"; tap_done; exit 1; }
fi

# Shell code for a job: start a daemonised child (setsid -f) named
# mxq16marker that writes its pid to $W/$1.pid and sleeps long, wait for
# the pid file, then run $2.
daemonising_job() {
	printf "setsid -f perl -e '%s' %s/%s.pid </dev/null >/dev/null 2>&1; " \
		'open(F, ">", $ARGV[0]); print F "$$\n"; close(F); $0 = "mxq16marker"; sleep 1000' \
		"$W" "$1"
	printf 'while [ ! -s %s/%s.pid ]; do sleep 0.05; done; %s' "$W" "$1" "$2"
}

# ------------------------------------------------- 1. layout, membership

section "1. layout and membership"
check "start mxqd $H (4 slots, --runtime-scale 0.05, --callback-timeout 3)" \
	mxqd_start "$H" --cgroup-root "$CG" --slots 4 --memory 4G --runtime-scale 0.05 --callback-timeout 3 \
	--kill-grace 1
log=$(mxqd_dir "$H")/mxqd.log
is "the cgroup layout is logged once" "$(grep -c 'cgroups: ' "$log")" 1
layout_line=$(grep 'cgroups: ' "$log")
echo "# $layout_line"
cgdir=$(cg_base_of "$H")
cgname=${cgdir##*/}
check "the layout names where the jobs go: $cgname (host, daemon, spool hash)" \
	sh -c "printf '%s\n' '$cgname' | grep -Eqx 'mxqd-$H@main\.[0-9a-f]{8}'"
contains "... below it job-ID" "$layout_line" "/$cgname/job-ID"

# The parent cgroups of daemons on one machine never collide: host "N-p"
# with daemon "q" and host "N" with daemon "p-q" (both were mxqd-N-p-q),
# else one would take the other's job cgroups for its own leftovers.
Hn=${H}n
check "start mxqd $Hn-p --daemon-name q" mxqd_start "$Hn-p" --cgroup-root "$CG" --daemon-name q \
	--slots 1 --memory 1G
check "start mxqd $Hn --daemon-name p-q" mxqd_start "$Hn" --cgroup-root "$CG" --daemon-name p-q \
	--slots 1 --memory 1G
b1=$(cg_base_of "$Hn-p") b2=$(cg_base_of "$Hn")
echo "# parents: $b1 and $b2"
check "their parent cgroups differ" test -n "$b1" -a -n "$b2" -a "$b1" != "$b2"
mxqd_stop "$Hn-p" TERM 20
mxqd_stop "$Hn" TERM 20
mkdir -p "$MXQ_TEST_DIR/bad-name"
check "a daemon name with a '/' is refused in one line" sh -c "timeout 10 '$mxqd_bin' \
	--daemon-name a/b --hostname $Hn --spool '$MXQ_TEST_DIR/bad-name' --tmpdir '$MXQ_TEST_DIR/bad-name' \
	-M '$MXQ_MYSQL_DEFAULT_FILE' 2>&1 >/dev/null | grep -q \"^mxqd: --daemon-name: 'a/b' is not a host name\""

j_end=$(submit -N cg-end -m 64M -t 1h -w "$W" sh -c "$(daemonising_job d_end 'sleep 1')")
wait_until 20 test -s "$W/d_end.pid" || not_ok "the daemonised child of job $j_end started"
p=$(pid_of d_end)
contains "the daemonised child is in the job's cgroup" \
	"$(cat "/proc/$p/cgroup" 2>/dev/null)" "/$cgname/job-$j_end"

# ------------------------------------------- 2. end, cancel, kill

section "2. nothing survives a job"
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_end" ||
	not_ok "job $j_end FINISHED"
check "after FINISHED the daemonised child is gone" wait_until 10 gone d_end
cgdir=$(cg_base_of "$H")
check "the finished job's cgroup is removed" wait_until 10 test ! -e "$cgdir/job-$j_end"

j_canc=$(submit -N cg-canc -m 64M -t 1h -w "$W" sh -c "$(daemonising_job d_canc 'sleep 1000')")
wait_until 20 test -s "$W/d_canc.pid" || not_ok "the daemonised child of job $j_canc started"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_canc" >/dev/null
wait_for 20 "SELECT job_status = 990 FROM mxq_job WHERE job_id = $j_canc" ||
	not_ok "job $j_canc CANCELLED"
check "after CANCELLED the daemonised child is gone" wait_until 10 gone d_canc

# -t 1m x 0.05 = 3 s
j_kill=$(submit -N cg-kill -m 64M -t 1m -w "$W" sh -c "$(daemonising_job d_kill 'sleep 1000')")
wait_for 30 "SELECT job_status = 400 FROM mxq_job WHERE job_id = $j_kill" ||
	not_ok "job $j_kill KILLED at its runtime limit"
is "job over its runtime: KILLED" "$(status_of "$j_kill")" 400
check "after KILLED the daemonised child is gone" wait_until 10 gone d_kill
check "no job cgroups left" wait_until 10 sh -c "! ls -d '$cgdir'/job-* 2>/dev/null"

# a job cgroup left by an earlier life of this node (its mxqd killed, the
# same job id again with a new database): frozen, it would hold a job born
# into it for ever; mxqd starts the job in a fresh one
j_next=$(mxq_sql "SELECT MAX(job_id) + 1 FROM mxq_job")
if mkdir "$cgdir/job-$j_next" 2>/dev/null && [ -e "$cgdir/job-$j_next/cgroup.freeze" ] &&
	echo 1 >"$cgdir/job-$j_next/cgroup.freeze"; then
	j_left=$(submit -N cg-left -m 64M -t 1h -w "$W" sh -c 'exit 0')
	is "the leftover's job id is the next one" "$j_left" "$j_next"
	check "a job whose id has a frozen leftover cgroup runs and finishes" \
		wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_left"
	check "and its cgroup is removed after it" wait_until 10 test ! -e "$cgdir/job-$j_left"
else
	rmdir "$cgdir/job-$j_next" 2>/dev/null
	not_ok "a frozen leftover job cgroup could not be made in $cgdir"
fi

# A job cgroup of the next job id that still holds a process: left by an
# earlier life of this mxqd (crashed, or the process outlived the kill).
# The parent cgroup is this mxqd's alone, so the leftover is provably its
# own: it is killed and the job runs in a fresh cgroup, never without one
# (its daemonised child dies with it). One that cannot be killed (here:
# frozen by a v1 freezer, as a process stuck in the kernel would be)
# refuses the job with a reason instead: nothing of it runs.
cat >"$W/in_cgroup.sh" <<'EOF'
#!/bin/sh
# in_cgroup.sh DIR PIDFILE [FREEZER]: a marked sleeper in cgroup DIR (and FREEZER)
echo $$ >"$1/cgroup.procs" || exit 1
[ -z "$3" ] || echo $$ >"$3/tasks" || exit 1
exec perl -e 'open(F, ">", $ARGV[0]); print F "$$\n"; close(F); $0 = "mxq16marker"; sleep 1000' "$2"
EOF
j_next=$(mxq_sql "SELECT MAX(job_id) + 1 FROM mxq_job")
mkdir "$cgdir/job-$j_next" &&
	setsid -f sh "$W/in_cgroup.sh" "$cgdir/job-$j_next" "$W/left.pid" </dev/null >/dev/null 2>&1
wait_until 10 test -s "$W/left.pid" || not_ok "a process runs in the leftover cgroup job-$j_next"
contains "a leftover process holds cgroup job-$j_next" \
	"$(cat "/proc/$(pid_of left)/cgroup" 2>/dev/null)" "/job-$j_next"
j_busy=$(submit -N cg-busy -m 64M -t 1h -w "$W" sh -c "$(daemonising_job d_busy 'sleep 1')")
is "the leftover's job id is the next one" "$j_busy" "$j_next"
wait_until 20 test -s "$W/d_busy.pid" || not_ok "the daemonised child of job $j_busy started"
contains "the job's daemonised child is in a cgroup of the job's own" \
	"$(cat "/proc/$(pid_of d_busy)/cgroup" 2>/dev/null)" "/job-$j_busy"
check "the leftover process is killed" wait_until 10 gone left
contains "the log names what was killed" "$(grep "job $j_busy: " "$log")" \
	"held 1 process(es) of an earlier run"
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_busy" ||
	not_ok "job $j_busy FINISHED"
check "after FINISHED its daemonised child is gone" wait_until 10 gone d_busy
check "its cgroup is removed" wait_until 10 test ! -e "$cgdir/job-$j_busy"

FRZ=/sys/fs/cgroup/freezer/mxqt-$H
if [ -e /sys/fs/cgroup/freezer/tasks ] && mkdir "$FRZ"; then
	j_next=$(mxq_sql "SELECT MAX(job_id) + 1 FROM mxq_job")
	mkdir "$cgdir/job-$j_next" && setsid -f sh "$W/in_cgroup.sh" "$cgdir/job-$j_next" \
		"$W/stuck.pid" "$FRZ" </dev/null >/dev/null 2>&1
	wait_until 10 test -s "$W/stuck.pid" || not_ok "a process runs in the leftover cgroup job-$j_next"
	echo FROZEN >"$FRZ/freezer.state"
	j_stuck=$(submit -N cg-stuck -m 64M -t 1h -w "$W" sh -c 'touch stuck.ran')
	is "the stuck leftover's job id is the next one" "$j_stuck" "$j_next"
	wait_for 20 "SELECT job_status >= 400 FROM mxq_job WHERE job_id = $j_stuck" ||
		not_ok "job $j_stuck ended"
	is "a job whose leftover cgroup cannot be emptied: FAILED" "$(status_of "$j_stuck")" 750
	contains "its reason names the cgroup and why" \
		"$(mxq_sql "SELECT job_reason FROM mxq_job WHERE job_id = $j_stuck")" \
		"refused: its cgroup $cgdir/job-$j_stuck holds 1 process(es) of an earlier run that survive SIGKILL"
	check "nothing of it ran" test ! -e "$W/stuck.ran"
	echo THAWED >"$FRZ/freezer.state"
	check "the thawed leftover dies (the kill was pending)" wait_until 10 gone stuck
	rmdir "$cgdir/job-$j_stuck" "$FRZ" 2>/dev/null
else
	skip "no v1 freezer to hold a leftover process that survives SIGKILL"
fi

# ---------------------------------------------------------- 3. memory

section "3. memory limit and high-water mark"
# shellcheck disable=SC2016
hog='setsid -f perl -e '\''open(F, ">", "'"$W"'/d_mem$ARGV[1].pid"); print F "$$\n"; close F; $0 = "perl mxq16marker"; my $x = "x" x ($ARGV[0] << 20); sleep 30'\'
j_mem=$(submit -N cg-mem -m 100M -t 1h -w "$W" sh -c "$hog 300 a </dev/null >/dev/null 2>&1; sleep 30")
wait_for 30 "SELECT job_status = 400 FROM mxq_job WHERE job_id = $j_mem" ||
	not_ok "job $j_mem ends KILLED"
is "a daemonised child over -m 100M (300 MB): job KILLED" "$(status_of "$j_mem")" 400
contains "the log names the memory limit" "$(grep "job $j_mem " "$log")" "over its memory limit"
rss=$(mxq_sql "SELECT stats_max_sumrss FROM mxq_job WHERE job_id = $j_mem")
echo "# KILLED job: stats_max_sumrss $rss KiB (limit 102400)"
check "its high-water mark is near the limit ($rss KiB)" \
	awk -v r="$rss" 'BEGIN { exit !(r > 90000 && r <= 102400 + 1024) }'

# shellcheck disable=SC2016
j_hw=$(submit -N cg-hw -m 600M -t 1h -w "$W" sh -c \
	"setsid -f perl -e 'my \$x = \"\"; vec(\$x, (200 << 20) - 1, 8) = 1; open(F, \">\", \"$W/hw.done\"); close F; sleep 2' </dev/null >/dev/null 2>&1;
	 while [ ! -e $W/hw.done ]; do sleep 0.05; done")
wait_for 30 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_hw" ||
	not_ok "job $j_hw FINISHED"
rss=$(mxq_sql "SELECT stats_max_sumrss FROM mxq_job WHERE job_id = $j_hw")
echo "# a daemonised child used 200 MB: stats_max_sumrss $rss KiB"
check "the high-water mark includes the daemonised child's 200 MB ($rss KiB)" \
	awk -v r="$rss" 'BEGIN { exit !(r >= 200 * 1024 && r < 600 * 1024) }'

# -------------------------------------------------------- 4. callback

section "4. callback timeout covers daemonised children"
{
	echo '#!/bin/sh'
	daemonising_job d_cb 'exec sleep 1000'
	echo
} >"$W/cb.sh"
chmod 755 "$W/cb.sh"
j_cb=$(submit -N cg-cb -m 64M -t 1h -w "$W" --callback "$W/cb.sh" true)
wait_until 20 test -s "$W/d_cb.pid" || not_ok "the callback's daemonised child started"
contains "the callback's daemonised child is in the callback's cgroup" \
	"$(cat "/proc/$(pid_of d_cb)/cgroup" 2>/dev/null)" "/$cgname/callback-$j_cb"
check "at the callback timeout (3 s) its daemonised child is killed" wait_until 15 gone d_cb
check "the callback's cgroup is removed" wait_until 10 test ! -e "$cgdir/callback-$j_cb"
# a leftover callback cgroup of the next job id, holding a process: the
# callback runs in a fresh one, the leftover is killed
j_next=$(mxq_sql "SELECT MAX(job_id) + 1 FROM mxq_job")
printf '#!/bin/sh\ncat /proc/self/cgroup > %s/cb2.cgroup\n' "$W" >"$W/cb2.sh"
chmod 755 "$W/cb2.sh"
mkdir "$cgdir/callback-$j_next" && setsid -f sh "$W/in_cgroup.sh" "$cgdir/callback-$j_next" \
	"$W/cbleft.pid" </dev/null >/dev/null 2>&1
wait_until 10 test -s "$W/cbleft.pid" || not_ok "a process runs in the leftover cgroup callback-$j_next"
j_cb2=$(submit -N cg-cb2 -m 64M -t 1h -w "$W" --callback "$W/cb2.sh" true)
is "the leftover callback cgroup's job id is the next one" "$j_cb2" "$j_next"
check "the callback ran" wait_until 20 test -s "$W/cb2.cgroup"
contains "in a callback cgroup of its own" "$(cat "$W/cb2.cgroup" 2>/dev/null)" \
	"/$cgname/callback-$j_cb2"
check "the leftover process in it is killed" wait_until 10 gone cbleft
check "and the callback's cgroup is removed" wait_until 10 test ! -e "$cgdir/callback-$j_cb2"
# three processes of 120 MB each, every one within RLIMIT_AS: together
# over the callback cgroup's 256 MiB, so not all three live to the end
# (within the 3 s --callback-timeout of this mxqd)
cat >"$W/cb3.sh" <<EOF
#!/bin/sh
for i in 1 2 3; do
	python3 -c 'import sys, time; b = b"x" * (120 << 20); time.sleep(1);
open(sys.argv[1], "w").write("end")' "$W/cb3.end.\$i" &
done
wait
echo done >"$W/cb3.done"
EOF
chmod 755 "$W/cb3.sh"
j_cb3=$(submit -N cg-cb3 -m 64M -t 1h -w "$W" --callback "$W/cb3.sh" true)
check "the memory-hungry callback ran" wait_until 30 test -s "$W/cb3.done"
ends=$(ls "$W"/cb3.end.* 2>/dev/null | wc -l | tr -d ' ')
if [ "$ends" -lt 3 ]; then
	ok "360 MB in a callback's processes: not all of them live ($ends of 3 did)"
else
	not_ok "360 MB in a callback's processes: not all of them live ($ends of 3 did)"
fi

# ---------------------------------------------------------- 5. tmpdir

section "5. tmpdir quota"
node_tmp=$(mxqd_dir "$H")/tmp
# shellcheck disable=SC2016
j_tmp=$(submit -N cg-tmp -m 2G --tmpdir 1 -t 1h -w "$W" sh -c \
	'stat -f -c %T "$TMPDIR" > tmp.fstype; stat -c %d "$TMPDIR" "$TMPDIR/.." > tmp.dev;
	 dd if=/dev/zero of="$TMPDIR/fill" bs=1M count=1100 2> tmp.dd; df -Pk "$TMPDIR" | tail -n 1 > tmp.df;
	 exit 0')
wait_for 60 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_tmp" ||
	not_ok "job $j_tmp FINISHED"
is "the job's tmpdir is a tmpfs" "$(cat "$W/tmp.fstype" 2>/dev/null)" tmpfs
contains "writing 1100 MiB into a 1 GiB tmpdir: ENOSPC" "$(cat "$W/tmp.dd" 2>/dev/null)" \
	"No space left on device"
echo "# job tmpdir: $(cat "$W/tmp.df"); devices of it and of the node's tmpdir: $(cat "$W/tmp.dev" | tr '\n' ' ')"
check "the data went to a filesystem of its own, not the node's tmpdir" \
	awk '{ d[NR] = $1 } END { exit !(NR == 2 && d[1] != d[2]) }' "$W/tmp.dev"
contains "... which is 1 GiB and full" "$(cat "$W/tmp.df")" " 1048576 1048576 "
is "the job's tmpfs is unmounted" \
	"$(awk -v d="$node_tmp" 'index($2, d) == 1' /proc/mounts)" ""
is "the job's tmpdir is removed" "$(ls "$node_tmp")" ""

# ----------------------------------------------------- 6. re-adoption

section "6. restart and re-adoption"
j_re=$(submit -N cg-re -m 64M -t 1h -w "$W" sh -c "$(daemonising_job d_re 'sleep 1000')")
wait_until 20 test -s "$W/d_re.pid" || not_ok "the daemonised child of job $j_re started"
mxqd_stop "$H" QUIT 20
is "mxqd exits at SIGQUIT" "$mxqd_rc" 0
check "the job's cgroup is kept" test -d "$cgdir/job-$j_re"
check "its daemonised child still runs" alive "$(pid_of d_re)"
check "restart mxqd $H" mxqd_start "$H" --cgroup-root "$CG" --slots 4 --memory 4G --runtime-scale 0.05 \
	--callback-timeout 3 --kill-grace 1
check "the job is re-adopted with its cgroup" \
	wait_until 10 grep -q "job $j_re: re-adopted (.*cgroup $cgdir/job-$j_re)" "$log"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_re" >/dev/null
wait_for 20 "SELECT job_status = 990 FROM mxq_job WHERE job_id = $j_re" ||
	not_ok "re-adopted job $j_re CANCELLED"
check "the re-adopted job's daemonised child is gone" wait_until 10 gone d_re
check "its cgroup is removed" wait_until 10 test ! -e "$cgdir/job-$j_re"
mxqd_stop "$H" TERM 20

# ---------------------------------------------- 7. energy split from cgroups

section "7. energy split by cgroup CPU"
B=$MXQ_SRC_DIR/tests/lib/burn.pl
check "start mxqd $H2 (2 slots, model energy source, --memory-limit-hard 200)" \
	mxqd_start "$H2" --cgroup-root "$CG" --slots 2 --memory 4G --memory-limit-hard 200 \
	--energy-sources model --energy-model 10:20 --energy-interval 2 --debug
# shellcheck disable=SC2016
j_soft=$(submit -N cg-soft -m 100M -t 10m -w "$W" \
	perl -e 'my $x = ""; vec($x, (150 << 20) - 1, 8) = 1; sleep 1')
wait_for 30 "SELECT job_status >= 400 FROM mxq_job WHERE job_id = $j_soft" ||
	not_ok "job $j_soft ended"
rss=$(mxq_sql "SELECT stats_max_sumrss FROM mxq_job WHERE job_id = $j_soft")
is "150 MB in a -m 100M job under --memory-limit-hard 200: FINISHED ($rss KiB)" \
	"$(status_of "$j_soft")" 1000
# Burning from the start: the modelled source charges busy slots, so a
# wait before the burn would be active energy split by start-up CPU noise
# (a few ms) that the burners' reports cannot resolve.
t0=$(date +%s)
t1=$(( t0 + 15 ))
# the busy job burns in a daemonised child; its main process only waits
ja=$(submit -N cg-busy -m 64M -t 10m -w "$W" sh -c \
	"setsid -f sh -c 'perl $B $t0 $t1 0.45 $W/burn.a; touch $W/burn.done' </dev/null >/dev/null 2>&1;
	 while [ ! -e $W/burn.done ]; do sleep 1; done")
jb=$(submit -N cg-third -m 64M -t 10m -w "$W" perl "$B" $t0 $t1 0.15 "$W/burn.b")
wait_for 60 "SELECT COUNT(*) = 2 FROM mxq_power_job WHERE job_id IN ($ja, $jb) AND date_end IS NOT NULL" ||
	not_ok "both energy rows written"
row=$(mxq_sql "SELECT a.active_energy_j, b.active_energy_j, a.active_energy_j / b.active_energy_j
	FROM mxq_power_job a, mxq_power_job b WHERE a.job_id = $ja AND b.job_id = $jb")
set -- $row
cpu_of() {
	mxq_sql "SELECT stats_utime_sec + stats_stime_sec + (stats_utime_usec + stats_stime_usec) / 1e6
		FROM mxq_job WHERE job_id = $1"
}
cpu_a=$(cpu_of "$ja")
cpu_b=$(cpu_of "$jb")
# the burners' own last report: "EPOCH CPU_SECONDS"
burn_a=$(tail -n 1 "$W/burn.a" 2>/dev/null | cut -d' ' -f2)
burn_b=$(tail -n 1 "$W/burn.b" 2>/dev/null | cut -d' ' -f2)
cpu=$(awk -v a="$cpu_a" -v b="$cpu_b" 'BEGIN { printf "%.4f", (b > 0) ? a / b : 0 }')
echo "# active energy: busy job $1 J, third job $2 J, ratio $3; job CPU $cpu_a s / $cpu_b s" \
	"(the burners' own: $burn_a s / $burn_b s), ratio $cpu"
# a session scan would see only the waiting loop of the busy job (~0 s)
check "the busy job's CPU time includes its daemonised burner ($cpu_a s, burner $burn_a s)" \
	awk -v j="$cpu_a" -v b="$burn_a" 'BEGIN { exit !(b > 1 && j >= b * 0.98) }'
# As in test_energy: the right split follows when each job used its CPU
# (load makes a burner fall behind and catch up), so the truth is computed
# interval by interval from the burners' own reports. The modelled source's
# interval energy is mxqd's by definition: the split is what is checked.
# (The busy job's waiting loop adds about 1 ms a second to its cgroup.)
set -- "$1" "$2" $(perl "$MXQ_SRC_DIR/tests/lib/split_truth.pl" --idle 10 \
	"$(mxqd_dir "$H2")/mxqd.log" "$ja=$W/burn.a" "$jb=$W/burn.b" | cut -d' ' -f2)
echo "# split by the burners' CPU, interval by interval: busy job $3 J, third job $4 J"
check "the busy job's active energy is its cgroup CPU share, within 2 % ($1 J, $3 J)" \
	within "$1" "$3" 2
check "the third job's active energy is its cgroup CPU share, within 2 % ($2 J, $4 J)" \
	within "$2" "$4" 2
mxqd_stop "$H2" TERM 20

# -------------------------------------------------------- 8. fallback

section "8. fallback without a cgroup tree"
H3=${H}c
check "start mxqd $H3 --cgroup-root MISSING" mxqd_start "$H3" --slots 2 --memory 4G \
	--cgroup-root "$MXQ_TEST_DIR/no-cgroups"
log3=$(mxqd_dir "$H3")/mxqd.log
contains "one clear log line" "$(grep 'cgroups: ' "$log3")" "no writable cgroup tree under"
is "... exactly one" "$(grep -c 'cgroups: ' "$log3")" 1
# shellcheck disable=SC2016
j_fb=$(submit -N cg-fb -m 64M -t 1h -w "$W" sh -c 'cat /proc/self/cgroup > fb.cgroup; sleep 0.5')
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_fb" ||
	not_ok "job $j_fb FINISHED"
is "a job runs without cgroups: FINISHED" "$(status_of "$j_fb")" 1000
not_contains "it is not in a job cgroup" "$(cat "$W/fb.cgroup")" "/job-$j_fb"
j_fbm=$(submit -N cg-fbm -m 100M -t 1h -w "$W" perl -e 'my $x = "x" x (300 << 20); sleep 5')
wait_for 30 "SELECT job_status = 400 FROM mxq_job WHERE job_id = $j_fbm" ||
	not_ok "job $j_fbm KILLED"
is "the polled memory limit still kills (KILLED)" "$(status_of "$j_fbm")" 400
mxqd_stop "$H3" TERM 20

# ------------------------------------- 9. the other layouts, by bind mounts

# A cgroup root with only the v1 hierarchies (freezer, cpuacct, memory)
# is what a machine without cgroup2 has; one with only the unified tree
# mounted at its top is the v2 layout (here without the memory controller,
# which this machine binds to v1: limits then fall back to polling).
section "9. v1 and v2 layouts"
layout_round() {	# NAME ROOT LOGTEXT [OPTIONS]: a daemonised child dies with its job, a hog is KILLED
	_h=${H}$1
	check "start mxqd $_h --cgroup-root ($1)" mxqd_start "$_h" --slots 2 --memory 4G \
		--cgroup-root "$2" $4
	contains "$1: the layout line" "$(grep 'cgroups: ' "$(mxqd_dir "$_h")/mxqd.log")" "$3"
	_j=$(submit -N "cg-$1" -m 64M -t 1h -w "$W" sh -c "$(daemonising_job "d_$1" 'sleep 0.5')")
	wait_for 30 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $_j" ||
		not_ok "$1: job $_j FINISHED"
	check "$1: the daemonised child is gone after FINISHED" wait_until 10 gone "d_$1"
	_j=$(submit -N "cg-$1m" -m 100M -t 1h -w "$W" perl -e 'my $x = "x" x (300 << 20); sleep 5')
	wait_for 30 "SELECT job_status = 400 FROM mxq_job WHERE job_id = $_j" ||
		not_ok "$1: job $_j KILLED"
	is "$1: over its memory: KILLED" "$(status_of "$_j")" 400
	# the same memory in a daemonised child: the kernel's limit, or the
	# polled one, counts every process in the cgroup, not the session
	_j=$(submit -N "cg-$1d" -m 100M -t 1h -w "$W" sh -c "$hog 300 $1 </dev/null >/dev/null 2>&1; sleep 30")
	wait_for 30 "SELECT job_status = 400 FROM mxq_job WHERE job_id = $_j" ||
		not_ok "$1: job $_j KILLED"
	is "$1: over its memory in a daemonised child: KILLED" "$(status_of "$_j")" 400
	check "$1: the daemonised hog is gone" wait_until 10 gone "d_mem$1"
	mxqd_stop "$_h" TERM 20
}
if [ "$CG" != /sys/fs/cgroup ]; then
	V1=$MXQ_TEST_DIR/cgv1
	for c in freezer cpuacct memory; do
		mkdir -p "$V1/$c" && mount --bind "/sys/fs/cgroup/$c" "$V1/$c"
	done
	layout_round v1 "$V1" "freezer yes, cpuacct yes, memory yes"
	# the same root, with mxqd mounting a cgroup2 tree itself: hybrid
	layout_round v2m "$V1" "cgroup hybrid layout at $V1 and $MXQ_TEST_DIR/v2m" \
		"--cgroup-v2-mount $MXQ_TEST_DIR/v2m"
	V2=$MXQ_TEST_DIR/cgv2
	mkdir -p "$V2" && mount -t cgroup2 none "$V2"
	layout_round v2 "$V2" "cgroup v2 at $V2"
fi

# ------------------------------------------- 10. a real user's job

section "10. a real user's job stays in its cgroup"
remove_user    # a leftover of a run that was killed
UW=$(mktemp -d "${TMPDIR:-/tmp}/mxqt16.XXXXXX") && chmod 755 "$UW"
useradd -M -U -s /bin/sh "$U"
check "test user $U exists" getent passwd "$U"
uid_u=$(id -u "$U") gid_u=$(id -g "$U")
chown "$U:$gid_u" "$UW"
# the attacks, as the user: every result on a line of $1
cat >"$UW/escape.sh" <<'EOF'
#!/bin/sh
out=$1
v2=$(sed -n 's/^0:://p' /proc/self/cgroup)
mem=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
try() {	# WHAT CMD...
	_w=$1; shift
	if "$@" 2>/dev/null; then echo "ESCAPED $_w"; else echo "refused $_w"; fi
}
{
	for d in /sys/fs/cgroup/unified /sys/fs/cgroup/unified"${v2%/*}" \
		/sys/fs/cgroup/memory /sys/fs/cgroup/memory"${mem%/*}"; do
		[ -e "$d/cgroup.procs" ] && try "move to $d" sh -c "echo \$\$ > '$d/cgroup.procs'"
	done
	try "mkdir in $v2" mkdir "/sys/fs/cgroup/unified$v2/sub"
	[ -e "/sys/fs/cgroup/memory$mem/memory.limit_in_bytes" ] &&
		try "raise v1 memory limit" sh -c "echo -1 > '/sys/fs/cgroup/memory$mem/memory.limit_in_bytes'"
	[ -e "/sys/fs/cgroup/unified$v2/memory.max" ] &&
		try "raise v2 memory.max" sh -c "echo max > '/sys/fs/cgroup/unified$v2/memory.max'"
	if unshare -Ur true 2>/dev/null; then
		try "move from a user namespace" unshare -Ur sh -c \
			"echo \$\$ > '/sys/fs/cgroup/unified${v2%/*}/cgroup.procs'"
	fi
	echo "cgroup $(cat /proc/self/cgroup | grep -c -e '/job-' -e '/callback-') of $(grep -c -e '^0::' -e ':memory:' /proc/self/cgroup)"
} >"$out.tmp" && mv "$out.tmp" "$out"
EOF
# a daemonised child that ignores SIGTERM, then wait
cat >"$UW/stubborn.sh" <<'EOF'
#!/bin/sh
setsid -f perl -e '$SIG{TERM} = "IGNORE"; open(F, ">", $ARGV[0]); print F "$$\n"; close(F);
	$0 = "mxq16marker"; sleep 1000' "$1" </dev/null >/dev/null 2>&1
while [ ! -s "$1" ]; do sleep 0.05; done
sleep 1000
EOF
printf '#!/bin/sh\nexec %s/escape.sh %s/cb.out\n' "$UW" "$UW" >"$UW/cb.sh"
chmod 755 "$UW/escape.sh" "$UW/stubborn.sh" "$UW/cb.sh"
# as_job USER WORKDIR NAME MXQSUB-ARGS...: queue as root for no host, then
# hand the group to USER (as a database writer could) and release it; with
# CALLBACK set, the job gets that callback on the way (mxqsub, run as root,
# would refuse one in USER's directory: the check at submit is the caller's)
as_job() {
	_u=$1 _w=$2 _n=$3
	shift 3
	_j=$(submit -N "$_n" -w "$_w" --whitelist as-user.invalid "$@") || return 1
	if [ -n "${CALLBACK:-}" ]; then
		mxq_sql "UPDATE mxq_job SET job_callback = '$CALLBACK' WHERE job_id = $_j" || return 1
	fi
	mxq_sql "UPDATE mxq_group SET user_uid = $(id -u "$_u"), user_name = '$_u',
		user_gid = $(id -g "$_u"), group_whitelist = ''
		WHERE group_id = (SELECT group_id FROM mxq_job WHERE job_id = $_j)" || return 1
	echo "$_j"
}
as_user_job() {
	as_job "$U" "$UW" "$@"
}
H4=${H}u
mxqd_root_jobs=
check "start mxqd $H4 (no --allow-root-jobs)" mxqd_start "$H4" --cgroup-root "$CG" --slots 2 \
	--memory 4G --kill-grace 1 --callback-timeout 5
mxqd_root_jobs=--allow-root-jobs
cgdir_u=$(sed -n 's/.*cgroups: .* jobs in \([^ ]*\)\/job-ID.*/\1/p' "$(mxqd_dir "$H4")/mxqd.log")
j_esc=$(CALLBACK=$UW/cb.sh as_user_job cg-user -m 64M -t 1h "$UW/escape.sh" "$UW/job.out")
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_esc" ||
	not_ok "the user's job $j_esc FINISHED"
echo "# the job as $U: $(tr '\n' ';' <"$UW/job.out" 2>/dev/null)"
contains "the job ran as $U and tried" "$(cat "$UW/job.out" 2>/dev/null)" "refused move to"
not_contains "no attack of the job worked" "$(cat "$UW/job.out" 2>/dev/null)" "ESCAPED"
contains "the job is in its cgroup in both hierarchies at the end" \
	"$(cat "$UW/job.out" 2>/dev/null)" "cgroup 2 of 2"
check "its callback ran" wait_until 10 test -s "$UW/cb.out"
echo "# the callback as $U: $(tr '\n' ';' <"$UW/cb.out" 2>/dev/null)"
not_contains "no attack of the callback worked" "$(cat "$UW/cb.out" 2>/dev/null)" "ESCAPED"
contains "the callback is in its cgroup in both hierarchies at the end" \
	"$(cat "$UW/cb.out" 2>/dev/null)" "cgroup 2 of 2"
j_stub=$(as_user_job cg-user2 -m 64M -t 1h "$UW/stubborn.sh" "$UW/stub.pid")
wait_until 20 test -s "$UW/stub.pid" || not_ok "the stubborn child of job $j_stub started"
sp=$(cat "$UW/stub.pid" 2>/dev/null)
is "the stubborn child runs as $U" "$(stat -c %U "/proc/$sp" 2>/dev/null)" "$U"
"$mxqkill_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" -J "$j_stub" >/dev/null
wait_for 20 "SELECT job_status = 990 FROM mxq_job WHERE job_id = $j_stub" ||
	not_ok "job $j_stub CANCELLED"
check "the SIGTERM-ignoring daemonised child of the cancelled job is gone" \
	wait_until 10 sh -c "! { tr '\\0' ' ' </proc/$sp/cmdline; } 2>/dev/null | grep -q mxq16marker"
# a job whose reaper is gone (killed: a crash, an admin, the OOM killer)
# is given up as UNKNOWN; what it ran must not live on without a reaper
j_orph=$(as_user_job cg-user3 -m 64M -t 1h "$UW/stubborn.sh" "$UW/orph.pid")
wait_until 20 test -s "$UW/orph.pid" || not_ok "the daemonised child of job $j_orph started"
op=$(cat "$UW/orph.pid" 2>/dev/null)
rp=$(cut -d' ' -f1 "$(mxqd_dir "$H4")/spool/$j_orph.pid" 2>/dev/null)
case $rp in ''|*[!0-9]*|0|1) not_ok "the reaper of job $j_orph is in its pid file" ;;
*) kill -KILL "$rp" ;; esac
wait_for 20 "SELECT job_status = 999 FROM mxq_job WHERE job_id = $j_orph" ||
	not_ok "job $j_orph, its reaper killed, UNKNOWN"
check "the processes of a job given up as UNKNOWN are gone" \
	wait_until 10 sh -c "! { tr '\\0' ' ' </proc/$op/cmdline; } 2>/dev/null | grep -q mxq16marker"
check "and its cgroup is removed" wait_until 10 test ! -e "$cgdir_u/job-$j_orph"
check "and its tmpdir" test ! -e "$(mxqd_dir "$H4")/tmp/mxq_job_$j_orph"
mxqd_stop "$H4" TERM 20

# ----------------------------------------------------- 11. /dev/shm

section "11. a job's /dev/shm is its own"
H5=${H}e
# shellcheck disable=SC2016 # $MXQ_JOBID is the job's
shm_job='f=/dev/shm/'"$H"'-shm.$MXQ_JOBID; dd if=/dev/zero of="$f" bs=1M count=20 2>/dev/null &&
	ls /dev/shm | wc -l > shm.$MXQ_JOBID.n; test -s "$f"'
check "start mxqd $H5" mxqd_start "$H5" --cgroup-root "$CG" --slots 2 --memory 4G
j_shm=$(submit -N cg-shm -m 256M -t 1h -w "$W" sh -c "$shm_job")
wait_for 30 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_shm" ||
	not_ok "job $j_shm FINISHED"
is "the job wrote 20 MB into a /dev/shm of its own (nothing else in it)" \
	"$(cat "$W/shm.$j_shm.n" 2>/dev/null)" 1
check "nothing of it is left in the host's /dev/shm" test ! -e "/dev/shm/$H-shm.$j_shm"
mxqd_stop "$H5" TERM 20
check "start mxqd $H5 --shared-dev-shm" mxqd_start "$H5" --cgroup-root "$CG" --slots 2 \
	--memory 4G --shared-dev-shm
j_shm2=$(submit -N cg-shm -m 256M -t 1h -w "$W" sh -c "$shm_job")
wait_for 30 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $j_shm2" ||
	not_ok "job $j_shm2 FINISHED"
check "with --shared-dev-shm the job's file is in the host's /dev/shm" \
	test -s "/dev/shm/$H-shm.$j_shm2"
rm -f "/dev/shm/$H-shm.$j_shm2"
mxqd_stop "$H5" TERM 20

# ------------------------------------------------- 12. /tmp and /var/tmp

# Real users' jobs on an mxqd whose --tmpdir is outside /tmp (as the
# default /var/lib/mxqd/tmp is): what a job writes to /tmp or /var/tmp is
# in its TMPDIR, not on the host, not seen by another user's job running
# beside it, and gone with the job; the job cannot unmount it.
section "12. a job's /tmp and /var/tmp are its own"
H6=${H}t
B=$(mktemp -d /var/lib/mxqt16.XXXXXX) && chmod 755 "$B"
getent passwd "$V" >/dev/null || useradd -M -U -s /bin/sh "$V"
check "second test user $V exists" sh -c "getent passwd $V >/dev/null"
mkdir -p "$B/u" "$B/v" && chown "$U:$(id -g "$U")" "$B/u" && chown "$V:$(id -g "$V")" "$B/v"
# tmpjob.sh NAME OTHER: put NAME into /tmp and /var/tmp, write what this
# job sees (also of OTHER's file) into NAME.seen, wait for NAME.go
cat >"$B/tmpjob.sh" <<'EOF'
#!/bin/sh
n=$1 other=$2
echo "secret of $n" >"/tmp/$n" && echo "secret of $n" >"/var/tmp/$n" || echo "cannot write"
{
	echo "tmp: $(stat -c '%U %a' /tmp)"
	[ /tmp -ef "$TMPDIR" ] && echo "tmp is TMPDIR"
	[ /var/tmp -ef "$TMPDIR" ] && echo "var-tmp is TMPDIR"
	echo "in tmp: $(ls -A /tmp | tr '\n' ' ')"
	if [ -n "$other" ]; then
		if [ -e "/tmp/$other" ] || [ -e "/var/tmp/$other" ]; then echo "sees $other"
		else echo "does not see $other"; fi
	fi
	if umount /tmp 2>/dev/null; then echo "ESCAPED umount"; else echo "refused umount"; fi
	if unshare -Urm true 2>/dev/null; then
		unshare -Urm sh -c 'umount -l /tmp 2>/dev/null && echo "ESCAPED userns umount" ||
			echo "refused userns umount"'
	fi
} >"$n.tmp" && mv "$n.tmp" "$n.seen"
while [ ! -e "$n.go" ]; do sleep 0.1; done
EOF
chmod 755 "$B/tmpjob.sh"
mxqd_root_jobs=
check "start mxqd $H6 --tmpdir $B/tmp (no --allow-root-jobs)" mxqd_start "$H6" --cgroup-root "$CG" \
	--tmpdir "$B/tmp" --slots 2 --memory 4G
mxqd_root_jobs=--allow-root-jobs
fa=mxqt16-$H-a fb=mxqt16-$H-b
ja=$(as_job "$U" "$B/u" cg-tmp-a -m 64M -t 1h "$B/tmpjob.sh" "$fa")
check "the job of $U has written its files" wait_until 20 test -e "$B/u/$fa.seen"
echo "# job $ja as $U: $(tr '\n' ';' <"$B/u/$fa.seen" 2>/dev/null)"
not_contains "it could write /tmp and /var/tmp" "$(cat "$B/u/$fa.seen" 2>/dev/null)" "cannot write"
check "while it runs, its /tmp file is not in the host's /tmp" test ! -e "/tmp/$fa"
check "... nor its /var/tmp file in the host's /var/tmp" test ! -e "/var/tmp/$fa"
check "... they are in its tmpdir" test -s "$B/tmp/mxq_job_$ja/$fa"
contains "its /tmp is its TMPDIR, the user's, mode 0700" "$(cat "$B/u/$fa.seen" 2>/dev/null)" \
	"tmp: $U 700"
contains "... as is its /var/tmp" "$(cat "$B/u/$fa.seen" 2>/dev/null)" "var-tmp is TMPDIR"
contains "the job cannot unmount its /tmp" "$(cat "$B/u/$fa.seen" 2>/dev/null)" "refused umount"
not_contains "... not even from a user namespace" "$(cat "$B/u/$fa.seen" 2>/dev/null)" "ESCAPED"
jb=$(as_job "$V" "$B/v" cg-tmp-b -m 64M -t 1h "$B/tmpjob.sh" "$fb" "$fa")
check "a job of $V beside it has looked" wait_until 20 test -e "$B/v/$fb.seen"
echo "# job $jb as $V: $(tr '\n' ';' <"$B/v/$fb.seen" 2>/dev/null)"
contains "it does not see the other job's file" "$(cat "$B/v/$fb.seen" 2>/dev/null)" \
	"does not see $fa"
contains "its /tmp holds its own file only" "$(cat "$B/v/$fb.seen" 2>/dev/null)" "in tmp: $fb "
touch "$B/u/$fa.go" "$B/v/$fb.go"
wait_for 20 "SELECT COUNT(*) = 2 FROM mxq_job WHERE job_id IN ($ja, $jb) AND job_status = 1000" ||
	not_ok "jobs $ja and $jb FINISHED"
check "after the job its file is in neither /tmp nor /var/tmp" \
	test ! -e "/tmp/$fa" -a ! -e "/var/tmp/$fa" -a ! -e "/tmp/$fb" -a ! -e "/var/tmp/$fb"
check "... and its tmpdir, with the files, is removed" \
	wait_until 10 test ! -e "$B/tmp/mxq_job_$ja" -a ! -e "$B/tmp/mxq_job_$jb"
# a job whose workdir is in /tmp keeps the host's: its files there stay
# where it and its user look for them
fc=mxqt16-$H-c
jc=$(as_user_job cg-tmp-c -m 64M -t 1h sh -c "echo kept >/tmp/$fc")
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $jc" || not_ok "job $jc FINISHED"
check "a job with its workdir in /tmp writes into the host's /tmp" test -s "/tmp/$fc"
contains "the log says why" "$(grep "job $jc: " "$(mxqd_dir "$H6")/mxqd.log")" \
	"keeps the host's /tmp: its workdir is there"
rm -f "/tmp/$fc"
mxqd_stop "$H6" TERM 20
mxqd_root_jobs=
check "start mxqd $H6 --shared-tmp" mxqd_start "$H6" --cgroup-root "$CG" --tmpdir "$B/tmp" \
	--slots 2 --memory 4G --shared-tmp
mxqd_root_jobs=--allow-root-jobs
fd=mxqt16-$H-d
jd=$(as_job "$U" "$B/u" cg-tmp-d -m 64M -t 1h sh -c "echo shared >/tmp/$fd")
wait_for 20 "SELECT job_status = 1000 FROM mxq_job WHERE job_id = $jd" || not_ok "job $jd FINISHED"
check "with --shared-tmp the job's /tmp is the host's" test -s "/tmp/$fd"
rm -f "/tmp/$fd"
mxqd_stop "$H6" TERM 20

tap_done
