/* SPDX-License-Identifier: MIT */
/* txscale server's iperf3 side (server_iperf3.c). */
#ifndef TXS_SERVER_IPERF3_H
#define TXS_SERVER_IPERF3_H
#include <stdbool.h>
#include <sys/socket.h>

#define IP3_FIRST_WAIT_MS 200 /* an iperf3 client's cookie comes at once; a txscale client waits for our hello */

struct ip3_srv_ctx {
	int fd;                               /* the accepted control connection */
	const struct sockaddr_storage *local; /* its local address (streams use its port) */
	const struct sockaddr_storage *peer;  /* its peer (the only address a stream may come from) */
	const char *prefix;                   /* log line prefix: "txscale server: session N (ADDR): " */
	bool json;                            /* -J: summaries on stdout, log on stderr */
	double max_time;
	int ctl_timeout_ms;
	bool auth;                            /* --auth-file: iperf3 clients are refused */
	const int *stream_lock;               /* see txs_ip3_srv_conf */
	double max_rate;                      /* --max-rate (0: none) */
	const char *metrics_file;             /* --metrics: the test's counters written here at its end (NULL: none) */
	bool max_rate_bits;
};

/* Did the peer speak first within wait_ms (an iperf3 client's cookie)? */
bool server_iperf3_first(int fd, int wait_ms);
/* Tell an iperf3 client the server is busy (ACCESS_DENIED). */
void server_iperf3_busy(int fd);
/* Serve one iperf3 test; 0, or 1 (refused or failed, logged). */
int server_iperf3(const struct ip3_srv_ctx *c);
#endif
