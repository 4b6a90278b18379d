/* SPDX-License-Identifier: MIT */
/* iperf3's wire protocol (docs/iperf3.md), as clients and servers from 3.9
 * to 3.21 speak it: the control connection (cookie, state bytes, JSON
 * messages with a 4-byte big-endian length), the parameter and results
 * messages, the UDP stream handshake and the UDP payload header.
 *
 * Reading is strict: every number used is checked for its JSON type, for
 * being an integer where a count is meant, and for its range; a string is
 * taken only from its alphabet; sizes are capped before anything is
 * allocated. Writing sends a flag only when it is true, because servers up
 * to 3.17 take a key's presence as true ("reverse":false turns reverse on).
 *
 * Every function returns 0 or a negative errno (-EPROTO for a malformed
 * message, with one line in err naming the field) and never prints. All are
 * reentrant; a struct belongs to one thread. */
#ifndef TXSCALE_IPERF3_H
#define TXSCALE_IPERF3_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <txscale/common.h>
#include <txscale/rx.h>
#include <txscale/rx_iperf3.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_IP3_COOKIE_LEN 37          /* 36 characters of [a-z2-7] and a NUL */
#define TXS_IP3_PARAM_MAX 8192u        /* parameter JSON, bytes (iperf3 3.18+ caps it there too) */
#define TXS_IP3_RESULTS_MAX (1u << 20) /* results JSON (server output included), bytes */
#define TXS_IP3_STREAMS_MAX 128u       /* -P (iperf3's MAX_STREAMS) */
#define TXS_IP3_LEN_MIN 16u            /* UDP payload: sec, usec, 64-bit sequence */
#define TXS_IP3_LEN_MAX (65535u - 8u - 20u)
#define TXS_IP3_TIME_MAX 86400u        /* seconds */
#define TXS_IP3_VERSION_MAX 32u

/* State bytes (signed). */
enum txs_ip3_state {
	TXS_IP3_TEST_START = 1,
	TXS_IP3_TEST_RUNNING = 2,
	TXS_IP3_TEST_END = 4,
	TXS_IP3_PARAM_EXCHANGE = 9,
	TXS_IP3_CREATE_STREAMS = 10,
	TXS_IP3_SERVER_TERMINATE = 11,
	TXS_IP3_CLIENT_TERMINATE = 12,
	TXS_IP3_EXCHANGE_RESULTS = 13,
	TXS_IP3_DISPLAY_RESULTS = 14,
	TXS_IP3_IPERF_START = 15,
	TXS_IP3_IPERF_DONE = 16,
	TXS_IP3_ACCESS_DENIED = -1,
	TXS_IP3_SERVER_ERROR = -2, /* then two big-endian int32: i_errno, errno */
};
TXS_API const char *txs_ip3_state_str(int state);

/* iperf3's error numbers (stable across versions) that txscale sends. */
enum txs_ip3_errno {
	TXS_IP3_IEDURATION = 5,         /* "test duration too long" */
	TXS_IP3_IENUMSTREAMS = 6,
	TXS_IP3_IEUNIMP = 13,
	TXS_IP3_IEUDPBLOCKSIZE = 20,
	TXS_IP3_IETOTALRATE = 27,       /* "total required bandwidth is larger than server limit" (3.8+) */
	TXS_IP3_IERECVPARAMS = 114,
	TXS_IP3_IEAUTHTEST = 142,       /* "test authorization failed" */
	TXS_IP3_IESTREAMACCEPT = 204,
	TXS_IP3_IEPROTOCOL = 131,
};

enum txs_ip3_proto { TXS_IP3_PROTO_NONE = 0, TXS_IP3_TCP, TXS_IP3_UDP, TXS_IP3_SCTP };

/* The parameters a client sends. Counts are whole numbers in range or the
 * message is refused; the UDP checks (length, streams) are
 * txs_ip3_params_check's, so a TCP test still decodes and can be refused
 * with iperf3's own error. */
