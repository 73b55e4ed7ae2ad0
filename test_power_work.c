/*
 * test_power_work - transport calls in worker processes (mxqd_power_work.c)
 * with a fake transport whose behaviour depends on the host name: results
 * and reasons come back with their tags, calls run side by side, a worker
 * that dies or hangs is reported, not waited for.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mx_util.h"
#include "mxqd_power_transport.h"
#include "mxqd_power_work.h"

static int fake_status(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		       char *errbuf, size_t errlen)
{
	(void)c;
	if (strcmp(t->hostname, "on") == 0) {
		usleep(200 * 1000);
		return 1;
	}
	if (strcmp(t->hostname, "off") == 0)
		return 0;
	if (strcmp(t->hostname, "silent") == 0) {
		snprintf(errbuf, errlen, "BMC of silent did not answer within 2000 ms");
		return -ETIMEDOUT;
	}
	if (strcmp(t->hostname, "crash") == 0)
		raise(SIGKILL);
	if (strcmp(t->hostname, "hang") == 0)
		for (;;)
			pause();
	if (strcmp(t->hostname, "epoch") == 0)
		return getenv("MXQ_POWER_EPOCH") ? atoi(getenv("MXQ_POWER_EPOCH")) : -ENOENT;
	if (strcmp(t->hostname, "slow") == 0) {
		/* a read that takes a while, then says it ended ($SLOW_FILE) */
		usleep(800 * 1000);
		FILE *f = fopen(getenv("SLOW_FILE"), "w");
		if (f)
			fclose(f);
		return 1;
	}
	if (strcmp(t->hostname, "orphan") == 0) {
		/* a command in its own group, as the exec transport runs it:
		 * both PIDs go into the file $ORPHAN_PIDS, then both hang */
		pid_t child = fork();
		if (child == 0) {
			setpgid(0, 0);
			for (;;)
				pause();
		}
		setpgid(child, child);
		mxqd_power_child_pgid = child;
		FILE *f = fopen(getenv("ORPHAN_PIDS"), "w");
		if (f) {
			fprintf(f, "%d %d\n", (int)getpid(), (int)child);
			fclose(f);
		}
		for (;;)
			pause();
	}
	return -EINVAL;
}

static int fake_run(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		    const char *command, char *errbuf, size_t errlen)
{
	(void)t;
	(void)c;
	if (strcmp(command, "mark") == 0) {
		/* a call that acts after a moment ($MARK_FILE) */
		usleep(300 * 1000);
		FILE *f = fopen(getenv("MARK_FILE"), "w");
		if (f)
			fclose(f);
		return 0;
	}
	snprintf(errbuf, errlen, "ran '%s'", command);
	return strcmp(command, "drain") == 0 ? 0 : -EIO;
}

static const struct mxqd_power_transport fake = {
	.name = "fake", .status = fake_status, .run = fake_run,
};

static const struct mxqd_power_transport_config cfg;

static int start_fenced(const char *host, enum mxqd_power_work_kind kind, int state,
			const char *command, uint64_t deadline_ms, char *err, size_t errlen)
{
	struct mxqd_power_target t = { .hostname = host };
	struct mxqd_power_work_tag tag = { .state = state, .state_since = 1000 + state };
	struct mxqd_power_work_fence fence = { .deadline_ms = deadline_ms, .epoch = 7 };

	return mxqd_power_work_start(&fake, kind, &t, &cfg, command, tag, fence, err, errlen);
}

static void start(const char *host, enum mxqd_power_work_kind kind, int state, const char *command)
{
	char err[256] = "";

	ck_assert_msg(start_fenced(host, kind, state, command, mx_now_boottime_ms() + 60000, err,
				   sizeof(err)) == 0, "start %s: %s", host, err);
}

/* Collect until N results are in (bounded): all of them in *ret. */
static size_t collect_all(size_t n, uint64_t limit_ms, struct mxqd_power_work_result *ret)
{
	uint64_t end = mx_now_monotonic_ms() + 5000;
	size_t got = 0;

	while (got < n && mx_now_monotonic_ms() < end) {
		struct mxqd_power_work_result *r = NULL;
		size_t k = mxqd_power_work_collect(limit_ms, &r);

		for (size_t i = 0; i < k && got < n; i++)
			ret[got++] = r[i];
		free(r);
		if (got < n)
			usleep(20 * 1000);
	}
	return got;
}

static const struct mxqd_power_work_result *find(const struct mxqd_power_work_result *r, size_t n,
						 const char *host)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(r[i].hostname, host) == 0)
			return &r[i];
	ck_abort_msg("no result for %s", host);
	return NULL;
}

