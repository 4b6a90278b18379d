/* SPDX-License-Identifier: MIT */
/* lib/stamp: timestamps (NTP, PTPv2), the four packet layouts and the HMAC,
 * the reflector's answer (numbering, echoed fields, TLVs: U, M, I flags,
 * CoS, Direct Measurement, zero padding left alone), and the sender's
 * analysis against a simulated path that loses, duplicates and reorders in
 * each direction with a reflector whose clock is off by a known amount:
 * the loss split, duplicates, reordering and the clock estimate come out as
 * the simulation made them. Hostile input: random datagrams never crash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/stamp.h>
#include "stamp/stamp_priv.h"
#include "test_util.h"

static const struct txs_stamp_rx_meta META = { .t2_ns = 1700000000123456789ull, .ttl = 61, .tos = 0xb9, .kernel_ts = true };

static void timestamps(void **st)
{
	(void)st;
	assert_true(txs_stamp_ntp_from_ns(0) == 2208988800ull << 32);
	uint64_t ns = 1700000000123456789ull;
	uint64_t back = txs_stamp_ns_from_ts(txs_stamp_ntp_from_ns(ns), 0);
	assert_true(back <= ns + 1 && back + 1 >= ns);
	/* half a second is 2^31 */
	assert_true((txs_stamp_ntp_from_ns(500000000ull) & 0xffffffffull) == 1ull << 31);
	/* PTPv2: seconds and nanoseconds */
	assert_true(txs_stamp_ns_from_ts(5ull << 32 | 7, TXS_STAMP_ERR_Z) == 5000000007ull);
}

static void layouts(void **st)
{
	(void)st;
	uint8_t b[200];
	struct txs_stamp_pkt p = { .seq = 0x01020304, .ts = 0x1112131415161718ull, .err = 0x8107, .ssid = 0xbeef }, q;
	struct txs_stamp_key none = { .len = 0 }, key = { .k = "secret", .len = 6 }, other = { .k = "secreT", .len = 6 };
	memset(b, 0xee, sizeof(b));
	assert_int_equal(txs_stamp_encode_sender(b, 44, &p, &none), 0);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[3], 4);
	assert_int_equal(b[4], 0x11);
	assert_int_equal(b[12], 0x81);
	assert_int_equal(b[14], 0xbe);
	for (int i = 16; i < 44; i++)
		assert_int_equal(b[i], 0); /* MBZ */
	assert_int_equal(txs_stamp_decode_sender(b, 44, &none, &q), 0);
	assert_true(q.seq == p.seq && q.ts == p.ts && q.err == p.err && q.ssid == p.ssid);
	assert_int_equal(txs_stamp_decode_sender(b, 43, &none, &q), -EMSGSIZE);
	assert_int_equal(txs_stamp_encode_sender(b, 43, &p, &none), -EINVAL);
	/* authenticated: 112 octets, timestamp at 16, SSID at 26, HMAC over 96 */
	assert_int_equal(txs_stamp_encode_sender(b, 112, &p, &key), 0);
	assert_int_equal(b[16], 0x11);
	assert_int_equal(b[26], 0xbe);
	assert_int_equal(txs_stamp_decode_sender(b, 112, &key, &q), 0);
	assert_true(q.seq == p.seq && q.ts == p.ts && q.ssid == p.ssid);
	assert_int_equal(txs_stamp_decode_sender(b, 112, &other, &q), -EACCES);
	assert_int_equal(txs_stamp_decode_sender(b, 111, &key, &q), -EMSGSIZE);
	b[50] ^= 1; /* an MBZ octet changed on the way: the MAC covers it */
	assert_int_equal(txs_stamp_decode_sender(b, 112, &key, &q), -EACCES);
}

static int reflect(const struct txs_stamp_refl_conf *c, struct txs_stamp_sess_ctr *ctr, const uint8_t *in, size_t len,
		   uint8_t *out, int *tos, struct txs_stamp_refl_pkt_stats *ps)
{
	return txs_stamp_reflect(c, ctr, in, len, &META, META.t2_ns + 1000, out, 2048, tos, ps);
}

