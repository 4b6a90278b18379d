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
	struct txs_ident_core *core; /* NULL: use gen_state.ip_id */
	uint32_t hash;               /* the flow's bucket hash, computed once */
	bool flow, zero;             /* "flow" strategy; DF + df_zero: ID 0 */
	struct txs_ident_flow fl;
};

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
	struct gen_ident id;         /* allocator from conf->ident_inst, if any */
	struct txs_linksel_core *ls; /* NULL: link 0 */
	struct txs_flow_key key;     /* what balance-xor hashes, prepared once */
	uint32_t bc_left;            /* broadcast: links still owed a copy of bc_frame */
	uint32_t bc_len;
	uint8_t *bc_frame;           /* broadcast: the packet whose copies did not fit */
} TXS_CACHE_ALIGNED;

/* Broadcast copies (gen.c). */
unsigned udp_gen_copies(struct gen_state *g, struct txs_pktbuf *b, unsigned i, unsigned n, const uint8_t *frame,
			uint32_t len, uint32_t mask);
/* txs_udp_gen_ops.fill_prof (gen_prof.c). */
unsigned udp_gen_fill_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);

#endif
