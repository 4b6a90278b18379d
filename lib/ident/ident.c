/* SPDX-License-Identifier: MIT */
/* lib/ident: instance and core handles, strategy registry, keyed bucket
 * hash, IPv6 fragment IDs, the coarse clock. The strategies themselves are
 * in kernel.c (cas-loop, atomic), percpu.c, lease.c and flow.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include "common/alloc.h"
#include "ident_priv.h"

static const struct ident_ops *const strategies[] = {
	&ident_ops_cas_loop, &ident_ops_atomic, &ident_ops_percpu_segment, &ident_ops_lease, &ident_ops_flow,
};
static const char *const strategy_names[] = { "cas-loop", "atomic", "percpu-segment", "lease", "flow", NULL };

TXS_API const char *const *txs_ident_strategies(unsigned *n)
{
	if (n)
		*n = TXS_ARRAY_SIZE(strategies);
	return strategy_names;
}

/* ---- clock ---------------------------------------------------------------- */

uint32_t *ident_fake_ticks;
static uint64_t tick_recip; /* floor(2^64 / resolution_ns) + 1, set once */

static uint64_t tick_recip_get(void)
{
	uint64_t r = __atomic_load_n(&tick_recip, __ATOMIC_RELAXED);
	if (TXS_LIKELY(r))
		return r;
	struct timespec res;
	uint64_t ns = 1000000; /* 1 ms if the resolution is unknown */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0)
		ns = (uint64_t)res.tv_nsec;
	r = (uint64_t)(((unsigned __int128)1 << 64) / ns) + 1;
	__atomic_store_n(&tick_recip, r, __ATOMIC_RELAXED); /* idempotent: every thread computes the same */
	return r;
}

uint32_t ident_ticks_slow(void)
{
	uint64_t r = tick_recip_get();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* ns / resolution by multiply-high: monotonic, never off by more than one */
	return (uint32_t)(((unsigned __int128)ns * r) >> 64);
}

/* ---- instance ---------------------------------------------------------------- */

