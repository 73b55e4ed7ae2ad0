/*
 * mxqd_power_retry - the retry loop shared by the BMC transports (ipmi,
 * redfish): an attempt repeated while it fails in a way a later attempt
 * can cure (a timeout; for redfish also a refused connection or a busy
 * BMC), never after a rejected login; and the call's time bound, which
 * the attempts keep to (mxqd_power_call_deadline_ms). See
 * mxqd_power_transport.h.
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mx_util.h"

static uint64_t call_deadline_ms;

uint64_t mxqd_power_call_deadline_ms(void)
{
	return call_deadline_ms;
}

static int retry_loop(mxqd_power_attempt_fn attempt, const struct mxqd_power_target *t,
		      const struct mxqd_power_transport_config *c, int op, unsigned retries,
		      bool (*retryable)(int r), unsigned nap_ms, char *errbuf, size_t errlen)
{
	unsigned tries = retries + 1;
	int r = -EIO;

	for (unsigned i = 0; i < tries; i++) {
		if (i && nap_ms)
			mx_sleep_ms(nap_ms);
		r = attempt(t, c, op, errbuf, errlen);
		if (!retryable(r))
			return r;
	}
	if (tries > 1) {
		size_t l = strlen(errbuf);
		snprintf(errbuf + l, errlen - l, " (%u attempts)", tries);
	}
	return r;
}

int mxqd_power_retry(mxqd_power_attempt_fn attempt, const struct mxqd_power_target *t,
		     const struct mxqd_power_transport_config *c, int op, unsigned retries,
		     bool (*retryable)(int r), unsigned nap_ms, uint64_t bound_ms, char *errbuf,
		     size_t errlen)
{
	int r;

	call_deadline_ms = mx_now_boottime_ms() + bound_ms;
	r = retry_loop(attempt, t, c, op, retries, retryable, nap_ms, errbuf, errlen);
	call_deadline_ms = 0;
	return r;
}
