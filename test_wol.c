/*
 * test_wol - Wake-on-LAN magic packets (mxq_wol.c): MAC parsing, the packet
 * layout, and the bytes a UDP listener on 127.0.0.1 receives, COUNT times.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mxq_wol.h"

START_TEST(parse_mac)
{
	uint8_t mac[6];

	ck_assert_int_eq(mxq_wol_parse_mac("00:1a:2B:3c:4D:ff", mac), 0);
	ck_assert_int_eq(mac[0], 0x00);
	ck_assert_int_eq(mac[1], 0x1a);
	ck_assert_int_eq(mac[2], 0x2b);
	ck_assert_int_eq(mac[5], 0xff);
	ck_assert_int_eq(mxq_wol_parse_mac("00-1a-2b-3c-4d-5e", mac), 0);
	ck_assert_int_eq(mxq_wol_parse_mac("00:1a:2b:3c:4d", mac), -EINVAL);
	ck_assert_int_eq(mxq_wol_parse_mac("00:1a:2b:3c:4d:5g", mac), -EINVAL);
	ck_assert_int_eq(mxq_wol_parse_mac("001a2b3c4d5e00000", mac), -EINVAL);
	ck_assert_int_eq(mxq_wol_parse_mac(NULL, mac), -EINVAL);
}
END_TEST

START_TEST(packet_layout)
{
	const uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 };
	uint8_t p[MXQ_WOL_PACKET_SIZE];

	mxq_wol_packet(mac, p);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(p[i], 0xff);
	for (int k = 0; k < 16; k++)
		ck_assert_mem_eq(p + 6 + 6 * k, mac, 6);
}
END_TEST

START_TEST(received_by_listener)
{
	const char *mac_text = "52:54:00:ab:cd:ef";
	const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	uint8_t want[MXQ_WOL_PACKET_SIZE], buf[512];
	char err[256] = "";
	int fd, got = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);

	ck_assert_int_eq(mxq_wol_send(mac_text, "127.0.0.1", ntohs(a.sin_port), 4, 10, err,
				      sizeof(err)), 0);
	mxq_wol_packet(mac, want);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 500) <= 0)
			break;
		n = recv(fd, buf, sizeof(buf), 0);
		ck_assert_int_eq(n, MXQ_WOL_PACKET_SIZE);
		ck_assert_mem_eq(buf, want, MXQ_WOL_PACKET_SIZE);
		got++;
	}
	ck_assert_int_eq(got, 4);
	close(fd);
}
END_TEST

START_TEST(bad_input_named)
{
	char err[256] = "";

	ck_assert_int_eq(mxq_wol_send("nonsense", "127.0.0.1", 9, 1, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "nonsense"));
	ck_assert_int_eq(mxq_wol_send("52:54:00:ab:cd:ef", "not-an-ip", 9, 1, 0, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not-an-ip"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wol");
	TCase *tc = tcase_create("wol");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, parse_mac);
	tcase_add_test(tc, packet_layout);
	tcase_add_test(tc, received_by_listener);
	tcase_add_test(tc, bad_input_named);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
