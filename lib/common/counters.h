/* SPDX-License-Identifier: MIT */
/* Structs made only of uint64_t counters (txs_rx_live, txs_udp_stats, ...):
 * a relaxed snapshot of one that its owning thread adds to, and the sum of
 * one into another, field by field. Private to the library. */
#ifndef TXS_COMMON_COUNTERS_H
#define TXS_COMMON_COUNTERS_H
#include <stddef.h>
#include <stdint.h>

/* dst = src, each counter read relaxed (TXS_STAT_READ); size: of the struct. */
static inline void txs_counters_read(void *dst, const void *src, size_t size)
{
	const uint64_t *s = src;
	uint64_t *d = dst;
	for (size_t i = 0; i < size / sizeof(uint64_t); i++)
		d[i] = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
}

/* dst += src, counter by counter (a plain sum: the caller's copies). */
static inline void txs_counters_add(void *dst, const void *src, size_t size)
{
	const uint64_t *s = src;
	uint64_t *d = dst;
	for (size_t i = 0; i < size / sizeof(uint64_t); i++)
		d[i] += s[i];
}

/* TXS_COUNTERS(read, dst, src), TXS_COUNTERS(add, dst, src): the above for
 * two structs of one counters-only type, sizes checked at compile time. */
#define TXS_COUNTERS(op, dst, src)                                                                      \
	do {                                                                                            \
		_Static_assert(sizeof(*(dst)) == sizeof(*(src)) && sizeof(*(dst)) % sizeof(uint64_t) == 0, \
			       "counters only");                                                        \
		txs_counters_##op((dst), (src), sizeof(*(dst)));                                        \
	} while (0)
#endif
