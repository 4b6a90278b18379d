/* SPDX-License-Identifier: MIT */
/* txscale UDP endpoints: sendmsg semantics over a device queue (lib/udp).
 *
 * A struct txs_udp_ep is a user-space UDP socket that writes whole Ethernet
 * frames into one struct txs_txq. It behaves like udp_sendmsg() /
 * udpv6_sendmsg() on Linux: connect() gives a default destination, a message
 * may name its own; per-message options work like cmsgs (IP_TOS / IPV6_TCLASS,
 * IP_TTL / IPV6_HOPLIMIT, DF / IPV6_DONTFRAG, UDP_SEGMENT) plus SO_NO_CHECK;
 * TXS_UDP_MORE corks (MSG_MORE); datagrams above the MTU are fragmented (IPv4
 * fragments, IPv6 Fragment headers). Semantics, error codes and every
 * deviation from the kernel: docs/udp.md.
 *
 * Frames are built from a per-destination header template (connected: one;
 * unconnected: a small direct-mapped cache keyed by address and port); per
 * message only lengths, ID, the option fields and checksums are written.
 * Frames are batched: a call returns once its frames sit in the endpoint's
 * batch; the batch goes to the device when it is full (conf.batch frames), on
 * txs_udp_flush() and on txs_udp_close().
 *
 * IP IDs (include/txscale/ident.h): messages without a destination on a
 * connected endpoint use the endpoint's flow counter (txs_ident_flow_*);
 * messages that name a destination use the keyed bucket
 * (txs_ident_hash4 + txs_ident_reserve); a GSO call reserves one block of
 * `segs` IDs; IPv6 fragments carry txs_ident_v6_frag_id().
 *
 * Concurrency: an endpoint belongs to the one thread that owns its device
 * queue and its ident core handle; every function below is called by that
 * thread only (txs_udp_stats(): any thread, relaxed reads). Nothing an
 * endpoint writes per message is shared with another endpoint, except the
 * ident bucket when the caller chose a shared-bucket strategy. Wait-free
 * except inside the device (tx_alloc / tx_send may make system calls).
 */
#ifndef TXSCALE_UDP_H
#define TXSCALE_UDP_H

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <txscale/engine.h>
#include <txscale/ident.h>
#include <txscale/linksel.h>
#include <txscale/netdev.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest UDP payloads (bytes), as the kernel: 65535 - 20 - 8 for IPv4,
 * 65535 - 8 for IPv6 without jumbograms. */
#define TXS_UDP4_MAX_PAYLOAD 65507u
#define TXS_UDP6_MAX_PAYLOAD 65527u
/* Most segments one GSO call may produce: the kernel's UDP_MAX_SEGMENTS, 128
 * in current kernels (and stable trees that took the change), 64 before.
 * An endpoint uses conf.max_segs, by default txs_udp_kernel_max_segs(). */
#define TXS_UDP_MAX_SEGS 128u
#define TXS_UDP_MAX_SEGS_OLD 64u
/* Most frames one call may produce (fragments of a 64 KiB datagram at the
 * smallest MTU, GSO segments), and the largest batch. */
#define TXS_UDP_MAX_FRAMES 256u

/* Message flags. */
#define TXS_UDP_MORE 0x1u /* MSG_MORE: append to the pending datagram, do not send yet */

/* Option bits in txs_udp_opts.set: a set bit overrides the endpoint default. */
#define TXS_UDP_OPT_TOS 0x01u     /* IP_TOS / IPV6_TCLASS: .tos */
#define TXS_UDP_OPT_TTL 0x02u     /* IP_TTL (1..255) / IPV6_HOPLIMIT (0..255): .ttl */
#define TXS_UDP_OPT_DF 0x04u      /* IPv4 DF (IP_PMTUDISC_DO) / IPV6_DONTFRAG: .df */
#define TXS_UDP_OPT_NO_CSUM 0x08u /* SO_NO_CHECK: .no_csum (IPv4 only) */
#define TXS_UDP_OPT_GSO 0x10u     /* UDP_SEGMENT: .gso_size (0 = off) */
#define TXS_UDP_OPT_ALL 0x1fu

/* cmsg-like per-message options (also the endpoint defaults in the conf). */
struct txs_udp_opts {
	unsigned set;      /* TXS_UDP_OPT_* bits that are given */
	uint8_t tos;       /* whole TOS / traffic-class byte (DSCP << 2 | ECN) */
	uint8_t ttl;       /* TTL / hop limit */
	bool df;           /* don't fragment: too big -> -EMSGSIZE */
	bool no_csum;      /* send UDP checksum 0 (IPv4 only) */
	uint16_t gso_size; /* payload bytes per datagram; the last one shorter */
};

