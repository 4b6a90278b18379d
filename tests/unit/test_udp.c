/* SPDX-License-Identifier: MIT */
/* lib/udp: the sendmsg permutation matrix read back by our parser (fragments
 * reassembled here), the kernel's error answers, corking rules, IP IDs,
 * batching against a capturing device, and the engine adapter. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <txscale/txscale.h>
#include <txscale/gen.h>
#include <txscale/udp.h>
#include "test_engine.h"
#include "test_util.h"
#include "netdev/netdev_priv.h"
#include "udp_matrix.h"

/* ---- capture --------------------------------------------------------------- */

struct frame {
	uint8_t *d;
	uint32_t len;
};

struct cap {
	struct frame *f;
	unsigned n, cap;
};

static void cap_sink(void *arg, const uint8_t *frame, uint32_t len)
{
	struct cap *c = arg;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->f = realloc(c->f, c->cap * sizeof(*c->f));
		assert_non_null(c->f);
	}
	c->f[c->n].d = malloc(len);
	assert_non_null(c->f[c->n].d);
	memcpy(c->f[c->n].d, frame, len);
	c->f[c->n].len = len;
	c->n++;
}

static void cap_clear(struct cap *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->f[i].d);
	c->n = 0;
}

static void cap_free(struct cap *c)
{
	cap_clear(c);
	free(c->f);
	c->f = NULL;
	c->cap = 0;
}

/* ---- reassembly: frames -> datagrams ---------------------------------------- */

struct dgram {
	struct txs_pkt_info info; /* of the (reassembled) datagram */
	uint8_t *buf;             /* owns the bytes info points into */
	unsigned frames;
	bool fragmented;
	uint32_t frag_id;         /* IPv4 ID or IPv6 identification */
};

#define MAX_DG 128

/* Returns the number of datagrams or -1 with why[] filled. */
static int reassemble(const struct cap *c, struct dgram *out, char *why, size_t wl)
{
	int nd = 0;
	unsigned i = 0;
	while (i < c->n) {
		const struct frame *f = &c->f[i];
		if (f->len < TXS_ETH_MIN_FRAME || f->len > TXS_ETH_HLEN + MX_MTU) {
			snprintf(why, wl, "frame %u: length %u outside 60..1514", i, f->len);
			return -1;
		}
		if (nd == MAX_DG) {
			snprintf(why, wl, "too many datagrams");
			return -1;
		}
		struct dgram *d = &out[nd];
		memset(d, 0, sizeof(*d));
		struct txs_pkt_info pi;
		enum txs_perr e = txs_parse(f->d, f->len, TXS_L2_ETH, &pi);
		if (e == TXS_PERR_OK) {
			/* runts: the padding after the IP datagram is zero */
			for (uint32_t b = TXS_ETH_HLEN + pi.ip_len; b < f->len; b++)
				if (f->d[b]) {
					snprintf(why, wl, "frame %u: non-zero padding", i);
					return -1;
				}
			d->buf = malloc(f->len);
			memcpy(d->buf, f->d, f->len);
			txs_parse(d->buf, f->len, TXS_L2_ETH, &d->info);
			d->frames = 1;
			nd++;
			i++;
			continue;
		}
		if (e != TXS_PERR_FRAGMENT) {
			snprintf(why, wl, "frame %u: parse error %s", i, txs_perr_str(e));
			return -1;
		}
		/* a fragment train: must start at offset 0 and run to M=0 in order */
		bool v4 = pi.family == AF_INET;
		uint32_t id = v4 ? pi.ip_id : pi.frag_id;
		uint8_t *dg = malloc(70000);
		uint32_t got = 0;
		const uint8_t *first = f->d;
		uint32_t hl = v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN;
		for (;;) {
			if (i >= c->n) {
				snprintf(why, wl, "fragment train cut short");
				free(dg);
				return -1;
			}
			const struct frame *g = &c->f[i];
			struct txs_pkt_info q;
			if (txs_parse(g->d, g->len, TXS_L2_ETH, &q) != TXS_PERR_FRAGMENT || q.family != pi.family ||
			    (v4 ? q.ip_id : q.frag_id) != id || q.frag_offset != got || q.tos != pi.tos ||
			    q.ttl != pi.ttl || (v4 && q.df) || (!v4 && !q.has_frag_hdr)) {
				snprintf(why, wl, "frame %u: bad fragment (offset %u, expected %u)", i, q.frag_offset, got);
				free(dg);
				return -1;
			}
			uint32_t dl = q.ip_len - hl - (v4 ? 0 : TXS_IPV6_FRAG_HLEN);
			if (q.mf && (dl % 8 || TXS_ETH_HLEN + q.ip_len > TXS_ETH_HLEN + MX_MTU)) {
				snprintf(why, wl, "frame %u: non-final fragment of %u bytes", i, dl);
				free(dg);
				return -1;
			}
			memcpy(dg + got, g->d + q.l4_off, dl);
			got += dl;
			d->frames++;
			i++;
			if (!q.mf)
				break;
		}
		if (d->frames < 2) {
			snprintf(why, wl, "frame %u: a datagram in one fragment", i - 1);
			free(dg);
			return -1;
		}
		/* rebuild the unfragmented datagram and let the parser check it */
		d->buf = malloc(hl + got);
		memcpy(d->buf, first + TXS_ETH_HLEN, hl);
		memcpy(d->buf + hl, dg, got);
		free(dg);
		if (v4) {
			txs_put_be16(d->buf + 2, (uint16_t)(hl + got));
			txs_put_be16(d->buf + 6, 0);
			d->buf[10] = d->buf[11] = 0;
			uint16_t ck = txs_ipv4_csum((struct txs_ipv4_hdr *)d->buf);
			memcpy(d->buf + 10, &ck, 2);
		} else {
			d->buf[6] = TXS_IPPROTO_UDP;
			txs_put_be16(d->buf + 4, (uint16_t)got);
		}
		e = txs_parse(d->buf, hl + got, TXS_L2_NONE, &d->info);
		if (e != TXS_PERR_OK) {
			snprintf(why, wl, "reassembled datagram: %s", txs_perr_str(e));
			return -1;
		}
		d->fragmented = true;
		d->frag_id = id;
		nd++;
	}
	return nd;
}

static void dgrams_free(struct dgram *d, int n)
{
	for (int i = 0; i < n; i++)
		free(d[i].buf);
}

/* ---- the matrix ------------------------------------------------------------- */

