/* SPDX-License-Identifier: MIT */
/* The STAMP session-sender's transmit side as an engine generator
 * (struct txs_gen_ops, docs/stamp.md "On the engine"): worker k is session
 * k. Its frames are built from a flow template (Ethernet, IP, UDP) with the
 * session's STAMP test packet as the payload: its own sequence numbers, T1
 * read per datagram as the engine's per-packet stamps allow (stamps_each:
 * one TSC read per datagram, as late as the fill gets), the error estimate,
 * the SSID, the TLVs, the HMAC in authenticated mode. Everything written
 * per packet is the worker's own; once per burst the worker publishes how
 * many packets it numbered (a release store the session's receive thread
 * reads), so the receive side knows which replies can be ours. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <arpa/inet.h>
#include <txscale/engine.h>
#include "stamp_priv.h"

static uint64_t ptp_from_ns(uint64_t ns)
{
	return (ns / 1000000000ull) << 32 | (ns % 1000000000ull);
}

struct sgen {
	struct stamp_gen_sess *s;
	struct txs_tmpl t;
	uint32_t seq;      /* the next packet's */
	uint64_t numbered; /* packets numbered by this worker */
	uint32_t tx_count; /* S_TxC of the Direct Measurement TLV: the session's, head included */
	uint16_t ip_id;

};

static int sgen_init(struct txs_worker *w, void *conf)
{
	struct stamp_gen_conf *c = conf;
	if (w->id >= c->n)
		return -EINVAL;
	struct sgen *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = c->sess[w->id];
	int rc = txs_tmpl_build(&g->t, &g->s->spec);
	if (rc) {
		free(g);
		return rc;
	}
	g->seq = g->s->seq0;
	g->tx_count = 1; /* the first probe, sent before the engine started */
	if (getrandom(&g->ip_id, sizeof(g->ip_id), 0) != sizeof(g->ip_id))
		g->ip_id = (uint16_t)txs_now_mono_ns();
	w->gen = g;
	return 0;
}

static void sgen_fini(struct txs_worker *w)
{
	struct sgen *g = w->gen;
	if (!g)
		return;
	txs_tmpl_free(&g->t);
	free(g);
	w->gen = NULL;
}

static unsigned sgen_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct sgen *g = w->gen;
	struct stamp_gen_sess *s = g->s;
	const struct txs_tmpl *t = &g->t;
	const bool per_packet = w->ts_packet;
	struct txs_stamper st;
	txs_stamper_init(&st, w);
	/* room in the T1 log for this burst (a chunk per 4096 packets) */
	uint64_t j0 = g->numbered;
	for (uint64_t c = j0 >> STAMP_T1_SHIFT; c <= (j0 + n - 1) >> STAMP_T1_SHIFT; c++) {
		if (c >= STAMP_T1_CHUNKS) {
			w->fill_err = -E2BIG;
			return 0;
		}
		if (!s->t1[c] && !(s->t1[c] = malloc(sizeof(uint64_t) << STAMP_T1_SHIFT))) {
			w->fill_err = -ENOMEM;
			return 0;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		uint8_t *f = b[i].data;
		uint8_t *pay = f + t->pay_off;
		memcpy(f, t->frame, t->wire_len);
		memcpy(pay, s->stmpl, s->len);
		if (s->dm_off)
			txs_put_be32(pay + s->dm_off, ++g->tx_count); /* S_TxC: ours, this one included */
		uint64_t t1 = per_packet ? txs_stamper_read(&st) : now_ns;
		uint64_t j = j0 + i;
		s->t1[j >> STAMP_T1_SHIFT][j & ((1u << STAMP_T1_SHIFT) - 1)] = t1;
		struct txs_stamp_pkt p = { .seq = g->seq++, .err = s->err_est, .ssid = s->ssid };
		p.ts = s->ptp ? ptp_from_ns(t1) : txs_stamp_ntp_from_ns(t1);
		txs_stamp_encode_sender(pay, s->len, &p, s->key);
		if (s->tlv_hmac)
			stamp_tlv_hmac_fill(s->key, pay, s->len);
		{ /* the checksums, on every device: udp: reads the first frame's tuple after checking them */
			uint8_t *l4 = f + t->l4_off;
			struct txs_udp_hdr *u = (struct txs_udp_hdr *)(void *)l4;
			size_t ulen = TXS_UDP_HLEN + s->len;
			if (t->family == AF_INET) {
				struct txs_ipv4_hdr *ip = (struct txs_ipv4_hdr *)(void *)(f + t->l3_off);
				ip->id = htons(g->ip_id++);
				ip->check = 0;
				ip->check = txs_ipv4_csum(ip);
				u->check = 0;
				u->check = txs_udp4_csum(ip, l4, ulen);
			} else {
				const struct txs_ipv6_hdr *ip6 = (const struct txs_ipv6_hdr *)(const void *)(f + t->l3_off);
				u->check = 0;
				u->check = txs_udp6_csum(ip6, l4, ulen);
			}
		}
		b[i].len = t->wire_len;
		b[i].l4_off = t->l4_off;
		b[i].link = 0;
		b[i].segs = 1;
		b[i].gso_size = 0;
	}
	g->numbered += n;
	/* once per burst: what the receive side may expect replies to */
	__atomic_store_n(&g->s->pub.numbered, g->numbered, __ATOMIC_RELEASE);
	return n;
}

const struct txs_gen_ops stamp_gen_ops = {
	.init = sgen_init,
	.fill = sgen_fill,
	.fini = sgen_fini,
	.stamps_each = true,
};
