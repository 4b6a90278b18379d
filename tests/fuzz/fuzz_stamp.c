/* SPDX-License-Identifier: MIT */
/* Fuzz target: lib/stamp on hostile datagrams. Byte 0 selects:
 *   0 the reflector's answer, stateful; 1 stateless; 2 authenticated (key "k")
 *     (the answer is as long as the datagram or there is none; the base
 *     fields are the echo of the sender's; the session's counters move only
 *     for an answer);
 *   3 the sender's analysis fed the data as a stream of reflected packets
 *     (44 bytes each) against 64 packets sent: its counts hold together.
 * Any violated property aborts. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <txscale/stamp.h>
#include "fuzz_check.h"

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned mode = data[0] % 4;
	data++;
	size--;
	if (mode < 3) {
		static uint8_t out[TXS_STAMP_MAX_LEN];
		struct txs_stamp_refl_conf c = { .err_est = 1, .stateless = mode == 1 };
		if (mode == 2) {
			c.key.k[0] = 'k';
			c.key.len = 1;
		}
		struct txs_stamp_sess_ctr ctr = { 0 };
		struct txs_stamp_refl_pkt_stats ps = { 0 };
		struct txs_stamp_rx_meta m = { .t2_ns = 1700000000000000000ull, .ttl = 64, .tos = 0x2e, .kernel_ts = true };
		int tos = -2;
		int n = txs_stamp_reflect(&c, mode == 1 ? NULL : &ctr, data, size, &m, m.t2_ns + 5, out, sizeof(out), &tos,
					  &ps);
		size_t base = mode == 2 ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN;
		if (size < base) {
			CHECK(n == -EMSGSIZE);
			CHECK(ctr.rx == 0 && ctr.seq == 0);
			return 0;
		}
		if (n < 0) {
			CHECK(mode == 2 && n == -EACCES);
			CHECK(ctr.rx == 0 && ctr.seq == 0);
			return 0;
		}
		CHECK((size_t)n == size);
		CHECK(tos >= -1 && tos <= 255);
		struct txs_stamp_pkt s, r;
		CHECK(txs_stamp_decode_sender(data, size, &c.key, &s) == 0);
		CHECK(txs_stamp_decode_reflected(out, (size_t)n, &c.key, &r) == 0);
		CHECK(r.s_seq == s.seq && r.s_ts == s.ts && r.s_err == s.err && r.ssid == s.ssid && r.s_ttl == 64);
		CHECK(r.seq == (mode == 1 ? s.seq : 0));
		CHECK(mode == 1 || (ctr.rx == 1 && ctr.seq == 1 && ctr.tx == 1));
		/* TLVs: same types and lengths where they came, flags only U/M/I added */
		size_t off = base;
		while (off + 4 <= size) {
			uint16_t vlen = be16(data + off + 2);
			if (!data[off] && !data[off + 1] && !vlen)
				break;
			CHECK(out[off + 1] == data[off + 1] && be16(out + off + 2) == vlen);
			CHECK((out[off] & 0x1f) == (data[off] & 0x1f));
			if (vlen > size - off - 4) {
				CHECK(out[off] & TXS_STAMP_TLV_M);
				break;
			}
			if (out[off] & TXS_STAMP_TLV_M)
				break;
			off += 4u + vlen;
		}
		return 0;
	}
	struct txs_stamp_ana *a = txs_stamp_ana_new(1000);
	CHECK(a);
	for (uint32_t i = 0; i < 64; i++)
		CHECK(txs_stamp_ana_sent(a, 1000 + i, 1700000000000000000ull + i * 1000) == 0);
	for (size_t off = 0; off + 44 <= size; off += 44) {
		struct txs_stamp_pkt p;
		CHECK(txs_stamp_decode_reflected(data + off, 44, NULL, &p) == 0);
		int rc = txs_stamp_ana_reply(a, &p, 1700000000000000000ull + (uint64_t)off * 977);
		CHECK(rc == 0 || rc == -ERANGE);
	}
	struct txs_stamp_result r;
	CHECK(txs_stamp_ana_result(a, &r) == 0);
	CHECK(r.sent == 64 && r.received <= 64 && r.lost == r.sent - r.received);
	if (r.stateful && !r.split_inconsistent)
		CHECK(r.lost_forward + r.lost_backward == r.lost);
	if (!r.stateful || r.split_inconsistent)
		CHECK(r.lost_forward == 0 && r.lost_backward == 0 && !r.split_exact);
	CHECK(r.rtt.count <= r.received && r.fwd.count == r.rtt.count);
	CHECK(r.rtt.count == 0 || (r.rtt.min <= r.rtt.p50 && r.rtt.p50 <= r.rtt.max));
	txs_stamp_ana_free(a);
	return 0;
}
