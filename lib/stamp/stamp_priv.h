/* SPDX-License-Identifier: MIT */
/* lib/stamp's own helpers: big-endian fields, the HMAC. Not public. */
#ifndef TXS_STAMP_PRIV_H
#define TXS_STAMP_PRIV_H
#include <stdint.h>
#include <txscale/stamp.h>

/* HMAC-SHA-256 over a then b, truncated to 16 octets */
void stamp_hmac(const struct txs_stamp_key *k, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		uint8_t out[TXS_STAMP_HMAC_LEN]);
void stamp_tlv_hmac_fill(const struct txs_stamp_key *k, uint8_t *buf, size_t len);
void stamp_encode_reflected(uint8_t *out, bool auth, const struct txs_stamp_pkt *p);
/* The error estimate of this host's clock (adjtimex): S, scale, multiplier; *synced */
uint16_t stamp_clock_err(bool *synced);
struct txs_stamp_ana;
/* The TLVs of a reply (from base): the Class of Service TLV's DSCP and ECN */
void stamp_ana_reply_tlvs(struct txs_stamp_ana *a, const uint8_t *buf, size_t len, size_t base);
/* Progress so far: packets sent, distinct replies, delay samples */
void stamp_ana_progress(const struct txs_stamp_ana *a, uint64_t *sent, uint64_t *received, size_t *samples);
/* The RTT distribution of samples [from, to). 0 or -ENOMEM. */
int stamp_ana_rtt_range(const struct txs_stamp_ana *a, size_t from, size_t to, struct txs_stamp_dist *d);
/* A datagram on our socket that is no reply of ours */
void stamp_ana_count_foreign(struct txs_stamp_ana *a);

/* ---- the session-sender's transmit side on the engine (gen.c) ---- */
#include <txscale/engine.h>
#include <txscale/pkt.h>
/* One session as its worker (worker k: session k) sends it. Set up before
 * the engine starts and read-only to the worker, except pub: the worker's
 * count of packets numbered, stored once per burst (release), read by the
 * session's receive thread (acquire); alone on its cache line. */
struct stamp_gen_sess {
	struct txs_flow_spec spec;      /* addresses, ports, TOS, payload_len = len */
	const struct txs_stamp_key *key;
	const uint8_t *stmpl;           /* the STAMP packet: base zeroed + TLVs */
	size_t len, dm_off;             /* its length; Direct Measurement value (0: none) */
	bool tlv_hmac, ptp;
	uint16_t ssid, err_est;
	uint32_t seq0;                  /* the worker's first sequence number */
	/* T1 of the worker's packet j: t1[j >> STAMP_T1_SHIFT][j & mask], the
	 * chunks allocated by the worker as it gets to them (once per 4096
	 * packets), read by the receive thread below pub.numbered only.
	 * STAMP_T1_CHUNKS entries, zeroed, allocated with the session. */
	uint64_t **t1;
	struct {
		uint64_t numbered;
		TXS_CACHE_GUARD;
	} pub TXS_CACHE_ALIGNED;
};
#define STAMP_T1_SHIFT 12
#define STAMP_T1_CHUNKS (1u << 18) /* 2^30 packets per session */
struct stamp_gen_conf {
	struct stamp_gen_sess **sess;
	unsigned n;
};
extern const struct txs_gen_ops stamp_gen_ops;
#endif
