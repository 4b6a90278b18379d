/* SPDX-License-Identifier: MIT */
/* txscale devices: one ops table per backend, found by name at setup.
 *
 * Model: a device (struct txs_netdev) is opened once from a spec string
 * "NAME[:ARGS]" ("dummy", "dummy:links=4,verify", "pcap:out.pcap",
 * "packet:veth0", ...). Each worker then opens its own TX queue
 * (struct txs_txq); everything a worker writes per packet lives in its queue,
 * which is cache-line aligned and written by that worker only.
 *
 * Per burst a worker:
 *   n = txs_txq_alloc(q, bufs, want);      writable frame buffers (in place)
 *   ... fill bufs[i].data, set len/link/segs ...
 *   sent = txs_txq_send(q, bufs, n);       returns how many were accepted
 *   unsent buffers stay owned by the caller: retry them or txs_txq_release().
 *   txs_txq_flush(q);                      kick whatever is batched
 * tx_flush returns 0, or -errno when the device failed for good (interface
 * down or gone, file system full; with a link monitor: when none of the
 * queue's links is left): the engine then stops the worker with that error.
 * A device whose alloc returns 0 must make progress on flush or fail it.
 *
 * Counting contract (docs/devices.md): every frame the caller offered to
 * tx_send is counted exactly once in the queue's link counters: in packets
 * when accepted, or in drop_full / drop_err when refused and then released.
 * A device that learns later that accepted frames never left (write error,
 * ring torn down) moves them from packets to drop_err. So the engine's count
 * of offered frames equals packets + drop_full + drop_err of its queue, which
 * the CLI checks at the end of a run.
 *
 * Buffers hold whole Ethernet frames (dst MAC first). Backends that hand
 * datagrams to the kernel (udp:) use l4_off to find the UDP payload.
 *
 * Concurrency: open/close: one thread, no queue in use. txq_*: only the
 * thread owning the queue; wait-free unless the backend blocks in a syscall.
 * txs_netdev_link_stats(): any thread, any time (relaxed reads of
 * single-writer counters; the sum is exact once workers stopped).
 */
#ifndef TXSCALE_NETDEV_H
#define TXSCALE_NETDEV_H

#include <txscale/common.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_pktbuf {
	uint8_t *data;     /* frame start (Ethernet header) */
	uint32_t len;      /* frame bytes */
	uint32_t cap;      /* writable bytes at data */
	uint16_t link;     /* link index this frame goes out on */
	uint16_t l4_off;   /* offset of the UDP header in data */
	uint16_t gso_size; /* 0, or UDP payload bytes per segment (udp: GSO) */
	uint16_t segs;     /* wire packets this buffer stands for (>= 1) */
	uint64_t priv;     /* backend's own (frame index, ...) */
};

/* Per-link counters kept by each queue; written only by the queue's thread. */
struct txs_link_counters {
	uint64_t packets;   /* wire packets handed to the link (segments counted) */
	uint64_t bytes;     /* frame bytes of those packets */
	uint64_t drop_full; /* not sent: ring / socket buffer full (EAGAIN, ENOBUFS) */
	uint64_t drop_err;  /* not sent: other errors */
	uint64_t verify_err;/* dummy verify mode: frames that failed parsing */
	uint64_t icmp_err;  /* udp: ICMP errors the kernel reported for datagrams already
			     * counted in packets (they left; the far end refused them:
			     * port/host unreachable). A lower bound: each error queued on
			     * the socket once, until its receive buffer is full. */
	int32_t last_err;   /* positive errno of the last drop_err / failure, 0 = none
			     * (sums: any one queue's) */
	/* udp: how the accepted datagrams (packets) left. gso_calls messages
	 * carried UDP_SEGMENT with gso_segs datagrams in all (at least 2
	 * each); the other packets - gso_segs went one per message.
	 * gso_fallback: sockets whose route refused UDP GSO (EIO/EINVAL), after
	 * which they send one datagram per message; gso_err its errno. */
	uint64_t gso_calls, gso_segs, gso_fallback;
	int32_t gso_err;
};

struct txs_netdev;

/* A queue's public part: txs_txq_open() allocates it inside the library's
 * state for the queue (the backend's data, its link counters: private to
 * lib/netdev, on cache lines of their own), so a caller never allocates or
 * copies one. Read-only. */
struct txs_txq {
	struct txs_netdev *dev;
	unsigned id;
	/* dev->txtime_clock >= 0: the monotonic time (ns) before which the
	 * frames sent next may not leave (SCM_TXTIME); 0 = at once. Written by
	 * the queue's own thread (the engine), before its send. */
	uint64_t txtime_ns;
};

