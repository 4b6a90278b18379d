/* SPDX-License-Identifier: MIT */
/* bench timestamps: what per-datagram send timestamps cost. The
 * send path into the dummy device (as bench path: template patch, ID lease,
 * device burst, stats), one thread, with --timestamps burst (one clock read
 * per burst), packet (one TSC read per datagram) and interp (one TSC read
 * per burst, a measured step per datagram; engine.h txs_ts_mode), the three
 * rotated in each round so that a loaded machine slows them alike; the
 * median of each, the ratios to burst per round, and interp's stamp error
 * (|stamp the next datagram would have had - clock| at the end of the
 * checked bursts). Also the cost of one rdtsc alone, for the floor of any
 * per-datagram read. */
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
static const struct txs_opt ts_opts[] = {
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

static struct txs_ts_check g_chk;

static int interp_check(struct txs_engine *e, void *chk)
{
	return txs_engine_ts_check(e, chk);
}

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
	/* interp that checked nothing: not a run */
	double pps = bench_engine_pps(&ec, mode == TXS_TS_INTERP ? interp_check : NULL, &g_chk);
	double mpps = pps < 0 ? -1 : pps / 1e6;
	txs_netdev_close(dev);
	txs_ident_destroy(gc.ident_inst);
	return mpps;
}

static int tstamp_run(struct ts_cfg cfg)
{
	int cpu = cfg.cpus.n ? cfg.cpus.cpu[0] : -1;
	g_dev = cfg.dev;
	g_dst = cfg.dst;
	double b[1000], p[1000], q[1000], r[1000], rq[1000], emean[1000], emax[1000], e50[1000], e99[1000];
	const enum txs_ts_mode order[3] = { TXS_TS_BURST, TXS_TS_PACKET, TXS_TS_INTERP };
	for (unsigned i = 0; i < cfg.runs; i++) {
		/* rotate which goes first, so none always runs warm */
		for (unsigned k = 0; k < 3; k++) {
			enum txs_ts_mode m = order[(i + k) % 3];
			double v = run_once(cpu, cfg.count, cfg.length, m);
			if (v <= 0) {
				fprintf(stderr, "txscale bench timestamps: run failed\n");
				return 1;
			}
			if (m == TXS_TS_BURST)
				b[i] = v;
			else if (m == TXS_TS_PACKET)
				p[i] = v;
			else {
				q[i] = v;
				emean[i] = g_chk.err_mean_ns;
				emax[i] = (double)g_chk.err_max_ns;
				e50[i] = (double)g_chk.err_p50_ns;
				e99[i] = (double)g_chk.err_p99_ns;
			}
		}
		r[i] = p[i] / b[i];
		rq[i] = q[i] / b[i];
	}
	/* one rdtsc alone, back to back: the floor of any read per datagram */
	double rd = -1;
#if defined(__x86_64__)
	{
		uint64_t t0 = txs_now_mono_ns(), acc = 0;
		for (unsigned i = 0; i < 20000000; i++) {
			uint32_t lo, hi;
			__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
			acc += lo ^ hi;
		}
		rd = (double)(txs_now_mono_ns() - t0) / 20e6;
		if (acc == 1)
			rd += 0; /* keep acc */
	}
#endif
	double mb = bench_median(b, cfg.runs), mp = bench_median(p, cfg.runs), mq = bench_median(q, cfg.runs);
	double mr = bench_median(r, cfg.runs), mrq = bench_median(rq, cfg.runs);
	double em = bench_median(emean, cfg.runs), ex = bench_median(emax, cfg.runs);
	double e5 = bench_median(e50, cfg.runs), e9 = bench_median(e99, cfg.runs);
	if (cfg.json)
		printf("{\"bench\":\"timestamps\",\"device\":\"%s\",\"length\":%u,\"runs\":%u,\"burst_mpps\":%.3f,\"packet_mpps\":%.3f,"
		       "\"interp_mpps\":%.3f,\"ratio_of_medians\":%.3f,\"median_pair_ratio\":%.3f,"
		       "\"interp_median_ratio\":%.3f,\"interp_err_mean_ns\":%.1f,\"interp_err_p50_below_ns\":%.0f,\"interp_err_p99_below_ns\":%.0f,\"interp_err_max_ns\":%.0f,"
		       "\"burst_ns_per_pkt\":%.2f,\"rdtsc_ns\":%.2f}\n",
		       cfg.dev, cfg.length, cfg.runs, mb, mp, mq, mp / mb, mr, mrq, em, e5, e9, ex, 1e3 / mb, rd);
	else
		printf("# timestamps: device %s, %u-byte payload, 1 thread, %llu pkts/run, median of %u rounds\n"
		       "burst  %.2f Mpps (%.2f ns/datagram)\npacket %.2f Mpps\ninterp %.2f Mpps\n"
		       "packet/burst %.3f (median of round ratios): a TSC read per datagram costs %.1f%%\n"
		       "interp/burst %.3f (median of round ratios): interpolated stamps cost %.1f%%, "
		       "error at the end of a checked burst: mean %.1f ns, p50 < %.0f ns, p99 < %.0f ns, max %.0f ns (medians over rounds)\n"
		       "rdtsc alone: %.2f ns per read\n",
		       cfg.dev, cfg.length, (unsigned long long)cfg.count, cfg.runs, mb, 1e3 / mb, mp, mq, mr, 100 * (1 - mr),
		       mrq, 100 * (1 - mrq), em, e5, e9, ex, rd);
	return 0;
}

BENCH_MAIN(bench_tstamp, "bench timestamps", struct ts_cfg, ts_opts, tstamp_run)
