# tests/lib/split_truth.pl - the active energy each job should have been
# given, interval by interval, from data mxqd did not compute.
#
#   perl split_truth.pl [--truth FILE] --idle W MXQD_LOG JOB=REPORT...
#
# MXQD_LOG is the log of an mxqd run with --debug: its lines
# "energy: DT ms to END, J J: job ID cpu ..." name the intervals mxqd
# sampled (END epoch ms, DT long) and the jobs it split each among. Only
# those boundaries are taken from mxqd. Each job's CPU time over an
# interval comes from its own report (tests/lib/burn.pl REPORT: "EPOCH
# CPU_SECONDS" lines), interpolated at the interval's edges; the interval's
# energy from the fake RAPL writer's log (--truth FILE: "EPOCH_MS
# CUMULATIVE_UJ" lines), or, without --truth, the energy mxqd read (for a
# modelled source, whose figures are mxqd's by definition). Active energy
# is what lies above W watts; it goes to the jobs by their CPU shares, by
# equal shares when none used any CPU (mxq_energy_attribute's rule for
# one-slot jobs).
#
# Intervals with none of the given jobs are left out; one that has both
# given jobs and others is an error (their shares are unknown).
#
# Prints "JOB ACTIVE_J MEASURED_MS" per job (MEASURED_MS: the length of
# the intervals it was in, for its share of the idle power). Why: the totals' CPU ratio is the energy
# ratio only when the shares held in every interval; on a loaded machine a
# job falls behind and catches up, and the right split follows when each
# job used its CPU, which is what this computes.
use strict;
use warnings;

my ($truth, $idle);
while (@ARGV && $ARGV[0] =~ /^--/) {
	my $o = shift @ARGV;
	if ($o eq '--truth') { $truth = shift @ARGV; }
	elsif ($o eq '--idle') { $idle = shift @ARGV; }
	else { die "split_truth.pl: unknown option $o\n"; }
}
defined $idle or die "split_truth.pl: --idle W is required\n";
my $log = shift @ARGV or die "split_truth.pl: no mxqd log given\n";
@ARGV or die "split_truth.pl: no JOB=REPORT given\n";

# a series of [x, y] points, interpolated linearly, clamped at the ends
sub series {
	my ($file, $xscale) = @_;
	open(my $f, '<', $file) or die "split_truth.pl: $file: $!\n";
	my @p;
	while (<$f>) {
		my ($x, $y) = split;
		push @p, [$x * $xscale, $y] if defined $y;
	}
	@p or die "split_truth.pl: $file: no points\n";
	return \@p;
}
sub at {
	my ($p, $x) = @_;
	return $p->[0][1] if $x <= $p->[0][0];
	for my $i (1 .. $#$p) {
		my ($a, $b) = ($p->[$i - 1], $p->[$i]);
		next if $b->[0] < $x;
		return $b->[1] if $b->[0] == $a->[0];
		return $a->[1] + ($b->[1] - $a->[1]) * ($x - $a->[0]) / ($b->[0] - $a->[0]);
	}
	return $p->[-1][1];
}

my %cpu;
for (@ARGV) {
	my ($job, $rep) = /^(\d+)=(.+)$/ or die "split_truth.pl: '$_' is not JOB=REPORT\n";
	$cpu{$job} = series($rep, 1000);
}
my $energy = defined $truth ? series($truth, 1) : undef;

# intervals in log order: END => { dt, j, jobs => [ids] }
my (%iv, @order);
open(my $f, '<', $log) or die "split_truth.pl: $log: $!\n";
while (<$f>) {
	next unless /energy: (\d+) ms to (\d+), ([\d.]+) J: job (\d+) cpu/;
	my ($dt, $end, $j, $job) = ($1, $2, $3, $4);
	push @order, $end unless $iv{$end};
	$iv{$end} ||= { dt => $dt, j => $j, jobs => [] };
	push @{$iv{$end}{jobs}}, $job;
}
@order or die "split_truth.pl: $log has no energy debug lines (run mxqd with --debug)\n";

my %want = map { $_ => 0 } keys %cpu;
my %ms = map { $_ => 0 } keys %cpu;
for my $end (@order) {
	my $v = $iv{$end};
	my $start = $end - $v->{dt};
	my $j = $energy ? (at($energy, $end) - at($energy, $start)) / 1e6 : $v->{j};
	my $active = $j - $idle * $v->{dt} / 1000;
	my (%d, $sum);
	my @known = grep { $cpu{$_} } @{$v->{jobs}};
	next unless @known;  # only jobs this run is not about
	$active = 0 if $active < 0;
	for my $job (@{$v->{jobs}}) {
		$cpu{$job} or die "split_truth.pl: job $job runs in the interval to $end with jobs that "
			. "have reports, but has none\n";
		$d{$job} = at($cpu{$job}, $end) - at($cpu{$job}, $start);
		$d{$job} = 0 if $d{$job} < 0;
		$sum += $d{$job};
	}
	for my $job (@{$v->{jobs}}) {
		$want{$job} += $active * ($sum > 0 ? $d{$job} / $sum : 1 / @{$v->{jobs}});
		$ms{$job} += $v->{dt};
	}
}
printf "%s %.4f %d\n", $_, $want{$_}, $ms{$_} for sort { $a <=> $b } keys %want;
