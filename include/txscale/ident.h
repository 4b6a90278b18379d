/* SPDX-License-Identifier: MIT */
/* txscale IP identification allocators (lib/ident).
 *
 * API contract (fixed; lib/udp and the generator code against it). The
 * implementation and the strategy details live in lib/ident and
 * docs/ident.md.
 *
 * Strategies, chosen by name at setup:
 *   "cas-loop"        the 2016 kernel ip_idents_reserve(): compare-and-swap loop
 *   "atomic"          the current kernel form: one atomic fetch-add per call
 *   "percpu-segment"  the 2019 RFC: each core cycles in its own 1024-ID segment
 *   "lease"           ours (default): cores lease blocks of IDs from the bucket
 *   "flow"            per-flow counters for connected flows (kernel inet_id)
 *
 * Concurrency: create/destroy from one thread with no core handle in use.
 * A struct txs_ident_core belongs to the one thread that opened it; reserve
 * on it is lock-free (wait-free except cas-loop). Different cores may share
 * buckets: that is the point of the comparison. */
#ifndef TXSCALE_IDENT_H
#define TXSCALE_IDENT_H

#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_ident;
struct txs_ident_core;

struct txs_ident_conf {
	const char *strategy; /* NULL = "lease" */
	unsigned table_size;  /* buckets, power of two; 0 = 2048 */
	unsigned max_cores;   /* core handles that will be opened; 0 = 1 */
	bool fixed_key;       /* tests: use key[] instead of getrandom() */
	uint8_t key[16];      /* SipHash-2-4 key when fixed_key */
	bool df_zero;         /* RFC 6864: unfragmented DF datagrams may carry ID 0 */
	uint64_t seed;        /* per-core random generators; 0 = getrandom() */
};

/* Returns 0, -EINVAL (unknown strategy, bad table size), -ENOMEM. */
TXS_API int txs_ident_create(struct txs_ident **out, const struct txs_ident_conf *conf);
TXS_API void txs_ident_destroy(struct txs_ident *id);
/* Open the handle of core `core` (0..max_cores-1) for the calling thread. */
TXS_API int txs_ident_core_open(struct txs_ident *id, unsigned core, struct txs_ident_core **out);
TXS_API void txs_ident_core_close(struct txs_ident_core *c);

/* Keyed bucket hash: SipHash-2-4 over (daddr, saddr, protocol), as the
 * kernel's ip_idents_hashrnd. Addresses in network byte order. */
TXS_API uint32_t txs_ident_hash4(const struct txs_ident *id, uint32_t daddr, uint32_t saddr, uint8_t proto);
TXS_API uint32_t txs_ident_hash6(const struct txs_ident *id, const uint8_t daddr[16], const uint8_t saddr[16],
				 uint8_t proto);

/* The first of `segs` consecutive 16-bit IDs (wrapping), as
 * ip_idents_reserve() returns for GSO. segs >= 1. */
TXS_API uint16_t txs_ident_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs);

/* IPv6 fragment identification: 32-bit random, never 0 (ipv6_select_ident). */
TXS_API uint32_t txs_ident_v6_frag_id(struct txs_ident_core *c);

/* Connected flows: a per-flow counter owned by the core that sends the flow,
 * started at a random value (the kernel's per-socket inet_id). */
struct txs_ident_flow {
	uint16_t next;
};
TXS_API void txs_ident_flow_init(struct txs_ident_core *c, struct txs_ident_flow *f);
#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
static inline uint16_t txs_ident_flow_reserve(struct txs_ident_flow *f, unsigned segs)
{
	uint16_t id = f->next;
	f->next = (uint16_t)(id + segs);
	return id;
}
#endif /* TXS_UNSTABLE_API */

/* ---- the inline fast path, the clock hint, diagnostics ------------------- */

/* The first bytes of every struct txs_ident_core are this view, so the lease
 * fast path can be inlined into the caller. Only lib/ident writes it; the
 * owning thread reads it. For strategies other than "lease" slots is NULL. */
