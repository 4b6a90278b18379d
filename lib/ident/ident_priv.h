/* SPDX-License-Identifier: MIT */
/* lib/ident private: instance and per-core layout, the strategy ops table,
 * SipHash-2-4, the per-core PRNG and the coarse clock. */
#ifndef TXS_IDENT_PRIV_H
#define TXS_IDENT_PRIV_H

#include <txscale/ident.h>

/* ---- SipHash-2-4 (siphash.c) ------------------------------------------ */
uint64_t txs_siphash24(const uint8_t key[16], const void *msg, size_t len);

/* ---- per-core PRNG: xoshiro256**, seeded through splitmix64 ------------- */
struct ident_rng {
	uint64_t s[4];
};

static inline uint64_t ident_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t ident_rand(struct ident_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = ident_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ident_rotl(s[3], 45);
	return out;
}

/* Uniform in [0, n) (the kernel's prandom_u32_max: multiply-shift). 0 for n 0. */
static inline uint32_t ident_rand_below(struct ident_rng *r, uint32_t n)
{
	return (uint32_t)(((ident_rand(r) >> 32) * (uint64_t)n) >> 32);
}

/* ---- coarse clock: jiffies-like ticks ------------------------------------
 * CLOCK_MONOTONIC_COARSE divided by its own resolution (the kernel's tick:
 * 4 ms at HZ=250), so one tick here is one jiffy there and a bucket used
 * every tick gets delta 0, as in the kernel. Reading it is a vDSO load of
 * the timekeeping page (~4 ns), the user-space analogue of reading jiffies.
 * Tests may freeze it: when ident_fake_ticks is non-NULL its value is used. */
extern uint32_t *ident_fake_ticks;
uint32_t ident_ticks_slow(void);
static inline uint32_t ident_ticks(void)
{
	uint32_t *f = __atomic_load_n(&ident_fake_ticks, __ATOMIC_RELAXED);
	if (TXS_UNLIKELY(f != NULL))
		return __atomic_load_n(f, __ATOMIC_RELAXED);
	return ident_ticks_slow();
}

/* ---- shared state --------------------------------------------------------
 * One bucket = the kernel's ip_idents[i] and ip_tstamps[i] side by side:
 * 8 bytes, packed, shared by every core that sends to a destination hashing
 * there. Accessed only with __atomic builtins. */
struct ident_bucket {
	uint32_t counter; /* 32-bit position; the ID is its low 16 bits */
	uint32_t tstamp;  /* tick of the last delta */
};

struct ident_ops;

/* Lease bookkeeping of one cache slot, cold (touched on refill only).
 * lease.c and docs/ident.md ("lease: the rule") say what each field is for. */
struct lease_cold {
	uint32_t bucket;   /* bucket the slot last leased from; UINT32_MAX none */
	uint32_t last_end; /* counter value just after our last lease there */
	uint32_t block;    /* B: positions per lease, from the core's usage rate */
	uint32_t given;    /* IDs left in the slot just after our last refill */
	uint32_t credit;   /* waste allowance, in 1/IDENT_LEASE_CREDIT_DIV positions */
	uint32_t t0;       /* tick the usage window started */
	uint32_t used;     /* IDs handed out from this bucket since t0 */
	uint32_t pad;
};

#define IDENT_SEGMENT 1024u      /* percpu-segment: IDs per core */
#define IDENT_LEASE_BMIN 1u      /* lease: smallest block (the kernel's fetch-add) */
#define IDENT_LEASE_BCAP 1024u   /* lease: largest block on any machine */
#define IDENT_LEASE_SLOTS 2048u  /* lease: most cache slots per core (16 KiB) */
#define IDENT_LEASE_RATE_DIV 32u /* lease: B ~ IDs per tick / 32 (a lease lives ~1/32 tick) */
#define IDENT_LEASE_CREDIT_DIV 32u /* lease: positions wasted <= IDs handed out / 32 */
#define IDENT_LEASE_OVERTAKE 1024u /* lease: a tail overtaken by more is abandoned */
#define IDENT_EPOCH_MAX ((1u << (32 - TXS_IDENT_TAG_SHIFT)) - 1)

struct txs_ident_core {
	struct txs_ident_core_view v; /* first: the inline fast path reads it */
	uint16_t (*reserve)(struct txs_ident_core *c, uint32_t hash, unsigned segs);
	struct txs_ident *id;
	struct ident_bucket *buckets;
	uint32_t mask;
	unsigned index;
	struct ident_rng rng;
	/* lease */
	uint32_t tick;  /* last tick this core observed */
	uint32_t epoch; /* 1..IDENT_EPOCH_MAX */
	struct lease_cold *cold;
	uint64_t wasted;  /* positions abandoned (never handed out, not given back) */
	uint64_t skipped; /* positions skipped by the kernel's random delta */
	/* percpu-segment (32-bit: a 16-bit store stalls the next load) */
	uint32_t seg_base, seg_off;
	/* flow: one core-owned counter per bucket (low 16 bits are the ID) */
	uint32_t *flow;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

struct ident_ops {
	const char *name;
	bool shared;  /* has shared bucket counters */
	int (*core_init)(struct txs_ident_core *c);   /* allocate per-core state */
	void (*core_fini)(struct txs_ident_core *c);
	uint16_t (*reserve)(struct txs_ident_core *c, uint32_t hash, unsigned segs);
	void (*tick)(struct txs_ident_core *c);
};

struct txs_ident {
	const struct ident_ops *ops;
	struct ident_bucket *buckets; /* table_size, NULL when !ops->shared */
	uint32_t mask;
	unsigned table_size, max_cores;
	unsigned lease_bmin, lease_bmax, lease_slots;
	uint8_t key[16];
	bool df_zero;
	uint64_t seed; /* never 0 after create */
	struct txs_ident_core **cores;
	uint8_t *open; /* per core: 1 while a handle is open */
	uint64_t wasted, skipped; /* lease: totals of closed core handles (atomic adds) */
};

extern const struct ident_ops ident_ops_cas_loop, ident_ops_atomic, ident_ops_percpu_segment, ident_ops_lease,
	ident_ops_flow;

#endif
