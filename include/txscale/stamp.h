/* SPDX-License-Identifier: MIT */
/* STAMP (RFC 8762, extended by RFC 8972; docs/stamp.md): the test packet
 * codec, the session-reflector and the session-sender's analysis.
 *
 * Threads: the codec functions are pure and may be called from any thread.
 * A reflector (txs_stamp_refl_*) runs one worker thread per socket; its
 * stats may be read from any thread while it runs (relaxed per-worker
 * counters summed by the reader). A sender session (txs_stamp_send_run) runs
 * its sessions on threads of its own and returns when they are done; the
 * analysis object (txs_stamp_ana_*) belongs to one thread. */
#ifndef TXSCALE_STAMP_H
#define TXSCALE_STAMP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <txscale/common.h>
#include <txscale/engine.h>

#define TXS_STAMP_PORT 862
#define TXS_STAMP_BASE_LEN 44  /* unauthenticated test packet, both directions */
#define TXS_STAMP_AUTH_LEN 112 /* authenticated test packet, both directions */
#define TXS_STAMP_AUTH_COVER 96 /* the HMAC covers the first 96 octets */
#define TXS_STAMP_HMAC_LEN 16  /* HMAC-SHA-256 truncated to 128 bits */
#define TXS_STAMP_MAX_LEN 65507
#define TXS_STAMP_KEY_MAX 256

/* RFC 8972 TLV types and flags */
enum {
	TXS_STAMP_TLV_PADDING = 1,
	TXS_STAMP_TLV_LOCATION = 2,
	TXS_STAMP_TLV_TSINFO = 3,
	TXS_STAMP_TLV_COS = 4,
	TXS_STAMP_TLV_DIRECT = 5,
	TXS_STAMP_TLV_HMAC = 8,
};
#define TXS_STAMP_TLV_U 0x80 /* unrecognized */
#define TXS_STAMP_TLV_M 0x40 /* malformed */
#define TXS_STAMP_TLV_I 0x20 /* integrity (HMAC TLV) failed */
#define TXS_STAMP_ERR_Z 0x4000 /* error estimate: PTPv2 timestamp format */
#define TXS_STAMP_ERR_S 0x8000 /* error estimate: synchronized to UTC */

struct txs_stamp_key {
	uint8_t k[TXS_STAMP_KEY_MAX];
	size_t len; /* 0: unauthenticated */
};

/* One test packet, decoded (sender's fields, and the reflector's when it is
 * a reflected packet). Timestamps raw as on the wire (NTP or PTPv2 64-bit,
 * per the Z bit of the error estimate next to them). */
struct txs_stamp_pkt {
	uint32_t seq;
	uint64_t ts;
	uint16_t err;
	uint16_t ssid;
	/* reflected packets only */
	uint64_t rx_ts;
	uint32_t s_seq;
	uint64_t s_ts;
	uint16_t s_err;
	uint8_t s_ttl;
};

/* Timestamps: CLOCK_REALTIME ns <-> the 64-bit wire formats. */
TXS_API uint64_t txs_stamp_ntp_from_ns(uint64_t unix_ns);
TXS_API uint64_t txs_stamp_ns_from_ts(uint64_t ts, uint16_t err); /* NTP, or PTPv2 when err has Z */

/* Encode the sender's base fields (len: the whole datagram, >= base; bytes
 * past the base are left as they are: TLVs or padding the caller wrote).
 * With key->len the packet is authenticated and its HMAC written. 0 or
 * -EINVAL (len below the base or over cap). */
TXS_API int txs_stamp_encode_sender(uint8_t *buf, size_t len, const struct txs_stamp_pkt *p,
				    const struct txs_stamp_key *key);
/* Decode a sender's test packet: 0, -EMSGSIZE (a runt), -EACCES (bad MAC). */
TXS_API int txs_stamp_decode_sender(const uint8_t *buf, size_t len, const struct txs_stamp_key *key,
				    struct txs_stamp_pkt *p);
/* Decode a reflected packet: 0, -EMSGSIZE, -EACCES. */
TXS_API int txs_stamp_decode_reflected(const uint8_t *buf, size_t len, const struct txs_stamp_key *key,
				       struct txs_stamp_pkt *p);

