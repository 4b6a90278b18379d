/* SPDX-License-Identifier: MIT */
/* lib/ctl/iperf3_run.c against hostile peers on loopback (a fake peer in a
 * child process speaks iperf3's protocol and then misbehaves):
 *  - a server whose results carry a negative count, a fractional one, or a
 *    count over 2^53: the client refuses them (-EPROTO), no figures kept
 *  - a server that closes the control connection mid-test: the client's
 *    test ends at once (not at its -t)
 *  - a server that goes silent after TEST_END: the client gives up within
 *    its control timeout
 *  - a client asking for 1000 streams, or sending 9000 bytes of parameters:
 *    the server refuses with iperf3's error (IENUMSTREAMS, IERECVPARAMS)
 *  - a stream handshake from another address than the control peer's: not
 *    accepted, counted
 *  - a client that leaves mid-test: the server's test ends at once
 *  - -R -k from a server whose sender stalls: the client ends the test the
 *    control timeout after the last datagram, its loss exact
 * Each case is bounded in time; the fake peer is killed at the end. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include "test_util.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A TCP listener and a UDP socket on the same loopback port. */
static int listen_pair(int *udp, struct sockaddr_in *sa)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(l >= 0);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int port = 40000 + getpid() % 10000, k = 0; k < 100; k++, port++) {
		sa->sin_port = htons((uint16_t)port);
		if (bind(l, (struct sockaddr *)sa, sizeof(*sa)) < 0)
			continue;
		*udp = socket(AF_INET, SOCK_DGRAM, 0);
		if (bind(*udp, (struct sockaddr *)sa, sizeof(*sa)) == 0) {
			assert_int_equal(listen(l, 4), 0);
			return l;
		}
		close(*udp);
		close(l);
		l = socket(AF_INET, SOCK_STREAM, 0);
	}
	fail_msg("no free loopback port");
	return -1;
}

static int dial(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)sa, sizeof(*sa)), 0);
	return fd;
}

enum srv_mode { S_BAD_COUNT, S_FRACTION, S_HUGE, S_VANISH, S_SILENT, S_REV_STALL, S_REFUSE_RATE };

/* The fake server: a clean setup of one stream, then the misbehaviour. */
static void fake_server(int l, int udp, enum srv_mode mode)
{
	int c = accept(l, NULL, NULL);
	char cookie[TXS_IP3_COOKIE_LEN];
	if (txs_ip3_read_full(c, cookie, sizeof(cookie), 2000))
		_exit(1);
	txs_ip3_write_state(c, TXS_IP3_PARAM_EXCHANGE, 1000);
	char *j;
	size_t n;
	if (txs_ip3_read_json(c, TXS_IP3_PARAM_MAX, 2000, &j, &n))
		_exit(1);
	free(j);
	if (mode == S_REFUSE_RATE) { /* as a server over its bitrate limit refuses */
		txs_ip3_write_error(c, TXS_IP3_IETOTALRATE, 0, 1000);
		usleep(100 * 1000);
		_exit(0);
	}
	txs_ip3_write_state(c, TXS_IP3_CREATE_STREAMS, 1000);
	uint8_t b[64];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	if (recvfrom(udp, b, sizeof(b), 0, (struct sockaddr *)&from, &fl) != 4)
		_exit(1);
	uint8_t reply[4];
	txs_ip3_udp_reply(txs_ip3_udp_msg_kind(b, 4), reply);
	sendto(udp, reply, 4, 0, (struct sockaddr *)&from, fl);
	txs_ip3_write_state(c, TXS_IP3_TEST_START, 1000);
	txs_ip3_write_state(c, TXS_IP3_TEST_RUNNING, 1000);
	if (mode == S_VANISH) {
		usleep(200 * 1000);
		close(c);
		_exit(0);
	}
	if (mode == S_REV_STALL) { /* sends 50 of its 100, then nothing: a stalled sender */
		uint8_t d[100] = { 0 };
		for (uint64_t q = 1; q <= 50; q++) {
			txs_ip3_hdr_write(d, 1, 0, q, true);
			sendto(udp, d, sizeof(d), 0, (struct sockaddr *)&from, fl);
		}
	}
	int st;
	while (txs_ip3_read_state(c, &st, 10000) == 0 && st != TXS_IP3_TEST_END)
		;
	if (mode == S_SILENT) {
		sleep(5);
		_exit(0);
	}
	txs_ip3_write_state(c, TXS_IP3_EXCHANGE_RESULTS, 1000);
	if (txs_ip3_read_json(c, TXS_IP3_RESULTS_MAX, 2000, &j, &n))
		_exit(1);
	free(j);
	/* S_REV_STALL: honest, it says it sent 100 of 100 bytes each */
	const char *count = mode == S_BAD_COUNT ? "-5" : mode == S_FRACTION ? "10.5" : mode == S_REV_STALL ? "10000" : "1e17";
	char res[512];
	snprintf(res, sizeof(res),
		 "{\"cpu_util_total\":1,\"cpu_util_user\":1,\"cpu_util_system\":0,\"sender_has_retransmits\":0,"
		 "\"streams\":[{\"id\":1,\"bytes\":%s,\"retransmits\":-1,\"jitter\":0,\"errors\":0,\"packets\":%s}]}",
		 count, mode == S_REV_STALL ? "100" : "10");
	txs_ip3_write_json(c, res, strlen(res), 1000);
	txs_ip3_write_state(c, TXS_IP3_DISPLAY_RESULTS, 1000);
	txs_ip3_read_state(c, &st, 2000);
	_exit(0);
}