struct txs_ip3_params {
	enum txs_ip3_proto proto;
	unsigned omit;           /* s */
	unsigned time;           /* s, 0 = by num/blockcount */
	uint64_t num;            /* bytes per direction, 0 = by time */
	uint64_t blockcount;     /* datagrams, 0 = by time or bytes */
	unsigned parallel;       /* streams per direction, 1..TXS_IP3_STREAMS_MAX */
	unsigned len;            /* UDP payload bytes, 0 = absent */
	uint64_t bandwidth;      /* payload bits/s per stream, 0 = unlimited */
	uint64_t window;         /* socket buffer bytes, 0 = default */
	unsigned tos;            /* 0..255 */
	unsigned pacing_timer;   /* us */
	bool reverse, bidirectional, get_server_output, udp_counters_64bit, repeating_payload;
	bool has_authtoken;      /* the client wants authentication (txscale refuses it) */
	char client_version[TXS_IP3_VERSION_MAX]; /* [0-9A-Za-z.+~_-], "" = absent */
};

/* Decode a parameter message (<= TXS_IP3_PARAM_MAX bytes). Flags: true, or a
 * number other than 0 (3.12 sends get_server_output:1), is on; false or 0
 * off; anything else refused. Unknown keys are ignored. */
TXS_API int txs_ip3_params_decode(struct txs_ip3_params *p, const char *json, size_t len, char *err, size_t errlen);
/* Encode, sending flags only when true. *json is malloc'd and NUL-terminated.
 * -EINVAL for a field out of range. */
TXS_API int txs_ip3_params_encode(const struct txs_ip3_params *p, char **json, size_t *len, char *err, size_t errlen);
/* What txscale serves: UDP, TXS_IP3_LEN_MIN..LEN_MAX payload (16 only with
 * 64-bit counters: the header must fit), 1..TXS_IP3_STREAMS_MAX streams, no
 * authentication. 0, or the iperf3 error number to send (positive) with err. */
TXS_API int txs_ip3_params_check(const struct txs_ip3_params *p, unsigned max_time, char *err, size_t errlen);

/* One stream of a results message. */
struct txs_ip3_stream_res {
	unsigned id;             /* 1..TXS_IP3_STREAMS_MAX*2+1 */
	uint64_t bytes;
	double jitter;           /* s, 0..3600 */
	int64_t errors;          /* lost as the side counted it (iperf3 may report -1: unknown) */
	uint64_t packets;        /* sender: sent; receiver: highest sequence seen (iperf3) */
	bool has_omitted;        /* 3.14+: omitted_errors and omitted_packets (both or neither) */
	int64_t omitted_errors;
	uint64_t omitted_packets;
	bool has_times;
	double start_time, end_time; /* s */
};

#define TXS_IP3_RES_STREAMS_MAX (2u * TXS_IP3_STREAMS_MAX)
struct txs_ip3_results {
	double cpu_total, cpu_user, cpu_system; /* percent, 0..100*TXS_MAX_CORES */
	int sender_has_retransmits;  /* taken as a number; 3.12 writes 2^64-1 for -1 */
	unsigned n;
	struct txs_ip3_stream_res s[TXS_IP3_RES_STREAMS_MAX];
	char *server_output_text;    /* malloc'd, "" when absent; control characters kept (escape on print) */
};
TXS_API void txs_ip3_results_free(struct txs_ip3_results *r);
/* Decode a results message (<= TXS_IP3_RESULTS_MAX). A stream id seen twice,
 * more than TXS_IP3_RES_STREAMS_MAX streams, a count that is negative, not a
 * whole number or over 2^53 (where a JSON number stops being exact), refused.
 * "retransmits" is ignored. r is reset first; free it even on failure. */
TXS_API int txs_ip3_results_decode(struct txs_ip3_results *r, const char *json, size_t len, char *err, size_t errlen);
/* Encode r (omitted_* always written: a 3.14+ client that gets neither
 * counts no loss as omitted). server_output_text is added when non-empty. */
TXS_API int txs_ip3_results_encode(const struct txs_ip3_results *r, char **json, size_t *len, char *err, size_t errlen);

/* iperf3's stream ids in order of creation: 1, 3, 4, 5, ... (2 is skipped). */
static inline unsigned txs_ip3_stream_id(unsigned k)
{
	return k == 0 ? 1 : k + 2;
}

