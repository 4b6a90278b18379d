/* SPDX-License-Identifier: MIT */
/* txscale engine: one pinned worker thread per CPU, each with its own device
 * queue and generator state, running until a packet count, a duration, or a
 * stop request. Rate control per worker.
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

/* What fills frames: the engine allocates device buffers, the generator
 * writes them. fill() sets len (and link, segs, gso_size if used) for each of
 * the n buffers and returns how many it filled (< n only on error; the rest are
 * released). Returning 0 ends the worker with w->fill_err (or -EIO). now_ns is the CLOCK_REALTIME time of the burst. */
struct txs_gen_ops {
	int (*init)(struct txs_worker *w, void *conf);      /* per worker, on its thread */
	unsigned (*fill)(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns);
	void (*fini)(struct txs_worker *w);
};

struct txs_engine_conf {
	unsigned n_workers;
	const int *cpus;      /* n_workers entries; NULL or -1 = not pinned */
	uint64_t count;       /* total packets (GSO segments count); 0 = no limit */
	double duration;      /* seconds; 0 = no limit */
	double rate_pps;      /* total wire packets/s split evenly; 0 = unlimited */
	unsigned burst;       /* frames per device call (default 32, max 256) */
	unsigned retries;     /* resends of a partially accepted burst before dropping (default 8) */
	struct txs_netdev *dev;
	const struct txs_gen_ops *gen;
	void *gen_conf;
};

struct txs_worker {
	struct txs_core_stats stats;   /* own cache line(s), first */
	unsigned id;
	int cpu;
	struct txs_txq *txq;
	void *gen;                     /* generator's per-worker state */
	uint64_t quota;                /* packets to send, UINT64_MAX = no limit */
	double rate_pps;               /* 0 = unlimited */
	int error;                     /* -errno if the worker failed */
	int fill_err;                  /* set by a generator whose fill() returns 0 (-ENETDOWN, ...) */
	bool gen_ready;
	struct txs_engine *eng;
	pthread_t thread;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

struct txs_engine;

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
TXS_API struct txs_worker *txs_engine_worker(struct txs_engine *e, unsigned i);

/* Monotonic and realtime clocks in ns. */
TXS_API uint64_t txs_now_mono_ns(void);
TXS_API uint64_t txs_now_real_ns(void);

#ifdef __cplusplus
}
#endif
#endif
