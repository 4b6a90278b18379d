/* SPDX-License-Identifier: MIT */
/* lib/linksel: spec parsing, the multiply-shift divide, one body over every
 * mode (range, no-link error, single-up-link, failover), round-robin
 * distribution and exact runs, balance-xor against hand-computed hashes,
 * active-backup and broadcast semantics, the lock-step imbalance of percore
 * against staggered, and the wiring into the generator (per-link counts of
 * the dummy device). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <txscale/txscale.h>
#include "test_engine.h"
#include "test_util.h"

/* Every configuration that the mode-generic tests run over. */
static const char *const all_specs[] = {
	"balance-rr,packets_per_slave=0,scope=shared",
	"balance-rr,packets_per_slave=0,scope=percore",
	"balance-rr,packets_per_slave=0,scope=staggered",
	"balance-rr,packets_per_slave=1,scope=shared",
	"balance-rr,packets_per_slave=1,scope=percore",
	"balance-rr,packets_per_slave=1,scope=staggered",
	"balance-rr,packets_per_slave=3,scope=shared",
	"balance-rr,packets_per_slave=3,scope=percore",
	"balance-rr,packets_per_slave=3,scope=staggered",
	"active-backup",
	"active-backup,primary=1",
	"balance-xor,hash=layer2",
	"balance-xor,hash=layer2+3",
	"balance-xor,hash=layer3+4",
	"broadcast",
};

static const char *const scopes[] = { "shared", "percore", "staggered" };

static struct txs_linksel *mk(const char *spec, unsigned links, unsigned cores)
{
	struct txs_linksel *ls;
	char err[160];
	struct txs_linksel_conf c = { .mode = spec, .n_links = links, .max_cores = cores, .seed = 42 };
	int rc = txs_linksel_create(&ls, &c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "create '%s' links=%u: %s\n", spec, links, err);
		fail();
	}
	return ls;
}

static struct txs_linksel_core *core(struct txs_linksel *ls, unsigned id)
{
	struct txs_linksel_core *c;
	assert_int_equal(txs_linksel_core_open(ls, id, &c), 0);
	return c;
}

/* A flow key for mode-generic tests (xor needs a prepared hash). */
static void key_v4(struct txs_linksel *ls, struct txs_flow_key *k, uint16_t sport)
{
	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	inet_pton(AF_INET, "198.18.0.1", k->saddr);
	inet_pton(AF_INET, "198.18.0.2", k->daddr);
	k->sport = sport;
	k->dport = 5201;
	k->proto = 17;
	k->src_mac[5] = 1;
	k->dst_mac[5] = 2;
	if (ls)
		txs_linksel_key_prepare(ls, k);
}

/* ---- multiply-shift division ------------------------------------------ */
static void fastdiv_exact(void **st)
{
	(void)st;
	uint64_t s = 1;
	for (uint32_t d = 1; d < 70000; d += (d < 2000 ? 1 : 97)) {
		uint64_t m = txs_fastdiv_m(d);
		uint32_t edge[] = { 0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT32_MAX, UINT32_MAX - 1,
				    UINT32_MAX / d * d, UINT32_MAX / d * d - 1 };
		for (unsigned i = 0; i < TXS_ARRAY_SIZE(edge) + 200; i++) {
			uint32_t a = i < TXS_ARRAY_SIZE(edge) ? edge[i] : (uint32_t)t_rand(&s);
			assert_int_equal(txs_fastmod(a, m, d), a % d);
			if (d >= 2)
				assert_int_equal(txs_fastdiv(a, m), a / d);
		}
	}
	for (int i = 0; i < 100000; i++) {
		uint32_t d = (uint32_t)t_rand(&s) | 2, a = (uint32_t)t_rand(&s);
		uint64_t m = txs_fastdiv_m(d);
		assert_int_equal(txs_fastmod(a, m, d), a % d);
		assert_int_equal(txs_fastdiv(a, m), a / d);
	}
}

