/* SPDX-License-Identifier: MIT */
/* lib/ctl's session ends (txscale/ctl_session.h) over a socketpair, with
 * fake sides (no processes): a two-way test whose summaries arrive intact
 * at both ends, a spec the server refuses (its reason reaches the client),
 * and a peer that vanishes mid-test on either side (the other end stops
 * with an error, within a bound). Over TCP on 127.0.0.1: connecting (a
 * closed port, a listener that cannot take the connection in time, a bad
 * address or auth file), and the probe that tells a greeting txscale
 * server from a silent iperf3-like one and from a busy iperf3 server. The
 * other side's summary as the client prints it. */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <txscale/ctl_session.h>
#include <txscale/iperf3.h>
#include "test_util.h"

static const char srv_send[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":777,\"threads\":[{\"id\":0,\"packets\":777}]}";
static const char srv_recv[] = "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":990,\"unique\":990,\"duplicates\":0,\"late\":0,\"unsequenced\":0,\"overflow\":0,\"lost\":10,\"expected\":1000,\"excess\":0,\"lost_exact\":true}";
static const char cli_send[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1000,\"threads\":[{\"id\":0,\"packets\":1000}]}";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the same JSON value (member order and spacing aside) */
static void assert_json_same(const char *a, const char *b)
{
	assert_non_null(a);
	assert_non_null(b);
	json_t *x = json_loads(a, 0, NULL), *y = json_loads(b, 0, NULL);
	assert_non_null(x);
	assert_non_null(y);
	if (!json_equal(x, y))
		fail_msg("JSON differs:\n%s\n%s", a, b);
	json_decref(x);
	json_decref(y);
}

/* ---- a fake server side ------------------------------------------------------------------------ */

struct fsrv {
	int fd;
	struct txs_ctl_srv_cfg cfg;
	int rc;
	char log[4096];
	struct txs_ctl_recv_spec recv;
	bool recv_on, send_on;
	char dest[64];
	double limit;
	unsigned send_polls;
	char *peer;   /* the client's sender summary */
	bool peer_clock;
	char roles[64];
	bool ended;
	bool send_forever;    /* the sender never ends by itself */
	uint16_t send_port;   /* where the client asked our sender to send */
	bool error_while_run; /* an "error:" line logged while the test's sides still ran */
};

static void s_log(void *arg, const char *line)
{
	struct fsrv *f = arg;
	if (strncmp(line, "error:", 6) == 0 && (f->recv_on || f->send_on) && !f->ended)
		f->error_while_run = true;
	size_t n = strlen(f->log);
	snprintf(f->log + n, sizeof(f->log) - n, "%s\n", line);
}

static int s_recv_start(void *arg, const struct txs_ctl_recv_spec *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	struct fsrv *f = arg;
	f->recv = *r;
	f->recv_on = true;
	return 0;
}

static int s_send_start(void *arg, const struct txs_ctl_send_spec *s, const char *dest, double limit, char *err,
			size_t errlen)
{
	(void)err, (void)errlen;
	struct fsrv *f = arg;
	f->send_port = s->port;
	snprintf(f->dest, sizeof(f->dest), "%s", dest);
	f->limit = limit;
	f->send_on = true;
	return 0;
}

static bool s_send_ended(void *arg)
{
	struct fsrv *f = arg;
	return ++f->send_polls >= 3 && !f->send_forever;
}

static char *s_send_finish(void *arg, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	return strdup(srv_send);
}

static char *s_recv_finish(void *arg, double grace, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	assert_true(grace > 0);
	return strdup(srv_recv);
}

static int s_peer(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct fsrv *f = arg;
	f->peer = strdup(summary);
	f->peer_clock = c && c->on;
	return 0;
}

static void s_summary(void *arg, const char *role, const char *json)
{
	(void)json;
	struct fsrv *f = arg;
	strncat(f->roles, role, sizeof(f->roles) - strlen(f->roles) - 2);
	strcat(f->roles, " ");
}

static void s_test_end(void *arg)
{
	((struct fsrv *)arg)->ended = true;
}

static void *srv_main(void *arg)
{
	struct fsrv *f = arg;
	struct txs_ctl_srv_ops ops = { .arg = f, .log = s_log, .recv_start = s_recv_start, .send_start = s_send_start,
				       .send_ended = s_send_ended, .send_finish = s_send_finish,
				       .recv_finish = s_recv_finish, .peer_summary = s_peer, .summary = s_summary,
				       .test_end = s_test_end };
	txs_ctl_first(f->fd, 200, true); /* the client's opener */
	f->rc = txs_ctl_serve(f->fd, &f->cfg, &ops);
	close(f->fd);
	return NULL;
}

/* A socketpair; the server end (--max-time max_time, its own address
 * local) serves sv[0] in a thread. */
static pthread_t serve_at(struct fsrv *f, int sv[2], double max_time, const char *local)
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	memset(f, 0, sizeof(*f));
	f->fd = sv[0];
	f->cfg = (struct txs_ctl_srv_cfg){ .max_time = max_time, .ctl_timeout = 2, .client_s = "198.18.0.1" };
	txs_addr_parse(&f->cfg.client, "198.18.0.1");
	txs_addr_parse(&f->cfg.local, local);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, srv_main, f), 0);
	return th;
}