START_TEST(test_results_and_tags)
{
	struct mxqd_power_work_result r[8];
	const struct mxqd_power_work_result *x;
	uint64_t t0 = mx_now_monotonic_ms();

	start("on", MXQD_WORK_STATUS, 1, NULL);
	start("off", MXQD_WORK_STATUS, 2, NULL);
	start("silent", MXQD_WORK_STATUS, 3, NULL);
	start("crash", MXQD_WORK_STATUS, 4, NULL);
	/* starting returns at once, whatever the calls do */
	ck_assert_uint_lt(mx_now_monotonic_ms() - t0, 150);
	ck_assert_uint_eq(mxqd_power_work_running(), 4);
	ck_assert(mxqd_power_work_busy("on", MXQD_WORK_STATUS));
	ck_assert(!mxqd_power_work_busy("on", MXQD_WORK_WAKE));
	ck_assert(!mxqd_power_work_busy("elsewhere", MXQD_WORK_STATUS));

	ck_assert_uint_eq(collect_all(4, 60000, r), 4);
	ck_assert_uint_eq(mxqd_power_work_running(), 0);
	x = find(r, 4, "on");
	ck_assert_int_eq(x->rc, 1);
	ck_assert_int_eq(x->kind, MXQD_WORK_STATUS);
	ck_assert_int_eq(x->tag.state, 1);
	ck_assert_int_eq(x->tag.state_since, 1001);
	ck_assert_uint_ge(x->ms, 190);          /* measured by the worker */
	x = find(r, 4, "off");
	ck_assert_int_eq(x->rc, 0);
	ck_assert_int_eq(x->tag.state, 2);
	x = find(r, 4, "silent");
	ck_assert_int_eq(x->rc, -ETIMEDOUT);
	ck_assert_str_eq(x->err, "BMC of silent did not answer within 2000 ms");
	x = find(r, 4, "crash");
	ck_assert_int_eq(x->rc, -EIO);
	ck_assert_ptr_nonnull(strstr(x->err, "ended without a result"));
}
END_TEST

START_TEST(test_hanging_worker_killed)
{
	struct mxqd_power_work_result r[1];

	start("hang", MXQD_WORK_STATUS, 5, NULL);
	usleep(300 * 1000);
	ck_assert_uint_eq(collect_all(1, 200, r), 1);
	ck_assert_int_eq(r[0].rc, -ETIMEDOUT);
	ck_assert_ptr_nonnull(strstr(r[0].err, "transport worker killed"));
	ck_assert_uint_eq(mxqd_power_work_running(), 0);
}
END_TEST

START_TEST(test_run_and_unsupported)
{
	struct mxqd_power_work_result r[3];

	start("a", MXQD_WORK_RUN, 1, "drain");
	start("b", MXQD_WORK_RUN, 1, "other");
	start("c", MXQD_WORK_WAKE, 1, NULL);   /* fake has no power_on */
	ck_assert_uint_eq(collect_all(3, 60000, r), 3);
	ck_assert_int_eq(find(r, 3, "a")->rc, 0);
	ck_assert_int_eq(find(r, 3, "b")->rc, -EIO);
	ck_assert_str_eq(find(r, 3, "b")->err, "ran 'other'");
	ck_assert_int_eq(find(r, 3, "c")->rc, -ENOTSUP);
	ck_assert_str_eq(find(r, 3, "c")->err, "transport fake cannot wake");
}
END_TEST

START_TEST(test_fence)
{
	struct mxqd_power_work_result r[2];
	char err[256] = "";

	/* past the deadline already: no worker at all */
	ck_assert_int_eq(start_fenced("off", MXQD_WORK_STATUS, 1, NULL, mx_now_boottime_ms() - 1,
				      err, sizeof(err)), -ESTALE);
	ck_assert_ptr_nonnull(strstr(err, "epoch 7"));
	ck_assert_uint_eq(mxqd_power_work_running(), 0);

	/* held between intent and call past the deadline: refused in the worker */
	setenv("MXQD_POWER_TEST_HOLD", "wake=0,status=400", 1);
	ck_assert_int_eq(start_fenced("off", MXQD_WORK_STATUS, 2, NULL, mx_now_boottime_ms() + 150,
				      err, sizeof(err)), 0);
	unsetenv("MXQD_POWER_TEST_HOLD");
	start("epoch", MXQD_WORK_STATUS, 3, NULL);
	ck_assert_uint_eq(collect_all(2, 60000, r), 2);
	ck_assert_int_eq(find(r, 2, "off")->rc, -ESTALE);
	ck_assert(find(r, 2, "off")->refused);
	ck_assert_ptr_nonnull(strstr(find(r, 2, "off")->err, "refused: the lease of epoch 7 ended"));
	ck_assert_uint_eq(find(r, 2, "off")->fence.epoch, 7);
	/* the epoch reaches the call's environment */
	ck_assert_int_eq(find(r, 2, "epoch")->rc, 7);
	ck_assert(!find(r, 2, "epoch")->refused);
}
END_TEST

