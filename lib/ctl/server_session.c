/* SPDX-License-Identifier: MIT */
/* The server end of a txscale control session (txscale/ctl_session.h):
 * hello, auth, clock answers, and each test from its spec's checks to its
 * results. The sides run behind the caller's ops. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <netinet/in.h>
#include <txscale/ctl_session.h>
#include "pkt/sockaddr.h"
#include "sess_priv.h"

struct srv {
	int fd;
	const struct txs_ctl_srv_cfg *cfg;
	const struct txs_ctl_srv_ops *ops;
};

/* one test's state while it runs */
struct srv_test {
	const struct txs_ctl_msg *m;
	const struct txs_ctl_recv_spec *r;
	const struct txs_ctl_send_spec *sd;
	char dest[64];
	double send_limit, t_send;
	bool want_done, want_send;
	double done_by, grace;
};

static void slog(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void slog(const struct srv *s, const char *fmt, ...)
{
	char line[TXS_CTL_TEXT_MAX + 320];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->ops->log)
		s->ops->log(s->ops->arg, line);
}

/* Tell the client why, and log it. Returns -1. */
static int refuse(const struct srv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const struct srv *s, const char *fmt, ...)
{
	struct txs_ctl_msg m = { .type = TXS_CTL_ERROR };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m.message, sizeof(m.message), fmt, ap);
	va_end(ap);
	txs_ctl_printable(m.message);
	slog(s, "error: %s", m.message);
	char e[256];
	txs_ctl_write(s->fd, &m, 1000, e, sizeof(e));
	return -1;
}

static int tmo(const struct srv *s)
{
	return txs_ctl_ms(s->cfg->ctl_timeout);
}

/* Write m; a failure is logged ("error: " what ...). 0, or -1. */
static int say(const struct srv *s, const struct txs_ctl_msg *m, const char *what)
{
	char e[256];
	if (txs_ctl_write(s->fd, m, tmo(s), e, sizeof(e)) < 0) {
		slog(s, "error: %s%s", what, e);
		return -1;
	}
	return 0;
}

/* The send spec against --max-time, the allowed destinations and --max-rate; fills t->dest. */
static int check_send(const struct srv *s, struct srv_test *t)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	const struct txs_ctl_send_spec *sd = t->sd;
	uint32_t id = t->m->test;
	if (sd->time > c->max_time)
		return refuse(s, "test %u: %.1f s of sending asked; this server allows at most %.0f s (--max-time)", id,
			      sd->time, c->max_time);
	struct txs_addr d = c->client;
	if (sd->dest[0] && txs_addr_parse(&d, sd->dest) < 0)
		return refuse(s, "test %u: bad destination '%s'", id, sd->dest);
	if (!txs_ctl_allowed(c->allow, &c->client, &d))
		return refuse(s, "test %u: destination %s is not allowed: this server sends only to its client (%s) and "
				 "to --allow-dest", id, sd->dest, c->client_s);
	txs_addr_str(&d, t->dest, sizeof(t->dest));
	if (c->max_rate > 0) {
		/* bits/s of UDP payload, as -b and iperf count them */
		double ask = c->max_rate_bits ? sd->rate * sd->length * 8.0 : sd->rate;
		const char *u = c->max_rate_bits ? "bit/s" : "datagrams/s";
		if (!(sd->rate > 0))
			return refuse(s, "test %u: an unlimited rate asked; this server sends at most %.0f %s (--max-rate)",
				      id, c->max_rate, u);
		if (ask > c->max_rate * (1 + 1e-9))
			return refuse(s, "test %u: %.0f %s asked; this server sends at most %.0f %s (--max-rate)", id, ask,
				      u, c->max_rate, u);
	}
	if (d.family != c->local.family)
		return refuse(s, "test %u: destination %s is not of the control connection's family", id, t->dest);
	return 0;
}

