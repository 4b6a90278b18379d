/* SPDX-License-Identifier: MIT */
/* Private to lib/rx: the per-core analysis state. */
#ifndef TXS_RX_PRIV_H
#define TXS_RX_PRIV_H
#include <txscale/rx.h>
#include "pkt/eth.h"

/* One "the running maximum increased" event: arrival index and sequence.
 * Both grow monotonically along the ring, so the RFC 4737 extent of a
 * reordered packet is found by binary search (see rx.c). */
struct rx_ev {
	uint64_t idx, seq;
};

enum rx_key_kind { RX_KEY_ID = 1, RX_KEY_TUPLE = 2 };

/* A run of unique sequences [lo, hi). A flow keeps the set of sequences it
 * counted unique as runs (the newest in the flow, older ones sorted in an
 * array that grows only with gaps and reordering), so that the merge of a
 * flow seen by several cores counts each sequence once (result.c). */
struct rx_run {
	uint64_t lo, hi;
};
#define RX_RUNS_MAX (1u << 22) /* runs per core (64 MiB); beyond: merge inexact */

struct rx_flow {
	/* hot: touched per packet */
	uint64_t next;          /* highest sequence + 1, mod 2^64 (0: none yet) */
	uint64_t base;          /* start of the current epoch: [base, next) is the flow's span */
	uint64_t received;      /* arrivals, also the arrival index */
	uint64_t unique, dup, reordered, late;
	uint64_t bytes;
	uint64_t *bits;         /* window bitmap, window/64 words */
	struct rx_ev *ev;       /* TXS_RX_EXTENT_RING entries */
	uint64_t ev_head;       /* events pushed */
	int64_t last_transit;
	uint64_t jitter16;      /* RFC 3550 jitter, scaled by 16 */
	uint64_t jit_n;         /* transit times that entered it */
	uint64_t lat_count, lat_min, lat_max;
	__extension__ unsigned __int128 lat_sum; /* 64 bits of ns would wrap in a long run */
	uint64_t run_lo, run_hi;  /* the newest run of unique sequences */
	uint64_t last_arr;        /* arrival of the last datagram (0: none timed yet) */
	uint64_t last_seq;        /* its sequence */
	struct rx_out *out;       /* outage state (outage.h), sequenced flows */
	bool have_transit;
	bool sequenced;
	bool runs_lost;          /* the run budget ran out: the set is incomplete */
	uint8_t kind;           /* enum txs_ph_kind */
	unsigned cand_n;        /* implausible packets in a row (reset by any plausible one) */
	/* cold */
	uint64_t cand;          /* implausible run: the sequence that would continue it */
	uint64_t resyncs;
	uint64_t span_closed;   /* sequences covered by closed epochs (saturating) */
	uint64_t extent_max, extent_sum, extent_beyond;
	uint8_t key_kind;       /* enum rx_key_kind */
	uint32_t id;
	uint64_t hash;
	struct txs_rx_tuple tuple;
	struct rx_run *runs;     /* older runs, sorted, disjoint and apart */
	uint32_t n_runs, cap_runs;
};

static inline uint64_t rx_mix64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	v *= 0xc4ceb9fe1a85ec53ull;
	v ^= v >> 33;
	return v;
}

/* the flow table's hash of a flow id (never 0) */
static inline uint64_t rx_hash_id(uint32_t id)
{
	return rx_mix64(id | (uint64_t)RX_KEY_ID << 32) | 1;
}

struct rx_slot {
	uint64_t hash;          /* 0 = empty */
	struct rx_flow *f;
};

struct rx_pair {
	uint32_t src, dst;      /* network order */
	uint64_t datagrams, reuses, early, min_dist;
	uint64_t *last;         /* 65536 entries: datagram index (1-based) of the ID's last use, 0 = never */
	struct txs_hist *dist;
};

