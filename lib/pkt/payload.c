/* SPDX-License-Identifier: MIT */
/* The txscale payload header; wire format in docs/wire-format.md. */
#include <txscale/pkt.h>

TXS_API void txs_ph_write(uint8_t *payload, size_t len, const struct txs_ph *ph)
{
	size_t hl = 0;
	if (ph->kind == TXS_PH_FULL && len >= TXS_PH_FULL_LEN) {
		txs_put_be32(payload, TXS_PH_MAGIC_FULL);
		txs_put_be32(payload + 4, ph->flow);
		txs_put_be64(payload + 8, ph->seq);
		txs_put_be64(payload + 16, ph->ts_ns);
		hl = TXS_PH_FULL_LEN;
	} else if (ph->kind == TXS_PH_COMPACT && len >= TXS_PH_COMPACT_LEN) {
		txs_put_be16(payload, TXS_PH_MAGIC_COMPACT);
		txs_put_be16(payload + 2, (uint16_t)ph->flow);
		txs_put_be32(payload + 4, (uint32_t)ph->seq);
		txs_put_be64(payload + 8, ph->ts_ns);
		hl = TXS_PH_COMPACT_LEN;
	}
	for (size_t i = hl; i < len; i++)
		payload[i] = (uint8_t)i;
}

TXS_API enum txs_ph_kind txs_ph_read(const uint8_t *payload, size_t len, struct txs_ph *ph)
{
	memset(ph, 0, sizeof(*ph));
	if (len >= TXS_PH_FULL_LEN && txs_get_be32(payload) == TXS_PH_MAGIC_FULL) {
		ph->kind = TXS_PH_FULL;
		ph->flow = txs_get_be32(payload + 4);
		ph->seq = txs_get_be64(payload + 8);
		ph->ts_ns = txs_get_be64(payload + 16);
	} else if (len >= TXS_PH_COMPACT_LEN && len < TXS_PH_FULL_LEN &&
		   txs_get_be16(payload) == TXS_PH_MAGIC_COMPACT) {
		ph->kind = TXS_PH_COMPACT;
		ph->flow = txs_get_be16(payload + 2);
		ph->seq = txs_get_be32(payload + 4);
		ph->ts_ns = txs_get_be64(payload + 8);
	}
	return ph->kind;
}
