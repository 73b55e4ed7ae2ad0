/*
 * mx_sockguard - a deadline for what a server's clients must send.
 *
 * libmicrohttpd's connection timeout only closes a connection that is
 * silent for that long; a client that sends a header line every few
 * seconds keeps its connection, and enough of them keep every slot. Here a
 * registered connection must reach its milestone (for mxq-web: its
 * request's headers are complete) within DEADLINE of being accepted or
 * re-armed, else its socket is shut down (shutdown(2), both ways), which
 * the server sees as the client leaving, so it closes the connection. And
 * while every slot is taken and a client waits in the listen queue, the
 * connection that has waited longest for its milestone is shut once it has
 * waited GRACE: a newcomer waits about GRACE, not DEADLINE.
 *
 * One thread sleeps until the next deadline or an event (an eventfd, and
 * the listen socket while every slot is taken); nothing polls on a timer.
 *
 * Closing races: a socket is shut only under the guard's lock and only
 * while it is registered, and the server unregisters it
 * (mx_sockguard_remove()) before it closes it, so the descriptor shut is
 * never one that was closed and reused. (libmicrohttpd sends
 * MHD_CONNECTION_NOTIFY_CLOSED before it closes the socket, on every path.)
 *
 * Errors: negative errno from new/start; nothing here logs.
 */
#ifndef MX_SOCKGUARD_H
#define MX_SOCKGUARD_H

#include <stdbool.h>
#include <stdint.h>

struct mx_sockguard_config {
	uint64_t deadline_ms; /* the milestone is due this long after arming */
	uint64_t grace_ms;    /* to make room, shut only one that waited this long */
	unsigned slots;       /* connections the server holds at most */
};

/* What the guard does next (mx_sockguard_plan()). */
enum mx_sockguard_action {
	MX_SOCKGUARD_SLEEP,        /* until wake_at or an event */
	MX_SOCKGUARD_SHUT_LATE,    /* shut the longest waiting: past its deadline */
	MX_SOCKGUARD_SHUT_ROOM,    /* shut the longest waiting: a newcomer needs its slot */
};
/* "sleep", "late", "room"; "?" out of range. */
const char *mx_sockguard_action_name(enum mx_sockguard_action a);

struct mx_sockguard_plan {
	enum mx_sockguard_action action;
	bool watch_queue; /* SLEEP: wake too when a client waits in the listen queue */
	uint64_t wake_at; /* SLEEP: look again then (UINT64_MAX: on an event only) */
};

/*
 * The decision, pure: WAITING whether any connection waits for its
 * milestone, OLDEST_SINCE since when the longest waiting one does, FULL
 * whether every slot is taken, QUEUED whether a client waits in the listen
 * queue (only looked at when FULL), NOW the clock of OLDEST_SINCE.
 */
struct mx_sockguard_plan mx_sockguard_plan(const struct mx_sockguard_config *cfg, bool waiting,
					   uint64_t oldest_since, bool full, bool queued,
					   uint64_t now);

struct mx_sockguard;
struct mx_sockguard_entry;

/* A guard with CFG, not yet running: 0, or -ENOMEM/-EINVAL/-errno
 * (deadline 0 or slots 0 is -EINVAL). *RET untouched on failure. */
int mx_sockguard_new(const struct mx_sockguard_config *cfg, struct mx_sockguard **ret);
/*
 * Start the guard's thread. LISTEN_FD, the server's listening socket, is
 * only ever polled for a waiting client (-1: never make room, deadlines
 * only). 0 or -errno.
 */
int mx_sockguard_start(struct mx_sockguard *g, int listen_fd);
/* Stop and join the thread (NULL-safe, idempotent); the calls below still
 * work afterwards, nothing is shut any more. */
void mx_sockguard_stop(struct mx_sockguard *g);
/* Free G (NULL-safe): after stop, once every entry is removed. */
void mx_sockguard_free(struct mx_sockguard *g);

/*
 * Register socket FD, armed: its milestone is due DEADLINE from now. NULL
 * when out of memory (the connection is then not guarded). Thread-safe, as
 * are the calls below.
 */
struct mx_sockguard_entry *mx_sockguard_add(struct mx_sockguard *g, int fd);
/* E reached its milestone: no deadline until armed again (NULL-safe). */
void mx_sockguard_disarm(struct mx_sockguard *g, struct mx_sockguard_entry *e);
/* E waits for its next milestone, due DEADLINE from now (also when it was
 * armed already); no-op once E was shut (NULL-safe). */
void mx_sockguard_arm(struct mx_sockguard *g, struct mx_sockguard_entry *e);
/* Unregister and free E (NULL-safe): before the server closes its socket. */
void mx_sockguard_remove(struct mx_sockguard *g, struct mx_sockguard_entry *e);

struct mx_sockguard_stats {
	unsigned open;      /* registered now */
	unsigned waiting;   /* of them armed */
	uint64_t shut_late; /* shut so far past their deadline */
	uint64_t shut_room; /* shut so far to make room */
};
void mx_sockguard_stats(struct mx_sockguard *g, struct mx_sockguard_stats *ret);

#endif
