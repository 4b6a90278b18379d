/* SPDX-License-Identifier: MIT */
/* pcap replay (txscale send --replay, docs/replay.md): the frames of a
 * classic libpcap capture (LINKTYPE_ETHERNET, microsecond or nanosecond
 * timestamps, either byte order), loaded whole into memory once, sent as they
 * are through a frame device by one engine worker, at the capture's own
 * timing (a TXS_PACE_TABLE schedule), a multiple of it, or any engine rate.
 * Through the udp device (txs_replay_udp), the UDP payloads of the frames
 * that hold whole UDP datagrams, to the device's one destination.
 *
 * Concurrency: load/free/schedule from the controlling thread; the loaded
 * capture is read-only while the engine runs (workers only read it). */
#ifndef TXSCALE_REPLAY_H
#define TXSCALE_REPLAY_H

#include <txscale/engine.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_replay;

/* Load FILE. Returns 0, or -errno with one line in err: -ENOENT/-EACCES
 * (open), -EINVAL (not a pcap file, a record cut short, a frame the capture
 * truncated: incl_len < orig_len, a frame shorter than an Ethernet header),
 * -ENOTSUP (pcapng, or a link type other than Ethernet), -ENODATA (no
 * frames), -ENOMEM. */
TXS_API int txs_replay_load(struct txs_replay **out, const char *path, char *err, size_t errlen);
TXS_API void txs_replay_free(struct txs_replay *r);
TXS_API uint64_t txs_replay_frames(const struct txs_replay *r);
/* The longest frame, and the index of the first frame of that length. */
TXS_API uint32_t txs_replay_max_len(const struct txs_replay *r, uint64_t *index);
/* Frame i's bytes and length (i < frames). */
TXS_API const uint8_t *txs_replay_frame(const struct txs_replay *r, uint64_t i, uint32_t *len);

/* ---- through the udp device (a kernel socket builds the headers) ----------
 * Frames that are not one whole UDP datagram of the destination's family are
 * skipped, each for the first of these reasons met reading it from the
 * outside in (Ethernet, IP, UDP): */
enum txs_replay_skip {
	TXS_REPLAY_NOT_IP = 0,  /* neither IPv4 nor IPv6 after the MACs and up to two VLAN tags (ARP, LLDP...) */
	TXS_REPLAY_MALFORMED,   /* a header, or the IP or UDP length, does not fit the frame's bytes */
	TXS_REPLAY_FRAGMENT,    /* IPv4 MF or a fragment offset; an IPv6 fragment header */
	TXS_REPLAY_NOT_UDP,     /* TCP, ICMP, any other protocol (IPv6: after its extension headers) */
	TXS_REPLAY_FAMILY,      /* a UDP datagram of the other address family than the destination's */
	TXS_REPLAY_SKIP_N
};
/* "not_ip", "malformed", "fragment", "not_udp", "other_family" */
TXS_API const char *txs_replay_skip_name(unsigned reason);

struct txs_replay_udp_info {
	uint64_t datagrams;                          /* frames replayed, as datagrams */
	uint64_t skipped_total;                      /* frames - datagrams */
	uint64_t skipped[TXS_REPLAY_SKIP_N];         /* by reason */
	uint64_t first_skipped[TXS_REPLAY_SKIP_N];   /* the first such frame's index (when skipped[] > 0) */
	uint32_t max_payload;                        /* the longest UDP payload ... */
	uint64_t max_index;                          /* ... and the index of the first frame with it */
	uint64_t payload_bytes;                      /* the payloads of one pass over the file */
};

/* Replay r's datagrams through a kernel UDP socket (the udp device) rather
 * than its frames: index the frames that hold one whole UDP datagram of
 * spec->dst's family (Ethernet, up to two 802.1Q/802.1ad tags, IPv4 with
 * neither MF nor an offset, or IPv6 without a fragment header, a UDP length
 * within the captured bytes; checksums are not looked at) and fill info.
 * Each datagram's UDP payload is then sent behind headers built from spec
 * (addresses, ports, TOS, TTL, DF, --no-csum: the headers of the device's
 * socket; VLAN tags and payload_len ignored): the frame's own addresses and
 * ports are not used. After it, txs_replay_schedule() gives the datagrams'
 * times and the generator sends datagrams, on a kernel_ip device only.
 * Returns 0, -ENODATA (no such datagram: info still filled), -EINVAL (bad
 * spec), -ENOMEM. */
TXS_API int txs_replay_udp(struct txs_replay *r, const struct txs_flow_spec *spec, struct txs_replay_udp_info *info);
/* Datagrams indexed by txs_replay_udp (0 before). */
TXS_API uint64_t txs_replay_datagrams(const struct txs_replay *r);
/* Datagram j's UDP payload, its length and (frame != NULL) its frame's index. */
TXS_API const uint8_t *txs_replay_datagram(const struct txs_replay *r, uint64_t j, uint32_t *len, uint64_t *frame);
/* The longest frame the generator builds for a datagram (a device buffer
 * must hold it: the headers of spec's family + payload, at least 60). */
TXS_API uint32_t txs_replay_udp_frame_max(const struct txs_replay *r);

/* The capture's own timing at `speed` times its pace (speed > 0), as an
 * engine schedule (TXS_PACE_TABLE, one worker): frame i is due at
 * (ts[i] - ts[0]) / speed after the start (a timestamp earlier than the one
 * before counts as equal: the order of the file is the order sent), and the
 * file repeats every (span + span / (frames - 1)) / speed ns: the last
 * frame's time plus one mean gap (a one-frame capture repeats at once: use a
 * rate). After txs_replay_udp, the table holds the datagrams only, each
 * at its own frame's time (the skipped frames' slots stay silent: the first
 * datagram may be due after 0), and the period is still the file's. The
 * table is owned by r. Returns 0 or -EINVAL/-ENOMEM. */
TXS_API int txs_replay_schedule(struct txs_replay *r, double speed, struct txs_pace_conf *out);

/* Generator: conf = struct txs_replay *. Worker k sends frames in file order
 * from frame 0, looping, on link 0; one frame = one engine datagram, so -n
 * counts frames. init refuses (-EMSGSIZE) a capture whose longest frame is
 * over the device's frame limit (mtu + 14, or its buffer size) and a device
 * that does not send whole frames (udp:, -EPROTOTYPE). After txs_replay_udp:
 * the datagrams in file order, looping, one engine datagram each (-n counts
 * datagrams), on a kernel_ip device only (else -EPROTOTYPE); a device buffer
 * smaller than txs_replay_udp_frame_max() fails the fill (-EMSGSIZE); a
 * payload over the path MTU is the kernel's to fragment (or refuse, DF). */
/* A function, not a data object, as txs_udp_gen() (txscale/gen.h). */
TXS_API const struct txs_gen_ops *txs_replay_gen(void);
#define txs_replay_gen_ops (*txs_replay_gen())

#ifdef __cplusplus
}
#endif
#endif