/* True while PID exists (a zombie counts as gone). */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return false;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

START_TEST(test_dies_with_its_leader)
{
	char path[] = "/tmp/test_power_work.XXXXXX";
	int fd = mkstemp(path), worker = 0, child = 0;
	uint64_t end;
	pid_t leader;

	/* a "leader" that starts a worker whose command hangs, then dies */
	ck_assert_int_ge(fd, 0);
	setenv("ORPHAN_PIDS", path, 1);
	leader = fork();
	ck_assert_int_ge(leader, 0);
	if (leader == 0) {
		start("orphan", MXQD_WORK_STATUS, 1, NULL);
		sleep(1);
		_exit(0);
	}
	end = mx_now_monotonic_ms() + 5000;
	while (mx_now_monotonic_ms() < end) {
		FILE *f = fopen(path, "r");
		int got = f ? fscanf(f, "%d %d", &worker, &child) : 0;

		if (f)
			fclose(f);
		if (got == 2)
			break;
		usleep(20 * 1000);
	}
	close(fd);
	unlink(path);
	ck_assert_msg(worker > 0 && child > 0, "the orphan call did not start");
	ck_assert(pid_alive(worker) && pid_alive(child));
	waitpid(leader, NULL, 0);
	/* the worker and the command's own process group die with it */
	end = mx_now_monotonic_ms() + 5000;
	while ((pid_alive(worker) || pid_alive(child)) && mx_now_monotonic_ms() < end)
		usleep(20 * 1000);
	ck_assert_msg(!pid_alive(worker), "worker %d outlived its leader", worker);
	ck_assert_msg(!pid_alive(child), "command %d outlived the leader", child);
}
END_TEST

/* A stopping leader lets a read of a power state end, but kills every
 * other call at once: not after the read's grace. */
START_TEST(test_stop_all_lets_reads_end)
{
	char slow[] = "/tmp/test_power_work.slow.XXXXXX", mark[] = "/tmp/test_power_work.mark.XXXXXX";
	int fd_slow = mkstemp(slow), fd_mark = mkstemp(mark);
	uint64_t t0;

	ck_assert_int_ge(fd_slow, 0);
	ck_assert_int_ge(fd_mark, 0);
	close(fd_slow);
	close(fd_mark);
	unlink(slow);
	unlink(mark);
	setenv("SLOW_FILE", slow, 1);
	setenv("MARK_FILE", mark, 1);
	start("slow", MXQD_WORK_STATUS, 1, NULL);
	start("act", MXQD_WORK_RUN, 1, "mark");
	usleep(50 * 1000);  /* both in their calls */
	t0 = mx_now_monotonic_ms();
	mxqd_power_work_stop_all();
	ck_assert_uint_eq(mxqd_power_work_running(), 0);
	ck_assert_msg(access(slow, F_OK) == 0, "the read was killed before it ended");
	ck_assert_uint_lt(mx_now_monotonic_ms() - t0, 3000);
	usleep(500 * 1000);  /* past the moment the other call would act */
	ck_assert_msg(access(mark, F_OK) != 0, "the other call ran on during the read's grace");
	unlink(slow);
	unlink(mark);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}
END_TEST

START_TEST(test_nothing_to_collect)
{
	struct mxqd_power_work_result *r = (void *)1;

	ck_assert_uint_eq(mxqd_power_work_collect(1000, &r), 0);
	ck_assert_ptr_null(r);
	mxqd_power_work_fini();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("power_work");
	TCase *tc = tcase_create("workers");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_results_and_tags);
	tcase_add_test(tc, test_hanging_worker_killed);
	tcase_add_test(tc, test_run_and_unsupported);
	tcase_add_test(tc, test_fence);
	tcase_add_test(tc, test_dies_with_its_leader);
	tcase_add_test(tc, test_stop_all_lets_reads_end);
	tcase_add_test(tc, test_nothing_to_collect);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
