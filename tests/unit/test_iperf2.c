/* SPDX-License-Identifier: MIT */
/* iperf 2's UDP wire format (txscale/rx_iperf2.h) as 2.1.8 and 2.0.x put it
 * on the wire: the datagram header and its three spellings of the end, the
 * server report (a capture of Debian's 2.1.8 server's), and the checks of
 * send --iperf2's test (txscale/iperf2.h). */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <txscale/iperf2.h>
#include <txscale/rx_iperf2.h>
#include "test_util.h"

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static void test_hdr_21(void **st)
{
	(void)st;
	uint8_t b[64] = { 0 };
	int64_t id;
	uint32_t sec, usec;
	txs_ip2_hdr_write(b, 1, 0x6b115b86, 0x33a0f);
	static const uint8_t want1[16] = { 0, 0, 0, 1, 0x6b, 0x11, 0x5b, 0x86, 0, 3, 0x3a, 0x0f, 0, 0, 0, 0 };
	assert_memory_equal(b, want1, 16);
	/* the end as 2.1.8 wrote it in a capture: id -128 over id and id2 */
	txs_ip2_hdr_write(b, -128, 0x6b115b87, 0x35a1c);
	static const uint8_t want2[16] = { 0xff, 0xff, 0xff, 0x80, 0x6b, 0x11, 0x5b, 0x87, 0, 3, 0x5a, 0x1c,
					   0xff, 0xff, 0xff, 0xff };
	assert_memory_equal(b, want2, 16);
	/* ... with 2.1.8's header flags behind it (0x48010098: EXTEND, SEQNO64B, a length) */
	put32(b + 16, 0x48010098);
	assert_int_equal(txs_ip2_hdr_read(b, 100, 128, &id, &sec, &usec), 0);
	assert_int_equal(id, -128);
	assert_int_equal(sec, 0x6b115b87);
	assert_int_equal(usec, 0x35a1c);
	txs_ip2_hdr_write(b, 127, 1, 2);
	assert_int_equal(txs_ip2_hdr_read(b, 100, 0, &id, &sec, &usec), 0);
	assert_int_equal(id, 127);
	/* at -l 16 (no flags): the same */
	txs_ip2_hdr_write(b, -5000, 1, 2);
	assert_int_equal(txs_ip2_hdr_read(b, 16, 0, &id, &sec, &usec), 0);
	assert_int_equal(id, -5000);
	/* a 64-bit id past 2^32 where the flags say 64-bit */
	txs_ip2_hdr_write(b, (1ll << 32) + 5, 1, 2);
	assert_int_equal(txs_ip2_hdr_read(b, 100, 0, &id, &sec, &usec), 0);
	assert_int_equal(id, (1ll << 32) + 5);
	txs_ip2_hdr_write(b, -((1ll << 32) + 6), 1, 2);
	assert_int_equal(txs_ip2_hdr_read(b, 100, (1ull << 32) + 6, &id, &sec, &usec), 0);
	assert_int_equal(id, -((1ll << 32) + 6));
}

static void test_hdr_20(void **st)
{
	(void)st;
	uint8_t b[64];
	int64_t id;
	uint32_t sec, usec;
	/* 2.0.13 without 64-bit ids: sign and magnitude in id, id2 the payload's pattern */
	memset(b, '0', sizeof(b));
	put32(b, 0x80000000u | 101);
	put32(b + 4, 7);
	put32(b + 8, 8);
	put32(b + 16, 0); /* no header flags */
	assert_int_equal(txs_ip2_hdr_read(b, 64, 101, &id, &sec, &usec), 0);
	assert_int_equal(id, -101);
	put32(b, 100); /* a data id: 32-bit, the pattern in id2 ignored */
	assert_int_equal(txs_ip2_hdr_read(b, 64, 0, &id, &sec, &usec), 0);
	assert_int_equal(id, 100);
	/* 2.0.13 with 64-bit ids: the sign in id2's top bit */
	put32(b, 101);
	put32(b + 12, 0x80000000u);
	put32(b + 16, 0x88000000u); /* VERSION1 | SEQNO64B */
	assert_int_equal(txs_ip2_hdr_read(b, 64, 101, &id, &sec, &usec), 0);
	assert_int_equal(id, -101);
	/* 2.0.5: a 12-byte header, the end in 32-bit two's complement */
	put32(b, (uint32_t)-101);
	assert_int_equal(txs_ip2_hdr_read(b, 12, 101, &id, &sec, &usec), 0);
	assert_int_equal(id, -101);
	/* refusals */
	assert_int_equal(txs_ip2_hdr_read(b, 11, 0, &id, &sec, &usec), -EMSGSIZE);
	put32(b, 0);
	put32(b + 12, 0);
	assert_int_equal(txs_ip2_hdr_read(b, 16, 0, &id, &sec, &usec), -EPROTO);
	put32(b, 1);
	put32(b + 8, 1000000);
	assert_int_equal(txs_ip2_hdr_read(b, 16, 0, &id, &sec, &usec), -EPROTO);
}

