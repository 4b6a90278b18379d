/* SPDX-License-Identifier: MIT */
/* iperf3's payload header, and one iperf3 stream at its receiver (include/txscale/rx_iperf3.h): exact first
 * arrivals, duplicates and reordering from a window below the highest
 * sequence, iperf3's own loss and jitter figures beside. Sequences start at
 * 1; 0 and jumps beyond TXS_IP3_RX_MAX_JUMP are malformed, so no datagram
 * can make a count wrap. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <txscale/pkt.h>
#include <txscale/rx_iperf3.h>

#define WBITS TXS_IP3_RX_WINDOW

TXS_API void txs_ip3_hdr_write(uint8_t *buf, uint32_t sec, uint32_t usec, uint64_t seq, bool c64)
{
	txs_put_be32(buf, sec);
	txs_put_be32(buf + 4, usec);
	if (c64) {
		txs_put_be32(buf + 8, (uint32_t)(seq >> 32));
		txs_put_be32(buf + 12, (uint32_t)seq);
	} else {
		txs_put_be32(buf + 8, (uint32_t)seq);
	}
}

TXS_API int txs_ip3_hdr_read(const uint8_t *buf, size_t len, bool c64, uint32_t *sec, uint32_t *usec, uint64_t *seq)
{
	if (len < txs_ip3_hdr_len(c64))
		return -EMSGSIZE;
	*sec = txs_get_be32(buf);
	*usec = txs_get_be32(buf + 4);
	*seq = c64 ? (uint64_t)txs_get_be32(buf + 8) << 32 | txs_get_be32(buf + 12) : txs_get_be32(buf + 8);
	return *usec > 999999 ? -EPROTO : 0;
}


TXS_API void txs_ip3_rx_init(struct txs_ip3_rx *r)
{
	memset(r, 0, sizeof(*r));
}

static bool win_test_set(struct txs_ip3_rx *r, uint64_t seq)
{
	uint64_t i = seq % WBITS;
	uint64_t m = 1ull << (i % 64);
	bool was = r->win[i / 64] & m;
	r->win[i / 64] |= m;
	return was;
}

static void win_clear(struct txs_ip3_rx *r, uint64_t seq)
{
	uint64_t i = seq % WBITS;
	r->win[i / 64] &= ~(1ull << (i % 64));
}

TXS_API void txs_ip3_rx_dgram(struct txs_ip3_rx *r, const uint8_t *buf, size_t len, bool c64, double arrival_s)
{
	uint32_t sec = 0, usec = 0;
	uint64_t seq;
	if (txs_ip3_hdr_read(buf, len, c64, &sec, &usec, &seq) < 0)
		seq = 0;
	txs_ip3_rx_seq(r, seq, sec, usec, len, arrival_s);
}

TXS_API void txs_ip3_rx_seq(struct txs_ip3_rx *r, uint64_t seq, uint32_t sec, uint32_t usec, size_t len,
			    double arrival_s)
{
	r->received++;
	r->bytes += len;
	if (seq == 0 || seq > r->highest + TXS_IP3_RX_MAX_JUMP) {
		r->malformed++;
		return;
	}
	if (seq > r->highest) {
		/* clear the slots the window moves over */
		uint64_t from = r->highest + 1;
		if (seq - r->highest >= WBITS)
			memset(r->win, 0, sizeof(r->win));
		else
			for (uint64_t s = from; s < seq; s++)
				win_clear(r, s);
		win_clear(r, seq);
		win_test_set(r, seq);
		r->unique++;
		if (seq > r->highest + 1)
			r->ip3_errors += (int64_t)(seq - 1 - r->highest);
		r->highest = seq;
	} else {
		r->ip3_outoforder++;
		if (r->ip3_errors > 0)
			r->ip3_errors--;
		if (r->highest - seq >= WBITS)
			r->late++;
		else if (win_test_set(r, seq))
			r->duplicates++;
		else {
			r->reordered++;
			r->unique++;
		}
	}
	double transit = arrival_s - ((double)sec + usec / 1e6);
	if (r->received - r->malformed == 1)
		r->prev_transit = transit;
	double d = fabs(transit - r->prev_transit);
	r->prev_transit = transit;
	if (isfinite(d))
		r->jitter += (d - r->jitter) / 16.0;
}

TXS_API uint64_t txs_ip3_rx_lost(const struct txs_ip3_rx *r, uint64_t sent, uint64_t *excess)
{
	if (excess)
		*excess = r->unique > sent ? r->unique - sent : 0;
	return sent > r->unique ? sent - r->unique : 0;
}
