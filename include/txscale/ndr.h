/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search of `txscale ndr` (docs/ndr.md), apart from the
 * processes and files that run its trials (tests/unit/test_ndr.c drives it
 * with a fake receiver):
 *
 *  - the search: a step machine that says which rate to try next and takes
 *    each trial's verdict (binary search with a relative precision, a bounded
 *    number of trials, a confirmation trial at the result);
 *  - a trial's verdict, read from the one-line JSON summaries of
 *    `txscale send` and `txscale recv` (docs/json-schema.md).
 *
 *  - what a trial needs around its two processes: the receiver's CPU, the
 *    two summary files read back;
 *  - the reports: the text header, a trial's row and the result, as text or
 *    JSON lines (docs/ndr.md, "Output"), into a caller's FILE.
 *
 * Running the two processes is the caller's (tools/txscale/ndr.c, with
 * lib/common/proc.h). Single-threaded; all memory caller-owned. */
#ifndef TXSCALE_NDR_H
#define TXSCALE_NDR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <txscale/common.h>

#define TXS_NDR_MAX_TRIALS 100

enum txs_ndr_phase {
	TXS_NDR_MEASURE, /* no --hi: one short unlimited trial; its sending rate becomes hi
		      * (no loss there: hi is tried next, else lo) */
	TXS_NDR_HI,      /* the upper bound: a pass there ends the search */
	TXS_NDR_LO,      /* the lower bound: a failure there ends the search */
	TXS_NDR_SEARCH,  /* bisection of [lo, hi] */
	TXS_NDR_CONFIRM, /* the result, tried once more */
	TXS_NDR_DONE,
};

enum txs_ndr_outcome {
	TXS_NDR_FOUND,         /* converged and confirmed: result in (T(1-p), T] for threshold T */
	TXS_NDR_HI_PASSES,     /* the upper bound (or the unlimited rate) had no loss */
	TXS_NDR_LO_FAILS,      /* even the lower bound lost: result 0 */
	TXS_NDR_OUT_OF_TRIALS, /* --max-trials reached before the precision: result = highest
			    * pass, confirmed when the last trial passed there */
};

struct txs_ndr_search {
	/* configuration (txs_ndr_init) */
	double lo0, hi0;  /* pps; hi0 0: measure it */
	double precision; /* fraction: stop when (hi - lo) / hi <= precision */
	unsigned max_trials;
	/* state */
	enum txs_ndr_phase phase;
	double lo, hi;    /* highest rate that passed / lowest that failed */
	double rate;      /* the rate of the trial asked for last (0 = unlimited) */
	unsigned trials;  /* trials reported */
	double pass[TXS_NDR_MAX_TRIALS]; /* rates that passed, ascending */
	unsigned n_pass;
	bool measured;    /* hi came from the unlimited trial */
	bool converged;   /* the bracket reached the precision (or a whole packet/s) */
	/* result, once phase == TXS_NDR_DONE */
	enum txs_ndr_outcome outcome;
	double result;    /* pps; 0 when nothing passed */
	bool confirmed;   /* the last trial passed at `result` */
};

/* lo > 0; hi 0 (measure) or > lo; 0 < precision < 1; 3 <= max_trials <=
 * TXS_NDR_MAX_TRIALS. Returns 0 or -EINVAL. */
TXS_API int txs_ndr_init(struct txs_ndr_search *s, double lo, double hi, double precision, unsigned max_trials);
/* The next trial to run: false when the search is over (see outcome/result).
 * *rate: packets/s to offer, 0 = unlimited. */
TXS_API bool txs_ndr_next(struct txs_ndr_search *s, double *rate, enum txs_ndr_phase *phase);
/* The verdict of the trial txs_ndr_next asked for. achieved_pps: the rate the
 * sender reached (read in TXS_NDR_MEASURE only: it becomes hi). */
TXS_API void txs_ndr_report(struct txs_ndr_search *s, bool pass, double achieved_pps);
/* (hi - lo) / hi of the current bracket (1 when nothing is bracketed). */
TXS_API double txs_ndr_bracket(const struct txs_ndr_search *s);
TXS_API const char *txs_ndr_phase_str(enum txs_ndr_phase p);
TXS_API const char *txs_ndr_outcome_str(enum txs_ndr_outcome o);

