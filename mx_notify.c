/*
 * mx_notify - the sd_notify(3) protocol written out: one datagram with the
 * state text to the AF_UNIX socket in $NOTIFY_SOCKET (a path, or an
 * abstract name when it starts with '@').
 *
 * Written here rather than linking libsystemd: the protocol is one
 * sendto(2), mxqd then runs unchanged where systemd is absent (containers,
 * other init systems) and the binaries need no further library. Only the
 * text protocol is used (no file descriptor passing, no barrier).
 *
 * Errors: negative errno; nothing is logged here.
 */
#define _GNU_SOURCE
#include "mx_notify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int mx_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len, state_len = strlen(state);
	socklen_t salen;
	ssize_t n;
	int fd, r = 1;

	if (!path || !*path)
		return 0;
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, len);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (path[0] == '/'));

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, state_len, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != state_len)
		r = -EMSGSIZE;
	close(fd);
	return r;
}
