/* SPDX-License-Identifier: MIT */
/* The sendmsg permutation matrix, shared by tests/unit/test_udp.c (our parser
 * reads the frames back) and tests/integration/udp_matrix.c (tshark dissects
 * them; a real kernel receives them).
 *
 *   family   {IPv4, IPv6, IPv4 via an IPv6 endpoint (IPv4-mapped)}
 * x conn     {connected, unconnected}
 * x mode     {plain (4 iovecs, one empty), corked in 1 (MORE + flush), 2, 3
 *             pieces, GSO (segment = MTU - headers)}
 * x payload  {0, 16, 1472, 1473, 8000, max (65507 / 65527)}
 * x option   {off, TOS, TTL, DF, no checksum}
 *
 * Every combination is run. The invalid ones (no checksum on IPv6, no
 * checksum with GSO, DF with a datagram over the MTU) must fail with the
 * kernel's error at the call where the kernel would fail, and emit nothing.
 * The expectation here is written from the semantics (docs/udp.md), not from
 * lib/udp's code. */
#ifndef TXS_UDP_MATRIX_H
#define TXS_UDP_MATRIX_H

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/udp.h>

enum { MX_V4, MX_V6, MX_4IN6, MX_NFAM };
enum { MX_PLAIN, MX_CORK1, MX_CORK2, MX_CORK3, MX_GSO, MX_NMODE };
enum { MX_OFF, MX_TOS, MX_TTL, MX_DF, MX_NOCSUM, MX_NOPT };
#define MX_NSIZE 6
#define MX_CASES (MX_NFAM * 2 * MX_NMODE * MX_NSIZE * MX_NOPT)

#define MX_MTU 1500u
#define MX_TOS_VAL 0xb8u /* DSCP EF */
#define MX_TTL_VAL 7u
#define MX_SPORT 40000u
#define MX_DPORT 5300u

static const char *const mx_fam_name[] = { "v4", "v6", "4in6" };
static const char *const mx_mode_name[] = { "plain", "cork1", "cork2", "cork3", "gso" };
static const char *const mx_opt_name[] = { "off", "tos", "ttl", "df", "nocsum" };

struct mx_case {
	unsigned index;
	int fam, connected, mode, size_idx, opt;
	uint32_t len;
	bool v4frames; /* frames on the wire are IPv4 */
};

/* Addresses and MACs of one run (defaults: the netns-lab link 0). */
struct mx_env {
	struct txs_addr src4, dst4, src6, dst6;
	uint8_t src_mac[6], dst_mac[6];
};

static inline void mx_env_default(struct mx_env *e)
{
	memset(e, 0, sizeof(*e));
	txs_addr_parse(&e->src4, "198.18.0.1");
	txs_addr_parse(&e->dst4, "198.18.0.2");
	txs_addr_parse(&e->src6, "2001:2::1");
	txs_addr_parse(&e->dst6, "2001:2::2");
	static const uint8_t sm[6] = { 0x02, 0, 0, 0, 0, 1 }, dm[6] = { 0x02, 0, 0, 0, 0, 2 };
	memcpy(e->src_mac, sm, 6);
	memcpy(e->dst_mac, dm, 6);
}

static inline void mx_case_get(unsigned i, struct mx_case *c)
{
	c->index = i;
	c->opt = (int)(i % MX_NOPT);
	i /= MX_NOPT;
	c->size_idx = (int)(i % MX_NSIZE);
	i /= MX_NSIZE;
	c->mode = (int)(i % MX_NMODE);
	i /= MX_NMODE;
	c->connected = (int)(i % 2 == 0);
	i /= 2;
	c->fam = (int)i;
	c->v4frames = c->fam != MX_V6;
	static const uint32_t sz[MX_NSIZE - 1] = { 0, 16, 1472, 1473, 8000 };
	c->len = c->size_idx < MX_NSIZE - 1 ? sz[c->size_idx] : c->v4frames ? TXS_UDP4_MAX_PAYLOAD : TXS_UDP6_MAX_PAYLOAD;
}

static inline uint32_t mx_hdrs(const struct mx_case *c)
{
	return (c->v4frames ? 20u : 40u) + 8u;
}

static inline uint16_t mx_gso(const struct mx_case *c)
{
	return (uint16_t)(MX_MTU - mx_hdrs(c));
}