static pthread_t serve(struct fsrv *f, int sv[2], double max_time)
{
	return serve_at(f, sv, max_time, "198.18.0.2");
}

/* Join within secs: a session that hangs fails the test. */
static void join_within(pthread_t th, double secs)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)secs;
	assert_int_equal(pthread_timedjoin_np(th, NULL, &ts), 0);
}

/* ---- a fake client side ------------------------------------------------------------------------ */

struct fcli {
	bool recv_started, send_started, stop_asked;
	bool clock;
	char local[64];
	char *peer; /* the server's sender summary, for our receiver */
	unsigned polls;
	bool never_ends; /* our sender runs until asked to stop */
};

static int c_recv_start(void *arg, const char *local, const int64_t *off, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	struct fcli *k = arg;
	k->recv_started = true;
	k->clock = off != NULL;
	snprintf(k->local, sizeof(k->local), "%s", local);
	return 0;
}

static int c_peer(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	(void)c;
	struct fcli *k = arg;
	free(k->peer);
	k->peer = strdup(summary);
	return 0;
}

static int c_send_start(void *arg, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	((struct fcli *)arg)->send_started = true;
	return 0;
}

static bool c_ended(void *arg, int side)
{
	struct fcli *k = arg;
	if (side == TXS_CTL_SIDE_SEND && k->never_ends)
		return k->stop_asked;
	return ++k->polls >= 2;
}

static void c_stop(void *arg, int side)
{
	(void)side;
	((struct fcli *)arg)->stop_asked = true;
}

static char *c_send_finish(void *arg, bool *failed, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	*failed = false;
	return strdup(cli_send);
}

static bool c_recv_finish(void *arg)
{
	(void)arg;
	return true;
}

static const struct txs_ctl_client_ops c_ops_proto = { .recv_start = c_recv_start, .peer_summary = c_peer,
						       .send_start = c_send_start, .ended = c_ended, .stop = c_stop,
						       .send_finish = c_send_finish, .recv_finish = c_recv_finish };

static void test_both_ways(void **st)
{
	(void)st;
	int sv[2];
	struct fsrv f;
	pthread_t th = serve(&f, sv, 30);

	char err[512];
	int why = 1;
	struct txs_ctl_client *c = txs_ctl_client_greet(sv[1], "198.18.0.2", NULL, 2, &why, err, sizeof(err));
	assert_non_null(c);
	assert_int_equal(why, 0);
	struct txs_ctl_client_test t = { .fwd = true, .rev = true, .est = 1, .own_idle = 0.2, .extra = 5 };
	t.recv = (struct txs_ctl_recv_spec){ .port = 9000, .idle = 0.2, .time = 1 };
	snprintf(t.recv.dev, sizeof(t.recv.dev), "udp");
	t.send = (struct txs_ctl_send_spec){ .port = 9001, .length = 64, .rate = 1000, .time = 1 };
	struct fcli k = { 0 };
	struct txs_ctl_client_ops ops = c_ops_proto;
	ops.arg = &k;
	struct txs_ctl_client_result res;
	int rc = txs_ctl_client_run(c, &t, &ops, &res, err, sizeof(err));
	if (rc)
		fail_msg("client: %d %s\nserver log:\n%s", rc, err, f.log);
	assert_false(res.failed);
	assert_json_same(res.peer_send, srv_send);
	assert_json_same(res.peer_recv, srv_recv);
	assert_json_same(k.peer, srv_send); /* handed to our receiver */
	assert_true(k.recv_started && k.send_started);
	assert_true(k.clock); /* the server answers clock exchanges: our receiver got an offset */
	txs_ctl_client_close(c, true);
	join_within(th, 10);

	assert_int_equal(f.rc, 0);
	assert_true(f.recv_on && f.send_on);
	assert_int_equal(f.recv.port, 9000);
	assert_int_equal(res.data_port, 9000); /* -p given: no choice left to the server */
	assert_string_equal(f.dest, "198.18.0.1"); /* no dest asked: the client's own address */
	assert_true(f.limit == 1.0);
	assert_json_same(f.peer, cli_send);
	assert_true(f.peer_clock);
	assert_string_equal(f.roles, "sender receiver ");
	assert_true(f.ended);
	assert_non_null(strstr(f.log, "test 1: receive udp send to 198.18.0.1"));
	assert_non_null(strstr(f.log, "done after 1 test"));
	free(res.peer_send);
	free(res.peer_recv);
	free(k.peer);
	free(f.peer);
}

