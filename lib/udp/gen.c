/* SPDX-License-Identifier: MIT */
/* Connected-flow generator: template built once per worker, patched per packet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <txscale/gen.h>

/* ---- IPv4 ID from lib/ident (conf->ident_inst) -------------------------- */
struct gen_ident {
	struct txs_ident_core *core; /* NULL: use gen_state.ip_id */
	uint32_t hash;               /* the flow's bucket hash, computed once */
	bool flow, zero;             /* "flow" strategy; DF + df_zero: ID 0 */
	struct txs_ident_flow fl;
};

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

static inline uint16_t gen_ident_next(struct gen_ident *gi)
{
	if (gi->zero)
		return 0;
	if (gi->flow)
		return txs_ident_flow_reserve(&gi->fl, 1);
	return txs_ident_reserve_fast(gi->core, gi->hash, 1);
}

struct gen_state {
	struct txs_tmpl t;
	uint64_t seq;
	uint16_t ip_id; /* per-flow counter, random start (kernel inet_id) */
	struct gen_ident id; /* allocator from conf->ident_inst, if any */
} TXS_CACHE_ALIGNED;

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
	rc = gen_ident_open(&g->id, c->ident_inst, &sp, w->id);
	if (rc < 0) {
		txs_tmpl_free(&g->t);
		free(g);
		return rc;
	}
	w->gen = g;
	return 0;
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
	for (unsigned i = 0; i < n; i++) {
		if (gi)
			id = gen_ident_next(gi);
		b[i].len = txs_tmpl_patch(t, b[i].data, id++, seq++, now_ns);
		b[i].l4_off = t->l4_off;
		b[i].segs = 1;
	}
	g->seq = seq;
	g->ip_id = id;
	return n;
}

static void gen_fini(struct txs_worker *w)
{
	struct gen_state *g = w->gen;
	if (!g)
		return;
	txs_ident_core_close(g->id.core);
	txs_tmpl_free(&g->t);
	free(g);
	w->gen = NULL;
}

TXS_API const struct txs_gen_ops txs_udp_gen_ops = {
	.init = gen_init,
	.fill = gen_fill,
	.fini = gen_fini,
};