/* ---- the UDP stream handshake ---------------------------------------------------------------- */
enum txs_ip3_udp_kind { TXS_IP3_UDP_UNKNOWN = 0, TXS_IP3_UDP_NEW, TXS_IP3_UDP_LEGACY_LE, TXS_IP3_UDP_LEGACY_BE };
/* The 4 bytes a client sends: 3.12+ "9876", up to 3.11 123456789 in the
 * client's byte order. */
TXS_API enum txs_ip3_udp_kind txs_ip3_udp_msg_kind(const uint8_t *b, size_t len);
/* The 4 bytes to answer a message of kind k with (UNKNOWN: the new reply). */
TXS_API void txs_ip3_udp_reply(enum txs_ip3_udp_kind k, uint8_t out[4]);
/* The 4 bytes a 3.12+ client sends. */
TXS_API void txs_ip3_udp_msg(uint8_t out[4]);
/* Is b a reply a client accepts: "6789" or 987654321 in either byte order. */
TXS_API bool txs_ip3_udp_reply_ok(const uint8_t *b, size_t len);

/* ---- the control connection ----------------------------------------------------------------- */
/* A cookie: 36 characters of iperf3's alphabet and a NUL. */
TXS_API int txs_ip3_cookie_make(char out[TXS_IP3_COOKIE_LEN]);
/* Does b (len bytes) look like the start of a cookie: every byte so far is of
 * the alphabet, the 37th a NUL. */
TXS_API bool txs_ip3_cookie_prefix(const uint8_t *b, size_t len);
/* Read exactly n bytes within timeout_ms (one deadline for all of them).
 * -ETIMEDOUT, -ECONNRESET (closed), -errno. */
TXS_API int txs_ip3_read_full(int fd, void *buf, size_t n, int timeout_ms);
TXS_API int txs_ip3_write_full(int fd, const void *buf, size_t n, int timeout_ms);
/* One state byte. */
TXS_API int txs_ip3_read_state(int fd, int *state, int timeout_ms);
TXS_API int txs_ip3_write_state(int fd, int state, int timeout_ms);
/* SERVER_ERROR with its two numbers. */
TXS_API int txs_ip3_write_error(int fd, int ip3_errno, int sys_errno, int timeout_ms);
/* A length-prefixed JSON message: 1..max bytes, else -EMSGSIZE before any
 * allocation. *out is malloc'd and NUL-terminated; one deadline. */
TXS_API int txs_ip3_read_json(int fd, size_t max, int timeout_ms, char **out, size_t *len);
TXS_API int txs_ip3_write_json(int fd, const char *json, size_t len, int timeout_ms);

/* ---- one test: the data plane and the server's state machine --------------------------------------- */
struct sockaddr_storage;
/* One UDP stream of a running test. */
struct txs_ip3_stream {
	int fd;                 /* connected UDP socket */
	unsigned id;            /* iperf3's stream id */
	bool sender;            /* this side sends on it */
	int cpu;                /* a sending stream's thread is pinned here; -1 = not pinned */
	uint64_t sent, sent_bytes, send_errors; /* datagrams / payload bytes this side sent, failed writes */
	struct txs_ip3_rx rx;   /* what this side received */
	int64_t sock_drops;     /* the socket's receive-queue drops (SO_RXQ_OVFL), -1 unknown */
	double next;            /* pacing: next send time, s */
};

struct txs_ip3_test {
	struct txs_ip3_params p;
	unsigned n;                     /* streams: p.parallel, twice with bidirectional */
	struct txs_ip3_stream *s;       /* calloc'd */
	double t_start, t_end;          /* CLOCK_MONOTONIC s: TEST_RUNNING .. TEST_END */
	uint64_t ignored;               /* handshake datagrams from other addresses, dropped */
	bool have_peer;                 /* peer results arrived and decoded */
	struct txs_ip3_results peer;    /* the other side's results message */
};
TXS_API void txs_ip3_test_free(struct txs_ip3_test *t);
/* What the other side says stream id sent (its results, a sending stream of
 * its own). false when it did not say. */
