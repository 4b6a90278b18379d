/* SPDX-License-Identifier: MIT */
/* Private to lib/udp: the connected-flow generator's per-worker state, shared
 * by gen.c (the fill every burst takes) and gen_prof.c (the fill of a burst
 * the engine profile samples). Two files so that each fill inlines the
 * template patch on its own. */
#ifndef TXS_UDP_GEN_PRIV_H
#define TXS_UDP_GEN_PRIV_H

#include <txscale/gen.h>

/* ---- IPv4 ID from lib/ident (conf->ident_inst) -------------------------- */
struct gen_ident {
	struct txs_ident_core *core; /* NULL: use the flow's ip_id counter */
	bool flow, zero;             /* "flow" strategy; DF + df_zero: ID 0 */
};

/* One flow of a worker: its own sequence space, its ID bucket (the hash of
 * its own destination) and what balance-xor hashes. */
struct gen_flow {
	uint64_t seq;
	uint32_t hash;               /* the flow's bucket hash, computed once */
	uint16_t ip_id;              /* per-flow counter, random start (kernel inet_id) */
	struct txs_ident_flow fl;    /* "flow" strategy */
	struct txs_flow_key key;     /* what balance-xor hashes, prepared once */
};

static inline uint16_t gen_ident_next(struct gen_ident *gi, struct gen_flow *f)
{
	if (gi->zero)
		return 0;
	if (gi->flow)
		return txs_ident_flow_reserve(&f->fl, 1);
	return txs_ident_reserve_fast(gi->core, f->hash, 1);
}

struct gen_state {
	struct txs_tmpl t;           /* flow 0, first size (the one-flow fill's template) */
	uint64_t seq;                /* one flow, one size: the flow's sequence */
	uint16_t ip_id;              /* one flow: per-flow counter, random start */
	struct gen_ident id;         /* allocator from conf->ident_inst, if any */
	struct txs_linksel_core *ls; /* NULL: link 0 */
	struct txs_flow_key key;     /* one flow: what balance-xor hashes */
	uint32_t bc_left;            /* broadcast: links still owed a copy of bc_frame */
	uint32_t bc_len;
	uint8_t *bc_frame;           /* broadcast: the packet whose copies did not fit */
	/* shapes (conf->shape): several flows and/or sizes */
	bool shaped;
	uint32_t n_flows, n_sizes, cur;  /* cur: the flow of the next packet */
	uint32_t pat_len, pat_pos;       /* the size cycle and where it stands */
	uint32_t max_wire;
	uint8_t *pat;                    /* size index per step of the cycle */
	struct txs_tmpl *tm;             /* [flow * n_sizes + size] */
	struct gen_flow *fl;
	struct gen_flow one;             /* one flow: its ident state */
} TXS_CACHE_ALIGNED;
/* Broadcast copies (gen.c). */
unsigned udp_gen_copies(struct gen_state *g, struct txs_pktbuf *b, unsigned i, unsigned n, const uint8_t *frame,
			uint32_t len, uint32_t mask);
/* txs_udp_gen_ops.fill_prof (gen_prof.c). */
unsigned udp_gen_fill_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
/* the fill of shaped workers (gen.c) and its profiled form (gen_prof.c) */
unsigned udp_gen_fill_shaped(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
unsigned udp_gen_fill_shaped_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);

#endif
