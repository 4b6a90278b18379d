/* SPDX-License-Identifier: MIT */
/* Workers (each pinned to its CPU when conf.cpus gives one), each owning its
 * queue, generator state and stats. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <txscale/engine.h>
#include "worker.h"

struct txs_engine {
	struct txs_engine_conf conf;
	struct txs_wk *w;   /* n_workers, cache aligned */
	int stop;               /* relaxed flag */
	int running;            /* workers still running */
	uint64_t t_start;       /* mono ns */
	uint64_t t_end;
	bool started;
	unsigned n_created;
	int ready;              /* workers past setup */
	int go;                 /* start signal */
};

/* The rate profile's own rules (txs_engine_create, txs_pace_schedule) */
static int pace_check(const struct txs_engine_conf *c)
{
	if (!(c->rate_pps >= 0) || !isfinite(c->rate_pps))
		return -EINVAL;
	const struct txs_pace_conf *pc = &c->pace;
	switch (pc->kind) {
	case TXS_PACE_CONST:
		break;
	case TXS_PACE_RAMP:
		if (!(pc->ramp_from >= 0) || !(pc->ramp_to >= 0) || !isfinite(pc->ramp_from) ||
		    !isfinite(pc->ramp_to) || !(pc->ramp_secs > 0) || !isfinite(pc->ramp_secs) ||
		    (pc->ramp_from == 0 && pc->ramp_to == 0))
			return -EINVAL;
		break;
	case TXS_PACE_POISSON:
		if (!(c->rate_pps > 0))
			return -EINVAL;
		break;
	case TXS_PACE_TABLE:
		if (!pc->table_ns || !pc->table_n || c->n_workers != 1)
			return -EINVAL;
		for (uint64_t i = 1; i < pc->table_n; i++)
			if (pc->table_ns[i] < pc->table_ns[i - 1])
				return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (pc->burst_on && pc->kind != TXS_PACE_CONST)
		return -EINVAL;
	if (c->pace_slack_ns > TXS_PACE_SLACK_MAX_NS || c->pace_slack_gaps > 1000)
		return -EINVAL;
	return 0;
}

TXS_API int txs_engine_create(struct txs_engine **out, const struct txs_engine_conf *c)
{
	*out = NULL;
	if (!c->n_workers || c->n_workers > TXS_MAX_CORES || !c->dev || !c->gen || !c->gen->fill ||
	    !(c->rate_pps >= 0) || !isfinite(c->rate_pps) || !(c->duration >= 0) || c->burst > TXS_MAX_BURST ||
	    c->n_workers > c->dev->conf.max_queues)
		return -EINVAL;
	if (c->profile_every && !TXS_PROF_SUPPORTED)
		return -ENOTSUP; /* no cycle counter we know how to read */
	if (pace_check(c) < 0)
		return -EINVAL;
	if (c->timestamps != TXS_TS_BURST && c->timestamps != TXS_TS_PACKET && c->timestamps != TXS_TS_INTERP)
		return -EINVAL;
	struct txs_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->conf = *c;
	if (!e->conf.burst)
		e->conf.burst = 32;
	if (!e->conf.retries)
		e->conf.retries = 8;
	e->w = aligned_alloc(TXS_CACHE_LINE, sizeof(*e->w) * c->n_workers);
	if (!e->w) {
		free(e);
		return -ENOMEM;
	}
	memset(e->w, 0, sizeof(*e->w) * c->n_workers);
	uint64_t base = c->count / c->n_workers, rem = c->count % c->n_workers;
	for (unsigned i = 0; i < c->n_workers; i++) {
		struct txs_wk *w = &e->w[i];
		w->pub.id = i;
		w->cpu = c->cpus ? c->cpus[i] : -1;
		w->eng = e;
		w->quota = c->count ? base + (i < rem) : UINT64_MAX;
		w->rate_pps = c->rate_pps / c->n_workers;
	}
	*out = e;
	return 0;
}

static inline bool stopping(struct txs_engine *e)
{
	return __atomic_load_n(&e->stop, __ATOMIC_RELAXED);
}

/* Wait until `when` (mono ns), spin-exact (conf.pace_slack_ns 0): sleep for
 * long gaps, spin for short ones. */
static void pace_until(struct txs_engine *e, uint64_t when)
{
	for (;;) {
		uint64_t now = txs_now_mono_ns();
		if (now >= when || stopping(e))
			return;
		uint64_t gap = when - now;
		if (gap > 60000) {
			struct timespec ts = { 0, (long)(gap - 50000) };
			if (gap - 50000 >= 1000000000ull) {
				ts.tv_sec = 0;
				ts.tv_nsec = 200000000;
			}
			nanosleep(&ts, NULL);
		} else {
			__builtin_ia32_pause();
		}
	}
}

#define PACE_SLEEP_SLICE_NS 200000000ull /* a stop is seen within this */

/* Sleep until `when` (mono ns) on an absolute deadline, in slices that let a
 * stop be seen: the sleeping pacer (conf.pace_slack_ns > 0). */
static void pace_sleep(struct txs_engine *e, uint64_t when)
{
	for (;;) {
		uint64_t now = txs_now_mono_ns();
		if (now >= when || stopping(e))
			return;
		uint64_t t = when - now > PACE_SLEEP_SLICE_NS ? now + PACE_SLEEP_SLICE_NS : when;
		struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* Pacing arithmetic in double, clamped before any conversion: at very low
 * rates (1e-11 packets/s) j * ns_per_pkt exceeds 2^64, and converting that
 * to uint64_t is undefined (x86 gives 0: a worker that spins instead of
 * waiting). */
#define PACE_NS_MAX 1.8e19 /* below 2^64 */

/* When packet j is due (mono ns), UINT64_MAX when beyond the clock's range. */
static inline uint64_t pace_due(uint64_t t0, double off, uint64_t j, double ns_per_pkt)
{
	double d = off + (double)j * ns_per_pkt;
	if (!(d < PACE_NS_MAX - (double)t0))
		return UINT64_MAX;
	return t0 + (uint64_t)d;
}

/* How many packets are due by `now`: those with j * ns_per_pkt + off <= now - t0. */
static inline uint64_t pace_allowed(uint64_t now, uint64_t t0, double off, double ns_per_pkt)
{
	double el = (double)(int64_t)(now - t0) - off;
	if (el < 0)
		return 0;
	double k = el / ns_per_pkt;
	return k < PACE_NS_MAX ? (uint64_t)k + 1 : UINT64_MAX;
}

/* ---- the schedule of one worker (include/txscale/engine.h, rate profiles) ----
 * State on the worker's stack. allowed(now, cap) = how many of the worker's
 * datagrams are due at mono time `now` (it may stop counting at cap: the
 * caller never needs more); due(j) = when datagram j is due, asked only for
 * a j that is not yet allowed (POISSON and TABLE answer with the next due
 * time, which is earlier or equal: the caller waits and asks again). */
struct pacer {
	enum txs_pace_kind kind;
	bool on;             /* false: unlimited CONST without bursts */
	uint64_t t0;
	double off, ns;      /* CONST: worker offset, ns per datagram of this worker (0: unlimited) */
	/* CONST bursts */
	uint64_t bon, g;     /* datagrams per group, current group */
	double gstart, boff; /* current group's start (ns after t0), silence */
	/* RAMP: global rates in datagrams per ns */
	double f, to, a, S, NS, P, k;
	/* POISSON, TABLE: datagram n is due at `next` (mono ns, double) */
	uint64_t n;
	double next, mean;
	uint64_t rng[2];
	const uint64_t *tab;
	uint64_t tn, ti, period, base;
};

static inline uint64_t rng_next(uint64_t *s)
{
	/* xorshift128+ */
	uint64_t x = s[0], y = s[1];
	s[0] = y;
	x ^= x << 23;
	s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
	return s[1] + y;
}

static inline double exp_gap(struct pacer *p)
{
	double u = (double)(rng_next(p->rng) >> 11) * 0x1.0p-53; /* [0, 1) */
	return -log1p(-u) * p->mean;
}

/* worker `id` of c->n_workers, sending rate_pps of the total */
static void pacer_init(struct pacer *p, const struct txs_engine_conf *c, unsigned id, double rate_pps, uint64_t t0)
{
	const struct txs_pace_conf *pc = &c->pace;
	memset(p, 0, sizeof(*p));
	p->kind = pc->kind;
	p->t0 = t0;
	p->P = c->n_workers;
	p->k = id;
	p->ns = rate_pps > 0 ? 1e9 / rate_pps : 0;
	/* worker k of P sends its datagram j at t0 + (j + k/P) * ns_per_pkt:
	 * the workers interleave on the grid of the total rate instead of all
	 * sending their first datagram at t0 (-b 1 -P 8 -t 1.5 sends 2, not 8) */
	p->off = p->ns * id / c->n_workers;
	p->on = p->ns > 0 || pc->burst_on || pc->kind != TXS_PACE_CONST;
	p->bon = pc->burst_on;
	p->boff = (double)pc->burst_off_ns;
	p->gstart = p->off;
	switch (pc->kind) {
	case TXS_PACE_RAMP:
		p->f = pc->ramp_from / 1e9;
		p->to = pc->ramp_to / 1e9;
		p->S = pc->ramp_secs * 1e9;
		p->a = (p->to - p->f) / p->S;
		p->NS = p->f * p->S + p->a * p->S * p->S / 2;
		break;
	case TXS_PACE_POISSON: {
		uint64_t x = pc->seed;
		if (!x && getrandom(&x, sizeof(x), 0) != sizeof(x))
			x = txs_now_mono_ns();
		x += id * 0x632be59bd9b4e019ull;
		p->rng[0] = txs_rng_next(&x);
		p->rng[1] = txs_rng_next(&x) | 1;
		p->mean = 1e9 / rate_pps;
		p->next = (double)t0 + exp_gap(p);
		break;
	}
	case TXS_PACE_TABLE:
		p->tab = pc->table_ns;
		p->tn = pc->table_n;
		p->period = pc->table_period_ns;
		p->base = t0;
		p->next = (double)t0 + (double)p->tab[0];
		break;
	default:
		break;
	}
}

/* RAMP: datagrams of the whole run due by t ns after t0 (N(t), fractional) */
static inline double ramp_n(const struct pacer *p, double t)
{
	if (t < p->S)
		return p->f * t + p->a * t * t / 2;
	return p->NS + p->to * (t - p->S);
}

/* RAMP: when the run's datagram m is due (ns after t0); < 0: never */
static inline double ramp_t(const struct pacer *p, double m)
{
	if (m <= 0)
		return 0;
	if (m <= p->NS) {
		double d = p->f * p->f + 2 * p->a * m;
		double q = p->f + sqrt(d > 0 ? d : 0);
		return q > 0 ? 2 * m / q : p->S;
	}
	if (p->to <= 0)
		return -1;
	return p->S + (m - p->NS) / p->to;
}

static inline uint64_t pacer_allowed(struct pacer *p, uint64_t now, uint64_t done, uint64_t cap)
{
	switch (p->kind) {
	case TXS_PACE_CONST:
		if (TXS_UNLIKELY(p->bon)) {
			if (done >= (p->g + 1) * p->bon) {
				/* the next group: after the silence, counted from its
				 * schedule or from now (the last one's send), the later */
				double sched = p->gstart + (double)(p->bon - 1) * p->ns + p->boff;
				double real = (double)(int64_t)(now - p->t0) + p->boff;
				p->g = done / p->bon;
				p->gstart = sched > real ? sched : real;
			}
			uint64_t first = p->g * p->bon;
			double el = (double)(int64_t)(now - p->t0) - p->gstart;
			if (el < 0)
				return first;
			if (p->ns <= 0)
				return first + p->bon;
			double k = el / p->ns;
			return k < (double)(p->bon - 1) ? first + (uint64_t)k + 1 : first + p->bon;
		}
		return pace_allowed(now, p->t0, p->off, p->ns);
	case TXS_PACE_RAMP: {
		double t = (double)(int64_t)(now - p->t0);
		if (t < 0)
			return 0;
		double m = ramp_n(p, t);
		if (m < p->k)
			return 0;
		double j = (m - p->k) / p->P;
		return j < PACE_NS_MAX ? (uint64_t)j + 1 : UINT64_MAX;
	}
	case TXS_PACE_POISSON:
		while (p->n < cap && p->next <= (double)now) {
			p->n++;
			p->next += exp_gap(p);
		}
		return p->n;
	case TXS_PACE_TABLE:
		while (p->n < cap && p->next <= (double)now) {
			p->n++;
			if (++p->ti == p->tn) {
				p->ti = 0;
				p->base += p->period;
			}
			p->next = (double)p->base + (double)p->tab[p->ti];
		}
		return p->n;
	}
	return UINT64_MAX;
}

static inline uint64_t pacer_due(const struct pacer *p, uint64_t j)
{
	double d;
	switch (p->kind) {
	case TXS_PACE_CONST:
		if (TXS_UNLIKELY(p->bon))
			d = p->gstart + (double)(j - p->g * p->bon) * p->ns;
		else
			return pace_due(p->t0, p->off, j, p->ns);
		break;
	case TXS_PACE_RAMP:
		d = ramp_t(p, (double)j * p->P + p->k);
		if (d < 0)
			return UINT64_MAX;
		d += 1; /* rounding: allowed() must see it due then */
		break;
	default:
		return p->next < PACE_NS_MAX ? (uint64_t)p->next + 1 : UINT64_MAX;
	}
	if (!(d < PACE_NS_MAX - (double)p->t0))
		return UINT64_MAX;
	return p->t0 + (uint64_t)d;
}

/* The sleeping pacer's window for worker w (conf.pace_slack_ns and _gaps) */
static uint64_t pace_window(const struct txs_engine_conf *c, const struct pacer *p)
{
	uint64_t win = c->pace_slack_ns;
	if (win && c->pace_slack_gaps && p->kind == TXS_PACE_CONST && !p->bon && p->ns > 0) {
		double g = p->ns * c->pace_slack_gaps;
		uint64_t gw = g < (double)TXS_PACE_SLACK_GAPS_MAX_NS ? (uint64_t)g : TXS_PACE_SLACK_GAPS_MAX_NS;
		if (gw > win)
			win = gw;
	}
	return win;
}

/* The sleeping pacer's wake-up: datagram done + need - 1 (the first unit
 * not yet sent) is due at `next`; the worker sleeps until the due time of
 * the last datagram that falls due within slack of it (at most `want` from
 * done, none due at or after the run's deadline), so those leave together.
 * Asked on a copy of the pacer: the stateful schedules (POISSON, TABLE) count ahead on the copy only, and wake
 * at the window's end when more than one unit falls in it. The caller asks
 * allowed() again once awake: the schedule, not this answer, says what may
 * leave (never ahead). */
static uint64_t pacer_wake(const struct pacer *p, uint64_t done, uint64_t need, unsigned want, uint64_t next,
			   uint64_t slack, uint64_t deadline)
{
	if (p->bon || next == UINT64_MAX || next > UINT64_MAX - slack)
		return next;
	/* the window ends before the deadline: a datagram due before it is
	 * never kept waiting for one due after it */
	uint64_t lim = next + slack < deadline ? next + slack : deadline - 1, cap = done + (want > need ? want : need);
	if (lim <= next)
		return next;
	struct pacer t = *p;
	uint64_t a = pacer_allowed(&t, lim, done, cap);
	if (a > cap)
		a = cap;
	if (a <= done + need)
		return next;
	if (p->kind == TXS_PACE_POISSON || p->kind == TXS_PACE_TABLE)
		return lim;
	uint64_t d = pacer_due(p, a - 1);
	return d > next && d <= lim ? d : next;
}

TXS_API const char *txs_pace_mode(const struct txs_engine_conf *c, const struct txs_netdev *dev, uint64_t *window_ns)
{
	if (window_ns)
		*window_ns = 0;
	if (!c->n_workers || pace_check(c) < 0)
		return "invalid";
	struct pacer p;
	pacer_init(&p, c, 0, c->rate_pps / c->n_workers, 0);
	uint64_t win = p.on ? pace_window(c, &p) : 0;
	if (window_ns)
		*window_ns = win;
	if (!p.on)
		return "none";
	if (!win)
		return "spin";
	if (dev && dev->txtime_clock >= 0 && !p.bon && (p.kind == TXS_PACE_CONST || p.kind == TXS_PACE_RAMP))
		return "txtime";
	return "sleep";
}

TXS_API int64_t txs_pace_schedule(const struct txs_engine_conf *c, unsigned worker, uint64_t *due_ns, uint64_t n)
{
	if (!c || (!due_ns && n) || !c->n_workers || c->n_workers > TXS_MAX_CORES || worker >= c->n_workers ||
	    n > INT64_MAX || pace_check(c) < 0)
		return -EINVAL;
	struct pacer p;
	pacer_init(&p, c, worker, c->rate_pps / c->n_workers, 0);
	/* the worker loop with sends that take no time: datagram j leaves at
	 * the first `now` where the schedule allows it, asked as the loop asks */
	uint64_t now = 0;
	for (uint64_t j = 0; j < n; j++) {
		while (p.on && pacer_allowed(&p, now, j, j + 1) < j + 1) {
			uint64_t d = pacer_due(&p, j);
			if (d == UINT64_MAX)
				return (int64_t)j; /* the schedule ends (a ramp to 0) */
			now = d > now ? d : now + 1;
		}
		due_ns[j] = now;
	}
	return (int64_t)n;
}

#if defined(__x86_64__)
/* One (TSC, CLOCK_REALTIME) pair: the realtime read between two TSC reads,
 * paired with their middle; of `tries` attempts the one with the closest
 * TSC reads (a preemption or interrupt between them would pair the clock
 * with a TSC value up to half of it earlier: 12 us ahead was seen here
 * without this). Returns the TSC reads' distance. */
static uint64_t tsc_pair(uint64_t *tsc, uint64_t *ns, unsigned tries)
{
	uint64_t best = UINT64_MAX;
	for (unsigned i = 0; i < tries; i++) {
		uint64_t a = txs_prof_stamp(), r = txs_now_real_ns(), b = txs_prof_stamp();
		if (b >= a && b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = r;
		}
	}
	return best;
}
#endif

/* TXS_TS_PACKET/INTERP: the TSC's ns per tick in 32.32 fixed point, measured
 * against CLOCK_REALTIME over 5 ms from two tight pairs; 0 where the TSC is
 * not known to be invariant (txs_worker_clock() then reads the clock per
 * datagram). */
static uint64_t tsc_calibrate(void)
{
#if defined(__x86_64__)
	unsigned a, b, cc, d;
	if (!__get_cpuid(0x80000007, &a, &b, &cc, &d) || !(d & (1u << 8)))
		return 0;
	uint64_t c0 = 0, r0 = 0, c1 = 0, r1 = 0;
	tsc_pair(&c0, &r0, 8);
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	tsc_pair(&c1, &r1, 8);
	if (c1 <= c0 || r1 <= r0)
		return 0;
	__extension__ typedef unsigned __int128 u128;
	return (uint64_t)(((u128)(r1 - r0) << 32) / (c1 - c0));
#else
	return 0;
#endif
}

TXS_API uint64_t txs_worker_clock(const struct txs_worker *w)
{
#if defined(__x86_64__)
	if (TXS_LIKELY(w->ts_mult))
		return txs_worker_stamp(w);
#endif
	return txs_now_real_ns();
}

static inline uint64_t rd_tsc(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

/* TXS_TS_PACKET: txs_worker_stamp() counts TSC ticks from a base pair (TSC,
 * CLOCK_REALTIME) taken at the start of a burst, renewed once the TSC has
 * moved ts_rebase_ticks (about 100 us) past it: the calibration's error
 * (~1e-5) and an NTP slew (<= 500 ppm) then add at most 1 ns and 50 ns,
 * while one clock_gettime per burst would cost more than the reads per
 * datagram it corrects (0.8 ns a datagram at 32 per burst). The base
 * realtime read is paired with the middle of the two TSC reads around it. */
static inline uint64_t ts_rebase(struct txs_wk *w)
{
	if (!w->pub.ts_mult)
		return 0; /* no invariant TSC: every stamp is a clock_gettime */
	uint64_t c0 = rd_tsc();
	if (TXS_LIKELY(c0 - w->pub.ts_tsc0 < w->ts_rebase_ticks))
		return c0;
#if defined(__x86_64__)
	/* a pair whose TSC reads are more than ~1 us apart (preempted) is not
	 * taken: the old base goes on (its drift over another 100 us is ns) */
	uint64_t tsc = c0, ns = w->pub.ts_ns0;
	if (tsc_pair(&tsc, &ns, 2) < w->ts_rebase_ticks / 100 || !w->pub.ts_tsc0) {
		w->pub.ts_ns0 = ns;
		w->pub.ts_tsc0 = tsc;
	}
#endif
	return rd_tsc();
}

/* CLOCK_REALTIME ns of a TSC read, from the worker's base */
static inline uint64_t ts_conv(const struct txs_wk *w, uint64_t c)
{
	uint64_t d = c - w->pub.ts_tsc0;
	if ((int64_t)d < 0)
		d = 0;
	__extension__ typedef unsigned __int128 u128;
	return w->pub.ts_ns0 + (uint64_t)(((u128)d * w->pub.ts_mult) >> 32);
}

/* TXS_TS_PACKET: fill the burst one unit (datagram, its fragments, a GSO
 * call: min_frames buffers) at a time, each with its own clock read. Same
 * contract as one fill() of n buffers. */
static unsigned fill_each(struct txs_wk *w, unsigned (*fill)(struct txs_worker *, struct txs_pktbuf *, unsigned,
								 uint64_t), struct txs_pktbuf *b, unsigned n)
{
	const unsigned step = w->pub.min_frames, fpd = w->pub.frames_per_dgram;
	const bool multi = step > fpd; /* GSO: the generator reads w->pub.left */
	unsigned done = 0;
	while (done < n) {
		unsigned k = n - done < step ? n - done : step;
		unsigned f = fill(&w->pub, b + done, k, txs_worker_clock(&w->pub));
		if (multi && f) {
			uint64_t dg = 0;
			for (unsigned i = done; i < done + f; i++)
				dg += b[i].segs;
			dg /= fpd;
			w->pub.left = w->pub.left > dg ? w->pub.left - dg : 0;
		}
		done += f;
		if (f < k || (multi && !w->pub.left))
			break;
	}
	return done;
}

/* TXS_TS_INTERP: the step for a burst of n datagrams, in 32.32 ns (enum
 * txs_ts_mode). No stamp may be later than the moment its burst is handed
 * to the device, so the step times the burst's datagrams must not exceed
 * its fill. A burst's fill takes a + b n (a per burst, b per datagram); a
 * checked burst of f took T, so T / max(f, n) <= (a + b n) / n for a burst
 * of n at that pace: ts_steps[n] is 7/8 of the least of that over every
 * burst checked, from the least fill time of each size (ts_min). The least
 * never rises: a core's pace changes with what its hyperthread sibling runs
 * (2x under load here), and a step learnt while the sibling was busy put
 * stamps ahead once it went idle. Until TXS_TS_STEP_CHECKS bursts were
 * checked, 1 ns: no fill of a datagram is that fast, so the stamps are
 * distinct and late, never ahead. */
static void ts_steps_make(struct txs_wk *w)
{
	uint64_t suf = UINT64_MAX, pre = UINT64_MAX; /* least T/f over f >= n; least T over f < n */
	for (unsigned f = TXS_MAX_BURST; f >= 1; f--) {
		if (w->ts_min[f] != UINT64_MAX && (w->ts_min[f] << 32) / f < suf)
			suf = (w->ts_min[f] << 32) / f;
		w->ts_steps[f] = suf;
	}
	for (unsigned n = 1; n <= TXS_MAX_BURST; n++) {
		if (pre != UINT64_MAX && (pre << 32) / n < w->ts_steps[n])
			w->ts_steps[n] = (pre << 32) / n;
		if (w->ts_min[n] < pre)
			pre = w->ts_min[n];
		uint64_t st = w->ts_steps[n];
		w->ts_steps[n] = st == UINT64_MAX ? (uint64_t)1 << 32 : st - st / 8;
	}
}

/* A checked burst of f datagrams took ns (bursts of 4 s or more, preempted,
 * are no pace). */
static void ts_min_add(struct txs_wk *w, unsigned f, uint64_t ns)
{
	if (f > TXS_MAX_BURST || ns >> 32 || ns >= w->ts_min[f])
		return;
	w->ts_min[f] = ns;
	w->ts_checked_min = true;
}

/* A burst's fill with per-datagram stamps (TXS_TS_PACKET, TXS_TS_INTERP;
 * enum txs_ts_mode). */
static unsigned fill_stamped(struct txs_wk *w, const struct txs_gen_ops *g, struct txs_pktbuf *b, unsigned n)
{
	uint64_t c0 = ts_rebase(w);
	if (!g->stamps_each)
		return fill_each(w, g->fill, b, n);
	if (w->eng->conf.timestamps != TXS_TS_INTERP || !w->pub.ts_mult) {
		w->pub.ts_cur = TXS_TS_PACKET;
		return g->fill(&w->pub, b, n, w->pub.ts_mult ? ts_conv(w, c0) : txs_now_real_ns());
	}
	__extension__ typedef unsigned __int128 u128;
	const uint64_t t0 = ts_conv(w, c0);
	if (TXS_UNLIKELY(w->ts_bursts < TXS_TS_WARMUP)) {
		/* warm-up: a read per datagram while the first bursts fault in
		 * pages and caches (their pace is not the run's) */
		w->ts_bursts++;
		w->pub.ts_cur = TXS_TS_PACKET;
		return g->fill(&w->pub, b, n, t0);
	}
	/* the first 16 interpolated bursts all checked */
	const bool check = w->ts_bursts < TXS_TS_WARMUP + 16 || w->ts_bursts % TXS_TS_CHECK_EVERY == 0;
	w->ts_bursts++;
	w->pub.ts_cur = TXS_TS_INTERP;
	w->pub.ts_t0 = t0;
	w->pub.ts_step = w->ts_checks >= TXS_TS_STEP_CHECKS && n <= TXS_MAX_BURST ? w->ts_steps[n] : (uint64_t)1 << 32;
	unsigned f = g->fill(&w->pub, b, n, t0);
	if (check && f) {
		uint64_t t1 = ts_conv(w, rd_tsc());
		uint64_t pred = t0 + (uint64_t)(((u128)w->pub.ts_step * f) >> 32);
		uint64_t err = pred > t1 ? pred - t1 : t1 - pred;
		w->ts_err_n++;
		w->ts_err_sum += err;
		if (err > w->ts_err_max)
			w->ts_err_max = err;
		unsigned k = err ? 64u - (unsigned)__builtin_clzll(err) : 0; /* err < 2^k */
		w->ts_err_hist[k < TXS_TS_ERR_BUCKETS ? k : TXS_TS_ERR_BUCKETS - 1]++;
		/* the last datagram's stamp later than the clock at hand-off */
		w->ts_ahead += t0 + (uint64_t)(((u128)w->pub.ts_step * (f - 1)) >> 32) > t1;
		ts_min_add(w, f, t1 > t0 ? t1 - t0 : 0);
		if (++w->ts_checks >= TXS_TS_STEP_CHECKS && w->ts_checked_min) {
			ts_steps_make(w);
			w->ts_checked_min = false;
		}
	}
	return f;
}

static int worker_setup(struct txs_wk *w)
{
	const struct txs_engine_conf *c = &w->eng->conf;
	int rc = txs_pin_self(w->cpu);
	if (rc < 0)
		return rc;
	rc = txs_txq_open(c->dev, w->pub.id, &w->pub.txq);
	if (rc < 0)
		return rc;
	w->pub.frames_per_dgram = w->pub.min_frames = 1;
	if (c->gen->init) {
		rc = c->gen->init(&w->pub, c->gen_conf);
		if (rc < 0)
			return rc;
		w->gen_ready = true;
	}
	if (!w->pub.frames_per_dgram || !w->pub.min_frames || w->pub.min_frames % w->pub.frames_per_dgram ||
	    (c->burst && w->pub.min_frames > c->burst))
		return -EINVAL; /* a burst must hold the smallest whole unit */
	return 0;
}

/* The worker loop, instantiated twice from worker_loop.h: worker_run() is the
 * plain loop, worker_loop_prof() samples one burst in conf.profile_every
 * (include/txscale/engine.h, docs/profile.md). Two preprocessor instances
 * rather than one inline function with a constant flag: the compiler then
 * sees the plain loop exactly as it was written before profiling existed and
 * emits the same code for it (an inlined generic body is register-allocated
 * differently). */
/* A sampled burst that took far longer than the kept ones was preempted or
 * interrupted: its cycles belong to another thread, not to a stage. Kept:
 * anything under 16x the mean of the samples kept so far (after 16 of them),
 * and under 2^21 cycles (about 1 ms) before that. */
static inline bool prof_preempted(const struct txs_prof_run *pf, uint64_t loop)
{
	if (pf->samples < 16)
		return loop > (1u << 21);
	return loop > 16 * (pf->loop / pf->samples);
}

#define WL_NAME worker_run
#define WL_PROF 0
#include "worker_loop.h"
#define WL_NAME worker_loop_prof
#define WL_PROF 1
#include "worker_loop.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* What one counter read adds to an interval between two reads: the median of
 * back-to-back pairs. */
static uint64_t prof_stamp_cost(void)
{
	uint64_t d[127];
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(d); i++) {
		uint64_t a = txs_prof_stamp();
		d[i] = txs_prof_stamp() - a;
	}
	qsort(d, TXS_ARRAY_SIZE(d), sizeof(d[0]), cmp_u64);
	return d[TXS_ARRAY_SIZE(d) / 2];
}

static __attribute__((noinline)) int worker_run_prof(struct txs_wk *w)
{
	struct txs_prof_run *pf = &w->run;
	pf->split = w->eng->conf.gen->fill_prof != NULL && !w->pub.ts_packet;
	w->pub.prof.stamp_cost = prof_stamp_cost();
	uint64_t ns0 = txs_now_mono_ns(), tsc0 = txs_prof_stamp();
	int rc = worker_loop_prof(w);
	pf->tsc = txs_prof_stamp() - tsc0;
	pf->ns = txs_now_mono_ns() - ns0;
	return rc;
}

static void *worker_main(void *arg)
{
	struct txs_wk *w = arg;
	struct txs_engine *e = w->eng;
	int rc = worker_setup(w);
	if (rc < 0)
		__atomic_store_n(&e->stop, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&e->ready, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&e->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (rc == 0)
		rc = e->conf.profile_every ? worker_run_prof(w) : worker_run(w);
	if (w->gen_ready && e->conf.gen->fini)
		e->conf.gen->fini(&w->pub);
	txs_txq_close(w->pub.txq);
	w->error = rc;
	if (__atomic_sub_fetch(&e->running, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_store_n(&e->t_end, txs_now_mono_ns(), __ATOMIC_RELEASE);
	return NULL;
}

TXS_API int txs_engine_start(struct txs_engine *e)
{
	if (e->started)
		return -EALREADY;
	unsigned n = e->conf.n_workers;
	e->running = (int)n;
	e->started = true;
	unsigned created = 0;
	int rc = 0;
	for (; created < n; created++) {
		rc = pthread_create(&e->w[created].thread, NULL, worker_main, &e->w[created]);
		if (rc) {
			rc = -rc;
			__atomic_store_n(&e->stop, 1, __ATOMIC_RELAXED);
			__atomic_sub_fetch(&e->running, (int)(n - created), __ATOMIC_ACQ_REL);
			break;
		}
	}
	e->n_created = created;
	while (__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) < (int)created)
		sched_yield();
	if (e->conf.timestamps != TXS_TS_BURST) {
		uint64_t mult = tsc_calibrate();
		/* ticks in 100 us: 1e5 ns * 2^32 / mult */
		uint64_t rb = mult ? (uint64_t)((100000.0 * 4294967296.0) / (double)mult) : 0;
		for (unsigned i = 0; i < n; i++) {
			e->w[i].pub.ts_packet = true;
			e->w[i].ts_bursts = e->w[i].ts_checks = 0;
			for (unsigned f = 0; f <= TXS_MAX_BURST; f++)
				e->w[i].ts_min[f] = UINT64_MAX;
			e->w[i].ts_checked_min = false;
			e->w[i].pub.ts_step = 0;
			e->w[i].ts_err_n = e->w[i].ts_err_sum = e->w[i].ts_err_max = e->w[i].ts_ahead = 0;
			memset(e->w[i].ts_err_hist, 0, sizeof(e->w[i].ts_err_hist));
			e->w[i].pub.ts_mult = mult;
			e->w[i].ts_rebase_ticks = rb;
			e->w[i].pub.ts_tsc0 = 0; /* the first burst takes a base */
		}
	}
	e->t_start = txs_now_mono_ns();
	__atomic_store_n(&e->go, 1, __ATOMIC_RELEASE);
	return rc;
}

TXS_API void txs_engine_stop(struct txs_engine *e)
{
	__atomic_store_n(&e->stop, 1, __ATOMIC_RELAXED);
}

TXS_API bool txs_engine_done(struct txs_engine *e)
{
	return __atomic_load_n(&e->running, __ATOMIC_ACQUIRE) == 0;
}

TXS_API int txs_engine_wait(struct txs_engine *e)
{
	int rc = 0;
	for (unsigned i = 0; i < e->n_created; i++) {
		pthread_join(e->w[i].thread, NULL);
		if (!rc && e->w[i].error < 0)
			rc = e->w[i].error;
	}
	e->n_created = 0;
	return rc;
}

TXS_API void txs_engine_destroy(struct txs_engine *e)
{
	if (!e)
		return;
	if (e->n_created) {
		txs_engine_stop(e);
		txs_engine_wait(e);
	}
	free(e->w);
	free(e);
}

TXS_API double txs_engine_read(struct txs_engine *e, struct txs_stat_row *rows)
{
	for (unsigned i = 0; i < e->conf.n_workers; i++)
		txs_core_stats_read(&e->w[i].stats, &rows[i]);
	if (!e->t_start)
		return 0;
	uint64_t end = __atomic_load_n(&e->t_end, __ATOMIC_ACQUIRE);
	if (!end)
		end = txs_now_mono_ns();
	return (double)(end - e->t_start) / 1e9;
}

TXS_API unsigned txs_engine_workers(const struct txs_engine *e)
{
	return e->conf.n_workers;
}

TXS_API struct txs_worker *txs_engine_worker(struct txs_engine *e, unsigned i)
{
	return i < e->conf.n_workers ? &e->w[i].pub : NULL;
}

static const char *const prof_names[TXS_PROF_STAGES] = { "ident", "linksel", "header", "device", "other" };

TXS_API const char *txs_prof_stage_name(unsigned stage)
{
	return stage < TXS_PROF_STAGES ? prof_names[stage] : NULL;
}

TXS_API int txs_engine_prof(struct txs_engine *e, struct txs_prof_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (!e->conf.profile_every)
		return -ENODATA;
	out->every = e->conf.profile_every;
	out->split = e->conf.gen->fill_prof != NULL && e->conf.timestamps == TXS_TS_BURST;
	int64_t cyc[TXS_PROF_STAGES] = { 0 };
	uint64_t tsc = 0, ns = 0;
	for (unsigned i = 0; i < e->conf.n_workers; i++) {
		const struct txs_prof *p = &e->w[i].pub.prof;
		const struct txs_prof_run *r = &e->w[i].run;
		out->samples += r->samples;
		out->discarded += r->discarded;
		out->pkts += r->pkts;
		tsc += r->tsc;
		ns += r->ns;
		out->stamp_cycles += (double)p->stamp_cost / e->conf.n_workers;
		/* every interval between two reads carries one read's cost */
		int64_t loop = (int64_t)r->loop - (int64_t)(p->stamps - r->samples) * (int64_t)p->stamp_cost;
		int64_t staged = 0;
		for (unsigned s = 0; s < TXS_PROF_OTHER; s++) {
			cyc[s] += p->cyc[s];
			staged += p->cyc[s];
		}
		if (r->samples)
			cyc[TXS_PROF_OTHER] += loop - staged;
	}
	out->tsc_hz = ns ? (double)tsc * 1e9 / (double)ns : 0;
	double total = 0;
	for (unsigned s = 0; s < TXS_PROF_STAGES; s++) {
		out->cycles[s] = cyc[s] > 0 ? (double)cyc[s] : 0;
		total += out->cycles[s];
	}
	for (unsigned s = 0; s < TXS_PROF_STAGES; s++) {
		out->share[s] = total > 0 ? out->cycles[s] / total : 0;
		out->cyc_per_pkt[s] = out->pkts ? out->cycles[s] / (double)out->pkts : 0;
		out->ns_per_pkt[s] = out->tsc_hz > 0 ? out->cyc_per_pkt[s] * 1e9 / out->tsc_hz : 0;
	}
	return 0;
}

TXS_API uint64_t txs_engine_due_unsent(const struct txs_engine *e)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < e->conf.n_workers; i++)
		n += e->w[i].due_unsent;
	return n;
}

TXS_API int txs_engine_ts_check(struct txs_engine *e, struct txs_ts_check *out)
{
	memset(out, 0, sizeof(*out));
	if (e->conf.timestamps != TXS_TS_INTERP)
		return -ENODATA;
	uint64_t n = 0, sum = 0, max = 0, ahead = 0, hist[TXS_TS_ERR_BUCKETS] = { 0 };
	double step = 0;
	unsigned ws = 0;
	for (unsigned i = 0; i < e->conf.n_workers; i++) {
		const struct txs_wk *w = &e->w[i];
		for (unsigned k = 0; k < TXS_TS_ERR_BUCKETS; k++)
			hist[k] += w->ts_err_hist[k];
		n += w->ts_err_n;
		sum += w->ts_err_sum;
		ahead += w->ts_ahead;
		if (w->ts_err_max > max)
			max = w->ts_err_max;
		if (w->pub.ts_step) {
			step += (double)w->pub.ts_step / 4294967296.0;
			ws++;
		}
	}
	if (!n)
		return -ENODATA;
	out->bursts = n;
	out->ahead = ahead;
	out->err_mean_ns = (double)sum / (double)n;
	out->err_max_ns = max;
	uint64_t acc = 0;
	for (unsigned k = 0; k < TXS_TS_ERR_BUCKETS; k++) {
		acc += hist[k];
		uint64_t ub = k + 1 < TXS_TS_ERR_BUCKETS ? (uint64_t)1 << k : max;
		if (!out->err_p50_ns && 2 * acc >= n)
			out->err_p50_ns = ub;
		if (!out->err_p99_ns && 100 * acc >= 99 * n)
			out->err_p99_ns = ub;
	}
	out->step_ns = ws ? step / ws : 0;
	return 0;
}
