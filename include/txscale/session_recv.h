/* SPDX-License-Identifier: MIT */
/* The receive session (lib/session, docs/recv.md): an input (lib/rx), one
 * receiving thread per queue with its own analysis core, the stop
 * conditions (time, idle, expected count, the sender's summary), and the
 * merged result with the kernel's and the input's counters.
 *
 *   struct txs_recv_conf c; txs_recv_conf_init(&c); ... fill ...
 *   txs_recv_conf_check(&c, err, len)       every refusal, one line in err
 *   txs_recv_open(&s, &c, err, len)         input, cores (and snapshots)
 *   txs_recv_run(s, &hooks)                 threads, the stop loop, the result
 *   txs_recv_result(s) + txs_recv_summary (or txs_recv_result_json / _text)
 *   txs_recv_close(s)
 *
 * Concurrency: one controlling thread calls everything except
 * txs_recv_stop(), which any thread or a signal handler may call at any
 * time (one relaxed atomic store). The hooks run on the controlling thread,
 * inside txs_recv_run. The library prints nothing: run-time errors and
 * warnings go to hooks.msg. */
#ifndef TXSCALE_SESSION_RECV_H
#define TXSCALE_SESSION_RECV_H

#include <stdio.h>
#include <txscale/common.h>
#include <txscale/rx.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_RECV_LIVE_TIME_DEFAULT 10.0     /* live inputs without -t: seconds */
#define TXS_RECV_RCVBUF_DEFAULT (32u << 20) /* udp receive buffer asked for (conf.rcvbuf 0) */
#define TXS_RECV_PORT_DEFAULT 5201
#define TXS_RECV_SUMMARY_WAIT_S 5.0         /* idle with a sender summary: wait this long for it */
#define TXS_RECV_MAX_SECONDS 1e7            /* time, idle, interval */
#define TXS_RECV_NO_TIME_LIMIT (-1.0)       /* conf.time: run until idle (or stopped); recv -t 0 */

struct txs_recv_conf {
	const char *dev;          /* input spec (txs_rx_input_open), NULL = "udp" */
	const char *bind;         /* local address (udp); raw inputs: only packets to it; NULL = any */
	const char *port;         /* "PORT" or "LO-HI" (at most TXS_RX_UDP_MAX_PORTS); NULL =
				   * TXS_RECV_PORT_DEFAULT for udp, any port for raw inputs */
	bool v4, v6;              /* one family only */
	unsigned threads;         /* receiving threads (0 = n_affinity, else 1) */
	unsigned n_affinity;      /* CPUs the caller was given to pin to (-A); threads <= it */
	int cpu[TXS_MAX_CORES];   /* per thread: its CPU, -1 = not pinned */
	double time;              /* seconds, at most TXS_RECV_MAX_SECONDS; 0: TXS_RECV_LIVE_TIME_DEFAULT, as
				   * send's 0 is its default; TXS_RECV_NO_TIME_LIMIT: none (needs idle);
				   * offline inputs: ignored */
	double idle;              /* stop after this long without packets (0 = never) */
	uint64_t expect;          /* the sender sent this many: exact loss, stop once all arrived */
	const char *sender_summary; /* path of the sender's JSON summary (txs_recv_summary_read) */
	double interval;          /* seconds between hooks.interval calls (0 = none) */
	uint64_t rcvbuf;          /* udp: receive buffer bytes (0 = TXS_RECV_RCVBUF_DEFAULT) */
	bool reuseport;           /* udp: SO_REUSEPORT with other processes */
	unsigned window, max_flows, batch; /* txs_rx_conf / txs_rx_input_conf (0 = defaults) */
	bool verify;              /* check the payload fill pattern */
	const char *rx_ts;        /* "kernel" (NULL), "user", "hardware[:IFACE]" (udp only) */
	const char *payload;      /* "txscale" (NULL), "iperf3", "iperf3-64" */
	double outage_min;        /* seconds, at most 3600 (0 = automatic) */
	bool clock_offset_set;
	int64_t clock_offset_ns;  /* receiver's clock minus the sender's */
	uint64_t clock_error_ns;  /* its error bound (0: exact): an offset within it is reported, not applied */
	bool snaps;               /* keep per-thread txs_rx_snap copies (a metrics reader) */
};

