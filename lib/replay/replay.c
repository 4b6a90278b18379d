/* SPDX-License-Identifier: MIT */
/* pcap replay: load a capture (classic pcap or pcapng, through the pcap
 * reader of lib/pkt), send its frames as they are
 * through a frame device, or the UDP payloads of its datagrams through the
 * udp device (include/txscale/replay.h, docs/replay.md). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/pkt.h>
#include <txscale/replay.h>
#include "common/alloc.h"

struct txs_replay {
	uint8_t *data;      /* the frames, back to back */
	size_t size;
	uint64_t n;
	uint64_t *off;      /* frame i at data + off[i] */
	uint32_t *len;
	uint64_t *ts_ns;    /* capture time, ns (as in the file) */
	uint64_t *table;    /* txs_replay_schedule's due times */
	uint32_t max_len;
	uint64_t max_idx;
	/* txs_replay_udp: the datagrams (frames that hold a whole UDP datagram of
	 * the destination's family), in file order; n_dg = 0: frame replay */
	uint64_t n_dg;
	uint64_t *dg_frame; /* datagram j is frame dg_frame[j] */
	uint32_t *dg_off;   /* its UDP payload at data + off[frame] + dg_off[j] */
	uint32_t *dg_len;   /* payload bytes */
	struct txs_tmpl hdr; /* Ethernet + IP + UDP headers of the spec, payload 0 */
	uint32_t max_dg_frame; /* the longest frame the fill builds (runts padded) */
};

#define LINKTYPE_ETHERNET 1u

/* Grow the frame index and the frame bytes to hold one more frame of len
 * bytes. */
static int reserve(struct txs_replay *r, uint64_t *cap, size_t *dcap, uint32_t len)
{
	if (r->n == *cap) {
		uint64_t nc = *cap ? *cap * 2 : 1024;
		uint64_t *off = realloc(r->off, nc * sizeof(*off));
		if (off)
			r->off = off;
		uint32_t *ln = realloc(r->len, nc * sizeof(*ln));
		if (ln)
			r->len = ln;
		uint64_t *ts = realloc(r->ts_ns, nc * sizeof(*ts));
		if (ts)
			r->ts_ns = ts;
		if (!off || !ln || !ts)
			return -ENOMEM;
		*cap = nc;
	}
	if (r->size + len > *dcap) {
		size_t nd = *dcap ? *dcap : 1 << 16;
		while (nd < r->size + len)
			nd *= 2;
		uint8_t *d = realloc(r->data, nd);
		if (!d)
			return -ENOMEM;
		r->data = d;
		*dcap = nd;
	}
	return 0;
}

