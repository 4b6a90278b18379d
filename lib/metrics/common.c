/* SPDX-License-Identifier: MIT */
/* Families every collector writes: run state, run time, the current rate. */
#include <stdio.h>
#include "metrics_priv.h"

void txs_metrics_rate_tick(struct rate_tick *r, double elapsed, uint64_t dgrams, uint64_t bytes)
{
	if (!r->have) {
		*r = (struct rate_tick){ .t = elapsed, .dgrams = dgrams, .bytes = bytes, .have = true };
		return;
	}
	double dt = elapsed - r->t;
	if (dt < RATE_PERIOD_S)
		return;
	/* counters from relaxed reads never run backwards here: a sum of
	 * single-writer counters read in order only grows */
	r->pps = dgrams >= r->dgrams ? (double)(dgrams - r->dgrams) / dt : 0;
	r->Bps = bytes >= r->bytes ? (double)(bytes - r->bytes) / dt : 0;
	r->t = elapsed;
	r->dgrams = dgrams;
	r->bytes = bytes;
}

void txs_metrics_rate_families(struct txs_prom *p, const char *kind, const struct rate_tick *r, bool finished)
{
	char n1[64], n2[64];
	snprintf(n1, sizeof(n1), "txscale_%s_datagrams_per_second", kind);
	snprintf(n2, sizeof(n2), "txscale_%s_bytes_per_second", kind);
	txs_prom_family(p, n1, TXS_PROM_GAUGE, "Datagrams per second over the last second or more (0 once finished).");
	txs_prom_family(p, n2, TXS_PROM_GAUGE, "Bytes per second (UDP payload for recv, frames for send) over the "
					       "last second or more (0 once finished).");
	txs_prom_dbl(p, n1, NULL, 0, finished ? 0 : r->pps);
	txs_prom_dbl(p, n2, NULL, 0, finished ? 0 : r->Bps);
}

void txs_metrics_state_family(struct txs_prom *p, const char *kind, enum txs_metrics_state st, double elapsed)
{
	txs_prom_family(p, "txscale_run_state", TXS_PROM_GAUGE,
			"The run's state: 1 for the current one (running, finished), 0 for the other.");
	txs_prom_u64(p, "txscale_run_state", (struct txs_prom_label[]){ { "kind", kind }, { "state", "running" } }, 2,
		     st == TXS_METRICS_RUNNING);
	txs_prom_u64(p, "txscale_run_state", (struct txs_prom_label[]){ { "kind", kind }, { "state", "finished" } },
		     2, st == TXS_METRICS_FINISHED);
	txs_prom_family(p, "txscale_run_seconds", TXS_PROM_GAUGE, "Seconds since the run started (its length once finished).");
	txs_prom_dbl(p, "txscale_run_seconds", (struct txs_prom_label[]){ { "kind", kind } }, 1, elapsed);
}
