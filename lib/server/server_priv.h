/* SPDX-License-Identifier: MIT */
/* Private to lib/server: the server's state, the session table, a session's
 * process and the test sides it starts, the iperf3 test, the metrics
 * registry of the sessions. */
#ifndef TXS_SERVER_PRIV_H
#define TXS_SERVER_PRIV_H
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include <txscale/metrics.h>
#include <txscale/rx_iperf3.h>
#include <txscale/server.h>
#include <txscale/session_recv.h>
#include <txscale/session_send.h>
#include "common/proc.h"

#define TXS_SRV_REFUSERS_MAX 32      /* refusals being answered at once; beyond, a connection is closed unanswered */
#define TXS_SRV_PENDING_MAX 16       /* connections waiting for a session that is ending (one more: refused at once) */
#define TXS_SRV_PENDING_MS 600       /* the longest such a wait */
#define TXS_SRV_PENDING_GRACE_S 0.3  /* a full server's newcomer waits this long in any case */
#define TXS_SRV_FIRST_MS 200         /* a client's first bytes come at once: txscale's opener (TXS_CTL_OPENER) or
				      * an iperf3 cookie; a txscale client older than the opener waits for our hello */
#define TXS_SRV_KEEP_S 60.0          /* a finished session's metrics series stay this long */
#define TXS_SRV_WHO_LEN (INET6_ADDRSTRLEN + 8)

/* ---- the sessions' metrics (metrics.c) ----------------------------------------------------------- */
enum txs_srv_refused { TXS_SRV_REF_SESSIONS = 0, TXS_SRV_REF_PER_CLIENT, TXS_SRV_REF_N };

struct txs_srv_msess;
struct txs_srv_metrics {
	struct txs_metrics_life *life; /* NULL: no metrics */
	char dir[256]; /* the sessions' files: N-recv.prom, N-send.prom, N-iperf3.prom */
	struct txs_srv_msess *list; /* registered sessions, newest first */
	unsigned keep_max;          /* finished sessions kept at most */
	_Atomic unsigned long long total, refused[TXS_SRV_REF_N];
	_Atomic unsigned active;
};

/* 0 (also without metrics), or -errno with err. */
int txs_srv_metrics_start(struct txs_server *sv, char *err, size_t errlen);
/* A session's file of one kind ("recv", "send", "iperf3") into out ("" without metrics). */
void txs_srv_metrics_path(const struct txs_srv_metrics *sm, unsigned id, const char *kind, char *out, size_t len);
void txs_srv_metrics_begin(struct txs_srv_metrics *sm, unsigned id, const char *client);
void txs_srv_metrics_end(struct txs_srv_metrics *sm, unsigned id);
void txs_srv_metrics_refused(struct txs_srv_metrics *sm, enum txs_srv_refused why);
/* In the accept loop: the file on its period, finished sessions dropped after TXS_SRV_KEEP_S. */
void txs_srv_metrics_tick(struct txs_srv_metrics *sm, double elapsed);
/* The sessions' series and their directory go (the run's end, after the
 * life's last file and linger; or a close without a run). */
void txs_srv_metrics_stop(struct txs_srv_metrics *sm);

/* ---- the iperf 2 UDP service (iperf2.c) ----------------------------------------------------------- */
#define TXS_SRV_IP2_FLOWS 256   /* iperf 2 tests at once (a client's -P N is N of them) */
#define TXS_SRV_IP2_QUEUE 64    /* finished tests waiting for the accept loop's log */
#define TXS_SRV_IP2_ACKS 10     /* the report sent at most this often per test (iperf 2's server: 10) */
#define TXS_SRV_IP2_LINGER_S 3.0 /* a finished test's flow kept this long after its last datagram (the
				  * client retries its end for 2 s) */
struct txs_srv_ip2_test { /* a finished (or abandoned) test */
	struct sockaddr_storage peer;
	uint64_t end_id; /* 0: no end came */
	double seconds;
	struct txs_ip3_rx rx;
	char how[64];    /* why it was abandoned ("": it ended) */
	uint8_t back;    /* TXS_SRV_IP2_BACK_*: the client asked for traffic back (not served) */
};
#define TXS_SRV_IP2_BACK_DUAL 1    /* -d, -r */
#define TXS_SRV_IP2_BACK_REVERSE 2 /* -R, --full-duplex */
struct txs_srv_ip2;
struct txs_server;
/* Bind conf's iperf2_port and start the thread (nothing at -1; the default
 * port taken: logged, not fatal). 0 or -errno with err. */
int txs_srv_ip2_start(struct txs_server *sv, char *err, size_t errlen);
/* The accept loop: finished tests into the log and the summary hook. */
void txs_srv_ip2_drain(struct txs_server *sv);
/* Join the thread, drain, close (safe twice and without a start). */
void txs_srv_ip2_stop(struct txs_server *sv);
uint16_t txs_srv_ip2_port(const struct txs_server *sv);
/* In a forked child: its copy of the socket closed (the thread is the parent's only). */
void txs_srv_ip2_child(const struct txs_server *sv);

/* ---- the server ---------------------------------------------------------------------------------- */
struct txs_srv_pending { /* accepted, not yet admitted */
	int fd;
	struct sockaddr_storage peer, me;
	double t;
	bool told; /* the client heard why it waits (a txscale client that opened with the opener) */
};

