/* SPDX-License-Identifier: MIT */
/* Internet checksum (RFC 1071) with 64-bit accumulation. Sums are kept in
 * "native load" order: the ones'-complement sum is byte-order independent
 * (RFC 1071 2.B), so a folded sum stored with memcpy lands correctly. */
#include <txscale/pkt.h>

TXS_API uint32_t txs_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	unsigned __int128 acc = sum;

	while (len >= 32) {
		uint64_t a, b, c, d;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&c, p + 16, 8);
		memcpy(&d, p + 24, 8);
		acc += a;
		acc += b;
		acc += c;
		acc += d;
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t a;
		memcpy(&a, p, 8);
		acc += a;
		p += 8;
		len -= 8;
	}
	uint64_t tail = 0;
	if (len >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		tail += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		tail += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* trailing byte: the high-order byte of a zero-padded 16-bit word in
		 * network order, i.e. the first byte in memory of that word */
		uint16_t w = 0;
		memcpy(&w, p, 1);
		tail += w;
	}
	acc += tail;
	/* fold 128 -> 64 -> 32 with end-around carry */
	uint64_t lo = (uint64_t)acc, hi = (uint64_t)(acc >> 64);
	uint64_t s = lo + hi;
	s += (s < lo);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

TXS_API uint16_t txs_ipv4_csum(const struct txs_ipv4_hdr *ip)
{
	size_t hl = (size_t)(ip->ver_ihl & 0x0f) * 4;
	return txs_csum_finish(txs_csum_partial(ip, hl, 0));
}

TXS_API uint32_t txs_pseudo4_sum(uint32_t saddr, uint32_t daddr, uint32_t len)
{
	uint64_t s = (uint64_t)saddr + daddr;
	uint16_t proto = htons(TXS_IPPROTO_UDP);
	uint16_t l = htons((uint16_t)len);
	s += proto;
	s += l;
	return txs_csum_fold16(s) ;
}

TXS_API uint32_t txs_pseudo6_sum(const uint8_t saddr[16], const uint8_t daddr[16], uint32_t len)
{
	uint32_t s = txs_csum_partial(saddr, 16, 0);
	s = txs_csum_partial(daddr, 16, s);
	uint64_t t = s;
	t += htonl(len);
	t += htonl(TXS_IPPROTO_UDP);
	return txs_csum_fold16(t);
}

TXS_API uint16_t txs_udp4_csum(const struct txs_ipv4_hdr *ip, const void *udp, size_t udp_len)
{
	uint32_t s = txs_pseudo4_sum(ip->saddr, ip->daddr, (uint32_t)udp_len);
	uint16_t c = txs_csum_finish(txs_csum_partial(udp, udp_len, s));
	return c == 0 ? 0xffff : c;
}

TXS_API uint16_t txs_udp6_csum(const struct txs_ipv6_hdr *ip6, const void *udp, size_t udp_len)
{
	uint32_t s = txs_pseudo6_sum(ip6->saddr, ip6->daddr, (uint32_t)udp_len);
	uint16_t c = txs_csum_finish(txs_csum_partial(udp, udp_len, s));
	return c == 0 ? 0xffff : c;
}
