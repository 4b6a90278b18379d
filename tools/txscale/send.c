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
#include "send_udp.h"
#include "send_shape.h"
#include "metrics_cli.h"
#include "ctl_cli.h"
#include <txscale/replay.h>

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
	bool df, no_csum;
	const char *src_mac, *dst_mac;
	uint64_t seed;
	const char *summary_file;
	bool no_pin;
	const char *ident;
	bool ident_df_zero;
	struct send_gso gso;
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
	const char *timestamps;
	const char *replay;
	double replay_speed;
	struct mcli_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
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
	if (opt_parse_rate(a, &r->from) < 0 || opt_parse_rate(b, &r->to) < 0 || opt_parse_seconds(c, &r->secs) < 0 ||
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

/* The lowest -b: one packet per 1000 s per thread. Below it, a run of any
 * sane length sends at most one packet per thread, and the schedule's
 * nanosecond arithmetic leaves the clock's range. */
#define SEND_MIN_PPS 0.001
#define SEND_SCHEDULE_MAX 10000000u /* --schedule-file lines */

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
	{ "client", 'c', OPT_STR, O(dest), "ADDR", "a txscale or iperf3 server: the test runs with it over its control port (exit 1 when neither answers; docs/iperf3.md); a bare DEST sends without a server" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "destination UDP port", "5201" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "source address (default: udp: the kernel's choice; packet:/xdp: the interface's; else 198.18.0.1 or 2001:2::1)" },
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
	{ "df", 0, OPT_FLAG, O(df), NULL, "set IPv4 don't-fragment" },
	{ "no-csum", 0, OPT_FLAG, O(no_csum), NULL, "send UDP checksum 0 (IPv4 only)" },
	{ "src-mac", 0, OPT_STR, O(src_mac), "MAC", "source MAC for frame devices" },
	{ "dst-mac", 0, OPT_STR, O(dst_mac), "MAC", "destination MAC for frame devices" },
	{ "seed", 0, OPT_U64, O(seed), "N", "seed for IDs (0 = random)", "0" },
	{ "burst", 0, OPT_UINT, O(burst), "N", "frames per device call (default 32, or what the device does best with: packet: 64 per kick, udp: with GSO the kernel's segment limit; the sendmsg path raises it to fit one datagram's frames)", NULL, 1, 256 },
	{ "gso", 0, OPT_CUSTOM, O(gso), "auto|off|SIZE", "UDP_SEGMENT. auto: --dev udp coalesces the datagrams due "
	  "together into GSO sends where the wire stays the same (one flow, one size, within the MTU); off: one datagram "
	  "per message; SIZE: cut each -l payload into SIZE-byte datagrams (sendmsg path)", "auto", 0, 0,
	  send_udp_parse_gso },
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

static struct txs_engine *g_engine;

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

/* Thread k's row is what the device counted on queue k (the worker's own
 * queue): the same counters the link rows sum, so the summary, the threads
 * and the links cannot tell different stories (one count per fact). */
/* Thread rows: one count per fact. The device counts frames per queue
 * (sent, refused full, refused with an error, and accepted frames it later
 * learnt never left moved to errors); the engine counts UDP datagrams (e).
 * Where a datagram is one frame (GSO segments count as frames and as
 * datagrams) the device's counts are the row. Where a datagram is fpd > 1
 * IP fragments, the row counts datagrams: the engine's sent and dropped
 * ones, less one for every accepted frame the device later retracted (each
 * may have broken a datagram: counted as an error, never as sent); frames
 * and bytes stay the device's. */
static void read_threads(struct txs_netdev *dev, struct txs_engine *eng, const struct txs_stat_row *e, unsigned n,
			 struct txs_stat_row *rows)
{
	for (unsigned k = 0; k < n; k++) {
		struct txs_link_counters c;
		txs_netdev_queue_stats(dev, k, &c);
		unsigned fpd = txs_engine_worker(eng, k)->frames_per_dgram;
		if (fpd <= 1) {
			rows[k] = (struct txs_stat_row){ c.packets, c.bytes, c.drop_full, c.drop_err, c.packets };
			continue;
		}
		uint64_t gone = e[k].frames > c.packets ? e[k].frames - c.packets : 0;
		if (gone > e[k].packets)
			gone = e[k].packets;
		rows[k] = (struct txs_stat_row){ e[k].packets - gone, c.bytes, e[k].drops, gone, c.packets };
	}
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* a device may move counted frames to errors later (pcap write error) */
}

/* d = a - b, row by row; returns whether anything moved */
static bool rows_sub(struct txs_stat_row *d, const struct txs_stat_row *a, const struct txs_stat_row *b, unsigned n)
{
	bool any = false;
	for (unsigned i = 0; i < n; i++) {
		d[i] = (struct txs_stat_row){ sub0(a[i].packets, b[i].packets), sub0(a[i].bytes, b[i].bytes),
					      sub0(a[i].drops, b[i].drops), sub0(a[i].errors, b[i].errors),
					      sub0(a[i].frames, b[i].frames) };
		any |= d[i].packets || d[i].drops || d[i].errors;
	}
	return any;
}

struct summary_extra {
	const struct send_cfg *cfg;
	struct txs_netdev *dev;
	uint64_t verify_err;
	uint64_t icmp_err;
	struct txs_linksel *ls;
	const struct txs_prof_summary *prof; /* --profile */
	const struct send_shape *shape;      /* flows, sizes */
	const struct txs_stat_row *erows;    /* the engine's rows: datagrams per thread */
	unsigned nthreads;
	const struct txs_ts_check *ts_check; /* --timestamps interp */
	const struct txs_replay_udp_info *rudp; /* --replay through udp: the file's datagrams and skips */
};

/* "profile":{...} in the summary (docs/json-schema.md, "profile") */
static void prof_json(struct txs_json *j, const struct txs_prof_summary *p)
{
	txs_json_obj_open(j, "profile");
	txs_json_u64(j, "sample_every", p->every);
	txs_json_u64(j, "samples", p->samples);
	txs_json_u64(j, "discarded", p->discarded);
	txs_json_u64(j, "packets", p->pkts);
	txs_json_dbl(j, "tsc_hz", p->tsc_hz > 0 ? p->tsc_hz : NAN);
	txs_json_dbl(j, "stamp_cycles", p->stamp_cycles);
	txs_json_bool(j, "ident_in_header", !p->split);
	txs_json_obj_open(j, "stages");
	for (unsigned s = 0; s < TXS_PROF_STAGES; s++) {
		if (!p->split && (s == TXS_PROF_IDENT || s == TXS_PROF_LINKSEL))
			continue; /* not timed apart on the sendmsg path */
		txs_json_obj_open(j, txs_prof_stage_name(s));
		txs_json_dbl(j, "share", p->share[s]);
		txs_json_dbl(j, "cycles_per_pkt", p->cyc_per_pkt[s]);
		txs_json_dbl(j, "ns_per_pkt", p->tsc_hz > 0 ? p->ns_per_pkt[s] : NAN);
		txs_json_obj_close(j);
	}
	txs_json_obj_close(j);
	txs_json_obj_close(j);
}

/* One line after the text summary. */
static void prof_text(FILE *f, const struct txs_prof_summary *p)
{
	fprintf(f, "profile (1 burst in %u, %llu packets sampled", p->every, (unsigned long long)p->pkts);
	if (p->tsc_hz > 0)
		fprintf(f, ", TSC %.3f GHz", p->tsc_hz / 1e9);
	fprintf(f, "):");
	if (!p->pkts) {
		fprintf(f, " no burst sampled\n");
		return;
	}
	for (unsigned s = 0, first = 1; s < TXS_PROF_STAGES; s++) {
		if (!p->split && (s == TXS_PROF_IDENT || s == TXS_PROF_LINKSEL))
			continue;
		fprintf(f, "%s%s%s %.1f%% (%.1f cyc", first ? " " : "  ", txs_prof_stage_name(s),
			!p->split && s == TXS_PROF_HEADER ? "+ident" : "", 100 * p->share[s], p->cyc_per_pkt[s]);
		if (p->tsc_hz > 0)
			fprintf(f, ", %.2f ns", p->ns_per_pkt[s]);
		fprintf(f, "/pkt)");
		first = 0;
	}
	if (!p->split)
		fprintf(f, "  [sendmsg path: ident is timed inside header, no link selection]");
	fputc('\n', f);
}

static void add_extra(struct txs_json *j, void *arg)
{
	const struct summary_extra *x = arg;
	txs_json_str(j, "device", x->dev->spec);
	txs_json_u64(j, "payload_len", x->cfg->length);
	if (x->cfg->replay)
		txs_json_str(j, "replay", x->cfg->replay);
	if (x->rudp) {
		txs_json_u64(j, "replay_datagrams", x->rudp->datagrams);
		txs_json_obj_open(j, "replay_skipped");
		txs_json_u64(j, "total", x->rudp->skipped_total);
		for (unsigned k = 0; k < TXS_REPLAY_SKIP_N; k++)
			txs_json_u64(j, txs_replay_skip_name(k), x->rudp->skipped[k]);
		txs_json_obj_close(j);
	}
	txs_json_str(j, "timestamps", x->cfg->timestamps);
	if (x->ts_check) {
		const struct txs_ts_check *c = x->ts_check;
		txs_json_obj_open(j, "timestamp_check");
		txs_json_u64(j, "bursts", c->bursts);
		txs_json_dbl(j, "err_mean_ns", c->err_mean_ns);
		txs_json_u64(j, "err_p50_below_ns", c->err_p50_ns);
		txs_json_u64(j, "err_p99_below_ns", c->err_p99_ns);
		txs_json_u64(j, "err_max_ns", c->err_max_ns);
		txs_json_dbl(j, "step_ns", c->step_ns);
		txs_json_obj_close(j);
	}
	txs_json_u64(j, "verify_errors", x->verify_err);
	txs_json_u64(j, "icmp_errors", x->icmp_err);
	if (x->ls) {
		char b[128];
		struct txs_linksel_stats st;
		txs_linksel_stats(x->ls, &st);
		txs_json_str(j, "bond", txs_linksel_params_str(txs_linksel_params(x->ls), b, sizeof(b)));
		txs_json_u64(j, "bond_nolink", st.nolink);
	}
	if (x->prof)
		prof_json(j, x->prof);
	if (x->shape)
		send_shape_json(j, x->shape, x->erows, x->nthreads);
	send_udp_gso_json(j, x->dev);
}

/* --ident NAME: one of the registered strategies, else one line listing them. */
static int check_ident(const char *name)
{
	unsigned n;
	const char *const *names = txs_ident_strategies(&n);
	for (unsigned i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return 0;
	fprintf(stderr, "txscale send: bad value for --ident: '%s': valid are", name);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fputc('\n', stderr);
	return -1;
}

static struct txs_stat_row sum_rows(const struct txs_stat_row *r, unsigned n)
{
	struct txs_stat_row s = { 0 };
	for (unsigned i = 0; i < n; i++) {
		s.packets += r[i].packets;
		s.bytes += r[i].bytes;
		s.drops += r[i].drops;
		s.errors += r[i].errors;
		s.frames += r[i].frames;
	}
	return s;
}

/* The end-of-run check that the counts are one story (docs/design.md):
 * each worker's frames offered to its queue (engine: accepted + refused)
 * are the frames the device counted on that queue (packets + drops +
 * errors), and the threads' total is the links' total. A difference is a
 * bug in txscale: said on stderr, and the run fails. */
static bool check_counts(const struct txs_netdev *dev, struct txs_engine *eng, unsigned n,
			 const struct txs_stat_row *e, const struct txs_stat_row *threads,
			 const struct txs_stat_row *links)
{
	bool bad = false, frags = false;
	struct txs_stat_row q = { 0 };
	for (unsigned k = 0; k < n; k++) {
		unsigned fpd = txs_engine_worker(eng, k)->frames_per_dgram;
		struct txs_link_counters c;
		txs_netdev_queue_stats(dev, k, &c);
		frags |= fpd > 1;
		uint64_t offered = (e[k].packets + e[k].drops) * (fpd ? fpd : 1);
		uint64_t counted = c.packets + c.drop_full + c.drop_err;
		q.packets += c.packets;
		q.bytes += c.bytes;
		q.drops += c.drop_full;
		q.errors += c.drop_err;
		if (offered != counted) {
			fprintf(stderr, "txscale send: count mismatch (a txscale bug, please report): thread %u offered "
					"%llu frames to --dev %s, which counted %llu (%llu sent, %llu dropped, %llu errors)\n",
				k, (unsigned long long)offered, dev->spec, (unsigned long long)counted,
				(unsigned long long)c.packets, (unsigned long long)c.drop_full,
				(unsigned long long)c.drop_err);
			bad = true;
		}
	}
	struct txs_stat_row t = sum_rows(threads, n), l = sum_rows(links, dev->n_links);
	/* links count frames: the queues' frame counts must be theirs, and where
	 * a datagram is a frame the thread rows are the same numbers */
	if (q.packets != l.packets || q.bytes != l.bytes || q.drops != l.drops || q.errors != l.errors ||
	    t.frames != l.packets ||
	    (!frags && (t.packets != l.packets || t.drops != l.drops || t.errors != l.errors))) {
		fprintf(stderr, "txscale send: count mismatch (a txscale bug, please report): --dev %s: threads sum to "
				"%llu packets (%llu frames), %llu drops, %llu errors; links to %llu frames, %llu, %llu\n",
			dev->spec, (unsigned long long)t.packets, (unsigned long long)t.frames,
			(unsigned long long)t.drops, (unsigned long long)t.errors, (unsigned long long)l.packets,
			(unsigned long long)l.drops, (unsigned long long)l.errors);
		bad = true;
	}
	return bad;
}

/* Rate profile and timestamp options: bad input is one line, before anything opens. */
static int send_pace_check(const struct send_cfg *c)
{
	bool poisson = strcmp(c->pace, "poisson") == 0;
	if (!poisson && strcmp(c->pace, "const") != 0) {
		fprintf(stderr, "txscale send: bad value for --pace: '%s': valid are const, poisson\n", c->pace);
		return -1;
	}
	if (strcmp(c->timestamps, "burst") != 0 && strcmp(c->timestamps, "packet") != 0 &&
	    strcmp(c->timestamps, "interp") != 0) {
		fprintf(stderr, "txscale send: bad value for --timestamps: '%s': valid are burst, packet, interp\n",
			c->timestamps);
		return -1;
	}
	bool ramp = c->ramp.secs > 0;
	if (ramp && c->rate.value > 0) {
		fprintf(stderr, "txscale send: --ramp and -b both set the rate: give one\n");
		return -1;
	}
	if (poisson && !(c->rate.value > 0)) {
		fprintf(stderr, "txscale send: --pace poisson needs a mean rate: give -b RATE\n");
		return -1;
	}
	if (poisson && ramp) {
		fprintf(stderr, "txscale send: --pace poisson and --ramp exclude each other\n");
		return -1;
	}
	if ((c->burst_on > 0) != (c->burst_off_us > 0)) {
		fprintf(stderr, "txscale send: --burst-on and --burst-off go together (N datagrams, then USEC of silence)\n");
		return -1;
	}
	if (c->replay_speed != 1 && !c->replay) {
		fprintf(stderr, "txscale send: --replay-speed applies to --replay\n");
		return -1;
	}
	if (c->replay_speed != 1 && (c->rate.value > 0 || ramp || poisson || c->burst_on)) {
		fprintf(stderr, "txscale send: --replay-speed scales the capture's own timing: -b, --ramp, --pace poisson "
				"and --burst-on replace it\n");
		return -1;
	}
	if (c->burst_on && (poisson || ramp)) {
		fprintf(stderr, "txscale send: --burst-on/--burst-off combine with -b only, not with --%s\n",
			poisson ? "pace poisson" : "ramp");
		return -1;
	}
	if (c->schedule_file && (!c->count || c->count > SEND_SCHEDULE_MAX)) {
		fprintf(stderr, "txscale send: --schedule-file needs -n N (at most %u datagrams), got %s\n",
			SEND_SCHEDULE_MAX, c->count ? "more" : "none");
		return -1;
	}
	return 0;
}

/* --schedule-file: every thread's due times (txs_pace_schedule), the
 * run's -n split as the engine splits it. 0, or -1 with one line. */
static int send_write_schedule(const char *path, const struct txs_engine_conf *ec)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "txscale send: bad value for --schedule-file: '%s': %s\n", path, strerror(errno));
		return -1;
	}
	uint64_t base = ec->count / ec->n_workers, rem = ec->count % ec->n_workers;
	uint64_t *due = malloc((base + 1) * sizeof(*due));
	int rc = due ? 0 : -ENOMEM;
	for (unsigned w = 0; !rc && w < ec->n_workers; w++) {
		int64_t n = txs_pace_schedule(ec, w, due, base + (w < rem));
		if (n < 0)
			rc = (int)n;
		for (int64_t j = 0; j < n; j++)
			fprintf(f, "%u %lld %llu\n", w, (long long)j, (unsigned long long)due[j]);
	}
	free(due);
	if (fclose(f) != 0 && !rc)
		rc = -errno;
	if (rc) {
		fprintf(stderr, "txscale send: --schedule-file '%s': %s\n", path, txs_strerror(rc));
		return -1;
	}
	return 0;
}