/* Debian's 2.1.8 `iperf -s -u -e` answering a 1 s test of 127 datagrams of 100 bytes */
static const uint32_t stock_report[32] = {
	0, 0, 0, 0,
	0xc8000000, 0, 0x3200, 1, 0x121a, 0, 0, 0x80, 0, 2,
	0, 4, 0, 0xe06, 0, 0x1954, 0, 0x32, 0x00c0aa28, 0x000876bf, 0, 0xffffffe2, 0x80, 0x7f, 1,
	0, 0, 0,
};

static void test_report(void **st)
{
	(void)st;
	uint8_t b[TXS_IP2_REPORT_LEN];
	for (int i = 0; i < 32; i++)
		put32(b + 4 * i, stock_report[i]);
	struct txs_ip2_report r;
	assert_int_equal(txs_ip2_report_read(b, sizeof(b), &r), 0);
	assert_int_equal(r.flags, TXS_IP2_F_VERSION1 | TXS_IP2_F_EXTEND | TXS_IP2_F_SEQNO64B);
	assert_int_equal(r.bytes, 12800);
	assert_true(fabs(r.seconds - 1.004634) < 1e-9);
	assert_int_equal(r.errors, 0);
	assert_int_equal(r.out_of_order, 0);
	assert_int_equal(r.datagrams, 128);
	assert_true(fabs(r.jitter - 2e-6) < 1e-12);
	assert_true(fabs(r.t_min - 4e-6) < 1e-12 && fabs(r.t_max - 3590e-6) < 1e-12 && fabs(r.t_mean - 50e-6) < 1e-12);
	assert_int_equal(r.t_cnt, 128);
	/* ours: every field back, 64-bit counts in their halves, no latency unless EXTEND */
	struct txs_ip2_report w = { .flags = TXS_IP2_F_VERSION1 | TXS_IP2_F_SEQNO64B, .bytes = (5ull << 32) + 7,
				    .seconds = 3.25, .errors = (2ull << 32) + 1, .out_of_order = 9,
				    .datagrams = (3ull << 32) + 11, .jitter = 0.000123, .t_min = 1 };
	txs_ip2_report_write(b, &w);
	for (int i = 0; i < 4; i++)
		assert_int_equal(b[i], 0);
	assert_int_equal(txs_ip2_report_read(b, sizeof(b), &r), 0);
	assert_int_equal(r.bytes, w.bytes);
	assert_int_equal(r.errors, w.errors);
	assert_int_equal(r.out_of_order, 9);
	assert_int_equal(r.datagrams, w.datagrams);
	assert_true(fabs(r.seconds - 3.25) < 1e-9);
	assert_true(fabs(r.jitter - 0.000123) < 1e-9);
	assert_true(r.t_min == 0 && r.t_cnt == 0);
	/* a 2.0 server's report without the upper halves: 32-bit counts */
	assert_int_equal(txs_ip2_report_read(b, 56, &r), 0);
	assert_int_equal(r.datagrams, 11);
	/* not a report */
	assert_int_equal(txs_ip2_report_read(b, 55, &r), -EMSGSIZE);
	memset(b, 0, sizeof(b));
	assert_int_equal(txs_ip2_report_read(b, sizeof(b), &r), -EPROTO);
}

static void test_client_check(void **st)
{
	(void)st;
	struct sockaddr_storage srv = { 0 }, v6 = { 0 };
	srv.ss_family = AF_INET;
	v6.ss_family = AF_INET6;
	struct txs_ip2_client_conf c = { .server = &srv, .streams = 1, .length = 16, .time = 1, .wait_s = 2 };
	char err[256];
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), 0);
	c.length = 15;
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad value for -l: '15'"));
	c.length = 1470;
	c.streams = 0;
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-P"));
	c.streams = 2;
	c.local = &v6;
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "-B"));
	c.local = NULL;
	c.time = 0;
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), -EINVAL);
	c.count = 10;
	assert_int_equal(txs_ip2_client_check(&c, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hdr_21),
		cmocka_unit_test(test_hdr_20),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_client_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
