/* SPDX-License-Identifier: MIT */
/* Per-core workers: pinned, each owning its queue, generator state and stats. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/engine.h>

#define TXS_MAX_BURST 256

struct txs_engine {
	struct txs_engine_conf conf;
	struct txs_worker *w;   /* n_workers, cache aligned */
	int stop;               /* relaxed flag */
	int running;            /* workers still running */
	uint64_t t_start;       /* mono ns */
	uint64_t t_end;
	bool started;
	unsigned n_created;
	int ready;              /* workers past setup */
	int go;                 /* start signal */
};

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

TXS_API int txs_engine_create(struct txs_engine **out, const struct txs_engine_conf *c)
{
	*out = NULL;
	if (!c->n_workers || c->n_workers > TXS_MAX_CORES || !c->dev || !c->gen || !c->gen->fill ||
	    !(c->rate_pps >= 0) || !isfinite(c->rate_pps) || !(c->duration >= 0) || c->burst > TXS_MAX_BURST ||
	    c->n_workers > c->dev->conf.max_queues)
		return -EINVAL;
	if (c->profile_every && !TXS_PROF_SUPPORTED)
		return -ENOTSUP; /* no cycle counter we know how to read */
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
		struct txs_worker *w = &e->w[i];
		w->id = i;
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

/* Wait until `when` (mono ns): sleep for long gaps, spin for short ones. */
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

static int worker_setup(struct txs_worker *w)
{
	const struct txs_engine_conf *c = &w->eng->conf;
	if (w->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (rc)
			return -rc;
	}
	int rc = txs_txq_open(c->dev, w->id, &w->txq);
	if (rc < 0)
		return rc;
	w->frames_per_dgram = w->min_frames = 1;
	if (c->gen->init) {
		rc = c->gen->init(w, c->gen_conf);
		if (rc < 0)
			return rc;
		w->gen_ready = true;
	}
	if (!w->frames_per_dgram || !w->min_frames || w->min_frames % w->frames_per_dgram ||
	    (c->burst && w->min_frames > c->burst))
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
static inline bool prof_preempted(const struct txs_prof *pf, uint64_t loop)
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

static __attribute__((noinline)) int worker_run_prof(struct txs_worker *w)
{
	struct txs_prof *pf = &w->prof;
	pf->split = w->eng->conf.gen->fill_prof != NULL;
	pf->stamp_cost = prof_stamp_cost();
	uint64_t ns0 = txs_now_mono_ns(), tsc0 = txs_prof_stamp();
	int rc = worker_loop_prof(w);
	pf->tsc = txs_prof_stamp() - tsc0;
	pf->ns = txs_now_mono_ns() - ns0;
	return rc;
}

static void *worker_main(void *arg)
{
	struct txs_worker *w = arg;
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
		e->conf.gen->fini(w);
	txs_txq_close(w->txq);
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
	return i < e->conf.n_workers ? &e->w[i] : NULL;
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
	out->split = e->conf.gen->fill_prof != NULL;
	int64_t cyc[TXS_PROF_STAGES] = { 0 };
	uint64_t tsc = 0, ns = 0;
	for (unsigned i = 0; i < e->conf.n_workers; i++) {
		const struct txs_prof *p = &e->w[i].prof;
		out->samples += p->samples;
		out->discarded += p->discarded;
		out->pkts += p->pkts;
		tsc += p->tsc;
		ns += p->ns;
		out->stamp_cycles += (double)p->stamp_cost / e->conf.n_workers;
		/* every interval between two reads carries one read's cost */
		int64_t loop = (int64_t)p->loop - (int64_t)(p->stamps - p->samples) * (int64_t)p->stamp_cost;
		int64_t staged = 0;
		for (unsigned s = 0; s < TXS_PROF_OTHER; s++) {
			cyc[s] += p->cyc[s];
			staged += p->cyc[s];
		}
		if (p->samples)
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