/* Zero, with the defaults of the fields whose zero is not the default. */
TXS_API void txs_recv_conf_init(struct txs_recv_conf *c);
/* Every refusal of a config, before anything opens: one line in err naming
 * the option by its long name and the bad value ("bad value for --port:
 * '70000': ..."). Numbers: time, idle, interval finite, 0..1e7 seconds;
 * outage_min 0..3600; threads and n_affinity at most TXS_MAX_CORES;
 * cpu[0..threads) -1 or a CPU this process may run on; a live run that
 * could not end (time TXS_RECV_NO_TIME_LIMIT with idle 0) is refused. Changes
 * nothing in the process (txs_recv_open raises the soft RLIMIT_NOFILE for a
 * udp port range). Returns 0 or -EINVAL (-EMFILE: the hard open-file limit
 * is below what the port range needs). */
TXS_API int txs_recv_conf_check(const struct txs_recv_conf *c, char *err, size_t errlen);
/* Threads the config runs: threads, else n_affinity, else 1. */
TXS_API unsigned txs_recv_conf_threads(const struct txs_recv_conf *c);

/* ---- the sender's summary ----------------------------------------------------------- */
/* Read the sender's summary file at path into e (txs_rx_expect_parse); e is
 * left as it was unless the file is whole and valid. A file last modified
 * before not_before_real_ns (CLOCK_REALTIME; 0 = any) is refused: it is an
 * earlier run's. text/len (NULL: not wanted) receive the file's text on
 * success, malloc'd, for the caller to free. Returns 0, or -errno with one
 * line in err (-ENOENT..: cannot read; -ESTALE: too old; -EFBIG: over 64 MiB;
 * -EINVAL: no valid summary line). */
TXS_API int txs_recv_summary_read(const char *path, uint64_t not_before_real_ns, struct txs_rx_expect *e,
				  char **text, size_t *len, char *err, size_t errlen);

/* ---- the session --------------------------------------------------------------------- */
struct txs_recv;

/* Check the config, read an offline input's sender summary, open the input,
 * create the cores (and snapshots). Returns 0, or -errno with one line in
 * err: the config's refusals as txs_recv_conf_check; the input's refusals
 * (-EINVAL, -ENODEV, -ENOENT, -EOPNOTSUPP: bad value; others: the system),
 * as "--dev ..." or "--rx-timestamps ...: ..."; a sender summary's. */
TXS_API int txs_recv_open(struct txs_recv **out, const struct txs_recv_conf *c, char *err, size_t errlen);
/* (txs_recv_open also raises the soft RLIMIT_NOFILE for a udp port range:
 * -EMFILE when it cannot be raised far enough.) */
TXS_API void txs_recv_close(struct txs_recv *s);
/* Ask a running session to stop (async-signal-safe). */
TXS_API void txs_recv_stop(struct txs_recv *s);

/* The input as opened (its spec, links, whether it is raw or offline). */
TXS_API const struct txs_rx_input *txs_recv_input(const struct txs_recv *s);
/* Threads, their cores and CPUs, and (conf.snaps) their snapshots. */
TXS_API unsigned txs_recv_threads(const struct txs_recv *s);
TXS_API struct txs_rx_core *const *txs_recv_cores(const struct txs_recv *s);
TXS_API const int *txs_recv_cpus(const struct txs_recv *s);
TXS_API struct txs_rx_snap *const *txs_recv_snaps(const struct txs_recv *s); /* NULL without conf.snaps */
/* The line saying what the session will do ("txscale recv: udp * port 5201,
 * 1 thread, up to 10.0 s"), with its newline. */
TXS_API void txs_recv_banner_text(FILE *f, const struct txs_recv *s);

/* One interval: per thread the live counters' change over [start, end]
 * (seconds since the threads started), and their sum. */
