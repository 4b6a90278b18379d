/* SPDX-License-Identifier: MIT */
/* txscale statistics: per-core counters, interval/summary reports in text
 * (sar/iperf3 style) and JSON lines (iperf3 --json-stream style), a JSON
 * writer and reader, and a log-bucket histogram. Schema: docs/json-schema.md.
 *
 * Concurrency: a struct txs_core_stats is written by its owning worker only
 * (TXS_STAT_ADD) and read by anyone (TXS_STAT_READ). Reporters and JSON
 * writers belong to one thread (the main thread). */
#ifndef TXSCALE_STATS_H
#define TXSCALE_STATS_H

#include <stdio.h>
#include <txscale/common.h>

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

/* ---- JSON writer: one object per line, commas handled ---- */
struct txs_json {
	FILE *f;
	int depth;
	bool need_comma[32];
};
TXS_API void txs_json_begin(struct txs_json *j, FILE *f);       /* starts "{" */
TXS_API void txs_json_end(struct txs_json *j);                  /* closes "}\n" and flushes */
TXS_API void txs_json_key(struct txs_json *j, const char *key); /* emits "key": */
TXS_API void txs_json_obj_open(struct txs_json *j, const char *key); /* key may be NULL in arrays */
TXS_API void txs_json_obj_close(struct txs_json *j);
TXS_API void txs_json_arr_open(struct txs_json *j, const char *key);
TXS_API void txs_json_arr_close(struct txs_json *j);
TXS_API void txs_json_u64(struct txs_json *j, const char *key, uint64_t v);
TXS_API void txs_json_i64(struct txs_json *j, const char *key, int64_t v);
TXS_API void txs_json_dbl(struct txs_json *j, const char *key, double v);
TXS_API void txs_json_str(struct txs_json *j, const char *key, const char *v);
TXS_API void txs_json_bool(struct txs_json *j, const char *key, bool v);

/* ---- JSON reader: values by path in one JSON object ----
 * Pure functions over caller memory (no state, no allocation, no locale
 * other than strtod's): callable from any thread at once.
 *
 * Input: json[0..n) holds one JSON object (RFC 8259 syntax, strictly: no
 * trailing commas, leading zeros, bare words, control characters or bad
 * escapes in strings), optionally surrounded by whitespace and nothing else.
 * Nothing at or past json + n is read; json need not be NUL-terminated.
 * No value lies more than TXS_JSON_MAX_DEPTH levels below the top object
 * (whose members are at level 1).
 * Anything else (truncated, trailing bytes, too deep, a top-level value that
 * is not an object) is -EINVAL for every lookup, found or not.
 *
 * Path: segments joined by '.', e.g. "kernel_drops.udp.RcvbufErrors" or
 * "threads.3.packets". In an object a segment names a member, compared with
 * the raw text between the quotes (escapes are not decoded; names holding a
 * '.' cannot be addressed); if a name repeats, the last member counts. In an
 * array a segment is an element index in plain decimal ("0", "12"; not
 * "012"). An empty segment names the member "". */
#define TXS_JSON_MAX_DEPTH 32
/* The value at path: *val and *len give its raw text inside json (a string
 * keeps its quotes and escapes). 0, -ENOENT (path absent), -EINVAL (malformed). */
TXS_API int txs_json_find(const char *json, size_t n, const char *path, const char **val, size_t *len);
/* Typed lookups: 0, -ENOENT (absent), -EINVAL (malformed, or another type:
 * null, a string, u64 given a negative/fractional/exponent/too large number). */
TXS_API int txs_json_get_u64(const char *json, size_t n, const char *path, uint64_t *out);
TXS_API int txs_json_get_dbl(const char *json, size_t n, const char *path, double *out);
TXS_API int txs_json_get_bool(const char *json, size_t n, const char *path, bool *out);
/* Number of elements of the array, or members of the object, at path:
 * 0, -ENOENT, -EINVAL (malformed, or a scalar there). */
TXS_API int txs_json_count(const char *json, size_t n, const char *path, size_t *count);
/* The idx-th (from 0) element of the array, or member value of the object,
 * at path, as txs_json_find gives it; an item that is an object can be
 * looked up in again with its own (val, len). 0, -ENOENT (path absent or
 * idx >= count), -EINVAL (malformed, or a scalar there). */
TXS_API int txs_json_item(const char *json, size_t n, const char *path, size_t idx, const char **val,
			  size_t *len);

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
	/* 128 bits: 64-bit nanoseconds wrap after ~1.8e10 samples of 1 ms
	 * (half an hour of one flow at 10 Mpps), and the mean with them */
	__extension__ unsigned __int128 sum;
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
/* txs_hist_add for hot paths (same result, inlined). */
static inline void txs_hist_add_fast(struct txs_hist *h, uint64_t v)
{
	h->b[txs_hist_idx(v)]++;
	h->count++;
	h->sum += v;
	if (TXS_UNLIKELY(v < h->min))
		h->min = v;
	if (TXS_UNLIKELY(v > h->max))
		h->max = v;
}
TXS_API void txs_hist_merge(struct txs_hist *dst, const struct txs_hist *src);
/* Value at quantile q (0..1): an upper bound of the bucket holding it,
 * clamped to max; exact for values < 2^TXS_HIST_SUB_BITS. */
TXS_API uint64_t txs_hist_quantile(const struct txs_hist *h, double q);

#ifdef __cplusplus
}
#endif
#endif
