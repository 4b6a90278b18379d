/* SPDX-License-Identifier: MIT */
/* bench recv: packets per second one core analyses from a pcap file held in
 * memory: pcap record walk + txs_parse (IP and UDP checksums verified) +
 * lib/rx (flow lookup, sequence window, latency histogram, IPv4 ID reuse).
 * Without --file the capture is generated from flow templates: F flows,
 * interleaved in bursts (as F sender threads would), sequential IDs and
 * sequence numbers. Rows: "parse" (record walk + txs_parse, the reference
 * parser, alone) and "recv" (the whole receive analysis, through lib/rx's
 * inline parse fast path). Median of R runs. Rates are per CPU second of the
 * measuring thread (CLOCK_THREAD_CPUTIME_ID), so a shared machine does not
 * deflate them; the wall-clock rate is shown next to them. Goal: >= 20 Mpps
 * per core for "recv". */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/txscale.h>
#include <txscale/rx.h>
#include "bench_util.h"
#include "opt.h"

struct brecv_cfg {
	uint64_t count;
	unsigned runs, length, flows, burst;
	bool v6;
	const char *file;
	struct opt_cpus cpus;
	bool json;
	bool no_id;
};

#define O(f) offsetof(struct brecv_cfg, f)
static const struct txs_opt brecv_opts[] = {
	{ "packets", 'n', OPT_U64, O(count), "N", "packets in the generated capture", "1M", 1000, 50000000 },
	{ "runs", 'r', OPT_UINT, O(runs), "R", "runs (median reported)", "5", 1, 1000 },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length of generated packets", "16", 0, 1472 },
	{ "flows", 0, OPT_UINT, O(flows), "F", "flows in the generated capture", "4", 1, 4096 },
	{ "burst", 0, OPT_UINT, O(burst), "N", "consecutive packets of one flow", "32", 1, 1000000 },
	{ "ipv6", '6', OPT_FLAG, O(v6), NULL, "generate IPv6 (default IPv4)" },
	{ "file", 0, OPT_STR, O(file), "FILE", "analyse this pcap file instead (read into memory)" },
	{ "no-id-track", 0, OPT_FLAG, O(no_id), NULL, "skip IPv4 ID reuse tracking" },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin to the first CPU of this list" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "one JSON object per row" },
	OPT_END
};
#undef O

/* CPU time of this thread: what one core spends, whatever else runs on the
 * machine (the wall clock is reported too) */
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *generate(const struct brecv_cfg *c, size_t *len)
{
	struct txs_tmpl *t = calloc(c->flows, sizeof(*t));
	if (!t)
		return NULL;
	uint32_t maxw = 0;
	for (unsigned f = 0; f < c->flows; f++) {
		struct txs_flow_spec sp = { 0 };
		txs_addr_parse(&sp.src, c->v6 ? "2001:2::1" : "198.18.0.1");
		txs_addr_parse(&sp.dst, c->v6 ? "2001:2::2" : "198.18.0.2");
		sp.sport = (uint16_t)(40000 + f);
		sp.dport = 5201;
		sp.payload_len = c->length;
		sp.flow_id = f;
		if (txs_tmpl_build(&t[f], &sp) < 0) {
			for (unsigned k = 0; k < f; k++)
				txs_tmpl_free(&t[k]);
			free(t);
			return NULL;
		}
		if (t[f].wire_len > maxw)
			maxw = t[f].wire_len;
	}
	size_t cap = 24 + (size_t)c->count * (16 + maxw);
	uint8_t *buf = malloc(cap), fr[2048];
	uint64_t *seq = calloc(c->flows, sizeof(*seq));
	if (!buf || !seq) {
		free(buf);
		buf = NULL;
		goto out;
	}
	size_t off = txs_pcap_write_hdr(buf, 65535);
	uint64_t ts = txs_now_real_ns();
	unsigned f = 0, inb = 0;
	for (uint64_t i = 0; i < c->count; i++) {
		uint32_t n = txs_tmpl_patch(&t[f], fr, (uint16_t)(seq[f] + f * 4096), seq[f], ts);
		seq[f]++;
		off += txs_pcap_write_rec(buf + off, fr, n, ts + 20000);
		ts += 50;
		if (++inb == c->burst) {
			inb = 0;
			f = (f + 1) % c->flows;
		}
	}
	*len = off;
out:
	free(seq);
	for (unsigned k = 0; k < c->flows; k++)
		txs_tmpl_free(&t[k]);
	free(t);
	return buf;
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = sz > 0 ? malloc((size_t)sz) : NULL;
	if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = b ? (size_t)sz : 0;
	return b;
}

/* one pass; returns Mpps per CPU second, or -1; *wall_mpps by the wall clock.
 * *pk: records analysed. */
