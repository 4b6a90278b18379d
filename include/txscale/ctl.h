/* SPDX-License-Identifier: MIT */
/* txscale control protocol (docs/control.md): how `txscale send -c HOST`
 * and `txscale server` (`txscale recv -s`) set a test up over one TCP
 * connection, like iperf3's control channel.
 *
 * A frame is the 4 bytes "TXSC", a 32-bit big-endian length N, then N bytes
 * of one JSON object {"v":1,"type":"...",...}. Every read has a deadline
 * for the whole frame and a size limit chosen by the reader; unknown
 * versions, unknown types, missing or mistyped fields and strings outside
 * their alphabet are refused (-EPROTO / -EPROTONOSUPPORT) with a one-line
 * reason in err. JSON is parsed with jansson; the optional shared secret is
 * checked with libsodium's crypto_auth (HMAC-SHA-512-256) over a fresh
 * server nonce, so the secret never crosses the wire.
 *
 * Every function returns 0 or a negative errno and never prints. All
 * functions are reentrant; a struct txs_ctl_msg belongs to one thread. */
#ifndef TXSCALE_CTL_H
#define TXSCALE_CTL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <txscale/common.h>
#include <txscale/pkt.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_CTL_VERSION 1
#define TXS_CTL_PORT 5201            /* default TCP control port */
#define TXS_CTL_HDR_LEN 8            /* TXS_CTL_MAGIC + u32 length */
#define TXS_CTL_MAGIC "TXSC"         /* every frame's first 4 bytes */
#define TXS_CTL_MSG_MAX (4u << 20)   /* no frame is ever longer (a receiver summary with many flows) */
#define TXS_CTL_SMALL_MAX (64u << 10) /* what a server reads from a client */
#define TXS_CTL_NONCE_LEN 32
#define TXS_CTL_MAC_LEN 32
#define TXS_CTL_KEY_LEN 32
#define TXS_CTL_DEV_MAX 128
#define TXS_CTL_CPUS_MAX 128
#define TXS_CTL_TEXT_MAX 256
#define TXS_CTL_MAX_THREADS TXS_MAX_CORES
#define TXS_CTL_MAX_SECONDS 86400.0

enum txs_ctl_type {
	TXS_CTL_HELLO = 1, /* server -> client, first: version, software, nonce, auth needed */
	TXS_CTL_BUSY,      /* server -> client instead of hello: another session runs */
	TXS_CTL_AUTH,      /* client -> server: mac over the nonce (only when hello.auth) */
	TXS_CTL_SETUP,     /* client -> server: one test (recv side, send side, or both) */
	TXS_CTL_READY,     /* server -> client: the asked sides run; the client may send */
	TXS_CTL_DONE,      /* client -> server: its sender ended (its summary, or failed + message) */
	TXS_CTL_RESULT,    /* server -> client: the server's summaries */
	TXS_CTL_ERROR,     /* either way: a refusal or failure, message says why; the session ends */
	TXS_CTL_BYE,       /* client -> server: no more tests */
	TXS_CTL_TIME,      /* the clock exchange, only after a hello with clock: client t1, server
			    * answers t1, t2, t3 (lib/ctl/clock.c) */
	TXS_CTL_WAIT,      /* server -> client before hello or busy: why it has not answered yet
			    * (a session is ending); only to a client that opened with TXS_CTL_OPENER */
};

/* What a txscale client writes first on a control connection, before
 * anything arrives: 37 bytes that are an iperf3 cookie (iperf3's alphabet,
 * a NUL last) beginning with this marker. A txscale server knows its own
 * client at once and greets it; an iperf3 server takes it as a client's
 * cookie and answers with a state byte, never with TXS_CTL_HDR_LEN's "TXSC". */
#define TXS_CTL_OPENER "txscalehello"
#define TXS_CTL_OPENER_LEN 12

/* A clock offset between the two hosts as the client measured it over the
 * control channel (docs/control.md, "Clock offset"). */
struct txs_ctl_clock_rep {
	bool on;
	int64_t offset_ns;     /* the receiving host's clock minus the sending host's */
	uint64_t error_ns;     /* bound on its error: half the winning round trip */
	bool have_drift;
	int64_t drift_ns;      /* done: the offset measured after the test minus offset_ns */
	const char *method;    /* how it was measured: TXS_CTL_CLOCK_UDP or TXS_CTL_CLOCK_TCP (static);
				* NULL: not said (an older client: over the control connection) */
};

