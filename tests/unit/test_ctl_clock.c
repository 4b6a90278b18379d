/* SPDX-License-Identifier: MIT */
/* lib/ctl clock offset: the NTP on-wire arithmetic (known stamps, stamps
 * that cannot be, extremes), a measurement over a socketpair against a
 * thread that answers from a clock off by a known amount (the offset found
 * within half the round trip), the clock fields of hello / setup.recv /
 * done / time (round trip, refusals, an old peer's messages without them),
 * and the clock line beside a sender summary. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/ctl.h>
#include <txscale/engine.h>
#include "test_util.h"

static void sample_math(void **st)
{
	(void)st;
	int64_t off;
	uint64_t rtt;
	/* server 1000 ahead, 100 each way, 50 inside the server */
	assert_int_equal(txs_ctl_clock_sample(10000, 11100, 11150, 10250, &off, &rtt), 0);
	assert_int_equal(off, 1000);
	assert_int_equal(rtt, 200);
	/* server behind */
	assert_int_equal(txs_ctl_clock_sample(10000, 7100, 7150, 10250, &off, &rtt), 0);
	assert_int_equal(off, -3000);
	/* asymmetric path: 190 out, 10 back: the error is within rtt/2 */
	assert_int_equal(txs_ctl_clock_sample(10000, 11190, 11190, 10200, &off, &rtt), 0);
	assert_int_equal(rtt, 200);
	assert_true(off - 1000 <= 100 && 1000 - off <= 100);
	/* what cannot be */
	assert_int_equal(txs_ctl_clock_sample(10000, 11100, 11050, 10250, &off, &rtt), -ERANGE); /* t3 < t2 */
	assert_int_equal(txs_ctl_clock_sample(10000, 11100, 11150, 9000, &off, &rtt), -ERANGE);  /* t4 < t1 */
	assert_int_equal(txs_ctl_clock_sample(10000, 11000, 12000, 10250, &off, &rtt), -ERANGE); /* server > rtt */
	assert_int_equal(txs_ctl_clock_sample(0, UINT64_MAX, UINT64_MAX, 10, &off, &rtt), -ERANGE);
	assert_int_equal(txs_ctl_clock_sample(UINT64_MAX - 10, 0, 0, UINT64_MAX, &off, &rtt), -ERANGE);
	/* the largest allowed: no overflow */
	uint64_t M = (uint64_t)TXS_CTL_CLOCK_MAX_NS;
	assert_int_equal(txs_ctl_clock_sample(0, M, M, 0, &off, &rtt), 0);
	assert_int_equal(off, (int64_t)M);
	assert_int_equal(txs_ctl_clock_sample(M, 0, 0, M, &off, &rtt), 0);
	assert_int_equal(off, -(int64_t)M);
}

struct answerer {
	int fd;
	int64_t shift; /* the server's clock minus ours */
	unsigned n;
	bool lie;      /* answer with stamps that cannot be */
};

static void *answer(void *arg)
{
	struct answerer *a = arg;
	char e[256];
	for (unsigned i = 0; i < a->n; i++) {
		struct txs_ctl_msg m;
		if (txs_ctl_read(a->fd, &m, TXS_CTL_SMALL_MAX, 5000, e, sizeof(e)) < 0)
			break;
		uint64_t t2 = txs_now_real_ns() + (uint64_t)a->shift;
		struct txs_ctl_msg r = { .type = TXS_CTL_TIME, .t1 = m.t1, .t2 = t2, .t3 = t2 + 1000 };
		if (a->lie)
			r.t3 = t2 - 1;
		usleep(200);
		txs_ctl_write(a->fd, &r, 5000, e, sizeof(e));
		txs_ctl_msg_free(&m);
	}
	return NULL;
}

