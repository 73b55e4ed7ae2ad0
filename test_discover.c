/*
 * test_discover - the node's MAC discovery (mxq_discover.c) on fake /proc
 * and /sys trees: the default route's interface wins, else the first
 * non-loopback interface with a MAC, never lo or an all-zero address;
 * the Redfish host interface (SMBIOS type 42) parsed from built structures,
 * table driven, and found in a fake /sys/firmware/dmi tree.
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mxq_discover.h"

static char root[] = "/tmp/test_discover.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static const char *route_hdr =
	"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";

START_TEST(default_route_interface)
{
	char proc[300], sys[300], mac[18], iface[64];
	char route[1024];

	snprintf(route, sizeof(route), "%s%s%s", route_hdr,
		 "eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n",
		 "eth1\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n");
	put("a/proc/net/route", route);
	put("a/sys/class/net/lo/address", "00:00:00:00:00:00\n");
	put("a/sys/class/net/eth0/address", "52:54:00:00:00:01\n");
	put("a/sys/class/net/eth1/address", "52:54:00:00:00:02\n");
	snprintf(proc, sizeof(proc), "%s/a/proc", root);
	snprintf(sys, sizeof(sys), "%s/a/sys", root);
	ck_assert_int_eq(mxq_discover_mac(proc, sys, mac, iface, sizeof(iface)), 0);
	ck_assert_str_eq(mac, "52:54:00:00:00:02");
	ck_assert_str_eq(iface, "eth1");
}
END_TEST

START_TEST(no_default_route)
{
	char proc[300], sys[300], mac[18], iface[64];

	put("b/proc/net/route", route_hdr);
	put("b/sys/class/net/lo/address", "00:00:00:00:00:00\n");
	put("b/sys/class/net/ens9/address", "52:54:00:00:00:09\n");
	put("b/sys/class/net/ens3/address", "52:54:00:00:00:03\n");
	put("b/sys/class/net/tun0/address", "00:00:00:00:00:00\n");
	snprintf(proc, sizeof(proc), "%s/b/proc", root);
	snprintf(sys, sizeof(sys), "%s/b/sys", root);
	ck_assert_int_eq(mxq_discover_mac(proc, sys, mac, iface, sizeof(iface)), 0);
	ck_assert_str_eq(iface, "ens3");
	ck_assert_str_eq(mac, "52:54:00:00:00:03");
}
END_TEST

START_TEST(nothing_found)
{
	char proc[300], sys[300], mac[18] = "untouched";

	put("c/proc/net/route", route_hdr);
	put("c/sys/class/net/lo/address", "00:00:00:00:00:00\n");
	snprintf(proc, sizeof(proc), "%s/c/proc", root);
	snprintf(sys, sizeof(sys), "%s/c/sys", root);
	ck_assert_int_eq(mxq_discover_mac(proc, sys, mac, NULL, 0), -ENOENT);
	ck_assert_str_eq(mac, "untouched");
}
END_TEST

/* An SMBIOS type 42 structure: network host interface (3 bytes of device
 * data), a record of type OTHER first when asked, then a Redfish over IP
 * record with service address format FMT, address ADDR (16 bytes), PORT. */
static size_t smbios42(unsigned char *b, int fmt, const unsigned char *addr, unsigned port,
		       int iface_type, int other_first, size_t cut)
{
	size_t o = 0, rec;

	b[o++] = 42;
	b[o++] = 0;                    /* length, below */
	b[o++] = 0x2a;
	b[o++] = 0x00;                 /* handle */
	b[o++] = (unsigned char)iface_type;
	b[o++] = 3;
	b[o++] = 0x02;                 /* device data: a USB NIC, say */
	b[o++] = 0x34;
	b[o++] = 0x12;
	b[o++] = (unsigned char)(other_first ? 2 : 1);
	if (other_first) {
		b[o++] = 0x03;         /* an IPMI protocol record: skipped */
		b[o++] = 2;
		b[o++] = 0xaa;
		b[o++] = 0xbb;
	}
	b[o++] = 0x04;                 /* Redfish over IP */
	b[o++] = 91 + 7;
	rec = o;
	memset(b + o, 0, 91 + 7);
	b[rec + 16] = 1;               /* host IP: static */
	b[rec + 50] = 1;               /* service IP: static */
	b[rec + 51] = (unsigned char)fmt;
	if (addr)
		memcpy(b + rec + 52, addr, 16);
	b[rec + 84] = (unsigned char)(port & 0xff);
	b[rec + 85] = (unsigned char)(port >> 8);
	b[rec + 90] = 7;
	memcpy(b + rec + 91, "bmc-int", 7);
	o += 91 + 7;
	b[1] = (unsigned char)o;
	b[o++] = 0;                    /* no strings: two NULs */
	b[o++] = 0;
	return cut ? cut : o;
}

