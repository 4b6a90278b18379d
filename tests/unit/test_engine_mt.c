/* SPDX-License-Identifier: MIT */
/* lib/engine + generator: exact counts split over workers, stop conditions,
 * rate control, per-core layout, error propagation. Runs under TSan too. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/txscale.h>
#include "test_engine.h"
#include "test_util.h"
#include "engine/worker.h"
#include "netdev/netdev_priv.h"

_Static_assert(sizeof(struct txs_core_stats) % TXS_CACHE_LINE == 0, "stats pad to cache lines");
_Static_assert(_Alignof(struct txs_core_stats) >= TXS_CACHE_LINE, "stats aligned");
_Static_assert(sizeof(struct txs_wk) % TXS_CACHE_LINE == 0, "worker pads to cache lines");
_Static_assert(_Alignof(struct txs_wk) >= TXS_CACHE_LINE, "worker aligned");
_Static_assert(sizeof(struct txs_nq) % TXS_CACHE_LINE == 0, "queue pads to cache lines");
_Static_assert(_Alignof(struct txs_nq) >= TXS_CACHE_LINE, "queue aligned");

static struct txs_gen_conf gen_conf(bool v6, uint32_t len)
{
	struct txs_gen_conf gc = { 0 };
	txs_addr_parse(&gc.spec.src, v6 ? "2001:2::1" : "198.18.0.1");
	txs_addr_parse(&gc.spec.dst, v6 ? "2001:2::2" : "198.18.0.2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = len;
	gc.spread_sport = true;
	gc.seed = 7;
	return gc;
}

/* The device spec opened with queues queues of frame_size bytes (0: the
 * device's default). */
static struct txs_netdev *open_dev(const char *spec, unsigned queues, uint32_t frame_size)
{
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = queues, .frame_size = frame_size };
	assert_int_equal(txs_netdev_open(&dev, spec, &dc, NULL, 0), 0);
	return dev;
}

struct run {
	uint64_t packets, bytes, drops, verify_err, due_unsent;
	double secs;
	int rc;
};

/* How run_engine_pace's workers wait for the schedule: conf.pace_slack_ns
 * and pace_slack_gaps (0, 0: spin-exact; the sleeping pacer's tests rerun
 * the pacing properties with txscale send's default) */
static uint64_t g_slack_ns;
static unsigned g_slack_gaps;

static struct run run_engine_pace(const char *devspec, unsigned workers, uint64_t count, double dur, double rate,
				  bool v6, uint32_t len, const struct txs_pace_conf *pace)
{
	struct run r = { 0 };
	struct txs_gen_conf gc = gen_conf(v6, len);
	struct txs_netdev *dev = open_dev(devspec, workers, 2048);
	struct txs_engine_conf ec = { .n_workers = workers, .count = count, .duration = dur, .rate_pps = rate,
				      .dev = dev, .gen = &txs_udp_gen_ops, .gen_conf = &gc,
				      .pace_slack_ns = g_slack_ns, .pace_slack_gaps = g_slack_gaps };
	if (pace)
		ec.pace = *pace;
	struct txs_engine *e;
	assert_int_equal(txs_engine_create(&e, &ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	r.rc = txs_engine_wait(e);
	struct txs_stat_row rows[8];
	r.secs = txs_engine_read(e, rows);
	for (unsigned i = 0; i < workers; i++) {
		r.packets += rows[i].packets;
		r.bytes += rows[i].bytes;
		r.drops += rows[i].drops;
	}
	struct txs_link_counters lc;
	uint64_t dev_pk = 0;
	for (unsigned l = 0; l < dev->n_links; l++) {
		txs_netdev_link_stats(dev, l, &lc);
		dev_pk += lc.packets;
		r.verify_err += lc.verify_err;
	}
	/* engine and device agree exactly */
	assert_int_equal(dev_pk, r.packets);
	r.due_unsent = txs_engine_due_unsent(e);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
	return r;
}

static struct run run_engine(const char *devspec, unsigned workers, uint64_t count, double dur, double rate,
			     bool v6, uint32_t len)
{
	return run_engine_pace(devspec, workers, count, dur, rate, v6, len, NULL);
}

static void exact_counts(void **st)
{
	(void)st;
	/* a count that does not divide evenly over the workers */
	for (unsigned w = 1; w <= 3; w++) {
		struct run r = run_engine("dummy:verify", w, 100003, 0, 0, w == 2, 16);
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.packets, 100003);
		assert_int_equal(r.drops, 0);
		assert_int_equal(r.verify_err, 0);
		assert_int_equal(r.bytes, 100003ull * (w == 2 ? 14 + 40 + 8 + 16 : 60));
	}
	struct run r = run_engine("dummy", 2, 1000, 0, 0, false, 1000);
	assert_int_equal(r.bytes, 1000ull * (14 + 20 + 8 + 1000));
}

static void duration_stops(void **st)
{
	(void)st;
	struct run r = run_engine("dummy", 2, 0, 0.2, 0, false, 16);
	assert_int_equal(r.rc, 0);
	assert_true(r.packets > 0);
	assert_true(r.secs >= 0.19 && r.secs < 2.0);
}

static void rate_control(void **st)
{
	(void)st;
	/* 50k pps for 0.5 s: packet k is due at t0 + k/rate, so the engine is
	 * never ahead of the schedule (at most one burst of slack). How close it
	 * stays behind depends on getting the CPU, which a unit test on a shared
	 * machine cannot promise: accuracy (within 1%) is measured in bench/, here
	 * only a loose lower bound. */
	struct run r = run_engine("dummy", 1, 0, 0.5, 50000, false, 16);
	assert_true(r.packets <= 50000 * r.secs * 1.001 + 32);
	assert_true(r.packets >= 50000 * 0.5 * 0.5);
	/* split over 2 workers; with a count the run ends when the count is reached */
	r = run_engine("dummy", 2, 20000, 0, 100000, true, 16);
	assert_int_equal(r.packets, 20000);
	assert_true(r.secs > 0.19 * 0.99);
}

/* Workers share one schedule at the total rate: worker k of P sends its
 * packet j at (j + k/P) / (rate/P) after the start, so a short run sends
 * what the rate says, not one packet per worker at t = 0 (before:
 * -b 1 -P 8 -t 1.5 sent 8). Here 2 pps over 4 workers for 1.45 s: due at 0,
 * 0.5 and 1.0 s, so exactly 3 (the old schedule: 4 at t = 0). A worker may
 * be late by up to 0.45 s (never early: a packet goes when it is due). */
static void workers_staggered(void **st)
{
	(void)st;
	struct run r = run_engine("dummy", 4, 0, 1.45, 2, false, 16);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.packets, 3);
	/* 1 pps over 8 workers for 1.5 s: due at 0 and 1 s */
	r = run_engine("dummy", 8, 0, 1.5, 1, false, 16);
	assert_int_equal(r.packets, 2);
}

