/* SPDX-License-Identifier: MIT */
/* The reflector's Prometheus metrics (docs/stamp.md, docs/metrics.md): its
 * counters summed over the workers at each scrape; nothing per packet. */
#include <txscale/metrics.h>
#include <txscale/stamp.h>

void txs_stamp_refl_collect(struct txs_prom *p, void *arg)
{
	const struct txs_stamp_refl *r = arg;
	struct txs_stamp_refl_stats s;
	txs_stamp_refl_stats(r, &s);
	static const struct {
		const char *name, *help;
		size_t off;
	} c[] = {
		{ "txscale_stamp_received_total", "STAMP test packets received", offsetof(struct txs_stamp_refl_stats, rx) },
		{ "txscale_stamp_reflected_total", "STAMP test packets answered", offsetof(struct txs_stamp_refl_stats, reflected) },
		{ "txscale_stamp_runts_total", "datagrams shorter than a test packet: dropped", offsetof(struct txs_stamp_refl_stats, runts) },
		{ "txscale_stamp_bad_mac_total", "authenticated mode: packets with a wrong HMAC, dropped", offsetof(struct txs_stamp_refl_stats, bad_mac) },
		{ "txscale_stamp_send_errors_total", "answers the kernel refused", offsetof(struct txs_stamp_refl_stats, send_errors) },
		{ "txscale_stamp_tlv_unknown_total", "TLVs returned with the U flag", offsetof(struct txs_stamp_refl_stats, tlv_unknown) },
		{ "txscale_stamp_tlv_malformed_total", "TLVs returned with the M flag", offsetof(struct txs_stamp_refl_stats, tlv_malformed) },
		{ "txscale_stamp_tlv_bad_hmac_total", "HMAC TLVs returned with the I flag", offsetof(struct txs_stamp_refl_stats, tlv_bad_hmac) },
		{ "txscale_stamp_sessions_total", "sessions (sender address, port, SSID) seen by the stateful reflector", offsetof(struct txs_stamp_refl_stats, sessions) },
		{ "txscale_stamp_socket_drops_total", "dropped by the kernel at the reflector's sockets (receive buffer full)", offsetof(struct txs_stamp_refl_stats, socket_drops) },
		{ "txscale_stamp_sessions_evicted_total", "live sessions forgotten to make room", offsetof(struct txs_stamp_refl_stats, evicted) },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		txs_prom_family(p, c[i].name, TXS_PROM_COUNTER, c[i].help);
		txs_prom_u64(p, c[i].name, NULL, 0, *(const uint64_t *)((const char *)&s + c[i].off));
	}
}
