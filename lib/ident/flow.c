/* SPDX-License-Identifier: MIT */
/* flow: the kernel's per-socket inet_id for connected flows, behind the
 * common reserve(hash, segs) API: every core owns one 16-bit counter per
 * bucket, started at a random value, and only it writes them. IDs are unique
 * per (core, bucket) for 65536 IDs; two cores sending to the same bucket
 * are not coordinated (as two sockets to one destination are not). For a
 * real connected flow use txs_ident_flow_init()/txs_ident_flow_reserve(). */
#include <errno.h>
#include <stdlib.h>
#include "ident_priv.h"

static int flow_init(struct txs_ident_core *c)
{
	unsigned n = c->mask + 1;
	size_t sz = (sizeof(*c->flow) * n + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1);
	c->flow = aligned_alloc(TXS_CACHE_LINE, sz);
	if (!c->flow)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		c->flow[i] = (uint32_t)(ident_rand(&c->rng) >> 48);
	return 0;
}

static void flow_fini(struct txs_ident_core *c)
{
	free(c->flow);
	c->flow = NULL;
}

static uint16_t flow_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	uint32_t *p = &c->flow[hash & c->mask];
	uint32_t id = *p;
	*p = id + segs;
	return (uint16_t)id;
}

const struct ident_ops ident_ops_flow = {
	.name = "flow",
	.shared = false,
	.core_init = flow_init,
	.core_fini = flow_fini,
	.reserve = flow_reserve,
};
