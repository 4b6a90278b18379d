/* SPDX-License-Identifier: MIT */
/* lib/ctl: the control protocol (docs/control.md). Every message type
 * round-trips; each malformed input is refused with its own reason; frames
 * over a socketpair: oversize, truncated, silent peer (timeout), trickling
 * peer (one deadline per frame); the HMAC; the allow-list. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/ctl.h>
#include "test_util.h"

static const char send_sum[] = "{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1000,\"threads\":[{\"id\":0,\"packets\":1000}]}";
static const char recv_sum[] = "{\"type\":\"summary\",\"kind\":\"recv\",\"received\":990,\"lost\":10,\"lost_exact\":true}";

static struct txs_ctl_msg roundtrip(const struct txs_ctl_msg *m)
{
	char *j, err[256];
	size_t n;
	assert_int_equal(txs_ctl_encode(m, &j, &n, err, sizeof(err)), 0);
	assert_int_equal(strlen(j), n);
	struct txs_ctl_msg d;
	int rc = txs_ctl_decode(&d, j, n, err, sizeof(err));
	if (rc)
		fprintf(stderr, "decode: %s (%s)\n", err, j);
	assert_int_equal(rc, 0);
	free(j);
	assert_int_equal(d.type, m->type);
	return d;
}

static void test_roundtrip(void **state)
{
	(void)state;
	struct txs_ctl_msg m = { .type = TXS_CTL_HELLO, .auth = true, .ports = true };
	snprintf(m.software, sizeof(m.software), "txscale 9.9");
	for (unsigned i = 0; i < sizeof(m.nonce); i++)
		m.nonce[i] = (uint8_t)(i * 37 + 1);
	struct txs_ctl_msg d = roundtrip(&m);
	assert_string_equal(d.software, "txscale 9.9");
	assert_true(d.auth);
	assert_true(d.ports);
	assert_memory_equal(d.nonce, m.nonce, sizeof(m.nonce));
	/* the server's choice of data port: setup.recv.port 0, ready.port names it */
	m = (struct txs_ctl_msg){ .type = TXS_CTL_SETUP, .test = 2 };
	m.recv = (struct txs_ctl_recv_spec){ .on = true, .port = 0 };
	snprintf(m.recv.dev, sizeof(m.recv.dev), "udp");
	d = roundtrip(&m);
	assert_true(d.recv.on);
	assert_int_equal(d.recv.port, 0);
	m = (struct txs_ctl_msg){ .type = TXS_CTL_READY, .test = 2, .port = 40001 };
	d = roundtrip(&m);
	assert_int_equal(d.port, 40001);
	m = (struct txs_ctl_msg){ .type = TXS_CTL_READY, .test = 2 };
	d = roundtrip(&m);
	assert_int_equal(d.port, 0);

	m = (struct txs_ctl_msg){ .type = TXS_CTL_SETUP, .test = 7 };
	m.recv = (struct txs_ctl_recv_spec){ .on = true, .port = 5201, .threads = 2, .rcvbuf = 4096, .window = 1024,
					     .time = 5.5, .idle = 0.5 };
	snprintf(m.recv.dev, sizeof(m.recv.dev), "packet:rx0,rx1");
	snprintf(m.recv.cpus, sizeof(m.recv.cpus), "0-1");
	m.send = (struct txs_ctl_send_spec){ .on = true, .port = 6000, .length = 1400, .rate = 2e5, .count = 1000000,
					     .time = 10, .threads = 3, .no_pin = true };
	snprintf(m.send.dest, sizeof(m.send.dest), "2001:2::1");
	snprintf(m.send.timestamps, sizeof(m.send.timestamps), "interp");
	d = roundtrip(&m);
	assert_string_equal(d.send.timestamps, "interp");
	assert_int_equal(d.test, 7);
	assert_true(d.recv.on && d.send.on);
	assert_int_equal(d.recv.port, 5201);
	assert_string_equal(d.recv.dev, "packet:rx0,rx1");
	assert_string_equal(d.recv.cpus, "0-1");
	assert_int_equal(d.recv.threads, 2);
	assert_int_equal(d.recv.rcvbuf, 4096);
	assert_int_equal(d.recv.window, 1024);
	assert_true(d.recv.time == 5.5 && d.recv.idle == 0.5);
	assert_int_equal(d.send.port, 6000);
	assert_string_equal(d.send.dest, "2001:2::1");
	assert_int_equal(d.send.length, 1400);
	assert_true(d.send.rate == 2e5 && d.send.time == 10);
	assert_int_equal(d.send.count, 1000000);
	assert_true(d.send.no_pin);

	m = (struct txs_ctl_msg){ .type = TXS_CTL_RESULT, .test = 3, .sender = (char *)send_sum,
				  .receiver = (char *)recv_sum };
	d = roundtrip(&m);
	assert_non_null(d.sender);
	assert_non_null(d.receiver);
	assert_non_null(strstr(d.receiver, "\"received\":990"));
	assert_non_null(strstr(d.sender, "\"packets\":1000"));
	txs_ctl_msg_free(&d);
	assert_null(d.sender);

	m = (struct txs_ctl_msg){ .type = TXS_CTL_DONE, .test = 1, .failed = true };
	snprintf(m.message, sizeof(m.message), "the sender failed");
	d = roundtrip(&m);
	assert_true(d.failed);
	assert_null(d.sender);
	assert_string_equal(d.message, "the sender failed");

	const enum txs_ctl_type simple[] = { TXS_CTL_BUSY, TXS_CTL_ERROR, TXS_CTL_READY, TXS_CTL_BYE, TXS_CTL_AUTH };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(simple); i++) {
		m = (struct txs_ctl_msg){ .type = simple[i], .test = 2 };
		snprintf(m.message, sizeof(m.message), "busy: a test from 198.18.0.1 runs");
		memset(m.mac, 0xa5, sizeof(m.mac));
		d = roundtrip(&m);
		if (simple[i] == TXS_CTL_BUSY || simple[i] == TXS_CTL_ERROR)
			assert_string_equal(d.message, m.message);
		if (simple[i] == TXS_CTL_AUTH)
			assert_memory_equal(d.mac, m.mac, sizeof(m.mac));
		assert_string_equal(txs_ctl_type_str(simple[i]), txs_ctl_type_str(d.type));
	}
}

