#!/bin/sh
# tests/test_disk.sh - what a full or failing disk does to a node: real
# small file systems (tmpfs, loop-mounted ext4 images with errors=remount-ro
# turned read-only by a file system error, as a dying disk does), a real
# mxqd and a private MariaDB. Root only; every mount is undone on every
# exit path.
#
#   A. the job's output directory: full before the job (FAILED, nothing
#      run, the reason in job_reason), read-only (FAILED, reason), filling
#      up while the job runs (the job's own status, the reason says the
#      output may be missing); mxqd goes on with other jobs
#   B. mxqd's --tmpdir read-only or full when a job is claimed: the job
#      goes back to the queue (not FAILED, not run), mxqd says so once and
#      claims nothing until the disk works again, then runs the jobs once
#      each; read-only at a job's end: recorded once, the tmpdir it could
#      not remove is removed once the disk is writable again; a tmpdir
#      nested 1200 directories deep is removed under a limit of 256 open
#      files, and the next job has the room
#   C. the spool: full when a job is claimed (back to the queue, then run
#      once), full while it runs and failing (read-only) while it runs:
#      the outcome is recorded with the job's exit status, not UNKNOWN;
#      with the spool read-only mxqd keeps running and quiet, takes no job
#      and exits on SIGTERM; --log on a full file system: jobs still run,
#      and the lines lost are counted; --pid-file on a full one: one line,
#      exit status 1
#   D. the database's data directory full (its own ext4 image): job ends
#      still land (in-place updates); a job's reason the full table cannot
#      take is said in the log with what to do, and the end is recorded
#      without it; mariadbd dying (as it does on a full disk) while a job
#      ends: recorded once after the restart, the job ran once

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

if [ "$(id -u)" != 0 ]; then
	skip "mounting file systems needs root"
	tap_done
	exit 0
fi

W=$MXQ_TEST_DIR/work
mkdir -p "$W/ran"
disk__mounts=

# ---------------------------------------------------------------- mounts

# disk_tmpfs DIR SIZE: a tmpfs of SIZE on DIR (mode 0755, as mxqd wants
# its directories).
disk_tmpfs() {
	mkdir -p "$1" &&
	mount -t tmpfs -o "size=$2,mode=0755" mxq_test_disk "$1" &&
	disk__mounts="$1 $disk__mounts"
}

# disk_ext4 DIR SIZE: an ext4 image of SIZE (no reserved blocks: root fills
# it too) loop-mounted on DIR with errors=remount-ro.
disk_ext4() {
	_img=$MXQ_TEST_DIR/img.$(printf '%s' "$1" | tr -c 'A-Za-z0-9' _)
	truncate -s "$2" "$_img" && mkfs.ext4 -q -m 0 -F "$_img" >/dev/null 2>&1 &&
	mkdir -p "$1" && mount -o loop,errors=remount-ro "$_img" "$1" &&
	disk__mounts="$1 $disk__mounts"
}

# disk_fail DIR: a file system error on the ext4 image at DIR: the kernel
# makes it read-only at once, open files or not (a dying disk).
disk_fail() {
	_dev=$(findmnt -no SOURCE "$1") &&
	echo 1 >"/sys/fs/ext4/${_dev#/dev/}/trigger_fs_error"
}

# disk_fill DIR: fill the file system of DIR (the filler file is DIR/fill).
disk_fill() {
	dd if=/dev/zero of="$1/fill" bs=64k >/dev/null 2>&1
	dd if=/dev/zero of="$1/fill.tail" bs=1k >/dev/null 2>&1
	return 0
}

disk_free() {
	rm -f "$1/fill" "$1/fill.tail"
}

disk_umount() {
	umount "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	_rest=
	for _m in $disk__mounts; do
		[ "$_m" = "$1" ] || _rest="$_rest $_m"
	done
	disk__mounts=$_rest
}

mxq_test_cleanup_hook() {
	mxqd_cleanup
	# a data directory on an image: the server goes before its mount
	mxq__server_terminate
	for _m in $disk__mounts; do
		umount "$_m" 2>/dev/null || umount -l "$_m" 2>/dev/null
	done
}

