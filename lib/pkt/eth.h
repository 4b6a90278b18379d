/* SPDX-License-Identifier: MIT */
/* The Ethernet header and its VLAN tags, walked the one way that
 * txs_pkt_parse and the receiver's fast path (lib/rx) both take. Private to
 * the library (modules that may include pkt). */
#ifndef TXS_PKT_ETH_H
#define TXS_PKT_ETH_H
#include <stddef.h>
#include <txscale/pkt.h>

/* The Ethernet header at buf[0..len) and the 802.1Q / 802.1ad tags behind
 * it (at most TXS_VLAN_MAX_TAGS): their TCIs, outer first, appended to
 * tci[*n...], *type the ethertype after them. Returns the offset of what
 * follows, 0 when the frame is cut short. */
static inline __attribute__((always_inline)) size_t txs_eth_walk(const uint8_t *buf, size_t len, uint16_t *type,
								 uint16_t *tci, uint8_t *n)
{
	if (len < TXS_ETH_HLEN)
		return 0;
	uint16_t t = txs_get_be16(buf + 12);
	size_t off = TXS_ETH_HLEN;
	while (TXS_UNLIKELY(t == TXS_ETHERTYPE_8021Q || t == TXS_ETHERTYPE_8021AD) && *n < TXS_VLAN_MAX_TAGS) {
		if (len < off + TXS_VLAN_HLEN)
			return 0;
		tci[(*n)++] = txs_get_be16(buf + off);
		t = txs_get_be16(buf + off + 2);
		off += TXS_VLAN_HLEN;
	}
	*type = t;
	return off;
}
#endif
