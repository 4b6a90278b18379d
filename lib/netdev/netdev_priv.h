/* SPDX-License-Identifier: MIT */
/* Private to lib/netdev: the backend registry and helpers. */
#ifndef TXS_NETDEV_PRIV_H
#define TXS_NETDEV_PRIV_H
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <txscale/netdev.h>

/* A device as lib/netdev keeps it: the public part first (a pointer to one
 * is a pointer to the other), then the state only netdev and its backends
 * touch. txs_netdev_open() allocates it; TXS_ND(dev) finds it from the
 * public pointer, keeping its constness. */
struct txs_nd {
	struct txs_netdev pub;
	void *priv;               /* the backend's state */
	struct txs_txq **queues;  /* opened queues (conf.max_queues slots), for stats */
	char err[160];            /* backend's reason for a failed open */
	/* Link state shared with a link monitor (lib/linkmon, through
	 * linkstate.h), set by txs_linkmon_start() before the queues open;
	 * NULL when none runs, and then a hard error on any link (interface
	 * down or gone) ends the worker. With a monitor, such an error marks
	 * that link down and the queue goes on with the others. */
	struct txs_linkstate *linkstate;
};
/* A queue as lib/netdev keeps it, the public part first; written by the
 * queue's own thread only (link counters read by anyone, relaxed). */
struct txs_nq {
	struct txs_txq pub;
	bool closed;
	void *priv;               /* the backend's per-queue state */
	struct txs_link_counters link[TXS_MAX_LINKS];
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;
#define TXS_NQ(q)                                                                    \
	_Generic((q), const struct txs_txq *: (const struct txs_nq *)(const void *)(q), \
		 struct txs_txq *: (struct txs_nq *)(void *)(q))
#define TXS_ND(dev)                                                                    \
	_Generic((dev), const struct txs_netdev *: (const struct txs_nd *)(const void *)(dev), \
		 struct txs_netdev *: (struct txs_nd *)(void *)(dev))

/* A buffer handed out by tx_alloc: cap bytes at data, empty, one segment,
 * no GSO, on link, with the backend's priv. */
static inline __attribute__((always_inline)) void txs_buf_give(struct txs_pktbuf *b, uint8_t *data, uint32_t cap,
							       uint16_t link, uint64_t priv)
{
	b->data = data;
	b->cap = cap;
	b->len = 0;
	b->link = link;
	b->gso_size = 0;
	b->segs = 1;
	b->priv = priv;
}

/* tx_alloc from a pool of frames buf_size apart (txs_pool_new): the first
 * min(n, max), buffer i with priv + i * step. Returns how many. */
static inline __attribute__((always_inline)) unsigned txs_pool_give(struct txs_pktbuf *b, unsigned n, unsigned max,
								    uint8_t *pool, uint32_t buf_size, uint64_t priv,
								    uint64_t step)
{
	if (n > max)
		n = max;
	for (unsigned i = 0; i < n; i++)
		txs_buf_give(&b[i], pool + (size_t)i * buf_size, buf_size, 0, priv + i * step);
	return n;
}

/* A queue's pool of n frames of dev's frame size, each on its own cache
 * lines (*buf_size apart). NULL when out of memory; free() it. */
static inline uint8_t *txs_pool_new(const struct txs_netdev *dev, unsigned n, uint32_t *buf_size)
{
	*buf_size = (dev->conf.frame_size + TXS_CACHE_LINE - 1) & ~(uint32_t)(TXS_CACHE_LINE - 1);
	return aligned_alloc(TXS_CACHE_LINE, (size_t)n * *buf_size);
}

/* Frames sent on link l of q: pk of by bytes on its counters. */
static inline __attribute__((always_inline)) void txs_nq_count(struct txs_txq *q, unsigned l, uint64_t pk, uint64_t by)
{
	TXS_STAT_ADD(TXS_NQ(q)->link[l].packets, pk);
	TXS_STAT_ADD(TXS_NQ(q)->link[l].bytes, by);
}
/* Frames counted as sent on link l of q that did not go: pk of by bytes
 * taken back and counted as drops (drop_full: no room; else drop_err). */
static inline void txs_nq_retract(struct txs_txq *q, unsigned l, uint64_t pk, uint64_t by, bool full)
{
	txs_nq_count(q, l, -pk, -by);
	if (full)
		TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_full, pk);
	else
		TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_err, pk);
}

/* Each backend defines one of these; add it to backends[] in netdev.c. */
extern const struct txs_netdev_ops txs_netdev_dummy_ops;
extern const struct txs_netdev_ops txs_netdev_udp_ops;
#ifdef TXS_HAVE_PCAP
extern const struct txs_netdev_ops txs_netdev_pcap_ops;
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
/* A bare flag of a device's arguments: key stores v into the field at off
 * of the backend's state, a bool or (size sizeof(int)) an int or enum. */
struct txs_netdev_flag {
	const char *key;
	size_t off, size;
	int v;
};
#define TXS_NETDEV_FLAG(key, type, field, v) { key, offsetof(type, field), sizeof(((type *)0)->field), v }
/* Set the flag key names in t[0..n) (val NULL) in state: true, or false
 * when none is named. */
bool txs_netdev_arg_flag(const struct txs_netdev_flag *t, size_t n, const char *key, const char *val, void *state);
/* "mtu=N", N in TXS_NETDEV_MTU_MIN..TXS_NETDEV_MTU_MAX: sets dev->mtu, or a
 * one-line error naming the value. */
#define TXS_NETDEV_MTU_MIN 576u
#define TXS_NETDEV_MTU_MAX 65535u
int txs_netdev_arg_mtu(struct txs_netdev *dev, const char *val);
#endif
