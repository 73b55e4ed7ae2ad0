/*
 * mxq_discover - self-discovery of a node (see mxq_discover.h).
 * Reads /proc/net/route and /sys/class/net only; no logging.
 */
#define _GNU_SOURCE
#include "mxq_discover.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int read_mac(const char *sysfs, const char *iface, char mac[18])
{
	char path[512], buf[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/net/%s/address", sysfs, iface);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (strlen(buf) != 17 || strcmp(buf, "00:00:00:00:00:00") == 0)
		return -ENOENT;
	memcpy(mac, buf, 18);
	return 0;
}

static int default_route_iface(const char *proc, char *iface, size_t len)
{
	char path[512], line[512];
	FILE *f;
	int r = -ENOENT;

	snprintf(path, sizeof(path), "%s/net/route", proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long dest, mask;
		unsigned gw, flags;

		if (sscanf(line, "%63s %lx %x %x %*d %*d %*d %lx", name, &dest, &gw, &flags, &mask) == 5 &&
		    dest == 0 && mask == 0 && (flags & 1)) {
			snprintf(iface, len, "%s", name);
			r = 0;
			break;
		}
	}
	fclose(f);
	return r;
}

int mxq_discover_mac(const char *proc_root, const char *sysfs_root, char ret_mac[18],
			    char *ret_iface, size_t iface_len)
{
	const char *proc = proc_root ? proc_root : "/proc", *sys = sysfs_root ? sysfs_root : "/sys";
	char iface[256], mac[18], path[512];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	if (default_route_iface(proc, iface, sizeof(iface)) == 0 && read_mac(sys, iface, mac) == 0) {
		r = 0;
	} else {
		snprintf(path, sizeof(path), "%s/class/net", sys);
		d = opendir(path);
		if (!d)
			return -errno;
		/* readdir order is arbitrary: take the smallest name for a stable answer */
		iface[0] = '\0';
		while ((de = readdir(d))) {
			char m[18];
			if (de->d_name[0] == '.' || strcmp(de->d_name, "lo") == 0)
				continue;
			if (read_mac(sys, de->d_name, m) == 0 &&
			    (!iface[0] || strcmp(de->d_name, iface) < 0)) {
				snprintf(iface, sizeof(iface), "%s", de->d_name);
				memcpy(mac, m, 18);
				r = 0;
			}
		}
		closedir(d);
	}
	if (r < 0)
		return r;
	memcpy(ret_mac, mac, 18);
	if (ret_iface)
		snprintf(ret_iface, iface_len, "%s", iface);
	return 0;
}
