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
 * The rule (per core, per bucket; docs/ident.md has the proofs):
 *   - B follows the core's own usage of the bucket: ~ IDs per tick / 32, so
 *     a lease lives about 1/32 of a tick, clamped to [1, B_max]. At low rates
 *     B is 1: one fetch-add per ID, exactly the kernel's atomic form. Within a
 *     tick B doubles when the core used 64 B since the window began.
 *   - WASTE CREDIT: every ID handed out earns 1/32 of a position; a lease may
 *     leave at most `credit` positions outstanding after the request it
 *     serves, and every position abandoned is paid from the credit (capped at
 *     B_max). So positions abandoned <= IDs handed out / 32, per core and
 *     bucket, at every rate and whatever the interleaving.
 *   - A tail (the unused rest of a lease) is kept across ticks unless others
 *     overtook it: on the first refill of a tick (leases are re-validated once
 *     per tick: the epoch tag), a tail is renewed without a shared write when
 *     the counter moved at most IDENT_LEASE_OVERTAKE past our lease's end;
 *     beyond that (a stale lease: its IDs would reach the wire far behind the
 *     bucket) or when a random delta is due, the tail is abandoned.
 *   - A refill that finds the counter still at our lease's end CONTINUES the
 *     lease (the tail first, the new block right behind it): a lone core
 *     wastes nothing and its IDs are as consecutive as the kernel's.
 *   - Leaving a bucket (slot eviction, core close) GIVES BACK the tail with a
 *     compare-and-swap when the counter still ends at our lease; otherwise
 *     the tail is abandoned (and paid for).
 *   - B_max = min(1024, 65536 / (2 * max_cores)). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ident_priv.h"

#define NO_BUCKET UINT32_MAX