/* A rate so low that packet 1 is due beyond the clock's range (1e-11 pps:
 * 1e20 ns): the worker sends packet 0 and then waits (sleeping) until the
 * deadline, instead of computing a due time of 0 and spinning. Checked by
 * count (1) and by the process CPU time: a spinning worker burns the 0.6 s. */
static void tiny_rate_waits(void **st)
{
	(void)st;
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	struct run r = run_engine("dummy", 1, 0, 0.6, 1e-11, false, 16);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.packets, 1);
	assert_true(r.secs >= 0.59);
	assert_true(cpu < 0.2);
}

/* One worker, then two, send n datagrams at rate pps on schedule p: every
 * one sent, never before min_secs (and within 5 s). */
static void never_ahead(const struct txs_pace_conf *p, uint64_t n, double rate, double min_secs)
{
	for (unsigned w = 1; w <= 2; w++) {
		struct run r = run_engine_pace("dummy", w, n, 0, rate, false, 16, p);
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.packets, n);
		assert_true(r.secs >= min_secs);
		assert_true(r.secs < 5);
	}
}

/* Rate profiles (engine.h): each kind is never ahead of its schedule, so a
 * run of a given count cannot end before the last datagram's due time; the
 * counts stay exact. How far behind a worker is depends on the CPU it gets:
 * only loose upper bounds here (accuracy is measured on a veth:
 * tests/integration/pacing_veth.sh). */
static void ramp_never_ahead(void **st)
{
	(void)st;
	/* 0 -> 20k/s over 0.3 s: N(0.3 s) = 3000; then 20k/s: datagram 4999 of
	 * the run is due at 0.3 + 1999 / 20000 = 0.39995 s */
	struct txs_pace_conf p = { .kind = TXS_PACE_RAMP, .ramp_from = 0, .ramp_to = 20000, .ramp_secs = 0.3 };
	never_ahead(&p, 5000, 0, 0.3999);
	/* a duration: 10k -> 0 over 0.2 s sends N(0.2) = 1000 (+1: datagram 0 at t0), then nothing */
	struct txs_pace_conf d = { .kind = TXS_PACE_RAMP, .ramp_from = 10000, .ramp_to = 0, .ramp_secs = 0.2 };
	struct run r = run_engine_pace("dummy", 2, 0, 0.4, 0, false, 16, &d);
	assert_int_equal(r.rc, 0);
	assert_true(r.packets <= 1001);
	assert_true(r.packets >= 900);
	/* the same with a count and no duration: the schedule runs out after
	 * datagram 1000 (N(0.2 s) = 1000), and the run ends instead of waiting
	 * forever for datagram 1001 */
	r = run_engine_pace("dummy", 1, 100000, 0, 0, false, 16, &d);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.packets, 1001);
	assert_true(r.secs < 5);
}

static void poisson_never_ahead(void **st)
{
	(void)st;
	/* 4000 datagrams at a mean 40k/s: the schedule ends near 0.1 s (sd of
	 * the sum of gaps: sqrt(4000) / 40k = 1.6 ms); never before 0.09 s */
	struct txs_pace_conf p = { .kind = TXS_PACE_POISSON, .seed = 42 };
	never_ahead(&p, 4000, 40000, 0.09);
}

/* txs_pace_schedule: the schedule itself, without a clock. POISSON gaps
 * are exponential at the mean (mean, coefficient of variation, median at
 * mean x ln 2, P(gap < mean) = 1 - 1/e) for several seeds, each worker's
 * own and their union at the total rate; the same seed gives the same
 * schedule, another seed another one. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void check_exponential(const uint64_t *t, size_t n, double mean_ns)
{
	double *g = malloc((n - 1) * sizeof(*g)), s = 0, s2 = 0;
	assert_non_null(g);
	for (size_t i = 1; i < n; i++) {
		assert_true(t[i] >= t[i - 1]);
		g[i - 1] = (double)(t[i] - t[i - 1]);
		s += g[i - 1];
	}
	double m = s / (double)(n - 1);
	size_t below = 0;
	for (size_t i = 0; i < n - 1; i++) {
		s2 += (g[i] - m) * (g[i] - m);
		below += g[i] < m;
	}
	double cv = sqrt(s2 / (double)(n - 2)) / m;
	/* n = 20000: the standard errors are 0.7% (mean), 1% (cv), 1.4% (median), 0.0034 (P) */
	assert_true(fabs(m - mean_ns) / mean_ns < 0.03);
	assert_true(cv > 0.95 && cv < 1.05);
	assert_true(fabs((double)below / (double)(n - 1) - (1 - exp(-1))) < 0.015);
	uint64_t *sg = malloc((n - 1) * sizeof(*sg));
	assert_non_null(sg);
	for (size_t i = 0; i < n - 1; i++)
		sg[i] = (uint64_t)g[i];
	qsort(sg, n - 1, sizeof(*sg), cmp_u64);
	double med = (double)sg[(n - 1) / 2];
	assert_true(fabs(med - m * log(2)) / (m * log(2)) < 0.06);
	free(sg);
	free(g);
}