# Mounting a tmpfs and an ext4 image here (a container may forbid either):
# without, nothing of this can be staged.
if ! disk_tmpfs "$W/probe.tmpfs" 64k || ! disk_ext4 "$W/probe.ext4" 4M ||
   ! disk_fail "$W/probe.ext4" || touch "$W/probe.ext4/x" 2>/dev/null; then
	skip "no tmpfs, loop-mounted ext4 or ext4 trigger_fs_error here"
	tap_done
	exit 0
fi
disk_umount "$W/probe.tmpfs"
disk_umount "$W/probe.ext4"

# ---------------------------------------------------------------- helpers

# A step the rest cannot do without failed.
fatal() {
	not_ok "$1"
	tap_done
	exit 1
}

# Start mxqd HOST with two slots (in this shell: it is our child); its
# log file in $node_log.
node_start() {
	mxqd_start "$1" --slots 2 --memory 2G || fatal "start mxqd $1"
	node_log=$(mxqd_dir "$1")/mxqd.log
}

# A job that leaves a marker line per run in $W/ran/JOBID; then runs $1.
# shellcheck disable=SC2016 # expanded by the job's shell
marked() {
	_cmd=$1
	shift
	submit -m 64M -t 1h -w "$W" "$@" sh -c 'echo run >>"ran/$MXQ_JOBID"; '"$_cmd"
}

runs_of() {
	if [ -f "$W/ran/$1" ]; then wc -l <"$W/ran/$1" | tr -d ' '; else echo 0; fi
}

reason_of() {
	mxq_sql "SELECT job_reason FROM mxq_job WHERE job_id = $1"
}

ended() {
	wait_for "${2:-15}" "SELECT job_status >= 400 FROM mxq_job WHERE job_id = $1"
}

running() {
	wait_for "${2:-15}" "SELECT job_status = 200 FROM mxq_job WHERE job_id = $1"
}

# status and exit status (stats_status, as from wait4)
outcome_of() {
	mxq_sql "SELECT CONCAT(job_status, ' ', stats_status) FROM mxq_job WHERE job_id = $1"
}

log_count() {
	grep -c -- "$2" "$1" 2>/dev/null || true
}

# =================================================== A. the output directory

section "A. the job's output directory"
OUT=$W/out
disk_tmpfs "$OUT" 1M || fatal "mount a tmpfs for the output"
chmod 1777 "$OUT"
node_start nodea

disk_fill "$OUT"
j=$(marked 'echo hello' -o "$OUT/full.out")
ended "$j"
is "A1: output file system full: FAILED, exit status 126" "$(outcome_of "$j")" "750 32256"
is "A1: nothing of the job ran" "$(runs_of "$j")" 0
contains "A1: the reason says why" "$(reason_of "$j")" "cannot write stdout $OUT/full.out: No space left on device"
disk_free "$OUT"

mount -o remount,ro "$OUT"
j=$(marked 'echo hello' -o "$OUT/ro.out")
ended "$j"
is "A2: output read-only: FAILED, exit status 126" "$(outcome_of "$j")" "750 32256"
is "A2: reason, one line" "$(reason_of "$j")" \
	"cannot open stdout $OUT/ro.out: Read-only file system"
mount -o remount,rw "$OUT"

# the job's output fills the file system; it does not check its writes
j=$(marked 'dd if=/dev/zero bs=64k count=40 2>/dev/null; exit 0' -o "$OUT/fills.out")
ended "$j"
is "A3: output filled up while the job ran: the job's own status (FINISHED)" \
	"$(outcome_of "$j")" "1000 0"
contains "A3: the reason says the output may be missing" "$(reason_of "$j")" \
	"stdout $OUT/fills.out: its file system was full when the job ended"
rm -f "$OUT/fills.out"
j=$(marked 'echo fine' -o "$W/fine.out")
ended "$j"
is "A4: mxqd goes on: the next job FINISHED" "$(outcome_of "$j")" "1000 0"
check "A4: mxqd nodea still runs" mxq__alive "$(mxqd_pid nodea)"
mxqd_stop nodea
disk_umount "$OUT"

# ========================================================= B. the tmpdir

section "B. the tmpdir"
TMPB=$(mxqd_dir nodeb)/tmp
disk_tmpfs "$TMPB" 1M || fatal "mount a tmpfs for the tmpdir"
node_start nodeb
logb=$node_log

mount -o remount,ro "$TMPB"
j1=$(marked 'exit 0')
j2=$(marked 'exit 0')
sleep 2.5
is "B1: tmpdir read-only: the jobs are still queued (not FAILED)" \
	"$(status_of "$j1") $(status_of "$j2")" "0 0"
