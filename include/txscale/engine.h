/* SPDX-License-Identifier: MIT */
/* txscale engine: worker threads (unpinned by default; each pinned to
 * its CPU when conf.cpus gives one), each with its own device queue and
 * generator state, running until a packet count, a duration, or a stop
 * request. Rate control per worker.
 *
 * Concurrency: txs_engine_start/wait/destroy from one controlling thread.
 * txs_engine_stop() may be called from any thread or a signal handler
 * (async-signal-safe: one relaxed store). txs_engine_read() from any thread. */
#ifndef TXSCALE_ENGINE_H
#define TXSCALE_ENGINE_H

#include <pthread.h>
#include <txscale/netdev.h>
#include <txscale/stats.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_worker;

/* ---- profile: where the cycles of the walk go (txscale send --profile) ----
 * With conf.profile_every = N, each worker samples one burst in N (bursts
 * 0, N, 2N, ... of that worker: ceil(bursts / N) samples) by reading the CPU
 * cycle counter (lfence; rdtsc; lfence) between the stages of the walk:
 *   ident    IPv4 ID reservation for the burst's packets
 *   linksel  link selection
 *   header   template patch / header build (and broadcast copies)
 *   device   txq alloc + send (+ retries, release of refused frames)
 *   other    the rest of the loop iteration: clock read, pacing arithmetic,
 *            stats, the generator's own loop and call overhead
 * A sampled burst runs each stage over the whole burst in turn (reserve n IDs,
 * select n links, patch n headers, one device call), so a few counter reads
 * cover a burst; each interval is net of the measured cost of one read.
 * Unsampled bursts take the normal path; with profile_every = 0 the worker
 * loop is the unprofiled one (a separate instance, chosen at start).
 * x86-64 only: elsewhere txs_engine_create() refuses profile_every with
 * -ENOTSUP (TXS_PROF_SUPPORTED is 0). Docs: docs/profile.md. */
enum txs_prof_stage {
	TXS_PROF_IDENT,
	TXS_PROF_LINKSEL,
	TXS_PROF_HEADER,
	TXS_PROF_DEVICE,
	TXS_PROF_OTHER,
	TXS_PROF_STAGES
};

/* A worker's stage cycles, in its struct txs_worker: what a generator's
 * fill_prof adds to on a sampled burst (the engine adds the device stage and
 * keeps the rest of the run's samples, pkts and loop cycles to itself).
 * Written by that worker only; txs_engine_prof() sums them after
 * txs_engine_wait(). */
struct txs_prof {
	int64_t cyc[TXS_PROF_STAGES]; /* net cycles per stage; OTHER stays 0 here:
				       * txs_engine_prof() derives it from the loop */
	uint64_t stamps;   /* counter reads in sampled bursts, engine + generator */
	uint64_t stamp_cost; /* read-only: cycles one counter read adds to an
			      * interval (median of back-to-back reads, at worker start) */
};

#if defined(__x86_64__)
#define TXS_PROF_SUPPORTED 1
/* One serialised cycle-counter read: earlier instructions finish before it,
 * later ones start after it. The compiler keeps memory accesses on their side. */
