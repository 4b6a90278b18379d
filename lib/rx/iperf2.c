/* SPDX-License-Identifier: MIT */
/* iperf 2's UDP wire format (include/txscale/rx_iperf2.h): the datagram
 * header, the end-of-test id in its three spellings, the server report.
 * Written from iperf 2.1.8's and 2.0.13's payload structures (UDP_datagram,
 * server_hdr) and checked against what Debian's 2.1.8 puts on the wire. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <txscale/pkt.h>
#include <txscale/rx_iperf2.h>

TXS_API void txs_ip2_hdr_write(uint8_t *buf, int64_t id, uint32_t sec, uint32_t usec)
{
	uint64_t u = (uint64_t)id;
	txs_put_be32(buf, (uint32_t)u);
	txs_put_be32(buf + 4, sec);
	txs_put_be32(buf + 8, usec);
	txs_put_be32(buf + 12, (uint32_t)(u >> 32));
}

/* |a - b| without overflow */
static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

TXS_API int txs_ip2_hdr_read(const uint8_t *buf, size_t len, uint64_t hint, int64_t *id, uint32_t *sec,
			     uint32_t *usec)
{
	if (len < TXS_IP2_HDR_MIN)
		return -EMSGSIZE;
	uint32_t lo = txs_get_be32(buf), hi = len >= TXS_IP2_HDR_LEN ? txs_get_be32(buf + 12) : 0;
	*sec = txs_get_be32(buf + 4);
	*usec = txs_get_be32(buf + 8);
	if (*usec > 999999)
		return -EPROTO;
	/* 64-bit when the client's header flags say so; without them (a
	 * datagram past the first ones at -l 16, or a 2.0 client), when id2
	 * holds what a 64-bit id's upper half can: 0, or a small id's sign */
	bool wide;
	uint32_t fl = len >= 20 ? txs_get_be32(buf + 16) : 0;
	if (fl & (TXS_IP2_F_VERSION1 | TXS_IP2_F_EXTEND))
		wide = fl & TXS_IP2_F_SEQNO64B;
	else
		wide = len >= TXS_IP2_HDR_LEN && (hi == 0 || hi == 0xffffffffu || hi == 0x80000000u);
	uint64_t v = wide ? (uint64_t)hi << 32 | lo : lo;
	uint64_t sign = wide ? 1ull << 63 : 1ull << 31;
	if (!(v & sign)) {
		if (v == 0)
			return -EPROTO;
		*id = (int64_t)v;
		return 0;
	}
	/* the end: two's complement (2.1, 2.0.5) or sign and magnitude (2.0.10+) */
	uint64_t twos = wide ? 0 - v : (uint64_t)(-(int64_t)(int32_t)lo);
	uint64_t mag = v & ~sign;
	uint64_t want = hint ? hint : 1;
	uint64_t m = twos >= 1 && (mag == 0 || dist(twos, want) <= dist(mag, want)) ? twos : mag;
	if (m == 0 || m > (uint64_t)INT64_MAX)
		return -EPROTO;
	*id = -(int64_t)m;
	return 0;
}

/* a value of seconds as iperf 2 splits it: whole part, then microseconds */
static void put_split(uint8_t *b, double s)
{
	if (!(s >= 0) || s > 2e9)
		s = 0;
	long w = (long)s;
	txs_put_be32(b, (uint32_t)w);
	txs_put_be32(b + 4, (uint32_t)(long)((s - (double)w) * 1e6));
}

static double get_split(const uint8_t *b)
{
	return (double)(int32_t)txs_get_be32(b) + (double)(int32_t)txs_get_be32(b + 4) / 1e6;
}

TXS_API void txs_ip2_report_write(uint8_t *buf, const struct txs_ip2_report *r)
{
	memset(buf, 0, TXS_IP2_REPORT_LEN);
	uint8_t *h = buf + TXS_IP2_HDR_LEN;
	txs_put_be32(h, r->flags);
	txs_put_be32(h + 4, (uint32_t)(r->bytes >> 32));
	txs_put_be32(h + 8, (uint32_t)r->bytes);
	put_split(h + 12, r->seconds);
	txs_put_be32(h + 20, (uint32_t)r->errors);
	txs_put_be32(h + 24, (uint32_t)r->out_of_order);
	txs_put_be32(h + 28, (uint32_t)r->datagrams);
	put_split(h + 32, r->jitter);
	if (r->flags & TXS_IP2_F_EXTEND) {
		put_split(h + 40, r->t_min);
		put_split(h + 48, r->t_max);
		put_split(h + 56, r->t_sum);
		put_split(h + 64, r->t_mean);
		put_split(h + 72, r->t_m2 * 1e12); /* iperf 2 sends the variance's sum in s^2 * 1e12 */
		txs_put_be32(h + 88, r->t_cnt);
		txs_put_be32(h + 92, (uint32_t)(r->seconds > 0 ? r->datagrams / r->seconds : 0));
		txs_put_be32(h + 96, 1);
	}
	if (r->flags & TXS_IP2_F_SEQNO64B) {
		txs_put_be32(h + 100, (uint32_t)(r->errors >> 32));
		txs_put_be32(h + 104, (uint32_t)(r->out_of_order >> 32));
		txs_put_be32(h + 108, (uint32_t)(r->datagrams >> 32));
	}
}

TXS_API int txs_ip2_report_read(const uint8_t *buf, size_t len, struct txs_ip2_report *r)
{
	memset(r, 0, sizeof(*r));
	if (len < TXS_IP2_HDR_LEN + 40)
		return -EMSGSIZE;
	const uint8_t *h = buf + TXS_IP2_HDR_LEN;
	r->flags = txs_get_be32(h);
	if (!(r->flags & TXS_IP2_F_VERSION1))
		return -EPROTO;
	r->bytes = (uint64_t)txs_get_be32(h + 4) << 32 | txs_get_be32(h + 8);
	r->seconds = get_split(h + 12);
	r->errors = txs_get_be32(h + 20);
	r->out_of_order = txs_get_be32(h + 24);
	r->datagrams = txs_get_be32(h + 28);
	r->jitter = get_split(h + 32);
	if ((r->flags & TXS_IP2_F_EXTEND) && len >= TXS_IP2_HDR_LEN + 100) {
		r->t_min = get_split(h + 40);
		r->t_max = get_split(h + 48);
		r->t_sum = get_split(h + 56);
		r->t_mean = get_split(h + 64);
		r->t_m2 = get_split(h + 72) * 1e-12;
		r->t_cnt = txs_get_be32(h + 88);
	}
	if ((r->flags & TXS_IP2_F_SEQNO64B) && len >= TXS_IP2_REPORT_LEN) {
		r->errors |= (uint64_t)txs_get_be32(h + 100) << 32;
		r->out_of_order |= (uint64_t)txs_get_be32(h + 104) << 32;
		r->datagrams |= (uint64_t)txs_get_be32(h + 108) << 32;
	}
	return 0;
}
