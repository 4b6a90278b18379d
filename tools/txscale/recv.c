/* SPDX-License-Identifier: MIT */
/* txscale recv: receive and analyse txscale traffic (docs/recv.md). The
 * options fill a receive session's config (<txscale/session_recv.h>: the
 * threads, the stop conditions, the merge); this file prints its lines and
 * serves --metrics from its hooks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/rx.h>
#include <txscale/session_recv.h>
#include <txscale/ctl.h>
#include "cli.h"
#include "opt.h"
#include "ctl_cli.h"
#include "metrics_opts.h"


/* The session's options (lib/session/opts_recv.c) and the CLI's own. */
struct recv_cfg {
	struct txs_recv_args a; /* first: the library's table writes at the same offsets */
	bool json;
	const char *summary_file;
	unsigned ready_fd;
	bool server; /* -s: ctl_recv_wants_server() saw it first */
	struct txs_metrics_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
	void (*first)(void *arg);        /* ctl_own_recv.first */
	void *first_arg;
};

#define O(f) offsetof(struct recv_cfg, f)
static const struct txs_opt recv_opts[] = {
	OPT_INCLUDE_TABLE(txs_recv_opts), /* the session's (lib/session/opts_recv.c) */
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines output (docs/json-schema.md)" },
	{ "summary-file", 0, OPT_STR, O(summary_file), "FILE", "also write the JSON summary line to FILE" },
	{ "ready-fd", 0, OPT_UINT, O(ready_fd), "FD", "write the line \"ready\" to FD, then close it, once receiving (used by txscale ndr)", NULL, 3, 1u << 20 },
	{ "server", 's', OPT_FLAG, O(server), NULL, "run as the control-channel server for txscale send -c HOST --server (= txscale server; its options: txscale server --help)" },
	MCLI_OPTS(O(metrics)),
	MCLI_FLOWS_OPT(O(metrics)),
	OPT_END
};
#undef O

static struct txs_recv *g_sess;

static void on_signal(int sig)
{
	(void)sig;
	if (g_sess)
		txs_recv_stop(g_sess);
}

/* The options into the session's config (the library's conversion), and
 * what only the CLI knows. */
static void fill_conf(struct recv_cfg *cfg)
{
	txs_recv_args_conf(&cfg->a);
	cfg->a.c.snaps = cfg->metrics.addr || cfg->metrics.file;
}

/* What the session's hooks print and publish. */
struct cli {
	const struct recv_cfg *cfg;
	const struct txs_ctl_side_io *io; /* the client's own receiver (ctl_cli.h) */
	struct txs_metrics_life *ml;
	struct txs_metrics_rx *mx;
	bool header;
	struct txs_recv *s;
	bool banner_done; /* the client's receiver: its banner waits for its first output (not for a refused test) */
	struct txs_ctl_clock_rep clock; /* the clock line the control channel's server writes beside the summary */
};

static void on_tick(void *user, double el)
{
	struct cli *k = user;
	if (k->mx)
		txs_metrics_rx_tick(k->mx, el);
	txs_metrics_life_tick(k->ml, el);
}

/* the client's receiver: nothing is said before the server took the test */
static bool discarded(const struct cli *k);

/* The banner (text), once, before the first line of output; the client's
 * first line before it */
static void banner(struct cli *k)
{
	if (k->banner_done)
		return;
	k->banner_done = true;
	if (k->cfg->first)
		k->cfg->first(k->cfg->first_arg);
	if (!k->cfg->json)
		txs_recv_banner_text(stdout, k->s);
}

static void on_interval(void *user, const struct txs_recv_interval *iv)
{
	struct cli *k = user;
	if (discarded(k))
		return;
	banner(k);
	if (k->cfg->json)
		txs_recv_interval_json(stdout, iv);
	else
		txs_recv_interval_text(stdout, iv, &k->header);
}

/* the input is open and bound: a sender may start now */
static void on_ready(void *user)
{
	struct cli *k = user;
	unsigned fd = k->cfg->ready_fd;
	if (k->io)
		k->io->ready(k->io->arg);
	if (!fd)
		return;
	if (write((int)fd, "ready\n", 6) != 6)
		fprintf(stderr, "txscale recv: --ready-fd %u: %s\n", fd, strerror(errno));
	close((int)fd);
}