TXS_API int txs_replay_load(struct txs_replay **out, const char *path, char *err, size_t errlen)
{
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	*out = NULL;
	struct txs_replay *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	struct txs_pcap p;
	int rc = txs_pcap_open_file(&p, path);
	if (rc < 0) {
		snprintf(err, errlen, "'%s': %s", path, p.err[0] ? p.err : strerror(-rc));
		free(r);
		return rc;
	}
	if (p.linktype != LINKTYPE_ETHERNET) {
		snprintf(err, errlen, "'%s': link type %u: replay sends Ethernet frames (link type 1) only", path,
			 p.linktype);
		rc = -ENOTSUP;
		goto fail;
	}
	uint64_t cap = 0;
	size_t dcap = 0;
	struct txs_pcap_rec rec;
	for (;;) {
		int got = txs_pcap_next(&p, &rec);
		/* the reader skips a record it cannot trust and stops at a cut one:
		 * replay sends every frame of the file or none */
		if (p.n.bad_len || p.n.truncated) {
			snprintf(err, errlen, "'%s': frame %llu: %s", path, (unsigned long long)r->n,
				 p.n.truncated ? "the file ends inside it" : "its record length is corrupt");
			rc = -EINVAL;
			goto fail;
		}
		if (got != 1)
			break;
		if (rec.caplen < rec.origlen) {
			snprintf(err, errlen, "'%s': frame %llu: the capture kept %u of its %u bytes (snaplen): "
				 "only whole frames can be replayed", path, (unsigned long long)r->n, rec.caplen,
				 rec.origlen);
			rc = -EINVAL;
			goto fail;
		}
		if (rec.caplen < 14) {
			snprintf(err, errlen, "'%s': frame %llu: %u bytes, shorter than an Ethernet header", path,
				 (unsigned long long)r->n, rec.caplen);
			rc = -EINVAL;
			goto fail;
		}
		if ((rc = reserve(r, &cap, &dcap, rec.caplen)) < 0) {
			snprintf(err, errlen, "'%s': out of memory", path);
			goto fail;
		}
		memcpy(r->data + r->size, rec.data, rec.caplen);
		r->off[r->n] = r->size;
		r->len[r->n] = rec.caplen;
		r->ts_ns[r->n] = rec.ts_ns;
		if (rec.caplen > r->max_len) {
			r->max_len = rec.caplen;
			r->max_idx = r->n;
		}
		r->size += rec.caplen;
		r->n++;
	}
	if (!r->n) {
		snprintf(err, errlen, "'%s': no frames", path);
		rc = -ENODATA;
		goto fail;
	}
	txs_pcap_close(&p);
	*out = r;
	return 0;
fail:
	txs_pcap_close(&p);
	txs_replay_free(r);
	return rc;
}

TXS_API void txs_replay_free(struct txs_replay *r)
{
	if (!r)
		return;
	free(r->data);
	free(r->off);
	free(r->len);
	free(r->ts_ns);
	free(r->table);
	free(r->dg_frame);
	free(r->dg_off);
	free(r->dg_len);
	txs_tmpl_free(&r->hdr);
	free(r);
}

TXS_API uint64_t txs_replay_frames(const struct txs_replay *r)
{
	return r->n;
}

TXS_API uint32_t txs_replay_max_len(const struct txs_replay *r, uint64_t *index)
{
	if (index)
		*index = r->max_idx;
	return r->max_len;
}

TXS_API const uint8_t *txs_replay_frame(const struct txs_replay *r, uint64_t i, uint32_t *len)
{
	if (i >= r->n)
		return NULL;
	*len = r->len[i];
	return r->data + r->off[i];
}

/* ---- datagrams, for the udp device ------------------------------------------ */

static const char *const skip_names[TXS_REPLAY_SKIP_N] = {
	[TXS_REPLAY_NOT_IP] = "not_ip",     [TXS_REPLAY_NOT_UDP] = "not_udp",
	[TXS_REPLAY_FRAGMENT] = "fragment", [TXS_REPLAY_FAMILY] = "other_family",
	[TXS_REPLAY_MALFORMED] = "malformed",
};

TXS_API const char *txs_replay_skip_name(unsigned reason)
{
	return reason < TXS_REPLAY_SKIP_N ? skip_names[reason] : "?";
}

/* Is frame f (len bytes) one whole UDP datagram? Returns TXS_REPLAY_SKIP_N
 * (yes: *family, its UDP payload at f + *off, *plen bytes) or the reason it
 * is not. Checksums are not looked at: the kernel builds new ones, and a
 * capture taken where the NIC computes them holds garbage there. */