/* ---- spec parsing ------------------------------------------------------ */
static void parse_good(void **st)
{
	(void)st;
	struct txs_linksel_params p;
	char err[160];
	assert_int_equal(txs_linksel_parse(&p, "balance-rr", err, sizeof(err)), 0);
	assert_int_equal(p.mode, TXS_LS_BALANCE_RR);
	assert_int_equal(p.packets_per_slave, 1);
	assert_int_equal(p.scope, TXS_LS_SCOPE_STAGGERED);
	assert_int_equal(txs_linksel_parse(&p, "balance-rr,packets_per_slave=2,scope=percore", err, sizeof(err)),
			 0);
	assert_int_equal(p.packets_per_slave, 2);
	assert_int_equal(p.scope, TXS_LS_SCOPE_PERCORE);
	assert_int_equal(txs_linksel_parse(&p, "0,packets_per_slave=0,scope=shared", err, sizeof(err)), 0);
	assert_int_equal(p.mode, TXS_LS_BALANCE_RR);
	assert_int_equal(p.packets_per_slave, 0);
	assert_int_equal(p.scope, TXS_LS_SCOPE_SHARED);
	assert_int_equal(txs_linksel_parse(&p, "balance-xor,hash=layer3+4", err, sizeof(err)), 0);
	assert_int_equal(p.mode, TXS_LS_BALANCE_XOR);
	assert_int_equal(p.hash, TXS_HASH_LAYER34);
	assert_int_equal(txs_linksel_parse(&p, "2,xmit_hash_policy=layer2+3", err, sizeof(err)), 0);
	assert_int_equal(p.hash, TXS_HASH_LAYER23);
	assert_int_equal(txs_linksel_parse(&p, "balance-xor", err, sizeof(err)), 0);
	assert_int_equal(p.hash, TXS_HASH_LAYER2);
	assert_int_equal(txs_linksel_parse(&p, "active-backup,primary=3", err, sizeof(err)), 0);
	assert_int_equal(p.mode, TXS_LS_ACTIVE_BACKUP);
	assert_int_equal(p.primary, 3);
	assert_int_equal(txs_linksel_parse(&p, "3", err, sizeof(err)), 0);
	assert_int_equal(p.mode, TXS_LS_BROADCAST);
	/* canonical text parses back to the same params */
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(all_specs); i++) {
		struct txs_linksel_params a, b;
		char buf[128];
		assert_int_equal(txs_linksel_parse(&a, all_specs[i], err, sizeof(err)), 0);
		assert_int_equal(txs_linksel_parse(&b, txs_linksel_params_str(&a, buf, sizeof(buf)), err, sizeof(err)),
				 0);
		assert_memory_equal(&a, &b, sizeof(a));
	}
}

static void parse_bad(void **st)
{
	(void)st;
	/* spec, a word the one-line message must contain */
	static const char *const bad[][2] = {
		{ "", "empty" },
		{ "balance-xx", "balance-xx" },
		{ "802.3ad", "802.3ad" },
		{ "balance-rr,packets_per_slave=70000", "packets_per_slave=70000" },
		{ "balance-rr,packets_per_slave=-1", "packets_per_slave=-1" },
		{ "balance-rr,packets_per_slave=", "packets_per_slave" },
		{ "balance-rr,packets_per_slave", "packets_per_slave" },
		{ "balance-rr,scope=global", "scope=global" },
		{ "balance-rr,hash=layer2", "hash" },
		{ "balance-xor,hash=layer4", "hash=layer4" },
		{ "balance-xor,packets_per_slave=2", "packets_per_slave" },
		{ "balance-xor,scope=percore", "scope" },
		{ "balance-rr,foo=1", "foo" },
		{ "active-backup,primary=x", "primary=x" },
		{ "broadcast,primary=1", "primary" },
	};
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(bad); i++) {
		struct txs_linksel_params p;
		char err[160] = "";
		assert_int_equal(txs_linksel_parse(&p, bad[i][0], err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i][1])) {
			fprintf(stderr, "spec '%s': message '%s' does not name '%s'\n", bad[i][0], err, bad[i][1]);
			fail();
		}
	}
	struct txs_linksel *ls;
	char err[160];
	struct txs_linksel_conf c = { .mode = "active-backup,primary=5", .n_links = 4 };
	assert_int_equal(txs_linksel_create(&ls, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "primary=5"));
	c = (struct txs_linksel_conf){ .mode = "broadcast", .n_links = 0 };
	assert_int_equal(txs_linksel_create(&ls, &c, err, sizeof(err)), -EINVAL);
	c = (struct txs_linksel_conf){ .mode = "broadcast", .n_links = TXS_MAX_LINKS + 1 };
	assert_int_equal(txs_linksel_create(&ls, &c, err, sizeof(err)), -EINVAL);
	c = (struct txs_linksel_conf){ .mode = "broadcast", .n_links = 2, .max_cores = 2 };
	assert_int_equal(txs_linksel_create(&ls, &c, NULL, 0), 0);
	struct txs_linksel_core *h;
	assert_int_equal(txs_linksel_core_open(ls, 2, &h), -EINVAL);
	assert_int_equal(txs_linksel_core_open(ls, 1, &h), 0);
	assert_int_equal(txs_linksel_core_open(ls, 1, &h), -EBUSY);
	assert_int_equal(txs_linksel_set_link(ls, 2, false), -EINVAL);
	txs_linksel_destroy(ls);
}

