/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search as one call (`txscale ndr`, the JSON "ndr"
 * session): the options checked (opt.h's txs_ndr_args), the sender and the
 * receiver's input checked before any trial, then the search of
 * <txscale/ndr.h> trial by trial through lib/session/trial.h's runner,
 * each step handed to the caller's hooks. Private to the library and its
 * programs. Single-threaded; the process forks and execs `exe`. */
#ifndef TXS_SESSION_NDR_SESS_H
#define TXS_SESSION_NDR_SESS_H
#include <signal.h>
#include <txscale/ndr.h>
#include "opt.h"
#include "trial.h"

struct txs_ndr_sess_hooks {
	void *user;
	/* before the first trial: the search's bounds and the settings */
	void (*header)(void *user, const struct txs_ndr_search *s, const struct txs_ndr_info *in);
	/* each trial, before the search takes its verdict (txs_ndr_write_trial's arguments) */
	void (*trial)(void *user, const struct txs_ndr_search *s, double secs, const struct txs_ndr_trial *t,
		      double pct, bool pass);
	/* the end of the search (txs_ndr_write_result's arguments) */
	void (*result)(void *user, const struct txs_ndr_search *s, const struct txs_ndr_info *in, double last_sent_pps,
		       double secs);
};

/* The checks before the first trial alone (the sender's --dry-run in its
 * namespace, the receiver's input where it runs here): 0 or -EINVAL (or
 * another -errno) with one line in err, as txs_ndr_sess_run says them. */
int txs_ndr_sess_precheck(const struct txs_ndr_args *a, const char *exe, char *err, size_t errlen);

/* Run the search for a (txs_ndr_args_check passed) with `exe` as the
 * txscale program of the trials; remote (NULL: our own receiver child)
 * puts the receiver behind a txscale server; *stop (may be NULL) ends it
 * between and during trials (read with relaxed atomic loads: a signal
 * handler's or another thread's store). 0: a result went to the hooks;
 * -EINVAL: the sender or the receiver's input refused before any trial;
 * -EINTR: stopped ("interrupted after N trials"); -EIO or another -errno:
 * a trial or the set-up failed; each with one line in err. */
int txs_ndr_sess_run(const struct txs_ndr_args *a, const char *exe, const struct txs_trial_remote *remote,
		     const volatile sig_atomic_t *stop, const struct txs_ndr_sess_hooks *h, char *err, size_t errlen);
#endif