static void measure_pair(void **st)
{
	(void)st;
	static const int64_t shifts[] = { 0, 2500000000ll, -7000000 };
	for (unsigned k = 0; k < 3; k++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
		struct answerer a = { .fd = sv[1], .shift = shifts[k], .n = 8 };
		pthread_t th;
		assert_int_equal(pthread_create(&th, NULL, answer, &a), 0);
		struct txs_ctl_clock c;
		char e[256];
		assert_int_equal(txs_ctl_clock_measure(sv[0], 8, 5000, &c, e, sizeof(e)), 0);
		pthread_join(th, NULL);
		assert_int_equal(c.used, 8);
		assert_true(c.rtt_ns >= 200000); /* the answerer's 200 us sleep is in the round trip */
		int64_t d = c.offset_ns - shifts[k];
		assert_true(d <= (int64_t)c.rtt_ns / 2 + 1 && -d <= (int64_t)c.rtt_ns / 2 + 1);
		close(sv[0]);
		close(sv[1]);
	}
	/* an answerer whose stamps cannot be: no sample, -ERANGE */
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	struct answerer a = { .fd = sv[1], .n = 3, .lie = true };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, answer, &a), 0);
	struct txs_ctl_clock c;
	char e[256];
	assert_int_equal(txs_ctl_clock_measure(sv[0], 3, 5000, &c, e, sizeof(e)), -ERANGE);
	pthread_join(th, NULL);
	assert_int_equal(c.used, 0);
	close(sv[0]);
	close(sv[1]);
	/* a server that refuses (a wrong secret): its words, -EREMOTEIO */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	struct txs_ctl_msg er = { .type = TXS_CTL_ERROR };
	snprintf(er.message, sizeof(er.message), "authentication failed: wrong shared secret");
	assert_int_equal(txs_ctl_write(sv[1], &er, 1000, e, sizeof(e)), 0);
	assert_int_equal(txs_ctl_clock_measure(sv[0], 2, 1000, &c, e, sizeof(e)), -EREMOTEIO);
	assert_non_null(strstr(e, "the server says: authentication failed"));
	close(sv[0]);
	close(sv[1]);
	/* a peer that closes: the read error */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	assert_true(txs_ctl_clock_measure(sv[0], 2, 1000, &c, e, sizeof(e)) < 0);
	close(sv[0]);
	assert_int_equal(txs_ctl_clock_measure(-1, 0, 1000, &c, e, sizeof(e)), -EINVAL);
}

static int dec(struct txs_ctl_msg *m, const char *json)
{
	char e[256];
	int rc = txs_ctl_decode(m, json, strlen(json), e, sizeof(e));
	return rc;
}

static void roundtrip(const struct txs_ctl_msg *in, struct txs_ctl_msg *out)
{
	char *j;
	size_t n;
	char e[256];
	assert_int_equal(txs_ctl_encode(in, &j, &n, e, sizeof(e)), 0);
	assert_int_equal(txs_ctl_decode(out, j, n, e, sizeof(e)), 0);
	free(j);
}