struct txs_rx_core {
	struct txs_rx_live live;        /* read by the controlling thread */
	TXS_CACHE_GUARD;
	/* everything below: owner only */
	struct txs_rx_conf conf;
	unsigned window, wmask, words;
	struct rx_flow *last;           /* last flow looked up (by id) */
	uint32_t last_id;
	struct rx_slot *tab;
	unsigned tab_mask, n_flows;
	struct rx_flow **flows;         /* creation order */
	uint64_t overflow;
	uint64_t perr[TXS_PERR__COUNT];
	uint64_t bad[TXS_RX_BAD__COUNT];
	uint64_t filtered;
	uint64_t lat_none, lat_negative, lat_past, lat_floored;
	int64_t clock_measured_ns; /* conf.clock_offset_ns as given (conf's is 0 when not applied) */
	bool clock_applied;        /* conf.clock_correct and the offset is beyond its error */
	uint64_t unsequenced;
	struct txs_hist lat;
	struct {
		uint64_t packets, bytes;
	} link[TXS_MAX_LINKS];
	uint64_t frag_v4, frag_v4_first, frag_v6, frag_v6_first;
	uint64_t tos[256];
	bool raw;
	struct rx_pair *pairs;
	unsigned n_pairs;
	struct rx_pair *last_pair;
	uint64_t id_pairs_overflow;
	uint64_t runs_total;            /* runs held over all flows (RX_RUNS_MAX) */
	struct rx_vlan {
		uint32_t key;           /* n_tags << 24 | outer VID << 12 | inner VID */
		uint64_t packets, bytes;
	} vlan[TXS_RX_VLANS_MAX];
	unsigned n_vlan, last_vlan;
	uint64_t vlan_overflow, untagged;
	uint64_t *size_pkts;            /* datagrams per UDP payload length (65536 entries) */
	uint64_t out_floor;             /* silences below this are never outages (outage.h) */
} TXS_CACHE_ALIGNED;

/* ---- the parse fast path ---------------------------------------------------------
 * The common frame shape (Ethernet or bare IP; IPv4 without options and not a
 * fragment, or IPv6 with UDP as next header; UDP length consistent; checksums
 * valid) parsed inline with checksums summed in native-load order. Anything
 * else returns false and the caller asks txs_parse(), which stays the one
 * authority on verdicts: rx_parse_fast() returning true implies txs_parse()
 * returns TXS_PERR_OK with the same fields (checked by tests/fuzz/fuzz_parse.c
 * on every input). */
struct rx_pkt {
	const uint8_t *payload;
	uint32_t payload_len;
	int family;
	uint16_t sport, dport, ip_id;
	uint8_t tos;
	uint8_t n_vlan;
	uint16_t vlan_tci[TXS_VLAN_MAX_TAGS];
	const uint8_t *src, *dst; /* 4 or 16 bytes, network order */
};

/* 64-bit ones'-complement add (end-around carry) */
static inline uint64_t rx_add64(uint64_t a, uint64_t b)
{
	a += b;
	return a + (a < b);
}

/* Partial Internet checksum of p[0..n), p at an even offset of the
 * checksummed data (lib/pkt's short inline form). */
static inline __attribute__((always_inline)) uint64_t rx_sum(const uint8_t *p, size_t n)
{
	return txs_csum_partial_short(p, n);
}

/* A partial sum checks out when it folds to 0xffff: a nonzero sum (end-around
 * carries never make one 0) that is 0 modulo 0xffff, which divides 2^64 - 1
 * (and 2^16 = 1 modulo it): same verdict as txs_csum_fold16() == 0xffff. */
static inline bool rx_csum_ok(uint64_t s)
{
	return s != 0 && s % 0xffff == 0;
}

/* The UDP part of a datagram the fast path took: ports and payload. */
static inline __attribute__((always_inline)) bool rx_fast_udp(struct rx_pkt *o, const uint8_t *u, uint32_t ulen)
{
	o->sport = txs_get_be16(u);
	o->dport = txs_get_be16(u + 2);
	o->payload = u + TXS_UDP_HLEN;
	o->payload_len = ulen - TXS_UDP_HLEN;
	return true;
}

static inline __attribute__((always_inline)) bool rx_fast4(const uint8_t *ip, size_t left, struct rx_pkt *o)
{
	if (left < TXS_IPV4_HLEN + TXS_UDP_HLEN || ip[0] != 0x45)
		return false;
	uint16_t tot = txs_get_be16(ip + 2);
	if (tot < TXS_IPV4_HLEN + TXS_UDP_HLEN || tot > left || ip[9] != TXS_IPPROTO_UDP ||
	    (txs_get_be16(ip + 6) & (TXS_IPV4_MF | TXS_IPV4_OFFMASK)))
		return false;
	if (!rx_csum_ok(rx_sum(ip, TXS_IPV4_HLEN)))
		return false;
	const uint8_t *u = ip + TXS_IPV4_HLEN;
	uint16_t ulen = txs_get_be16(u + 4);
	if (ulen != tot - TXS_IPV4_HLEN)
		return false;
	if (u[6] | u[7]) {
		uint8_t ph[4] = { 0, TXS_IPPROTO_UDP, (uint8_t)(ulen >> 8), (uint8_t)ulen };
		uint32_t w;
		uint64_t ab;
		memcpy(&w, ph, 4);
		memcpy(&ab, ip + 12, 8); /* saddr, daddr */
		if (!rx_csum_ok(rx_add64(rx_add64(ab, w), rx_sum(u, ulen))))
			return false;
	}
	o->family = AF_INET;
	o->tos = ip[1];
	o->ip_id = txs_get_be16(ip + 4);
	o->src = ip + 12;
	o->dst = ip + 16;
	return rx_fast_udp(o, u, ulen);
}

