/*
 * mxqd_cgroup - every job and every callback in a cgroup of its own.
 *
 * Layout detection (once, mxqd_cgroup_init), under the cgroup root
 * (--cgroup-root, default /sys/fs/cgroup):
 *   v2      ROOT/cgroup.controllers: the unified hierarchy does everything:
 *           membership, cgroup.kill, cpu.stat, memory.max/peak/events
 *           (when the memory controller can be enabled for our subtree;
 *           mxqd moves itself into a leaf "mxqd.daemon" if that is what
 *           the no-internal-processes rule needs, as under Delegate=yes);
 *   hybrid  ROOT/unified is cgroup2 and v1 controllers are mounted beside
 *           it: v2 for membership, cgroup.kill and cpu.stat, v1 memory
 *           (ROOT/memory) for limits, high-water mark and OOM kills;
 *   v1      no cgroup2: v1 freezer (membership and freeze-then-kill),
 *           cpuacct (CPU) and memory; with --cgroup-v2-mount DIR mxqd
 *           mounts a cgroup2 tree there instead and uses it as in hybrid;
 *   none    nothing writable: the caller keeps session-based containment.
 * A v1 hierarchy is recognised by its "tasks" file, the unified one by
 * cgroup.controllers, so the detection needs no filesystem magic numbers.
 *
 * In each hierarchy used, the daemon's parent cgroup is mxqd's own cgroup
 * there (from /proc/self/cgroup) plus NAME (mxqd_cgroup_parent_name(): host
 * name, daemon name and a hash of the spool directory), so two daemons on
 * one machine never share one, and a restarted mxqd computes the same
 * paths and finds the cgroups of the jobs it re-adopts. The daemon holds
 * an exclusive lock on each parent while it runs: a second process that
 * computed the same name is refused, so whatever is under the parent
 * belongs to this daemon (or to its earlier lives, whose reapers do not
 * hold the lock), and mxqd_cgroup_clear() may kill it. Jobs are
 * PARENT/job-ID, callbacks PARENT/callback-ID.
 *
 * Errors: functions return 0 or -errno and never log; mxqd_cgroup_init
 * describes what it found (or why containment is off) in a caller buffer.
 */
#define _GNU_SOURCE
#include "mxqd_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mx_util.h"

#define DAEMON_LEAF "mxqd.daemon"

enum hier { H_UNIFIED, H_MEMORY, H_CPUACCT, H_FREEZER, H__N };

static const char *const hier_dir[H__N] = { "unified", "memory", "cpuacct", "freezer" };
/* controller names as /proc/self/cgroup lists them ("" = the v2 line) */
static const char *const hier_ctl[H__N] = { "", "memory", "cpuacct", "freezer" };

static struct {
	const char *v2_dir;      /* mxqd_cgroup_v2_mount(): the unified tree, else ROOT/unified */
	enum mxqd_cgroup_layout layout;
	char *base[H__N];        /* daemon's parent cgroup per hierarchy, NULL = unused */
	int lock_fd[H__N];       /* its exclusive lock (flock), valid where base is held */
	bool held[H__N];
	bool v2_memory;          /* memory controller on the unified tree */
} cg;

const char *mxqd_cgroup_layout_name(enum mxqd_cgroup_layout layout)
{
	static const char *const names[] = { "none", "v2", "hybrid", "v1" };

	return (unsigned)layout < MX_ARRAY_SIZE(names) ? names[layout] : "?";
}

enum mxqd_cgroup_layout mxqd_cgroup_layout(void)
{
	return cg.layout;
}

bool mxqd_cgroup_has_memory(void)
{
	return cg.base[H_MEMORY] || cg.v2_memory;
}

/* ------------------------------------------------------------ file helpers */

static bool exists(const char *dir, const char *file)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

static int write_str(const char *dir, const char *file, const char *text)
{
	char path[4400];
	size_t len = strlen(text);
	ssize_t n;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != len)
		r = -EIO;
	close(fd);
	return r;
}