/* The engine's schedule from the options (send_pace_check passed); wire =
 * frame bytes of one datagram, for rates in bits/s. */
static struct txs_pace_conf send_pace_conf(const struct send_cfg *c, uint32_t wire)
{
	struct txs_pace_conf p = { .kind = TXS_PACE_CONST, .seed = c->seed };
	if (c->ramp.secs > 0) {
		double div = c->ramp.from.bits ? wire * 8.0 : 1;
		p.kind = TXS_PACE_RAMP;
		p.ramp_from = c->ramp.from.value / div;
		p.ramp_to = c->ramp.to.value / div;
		p.ramp_secs = c->ramp.secs;
	} else if (strcmp(c->pace, "poisson") == 0) {
		p.kind = TXS_PACE_POISSON;
	}
	p.burst_on = c->burst_on;
	p.burst_off_ns = (uint64_t)(c->burst_off_us * 1000 + 0.5);
	return p;
}

/* --replay FILE: load the capture; one line and -1 on bad input. The frames
 * go out as they are: no destination is needed (DEST, if given, only opens
 * the device), except through udp:, where DEST is where the datagrams go
 * (send_replay_route_udp). Runs on one thread (docs/replay.md). */
static int send_replay_open(struct send_cfg *c, struct txs_replay **out, struct txs_pace_conf *pace)
{
	char err[512];
	if (c->threads > 1 || c->cpus.n > 1) {
		fprintf(stderr, "txscale send: --replay sends the capture in its order from one thread: drop -P/-A (or "
				"give one CPU)\n");
		return -1;
	}
	if (c->bond || c->links || c->gso.size || c->unconnected) {
		fprintf(stderr, "txscale send: --replay sends the frames as they are, on link 0: --%s does not apply\n",
			c->bond ? "bond" : c->links ? "links" : c->gso.size ? "gso" : "unconnected");
		return -1;
	}
	int rc = txs_replay_load(out, c->replay, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale send: bad value for --replay: %s\n", err);
		return -1;
	}
	if (txs_replay_schedule(*out, c->replay_speed, pace) < 0) {
		fprintf(stderr, "txscale send: bad value for --replay-speed: '%g'\n", c->replay_speed);
		txs_replay_free(*out);
		*out = NULL;
		return -1;
	}
	if (!c->dest && strcspn(c->dev, ":") == 3 && strncmp(c->dev, "udp", 3) == 0) {
		fprintf(stderr, "txscale send: --replay through --dev %s sends the capture's UDP payloads to DEST: give "
				"one (and -p PORT)\n", c->dev);
		txs_replay_free(*out);
		*out = NULL;
		return -1;
	}
	if (!c->dest)
		c->dest = "198.18.0.2"; /* only opens a frame device */
	return 0;
}