/* No -p: the server chooses the data port (a free one on its address),
 * its ready names it, and that is where our sender is told to send */
static void test_any_port(void **st)
{
	(void)st;
	int sv[2];
	struct fsrv f;
	pthread_t th = serve_at(&f, sv, 30, "127.0.0.1");
	char err[512];
	int why = 1;
	struct txs_ctl_client *c = txs_ctl_client_greet(sv[1], "127.0.0.1", NULL, 2, &why, err, sizeof(err));
	assert_non_null(c);
	struct txs_ctl_client_test t = { .fwd = true, .est = 1, .own_idle = 0.2, .extra = 5, .any_port = true };
	t.recv = (struct txs_ctl_recv_spec){ .port = 5201, .idle = 0.2, .time = 1 };
	snprintf(t.recv.dev, sizeof(t.recv.dev), "udp");
	struct fcli k = { 0 };
	struct txs_ctl_client_ops ops = c_ops_proto;
	ops.arg = &k;
	struct txs_ctl_client_result res;
	int rc = txs_ctl_client_run(c, &t, &ops, &res, err, sizeof(err));
	if (rc)
		fail_msg("client: %d %s\nserver log:\n%s", rc, err, f.log);
	txs_ctl_client_close(c, true);
	join_within(th, 10);
	assert_int_equal(f.rc, 0);
	assert_true(f.recv_on);
	assert_true(f.recv.port != 0 && f.recv.port != 5201); /* ephemeral: not -p's default, not the control port */
	assert_int_equal(res.data_port, f.recv.port);
	free(res.peer_send);
	free(res.peer_recv);
	free(f.peer);

	/* -R without -p: our receiver takes a free port of its own, and the
	 * server's sender is told to send there */
	th = serve_at(&f, sv, 30, "127.0.0.1");
	c = txs_ctl_client_greet(sv[1], "127.0.0.1", NULL, 2, &why, err, sizeof(err));
	assert_non_null(c);
	t = (struct txs_ctl_client_test){ .rev = true, .est = 1, .own_idle = 0.2, .extra = 5, .any_port = true };
	t.send = (struct txs_ctl_send_spec){ .port = 5201, .length = 64, .rate = 1000, .time = 1 };
	k = (struct fcli){ 0 };
	rc = txs_ctl_client_run(c, &t, &ops, &res, err, sizeof(err));
	if (rc)
		fail_msg("client -R: %d %s\nserver log:\n%s", rc, err, f.log);
	txs_ctl_client_close(c, true);
	join_within(th, 10);
	assert_int_equal(f.rc, 0);
	assert_true(f.send_on);
	assert_true(res.recv_port != 0 && res.recv_port != 5201);
	assert_int_equal(f.send_port, res.recv_port);
	free(res.peer_send);
	free(res.peer_recv);
	free(f.peer);
	free(k.peer);
}

static void test_refused(void **st)
{
	(void)st;
	int sv[2];
	struct fsrv f;
	pthread_t th = serve(&f, sv, 5);
	char err[512];
	struct txs_ctl_client *c = txs_ctl_client_greet(sv[1], "198.18.0.2", NULL, 2, NULL, err, sizeof(err));
	assert_non_null(c);
	struct txs_ctl_client_test t = { .rev = true, .est = 10, .own_idle = 0.2, .extra = 5 };
	t.send = (struct txs_ctl_send_spec){ .port = 9001, .length = 64, .rate = 1000, .time = 10 };
	struct fcli k = { 0 };
	struct txs_ctl_client_ops ops = c_ops_proto;
	ops.arg = &k;
	struct txs_ctl_client_result res;
	int rc = txs_ctl_client_run(c, &t, &ops, &res, err, sizeof(err));
	assert_int_equal(rc, -EREMOTEIO);
	assert_string_equal(err, "the server says: test 1: 10.0 s of sending asked; this server allows at most 5 s "
				 "(--max-time)");
	assert_null(res.peer_send);
	txs_ctl_client_close(c, false);
	join_within(th, 10);
	assert_true(f.rc < 0);
	assert_false(f.send_on); /* refused before anything started */
	assert_non_null(strstr(f.log, "error: test 1: 10.0 s of sending asked"));
	free(k.peer);
}