static int read_str(const char *dir, const char *file, char *buf, size_t len)
{
	char path[4400];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < len - 1 && (n = read(fd, buf + got, len - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return 0;
}

/* Value of "KEY N" in the text of a flat keyed file. */
static int find_key(const char *text, const char *key, uint64_t *ret)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			*ret = strtoull(line + klen + 1, NULL, 10);
			return 0;
		}
	}
	return -ENOENT;
}

/* Values of KEY1 and (if KEY2) KEY2 in a flat keyed file (cpu.stat,
 * memory.events, memory.oom_control), read once. */
static int read_keys(const char *dir, const char *file, const char *key1, uint64_t *ret1,
		     const char *key2, uint64_t *ret2)
{
	char buf[4096];
	int r = read_str(dir, file, buf, sizeof(buf));

	if (r < 0)
		return r;
	r = find_key(buf, key1, ret1);
	if (r == 0 && key2)
		r = find_key(buf, key2, ret2);
	return r;
}

static int read_u64(const char *dir, const char *file, uint64_t *ret)
{
	char buf[64];
	int r = read_str(dir, file, buf, sizeof(buf));

	if (r < 0)
		return r;
	*ret = strtoull(buf, NULL, 10);
	return 0;
}

/* mxqd's own cgroup in hierarchy H, from /proc/self/cgroup ("/" if unknown). */
static void own_cgroup(enum hier h, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	snprintf(buf, len, "/");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path;
		bool match = false;

		if (!ctl || !(path = strchr(++ctl, ':')))
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (h == H_UNIFIED) {
			match = ctl[0] == '\0';
		} else {
			for (char *tok = strtok(ctl, ","); tok; tok = strtok(NULL, ","))
				if (strcmp(tok, hier_ctl[h]) == 0)
					match = true;
		}
		if (match) {
			size_t n = strlen(path), d = strlen("/" DAEMON_LEAF);
			/* started inside the leaf an earlier mxqd moved itself into */
			if (n >= d && strcmp(path + n - d, "/" DAEMON_LEAF) == 0)
				path[n - d > 0 ? n - d : 1] = '\0';
			snprintf(buf, len, "%s", path);
			break;
		}
	}
	fclose(f);
}

/* Create the daemon's parent cgroup in hierarchy H mounted at MOUNT. */
static int setup_base(enum hier h, const char *mount, const char *name)
{
	char own[2048], path[4096];
	int r;

	own_cgroup(h, own, sizeof(own));
	snprintf(path, sizeof(path), "%s%s/%s", mount, strcmp(own, "/") ? own : "", name);
	r = mx_mkdir_p(path, 0755);
	if (r < 0)
		return r;
	if (access(path, W_OK) < 0)
		return -errno;
	cg.base[h] = strdup(path);
	return cg.base[h] ? 0 : -ENOMEM;
}

/*
 * v2: make the memory controller available to job cgroups: "+memory" in
 * the subtree_control of mxqd's own cgroup and of the daemon's parent. If
 * mxqd's own cgroup holds processes (EBUSY), mxqd moves itself into a
 * leaf first, as a delegated service must.
 */
static bool v2_enable_memory(const char *mount)
{
	char own[2048], dir[4096], ctl[512], leaf[4200], pid[32];
	char *parent;

	own_cgroup(H_UNIFIED, own, sizeof(own));
	snprintf(dir, sizeof(dir), "%s%s", mount, strcmp(own, "/") ? own : "");
	if (read_str(dir, "cgroup.controllers", ctl, sizeof(ctl)) < 0 || !strstr(ctl, "memory"))
		return false;
	if (write_str(dir, "cgroup.subtree_control", "+memory") == -EBUSY) {
		snprintf(leaf, sizeof(leaf), "%s/" DAEMON_LEAF, dir);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if ((mkdir(leaf, 0755) < 0 && errno != EEXIST) ||
		    write_str(leaf, "cgroup.procs", pid) < 0)
			return false;
		if (write_str(dir, "cgroup.subtree_control", "+memory") < 0)
			return false;
	}
	parent = cg.base[H_UNIFIED];
	return write_str(parent, "cgroup.subtree_control", "+memory") == 0;
}

