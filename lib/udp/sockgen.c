/* SPDX-License-Identifier: MIT */
/* Engine adapter: `txscale send` through the sendmsg path. One endpoint per
 * worker; each fill() lends the engine's buffers to the endpoint and makes
 * sendmsg calls until the next call would not fit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "udp_priv.h"

struct sg_state {
	struct txs_udp_ep *ep;
	struct txs_ident_core *icore; /* opened on the shared allocator, or NULL */
	struct sockaddr_storage ss;
	socklen_t sl;
	bool connected;
	uint8_t *payload;
	size_t len;
	uint16_t gso;
	unsigned fpc;   /* frames of one full call */
	uint32_t fs;    /* fragment data bytes (no GSO, datagram over the MTU) */
	uint64_t seq;
} TXS_CACHE_ALIGNED;

/* Write seq and timestamp into a payload header laid down by txs_ph_write. */
static inline void ph_patch(uint8_t *p, size_t n, uint64_t seq, uint64_t ts)
{
	enum txs_ph_kind k = txs_ph_kind_for(n);
	if (k == TXS_PH_FULL) {
		txs_put_be64(p + 8, seq);
		txs_put_be64(p + 16, ts);
	} else if (k == TXS_PH_COMPACT) {
		txs_put_be32(p + 4, (uint32_t)seq);
		txs_put_be64(p + 8, ts);
	}
}

static void sg_free(struct sg_state *g)
{
	txs_udp_close(g->ep);
	txs_ident_core_close(g->icore);
	free(g->payload);
	free(g);
}

static int sg_init(struct txs_worker *w, void *confp)
{
	const struct txs_udp_gen_conf *c = confp;
	const struct txs_flow_spec *sp = &c->spec;
	struct sg_state *g = aligned_alloc(TXS_CACHE_LINE, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	struct txs_udp_conf uc = {
		.src = sp->src,
		.sport = (uint16_t)(sp->sport + (c->spread_sport ? w->id : 0)),
		.mtu = c->mtu,
		.flow_label = sp->flow_label,
		.batch = 1,
	};
	memcpy(uc.src_mac, sp->src_mac, TXS_ETH_ALEN);
	memcpy(uc.dst_mac, sp->dst_mac, TXS_ETH_ALEN);
	const struct txs_netdev *dev = w->txq->dev;
	if (dev->l2_needed) {
		memcpy(uc.src_mac, dev->src_mac, TXS_ETH_ALEN);
		memcpy(uc.dst_mac, dev->dst_mac, TXS_ETH_ALEN);
	}
	uc.defaults.set = TXS_UDP_OPT_TOS | TXS_UDP_OPT_DF | TXS_UDP_OPT_NO_CSUM | TXS_UDP_OPT_GSO;
	uc.defaults.tos = sp->tos;
	uc.defaults.df = sp->df;
	uc.defaults.no_csum = sp->no_udp_csum;
	uc.defaults.gso_size = c->gso_size;
	if (sp->ttl) {
		uc.defaults.set |= TXS_UDP_OPT_TTL;
		uc.defaults.ttl = sp->ttl;
	}
	int rc = 0;
	if (c->ident) {
		rc = txs_ident_core_open(c->ident, w->id, &g->icore);
		uc.ident = c->ident;
		uc.ident_core = g->icore;
	}
	if (rc == 0)
		rc = txs_udp_open(&g->ep, w->txq, &uc);
	g->sl = txs_udp_sockaddr(&g->ss, &sp->dst, sp->dport);
	g->connected = c->connected;
	if (rc == 0 && c->connected)
		rc = txs_udp_connect(g->ep, (struct sockaddr *)&g->ss, g->sl);
	g->len = sp->payload_len;
	g->gso = c->gso_size;
	if (rc == 0) {
		/* one flow header per datagram that will leave: per GSO segment */
		g->payload = malloc(g->len ? g->len : 1);
		if (!g->payload)
			rc = -ENOMEM;
	}
	if (rc < 0) {
		sg_free(g);
		return rc;
	}
	struct txs_ph ph = { .flow = sp->flow_id + w->id };
	size_t step = g->gso && g->len > g->gso ? g->gso : (g->len ? g->len : 1);
	for (size_t off = 0; off < g->len || off == 0; off += step) {
		size_t n = g->len - off < step ? g->len - off : step;
		ph.kind = txs_ph_kind_for(n);
		txs_ph_write(g->payload + off, n, &ph);
		if (g->len == 0)
			break;
	}
	uint32_t mtu = c->mtu ? c->mtu : 1500;
	bool v4 = sp->dst.family == AF_INET ||
		  (sp->dst.family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sp->dst.v6));
	uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	g->fs = v4 ? (mtu - TXS_IPV4_HLEN) & ~7u : (mtu - TXS_IPV6_HLEN - TXS_IPV6_FRAG_HLEN) & ~7u;
	if (g->gso && g->len > g->gso)
		g->fpc = (unsigned)((g->len + g->gso - 1) / g->gso);
	else if (g->len + hdrs > mtu)
		g->fpc = (unsigned)((g->len + TXS_UDP_HLEN + g->fs - 1) / g->fs);
	else
		g->fpc = 1;
	w->gen = g;
	return 0;
}

static unsigned sg_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct sg_state *g = w->gen;
	udp_ep_borrow(g->ep, b, n);
	struct iovec v = { g->payload, 0 };
	struct txs_udp_msg m = { .iov = &v, .iovlen = 1 };
	if (!g->connected) {
		m.name = (const struct sockaddr *)&g->ss;
		m.namelen = g->sl;
	}
	unsigned used = 0;
	while (used < n) {
		size_t len = g->len;
		unsigned room = n - used;
		if (TXS_UNLIKELY(g->fpc > room))
			len = g->gso && len > g->gso ? (size_t)room * g->gso : (size_t)room * g->fs - TXS_UDP_HLEN;
		uint64_t seq = g->seq;
		if (g->gso && len > g->gso) {
			for (size_t off = 0; off < len; off += g->gso)
				ph_patch(g->payload + off, len - off < g->gso ? len - off : g->gso, seq++, now_ns);
		} else {
			ph_patch(g->payload, len, seq++, now_ns);
		}
		v.iov_len = len;
		if (txs_udp_sendmsg(g->ep, &m) < 0)
			break;
		g->seq = seq;
		used += m.frames;
	}
	return udp_ep_unborrow(g->ep);
}

static void sg_fini(struct txs_worker *w)
{
	struct sg_state *g = w->gen;
	if (!g)
		return;
	sg_free(g);
	w->gen = NULL;
}

TXS_API const struct txs_gen_ops txs_udp_sock_gen_ops = {
	.init = sg_init,
	.fill = sg_fill,
	.fini = sg_fini,
};