/* The client sets a receive test up, hears ready and vanishes. */
static void test_client_vanishes(void **st)
{
	(void)st;
	int sv[2];
	struct fsrv f;
	pthread_t th = serve(&f, sv, 30);
	char err[512];
	struct txs_ctl_msg m;
	assert_int_equal(txs_ctl_read(sv[1], &m, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)), 0);
	assert_int_equal(m.type, TXS_CTL_HELLO);
	txs_ctl_msg_free(&m);
	struct txs_ctl_msg su = { .type = TXS_CTL_SETUP, .test = 1 };
	su.recv = (struct txs_ctl_recv_spec){ .on = true, .port = 9000, .time = 20 };
	snprintf(su.recv.dev, sizeof(su.recv.dev), "udp");
	assert_int_equal(txs_ctl_write(sv[1], &su, 2000, err, sizeof(err)), 0);
	assert_int_equal(txs_ctl_read(sv[1], &m, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)), 0);
	assert_int_equal(m.type, TXS_CTL_READY);
	txs_ctl_msg_free(&m);
	double t0 = now_s();
	close(sv[1]);
	join_within(th, 10);
	assert_true(now_s() - t0 < 5); /* not the 20 s the test was to last */
	assert_true(f.rc < 0);
	assert_true(f.ended); /* what ran was stopped */
	assert_non_null(strstr(f.log, "error: test 1: waiting for the client's done"));
	assert_false(f.error_while_run); /* stopped before the line that says so */
}

/* The client leaves while only our sender runs (-R, SIGINT): the sender is
 * stopped before "the client left" is logged (ctl_security's SIGINT
 * reverse read the log, then found the sender still there) */
static void test_client_leaves_sender(void **st)
{
	(void)st;
	int sv[2];
	struct fsrv f;
	pthread_t th = serve(&f, sv, 30);
	f.send_forever = true;
	char err[512];
	struct txs_ctl_msg m;
	assert_int_equal(txs_ctl_read(sv[1], &m, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)), 0);
	txs_ctl_msg_free(&m);
	struct txs_ctl_msg su = { .type = TXS_CTL_SETUP, .test = 1 };
	su.send = (struct txs_ctl_send_spec){ .on = true, .port = 9001, .length = 64, .rate = 1000, .time = 20 };
	assert_int_equal(txs_ctl_write(sv[1], &su, 2000, err, sizeof(err)), 0);
	assert_int_equal(txs_ctl_read(sv[1], &m, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)), 0);
	assert_int_equal(m.type, TXS_CTL_READY);
	txs_ctl_msg_free(&m);
	usleep(50 * 1000);
	close(sv[1]);
	join_within(th, 10);
	assert_true(f.rc < 0);
	assert_true(f.ended);
	assert_non_null(strstr(f.log, "error: test 1: the client left while we sent"));
	assert_false(f.error_while_run);
}

/* A server that says ready and vanishes while our sender runs. */
static void *vanishing_server(void *arg)
{
	int fd = *(int *)arg;
	char err[256];
	struct txs_ctl_msg m = { .type = TXS_CTL_HELLO };
	snprintf(m.software, sizeof(m.software), "fake");
	txs_ctl_write(fd, &m, 2000, err, sizeof(err));
	struct txs_ctl_msg su;
	if (txs_ctl_read(fd, &su, TXS_CTL_SMALL_MAX, 2000, err, sizeof(err)) == 0) {
		struct txs_ctl_msg r = { .type = TXS_CTL_READY, .test = su.test };
		txs_ctl_write(fd, &r, 2000, err, sizeof(err));
	}
	txs_ctl_msg_free(&su);
	usleep(100 * 1000);
	close(fd);
	return NULL;
}

