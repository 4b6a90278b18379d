/* SPDX-License-Identifier: MIT */
/* The client end of a txscale control session (txscale/ctl_session.h):
 * the greeting, the clock exchange, one test's setup, ready, done and
 * results, while the caller's ops run our own sides. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/ctl_session.h>
#include "sess_priv.h"

struct txs_ctl_client {
	int fd;
	double timeout;
	char host[64];
	char local_s[INET6_ADDRSTRLEN];
	uint32_t test;
	bool clock; /* the server answers time messages (its hello said so) */
	bool clock_udp; /* ... and UDP clock probes with kernel stamps */
	bool clock_said; /* the fallback to the control connection was said */
	bool ports; /* the server chooses a data port for a setup.recv.port of 0 (its hello said so) */
	char waited[TXS_CTL_TEXT_MAX]; /* why the server made us wait before its hello ("": it did not) */
};

/* one test's run */
struct crun {
	struct txs_ctl_client *c;
	const struct txs_ctl_client_test *t;
	const struct txs_ctl_client_ops *ops;
	struct txs_ctl_client_result *res;
	char *err;
	size_t errlen;
	bool recv_on;   /* our receiver runs */
	bool ctl_err;   /* a control-channel failure while a side ran */
	/* the clock offset, server's clock minus ours, before the test (clk0)
	 * and after it (clk1; not with both directions, where results may cross it) */
	bool have_clk0, have_clk1, after_clock;
	struct txs_ctl_clock clk0, clk1;
};

static int fail(struct txs_ctl_client *c, int *why, int rc, struct txs_ctl_msg *m)
{
	*why = rc;
	txs_ctl_msg_free(m);
	close(c->fd);
	free(c);
	return 0;
}

static int hello(struct txs_ctl_client *c, const uint8_t *key, int *why, char *err, size_t errlen)
{
	struct txs_ctl_msg m;
	char e[256];
	int rc;
	/* a server that has a session ending first says so (wait), then greets or says busy: all of it
	 * within the one timeout, however many waits it says */
	double end = txs_mono_s() + c->timeout;
	for (;;) {
		double left = end - txs_mono_s();
		rc = txs_ctl_read(c->fd, &m, TXS_CTL_SMALL_MAX, txs_ctl_ms(left > 0.001 ? left : 0.001), e, sizeof(e));
		if (rc < 0 || m.type != TXS_CTL_WAIT)
			break;
		snprintf(c->waited, sizeof(c->waited), "%s", m.message);
		txs_ctl_msg_free(&m);
	}
	if (rc < 0) { /* not a txscale server, or one that said it would make us wait and then did not answer */
		if (c->waited[0])
			snprintf(err, errlen, "the server's greeting: %s (it had said it made us wait: %s)", e, c->waited);
		else
			snprintf(err, errlen, "the server's greeting: %s", e);
		return fail(c, why, -EPROTO, &m);
	}
	if (m.type == TXS_CTL_BUSY) {
		snprintf(err, errlen, "the server is busy: %s", m.message);
		return fail(c, why, -EBUSY, &m);
	}
	if (m.type == TXS_CTL_ERROR) {
		snprintf(err, errlen, "the server refused: %s", m.message);
		return fail(c, why, -EBUSY, &m);
	}
	if (m.type != TXS_CTL_HELLO) {
		snprintf(err, errlen, "the server's greeting: expected hello, got %s", txs_ctl_type_str(m.type));
		return fail(c, why, -EPROTO, &m);
	}
	if (m.auth) {
		if (!key) {
			snprintf(err, errlen, "the server asks for a shared secret: give --auth-file FILE");
			return fail(c, why, -EACCES, &m);
		}
		struct txs_ctl_msg am = { .type = TXS_CTL_AUTH };
		txs_ctl_mac(am.mac, m.nonce, key);
		if (txs_ctl_write(c->fd, &am, txs_ctl_ms(c->timeout), e, sizeof(e)) < 0) {
			snprintf(err, errlen, "authenticating: %s", e);
			return fail(c, why, -EACCES, &m);
		}
	}
	c->clock = m.clock;
	c->clock_udp = m.clock && m.clock_udp;
	c->ports = m.ports;
	txs_ctl_msg_free(&m);
	*why = 0;
	return 1;
}

