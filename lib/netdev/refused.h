/* SPDX-License-Identifier: MIT */
/* Refused frames of the ring devices (packet.c, xdp.c), by the counting
 * contract of include/txscale/netdev.h: tx_send marks the frames it did not
 * take in the top bits of their priv (the frame index stays below),
 * tx_release counts the still-marked ones on their link: drop_full when
 * there was no room, drop_err with the errno otherwise. Private to netdev. */
#ifndef TXS_NETDEV_REFUSED_H
#define TXS_NETDEV_REFUSED_H
#include "netdev_priv.h"

#define REFUSED_FULL (1ull << 63)
#define REFUSED_ERR (1ull << 62)

/* Mark b[0..n) refused (err 0: no room; else -errno, kept as the link's
 * last error). Cold: a burst the device took whole never comes here. */
static __attribute__((noinline, cold, unused)) void refuse_rest(struct txs_txq *q, struct txs_pktbuf *b, unsigned n, int err)
{
	for (unsigned k = 0; k < n; k++)
		b[k].priv = (b[k].priv & ~(REFUSED_FULL | REFUSED_ERR)) | (err ? REFUSED_ERR : REFUSED_FULL);
	if (err)
		__atomic_store_n(&TXS_NQ(q)->link[b[0].link < q->dev->n_links ? b[0].link : 0].last_err, err, __ATOMIC_RELAXED);
}

/* Count the marked ones of b[0..n) as drops on their link and clear the
 * marks (a buffer never offered carries none). */
static inline void release_refused(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t m = b[i].priv & (REFUSED_FULL | REFUSED_ERR);
		if (!m)
			continue;
		unsigned l = b[i].link < q->dev->n_links ? b[i].link : 0;
		if (m & REFUSED_ERR)
			TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_err, b[i].segs);
		else
			TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_full, b[i].segs);
		b[i].priv &= ~(REFUSED_FULL | REFUSED_ERR);
	}
}
#endif