static void on_summary(void *user, const char *text, size_t len)
{
	struct cli *k = user;
	if (txs_ctl_clock_line_parse(text, len, &k->clock) < 0)
		k->clock.on = false;
}

static bool on_stop(void *user)
{
	const struct txs_ctl_side_io *io = ((struct cli *)user)->io;
	return io->stop(io->arg);
}

static int on_sender_summary(void *user, char **text, size_t *len)
{
	const struct txs_ctl_side_io *io = ((struct cli *)user)->io;
	return io->sender_summary(io->arg, text, len);
}

/* the client's own receiver of a test the server refused: nothing to say */
static bool discarded(const struct cli *k)
{
	return k->io && k->io->discard && k->io->discard(k->io->arg);
}

static void on_msg(void *user, const char *line)
{
	if (discarded(user))
		return;
	fprintf(stderr, "txscale recv: %s\n", line);
}

/* --metrics: a collector over the session's cores. Returns 0 or the exit status. */
static int metrics_start(struct cli *k, struct txs_recv *s)
{
	int rc = mcli_start(&k->ml, "recv", &k->cfg->metrics, k->cfg->a.c.interval);
	if (rc == 0 && txs_recv_metrics(s, txs_metrics_life_registry(k->ml), k->cfg->metrics.flows, &k->mx) < 0) {
		fprintf(stderr, "txscale recv: metrics: out of memory\n");
		rc = 1;
	}
	return rc;
}

/* The summary to stdout, --summary-file and the metrics. Returns 0 or 1. */
static int report(struct cli *k, struct txs_recv *s, FILE *summary_f)
{
	struct txs_recv_result *res = txs_recv_result(s);
	int ret = 0;
	if (!res)
		return 1;
	if (k->cfg->a.clock_offset.set && k->clock.on) {
		/* measured over the control channel: its bound and drift came with the sender's summary */
		const struct txs_ctl_clock_rep *c = &k->clock;
		txs_rx_result_set_clock(res->rx, k->cfg->a.clock_offset.ns, c->error_ns, c->have_drift, c->drift_ns,
					"control");
		txs_rx_result_set_clock_method(res->rx, c->method ? c->method : TXS_CTL_CLOCK_TCP); /* unsaid: an older client */
	}
	if ((!k->io || !k->io->hold) && !discarded(k)) { /* held: the client prints it from summary_f */
		banner(k);
		flockfile(stdout);    /* whole lines beside the client's sender */
		txs_recv_summary(stdout, k->cfg->json, res);
		funlockfile(stdout);
	}
	if (summary_f) {
		txs_recv_summary(summary_f, true, res);
		if (fclose(summary_f) != 0) {
			fprintf(stderr, "txscale recv: cannot write --summary-file '%s': %s\n", k->cfg->summary_file,
				strerror(errno));
			ret = 1;
		}
	}
	if (k->mx && txs_metrics_rx_finish(k->mx, res->rx, res->in->offline ? NULL : &res->kd, &res->is,
					   res->seconds) < 0)
		fprintf(stderr, "txscale recv: metrics: out of memory\n");
	return ret;
}