/* The server receives (the client's sender sends to it). */
struct txs_ctl_recv_spec {
	bool on;
	uint16_t port;                 /* UDP port, 1..65535; 0: the server chooses one (its hello's ports) and
					* names it in ready */
	char dev[TXS_CTL_DEV_MAX];     /* "udp" or "packet:IF[,IF...]" */
	unsigned threads;              /* 0: the server's default */
	char cpus[TXS_CTL_CPUS_MAX];   /* "" or a CPU list "0-3,6" */
	bool no_pin;
	uint64_t rcvbuf;               /* udp: bytes, 0 = default */
	unsigned window;               /* duplicate/reorder window, 0 = default, else a power of two */
	double time;                   /* how long the client expects to send, s; 0 = unknown */
	double idle;                   /* receiver ends this long after the last packet; 0 = default */
	struct txs_ctl_clock_rep clock; /* on: correct latency by it (recv --clock-offset) */
};

/* The server sends (to the client, or to an allowed address). */
struct txs_ctl_send_spec {
	bool on;
	uint16_t port;                 /* destination UDP port */
	char dest[64];                 /* "" = the client's own address (the only one allowed by default) */
	unsigned length;               /* UDP payload bytes */
	double rate;                   /* packets/s, 0 = unlimited */
	uint64_t count;                /* packets, 0 = by time */
	double time;                   /* seconds, 0 = by count */
	unsigned threads;
	char cpus[TXS_CTL_CPUS_MAX];
	bool no_pin;
	char timestamps[8];            /* "" or "burst" (default), "packet", "interp": send --timestamps */
};

struct txs_ctl_msg {
	enum txs_ctl_type type;
	uint32_t test;                       /* setup/ready/done/result: the test number in the session */
	char software[64];                   /* hello: "txscale 0.1.0" */
	bool auth;                           /* hello: the server wants an auth message */
	uint8_t nonce[TXS_CTL_NONCE_LEN];    /* hello */
	uint8_t mac[TXS_CTL_MAC_LEN];        /* auth */
	struct txs_ctl_recv_spec recv;       /* setup */
	struct txs_ctl_send_spec send;       /* setup */
	bool failed;                         /* done: the client's sender failed (message says why) */
	char *sender;                        /* done, result: a send summary line, compact JSON (malloc) */
	char *receiver;                      /* result: a recv summary line, compact JSON (malloc) */
	char message[TXS_CTL_TEXT_MAX];      /* busy, error, done.failed: printable ASCII */
	bool clock;                          /* hello: the server answers time messages */
	bool ports;                          /* hello: the server chooses a data port for a setup.recv.port of 0 */
	uint16_t port;                       /* ready: the data port the server's receiver listens on (0: none said) */
	uint64_t t1, t2, t3;                 /* time: CLOCK_REALTIME ns (t2, t3: 0 in the client's) */
	bool clock_udp;                      /* hello: the server answers time.udp (UDP probes, kernel stamps) */
	uint16_t udp;                        /* time: the client's UDP probe port / the server's answering one
					      * (0: none; only to a server whose hello said clock_udp) */
	struct txs_ctl_clock_rep done_clock; /* done: before/after the test (with drift) */
};

/* Release sender/receiver and zero the message. NULL is fine. */
TXS_API void txs_ctl_msg_free(struct txs_ctl_msg *m);
TXS_API const char *txs_ctl_type_str(enum txs_ctl_type t);

/* One JSON object -> *m (m is reset first; free with txs_ctl_msg_free even on
 * failure). 0; -EPROTONOSUPPORT for another version; -EPROTO for anything
 * malformed; -ENOMEM. err gets one line naming the bad field. */
TXS_API int txs_ctl_decode(struct txs_ctl_msg *m, const char *json, size_t len, char *err, size_t errlen);
/* *m -> a malloc'd compact JSON object (NUL-terminated, *len without the NUL).
 * -EINVAL when a field is out of its range (the same rules as decode). */
TXS_API int txs_ctl_encode(const struct txs_ctl_msg *m, char **json, size_t *len, char *err, size_t errlen);

/* A frame header: the body length, or -EPROTO (bad magic), -EMSGSIZE (over max or 0). */
TXS_API int txs_ctl_frame_len(const uint8_t hdr[TXS_CTL_HDR_LEN], size_t max, size_t *len, char *err,
			      size_t errlen);