/* ---- one body, every mode --------------------------------------------- */
/* Range and up-ness; all links down -> -ENETDOWN, counted exactly; exactly one
 * link up -> every mode returns that link; select_mask agrees with select. */
static void every_mode_basics(void **st)
{
	(void)st;
	for (unsigned si = 0; si < TXS_ARRAY_SIZE(all_specs); si++) {
		for (unsigned L = 2; L <= 5; L++) {
			struct txs_linksel *ls = mk(all_specs[si], L, 2);
			struct txs_linksel_core *c[2] = { core(ls, 0), core(ls, 1) };
			struct txs_flow_key k;
			key_v4(ls, &k, 40000);
			bool bc = txs_linksel_core_broadcast(c[0]);
			for (int i = 0; i < 1000; i++) {
				int l = txs_linksel_select(c[i & 1], &k);
				assert_true(l >= 0 && l < (int)L);
				uint32_t mask = 0;
				int n = txs_linksel_select_mask(c[i & 1], &k, &mask);
				assert_int_equal(n, bc ? (int)L : 1);
				assert_int_equal(__builtin_popcount(mask), n);
			}
			for (unsigned l = 0; l < L; l++)
				assert_int_equal(txs_linksel_set_link(ls, l, false), 0);
			assert_int_equal(txs_linksel_up_mask(ls), 0);
			for (int i = 0; i < 77; i++) {
				uint32_t mask = 0xdead;
				assert_int_equal(txs_linksel_select(c[i & 1], &k), -ENETDOWN);
				assert_int_equal(txs_linksel_select_mask(c[i & 1], &k, &mask), -ENETDOWN);
			}
			struct txs_linksel_stats s;
			txs_linksel_stats(ls, &s);
			assert_int_equal(s.nolink, 2 * 77);
			assert_int_equal(s.changes, L);
			for (unsigned only = 0; only < L; only++) {
				assert_int_equal(txs_linksel_set_link(ls, only, true), 0);
				for (int i = 0; i < 50; i++) {
					assert_int_equal(txs_linksel_select(c[i & 1], &k), (int)only);
					uint32_t mask = 0;
					assert_int_equal(txs_linksel_select_mask(c[i & 1], &k, &mask), 1);
					assert_int_equal(mask, 1u << only);
				}
				assert_int_equal(txs_linksel_set_link(ls, only, false), 0);
			}
			txs_linksel_stats(ls, &s);
			assert_int_equal(s.nolink, 2 * 77); /* none added */
			txs_linksel_destroy(ls);
		}
	}
}

/* Random link flips between selections (one thread: the state is known at
 * every step): no selection ever lands on a down link, and successes plus
 * refusals equal the attempts, in every mode. */
static void every_mode_failover_loses_nothing(void **st)
{
	(void)st;
	uint64_t seed = 7;
	for (unsigned si = 0; si < TXS_ARRAY_SIZE(all_specs); si++) {
		const unsigned L = 4, N = 200000;
		struct txs_linksel *ls = mk(all_specs[si], L, 3);
		struct txs_linksel_core *c[3] = { core(ls, 0), core(ls, 1), core(ls, 2) };
		struct txs_flow_key k[8];
		for (unsigned f = 0; f < 8; f++)
			key_v4(ls, &k[f], (uint16_t)(40000 + f));
		uint64_t per_link[4] = { 0 }, refused = 0, copies = 0;
		uint32_t up = 0xf;
		for (unsigned i = 0; i < N; i++) {
			if (t_rand(&seed) % 500 == 0) {
				unsigned l = (unsigned)(t_rand(&seed) % L);
				bool u = t_rand(&seed) & 1;
				txs_linksel_set_link(ls, l, u);
				up = u ? up | 1u << l : up & ~(1u << l);
				assert_int_equal(txs_linksel_up_mask(ls), up);
			}
			uint32_t mask = 0;
			int n = txs_linksel_select_mask(c[i % 3], &k[i % 8], &mask);
			if (n < 0) {
				assert_int_equal(n, -ENETDOWN);
				assert_int_equal(up, 0);
				refused++;
				continue;
			}
			assert_int_equal(mask & ~up, 0); /* never a down link */
			for (unsigned l = 0; l < L; l++)
				per_link[l] += mask >> l & 1;
			copies += (unsigned)n;
		}
		uint64_t sum = 0;
		for (unsigned l = 0; l < L; l++)
			sum += per_link[l];
		assert_int_equal(sum, copies);
		struct txs_linksel_stats s;
		txs_linksel_stats(ls, &s);
		assert_int_equal(s.nolink, refused);
		if (!txs_linksel_core_broadcast(c[0]))
			assert_int_equal(copies + refused, N);
		txs_linksel_destroy(ls);
	}
}

