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

/* The session's options (lib/session/opts_send.c) and the CLI's own. */
struct send_cfg {
	struct txs_send_args a; /* first: the library's table writes at the same offsets */
	bool json;
	const char *summary_file;
	bool dry_run;
	struct ctl_client_opts ctl; /* -c HOST is a txscale server: client.c */
	struct txs_metrics_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
};

#define O(f) offsetof(struct send_cfg, f)
static const struct txs_opt send_opts[] = {
	{ "client", 'c', OPT_STR, O(a.dest), "ADDR", "a txscale or iperf3 server: the test runs with it over its control port (exit 1 when neither answers; docs/iperf3.md); an iperf 2 server with --iperf2; a bare DEST sends without a server" },
	OPT_INCLUDE_TABLE(txs_send_opts), /* the session's (lib/session/opts_send.c) */
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines output (docs/json-schema.md)" },
	{ "summary-file", 0, OPT_STR, O(summary_file), "FILE", "also write the JSON summary line to FILE" },
	{ "dry-run", 0, OPT_FLAG, O(dry_run), NULL, "check the options and open the device, then exit without sending (0 = the run would start, 2 = bad input)" },
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
		(unsigned)why < 5 ? whys[why] : "?", err ? ": " : "", err ? strerror(err < 0 ? -err : err) : "",
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

static int send_session(const struct send_cfg *cfg, const struct txs_send_conf *conf, FILE *sumf,
			const struct txs_ctl_side_io *io);

/* --server, -R, --bidir, a server at -c HOST: client.c runs the test. */
static int run_client(struct send_cfg *cfg, const struct txs_send_conf *conf, const struct txs_send_plan *pl)
{
	if (cfg->a.ramp.secs > 0 || cfg->a.burst_on || strcmp(cfg->a.pace, "const") || cfg->a.replay) {
		fprintf(stderr, "txscale send: --ramp, --pace, --burst-on and --replay are not forwarded to "
				"a server (txscale's or iperf3's): give them to a send without -c (DEST, --dev udp) and run the receiver there (txscale "
				"recv)\n");
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
	if (cfg->dry_run) /* the options checked, our device opened: nothing sent, no server asked */
		return send_session(cfg, conf, NULL, NULL);
	struct own_send w = { cfg, conf };
	return ctl_client_run(&cfg->ctl, &(struct ctl_send_info){ pl->dest, pl->port, pl->length, pl->rate_pps,
			      cfg->a.count, pl->time, cfg->a.interval, cfg->json, &cfg->a.cpus, cfg->a.threads, cfg->a.no_pin,
			      cfg->a.timestamps, conf->stamp_shift_ns, conf->bind, pl->shaped || pl->tagged },
			      &(struct ctl_own_send){ own_send_run, &w });
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

static void on_interval(void *arg, const struct txs_send_interval *iv)
{
	struct run_ctx *x = arg;
	flockfile(x->rep.out); /* whole lines beside the client's receiver */
	txs_report_interval(&x->rep, iv->start, iv->end, iv->threads, iv->links);
	funlockfile(x->rep.out);
}

/* Run the opened session, print what it did (sumf, if set, is closed
 * here; io: the client's side). Exit status. */
static int run(const struct send_cfg *cfg, struct txs_send *s, FILE *sumf, const struct txs_ctl_side_io *io)
{
	const struct txs_send_info *in = txs_send_info(s);
	struct run_ctx x = { .io = io };
	int mrc = mcli_start(&x.ml, "send", &cfg->metrics, cfg->a.interval);
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
	if (cfg->a.schedule_file && txs_send_write_schedule(s, cfg->a.schedule_file, err, sizeof(err)) < 0) {
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
	txs_send_args_conf(&cfg->a, &conf);
	conf.on_link = on_link;
	conf.on_note = on_note;
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
	txs_send_opt_table(); /* its --dev help */
	int rc = opt_parse("send", syn, send_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (npos) {
		if (cfg.a.dest) {
			fprintf(stderr, "txscale send: destination given twice ('%s' and '%s')\n", cfg.a.dest, pos[0]);
			return 2;
		}
		cfg.a.dest = pos[0];
	}
	return send_main(&cfg, argc, argv);
}