/* decode(text) fails with rc, and err holds want */
static void refuse(const char *text, int rc, const char *want)
{
	struct txs_ctl_msg m;
	char err[256] = "";
	int got = txs_ctl_decode(&m, text, strlen(text), err, sizeof(err));
	if (got != rc || !strstr(err, want))
		fprintf(stderr, "input %s: rc %d (want %d), err '%s' (want '%s')\n", text, got, rc, err, want);
	assert_int_equal(got, rc);
	assert_non_null(strstr(err, want));
	assert_null(m.sender);
	assert_null(m.receiver);
	txs_ctl_msg_free(&m);
}

static void test_refuse(void **state)
{
	(void)state;
	refuse("", -EPROTO, "not JSON");
	refuse("{\"v\":1,\"type\":\"bye\"} trailing", -EPROTO, "not JSON");
	refuse("[1,2]", -EPROTO, "not a JSON object");
	refuse("{\"type\":\"bye\"}", -EPROTO, "no protocol version");
	refuse("{\"v\":\"1\",\"type\":\"bye\"}", -EPROTO, "not an integer");
	refuse("{\"v\":2,\"type\":\"bye\"}", -EPROTONOSUPPORT, "version 2");
	refuse("{\"v\":1}", -EPROTO, "no \"type\"");
	refuse("{\"v\":1,\"type\":\"launch\"}", -EPROTO, "unknown type \"launch\"");
	refuse("{\"v\":1,\"v\":1,\"type\":\"bye\"}", -EPROTO, "not JSON");
	refuse("{\"v\":1,\"type\":\"hello\",\"software\":\"x\",\"auth\":false,\"nonce\":\"00\"}", -EPROTO, "hello.nonce");
	refuse("{\"v\":1,\"type\":\"auth\",\"mac\":\"zz\"}", -EPROTO, "auth.mac");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1}", -EPROTO, "neither");
	refuse("{\"v\":1,\"type\":\"setup\",\"recv\":{\"port\":1,\"dev\":\"udp\"}}", -EPROTO, "setup.test is missing");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":-1,\"dev\":\"udp\"}}", -EPROTO,
	       "setup.recv.port is out of range");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":0,\"length\":16,\"rate\":1,\"count\":1}}", -EPROTO,
	       "setup.send.port is out of range");
	refuse("{\"v\":1,\"type\":\"ready\",\"test\":1,\"port\":0}", -EPROTO, "ready.port is out of range");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":70000,\"dev\":\"udp\"}}", -EPROTO,
	       "setup.recv.port");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"pcap:/etc/shadow\"}}", -EPROTO,
	       "setup.recv.dev");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"packet:../x\"}}", -EPROTO,
	       "setup.recv.dev");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"udp --rcvbuf 1\"}}", -EPROTO,
	       "setup.recv.dev");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"udp\",\"cpus\":\"0,,1\"}}", -EPROTO,
	       "setup.recv.cpus");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"udp\",\"window\":1000}}", -EPROTO,
	       "power of two");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":1,\"dev\":\"udp\",\"time\":-1}}", -EPROTO,
	       "setup.recv.time");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":16}}", -EPROTO, "would not end");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":16,\"time\":1,\"timestamps\":\"exact\"}}",
	       -EPROTO, "timestamps");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":16,\"time\":1,\"timestamps\":\"Packet\"}}",
	       -EPROTO, "timestamps");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":16,\"time\":1,\"dest\":\"evil.com\"}}",
	       -EPROTO, "setup.send.dest");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":16,\"time\":1,\"dest\":\"1.2.3\"}}",
	       -EPROTO, "setup.send.dest");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":70000,\"time\":1}}", -EPROTO,
	       "setup.send.length");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":1,\"time\":1,\"rate\":1e300}}",
	       -EPROTO, "setup.send.rate");
	refuse("{\"v\":1,\"type\":\"setup\",\"test\":1,\"send\":{\"port\":1,\"length\":1,\"time\":1,\"threads\":100000}}",
	       -EPROTO, "setup.send.threads");
	refuse("{\"v\":1,\"type\":\"done\",\"test\":1}", -EPROTO, "done.sender is missing");
	refuse("{\"v\":1,\"type\":\"done\",\"test\":1,\"sender\":{\"type\":\"summary\",\"kind\":\"recv\"}}", -EPROTO,
	       "not a send summary");
	refuse("{\"v\":1,\"type\":\"result\",\"test\":1,\"receiver\":[]}", -EPROTO, "result.receiver is not an object");
	refuse("{\"v\":1,\"type\":\"error\"}", -EPROTO, "error.message is missing");

	/* text shown to a user loses its control characters */
	struct txs_ctl_msg m;
	char err[256];
	const char *esc = "{\"v\":1,\"type\":\"error\",\"message\":\"a\\u001b[2Jb\\n\"}";
	assert_int_equal(txs_ctl_decode(&m, esc, strlen(esc), err, sizeof(err)), 0);
	assert_string_equal(m.message, "a?[2Jb?");
	/* unknown keys are ignored (a later minor addition) */
	const char *extra = "{\"v\":1,\"type\":\"ready\",\"test\":4,\"future\":{\"x\":[1,2]}}";
	assert_int_equal(txs_ctl_decode(&m, extra, strlen(extra), err, sizeof(err)), 0);
	assert_int_equal(m.test, 4);

	/* encode refuses what decode would */
	struct txs_ctl_msg bad = { .type = TXS_CTL_SETUP, .test = 1 };
	bad.recv = (struct txs_ctl_recv_spec){ .on = true, .port = 5201 };
	snprintf(bad.recv.dev, sizeof(bad.recv.dev), "xdp:eth0");
	char *j;
	size_t n;
	assert_int_equal(txs_ctl_encode(&bad, &j, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "setup.recv.dev"));
	assert_null(j);
}

