/* SPDX-License-Identifier: MIT */
/* txscale send -c HOST against an iperf3 server (docs/iperf3.md): the test
 * runs over iperf3's protocol (lib/ctl txs_ip3_client_run), and the
 * server's figures come back as a receiver line of the schema a txscale
 * server's has, with txscale's exact loss: what we sent minus what the
 * server says it received. Nothing the server says is trusted: its results
 * message is decoded strictly (lib/ctl), and a stream whose parts do not add
 * up (bytes not whole datagrams, more received than we sent, a stream
 * missing) makes the loss "not exact". */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include <txscale/rx.h>
#include <txscale/stats.h>
#include "ctl_cli.h"

static void print_fwd(const char *host, const struct txs_ip3_peer_rx *f, bool json)
{
	double jit = f->streams ? f->jitter_sum / f->streams * 1000.0 : 0;
	if (!json) {
		double off = (double)f->received + (double)f->lost;
		printf("receiver %s: received %llu, lost %llu (%.4g%%)%s, jitter %.3f ms (the iperf3 server's own loss "
		       "figure: %llu)\n",
		       host, (unsigned long long)f->received, (unsigned long long)f->lost,
		       off > 0 ? f->lost * 100.0 / off : 0.0, f->exact ? " exact" : " (not exact)", jit,
		       (unsigned long long)f->peer_lost);
		if (!f->exact)
			printf("receiver %s: not exact: %s\n", host, f->why);
		return;
	}
	struct txs_json j;
	txs_json_begin(&j, stdout);
	txs_json_str(&j, "type", "receiver");
	txs_json_str(&j, "host", host);
	txs_json_str(&j, "device", "iperf3");
	txs_json_u64(&j, "received", f->received);
	txs_json_u64(&j, "lost", f->lost);
	txs_json_bool(&j, "lost_exact", f->exact);
	txs_json_u64(&j, "expected", f->sent);
	txs_json_u64(&j, "excess", f->excess);
	txs_json_u64(&j, "bytes", f->bytes);
	txs_json_dbl(&j, "jitter_ms", jit);
	txs_json_obj_open(&j, "iperf3");
	txs_json_u64(&j, "lost", f->peer_lost);
	txs_json_u64(&j, "packets", f->peer_packets);
	txs_json_obj_close(&j);
	if (!f->exact)
		txs_json_str(&j, "not_exact", f->why);
	txs_json_end(&j);
}