/* Why a link changed (a link monitor's on_change, txscale/linkmon.h). */
enum txs_link_why {
	TXS_LINK_EVENT = 0, /* rtnetlink notification */
	TXS_LINK_POLL = 1,  /* found by the miimon re-read */
	TXS_LINK_ERROR = 2, /* a queue's kick failed for good (err says how) */
	TXS_LINK_RETRY = 3, /* taken back after an error: the interface reads up */
	TXS_LINK_HINT = 4,  /* found by a re-read a queue asked for (its kicks stalled) */
};

/* An interface a frame device sends on (txs_netdev_link). */
struct txs_netdev_link {
	char ifname[16]; /* IF_NAMESIZE */
	int ifindex;
};

struct txs_netdev_ops {
	const char *name;
	const char *usage; /* one line: "dummy[:links=N][,verify]" */
	int (*open)(struct txs_netdev *dev, const char *args);
	void (*close)(struct txs_netdev *dev);
	int (*txq_open)(struct txs_netdev *dev, struct txs_txq *q);
	void (*txq_close)(struct txs_txq *q);
	unsigned (*tx_alloc)(struct txs_txq *q, struct txs_pktbuf *bufs, unsigned n);
	unsigned (*tx_send)(struct txs_txq *q, struct txs_pktbuf *bufs, unsigned n);
	void (*tx_release)(struct txs_txq *q, struct txs_pktbuf *bufs, unsigned n);
	int (*tx_flush)(struct txs_txq *q);
	/* Optional: the interface behind link l (0 <= l < n_links) of a device
	 * that sends on interfaces (packet:, xdp:); NULL for the others. */
	int (*link)(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out);
};

/* Open-time configuration the backends may use. */
struct txs_netdev_conf {
	unsigned max_queues;      /* workers that will open a queue */
	uint32_t frame_size;      /* largest frame the caller will build */
	uint8_t src_mac[6], dst_mac[6];
	bool have_src_mac, have_dst_mac;
	/* Optional, the flow's addresses (family 0 = not given; ports host
	 * order, 0 = not given). Kernel-stack backends (udp:) check the route to
	 * dst at open; frame devices (packet:, xdp:) look up the next hop's MAC
	 * for dst. Frames stay the truth: each queue sends what its frames carry. */
	struct txs_addr dst, src;
	uint16_t dport, sport;
	/* VLAN tag bytes (4 per tag) frames carry on top of MTU + 14: frame
	 * devices accept frames up to MTU + 14 + vlan_len (a tag does not
	 * reduce the IP MTU, as the kernel's VLAN devices). */
	uint16_t vlan_len;
	/* Most distinct (addresses, ports) tuples one queue's frames carry (send
	 * --flows with port/address ranges); 0 or 1: one per queue and link.
	 * udp: above 1 a queue keeps a connected socket per tuple, found from
	 * each frame's headers; frames of another tuple once the table holds
	 * this many are refused (drop_err, E2BIG). udp: at most
	 * TXS_NETDEV_UDP_FLOWS_MAX (txq open fails with -E2BIG above). */
	uint32_t flows;
	/* The frames of a queue carry UDP payloads of several sizes (send -l
	 * with a size mix): udp: gso=auto (the default) then sends one datagram
	 * per message. */
	bool sizes_vary;
	/* The frames carry IPv4 DF (send --df): udp: gso=auto coalesces IPv4
	 * only then (the segments of one GSO call share the kernel's ID
	 * reservation, so the IDs of the next call repeat theirs: meaningless
	 * only with DF, RFC 6864). IPv6 has no such ID. */
	bool ipv4_df;
	/* IPv4 DF as a kernel UDP socket sets it by default (send with neither
	 * --df nor --no-df): udp: a socket whose frames carry no DF is
	 * IP_PMTUDISC_WANT (DF on the datagrams that fit the path MTU, those
	 * over it fragmented locally without DF; frames with DF are
	 * IP_PMTUDISC_DO, as ever), and gso=auto may coalesce (every segment
	 * of a call fits the path MTU and carries the frames' DF). Frame
	 * devices keep DF as the frames carry it (ipv4_df). */
	bool ipv4_pmtu_want;
	/* Optional (udp: only): called on the queue's own thread with each
	 * socket a queue connects (on its tuple's first frame, before that
	 * frame is sent), so that a caller who must read what comes back to
	 * the flow's address and port (a STAMP session-sender: the replies)
	 * can read it there; the socket stays the device's (closed by
	 * txs_netdev_close), the callee may set receive options on it and
	 * recv from it on another thread. NULL: not called. */
	void (*on_socket)(void *user, unsigned queue, int fd);
	void *on_socket_user;
};
#define TXS_NETDEV_UDP_FLOWS_MAX 65536u

/* A device's public part. txs_netdev_open() allocates it inside the
 * library's own state for the device (the backend's data, the opened
 * queues, the reason of a failed open, the link monitor's word: private to
 * lib/netdev), so a caller never allocates, copies or frees one itself.
 * Every field is set at open and read-only for callers, except the two
 * marked writable. */
