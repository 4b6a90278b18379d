/* SPDX-License-Identifier: MIT */
/* A send session's --replay: the capture loaded and checked, its route
 * through a frame device (the frames as they are) or udp: (the payloads
 * of its UDP datagrams to DEST). docs/replay.md. */
#include <errno.h>
#include <string.h>
#include "common/err.h"
#include "send_priv.h"

/* --replay FILE: load the capture. The frames go out as they are: no
 * destination is needed (DEST, if given, only opens the device), except
 * through udp:, where DEST is where the datagrams go
 * (send_replay_route_udp). Runs on one thread (docs/replay.md). 0, or
 * -EINVAL with one line. */
int send_replay_open(struct send_prep *p, char *err, size_t errlen)
{
	struct txs_send_conf *c = &p->c;
	if (c->threads > 1 || c->n_cpus > 1)
		return txs_fail(err, errlen, -EINVAL, "--replay sends the capture in its order from one thread: drop "
				"--parallel/--affinity (or give one CPU)");
	if (c->bond || c->links || c->gso_size || c->unconnected)
		return txs_fail(err, errlen, -EINVAL, "--replay sends the frames as they are, on link 0: --%s does not "
				"apply", c->bond ? "bond" : c->links ? "links" : c->gso_size ? "gso" : "unconnected");
	char why[512];
	if (txs_replay_load(&p->rpl, c->replay, why, sizeof(why)) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay: %s", why);
	if (txs_replay_schedule(p->rpl, c->replay_speed, &p->rpace) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay-speed: '%g'", c->replay_speed);
	if (!c->dest && strcspn(c->dev, ":") == 3 && strncmp(c->dev, "udp", 3) == 0)
		return txs_fail(err, errlen, -EINVAL, "--replay through --dev %s sends the capture's UDP payloads to "
				"dest (DEST): give one (and --port PORT)", c->dev);
	if (!c->dest)
		c->dest = "198.18.0.2"; /* only opens a frame device */
	return 0;
}

/* "3 not IP, 1 fragment" from the skip counts, into b */
const char *send_replay_skips_str(const struct txs_replay_udp_info *in, char *b, size_t n)
{
	static const char *const what[TXS_REPLAY_SKIP_N] = {
		[TXS_REPLAY_NOT_IP] = "not IP", [TXS_REPLAY_MALFORMED] = "malformed",
		[TXS_REPLAY_FRAGMENT] = "IP fragment", [TXS_REPLAY_NOT_UDP] = "not UDP",
		[TXS_REPLAY_FAMILY] = "other address family",
	};
	size_t o = 0;
	b[0] = 0;
	for (unsigned k = 0; k < TXS_REPLAY_SKIP_N; k++)
		if (in->skipped[k] && o < n) {
			int w = snprintf(b + o, n - o, "%s%llu %s", o ? ", " : "", (unsigned long long)in->skipped[k],
					 what[k]);
			o += w > 0 ? (size_t)w : 0;
		}
	return b;
}

/* Through udp: the datagrams of the capture (txs_replay_udp), their
 * schedule, the DF limit and the buffers. 0, or -EINVAL with one line. */
int send_replay_route_udp(const struct txs_send_conf *c, struct txs_replay *r, struct txs_netdev *dev,
			  const struct txs_flow_spec *sp, struct txs_replay_udp_info *info, struct txs_pace_conf *pace,
			  unsigned *burst, uint32_t *wire, char *err, size_t errlen)
{
	unsigned mtu_opt = c->mtu;
	bool v4 = sp->dst.family == AF_INET;
	uint32_t mtu = mtu_opt ? mtu_opt : dev->mtu ? dev->mtu : 1500;
	uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	char sk[256];
	if (!v4 && mtu < 1280) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --mtu: '%u': IPv6 needs at least 1280", mtu);
	}
	dev->mtu = mtu;
	int rc = txs_replay_udp(r, sp, info);
	if (rc == -ENODATA) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay: '%s': no whole %s UDP datagram to send through --dev "
				"%s among its %llu frames (%s)", c->replay, v4 ? "IPv4" : "IPv6", dev->spec,
			(unsigned long long)txs_replay_frames(r), send_replay_skips_str(info, sk, sizeof(sk)));
	}
	if (rc < 0) {
		return txs_fail(err, errlen, -EINVAL, "cannot build packets: %s", txs_strerror(rc));
	}
	if (sp->df && info->max_payload + hdrs > mtu) {
		/* as -l with --df: the kernel would refuse every such datagram */
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay: '%s': frame %llu holds a %u-byte UDP payload, over "
				"the MTU %u with --df (at most %u for %s): the kernel refuses it (EMSGSIZE)", c->replay,
			(unsigned long long)info->max_index, info->max_payload, mtu, mtu - hdrs, v4 ? "IPv4" : "IPv6");
	}
	if (txs_replay_schedule(r, c->replay_speed, pace) < 0) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay-speed: '%g'", c->replay_speed);
	}
	/* -b in bits: at the datagrams' mean frame, unfragmented as for -l on udp: */
	uint64_t n = txs_replay_datagrams(r), bytes = 0;
	for (uint64_t j = 0; j < n; j++) {
		uint32_t len;
		txs_replay_datagram(r, j, &len, NULL);
		uint32_t f = TXS_ETH_HLEN + hdrs + len;
		bytes += f < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : f;
	}
	*wire = (uint32_t)((bytes + n / 2) / n);
	*burst = 1;
	dev->conf.frame_size = txs_replay_udp_frame_max(r); /* read when the queues open */
	return 0;
}

/* After the device opened: the MTU (--mtu, else the device's) and the
 * frames against it. 0, or -EINVAL with one line. */
int send_replay_route(const struct txs_send_conf *c, const struct txs_replay *r, struct txs_netdev *dev,
		      unsigned *burst, uint32_t *wire, char *err, size_t errlen)
{
	unsigned mtu_opt = c->mtu;
	if (mtu_opt && mtu_opt > dev->mtu) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --mtu: '%u': above the MTU of %s (%u)", mtu_opt, dev->spec,
			dev->mtu);
	}
	if (mtu_opt)
		dev->mtu = mtu_opt;
	uint64_t idx;
	uint32_t max = txs_replay_max_len(r, &idx);
	if (max > dev->mtu + TXS_ETH_HLEN) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --replay: '%s': frame %llu is %u bytes, over the MTU %u of %s "
				"(at most %u bytes per frame)", c->replay, (unsigned long long)idx, max, dev->mtu,
			dev->spec, dev->mtu + TXS_ETH_HLEN);
	}
	uint64_t n = txs_replay_frames(r), bytes = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t len;
		txs_replay_frame(r, i, &len);
		bytes += len;
	}
	uint32_t mean = (uint32_t)((bytes + n / 2) / n);
	*wire = mean < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : mean; /* -b in bits: at the mean frame */
	*burst = 1;
	return 0;
}

