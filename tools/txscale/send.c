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
#include <txscale/ctl.h>
#include "cli.h"
#include "opt.h"
#include "metrics_opts.h"
#include "ctl_cli.h"
#include <txscale/session_send.h>

struct send_cfg {
	const char *dest;
	uint16_t port;
	const char *sport_s, *dport_s, *src_s, *dst_s, *length_s, *vlan_s, *qinq_s;
	unsigned flows;
	uint64_t flow_base;
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
	bool df, no_df, no_csum;
	const char *src_mac, *dst_mac;
	uint64_t seed;
	const char *summary_file;
	bool no_pin;
	const char *ident;
	bool ident_df_zero;
	struct send_gso { unsigned size; bool off; } gso; /* --gso: SIZE, or auto (0) or off */
	bool connected, unconnected;
	unsigned burst;
	unsigned links;
	const char *bond;
	unsigned miimon, updelay, downdelay;
	unsigned profile;
	bool dry_run;
	const char *schedule_file;
	unsigned mtu;
	struct ctl_client_opts ctl; /* -c HOST is a txscale server: client.c */
	/* rate profiles, timestamps, replay (docs/design.md "Pacing", docs/replay.md) */
	struct send_ramp { struct opt_rate from, to; double secs; } ramp;
	const char *pace;
	uint64_t burst_on;
	double burst_off_us;
	const char *pace_slack;
	const char *timestamps;
	const char *replay;
	double replay_speed;
	struct txs_metrics_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
};

/* --ramp FROM:TO:SECONDS, FROM and TO like -b */
static int parse_ramp(const char *val, void *dst, char *err, size_t errlen)
{
	struct send_ramp *r = dst;
	char buf[128];
	if (strlen(val) >= sizeof(buf))
		goto bad;
	strcpy(buf, val);
	char *a = buf, *b = strchr(a, ':'), *c = b ? strchr(b + 1, ':') : NULL;
	if (!b || !c)
		goto bad;
	*b++ = 0;
	*c++ = 0;
	if (txs_parse_rate(a, &r->from.value, &r->from.bits) < 0 || txs_parse_rate(b, &r->to.value, &r->to.bits) < 0 || txs_parse_seconds(c, &r->secs) < 0 ||
	    !(r->secs > 0) || r->from.bits != r->to.bits || (r->from.value == 0 && r->to.value == 0))
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "want FROM:TO:SECONDS, two rates like -b (same unit, not both 0) and SECONDS > 0");
	return -1;
}

/* --burst-off USEC: microseconds, fractional allowed */
static int parse_usec(const char *val, void *dst, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !(v >= 0) || v > 1e12) {
		snprintf(err, errlen, "want microseconds >= 0");
		return -1;
	}
	*(double *)dst = v;
	return 0;
}

static int parse_speed(const char *val, void *dst, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (errno || end == val || *end || !(v > 0) || v > 1e9) {
		snprintf(err, errlen, "want a multiple of the capture's own timing > 0 (0.5, 2, 100)");
		return -1;
	}
	*(double *)dst = v;
	return 0;
}