static unsigned classify(const uint8_t *f, uint32_t len, int *family, uint32_t *off, uint32_t *plen)
{
	uint32_t o = 12;
	uint16_t type = txs_get_be16(f + o); /* len >= 14: checked at load */
	for (unsigned t = 0; (type == TXS_ETHERTYPE_8021Q || type == TXS_ETHERTYPE_8021AD) && t < TXS_VLAN_MAX_TAGS;
	     t++) {
		if (len < o + 4 + 2)
			return TXS_REPLAY_MALFORMED;
		o += 4;
		type = txs_get_be16(f + o);
	}
	o += 2; /* the IP header */
	uint32_t l4, l4_end; /* the UDP header; the end of the IP datagram */
	if (type == TXS_ETHERTYPE_IPV4) {
		if (len < o + TXS_IPV4_HLEN || f[o] >> 4 != 4)
			return TXS_REPLAY_MALFORMED;
		uint32_t ihl = (f[o] & 15u) * 4, tot = txs_get_be16(f + o + 2);
		if (ihl < TXS_IPV4_HLEN || tot < ihl || o + tot > len)
			return TXS_REPLAY_MALFORMED;
		if (txs_get_be16(f + o + 6) & 0x3fffu) /* MF or an offset */
			return TXS_REPLAY_FRAGMENT;
		if (f[o + 9] != TXS_IPPROTO_UDP)
			return TXS_REPLAY_NOT_UDP;
		*family = AF_INET;
		l4 = o + ihl;
		l4_end = o + tot;
	} else if (type == TXS_ETHERTYPE_IPV6) {
		if (len < o + TXS_IPV6_HLEN || f[o] >> 4 != 6)
			return TXS_REPLAY_MALFORMED;
		l4_end = o + TXS_IPV6_HLEN + txs_get_be16(f + o + 4);
		if (l4_end > len)
			return TXS_REPLAY_MALFORMED;
		uint8_t nh = f[o + 6];
		l4 = o + TXS_IPV6_HLEN;
		/* hop-by-hop, routing and destination options before UDP; a
		 * fragment header makes it a fragment; anything else is not UDP */
		for (unsigned k = 0; nh == 0 || nh == 43 || nh == 60; k++) {
			if (k == 8 || l4 + 8 > l4_end)
				return TXS_REPLAY_MALFORMED;
			uint32_t el = (f[l4 + 1] + 1u) * 8;
			nh = f[l4];
			l4 += el;
		}
		if (nh == TXS_IPPROTO_FRAGMENT)
			return TXS_REPLAY_FRAGMENT;
		if (nh != TXS_IPPROTO_UDP)
			return TXS_REPLAY_NOT_UDP;
		*family = AF_INET6;
	} else {
		return TXS_REPLAY_NOT_IP;
	}
	if (l4 + TXS_UDP_HLEN > l4_end)
		return TXS_REPLAY_MALFORMED;
	uint32_t ulen = txs_get_be16(f + l4 + 4);
	if (ulen < TXS_UDP_HLEN || l4 + ulen > l4_end) /* bytes after it inside the IP datagram: allowed */
		return TXS_REPLAY_MALFORMED;
	*off = l4 + TXS_UDP_HLEN;
	*plen = ulen - TXS_UDP_HLEN;
	return TXS_REPLAY_SKIP_N;
}

TXS_API int txs_replay_udp(struct txs_replay *r, const struct txs_flow_spec *spec, struct txs_replay_udp_info *info)
{
	memset(info, 0, sizeof(*info));
	struct txs_flow_spec h = *spec;
	h.payload_len = 0;
	h.n_vlan = 0; /* the kernel builds the frames: tags are the interface's */
	struct txs_tmpl t;
	int rc = txs_tmpl_build(&t, &h);
	if (rc < 0)
		return rc;
	uint64_t *fr = malloc(r->n * sizeof(*fr));
	uint32_t *off = malloc(r->n * sizeof(*off)), *len = malloc(r->n * sizeof(*len));
	uint64_t n = 0;
	rc = -ENOMEM;
	if (!fr || !off || !len)
		goto fail;
	uint32_t maxf = 0;
	for (uint64_t i = 0; i < r->n; i++) {
		int fam = 0;
		uint32_t o = 0, pl = 0;
		unsigned why = classify(r->data + r->off[i], r->len[i], &fam, &o, &pl);
		if (why == TXS_REPLAY_SKIP_N && fam != spec->dst.family)
			why = TXS_REPLAY_FAMILY;
		if (why != TXS_REPLAY_SKIP_N) {
			if (!info->skipped[why]++)
				info->first_skipped[why] = i;
			info->skipped_total++;
			continue;
		}
		fr[n] = i;
		off[n] = o;
		len[n] = pl;
		if (!n || pl > info->max_payload) {
			info->max_payload = pl;
			info->max_index = i;
		}
		uint32_t fl = t.pay_off + pl;
		if (fl < TXS_ETH_MIN_FRAME)
			fl = TXS_ETH_MIN_FRAME;
		if (fl > maxf)
			maxf = fl;
		info->payload_bytes += pl;
		n++;
	}
	info->datagrams = n;
	rc = -ENODATA;
	if (!n)
		goto fail;
	/* the new table in place of the last one */
	free(r->dg_frame);
	r->dg_frame = fr;
	free(r->dg_off);
	r->dg_off = off;
	free(r->dg_len);
	r->dg_len = len;
	txs_tmpl_free(&r->hdr);
	r->hdr = t;
	r->n_dg = n;
	r->max_dg_frame = maxf;
	return 0;
fail:
	free(fr);
	free(off);
	free(len);
	txs_tmpl_free(&t);
	return rc;
}