void mxqd_cgroup_parent_name(char *buf, size_t len, const char *hostname, const char *daemon_name,
			     const char *instance)
{
	uint32_t hash = 2166136261u;  /* 32-bit FNV-1a */

	for (const unsigned char *p = (const unsigned char *)instance; *p; p++)
		hash = (hash ^ *p) * 16777619u;
	snprintf(buf, len, "mxqd-%s@%s.%08" PRIx32, hostname, daemon_name, hash);
}

/* Take the exclusive lock on every parent cgroup found. 0, -EBUSY when
 * another process holds one, or -errno. */
static int hold_bases(void)
{
	for (enum hier h = 0; h < H__N; h++) {
		int fd;

		if (!cg.base[h])
			continue;
		fd = open(cg.base[h], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int r = errno == EWOULDBLOCK ? -EBUSY : -errno;
			close(fd);
			return r;
		}
		cg.lock_fd[h] = fd;
		cg.held[h] = true;
	}
	return 0;
}

/* Let go of the parents without removing them (fini, or another's). */
static void release_bases(void)
{
	for (enum hier h = 0; h < H__N; h++) {
		if (cg.held[h])
			close(cg.lock_fd[h]);
		cg.held[h] = false;
		free(cg.base[h]);
		cg.base[h] = NULL;
	}
	cg.layout = MXQD_CGROUP_NONE;
	cg.v2_memory = false;
}

static enum mxqd_cgroup_layout detect(const char *root, const char *name, char *msg, size_t len)
{
	char mount[4096];
	int r;

	if (exists(root, "cgroup.controllers")) {
		r = setup_base(H_UNIFIED, root, name);
		if (r < 0) {
			snprintf(msg, len, "cgroup v2 at %s is not writable (%s): no cgroup containment, "
				 "jobs are contained by their session", root, strerror(-r));
			return cg.layout = MXQD_CGROUP_NONE;
		}
		cg.v2_memory = v2_enable_memory(root);
		snprintf(msg, len, "cgroup v2 at %s: jobs in %s/job-ID%s", root, cg.base[H_UNIFIED],
			 cg.v2_memory ? "" : " (memory controller not delegated: limits by polling)");
		return cg.layout = MXQD_CGROUP_V2;
	}
	snprintf(mount, sizeof(mount), "%s/unified", root);
	if (cg.v2_dir)
		snprintf(mount, sizeof(mount), "%s", cg.v2_dir);
	if (exists(mount, "cgroup.controllers") && setup_base(H_UNIFIED, mount, name) == 0) {
		snprintf(mount, sizeof(mount), "%s/memory", root);
		if (exists(mount, "tasks"))
			setup_base(H_MEMORY, mount, name);
		snprintf(msg, len, "cgroup hybrid layout at %s%s%s: jobs in %s/job-ID (membership, kill, "
			 "cpu.stat)%s%s%s", root, cg.v2_dir ? " and " : "", cg.v2_dir ? cg.v2_dir : "",
			 cg.base[H_UNIFIED],
			 cg.base[H_MEMORY] ? ", memory limits in " : ", no writable v1 memory: limits by polling",
			 cg.base[H_MEMORY] ? cg.base[H_MEMORY] : "", cg.base[H_MEMORY] ? "/job-ID" : "");
		return cg.layout = MXQD_CGROUP_HYBRID;
	}
	for (enum hier h = H_MEMORY; h < H__N; h++) {
		snprintf(mount, sizeof(mount), "%s/%s", root, hier_dir[h]);
		if (exists(mount, "tasks"))
			setup_base(h, mount, name);
	}
	if (cg.base[H_FREEZER] || cg.base[H_CPUACCT] || cg.base[H_MEMORY]) {
		char path[4096];

		mxqd_cgroup_path(&(struct mxqd_cgroup) { "job-ID" }, path, sizeof(path));
		snprintf(msg, len, "cgroup v1 at %s (no cgroup2 tree): jobs in %s; freezer %s, "
			 "cpuacct %s, memory %s", root, path, cg.base[H_FREEZER] ? "yes" : "no",
			 cg.base[H_CPUACCT] ? "yes" : "no", cg.base[H_MEMORY] ? "yes" : "no");
		return cg.layout = MXQD_CGROUP_V1;
	}
	snprintf(msg, len, "no writable cgroup tree under %s: no cgroup containment, jobs are contained "
		 "by their session (daemonised processes can escape; run mxqd as root with a delegated "
		 "cgroup, see mxqd(8))", root);
	return cg.layout = MXQD_CGROUP_NONE;
}

