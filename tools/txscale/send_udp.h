/* SPDX-License-Identifier: MIT */
/* txscale send: the choice between gen.c's template fast path and the
 * sendmsg path (lib/udp), made once the device and its MTU are known. */
#ifndef TXS_SEND_UDP_H
#define TXS_SEND_UDP_H
#include <stdio.h>
#include <txscale/udp.h>
#include <txscale/stats.h>

/* --gso: auto (the default), off, or SIZE (the sendmsg path's UDP_SEGMENT
 * size). auto and off concern --dev udp only: auto coalesces the datagrams
 * of a burst into UDP_SEGMENT sends where the wire stays the same (udp:'s
 * gso=auto), off sends one datagram per message (udp:'s gso=off). */
struct send_gso {
	unsigned size; /* SIZE; 0 = auto or off */
	bool off;
};
int send_udp_parse_gso(const char *val, void *dst, char *err, size_t errlen);

/* --dev DEV with --gso off, or --timestamps interp (its per-datagram step
 * models datagrams that leave one after another; a GSO call leaves at once),
 * into buf: DEV with gso=off added on udp unless (interp only) DEV sets gso=
 * itself; DEV itself on other devices (one datagram per frame anyway). NULL
 * with one line printed when --gso off meets a gso= in DEV, or DEV is too long. */
const char *send_udp_gso_spec(const char *dev, bool off, bool interp, char *buf, size_t len);

/* Where the datagrams left as GSO calls (udp:): the one line that says the
 * kernel refused GSO, printed once (*said) when a socket fell back; the
 * summary's "gso" object and its text line. */
void send_udp_gso_watch(const struct txs_netdev *dev, bool *said);
void send_udp_gso_json(struct txs_json *j, const struct txs_netdev *dev);
void send_udp_gso_text(FILE *f, const struct txs_netdev *dev);

/* Before the device opens: checks that need no device (one line printed,
 * returns 2 on bad input, else 0) and the frame size to open it with (the
 * whole datagram's frame, or the largest, for the sendmsg path: frame
 * devices cap it at their MTU). */
int send_udp_precheck(unsigned gso, bool connected, bool unconnected, const struct txs_flow_spec *sp,
		      uint32_t *frame_size);

/* After the device opened: the MTU (mtu_opt, --mtu, else the device's),
 * the DF and GSO limits at it (bad input: one line naming -l / --gso and the
 * MTU, returns 2), then the route. Returns 0: gen.c's template patch; 1: the
 * sendmsg path, with uc filled (all but uc->spec, which the caller copies
 * last) and the device's frame size set for it. Both: *min_burst = frames
 * one call makes (a device burst must hold them), *wire = frame bytes of one
 * datagram on the wire (for bit rates). */
int send_udp_route(struct txs_netdev *dev, unsigned mtu_opt, unsigned gso, bool unconnected,
		   const struct txs_flow_spec *sp, struct txs_udp_gen_conf *uc, unsigned *min_burst, uint32_t *wire);
#endif
