/* SPDX-License-Identifier: MIT */
/* bench path: the whole send walk (template patch, device burst, stats) into
 * the dummy device. Mpps per core for 1 thread and for N threads, IPv4 and
 * IPv6, median of R runs, and the N-thread / 1-thread scaling ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include "bench_util.h"
#include "opt.h"

struct path_cfg {
	uint64_t count;
	unsigned runs, length;
	const char *threads;
	struct opt_cpus cpus;
	bool json;
	const char *ident;
	bool shapes;
	unsigned flows;
};

#define O(f) offsetof(struct path_cfg, f)
static const struct txs_opt path_opts[] = {
	{ "packets", 'n', OPT_U64, O(count), "N", "packets per thread per run", "20M", 1000, 0 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "runs per point (median reported)", "5", 1, 1000 },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 1472 },
	{ "threads", 0, OPT_STR, O(threads), "LIST", "thread counts, e.g. 1,2,4", "1,2" },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "CPUs to pin to, in order (default: all allowed)" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object per row" },
	{ "ident", 0, OPT_STR, O(ident), "NAME", "IPv4 ID strategy, as send --ident", "lease" },
	{ "shapes", 0, OPT_FLAG, O(shapes), NULL, "instead: IPv4, 1 thread, the same runs interleaved: one flow of 64-byte "
	  "frames (the reference), --flows N over a port and address range, and imix; ratios to the reference" },
	{ "flows", 0, OPT_UINT, O(flows), "N", "flows per thread of --shapes", "1000", 1, 1u << 20 },
	OPT_END
};
#undef O

/* One run: returns total Mpps. */
static double run_once(int family, unsigned threads, const int *cpus, uint64_t per_thread, unsigned length,
		       const char *ident, const struct txs_shape *shape)
{
	struct txs_gen_conf gc = { 0 };
	gc.shape = shape;
	txs_addr_parse(&gc.spec.src, family == 4 ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&gc.spec.dst, family == 4 ? "198.18.0.2" : "2001:2::2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = length;
	gc.spread_sport = true;
	gc.seed = 1;
	/* the same set-up as `txscale send --dev dummy`: an ID allocator shared
	 * by the workers */
	struct txs_ident_conf ic = { .strategy = ident, .max_cores = threads, .seed = 1 };
	if (txs_ident_create(&gc.ident_inst, &ic) < 0)
		return -1;
	gc.ident = ident;
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = threads, .frame_size = 2048 };
	if (txs_netdev_open(&dev, "dummy", &dc, NULL, 0) < 0) {
		txs_ident_destroy(gc.ident_inst);
		return -1;
	}
	struct txs_engine_conf ec = { .n_workers = threads, .cpus = cpus, .count = per_thread * threads,
				      .dev = dev, .gen = &txs_udp_gen_ops, .gen_conf = &gc };
	double pps = bench_engine_pps(&ec, NULL, NULL);
	double mpps = pps < 0 ? -1 : pps / 1e6;
	txs_netdev_close(dev);
	txs_ident_destroy(gc.ident_inst);
	return mpps;
}

/* --shapes: the cost of flows and size mixes against one flow of fixed
 * 64-byte frames (18-byte payload), runs interleaved so that load on the
 * machine hits every case alike. Packets per second per core. */