int ctl_iperf3_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, int fd)
{
	const char *host = s->dest;
	struct txs_ip3_test t;
	memset(&t, 0, sizeof(t));
	struct txs_ip3_params *p = &t.p;
	p->proto = TXS_IP3_UDP;
	p->parallel = s->threads ? s->threads : 1;
	p->len = s->length;
	p->reverse = o->reverse && !o->bidir;
	p->bidirectional = o->bidir;
	p->udp_counters_64bit = s->length >= TXS_IP3_LEN_MIN;
	snprintf(p->client_version, sizeof(p->client_version), "txscale-%s", txs_version());
	if (s->count) {
		p->blockcount = s->count;
	} else {
		double secs = s->time > 0 ? s->time : 10;
		if (secs != floor(secs) || secs > TXS_IP3_TIME_MAX) {
			fprintf(stderr, "txscale send: %s is an iperf3 server, which takes whole seconds: -t %g\n", host,
				secs);
			close(fd);
			return 2;
		}
		p->time = (unsigned)secs;
	}
	if (s->rate_pps > 0)
		p->bandwidth = (uint64_t)ceil(s->rate_pps / p->parallel * s->length * 8.0);
	char err[512] = "";
	if (txs_ip3_params_check(p, 0, err, sizeof(err))) {
		fprintf(stderr, "txscale send: %s is an iperf3 server: %s\n", host, err);
		close(fd);
		return 2;
	}
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);
	getpeername(fd, (struct sockaddr *)&peer, &pl);
	/* -A: stream k's thread on the k-th CPU of the list (unpinned without -A, like iperf3) */
	struct txs_ip3_cli_conf cc = { .server = &peer,
				       .cpus = s->cpus && !s->no_pin && s->cpus->n ? s->cpus->cpu : NULL,
				       .n_cpus = s->cpus && !s->no_pin ? s->cpus->n : 0,
				       .ctl_timeout_ms = o->ctl_timeout > 2e6 ? 2000000000 : (int)(o->ctl_timeout * 1000) };
	if (!s->json)
		printf("txscale send: iperf3 server %s, port %u: %s test, %u stream%s, -l %u, %s\n", host, o->control_port,
		       p->bidirectional ? "bidirectional" : p->reverse ? "reverse (the server sends)" : "forward (we send)",
		       p->parallel, p->parallel == 1 ? "" : "s", p->len, p->bandwidth ? "paced" : "unlimited");
	fflush(stdout);
	struct txs_rx_kstats k0, k1, kd;
	txs_rx_kstats_read(&k0, NULL);
	int ip3_err = 0;
	int rc = txs_ip3_client_run(fd, &cc, &t, &ip3_err, err, sizeof(err));
	txs_rx_kstats_read(&k1, NULL);
	txs_rx_kstats_delta(&kd, &k0, &k1);
	close(fd);
	if (rc < 0) {
		fprintf(stderr, "txscale send: %s: %s\n", host, err[0] ? err : strerror(-rc));
		txs_ip3_test_free(&t);
		return 1;
	}
	struct txs_ip3_sums u;
	txs_ip3_add_up(&t, &u);
	if (u.tx_streams) {
		struct txs_ip3_peer_rx f;
		txs_ip3_peer_rx(&t, &f);
		print_fwd(host, &f, s->json);
	}
	if (u.rx_streams) {
		/* the server's sender, then what we received of it */
		uint64_t ssent = 0;
		for (unsigned i = 0; i < t.n; i++) {
			uint64_t k;
			if (!t.s[i].sender && txs_ip3_peer_sent(&t, t.s[i].id, &k))
				ssent += k;
		}
		char *rj = txs_ip3_recv_json(&t, &u, &kd);
		if (s->json) {
			printf("{\"type\":\"sender\",\"host\":\"%s\",\"device\":\"iperf3\",\"packets\":%llu}\n", host,
			       (unsigned long long)ssent);
			if (rj)
				printf("%s\n", rj);
		} else {
			printf("sender %s: sent %llu datagrams (the iperf3 server's count)\n", host, (unsigned long long)ssent);
			double off = (double)u.received + (double)u.lost;
			printf("recv: received %llu, lost %llu (%.4g%%)%s, duplicates %llu, reordered %llu, late %llu, "
			       "malformed %llu, jitter %.3f ms\n",
			       (unsigned long long)u.received, (unsigned long long)u.lost, off > 0 ? u.lost * 100.0 / off : 0,
			       u.exact ? " exact" : " (not exact)", (unsigned long long)u.duplicates,
			       (unsigned long long)u.reordered, (unsigned long long)u.late, (unsigned long long)u.malformed,
			       u.rx_streams ? u.jitter_sum / u.rx_streams * 1000 : 0.0);
		}
		free(rj);
	}
	if (u.tx_streams) {
		char *sj = txs_ip3_send_json(&t, &u);
		if (s->json && sj)
			printf("%s\n", sj);
		else
			printf("send: %u stream%s, %.3f s: sent %llu datagrams (%.0f pps), %llu bytes, %llu failed writes\n",
			       u.tx_streams, u.tx_streams == 1 ? "" : "s", t.t_end - t.t_start, (unsigned long long)u.sent,
			       t.t_end > t.t_start ? u.sent / (t.t_end - t.t_start) : 0.0, (unsigned long long)u.sent_bytes,
			       (unsigned long long)u.send_errors);
		free(sj);
	}
	fflush(stdout);
	txs_ip3_test_free(&t);
	return 0;
}