int mxqd_cgroup_init(const char *root, const char *name, enum mxqd_cgroup_layout *ret_layout,
		     char *msg, size_t len)
{
	enum mxqd_cgroup_layout layout = detect(root, name, msg, len);
	int r;

	if (layout != MXQD_CGROUP_NONE && (r = hold_bases()) < 0) {
		char path[4096];
		size_t n;

		mxqd_cgroup_path(&(struct mxqd_cgroup) { "" }, path, sizeof(path));
		n = strlen(path);
		if (n > 1 && path[n - 1] == '/')
			path[n - 1] = '\0';   /* "PARENT/" of the empty leaf */
		snprintf(msg, len, "%s is %s: it cannot be this daemon's alone (another mxqd with the "
			 "same --hostname, --daemon-name and --spool?)", path,
			 r == -EBUSY ? "held by another running process" : strerror(-r));
		release_bases();
		return r;
	}
	*ret_layout = layout;
	return 0;
}

int mxqd_cgroup_v2_mount(const char *root, const char *dir)
{
	char unified[4096];
	int r;

	snprintf(unified, sizeof(unified), "%s/unified", root);
	if (exists(root, "cgroup.controllers") || exists(unified, "cgroup.controllers"))
		return -EEXIST;
	r = mx_mkdir_p(dir, 0755);
	if (r < 0)
		return r;
	if (!exists(dir, "cgroup.controllers") && mount("none", dir, "cgroup2", 0, NULL) < 0)
		return -errno;
	cg.v2_dir = dir;
	return 0;
}

void mxqd_cgroup_fini(void)
{
	for (enum hier h = 0; h < H__N; h++)
		if (cg.held[h])
			rmdir(cg.base[h]);
	release_bases();
}

/* ------------------------------------------------------------- per cgroup */

void mxqd_cgroup_job(struct mxqd_cgroup *c, uint64_t job_id)
{
	snprintf(c->leaf, sizeof(c->leaf), "job-%" PRIu64, job_id);
}

void mxqd_cgroup_callback(struct mxqd_cgroup *c, uint64_t job_id)
{
	snprintf(c->leaf, sizeof(c->leaf), "callback-%" PRIu64, job_id);
}

static void dir_of(const struct mxqd_cgroup *c, enum hier h, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", cg.base[h], c->leaf);
}

/* The hierarchy that says which processes are in the cgroup. */
static int main_hier(void)
{
	static const enum hier order[] = { H_UNIFIED, H_FREEZER, H_MEMORY, H_CPUACCT };

	for (size_t i = 0; i < MX_ARRAY_SIZE(order); i++)
		if (cg.base[order[i]])
			return (int)order[i];
	return -1;
}

void mxqd_cgroup_path(const struct mxqd_cgroup *c, char *buf, size_t len)
{
	int h = main_hier();

	if (h < 0)
		snprintf(buf, len, "(none)");
	else
		dir_of(c, (enum hier)h, buf, len);
}