static int client_against_p(enum srv_mode mode, const struct txs_ip3_params *p, int ctl_ms, struct txs_ip3_test *t,
			    char *err, size_t errlen, double *took)
{
	int udp;
	struct sockaddr_in sa;
	int l = listen_pair(&udp, &sa);
	pid_t pid = fork();
	if (pid == 0)
		fake_server(l, udp, mode);
	close(udp);
	int fd = dial(&sa);
	close(l);
	memset(t, 0, sizeof(*t));
	t->p = *p;
	struct sockaddr_storage ss;
	memcpy(&ss, &sa, sizeof(sa));
	struct txs_ip3_cli_conf cc = { .server = &ss, .ctl_timeout_ms = ctl_ms };
	int e = 0;
	double t0 = now_s();
	int rc = txs_ip3_client_run(fd, &cc, t, &e, err, errlen);
	*took = now_s() - t0;
	close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc;
}

static int client_against(enum srv_mode mode, unsigned secs, int ctl_ms, struct txs_ip3_test *t, char *err,
			  size_t errlen, double *took)
{
	struct txs_ip3_params p = { .proto = TXS_IP3_UDP, .time = secs, .parallel = 1, .len = 100,
				    .bandwidth = 800000, .udp_counters_64bit = true };
	return client_against_p(mode, &p, ctl_ms, t, err, errlen, took);
}

static void test_client_hostile_counts(void **st)
{
	(void)st;
	const enum srv_mode modes[] = { S_BAD_COUNT, S_FRACTION, S_HUGE };
	const char *words[] = { "negative", "whole number", "exact" };
	for (unsigned i = 0; i < 3; i++) {
		struct txs_ip3_test t;
		char err[256] = "";
		double took;
		int rc = client_against(modes[i], 1, 2000, &t, err, sizeof(err), &took);
		if (rc != -EPROTO || !strstr(err, words[i]))
			fprintf(stderr, "mode %u: rc %d: %s\n", i, rc, err);
		assert_int_equal(rc, -EPROTO);
		assert_non_null(strstr(err, "bytes"));
		assert_non_null(strstr(err, words[i]));
		assert_false(t.have_peer);
		assert_true(t.s[0].sent > 0);
		txs_ip3_test_free(&t);
	}
}

static void test_client_server_vanishes(void **st)
{
	(void)st;
	struct txs_ip3_test t;
	char err[256] = "";
	double took;
	int rc = client_against(S_VANISH, 10, 2000, &t, err, sizeof(err), &took);
	assert_int_equal(rc, -ECONNRESET);
	assert_non_null(strstr(err, "closed"));
	assert_true(took < 3.0); /* not its -t of 10 s */
	txs_ip3_test_free(&t);
}

