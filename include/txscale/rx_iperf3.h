/* SPDX-License-Identifier: MIT */
/* iperf3's UDP payload header and one iperf3 stream's counts at its
 * receiver (lib/rx/iperf3.c): the receive side of iperf3's wire format,
 * used by lib/rx (recv --payload iperf3) and by lib/ctl's iperf3 protocol
 * (include/txscale/iperf3.h). docs/iperf3.md. All functions are reentrant;
 * a struct txs_ip3_rx has one writer. */
#ifndef TXSCALE_RX_IPERF3_H
#define TXSCALE_RX_IPERF3_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the UDP payload header --------------------------------------------------------------------- */
/* sec (4), usec (4), sequence (4, or 8 with 64-bit counters), big-endian.
 * Returns the header length (12 or 16); len must be at least that. */
static inline size_t txs_ip3_hdr_len(bool c64)
{
	return c64 ? 16 : 12;
}
TXS_API void txs_ip3_hdr_write(uint8_t *buf, uint32_t sec, uint32_t usec, uint64_t seq, bool c64);
/* -EMSGSIZE when len is below the header; usec over 999999 is -EPROTO. */
TXS_API int txs_ip3_hdr_read(const uint8_t *buf, size_t len, bool c64, uint32_t *sec, uint32_t *usec, uint64_t *seq);

/* ---- a stream's receive counts --------------------------------------------------------------------- */
/* Exact counts of one iperf3 stream at its receiver: a window of the last
 * TXS_IP3_RX_WINDOW sequence numbers below the highest tells duplicates and
 * reordering apart from first arrivals; a sequence older than the window is
 * "late" (not counted as unique). Jitter as iperf3 defines it (RFC 1889 A.8
 * over |arrival - sent|, seconds), and iperf3's own loss figure (a gap adds
 * to it, an out-of-order arrival takes one back) beside. Single writer. */
#define TXS_IP3_RX_WINDOW 4096u
#define TXS_IP3_RX_MAX_JUMP (1ull << 30) /* a sequence further ahead is malformed */
struct txs_ip3_rx {
	uint64_t received, bytes, unique, duplicates, reordered, late, malformed;
	uint64_t highest;          /* highest sequence seen (0: none) */
	int64_t ip3_errors;        /* iperf3's loss count */
	uint64_t ip3_outoforder;
	double jitter, prev_transit; /* s */
	uint64_t win[TXS_IP3_RX_WINDOW / 64];
};
TXS_API void txs_ip3_rx_init(struct txs_ip3_rx *r);
/* One datagram: payload as received, arrival time in seconds on the
 * sender's clock's scale (only differences matter). */
TXS_API void txs_ip3_rx_dgram(struct txs_ip3_rx *r, const uint8_t *buf, size_t len, bool c64, double arrival_s);
/* The same for a sequence read elsewhere (iperf 2's header): seq 0 is
 * malformed; sec/usec the sender's stamp, len the datagram's length. */
TXS_API void txs_ip3_rx_seq(struct txs_ip3_rx *r, uint64_t seq, uint32_t sec, uint32_t usec, size_t len,
			    double arrival_s);
/* Exact loss against what the sender says it sent: sent - unique, never
 * below 0; *excess gets unique beyond sent (a liar or a duplicate sender). */
TXS_API uint64_t txs_ip3_rx_lost(const struct txs_ip3_rx *r, uint64_t sent, uint64_t *excess);

#ifdef __cplusplus
}
#endif
#endif