static int set_memory_limits(const struct mxqd_cgroup *c, uint64_t soft, uint64_t hard)
{
	char dir[4096], s_num[32], h_num[32];
	int r;

	snprintf(s_num, sizeof(s_num), "%" PRIu64, soft);
	snprintf(h_num, sizeof(h_num), "%" PRIu64, hard);
	if (cg.base[H_MEMORY]) {
		dir_of(c, H_MEMORY, dir, sizeof(dir));
		r = hard ? write_str(dir, "memory.limit_in_bytes", h_num) : 0;
		if (r == 0 && hard)  /* only with swap accounting */
			write_str(dir, "memory.memsw.limit_in_bytes", h_num);
		if (r == 0 && soft)
			r = write_str(dir, "memory.soft_limit_in_bytes", s_num);
		return r;
	}
	if (cg.v2_memory) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		r = hard ? write_str(dir, "memory.max", h_num) : 0;
		if (r == 0 && hard)  /* only with swap */
			write_str(dir, "memory.swap.max", "0");
		if (r == 0 && soft && soft < hard)
			r = write_str(dir, "memory.high", s_num);
		return r;
	}
	return 0;
}

int mxqd_cgroup_create(const struct mxqd_cgroup *c, uint64_t soft_bytes, uint64_t hard_bytes)
{
	char dir[4096];
	int r = 0;

	if (main_hier() < 0)
		return -ENOTSUP;
	/* a directory left by an earlier life of this node (the job id used
	 * again after a crash, or with a new database) still carries its
	 * limits, freezer state and charged memory, which killed a new job
	 * at once: start from a fresh one; one with processes in it is not
	 * ours to take (-EBUSY) */
	r = mxqd_cgroup_remove(c);
	if (r < 0)
		return r;
	for (enum hier h = 0; h < H__N && r == 0; h++) {
		if (!cg.base[h])
			continue;
		dir_of(c, h, dir, sizeof(dir));
		if (mkdir(dir, 0755) < 0)
			r = -errno;
	}
	if (r == 0 && (soft_bytes || hard_bytes))
		r = set_memory_limits(c, soft_bytes, hard_bytes);
	if (r < 0)
		mxqd_cgroup_remove(c);
	return r;
}

bool mxqd_cgroup_exists(const struct mxqd_cgroup *c)
{
	char dir[4096];
	int h = main_hier();

	if (h < 0)
		return false;
	dir_of(c, (enum hier)h, dir, sizeof(dir));
	return access(dir, F_OK) == 0;
}

/* Join the hierarchies in use, the unified one unless WITH_V2 is false. */
static int join(const struct mxqd_cgroup *c, bool with_v2)
{
	char dir[4096];
	int r;

	for (enum hier h = 0; h < H__N; h++) {
		if (!cg.base[h] || (h == H_UNIFIED && !with_v2))
			continue;
		dir_of(c, h, dir, sizeof(dir));
		r = write_str(dir, "cgroup.procs", "0");
		if (r < 0)
			return r;
	}
	return 0;
}

int mxqd_cgroup_join(const struct mxqd_cgroup *c)
{
	return join(c, true);
}

int mxqd_cgroup_join_rest(const struct mxqd_cgroup *c)
{
	return join(c, false);
}

