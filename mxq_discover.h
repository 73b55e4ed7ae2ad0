/*
 * mxq_discover - what a node's mxqd can learn about itself for the
 * power manager: the MAC address of its primary interface (for
 * Wake-on-LAN), and the address of its BMC's Redfish service on the Redfish
 * host interface (SMBIOS type 42, DMTF DSP0270), which only the node itself
 * can reach (the redfish energy source's --energy-redfish auto). The BMC's
 * LAN address would need in-band IPMI (/dev/ipmi0); it is not discovered
 * yet and is set with `mxqadmin power set HOST bmc=ADDRESS`.
 */
#ifndef MXQ_DISCOVER_H
#define MXQ_DISCOVER_H

#include <stddef.h>

/*
 * The MAC address ("aa:bb:cc:dd:ee:ff") of the interface of the default
 * route (from PROC_ROOT/net/route), else of the first non-loopback
 * interface with a non-zero MAC under SYSFS_ROOT/class/net. Roots default
 * to /proc and /sys when NULL (tests point them at a fake tree). Returns 0
 * or negative errno (-ENOENT: nothing found); ret_iface may be NULL.
 */
int mxq_discover_mac(const char *proc_root, const char *sysfs_root, char ret_mac[18],
			    char *ret_iface, size_t iface_len);

/*
 * The Redfish service of a Redfish host interface, from RAW (LEN bytes: one
 * SMBIOS type 42 structure as in /sys/firmware/dmi/entries/42-N/raw): its
 * first "Redfish over IP" protocol record's service address and port as
 * "A.B.C.D:PORT" or "[V6]:PORT" in ret. 0; -ENOENT when the structure is
 * no network host interface or has no Redfish over IP record;
 * -EADDRNOTAVAIL when the record has no address (the BMC's is given by
 * DHCP); -EPROTO when truncated; -ENOSPC.
 */
int mxq_discover_redfish_parse(const unsigned char *raw, size_t len, char *ret, size_t retlen);

/*
 * The first usable Redfish host interface of SYSFS_ROOT (NULL: /sys)
 * firmware/dmi/entries/42-N/raw, as mxq_discover_redfish_parse(). -ENOENT
 * when there is none (or the files are not readable: root only).
 */
int mxq_discover_redfish(const char *sysfs_root, char *ret, size_t retlen);

#endif