struct txs_ctl_client *txs_ctl_client_greet(int fd, const char *host, const uint8_t *key, double timeout, int *whyp,
					    char *err, size_t errlen)
{
	int dummy;
	int *why = whyp ? whyp : &dummy;
	struct txs_ctl_client *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		*why = -ENOMEM;
		return NULL;
	}
	c->fd = fd;
	c->timeout = timeout;
	snprintf(c->host, sizeof(c->host), "%s", host);
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	memset(&me, 0, sizeof(me));
	if (getsockname(fd, (struct sockaddr *)&me, &ml) == 0 && (me.ss_family == AF_INET || me.ss_family == AF_INET6)) {
		const void *ab = me.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&me)->sin_addr
							 : (const void *)&((struct sockaddr_in6 *)&me)->sin6_addr;
		inet_ntop(me.ss_family, ab, c->local_s, sizeof(c->local_s));
	}
	return hello(c, key, why, err, errlen) ? c : NULL;
}

void txs_ctl_client_close(struct txs_ctl_client *c, bool bye)
{
	if (!c)
		return;
	if (bye) {
		struct txs_ctl_msg m = { .type = TXS_CTL_BYE };
		char e[256];
		txs_ctl_write(c->fd, &m, 1000, e, sizeof(e));
	}
	close(c->fd);
	free(c);
}

int txs_ctl_client_fd(const struct txs_ctl_client *c)
{
	return c->fd;
}

const char *txs_ctl_client_local(const struct txs_ctl_client *c)
{
	return c->local_s;
}

const char *txs_ctl_client_waited(const struct txs_ctl_client *c)
{
	return c->waited;
}

static int stopping(const struct crun *k)
{
	return k && k->ops->stopping ? k->ops->stopping(k->ops->arg) : 0;
}

/* Read the server's answer (ready or result) within timeout; an error
 * message becomes err. k (may be NULL): stops while waiting. */
static int await(struct txs_ctl_client *c, struct txs_ctl_msg *m, enum txs_ctl_type want, double timeout,
		 const struct crun *k, char *err, size_t errlen)
{
	double end = txs_mono_s() + timeout;
	char e[256];
	memset(m, 0, sizeof(*m));
	for (;;) {
		if (stopping(k) > 1) {
			snprintf(err, errlen, "interrupted");
			return -EINTR;
		}
		double left = end - txs_mono_s();
		if (left <= 0) {
			snprintf(err, errlen, "no %s from the server within %.1f s", txs_ctl_type_str(want), timeout);
			return -ETIMEDOUT;
		}
		struct pollfd pf = { .fd = c->fd, .events = POLLIN };
		if (poll(&pf, 1, left > 0.1 ? 100 : txs_ctl_ms(left) + 1) > 0)
			break; /* a frame starts: read it whole */
	}
	int rc = txs_ctl_read(c->fd, m, TXS_CTL_MSG_MAX, txs_ctl_ms(c->timeout), e, sizeof(e));
	if (rc < 0) {
		snprintf(err, errlen, "%s", e);
		return rc;
	}
	if (m->type == TXS_CTL_ERROR) {
		snprintf(err, errlen, "the server says: %s", m->message);
		return -EREMOTEIO;
	}
	if (m->type != want || m->test != c->test) {
		snprintf(err, errlen, "expected %s for test %u from the server, got %s (test %u)", txs_ctl_type_str(want),
			 c->test, txs_ctl_type_str(m->type), m->test);
		return -EPROTO;
	}
	return 0;
}

