/* SPDX-License-Identifier: MIT */
/* `txscale send --iperf2 -c HOST`: a test against a stock iperf 2 server
 * (`iperf -s -u`) over iperf 2's UDP protocol (txscale/rx_iperf2.h,
 * docs/iperf2.md). iperf 2 has no control connection: each stream is a
 * connected UDP socket whose datagrams carry iperf 2's header (ids from 1,
 * CLOCK_REALTIME stamps); at the end each stream sends the end datagram
 * (id -(sent+1)) every 10 ms, with the next magnitude each time, until the
 * server's report comes back or wait_s passes.
 *
 * The server's report says how many ids up to the end datagram's it did not
 * see; all of them were sent (data, then end datagrams), and the end it
 * answered arrived, so the data datagrams it received are
 * datagrams - errors - 1 and txscale's loss is what we sent minus that:
 * exact, unless the report does not add up (then said, and "not exact").
 * The library prints nothing but through txs_ip2_client_write. */
#ifndef TXSCALE_IPERF2_H
#define TXSCALE_IPERF2_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <txscale/common.h>
#include <txscale/rx_iperf2.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TXS_IP2_STREAMS_MAX 128
#define TXS_IP2_RETRY_MS 10 /* the end datagram's period while no report comes (iperf 2's client: 10 ms) */

struct txs_ip2_client_conf {
	const struct sockaddr_storage *server; /* address and port */
	const struct sockaddr_storage *local;  /* -B (port 0), or NULL */
	unsigned streams;  /* 1..TXS_IP2_STREAMS_MAX, each its own socket and source port */
	unsigned length;   /* UDP payload bytes, TXS_IP2_HDR_LEN..65507 */
	double rate_pps;   /* all streams together; 0 = as fast as the sockets take them */
	uint64_t count;    /* data datagrams in all (0: by time) */
	double time;       /* seconds (with count 0) */
	double wait_s;     /* the longest wait for the server's reports */
	int (*stop)(void *arg); /* non-zero: stop sending, and (2) do not wait for reports */
	void *arg;
};

struct txs_ip2_stream_out {
	uint64_t sent, bytes;      /* data datagrams written, their bytes */
	uint64_t send_errors;      /* writes that failed (not sent, no id used) */
	uint64_t ends_sent;        /* end datagrams written */
	bool report;               /* the server's report came */
	struct txs_ip2_report rep;
	uint64_t received, lost;   /* from the report: our data datagrams it received; sent - received */
	bool exact;
	char why[128];             /* not exact: why */
};

struct txs_ip2_client_out {
	double seconds;            /* the first datagram to the last data datagram */
	unsigned n;
	uint64_t refused;          /* ICMP port unreachable seen (no server on the port) */
	struct txs_ip2_stream_out s[TXS_IP2_STREAMS_MAX];
};

/* Checks conf: 0, or -EINVAL with err naming the option. */
TXS_API int txs_ip2_client_check(const struct txs_ip2_client_conf *c, char *err, size_t errlen);
/* The test: 0 when every stream's report came, -ETIMEDOUT when some did
 * not (out holds what was sent), -ECONNREFUSED when the host said no one
 * listens on the port, another -errno (sockets) with err. */
TXS_API int txs_ip2_client_run(const struct txs_ip2_client_conf *c, struct txs_ip2_client_out *o, char *err,
			       size_t errlen);
/* The lines: the receiver (the server's report, our exact loss), then the
 * sender; text, or JSON lines (type "receiver" device "iperf2", then a
 * summary of kind "send"). */
TXS_API void txs_ip2_client_write(FILE *out, const char *host, const struct txs_ip2_client_out *o, bool json);

#ifdef __cplusplus
}
#endif
#endif