struct txs_srv_slot {
	pid_t pid;   /* 0: free */
	int ep;      /* EOF once the session is done with its client (-1: none) */
	bool ending; /* ... which it is */
	unsigned id;
	struct txs_addr client;
	char who[TXS_SRV_WHO_LEN];
	double deadline;
	unsigned n_cpu;
	int cpu[TXS_MAX_CORES];
};

struct txs_server {
	struct txs_server_conf c; /* max_sessions and max_per_client resolved */
	struct txs_server_hooks h;
	struct txs_ctl_allow allow;
	uint8_t key[TXS_CTL_KEY_LEN];
	int lfd;
	uint16_t port;
	int ip3_lock; /* iperf3 tests share the control port number for their UDP streams: they take turns at the handshakes */
	struct txs_srv_slot *slot; /* [c.max_sessions] */
	unsigned active;
	int allowed[CPU_SETSIZE]; /* the CPUs this server may run on */
	unsigned n_allowed;
	unsigned load[CPU_SETSIZE]; /* sessions on each CPU */
	pid_t refusers[TXS_SRV_REFUSERS_MAX];
	struct txs_srv_pending pend[TXS_SRV_PENDING_MAX];
	unsigned npend;
	unsigned sessions;
	unsigned n_refused;   /* connections refused busy */
	struct txs_server_counts pub; /* sessions, active, refused for txs_server_counts: relaxed atomic stores */
	bool ran;
	volatile sig_atomic_t stop, lingering;
	struct txs_srv_metrics sm;
	struct txs_stamp_refl *stamp; /* --stamp: its threads run in this process only */
	struct txs_srv_ip2 *ip2;      /* iperf 2 clients (NULL: none) */
};

void txs_srv_log(const struct txs_server *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void txs_srv_msg(const struct txs_server *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An accepted socket's address as ours, and its port. */
void txs_srv_sa_addr(const struct sockaddr_storage *ss, struct txs_addr *a, uint16_t *port);
/* Did the peer speak first within wait_ms (an iperf3 client's cookie)? */

/* ---- admission (admit.c) ------------------------------------------------------------------------- */
/* A session's process is gone (reaped): its metrics end, its slot is free. */
/* The counts txs_server_counts reads from another thread. */
void txs_srv_publish(struct txs_server *sv);
void txs_srv_slot_ended(struct txs_server *sv, struct txs_srv_slot *sl);
/* Reap what has ended, stop sessions past their bound; 1 when a one-off
 * session ended (*code: its exit status). */
int txs_srv_reap(struct txs_server *sv, int *code);
/* A session done with its client (its end pipe at EOF) is ending. */
void txs_srv_check_ending(struct txs_server *sv);
/* Pending connection k: admitted, refused busy, or left waiting. Returns the next index to look at. */
unsigned txs_srv_admit(struct txs_server *sv, unsigned k);

/* ---- a session, in its own process (session.c) --------------------------------------------------- */
struct txs_srv_sess {
	const struct txs_server *sv;
	const uint8_t *key; /* NULL: no secret */
	int fd;
	int stream_lock; /* iperf3 stream handshakes take turns on it (-1: none) */
	unsigned id;
	struct txs_addr client, local;
	struct sockaddr_storage client_sa, local_sa;
	char client_s[TXS_SRV_WHO_LEN], local_s[INET6_ADDRSTRLEN];
	struct txs_paths p;
	char peer_json[PATH_MAX]; /* the client's sender summary, for our receiver */
	char peer_tmp[PATH_MAX + 8]; /* ... while it is written (txs_write_atomic) */
	pid_t rp, sp;             /* the test's receiver and sender (-1: none) */
	bool s_self;              /* the sender exited by itself (status s_st) */
	int s_st;
};

/* The session's process after fork: never returns. */
void txs_srv_session_main(const struct txs_server *sv, const struct txs_srv_slot *sl, int fd,
			  const struct txs_srv_pending *pe, int ep_w) __attribute__((noreturn));
/* A log line of the session: "session N (CLIENT): " and the text. */
void txs_srv_slog(const struct txs_srv_sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Serve one iperf3 test; 0, or 1 (refused or failed, logged). */
int txs_srv_iperf3(struct txs_srv_sess *s);

/* ---- a test's sides (sides.c) -------------------------------------------------------------------- */
/* The receiver `txscale recv` runs with its option table's defaults and
 * the spec's fields (port: room for its text). 0, or -EINVAL with err (the
 * spec's CPU list). */
int txs_srv_recv_conf(struct txs_recv_conf *c, const struct txs_ctl_recv_spec *r, const char *bind, char port[8],
		      double idle, double limit, const char *sender_summary, char *err, size_t errlen);
/* The sender `txscale send --dev udp` runs with its defaults and the spec's
 * fields (length: room for its text). 0, or -EINVAL with err. */
int txs_srv_send_conf(struct txs_send_conf *c, const struct txs_ctl_send_spec *sd, const char *bind, const char *dest,
		      double limit, char length[16], char *err, size_t errlen);
/* Start the test's receiver (ready when it returns) or sender, each a
 * child of the session's process. The pid, or -1 with err. */
pid_t txs_srv_recv_start(struct txs_srv_sess *s, const struct txs_ctl_recv_spec *r, double idle, double limit,
			 char *err, size_t errlen);
pid_t txs_srv_send_start(struct txs_srv_sess *s, const struct txs_ctl_send_spec *sd, const char *dest, double limit,
			 char *err, size_t errlen);
#endif