static void schedule_poisson_exponential(void **st)
{
	(void)st;
	enum { N = 20000 };
	uint64_t *a = malloc(2 * N * sizeof(*a)), *b = malloc(N * sizeof(*b));
	assert_non_null(a);
	assert_non_null(b);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct txs_engine_conf ec = { .n_workers = 1, .rate_pps = 5000,
					      .pace = { .kind = TXS_PACE_POISSON, .seed = seed } };
		assert_int_equal(txs_pace_schedule(&ec, 0, a, N), N);
		check_exponential(a, N, 200000);
		assert_int_equal(txs_pace_schedule(&ec, 0, b, N), N);
		assert_memory_equal(a, b, N * sizeof(*a)); /* one seed, one schedule */
		ec.pace.seed = seed + 100;
		assert_int_equal(txs_pace_schedule(&ec, 0, b, N), N);
		assert_memory_not_equal(a, b, N * sizeof(*a));
		/* two workers at 5000/s in total: each is Poisson at 2500/s, the
		 * union (merged: the first N of 2N cover the same span) at 5000/s */
		ec.n_workers = 2;
		ec.pace.seed = seed;
		assert_int_equal(txs_pace_schedule(&ec, 0, a, N), N);
		check_exponential(a, N, 400000);
		assert_int_equal(txs_pace_schedule(&ec, 1, a + N, N), N);
		check_exponential(a + N, N, 400000);
		assert_memory_not_equal(a, a + N, N * sizeof(*a)); /* the workers' streams differ */
		qsort(a, 2 * N, sizeof(*a), cmp_u64);
		check_exponential(a, N, 200000);
	}
	free(a);
	free(b);
}

/* CONST: evenly spaced, worker k of P offset by k/P of its period;
 * unlimited: all due at once; RAMP: N(t) = f t + a t^2 / 2; bursts: the
 * silence between groups; a ramp to 0 ends; bad input */
static void schedule_shapes(void **st)
{
	(void)st;
	uint64_t d[64];
	struct txs_engine_conf ec = { .n_workers = 2, .rate_pps = 1000 };
	assert_int_equal(txs_pace_schedule(&ec, 1, d, 4), 4);
	for (unsigned j = 0; j < 4; j++)
		assert_true(llabs((long long)d[j] - (long long)(j * 2000000 + 1000000)) <= 1);
	ec.rate_pps = 0;
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 4), 4);
	for (unsigned j = 0; j < 4; j++)
		assert_int_equal(d[j], 0);
	ec = (struct txs_engine_conf){ .n_workers = 1,
				       .pace = { .kind = TXS_PACE_RAMP, .ramp_from = 0, .ramp_to = 1000, .ramp_secs = 1 } };
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 64), 64);
	for (unsigned j = 1; j < 64; j++) /* N(t) = 500 t^2: datagram j at sqrt(j / 500) s */
		assert_true(fabs((double)d[j] - sqrt(j / 500.0) * 1e9) < 2);
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_RAMP, .ramp_from = 1000, .ramp_to = 0, .ramp_secs = 0.01 };
	/* 1000/s to 0 over 10 ms: N(10 ms) = 5, datagrams 0 (at the start) to 5 */
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 64), 6);
	ec = (struct txs_engine_conf){ .n_workers = 1, .rate_pps = 10000,
				       .pace = { .burst_on = 10, .burst_off_ns = 5000000 } };
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 30), 30);
	for (unsigned j = 1; j < 30; j++) {
		uint64_t gap = d[j] - d[j - 1];
		if (j % 10)
			assert_true(gap >= 99999 && gap <= 100001);
		else
			assert_true(gap >= 5000000); /* the silence after the group's last datagram */
	}
	assert_int_equal(txs_pace_schedule(&ec, 1, d, 1), -EINVAL); /* no worker 1 */
	assert_int_equal(txs_pace_schedule(&ec, 0, NULL, 1), -EINVAL);
	assert_int_equal(txs_pace_schedule(&ec, 0, NULL, 0), 0);
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_POISSON };
	ec.rate_pps = 0;
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 1), -EINVAL); /* Poisson without a mean rate */
	ec.rate_pps = NAN;
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 1), -EINVAL);
}

/* The engine keeps to the schedule txs_pace_schedule() gives: on the dummy
 * device (sends take ~no time) a run of 400 Poisson datagrams at 4000/s
 * ends no earlier than the last one's due time, and not much later */
static void engine_keeps_schedule(void **st)
{
	(void)st;
	struct txs_pace_conf p = { .kind = TXS_PACE_POISSON, .seed = 9 };
	struct txs_engine_conf ec = { .n_workers = 1, .rate_pps = 4000, .pace = p };
	uint64_t d[400];
	assert_int_equal(txs_pace_schedule(&ec, 0, d, 400), 400);
	struct run r = run_engine_pace("dummy", 1, 400, 0, 4000, false, 16, &p);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.packets, 400);
	assert_true(r.secs >= (double)d[399] / 1e9 - 1e-6);
	assert_true(r.secs < (double)d[399] / 1e9 + 2);
}

