/* SPDX-License-Identifier: MIT */
/* balance-xor: link = up[hash % n_up] with the xmit_hash_policy formulas of
 * the kernel's Documentation/networking/bonding.rst:
 *
 *   layer2    hash = src MAC[5] XOR dst MAC[5] XOR packet type ID
 *   layer2+3  hash = src MAC[5] XOR dst MAC[5] XOR packet type ID
 *             hash = hash XOR source IP XOR destination IP
 *             hash = hash XOR (hash RSHIFT 16)
 *             hash = hash XOR (hash RSHIFT 8)
 *   layer3+4  hash = source port, destination port (as in the header)
 *             hash = hash XOR source IP XOR destination IP
 *             hash = hash XOR (hash RSHIFT 16)
 *             hash = hash XOR (hash RSHIFT 8)
 *             hash = hash RSHIFT 1
 *   IPv6: each address is first folded by ipv6_addr_hash (XOR of its four
 *   32-bit words). layer3+4 omits the ports for fragments and for protocols
 *   without ports. Non-IP keys (family 0) use the layer2 formula.
 *
 * "As in the header": the kernel loads the 4 address bytes, and the 4 port
 * bytes, as one 32-bit word without byte swapping; on x86-64 (little-endian)
 * that is b0 | b1<<8 | b2<<16 | b3<<24 of the bytes in wire order. We compute
 * exactly that on every host, so a flow takes the link Linux on x86-64 would
 * give it. The packet type ID is the ethertype as a number (0x0800, 0x86DD).
 * The hash is computed once per flow (txs_linksel_key_prepare); per packet
 * only the modulo remains, a multiply-shift. */
#include <netinet/in.h>
#include "linksel_priv.h"

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint32_t addr_word(int family, const uint8_t *a)
{
	if (family == AF_INET)
		return le32(a);
	return le32(a) ^ le32(a + 4) ^ le32(a + 8) ^ le32(a + 12); /* ipv6_addr_hash */
}

static bool has_ports(uint8_t proto)
{
	/* the protocols whose first 4 L4 bytes are the port pair (the kernel's
	 * proto_ports_offset): TCP, UDP, DCCP, SCTP, UDP-Lite */
	return proto == 6 || proto == 17 || proto == 33 || proto == 132 || proto == 136;
}

TXS_API uint32_t txs_linksel_xor_hash(enum txs_xmit_hash policy, const struct txs_flow_key *k)
{
	uint32_t type = k->family == AF_INET ? 0x0800 : k->family == AF_INET6 ? 0x86DD : 0;
	uint32_t l2 = (uint32_t)(k->src_mac[5] ^ k->dst_mac[5]) ^ type;
	bool ip = k->family == AF_INET || k->family == AF_INET6;
	if (policy == TXS_HASH_LAYER2 || !ip)
		return l2;
	uint32_t h;
	if (policy == TXS_HASH_LAYER23) {
		h = l2;
	} else {
		h = 0;
		if (!k->fragment && has_ports(k->proto)) {
			uint8_t pb[4] = { (uint8_t)(k->sport >> 8), (uint8_t)k->sport, (uint8_t)(k->dport >> 8),
					  (uint8_t)k->dport };
			h = le32(pb);
		}
	}
	h ^= addr_word(k->family, k->saddr) ^ addr_word(k->family, k->daddr);
	h ^= h >> 16;
	h ^= h >> 8;
	if (policy == TXS_HASH_LAYER34)
		h >>= 1;
	return h;
}

TXS_API void txs_linksel_key_prepare(const struct txs_linksel *ls, struct txs_flow_key *key)
{
	key->hash = txs_linksel_xor_hash(ls->p.hash, key);
}

static enum txs_linksel_kind xor_kind(const struct txs_linksel_params *p)
{
	(void)p;
	return TXS_LSK_XOR;
}

const struct txs_linksel_mode_ops txs_ls_balance_xor_ops = {
	.name = "balance-xor",
	.mode = TXS_LS_BALANCE_XOR,
	.keys = LS_KEY_HASH,
	.kind = xor_kind,
};
