/*
 * test_discover - the node's MAC discovery (mxq_discover.c) on fake /proc
 * and /sys trees: the default route's interface wins, else the first
 * non-loopback interface with a MAC, never lo or an all-zero address.
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