static int check_case(const struct mx_case *c, const struct mx_env *e, const struct mx_result *r,
		      const struct cap *cp, const uint8_t *p, char *why, size_t wl)
{
	if (r->open_err) {
		snprintf(why, wl, "setup failed: %d", r->open_err);
		return -1;
	}
	unsigned at;
	int xe = mx_expect_err(c, &at);
	if (xe) {
		if (r->err != xe || r->err_at != at) {
			snprintf(why, wl, "expected error %d at call %u, got %d at call %u", xe, at, r->err, r->err_at);
			return -1;
		}
		if (cp->n || r->frames) {
			snprintf(why, wl, "a failed case emitted %u frames (reported %u)", cp->n, r->frames);
			return -1;
		}
		return 0;
	}
	if (r->err) {
		snprintf(why, wl, "unexpected error %d at call %u", r->err, r->err_at);
		return -1;
	}
	unsigned xf = mx_expect_frames(c);
	if (cp->n != xf || r->frames != xf) {
		snprintf(why, wl, "frames: captured %u, reported %u, expected %u", cp->n, r->frames, xf);
		return -1;
	}
	static struct dgram dg[MAX_DG];
	int nd = reassemble(cp, dg, why, wl);
	if (nd < 0)
		return -1;
	uint32_t xo[MAX_DG], xl[MAX_DG];
	unsigned nx = mx_expect_dgrams(c, xo, xl, MAX_DG);
	int rc = 0;
	if ((unsigned)nd != nx) {
		snprintf(why, wl, "datagrams: got %d, expected %u", nd, nx);
		rc = -1;
	}
	const struct txs_addr *xs = c->v4frames ? &e->src4 : &e->src6, *xd = c->v4frames ? &e->dst4 : &e->dst6;
	for (int i = 0; i < nd && !rc; i++) {
		const struct txs_pkt_info *q = &dg[i].info;
		size_t al = c->v4frames ? 4 : 16;
		if (q->family != (c->v4frames ? AF_INET : AF_INET6) || memcmp(q->src.bytes, xs->bytes, al) ||
		    memcmp(q->dst.bytes, xd->bytes, al) || q->sport != MX_SPORT || q->dport != MX_DPORT)
			snprintf(why, wl, "datagram %d: wrong family, address or port", i), rc = -1;
		else if (q->tos != mx_expect_tos(c) || q->ttl != mx_expect_ttl(c))
			snprintf(why, wl, "datagram %d: tos %#x ttl %u", i, q->tos, q->ttl), rc = -1;
		else if (c->v4frames && !dg[i].fragmented && q->df != (c->opt == MX_DF))
			snprintf(why, wl, "datagram %d: DF %d", i, q->df), rc = -1;
		else if (q->udp_csum_present != (c->opt != MX_NOCSUM))
			snprintf(why, wl, "datagram %d: checksum present %d", i, q->udp_csum_present), rc = -1;
		else if (q->payload_len != xl[i] || memcmp(q->payload, p + xo[i], xl[i]))
			snprintf(why, wl, "datagram %d: payload (%u bytes, expected %u at %u)", i, q->payload_len, xl[i],
				 xo[i]),
				rc = -1;
		else if (c->v4frames && i > 0 && q->ip_id != (uint16_t)(dg[0].info.ip_id + i))
			snprintf(why, wl, "GSO segment %d: ID %u, first %u", i, q->ip_id, dg[0].info.ip_id), rc = -1;
		else if (!c->v4frames && dg[i].fragmented && dg[i].frag_id == 0)
			snprintf(why, wl, "IPv6 fragment ID 0"), rc = -1;
		else if (!c->v4frames && !dg[i].fragmented && q->has_frag_hdr)
			snprintf(why, wl, "IPv6 fragment header on an unfragmented datagram"), rc = -1;
	}
	dgrams_free(dg, nd);
	return rc;
}

/* The default environment and a capturing matrix device (x->dev, frames into
 * x->cap), no endpoint yet. */
struct fx {
	struct mx_dev dev;
	struct cap cap;
	struct mx_env env;
	struct txs_udp_ep *ep;
	struct sockaddr_storage d4, d6, d4m;
	socklen_t l4, l6, l4m;
};

static void fx_env(struct fx *x)
{
	memset(x, 0, sizeof(*x));
	mx_env_default(&x->env);
	assert_int_equal(mx_dev_init(&x->dev, cap_sink, &x->cap), 0);
}

/* Closes the endpoint (if open), the device and the capture. */
static void fx_close(struct fx *x)
{
	txs_udp_close(x->ep);
	mx_dev_fini(&x->dev);
	cap_free(&x->cap);
}

static void matrix(void **st)
{
	(void)st;
	struct fx x;
	fx_env(&x);
	uint8_t *p = malloc(TXS_UDP6_MAX_PAYLOAD);
	assert_non_null(p);
	unsigned fails = 0, invalid = 0, frames = 0;
	for (unsigned i = 0; i < MX_CASES; i++) {
		struct mx_case c;
		mx_case_get(i, &c);
		mx_payload(&c, p);
		struct mx_result r;
		mx_run(&c, &x.env, &x.dev, p, NULL, NULL, &r);
		char why[200] = "";
		if (check_case(&c, &x.env, &r, &x.cap, p, why, sizeof(why)) < 0) {
			if (fails++ < 20)
				fprintf(stderr, "case %u %s %s %s len %u opt %s: %s\n", i, mx_fam_name[c.fam],
					c.connected ? "connected" : "unconnected", mx_mode_name[c.mode], c.len,
					mx_opt_name[c.opt], why);
		}
		unsigned at;
		invalid += mx_expect_err(&c, &at) != 0;
		frames += x.cap.n;
		cap_clear(&x.cap);
	}
	fprintf(stderr, "matrix: %u cases, %u invalid (checked for their error), %u frames, %u failures\n",
		(unsigned)MX_CASES, invalid, frames, fails);
	assert_int_equal(fails, 0);
	/* the pruning is narrow: v6 x nocsum (60), v4/4in6 gso x nocsum (2x2x6=24),
	 * DF x too big: v4/4in6 {1473, 8000, max} and v6 {1472, 1473, 8000, max}
	 * over 4 non-GSO modes x 2 conn */
	assert_int_equal(invalid, 60 + 24 + (2 * 3 + 4) * 4 * 2);
	free(p);
	fx_close(&x);
}

/* ---- a small fixture for the focused tests ------------------------------------ */

static void fx_open(struct fx *x, int family, bool src4, unsigned batch)
{
	fx_env(x);
	struct txs_udp_conf uc = { .sport = 4000, .mtu = MX_MTU, .batch = batch };
	uc.src = family == AF_INET ? x->env.src4 : x->env.src6;
	if (src4)
		uc.src4 = x->env.src4;
	assert_int_equal(txs_udp_open(&x->ep, &x->dev.q, &uc), 0);
	x->l4 = txs_udp_sockaddr(&x->d4, &x->env.dst4, 5000);
	x->l6 = txs_udp_sockaddr(&x->d6, &x->env.dst6, 5000);
	struct txs_addr m = { .family = AF_INET6 };
	m.bytes[10] = m.bytes[11] = 0xff;
	memcpy(m.bytes + 12, &x->env.dst4.v4, 4);
	x->l4m = txs_udp_sockaddr(&x->d4m, &m, 5000);
}

#define SA(ss) ((const struct sockaddr *)&(ss))

static ssize_t send_opts(struct txs_udp_ep *ep, const void *b, size_t n, unsigned flags, const struct sockaddr *sa,
			 socklen_t sl, const struct txs_udp_opts *o, unsigned *frames)
{
	struct iovec v = { (void *)b, n };
	struct txs_udp_msg m = { .name = sa, .namelen = sl, .iov = &v, .iovlen = 1, .opts = o, .flags = flags };
	ssize_t rc = txs_udp_sendmsg(ep, &m);
	if (frames)
		*frames = m.frames;
	return rc;
}

static uint16_t frame_id(const struct frame *f)
{
	struct txs_pkt_info pi;
	txs_parse(f->d, f->len, TXS_L2_ETH, &pi);
	return pi.ip_id;
}