struct txs_ident_lease_slot {
	uint32_t tag; /* epoch << TXS_IDENT_TAG_SHIFT | bucket; 0 = empty */
	uint32_t cur; /* next ID << 16 | IDs left in the lease. One 32-bit word:
		       * the per-ID update is a single 32-bit store (forwarded to
		       * the next load at once, where a 16-bit one stalls), and
		       * next wraps at 65536 by dropping the carry. */
};
#define TXS_IDENT_TAG_SHIFT 20 /* table_size <= 1 << 20 */
struct txs_ident_core_view {
	struct txs_ident_lease_slot *slots; /* lease: direct-mapped by bucket index */
	uint32_t tag_epoch;                 /* current epoch << TXS_IDENT_TAG_SHIFT */
	uint32_t bucket_mask;               /* table_size - 1 */
	uint32_t slot_mask;                 /* slots - 1 */
};

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
/* Same contract and result as txs_ident_reserve(); the lease strategy's
 * common case (the bucket's lease is current and large enough) runs inline,
 * everything else calls txs_ident_reserve(). Owning thread only, wait-free
 * on the inline path. */
static inline uint16_t txs_ident_reserve_fast(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	struct txs_ident_core_view *v = (struct txs_ident_core_view *)(void *)c;
	if (TXS_LIKELY(v->slots != NULL)) {
		uint32_t b = hash & v->bucket_mask;
		struct txs_ident_lease_slot *s = &v->slots[b & v->slot_mask];
		uint32_t cur = s->cur;
		if (TXS_LIKELY(s->tag == (v->tag_epoch | b) && (cur & 0xffff) >= segs)) {
			s->cur = cur + (segs << 16) - segs;
			return (uint16_t)(cur >> 16);
		}
	}
	return txs_ident_reserve(c, hash, segs);
}
#endif /* TXS_UNSTABLE_API */

/* Let the core observe the coarse clock (lease: once per tick every lease is
 * re-validated on its next use; one that other cores overtook by more than
 * 1024 positions is abandoned, so a core that idled does not hand out stale
 * positions). Optional: refills observe the clock too. Call it once per
 * burst: a core that neither ticks nor refills can hand out the rest of one
 * stale lease. Owning thread only; no-op for the other strategies. */
TXS_API void txs_ident_core_tick(struct txs_ident_core *c);

/* Diagnostics (tests, bench): the 32-bit shared counter of the bucket `hash`
 * falls in (how far the bucket advanced; relaxed read, any thread). 0 for
 * strategies without shared counters (percpu-segment, flow). */
TXS_API uint32_t txs_ident_bucket_position(const struct txs_ident *id, uint32_t hash);
/* Number of buckets, and the lease block bounds in force (0 unless lease). */
TXS_API unsigned txs_ident_table_size(const struct txs_ident *id);
TXS_API void txs_ident_lease_bounds(const struct txs_ident *id, unsigned *bmin, unsigned *bmax);

/* lease: positions of the bucket counters that were abandoned (leased, never
 * handed out, not given back) and skipped by the random delta, summed over
 * every core handle of the instance. Exact when no core handle is in use
 * (after the workers closed them); 0 for the other strategies. The rule
 * bounds wasted by (IDs handed out) / 32 (docs/ident.md). */
TXS_API void txs_ident_lease_waste(const struct txs_ident *id, uint64_t *wasted, uint64_t *skipped);

/* Whether DF datagrams that are not fragmented get ID 0 (conf.df_zero). */
TXS_API bool txs_ident_df_zero(const struct txs_ident *id);
/* Name of the strategy in use, and the registered names. */
TXS_API const char *txs_ident_name(const struct txs_ident *id);
TXS_API const char *const *txs_ident_strategies(unsigned *n);

#ifdef __cplusplus
}
#endif
#endif