static void next_epoch(struct txs_ident_core *c)
{
	if (++c->epoch > IDENT_EPOCH_MAX) {
		/* tags of an epoch 4095 ticks ago could match again: empty them
		 * (the leases stay in the slots: the refill re-validates them) */
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
		c->cold[i] = (struct lease_cold){ .bucket = NO_BUCKET };
	c->v.bucket_mask = c->mask;
	c->v.slot_mask = n - 1;
	c->epoch = 1;
	c->v.tag_epoch = 1u << TXS_IDENT_TAG_SHIFT;
	c->tick = ident_ticks();
	return 0;
}

/* Leave the lease of slot i: give the tail back when the counter still ends
 * at it, else abandon it (paid from the credit when the lease was taken). */
static void lease_release(struct txs_ident_core *c, uint32_t i)
{
	struct lease_cold *k = &c->cold[i];
	struct txs_ident_lease_slot *s = &c->v.slots[i];
	uint32_t tail = s->cur & 0xffff;
	if (k->bucket != NO_BUCKET && tail) {
		uint32_t end = k->last_end;
		if (!__atomic_compare_exchange_n(&c->buckets[k->bucket].counter, &end, end - tail, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			c->wasted += tail;
	}
	s->tag = 0;
	s->cur = 0;
	k->bucket = NO_BUCKET;
}

static void lease_fini(struct txs_ident_core *c)
{
	if (c->v.slots)
		for (uint32_t i = 0; i <= c->v.slot_mask; i++)
			lease_release(c, i);
	__atomic_fetch_add(&c->id->wasted, c->wasted, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->id->skipped, c->skipped, __ATOMIC_RELAXED);
	free(c->v.slots);
	free(c->cold);
	c->v.slots = NULL;
	c->cold = NULL;
}

static void lease_tick(struct txs_ident_core *c)
{
	observe(c, ident_ticks());
}

static inline uint32_t clamp_block(const struct txs_ident *id, uint32_t b)
{
	return b < IDENT_LEASE_BMIN ? IDENT_LEASE_BMIN : b > id->lease_bmax ? id->lease_bmax : b;
}

static __attribute__((noinline)) uint16_t lease_refill(struct txs_ident_core *c, uint32_t b,
							struct txs_ident_lease_slot *s, unsigned segs)
{
	const struct txs_ident *id = c->id;
	struct ident_bucket *bk = &c->buckets[b];
	uint32_t i = b & c->v.slot_mask;
	struct lease_cold *k = &c->cold[i];
	uint32_t now = ident_ticks();
	observe(c, now);
	if (k->bucket != b) {
		lease_release(c, i); /* the slot held another bucket (or nothing) */
		*k = (struct lease_cold){ .bucket = b, .block = IDENT_LEASE_BMIN, .t0 = now };
	}

	/* account what was handed out since the last refill: usage and credit */
	uint32_t tail = s->cur & 0xffff;
	uint32_t got = k->given - tail;
	uint32_t cmax = id->lease_bmax * IDENT_LEASE_CREDIT_DIV;
	k->used += got;
	k->credit = k->credit + got > cmax ? cmax : k->credit + got;

	/* the kernel's delta: the first core to see the bucket's stamp behind
	 * the clock moves it and skips a random number of IDs below the gap */
	uint32_t delta = 0, stamp = __atomic_load_n(&bk->tstamp, __ATOMIC_RELAXED);
	/* ... but only forward: a core whose clock read is already older than
	 * the stamp (another core stamped a newer tick meanwhile) would move the
	 * stamp back and skip a random number below 2^32, a random jump of the
	 * ID. The kernel's `stamp != now` test has that race; ours does not. */
	if ((int32_t)(now - stamp) > 0 &&
	    __atomic_compare_exchange_n(&bk->tstamp, &stamp, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		delta = ident_rand_below(&c->rng, now - stamp);
	c->skipped += delta;

	if (TXS_UNLIKELY(segs > 0xffffu - id->lease_bmax)) {
		/* about the ID space or longer: no lease, the kernel's form; the
		 * slot's lease is left as it was */
		uint32_t old = __atomic_fetch_add(&bk->counter, segs + delta, __ATOMIC_RELAXED);
		k->used += segs;
		k->credit = k->credit + segs > cmax ? cmax : k->credit + segs;
		return (uint16_t)(old + delta);
	}

	/* B from the usage rate: IDs per tick / 32 over the window since t0;
	 * within a tick, double when the core already used 64 B */
	uint32_t B = k->block;
	if (now != k->t0) {
		B = clamp_block(id, k->used / (now - k->t0) / IDENT_LEASE_RATE_DIV);
		k->t0 = now;
		k->used = 0;
	} else if (k->used >= 2 * IDENT_LEASE_RATE_DIV * B) {
		B = clamp_block(id, 2 * B);
	}
	k->block = B;

	uint32_t ctr = __atomic_load_n(&bk->counter, __ATOMIC_RELAXED);
	if (tail && (delta || ctr - k->last_end > IDENT_LEASE_OVERTAKE)) {
		/* stale (others overtook it too far) or the bucket jumps: abandon */
		c->wasted += tail;
		k->credit = k->credit > tail * IDENT_LEASE_CREDIT_DIV ? k->credit - tail * IDENT_LEASE_CREDIT_DIV : 0;
		tail = 0;
	}
	uint32_t next, left;
	if (tail >= segs) {
		/* the lease only expired with the tick and was not overtaken far:
		 * renew it, no shared write */
		next = s->cur >> 16;
		left = tail;
	} else {
		/* tail < segs: continue the lease when the counter still ends at
		 * it (the tail is kept), else the tail is abandoned. Either way the
		 * tail is paid from the credit first (it is <= credit: the
		 * invariant), and at most what remains may be left outstanding
		 * after this request: want - segs <= credit - tail. */
		uint32_t avail = k->credit / IDENT_LEASE_CREDIT_DIV;
		avail = avail > tail ? avail - tail : 0;
		bool cont = tail && ctr == k->last_end && delta == 0;
		uint32_t want = segs > B ? segs : B;
		if (want - segs > avail)
			want = segs + avail;
		uint32_t old = __atomic_fetch_add(&bk->counter, want + delta, __ATOMIC_RELAXED);
		if (cont && old == k->last_end) {
			next = s->cur >> 16;
			left = tail + want;
		} else {
			if (tail) { /* shorter than the request, or another core leased first */
				c->wasted += tail;
				k->credit = k->credit > tail * IDENT_LEASE_CREDIT_DIV ? k->credit - tail * IDENT_LEASE_CREDIT_DIV : 0;
			}
			next = old + delta;
			left = want;
		}
		k->last_end = old + delta + want;
	}
	k->given = left - segs;
	k->used += segs;
	k->credit = k->credit + segs > cmax ? cmax : k->credit + segs; /* earned after the check above */
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
