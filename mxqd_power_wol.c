/*
 * mxqd_power_wol - the "wol" transport: power on by Wake-on-LAN.
 *
 * Configuration: per host mac_address and broadcast_address (default
 * 255.255.255.255); --power-wol-port (default 9) and --power-wol-count
 * (packets per wake, default 3). Power-off for wol nodes goes through
 * another transport (self or ssh); wol cannot read the power state.
 * Errors: negative errno with the reason in errbuf (mxq_wol.c).
 */
#define _GNU_SOURCE
#include "mxqd_power_transport.h"

#include <stdint.h>

#include "mxq_wol.h"

static const char *wol_unusable(const struct mxqd_power_target *t,
				const struct mxqd_power_transport_config *c, char *buf, size_t len)
{
	uint8_t mac[6];

	if (!t->mac_address[0])
		return "transport wol needs the MAC address (mxqadmin power set HOST mac=...)";
	if (mxq_wol_parse_mac(t->mac_address, mac) < 0)
		return "transport wol: the recorded MAC address is not valid";
	return NULL;
}

static int wol_on(const struct mxqd_power_target *t, const struct mxqd_power_transport_config *c,
		  char *errbuf, size_t errlen)
{
	return mxq_wol_send(t->mac_address, t->broadcast_address, c->wol_port, c->wol_count, 100,
			    errbuf, errlen);
}

const struct mxqd_power_transport mxqd_power_transport_wol = {
	.name = "wol",
	.caps = MXQD_TRANSPORT_CAN_ON,
	.unusable = wol_unusable,
	.power_on = wol_on,
};
