/*
 * mxqd_power_retry - the retry loop shared by the BMC transports (ipmi,
 * redfish): an attempt repeated while it fails in a way a later attempt
 * can cure (a timeout; for redfish also a refused connection or a busy
 * BMC), never after a rejected login. See mxqd_power_transport.h.
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int mxqd_power_retry(mxqd_power_attempt_fn attempt, const struct mxqd_power_target *t,
		     const struct mxqd_power_transport_config *c, int op, unsigned retries,
		     bool (*retryable)(int r), unsigned nap_ms, char *errbuf, size_t errlen)
{
	unsigned tries = retries + 1;
	int r = -EIO;

	for (unsigned i = 0; i < tries; i++) {
		if (i && nap_ms) {
			struct timespec ts = { nap_ms / 1000, (long)(nap_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
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
