/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search as one call (ndr_sess.h), shared by `txscale
 * ndr` and the JSON "ndr" session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>
#include <txscale/stats.h>
#include "common/err.h"
#include "ndr_sess.h"

#define MEASURE_MAX_S 1.0 /* the unlimited trial without --hi */

static struct txs_trial_spec spec(const struct txs_ndr_args *a, char *len, size_t lenlen, double rate, double secs)
{
	snprintf(len, lenlen, "%u", a->length);
	return (struct txs_trial_spec){ .length = len, .rate = rate, .secs = secs };
}

/* Before the first trial: the sender checks its options and opens its
 * device (send --dry-run, in its namespace), and the receiver's input is
 * opened here when it runs in this namespace. Bad input is -EINVAL before
 * any trial, not a failed trial. */
static int precheck(const struct txs_ndr_args *a, struct txs_trial_runner *tr, bool remote, char *err, size_t errlen)
{
	char len[16];
	struct txs_trial_spec sp = spec(a, len, sizeof(len), a->lo.value, a->trial);
	int rc = txs_trial_check_sender(tr, &sp, err, errlen);
	if (rc < 0)
		return rc;
	if (a->recv_netns || remote)
		return 0; /* its input lives in the other namespace or on the server: the first trial opens it */
	struct txs_rx_input_conf ic = { .n_queues = 1, .port = a->port, .batch = 0 };
	if (txs_addr_parse(&ic.bind, a->dest) == 0)
		ic.have_bind = true;
	struct txs_rx_input *in;
	char e[320];
	rc = txs_rx_input_open(&in, a->recv_dev, &ic, e, sizeof(e));
	if (rc == -EADDRNOTAVAIL || (rc < 0 && strstr(e, "Cannot assign requested address")))
		return txs_fail(err, errlen, -EINVAL, "the receiver's address %s is not this namespace's (%s): "
				"give --recv-netns NS, the namespace where it is", a->dest, e);
	if (rc < 0)
		return txs_fail(err, errlen, rc == -EINVAL || rc == -ENODEV || rc == -ENOENT ? -EINVAL : rc,
				"bad value for --recv-dev: %s", e);
	txs_rx_input_close(in);
	return 0;
}

int txs_ndr_sess_precheck(const struct txs_ndr_args *a, const char *exe, char *err, size_t errlen)
{
	struct txs_trial_runner *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	struct txs_trial_conf tc = { .exe = exe, .dest = a->dest, .port = a->port, .dev = a->dev,
				     .recv_dev = a->recv_dev, .bind = a->bind, .send_netns = a->send_netns,
				     .recv_netns = a->recv_netns, .recv_args = a->recv_args, .threads = a->threads,
				     .cpus = a->cpus.cpu, .n_cpus = a->cpus.n };
	int rc = txs_trial_open(tr, &tc, "ndr", err, errlen);
	if (rc == 0) {
		rc = precheck(a, tr, false, err, errlen);
		txs_trial_close(tr);
	}
	free(tr);
	return rc;
}

int txs_ndr_sess_run(const struct txs_ndr_args *a, const char *exe, const struct txs_trial_remote *remote,
		     const volatile sig_atomic_t *stop, const struct txs_ndr_sess_hooks *h, char *err, size_t errlen)
{
	struct txs_ndr_search s;
	if (txs_ndr_init(&s, a->lo.value, a->hi.value, a->precision.v / 100.0, a->max_trials) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad search bounds (--lo %.0f, --hi %.0f, --precision %g)",
				a->lo.value, a->hi.value, a->precision.v);
	struct txs_trial_runner *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	struct txs_trial_conf tc = { .exe = exe, .dest = a->dest, .port = a->port, .dev = a->dev,
				     .recv_dev = a->recv_dev, .bind = a->bind, .send_netns = a->send_netns,
				     .recv_netns = a->recv_netns, .recv_args = remote ? NULL : a->recv_args,
				     .threads = a->threads, .cpus = a->cpus.cpu, .n_cpus = a->cpus.n, .remote = remote,
				     .stop = stop };
	int rc = txs_trial_open(tr, &tc, "ndr", err, errlen);
	if (rc < 0) {
		free(tr);
		return rc;
	}
	if ((rc = precheck(a, tr, remote != NULL, err, errlen)) < 0)
		goto out;
	struct txs_ndr_info info = { .dest = a->dest, .port = a->port, .device = a->dev, .recv_device = a->recv_dev,
				     .recv_args = a->recv_args, .payload_len = a->length, .trial_s = a->trial,
				     .precision_pct = a->precision.v, .loss_pct = a->loss.v,
				     .threads = a->threads ? a->threads : a->cpus.n ? a->cpus.n : 1 };
	if (h->header)
		h->header(h->user, &s, &info);
	double t0 = txs_mono_s(), rate, last_sent_pps = 0;
	enum txs_ndr_phase ph;
	while (txs_ndr_next(&s, &rate, &ph)) {
		double secs = ph == TXS_NDR_MEASURE && a->trial > MEASURE_MAX_S ? MEASURE_MAX_S : a->trial;
		struct txs_ndr_trial t = { 0 };
		char len[16], e[512] = "";
		struct txs_trial_spec sp = spec(a, len, sizeof(len), rate, secs);
		rc = txs_trial_run(tr, &sp, &t, e, sizeof(e));
		if (rc == 0) {
			double pct;
			bool pass = txs_ndr_trial_pass(&t, a->loss.v, &pct);
			if (h->trial)
				h->trial(h->user, &s, secs, &t, pct, pass);
			txs_ndr_report(&s, pass, t.sent_pps);
			last_sent_pps = t.sent_pps;
		}
		txs_ndr_trial_release(&t);
		if (rc == -EINTR) {
			txs_fail(err, errlen, rc, "interrupted after %u trial%s", s.trials, s.trials == 1 ? "" : "s");
			goto out;
		}
		if (rc < 0) {
			char rb[32];
			txs_fail(err, errlen, -EIO, "trial %u (%s, %s): %s", s.trials + 1, txs_ndr_phase_str(ph),
				 rate > 0 ? txs_fmt_si(rate, rb, sizeof(rb)) : "unlimited", e);
			rc = -EIO;
			goto out;
		}
	}
	if (h->result)
		h->result(h->user, &s, &info, last_sent_pps, txs_mono_s() - t0);
	rc = 0;
out:
	txs_trial_close(tr);
	free(tr);
	return rc;
}
