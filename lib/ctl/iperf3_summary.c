/* SPDX-License-Identifier: MIT */
/* An iperf3 test's streams added up, and its summary lines in the names
 * `txscale recv` and `txscale send` use (txscale/iperf3.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/iperf3.h>
#include <txscale/json.h>
#include <txscale/rx.h>

void txs_ip3_add_up(const struct txs_ip3_test *t, struct txs_ip3_sums *u)
{
	memset(u, 0, sizeof(*u));
	u->exact = true;
	u->sock_drops = 0;
	for (unsigned i = 0; i < t->n; i++) {
		const struct txs_ip3_stream *s = &t->s[i];
		if (s->sender) {
			u->tx_streams++;
			u->sent += s->sent;
			u->sent_bytes += s->sent_bytes;
			u->send_errors += s->send_errors;
			continue;
		}
		const struct txs_ip3_rx *r = &s->rx;
		u->rx_streams++;
		u->received += r->received;
		u->bytes += r->bytes;
		u->unique += r->unique;
		u->duplicates += r->duplicates;
		u->reordered += r->reordered;
		u->late += r->late;
		u->malformed += r->malformed;
		u->ip3_errors += r->ip3_errors;
		u->ip3_ooo += r->ip3_outoforder;
		u->jitter_sum += r->jitter;
		if (s->sock_drops > 0)
			u->sock_drops += s->sock_drops;
		uint64_t sent, ex;
		if (txs_ip3_peer_sent(t, s->id, &sent)) {
			u->expected += sent;
			u->lost += txs_ip3_rx_lost(r, sent, &ex);
			u->excess += ex;
		} else {
			u->exact = false;
			u->lost += r->highest > r->unique ? r->highest - r->unique : 0;
		}
	}
}

/* One JSON line built in memory. */
struct line {
	char *buf;
	size_t len;
	FILE *f;
};

/* Opens {"type":"summary","kind":KIND,"device":"iperf3", */
static int line_open(struct line *l, struct txs_json *j, const char *kind)
{
	l->buf = NULL;
	l->len = 0;
	l->f = open_memstream(&l->buf, &l->len);
	if (!l->f)
		return -ENOMEM;
	txs_json_begin(j, l->f);
	txs_json_str(j, "type", "summary");
	txs_json_str(j, "kind", kind);
	txs_json_str(j, "device", "iperf3");
	return 0;
}

/* The line without its newline (malloc'd), or NULL. */
static char *line_close(struct line *l)
{
	fclose(l->f);
	char *nl = l->buf ? strchr(l->buf, '\n') : NULL;
	if (nl)
		*nl = 0;
	return l->buf;
}

char *txs_ip3_recv_json(const struct txs_ip3_test *t, const struct txs_ip3_sums *u, const struct txs_rx_kstats *kd)
{
	struct line l;
	struct txs_json j;
	if (line_open(&l, &j, "recv"))
		return NULL;
	txs_json_str(&j, "client_version", t->p.client_version[0] ? t->p.client_version : "unknown");
	txs_json_dbl(&j, "seconds", t->t_end - t->t_start);
	txs_json_u64(&j, "received", u->received);
	txs_json_u64(&j, "lost", u->lost);
	txs_json_u64(&j, "duplicates", u->duplicates);
	txs_json_u64(&j, "reordered", u->reordered);
	txs_json_u64(&j, "malformed", u->malformed);
	txs_json_u64(&j, "late", u->late);
	txs_json_u64(&j, "unique", u->unique);
	txs_json_u64(&j, "bytes", u->bytes);
	txs_json_bool(&j, "lost_exact", u->exact);
	if (u->exact)
		txs_json_u64(&j, "expected", u->expected);
	else
		txs_json_key(&j, "expected"), fputs("null", l.f);
	txs_json_u64(&j, "excess", u->excess);
	txs_json_u64(&j, "handshakes_refused", t->ignored);
	txs_json_dbl(&j, "jitter_ms", u->rx_streams ? u->jitter_sum / u->rx_streams * 1000.0 : 0);
	txs_json_obj_open(&j, "iperf3");
	txs_json_i64(&j, "lost", u->ip3_errors);
	txs_json_u64(&j, "out_of_order", u->ip3_ooo);
	txs_json_obj_close(&j);
	txs_json_arr_open(&j, "flows");
	for (unsigned i = 0; i < t->n; i++) {
		const struct txs_ip3_stream *s = &t->s[i];
		if (s->sender)
			continue;
		uint64_t sent, ex = 0;
		bool known = txs_ip3_peer_sent(t, s->id, &sent);
		txs_json_obj_open(&j, NULL);
		txs_json_u64(&j, "id", s->id);
		txs_json_u64(&j, "received", s->rx.received);
		txs_json_u64(&j, "unique", s->rx.unique);
		txs_json_u64(&j, "lost", known ? txs_ip3_rx_lost(&s->rx, sent, &ex)
					       : (s->rx.highest > s->rx.unique ? s->rx.highest - s->rx.unique : 0));
		txs_json_bool(&j, "lost_exact", known);
		txs_json_u64(&j, "duplicates", s->rx.duplicates);
		txs_json_u64(&j, "reordered", s->rx.reordered);
		txs_json_u64(&j, "late", s->rx.late);
		txs_json_u64(&j, "malformed", s->rx.malformed);
		txs_json_u64(&j, "bytes", s->rx.bytes);
		txs_json_dbl(&j, "jitter_ms", s->rx.jitter * 1000.0);
		txs_json_i64(&j, "iperf3_lost", s->rx.ip3_errors);
		txs_json_i64(&j, "socket_drops", s->sock_drops);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_rx_kstats_json(&j, "kernel_drops", kd, NULL, 0, u->sock_drops);
	txs_json_end(&j);
	return line_close(&l);
}

char *txs_ip3_send_json(const struct txs_ip3_test *t, const struct txs_ip3_sums *u)
{
	struct line l;
	struct txs_json j;
	if (line_open(&l, &j, "send"))
		return NULL;
	double secs = t->t_end - t->t_start;
	txs_json_dbl(&j, "seconds", secs);
	txs_json_u64(&j, "packets", u->sent);
	txs_json_u64(&j, "bytes", u->sent_bytes);
	txs_json_dbl(&j, "pps", secs > 0 ? u->sent / secs : 0);
	txs_json_u64(&j, "drops", 0);
	txs_json_u64(&j, "errors", u->send_errors);
	/* -b resolved, as the native send's summary gives it: the whole run's (iperf3 paces each stream at -b) */
	double bw = (double)t->p.bandwidth * u->tx_streams;
	txs_json_obj_open(&j, "rate");
	txs_json_dbl(&j, "datagrams_per_s", t->p.len ? bw / (8.0 * t->p.len) : 0);
	txs_json_dbl(&j, "payload_bits_per_s", bw);
	txs_json_u64(&j, "threads", u->tx_streams);
	txs_json_obj_close(&j);
	txs_json_arr_open(&j, "threads");
	for (unsigned i = 0; i < t->n; i++)
		if (t->s[i].sender) {
			txs_json_obj_open(&j, NULL);
			txs_json_u64(&j, "id", t->s[i].id);
			txs_json_u64(&j, "packets", t->s[i].sent);
			txs_json_obj_close(&j);
		}
	txs_json_arr_close(&j);
	txs_json_end(&j);
	return line_close(&l);
}