static double run_once(const uint8_t *buf, size_t len, bool full, bool no_id, uint64_t *pk, uint64_t *lost,
		       uint64_t *bad, double *wall_mpps)
{
	struct txs_pcap p;
	if (txs_pcap_open_mem(&p, buf, len) < 0)
		return -1;
	struct txs_rx_conf rc = { .no_id_track = no_id };
	struct txs_rx_core *c = NULL;
	if (full && txs_rx_core_create(&c, &rc) < 0) {
		txs_pcap_close(&p);
		return -1;
	}
	struct txs_pcap_rec r;
	uint64_t n = 0, ok = 0;
	double t0 = cpu_s(), w0 = wall_s();
	if (full) {
		while (txs_pcap_next(&p, &r) == 1) {
			txs_rx_frame(c, r.data, r.caplen, r.l2, 0, r.ts_ns);
			n++;
		}
	} else {
		struct txs_pkt_info pi;
		while (txs_pcap_next(&p, &r) == 1) {
			ok += txs_parse(r.data, r.caplen, r.l2, &pi) == TXS_PERR_OK;
			n++;
		}
	}
	double dt = cpu_s() - t0, wdt = wall_s() - w0;
	*wall_mpps = wdt > 0 ? n / wdt / 1e6 : 0;
	*pk = n;
	*lost = 0;
	*bad = full ? 0 : n - ok;
	if (full) {
		struct txs_rx_result *res;
		if (txs_rx_result_build(&res, &c, 1, NULL) == 0) {
			*lost = res->lost;
			*bad = res->malformed;
			if (res->received != n - res->ignored - res->malformed)
				dt = -1; /* counts must add up */
			txs_rx_result_free(res);
		}
		txs_rx_core_destroy(c);
	}
	txs_pcap_close(&p);
	return dt > 0 ? n / dt / 1e6 : -1;
}

static int recv_run(struct brecv_cfg cfg)
{
	if (cfg.cpus.n) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cfg.cpus.cpu[0], &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			fprintf(stderr, "txscale bench recv: cannot pin to CPU %d: %s\n", cfg.cpus.cpu[0], strerror(errno));
			return 1;
		}
	}
	size_t len = 0;
	uint8_t *buf = cfg.file ? load(cfg.file, &len) : generate(&cfg, &len);
	if (!buf) {
		if (cfg.file)
			fprintf(stderr, "txscale bench recv: cannot read --file '%s'\n", cfg.file);
		else
			fprintf(stderr, "txscale bench recv: cannot build the capture (out of memory?)\n");
		return cfg.file ? 2 : 1;
	}
	const char *src = cfg.file ? cfg.file : "generated";
	if (!cfg.json)
		printf("# recv: %s capture in memory (%.1f MB), %s, median of %u runs, 1 core\n"
		       "%-7s %12s %10s %8s %10s %10s\n",
		       src, len / 1e6,
		       cfg.file ? "as recorded" : (cfg.v6 ? "IPv6" : "IPv4"), cfg.runs, "stage", "packets", "Mpps/core",
		       "ns/pkt", "wall Mpps", "lost/bad");
	int ret = 0;
	for (int full = 0; full <= 1; full++) {
		double v[1000], wv[1000];
		uint64_t pk = 0, lost = 0, bad = 0;
		for (unsigned r = 0; r < cfg.runs; r++)
			v[r] = run_once(buf, len, full, cfg.no_id, &pk, &lost, &bad, &wv[r]);
		double m = bench_median(v, cfg.runs), wm = bench_median(wv, cfg.runs);
		if (m <= 0) {
			fprintf(stderr, "txscale bench recv: run failed\n");
			ret = 1;
			break;
		}
		const char *stage = full ? "recv" : "parse";
		if (cfg.json)
			printf("{\"bench\":\"recv\",\"stage\":\"%s\",\"source\":\"%s\",\"family\":%d,\"length\":%u,"
			       "\"flows\":%u,\"packets\":%llu,\"mpps_per_core\":%.3f,\"ns_per_pkt\":%.2f,"
			       "\"wall_mpps\":%.3f,\"lost\":%llu,\"bad\":%llu}\n",
			       stage, cfg.file ? "file" : "generated", cfg.v6 ? 6 : 4, cfg.length, cfg.flows,
			       (unsigned long long)pk, m, 1e3 / m, wm, (unsigned long long)lost, (unsigned long long)bad);
		else
			printf("%-7s %12llu %10.2f %8.2f %10.2f %4llu/%-4llu\n", stage, (unsigned long long)pk, m,
			       1e3 / m, wm, (unsigned long long)lost, (unsigned long long)bad);
	}
	free(buf);
	return ret;
}

BENCH_MAIN(bench_recv, "bench recv", struct brecv_cfg, brecv_opts, recv_run)
