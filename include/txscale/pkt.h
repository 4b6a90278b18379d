/* SPDX-License-Identifier: MIT */
/* txscale packet layer: header layouts, checksums, flow templates, the
 * txscale payload header and a bounds-checked parser.
 *
 * Concurrency: all functions are pure or act only on caller-owned memory;
 * any thread may call them. A template is read-only after txs_tmpl_build()
 * and may be shared; the per-packet patch writes only the destination buffer.
 */
#ifndef TXSCALE_PKT_H
#define TXSCALE_PKT_H

#include <netinet/in.h>
#include <string.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- header layouts (network byte order, packed) ---------------------- */
#define TXS_ETH_ALEN 6
#define TXS_ETH_HLEN 14
#define TXS_ETHERTYPE_IPV4 0x0800
#define TXS_ETHERTYPE_IPV6 0x86DD
#define TXS_IPV4_HLEN 20
#define TXS_IPV6_HLEN 40
#define TXS_IPV6_FRAG_HLEN 8
#define TXS_UDP_HLEN 8
#define TXS_IPPROTO_UDP 17
#define TXS_IPPROTO_FRAGMENT 44
#define TXS_IPV4_DF 0x4000
#define TXS_IPV4_MF 0x2000
#define TXS_IPV4_OFFMASK 0x1fff
#define TXS_ETH_MIN_FRAME 60 /* without FCS: runts are padded to this */
#define TXS_ETHERTYPE_8021Q 0x8100  /* C-tag (802.1Q) */
#define TXS_ETHERTYPE_8021AD 0x88A8 /* S-tag (802.1ad, QinQ outer) */
#define TXS_VLAN_HLEN 4
#define TXS_VLAN_MAX_TAGS 2

struct txs_eth_hdr {
	uint8_t dst[TXS_ETH_ALEN];
	uint8_t src[TXS_ETH_ALEN];
	uint16_t type;
} __attribute__((packed));

struct txs_ipv4_hdr {
	uint8_t ver_ihl;
	uint8_t tos;
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;
	uint8_t ttl;
	uint8_t protocol;
	uint16_t check;
	uint32_t saddr;
	uint32_t daddr;
} __attribute__((packed));

struct txs_ipv6_hdr {
	uint32_t ver_tc_flow;
	uint16_t payload_len;
	uint8_t nexthdr;
	uint8_t hop_limit;
	uint8_t saddr[16];
	uint8_t daddr[16];
} __attribute__((packed));

struct txs_ipv6_frag_hdr {
	uint8_t nexthdr;
	uint8_t reserved;
	uint16_t frag_off; /* offset << 3 | M */
	uint32_t identification;
} __attribute__((packed));

struct txs_udp_hdr {
	uint16_t source;
	uint16_t dest;
	uint16_t len;
	uint16_t check;
} __attribute__((packed));

/* An address of either family, in network byte order. */
struct txs_addr {
	int family; /* AF_INET or AF_INET6 */
	union {
		struct in_addr v4;
		struct in6_addr v6;
		uint8_t bytes[16];
	};
};

/* Parse "198.18.0.1" or "2001:2::1". Returns 0 or -EINVAL. */
TXS_API int txs_addr_parse(struct txs_addr *a, const char *s);
/* Format into buf (at least INET6_ADDRSTRLEN bytes). */
TXS_API const char *txs_addr_str(const struct txs_addr *a, char *buf, size_t len);
/* Parse "aa:bb:cc:dd:ee:ff". Returns 0 or -EINVAL. */
TXS_API int txs_mac_parse(uint8_t mac[TXS_ETH_ALEN], const char *s);

/* ---- checksums ------------------------------------------------------ */
/* RFC 1071 ones'-complement sum of buf, added to sum, not folded.
 * 64-bit accumulation, 32 bytes per loop step. The result is a 32-bit partial
 * sum that may be passed back in. Odd lengths are handled as the RFC says
 * (a trailing byte is the high byte of a zero-padded word). Note: a partial
 * sum is only composable when every buffer but the last has even length. */