static int bench_shapes(const struct path_cfg *cfg, const int *cpus)
{
	static struct txs_shape flows, ports, imix;
	char err[128];
	memset(&flows, 0, sizeof(flows));
	memset(&imix, 0, sizeof(imix));
	memset(&ports, 0, sizeof(ports));
	flows.flows = cfg->flows;
	ports.flows = cfg->flows;
	uint16_t lo;
	struct txs_addr a;
	if (txs_range_parse_port("40000-40999", &lo, &flows.sport, err, sizeof(err)) < 0 ||
	    txs_range_parse_addr("198.18.0.2-198.18.0.201", &a, &flows.dst, err, sizeof(err)) < 0 ||
	    txs_range_parse_port("40000-40999", &lo, &ports.sport, err, sizeof(err)) < 0 ||
	    txs_shape_parse_sizes(&imix, "imix", AF_INET, err, sizeof(err)) < 0)
		return 1;
	struct {
		const char *name;
		const struct txs_shape *sh;
	} cs[4] = { { "1 flow, 64-byte frames", NULL }, { "flows", &flows }, { "flows", &ports },
		    { "imix (7:4:1 of 64/594/1518)", &imix } };
	double v[4][1000];
	for (unsigned r = 0; r < cfg->runs; r++)
		for (int k = 0; k < 4; k++)
			v[k][r] = run_once(4, 1, cpus, cfg->count, 18, cfg->ident, cs[k].sh);
	double m[4];
	for (int k = 0; k < 4; k++) {
		m[k] = bench_median(v[k], cfg->runs);
		if (m[k] < 0) {
			fprintf(stderr, "txscale bench path: run failed\n");
			return 1;
		}
	}
	if (!cfg->json)
		printf("# path --shapes: dummy device, IPv4, 1 thread, --ident %s, %llu pkts/run, median of %u "
		       "interleaved runs\n%-34s %14s %10s\n", cfg->ident, (unsigned long long)cfg->count, cfg->runs,
		       "case", "Mpps per core", "ratio");
	static const char *const keys[4] = { "one_flow_64", "flows", "flows_one_dst", "imix" };
	for (int k = 0; k < 4; k++) {
		char name[64];
		if (k == 1)
			snprintf(name, sizeof(name), "%u flows (1000 ports x 200 dsts)", cfg->flows);
		else if (k == 2)
			snprintf(name, sizeof(name), "%u flows (1000 ports, 1 dst)", cfg->flows);
		else
			snprintf(name, sizeof(name), "%s", cs[k].name);
		if (cfg->json)
			printf("{\"bench\":\"path_shapes\",\"case\":\"%s\",\"flows\":%u,\"ident\":\"%s\",\"mpps_per_core\":%.3f,"
			       "\"ratio\":%.3f}\n", keys[k], k == 1 || k == 2 ? cfg->flows : 1, cfg->ident, m[k], m[k] / m[0]);
		else
			printf("%-34s %14.2f %9.2fx\n", name, m[k], m[k] / m[0]);
	}
	return 0;
}

static int path_run(struct path_cfg cfg)
{
	int rc;
	unsigned tl[64], nt;
	if ((rc = bench_threads("bench path", cfg.threads, tl, 64, &nt, false)))
		return rc;
	int cpus[TXS_MAX_CORES];
	unsigned ncpu = bench_cpus(&cfg.cpus, cpus);
	if (cfg.shapes)
		return bench_shapes(&cfg, cpus);
	if (!cfg.json)
		printf("# path: dummy device, %u-byte payload, --ident %s, %llu pkts/thread, median of %u runs\n"
		       "%-6s %7s %12s %14s %10s\n",
		       cfg.length, cfg.ident, (unsigned long long)cfg.count, cfg.runs, "family", "threads", "Mpps total",
		       "Mpps per core", "scaling");
	for (int fam = 4; fam <= 6; fam += 2) {
		double base = 0;
		for (unsigned ti = 0; ti < nt; ti++) {
			unsigned t = tl[ti];
			if (t > ncpu && cfg.cpus.n) {
				fprintf(stderr, "txscale bench path: %u threads but only %u CPUs in -A\n", t, ncpu);
				return 2;
			}
			int tc[TXS_MAX_CORES];
			for (unsigned i = 0; i < t; i++)
				tc[i] = cpus[i % ncpu];
			double v[1000];
			for (unsigned r = 0; r < cfg.runs; r++)
				v[r] = run_once(fam, t, tc, cfg.count, cfg.length, cfg.ident, NULL);
			double m = bench_median(v, cfg.runs);
			if (m < 0) {
				fprintf(stderr, "txscale bench path: run failed\n");
				return 1;
			}
			if (ti == 0)
				base = m / t;
			double scaling = base > 0 ? m / base : 0;
			if (cfg.json)
				printf("{\"bench\":\"path\",\"family\":%d,\"threads\":%u,\"length\":%u,\"ident\":\"%s\","
				       "\"mpps\":%.3f,\"mpps_per_core\":%.3f,\"scaling_vs_first\":%.3f}\n",
				       fam, t, cfg.length, cfg.ident, m, m / t, scaling);
			else
				printf("IPv%-4d %7u %12.2f %14.2f %9.2fx\n", fam, t, m, m / t, scaling);
		}
	}
	return 0;
}

BENCH_MAIN(bench_path, "bench path", struct path_cfg, path_opts, path_run)