/* Read one whole frame from the stream socket fd within timeout_ms (the
 * deadline covers the frame, not each read) and decode it. max: the largest
 * body accepted (<= TXS_CTL_MSG_MAX). -ETIMEDOUT; -ECONNRESET when the peer
 * closed (at a frame boundary: err says "closed", inside one: "truncated");
 * -EMSGSIZE; the decode errors; another -errno from the socket. */
TXS_API int txs_ctl_read(int fd, struct txs_ctl_msg *m, size_t max, int timeout_ms, char *err, size_t errlen);
/* Encode and write one frame within timeout_ms (MSG_NOSIGNAL). */
TXS_API int txs_ctl_write(int fd, const struct txs_ctl_msg *m, int timeout_ms, char *err, size_t errlen);

/* ---- clock offset (lib/ctl/clock.c, clock_udp.c) ------------------------------------------------ *
 * NTP's on-wire calculation: the client stamps t1 and sends it, the server
 * stamps its receive t2 and its answer t3, the client stamps t4 on receipt.
 * offset = ((t2 - t1) + (t3 - t4)) / 2 (the server's clock minus the
 * client's), round trip = (t4 - t1) - (t3 - t2); the true offset lies within
 * round trip / 2 of it whatever the path's asymmetry. Of several exchanges
 * the smallest round trip wins.
 *
 * Two methods (docs/control.md, "Clock offset"): TXS_CTL_CLOCK_UDP, UDP
 * probes between two ephemeral sockets whose four stamps are the kernels'
 * (SO_TIMESTAMPING software transmit and receive stamps: no scheduling or
 * system call in the round trip), with a server whose hello says
 * clock_udp; TXS_CTL_CLOCK_TCP, time messages over the control connection
 * stamped in user space (an older server, or UDP probes that did not come
 * back with kernel stamps). */
#define TXS_CTL_CLOCK_EXCHANGES 8      /* over the control connection */
#define TXS_CTL_CLOCK_UDP_EXCHANGES 32 /* UDP probes */
#define TXS_CTL_CLOCK_UDP_WAIT_MS 100  /* for one probe's answer */
#define TXS_CTL_CLOCK_UDP_BUDGET_MS 1000 /* for all of them */
#define TXS_CTL_CLOCK_MAX_NS (1ll << 62) /* offsets, errors, stamps' spans: larger is refused */
#define TXS_CTL_CLOCK_UDP "udp-kernel-ts"
#define TXS_CTL_CLOCK_TCP "control-tcp"
struct txs_ctl_clock {
	int64_t offset_ns;   /* server's clock minus the client's */
	uint64_t rtt_ns;     /* the winning round trip (error bound: half of it) */
	unsigned used;       /* exchanges that gave a sample */
	const char *method;  /* TXS_CTL_CLOCK_UDP or TXS_CTL_CLOCK_TCP */
	unsigned probes;     /* UDP: probes sent */
	unsigned lost;       /* UDP: probes without a whole answer (reply, follow-up, all four kernel stamps) */
};
/* One sample. -ERANGE when the stamps cannot be (t4 before t1, t3 before t2,
 * the server's time longer than the round trip, spans over
 * TXS_CTL_CLOCK_MAX_NS). */
TXS_API int txs_ctl_clock_sample(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4, int64_t *offset,
				 uint64_t *rtt);
/* The four stamps of one exchange. */
struct txs_ctl_stamps {
	uint64_t t1, t2, t3, t4;
};
/* The smallest round trip of n exchanges wins: out's offset, round trip and
 * used (the exchanges that gave a sample; method and the UDP counts are
 * left as they are). 0; -ERANGE when none gave a sample. */
TXS_API int txs_ctl_clock_best(const struct txs_ctl_stamps *s, unsigned n, struct txs_ctl_clock *out);
/* Client: n exchanges (1..64) over fd, each within timeout_ms; the smallest
 * round trip wins. 0; -ERANGE (no exchange gave a sample); -EREMOTEIO (the
 * server answered with an error: err holds "the server says: ..."); the
 * read/write errors (err says which). */
TXS_API int txs_ctl_clock_measure(int fd, unsigned n, int timeout_ms, struct txs_ctl_clock *out, char *err,
				  size_t errlen);