/* ---- frames over a socketpair ---------------------------------------------------------------------- */

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

static void raw(int fd, const void *b, size_t n)
{
	assert_int_equal(write(fd, b, n), (ssize_t)n);
}

static void frame(int fd, const char *json, uint32_t len)
{
	uint8_t h[8] = { 'T', 'X', 'S', 'C', (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
			 (uint8_t)len };
	raw(fd, h, 8);
	if (json)
		raw(fd, json, strlen(json));
}

static int rd(int fd, size_t max, int ms, char *err, struct txs_ctl_msg *m)
{
	int rc = txs_ctl_read(fd, m, max, ms, err, 256);
	return rc;
}

static void test_frames(void **state)
{
	(void)state;
	int sv[2];
	char err[256];
	struct txs_ctl_msg m;

	/* a written message reads back; two in a row keep their boundaries */
	pair(sv);
	struct txs_ctl_msg w = { .type = TXS_CTL_RESULT, .test = 9, .receiver = (char *)recv_sum };
	assert_int_equal(txs_ctl_write(sv[0], &w, 1000, err, sizeof(err)), 0);
	w = (struct txs_ctl_msg){ .type = TXS_CTL_BYE };
	assert_int_equal(txs_ctl_write(sv[0], &w, 1000, err, sizeof(err)), 0);
	assert_int_equal(rd(sv[1], TXS_CTL_MSG_MAX, 1000, err, &m), 0);
	assert_int_equal(m.type, TXS_CTL_RESULT);
	assert_int_equal(m.test, 9);
	assert_non_null(strstr(m.receiver, "\"lost\":10"));
	txs_ctl_msg_free(&m);
	assert_int_equal(rd(sv[1], TXS_CTL_MSG_MAX, 1000, err, &m), 0);
	assert_int_equal(m.type, TXS_CTL_BYE);
	/* the peer closes at a frame boundary */
	close(sv[0]);
	assert_int_equal(rd(sv[1], TXS_CTL_MSG_MAX, 1000, err, &m), -ECONNRESET);
	assert_non_null(strstr(err, "closed the connection"));
	close(sv[1]);

	/* garbage: no frame header */
	pair(sv);
	raw(sv[0], "GET / HTTP/1.1\r\n\r\n", 18);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 1000, err, &m), -EPROTO);
	assert_non_null(strstr(err, "not a txscale control message"));
	close(sv[0]);
	close(sv[1]);

	/* oversize: refused from the header, before the body is read */
	pair(sv);
	frame(sv[0], NULL, TXS_CTL_SMALL_MAX + 1);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 1000, err, &m), -EMSGSIZE);
	assert_non_null(strstr(err, "over the limit"));
	frame(sv[0], NULL, 0);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 1000, err, &m), -EMSGSIZE);
	close(sv[0]);
	close(sv[1]);

	/* truncated: the peer closes inside the body */
	pair(sv);
	frame(sv[0], "{\"v\":1,", 20);
	close(sv[0]);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 1000, err, &m), -ECONNRESET);
	assert_non_null(strstr(err, "truncated message"));
	assert_non_null(strstr(err, "7 of 20"));
	close(sv[1]);

	/* a malformed body inside a good frame */
	pair(sv);
	frame(sv[0], "{\"v\":7,\"type\":\"bye\"}", 20);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 1000, err, &m), -EPROTONOSUPPORT);
	close(sv[0]);
	close(sv[1]);

	/* silent peer: a timeout, on time */
	pair(sv);
	double t0 = mono();
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 200, err, &m), -ETIMEDOUT);
	double dt = mono() - t0;
	assert_true(dt >= 0.19);
	assert_true(dt < 5);
	assert_non_null(strstr(err, "no message within"));
	/* a header, then silence inside the body: one deadline for the frame */
	frame(sv[0], "{\"v\":1", 50);
	assert_int_equal(rd(sv[1], TXS_CTL_SMALL_MAX, 200, err, &m), -ETIMEDOUT);
	assert_non_null(strstr(err, "inside a message"));
	close(sv[0]);
	close(sv[1]);

	/* a write to a closed peer fails, no SIGPIPE */
	pair(sv);
	close(sv[1]);
	w = (struct txs_ctl_msg){ .type = TXS_CTL_BYE };
	assert_true(txs_ctl_write(sv[0], &w, 1000, err, sizeof(err)) < 0);
	close(sv[0]);
}