/* --gso auto|off|SIZE */
static int parse_gso(const char *val, void *dst, char *err, size_t errlen)
{
	struct send_gso *g = dst;
	*g = (struct send_gso){ 0 };
	if (strcmp(val, "auto") == 0)
		return 0;
	if (strcmp(val, "off") == 0) {
		g->off = true;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long n = strtoul(val, &end, 10);
	if (errno || end == val || *end || n > 65535 || val[0] == '-') {
		snprintf(err, errlen, "expected auto, off or a segment SIZE 1..65535 (bytes)");
		return -1;
	}
	g->size = (unsigned)n;
	return 0;
}

/* --dev help: the registered backends' usage lines, filled before parsing */
static char dev_help[2048];

static void build_dev_help(void)
{
	unsigned n;
	const struct txs_netdev_ops *const *b = txs_netdev_backends(&n);
	size_t off = (size_t)snprintf(dev_help, sizeof(dev_help), "device, one of:");
	for (unsigned i = 0; i < n && off < sizeof(dev_help); i++)
		off += (size_t)snprintf(dev_help + off, sizeof(dev_help) - off, "\n%29s%s", "", b[i]->usage);
	if (off < sizeof(dev_help))
		snprintf(dev_help + off, sizeof(dev_help) - off, "\n%28s", "");
}

#define O(f) offsetof(struct send_cfg, f)
static const struct opt send_opts[] = {
	{ "client", 'c', OPT_STR, O(dest), "ADDR", "a txscale or iperf3 server: the test runs with it over its control port (exit 1 when neither answers; docs/iperf3.md); an iperf 2 server with --iperf2; a bare DEST sends without a server" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "destination UDP port", "5201" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "source address (default: udp: the kernel's choice; packet:/xdp: the interface's; else 198.18.0.1 or 2001:2::1); with -c HOST our address for everything, control connection and data, as iperf3's -B" },
	{ "sport", 0, OPT_STR, O(sport_s), "PORTS", "source port of thread 0 (thread k uses PORT+k), or a range "
	  "LO-HI[,inc|,random|,stride=N] walked over the flows (docs/udp.md, \"Flows and sizes\")", "40000" },
	{ "dport", 0, OPT_STR, O(dport_s), "PORTS", "destination port range LO-HI[,WALK] over the flows (instead of -p)" },
	{ "src", 0, OPT_STR, O(src_s), "ADDRS", "source address range LO-HI[,WALK] over the flows (instead of -B)" },
	{ "dst", 0, OPT_STR, O(dst_s), "ADDRS", "destination address range LO-HI[,WALK] over the flows (instead of DEST)" },
	{ "flows", 0, OPT_UINT, O(flows), "N", "flows per thread, each with its own flow id and sequence (default: the "
	  "largest range's size, else 1)", NULL, 1, 1u << 20 },
	{ "flow-base", 0, OPT_U64, O(flow_base), "N", "flow id of thread 0's first flow, so that several senders into "
	  "one recv do not collide", "0", 0, 0xffffffffu },
	{ "vlan", 0, OPT_STR, O(vlan_s), "ID[,PRIO]", "tag frames 802.1Q (frame devices: packet:, xdp:, pcap:, dummy)" },
	{ "qinq", 0, OPT_STR, O(qinq_s), "OUTER,INNER", "tag frames 802.1ad OUTER (0x88a8) + 802.1Q INNER; each ID[:PRIO]" },
	{ "ipv4", '4', OPT_FLAG, O(v4), NULL, "IPv4 only (destination must be IPv4)" },
	{ "ipv6", '6', OPT_FLAG, O(v6), NULL, "IPv6 only (destination must be IPv6)" },
	{ "length", 'l', OPT_STR, O(length_s), "SIZES", "UDP payload bytes: N, a list N,N,...[:W,W,...] with weights, "
	  "LO-HI[/STEP] (uniform), or imix (64/594/1518-byte frames 7:4:1)", "16" },
	{ "bitrate", 'b', OPT_RATE, O(rate), "RATE", "total rate: packets/s (1M, 250k) or frame bits/s (100Mbit); 0 = unlimited", "0" },
	{ "time", 't', OPT_SECONDS, O(time), "SEC", "stop after SEC seconds (default 10 unless -n is given)" },
	{ "packets", 'n', OPT_U64, O(count), "N", "stop after N packets in total (k/M/G suffixes)", NULL, 1, 0 },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "worker threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin workers to these CPUs, e.g. 0-3, each CPU once (default: not pinned, like iperf3)" },
	{ "no-pin", 0, OPT_FLAG, O(no_pin), NULL, "do not pin workers (the default without -A)" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "seconds between interval reports; 0 = none", "1" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines output (docs/json-schema.md)" },
	{ "dev", 0, OPT_STR, O(dev), "DEV", dev_help, "dummy" },
	{ "tos", 0, OPT_UINT, O(tos), "TOS", "IPv4 TOS / IPv6 traffic class", "0", 0, 255 },
	{ "ttl", 0, OPT_UINT, O(ttl), "TTL", "IPv4 TTL / IPv6 hop limit", "64", 1, 255 },
	{ "df", 0, OPT_FLAG, O(df), NULL, "set IPv4 don't-fragment on every datagram (udp: IP_PMTUDISC_DO: one over the "
	  "path MTU is refused)" },
	{ "no-df", 0, OPT_FLAG, O(no_df), NULL, "clear IPv4 don't-fragment on every datagram (udp: IP_PMTUDISC_DONT). "
	  "Default: udp: as a kernel socket, DF on each datagram that fits the path MTU (IP_PMTUDISC_WANT), so GSO "
	  "applies; frame devices: DF clear, so the IPv4 ID allocators are meaningful" },
	{ "no-csum", 0, OPT_FLAG, O(no_csum), NULL, "send UDP checksum 0 (IPv4 only)" },
	{ "src-mac", 0, OPT_STR, O(src_mac), "MAC", "source MAC for frame devices" },
	{ "dst-mac", 0, OPT_STR, O(dst_mac), "MAC", "destination MAC for frame devices" },
	{ "seed", 0, OPT_U64, O(seed), "N", "seed for IDs (0 = random)", "0" },
	{ "burst", 0, OPT_UINT, O(burst), "N", "frames per device call (default 32, or what the device does best with: packet: 64 per kick, udp: with GSO the kernel's segment limit; the sendmsg path raises it to fit one datagram's frames)", NULL, 1, 256 },
	{ "gso", 0, OPT_CUSTOM, O(gso), "auto|off|SIZE", "UDP_SEGMENT. auto: --dev udp coalesces the datagrams due "
	  "together into GSO sends where the wire stays the same (one flow, one size, within the MTU); off: one datagram "
	  "per message; SIZE: cut each -l payload into SIZE-byte datagrams (sendmsg path)", "auto", 0, 0,
	  parse_gso },
	{ "mtu", 0, OPT_UINT, O(mtu), "BYTES", "link MTU for fragmentation, --df and --gso checks (default: the device's: "
	  "the interface's for packet:/xdp:/udp:, 1500 or mtu=N for pcap:/dummy)", NULL, 576, 65535 },
	{ "connected", 0, OPT_FLAG, O(connected), NULL, "one connected flow per thread (default)" },
	{ "unconnected", 0, OPT_FLAG, O(unconnected), NULL, "name the destination per datagram (sendmsg path)" },
	{ "summary-file", 0, OPT_STR, O(summary_file), "FILE", "also write the JSON summary line to FILE" },
	{ "dry-run", 0, OPT_FLAG, O(dry_run), NULL, "check the options and open the device, then exit without sending (0 = the run would start, 2 = bad input)" },
	{ "schedule-file", 0, OPT_STR, O(schedule_file), "FILE",
	  "write the schedule the run keeps to FILE (needs -n): one line per datagram, 'THREAD DATAGRAM NS', "
	  "NS = when it is due after the start (a late thread sends what came due at once and keeps to it); "
	  "with --dry-run nothing is sent" },
	{ "ident", 0, OPT_STR, O(ident), "NAME", "IPv4 ID allocator: lease, atomic, cas-loop, percpu-segment, flow", "lease" },
	{ "ident-df-zero", 0, OPT_FLAG, O(ident_df_zero), NULL, "with --df, send IPv4 ID 0 (RFC 6864)" },
	{ "links", 0, OPT_UINT, O(links), "N", "dummy device: expose N links (adds links=N to --dev)", NULL, 1,
	  TXS_MAX_LINKS },
	{ "bond", 0, OPT_STR, O(bond), "SPEC",
	  "link selection MODE[,packets_per_slave=N][,hash=POLICY][,scope=S][,primary=L]: balance-rr, "
	  "active-backup, balance-xor, broadcast (docs/linksel.md); default balance-rr when the device has links" },
	{ "miimon", 0, OPT_UINT, O(miimon), "MS",
	  "packet:/xdp: re-read every link's carrier each MS ms besides rtnetlink events; 0 = events only "
	  "(link monitoring: docs/linksel.md)", "100", 0, 60000 },
	{ "updelay", 0, OPT_UINT, O(updelay), "MS", "take a link back after its carrier is up MS ms", "0", 0, 600000 },
	{ "downdelay", 0, OPT_UINT, O(downdelay), "MS", "drop a link after its carrier is down MS ms", "0", 0,
	  600000 },
	{ "profile", 0, OPT_UINT, O(profile), "N",
	  "time each stage of the walk (ident, linksel, header, device, other) with the cycle counter on one burst "
	  "in N (N defaults to 64) and print each one's share after the summary (x86-64; docs/profile.md)",
	  NULL, 1, 1u << 20, NULL, "64" },
	{ "ramp", 0, OPT_CUSTOM, O(ramp), "FROM:TO:SEC",
	  "rate profile: the total rate goes linearly from FROM to TO (units of -b) over SEC seconds, then stays at TO "
	  "(replaces -b)", NULL, 0, 0, parse_ramp },
	{ "pace", 0, OPT_STR, O(pace), "MODE",
	  "departures: const (evenly spaced at -b) or poisson (exponential gaps, mean rate -b, per-thread RNG from "
	  "--seed)", "const" },
	{ "burst-on", 0, OPT_U64, O(burst_on), "N",
	  "on/off bursts: each thread sends N datagrams (spaced at -b, or back to back without -b), then is silent "
	  "--burst-off", NULL, 1, 0 },
	{ "burst-off", 0, OPT_CUSTOM, O(burst_off_us), "USEC",
	  "silence between bursts, from the last datagram of one to the first of the next", NULL, 0, 0, parse_usec },
	{ "pace-slack", 0, OPT_STR, O(pace_slack), "USEC",
	  "paced runs: sleep between sends and send the datagrams that fall due within USEC of the first one due "
	  "together (one GSO call on udp:, one ring kick on packet:/xdp:), never ahead of the schedule; 0 = "
	  "spin-exact (each datagram at its time, a core busy for it), at most 100000; auto: "
	  TXS_XSTR(TXS_PACE_SLACK_DEFAULT_US) " us, and with -b, two gaps between datagrams where that is longer (at "
	  "most 1 ms) (docs/pacing.md)", "auto" },
	{ "timestamps", 0, OPT_STR, O(timestamps), "MODE",
	  "send timestamp in the payload: burst (one clock read per device burst), packet (one TSC read per "
	  "datagram: exact, costs a read each) or interp (one TSC read per burst plus a measured per-datagram step: "
	  "each datagram its own stamp at about burst's cost; the error is checked and reported)", "burst" },
	{ "replay", 0, OPT_STR, O(replay), "FILE",
	  "send the Ethernet frames of a pcap file instead of generated datagrams, at its own timing (or "
	  "--replay-speed, or -b); -n/-t loop it. --dev udp: the UDP payloads of its whole UDP datagrams go to DEST "
	  "(other frames skipped and counted) (docs/replay.md)" },
	{ "replay-speed", 0, OPT_CUSTOM, O(replay_speed), "X",
	  "--replay at X times the capture's own pace (2 = twice as fast)", "1", 0, 0, parse_speed },
	CTL_CLIENT_OPTS(O(ctl)),
	MCLI_OPTS(O(metrics)),
	OPT_END
};
#undef O


/* Link monitor (monitor thread, or a worker on a hard error): one line per change. */
static void on_link(void *arg, unsigned link, const char *ifname, bool up, enum txs_link_why why, int err)
{
	(void)arg;
	static const char *const whys[] = { "rtnetlink", "miimon", "send error", "retry", "stalled sends" };
	uint64_t t = txs_now_real_ns();
	fprintf(stderr, "txscale send: link %u (%s) %s (%s%s%s) at %llu.%06llu\n", link, ifname, up ? "up" : "down",
		(unsigned)why < 5 ? whys[why] : "?", err ? ": " : "", err ? txs_strerror(err) : "",
		(unsigned long long)(t / 1000000000u), (unsigned long long)(t % 1000000000u / 1000u));
}

int send_stamp_shift(int64_t *out)
{
	const char *shift = getenv("TXS_TEST_STAMP_SHIFT_NS");
	*out = 0;
	if (!shift || !*shift)
		return 0;
	char *end;
	errno = 0;
	long long v = strtoll(shift, &end, 10);
	if (errno || *end || v < -(1ll << 40) || v > (1ll << 40)) {
		fprintf(stderr, "txscale send: bad TXS_TEST_STAMP_SHIFT_NS '%s': expected nanoseconds\n", shift);
		return 2;
	}
	*out = v;
	return 0;
}

static void on_note(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "txscale send: %s\n", line);
}

