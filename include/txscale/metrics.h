/* SPDX-License-Identifier: MIT */
/* txscale metrics (lib/metrics): the Prometheus text exposition format
 * (version 0.0.4), a registry of collectors, an HTTP endpoint served by
 * libmicrohttpd, the node_exporter textfile writer, and the collectors of a
 * send and a receive run. docs/metrics.md.
 *
 * Model: a registry (struct txs_metrics) holds collectors; a scrape (an
 * HTTP GET /metrics, txs_metrics_render, txs_metrics_write_file) runs every
 * collector in turn into one struct txs_prom, which groups samples by
 * family, so that collectors writing the same families (one per session of
 * a server, each with its own constant labels such as session="7") give one
 * valid exposition. A collector reads counters as the interval reporter
 * does (relaxed loads of single-writer counters, or a copy its owner
 * published): nothing is written per packet for metrics.
 *
 * Concurrency (per function below):
 *  - txs_prom_*: one thread at a time per struct txs_prom.
 *  - txs_metrics_add/remove/render/write_file/listen: any thread; they
 *    serialise on the registry's lock. A collector runs under that lock, in
 *    the HTTP thread or the caller's; txs_metrics_remove() returns once no
 *    scrape runs the collector (its arg may be freed then).
 *  - txs_metrics_rx_* / txs_metrics_send_*: update/tick/finish from the
 *    controlling thread; the collect function from a scrape (each collector
 *    has its own lock for what the controlling thread publishes).
 */
#ifndef TXSCALE_METRICS_H
#define TXSCALE_METRICS_H

#include <txscale/common.h>
#include <txscale/stats.h>
#include <txscale/rx.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exposition writer ------------------------------------------------------- */
enum txs_prom_type { TXS_PROM_COUNTER = 0, TXS_PROM_GAUGE, TXS_PROM_HISTOGRAM };

struct txs_prom_label {
	const char *name;  /* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
	const char *value; /* any bytes: written escaped (\\, \", \n), invalid UTF-8 as U+FFFD */
};

struct txs_prom;

/* Returns 0, -ENOMEM. */
TXS_API int txs_prom_create(struct txs_prom **out);
TXS_API void txs_prom_destroy(struct txs_prom *p);
/* Labels put before every sample's own until changed (copied; n = 0 clears;
 * at most 8). Returns 0, -EINVAL (a bad name), -E2BIG. */
TXS_API int txs_prom_const_labels(struct txs_prom *p, const struct txs_prom_label *l, unsigned n);
/* Declare a family (name: [a-zA-Z_:][a-zA-Z0-9_:]*; a counter's ends in
 * "_total"). Declaring it again with the same type is a no-op. */
TXS_API void txs_prom_family(struct txs_prom *p, const char *name, enum txs_prom_type t, const char *help);
/* One sample of a declared counter or gauge. */
TXS_API void txs_prom_u64(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			  uint64_t v);
TXS_API void txs_prom_dbl(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			  double v);
/* One histogram of a declared histogram family: in_bucket[i] values in
 * (le[i-1], le[i]] (le ascending, finite), count all values (those above
 * le[nb-1] too), sum their sum. Written as cumulative name_bucket{le=...}
 * lines ending with le="+Inf" = count, then name_sum and name_count. */
TXS_API void txs_prom_hist(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			   const double *le, const uint64_t *in_bucket, unsigned nb, uint64_t count, double sum);
/* The same from a log-bucket histogram of values in units of `scale` (e.g.
 * ns with scale 1e-9 for seconds): a log bucket counts under the first le
 * at or above its largest value, so name_bucket{le=L} never counts a value
 * above L (it may count up to 1/32 fewer below it). */
TXS_API void txs_prom_hist_log(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			       const struct txs_hist *h, double scale, const double *le, unsigned nb);
/* The first error met (a bad name, a sample of an undeclared family, out of
 * memory): 0, -EINVAL, -ENOMEM. A struct with an error renders nothing. */
TXS_API int txs_prom_error(const struct txs_prom *p);
/* The text: families in the order declared, HELP, TYPE, then their samples
 * (malloc'd, NUL-terminated; the caller frees). Returns 0 or the error. */
TXS_API int txs_prom_text(const struct txs_prom *p, char **out, size_t *len);

/* ---- registry, HTTP endpoint, textfile ------------------------------------------- */
typedef void (*txs_metrics_collect_fn)(struct txs_prom *p, void *arg);

struct txs_metrics;

#define TXS_METRICS_HTTP_CONNS 256   /* connections served at once; beyond: refused */
#define TXS_METRICS_HTTP_TIMEOUT_S 5 /* an idle or stalled connection is closed after this */

