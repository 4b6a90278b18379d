/* SPDX-License-Identifier: MIT */
/* bench sendmsg: txs_udp_sendmsg() calls per second per core, 16-byte
 * payloads into the dummy device, IPv4 and IPv6, connected and unconnected
 * (the seed's udpv6_sendmsg measurement: 2.2 M tx/s per core over a dummy
 * netdev). Median of R runs; the IPv6 / IPv4 cost ratio (time per call).
 * --compare-engine also runs `txscale send`'s two engine paths (gen.c's
 * template patch, and the sendmsg adapter) for the routing decision.
 * Instructions per call: bench/sendmsg-callgrind (callgrind, toggled on
 * bench_sendmsg_loop). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include <txscale/udp.h>
#include "bench_util.h"
#include "opt.h"

struct sm_cfg {
	uint64_t count;
	unsigned runs, length, dests, batch;
	const char *threads, *family, *mode, *ident;
	struct opt_cpus cpus;
	bool json, compare;
};

#define O(f) offsetof(struct sm_cfg, f)
static const struct txs_opt sm_opts[] = {
	{ "calls", 'n', OPT_U64, O(count), "N", "sendmsg calls per thread per run", "20M", 1000, 0 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "runs per point (median reported)", "5", 1, 1000 },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload bytes per call", "16", 0, 1452 },
	{ "family", 0, OPT_STR, O(family), "4|6|both", "address families", "both" },
	{ "mode", 0, OPT_STR, O(mode), "connected|unconnected|both", "destination per endpoint or per call", "both" },
	{ "dests", 0, OPT_UINT, O(dests), "N", "unconnected: destinations rotated per call (power of two)", "16", 1, 4096 },
	{ "batch", 0, OPT_UINT, O(batch), "N", "frames per device call", "32", 1, 256 },
	{ "ident", 0, OPT_STR, O(ident), "NAME", "IP ID strategy (include/txscale/ident.h)", "lease" },
	{ "threads", 0, OPT_STR, O(threads), "LIST", "thread counts, e.g. 1,2", "1" },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "CPUs to pin to, in order (default: all allowed)" },
	{ "compare-engine", 0, OPT_FLAG, O(compare), NULL, "also time `send`'s engine paths: gen template vs sendmsg adapter" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object per row" },
	OPT_END
};
#undef O

struct sm_thread {
	const struct sm_cfg *cfg;
	int family;
	bool connected;
	int cpu;
	unsigned id;
	struct txs_ident *ident;
	pthread_barrier_t *bar;
	double secs;
	int err;
	pthread_t th;
};

/* The measured loop (callgrind toggles collection on this symbol). */
__attribute__((noinline)) uint64_t bench_sendmsg_loop(struct txs_udp_ep *ep, struct txs_udp_msg *m,
						      const struct sockaddr_storage *dst, unsigned dmask, uint64_t n);
__attribute__((noinline)) uint64_t bench_sendmsg_loop(struct txs_udp_ep *ep, struct txs_udp_msg *m,
						      const struct sockaddr_storage *dst, unsigned dmask, uint64_t n)
{
	uint64_t bad = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (dst)
			m->name = (const struct sockaddr *)&dst[i & dmask];
		bad += txs_udp_sendmsg(ep, m) < 0;
	}
	return bad;
}