struct txs_udp_conf {
	struct txs_addr src;  /* source address: AF_INET or AF_INET6 endpoint */
	uint16_t sport;       /* source port, host order, 1..65535 */
	struct txs_addr src4; /* IPv6 endpoints: IPv4 source for IPv4-mapped
			       * destinations (family 0: refuse them, -ENETUNREACH) */
	uint8_t src_mac[TXS_ETH_ALEN], dst_mac[TXS_ETH_ALEN];
	uint32_t mtu;         /* link MTU, IP bytes: 0 = 1500; IPv4 576..65535,
			       * IPv6 1280..65535. The device's frame_size must be
			       * >= mtu + 14 (and >= 64). */
	uint32_t flow_label;  /* IPv6 flow label, 20 bits (0 = none) */
	struct txs_udp_opts defaults; /* setsockopt-like defaults (set bits given;
				       * unset: tos 0, ttl 64, df off, csum on, no GSO) */
	unsigned batch;       /* frames batched per device call: 0 = 32, 1..256 */
	unsigned dst_cache;   /* unconnected destination templates, power of two:
			       * 0 = 64, 1..4096 */
	/* IP ID allocator: both given (the caller's strategy, the caller's core
	 * handle, owned by this endpoint's thread), or both NULL (the endpoint
	 * creates a private default one). */
	struct txs_ident *ident;
	struct txs_ident_core *ident_core;
	unsigned max_segs;    /* GSO segments per call: 0 = the running kernel's
			       * (txs_udp_kernel_max_segs()), else 1..TXS_UDP_MAX_SEGS */
};

/* UDP_MAX_SEGMENTS of the running kernel: 128 or 64, found once by probing a
 * loopback UDP socket (65 one-byte GSO segments to a socket of our own on
 * 127.0.0.1: -EINVAL means 64). Where the probe cannot run (no loopback in
 * this namespace), 64, the older and stricter limit. Any thread. */
TXS_API unsigned txs_udp_kernel_max_segs(void);

struct txs_udp_msg {
	const struct sockaddr *name; /* destination, or NULL: the connected one */
	socklen_t namelen;
	const struct iovec *iov;     /* payload, gathered in order */
	size_t iovlen;
	const struct txs_udp_opts *opts; /* NULL: endpoint defaults */
	unsigned flags;              /* TXS_UDP_MORE */
	unsigned frames;             /* out: frames this call put in the batch */
};

struct txs_udp_stats {
	uint64_t calls;     /* sendmsg calls that succeeded */
	uint64_t datagrams; /* UDP datagrams built (GSO segments count singly) */
	uint64_t frames;    /* frames built (fragments count singly) */
	uint64_t bytes;     /* UDP payload bytes of those datagrams */
	uint64_t errors;    /* calls that returned an error */
	uint64_t drops;     /* frames the device did not accept (after retries) */
};

struct txs_udp_ep;

/* Open an endpoint on queue q (which the calling thread owns). Returns 0,
 * -EINVAL (bad conf: family, port, MTU range, batch, cache size, frame_size
 * of the device too small for the MTU, src4 not IPv4), -ENOMEM, or an ident
 * error. */
TXS_API int txs_udp_open(struct txs_udp_ep **out, struct txs_txq *q, const struct txs_udp_conf *conf);
/* Discard a pending (corked) datagram, hand batched frames to the device,
 * free the endpoint. NULL is a no-op. */
TXS_API void txs_udp_close(struct txs_udp_ep *ep);

/* connect(2): set the default destination (AF_INET / AF_INET6 sockaddr, as
 * for sendmsg) and start the flow's ID counter. AF_UNSPEC disconnects.
 * Returns 0, -EINVAL, -EAFNOSUPPORT, -ENETUNREACH. */
TXS_API int txs_udp_connect(struct txs_udp_ep *ep, const struct sockaddr *name, socklen_t namelen);

/* sendmsg(2): returns the payload bytes of this call (queued: in the batch or
 * in the pending datagram) or -errno; m->frames says how many frames this
 * call added to the batch (0 while corking). Errors (docs/udp.md has the
 * order they are checked in):
 *   -EOPNOTSUPP unknown flag; -EFAULT iov base NULL with a length;
 *   -EDESTADDRREQ no name and not connected (and nothing pending);
 *   -EAFNOSUPPORT IPv6 name on an IPv4 endpoint, or an append whose family
 *    differs from the pending datagram's;
 *   -EINVAL short namelen, unknown family on an IPv6 endpoint, port 0,
 *    unspecified address, IPv4 TTL 0, no_csum on IPv6, GSO with no_csum,
 *    more than max_segs GSO segments, an append whose destination or
 *    options differ from the pending datagram's;
 *   -ENETUNREACH IPv4(-mapped) destination on an IPv6 endpoint without src4;
 *   -EMSGSIZE payload over 65507 (IPv4) / 65527 (IPv6) bytes, DF /
 *    DONTFRAG set and the datagram larger than the MTU, or GSO set and
 *    min(payload, gso_size) + IP + UDP headers over the MTU;
 *   -ENOBUFS the device gave no buffers (even after a flush).
 * An error while a datagram is pending discards it, as the kernel does
 * (udp_flush_pending_frames), except the destination/option mismatch errors,
 * which leave it untouched. */
