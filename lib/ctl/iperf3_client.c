/* SPDX-License-Identifier: MIT */
/* `txscale send -c HOST` against an iperf3 server (txscale/iperf3.h,
 * docs/iperf3.md): the test's parameters from send's terms, the run with
 * the kernel's counters around it, and its lines. The server's figures come
 * back as a receiver line of the schema a txscale server's has, with
 * txscale's exact loss: what we sent minus what the server says it
 * received. Nothing the server says is trusted: its results message is
 * decoded strictly (iperf3_run.c), and a stream whose parts do not add up
 * (bytes not whole datagrams, more received than we sent, a stream
 * missing) makes the loss "not exact". */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/iperf3.h>
#include <txscale/json.h>
#include <txscale/rx.h>

TXS_API int txs_ip3_client_params(struct txs_ip3_params *p, const struct txs_ip3_client_spec *s, char *err,
				  size_t errlen)
{
	*p = (struct txs_ip3_params){ .proto = TXS_IP3_UDP, .parallel = s->streams ? s->streams : 1, .len = s->length,
				      .reverse = s->reverse && !s->bidir, .bidirectional = s->bidir,
				      .udp_counters_64bit = s->length >= TXS_IP3_LEN_MIN };
	snprintf(p->client_version, sizeof(p->client_version), "txscale-%s", txs_version());
	if (s->count)
		p->blockcount = s->count;
	else
		p->time = s->time;
	if (s->rate_pps > 0)
		p->bandwidth = (uint64_t)ceil(s->rate_pps / p->parallel * s->length * 8.0);
	return txs_ip3_params_check(p, 0, err, errlen) ? -EINVAL : 0;
}

TXS_API int txs_ip3_client_test(int fd, const struct txs_ip3_cli_conf *c, struct txs_ip3_test *t,
				struct txs_ip3_client_out *o, int *ip3_err, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	struct txs_rx_kstats k0, k1;
	txs_rx_kstats_read(&k0, NULL);
	int rc = txs_ip3_client_run(fd, c, t, ip3_err, err, errlen);
	txs_rx_kstats_read(&k1, NULL);
	txs_rx_kstats_delta(&o->kd, &k0, &k1);
	if (rc < 0)
		return rc;
	txs_ip3_add_up(t, &o->u);
	if (o->u.tx_streams)
		txs_ip3_peer_rx(t, &o->rx);
	for (unsigned i = 0; i < t->n; i++) {
		uint64_t k;
		if (!t->s[i].sender && txs_ip3_peer_sent(t, t->s[i].id, &k))
			o->peer_sent += k;
	}
	return 0;
}

/* The server's receiver: what it got of ours. */
static void peer_rx_write(FILE *out, const char *host, const struct txs_ip3_peer_rx *f, bool json)
{
	double jit = f->streams ? f->jitter_sum / f->streams * 1000.0 : 0;
	if (!json) {
		double off = (double)f->received + (double)f->lost;
		fprintf(out, "receiver %s: received %llu, lost %llu (%.4g%%)%s, jitter %.3f ms (the iperf3 server's own "
			"loss figure: %llu)\n",
			host, (unsigned long long)f->received, (unsigned long long)f->lost,
			off > 0 ? f->lost * 100.0 / off : 0.0, f->exact ? " exact" : " (not exact)", jit,
			(unsigned long long)f->peer_lost);
		if (!f->exact)
			fprintf(out, "receiver %s: not exact: %s\n", host, f->why);
		return;
	}
	struct txs_json j;
	txs_json_begin(&j, out);
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

/* The server's sender, then what we received of it. */
static void rx_write(FILE *out, const char *host, const struct txs_ip3_test *t, const struct txs_ip3_client_out *o,
		     bool json)
{
	const struct txs_ip3_sums *u = &o->u;
	if (json) {
		char *rj = txs_ip3_recv_json(t, u, &o->kd);
		struct txs_json j;
		txs_json_begin(&j, out);
		txs_json_str(&j, "type", "sender");
		txs_json_str(&j, "host", host);
		txs_json_str(&j, "device", "iperf3");
		txs_json_u64(&j, "packets", o->peer_sent);
		txs_json_end(&j);
		if (rj)
			fprintf(out, "%s\n", rj);
		free(rj);
		return;
	}
	fprintf(out, "sender %s: sent %llu datagrams (the iperf3 server's count)\n", host,
		(unsigned long long)o->peer_sent);
	double off = (double)u->received + (double)u->lost;
	fprintf(out, "recv: received %llu, lost %llu (%.4g%%)%s, duplicates %llu, reordered %llu, late %llu, "
		"malformed %llu, jitter %.3f ms\n",
		(unsigned long long)u->received, (unsigned long long)u->lost, off > 0 ? u->lost * 100.0 / off : 0,
		u->exact ? " exact" : " (not exact)", (unsigned long long)u->duplicates, (unsigned long long)u->reordered,
		(unsigned long long)u->late, (unsigned long long)u->malformed,
		u->rx_streams ? u->jitter_sum / u->rx_streams * 1000 : 0.0);
}

TXS_API void txs_ip3_client_write(FILE *out, const char *host, const struct txs_ip3_test *t,
				  const struct txs_ip3_client_out *o, bool json)
{
	const struct txs_ip3_sums *u = &o->u;
	if (u->tx_streams)
		peer_rx_write(out, host, &o->rx, json);
	if (u->rx_streams)
		rx_write(out, host, t, o, json);
	if (u->tx_streams) {
		char *sj = json ? txs_ip3_send_json(t, u) : NULL;
		if (sj)
			fprintf(out, "%s\n", sj);
		else
			fprintf(out, "send: %u stream%s, %.3f s: sent %llu datagrams (%.0f pps), %llu bytes, %llu failed "
				"writes\n",
				u->tx_streams, u->tx_streams == 1 ? "" : "s", t->t_end - t->t_start,
				(unsigned long long)u->sent, t->t_end > t->t_start ? u->sent / (t->t_end - t->t_start) : 0.0,
				(unsigned long long)u->sent_bytes, (unsigned long long)u->send_errors);
		free(sj);
	}
	fflush(out);
}