static void test_auth(void **state)
{
	(void)state;
	char path[] = "/tmp/txs-ctl-key.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	raw(fd, "correct horse\n", 14);
	close(fd);
	uint8_t k1[32], k2[32], nonce[32], nonce2[32], mac[32];
	assert_int_equal(txs_ctl_key_load(k1, path), 0);
	/* a trailing newline does not change the key */
	fd = open(path, O_WRONLY | O_TRUNC);
	raw(fd, "correct horse", 13);
	close(fd);
	assert_int_equal(txs_ctl_key_load(k2, path), 0);
	assert_memory_equal(k1, k2, 32);
	fd = open(path, O_WRONLY | O_TRUNC);
	raw(fd, "correct horsf", 13);
	close(fd);
	assert_int_equal(txs_ctl_key_load(k2, path), 0);
	assert_memory_not_equal(k1, k2, 32);
	fd = open(path, O_WRONLY | O_TRUNC);
	raw(fd, "\n", 1);
	close(fd);
	assert_int_equal(txs_ctl_key_load(k2, path), -EINVAL);
	unlink(path);
	assert_int_equal(txs_ctl_key_load(k2, path), -ENOENT);

	assert_int_equal(txs_ctl_nonce(nonce), 0);
	assert_int_equal(txs_ctl_nonce(nonce2), 0);
	assert_memory_not_equal(nonce, nonce2, 32);
	assert_int_equal(txs_ctl_mac(mac, nonce, k1), 0);
	assert_true(txs_ctl_mac_ok(mac, nonce, k1));
	/* wrong key, other nonce (a replay), one flipped bit: refused */
	uint8_t k3[32];
	memcpy(k3, k1, 32);
	k3[31] ^= 1;
	assert_false(txs_ctl_mac_ok(mac, nonce, k3));
	assert_false(txs_ctl_mac_ok(mac, nonce2, k1));
	mac[0] ^= 0x80;
	assert_false(txs_ctl_mac_ok(mac, nonce, k1));
	/* the mac is not the key, nor contains it */
	assert_int_equal(txs_ctl_mac(mac, nonce, k1), 0);
	assert_memory_not_equal(mac, k1, 32);
}

