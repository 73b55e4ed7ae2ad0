/*
 * mx_sockguard - deadlines for connections to reach a milestone (see
 * mx_sockguard.h). The armed entries form a list in the order they were
 * armed, so its head is always the one that has waited longest: the thread
 * looks at the head only, and every call is O(1).
 *
 * Configuration: mx_sockguard_config (deadline, grace, slots). Errors:
 * negative errno from new/start; a failed shutdown(2) (the peer is gone
 * already) needs nothing: the server sees the socket close either way.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mx_sockguard.h"
#include "mx_util.h"

enum entry_state { ENTRY_WAITING, ENTRY_BUSY, ENTRY_SHUT };

struct mx_sockguard_entry {
	struct mx_sockguard_entry *prev, *next; /* in the armed list, while WAITING */
	int fd;
	uint64_t since;                         /* armed at (monotonic ms) */
	enum entry_state state;
};

struct mx_sockguard {
	struct mx_sockguard_config cfg;
	pthread_mutex_t lock;
	struct mx_sockguard_entry *head, *tail; /* armed, longest waiting first */
	unsigned open;                          /* registered */
	unsigned waiting;                       /* in the armed list */
	unsigned shut_open;                     /* shut, not yet removed */
	uint64_t shut_late, shut_room;
	int wake_fd;                            /* eventfd: something changed */
	int listen_fd;
	bool running, stopping;
	pthread_t thread;
};

static const char *const action_names[] = {
	[MX_SOCKGUARD_SLEEP] = "sleep",
	[MX_SOCKGUARD_SHUT_LATE] = "late",
	[MX_SOCKGUARD_SHUT_ROOM] = "room",
};

const char *mx_sockguard_action_name(enum mx_sockguard_action a)
{
	return (unsigned)a < MX_ARRAY_SIZE(action_names) ? action_names[a] : "?";
}

struct mx_sockguard_plan mx_sockguard_plan(const struct mx_sockguard_config *cfg, bool waiting,
					   uint64_t oldest_since, bool full, bool queued,
					   uint64_t now)
{
	struct mx_sockguard_plan p = { .action = MX_SOCKGUARD_SLEEP, .wake_at = UINT64_MAX };
	uint64_t due, room_at;

	if (!waiting)
		return p;               /* arming one is an event */
	due = oldest_since + cfg->deadline_ms;
	room_at = oldest_since + cfg->grace_ms;
	if (now >= due) {
		p.action = MX_SOCKGUARD_SHUT_LATE;
		return p;
	}
	p.wake_at = due;
	if (!full)
		return p;
	if (!queued) {
		p.watch_queue = true;   /* a client arriving is the event */
		return p;
	}
	if (now >= room_at) {
		p.action = MX_SOCKGUARD_SHUT_ROOM;
		return p;
	}
	/* the queue stays readable: watching it would spin until room_at */
	if (room_at < p.wake_at)
		p.wake_at = room_at;
	return p;
}

/* ------------------------------------------------------------------ */
/* the armed list (under g->lock)                                      */

static void list_append(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	e->prev = g->tail;
	e->next = NULL;
	if (g->tail)
		g->tail->next = e;
	else
		g->head = e;
	g->tail = e;
	g->waiting++;
}

static void list_unlink(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		g->tail = e->prev;
	e->prev = e->next = NULL;
	g->waiting--;
}

static void wake(struct mx_sockguard *g)
{
	uint64_t one = 1;
	ssize_t n = write(g->wake_fd, &one, sizeof(one));

	(void)n; /* EAGAIN: the counter is full, so the thread wakes anyway */
}

static bool is_full(const struct mx_sockguard *g)
{
	/* shut ones still hold their slot until the server closes them, but
	 * are gone as far as making room is concerned */
	return g->listen_fd >= 0 && g->open - g->shut_open >= g->cfg.slots;
}

/* Arm E (not in the list): due DEADLINE from now. */
static void arm_locked(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	bool was_empty = !g->head;

	e->state = ENTRY_WAITING;
	e->since = mx_now_monotonic_ms();
	list_append(g, e);
	if (was_empty)
		wake(g);        /* the thread slept without a deadline */
}

/* ------------------------------------------------------------------ */
/* the thread                                                          */