/* Client, with a server whose hello said clock_udp: n UDP exchanges (1..64)
 * with kernel stamps between an ephemeral socket on fd's local address and
 * the server's on fd's peer address (named in a time message over fd),
 * within budget_ms in all; a probe without a whole answer within wait_ms is
 * counted (out->lost) and passed over. Then one time message over fd ends
 * the server's part. 0 (out->method TXS_CTL_CLOCK_UDP); -ENOMSG when no
 * probe came back with four kernel stamps (err says why; the connection is
 * fine: measure over it instead); the read/write errors of fd. */
TXS_API int txs_ctl_clock_measure_udp(int fd, unsigned n, int wait_ms, int budget_ms, int timeout_ms,
				      struct txs_ctl_clock *out, char *err, size_t errlen);
/* Server: answer the time message m, read when the clock said t2. With
 * m->udp (a client's UDP probe port) it opens an answering socket on fd's
 * local address, names it in the answer and answers the probes from fd's
 * peer until the client's next message over fd is there (at most
 * TXS_CTL_CLOCK_UDP_SERVE_MS, 128 probes); without timestamping it names no
 * port (the client measures over fd). */
#define TXS_CTL_CLOCK_UDP_SERVE_MS 3000
TXS_API int txs_ctl_clock_answer(int fd, const struct txs_ctl_msg *m, uint64_t t2, int timeout_ms, char *err,
				 size_t errlen);
/* The clock of a test as a line {"type":"clock","offset_ns":...,"error_ns":...,
 * "drift_ns":...|null}\n for a receiver's --sender-summary file (the server
 * writes it beside the client's summary). Returns the length, or -ENOSPC. */
TXS_API int txs_ctl_clock_line(char *buf, size_t len, const struct txs_ctl_clock_rep *c);
/* The last such line in text (several JSON lines). 0 (c->on), -ENOENT (none),
 * -EPROTO (malformed or out of range). */
TXS_API int txs_ctl_clock_line_parse(const char *text, size_t len, struct txs_ctl_clock_rep *c);

/* ---- shared secret ---------------------------------------------------------------------------- */
/* The key from a secret file: BLAKE2b-256 of its contents without trailing
 * newlines (1..4096 bytes). -ENOENT/-EACCES/..., -EINVAL (empty), -EFBIG. */
TXS_API int txs_ctl_key_load(uint8_t key[TXS_CTL_KEY_LEN], const char *path);
/* What txs_ctl_key_load's error rc says of the file, for a message. */
TXS_API const char *txs_ctl_key_why(int rc);
TXS_API int txs_ctl_nonce(uint8_t nonce[TXS_CTL_NONCE_LEN]);
/* mac = crypto_auth(key, "txscale-ctl-1 auth" || nonce) */
TXS_API int txs_ctl_mac(uint8_t mac[TXS_CTL_MAC_LEN], const uint8_t nonce[TXS_CTL_NONCE_LEN],
			const uint8_t key[TXS_CTL_KEY_LEN]);
/* Constant time. true when mac is right for nonce and key. */
TXS_API bool txs_ctl_mac_ok(const uint8_t mac[TXS_CTL_MAC_LEN], const uint8_t nonce[TXS_CTL_NONCE_LEN],
			    const uint8_t key[TXS_CTL_KEY_LEN]);

/* ---- where a server may send -------------------------------------------------------------------- */
#define TXS_CTL_ALLOW_MAX 32
struct txs_ctl_allow {
	unsigned n;
	struct {
		struct txs_addr net;
		unsigned prefix;
	} e[TXS_CTL_ALLOW_MAX];
};
/* "ADDR[/PREFIX][,ADDR[/PREFIX]...]" (IPv4 and IPv6). -EINVAL with err naming
 * the bad entry, -E2BIG over TXS_CTL_ALLOW_MAX. */
TXS_API int txs_ctl_allow_parse(struct txs_ctl_allow *a, const char *list, char *err, size_t errlen);
/* May a server whose client is `client` send to `dest`? Yes when dest is the
 * client's own address or inside an entry of a (a may be NULL). IPv4-mapped
 * IPv6 addresses compare as IPv4. */
TXS_API bool txs_ctl_allowed(const struct txs_ctl_allow *a, const struct txs_addr *client,
			     const struct txs_addr *dest);

#ifdef __cplusplus
}
#endif
#endif