/* ---- balance-rr ------------------------------------------------------------ */
/* Over a whole number of rounds, every link gets exactly the same count (one
 * core, or several cores interleaved: each core is exact on its own); N = 0
 * (random) within 5% of the mean. */
static void rr_distribution(void **st)
{
	(void)st;
	static const unsigned pps[] = { 0, 1, 2, 5, 64 };
	for (unsigned si = 0; si < 3; si++)
		for (unsigned pi = 0; pi < TXS_ARRAY_SIZE(pps); pi++)
			for (unsigned L = 1; L <= 7; L++) {
				char spec[96];
				snprintf(spec, sizeof(spec), "balance-rr,packets_per_slave=%u,scope=%s", pps[pi],
					 scopes[si]);
				unsigned ncores = 3;
				struct txs_linksel *ls = mk(spec, L, ncores);
				struct txs_linksel_core *c[3] = { core(ls, 0), core(ls, 1), core(ls, 2) };
				unsigned n = pps[pi] ? pps[pi] * L * 300 : 60000; /* per core */
				uint64_t cnt[3][TXS_MAX_LINKS] = { { 0 } }, tot[TXS_MAX_LINKS] = { 0 };
				for (unsigned i = 0; i < n; i++)
					for (unsigned k = 0; k < ncores; k++) {
						int l = txs_linksel_select(c[k], NULL);
						cnt[k][l]++;
						tot[l]++;
					}
				for (unsigned l = 0; l < L; l++) {
					if (pps[pi] == 0) {
						double mean = (double)n * ncores / L;
						assert_true(tot[l] > mean * 0.95 && tot[l] < mean * 1.05);
					} else if (si == 0) {
						/* shared: the cores together walk one counter */
						assert_int_equal(tot[l], (uint64_t)n * ncores / L);
					} else {
						for (unsigned k = 0; k < ncores; k++)
							assert_int_equal(cnt[k][l], n / L);
					}
				}
				txs_linksel_destroy(ls);
			}
}

/* packets_per_slave=N: runs of exactly N packets on one link, then the next
 * link in order. A staggered core may start inside a run: that first run is
 * shorter, every later one is exact. */
static void rr_runs_exact(void **st)
{
	(void)st;
	static const unsigned pps[] = { 1, 2, 3, 7, 64, 1000, 65535 };
	for (unsigned si = 0; si < 3; si++)
		for (unsigned pi = 0; pi < TXS_ARRAY_SIZE(pps); pi++)
			for (unsigned L = 1; L <= 7; L += 2) {
				char spec[96];
				snprintf(spec, sizeof(spec), "balance-rr,packets_per_slave=%u,scope=%s", pps[pi],
					 scopes[si]);
				struct txs_linksel *ls = mk(spec, L, 4);
				unsigned id = si == 0 ? 0 : 3; /* staggered core 3 starts mid-round */
				struct txs_linksel_core *c = core(ls, id);
				unsigned N = pps[pi], runs = N >= 1000 ? 6 : 40;
				if (L == 1) { /* one link: one endless run */
					for (unsigned i = 0; i < runs * N; i++)
						assert_int_equal(txs_linksel_select(c, NULL), 0);
					txs_linksel_destroy(ls);
					continue;
				}
				int cur = txs_linksel_select(c, NULL);
				unsigned len = 1, nruns = 0;
				bool first = true;
				while (nruns < runs) {
					int l = txs_linksel_select(c, NULL);
					if (l == cur) {
						len++;
						assert_true(len <= N);
						continue;
					}
					if (first && si == 2)
						assert_true(len >= 1 && len <= N);
					else
						assert_int_equal(len, N);
					assert_int_equal(l, (cur + 1) % (int)L);
					first = false;
					cur = l;
					len = 1;
					nruns++;
				}
				txs_linksel_destroy(ls);
			}
}

