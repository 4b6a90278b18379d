/* SPDX-License-Identifier: MIT */
/* txscale stamp reflect | send: STAMP (RFC 8762/8972, docs/stamp.md).
 * The options and the printing; lib/stamp (txscale/stamp.h) does the work. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <txscale/stamp.h>
#include "cli.h"
#include "opt.h"
#include "metrics_opts.h"

static volatile sig_atomic_t g_stop;
static struct txs_stamp_refl *g_refl;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
	txs_stamp_refl_stop(g_refl);
}

static void signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static int load_key(const char *path, struct txs_stamp_key *k)
{
	if (!path)
		return 0;
	int rc = txs_stamp_key_load(k, path);
	if (!rc)
		return 0;
	fprintf(stderr, "txscale stamp: --auth-file %s: %s\n", path,
		rc == -EINVAL ? "empty" : rc == -E2BIG ? "longer than 256 bytes" : strerror(-rc));
	return -1;
}

/* ---- reflect ---------------------------------------------------------------------- */

struct refl_cfg {
	const char *bind;
	unsigned port;
	bool stateless;
	const char *auth_file;
	unsigned threads;
	unsigned max_sessions;
	double idle;
	double time;
	double interval;
	bool json;
	struct txs_metrics_opts metrics;
};

#define O(f) offsetof(struct refl_cfg, f)
static const struct txs_opt refl_opts[] = {
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "listen on ADDR only (default: every IPv6 and IPv4 address)" },
	{ "port", 'p', OPT_UINT, O(port), "PORT", "UDP port (0: any free one, printed)", "862", 0, 65535 },
	{ "stateless", 0, OPT_FLAG, O(stateless), NULL, "stateless (RFC 8762 4.3): echo the sender's sequence number instead of numbering each sender's packets" },
	{ "auth-file", 0, OPT_STR, O(auth_file), "FILE", "authenticated mode: HMAC-SHA-256 keyed by the file's contents (a trailing newline dropped)" },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "N sockets with SO_REUSEPORT, one thread each", "1", 1, 64 },
	{ "max-sessions", 0, OPT_UINT, O(max_sessions), "N", "senders remembered per thread (the stalest forgotten when full)", "4096", 16, 1u << 24 },
	{ "idle", 0, OPT_SECONDS, O(idle), "SEC", "a sender quiet this long starts a new session", "300" },
	{ "time", 't', OPT_SECONDS, O(time), "SEC", "exit after SEC seconds (0: until SIGINT/SIGTERM)", "0" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "print the counters every SEC seconds (0: only at exit)", "0" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "counters as JSON lines {\"type\":\"stamp_reflector\",...}" },
	MCLI_OPTS(O(metrics)),
	OPT_END
};
#undef O

static int stamp_reflect(int argc, char **argv)
{
	struct refl_cfg cfg = { 0 };
	int npos = 0;
	int rc = opt_parse("stamp reflect", "[-B ADDR] [-p PORT] [--stateless] [--auth-file FILE] [-P N] [-t SEC] [-i SEC] [-J]",
			   refl_opts, &cfg, argc, argv, NULL, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	struct txs_stamp_refl_conf c = { .bind = cfg.bind, .port = (uint16_t)cfg.port, .stateless = cfg.stateless,
					 .threads = cfg.threads, .max_sessions = cfg.max_sessions, .idle_s = cfg.idle };
	if (load_key(cfg.auth_file, &c.key))
		return 2;
	char err[256] = "";
	rc = txs_stamp_refl_open(&c, &g_refl, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "txscale stamp reflect: %s\n", err[0] ? err : strerror(-rc));
		return 1;
	}
	struct txs_metrics_life *ml = NULL;
	rc = mcli_start(&ml, "stamp reflect", &cfg.metrics, cfg.interval);
	if (rc) {
		txs_stamp_refl_close(g_refl);
		return rc;
	}
	if (ml && txs_metrics_add(txs_metrics_life_registry(ml), txs_stamp_refl_collect, g_refl, NULL, 0) < 0) {
		fprintf(stderr, "txscale stamp reflect: metrics: out of memory\n");
		txs_metrics_life_close(ml);
		txs_stamp_refl_close(g_refl);
		return 1;
	}
	signals();
	rc = txs_stamp_refl_start(g_refl);
	if (rc) {
		fprintf(stderr, "txscale stamp reflect: starting the workers: %s\n", strerror(-rc));
		txs_metrics_life_close(ml);
		txs_stamp_refl_close(g_refl);
		return 1;
	}
	fprintf(stderr, "stamp reflector: listening on %s port %u, %s, %s, %u thread%s\n", cfg.bind ? cfg.bind : "*",
		txs_stamp_refl_port(g_refl), cfg.stateless ? "stateless" : "stateful",
		c.key.len ? "authenticated" : "unauthenticated", cfg.threads, cfg.threads == 1 ? "" : "s");
	uint64_t start = txs_now_mono_ns(), last = start;
	while (!g_stop) {
		usleep(20000);
		uint64_t now = txs_now_mono_ns();
		txs_metrics_life_tick(ml, (double)(now - start) / 1e9);
		if (cfg.time > 0 && (double)(now - start) / 1e9 >= cfg.time)
			break;
		if (cfg.interval > 0 && (double)(now - last) / 1e9 >= cfg.interval) {
			struct txs_stamp_refl_stats s;
			txs_stamp_refl_stats(g_refl, &s);
			txs_stamp_refl_write(&s, cfg.json, stdout);
			last = now;
		}
	}
	txs_stamp_refl_stop(g_refl);
	txs_stamp_refl_join(g_refl);
	struct txs_stamp_refl_stats s;
	txs_stamp_refl_stats(g_refl, &s);
	txs_stamp_refl_write(&s, cfg.json, stdout);
	rc = mcli_end(ml); /* the last file, the linger: the counters still readable */
	txs_metrics_life_close(ml);
	struct txs_stamp_refl *r = g_refl;
	g_refl = NULL;
	txs_stamp_refl_close(r);
	return rc;
}

