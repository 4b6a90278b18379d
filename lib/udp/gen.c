/* SPDX-License-Identifier: MIT */
/* Connected-flow generator: template built once per worker, patched per packet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <txscale/udp.h>
#include "common/alloc.h"
#include "gen_priv.h"
#include "udp_priv.h"

/* ---- IPv4 ID from lib/ident (conf->ident_inst) -------------------------- */
static int gen_ident_open(struct gen_ident *gi, struct txs_ident *inst, const struct txs_flow_spec *sp, unsigned k)
{
	if (!inst || sp->dst.family != AF_INET)
		return 0; /* IPv6 datagrams sent whole carry no ID */
	int rc = txs_ident_core_open(inst, k, &gi->core);
	if (rc < 0)
		return rc;
	gi->flow = strcmp(txs_ident_name(inst), "flow") == 0;
	gi->zero = sp->df && txs_ident_df_zero(inst); /* datagrams are never fragmented here */
	return 0;
}

/* A flow's ID state: its bucket (own destination) or its own counter. */
static void gen_flow_ident(struct gen_flow *f, const struct gen_ident *gi, struct txs_ident *inst,
			   const struct txs_flow_spec *sp)
{
	if (!gi->core)
		return;
	f->hash = txs_ident_hash4(inst, sp->dst.v4.s_addr, sp->src.v4.s_addr, 17 /* UDP */);
	if (gi->flow)
		txs_ident_flow_init(gi->core, &f->fl);
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
	udp_flow_key(ls, &g->key, sp);
	if (txs_linksel_core_broadcast(g->ls) && !(g->bc_frame = malloc(g->max_wire)))
		return -ENOMEM;
	return 0;
}

static void gen_free(struct gen_state *g)
{
	txs_ident_core_close(g->id.core);
	txs_linksel_core_close(g->ls);
	free(g->bc_frame);
	if (g->tm) {
		for (uint32_t k = 0; k < g->n_flows * g->n_sizes && !g->arena; k++)
			txs_tmpl_free(&g->tm[k]);
		free(g->tm);
	} else {
		txs_tmpl_free(&g->t);
	}
	free(g->arena);
	free(g->keys);
	free(g->fl);
	free(g->pat);
	free(g);
}

/* Shaped worker: one template per (flow, size), the size cycle, per-flow
 * state. Everything per packet is then an index into these. */
static int gen_shape_init(struct gen_state *g, const struct txs_gen_conf *c, const struct txs_flow_spec *sp0,
			  unsigned k, const struct txs_netdev *dev, uint64_t rng)
{
	const struct txs_shape *sh = c->shape;
	g->shaped = true;
	g->n_flows = sh->flows ? sh->flows : 1;
	g->n_sizes = sh->n_sizes ? sh->n_sizes : 1;
	if ((uint64_t)g->n_flows * g->n_sizes > (1u << 20))
		return -E2BIG;
	int rc = txs_shape_pattern(sh, &g->pat, &g->pat_len);
	if (rc < 0)
		return rc;
	g->tm = calloc((size_t)g->n_flows * g->n_sizes, sizeof(*g->tm));
	g->fl = aligned_alloc(TXS_CACHE_LINE, ((sizeof(*g->fl) * g->n_flows) + TXS_CACHE_LINE - 1) &
						  ~(size_t)(TXS_CACHE_LINE - 1));
	if (!g->tm || !g->fl)
		return -ENOMEM;
	memset(g->fl, 0, sizeof(*g->fl) * g->n_flows);
	uint64_t ids = seed64(c->seed, k);
	for (uint32_t i = 0; i < g->n_flows; i++) {
		struct txs_flow_spec sp;
		txs_shape_flow(sh, sp0, c->spread_sport, k, i, &rng, &sp);
		for (uint32_t s = 0; s < g->n_sizes; s++) {
			if (sh->n_sizes)
				sp.payload_len = sh->sizes[s];
			if (!txs_udp_fast_path_ok(dev, &sp, 0, true, 0))
				return -EMSGSIZE;
			struct txs_tmpl *t = &g->tm[i * g->n_sizes + s];
			if ((rc = txs_tmpl_build(t, &sp)) < 0)
				return rc;
			if (t->wire_len > g->max_wire)
				g->max_wire = t->wire_len;
		}
		g->fl[i].ip_id = (uint16_t)txs_rng_next(&ids);
	}
	if (getrandom(&g->nonce, sizeof(g->nonce), 0) != sizeof(g->nonce))
		g->nonce = txs_rng_next(&ids) | 1;
	/* the frames in one block, in (flow, size) order: the fill walks them in turn */
	size_t total = 0, nt = (size_t)g->n_flows * g->n_sizes;
	for (size_t j = 0; j < nt; j++)
		total += (g->tm[j].wire_len + 15) & ~15u;
	if ((g->arena = aligned_alloc(TXS_CACHE_LINE, (total + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1)))) {
		size_t off = 0;
		for (size_t j = 0; j < nt; j++) {
			memcpy(g->arena + off, g->tm[j].frame, g->tm[j].wire_len);
			txs_tmpl_free(&g->tm[j]);
			g->tm[j].frame = g->arena + off;
			off += (g->tm[j].wire_len + 15) & ~15u;
		}
	} /* else: each template keeps its own frame */
	g->t = g->tm[0]; /* a copy for reading only (l4_off of broadcast copies) */
	return 0;
}

