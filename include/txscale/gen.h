/* SPDX-License-Identifier: MIT */
/* The UDP traffic generator behind `txscale send`: one flow per worker,
 * built from a template and patched per packet (ID, sequence, timestamp,
 * checksums). Plugs into the engine as a struct txs_gen_ops. */
#ifndef TXSCALE_GEN_H
#define TXSCALE_GEN_H

#include <txscale/engine.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_gen_conf {
	struct txs_flow_spec spec;  /* worker k sends flow_id = spec.flow_id + k */
	bool spread_sport;          /* worker k uses sport + k (iperf3 -P style) */
	uint64_t seed;              /* 0: random (getrandom) */
};

TXS_API extern const struct txs_gen_ops txs_udp_gen_ops;

#ifdef __cplusplus
}
#endif
#endif