static inline uint64_t txs_prof_stamp(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#else
#define TXS_PROF_SUPPORTED 0
static inline uint64_t txs_prof_stamp(void)
{
	return 0;
}
#endif

/* What fills frames: the engine allocates device buffers, the generator
 * writes them. fill() sets len (and link, segs, gso_size if used) for each of
 * the n buffers and returns how many it filled (< n only on error; the rest are
 * released). Returning 0 ends the worker with w->fill_err (or -EIO), except
 * when n < w->min_frames and fill_err is 0: there is no room for a whole
 * datagram, and the engine flushes the device and tries again (a datagram
 * is never cut to fit). now_ns is the CLOCK_REALTIME time of the burst. */
struct txs_gen_ops {
	int (*init)(struct txs_worker *w, void *conf);      /* per worker, on its thread */
	unsigned (*fill)(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
	void (*fini)(struct txs_worker *w);
	/* Optional: fill() for a sampled burst when profiling (same contract and
	 * the same frames as fill()), which also adds its stages' net cycles to
	 * w->prof.cyc[IDENT, LINKSEL, HEADER] (interval minus w->prof.stamp_cost
	 * each) and its counter reads to w->prof.stamps. NULL: the engine times
	 * the whole fill() as header. */
	unsigned (*fill_prof)(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
	/* true: with TXS_TS_PACKET (w->ts_packet) fill() stamps each datagram
	 * itself with txs_worker_stamp(w), and the engine calls it once per
	 * burst as usual; false: the engine calls fill() once per datagram, each
	 * with its own clock read (works for any generator, costs a call each). */
	bool stamps_each;
};

/* ---- rate profiles (docs/design.md, "Pacing") ----------------------------
 * Every kind keeps the law of the engine's schedule: each worker has its own
 * list of due times, computed on its own thread from the run's start t0 (one
 * clock for all workers), and sends a datagram only once it is due (never
 * ahead of the schedule; behind it, the worker catches up at full speed).
 * Nothing per packet is shared: the state is on the worker's stack.
 *   CONST    conf.rate_pps (0 = unlimited); worker k of P sends its datagram
 *            j at t0 + (j + k/P) * P / rate_pps.
 *            burst_on = N > 0 adds on/off bursts: each worker sends groups
 *            of N datagrams, within a group at the rate's spacing (or back to
 *            back when unlimited), and the first datagram of group g+1 is due
 *            burst_off_ns after the later of the due time and the send time
 *            of group g's last one: every gap between groups is at least
 *            burst_off_ns on this worker's queue.
 *   RAMP     the total rate goes linearly from ramp_from to ramp_to
 *            (datagrams/s) over ramp_secs, then stays at ramp_to: with
 *            N(t) = integral of the rate from t0, the run's datagram m is due
 *            when N(t) reaches m, and worker k of P sends m = P*j + k.
 *            rate_pps is ignored.
 *   POISSON  each worker's due times are the cumulative sum of exponential
 *            gaps of mean P / rate_pps (per-worker xoshiro-style RNG from
 *            seed + worker id; 0 = random): the sum over workers is a Poisson
 *            process of rate_pps. rate_pps > 0.
 *   TABLE    (one worker: pcap replay) datagram n is due at
 *            t0 + (n / table_n) * table_period_ns + table_ns[n % table_n]:
 *            table_ns ascending (the first may be above 0: the first
 *            datagram is then due that long after t0), read-only, owned by the caller until
 *            txs_engine_destroy(). rate_pps is ignored. */
enum txs_pace_kind { TXS_PACE_CONST = 0, TXS_PACE_RAMP, TXS_PACE_POISSON, TXS_PACE_TABLE };

struct txs_pace_conf {
	enum txs_pace_kind kind;
	double ramp_from, ramp_to, ramp_secs; /* RAMP */
	uint64_t burst_on;                    /* CONST: datagrams per group, 0 = no bursts */
	uint64_t burst_off_ns;                /* CONST: silence between groups */
	uint64_t seed;                        /* POISSON */
	const uint64_t *table_ns;             /* TABLE */
	uint64_t table_n, table_period_ns;
};

/* ---- send timestamps ------------------------------------------------------
 * BURST: the generator stamps every datagram of a burst with the now_ns that
 * fill() gets (one CLOCK_REALTIME read per burst; the default, cheapest).
 * PACKET: one clock read per datagram: the engine fills the burst one
 * datagram at a time (one fill() call per min_frames buffers), each call with
 * its own now_ns from txs_worker_clock() below. That reads the TSC and
 * converts it with a multiplier calibrated against CLOCK_REALTIME at
 * txs_engine_start (only where the CPU says the TSC is invariant), rebased on
 * each burst's CLOCK_REALTIME read, so it never drifts from the realtime
 * clock by more than a burst's worth of calibration error; elsewhere one
 * clock_gettime per datagram. Generators need nothing for it, and the
 * default path is unchanged. Profiled bursts (--profile) then time the whole
 * fill as header (no ident/linksel split). */
/* INTERP: per-datagram stamps at about a burst-stamp's cost. One TSC read
 * at the start of each burst's fill (t0); datagram i of the burst is
 * stamped t0 + i * step, step being the fill time per datagram measured on
 * this worker. The first TXS_TS_WARMUP bursts read the TSC per datagram, as
 * PACKET (their pace, faulting pages in, is not the run's); then the first
 * 16 bursts and one in TXS_TS_CHECK_EVERY read the TSC again at the end of
 * their fill, compare it with the stamp the next datagram would have had
 * (the error at the burst's end, where it is largest) and record the fill
 * time. A stamp ahead of its datagram is the worse error (a receiver sees
 * it arrive before it was sent): no stamp may be later than the moment its
 * burst is handed to the device. So the step for a burst of n is 7/8 of the
 * least of T / max(f, n) over every burst checked (f datagrams in T): a
 * lower bound of this burst's fill per datagram unless it runs 1/8 faster
 * than the fastest seen; 1 ns (distinct stamps, never ahead) until
 * TXS_TS_STEP_CHECKS bursts were checked. The errors are summed per worker
 * (txs_engine_ts_check). A generator without stamps_each is filled as
 * PACKET. */
enum txs_ts_mode { TXS_TS_BURST = 0, TXS_TS_PACKET, TXS_TS_INTERP };
#define TXS_TS_CHECK_EVERY 8u
#define TXS_TS_ERR_BUCKETS 28u /* the last holds every error >= 2^26 ns */
#define TXS_TS_STEP_CHECKS 16u
#define TXS_TS_WARMUP 16u

/* txscale send's --pace-slack default (chosen by bench/pace: the wire's
 * per-ms counts within max(3, 10%) of the rate from 1k to 1M datagrams/s) */
#define TXS_PACE_SLACK_DEFAULT_US 50
#define TXS_PACE_SLACK_DEFAULT_NS (TXS_PACE_SLACK_DEFAULT_US * 1000u)
#define TXS_PACE_SLACK_MAX_NS 100000000u /* 100 ms */
#define TXS_PACE_SLACK_GAPS 2u
/* SO_TXTIME devices (txs_netdev.txtime_clock): datagrams are handed over up
 * to this long before they are due, the worker waking every half of it */
#define TXS_PACE_TXTIME_AHEAD_NS 2000000u
/* A paced run with a duration sends what fell due before it ends even when
 * late (a wake-up past the end, a preempted worker catching up), for at most
 * this long after the end: a worker still behind then cannot keep its rate,
 * and what it leaves unsent is counted (txs_engine_due_unsent), not sent for
 * seconds past -t. */
#define TXS_PACE_LATE_MAX_NS 1000000000ull
#define TXS_PACE_SLACK_GAPS_MAX_NS 1000000u /* 1 ms */

struct txs_engine_conf {
	unsigned n_workers;
	const int *cpus;      /* n_workers entries; NULL or -1 = not pinned */
	uint64_t count;       /* total UDP datagrams, as a receiver counts them (a GSO
			       * segment is one, an IP fragment is not); 0 = no limit */
	double duration;      /* seconds; 0 = no limit */
	double rate_pps;      /* total datagrams/s split evenly; 0 = unlimited */
	unsigned burst;       /* frames per device call (default 32, max 256) */
	unsigned retries;     /* resends of a partially accepted burst before dropping (default 8) */
	struct txs_netdev *dev;
	const struct txs_gen_ops *gen;
	void *gen_conf;
	unsigned profile_every; /* 0 = off; else sample one burst in N (see above) */
	struct txs_pace_conf pace; /* zero: CONST at rate_pps, no bursts */
	/* Paced runs: how a worker waits for the schedule (docs/pacing.md).
	 * 0: spin-exact (spin through gaps under 60 us, wake 50 us early from
	 * longer ones: each datagram leaves at its time, a core busy for it).
	 * > 0: sleep (clock_nanosleep to an absolute deadline, the thread's
	 * timer slack set to 1 ns) and send the datagrams that fall due within
	 * pace_slack_ns of the first one due together, in one burst (one GSO
	 * call on udp:, one ring kick on packet: and xdp:), at the due time of
	 * the last of them: never ahead of the schedule, at most pace_slack_ns
	 * plus the wake-up's latency behind it. CONST with bursts (burst_on)
	 * sleeps but keeps each datagram's own time. Where the device keeps
	 * transmit times (txs_netdev.txtime_clock >= 0: SO_TXTIME with fq) and
	 * the schedule is CONST without bursts or RAMP, the worker hands each
	 * window's datagrams over up to TXS_PACE_TXTIME_AHEAD_NS before they
	 * are due, with the due time of the window's last (txs_txq.txtime_ns),
	 * and the qdisc holds them until then. txscale send's default is
	 * TXS_PACE_SLACK_DEFAULT_NS with pace_slack_gaps TXS_PACE_SLACK_GAPS. */
	uint64_t pace_slack_ns;
	/* CONST without bursts, pace_slack_ns > 0: the window is at least this
	 * many of the worker's gaps between datagrams (at most
	 * TXS_PACE_SLACK_GAPS_MAX_NS), so that a slow schedule wakes once per
	 * few datagrams: G gaps hold G + 1 datagrams, within the wire's per-ms
	 * tolerance of max(3, 10%) for G = 2. 0: pace_slack_ns alone. */
	unsigned pace_slack_gaps;
	enum txs_ts_mode timestamps;
	/* Test only: added to every TXS_TS_BURST stamp, so that a test on one
	 * host (one clock) can play a sender whose clock is off by a known
	 * amount (txscale send reads TXS_TEST_STAMP_SHIFT_NS; docs/recv.md,
	 * "Clock offset"). 0 in every real use. */
	int64_t stamp_shift_ns;
};

/* The part of an engine worker its generator sees, passed to every
 * txs_gen_ops call. The engine allocates it inside its own per-worker state
 * (counters, thread, quota, rate, pacing and clock bookkeeping: private to
 * lib/engine), so nobody else allocates or copies one. Fields are the
 * engine's and read-only for the generator unless marked as the
 * generator's. */
struct txs_worker {
	unsigned id;                   /* 0 .. n_workers - 1 */
	struct txs_txq *txq;           /* the worker's queue, open before init */
	void *gen;                     /* the generator's: its per-worker state */
	int fill_err;                  /* the generator's: set by a fill() that returns 0 (-ENETDOWN, ...) */
	/* The generator's, set by its init (the engine sets both to 1 before it):
	 * one datagram is frames_per_dgram frames (IP fragments), and fill()
	 * can make progress only with at least min_frames buffers (a whole
	 * datagram, or a whole GSO call), a multiple of frames_per_dgram and at
	 * most conf.burst (else txs_engine_start fails with -EINVAL). The engine
	 * counts, paces and stops on datagrams: a frame's segs count towards
	 * frames, segs / frames_per_dgram towards packets. Callers may read
	 * them once the engine started. */
	unsigned frames_per_dgram;
	unsigned min_frames;
	uint64_t left;                 /* datagrams still due (quota - sent - dropped),
					* set before each fill() when min_frames covers
					* more than one datagram (GSO); huge: no count */
	/* conf.timestamps != TXS_TS_BURST: set by the engine, read on the
	 * worker's own thread by txs_worker_clock() and the stamper below
	 * (ts_mult 0: no usable TSC) */
	bool ts_packet;
	uint8_t ts_cur;                /* this burst: TXS_TS_PACKET (a read per datagram) or TXS_TS_INTERP */
	uint64_t ts_tsc0, ts_ns0;      /* TSC and CLOCK_REALTIME ns at this burst's clock read */
	uint64_t ts_mult;              /* ns per TSC tick, 32.32 fixed point */
	uint64_t ts_t0;                /* TXS_TS_INTERP: this burst's base, CLOCK_REALTIME ns */
	uint64_t ts_step;              /* TXS_TS_INTERP: fill ns per datagram, 32.32 fixed point */
	struct txs_prof prof;          /* conf.profile_every: this worker's stage cycles */
};

struct txs_engine;

/* The schedule a run of conf follows, without running it: due_ns[j] = the
 * time (ns after the run's start) at which worker `worker`'s datagram j is
 * due, j < n, as the worker loop sees it when every send takes no time (a
 * late worker sends what came due at once, then keeps to this schedule:
 * it never moves). Only the rate fields are read (rate_pps, n_workers,
 * pace). Unlimited: all 0. Returns how many were filled (fewer than n where
 * the schedule ends: a ramp to 0) or -EINVAL. */
TXS_API int64_t txs_pace_schedule(const struct txs_engine_conf *conf, unsigned worker, uint64_t *due_ns, uint64_t n);

/* How the workers of conf on dev wait for their schedule: "none" (not
 * paced), "spin" (pace_slack_ns 0), "sleep" (the sleeping pacer) or
 * "txtime" (handed over early with SO_TXTIME times, dev->txtime_clock; a
 * generator whose fill needs several datagrams at once, a GSO generator's
 * min_frames, sleeps instead);
 * *window_ns (may be NULL) the window worker 0 sends together (0 spinning).
 * Any thread; conf as txs_engine_create takes it. */
TXS_API const char *txs_pace_mode(const struct txs_engine_conf *conf, const struct txs_netdev *dev,
				  uint64_t *window_ns);

/* Validate conf and allocate. Returns 0 or -EINVAL/-ENOMEM. */
TXS_API int txs_engine_create(struct txs_engine **out, const struct txs_engine_conf *conf);
/* Start the workers. Returns 0 or -errno (pinning to an absent CPU: -EINVAL). */
TXS_API int txs_engine_start(struct txs_engine *e);
TXS_API void txs_engine_stop(struct txs_engine *e);
/* true once every worker has finished. */
TXS_API bool txs_engine_done(struct txs_engine *e);
/* Join the workers; returns the first worker error or 0. */
TXS_API int txs_engine_wait(struct txs_engine *e);
TXS_API void txs_engine_destroy(struct txs_engine *e);
/* Current per-worker counters (n_workers rows) and seconds since start. */
TXS_API double txs_engine_read(struct txs_engine *e, struct txs_stat_row *rows);
TXS_API unsigned txs_engine_workers(const struct txs_engine *e);
/* Worker i's generator-facing part (NULL past the last): read-only here. */
TXS_API struct txs_worker *txs_engine_worker(struct txs_engine *e, unsigned i);

/* The profile summed over the workers, after txs_engine_wait(): other =
 * each worker's loop cycles net of its counter reads, minus its stages.
 * Shares are of the sampled cycles (stages clamped at 0; they sum to 1 when
 * any cycle was sampled); per-packet figures divide by the sampled frames;
 * tsc_hz is ticks / ns over the workers' runs (0: not known, ns_per_pkt 0).
 * Returns 0, or -ENODATA when profiling was off. Controlling thread only. */
struct txs_prof_summary {
	unsigned every;    /* conf.profile_every */
	uint64_t samples, pkts, discarded;
	bool split;        /* false: ident and linksel are inside header (sendmsg path) */
	double tsc_hz;
	double stamp_cycles; /* one counter read's cost subtracted per interval (mean over workers) */
	double cycles[TXS_PROF_STAGES]; /* net cycles, clamped at 0 */
	double share[TXS_PROF_STAGES];
	double cyc_per_pkt[TXS_PROF_STAGES];
	double ns_per_pkt[TXS_PROF_STAGES];
};
TXS_API int txs_engine_prof(struct txs_engine *e, struct txs_prof_summary *out);
/* "ident", "linksel", "header", "device", "other"; NULL past the last. */
TXS_API const char *txs_prof_stage_name(unsigned stage);

/* TXS_TS_INTERP: how far the stamps were from the clock, over the bursts
 * checked (summed over workers, after txs_engine_wait). Returns 0, or
 * -ENODATA when the run was not INTERP or no burst was checked. */
struct txs_ts_check {
	uint64_t bursts;   /* bursts checked */
	uint64_t ahead;    /* ... whose last datagram's stamp was later than the clock read after
			    * their fill (a pace faster than the step: stamps from the future) */
	double err_mean_ns; /* mean |stamp the next datagram would have had - clock| */
	uint64_t err_max_ns;
	uint64_t err_p50_ns, err_p99_ns; /* upper bounds (powers of two) of the median and 99th percentile */
	double step_ns;    /* mean over workers of the last per-datagram step */
};
TXS_API int txs_engine_ts_check(struct txs_engine *e, struct txs_ts_check *out);

/* After txs_engine_wait: datagrams due before the run's duration ended that
 * its workers did not send, still behind their schedule TXS_PACE_LATE_MAX_NS
 * past its end: the rate asked
 * for was more than they could send. 0 for runs that kept up. */
TXS_API uint64_t txs_engine_due_unsent(const struct txs_engine *e);


/* CLOCK_REALTIME ns from the worker's calibrated TSC (TXS_TS_PACKET; a
 * clock_gettime where no invariant TSC). With TXS_TS_PACKET the engine
 * calls fill() once per datagram (once per min_frames buffers: a datagram's
 * fragments, a GSO call) with this as now_ns, so every generator stamps
 * every datagram with its own read and needs no code for it (see enum
 * txs_ts_mode), unless the generator says stamps_each. Worker's own thread
 * only; wait-free. */
TXS_API uint64_t txs_worker_clock(const struct txs_worker *w);

/* The same value, inline, for a generator with stamps_each that stamps
 * datagram by datagram inside its own loop: one rdtsc, a subtraction and a
 * 64x64->128 multiply. rdtsc is not ordered with the stores around it, so
 * the read may run a few instructions early or late: the error is that of
 * a few instructions, never of a burst. A fill loop takes a snapshot of the
 * worker's base once (txs_stamper_init: stores into frames may alias the
 * worker, the compiler would reload it for every datagram) and reads it with
 * txs_stamper_read(). */
struct txs_stamper {
	const struct txs_worker *w;
	uint64_t tsc0, ns0, mult;
	uint64_t acc, step; /* TXS_TS_INTERP: ns0 + (acc >> 32), acc += step */
};

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
static inline void txs_stamper_init(struct txs_stamper *s, const struct txs_worker *w)
{
	s->w = w;
	s->tsc0 = w->ts_tsc0;
	s->ns0 = w->ts_ns0;
	s->mult = w->ts_mult;
	s->acc = 0;
	s->step = w->ts_step;
}

/* TXS_TS_INTERP: the burst's base plus one step per datagram (no clock read). */
static inline void txs_stamper_init_interp(struct txs_stamper *s, const struct txs_worker *w)
{
	s->w = w;
	s->ns0 = w->ts_t0;
	s->acc = 0;
	s->step = w->ts_step;
	s->tsc0 = s->mult = 0;
}

static inline uint64_t txs_stamper_next(struct txs_stamper *s)
{
	uint64_t v = s->ns0 + (s->acc >> 32);
	s->acc += s->step;
	return v;
}

static inline uint64_t txs_stamper_read(const struct txs_stamper *s)
{
#if defined(__x86_64__)
	if (__builtin_expect(s->mult != 0, 1)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		uint64_t d = ((uint64_t)hi << 32 | lo) - s->tsc0;
		if ((int64_t)d < 0)
			d = 0; /* a read the CPU ran before the burst's base */
		__extension__ typedef unsigned __int128 txs_u128;
		return s->ns0 + (uint64_t)(((txs_u128)d * s->mult) >> 32);
	}
#endif
	return txs_worker_clock(s->w);
}

static inline uint64_t txs_worker_stamp(const struct txs_worker *w)
{
	struct txs_stamper s;
	txs_stamper_init(&s, w);
	return txs_stamper_read(&s);
}
#endif /* TXS_UNSTABLE_API */

#ifdef __cplusplus
}
#endif
#endif