int mxqd_cgroup_v2_fd(const struct mxqd_cgroup *c)
{
	char dir[4096];
	int fd;

	if (!cg.base[H_UNIFIED])
		return -ENOTSUP;
	dir_of(c, H_UNIFIED, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Call FN for every process listed in hierarchy H; returns how many FN
 * counted (returned true for) or -errno. */
static int each_pid_in(const struct mxqd_cgroup *c, enum hier h, bool (*fn)(pid_t pid, void *ctx),
		       void *ctx)
{
	char dir[4096], path[4200], line[32];
	int n = 0;
	FILE *f;

	dir_of(c, h, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int pid = atoi(line);
		if (pid > 1 && fn((pid_t)pid, ctx))
			n++;
	}
	fclose(f);
	return n;
}

/* each_pid_in() the main hierarchy, the one that says who is in the cgroup. */
static int each_pid(const struct mxqd_cgroup *c, bool (*fn)(pid_t pid, void *ctx), void *ctx)
{
	int h = main_hier();

	return h < 0 ? -ENOTSUP : each_pid_in(c, (enum hier)h, fn, ctx);
}

static bool signal_pid(pid_t pid, void *ctx)
{
	int sig = *(const int *)ctx;

	return sig == 0 || kill(pid, sig) == 0;
}

/* Send SIG (0: none) to every process listed in the main hierarchy;
 * returns how many there were (signalled) or -errno. */
static int each_proc(const struct mxqd_cgroup *c, int sig)
{
	return each_pid(c, signal_pid, &sig);
}

/* Add the resident pages of PID (as the session poll reads them). */
static bool add_rss_pages(pid_t pid, void *ctx)
{
	struct mx_proc_stat st;

	if (mx_proc_stat_read(pid, &st) < 0)
		return false;   /* gone meanwhile */
	*(uint64_t *)ctx += st.rss_pages;
	return true;
}

int mxqd_cgroup_signal(const struct mxqd_cgroup *c, int sig)
{
	return each_proc(c, sig);
}

int mxqd_cgroup_rss_kib(const struct mxqd_cgroup *c, uint64_t *ret_kib)
{
	uint64_t pages = 0;
	int r = each_pid(c, add_rss_pages, &pages);

	if (r < 0)
		return r;
	*ret_kib = mx_pages_kib(pages);
	return 0;
}

int mxqd_cgroup_kill(const struct mxqd_cgroup *c, unsigned timeout_ms)
{
	char dir[4096], state[32];
	uint64_t deadline = mx_now_monotonic_ms() + timeout_ms;
	bool frozen = false;

	if (main_hier() < 0)
		return -ENOTSUP;
	if (cg.base[H_UNIFIED]) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		if (write_str(dir, "cgroup.kill", "1") < 0)
			each_proc(c, SIGKILL);   /* kernel before 5.14 */
	} else if (cg.base[H_FREEZER]) {
		/* frozen processes cannot fork while they are being killed */
		dir_of(c, H_FREEZER, dir, sizeof(dir));
		if (write_str(dir, "freezer.state", "FROZEN") == 0) {
			for (unsigned i = 0; i < 100; i++) {
				if (read_str(dir, "freezer.state", state, sizeof(state)) < 0 ||
				    strncmp(state, "FROZEN", 6) == 0)
					break;
				mx_sleep_ms(1);
			}
			frozen = true;
		}
		each_proc(c, SIGKILL);
		if (frozen)
			write_str(dir, "freezer.state", "THAWED");
	}
	for (unsigned step = 1;; step = step < 32 ? step * 2 : step) {
		int n = each_proc(c, 0);

		if (n <= 0)
			return n == -ENOENT ? 0 : n < 0 ? n : 0;
		if (mx_now_monotonic_ms() >= deadline)
			return -EBUSY;
		each_proc(c, SIGKILL);  /* forked after the kill, or no cgroup.kill */
		mx_sleep_ms(step);
	}
}

int mxqd_cgroup_remove(const struct mxqd_cgroup *c)
{
	char dir[4096];
	int first = 0;

	for (enum hier h = 0; h < H__N; h++) {
		if (!cg.base[h])
			continue;
		dir_of(c, h, dir, sizeof(dir));
		/* an exiting process keeps the cgroup busy for a moment */
		for (unsigned i = 0; rmdir(dir) < 0; i++) {
			if (errno == ENOENT)
				break;
			if (errno != EBUSY || i >= 200) {
				if (!first)
					first = -errno;
				break;
			}
			mx_sleep_ms(5);
		}
	}
	return first;
}

int mxqd_cgroup_clear(const struct mxqd_cgroup *c, unsigned timeout_ms)
{
	int kill_sig = SIGKILL, n, main = main_hier();

	if (main < 0)
		return -ENOTSUP;
	n = each_pid(c, signal_pid, &(int) { 0 });
	if (n == -ENOENT)
		n = 0;
	if (n < 0)
		return n;
	if (n > 0 && mxqd_cgroup_kill(c, timeout_ms) < 0)
		return -EBUSY;
	/* a process that left the main hierarchy's cgroup but not another's
	 * (only root can move it so) keeps that one busy */
	for (enum hier h = 0; h < H__N; h++)
		if (cg.base[h] && (int)h != main)
			each_pid_in(c, h, signal_pid, &kill_sig);
	return mxqd_cgroup_remove(c) < 0 ? -EBUSY : n;
}

int mxqd_cgroup_stats(const struct mxqd_cgroup *c, struct mxqd_cgroup_stats *ret)
{
	struct mxqd_cgroup_stats st = { 0 };
	char dir[4096];

	if (main_hier() < 0)
		return -ENOTSUP;
	if (cg.base[H_UNIFIED]) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		st.have_cpu = read_keys(dir, "cpu.stat", "user_usec", &st.user_us,
					"system_usec", &st.system_us) == 0;
	} else if (cg.base[H_CPUACCT]) {
		dir_of(c, H_CPUACCT, dir, sizeof(dir));
		st.have_cpu = read_u64(dir, "cpuacct.usage_user", &st.user_us) == 0 &&
			      read_u64(dir, "cpuacct.usage_sys", &st.system_us) == 0;
		st.user_us /= 1000;
		st.system_us /= 1000;
	}
	if (cg.base[H_MEMORY]) {
		dir_of(c, H_MEMORY, dir, sizeof(dir));
		st.have_memory = read_u64(dir, "memory.max_usage_in_bytes", &st.memory_peak_bytes) == 0;
	} else if (cg.v2_memory) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		st.have_memory = read_u64(dir, "memory.peak", &st.memory_peak_bytes) == 0;
	}
	st.oom_kills = mxqd_cgroup_oom_kills(c);
	*ret = st;
	return 0;
}

