/*
 * bench_energy - what one energy sample costs mxqd, and the memory of its
 * sample buffer.
 *
 * Times, with CPU time (getrusage) and wall time, the three parts of a
 * sample as mxqd takes it: reading the source (a fake powercap tree with
 * two packages and two DRAM zones in a temporary directory, the same code
 * as on a real node), scanning /proc for the CPU time of N job sessions
 * (N children of this process, each in a session of its own), and
 * splitting the interval among N jobs. Prints the ring buffer's bytes per
 * sample and per hour at the default 1 s interval. Never fails on timing.
 *
 *   bench_energy [JOBS [ROUNDS]]     defaults 32 and 2000
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "mx_util.h"
#include "mxq_energy.h"
#include "mxq_energy_source.h"

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

/* SYS/class/powercap with intel-rapl:0, :1 (packages), :0:0 (core, not
 * counted) and :0:1, :1:1 (dram). */
static int fake_powercap(const char *sys)
{
	static const char *const zones[][2] = {
		{ "intel-rapl:0", "package-0" }, { "intel-rapl:1", "package-1" },
		{ "intel-rapl:0:0", "core" }, { "intel-rapl:0:1", "dram" }, { "intel-rapl:1:1", "dram" },
	};
	char dir[1024];

	for (size_t i = 0; i < MX_ARRAY_SIZE(zones); i++) {
		snprintf(dir, sizeof(dir), "%s/class/powercap/%s", sys, zones[i][0]);
		if (mx_mkdir_p(dir, 0755) < 0 || write_file(dir, "name", zones[i][1]) < 0 ||
		    write_file(dir, "energy_uj", "123456789\n") < 0 ||
		    write_file(dir, "max_energy_range_uj", "262143328850\n") < 0)
			return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned jobs = argc > 1 ? (unsigned)atoi(argv[1]) : 32;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	char tmpl[] = "/tmp/bench_energy.XXXXXX";
	struct mxq_energy_source src;
	struct mxq_energy_source_config cfg = { 0 };
	struct mxq_energy_share_in *in;
	struct mxq_energy_share_out *out;
	pid_t *children;
	uint64_t *cpu;
	unsigned *procs;
	double t0, c0, read_cpu, read_wall, proc_cpu, proc_wall, attr_cpu, un, j;
	size_t sample_bytes = sizeof(struct mxq_energy_sample);

	if (jobs == 0 || rounds == 0 || !mkdtemp(tmpl)) {
		fprintf(stderr, "usage: bench_energy [JOBS [ROUNDS]] (and a writable /tmp)\n");
		return 1;
	}
	if (fake_powercap(tmpl) < 0) {
		fprintf(stderr, "bench_energy: cannot build the fake powercap tree in %s\n", tmpl);
		mx_rmtree(tmpl);
		return 1;
	}
	cfg.sysfs_root = tmpl;
	if (mxq_energy_source_probe(MXQ_ENERGY_SRC_RAPL, &cfg, &src) < 0) {
		fprintf(stderr, "bench_energy: the fake powercap tree does not probe\n");
		mx_rmtree(tmpl);
		return 1;
	}

	children = calloc(jobs, sizeof(*children));
	cpu = calloc(jobs, sizeof(*cpu));
	procs = calloc(jobs, sizeof(*procs));
	in = calloc(jobs, sizeof(*in));
	out = calloc(jobs, sizeof(*out));
	if (!children || !cpu || !procs || !in || !out)
		return 1;
	for (unsigned i = 0; i < jobs; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			setsid();
			pause();
			_exit(0);
		}
		children[i] = pid > 0 ? pid : 0;
	}
	usleep(100000); /* let the children reach setsid() */

	/* 1. the source: 4 counter files per sample */
	mxq_energy_source_read(&src, 0, 0, &j);
	c0 = cpu_us();
	t0 = now_us();
	for (unsigned r = 0; r < rounds; r++)
		mxq_energy_source_read(&src, 1000, 0, &j);
	read_wall = (now_us() - t0) / rounds;
	read_cpu = (cpu_us() - c0) / rounds;

	/* 2. the /proc scan for the sessions of JOBS jobs */
	c0 = cpu_us();
	t0 = now_us();
	for (unsigned r = 0; r < rounds / 10 + 1; r++)
		mxq_energy_sessions_cpu(children, jobs, cpu, procs);
	proc_wall = (now_us() - t0) / (rounds / 10 + 1);
	proc_cpu = (cpu_us() - c0) / (rounds / 10 + 1);

	/* 3. the split among JOBS jobs */
	for (unsigned i = 0; i < jobs; i++)
		in[i] = (struct mxq_energy_share_in) { 1 + i % 4, 1000 * (i + 1), true };
	c0 = cpu_us();
	for (unsigned r = 0; r < rounds * 10; r++)
		mxq_energy_attribute(300.0 + r % 7, 1000, 80, 4 * jobs, in, jobs, out, &un);
	attr_cpu = (cpu_us() - c0) / (rounds * 10);

	for (unsigned i = 0; i < jobs; i++)
		if (children[i] > 0)
			kill(children[i], SIGKILL);
	for (unsigned i = 0; i < jobs; i++)
		if (children[i] > 0)
			waitpid(children[i], NULL, 0);
	mx_rmtree(tmpl);

	printf("energy sample cost (%u jobs, %zu counter files, %u rounds):\n", jobs, src.n_zones, rounds);
	printf("  source read (rapl)     %8.1f us CPU  %8.1f us wall\n", read_cpu, read_wall);
	printf("  /proc session scan     %8.1f us CPU  %8.1f us wall  (%u job sessions, all processes)\n",
	       proc_cpu, proc_wall, jobs);
	printf("  attribution            %8.2f us CPU\n", attr_cpu);
	printf("  total per sample       %8.1f us CPU = %.3f %% of one core at 1 sample/s\n",
	       read_cpu + proc_cpu + attr_cpu, (read_cpu + proc_cpu + attr_cpu) / 1e4);
	printf("ring buffer: %zu bytes per sample, %zu bytes per hour at 1 s (%.1f KiB); "
	       "default --energy-buffer 3600 s\n", sample_bytes, sample_bytes * 3600,
	       sample_bytes * 3600 / 1024.0);
	printf("per running job: %zu bytes of accumulator state\n", sizeof(struct mxq_energy_job_acc));
	free(children);
	free(cpu);
	free(procs);
	free(in);
	free(out);
	return 0;
}