/* Every field checked before anything starts. */
static int check_spec(const struct srv *s, struct srv_test *t)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	uint32_t id = t->m->test;
	if (t->r && t->r->time > c->max_time)
		return refuse(s, "test %u: the client expects to send for %.1f s; this server allows at most %.0f s "
				 "(--max-time)", id, t->r->time, c->max_time);
	if (t->sd && check_send(s, t) < 0)
		return -1;
	const char *cl[2] = { t->r ? t->r->cpus : "", t->sd ? t->sd->cpus : "" };
	for (int i = 0; i < 2 && s->ops->cpus_check; i++) {
		char ce[160];
		if (cl[i][0] && s->ops->cpus_check(s->ops->arg, cl[i], ce, sizeof(ce)) < 0)
			return refuse(s, "test %u: the %s's CPU list '%s': %s", id, i ? "sender" : "receiver", cl[i], ce);
	}
	return 0;
}

/* A side's summary goes back as a result. */
static int send_result(const struct srv *s, const struct srv_test *t, const char *role, char *json)
{
	s->ops->summary(s->ops->arg, role, json);
	struct txs_ctl_msg res = { .type = TXS_CTL_RESULT, .test = t->m->test };
	if (role[0] == 's')
		res.sender = json;
	else
		res.receiver = json;
	return say(s, &res, "sending the result: ");
}

/* Our sender, when it has ended (or ran past its bound): its result. 0, or -1: the test ends. */
static int send_step(const struct srv *s, struct srv_test *t)
{
	bool over = txs_mono_s() > t->t_send + t->send_limit + TXS_CTL_SEND_EXTRA_S;
	if (!over && !s->ops->send_ended(s->ops->arg))
		return 0;
	t->want_send = false;
	char err[512];
	char *sum = s->ops->send_finish(s->ops->arg, err, sizeof(err));
	if (!sum)
		return refuse(s, "test %u: %s", t->m->test, err);
	int rc = send_result(s, t, "sender", sum);
	free(sum);
	return rc;
}

/* The test's sides stopped (and reaped) before the line that says why it
 * ends: whoever reads that line (a user, a test) finds nothing of the test
 * still running. test_end is called again at the test's end: it stops only
 * what still runs. */
static void end_sides(const struct srv *s)
{
	s->ops->test_end(s->ops->arg);
}

/* Only our sender runs: a client that leaves (or speaks) ends it. 0, or -1. */
static int watch_client(const struct srv *s, const struct srv_test *t)
{
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	if (poll(&pf, 1, 10) <= 0)
		return 0;
	struct txs_ctl_msg xm;
	char e[256];
	int rc = txs_ctl_read(s->fd, &xm, TXS_CTL_SMALL_MAX, tmo(s), e, sizeof(e));
	end_sides(s);
	if (rc < 0)
		slog(s, "error: test %u: the client left while we sent: %s", t->m->test, e);
	else
		refuse(s, "test %u: unexpected %s while we send", t->m->test, txs_ctl_type_str(xm.type));
	txs_ctl_msg_free(&xm);
	return -1;
}

/* The client's done (or a clock exchange before it). 0, or -1. */
static int done_step(const struct srv *s, struct srv_test *t)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	uint32_t id = t->m->test;
	if (txs_mono_s() > t->done_by) {
		end_sides(s);
		return refuse(s, "test %u: no done from the client within %.0f s", id,
			      (t->r->time > 0 ? t->r->time : c->max_time) + c->ctl_timeout + 5);
	}
	struct pollfd pf = { .fd = s->fd, .events = POLLIN };
	if (poll(&pf, 1, t->want_send ? 10 : 100) <= 0)
		return 0;
	struct txs_ctl_msg dm;
	char e[256];
	int rc = txs_ctl_read(s->fd, &dm, TXS_CTL_SMALL_MAX, tmo(s), e, sizeof(e));
	if (rc == 0 && dm.type == TXS_CTL_TIME) { /* the client's clock exchange after its sender ended */
		rc = txs_ctl_clock_answer(s->fd, &dm, txs_now_real_ns(), tmo(s), e, sizeof(e));
		txs_ctl_msg_free(&dm);
		if (rc < 0) {
			end_sides(s);
			slog(s, "error: test %u: clock exchange: %s", id, e);
		}
		return rc < 0 ? -1 : 0;
	}
	if (rc < 0 || dm.type != TXS_CTL_DONE || dm.test != id)
		end_sides(s);
	if (rc < 0) {
		if (rc != -ECONNRESET)
			refuse(s, "test %u: waiting for the client's done: %s", id, e);
		else
			slog(s, "error: test %u: waiting for the client's done: %s", id, e);
		txs_ctl_msg_free(&dm);
		return -1;
	}
	if (dm.type != TXS_CTL_DONE || dm.test != id) {
		refuse(s, "test %u: expected done, got %s (test %u)", id, txs_ctl_type_str(dm.type), dm.test);
		txs_ctl_msg_free(&dm);
		return -1;
	}
	t->want_done = false;
	if (dm.failed || !dm.sender) {
		slog(s, "test %u: the client's sender failed: %s", id, dm.message);
		t->grace = 0.5; /* nothing more will come */
	} else if ((rc = s->ops->peer_summary(s->ops->arg, dm.sender, &dm.done_clock)) < 0) {
		slog(s, "error: cannot write the client's sender summary: %s", strerror(-rc));
	}
	txs_ctl_msg_free(&dm);
	return 0;
}

