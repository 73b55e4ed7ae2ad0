/*
 * bench_cgroup - what cgroup containment costs mxqd: the per-job CPU
 * reading of an energy sample (cgroup counters against the /proc session
 * scan it replaces) and the life cycle of one job cgroup (create with a
 * memory limit, join, kill, remove) that every job start and end adds.
 *
 * Needs root and a writable cgroup tree (MXQ_CGROUP_ROOT, default
 * /sys/fs/cgroup); without one it says so and measures only the scan.
 * Creates its cgroups under mxqd-bench-PID and removes them. Prints
 * figures, never fails on timing.
 *
 *   bench_cgroup [JOBS [ROUNDS]]     defaults 32 and 2000
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "mx_util.h"
#include "mxq_energy_source.h"
#include "mxqd_cgroup.h"

/* A child in a session of its own (and in cgroup CG if given) that waits. */
static pid_t spawn_waiter(const struct mxqd_cgroup *cg)
{
	pid_t pid = fork();

	if (pid == 0) {
		setsid();
		if (cg && mxqd_cgroup_join(cg) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	unsigned jobs = argc > 1 ? (unsigned)atoi(argv[1]) : 32;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	const char *root = getenv("MXQ_CGROUP_ROOT");
	struct mxqd_cgroup *cgs;
	enum mxqd_cgroup_layout layout = MXQD_CGROUP_NONE;
	char name[64], msg[4096];
	pid_t *children;
	uint64_t *cpu, v;
	unsigned *procs;
	int *fds;
	double t0, c0, scan_cpu, scan_wall, cg_cpu = 0, cg_wall = 0, life[4] = { 0 };
	unsigned life_n = 0;

	if (jobs == 0 || rounds == 0) {
		fprintf(stderr, "usage: bench_cgroup [JOBS [ROUNDS]]\n");
		return 1;
	}
	snprintf(name, sizeof(name), "mxqd-bench-%d", (int)getpid());
	if (geteuid() == 0)
		mxqd_cgroup_init(root ? root : MXQD_CGROUP_DEFAULT_ROOT, name, &layout, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "not root: no cgroups");
	children = calloc(jobs, sizeof(*children));
	cpu = calloc(jobs, sizeof(*cpu));
	procs = calloc(jobs, sizeof(*procs));
	fds = calloc(jobs, sizeof(*fds));
	cgs = calloc(jobs, sizeof(*cgs));
	if (!children || !cpu || !procs || !fds || !cgs)
		return 1;

	for (unsigned i = 0; i < jobs; i++) {
		bool in_cg = false;

		fds[i] = -1;
		mxqd_cgroup_job(&cgs[i], 1000000 + i);
		if (layout != MXQD_CGROUP_NONE)
			in_cg = mxqd_cgroup_create(&cgs[i], 256ULL << 20, 256ULL << 20) == 0;
		children[i] = spawn_waiter(in_cg ? &cgs[i] : NULL);
		if (in_cg)
			fds[i] = mxqd_cgroup_cpu_open(&cgs[i]);
	}
	usleep(100000); /* let the children reach pause() */

	/* 1. today's fallback: the /proc scan for the sessions of JOBS jobs */
	c0 = cpu_us();
	t0 = now_us();
	for (unsigned r = 0; r < rounds / 10 + 1; r++)
		mxq_energy_sessions_cpu(children, jobs, cpu, procs);
	scan_wall = (now_us() - t0) / (rounds / 10 + 1);
	scan_cpu = (cpu_us() - c0) / (rounds / 10 + 1);

	/* 2. the cgroup counters of the same jobs */
	if (layout != MXQD_CGROUP_NONE && fds[0] >= 0) {
		c0 = cpu_us();
		t0 = now_us();
		for (unsigned r = 0; r < rounds; r++)
			for (unsigned i = 0; i < jobs; i++)
				mxqd_cgroup_cpu_read(fds[i], &v);
		cg_wall = (now_us() - t0) / rounds;
		cg_cpu = (cpu_us() - c0) / rounds;
	}

	for (unsigned i = 0; i < jobs; i++) {
		if (children[i] > 0)
			kill(children[i], SIGKILL);
		if (children[i] > 0)
			waitpid(children[i], NULL, 0);
		if (fds[i] >= 0)
			close(fds[i]);
		if (layout != MXQD_CGROUP_NONE)
			mxqd_cgroup_remove(&cgs[i]);
	}

	/* 3. one job cgroup's life: create + limit, a process joins, kill, remove */
	if (layout != MXQD_CGROUP_NONE) {
		unsigned n = rounds / 20 + 1;

		for (unsigned r = 0; r < n; r++) {
			struct mxqd_cgroup c;
			double t[5];
			pid_t pid;

			mxqd_cgroup_job(&c, 2000000 + r);
			t[0] = now_us();
			if (mxqd_cgroup_create(&c, 256ULL << 20, 256ULL << 20) < 0)
				break;
			t[1] = now_us();
			pid = spawn_waiter(&c);
			while (mxqd_cgroup_signal(&c, 0) == 0)
				;       /* until it has joined */
			t[2] = now_us();
			mxqd_cgroup_kill(&c, 5000);
			waitpid(pid, NULL, 0);
			t[3] = now_us();
			mxqd_cgroup_remove(&c);
			t[4] = now_us();
			for (unsigned k = 0; k < 4; k++)
				life[k] += t[k + 1] - t[k];
			life_n++;
		}
		for (unsigned k = 0; k < 4; k++)
			life[k] = life_n ? life[k] / life_n : 0;
		mxqd_cgroup_fini();
	}

	printf("cgroups: layout %s: %s\n", mxqd_cgroup_layout_name(layout), msg);
	printf("per-job CPU for one energy sample (%u jobs, %u rounds):\n", jobs, rounds);
	printf("  /proc session scan     %8.1f us CPU  %8.1f us wall  (fallback)\n", scan_cpu, scan_wall);
	if (cg_wall > 0)
		printf("  cgroup CPU counters    %8.1f us CPU  %8.1f us wall  (%.1fx less than the scan)\n",
		       cg_cpu, cg_wall, scan_wall / cg_wall);
	if (life_n)
		printf("job cgroup life, wall per job (%u jobs): create + memory limit %.0f us, "
		       "fork + join %.0f us, kill %.0f us, remove %.0f us\n",
		       life_n, life[0], life[1], life[2], life[3]);
	free(children);
	free(cpu);
	free(procs);
	free(fds);
	free(cgs);
	return 0;
}
