/* SPDX-License-Identifier: MIT */
/* lib/server (txscale/server.h) on loopback, run in a thread of this
 * process and driven by raw control messages and by the library's client
 * end: the config's refusals; admission (per client, then max sessions:
 * the busy message, the log line, the metrics' counts) and a stop from
 * another thread; a one-off that ends with its session's status; a
 * reverse test whose sender (a real send session, built from the spec)
 * sends to us; the receiver's and sender's configs built from specs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <jansson.h>
#include <txscale/ctl_session.h>
#include <txscale/rx_iperf2.h>
#include <txscale/server.h>
#include "server/server_priv.h"
#define T_TMPDIR_NAME "txs_server"
#include "test_tmpdir.h"

/* ---- the server in a thread, its hooks into one file ------------------------------------------- */

struct srv {
	struct txs_server *s;
	pthread_t th;
	int rc;
	char log[256];
};

/* every process's hook lines go to the file at user, one write each */
static void put(void *user, const char *kind, const char *line)
{
	char b[2048];
	int n = snprintf(b, sizeof(b), "%s: %s\n", kind, line);
	int fd = open(user, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, b, (size_t)n) != n)
			n = -1;
		close(fd);
	}
}

static void h_log(void *user, const char *line)
{
	put(user, "log", line);
}

static void h_msg(void *user, const char *line)
{
	put(user, "msg", line);
}

static void h_summary(void *user, const struct txs_server_summary *s)
{
	char b[1600];
	snprintf(b, sizeof(b), "%u %s %s %s", s->session, s->client, s->role, s->json);
	put(user, "summary", b);
}

static void h_side(void *user, const char *side, const char *line)
{
	put(user, side, line);
}

static void *run_main(void *arg)
{
	struct srv *v = arg;
	v->rc = txs_server_run(v->s);
	return NULL;
}

static void start(struct srv *v, struct txs_server_conf *c, const char *logname)
{
	memset(v, 0, sizeof(*v));
	t_tmppath(v->log, sizeof(v->log), logname);
	c->bind = "127.0.0.1";
	c->control_port = 0;
	if (c->iperf2_port == TXS_SERVER_IP2_PORT)
		c->iperf2_port = 0; /* the iperf 2 service on a port of the kernel's choice: never the host's 5001 */
	struct txs_server_hooks h = { .user = v->log, .log = h_log, .msg = h_msg, .summary = h_summary,
				      .side_msg = h_side };
	char err[512];
	int rc = txs_server_open(&v->s, c, &h, err, sizeof(err));
	if (rc)
		fail_msg("open: %d %s", rc, err);
	assert_true(txs_server_port(v->s) > 0);
	assert_int_equal(pthread_create(&v->th, NULL, run_main, v), 0);
}

/* Join within secs: a run that hangs fails the test. */
static void join_within(struct srv *v, double secs)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)secs;
	assert_int_equal(pthread_timedjoin_np(v->th, NULL, &ts), 0);
	txs_server_close(v->s);
}

static char *slurp_log(const struct srv *v)
{
	size_t n;
	char *b = txs_slurp(v->log, &n);
	return b ? b : strdup("");
}

static void assert_logged(const struct srv *v, const char *what)
{
	char *b = slurp_log(v);
	if (!strstr(b, what))
		fail_msg("'%s' not in the server's lines:\n%s", what, b);
	free(b);
}

/* A TCP connection to the server from the local address from. */
static int conn(const struct srv *v, const char *from)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, from, &a.sin_addr);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	a.sin_port = htons(txs_server_port(v->s));
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* The server's first message on fd: its type, the message text into msg. */
static int first(int fd, char *msg, size_t len)
{
	struct txs_ctl_msg m;
	char err[256];
	int rc = txs_ctl_read(fd, &m, TXS_CTL_SMALL_MAX, 10000, err, sizeof(err));
	if (rc)
		fail_msg("read: %d %s", rc, err);
	int t = m.type;
	snprintf(msg, len, "%s", m.message);
	txs_ctl_msg_free(&m);
	return t;
}

/* ---- the config -------------------------------------------------------------------------------- */