/* Staggered offsets: core k of K starts at (k % L) * N + (k / L) * N / ceil(K / L). */
static void rr_staggered_offsets(void **st)
{
	(void)st;
	struct txs_linksel *ls = mk("balance-rr,packets_per_slave=4,scope=staggered", 4, 8);
	/* 8 cores, 4 links: core k starts on link k % 4; cores 4..7 half-way
	 * through their run (2 of 4 packets left) */
	for (unsigned k = 0; k < 8; k++) {
		struct txs_linksel_core *c = core(ls, k);
		unsigned first = (unsigned)txs_linksel_select(c, NULL);
		assert_int_equal(first, k % 4);
		unsigned left = 1;
		while ((unsigned)txs_linksel_select(c, NULL) == first)
			left++;
		assert_int_equal(left, k < 4 ? 4 : 2);
	}
	txs_linksel_destroy(ls);
	ls = mk("balance-rr,packets_per_slave=4,scope=percore", 4, 8);
	for (unsigned k = 0; k < 8; k++)
		assert_int_equal(txs_linksel_select(core(ls, k), NULL), 0);
	txs_linksel_destroy(ls);
}

/* ---- lock-step imbalance -------------------------------------------------
 * Set-up: T simulated cores advance in lock-step: in step s, core 0, 1, ...,
 * T-1 each select once, in that order (the order a link's queue would see
 * them if the cores really were in step). The aggregate sequence is cut into
 * windows of 1000 packets; in each window we take max/min of the per-link
 * counts; the test looks at the worst window.
 *   percore: every core starts at 0, so in every step all T cores pick the
 *   same link: the links take turns receiving T*N packets in a row, and a
 *   1000-packet window that does not hold a whole number of such turns per
 *   link is lopsided (below: 10% off, not within 5%).
 *   staggered: the cores start spread over one round, link-major (core k on
 *   link k mod L), so in every step each run of L consecutive cores covers
 *   all L links: every window is even to within one packet per link.
 *   shared: one counter hands out consecutive values: even for N = 1 (this is
 *   the kernel before 2021; what it paid for it is in bench/linksel.c); for
 *   N > 1 the aggregate has runs of N per link, uneven over such windows.
 * The worst-window ratio is returned. */
static double lockstep_worst(const char *spec, unsigned T, unsigned L, unsigned steps)
{
	struct txs_linksel *ls = mk(spec, L, T);
	struct txs_linksel_core *c[64];
	for (unsigned k = 0; k < T; k++)
		c[k] = core(ls, k);
	uint64_t win[TXS_MAX_LINKS] = { 0 };
	unsigned in_win = 0;
	double worst = 1.0;
	for (unsigned s = 0; s < steps; s++)
		for (unsigned k = 0; k < T; k++) {
			win[txs_linksel_select(c[k], NULL)]++;
			if (++in_win == 1000) {
				uint64_t mx = 0, mn = UINT64_MAX;
				for (unsigned l = 0; l < L; l++) {
					mx = win[l] > mx ? win[l] : mx;
					mn = win[l] < mn ? win[l] : mn;
				}
				double r = mn ? (double)mx / (double)mn : 1e9;
				worst = r > worst ? r : worst;
				memset(win, 0, sizeof(win));
				in_win = 0;
			}
		}
	txs_linksel_destroy(ls);
	return worst;
}

static void lockstep_imbalance(void **st)
{
	(void)st;
	/* {T cores, L links, packets_per_slave} */
	static const unsigned cfg[][3] = { { 64, 4, 1 }, { 8, 4, 32 }, { 16, 2, 64 }, { 32, 4, 8 } };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(cfg); i++) {
		unsigned T = cfg[i][0], L = cfg[i][1], N = cfg[i][2];
		char sp[3][96];
		double r[3];
		for (unsigned s = 0; s < 3; s++) {
			snprintf(sp[s], sizeof(sp[s]), "balance-rr,packets_per_slave=%u,scope=%s", N, scopes[s]);
			r[s] = lockstep_worst(sp[s], T, L, 200000 / T);
		}
		fprintf(stderr, "lock-step T=%u L=%u N=%u: worst window max/min shared %.3f percore %.3f staggered %.3f\n",
			T, L, N, r[0], r[1], r[2]);
		assert_true(r[2] <= 1.05); /* staggered: within 5% */
		assert_true(r[1] > 1.05);  /* percore: not */
		if (N == 1)
			assert_true(r[0] <= 1.05); /* shared, N = 1: consecutive values, even */
		/* shared, N > 1: the aggregate stream itself has runs of N per link,
		 * so a 1000-packet window holding a partial round is off too (printed) */
	}
}

