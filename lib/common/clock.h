/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC in seconds, for the deadlines of control sessions, child
 * processes and the server (a per-packet path reads txs_now_mono_ns or the
 * TSC). Not public. */
#ifndef TXS_COMMON_CLOCK_H
#define TXS_COMMON_CLOCK_H
#include <txscale/common.h>

static inline double txs_mono_s(void)
{
	return (double)txs_now_mono_ns() / 1e9;
}
#endif