static void reflector_fields(void **st)
{
	(void)st;
	struct txs_stamp_refl_conf c = { .err_est = 0x0101 };
	struct txs_stamp_sess_ctr ctr = { 0 };
	struct txs_stamp_refl_pkt_stats ps = { 0 };
	uint8_t in[64] = { 0 }, out[2048];
	int tos;
	for (uint32_t k = 0; k < 3; k++) {
		struct txs_stamp_pkt p = { .seq = 1000 + 7 * k, .ts = 0xabcdef0012345678ull, .err = 0x0203, .ssid = 9 }, r;
		txs_stamp_encode_sender(in, 64, &p, NULL);
		assert_int_equal(reflect(&c, &ctr, in, 64, out, &tos, &ps), 64);
		assert_int_equal(txs_stamp_decode_reflected(out, 64, NULL, &r), 0);
		assert_int_equal(r.seq, k); /* stateful: its own numbers */
		assert_int_equal(r.s_seq, p.seq);
		assert_true(r.s_ts == p.ts);
		assert_int_equal(r.s_err, p.err);
		assert_int_equal(r.ssid, 9);
		assert_int_equal(r.s_ttl, 61);
		assert_int_equal(r.err, 0x0101);
		assert_true(r.rx_ts == txs_stamp_ntp_from_ns(META.t2_ns));
		assert_true(txs_stamp_ns_from_ts(r.ts, r.err) >= txs_stamp_ns_from_ts(r.rx_ts, r.err));
		assert_int_equal(tos, 0xb8); /* the DSCP received, ECN cleared */
		for (int i = 44; i < 64; i++)
			assert_int_equal(out[i], 0); /* zero padding stays zero (no TLV made of it) */
	}
	assert_int_equal(ps.tlv_unknown, 0);
	/* stateless: the sender's number */
	struct txs_stamp_pkt p = { .seq = 77 }, r;
	txs_stamp_encode_sender(in, 44, &p, NULL);
	assert_int_equal(reflect(&c, NULL, in, 44, out, &tos, &ps), 44);
	txs_stamp_decode_reflected(out, 44, NULL, &r);
	assert_int_equal(r.seq, 77);
	/* runts */
	assert_int_equal(reflect(&c, &ctr, in, 43, out, &tos, &ps), -EMSGSIZE);
	assert_int_equal(ctr.rx, 3);
}

static size_t tlv(uint8_t *b, uint8_t flags, uint8_t type, const void *v, uint16_t len)
{
	b[0] = flags;
	b[1] = type;
	b[2] = (uint8_t)(len >> 8);
	b[3] = (uint8_t)len;
	memcpy(b + 4, v, len);
	return 4u + len;
}

