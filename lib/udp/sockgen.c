/* SPDX-License-Identifier: MIT */
/* Engine adapter: `txscale send` through the sendmsg path, the semantic core
 * of every send (fragmentation at the MTU, DF, GSO). gen.c's template patch
 * is its specialised fast path, chosen at setup by txs_udp_fast_path_ok()
 * only where it gives the same frames.
 *
 * One endpoint per worker; each fill() lends the engine's buffers to the
 * endpoint and makes sendmsg calls while a whole call fits. A call is never
 * cut: when the buffers left cannot hold its frames, the fill ends there and
 * the call goes whole into the next burst. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "udp_priv.h"

struct sg_state {
	struct txs_udp_ep *ep;
	struct txs_ident_core *icore; /* opened on the shared allocator, or NULL */
	struct txs_linksel_core *ls;  /* NULL: link 0 */
	struct txs_flow_key key;      /* what balance-xor hashes, prepared once */
	struct sockaddr_storage ss;
	socklen_t sl;
	bool connected;
	uint8_t *payload;
	size_t len;
	uint16_t gso;
	unsigned fpc;   /* frames of one full call */
	unsigned dpc;   /* datagrams of one full call (GSO segments, else 1) */
	uint64_t seq;
} TXS_CACHE_ALIGNED;

TXS_API unsigned txs_udp_call_frames(bool v4, uint32_t mtu, size_t len, unsigned gso)
{
	uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	if (gso && len > gso)
		return (unsigned)((len + gso - 1) / gso);
	if (len + hdrs <= mtu)
		return 1;
	uint32_t fs = v4 ? (mtu - TXS_IPV4_HLEN) & ~7u : (mtu - TXS_IPV6_HLEN - TXS_IPV6_FRAG_HLEN) & ~7u;
	return (unsigned)((len + TXS_UDP_HLEN + fs - 1) / fs);
}

TXS_API bool txs_udp_fast_path_ok(const struct txs_netdev *dev, const struct txs_flow_spec *sp, uint32_t mtu,
				  bool connected, unsigned gso)
{
	if (!connected || gso)
		return false;
	if (dev->kernel_ip)
		return true; /* the kernel builds IP and fragments the datagram */
	if (!mtu)
		mtu = dev->mtu ? dev->mtu : 1500;
	uint32_t hdrs = (sp->dst.family == AF_INET ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	return sp->payload_len + hdrs <= mtu;
}

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
	txs_linksel_core_close(g->ls);
	free(g->payload);
	free(g);
}

static int sg_linksel(struct sg_state *g, struct txs_linksel *ls, unsigned core, const struct txs_flow_spec *sp,
		      uint16_t sport)
{
	int rc = txs_linksel_core_open(ls, core, &g->ls);
	if (rc < 0)
		return rc;
	if (txs_linksel_core_broadcast(g->ls))
		return -EOPNOTSUPP; /* copies of multi-frame calls: not on this path */
	struct txs_flow_key *k = &g->key;
	memcpy(k->src_mac, sp->src_mac, 6);
	memcpy(k->dst_mac, sp->dst_mac, 6);
	k->family = sp->src.family;
	memcpy(k->saddr, sp->src.bytes, sp->src.family == AF_INET ? 4 : 16);
	memcpy(k->daddr, sp->dst.bytes, sp->dst.family == AF_INET ? 4 : 16);
	k->sport = sport;
	k->dport = sp->dport;
	k->proto = TXS_IPPROTO_UDP;
	txs_linksel_key_prepare(ls, k);
	return 0;
}

static int sg_init(struct txs_worker *w, void *confp)
{
	const struct txs_udp_gen_conf *c = confp;
	const struct txs_flow_spec *sp = &c->spec;
	struct sg_state *g = aligned_alloc(TXS_CACHE_LINE, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	const struct txs_netdev *dev = w->txq->dev;
	uint32_t mtu = c->mtu ? c->mtu : dev->mtu ? dev->mtu : 1500;
	struct txs_udp_conf uc = {
		.src = sp->src,
		.sport = (uint16_t)(sp->sport + (c->spread_sport ? w->id : 0)),
		.mtu = mtu,
		.flow_label = sp->flow_label,
		.batch = 1,
		.max_segs = c->max_segs,
	};
	memcpy(uc.src_mac, sp->src_mac, TXS_ETH_ALEN);
	memcpy(uc.dst_mac, sp->dst_mac, TXS_ETH_ALEN);
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
	if (rc == 0 && c->linksel)
		rc = sg_linksel(g, c->linksel, w->id, sp, uc.sport);
	g->len = sp->payload_len;
	g->gso = c->gso_size;
	bool v4 = sp->dst.family == AF_INET ||
		  (sp->dst.family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sp->dst.v6));
	if (rc == 0) {
		/* the checks of the first call, once: a run whose every call
		 * fails (DF over the MTU, GSO limits) is refused here */
		uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
		if (g->gso && ((g->len < g->gso ? g->len : g->gso) + hdrs > mtu))
			rc = -EMSGSIZE;
		else if (g->gso && (g->len > (size_t)g->gso * g->ep->max_segs || sp->no_udp_csum))
			rc = -EINVAL;
		else if (!g->gso && sp->df && g->len + hdrs > mtu)
			rc = -EMSGSIZE;
	}
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
	g->fpc = txs_udp_call_frames(v4, mtu, g->len, g->gso);
	g->dpc = g->gso && g->len > g->gso ? g->fpc : 1;
	/* the engine counts datagrams: fragments of one make fpc frames; GSO
	 * segments are datagrams of one frame each */
	w->frames_per_dgram = g->fpc / g->dpc;
	w->min_frames = g->fpc;
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
	/* datagrams still due: the engine says when a call holds several (GSO);
	 * otherwise it never asks for more than are due */
	uint64_t left = g->dpc > 1 ? w->left : UINT64_MAX;
	unsigned used = 0;
	while (left) {
		size_t len = g->len;
		unsigned frames = g->fpc, dg = g->dpc;
		if (TXS_UNLIKELY(dg > left)) {
			/* the last GSO call of a count: only the segments still due */
			dg = (unsigned)left;
			frames = dg;
			len = (size_t)dg * g->gso;
		}
		if (frames > n - used)
			break; /* no room: the call goes whole into the next burst */
		uint32_t mask = 1;
		if (g->ls && TXS_UNLIKELY(txs_linksel_select_mask(g->ls, &g->key, &mask) < 0)) {
			if (!used)
				w->fill_err = -ENETDOWN;
			break; /* no link up: counted by the selector */
		}
		uint64_t seq = g->seq;
		if (dg > 1) {
			for (size_t off = 0; off < len; off += g->gso)
				ph_patch(g->payload + off, len - off < g->gso ? len - off : g->gso, seq++, now_ns);
		} else {
			ph_patch(g->payload, len, seq++, now_ns);
		}
		v.iov_len = len;
		ssize_t rc = txs_udp_sendmsg(g->ep, &m);
		if (rc < 0) {
			if (!used)
				w->fill_err = (int)rc;
			break;
		}
		uint16_t link = (uint16_t)__builtin_ctz(mask);
		for (unsigned i = used; i < used + m.frames; i++)
			b[i].link = link;
		g->seq = seq;
		used += m.frames;
		left -= dg;
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
