/* SPDX-License-Identifier: MIT */
/* Private to lib/engine: a worker as the engine keeps it. The generator's
 * view (struct txs_worker, include/txscale/engine.h) is one member; the rest
 * is written by the engine only (the counters and the run's profile and
 * timestamp bookkeeping by the worker's own thread). */
#ifndef TXS_ENGINE_WORKER_H
#define TXS_ENGINE_WORKER_H
#include <pthread.h>
#include <stddef.h>
#include <txscale/engine.h>

#define TXS_MAX_BURST 256 /* buffers one burst may take (conf.burst) */

/* The engine's part of a worker's profile (the stages are in pub.prof) */
struct txs_prof_run {
	uint64_t samples;   /* sampled bursts kept */
	uint64_t discarded; /* sampled bursts dropped as preempted (see docs/profile.md) */
	uint64_t pkts;      /* frames filled in sampled bursts */
	uint64_t loop;      /* raw cycles of the sampled loop iterations, first to last read */
	uint64_t tsc, ns;   /* cycle-counter ticks and CLOCK_MONOTONIC ns over the run */
	bool split;         /* the generator timed ident / linksel / header apart
			     * (fill_prof); false: its whole fill is in header */
};

struct txs_wk {
	struct txs_core_stats stats;   /* own cache line(s), first */
	struct txs_worker pub;         /* what the generator sees */
	int cpu;                       /* pinned to it; -1: not pinned */
	uint64_t quota;                /* packets to send, UINT64_MAX = no limit */
	double rate_pps;               /* 0 = unlimited */
	int error;                     /* -errno if the worker failed */
	uint64_t due_unsent;           /* datagrams due before the deadline left unsent (TXS_PACE_LATE_MAX_NS) */
	bool gen_ready;                /* the generator's init succeeded (fini is due) */
	struct txs_engine *eng;
	pthread_t thread;
	struct txs_prof_run run;       /* conf.profile_every */
	/* timestamps (pub.ts_*: what txs_worker_clock and generators read) */
	uint64_t ts_rebase_ticks;      /* re-read CLOCK_REALTIME once the TSC is this far past ts_tsc0 */
	uint32_t ts_bursts;            /* TXS_TS_INTERP: bursts filled (warm-up, sampling) */
	uint32_t ts_checks;            /* TXS_TS_INTERP: bursts checked */
	bool ts_checked_min;           /* ts_min changed since ts_steps was made */
	uint64_t ts_min[TXS_MAX_BURST + 1];   /* [f]: least fill time (ns) of a checked burst of f; UINT64_MAX none */
	uint64_t ts_steps[TXS_MAX_BURST + 1]; /* [n]: pub.ts_step for a burst of n (ts_steps_make) */
	uint64_t ts_err_n, ts_err_sum, ts_err_max; /* checked bursts, |error| ns summed, largest */
	uint64_t ts_ahead;             /* checked bursts whose last stamp was later than their hand-off */
	uint64_t ts_err_hist[TXS_TS_ERR_BUCKETS];  /* checked bursts by |error|: bucket k < 2^k ns */
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

/* The engine's worker behind a generator's view: every struct txs_worker
 * the engine hands out is the pub member of one. */
static inline struct txs_wk *txs_wk_of(const struct txs_worker *w)
{
	return (struct txs_wk *)(void *)((char *)(uintptr_t)w - offsetof(struct txs_wk, pub));
}
#endif
