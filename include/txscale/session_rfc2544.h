/* SPDX-License-Identifier: MIT */
/* The RFC 2544 benchmark suite as a library session (docs/rfc2544.md):
 * throughput, latency at the throughput rate, frame loss rate from the
 * sender's top rate down, and back-to-back bursts, per frame size.
 *
 * Shape: a conf (txs_rfc2544_conf_init, then the caller's settings,
 * txs_rfc2544_conf_check), txs_rfc2544_open, txs_rfc2544_run (trial by
 * trial, each reported to the caller's hook), txs_rfc2544_result, the
 * writers (a trial row, the result as text or one JSON line, the report
 * directory), txs_rfc2544_close.
 *
 * Every trial is a paced `txscale send` into a fresh `txscale recv`, run as
 * child processes of `exe` (optionally under `ip netns exec`), or with the
 * receiver behind a `txscale server` reached by the caller's remote hooks;
 * its verdict comes from the two summaries (<txscale/ndr.h>'s trial
 * machinery), and the throughput search is <txscale/ndr.h>'s search run with
 * short trials and a full-length confirmation.
 *
 * Single-threaded: one thread opens, runs and closes a session; it forks
 * (no other thread of the process may be running then). Nothing prints: the
 * writers write into the caller's FILE. */
#ifndef TXSCALE_SESSION_RFC2544_H
#define TXSCALE_SESSION_RFC2544_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <txscale/common.h>
#include <txscale/ndr.h>

#define TXS_RFC2544_MAX_SIZES 16
#define TXS_RFC2544_MAX_REPEAT 20   /* searches per frame size */
#define TXS_RFC2544_MAX_LAT 50      /* latency trials per frame size */
#define TXS_RFC2544_MAX_B2B 50      /* back-to-back searches per frame size */
#define TXS_RFC2544_MAX_FL 10       /* frame-loss steps: 100 % .. 10 % */
#define TXS_RFC2544_IMIX 0          /* in a size list: IMIX 7:4:1 of 64/594/1518 */

enum txs_rfc2544_test {
	TXS_RFC2544_THROUGHPUT = 1u << 0,
	TXS_RFC2544_LATENCY = 1u << 1,
	TXS_RFC2544_FRAME_LOSS = 1u << 2,
	TXS_RFC2544_BACK_TO_BACK = 1u << 3,
	TXS_RFC2544_ALL = 15u,
};

/* ---- frame sizes ---------------------------------------------------------- */
/* The UDP payload that makes an Ethernet frame of `frame` bytes including
 * the 4-byte FCS (14 Ethernet + 20 IPv4 / 40 IPv6 + 8 UDP + payload + 4),
 * at least txscale's 16-byte payload header: over IPv6 a 64-byte frame has
 * no room for it and is sent as 82 bytes (as `send -l imix` does). *wire
 * gets the frame actually sent, FCS included. 0, or -EINVAL when frame is
 * above 9018 or below 64. */
TXS_API int txs_rfc2544_payload(unsigned frame, int family, unsigned *payload, unsigned *wire);
/* The mean frame bytes (FCS included) of a size: the wire frame of
 * txs_rfc2544_payload, or IMIX's 7:4:1 weighted mean. */
TXS_API double txs_rfc2544_frame_bytes(unsigned size, int family);
/* "64,128,1518,imix" or "default" (64,128,256,512,1024,1280,1518) into
 * sizes[0..*n): 0, or -EINVAL with err naming the bad item. */
TXS_API int txs_rfc2544_parse_sizes(const char *s, unsigned *sizes, unsigned *n, char *err, size_t errlen);
/* "throughput,latency,frame-loss,back-to-back" or "all" into a mask. */
TXS_API int txs_rfc2544_parse_tests(const char *s, unsigned *mask, char *err, size_t errlen);
TXS_API const char *txs_rfc2544_test_str(enum txs_rfc2544_test t);

/* ---- frame loss rate (RFC 2544 26.3) --------------------------------------- */
/* From the top rate down in 10 % steps until two successive steps lose
 * nothing (or the 10 % step ran). */
struct txs_rfc2544_fl {
	double top;        /* frames/s of the 100 % step */
	unsigned step;     /* steps reported */
	unsigned zero_run; /* successive steps without loss, the last ones */
	bool done;
};
TXS_API void txs_rfc2544_fl_init(struct txs_rfc2544_fl *f, double top_fps);
/* The next step's rate (whole frames/s, at least 1): false when done. */
TXS_API bool txs_rfc2544_fl_next(struct txs_rfc2544_fl *f, double *rate, double *pct_of_top);
TXS_API void txs_rfc2544_fl_report(struct txs_rfc2544_fl *f, uint64_t lost);

