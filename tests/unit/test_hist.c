/* SPDX-License-Identifier: MIT */
/* lib/stats histogram: percentiles against sorted reference data (seeded
 * random data of several shapes; never below the true value, at most 1/32
 * above it; exact below 32), bucket boundaries over the whole 64-bit range,
 * merge equals adding everything to one histogram. */
#include <math.h>
#include <string.h>
#include <txscale/stats.h>
#include "test_util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void hist_percentiles(void **st)
{
	(void)st;
	const double qs[] = { 0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0 };
	uint64_t seed = 7;
	for (int dist = 0; dist < 4; dist++) {
		const unsigned n = 100000;
		uint64_t *v = malloc(n * sizeof(*v));
		struct txs_hist *h = malloc(sizeof(*h)), *h1 = malloc(sizeof(*h1)), *h2 = malloc(sizeof(*h2));
		txs_hist_init(h);
		txs_hist_init(h1);
		txs_hist_init(h2);
		for (unsigned i = 0; i < n; i++) {
			uint64_t r = t_rand(&seed);
			switch (dist) {
			case 0: v[i] = r % 64; break;                            /* small: exact */
			case 1: v[i] = 10000 + r % 1000000; break;               /* uniform */
			case 2: v[i] = r >> (r % 64); break;                     /* log-spread, full 64-bit range */
			default: v[i] = (uint64_t)(5000 * -log(((r >> 11) + 1) * 0x1p-53)) + 1; break; /* exponential */
			}
			txs_hist_add(h, v[i]);
			txs_hist_add(i % 2 ? h1 : h2, v[i]);
		}
		txs_hist_merge(h1, h2);
		qsort(v, n, sizeof(*v), cmp_u64);
		assert_int_equal(h->count, n);
		assert_int_equal(h->min, v[0]);
		assert_int_equal(h->max, v[n - 1]);
		for (size_t k = 0; k < TXS_ARRAY_SIZE(qs); k++) {
			uint64_t rank = (uint64_t)ceil(qs[k] * n);
			if (rank < 1)
				rank = 1;
			uint64_t ref = v[rank - 1], got = txs_hist_quantile(h, qs[k]);
			/* never below the true value, at most 1/32 above it */
			if (got < ref || got - ref > ref / 32)
				fail_msg("dist %d q %g: got %llu, sorted reference %llu", dist, qs[k],
					 (unsigned long long)got, (unsigned long long)ref);
			if (dist == 0)
				assert_int_equal(got, ref);
			assert_int_equal(txs_hist_quantile(h1, qs[k]), got);
		}
		free(v);
		free(h);
		free(h1);
		free(h2);
	}
	struct txs_hist e;
	txs_hist_init(&e);
	assert_int_equal(txs_hist_quantile(&e, 0.5), 0);
	txs_hist_add(&e, UINT64_MAX);
	assert_true(txs_hist_quantile(&e, 0.5) == UINT64_MAX);
}


/* Every bucket: a value's bucket upper bound (what quantiles return) lies in
 * [v, v + v/32], and buckets are monotonic in v. */
static void hist_buckets(void **st)
{
	(void)st;
	for (unsigned b = 0; b < 64; b++)
		for (int d = -2; d <= 2; d++) {
			uint64_t base = b == 0 ? 0 : (uint64_t)1 << b;
			if (d < 0 && base < 2)
				continue;
			uint64_t v = base + (uint64_t)(int64_t)d;
			if (d > 0 && b == 63)
				v = UINT64_MAX - (uint64_t)(2 - d);
			unsigned i = txs_hist_idx(v);
			assert_true(i < TXS_HIST_BUCKETS);
			struct txs_hist h;
			txs_hist_init(&h);
			txs_hist_add(&h, v);
			txs_hist_add(&h, UINT64_MAX);
			uint64_t q = txs_hist_quantile(&h, 0.5);
			if (q < v || q - v > v / 32)
				fail_msg("v %llu: quantile %llu", (unsigned long long)v, (unsigned long long)q);
		}
	uint64_t seed = 3;
	unsigned last = 0;
	uint64_t lastv = 0;
	for (int k = 0; k < 100000; k++) {
		uint64_t v = lastv + (t_rand(&seed) >> (t_rand(&seed) % 64)) % 1000000007ull;
		if (v < lastv)
			break;
		unsigned i = txs_hist_idx(v);
		assert_true(i >= last);
		last = i;
		lastv = v;
	}
	/* empty and merged-empty */
	struct txs_hist a, b;
	txs_hist_init(&a);
	txs_hist_init(&b);
	txs_hist_merge(&a, &b);
	assert_int_equal(a.count, 0);
	assert_int_equal(txs_hist_quantile(&a, 0.99), 0);
}

/* The sum behind the mean cannot wrap: 16 samples of 2^62 ns sum to 2^66
 * (a 64-bit sum read 0 and a mean of 0); merged histograms too. */
static void hist_sum_no_wrap(void **st)
{
	(void)st;
	struct txs_hist a, b;
	txs_hist_init(&a);
	txs_hist_init(&b);
	for (int i = 0; i < 16; i++) {
		txs_hist_add(&a, 1ull << 62);
		txs_hist_add(&b, 1ull << 62);
	}
	/* 2^66: past 64 bits, carried into the high word */
	assert_true(a.sum_hi == 4 && a.sum_lo == 0);
	assert_true(txs_hist_sum(&a) / (double)a.count == 0x1p62);
	txs_hist_merge(&a, &b);
	assert_int_equal(a.count, 32);
	assert_true(a.sum_hi == 8 && a.sum_lo == 0);
	/* the carry of a merge whose low words overflow together */
	txs_hist_init(&b);
	txs_hist_add(&b, UINT64_MAX);
	txs_hist_add(&a, UINT64_MAX);
	txs_hist_merge(&a, &b);
	assert_true(a.sum_hi == 9 && a.sum_lo == UINT64_MAX - 1);
}

T_MAIN(cmocka_unit_test(hist_percentiles),
       cmocka_unit_test(hist_buckets),
       cmocka_unit_test(hist_sum_no_wrap))
