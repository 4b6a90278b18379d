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
#include "common/alloc.h"
#include "udp_priv.h"

/* One flow of a worker: its sequence space, flow id, destination, the
 * endpoint of its (source, source port), what balance-xor hashes. */
struct sg_flow {
	uint64_t seq;
	uint32_t id;
	uint16_t ep;
	socklen_t sl;
	struct sockaddr_storage ss;
	struct txs_flow_key key;
};

struct sg_state {
	struct txs_udp_ep *ep[TXS_UDP_SHAPE_MAX_EPS];
	unsigned n_eps;
	struct txs_ident_core *icore; /* opened on the shared allocator, or NULL */
	struct txs_linksel_core *ls;  /* NULL: link 0 */
	bool connected;               /* one flow, connected: no name per call */
	uint16_t gso;
	unsigned fpc;   /* frames of one full call */
	unsigned dpc;   /* datagrams of one full call (GSO segments, else 1) */
	uint32_t n_flows, cur;        /* cur: the flow of the next call */
	uint32_t n_sizes, pat_len, pos;
	uint8_t *pat;                 /* size cycle (struct txs_shape) */
	struct sg_flow *fl;
	uint8_t *pay[TXS_SHAPE_MAX_SIZES];  /* a payload per size, headers laid down */
	size_t len[TXS_SHAPE_MAX_SIZES];
	unsigned vlan_len;                  /* VLAN tags inserted after the MACs: 0, 4, 8 bytes */
	uint8_t vlan[TXS_VLAN_HLEN * TXS_VLAN_MAX_TAGS];
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

/* Write flow id, seq and timestamp into a payload header laid down by
 * txs_ph_write. */
static inline void ph_patch(uint8_t *p, size_t n, uint32_t flow, uint64_t seq, uint64_t ts)
{
	enum txs_ph_kind k = txs_ph_kind_for(n);
	if (k == TXS_PH_FULL) {
		txs_put_be32(p + 4, flow);
		txs_put_be64(p + 8, seq);
		txs_put_be64(p + 16, ts);
	} else if (k == TXS_PH_COMPACT) {
		txs_put_be16(p + 2, (uint16_t)flow);
		txs_put_be32(p + 4, (uint32_t)seq);
		txs_put_be64(p + 8, ts);
	}
}

TXS_API unsigned txs_udp_shape_frames(const struct txs_shape *sh, bool v4, uint32_t mtu, uint32_t payload_len)
{
	unsigned n = sh && sh->n_sizes ? sh->n_sizes : 1, f0 = 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned f = txs_udp_call_frames(v4, mtu, sh && sh->n_sizes ? sh->sizes[k] : payload_len, 0);
		if (k && f != f0)
			return 0;
		f0 = f;
	}
	return f0;
}

static void sg_free(struct sg_state *g)
{
	for (unsigned k = 0; k < g->n_eps; k++)
		txs_udp_close(g->ep[k]);
	txs_ident_core_close(g->icore);
	txs_linksel_core_close(g->ls);
	for (unsigned k = 0; k < TXS_SHAPE_MAX_SIZES; k++)
		free(g->pay[k]);
	free(g->fl);
	free(g->pat);
	free(g);
}

void udp_flow_key(struct txs_linksel *ls, struct txs_flow_key *k, const struct txs_flow_spec *sp)
{
	memcpy(k->src_mac, sp->src_mac, 6);
	memcpy(k->dst_mac, sp->dst_mac, 6);
	k->family = sp->src.family;
	memcpy(k->saddr, sp->src.bytes, sp->src.family == AF_INET ? 4 : 16);
	memcpy(k->daddr, sp->dst.bytes, sp->dst.family == AF_INET ? 4 : 16);
	k->sport = sp->sport;
	k->dport = sp->dport;
	k->proto = TXS_IPPROTO_UDP;
	txs_linksel_key_prepare(ls, k);
}

static bool shaped(const struct txs_shape *sh)
{
	return sh && (sh->flows > 1 || sh->n_sizes > 1 || sh->sport.span > 1 || sh->dport.span > 1 ||
		      sh->src.span > 1 || sh->dst.span > 1);
}