static void test_server_vanishes(void **st)
{
	(void)st;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, vanishing_server, &sv[0]), 0);
	char err[512];
	struct txs_ctl_client *c = txs_ctl_client_greet(sv[1], "198.18.0.2", NULL, 2, NULL, err, sizeof(err));
	assert_non_null(c);
	struct txs_ctl_client_test t = { .fwd = true, .est = 20 };
	t.recv = (struct txs_ctl_recv_spec){ .port = 9000, .idle = 0.2, .time = 20 };
	snprintf(t.recv.dev, sizeof(t.recv.dev), "udp");
	struct fcli k = { .never_ends = true };
	struct txs_ctl_client_ops ops = c_ops_proto;
	ops.arg = &k;
	struct txs_ctl_client_result res;
	double t0 = now_s();
	int rc = txs_ctl_client_run(c, &t, &ops, &res, err, sizeof(err));
	assert_true(now_s() - t0 < 5);
	assert_true(rc < 0);
	assert_true(k.send_started);
	assert_true(k.stop_asked); /* our sender was told to stop */
	assert_non_null(strstr(err, "closed"));
	assert_null(res.peer_recv);
	txs_ctl_client_close(c, false);
	join_within(th, 5);
}

/* ---- connecting and probing over TCP ------------------------------------------------------------ */

/* A listener on 127.0.0.1 (its port in *port), with this backlog. */
static int listener(uint16_t *port, int backlog)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, backlog), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* One accepted connection: served by the fake server (greet), or told
 * iperf3's ACCESS_DENIED (a busy iperf3 server). */
struct acceptor {
	int lfd;
	bool greet;
	bool ip3;  /* answer as an iperf3 server: read the cookie, then PARAM_EXCHANGE */
	bool wait; /* a txscale server that says why it waits first */
	bool other; /* another service: answers "HTTP/1.0 200 OK" */
	int waits;  /* a server that says wait this many times, 300 ms apart, and never greets */
	char cookie[TXS_IP3_COOKIE_LEN];
	struct fsrv f;
};

static void *accept_one(void *arg)
{
	struct acceptor *a = arg;
	int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(fd >= 0);
	if (a->other) {
		assert_int_equal(write(fd, "HTTP/1.0 200 OK\r\n", 17), 17);
		usleep(200 * 1000);
		close(fd);
		return NULL;
	}
	if (a->waits) {
		struct txs_ctl_msg m = { .type = TXS_CTL_WAIT };
		snprintf(m.message, sizeof(m.message), "forever");
		char e[128];
		for (int i = 0; i < a->waits; i++) {
			if (txs_ctl_write(fd, &m, 1000, e, sizeof(e)) < 0)
				break;
			usleep(300 * 1000);
		}
		close(fd);
		return NULL;
	}
	if (a->ip3) {
		assert_int_equal(txs_ip3_read_full(fd, a->cookie, sizeof(a->cookie), 2000), 0);
		int8_t pe = TXS_IP3_PARAM_EXCHANGE;
		assert_int_equal(write(fd, &pe, 1), 1);
		usleep(200 * 1000);
		close(fd);
		return NULL;
	}
	if (a->wait) {
		struct txs_ctl_msg m = { .type = TXS_CTL_WAIT };
		snprintf(m.message, sizeof(m.message), "a session is ending");
		char e[128];
		usleep(100 * 1000);
		assert_int_equal(txs_ctl_write(fd, &m, 1000, e, sizeof(e)), 0);
		usleep(300 * 1000);
	}
	if (!a->greet) {
		int8_t denied = -1; /* TXS_IP3_ACCESS_DENIED */
		assert_int_equal(write(fd, &denied, 1), 1);
		usleep(200 * 1000);
		close(fd);
		return NULL;
	}
	a->f.fd = fd;
	a->f.cfg = (struct txs_ctl_srv_cfg){ .max_time = 5, .ctl_timeout = 2, .client_s = "127.0.0.1" };
	txs_addr_parse(&a->f.cfg.client, "127.0.0.1");
	txs_addr_parse(&a->f.cfg.local, "127.0.0.1");
	return srv_main(&a->f);
}