static void reflector_tlvs(void **st)
{
	(void)st;
	struct txs_stamp_refl_conf c = { .err_est = 1 };
	struct txs_stamp_sess_ctr ctr = { .seq = 5, .rx = 5, .tx = 5 };
	struct txs_stamp_refl_pkt_stats ps = { 0 };
	uint8_t in[256] = { 0 }, out[2048];
	struct txs_stamp_pkt p = { .seq = 1, .ssid = 2 };
	txs_stamp_encode_sender(in, 44, &p, NULL);
	size_t off = 44;
	uint8_t cos[4] = { 12 << 2, 0, 0, 0 }, dm[12] = { 0, 0, 0, 9 }, tsi[4] = { 0 }, unk[3] = { 'x', 'y', 'z' };
	off += tlv(in + off, TXS_STAMP_TLV_U, TXS_STAMP_TLV_COS, cos, 4); /* a sender's stray U: not echoed */
	off += tlv(in + off, 0, TXS_STAMP_TLV_DIRECT, dm, 12);
	off += tlv(in + off, 0, TXS_STAMP_TLV_TSINFO, tsi, 4);
	size_t unk_off = off;
	off += tlv(in + off, 0, 250, unk, 3);
	size_t bad_off = off;
	off += tlv(in + off, 0, TXS_STAMP_TLV_PADDING, "ab", 2);
	in[bad_off + 3] = 200; /* runs past the datagram */
	int tos;
	assert_int_equal(reflect(&c, &ctr, in, off, out, &tos, &ps), (int)off);
	/* CoS: DSCP1 kept, DSCP2 = 46 received, ECN = 1 received, the reply with DSCP1 */
	assert_int_equal(out[44], 0);
	assert_int_equal(out[48] >> 2, 12);
	assert_int_equal(((out[48] & 3) << 4) | out[49] >> 4, 0xb9 >> 2);
	assert_int_equal((out[49] >> 2) & 3, 1);
	assert_int_equal(tos, 12 << 2);
	/* Direct Measurement: S_TxC as sent, R_RxC 6, R_TxC 6 (this one included) */
	assert_int_equal(out[56 + 3], 9);
	assert_int_equal(out[60 + 3], 6);
	assert_int_equal(out[64 + 3], 6);
	/* Timestamp Information filled: software stamps (kernel receive) */
	assert_int_equal(out[72 + 1], 2);
	assert_int_not_equal(out[72 + 3], 0);
	/* unknown: U set, value as sent */
	assert_int_equal(out[unk_off], TXS_STAMP_TLV_U);
	assert_memory_equal(out + unk_off + 1, in + unk_off + 1, 6);
	/* too long: M set, processing stops */
	assert_int_equal(out[bad_off], TXS_STAMP_TLV_M);
	assert_int_equal(ps.tlv_unknown, 1);
	assert_int_equal(ps.tlv_malformed, 1);
	assert_int_equal(ctr.seq, 6);
}

static void reflector_auth(void **st)
{
	(void)st;
	struct txs_stamp_refl_conf c = { .err_est = 1, .key = { .k = "k3y", .len = 3 } };
	struct txs_stamp_refl_pkt_stats ps = { 0 };
	uint8_t in[256] = { 0 }, out[2048];
	struct txs_stamp_pkt p = { .seq = 42, .ts = 99, .ssid = 3 }, r;
	int tos;
	txs_stamp_encode_sender(in, 112, &p, &c.key);
	assert_int_equal(reflect(&c, NULL, in, 112, out, &tos, &ps), 112);
	assert_int_equal(txs_stamp_decode_reflected(out, 112, &c.key, &r), 0);
	assert_int_equal(r.s_seq, 42);
	assert_true(r.s_ts == 99);
	assert_int_equal(r.ssid, 3);
	assert_int_equal(r.s_ttl, 61);
	struct txs_stamp_key wrong = { .k = "k3Y", .len = 3 };
	assert_int_equal(txs_stamp_decode_reflected(out, 112, &wrong, &r), -EACCES);
	in[5] = 1; /* MBZ changed: the MAC no longer fits */
	assert_int_equal(reflect(&c, NULL, in, 112, out, &tos, &ps), -EACCES);
	assert_int_equal(reflect(&c, NULL, in, 100, out, &tos, &ps), -EMSGSIZE);
}

/* The reply built in place is the reply built apart, byte for byte: plain
 * and authenticated, with TLVs (an HMAC TLV good and bad) */
