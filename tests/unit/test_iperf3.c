/* SPDX-License-Identifier: MIT */
/* lib/ctl/iperf3.c, iperf3_io.c and lib/rx/iperf3.c: iperf3's messages as
 * 3.12 writes them decode; flags are sent only when true; every hostile
 * count (negative, fractional, over 2^53, out of range, wrong type) is
 * refused with the field named; the UDP handshake values old and new; the
 * payload header both widths; length-prefixed JSON over a socketpair with
 * its cap and deadline; a stream's exact counts with reordering,
 * duplicates, late and malformed datagrams. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include <txscale/rx.h>
#include "test_util.h"

/* what iperf3 3.12 sends for -u -l 16 -b 1M -t 1 -P 2 -R --get-server-output --udp-counters-64bit */
static const char p312[] = "{\"udp\":true,\"omit\":0,\"time\":1,\"num\":0,\"blockcount\":0,\"parallel\":2,\"reverse\":true,"
			   "\"len\":16,\"bandwidth\":1000000,\"pacing_timer\":1000,\"get_server_output\":1,"
			   "\"udp_counters_64bit\":1,\"client_version\":\"3.12\"}";
/* what its client sends as results (retransmits: -1 printed as 2^64-1) */
static const char r312[] = "{\"cpu_util_total\":9.75,\"cpu_util_user\":1.64,\"cpu_util_system\":8.1,"
			   "\"sender_has_retransmits\":18446744073709551615,\"streams\":[{\"id\":1,\"bytes\":124912,"
			   "\"retransmits\":1.8446744073709552e+19,\"jitter\":2.4e-05,\"errors\":0,\"packets\":7807,"
			   "\"start_time\":0,\"end_time\":1.000087},{\"id\":3,\"bytes\":124912,\"retransmits\":-1,"
			   "\"jitter\":0,\"errors\":0,\"packets\":7807,\"start_time\":0,\"end_time\":1.000088}]}";

static void test_params(void **st)
{
	(void)st;
	struct txs_ip3_params p;
	char err[256];
	assert_int_equal(txs_ip3_params_decode(&p, p312, strlen(p312), err, sizeof(err)), 0);
	assert_int_equal(p.proto, TXS_IP3_UDP);
	assert_int_equal(p.time, 1);
	assert_int_equal(p.parallel, 2);
	assert_int_equal(p.len, 16);
	assert_int_equal(p.bandwidth, 1000000);
	assert_true(p.reverse && p.get_server_output && p.udp_counters_64bit);
	assert_false(p.bidirectional || p.repeating_payload);
	assert_string_equal(p.client_version, "3.12");
	assert_int_equal(txs_ip3_params_check(&p, 300, err, sizeof(err)), 0);

	/* encode: flags only when true, and it decodes back the same */
	p.reverse = false;
	char *j;
	size_t n;
	assert_int_equal(txs_ip3_params_encode(&p, &j, &n, err, sizeof(err)), 0);
	assert_null(strstr(j, "reverse"));
	assert_null(strstr(j, "bidirectional"));
	assert_null(strstr(j, "false"));
	assert_non_null(strstr(j, "\"udp_counters_64bit\":1"));
	struct txs_ip3_params q;
	assert_int_equal(txs_ip3_params_decode(&q, j, n, err, sizeof(err)), 0);
	assert_memory_equal(&p, &q, sizeof(p));
	free(j);

	/* -b 0: no bandwidth key, unlimited */
	const char nob[] = "{\"udp\":true,\"time\":2,\"parallel\":1,\"len\":100}";
	assert_int_equal(txs_ip3_params_decode(&p, nob, strlen(nob), err, sizeof(err)), 0);
	assert_int_equal(p.bandwidth, 0);

	/* a 5e9-byte -n comes as a real from cJSON */
	const char big[] = "{\"udp\":true,\"num\":5e+09,\"len\":100}";
	assert_int_equal(txs_ip3_params_decode(&p, big, strlen(big), err, sizeof(err)), 0);
	assert_int_equal(p.num, 5000000000ull);
}

