/*
 * mxq_wol - Wake-on-LAN magic packets (see mxq_wol.h).
 *
 * Configuration: the caller passes address, port, repeat count and gap.
 * Errors: negative errno plus a reason in the caller's buffer; no logging.
 */
#define _GNU_SOURCE
#include "mxq_wol.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mx_util.h"

int mxq_wol_parse_mac(const char *text, uint8_t ret_mac[6])
{
	uint8_t mac[6];

	if (!text || strlen(text) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		const char *p = text + 3 * i;
		int hi = mx_hex_digit(p[0]), lo = mx_hex_digit(p[1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		if (i < 5 && p[2] != ':' && p[2] != '-')
			return -EINVAL;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	memcpy(ret_mac, mac, 6);
	return 0;
}

void mxq_wol_packet(const uint8_t mac[6], uint8_t packet[MXQ_WOL_PACKET_SIZE])
{
	memset(packet, 0xff, 6);
	for (int i = 0; i < 16; i++)
		memcpy(packet + 6 + 6 * i, mac, 6);
}

int mxq_wol_send(const char *mac_text, const char *address, uint16_t port, unsigned count,
		 unsigned gap_ms, char *errbuf, size_t errlen)
{
	uint8_t mac[6], packet[MXQ_WOL_PACKET_SIZE];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, r = 0;

	if (!address || !address[0])
		address = "255.255.255.255";
	if (mxq_wol_parse_mac(mac_text, mac) < 0) {
		snprintf(errbuf, errlen, "'%s' is not a MAC address like 00:11:22:33:44:55",
			 mac_text ? mac_text : "");
		return -EINVAL;
	}
	if (inet_pton(AF_INET, address, &to.sin_addr) != 1) {
		snprintf(errbuf, errlen, "'%s' is not an IPv4 broadcast address", address);
		return -EINVAL;
	}
	mxq_wol_packet(mac, packet);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot open a UDP socket: %s", strerror(-r));
		return r;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0) {
		r = -errno;
		snprintf(errbuf, errlen, "cannot enable broadcast: %s", strerror(-r));
		close(fd);
		return r;
	}
	for (unsigned i = 0; i < count; i++) {
		if (i > 0 && gap_ms) {
			struct timespec ts = { gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
		if (sendto(fd, packet, sizeof(packet), 0, (struct sockaddr *)&to, sizeof(to)) !=
		    (ssize_t)sizeof(packet)) {
			r = -errno;
			snprintf(errbuf, errlen, "sending the magic packet to %s:%u failed: %s",
				 address, (unsigned)port, strerror(-r));
			break;
		}
	}
	close(fd);
	return r;
}