static void test_connect(void **st)
{
	(void)st;
	char err[512];
	uint16_t port;
	int lfd = listener(&port, 0);
	/* the accept queue takes one connection; the next one's SYN is dropped */
	int one = txs_ctl_connect("127.0.0.1", NULL, port, 2, err, sizeof(err));
	assert_true(one >= 0);
	/* a control connection sends each message when written (no Nagle) */
	int nd = 0;
	socklen_t ndl = sizeof(nd);
	assert_int_equal(getsockopt(one, IPPROTO_TCP, TCP_NODELAY, &nd, &ndl), 0);
	assert_int_equal(nd, 1);
	double t0 = now_s();
	assert_int_equal(txs_ctl_connect("127.0.0.1", NULL, port, 0.3, err, sizeof(err)), -ETIMEDOUT);
	assert_true(now_s() - t0 < 5);
	char want[128];
	snprintf(want, sizeof(want), "no answer on the control port %u within 0.3 s", port);
	assert_string_equal(err, want);
	close(one);
	close(lfd);
	/* the port is closed now */
	assert_int_equal(txs_ctl_connect("127.0.0.1", NULL, port, 2, err, sizeof(err)), -ECONNREFUSED);
	snprintf(want, sizeof(want), "cannot connect to the control port %u: Connection refused (is `txscale server` "
		 "running there?)", port);
	assert_string_equal(err, want);
	assert_int_equal(txs_ctl_connect("nohost", NULL, port, 2, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad server address 'nohost'");
	/* a secret that cannot be read: said before anything is sent */
	lfd = listener(&port, 4);
	int why = 0;
	assert_null(txs_ctl_client_open("127.0.0.1", NULL, port, "/nonexistent/secret", 2, &why, err, sizeof(err)));
	assert_int_equal(why, -EINVAL);
	assert_string_equal(err, "--auth-file '/nonexistent/secret': No such file or directory");
	close(lfd);
}

/* -B: the control connection leaves from the address given (as iperf3's -B) */
static void test_connect_bind(void **st)
{
	(void)st;
	char err[512];
	uint16_t port;
	int lfd = listener(&port, 4);
	int fd = txs_ctl_connect("127.0.0.1", "127.0.0.2", port, 2, err, sizeof(err));
	assert_true(fd >= 0);
	struct sockaddr_in peer;
	socklen_t pl = sizeof(peer);
	int afd = accept4(lfd, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
	assert_true(afd >= 0);
	assert_int_equal(ntohl(peer.sin_addr.s_addr), 0x7f000002);
	close(afd);
	close(fd);
	assert_int_equal(txs_ctl_connect("127.0.0.1", "::1", port, 2, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-B ::1 is IPv6, the server 127.0.0.1 IPv4");
	assert_int_equal(txs_ctl_connect("127.0.0.1", "nohost", port, 2, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad -B address 'nohost'");
	/* an address this host does not have (TEST-NET-1) */
	assert_int_equal(txs_ctl_connect("127.0.0.1", "192.0.2.1", port, 2, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cannot bind the control connection to -B 192.0.2.1: Cannot assign requested address");
	close(lfd);
}

static void test_probe(void **st)
{
	(void)st;
	char err[512], want[256];
	struct txs_ctl_client *c;
	int ip3;
	uint16_t port;
	/* silent: neither an iperf3 server (it answers our opener at once) nor a txscale one that greets;
	 * silence is never taken for iperf3 */
	int lfd = listener(&port, 4);
	double t0 = now_s();
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 0.5, &c, &ip3, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_true(now_s() - t0 >= 0.45);
	snprintf(want, sizeof(want), "the server at 127.0.0.1 port %u accepted the connection and said nothing within "
		 "0.5 s (--ctl-timeout)", port);
	assert_string_equal(err, want);
	assert_null(c);
	assert_int_equal(ip3, -1);
	close(lfd);
	/* an iperf3 server: our opener is its cookie (iperf3's alphabet, a NUL last), it answers with a state */
	lfd = listener(&port, 4);
	struct acceptor a = { .lfd = lfd, .ip3 = true };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)), 1);
	assert_null(c);
	assert_true(ip3 >= 0);
	int8_t state = 0;
	assert_int_equal(txs_ip3_read_full(ip3, &state, 1, 2000), 0); /* the state byte is left for the iperf3 client */
	assert_int_equal(state, TXS_IP3_PARAM_EXCHANGE);
	close(ip3);
	join_within(th, 5);
	assert_memory_equal(a.cookie, TXS_CTL_OPENER, TXS_CTL_OPENER_LEN);
	assert_true(txs_ip3_cookie_prefix((const uint8_t *)a.cookie, sizeof(a.cookie) - 1));
	assert_int_equal(a.cookie[sizeof(a.cookie) - 1], 0);
	close(lfd);
	/* --server's open against an iperf3 server says what answered */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd, .ip3 = true };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	int why = 0;
	assert_null(txs_ctl_client_open("127.0.0.1", NULL, port, NULL, 2, &why, err, sizeof(err)));
	assert_int_equal(why, -EPROTO);
	snprintf(want, sizeof(want), "an iperf3 server answers at 127.0.0.1 port %u, not a txscale one (without "
		 "--server, send -c talks to either)", port);
	assert_string_equal(err, want);
	join_within(th, 5);
	close(lfd);
	/* another service on the port: neither protocol, said, not taken for iperf3 */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd, .other = true };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)), -EPROTO);
	snprintf(want, sizeof(want), "neither a txscale nor an iperf3 server answers at 127.0.0.1 port %u (its first byte "
		 "is 0x48)", port);
	assert_string_equal(err, want);
	assert_int_equal(ip3, -1);
	join_within(th, 5);
	close(lfd);
	/* waits without end are bounded by the one timeout, and the error keeps what the server said */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd, .waits = 10 };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	t0 = now_s();
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 1, &c, &ip3, err, sizeof(err)), -EPROTO);
	assert_true(now_s() - t0 < 1.5);
	assert_non_null(strstr(err, "(it had said it made us wait: forever)"));
	join_within(th, 5);
	close(lfd);
	/* a txscale server that says why it waits, then greets: the client waits and keeps the reason */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd, .greet = true, .wait = true };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)), 0);
	assert_non_null(c);
	assert_string_equal(txs_ctl_client_waited(c), "a session is ending");
	txs_ctl_client_close(c, true);
	join_within(th, 5);
	assert_int_equal(a.f.rc, 0);
	close(lfd);
	/* a txscale server greets: the session is ready for a test */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd, .greet = true };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)), 0);
	assert_non_null(c);
	assert_int_equal(ip3, -1);
	assert_string_equal(txs_ctl_client_local(c), "127.0.0.1");
	assert_string_equal(txs_ctl_client_waited(c), "");
	txs_ctl_client_close(c, true);
	join_within(th, 5);
	assert_int_equal(a.f.rc, 0); /* bye: the session ended well */
	close(lfd);
	/* a busy iperf3 server */
	lfd = listener(&port, 4);
	a = (struct acceptor){ .lfd = lfd };
	assert_int_equal(pthread_create(&th, NULL, accept_one, &a), 0);
	assert_int_equal(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)), -EBUSY);
	snprintf(want, sizeof(want), "the iperf3 server at 127.0.0.1 port %u is busy running a test", port);
	assert_string_equal(err, want);
	assert_null(c);
	assert_int_equal(ip3, -1);
	join_within(th, 5);
	close(lfd);
	/* nobody there */
	assert_true(txs_ctl_client_probe("127.0.0.1", NULL, port, NULL, 2, &c, &ip3, err, sizeof(err)) < 0);
	snprintf(want, sizeof(want), "no txscale or iperf3 server at 127.0.0.1 port %u (--control-port: the server's "
		 "port, iperf3's -p; send's -p is the data port); to send without a server, give DEST without -c, or --dev "
		 "udp", port);
	assert_string_equal(err, want);
}

