/* SPDX-License-Identifier: MIT */
/* Device registry and the backend-independent part of open/close/stats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "netdev_priv.h"

static const struct txs_netdev_ops *const backends[] = {
	&txs_netdev_dummy_ops,
	&txs_netdev_udp_ops,
#ifdef TXS_HAVE_PCAP
	&txs_netdev_pcap_ops,
#endif
	&txs_netdev_packet_ops,
	&txs_netdev_xdp_ops,
#ifdef TXS_NETDEV_EXTRA
	TXS_NETDEV_EXTRA
#endif
};

TXS_API const struct txs_netdev_ops *const *txs_netdev_backends(unsigned *n)
{
	*n = TXS_ARRAY_SIZE(backends);
	return backends;
}

TXS_API const struct txs_netdev_ops *txs_netdev_find(const char *name)
{
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(backends); i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

TXS_API int txs_netdev_link(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out)
{
	if (!dev->ops->link)
		return -EOPNOTSUPP;
	if (l >= dev->n_links)
		return -EINVAL;
	return dev->ops->link(dev, l, out);
}

void txs_netdev_set_err(struct txs_netdev *dev, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(TXS_ND(dev)->err, sizeof(TXS_ND(dev)->err), fmt, ap);
	va_end(ap);
}

TXS_API int txs_netdev_open(struct txs_netdev **out, const char *spec, const struct txs_netdev_conf *conf,
			    char *err_msg, size_t err_len)
{
	*out = NULL;
	if (err_msg && err_len)
		err_msg[0] = 0;
	char name[64];
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	size_t max = sizeof(((struct txs_netdev *)0)->spec) - 1;
	if (strlen(spec) > max) {
		if (err_msg)
			snprintf(err_msg, err_len, "'%.40s...': %zu characters long, at most %zu", spec, strlen(spec), max);
		return -ENAMETOOLONG;
	}
	if (nl == 0 || nl >= sizeof(name)) {
		if (err_msg)
			snprintf(err_msg, err_len, "bad device spec '%s': expected NAME[:ARGS]", spec);
		return -EINVAL;
	}
	memcpy(name, spec, nl);
	name[nl] = 0;
	const struct txs_netdev_ops *ops = txs_netdev_find(name);
	if (!ops) {
		if (err_msg)
			snprintf(err_msg, err_len, "unknown device '%s'", name);
		return -ENODEV;
	}
	struct txs_nd *nd = calloc(1, sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	struct txs_netdev *dev = &nd->pub;
	dev->ops = ops;
	snprintf(dev->spec, sizeof(dev->spec), "%s", spec);
	dev->n_links = 1;
	if (conf)
		dev->conf = *conf;
	if (dev->conf.max_queues == 0)
		dev->conf.max_queues = 1;
	if (dev->conf.frame_size == 0)
		dev->conf.frame_size = 2048;
	nd->queues = calloc(dev->conf.max_queues, sizeof(*nd->queues));
	if (!nd->queues) {
		free(nd);
		return -ENOMEM;
	}
	dev->txtime_clock = -1;
	snprintf(dev->txtime_why, sizeof(dev->txtime_why), "the %.40s device does not use SO_TXTIME (udp: does)", name);
	int rc = ops->open(dev, colon ? colon + 1 : "");
	if (rc < 0) {
		if (err_msg)
			snprintf(err_msg, err_len, "%s: %s", dev->spec, nd->err[0] ? nd->err : strerror(-rc));
		free(nd->queues);
		free(nd);
		return rc;
	}
	if (dev->mtu == 0)
		dev->mtu = 1500; /* pcap:, dummy and devices that do not know better */
	*out = dev;
	return 0;
}

TXS_API void txs_netdev_close(struct txs_netdev *dev)
{
	if (!dev)
		return;
	struct txs_nd *nd = TXS_ND(dev);
	for (unsigned i = 0; i < dev->conf.max_queues; i++) {
		txs_txq_close(nd->queues[i]);
		free(nd->queues[i]);
	}
	dev->ops->close(dev);
	free(nd->queues);
	free(nd);
}

TXS_API int txs_txq_open(struct txs_netdev *dev, unsigned id, struct txs_txq **out)
{
	*out = NULL;
	struct txs_nd *nd = TXS_ND(dev);
	if (id >= dev->conf.max_queues || nd->queues[id])
		return -EINVAL;
	struct txs_nq *nq = txs_zalloc_line(sizeof(*nq));
	if (!nq)
		return -ENOMEM;
	struct txs_txq *q = &nq->pub;
	q->dev = dev;
	q->id = id;
	int rc = dev->ops->txq_open(dev, q);
	if (rc < 0) {
		free(nq);
		return rc;
	}
	__atomic_store_n(&nd->queues[id], q, __ATOMIC_RELEASE);
	*out = q;
	return 0;
}

/* Closing releases the backend's resources but keeps the queue and its
 * counters until the device closes, so stats stay readable after workers exit. */
TXS_API void txs_txq_close(struct txs_txq *q)
{
	if (!q || TXS_NQ(q)->closed)
		return;
	TXS_NQ(q)->closed = true;
	if (q->dev->ops->txq_close)
		q->dev->ops->txq_close(q);
}

static void counters_add(struct txs_link_counters *out, const struct txs_link_counters *c)
{
	out->packets += TXS_STAT_READ(c->packets);
	out->bytes += TXS_STAT_READ(c->bytes);
	out->drop_full += TXS_STAT_READ(c->drop_full);
	out->drop_err += TXS_STAT_READ(c->drop_err);
	out->verify_err += TXS_STAT_READ(c->verify_err);
	out->icmp_err += TXS_STAT_READ(c->icmp_err);
	out->gso_calls += TXS_STAT_READ(c->gso_calls);
	out->gso_segs += TXS_STAT_READ(c->gso_segs);
	out->gso_fallback += TXS_STAT_READ(c->gso_fallback);
	int32_t ge = __atomic_load_n(&c->gso_err, __ATOMIC_RELAXED);
	if (ge)
		out->gso_err = ge;
	int32_t e = __atomic_load_n(&c->last_err, __ATOMIC_RELAXED);
	if (e)
		out->last_err = e;
}

TXS_API void txs_netdev_link_stats(const struct txs_netdev *dev, unsigned link, struct txs_link_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (link >= TXS_MAX_LINKS)
		return;
	for (unsigned i = 0; i < dev->conf.max_queues; i++) {
		const struct txs_txq *q = __atomic_load_n(&TXS_ND(dev)->queues[i], __ATOMIC_ACQUIRE);
		if (q)
			counters_add(out, &TXS_NQ(q)->link[link]);
	}
}

TXS_API void txs_netdev_queue_stats(const struct txs_netdev *dev, unsigned queue, struct txs_link_counters *out)
{
	memset(out, 0, sizeof(*out));
	if (queue >= dev->conf.max_queues)
		return;
	const struct txs_txq *q = __atomic_load_n(&TXS_ND(dev)->queues[queue], __ATOMIC_ACQUIRE);
	for (unsigned l = 0; q && l < TXS_MAX_LINKS; l++)
		counters_add(out, &TXS_NQ(q)->link[l]);
}
