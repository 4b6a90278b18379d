/* SPDX-License-Identifier: MIT */
/* bench ident: the IP ID allocators (lib/ident) head to head.
 *
 * Speed: T pinned threads, each with its own core handle, call
 * txs_ident_reserve_fast(hash, 1) (--api: txs_ident_reserve()) --ops times,
 * either all on one destination (--hot: one bucket shared by every thread,
 * the seed thread's case) or on hashes cycling through all buckets
 * (--spread). Reported: total Mops/s (all IDs / wall time from the first
 * start to the last finish) and ns per ID per thread (the thread's CPU time
 * / its IDs, mean over threads), each the median of --runs runs.
 *
 * Reuse distance (--reuse), on the real clock: T pinned threads really run,
 * each paced at --rates R IDs/s (0 = unlimited), reserving IDs in bursts of
 * at most 32 (txs_ident_core_tick() once per burst, as the generator), over
 * --dests D destinations in turn (each at 1/D of the traffic). Every ID of
 * destination 0 is recorded with (thread, time the burst was complete: when
 * the generator would flush it); the records of
 * all threads are merged by time (then thread, then order), which is the
 * order a receiver behind a perfect wire would see. The reuse distance of an
 * ID is the number of that destination's IDs between two uses of it (65536 =
 * the kernel's window); reported: min / p1 / median over every repeat, and
 * the positions wasted and skipped by deltas (lease). Each point stops after
 * --reuse-ids IDs to destination 0 (all threads together).
 * The old figure (cores driven from one thread with a simulated tick) is
 * gone: it measured only the infinite-rate corner. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/txscale.h>
#include <txscale/ident.h>
#include "bench_util.h"
#include "opt.h"

struct ident_cfg {
	const char *strategies, *threads;
	struct opt_cpus cpus;
	bool hot, spread, json, api, reuse;
	uint64_t ops, reuse_ids;
	unsigned runs;
	const char *rates, *dests;
};

#define O(f) offsetof(struct ident_cfg, f)
static const struct txs_opt ident_opts[] = {
	{ "strategies", 0, OPT_STR, O(strategies), "LIST", "strategies to run, comma-separated",
	  "cas-loop,atomic,percpu-segment,lease,flow" },
	{ "threads", 0, OPT_STR, O(threads), "LIST", "thread counts, e.g. 1,2", "1,2" },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "CPUs to pin to, in order (default: all allowed)" },
	{ "hot", 0, OPT_FLAG, O(hot), NULL, "every thread sends to one destination (default)" },
	{ "spread", 0, OPT_FLAG, O(spread), NULL, "destinations spread over every bucket" },
	{ "ops", 'n', OPT_U64, O(ops), "N", "IDs per thread per run", "10M", 1000, 0 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "runs per point (median reported)", "3", 1, 1000 },
	{ "api", 0, OPT_FLAG, O(api), NULL, "call the out-of-line txs_ident_reserve() instead of the inline fast path" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object per row" },
	{ "reuse", 0, OPT_FLAG, O(reuse), NULL,
	  "measure the reuse distance on the real clock (paced threads) instead of the speed" },
	{ "rates", 0, OPT_STR, O(rates), "LIST", "--reuse: IDs/s per thread, comma-separated (k/M suffixes; 0 = unlimited)",
	  "1k,10k,100k,0" },
	{ "dests", 0, OPT_STR, O(dests), "LIST", "--reuse: destination counts (traffic split evenly), e.g. 1,16", "1" },
	{ "reuse-ids", 0, OPT_U64, O(reuse_ids), "N", "--reuse: IDs to the measured destination per point (> 65536)",
	  "150000", 70000, 100000000 },
	OPT_END
};
#undef O

struct thr {
	struct txs_ident *id;
	unsigned k;
	int cpu;
	uint64_t ops;
	uint32_t hash;
	bool spread, api;
	pthread_barrier_t *bar;
	uint64_t t0, t1, sink;
	double cpu_s;
	int rc;
} TXS_CACHE_ALIGNED;

/* CPU time of the calling thread: on a shared machine it leaves out the
 * time other processes and interrupts took from us. */