/* The endpoint of (src, sport): an existing one, or a new one. */
static int sg_ep(struct sg_state *g, struct txs_worker *w, const struct txs_udp_conf *uc0,
		 const struct txs_flow_spec *sp, uint16_t *idx)
{
	for (unsigned k = 0; k < g->n_eps; k++) {
		const struct txs_udp_conf *c = &g->ep[k]->conf;
		if (c->sport == sp->sport && memcmp(c->src.bytes, sp->src.bytes, 16) == 0) {
			*idx = (uint16_t)k;
			return 0;
		}
	}
	if (g->n_eps == TXS_UDP_SHAPE_MAX_EPS)
		return -E2BIG;
	struct txs_udp_conf uc = *uc0;
	uc.src = sp->src;
	uc.sport = sp->sport;
	int rc = txs_udp_open(&g->ep[g->n_eps], w->txq, &uc);
	if (rc < 0)
		return rc;
	*idx = (uint16_t)g->n_eps++;
	return 0;
}

static int sg_init(struct txs_worker *w, void *confp)
{
	const struct txs_udp_gen_conf *c = confp;
	const struct txs_flow_spec *sp = &c->spec;
	const struct txs_shape *sh = shaped(c->shape) ? c->shape : NULL;
	struct sg_state *g = txs_zalloc_line(sizeof(*g));
	if (!g)
		return -ENOMEM;
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
	g->gso = c->gso_size;
	g->n_flows = sh && sh->flows ? sh->flows : 1;
	g->n_sizes = sh && sh->n_sizes ? sh->n_sizes : 1;
	g->connected = c->connected && !sh;
	bool v4 = sp->dst.family == AF_INET ||
		  (sp->dst.family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&sp->dst.v6));
	if (rc == 0 && sh && (g->gso && sh->n_sizes > 1))
		rc = -EINVAL; /* one GSO size per run */
	if (rc == 0 && sh && !txs_udp_shape_frames(sh, v4, mtu, sp->payload_len))
		rc = -EINVAL; /* the engine counts one frames-per-datagram per worker */
	if (rc == 0)
		rc = txs_shape_pattern(sh, &g->pat, &g->pat_len);
	if (rc == 0 && !(g->fl = calloc(g->n_flows, sizeof(*g->fl))))
		rc = -ENOMEM;
	/* flows: the same walk as the template path's (gen.c) */
	uint64_t rng = txs_shape_rng_seed(c->seed, w->id);
	for (uint32_t i = 0; rc == 0 && i < g->n_flows; i++) {
		struct txs_flow_spec f;
		txs_shape_flow(sh, sp, c->spread_sport, w->id, i, &rng, &f);
		struct sg_flow *fl = &g->fl[i];
		fl->id = f.flow_id;
		fl->sl = txs_udp_sockaddr(&fl->ss, &f.dst, f.dport);
		if ((rc = sg_ep(g, w, &uc, &f, &fl->ep)) < 0)
			break;
		if (c->linksel && !g->ls) {
			if ((rc = txs_linksel_core_open(c->linksel, w->id, &g->ls)) < 0)
				break;
			if (txs_linksel_core_broadcast(g->ls)) {
				rc = -EOPNOTSUPP; /* copies of multi-frame calls: not on this path */
				break;
			}
		}
		if (c->linksel)
			udp_flow_key(c->linksel, &fl->key, &f);
	}
	if (rc == 0 && g->connected)
		rc = txs_udp_connect(g->ep[0], (struct sockaddr *)&g->fl[0].ss, g->fl[0].sl);
	for (uint32_t s = 0; rc == 0 && s < g->n_sizes; s++) {
		size_t len = sh && sh->n_sizes ? sh->sizes[s] : sp->payload_len;
		g->len[s] = len;
		/* the checks of the first call, once: a run whose every call
		 * fails (DF over the MTU, GSO limits) is refused here */
		uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
		if (g->gso && ((len < g->gso ? len : g->gso) + hdrs > mtu))
			rc = -EMSGSIZE;
		else if (g->gso && (len > (size_t)g->gso * g->ep[0]->max_segs || sp->no_udp_csum))
			rc = -EINVAL;
		else if (!g->gso && sp->df && len + hdrs > mtu)
			rc = -EMSGSIZE;
		else if (!(g->pay[s] = malloc(len ? len : 1)))
			rc = -ENOMEM;
		if (rc < 0)
			break;
		/* one flow header per datagram that will leave: per GSO segment */
		struct txs_ph ph = { .flow = g->fl[0].id };
		size_t step = g->gso && len > g->gso ? g->gso : (len ? len : 1);
		for (size_t off = 0; off < len || off == 0; off += step) {
			size_t n = len - off < step ? len - off : step;
			ph.kind = txs_ph_kind_for(n);
			txs_ph_write(g->pay[s] + off, n, &ph);
			if (len == 0)
				break;
		}
	}
	if (rc < 0) {
		sg_free(g);
		return rc;
	}
	/* VLAN tags: the endpoint makes untagged frames (runts padded to 60),
	 * the tags go in after the MACs, as gen.c's templates have them */
	if (sp->n_vlan > TXS_VLAN_MAX_TAGS) {
		sg_free(g);
		return -EINVAL;
	}
	g->vlan_len = TXS_VLAN_HLEN * sp->n_vlan;
	for (unsigned k = 0; k < sp->n_vlan; k++) {
		txs_put_be16(g->vlan + 4 * k, sp->n_vlan == 2 && k == 0 ? TXS_ETHERTYPE_8021AD : TXS_ETHERTYPE_8021Q);
		txs_put_be16(g->vlan + 4 * k + 2, sp->vlan_tci[k]);
	}
	g->fpc = txs_udp_call_frames(v4, mtu, g->len[0], g->gso);
	g->dpc = g->gso && g->len[0] > g->gso ? g->fpc : 1;
	/* the engine counts datagrams: fragments of one make fpc frames; GSO
	 * segments are datagrams of one frame each */
	w->frames_per_dgram = g->fpc / g->dpc;
	w->min_frames = g->fpc;
	w->gen = g;
	return 0;
}