uint64_t mxqd_cgroup_oom_kills(const struct mxqd_cgroup *c)
{
	char dir[4096];
	uint64_t v = 0;

	if (cg.base[H_MEMORY]) {
		dir_of(c, H_MEMORY, dir, sizeof(dir));
		read_keys(dir, "memory.oom_control", "oom_kill", &v, NULL, NULL);
	} else if (cg.v2_memory) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		read_keys(dir, "memory.events", "oom_kill", &v, NULL, NULL);
	}
	return v;
}

int mxqd_cgroup_cpu_open(const struct mxqd_cgroup *c)
{
	char dir[4096], path[4200];
	int fd;

	if (cg.base[H_UNIFIED]) {
		dir_of(c, H_UNIFIED, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	} else if (cg.base[H_CPUACCT]) {
		dir_of(c, H_CPUACCT, dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
	} else {
		return -ENOTSUP;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mxqd_cgroup_job_cpu_open(uint64_t job_id)
{
	struct mxqd_cgroup c;

	if (cg.layout == MXQD_CGROUP_NONE)
		return -ENOTSUP;
	mxqd_cgroup_job(&c, job_id);
	return mxqd_cgroup_cpu_open(&c);
}

int mxqd_cgroup_cpu_read(int fd, uint64_t *ret_us)
{
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	if (strncmp(buf, "usage_usec ", 11) == 0)
		*ret_us = strtoull(buf + 11, NULL, 10);        /* v2 cpu.stat */
	else
		*ret_us = strtoull(buf, NULL, 10) / 1000;      /* v1 cpuacct.usage, ns */
	return 0;
}