static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A measuring thread's start: pinned (best effort: unpinned, it still
 * runs), its core opened (*rc: the result), then the barrier all meet at. */
static struct txs_ident_core *thr_start(struct txs_ident *id, unsigned k, int cpu, pthread_barrier_t *bar, int *rc)
{
	(void)txs_pin_self(cpu);
	struct txs_ident_core *c = NULL;
	*rc = txs_ident_core_open(id, k, &c);
	pthread_barrier_wait(bar);
	return c;
}

static void *thr_run(void *arg)
{
	struct thr *t = arg;
	struct txs_ident_core *c = thr_start(t->id, t->k, t->cpu, t->bar, &t->rc);
	if (t->rc)
		return NULL;
	uint64_t sink = 0, n = t->ops;
	uint32_t h = t->hash;
	double c0 = thread_cpu();
	t->t0 = txs_now_mono_ns();
	if (t->api && t->spread) {
		for (uint64_t i = 0; i < n; i++) {
			sink += txs_ident_reserve(c, h, 1);
			h += 0x9e3779b1u;
		}
	} else if (t->api) {
		for (uint64_t i = 0; i < n; i++)
			sink += txs_ident_reserve(c, h, 1);
	} else if (t->spread) {
		for (uint64_t i = 0; i < n; i++) {
			sink += txs_ident_reserve_fast(c, h, 1);
			h += 0x9e3779b1u; /* odd step: visits every bucket */
		}
	} else {
		for (uint64_t i = 0; i < n; i++)
			sink += txs_ident_reserve_fast(c, h, 1);
	}
	t->t1 = txs_now_mono_ns();
	t->cpu_s = thread_cpu() - c0;
	t->sink = sink;
	txs_ident_core_close(c);
	return NULL;
}

/* One timed run; returns 0 and fills Mops total and mean ns/op per thread. */
static int run_once(const char *strategy, unsigned T, const int *cpus, const struct ident_cfg *cfg, uint32_t hash,
		    double *mops, double *ns_op)
{
	struct txs_ident_conf conf = { .strategy = strategy, .max_cores = T, .seed = 1 };
	struct txs_ident *id;
	int rc = txs_ident_create(&id, &conf);
	if (rc < 0)
		return rc;
	struct thr *t = aligned_alloc(TXS_CACHE_LINE, sizeof(*t) * T);
	pthread_t *th = calloc(T, sizeof(*th));
	if (!t || !th) {
		free(t);
		free(th);
		txs_ident_destroy(id);
		return -1;
	}
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, T);
	for (unsigned k = 0; k < T; k++) {
		memset(&t[k], 0, sizeof(t[k]));
		t[k] = (struct thr){ .id = id, .k = k, .cpu = cpus[k], .ops = cfg->ops, .hash = hash,
				     .spread = cfg->spread, .api = cfg->api, .bar = &bar };
		if (pthread_create(&th[k], NULL, thr_run, &t[k]) != 0)
			t[k].rc = -1, T = k; /* unwind below */
	}
	uint64_t first = UINT64_MAX, last = 0;
	double ns = 0;
	for (unsigned k = 0; k < T; k++) {
		pthread_join(th[k], NULL);
		if (t[k].rc)
			rc = -1;
		if (t[k].t0 < first)
			first = t[k].t0;
		if (t[k].t1 > last)
			last = t[k].t1;
		ns += t[k].cpu_s * 1e9 / (double)cfg->ops;
	}
	pthread_barrier_destroy(&bar);
	*mops = last > first ? (double)cfg->ops * T / ((double)(last - first) / 1e3) : 0;
	*ns_op = ns / T;
	free(t);
	free(th);
	txs_ident_destroy(id);
	return rc;
}

/* ---- real-time reuse distance --------------------------------------------- */

struct rec {
	uint64_t t;    /* time of the burst, ns */
	uint32_t ord;  /* order within the thread */
	uint16_t id;
	uint8_t thr;
};