/* ---- send -------------------------------------------------------------------------- */

struct send_cfg {
	uint16_t port;
	const char *bind;
	struct opt_rate rate;
	uint64_t count;
	double time;
	unsigned length;
	unsigned sessions;
	unsigned tos;
	bool tos_set;
	const char *tlvs;
	unsigned ssid;
	double wait;
	const char *auth_file;
	bool ptp;
	bool json;
	double interval;
	const char *dev;
	struct opt_cpus cpus;
	const char *pace;
	const char *pace_slack;
	uint64_t seed;
};

static int parse_tos(const char *val, void *dst, char *err, size_t errlen)
{
	struct send_cfg *c = (struct send_cfg *)((char *)dst - offsetof(struct send_cfg, tos));
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 0);
	if (errno || end == val || *end || v > 255) {
		snprintf(err, errlen, "expected a TOS byte 0..255 (DSCP << 2 | ECN), e.g. 0xb8");
		return -1;
	}
	c->tos = (unsigned)v;
	c->tos_set = true;
	return 0;
}

#define O(f) offsetof(struct send_cfg, f)
static const struct txs_opt send_opts[] = {
	{ "port", 'p', OPT_PORT, O(port), "PORT", "the reflector's UDP port", "862" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "source address" },
	{ "bitrate", 'b', OPT_RATE, O(rate), "RATE", "packets/s per session, with pps (e.g. 100kpps; 0: as fast as the device takes them)", "10pps" },
	{ "packets", 'n', OPT_U64, O(count), "N", "packets per session (the first probe included; tail probes may follow); not with -t", NULL, 1, 0 },
	{ "time", 't', OPT_SECONDS, O(time), "SEC", "sending time (default 10 s unless -n); paced, the RATE x SEC packets it schedules (late ones sent late)" },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length (default: the base packet and the TLVs asked for)", NULL, 0, TXS_STAMP_MAX_LEN },
	{ "parallel", 'P', OPT_UINT, O(sessions), "N", "N sessions, each its own engine worker, socket and receive thread (SSIDs counted up from --ssid; default: one per -A CPU, else 1)", NULL, 1, 64 },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin session k (its sending worker and its receive thread) to the k-th of these CPUs, e.g. 0-1 (default: not pinned)" },
	{ "dev", 0, OPT_STR, O(dev), "DEV", "the engine's device: udp[:ARGS] (kernel sockets; gso=off, the default here, sends each test packet as a datagram of its own through the stack: with GSO a veth carries a batch as one packet to the far end's filters), packet:IFNAME or xdp:IFNAME (frames; the replies come back through the kernel to each session's socket)", "udp:gso=off" },
	{ "pace", 0, OPT_STR, O(pace), "MODE", "departures: const (evenly spaced at -b) or poisson (exponential gaps, mean rate -b, per-session RNG from --seed)", "const" },
	{ "pace-slack", 0, OPT_STR, O(pace_slack), "USEC",
	  "sleep between sends and send the packets that fall due within USEC of the first one due together, never ahead of "
	  "the schedule; 0 = spin-exact (each packet at its time, a core busy for it), at most 100000; auto: "
	  TXS_XSTR(TXS_PACE_SLACK_DEFAULT_US) " us, or two gaps between packets where that is longer (docs/pacing.md)", "auto" },
	{ "seed", 0, OPT_U64, O(seed), "N", "--pace poisson: RNG seed (0 = random)", "0" },
	{ "tos", 'S', OPT_CUSTOM, O(tos), "TOS", "IP TOS / traffic class byte of the test packets (DSCP << 2 | ECN)", NULL, 0, 0, parse_tos },
	{ "tlvs", 0, OPT_STR, O(tlvs), "LIST", "RFC 8972 TLVs to carry: cos,direct,tsinfo,pad (comma-separated)" },
	{ "ssid", 0, OPT_UINT, O(ssid), "N", "session-sender identifier of the first session", "1", 1, 65535 },
	{ "wait", 0, OPT_SECONDS, O(wait), "SEC", "after the last packet, wait this long for replies", "1" },
	{ "auth-file", 0, OPT_STR, O(auth_file), "FILE", "authenticated mode: HMAC-SHA-256 keyed by the file's contents (a trailing newline dropped)" },
	{ "ptp", 0, OPT_FLAG, O(ptp), NULL, "PTPv2 timestamps (Z flag) instead of NTP" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "a report per session every SEC seconds: sent, replies, RTT (0: none)", "0" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "the summary as one JSON line {\"type\":\"summary\",\"kind\":\"stamp\",...}" },
	OPT_END
};
#undef O

