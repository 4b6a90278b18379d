/* SPDX-License-Identifier: MIT */
/* The two ends of a txscale control session (docs/control.md) as library
 * state machines over one connected stream socket.
 *
 * The server end (txs_ctl_serve) greets, checks the shared secret, answers
 * clock exchanges and runs each test the client sets up: every field of
 * the spec is checked before anything starts, a refusal goes back as an
 * error message, and results go back as the sides end. The client end
 * (txs_ctl_client_*) greets, measures the clock, sets one test up and
 * collects the server's summaries while its own sides run.
 *
 * What runs a side (a receiver, a sender) is the caller's: the library
 * calls back to start one, to ask whether it ended and to take its summary
 * line. Neither end prints or exits; log lines and error text go to the
 * caller (a log callback, an err buffer). Every wait is bounded. */
#ifndef TXSCALE_CTL_SESSION_H
#define TXSCALE_CTL_SESSION_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <txscale/common.h>
#include <txscale/ctl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_CTL_IDLE_DEFAULT_S 1.0 /* a server's receiver ends this long after its last packet */
#define TXS_CTL_SEND_EXTRA_S 15.0  /* a server's sender is stopped at its limit + this */

/* ---- the server end ------------------------------------------------------------------------------ */

struct txs_ctl_srv_cfg {
	double max_time;                  /* longest test a client may ask for, s */
	double ctl_timeout;               /* longest wait for a client's next message, s */
	const struct txs_ctl_allow *allow; /* NULL: the server sends only to its client */
	const uint8_t *key;               /* TXS_CTL_KEY_LEN bytes; NULL: no shared secret */
	double max_rate;                  /* 0: no limit; datagrams/s, or bits/s of UDP payload with max_rate_bits */
	bool max_rate_bits;
	struct txs_addr client, local;    /* the control connection's two ends */
	const char *client_s;             /* the client's address as text */
};

/* What runs a test's sides. Each returns 0 or -1 (err set) unless it says
 * otherwise; arg is the ops' own. */
struct txs_ctl_srv_ops {
	void *arg;
	/* one line of the session's log, without a prefix ("error: ..." for failures) */
	void (*log)(void *arg, const char *line);
	/* a CPU list of a spec against this host's CPUs; NULL: not checked */
	int (*cpus_check)(void *arg, const char *list, char *err, size_t errlen);
	/* a test was accepted: forget the last test's files */
	void (*test_begin)(void *arg);
	/* start the receiver; ready (bound) when it returns */
	int (*recv_start)(void *arg, const struct txs_ctl_recv_spec *r, char *err, size_t errlen);
	/* start the sender towards dest (checked), for at most limit s */
	int (*send_start)(void *arg, const struct txs_ctl_send_spec *s, const char *dest, double limit, char *err,
			  size_t errlen);
	/* has the sender ended by itself? (never blocks) */
	bool (*send_ended)(void *arg);
	/* the sender ended (or is stopped now): its summary line (malloc), NULL with err */
	char *(*send_finish)(void *arg, char *err, size_t errlen);
	/* the receiver may end within grace s (then it is stopped): its summary line (malloc), NULL with err */
	char *(*recv_finish)(void *arg, double grace, char *err, size_t errlen);
	/* the client's sender summary and clock for the receiver; 0 or -errno */
	int (*peer_summary)(void *arg, const char *summary, const struct txs_ctl_clock_rep *c);
	/* a side's summary line as it goes back ("sender" or "receiver") */
	void (*summary)(void *arg, const char *role, const char *json);
	/* the test ended: stop whatever of it still runs */
	void (*test_end)(void *arg);
};

/* Serve one txscale session on fd (a connected stream socket; the caller
 * closes it): hello, auth, then tests until bye or the client leaves.
 * 0: the session ended well (bye, or a close after a test); -EPROTO,
 * -EACCES, -ECONNRESET, -EIO, ...: it ended on an error, which was logged
 * (and, where the client can still hear it, sent to it). */