static void bursts_keep_silence(void **st)
{
	(void)st;
	/* unlimited rate, groups of 100, 20 ms of silence: 500 datagrams are 5
	 * groups and 4 silences (>= 80 ms), 501 open a sixth (>= 100 ms) */
	struct txs_pace_conf p = { .burst_on = 100, .burst_off_ns = 20 * 1000 * 1000 };
	struct run r = run_engine_pace("dummy", 1, 500, 0, 0, false, 16, &p);
	assert_int_equal(r.packets, 500);
	assert_true(r.secs >= 0.0799);
	r = run_engine_pace("dummy", 1, 501, 0, 0, false, 16, &p);
	assert_int_equal(r.packets, 501);
	assert_true(r.secs >= 0.0999);
	/* at 10k/s: group of 10 spans 0.9 ms, then 10 ms: 30 datagrams >= 2 * 10.9 + 0.9 ms */
	p.burst_on = 10;
	p.burst_off_ns = 10 * 1000 * 1000;
	r = run_engine_pace("dummy", 1, 30, 0, 10000, false, 16, &p);
	assert_int_equal(r.packets, 30);
	assert_true(r.secs >= 0.0226);
}

static void table_schedule(void **st)
{
	(void)st;
	/* due at 0, 10, 30 ms, repeating every 50 ms: datagram 6 opens the
	 * third round, at 100 ms */
	static const uint64_t tab[] = { 0, 10000000, 30000000 };
	struct txs_pace_conf p = { .kind = TXS_PACE_TABLE, .table_ns = tab, .table_n = 3,
				   .table_period_ns = 50000000 };
	struct run r = run_engine_pace("dummy", 1, 7, 0, 0, false, 16, &p);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.packets, 7);
	assert_true(r.secs >= 0.0999);
	assert_true(r.secs < 5);
}

/* Send timestamps (engine.h, enum txs_ts_mode): a generator that records the
 * now_ns of each fill() call, how many buffers it got, and a CLOCK_REALTIME
 * read right after. BURST: one call per burst (several buffers, one time).
 * PACKET: one call per datagram, each with its own time: never going back,
 * at most 2 us after the clock read that follows it (the TSC conversion is
 * calibrated against that clock and rebased every burst) and, in the
 * median, within 2 us before it. A GSO-like generator (min_frames 4, one
 * call = 4 datagrams) gets whole units and never more datagrams than due. */
#define TS_MAX 4096
struct ts_rec {
	uint64_t now[TS_MAX], after[TS_MAX];
	unsigned nbuf[TS_MAX];
	unsigned calls, bufs;
};
static struct ts_rec g_ts;

/* A 60-byte zero frame, one segment, on link 0. */
static void blank_frame(struct txs_pktbuf *b)
{
	memset(b->data, 0, 60);
	b->len = 60;
	b->segs = 1;
	b->link = 0;
}

static unsigned ts_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	/* like a GSO generator: whole units, but only the datagrams still due */
	unsigned unit = w->min_frames;
	uint64_t due = unit > 1 ? w->left : n;
	if (n > due)
		n = (unsigned)due;
	if (n < unit && n < due)
		return 0;
	if (n >= unit)
		n -= n % unit;
	for (unsigned i = 0; i < n; i++)
		blank_frame(&b[i]);
	if (g_ts.calls < TS_MAX) {
		g_ts.now[g_ts.calls] = now_ns;
		g_ts.nbuf[g_ts.calls] = n;
		g_ts.after[g_ts.calls] = txs_now_real_ns();
		g_ts.calls++;
	}
	g_ts.bufs += n;
	return n;
}

static int ts_init4(struct txs_worker *w, void *conf)
{
	(void)conf;
	w->min_frames = 4; /* four one-frame datagrams per call, like a GSO call */
	return 0;
}

static const struct txs_gen_ops ts_gen = { .fill = ts_fill };
static const struct txs_gen_ops ts_gen4 = { .init = ts_init4, .fill = ts_fill };

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Run one worker of gen g for count datagrams with timestamps mode on a
 * fresh one-queue dummy device: wait returns 0, and the worker counts
 * count. With chk, the engine's timestamp check goes there (its result in
 * *chk_rc). */
static void dummy_run(const struct txs_gen_ops *g, enum txs_ts_mode mode, uint64_t count, struct txs_ts_check *chk,
		      int *chk_rc)
{
	struct txs_netdev *dev = open_dev("dummy", 1, 2048);
	struct txs_engine_conf ec = { .n_workers = 1, .count = count, .dev = dev, .gen = g, .timestamps = mode };
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row row;
	txs_engine_read(e, &row);
	assert_int_equal(row.packets, count);
	if (chk)
		*chk_rc = txs_engine_ts_check(e, chk);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
}

static void ts_run(const struct txs_gen_ops *g, enum txs_ts_mode mode, uint64_t count)
{
	memset(&g_ts, 0, sizeof(g_ts));
	dummy_run(g, mode, count, NULL, NULL);
	assert_int_equal(g_ts.bufs, count);
}

