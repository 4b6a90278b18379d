/* SPDX-License-Identifier: MIT */
/* Private to lib/netdev: SO_TXTIME detection (txtime.c). */
#ifndef TXS_NETDEV_TXTIME_H
#define TXS_NETDEV_TXTIME_H
#include <stddef.h>
#include <txscale/netdev.h>

enum txs_txtime_mode {
	TXS_TXTIME_AUTO = 0, /* where the route's interface has an fq qdisc */
	TXS_TXTIME_OFF,
	TXS_TXTIME_ON,       /* whatever the qdisc (tests: the send path without fq) */
};

/* The interface the kernel routes dst through: 0 and *ifindex, or -errno. */
int txs_route_oif(const struct txs_addr *dst, int *ifindex);
/* The kind of ifindex's root qdisc ("noqueue", "fq", ...; a multiqueue
 * root's children's kind when they all share one; "none"): 0, or -errno. */
int txs_qdisc_kind(int ifindex, char *kind, size_t len);
/* dev->txtime_clock and txtime_why for a device sending to dev->conf.dst
 * through ifname (NULL or "": the route's interface), family's sockets. */
void txs_txtime_decide(struct txs_netdev *dev, enum txs_txtime_mode mode, const char *ifname, int family);
#endif
