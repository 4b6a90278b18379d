/* SPDX-License-Identifier: MIT */
/* Private to lib/netdev: the backend registry and helpers. */
#ifndef TXS_NETDEV_PRIV_H
#define TXS_NETDEV_PRIV_H
#include <stdarg.h>
#include <txscale/netdev.h>

/* Each backend defines one of these; add it to backends[] in netdev.c. */
extern const struct txs_netdev_ops txs_netdev_dummy_ops;
extern const struct txs_netdev_ops txs_netdev_udp_ops;
#ifdef TXS_HAVE_PCAP
extern const struct txs_netdev_ops txs_netdev_pcap_ops;
/* "key=N" with N a power of two in lo..hi; sets a one-line error naming it. */
int txs_netdev_arg_pow2(struct txs_netdev *dev, const char *key, const char *val, unsigned lo, unsigned hi,
			unsigned *out);
#endif
extern const struct txs_netdev_ops txs_netdev_packet_ops;
extern const struct txs_netdev_ops txs_netdev_xdp_ops;

/* Record a one-line reason for a failed open (shown by txs_netdev_open). */
void txs_netdev_set_err(struct txs_netdev *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse "key=value,flag,..." device arguments: calls fn for each item with
 * value NULL for bare flags. Stops at the first non-zero return. */
int txs_netdev_parse_args(struct txs_netdev *dev, const char *args,
			  int (*fn)(struct txs_netdev *dev, const char *key, const char *val, void *arg), void *arg);
/* "key=N" with N a power of two in lo..hi; sets a one-line error naming it. */
int txs_netdev_arg_pow2(struct txs_netdev *dev, const char *key, const char *val, unsigned lo, unsigned hi,
			unsigned *out);
/* "mtu=N", N in TXS_NETDEV_MTU_MIN..TXS_NETDEV_MTU_MAX: sets dev->mtu, or a
 * one-line error naming the value. */
#define TXS_NETDEV_MTU_MIN 576u
#define TXS_NETDEV_MTU_MAX 65535u
int txs_netdev_arg_mtu(struct txs_netdev *dev, const char *val);
#endif