TXS_API uint64_t txs_replay_datagrams(const struct txs_replay *r)
{
	return r->n_dg;
}

TXS_API const uint8_t *txs_replay_datagram(const struct txs_replay *r, uint64_t j, uint32_t *len, uint64_t *frame)
{
	if (j >= r->n_dg)
		return NULL;
	*len = r->dg_len[j];
	if (frame)
		*frame = r->dg_frame[j];
	return r->data + r->off[r->dg_frame[j]] + r->dg_off[j];
}

TXS_API uint32_t txs_replay_udp_frame_max(const struct txs_replay *r)
{
	return r->max_dg_frame;
}

TXS_API int txs_replay_schedule(struct txs_replay *r, double speed, struct txs_pace_conf *out)
{
	if (!(speed > 0) || speed > 1e12)
		return -EINVAL;
	if (!r->table && !(r->table = malloc(r->n * sizeof(*r->table))))
		return -ENOMEM;
	uint64_t t0 = r->ts_ns[0], prev = 0;
	for (uint64_t i = 0; i < r->n; i++) {
		uint64_t rel = r->ts_ns[i] > t0 ? r->ts_ns[i] - t0 : 0;
		double v = (double)rel / speed;
		uint64_t t = v < 1.8e19 ? (uint64_t)v : UINT64_MAX / 2;
		if (t < prev)
			t = prev; /* out of order in the file: sent in file order, at once */
		r->table[i] = prev = t;
	}
	uint64_t span = r->table[r->n - 1], tn = r->n;
	if (r->n_dg) {
		/* the datagrams keep their times in the file; the skipped frames'
		 * slots stay silent, and the file's period is the loop's */
		for (uint64_t j = 0; j < r->n_dg; j++)
			r->table[j] = r->table[r->dg_frame[j]]; /* dg_frame[j] >= j: in place */
		tn = r->n_dg;
	}
	*out = (struct txs_pace_conf){ .kind = TXS_PACE_TABLE, .table_ns = r->table, .table_n = tn,
				       .table_period_ns = r->n > 1 ? span + span / (r->n - 1) : 0 };
	return 0;
}

/* ---- the generator ---------------------------------------------------------- */
struct replay_state {
	const struct txs_replay *r;
	uint64_t next; /* frame (datagram, through udp:) index to send next */
} TXS_CACHE_ALIGNED;

/* A filled buffer: one frame of len bytes on link 0, no GSO. */
static inline void frame_set(struct txs_pktbuf *b, uint32_t len, uint16_t l4_off)
{
	b->len = len;
	b->l4_off = l4_off;
	b->gso_size = 0;
	b->segs = 1;
	b->link = 0;
}