static int send_done(struct txs_ctl_client *c, const char *send_json, const char *why,
		     const struct txs_ctl_clock_rep *clk, char *err, size_t errlen)
{
	struct txs_ctl_msg m = { .type = TXS_CTL_DONE, .test = c->test, .sender = (char *)send_json };
	if (clk)
		m.done_clock = *clk;
	if (!send_json) {
		m.failed = true;
		snprintf(m.message, sizeof(m.message), "%s", why ? why : "the sender failed");
		txs_ctl_printable(m.message);
	}
	char e[256];
	if (txs_ctl_write(c->fd, &m, txs_ctl_ms(c->timeout), e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s", e);
		return -EIO;
	}
	return 0;
}

int txs_ctl_client_recv_start(struct txs_ctl_client *c, const struct txs_ctl_recv_spec *r, char *err, size_t errlen)
{
	struct txs_ctl_msg m = { .type = TXS_CTL_SETUP, .test = ++c->test, .recv = *r };
	m.recv.on = true;
	char e[256];
	if (txs_ctl_write(c->fd, &m, txs_ctl_ms(c->timeout), e, sizeof(e)) < 0) {
		snprintf(err, errlen, "%s", e);
		return -EIO;
	}
	struct txs_ctl_msg a;
	int rc = await(c, &a, TXS_CTL_READY, c->timeout + TXS_CTL_READY_S + 5, NULL, err, errlen);
	txs_ctl_msg_free(&a);
	return rc;
}

int txs_ctl_client_recv_finish(struct txs_ctl_client *c, const char *send_json, char **recv_json, char *err,
			       size_t errlen)
{
	*recv_json = NULL;
	int rc = send_done(c, send_json, NULL, NULL, err, errlen);
	if (rc < 0)
		return rc;
	struct txs_ctl_msg r;
	rc = await(c, &r, TXS_CTL_RESULT, c->timeout + 15, NULL, err, errlen);
	if (rc == 0 && !r.receiver) {
		snprintf(err, errlen, "the server's result has no receiver summary");
		rc = -EPROTO;
	}
	if (rc == 0) {
		*recv_json = r.receiver;
		r.receiver = NULL;
	}
	txs_ctl_msg_free(&r);
	return rc;
}

/* ---- one test with our own sides ------------------------------------------------------------------ */

/* What a side's warn hook gets, once per client where once is enough. */
static void clock_warn(struct crun *k, bool once, const char *fmt, const char *a)
{
	if ((once && k->c->clock_said) || !k->ops->warn)
		return;
	if (once)
		k->c->clock_said = true;
	char line[512];
	snprintf(line, sizeof(line), fmt, k->c->host, a);
	k->ops->warn(k->ops->arg, line);
}

/* A clock exchange (docs/control.md, "Clock offset"): UDP probes with the
 * kernels' stamps where the server has them, else (and said) time messages
 * over the control connection; a failed one is said and leaves the test
 * uncorrected, a broken connection fails it. */
static int measure_clock(struct crun *k, bool *have, struct txs_ctl_clock *out)
{
	*have = false;
	if (!k->c->clock)
		return 0;
	char e[256];
	int tmo = txs_ctl_ms(k->c->timeout);
	int rc = -ENOMSG;
	if (k->c->clock_udp) {
		rc = txs_ctl_clock_measure_udp(k->c->fd, TXS_CTL_CLOCK_UDP_EXCHANGES, TXS_CTL_CLOCK_UDP_WAIT_MS,
					       TXS_CTL_CLOCK_UDP_BUDGET_MS, tmo, out, e, sizeof(e));
		if (rc == -ENOMSG)
			clock_warn(k, true, "%s: clock: %s: measured over the control connection instead (" TXS_CTL_CLOCK_TCP ")", e);
		else if (rc == 0 && out->lost) {
			char n[64];
			snprintf(n, sizeof(n), "%u of %u", out->lost, out->probes);
			clock_warn(k, false, "%s: clock: %s UDP probes came back incomplete or not at all (passed over)", n);
		}
	} else {
		clock_warn(k, true, "%s: clock: the server has no UDP clock probes (an older txscale%s): measured over the "
				    "control connection (" TXS_CTL_CLOCK_TCP ")", "");
	}
	if (rc == -ENOMSG)
		rc = txs_ctl_clock_measure(k->c->fd, TXS_CTL_CLOCK_EXCHANGES, tmo, out, e, sizeof(e));
	if (rc == -ERANGE) {
		char line[sizeof(e) + 128];
		snprintf(line, sizeof(line), "%s: %s: latency not corrected", k->c->host, e);
		if (k->ops->warn)
			k->ops->warn(k->ops->arg, line);
		return 0;
	}
	if (rc < 0) {
		snprintf(k->err, k->errlen, "%s", e);
		return rc;
	}
	out->offset_ns -= k->t->stamp_shift_ns;
	*have = true;
	return 0;
}

/* The clock as the receiver's side sees it: forward (the server receives)
 * the server's offset, reverse ours (the negation); drift when measured
 * after too. NULL without a measurement. */
static const struct txs_ctl_clock_rep *clock_rep(const struct crun *k, bool server_receives,
						 struct txs_ctl_clock_rep *r)
{
	if (!k->have_clk0)
		return NULL;
	int64_t sign = server_receives ? 1 : -1;
	*r = (struct txs_ctl_clock_rep){ .on = true, .offset_ns = sign * k->clk0.offset_ns,
					 .error_ns = k->clk0.rtt_ns / 2, .method = k->clk0.method };
	if (k->have_clk1) {
		r->have_drift = true;
		r->drift_ns = sign * (k->clk1.offset_ns - k->clk0.offset_ns);
	}
	return r;
}

/* A result from the server: keep its summaries; the sender's is handed at
 * once to our receiver (it must be there before its idle end). */
static int take_result(struct crun *k, struct txs_ctl_msg *m)
{
	if (m->type != TXS_CTL_RESULT || m->test != k->c->test) {
		if (m->type != TXS_CTL_ERROR)
			snprintf(k->err, k->errlen, "expected a result for test %u, got %s (test %u)", k->c->test,
				 txs_ctl_type_str(m->type), m->test);
		return -EPROTO;
	}
	if (m->sender && !k->res->peer_send) {
		k->res->peer_send = m->sender;
		m->sender = NULL;
		struct txs_ctl_clock_rep cr;
		int rc;
		if (k->after_clock && !k->have_clk1 && (rc = measure_clock(k, &k->have_clk1, &k->clk1)) < 0)
			return rc;
		if (k->recv_on &&
		    (rc = k->ops->peer_summary(k->ops->arg, k->res->peer_send, clock_rep(k, false, &cr))) < 0) {
			snprintf(k->err, k->errlen, "cannot write the server's sender summary: %s", strerror(-rc));
			return rc;
		}
	}
	if (m->receiver && !k->res->peer_recv) {
		k->res->peer_recv = m->receiver;
		m->receiver = NULL;
	}
	return 0;
}

/* A message while a side runs: a result is taken, anything else is a
 * control-channel failure (k->ctl_err, k->err). */
static void side_message(struct crun *k)
{
	struct txs_ctl_msg m;
	char e[256];
	int rc = txs_ctl_read(k->c->fd, &m, TXS_CTL_MSG_MAX, txs_ctl_ms(k->c->timeout), e, sizeof(e));
	if (rc == 0 && m.type == TXS_CTL_ERROR)
		snprintf(k->err, k->errlen, "the server says: %s", m.message);
	else if (rc < 0)
		snprintf(k->err, k->errlen, "%s", e);
	if (rc < 0 || take_result(k, &m) < 0)
		k->ctl_err = true;
	txs_ctl_msg_free(&m);
}

/* Wait for our side to end within secs, taking what the server sends
 * meanwhile; a soft stop or a failed control channel asks the side to
 * stop (5 s more). */
static void wait_side(struct crun *k, int side, double secs)
{
	double end = txs_mono_s() + secs;
	bool told = false;
	while (txs_mono_s() < end && stopping(k) < 2) {
		if (stopping(k) == 1 && !told) { /* stop it; it still writes its summary */
			k->ops->stop(k->ops->arg, side);
			told = true;
			end = txs_mono_s() + 5;
		}
		if (k->ops->ended(k->ops->arg, side))
			return;
		struct pollfd pf = { .fd = k->ctl_err ? -1 : k->c->fd, .events = POLLIN };
		if (poll(&pf, 1, 20) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR))) {
			side_message(k);
			if (k->ctl_err && !told) { /* the server is gone or refused: our side stops too */
				k->ops->stop(k->ops->arg, side);
				told = true;
				end = txs_mono_s() + 5;
			}
		}
	}
}

