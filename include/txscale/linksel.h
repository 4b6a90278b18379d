/* SPDX-License-Identifier: MIT */
/* txscale link selection (lib/linksel): which link of a multi-link device a
 * packet goes out on, the Linux bonding modes by their bonding.rst names.
 *
 *   balance-rr     round-robin; packets_per_slave=N: 0 = a random link per
 *                  packet, 1 = strict round-robin, N > 1 = N consecutive packets
 *                  per link (reciprocal divide: multiply-shift, no division).
 *                  scope= where the counter lives:
 *                    shared     one atomic counter for all cores (the kernel
 *                               before 2021: every packet writes one line)
 *                    percore    one counter per core, all starting at 0 (the
 *                               merged kernel fix, commit "Use per-cpu
 *                               rr_tx_counter")
 *                    staggered  ours (default): per-core counters started at
 *                               offsets spread over one round, so cores that
 *                               run in lock-step still pick different links
 *   active-backup  everything on the primary link (primary=L, default 0); when
 *                  it is down, on the next up link after it (cyclic); back to
 *                  the primary as soon as it is up (primary_reselect=always).
 *   balance-xor    hash=layer2 | layer2+3 | layer3+4 (xmit_hash_policy), the
 *                  formulas of the kernel's bonding.rst, reduced modulo the
 *                  number of up links (see docs/linksel.md to predict a link).
 *   broadcast      every packet on every up link.
 *
 * Link state. Each link is up or down; every link starts up. The state is one
 * 64-bit word (up mask + generation) in its own cache line: set_link() writes
 * it (rarely, any thread), select() only reads it. A core rebuilds its private
 * view (list of up links, modulo constant, active-backup choice) when the word
 * changes. The choice is always made among the links up in that view, so a
 * packet is never given a down link and never dropped by the selector because
 * of a state change; with no link up select() returns -ENETDOWN and counts it.
 *
 * Concurrency contract:
 *   create/destroy: one thread, no core handle in use.
 *   core_open: the thread that will use the handle (or one thread before the
 *     others start); each core index is opened once.
 *   select / select_mask on a core handle: only its owning thread; wait-free
 *     (shared scope: one atomic fetch-add per packet; otherwise no shared write).
 *   set_link / up_mask / stats: any thread, any time, lock-free.
 */
#ifndef TXSCALE_LINKSEL_H
#define TXSCALE_LINKSEL_H

#include <errno.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum txs_linksel_mode {
	TXS_LS_BALANCE_RR = 0,    /* bonding mode 0 */
	TXS_LS_ACTIVE_BACKUP = 1, /* 1 */
	TXS_LS_BALANCE_XOR = 2,   /* 2 */
	TXS_LS_BROADCAST = 3,     /* 3 */
};

enum txs_linksel_scope {
	TXS_LS_SCOPE_SHARED = 0,
	TXS_LS_SCOPE_PERCORE = 1,
	TXS_LS_SCOPE_STAGGERED = 2,
};

/* Numbered as the kernel's BOND_XMIT_POLICY_*. */
enum txs_xmit_hash {
	TXS_HASH_LAYER2 = 0,
	TXS_HASH_LAYER34 = 1,
	TXS_HASH_LAYER23 = 2,
};

/* A parsed --bond spec: MODE[,packets_per_slave=N][,hash=POLICY][,scope=S][,primary=L] */
struct txs_linksel_params {
	enum txs_linksel_mode mode;
	unsigned packets_per_slave;   /* balance-rr: 0..65535, default 1 */
	enum txs_linksel_scope scope; /* balance-rr: default staggered */
	enum txs_xmit_hash hash;      /* balance-xor: default layer2 (as the kernel) */
	unsigned primary;             /* active-backup: default link 0 */
};

