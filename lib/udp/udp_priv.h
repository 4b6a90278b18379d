/* SPDX-License-Identifier: MIT */
/* Private to lib/udp: endpoint layout, destination templates, frame builders. */
#ifndef TXS_UDP_PRIV_H
#define TXS_UDP_PRIV_H

#include <txscale/udp.h>

#define UDP_L3_OFF TXS_ETH_HLEN
#define UDP4_L4_OFF (TXS_ETH_HLEN + TXS_IPV4_HLEN) /* 34 */
#define UDP6_L4_OFF (TXS_ETH_HLEN + TXS_IPV6_HLEN) /* 54 */
#define UDP4_PAY_OFF (UDP4_L4_OFF + TXS_UDP_HLEN)  /* 42 */
#define UDP6_PAY_OFF (UDP6_L4_OFF + TXS_UDP_HLEN)  /* 62 */
#define UDP_TX_RETRIES 8
#define UDP_ALLOC_TRIES 4

/* A destination's frame header, built once: Ethernet + IP + UDP with every
 * constant field written (MACs, ethertype, version, protocol, addresses,
 * ports) and the per-message ones zero. Sums are ones'-complement partial
 * sums in native load order (see lib/pkt/csum.c). */
struct udp_dst {
	uint8_t hdr[64];
	uint64_t a0, a1;  /* key: destination, IPv6 form (IPv4 as ::ffff:a.b.c.d) */
	uint16_t dport;   /* key: network order */
	uint8_t v4;       /* frames are IPv4 */
	uint8_t valid;
	uint32_t ip_sum;  /* IPv4: saddr + daddr */
	uint32_t udp_sum; /* pseudo header without length: addresses, protocol; + ports */
	uint32_t id_hash; /* IPv4: txs_ident_hash4(daddr, saddr, UDP) */
} TXS_CACHE_ALIGNED;

/* Effective options of one datagram. */
struct udp_eff {
	uint8_t tos, ttl;
	bool df, no_csum;
	uint16_t gso;
	uint8_t ttl_set; /* TTL explicitly given (IPv4 TTL 0 check) */
};

struct udp_key {
	uint64_t a0, a1;
	uint16_t port; /* network order */
	bool v4;
};

struct txs_udp_ep {
	/* written per call, by the owner only */
	struct txs_pktbuf *b; /* the batch: own[] or borrowed from the engine */
	unsigned navail, nfill;
	struct txs_ident_flow flow;
	struct txs_udp_stats st;
	TXS_CACHE_GUARD;

	/* read per call */
	struct txs_txq *q;
	struct txs_ident *ident;
	struct txs_ident_core *icore;
	bool v6;        /* IPv6 endpoint */
	bool have_src4; /* IPv6 endpoint may send IPv4(-mapped) destinations */
	bool connected;
	bool df_zero;   /* txs_ident_df_zero(): unconnected DF datagrams get ID 0 */
	bool borrowed;  /* engine adapter: buffers lent per fill, never pushed */
	bool pending;   /* a corked datagram exists */
	unsigned batch;
	uint32_t mtu;
	unsigned max_segs;  /* GSO segments per call (UDP_MAX_SEGMENTS) */
	uint32_t frame_max; /* mtu + Ethernet header */
	int64_t fast_len[2]; /* [frame is IPv4]: largest payload sent with the
			      * defaults without checks; -1: none */
	struct udp_eff def;
	struct udp_dst *cache;
	unsigned cache_mask;
	struct udp_dst conn;

	/* cold */
	struct txs_udp_conf conf;
	bool own_ident;
	bool pend_flow;      /* pending datagram uses the flow counter */
	struct udp_eff pend_o;
	size_t pend_len;
	struct udp_dst pend_d;
	uint8_t *stage;      /* TXS_UDP6_MAX_PAYLOAD bytes: cork data, or a
			      * linearised iovec for the GSO / fragment paths */
	struct txs_pktbuf own[TXS_UDP_MAX_FRAMES];
};

/* frag.c: multi-frame emitters over a contiguous payload. Frames must already
 * be reserved: `fb` points at `count` batch slots (udp_frames_needed()). */
unsigned udp_frames_needed(const struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o,
			   size_t len);