/* ---- configuration ----------------------------------------------------------- */
/* The receiver behind a txscale server (`--remote`): begin arms it for one
 * trial of secs on port (dev: its input), end sends it the sender's summary
 * file and writes the receiver's summary line into recv_json_path. Both
 * return 0 or -errno with err set. */
struct txs_rfc2544_remote {
	int (*begin)(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen);
	int (*end)(void *arg, const char *send_json_path, const char *recv_json_path, char *err, size_t errlen);
	void *arg;
};

struct txs_rfc2544_conf {
	const char *exe;          /* the txscale program the trials run (required) */
	const char *dest;         /* the receiver's address (required) */
	uint16_t port;            /* 5201 */
	const char *dev;          /* sender --dev: "udp" */
	const char *recv_dev;     /* receiver --dev: "udp" */
	const char *bind;         /* sender -B, or NULL */
	const char *send_netns, *recv_netns; /* or NULL */
	const char *recv_args;    /* extra receiver options, split at spaces, or NULL */
	unsigned threads;         /* sender -P (0: send's default) */
	const int *cpus;          /* sender -A, n_cpus of them */
	unsigned n_cpus;
	unsigned sizes[TXS_RFC2544_MAX_SIZES]; /* frame sizes with FCS; TXS_RFC2544_IMIX */
	unsigned n_sizes;         /* 7: 64 .. 1518 */
	unsigned tests;           /* TXS_RFC2544_ALL */
	double trial_s;           /* full-length trial: confirmation, latency, frame loss: 10 */
	double search_s;          /* a search step's trial: 1 */
	double settle_s;          /* rest between trials (RFC 2544 23): 2 */
	double loss_pct;          /* acceptable loss: 0 (NDR) */
	double precision;         /* fraction, the search's stop: 0.01 */
	double lo_fps, hi_fps;    /* search bounds: 100, 0 (the sender's top rate, measured) */
	unsigned max_trials;      /* per search: 30 */
	unsigned repeat;          /* searches per size: 3 */
	unsigned latency_trials;  /* 3 */
	unsigned b2b_trials;      /* back-to-back searches per size: 5 */
	double b2b_precision;     /* fraction: 0.02 */
	uint64_t b2b_max;         /* longest burst tried, frames: 0 (2 s at the top rate) */
	const struct txs_rfc2544_remote *remote; /* NULL: the receiver is ours */
	const volatile sig_atomic_t *stop; /* looked at while trials run; NULL: none */
};
TXS_API void txs_rfc2544_conf_init(struct txs_rfc2544_conf *c);
/* 0, or -EINVAL with err naming the bad setting. */
TXS_API int txs_rfc2544_conf_check(const struct txs_rfc2544_conf *c, char *err, size_t errlen);

/* ---- trials and results ---------------------------------------------------------- */

struct txs_rfc2544_latency {
	uint64_t count;
	double min, mean, p50, p90, p99, p999, max; /* ns */
	bool have;
};

/* One trial, as the hook sees it (and txs_rfc2544_write_trial writes it). */
struct txs_rfc2544_trial {
	unsigned index;             /* 1-based over the session */
	enum txs_rfc2544_test test;
	const char *phase;          /* throughput and back-to-back: the search's phase
				     * (txs_ndr_phase_str: measure, hi, lo, search,
				     * confirm); "latency"; frame loss: "step";
				     * "probe": the sender's top rate, unlimited */
	unsigned size;              /* frame size (TXS_RFC2544_IMIX) */
	unsigned run;               /* 1-based search / repetition */
	double rate;                /* frames/s offered, 0 = unlimited */
	uint64_t frames;            /* a burst's length (back-to-back), else 0 */
	double seconds;             /* the sending time asked for */
	struct txs_ndr_trial t;     /* the two summaries */
	double loss_pct;
	bool short_send;            /* a paced trial that offered less than rate x seconds
				     * (1 - precision): no verdict at its rate, a failure */
	bool pass;
	struct txs_rfc2544_latency lat;
	/* where the session is: for a progress line */
	unsigned size_index, n_sizes;
	double elapsed_s;
};