static void refused(const char *json, const char *field)
{
	struct txs_ip3_params p;
	char err[256] = "";
	int rc = txs_ip3_params_decode(&p, json, strlen(json), err, sizeof(err));
	if (rc != -EPROTO || !strstr(err, field))
		fprintf(stderr, "%s -> %d %s\n", json, rc, err);
	assert_int_equal(rc, -EPROTO);
	assert_non_null(strstr(err, field));
}

static void test_params_hostile(void **st)
{
	(void)st;
	refused("{\"udp\":true,\"time\":-1}", "time");
	refused("{\"udp\":true,\"time\":1.5}", "time");
	refused("{\"udp\":true,\"time\":\"10\"}", "time");
	refused("{\"udp\":true,\"time\":86401}", "time");
	refused("{\"udp\":true,\"num\":1e300}", "num");
	refused("{\"udp\":true,\"parallel\":0}", "parallel");
	refused("{\"udp\":true,\"len\":null}", "len");
	refused("{\"udp\":true,\"reverse\":\"yes\"}", "reverse");
	refused("{\"udp\":true,\"reverse\":[]}", "reverse");
	refused("{\"udp\":\"x\"}", "udp");
	refused("{\"udp\":true,\"client_version\":\"3.12\\u009b\"}", "client_version");
	refused("{\"udp\":true,\"client_version\":\"3.12\\u001b[2J\"}", "client_version");
	refused("{\"udp\":true,\"TOS\":256}", "TOS");
	refused("{\"udp\":true,\"time\":1,\"time\":2}", "duplicate");
	refused("[1]", "object");
	refused("{", "params");

	char err[256];
	struct txs_ip3_params p;
	/* size cap before parsing */
	static char huge[TXS_IP3_PARAM_MAX + 2];
	memset(huge, ' ', sizeof(huge) - 1);
	huge[0] = '{';
	huge[sizeof(huge) - 2] = '}';
	assert_int_equal(txs_ip3_params_decode(&p, huge, sizeof(huge) - 1, err, sizeof(err)), -EMSGSIZE);

	/* check(): iperf3 error numbers for what txscale does not serve */
	const char *cases[][2] = {
		{ "{\"tcp\":true,\"time\":1,\"len\":131072}", "13" },
		{ "{\"sctp\":true,\"time\":1,\"len\":100}", "13" },
		{ "{\"udp\":true,\"time\":1,\"len\":100,\"parallel\":129}", "6" },
		{ "{\"udp\":true,\"time\":1,\"len\":11}", "20" },
		{ "{\"udp\":true,\"time\":1,\"len\":12,\"udp_counters_64bit\":1}", "20" },
		{ "{\"udp\":true,\"time\":1,\"len\":65508}", "20" },
		{ "{\"udp\":true,\"time\":301,\"len\":100}", "5" },
		{ "{\"udp\":true,\"time\":300,\"omit\":86400,\"len\":100}", "5" },
		{ "{\"udp\":true,\"len\":100}", "5" },
		{ "{\"udp\":true,\"time\":1,\"len\":100,\"authtoken\":\"x\"}", "13" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(txs_ip3_params_decode(&p, cases[i][0], strlen(cases[i][0]), err, sizeof(err)), 0);
		int e = txs_ip3_params_check(&p, 300, err, sizeof(err));
		assert_int_equal(e, atoi(cases[i][1]));
	}
	/* 3.12's presence rule does not apply on read: a false flag is off */
	const char f[] = "{\"udp\":true,\"reverse\":false,\"bidirectional\":0}";
	assert_int_equal(txs_ip3_params_decode(&p, f, strlen(f), err, sizeof(err)), 0);
	assert_false(p.reverse || p.bidirectional);
}

static void res_refused(const char *json, const char *field)
{
	struct txs_ip3_results r;
	char err[256] = "";
	int rc = txs_ip3_results_decode(&r, json, strlen(json), err, sizeof(err));
	if (rc != -EPROTO || !strstr(err, field))
		fprintf(stderr, "%s -> %d %s\n", json, rc, err);
	assert_int_equal(rc, -EPROTO);
	assert_non_null(strstr(err, field));
	txs_ip3_results_free(&r);
}

#define RHEAD "{\"cpu_util_total\":1,\"cpu_util_user\":1,\"cpu_util_system\":0,\"sender_has_retransmits\":0,\"streams\":"
#define S(x) RHEAD "[{\"id\":1,\"retransmits\":-1,\"jitter\":0," x "}]}"

static void test_results(void **st)
{
	(void)st;
	struct txs_ip3_results r;
	char err[256];
	assert_int_equal(txs_ip3_results_decode(&r, r312, strlen(r312), err, sizeof(err)), 0);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.s[0].id, 1);
	assert_int_equal(r.s[1].id, 3);
	assert_int_equal(r.s[0].packets, 7807);
	assert_int_equal(r.s[0].bytes, 124912);
	assert_false(r.s[0].has_omitted);
	assert_true(r.s[0].has_times);
	assert_string_equal(r.server_output_text, "");
	/* encode writes omitted_* (3.14+ clients need both) and round-trips */
	r.s[0].errors = 5;
	free(r.server_output_text);
	r.server_output_text = strdup("line\n");
	char *j;
	size_t n;
	assert_int_equal(txs_ip3_results_encode(&r, &j, &n, err, sizeof(err)), 0);
	assert_non_null(strstr(j, "\"omitted_errors\":0"));
	assert_non_null(strstr(j, "\"omitted_packets\":0"));
	struct txs_ip3_results b;
	assert_int_equal(txs_ip3_results_decode(&b, j, n, err, sizeof(err)), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.s[0].errors, 5);
	assert_true(b.s[0].has_omitted);
	assert_string_equal(b.server_output_text, "line\n");
	txs_ip3_results_free(&b);
	txs_ip3_results_free(&r);
	free(j);

	res_refused(S("\"bytes\":-5,\"errors\":0,\"packets\":1"), "bytes");
	res_refused(S("\"bytes\":5.5,\"errors\":0,\"packets\":1"), "bytes");
	res_refused(S("\"bytes\":1e17,\"errors\":0,\"packets\":1"), "bytes");
	res_refused(S("\"bytes\":\"5\",\"errors\":0,\"packets\":1"), "bytes");
	res_refused(S("\"bytes\":5,\"errors\":-2,\"packets\":1"), "errors");
	res_refused(S("\"bytes\":5,\"errors\":0,\"packets\":-1"), "packets");
	res_refused(S("\"bytes\":5,\"errors\":0"), "packets");
	res_refused(S("\"bytes\":5,\"errors\":0,\"packets\":1,\"omitted_errors\":0"), "omitted_packets");
	res_refused(RHEAD "[{\"id\":1,\"retransmits\":-1,\"jitter\":-1,\"bytes\":1,\"errors\":0,\"packets\":1}]}", "jitter");
	res_refused(RHEAD "[{\"id\":1,\"retransmits\":-1,\"jitter\":0,\"bytes\":1,\"errors\":0,\"packets\":1},"
			  "{\"id\":1,\"retransmits\":-1,\"jitter\":0,\"bytes\":1,\"errors\":0,\"packets\":1}]}",
		    "twice");
	res_refused(RHEAD "[{\"id\":0,\"retransmits\":-1,\"jitter\":0,\"bytes\":1,\"errors\":0,\"packets\":1}]}", "id");
	res_refused(RHEAD "{}}", "streams");
	res_refused("{\"cpu_util_total\":1,\"cpu_util_user\":1,\"cpu_util_system\":0,\"streams\":[]}",
		    "sender_has_retransmits");
	res_refused(RHEAD "[], \"server_output_text\":5}", "server_output_text");
}

