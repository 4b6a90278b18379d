/* SPDX-License-Identifier: MIT */
/* The connected-flow generator's fill for a burst the engine profile samples
 * (include/txscale/engine.h, docs/profile.md). */
#include <errno.h>
#include "gen_priv.h"

/* A profiled burst's packets (at most PROF_MAX): their IDs and links,
 * gathered stage by stage. */
#define PROF_MAX 256
struct prof_scratch {
	uint16_t ids[PROF_MAX];
	uint32_t masks[PROF_MAX];
};

/* The stages' cycles of one burst: linksel s0..s1, ident s1..s2, header
 * s2..now, each less the cost of a stamp. */
static void prof_stages(struct txs_prof *pf, uint64_t s0, uint64_t s1, uint64_t s2)
{
	uint64_t s3 = txs_prof_stamp();
	int64_t cost = (int64_t)pf->stamp_cost;
	pf->cyc[TXS_PROF_LINKSEL] += (int64_t)(s1 - s0) - cost;
	pf->cyc[TXS_PROF_IDENT] += (int64_t)(s2 - s1) - cost;
	pf->cyc[TXS_PROF_HEADER] += (int64_t)(s3 - s2) - cost;
	pf->stamps += 4;
}

/* gen_fill for a sampled burst (engine profile): the same frames, built in
 * stages over the whole burst so that four counter reads time it: select the
 * links of every packet that fits, reserve their IDs, then patch the headers
 * (and lay down broadcast copies). Each stage's cycles, net of one read's
 * cost, go to w->prof. */
unsigned udp_gen_fill_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct gen_state *g = w->gen;
	if (g->shaped)
		return udp_gen_fill_shaped_prof(w, b, n, now_ns);
	const struct txs_tmpl *t = &g->t;
	struct txs_prof *pf = &w->prof;
	if (TXS_UNLIKELY(n && b[0].cap < t->wire_len))
		return 0;
	struct prof_scratch sc;
	if (TXS_UNLIKELY(n > PROF_MAX))
		n = PROF_MAX;
	uint64_t s0 = txs_prof_stamp();
	/* linksel: links of each packet, as many packets as their frames fit */
	unsigned i0 = 0, np = 0, frames;
	frames = i0 = TXS_UNLIKELY(g->bc_left) ? (unsigned)__builtin_popcount(g->bc_left) : 0;
	if (i0 > n)
		frames = i0 = n;
	if (g->ls) {
		while (frames < n) {
			uint32_t mask = 1;
			int copies = txs_linksel_select_mask(g->ls, &g->key, &mask);
			if (TXS_UNLIKELY(copies < 0))
				break; /* no link up: counted by the selector */
			sc.masks[np++] = mask;
			frames += (unsigned)copies;
		}
	} else {
		np = n - frames; /* every packet on link 0: nothing to select */
	}
	uint64_t s1 = txs_prof_stamp();
	/* ident: one ID per packet */
	uint16_t id = g->ip_id;
	struct gen_ident *gi = g->id.core ? &g->id : NULL;
	if (gi) {
		txs_ident_core_tick(gi->core); /* once per burst: stale leases expire */
		for (unsigned p = 0; p < np; p++)
			sc.ids[p] = gen_ident_next(gi, &g->one);
		if (np)
			id = (uint16_t)(sc.ids[np - 1] + 1);
	} else {
		for (unsigned p = 0; p < np; p++)
			sc.ids[p] = id++;
	}
	uint64_t s2 = txs_prof_stamp();
	/* header: patch the template into each packet's first frame */
	unsigned i = 0;
	if (TXS_UNLIKELY(g->bc_left)) /* copies owed from the last fill */
		i = udp_gen_copies(g, b, 0, n, g->bc_frame, g->bc_len, g->bc_left);
	uint64_t seq = g->seq;
	for (unsigned p = 0; p < np && i < n; p++) {
		uint32_t mask = g->ls ? sc.masks[p] : 1;
		gen_buf_set(&b[i], txs_tmpl_patch(t, b[i].data, sc.ids[p], seq++, now_ns), t, mask);
		i = gen_copies_next(g, b, i + 1, n, mask & (mask - 1), mask);
	}
	g->seq = seq;
	g->ip_id = id;
	prof_stages(pf, s0, s1, s2);
	return gen_fill_done(w, i, n);
}

/* The same for a shaped worker (udp_gen_fill_shaped's frames): flows in
 * turn from g->cur, sizes from the cycle at g->pat_pos. */
unsigned udp_gen_fill_shaped_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct gen_state *g = w->gen;
	struct txs_prof *pf = &w->prof;
	if (TXS_UNLIKELY(n && b[0].cap < g->max_wire))
		return 0;
	struct prof_scratch sc;
	if (TXS_UNLIKELY(n > PROF_MAX))
		n = PROF_MAX;
	const uint32_t nf = g->n_flows, ns = g->n_sizes, pl = g->pat_len;
	uint64_t s0 = txs_prof_stamp();
	unsigned np = 0, frames;
	frames = TXS_UNLIKELY(g->bc_left) ? (unsigned)__builtin_popcount(g->bc_left) : 0;
	if (frames > n)
		frames = n;
	if (g->ls) {
		uint32_t cur = g->cur;
		while (frames < n) {
			uint32_t mask = 1;
			int copies = txs_linksel_select_mask(g->ls, &g->keys[cur], &mask);
			if (TXS_UNLIKELY(copies < 0))
				break;
			sc.masks[np++] = mask;
			frames += (unsigned)copies;
			if (++cur == nf)
				cur = 0;
		}
	} else {
		np = n - frames;
	}
	uint64_t s1 = txs_prof_stamp();
	struct gen_ident *gi = g->id.core ? &g->id : NULL;
	if (gi)
		txs_ident_core_tick(gi->core);
	for (unsigned p = 0, cur = g->cur; p < np; p++) {
		struct gen_flow *f = &g->fl[cur];
		sc.ids[p] = gi ? gen_ident_next(gi, f) : f->ip_id++;
		if (++cur == nf)
			cur = 0;
	}
	uint64_t s2 = txs_prof_stamp();
	unsigned i = 0;
	if (TXS_UNLIKELY(g->bc_left))
		i = udp_gen_copies(g, b, 0, n, g->bc_frame, g->bc_len, g->bc_left);
	uint32_t cur = g->cur, pos = g->pat_pos;
	const bool tags = n && b[0].cap >= g->max_wire + GEN_TAG_LEN;
	for (unsigned p = 0; p < np && i < n; p++) {
		uint32_t mask = g->ls ? sc.masks[p] : 1;
		const struct txs_tmpl *t = &g->tm[cur * ns + g->pat[pos]];
		gen_buf_set(&b[i], gen_patch_shaped(g->nonce, t, &b[i], tags, sc.ids[p], g->fl[cur].seq++, now_ns), t, mask);
		if (++cur == nf)
			cur = 0;
		if (++pos == pl)
			pos = 0;
		i = gen_copies_next(g, b, i + 1, n, mask & (mask - 1), mask);
	}
	g->cur = cur;
	g->pat_pos = pos;
	prof_stages(pf, s0, s1, s2);
	return gen_fill_done(w, i, n);
}
