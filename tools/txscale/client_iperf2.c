/* SPDX-License-Identifier: MIT */
/* txscale send --iperf2 -c HOST against an iperf 2 server (docs/iperf2.md;
 * ctl_cli.h): send's options as the iperf 2 test's terms, the run and its
 * lines are lib/ctl's (txs_ip2_client_*). */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <txscale/iperf2.h>
#include "ctl_cli.h"

static int resolve(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = passive ? AI_NUMERICHOST : 0 }, *ai = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	int e = getaddrinfo(host, ps, &hints, &ai);
	if (e || !ai)
		return -1;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

int ctl_iperf2_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, bool port_set,
		   int (*stop)(void *), void *arg)
{
	uint16_t port = port_set ? s->port : TXS_IP2_PORT;
	struct sockaddr_storage srv, me;
	if (resolve(s->dest, port, 0, &srv) < 0) {
		fprintf(stderr, "txscale send: cannot resolve '%s'\n", s->dest);
		return 2;
	}
	if (s->bind && resolve(s->bind, 0, 1, &me) < 0) {
		fprintf(stderr, "txscale send: bad value for -B: '%s': expected an IPv4 or IPv6 address\n", s->bind);
		return 2;
	}
	struct txs_ip2_client_conf c = { .server = &srv, .local = s->bind ? &me : NULL,
					 .streams = s->threads ? s->threads : 1, .length = s->length,
					 .rate_pps = s->rate_pps, .count = s->count,
					 .time = s->count ? 0 : s->time > 0 ? s->time : 10, .wait_s = o->ctl_timeout,
					 .stop = stop, .arg = arg };
	char err[512] = "";
	if (txs_ip2_client_check(&c, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale send: %s is an iperf 2 server: %s\n", s->dest, err);
		return 2;
	}
	if (!s->json) {
		char rate[64] = "unlimited";
		if (s->rate_pps > 0)
			snprintf(rate, sizeof(rate), "%.0f datagrams/s (%.6g Mbit/s of UDP payload)", s->rate_pps,
				 s->rate_pps * s->length * 8 / 1e6);
		printf("txscale send: iperf 2 server %s, UDP port %u: %u stream%s, -l %u, %s, %s\n", s->dest, port,
		       c.streams, c.streams == 1 ? "" : "s", c.length, rate,
		       s->count ? "by count" : "by time");
		fflush(stdout);
	}
	static struct txs_ip2_client_out out; /* large: one per process */
	int rc = txs_ip2_client_run(&c, &out, err, sizeof(err));
	if (rc < 0 && out.n == 0) {
		fprintf(stderr, "txscale send: %s: %s\n", s->dest, err);
		return 1;
	}
	txs_ip2_client_write(stdout, s->dest, &out, s->json);
	if (rc < 0)
		fprintf(stderr, "txscale send: %s: %s\n", s->dest, err);
	return rc < 0 ? 1 : 0;
}