static void test_udp_hdr(void **st)
{
	(void)st;
	uint8_t b[4];
	txs_ip3_udp_msg(b);
	assert_memory_equal(b, "9876", 4);
	assert_int_equal(txs_ip3_udp_msg_kind(b, 4), TXS_IP3_UDP_NEW);
	txs_ip3_udp_reply(TXS_IP3_UDP_NEW, b);
	assert_memory_equal(b, "6789", 4);
	assert_true(txs_ip3_udp_reply_ok(b, 4));
	const uint8_t le[4] = { 0x15, 0xcd, 0x5b, 0x07 }; /* 123456789 from a little-endian 3.11 */
	assert_int_equal(txs_ip3_udp_msg_kind(le, 4), TXS_IP3_UDP_LEGACY_LE);
	txs_ip3_udp_reply(TXS_IP3_UDP_LEGACY_LE, b);
	const uint8_t rle[4] = { 0xb1, 0x68, 0xde, 0x3a };
	assert_memory_equal(b, rle, 4);
	assert_true(txs_ip3_udp_reply_ok(rle, 4));
	assert_false(txs_ip3_udp_reply_ok((const uint8_t *)"9876", 4));
	assert_int_equal(txs_ip3_udp_msg_kind((const uint8_t *)"98765", 5), TXS_IP3_UDP_UNKNOWN);

	uint8_t h[16];
	uint32_t s, u;
	uint64_t q;
	txs_ip3_hdr_write(h, 7, 999999, 0x123456789abcull, true);
	assert_int_equal(txs_ip3_hdr_read(h, 16, true, &s, &u, &q), 0);
	assert_int_equal(s, 7);
	assert_int_equal(u, 999999);
	assert_int_equal(q, 0x123456789abcull);
	txs_ip3_hdr_write(h, 1, 2, 3, false);
	const uint8_t want[12] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3 };
	assert_memory_equal(h, want, 12);
	assert_int_equal(txs_ip3_hdr_read(h, 11, false, &s, &u, &q), -EMSGSIZE);
	txs_ip3_hdr_write(h, 1, 1000000, 3, false);
	assert_int_equal(txs_ip3_hdr_read(h, 12, false, &s, &u, &q), -EPROTO);

	char c[TXS_IP3_COOKIE_LEN];
	assert_int_equal(txs_ip3_cookie_make(c), 0);
	assert_int_equal(strlen(c), 36);
	assert_true(txs_ip3_cookie_prefix((const uint8_t *)c, TXS_IP3_COOKIE_LEN));
	assert_true(txs_ip3_cookie_prefix((const uint8_t *)"abc", 3));
	assert_false(txs_ip3_cookie_prefix((const uint8_t *)"TXSC", 4));
	assert_false(txs_ip3_cookie_prefix((const uint8_t *)"ab1", 3));
}