/* What the server tells from a client's first bytes: our opener (read, and
 * across two segments), an iperf3 cookie (left for the iperf3 side), a
 * cookie-like opener without its NUL, and silence (an older txscale client)
 * after the wait. */
struct later {
	int fd;
	const void *buf;
	size_t len;
	int ms;
	ssize_t wrote;
};

static void *write_later(void *arg)
{
	struct later *l = arg;
	usleep((useconds_t)l->ms * 1000);
	l->wrote = write(l->fd, l->buf, l->len);
	return NULL;
}

static void test_first(void **st)
{
	(void)st;
	int sv[2];
	char ck[TXS_IP3_COOKIE_LEN], b[64];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	double t0 = now_s();
	assert_int_equal(txs_ctl_first(sv[1], 150, true), TXS_CTL_FIRST_NONE);
	assert_true(now_s() - t0 >= 0.14);
	/* the opener, then the hello's first bytes: only the opener is read */
	assert_int_equal(txs_ip3_cookie_make(ck), 0);
	memcpy(ck, TXS_CTL_OPENER, TXS_CTL_OPENER_LEN);
	assert_int_equal(write(sv[0], ck, sizeof(ck)), (ssize_t)sizeof(ck));
	assert_int_equal(write(sv[0], "TXSC", 4), 4);
	assert_int_equal(txs_ctl_first(sv[1], 150, false), TXS_CTL_FIRST_TXSCALE); /* left */
	assert_int_equal(txs_ctl_first(sv[1], 150, true), TXS_CTL_FIRST_TXSCALE);
	assert_int_equal(read(sv[1], b, sizeof(b)), 4);
	/* in two parts, the second 50 ms later */
	assert_int_equal(write(sv[0], ck, 10), 10);
	struct later l = { .fd = sv[0], .buf = ck + 10, .len = sizeof(ck) - 10, .ms = 50 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, write_later, &l), 0);
	assert_int_equal(txs_ctl_first(sv[1], 1000, true), TXS_CTL_FIRST_TXSCALE);
	join_within(th, 5);
	assert_int_equal(l.wrote, (ssize_t)sizeof(ck) - 10);
	/* an iperf3 client's cookie: not read */
	assert_int_equal(txs_ip3_cookie_make(ck), 0);
	ck[0] = 'a';
	assert_int_equal(write(sv[0], ck, sizeof(ck)), (ssize_t)sizeof(ck));
	assert_int_equal(txs_ctl_first(sv[1], 150, true), TXS_CTL_FIRST_OTHER);
	assert_int_equal(read(sv[1], b, sizeof(b)), (ssize_t)sizeof(ck));
	/* the opener's letters without a NUL at the end: not ours */
	memcpy(ck, TXS_CTL_OPENER, TXS_CTL_OPENER_LEN);
	ck[sizeof(ck) - 1] = 'a';
	assert_int_equal(write(sv[0], ck, sizeof(ck)), (ssize_t)sizeof(ck));
	assert_int_equal(txs_ctl_first(sv[1], 150, true), TXS_CTL_FIRST_OTHER);
	assert_int_equal(read(sv[1], b, sizeof(b)), (ssize_t)sizeof(ck));
	/* a stub of the opener that never goes on: not ours, after the wait */
	assert_int_equal(write(sv[0], "txsc", 4), 4);
	assert_int_equal(txs_ctl_first(sv[1], 100, true), TXS_CTL_FIRST_OTHER);
	close(sv[0]);
	close(sv[1]);
}

