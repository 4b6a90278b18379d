/* SPDX-License-Identifier: MIT */
/* The dummy device: counts packets and bytes per queue and link, then drops
 * them, like the kernel's dummy netdev. "dummy:links=N" exposes N links;
 * "verify" parses every frame and counts those that fail. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/pkt.h>
#include "netdev_priv.h"

#define DUMMY_POOL 256

struct dummy_dev {
	bool verify;
};

struct dummy_q {
	uint32_t buf_size;
	uint8_t *pool; /* DUMMY_POOL * buf_size bytes, reused every burst */
};

static int dummy_arg(struct txs_netdev *dev, const char *key, const char *val, void *arg)
{
	struct dummy_dev *d = arg;
	if (strcmp(key, "links") == 0 && val) {
		char *end;
		long n = strtol(val, &end, 10);
		if (*end || n < 1 || n > TXS_MAX_LINKS) {
			txs_netdev_set_err(dev, "links=%s: expected 1..%d", val, TXS_MAX_LINKS);
			return -EINVAL;
		}
		dev->n_links = (unsigned)n;
		return 0;
	}
	if (strcmp(key, "verify") == 0 && !val) {
		d->verify = true;
		return 0;
	}
	if (strcmp(key, "mtu") == 0)
		return txs_netdev_arg_mtu(dev, val);
	txs_netdev_set_err(dev, "unknown dummy option '%s' (expected links=N, verify, mtu=N)", key);
	return -EINVAL;
}

static int dummy_open(struct txs_netdev *dev, const char *args)
{
	struct dummy_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	int rc = txs_netdev_parse_args(dev, args, dummy_arg, d);
	if (rc) {
		free(d);
		return rc;
	}
	TXS_ND(dev)->priv = d;
	dev->l2_needed = false;
	return 0;
}

static void dummy_close(struct txs_netdev *dev)
{
	free(TXS_ND(dev)->priv);
}

static int dummy_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	struct dummy_q *dq = calloc(1, sizeof(*dq));
	if (!dq)
		return -ENOMEM;
	dq->pool = txs_pool_new(dev, DUMMY_POOL, &dq->buf_size);
	if (!dq->pool) {
		free(dq);
		return -ENOMEM;
	}
	TXS_NQ(q)->priv = dq;
	return 0;
}

static void dummy_txq_close(struct txs_txq *q)
{
	struct dummy_q *dq = TXS_NQ(q)->priv;
	free(dq->pool);
	free(dq);
	TXS_NQ(q)->priv = NULL;
}

static unsigned dummy_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	const struct dummy_q *dq = TXS_NQ(q)->priv;
	return txs_pool_give(b, n, DUMMY_POOL, dq->pool, dq->buf_size, 0, 1); /* priv: the frame's index */
}

static unsigned dummy_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	const struct txs_netdev *dev = q->dev;
	const struct dummy_dev *d = TXS_ND(dev)->priv;
	if (TXS_LIKELY(dev->n_links == 1 && !d->verify)) {
		uint64_t pk = 0, by = 0;
		for (unsigned i = 0; i < n; i++) {
			pk += b[i].segs;
			by += b[i].len;
		}
		txs_nq_count(q, 0, pk, by);
		return n;
	}
	uint64_t pk[TXS_MAX_LINKS] = { 0 }, by[TXS_MAX_LINKS] = { 0 }, bad[TXS_MAX_LINKS] = { 0 };
	for (unsigned i = 0; i < n; i++) {
		unsigned l = b[i].link < dev->n_links ? b[i].link : 0;
		if (d->verify && b[i].segs <= 1) {
			struct txs_pkt_info info;
			/* a fragment's headers are checked up to the fragment
			 * (IPv4 header checksum included); its payload cannot be */
			enum txs_perr e = txs_parse(b[i].data, b[i].len, TXS_L2_ETH, &info);
			if (e != TXS_PERR_OK && e != TXS_PERR_FRAGMENT)
				bad[l]++;
		}
		pk[l] += b[i].segs;
		by[l] += b[i].len;
	}
	for (unsigned l = 0; l < dev->n_links; l++) {
		if (pk[l]) {
			txs_nq_count(q, l, pk[l], by[l]);
		}
		if (bad[l])
			TXS_STAT_ADD(TXS_NQ(q)->link[l].verify_err, bad[l]);
	}
	return n;
}

static void dummy_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	(void)q, (void)b, (void)n; /* pool slots are reused by the next alloc */
}

const struct txs_netdev_ops txs_netdev_dummy_ops = {
	.name = "dummy",
	.usage = "dummy[:links=N][,verify][,mtu=N]  count and drop in process (N links, optional parse check, MTU 1500)",
	.open = dummy_open,
	.close = dummy_close,
	.txq_open = dummy_txq_open,
	.txq_close = dummy_txq_close,
	.tx_alloc = dummy_alloc,
	.tx_send = dummy_send,
	.tx_release = dummy_release,
};