struct txs_recv_interval {
	double start, end;
	unsigned n;                       /* threads running */
	const int *cpu;                   /* [n] */
	const struct txs_rx_live *thread; /* [n] */
	struct txs_rx_live sum;
};
/* {"type":"interval","kind":"recv",...} (docs/json-schema.md). */
TXS_API void txs_recv_interval_json(FILE *f, const struct txs_recv_interval *iv);
/* The interval lines; *header: whether the column header was written. */
TXS_API void txs_recv_interval_text(FILE *f, const struct txs_recv_interval *iv, bool *header);

struct txs_recv_hooks {
	void *user;
	/* Polled every 10 ms: true ends the run (as txs_recv_stop). */
	bool (*stop)(void *user);
	/* Every 10 ms, elapsed seconds since the threads started. */
	void (*tick)(void *user, double elapsed);
	/* Every conf.interval seconds, and once at the end for the rest. */
	void (*interval)(void *user, const struct txs_recv_interval *iv);
	/* The threads run and the input is bound: a sender may start. */
	void (*ready)(void *user);
	/* A sender summary was read (text, len: the file's text). */
	void (*summary)(void *user, const char *text, size_t len);
	/* Optional, for a run without conf.sender_summary: the sender's summary
	 * as its file would hold it, handed over in memory. Asked when the file
	 * would be read (at the idle end, every 100 ms, and after the run):
	 * 0 with *text (malloc, the session frees it) and *len once it has
	 * come, else -EAGAIN; the run then counts exact loss against it. */
	int (*sender_summary)(void *user, char **text, size_t *len);
	/* One line of error or warning (no newline, no program name). */
	void (*msg)(void *user, const char *line);
};

struct txs_recv_thread_rep {
	int cpu;
	struct txs_rx_live live;
};

struct txs_recv_result {
	struct txs_rx_result *rx;        /* merged cores (the caller may set its clock) */
	const struct txs_rx_input *in;
	double seconds;                  /* threads started .. stopped */
	double active;                   /* first .. last packet (offline: seconds) */
	struct txs_rx_kstats kd;         /* the kernel's counters over the run */
	struct txs_rx_input_stats is;
	const char *link_names[TXS_MAX_LINKS];
	const char *if_names[TXS_MAX_LINKS]; /* raw live inputs: the interfaces of kd */
	unsigned n_if;
	unsigned n_threads;
	struct txs_recv_thread_rep thread[TXS_MAX_CORES];
};

/* Start the threads, run until a stop condition, stop and join them, read
 * the sender summary once more, merge. Once only. Returns 0, or -errno when
 * the run failed (a thread, a link that went down, the sender summary not
 * read: each said through hooks->msg; -EALREADY: run before); the result
 * exists (txs_recv_result) whenever the merge succeeded, failed run or
 * not. hooks may be NULL. */
TXS_API int txs_recv_run(struct txs_recv *s, const struct txs_recv_hooks *hooks);
/* After txs_recv_run: the result, or NULL (not run, or the merge failed). */
TXS_API struct txs_recv_result *txs_recv_result(struct txs_recv *s);
/* The summary's recv fields (docs/json-schema.md, "recv summary") into an
 * open object, as txs_send_result_json does the send fields. */
TXS_API void txs_recv_result_json(struct txs_json *j, const struct txs_recv_result *r);
/* The human-readable summary. */
TXS_API void txs_recv_result_text(FILE *f, const struct txs_recv_result *r);
/* The whole summary, as txs_send_summary: one {"type":"summary","kind":"recv",...}
 * line, or the text. */
TXS_API void txs_recv_summary(FILE *f, bool json, const struct txs_recv_result *r);

/* ---- metrics ------------------------------------------------------------------------- */
struct txs_metrics;
struct txs_metrics_rx;
/* The receive collector (txscale/metrics.h) over the session's cores and
 * snapshots (conf.snaps), with max_flows per-flow series (0 = default),
 * registered in m; *out is the caller's, destroyed after m. m NULL: *out
 * NULL, 0. Returns 0, or -ENOMEM (no snapshots, or out of memory). */
TXS_API int txs_recv_metrics(struct txs_recv *s, struct txs_metrics *m, unsigned max_flows,
			     struct txs_metrics_rx **out);

#ifdef __cplusplus
}
#endif
#endif
