/* SPDX-License-Identifier: MIT */
/* txscale statistics: per-core counters, interval/summary reports in text
 * (sar/iperf3 style) and JSON lines (iperf3 --json-stream style, written
 * with txscale/json.h), and a log-bucket histogram. Schema:
 * docs/json-schema.md.
 *
 * Concurrency: a struct txs_core_stats is written by its owning worker only
 * (TXS_STAT_ADD) and read by anyone (TXS_STAT_READ). Reporters and JSON
 * writers belong to one thread (the main thread). */
#ifndef TXSCALE_STATS_H
#define TXSCALE_STATS_H

#include <stdio.h>
#include <txscale/common.h>
#include <txscale/json.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_core_stats {
	uint64_t packets;  /* wire packets accepted by the device (GSO: segments) */
	uint64_t bytes;    /* frame bytes of those */
	uint64_t drops;    /* built but not accepted (ring/socket full), after retries */
	uint64_t errors;   /* device errors other than full */
	uint64_t bursts;   /* send calls */
	uint64_t frames;   /* wire frames accepted by the device (IP fragments and GSO
			    * segments count singly); packets counts UDP datagrams */
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

/* A plain copy of counters, for arithmetic. */
struct txs_stat_row {
	uint64_t packets, bytes, drops, errors;
	uint64_t frames; /* wire frames (engine rows; 0 in device link rows) */
};

TXS_API void txs_core_stats_read(const struct txs_core_stats *s, struct txs_stat_row *out);
/* The sum of n rows, field by field. */
TXS_API struct txs_stat_row txs_stat_rows_sum(const struct txs_stat_row *r, unsigned n);

/* ---- interval / summary reporter for senders ---- */
struct txs_reporter {
	FILE *out;
	bool json;
	const char *kind;   /* "send" */
	unsigned n_threads;
	const int *cpus;    /* per thread, -1 = not pinned */
	unsigned n_links;   /* 0: no per-link columns */
	bool frames;        /* thread rows and sums also give "frames" (wire frames) */
	bool header_done;
};

/* One interval: per-thread deltas and per-link deltas (n_links rows). */
TXS_API void txs_report_interval(struct txs_reporter *r, double t0, double t1, const struct txs_stat_row *threads,
				 const struct txs_stat_row *links);
/* The final report over `seconds`. Returns nothing; JSON ends with one
 * {"type":"summary",...} line. extra, if set, adds fields to the summary. */
TXS_API void txs_report_summary(struct txs_reporter *r, double seconds, const struct txs_stat_row *threads,
				const struct txs_stat_row *links,
				void (*extra)(struct txs_json *j, void *arg), void *arg);

/* Human units: 12.35M, 987.6k. */
TXS_API const char *txs_fmt_si(double v, char *buf, size_t len);

/* ---- log-bucket histogram (HdrHistogram-like: 2^5 sub-buckets per power of 2,
 * relative error <= 1/32) for non-negative 64-bit values ---- */
#define TXS_HIST_SUB_BITS 5
#define TXS_HIST_BUCKETS ((64 - TXS_HIST_SUB_BITS + 1) << TXS_HIST_SUB_BITS)
struct txs_hist {
	uint64_t count, min, max;
	/* The sum as 128 bits, low and high words: 64-bit nanoseconds wrap
	 * after ~1.8e10 samples of 1 ms (half an hour of one flow at 10 Mpps),
	 * and the mean with them. Two words, not an __int128: ctypes, cffi and
	 * cgo cannot express its alignment, and the add is the same add/adc
	 * (txs_hist_add_fast). txs_hist_sum() reads it as a double. */
	uint64_t sum_lo, sum_hi;
	uint64_t b[TXS_HIST_BUCKETS];
};
TXS_API void txs_hist_init(struct txs_hist *h);
TXS_API void txs_hist_add(struct txs_hist *h, uint64_t v);
/* Bucket of v: values below 2^SUB_BITS have their own bucket; above, bucket
 * e*2^SUB_BITS + s holds [(2^SUB_BITS + s) << (e-1), (2^SUB_BITS + s + 1) << (e-1)). */
static inline unsigned txs_hist_idx(uint64_t v)
{
	if (v < (1u << TXS_HIST_SUB_BITS))
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v) - TXS_HIST_SUB_BITS + 1;
	return (e << TXS_HIST_SUB_BITS) + (unsigned)((v >> (e - 1)) & ((1u << TXS_HIST_SUB_BITS) - 1));
}
#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
/* txs_hist_add for hot paths (same result, inlined). */
static inline void txs_hist_add_fast(struct txs_hist *h, uint64_t v)
{
	h->b[txs_hist_idx(v)]++;
	h->count++;
	h->sum_hi += __builtin_add_overflow(h->sum_lo, v, &h->sum_lo);
	if (TXS_UNLIKELY(v < h->min))
		h->min = v;
	if (TXS_UNLIKELY(v > h->max))
		h->max = v;
}
#endif /* TXS_UNSTABLE_API */
/* The sum of the values added, as a double (2^64 sum_hi + sum_lo). */
static inline double txs_hist_sum(const struct txs_hist *h)
{
	return (double)h->sum_hi * 18446744073709551616.0 + (double)h->sum_lo;
}
TXS_API void txs_hist_merge(struct txs_hist *dst, const struct txs_hist *src);
/* Value at quantile q (0..1): an upper bound of the bucket holding it,
 * clamped to max; exact for values < 2^TXS_HIST_SUB_BITS. */
TXS_API uint64_t txs_hist_quantile(const struct txs_hist *h, double q);

#ifdef __cplusplus
}
#endif
#endif