TXS_API bool txs_ip3_peer_sent(const struct txs_ip3_test *t, unsigned id, uint64_t *sent);
/* Our results message for t: receiving streams report bytes, jitter, loss
 * (exact: the peer's sent count minus our distinct arrivals, when the peer
 * said; else iperf3's own figure) and packets (the peer's sent count, or the
 * highest sequence); sending streams what we sent. */
TXS_API void txs_ip3_test_results(const struct txs_ip3_test *t, struct txs_ip3_results *r);

/* What the peer says it received of our sending streams, against what we
 * sent: received = its bytes / len per stream, lost = sent - received.
 * exact is false (why says which stream and how) when the parts do not add
 * up: bytes that are not whole datagrams, more received than sent, a
 * highest sequence above what we sent, a stream the peer did not report. */
struct txs_ip3_peer_rx {
	uint64_t sent, received, bytes, excess, lost;
	uint64_t peer_lost, peer_packets; /* the peer's own figures (errors, packets), summed */
	double jitter_sum;                /* s, over streams */
	unsigned streams;
	bool exact;
	char why[160];
};
TXS_API void txs_ip3_peer_rx(const struct txs_ip3_test *t, struct txs_ip3_peer_rx *f);

struct txs_ip3_srv_conf {
	const struct sockaddr_storage *local; /* the control connection's local address: streams use its port */
	const struct sockaddr_storage *peer;  /* the control connection's peer: the only address a stream may come from */
	unsigned max_time;                    /* s: longest -t served; also bounds -n/-k tests */
	int ctl_timeout_ms;                   /* longest wait for the client's next step */
	bool refuse_auth;                     /* the server wants a shared secret an iperf3 client cannot give */
	double max_rate;                      /* > 0: the most this side may be asked to send (-R, --bidir), in
					       * bits/s of payload (max_rate_bits) or datagrams/s; an unpaced
					       * (-b 0) test is over any limit */
	bool max_rate_bits;
	const int *stream_lock;               /* non-NULL: a file flock()ed while this test's streams are made,
					       * so that tests sharing the UDP port take turns at the
					       * handshakes (each other test's client waits for its own
					       * CREATE_STREAMS) */
};
/* Serve one iperf3 test on the accepted control connection fd, through the
 * client's results message (then txs_ip3_serve_finish). Refusals (what
 * txs_ip3_params_check refuses) are sent as SERVER_ERROR with iperf3's
 * error number: returns -EPERM with *ip3_err set. Other failures: -EPROTO
 * (a malformed message), -ETIMEDOUT, -ECONNRESET (the client left), -errno,
 * each with err. t is filled as far as it got; free it with
 * txs_ip3_test_free. */
TXS_API int txs_ip3_serve(int fd, const struct txs_ip3_srv_conf *c, struct txs_ip3_test *t, int *ip3_err, char *err,
			  size_t errlen);
struct txs_ip3_cli_conf {
	const struct sockaddr_storage *server; /* the control connection's peer: streams go to its address and port */
	const struct sockaddr_storage *local;  /* NULL, or the address the streams are bound to (-B: the
						* control connection's, port 0) */
	const int *cpus;                       /* sending streams' CPUs (NULL: not pinned) */
	unsigned n_cpus;
	int ctl_timeout_ms;                    /* longest wait for the server's next step; also ends a test whose
						* server went silent or away */
	bool cookie_sent;                      /* the connection's first 37 bytes were written already (a
						* txscale client's opener, TXS_CTL_OPENER, is an iperf3 cookie) */
	void (*running)(void *arg);            /* NULL, or called once TEST_RUNNING came: the server took
						* the test (a refusal before it is an error alone) */
	void *arg;
};
/* Run one test as an iperf3 client on the connected control connection fd,
 * with t->p as the parameters (t is set up here: free with
 * txs_ip3_test_free; cpus[k], n_cpus > 0, pins the k-th sending stream's
 * thread to cpus[k % n_cpus]). The cookie goes first (unless c->cookie_sent); the server's results end up in
 * t->peer. 0; -EBUSY (ACCESS_DENIED); -EREMOTEIO (SERVER_ERROR: *ip3_err
 * is its number); -EPROTO (a malformed or unexpected message: the server's
 * counts are never used then); -ETIMEDOUT; -ECONNRESET (the server left);
 * -errno, each with err. */