/* A server's SERVER_ERROR: -EREMOTEIO, the number and iperf3's own words for it */
static void test_client_server_refuses(void **st)
{
	(void)st;
	struct txs_ip3_test t;
	char err[256] = "";
	double took;
	int rc = client_against(S_REFUSE_RATE, 1, 2000, &t, err, sizeof(err), &took);
	if (rc != -EREMOTEIO || !strstr(err, "iperf3 error 27 (total required bandwidth is larger than server limit)"))
		fprintf(stderr, "rc %d: %s\n", rc, err);
	assert_int_equal(rc, -EREMOTEIO);
	assert_non_null(strstr(err, "iperf3 error 27 (total required bandwidth is larger than server limit)"));
	txs_ip3_test_free(&t);
}

static void test_client_server_silent(void **st)
{
	(void)st;
	struct txs_ip3_test t;
	char err[256] = "";
	double took;
	int rc = client_against(S_SILENT, 1, 400, &t, err, sizeof(err), &took);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(took > 1.0 && took < 1.0 + 0.4 * 2 + 1.0);
	txs_ip3_test_free(&t);
}

/* -R -k 100 from a server whose sender stalls after 50: the client ends its
 * test the control timeout after the last datagram, and the loss is exact */
static void test_client_reverse_stall(void **st)
{
	(void)st;
	struct txs_ip3_params p = { .proto = TXS_IP3_UDP, .blockcount = 100, .parallel = 1, .len = 100,
				    .reverse = true, .udp_counters_64bit = true };
	struct txs_ip3_test t;
	char err[256] = "";
	double took;
	int rc = client_against_p(S_REV_STALL, &p, 500, &t, err, sizeof(err), &took);
	if (rc)
		fprintf(stderr, "rc %d: %s\n", rc, err);
	assert_int_equal(rc, 0);
	assert_true(took < 3.0);
	assert_int_equal(t.s[0].rx.unique, 50);
	uint64_t sent;
	assert_true(txs_ip3_peer_sent(&t, 1, &sent));
	assert_int_equal(sent, 100);
	assert_int_equal(txs_ip3_rx_lost(&t.s[0].rx, sent, NULL), 50);
	txs_ip3_test_free(&t);
}

/* ---- the server against hostile clients ----------------------------------------------------------- */

struct srv_run {
	int rc, ip3_err;
	uint64_t ignored;
	char err[256];
};

/* Run txs_ip3_serve in a child on the accepted fd; the result comes back over a pipe. */
static pid_t serve_child(int l, const struct sockaddr_in *sa, int ctl_ms, int *rpipe)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct sockaddr_storage local, peer;
		socklen_t pl = sizeof(peer);
		int c = accept(l, (struct sockaddr *)&peer, &pl);
		memset(&local, 0, sizeof(local));
		memcpy(&local, sa, sizeof(*sa));
		struct txs_ip3_srv_conf sc = { .local = &local, .peer = &peer, .max_time = 30, .ctl_timeout_ms = ctl_ms };
		struct txs_ip3_test t;
		struct srv_run r = { 0 };
		r.rc = txs_ip3_serve(c, &sc, &t, &r.ip3_err, r.err, sizeof(r.err));
		r.ignored = t.ignored;
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	*rpipe = p[0];
	return pid;
}

static void srv_result(pid_t pid, int rp, struct srv_run *r)
{
	struct pollfd pf = { .fd = rp, .events = POLLIN };
	assert_true(poll(&pf, 1, 10000) == 1);
	assert_int_equal(read(rp, r, sizeof(*r)), sizeof(*r));
	close(rp);
	waitpid(pid, NULL, 0);
}

/* A client's first steps: cookie, then (after PARAM_EXCHANGE) json. */
static int client_start(const struct sockaddr_in *sa, const char *json, size_t n)
{
	int fd = dial(sa);
	char cookie[TXS_IP3_COOKIE_LEN];
	txs_ip3_cookie_make(cookie);
	assert_int_equal(txs_ip3_write_full(fd, cookie, sizeof(cookie), 1000), 0);
	int st;
	assert_int_equal(txs_ip3_read_state(fd, &st, 2000), 0);
	assert_int_equal(st, TXS_IP3_PARAM_EXCHANGE);
	assert_int_equal(txs_ip3_write_json(fd, json, n, 1000), 0);
	return fd;
}

