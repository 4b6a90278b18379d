/* SPDX-License-Identifier: MIT */
/* The kernel's ip_idents_reserve() in user space, two forms:
 *   cas-loop: the 2016 code (adb03115f459, "get rid of an signed integer
 *             overflow"): a compare-and-swap loop adding segs + delta;
 *   atomic:   the reverted-to and current code: one fetch-add.
 * Both: a per-bucket timestamp; the first core to see the coarse clock move
 * since the stamp swaps it in and adds a random delta below the elapsed
 * ticks, so an idle bucket does not restart where an observer left it. */
#include "ident_priv.h"

/* The random delta for a bucket, 0 when the clock did not move or another
 * core won the stamp. */
static inline uint32_t bucket_delta(struct txs_ident_core *c, struct ident_bucket *b)
{
	uint32_t old = __atomic_load_n(&b->tstamp, __ATOMIC_RELAXED);
	uint32_t now = ident_ticks();
	if (old != now &&
	    __atomic_compare_exchange_n(&b->tstamp, &old, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return ident_rand_below(&c->rng, now - old);
	return 0;
}

static uint16_t cas_loop_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	struct ident_bucket *b = &c->buckets[hash & c->mask];
	uint32_t delta = bucket_delta(c, b);
	uint32_t old = __atomic_load_n(&b->counter, __ATOMIC_RELAXED), nv;
	do
		nv = old + delta + segs;
	while (!__atomic_compare_exchange_n(&b->counter, &old, nv, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return (uint16_t)(nv - segs);
}

static uint16_t atomic_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	struct ident_bucket *b = &c->buckets[hash & c->mask];
	uint32_t delta = bucket_delta(c, b);
	return (uint16_t)(__atomic_add_fetch(&b->counter, segs + delta, __ATOMIC_RELAXED) - segs);
}

const struct ident_ops ident_ops_cas_loop = {
	.name = "cas-loop",
	.shared = true,
	.reserve = cas_loop_reserve,
};

const struct ident_ops ident_ops_atomic = {
	.name = "atomic",
	.shared = true,
	.reserve = atomic_reserve,
};