static void reflector_in_place(void **st)
{
	(void)st;
	for (int auth = 0; auth < 2; auth++)
		for (int bad = 0; bad < 2; bad++) {
			struct txs_stamp_refl_conf c = { .err_est = 1 };
			if (auth)
				c.key = (struct txs_stamp_key){ .k = "key!", .len = 4 };
			size_t base = auth ? 112 : 44, off = base;
			uint8_t in[300] = { 0 }, apart[2048], inplace[300];
			struct txs_stamp_pkt p = { .seq = 5, .ts = 1234, .ssid = 77 };
			txs_stamp_encode_sender(in, base, &p, &c.key);
			uint8_t cos[4] = { 10 << 2, 0, 0, 0 }, dm[12] = { 0, 0, 0, 1 }, mac[16] = { 0 };
			off += tlv(in + off, 0, TXS_STAMP_TLV_COS, cos, 4);
			off += tlv(in + off, 0, TXS_STAMP_TLV_DIRECT, dm, 12);
			off += tlv(in + off, 0, 99, "q", 1);
			if (auth) {
				off += tlv(in + off, 0, TXS_STAMP_TLV_HMAC, mac, 16);
				stamp_tlv_hmac_fill(&c.key, in, off); /* the sender's, right */
				if (bad)
					in[off - 1] ^= 1;
			}
			memcpy(inplace, in, off);
			struct txs_stamp_sess_ctr c1 = { 0 }, c2 = { 0 };
			struct txs_stamp_refl_pkt_stats s1 = { 0 }, s2 = { 0 };
			int t1, t2;
			assert_int_equal(reflect(&c, &c1, in, off, apart, &t1, &s1), (int)off);
			assert_int_equal(txs_stamp_reflect(&c, &c2, inplace, off, &META, META.t2_ns + 1000, inplace,
							   sizeof(inplace), &t2, &s2),
					 (int)off);
			assert_memory_equal(apart, inplace, off);
			assert_int_equal(t1, t2);
			assert_int_equal(s1.tlv_bad_hmac, auth && bad);
			assert_int_equal(s2.tlv_bad_hmac, auth && bad);
			if (auth) /* our HMAC TLV, over our Sequence Number and TLVs, unless the sender's was bad */
				assert_int_equal(apart[off - 20] & TXS_STAMP_TLV_I, bad ? TXS_STAMP_TLV_I : 0);
		}
}

/* The reflector's in-place answer to a plain 44-byte packet (its fast path)
 * is byte for byte the general path's (decode, encode into another buffer):
 * random packets, MBZ octets not zero included, stateful and stateless,
 * TTL and TOS known or not. */
static void reflector_in_place_base(void **st)
{
	(void)st;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 2000; k++) {
		struct txs_stamp_refl_conf c = { .err_est = (uint16_t)(k * 77) };
		uint8_t in[44], apart[2048], inplace[44];
		for (int i = 0; i < 44; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = (uint8_t)x;
		}
		if (k % 3 == 0)
			memset(in + 16, 0, 28); /* as the RFC sends it */
		struct txs_stamp_rx_meta m = META;
		m.ttl = k % 5 == 0 ? -1 : (int)(x >> 8) % 300;
		m.tos = k % 7 == 0 ? -1 : (int)((x >> 20) & 0xff);
		m.t2_ns += (uint64_t)k * 1000003u;
		memcpy(inplace, in, 44);
		struct txs_stamp_sess_ctr c1 = { .seq = (uint32_t)k * 3u }, c2 = c1;
		struct txs_stamp_refl_pkt_stats s1 = { 0 }, s2 = { 0 };
		bool stateless = k & 1;
		int t1 = 7, t2 = 9;
		assert_int_equal(txs_stamp_reflect(&c, stateless ? NULL : &c1, in, 44, &m, m.t2_ns + 999, apart,
						   sizeof(apart), &t1, &s1), 44);
		assert_int_equal(txs_stamp_reflect(&c, stateless ? NULL : &c2, inplace, 44, &m, m.t2_ns + 999, inplace,
						   sizeof(inplace), &t2, &s2), 44);
		assert_memory_equal(apart, inplace, 44);
		assert_int_equal(t1, t2);
		assert_memory_equal(&c1, &c2, sizeof(c1));
	}
}

/* ---- the sender's analysis ------------------------------------------------------------ */

struct sim {
	uint32_t rseq;    /* the reflector's next number */
	int64_t off_ns;   /* the reflector's clock minus ours */
	uint64_t d_f, d_b; /* one-way delays */
};

