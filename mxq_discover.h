/*
 * mxq_discover - what a node's mxqd can learn about itself for the
 * power manager: the MAC address of its primary interface (for
 * Wake-on-LAN). The BMC's LAN address would need in-band IPMI
 * (/dev/ipmi0); it is not discovered yet and is set with
 * `mxqadmin power set HOST bmc=ADDRESS`.
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

#endif
