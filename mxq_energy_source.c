/*
 * mxq_energy_source - reading energy sources and session CPU time (see
 * mxq_energy_source.h).
 *
 * rapl: every zone under SYSFS/class/powercap named package-N or dram;
 * core and uncore zones are inside their package and are not added again,
 * intel-rapl-mmio zones duplicate the package and are skipped. hwmon: the
 * energy*_input counters of all chips if there are any, else the sum of
 * their power*_input (or power*_average) readings. ipmi, redfish: the
 * power readings mxqd's BMC readers hand over through cfg.ipmi_watts and
 * cfg.redfish_watts (this file knows nothing of IPMI or Redfish),
 * integrated like hwmon power readings.
 *
 * Errors: negative errno; nothing here logs.
 */
#define _GNU_SOURCE
#include "mxq_energy_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mx_util.h"

static const char *const source_names[MXQ_ENERGY_SRC__COUNT] = {
	[MXQ_ENERGY_SRC_RAPL] = "rapl", [MXQ_ENERGY_SRC_HWMON] = "hwmon",
	[MXQ_ENERGY_SRC_IPMI] = "ipmi", [MXQ_ENERGY_SRC_REDFISH] = "redfish",
	[MXQ_ENERGY_SRC_MODEL] = "model",
};

const char *mxq_energy_source_kind_to_string(enum mxq_energy_source_kind k)
{
	return (unsigned)k < MXQ_ENERGY_SRC__COUNT ? source_names[k] : NULL;
}

int mxq_energy_source_list_parse(const char *list, enum mxq_energy_source_kind *ret_order,
				 size_t *ret_n, char *errbuf, size_t errlen)
{
	enum mxq_energy_source_kind order[MXQ_ENERGY_SRC__COUNT];
	char buf[128], *save = NULL, *w;
	size_t n = 0;

	if (strlen(list) >= sizeof(buf)) {
		snprintf(errbuf, errlen, "--energy-sources: '%s' is too long", list);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	if (strcmp(buf, "none") == 0) {
		*ret_n = 0;
		return 0;
	}
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t k, j;

		for (k = 0; k < MXQ_ENERGY_SRC__COUNT && strcmp(w, source_names[k]) != 0; k++)
			;
		for (j = 0; j < n && k < MXQ_ENERGY_SRC__COUNT && order[j] != k; j++)
			;
		if (k == MXQ_ENERGY_SRC__COUNT || j < n) {
			snprintf(errbuf, errlen, "--energy-sources: unknown or repeated source '%s' "
				 "(known: rapl, hwmon, ipmi, redfish, model; or none)", w);
			return -EINVAL;
		}
		order[n++] = (enum mxq_energy_source_kind)k;
	}
	if (n == 0) {
		snprintf(errbuf, errlen, "--energy-sources: '%s' names no source", list);
		return -EINVAL;
	}
	memcpy(ret_order, order, n * sizeof(*order));
	*ret_n = n;
	return 0;
}

static int read_u64_file(const char *path, uint64_t *ret)
{
	char buf[64];
	int r = mx_read_first_line(path, buf, sizeof(buf));

	if (r < 0)
		return r;
	return mx_strtou64(buf, ret);
}

static bool zone_add(struct mxq_energy_source *s, const char *path, uint64_t max_range)
{
	struct mxq_energy_zone *z;

	if (s->n_zones >= MXQ_ENERGY_MAX_ZONES || strlen(path) >= sizeof(z->path))
		return false;
	z = &s->zones[s->n_zones++];
	*z = (struct mxq_energy_zone) { .max_range = max_range };
	snprintf(z->path, sizeof(z->path), "%s", path);
	return true;
}

/* Sorted entries of DIR (a stable zone order for logs and tests); callers
 * filter by name. Returns the count or a negative errno. */