static void timestamps_per_packet(void **st)
{
	(void)st;
	ts_run(&ts_gen, TXS_TS_BURST, TS_MAX);
	assert_true(g_ts.calls <= TS_MAX / 32 + 1); /* whole bursts */
	ts_run(&ts_gen, TXS_TS_PACKET, TS_MAX);
	assert_int_equal(g_ts.calls, TS_MAX); /* one call, one clock read, per datagram */
	static int64_t lead[TS_MAX];
	for (unsigned i = 0; i < TS_MAX; i++) {
		assert_int_equal(g_ts.nbuf[i], 1);
		if (i)
			assert_true(g_ts.now[i] >= g_ts.now[i - 1]);
		assert_true(g_ts.now[i] <= g_ts.after[i] + 2000);
		lead[i] = (int64_t)g_ts.after[i] - (int64_t)g_ts.now[i];
	}
	qsort(lead, TS_MAX, sizeof(lead[0]), cmp_i64);
	assert_true(lead[TS_MAX / 2] <= 2000);
	/* units of 4: calls of 4 buffers; a count that ends inside a unit gets
	 * only what is due (4097 = 1024 units + 1) */
	ts_run(&ts_gen4, TXS_TS_PACKET, 4 * 1024 + 1);
	for (unsigned i = 0; i + 1 < g_ts.calls; i++)
		assert_int_equal(g_ts.nbuf[i], 4);
	assert_int_equal(g_ts.nbuf[g_ts.calls - 1], 1);
}

/* A generator that stamps datagram by datagram itself (stamps_each), as
 * lib/udp/gen.c does: with PACKET and INTERP the engine calls it once per
 * burst. Recorded per datagram: its stamp, the clock read right after it
 * was made, and the call it came in. INTERP: the first TXS_TS_WARMUP bursts
 * read the TSC per datagram, later ones step from one base per burst:
 * within a call the stamps rise by one step (1 ns until TXS_TS_STEP_CHECKS
 * bursts were checked, then the measured one), the median datagram is stamped
 * within 2 us of the clock read after it, and the engine's check saw
 * bursts, with a median error no larger than its maximum. With slow bursts
 * first (sleeps in the first calls, as page faults make a run's first
 * bursts slow: the first, the whole warm-up), no stamp is ever later than the
 * moment its burst is handed to the device (the end of the call): a step
 * learnt from a slow first burst once put stamps hundreds of us into the
 * future. That holds for a pace no faster than the fastest checked burst's
 * (less 1/8); a sanitizer's instrumentation changes the pace from burst to
 * burst by more, so there it is not asserted. When the pace does get
 * faster (the first calls spin), the stamps of the first faster burst run
 * ahead, none before it, and the engine's check counts it (ahead). */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define T_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define T_SANITIZED 1
#endif
#endif
#define TSI_MAX 8192
static struct {
	uint64_t stamp[TSI_MAX], after[TSI_MAX], handed[TSI_MAX];
	unsigned call[TSI_MAX];
	uint8_t interp[TSI_MAX];
	unsigned n, calls;
} g_tsi;

static unsigned g_tsi_slow_calls; /* the first calls sleep 300 us per datagram */
static unsigned g_tsi_spin_calls; /* the first calls spin 2 us per datagram */

static unsigned tsi_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct txs_stamper st;
	const bool interp = w->ts_packet && w->ts_cur == TXS_TS_INTERP;
	if (interp)
		txs_stamper_init_interp(&st, w);
	else
		txs_stamper_init(&st, w);
	for (unsigned i = 0; i < n; i++) {
		uint64_t s = !w->ts_packet ? now_ns : interp ? txs_stamper_next(&st) : txs_stamper_read(&st);
		blank_frame(&b[i]);
		if (g_tsi.calls < g_tsi_slow_calls) {
			struct timespec ts = { 0, 300 * 1000 };
			nanosleep(&ts, NULL);
		}
		for (uint64_t t = txs_now_mono_ns(); g_tsi.calls < g_tsi_spin_calls && txs_now_mono_ns() - t < 2000;)
			;
		if (g_tsi.n < TSI_MAX) {
			g_tsi.stamp[g_tsi.n] = s;
			g_tsi.after[g_tsi.n] = txs_now_real_ns();
			g_tsi.call[g_tsi.n] = g_tsi.calls;
			g_tsi.interp[g_tsi.n] = interp;
			g_tsi.n++;
		}
	}
	uint64_t end = txs_now_real_ns();
	for (unsigned i = g_tsi.n >= n ? g_tsi.n - n : 0; i < g_tsi.n; i++)
		g_tsi.handed[i] = end;
	g_tsi.calls++;
	return n;
}
static const struct txs_gen_ops tsi_gen = { .fill = tsi_fill, .stamps_each = true };

static void tsi_run(enum txs_ts_mode mode, struct txs_ts_check *chk, int *chk_rc)
{
	memset(&g_tsi, 0, sizeof(g_tsi));
	dummy_run(&tsi_gen, mode, TSI_MAX, chk, chk_rc);
	assert_int_equal(g_tsi.n, TSI_MAX);
}

