/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search and a trial's verdict (<txscale/ndr.h>). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "common/jsonpath.h"
#include <txscale/ndr.h>

/* ---- search --------------------------------------------------------------- */

int txs_ndr_init(struct txs_ndr_search *s, double lo, double hi, double precision, unsigned max_trials)
{
	if (!(lo > 0) || !isfinite(lo) || hi < 0 || !isfinite(hi) || (hi > 0 && hi <= lo) || !(precision > 0) ||
	    !(precision < 1) || max_trials < 3 || max_trials > TXS_NDR_MAX_TRIALS)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->lo0 = lo;
	s->hi0 = hi;
	s->precision = precision;
	s->max_trials = max_trials;
	s->lo = lo;
	s->hi = hi;
	s->phase = hi > 0 ? TXS_NDR_HI : TXS_NDR_MEASURE;
	return 0;
}

double txs_ndr_bracket(const struct txs_ndr_search *s)
{
	if (!(s->hi > 0) || s->n_pass == 0)
		return 1;
	double b = (s->hi - s->lo) / s->hi;
	return b > 0 ? b : 0;
}

static bool converged(const struct txs_ndr_search *s)
{
	return txs_ndr_bracket(s) <= s->precision;
}

static void finish(struct txs_ndr_search *s, enum txs_ndr_outcome o, double result, bool confirmed)
{
	s->phase = TXS_NDR_DONE;
	s->outcome = o;
	s->result = result;
	s->confirmed = confirmed;
}

bool txs_ndr_next(struct txs_ndr_search *s, double *rate, enum txs_ndr_phase *phase)
{
	if (s->phase == TXS_NDR_DONE)
		return false;
	if (s->trials >= s->max_trials) {
		/* the highest pass stands, unconfirmed */
		finish(s, TXS_NDR_OUT_OF_TRIALS, s->n_pass ? s->pass[s->n_pass - 1] : 0, false);
		return false;
	}
	/* keep the last trial for the confirmation; a bracket too narrow for a
	 * whole packet/s between its ends is as good as converged */
	if (s->phase == TXS_NDR_SEARCH) {
		if (floor((s->lo + s->hi) / 2) <= s->lo) {
			s->converged = true;
			s->phase = TXS_NDR_CONFIRM;
		} else if (s->trials + 1 >= s->max_trials) {
			s->phase = TXS_NDR_CONFIRM; /* not converged: the outcome says so */
		}
	}
	switch (s->phase) {
	case TXS_NDR_MEASURE:
		s->rate = 0;
		break;
	case TXS_NDR_HI:
		s->rate = s->hi;
		break;
	case TXS_NDR_LO:
	case TXS_NDR_CONFIRM:
		s->rate = s->lo;
		break;
	case TXS_NDR_SEARCH:
		s->rate = floor((s->lo + s->hi) / 2); /* whole packets/s: what the sender is given */
		break;
	case TXS_NDR_DONE:
		return false;
	}
	*rate = s->rate;
	*phase = s->phase;
	return true;
}

static void push_pass(struct txs_ndr_search *s, double r)
{
	if (s->n_pass < TXS_NDR_MAX_TRIALS)
		s->pass[s->n_pass++] = r;
	s->lo = r;
}

/* after a pass at lo or a search step: confirm once converged */
static void search_or_confirm(struct txs_ndr_search *s)
{
	s->converged = converged(s);
	s->phase = s->converged ? TXS_NDR_CONFIRM : TXS_NDR_SEARCH;
}

void txs_ndr_report(struct txs_ndr_search *s, bool pass, double achieved_pps)
{
	if (s->phase == TXS_NDR_DONE)
		return;
	s->trials++;
	switch (s->phase) {
	case TXS_NDR_MEASURE:
		s->measured = true;
		if (pass) {
			/* no loss at the sender's full rate, in a probe that may be
			 * shorter than a trial: a whole trial paced at that rate
			 * decides (a pass there ends the search) */
			s->hi = floor(achieved_pps) > s->lo ? floor(achieved_pps) : s->lo + 1;
			s->phase = TXS_NDR_HI;
			return;
		}
		/* a sender slower than lo: the bracket is empty, lo decides */
		s->hi = floor(achieved_pps) > s->lo ? floor(achieved_pps) : s->lo;
		s->phase = TXS_NDR_LO;
		return;
	case TXS_NDR_HI:
		if (pass) {
			finish(s, TXS_NDR_HI_PASSES, s->hi, true);
			return;
		}
		s->phase = TXS_NDR_LO;
		return;
	case TXS_NDR_LO:
		if (!pass) {
			s->hi = s->lo;
			finish(s, TXS_NDR_LO_FAILS, 0, false);
			return;
		}
		push_pass(s, s->lo);
		search_or_confirm(s);
		return;
	case TXS_NDR_SEARCH:
		if (pass)
			push_pass(s, s->rate);
		else
			s->hi = s->rate;
		search_or_confirm(s);
		return;
	case TXS_NDR_CONFIRM:
		if (pass) {
			finish(s, s->converged ? TXS_NDR_FOUND : TXS_NDR_OUT_OF_TRIALS, s->lo, true);
			return;
		}
		/* the result did not hold: it becomes the upper bound, and the
		 * search goes on below it from the pass before */
		s->hi = s->lo;
		s->n_pass--;
		if (s->n_pass == 0) {
			finish(s, TXS_NDR_LO_FAILS, 0, false);
			return;
		}
		s->lo = s->pass[s->n_pass - 1];
		search_or_confirm(s);
		return;
	case TXS_NDR_DONE:
		return;
	}
}

