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
static inline uint16_t txs_ident_flow_reserve(struct txs_ident_flow *f, unsigned segs)
{
	uint16_t id = f->next;
	f->next = (uint16_t)(id + segs);
	return id;
}

/* Whether DF datagrams that are not fragmented get ID 0 (conf.df_zero). */
TXS_API bool txs_ident_df_zero(const struct txs_ident *id);
/* Name of the strategy in use, and the registered names. */
TXS_API const char *txs_ident_name(const struct txs_ident *id);
TXS_API const char *const *txs_ident_strategies(unsigned *n);

#ifdef __cplusplus
}
#endif
#endif