static int gen_init(struct txs_worker *w, void *confp)
{
	const struct txs_gen_conf *c = confp;
	struct gen_state *g = txs_zalloc_line(sizeof(*g));
	if (!g)
		return -ENOMEM;
	struct txs_flow_spec sp = c->spec;
	const struct txs_netdev *dev = w->txq->dev;
	if (dev->l2_needed) {
		memcpy(sp.src_mac, dev->src_mac, 6);
		memcpy(sp.dst_mac, dev->dst_mac, 6);
	}
	const struct txs_shape *sh = c->shape;
	int rc = 0;
	/* the worker's RNG for random walks: --seed, else random; every pass
	 * over the flows below starts from it, so they see the same walk */
	const uint64_t rng0 = txs_shape_rng_seed(c->seed, w->id);
	if (sh && ((sh->flows > 1) || sh->n_sizes > 1 || sh->sport.span > 1 || sh->dport.span > 1 ||
		   sh->src.span > 1 || sh->dst.span > 1)) {
		rc = gen_shape_init(g, c, &sp, w->id, dev, rng0);
	} else {
		if (sh && sh->n_sizes == 1)
			sp.payload_len = sh->sizes[0];
		sp.flow_id += w->id;
		if (c->spread_sport)
			sp.sport = (uint16_t)(sp.sport + w->id);
		if (!txs_udp_fast_path_ok(dev, &sp, 0, true, 0))
			rc = -EMSGSIZE; /* one frame per datagram only where the sendmsg
					 * semantics make one: above the MTU that is
					 * txs_udp_sock_gen_ops's fragments */
		else if ((rc = txs_tmpl_build(&g->t, &sp)) == 0)
			g->max_wire = g->t.wire_len;
		g->ip_id = (uint16_t)seed64(c->seed, w->id);
	}
	if (rc == 0 && (rc = gen_ident_open(&g->id, c->ident_inst, &sp, w->id)) == 0) {
		if (g->shaped) {
			struct txs_flow_spec f;
			uint64_t rng = rng0;
			for (uint32_t i = 0; i < g->n_flows; i++) {
				txs_shape_flow(sh, &sp, c->spread_sport, w->id, i, &rng, &f);
				gen_flow_ident(&g->fl[i], &g->id, c->ident_inst, &f);
			}
		} else {
			gen_flow_ident(&g->one, &g->id, c->ident_inst, &sp);
		}
	}
	if (rc == 0 && c->linksel) {
		rc = gen_linksel_init(g, c->linksel, w->id, &sp);
		if (rc == 0 && g->shaped && !(g->keys = calloc(g->n_flows, sizeof(*g->keys))))
			rc = -ENOMEM;
		if (rc == 0 && g->shaped) {
			struct txs_flow_spec f;
			uint64_t rng = rng0;
			for (uint32_t i = 0; i < g->n_flows; i++) {
				txs_shape_flow(sh, &sp, c->spread_sport, w->id, i, &rng, &f);
				udp_flow_key(c->linksel, &g->keys[i], &f);
			}
		}
	}
	if (rc < 0) {
		gen_free(g);
		return rc;
	}
	w->gen = g;
	return 0;
}

static void gen_fini(struct txs_worker *w)
{
	if (w->gen)
		gen_free(w->gen);
	w->gen = NULL;
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
		gen_buf_set(&b[i], len, &g->t, mask);
	}
	if (mask && frame != g->bc_frame) {
		memcpy(g->bc_frame, frame, len);
		g->bc_len = len;
	}
	g->bc_left = mask;
	return i;
}

/* Shaped: flows take turns, sizes follow the cycle; per packet only indexes
 * (no division, no randomness) and the same patch as the one-flow fill. */
