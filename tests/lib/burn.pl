# tests/lib/burn.pl T0 T1 FRACTION [REPORT]: from T0 to T1 (epoch seconds)
# use FRACTION of a CPU, steered by the process's own CPU time (the kernel's
# exact per-process clock; times() counts in 10 ms ticks),
# so late wake-ups do not change the share: behind the target it burns
# 5 ms, else naps 5 ms. Before T0 it sleeps. With REPORT, it appends
# "EPOCH CPU_SECONDS" there at its start, about every 0.05 s and at the
# end: the CPU time the job really got, as the job itself saw it, finely
# enough to say how much of it fell into each of mxqd's sample intervals
# (tests/lib/split_truth.pl).
use strict;
use Time::HiRes qw(time sleep clock_gettime CLOCK_PROCESS_CPUTIME_ID);
my ($t0, $t1, $fraction, $report) = @ARGV;
my $next_report = 0;
sub report {
	return unless $report;
	my $cpu = clock_gettime(CLOCK_PROCESS_CPUTIME_ID);
	open(my $f, ">>", $report) or return;
	printf $f "%.3f %.6f\n", time, $cpu;
	close $f;
}
report();
sleep($t0 - time) if $t0 > time;
while ((my $now = time) < $t1) {
	my $cpu = clock_gettime(CLOCK_PROCESS_CPUTIME_ID);
	if ($now >= $next_report) {
		report();
		$next_report = $now + 0.05;
	}
	if ($cpu < ($now - $t0) * $fraction) {
		my $until = $now + 0.005;
		1 while time < $until;
	} else {
		sleep(0.005);
	}
}
report();
