/* SPDX-License-Identifier: MIT */
/* txscale send -c HOST against an iperf3 server (docs/iperf3.md;
 * ctl_cli.h): send's options as the iperf3 test's terms, the run and its
 * lines are lib/ctl's (txs_ip3_client_*). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include "ctl_cli.h"

struct first {
	const char *host;
	unsigned port;
	const struct txs_ip3_params *p;
};

/* The first line, once the server took the test (TEST_RUNNING): a refused
 * test prints its refusal alone, as against a txscale server */
static void first_line(void *arg)
{
	const struct first *f = arg;
	const struct txs_ip3_params *p = f->p;
	char ra[32], rb[32], rate[96] = "unlimited";
	if (p->bandwidth)
		snprintf(rate, sizeof(rate), "%s datagrams/s = %sbit/s of UDP payload per stream",
			 txs_fmt_si((double)p->bandwidth / (8.0 * p->len), ra, sizeof(ra)),
			 txs_fmt_si((double)p->bandwidth, rb, sizeof(rb)));
	printf("txscale send: iperf3 server %s, port %u: %s test, %u stream%s, -l %u, %s\n", f->host, f->port,
	       p->bidirectional ? "bidirectional" : p->reverse ? "reverse (the server sends)" : "forward (we send)",
	       p->parallel, p->parallel == 1 ? "" : "s", p->len, rate);
	fflush(stdout);
}

int ctl_iperf3_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, int fd)
{
	const char *host = s->dest;
	/* what iperf3's protocol cannot carry is refused, not dropped */
	const char *own = o->auth_file ? "--auth-file" : o->remote_threads ? "--remote-parallel"
			  : o->remote_cpus ? "--remote-cpus" : o->remote_rcvbuf ? "--remote-rcvbuf"
			  : o->remote_dev && strcmp(o->remote_dev, "udp") ? "--remote-dev" : NULL;
	if (own || s->shaped) {
		if (own)
			fprintf(stderr, "txscale send: %s is an iperf3 server: %s is for a txscale server (txscale server "
				"there), iperf3's protocol has no such thing\n", host, own);
		else
			fprintf(stderr, "txscale send: %s is an iperf3 server: its protocol sends one size, one flow per "
				"stream: size mixes (-l imix, -l A,B), ranges, flows and VLAN tags are a txscale server's\n",
				host);
		close(fd);
		return 2;
	}
	struct txs_ip3_client_spec sp = { .streams = s->threads, .length = s->length, .reverse = o->reverse,
					  .bidir = o->bidir, .count = s->count, .rate_pps = s->rate_pps };
	double secs = s->time > 0 ? s->time : 10;
	if (!s->count && (secs != floor(secs) || secs > TXS_IP3_TIME_MAX)) {
		fprintf(stderr, "txscale send: %s is an iperf3 server, which takes whole seconds: -t %g\n", host, secs);
		close(fd);
		return 2;
	}
	sp.time = s->count ? 0 : (unsigned)secs;
	struct txs_ip3_test t;
	memset(&t, 0, sizeof(t));
	char err[512] = "";
	if (txs_ip3_client_params(&t.p, &sp, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale send: %s is an iperf3 server: %s\n", host, err);
		close(fd);
		return 2;
	}
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	getpeername(fd, (struct sockaddr *)&peer, &pl);
	/* -B: the streams leave from the control connection's address (bound to it), port the kernel's */
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	getsockname(fd, (struct sockaddr *)&me, &ml);
	if (me.ss_family == AF_INET)
		((struct sockaddr_in *)&me)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&me)->sin6_port = 0;
	/* -A: stream k's thread on the k-th CPU of the list (unpinned without -A, like iperf3) */
	struct txs_ip3_cli_conf cc = { .server = &peer, .local = s->bind ? &me : NULL,
				       .cpus = s->cpus && !s->no_pin && s->cpus->n ? s->cpus->cpu : NULL,
				       .n_cpus = s->cpus && !s->no_pin ? s->cpus->n : 0,
				       .ctl_timeout_ms = o->ctl_timeout > 2e6 ? 2000000000 : (int)(o->ctl_timeout * 1000),
				       .cookie_sent = true /* the probe's opener */ };
	struct first fl = { .host = host, .port = o->control_port, .p = &t.p };
	if (!s->json) {
		cc.running = first_line;
		cc.arg = &fl;
	}
	struct txs_ip3_client_out out;
	int ip3_err = 0, rc = txs_ip3_client_test(fd, &cc, &t, &out, &ip3_err, err, sizeof(err));
	close(fd);
	if (rc < 0)
		fprintf(stderr, "txscale send: %s: %s\n", host, err[0] ? err : strerror(-rc));
	else
		txs_ip3_client_write(stdout, host, &t, &out, s->json);
	txs_ip3_test_free(&t);
	return rc < 0 ? 1 : 0;
}
