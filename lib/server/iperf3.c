/* SPDX-License-Identifier: MIT */
/* A stock iperf3 client's test in a session (docs/iperf3.md). The protocol
 * runs in lib/ctl (txs_ip3_serve); this file writes the receiver's report
 * (exact loss from the client's own count of what it sent, reordering
 * apart from loss, the kernel's drops beside) to the log, to the summary
 * hook, and back to the client with --get-server-output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/iperf3.h>
#include <txscale/rx.h>
#include "server_priv.h"

/* The test's counters in the names recv and send use (docs/metrics.md),
 * for the server's per-session collector. */
static void metrics_file(const char *path, const struct txs_ip3_test *t, const struct txs_ip3_sums *u)
{
	struct txs_prom *p;
	if (txs_prom_create(&p) < 0)
		return;
	double secs = t->t_end - t->t_start;
	static const struct { const char *name; enum txs_prom_type t; } f[] = {
		{ "txscale_recv_datagrams_total", TXS_PROM_COUNTER }, { "txscale_recv_bytes_total", TXS_PROM_COUNTER },
		{ "txscale_recv_unique_total", TXS_PROM_COUNTER },    { "txscale_recv_duplicates_total", TXS_PROM_COUNTER },
		{ "txscale_recv_reordered_total", TXS_PROM_COUNTER }, { "txscale_recv_late_total", TXS_PROM_COUNTER },
		{ "txscale_recv_malformed_total", TXS_PROM_COUNTER }, { "txscale_recv_lost", TXS_PROM_GAUGE },
		{ "txscale_recv_expected", TXS_PROM_GAUGE },          { "txscale_send_datagrams_total", TXS_PROM_COUNTER },
		{ "txscale_send_bytes_total", TXS_PROM_COUNTER },     { "txscale_run_seconds", TXS_PROM_GAUGE },
	};
	for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		txs_prom_family(p, f[i].name, f[i].t, "an iperf3 test's (docs/metrics.md)");
	const struct txs_prom_label kr = { "kind", "recv" }, ks = { "kind", "send" };
	if (u->rx_streams) {
		txs_prom_u64(p, "txscale_recv_datagrams_total", NULL, 0, u->received);
		txs_prom_u64(p, "txscale_recv_bytes_total", NULL, 0, u->bytes);
		txs_prom_u64(p, "txscale_recv_unique_total", NULL, 0, u->unique);
		txs_prom_u64(p, "txscale_recv_duplicates_total", NULL, 0, u->duplicates);
		txs_prom_u64(p, "txscale_recv_reordered_total", NULL, 0, u->reordered);
		txs_prom_u64(p, "txscale_recv_late_total", NULL, 0, u->late);
		txs_prom_u64(p, "txscale_recv_malformed_total", NULL, 0, u->malformed);
		txs_prom_u64(p, "txscale_recv_lost", NULL, 0, u->lost);
		if (u->exact)
			txs_prom_u64(p, "txscale_recv_expected", NULL, 0, u->expected);
		txs_prom_dbl(p, "txscale_run_seconds", &kr, 1, secs);
	}
	if (u->tx_streams) {
		txs_prom_u64(p, "txscale_send_datagrams_total", NULL, 0, u->sent);
		txs_prom_u64(p, "txscale_send_bytes_total", NULL, 0, u->sent_bytes);
		txs_prom_dbl(p, "txscale_run_seconds", &ks, 1, secs);
	}
	char *text;
	size_t n;
	if (txs_prom_text(p, &text, &n) == 0) {
		txs_write_atomic(path, text);
		free(text);
	}
	txs_prom_destroy(p);
}

/* The report's lines, each after pre (malloc). */
static char *report(const char *pre, const struct txs_ip3_test *t, const struct txs_ip3_sums *u,
		    const struct txs_rx_kstats *kd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (u->rx_streams) {
		double off = (double)u->received + (double)u->lost;
		fprintf(f,
			"%sreceiver: %u stream%s, %.3f s: received %llu, lost %llu (%.4g%%)%s, duplicates %llu, reordered "
			"%llu, late %llu, malformed %llu, jitter %.3f ms\n",
			pre, u->rx_streams, u->rx_streams == 1 ? "" : "s", t->t_end - t->t_start,
			(unsigned long long)u->received, (unsigned long long)u->lost, off > 0 ? u->lost * 100.0 / off : 0.0,
			u->exact ? " exact" : " (not exact: the client did not say what it sent)",
			(unsigned long long)u->duplicates, (unsigned long long)u->reordered, (unsigned long long)u->late,
			(unsigned long long)u->malformed, u->jitter_sum / u->rx_streams * 1000.0);
		fprintf(f, "%sreceiver: iperf3 would say lost %lld, out of order %llu\n", pre, (long long)u->ip3_errors,
			(unsigned long long)u->ip3_ooo);
		fprintf(f, "%s", pre);
		txs_rx_kstats_text(f, kd, NULL, 0, u->sock_drops);
	}
	if (u->tx_streams)
		fprintf(f, "%ssender: %u stream%s, %.3f s: sent %llu datagrams, %llu bytes, %llu failed writes\n", pre,
			u->tx_streams, u->tx_streams == 1 ? "" : "s", t->t_end - t->t_start, (unsigned long long)u->sent,
			(unsigned long long)u->sent_bytes, (unsigned long long)u->send_errors);
	fclose(f);
	return buf;
}