TXS_API int txs_ctl_serve(int fd, const struct txs_ctl_srv_cfg *cfg, const struct txs_ctl_srv_ops *ops);

/* Who a new connection's client is, by what it writes first within wait_ms
 * (txs_ctl_serve wants the opener read: consume). */
enum txs_ctl_first {
	TXS_CTL_FIRST_NONE,    /* nothing (or the close): a txscale client that waits for our hello */
	TXS_CTL_FIRST_TXSCALE, /* txscale's opener (TXS_CTL_OPENER), read when consume, else left */
	TXS_CTL_FIRST_OTHER,   /* anything else (an iperf3 client's cookie), not read */
};
TXS_API enum txs_ctl_first txs_ctl_first(int fd, int wait_ms, bool consume);

/* ---- the client end ------------------------------------------------------------------------------ */

struct txs_ctl_client;

/* Greet over a connected stream socket fd (taken: closed on failure and by
 * txs_ctl_client_close): read the hello, answer an auth challenge with the
 * key (NULL: none), learn whether the server answers clock exchanges.
 * NULL with *why (-EPROTO not a txscale server, -EBUSY busy or refused,
 * -EACCES a secret is needed, -ENOMEM) and err. host names the server in
 * messages. */
TXS_API struct txs_ctl_client *txs_ctl_client_greet(int fd, const char *host, const uint8_t *key, double timeout,
						    int *why, char *err, size_t errlen);
/* Connect to port on host (an IPv4 or IPv6 address as text) within timeout
 * s, from bind (an address of this host, as text; NULL: the kernel's
 * choice), as iperf3's -B: the connected socket (non-blocking,
 * close-on-exec, TCP_NODELAY), or -errno with err ("bad server address
 * 'HOST'", "bad -B address 'ADDR'", "-B ADDR is IPv4, the server IPv6",
 * "cannot bind the control connection to -B ADDR: REASON", "cannot connect
 * to the control port P: REASON", "no answer on the control port P within
 * T s"). */
TXS_API int txs_ctl_connect(const char *host, const char *bind, uint16_t port, double timeout, char *err,
			    size_t errlen);
/* txs_ctl_connect (from bind), then txs_ctl_client_greet with the key of auth_file
 * (NULL: none; a file that cannot give one: *why -EINVAL, err "--auth-file
 * 'FILE': ..."), each wait within timeout s. NULL with *why (may be NULL) and err. */
TXS_API struct txs_ctl_client *txs_ctl_client_open(const char *host, const char *bind, uint16_t port,
						   const char *auth_file, double timeout, int *why, char *err,
						   size_t errlen);

#define TXS_CTL_READY_S 10.0 /* a test's receiver, the client's or the server's: from its start to its bound socket */

/* A server on host's port that may be txscale's or iperf3's (`send -c HOST`
 * without --server), told apart on one connection: the client opens with
 * TXS_CTL_OPENER, which an iperf3 server takes for a client's cookie and
 * answers with a state byte, and a txscale server with its hello (or wait,
 * busy) at once: no timing decides (a second probe would take an `iperf3 -s
 * -1`'s only test). 0 with *c (greeted as txs_ctl_client_open does), 1 with
 * *ip3_fd (an iperf3 server's connection, its cookie sent: for
 * txs_ip3_client_run with cookie_sent), or -errno with err: no connection
 * ("no txscale or iperf3 server at HOST port P; ..."), no answer within
 * timeout, -EBUSY ("the iperf3 server at HOST port P is busy running a
 * test"), or the greeting's failure. */
TXS_API int txs_ctl_client_probe(const char *host, const char *bind, uint16_t port, const char *auth_file,
				 double timeout, struct txs_ctl_client **c, int *ip3_fd, char *err, size_t errlen);
/* bye: say bye first (a session that ended well); close and free. NULL is fine. */
TXS_API void txs_ctl_client_close(struct txs_ctl_client *c, bool bye);
TXS_API int txs_ctl_client_fd(const struct txs_ctl_client *c);
/* Our end of the control connection as text (the address the server sees). */
TXS_API const char *txs_ctl_client_local(const struct txs_ctl_client *c);
/* Why the server made us wait before its hello (its wait message), or "". */
TXS_API const char *txs_ctl_client_waited(const struct txs_ctl_client *c);

