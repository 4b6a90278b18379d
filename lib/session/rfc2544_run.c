/* SPDX-License-Identifier: MIT */
/* The RFC 2544 session (<txscale/session_rfc2544.h>, docs/rfc2544.md): the
 * four tests over trials run as ndr's are (trial.h: a `txscale send` into a
 * `txscale recv` or a server's receiver, read back with <txscale/ndr.h>). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common/jsonpath.h"
#include "trial.h"
#include <txscale/pkt.h>
#include <txscale/session_rfc2544.h>

#define PROBE_MAX_S 1.0      /* the unlimited probe of the sender's top rate */
#define B2B_DEFAULT_S 2.0    /* the longest burst by default: this long at the top rate (RFC 9004: >= 2 s) */

struct txs_rfc2544 {
	const struct txs_rfc2544_conf *c;
	struct txs_trial_remote remote;
	struct txs_trial_runner tr;
	bool tr_open;
	int family;
	const struct txs_rfc2544_hooks *h;
	double t0;
	unsigned index, size_index;
	struct txs_rfc2544_result res;
};

/* What one trial sends. */
struct spec {
	unsigned size;
	double rate;     /* frames/s, 0 = unlimited */
	double secs;     /* sending time (a burst: its bound) */
	uint64_t count;  /* frames, 0 = as many as secs allow */
};

/* send -l for a frame size: the payload, or imix */
static void trial_spec(const struct txs_rfc2544 *s, const struct spec *sp, struct txs_trial_spec *ts, char *len,
		       size_t lenlen)
{
	unsigned p = 0, w;
	if (sp->size == TXS_RFC2544_IMIX)
		snprintf(len, lenlen, "imix");
	else if (txs_rfc2544_payload(sp->size, s->family, &p, &w) == 0)
		snprintf(len, lenlen, "%u", p);
	*ts = (struct txs_trial_spec){ .length = len, .rate = sp->rate, .secs = sp->secs, .count = sp->count,
				       .settle = s->c->settle_s };
}

/* The receiver's latency_ns object ("p99.9" has a dot: no path lookups) */
static void latency_read(struct txs_rfc2544_latency *l, const char *recv_json_path)
{
	memset(l, 0, sizeof(*l));
	size_t n = 0;
	char *b = txs_slurp(recv_json_path, &n);
	if (!b)
		return;
	json_t *r = txs_jload(b, txs_trim(b, n));
	free(b);
	const json_t *o = r ? json_object_get(r, "latency_ns") : NULL;
	if (json_is_object(o)) {
		struct {
			const char *k;
			double *v;
		} f[] = { { "min", &l->min }, { "mean", &l->mean }, { "p50", &l->p50 }, { "p90", &l->p90 },
			  { "p99", &l->p99 }, { "p99.9", &l->p999 }, { "max", &l->max } };
		const json_t *cnt = json_object_get(o, "count");
		l->count = json_is_integer(cnt) ? (uint64_t)json_integer_value(cnt) : 0;
		for (unsigned i = 0; i < TXS_ARRAY_SIZE(f); i++) {
			const json_t *v = json_object_get(o, f[i].k);
			*f[i].v = json_is_number(v) ? json_number_value(v) : NAN;
		}
		l->have = l->count > 0;
	}
	json_decref(r);
}

/* One trial: 0 and tr->t filled (and its latency), -EINTR, other -errno with err. */
static int run_trial(struct txs_rfc2544 *s, const struct spec *sp, struct txs_rfc2544_trial *tr, char *err,
		     size_t errlen)
{
	char len[16];
	struct txs_trial_spec ts;
	trial_spec(s, sp, &ts, len, sizeof(len));
	int rc = txs_trial_run(&s->tr, &ts, &tr->t, err, errlen);
	if (rc == 0)
		latency_read(&tr->lat, s->tr.p.recv_json);
	return rc;
}

/* Run one trial of test at spec and tell the hook: 0, or the trial's error.
 * The caller releases tr->t. */