/* Parse a spec. Mode names as bonding.rst (or the kernel's numbers 0..3);
 * "xmit_hash_policy=" is accepted for "hash=". Returns 0, or -EINVAL with one
 * line in err naming the bad item (unknown mode, unknown key, bad value, a
 * key that does not apply to the mode). */
TXS_API int txs_linksel_parse(struct txs_linksel_params *p, const char *spec, char *err, size_t errlen);

/* Canonical text of params ("balance-rr,packets_per_slave=1,scope=staggered"). */
TXS_API const char *txs_linksel_params_str(const struct txs_linksel_params *p, char *buf, size_t len);

struct txs_linksel_conf {
	const char *mode;    /* a spec as above; NULL = "balance-rr" */
	unsigned n_links;    /* 1..TXS_MAX_LINKS */
	unsigned max_cores;  /* core handles that will be opened; 0 = 1 */
	uint64_t seed;       /* packets_per_slave=0 generators; 0 = fixed default */
};

struct txs_linksel;

/* Returns 0, -EINVAL (bad spec: err gets the line; bad n_links / max_cores /
 * primary >= n_links), -ENOMEM. err may be NULL. */
TXS_API int txs_linksel_create(struct txs_linksel **out, const struct txs_linksel_conf *conf, char *err,
			       size_t errlen);
TXS_API void txs_linksel_destroy(struct txs_linksel *ls);
TXS_API const struct txs_linksel_params *txs_linksel_params(const struct txs_linksel *ls);
TXS_API unsigned txs_linksel_n_links(const struct txs_linksel *ls);

/* Set link up or down. Any thread. Returns 0 or -EINVAL (link >= n_links). */
TXS_API int txs_linksel_set_link(struct txs_linksel *ls, unsigned link, bool up);
/* Current up mask (bit l = link l up). Any thread. */
TXS_API uint32_t txs_linksel_up_mask(const struct txs_linksel *ls);

/* ---- flow keys ----------------------------------------------------------
 * What balance-xor hashes. Fill once per flow, then txs_linksel_key_prepare()
 * computes the policy's hash into key->hash; select() reads only that. */
struct txs_flow_key {
	uint8_t src_mac[6], dst_mac[6];
	int family;           /* AF_INET, AF_INET6; 0 = not IP (layer2 formula) */
	uint8_t saddr[16];    /* network byte order; IPv4 in bytes 0..3 */
	uint8_t daddr[16];
	uint16_t sport, dport; /* host order */
	uint8_t proto;        /* IPPROTO_UDP (17), IPPROTO_TCP (6), ... */
	bool fragment;        /* an IP fragment: layer3+4 omits the ports */
	uint32_t hash;        /* set by txs_linksel_key_prepare() */
};

/* The bonding.rst hash of a key under a policy (before "modulo slave count").
 * Pure; any thread. Words are read from the headers as stored, little-endian,
 * which is what the kernel computes on x86-64 (docs/linksel.md). */
TXS_API uint32_t txs_linksel_xor_hash(enum txs_xmit_hash policy, const struct txs_flow_key *key);
/* key->hash = txs_linksel_xor_hash(bond's policy, key). Any thread. */
TXS_API void txs_linksel_key_prepare(const struct txs_linksel *ls, struct txs_flow_key *key);

/* ---- multiply-shift division (Lemire, Kaser, Kurz 2019) ------------------
 * For 32-bit a and 1 <= d < 2^32, with m = txs_fastdiv_m(d) = 2^64 / d
 * rounded up (wraps to 0 for d = 1): fastmod(a) == a % d for every a and d;
 * fastdiv(a) == a / d for d >= 2. Two multiplies, no divide. */
static inline uint64_t txs_fastdiv_m(uint32_t d)
{
	return UINT64_MAX / d + 1;
}
static inline uint32_t txs_fastdiv(uint32_t a, uint64_t m)
{
	return (uint32_t)(((unsigned __int128)m * a) >> 64);
}
static inline uint32_t txs_fastmod(uint32_t a, uint64_t m, uint32_t d)
{
	uint64_t low = m * a;
	return (uint32_t)(((unsigned __int128)low * d) >> 64);
}