/* ---- balance-xor -------------------------------------------------------- */
/* Hand-computed from the bonding.rst formulas (words read from the headers as
 * stored, little-endian, as Linux on x86-64 does). Worked example, flow 0,
 * layer3+4 (198.18.0.1:40000 -> 198.18.0.2:5201 UDP):
 *   ports bytes 9c 40 14 51           -> 0x5114409c
 *   saddr c6 12 00 01 -> 0x010012c6, daddr c6 12 00 02 -> 0x020012c6
 *   0x5114409c ^ 0x010012c6 ^ 0x020012c6 = 0x5214409c
 *   ^ (>>16) -> 0x52141288; ^ (>>8) -> 0x5246069a; >>1 -> 0x2923034d
 *   4 links: 0x2923034d % 4 = 1; 3 links: 0; 2 links: 1.
 * layer2 for the same flow: 0x01 ^ 0x02 ^ 0x0800 = 0x0803 -> links 3 / 2 / 1.
 * layer2+3: 0x0803 ^ 0x010012c6 ^ 0x020012c6 = 0x03000803, ^>>16 0x03000b03,
 *   ^>>8 0x03030b08 -> 4 links: 0, 3 links: 1, 2 links: 0. */
struct xor_case {
	const char *name;
	uint8_t smac5, dmac5;
	int family;
	const char *sa, *da;
	uint16_t sport, dport;
	uint8_t proto;
	bool frag;
	uint32_t h[3]; /* layer2, layer2+3, layer3+4 */
};

static const struct xor_case xor_cases[] = {
	{ "v4 udp", 0x01, 0x02, AF_INET, "198.18.0.1", "198.18.0.2", 40000, 5201, 17, false,
	  { 0x00000803, 0x03030b08, 0x2923034d } },
	{ "v4 udp sport+1", 0x01, 0x02, AF_INET, "198.18.0.1", "198.18.0.2", 40001, 5201, 17, false,
	  { 0x00000803, 0x03030b08, 0x292303cd } },
	{ "v4 tcp", 0x0a, 0x0b, AF_INET, "198.18.1.7", "198.19.255.254", 12345, 80, 6, false,
	  { 0x00000801, 0xf9070e0f, 0x54abb7af } },
	{ "v6 udp", 0x01, 0x02, AF_INET6, "2001:2::1", "2001:2::2", 40000, 5201, 17, false,
	  { 0x000086de, 0x0303855b, 0x2923034d } },
	{ "v6 udp 2", 0x33, 0xfe, AF_INET6, "2001:2::1:abcd", "2001:2:0:ff::9", 53, 5353, 17, false,
	  { 0x00008610, 0x3b901707, 0x6936acac } },
	/* fragments and port-less protocols: layer3+4 drops the ports */
	{ "v4 fragment", 0x01, 0x02, AF_INET, "198.18.0.1", "198.18.0.2", 40000, 5201, 17, true,
	  { 0x00000803, 0x03030b08, 0x01818181 } },
	{ "v4 icmp", 0x01, 0x02, AF_INET, "198.18.0.1", "198.18.0.2", 0, 0, 1, false,
	  { 0x00000803, 0x03030b08, 0x01818181 } },
	/* not IP: every policy falls back to layer2 (type 0 here) */
	{ "non-ip", 0x01, 0x02, 0, NULL, NULL, 0, 0, 0, false, { 0x00000003, 0x00000003, 0x00000003 } },
};

static void xor_key(struct txs_flow_key *k, const struct xor_case *x)
{
	memset(k, 0, sizeof(*k));
	k->src_mac[0] = 0x02;
	k->dst_mac[0] = 0x02;
	k->src_mac[5] = x->smac5;
	k->dst_mac[5] = x->dmac5;
	k->family = x->family;
	if (x->sa) {
		assert_int_equal(inet_pton(x->family, x->sa, k->saddr), 1);
		assert_int_equal(inet_pton(x->family, x->da, k->daddr), 1);
	}
	k->sport = x->sport;
	k->dport = x->dport;
	k->proto = x->proto;
	k->fragment = x->frag;
}