static const unsigned char v4[16] = { 169, 254, 0, 17 };
static const unsigned char v6[16] = { 0xfe, 0x80, [15] = 1 };
static const unsigned char none[16];

static const struct {
	int fmt;
	const unsigned char *addr;
	unsigned port;
	int iface_type, other_first;
	size_t cut;
	int rc;
	const char *want;
} his[] = {
	{ 1, v4, 443, 0x40, 0, 0, 0, "169.254.0.17:443" },
	{ 1, v4, 8443, 0x40, 1, 0, 0, "169.254.0.17:8443" },  /* another record first */
	{ 1, v4, 0, 0x40, 0, 0, 0, "169.254.0.17:443" },      /* port 0: the https default */
	{ 2, v6, 443, 0x40, 0, 0, 0, "[fe80::1]:443" },
	{ 1, none, 443, 0x40, 0, 0, -EADDRNOTAVAIL, NULL },   /* the BMC's address from DHCP */
	{ 0, v4, 443, 0x40, 0, 0, -EADDRNOTAVAIL, NULL },     /* unknown format */
	{ 1, v4, 443, 0xf0, 0, 0, -ENOENT, NULL },            /* OEM interface type */
	{ 1, v4, 443, 0x40, 0, 40, -EPROTO, NULL },           /* truncated */
	{ 1, v4, 443, 0x40, 0, 5, -EPROTO, NULL },
};

START_TEST(redfish_host_interface)
{
	unsigned char b[256];
	char out[64] = "";
	size_t n = smbios42(b, his[_i].fmt, his[_i].addr, his[_i].port, his[_i].iface_type,
			    his[_i].other_first, his[_i].cut);
	int r = mxq_discover_redfish_parse(b, n, out, sizeof(out));

	ck_assert_msg(r == his[_i].rc, "row %d: rc %d, want %d", _i, r, his[_i].rc);
	if (r == 0)
		ck_assert_str_eq(out, his[_i].want);
}
END_TEST

START_TEST(redfish_host_interface_in_sysfs)
{
	unsigned char b[256];
	char path[512], sys[300], out[64];
	size_t n;
	FILE *f;

	put("d/sys/firmware/dmi/entries/42-0/raw", "\x2a\x06\x00\x00\xf0\x00");  /* OEM: skipped */
	n = smbios42(b, 1, v4, 5443, 0x40, 0, 0);
	snprintf(path, sizeof(path), "%s/d/sys/firmware/dmi/entries/42-1/raw", root);
	put("d/sys/firmware/dmi/entries/42-1/raw", "");
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	fclose(f);
	snprintf(sys, sizeof(sys), "%s/d/sys", root);
	ck_assert_int_eq(mxq_discover_redfish(sys, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "169.254.0.17:5443");
	snprintf(sys, sizeof(sys), "%s/c/sys", root);
	ck_assert_int_eq(mxq_discover_redfish(sys, out, sizeof(out)), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("discover");
	TCase *tc = tcase_create("mac");
	SRunner *sr;
	char cmd[300];
	int failed;

	if (!mkdtemp(root))
		return EXIT_FAILURE;
	tcase_add_test(tc, default_route_interface);
	tcase_add_test(tc, no_default_route);
	tcase_add_test(tc, nothing_found);
	tcase_add_loop_test(tc, redfish_host_interface, 0, (int)(sizeof(his) / sizeof(his[0])));
	tcase_add_test(tc, redfish_host_interface_in_sysfs);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		failed++;
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