/* The setup message of the test. */
static void make_setup(const struct crun *k, struct txs_ctl_msg *su)
{
	const struct txs_ctl_client_test *t = k->t;
	*su = (struct txs_ctl_msg){ .type = TXS_CTL_SETUP, .test = k->c->test };
	if (t->fwd) {
		su->recv = t->recv;
		su->recv.on = true;
		if (t->any_port && k->c->ports)
			su->recv.port = 0; /* the server's choice, named in its ready */
		struct txs_ctl_clock_rep cr;
		if (clock_rep(k, true, &cr))
			su->recv.clock = cr;
	}
	if (t->rev) {
		su->send = t->send;
		su->send.on = true;
		if (k->res->recv_port)
			su->send.port = k->res->recv_port; /* where our receiver listens */
	}
}

/* Our receiver (rev), the setup, the server's ready. */
static int begin(struct crun *k)
{
	int rc = measure_clock(k, &k->have_clk0, &k->clk0);
	if (rc < 0)
		return rc;
	k->after_clock = k->t->rev && !k->t->fwd; /* the server's run ends with its sender's result */
	if (k->t->rev) {
		int64_t off = -k->clk0.offset_ns; /* we receive: our clock minus the server's */
		k->res->clock_error_ns = k->have_clk0 ? k->clk0.rtt_ns / 2 : 0;
		k->res->recv_port = k->t->send.port;
		struct txs_addr me;
		if (k->t->any_port && (txs_addr_parse(&me, k->c->local_s) == 0 || txs_addr_parse(&me, "0.0.0.0") == 0)) {
			/* each client its own port: two -R clients on one host do not collide */
			int p = txs_ctl_free_port(&me);
			if (p > 0)
				k->res->recv_port = (uint16_t)p;
		}
		rc = k->ops->recv_start(k->ops->arg, k->c->local_s, k->have_clk0 ? &off : NULL, k->err, k->errlen);
		if (rc < 0)
			return rc;
		k->recv_on = true;
	}
	struct txs_ctl_msg su, m;
	make_setup(k, &su);
	char e[TXS_CTL_TEXT_MAX + 128];
	if (txs_ctl_write(k->c->fd, &su, txs_ctl_ms(k->c->timeout), e, sizeof(e)) < 0) {
		snprintf(k->err, k->errlen, "setting the test up: %s", e);
		return -EIO;
	}
	rc = await(k->c, &m, TXS_CTL_READY, k->c->timeout + TXS_CTL_READY_S + 5, k, k->err, k->errlen);
	k->res->ready = rc == 0;
	if (rc == 0 && k->t->fwd) {
		k->res->data_port = m.port ? m.port : k->t->recv.port;
		if (su.recv.port == 0 && !m.port) {
			snprintf(k->err, k->errlen, "the server's ready names no data port for its receiver");
			rc = -EPROTO;
		}
	}
	txs_ctl_msg_free(&m);
	return rc;
}

