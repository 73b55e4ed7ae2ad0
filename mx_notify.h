/*
 * mx_notify - tell the service manager about the daemon's state
 * (the sd_notify(3) datagram protocol of systemd).
 */
#ifndef MX_NOTIFY_H
#define MX_NOTIFY_H

/*
 * Send STATE (newline-separated assignments such as "READY=1" or
 * "STOPPING=1") to the socket named by $NOTIFY_SOCKET. Returns 1 when sent,
 * 0 when no service manager listens ($NOTIFY_SOCKET unset), negative errno
 * on failure. Never logs.
 */
int mx_notify(const char *state);

#endif