static void test_io(void **st)
{
	(void)st;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(txs_ip3_write_state(sv[0], TXS_IP3_PARAM_EXCHANGE, 1000), 0);
	assert_int_equal(txs_ip3_write_json(sv[0], "{\"a\":1}", 7, 1000), 0);
	int s;
	assert_int_equal(txs_ip3_read_state(sv[1], &s, 1000), 0);
	assert_int_equal(s, 9);
	char *j;
	size_t n;
	assert_int_equal(txs_ip3_read_json(sv[1], 100, 1000, &j, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(j, "{\"a\":1}");
	free(j);
	/* over the cap: refused before reading the body */
	const uint8_t big[4] = { 0x7f, 0xff, 0xff, 0xff };
	assert_int_equal(txs_ip3_write_full(sv[0], big, 4, 1000), 0);
	assert_int_equal(txs_ip3_read_json(sv[1], TXS_IP3_PARAM_MAX, 1000, &j, &n), -EMSGSIZE);
	assert_null(j);
	/* a silent peer: the deadline */
	assert_int_equal(txs_ip3_read_json(sv[1], 100, 100, &j, &n), -ETIMEDOUT);
	/* SERVER_ERROR: -2, then i_errno and errno big-endian */
	assert_int_equal(txs_ip3_write_error(sv[0], TXS_IP3_IEUNIMP, 0, 1000), 0);
	uint8_t e[9];
	assert_int_equal(txs_ip3_read_full(sv[1], e, 9, 1000), 0);
	const uint8_t we[9] = { 0xfe, 0, 0, 0, 13, 0, 0, 0, 0 };
	assert_memory_equal(e, we, 9);
	close(sv[0]);
	assert_int_equal(txs_ip3_read_state(sv[1], &s, 1000), -ECONNRESET);
	close(sv[1]);
}

static void feed(struct txs_ip3_rx *r, uint64_t seq, double sent, double arr)
{
	uint8_t b[32] = { 0 };
	txs_ip3_hdr_write(b, (uint32_t)sent, (uint32_t)((sent - (uint32_t)sent) * 1e6 + 0.5), seq, true);
	txs_ip3_rx_dgram(r, b, sizeof(b), true, arr);
}

static void test_rx(void **st)
{
	(void)st;
	struct txs_ip3_rx r;
	txs_ip3_rx_init(&r);
	/* 1 2 4 3 3 6: one reordered, one duplicate, 5 lost */
	const uint64_t seqs[] = { 1, 2, 4, 3, 3, 6 };
	for (unsigned i = 0; i < 6; i++)
		feed(&r, seqs[i], 10 + i * 0.001, 20 + i * 0.001);
	assert_int_equal(r.received, 6);
	assert_int_equal(r.unique, 5);
	assert_int_equal(r.duplicates, 1);
	assert_int_equal(r.reordered, 1);
	assert_int_equal(r.highest, 6);
	uint64_t ex;
	assert_int_equal(txs_ip3_rx_lost(&r, 6, &ex), 1);
	assert_int_equal(ex, 0);
	/* iperf3's figure: gaps 1 + 1, one taken back by the first out-of-order 3 (the second finds 0) */
	assert_int_equal(r.ip3_errors, 1);
	assert_int_equal(r.ip3_outoforder, 2);
	/* equal transit times: jitter 0 */
	assert_true(r.jitter < 1e-6);
	/* late: older than the window */
	feed(&r, 6 + TXS_IP3_RX_WINDOW + 10, 11, 21);
	feed(&r, 5, 11, 21);
	assert_int_equal(r.late, 1);
	/* malformed: seq 0, a short datagram, an implausible jump; counts untouched */
	uint64_t u = r.unique;
	feed(&r, 0, 11, 21);
	feed(&r, r.highest + TXS_IP3_RX_MAX_JUMP + 1, 11, 21);
	uint8_t shortb[8] = { 0 };
	txs_ip3_rx_dgram(&r, shortb, sizeof(shortb), true, 21);
	assert_int_equal(r.malformed, 3);
	assert_int_equal(r.unique, u);
	/* a sender that says it sent fewer than arrived: excess, never a wrapped loss */
	assert_int_equal(txs_ip3_rx_lost(&r, 2, &ex), 0);
	assert_int_equal(ex, u - 2);
}

/* lib/rx with --payload iperf3[-64]: flows by 5-tuple, sequence from 1,
 * duplicates, reordering and loss as for txscale's header; jitter from the
 * sender's stamp (a monotonic clock: no latency histogram) */
static void rx_feed(struct txs_rx_core *c, const struct txs_rx_tuple *t, uint64_t seq, bool c64, uint64_t sent_ns,
		    uint64_t arr_ns)
{
	uint8_t b[100] = { 0 };
	txs_ip3_hdr_write(b, (uint32_t)(sent_ns / 1000000000ull), (uint32_t)(sent_ns % 1000000000ull / 1000), seq, c64);
	txs_rx_dgram(c, b, sizeof(b), t, 0, arr_ns);
}

static void test_rx_core_payload(void **st)
{
	(void)st;
	for (int w = 0; w < 2; w++) {
		bool c64 = w == 1;
		struct txs_rx_conf conf = { .payload = c64 ? TXS_RX_PAYLOAD_IPERF3_64 : TXS_RX_PAYLOAD_IPERF3 };
		struct txs_rx_core *c;
		assert_int_equal(txs_rx_core_create(&c, &conf), 0);
		struct txs_rx_tuple a = { .sport = 40000, .dport = 5201 }, b = a;
		a.src.family = a.dst.family = b.src.family = b.dst.family = AF_INET;
		b.sport = 40001;
		/* flow a: 1 2 4 3 3 6 (5 lost, 3 reordered, one duplicate), its transit constant; flow b:
		 * 1..3 sent 1 ms apart, arriving at 1, 3, 4 ms: |D| 1 ms then 0, J = 1/16 ms - 1/256 ms */
		const uint64_t seqs[] = { 1, 2, 4, 3, 3, 6 };
		for (unsigned i = 0; i < 6; i++)
			rx_feed(c, &a, seqs[i], c64, 1000000000ull * 7 + i * 1000000ull, 5000000000000ull + i * 1000000ull);
		const uint64_t arr_ms[] = { 1, 3, 4 };
		for (unsigned i = 1; i <= 3; i++)
			rx_feed(c, &b, i, c64, 1000000ull * i, 9000000000ull + 1000000ull * arr_ms[i - 1]);
		rx_feed(c, &b, 0, c64, 0, 1); /* iperf3 counts from 1: malformed */
		struct txs_rx_result *r;
		assert_int_equal(txs_rx_result_build(&r, &c, 1, NULL), 0);
		assert_int_equal(r->n_flows, 2);
		assert_int_equal(r->received, 9);
		assert_int_equal(r->unique, 8);
		assert_int_equal(r->duplicates, 1);
		assert_int_equal(r->reordered, 1);
		assert_int_equal(r->lost, 1); /* sequence 5 */
		assert_int_equal(r->malformed, 1);
		assert_int_equal(r->lat.count, 0);
		assert_true(r->jitter_max_ns >= 58593 - 2 && r->jitter_max_ns <= 58594 + 2);
		assert_true(r->jitter_ns > 0 && r->jitter_ns < r->jitter_max_ns); /* flow a's 0 weighs in */
		for (unsigned i = 0; i < r->n_flows; i++)
			assert_true(r->flows[i].sequenced && !r->flows[i].by_id);
		txs_rx_result_free(r);
		txs_rx_core_destroy(c);
	}
	struct txs_rx_conf bad = { .payload = TXS_RX_PAYLOAD_IPERF2 + 1 };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &bad), -EINVAL);
}