/* ---- one trial's summary lines (docs/json-schema.md) ------------------- */
/* What a trial's two summaries say (txs_ndr_trial_parse). */
struct txs_ndr_trial {
	uint64_t sent;         /* sender: packets its device accepted */
	uint64_t sender_drops; /* sender: built but not accepted */
	double sent_pps;       /* sender: packets / seconds */
	uint64_t received, lost, duplicates;
	bool lost_exact;
	double recv_pps;
	/* where the lost ones went (kernel counters, recv's namespace) */
	bool have_sockets;
	uint64_t sockets;       /* our socket's drops (SO_MEMINFO) */
	uint64_t rcvbuf_errors; /* Udp + Udp6 RcvbufErrors */
	uint64_t in_errors;     /* Udp + Udp6 InErrors */
	uint64_t if_dropped;    /* interfaces' rx_dropped, summed */
	uint64_t softnet;       /* softnet backlog drops (host-wide) */
	char *kernel_drops;     /* the receiver's kernel_drops object as compact JSON,
				 * or NULL; freed by txs_ndr_trial_release */
};
/* Read both summary lines. 0, or -EINVAL naming nothing (the caller says
 * which file) when a line is not one JSON object or a needed field is
 * missing, -ENOMEM. On success the caller txs_ndr_trial_release()s t. */
TXS_API int txs_ndr_trial_parse(struct txs_ndr_trial *t, const char *send_json, size_t send_len, const char *recv_json,
		    size_t recv_len);
TXS_API void txs_ndr_trial_release(struct txs_ndr_trial *t);
/* Offered = sent + sender_drops; lost_total = lost + sender_drops. Pass iff
 * lost_total * 100 <= loss_pct * offered (loss_pct 0: lost_total == 0) and
 * something was offered. *pct gets lost_total / offered * 100. */
TXS_API bool txs_ndr_trial_pass(const struct txs_ndr_trial *t, double loss_pct, double *pct);
/* A trial's two summary files (send's and recv's --summary-file) read into
 * t: 0, or -EIO with one line in err saying what was wrong (a file missing,
 * a line unreadable, the receiver's loss not exact; t holds nothing to
 * release). On success the caller txs_ndr_trial_release()s t. */
TXS_API int txs_ndr_trial_load(struct txs_ndr_trial *t, const char *send_json_path, const char *recv_json_path,
			       char *err, size_t errlen);
/* The receiver's CPU (docs/ndr.md, "CPUs"): the first CPU this process may
 * run on that the sender does not use, the sender using send_cpus[0..n)
 * (its -A) or, without them, the first `threads` (0: 1) of ours. -1 when
 * the receiver's extra options recv_argv[0..recv_argc) choose its CPUs or
 * threads already (-A, --affinity, --no-pin, -P, --parallel), or when no
 * CPU is left. */
TXS_API int txs_ndr_recv_cpu(const int *send_cpus, unsigned n, unsigned threads, const char *const *recv_argv,
			     unsigned recv_argc);

/* ---- reports (docs/ndr.md, "Output") ------------------------------------ */
/* What the reports say of the run besides the search. */
struct txs_ndr_info {
	const char *dest;        /* the receiver's address, as given */
	uint16_t port;
	const char *device;      /* the sender's --dev */
	const char *recv_device; /* the receiver's --dev */
	const char *recv_args;   /* the receiver's extra options as given, or NULL */
	unsigned payload_len;
	unsigned threads;        /* sender threads */
	double trial_s;          /* a trial's sending time */
	double precision_pct;    /* the precision in percent, as given */
	double loss_pct;         /* the acceptable loss in percent */
};
/* The text header, one line: the destination, the settings, the search's
 * bounds and budget (s as txs_ndr_init left it). Flushes f. */
TXS_API void txs_ndr_write_header(FILE *f, const struct txs_ndr_search *s, const struct txs_ndr_info *in);
/* The row of the trial txs_ndr_next asked for last (call it before
 * txs_ndr_report): its sending time secs, its summaries t and its verdict
 * (txs_ndr_trial_pass: pass, pct). json: one {"type":"trial",...} line,
 * else one text line. Flushes f. */
TXS_API void txs_ndr_write_trial(FILE *f, bool json, const struct txs_ndr_search *s, double secs,
				 const struct txs_ndr_trial *t, double pct, bool pass);
/* The result once txs_ndr_next returned false: one {"type":"ndr",...}
 * line, or the text sentence of the outcome (after a note when the last
 * trial's sender fell short of the rate). last_sent_pps: the rate the
 * sender reached in the last trial; seconds: the search's wall time.
 * Flushes f. */
TXS_API void txs_ndr_write_result(FILE *f, bool json, const struct txs_ndr_search *s, const struct txs_ndr_info *in,
				  double last_sent_pps, double seconds);
#endif
