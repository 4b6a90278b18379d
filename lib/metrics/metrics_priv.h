/* SPDX-License-Identifier: MIT */
/* Private to lib/metrics: what the send and receive collectors share. */
#ifndef TXS_METRICS_PRIV_H
#define TXS_METRICS_PRIV_H
#include <txscale/metrics.h>

/* The current rate: datagrams and bytes per second over the last period of
 * at least RATE_PERIOD_S between two ticks. */
#define RATE_PERIOD_S 1.0
struct rate_tick {
	double t;            /* elapsed at the last sample */
	uint64_t dgrams, bytes;
	double pps, Bps;
	bool have;
};
void txs_metrics_rate_tick(struct rate_tick *r, double elapsed, uint64_t dgrams, uint64_t bytes);
/* txscale_KIND_datagrams_per_second and _bytes_per_second (0 once finished) */
void txs_metrics_rate_families(struct txs_prom *p, const char *kind, const struct rate_tick *r, bool finished);
/* txscale_run_state{kind,state} (1 for the current state, 0 for the other)
 * and txscale_run_seconds{kind} */
void txs_metrics_state_family(struct txs_prom *p, const char *kind, enum txs_metrics_state st, double elapsed);
#endif
