/* SPDX-License-Identifier: MIT */
/* A send session's route: one send semantics (lib/udp's sendmsg path: fragments at the
 * device MTU, DF refused like the kernel, GSO at the kernel's limits), with
 * gen.c's whole-frame template patch as its fast path where it gives the
 * same frames: connected, no GSO, datagram within the MTU (docs/udp.md, "CLI"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/err.h"
#include "send_priv.h"

#define MAX_FRAME (TXS_ETH_HLEN + 65535u)

int send_udp_precheck(unsigned gso, bool connected, bool unconnected, const struct txs_flow_spec *sp,
		      uint32_t *frame_size, char *err, size_t errlen)
{
	if (connected && unconnected) {
		return txs_fail(err, errlen, -EINVAL, "--connected and --unconnected exclude each other");
	}
	if (gso && sp->no_udp_csum) {
		return txs_fail(err, errlen, -EINVAL, "--gso needs UDP checksums: drop --no-csum");
	}
	uint32_t hdrs = (sp->dst.family == AF_INET ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	uint32_t whole = TXS_ETH_HLEN + hdrs + sp->payload_len;
	if (whole < TXS_ETH_MIN_FRAME)
		whole = TXS_ETH_MIN_FRAME;
	*frame_size = gso || unconnected ? MAX_FRAME : whole;
	return 0;
}

int send_udp_route(struct txs_netdev *dev, unsigned mtu_opt, unsigned gso, bool unconnected,
		   const struct txs_flow_spec *sp, struct txs_udp_gen_conf *uc, unsigned *min_burst, uint32_t *wire,
		   char *err, size_t errlen)
{
	bool v4 = sp->dst.family == AF_INET;
	uint32_t mtu = mtu_opt ? mtu_opt : dev->mtu ? dev->mtu : 1500;
	uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN, len = sp->payload_len;
	const char *fam = v4 ? "IPv4" : "IPv6";
	if (!v4 && mtu < 1280) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --mtu: '%u': IPv6 needs at least 1280", mtu);
	}
	if (mtu_opt && dev->l2_needed && mtu_opt > dev->mtu) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --mtu: '%u': above the MTU of %s (%u): longer frames "
				"cannot leave it", mtu_opt, dev->spec, dev->mtu);
	}
	dev->mtu = mtu; /* --mtu overrides the device's, for every generator */
	if (gso) {
		unsigned segs = txs_udp_kernel_max_segs();
		uint32_t first = len < gso ? len : gso;
		if (first + hdrs > mtu) {
			return txs_fail(err, errlen, -EINVAL, "bad value for --gso: '%u': a %u-byte segment is over the MTU %u "
					"(at most %u bytes for %s)", gso, first, mtu, mtu - hdrs, fam);
		}
		if (len > gso * segs) {
			return txs_fail(err, errlen, -EINVAL, "bad value for --length: '%u': more than %u segments of --gso "
					"%u (this kernel's UDP_MAX_SEGMENTS)", len, segs, gso);
		}
	} else if (sp->df && len + hdrs > mtu) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --length: '%u': over the MTU %u with --df (at most %u "
				"for %s): the kernel refuses it (EMSGSIZE)", len, mtu, mtu - hdrs, fam);
	}
	*uc = (struct txs_udp_gen_conf){ .spread_sport = true, .connected = !unconnected, .gso_size = (uint16_t)gso,
					 .mtu = dev->kernel_ip ? 65535 : mtu };
	if (txs_udp_fast_path_ok(dev, sp, mtu, !unconnected, gso)) {
		uint32_t f = TXS_ETH_HLEN + hdrs + len;
		*wire = f < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : f;
		*min_burst = 1;
		return 0;
	}
	/* the sendmsg path: on a kernel_ip device (udp:) the kernel fragments */
	uint32_t emtu = uc->mtu;
	unsigned fpc = txs_udp_call_frames(v4, emtu, len, gso);
	uint32_t dgram = gso && len > gso ? gso : len;
	if ((gso && len > gso) || dgram + hdrs <= emtu) {
		uint32_t f = TXS_ETH_HLEN + hdrs + dgram;
		*wire = f < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : f;
	} else {
		/* fragments: every frame carries its own Ethernet + IP headers */
		uint32_t l3 = v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN + TXS_IPV6_FRAG_HLEN;
		*wire = fpc * (TXS_ETH_HLEN + l3) + TXS_UDP_HLEN + dgram;
	}
	*min_burst = fpc;
	dev->conf.frame_size = TXS_ETH_HLEN + emtu; /* read when the queues open */
	return 1;
}

const char *send_udp_gso_spec(const char *dev, bool off, bool interp, char *buf, size_t len, char *err,
			      size_t errlen)
{
	size_t nl = strcspn(dev, ":");
	if (!(off || interp) || nl != 3 || strncmp(dev, "udp", 3) != 0)
		return dev;
	const char *a = dev[nl] ? dev + nl + 1 : "";
	if (strncmp(a, "gso", 3) == 0 || strstr(a, ",gso")) {
		if (!off)
			return dev; /* the device's gso= is the user's choice */
		txs_fail(err, errlen, -EINVAL, "--gso off and --dev %s both set GSO: give one", dev);
		return NULL;
	}
	int n = snprintf(buf, len, "%s%sgso=off", dev, dev[nl] ? "," : ":");
	if (n < 0 || (size_t)n >= len) {
		txs_fail(err, errlen, -EINVAL, "bad value for --dev: '%.40s...': too long with --gso off", dev);
		return NULL;
	}
	return buf;
}

void send_udp_gso_sum(const struct txs_netdev *dev, struct txs_link_counters *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned l = 0; l < dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(dev, l, &c);
		t->packets += c.packets;
		t->gso_calls += c.gso_calls;
		t->gso_segs += c.gso_segs;
		t->gso_fallback += c.gso_fallback;
		if (c.gso_err)
			t->gso_err = c.gso_err;
	}
}