static struct txs_send *g_send;

static void on_signal(int sig)
{
	(void)sig;
	txs_send_stop(g_send);
}

static void fill_conf(const struct send_cfg *o, struct txs_send_conf *c)
{
	*c = (struct txs_send_conf){
		.dest = o->dest, .port = o->port, .bind = o->bind, .sport = o->sport_s, .dport = o->dport_s,
		.src = o->src_s, .dst = o->dst_s, .flows = o->flows, .flow_base = o->flow_base, .vlan = o->vlan_s,
		.qinq = o->qinq_s, .v4 = o->v4, .v6 = o->v6, .length = o->length_s,
		.rate = { o->rate.value, o->rate.bits }, .time = o->time, .count = o->count, .threads = o->threads,
		.n_cpus = o->cpus.n, .no_pin = o->no_pin, .interval = o->interval, .dev = o->dev, .tos = o->tos,
		.ttl = o->ttl, .df = o->df, .no_df = o->no_df, .no_csum = o->no_csum, .src_mac = o->src_mac, .dst_mac = o->dst_mac,
		.seed = o->seed, .ident = o->ident, .ident_df_zero = o->ident_df_zero, .gso_size = o->gso.size,
		.gso_off = o->gso.off, .connected = o->connected, .unconnected = o->unconnected, .burst = o->burst,
		.links = o->links, .bond = o->bond, .miimon = o->miimon, .updelay = o->updelay,
		.downdelay = o->downdelay, .profile = o->profile, .mtu = o->mtu,
		.ramp = { { o->ramp.from.value, o->ramp.from.bits }, { o->ramp.to.value, o->ramp.to.bits },
			  o->ramp.secs },
		.pace = o->pace, .burst_on = o->burst_on, .burst_off_us = o->burst_off_us, .pace_slack = o->pace_slack,
		.timestamps = o->timestamps, .replay = o->replay, .replay_speed = o->replay_speed,
		.schedule_file = o->schedule_file, .on_link = on_link, .on_note = on_note,
	};
	memcpy(c->cpus, o->cpus.cpu, sizeof(int) * o->cpus.n);
}

