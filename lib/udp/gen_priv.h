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

/* One flow of a worker: its own sequence space and its ID bucket (the hash
 * of its own destination). 16 bytes: a thousand flows stay in L1/L2. */
struct gen_flow {
	uint64_t seq;
	uint32_t hash;               /* the flow's bucket hash, computed once */
	uint16_t ip_id;              /* per-flow counter, random start (kernel inet_id) */
	struct txs_ident_flow fl;    /* "flow" strategy */
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
	struct txs_flow_key *keys;       /* per flow, with linksel: what balance-xor hashes */
	uint8_t *arena;                  /* every template's frame, one block */
	struct gen_flow one;             /* one flow: its ident state */
	uint64_t nonce;                  /* this worker's buffer tag (gen_patch_shaped) */
} TXS_CACHE_ALIGNED;

/* Frames above this many bytes are worth not copying whole. */
#define GEN_TAIL_MIN 128u

/* The shaped fill's patch. A buffer of this worker's queue only ever holds
 * frames of this run's templates (or copies of them that a device moved
 * between its slots): every byte from the end of the txscale header on is
 * the fill pattern (payload offset & 0xff), whatever the template, and
 * headers are recopied every time. So a buffer carries, in its last 16
 * bytes, this worker's tag (random per worker, never there by chance) and
 * how far from the frame start its bytes are known to be fill (the longest
 * frame copied into it since the tag was set). A frame within that is made
 * by copying only the headers and the txscale header and patching the
 * per-packet fields; a longer one copies only the bytes past it. The frame
 * is byte for byte the whole copy's (tests/unit/test_shape.c holds them
 * against each other). tags: the buffers have room for the tag after the
 * longest frame (checked per burst). */
#define GEN_TAG_LEN 16u
static inline __attribute__((always_inline)) uint32_t gen_patch_shaped(uint64_t nonce, const struct txs_tmpl *t, struct txs_pktbuf *b, bool tags,
					uint16_t id, uint64_t seq, uint64_t ts)
{
	uint8_t *d = b->data;
	uint32_t hot = (uint32_t)t->pay_off + TXS_PH_FULL_LEN, w = t->wire_len;
	if (!tags || w <= hot) {
		memcpy(d, t->frame, w); /* txs_tmpl_patch(), spelled out: gcc stops inlining it in the loop variants */
		return txs_tmpl_patch_fields(t, d, id, seq, ts);
	}
	uint8_t *tail = d + b->cap - GEN_TAG_LEN;
	uint64_t tag;
	uint32_t cov;
	memcpy(&tag, tail + 8, 8);
	memcpy(&cov, tail, 4);
	if (TXS_LIKELY(tag == nonce && cov > hot)) {
		memcpy(d, t->frame, hot);
		if (TXS_UNLIKELY(cov < w)) {
			memcpy(d + cov, t->frame + cov, w - cov);
			memcpy(tail, &w, 4);
		}
		return txs_tmpl_patch_fields(t, d, id, seq, ts);
	}
	memcpy(d, t->frame, w);
	uint32_t len = txs_tmpl_patch_fields(t, d, id, seq, ts);
	memcpy(tail, &w, 4);
	memcpy(tail + 8, &nonce, 8);
	return len;
}

/* A filled buffer: len bytes of template t, one segment, on the lowest
 * link of mask. */
static inline __attribute__((always_inline)) void gen_buf_set(struct txs_pktbuf *b, uint32_t len,
							      const struct txs_tmpl *t, uint32_t mask)
{
	b->len = len;
	b->l4_off = t->l4_off;
	b->segs = 1;
	b->link = (uint16_t)__builtin_ctz(mask);
}

/* The end of a fill of i buffers out of n: only "no link up" leaves a
 * burst empty. */
static inline __attribute__((always_inline)) unsigned gen_fill_done(struct txs_worker *w, unsigned i, unsigned n)
{
	if (TXS_UNLIKELY(i == 0 && n))
		w->fill_err = -ENETDOWN;
	return i;
}

/* Broadcast copies (gen.c). */
unsigned udp_gen_copies(struct gen_state *g, struct txs_pktbuf *b, unsigned i, unsigned n, const uint8_t *frame,
			uint32_t len, uint32_t mask);
/* After the packet in b[i - 1]: its copies on the other links of mask
 * when more (a broadcast). Returns the next free index. */
static inline __attribute__((always_inline)) unsigned gen_copies_next(struct gen_state *g, struct txs_pktbuf *b,
								      unsigned i, unsigned n, bool more, uint32_t mask)
{
	if (TXS_UNLIKELY(more))
		return udp_gen_copies(g, b, i, n, b[i - 1].data, b[i - 1].len, mask & (mask - 1));
	return i;
}
/* txs_udp_gen_ops.fill_prof (gen_prof.c). */
unsigned udp_gen_fill_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
/* the fill of shaped workers (gen.c) and its profiled form (gen_prof.c) */
unsigned udp_gen_fill_shaped(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
unsigned udp_gen_fill_shaped_prof(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);

#endif