/* Open, run, report. Returns the exit status; summary_f is closed. */
static int session(const struct recv_cfg *cfg, FILE *summary_f, const struct txs_ctl_side_io *io)
{
	struct txs_recv *s;
	char err[512];
	int rc = txs_recv_open(&s, &cfg->a.c, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale recv: %s\n", err);
		if (summary_f)
			fclose(summary_f);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENOENT || rc == -EOPNOTSUPP ? 2 : 1;
	}
	bool udp = strcmp(txs_recv_input(s)->ops->name, "udp") == 0;
	if (cfg->a.c.reuseport && !udp)
		fprintf(stderr, "txscale recv: note: --reuseport applies to --dev udp only\n");
	if (cfg->a.c.rcvbuf && !udp)
		fprintf(stderr, "txscale recv: note: --rcvbuf applies to --dev udp only\n");
	struct cli k = { .cfg = cfg, .io = io, .s = s };
	int ret = metrics_start(&k, s);
	if (ret == 0) {
		if (!io) { /* the client's own handlers stay */
			g_sess = s;
			struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGTERM, &sa, NULL);
		}
		if (!io)
			banner(&k);
		struct txs_recv_hooks h = { .user = &k, .tick = on_tick, .interval = on_interval, .ready = on_ready,
					    .summary = on_summary, .msg = on_msg, .stop = io ? on_stop : NULL,
					    .sender_summary = io ? on_sender_summary : NULL };
		ret = txs_recv_run(s, &h) < 0 ? 1 : 0;
		if (report(&k, s, summary_f))
			ret = 1;
		summary_f = NULL;
		if (mcli_end(k.ml))
			ret = 1;
	}
	txs_metrics_life_close(k.ml);
	txs_metrics_rx_destroy(k.mx);
	if (summary_f)
		fclose(summary_f);
	if (!io)
		g_sess = NULL;
	txs_recv_close(s);
	return ret;
}

/* The config's checks, --summary-file (or the client's io->sumf), the
 * session: the exit status */
static int recv_main(struct recv_cfg *cfg, const struct txs_ctl_side_io *io)
{
	fill_conf(cfg);
	char err[512];
	FILE *summary_f = io ? io->sumf : NULL;
	if (txs_recv_conf_check(&cfg->a.c, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale recv: %s\n", err);
		if (summary_f)
			fclose(summary_f);
		return 2;
	}
	/* a bad --summary-file is refused before anything starts */
	if (cfg->summary_file) {
		summary_f = fopen(cfg->summary_file, "we");
		if (!summary_f) {
			fprintf(stderr, "txscale recv: bad value for --summary-file: '%s': %s\n", cfg->summary_file,
				strerror(errno));
			return 2;
		}
	}
	return session(cfg, summary_f, io);
}

int recv_run_own(const struct ctl_own_recv *r, const struct txs_ctl_side_io *io)
{
	struct recv_cfg cfg = { 0 };
	txs_recv_args_init(&cfg.a);
	if (opt_defaults("recv", recv_opts, &cfg) < 0) {
		if (io->sumf)
			fclose(io->sumf);
		return 2;
	}
	char port[8];
	snprintf(port, sizeof(port), "%u", (unsigned)r->port);
	cfg.a.c.dev = "udp";
	cfg.a.c.bind = r->bind;
	cfg.a.c.port = port;
	cfg.json = r->json;
	cfg.a.c.interval = r->interval;
	cfg.a.c.idle = r->idle;
	cfg.a.time = (struct txs_recv_args_time){ .set = true, .v = r->time };
	cfg.a.clock_offset = (struct txs_recv_args_offset){ .set = r->clock_set, .ns = r->clock_offset_ns };
	cfg.a.c.clock_error_ns = r->clock_error_ns;
	cfg.a.c.threads = r->threads;
	if (r->cpus)
		cfg.a.cpus = *r->cpus;
	cfg.a.no_pin = r->no_pin;
	cfg.first = r->first;
	cfg.first_arg = r->first_arg;
	return recv_main(&cfg, io);
}

int cmd_recv(int argc, char **argv)
{
	if (ctl_recv_wants_server(argc, argv)) /* recv -s: the control channel (server.c) */
		return cmd_server(argc, argv);
	struct recv_cfg cfg = { 0 };
	txs_recv_args_init(&cfg.a);
	const char *pos[1];
	int npos = 0;
	static const char *syn =
		"[-B ADDR] [-p PORT] [-4|-6] [-P N] [-A CPUS] [--dev udp[:gro=off]|packet:IFNAME[,IFNAME...]|xdp:IFNAME[,...]|pcap:FILE] "
		"[-t SECONDS] [--idle SECONDS] [--expect N | --sender-summary FILE] [-i SEC] [-J]";
	int rc = opt_parse("recv", syn, recv_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	return recv_main(&cfg, NULL);
}