static int send_session(const struct send_cfg *cfg, const struct txs_send_conf *conf, FILE *sumf,
			const struct txs_ctl_side_io *io);

/* Our sender in a client run: the session from the user's options. */
struct own_send {
	const struct send_cfg *cfg;
	const struct txs_send_conf *conf;
};

static int own_send_run(void *arg, const char *dev, const struct txs_ctl_side_io *io)
{
	const struct own_send *w = arg;
	struct txs_send_conf c = *w->conf;
	if (dev)
		c.dev = dev;
	if (io && io->port) /* the data port the server chose for this session */
		c.port = io->port;
	return send_session(w->cfg, &c, io->sumf, io);
}

/* --server, -R, --bidir, a server at -c HOST: client.c runs the test. */
static int run_client(struct send_cfg *cfg, const struct txs_send_conf *conf, const struct txs_send_plan *pl)
{
	if (cfg->ramp.secs > 0 || cfg->burst_on || strcmp(cfg->pace, "const") || cfg->replay) {
		fprintf(stderr, "txscale send: --ramp, --pace, --burst-on and --replay are not forwarded to "
				"a txscale server: run send here\n");
		return 2;
	}
	if ((cfg->ctl.reverse || cfg->ctl.bidir) && (pl->shaped || pl->tagged)) {
		/* the server's sender takes a length and a rate only */
		fprintf(stderr, "txscale send: %s: the server's sender makes one flow per thread of one size: flows, "
				"ranges, size mixes and VLAN tags go one way only (drop -R/--bidir)\n",
			cfg->ctl.reverse ? "-R" : "--bidir");
		return 2;
	}
	if (cfg->metrics.addr || cfg->metrics.file) {
		fprintf(stderr, "txscale send: --metrics and --metrics-file apply to a run of send itself, not yet to "
				"a test set up with a txscale server (--server, -R, --bidir)\n");
		return 2;
	}
	struct own_send w = { cfg, conf };
	return ctl_client_run(&cfg->ctl, &(struct ctl_send_info){ pl->dest, pl->port, pl->length, pl->rate_pps,
			      cfg->count, pl->time, cfg->interval, cfg->json, &cfg->cpus, cfg->threads, cfg->no_pin,
			      cfg->timestamps, conf->stamp_shift_ns, conf->bind }, &(struct ctl_own_send){ own_send_run, &w });
}

