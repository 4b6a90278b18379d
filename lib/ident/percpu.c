/* SPDX-License-Identifier: MIT */
/* percpu-segment: the 2019 RFC (Zhang Shaokun, seed thread 000): core k owns
 * IDs [k*1024, k*1024 + 1024) and cycles inside them, no atomics and no
 * shared writes at all. One segment per core for every destination, as
 * proposed, so a destination sees an ID again after at most 1024 IDs from
 * that core (fewer when the core also sends elsewhere). Cores beyond 64 share
 * segments (64 * 1024 = 65536). Rejected upstream: "less entropy in IPv4 ID
 * is not going to help when fragments are needed". Kept as the reference
 * for speed and for what it gives up (docs/ident.md). */
#include "ident_priv.h"

static int percpu_init(struct txs_ident_core *c)
{
	c->seg_base = (c->index % (65536u / IDENT_SEGMENT)) * IDENT_SEGMENT;
	c->seg_off = ident_rand_below(&c->rng, IDENT_SEGMENT);
	return 0;
}

static uint16_t percpu_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	(void)hash;
	uint32_t off = c->seg_off;
	/* keep the run consecutive: restart the segment when it would not fit
	 * (a run longer than the segment spills past it) */
	if (TXS_UNLIKELY(off + segs > IDENT_SEGMENT))
		off = 0;
	c->seg_off = off + segs;
	return (uint16_t)(c->seg_base + off);
}

const struct ident_ops ident_ops_percpu_segment = {
	.name = "percpu-segment",
	.shared = false,
	.core_init = percpu_init,
	.reserve = percpu_reserve,
};