/* Deterministic payload bytes of a case. */
static inline void mx_payload(const struct mx_case *c, uint8_t *p)
{
	uint32_t x = 0x9e3779b9u * (c->index + 1);
	for (uint32_t i = 0; i < c->len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

/* Number of calls (pieces) and the piece boundaries: pieces have odd sizes
 * where they can, to exercise odd-length checksum joins. */
static inline unsigned mx_pieces(const struct mx_case *c)
{
	return c->mode == MX_CORK2 ? 2 : c->mode == MX_CORK3 ? 3 : 1;
}

static inline uint32_t mx_cut(uint32_t len, unsigned i, unsigned k)
{
	if (i == 0)
		return 0;
	if (i >= k)
		return len;
	uint32_t b = (uint32_t)(((uint64_t)len * i) / k) | 1u;
	return b > len ? len : b;
}

/* The per-message options of a case (NULL-equivalent: set == 0). */
static inline struct txs_udp_opts mx_opts(const struct mx_case *c)
{
	struct txs_udp_opts o = { 0 };
	switch (c->opt) {
	case MX_TOS: o.set = TXS_UDP_OPT_TOS, o.tos = MX_TOS_VAL; break;
	case MX_TTL: o.set = TXS_UDP_OPT_TTL, o.ttl = MX_TTL_VAL; break;
	case MX_DF: o.set = TXS_UDP_OPT_DF, o.df = true; break;
	case MX_NOCSUM: o.set = TXS_UDP_OPT_NO_CSUM, o.no_csum = true; break;
	}
	if (c->mode == MX_GSO) {
		o.set |= TXS_UDP_OPT_GSO;
		o.gso_size = mx_gso(c);
	}
	return o;
}

/* Expected outcome: 0, or the error and the call (0-based) that returns it. */
static inline int mx_expect_err(const struct mx_case *c, unsigned *at)
{
	*at = 0;
	if (c->opt == MX_NOCSUM && !c->v4frames)
		return -EINVAL; /* IPv6 UDP always carries a checksum */
	if (c->opt == MX_NOCSUM && c->mode == MX_GSO)
		return -EINVAL; /* the kernel's udp_send_skb: GSO needs checksums */
	if (c->opt == MX_DF && c->mode != MX_GSO && c->len + mx_hdrs(c) > MX_MTU) {
		/* the piece whose cumulative length first exceeds the MTU */
		unsigned k = mx_pieces(c);
		for (unsigned i = 0; i < k; i++)
			if (mx_cut(c->len, i + 1, k) + mx_hdrs(c) > MX_MTU) {
				*at = i;
				break;
			}
		return -EMSGSIZE;
	}
	return 0;
}

/* Expected datagrams: n slices of the payload (GSO cuts it). */
static inline unsigned mx_expect_dgrams(const struct mx_case *c, uint32_t *off, uint32_t *len, unsigned max)
{
	unsigned n = 0;
	if (c->mode == MX_GSO && c->len > mx_gso(c)) {
		for (uint32_t o = 0; o < c->len && n < max; o += mx_gso(c), n++) {
			off[n] = o;
			len[n] = c->len - o < mx_gso(c) ? c->len - o : mx_gso(c);
		}
		return n;
	}
	off[0] = 0;
	len[0] = c->len;
	return 1;
}

/* Expected frames on the wire (fragments counted). */
static inline unsigned mx_expect_frames(const struct mx_case *c)
{
	if (c->mode == MX_GSO)
		return c->len > mx_gso(c) ? (c->len + mx_gso(c) - 1) / mx_gso(c) : 1;
	if (c->len + mx_hdrs(c) <= MX_MTU)
		return 1;
	uint32_t fs = c->v4frames ? (MX_MTU - 20) & ~7u : (MX_MTU - 48) & ~7u;
	return (c->len + 8 + fs - 1) / fs;
}

static inline uint8_t mx_expect_tos(const struct mx_case *c)
{
	return c->opt == MX_TOS ? MX_TOS_VAL : 0;
}

static inline uint8_t mx_expect_ttl(const struct mx_case *c)
{
	return c->opt == MX_TTL ? MX_TTL_VAL : 64;
}

/* ---- running a case -------------------------------------------------------- */

/* A test device: hands out pool buffers, passes every sent frame to sink(). */
struct mx_dev {
	struct txs_netdev dev;
	struct txs_txq q;
	uint8_t *pool;
	uint32_t buf_size;
	unsigned pool_n;
	unsigned accept_max; /* frames accepted per tx_send call; 0 = all */
	void (*sink)(void *arg, const uint8_t *frame, uint32_t len);
	void *arg;
	uint64_t sent_frames;
};

/* the test device of a queue: the one whose q it is (the queue is made here,
 * not by txs_txq_open, and has no backend data of the library's) */
static inline struct mx_dev *mx_dev_of(struct txs_txq *q)
{
	return (struct mx_dev *)(void *)((char *)q - offsetof(struct mx_dev, q));
}

static inline unsigned mx_dev_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct mx_dev *d = mx_dev_of(q);
	if (n > d->pool_n)
		n = d->pool_n;
	for (unsigned i = 0; i < n; i++) {
		b[i] = (struct txs_pktbuf){ .data = d->pool + (size_t)i * d->buf_size, .cap = d->buf_size, .segs = 1,
					    .priv = i };
		memset(b[i].data, 0xa5, d->buf_size); /* stale bytes must never leak into frames */
	}
	return n;
}

static inline unsigned mx_dev_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct mx_dev *d = mx_dev_of(q);
	if (d->accept_max && n > d->accept_max)
		n = d->accept_max;
	for (unsigned i = 0; i < n; i++) {
		if (d->sink)
			d->sink(d->arg, b[i].data, b[i].len);
		d->sent_frames++;
	}
	return n;
}

static inline void mx_dev_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	(void)q, (void)b, (void)n;
}