void udp_emit_gso(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned segs, const struct udp_dst *d,
		  const struct udp_eff *o, uint16_t id, const uint8_t *p, size_t len);
void udp_emit_frag4(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned n, const struct udp_dst *d,
		    const struct udp_eff *o, uint16_t id, const uint8_t *p, size_t len);
void udp_emit_frag6(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned n, const struct udp_dst *d,
		    const struct udp_eff *o, uint32_t frag_id, const uint8_t *p, size_t len);

/* A flow's linksel key from its spec, prepared for ls (sockgen.c; gen.c
 * too). */
struct txs_linksel;
struct txs_flow_key;
struct txs_flow_spec;
void udp_flow_key(struct txs_linksel *ls, struct txs_flow_key *k, const struct txs_flow_spec *sp);

/* sockgen.c <-> sock.c: lend the engine's buffers to the endpoint for one
 * fill; unborrow returns how many frames were written. */
void udp_ep_borrow(struct txs_udp_ep *ep, struct txs_pktbuf *b, unsigned n);
unsigned udp_ep_unborrow(struct txs_udp_ep *ep);

/* ---- header writers (shared by sock.c and frag.c) ---------------------- */

static inline uint16_t udp_fold_final(uint64_t s)
{
	uint16_t c = txs_csum_finish(s);
	return c ? c : 0xffff;
}

/* Ones'-complement partial sum of a payload (lib/pkt's short inline form for
 * the short payloads the hot path sends). */
static inline uint64_t udp_payload_sum(const uint8_t *p, size_t len)
{
	return txs_csum_partial_short(p, len);
}

/* IPv4 header fields that change per frame; header checksum from the
 * template's address sum plus the variable words. */
static inline void udp_put_ip4(uint8_t *f, const struct udp_dst *d, const struct udp_eff *o, uint32_t tot_len,
			       uint16_t id, uint16_t frag)
{
	uint8_t *ip = f + UDP_L3_OFF;
	uint16_t w0 = htons((uint16_t)(0x4500u | o->tos)), w1 = htons((uint16_t)tot_len), w2 = htons(id),
		 w3 = htons(frag), w4 = htons((uint16_t)(o->ttl << 8 | TXS_IPPROTO_UDP));
	memcpy(ip, &w0, 2);
	memcpy(ip + 2, &w1, 2);
	memcpy(ip + 4, &w2, 2);
	memcpy(ip + 6, &w3, 2);
	memcpy(ip + 8, &w4, 2);
	/* < 2^20: two 16-bit folds are enough */
	uint32_t s = d->ip_sum + w0 + w1 + w2 + w3 + w4;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	uint16_t c = (uint16_t)~s;
	memcpy(ip + 10, &c, 2);
}

static inline void udp_put_ip6(uint8_t *f, const struct txs_udp_ep *ep, const struct udp_eff *o, uint32_t plen,
			       uint8_t nexthdr)
{
	uint8_t *ip = f + UDP_L3_OFF;
	uint32_t w0 = htonl(6u << 28 | (uint32_t)o->tos << 20 | (ep->conf.flow_label & 0xfffffu));
	uint16_t pl = htons((uint16_t)plen);
	memcpy(ip, &w0, 4);
	memcpy(ip + 4, &pl, 2);
	ip[6] = nexthdr;
	ip[7] = o->ttl;
}

/* UDP length and checksum; paysum is the payload's partial sum (the payload
 * starts at an even offset from the UDP header). */
static inline void udp_put_udp(uint8_t *u, const struct udp_dst *d, const struct udp_eff *o, uint32_t ulen,
			       uint64_t paysum)
{
	uint16_t l = htons((uint16_t)ulen);
	memcpy(u + 4, &l, 2);
	uint16_t c = o->no_csum ? 0 : udp_fold_final((uint64_t)d->udp_sum + 2u * l + paysum);
	memcpy(u + 6, &c, 2);
}

/* Runt frames are padded with zeros to the Ethernet minimum. */
static inline uint32_t udp_pad(uint8_t *f, uint32_t len)
{
	if (TXS_UNLIKELY(len < TXS_ETH_MIN_FRAME)) {
		memset(f + len, 0, TXS_ETH_MIN_FRAME - len);
		return TXS_ETH_MIN_FRAME;
	}
	return len;
}

#endif