/* ---- per-core handle --------------------------------------------------------
 * Public only so that select() can be inline; fields are private. One cache
 * line of hot data written by the owner only, then a guard line. */
struct txs_linksel_core {
	/* written per packet by the owner (never by anyone else) */
	uint32_t ctr;             /* percore / staggered counter */
	uint32_t _pad0;
	uint64_t rng;             /* packets_per_slave=0: splitmix64 state */
	/* the view: rebuilt by the owner when *state != view */
	uint64_t view;            /* state word the view was built from */
	uint64_t mod_m;           /* txs_fastdiv_m(n_up) */
	uint64_t pps_m;           /* txs_fastdiv_m(packets_per_slave) */
	uint32_t up_mask;         /* links up in the view */
	uint8_t n_up;
	uint8_t ab_link;          /* active-backup: the link to use */
	uint8_t kind;             /* enum txs_linksel_kind (below) */
	uint8_t _pad1;
	uint8_t up[TXS_MAX_LINKS]; /* up links, ascending */
	/* read-only after open */
	const uint64_t *state;    /* the bond's state word (read per packet) */
	uint32_t *shared_ctr;     /* scope=shared: the one counter */
	struct txs_linksel *ls;
	unsigned id;
	bool open;
	TXS_CACHE_GUARD;
	/* written by the owner, read by anyone (TXS_STAT_*) */
	uint64_t nolink;          /* selections refused: no link up */
	uint64_t refresh;         /* view rebuilds (state changes seen) */
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

/* The per-packet strategy, fixed at setup from mode / scope / packets_per_slave. */
enum txs_linksel_kind {
	TXS_LSK_RR_LOCAL = 0,      /* percore / staggered, N = 1 */
	TXS_LSK_RR_LOCAL_N = 1,    /* percore / staggered, N > 1 */
	TXS_LSK_RR_SHARED = 2,     /* shared, N = 1 */
	TXS_LSK_RR_SHARED_N = 3,   /* shared, N > 1 */
	TXS_LSK_RANDOM_LOCAL = 4,  /* N = 0, per-core generator */
	TXS_LSK_RANDOM_SHARED = 5, /* N = 0, scope=shared: shared sequence, mixed */
	TXS_LSK_ACTIVE_BACKUP = 6,
	TXS_LSK_XOR = 7,
	TXS_LSK_BROADCAST = 8,
};

/* Open the handle of core `core` (0..max_cores-1). Returns 0, -EINVAL (out of
 * range), -EBUSY (already open). The handle lives until destroy. */
TXS_API int txs_linksel_core_open(struct txs_linksel *ls, unsigned core, struct txs_linksel_core **out);
TXS_API void txs_linksel_core_close(struct txs_linksel_core *c);

/* Cold paths of select(): out of line. */
TXS_API void txs_linksel_refresh_(struct txs_linksel_core *c, uint64_t state);
TXS_API int txs_linksel_nolink_(struct txs_linksel_core *c);

static inline uint64_t txs_linksel_mix64_(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
/* Pick the link for one packet: a link index (0..n_links-1), or -ENETDOWN
 * when no link is up (counted in the core's nolink). key is read by
 * balance-xor only (key->hash, see txs_linksel_key_prepare) and may be NULL
 * for the other modes. broadcast returns the lowest up link; use
 * select_mask() to get every copy. Owner thread only; wait-free. */
static inline int txs_linksel_select(struct txs_linksel_core *c, const struct txs_flow_key *key)
{
	uint64_t st = __atomic_load_n(c->state, __ATOMIC_RELAXED);
	if (TXS_UNLIKELY(st != c->view))
		txs_linksel_refresh_(c, st);
	if (TXS_UNLIKELY(c->n_up == 0))
		return txs_linksel_nolink_(c);
	uint32_t slot;
	switch (c->kind) {
	case TXS_LSK_RR_LOCAL:
		slot = c->ctr++;
		break;
	case TXS_LSK_RR_LOCAL_N:
		slot = txs_fastdiv(c->ctr++, c->pps_m);
		break;
	case TXS_LSK_RR_SHARED:
		slot = __atomic_fetch_add(c->shared_ctr, 1, __ATOMIC_RELAXED);
		break;
	case TXS_LSK_RR_SHARED_N:
		slot = txs_fastdiv(__atomic_fetch_add(c->shared_ctr, 1, __ATOMIC_RELAXED), c->pps_m);
		break;
	case TXS_LSK_RANDOM_LOCAL:
		c->rng += 0x9e3779b97f4a7c15ull;
		/* multiply-shift range reduction of a uniform 32-bit value */
		return c->up[((txs_linksel_mix64_(c->rng) >> 32) * c->n_up) >> 32];
	case TXS_LSK_RANDOM_SHARED: {
		/* one splitmix64 stream for all cores: element s of it */
		uint64_t s = __atomic_fetch_add(c->shared_ctr, 1, __ATOMIC_RELAXED);
		uint64_t r = txs_linksel_mix64_(c->rng + (s + 1) * 0x9e3779b97f4a7c15ull);
		return c->up[((r >> 32) * c->n_up) >> 32];
	}
	case TXS_LSK_ACTIVE_BACKUP:
		return c->ab_link;
	case TXS_LSK_XOR:
		slot = key->hash;
		break;
	default: /* broadcast */
		return c->up[0];
	}
	return c->up[txs_fastmod(slot, c->mod_m, c->n_up)];
}

/* Every link the packet goes out on: returns how many (>= 1) and sets *mask
 * (bit l = link l), or -ENETDOWN (*mask = 0). broadcast: all up links; other modes: the
 * one link select() picks. Owner thread only. */
static inline int txs_linksel_select_mask(struct txs_linksel_core *c, const struct txs_flow_key *key,
					  uint32_t *mask)
{
	if (c->kind == TXS_LSK_BROADCAST) {
		uint64_t st = __atomic_load_n(c->state, __ATOMIC_RELAXED);
		if (TXS_UNLIKELY(st != c->view))
			txs_linksel_refresh_(c, st);
		if (TXS_UNLIKELY(c->n_up == 0)) {
			*mask = 0;
			return txs_linksel_nolink_(c);
		}
		*mask = c->up_mask;
		return c->n_up;
	}
	int l = txs_linksel_select(c, key);
	*mask = l < 0 ? 0 : 1u << l;
	return l < 0 ? l : 1;
}

/* Whether packets are copied to every up link (mode broadcast). */
static inline bool txs_linksel_core_broadcast(const struct txs_linksel_core *c)
{
	return c->kind == TXS_LSK_BROADCAST;
}
#endif /* TXS_UNSTABLE_API */

struct txs_linksel_stats {
	uint64_t nolink;   /* selections refused because no link was up */
	uint64_t refresh;  /* view rebuilds, summed over cores */
	uint64_t changes;  /* set_link calls that changed the state */
};
/* Sum over cores. Any thread (exact once the cores stopped). */
TXS_API void txs_linksel_stats(const struct txs_linksel *ls, struct txs_linksel_stats *out);

/* Registered mode / scope / policy names, for --help and tests. */
TXS_API const char *txs_linksel_mode_name(enum txs_linksel_mode m);
TXS_API const char *txs_linksel_scope_name(enum txs_linksel_scope s);
TXS_API const char *txs_linksel_hash_name(enum txs_xmit_hash h);
#define TXS_LS_N_MODES 4
#define TXS_LS_N_SCOPES 3
#define TXS_LS_N_HASHES 3

#ifdef __cplusplus
}
#endif
#endif