TXS_API uint32_t txs_csum_partial(const void *buf, size_t len, uint32_t sum);

/* The same partial sum for short buffers, inline (per-packet headers and
 * small payloads); buffers of 64 bytes or more go to txs_csum_partial(). The
 * result is below 2^34, congruent to the 16-bit ones'-complement sum modulo
 * 0xffff, and nonzero for any nonzero data, so callers may add a few of them
 * into a 64-bit accumulator before folding. */
static inline uint64_t txs_csum_partial_short(const void *buf, size_t n)
{
	const uint8_t *p = (const uint8_t *)buf;
	if (n >= 64)
		return txs_csum_partial(p, n, 0);
	uint64_t s = 0, t = 0;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		s += w;
		s += s < w; /* end-around carry */
		p += 8;
		n -= 8;
	}
	if (n & 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		t += w;
		p += 4;
	}
	if (n & 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		t += w;
		p += 2;
	}
	if (n & 1) {
		uint16_t w = 0;
		memcpy(&w, p, 1); /* the high byte of a zero-padded network-order word */
		t += w;
	}
	return (s & 0xffffffffu) + (s >> 32) + t;
}

/* Fold a partial sum to 16 bits (not complemented). */
static inline uint16_t txs_csum_fold16(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The Internet checksum field value: ~fold(sum). */
static inline uint16_t txs_csum_finish(uint64_t sum)
{
	return (uint16_t)~txs_csum_fold16(sum);
}

/* RFC 1624 eqn. 3 incremental update: a header whose checksum field is
 * `check` had a 16-bit word change from `old` to `new_` (all in the same byte
 * order as stored). Returns the new checksum field. */
static inline uint16_t txs_csum_update16(uint16_t check, uint16_t old, uint16_t new_)
{
	uint32_t s = (uint16_t)~check + (uint32_t)(uint16_t)~old + new_;
	return (uint16_t)~txs_csum_fold16(s);
}

/* Same for a 32-bit field. */
static inline uint16_t txs_csum_update32(uint16_t check, uint32_t old, uint32_t new_)
{
	uint64_t s = (uint16_t)~check + (uint64_t)(uint32_t)~old + new_;
	return (uint16_t)~txs_csum_fold16(s);
}

/* IPv4 header checksum field for a header of ihl*4 bytes (check field must be 0
 * or is treated as data: caller zeroes it). */
TXS_API uint16_t txs_ipv4_csum(const struct txs_ipv4_hdr *ip);

/* Pseudo-header partial sums (RFC 768 / RFC 8200 8.1). len in host order. */
TXS_API uint32_t txs_pseudo4_sum(uint32_t saddr, uint32_t daddr, uint32_t len);
TXS_API uint32_t txs_pseudo6_sum(const uint8_t saddr[16], const uint8_t daddr[16], uint32_t len);

/* UDP checksum field over the UDP header + payload at `udp` (udp->check must be
 * zero), for IPv4 / IPv6. A computed 0 is returned as 0xffff (RFC 768). */
TXS_API uint16_t txs_udp4_csum(const struct txs_ipv4_hdr *ip, const void *udp, size_t udp_len);
TXS_API uint16_t txs_udp6_csum(const struct txs_ipv6_hdr *ip6, const void *udp, size_t udp_len);

/* ---- txscale payload header ------------------------------------------ *
 * Placed at the start of the UDP payload (docs/wire-format.md):
 *   full    (payload >= 24 bytes): magic32 "TXSC", flow32, seq64, ts64
 *   compact (payload 16..23):      magic16 0x7853 ("xS"), flow16, seq32, ts64
 *   none    (payload < 16)
 * All fields big-endian. Bytes after the header are filled with
 * (offset_in_payload & 0xff) so receivers can check content. */
#define TXS_PH_MAGIC_FULL 0x54585343u
#define TXS_PH_MAGIC_COMPACT 0x7853u
#define TXS_PH_FULL_LEN 24
#define TXS_PH_COMPACT_LEN 16

enum txs_ph_kind { TXS_PH_NONE = 0, TXS_PH_COMPACT = 1, TXS_PH_FULL = 2 };

static inline enum txs_ph_kind txs_ph_kind_for(size_t payload_len)
{
	return payload_len >= TXS_PH_FULL_LEN ? TXS_PH_FULL
	       : payload_len >= TXS_PH_COMPACT_LEN ? TXS_PH_COMPACT
						     : TXS_PH_NONE;
}

static inline size_t txs_ph_len(enum txs_ph_kind k)
{
	return k == TXS_PH_FULL ? TXS_PH_FULL_LEN : k == TXS_PH_COMPACT ? TXS_PH_COMPACT_LEN : 0;
}

struct txs_ph {
	enum txs_ph_kind kind;
	uint32_t flow; /* compact: 16 bits */
	uint64_t seq;  /* compact: 32 bits on the wire */
	uint64_t ts_ns;
};

/* Write the header of `kind` and the fill pattern into payload[0..len). */
TXS_API void txs_ph_write(uint8_t *payload, size_t len, const struct txs_ph *ph);
/* Read a header from payload; returns the kind found (NONE if too short or no
 * magic). Never reads past len. */
TXS_API enum txs_ph_kind txs_ph_read(const uint8_t *payload, size_t len, struct txs_ph *ph);

/* ---- flow templates -------------------------------------------------- */
struct txs_flow_spec {
	struct txs_addr src, dst; /* same family */
	uint16_t sport, dport;    /* host order */
	uint8_t src_mac[TXS_ETH_ALEN], dst_mac[TXS_ETH_ALEN];
	uint32_t payload_len; /* UDP payload bytes */
	uint8_t tos;          /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;          /* 0 = 64 */
	bool df;              /* IPv4 DF bit */
	bool no_udp_csum;     /* IPv4 only: send UDP checksum 0 */
	uint32_t flow_id;     /* written into the payload header */
	uint32_t flow_label;  /* IPv6 flow label (20 bits) */
	/* VLAN tags after the MACs: 1 = an 802.1Q tag (TPID 0x8100, vlan_tci[0]);
	 * 2 = QinQ, outer 802.1ad S-tag (0x88a8, vlan_tci[0]) then inner 802.1Q
	 * C-tag (0x8100, vlan_tci[1]). TCI = PCP << 13 | VID. The tags do not
	 * count against the IP MTU (as the kernel's VLAN devices); a runt is
	 * padded to 60 bytes before the tags (64 / 68 with them), so the frame
	 * with its tags stripped is a valid Ethernet frame. */
	uint8_t n_vlan;
	uint16_t vlan_tci[TXS_VLAN_MAX_TAGS];
};

/* A flow's frame, built once. Per packet only ID, seq, timestamp and
 * checksums change; txs_tmpl_patch() writes them with incremental sums. */
#define TXS_TMPL_MAX_HDR (TXS_ETH_HLEN + TXS_IPV6_HLEN + TXS_UDP_HLEN + TXS_PH_FULL_LEN)
struct txs_tmpl {
	int family;
	uint16_t l3_off, l4_off, pay_off;
	uint32_t frame_len;   /* bytes of the frame (without runt padding) */
	uint32_t wire_len;    /* frame_len padded to TXS_ETH_MIN_FRAME */
	uint32_t payload_len;
	enum txs_ph_kind ph_kind;
	bool udp_csum;
	uint16_t ip_check0;   /* IPv4 header checksum with ID 0 (host-independent, as stored) */
	uint32_t udp_sum0;    /* partial UDP sum: pseudo + header + payload with seq=ts=0 */
	uint32_t flow_id;
	uint8_t *frame;       /* full frame with ID=0, seq=0, ts=0 (malloc'd, wire_len bytes) */
};

/* Build the template; returns 0, -EINVAL (bad spec), -EMSGSIZE (payload too
 * large for one datagram), -ENOMEM. */
TXS_API int txs_tmpl_build(struct txs_tmpl *t, const struct txs_flow_spec *spec);
TXS_API void txs_tmpl_free(struct txs_tmpl *t);

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
/* Copy the template into buf (>= t->wire_len bytes) and patch the per-packet
 * fields: IPv4 ID (ignored for IPv6), sequence and timestamp. Checksums are
 * updated incrementally. Returns the frame length to send (t->wire_len). */
static inline uint32_t txs_tmpl_patch(const struct txs_tmpl *t, uint8_t *buf, uint16_t ip_id,
				      uint64_t seq, uint64_t ts_ns);
/* Only the per-packet fields (ID, IPv4 header checksum, sequence, timestamp,
 * UDP checksum), for a buf that already holds the rest of t's frame: every
 * value written is computed from the template, never from buf. */
static inline uint32_t txs_tmpl_patch_fields(const struct txs_tmpl *t, uint8_t *buf, uint16_t ip_id,
					     uint64_t seq, uint64_t ts_ns);
#endif /* TXS_UNSTABLE_API */

/* ---- traffic shapes: flows and size mixes (docs/udp.md, "Flows and sizes") ----
 * A worker sends `flows` flows (0 = 1). Flow i of worker k is global flow
 * g = k * flows + i, with flow id spec.flow_id + g (spec.flow_id is
 * --flow-base) and its own sequence space. Each field with a range takes the
 * value lo + offset(g), walked:
 *   inc     offset = g mod span (the default; trafgen dinc, pktgen min/max)
 *   stride  offset = (g * stride) mod span (covers the range when gcd = 1)
 *   random  offset drawn once per flow from the worker's RNG (trafgen drnd):
 *           a flow keeps its tuple, so its sequence stays countable
 * so every value stays in [lo, lo + span). Addresses add the offset to the
 * low 32 bits (IPv4) or the low 64 bits (IPv6) of lo. A field without a
 * range keeps the spec's value (source port: worker k uses sport + k).
 * Sizes: n_sizes UDP payload lengths with weights; a worker repeats a
 * precomputed cycle of sum(weights) / gcd packets (smooth weighted round
 * robin: the weights hold exactly over every whole cycle, sizes interleaved)
 * while flows take turns in order. */
#define TXS_SHAPE_MAX_SIZES 64
enum txs_walk { TXS_WALK_INC = 0, TXS_WALK_STRIDE = 1, TXS_WALK_RANDOM = 2 };
struct txs_range {
	uint64_t span;   /* values in the range; 0 or 1: the spec's value only */
	uint64_t stride; /* TXS_WALK_STRIDE */
	enum txs_walk walk;
};
struct txs_shape {
	uint32_t flows; /* per worker; 0 = 1 */
	struct txs_range sport, dport, src, dst;
	unsigned n_sizes; /* 0: spec.payload_len only */
	uint32_t sizes[TXS_SHAPE_MAX_SIZES];   /* UDP payload bytes */
	uint32_t weights[TXS_SHAPE_MAX_SIZES]; /* > 0 */
};

/* Parse "LO[-HI][,inc|,random|,stride=N]" for a port (lo > 0) or an address
 * (one family; HI >= LO, differing only in the low 32 (IPv4) / 64 (IPv6)
 * bits, span at most 2^32). Returns 0 or -EINVAL with err filled. */
TXS_API int txs_range_parse_port(const char *s, uint16_t *lo, struct txs_range *r, char *err, size_t errlen);
TXS_API int txs_range_parse_addr(const char *s, struct txs_addr *lo, struct txs_range *r, char *err, size_t errlen);
/* *a + off, as a range walks it: in the low 32 (IPv4) / 64 (IPv6) bits. */
TXS_API void txs_range_addr(struct txs_addr *a, uint64_t off);
/* Parse a -l value into sh->sizes/weights: "N", "A,B,C[:WA,WB,WC]",
 * "LO-HI[/STEP]" (every STEP bytes from LO up to HI, equal weights: a
 * uniform distribution, exact over a cycle; at most TXS_SHAPE_MAX_SIZES
 * sizes) or "imix" (L2 frames of 64, 594 and 1518 bytes with the 4-byte
 * FCS, weights 7:4:1, as TRex and pktgen: UDP payloads of frame - 18 -
 * IP header - 8; an IPv6 64-byte frame cannot hold its headers, its payload
 * is 16 bytes, the smallest with a txscale header). family: AF_INET or
 * AF_INET6 (for imix). Returns 0 or -EINVAL with err filled. */
TXS_API int txs_shape_parse_sizes(struct txs_shape *sh, const char *s, int family, char *err, size_t errlen);
/* The largest size (spec.payload_len when there is no list). */
TXS_API uint32_t txs_shape_max_size(const struct txs_shape *sh, uint32_t payload_len);
/* Flow i of worker `worker`: out = base with ports, addresses and flow id
 * of that flow (sport + worker when spread_sport and sport has no range).
 * rng: the worker's RNG state (random walks draw from it, in flow order). */
TXS_API void txs_shape_flow(const struct txs_shape *sh, const struct txs_flow_spec *base, bool spread_sport,
			    unsigned worker, uint32_t i, uint64_t *rng, struct txs_flow_spec *out);
/* The size cycle: *pat (malloc'd) holds *len indexes into sh->sizes, each
 * size s exactly weights[s] / gcd times. n_sizes 0: one entry, 0.
 * Returns 0, -EINVAL (cycle over 2^20), -ENOMEM. */
TXS_API int txs_shape_pattern(const struct txs_shape *sh, uint8_t **pat, uint32_t *len);
/* Packets and payload bytes per size after a worker made `count` datagrams
 * from the start of its cycle: pkts[s] (and bytes[s] if not NULL) for
 * s < n_sizes, added to what they hold. */
TXS_API void txs_shape_count(const struct txs_shape *sh, const uint8_t *pat, uint32_t len, uint64_t count,
			     uint64_t *pkts, uint64_t *bytes);
/* The RNG state of worker `worker` for random walks: from seed (non-zero:
 * the same walk in every run and on both send paths), else random. */
TXS_API uint64_t txs_shape_rng_seed(uint64_t seed, unsigned worker);
/* (txs_rng_next, the splitmix64 step, is in txscale/common.h) */

/* ---- parser ------------------------------------------------------------ */
enum txs_perr {
	TXS_PERR_OK = 0,
	TXS_PERR_TRUNCATED,   /* shorter than its headers say */
	TXS_PERR_NOT_IP,      /* ethertype / version not IPv4 or IPv6 */
	TXS_PERR_BAD_HDR,     /* IHL, lengths or version inconsistent */
	TXS_PERR_IP_CSUM,     /* IPv4 header checksum wrong */
	TXS_PERR_NOT_UDP,     /* protocol is not UDP */
	TXS_PERR_FRAGMENT,    /* an IP fragment (not reassembled here) */
	TXS_PERR_UDP_LEN,     /* UDP length inconsistent with IP length */
	TXS_PERR_UDP_CSUM,    /* UDP checksum wrong (or 0 on IPv6) */
	TXS_PERR__COUNT
};
TXS_API const char *txs_perr_str(enum txs_perr e);

/* Where a buffer starts. */
enum txs_l2 { TXS_L2_ETH = 0, TXS_L2_NONE = 1 /* starts at the IP header */ };

struct txs_pkt_info {
	int family;
	struct txs_addr src, dst;
	uint16_t sport, dport;      /* host order */
	uint8_t tos, ttl, protocol;
	uint16_t ip_id;             /* IPv4 ID, host order */
	bool df, mf;
	uint16_t frag_offset;       /* bytes */
	bool has_frag_hdr;          /* IPv6 fragment header present */
	uint32_t frag_id;           /* IPv6 fragment identification */
	uint16_t l3_off, l4_off;
	uint8_t n_vlan;             /* VLAN tags before the IP header (802.1Q / 802.1ad, at most 2) */
	uint16_t vlan_tci[TXS_VLAN_MAX_TAGS]; /* outer first */
	uint32_t ip_len;            /* total IP datagram length */
	const uint8_t *payload;     /* UDP payload */
	uint32_t payload_len;
	bool udp_csum_present;
};

/* Parse an Ethernet or IP packet of len bytes (Ethernet: up to two VLAN
 * tags, 0x8100 / 0x88a8, skipped and reported). Validates lengths and
 * checksums; never reads past buf+len. For fragments, fills the IP fields and
 * returns TXS_PERR_FRAGMENT (payload fields then unset). */
TXS_API enum txs_perr txs_parse(const uint8_t *buf, size_t len, enum txs_l2 l2, struct txs_pkt_info *out);

/* ---- pcap reader (memory or file; lib/pkt/pcap.c) ------------------------------ *
 * The one capture reader: recv's pcap input and replay both read through it.
 * Classic pcap (both byte orders, us/ns) is parsed in place, zero-copy; with
 * libpcap (TXS_HAVE_PCAP) pcapng and other formats are read through it.
 * Link types: Ethernet, raw IP (101, 228, 229), Linux cooked v1/v2, BSD
 * loopback. Caller-owned memory; one thread per reader. */
struct txs_pcap_rec {
	const uint8_t *data;     /* starts at the layer `l2` says */
	uint32_t caplen, origlen;
	enum txs_l2 l2;
	bool not_ip;             /* a cooked/loopback header says: not IPv4/IPv6 */
	uint64_t ts_ns;          /* capture time, ns since the epoch */
};
struct txs_pcap_counts {
	uint64_t records;        /* records returned */
	uint64_t snapped;        /* caplen < origlen (capture snap length) */
	uint64_t bad_len;        /* caplen > origlen or above the snap limit (skipped) */
	uint64_t truncated;      /* file ends inside a record header or data (stops) */
	uint64_t bad_l2;         /* link-layer header shorter than its type needs (skipped) */
};
#define TXS_PCAP_MAX_REC 262144u /* larger record lengths are corrupt (libpcap's limit) */
struct txs_pcap {
	const uint8_t *buf;      /* classic: whole file */
	size_t len, off;
	bool swap, nsec;
	uint32_t linktype, snaplen;
	bool mapped;             /* buf is an mmap of the file */
	bool done;
	bool fast;               /* classic, host byte order, Ethernet: txs_pcap_next inline path */
	void *lp;                /* pcap_t * when libpcap reads it */
	void *memf;              /* FILE * under lp for memory input */
	struct txs_pcap_counts n;
	char err[160];
};
/* Open from memory (buf must outlive the reader) or a file. Returns 0,
 * -EINVAL (not a pcap / unsupported link type, err says which), -errno. */
TXS_API int txs_pcap_open_mem(struct txs_pcap *p, const void *buf, size_t len);
TXS_API int txs_pcap_open_file(struct txs_pcap *p, const char *path);
/* Next record: 1 = rec filled, 0 = end (clean or at a corrupt point, see
 * counts). Bad records are counted and skipped when the stream can go on.
 * Inline for the common record (classic, host order, Ethernet, whole);
 * anything else goes to txs_pcap_next_slow(). */
TXS_API int txs_pcap_next_slow(struct txs_pcap *p, struct txs_pcap_rec *rec);
#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
static inline int txs_pcap_next(struct txs_pcap *p, struct txs_pcap_rec *r)
{
	if (TXS_LIKELY(p->fast) && p->len - p->off >= 16) {
		uint32_t h[4];
		memcpy(h, p->buf + p->off, 16);
		if (TXS_LIKELY(h[2] == h[3] && h[2] <= p->len - p->off - 16 && h[2] <= TXS_PCAP_MAX_REC &&
			       h[1] < (p->nsec ? 1000000000u : 1000000u))) {
			r->data = p->buf + p->off + 16;
			r->caplen = r->origlen = h[2];
			r->ts_ns = (uint64_t)h[0] * 1000000000ull + (p->nsec ? h[1] : (uint64_t)h[1] * 1000u);
			r->l2 = TXS_L2_ETH;
			r->not_ip = false;
			p->off += 16 + (size_t)h[2];
			p->n.records++;
			return 1;
		}
	}
	return txs_pcap_next_slow(p, r);
}
#endif /* TXS_UNSTABLE_API */
TXS_API void txs_pcap_close(struct txs_pcap *p);
/* Write a classic pcap (Ethernet, ns) header / record into buf; returns bytes
 * written. For generated test and benchmark input. */
TXS_API size_t txs_pcap_write_hdr(uint8_t *buf, uint32_t snaplen);
TXS_API size_t txs_pcap_write_rec(uint8_t *buf, const uint8_t *frame, uint32_t len, uint64_t ts_ns);

/* ---- inline implementations ------------------------------------------ */
static inline void txs_put_be16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static inline void txs_put_be32(uint8_t *p, uint32_t v) { uint32_t b = __builtin_bswap32(v); memcpy(p, &b, 4); }
static inline void txs_put_be64(uint8_t *p, uint64_t v) { uint64_t b = __builtin_bswap64(v); memcpy(p, &b, 8); }
static inline uint16_t txs_get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t txs_get_be32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return __builtin_bswap32(v); }
static inline uint64_t txs_get_be64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return __builtin_bswap64(v); }

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
static inline uint32_t txs_tmpl_patch_fields(const struct txs_tmpl *t, uint8_t *buf, uint16_t ip_id,
					     uint64_t seq, uint64_t ts_ns)
{
	uint64_t usum = t->udp_sum0;
	uint8_t *ph = buf + t->pay_off;
	if (t->ph_kind == TXS_PH_FULL) {
		/* seq64 at +8, ts64 at +16: 8-byte aligned within the payload, so the
		 * network-order words add straight into the ones'-complement sum. */
		uint64_t s = __builtin_bswap64(seq), ts = __builtin_bswap64(ts_ns);
		memcpy(ph + 8, &s, 8);
		memcpy(ph + 16, &ts, 8);
		usum += (s & 0xffffffffu) + (s >> 32) + (ts & 0xffffffffu) + (ts >> 32);
	} else if (t->ph_kind == TXS_PH_COMPACT) {
		uint32_t s = __builtin_bswap32((uint32_t)seq);
		uint64_t ts = __builtin_bswap64(ts_ns);
		memcpy(ph + 4, &s, 4);
		memcpy(ph + 8, &ts, 8);
		usum += (uint64_t)s + (ts & 0xffffffffu) + (ts >> 32);
	}
	if (t->family == AF_INET) {
		uint8_t *ip = buf + t->l3_off;
		uint16_t nid = __builtin_bswap16(ip_id);
		memcpy(ip + 4, &nid, 2);
		/* RFC 1624: HC' = ~(~HC + ~m + m'), m = 0 */
		uint16_t c = (uint16_t)~txs_csum_fold16((uint32_t)(uint16_t)~t->ip_check0 + 0xffffu + nid);
		memcpy(ip + 10, &c, 2);
	}
	if (t->udp_csum) {
		/* the payload header sits at an even offset from the UDP header, so
		 * byte order of the added words is consistent with the stored sum */
		uint16_t c = txs_csum_finish(usum);
		if (c == 0)
			c = 0xffff;
		memcpy(buf + t->l4_off + 6, &c, 2);
	}
	return t->wire_len;
}

static inline uint32_t txs_tmpl_patch(const struct txs_tmpl *t, uint8_t *buf, uint16_t ip_id,
				      uint64_t seq, uint64_t ts_ns)
{
	memcpy(buf, t->frame, t->wire_len);
	return txs_tmpl_patch_fields(t, buf, ip_id, seq, ts_ns);
}
#endif /* TXS_UNSTABLE_API */

#ifdef __cplusplus
}
#endif
#endif