/* "3 not IP, 1 fragment" from the skip counts, into b */
static const char *replay_skips_str(const struct txs_replay_udp_info *in, char *b, size_t n)
{
	static const char *const what[TXS_REPLAY_SKIP_N] = {
		[TXS_REPLAY_NOT_IP] = "not IP", [TXS_REPLAY_MALFORMED] = "malformed",
		[TXS_REPLAY_FRAGMENT] = "IP fragment", [TXS_REPLAY_NOT_UDP] = "not UDP",
		[TXS_REPLAY_FAMILY] = "other address family",
	};
	size_t o = 0;
	b[0] = 0;
	for (unsigned k = 0; k < TXS_REPLAY_SKIP_N; k++)
		if (in->skipped[k] && o < n) {
			int w = snprintf(b + o, n - o, "%s%llu %s", o ? ", " : "", (unsigned long long)in->skipped[k],
					 what[k]);
			o += w > 0 ? (size_t)w : 0;
		}
	return b;
}

/* Through udp: the datagrams of the capture (txs_replay_udp), their
 * schedule, the DF limit and the buffers. 0, or 2 with one line. */
static int send_replay_route_udp(const struct send_cfg *c, struct txs_replay *r,
				 struct txs_netdev *dev, unsigned mtu_opt, const struct txs_flow_spec *sp,
				 struct txs_replay_udp_info *info, struct txs_pace_conf *pace, unsigned *burst,
				 uint32_t *wire)
{
	bool v4 = sp->dst.family == AF_INET;
	uint32_t mtu = mtu_opt ? mtu_opt : dev->mtu ? dev->mtu : 1500;
	uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	char sk[256];
	if (!v4 && mtu < 1280) {
		fprintf(stderr, "txscale send: bad value for --mtu: '%u': IPv6 needs at least 1280\n", mtu);
		return 2;
	}
	dev->mtu = mtu;
	int rc = txs_replay_udp(r, sp, info);
	if (rc == -ENODATA) {
		fprintf(stderr, "txscale send: bad value for --replay: '%s': no whole %s UDP datagram to send through --dev "
				"%s among its %llu frames (%s)\n", c->replay, v4 ? "IPv4" : "IPv6", dev->spec,
			(unsigned long long)txs_replay_frames(r), replay_skips_str(info, sk, sizeof(sk)));
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "txscale send: cannot build packets: %s\n", txs_strerror(rc));
		return 2;
	}
	if (sp->df && info->max_payload + hdrs > mtu) {
		/* as -l with --df: the kernel would refuse every such datagram */
		fprintf(stderr, "txscale send: bad value for --replay: '%s': frame %llu holds a %u-byte UDP payload, over "
				"the MTU %u with --df (at most %u for %s): the kernel refuses it (EMSGSIZE)\n", c->replay,
			(unsigned long long)info->max_index, info->max_payload, mtu, mtu - hdrs, v4 ? "IPv4" : "IPv6");
		return 2;
	}
	if (txs_replay_schedule(r, c->replay_speed, pace) < 0) {
		fprintf(stderr, "txscale send: bad value for --replay-speed: '%g'\n", c->replay_speed);
		return 2;
	}
	/* -b in bits: at the datagrams' mean frame, unfragmented as for -l on udp: */
	uint64_t n = txs_replay_datagrams(r), bytes = 0;
	for (uint64_t j = 0; j < n; j++) {
		uint32_t len;
		txs_replay_datagram(r, j, &len, NULL);
		uint32_t f = TXS_ETH_HLEN + hdrs + len;
		bytes += f < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : f;
	}
	*wire = (uint32_t)((bytes + n / 2) / n);
	*burst = 1;
	dev->conf.frame_size = txs_replay_udp_frame_max(r); /* read when the queues open */
	return 0;
}