/* our packet seq sent at t1 through the reflector: the reply as it arrives */
static struct txs_stamp_pkt sim_reflect(struct sim *s, uint32_t seq, uint64_t t1, uint64_t *t4)
{
	uint64_t t2 = t1 + s->d_f + (uint64_t)s->off_ns, t3 = t2 + 2000;
	struct txs_stamp_pkt r = { .seq = s->rseq++, .rx_ts = txs_stamp_ntp_from_ns(t2),
				   .ts = txs_stamp_ntp_from_ns(t3), .s_seq = seq };
	*t4 = t3 - (uint64_t)s->off_ns + s->d_b;
	return r;
}

static void analysis(void **st)
{
	(void)st;
	const uint32_t seq0 = 0x40001234, n = 10000;
	struct sim s = { .rseq = 17, .off_ns = 5000000, .d_f = 100000, .d_b = 100000 };
	struct txs_stamp_ana *a = txs_stamp_ana_new(seq0);
	assert_non_null(a);
	uint64_t t = 1700000000000000000ull, lf = 0, lb = 0, df = 0, db = 0;
	struct txs_stamp_pkt held;
	uint64_t held_t4 = 0;
	bool holding = false;
	for (uint32_t i = 0; i < n; i++, t += 100000) {
		uint32_t seq = seq0 + i;
		assert_int_equal(txs_stamp_ana_sent(a, seq, t), 0);
		bool drop_f = i && i % 13 == 4, drop_b = i != n - 1 && i % 17 == 6;
		if (drop_f) {
			lf++;
			continue;
		}
		uint64_t t4;
		struct txs_stamp_pkt r = sim_reflect(&s, seq, t, &t4);
		if (i % 101 == 50) { /* duplicated on the way there: reflected twice */
			uint64_t t4b;
			struct txs_stamp_pkt r2 = sim_reflect(&s, seq, t, &t4b);
			assert_int_equal(txs_stamp_ana_reply(a, &r, t4), 0);
			assert_int_equal(txs_stamp_ana_reply(a, &r2, t4b), 0);
			df++;
			continue;
		}
		if (drop_b) {
			lb++;
			continue;
		}
		if (i % 211 == 100) { /* held back: arrives after the next reply */
			held = r;
			held_t4 = t4;
			holding = true;
			continue;
		}
		assert_int_equal(txs_stamp_ana_reply(a, &r, t4), 0);
		if (holding) {
			assert_int_equal(txs_stamp_ana_reply(a, &held, held_t4), 0);
			holding = false;
		}
		if (i % 307 == 200) { /* duplicated on the way back */
			assert_int_equal(txs_stamp_ana_reply(a, &r, t4), 0);
			db++;
		}
	}
	/* not ours: a number we never sent, and a reflector number out of all proportion */
	struct txs_stamp_pkt bogus = { .seq = 18, .s_seq = seq0 + n + 5 };
	assert_int_equal(txs_stamp_ana_reply(a, &bogus, t), -ERANGE);
	bogus = (struct txs_stamp_pkt){ .seq = 17 + 3 * n, .s_seq = seq0 + 3 };
	assert_int_equal(txs_stamp_ana_reply(a, &bogus, t), -ERANGE);
	struct txs_stamp_result r;
	assert_int_equal(txs_stamp_ana_result(a, &r), 0);
	assert_true(r.stateful);
	assert_true(r.split_exact);
	assert_int_equal(r.sent, n);
	assert_int_equal(r.lost_forward, lf);
	assert_int_equal(r.lost_backward, lb);
	assert_int_equal(r.lost, lf + lb);
	assert_int_equal(r.dup_forward, df);
	assert_int_equal(r.dup_backward, db);
	assert_true(r.reorder_backward > 0);
	assert_int_equal(r.reorder_forward, 0);
	assert_int_equal(r.foreign, 2);
	assert_int_equal(r.reflected, n - lf + df);
	/* delays: RTT 200 us less nothing; forward raw 100 us + 5 ms, corrected 100 us */
	assert_int_equal(r.rtt.p50, 200000);
	assert_true(r.clock_valid);
	assert_true(llabs(r.clock_offset_ns - 5000000) <= 2);
	assert_true(r.clock_error_ns == 100000);
	assert_true(llabs(r.fwd.p50 - 5100000) <= 2);
	assert_true(llabs(r.fwd_corr.p50 - 100000) <= 4);
	assert_true(llabs(r.bwd_corr.p50 - 100000) <= 4);
	assert_int_equal(r.outages_forward, lf);
	assert_int_equal(r.longest_forward, 1);
	/* a gap with a forward loss: 2 send intervals (200 us) alone, 3 where a
	 * backward loss is next to it (i = 4 mod 13 beside i = 6 mod 17) */
	assert_int_equal(r.longest_forward_ns, 300000);
	assert_int_equal(r.longest_backward_ns, 300000);
	txs_stamp_ana_free(a);
}

