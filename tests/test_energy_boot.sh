#!/bin/sh
# tests/test_energy_boot.sh - boot overhead once per boot, on a node that
# looks freshly booted: mxqd runs in a time namespace (unshare --time
# --boottime) whose uptime is a few seconds, as on a CI machine that
# booted just now. The kernel's boot_id is this machine's.
#
#   1. a node restarted twice within a minute of its boot (model source,
#      100 W idle, no jobs): the boot is recorded once, as the uptime at
#      mxqd's first sample x 100 W; the node's energy is within 5 % of the
#      time mxqd ran (the first run from the boot on) x 100 W; no node
#      sample is above the model's 100 W; the spool's mark names the boot
#   2. power usage over a window inside the downtime between two runs:
#      not covered, no energy; over a run: covered, 100 W
#   3. --energy-boot none: no boot overhead; a bad --energy-boot: one line
#      naming it, mxqd does not start
#   4. shutdown overhead runs from SIGTERM to the exit, not over the whole
#      (5 s) sampling interval SIGTERM falls into

. "$(dirname -- "$0")/lib/mariadb.sh"
mxq_db_start || { echo "not ok 1 - start a private MariaDB"; exit 1; }
. "$MXQ_SRC_DIR/tests/lib/mxqd.sh"

mxqadmin_bin=$MXQ_BUILD_DIR/mxqadmin
UP0=5   # seconds since "boot" when the first mxqd starts

# the namespace's boot: its uptime is UP0 now. Offsets count from the
# machine's clock, also when this test itself runs in a time namespace
# (make check under unshare --boottime): add the current one back.
read -r up _ </proc/uptime
now=$(date +%s.%N)
cur_off=$(awk '$1 == "boottime" { print $2 }' /proc/self/timens_offsets 2>/dev/null)
off=$(( UP0 - ${up%.*} + ${cur_off:-0} ))
boot_epoch=$(awk -v t="$now" -v u="$up" -v o="$off" -v c="${cur_off:-0}" \
	'BEGIN { printf "%.3f", t - u - (o - c) }')
if ! unshare --time --boottime "$off" true 2>/dev/null; then
	not_ok "unshare --time works here (kernel 5.6 or later, CAP_SYS_ADMIN)"
	tap_done
	exit 1
fi
ns_up=$(unshare --time --boottime "$off" cut -d' ' -f1 /proc/uptime)
echo "# namespace uptime $ns_up s, its boot at $boot_epoch"

epoch() {
	date +%s.%N
}
sql1() {
	mxq_sql "$@" | head -n 1
}

E_OPTS="--energy-sources model --energy-model 100:0 --energy-interval 0.25 --energy-flush-interval 1
	--energy-boot kernel"

# ------------------------------------------ 1. restarted twice after boot

section "1. a node restarted twice within a minute of boot"
mxqd_wrap="unshare --time --boottime $off"
ran=0
for run in 1 2 3; do
	t_start=$(epoch)
	# shellcheck disable=SC2086
	check "start $run of mxqd bnode1" mxqd_start bnode1 $E_OPTS
	sleep 5
	mxqd_stop bnode1
	t_end=$(epoch)
	is "mxqd bnode1 run $run exits 0" "$mxqd_rc" 0
	# the first run accounts from the boot on, the others from their start
	[ "$run" = 1 ] && t_start=$boot_epoch
	ran=$(awk -v r="$ran" -v a="$t_start" -v b="$t_end" 'BEGIN { printf "%.3f", r + b - a }')
	eval "t_end_$run=\$t_end t_start_$run=\$t_start"
	boot_j=$(sql1 "SELECT energy_boot_joules FROM mxq_power WHERE hostname = 'bnode1'")
	echo "# after run $run: boot overhead $boot_j J"
	[ "$run" = 1 ] && boot_1=$boot_j
	sleep 2
done
mxqd_wrap=
is "the boot is recorded once (unchanged by the restarts)" "$boot_j" "$boot_1"
check "boot overhead = uptime at the first sample (${UP0} s and start-up) x 100 W" \
	awk -v b="$boot_1" -v u="$UP0" 'BEGIN { exit !(b >= u * 100 && b <= (u + 5) * 100) }'