static void test_server_refusals(void **st)
{
	(void)st;
	static char big[9000];
	const char many[] = "{\"udp\":true,\"time\":1,\"len\":100,\"parallel\":1000}";
	memset(big, ' ', sizeof(big));
	big[0] = '{';
	big[sizeof(big) - 1] = '}';
	const struct {
		const char *json;
		size_t n;
		int want;
	} cases[] = {
		{ many, sizeof(many) - 1, TXS_IP3_IENUMSTREAMS },
		{ big, sizeof(big), TXS_IP3_IERECVPARAMS },
	};
	for (unsigned i = 0; i < 2; i++) {
		int udp, rp;
		struct sockaddr_in sa;
		int l = listen_pair(&udp, &sa);
		close(udp);
		pid_t pid = serve_child(l, &sa, 1000, &rp);
		int fd = client_start(&sa, cases[i].json, cases[i].n);
		int s;
		assert_int_equal(txs_ip3_read_state(fd, &s, 3000), 0);
		assert_int_equal(s, TXS_IP3_SERVER_ERROR);
		uint8_t b[8];
		assert_int_equal(txs_ip3_read_full(fd, b, 8, 1000), 0);
		assert_int_equal(b[3], cases[i].want);
		struct srv_run r;
		srv_result(pid, rp, &r);
		assert_true(r.rc < 0);
		close(fd);
		close(l);
	}
}

static void test_server_foreign_handshake(void **st)
{
	(void)st;
	int udp, rp;
	struct sockaddr_in sa;
	int l = listen_pair(&udp, &sa);
	close(udp);
	pid_t pid = serve_child(l, &sa, 600, &rp);
	const char p[] = "{\"udp\":true,\"time\":1,\"len\":100,\"parallel\":1}";
	int fd = client_start(&sa, p, sizeof(p) - 1);
	int s;
	assert_int_equal(txs_ip3_read_state(fd, &s, 2000), 0);
	assert_int_equal(s, TXS_IP3_CREATE_STREAMS);
	/* the handshake from 127.0.0.2: another address than the control connection's */
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in other = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002) };
	assert_int_equal(bind(u, (struct sockaddr *)&other, sizeof(other)), 0);
	uint8_t m[4];
	txs_ip3_udp_msg(m);
	assert_int_equal(sendto(u, m, 4, 0, (struct sockaddr *)&sa, sizeof(sa)), 4);
	struct pollfd pf = { .fd = u, .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 300), 0); /* no reply */
	struct srv_run r;
	srv_result(pid, rp, &r);
	assert_int_equal(r.rc, -ETIMEDOUT);
	assert_int_equal(r.ignored, 1);
	close(u);
	close(fd);
	close(l);
}

static void test_server_client_vanishes(void **st)
{
	(void)st;
	int udp, rp;
	struct sockaddr_in sa;
	int l = listen_pair(&udp, &sa);
	close(udp);
	pid_t pid = serve_child(l, &sa, 2000, &rp);
	const char p[] = "{\"udp\":true,\"time\":10,\"len\":100,\"parallel\":1}";
	int fd = client_start(&sa, p, sizeof(p) - 1);
	int s;
	assert_int_equal(txs_ip3_read_state(fd, &s, 2000), 0);
	assert_int_equal(s, TXS_IP3_CREATE_STREAMS);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(connect(u, (struct sockaddr *)&sa, sizeof(sa)), 0);
	uint8_t m[4];
	txs_ip3_udp_msg(m);
	assert_int_equal(send(u, m, 4, 0), 4);
	uint8_t b[4];
	struct pollfd pf = { .fd = u, .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 2000), 1);
	assert_int_equal(recv(u, b, 4, 0), 4);
	assert_true(txs_ip3_udp_reply_ok(b, 4));
	assert_int_equal(txs_ip3_read_state(fd, &s, 2000), 0);
	assert_int_equal(s, TXS_IP3_TEST_START);
	double t0 = now_s();
	close(fd); /* gone mid-test */
	struct srv_run r;
	srv_result(pid, rp, &r);
	assert_int_equal(r.rc, -ECONNRESET);
	assert_true(now_s() - t0 < 2.0); /* not its -t of 10 s */
	close(u);
	close(l);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_hostile_counts), cmocka_unit_test(test_client_server_vanishes),
		cmocka_unit_test(test_client_server_silent),
		cmocka_unit_test(test_client_server_refuses),  cmocka_unit_test(test_client_reverse_stall),
		cmocka_unit_test(test_server_refusals),
		cmocka_unit_test(test_server_foreign_handshake), cmocka_unit_test(test_server_client_vanishes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