struct rthr {
	struct txs_ident *id;
	unsigned k, dests;
	int cpu;
	uint64_t rate, want; /* IDs/s (0 = unlimited); records to take */
	const uint32_t *hash;
	pthread_barrier_t *bar;
	unsigned *running; /* threads past the barrier and on a CPU */
	unsigned nthr;
	struct rec *rec;
	uint64_t n; /* records taken */
	int rc;
} TXS_CACHE_ALIGNED;

static void sleep_until(uint64_t due)
{
	struct timespec ts = { (time_t)(due / 1000000000ull), (long)(due % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *rthr_run(void *arg)
{
	struct rthr *t = arg;
	struct txs_ident_core *c = thr_start(t->id, t->k, t->cpu, t->bar, &t->rc);
	if (t->rc)
		return NULL;
	/* start together: on a busy machine a thread may wait for a CPU long
	 * after the barrier, and an unlimited run is over in milliseconds */
	__atomic_fetch_add(t->running, 1, __ATOMIC_RELAXED);
	uint64_t t0 = txs_now_mono_ns(), sent = 0;
	while (__atomic_load_n(t->running, __ATOMIC_RELAXED) < t->nthr && txs_now_mono_ns() - t0 < 1000000000ull)
		sched_yield();
	t0 = txs_now_mono_ns();
	unsigned d = t->k % t->dests; /* threads start on different destinations */
	while (t->n < t->want) {
		uint64_t now = txs_now_mono_ns();
		unsigned burst = 32;
		if (t->rate) {
			/* IDs due by now; sleep when none is (longer gaps than 50 us) */
			uint64_t due = (now - t0) * t->rate / 1000000000ull + 1;
			if (due <= sent) {
				uint64_t next = t0 + (sent * 1000000000ull + t->rate - 1) / t->rate;
				if (next > now + 50000)
					sleep_until(next - 20000);
				continue;
			}
			if (due - sent < burst)
				burst = (unsigned)(due - sent);
		}
		txs_ident_core_tick(c); /* once per burst */
		uint64_t n0 = t->n;
		for (unsigned i = 0; i < burst && t->n < t->want; i++) {
			uint16_t v = txs_ident_reserve_fast(c, t->hash[d], 1);
			if (d == 0)
				t->rec[t->n] = (struct rec){ .ord = (uint32_t)t->n, .id = v, .thr = (uint8_t)t->k }, t->n++;
			if (++d == t->dests)
				d = 0;
		}
		/* the burst leaves when it is built, as the generator flushes it */
		now = txs_now_mono_ns();
		for (uint64_t j = n0; j < t->n; j++)
			t->rec[j].t = now;
		sent += burst;
	}
	txs_ident_core_close(c);
	return NULL;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->thr != y->thr)
		return x->thr < y->thr ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

struct reuse_res {
	uint32_t min, p1, median;
	uint64_t pairs, ids, wasted, skipped;
	double secs;
};

/* One point; 0 or -1. */
static int reuse_point(const char *strategy, unsigned T, const int *cpus, unsigned dests, uint64_t rate,
		       uint64_t total, struct reuse_res *res)
{
	struct txs_ident_conf conf = { .strategy = strategy, .max_cores = T };
	struct txs_ident *id;
	if (txs_ident_create(&id, &conf) < 0)
		return -1;
	uint32_t hash[4096];
	for (unsigned d = 0; d < dests; d++) /* 198.18.0.2 + d <- 198.18.0.1, UDP */
		hash[d] = txs_ident_hash4(id, htonl(0xc6120002u + d), htonl(0xc6120001u), 17);
	struct rthr *t = aligned_alloc(TXS_CACHE_LINE, sizeof(*t) * T);
	pthread_t *th = calloc(T, sizeof(*th));
	struct rec *all = malloc(sizeof(*all) * total);
	int rc = 0;
	if (!t || !th || !all) {
		rc = -1;
		goto out;
	}
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, T);
	unsigned running = 0;
	uint64_t off = 0;
	for (unsigned k = 0; k < T; k++) {
		uint64_t want = total / T + (k < total % T);
		t[k] = (struct rthr){ .id = id, .k = k, .dests = dests, .cpu = cpus[k], .rate = rate, .want = want,
				      .hash = hash, .bar = &bar, .running = &running, .nthr = T, .rec = all + off };
		off += want;
	}
	uint64_t s0 = txs_now_mono_ns();
	unsigned started = 0;
	for (; started < T; started++)
		if (pthread_create(&th[started], NULL, rthr_run, &t[started]) != 0)
			break;
	if (started < T) { /* cannot happen in practice: the barrier would hang */
		fprintf(stderr, "txscale bench ident: cannot start thread %u\n", started);
		exit(1);
	}
	for (unsigned k = 0; k < T; k++) {
		pthread_join(th[k], NULL);
		if (t[k].rc)
			rc = -1;
	}
	res->secs = (double)(txs_now_mono_ns() - s0) / 1e9;
	pthread_barrier_destroy(&bar);
	if (rc)
		goto out;
	qsort(all, total, sizeof(*all), rec_cmp);
	uint32_t *last = malloc(sizeof(*last) * 65536), *dist = malloc(sizeof(*dist) * total);
	if (!last || !dist) {
		free(last);
		free(dist);
		rc = -1;
		goto out;
	}
	memset(last, 0xff, sizeof(*last) * 65536);
	uint64_t np = 0;
	for (uint64_t j = 0; j < total; j++) {
		uint16_t v = all[j].id;
		if (last[v] != UINT32_MAX)
			dist[np++] = (uint32_t)(j - last[v]);
		last[v] = (uint32_t)j;
	}
	qsort(dist, np, sizeof(*dist), u32_cmp);
	res->pairs = np;
	res->ids = total;
	res->min = np ? dist[0] : 0;
	res->p1 = np ? dist[np / 100] : 0;
	res->median = np ? dist[np / 2] : 0;
	free(last);
	free(dist);
out:
	free(all);
	free(t);
	free(th);
	if (rc == 0)
		txs_ident_lease_waste(id, &res->wasted, &res->skipped);
	txs_ident_destroy(id);
	return rc;
}

static int list_u64(const char *what, const char *s, uint64_t *out, unsigned max, unsigned *n, bool rate)
{
	char *dup = strdup(s), *save = NULL;
	*n = 0;
	if (!dup)
		return -1;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (*n == max || txs_parse_count(tok, &v) < 0 || (!rate && (v == 0 || v > 4096))) {
			fprintf(stderr, "txscale bench ident: bad value for --%s: '%s'%s\n", what, tok,
				rate ? "" : ": 1..4096");
			free(dup);
			return -1;
		}
		out[(*n)++] = v;
	}
	free(dup);
	if (!*n) {
		fprintf(stderr, "txscale bench ident: --%s is empty\n", what);
		return -1;
	}
	return 0;
}

static int bench_reuse(const struct ident_cfg *cfg, const char *const *sl, unsigned ns, const unsigned *tl,
		       unsigned nt, const int *cpus, unsigned ncpu)
{
	uint64_t rates[32], dl[32];
	unsigned nr, nd;
	if (list_u64("rates", cfg->rates, rates, 32, &nr, true) < 0 || list_u64("dests", cfg->dests, dl, 32, &nd, false) < 0)
		return 2;
	if (!cfg->json)
		printf("# ident reuse distance on the real clock: paced threads, IDs to destination 0 merged by time;\n"
		       "# %llu IDs to it per point; distance = its IDs between two uses of an ID (kernel: 65536)\n"
		       "%-15s %7s %5s %9s %8s %7s %7s %7s %7s %8s %8s\n",
		       (unsigned long long)cfg->reuse_ids, "strategy", "threads", "dests", "rate/thr", "seconds", "repeats",
		       "min", "p1", "median", "wasted", "skipped");
	for (unsigned di = 0; di < nd; di++)
		for (unsigned ti = 0; ti < nt; ti++)
			for (unsigned ri = 0; ri < nr; ri++)
				for (unsigned si = 0; si < ns; si++) {
					unsigned T = tl[ti];
					int tc[TXS_MAX_CORES];
					for (unsigned i = 0; i < T; i++)
						tc[i] = cpus[i % ncpu];
					struct reuse_res r = { 0 };
					if (reuse_point(sl[si], T, tc, (unsigned)dl[di], rates[ri], cfg->reuse_ids, &r) < 0) {
						fprintf(stderr, "txscale bench ident: reuse run failed (%s)\n", sl[si]);
						return 1;
					}
					if (cfg->json)
						printf("{\"bench\":\"ident-reuse\",\"strategy\":\"%s\",\"threads\":%u,\"dests\":%u,"
						       "\"rate_per_thread\":%llu,\"seconds\":%.2f,\"ids\":%llu,\"repeats\":%llu,"
						       "\"min\":%u,\"p1\":%u,\"median\":%u,\"wasted\":%llu,\"skipped\":%llu}\n",
						       sl[si], T, (unsigned)dl[di], (unsigned long long)rates[ri], r.secs,
						       (unsigned long long)r.ids, (unsigned long long)r.pairs, r.min, r.p1,
						       r.median, (unsigned long long)r.wasted, (unsigned long long)r.skipped);
					else {
						char rb[24];
						if (rates[ri])
							snprintf(rb, sizeof(rb), "%llu", (unsigned long long)rates[ri]);
						else
							snprintf(rb, sizeof(rb), "max");
						printf("%-15s %7u %5u %9s %8.2f %7llu %7u %7u %7u %8llu %8llu\n", sl[si], T,
						       (unsigned)dl[di], rb, r.secs, (unsigned long long)r.pairs, r.min, r.p1,
						       r.median, (unsigned long long)r.wasted, (unsigned long long)r.skipped);
					}
					fflush(stdout);
				}
	return 0;
}

/* Cost of one coarse clock read, as the kernel models pay per ID. */
static double clock_ns(void)
{
	struct timespec ts;
	uint64_t t0 = txs_now_mono_ns(), acc = 0;
	for (int i = 0; i < 1000000; i++) {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		acc += (uint64_t)ts.tv_nsec;
	}
	uint64_t t1 = txs_now_mono_ns();
	return acc == 1 ? 0 : (double)(t1 - t0) / 1e6;
}

struct row {
	const char *strategy;
	unsigned threads;
	double mops;
};

static int ident_run(struct ident_cfg cfg)
{
	int rc;
	if (cfg.reuse && cfg.spread) {
		fprintf(stderr, "txscale bench ident: --reuse measures one destination; use --dests for many\n");
		return 2;
	}
	if (cfg.hot && cfg.spread) {
		fprintf(stderr, "txscale bench ident: --hot and --spread exclude each other\n");
		return 2;
	}
	unsigned tl[64], nt;
	if ((rc = bench_threads("bench ident", cfg.threads, tl, 64, &nt, true)))
		return rc;
	for (unsigned i = 0; i < nt; i++)
		if (tl[i] == 0 || tl[i] > TXS_MAX_CORES) {
			fprintf(stderr, "txscale bench ident: bad value for --threads: '%s': 1..%d\n", cfg.threads,
				TXS_MAX_CORES);
			return 2;
		}
	/* strategies: validate every name first */
	unsigned nknown;
	const char *const *known = txs_ident_strategies(&nknown);
	const char *sl[16];
	unsigned ns = 0;
	char *list = strdup(cfg.strategies), *save = NULL;
	if (!list)
		return 1;
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *match = NULL;
		for (unsigned i = 0; i < nknown; i++)
			if (strcmp(tok, known[i]) == 0)
				match = known[i];
		if (!match || ns == TXS_ARRAY_SIZE(sl)) {
			fprintf(stderr, "txscale bench ident: bad value for --strategies: '%s': valid are", tok);
			for (unsigned i = 0; i < nknown; i++)
				fprintf(stderr, "%s %s", i ? "," : "", known[i]);
			fprintf(stderr, "\n");
			free(list);
			return 2;
		}
		sl[ns++] = match;
	}
	free(list);
	if (!ns) {
		fprintf(stderr, "txscale bench ident: --strategies is empty\n");
		return 2;
	}
	int cpus[TXS_MAX_CORES];
	unsigned ncpu = bench_cpus(&cfg.cpus, cpus);
	if (!ncpu) {
		fprintf(stderr, "txscale bench ident: no CPU to run on\n");
		return 1;
	}
	if (cfg.reuse) {
		for (unsigned i = 0; i < nt; i++)
			if (cfg.cpus.n && tl[i] > ncpu) {
				fprintf(stderr, "txscale bench ident: %u threads but only %u CPUs in -A\n", tl[i], ncpu);
				return 2;
			}
		return bench_reuse(&cfg, sl, ns, tl, nt, cpus, ncpu);
	}
	/* one destination: 198.18.0.2 <- 198.18.0.1, UDP, under the key of a
	 * seeded instance (the bucket it lands in does not matter) */
	uint32_t hash;
	{
		struct txs_ident_conf hc = { .fixed_key = true, .key = { 1, 2, 3, 4, 5, 6, 7, 8 } };
		struct txs_ident *hid;
		if (txs_ident_create(&hid, &hc) < 0)
			return 1;
		hash = txs_ident_hash4(hid, htonl(0xc6120002), htonl(0xc6120001), 17);
		txs_ident_destroy(hid);
	}
	bool hot = !cfg.spread;
	if (!cfg.json)
		printf("# ident: %s, %llu IDs/thread, median of %u runs, %s path; coarse clock read %.1f ns\n"
		       "%-15s %7s %10s %13s\n",
		       hot ? "one hot destination" : "destinations spread over 2048 buckets",
		       (unsigned long long)cfg.ops, cfg.runs, cfg.api ? "out-of-line" : "inline",
		       clock_ns(), "strategy", "threads", "Mops/s", "ns/op/thread");
	struct row rows[16 * 64];
	unsigned nrows = 0;
	double *v = calloc(cfg.runs, sizeof(*v)), *w = calloc(cfg.runs, sizeof(*w));
	if (!v || !w) {
		free(v);
		free(w);
		return 1;
	}
	for (unsigned si = 0; si < ns; si++) {
		for (unsigned ti = 0; ti < nt; ti++) {
			unsigned T = tl[ti];
			if (cfg.cpus.n && T > ncpu) {
				fprintf(stderr, "txscale bench ident: %u threads but only %u CPUs in -A\n", T, ncpu);
				free(v);
				free(w);
				return 2;
			}
			int tc[TXS_MAX_CORES];
			for (unsigned i = 0; i < T; i++)
				tc[i] = cpus[i % ncpu];
			for (unsigned r = 0; r < cfg.runs; r++) {
				if (run_once(sl[si], T, tc, &cfg, hash, &v[r], &w[r]) < 0) {
					fprintf(stderr, "txscale bench ident: run failed (%s, %u threads)\n", sl[si], T);
					free(v);
					free(w);
					return 1;
				}
			}
			double mops = bench_median(v, cfg.runs), nsop = bench_median(w, cfg.runs);
			rows[nrows++] = (struct row){ sl[si], T, mops };
			if (cfg.json)
				printf("{\"bench\":\"ident\",\"strategy\":\"%s\",\"threads\":%u,\"hot\":%s,\"mops\":%.3f,"
				       "\"ns_per_op\":%.3f}\n",
				       sl[si], T, hot ? "true" : "false", mops, nsop);
			else
				printf("%-15s %7u %10.2f %13.2f\n", sl[si], T, mops, nsop);
			fflush(stdout);
		}
	}
	free(v);
	free(w);
	/* the issue's ratios, lease against each other strategy, per thread count */
	if (!cfg.json)
		for (unsigned ti = 0; ti < nt; ti++) {
			double lease = 0;
			for (unsigned i = 0; i < nrows; i++)
				if (rows[i].threads == tl[ti] && strcmp(rows[i].strategy, "lease") == 0)
					lease = rows[i].mops;
			if (lease <= 0)
				continue;
			printf("# %u thread%s: lease is", tl[ti], tl[ti] > 1 ? "s" : "");
			for (unsigned i = 0; i < nrows; i++)
				if (rows[i].threads == tl[ti] && strcmp(rows[i].strategy, "lease") && rows[i].mops > 0)
					printf(" %.2fx %s", lease / rows[i].mops, rows[i].strategy);
			printf("\n");
		}
	return 0;
}

BENCH_MAIN(bench_ident, "bench ident", struct ident_cfg, ident_opts, ident_run)