static int replay_init(struct txs_worker *w, void *conf)
{
	const struct txs_replay *r = conf;
	const struct txs_netdev *dev = w->txq->dev;
	if (!r)
		return -EINVAL;
	if (dev->kernel_ip != (r->n_dg != 0))
		return -EPROTOTYPE; /* udp: takes datagrams (txs_replay_udp), frame devices frames */
	if (!r->n_dg && dev->mtu && r->max_len > dev->mtu + 14)
		return -EMSGSIZE; /* through udp: the kernel fragments, as for generated datagrams */
	struct replay_state *s = txs_zalloc_line(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->r = r;
	w->gen = s;
	return 0;
}

static unsigned replay_fill_udp(struct txs_worker *w, struct txs_pktbuf *b, unsigned n);

static unsigned replay_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	(void)now_ns;
	struct replay_state *s = w->gen;
	const struct txs_replay *r = s->r;
	if (r->n_dg)
		return replay_fill_udp(w, b, n);
	uint64_t i = s->next;
	unsigned k = 0;
	for (; k < n; k++) {
		uint32_t len = r->len[i];
		if (TXS_UNLIKELY(len > b[k].cap)) {
			w->fill_err = -EMSGSIZE; /* the device's buffers are smaller than this frame */
			break;
		}
		memcpy(b[k].data, r->data + r->off[i], len);
		frame_set(&b[k], len, 0);
		if (++i == r->n)
			i = 0;
	}
	s->next = i;
	return k;
}

/* Through udp: each datagram's payload behind the spec's headers, lengths
 * and checksums set (the device sets its socket up from the first frame and
 * reads the payload of the others by their UDP length). */
static unsigned replay_fill_udp(struct txs_worker *w, struct txs_pktbuf *b, unsigned n)
{
	struct replay_state *s = w->gen;
	const struct txs_replay *r = s->r;
	const struct txs_tmpl *h = &r->hdr;
	bool v4 = h->family == AF_INET;
	uint64_t j = s->next;
	unsigned k = 0;
	for (; k < n; k++) {
		uint32_t plen = r->dg_len[j], flen = h->pay_off + plen;
		uint32_t wire = flen < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : flen;
		if (TXS_UNLIKELY(wire > b[k].cap)) {
			w->fill_err = -EMSGSIZE;
			break;
		}
		uint8_t *f = b[k].data, *udp = f + h->l4_off;
		memcpy(f, h->frame, h->pay_off);
		memcpy(f + h->pay_off, r->data + r->off[r->dg_frame[j]] + r->dg_off[j], plen);
		if (wire > flen)
			memset(f + flen, 0, wire - flen);
		uint16_t ulen = (uint16_t)(TXS_UDP_HLEN + plen), c = 0;
		txs_put_be16(udp + 4, ulen);
		memset(udp + 6, 0, 2); /* summed as zero */
		if (v4) {
			struct txs_ipv4_hdr *ip = (struct txs_ipv4_hdr *)(f + h->l3_off);
			ip->tot_len = htons((uint16_t)(TXS_IPV4_HLEN + ulen));
			ip->check = 0;
			ip->check = txs_ipv4_csum(ip);
			if (h->udp_csum)
				c = txs_udp4_csum(ip, udp, ulen);
		} else {
			struct txs_ipv6_hdr *ip6 = (struct txs_ipv6_hdr *)(f + h->l3_off);
			ip6->payload_len = htons(ulen);
			c = txs_udp6_csum(ip6, udp, ulen);
		}
		memcpy(udp + 6, &c, 2);
		frame_set(&b[k], wire, h->l4_off);
		if (++j == r->n_dg)
			j = 0;
	}
	s->next = j;
	return k;
}

static void replay_fini(struct txs_worker *w)
{
	free(w->gen);
	w->gen = NULL;
}

static const struct txs_gen_ops replay_gen_ops = {
	.init = replay_init,
	.fill = replay_fill,
	.fini = replay_fini,
};

TXS_API const struct txs_gen_ops *txs_replay_gen(void)
{
	return &replay_gen_ops;
}
