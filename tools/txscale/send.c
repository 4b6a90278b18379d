/* SPDX-License-Identifier: MIT */
/* txscale send: generate UDP traffic on a device. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "cli.h"
#include "opt.h"

struct send_cfg {
	const char *dest;
	uint16_t port, sport;
	const char *bind;
	bool v4, v6;
	unsigned length;
	struct opt_rate rate;
	double time;
	uint64_t count;
	unsigned threads;
	struct opt_cpus cpus;
	double interval;
	bool json;
	const char *dev;
	unsigned tos, ttl;
	bool df, no_csum;
	const char *src_mac, *dst_mac;
	uint64_t seed;
	const char *summary_file;
	bool no_pin;
};

#define O(f) offsetof(struct send_cfg, f)
static const struct opt send_opts[] = {
	{ "client", 'c', OPT_STR, O(dest), "ADDR", "destination address (or give it as DEST)" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "destination UDP port", "5201" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "source address (default: the interface's for packet:/xdp:, else 198.18.0.1 or 2001:2::1)" },
	{ "sport", 0, OPT_PORT, O(sport), "PORT", "source port of thread 0; thread k uses PORT+k", "40000" },
	{ "ipv4", '4', OPT_FLAG, O(v4), NULL, "IPv4 only (destination must be IPv4)" },
	{ "ipv6", '6', OPT_FLAG, O(v6), NULL, "IPv6 only (destination must be IPv6)" },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 65527 },
	{ "bitrate", 'b', OPT_RATE, O(rate), "RATE", "total rate: packets/s (1M, 250k) or frame bits/s (100Mbit); 0 = unlimited", "0" },
	{ "time", 't', OPT_SECONDS, O(time), "SEC", "stop after SEC seconds (default 10 unless -n is given)" },
	{ "packets", 'n', OPT_U64, O(count), "N", "stop after N packets in total (k/M/G suffixes)", NULL, 1, 0 },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "worker threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin workers to these CPUs, e.g. 0-3 (default: CPUs in order)" },
	{ "no-pin", 0, OPT_FLAG, O(no_pin), NULL, "do not pin workers" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "seconds between interval reports; 0 = none", "1" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines output (docs/json-schema.md)" },
	{ "dev", 0, OPT_STR, O(dev), "DEV", "device (list below)", "dummy" },
	{ "tos", 0, OPT_UINT, O(tos), "TOS", "IPv4 TOS / IPv6 traffic class", "0", 0, 255 },
	{ "ttl", 0, OPT_UINT, O(ttl), "TTL", "IPv4 TTL / IPv6 hop limit", "64", 1, 255 },
	{ "df", 0, OPT_FLAG, O(df), NULL, "set IPv4 don't-fragment" },
	{ "no-csum", 0, OPT_FLAG, O(no_csum), NULL, "send UDP checksum 0 (IPv4 only)" },
	{ "src-mac", 0, OPT_STR, O(src_mac), "MAC", "source MAC for frame devices" },
	{ "dst-mac", 0, OPT_STR, O(dst_mac), "MAC", "destination MAC for frame devices" },
	{ "seed", 0, OPT_U64, O(seed), "N", "seed for IDs (0 = random)", "0" },
	{ "summary-file", 0, OPT_STR, O(summary_file), "FILE", "also write the JSON summary line to FILE" },
	OPT_END
};
#undef O

static struct txs_engine *g_engine;

/* --help lists every registered device with its usage line. */
static void print_devices(FILE *f)
{
	unsigned n;
	const struct txs_netdev_ops *const *b = txs_netdev_backends(&n);
	fprintf(f, "\ndevices (--dev):\n");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "  %s\n", b[i]->usage);
	fprintf(f, "  packet:/xdp: without -B send from the interface's first address of the destination's family\n");
}

static void on_signal(int sig)
{
	(void)sig;
	if (g_engine)
		txs_engine_stop(g_engine);
}