is "B1: said once" "$(log_count "$logb" 'goes back to the queue')" 1
contains "B1: with what is wrong" "$(grep 'goes back to the queue' "$logb")" \
	"cannot create the job's tmpdir $TMPB/mxq_job_$j1: Read-only file system"
pause_sql="SELECT daemon_pause_reason FROM mxq_daemon WHERE hostname = 'nodeb'
	AND status NOT IN (250, 255)"
is "B1: the daemon row says why it takes no jobs" \
	"$(mxq_sql "$pause_sql" | sed 's/mxq_job_[0-9]*/mxq_job_N/')" \
	"cannot create the job's tmpdir $TMPB/mxq_job_N: Read-only file system"
out=$("$MXQ_BUILD_DIR/mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain --group "$(group_of "$j1")" 2>&1)
contains "B1: the power policy counts it as no capacity" "$out" \
	"absorbed by powered-on capacity:    0"
contains "B1: and says why" "$out" \
	"policy: starts no new jobs (its mxqd is paused: cannot create the job's tmpdir"
out=$("$MXQ_BUILD_DIR/mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain nodeb 2>&1)
contains "B1: mxqadmin power explain nodeb says it too" "$out" \
	"starts no new jobs: its mxqd is paused: cannot create the job's tmpdir"
out=$("$MXQ_BUILD_DIR/mxqadmin" -M "$MXQ_MYSQL_DEFAULT_FILE" power explain nodeb --json 2>&1)
contains "B1: and --json" "$out" '"starts_no_jobs": "its mxqd is paused: cannot create'
mount -o remount,rw "$TMPB"
ended "$j1"
ended "$j2"
is "B1: writable again: both FINISHED" "$(outcome_of "$j1"), $(outcome_of "$j2")" "1000 0, 1000 0"
is "B1: each ran once" "$(runs_of "$j1") $(runs_of "$j2")" "1 1"
is "B1: taking jobs again is said" "$(log_count "$logb" 'take jobs again')" 1
is "B1: and the daemon row no longer says a pause" "$(mxq_sql "$pause_sql")" ""

disk_fill "$TMPB"
j=$(marked 'exit 0')
sleep 2.5
is "B2: tmpdir full: the job is still queued" "$(status_of "$j")" 0
disk_free "$TMPB"
ended "$j"
is "B2: space again: FINISHED, ran once" "$(outcome_of "$j") $(runs_of "$j")" "1000 0 1"

# read-only at the job's end: its tmpdir cannot be removed
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(marked 'echo x >"$TMPDIR/left"; sleep 2')
running "$j"
wait_until 5 test -f "$TMPB/mxq_job_$j/left"
mount -o remount,ro "$TMPB"
ended "$j"
is "B3: tmpdir read-only at the end: FINISHED, ran once" "$(outcome_of "$j") $(runs_of "$j")" "1000 0 1"
is "B3: its end is recorded once" \
	"$(log_count "$logb" "job $j (group [0-9]*, user [a-z]*) FINISHED")" 1
check "B3: the tmpdir is still there" test -d "$TMPB/mxq_job_$j"
contains "B3: the leftover is said" "$(grep "job $j: cannot remove" "$logb")" "retrying every"
mount -o remount,rw "$TMPB"
if wait_until 5 test ! -e "$TMPB/mxq_job_$j"; then
	ok "B3: writable again: the leftover tmpdir is removed"
else
	not_ok "B3: writable again: the leftover tmpdir is removed"
fi
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(marked 'test -d "$TMPDIR" && exit 0; exit 1')
ended "$j"
is "B4: the next job, with a fresh tmpdir: FINISHED" "$(outcome_of "$j")" "1000 0"

# a tmpdir nested 1200 directories deep, a file at the bottom filling most
# of the file system, removed under a limit of 256 open files (the walk
# held two per level and gave up at about 120: the node then took no job
# until an admin cleaned up)
mxqd_stop nodeb
mxqd_wrap="prlimit --nofile=256:256"
node_start nodeb
mxqd_wrap=
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(marked 'cd "$TMPDIR" && i=0 && while [ $i -lt 1200 ]; do mkdir d && cd d || exit 1; i=$((i + 1)); done &&
	head -c 700000 /dev/zero >f')
ended "$j" 30
is "B5: a tmpdir 1200 directories deep: FINISHED" "$(outcome_of "$j")" "1000 0"
if wait_until 5 test ! -e "$TMPB/mxq_job_$j"; then
	ok "B5: its tmpdir is removed"
else
	not_ok "B5: its tmpdir is removed"
fi
is "B5: no leftover said" "$(log_count "$node_log" "job $j: cannot remove")" 0
# shellcheck disable=SC2016 # expanded by the job's shell
j=$(marked 'head -c 700000 /dev/zero >"$TMPDIR/f"')
ended "$j"
is "B5: the next job has the room: FINISHED" "$(outcome_of "$j")" "1000 0"
mxqd_stop nodeb
disk_umount "$TMPB"

# ========================================================== C. the spool

section "C. the spool"
SPOOLC=$(mxqd_dir nodec)/spool
disk_ext4 "$SPOOLC" 8M || fatal "an ext4 image for the spool"
node_start nodec
logc=$node_log

disk_fill "$SPOOLC"
j=$(marked 'exit 3')
sleep 2.5
is "C1: spool full: the job is still queued (not run, not UNKNOWN)" \
	"$(status_of "$j") $(runs_of "$j")" "0 0"
disk_free "$SPOOLC"
ended "$j"
is "C1: space again: FAILED with exit status 3, ran once" "$(outcome_of "$j") $(runs_of "$j")" "750 768 1"

j=$(marked 'sleep 1.5; exit 3')
running "$j"
disk_fill "$SPOOLC"
ended "$j"
is "C2: spool full while the job ran: its outcome (exit status 3), not UNKNOWN" \
	"$(outcome_of "$j") $(runs_of "$j")" "750 768 1"
disk_free "$SPOOLC"

j=$(marked 'sleep 1.5; exit 3')
running "$j"
disk_fail "$SPOOLC"
ended "$j"
is "C3: spool failed (read-only) while the job ran: its outcome (exit status 3)" \
	"$(outcome_of "$j") $(runs_of "$j")" "750 768 1"
j2=$(marked 'exit 0')
sleep 2.5
is "C3: with the spool read-only no job is taken" "$(status_of "$j2")" 0
n0=$(wc -l <"$logc")
sleep 3
n1=$(wc -l <"$logc")
check "C3: mxqd nodec still runs" mxq__alive "$(mxqd_pid nodec)"
check "C3: and is quiet (at most 2 log lines in 3 s, got $((n1 - n0)))" [ $((n1 - n0)) -le 2 ]
mxqd_stop nodec TERM 10
is "C3: SIGTERM: mxqd exits with status 0" "$mxqd_rc" 0
is "C3: the queued job is still queued" "$(status_of "$j2")" 0
mxq_sql "UPDATE mxq_job SET job_status = 990 WHERE job_id = $j2" # not for the next node
disk_umount "$SPOOLC"

# mxqd's log on a full file system: it keeps working
LOGE=$W/loge
disk_tmpfs "$LOGE" 1M || fatal "mount a tmpfs for a log"
disk_fill "$LOGE"
mxqd_start nodee --slots 1 --memory 1G --log "$LOGE/mxqd.log" || not_ok "C4: start with --log on a full file system"
j=$(marked 'exit 0')
ended "$j"
is "C4: --log on a full file system: jobs still run" "$(outcome_of "$j")" "1000 0"
disk_free "$LOGE"
j=$(marked 'exit 0')
ended "$j"
contains "C4: with room again, the log says how many lines it lost" \
	"$(cat "$LOGE/mxqd.log")" "earlier line(s) lost: No space left on device"
mxqd_stop nodee
rm -f "$LOGE/mxqd.log"
disk_fill "$LOGE"
err=$("$mxqd_bin" --hostname nodef --spool "$W/spoolf" --tmpdir "$W/tmpf" \
	--pid-file "$LOGE/mxqd.pid" -M "$MXQ_MYSQL_DEFAULT_FILE" 2>&1 </dev/null)
is "C5: --pid-file on a full file system: exit status 1" "$?" 1
is "C5: with one line" "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1
contains "C5: naming the problem" "$err" "No space left on device"
disk_umount "$LOGE"

# ======================================================= D. the database

section "D. the database's data directory"
# move the data directory onto an image of its own (the server restarts)
mxq__server_terminate
mv "$MXQ_TEST_DIR/data" "$MXQ_TEST_DIR/data.orig"
if ! disk_ext4 "$MXQ_TEST_DIR/data" 160M ||
   ! cp -a "$MXQ_TEST_DIR/data.orig/." "$MXQ_TEST_DIR/data/" || ! mxq_db_restart; then
	fatal "D: the database on an image of its own"
fi
rm -rf "$MXQ_TEST_DIR/data.orig"
DATA=$MXQ_TEST_DIR/data
OUTD=$W/outd
disk_tmpfs "$OUTD" 1M || fatal "mount a tmpfs for the output"
chmod 1777 "$OUTD"
node_start noded
logd=$node_log

j=$(marked 'sleep 1; exit 0')
running "$j"
disk_fill "$DATA"
ended "$j"
is "D1: data directory full: the job's end is recorded (FINISHED), ran once" \
	"$(outcome_of "$j") $(runs_of "$j")" "1000 0 1"
disk_free "$DATA"

# A reason the full table cannot take: a job whose output fills its file
# system has one at its end (near 1000 characters: a long output path),
# and rows that fill the table's pages with no room for the file to grow.
long=$OUTD/$(printf '%0200d' 0 | tr 0 a)/$(printf '%0200d' 0 | tr 0 b)
long=$long/$(printf '%0200d' 0 | tr 0 c)/$(printf '%0200d' 0 | tr 0 d)
mkdir -p "$long" && chmod -R a+rwx "$OUTD"
j=$(marked 'while [ ! -e go ]; do sleep 0.1; done; dd if=/dev/zero bs=64k count=40 2>/dev/null; exit 0' \
	-o "$long/out")
running "$j"
mxq_sql "SET SESSION max_recursive_iterations = 1000;
	INSERT INTO mxq_job (job_priority, group_id, job_workdir, job_argc, job_argv,
		job_stdout, job_stderr, job_umask, host_submit, job_status)
	WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 600)
	SELECT t.job_priority, t.group_id, t.job_workdir, t.job_argc, t.job_argv,
		t.job_stdout, t.job_stderr, t.job_umask, t.host_submit, 990
	FROM seq JOIN mxq_job t ON t.job_id = $j"
disk_fill "$DATA"
# first the table's free pages go (rows that grow split pages), then the
# pages around the job's row fill up (no page is left to split into)
{
	mxq_sql "SELECT job_id FROM mxq_job WHERE job_id > $j ORDER BY job_id" |
		sed "s/.*/UPDATE mxq_job SET job_reason = REPEAT('y', 900) WHERE job_id = &;/"
	for _grow in 4096 2048 1024 1024 512 512 256 256 128 128 64 64 32 32; do
		mxq_sql "SELECT job_id FROM mxq_job WHERE job_id BETWEEN $j - 40 AND $j + 80
			AND job_id <> $j ORDER BY job_id" |
			sed "s/.*/UPDATE mxq_job SET job_argv = CONCAT(job_argv, REPEAT('z', $_grow)) WHERE job_id = &;/"
	done
} | mariadb --no-defaults --socket="$MXQ_TEST_DB_SOCKET" -uroot --force mxq >/dev/null 2>&1
touch "$W/go"
ended "$j" 20
is "D2: the end of a job whose reason the table cannot take: FINISHED, ran once" \
	"$(outcome_of "$j") $(runs_of "$j")" "1000 0 1"
contains "D2: the log says what is wrong and what to do" \
	"$(grep "job $j: cannot record its reason" "$logd")" "free space in its data directory"
disk_free "$DATA"
rm -rf "$OUTD/a"*

# mariadbd dies (on a full disk 10.11 aborts at an INSERT that cannot get
# space) while a job ends: the outcome waits, and lands once it is back
j=$(marked 'sleep 1; exit 0')
running "$j"
mxq_db_kill
sleep 2.5
mxq_db_restart || not_ok "D3: the database is back"
ended "$j" 40
is "D3: a job that ended while mariadbd was down: FINISHED once, ran once" \
	"$(outcome_of "$j") $(runs_of "$j")" "1000 0 1"
is "D3: recorded once" "$(log_count "$logd" "job $j (group [0-9]*, user [a-z]*) FINISHED")" 1
is "D3: the group's counters agree with its jobs" "$(counter_mismatches)" ""
mxqd_stop noded

tap_done