static int list_dir(const char *dir, struct dirent ***ret)
{
	int n = scandir(dir, ret, NULL, alphasort);

	return n < 0 ? -errno : n;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void free_list(struct dirent **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

static int probe_rapl(struct mxq_energy_source *s)
{
	char dir[512], path[1024], name[64];
	struct dirent **list = NULL;
	int n;

	snprintf(dir, sizeof(dir), "%s/class/powercap", s->cfg.sysfs_root);
	n = list_dir(dir, &list);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		const char *zn = list[i]->d_name;
		uint64_t v, max = 0;

		if (zn[0] == '.' || strstr(zn, "mmio"))
			continue;
		snprintf(path, sizeof(path), "%s/%s/name", dir, zn);
		if (mx_read_first_line(path, name, sizeof(name)) < 0)
			continue;
		if (!has_prefix(name, "package") && strcmp(name, "dram") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/max_energy_range_uj", dir, zn);
		if (read_u64_file(path, &max) < 0)
			max = 0;
		snprintf(path, sizeof(path), "%s/%s/energy_uj", dir, zn);
		if (read_u64_file(path, &v) < 0)
			continue;
		zone_add(s, path, max);
	}
	free_list(list, n);
	s->method = MXQ_ENERGY_METHOD_COUNTER;
	return s->n_zones ? 0 : -ENOENT;
}

/* hwmon: energy counters if any chip has them, else power readings. */
static int probe_hwmon(struct mxq_energy_source *s)
{
	static const char *const kinds[] = { "energy", "power" };
	char dir[512], cdir[800], path[1200];
	struct dirent **chips = NULL;
	int nchips;

	snprintf(dir, sizeof(dir), "%s/class/hwmon", s->cfg.sysfs_root);
	nchips = list_dir(dir, &chips);
	if (nchips < 0)
		return nchips;
	for (size_t k = 0; k < MX_ARRAY_SIZE(kinds) && s->n_zones == 0; k++) {
		for (int i = 0; i < nchips; i++) {
			struct dirent **files = NULL;
			int nf;

			if (!has_prefix(chips[i]->d_name, "hwmon"))
				continue;
			snprintf(cdir, sizeof(cdir), "%s/%s", dir, chips[i]->d_name);
			nf = list_dir(cdir, &files);
			for (int j = 0; j < nf; j++) {
				const char *fn = files[j]->d_name;
				size_t len = strlen(fn);
				uint64_t v;
				bool input = len > 6 && strcmp(fn + len - 6, "_input") == 0;
				bool average = k == 1 && len > 8 && strcmp(fn + len - 8, "_average") == 0;

				if (!has_prefix(fn, kinds[k]) || (!input && !average))
					continue;
				snprintf(path, sizeof(path), "%s/%s", cdir, fn);
				if (read_u64_file(path, &v) == 0)
					zone_add(s, path, 0);
			}
			if (nf > 0)
				free_list(files, nf);
		}
		s->method = k == 0 ? MXQ_ENERGY_METHOD_COUNTER : MXQ_ENERGY_METHOD_POWER;
	}
	free_list(chips, nchips);
	return s->n_zones ? 0 : -ENOENT;
}

/* The callback of a BMC source (ipmi, redfish), or NULL. */
static int (*bmc_watts(const struct mxq_energy_source *s))(double *)
{
	return s->kind == MXQ_ENERGY_SRC_IPMI ? s->cfg.ipmi_watts :
	       s->kind == MXQ_ENERGY_SRC_REDFISH ? s->cfg.redfish_watts : NULL;
}

int mxq_energy_source_probe(enum mxq_energy_source_kind kind,
			    const struct mxq_energy_source_config *cfg, struct mxq_energy_source *s)
{
	*s = (struct mxq_energy_source) { .kind = kind, .cfg = *cfg };
	switch (kind) {
	case MXQ_ENERGY_SRC_RAPL:
		return probe_rapl(s);
	case MXQ_ENERGY_SRC_HWMON:
		return probe_hwmon(s);
	case MXQ_ENERGY_SRC_IPMI:
	case MXQ_ENERGY_SRC_REDFISH: {
		int (*watts)(double *) = bmc_watts(s);
		double w;
		int r;

		if (!watts)
			return -ENOENT;
		r = watts(&w);
		if (r < 0)
			return r;
		s->method = MXQ_ENERGY_METHOD_POWER;
		snprintf(s->zones[0].path, sizeof(s->zones[0].path), "%s", kind == MXQ_ENERGY_SRC_IPMI ?
			 "DCMI power reading" : "Redfish chassis power reading");
		s->n_zones = 1;
		return 0;
	}
	case MXQ_ENERGY_SRC_MODEL:
		s->method = MXQ_ENERGY_METHOD_MODEL;
		return cfg->model_set ? 0 : -ENOENT;
	default:
		return -EINVAL;
	}
}

int mxq_energy_source_read(struct mxq_energy_source *s, uint64_t dt_ms, uint32_t busy_slots,
			   double *ret_j)
{
	uint64_t sum = 0;
	bool baseline = false;

	if (s->kind == MXQ_ENERGY_SRC_MODEL) {
		*ret_j = mxq_energy_model_watts(s->cfg.model_idle_w, s->cfg.model_slot_w, busy_slots) *
			 (double)dt_ms / 1000.0;
		return 0;
	}
	if (s->method == MXQ_ENERGY_METHOD_POWER) {
		double w;

		if (s->kind == MXQ_ENERGY_SRC_IPMI || s->kind == MXQ_ENERGY_SRC_REDFISH) {
			int r = bmc_watts(s) ? bmc_watts(s)(&w) : -ENOENT;
			if (r < 0) {
				s->have_prev = false;
				return r;
			}
		} else {
			for (size_t i = 0; i < s->n_zones; i++) {
				uint64_t v;
				int r = read_u64_file(s->zones[i].path, &v);
				if (r < 0) {
					s->have_prev = false;
					return r;
				}
				sum += v;
			}
			w = (double)sum / 1e6;
		}
		*ret_j = mxq_energy_trapezoid_j(s->prev_watts, w, dt_ms);
		baseline = !s->have_prev;
		s->prev_watts = w;
		s->have_prev = true;
		return baseline ? -EAGAIN : 0;
	}
	for (size_t i = 0; i < s->n_zones; i++) {
		struct mxq_energy_zone *z = &s->zones[i];
		uint64_t v, d;
		int r = read_u64_file(z->path, &v);

		if (r < 0) {
			for (size_t j = 0; j < s->n_zones; j++)
				s->zones[j].have_prev = false;
			return r;
		}
		if (!z->have_prev) {
			baseline = true;
		} else if (mxq_energy_counter_delta(z->prev, v, z->max_range, &d) == 0) {
			sum += d;
		} else {
			baseline = true; /* counter reset: this interval is unknown */
		}
		z->prev = v;
		z->have_prev = true;
	}
	*ret_j = (double)sum / 1e6;
	return baseline ? -EAGAIN : 0;
}

/* ------------------------------------------------------------ CPU by job */

/* utime + stime + cutime + cstime (µs) and session of one /proc/PID/stat. */
static int proc_stat_cpu(int procfd, const char *pid, long clk_tck, pid_t *ret_sid, uint64_t *ret_cpu_us)
{
	char path[64], buf[1024], *p;
	unsigned long long t[4];
	long sid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/stat", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* after ")": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime cutime cstime */
	if (sscanf(p + 2, "%*c %*d %*d %ld %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
		   &sid, &t[0], &t[1], &t[2], &t[3]) != 5)
		return -EINVAL;
	*ret_sid = (pid_t)sid;
	*ret_cpu_us = (t[0] + t[1] + t[2] + t[3]) * 1000000ULL / (unsigned long long)clk_tck;
	return 0;
}

/* One pass over /proc; sessions are few (the jobs of one node), so a
 * linear match per process is cheaper than anything cleverer. */
int mxq_energy_sessions_cpu(const pid_t *sids, size_t n, uint64_t *ret_cpu_us, unsigned *ret_procs)
{
	long clk_tck = sysconf(_SC_CLK_TCK);
	struct dirent *e;
	DIR *d;

	for (size_t i = 0; i < n; i++) {
		ret_cpu_us[i] = 0;
		ret_procs[i] = 0;
	}
	if (n == 0)
		return 0;
	if (clk_tck <= 0)
		clk_tck = 100;
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid_t sid;
		uint64_t cpu;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (proc_stat_cpu(dirfd(d), e->d_name, clk_tck, &sid, &cpu) < 0)
			continue; /* gone meanwhile */
		for (size_t i = 0; i < n; i++) {
			if (sids[i] == sid) {
				ret_cpu_us[i] += cpu;
				ret_procs[i]++;
			}
		}
	}
	closedir(d);
	return 0;
}