TXS_API int txs_metrics_create(struct txs_metrics **out);
/* Stops the endpoint, frees the registry (the collectors' args are the caller's). */
TXS_API void txs_metrics_destroy(struct txs_metrics *m);
/* Register a collector; labels (copied, at most 8) go on every sample it
 * writes, e.g. { "session", "7" }. Returns an id >= 0, or -ENOMEM, -EINVAL. */
TXS_API int txs_metrics_add(struct txs_metrics *m, txs_metrics_collect_fn fn, void *arg,
			    const struct txs_prom_label *labels, unsigned n);
TXS_API void txs_metrics_remove(struct txs_metrics *m, int id);
/* Every collector's text, then the registry's own (txscale_metrics_*).
 * Returns 0, -ENOMEM, -EINVAL (a collector's bad name). */
TXS_API int txs_metrics_render(struct txs_metrics *m, char **out, size_t *len);
/* Render into FILE atomically: a temporary file in FILE's directory
 * (".NAME.tmp.PID", which a textfile collector ignores), then rename(2).
 * Returns 0 or -errno. */
TXS_API int txs_metrics_write_file(struct txs_metrics *m, const char *path);
/* Serve GET /metrics (and GET / naming it) at "ADDR:PORT" ("[V6]:PORT")
 * with libmicrohttpd in its own thread. Anything else: 404 / 405; requests
 * beyond the daemon's memory limit: refused by it; at most
 * TXS_METRICS_HTTP_CONNS connections, each closed after
 * TXS_METRICS_HTTP_TIMEOUT_S idle. Returns 0, -EINVAL (bad ADDR:PORT),
 * -EOPNOTSUPP (built without libmicrohttpd), -EALREADY, or -errno of the
 * bind; err receives one line. */
TXS_API int txs_metrics_listen(struct txs_metrics *m, const char *addr_port, char *err, size_t errlen);
/* Was the library built with libmicrohttpd? */
TXS_API bool txs_metrics_have_http(void);
/* Bound port of the endpoint (0 = none): with PORT 0 the kernel picks. */
TXS_API unsigned txs_metrics_port(const struct txs_metrics *m);
/* Parse "ADDR:PORT" / "[V6]:PORT" (PORT 0..65535). Returns 0, -EINVAL. */
TXS_API int txs_metrics_parse_addr(const char *s, struct txs_addr *addr, uint16_t *port);

/* ---- run state ------------------------------------------------------------------- */
enum txs_metrics_state { TXS_METRICS_RUNNING = 0, TXS_METRICS_FINISHED };

/* ---- the receive collector ----------------------------------------------------------
 * Live (while the run goes): per thread the cores' live counters
 * (txs_rx_core_live: relaxed loads) and their sums, the kernel's counters
 * read at the scrape (since create), the rate over the last tick, and with
 * conf.snaps per flow and the latency histogram from the copies the cores'
 * owners make between polls when a scrape asks (txs_rx_snap). A flow gets
 * its own series first come, first served, up to max_flows, and keeps it
 * to the end; the others are summed as flow="other". At
 * finish: the merged result (its totals, per flow up to max_flows series
 * and the rest summed as flow="other", the latency histogram), the
 * kernel's counters and the socket drops as the summary gives them: the
 * same numbers as the JSON summary. */
#define TXS_METRICS_FLOWS_DEFAULT 64u
#define TXS_METRICS_FLOWS_MAX 4096u
struct txs_metrics_rx_conf {
	struct txs_rx_core *const *cores; /* n_cores, outlive the collector */
	unsigned n_cores;
	const int *cpus;          /* per core, -1 = not pinned (NULL: none) */
	unsigned max_flows;       /* per-flow series (0 = default, <= TXS_METRICS_FLOWS_MAX) */
	/* n_cores live copies (NULL: no per-flow series or latency until
	 * finish): each core's owner calls txs_rx_core_publish() between polls */
	struct txs_rx_snap *const *snaps;
	bool kernel;              /* read the kernel's counters live (not for offline inputs) */
	const char *proc_root;    /* NULL = "/proc" */
};
struct txs_metrics_rx;
TXS_API int txs_metrics_rx_create(struct txs_metrics_rx **out, const struct txs_metrics_rx_conf *conf);
TXS_API void txs_metrics_rx_destroy(struct txs_metrics_rx *x);
/* The collect function to register, arg = the collector. */
TXS_API void txs_metrics_rx_collect(struct txs_prom *p, void *arg);
/* Seconds since the run started; updates the rate once per second or more. */
TXS_API void txs_metrics_rx_tick(struct txs_metrics_rx *x, double elapsed);
/* The run ended (all cores stopped): copy what the scrape shows from now
 * on. kd: the kernel counters' delta (NULL: none), is: the input's stats
 * (NULL: none). Returns 0, -ENOMEM (then the live view stays). */
