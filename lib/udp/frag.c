/* SPDX-License-Identifier: MIT */
/* Multi-frame datagrams: GSO segments (UDP_SEGMENT) and IP fragments.
 *
 * GSO: a payload of len bytes becomes ceil(len / gso) datagrams of gso bytes,
 * the last shorter, each with its own UDP header and checksum; IPv4 IDs are
 * one reserved block, segment i carries id + i.
 *
 * Fragments: the UDP datagram (header + payload, checksum over the whole)
 * is cut into pieces of the largest multiple of 8 that fits the MTU after the
 * IP header (IPv4) or the IP + Fragment header (IPv6). IPv4: every fragment
 * has the same ID, DF clear, MF on all but the last, offset in 8-byte units.
 * IPv6 (RFC 8200 4.5): Fragment header with next header UDP, the same 32-bit
 * identification on every fragment, M on all but the last. */
#include <arpa/inet.h>
#include <string.h>
#include "udp_priv.h"

static inline uint32_t frag_data4(const struct txs_udp_ep *ep)
{
	return (ep->mtu - TXS_IPV4_HLEN) & ~7u;
}

static inline uint32_t frag_data6(const struct txs_udp_ep *ep)
{
	return (ep->mtu - TXS_IPV6_HLEN - TXS_IPV6_FRAG_HLEN) & ~7u;
}

unsigned udp_frames_needed(const struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o,
			   size_t len)
{
	uint32_t hdrs = (d->v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	if (o->gso && len > o->gso)
		return (unsigned)((len + o->gso - 1) / o->gso);
	if (len + hdrs <= ep->mtu)
		return 1;
	uint32_t fs = d->v4 ? frag_data4(ep) : frag_data6(ep);
	return (unsigned)((len + TXS_UDP_HLEN + fs - 1) / fs);
}

void udp_emit_gso(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned segs, const struct udp_dst *d,
		  const struct udp_eff *o, uint16_t id, const uint8_t *p, size_t len)
{
	size_t off = 0;
	for (unsigned i = 0; i < segs; i++) {
		size_t n = len - off < o->gso ? len - off : o->gso;
		uint8_t *f = fb[i].data;
		uint32_t ulen = (uint32_t)n + TXS_UDP_HLEN;
		if (d->v4) {
			memcpy(f, d->hdr, UDP4_PAY_OFF);
			memcpy(f + UDP4_PAY_OFF, p + off, n);
			udp_put_ip4(f, d, o, TXS_IPV4_HLEN + ulen, (uint16_t)(id + i), o->df ? TXS_IPV4_DF : 0);
			udp_put_udp(f + UDP4_L4_OFF, d, o, ulen, txs_csum_partial(f + UDP4_PAY_OFF, n, 0));
			fb[i].len = udp_pad(f, UDP4_PAY_OFF + (uint32_t)n);
			fb[i].l4_off = UDP4_L4_OFF;
		} else {
			memcpy(f, d->hdr, UDP6_PAY_OFF);
			memcpy(f + UDP6_PAY_OFF, p + off, n);
			udp_put_ip6(f, ep, o, ulen, TXS_IPPROTO_UDP);
			udp_put_udp(f + UDP6_L4_OFF, d, o, ulen, txs_csum_partial(f + UDP6_PAY_OFF, n, 0));
			fb[i].len = UDP6_PAY_OFF + (uint32_t)n;
			fb[i].l4_off = UDP6_L4_OFF;
		}
		fb[i].segs = 1;
		fb[i].gso_size = 0;
		off += n;
	}
}

/* Copy bytes [off, off+n) of the UDP datagram (8-byte header uh, then p). */
static void dgram_copy(uint8_t *dst, const uint8_t uh[TXS_UDP_HLEN], const uint8_t *p, size_t off, size_t n)
{
	if (off < TXS_UDP_HLEN) {
		size_t h = TXS_UDP_HLEN - off < n ? TXS_UDP_HLEN - off : n;
		memcpy(dst, uh + off, h);
		dst += h;
		n -= h;
		off = TXS_UDP_HLEN;
	}
	memcpy(dst, p + (off - TXS_UDP_HLEN), n);
}

/* The UDP header of the whole datagram (copied from the template, then
 * length and checksum over the whole payload). */
static void whole_udp_hdr(uint8_t uh[TXS_UDP_HLEN], const struct udp_dst *d, const struct udp_eff *o,
			  const uint8_t *p, size_t len)
{
	memcpy(uh, d->hdr + (d->v4 ? UDP4_L4_OFF : UDP6_L4_OFF), TXS_UDP_HLEN);
	udp_put_udp(uh, d, o, (uint32_t)len + TXS_UDP_HLEN, o->no_csum ? 0 : txs_csum_partial(p, len, 0));
}

void udp_emit_frag4(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned n, const struct udp_dst *d,
		    const struct udp_eff *o, uint16_t id, const uint8_t *p, size_t len)
{
	uint8_t uh[TXS_UDP_HLEN];
	whole_udp_hdr(uh, d, o, p, len);
	size_t total = len + TXS_UDP_HLEN, fs = frag_data4(ep), off = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t k = total - off < fs ? total - off : fs;
		bool more = off + k < total;
		uint8_t *f = fb[i].data;
		memcpy(f, d->hdr, UDP4_L4_OFF);
		udp_put_ip4(f, d, o, TXS_IPV4_HLEN + (uint32_t)k, id,
			    (uint16_t)((off >> 3) | (more ? TXS_IPV4_MF : 0)));
		dgram_copy(f + UDP4_L4_OFF, uh, p, off, k);
		fb[i].len = udp_pad(f, UDP4_L4_OFF + (uint32_t)k);
		fb[i].l4_off = UDP4_L4_OFF;
		fb[i].segs = 1;
		fb[i].gso_size = 0;
		off += k;
	}
}

void udp_emit_frag6(struct txs_udp_ep *ep, struct txs_pktbuf *fb, unsigned n, const struct udp_dst *d,
		    const struct udp_eff *o, uint32_t frag_id, const uint8_t *p, size_t len)
{
	uint8_t uh[TXS_UDP_HLEN];
	whole_udp_hdr(uh, d, o, p, len);
	size_t total = len + TXS_UDP_HLEN, fs = frag_data6(ep), off = 0;
	uint32_t idn = htonl(frag_id);
	for (unsigned i = 0; i < n; i++) {
		size_t k = total - off < fs ? total - off : fs;
		bool more = off + k < total;
		uint8_t *f = fb[i].data;
		memcpy(f, d->hdr, UDP6_L4_OFF);
		udp_put_ip6(f, ep, o, TXS_IPV6_FRAG_HLEN + (uint32_t)k, TXS_IPPROTO_FRAGMENT);
		uint8_t *fh = f + UDP6_L4_OFF;
		fh[0] = TXS_IPPROTO_UDP;
		fh[1] = 0;
		txs_put_be16(fh + 2, (uint16_t)(off | (more ? 1u : 0u)));
		memcpy(fh + 4, &idn, 4);
		dgram_copy(fh + TXS_IPV6_FRAG_HLEN, uh, p, off, k);
		fb[i].len = UDP6_L4_OFF + TXS_IPV6_FRAG_HLEN + (uint32_t)k;
		fb[i].l4_off = UDP6_L4_OFF + TXS_IPV6_FRAG_HLEN;
		fb[i].segs = 1;
		fb[i].gso_size = 0;
		off += k;
	}
}