static void messages(void **st)
{
	(void)st;
	struct txs_ctl_msg m, o;
	/* hello: clock says the server answers time; an old server's hello has none */
	memset(&m, 0, sizeof(m));
	m.type = TXS_CTL_HELLO;
	m.clock = true;
	snprintf(m.software, sizeof(m.software), "txscale t");
	roundtrip(&m, &o);
	assert_true(o.clock);
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"hello\",\"software\":\"old\",\"auth\":false,\"nonce\":"
				 "\"0000000000000000000000000000000000000000000000000000000000000000\"}"),
			 0);
	assert_false(o.clock);
	txs_ctl_msg_free(&o);
	/* time, both ways */
	memset(&m, 0, sizeof(m));
	m.type = TXS_CTL_TIME;
	m.t1 = 1800000000000000000ull;
	roundtrip(&m, &o);
	assert_int_equal(o.t1, m.t1);
	assert_int_equal(o.t2, 0);
	m.t2 = m.t1 + 5;
	m.t3 = m.t1 + 9;
	roundtrip(&m, &o);
	assert_int_equal(o.t3, m.t1 + 9);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"time\"}"), -EPROTO);
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"time\",\"t1\":-1}"), -EPROTO);
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"time\",\"t1\":\"x\"}"), -EPROTO);
	txs_ctl_msg_free(&o);
	/* setup.recv.clock */
	memset(&m, 0, sizeof(m));
	m.type = TXS_CTL_SETUP;
	m.recv.on = true;
	m.recv.port = 5201;
	snprintf(m.recv.dev, sizeof(m.recv.dev), "udp");
	m.recv.clock = (struct txs_ctl_clock_rep){ .on = true, .offset_ns = -123456789, .error_ns = 4321 };
	roundtrip(&m, &o);
	assert_true(o.recv.clock.on);
	assert_int_equal(o.recv.clock.offset_ns, -123456789);
	assert_int_equal(o.recv.clock.error_ns, 4321);
	txs_ctl_msg_free(&o);
	/* an old client's setup: no clock */
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":5201,\"dev\":\"udp\"}}"), 0);
	assert_false(o.recv.clock.on);
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":5201,\"dev\":\"udp\","
				 "\"clock\":{\"offset_ns\":1}}}"),
			 -EPROTO); /* error_ns missing */
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":5201,\"dev\":\"udp\","
				 "\"clock\":{\"offset_ns\":9223372036854775807,\"error_ns\":0}}}"),
			 -EPROTO); /* beyond TXS_CTL_CLOCK_MAX_NS */
	txs_ctl_msg_free(&o);
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"setup\",\"test\":1,\"recv\":{\"port\":5201,\"dev\":\"udp\","
				 "\"clock\":[]}}"),
			 -EPROTO);
	txs_ctl_msg_free(&o);
	/* done.clock with drift */
	memset(&m, 0, sizeof(m));
	m.type = TXS_CTL_DONE;
	m.test = 3;
	m.sender = (char *)"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1}";
	m.done_clock = (struct txs_ctl_clock_rep){ .on = true, .offset_ns = 77, .error_ns = 8, .have_drift = true,
						   .drift_ns = -5 };
	roundtrip(&m, &o);
	assert_true(o.done_clock.on && o.done_clock.have_drift);
	assert_int_equal(o.done_clock.drift_ns, -5);
	txs_ctl_msg_free(&o);
	/* a type an old peer does not know: refused by name (so it is sent only after hello.clock) */
	assert_int_equal(dec(&o, "{\"v\":1,\"type\":\"timex\",\"t1\":1}"), -EPROTO);
	txs_ctl_msg_free(&o);
}

static void clock_line(void **st)
{
	(void)st;
	struct txs_ctl_clock_rep c = { .on = true, .offset_ns = -42, .error_ns = 7, .have_drift = true, .drift_ns = 3 }, r;
	char line[160];
	int n = txs_ctl_clock_line(line, sizeof(line), &c);
	assert_true(n > 0);
	char text[512];
	snprintf(text, sizeof(text), "%s{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1}\n", line);
	assert_int_equal(txs_ctl_clock_line_parse(text, strlen(text), &r), 0);
	assert_true(r.on && r.have_drift);
	assert_int_equal(r.offset_ns, -42);
	assert_int_equal(r.error_ns, 7);
	assert_int_equal(r.drift_ns, 3);
	c.have_drift = false;
	n = txs_ctl_clock_line(line, sizeof(line), &c);
	assert_int_equal(txs_ctl_clock_line_parse(line, (size_t)n, &r), 0);
	assert_false(r.have_drift);
	assert_int_equal(txs_ctl_clock_line(line, 10, &c), -ENOSPC);
	static const char none[] = "{\"type\":\"summary\",\"kind\":\"send\"}\n";
	assert_int_equal(txs_ctl_clock_line_parse(none, sizeof(none) - 1, &r), -ENOENT);
	static const char badv[] = "{\"type\":\"clock\",\"offset_ns\":\"1\",\"error_ns\":0}\n";
	assert_int_equal(txs_ctl_clock_line_parse(badv, sizeof(badv) - 1, &r), -EPROTO);
	assert_false(r.on);
	static const char junk[] = "{\"type\":\"clock\",\x01\n{{{\n";
	assert_int_equal(txs_ctl_clock_line_parse(junk, sizeof(junk) - 1, &r), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_math),
		cmocka_unit_test(measure_pair),
		cmocka_unit_test(messages),
		cmocka_unit_test(clock_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
