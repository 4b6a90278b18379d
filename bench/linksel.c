/* SPDX-License-Identifier: MIT */
/* bench linksel: the cost of one link selection and how evenly the links are
 * loaded, per mode x counter scope x threads.
 *
 * Each point runs T pinned threads, each with its own core handle, twice:
 *   timing pass   n selections back to back; ns per selection per thread
 *                 (the mean over threads; the median over --runs runs). The
 *                 shared scope pays one contended atomic per selection here.
 *   spread pass   n selections again, recorded in blocks of 50 per thread
 *                 with a CLOCK_MONOTONIC stamp per block. The blocks of all
 *                 threads are merged in time order and cut into windows of
 *                 --window selections (1000); per window we take max/min of
 *                 the per-link packet counts (a link with none counts as 1)
 *                 and Jain's fairness index (sum x)^2 / (L * sum x^2), and
 *                 report the mean over windows.
 * --lockstep replaces the threads by T simulated cores that take turns one
 * selection each on one thread (the set-up of the unit test): the spread
 * percore loses and staggered keeps. Its ns/op is that of one thread. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <txscale/txscale.h>
#include "bench_util.h"
#include "opt.h"

#define BLOCK 50
#define FLOWS 16

struct ls_cfg {
	const char *modes, *scopes, *threads, *hash;
	unsigned links, pps, runs, window;
	uint64_t count;
	struct opt_cpus cpus;
	bool json, lockstep;
};

#define O(f) offsetof(struct ls_cfg, f)
static const struct txs_opt ls_opts[] = {
	{ "modes", 0, OPT_STR, O(modes), "LIST", "modes: balance-rr, active-backup, balance-xor, broadcast",
	  "balance-rr,active-backup,balance-xor,broadcast" },
	{ "scopes", 0, OPT_STR, O(scopes), "LIST", "balance-rr counter scopes", "shared,percore,staggered" },
	{ "threads", 0, OPT_STR, O(threads), "LIST", "thread counts, e.g. 1,2,4", "1,2" },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "CPUs to pin to, in order (default: all allowed)" },
	{ "links", 0, OPT_UINT, O(links), "N", "links of the bond", "4", 1, TXS_MAX_LINKS },
	{ "packets-per-slave", 0, OPT_UINT, O(pps), "N", "balance-rr packets_per_slave", "1", 0, 65535 },
	{ "hash", 0, OPT_STR, O(hash), "POLICY", "balance-xor hash: layer2, layer2+3, layer3+4", "layer3+4" },
	{ "packets", 'n', OPT_U64, O(count), "N", "selections per thread per pass", "2M", 1000, 0 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "runs per point (median ns/op reported)", "3", 1, 100 },
	{ "window", 0, OPT_UINT, O(window), "N", "selections per imbalance window (multiple of 50)", "1000", 50,
	  10000000 },
	{ "lockstep", 0, OPT_FLAG, O(lockstep), NULL, "simulate T cores in lock-step on one thread" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object per row" },
	OPT_END
};
#undef O

struct block {
	uint64_t t;
	uint32_t n[TXS_MAX_LINKS];
};

struct point {
	struct txs_linksel *ls;
	unsigned threads, links;
	uint64_t count;
	pthread_barrier_t bar;
};

struct thr {
	struct point *p;
	unsigned id;
	int cpu;
	double ns;            /* timing pass: ns per selection */
	struct block *blocks; /* spread pass */
	size_t n_blocks;
	int err;
	uint64_t sink;
	pthread_t th;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void make_keys(struct txs_linksel *ls, unsigned id, struct txs_flow_key *k)
{
	for (unsigned f = 0; f < FLOWS; f++) {
		memset(&k[f], 0, sizeof(k[f]));
		k[f].family = AF_INET;
		inet_pton(AF_INET, "198.18.0.1", k[f].saddr);
		inet_pton(AF_INET, "198.18.0.2", k[f].daddr);
		k[f].sport = (uint16_t)(40000 + id * FLOWS + f); /* iperf3 -P style: one port per flow */
		k[f].dport = 5201;
		k[f].proto = 17;
		k[f].src_mac[5] = 1;
		k[f].dst_mac[5] = 2;
		txs_linksel_key_prepare(ls, &k[f]);
	}
}