static void errors_names(void **st)
{
	(void)st;
	struct fx x;
	uint8_t b[32] = { 0 };
	fx_open(&x, AF_INET, false, 1);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, NULL, 0), -EDESTADDRREQ);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d6), x.l6), -EAFNOSUPPORT);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4m), x.l4m), -EAFNOSUPPORT);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4 - 1), -EINVAL);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), 1), -EINVAL);
	struct sockaddr_storage un = { .ss_family = AF_UNSPEC };
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(un), sizeof(un)), -EDESTADDRREQ);
	struct sockaddr_storage bad = x.d4;
	bad.ss_family = AF_PACKET;
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(bad), x.l4), -EAFNOSUPPORT);
	bad = x.d4;
	((struct sockaddr_in *)&bad)->sin_port = 0;
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(bad), x.l4), -EINVAL);
	((struct sockaddr_in *)&bad)->sin_port = htons(9);
	((struct sockaddr_in *)&bad)->sin_addr.s_addr = 0;
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(bad), x.l4), -EINVAL);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0x80, SA(x.d4), x.l4), -EOPNOTSUPP);
	struct iovec v = { NULL, 3 };
	struct txs_udp_msg m = { .name = SA(x.d4), .namelen = x.l4, .iov = &v, .iovlen = 1 };
	assert_int_equal(txs_udp_sendmsg(x.ep, &m), -EFAULT);
	assert_int_equal(x.cap.n, 0);
	struct txs_udp_stats s;
	txs_udp_stats(x.ep, &s);
	assert_int_equal(s.errors, 11);
	assert_int_equal(s.calls, 0);
	fx_close(&x);

	/* IPv6 endpoint: unknown family is -EINVAL; IPv4 destinations need src4 */
	fx_open(&x, AF_INET6, false, 1);
	bad = x.d6;
	bad.ss_family = AF_PACKET;
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(bad), x.l6), -EINVAL);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d6), 23), -EINVAL);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d6), 24), 16); /* SIN6_LEN_RFC2133 */
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4m), x.l4m), -ENETUNREACH);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), -ENETUNREACH);
	assert_int_equal(txs_udp_connect(x.ep, SA(x.d4m), x.l4m), -ENETUNREACH);
	struct sockaddr_storage any = x.d6;
	memset(&((struct sockaddr_in6 *)&any)->sin6_addr, 0, 16);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(any), x.l6), -EINVAL);
	fx_close(&x);

	/* with src4: AF_INET and IPv4-mapped names both go out as IPv4 */
	fx_open(&x, AF_INET6, true, 1);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4m), x.l4m), 16);
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(x.cap.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		struct txs_pkt_info pi;
		assert_int_equal(txs_parse(x.cap.f[i].d, x.cap.f[i].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
		assert_int_equal(pi.family, AF_INET);
		assert_memory_equal(&pi.src.v4, &x.env.src4.v4, 4);
		assert_memory_equal(&pi.dst.v4, &x.env.dst4.v4, 4);
	}
	fx_close(&x);
}

static void errors_sizes_and_options(void **st)
{
	(void)st;
	struct fx x;
	uint8_t *b = calloc(1, 70000);
	fx_open(&x, AF_INET, false, 1);
	assert_int_equal(send_opts(x.ep, b, 65507, 0, SA(x.d4), x.l4, NULL, NULL), 65507);
	assert_int_equal(send_opts(x.ep, b, 65508, 0, SA(x.d4), x.l4, NULL, NULL), -EMSGSIZE);
	/* a gather list over 64 KiB */
	struct iovec v[2] = { { b, 40000 }, { b, 40000 } };
	struct txs_udp_msg m = { .name = SA(x.d4), .namelen = x.l4, .iov = v, .iovlen = 2 };
	assert_int_equal(txs_udp_sendmsg(x.ep, &m), -EMSGSIZE);
	struct txs_udp_opts o = { .set = TXS_UDP_OPT_TTL, .ttl = 0 };
	assert_int_equal(send_opts(x.ep, b, 16, 0, SA(x.d4), x.l4, &o, NULL), -EINVAL);
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_DF, .df = true };
	assert_int_equal(send_opts(x.ep, b, 1472, 0, SA(x.d4), x.l4, &o, NULL), 1472);
	assert_int_equal(send_opts(x.ep, b, 1473, 0, SA(x.d4), x.l4, &o, NULL), -EMSGSIZE);
	/* GSO limits, as the current kernel's udp_send_skb(): the first segment
	 * (or the whole payload when it fits one) must fit the MTU (-EMSGSIZE),
	 * so a gso_size over the MTU is fine for a payload that fits one frame;
	 * at most UDP_MAX_SEGMENTS (this kernel's) segments; no checksum-off */
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_GSO, .gso_size = 1473 };
	unsigned fr;
	assert_int_equal(send_opts(x.ep, b, 100, 0, SA(x.d4), x.l4, &o, &fr), 100);
	assert_int_equal(fr, 1);
	assert_int_equal(send_opts(x.ep, b, 1472, 0, SA(x.d4), x.l4, &o, &fr), 1472);
	assert_int_equal(send_opts(x.ep, b, 1473, 0, SA(x.d4), x.l4, &o, NULL), -EMSGSIZE);
	assert_int_equal(send_opts(x.ep, b, 3000, 0, SA(x.d4), x.l4, &o, NULL), -EMSGSIZE);
	o.gso_size = 100;
	unsigned ks = txs_udp_kernel_max_segs();
	assert_true(ks == TXS_UDP_MAX_SEGS || ks == TXS_UDP_MAX_SEGS_OLD);
	assert_int_equal(send_opts(x.ep, b, 100 * ks, 0, SA(x.d4), x.l4, &o, &fr), 100 * ks);
	assert_int_equal(fr, ks);
	assert_int_equal(send_opts(x.ep, b, 100 * ks + 1, 0, SA(x.d4), x.l4, &o, NULL), -EINVAL);
	o.set |= TXS_UDP_OPT_NO_CSUM;
	o.no_csum = true;
	assert_int_equal(send_opts(x.ep, b, 50, 0, SA(x.d4), x.l4, &o, NULL), -EINVAL);
	/* GSO ignores DF: the segments fit */
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_GSO | TXS_UDP_OPT_DF, .gso_size = 1472, .df = true };
	assert_int_equal(send_opts(x.ep, b, 65507, 0, SA(x.d4), x.l4, &o, &fr), 65507);
	assert_int_equal(fr, 45);
	fx_close(&x);

	fx_open(&x, AF_INET6, false, 1);
	assert_int_equal(send_opts(x.ep, b, 65527, 0, SA(x.d6), x.l6, NULL, &fr), 65527);
	assert_int_equal(fr, (65527 + 8 + 1447) / 1448);
	assert_int_equal(send_opts(x.ep, b, 65528, 0, SA(x.d6), x.l6, NULL, NULL), -EMSGSIZE);
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_NO_CSUM, .no_csum = true };
	assert_int_equal(send_opts(x.ep, b, 16, 0, SA(x.d6), x.l6, &o, NULL), -EINVAL);
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_TTL, .ttl = 0 }; /* hop limit 0 is valid */
	assert_int_equal(send_opts(x.ep, b, 16, 0, SA(x.d6), x.l6, &o, NULL), 16);
	o = (struct txs_udp_opts){ .set = TXS_UDP_OPT_DF, .df = true }; /* IPV6_DONTFRAG */
	assert_int_equal(send_opts(x.ep, b, 1452, 0, SA(x.d6), x.l6, &o, NULL), 1452);
	assert_int_equal(send_opts(x.ep, b, 1453, 0, SA(x.d6), x.l6, &o, NULL), -EMSGSIZE);
	fx_close(&x);
	free(b);
}

