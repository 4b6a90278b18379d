/* SPDX-License-Identifier: MIT */
/* The receive session's run: one thread per queue, the controlling loop
 * (intervals, stop conditions, the sender summary), the merge. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common/err.h"
#include "recv_priv.h"

#define POLL_MS 50
#define LOOP_NS 10000000ull       /* the controlling loop's period */
#define SUMMARY_RETRY_NS 100000000ull

void *txs_recv_thread_main(void *arg)
{
	struct txs_recv_thread *t = arg;
	int rc = txs_pin_self(t->cpu);
	while (rc == 0 && !__atomic_load_n(t->stop, __ATOMIC_RELAXED)) {
		int n = txs_rx_input_poll(t->in, t->q, t->core, POLL_MS);
		if (t->snap)
			txs_rx_core_publish(t->core, t->snap);
		if (n > 0) {
			uint64_t now = txs_now_mono_ns();
			if (!__atomic_load_n(&t->first_ns, __ATOMIC_RELAXED))
				__atomic_store_n(&t->first_ns, now, __ATOMIC_RELAXED);
			__atomic_store_n(&t->last_ns, now, __ATOMIC_RELAXED);
		} else if (n == -ENODATA) {
			break;
		} else if (n < 0) {
			rc = n;
		}
	}
	t->error = rc;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The run's state on the controlling thread. */
struct run {
	struct txs_recv *s;
	const struct txs_recv_hooks *h;
	unsigned started;
	uint64_t t0;
	double last_iv;
	uint64_t last_try;
	bool have_summary; /* the sender's summary was read during the run (summary_try) */
	struct txs_rx_live *prev, *delta;
	int ret;
};

static void live_sub(struct txs_rx_live *d, const struct txs_rx_live *a, const struct txs_rx_live *b)
{
	d->received = a->received - b->received;
	d->bytes = a->bytes - b->bytes;
	d->unique = a->unique - b->unique;
	d->duplicates = a->duplicates - b->duplicates;
	d->reordered = a->reordered - b->reordered;
	d->late = a->late - b->late;
	d->gaps = a->gaps - b->gaps;
	d->malformed = a->malformed - b->malformed;
	d->ignored = a->ignored - b->ignored;
	d->outages = a->outages - b->outages;
	d->outage_ns = a->outage_ns - b->outage_ns;
}

static void live_add(struct txs_rx_live *d, const struct txs_rx_live *a)
{
	d->received += a->received;
	d->bytes += a->bytes;
	d->unique += a->unique;
	d->duplicates += a->duplicates;
	d->reordered += a->reordered;
	d->late += a->late;
	d->gaps += a->gaps;
	d->malformed += a->malformed;
	d->ignored += a->ignored;
	d->outages += a->outages;
	d->outage_ns += a->outage_ns;
}

static void interval(struct run *r, double t1)
{
	struct txs_recv_interval iv = { .start = r->last_iv, .end = t1, .n = r->started, .cpu = r->s->cpus,
					.thread = r->delta };
	for (unsigned i = 0; i < r->started; i++) {
		struct txs_rx_live cur;
		txs_rx_core_live(r->s->cores[i], &cur);
		live_sub(&r->delta[i], &cur, &r->prev[i]);
		r->prev[i] = cur;
		live_add(&iv.sum, &r->delta[i]);
	}
	if (r->h->interval)
		r->h->interval(r->h->user, &iv);
	r->last_iv = t1;
}

static int start_threads(struct run *r)
{
	struct txs_recv *s = r->s;
	for (; r->started < s->n; r->started++) {
		struct txs_recv_thread *t = &s->t[r->started];
		int e = pthread_create(&t->th, NULL, txs_recv_thread_main, t);
		if (e) {
			txs_say(r->h->msg, r->h->user, "cannot start thread: %s", strerror(e));
			txs_recv_stop(s);
			return -e;
		}
		t->started = true;
	}
	return 0;
}

/* Does the run take a sender's summary (a file, or the hook's)? */
static bool summary_wanted(const struct run *r)
{
	return r->s->conf.sender_summary || r->h->sender_summary;
}

/* The sender's summary as it stands, from the file or the hook: 0 (s->exp
 * set, hooks.summary told), or -errno with err. */
static int summary_get(struct run *r, char *err, size_t errlen)
{
	struct txs_recv *s = r->s;
	char *text = NULL;
	size_t len = 0;
	int rc;
	if (s->conf.sender_summary) {
		rc = txs_recv_summary_read(s->conf.sender_summary, s->summary_not_before, s->exp, &text, &len, err,
					   errlen);
	} else if ((rc = r->h->sender_summary(r->h->user, &text, &len)) < 0) {
		txs_fail(err, errlen, rc, "the sender's summary did not come");
	} else if ((rc = txs_recv_summary_parse(s->exp, text, len)) < 0) {
		txs_fail(err, errlen, -EINVAL, "the sender's summary is no valid txscale send summary");
	}
	if (rc == 0 && r->h->summary)
		r->h->summary(r->h->user, text, len);
	free(text);
	return rc;
}

/* The sender's summary, tried at most every 100 ms until it was read once
 * (a read sets s->exp: the run can stop once every datagram arrived). */
static void summary_try(struct run *r, uint64_t now)
{
	if (!summary_wanted(r) || r->have_summary || now - r->last_try < SUMMARY_RETRY_NS)
		return;
	r->last_try = now;
	r->have_summary = summary_get(r, NULL, 0) == 0;
}

/* Idle: stop, unless the sender has not written its summary yet (a loaded
 * host: it may still be sending, or finishing): then wait for it, at most
 * TXS_RECV_SUMMARY_WAIT_S beyond the idle point (the time limit bounds it
 * too). */
static bool idle_stop(struct run *r, uint64_t now, double idle_s)
{
	struct txs_recv *s = r->s;
	if (!summary_wanted(r) || s->exp->have_total || idle_s >= s->conf.idle + TXS_RECV_SUMMARY_WAIT_S)
		return true;
	summary_try(r, now);
	return r->have_summary;
}

/* One pass of the controlling loop: true when the run is over. */
static bool loop_once(struct run *r)
{
	struct txs_recv *s = r->s;
	uint64_t now = txs_now_mono_ns();
	double el = (double)(now - r->t0) / 1e9;
	unsigned done = 0;
	uint64_t last = 0, uniq = 0;
	for (unsigned i = 0; i < r->started; i++) {
		done += __atomic_load_n(&s->t[i].done, __ATOMIC_ACQUIRE) ? 1 : 0;
		uint64_t l = __atomic_load_n(&s->t[i].last_ns, __ATOMIC_RELAXED);
		if (l > last)
			last = l;
		struct txs_rx_live lv;
		txs_rx_core_live(s->cores[i], &lv);
		/* relaxed reads of counters the thread bumps one after the
		 * other: a duplicate may be seen before its received, so
		 * clamp (a wrap here would end the run at once) */
		uint64_t dl = lv.duplicates + lv.late;
		uniq += lv.received > dl ? lv.received - dl : 0;
	}
	if (r->h->tick)
		r->h->tick(r->h->user, el);
	if (s->conf.interval > 0 && el - r->last_iv >= s->conf.interval)
		interval(r, el);
	if (done == r->started)
		return true;
	if (s->plan.time > 0 && el >= s->plan.time)
		return true;
	if (s->conf.idle > 0) {
		uint64_t ref = last ? last : s->plan.time == 0 ? r->t0 : 0;
		if (ref && now > ref && (double)(now - ref) / 1e9 >= s->conf.idle && idle_stop(r, now, (double)(now - ref) / 1e9))
			return true;
	}
	if (last) /* once datagrams arrive: the run stops when all did, not --idle later */
		summary_try(r, now);
	return s->exp->have_total && uniq >= s->exp->total;
}

/* Stop and join the threads; an interface that went down or away fails
 * the run, named. */
static void join_threads(struct run *r)
{
	struct txs_recv *s = r->s;
	txs_recv_stop(s);
	bool link_failed = false;
	for (unsigned i = 0; i < r->started; i++) {
		pthread_join(s->t[i].th, NULL);
		if (s->t[i].error == -ENETDOWN || s->t[i].error == -ENODEV) {
			link_failed = true;
		} else if (s->t[i].error < 0) {
			txs_say(r->h->msg, r->h->user, "queue %u: %s", i, txs_strerror(s->t[i].error));
			r->ret = s->t[i].error;
		}
	}
	if (!s->in->offline) {
		char cerr[160];
		int crc = txs_rx_input_check(s->in, cerr, sizeof(cerr));
		if (crc < 0 || link_failed) {
			txs_say(r->h->msg, r->h->user, "--dev %s: %s", s->in->spec,
			    crc < 0 ? cerr : "an interface went down during the run (Network is down)");
			r->ret = crc < 0 ? crc : -ENETDOWN;
		}
	}
}

/* Most hardware stamps off our clock: the NIC's clock is not CLOCK_REALTIME. */
static void hw_skew_warning(struct run *r, const struct txs_rx_input_stats *is)
{
	uint64_t all = is->ts_hardware + is->ts_hw_skewed;
	if (!all || is->ts_hw_skewed * 2 <= all)
		return;
	char phc[32] = "";
	if (is->phc_index >= 0)
		snprintf(phc, sizeof(phc), " (/dev/ptp%d)", is->phc_index);
	txs_say(r->h->msg, r->h->user, "warning: %llu of %llu hardware receive timestamps were off our clock (by %+.6f s) and not used: the "
	       "NIC clock%s of %s is likely not synchronised to CLOCK_REALTIME (phc2sys; a PHC in PTP time, TAI, "
	       "runs 37 s ahead)", (unsigned long long)is->ts_hw_skewed, (unsigned long long)all,
	    is->hw_offset_ns / 1e9, phc, is->hw_ifname);
}

/* The sender summary once more, now that it is complete. */
static void summary_final(struct run *r)
{
	struct txs_recv *s = r->s;
	if (!summary_wanted(r) || r->have_summary)
		return;
	char err[512];
	int rc = summary_get(r, err, sizeof(err));
	if (rc == 0)
		return;
	txs_say(r->h->msg, r->h->user, "%s", err);
	txs_say(r->h->msg, r->h->user, "no exact loss: the sender summary could not be read");
	memset(s->exp, 0, sizeof(*s->exp));
	r->ret = rc;
}

static void result_fill(struct run *r, struct txs_recv_result *res, uint64_t t_end)
{
	struct txs_recv *s = r->s;
	uint64_t first = 0, last = 0;
	for (unsigned i = 0; i < r->started; i++) {
		if (s->t[i].first_ns && (!first || s->t[i].first_ns < first))
			first = s->t[i].first_ns;
		if (s->t[i].last_ns > last)
			last = s->t[i].last_ns;
	}
	res->in = s->in;
	res->seconds = (double)(t_end - r->t0) / 1e9;
	res->active = s->in->offline ? res->seconds : last > first ? (double)(last - first) / 1e9 : 0;
	for (unsigned l = 0; l < s->in->n_links && l < TXS_MAX_LINKS; l++)
		res->link_names[l] = s->in->link_names[l];
	if (s->in->raw && !s->in->offline) {
		res->n_if = s->in->n_links;
		for (unsigned l = 0; l < s->in->n_links; l++)
			res->if_names[l] = s->in->link_names[l];
	}
	res->n_threads = s->n;
	for (unsigned i = 0; i < s->n; i++) {
		res->thread[i].cpu = s->cpus[i];
		txs_rx_core_live(s->cores[i], &res->thread[i].live);
	}
	if (s->conf.clock_offset_set)
		txs_rx_result_set_clock(res->rx, s->conf.clock_offset_ns, 0, false, 0, "option");
}

static int run_loop(struct run *r)
{
	struct txs_recv *s = r->s;
	struct txs_rx_kstats kb;
	txs_rx_kstats_read(&kb, NULL);
	r->t0 = txs_now_mono_ns();
	r->ret = start_threads(r);
	if (r->ret == 0 && r->h->ready)
		r->h->ready(r->h->user);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED) && !(r->h->stop && r->h->stop(r->h->user))) {
		struct timespec ts = { 0, LOOP_NS };
		nanosleep(&ts, NULL);
		if (loop_once(r))
			break;
	}
	join_threads(r);
	uint64_t t_end = txs_now_mono_ns();
	double secs = (double)(t_end - r->t0) / 1e9;
	if (s->conf.interval > 0 && secs - r->last_iv > 0.05)
		interval(r, secs);
	struct txs_recv_result *res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	struct txs_rx_kstats ka;
	txs_rx_kstats_read(&ka, NULL);
	txs_rx_kstats_delta(&res->kd, &kb, &ka);
	txs_rx_input_stats(s->in, &res->is);
	hw_skew_warning(r, &res->is);
	summary_final(r);
	int rc = txs_rx_result_build(&res->rx, s->cores, s->n, s->exp->have_total ? s->exp : NULL);
	if (rc < 0) {
		txs_say(r->h->msg, r->h->user, "%s", txs_strerror(rc));
		free(res);
		return rc;
	}
	result_fill(r, res, t_end);
	s->res = res;
	return r->ret;
}

TXS_API int txs_recv_run(struct txs_recv *s, const struct txs_recv_hooks *hooks)
{
	static const struct txs_recv_hooks none;
	if (s->ran)
		return -EALREADY;
	s->ran = true;
	struct run r = { .s = s, .h = hooks ? hooks : &none };
	r.prev = calloc(s->n, sizeof(*r.prev));
	r.delta = calloc(s->n, sizeof(*r.delta));
	int rc = -ENOMEM;
	if (r.prev && r.delta) {
		if (s->open_text && r.h->summary)
			r.h->summary(r.h->user, s->open_text, s->open_len);
		rc = run_loop(&r);
	}
	free(r.prev);
	free(r.delta);
	return rc;
}