static void analysis_stateless_and_tail(void **st)
{
	(void)st;
	/* stateless: the reflector's number is ours; no split */
	struct txs_stamp_ana *a = txs_stamp_ana_new(500);
	for (uint32_t i = 0; i < 10; i++) {
		txs_stamp_ana_sent(a, 500 + i, 1000000000ull * (i + 1));
		if (i == 3)
			continue;
		struct txs_stamp_pkt p = { .seq = 500 + i, .s_seq = 500 + i, .rx_ts = txs_stamp_ntp_from_ns(1000000000ull * (i + 1) + 10),
					   .ts = txs_stamp_ntp_from_ns(1000000000ull * (i + 1) + 20) };
		txs_stamp_ana_reply(a, &p, 1000000000ull * (i + 1) + 30);
	}
	struct txs_stamp_result r;
	txs_stamp_ana_result(a, &r);
	assert_false(r.stateful);
	assert_int_equal(r.lost, 1);
	assert_int_equal(r.lost_forward + r.lost_backward, 0);
	assert_int_equal(r.rtt.p50, 20);
	txs_stamp_ana_free(a);
	/* stateful, the last reply missing: not exact; a reply whose stamps make no sense */
	a = txs_stamp_ana_new(7);
	for (uint32_t i = 0; i < 4; i++) {
		txs_stamp_ana_sent(a, 7 + i, 1000000000ull);
		if (i == 3)
			break;
		struct txs_stamp_pkt p = { .seq = i, .s_seq = 7 + i, .rx_ts = txs_stamp_ntp_from_ns(1000000000ull + 10),
					   .ts = txs_stamp_ntp_from_ns(i == 2 ? 1000000000ull : 1000000000ull + 20) };
		txs_stamp_ana_reply(a, &p, 1000000000ull + 30);
	}
	txs_stamp_ana_result(a, &r);
	assert_true(r.stateful);
	assert_false(r.split_exact);
	assert_int_equal(r.lost, 1);
	assert_int_equal(r.bad_time, 1); /* T3 before T2 */
	assert_int_equal(r.rtt.count, 2);
	txs_stamp_ana_free(a);
	/* a reflector whose counter other sessions move too: it numbers 0, 10, 20 for our 3 */
	a = txs_stamp_ana_new(7);
	for (uint32_t i = 0; i < 3; i++) {
		txs_stamp_ana_sent(a, 7 + i, 1000000000ull);
		struct txs_stamp_pkt p = { .seq = 10 * i, .s_seq = 7 + i, .rx_ts = txs_stamp_ntp_from_ns(1000000000ull + 10),
					   .ts = txs_stamp_ntp_from_ns(1000000000ull + 20) };
		txs_stamp_ana_reply(a, &p, 1000000000ull + 30);
	}
	txs_stamp_ana_result(a, &r);
	assert_true(r.stateful && r.split_inconsistent && !r.split_exact);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.lost_forward + r.lost_backward, 0);
	txs_stamp_ana_free(a);
	/* the last packet lost forward, a tail probe answered 1 s later: the
	 * outage is the lost packet's own interval (1 ms at 1k/s), not 1 s */
	a = txs_stamp_ana_new(50);
	for (uint32_t i = 0; i < 11; i++) {
		uint64_t t1 = i < 10 ? 1000000000ull + i * 1000000ull : 2009000000ull;
		txs_stamp_ana_sent(a, 50 + i, t1);
		if (i == 9)
			continue; /* never reached the reflector */
		struct txs_stamp_pkt p = { .seq = i < 9 ? i : 9, .s_seq = 50 + i, .rx_ts = txs_stamp_ntp_from_ns(t1 + 10),
					   .ts = txs_stamp_ntp_from_ns(t1 + 20) };
		txs_stamp_ana_reply(a, &p, t1 + 30);
	}
	txs_stamp_ana_result(a, &r);
	assert_true(r.split_exact);
	assert_int_equal(r.lost_forward, 1);
	assert_int_equal(r.outages_forward, 1);
	assert_int_equal(r.longest_forward_ns, 2000000); /* from packet 8 to one interval past 9 */
	txs_stamp_ana_free(a);
	/* a reflector restarted mid-run: it numbers our 0..9 as 0..9, then the
	 * new one (per-sender numbers from 0, RFC 8762) numbers our 10..29 from
	 * 0 again: every
	 * packet arrived (no loss, no duplicate), and the split is said to be lost */
	a = txs_stamp_ana_new(100);
	for (uint32_t i = 0; i < 30; i++) {
		txs_stamp_ana_sent(a, 100 + i, 1000000000ull);
		struct txs_stamp_pkt p = { .seq = i < 10 ? i : i - 10, .s_seq = 100 + i,
					   .rx_ts = txs_stamp_ntp_from_ns(1000000000ull + 10),
					   .ts = txs_stamp_ntp_from_ns(1000000000ull + 20) };
		txs_stamp_ana_reply(a, &p, 1000000000ull + 30);
	}
	txs_stamp_ana_result(a, &r);
	assert_true(r.stateful && r.split_inconsistent && !r.split_exact);
	assert_int_equal(r.sent, 30);
	assert_int_equal(r.received, 30);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.dup_backward, 0);
	txs_stamp_ana_free(a);
}