/* The spread pass of one core: n selections into blocks of BLOCK. */
static size_t spread(struct txs_linksel_core *c, const struct txs_flow_key *k, uint64_t n, struct block *b,
		     bool stamp)
{
	size_t nb = 0;
	for (uint64_t i = 0; i + BLOCK <= n; i += BLOCK, nb++) {
		memset(b[nb].n, 0, sizeof(b[nb].n));
		for (unsigned j = 0; j < BLOCK; j++) {
			uint32_t mask;
			if (txs_linksel_select_mask(c, &k[(i + j) % FLOWS], &mask) > 0)
				for (; mask; mask &= mask - 1)
					b[nb].n[__builtin_ctz(mask)]++;
		}
		b[nb].t = stamp ? mono_ns() : nb;
	}
	return nb;
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	struct point *p = t->p;
	(void)txs_pin_self(t->cpu); /* best effort: unpinned, it still runs */
	struct txs_linksel_core *c;
	t->err = txs_linksel_core_open(p->ls, t->id, &c);
	struct txs_flow_key k[FLOWS];
	make_keys(p->ls, t->id, k);
	pthread_barrier_wait(&p->bar);
	if (!t->err) {
		uint64_t sink = 0, t0 = mono_ns();
		if (txs_linksel_core_broadcast(c)) {
			for (uint64_t i = 0; i < p->count; i++) {
				uint32_t mask;
				sink += (uint64_t)txs_linksel_select_mask(c, &k[i % FLOWS], &mask) + mask;
			}
		} else {
			for (uint64_t i = 0; i < p->count; i++)
				sink += (uint64_t)txs_linksel_select(c, &k[i % FLOWS]);
		}
		t->ns = (double)(mono_ns() - t0) / (double)p->count;
		t->sink = sink;
	}
	pthread_barrier_wait(&p->bar);
	if (!t->err)
		t->n_blocks = spread(c, k, p->count, t->blocks, true);
	return NULL;
}

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = *(const struct block *const *)a, *y = *(const struct block *const *)b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* Sort blocks by time, cut windows of `window` selections, average. */
static void windows(struct block **all, size_t nb, unsigned links, unsigned window, double *imb, double *jain)
{
	qsort(all, nb, sizeof(*all), cmp_block);
	unsigned per = window / BLOCK;
	double si = 0, sj = 0;
	size_t nw = 0;
	for (size_t w = 0; (w + 1) * per <= nb; w++, nw++) {
		uint64_t x[TXS_MAX_LINKS] = { 0 };
		for (unsigned b = 0; b < per; b++)
			for (unsigned l = 0; l < links; l++)
				x[l] += all[w * per + b]->n[l];
		uint64_t mx = 0, mn = UINT64_MAX;
		double s = 0, s2 = 0;
		for (unsigned l = 0; l < links; l++) {
			mx = x[l] > mx ? x[l] : mx;
			mn = x[l] < mn ? x[l] : mn;
			s += (double)x[l];
			s2 += (double)x[l] * (double)x[l];
		}
		si += (double)mx / (double)(mn ? mn : 1);
		sj += s2 > 0 ? s * s / (links * s2) : 1;
	}
	*imb = nw ? si / nw : 0;
	*jain = nw ? sj / nw : 0;
}

