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
#include "server/opts.h"

struct server_cfg {
	struct txs_server_args a;
	bool json;
	bool server_flag; /* -s: recv -s */
};

#define O(f) offsetof(struct server_cfg, f)
#define C(f) offsetof(struct server_cfg, a.c.f)
static const struct txs_opt server_opts[] = {
	OPT_INCLUDE_TABLE(txs_server_opts),
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
	txs_server_args_init(&cfg.a);
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[-B ADDR] [--control-port PORT] [-1] [--max-sessions N] [--auth-file FILE] [--allow-dest LIST] [--metrics ADDR:PORT]";
	const char *name = strcmp(argv[0], "recv") == 0 ? "recv -s" : "server";
	int rc = opt_parse(name, syn, server_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	char err[512];
	if (txs_server_args_conf(&cfg.a, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale %s: %s\n", name, err);
		return 2;
	}
	if (send_stamp_shift(&cfg.a.c.stamp_shift_ns))
		return 2;
	struct txs_server_hooks h = { .user = &cfg, .log = on_log, .msg = on_msg, .summary = on_summary,
				      .side_msg = on_side_msg };
	rc = txs_server_open(&g_srv, &cfg.a.c, &h, err, sizeof(err));
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
