/*
 * mxqd_power_work - the power manager's transport calls, off its main loop.
 *
 * A call to a BMC, an ssh node or a site script can take its whole timeout
 * (ipmi: timeout x attempts), and the leader's mxqd is also a node that
 * starts and reaps jobs. So every call runs in a worker process of its
 * own, forked when the leader asks for it; the worker writes its result
 * into a pipe and exits. The leader collects finished results at the start
 * of its next tick and acts on them against that tick's snapshot: a tick
 * never waits for a transport.
 *
 * Each call carries the node state (and its since) it was made for, so a
 * result that comes back after the node moved on is recognised as stale.
 * Workers are processes, not threads: the exec and ssh transports wait for
 * their own children, which a process-wide waitpid(-1) in mxqd's main loop
 * would steal from a thread, and a worker that hangs can be killed.
 */
#ifndef MXQD_POWER_WORK_H
#define MXQD_POWER_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxqd_power_transport.h"

enum mxqd_power_work_kind {
	MXQD_WORK_WAKE = 0,      /* power_on */
	MXQD_WORK_OFF_SOFT,      /* power_off(SOFT) */
	MXQD_WORK_OFF_HARD,      /* power_off(HARD) */
	MXQD_WORK_STATUS,        /* status: rc 1 on, 0 off */
	MXQD_WORK_RUN,           /* run(command) */
};

/* "wake", "power off", "hard power off", "status", "run". */
const char *mxqd_power_work_kind_to_string(enum mxqd_power_work_kind k);

/* What a call was made for: the node's state and its state_since then. */
struct mxqd_power_work_tag {
	int state;               /* enum mxq_power_node_state; -1: no state of interest */
	int64_t state_since;     /* database seconds */
};

/*
 * The fence every call carries: the leader's lease deadline on the local
 * boot-time clock (mx_now_boottime_ms: a suspend counts) and its epoch. The worker checks the deadline right
 * before it makes the call and refuses (rc -ESTALE, refused set) when it
 * has passed; the epoch is exported to the call's environment as
 * MXQ_POWER_EPOCH (exec transport commands can log who called them).
 */
struct mxqd_power_work_fence {
	uint64_t deadline_ms;    /* mx_now_boottime_ms() clock; 0: no deadline */
	uint64_t epoch;
};

struct mxqd_power_work_result {
	char hostname[256];
	enum mxqd_power_work_kind kind;
	struct mxqd_power_work_tag tag;
	struct mxqd_power_work_fence fence;
	bool refused;            /* not called: the deadline had passed (rc -ESTALE) */
	int rc;                  /* the transport's return (negative errno on failure) */
	char err[512];           /* its reason when rc < 0 */
	uint64_t ms;             /* how long the call took (measured by the worker) */
};

/*
 * Start KIND for target T through transport TR (COMMAND for RUN) in a
 * worker, fenced by FENCE. 0, or a negative errno when no worker could be
 * started (then nothing runs and errbuf says why); -ESTALE without a
 * worker when the deadline has already passed. Several calls for one host
 * may run at once (a wake must not wait for a status poll); callers that
 * poll ask mxqd_power_work_busy() first.
 *
 * A worker and everything it starts die with the process that started it:
 * the worker asks for SIGTERM on its parent's death (PR_SET_PDEATHSIG) and
 * its SIGTERM handler kills the process group of the transport command it
 * runs (exec transport) and then itself. The same SIGTERM stops a worker
 * past its hard limit (mxqd_power_work_collect).
 *
 * Fault injection for tests: MXQD_POWER_TEST_HOLD="KIND=MS[,KIND=MS...]"
 * (KIND: wake, off, status, run or any) in the starting process's
 * environment makes each such worker wait MS milliseconds between being
 * started (the intent is written) and its deadline check - a leader
 * stalled between intent and call.
 */
int mxqd_power_work_start(const struct mxqd_power_transport *tr, enum mxqd_power_work_kind kind,
			  const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
			  const char *command, struct mxqd_power_work_tag tag,
			  struct mxqd_power_work_fence fence, char *errbuf, size_t errlen);

/* Whether a call of KIND for HOSTNAME is running. */
bool mxqd_power_work_busy(const char *hostname, enum mxqd_power_work_kind kind);

/* Calls running now. */
size_t mxqd_power_work_running(void);

/*
 * The results of the calls that finished since the last collect, never
 * waiting: *ret (caller frees) and their number; 0 and *ret NULL when none
 * (or out of memory: they stay for the next collect). A worker that died
 * without a result gives -EIO; one running longer than HARD_LIMIT_MS is
 * killed and gives -ETIMEDOUT.
 */
size_t mxqd_power_work_collect(uint64_t hard_limit_ms, struct mxqd_power_work_result **ret);

/*
 * Stop every running worker with SIGTERM (its handler kills the transport
 * command's process group too) and wait until each has exited: no call of
 * this process starts after the return. Their results are dropped. For a
 * leader that gives its lease up: the workers' deadline is that of the
 * lease, which outlasts the release.
 */
void mxqd_power_work_stop_all(void);

/* Forget running workers (they finish on their own) and close their pipes. */
void mxqd_power_work_fini(void);

#endif