static void read_links(struct txs_netdev *dev, struct txs_stat_row *links)
{
	for (unsigned l = 0; l < dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(dev, l, &c);
		links[l] = (struct txs_stat_row){ c.packets, c.bytes, c.drop_full, c.drop_err };
	}
}

struct summary_extra {
	const struct send_cfg *cfg;
	struct txs_netdev *dev;
	uint64_t verify_err;
};

static void add_extra(struct txs_json *j, void *arg)
{
	const struct summary_extra *x = arg;
	txs_json_str(j, "device", x->dev->spec);
	txs_json_u64(j, "payload_len", x->cfg->length);
	txs_json_u64(j, "verify_errors", x->verify_err);
}

int cmd_send(int argc, char **argv)
{
	struct send_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[options] [-c] DEST";
	int rc = opt_parse("send", syn, send_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc == 1)
		print_devices(stdout);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (npos) {
		if (cfg.dest) {
			fprintf(stderr, "txscale send: destination given twice ('%s' and '%s')\n", cfg.dest, pos[0]);
			return 2;
		}
		cfg.dest = pos[0];
	}
	if (!cfg.dest) {
		fprintf(stderr, "txscale send: no destination: give -c ADDR or DEST (see txscale send --help)\n");
		return 2;
	}
	if (cfg.v4 && cfg.v6) {
		fprintf(stderr, "txscale send: -4 and -6 exclude each other\n");
		return 2;
	}
	struct txs_gen_conf gc = { 0 };
	struct txs_flow_spec *sp = &gc.spec;
	if (txs_addr_parse(&sp->dst, cfg.dest) < 0) {
		fprintf(stderr, "txscale send: bad destination address '%s'\n", cfg.dest);
		return 2;
	}
	if ((cfg.v4 && sp->dst.family != AF_INET) || (cfg.v6 && sp->dst.family != AF_INET6)) {
		fprintf(stderr, "txscale send: destination '%s' is not %s\n", cfg.dest, cfg.v4 ? "IPv4" : "IPv6");
		return 2;
	}
	bool v4 = sp->dst.family == AF_INET;
	const char *src = cfg.bind ? cfg.bind : v4 ? "198.18.0.1" : "2001:2::1";
	if (txs_addr_parse(&sp->src, src) < 0) {
		fprintf(stderr, "txscale send: bad source address '%s'\n", src);
		return 2;
	}
	if (sp->src.family != sp->dst.family) {
		fprintf(stderr, "txscale send: source '%s' and destination '%s' are of different families\n", src,
			cfg.dest);
		return 2;
	}
	unsigned maxlen = v4 ? 65507 : 65527;
	if (cfg.length > maxlen) {
		fprintf(stderr, "txscale send: bad value for -l/--length: '%u': at most %u bytes for %s\n", cfg.length,
			maxlen, v4 ? "IPv4" : "IPv6");
		return 2;
	}
	if (cfg.no_csum && !v4) {
		fprintf(stderr, "txscale send: --no-csum is IPv4 only: IPv6 UDP must carry a checksum\n");
		return 2;
	}
	if ((cfg.src_mac && txs_mac_parse(sp->src_mac, cfg.src_mac) < 0) ||
	    (cfg.dst_mac && txs_mac_parse(sp->dst_mac, cfg.dst_mac) < 0)) {
		fprintf(stderr, "txscale send: bad MAC address '%s'\n",
			cfg.src_mac && txs_mac_parse(sp->src_mac, cfg.src_mac) < 0 ? cfg.src_mac : cfg.dst_mac);
		return 2;
	}
	sp->sport = cfg.sport;
	sp->dport = cfg.port;
	sp->payload_len = cfg.length;
	sp->tos = (uint8_t)cfg.tos;
	sp->ttl = (uint8_t)cfg.ttl;
	sp->df = cfg.df;
	sp->no_udp_csum = cfg.no_csum;
	gc.spread_sport = true;
	gc.seed = cfg.seed;

	/* threads and CPUs */
	int cpus[TXS_MAX_CORES];
	unsigned nthreads = cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1;
	if (cfg.cpus.n && cfg.threads && cfg.threads > cfg.cpus.n) {
		fprintf(stderr, "txscale send: -P %u needs at least %u CPUs in -A (got %u)\n", cfg.threads,
			cfg.threads, cfg.cpus.n);
		return 2;
	}
	if (sp->sport + nthreads - 1 > 65535) {
		fprintf(stderr, "txscale send: --sport %u + %u threads exceeds port 65535\n", cfg.sport, nthreads);
		return 2;
	}
	cpu_set_t online;
	sched_getaffinity(0, sizeof(online), &online);
	for (unsigned i = 0, c = 0; i < nthreads; i++) {
		if (cfg.no_pin) {
			cpus[i] = -1;
		} else if (cfg.cpus.n) {
			cpus[i] = cfg.cpus.cpu[i];
		} else {
			/* default: online CPUs in order, wrapping */
			unsigned tries = 0;
			while (!CPU_ISSET(c % CPU_SETSIZE, &online) && tries++ < CPU_SETSIZE)
				c++;
			cpus[i] = (int)(c % CPU_SETSIZE);
			c++;
			if ((int)c >= CPU_SETSIZE || c > (unsigned)CPU_COUNT(&online) * 4)
				c = 0;
		}
	}
	if (cfg.time == 0 && cfg.count == 0)
		cfg.time = 10;

	/* frame size for the device pool */
	struct txs_tmpl probe;
	rc = txs_tmpl_build(&probe, sp);
	if (rc < 0) {
		fprintf(stderr, "txscale send: cannot build packets: %s\n", txs_strerror(rc));
		return 2;
	}
	uint32_t wire = probe.wire_len;
	txs_tmpl_free(&probe);

	double rate_pps = cfg.rate.bits ? cfg.rate.value / (wire * 8.0) : cfg.rate.value;

	struct txs_netdev_conf dc = { .max_queues = nthreads, .frame_size = wire };
	if (cfg.src_mac) {
		memcpy(dc.src_mac, sp->src_mac, 6);
		dc.have_src_mac = true;
	}
	if (cfg.dst_mac) {
		memcpy(dc.dst_mac, sp->dst_mac, 6);
		dc.have_dst_mac = true;
	}
	dc.dst_addr = sp->dst;
	if (cfg.bind)
		dc.src_addr = sp->src;
	struct txs_netdev *dev;
	char err[256];
	rc = txs_netdev_open(&dev, cfg.dev, &dc, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale send: --dev %s\n", err);
		return rc == -EINVAL || rc == -ENODEV ? 2 : 1;
	}
	if (!cfg.bind && dev->src_addr.family == sp->dst.family)
		sp->src = dev->src_addr; /* frame devices: a real source address */
	if (dev->l2_needed) {
		if (!cfg.src_mac)
			memcpy(sp->src_mac, dev->src_mac, 6);
		if (!cfg.dst_mac)
			memcpy(sp->dst_mac, dev->dst_mac, 6);
	}

	struct txs_engine_conf ec = {
		.n_workers = nthreads,
		.cpus = cpus,
		.count = cfg.count,
		.duration = cfg.time,
		.rate_pps = rate_pps,
		.dev = dev,
		.gen = &txs_udp_gen_ops,
		.gen_conf = &gc,
	};
	struct txs_engine *eng;
	rc = txs_engine_create(&eng, &ec);
	if (rc < 0) {
		fprintf(stderr, "txscale send: engine: %s\n", txs_strerror(rc));
		txs_netdev_close(dev);
		return 1;
	}
	g_engine = eng;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct txs_reporter rep = {
		.out = stdout, .json = cfg.json, .kind = "send", .n_threads = nthreads, .cpus = cpus,
		.n_links = dev->n_links,
	};
	if (!cfg.json) {
		char db[64];
		printf("txscale send: %s -> %s:%u, %u-byte payload, %u thread%s, device %s\n",
		       txs_addr_str(&sp->src, db, sizeof(db)), cfg.dest, cfg.port, cfg.length, nthreads,
		       nthreads > 1 ? "s" : "", dev->spec);
	}
	rc = txs_engine_start(eng);
	struct txs_stat_row *cur = calloc(nthreads, sizeof(*cur)), *prev = calloc(nthreads, sizeof(*prev));
	struct txs_stat_row links[TXS_MAX_LINKS] = { 0 }, plinks[TXS_MAX_LINKS] = { 0 }, dl[TXS_MAX_LINKS];
	struct txs_stat_row *delta = calloc(nthreads, sizeof(*delta));
	if (!cur || !prev || !delta) {
		txs_engine_stop(eng);
		rc = rc ? rc : -ENOMEM;
	}
	double last = 0;
	while (rc == 0 && !txs_engine_done(eng)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double now = txs_engine_read(eng, cur);
		if (cfg.interval > 0 && now - last >= cfg.interval) {
			read_links(dev, links);
			for (unsigned i = 0; i < nthreads; i++)
				delta[i] = (struct txs_stat_row){ cur[i].packets - prev[i].packets,
								  cur[i].bytes - prev[i].bytes,
								  cur[i].drops - prev[i].drops,
								  cur[i].errors - prev[i].errors };
			for (unsigned l = 0; l < dev->n_links; l++)
				dl[l] = (struct txs_stat_row){ links[l].packets - plinks[l].packets,
							       links[l].bytes - plinks[l].bytes,
							       links[l].drops - plinks[l].drops,
							       links[l].errors - plinks[l].errors };
			txs_report_interval(&rep, last, now, delta, dl);
			memcpy(prev, cur, sizeof(*cur) * nthreads);
			memcpy(plinks, links, sizeof(links));
			last = now;
		}
	}
	int wrc = txs_engine_wait(eng);
	if (!rc)
		rc = wrc;
	double secs = txs_engine_read(eng, cur);
	read_links(dev, links);
	if (cfg.interval > 0 && secs - last > 0.05 && rc == 0) {
		for (unsigned i = 0; i < nthreads; i++)
			delta[i] = (struct txs_stat_row){ cur[i].packets - prev[i].packets, cur[i].bytes - prev[i].bytes,
							  cur[i].drops - prev[i].drops, cur[i].errors - prev[i].errors };
		for (unsigned l = 0; l < dev->n_links; l++)
			dl[l] = (struct txs_stat_row){ links[l].packets - plinks[l].packets,
						       links[l].bytes - plinks[l].bytes,
						       links[l].drops - plinks[l].drops,
						       links[l].errors - plinks[l].errors };
		txs_report_interval(&rep, last, secs, delta, dl);
	}
	struct summary_extra x = { .cfg = &cfg, .dev = dev };
	for (unsigned l = 0; l < dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(dev, l, &c);
		x.verify_err += c.verify_err;
	}
	if (rc < 0)
		fprintf(stderr, "txscale send: %s\n", txs_strerror(rc));
	txs_report_summary(&rep, secs, cur, links, add_extra, &x);
	if (cfg.summary_file) {
		FILE *f = fopen(cfg.summary_file, "w");
		if (!f) {
			fprintf(stderr, "txscale send: cannot write --summary-file '%s': %s\n", cfg.summary_file,
				strerror(errno));
			rc = rc ? rc : -errno;
		} else {
			struct txs_reporter r2 = rep;
			r2.out = f;
			r2.json = true;
			txs_report_summary(&r2, secs, cur, links, add_extra, &x);
			fclose(f);
		}
	}
	if (!cfg.json && x.verify_err)
		fprintf(stderr, "txscale send: %llu frames failed verification\n", (unsigned long long)x.verify_err);
	g_engine = NULL;
	txs_engine_destroy(eng);
	txs_netdev_close(dev);
	free(cur);
	free(prev);
	free(delta);
	return rc < 0 ? 1 : x.verify_err ? 1 : 0;
}
