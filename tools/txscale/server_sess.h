/* SPDX-License-Identifier: MIT */
/* txscale server: one session in its own process (server_sess.c). The
 * protocol is lib/ctl's (txs_ctl_serve); this side starts the test's
 * `txscale recv` / `txscale send` children, waits for them and reads their
 * summary files; an iperf3 client's test goes to server_iperf3.c. */
#ifndef TXS_SERVER_SESS_H
#define TXS_SERVER_SESS_H
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <txscale/ctl.h>
#include "metrics_cli.h"
#include "opt.h"
#include "common/proc.h"

struct server_cfg {
	const char *bind;
	uint16_t control_port;
	bool one_off;
	const char *auth_file;
	const char *allow_dest;
	double max_time;
	double ctl_timeout;
	bool json;
	bool server_flag; /* -s: recv -s */
	unsigned max_sessions, max_per_client;
	struct opt_rate max_rate;
	struct mcli_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
};

struct smet;
struct sess {
	const struct server_cfg *cfg;
	struct smet *sm; /* --metrics: the children's files */
	const struct txs_ctl_allow *allow;
	const uint8_t *key; /* NULL: no secret */
	int fd;
	int stream_lock; /* iperf3 stream handshakes take turns on it (-1: none) */
	unsigned id;
	struct txs_addr client, local;
	struct sockaddr_storage client_sa, local_sa;
	char client_s[INET6_ADDRSTRLEN + 8], local_s[INET6_ADDRSTRLEN];
	char exe[PATH_MAX];
	struct txs_paths p;
	char peer_json[PATH_MAX]; /* the client's sender summary, for our receiver */
	pid_t rp, sp;             /* the test's receiver and sender (-1: none) */
	bool s_self;              /* the sender exited by itself (status s_st) */
	int s_st;
};

/* Serve the session on s->fd (txscale or iperf3, told apart by who speaks
 * first). The process's exit status: 0, or 1 (refused or failed, logged). */
int server_session(struct sess *s);
/* Tell the client why (an error message) and log it. Returns -1. */
int server_refuse(struct sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