TXS_API ssize_t txs_udp_sendmsg(struct txs_udp_ep *ep, struct txs_udp_msg *m);

/* Convenience: sendmsg of one buffer. */
TXS_API ssize_t txs_udp_sendto(struct txs_udp_ep *ep, const void *buf, size_t len, unsigned flags,
			       const struct sockaddr *name, socklen_t namelen);

/* Emit the pending datagram, if any (the UDP_CORK-off / "next send without
 * MORE" step), then hand every batched frame to the device and kick it.
 * Returns the frames the pending datagram made (0 if none) or -errno. */
TXS_API int txs_udp_flush(struct txs_udp_ep *ep);

/* Payload bytes of the pending (corked) datagram; 0 if none. */
TXS_API size_t txs_udp_pending(const struct txs_udp_ep *ep);

/* Counters of this endpoint (any thread; exact once the owner stopped). */
TXS_API void txs_udp_stats(const struct txs_udp_ep *ep, struct txs_udp_stats *out);

/* Fill a sockaddr_in / sockaddr_in6 from an address and a host-order port;
 * returns its length (0 for an unknown family). */
TXS_API socklen_t txs_udp_sockaddr(struct sockaddr_storage *ss, const struct txs_addr *a, uint16_t port);

/* ---- engine adapter: `txscale send` through this path -------------------- *
 * One endpoint per worker over the worker's queue; each fill() makes
 * sendmsg calls into the engine's buffers. Every datagram (every GSO segment)
 * starts with a txscale payload header (docs/wire-format.md), sequence
 * numbers consecutive per worker. A call is never cut to fit a burst: when
 * the buffers left cannot hold all its frames, the fill ends and the call
 * goes whole into the next burst (w->min_frames tells the engine). Only the
 * last GSO call of a packet count carries fewer segments: the ones still due.
 * init sets w->frames_per_dgram (IP fragments of one datagram) so that the
 * engine counts datagrams. */
struct txs_udp_gen_conf {
	struct txs_flow_spec spec; /* addresses, ports, MACs, payload_len (bytes per
				    * call), tos/ttl/df/no_udp_csum, flow_id */
	bool spread_sport;         /* worker k uses sport + k */
	bool connected;            /* connect() once, or name the destination per call */
	uint16_t gso_size;         /* UDP_SEGMENT per call; 0 = off */
	uint32_t mtu;              /* 0 = the device's (txs_netdev.mtu); the device's
				    * frame_size must be >= mtu + 14 */
	struct txs_ident *ident;   /* shared allocator, worker k opens core k (max_cores
				    * >= workers); NULL: a private default one per worker */
	struct txs_linksel *linksel; /* NULL: link 0; else worker k opens core k and each
				      * call (datagram, or GSO call) goes out on one
				      * selected link; broadcast: -EOPNOTSUPP at init */
	unsigned max_segs;         /* 0: the running kernel's UDP_MAX_SEGMENTS */
	/* Flows and sizes (struct txs_shape, read in init only; NULL: one flow
	 * of spec.payload_len). Flows take turns per call; each names its own
	 * destination (the ID bucket of that destination, as the fast path),
	 * with one endpoint per distinct (source, source port) of the worker's
	 * flows, at most TXS_UDP_SHAPE_MAX_EPS (-E2BIG). Sizes: every size
	 * must make the same frames per call (-EINVAL; checked by
	 * txs_udp_shape_frames), and not with gso_size (-EINVAL). */
	const struct txs_shape *shape;
	uint64_t seed;             /* random walks of the shape (txs_shape_rng_seed) */
};
#define TXS_UDP_SHAPE_MAX_EPS 64
/* Frames per datagram of every size of the shape at this MTU when they are
 * all the same, else 0 (mixed fragment counts are not supported). */
TXS_API unsigned txs_udp_shape_frames(const struct txs_shape *sh, bool v4, uint32_t mtu, uint32_t payload_len);
/* A function, not a data object, as txs_udp_gen() (txscale/gen.h). */
TXS_API const struct txs_gen_ops *txs_udp_sock_gen(void);
#define txs_udp_sock_gen_ops (*txs_udp_sock_gen())

/* The one choice between the two generators, made at setup: the template
 * fast path (txs_udp_gen_ops with a struct txs_gen_conf) gives the very
 * frames of this sendmsg path when the flow is connected, has no GSO and its
 * datagram fits mtu (or the device is kernel_ip: the kernel fragments);
 * anything else takes txs_udp_sock_gen_ops. mtu 0: dev->mtu. */
TXS_API bool txs_udp_fast_path_ok(const struct txs_netdev *dev, const struct txs_flow_spec *sp, uint32_t mtu,
				  bool connected, unsigned gso_size);

/* Frames one call of len payload bytes makes on a frame device of this mtu:
 * GSO segments, IP fragments, or 1 (IPv4: v4 true). */
TXS_API unsigned txs_udp_call_frames(bool v4, uint32_t mtu, size_t len, unsigned gso_size);

#ifdef __cplusplus
}
#endif
#endif