static bool queue_has_client(int listen_fd)
{
	struct pollfd p = { .fd = listen_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

static void shut(struct mx_sockguard *g, struct mx_sockguard_entry *e,
		 enum mx_sockguard_action why)
{
	list_unlink(g, e);
	e->state = ENTRY_SHUT;
	g->shut_open++;
	if (why == MX_SOCKGUARD_SHUT_LATE)
		g->shut_late++;
	else
		g->shut_room++;
	/* E is registered, so its descriptor is still the connection's */
	shutdown(e->fd, SHUT_RDWR);
}

static void *guard_main(void *arg)
{
	struct mx_sockguard *g = arg;
	struct mx_sockguard_plan p;
	struct pollfd fds[2];
	uint64_t now, drain;
	bool full;
	int timeout;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		now = mx_now_monotonic_ms();
		full = is_full(g);
		p = mx_sockguard_plan(&g->cfg, g->head != NULL, g->head ? g->head->since : 0, full,
				      full && queue_has_client(g->listen_fd), now);
		if (p.action != MX_SOCKGUARD_SLEEP) {
			shut(g, g->head, p.action);
			continue;
		}
		pthread_mutex_unlock(&g->lock);
		fds[0] = (struct pollfd){ .fd = g->wake_fd, .events = POLLIN };
		fds[1] = (struct pollfd){ .fd = g->listen_fd, .events = POLLIN };
		if (p.wake_at == UINT64_MAX)
			timeout = -1;
		else
			timeout = p.wake_at - now > 60000 ? 60000 : (int)(p.wake_at - now);
		if (poll(fds, p.watch_queue ? 2 : 1, timeout) > 0 && (fds[0].revents & POLLIN)) {
			ssize_t n = read(g->wake_fd, &drain, sizeof(drain));
			(void)n;
		}
		pthread_mutex_lock(&g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* life                                                                */

int mx_sockguard_new(const struct mx_sockguard_config *cfg, struct mx_sockguard **ret)
{
	struct mx_sockguard *g;
	int e;

	if (!cfg->deadline_ms || !cfg->slots)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->cfg = *cfg;
	g->listen_fd = -1;
	g->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->wake_fd < 0) {
		e = -errno;
		free(g);
		return e;
	}
	e = pthread_mutex_init(&g->lock, NULL);
	if (e) {
		close(g->wake_fd);
		free(g);
		return -e;
	}
	*ret = g;
	return 0;
}

int mx_sockguard_start(struct mx_sockguard *g, int listen_fd)
{
	int e;

	if (g->running)
		return -EALREADY;
	pthread_mutex_lock(&g->lock);
	g->listen_fd = listen_fd;
	g->stopping = false;
	pthread_mutex_unlock(&g->lock);
	e = pthread_create(&g->thread, NULL, guard_main, g);
	if (e)
		return -e;
	g->running = true;
	return 0;
}

void mx_sockguard_stop(struct mx_sockguard *g)
{
	if (!g || !g->running)
		return;
	pthread_mutex_lock(&g->lock);
	g->stopping = true;
	pthread_mutex_unlock(&g->lock);
	wake(g);
	pthread_join(g->thread, NULL);
	g->running = false;
}

void mx_sockguard_free(struct mx_sockguard *g)
{
	if (!g)
		return;
	mx_sockguard_stop(g);
	pthread_mutex_destroy(&g->lock);
	close(g->wake_fd);
	free(g);
}

/* ------------------------------------------------------------------ */
/* entries                                                             */

struct mx_sockguard_entry *mx_sockguard_add(struct mx_sockguard *g, int fd)
{
	struct mx_sockguard_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = fd;
	pthread_mutex_lock(&g->lock);
	g->open++;
	arm_locked(g, e);
	if (is_full(g))
		wake(g);        /* from now on a client in the queue matters */
	pthread_mutex_unlock(&g->lock);
	return e;
}

void mx_sockguard_disarm(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	if (e->state == ENTRY_WAITING) {
		list_unlink(g, e);
		e->state = ENTRY_BUSY;
	}
	pthread_mutex_unlock(&g->lock);
}

void mx_sockguard_arm(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	if (e->state == ENTRY_WAITING)
		list_unlink(g, e);      /* armed again: a fresh deadline */
	if (e->state != ENTRY_SHUT)
		arm_locked(g, e);
	pthread_mutex_unlock(&g->lock);
}

void mx_sockguard_remove(struct mx_sockguard *g, struct mx_sockguard_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	if (e->state == ENTRY_WAITING)
		list_unlink(g, e);
	else if (e->state == ENTRY_SHUT)
		g->shut_open--;
	g->open--;
	pthread_mutex_unlock(&g->lock);
	free(e);
}

void mx_sockguard_stats(struct mx_sockguard *g, struct mx_sockguard_stats *ret)
{
	pthread_mutex_lock(&g->lock);
	*ret = (struct mx_sockguard_stats){
		.open = g->open, .waiting = g->waiting,
		.shut_late = g->shut_late, .shut_room = g->shut_room,
	};
	pthread_mutex_unlock(&g->lock);
}