static void xor_hand_computed(void **st)
{
	(void)st;
	static const char *const pol[3] = { "layer2", "layer2+3", "layer3+4" };
	static const enum txs_xmit_hash pe[3] = { TXS_HASH_LAYER2, TXS_HASH_LAYER23, TXS_HASH_LAYER34 };
	for (unsigned pi = 0; pi < 3; pi++)
		for (unsigned L = 1; L <= 8; L++) {
			char spec[64];
			snprintf(spec, sizeof(spec), "balance-xor,hash=%s", pol[pi]);
			struct txs_linksel *ls = mk(spec, L, 2);
			struct txs_linksel_core *c0 = core(ls, 0), *c1 = core(ls, 1);
			for (unsigned i = 0; i < TXS_ARRAY_SIZE(xor_cases); i++) {
				const struct xor_case *x = &xor_cases[i];
				struct txs_flow_key k;
				xor_key(&k, x);
				uint32_t h = txs_linksel_xor_hash(pe[pi], &k);
				if (h != x->h[pi]) {
					fprintf(stderr, "%s %s: hash 0x%08x, expected 0x%08x\n", x->name, pol[pi], h,
						x->h[pi]);
					fail();
				}
				txs_linksel_key_prepare(ls, &k);
				assert_int_equal(k.hash, x->h[pi]);
				int want = (int)(x->h[pi] % L);
				/* deterministic: every packet, every core */
				for (int r = 0; r < 100; r++) {
					assert_int_equal(txs_linksel_select(c0, &k), want);
					assert_int_equal(txs_linksel_select(c1, &k), want);
				}
			}
			txs_linksel_destroy(ls);
		}
	/* the worked example above, spelled out */
	struct txs_flow_key k;
	xor_key(&k, &xor_cases[0]);
	struct txs_linksel *ls = mk("balance-xor,hash=layer3+4", 4, 1);
	txs_linksel_key_prepare(ls, &k);
	assert_int_equal(txs_linksel_select(core(ls, 0), &k), 1);
	txs_linksel_destroy(ls);
}

/* With a link down a flow maps over the up links (hash % n_up, in link
 * order: the kernel's usable-slaves array); it never lands on the down link
 * and does not move while the up set stays the same; restoring the link
 * restores the original mapping. */
static void xor_failover(void **st)
{
	(void)st;
	struct txs_linksel *ls = mk("balance-xor,hash=layer3+4", 4, 1);
	struct txs_linksel_core *c = core(ls, 0);
	struct txs_flow_key k[64];
	int before[64];
	for (unsigned f = 0; f < 64; f++) {
		key_v4(ls, &k[f], (uint16_t)(40000 + 7 * f));
		before[f] = txs_linksel_select(c, &k[f]);
		assert_int_equal(before[f], (int)(k[f].hash % 4));
	}
	txs_linksel_set_link(ls, 2, false);
	static const int up3[3] = { 0, 1, 3 };
	for (int r = 0; r < 3; r++)
		for (unsigned f = 0; f < 64; f++)
			assert_int_equal(txs_linksel_select(c, &k[f]), up3[k[f].hash % 3]);
	txs_linksel_set_link(ls, 2, true);
	for (unsigned f = 0; f < 64; f++)
		assert_int_equal(txs_linksel_select(c, &k[f]), before[f]);
	txs_linksel_destroy(ls);
}

/* ---- active-backup, broadcast ------------------------------------------ */
static void active_backup_failover(void **st)
{
	(void)st;
	struct txs_linksel *ls = mk("active-backup,primary=2", 4, 2);
	struct txs_linksel_core *c = core(ls, 0), *d = core(ls, 1);
	for (int i = 0; i < 100; i++)
		assert_int_equal(txs_linksel_select(c, NULL), 2);
	txs_linksel_set_link(ls, 2, false); /* primary fails: next up after it */
	assert_int_equal(txs_linksel_select(c, NULL), 3);
	assert_int_equal(txs_linksel_select(d, NULL), 3);
	txs_linksel_set_link(ls, 3, false); /* that fails too: wraps to 0 */
	assert_int_equal(txs_linksel_select(c, NULL), 0);
	txs_linksel_set_link(ls, 0, false);
	assert_int_equal(txs_linksel_select(c, NULL), 1);
	txs_linksel_set_link(ls, 3, true); /* 3 back, primary still down: next after primary */
	assert_int_equal(txs_linksel_select(c, NULL), 3);
	txs_linksel_set_link(ls, 2, true); /* primary back: primary */
	assert_int_equal(txs_linksel_select(c, NULL), 2);
	assert_int_equal(txs_linksel_select(d, NULL), 2);
	for (unsigned l = 0; l < 4; l++)
		txs_linksel_set_link(ls, l, false);
	assert_int_equal(txs_linksel_select(c, NULL), -ENETDOWN);
	txs_linksel_destroy(ls);
}

static void broadcast_masks(void **st)
{
	(void)st;
	struct txs_linksel *ls = mk("broadcast", 5, 1);
	struct txs_linksel_core *c = core(ls, 0);
	uint64_t s = 3;
	uint32_t up = 0x1f;
	for (int i = 0; i < 2000; i++) {
		if (i % 7 == 0) {
			unsigned l = (unsigned)(t_rand(&s) % 5);
			bool u = t_rand(&s) % 3 != 0;
			txs_linksel_set_link(ls, l, u);
			up = u ? up | 1u << l : up & ~(1u << l);
		}
		uint32_t mask = 0;
		int n = txs_linksel_select_mask(c, NULL, &mask);
		if (!up) {
			assert_int_equal(n, -ENETDOWN);
			continue;
		}
		assert_int_equal(n, __builtin_popcount(up));
		assert_int_equal(mask, up);
		assert_int_equal(txs_linksel_select(c, NULL), __builtin_ctz(up));
	}
	txs_linksel_destroy(ls);
}

