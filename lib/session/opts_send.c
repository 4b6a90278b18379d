/* SPDX-License-Identifier: MIT */
/* The send session's options (opt.h): one table for the CLI's `txscale
 * send`, a JSON session's config and the Python keywords, and the one
 * conversion of what they fill into the session's config. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/engine.h>
#include <txscale/netdev.h>
#include "opt.h"

/* --ramp FROM:TO:SECONDS, FROM and TO like -b */
static int parse_ramp(const char *val, void *dst, char *err, size_t errlen)
{
	struct txs_send_ramp *r = dst;
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
	struct txs_send_gso *g = dst;
	*g = (struct txs_send_gso){ 0 };
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

/* --dev's help: the registered backends' usage lines, built once */
static char dev_help[2048];
static pthread_once_t dev_help_once = PTHREAD_ONCE_INIT;

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

#define O(f) offsetof(struct txs_send_args, f)
const struct txs_opt txs_send_opts[] = {
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
	{ "bitrate", 'b', OPT_RATE, O(rate), "RATE", "each thread's rate, as iperf's -b: bits/s of UDP payload (10M, "
	  "250k; k/M/G/T are powers of 1000), or datagrams/s with pps (100kpps); 0 = unlimited", "0" },
	{ "time", 't', OPT_SECONDS, O(time), "SEC", "stop after SEC seconds (default 10 unless -n is given); a sender behind its rate catches up for at most 1 s more, then stops and counts what it left (due_unsent)" },
	{ "packets", 'n', OPT_U64, O(count), "N", "stop after N datagrams in total (k/M/G suffixes)", NULL, 1, 0 },
	{ "blockcount", 'k', OPT_U64, O(count), "N", "the same as -n: N datagrams (iperf3's blocks)", NULL, 1, 0 },
	{ "udp", 'u', OPT_FLAG, O(udp), NULL, "accepted for iperf's sake: txscale sends UDP" },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "worker threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin workers to these CPUs, e.g. 0-3, each CPU once (default: not pinned, like iperf3)" },
	{ "no-pin", 0, OPT_FLAG, O(no_pin), NULL, "do not pin workers (the default without -A)" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "seconds between interval reports; 0 = none", "1" },
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
	  "rate profile: each thread's rate goes linearly from FROM to TO (units of -b) over SEC seconds, then stays "
	  "at TO (replaces -b)", NULL, 0, 0, parse_ramp },
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
	OPT_END
};
#undef O

const struct txs_opt *txs_send_opt_table(void)
{
	pthread_once(&dev_help_once, build_dev_help);
	return txs_send_opts;
}

void txs_send_args_conf(const struct txs_send_args *o, struct txs_send_conf *c)
{
	*c = (struct txs_send_conf){
		.dest = o->dest, .port = o->port, .bind = o->bind, .sport = o->sport_s, .dport = o->dport_s,
		.src = o->src_s, .dst = o->dst_s, .flows = o->flows, .flow_base = o->flow_base, .vlan = o->vlan_s,
		.qinq = o->qinq_s, .v4 = o->v4, .v6 = o->v6, .length = o->length_s,
		.rate = { o->rate.value, o->rate.bits, true }, .time = o->time, .count = o->count, .threads = o->threads,
		.n_cpus = o->cpus.n, .no_pin = o->no_pin, .interval = o->interval, .dev = o->dev, .tos = o->tos,
		.ttl = o->ttl, .df = o->df, .no_df = o->no_df, .no_csum = o->no_csum, .src_mac = o->src_mac, .dst_mac = o->dst_mac,
		.seed = o->seed, .ident = o->ident, .ident_df_zero = o->ident_df_zero, .gso_size = o->gso.size,
		.gso_off = o->gso.off, .connected = o->connected, .unconnected = o->unconnected, .burst = o->burst,
		.links = o->links, .bond = o->bond, .miimon = o->miimon, .updelay = o->updelay,
		.downdelay = o->downdelay, .profile = o->profile, .mtu = o->mtu,
		.ramp = { { o->ramp.from.value, o->ramp.from.bits, true }, { o->ramp.to.value, o->ramp.to.bits, true },
			  o->ramp.secs },
		.pace = o->pace, .burst_on = o->burst_on, .burst_off_us = o->burst_off_us, .pace_slack = o->pace_slack,
		.timestamps = o->timestamps, .replay = o->replay, .replay_speed = o->replay_speed,
		.schedule_file = o->schedule_file,
	};
	memcpy(c->cpus, o->cpus.cpu, sizeof(int) * (o->cpus.n < TXS_MAX_CORES ? o->cpus.n : TXS_MAX_CORES));
}