/* The run's hooks: metrics every poll, interval reports, the client's stop. */
struct run_ctx {
	struct txs_reporter rep;
	struct txs_metrics_life *ml;
	struct txs_metrics_send *mx;
	const struct txs_ctl_side_io *io;
};

static bool on_stop(void *arg)
{
	const struct txs_ctl_side_io *io = ((struct run_ctx *)arg)->io;
	return io->stop(io->arg);
}

static void on_poll(void *arg, const struct txs_send_tick *t)
{
	struct run_ctx *x = arg;
	txs_metrics_send_update(x->mx, t->now, t->threads, t->links, TXS_METRICS_RUNNING);
	txs_metrics_life_tick(x->ml, t->now);
}

static void on_interval(void *arg, double t0, double t1, const struct txs_stat_row *threads,
			const struct txs_stat_row *links)
{
	struct run_ctx *x = arg;
	flockfile(x->rep.out); /* whole lines beside the client's receiver */
	txs_report_interval(&x->rep, t0, t1, threads, links);
	funlockfile(x->rep.out);
}

/* Run the opened session, print what it did (sumf, if set, is closed
 * here; io: the client's side). Exit status. */
static int run(const struct send_cfg *cfg, struct txs_send *s, FILE *sumf, const struct txs_ctl_side_io *io)
{
	const struct txs_send_info *in = txs_send_info(s);
	struct run_ctx x = { .io = io };
	int mrc = mcli_start(&x.ml, "send", &cfg->metrics, cfg->interval);
	if (!mrc && txs_send_metrics(s, txs_metrics_life_registry(x.ml), &x.mx) < 0) {
		fprintf(stderr, "txscale send: metrics: out of memory\n");
		mrc = 1;
	}
	if (mrc) {
		txs_metrics_life_close(x.ml);
		if (sumf)
			fclose(sumf);
		return mrc;
	}
	if (!io) { /* the client's own handlers stay */
		g_send = s;
		struct sigaction sa = { .sa_handler = on_signal };
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	/* reports go to stderr when the device writes to stdout (pcap:-); a
	 * reader that goes away is then a write error of the device (EPIPE, one
	 * line, exit 1), not a silent death by SIGPIPE */
	FILE *out = in->uses_stdout ? stderr : stdout;
	if (in->uses_stdout)
		signal(SIGPIPE, SIG_IGN);
	txs_send_reporter(s, out, cfg->json, &x.rep);
	if (!cfg->json)
		txs_send_start_text(out, s);
	struct txs_send_hooks h = { .poll = x.mx ? on_poll : NULL, .interval = on_interval, .user = &x,
				    .stop = io ? on_stop : NULL };
	const struct txs_send_result *r;
	int rc = txs_send_run(s, &h, &r);
	if (x.mx)
		txs_metrics_send_update(x.mx, r->seconds, r->threads, r->links, TXS_METRICS_FINISHED);
	if (!io || !io->hold) {
		flockfile(out);
		txs_send_summary(out, cfg->json, r);
		funlockfile(out);
	}
	if (sumf) {
		txs_send_summary(sumf, true, r);
		if (fclose(sumf) != 0) {
			fprintf(stderr, "txscale send: cannot write --summary-file '%s': %s\n", cfg->summary_file,
				strerror(errno));
			rc = rc ? rc : -EIO;
		}
	}
	txs_send_result_problems(stderr, "txscale send: ", cfg->json, r);
	bool failed = r->failed;
	if (mcli_end(x.ml))
		failed = true;
	txs_metrics_life_close(x.ml);
	txs_metrics_send_destroy(x.mx);
	if (!io)
		g_send = NULL;
	return rc < 0 || failed ? 1 : r->verify_errors ? 1 : 0;
}

/* Open, run and close the session of conf, printing as `txscale send` does;
 * sumf (may be NULL) is closed here. io: the client's own sender
 * (ctl_cli.h). Exit status. */
static int send_session(const struct send_cfg *cfg, const struct txs_send_conf *conf, FILE *sumf,
			const struct txs_ctl_side_io *io)
{
	char err[512];
	struct txs_send *s;
	int rc = txs_send_open(&s, conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale send: %s\n", err);
		if (sumf)
			fclose(sumf);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENAMETOOLONG ? 2 : 1;
	}
	if (cfg->schedule_file && txs_send_write_schedule(s, cfg->schedule_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale send: %s\n", err);
		rc = 1;
	} else if (cfg->dry_run) {
		rc = 0;
	} else {
		rc = run(cfg, s, sumf, io);
		sumf = NULL;
	}
	if (sumf)
		fclose(sumf);
	txs_send_close(s);
	return rc;
}

/* From the parsed options on (dest set): the exit status. argc/argv: what
 * the client check reads (the iperf3 form: -c without --dev). */
static int send_main(struct send_cfg *cfg, int argc, char **argv)
{
	struct txs_send_conf conf;
	int64_t shift;
	if (send_stamp_shift(&shift))
		return 2;
	fill_conf(cfg, &conf);
	conf.stamp_shift_ns = shift;
	char err[512];
	struct txs_send_plan plan;
	int rc = txs_send_conf_check(&conf, &plan, err, sizeof(err));
	if (rc < 0) {
		/* the library names its fields; the CLI adds how they are given here */
		fprintf(stderr, "txscale send: %s%s\n", err,
			strncmp(err, "no destination", 14) == 0 ? " (here: -c ADDR or DEST; see txscale send --help)" : "");
		return rc == -EINVAL ? 2 : 1;
	}
	if (ctl_client_wanted(&cfg->ctl, plan.dest, argc, argv))
		return run_client(cfg, &conf, &plan);
	/* --summary-file: refused before anything starts, not reported after the run */
	FILE *sumf = NULL;
	if (cfg->summary_file && !(sumf = fopen(cfg->summary_file, "w"))) {
		fprintf(stderr, "txscale send: bad value for --summary-file: '%s': %s\n", cfg->summary_file,
			strerror(errno));
		return 2;
	}
	return send_session(cfg, &conf, sumf, NULL);
}

int cmd_send(int argc, char **argv)
{
	struct send_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[options] [-c] DEST";
	build_dev_help();
	int rc = opt_parse("send", syn, send_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (npos) {
		if (cfg.dest) {
			fprintf(stderr, "txscale send: destination given twice ('%s' and '%s')\n", cfg.dest, pos[0]);
			return 2;
		}
		cfg.dest = pos[0];
	}
	return send_main(&cfg, argc, argv);
}
