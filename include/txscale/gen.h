/* SPDX-License-Identifier: MIT */
/* The UDP traffic generator behind `txscale send`: one flow per worker,
 * built from a template and patched per packet (ID, sequence, timestamp,
 * checksums). Plugs into the engine as a struct txs_gen_ops. */
#ifndef TXSCALE_GEN_H
#define TXSCALE_GEN_H

#include <txscale/engine.h>
#include <txscale/ident.h>
#include <txscale/linksel.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_gen_conf {
	struct txs_flow_spec spec;  /* worker k sends flow_id = spec.flow_id + k */
	bool spread_sport;          /* worker k uses sport + k (iperf3 -P style) */
	uint64_t seed;              /* 0: random (getrandom) */
	/* IPv4 identification. The caller creates the allocator before the
	 * engine starts (txs_ident_create with max_cores >= workers, strategy
	 * `ident`) and destroys it after txs_engine_destroy(); worker k opens
	 * core handle k in init and closes it in fini, on its own thread. NULL:
	 * a per-flow counter with a random start (the kernel's inet_id). */
	const char *ident;            /* strategy name, for reports; NULL = "lease" */
	struct txs_ident *ident_inst; /* NULL = per-flow counter */
	/* Link selection: worker k opens core k of it and sets each frame's link.
	 * NULL: every frame on link 0. broadcast: each packet is sent as one
	 * frame per up link (same IP ID, sequence and bytes); every copy is a wire
	 * packet and counts towards the engine's packet count and rate, so -n N
	 * sends N frames; copies that do not fit a burst open the next one, and
	 * only when the count ends inside a packet's copies does that last packet
	 * go out on fewer links. No link up: the burst ends there
	 * (txs_linksel_stats().nolink counts it; a burst with no frame at all
	 * ends the worker with -EIO, as any failed fill). */
	struct txs_linksel *linksel;
	/* Flows and sizes (include/txscale/pkt.h, struct txs_shape; read in
	 * init only): NULL or one flow of one size is the one-flow fill above.
	 * Else worker k sends shape->flows flows (flow ids spec.flow_id +
	 * k * flows + i, each its own sequence from 0 and its own ID bucket:
	 * the hash of its own destination), in turn, with the sizes of the
	 * shape's cycle; every size must fit the MTU (else -EMSGSIZE). */
	const struct txs_shape *shape;
};

/* The fast path of lib/udp's sendmsg semantics (include/txscale/udp.h): one
 * prebuilt frame per datagram. init refuses (-EMSGSIZE) a datagram that does
 * not fit the device's MTU on a frame device: those are fragmented by
 * txs_udp_sock_gen_ops; txs_udp_fast_path_ok() makes the choice. */
/* Exported as a function, not as a data object: a program linking an
 * exported table gets a copy relocation of its size, so the library could
 * never grow struct txs_gen_ops. The macro keeps the old name's spelling
 * (txs_X_gen_ops.fill(...), &txs_X_gen_ops) for source compatibility. */
TXS_API const struct txs_gen_ops *txs_udp_gen(void);
#define txs_udp_gen_ops (*txs_udp_gen())

#ifdef __cplusplus
}
#endif
#endif
