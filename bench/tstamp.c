/* SPDX-License-Identifier: MIT */
/* bench timestamps: what exact send timestamps cost (issue 14). The send
 * path into the dummy device (as bench path: template patch, ID lease,
 * device burst, stats), one thread, with --timestamps burst (one clock read
 * per burst) and packet (one fill call and TSC read per datagram, engine.h txs_ts_mode),
 * runs alternated so that a loaded machine slows both alike; the median of
 * each and the ratio packet / burst, per run pair and overall. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include "bench_util.h"
#include "benches.h"
#include "opt.h"

struct ts_cfg {
	uint64_t count;
	unsigned runs, length;
	struct opt_cpus cpus;
	bool json;
	const char *dev, *dst;
};

#define O(f) offsetof(struct ts_cfg, f)
static const struct opt ts_opts[] = {
	{ "packets", 'n', OPT_U64, O(count), "N", "packets per run", "20M", 1000, 0 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "run pairs (median reported)", "7", 1, 1000 },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 1472 },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPU", "pin the worker to this CPU (default: not pinned)" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object" },
	{ "dev", 0, OPT_STR, O(dev), "DEV", "device, as send --dev (a real one: packet:IF in a lab namespace)", "dummy" },
	{ "dst", 0, OPT_STR, O(dst), "ADDR", "destination (for devices that resolve it)", "198.18.0.2" },
	OPT_END
};
#undef O

static const char *g_dev = "dummy", *g_dst = "198.18.0.2";

static double run_once(int cpu, uint64_t count, unsigned length, enum txs_ts_mode mode)
{
	struct txs_gen_conf gc = { 0 };
	txs_addr_parse(&gc.spec.src, "198.18.0.1");
	if (txs_addr_parse(&gc.spec.dst, g_dst) < 0 || gc.spec.dst.family != AF_INET)
		return -1;
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = length;
	gc.seed = 1;
	struct txs_ident_conf ic = { .strategy = "lease", .max_cores = 1, .seed = 1 };
	if (txs_ident_create(&gc.ident_inst, &ic) < 0)
		return -1;
	gc.ident = "lease";
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 2048, .dst = gc.spec.dst, .dport = 5201,
				      .sport = 40000 };
	if (txs_netdev_open(&dev, g_dev, &dc, NULL, 0) < 0) {
		txs_ident_destroy(gc.ident_inst);
		return -1;
	}
	if (dev->src_addr.family == AF_INET)
		gc.spec.src = dev->src_addr;
	if (dev->l2_needed) {
		memcpy(gc.spec.src_mac, dev->src_mac, 6);
		memcpy(gc.spec.dst_mac, dev->dst_mac, 6);
	}
	struct txs_engine_conf ec = { .n_workers = 1, .cpus = &cpu, .count = count, .dev = dev,
				      .gen = &txs_udp_gen_ops, .gen_conf = &gc, .timestamps = mode };
	struct txs_engine *e;
	double mpps = -1;
	if (txs_engine_create(&e, &ec) == 0) {
		if (txs_engine_start(e) == 0 && txs_engine_wait(e) == 0) {
			struct txs_stat_row row;
			double s = txs_engine_read(e, &row);
			mpps = row.packets / s / 1e6;
		}
		txs_engine_destroy(e);
	}
	txs_netdev_close(dev);
	txs_ident_destroy(gc.ident_inst);
	return mpps;
}

int bench_tstamp(int argc, char **argv)
{
	struct ts_cfg cfg = { 0 };
	const char *pos[1];
	int npos;
	int rc = opt_parse("bench timestamps", "[options]", ts_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	int cpu = cfg.cpus.n ? cfg.cpus.cpu[0] : -1;
	g_dev = cfg.dev;
	g_dst = cfg.dst;
	double b[1000], p[1000], r[1000];
	for (unsigned i = 0; i < cfg.runs; i++) {
		/* alternate which goes first, so neither always runs warm */
		if (i & 1) {
			p[i] = run_once(cpu, cfg.count, cfg.length, TXS_TS_PACKET);
			b[i] = run_once(cpu, cfg.count, cfg.length, TXS_TS_BURST);
		} else {
			b[i] = run_once(cpu, cfg.count, cfg.length, TXS_TS_BURST);
			p[i] = run_once(cpu, cfg.count, cfg.length, TXS_TS_PACKET);
		}
		if (b[i] <= 0 || p[i] <= 0) {
			fprintf(stderr, "txscale bench timestamps: run failed\n");
			return 1;
		}
		r[i] = p[i] / b[i];
	}
	double mb = bench_median(b, cfg.runs), mp = bench_median(p, cfg.runs), mr = bench_median(r, cfg.runs);
	if (cfg.json)
		printf("{\"bench\":\"timestamps\",\"device\":\"%s\",\"length\":%u,\"runs\":%u,\"burst_mpps\":%.3f,\"packet_mpps\":%.3f,"
		       "\"ratio_of_medians\":%.3f,\"median_pair_ratio\":%.3f}\n",
		       cfg.dev, cfg.length, cfg.runs, mb, mp, mp / mb, mr);
	else
		printf("# timestamps: device %s, %u-byte payload, 1 thread, %llu pkts/run, median of %u run pairs\n"
		       "burst  %.2f Mpps\npacket %.2f Mpps\npacket/burst %.3f (ratio of medians), %.3f (median of pair "
		       "ratios): exact timestamps cost %.1f%%\n",
		       cfg.dev, cfg.length, (unsigned long long)cfg.count, cfg.runs, mb, mp, mp / mb, mr, 100 * (1 - mr));
	return 0;
}