static int parse_tlvs(const char *s, unsigned *out)
{
	*out = 0;
	if (!s)
		return 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "cos"))
			*out |= TXS_STAMP_TLVS_COS;
		else if (!strcmp(t, "direct"))
			*out |= TXS_STAMP_TLVS_DIRECT;
		else if (!strcmp(t, "tsinfo"))
			*out |= TXS_STAMP_TLVS_TSINFO;
		else if (!strcmp(t, "pad"))
			*out |= TXS_STAMP_TLVS_PAD;
		else {
			fprintf(stderr, "txscale stamp send: --tlvs: unknown TLV '%s' (cos, direct, tsinfo, pad)\n", t);
			return -1;
		}
	}
	return 0;
}

static void on_interval(void *user, const struct txs_stamp_interval *iv)
{
	const struct send_cfg *cfg = user;
	flockfile(stdout); /* sessions report from their own threads */
	if (cfg->json)
		printf("{\"type\":\"interval\",\"kind\":\"stamp\",\"session\":%u,\"ssid\":%u,\"start\":%.3f,\"end\":%.3f,"
		       "\"sent\":%llu,\"received\":%llu,\"rtt_ns\":{\"count\":%llu,\"min\":%lld,\"p50\":%lld,\"p99\":%lld,"
		       "\"max\":%lld}}\n",
		       iv->session, iv->ssid, iv->start, iv->end, (unsigned long long)iv->sent,
		       (unsigned long long)iv->received, (unsigned long long)iv->rtt.count, (long long)iv->rtt.min,
		       (long long)iv->rtt.p50, (long long)iv->rtt.p99, (long long)iv->rtt.max);
	else
		printf("[SSID %u] %6.2f-%6.2f s  sent %llu  replies %llu  rtt p50 %.1f us  p99 %.1f us\n", iv->ssid,
		       iv->start, iv->end, (unsigned long long)iv->sent, (unsigned long long)iv->received,
		       iv->rtt.p50 / 1e3, iv->rtt.p99 / 1e3);
	fflush(stdout);
	funlockfile(stdout);
}

