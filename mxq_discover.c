/*
 * mxq_discover - self-discovery of a node (see mxq_discover.h).
 * Reads /proc/net/route, /sys/class/net and /sys/firmware/dmi/entries
 * only; no logging.
 *
 * SMBIOS type 42 (DSP0270): byte 4 interface type (0x40 network host
 * interface), byte 5 the length N of the interface data that follows, then
 * the number of protocol records, each: protocol type (0x04 Redfish over
 * IP), data length, data. Redfish over IP data: service UUID (16), host IP
 * assignment type, host IP address format, host IP address (16), host mask
 * (16), service IP discovery type, service IP address format (1 IPv4,
 * 2 IPv6), service IP address (16, IPv4 in the first 4), service mask
 * (16), service port (2, little endian), VLAN (4), hostname length and
 * hostname.
 */
#define _GNU_SOURCE
#include "mxq_discover.h"

#include <arpa/inet.h>
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

#define HI_NETWORK 0x40
#define PROTO_REDFISH_OVER_IP 0x04
#define RFIP_ADDR_FORMAT 51       /* offsets in the Redfish over IP data */
#define RFIP_ADDR 52
#define RFIP_PORT 84
#define RFIP_MIN_LEN 91

int mxq_discover_redfish_parse(const unsigned char *raw, size_t len, char *ret, size_t retlen)
{
	char ip[INET6_ADDRSTRLEN];
	size_t off, n_records;
	int n;

	if (len >= 1 && raw[0] != 42)
		return -ENOENT;
	if (len < 7 || raw[1] > len)
		return -EPROTO;
	len = raw[1];           /* the formatted area; strings follow it */
	if (raw[4] != HI_NETWORK)
		return -ENOENT;
	off = 6 + (size_t)raw[5];
	if (off >= len)
		return -EPROTO;
	n_records = raw[off++];
	for (size_t i = 0; i < n_records; i++) {
		const unsigned char *d;
		unsigned char type;
		size_t dlen;
		unsigned port;

		if (off + 2 > len)
			return -EPROTO;
		type = raw[off];
		dlen = raw[off + 1];
		d = raw + off + 2;
		if (off + 2 + dlen > len)
			return -EPROTO;
		off += 2 + dlen;
		if (type != PROTO_REDFISH_OVER_IP)
			continue;
		if (dlen < RFIP_MIN_LEN)
			return -EPROTO;
		port = (unsigned)d[RFIP_PORT] | (unsigned)d[RFIP_PORT + 1] << 8;
		if (d[RFIP_ADDR_FORMAT] == 1) {
			if (!(d[RFIP_ADDR] | d[RFIP_ADDR + 1] | d[RFIP_ADDR + 2] | d[RFIP_ADDR + 3]))
				return -EADDRNOTAVAIL;
			inet_ntop(AF_INET, d + RFIP_ADDR, ip, sizeof(ip));
			n = snprintf(ret, retlen, "%s:%u", ip, port ? port : 443);
		} else if (d[RFIP_ADDR_FORMAT] == 2) {
			static const unsigned char zero[16];

			if (memcmp(d + RFIP_ADDR, zero, 16) == 0)
				return -EADDRNOTAVAIL;
			inet_ntop(AF_INET6, d + RFIP_ADDR, ip, sizeof(ip));
			n = snprintf(ret, retlen, "[%s]:%u", ip, port ? port : 443);
		} else {
			return -EADDRNOTAVAIL;
		}
		return n < 0 || (size_t)n >= retlen ? -ENOSPC : 0;
	}
	return -ENOENT;
}

int mxq_discover_redfish(const char *sysfs_root, char *ret, size_t retlen)
{
	const char *sys = sysfs_root ? sysfs_root : "/sys";
	int best = -ENOENT;

	for (int i = 0; i < 16; i++) {
		unsigned char raw[1024];
		char path[512];
		size_t n;
		FILE *f;
		int r;

		snprintf(path, sizeof(path), "%s/firmware/dmi/entries/42-%d/raw", sys, i);
		f = fopen(path, "re");
		if (!f)
			break;
		n = fread(raw, 1, sizeof(raw), f);
		fclose(f);
		r = mxq_discover_redfish_parse(raw, n, ret, retlen);
		if (r == 0)
			return 0;
		if (best == -ENOENT)
			best = r;
	}
	return best;
}
