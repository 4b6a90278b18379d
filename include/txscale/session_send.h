/* SPDX-License-Identifier: MIT */
/* A send session: one validated config (struct txs_send_conf), open (the
 * device, link selection, link monitor, ID allocator, engine), run (a stop
 * hook, a poll and an interval callback), a result with its JSON and text
 * writers, and one teardown (txs_send_close). docs/design.md, "Sessions".
 *
 * The library never prints: a refused config is one line in err (the words
 * the CLI prints after "txscale send: "); events during open and run (a
 * link that changes, a note such as a kernel that refused GSO) go to the
 * conf's hooks. The writers write to the FILE or struct txs_json they are
 * given.
 *
 * Concurrency: a session belongs to the thread that opened it; only
 * txs_send_stop may be called from elsewhere (another thread, a signal
 * handler). Hooks run on the session's thread, on_link also on the link
 * monitor's thread. */
#ifndef TXSCALE_SESSION_SEND_H
#define TXSCALE_SESSION_SEND_H
#include <stdio.h>
#include <txscale/common.h>
#include <txscale/json.h>
#include <txscale/stats.h>
#include <txscale/linkmon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A rate: datagrams/s, or bits/s of UDP payload as iperf counts them
 * (bits); the whole run's, or each thread's (per_thread: iperf3 applies -b
 * to each stream, and the CLI's -b and --ramp set it). 0 = unlimited. */
struct txs_send_rate {
	double value;
	bool bits;
	bool per_thread;
};

/* The lowest rate: one datagram per 1000 s per thread. */
#define TXS_SEND_MIN_PPS 0.001
#define TXS_SEND_SCHEDULE_MAX 10000000u /* schedule_file lines */
#define TXS_SEND_MAX_BURST 256u        /* burst */
#define TXS_SEND_MIN_MTU 576u          /* mtu, unless 0 */
#define TXS_SEND_MAX_RATE 1e12         /* rate.value, ramp.from/to */
#define TXS_SEND_MAX_SECONDS 1e7       /* time, interval, ramp.secs */

/* What the CLI fills from its options (docs/txscale.1, "send"); the
 * strings are read as the options give them. txs_send_conf_init sets the
 * CLI's defaults; a zeroed config means the same: every string may be NULL
 * (its default: sport "40000", length "16", dev "dummy", ident "lease",
 * pace "const", timestamps "burst", pace_slack "auto"), ttl 0 is 64 and
 * replay_speed 0 is 1. Every number is checked by txs_send_conf_check
 * (finite, not negative, within its option's range; cpus[0..n_cpus) CPUs
 * this process may run on, each once) before anything opens. */
struct txs_send_conf {
	const char *dest;               /* DEST: NULL when dst gives the range */
	uint16_t port;                  /* -p; 1..65535 unless dport gives the ports */
	const char *bind;               /* -B, NULL = the device's or 198.18.0.1 / 2001:2::1 */
	const char *sport, *dport;      /* --sport ("40000"), --dport: PORTS */
	const char *src, *dst;          /* --src, --dst: ADDRS ranges */
	unsigned flows;                 /* --flows, 0 = the largest range's size */
	uint64_t flow_base;
	const char *vlan, *qinq;        /* --vlan ID[,PRIO], --qinq OUTER,INNER */
	bool v4, v6;                    /* -4, -6 */
	const char *length;             /* -l SIZES ("16") */
	struct txs_send_rate rate;      /* -b */
	double time;                    /* -t, 0 = 10 s unless count; at most TXS_SEND_MAX_SECONDS */
	uint64_t count;                 /* -n, 0 = none */
	unsigned threads;               /* -P, 0 = one per CPU in cpus, else 1; at most TXS_MAX_CORES */
	unsigned n_cpus;                /* -A: CPUs, each once, at most TXS_MAX_CORES */
	int cpus[TXS_MAX_CORES];
	bool no_pin;
	double interval;                /* seconds between interval callbacks, 0 = none */
	const char *dev;                /* --dev ("dummy") */
	unsigned tos, ttl;              /* 0..255; ttl 1..255, 0 = 64 */
	bool df, no_csum;
	bool no_df;                     /* --no-df: IPv4 DF clear (udp: IP_PMTUDISC_DONT). Neither df nor
					 * no_df: udp: the kernel socket's default (DF where the datagram
					 * fits the path MTU); frame devices: DF clear */
	const char *src_mac, *dst_mac;
	uint64_t seed;
	const char *ident;              /* --ident ("lease") */
	bool ident_df_zero;
	unsigned gso_size;              /* --gso SIZE; 0 = auto or off */
	bool gso_off;                   /* --gso off */
	bool connected, unconnected;
	unsigned burst;                 /* 0 = the device's best; at most TXS_SEND_MAX_BURST */
	unsigned links;                 /* --links N on dummy */
	const char *bond;
	unsigned miimon, updelay, downdelay; /* miimon 100 */
	unsigned profile;               /* --profile N, 0 = off */
	unsigned mtu;                   /* 0 = the device's, else TXS_SEND_MIN_MTU..65535 */
	struct {
		struct txs_send_rate from, to;
		double secs;            /* 0 = no ramp */
	} ramp;
	const char *pace;               /* "const" or "poisson" */
	uint64_t burst_on;
	double burst_off_us;
	const char *pace_slack;         /* --pace-slack: "auto" (or NULL: the default), or USEC; "0" = spin-exact */
	const char *timestamps;         /* "burst", "packet", "interp" */
	const char *replay;             /* pcap file */
	double replay_speed;            /* 1 (0 = 1) */
	const char *schedule_file;      /* checked here; written by txs_send_write_schedule */
	int64_t stamp_shift_ns;         /* test only: shift every timestamp */
	/* events: a link's state changed (monitor thread), a note to the user */
	void *user;
	void (*on_link)(void *user, unsigned link, const char *ifname, bool up, enum txs_link_why why, int err);
	/* one line of warning (no newline, no program name) */
	void (*on_note)(void *user, const char *line);
};

TXS_API void txs_send_conf_init(struct txs_send_conf *c);

/* What a checked config resolves to, for a front end that hands the test
 * to someone else (the CLI's client): the destination (DEST or --dst's
 * first) and port (-p or --dport's first), the largest -l size, the threads, the seconds, and -b in
 * datagrams/s for the whole run (bits/s at the -l sizes' mean payload, times the threads when
 * per thread). */
struct txs_send_plan {
	char dest[64];
	uint16_t port;
	unsigned length;
	unsigned threads;
	double time;
	double rate_pps;
	bool shaped;  /* flows, ranges or size mixes */
	bool tagged;  /* VLAN tags */
};

/* Every check that needs no device: 0, or -EINVAL with one line in err.
 * plan (may be NULL) receives what the config resolves to. */
TXS_API int txs_send_conf_check(const struct txs_send_conf *c, struct txs_send_plan *plan, char *err,
				size_t errlen);

struct txs_send;

/* Check the config, open the device (and the checks that need it), link
 * selection, the link monitor, the ID allocator and the engine (not
 * started). 0, or -errno with one line in err: -EINVAL, -ENODEV or
 * -ENAMETOOLONG for input to fix, others for a device or system failure. */
TXS_API int txs_send_open(struct txs_send **s, const struct txs_send_conf *c, char *err, size_t errlen);

/* What a front end needs to print and publish beside the session. */
struct txs_send_info {
	unsigned n_threads;
	const int *cpus;            /* per thread, -1 = not pinned */
	struct txs_netdev *dev;
	unsigned n_links;
	bool uses_stdout;           /* the device writes to stdout (pcap:-) */
};
TXS_API const struct txs_send_info *txs_send_info(const struct txs_send *s);

/* The schedule the run keeps (needs count): one line per datagram,
 * "THREAD DATAGRAM NS". 0, or -errno with one line in err. */
TXS_API int txs_send_write_schedule(struct txs_send *s, const char *path, char *err, size_t errlen);

/* One poll of a running session (every 10 ms): the thread and link rows
 * so far (running totals). */
struct txs_send_tick {
	double now;
	const struct txs_stat_row *threads, *links;
};

/* One interval's deltas, as txs_recv_interval gives the receiver's: its
 * span [start, end) in seconds since the run started, and the rows. */
struct txs_send_interval {
	double start, end;
	unsigned n_threads, n_links;
	const struct txs_stat_row *threads; /* [n_threads] */
	const struct txs_stat_row *links;   /* [n_links] */
};

struct txs_send_hooks {
	void *user;
	bool (*stop)(void *user);   /* polled; true ends the run as txs_send_stop does */
	void (*poll)(void *user, const struct txs_send_tick *t);
	/* every conf interval seconds, and the last partial one: deltas */
	void (*interval)(void *user, const struct txs_send_interval *iv);
};

/* The result of a run. Rows: threads[n_threads] (one count per fact: the
 * device's counts of each worker's queue, in datagrams), links[n_links],
 * datagrams[n_threads] (the engine's rows). */
struct txs_send_result {
	double seconds;
	int rc;                      /* 0, or the run's -errno */
	unsigned n_threads, n_links;
	const struct txs_stat_row *threads, *links, *datagrams;
	struct txs_stat_row sum;     /* of threads */
	uint64_t verify_errors, icmp_errors;
	int last_err;                /* the devices' last errno */
	bool counts_bad;             /* threads and links do not tell one story (a bug) */
	bool failed;                 /* counts_bad, rc < 0 (but for no link left), or nothing sent */
	const struct txs_send *session;
};

/* Start the engine and run to the end (count, time, stop): hooks may be
 * NULL. *res is set (valid until txs_send_close); returns (*res)->rc. Once
 * per session. */
TXS_API int txs_send_run(struct txs_send *s, const struct txs_send_hooks *h, const struct txs_send_result **res);

/* End the run early; async-signal-safe. */
TXS_API void txs_send_stop(struct txs_send *s);

/* A reporter for the interval callback's rows, and the summary's. */
TXS_API void txs_send_reporter(const struct txs_send *s, FILE *out, bool json, struct txs_reporter *rep);

/* The first lines of a text run: what goes where. */
TXS_API void txs_send_start_text(FILE *f, const struct txs_send *s);
/* The summary's send fields (docs/json-schema.md, "send summary") into an
 * open object. */
TXS_API void txs_send_result_json(struct txs_json *j, const struct txs_send_result *r);
/* The lines after the text summary: profile, sizes, gso, timestamps, replay. */
TXS_API void txs_send_result_text(FILE *f, const struct txs_send_result *r);
/* The whole summary: one JSON line, or the text table and its lines. */
TXS_API void txs_send_summary(FILE *f, bool json, const struct txs_send_result *r);
/* What went wrong, one line each, each after prefix: counts that disagree,
 * no link left, device errors, nothing sent, ICMP errors, and (text only)
 * frames that failed verification. */
TXS_API void txs_send_result_problems(FILE *f, const char *prefix, bool json, const struct txs_send_result *r);

/* One teardown: engine, ID allocator, link monitor, device, link
 * selection. NULL is fine. */
TXS_API void txs_send_close(struct txs_send *s);

/* The send collector (txscale/metrics.h) over the session's threads and its
 * device's links (named by interface), registered in m; *out is the
 * caller's (txs_metrics_send_update after each poll), destroyed after m. m
 * NULL: *out NULL, 0. Returns 0 or -ENOMEM. */
struct txs_metrics;
struct txs_metrics_send;
TXS_API int txs_send_metrics(const struct txs_send *s, struct txs_metrics *m, struct txs_metrics_send **out);

#ifdef __cplusplus
}
#endif
#endif