/* ---- the reflector's handling of one packet (pure) ---------------------- */

/* What the socket says of one received datagram */
struct txs_stamp_rx_meta {
	uint64_t t2_ns; /* receive time, CLOCK_REALTIME ns (kernel stamp when there is one) */
	int ttl;        /* -1: unknown (0 goes on the wire) */
	int tos;        /* DSCP|ECN received, -1 unknown */
	bool kernel_ts; /* t2 is the kernel's receive stamp */
};

/* Per-session counters the reflector keeps (stateful mode) */
struct txs_stamp_sess_ctr {
	uint32_t seq; /* next reflector sequence number */
	uint32_t rx;  /* received from this sender (Direct Measurement R_RxC) */
	uint32_t tx;  /* reflected to it (R_TxC) */
};

struct txs_stamp_refl_pkt_stats {
	uint64_t tlv_unknown, tlv_malformed, tlv_bad_hmac;
};

/* The reply to one sender datagram in into out (cap >= in_len; out may be
 * in: the reply is built in place): length
 * in_len, or -EMSGSIZE (runt), -EACCES (bad MAC), -ENOBUFS. ctr NULL:
 * stateless (reflector seq = sender seq). t3_ns: the transmit stamp.
 * *reply_tos: the TOS to send with (-1: as the socket's default, else
 * DSCP1 of a Class of Service TLV, or the received DSCP). */
struct txs_stamp_refl_conf;
TXS_API int txs_stamp_reflect(const struct txs_stamp_refl_conf *c, struct txs_stamp_sess_ctr *ctr, const uint8_t *in,
			      size_t in_len, const struct txs_stamp_rx_meta *m, uint64_t t3_ns, uint8_t *out,
			      size_t cap, int *reply_tos, struct txs_stamp_refl_pkt_stats *st);

/* ---- the reflector ----------------------------------------------------------- */

struct txs_stamp_refl_conf {
	const char *bind;      /* NULL: every address, IPv6 and IPv4 */
	uint16_t port;         /* 0: an ephemeral port (txs_stamp_refl_port) */
	bool stateless;        /* RFC 8762 4.3: reflector seq = sender seq */
	struct txs_stamp_key key; /* key.len: authenticated mode */
	unsigned threads;      /* sockets with SO_REUSEPORT, one worker each (0 = 1) */
	unsigned max_sessions; /* per worker (0 = 4096); the stalest is forgotten when full */
	double idle_s;         /* a session idle this long is forgotten (0 = 300) */
	uint16_t err_est;      /* error estimate sent (0: from adjtimex) */
	bool sync_known;       /* Timestamp Information: clock is NTP-synchronized */
};

struct txs_stamp_refl_stats {
	uint64_t rx;           /* datagrams received */
	uint64_t reflected;    /* replies sent */
	uint64_t runts;        /* shorter than the base packet: dropped */
	uint64_t bad_mac;      /* authenticated mode: wrong HMAC, dropped */
	uint64_t send_errors;  /* a reply the kernel refused */
	uint64_t tlv_unknown;  /* TLVs returned with the U flag */
	uint64_t tlv_malformed;/* TLVs returned with the M flag */
	uint64_t tlv_bad_hmac; /* HMAC TLVs returned with the I flag */
	uint64_t sessions;     /* sessions seen (stateful) */
	uint64_t evicted;      /* sessions forgotten to make room */
	uint64_t kernel_ts;    /* T2 from a kernel receive stamp */
	uint64_t socket_drops; /* dropped by the kernel at the sockets, receive buffer full (SO_MEMINFO) */
};

struct txs_stamp_refl;
/* Open and bind the sockets (no thread yet). 0 or -errno; err says what. */
TXS_API int txs_stamp_refl_open(const struct txs_stamp_refl_conf *c, struct txs_stamp_refl **out, char *err,
				size_t errlen);
