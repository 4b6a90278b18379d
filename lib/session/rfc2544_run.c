/* SPDX-License-Identifier: MIT */
/* The RFC 2544 session (<txscale/session_rfc2544.h>, docs/rfc2544.md): its
 * trials (a `txscale send` into a `txscale recv` or a server's receiver,
 * read back with <txscale/ndr.h>'s trial machinery) and the four tests
 * over them. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/jsonpath.h"
#include "common/proc.h"
#include <txscale/pkt.h>
#include <txscale/session_rfc2544.h>

#define READY_TIMEOUT_S 10.0 /* receiver: from start to bound socket */
#define RECV_IDLE "0.5"      /* receiver ends this long after the last packet */
#define RECV_EXTRA_S 3.0     /* receiver's own -t: trial + this */
#define CHILD_EXTRA_S 15.0   /* both children killed at trial + this */
#define PROBE_MAX_S 1.0      /* the unlimited probe of the sender's top rate */
#define B2B_DEFAULT_S 2.0    /* the longest burst by default: this long at the top rate (RFC 9004: >= 2 s) */

struct txs_rfc2544 {
	const struct txs_rfc2544_conf *c;
	struct txs_paths p;
	int family;
	const char *recv_argv[32];
	unsigned recv_argc;
	char recv_buf[1024];
	char cpus[TXS_MAX_CORES * 8];
	int recv_cpu;
	const struct txs_rfc2544_hooks *h;
	double t0;
	unsigned index, size_index;
	double last_end; /* when the last trial's children ended (txs_mono_s), 0: none yet */
	struct txs_rfc2544_result res;
};

/* What one trial sends. */
struct spec {
	unsigned size;
	double rate;     /* frames/s, 0 = unlimited */
	double secs;     /* sending time (a burst: its bound) */
	uint64_t count;  /* frames, 0 = as many as secs allow */
};

static void size_arg(struct txs_args *a, const struct txs_rfc2544 *s, unsigned size)
{
	unsigned p, w;
	if (size == TXS_RFC2544_IMIX) {
		txs_arg(a, "imix");
		return;
	}
	txs_rfc2544_payload(size, s->family, &p, &w);
	txs_arg(a, txs_arg_fmt(a, "%.0f", p));
}

static void sender_args(const struct txs_rfc2544 *s, struct txs_args *a, const struct spec *sp, bool check)
{
	const struct txs_rfc2544_conf *c = s->c;
	txs_arg_prefix(a, c->send_netns, c->exe);
	txs_arg(a, "send");
	txs_arg(a, "--dev");
	txs_arg(a, c->dev);
	txs_arg(a, "-p");
	txs_arg(a, txs_arg_fmt(a, "%.0f", c->port));
	txs_arg(a, "-l");
	size_arg(a, s, sp->size);
	txs_arg(a, "-b");
	txs_arg(a, txs_arg_fmt(a, "%.0f", sp->rate));
	txs_arg(a, "-t");
	txs_arg(a, txs_arg_fmt(a, "%.3f", sp->secs));
	if (sp->count) {
		txs_arg(a, "-n");
		txs_arg(a, txs_arg_fmt(a, "%.0f", (double)sp->count));
	}
	txs_arg(a, "-J");
	txs_arg(a, "-i");
	txs_arg(a, "0");
	txs_arg(a, "--summary-file");
	txs_arg(a, s->p.send_json);
	if (c->threads) {
		txs_arg(a, "-P");
		txs_arg(a, txs_arg_fmt(a, "%.0f", c->threads));
	}
	if (c->n_cpus) {
		txs_arg(a, "-A");
		txs_arg(a, s->cpus);
	}
	if (c->bind) {
		txs_arg(a, "-B");
		txs_arg(a, c->bind);
	}
	if (check)
		txs_arg(a, "--dry-run");
	txs_arg(a, c->dest);
}

