/* SPDX-License-Identifier: MIT */
/* txscale send through lib/udp's sendmsg path. The default connected flow
 * stays on gen.c's whole-frame template patch, which `txscale bench sendmsg
 * --compare-engine` measures at about 2.5x fewer ns per packet than one
 * sendmsg call per packet (docs/udp.md, "CLI"); --gso and --unconnected need
 * sendmsg semantics, so they take this path. */
#include <stdio.h>
#include "send_udp.h"

int send_udp_route(unsigned gso, bool connected, bool unconnected, const struct txs_flow_spec *sp,
		   struct txs_udp_gen_conf *uc, uint32_t *frame, unsigned *burst)
{
	if (connected && unconnected) {
		fprintf(stderr, "txscale send: --connected and --unconnected exclude each other\n");
		return 2;
	}
	if (!gso && !unconnected)
		return 0;
	bool v4 = sp->dst.family == AF_INET;
	uint32_t mtu = 1500, hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN, len = sp->payload_len;
	if (gso) {
		if (sp->no_udp_csum) {
			fprintf(stderr, "txscale send: --gso needs UDP checksums: drop --no-csum\n");
			return 2;
		}
		if (gso + hdrs > mtu) {
			fprintf(stderr, "txscale send: bad value for --gso: '%u': at most %u bytes (%s, MTU %u)\n", gso,
				mtu - hdrs, v4 ? "IPv4" : "IPv6", mtu);
			return 2;
		}
		if (len > gso * TXS_UDP_MAX_SEGS) {
			fprintf(stderr, "txscale send: bad value for -l/--length: '%u': more than %u segments of --gso %u\n",
				len, TXS_UDP_MAX_SEGS, gso);
			return 2;
		}
	} else if (sp->df && len + hdrs > mtu) {
		fprintf(stderr, "txscale send: bad value for -l/--length: '%u': over the MTU with --df (at most %u)\n",
			len, mtu - hdrs);
		return 2;
	}
	*uc = (struct txs_udp_gen_conf){ .spread_sport = true, .connected = !unconnected, .gso_size = (uint16_t)gso,
					 .mtu = mtu };
	uint32_t fs = v4 ? (mtu - TXS_IPV4_HLEN) & ~7u : (mtu - TXS_IPV6_HLEN - TXS_IPV6_FRAG_HLEN) & ~7u;
	unsigned fpc = gso && len > gso ? (len + gso - 1) / gso : len + hdrs > mtu ? (len + TXS_UDP_HLEN + fs - 1) / fs : 1;
	uint32_t dgram = gso && len > gso ? gso : len;
	*frame = TXS_ETH_HLEN + (dgram + hdrs > mtu ? mtu : dgram + hdrs);
	if (*frame < TXS_ETH_MIN_FRAME)
		*frame = TXS_ETH_MIN_FRAME;
	*burst = fpc; /* frames one call makes: a burst must hold them */
	return 1;
}