TXS_API uint16_t txs_stamp_refl_port(const struct txs_stamp_refl *r);
/* Start the workers. 0 or -errno. */
TXS_API int txs_stamp_refl_start(struct txs_stamp_refl *r);
/* Any thread, async-signal-safe: ask the workers to stop. */
TXS_API void txs_stamp_refl_stop(struct txs_stamp_refl *r);
/* Wait for the workers to end (after stop). */
TXS_API void txs_stamp_refl_join(struct txs_stamp_refl *r);
/* Any thread: the counters summed over workers. */
TXS_API void txs_stamp_refl_stats(const struct txs_stamp_refl *r, struct txs_stamp_refl_stats *s);
TXS_API void txs_stamp_refl_close(struct txs_stamp_refl *r);
/* The counters as one JSON line {"type":"stamp_reflector",...}, or as text. */
TXS_API void txs_stamp_refl_write(const struct txs_stamp_refl_stats *s, bool json, FILE *f);

/* A txs_metrics collector (txs_metrics_add) of a reflector's counters:
 * txscale_stamp_*_total (docs/stamp.md). Any thread, while r is open. */
struct txs_prom;
TXS_API void txs_stamp_refl_collect(struct txs_prom *p, void *arg);

/* A key file's contents (a trailing newline dropped) as the raw HMAC key.
 * 0, -ENOENT/-EACCES (cannot read), -EINVAL (empty), -E2BIG (too long). */
TXS_API int txs_stamp_key_load(struct txs_stamp_key *k, const char *path);

/* ---- the sender's analysis (pure, one thread) ---------------------------------- */

struct txs_stamp_dist {
	uint64_t count;
	int64_t min, p50, p90, p99, p999, max;
	double mean;
};

struct txs_stamp_result {
	bool stateful;       /* reflector numbers its own replies (loss split per direction) */
	bool split_exact;    /* the last packet's reply came back: the split is exact */
	bool split_inconsistent; /* the reflector numbered more packets than we sent: no split */
	uint64_t sent, reflected, received;
	uint64_t lost, lost_forward, lost_backward;
	uint64_t dup_forward, dup_backward;
	uint64_t reorder_forward, reorder_backward;
	uint64_t outages_forward, outages_backward;      /* gaps with loss that way */
	uint64_t longest_forward, longest_backward;      /* the most lost in one gap */
	uint64_t longest_forward_ns, longest_backward_ns; /* the longest such gap: the send times of the answered packets around it */
	uint64_t foreign;    /* replies that are not ours (other seq range, bad MAC, runts) */
	uint64_t bad_time;   /* replies whose stamps make no sense (RTT < 0 or > 1 h) */
	uint64_t head_retries; /* first probes sent before one was answered (not counted) */
	uint64_t tail_probes;  /* probes sent after the run to learn the reflector's count */
	uint64_t local_drops;  /* numbered but refused by the local device (socket buffer full):
				* counted in sent and lost (forward) as well */
	struct txs_stamp_dist rtt, fwd, bwd;      /* ns: T4-T1-(T3-T2), T2-T1, T4-T3 */
	struct txs_stamp_dist fwd_corr, bwd_corr; /* one-way, corrected by the offset */
	bool clock_valid;
	int64_t clock_offset_ns; /* reflector clock minus ours (min-RTT exchange) */
	int64_t clock_error_ns;  /* +- bound: half that exchange's RTT */
	uint64_t clock_rtt_ns;
	int cos_dscp, cos_ecn;   /* last Class of Service TLV seen back: DSCP and ECN the reflector got (-1 none) */
	double secs;             /* first send to last reply */
};

struct txs_stamp_ana;
/* seq0: the sender's sequence number of the session's first packet (the
 * answered first probe; its reply fixes the reflector's base and mode).
 * NULL on no memory. */
TXS_API struct txs_stamp_ana *txs_stamp_ana_new(uint32_t seq0);
TXS_API void txs_stamp_ana_free(struct txs_stamp_ana *a);
/* A packet with sender seq went out at t1_ns. 0 or -ENOMEM. */
TXS_API int txs_stamp_ana_sent(struct txs_stamp_ana *a, uint32_t seq, uint64_t t1_ns);
/* A reply arrived at t4_ns: 0, or -ERANGE (not one of ours: foreign). */
TXS_API int txs_stamp_ana_reply(struct txs_stamp_ana *a, const struct txs_stamp_pkt *p, uint64_t t4_ns);
/* Whether the reply to seq came back. */
TXS_API bool txs_stamp_ana_answered(const struct txs_stamp_ana *a, uint32_t seq);
/* The result (the analysis stays usable). 0 or -ENOMEM. */
TXS_API int txs_stamp_ana_result(struct txs_stamp_ana *a, struct txs_stamp_result *r);
/* Several sessions into one result: counts summed, distributions over all
 * their samples, the clock from the fastest exchange of any. 0 or -ENOMEM. */
