/* SPDX-License-Identifier: MIT */
/* TEMPORARY STAND-IN for lib/ident, on the `udp` branch only.
 *
 * DROP THIS FILE WHEN MERGING: the real module (branch `ident`) implements
 * include/txscale/ident.h. This stub exists so lib/udp links and its tests
 * run before that merge. It implements the API with the "atomic" semantics
 * (one shared table of buckets, one atomic fetch-add per reserve, whatever
 * strategy name is asked for), a SipHash-2-4 bucket hash, per-core random
 * generators for IPv6 fragment IDs and flow counter starts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <txscale/ident.h>

struct txs_ident {
	uint32_t *buckets;
	unsigned mask;
	unsigned max_cores;
	bool df_zero;
	uint64_t k0, k1;
	uint64_t seed;
	const char *name;
	struct txs_ident_core **cores;
};

struct txs_ident_core {
	struct txs_ident *id;
	unsigned core;
	uint64_t rng;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

static const char *const stub_names[] = { "cas-loop", "atomic", "percpu-segment", "lease", "flow" };

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd64(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint64_t)(uintptr_t)&v ^ 0x5bd1e995u;
	return v;
}

TXS_API int txs_ident_create(struct txs_ident **out, const struct txs_ident_conf *conf)
{
	*out = NULL;
	struct txs_ident_conf c = { 0 };
	if (conf)
		c = *conf;
	const char *name = NULL;
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(stub_names); i++)
		if (!c.strategy ? strcmp(stub_names[i], "lease") == 0 : strcmp(stub_names[i], c.strategy) == 0)
			name = stub_names[i];
	if (!name)
		return -EINVAL;
	unsigned ts = c.table_size ? c.table_size : 2048;
	if (ts & (ts - 1))
		return -EINVAL;
	struct txs_ident *id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	id->buckets = calloc(ts, sizeof(*id->buckets));
	id->max_cores = c.max_cores ? c.max_cores : 1;
	id->cores = calloc(id->max_cores, sizeof(*id->cores));
	if (!id->buckets || !id->cores) {
		free(id->buckets);
		free(id->cores);
		free(id);
		return -ENOMEM;
	}
	id->mask = ts - 1;
	id->df_zero = c.df_zero;
	id->name = name;
	id->seed = c.seed ? c.seed : rnd64();
	if (c.fixed_key) {
		memcpy(&id->k0, c.key, 8);
		memcpy(&id->k1, c.key + 8, 8);
	} else {
		id->k0 = rnd64();
		id->k1 = rnd64();
	}
	uint64_t s = id->seed;
	for (unsigned i = 0; i < ts; i++)
		id->buckets[i] = (uint32_t)splitmix(&s);
	*out = id;
	return 0;
}

TXS_API void txs_ident_destroy(struct txs_ident *id)
{
	if (!id)
		return;
	for (unsigned i = 0; i < id->max_cores; i++)
		free(id->cores[i]);
	free(id->cores);
	free(id->buckets);
	free(id);
}

TXS_API int txs_ident_core_open(struct txs_ident *id, unsigned core, struct txs_ident_core **out)
{
	*out = NULL;
	if (core >= id->max_cores || id->cores[core])
		return -EINVAL;
	struct txs_ident_core *c = aligned_alloc(TXS_CACHE_LINE, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->core = core;
	c->rng = id->seed ^ (0xd1b54a32d192ed03ull * (core + 1));
	id->cores[core] = c;
	*out = c;
	return 0;
}

TXS_API void txs_ident_core_close(struct txs_ident_core *c)
{
	if (!c)
		return;
	c->id->cores[c->core] = NULL;
	free(c);
}

/* SipHash-2-4 over a short message (RFC-less reference: Aumasson & Bernstein). */
#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                   \
	do {                                                                                                       \
		v0 += v1;                                                                                          \
		v1 = ROTL(v1, 13);                                                                                 \
		v1 ^= v0;                                                                                          \
		v0 = ROTL(v0, 32);                                                                                 \
		v2 += v3;                                                                                          \
		v3 = ROTL(v3, 16);                                                                                 \
		v3 ^= v2;                                                                                          \
		v0 += v3;                                                                                          \
		v3 = ROTL(v3, 21);                                                                                 \
		v3 ^= v0;                                                                                          \
		v2 += v1;                                                                                          \
		v1 = ROTL(v1, 17);                                                                                 \
		v1 ^= v2;                                                                                          \
		v2 = ROTL(v2, 32);                                                                                 \
	} while (0)

static uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t *m, size_t len)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	size_t full = len & ~(size_t)7;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t w;
		memcpy(&w, m + i, 8); /* little-endian host assumed (x86-64, aarch64) */
		v3 ^= w;
		SIPROUND;
		SIPROUND;
		v0 ^= w;
	}
	uint64_t b = (uint64_t)len << 56;
	for (size_t i = full; i < len; i++)
		b |= (uint64_t)m[i] << (8 * (i - full));
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

TXS_API uint32_t txs_ident_hash4(const struct txs_ident *id, uint32_t daddr, uint32_t saddr, uint8_t proto)
{
	uint8_t m[9];
	memcpy(m, &daddr, 4);
	memcpy(m + 4, &saddr, 4);
	m[8] = proto;
	return (uint32_t)siphash24(id->k0, id->k1, m, sizeof(m));
}

TXS_API uint32_t txs_ident_hash6(const struct txs_ident *id, const uint8_t daddr[16], const uint8_t saddr[16],
				 uint8_t proto)
{
	uint8_t m[33];
	memcpy(m, daddr, 16);
	memcpy(m + 16, saddr, 16);
	m[32] = proto;
	return (uint32_t)siphash24(id->k0, id->k1, m, sizeof(m));
}

TXS_API uint16_t txs_ident_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	uint32_t *b = &c->id->buckets[hash & c->id->mask];
	return (uint16_t)__atomic_fetch_add(b, segs, __ATOMIC_RELAXED);
}

TXS_API uint32_t txs_ident_v6_frag_id(struct txs_ident_core *c)
{
	uint32_t v;
	do
		v = (uint32_t)splitmix(&c->rng);
	while (v == 0);
	return v;
}

TXS_API void txs_ident_flow_init(struct txs_ident_core *c, struct txs_ident_flow *f)
{
	f->next = (uint16_t)splitmix(&c->rng);
}

TXS_API bool txs_ident_df_zero(const struct txs_ident *id)
{
	return id->df_zero;
}

TXS_API const char *txs_ident_name(const struct txs_ident *id)
{
	return id->name;
}

TXS_API const char *const *txs_ident_strategies(unsigned *n)
{
	*n = TXS_ARRAY_SIZE(stub_names);
	return stub_names;
}
