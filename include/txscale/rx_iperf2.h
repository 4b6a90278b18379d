/* SPDX-License-Identifier: MIT */
/* iperf 2's UDP wire format (lib/rx/iperf2.c): the datagram header a
 * client writes, the end-of-test id, and the server report that answers it.
 * Used by lib/rx (recv --payload iperf2), by the iperf 2 service of
 * `txscale server` (lib/server) and by `send --iperf2` (lib/ctl).
 * docs/iperf2.md. Reentrant; no state.
 *
 * A datagram starts with id (4), tv_sec (4), tv_usec (4), id2 (4), all
 * big-endian; the sender's CLOCK_REALTIME. Data ids run from 1. The test
 * ends with a datagram whose id is negative; the client sends it again,
 * each time with the next magnitude, until a server report comes back.
 * Three spellings of that id exist:
 *   2.1.x   64-bit two's complement over id (low) and id2 (high): -N
 *   2.0.10+ sign and magnitude: the top bit of id (or, 64-bit, of id2) set
 *   2.0.5   32-bit two's complement in id, 12-byte header
 * A 2.x client's first datagrams carry its header flags at offset 16; with
 * HEADER_SEQNO64B the id is 64-bit. */
#ifndef TXSCALE_RX_IPERF2_H
#define TXSCALE_RX_IPERF2_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_IP2_PORT 5001       /* iperf 2's default port */
#define TXS_IP2_HDR_LEN 16      /* id, tv_sec, tv_usec, id2 */
#define TXS_IP2_HDR_MIN 12      /* 2.0.5's header: no id2 */
#define TXS_IP2_REPORT_LEN 128  /* the header, then server_hdr: base 40, extension 60, 64-bit upper halves 12 */
#define TXS_IP2_F_VERSION1 0x80000000u
#define TXS_IP2_F_EXTEND 0x40000000u /* client header: more follows; server report: latency fields set */
#define TXS_IP2_F_SEQNO64B 0x08000000u

/* Write a datagram header: id as 2.1 writes it (a negative id, the end of
 * the test, in 64-bit two's complement), the stamp. buf: 16 bytes. */
TXS_API void txs_ip2_hdr_write(uint8_t *buf, int64_t id, uint32_t sec, uint32_t usec);

/* Read a datagram's id and stamp. *id > 0: a data id; *id < 0: the end of
 * the test, -magnitude (of the spellings above, the one nearest hint: the
 * sender's next data id as the reader knows it, 0 when it does not).
 * -EMSGSIZE under 12 bytes, -EPROTO for id 0 or usec over 999999. */
TXS_API int txs_ip2_hdr_read(const uint8_t *buf, size_t len, uint64_t hint, int64_t *id, uint32_t *sec,
			     uint32_t *usec);

/* The server report: what an iperf 2 client prints as "Server Report". */
struct txs_ip2_report {
	uint32_t flags;         /* TXS_IP2_F_*: VERSION1 | SEQNO64B, EXTEND when the latency fields are set */
	uint64_t bytes;         /* received, the end datagram's included */
	double seconds;         /* first datagram to the end datagram */
	uint64_t errors;        /* lost: ids up to datagrams not received */
	uint64_t out_of_order;
	uint64_t datagrams;     /* the magnitude of the end datagram's id: the total iperf 2 reports */
	double jitter;          /* s */
	/* EXTEND: one-way transit, s */
	double t_min, t_max, t_sum, t_mean, t_m2;
	uint32_t t_cnt;
};
/* Encode into buf (TXS_IP2_REPORT_LEN bytes: a zeroed datagram header,
 * then the report). */
TXS_API void txs_ip2_report_write(uint8_t *buf, const struct txs_ip2_report *r);
/* Decode what a server sent back (len: what came). -EMSGSIZE when it is
 * shorter than the header and the report's base (56 bytes), -EPROTO when
 * its flags do not say VERSION1; the 64-bit halves are read only when the
 * flags say SEQNO64B and they are there. */
TXS_API int txs_ip2_report_read(const uint8_t *buf, size_t len, struct txs_ip2_report *r);

#ifdef __cplusplus
}
#endif
#endif
