#!/bin/sh
# gen_swf.sh - write a synthetic SWF workload trace to stdout, for the
# power simulator's benchmark (make bench-sim) and for checking a policy on
# traces it was not tuned on. Deterministic for given arguments.
#
# usage: sh tests/gen_swf.sh SEED DAYS NODES CORES JOBS_PER_DAY SHAPE
#   SHAPE  steady   Poisson arrivals, run times log-uniform 1 min .. 1 day,
#                   mostly 1-core jobs, a few whole-node ones
#          bursty   arrivals in bursts around working hours (day/night and
#                   week cycle), same job mix
#          wide     like steady, a third of the jobs are gangs of 2..16 nodes
# Requested times are the run time times a random factor 1..5 (users ask
# for more than they use), at least 5 minutes.
set -eu
[ $# -eq 6 ] || { echo "usage: sh tests/gen_swf.sh SEED DAYS NODES CORES JOBS_PER_DAY steady|bursty|wide" >&2; exit 2; }
case $6 in steady|bursty|wide) ;; *) echo "gen_swf.sh: unknown shape '$6': use steady, bursty or wide" >&2; exit 2 ;; esac
exec awk -v seed="$1" -v days="$2" -v nodes="$3" -v cores="$4" -v rate="$5" -v shape="$6" '
function expo(mean) { return -mean * log(1 - rand()) }
function busy_weight(t,    h, d) {          # relative arrival rate at time t
	h = (t % 86400) / 3600; d = int(t / 86400) % 7
	if (d >= 5) return 0.3
	return (h >= 8 && h < 19) ? 2.2 : 0.4
}
BEGIN {
	srand(seed)
	printf "; Version: 2.2\n; Computer: synthetic (%s, seed %d)\n", shape, seed
	printf "; MaxNodes: %d\n; MaxProcs: %d\n; UnixStartTime: 1000000000\n", nodes, nodes * cores
	end = days * 86400; mean_gap = 86400 / rate; t = 0; id = 0
	while (1) {
		t += expo(mean_gap)
		if (shape == "bursty") {
			# thinning: accept with the relative rate of that hour
			while (rand() * 2.2 > busy_weight(t)) t += expo(mean_gap)
		}
		if (t >= end) break
		id++
		run = int(exp(log(60) + rand() * (log(86400) - log(60))))
		req = int(run * (1 + 4 * rand())); if (req < 300) req = 300
		u = rand()
		if (shape == "wide" && u < 0.33) procs = cores * (2 + int(rand() * 15))
		else if (u > 0.95) procs = cores
		else procs = 1 + (rand() < 0.2 ? int(rand() * cores) : 0)
		if (procs > nodes * cores) procs = nodes * cores
		printf "%d %d -1 %d %d -1 -1 %d %d -1 1 %d 1 -1 1 1 -1 -1\n", id, int(t), run, procs, procs, req, 1 + id % 50
	}
}'