static inline __attribute__((always_inline)) bool rx_fast6(const uint8_t *ip, size_t left, struct rx_pkt *o)
{
	if (left < TXS_IPV6_HLEN + TXS_UDP_HLEN || (ip[0] >> 4) != 6 || ip[6] != TXS_IPPROTO_UDP)
		return false;
	uint16_t plen = txs_get_be16(ip + 4);
	if (plen < TXS_UDP_HLEN || plen > left - TXS_IPV6_HLEN)
		return false;
	const uint8_t *u = ip + TXS_IPV6_HLEN;
	if (txs_get_be16(u + 4) != plen || !(u[6] | u[7]))
		return false;
	uint8_t ph[8] = { 0, 0, (uint8_t)(plen >> 8), (uint8_t)plen, 0, 0, 0, TXS_IPPROTO_UDP };
	if (!rx_csum_ok(rx_add64(rx_add64(rx_sum(ip + 8, 32), rx_sum(ph, 8)), rx_sum(u, plen))))
		return false;
	o->family = AF_INET6;
	o->tos = (uint8_t)(txs_get_be32(ip) >> 20);
	o->ip_id = 0;
	o->src = ip + 8;
	o->dst = ip + 24;
	return rx_fast_udp(o, u, plen);
}

static inline __attribute__((always_inline)) bool rx_parse_fast(const uint8_t *buf, size_t len, enum txs_l2 l2, struct rx_pkt *o)
{
	o->n_vlan = 0;
	if (l2 == TXS_L2_ETH) {
		uint16_t type;
		size_t off = txs_eth_walk(buf, len, &type, o->vlan_tci, &o->n_vlan);
		if (!off)
			return false;
		if (type == TXS_ETHERTYPE_IPV4)
			return rx_fast4(buf + off, len - off, o);
		if (type == TXS_ETHERTYPE_IPV6)
			return rx_fast6(buf + off, len - off, o);
		return false;
	}
	if (len < 1)
		return false;
	if ((buf[0] >> 4) == 4)
		return rx_fast4(buf, len, o);
	if ((buf[0] >> 4) == 6)
		return rx_fast6(buf, len, o);
	return false;
}

/* The payload header, as txs_ph_read() reads it (same result; inlined for the
 * hot path, checked against it by tests/fuzz/fuzz_parse.c). */
static inline __attribute__((always_inline)) enum txs_ph_kind rx_ph_read(const uint8_t *p, size_t len,
									 struct txs_ph *ph)
{
	if (len >= TXS_PH_FULL_LEN) {
		if (txs_get_be32(p) != TXS_PH_MAGIC_FULL)
			return TXS_PH_NONE;
		ph->flow = txs_get_be32(p + 4);
		ph->seq = txs_get_be64(p + 8);
		ph->ts_ns = txs_get_be64(p + 16);
		return ph->kind = TXS_PH_FULL;
	}
	if (len >= TXS_PH_COMPACT_LEN && txs_get_be16(p) == TXS_PH_MAGIC_COMPACT) {
		ph->flow = txs_get_be16(p + 2);
		ph->seq = txs_get_be32(p + 4);
		ph->ts_ns = txs_get_be64(p + 8);
		return ph->kind = TXS_PH_COMPACT;
	}
	return TXS_PH_NONE;
}

/* input backends (input.c registry) */
extern const struct txs_rx_input_ops txs_rx_input_udp_ops;
extern const struct txs_rx_input_ops txs_rx_input_packet_ops;
extern const struct txs_rx_input_ops txs_rx_input_pcap_ops;
extern const struct txs_rx_input_ops txs_rx_input_xdp_ops;
void txs_rx_input_set_err(struct txs_rx_input *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Is every listed interface there and up? 0, -ENODEV (gone) or -ENETDOWN
 * (administratively down), with one line naming it (in->link_names[i]) in
 * err (may be NULL). Raw live inputs (packet:, xdp:). */
int txs_rx_links_check(const struct txs_rx_input *in, const int *ifindex, unsigned n_if, char *err, size_t errlen);
#endif