/* lib/rx with --payload iperf2: id from 1 (its upper half in id2), the
 * sender's realtime stamp (one-way latency), a negative id the end-of-test
 * datagram (unsequenced), a short one malformed */
static void ip2_feed(struct txs_rx_core *c, const struct txs_rx_tuple *t, int64_t id, uint64_t sent_ns, uint64_t arr_ns,
		     size_t len)
{
	uint8_t b[100] = { 0 };
	uint64_t u = (uint64_t)id;
	uint32_t lo = (uint32_t)u, hi = (uint32_t)(u >> 32), sec = (uint32_t)(sent_ns / 1000000000ull),
		 usec = (uint32_t)(sent_ns % 1000000000ull / 1000);
	const uint32_t w[4] = { lo, sec, usec, hi };
	for (unsigned k = 0; k < 4; k++)
		for (unsigned j = 0; j < 4; j++)
			b[4 * k + j] = (uint8_t)(w[k] >> (24 - 8 * j));
	txs_rx_dgram(c, b, len, t, 0, arr_ns);
}

static void test_rx_core_payload_ip2(void **st)
{
	(void)st;
	struct txs_rx_conf conf = { .payload = TXS_RX_PAYLOAD_IPERF2 };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &conf), 0);
	struct txs_rx_tuple a = { .sport = 40000, .dport = 5001 };
	a.src.family = a.dst.family = AF_INET;
	const uint64_t t0 = 1796000000ull * 1000000000ull;
	/* ids 1 2 4 5, each 50 us in transit (3 lost); the end-of-test datagram
	 * -6 twice (2.1's spelling; 2.0's in test_iperf2.c); one too short for
	 * the header (2.0.5's 12 bytes are one) */
	const int64_t ids[] = { 1, 2, 4, 5 };
	for (unsigned i = 0; i < 4; i++)
		ip2_feed(c, &a, ids[i], t0 + i * 1000000ull, t0 + i * 1000000ull + 50000, 100);
	ip2_feed(c, &a, -6, t0 + 5000000ull, t0 + 5050000ull, 100);
	ip2_feed(c, &a, -7, t0 + 5000000ull, t0 + 5300000ull, 100);
	ip2_feed(c, &a, 9, t0, t0, 11);
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, &c, 1, NULL), 0);
	assert_int_equal(r->n_flows, 1);
	assert_int_equal(r->received, 6); /* 4 data, 2 end-of-test */
	assert_int_equal(r->unsequenced, 2);
	assert_int_equal(r->unique, 4);
	assert_int_equal(r->lost, 1); /* id 3 */
	assert_int_equal(r->malformed, 1);
	assert_int_equal(r->lat.count, 4);
	assert_true(r->lat.min >= 50000 - 50000 / 32 && r->lat.max <= 50000 + 50000 / 32);
	assert_int_equal(r->flows[0].next_seq, 5);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* What a server reports of our streams: exact when its parts add up, else
 * "not exact" with the reason; never a wrapped loss */
