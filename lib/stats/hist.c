/* SPDX-License-Identifier: MIT */
/* Log-bucket histogram: 32 linear sub-buckets per power of two. */
#include <math.h>
#include <string.h>
#include <txscale/stats.h>

#define SUB (1u << TXS_HIST_SUB_BITS)

static uint64_t upper_of(unsigned idx)
{
	unsigned e = idx / SUB, sub = idx % SUB;
	if (e == 0)
		return sub;
	uint64_t lower = (uint64_t)(SUB + sub) << (e - 1);
	return lower + ((uint64_t)1 << (e - 1)) - 1;
}

TXS_API void txs_hist_init(struct txs_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

TXS_API void txs_hist_add(struct txs_hist *h, uint64_t v)
{
	txs_hist_add_fast(h, v);
}

TXS_API void txs_hist_merge(struct txs_hist *d, const struct txs_hist *s)
{
	for (unsigned i = 0; i < TXS_HIST_BUCKETS; i++)
		d->b[i] += s->b[i];
	d->count += s->count;
	d->sum_hi += s->sum_hi + __builtin_add_overflow(d->sum_lo, s->sum_lo, &d->sum_lo);
	if (s->min < d->min)
		d->min = s->min;
	if (s->max > d->max)
		d->max = s->max;
}

TXS_API uint64_t txs_hist_quantile(const struct txs_hist *h, double q)
{
	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	uint64_t rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	uint64_t acc = 0;
	for (unsigned i = 0; i < TXS_HIST_BUCKETS; i++) {
		acc += h->b[i];
		if (acc >= rank) {
			uint64_t u = upper_of(i);
			if (u > h->max)
				u = h->max;
			if (u < h->min)
				u = h->min;
			return u;
		}
	}
	return h->max;
}
