/* SPDX-License-Identifier: MIT */
/* Per-flow frame templates: built once, patched per packet (txs_tmpl_patch). */
#include <errno.h>
#include <stdlib.h>
#include <txscale/pkt.h>

#define TXS_UDP4_MAX_PAYLOAD 65507u
#define TXS_UDP6_MAX_PAYLOAD 65527u

TXS_API int txs_tmpl_build(struct txs_tmpl *t, const struct txs_flow_spec *sp)
{
	memset(t, 0, sizeof(*t));
	if (sp->src.family != sp->dst.family || (sp->dst.family != AF_INET && sp->dst.family != AF_INET6))
		return -EINVAL;
	if (sp->no_udp_csum && sp->dst.family == AF_INET6)
		return -EINVAL; /* IPv6 UDP must carry a checksum (RFC 8200 8.1) */
	bool v4 = sp->dst.family == AF_INET;
	if (sp->payload_len > (v4 ? TXS_UDP4_MAX_PAYLOAD : TXS_UDP6_MAX_PAYLOAD))
		return -EMSGSIZE;
	if (sp->n_vlan > TXS_VLAN_MAX_TAGS)
		return -EINVAL;
	t->family = sp->dst.family;
	t->l3_off = (uint16_t)(TXS_ETH_HLEN + TXS_VLAN_HLEN * sp->n_vlan);
	t->l4_off = (uint16_t)(t->l3_off + (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN));
	t->pay_off = (uint16_t)(t->l4_off + TXS_UDP_HLEN);
	t->payload_len = sp->payload_len;
	t->frame_len = t->pay_off + sp->payload_len;
	uint32_t min = TXS_ETH_MIN_FRAME + TXS_VLAN_HLEN * sp->n_vlan; /* padded before the tags */
	t->wire_len = t->frame_len < min ? min : t->frame_len;
	t->ph_kind = txs_ph_kind_for(sp->payload_len);
	t->udp_csum = !sp->no_udp_csum;
	t->flow_id = sp->flow_id;
	t->frame = calloc(1, t->wire_len);
	if (!t->frame)
		return -ENOMEM;

	uint8_t *f = t->frame;
	struct txs_eth_hdr eth;
	memcpy(eth.dst, sp->dst_mac, TXS_ETH_ALEN);
	memcpy(eth.src, sp->src_mac, TXS_ETH_ALEN);
	eth.type = htons(v4 ? TXS_ETHERTYPE_IPV4 : TXS_ETHERTYPE_IPV6);
	memcpy(f, &eth, 12);
	for (unsigned k = 0; k < sp->n_vlan; k++) {
		txs_put_be16(f + 12 + TXS_VLAN_HLEN * k,
			     sp->n_vlan == 2 && k == 0 ? TXS_ETHERTYPE_8021AD : TXS_ETHERTYPE_8021Q);
		txs_put_be16(f + 14 + TXS_VLAN_HLEN * k, sp->vlan_tci[k]);
	}
	memcpy(f + 12 + TXS_VLAN_HLEN * sp->n_vlan, &eth.type, 2);

	uint32_t udp_len = TXS_UDP_HLEN + sp->payload_len;
	uint8_t ttl = sp->ttl ? sp->ttl : 64;
	if (v4) {
		struct txs_ipv4_hdr ip = {
			.ver_ihl = 0x45,
			.tos = sp->tos,
			.tot_len = htons((uint16_t)(TXS_IPV4_HLEN + udp_len)),
			.id = 0,
			.frag_off = htons(sp->df ? TXS_IPV4_DF : 0),
			.ttl = ttl,
			.protocol = TXS_IPPROTO_UDP,
			.check = 0,
			.saddr = sp->src.v4.s_addr,
			.daddr = sp->dst.v4.s_addr,
		};
		ip.check = txs_ipv4_csum(&ip);
		t->ip_check0 = ip.check;
		memcpy(f + t->l3_off, &ip, sizeof(ip));
	} else {
		struct txs_ipv6_hdr ip6 = {
			.ver_tc_flow = htonl(6u << 28 | (uint32_t)sp->tos << 20 | (sp->flow_label & 0xfffff)),
			.payload_len = htons((uint16_t)udp_len),
			.nexthdr = TXS_IPPROTO_UDP,
			.hop_limit = ttl,
		};
		memcpy(ip6.saddr, sp->src.bytes, 16);
		memcpy(ip6.daddr, sp->dst.bytes, 16);
		memcpy(f + t->l3_off, &ip6, sizeof(ip6));
	}
	struct txs_udp_hdr udp = {
		.source = htons(sp->sport),
		.dest = htons(sp->dport),
		.len = htons((uint16_t)udp_len),
		.check = 0,
	};
	memcpy(f + t->l4_off, &udp, sizeof(udp));
	struct txs_ph ph = { .kind = t->ph_kind, .flow = sp->flow_id, .seq = 0, .ts_ns = 0 };
	txs_ph_write(f + t->pay_off, sp->payload_len, &ph);

	uint32_t ps = v4 ? txs_pseudo4_sum(sp->src.v4.s_addr, sp->dst.v4.s_addr, udp_len)
			 : txs_pseudo6_sum(sp->src.bytes, sp->dst.bytes, udp_len);
	t->udp_sum0 = txs_csum_partial(f + t->l4_off, udp_len, ps);
	if (t->ph_kind == TXS_PH_NONE && t->udp_csum) {
		/* nothing changes per packet: store the final checksum in the template */
		uint16_t c = txs_csum_finish(t->udp_sum0);
		if (c == 0)
			c = 0xffff;
		memcpy(f + t->l4_off + 6, &c, 2);
	}
	return 0;
}

TXS_API void txs_tmpl_free(struct txs_tmpl *t)
{
	free(t->frame);
	t->frame = NULL;
}