/* ---- wiring: the generator puts the selector's link on every frame ----- */
static void gen_run_rate(const char *bond, unsigned links, unsigned threads, uint64_t count, double pps,
			 uint64_t *per_link)
{
	struct txs_netdev *dev;
	char spec[64];
	snprintf(spec, sizeof(spec), "dummy:links=%u", links);
	struct txs_netdev_conf dc = { .max_queues = threads, .frame_size = 2048 };
	assert_int_equal(txs_netdev_open(&dev, spec, &dc, NULL, 0), 0);
	struct txs_linksel *ls = mk(bond, links, threads);
	struct txs_gen_conf gc = { 0 };
	txs_addr_parse(&gc.spec.src, "198.18.0.1");
	txs_addr_parse(&gc.spec.dst, "198.18.0.2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = 32;
	gc.spread_sport = true;
	gc.seed = 1;
	gc.linksel = ls;
	struct txs_engine_conf ec = { .n_workers = threads, .count = count, .rate_pps = pps, .dev = dev,
				      .gen = &txs_udp_gen_ops, .gen_conf = &gc };
	struct txs_engine *e = t_engine_done(&ec);
	txs_engine_destroy(e);
	for (unsigned l = 0; l < links; l++) {
		struct txs_link_counters lc;
		txs_netdev_link_stats(dev, l, &lc);
		per_link[l] = lc.packets;
	}
	txs_netdev_close(dev);
	txs_linksel_destroy(ls);
}

static void gen_run(const char *bond, unsigned links, unsigned threads, uint64_t count, uint64_t *per_link)
{
	gen_run_rate(bond, links, threads, count, 0, per_link);
}

static void gen_uses_linksel(void **st)
{
	(void)st;
	uint64_t pl[TXS_MAX_LINKS];
	gen_run("balance-rr", 4, 1, 4000, pl);
	for (unsigned l = 0; l < 4; l++)
		assert_int_equal(pl[l], 1000);
	gen_run("balance-rr,packets_per_slave=10,scope=percore", 3, 2, 6000, pl);
	for (unsigned l = 0; l < 3; l++)
		assert_int_equal(pl[l], 2000);
	gen_run("active-backup,primary=1", 3, 2, 5000, pl);
	assert_int_equal(pl[0], 0);
	assert_int_equal(pl[1], 5000);
	assert_int_equal(pl[2], 0);
	/* thread 0's flow is the worked example above: layer3+4, 4 links -> 1 */
	gen_run("balance-xor,hash=layer3+4", 4, 1, 3000, pl);
	assert_int_equal(pl[1], 3000);
	/* broadcast: each copy is a wire packet; -n counts copies */
	gen_run("broadcast", 4, 1, 4000, pl);
	for (unsigned l = 0; l < 4; l++)
		assert_int_equal(pl[l], 1000);
	gen_run("broadcast", 3, 2, 1001, pl); /* quota not a multiple of the copies */
	assert_int_equal(pl[0] + pl[1] + pl[2], 1001);
	assert_true(pl[0] >= pl[1] && pl[1] >= pl[2] && pl[0] - pl[2] <= 2);
	/* paced: the engine asks for a frame or two at a time; copies carry over */
	gen_run_rate("broadcast", 5, 1, 1000, 500000, pl);
	for (unsigned l = 0; l < 5; l++)
		assert_int_equal(pl[l], 200);
	gen_run("broadcast", 7, 1, 7 * 1000, pl); /* 32-frame bursts, 7 links */
	for (unsigned l = 0; l < 7; l++)
		assert_int_equal(pl[l], 1000);
}

T_MAIN(cmocka_unit_test(fastdiv_exact),
       cmocka_unit_test(parse_good),
       cmocka_unit_test(parse_bad),
       cmocka_unit_test(every_mode_basics),
       cmocka_unit_test(every_mode_failover_loses_nothing),
       cmocka_unit_test(rr_distribution),
       cmocka_unit_test(rr_runs_exact),
       cmocka_unit_test(rr_staggered_offsets),
       cmocka_unit_test(lockstep_imbalance),
       cmocka_unit_test(xor_hand_computed),
       cmocka_unit_test(xor_failover),
       cmocka_unit_test(active_backup_failover),
       cmocka_unit_test(broadcast_masks),
       cmocka_unit_test(gen_uses_linksel))