int txs_ctl_free_port(const struct txs_addr *local)
{
	struct sockaddr_storage ss;
	socklen_t sl = txs_sockaddr_set(&ss, local->family, local, 0);
	int fd = socket(local->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		rc = -errno;
	else
		rc = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						   : ((struct sockaddr_in6 *)&ss)->sin6_port);
	close(fd);
	return rc;
}

/* Start the sides and say ready (with our receiver's data port). 0, or -1. */
static int start_sides(const struct srv *s, struct srv_test *t)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	uint32_t id = t->m->test;
	char err[512];
	struct txs_ctl_msg rm = { .type = TXS_CTL_READY, .test = id };
	if (t->r) {
		struct txs_ctl_recv_spec rs = *t->r;
		if (!rs.port) { /* each session its own data port: sessions at defaults do not collide */
			int p = txs_ctl_free_port(&c->local);
			if (p <= 0)
				return refuse(s, "test %u: no free UDP port for the receiver: %s", id, strerror(p ? -p : EADDRINUSE));
			rs.port = (uint16_t)p;
		}
		if (s->ops->recv_start(s->ops->arg, &rs, err, sizeof(err)) < 0)
			return refuse(s, "test %u: %s", id, err);
		rm.port = rs.port;
	}
	if (t->sd) {
		t->send_limit = t->sd->time > 0 && t->sd->time < c->max_time ? t->sd->time : c->max_time;
		if (s->ops->send_start(s->ops->arg, t->sd, t->dest, t->send_limit, err, sizeof(err)) < 0)
			return refuse(s, "test %u: %s", id, err);
		t->t_send = txs_mono_s();
	}
	return say(s, &rm, "");
}

/* Wait for the client's done (when we receive) and for our sender's end
 * (when we send), whichever comes first; our sender's summary goes back
 * at once (the client's receiver needs it before its idle end). Then the
 * receiver's result. */
static int run_sides(const struct srv *s, struct srv_test *t)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	const struct txs_ctl_recv_spec *r = t->r;
	t->want_done = r != NULL;
	t->want_send = t->sd != NULL;
	t->done_by = txs_mono_s() + (r && r->time > 0 ? r->time : c->max_time) + c->ctl_timeout + 5;
	t->grace = (r && r->idle > 0 ? r->idle : TXS_CTL_IDLE_DEFAULT_S) + 3;
	while (t->want_done || t->want_send) {
		if (t->want_send && send_step(s, t) < 0)
			return -1;
		if (!t->want_done) {
			if (t->want_send && watch_client(s, t) < 0)
				return -1;
			continue;
		}
		if (done_step(s, t) < 0)
			return -1;
	}
	if (!r)
		return 0;
	char err[512];
	char *sum = s->ops->recv_finish(s->ops->arg, t->grace, err, sizeof(err));
	if (!sum)
		return refuse(s, "test %u: %s", t->m->test, err);
	int rc = send_result(s, t, "receiver", sum);
	free(sum);
	return rc;
}

/* One test. 0: the result went back; -1: the session ends (refused or failed). */
static int run_test(const struct srv *s, const struct txs_ctl_msg *m)
{
	struct srv_test t = { .m = m, .r = m->recv.on ? &m->recv : NULL, .sd = m->send.on ? &m->send : NULL };
	if (check_spec(s, &t) < 0)
		return -1;
	slog(s, "test %u:%s%s%s%s", m->test, t.r ? " receive " : "", t.r ? t.r->dev : "", t.sd ? " send to " : "",
	     t.sd ? t.dest : "");
	if (s->ops->test_begin)
		s->ops->test_begin(s->ops->arg);
	int rc = start_sides(s, &t);
	if (rc == 0)
		rc = run_sides(s, &t);
	s->ops->test_end(s->ops->arg);
	return rc;
}