/* Our sender (fwd): start, wait, hand its summary over. */
static int forward(struct crun *k)
{
	const struct txs_ctl_client_test *t = k->t;
	char e[256];
	int rc = k->ops->send_start(k->ops->arg, k->err, k->errlen);
	if (rc < 0) {
		send_done(k->c, NULL, k->err, NULL, e, sizeof(e));
		return rc;
	}
	wait_side(k, TXS_CTL_SIDE_SEND, t->est > 0 ? t->est + 60 : 3600);
	bool failed = false;
	char se[512];
	char *sj = k->ops->send_finish(k->ops->arg, &failed, se, sizeof(se));
	if (stopping(k) > 1) {
		free(sj);
		snprintf(k->err, k->errlen, "interrupted");
		return -EINTR;
	}
	if (k->ctl_err) {
		free(sj);
		return -EIO;
	}
	k->res->failed |= failed;
	if (!sj) {
		snprintf(k->err, k->errlen, "%s", se);
		send_done(k->c, NULL, k->err, NULL, e, sizeof(e));
		return -EIO;
	}
	/* done's clock: measured after our sender ended, unless a reverse side may send results meanwhile */
	if (!t->rev && k->have_clk0 && !k->have_clk1 && measure_clock(k, &k->have_clk1, &k->clk1) < 0)
		k->have_clk1 = false;
	struct txs_ctl_clock_rep clk;
	rc = send_done(k->c, sj, NULL, clock_rep(k, true, &clk), e, sizeof(e));
	free(sj);
	if (rc < 0) {
		snprintf(k->err, k->errlen, "handing over our summary: %s", e);
		return rc;
	}
	return 0;
}

int txs_ctl_client_run(struct txs_ctl_client *c, const struct txs_ctl_client_test *t,
		       const struct txs_ctl_client_ops *ops, struct txs_ctl_client_result *res, char *err, size_t errlen)
{
	struct crun k = { .c = c, .t = t, .ops = ops, .res = res, .err = err, .errlen = errlen };
	memset(res, 0, sizeof(*res));
	err[0] = 0;
	c->test++;
	int rc = begin(&k);
	if (rc == 0 && t->fwd)
		rc = forward(&k);
	if (rc < 0)
		return rc;
	double wait = t->fwd ? t->recv.idle + c->timeout + 10 : (t->est > 0 ? t->est : 3600) + c->timeout + t->extra;
	while ((t->fwd && !res->peer_recv) || (t->rev && !res->peer_send)) {
		struct txs_ctl_msg m;
		rc = await(c, &m, TXS_CTL_RESULT, wait, &k, err, errlen);
		if (rc == 0)
			rc = take_result(&k, &m);
		txs_ctl_msg_free(&m);
		if (rc < 0)
			return rc;
	}
	if (t->rev) {
		wait_side(&k, TXS_CTL_SIDE_RECV, t->own_idle + 5);
		if (!ops->recv_finish(ops->arg))
			res->failed = true;
	}
	err[0] = 0;
	return 0;
}
