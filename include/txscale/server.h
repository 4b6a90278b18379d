/* SPDX-License-Identifier: MIT */
/* The txscale server (lib/server, docs/control.md): the far end of `txscale
 * send -c HOST` and of stock iperf3 -u clients on one TCP control port.
 *
 *   struct txs_server_conf c; txs_server_conf_init(&c); ... fill ...
 *   txs_server_conf_check(&c, err, len)    every refusal of a value, one line
 *   txs_server_open(&s, &c, &hooks, ...)   metrics, listen (says "listening on ...")
 *   txs_server_run(s)                      until txs_server_stop, or a one-off's end
 *   txs_server_close(s)
 *
 * It serves up to max_sessions sessions at once (max_per_client from one
 * address); a client that comes when either is reached is answered "busy"
 * (an iperf3 client: ACCESS_DENIED) by a short child process. Each session
 * runs in a child process of its own, on its share of the CPUs; each test
 * of a session runs its receiver and its sender (receive and send sessions,
 * txscale/session_recv.h, session_send.h, built from the spec lib/ctl
 * decoded) as bounded children of the session's process, whose summary
 * files go back to the client. The sender sends only to the client's own
 * address or to one allow_dest names.
 *
 * The library prints nothing: every line goes to a hook, in the process
 * where it arises (the server's, a session's, a test side's); a hook that
 * writes through stdio flushes what it wrote (a child process ends with
 * _exit). Concurrency: one thread calls open, run and close, and forks while
 * it runs (no other thread of the process may hold a lock a child needs);
 * txs_server_stop may be called from any thread or a signal handler. */
#ifndef TXSCALE_SERVER_H
#define TXSCALE_SERVER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <txscale/common.h>
#include <txscale/metrics.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_SERVER_SESSIONS_MAX 1024 /* max_sessions' ceiling */
/* max_sessions' default: a shared test host's clients, not its core count
 * (the CPU count where that is more); sessions past the CPUs share them */
#define TXS_SERVER_SESSIONS_DEFAULT 16
#define TXS_SERVER_IP2_PORT 5001 /* iperf 2's port */

struct txs_server_conf {
	const char *bind;          /* listen on this address only (NULL: every address, IPv6 and IPv4) */
	uint16_t control_port;     /* TCP (0: the kernel's choice, txs_server_port) */
	bool one_off;              /* serve one session, then run returns its status */
	const char *auth_file;     /* shared secret (txs_ctl_key_load); NULL: none */
	const char *allow_dest;    /* where a client may ask us to send besides its own address (NULL: nowhere) */
	double max_time;           /* longest test a client may ask for, s (300) */
	double ctl_timeout;        /* longest wait for a client's next message, s (10) */
	unsigned max_sessions;     /* at once (0: TXS_SERVER_SESSIONS_DEFAULT or the number of CPUs, the more; 1
				    * with one_off) */
	unsigned max_per_client;   /* at once from one address (0 or over max_sessions: max_sessions) */
	double max_rate;           /* the most a client may ask us to send (0: no limit) ... */
	bool max_rate_bits;        /* ... in bits/s of UDP payload (as -b), else datagrams/s */
	struct txs_metrics_opts metrics; /* the registry of the sessions' metrics (docs/metrics.md) */
	int64_t stamp_shift_ns;    /* test only: the tests' senders stamp this far off our clock */
	int stamp_port;            /* a STAMP reflector on this UDP port beside the control port, in the
				    * server's own process (docs/stamp.md): -1 none, 0 the kernel's choice */
	unsigned stamp_threads;    /* its sockets (SO_REUSEPORT), one thread each (0: 1) */
	bool stamp_stateless;      /* it echoes the sender's numbers (RFC 8762 4.3) */
	const char *stamp_auth_file; /* its HMAC key (txs_stamp_key_load): authenticated mode; NULL: none */
	int iperf2_port;           /* iperf 2 UDP clients on this port, in the server's process (docs/iperf2.md):
				    * -1 none, 0 the kernel's choice; default TXS_SERVER_IP2_PORT */
	bool iperf2_required;      /* the port is the user's: taken is an error (else it is logged and skipped) */
};