static void refused(const struct txs_server_conf *c, const char *want)
{
	char err[512] = "";
	assert_int_equal(txs_server_conf_check(c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
	struct txs_server *s = (struct txs_server *)1;
	assert_int_equal(txs_server_open(&s, c, NULL, err, sizeof(err)), -EINVAL);
	assert_null(s);
}

static void test_conf_check(void **st)
{
	(void)st;
	struct txs_server_conf c;
	txs_server_conf_init(&c);
	char err[512];
	assert_int_equal(txs_server_conf_check(&c, err, sizeof(err)), 0);
	assert_int_equal(c.control_port, 5201);
	assert_true(c.max_time == 300 && c.ctl_timeout == 10);
	c.max_time = 0;
	refused(&c, "bad value for --max-time: '0': expected 0 < SEC <= 86400");
	txs_server_conf_init(&c);
	c.ctl_timeout = 0.01;
	refused(&c, "bad value for --ctl-timeout: '0.01': expected 0.1 to 3600 seconds");
	txs_server_conf_init(&c);
	c.allow_dest = "foo";
	refused(&c, "bad value for --allow-dest: 'foo': bad address in 'foo': expected an IPv4 or IPv6 address");
	txs_server_conf_init(&c);
	c.bind = "1.2.3";
	refused(&c, "bad value for -B/--bind: '1.2.3': expected an IPv4 or IPv6 address");
	txs_server_conf_init(&c);
	char key[256];
	t_tmppath(key, sizeof(key), "empty.key");
	fclose(fopen(key, "w"));
	c.auth_file = key;
	char want[600];
	snprintf(want, sizeof(want), "bad value for --auth-file: '%s': the file is empty", key);
	refused(&c, want);
	txs_server_conf_init(&c);
	c.max_sessions = TXS_SERVER_SESSIONS_MAX + 1;
	refused(&c, "bad value for --max-sessions: '1025': expected 1..1024");
	txs_server_conf_init(&c);
	c.metrics.addr = "nowhere";
	struct txs_server *s;
	assert_int_equal(txs_server_open(&s, &c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad value for --metrics: 'nowhere': expected ADDR:PORT, e.g. 127.0.0.1:9101 or "
				 "[::1]:9101");
}

/* ---- admission, stop ----------------------------------------------------------------------------- */

static void test_busy_and_stop(void **st)
{
	(void)st;
	struct txs_server_conf c;
	txs_server_conf_init(&c);
	c.max_sessions = 2;
	c.max_per_client = 1;
	c.ctl_timeout = 20; /* the admitted sessions wait for their setup until stopped */
	char mf[256];
	t_tmppath(mf, sizeof(mf), "busy.prom");
	c.metrics.file = mf;
	struct srv v;
	start(&v, &c, "busy.log");
	char msg[TXS_CTL_TEXT_MAX];

	int a = conn(&v, "127.0.0.1");
	assert_int_equal(first(a, msg, sizeof(msg)), TXS_CTL_HELLO);
	int a2 = conn(&v, "127.0.0.1");
	assert_int_equal(first(a2, msg, sizeof(msg)), TXS_CTL_BUSY);
	assert_string_equal(msg, "1 session from 127.0.0.1 runs, the most per client (--max-sessions-per-client 1); "
				 "try again later");
	int b = conn(&v, "127.0.0.2");
	assert_int_equal(first(b, msg, sizeof(msg)), TXS_CTL_HELLO);
	int d = conn(&v, "127.0.0.3");
	assert_int_equal(first(d, msg, sizeof(msg)), TXS_CTL_BUSY);
	assert_string_equal(msg, "2 sessions run, this server's most (--max-sessions 2); try again later");

	txs_server_stop(v.s); /* from this thread, while run runs in another */
	join_within(&v, 10);
	assert_int_equal(v.rc, 0);
	assert_logged(&v, "log: listening on 127.0.0.1 port ");
	assert_logged(&v, "sessions at once: at most 2 (1 per client)");
	assert_logged(&v, "log: session 1 (127.0.0.1): connected");
	assert_logged(&v, "log: 127.0.0.1: busy (refused: 1 session from 127.0.0.1 runs");
	assert_logged(&v, "log: 127.0.0.3: busy (refused: 2 sessions run, this server's most");
	assert_logged(&v, "log: stopped after 2 sessions");
	/* the sessions were stopped: their connections are closed */
	char e[256];
	struct txs_ctl_msg m;
	assert_int_equal(txs_ctl_read(a, &m, TXS_CTL_SMALL_MAX, 5000, e, sizeof(e)), -ECONNRESET);
	txs_ctl_msg_free(&m);
	/* the metrics' last file */
	size_t n;
	char *p = txs_slurp(mf, &n);
	assert_non_null(p);
	assert_non_null(strstr(p, "txscale_server_sessions_total 2\n"));
	assert_non_null(strstr(p, "txscale_server_sessions_refused_total{reason=\"max-sessions\"} 1\n"));
	assert_non_null(strstr(p, "txscale_server_sessions_refused_total{reason=\"max-sessions-per-client\"} 1\n"));
	/* ... written after the stopped sessions ended */
	assert_non_null(strstr(p, "txscale_server_sessions_active 0\n"));
	assert_null(strstr(p, "txscale_server_session_running{session=\"1\",client=\"127.0.0.1\"} 1\n"));
	free(p);
	/* the stopped sessions removed their temporary directories */
	DIR *dir = opendir(t_tmpdir);
	assert_non_null(dir);
	for (struct dirent *de; (de = readdir(dir));)
		assert_null(strstr(de->d_name, "txscale-server."));
	closedir(dir);
	close(a);
	close(a2);
	close(b);
	close(d);
}

/* ---- one-off ------------------------------------------------------------------------------------- */

static int one_off(const char *logname, enum txs_ctl_type say, const char *want_log)
{
	struct txs_server_conf c;
	txs_server_conf_init(&c);
	c.one_off = true;
	c.ctl_timeout = 5;
	struct srv v;
	start(&v, &c, logname);
	char msg[TXS_CTL_TEXT_MAX], err[256];
	int fd = conn(&v, "127.0.0.1");
	assert_int_equal(first(fd, msg, sizeof(msg)), TXS_CTL_HELLO);
	struct txs_ctl_msg m = { .type = say, .test = 1 };
	assert_int_equal(txs_ctl_write(fd, &m, 2000, err, sizeof(err)), 0);
	join_within(&v, 10); /* no stop: the session's end ends the run */
	assert_logged(&v, "one session");
	assert_logged(&v, want_log);
	close(fd);
	return v.rc;
}

static void test_one_off(void **st)
{
	(void)st;
	assert_int_equal(one_off("bye.log", TXS_CTL_BYE, "log: session 1 (127.0.0.1): done after 0 tests"), 0);
	/* a session that failed: its status */
	assert_int_equal(one_off("bad.log", TXS_CTL_READY, "log: session 1 (127.0.0.1): error: expected setup, got ready"), 1);
}

/* ---- a reverse test: the server's sender, our socket ------------------------------------------- */

struct fake_rx {
	int fd;
	unsigned got;
	char *peer;
};

static void drain(struct fake_rx *k)
{
	char b[2048];
	while (recv(k->fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		k->got++;
}

static int f_recv_start(void *arg, const char *local, const int64_t *off, char *err, size_t errlen)
{
	(void)arg, (void)local, (void)off, (void)err, (void)errlen;
	return 0;
}

static int f_peer(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	(void)c;
	struct fake_rx *k = arg;
	k->peer = strdup(summary);
	return 0;
}

static bool f_ended(void *arg, int side)
{
	(void)side;
	drain(arg);
	return true;
}

static void f_stop(void *arg, int side)
{
	(void)arg, (void)side;
}

static bool f_recv_finish(void *arg)
{
	drain(arg);
	return true;
}

static void test_reverse(void **st)
{
	(void)st;
	struct fake_rx k = { .fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) };
	struct sockaddr_in a = { .sin_family = AF_INET };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	socklen_t al = sizeof(a);
	assert_int_equal(bind(k.fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(k.fd, (struct sockaddr *)&a, &al), 0);

	struct txs_server_conf c;
	txs_server_conf_init(&c);
	c.one_off = true;
	c.max_time = 30;
	struct srv v;
	start(&v, &c, "rev.log");
	char err[512];
	int why;
	struct txs_ctl_client *cl = txs_ctl_client_greet(conn(&v, "127.0.0.1"), "127.0.0.1", NULL, 10, &why, err,
							  sizeof(err));
	if (!cl)
		fail_msg("greet: %s", err);
	struct txs_ctl_client_test t = { .rev = true, .est = 1, .own_idle = 0.2, .extra = 10 };
	t.send = (struct txs_ctl_send_spec){ .port = ntohs(a.sin_port), .length = 64, .rate = 1000, .count = 100 };
	struct txs_ctl_client_ops ops = { .arg = &k, .recv_start = f_recv_start, .peer_summary = f_peer,
					  .ended = f_ended, .stop = f_stop, .recv_finish = f_recv_finish };
	struct txs_ctl_client_result res;
	int rc = txs_ctl_client_run(cl, &t, &ops, &res, err, sizeof(err));
	if (rc) {
		char *l = slurp_log(&v);
		fail_msg("run: %d %s\nserver:\n%s", rc, err, l);
	}
	txs_ctl_client_close(cl, true);
	join_within(&v, 10);
	assert_int_equal(v.rc, 0);
	json_t *j = json_loads(res.peer_send, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "send");
	assert_int_equal(json_integer_value(json_object_get(j, "packets")), 100);
	json_decref(j);
	assert_int_equal(k.got, 100); /* loopback: every datagram it says it sent */
	assert_logged(&v, "log: session 1 (127.0.0.1): test 1: send to 127.0.0.1");
	assert_logged(&v, "summary: 1 127.0.0.1 sender {\"type\":\"summary\",\"kind\":\"send\"");
	assert_logged(&v, "log: session 1 (127.0.0.1): done after 1 test");
	free(res.peer_send);
	free(res.peer_recv);
	free(k.peer);
	close(k.fd);
}

/* ---- the sides' configs from specs ------------------------------------------------------------- */

static void test_side_confs(void **st)
{
	(void)st;
	struct txs_ctl_recv_spec r = { .on = true, .port = 9000 };
	snprintf(r.dev, sizeof(r.dev), "udp");
	struct txs_recv_conf rc;
	char port[8], err[256];
	assert_int_equal(txs_srv_recv_conf(&rc, &r, "127.0.0.1", port, 1, 40, "/x/peer.json", err, sizeof(err)), 0);
	/* recv's option table: --dev udp -i 1 (the server: 0) --window 4096 --max-flows 4096 --batch 64
	 * --rx-timestamps kernel --payload txscale; not pinned */
	assert_string_equal(rc.dev, "udp");
	assert_string_equal(rc.port, "9000");
	assert_string_equal(rc.bind, "127.0.0.1");
	assert_int_equal(rc.window, 4096);
	assert_int_equal(rc.max_flows, 4096);
	assert_int_equal(rc.batch, 64);
	assert_string_equal(rc.rx_ts, "kernel");
	assert_string_equal(rc.payload, "txscale");
	assert_true(rc.interval == 0 && rc.idle == 1 && rc.time == 40);
	assert_string_equal(rc.sender_summary, "/x/peer.json");
	assert_int_equal(rc.n_affinity, 0);
	assert_int_equal(rc.cpu[0], -1);
	assert_false(rc.clock_offset_set);
	assert_false(rc.verify || rc.reuseport || rc.v4 || rc.v6);
	assert_int_equal(rc.rcvbuf, 0);
	assert_int_equal(txs_recv_conf_check(&rc, err, sizeof(err)), 0);
	/* the spec's values */
	r.window = 256;
	r.rcvbuf = 1 << 20;
	r.threads = 1;
	snprintf(r.cpus, sizeof(r.cpus), "0");
	r.clock = (struct txs_ctl_clock_rep){ .on = true, .offset_ns = -5 };
	assert_int_equal(txs_srv_recv_conf(&rc, &r, "127.0.0.1", port, 1, 40, NULL, err, sizeof(err)), 0);
	assert_int_equal(rc.window, 256);
	assert_int_equal(rc.rcvbuf, 1 << 20);
	assert_int_equal(rc.n_affinity, 1);
	assert_int_equal(rc.cpu[0], 0);
	assert_true(rc.clock_offset_set && rc.clock_offset_ns == -5);
	snprintf(r.cpus, sizeof(r.cpus), "x");
	assert_int_equal(txs_srv_recv_conf(&rc, &r, "127.0.0.1", port, 1, 40, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad value for -A/--affinity: 'x': "));

	struct txs_ctl_send_spec sd = { .on = true, .port = 9001, .length = 100, .rate = 500, .count = 7 };
	struct txs_send_conf sc;
	char len[16];
	assert_int_equal(txs_srv_send_conf(&sc, &sd, "127.0.0.1", "127.0.0.2", 20, len, err, sizeof(err)), 0);
	assert_string_equal(sc.dev, "udp");
	assert_string_equal(sc.dest, "127.0.0.2");
	assert_string_equal(sc.bind, "127.0.0.1");
	assert_int_equal(sc.port, 9001);
	assert_string_equal(sc.length, "100");
	assert_true(sc.rate.value == 500 && !sc.rate.bits && sc.time == 20 && sc.count == 7 && sc.interval == 0);
	/* send's option table defaults */
	assert_string_equal(sc.sport, "40000");
	assert_int_equal(sc.ttl, 64);
	assert_string_equal(sc.ident, "lease");
	assert_string_equal(sc.pace, "const");
	assert_string_equal(sc.timestamps, "burst");
	assert_true(sc.replay_speed == 1 && sc.miimon == 100 && sc.n_cpus == 0 && !sc.gso_off && sc.gso_size == 0);
	snprintf(sd.timestamps, sizeof(sd.timestamps), "packet");
	assert_int_equal(txs_srv_send_conf(&sc, &sd, "127.0.0.1", "127.0.0.2", 20, len, err, sizeof(err)), 0);
	assert_string_equal(sc.timestamps, "packet");
	assert_int_equal(txs_send_conf_check(&sc, NULL, err, sizeof(err)), 0);
}

/* ---- iperf 2 clients ------------------------------------------------------------------------------- */

/* an iperf 2 client's datagram as 2.1.8 writes it (64 bytes, its header flags zero) */
static void ip2_send(int fd, int64_t id)
{
	uint8_t b[64] = { 0 };
	txs_ip2_hdr_write(b, id, 1700000000, 5);
	assert_int_equal(send(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
}

static bool ip2_report(int fd, struct txs_ip2_report *r)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	if (poll(&pf, 1, 3000) != 1)
		return false;
	uint8_t b[512];
	ssize_t n = recv(fd, b, sizeof(b), 0);
	assert_int_equal(n, TXS_IP2_REPORT_LEN);
	assert_int_equal(txs_ip2_report_read(b, (size_t)n, r), 0);
	return true;
}

static void test_iperf2(void **st)
{
	(void)st;
	struct txs_server_conf c;
	txs_server_conf_init(&c);
	assert_int_equal(c.iperf2_port, 5001);
	struct srv v;
	start(&v, &c, "ip2.log");
	uint16_t port = txs_server_iperf2_port(v.s);
	assert_true(port > 0);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	/* ids 1..100: 7, 8 and 50 never come, 20 comes after 21, 30 twice; then the end (-101) */
	for (int64_t id = 1; id <= 100; id++) {
		if (id == 7 || id == 8 || id == 50 || id == 20)
			continue;
		ip2_send(fd, id);
		if (id == 21)
			ip2_send(fd, 20);
		if (id == 30)
			ip2_send(fd, 30);
	}
	ip2_send(fd, -101);
	struct txs_ip2_report r;
	assert_true(ip2_report(fd, &r));
	assert_int_equal(r.flags, TXS_IP2_F_VERSION1 | TXS_IP2_F_SEQNO64B);
	assert_int_equal(r.datagrams, 101);
	assert_int_equal(r.errors, 3);
	assert_int_equal(r.out_of_order, 1);
	assert_int_equal(r.bytes, 99 * 64); /* 97 ids, 20 late, 30 again, the end */
	/* the client's retry (the next magnitude): the same report again */
	ip2_send(fd, -102);
	struct txs_ip2_report r2;
	assert_true(ip2_report(fd, &r2));
	assert_int_equal(r2.datagrams, 101);
	assert_int_equal(r2.errors, 3);
	/* an end with no test before it (a forged source, maybe) is not answered */
	int fd2 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(fd2, (struct sockaddr *)&a, sizeof(a)), 0);
	ip2_send(fd2, -((int64_t)1 << 40));
	struct pollfd pf = { .fd = fd2, .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 300), 0);
	/* a client asking for traffic back (-d: HEADER_VERSION1 in its flags, as 2.1.8 writes them) */
	int fd3 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(fd3, (struct sockaddr *)&a, sizeof(a)), 0);
	uint8_t d[64] = { 0 };
	txs_ip2_hdr_write(d, 1, 1700000000, 5);
	d[16] = 0xc8, d[17] = 0x01, d[18] = 0x00, d[19] = 0x99;
	assert_int_equal(send(fd3, d, sizeof(d), 0), (ssize_t)sizeof(d));
	ip2_send(fd3, -2);
	assert_true(ip2_report(fd3, &r));
	assert_int_equal(r.datagrams, 2);
	assert_int_equal(r.errors, 0);
	close(fd3);
	usleep(200 * 1000); /* the accept loop's next round logs the test */
	txs_server_stop(v.s);
	join_within(&v, 10);
	assert_logged(&v, "log: iperf 2 UDP clients on 127.0.0.1 port ");
	assert_logged(&v, "101 datagrams (the end's id 101): received 98, lost 3 (2.97%) exact, duplicates 1, reordered 1");
	assert_logged(&v, "\"device\":\"iperf2\",\"client\":\"127.0.0.1\"");
	assert_logged(&v, "\"lost\":3,\"lost_exact\":true,\"expected\":101");
	assert_logged(&v, "asked for traffic back (-d or -r), which this server does not send: its own datagrams are counted");
	close(fd);
	close(fd2);
	/* the port the user named, taken: an error; the default taken: said, and the server runs */
	int hold = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in h = { .sin_family = AF_INET };
	inet_pton(AF_INET, "127.0.0.1", &h.sin_addr);
	socklen_t hl = sizeof(h);
	assert_int_equal(bind(hold, (struct sockaddr *)&h, sizeof(h)), 0);
	assert_int_equal(getsockname(hold, (struct sockaddr *)&h, &hl), 0);
	struct txs_server_conf c2;
	txs_server_conf_init(&c2);
	c2.bind = "127.0.0.1";
	c2.control_port = 0;
	c2.iperf2_port = ntohs(h.sin_port);
	c2.iperf2_required = true;
	struct txs_server *s2 = NULL;
	char err[512];
	assert_int_equal(txs_server_open(&s2, &c2, NULL, err, sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, "--iperf2-port: cannot bind 127.0.0.1 UDP port"));
	c2.iperf2_required = false;
	assert_int_equal(txs_server_open(&s2, &c2, NULL, err, sizeof(err)), 0);
	assert_int_equal(txs_server_iperf2_port(s2), 0);
	txs_server_close(s2);
	close(hold);
}

/* the sessions' temporary directories in ours */
static int setup(void **st)
{
	int rc = t_tmpdir_setup(st);
	return rc ? rc : setenv("TMPDIR", t_tmpdir, 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_check),
		cmocka_unit_test(test_side_confs),
		cmocka_unit_test(test_busy_and_stop),
		cmocka_unit_test(test_one_off),
		cmocka_unit_test(test_reverse),
		cmocka_unit_test(test_iperf2),
	};
	return cmocka_run_group_tests(tests, setup, t_tmpdir_teardown);
}