static int fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;
	while (len) {
		ssize_t n = getrandom(p, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static const struct ident_ops *find_ops(const char *name)
{
	if (!name)
		name = "lease";
	for (size_t i = 0; i < TXS_ARRAY_SIZE(strategies); i++)
		if (strcmp(strategies[i]->name, name) == 0)
			return strategies[i];
	return NULL;
}

TXS_API int txs_ident_create(struct txs_ident **out, const struct txs_ident_conf *conf)
{
	static const struct txs_ident_conf defconf;
	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!conf)
		conf = &defconf;
	const struct ident_ops *ops = find_ops(conf->strategy);
	unsigned ts = conf->table_size ? conf->table_size : 2048;
	unsigned cores = conf->max_cores ? conf->max_cores : 1;
	if (!ops || (ts & (ts - 1)) || ts > (1u << TXS_IDENT_TAG_SHIFT) || cores > TXS_MAX_CORES)
		return -EINVAL;

	struct txs_ident *id = calloc(1, sizeof(*id));
	if (!id)
		return -ENOMEM;
	id->ops = ops;
	id->table_size = ts;
	id->mask = ts - 1;
	id->max_cores = cores;
	id->df_zero = conf->df_zero;
	int rc = 0;
	if (conf->fixed_key)
		memcpy(id->key, conf->key, sizeof(id->key));
	else
		rc = fill_random(id->key, sizeof(id->key));
	id->seed = conf->seed;
	while (rc == 0 && id->seed == 0)
		rc = fill_random(&id->seed, sizeof(id->seed));
	if (rc < 0) {
		free(id);
		return rc;
	}
	/* Lease block bounds (docs/ident.md, "lease: the rule"): B_max keeps every
	 * core's outstanding lease within 65536 / (2 * cores), and at most 1024;
	 * B_min 1 is the kernel's own fetch-add per ID (low rates). */
	unsigned bmax = 65536u / (2u * cores);
	if (bmax > IDENT_LEASE_BCAP)
		bmax = IDENT_LEASE_BCAP;
	id->lease_bmax = bmax;
	id->lease_bmin = bmax < IDENT_LEASE_BMIN ? bmax : IDENT_LEASE_BMIN;
	id->lease_slots = ts < IDENT_LEASE_SLOTS ? ts : IDENT_LEASE_SLOTS;

	id->cores = calloc(cores, sizeof(*id->cores));
	id->open = calloc(cores, 1);
	if (!id->cores || !id->open)
		goto nomem;
	if (ops->shared) {
		size_t sz = (sizeof(*id->buckets) * ts + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1);
		id->buckets = aligned_alloc(TXS_CACHE_LINE, sz);
		if (!id->buckets)
			goto nomem;
		/* random start per bucket, stamped now: the first delta is bounded by
		 * the time since create, not since boot */
		uint64_t x = id->seed ^ 0x6a09e667f3bcc909ull;
		uint32_t now = ident_ticks();
		for (unsigned i = 0; i < ts; i++) {
			id->buckets[i].counter = (uint32_t)txs_rng_next(&x);
			id->buckets[i].tstamp = now;
		}
	}
	*out = id;
	return 0;
nomem:
	free(id->cores);
	free(id->open);
	free(id);
	return -ENOMEM;
}

static void core_free(struct txs_ident_core *c)
{
	if (c->id->ops->core_fini)
		c->id->ops->core_fini(c);
	free(c);
}

TXS_API void txs_ident_destroy(struct txs_ident *id)
{
	if (!id)
		return;
	for (unsigned k = 0; k < id->max_cores; k++)
		if (id->cores[k])
			core_free(id->cores[k]);
	free(id->cores);
	free(id->open);
	free(id->buckets);
	free(id);
}

TXS_API int txs_ident_core_open(struct txs_ident *id, unsigned core, struct txs_ident_core **out)
{
	if (!id || !out || core >= id->max_cores)
		return -EINVAL;
	if (__atomic_exchange_n(&id->open[core], 1, __ATOMIC_ACQUIRE))
		return -EBUSY;
	/* allocated by the owning thread: first touch puts it on its node */
	struct txs_ident_core *c = txs_zalloc_line(sizeof(*c));
	if (!c) {
		__atomic_store_n(&id->open[core], 0, __ATOMIC_RELEASE);
		return -ENOMEM;
	}
	c->id = id;
	c->buckets = id->buckets;
	c->mask = id->mask;
	c->index = core;
	c->reserve = id->ops->reserve;
	uint64_t x = id->seed + 0x9e3779b97f4a7c15ull * (core + 1);
	for (int i = 0; i < 4; i++)
		c->rng.s[i] = txs_rng_next(&x);
	int rc = id->ops->core_init ? id->ops->core_init(c) : 0;
	if (rc < 0) {
		free(c);
		__atomic_store_n(&id->open[core], 0, __ATOMIC_RELEASE);
		return rc;
	}
	id->cores[core] = c;
	*out = c;
	return 0;
}

TXS_API void txs_ident_core_close(struct txs_ident_core *c)
{
	if (!c)
		return;
	struct txs_ident *id = c->id;
	unsigned k = c->index;
	id->cores[k] = NULL;
	core_free(c);
	__atomic_store_n(&id->open[k], 0, __ATOMIC_RELEASE);
}

/* ---- keyed hash ----------------------------------------------------------------
 * Message layouts (fixed; tests pin them):
 *   IPv4: daddr[4] saddr[4] proto 0 0 0   (12 bytes, the kernel's siphash_3u32
 *         word order on a little-endian host)
 *   IPv6: daddr[16] saddr[16] proto 0 0 0 (36 bytes) */
TXS_API uint32_t txs_ident_hash4(const struct txs_ident *id, uint32_t daddr, uint32_t saddr, uint8_t proto)
{
	uint8_t m[12] = { 0 };
	memcpy(m, &daddr, 4);
	memcpy(m + 4, &saddr, 4);
	m[8] = proto;
	return (uint32_t)txs_siphash24(id->key, m, sizeof(m));
}

TXS_API uint32_t txs_ident_hash6(const struct txs_ident *id, const uint8_t daddr[16], const uint8_t saddr[16],
				 uint8_t proto)
{
	uint8_t m[36] = { 0 };
	memcpy(m, daddr, 16);
	memcpy(m + 16, saddr, 16);
	m[32] = proto;
	return (uint32_t)txs_siphash24(id->key, m, sizeof(m));
}

/* ---- per-core calls -------------------------------------------------------------- */

TXS_API uint16_t txs_ident_reserve(struct txs_ident_core *c, uint32_t hash, unsigned segs)
{
	/* the lease fast path first, so it costs one direct call here too */
	struct txs_ident_lease_slot *sl = c->v.slots;
	if (TXS_LIKELY(sl != NULL)) {
		uint32_t b = hash & c->v.bucket_mask;
		struct txs_ident_lease_slot *s = &sl[b & c->v.slot_mask];
		uint32_t cur = s->cur;
		if (TXS_LIKELY(s->tag == (c->v.tag_epoch | b) && (cur & 0xffff) >= segs)) {
			s->cur = cur + (segs << 16) - segs;
			return (uint16_t)(cur >> 16);
		}
	}
	return c->reserve(c, hash, segs);
}

TXS_API void txs_ident_core_tick(struct txs_ident_core *c)
{
	if (c->id->ops->tick)
		c->id->ops->tick(c);
}

TXS_API uint32_t txs_ident_v6_frag_id(struct txs_ident_core *c)
{
	uint32_t v;
	do
		v = (uint32_t)(ident_rand(&c->rng) >> 32);
	while (TXS_UNLIKELY(v == 0));
	return v;
}

TXS_API void txs_ident_flow_init(struct txs_ident_core *c, struct txs_ident_flow *f)
{
	f->next = (uint16_t)(ident_rand(&c->rng) >> 48);
}

/* ---- accessors ------------------------------------------------------------------- */

TXS_API bool txs_ident_df_zero(const struct txs_ident *id)
{
	return id->df_zero;
}

TXS_API const char *txs_ident_name(const struct txs_ident *id)
{
	return id->ops->name;
}

TXS_API uint32_t txs_ident_bucket_position(const struct txs_ident *id, uint32_t hash)
{
	if (!id->buckets)
		return 0;
	return __atomic_load_n(&id->buckets[hash & id->mask].counter, __ATOMIC_RELAXED);
}

TXS_API void txs_ident_lease_waste(const struct txs_ident *id, uint64_t *wasted, uint64_t *skipped)
{
	uint64_t w = __atomic_load_n(&id->wasted, __ATOMIC_RELAXED), d = __atomic_load_n(&id->skipped, __ATOMIC_RELAXED);
	if (id->ops == &ident_ops_lease)
		for (unsigned k = 0; k < id->max_cores; k++)
			if (id->cores[k]) {
				w += id->cores[k]->wasted;
				d += id->cores[k]->skipped;
			}
	if (wasted)
		*wasted = w;
	if (skipped)
		*skipped = d;
}

TXS_API unsigned txs_ident_table_size(const struct txs_ident *id)
{
	return id->table_size;
}

TXS_API void txs_ident_lease_bounds(const struct txs_ident *id, unsigned *bmin, unsigned *bmax)
{
	bool lease = id->ops == &ident_ops_lease;
	if (bmin)
		*bmin = lease ? id->lease_bmin : 0;
	if (bmax)
		*bmax = lease ? id->lease_bmax : 0;
}
