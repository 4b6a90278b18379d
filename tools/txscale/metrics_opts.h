/* SPDX-License-Identifier: MIT */
/* --metrics ADDR:PORT, --metrics-file FILE, --metrics-linger SEC (and
 * recv's --metrics-flows) of send, recv and server (docs/metrics.md): their
 * option table lines over struct txs_metrics_opts, and a run's metrics
 * (txs_metrics_life_*) with the CLI's words and signals. */
#ifndef TXS_METRICS_OPTS_H
#define TXS_METRICS_OPTS_H
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <txscale/metrics.h>
#include "opt.h"

#define MCLI_OPTS(base)                                                                                          \
	{ "metrics", 0, OPT_STR, (base) + offsetof(struct txs_metrics_opts, addr), "ADDR:PORT",                   \
	  "serve Prometheus metrics over HTTP at ADDR:PORT, GET /metrics (needs libmicrohttpd; docs/metrics.md)" },  \
	{ "metrics-file", 0, OPT_STR, (base) + offsetof(struct txs_metrics_opts, file), "FILE",                   \
	  "write the same metrics text to FILE atomically (temporary file, rename) every interval (-i, else 1 s) "   \
	  "and at the end, for node_exporter's textfile collector" },                                             \
	{ "metrics-linger", 0, OPT_SECONDS, (base) + offsetof(struct txs_metrics_opts, linger), "SEC",             \
	  "after the run, keep serving the final metrics for SEC seconds so that a scraper sees them", "0" }
#define MCLI_FLOWS_OPT(base)                                                                                     \
	{ "metrics-flows", 0, OPT_UINT, (base) + offsetof(struct txs_metrics_opts, flows), "N",                   \
	  "per-flow metric series, the rest summed into one series flow=\"other\"", "64", 1, TXS_METRICS_FLOWS_MAX }

/* A line of the metrics (user: the subcommand's name) on stderr. */
static inline void mcli_say(void *cmd, const char *line)
{
	fprintf(stderr, "txscale %s: %s\n", (const char *)cmd, line);
}

/* Before the run: txs_metrics_life_start. 0, or the exit status (said). */
static inline int mcli_start(struct txs_metrics_life **l, const char *cmd, const struct txs_metrics_opts *o,
			     double interval)
{
	char err[512];
	int rc = txs_metrics_life_start(l, o, interval, mcli_say, (void *)cmd, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "txscale %s: %s\n", cmd, err);
	return rc == 0 ? 0 : rc == -EINVAL ? 2 : 1;
}

static struct txs_metrics_life *mcli_lingering __attribute__((unused));

static inline void mcli_on_signal(int sig)
{
	(void)sig;
	txs_metrics_life_stop(mcli_lingering);
}

/* After the run's summary: the last file and the linger, which SIGINT and
 * SIGTERM end. 0, or 1 when a file could not be written (said). */
static inline int mcli_end(struct txs_metrics_life *l)
{
	if (!l)
		return 0;
	fflush(stdout); /* the summary is out before the wait */
	mcli_lingering = l;
	struct sigaction sa = { .sa_handler = mcli_on_signal }, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = txs_metrics_life_end(l);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc < 0;
}
#endif
