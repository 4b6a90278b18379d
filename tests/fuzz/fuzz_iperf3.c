/* SPDX-License-Identifier: MIT */
/* Fuzz target: iperf3's messages (lib/ctl/iperf3.c) as a hostile peer sends
 * them. Byte 0 selects the mode, the rest is the data:
 *   0 a parameter message for txs_ip3_params_decode (+ check)
 *   1 a results message for txs_ip3_results_decode
 *   2 a byte stream on the control connection: length-prefixed JSON messages
 *     read with txs_ip3_read_json (parameter cap) over a socketpair
 *   3 datagrams for a stream's counts (2-byte length, then the payload)
 * Properties (abort on violation): what decodes encodes, and that encoding
 * decodes to the same fields; every number within its documented range;
 * a stream's counts add up (received = unique + duplicates + late +
 * malformed) whatever arrives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/iperf3.h>

#include "fuzz_check.h"

static void params(const uint8_t *d, size_t n)
{
	struct txs_ip3_params p;
	char err[256] = "";
	int rc = txs_ip3_params_decode(&p, (const char *)d, n, err, sizeof(err));
	if (rc) {
		CHECK(rc == -EPROTO || rc == -EMSGSIZE || rc == -ENOMEM);
		CHECK(err[0]);
		return;
	}
	CHECK(p.parallel >= 1 && p.time <= TXS_IP3_TIME_MAX && p.tos <= 255);
	int e = txs_ip3_params_check(&p, 300, err, sizeof(err));
	CHECK(e >= 0);
	if (e == 0)
		CHECK(p.proto == TXS_IP3_UDP && p.len >= 12 && p.len <= TXS_IP3_LEN_MAX &&
		      p.parallel <= TXS_IP3_STREAMS_MAX);
	if (p.proto == TXS_IP3_PROTO_NONE || p.parallel > TXS_IP3_STREAMS_MAX || p.len > TXS_IP3_LEN_MAX ||
	    p.window > (1u << 30))
		return;
	char *j;
	size_t jn;
	rc = txs_ip3_params_encode(&p, &j, &jn, err, sizeof(err));
	if (rc)
		return; /* e.g. a number the encoder refuses */
	struct txs_ip3_params q;
	CHECK(txs_ip3_params_decode(&q, j, jn, err, sizeof(err)) == 0);
	q.has_authtoken = p.has_authtoken; /* never sent */
	CHECK(memcmp(&p, &q, sizeof(p)) == 0);
	free(j);
}

static void results(const uint8_t *d, size_t n)
{
	struct txs_ip3_results r;
	char err[256] = "";
	int rc = txs_ip3_results_decode(&r, (const char *)d, n, err, sizeof(err));
	if (rc) {
		CHECK(err[0] || rc == -ENOMEM);
		txs_ip3_results_free(&r);
		return;
	}
	CHECK(r.n <= TXS_IP3_RES_STREAMS_MAX && r.server_output_text);
	for (unsigned i = 0; i < r.n; i++)
		CHECK(r.s[i].id >= 1 && r.s[i].errors >= -1 && r.s[i].jitter >= 0 && r.s[i].jitter <= 3600 &&
		      r.s[i].bytes <= (1ull << 53));
	char *j;
	size_t jn;
	if (txs_ip3_results_encode(&r, &j, &jn, err, sizeof(err)) == 0) {
		struct txs_ip3_results b;
		CHECK(txs_ip3_results_decode(&b, j, jn, err, sizeof(err)) == 0);
		CHECK(b.n == r.n);
		for (unsigned i = 0; i < r.n; i++)
			CHECK(b.s[i].id == r.s[i].id && b.s[i].bytes == r.s[i].bytes &&
			      b.s[i].packets == r.s[i].packets && b.s[i].errors == r.s[i].errors);
		CHECK(strcmp(b.server_output_text, r.server_output_text) == 0);
		txs_ip3_results_free(&b);
		free(j);
	}
	txs_ip3_results_free(&r);
}

static void stream(const uint8_t *d, size_t n)
{
	int sv[2];
	if (n > 60000 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) < 0)
		return;
	if (n && write(sv[0], d, n) != (ssize_t)n) {
		close(sv[0]);
		close(sv[1]);
		return;
	}
	close(sv[0]);
	for (int i = 0; i < 64; i++) {
		char *j;
		size_t jn;
		int rc = txs_ip3_read_json(sv[1], TXS_IP3_PARAM_MAX, 50, &j, &jn);
		if (rc) {
			CHECK(!j);
			break;
		}
		CHECK(jn >= 1 && jn <= TXS_IP3_PARAM_MAX && j[jn] == 0);
		params((const uint8_t *)j, jn);
		free(j);
	}
	close(sv[1]);
}

static void dgrams(const uint8_t *d, size_t n)
{
	static struct txs_ip3_rx r;
	txs_ip3_rx_init(&r);
	bool c64 = n && (d[0] & 1);
	double t = 0;
	size_t off = n ? 1 : 0;
	while (off + 2 <= n) {
		size_t len = (size_t)d[off] << 8 | d[off + 1];
		off += 2;
		if (len > n - off)
			len = n - off;
		t += 0.001;
		txs_ip3_rx_dgram(&r, d + off, len, c64, t);
		off += len;
		CHECK(r.received == r.unique + r.duplicates + r.late + r.malformed);
		CHECK(r.unique <= r.highest);
		CHECK(r.ip3_errors >= 0);
	}
	uint64_t ex;
	uint64_t lost = txs_ip3_rx_lost(&r, r.highest, &ex);
	CHECK(lost + r.unique == r.highest && ex == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	switch (data[0] % 4) {
	case 0: params(d, n); break;
	case 1: results(d, n); break;
	case 2: stream(d, n); break;
	default: dgrams(d, n); break;
	}
	return 0;
}
