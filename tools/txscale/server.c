/* SPDX-License-Identifier: MIT */
/* txscale server (txscale recv -s): the far end of the control channel
 * (docs/control.md), lib/server's (txscale/server.h). This file is its
 * options, the config they fill and the hooks that print: the log on
 * stdout (stderr with -J), each test's summaries on stdout (JSON lines with
 * -J, else the text lines of txs_ctl_peer_write), and the lines a test's
 * receiver or sender leaves on its stderr for the session to read. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <txscale/server.h>
#include "cli.h"
#include "ctl_cli.h"
#include "metrics_opts.h"
#include "opt.h"

struct server_cfg {
	struct txs_server_conf c;
	struct opt_rate max_rate;
	bool json;
	bool server_flag; /* -s: recv -s */
	const char *stamp; /* --stamp[=PORT] */
	const char *iperf2_port; /* --iperf2-port */
	bool no_iperf2;
};

#define O(f) offsetof(struct server_cfg, f)
#define C(f) offsetof(struct server_cfg, c.f)
static const struct txs_opt server_opts[] = {
	{ "bind", 'B', OPT_STR, C(bind), "ADDR", "listen on ADDR only (default: every address); tests receive and send on the address the client reached" },
	{ "control-port", 0, OPT_PORT, C(control_port), "PORT", "TCP control port", "5201" },
	{ "one-off", '1', OPT_FLAG, C(one_off), NULL, "serve one session, then exit with its status" },
	{ "auth-file", 0, OPT_STR, C(auth_file), "FILE", "shared secret: clients must answer an HMAC challenge keyed by it" },
	{ "allow-dest", 0, OPT_STR, C(allow_dest), "LIST", "where a client may ask us to send, ADDR[/PREFIX],... (always: the client's own address)" },
	{ "max-time", 0, OPT_SECONDS, C(max_time), "SEC", "longest test a client may ask for", "300" },
	{ "max-sessions", 0, OPT_UINT, C(max_sessions), "N", "sessions served at once (default: 16, or the number of CPUs where more; sessions past the CPUs share them); the next client is told the server is busy", NULL, 1, TXS_SERVER_SESSIONS_MAX },
	{ "max-sessions-per-client", 0, OPT_UINT, C(max_per_client), "N", "sessions at once from one client address (default: --max-sessions)", NULL, 1, TXS_SERVER_SESSIONS_MAX },
	{ "max-rate", 0, OPT_RATE, O(max_rate), "RATE", "the most a client may ask this server to send in all: bits/s of UDP payload (100M) or datagrams/s (10kpps), as -b; 0 = no limit", "0" },
	{ "ctl-timeout", 0, OPT_SECONDS, C(ctl_timeout), "SEC", "longest wait for a client's next message", "10" },
	{ "stamp", 0, OPT_STR, O(stamp), "PORT", "also a STAMP session-reflector on UDP PORT (default 862), stateful, in the server's process; its counters in --metrics (docs/stamp.md)", NULL, 0, 0, NULL, "862" },
	{ "stamp-threads", 0, OPT_UINT, C(stamp_threads), "N", "the STAMP reflector's sockets (SO_REUSEPORT), one thread each", "1", 1, 64 },
	{ "stamp-stateless", 0, OPT_FLAG, C(stamp_stateless), NULL, "the STAMP reflector echoes the sender's sequence numbers (RFC 8762 4.3)" },
	{ "stamp-auth-file", 0, OPT_STR, C(stamp_auth_file), "FILE", "the STAMP reflector in authenticated mode: HMAC-SHA-256 keyed by the file's contents" },
	{ "iperf2-port", 0, OPT_STR, O(iperf2_port), "PORT", "serve iperf 2 UDP clients (iperf -c HOST -u) on this UDP port, in the server's process: counted exactly, answered with the server report they print (docs/iperf2.md; default 5001, skipped with a log line when that is taken)", NULL },
	{ "no-iperf2", 0, OPT_FLAG, O(no_iperf2), NULL, "do not serve iperf 2 clients" },
	MCLI_OPTS(C(metrics)),
	{ "json", 'J', OPT_FLAG, O(json), NULL, "print each test's summaries as JSON lines on stdout (log on stderr)" },
	{ "server", 's', OPT_FLAG, O(server_flag), NULL, "(txscale recv -s: run as the server)" },
	OPT_END
};
#undef O
#undef C

