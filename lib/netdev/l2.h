/* SPDX-License-Identifier: MIT */
/* Private to lib/netdev: what the frame devices (packet:, xdp:) share.
 * Interface lookup (index, MTU, MAC), next-hop MAC through the kernel's
 * routing and neighbour tables (rtnetlink via libmnl), the default source
 * address, and the "IF1+IF2" / "NAME:IF" link list grammar.
 * All of it runs at open time, on the opening thread. */
#ifndef TXS_NETDEV_L2_H
#define TXS_NETDEV_L2_H
#include <net/if.h>
#include <time.h>
#include "netdev_priv.h"

struct txs_l2link {
	char ifname[IF_NAMESIZE];
	int ifindex;
	unsigned mtu;                 /* L3 MTU: frames may be mtu + 14 bytes */
	bool loopback;                /* ARPHRD_LOOPBACK: MACs are zero */
	uint8_t src_mac[TXS_ETH_ALEN], dst_mac[TXS_ETH_ALEN];
	unsigned queue;               /* first hardware queue (xdp:IF:Q), else 0 */
};

/* Split the link part of a spec: "IF1[:Q1][+IF2[:Q2]...]". Each name goes
 * into links[n_links++] (queue parsed when allow_queue). Returns 0 or -EINVAL
 * (dev->err says why). */
int txs_l2_add_links(struct txs_netdev *dev, struct txs_l2link *links, const char *list, bool allow_queue);

/* Fill ifindex, mtu and both MACs of every link: the source MAC from
 * dev->conf (--src-mac) or the interface; the destination MAC from dev->conf
 * (--dst-mac) or the neighbour entry of the route's next hop towards
 * conf.dst on that interface. Sets dev->src_mac/dst_mac (link 0),
 * dev->l2_needed and, if conf.src is absent, dev->src_addr.
 * Returns 0 or -errno with dev->err naming what is unresolved. */
int txs_l2_resolve(struct txs_netdev *dev, struct txs_l2link *links, unsigned n);

/* The open of a frame device from its spec "LINKS[,ARGS]": the link list
 * (txs_l2_add_links), then each ARGS item through arg (txs_netdev_parse_args),
 * then txs_l2_resolve, and the frame size capped at what the link carries.
 * dev->n_links counts the links. Returns 0 or -errno (dev->err says why). */
int txs_l2_open(struct txs_netdev *dev, struct txs_l2link *links, const char *args, bool allow_queue,
		int (*arg)(struct txs_netdev *dev, const char *key, const char *val, void *ctx), void *ctx);

/* Probe that a socket of `family` opens (privilege, kernel support), named
 * `what` in the error. Returns 0 or -errno (dev->err says why). */
int txs_l2_probe_socket(struct txs_netdev *dev, int family, const char *what);

/* First address of `family` on ifname (IPv6: global before link-local).
 * Returns 0 or -EADDRNOTAVAIL. */
int txs_l2_if_addr(const char *ifname, int family, struct txs_addr *out);

/* Is ifindex a hardware NIC (a device behind it in sysfs, /sys/class/net/IF/
 * device), so that what it sends leaves this host? Its name goes to name
 * (IF_NAMESIZE) when given. false for software links (lo, veth, bridge, tun)
 * and unknown indexes. */
bool txs_l2_if_hw(int ifindex, char *name);

/* Next-hop MAC of dst via ifindex from the kernel's tables. Returns 0,
 * -EHOSTUNREACH (no neighbour entry / not resolved; why says which address),
 * -EOPNOTSUPP (built without libmnl) or another -errno. */
int txs_l2_neigh_mac(int ifindex, const struct txs_addr *dst, uint8_t mac[TXS_ETH_ALEN], char *why, size_t whylen);

#endif
