/* SPDX-License-Identifier: MIT */
/* lease: each core leases a block of B consecutive positions of a bucket's
 * shared counter with ONE fetch-add (plus the kernel's random delta when the
 * bucket's clock stamp moved), then hands the IDs out from core-local state.
 * The shared line is written once per lease instead of once per packet.
 *
 * Core-local state: a direct-mapped cache of leases keyed by bucket index
 * (struct txs_ident_lease_slot, 8 bytes, read inline by
 * txs_ident_reserve_fast()), and beside it the cold bookkeeping used only on
 * refill (struct lease_cold).
 *
 * The rule for B (per core, per bucket; docs/ident.md):
 *   - a refill that finds the counter exactly where our last lease ended,
 *     with no delta, CONTINUES that lease: the unused tail stays ours and is
 *     handed out first, so a lone core wastes nothing. If the tail covers the
 *     request (the lease had only expired) it is renewed without any shared
 *     write; otherwise B more are leased behind it and B shrinks by 1/8. The
 *     tail is thus always shorter than max(B, segs).
 *   - otherwise the new lease starts at the counter (+ delta) and the tail of
 *     the old one is abandoned (never handed out: positions stay unique);
 *       if that tail was >= B/2, B halves (we leased more than we used);
 *       else if another core moved the counter since our last lease, B
 *       doubles (contention: fewer shared writes);
 *       else B shrinks by 1/8.
 *   - B_min = 64, B_max = min(1024, 65536 / (2 * max_cores)).
 *   - leases expire when the core observes the coarse clock tick (on a
 *     refill or txs_ident_core_tick()), so no lease is used in a later tick
 *     than the one it was taken in (a tick continues it only when the counter
 *     did not move). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ident_priv.h"

static void next_epoch(struct txs_ident_core *c)
{
	if (++c->epoch > IDENT_EPOCH_MAX) {
		/* tags of an epoch 4095 ticks ago could match again: empty them */
		c->epoch = 1;
		for (uint32_t i = 0; i <= c->v.slot_mask; i++)
			c->v.slots[i].tag = 0;
	}
	c->v.tag_epoch = c->epoch << TXS_IDENT_TAG_SHIFT;
}

static inline void observe(struct txs_ident_core *c, uint32_t now)
{
	if (now != c->tick) {
		c->tick = now;
		next_epoch(c);
	}
}

static int lease_init(struct txs_ident_core *c)
{
	unsigned n = c->id->lease_slots;
	size_t sz = sizeof(*c->v.slots) * n;
	c->v.slots = aligned_alloc(TXS_CACHE_LINE, (sz + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1));
	c->cold = malloc(sizeof(*c->cold) * n);
	if (!c->v.slots || !c->cold) {
		free(c->v.slots);
		free(c->cold);
		c->v.slots = NULL;
		c->cold = NULL;
		return -ENOMEM;
	}
	memset(c->v.slots, 0, sz);
	for (unsigned i = 0; i < n; i++)
		c->cold[i] = (struct lease_cold){ .bucket = UINT32_MAX, .block = c->id->lease_bmin };
	c->v.bucket_mask = c->mask;
	c->v.slot_mask = n - 1;
	c->epoch = 1;
	c->v.tag_epoch = 1u << TXS_IDENT_TAG_SHIFT;
	c->tick = ident_ticks();
	return 0;
}

static void lease_fini(struct txs_ident_core *c)
{
	free(c->v.slots);
	free(c->cold);
	c->v.slots = NULL;
	c->cold = NULL;
}

static void lease_tick(struct txs_ident_core *c)
{
	observe(c, ident_ticks());
}

static __attribute__((noinline)) uint16_t lease_refill(struct txs_ident_core *c, uint32_t b,
							struct txs_ident_lease_slot *s, unsigned segs)
{
	const struct txs_ident *id = c->id;
	struct ident_bucket *bk = &c->buckets[b];
	struct lease_cold *k = &c->cold[b & c->v.slot_mask];
	uint32_t now = ident_ticks();
	observe(c, now);

	/* the kernel's delta: the first core to see the bucket's stamp behind
	 * the clock moves it and skips a random number of IDs below the gap */
	uint32_t delta = 0, stamp = __atomic_load_n(&bk->tstamp, __ATOMIC_RELAXED);
	if (stamp != now &&
	    __atomic_compare_exchange_n(&bk->tstamp, &stamp, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		delta = ident_rand_below(&c->rng, now - stamp);

	if (TXS_UNLIKELY(segs > 0xffffu)) {
		/* longer than the ID space: no lease, the kernel's form */
		uint32_t old = __atomic_fetch_add(&bk->counter, segs + delta, __ATOMIC_RELAXED);
		s->tag = 0;
		k->bucket = UINT32_MAX;
		return (uint16_t)(old + delta);
	}

	bool same = k->bucket == b; /* slot and cold state describe our last lease of b */
	uint32_t B = same ? k->block : id->lease_bmin;
	uint32_t tail = same ? s->cur & 0xffff : 0;
	if (tail >= segs && delta == 0 && __atomic_load_n(&bk->counter, __ATOMIC_RELAXED) == k->last_end) {
		/* our lease only expired (tick) and nobody leased since: it is still
		 * the newest, renew it without a shared write */
		s->tag = c->v.tag_epoch | b;
		uint32_t cur = s->cur;
		s->cur = cur + (segs << 16) - segs;
		return (uint16_t)(cur >> 16);
	}
	uint32_t want = segs > B ? segs : B;
	uint32_t old = __atomic_fetch_add(&bk->counter, want + delta, __ATOMIC_RELAXED);
	uint32_t next, left;
	if (same && old == k->last_end && delta == 0 && tail + want <= 0xffffu) {
		/* nobody leased since us: continue the old lease, tail first */
		next = s->cur >> 16;
		left = tail + want;
		B -= B / 8;
	} else {
		next = old + delta;
		left = want;
		if (same && tail >= B / 2)
			B /= 2;
		else if (same && old != k->last_end)
			B *= 2;
		else
			B -= B / 8;
	}
	if (B < id->lease_bmin)
		B = id->lease_bmin;
	if (B > id->lease_bmax)
		B = id->lease_bmax;
	k->bucket = b;
	k->last_end = old + delta + want;
	k->block = B;
	s->tag = c->v.tag_epoch | b;
	s->cur = ((next + segs) << 16) | (left - segs);
	return (uint16_t)next;
}

static uint16_t lease_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	uint32_t b = hash & c->v.bucket_mask;
	struct txs_ident_lease_slot *s = &c->v.slots[b & c->v.slot_mask];
	uint32_t cur = s->cur;
	if (TXS_LIKELY(s->tag == (c->v.tag_epoch | b) && (cur & 0xffff) >= segs)) {
		s->cur = cur + (segs << 16) - segs;
		return (uint16_t)(cur >> 16);
	}
	return lease_refill(c, b, s, segs);
}

const struct ident_ops ident_ops_lease = {
	.name = "lease",
	.shared = true,
	.core_init = lease_init,
	.core_fini = lease_fini,
	.reserve = lease_reserve,
	.tick = lease_tick,
};