static void timestamps_interp(void **st)
{
	(void)st;
	struct txs_ts_check chk;
	int rc;
	tsi_run(TXS_TS_BURST, &chk, &rc);
	assert_int_equal(rc, -ENODATA);
	assert_true(g_tsi.calls <= TSI_MAX / 32 + 1);
	tsi_run(TXS_TS_PACKET, &chk, &rc);
	assert_int_equal(rc, -ENODATA);
	assert_true(g_tsi.calls <= TSI_MAX / 32 + 1); /* stamps_each: one call per burst */
	/* a stamp is never ahead of the clock read after it by more than the
	 * base pair's spread (a base taken across a preemption was 12 us ahead) */
	for (unsigned i = 0; i < TSI_MAX; i++)
		assert_true(g_tsi.stamp[i] <= g_tsi.after[i] + 1000);
	tsi_run(TXS_TS_INTERP, &chk, &rc);
	assert_true(g_tsi.calls <= TSI_MAX / 32 + 1);
	static int64_t lead[TSI_MAX];
	unsigned n_interp = 0, stepped = 0;
	for (unsigned i = 0; i < TSI_MAX; i++) {
		lead[i] = (int64_t)g_tsi.after[i] - (int64_t)g_tsi.stamp[i];
		n_interp += g_tsi.interp[i];
		if (i >= 2 && g_tsi.interp[i] && g_tsi.call[i] == g_tsi.call[i - 2]) {
			uint64_t d1 = g_tsi.stamp[i] - g_tsi.stamp[i - 1], d0 = g_tsi.stamp[i - 1] - g_tsi.stamp[i - 2];
			assert_true(g_tsi.stamp[i] > g_tsi.stamp[i - 1]);
			stepped += d1 > 1;
			/* the same step, give or take the 32.32 rounding */
			assert_true(d1 + 1 >= d0 && d0 + 1 >= d1);
		}
	}
	for (unsigned i = 0; i < TXS_TS_WARMUP * 32; i++)
		assert_false(g_tsi.interp[i]);                       /* the warm-up reads per datagram */
	assert_true(n_interp >= TSI_MAX - (TXS_TS_WARMUP + 1) * 32); /* and then the step */
	assert_true(stepped >= TSI_MAX / 2);                       /* > 0 once bursts were checked */
	assert_int_equal(rc, 0);
	assert_true(chk.bursts >= (TSI_MAX / 32 - TXS_TS_WARMUP - 16) / TXS_TS_CHECK_EVERY + 16);
	assert_true(chk.step_ns > 0);
	assert_true(chk.err_p50_ns <= 2 * chk.err_max_ns + 1);
	qsort(lead, TSI_MAX, sizeof(lead[0]), cmp_i64);
	/* Under a sanitizer every clock read and store in the fill is several
	 * times slower and varies with the instrumentation's own work, so the
	 * step the stamper learns is looser there (loaded TSan runs saw medians
	 * of 2.0 and 2.4 us); the bound is kept, scaled. */
#ifdef T_SANITIZED
	const int64_t lead_max = 10000;
#else
	const int64_t lead_max = 2000;
#endif
	if (lead[TSI_MAX / 2] > lead_max || lead[TSI_MAX / 2] < -lead_max)
		fprintf(stderr, "interp lead: p1 %lld p50 %lld p99 %lld ns\n", (long long)lead[TSI_MAX / 100],
			(long long)lead[TSI_MAX / 2], (long long)lead[TSI_MAX - TSI_MAX / 100]);
	assert_true(lead[TSI_MAX / 2] <= lead_max && lead[TSI_MAX / 2] >= -lead_max);
}

/* stamps later than their hand-off, counted per call into ahead_in[] */
static unsigned tsi_ahead(unsigned *first_call)
{
	unsigned ahead = 0;
	*first_call = UINT32_MAX;
	for (unsigned i = 0; i < TSI_MAX; i++)
		if (g_tsi.stamp[i] > g_tsi.handed[i] + 1000) { /* the base pair's spread */
			ahead++;
			if (g_tsi.call[i] < *first_call)
				*first_call = g_tsi.call[i];
		}
	return ahead;
}

static void timestamps_interp_never_ahead(void **st)
{
	(void)st;
	struct txs_ts_check chk;
	int rc;
	unsigned first;
	/* slow calls: the first, the warm-up */
	const unsigned slow[] = { 1, TXS_TS_WARMUP };
	for (unsigned k = 0; k < sizeof(slow) / sizeof(slow[0]); k++) {
		g_tsi_slow_calls = slow[k];
		tsi_run(TXS_TS_INTERP, &chk, &rc);
		assert_int_equal(rc, 0);
		unsigned ahead = tsi_ahead(&first);
		if (ahead || chk.ahead) {
			int64_t most = INT64_MIN; /* the stamp furthest past its hand-off (negative: none past) */
			for (unsigned i = 0; i < TSI_MAX; i++)
				if ((int64_t)(g_tsi.stamp[i] - g_tsi.handed[i]) > most)
					most = (int64_t)(g_tsi.stamp[i] - g_tsi.handed[i]);
			fprintf(stderr, "%u slow calls: %u stamps more than 1 us ahead of their hand-off, from call %u; "
				"the engine's check counted %llu bursts; the furthest stamp %+lld ns past its hand-off\n",
				slow[k], ahead, first, (unsigned long long)chk.ahead, (long long)most);
		}
#ifndef T_SANITIZED
		/* the rule: slow first bursts do not poison the step (a step learnt
		 * from them once put stamps 390 us ahead): no stamp more than the
		 * base pair's spread past its hand-off. What docs/design.md leaves
		 * ("Send timestamps"), a burst over 1/8 faster than any checked
		 * before, may be counted by the engine's check, which has no slack:
		 * fresh-clone runs under ctest -j2 saw one burst, 145 ns ahead. */
		assert_int_equal(ahead, 0);
		assert_true(chk.ahead <= 2);
#endif
	}
	g_tsi_slow_calls = 0;
	/* a faster pace from call 40 on, a checked burst (b % TXS_TS_CHECK_EVERY == 0) */
	g_tsi_spin_calls = 40;
	tsi_run(TXS_TS_INTERP, &chk, &rc);
	g_tsi_spin_calls = 0;
	assert_int_equal(rc, 0);
	unsigned ahead = tsi_ahead(&first);
	assert_true(ahead > 0);
	assert_true(chk.ahead >= 1);
#ifndef T_SANITIZED
	assert_int_equal(first, 40);
#endif
}