/* The defaults: port TXS_CTL_PORT, max_time 300, ctl_timeout 10, no STAMP
 * reflector (stamp_port -1), the rest 0. */
TXS_API void txs_server_conf_init(struct txs_server_conf *c);
/* Every refusal of a value (reads auth_file): one line in err with the
 * option's CLI name ("bad value for --max-time: '0': expected 0 < SEC <=
 * 86400"). 0 or -EINVAL. */
TXS_API int txs_server_conf_check(const struct txs_server_conf *c, char *err, size_t errlen);

/* A test's summary as it goes back to the client. */
struct txs_server_summary {
	unsigned session;          /* 1, 2, ... in the order sessions started */
	const char *client;        /* the client's address */
	const char *role;          /* this server's side: "receiver" or "sender" */
	bool iperf3;               /* an iperf3 client's test (its text is in the log already) */
	const char *json;          /* one line, no newline */
	bool iperf2;               /* an iperf 2 client's test (session 0, in the server's process; its text is in
				    * the log already) */
};

struct txs_server_hooks {
	void *user;
	/* One line of the server's log, no newline, no program name
	 * ("listening on ...", "session 3 (198.18.0.1): done after 1 test"). */
	void (*log)(void *user, const char *line);
	/* One line that is not the log: a failure of the server itself, a
	 * metrics note ("metrics at http://..."). */
	void (*msg)(void *user, const char *line);
	/* A test's summary (in the session's process; an iperf 2 test's in the server's). */
	void (*summary)(void *user, const struct txs_server_summary *s);
	/* In a test's receiver ("recv") or sender ("send") process: one line of
	 * its errors and notes, as `txscale recv` / `txscale send` would say
	 * it. The session reads the last line its side left on its stderr for
	 * the log and the client: a hook that writes "txscale SIDE: LINE" there
	 * gives the CLI's words. */
	void (*side_msg)(void *user, const char *side, const char *line);
};

struct txs_server;

/* Check the config, start the metrics registry, listen, and say so in the
 * log. hooks is copied (may be NULL). Returns 0, or -errno with one line
 * in err: -EINVAL for a value to fix (the check's refusals, the metrics
 * options', a bind address this host does not have), -ENOMEM, others from
 * the system (the listening socket's, the metrics endpoint's). */
TXS_API int txs_server_open(struct txs_server **out, const struct txs_server_conf *c,
			    const struct txs_server_hooks *hooks, char *err, size_t errlen);
/* The control port it listens on. */
TXS_API uint16_t txs_server_port(const struct txs_server *s);
/* The iperf 2 service's UDP port (0: none). */
TXS_API uint16_t txs_server_iperf2_port(const struct txs_server *s);
/* The STAMP reflector's UDP port (0: none). */
TXS_API uint16_t txs_server_stamp_port(const struct txs_server *s);
/* Accept, admit, serve until txs_server_stop (then the sessions are
 * stopped at once, and the log says "stopped after N sessions"), or until
 * a one-off's session ends; then the metrics' last file and linger. Once.
 * Returns the exit status: 0; after a one-off, its session's (1: refused
 * or failed). */
TXS_API int txs_server_run(struct txs_server *s);
/* What the server has done so far; any thread, while it runs. */
struct txs_server_counts {
	uint64_t sessions; /* started */
	uint64_t active;   /* running now */
	uint64_t refused;  /* connections told the server is busy */
};
TXS_API void txs_server_counts(const struct txs_server *s, struct txs_server_counts *out);
/* The STAMP reflector's counters (--stamp), any thread: false when there is none. */
struct txs_stamp_refl_stats;
TXS_API bool txs_server_stamp_stats(const struct txs_server *s, struct txs_stamp_refl_stats *out);
/* Ask run to return; during the metrics' linger, end it (async-signal-safe). */
TXS_API void txs_server_stop(struct txs_server *s);
/* Close the listener and free. NULL is fine. */
TXS_API void txs_server_close(struct txs_server *s);

#ifdef __cplusplus
}
#endif
#endif