static int trial(struct txs_rfc2544 *s, enum txs_rfc2544_test test, const char *phase, unsigned run,
		 const struct spec *sp, double loss_pct, struct txs_rfc2544_trial *tr, char *err, size_t errlen)
{
	memset(tr, 0, sizeof(*tr));
	int rc = run_trial(s, sp, tr, err, errlen);
	if (rc < 0) {
		char m[256], sz[16];
		snprintf(m, sizeof(m), "%s", err);
		if (sp->size == TXS_RFC2544_IMIX)
			snprintf(sz, sizeof(sz), "imix");
		else
			snprintf(sz, sizeof(sz), "%u-byte", sp->size);
		snprintf(err, errlen, "trial %u (%s, %s, %s frames, %.0f frames/s%s): %s", s->index + 1,
			 txs_rfc2544_test_str(test), phase, sz, sp->rate, sp->rate > 0 ? "" : " = unlimited", m);
		return rc;
	}
	tr->index = ++s->index;
	s->res.trials = s->index;
	tr->test = test;
	tr->phase = phase;
	tr->size = sp->size;
	tr->run = run;
	tr->rate = sp->rate;
	tr->frames = sp->count;
	tr->seconds = sp->secs;
	tr->pass = txs_ndr_trial_pass(&tr->t, loss_pct, &tr->loss_pct);
	/* a sender that was not scheduled offered less than the rate: what passed
	 * says nothing of the rate asked for */
	if (sp->rate > 0 && !sp->count) {
		double offered = (double)(tr->t.sent + tr->t.sender_drops);
		tr->short_send = offered < floor(sp->rate * sp->secs) * (1 - s->c->precision);
		tr->pass &= !tr->short_send;
	}
	tr->size_index = s->size_index;
	tr->n_sizes = s->c->n_sizes;
	tr->elapsed_s = txs_mono_s() - s->t0;
	if (s->h && s->h->trial)
		s->h->trial(tr, s->h->arg);
	return 0;
}

/* ---- throughput -------------------------------------------------------------------- */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int probe(struct txs_rfc2544 *s, unsigned size, double *top, char *err, size_t errlen)
{
	enum txs_rfc2544_test test =
		s->c->tests & TXS_RFC2544_FRAME_LOSS ? TXS_RFC2544_FRAME_LOSS : TXS_RFC2544_BACK_TO_BACK;
	struct spec sp = { .size = size, .rate = 0,
			   .secs = s->c->search_s < PROBE_MAX_S ? s->c->search_s : PROBE_MAX_S };
	struct txs_rfc2544_trial tr;
	int rc = trial(s, test, "probe", 1, &sp, s->c->loss_pct, &tr, err, errlen);
	if (rc == 0)
		*top = floor(tr.t.sent_pps);
	txs_ndr_trial_release(&tr.t);
	return rc;
}

/* One search (run): the ndr step machine, short trials but at hi and the
 * confirmation (full length) */
static int search_once(struct txs_rfc2544 *s, struct txs_rfc2544_tput *tp, unsigned run, char *err, size_t errlen)
{
	const struct txs_rfc2544_conf *c = s->c;
	struct txs_ndr_search ns;
	if (txs_ndr_init(&ns, c->lo_fps, c->hi_fps, c->precision, c->max_trials) < 0) {
		snprintf(err, errlen, "bad search bounds");
		return -EINVAL;
	}
	double rate, last_sent = 0;
	enum txs_ndr_phase ph;
	while (txs_ndr_next(&ns, &rate, &ph)) {
		struct spec sp = { .size = tp->size, .rate = rate, .secs = c->search_s };
		if (ph == TXS_NDR_MEASURE && sp.secs > PROBE_MAX_S)
			sp.secs = PROBE_MAX_S;
		if (ph == TXS_NDR_HI || ph == TXS_NDR_CONFIRM)
			sp.secs = c->trial_s;
		struct txs_rfc2544_trial tr;
		int rc = trial(s, TXS_RFC2544_THROUGHPUT, txs_ndr_phase_str(ph), run, &sp, c->loss_pct, &tr, err, errlen);
		if (rc < 0)
			return rc;
		if (ph == TXS_NDR_MEASURE && tr.t.sent_pps > tp->top_fps)
			tp->top_fps = floor(tr.t.sent_pps);
		txs_ndr_report(&ns, tr.pass, tr.t.sent_pps);
		last_sent = tr.t.sent_pps;
		txs_ndr_trial_release(&tr.t);
	}
	double fps = ns.result;
	/* the sender fell short of the rate that passed: what passed is what it sent */
	if (ns.confirmed && fps > 0 && last_sent < fps * (1 - c->precision))
		fps = floor(last_sent);
	unsigned k = tp->n_runs++;
	tp->runs[k] = fps;
	tp->confirmed[k] = ns.confirmed;
	tp->trials[k] = ns.trials;
	tp->outcome[k] = txs_ndr_outcome_str(ns.outcome);
	if (c->hi_fps > 0 && !(tp->top_fps > 0))
		tp->top_fps = c->hi_fps;
	return 0;
}

