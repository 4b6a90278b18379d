/* SPDX-License-Identifier: MIT */
/* Helpers every module uses: the clocks (txscale/common.h) and the one-line
 * error formatter (common/err.h). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <txscale/common.h>
#include "err.h"

TXS_API uint64_t txs_now_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

TXS_API uint64_t txs_now_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int txs_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}
