/* SPDX-License-Identifier: MIT */
/* --metrics ADDR:PORT and --metrics-file FILE of send and recv
 * (docs/metrics.md): the options, and the registry's life around a run. */
#ifndef TXS_METRICS_CLI_H
#define TXS_METRICS_CLI_H
#include <stddef.h>
#include <txscale/metrics.h>
#include "opt.h"

struct mcli_opts {
	const char *addr;  /* --metrics */
	const char *file;  /* --metrics-file */
	unsigned flows;    /* --metrics-flows (recv) */
	double linger;     /* --metrics-linger */
};

#define MCLI_OPTS(base)                                                                                          \
	{ "metrics", 0, OPT_STR, (base) + offsetof(struct mcli_opts, addr), "ADDR:PORT",                          \
	  "serve Prometheus metrics over HTTP at ADDR:PORT, GET /metrics (needs libmicrohttpd; docs/metrics.md)" },  \
	{ "metrics-file", 0, OPT_STR, (base) + offsetof(struct mcli_opts, file), "FILE",                          \
	  "write the same metrics text to FILE atomically (temporary file, rename) every interval (-i, else 1 s) "   \
	  "and at the end, for node_exporter's textfile collector" },                                             \
	{ "metrics-linger", 0, OPT_SECONDS, (base) + offsetof(struct mcli_opts, linger), "SEC",                    \
	  "after the run, keep serving the final metrics for SEC seconds so that a scraper sees them", "0" }
#define MCLI_FLOWS_OPT(base)                                                                                     \
	{ "metrics-flows", 0, OPT_UINT, (base) + offsetof(struct mcli_opts, flows), "N",                          \
	  "per-flow metric series, the rest summed into one series flow=\"other\"", "64", 1, TXS_METRICS_FLOWS_MAX }

struct mcli {
	const struct mcli_opts *o;
	const char *cmd;
	struct txs_metrics *m;
	double period, next_file;
	bool file_failed;
};

/* Before the run: check the options, start the endpoint. Returns 0 (also
 * when no metrics option is given: then m is NULL and the rest are no-ops),
 * 2 for a bad value, 1 otherwise, the line printed. */
int mcli_start(struct mcli *mc, const char *cmd, const struct mcli_opts *o, double interval);
static inline bool mcli_on(const struct mcli *mc)
{
	return mc->m != NULL;
}
/* Register a collector. Returns 0 or 1 (printed). */
int mcli_add(struct mcli *mc, txs_metrics_collect_fn fn, void *arg);
/* The send collector over n workers and dev's links, registered. Returns
 * 0 (also without metrics: *out NULL) or 1 (printed). */
struct txs_netdev;
int mcli_send_collector(struct mcli *mc, struct txs_metrics_send **out, unsigned n, const int *cpus,
			const struct txs_netdev *dev);
/* In the run's loop: writes --metrics-file when its period has come. */
void mcli_tick(struct mcli *mc, double elapsed);
/* After the run's summary: the last file, then --metrics-linger (SIGINT or
 * SIGTERM end it early), then the endpoint stops. Returns 0, or 1 when a
 * file could not be written (printed). */
int mcli_end(struct mcli *mc);
/* Stop the endpoint without a last file or lingering (error paths; a
 * no-op after mcli_end). */
void mcli_close(struct mcli *mc);
#endif