static struct txs_engine *g_e;
static void *stopper(void *arg)
{
	(void)arg;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	txs_engine_stop(g_e);
	return NULL;
}

static void stop_from_another_thread(void **st)
{
	(void)st;
	struct txs_gen_conf gc = gen_conf(false, 16);
	struct txs_netdev *dev = open_dev("dummy", 2, 0);
	struct txs_engine_conf ec = { .n_workers = 2, .dev = dev, .gen = &txs_udp_gen_ops, .gen_conf = &gc,
				      .duration = 30 };
	assert_int_equal(txs_engine_create(&g_e, &ec), 0);
	assert_int_equal(txs_engine_start(g_e), 0);
	pthread_t t;
	pthread_create(&t, NULL, stopper, NULL);
	assert_int_equal(txs_engine_wait(g_e), 0);
	pthread_join(t, NULL);
	assert_true(txs_engine_done(g_e));
	struct txs_stat_row rows[2];
	assert_true(txs_engine_read(g_e, rows) < 10);
	txs_engine_destroy(g_e);
	txs_netdev_close(dev);
}

/* The sleeping pacer (conf.pace_slack_ns > 0, txscale send's default):
 * every pacing property above holds as it does spin-exact: never ahead of
 * the schedule, counts exact, bursts' silences kept, the table kept, a
 * tiny rate sleeps, the workers' shared grid. */
static void sleeping_pacer_keeps_properties(void **st)
{
	g_slack_ns = TXS_PACE_SLACK_DEFAULT_NS;
	g_slack_gaps = TXS_PACE_SLACK_GAPS;
	rate_control(st);
	workers_staggered(st);
	tiny_rate_waits(st);
	ramp_never_ahead(st);
	poisson_never_ahead(st);
	engine_keeps_schedule(st);
	bursts_keep_silence(st);
	table_schedule(st);
	g_slack_gaps = 0;
	g_slack_ns = 1000000; /* a 1 ms window: still never ahead */
	rate_control(st);
	ramp_never_ahead(st);
	poisson_never_ahead(st);
	g_slack_ns = 0;
}

/* A run with a duration sends every datagram due before its deadline and
 * none after, however the worker waits: a wake-up that comes late past the
 * deadline still sends what fell due before it (the sleeping pacer's last
 * window was lost so), and -t 0.3 at 10k/s is 3000 datagrams (due at 0,
 * 100 us, ..., 299.9 ms), at 200k/s 60000. */
static void duration_sends_all_due(void **st)
{
	(void)st;
	for (int mode = 0; mode < 2; mode++) {
		g_slack_ns = mode ? TXS_PACE_SLACK_DEFAULT_NS : 0;
		g_slack_gaps = mode ? TXS_PACE_SLACK_GAPS : 0;
		struct run r = run_engine("dummy", 1, 0, 0.3, 10000, false, 16);
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.packets, 3000);
		r = run_engine("dummy", 1, 0, 0.3, 200000, false, 16);
		assert_int_equal(r.packets, 60000);
		r = run_engine("dummy", 2, 0, 0.3, 10000, false, 16);
		assert_int_equal(r.packets, 3000);
	}
	g_slack_ns = 0;
	g_slack_gaps = 0;
}

/* A rate no worker keeps (1e9/s for 0.3 s: 3e8 datagrams due): the run
 * stops TXS_PACE_LATE_MAX_NS (1 s) after its duration instead of sending
 * all of them (seconds more; hours at a rate further out of reach), and
 * counts what it left: sent + due_unsent is exactly what fell due. A run that keeps up leaves nothing (0 unsent). */
static void duration_behind_stops(void **st)
{
	(void)st;
	for (unsigned w = 1; w <= 2; w++) {
		struct run r = run_engine("dummy", w, 0, 0.3, 1e9, false, 16);
		assert_int_equal(r.rc, 0);
		if (r.packets + r.due_unsent != 300000000ull || !(r.secs < 4.0) || r.due_unsent == 0)
			print_message("%u workers: %llu sent + %llu unsent in %.3f s\n", w, (unsigned long long)r.packets,
				      (unsigned long long)r.due_unsent, r.secs);
		assert_int_equal(r.packets + r.due_unsent, 300000000ull);
		assert_true(r.due_unsent > 0);
		assert_true(r.secs >= 0.3 + TXS_PACE_LATE_MAX_NS / 1e9 - 0.01 && r.secs < 4.0);
	}
	struct run r = run_engine("dummy", 1, 0, 0.3, 10000, false, 16);
	assert_int_equal(r.packets, 3000);
	assert_int_equal(r.due_unsent, 0);
}

/* A generator that records, per fill, the monotonic clock and how many
 * datagrams it filled (one frame each). */
#define SP_MAX 8192
static struct {
	uint64_t t[SP_MAX];
	unsigned n[SP_MAX];
	unsigned calls;
} g_sp;

static unsigned sp_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	(void)w;
	(void)now_ns;
	for (unsigned i = 0; i < n; i++)
		blank_frame(&b[i]);
	if (g_sp.calls < SP_MAX) {
		g_sp.t[g_sp.calls] = txs_now_mono_ns();
		g_sp.n[g_sp.calls++] = n;
	}
	return n;
}

static const struct txs_gen_ops sp_gen = { .fill = sp_fill };

/* One worker at rate for count datagrams, waiting by (slack, gaps): every
 * datagram sent; no fill holds a datagram before its due time (datagram j
 * is due at t0 + j / rate, t0 no earlier than the clock read before the
 * start); returns the mean datagrams per fill. */