/* A receive-only test (ndr --remote): setup, wait for ready. 0 or -errno with err. */
TXS_API int txs_ctl_client_recv_start(struct txs_ctl_client *c, const struct txs_ctl_recv_spec *r, char *err,
				      size_t errlen);
/* ... and its end: hand over the sender's summary (NULL: it failed), the
 * receiver's summary into *recv_json (malloc). */
TXS_API int txs_ctl_client_recv_finish(struct txs_ctl_client *c, const char *send_json, char **recv_json, char *err,
				       size_t errlen);

/* One test with our own sides: fwd (the server receives, we send), rev
 * (the server sends, we receive) or both. */
struct txs_ctl_client_test {
	bool fwd, rev;
	struct txs_ctl_recv_spec recv; /* fwd: the server's receiver (its clock is filled in) */
	struct txs_ctl_send_spec send; /* rev: the server's sender */
	double est;                    /* how long we expect to send, s; 0 = unknown */
	double own_idle;               /* rev: our receiver's idle end, s */
	double extra;                  /* rev: the server's run may take est + this */
	int64_t stamp_shift_ns;        /* subtracted from measured offsets (tests) */
	bool any_port;                 /* fwd: the server chooses the data port (when its hello offers to: each
					* session its own), else recv.port; rev: our receiver takes a free port
					* (res.recv_port), else send.port */
};

enum { TXS_CTL_SIDE_SEND, TXS_CTL_SIDE_RECV };

struct txs_ctl_client_ops {
	void *arg;
	/* 0: go on; 1: stop our sender softly (it still writes its summary); 2: abort */
	int (*stopping)(void *arg);
	/* a warning line (the test goes on) */
	void (*warn)(void *arg, const char *line);
	/* rev: start our receiver on local; clock_offset_ns (ours minus the
	 * server's) when measured, else NULL; ready when it returns */
	int (*recv_start)(void *arg, const char *local, const int64_t *clock_offset_ns, char *err, size_t errlen);
	/* rev: the server's sender summary for our receiver; 0 or -errno */
	int (*peer_summary)(void *arg, const char *summary, const struct txs_ctl_clock_rep *c);
	/* fwd: start our sender */
	int (*send_start)(void *arg, char *err, size_t errlen);
	/* side TXS_CTL_SIDE_SEND (ours, fwd) or TXS_CTL_SIDE_RECV (ours, rev):
	 * has it ended by itself? (never blocks) */
	bool (*ended)(void *arg, int side);
	/* ask that side to stop (it still writes its summary) */
	void (*stop)(void *arg, int side);
	/* fwd: our sender's summary line (malloc; stopped first if it runs);
	 * *failed when it did not end well; NULL with err when it left none */
	char *(*send_finish)(void *arg, bool *failed, char *err, size_t errlen);
	/* rev: our receiver (stopped first if it runs): false when it did not end well */
	bool (*recv_finish)(void *arg);
};

struct txs_ctl_client_result {
	char *peer_send, *peer_recv; /* the server's summaries (malloc; free all four) */
	bool failed;                 /* one of our sides did not end well */
	char *own_send, *own_recv;   /* txs_ctl_client_run_sides: our sides' summary lines as they wrote them */
	uint16_t data_port;          /* fwd: the port our sender sends to (the server's ready names it), set
				      * before ops->send_start */
	uint64_t clock_error_ns;     /* rev: the error bound of the offset handed to ops->recv_start */
	uint16_t recv_port;          /* rev: the port our receiver binds (any_port: a free one), set before
				      * ops->recv_start; the server's sender sends there */
	bool ready;                  /* the server said ready: the test ran (false: refused or failed before) */
};

/* Run one test: clock, our receiver, setup, ready, our sender, done, the
 * results. 0 with *res; -EINTR (aborted), -EREMOTEIO (the server refused:
 * err "the server says: ..."), another -errno, each with err. res is
 * filled as far as it came (free it in any case). */