static void *sm_thread_main(void *arg)
{
	struct sm_thread *t = arg;
	const struct sm_cfg *c = t->cfg;
	t->err = 0;
	(void)txs_pin_self(t->cpu); /* best effort: unpinned, it still runs */
	struct txs_netdev *dev = NULL;
	struct txs_txq *q = NULL;
	struct txs_ident_core *core = NULL;
	struct txs_udp_ep *ep = NULL;
	struct sockaddr_storage *dst = calloc(c->dests, sizeof(*dst));
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 1514 };
	int rc = dst ? txs_netdev_open(&dev, "dummy", &dc, NULL, 0) : -ENOMEM;
	if (rc == 0)
		rc = txs_txq_open(dev, 0, &q);
	if (rc == 0)
		rc = txs_ident_core_open(t->ident, t->id, &core);
	struct txs_udp_conf uc = { .sport = (uint16_t)(40000 + t->id), .batch = c->batch, .ident = t->ident,
				   .ident_core = core };
	txs_addr_parse(&uc.src, t->family == 4 ? "198.18.0.1" : "2001:2::1");
	if (rc == 0)
		rc = txs_udp_open(&ep, q, &uc);
	for (unsigned i = 0; rc == 0 && i < c->dests; i++) {
		struct txs_addr a;
		txs_addr_parse(&a, t->family == 4 ? "198.18.1.0" : "2001:2::1:0");
		a.bytes[t->family == 4 ? 3 : 15] = (uint8_t)i;
		a.bytes[t->family == 4 ? 2 : 14] += (uint8_t)(i >> 8);
		txs_udp_sockaddr(&dst[i], &a, 5201);
	}
	if (rc == 0 && t->connected)
		rc = txs_udp_connect(ep, (struct sockaddr *)&dst[0], sizeof(dst[0]));
	static const uint8_t payload[1452];
	struct iovec v = { (void *)payload, c->length };
	struct txs_udp_msg m = { .iov = &v, .iovlen = 1, .namelen = sizeof(struct sockaddr_storage) };
	pthread_barrier_wait(t->bar);
	if (rc == 0) {
		uint64_t t0 = txs_now_mono_ns();
		uint64_t bad = bench_sendmsg_loop(ep, &m, t->connected ? NULL : dst, c->dests - 1, c->count);
		txs_udp_flush(ep);
		t->secs = (double)(txs_now_mono_ns() - t0) / 1e9;
		struct txs_link_counters lc;
		txs_netdev_link_stats(dev, 0, &lc);
		if (bad || lc.packets != c->count)
			rc = -EIO;
	}
	t->err = rc;
	txs_udp_close(ep);
	txs_ident_core_close(core);
	txs_netdev_close(dev);
	free(dst);
	return NULL;
}

/* One run: total calls per second, or < 0. */
static double sm_run(const struct sm_cfg *c, int family, bool connected, unsigned nt, const int *cpus)
{
	struct txs_ident *ident;
	struct txs_ident_conf ic = { .strategy = c->ident, .max_cores = nt };
	if (txs_ident_create(&ident, &ic) < 0)
		return -1;
	struct sm_thread th[TXS_MAX_CORES];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, nt);
	for (unsigned i = 0; i < nt; i++) {
		th[i] = (struct sm_thread){ .cfg = c, .family = family, .connected = connected, .cpu = cpus[i],
					    .id = i, .ident = ident, .bar = &bar };
		pthread_create(&th[i].th, NULL, sm_thread_main, &th[i]);
	}
	double rate = 0;
	for (unsigned i = 0; i < nt; i++) {
		pthread_join(th[i].th, NULL);
		if (th[i].err || th[i].secs <= 0)
			rate = -1;
		else if (rate >= 0)
			rate += (double)c->count / th[i].secs;
	}
	pthread_barrier_destroy(&bar);
	txs_ident_destroy(ident);
	return rate;
}

/* `send` through the engine: gen.c template patch or the sendmsg adapter. */
static double engine_run(const struct sm_cfg *c, int family, bool sock, int cpu)
{
	struct txs_flow_spec sp = { 0 };
	txs_addr_parse(&sp.src, family == 4 ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&sp.dst, family == 4 ? "198.18.0.2" : "2001:2::2");
	sp.sport = 40000;
	sp.dport = 5201;
	sp.payload_len = c->length;
	struct txs_gen_conf gc = { .spec = sp, .seed = 1 };
	struct txs_udp_gen_conf uc = { .spec = sp, .connected = true };
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 1514 };
	if (txs_netdev_open(&dev, "dummy", &dc, NULL, 0) < 0)
		return -1;
	struct txs_engine_conf ec = { .n_workers = 1, .cpus = &cpu, .count = c->count, .dev = dev,
				      .gen = sock ? &txs_udp_sock_gen_ops : &txs_udp_gen_ops,
				      .gen_conf = sock ? (void *)&uc : (void *)&gc };
	double r = bench_engine_pps(&ec, NULL, NULL);
	txs_netdev_close(dev);
	return r;
}

static int sm_fail(const char *what, const char *val)
{
	fprintf(stderr, "txscale bench sendmsg: bad value for %s: '%s'\n", what, val);
	return 2;
}