/* Insert the VLAN tags after the MACs of n frames. */
static bool sg_tag(const struct sg_state *g, struct txs_pktbuf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (b[i].len + g->vlan_len > b[i].cap || b[i].len < 12)
			return false;
		memmove(b[i].data + 12 + g->vlan_len, b[i].data + 12, b[i].len - 12);
		memcpy(b[i].data + 12, g->vlan, g->vlan_len);
		b[i].len += g->vlan_len;
		b[i].l4_off = (uint16_t)(b[i].l4_off + g->vlan_len);
	}
	return true;
}

static unsigned sg_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct sg_state *g = w->gen;
	struct iovec v = { NULL, 0 };
	struct txs_udp_msg m = { .iov = &v, .iovlen = 1 };
	/* datagrams still due: the engine says when a call holds several (GSO);
	 * otherwise it never asks for more than are due */
	uint64_t left = g->dpc > 1 ? w->left : UINT64_MAX;
	unsigned used = 0;
	while (left) {
		struct sg_flow *f = &g->fl[g->cur];
		unsigned si = g->pat[g->pos];
		uint8_t *pay = g->pay[si];
		size_t len = g->len[si];
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
		if (g->ls && TXS_UNLIKELY(txs_linksel_select_mask(g->ls, &f->key, &mask) < 0)) {
			if (!used)
				w->fill_err = -ENETDOWN;
			break; /* no link up: counted by the selector */
		}
		uint64_t seq = f->seq;
		if (dg > 1) {
			for (size_t off = 0; off < len; off += g->gso)
				ph_patch(pay + off, len - off < g->gso ? len - off : g->gso, f->id, seq++, now_ns);
		} else {
			ph_patch(pay, len, f->id, seq++, now_ns);
		}
		v.iov_base = pay;
		v.iov_len = len;
		m.name = g->connected ? NULL : (const struct sockaddr *)&f->ss;
		m.namelen = g->connected ? 0 : f->sl;
		struct txs_udp_ep *ep = g->ep[f->ep];
		udp_ep_borrow(ep, b + used, n - used);
		ssize_t rc = txs_udp_sendmsg(ep, &m);
		unsigned made = udp_ep_unborrow(ep);
		if (rc < 0) {
			if (!used)
				w->fill_err = (int)rc;
			used += made;
			break;
		}
		uint16_t link = (uint16_t)__builtin_ctz(mask);
		for (unsigned i = used; i < used + made; i++)
			b[i].link = link;
		if (g->vlan_len && !sg_tag(g, b + used, made)) {
			if (!used)
				w->fill_err = -EMSGSIZE;
			break; /* not reached: the device was opened with room for the tags */
		}
		f->seq = seq;
		used += made;
		left -= dg;
		if (++g->cur == g->n_flows)
			g->cur = 0;
		if (++g->pos == g->pat_len)
			g->pos = 0;
	}
	return used;
}

static void sg_fini(struct txs_worker *w)
{
	struct sg_state *g = w->gen;
	if (!g)
		return;
	sg_free(g);
	w->gen = NULL;
}

static const struct txs_gen_ops udp_sock_gen_ops = {
	.init = sg_init,
	.fill = sg_fill,
	.fini = sg_fini,
};

TXS_API const struct txs_gen_ops *txs_udp_sock_gen(void)
{
	return &udp_sock_gen_ops;
}