struct txs_netdev {
	const struct txs_netdev_ops *ops;
	char spec[256];
	unsigned n_links;
	bool l2_needed;           /* backend sends whole frames (MACs matter) */
	uint8_t src_mac[6], dst_mac[6]; /* resolved by the backend when it can */
	/* The open-time configuration as the device keeps it (defaults
	 * applied). Writable: conf.frame_size, before any queue opens (the
	 * largest frame the caller will build, read at txq open). */
	struct txs_netdev_conf conf;
	/* Set at open when conf.src was not given: the source address this
	 * device uses towards conf.dst; udp: the one the kernel picks, frame
	 * devices: the interface's first address of dst's family (family 0 =
	 * not known). */
	struct txs_addr src_addr;
	bool uses_stdout;         /* the device writes to standard output (pcap:-):
				   * reports must go elsewhere */
	/* L3 MTU (IP bytes) of the device, set at open: packet:/xdp: the
	 * interface's own (the smallest over the links), udp: the route's
	 * (IP_MTU / IPV6_MTU towards conf.dst, else the interface's, else 1500),
	 * pcap: and dummy: 1500 or their mtu=N argument (576..65535). Frames of
	 * a datagram sent whole are at most mtu + 14 bytes on a frame device;
	 * lib/udp fragments above it. Writable: the caller may lower or raise
	 * it after open (txscale send --mtu) before any queue sends. */
	uint32_t mtu;
	/* The device hands UDP payloads to the kernel's stack (udp:), which
	 * builds the IP headers and fragments; frame devices write frames as
	 * they are (false). */
	bool kernel_ip;
	/* Frames per tx_send the device does best with (udp: GSO active: the
	 * segments one message may carry), set at open; 0 = no preference. A
	 * caller choosing its burst size may raise it to this. */
	unsigned tx_burst;
	/* SO_TXTIME (udp: only; lib/netdev/txtime.c): the clock a queue's
	 * txtime_ns is given in (CLOCK_MONOTONIC, where the route's interface
	 * has the fq qdisc, which holds each datagram until then), or -1: not
	 * used; txtime_why says which, in words, either way. Set at open. */
	int txtime_clock;
	char txtime_why[96];
};

/* Open "NAME[:ARGS]". Returns 0 or -errno: -ENODEV unknown name, -EINVAL bad
 * arguments (err_msg, if given, receives one line naming the bad value). */
TXS_API int txs_netdev_open(struct txs_netdev **out, const char *spec, const struct txs_netdev_conf *conf,
			    char *err_msg, size_t err_len);
TXS_API void txs_netdev_close(struct txs_netdev *dev);

/* Open queue `id` (0..max_queues-1) for the calling worker. */
TXS_API int txs_txq_open(struct txs_netdev *dev, unsigned id, struct txs_txq **out);
TXS_API void txs_txq_close(struct txs_txq *q);

#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
static inline unsigned txs_txq_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	return q->dev->ops->tx_alloc(q, b, n);
}
static inline unsigned txs_txq_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	return q->dev->ops->tx_send(q, b, n);
}
static inline void txs_txq_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	if (n)
		q->dev->ops->tx_release(q, b, n);
}
static inline int txs_txq_flush(struct txs_txq *q)
{
	return q->dev->ops->tx_flush ? q->dev->ops->tx_flush(q) : 0;
}
#endif /* TXS_UNSTABLE_API */

/* Sum of all queues' counters for one link (any thread). */
TXS_API void txs_netdev_link_stats(const struct txs_netdev *dev, unsigned link, struct txs_link_counters *out);

/* Sum over links of queue `queue`'s counters (any thread): the counts of the
 * worker that owns the queue. Summing this over queues gives the same totals
 * as summing txs_netdev_link_stats() over links: one count per fact.
 * A queue never opened reads as zeros. */
TXS_API void txs_netdev_queue_stats(const struct txs_netdev *dev, unsigned queue, struct txs_link_counters *out);

/* The running kernel's UDP_MAX_SEGMENTS (segments one UDP_SEGMENT send may
 * carry: 128 since Linux 6.x, else 64), probed once with a loopback socket
 * pair; any thread. */
TXS_API unsigned txs_netdev_udp_max_segs(void);

/* Registered backends, for --help and tests. */
TXS_API const struct txs_netdev_ops *const *txs_netdev_backends(unsigned *n);
/* The interface behind link l of dev. Returns 0, -EOPNOTSUPP (the device
 * does not send on interfaces: dummy, pcap, udp) or -EINVAL (no link l).
 * Any thread, after open. */
TXS_API int txs_netdev_link(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out);
TXS_API const struct txs_netdev_ops *txs_netdev_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