TXS_API int txs_ip3_client_run(int fd, const struct txs_ip3_cli_conf *c, struct txs_ip3_test *t, int *ip3_err,
			       char *err, size_t errlen);

/* Send our results (server_output: text for --get-server-output, may be
 * NULL), DISPLAY_RESULTS, and wait for IPERF_DONE or the close. */
TXS_API int txs_ip3_serve_finish(int fd, const struct txs_ip3_test *t, const char *server_output, int ctl_timeout_ms,
				 char *err, size_t errlen);

/* ---- a test's summary (lib/ctl/iperf3_summary.c) ---------------------------------------- */
/* A test's streams added up: what this side received (exact against the
 * peer's count of what it sent, where the peer said) and sent. */
struct txs_ip3_sums {
	uint64_t received, bytes, unique, duplicates, reordered, late, malformed, expected, lost, excess;
	int64_t ip3_errors, sock_drops;
	uint64_t ip3_ooo, sent, sent_bytes, send_errors;
	unsigned rx_streams, tx_streams;
	bool exact;
	double jitter_sum;
};
TXS_API void txs_ip3_add_up(const struct txs_ip3_test *t, struct txs_ip3_sums *u);
/* One JSON line (malloc'd, no newline): the recv summary of what this side
 * received ({"type":"summary","kind":"recv","device":"iperf3",...}), the
 * send summary of what it sent. */
TXS_API char *txs_ip3_recv_json(const struct txs_ip3_test *t, const struct txs_ip3_sums *u, const struct txs_rx_kstats *kd);
TXS_API char *txs_ip3_send_json(const struct txs_ip3_test *t, const struct txs_ip3_sums *u);

/* ---- `txscale send -c HOST` against an iperf3 server (lib/ctl/iperf3_client.c) ---------------- */
/* The test in send's terms. */
struct txs_ip3_client_spec {
	unsigned streams;  /* -P (0: 1) */
	unsigned length;   /* -l: UDP payload bytes */
	bool reverse;      /* -R: the server sends */
	bool bidir;        /* --bidir: both */
	uint64_t count;    /* -n: datagrams per stream; 0: by time */
	unsigned time;     /* -t: whole seconds, when count is 0 */
	double rate_pps;   /* -b: datagrams/s over all streams; 0: unlimited */
};
/* Its parameters for txs_ip3_client_run (what txs_ip3_params_check
 * refuses: -EINVAL with err). */
TXS_API int txs_ip3_client_params(struct txs_ip3_params *p, const struct txs_ip3_client_spec *s, char *err,
				  size_t errlen);
/* What a client's test gave, added up. */
struct txs_ip3_client_out {
	struct txs_ip3_sums u;
	struct txs_ip3_peer_rx rx; /* u.tx_streams: the server's receiver, loss against what we sent */
	uint64_t peer_sent;        /* u.rx_streams: what the server's sender says it sent */
	struct txs_rx_kstats kd;   /* this host's kernel counters over the test */
};
/* txs_ip3_client_run (t->p set, e.g. by txs_ip3_client_params), the
 * kernel's counters around it, the results added up into *o. Returns as
 * txs_ip3_client_run does; t to be freed (txs_ip3_test_free) in any case. */
TXS_API int txs_ip3_client_test(int fd, const struct txs_ip3_cli_conf *c, struct txs_ip3_test *t,
				struct txs_ip3_client_out *o, int *ip3_err, char *err, size_t errlen);
/* Its lines (docs/iperf3.md): the server's receiver ("receiver HOST: ...",
 * with txscale's exact loss), the server's sender and what we received of
 * it, what we sent; text, or JSON lines in the schema a txscale server's
 * test gives. */
TXS_API void txs_ip3_client_write(FILE *out, const char *host, const struct txs_ip3_test *t,
				  const struct txs_ip3_client_out *o, bool json);

#ifdef __cplusplus
}
#endif
#endif