static void hostile(void **st)
{
	(void)st;
	uint64_t seed = 11;
	struct txs_stamp_refl_conf c = { .err_est = 1 }, ca = { .err_est = 1, .key = { .k = "x", .len = 1 } };
	struct txs_stamp_sess_ctr ctr = { 0 };
	struct txs_stamp_refl_pkt_stats ps = { 0 };
	uint8_t in[600], out[2048];
	struct txs_stamp_ana *a = txs_stamp_ana_new(1);
	txs_stamp_ana_sent(a, 1, 1);
	for (int k = 0; k < 20000; k++) {
		size_t len = t_rand(&seed) % sizeof(in);
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)t_rand(&seed);
		if (k & 1) /* TLV-ish: small lengths */
			for (size_t i = 46; i + 1 < len; i += 7)
				in[i] = 0;
		int tos;
		int n = reflect(&c, &ctr, in, len, out, &tos, &ps);
		assert_true(n == (int)len || (len < 44 && n == -EMSGSIZE));
		n = reflect(&ca, NULL, in, len, out, &tos, &ps);
		assert_true(n == -EMSGSIZE || n == -EACCES);
		struct txs_stamp_pkt p;
		if (!txs_stamp_decode_reflected(in, len, NULL, &p))
			txs_stamp_ana_reply(a, &p, t_rand(&seed));
	}
	struct txs_stamp_result r;
	assert_int_equal(txs_stamp_ana_result(a, &r), 0);
	assert_true(r.sent == 1);
	txs_stamp_ana_free(a);
}

T_MAIN(cmocka_unit_test(timestamps), cmocka_unit_test(layouts), cmocka_unit_test(reflector_fields),
       cmocka_unit_test(reflector_tlvs), cmocka_unit_test(reflector_auth), cmocka_unit_test(reflector_in_place),
       cmocka_unit_test(reflector_in_place_base), cmocka_unit_test(analysis),
       cmocka_unit_test(analysis_stateless_and_tail), cmocka_unit_test(hostile))
