/* SPDX-License-Identifier: MIT */
/* Zeroed memory on its own cache lines: per-core and per-queue state that
 * threads write apart. Private to the library. */
#ifndef TXS_COMMON_ALLOC_H
#define TXS_COMMON_ALLOC_H
#include <stdlib.h>
#include <string.h>
#include <txscale/common.h>

/* size bytes (rounded up to whole lines, as C11 aligned_alloc wants),
 * zeroed, at a line boundary; NULL when out of memory. free() it. */
static inline void *txs_zalloc_line(size_t size)
{
	size_t sz = (size + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1);
	void *p = aligned_alloc(TXS_CACHE_LINE, sz ? sz : TXS_CACHE_LINE);
	if (p)
		memset(p, 0, sz);
	return p;
}
#endif
