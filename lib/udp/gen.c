/* SPDX-License-Identifier: MIT */
/* Connected-flow generator: template built once per worker, patched per packet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <txscale/udp.h>
#include "gen_priv.h"

/* ---- IPv4 ID from lib/ident (conf->ident_inst) -------------------------- */
static int gen_ident_open(struct gen_ident *gi, struct txs_ident *inst, const struct txs_flow_spec *sp, unsigned k)
{
	if (!inst || sp->dst.family != AF_INET)
		return 0; /* IPv6 datagrams sent whole carry no ID */
	int rc = txs_ident_core_open(inst, k, &gi->core);
	if (rc < 0)
		return rc;
	gi->hash = txs_ident_hash4(inst, sp->dst.v4.s_addr, sp->src.v4.s_addr, 17 /* UDP */);
	gi->flow = strcmp(txs_ident_name(inst), "flow") == 0;
	if (gi->flow)
		txs_ident_flow_init(gi->core, &gi->fl);
	gi->zero = sp->df && txs_ident_df_zero(inst); /* datagrams are never fragmented here */
	return 0;
}

static uint64_t seed64(uint64_t seed, unsigned id)
{
	uint64_t v = seed;
	if (!v && getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = txs_now_mono_ns();
	v += 0x9e3779b97f4a7c15ull * (id + 1);
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

static int gen_linksel_init(struct gen_state *g, struct txs_linksel *ls, unsigned core,
			    const struct txs_flow_spec *sp)
{
	int rc = txs_linksel_core_open(ls, core, &g->ls);
	if (rc < 0)
		return rc;
	struct txs_flow_key *k = &g->key;
	memcpy(k->src_mac, sp->src_mac, 6);
	memcpy(k->dst_mac, sp->dst_mac, 6);
	k->family = sp->src.family;
	memcpy(k->saddr, sp->src.bytes, sp->src.family == AF_INET ? 4 : 16);
	memcpy(k->daddr, sp->dst.bytes, sp->dst.family == AF_INET ? 4 : 16);
	k->sport = sp->sport;
	k->dport = sp->dport;
	k->proto = TXS_IPPROTO_UDP;
	txs_linksel_key_prepare(ls, k);
	if (txs_linksel_core_broadcast(g->ls) && !(g->bc_frame = malloc(g->t.wire_len)))
		return -ENOMEM;
	return 0;
}

static int gen_init(struct txs_worker *w, void *confp)
{
	const struct txs_gen_conf *c = confp;
	struct gen_state *g = aligned_alloc(TXS_CACHE_LINE, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	struct txs_flow_spec sp = c->spec;
	sp.flow_id += w->id;
	if (c->spread_sport)
		sp.sport = (uint16_t)(sp.sport + w->id);
	const struct txs_netdev *dev = w->txq->dev;
	if (!txs_udp_fast_path_ok(dev, &sp, 0, true, 0)) {
		/* one frame per datagram only where the sendmsg semantics make one:
		 * above the MTU that is txs_udp_sock_gen_ops's fragments */
		free(g);
		return -EMSGSIZE;
	}
	if (dev->l2_needed) {
		memcpy(sp.src_mac, dev->src_mac, 6);
		memcpy(sp.dst_mac, dev->dst_mac, 6);
	}
	int rc = txs_tmpl_build(&g->t, &sp);
	if (rc < 0) {
		free(g);
		return rc;
	}
	g->ip_id = (uint16_t)seed64(c->seed, w->id);
	if ((rc = gen_ident_open(&g->id, c->ident_inst, &sp, w->id)) < 0 ||
	    (c->linksel && (rc = gen_linksel_init(g, c->linksel, w->id, &sp)) < 0)) {
		txs_ident_core_close(g->id.core);
		txs_linksel_core_close(g->ls);
		txs_tmpl_free(&g->t);
		free(g);
		return rc;
	}
	w->gen = g;
	return 0;
}

/* Broadcast: frames b[i..n) become copies of `frame` on the links of mask, in
 * link order. Copies that do not fit are owed: the frame is kept and the next
 * fill starts with them, so a packet reaches every link even when the engine
 * asks for fewer frames than there are links (pacing). Returns the next i. */
unsigned udp_gen_copies(struct gen_state *g, struct txs_pktbuf *b, unsigned i, unsigned n,
			   const uint8_t *frame, uint32_t len, uint32_t mask)
{
	for (; mask && i < n; mask &= mask - 1, i++) {
		memcpy(b[i].data, frame, len);
		b[i].len = len;
		b[i].l4_off = g->t.l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
	}
	if (mask && frame != g->bc_frame) {
		memcpy(g->bc_frame, frame, len);
		g->bc_len = len;
	}
	g->bc_left = mask;
	return i;
}

static unsigned gen_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct gen_state *g = w->gen;
	const struct txs_tmpl *t = &g->t;
	if (TXS_UNLIKELY(n && b[0].cap < t->wire_len))
		return 0;
	uint64_t seq = g->seq;
	uint16_t id = g->ip_id;
	struct gen_ident *gi = g->id.core ? &g->id : NULL;
	if (gi)
		txs_ident_core_tick(gi->core); /* once per burst: stale leases expire */
	unsigned i = 0;
	if (TXS_UNLIKELY(g->bc_left)) /* copies owed from the last fill */
		i = udp_gen_copies(g, b, 0, n, g->bc_frame, g->bc_len, g->bc_left);
	while (i < n) {
		uint32_t mask = 1; /* links of this packet: one, or every up link (broadcast) */
		int copies = 1;
		if (g->ls && TXS_UNLIKELY((copies = txs_linksel_select_mask(g->ls, &g->key, &mask)) < 0))
			break; /* no link up: counted by the selector */
		if (gi)
			id = gen_ident_next(gi);
		b[i].len = txs_tmpl_patch(t, b[i].data, id++, seq++, now_ns);
		b[i].l4_off = t->l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
		i++;
		if (TXS_UNLIKELY(copies > 1))
			i = udp_gen_copies(g, b, i, n, b[i - 1].data, b[i - 1].len, mask & (mask - 1));
	}
	g->seq = seq;
	g->ip_id = id;
	if (TXS_UNLIKELY(i == 0 && n))
		w->fill_err = -ENETDOWN; /* only "no link up" leaves a burst empty */
	return i;
}

static void gen_fini(struct txs_worker *w)
{
	struct gen_state *g = w->gen;
	if (!g)
		return;
	txs_ident_core_close(g->id.core);
	txs_linksel_core_close(g->ls);
	free(g->bc_frame);
	txs_tmpl_free(&g->t);
	free(g);
	w->gen = NULL;
}

TXS_API const struct txs_gen_ops txs_udp_gen_ops = {
	.init = gen_init,
	.fill = gen_fill,
	.fini = gen_fini,
	.fill_prof = udp_gen_fill_prof, /* gen_prof.c */
};
