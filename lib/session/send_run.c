/* SPDX-License-Identifier: MIT */
/* A send session's run: the engine started, polled every 10 ms (the stop
 * hook, the poll and interval callbacks, the GSO note), waited for, and
 * the result read once at the end. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "common/err.h"
#include "send_priv.h"

/* Where the datagrams left as GSO calls (udp:): the one note that says the
 * kernel refused GSO, once, when a socket fell back. */
static void gso_watch(struct txs_send *s)
{
	if (s->gso_said || !s->dev->kernel_ip)
		return;
	struct txs_link_counters t;
	send_udp_gso_sum(s->dev, &t);
	if (!t.gso_fallback)
		return;
	s->gso_said = true;
	txs_say(s->p.c.on_note, s->p.c.user, "--dev %s: the kernel refused UDP GSO on this route (%s): one datagram per message from "
			   "here on, the refused ones included", s->dev->spec, strerror(t.gso_err ? t.gso_err : EIO));
}

static void interval(struct txs_send *s, const struct txs_send_hooks *h, double t0, double t1, bool last)
{
	unsigned n = s->p.nthreads;
	bool any = send_rows_sub(s->delta, s->cur, s->prev, n);
	send_rows_sub(s->dl, s->links, s->plinks, s->dev->n_links);
	struct txs_send_interval iv = { .start = t0, .end = t1, .n_threads = n, .n_links = s->dev->n_links,
					.threads = s->delta, .links = s->dl };
	if (!last || any)
		h->interval(h->user, &iv);
	memcpy(s->prev, s->cur, sizeof(*s->cur) * n);
	memcpy(s->plinks, s->links, sizeof(s->links));
}

static void poll_loop(struct txs_send *s, const struct txs_send_hooks *h, double *last)
{
	double every = s->p.c.interval;
	while (!txs_engine_done(s->eng)) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (h->stop && h->stop(h->user))
			txs_engine_stop(s->eng);
		double now = txs_engine_read(s->eng, s->erows);
		send_read_threads(s, s->cur);
		gso_watch(s);
		if (h->poll) {
			send_read_links(s, s->links);
			h->poll(h->user, &(struct txs_send_tick){ now, s->cur, s->links });
		}
		if (h->interval && every > 0 && now - *last >= every) {
			send_read_links(s, s->links);
			interval(s, h, *last, now, false);
			*last = now;
		}
	}
}

/* The result: the rows at the end, the device's error counts, the checks. */
static void result(struct txs_send *s, double secs, int rc)
{
	struct txs_send_result *r = &s->res;
	*r = (struct txs_send_result){ .seconds = secs, .rc = rc, .n_threads = s->p.nthreads,
				       .n_links = s->dev->n_links, .threads = s->cur, .links = s->links,
				       .datagrams = s->erows, .session = s };
	r->sum = txs_stat_rows_sum(s->cur, s->p.nthreads);
	for (unsigned l = 0; l < s->dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(s->dev, l, &c);
		r->verify_errors += c.verify_err;
		r->icmp_errors += c.icmp_err;
		if (c.last_err)
			r->last_err = c.last_err;
	}
	s->have_prof = s->p.c.profile && txs_engine_prof(s->eng, &s->prof) == 0;
	s->have_tsc = txs_engine_ts_check(s->eng, &s->tsc) == 0;
	s->due_unsent = txs_engine_due_unsent(s->eng);
	r->counts_bad = send_check_counts(s, NULL, "");
	bool nolink = rc == -ENETDOWN && s->mon && !txs_linkmon_up_mask(s->mon);
	/* a run that ended on an error, or sent nothing, did not do what was
	 * asked (rc says why) */
	r->failed = r->counts_bad || (rc < 0 && !nolink) ||
		    (!nolink && rc >= 0 && r->sum.packets == 0 && r->sum.drops + r->sum.errors);
}

int txs_send_run(struct txs_send *s, const struct txs_send_hooks *hooks, const struct txs_send_result **res)
{
	static const struct txs_send_hooks none;
	const struct txs_send_hooks *h = hooks ? hooks : &none;
	*res = NULL;
	int rc = txs_engine_start(s->eng);
	double last = 0;
	if (rc == 0)
		poll_loop(s, h, &last);
	int wrc = txs_engine_wait(s->eng);
	if (!rc)
		rc = wrc;
	double secs = txs_engine_read(s->eng, s->erows);
	send_read_threads(s, s->cur);
	send_read_links(s, s->links);
	gso_watch(s);
	/* the last, partial interval: always, so intervals add up to the total */
	if (h->interval && s->p.c.interval > 0)
		interval(s, h, last, secs, true);
	result(s, secs, rc);
	*res = &s->res;
	return rc;
}