static struct txs_server *g_srv;

static void on_signal(int sig)
{
	(void)sig;
	txs_server_stop(g_srv);
}

bool ctl_recv_wants_server(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return false;
		if (strcmp(argv[i], "-s") == 0 || strcmp(argv[i], "--server") == 0)
			return true;
	}
	return false;
}

static void on_log(void *user, const char *line)
{
	const struct server_cfg *cfg = user;
	FILE *f = cfg->json ? stderr : stdout;
	fprintf(f, "txscale server: %s\n", line);
	fflush(f);
}

static void on_msg(void *user, const char *line)
{
	(void)user;
	fprintf(stderr, "txscale server: %s\n", line);
}

static void on_summary(void *user, const struct txs_server_summary *s)
{
	const struct server_cfg *cfg = user;
	if (cfg->json) {
		printf("%s\n", s->json);
	} else if (!s->iperf3 && !s->iperf2) { /* an iperf3 or iperf 2 test's text is in the log */
		char who[128];
		snprintf(who, sizeof(who), "(session %u, %s)", s->session, s->client);
		ctl_print_peer(s->role, who, s->json, false);
	}
	fflush(stdout);
}

/* in a test's receiver or sender: its stderr is the file the session reads */
static void on_side_msg(void *user, const char *side, const char *line)
{
	(void)user;
	fprintf(stderr, "txscale %s: %s\n", side, line);
}

int cmd_server(int argc, char **argv)
{
	struct server_cfg cfg = { 0 };
	txs_server_conf_init(&cfg.c);
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[-B ADDR] [--control-port PORT] [-1] [--max-sessions N] [--auth-file FILE] [--allow-dest LIST] [--metrics ADDR:PORT]";
	const char *name = strcmp(argv[0], "recv") == 0 ? "recv -s" : "server";
	int rc = opt_parse(name, syn, server_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (cfg.stamp) {
		char *end;
		errno = 0;
		unsigned long p = strtoul(cfg.stamp, &end, 10);
		if (errno || end == cfg.stamp || *end || p > 65535) {
			fprintf(stderr, "txscale %s: bad value for --stamp: '%s': expected a UDP port 0..65535\n", name,
				cfg.stamp);
			return 2;
		}
		cfg.c.stamp_port = (int)p;
	}
	if (cfg.iperf2_port) {
		char *end;
		errno = 0;
		unsigned long p = strtoul(cfg.iperf2_port, &end, 10);
		if (errno || end == cfg.iperf2_port || *end || p > 65535) {
			fprintf(stderr, "txscale %s: bad value for --iperf2-port: '%s': expected a UDP port 0..65535\n",
				name, cfg.iperf2_port);
			return 2;
		}
		if (cfg.no_iperf2) {
			fprintf(stderr, "txscale %s: --iperf2-port and --no-iperf2 exclude each other\n", name);
			return 2;
		}
		cfg.c.iperf2_port = (int)p;
		cfg.c.iperf2_required = true;
	}
	if (cfg.no_iperf2)
		cfg.c.iperf2_port = -1;
	cfg.c.max_rate = cfg.max_rate.value;
	cfg.c.max_rate_bits = cfg.max_rate.bits;
	if (send_stamp_shift(&cfg.c.stamp_shift_ns))
		return 2;
	struct txs_server_hooks h = { .user = &cfg, .log = on_log, .msg = on_msg, .summary = on_summary,
				      .side_msg = on_side_msg };
	char err[512];
	rc = txs_server_open(&g_srv, &cfg.c, &h, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale server: %s\n", err);
		return rc == -EINVAL ? 2 : 1;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int ret = txs_server_run(g_srv);
	signal(SIGINT, SIG_DFL); /* on_signal reaches g_srv: not once it is freed */
	signal(SIGTERM, SIG_DFL);
	txs_server_close(g_srv);
	return ret;
}