static void receiver_args(const struct txs_rfc2544 *s, struct txs_args *a, double secs, int ready_fd)
{
	const struct txs_rfc2544_conf *c = s->c;
	txs_arg_prefix(a, c->recv_netns, c->exe);
	txs_arg(a, "recv");
	txs_arg(a, "--dev");
	txs_arg(a, c->recv_dev);
	txs_arg(a, "-B");
	txs_arg(a, c->dest);
	txs_arg(a, "-p");
	txs_arg(a, txs_arg_fmt(a, "%.0f", c->port));
	txs_arg(a, "-J");
	txs_arg(a, "-i");
	txs_arg(a, "0");
	txs_arg(a, "--idle");
	txs_arg(a, RECV_IDLE);
	txs_arg(a, "-t");
	txs_arg(a, txs_arg_fmt(a, "%.3f", secs + RECV_EXTRA_S));
	txs_arg(a, "--sender-summary");
	txs_arg(a, s->p.send_json);
	txs_arg(a, "--summary-file");
	txs_arg(a, s->p.recv_json);
	txs_arg(a, "--ready-fd");
	txs_arg(a, txs_arg_fmt(a, "%.0f", ready_fd));
	if (s->recv_cpu >= 0) {
		txs_arg(a, "-A");
		txs_arg(a, txs_arg_fmt(a, "%.0f", s->recv_cpu));
	}
	for (unsigned i = 0; i < s->recv_argc; i++)
		txs_arg(a, s->recv_argv[i]);
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

static pid_t start_receiver(struct txs_rfc2544 *s, double secs, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	struct txs_args ra = { .n = 0 };
	receiver_args(s, &ra, secs, pfd[1]);
	if (ra.overflow) {
		close(pfd[0]);
		close(pfd[1]);
		snprintf(err, errlen, "too many receiver arguments");
		return -E2BIG;
	}
	return txs_spawn_ready(&ra, s->p.recv_err, pfd, "the receiver", READY_TIMEOUT_S, s->c->stop, err, errlen);
}

/* One trial: 0 and tr->t filled (and its latency), -EINTR, other -errno with err. */
static int run_trial(struct txs_rfc2544 *s, const struct spec *sp, struct txs_rfc2544_trial *tr, char *err,
		     size_t errlen)
{
	const struct txs_rfc2544_conf *c = s->c;
	struct txs_child ch[2] = { { .pid = -1, .who = "the sender", .errpath = s->p.send_err, .fail_fast = true },
				   { .pid = -1, .who = "the receiver", .errpath = s->p.recv_err } };
	unlink(s->p.send_json);
	unlink(s->p.recv_json);
	/* the device rests between trials: its queues drain and its buffers refill
	 * (a receiver that counted every frame ends at once, before the DUT is idle) */
	while (s->last_end > 0 && txs_mono_s() < s->last_end + c->settle_s) {
		if (c->stop && *c->stop)
			return -EINTR;
		double left = s->last_end + c->settle_s - txs_mono_s();
		struct timespec ts = { 0, (long)(fmin(left, 0.05) * 1e9) };
		if (left > 0)
			nanosleep(&ts, NULL);
	}
	if (c->stop && *c->stop)
		return -EINTR;
	if (c->remote) {
		if (c->remote->begin(c->remote->arg, c->port, c->recv_dev, sp->secs, err, errlen) < 0)
			return -EIO;
	} else if ((ch[1].pid = start_receiver(s, sp->secs, err, errlen)) < 0) {
		return (int)ch[1].pid;
	}
	struct txs_args sa = { .n = 0 };
	sender_args(s, &sa, sp, false);
	ch[0].pid = sa.overflow ? -E2BIG : txs_spawn(&sa, s->p.send_err, -1);
	if (ch[0].pid < 0) {
		snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-ch[0].pid));
		if (ch[1].pid > 0)
			txs_stop_child(ch[1].pid, 0, NULL);
		return (int)ch[0].pid;
	}
	int rc = txs_wait_children(ch, 2, sp->secs + CHILD_EXTRA_S, c->stop, err, errlen);
	s->last_end = txs_mono_s();
	if (rc < 0)
		return rc;
	if (c->remote && c->remote->end(c->remote->arg, s->p.send_json, s->p.recv_json, err, errlen) < 0)
		return -EIO;
	rc = txs_ndr_trial_load(&tr->t, s->p.send_json, s->p.recv_json, err, errlen);
	if (rc == 0)
		latency_read(&tr->lat, s->p.recv_json);
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
	if (c->recv_args) {
		snprintf(s->recv_buf, sizeof(s->recv_buf), "%s", c->recv_args);
		char *save = NULL;
		for (char *t = strtok_r(s->recv_buf, " \t", &save); t && s->recv_argc < TXS_ARRAY_SIZE(s->recv_argv);
		     t = strtok_r(NULL, " \t", &save))
			s->recv_argv[s->recv_argc++] = t;
	}
	size_t off = 0;
	for (unsigned i = 0; i < c->n_cpus && off < sizeof(s->cpus); i++)
		off += (size_t)snprintf(s->cpus + off, sizeof(s->cpus) - off, "%s%d", i ? "," : "", c->cpus[i]);
	s->recv_cpu = c->remote ? -1 : txs_ndr_recv_cpu(c->cpus, c->n_cpus, c->threads, s->recv_argv, s->recv_argc);
	if ((rc = txs_paths_make(&s->p, "rfc2544")) < 0) {
		snprintf(err, errlen, "cannot make a temporary directory: %s", strerror(-rc));
		free(s);
		return rc;
	}
	/* the sender checks its options and opens its device (every size) before any trial */
	for (unsigned i = 0; i < c->n_sizes; i++) {
		struct spec sp = { .size = c->sizes[i], .rate = c->lo_fps, .secs = c->trial_s };
		struct txs_args sa = { .n = 0 };
		sender_args(s, &sa, &sp, true);
		pid_t pid = sa.overflow ? -E2BIG : txs_spawn(&sa, s->p.send_err, -1);
		if (pid < 0) {
			snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-pid));
			txs_rfc2544_close(s);
			return (int)pid;
		}
		int st = 0;
		bool ended = txs_stop_child(pid, READY_TIMEOUT_S, &st);
		if (!ended || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			txs_child_why(err, errlen, "sender check failed", ended ? &st : NULL, "did not finish", s->p.send_err);
			rc = ended && WIFEXITED(st) && WEXITSTATUS(st) == 2 ? -EINVAL : -EIO;
			txs_rfc2544_close(s);
			return rc;
		}
		unlink(s->p.send_json);
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
	txs_paths_remove(&s->p);
	free(s);
}
