/*
 * mxq_wol - Wake-on-LAN: the magic packet (6 x 0xFF, then the target's MAC
 * 16 times: 102 bytes) sent over UDP to a broadcast (or unicast) address.
 * Library code: usable by mxqd's wol transport and by tools. No logging.
 */
#ifndef MXQ_WOL_H
#define MXQ_WOL_H

#include <stddef.h>
#include <stdint.h>

#define MXQ_WOL_PACKET_SIZE 102

/* Parse "aa:bb:cc:dd:ee:ff" (or with '-') into 6 bytes. 0 or -EINVAL. */
int mxq_wol_parse_mac(const char *text, uint8_t ret_mac[6]);

/* Fill PACKET with the magic packet for MAC. */
void mxq_wol_packet(const uint8_t mac[6], uint8_t packet[MXQ_WOL_PACKET_SIZE]);

/*
 * Send the magic packet for MAC_TEXT COUNT times (gap_ms apart) to the IPv4
 * address ADDRESS (default 255.255.255.255 when NULL or empty) at PORT.
 * Returns 0, or negative errno with a one-line reason in errbuf.
 */
int mxq_wol_send(const char *mac_text, const char *address, uint16_t port, unsigned count,
		 unsigned gap_ms, char *errbuf, size_t errlen);

#endif