static void zero_length_and_empty_iov(void **st)
{
	(void)st;
	struct fx x;
	fx_open(&x, AF_INET, false, 1);
	struct txs_udp_msg m = { .name = SA(x.d4), .namelen = x.l4, .iov = NULL, .iovlen = 0 };
	assert_int_equal(txs_udp_sendmsg(x.ep, &m), 0);
	assert_int_equal(m.frames, 1);
	assert_int_equal(x.cap.n, 1);
	assert_int_equal(x.cap.f[0].len, 60);
	struct txs_pkt_info pi;
	assert_int_equal(txs_parse(x.cap.f[0].d, 60, TXS_L2_ETH, &pi), TXS_PERR_OK);
	assert_int_equal(pi.payload_len, 0);
	assert_true(pi.udp_csum_present);
	fx_close(&x);
}

static void cork_rules(void **st)
{
	(void)st;
	struct fx x;
	uint8_t b[2000];
	for (unsigned i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 3);
	fx_open(&x, AF_INET6, true, 1);
	struct txs_udp_opts tos = { .set = TXS_UDP_OPT_TOS, .tos = 0x20 };
	assert_int_equal(send_opts(x.ep, b, 10, TXS_UDP_MORE, SA(x.d6), x.l6, &tos, NULL), 10);
	assert_int_equal(txs_udp_pending(x.ep), 10);
	/* an append needs no name, even unconnected */
	assert_int_equal(send_opts(x.ep, b + 10, 5, TXS_UDP_MORE, NULL, 0, NULL, NULL), 5);
	/* a different destination, family or options: refused, pending kept */
	struct sockaddr_storage other = x.d6;
	((struct sockaddr_in6 *)&other)->sin6_port = htons(5001);
	assert_int_equal(send_opts(x.ep, b, 1, TXS_UDP_MORE, SA(other), x.l6, NULL, NULL), -EINVAL);
	assert_int_equal(send_opts(x.ep, b, 1, TXS_UDP_MORE, SA(x.d4m), x.l4m, NULL, NULL), -EAFNOSUPPORT);
	struct txs_udp_opts tos2 = { .set = TXS_UDP_OPT_TOS, .tos = 0x28 };
	assert_int_equal(send_opts(x.ep, b, 1, TXS_UDP_MORE, NULL, 0, &tos2, NULL), -EINVAL);
	struct txs_udp_opts ttl = { .set = TXS_UDP_OPT_TTL, .ttl = 64 }; /* equal to the pending default */
	assert_int_equal(send_opts(x.ep, b + 15, 5, TXS_UDP_MORE, SA(x.d6), x.l6, &ttl, NULL), 5);
	assert_int_equal(txs_udp_pending(x.ep), 20);
	assert_int_equal(x.cap.n, 0);
	unsigned fr;
	assert_int_equal(send_opts(x.ep, b + 20, 7, 0, NULL, 0, &tos, &fr), 7);
	assert_int_equal(fr, 1);
	assert_int_equal(txs_udp_pending(x.ep), 0);
	assert_int_equal(x.cap.n, 1);
	struct txs_pkt_info pi;
	assert_int_equal(txs_parse(x.cap.f[0].d, x.cap.f[0].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
	assert_int_equal(pi.payload_len, 27);
	assert_memory_equal(pi.payload, b, 27);
	assert_int_equal(pi.tos, 0x20);
	assert_int_equal(pi.dport, 5000);

	/* nothing pending and no name: -EDESTADDRREQ */
	assert_int_equal(send_opts(x.ep, b, 1, TXS_UDP_MORE, NULL, 0, NULL, NULL), -EDESTADDRREQ);
	/* a size error on an append discards the pending datagram (kernel:
	 * udp_flush_pending_frames) */
	struct txs_udp_opts df = { .set = TXS_UDP_OPT_DF, .df = true };
	assert_int_equal(send_opts(x.ep, b, 1000, TXS_UDP_MORE, SA(x.d6), x.l6, &df, NULL), 1000);
	assert_int_equal(send_opts(x.ep, b, 1000, TXS_UDP_MORE, NULL, 0, NULL, NULL), -EMSGSIZE);
	assert_int_equal(txs_udp_pending(x.ep), 0);
	assert_int_equal(txs_udp_flush(x.ep), 0);
	assert_int_equal(x.cap.n, 1);
	/* flush emits a pending datagram; a corked IPv4-mapped datagram is IPv4 */
	assert_int_equal(send_opts(x.ep, b, 1400, TXS_UDP_MORE, SA(x.d4m), x.l4m, NULL, NULL), 1400);
	assert_int_equal(send_opts(x.ep, b + 1400, 600, TXS_UDP_MORE, SA(x.d4), x.l4, NULL, NULL), 600);
	assert_int_equal(txs_udp_flush(x.ep), 2); /* 2008 UDP bytes: two IPv4 fragments */
	assert_int_equal(x.cap.n, 3);
	struct txs_pkt_info f1, f2;
	assert_int_equal(txs_parse(x.cap.f[1].d, x.cap.f[1].len, TXS_L2_ETH, &f1), TXS_PERR_FRAGMENT);
	assert_int_equal(txs_parse(x.cap.f[2].d, x.cap.f[2].len, TXS_L2_ETH, &f2), TXS_PERR_FRAGMENT);
	assert_int_equal(f1.family, AF_INET);
	assert_int_equal(f1.ip_id, f2.ip_id);
	assert_true(f1.mf && !f2.mf);
	assert_int_equal(f2.frag_offset, 1480);
	/* close discards a pending datagram */
	assert_int_equal(send_opts(x.ep, b, 10, TXS_UDP_MORE, SA(x.d6), x.l6, NULL, NULL), 10);
	txs_udp_close(x.ep);
	x.ep = NULL;
	assert_int_equal(x.cap.n, 3);
	fx_close(&x);
}

static void connect_and_flow_ids(void **st)
{
	(void)st;
	struct fx x;
	uint8_t b[3000] = { 0 };
	fx_open(&x, AF_INET, false, 1);
	assert_int_equal(txs_udp_connect(x.ep, SA(x.d4), x.l4), 0);
	struct txs_udp_opts gso = { .set = TXS_UDP_OPT_GSO, .gso_size = 1000 };
	struct txs_udp_opts df = { .set = TXS_UDP_OPT_DF, .df = true };
	assert_int_equal(send_opts(x.ep, b, 16, 0, NULL, 0, NULL, NULL), 16);
	assert_int_equal(send_opts(x.ep, b, 2500, 0, NULL, 0, &gso, NULL), 2500); /* 3 segments */
	assert_int_equal(send_opts(x.ep, b, 16, 0, NULL, 0, &df, NULL), 16);
	assert_int_equal(send_opts(x.ep, b, 2000, 0, NULL, 0, NULL, NULL), 2000); /* 2 fragments */
	assert_int_equal(send_opts(x.ep, b, 16, 0, NULL, 0, NULL, NULL), 16);
	assert_int_equal(x.cap.n, 8);
	uint16_t id0 = frame_id(&x.cap.f[0]);
	/* the flow counter: one per datagram, a block of 3 for the GSO call, DF
	 * datagrams of a connected flow keep counting, fragments share one */
	static const uint16_t want[8] = { 0, 1, 2, 3, 4, 5, 5, 6 };
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(frame_id(&x.cap.f[i]), (uint16_t)(id0 + want[i]));
	/* a name on a connected endpoint goes there */
	struct sockaddr_storage other = x.d4;
	((struct sockaddr_in *)&other)->sin_port = htons(7777);
	assert_int_equal(send_opts(x.ep, b, 16, 0, SA(other), x.l4, NULL, NULL), 16);
	struct txs_pkt_info pi;
	txs_parse(x.cap.f[8].d, x.cap.f[8].len, TXS_L2_ETH, &pi);
	assert_int_equal(pi.dport, 7777);
	/* AF_UNSPEC disconnects */
	struct sockaddr_storage un = { .ss_family = AF_UNSPEC };
	assert_int_equal(txs_udp_connect(x.ep, SA(un), sizeof(un)), 0);
	assert_int_equal(send_opts(x.ep, b, 16, 0, NULL, 0, NULL, NULL), -EDESTADDRREQ);
	assert_int_equal(txs_udp_connect(x.ep, SA(x.d6), x.l6), -EAFNOSUPPORT);
	fx_close(&x);
}

static void unconnected_ids(void **st)
{
	(void)st;
	struct txs_ident *id;
	struct txs_ident_core *core;
	struct txs_ident_conf ic = { .strategy = "atomic", .df_zero = true, .seed = 5 };
	assert_int_equal(txs_ident_create(&id, &ic), 0);
	assert_int_equal(txs_ident_core_open(id, 0, &core), 0);
	struct fx x;
	fx_env(&x);
	struct txs_udp_conf uc = { .src = x.env.src4, .sport = 1, .batch = 1, .ident = id, .ident_core = core };
	assert_int_equal(txs_udp_open(&x.ep, &x.dev.q, &uc), 0);
	struct sockaddr_storage d;
	socklen_t dl = txs_udp_sockaddr(&d, &x.env.dst4, 9);
	uint8_t b[3000] = { 0 };
	struct txs_udp_opts df = { .set = TXS_UDP_OPT_DF, .df = true };
	struct txs_udp_opts gso = { .set = TXS_UDP_OPT_GSO, .gso_size = 500 };
	assert_int_equal(send_opts(x.ep, b, 16, 0, SA(d), dl, &df, NULL), 16);
	assert_int_equal(send_opts(x.ep, b, 1500, 0, SA(d), dl, &gso, NULL), 1500);
	assert_int_equal(send_opts(x.ep, b, 2000, 0, SA(d), dl, NULL, NULL), 2000);
	assert_int_equal(x.cap.n, 6);
	assert_int_equal(frame_id(&x.cap.f[0]), 0); /* RFC 6864: atomic DF datagram, df_zero */
	uint16_t g = frame_id(&x.cap.f[1]);
	assert_int_equal(frame_id(&x.cap.f[2]), (uint16_t)(g + 1));
	assert_int_equal(frame_id(&x.cap.f[3]), (uint16_t)(g + 2));
	assert_int_equal(frame_id(&x.cap.f[4]), frame_id(&x.cap.f[5]));
	txs_udp_close(x.ep);
	/* IPv6 fragments: one non-zero 32-bit ID per datagram, different ones */
	uc.src = x.env.src6;
	assert_int_equal(txs_udp_open(&x.ep, &x.dev.q, &uc), 0);
	dl = txs_udp_sockaddr(&d, &x.env.dst6, 9);
	assert_int_equal(send_opts(x.ep, b, 2000, 0, SA(d), dl, NULL, NULL), 2000);
	assert_int_equal(send_opts(x.ep, b, 2000, 0, SA(d), dl, NULL, NULL), 2000);
	assert_int_equal(x.cap.n, 10);
	struct txs_pkt_info a[4];
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(txs_parse(x.cap.f[6 + i].d, x.cap.f[6 + i].len, TXS_L2_ETH, &a[i]), TXS_PERR_FRAGMENT);
	assert_int_equal(a[0].frag_id, a[1].frag_id);
	assert_int_equal(a[2].frag_id, a[3].frag_id);
	assert_int_not_equal(a[0].frag_id, a[2].frag_id);
	assert_int_not_equal(a[0].frag_id, 0);
	fx_close(&x);
	txs_ident_core_close(core);
	txs_ident_destroy(id);
}

static void batching_and_device(void **st)
{
	(void)st;
	struct fx x;
	uint8_t b[64] = { 0 };
	fx_open(&x, AF_INET, false, 4);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(x.cap.n, 0); /* batched */
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(x.cap.n, 4); /* batch full: pushed */
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(txs_udp_flush(x.ep), 0);
	assert_int_equal(x.cap.n, 5);
	/* a device that takes one frame per call: the endpoint retries, then drops */
	x.dev.accept_max = 1;
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(x.cap.n, 9);
	struct txs_udp_stats s;
	txs_udp_stats(x.ep, &s);
	assert_int_equal(s.drops, 0);
	/* no buffers at all: -ENOBUFS, nothing counted as sent */
	x.dev.pool_n = 0;
	assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), -ENOBUFS);
	x.dev.pool_n = 2; /* fewer than a 3-fragment datagram needs */
	static uint8_t big[4000];
	assert_int_equal(txs_udp_sendto(x.ep, big, sizeof(big), 0, SA(x.d4), x.l4), -ENOBUFS);
	x.dev.pool_n = TXS_UDP_MAX_FRAMES;
	assert_int_equal(txs_udp_sendto(x.ep, big, sizeof(big), 0, SA(x.d4), x.l4), sizeof(big));
	assert_int_equal(txs_udp_flush(x.ep), 0);
	txs_udp_stats(x.ep, &s);
	assert_int_equal(s.calls, 10);
	assert_int_equal(s.datagrams, 10);
	assert_int_equal(s.frames, 12);
	assert_int_equal(s.bytes, 9 * 16 + sizeof(big));
	assert_int_equal(s.errors, 2);
	assert_int_equal(x.cap.n, 12);
	fx_close(&x);
}

