# tests/lib/fake-rapl.sh - a fake powercap (RAPL) tree whose counters a
# background writer advances at a scheduled power, and the true energy
# between two times. Source it after tests/lib/mxqd.sh.
#
#   fake_rapl_start DIR [PACKAGE_MAX_UJ]
#       SYS=DIR/sys with class/powercap: package-0 (70 % of the power,
#       wraps at PACKAGE_MAX_UJ, default 100 J: several wraps per job),
#       dram (30 %) and a "core" zone inside the package that must not be
#       added. The writer (one perl process, every 10 ms) integrates the
#       power of the schedule file $FAKE_RAPL_SCHED ("EPOCH_MS WATTS"
#       lines; the last whose time has come applies; append to change it),
#       publishes the counters atomically (rename) unless ZONE.gone exists,
#       and logs "EPOCH_MS TOTAL_UJ" to $FAKE_RAPL_TRUTH. Sets FAKE_RAPL_SYS,
#       FAKE_RAPL_PC (the powercap dir) and fake_rapl_pid; waits (bounded)
#       for the first counters.
#   fake_rapl_stop          end the writer (call it from the cleanup hook)
#   truth_between A_MS B_MS true energy (J) between two epoch times in ms,
#                           interpolated in the writer's log
#   now_ms                  epoch milliseconds

now_ms() {
	_t=$(date +%s%N)
	echo $((_t / 1000000))
}

fake_rapl_start() {
	FAKE_RAPL_SYS=$1/sys
	FAKE_RAPL_PC=$FAKE_RAPL_SYS/class/powercap
	FAKE_RAPL_SCHED=$1/schedule
	FAKE_RAPL_TRUTH=$1/truth
	fake_rapl__stop=$1/writer.stop
	_pc=$FAKE_RAPL_PC
	mkdir -p "$_pc/intel-rapl:0" "$_pc/intel-rapl:0:0" "$_pc/intel-rapl:1" || return 1
	echo package-0 >"$_pc/intel-rapl:0/name"
	echo core >"$_pc/intel-rapl:0:0/name"
	echo dram >"$_pc/intel-rapl:1/name"
	echo "${2:-100000000}" >"$_pc/intel-rapl:0/max_energy_range_uj"
	echo 65532610987 >"$_pc/intel-rapl:1/max_energy_range_uj"
	echo 262143328850 >"$_pc/intel-rapl:0:0/max_energy_range_uj"
	[ -f "$FAKE_RAPL_SCHED" ] || echo "0 40" >"$FAKE_RAPL_SCHED"
	rm -f "$fake_rapl__stop"
	perl -MTime::HiRes=time,sleep -e '
		my ($pc, $sched, $truth, $stop, $pkgmax) = @ARGV;
		my @zones = (["intel-rapl:0", 0.7, $pkgmax], ["intel-rapl:1", 0.3, 65532610987],
			     ["intel-rapl:0:0", 0.5, 262143328850]);
		my %e = map { $_->[0] => 5000000 } @zones;   # counters start somewhere
		my ($total, $last) = (0, time);
		open(my $log, ">", $truth) or die; select((select($log), $| = 1)[0]);
		while (!-e $stop) {
			my $now = time;
			my $w = 0;
			if (open(my $s, "<", $sched)) {
				while (<$s>) { my ($t, $p) = split; $w = $p if $t <= $now * 1000; }
				close $s;
			}
			my $d = $w * ($now - $last) * 1e6;
			$total += $d;
			$last = $now;
			for my $z (@zones) {
				my ($n, $share, $max) = @$z;
				$e{$n} = ($e{$n} + $d * $share) % $max;
				next if -e "$pc/$n.gone";
				open(my $f, ">", "$pc/$n/energy_uj.tmp") or next;
				printf $f "%d\n", $e{$n};
				close $f;
				rename("$pc/$n/energy_uj.tmp", "$pc/$n/energy_uj");
			}
			printf $log "%.3f %.0f\n", $now * 1000, $total;
			sleep 0.01;
		}' "$_pc" "$FAKE_RAPL_SCHED" "$FAKE_RAPL_TRUTH" "$fake_rapl__stop" "${2:-100000000}" &
	fake_rapl_pid=$!
	wait_until 10 test -s "$_pc/intel-rapl:0/energy_uj"
}

fake_rapl_stop() {
	[ -n "${fake_rapl_pid:-}" ] || return 0
	: >"$fake_rapl__stop"
	kill "$fake_rapl_pid" 2>/dev/null
	wait "$fake_rapl_pid" 2>/dev/null
	fake_rapl_pid=
}

truth_between() {
	awk -v a="$1" -v b="$2" '
		function at(t,   i) {
			for (i = 2; i <= n; i++)
				if (T[i] >= t)
					return E[i-1] + (E[i] - E[i-1]) * (t - T[i-1]) / (T[i] - T[i-1])
			return -1e18
		}
		{ n++; T[n] = $1; E[n] = $2 }
		END { printf "%.3f\n", (at(b) - at(a)) / 1e6 }' "$FAKE_RAPL_TRUTH"
}
