/*
 * mx_time - the one syntax for points in time on every command line, and
 * the one way times are printed for machines (RFC 3339 with zone).
 */
#ifndef MX_TIME_H
#define MX_TIME_H

#include <stddef.h>

/*
 * Parse a point in time into seconds since the epoch. Accepted forms:
 *   now                      NOW
 *   @EPOCH                   seconds since 1970-01-01 UTC ("@1764579600.5")
 *   DURATION or -DURATION    that long before NOW ("30m", "1h30m", "-2d";
 *                            units of mx_parse_duration_s(), a unit is
 *                            required: a bare number is refused as ambiguous)
 *   YYYY-MM-DD[( |T)HH:MM[:SS]][ZONE]
 *                            ZONE is Z, UTC, +HH:MM, +HHMM or -...; with no
 *                            zone the local time zone (TZ) applies
 * Returns 0 and sets *ret_epoch, or -EINVAL (*ret_epoch untouched).
 */
int mx_time_parse(const char *s, double now, double *ret_epoch);

/* The accepted forms in one line, for error messages and --help. */
#define MX_TIME_FORMS "now, an age like 30m or 1h30m, @EPOCH, or YYYY-MM-DD[ HH:MM[:SS]][ZONE]"

/* EPOCH as RFC 3339 in the local zone with its offset
 * ("2026-12-01T10:30:00+01:00"); "-" for epoch <= 0. Needs 26 bytes. */
void mx_time_format_rfc3339(double epoch, char *buf, size_t len);

#endif