struct txs_rfc2544_tput {
	unsigned size, payload;
	double frame_bytes;         /* mean frame bytes, FCS included */
	double top_fps;             /* the sender's top rate (probe) */
	double fps;                 /* the median of the searches */
	double fps_min, fps_max, fps_mean, fps_stdev;
	double runs[TXS_RFC2544_MAX_REPEAT];
	bool confirmed[TXS_RFC2544_MAX_REPEAT];
	unsigned trials[TXS_RFC2544_MAX_REPEAT];
	const char *outcome[TXS_RFC2544_MAX_REPEAT];
	unsigned n_runs;
	bool have_lat;
	struct txs_rfc2544_latency lat;      /* over the latency trials (see docs) */
	struct txs_rfc2544_latency lat_trials[TXS_RFC2544_MAX_LAT];
	unsigned n_lat;
};
struct txs_rfc2544_fl_point {
	double offered_fps, pct_of_top, sent_fps, loss_pct;
	uint64_t sent, lost;
};
struct txs_rfc2544_floss {
	unsigned size;
	double top_fps;
	struct txs_rfc2544_fl_point points[TXS_RFC2544_MAX_FL];
	unsigned n_points;
};
struct txs_rfc2544_b2b_trial {
	uint64_t frames;     /* the longest lossless burst this search found */
	double burst_fps;    /* the rate the sender sent that burst at */
	unsigned steps;      /* bursts sent */
	bool confirmed;
};
struct txs_rfc2544_b2b {
	unsigned size;
	double frames;       /* the mean over the searches (RFC 2544 26.4) */
	double frames_min, frames_max, burst_fps; /* burst_fps: the mean */
	double buffer_s;     /* RFC 9004's implied buffer time: frames / burst_fps */
	struct txs_rfc2544_b2b_trial trials[TXS_RFC2544_MAX_B2B];
	unsigned n_trials;
};
struct txs_rfc2544_result {
	unsigned tests;
	int family;
	unsigned n_sizes;
	struct txs_rfc2544_tput tput[TXS_RFC2544_MAX_SIZES];
	struct txs_rfc2544_floss floss[TXS_RFC2544_MAX_SIZES];
	struct txs_rfc2544_b2b b2b[TXS_RFC2544_MAX_SIZES];
	unsigned trials;
	double seconds;
	bool complete;       /* every test ran to its end */
};

/* ---- the session --------------------------------------------------------------------- */
struct txs_rfc2544;
struct txs_rfc2544_hooks {
	/* after each trial (before the search takes its verdict) */
	void (*trial)(const struct txs_rfc2544_trial *t, void *arg);
	void *arg;
};
/* Checks c (kept by pointer: it must outlive the session), makes the
 * temporary directory, and checks the sender's options (send --dry-run):
 * 0, -EINVAL (bad input, err names it), other -errno with err. */
TXS_API int txs_rfc2544_open(struct txs_rfc2544 **s, const struct txs_rfc2544_conf *c, char *err, size_t errlen);
/* Every test on every size. 0 when all ran; -EINTR when *stop was set;
 * -EIO (a trial could not run: err says which and why). The result holds
 * what ran in every case. */
TXS_API int txs_rfc2544_run(struct txs_rfc2544 *s, const struct txs_rfc2544_hooks *h, char *err, size_t errlen);
TXS_API const struct txs_rfc2544_result *txs_rfc2544_result(const struct txs_rfc2544 *s);
TXS_API void txs_rfc2544_close(struct txs_rfc2544 *s);

/* ---- writers ------------------------------------------------------------------------------ */
/* One trial: a {"type":"trial","kind":"rfc2544",...} line, or a text row. */
TXS_API void txs_rfc2544_write_trial(FILE *f, bool json, const struct txs_rfc2544_trial *t);
/* The text header: what runs where. */
TXS_API void txs_rfc2544_write_header(FILE *f, const struct txs_rfc2544_conf *c);
/* The result: one {"type":"result","kind":"rfc2544",...} line, or tables. */
TXS_API void txs_rfc2544_write_result(FILE *f, bool json, const struct txs_rfc2544_result *r,
				      const struct txs_rfc2544_conf *c);
/* The report directory (made if absent): report.md, report.html,
 * result.json, one CSV per test that ran, and PNG plots when gnuplot
 * runs (*plots: how many were drawn). 0 or -errno with err. */
TXS_API int txs_rfc2544_report(const char *dir, const struct txs_rfc2544_result *r, const struct txs_rfc2544_conf *c,
			       unsigned *plots, char *err, size_t errlen);
#endif