/* After the device opened: the MTU (--mtu, else the device's) and the
 * frames against it. 0, or 2 with one line. */
static int send_replay_route(const struct send_cfg *c, const struct txs_replay *r, struct txs_netdev *dev,
			     unsigned mtu_opt, unsigned *burst, uint32_t *wire)
{
	if (mtu_opt && mtu_opt > dev->mtu) {
		fprintf(stderr, "txscale send: bad value for --mtu: '%u': above the MTU of %s (%u)\n", mtu_opt, dev->spec,
			dev->mtu);
		return 2;
	}
	if (mtu_opt)
		dev->mtu = mtu_opt;
	uint64_t idx;
	uint32_t max = txs_replay_max_len(r, &idx);
	if (max > dev->mtu + TXS_ETH_HLEN) {
		fprintf(stderr, "txscale send: bad value for --replay: '%s': frame %llu is %u bytes, over the MTU %u of %s "
				"(at most %u bytes per frame)\n", c->replay, (unsigned long long)idx, max, dev->mtu,
			dev->spec, dev->mtu + TXS_ETH_HLEN);
		return 2;
	}
	uint64_t n = txs_replay_frames(r), bytes = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t len;
		txs_replay_frame(r, i, &len);
		bytes += len;
	}
	uint32_t mean = (uint32_t)((bytes + n / 2) / n);
	*wire = mean < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : mean; /* -b in bits: at the mean frame */
	*burst = 1;
	return 0;
}

static void replay_cleanup(struct txs_replay **r)
{
	txs_replay_free(*r);
	*r = NULL;
}

/* Test only (docs/recv.md, "Clock offset"): TXS_TEST_STAMP_SHIFT_NS shifts
 * our timestamps as a clock off by that much would. 0, or 2 after a message. */