const char *txs_ndr_phase_str(enum txs_ndr_phase p)
{
	static const char *const n[] = { "measure", "hi", "lo", "search", "confirm", "done" };
	return (unsigned)p < TXS_ARRAY_SIZE(n) ? n[p] : "?";
}

const char *txs_ndr_outcome_str(enum txs_ndr_outcome o)
{
	static const char *const n[] = { "found", "hi-passes", "lo-fails", "out-of-trials" };
	return (unsigned)o < TXS_ARRAY_SIZE(n) ? n[o] : "?";
}

/* ---- summary lines (read with jansson, lib/common/jsonpath.h) ------------------ */

static uint64_t opt_u64(const json_t *o, const char *path)
{
	uint64_t v = 0;
	if (txs_jget_u64(o, path, &v) < 0)
		return 0;
	return v;
}

static int trial_read(struct txs_ndr_trial *t, const json_t *s, const json_t *r)
{
	if (txs_jget_u64(s, "packets", &t->sent) < 0 || txs_jget_u64(s, "drops", &t->sender_drops) < 0)
		return -EINVAL;
	if (txs_jget_dbl(s, "pps", &t->sent_pps) < 0)
		t->sent_pps = 0;
	if (txs_jget_u64(r, "received", &t->received) < 0 || txs_jget_u64(r, "lost", &t->lost) < 0 ||
	    txs_jget_bool(r, "lost_exact", &t->lost_exact) < 0)
		return -EINVAL;
	t->duplicates = opt_u64(r, "duplicates");
	if (txs_jget_dbl(r, "pps", &t->recv_pps) < 0)
		t->recv_pps = 0;
	t->have_sockets = txs_jget_u64(r, "kernel_drops.sockets", &t->sockets) == 0;
	t->rcvbuf_errors = opt_u64(r, "kernel_drops.udp.RcvbufErrors") + opt_u64(r, "kernel_drops.udp6.RcvbufErrors");
	t->in_errors = opt_u64(r, "kernel_drops.udp.InErrors") + opt_u64(r, "kernel_drops.udp6.InErrors");
	t->softnet = opt_u64(r, "kernel_drops.softnet.dropped");
	uint64_t d = 0;
	if (txs_jsum_members(r, "kernel_drops.interfaces", "rx_dropped", &d) == 0)
		t->if_dropped = d;
	const json_t *kd = json_object_get(r, "kernel_drops");
	if (json_is_object(kd) && !(t->kernel_drops = json_dumps(kd, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		return -ENOMEM;
	return 0;
}

int txs_ndr_trial_parse(struct txs_ndr_trial *t, const char *sj, size_t sn, const char *rj, size_t rn)
{
	memset(t, 0, sizeof(*t));
	json_t *s = txs_jload(sj, sn), *r = txs_jload(rj, rn);
	int rc = s && r ? trial_read(t, s, r) : -EINVAL;
	json_decref(s);
	json_decref(r);
	if (rc < 0)
		txs_ndr_trial_release(t);
	return rc;
}

void txs_ndr_trial_release(struct txs_ndr_trial *t)
{
	free(t->kernel_drops);
	t->kernel_drops = NULL;
}

bool txs_ndr_trial_pass(const struct txs_ndr_trial *t, double loss_pct, double *pct)
{
	uint64_t offered = t->sent + t->sender_drops;
	uint64_t lost = t->lost + t->sender_drops;
	*pct = offered ? (double)lost * 100.0 / (double)offered : 0;
	if (!offered || !t->lost_exact)
		return false;
	if (loss_pct <= 0)
		return lost == 0;
	return (double)lost * 100.0 <= loss_pct * (double)offered;
}