/* GEN_TS: the datagram's send timestamp: the burst's clock read, or with
 * --timestamps packet (each 1) one TSC read per datagram, inline, or
 * --timestamps interp (each 2) the burst's base plus a step per datagram
 * (txs_worker_stamp). Each fill is instantiated twice through an
 * always-inline body with `each` constant, so the burst path has no test per
 * packet and the packet path no call per packet. */
#define GEN_TS(each, st, now_ns) ((each) == 1 ? txs_stamper_read(&(st)) : (each) == 2 ? txs_stamper_next(&(st)) : (now_ns))
/* FILL_modes(): FILL (an always-inline body taking `each`) for the worker's
 * stamp mode, the two per-datagram modes apart (noinline) so that the
 * burst loop is compiled alone. */
#define GEN_STAMP_MODES(fill)                                                                              \
	static __attribute__((noinline)) unsigned fill##_tsc(struct txs_worker *w, struct txs_pktbuf *b,   \
							     unsigned n, uint64_t now_ns)                  \
	{                                                                                                  \
		return fill(w, b, n, now_ns, 1);                                                           \
	}                                                                                                  \
	static __attribute__((noinline)) unsigned fill##_interp(struct txs_worker *w, struct txs_pktbuf *b, \
								unsigned n, uint64_t now_ns)               \
	{                                                                                                  \
		return fill(w, b, n, now_ns, 2);                                                           \
	}                                                                                                  \
	static inline __attribute__((always_inline)) unsigned fill##_modes(struct txs_worker *w,           \
									   struct txs_pktbuf *b, unsigned n,   \
									   uint64_t now_ns)                    \
	{                                                                                                  \
		if (TXS_UNLIKELY(w->ts_packet))                                                            \
			return w->ts_cur == TXS_TS_INTERP ? fill##_interp(w, b, n, now_ns)                 \
							  : fill##_tsc(w, b, n, now_ns);                   \
		return fill(w, b, n, now_ns, 0);                                                           \
	}

static inline __attribute__((always_inline)) void stamper_init(struct txs_stamper *st, struct txs_worker *w,
								 const int each)
{
	if (each == 2)
		txs_stamper_init_interp(st, w);
	else
		txs_stamper_init(st, w);
}

/* A burst's first steps: stale leases expire (once per burst), the
 * broadcast copies owed from the last fill go first. Returns the buffers
 * those took; *gip: the ident, or NULL (per-flow counters). */
static inline __attribute__((always_inline)) unsigned burst_begin(struct gen_state *g, struct txs_pktbuf *b,
								  unsigned n, struct gen_ident **gip)
{
	struct gen_ident *gi = g->id.core ? &g->id : NULL;
	if (gi)
		txs_ident_core_tick(gi->core);
	*gip = gi;
	if (TXS_UNLIKELY(g->bc_left))
		return udp_gen_copies(g, b, 0, n, g->bc_frame, g->bc_len, g->bc_left);
	return 0;
}

/* The shaped loop on link 0. kind 1: one size (t = tm[cur]); kind 2: one
 * flow (t = tm[pat[pos]]); kind 0: both vary (t = tm[cur * ns + pat[pos]]).
 * With one size pl is 1 and pos stays 0; with one flow cur stays 0. */
static inline __attribute__((always_inline)) unsigned
shaped_run(struct txs_stamper *stp, struct gen_ident *gi, struct txs_pktbuf *b, unsigned i, unsigned n,
	   uint64_t now_ns, uint64_t nonce, bool tags, struct gen_flow *fl, const struct txs_tmpl *tm,
	   const uint8_t *pat, uint32_t nf, uint32_t ns, uint32_t pl, uint32_t *curp, uint32_t *posp, const int each,
	   const int kind)
{
	struct txs_stamper st = *stp;
	uint32_t cur = *curp, pos = *posp;
	for (; i < n; i++) {
		struct gen_flow *f = kind == 2 ? fl : &fl[cur];
		const struct txs_tmpl *t = kind == 1 ? &tm[cur] : kind == 2 ? &tm[pat[pos]] : &tm[cur * ns + pat[pos]];
		uint16_t id = gi ? gen_ident_next(gi, f) : f->ip_id++;
		gen_buf_set(&b[i], gen_patch_shaped(nonce, t, &b[i], tags, id, f->seq++, GEN_TS(each, st, now_ns)), t, 1);
		if (kind != 2)
			cur = cur + 1 == nf ? 0 : cur + 1;
		if (kind != 1)
			pos = pos + 1 == pl ? 0 : pos + 1;
	}
	*stp = st;
	*curp = cur;
	*posp = pos;
	return i;
}