static double sp_run(double rate, uint64_t count, uint64_t slack, unsigned gaps)
{
	memset(&g_sp, 0, sizeof(g_sp));
	struct txs_netdev *dev = open_dev("dummy", 1, 2048);
	struct txs_engine_conf ec = { .n_workers = 1, .count = count, .rate_pps = rate, .dev = dev, .gen = &sp_gen,
				      .burst = 64, .pace_slack_ns = slack, .pace_slack_gaps = gaps };
	uint64_t before = txs_now_mono_ns();
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row row;
	txs_engine_read(e, &row);
	assert_int_equal(row.packets, count);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
	assert_true(g_sp.calls < SP_MAX);
	uint64_t done = 0;
	for (unsigned k = 0; k < g_sp.calls; k++) {
		done += g_sp.n[k];
		/* the last datagram of this fill, done - 1, was due then */
		double due = (double)before + (double)(done - 1) * 1e9 / rate;
		assert_true((double)g_sp.t[k] >= due);
	}
	assert_int_equal(done, count);
	return (double)count / g_sp.calls;
}

/* The sleeping pacer sends the datagrams that fall due within its window
 * together: at 100k/s (one every 10 us) a 50 us window leaves about six
 * per fill (a late wake-up only makes more due), where the window's edge
 * cuts it at fewer than three the engine sent one at a time; the auto
 * window (two gaps at least) takes three at 10k/s; spin-exact sends what is
 * due, never ahead either. */
static void sleeping_pacer_batches(void **st)
{
	(void)st;
	double per = sp_run(100000, 6000, 50000, 0);
	print_message("sleeping pacer, 100k/s, 50 us: %.2f datagrams per fill\n", per);
	assert_true(per >= 4);
	per = sp_run(10000, 600, TXS_PACE_SLACK_DEFAULT_NS, TXS_PACE_SLACK_GAPS);
	print_message("sleeping pacer, 10k/s, auto: %.2f datagrams per fill\n", per);
	assert_true(per >= 2.5);
	per = sp_run(20000, 2000, 0, 0);
	print_message("spin-exact, 20k/s: %.2f datagrams per fill\n", per);
	/* the window's limits: refused above TXS_PACE_SLACK_MAX_NS */
	struct txs_netdev *dev = open_dev("dummy", 1, 2048);
	struct txs_engine *e;
	struct txs_engine_conf ec = { .n_workers = 1, .count = 1, .dev = dev, .gen = &sp_gen,
				      .pace_slack_ns = TXS_PACE_SLACK_MAX_NS + 1 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	txs_netdev_close(dev);
}

static void config_errors(void **st)
{
	(void)st;
	struct txs_gen_conf gc = gen_conf(false, 16);
	struct txs_netdev *dev = open_dev("dummy", 1, 0);
	struct txs_engine *e;
	struct txs_engine_conf ec = { .n_workers = 2, .dev = dev, .gen = &txs_udp_gen_ops, .gen_conf = &gc };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL); /* more workers than queues */
	ec.n_workers = 0;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.n_workers = 1;
	ec.rate_pps = -1;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.rate_pps = NAN;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.rate_pps = INFINITY;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.rate_pps = 0;
	/* rate profiles: bad schedules */
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_POISSON }; /* no mean rate */
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_RAMP, .ramp_from = 0, .ramp_to = 0, .ramp_secs = 1 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_RAMP, .ramp_from = 1, .ramp_to = 2, .ramp_secs = 0 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_RAMP, .ramp_from = 1, .ramp_to = 2, .ramp_secs = 1,
					  .burst_on = 4, .burst_off_ns = 1 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	static const uint64_t desc[] = { 5, 1 };
	ec.pace = (struct txs_pace_conf){ .kind = TXS_PACE_TABLE, .table_ns = desc, .table_n = 2 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL); /* not ascending */
	ec.pace = (struct txs_pace_conf){ .kind = (enum txs_pace_kind)9 };
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.pace = (struct txs_pace_conf){ 0 };
	ec.timestamps = (enum txs_ts_mode)5;
	assert_int_equal(txs_engine_create(&e, &ec), -EINVAL);
	ec.timestamps = TXS_TS_BURST;
	/* a generator whose template cannot be built: the worker fails, wait reports it */
	gc.spec.payload_len = 70000;
	ec.count = 10;
	assert_int_equal(t_engine_run(&ec), -EMSGSIZE);
	/* pinning to a CPU that does not exist */
	gc.spec.payload_len = 16;
	int cpu = 4095;
	ec.cpus = &cpu;
	assert_int_equal(t_engine_run(&ec), -EINVAL);
	txs_netdev_close(dev);
}

T_MAIN(cmocka_unit_test(exact_counts),
       cmocka_unit_test(duration_stops),
       cmocka_unit_test(rate_control),
       cmocka_unit_test(workers_staggered),
       cmocka_unit_test(tiny_rate_waits),
       cmocka_unit_test(ramp_never_ahead),
       cmocka_unit_test(poisson_never_ahead),
       cmocka_unit_test(schedule_poisson_exponential),
       cmocka_unit_test(schedule_shapes),
       cmocka_unit_test(engine_keeps_schedule),
       cmocka_unit_test(bursts_keep_silence),
       cmocka_unit_test(table_schedule),
       cmocka_unit_test(timestamps_per_packet),
       cmocka_unit_test(timestamps_interp),
       cmocka_unit_test(timestamps_interp_never_ahead),
       cmocka_unit_test(stop_from_another_thread),
       cmocka_unit_test(sleeping_pacer_keeps_properties),
       cmocka_unit_test(sleeping_pacer_batches),
       cmocka_unit_test(duration_sends_all_due),
       cmocka_unit_test(duration_behind_stops),
       cmocka_unit_test(config_errors))
