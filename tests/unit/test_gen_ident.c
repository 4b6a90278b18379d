/* SPDX-License-Identifier: MIT */
/* The generator (lib/udp/gen.c) takes its IPv4 IDs from lib/ident when the
 * caller passes an allocator: frames are parsed back and their IDs checked,
 * for every strategy (one test body), two workers sending to one
 * destination, and for the df_zero option. */
#include <arpa/inet.h>
#include <string.h>
#include <txscale/txscale.h>
#include "ident/ident_priv.h"
#include "test_util.h"

enum { N = 200, FRAME = 256 };

struct fake {
	struct txs_netdev dev;
	struct txs_txq q;
	struct txs_worker w;
	uint8_t frames[N][FRAME];
	struct txs_pktbuf b[N];
};

static struct txs_gen_conf mkconf(struct txs_ident *inst, bool df)
{
	struct txs_gen_conf gc = { 0 };
	assert_int_equal(txs_addr_parse(&gc.spec.src, "198.18.0.1"), 0);
	assert_int_equal(txs_addr_parse(&gc.spec.dst, "198.18.0.2"), 0);
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = 16;
	gc.spec.ttl = 64;
	gc.spec.df = df;
	gc.spread_sport = true;
	gc.seed = 9;
	gc.ident_inst = inst;
	gc.ident = inst ? txs_ident_name(inst) : NULL;
	return gc;
}

static void worker_init(struct fake *f, unsigned k, struct txs_gen_conf *gc)
{
	memset(f, 0, sizeof(*f));
	f->dev.n_links = 1;
	f->q.dev = &f->dev;
	f->w.id = k;
	f->w.txq = &f->q;
	assert_int_equal(txs_udp_gen_ops.init(&f->w, gc), 0);
}

/* fill n frames and return their IPv4 IDs */
static void fill_ids(struct fake *f, unsigned n, uint16_t *ids)
{
	for (unsigned i = 0; i < n; i++)
		f->b[i] = (struct txs_pktbuf){ .data = f->frames[i], .cap = FRAME };
	assert_int_equal(txs_udp_gen_ops.fill(&f->w, f->b, n, 1), n);
	for (unsigned i = 0; i < n; i++) {
		struct txs_pkt_info pi;
		assert_int_equal(txs_parse(f->b[i].data, f->b[i].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
		ids[i] = pi.ip_id;
	}
}

static void ids_from_allocator(void **st)
{
	(void)st;
	static uint32_t clk = 5;
	__atomic_store_n(&ident_fake_ticks, &clk, __ATOMIC_RELAXED);
	static struct fake f[2];
	unsigned n;
	const char *const *names = txs_ident_strategies(&n);
	for (unsigned s = 0; s < n; s++) {
		struct txs_ident_conf ic = { .strategy = names[s], .max_cores = 2, .seed = 4 };
		struct txs_ident *inst;
		assert_int_equal(txs_ident_create(&inst, &ic), 0);
		struct txs_gen_conf gc = mkconf(inst, false);
		worker_init(&f[0], 0, &gc);
		worker_init(&f[1], 1, &gc);
		uint32_t hash = txs_ident_hash4(inst, inet_addr("198.18.0.2"), inet_addr("198.18.0.1"), 17);
		uint32_t p0 = txs_ident_bucket_position(inst, hash);
		static uint8_t seen[65536];
		memset(seen, 0, sizeof(seen));
		uint16_t ids[2][N];
		for (int round = 0; round < 4; round++) {
			for (unsigned k = 0; k < 2; k++) {
				fill_ids(&f[k], N / 4, ids[k]);
				for (unsigned i = 0; i < N / 4; i++) {
					/* a burst of one worker alone on the bucket: consecutive,
					 * except where a lease or a segment ends */
					if (i && !strstr("lease percpu-segment", names[s]))
						assert_int_equal(ids[k][i], (uint16_t)(ids[k][i - 1] + 1));
					if (strcmp(names[s], "percpu-segment") == 0)
						assert_true(ids[k][i] / 1024 == k);
					if (strcmp(names[s], "flow") != 0) {
						/* one destination, two workers: no ID twice */
						assert_int_equal(seen[ids[k][i]], 0);
						seen[ids[k][i]] = 1;
					}
				}
			}
		}
		/* shared strategies: the bucket of 198.18.0.1 -> 198.18.0.2 moved */
		if (txs_ident_bucket_position(inst, hash) != 0)
			assert_int_not_equal(txs_ident_bucket_position(inst, hash), p0);
		txs_udp_gen_ops.fini(&f[0].w);
		txs_udp_gen_ops.fini(&f[1].w);
		txs_ident_destroy(inst);
	}
	__atomic_store_n(&ident_fake_ticks, NULL, __ATOMIC_RELAXED);
}

static void df_zero_option(void **st)
{
	(void)st;
	static struct fake f;
	uint16_t ids[N];
	for (int df = 0; df < 2; df++)
		for (int dz = 0; dz < 2; dz++) {
			struct txs_ident_conf ic = { .strategy = "lease", .df_zero = dz, .seed = 4 };
			struct txs_ident *inst;
			assert_int_equal(txs_ident_create(&inst, &ic), 0);
			struct txs_gen_conf gc = mkconf(inst, df);
			worker_init(&f, 0, &gc);
			fill_ids(&f, 64, ids);
			unsigned zeros = 0;
			for (unsigned i = 0; i < 64; i++)
				zeros += ids[i] == 0;
			if (df && dz)
				assert_int_equal(zeros, 64);
			else
				assert_true(zeros <= 1);
			txs_udp_gen_ops.fini(&f.w);
			txs_ident_destroy(inst);
		}
}

/* without an allocator the generator keeps its own per-flow counter */
static void no_allocator(void **st)
{
	(void)st;
	static struct fake f;
	uint16_t ids[N];
	struct txs_gen_conf gc = mkconf(NULL, false);
	worker_init(&f, 0, &gc);
	fill_ids(&f, 32, ids);
	for (unsigned i = 1; i < 32; i++)
		assert_int_equal(ids[i], (uint16_t)(ids[i - 1] + 1));
	txs_udp_gen_ops.fini(&f.w);
}

T_MAIN(cmocka_unit_test(ids_from_allocator),
       cmocka_unit_test(df_zero_option),
       cmocka_unit_test(no_allocator))