/* A device whose tx_send refuses everything. */
static unsigned refuse_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	(void)q, (void)b, (void)n;
	return 0;
}

static void device_refuses(void **st)
{
	(void)st;
	struct fx x;
	uint8_t b[16] = { 0 };
	fx_open(&x, AF_INET, false, 2);
	struct txs_netdev_ops ops = mx_dev_ops;
	ops.tx_send = refuse_send;
	x.dev.dev.ops = &ops;
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(txs_udp_sendto(x.ep, b, 16, 0, SA(x.d4), x.l4), 16);
	assert_int_equal(txs_udp_flush(x.ep), 0);
	struct txs_udp_stats s;
	txs_udp_stats(x.ep, &s);
	assert_int_equal(s.frames, 3);
	assert_int_equal(s.drops, 3);
	txs_udp_close(x.ep);
	x.ep = NULL;
	x.dev.dev.ops = &mx_dev_ops;
	fx_close(&x);
}

static void many_destinations(void **st)
{
	(void)st;
	/* more destinations than cache slots: collisions rebuild, frames stay right */
	struct fx x;
	fx_env(&x);
	struct txs_udp_conf uc = { .src = x.env.src6, .src4 = x.env.src4, .sport = 1, .batch = 1, .dst_cache = 4 };
	assert_int_equal(txs_udp_open(&x.ep, &x.dev.q, &uc), 0);
	uint8_t b[16] = { 1, 2, 3 };
	for (unsigned r = 0; r < 3; r++)
		for (unsigned i = 0; i < 40; i++) {
			struct txs_addr a = i % 2 ? x.env.dst6 : x.env.dst4;
			if (i % 2)
				a.bytes[15] = (uint8_t)i;
			else
				a.bytes[3] = (uint8_t)i;
			struct sockaddr_storage ss;
			socklen_t sl = txs_udp_sockaddr(&ss, &a, (uint16_t)(100 + i));
			assert_int_equal(txs_udp_sendto(x.ep, b, sizeof(b), 0, SA(ss), sl), 16);
			struct frame *f = &x.cap.f[x.cap.n - 1];
			struct txs_pkt_info pi;
			assert_int_equal(txs_parse(f->d, f->len, TXS_L2_ETH, &pi), TXS_PERR_OK);
			assert_int_equal(pi.family, a.family);
			assert_memory_equal(pi.dst.bytes, a.bytes, a.family == AF_INET ? 4 : 16);
			assert_int_equal(pi.dport, 100 + i);
		}
	assert_int_equal(x.cap.n, 120);
	fx_close(&x);
}

