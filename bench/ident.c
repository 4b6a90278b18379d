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
 * Reuse distance, measured separately (not timed): T core handles driven
 * from one thread in a random interleaving, as a receiver sees T cores'
 * packets mixed; each core calls txs_ident_core_tick() every 32 IDs, as the
 * generator does per burst. --hot: every ID goes to the destination;
 * --spread: 1 in 16 does, the rest go to random buckets. The figure is the
 * smallest number of IDs the destination received between two uses of the
 * same ID, over 4 * 65536 IDs to it (0 = no ID repeated). */
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
	bool hot, spread, json, api;
	uint64_t ops;
	unsigned runs;
};

#define O(f) offsetof(struct ident_cfg, f)
static const struct opt ident_opts[] = {
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

static void *thr_run(void *arg)
{
	struct thr *t = arg;
	if (t->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	struct txs_ident_core *c = NULL;
	t->rc = txs_ident_core_open(t->id, t->k, &c);
	pthread_barrier_wait(t->bar);
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

static uint64_t sm(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Reuse distance for one destination (see the top comment); -1 on error. */
static long reuse_distance(const char *strategy, unsigned T, bool spread, uint32_t dest)
{
	struct txs_ident_conf conf = { .strategy = strategy, .max_cores = T, .seed = 2 };
	struct txs_ident *id;
	if (txs_ident_create(&id, &conf) < 0)
		return -1;
	struct txs_ident_core *c[TXS_MAX_CORES];
	unsigned calls[TXS_MAX_CORES] = { 0 };
	for (unsigned k = 0; k < T; k++)
		if (txs_ident_core_open(id, k, &c[k]) < 0) {
			txs_ident_destroy(id);
			return -1;
		}
	uint32_t *last = malloc(sizeof(*last) * 65536);
	if (!last) {
		txs_ident_destroy(id);
		return -1;
	}
	memset(last, 0xff, sizeof(*last) * 65536);
	uint64_t r = 12345;
	long best = 0;
	for (uint32_t got = 0; got < 4 * 65536;) {
		uint64_t x = sm(&r);
		unsigned k = (unsigned)(x % T);
		bool to_dest = !spread || ((x >> 32) & 15) == 0;
		uint32_t h = to_dest ? dest : (uint32_t)(x >> 40);
		if (++calls[k] % 32 == 0)
			txs_ident_core_tick(c[k]);
		uint16_t v = txs_ident_reserve_fast(c[k], h, 1);
		if (!to_dest)
			continue;
		if (last[v] != UINT32_MAX && (best == 0 || got - last[v] < (uint32_t)best))
			best = got - last[v];
		last[v] = got++;
	}
	free(last);
	txs_ident_destroy(id);
	return best;
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

int bench_ident(int argc, char **argv)
{
	struct ident_cfg cfg = { 0 };
	const char *pos[1];
	int npos;
	int rc = opt_parse("bench ident", "[options]", ident_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (cfg.hot && cfg.spread) {
		fprintf(stderr, "txscale bench ident: --hot and --spread exclude each other\n");
		return 2;
	}
	unsigned tl[64], nt;
	if (opt_parse_uint_list(cfg.threads, tl, 64, &nt) < 0 || nt == 0) {
		fprintf(stderr, "txscale bench ident: bad value for --threads: '%s'\n", cfg.threads);
		return 2;
	}
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
		       "%-15s %7s %10s %13s %15s\n",
		       hot ? "one hot destination" : "destinations spread over 2048 buckets",
		       (unsigned long long)cfg.ops, cfg.runs, cfg.api ? "out-of-line" : "inline",
		       clock_ns(), "strategy", "threads", "Mops/s", "ns/op/thread", "reuse_distance");
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
			long reuse = reuse_distance(sl[si], T, !hot, hash);
			rows[nrows++] = (struct row){ sl[si], T, mops };
			if (cfg.json)
				printf("{\"bench\":\"ident\",\"strategy\":\"%s\",\"threads\":%u,\"hot\":%s,\"mops\":%.3f,"
				       "\"ns_per_op\":%.3f,\"reuse_distance\":%ld}\n",
				       sl[si], T, hot ? "true" : "false", mops, nsop, reuse);
			else
				printf("%-15s %7u %10.2f %13.2f %15ld\n", sl[si], T, mops, nsop, reuse);
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