static int test_stamp_shift(int64_t *out)
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
	int64_t stamp_shift;
	if (test_stamp_shift(&stamp_shift))
		return 2;
	if (npos) {
		if (cfg.dest) {
			fprintf(stderr, "txscale send: destination given twice ('%s' and '%s')\n", cfg.dest, pos[0]);
			return 2;
		}
		cfg.dest = pos[0];
	}
	/* flows, ranges: --dst/--src give DEST/-B their first address */
	/* freed on every return (the refusals return early) */
	struct send_shape shape __attribute__((cleanup(send_shape_free))) = { 0 };
	uint16_t sport = 0;
	if (send_shape_ranges(&shape, &cfg.dest, cfg.dst_s, &cfg.bind, cfg.src_s, cfg.sport_s, &sport, cfg.dport_s,
			      &cfg.port, cfg.flows, cfg.flow_base))
		return 2;
	/* --replay: the capture's frames as they are (docs/replay.md) */
	struct txs_replay *rpl __attribute__((cleanup(replay_cleanup))) = NULL;
	struct txs_pace_conf rpace;
	struct txs_replay_udp_info rudp = { 0 };
	if (cfg.replay && shape.any) {
		fprintf(stderr, "txscale send: --replay sends the capture's own frames: flows, ranges and size mixes do "
				"not apply to it\n");
		return 2;
	}
	if (cfg.replay && send_replay_open(&cfg, &rpl, &rpace) < 0) {
		return 2;
	}
	if (!cfg.dest) {
		fprintf(stderr, "txscale send: no destination: give -c ADDR or DEST (see txscale send --help)\n");
		return 2;
	}
	if (cfg.v4 && cfg.v6) {
		fprintf(stderr, "txscale send: -4 and -6 exclude each other\n");
		return 2;
	}
	if (check_ident(cfg.ident) < 0)
		return 2;
	if (send_pace_check(&cfg) < 0)
		return 2;
	if (cfg.profile && !TXS_PROF_SUPPORTED) {
		fprintf(stderr, "txscale send: --profile=%u: needs the x86-64 cycle counter (rdtsc), which this "
				"architecture lacks\n", cfg.profile);
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
	if (send_shape_sizes(&shape, cfg.length_s, sp->dst.family, &cfg.length)) {
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
	sp->sport = sport;
	sp->dport = cfg.port;
	sp->flow_id = (uint32_t)cfg.flow_base;
	gc.shape = &shape.sh;
	if (send_shape_vlan(&shape, cfg.vlan_s, cfg.qinq_s, sp)) {
		return 2;
	}
	if (rpl && sp->n_vlan) {
		/* frame devices send the capture's own tags; through udp: the
		 * kernel's interface decides */
		fprintf(stderr, "txscale send: --replay sends the capture's frames or payloads: --%s does not apply\n",
			cfg.qinq_s ? "qinq" : "vlan");
		return 2;
	}
	sp->payload_len = cfg.length;
	sp->tos = (uint8_t)cfg.tos;
	sp->ttl = (uint8_t)cfg.ttl;
	sp->df = cfg.df;
	sp->no_udp_csum = cfg.no_csum;
	gc.spread_sport = true;
	gc.seed = cfg.seed;
	struct txs_udp_gen_conf uc;
	uint32_t open_frame = 0;
	if (send_udp_precheck(cfg.gso.size, cfg.connected, cfg.unconnected, sp, &open_frame)) {
		return 2;
	}
	if (rpl)
		open_frame = txs_replay_max_len(rpl, NULL);

	/* threads and CPUs */
	int cpus[TXS_MAX_CORES];
	unsigned nthreads = cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1;
	if (cfg.cpus.n && cfg.threads && cfg.threads > cfg.cpus.n) {
		fprintf(stderr, "txscale send: -P %u needs at least %u CPUs in -A (got %u)\n", cfg.threads,
			cfg.threads, cfg.cpus.n);
		return 2;
	}
	if (sp->sport + nthreads - 1 > 65535) {
		fprintf(stderr, "txscale send: --sport %u + %u threads exceeds port 65535\n", sport, nthreads);
		return 2;
	}
	/* unpinned unless -A names CPUs: a pinned sender on CPU 0 fights a
	 * receiver or the kernel's softirq work there */
	opt_assign_cpus(&cfg.cpus, cfg.no_pin || !cfg.cpus.n, nthreads, cpus);
	if (cfg.time == 0 && cfg.count == 0)
		cfg.time = 10;

	struct txs_tmpl probe;
	rc = txs_tmpl_build(&probe, sp);
	if (rc < 0) {
		fprintf(stderr, "txscale send: cannot build packets: %s\n", txs_strerror(rc));
		return 2;
	}
	/* the client asks the server for a rate in datagrams/s: with -b in bits,
	 * at one datagram's wire size (its fragments' headers aside) */
	double ctl_rate = cfg.rate.bits ? cfg.rate.value / (probe.wire_len * 8.0) : cfg.rate.value;
	txs_tmpl_free(&probe);
	bool ctl_wanted = ctl_client_wanted(&cfg.ctl, cfg.dest, argc, argv);
	if (ctl_wanted &&
	    (cfg.ramp.secs > 0 || cfg.burst_on || strcmp(cfg.pace, "const") || rpl)) {
		fprintf(stderr, "txscale send: --ramp, --pace, --burst-on and --replay are not forwarded to "
				"a txscale server: run send here\n");
		return 2;
	}
	if (ctl_wanted && (cfg.ctl.reverse || cfg.ctl.bidir) && (shape.any || sp->n_vlan)) {
		/* the server's sender takes a length and a rate only */
		fprintf(stderr, "txscale send: %s: the server's sender makes one flow per thread of one size: flows, "
				"ranges, size mixes and VLAN tags go one way only (drop -R/--bidir)\n",
			cfg.ctl.reverse ? "-R" : "--bidir");
		return 2;
	}
	if (ctl_wanted && (cfg.metrics.addr || cfg.metrics.file)) {
		fprintf(stderr, "txscale send: --metrics and --metrics-file apply to a run of send itself, not yet to "
				"a test set up with a txscale server (--server, -R, --bidir)\n");
		return 2;
	}
	if (ctl_wanted) /* --server, -R, --bidir, a server at -c HOST: client.c */
		return ctl_client_run(&cfg.ctl, &(struct ctl_send_info){ cfg.dest, cfg.port, cfg.length, ctl_rate, cfg.count,
			cfg.time, cfg.interval, cfg.json, &cfg.cpus, cfg.threads, cfg.no_pin, cfg.timestamps }, argc, argv);

	struct txs_netdev_conf dc = { .max_queues = nthreads, .frame_size = open_frame + shape.vlan_len,
				      .vlan_len = (uint16_t)shape.vlan_len,
				      .flows = shape.ranges && shape.sh.flows > 1 ? shape.sh.flows : 0,
				      .dst = sp->dst, .dport = sp->dport, .sport = sp->sport,
				      .sizes_vary = shape.sh.n_sizes > 1, .ipv4_df = sp->df };
	if (cfg.bind)
		dc.src = sp->src;
	if (cfg.src_mac) {
		memcpy(dc.src_mac, sp->src_mac, 6);
		dc.have_src_mac = true;
	}
	if (cfg.dst_mac) {
		memcpy(dc.dst_mac, sp->dst_mac, 6);
		dc.have_dst_mac = true;
	}
	/* links: --links N adds links=N to the dummy spec; other devices know theirs */
	char devspec[256], err[256];
	const char *devs = cfg.dev;
	if (cfg.links) {
		if (strncmp(cfg.dev, "dummy", 5) != 0 || (cfg.dev[5] && cfg.dev[5] != ':')) {
			fprintf(stderr, "txscale send: --links %u applies to the dummy device; --dev %s takes its links "
					"from the device\n", cfg.links, cfg.dev);
			return 2;
		}
		if (strstr(cfg.dev, "links=")) {
			fprintf(stderr, "txscale send: --links %u and --dev %s both set the links\n", cfg.links, cfg.dev);
			return 2;
		}
		int dl = snprintf(devspec, sizeof(devspec), "%s%slinks=%u", cfg.dev, strchr(cfg.dev, ':') ? "," : ":",
				  cfg.links);
		if (dl < 0 || (size_t)dl >= sizeof(devspec)) {
			fprintf(stderr, "txscale send: bad value for --dev: '%.40s...': too long with --links %u\n", cfg.dev,
				cfg.links);
			return 2;
		}
		devs = devspec;
	}
	char gspec[sizeof(devspec) + 8];
	if (!(devs = send_udp_gso_spec(devs, cfg.gso.off, strcmp(cfg.timestamps, "interp") == 0, gspec,
					      sizeof(gspec)))) {
		return 2;
	}
	struct txs_linksel_params bp;
	if (cfg.bond && txs_linksel_parse(&bp, cfg.bond, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale send: bad value for --bond: '%s': %s\n", cfg.bond, err);
		return 2;
	}
	/* --summary-file: refused before anything starts, not reported after the run */
	FILE *sumf = NULL;
	if (cfg.summary_file && !(sumf = fopen(cfg.summary_file, "w"))) {
		fprintf(stderr, "txscale send: bad value for --summary-file: '%s': %s\n", cfg.summary_file,
			strerror(errno));
		return 2;
	}
	struct txs_netdev *dev;
	rc = txs_netdev_open(&dev, devs, &dc, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale send: --dev %s\n", err);
		if (sumf)
			fclose(sumf);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENAMETOOLONG ? 2 : 1;
	}
	if (dev->src_addr.family == sp->dst.family) {
		/* the device knows the source it sends from (udp: the kernel's
		 * choice; packet:/xdp: the interface's address): default to it, and
		 * say so when -B names another one */
		char a[INET6_ADDRSTRLEN], k[INET6_ADDRSTRLEN];
		if (!cfg.bind)
			sp->src = dev->src_addr;
		else if (memcmp(sp->src.bytes, dev->src_addr.bytes, v4 ? 4 : 16) != 0)
			fprintf(stderr, "txscale send: -B %s is not a local address: the kernel sends from %s\n",
				txs_addr_str(&sp->src, a, sizeof(a)), txs_addr_str(&dev->src_addr, k, sizeof(k)));
	}
	if (dev->l2_needed) {
		if (!cfg.src_mac)
			memcpy(sp->src_mac, dev->src_mac, 6);
		if (!cfg.dst_mac)
			memcpy(sp->dst_mac, dev->dst_mac, 6);
	}
	/* the route, at the device's MTU: fast path or sendmsg semantics */
	unsigned burst = 0;
	uint32_t wire = 0;
	int route = rpl && dev->kernel_ip ? send_replay_route_udp(&cfg, rpl, dev, cfg.mtu, sp, &rudp,
								  &rpace, &burst, &wire)
		    : rpl ? send_replay_route(&cfg, rpl, dev, cfg.mtu, &burst, &wire)
			  : send_udp_route(dev, cfg.mtu, cfg.gso.size, cfg.unconnected, sp, &uc, &burst, &wire);
	if (route == 2 || (cfg.burst && cfg.burst < burst) ||
	    (!rpl && send_shape_check(&shape, dev, route == 1, cfg.gso.size, v4, dev->mtu, nthreads))) {
		if (route != 2 && cfg.burst && cfg.burst < burst)
			fprintf(stderr, "txscale send: bad value for --burst: '%u': one %u-byte send makes %u frames\n",
				cfg.burst, cfg.length, burst);
		if (sumf)
			fclose(sumf);
		txs_netdev_close(dev);
		return 2;
	}
	if (route == 1)
		dev->conf.frame_size += shape.vlan_len; /* tags go in after the MACs (lib/udp/sockgen.c) */
	wire += shape.vlan_len * burst;           /* every frame of a datagram carries them */
	burst = cfg.burst ? cfg.burst : burst > 32 ? burst : 32;
	if (!cfg.burst && dev->tx_burst > burst)
		burst = dev->tx_burst; /* udp: with GSO, a full call is the kernel's segment limit */
	double rate_pps = cfg.rate.bits ? cfg.rate.value / (send_shape_wire(&shape, v4, dev->mtu, wire) * 8.0)
					: cfg.rate.value;
	if (cfg.rate.value > 0 && rate_pps / nthreads < SEND_MIN_PPS) {
		fprintf(stderr, "txscale send: bad value for -b/--bitrate: '%g%s': below the lowest rate, %g datagrams/s "
				"per thread (%u thread%s)\n", cfg.rate.value, cfg.rate.bits ? "bit" : "", SEND_MIN_PPS,
			nthreads, nthreads > 1 ? "s" : "");
		if (sumf)
			fclose(sumf);
		txs_netdev_close(dev);
		return 2;
	}
	struct txs_linksel *ls = NULL;
	if (!rpl && (cfg.bond || dev->n_links > 1)) {
		struct txs_linksel_conf lc = { .mode = cfg.bond, .n_links = dev->n_links, .max_cores = nthreads,
					       .seed = cfg.seed };
		rc = txs_linksel_create(&ls, &lc, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "txscale send: bad value for --bond: '%s': %s\n", cfg.bond ? cfg.bond : "",
				rc == -EINVAL ? err : txs_strerror(rc));
			if (sumf)
				fclose(sumf);
			txs_netdev_close(dev);
			return rc == -EINVAL ? 2 : 1;
		}
		gc.linksel = ls;
		uc.linksel = ls;
		if (route && txs_linksel_params(ls)->mode == TXS_LS_BROADCAST) {
			fprintf(stderr, "txscale send: --bond broadcast copies one-frame datagrams only: -l %u makes %u "
					"frames per send (use a datagram within the MTU, without --gso/--unconnected)\n",
				cfg.length, burst);
			if (sumf)
				fclose(sumf);
			txs_netdev_close(dev);
			txs_linksel_destroy(ls);
			return 2;
		}
	}
	/* link monitoring for devices with interfaces (packet:, xdp:) */
	struct txs_linkmon *mon = NULL;
	struct txs_linkmon_conf mc = { .linksel = ls, .miimon_ms = cfg.miimon, .updelay_ms = cfg.updelay,
				       .downdelay_ms = cfg.downdelay, .on_change = on_link };
	rc = txs_linkmon_start(&mon, dev, &mc, err, sizeof(err));
	if (rc < 0 && rc != -EOPNOTSUPP) {
		fprintf(stderr, "txscale send: --dev %s: %s\n", dev->spec, err);
		txs_netdev_close(dev);
		txs_linksel_destroy(ls);
		return 1;
	}

	struct txs_ident_conf ic = { .strategy = cfg.ident, .max_cores = nthreads, .seed = cfg.seed,
				     .df_zero = cfg.ident_df_zero };
	gc.ident = cfg.ident;
	rc = txs_ident_create(&gc.ident_inst, &ic);
	if (rc < 0) {
		fprintf(stderr, "txscale send: --ident %s: %s\n", cfg.ident, txs_strerror(rc));
		if (sumf)
			fclose(sumf);
		txs_linkmon_stop(mon);
		txs_netdev_close(dev);
		txs_linksel_destroy(ls);
		return 1;
	}
	uc.spec = *sp;
	uc.shape = &shape.sh;
	uc.seed = cfg.seed;
	uc.ident = gc.ident_inst; /* the sendmsg path shares the --ident allocator */
	struct txs_engine_conf ec = {
		.n_workers = nthreads,
		.cpus = cpus,
		.count = cfg.count,
		.duration = cfg.time,
		.rate_pps = rate_pps,
		.dev = dev,
		.burst = burst,
		.gen = rpl ? &txs_replay_gen_ops : route ? &txs_udp_sock_gen_ops : &txs_udp_gen_ops,
		.gen_conf = rpl ? (void *)rpl : route ? (void *)&uc : (void *)&gc,
		.profile_every = cfg.profile,
		.pace = send_pace_conf(&cfg, wire),
		.timestamps = strcmp(cfg.timestamps, "packet") == 0   ? TXS_TS_PACKET
			      : strcmp(cfg.timestamps, "interp") == 0 ? TXS_TS_INTERP
								      : TXS_TS_BURST,
	};
	ec.stamp_shift_ns = stamp_shift;
	if (stamp_shift)
		fprintf(stderr, "txscale send: test only: timestamps shifted by %lld ns (TXS_TEST_STAMP_SHIFT_NS)\n",
			(long long)stamp_shift);
	/* --replay: the capture's own timing (at --replay-speed) unless a rate or profile is given */
	if (rpl && !(cfg.rate.value > 0) && ec.pace.kind == TXS_PACE_CONST && !ec.pace.burst_on)
		ec.pace = rpace;
	bool sched_bad = cfg.schedule_file && send_write_schedule(cfg.schedule_file, &ec) < 0;
	if (cfg.dry_run || sched_bad) {
		if (sumf)
			fclose(sumf);
		txs_ident_destroy(gc.ident_inst);
		txs_linkmon_stop(mon);
		txs_netdev_close(dev);
		txs_linksel_destroy(ls);
		return sched_bad ? 1 : 0;
	}
	struct txs_engine *eng;
	struct mcli mcl;
	struct txs_metrics_send *mx = NULL;
	int mrc = mcli_start(&mcl, "send", &cfg.metrics, cfg.interval);
	if (!mrc)
		mrc = mcli_send_collector(&mcl, &mx, nthreads, cpus, dev);
	rc = mrc ? 0 : txs_engine_create(&eng, &ec);
	if (mrc || rc < 0) {
		if (rc < 0)
			fprintf(stderr, "txscale send: engine: %s\n", txs_strerror(rc));
		mcli_close(&mcl);
		txs_metrics_send_destroy(mx);
		if (sumf)
			fclose(sumf);
		txs_ident_destroy(gc.ident_inst);
		txs_linkmon_stop(mon);
		txs_netdev_close(dev);
		txs_linksel_destroy(ls);
		return mrc ? mrc : 1;
	}
	g_engine = eng;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* reports go to stderr when the device writes to stdout (pcap:-); a
	 * reader that goes away is then a write error of the device (EPIPE, one
	 * line, exit 1), not a silent death by SIGPIPE */
	FILE *out = dev->uses_stdout ? stderr : stdout;
	if (dev->uses_stdout)
		signal(SIGPIPE, SIG_IGN);
	struct txs_reporter rep = {
		.out = out, .json = cfg.json, .kind = "send", .n_threads = nthreads, .cpus = cpus,
		.n_links = dev->n_links, .frames = true,
	};
	if (!cfg.json && rpl && rudp.datagrams) {
		char db[64], sk[256];
		fprintf(out, "txscale send: replay %s (%llu frames: %llu UDP datagrams, %llu skipped%s%s), their payloads "
			     "%s -> %s:%u, 1 thread, device %s\n", cfg.replay, (unsigned long long)txs_replay_frames(rpl),
			(unsigned long long)rudp.datagrams, (unsigned long long)rudp.skipped_total,
			rudp.skipped_total ? ": " : "", replay_skips_str(&rudp, sk, sizeof(sk)),
			txs_addr_str(&sp->src, db, sizeof(db)), cfg.dest, cfg.port, dev->spec);
	} else if (!cfg.json && rpl) {
		fprintf(out, "txscale send: replay %s (%llu frames), 1 thread, device %s\n", cfg.replay,
			(unsigned long long)txs_replay_frames(rpl), dev->spec);
	} else if (!cfg.json) {
		char db[64];
		char bb[128];
		fprintf(out, "txscale send: %s -> %s:%u, %u-byte payload, %u thread%s, device %s%s%s\n",
		       txs_addr_str(&sp->src, db, sizeof(db)), cfg.dest, cfg.port, cfg.length, nthreads,
		       nthreads > 1 ? "s" : "", dev->spec, ls ? ", bond " : "",
		       ls ? txs_linksel_params_str(txs_linksel_params(ls), bb, sizeof(bb)) : "");
		if (shape.any)
			fprintf(out, "txscale send: %u flow%s per thread (flow ids %llu..%llu), %u size%s\n",
				shape.sh.flows, shape.sh.flows > 1 ? "s" : "", (unsigned long long)cfg.flow_base,
				(unsigned long long)(cfg.flow_base + (uint64_t)nthreads * shape.sh.flows - 1),
				shape.sh.n_sizes ? shape.sh.n_sizes : 1, shape.sh.n_sizes > 1 ? "s" : "");
	}
	struct txs_stat_row *cur = calloc(nthreads, sizeof(*cur)), *prev = calloc(nthreads, sizeof(*prev));
	struct txs_stat_row links[TXS_MAX_LINKS] = { 0 }, plinks[TXS_MAX_LINKS] = { 0 }, dl[TXS_MAX_LINKS];
	struct txs_stat_row *delta = calloc(nthreads, sizeof(*delta)), *erows = calloc(nthreads, sizeof(*erows));
	if (!cur || !prev || !delta || !erows) {
		fprintf(stderr, "txscale send: out of memory\n");
		mcli_close(&mcl);
		txs_metrics_send_destroy(mx);
		free(cur);
		free(prev);
		free(delta);
		free(erows);
		if (sumf)
			fclose(sumf);
		g_engine = NULL;
		txs_engine_destroy(eng);
		txs_ident_destroy(gc.ident_inst);
		txs_netdev_close(dev);
		txs_linksel_destroy(ls);
		return 1;
	}
	rc = txs_engine_start(eng);
	double last = 0;
	bool gso_said = false;
	while (rc == 0 && !txs_engine_done(eng)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		double now = txs_engine_read(eng, erows);
		read_threads(dev, eng, erows, nthreads, cur);
		send_udp_gso_watch(dev, &gso_said);
		if (mx) {
			read_links(dev, links);
			txs_metrics_send_update(mx, now, cur, links, TXS_METRICS_RUNNING);
			mcli_tick(&mcl, now);
		}
		if (cfg.interval > 0 && now - last >= cfg.interval) {
			read_links(dev, links);
			rows_sub(delta, cur, prev, nthreads);
			rows_sub(dl, links, plinks, dev->n_links);
			txs_report_interval(&rep, last, now, delta, dl);
			memcpy(prev, cur, sizeof(*cur) * nthreads);
			memcpy(plinks, links, sizeof(links));
			last = now;
		}
	}
	int wrc = txs_engine_wait(eng);
	if (!rc)
		rc = wrc;
	double secs = txs_engine_read(eng, erows);
	read_threads(dev, eng, erows, nthreads, cur);
	read_links(dev, links);
	send_udp_gso_watch(dev, &gso_said);
	if (mx)
		txs_metrics_send_update(mx, secs, cur, links, TXS_METRICS_FINISHED);
	if (cfg.interval > 0) {
		/* the last, partial interval: always, so intervals add up to the total */
		bool any = rows_sub(delta, cur, prev, nthreads);
		rows_sub(dl, links, plinks, dev->n_links);
		if (any)
			txs_report_interval(&rep, last, secs, delta, dl);
	}
	struct txs_prof_summary prof;
	struct txs_ts_check tsc;
	struct summary_extra x = { .cfg = &cfg, .dev = dev, .ls = ls,
				   .prof = cfg.profile && txs_engine_prof(eng, &prof) == 0 ? &prof : NULL,
				   .shape = &shape, .erows = erows, .nthreads = nthreads,
				   .ts_check = txs_engine_ts_check(eng, &tsc) == 0 ? &tsc : NULL,
				   .rudp = rudp.datagrams ? &rudp : NULL };
	int last_err = 0;
	for (unsigned l = 0; l < dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(dev, l, &c);
		x.verify_err += c.verify_err;
		x.icmp_err += c.icmp_err;
		if (c.last_err)
			last_err = c.last_err;
	}
	txs_report_summary(&rep, secs, cur, links, add_extra, &x);
	if (!cfg.json && x.prof)
		prof_text(out, x.prof);
	if (!cfg.json)
		send_shape_text(out, &shape, erows, nthreads);
	if (!cfg.json)
		send_udp_gso_text(out, dev);
	if (!cfg.json && x.ts_check)
		fprintf(out, "timestamps: interp, step %.2f ns per datagram; error at the end of %llu checked bursts: "
			     "mean %.1f ns, p50 < %llu ns, p99 < %llu ns, max %llu ns\n",
			x.ts_check->step_ns, (unsigned long long)x.ts_check->bursts, x.ts_check->err_mean_ns,
			(unsigned long long)x.ts_check->err_p50_ns, (unsigned long long)x.ts_check->err_p99_ns,
			(unsigned long long)x.ts_check->err_max_ns);
	if (!cfg.json && rudp.datagrams) {
		char sk[256];
		fprintf(out, "replay: %llu of the file's %llu frames are UDP datagrams (sent as payloads); %llu skipped%s%s\n",
			(unsigned long long)rudp.datagrams, (unsigned long long)txs_replay_frames(rpl),
			(unsigned long long)rudp.skipped_total, rudp.skipped_total ? ": " : "",
			replay_skips_str(&rudp, sk, sizeof(sk)));
	}
	if (sumf) {
		struct txs_reporter r2 = rep;
		r2.out = sumf;
		r2.json = true;
		txs_report_summary(&r2, secs, cur, links, add_extra, &x);
		if (fclose(sumf) != 0) {
			fprintf(stderr, "txscale send: cannot write --summary-file '%s': %s\n", cfg.summary_file,
				strerror(errno));
			rc = rc ? rc : -EIO;
		}
	}
	bool failed = check_counts(dev, eng, nthreads, erows, cur, links);
	if (rc == -ENETDOWN && mon && !txs_linkmon_up_mask(mon)) {
		fprintf(stderr, "txscale send: --dev %s: no link left:", dev->spec);
		for (unsigned l = 0; l < dev->n_links; l++)
			fprintf(stderr, "%s %s", l ? "," : "", txs_linkmon_link_name(mon, l));
		fprintf(stderr, " %s down\n", dev->n_links > 1 ? "are all" : "is");
	} else if (rc < 0) {
		fprintf(stderr, "txscale send: --dev %s: %s\n", dev->spec, txs_strerror(rc));
	} else if (!failed) {
		struct txs_stat_row t = sum_rows(cur, nthreads);
		if (t.packets == 0 && t.drops + t.errors) {
			/* a run that sent nothing did not do what was asked */
			fprintf(stderr, "txscale send: --dev %s: nothing sent: all %llu packets dropped (%llu full, %llu "
					"errors%s%s)\n", dev->spec, (unsigned long long)(t.drops + t.errors),
				(unsigned long long)t.drops, (unsigned long long)t.errors, last_err ? ": " : "",
				last_err ? strerror(last_err) : "");
			failed = true;
		} else if (t.errors) {
			/* partly failed: the run goes on, but never silently */
			fprintf(stderr, "txscale send: --dev %s: %llu of %llu packets not sent: device errors%s%s\n",
				dev->spec, (unsigned long long)t.errors,
				(unsigned long long)(t.packets + t.drops + t.errors), last_err ? ": " : "",
				last_err ? strerror(last_err) : "");
		}
	}
	if (x.icmp_err) {
		char ab[INET6_ADDRSTRLEN];
		fprintf(stderr, "txscale send: --dev %s: the kernel reported %llu ICMP errors for sent datagrams "
				"(last: %s)%s%s port %u?\n", dev->spec, (unsigned long long)x.icmp_err,
			strerror(last_err ? last_err : EIO),
			last_err == ECONNREFUSED ? ": is nothing listening on " : ": is there a route to ",
			txs_addr_str(&sp->dst, ab, sizeof(ab)), cfg.port);
	}
	if (!cfg.json && x.verify_err)
		fprintf(stderr, "txscale send: %llu frames failed verification\n", (unsigned long long)x.verify_err);
	if (mcli_end(&mcl))
		failed = true;
	txs_metrics_send_destroy(mx);
	g_engine = NULL;
	txs_engine_destroy(eng);
	txs_ident_destroy(gc.ident_inst);
	txs_linkmon_stop(mon);
	txs_netdev_close(dev);
	txs_linksel_destroy(ls);
	free(cur);
	free(prev);
	free(delta);
	free(erows);
	return rc < 0 || failed ? 1 : x.verify_err ? 1 : 0;
}