static void peer_case(uint64_t sent1, uint64_t bytes1, uint64_t pk1, bool report2, const char *why, uint64_t lost,
		      uint64_t excess)
{
	struct txs_ip3_test t;
	memset(&t, 0, sizeof(t));
	t.p.len = 100;
	struct txs_ip3_stream st[2];
	memset(st, 0, sizeof(st));
	t.n = 2;
	t.s = st;
	st[0] = (struct txs_ip3_stream){ .fd = -1, .id = 1, .sender = true, .sent = sent1 };
	st[1] = (struct txs_ip3_stream){ .fd = -1, .id = 3, .sender = true, .sent = 10 };
	t.have_peer = true;
	t.peer.n = report2 ? 2 : 1;
	t.peer.s[0] = (struct txs_ip3_stream_res){ .id = 1, .bytes = bytes1, .packets = pk1, .errors = 0 };
	t.peer.s[1] = (struct txs_ip3_stream_res){ .id = 3, .bytes = 1000, .packets = 10 };
	struct txs_ip3_peer_rx f;
	txs_ip3_peer_rx(&t, &f);
	if (!why) {
		assert_true(f.exact);
	} else {
		if (f.exact || !strstr(f.why, why))
			fprintf(stderr, "want '%s', got exact %d '%s'\n", why, f.exact, f.why);
		assert_false(f.exact);
		assert_non_null(strstr(f.why, why));
	}
	assert_int_equal(f.lost, lost);
	assert_int_equal(f.excess, excess);
}

