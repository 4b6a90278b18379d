/* SPDX-License-Identifier: MIT */
/* One trial of a search (`txscale ndr`, the RFC 2544 session): a receiver
 * started and ready (a `txscale recv` child, optionally under `ip netns
 * exec`, or a server's receiver behind the caller's hooks), then a `txscale
 * send` child for the trial's time or count, both bounded in time, and the
 * two summaries read back (<txscale/ndr.h>'s txs_ndr_trial_load). Private
 * to the library and its programs (tools/txscale/ndr.c, lib/session/
 * rfc2544_run.c). Single-threaded; the process forks. */
#ifndef TXS_SESSION_TRIAL_H
#define TXS_SESSION_TRIAL_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/proc.h"
#include <txscale/ndr.h>

/* A receiver that is not ours (`--remote`): begin arms it for a trial of
 * secs on port (dev: its input), end hands it the sender's summary file and
 * writes its own summary line into recv_json_path. 0 or -errno with err. */
struct txs_trial_remote {
	int (*begin)(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen);
	int (*end)(void *arg, const char *send_json_path, const char *recv_json_path, char *err, size_t errlen);
	void *arg;
};

struct txs_trial_conf {
	const char *exe;      /* the txscale program */
	const char *dest;     /* the receiver's address (send's DEST, recv's -B) */
	uint16_t port;
	const char *dev;      /* send --dev */
	const char *recv_dev; /* recv --dev (or the remote receiver's input) */
	const char *bind;     /* send -B, or NULL */
	const char *send_netns, *recv_netns;
	const char *recv_args; /* extra recv options, split at spaces (at most 1023 characters, 32 of them) */
	unsigned threads;      /* send -P, 0: send's default */
	const int *cpus;       /* send -A */
	unsigned n_cpus;
	const struct txs_trial_remote *remote; /* NULL: our recv child */
	const volatile sig_atomic_t *stop;     /* looked at while children run; NULL: none */
};

struct txs_trial_runner {
	struct txs_trial_conf c;
	struct txs_paths p;     /* the trial's files, in a temporary directory */
	const char *recv_argv[32];
	unsigned recv_argc;
	char recv_buf[1024];
	char cpus[TXS_MAX_CORES * 8];
	int recv_cpu;           /* the receiver's -A, -1: its own choice */
	double last_end;        /* when the last trial's children ended, 0: none yet */
};

/* What one trial sends. */
struct txs_trial_spec {
	const char *length;  /* send -l as given: "18", "imix" */
	double rate;         /* frames/s, 0 = unlimited */
	double secs;         /* send -t (with count: its bound) */
	uint64_t count;      /* send -n, 0: none */
	double settle;       /* rest since the last trial's end before this one starts */
};

/* The temporary directory ($TMPDIR/txscale-WHAT.XXXXXX) and the receiver's
 * arguments and CPU (txs_ndr_recv_cpu). 0 or -errno with err. */
int txs_trial_open(struct txs_trial_runner *r, const struct txs_trial_conf *c, const char *what, char *err,
		   size_t errlen);
/* The sender checks its options and opens its device for sp (send
 * --dry-run, in its namespace): 0; -EINVAL when it refused its input (exit
 * 2), other -errno; err: its own last line. */
int txs_trial_check_sender(struct txs_trial_runner *r, const struct txs_trial_spec *sp, char *err, size_t errlen);
/* One trial: 0 and *t filled (the caller txs_ndr_trial_release()s it);
 * -EINTR when *stop was set; other -errno with err. */
int txs_trial_run(struct txs_trial_runner *r, const struct txs_trial_spec *sp, struct txs_ndr_trial *t, char *err,
		  size_t errlen);
/* Removes the temporary directory. */
void txs_trial_close(struct txs_trial_runner *r);
#endif
