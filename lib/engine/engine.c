/* SPDX-License-Identifier: MIT */
/* Per-core workers: pinned, each owning its queue, generator state and stats. */
#include <errno.h>
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
	    c->rate_pps < 0 || c->duration < 0 || c->burst > TXS_MAX_BURST ||
	    c->n_workers > c->dev->conf.max_queues)
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
	if (c->gen->init) {
		rc = c->gen->init(w, c->gen_conf);
		if (rc < 0)
			return rc;
		w->gen_ready = true;
	}
	return 0;
}

static int worker_run(struct txs_worker *w)
{
	struct txs_engine *e = w->eng;
	const struct txs_engine_conf *c = &e->conf;
	struct txs_pktbuf bufs[TXS_MAX_BURST];
	uint64_t t0 = txs_now_mono_ns();
	uint64_t deadline = c->duration > 0 ? t0 + (uint64_t)(c->duration * 1e9) : UINT64_MAX;
	double ns_per_pkt = w->rate_pps > 0 ? 1e9 / w->rate_pps : 0;
	uint64_t done = 0; /* wire packets built (sent or dropped) */
	struct txs_txq *q = w->txq;
	int rc = 0;

	while (done < w->quota && !stopping(e)) {
		uint64_t mono = txs_now_mono_ns();
		if (mono >= deadline)
			break;
		unsigned want = c->burst;
		if (w->quota - done < want)
			want = (unsigned)(w->quota - done);
		if (ns_per_pkt > 0) {
			/* packets allowed by now: packet k is due at t0 + k * ns_per_pkt */
			uint64_t allowed = (uint64_t)((double)(mono - t0) / ns_per_pkt) + 1;
			if (allowed <= done) {
				uint64_t next = t0 + (uint64_t)((double)done * ns_per_pkt);
				pace_until(e, next < deadline ? next : deadline);
				continue;
			}
			if (allowed - done < want)
				want = (unsigned)(allowed - done);
		}
		unsigned n = txs_txq_alloc(q, bufs, want);
		if (n == 0) {
			/* ring full: let completions happen; a device that failed for good ends the worker */
			rc = txs_txq_flush(q);
			if (rc < 0)
				break;
			continue;
		}
		unsigned filled = c->gen->fill(w, bufs, n, txs_now_real_ns());
		if (filled < n)
			txs_txq_release(q, bufs + filled, n - filled);
		if (filled == 0) {
			TXS_STAT_ADD(w->stats.errors, 1);
			rc = w->fill_err ? w->fill_err : -EIO;
			break;
		}
		unsigned sent = 0, tries = 0;
		for (;;) {
			sent += txs_txq_send(q, bufs + sent, filled - sent);
			if (sent == filled || ++tries > c->retries)
				break;
			txs_txq_flush(q);
		}
		uint64_t pk = 0, by = 0, dr = 0;
		for (unsigned i = 0; i < sent; i++) {
			pk += bufs[i].segs;
			by += bufs[i].len;
		}
		for (unsigned i = sent; i < filled; i++)
			dr += bufs[i].segs;
		if (sent < filled)
			txs_txq_release(q, bufs + sent, filled - sent);
		TXS_STAT_ADD(w->stats.packets, pk);
		TXS_STAT_ADD(w->stats.bytes, by);
		if (dr)
			TXS_STAT_ADD(w->stats.drops, dr);
		TXS_STAT_ADD(w->stats.bursts, 1);
		done += pk + dr;
	}
	txs_txq_flush(q);
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
		rc = worker_run(w);
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
