/* SPDX-License-Identifier: MIT */
/* Bounds-checked parser: every read is preceded by a length check. */
#include <txscale/pkt.h>
#include "eth.h"

static const char *const perr_names[TXS_PERR__COUNT] = {
	[TXS_PERR_OK] = "ok",
	[TXS_PERR_TRUNCATED] = "truncated",
	[TXS_PERR_NOT_IP] = "not-ip",
	[TXS_PERR_BAD_HDR] = "bad-header",
	[TXS_PERR_IP_CSUM] = "ip-checksum",
	[TXS_PERR_NOT_UDP] = "not-udp",
	[TXS_PERR_FRAGMENT] = "fragment",
	[TXS_PERR_UDP_LEN] = "udp-length",
	[TXS_PERR_UDP_CSUM] = "udp-checksum",
};

TXS_API const char *txs_perr_str(enum txs_perr e)
{
	return (unsigned)e < TXS_PERR__COUNT ? perr_names[e] : "unknown";
}

static enum txs_perr parse_udp(const uint8_t *buf, size_t end, struct txs_pkt_info *o, uint32_t pseudo)
{
	if (end < (size_t)o->l4_off + TXS_UDP_HLEN)
		return TXS_PERR_TRUNCATED;
	const uint8_t *u = buf + o->l4_off;
	uint16_t ulen = txs_get_be16(u + 4);
	size_t avail = end - o->l4_off;
	if (ulen < TXS_UDP_HLEN || ulen != avail)
		return TXS_PERR_UDP_LEN;
	o->sport = txs_get_be16(u);
	o->dport = txs_get_be16(u + 2);
	uint16_t check;
	memcpy(&check, u + 6, 2);
	o->udp_csum_present = check != 0;
	if (check == 0) {
		if (o->family == AF_INET6)
			return TXS_PERR_UDP_CSUM;
	} else if (txs_csum_fold16(txs_csum_partial(u, ulen, pseudo)) != 0xffff) {
		return TXS_PERR_UDP_CSUM;
	}
	o->payload = u + TXS_UDP_HLEN;
	o->payload_len = ulen - TXS_UDP_HLEN;
	return TXS_PERR_OK;
}

TXS_API enum txs_perr txs_parse(const uint8_t *buf, size_t len, enum txs_l2 l2, struct txs_pkt_info *o)
{
	memset(o, 0, sizeof(*o));
	size_t off = 0;
	int ver;
	if (l2 == TXS_L2_ETH) {
		uint16_t type;
		if (!(off = txs_eth_walk(buf, len, &type, o->vlan_tci, &o->n_vlan)))
			return TXS_PERR_TRUNCATED;
		if (type == TXS_ETHERTYPE_IPV4)
			ver = 4;
		else if (type == TXS_ETHERTYPE_IPV6)
			ver = 6;
		else
			return TXS_PERR_NOT_IP;
		if (len < off + 1)
			return TXS_PERR_TRUNCATED;
		if ((buf[off] >> 4) != ver)
			return TXS_PERR_BAD_HDR;
	} else {
		if (len < 1)
			return TXS_PERR_TRUNCATED;
		ver = buf[0] >> 4;
		if (ver != 4 && ver != 6)
			return TXS_PERR_NOT_IP;
	}
	o->l3_off = (uint16_t)off;
	const uint8_t *ip = buf + off;
	size_t left = len - off;

	if (ver == 4) {
		if (left < TXS_IPV4_HLEN)
			return TXS_PERR_TRUNCATED;
		size_t hl = (size_t)(ip[0] & 0x0f) * 4;
		uint16_t tot = txs_get_be16(ip + 2);
		if (hl < TXS_IPV4_HLEN || tot < hl)
			return TXS_PERR_BAD_HDR;
		if (left < hl || left < tot)
			return TXS_PERR_TRUNCATED;
		o->family = AF_INET;
		o->tos = ip[1];
		o->ip_len = tot;
		o->ip_id = txs_get_be16(ip + 4);
		uint16_t fo = txs_get_be16(ip + 6);
		o->df = fo & TXS_IPV4_DF;
		o->mf = fo & TXS_IPV4_MF;
		o->frag_offset = (uint16_t)((fo & TXS_IPV4_OFFMASK) * 8);
		o->ttl = ip[8];
		o->protocol = ip[9];
		o->src.family = o->dst.family = AF_INET;
		memcpy(&o->src.v4, ip + 12, 4);
		memcpy(&o->dst.v4, ip + 16, 4);
		if (txs_csum_fold16(txs_csum_partial(ip, hl, 0)) != 0xffff)
			return TXS_PERR_IP_CSUM;
		o->l4_off = (uint16_t)(off + hl);
		if (o->mf || o->frag_offset)
			return TXS_PERR_FRAGMENT;
		if (o->protocol != TXS_IPPROTO_UDP)
			return TXS_PERR_NOT_UDP;
		uint32_t udp_len = tot - (uint32_t)hl;
		uint32_t ps = txs_pseudo4_sum(o->src.v4.s_addr, o->dst.v4.s_addr, udp_len);
		return parse_udp(buf, off + tot, o, ps);
	}

	if (left < TXS_IPV6_HLEN)
		return TXS_PERR_TRUNCATED;
	uint16_t plen = txs_get_be16(ip + 4);
	if (left < TXS_IPV6_HLEN + (size_t)plen)
		return TXS_PERR_TRUNCATED;
	o->family = AF_INET6;
	uint32_t vtf = txs_get_be32(ip);
	o->tos = (uint8_t)(vtf >> 20);
	o->ip_len = TXS_IPV6_HLEN + plen;
	o->protocol = ip[6];
	o->ttl = ip[7];
	o->src.family = o->dst.family = AF_INET6;
	memcpy(o->src.bytes, ip + 8, 16);
	memcpy(o->dst.bytes, ip + 24, 16);
	size_t l4 = off + TXS_IPV6_HLEN;
	size_t end = off + TXS_IPV6_HLEN + plen;
	if (o->protocol == TXS_IPPROTO_FRAGMENT) {
		if (end < l4 + TXS_IPV6_FRAG_HLEN)
			return TXS_PERR_TRUNCATED;
		const uint8_t *fh = buf + l4;
		uint16_t fo = txs_get_be16(fh + 2);
		o->has_frag_hdr = true;
		o->frag_id = txs_get_be32(fh + 4);
		o->frag_offset = fo & 0xfff8;
		o->mf = fo & 1;
		o->protocol = fh[0];
		l4 += TXS_IPV6_FRAG_HLEN;
		o->l4_off = (uint16_t)l4;
		if (o->mf || o->frag_offset)
			return TXS_PERR_FRAGMENT;
		/* an atomic fragment (offset 0, M=0): the UDP datagram follows */
	}
	o->l4_off = (uint16_t)l4;
	if (o->protocol != TXS_IPPROTO_UDP)
		return TXS_PERR_NOT_UDP;
	uint32_t udp_len = (uint32_t)(end - l4);
	uint32_t ps = txs_pseudo6_sum(o->src.bytes, o->dst.bytes, udp_len);
	return parse_udp(buf, end, o, ps);
}