static int sendmsg_run(struct sm_cfg cfg)
{
	int rc;
	int fams[2], nf = 0;
	if (!strcmp(cfg.family, "4") || !strcmp(cfg.family, "both"))
		fams[nf++] = 4;
	if (!strcmp(cfg.family, "6") || !strcmp(cfg.family, "both"))
		fams[nf++] = 6;
	if (!nf)
		return sm_fail("--family", cfg.family);
	bool modes[2];
	int nm = 0;
	if (!strcmp(cfg.mode, "connected") || !strcmp(cfg.mode, "both"))
		modes[nm++] = true;
	if (!strcmp(cfg.mode, "unconnected") || !strcmp(cfg.mode, "both"))
		modes[nm++] = false;
	if (!nm)
		return sm_fail("--mode", cfg.mode);
	if (cfg.dests & (cfg.dests - 1))
		return sm_fail("--dests (a power of two)", "");
	unsigned tl[64], nt;
	if ((rc = bench_threads("bench sendmsg", cfg.threads, tl, 64, &nt, false)))
		return rc;
	struct txs_ident *probe;
	struct txs_ident_conf ic = { .strategy = cfg.ident };
	if (txs_ident_create(&probe, &ic) < 0)
		return sm_fail("--ident", cfg.ident);
	txs_ident_destroy(probe);
	int cpus[TXS_MAX_CORES];
	unsigned ncpu = bench_cpus(&cfg.cpus, cpus);
	if (!cfg.json)
		printf("# sendmsg: dummy device, %u-byte payload, %llu calls/thread, batch %u, ident %s, median of %u runs\n"
		       "%-6s %-11s %7s %14s %10s\n",
		       cfg.length, (unsigned long long)cfg.count, cfg.batch, cfg.ident, cfg.runs, "family", "mode",
		       "threads", "M calls/s/core", "ns/call");
	double per_core[2][2][64] = { 0 };
	for (unsigned ti = 0; ti < nt; ti++) {
		unsigned t = tl[ti];
		if (t < 1 || t > TXS_MAX_CORES || (t > ncpu && cfg.cpus.n)) {
			fprintf(stderr, "txscale bench sendmsg: %u threads but %u CPUs\n", t, ncpu);
			return 2;
		}
		int tc[TXS_MAX_CORES];
		for (unsigned i = 0; i < t; i++)
			tc[i] = cpus[i % ncpu];
		for (int fi = 0; fi < nf; fi++)
			for (int mi = 0; mi < nm; mi++) {
				double v[1000];
				for (unsigned r = 0; r < cfg.runs; r++)
					v[r] = sm_run(&cfg, fams[fi], modes[mi], t, tc);
				double med = bench_median(v, cfg.runs);
				if (med < 0) {
					fprintf(stderr, "txscale bench sendmsg: run failed\n");
					return 1;
				}
				double pc = med / t;
				per_core[fams[fi] == 6][modes[mi]][ti] = pc;
				if (cfg.json)
					printf("{\"bench\":\"sendmsg\",\"family\":%d,\"connected\":%s,\"threads\":%u,"
					       "\"length\":%u,\"calls_per_s\":%.0f,\"calls_per_s_per_core\":%.0f}\n",
					       fams[fi], modes[mi] ? "true" : "false", t, cfg.length, med, pc);
				else
					printf("IPv%-3d %-11s %7u %14.2f %10.1f\n", fams[fi],
					       modes[mi] ? "connected" : "unconnected", t, pc / 1e6, 1e9 / pc);
			}
	}
	if (nf == 2)
		for (int mi = 0; mi < nm; mi++)
			for (unsigned ti = 0; ti < nt; ti++) {
				double r = per_core[0][modes[mi]][ti] / per_core[1][modes[mi]][ti];
				if (cfg.json)
					printf("{\"bench\":\"sendmsg\",\"ratio\":\"v6_cost_over_v4\",\"connected\":%s,"
					       "\"threads\":%u,\"value\":%.3f}\n",
					       modes[mi] ? "true" : "false", tl[ti], r);
				else
					printf("# IPv6/IPv4 cost per call, %s, %u thread%s: %.3fx\n",
					       modes[mi] ? "connected" : "unconnected", tl[ti], tl[ti] > 1 ? "s" : "", r);
			}
	if (cfg.compare) {
		if (!cfg.json)
			printf("# engine paths (send, 1 worker, connected): gen template patch vs sendmsg adapter\n");
		for (int fi = 0; fi < nf; fi++) {
			double g[1000], s[1000];
			for (unsigned r = 0; r < cfg.runs; r++) {
				g[r] = engine_run(&cfg, fams[fi], false, cpus[0]);
				s[r] = engine_run(&cfg, fams[fi], true, cpus[0]);
			}
			double gm = bench_median(g, cfg.runs), smd = bench_median(s, cfg.runs);
			if (cfg.json)
				printf("{\"bench\":\"sendmsg-engine\",\"family\":%d,\"gen_pps\":%.0f,\"sendmsg_pps\":%.0f}\n",
				       fams[fi], gm, smd);
			else
				printf("IPv%-3d engine: gen %.2f Mpps, sendmsg adapter %.2f Mpps (%.2fx)\n", fams[fi],
				       gm / 1e6, smd / 1e6, smd / gm);
		}
	}
	return 0;
}

BENCH_MAIN(bench_sendmsg, "bench sendmsg", struct sm_cfg, sm_opts, sendmsg_run)