/* The other side's summary as a client shows it: every text field from its
 * path in the summary (the kernel drops' softnet.dropped and interfaces'
 * rx_dropped among them), the JSON line with its type and host added, and
 * a summary that is not a JSON object refused. */
static void test_peer_write(void **st)
{
	(void)st;
	static const char rsum[] =
		"{\"received\":90,\"lost\":10,\"lost_exact\":true,\"duplicates\":0,\"reordered\":1,\"late\":2,\"malformed\":3,"
		"\"latency_ns\":{\"p50\":1500,\"p99\":20000,\"p99.9\":3000000,\"max\":2000000000},"
		"\"kernel_drops\":{\"sockets\":4,\"udp\":{\"RcvbufErrors\":2},\"udp6\":{\"RcvbufErrors\":1},"
		"\"interfaces\":{\"rx0\":{\"rx_dropped\":5},\"lo\":{\"rx_dropped\":6}},\"softnet\":{\"dropped\":7}}}";
	static const char ssum[] = "{\"packets\":100,\"seconds\":1.5,\"pps\":66.5,\"drops\":8,\"errors\":9}";
	char *buf;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(txs_ctl_peer_write(f, "receiver", "198.18.0.2", rsum, false), 0);
	assert_int_equal(txs_ctl_peer_write(f, "sender", "198.18.0.2", ssum, false), 0);
	fclose(f);
	assert_string_equal(buf, "receiver 198.18.0.2: received 90, lost 10 (10%) exact, duplicates 0, reordered 1, late 2, "
				 "malformed 3\n"
				 "receiver 198.18.0.2: latency p50 1.5 us, p99 20.0 us, p99.9 3.00 ms, max 2.00 s\n"
				 "receiver 198.18.0.2: kernel drops: socket 4, RcvbufErrors 3, if rx 11, softnet 7\n"
				 "sender 198.18.0.2: sent 100 packets in 1.5 s (66.5 pps), drops 8, errors 9\n");
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(txs_ctl_peer_write(f, "sender", "2001:2::1", ssum, true), 0);
	fclose(f);
	json_t *j = json_loads(buf, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "sender");
	assert_string_equal(json_string_value(json_object_get(j, "host")), "2001:2::1");
	assert_int_equal(json_integer_value(json_object_get(j, "packets")), 100);
	json_decref(j);
	free(buf);
	f = open_memstream(&buf, &len);
	assert_int_equal(txs_ctl_peer_write(f, "sender", "h", "[1,2]", false), -EINVAL);
	assert_int_equal(txs_ctl_peer_write(f, "sender", "h", "{\"packets\":", false), -EINVAL);
	fclose(f);
	assert_int_equal(len, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_ways),
		cmocka_unit_test(test_any_port),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_client_vanishes),
		cmocka_unit_test(test_client_leaves_sender),
		cmocka_unit_test(test_server_vanishes),
		cmocka_unit_test(test_connect),
		cmocka_unit_test(test_connect_bind),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_first),
		cmocka_unit_test(test_peer_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