static const struct txs_netdev_ops mx_dev_ops = {
	.name = "mx-capture",
	.tx_alloc = mx_dev_alloc,
	.tx_send = mx_dev_send,
	.tx_release = mx_dev_release,
};

static inline int mx_dev_init(struct mx_dev *d, void (*sink)(void *, const uint8_t *, uint32_t), void *arg)
{
	memset(d, 0, sizeof(*d));
	d->buf_size = 2048;
	d->pool_n = TXS_UDP_MAX_FRAMES;
	d->pool = malloc((size_t)d->buf_size * d->pool_n);
	if (!d->pool)
		return -ENOMEM;
	d->dev.ops = &mx_dev_ops;
	d->dev.n_links = 1;
	d->dev.conf.frame_size = d->buf_size;
	d->dev.conf.max_queues = 1;
	d->q.dev = &d->dev;
	d->sink = sink;
	d->arg = arg;
	return 0;
}

static inline void mx_dev_fini(struct mx_dev *d)
{
	free(d->pool);
}

struct mx_result {
	int err;          /* first error returned, 0 if none */
	unsigned err_at;  /* call that returned it */
	unsigned frames;  /* sum of frames the calls (and the flush) reported */
	int open_err;     /* setup failure (a test bug) */
};

/* Run one case on a fresh endpoint over the test device. */
static inline void mx_run(const struct mx_case *c, const struct mx_env *e, struct mx_dev *dev, const uint8_t *p,
			  struct txs_ident *ident, struct txs_ident_core *icore, struct mx_result *r)
{
	memset(r, 0, sizeof(*r));
	struct txs_udp_conf uc = { .sport = MX_SPORT, .mtu = MX_MTU, .batch = 8, .ident = ident, .ident_core = icore };
	uc.src = c->fam == MX_V4 ? e->src4 : e->src6;
	if (c->fam == MX_4IN6)
		uc.src4 = e->src4;
	memcpy(uc.src_mac, e->src_mac, 6);
	memcpy(uc.dst_mac, e->dst_mac, 6);
	struct txs_udp_ep *ep;
	r->open_err = txs_udp_open(&ep, &dev->q, &uc);
	if (r->open_err)
		return;
	struct sockaddr_storage ss;
	socklen_t sl;
	if (c->fam == MX_4IN6 && (c->connected || c->index % 2 == 0)) {
		struct txs_addr m = { .family = AF_INET6 };
		m.bytes[10] = m.bytes[11] = 0xff;
		memcpy(m.bytes + 12, &e->dst4.v4, 4);
		sl = txs_udp_sockaddr(&ss, &m, MX_DPORT);
	} else {
		sl = txs_udp_sockaddr(&ss, c->fam == MX_V6 ? &e->dst6 : &e->dst4, MX_DPORT);
	}
	if (c->connected) {
		r->open_err = txs_udp_connect(ep, (struct sockaddr *)&ss, sl);
		if (r->open_err) {
			txs_udp_close(ep);
			return;
		}
	}
	struct txs_udp_opts o = mx_opts(c);
	unsigned k = mx_pieces(c);
	for (unsigned i = 0; i < k && !r->err; i++) {
		uint32_t a = mx_cut(c->len, i, k), b = mx_cut(c->len, i + 1, k);
		struct iovec v[4];
		size_t nv;
		if (c->mode == MX_PLAIN) {
			/* scatter-gather: 4 iovecs, the second one empty */
			uint32_t x = mx_cut(c->len, 1, 3), y = mx_cut(c->len, 2, 3);
			v[0] = (struct iovec){ (void *)p, x };
			v[1] = (struct iovec){ (void *)(p + x), 0 };
			v[2] = (struct iovec){ (void *)(p + x), y - x };
			v[3] = (struct iovec){ (void *)(p + y), c->len - y };
			nv = 4;
		} else {
			v[0] = (struct iovec){ (void *)(p + a), b - a };
			nv = 1;
		}
		struct txs_udp_msg m = { .iov = v, .iovlen = nv };
		if (!c->connected) {
			m.name = (struct sockaddr *)&ss;
			m.namelen = sl;
		}
		/* options on the first piece; the last piece of three repeats them */
		if (i == 0 || (i == 2 && k == 3))
			m.opts = &o;
		bool more = (c->mode == MX_CORK1) || i + 1 < k;
		if (more && c->mode != MX_PLAIN && c->mode != MX_GSO)
			m.flags = TXS_UDP_MORE;
		ssize_t rc = txs_udp_sendmsg(ep, &m);
		if (rc < 0) {
			r->err = (int)rc;
			r->err_at = i;
		} else {
			r->frames += m.frames;
			if ((uint32_t)rc != b - a && c->mode != MX_PLAIN)
				r->err = -EPROTO; /* wrong byte count */
			if (c->mode == MX_PLAIN && (uint32_t)rc != c->len)
				r->err = -EPROTO;
		}
	}
	int fr = txs_udp_flush(ep);
	if (fr > 0)
		r->frames += (unsigned)fr;
	else if (fr < 0 && !r->err)
		r->err = fr;
	txs_udp_close(ep);
}

#endif