static inline __attribute__((always_inline)) unsigned fill_shaped(struct txs_worker *w, struct txs_pktbuf *b,
								     unsigned n, uint64_t now_ns, const int each)
{
	struct txs_stamper st;
	stamper_init(&st, w, each);
	struct gen_state *g = w->gen;
	if (TXS_UNLIKELY(n && b[0].cap < g->max_wire))
		return 0;
	struct gen_ident *gi;
	unsigned i = burst_begin(g, b, n, &gi);
	uint32_t cur = g->cur, pos = g->pat_pos;
	const uint32_t nf = g->n_flows, ns = g->n_sizes, pl = g->pat_len;
	const uint8_t *const pat = g->pat;
	struct gen_flow *const fl = g->fl;
	const struct txs_tmpl *const tm = g->tm;
	struct txs_linksel_core *const ls = g->ls;
	const uint64_t nonce = g->nonce;
	const bool tags = n && b[0].cap >= g->max_wire + GEN_TAG_LEN;
	if (!ls) {
		/* every packet on link 0 (the common case): nothing to select;
		 * flows of one size and one flow of many sizes index their
		 * template directly (no multiply, one cursor) */
		if (ns == 1)
			i = shaped_run(&st, gi, b, i, n, now_ns, nonce, tags, fl, tm, pat, nf, ns, pl, &cur, &pos, each, 1);
		else if (nf == 1)
			i = shaped_run(&st, gi, b, i, n, now_ns, nonce, tags, fl, tm, pat, nf, ns, pl, &cur, &pos, each, 2);
		else
			i = shaped_run(&st, gi, b, i, n, now_ns, nonce, tags, fl, tm, pat, nf, ns, pl, &cur, &pos, each, 0);
	}
	while (i < n) {
		struct gen_flow *f = &fl[cur];
		uint32_t mask = 1;
		int copies = txs_linksel_select_mask(ls, &g->keys[cur], &mask);
		if (TXS_UNLIKELY(copies < 0))
			break; /* no link up: counted by the selector */
		const struct txs_tmpl *t = &tm[cur * ns + pat[pos]];
		uint16_t id = gi ? gen_ident_next(gi, f) : f->ip_id++;
		gen_buf_set(&b[i], gen_patch_shaped(nonce, t, &b[i], tags, id, f->seq++, GEN_TS(each, st, now_ns)), t, mask);
		cur = cur + 1 == nf ? 0 : cur + 1;
		pos = pos + 1 == pl ? 0 : pos + 1;
		i = gen_copies_next(g, b, i + 1, n, copies > 1, mask);
	}
	g->cur = cur;
	g->pat_pos = pos;
	return gen_fill_done(w, i, n);
}

GEN_STAMP_MODES(fill_shaped)

unsigned udp_gen_fill_shaped(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	return fill_shaped_modes(w, b, n, now_ns);
}

static inline __attribute__((always_inline)) unsigned fill_one(struct txs_worker *w, struct txs_pktbuf *b, unsigned n,
								  uint64_t now_ns, const int each)
{
	struct txs_stamper st;
	stamper_init(&st, w, each);
	struct gen_state *g = w->gen;
	const struct txs_tmpl *t = &g->t;
	if (TXS_UNLIKELY(n && b[0].cap < t->wire_len))
		return 0;
	uint64_t seq = g->seq;
	uint16_t id = g->ip_id;
	struct gen_ident *gi;
	unsigned i = burst_begin(g, b, n, &gi);
	while (i < n) {
		uint32_t mask = 1; /* links of this packet: one, or every up link (broadcast) */
		int copies = 1;
		if (g->ls && TXS_UNLIKELY((copies = txs_linksel_select_mask(g->ls, &g->key, &mask)) < 0))
			break; /* no link up: counted by the selector */
		if (gi)
			id = gen_ident_next(gi, &g->one);
		gen_buf_set(&b[i], txs_tmpl_patch(t, b[i].data, id++, seq++, GEN_TS(each, st, now_ns)), t, mask);
		i = gen_copies_next(g, b, i + 1, n, copies > 1, mask);
	}
	g->seq = seq;
	g->ip_id = id;
	return gen_fill_done(w, i, n);
}

GEN_STAMP_MODES(fill_one)

static unsigned gen_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	const struct gen_state *g = w->gen;
	if (g->shaped)
		return udp_gen_fill_shaped(w, b, n, now_ns);
	return fill_one_modes(w, b, n, now_ns);
}

static const struct txs_gen_ops udp_gen_ops = {
	.init = gen_init,
	.fill = gen_fill,
	.fini = gen_fini,
	.fill_prof = udp_gen_fill_prof, /* gen_prof.c */
	.stamps_each = true,
};

TXS_API const struct txs_gen_ops *txs_udp_gen(void)
{
	return &udp_gen_ops;
}