TXS_API int txs_metrics_rx_finish(struct txs_metrics_rx *x, const struct txs_rx_result *r,
				  const struct txs_rx_kstats *kd, const struct txs_rx_input_stats *is,
				  double seconds);

/* ---- the send collector -------------------------------------------------------------
 * The controlling thread publishes its rows (the same the interval reports
 * and the summary use) after each read; a scrape shows the last ones. */
struct txs_metrics_send_conf {
	unsigned n_threads;
	const int *cpus;                /* per thread, -1 = not pinned (NULL: none) */
	unsigned n_links;               /* <= TXS_MAX_LINKS */
	const char *const *link_names;  /* n_links (NULL: "0", "1", ...) */
};
struct txs_metrics_send;
TXS_API int txs_metrics_send_create(struct txs_metrics_send **out, const struct txs_metrics_send_conf *conf);
TXS_API void txs_metrics_send_destroy(struct txs_metrics_send *x);
TXS_API void txs_metrics_send_collect(struct txs_prom *p, void *arg);
/* threads: n_threads rows, links: n_links rows (NULL: unchanged). */
TXS_API void txs_metrics_send_update(struct txs_metrics_send *x, double elapsed, const struct txs_stat_row *threads,
				     const struct txs_stat_row *links, enum txs_metrics_state st);


/* ---- a run's metrics: endpoint, periodic file, linger ------------------------------
 * What a front end does around one run (txscale send, recv, server; the
 * options of docs/metrics.md): before the run, check the options, refuse a
 * file that cannot be written and start the endpoint; during it, write the
 * file every period; after it, the last file, then keep the endpoint up for
 * the linger (ended early by txs_metrics_life_stop), then stop it.
 *
 * Concurrency: one controlling thread calls everything except
 * txs_metrics_life_stop(), which any thread or a signal handler may call
 * (one store to a sig_atomic_t). Lines for the user (a note, the endpoint's
 * address when the kernel chose its port, a file that could not be written)
 * go to the say hook given at start, in the controlling thread, without a
 * newline or program name. */
struct txs_metrics_opts {
	const char *addr; /* --metrics ADDR:PORT: the HTTP endpoint (NULL: none) */
	const char *file; /* --metrics-file: the textfile, written atomically (NULL: none) */
	unsigned flows;   /* --metrics-flows: a receive collector's per-flow series (0 = default) */
	double linger;    /* --metrics-linger: seconds the endpoint stays up after the run */
};
struct txs_metrics_life;
/* Check o, create the registry, refuse a file that cannot be written, start
 * the endpoint; the file is written every interval s (0: every 1 s). *out
 * is NULL, and 0 returned, when o asks for neither an endpoint nor a file
 * (every txs_metrics_life_* function takes NULL as "no metrics"). Returns 0,
 * or -errno with one line in err: -EINVAL for a value to fix ("bad value for
 * --metrics: ...", "bad value for --metrics-file: ...", --metrics without
 * libmicrohttpd, the endpoint's refusals), -ENOMEM, the endpoint's bind
 * error ("--metrics ..."). */
TXS_API int txs_metrics_life_start(struct txs_metrics_life **out, const struct txs_metrics_opts *o, double interval,
				   void (*say)(void *user, const char *line), void *user, char *err, size_t errlen);
/* The registry to add collectors to (NULL for NULL). */
TXS_API struct txs_metrics *txs_metrics_life_registry(const struct txs_metrics_life *l);
/* Seconds since the run started: writes the file when its period has come. */
TXS_API void txs_metrics_life_tick(struct txs_metrics_life *l, double elapsed);
/* After the run: the last file, then the linger (unless stopped), then the
 * endpoint stops. Returns 0, or -EIO when a file could not be written (said
 * once). Once. */
TXS_API int txs_metrics_life_end(struct txs_metrics_life *l);
/* End the linger now, or skip it when it has not begun (async-signal-safe). */
TXS_API void txs_metrics_life_stop(struct txs_metrics_life *l);
/* Stop the endpoint (without a last file if txs_metrics_life_end did not
 * run) and free. NULL is fine. */
TXS_API void txs_metrics_life_close(struct txs_metrics_life *l);

#ifdef __cplusplus
}
#endif
#endif
