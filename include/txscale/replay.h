/* SPDX-License-Identifier: MIT */
/* pcap replay (txscale send --replay, docs/replay.md): the frames of a
 * classic libpcap capture (LINKTYPE_ETHERNET, microsecond or nanosecond
 * timestamps, either byte order), loaded whole into memory once, sent as they
 * are through a frame device by one engine worker, at the capture's own
 * timing (a TXS_PACE_TABLE schedule), a multiple of it, or any engine rate.
 *
 * Concurrency: load/free/schedule from the controlling thread; the loaded
 * capture is read-only while the engine runs (workers only read it). */
#ifndef TXSCALE_REPLAY_H
#define TXSCALE_REPLAY_H

#include <txscale/engine.h>

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

/* The capture's own timing at `speed` times its pace (speed > 0), as an
 * engine schedule (TXS_PACE_TABLE, one worker): frame i is due at
 * (ts[i] - ts[0]) / speed after the start (a timestamp earlier than the one
 * before counts as equal: the order of the file is the order sent), and the
 * file repeats every (span + span / (frames - 1)) / speed ns: the last
 * frame's time plus one mean gap (a one-frame capture repeats at once: use a
 * rate). The table is owned by r. Returns 0 or -EINVAL/-ENOMEM. */
TXS_API int txs_replay_schedule(struct txs_replay *r, double speed, struct txs_pace_conf *out);

/* Generator: conf = struct txs_replay *. Worker k sends frames in file order
 * from frame 0, looping, on link 0; one frame = one engine datagram, so -n
 * counts frames. init refuses (-EMSGSIZE) a capture whose longest frame is
 * over the device's frame limit (mtu + 14, or its buffer size) and a device
 * that does not send whole frames (udp:, -EPROTOTYPE). */
TXS_API extern const struct txs_gen_ops txs_replay_gen_ops;

#ifdef __cplusplus
}
#endif
#endif