/* A read that fails ends the session: a closed connection is only logged. */
static int read_failed(const struct srv *s, int rc, const char *e)
{
	if (rc == -ECONNRESET)
		slog(s, "error: %s", e);
	else
		refuse(s, "%s", e);
	return rc;
}

/* hello, and the shared secret's challenge when there is one. 0 or -errno. */
static int greet(const struct srv *s)
{
	const struct txs_ctl_srv_cfg *c = s->cfg;
	char e[256];
	struct txs_ctl_msg m = { .type = TXS_CTL_HELLO, .auth = c->key != NULL, .clock = true, .clock_udp = true,
				.ports = true };
	snprintf(m.software, sizeof(m.software), "txscale %s", txs_version());
	if (txs_ctl_nonce(m.nonce) < 0) {
		slog(s, "error: no random nonce");
		return -EIO;
	}
	uint8_t nonce[TXS_CTL_NONCE_LEN];
	memcpy(nonce, m.nonce, sizeof(nonce));
	int rc = txs_ctl_write(s->fd, &m, tmo(s), e, sizeof(e));
	if (rc < 0) {
		slog(s, "error: %s", e);
		return rc;
	}
	slog(s, "connected%s", c->key ? ", asking for the shared secret" : "");
	if (!c->key)
		return 0;
	rc = txs_ctl_read(s->fd, &m, TXS_CTL_SMALL_MAX, tmo(s), e, sizeof(e));
	if (rc < 0) {
		txs_ctl_msg_free(&m);
		return read_failed(s, rc, e);
	}
	bool ok = m.type == TXS_CTL_AUTH && txs_ctl_mac_ok(m.mac, nonce, c->key);
	enum txs_ctl_type t = m.type;
	txs_ctl_msg_free(&m);
	if (!ok) {
		refuse(s, t == TXS_CTL_AUTH ? "authentication failed: wrong shared secret"
					    : "authentication required: expected auth, got %s",
		       txs_ctl_type_str(t));
		return -EACCES;
	}
	slog(s, "authenticated");
	return 0;
}

int txs_ctl_serve(int fd, const struct txs_ctl_srv_cfg *cfg, const struct txs_ctl_srv_ops *ops)
{
	struct srv s = { .fd = fd, .cfg = cfg, .ops = ops };
	char e[256];
	int rc = greet(&s);
	if (rc < 0)
		return rc;
	unsigned tests = 0;
	for (;;) {
		struct txs_ctl_msg m;
		rc = txs_ctl_read(fd, &m, TXS_CTL_SMALL_MAX, tmo(&s), e, sizeof(e));
		if (rc == -ECONNRESET && strstr(e, "closed the connection") && tests) {
			slog(&s, "ended by the client after %u test%s", tests, tests > 1 ? "s" : "");
			return 0;
		}
		if (rc < 0) {
			txs_ctl_msg_free(&m);
			return read_failed(&s, rc, e);
		}
		if (m.type == TXS_CTL_BYE) {
			slog(&s, "done after %u test%s", tests, tests == 1 ? "" : "s");
			return 0;
		}
		if (m.type == TXS_CTL_TIME) { /* a clock exchange before (or after) a test */
			rc = txs_ctl_clock_answer(fd, &m, txs_now_real_ns(), tmo(&s), e, sizeof(e));
			txs_ctl_msg_free(&m);
			if (rc < 0) {
				slog(&s, "error: clock exchange: %s", e);
				return rc;
			}
			continue;
		}
		if (m.type != TXS_CTL_SETUP) {
			refuse(&s, "expected setup, got %s", txs_ctl_type_str(m.type));
			txs_ctl_msg_free(&m);
			return -EPROTO;
		}
		rc = run_test(&s, &m);
		txs_ctl_msg_free(&m);
		if (rc < 0)
			return -EIO;
		tests++;
	}
}
