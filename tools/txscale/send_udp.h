/* SPDX-License-Identifier: MIT */
/* txscale send: routing to the sendmsg path (lib/udp) for --gso / --unconnected. */
#ifndef TXS_SEND_UDP_H
#define TXS_SEND_UDP_H
#include <txscale/udp.h>

/* Decide how `send` builds packets, and check the sendmsg-only options.
 * Returns 0: gen.c's template patch (the default connected flow);
 * 1: the sendmsg path, with uc (all but uc->spec, which the caller copies
 * last), *frame (largest wire frame, for bit rates) and *burst (frames one
 * send makes: the smallest device burst that holds them) filled;
 * 2: bad input (one line printed). */
int send_udp_route(unsigned gso, bool connected, bool unconnected, const struct txs_flow_spec *sp,
		   struct txs_udp_gen_conf *uc, uint32_t *frame, unsigned *burst);

/* Device frame size the sendmsg path needs (MTU 1500 + Ethernet header). */
#define SEND_UDP_FRAME_SIZE (TXS_ETH_HLEN + 1500u)
#endif
