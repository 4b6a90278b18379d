/* SPDX-License-Identifier: MIT */
/* Private to lib/rx: outages of a flow (silences in arrival that end with
 * sequences missing) and its inter-arrival histogram, the median estimator
 * behind the automatic outage threshold (docs/recv.md, "Outages").
 *
 * Per datagram the hot path does one subtraction, one compare and one
 * histogram increment; everything else (a silence of at least the floor, a
 * late datagram filling an outage's gap) is out of line. */
#ifndef TXS_RX_OUTAGE_H
#define TXS_RX_OUTAGE_H
#include "rx_priv.h"

/* Inter-arrival histogram, the median estimator: one arrival in
 * RX_IA_SAMPLE (by the flow's arrival count) adds its gap to the previous
 * arrival; four bins per octave (2 mantissa bits: a bin spans 1/4 of its
 * lower bound, its midpoint is within 1/8 of any gap in it; bins are those
 * of gap + 4 ns). Counts are 32-bit and halved together when one
 * would reach UINT32_MAX, which keeps the median (bounded by construction,
 * not by run length). */
#define RX_IA_SAMPLE 8u
#define RX_IA_BINS 252u /* 4 * (63 - 1) + 4: every 64-bit gap */

struct rx_out {
	uint32_t ia[RX_IA_BINS];
	/* outages kept with their details, oldest first (ev lazily allocated,
	 * TXS_RX_OUTAGE_KEEP entries); older ones folded into old_* */
	struct txs_rx_outage_ev *ev;
	unsigned n_ev;
	bool ev_nomem;
	uint64_t old_count, old_total_ns, old_missing;
	struct txs_rx_outage_ev old_longest;
	uint64_t threshold_ns;   /* the threshold applied to the last silence */
	uint64_t first_arr;      /* arrival of the flow's first timed datagram */
};

static inline unsigned rx_ia_bin(uint64_t dt)
{
	uint64_t x = dt + 4 < dt ? dt : dt + 4; /* x >= 4: bins of x = dt + 4, monotonic in dt */
	unsigned e = 63u - (unsigned)__builtin_clzll(x); /* 2..63 */
	return 4u * (e - 1u) + (unsigned)((x >> (e - 2u)) & 3u);
}

void rx_ia_halve(struct rx_out *o);
/* the silence path: dt >= c->out_floor, the flow's first timed arrival, or a
 * receive time before the previous one */
void rx_out_slow(struct txs_rx_core *c, struct rx_flow *f, uint64_t s, uint64_t nx, unsigned v, uint64_t ts);
/* a late datagram s became unique (it fills a hole) */
void rx_out_fill(struct txs_rx_core *c, struct rx_flow *f, uint64_t s);

/* One arrival of a sequenced flow at ts (!= 0). nx: the flow's next expected
 * before this datagram; v: rx.c's verdict on it (0: unique). */
static inline __attribute__((always_inline)) void rx_out_arrive(struct txs_rx_core *c, struct rx_flow *f, uint64_t s,
								 uint64_t nx, unsigned v, uint64_t ts)
{
	uint64_t dt = ts - f->last_arr;
	if (TXS_UNLIKELY(dt >= c->out_floor)) { /* also: first arrival (last 0), clock stepped back */
		rx_out_slow(c, f, s, nx, v, ts);
		return;
	}
	if (TXS_UNLIKELY(f->received % RX_IA_SAMPLE == 0)) {
		struct rx_out *o = f->out;
		if (TXS_UNLIKELY(++o->ia[rx_ia_bin(dt)] == UINT32_MAX))
			rx_ia_halve(o);
	}
	f->last_arr = ts;
	f->last_seq = s;
}

/* Median inter-arrival of the histogram (a bin's midpoint; 0 = no sample). */
uint64_t rx_ia_median(const struct rx_out *o);

/* result side (outage.c) */
void rx_out_flow_summary(const struct rx_flow *f, struct txs_rx_outage *d);
/* Loss bursts of a sorted array of unique runs (may touch or overlap) within
 * [base, next): holes between them, and from base to the first. */
void rx_bursts_add(struct txs_rx_outage *d, const struct rx_run *runs, size_t n, uint64_t base, uint64_t next);
void rx_burst_one(struct txs_rx_outage *d, uint64_t len);
int rx_out_run(struct txs_rx_result *r, struct txs_rx_core *const *cores, unsigned n);
/* writers (report_outage.c) */
void rx_outage_json(struct txs_json *j, const struct txs_rx_outage *o, bool run, const struct txs_rx_outage_ev *evs,
		    unsigned n_ev, uint64_t min_ns);
void rx_clock_json(struct txs_json *j, const struct txs_rx_result *r);
void rx_outage_text(FILE *f, const struct txs_rx_result *r);
void rx_clock_text(FILE *f, const struct txs_rx_result *r);
#endif