TXS_API int txs_ctl_client_run(struct txs_ctl_client *c, const struct txs_ctl_client_test *t,
			       const struct txs_ctl_client_ops *ops, struct txs_ctl_client_result *res, char *err,
			       size_t errlen);

/* ---- our sides on threads ------------------------------------------------------------------------ */

/* What one of our sides runs with. */
struct txs_ctl_side_io {
	FILE *sumf; /* its JSON summary line goes here (the side closes it) */
	bool hold;  /* txs_ctl_sides.hold: ... and only here */
	void *arg;  /* for the hooks */
	bool (*stop)(void *arg);  /* polled: true ends the run as an interrupt would (summary written) */
	void (*ready)(void *arg); /* the receiver is bound: the server's sender may start */
	uint16_t port;            /* our sender: the data port to send to (the server chose it); our
				   * receiver: the port to bind (a free one we chose); 0: its own -p */
	uint64_t clock_error_ns;  /* our receiver: the clock offset's error bound (within it: not applied) */
	/* the receiver's: the server's sender summary with its clock line, as
	 * txs_recv_hooks.sender_summary hands it over (-EAGAIN until it came) */
	int (*sender_summary)(void *arg, char **text, size_t *len);
	/* our receiver: true when the test never ran (the server refused its
	 * setup): then it says nothing, no summary, no missing sender summary */
	bool (*discard)(void *arg);
};

/* Our sides, each run to its end on a thread of its own: the exit status
 * (0: it ended well). */
struct txs_ctl_sides {
	void *arg;
	bool hold;                          /* their summaries go to memory only (io.hold) */
	int (*stopping)(void *arg);         /* as txs_ctl_client_ops.stopping */
	void (*warn)(void *arg, const char *line); /* as txs_ctl_client_ops.warn */
	/* fwd: our sender */
	int (*send)(void *arg, const struct txs_ctl_side_io *io);
	/* rev: our receiver, bound to local (the address the server sees us
	 * at), clock_offset_ns (ours minus the server's) when measured, else
	 * NULL; io->ready once it is bound */
	int (*recv)(void *arg, const char *local, const int64_t *clock_offset_ns, const struct txs_ctl_side_io *io);
};

/* txs_ctl_client_run with our sides run by the library: each on a thread
 * that blocks SIGINT and SIGTERM (the caller's thread takes them and says
 * so through stopping), our sender's summary to the server, the server's
 * sender summary to our receiver. Returns with no side running (what ran
 * is stopped and joined); res->own_send / own_recv hold what their
 * summaries wrote, also after a failure. */
TXS_API int txs_ctl_client_run_sides(struct txs_ctl_client *c, const struct txs_ctl_client_test *t,
				     const struct txs_ctl_sides *sides, struct txs_ctl_client_result *res, char *err,
				     size_t errlen);

/* ---- the other side's summary -------------------------------------------------------------------- */

/* A side's summary line as the other end shows it: json, one line
 * {"type":ROLE,"host":HOST,...} (ASCII only); else text lines "ROLE HOST:
 * ...". role is "receiver" or "sender". 0, or -EINVAL when summary is not
 * JSON (nothing written), -ENOMEM. */
TXS_API int txs_ctl_peer_write(FILE *out, const char *role, const char *host, const char *summary, bool json);
/* A sender's summary as a receiver reads it (its sender_summary file, or
 * the text its session's sender_summary hook hands over): the test's clock
 * line before it when c->on (docs/control.md, "Clock offset"). malloc'd;
 * NULL when out of memory. */
TXS_API char *txs_ctl_peer_summary_text(const char *summary, const struct txs_ctl_clock_rep *c);
/* ... written to path atomically (a temporary name, then rename). 0 or -errno. */
TXS_API int txs_ctl_peer_summary_save(const char *path, const char *summary, const struct txs_ctl_clock_rep *c);

#ifdef __cplusplus
}
#endif
#endif