row=$(mxq_sql "SELECT energy_joules, energy_jobs_joules + energy_idle_joules + energy_boot_joules
	+ energy_shutdown_joules FROM mxq_power WHERE hostname = 'bnode1'")
set -- $row
want=$(awk -v r="$ran" 'BEGIN { printf "%.1f", r * 100 }')
echo "# node energy $1 J (parts add up to $2 J); mxqd ran ${ran} s: $want J at 100 W"
check "node energy within 5 % of the time mxqd ran x 100 W" within "$1" "$want" 5
check "jobs + idle + boot + shutdown = node total" within "$2" "$1" 0.0001
peak=$(sql1 "SELECT MAX(watts) FROM mxq_power_sample WHERE hostname = 'bnode1'")
echo "# highest node sample: $peak W"
check "no node sample above the model's 100 W" awk -v p="$peak" 'BEGIN { exit !(p > 0 && p <= 100.001) }'
is "the spool's mark names the kernel's boot" "$(cat "$(mxqd_dir bnode1)/spool/energy.boot")" \
	"$(cat /proc/sys/kernel/random/boot_id)"
n=$(grep -c "boot overhead at" "$(mxqd_dir bnode1)/mxqd.log")
is "one mxqd of three booked the boot" "$n" 1
n=$(grep -c "is recorded already" "$(mxqd_dir bnode1)/mxqd.log")
is "two said it was recorded already" "$n" 2

# ------------------------------------------ 2. power usage and downtime

section "2. power usage across the downtime"
usage() { # FROM TO -> the bnode1 line: HOST ENERGY_J KWH AVG_W PEAK_W COVERED
	"$mxqadmin_bin" -M "$MXQ_MYSQL_DEFAULT_FILE" power usage --hosts bnode1 --from "@$1" --to "@$2" |
		awk '$1 == "bnode1"'
}
a=$(awk -v t="$t_end_1" 'BEGIN { printf "%.3f", t + 0.5 }')
b=$(awk -v t="$t_start_2" 'BEGIN { printf "%.3f", t - 0.3 }')
set -- $(usage "$a" "$b")
echo "# usage inside the downtime $a..$b: $*"
is "a window inside the downtime is not covered" "$6" "0%"
is "and has no energy" "$2" "0.0"
a=$(awk -v t="$t_start_2" 'BEGIN { printf "%.3f", t + 1.5 }')
b=$(awk -v t="$t_end_2" 'BEGIN { printf "%.3f", t - 1.5 }')
set -- $(usage "$a" "$b")
echo "# usage inside run 2 $a..$b: $*"
is "a window inside a run is covered" "$6" "100%"
check "at the model's 100 W" within "$4" 100 0.5

# ------------------------------------------ 3. none, and bad values

section "3. --energy-boot none and bad values"
mxqd_wrap="unshare --time --boottime $off"
# shellcheck disable=SC2086
check "start mxqd bnode2 with --energy-boot none" mxqd_start bnode2 $E_OPTS --energy-boot none
sleep 2
mxqd_stop bnode2
mxqd_wrap=
is "no boot overhead with --energy-boot none" \
	"$(sql1 "SELECT energy_boot_joules = 0 AND energy_joules > 100 FROM mxq_power WHERE hostname = 'bnode2'")" 1
out=$("$MXQ_BUILD_DIR/mxqd" --energy-boot "no good@x" --hostname bnode3 2>&1)
rc=$?
check "a bad --energy-boot: mxqd does not start" test "$rc" -ne 0
contains "a bad --energy-boot: the line names it" "$out" "--energy-boot: 'no good@x'"
is "a bad --energy-boot: one line" "$(printf '%s\n' "$out" | wc -l)" 1

# ------------------------------------------ 4. shutdown from its start

section "4. shutdown overhead from SIGTERM on"
# shellcheck disable=SC2086
check "start mxqd bnode4 (5 s sampling interval)" mxqd_start bnode4 $E_OPTS --energy-boot none \
	--energy-interval 5
sleep 7.5   # SIGTERM 2.5 s into an interval
mxqd_stop bnode4
set -- $(mxq_sql "SELECT energy_shutdown_joules, energy_idle_joules, energy_joules FROM mxq_power
	WHERE hostname = 'bnode4'")
echo "# bnode4: shutdown $1 J, idle $2 J, total $3 J"
check "shutdown overhead is SIGTERM to exit (< 0.5 s x 100 W), not the interval" \
	awk -v s="$1" 'BEGIN { exit !(s >= 0 && s < 50) }'
check "the interval up to SIGTERM is idle (> 6 s x 100 W)" awk -v i="$2" 'BEGIN { exit !(i > 600) }'

tap_done