static int stamp_send(int argc, char **argv)
{
	struct send_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	int rc = opt_parse("stamp send",
			   "HOST [-p PORT] [-b RATE] [-n N | -t SEC] [-l LENGTH] [-P N] [-A CPUS] [--dev DEV] [-S TOS] "
			   "[--tlvs LIST] [--auth-file FILE] [-i SEC] [-J]",
			   send_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (npos != 1) {
		fprintf(stderr, "txscale stamp send: the reflector's address is missing (txscale stamp send HOST)\n");
		return 2;
	}
	if (cfg.rate.bits && cfg.rate.value > 0) { /* 0: as fast as the device takes them, either way */
		fprintf(stderr, "txscale stamp send: -b %s: give packets/s with pps (e.g. 100kpps), not bits/s\n", "RATE");
		return 2;
	}
	if (cfg.count && cfg.time > 0) { /* one end condition, as docs/stamp.md's synopsis and iperf3 have it */
		fprintf(stderr, "txscale stamp send: -n %llu and -t %g exclude each other: give one end, packets or "
			"time\n", (unsigned long long)cfg.count, cfg.time);
		return 2;
	}
	if (cfg.cpus.n && cfg.sessions && cfg.sessions != cfg.cpus.n) {
		fprintf(stderr, "txscale stamp send: -A names %u CPUs for %u sessions (-P): one each\n", cfg.cpus.n,
			cfg.sessions);
		return 2;
	}
	if (!cfg.sessions)
		cfg.sessions = cfg.cpus.n ? cfg.cpus.n : 1;
	enum txs_pace_kind pace = TXS_PACE_CONST;
	if (cfg.pace && !strcmp(cfg.pace, "poisson")) {
		pace = TXS_PACE_POISSON;
		if (!(cfg.rate.value > 0)) {
			fprintf(stderr, "txscale stamp send: --pace poisson needs a rate (-b)\n");
			return 2;
		}
	} else if (cfg.pace && strcmp(cfg.pace, "const")) {
		fprintf(stderr, "txscale stamp send: bad value for --pace: '%s': expected const or poisson\n", cfg.pace);
		return 2;
	}
	uint64_t slack = 0;
	if (cfg.pace_slack && strcmp(cfg.pace_slack, "auto")) {
		char *end;
		errno = 0;
		double us = strtod(cfg.pace_slack, &end);
		if (errno || end == cfg.pace_slack || *end || !(us >= 0) || us * 1000 > TXS_PACE_SLACK_MAX_NS) {
			fprintf(stderr, "txscale stamp send: bad value for --pace-slack: '%s': expected auto, or microseconds "
					"0 (spin-exact) .. %u\n", cfg.pace_slack, TXS_PACE_SLACK_MAX_NS / 1000);
			return 2;
		}
		slack = us > 0 ? (uint64_t)(us * 1000) : UINT64_MAX;
	}
	struct txs_stamp_send_conf c = { .host = pos[0], .port = cfg.port, .bind = cfg.bind, .rate = cfg.rate.value,
					 .count = cfg.count, .secs = cfg.time, .length = cfg.length,
					 .sessions = cfg.sessions, .tos = cfg.tos_set ? (int)cfg.tos : -1,
					 .ssid = (uint16_t)cfg.ssid, .wait_s = cfg.wait, .ptp = cfg.ptp,
					 .interval_s = cfg.interval, .on_interval = on_interval, .user = &cfg,
					 .dev = cfg.dev, .cpus = cfg.cpus.n ? cfg.cpus.cpu : NULL, .pace = pace,
					 .seed = cfg.seed, .pace_slack_ns = slack };
	if (parse_tlvs(cfg.tlvs, &c.tlvs) || load_key(cfg.auth_file, &c.key))
		return 2;
	signals();
	struct txs_stamp_result res;
	char err[256] = "";
	rc = txs_stamp_send_run(&c, &g_stop, &res, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "txscale stamp send: %s\n", err[0] ? err : strerror(-rc));
		return rc == -EINVAL ? 2 : 1; /* a bad value, or the network's answer */
	}
	txs_stamp_result_write(&res, cfg.json, stdout);
	return 0;
}

int cmd_stamp(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "reflect"))
		return stamp_reflect(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return stamp_send(argc - 1, argv + 1);
	FILE *f = argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) ? stdout : stderr;
	if (argc >= 2 && f == stderr)
		fprintf(stderr, "txscale stamp: unknown subcommand '%s'\n", argv[1]);
	fprintf(f, "usage: txscale stamp ROLE [options]   (txscale stamp ROLE --help; docs/stamp.md)\n\n"
		   "roles:\n"
		   "  reflect    a session-reflector (RFC 8762/8972), stateful or stateless, authenticated or not\n"
		   "  send       a session-sender: loss, duplicates and reordering per direction, round-trip and one-way delays\n");
	return f == stdout ? 0 : 2;
}