TXS_API int txs_stamp_ana_result_n(struct txs_stamp_ana *const *a, unsigned n, struct txs_stamp_result *r);

/* ---- the sender session ---------------------------------------------------- */

enum { TXS_STAMP_TLVS_COS = 1, TXS_STAMP_TLVS_DIRECT = 2, TXS_STAMP_TLVS_TSINFO = 4, TXS_STAMP_TLVS_PAD = 8 };

/* One interval of one session (txs_stamp_send_conf.on_interval) */
struct txs_stamp_interval {
	unsigned session;          /* 0.. */
	uint16_t ssid;
	double start, end;         /* seconds since the session's first packet */
	uint64_t sent, received;   /* in the interval (a reply counts when it arrives) */
	struct txs_stamp_dist rtt; /* of the replies that arrived in it */
};

struct txs_stamp_send_conf {
	const char *host;   /* reflector address (numeric or a name) */
	uint16_t port;      /* 0: 862 */
	const char *bind;   /* source address */
	double rate;        /* packets/s per session (0: 1 per second... see docs) */
	uint64_t count;     /* packets per session (0: by time) */
	double secs;        /* seconds (0 and count 0: 10 s) */
	unsigned length;    /* UDP payload length (0: the base length) */
	unsigned sessions;  /* parallel sessions, one thread and socket each (0 = 1) */
	int tos;            /* IP TOS / traffic class (-1: default) */
	unsigned tlvs;      /* TXS_STAMP_TLVS_* to carry */
	uint16_t ssid;      /* first session's SSID (0: 1) */
	double wait_s;      /* after the last send, wait this long for replies (0: 1 s) */
	struct txs_stamp_key key;
	bool ptp;           /* send PTPv2 timestamps (Z) instead of NTP */
	double interval_s;  /* > 0: on_interval every interval_s seconds */
	/* Called from each session's own thread (several at once with sessions
	 * > 1: the callee serialises its output). */
	void (*on_interval)(void *user, const struct txs_stamp_interval *iv);
	void *user;
	/* The transmit side runs on txscale's engine (txscale/engine.h): worker
	 * k sends session k's packets after its first probe, paced, each stamped
	 * T1 with its own clock read; each session's replies are read by a
	 * thread of its own. */
	const char *dev;    /* the engine's device (txscale/netdev.h): NULL = "udp:gso=off"
			     * (kernel sockets, a datagram per message); packet:IF, xdp:IF send frames, the
			     * replies still come through the kernel to the session's socket */
	const int *cpus;    /* sessions entries: session k's worker and receive thread pinned
			     * to cpus[k] (-1: not); NULL: none */
	enum txs_pace_kind pace; /* TXS_PACE_CONST (evenly spaced) or TXS_PACE_POISSON (needs rate) */
	uint64_t seed;      /* POISSON: per-worker RNG seed (0 = random) */
	uint64_t pace_slack_ns; /* the sleeping pacer's window (engine.h, pace_slack_ns):
				 * 0 = txscale send's default (TXS_PACE_SLACK_DEFAULT_NS,
				 * TXS_PACE_SLACK_GAPS gaps), UINT64_MAX = spin-exact */
};

/* Run the sessions; stop (may be NULL) set by a signal handler ends the
 * sending early. 0 or -errno with err. res: the sessions together. */
TXS_API int txs_stamp_send_run(const struct txs_stamp_send_conf *c, volatile sig_atomic_t *stop,
			       struct txs_stamp_result *res, char *err, size_t errlen);
/* The summary line: JSON {"type":"summary","kind":"stamp",...} or text. */
TXS_API void txs_stamp_result_write(const struct txs_stamp_result *r, bool json, FILE *f);
#endif