static void test_peer_rx(void **st)
{
	(void)st;
	peer_case(20, 1500, 20, true, NULL, 5, 0);                    /* 15 of 20: lost 5, exact */
	peer_case(20, 1550, 20, true, "not whole", 5, 0);             /* 15.5 datagrams */
	peer_case(20, 2500, 20, true, "received of", 0, 5);           /* 25 of 20: excess, no wrap */
	peer_case(20, 1500, 21, true, "saw sequence", 5, 0);          /* sequence beyond what we sent */
	peer_case(20, 1500, 20, false, "did not report stream 3", 5, 0);
}

/* send -c HOST against an iperf3 server: send's terms as the test's
 * parameters (refused as the server would refuse them), and its lines: the
 * server's receiver with our exact loss, what we sent */
static void test_client(void **st)
{
	(void)st;
	char err[256];
	struct txs_ip3_params p;
	struct txs_ip3_client_spec sp = { .streams = 2, .length = 100, .bidir = true, .reverse = true, .time = 5,
					  .rate_pps = 1000 };
	assert_int_equal(txs_ip3_client_params(&p, &sp, err, sizeof(err)), 0);
	assert_int_equal(p.proto, TXS_IP3_UDP);
	assert_int_equal(p.parallel, 2);
	assert_int_equal(p.len, 100);
	assert_false(p.reverse); /* --bidir wins */
	assert_true(p.bidirectional);
	assert_true(p.udp_counters_64bit);
	assert_int_equal(p.time, 5);
	assert_int_equal(p.blockcount, 0);
	assert_int_equal(p.bandwidth, 400000); /* 500 datagrams/s per stream of 800 bits */
	assert_non_null(strstr(p.client_version, "txscale-"));
	sp = (struct txs_ip3_client_spec){ .length = 12, .count = 50 };
	assert_int_equal(txs_ip3_client_params(&p, &sp, err, sizeof(err)), 0);
	assert_int_equal(p.parallel, 1);
	assert_int_equal(p.blockcount, 50);
	assert_false(p.udp_counters_64bit);
	sp.streams = 1000;
	assert_int_equal(txs_ip3_client_params(&p, &sp, err, sizeof(err)), -EINVAL);
	assert_true(err[0]);
	/* a forward test's lines: 15 of our 20 arrived, the server's own figure says 3 */
	struct txs_ip3_test t;
	memset(&t, 0, sizeof(t));
	struct txs_ip3_stream s1 = { .fd = -1, .id = 1, .sender = true, .sent = 20, .sent_bytes = 2000 };
	t.n = 1;
	t.s = &s1;
	t.t_start = 10;
	t.t_end = 12;
	struct txs_ip3_client_out o = { .u = { .tx_streams = 1, .sent = 20, .sent_bytes = 2000 },
					.rx = { .sent = 20, .received = 15, .bytes = 1500, .lost = 5, .peer_lost = 3,
						.peer_packets = 20, .jitter_sum = 0.002, .streams = 1, .exact = true } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	txs_ip3_client_write(f, "198.18.0.2", &t, &o, false);
	fclose(f);
	assert_string_equal(buf, "receiver 198.18.0.2: received 15, lost 5 (25%) exact, jitter 2.000 ms (the iperf3 "
				 "server's own loss figure: 3)\n"
				 "send: 1 stream, 2.000 s: sent 20 datagrams (10 pps), 2000 bytes, 0 failed writes\n");
	free(buf);
	f = open_memstream(&buf, &len);
	txs_ip3_client_write(f, "198.18.0.2", &t, &o, true);
	fclose(f);
	assert_non_null(strstr(buf, "{\"type\":\"receiver\",\"host\":\"198.18.0.2\",\"device\":\"iperf3\","
				    "\"received\":15,\"lost\":5,\"lost_exact\":true,\"expected\":20,"));
	assert_non_null(strstr(buf, "\n{\"type\":\"summary\",\"kind\":\"send\","));
	assert_non_null(strstr(buf, "\"threads\":[{\"id\":1,\"packets\":20}]"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client),
		cmocka_unit_test(test_params),   cmocka_unit_test(test_params_hostile), cmocka_unit_test(test_results),
		cmocka_unit_test(test_udp_hdr),  cmocka_unit_test(test_io),             cmocka_unit_test(test_rx), cmocka_unit_test(test_rx_core_payload), cmocka_unit_test(test_rx_core_payload_ip2), cmocka_unit_test(test_peer_rx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