static struct txs_addr A(const char *s)
{
	struct txs_addr a;
	assert_int_equal(txs_addr_parse(&a, s), 0);
	return a;
}

static void test_allow(void **state)
{
	(void)state;
	struct txs_ctl_allow al;
	char err[256];
	struct txs_addr c = A("198.18.0.1"), c6 = A("2001:2::1");
	/* default: the client's own address only */
	assert_true(txs_ctl_allowed(NULL, &c, &(struct txs_addr){ 0 }) == false);
	struct txs_addr d = A("198.18.0.1");
	assert_true(txs_ctl_allowed(NULL, &c, &d));
	d = A("198.18.0.3");
	assert_false(txs_ctl_allowed(NULL, &c, &d));
	d = A("::ffff:198.18.0.1"); /* a mapped client address is the same host */
	assert_true(txs_ctl_allowed(NULL, &c, &d));
	assert_true(txs_ctl_allowed(NULL, &d, &c));
	d = A("2001:2::1");
	assert_false(txs_ctl_allowed(NULL, &c, &d));
	assert_true(txs_ctl_allowed(NULL, &c6, &d));

	assert_int_equal(txs_ctl_allow_parse(&al, "198.18.0.0/24,2001:2::/48,198.19.1.7", err, sizeof(err)), 0);
	assert_int_equal(al.n, 3);
	d = A("198.18.0.255");
	assert_true(txs_ctl_allowed(&al, &c, &d));
	d = A("198.18.1.0");
	assert_false(txs_ctl_allowed(&al, &c, &d));
	d = A("198.19.1.7");
	assert_true(txs_ctl_allowed(&al, &c, &d));
	d = A("198.19.1.6");
	assert_false(txs_ctl_allowed(&al, &c, &d));
	d = A("2001:2:0:ffff::9");
	assert_true(txs_ctl_allowed(&al, &c, &d));
	d = A("2001:3::1");
	assert_false(txs_ctl_allowed(&al, &c, &d));
	assert_int_equal(txs_ctl_allow_parse(&al, "198.18.0.0/15", err, sizeof(err)), 0);
	d = A("198.19.255.255");
	assert_true(txs_ctl_allowed(&al, &c, &d));
	d = A("198.20.0.0");
	assert_false(txs_ctl_allowed(&al, &c, &d));
	assert_int_equal(txs_ctl_allow_parse(&al, "0.0.0.0/0", err, sizeof(err)), 0);
	d = A("8.8.8.8");
	assert_true(txs_ctl_allowed(&al, &c, &d));

	const char *bad[] = { "", "1.2.3.4/33", "::/129", "1.2.3.4/", "host.example", "1.2.3.4,,5.6.7.8", "1.2.3.4/-1",
			      "1.2.3.4/8x" };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(bad); i++) {
		int rc = txs_ctl_allow_parse(&al, bad[i], err, sizeof(err));
		if (rc != -EINVAL)
			fprintf(stderr, "allow '%s': rc %d\n", bad[i], rc);
		assert_int_equal(rc, -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_refuse),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_allow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