/* The log's lines and the summaries; the text the client may ask for (malloc). */
static char *tell(struct txs_srv_sess *s, const struct txs_ip3_test *t, const struct txs_ip3_sums *u,
		  const struct txs_rx_kstats *kd)
{
	txs_srv_slog(s, "iperf3 %s client: -l %u, -P %u%s%s%s, %s",
		     t->p.client_version[0] ? t->p.client_version : "(unknown version)", t->p.len, t->p.parallel,
		     t->p.reverse ? ", -R" : "", t->p.bidirectional ? ", --bidir" : "",
		     t->p.udp_counters_64bit ? ", 64-bit counters" : "", t->p.bandwidth ? "paced" : "-b 0");
	char *lines = report("", t, u, kd);
	for (char *save = NULL, *l = lines ? strtok_r(lines, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
		txs_srv_slog(s, "%s", l);
	free(lines);
	const struct txs_server_hooks *h = &s->sv->h;
	struct txs_server_summary m = { .session = s->id, .client = s->client_s, .iperf3 = true };
	for (int side = 0; side < 2 && h->summary; side++) {
		if (!(side ? u->tx_streams : u->rx_streams))
			continue;
		char *j = side ? txs_ip3_send_json(t, u) : txs_ip3_recv_json(t, u, kd);
		m.role = side ? "sender" : "receiver";
		m.json = j;
		if (j)
			h->summary(h->user, &m);
		free(j);
	}
	char pre[TXS_SRV_WHO_LEN + 48];
	snprintf(pre, sizeof(pre), "txscale server: session %u (%s): ", s->id, s->client_s);
	return report(pre, t, u, kd);
}

int txs_srv_iperf3(struct txs_srv_sess *s)
{
	const struct txs_server_conf *c = &s->sv->c;
	int tmo = c->ctl_timeout > 2e6 ? 2000000000 : (int)(c->ctl_timeout * 1000);
	struct txs_ip3_srv_conf sc = { .local = &s->local_sa, .peer = &s->client_sa, .max_time = (unsigned)c->max_time,
				       .ctl_timeout_ms = tmo, .refuse_auth = s->key != NULL, .max_rate = c->max_rate,
				       .max_rate_bits = c->max_rate_bits,
				       .stream_lock = s->stream_lock >= 0 ? &s->stream_lock : NULL };
	struct txs_ip3_test t;
	struct txs_rx_kstats k0, k1, kd;
	txs_rx_kstats_read(&k0, NULL);
	int ip3_err = 0;
	char err[320] = "";
	int rc = txs_ip3_serve(s->fd, &sc, &t, &ip3_err, err, sizeof(err));
	txs_rx_kstats_read(&k1, NULL);
	txs_rx_kstats_delta(&kd, &k0, &k1);
	if (rc < 0) {
		if (rc == -EPERM)
			txs_srv_slog(s, "iperf3 client %s: refused (iperf3 error %d): %s",
				     t.p.client_version[0] ? t.p.client_version : "", ip3_err, err);
		else
			txs_srv_slog(s, "iperf3 client: error: %s", err[0] ? err : strerror(-rc));
		txs_ip3_test_free(&t);
		return 1;
	}
	struct txs_ip3_sums u;
	txs_ip3_add_up(&t, &u);
	char mf[400];
	txs_srv_metrics_path(&s->sv->sm, s->id, "iperf3", mf, sizeof(mf));
	if (mf[0])
		metrics_file(mf, &t, &u);
	char *text = tell(s, &t, &u, &kd);
	rc = txs_ip3_serve_finish(s->fd, &t, text, tmo, err, sizeof(err));
	free(text);
	txs_ip3_test_free(&t);
	if (rc < 0) {
		txs_srv_slog(s, "iperf3 client: error: %s", err);
		return 1;
	}
	return 0;
}