static void tput_stats(struct txs_rfc2544_tput *tp)
{
	double v[TXS_RFC2544_MAX_REPEAT], sum = 0, sq = 0;
	unsigned n = tp->n_runs;
	if (!n)
		return;
	memcpy(v, tp->runs, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_dbl);
	tp->fps = n % 2 ? v[n / 2] : floor((v[n / 2 - 1] + v[n / 2]) / 2);
	tp->fps_min = v[0];
	tp->fps_max = v[n - 1];
	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	tp->fps_mean = sum / n;
	for (unsigned i = 0; i < n; i++)
		sq += (v[i] - tp->fps_mean) * (v[i] - tp->fps_mean);
	tp->fps_stdev = n > 1 ? sqrt(sq / (n - 1)) : 0;
}

static int throughput(struct txs_rfc2544 *s, struct txs_rfc2544_tput *tp, char *err, size_t errlen)
{
	for (unsigned r = 1; r <= s->c->repeat; r++) {
		int rc = search_once(s, tp, r, err, errlen);
		tput_stats(tp);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- latency at the throughput rate ------------------------------------------------ */

static int latency(struct txs_rfc2544 *s, struct txs_rfc2544_tput *tp, char *err, size_t errlen)
{
	const struct txs_rfc2544_conf *c = s->c;
	if (!(tp->fps >= 1))
		return 0; /* nothing passed: no rate to measure at */
	for (unsigned r = 1; r <= c->latency_trials; r++) {
		struct spec sp = { .size = tp->size, .rate = tp->fps, .secs = c->trial_s };
		struct txs_rfc2544_trial tr;
		int rc = trial(s, TXS_RFC2544_LATENCY, "latency", r, &sp, c->loss_pct, &tr, err, errlen);
		if (rc < 0)
			return rc;
		if (tr.lat.have && tp->n_lat < TXS_RFC2544_MAX_LAT)
			tp->lat_trials[tp->n_lat++] = tr.lat;
		txs_ndr_trial_release(&tr.t);
	}
	/* min of mins, max of maxes, the RFC's average of the trials' means, and each
	 * percentile's mean over the trials */
	struct txs_rfc2544_latency *l = &tp->lat;
	memset(l, 0, sizeof(*l));
	if (!tp->n_lat)
		return 0;
	l->min = INFINITY;
	for (unsigned i = 0; i < tp->n_lat; i++) {
		const struct txs_rfc2544_latency *x = &tp->lat_trials[i];
		l->count += x->count;
		l->min = fmin(l->min, x->min);
		l->max = fmax(l->max, x->max);
		l->mean += x->mean / tp->n_lat;
		l->p50 += x->p50 / tp->n_lat;
		l->p90 += x->p90 / tp->n_lat;
		l->p99 += x->p99 / tp->n_lat;
		l->p999 += x->p999 / tp->n_lat;
	}
	l->have = true;
	tp->have_lat = true;
	return 0;
}

/* ---- frame loss rate ----------------------------------------------------------------------- */

static int frame_loss(struct txs_rfc2544 *s, struct txs_rfc2544_floss *fl, double top, char *err, size_t errlen)
{
	struct txs_rfc2544_fl st;
	txs_rfc2544_fl_init(&st, top);
	fl->top_fps = top;
	double rate, pct;
	while (txs_rfc2544_fl_next(&st, &rate, &pct)) {
		struct spec sp = { .size = fl->size, .rate = rate, .secs = s->c->trial_s };
		struct txs_rfc2544_trial tr;
		int rc = trial(s, TXS_RFC2544_FRAME_LOSS, "step", st.step + 1, &sp, s->c->loss_pct, &tr, err, errlen);
		if (rc < 0)
			return rc;
		uint64_t lost = tr.t.lost + tr.t.sender_drops;
		struct txs_rfc2544_fl_point *p = &fl->points[fl->n_points++];
		p->offered_fps = rate;
		p->pct_of_top = pct;
		p->sent_fps = tr.t.sent_pps;
		p->loss_pct = tr.loss_pct;
		p->sent = tr.t.sent + tr.t.sender_drops;
		p->lost = lost;
		txs_rfc2544_fl_report(&st, lost);
		txs_ndr_trial_release(&tr.t);
	}
	return 0;
}

/* ---- back-to-back ------------------------------------------------------------------------ */

static int b2b_search(struct txs_rfc2544 *s, struct txs_rfc2544_b2b *bb, unsigned run, double top, double prev,
		      char *err, size_t errlen)
{
	const struct txs_rfc2544_conf *c = s->c;
	double max = c->b2b_max ? (double)c->b2b_max : floor(top * B2B_DEFAULT_S);
	if (max < 2)
		max = 2;
	double lo = 1, hi = max;
	if (prev >= 1) { /* the searches after the first: around the one before */
		lo = fmax(1, floor(prev / 2));
		hi = fmin(max, floor(prev * 2) + 1);
		if (hi <= lo)
			hi = lo + 1;
	}
	struct txs_ndr_search ns;
	if (txs_ndr_init(&ns, lo, hi, c->b2b_precision, c->max_trials) < 0) {
		snprintf(err, errlen, "bad burst bounds %g..%g", lo, hi);
		return -EINVAL;
	}
	double n, last_pass_n = 0, last_pass_fps = 0;
	enum txs_ndr_phase ph;
	while (txs_ndr_next(&ns, &n, &ph)) {
		double secs = top >= 1 ? n / top * 2 + 2 : 10;
		struct spec sp = { .size = bb->size, .rate = 0, .secs = secs, .count = (uint64_t)n };
		struct txs_rfc2544_trial tr;
		int rc = trial(s, TXS_RFC2544_BACK_TO_BACK, txs_ndr_phase_str(ph), run, &sp, 0, &tr, err, errlen);
		if (rc < 0)
			return rc;
		/* a burst must go out whole: one the sender could not send is no verdict on the device */
		bool pass = tr.pass && tr.t.sent == (uint64_t)n;
		if (pass) {
			last_pass_n = n;
			last_pass_fps = tr.t.sent_pps;
		}
		txs_ndr_report(&ns, pass, tr.t.sent_pps);
		txs_ndr_trial_release(&tr.t);
	}
	struct txs_rfc2544_b2b_trial *bt = &bb->trials[bb->n_trials++];
	bt->frames = (uint64_t)ns.result;
	/* the rate of the burst that showed the result: the last one that passed
	 * (the confirmation at the result, or the highest pass when the budget ran out) */
	bt->burst_fps = ns.result > 0 && last_pass_n > 0 ? last_pass_fps : 0;
	bt->steps = ns.trials;
	bt->confirmed = ns.confirmed;
	return 0;
}

static void b2b_stats(struct txs_rfc2544_b2b *bb)
{
	if (!bb->n_trials)
		return;
	double sum = 0, fsum = 0;
	unsigned nf = 0;
	bb->frames_min = INFINITY;
	bb->frames_max = 0;
	for (unsigned i = 0; i < bb->n_trials; i++) {
		double f = (double)bb->trials[i].frames;
		sum += f;
		if (bb->trials[i].burst_fps > 0) { /* a search that found no burst has no rate */
			fsum += bb->trials[i].burst_fps;
			nf++;
		}
		bb->frames_min = fmin(bb->frames_min, f);
		bb->frames_max = fmax(bb->frames_max, f);
	}
	bb->frames = sum / bb->n_trials;
	bb->burst_fps = nf ? fsum / nf : 0;
	bb->buffer_s = bb->burst_fps > 0 ? bb->frames / bb->burst_fps : 0;
}

static int back_to_back(struct txs_rfc2544 *s, struct txs_rfc2544_b2b *bb, double top, char *err, size_t errlen)
{
	double prev = 0;
	for (unsigned r = 1; r <= s->c->b2b_trials; r++) {
		int rc = b2b_search(s, bb, r, top, prev, err, errlen);
		b2b_stats(bb);
		if (rc < 0)
			return rc;
		prev = (double)bb->trials[bb->n_trials - 1].frames;
	}
	return 0;
}

/* ---- the session ----------------------------------------------------------------------------- */

int txs_rfc2544_open(struct txs_rfc2544 **out, const struct txs_rfc2544_conf *c, char *err, size_t errlen)
{
	*out = NULL;
	int rc = txs_rfc2544_conf_check(c, err, errlen);
	if (rc < 0)
		return rc;
	struct txs_rfc2544 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	struct txs_addr a;
	txs_addr_parse(&a, c->dest);
	s->family = a.family;
	if (c->remote)
		s->remote = (struct txs_trial_remote){ .begin = c->remote->begin, .end = c->remote->end,
						       .arg = c->remote->arg };
	struct txs_trial_conf tc = { .exe = c->exe, .dest = c->dest, .port = c->port, .dev = c->dev,
				     .recv_dev = c->recv_dev, .bind = c->bind, .send_netns = c->send_netns,
				     .recv_netns = c->recv_netns, .recv_args = c->recv_args, .threads = c->threads,
				     .cpus = c->cpus, .n_cpus = c->n_cpus, .remote = c->remote ? &s->remote : NULL,
				     .stop = c->stop };
	if ((rc = txs_trial_open(&s->tr, &tc, "rfc2544", err, errlen)) < 0) {
		free(s);
		return rc;
	}
	s->tr_open = true;
	/* the sender checks its options and opens its device (every size) before any trial */
	for (unsigned i = 0; i < c->n_sizes; i++) {
		struct spec sp = { .size = c->sizes[i], .rate = c->lo_fps, .secs = c->trial_s };
		char len[16];
		struct txs_trial_spec ts;
		trial_spec(s, &sp, &ts, len, sizeof(len));
		if ((rc = txs_trial_check_sender(&s->tr, &ts, err, errlen)) < 0) {
			txs_rfc2544_close(s);
			return rc;
		}
	}
	s->res.tests = c->tests;
	s->res.family = s->family;
	*out = s;
	return 0;
}

int txs_rfc2544_run(struct txs_rfc2544 *s, const struct txs_rfc2544_hooks *h, char *err, size_t errlen)
{
	const struct txs_rfc2544_conf *c = s->c;
	struct txs_rfc2544_result *r = &s->res;
	s->h = h;
	s->t0 = txs_mono_s();
	int rc = 0;
	for (unsigned i = 0; i < c->n_sizes && rc == 0; i++) {
		s->size_index = i;
		unsigned size = c->sizes[i], p, w;
		r->n_sizes = i + 1;
		struct txs_rfc2544_tput *tp = &r->tput[i];
		tp->size = r->floss[i].size = r->b2b[i].size = size;
		tp->frame_bytes = txs_rfc2544_frame_bytes(size, s->family);
		if (size != TXS_RFC2544_IMIX && txs_rfc2544_payload(size, s->family, &p, &w) == 0)
			tp->payload = p;
		double top = 0;
		if (c->tests & (TXS_RFC2544_THROUGHPUT | TXS_RFC2544_LATENCY)) {
			rc = throughput(s, tp, err, errlen);
			top = tp->top_fps;
		}
		if (rc == 0 && (c->tests & TXS_RFC2544_LATENCY))
			rc = latency(s, tp, err, errlen);
		if (rc == 0 && (c->tests & (TXS_RFC2544_FRAME_LOSS | TXS_RFC2544_BACK_TO_BACK)) && !(top >= 1))
			rc = probe(s, size, &top, err, errlen);
		if (rc == 0 && (c->tests & TXS_RFC2544_FRAME_LOSS))
			rc = frame_loss(s, &r->floss[i], top, err, errlen);
		if (rc == 0 && (c->tests & TXS_RFC2544_BACK_TO_BACK))
			rc = back_to_back(s, &r->b2b[i], top, err, errlen);
	}
	r->seconds = txs_mono_s() - s->t0;
	r->complete = rc == 0;
	return rc;
}

const struct txs_rfc2544_result *txs_rfc2544_result(const struct txs_rfc2544 *s)
{
	return &s->res;
}

void txs_rfc2544_close(struct txs_rfc2544 *s)
{
	if (!s)
		return;
	if (s->tr_open)
		txs_trial_close(&s->tr);
	free(s);
}