static void open_errors(void **st)
{
	(void)st;
	struct mx_env e;
	mx_env_default(&e);
	struct mx_dev dev;
	assert_int_equal(mx_dev_init(&dev, NULL, NULL), 0);
	struct txs_udp_ep *ep;
	struct txs_udp_conf ok = { .src = e.src4, .sport = 1 };
	struct txs_udp_conf c;
	c = ok, c.src.family = AF_UNIX;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.sport = 0;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.src4 = e.src4; /* src4 only on IPv6 endpoints */
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.mtu = 575;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.src = e.src6, c.mtu = 1279;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.mtu = 2100; /* frames would not fit the device's 2048-byte buffers */
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.batch = 257;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.dst_cache = 3;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.defaults.set = 0x100;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), -EINVAL);
	c = ok, c.mtu = 576;
	assert_int_equal(txs_udp_open(&ep, &dev.q, &c), 0);
	txs_udp_close(ep);
	txs_udp_close(NULL);
	mx_dev_fini(&dev);
}

static void endpoint_defaults(void **st)
{
	(void)st;
	/* socket-level defaults apply; a message option overrides one field */
	struct fx x;
	fx_env(&x);
	struct txs_udp_conf uc = { .src = x.env.src4, .sport = 1, .batch = 1, .flow_label = 0x12345 };
	uc.defaults = (struct txs_udp_opts){ .set = TXS_UDP_OPT_TOS | TXS_UDP_OPT_TTL | TXS_UDP_OPT_NO_CSUM,
					     .tos = 0x10,
					     .ttl = 9,
					     .no_csum = true };
	assert_int_equal(txs_udp_open(&x.ep, &x.dev.q, &uc), 0);
	struct sockaddr_storage d;
	socklen_t dl = txs_udp_sockaddr(&d, &x.env.dst4, 9);
	uint8_t b[40] = { 0 };
	struct txs_udp_opts ttl = { .set = TXS_UDP_OPT_TTL, .ttl = 200 };
	assert_int_equal(send_opts(x.ep, b, 40, 0, SA(d), dl, NULL, NULL), 40);
	assert_int_equal(send_opts(x.ep, b, 40, 0, SA(d), dl, &ttl, NULL), 40);
	struct txs_pkt_info pi;
	assert_int_equal(txs_parse(x.cap.f[0].d, x.cap.f[0].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
	assert_int_equal(pi.tos, 0x10);
	assert_int_equal(pi.ttl, 9);
	assert_false(pi.udp_csum_present);
	assert_int_equal(txs_parse(x.cap.f[1].d, x.cap.f[1].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
	assert_int_equal(pi.tos, 0x10);
	assert_int_equal(pi.ttl, 200);
	txs_udp_close(x.ep);
	uc.src = x.env.src6;
	uc.defaults.set &= ~TXS_UDP_OPT_NO_CSUM;
	assert_int_equal(txs_udp_open(&x.ep, &x.dev.q, &uc), 0);
	dl = txs_udp_sockaddr(&d, &x.env.dst6, 9);
	assert_int_equal(send_opts(x.ep, b, 40, 0, SA(d), dl, NULL, NULL), 40);
	assert_int_equal(txs_parse(x.cap.f[2].d, x.cap.f[2].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
	assert_int_equal(pi.tos, 0x10);
	assert_int_equal(pi.ttl, 9);
	assert_int_equal(txs_get_be32(x.cap.f[2].d + TXS_ETH_HLEN) & 0xfffff, 0x12345);
	fx_close(&x);
}

/* ---- the engine adapter ---------------------------------------------------- */

/* Through the engine on the dummy device: -n counts datagrams (a GSO
 * segment is one, an IP fragment is not); the thread rows' frames equal the
 * device's wire packets. */
static void run_adapter(int family, bool connected, uint16_t gso, uint32_t len, uint64_t count, unsigned burst,
			unsigned frames_per_dgram)
{
	struct txs_udp_gen_conf gc = { .connected = connected, .gso_size = gso };
	txs_addr_parse(&gc.spec.src, family == AF_INET ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&gc.spec.dst, family == AF_INET ? "198.18.0.2" : "2001:2::2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = len;
	gc.spread_sport = true;
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 2, .frame_size = 1514 };
	assert_int_equal(txs_netdev_open(&dev, "dummy:verify", &dc, NULL, 0), 0);
	struct txs_engine_conf ec = { .n_workers = 2, .count = count, .dev = dev, .gen = &txs_udp_sock_gen_ops,
				      .gen_conf = &gc, .burst = burst };
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row rows[2];
	txs_engine_read(e, rows);
	assert_int_equal(rows[0].packets + rows[1].packets, count);
	assert_int_equal(rows[0].drops + rows[1].drops, 0);
	assert_int_equal(rows[0].frames + rows[1].frames, count * frames_per_dgram);
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, count * frames_per_dgram);
	assert_int_equal(lc.verify_err, 0);
	assert_int_equal(lc.drop_full + lc.drop_err, 0);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
}

static void engine_adapter(void **st)
{
	(void)st;
	run_adapter(AF_INET, true, 0, 16, 10007, 0, 1);
	run_adapter(AF_INET6, false, 0, 16, 10007, 0, 1);
	/* 45 segments per call: the burst must hold a whole call; 3001 is no
	 * multiple of 45: the last call of each worker carries what is due */
	run_adapter(AF_INET, false, 1000, 45000, 3001, 64, 1);
	run_adapter(AF_INET6, true, 1452, 8000, 999, 0, 1);
	run_adapter(AF_INET, true, 0, 0, 100, 0, 1);
	/* fragments: 3 frames per datagram (IPv4, 3000 bytes), 6 (IPv6, 8000) */
	run_adapter(AF_INET, true, 0, 3000, 1001, 0, 3);
	run_adapter(AF_INET6, false, 0, 8000, 997, 7, 6);
	/* a burst smaller than one call's frames: refused at start */
	struct txs_udp_gen_conf gc = { .connected = true };
	txs_addr_parse(&gc.spec.src, "198.18.0.1");
	txs_addr_parse(&gc.spec.dst, "198.18.0.2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = 3000;
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 1514 };
	assert_int_equal(txs_netdev_open(&dev, "dummy", &dc, NULL, 0), 0);
	struct txs_engine_conf ec = { .n_workers = 1, .count = 10, .dev = dev, .gen = &txs_udp_sock_gen_ops,
				      .gen_conf = &gc, .burst = 2 };
	struct txs_engine *e;
	assert_int_equal(txs_engine_create(&e, &ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	assert_int_equal(txs_engine_wait(e), -EINVAL);
	txs_engine_destroy(e);
	txs_netdev_close(dev);
}

/* The adapter never cuts a datagram: over a device that hands
 * out 1..7 buffers per burst and accepts part of some bursts, every frame
 * that reaches the wire belongs to a whole datagram of exactly -l bytes (or
 * a whole GSO segment), sequence numbers run on, and the counts add up. */
static void never_cut_case(int family, bool connected, uint16_t gso, uint32_t len, uint64_t count, bool partial)
{
	struct cap cp = { 0 };
	struct mx_dev dev;
	assert_int_equal(mx_dev_init(&dev, cap_sink, &cp), 0);
	dev.dev.mtu = MX_MTU;
	struct txs_udp_gen_conf gc = { .connected = connected, .gso_size = gso, .max_segs = 64 };
	txs_addr_parse(&gc.spec.src, family == AF_INET ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&gc.spec.dst, family == AF_INET ? "198.18.0.2" : "2001:2::2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = len;
	struct txs_worker w = { .txq = &dev.q, .frames_per_dgram = 1, .min_frames = 1 };
	assert_int_equal(txs_udp_sock_gen_ops.init(&w, &gc), 0);
	unsigned fpd = w.frames_per_dgram;
	struct txs_pktbuf b[TXS_UDP_MAX_FRAMES];
	uint64_t done = 0, frames = 0, dropped = 0;
	unsigned round = 0, empty = 0;
	while (done < count) {
		assert_true(round < 100000);
		unsigned want = 1 + round++ % 7; /* a stingy ring */
		if (w.min_frames > want)
			want = (round % 3) ? want : w.min_frames; /* room comes back now and then */
		if (want > (count - done) * fpd)
			want = (unsigned)((count - done) * fpd); /* as the engine: no more than is due */
		unsigned n = mx_dev_alloc(&dev.q, b, want);
		w.left = count - done;
		unsigned filled = txs_udp_sock_gen_ops.fill(&w, b, n, 1);
		assert_int_equal(w.fill_err, 0);
		if (!filled) {
			assert_true(n < w.min_frames); /* only "no room" leaves a burst empty */
			empty++;
			continue;
		}
		dev.accept_max = partial && round % 5 == 0 ? 1 + round % (filled > 1 ? filled - 1 : 1) : 0;
		unsigned sent = mx_dev_send(&dev.q, b, filled);
		/* the engine's arithmetic: a datagram whose last frame was refused
		 * is dropped whole */
		unsigned pk = sent / fpd, all = filled / fpd;
		assert_int_equal(filled % fpd, 0);
		done += all;
		dropped += all - pk;
		frames += sent;
		/* a partly sent fragment train reached the wire: drop its frames
		 * from the capture, they are the dropped datagram's */
		if (sent % fpd) {
			for (unsigned k = 0; k < sent % fpd; k++) {
				cp.n--;
				free(cp.f[cp.n].d);
			}
		}
	}
	assert_true(empty > 0 || w.min_frames == 1);
	assert_int_equal(done, count);
	txs_udp_sock_gen_ops.fini(&w);
	struct dgram *dg = calloc(MAX_DG * 4, sizeof(*dg));
	char why[160] = "";
	/* reassemble in chunks of at most MAX_DG datagrams */
	int nd = reassemble(&cp, dg, why, sizeof(why));
	if (nd < 0)
		fail_msg("%s", why);
	assert_int_equal((uint64_t)nd, count - dropped);
	uint32_t seg = gso && len > gso ? gso : len;
	uint64_t seq_prev = 0;
	for (int i = 0; i < nd; i++) {
		uint32_t pl = dg[i].info.payload_len;
		assert_true(pl == seg || (gso && pl == len % gso && pl));
		struct txs_ph ph;
		assert_int_not_equal(txs_ph_read(dg[i].info.payload, pl, &ph), TXS_PH_NONE);
		if (i)
			assert_true(ph.seq > seq_prev); /* on, never back (dropped ones leave gaps) */
		seq_prev = ph.seq;
		free(dg[i].buf);
	}
	free(dg);
	(void)frames;
	mx_dev_fini(&dev);
	cap_free(&cp);
}

/* The fast path is a shortcut of the core, with identical output: where
 * txs_udp_fast_path_ok() picks gen.c's template patch, its frames equal the
 * sendmsg path's byte for byte (IPv4 ID and header checksum aside: the two
 * take IDs from different counters); elsewhere gen.c refuses the flow. */
static void fast_equals_core_case(int family, uint32_t len, uint8_t tos, uint8_t ttl, bool df, bool no_csum)
{
	struct cap cf = { 0 }, cs = { 0 };
	struct mx_dev df_dev, ds_dev;
	assert_int_equal(mx_dev_init(&df_dev, cap_sink, &cf), 0);
	assert_int_equal(mx_dev_init(&ds_dev, cap_sink, &cs), 0);
	df_dev.dev.mtu = ds_dev.dev.mtu = MX_MTU;
	struct txs_flow_spec sp = { .sport = 40000, .dport = 5201, .payload_len = len, .tos = tos, .ttl = ttl,
				    .df = df, .no_udp_csum = no_csum, .flow_id = 3 };
	txs_addr_parse(&sp.src, family == AF_INET ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&sp.dst, family == AF_INET ? "198.18.0.2" : "2001:2::2");
	memcpy(sp.src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(sp.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	struct txs_gen_conf gc = { .spec = sp, .spread_sport = true, .seed = 5 };
	struct txs_udp_gen_conf uc = { .spec = sp, .spread_sport = true, .connected = true };
	bool fast = txs_udp_fast_path_ok(&df_dev.dev, &sp, 0, true, 0);
	struct txs_worker wf = { .txq = &df_dev.q, .id = 1, .frames_per_dgram = 1, .min_frames = 1 };
	struct txs_worker ws = { .txq = &ds_dev.q, .id = 1, .frames_per_dgram = 1, .min_frames = 1 };
	if (!fast) {
		assert_int_equal(txs_udp_gen_ops.init(&wf, &gc), -EMSGSIZE);
		mx_dev_fini(&df_dev);
		mx_dev_fini(&ds_dev);
		return;
	}
	assert_int_equal(txs_udp_gen_ops.init(&wf, &gc), 0);
	assert_int_equal(txs_udp_sock_gen_ops.init(&ws, &uc), 0);
	assert_int_equal(ws.min_frames, 1);
	enum { K = 9 };
	struct txs_pktbuf b[K];
	unsigned n = mx_dev_alloc(&df_dev.q, b, K);
	assert_int_equal(txs_udp_gen_ops.fill(&wf, b, n, 123456789), K);
	mx_dev_send(&df_dev.q, b, K);
	n = mx_dev_alloc(&ds_dev.q, b, K);
	ws.left = K;
	assert_int_equal(txs_udp_sock_gen_ops.fill(&ws, b, n, 123456789), K);
	mx_dev_send(&ds_dev.q, b, K);
	assert_int_equal(cf.n, K);
	assert_int_equal(cs.n, K);
	for (unsigned i = 0; i < K; i++) {
		assert_int_equal(cf.f[i].len, cs.f[i].len);
		struct txs_pkt_info pi;
		assert_int_equal(txs_parse(cs.f[i].d, cs.f[i].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
		assert_int_equal(txs_parse(cf.f[i].d, cf.f[i].len, TXS_L2_ETH, &pi), TXS_PERR_OK);
		if (family == AF_INET) {
			/* bytes 18..19 (ID) and 24..25 (header checksum) may differ */
			memset(cf.f[i].d + 18, 0, 2);
			memset(cs.f[i].d + 18, 0, 2);
			memset(cf.f[i].d + 24, 0, 2);
			memset(cs.f[i].d + 24, 0, 2);
		}
		if (memcmp(cf.f[i].d, cs.f[i].d, cf.f[i].len) != 0)
			fail_msg("family %d len %u tos %u ttl %u df %d no_csum %d: frame %u differs", family, len, tos, ttl,
				 df, no_csum, i);
	}
	txs_udp_gen_ops.fini(&wf);
	txs_udp_sock_gen_ops.fini(&ws);
	mx_dev_fini(&df_dev);
	mx_dev_fini(&ds_dev);
	cap_free(&cf);
	cap_free(&cs);
}

static void fast_equals_core(void **st)
{
	(void)st;
	static const uint32_t lens[] = { 0, 1, 16, 17, 18, 24, 100, 1452, 1453, 1472, 1473, 3000 };
	for (int fam = 0; fam < 2; fam++)
		for (size_t l = 0; l < TXS_ARRAY_SIZE(lens); l++)
			for (int o = 0; o < 4; o++) {
				int family = fam ? AF_INET6 : AF_INET;
				if (o == 3 && family == AF_INET6)
					continue; /* no checksum-off on IPv6 */
				fast_equals_core_case(family, lens[l], o == 1 ? 0xb8 : 0, o == 1 ? 7 : 64, o == 2,
						      o == 3);
			}
}

/* The engine's datagram arithmetic on a device that hands out 1..7 buffers
 * and, every fifth burst, accepts a prefix and then nothing (so the engine's
 * retries give up): the device counts the datagrams whose last fragment it
 * took (IPv4 MF clear) and every frame; the engine's packets, drops and
 * frames must agree, and packets + drops = -n. */
struct stingy {
	struct txs_nd dev; /* a device made here, not by txs_netdev_open: the library's whole struct */
	struct txs_txq *qs[1];
	uint8_t pool[8][2048];
	unsigned allocs, sends;
	bool refuse, first;
	uint64_t frames, completed;
};

static int st_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	TXS_NQ(q)->priv = TXS_ND(dev)->priv;
	return 0;
}
static void st_txq_close(struct txs_txq *q)
{
	(void)q;
}
static unsigned st_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct stingy *s = TXS_NQ(q)->priv;
	unsigned k = 1 + s->allocs++ % 7;
	if (n > k)
		n = k;
	for (unsigned i = 0; i < n; i++)
		b[i] = (struct txs_pktbuf){ .data = s->pool[i], .cap = 2048, .segs = 1 };
	s->refuse = s->allocs % 5 == 0;
	s->first = true;
	return n;
}
static unsigned st_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct stingy *s = TXS_NQ(q)->priv;
	if (s->refuse) {
		n = s->first ? (n < 1 + s->sends % 4 ? n : 1 + s->sends % 4) : 0;
		s->first = false;
	}
	s->sends++;
	for (unsigned i = 0; i < n; i++) {
		struct txs_pkt_info pi;
		enum txs_perr e = txs_parse(b[i].data, b[i].len, TXS_L2_ETH, &pi);
		assert_true(e == TXS_PERR_FRAGMENT || e == TXS_PERR_OK);
		s->frames++;
		if (!pi.mf)
			s->completed++;
	}
	return n;
}
static void st_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	(void)q, (void)b, (void)n;
}
static const struct txs_netdev_ops stingy_ops = { .name = "stingy", .txq_open = st_txq_open,
						  .txq_close = st_txq_close, .tx_alloc = st_alloc,
						  .tx_send = st_send, .tx_release = st_release };

static void engine_counts_datagrams(void **st)
{
	(void)st;
	struct stingy *s = calloc(1, sizeof(*s));
	s->dev.pub.ops = &stingy_ops;
	s->dev.pub.n_links = 1;
	s->dev.pub.mtu = 1500;
	s->dev.pub.conf.max_queues = 1;
	s->dev.pub.conf.frame_size = 1514;
	s->dev.queues = s->qs;
	s->dev.priv = s;
	struct txs_udp_gen_conf gc = { .connected = true };
	txs_addr_parse(&gc.spec.src, "198.18.0.1");
	txs_addr_parse(&gc.spec.dst, "198.18.0.2");
	gc.spec.sport = 40000;
	gc.spec.dport = 5201;
	gc.spec.payload_len = 3000; /* 3 fragments */
	const uint64_t count = 1009;
	struct txs_engine_conf ec = { .n_workers = 1, .count = count, .dev = &s->dev.pub, .gen = &txs_udp_sock_gen_ops,
				      .gen_conf = &gc, .burst = 7 };
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row r;
	txs_engine_read(e, &r);
	assert_int_equal(r.packets, s->completed);
	assert_int_equal(r.frames, s->frames);
	assert_int_equal(r.packets + r.drops, count);
	assert_true(r.drops > 0); /* the refusals did happen */
	assert_true(r.frames > 3 * r.packets); /* first fragments of dropped datagrams left */
	txs_engine_destroy(e);
	free(s->qs[0]);
	free(s);
}

static void never_cut(void **st)
{
	(void)st;
	never_cut_case(AF_INET, true, 0, 3000, 47, false);   /* 3 fragments each */
	never_cut_case(AF_INET, false, 0, 8000, 23, true);   /* 6 fragments, partial sends */
	never_cut_case(AF_INET6, true, 0, 8000, 29, true);   /* 6 IPv6 fragments */
	never_cut_case(AF_INET6, false, 0, 1452, 101, true); /* one frame each */
	never_cut_case(AF_INET, true, 1000, 5500, 61, false); /* GSO: 6 segments a call, 61 = 10 calls + 1 */
}

T_MAIN(cmocka_unit_test(matrix),
       cmocka_unit_test(errors_names),
       cmocka_unit_test(errors_sizes_and_options),
       cmocka_unit_test(zero_length_and_empty_iov),
       cmocka_unit_test(cork_rules),
       cmocka_unit_test(connect_and_flow_ids),
       cmocka_unit_test(unconnected_ids),
       cmocka_unit_test(batching_and_device),
       cmocka_unit_test(device_refuses),
       cmocka_unit_test(many_destinations),
       cmocka_unit_test(open_errors),
       cmocka_unit_test(endpoint_defaults),
       cmocka_unit_test(engine_adapter),
       cmocka_unit_test(never_cut),
       cmocka_unit_test(engine_counts_datagrams),
       cmocka_unit_test(fast_equals_core))