/* One run of one point with real threads. Returns 0 and ns/op, spread. */
static int run_threads(const char *spec, unsigned T, const int *cpus, unsigned ncpu, const struct ls_cfg *cfg,
		       double *ns, double *imb, double *jain)
{
	struct point p = { .threads = T, .links = cfg->links, .count = cfg->count };
	struct txs_linksel_conf lc = { .mode = spec, .n_links = cfg->links, .max_cores = T };
	char err[160];
	int rc = txs_linksel_create(&p.ls, &lc, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale bench linksel: '%s': %s\n", spec, err[0] ? err : txs_strerror(rc));
		return rc;
	}
	struct thr *t = calloc(T, sizeof(*t));
	size_t maxb = cfg->count / BLOCK + 1;
	pthread_barrier_init(&p.bar, NULL, T);
	for (unsigned i = 0; t && i < T; i++) {
		t[i].p = &p;
		t[i].id = i;
		t[i].cpu = cpus[i % ncpu];
		t[i].blocks = malloc(maxb * sizeof(struct block));
		if (!t[i].blocks)
			rc = -ENOMEM;
	}
	if (!t)
		rc = -ENOMEM;
	unsigned started = 0;
	for (; rc == 0 && started < T; started++)
		if (pthread_create(&t[started].th, NULL, thr_main, &t[started]))
			break;
	if (rc == 0 && started < T) {
		/* cannot happen in practice; the barrier would hang: give up loudly */
		fprintf(stderr, "txscale bench linksel: pthread_create failed\n");
		abort();
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(t[i].th, NULL);
	if (rc == 0) {
		size_t nb = 0;
		double s = 0;
		for (unsigned i = 0; i < T; i++) {
			rc = rc ? rc : t[i].err;
			nb += t[i].n_blocks;
			s += t[i].ns;
		}
		*ns = s / T;
		struct block **all = malloc(nb * sizeof(*all));
		if (!all) {
			rc = -ENOMEM;
		} else {
			size_t k = 0;
			for (unsigned i = 0; i < T; i++)
				for (size_t b = 0; b < t[i].n_blocks; b++)
					all[k++] = &t[i].blocks[b];
			windows(all, nb, cfg->links, cfg->window, imb, jain);
			free(all);
		}
	}
	pthread_barrier_destroy(&p.bar);
	for (unsigned i = 0; t && i < T; i++)
		free(t[i].blocks);
	free(t);
	txs_linksel_destroy(p.ls);
	return rc;
}

/* T simulated cores in lock-step on this thread: in step s, core 0..T-1 each
 * select once. ns/op: per selection on one thread. */
static int run_lockstep(const char *spec, unsigned T, const struct ls_cfg *cfg, double *ns, double *imb,
			double *jain)
{
	struct txs_linksel *ls;
	struct txs_linksel_conf lc = { .mode = spec, .n_links = cfg->links, .max_cores = T };
	char err[160];
	int rc = txs_linksel_create(&ls, &lc, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale bench linksel: '%s': %s\n", spec, err[0] ? err : txs_strerror(rc));
		return rc;
	}
	struct txs_linksel_core **c = calloc(T, sizeof(*c));
	struct txs_flow_key(*k)[FLOWS] = calloc(T, sizeof(*k));
	uint64_t steps = cfg->count / T ? cfg->count / T : 1;
	size_t nb = (size_t)(steps * T / BLOCK);
	struct block *b = malloc((nb + 1) * sizeof(*b));
	struct block **all = malloc((nb + 1) * sizeof(*all));
	if (!c || !k || !b || !all) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < T && rc == 0; i++) {
		rc = txs_linksel_core_open(ls, i, &c[i]);
		make_keys(ls, i, k[i]);
	}
	if (rc)
		goto out;
	uint64_t sink = 0, t0 = mono_ns();
	for (uint64_t s = 0; s < steps; s++)
		for (unsigned i = 0; i < T; i++) {
			uint32_t mask;
			sink += (uint64_t)txs_linksel_select_mask(c[i], &k[i][s % FLOWS], &mask) + mask;
		}
	*ns = (double)(mono_ns() - t0) / (double)(steps * T);
	__asm__ volatile("" : : "r"(sink));
	/* spread: same walk, recorded in the aggregate (lock-step) order */
	size_t cur = 0;
	unsigned in_b = 0;
	memset(b, 0, (nb + 1) * sizeof(*b));
	for (uint64_t s = 0; s < steps && cur < nb; s++)
		for (unsigned i = 0; i < T && cur < nb; i++) {
			uint32_t mask;
			if (txs_linksel_select_mask(c[i], &k[i][s % FLOWS], &mask) > 0)
				for (; mask; mask &= mask - 1)
					b[cur].n[__builtin_ctz(mask)]++;
			if (++in_b == BLOCK) {
				b[cur].t = cur;
				cur++;
				in_b = 0;
			}
		}
	for (size_t i = 0; i < cur; i++)
		all[i] = &b[i];
	windows(all, cur, cfg->links, cfg->window, imb, jain);
out:
	free(all);
	free(b);
	free(k);
	free(c);
	txs_linksel_destroy(ls);
	return rc;
}

