/*
 * bench.h - clocks shared by the bench_*.c benchmarks.
 */
#ifndef BENCH_H
#define BENCH_H

#include <sys/resource.h>
#include <time.h>

/* Monotonic wall clock in microseconds. */
static inline double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* CPU time (user + system) of this process in microseconds. */
static inline double cpu_us(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

#endif
