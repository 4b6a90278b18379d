/* SPDX-License-Identifier: MIT */
/* The connected-flow generator's fill for a burst the engine profile samples
 * (include/txscale/engine.h, docs/profile.md). */
#include <errno.h>
#include "gen_priv.h"

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
	int64_t cost = (int64_t)pf->stamp_cost;
	if (TXS_UNLIKELY(n && b[0].cap < t->wire_len))
		return 0;
	uint16_t ids[256];
	uint32_t masks[256];
	if (TXS_UNLIKELY(n > TXS_ARRAY_SIZE(ids)))
		n = TXS_ARRAY_SIZE(ids);
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
			masks[np++] = mask;
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
			ids[p] = gen_ident_next(gi, &g->one);
		if (np)
			id = (uint16_t)(ids[np - 1] + 1);
	} else {
		for (unsigned p = 0; p < np; p++)
			ids[p] = id++;
	}
	uint64_t s2 = txs_prof_stamp();
	/* header: patch the template into each packet's first frame */
	unsigned i = 0;
	if (TXS_UNLIKELY(g->bc_left)) /* copies owed from the last fill */
		i = udp_gen_copies(g, b, 0, n, g->bc_frame, g->bc_len, g->bc_left);
	uint64_t seq = g->seq;
	for (unsigned p = 0; p < np && i < n; p++) {
		uint32_t mask = g->ls ? masks[p] : 1;
		b[i].len = txs_tmpl_patch(t, b[i].data, ids[p], seq++, now_ns);
		b[i].l4_off = t->l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
		i++;
		if (TXS_UNLIKELY(mask & (mask - 1)))
			i = udp_gen_copies(g, b, i, n, b[i - 1].data, b[i - 1].len, mask & (mask - 1));
	}
	g->seq = seq;
	g->ip_id = id;
	uint64_t s3 = txs_prof_stamp();
	pf->cyc[TXS_PROF_LINKSEL] += (int64_t)(s1 - s0) - cost;
	pf->cyc[TXS_PROF_IDENT] += (int64_t)(s2 - s1) - cost;
	pf->cyc[TXS_PROF_HEADER] += (int64_t)(s3 - s2) - cost;
	pf->stamps += 4;
	if (TXS_UNLIKELY(i == 0 && n))
		w->fill_err = -ENETDOWN; /* only "no link up" leaves a burst empty */
	return i;
}

/* The same for a shaped worker (udp_gen_fill_shaped's frames): flows in
 * turn from g->cur, sizes from the cycle at g->pat_pos. */
unsigned udp_gen_fill_shaped_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct gen_state *g = w->gen;
	struct txs_prof *pf = &w->prof;
	int64_t cost = (int64_t)pf->stamp_cost;
	if (TXS_UNLIKELY(n && b[0].cap < g->max_wire))
		return 0;
	uint16_t ids[256];
	uint32_t masks[256];
	if (TXS_UNLIKELY(n > TXS_ARRAY_SIZE(ids)))
		n = TXS_ARRAY_SIZE(ids);
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
			masks[np++] = mask;
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
		ids[p] = gi ? gen_ident_next(gi, f) : f->ip_id++;
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
		uint32_t mask = g->ls ? masks[p] : 1;
		const struct txs_tmpl *t = &g->tm[cur * ns + g->pat[pos]];
		b[i].len = gen_patch_shaped(g->nonce, t, &b[i], tags, ids[p], g->fl[cur].seq++, now_ns);
		b[i].l4_off = t->l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
		i++;
		if (++cur == nf)
			cur = 0;
		if (++pos == pl)
			pos = 0;
		if (TXS_UNLIKELY(mask & (mask - 1)))
			i = udp_gen_copies(g, b, i, n, b[i - 1].data, b[i - 1].len, mask & (mask - 1));
	}
	g->cur = cur;
	g->pat_pos = pos;
	uint64_t s3 = txs_prof_stamp();
	pf->cyc[TXS_PROF_LINKSEL] += (int64_t)(s1 - s0) - cost;
	pf->cyc[TXS_PROF_IDENT] += (int64_t)(s2 - s1) - cost;
	pf->cyc[TXS_PROF_HEADER] += (int64_t)(s3 - s2) - cost;
	pf->stamps += 4;
	if (TXS_UNLIKELY(i == 0 && n))
		w->fill_err = -ENETDOWN;
	return i;
}