static int linksel_run(struct ls_cfg cfg)
{
	int rc;
	unsigned tl[64], nt;
	if ((rc = bench_threads("bench linksel", cfg.threads, tl, 64, &nt, true)))
		return rc;
	for (unsigned i = 0; i < nt; i++)
		if (tl[i] < 1 || tl[i] > TXS_MAX_CORES) {
			fprintf(stderr, "txscale bench linksel: bad value for --threads: '%u': expected 1..%d\n", tl[i],
				TXS_MAX_CORES);
			return 2;
		}
	if (cfg.window % BLOCK) {
		fprintf(stderr, "txscale bench linksel: bad value for --window: '%u': a multiple of %d\n", cfg.window,
			BLOCK);
		return 2;
	}
	/* modes and scopes: validated through the library's own parser */
	char mbuf[256], sbuf[256];
	snprintf(mbuf, sizeof(mbuf), "%s", cfg.modes);
	snprintf(sbuf, sizeof(sbuf), "%s", cfg.scopes);
	const char *modes[8], *scopes[8];
	unsigned nm = 0, ns_ = 0;
	char *save;
	for (char *m = strtok_r(mbuf, ",", &save); m && nm < 8; m = strtok_r(NULL, ",", &save))
		modes[nm++] = m;
	for (char *s = strtok_r(sbuf, ",", &save); s && ns_ < 8; s = strtok_r(NULL, ",", &save))
		scopes[ns_++] = s;
	if (!nm || !ns_) {
		fprintf(stderr, "txscale bench linksel: empty --modes or --scopes\n");
		return 2;
	}
	for (unsigned i = 0; i < nm; i++) {
		struct txs_linksel_params p;
		char err[160];
		if (strchr(modes[i], '=') || txs_linksel_parse(&p, modes[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "txscale bench linksel: bad value for --modes: '%s'%s%s\n", modes[i],
				strchr(modes[i], '=') ? ": names only (use --packets-per-slave, --hash)" : ": ",
				strchr(modes[i], '=') ? "" : err);
			return 2;
		}
	}
	for (unsigned i = 0; i < ns_; i++) {
		char spec[96], err[160];
		struct txs_linksel_params p;
		snprintf(spec, sizeof(spec), "balance-rr,scope=%s", scopes[i]);
		if (txs_linksel_parse(&p, spec, err, sizeof(err)) < 0) {
			fprintf(stderr, "txscale bench linksel: bad value for --scopes: '%s': %s\n", scopes[i], err);
			return 2;
		}
	}
	{
		char spec[96], err[160];
		struct txs_linksel_params p;
		snprintf(spec, sizeof(spec), "balance-xor,hash=%s", cfg.hash);
		if (txs_linksel_parse(&p, spec, err, sizeof(err)) < 0) {
			fprintf(stderr, "txscale bench linksel: bad value for --hash: '%s': %s\n", cfg.hash, err);
			return 2;
		}
	}
	int cpus[TXS_MAX_CORES];
	unsigned ncpu = bench_cpus(&cfg.cpus, cpus);
	for (unsigned i = 0; i < nt; i++)
		if (!cfg.lockstep && cfg.cpus.n && tl[i] > ncpu) {
			fprintf(stderr, "txscale bench linksel: %u threads but only %u CPUs in -A\n", tl[i], ncpu);
			return 2;
		}
	if (!cfg.json)
		printf("# linksel: %u links, packets_per_slave=%u, hash=%s, %llu selections/thread/pass, median of %u "
		       "runs, windows of %u%s\n"
		       "%-14s %-10s %7s %9s %10s %7s %11s\n",
		       cfg.links, cfg.pps, cfg.hash, (unsigned long long)cfg.count, cfg.runs, cfg.window,
		       cfg.lockstep ? ", simulated lock-step cores" : "", "mode", "scope", "threads", "ns/op",
		       "imbalance", "jain", "vs shared");
	for (unsigned mi = 0; mi < nm; mi++) {
		struct txs_linksel_params mp;
		txs_linksel_parse(&mp, modes[mi], NULL, 0);
		bool rr = mp.mode == TXS_LS_BALANCE_RR;
		for (unsigned ti = 0; ti < nt; ti++) {
			unsigned T = tl[ti];
			double shared_ns = 0;
			for (unsigned si = 0; si < (rr ? ns_ : 1); si++) {
				char spec[128];
				if (rr)
					snprintf(spec, sizeof(spec), "balance-rr,packets_per_slave=%u,scope=%s", cfg.pps,
						 scopes[si]);
				else if (mp.mode == TXS_LS_BALANCE_XOR)
					snprintf(spec, sizeof(spec), "balance-xor,hash=%s", cfg.hash);
				else
					snprintf(spec, sizeof(spec), "%s", txs_linksel_mode_name(mp.mode));
				double v[100], imb = 0, jain = 0;
				for (unsigned r = 0; r < cfg.runs; r++) {
					rc = cfg.lockstep ? run_lockstep(spec, T, &cfg, &v[r], &imb, &jain)
							  : run_threads(spec, T, cpus, ncpu, &cfg, &v[r], &imb, &jain);
					if (rc < 0)
						return 1;
				}
				double ns = bench_median(v, cfg.runs);
				const char *scope = rr ? scopes[si] : "-";
				if (rr && strcmp(scope, "shared") == 0)
					shared_ns = ns;
				double vs = rr && shared_ns > 0 ? shared_ns / ns : 0;
				if (cfg.json) {
					printf("{\"bench\":\"linksel\",\"mode\":\"%s\",\"scope\":\"%s\",\"threads\":%u,"
					       "\"ns_per_op\":%.3f,\"imbalance\":%.4f,\"jain\":%.4f,\"links\":%u,"
					       "\"packets_per_slave\":%u,\"lockstep\":%s",
					       txs_linksel_mode_name(mp.mode), scope, T, ns, imb, jain, cfg.links,
					       rr ? cfg.pps : 0, cfg.lockstep ? "true" : "false");
					if (vs > 0)
						printf(",\"speedup_vs_shared\":%.2f", vs);
					printf("}\n");
				} else {
					char vsb[16] = "-";
					if (vs > 0)
						snprintf(vsb, sizeof(vsb), "%.1fx", vs);
					printf("%-14s %-10s %7u %9.2f %10.3f %7.4f %11s\n", txs_linksel_mode_name(mp.mode),
					       scope, T, ns, imb, jain, vsb);
				}
				fflush(stdout);
			}
		}
	}
	return 0;
}

BENCH_MAIN(bench_linksel, "bench linksel", struct ls_cfg, ls_opts, linksel_run)
