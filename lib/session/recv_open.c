/* SPDX-License-Identifier: MIT */
/* The receive session: open (input, cores, snapshots), accessors, close. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "recv_priv.h"

/* The sender summary before the run: an offline input's is read now (the
 * run can stop once all arrived) and again during the run or at its end
 * (recv_run.c); a live input takes only a file written after it started. */
static int expect_init(struct txs_recv *s, char *err, size_t errlen)
{
	const struct txs_recv_conf *c = &s->conf;
	s->exp = calloc(1, sizeof(*s->exp));
	if (!s->exp)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	if (c->sender_summary && !s->plan.is_pcap) {
		s->summary_not_before = txs_now_real_ns();
	} else if (c->sender_summary) {
		/* any failure is a bad value of the option: -EINVAL */
		if (access(c->sender_summary, F_OK) == 0 &&
		    txs_recv_summary_read(c->sender_summary, 0, s->exp, &s->open_text, &s->open_len, err, errlen) < 0)
			return -EINVAL;
	} else if (c->expect) {
		s->exp->have_total = true;
		s->exp->total = c->expect;
	}
	return 0;
}

static int input_open(struct txs_recv *s, char *err, size_t errlen)
{
	const struct txs_recv_conf *c = &s->conf;
	const struct txs_recv_plan *p = &s->plan;
	s->ic = (struct txs_rx_input_conf){
		.n_queues = p->threads,
		.family = p->family,
		.have_bind = p->have_bind,
		.bind = p->bind,
		.port = p->port ? p->port : TXS_RECV_PORT_DEFAULT,
		.port_hi = p->port_hi,
		.rcvbuf = c->rcvbuf ? (int)c->rcvbuf : (int)TXS_RECV_RCVBUF_DEFAULT,
		.reuseport = c->reuseport,
		.batch = c->batch,
		.rx_ts = p->rx_ts,
	};
	memcpy(s->ic.hw_ifname, p->hw_ifname, sizeof(s->ic.hw_ifname));
	/* the soft open-file limit up to what a port range needs (the check
	 * saw that the hard limit allows it) */
	unsigned long long need = txs_recv_nofile_need(p), lim;
	if (need && txs_nofile_raise(need, &lim) < 0)
		return txs_fail(err, errlen, -EMFILE,
				"bad value for --port: '%s': a socket per port and thread needs %llu open files, "
				"the limit is %llu (ulimit -n)", c->port, need, lim);
	char ierr[320];
	int rc = txs_rx_input_open(&s->in, p->dev, &s->ic, ierr, sizeof(ierr));
	if (rc < 0) {
		s->in = NULL;
		/* the udp input's refusals of hardware stamps name the option */
		static const char hw_err[] = "udp: hardware receive timestamps: ";
		if (s->ic.rx_ts == TXS_RX_TS_HARDWARE && strncmp(ierr, hw_err, sizeof(hw_err) - 1) == 0)
			return txs_fail(err, errlen, rc, "--rx-timestamps %s: %s", c->rx_ts, ierr + sizeof(hw_err) - 1);
		return txs_fail(err, errlen, rc, "--dev %s", ierr);
	}
	return 0;
}

static int cores_create(struct txs_recv *s, char *err, size_t errlen)
{
	const struct txs_recv_conf *c = &s->conf;
	const struct txs_recv_plan *p = &s->plan;
	struct txs_rx_conf rc_conf = {
		.window = c->window,
		.max_flows = c->max_flows,
		.n_links = s->in->n_links,
		.verify_fill = c->verify,
		.payload = p->payload,
		.port = s->in->raw ? (p->is_pcap ? p->port : s->ic.port) : 0,
		.port_hi = s->in->raw ? p->port_hi : 0,
		.family = s->in->raw ? p->family : 0,
		.outage_min_ns = (uint64_t)(c->outage_min * 1e9),
		.clock_correct = c->clock_offset_set,
		.clock_offset_ns = c->clock_offset_ns,
	};
	if (s->in->raw && p->have_bind)
		rc_conf.dst = p->bind;
	s->n = p->threads;
	s->t = aligned_alloc(TXS_CACHE_LINE, sizeof(*s->t) * s->n);
	s->cores = calloc(s->n, sizeof(*s->cores));
	if (c->snaps)
		s->snaps = calloc(s->n, sizeof(*s->snaps));
	if (!s->t || !s->cores || (c->snaps && !s->snaps))
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	memset(s->t, 0, sizeof(*s->t) * s->n);
	for (unsigned i = 0; i < s->n; i++) {
		int rc = txs_rx_core_create(&s->cores[i], &rc_conf);
		if (rc < 0)
			return txs_fail(err, errlen, rc, "analysis state: %s", txs_strerror(rc));
		if (s->snaps && txs_rx_snap_create(&s->snaps[i], rc_conf.max_flows) < 0)
			return txs_fail(err, errlen, -ENOMEM, "out of memory");
		s->cpus[i] = c->cpu[i];
		s->t[i] = (struct txs_recv_thread){ .in = s->in, .core = s->cores[i], .snap = s->snaps ? s->snaps[i] : NULL,
						    .stop = &s->stop, .q = i, .cpu = c->cpu[i] };
	}
	return 0;
}

TXS_API int txs_recv_open(struct txs_recv **out, const struct txs_recv_conf *c, char *err, size_t errlen)
{
	*out = NULL;
	struct txs_recv *s = calloc(1, sizeof(*s));
	if (!s)
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	s->conf = *c;
	int rc = txs_recv_plan_make(&s->plan, c, err, errlen);
	if (!rc)
		rc = expect_init(s, err, errlen);
	if (!rc)
		rc = input_open(s, err, errlen);
	if (!rc)
		rc = cores_create(s, err, errlen);
	if (rc) {
		txs_recv_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

TXS_API void txs_recv_close(struct txs_recv *s)
{
	if (!s)
		return;
	if (s->res)
		txs_rx_result_free(s->res->rx);
	free(s->res);
	for (unsigned i = 0; s->snaps && i < s->n; i++)
		txs_rx_snap_destroy(s->snaps[i]);
	free(s->snaps);
	for (unsigned i = 0; s->cores && i < s->n; i++)
		txs_rx_core_destroy(s->cores[i]);
	free(s->cores);
	free(s->t);
	free(s->exp);
	free(s->open_text);
	txs_rx_input_close(s->in);
	free(s);
}

TXS_API void txs_recv_stop(struct txs_recv *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
}

TXS_API const struct txs_rx_input *txs_recv_input(const struct txs_recv *s)
{
	return s->in;
}

TXS_API unsigned txs_recv_threads(const struct txs_recv *s)
{
	return s->n;
}

TXS_API struct txs_rx_core *const *txs_recv_cores(const struct txs_recv *s)
{
	return s->cores;
}

TXS_API const int *txs_recv_cpus(const struct txs_recv *s)
{
	return s->cpus;
}

TXS_API struct txs_rx_snap *const *txs_recv_snaps(const struct txs_recv *s)
{
	return s->snaps;
}

TXS_API struct txs_recv_result *txs_recv_result(struct txs_recv *s)
{
	return s->res;
}
