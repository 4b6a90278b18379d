/* SPDX-License-Identifier: MIT */
/* UDP endpoints with sendmsg semantics (include/txscale/udp.h, docs/udp.md).
 *
 * The hot path is txs_udp_sendmsg() for a datagram that fits one frame:
 * destination template (connected, or a direct-mapped cache hit), one batch
 * slot, header copy, payload copy, one pass of checksum over the payload, and
 * the per-message words (lengths, ID, TOS/TTL/DF, checksums) from partial
 * sums kept in the template. Corking, GSO and fragmentation are out of line. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common/alloc.h"
#include "common/counters.h"
#include "pkt/sockaddr.h"
#include "udp_priv.h"

#define SIN6_LEN_RFC2133 24 /* the kernel accepts sockaddr_in6 without scope id */

/* ---- the running kernel's UDP_MAX_SEGMENTS ---------------------------------- */

TXS_API unsigned txs_udp_kernel_max_segs(void)
{
	return txs_netdev_udp_max_segs(); /* the udp device probes it */
}

/* ---- destinations ---------------------------------------------------------- */

enum { NAME_NONE = 1 };

/* Resolve a sockaddr into a key, with the kernel's answers for bad names.
 * Returns 0, NAME_NONE (no destination: NULL or AF_UNSPEC), or -errno. */
static inline int name_key(const struct txs_udp_ep *ep, const struct sockaddr *sa, socklen_t len, struct udp_key *k)
{
	if (!sa)
		return NAME_NONE;
	if (len < (socklen_t)offsetof(struct sockaddr, sa_data))
		return -EINVAL;
	switch (sa->sa_family) {
	case AF_INET: {
		if (len < (socklen_t)sizeof(struct sockaddr_in))
			return -EINVAL;
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
		uint8_t m[16] = { [10] = 0xff, [11] = 0xff }; /* ::ffff:a.b.c.d */
		memcpy(m + 12, &s->sin_addr, 4);
		memcpy(&k->a0, m, 8);
		memcpy(&k->a1, m + 8, 8);
		k->port = s->sin_port;
		k->v4 = true;
		if (s->sin_addr.s_addr == 0)
			return -EINVAL;
		break;
	}
	case AF_INET6: {
		if (!ep->v6)
			return -EAFNOSUPPORT;
		if (len < SIN6_LEN_RFC2133)
			return -EINVAL;
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
		memcpy(&k->a0, s->sin6_addr.s6_addr, 8);
		memcpy(&k->a1, s->sin6_addr.s6_addr + 8, 8);
		k->port = s->sin6_port;
		k->v4 = IN6_IS_ADDR_V4MAPPED(&s->sin6_addr);
		if (IN6_IS_ADDR_UNSPECIFIED(&s->sin6_addr) || (k->v4 && s->sin6_addr.s6_addr32[3] == 0))
			return -EINVAL;
		break;
	}
	case AF_UNSPEC:
		return NAME_NONE;
	default:
		return ep->v6 ? -EINVAL : -EAFNOSUPPORT;
	}
	if (k->port == 0)
		return -EINVAL;
	if (k->v4 && ep->v6 && !ep->have_src4)
		return -ENETUNREACH; /* the kernel's answer on an IPV6_V6ONLY socket */
	return 0;
}

static void dst_build(const struct txs_udp_ep *ep, struct udp_dst *d, const struct udp_key *k)
{
	memset(d, 0, sizeof(*d));
	d->a0 = k->a0;
	d->a1 = k->a1;
	d->dport = k->port;
	d->v4 = k->v4;
	d->valid = 1;
	uint8_t *f = d->hdr;
	memcpy(f, ep->conf.dst_mac, TXS_ETH_ALEN);
	memcpy(f + TXS_ETH_ALEN, ep->conf.src_mac, TXS_ETH_ALEN);
	uint16_t sport = htons(ep->conf.sport);
	uint8_t ports[4];
	memcpy(ports, &sport, 2);
	memcpy(ports + 2, &k->port, 2);
	if (k->v4) {
		txs_put_be16(f + 12, TXS_ETHERTYPE_IPV4);
		uint32_t saddr = ep->v6 ? ep->conf.src4.v4.s_addr : ep->conf.src.v4.s_addr;
		uint32_t daddr;
		memcpy(&daddr, (const uint8_t *)&k->a1 + 4, 4);
		uint8_t *ip = f + UDP_L3_OFF;
		ip[0] = 0x45;
		ip[9] = TXS_IPPROTO_UDP;
		memcpy(ip + 12, &saddr, 4);
		memcpy(ip + 16, &daddr, 4);
		d->ip_sum = txs_csum_fold16(txs_csum_partial(ip + 12, 8, 0));
		memcpy(f + UDP4_L4_OFF, ports, 4);
		d->udp_sum = txs_csum_partial(ports, 4, txs_pseudo4_sum(saddr, daddr, 0));
		d->id_hash = txs_ident_hash4(ep->ident, daddr, saddr, TXS_IPPROTO_UDP);
	} else {
		txs_put_be16(f + 12, TXS_ETHERTYPE_IPV6);
		uint8_t *ip = f + UDP_L3_OFF;
		ip[0] = 0x60;
		ip[6] = TXS_IPPROTO_UDP;
		memcpy(ip + 8, ep->conf.src.bytes, 16);
		memcpy(ip + 24, &k->a0, 8);
		memcpy(ip + 32, &k->a1, 8);
		memcpy(f + UDP6_L4_OFF, ports, 4);
		d->udp_sum = txs_csum_partial(ports, 4, txs_pseudo6_sum(ip + 8, ip + 24, 0));
	}
}

static inline unsigned key_slot(const struct txs_udp_ep *ep, const struct udp_key *k)
{
	uint64_t h = (k->a0 ^ k->a1 ^ (k->a1 >> 29) ^ k->port) * 0x9e3779b97f4a7c15ull;
	return (unsigned)(h >> 40) & ep->cache_mask;
}

static inline const struct udp_dst *dst_lookup(struct txs_udp_ep *ep, const struct udp_key *k)
{
	struct udp_dst *d = &ep->cache[key_slot(ep, k)];
	if (TXS_LIKELY(d->valid && d->a0 == k->a0 && d->a1 == k->a1 && d->dport == k->port))
		return d;
	dst_build(ep, d, k);
	return d;
}

static inline bool dst_same(const struct udp_dst *d, const struct udp_key *k)
{
	return d->a0 == k->a0 && d->a1 == k->a1 && d->dport == k->port;
}

/* ---- options and limits ---------------------------------------------------- */

static inline void eff_apply(struct udp_eff *o, const struct txs_udp_opts *x)
{
	unsigned s = x->set;
	if (s & TXS_UDP_OPT_TOS)
		o->tos = x->tos;
	if (s & TXS_UDP_OPT_TTL) {
		o->ttl = x->ttl;
		o->ttl_set = 1;
	}
	if (s & TXS_UDP_OPT_DF)
		o->df = x->df;
	if (s & TXS_UDP_OPT_NO_CSUM)
		o->no_csum = x->no_csum;
	if (s & TXS_UDP_OPT_GSO)
		o->gso = x->gso_size;
}

/* Options given on an append must match the pending datagram's. */
static bool eff_matches(const struct udp_eff *p, const struct txs_udp_opts *x)
{
	unsigned s = x->set;
	return !((s & TXS_UDP_OPT_TOS && x->tos != p->tos) || (s & TXS_UDP_OPT_TTL && x->ttl != p->ttl) ||
		 (s & TXS_UDP_OPT_DF && x->df != p->df) || (s & TXS_UDP_OPT_NO_CSUM && x->no_csum != p->no_csum) ||
		 (s & TXS_UDP_OPT_GSO && x->gso_size != p->gso));
}

/* The checks of one datagram of len payload bytes, in documented order. */
static inline int dgram_check(const struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o,
			      size_t len)
{
	uint32_t hdrs = (d->v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
	if (len > (d->v4 ? TXS_UDP4_MAX_PAYLOAD : TXS_UDP6_MAX_PAYLOAD))
		return -EMSGSIZE;
	if (TXS_UNLIKELY(d->v4 && o->ttl_set && o->ttl == 0))
		return -EINVAL;
	if (TXS_UNLIKELY(o->no_csum && !d->v4))
		return -EINVAL;
	if (TXS_UNLIKELY(o->gso)) {
		/* the kernel's udp_send_skb(): the first segment (or the whole
		 * payload, when it fits one) must fit the MTU; at most
		 * UDP_MAX_SEGMENTS segments; checksums on */
		if ((len < o->gso ? len : o->gso) + hdrs > ep->mtu)
			return -EMSGSIZE;
		if (len > (size_t)o->gso * ep->max_segs || o->no_csum)
			return -EINVAL;
		return 0;
	}
	if (o->df && len + hdrs > ep->mtu)
		return -EMSGSIZE;
	return 0;
}

/* ---- the batch ------------------------------------------------------------- */

static void batch_push(struct txs_udp_ep *ep)
{
	if (ep->borrowed)
		return;
	struct txs_txq *q = ep->q;
	unsigned n = ep->nfill, sent = 0, tries = 0;
	while (sent < n) {
		sent += txs_txq_send(q, ep->b + sent, n - sent);
		if (sent == n || ++tries > UDP_TX_RETRIES)
			break;
		txs_txq_flush(q);
	}
	if (sent < n) {
		TXS_STAT_ADD(ep->st.drops, n - sent);
		txs_txq_release(q, ep->b + sent, n - sent);
	}
	if (ep->navail > n)
		txs_txq_release(q, ep->b + n, ep->navail - n);
	ep->navail = ep->nfill = 0;
}

static __attribute__((noinline, cold)) int batch_refill(struct txs_udp_ep *ep, unsigned k)
{
	if (ep->borrowed)
		return -ENOBUFS;
	batch_push(ep);
	unsigned want = k > ep->batch ? k : ep->batch;
	for (unsigned t = 0; t < UDP_ALLOC_TRIES; t++) {
		unsigned n = txs_txq_alloc(ep->q, ep->own, want);
		if (n >= k) {
			for (unsigned i = 0; i < n; i++) {
				if (ep->own[i].cap < ep->frame_max) {
					txs_txq_release(ep->q, ep->own, n);
					return -EMSGSIZE;
				}
			}
			ep->navail = n;
			return 0;
		}
		txs_txq_release(ep->q, ep->own, n);
		txs_txq_flush(ep->q);
	}
	return -ENOBUFS;
}

/* k consecutive batch slots, or NULL (*err set). Writes nothing. */
static inline struct txs_pktbuf *batch_get(struct txs_udp_ep *ep, unsigned k, int *err)
{
	if (TXS_UNLIKELY(ep->nfill + k > ep->navail)) {
		int rc = batch_refill(ep, k);
		if (rc < 0) {
			*err = rc;
			return NULL;
		}
	}
	return ep->b + ep->nfill;
}

static inline void batch_commit(struct txs_udp_ep *ep, unsigned k)
{
	ep->nfill += k;
	if (ep->nfill >= ep->batch && !ep->borrowed)
		batch_push(ep);
}

void udp_ep_borrow(struct txs_udp_ep *ep, struct txs_pktbuf *b, unsigned n)
{
	ep->b = b;
	ep->navail = n;
	ep->nfill = 0;
	ep->borrowed = true;
}

unsigned udp_ep_unborrow(struct txs_udp_ep *ep)
{
	unsigned n = ep->nfill;
	ep->b = ep->own;
	ep->navail = ep->nfill = 0;
	ep->borrowed = false;
	return n;
}

/* ---- emitting one datagram -------------------------------------------------- */

/* IPv4 ID of a datagram (or the first of a block of segs): the flow counter
 * for the connected destination, else the keyed bucket; unconnected DF
 * datagrams (never fragmented: DF and too big is -EMSGSIZE) get 0 when the
 * allocator says so (RFC 6864, the kernel's ip_select_ident_segs). */
static inline uint16_t pick_id(struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o, bool flow,
			       unsigned segs)
{
	if (flow)
		return txs_ident_flow_reserve(&ep->flow, segs);
	if (o->df && ep->df_zero)
		return 0;
	return txs_ident_reserve(ep->icore, d->id_hash, segs);
}

static inline size_t iov_copy(uint8_t *dst, const struct iovec *iov, size_t n)
{
	size_t off = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(dst + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	return off;
}

/* Single frame: the benchmarked path. */
static inline __attribute__((always_inline)) int emit_one(struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o, bool flow,
			   const struct iovec *iov, size_t iovlen, size_t len)
{
	int err = -ENOBUFS;
	struct txs_pktbuf *b = batch_get(ep, 1, &err);
	if (TXS_UNLIKELY(!b))
		return err;
	uint8_t *f = b->data;
	uint32_t ulen = (uint32_t)len + TXS_UDP_HLEN;
	if (d->v4) {
		memcpy(f, d->hdr, UDP4_PAY_OFF);
		uint8_t *p = f + UDP4_PAY_OFF;
		/* runts (payload < 18): zero bytes 42..60 first, constant-size
		 * stores instead of a byte loop */
		if (len < TXS_ETH_MIN_FRAME - UDP4_PAY_OFF)
			memset(p, 0, TXS_ETH_MIN_FRAME - UDP4_PAY_OFF);
		if (TXS_LIKELY(iovlen == 1))
			memcpy(p, iov[0].iov_base, len);
		else
			iov_copy(p, iov, iovlen);
		uint64_t ps = o->no_csum ? 0 : udp_payload_sum(p, len);
		uint16_t id = pick_id(ep, d, o, flow, 1);
		udp_put_ip4(f, d, o, TXS_IPV4_HLEN + ulen, id, o->df ? TXS_IPV4_DF : 0);
		udp_put_udp(f + UDP4_L4_OFF, d, o, ulen, ps);
		uint32_t fl = UDP4_PAY_OFF + (uint32_t)len;
		b->len = fl < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : fl;
		b->l4_off = UDP4_L4_OFF;
	} else {
		memcpy(f, d->hdr, UDP6_PAY_OFF);
		uint8_t *p = f + UDP6_PAY_OFF;
		if (TXS_LIKELY(iovlen == 1))
			memcpy(p, iov[0].iov_base, len);
		else
			iov_copy(p, iov, iovlen);
		uint64_t ps = udp_payload_sum(p, len);
		udp_put_ip6(f, ep, o, ulen, TXS_IPPROTO_UDP);
		udp_put_udp(f + UDP6_L4_OFF, d, o, ulen, ps);
		b->len = UDP6_PAY_OFF + (uint32_t)len; /* >= 62: never a runt */
		b->l4_off = UDP6_L4_OFF;
	}
	b->segs = 1;
	b->gso_size = 0;
	batch_commit(ep, 1);
	TXS_STAT_ADD(ep->st.datagrams, 1);
	TXS_STAT_ADD(ep->st.frames, 1);
	TXS_STAT_ADD(ep->st.bytes, len);
	return 1;
}

static int stage_alloc(struct txs_udp_ep *ep)
{
	if (!ep->stage) {
		ep->stage = malloc(TXS_UDP6_MAX_PAYLOAD);
		if (!ep->stage)
			return -ENOMEM;
	}
	return 0;
}

/* GSO and fragments: a contiguous payload (linearised into stage if needed). */
static __attribute__((noinline)) int emit_multi(struct txs_udp_ep *ep, const struct udp_dst *d,
					       const struct udp_eff *o, bool flow, const struct iovec *iov,
					       size_t iovlen, size_t len)
{
	const uint8_t *p;
	if (iovlen == 1) {
		p = iov[0].iov_base;
	} else {
		int rc = stage_alloc(ep);
		if (rc < 0)
			return rc;
		iov_copy(ep->stage, iov, iovlen);
		p = ep->stage;
	}
	unsigned n = udp_frames_needed(ep, d, o, len);
	int err = -ENOBUFS;
	struct txs_pktbuf *fb = batch_get(ep, n, &err);
	if (!fb)
		return err;
	if (o->gso && len > o->gso) {
		uint16_t id = d->v4 ? pick_id(ep, d, o, flow, n) : 0;
		udp_emit_gso(ep, fb, n, d, o, id, p, len);
		TXS_STAT_ADD(ep->st.datagrams, n);
	} else if (d->v4) {
		udp_emit_frag4(ep, fb, n, d, o, pick_id(ep, d, o, flow, 1), p, len);
		TXS_STAT_ADD(ep->st.datagrams, 1);
	} else {
		udp_emit_frag6(ep, fb, n, d, o, txs_ident_v6_frag_id(ep->icore), p, len);
		TXS_STAT_ADD(ep->st.datagrams, 1);
	}
	TXS_STAT_ADD(ep->st.frames, n);
	TXS_STAT_ADD(ep->st.bytes, len);
	batch_commit(ep, n);
	return (int)n;
}

static inline __attribute__((always_inline)) int emit(struct txs_udp_ep *ep, const struct udp_dst *d, const struct udp_eff *o, bool flow,
		       const struct iovec *iov, size_t iovlen, size_t len)
{
	uint32_t hdrs = d->v4 ? TXS_IPV4_HLEN + TXS_UDP_HLEN : TXS_IPV6_HLEN + TXS_UDP_HLEN;
	if (TXS_LIKELY(len + hdrs <= ep->mtu && (!o->gso || len <= o->gso)))
		return emit_one(ep, d, o, flow, iov, iovlen, len);
	return emit_multi(ep, d, o, flow, iov, iovlen, len);
}

/* ---- corking ------------------------------------------------------------------ */

static int pending_emit(struct txs_udp_ep *ep)
{
	struct iovec v = { ep->stage, ep->pend_len };
	int rc = emit(ep, &ep->pend_d, &ep->pend_o, ep->pend_flow, &v, 1, ep->pend_len);
	ep->pending = false;
	ep->pend_len = 0;
	return rc;
}

static void pending_discard(struct txs_udp_ep *ep)
{
	ep->pending = false;
	ep->pend_len = 0;
}

static __attribute__((noinline)) ssize_t cork_path(struct txs_udp_ep *ep, struct txs_udp_msg *m, size_t len)
{
	struct udp_key k;
	int rc = name_key(ep, m->name, m->namelen, &k);
	if (rc < 0)
		return rc;
	if (!ep->pending) {
		/* the first piece: it fixes destination and options */
		const struct udp_dst *d;
		bool flow = rc == NAME_NONE;
		if (flow) {
			if (!ep->connected)
				return -EDESTADDRREQ;
			d = &ep->conn;
		} else {
			d = dst_lookup(ep, &k);
		}
		struct udp_eff o = ep->def;
		if (m->opts)
			eff_apply(&o, m->opts);
		rc = dgram_check(ep, d, &o, len);
		if (rc < 0)
			return rc;
		rc = stage_alloc(ep);
		if (rc < 0)
			return rc;
		ep->pend_d = *d;
		ep->pend_o = o;
		ep->pend_flow = flow;
		ep->pend_len = 0;
		ep->pending = true;
	} else {
		/* an append: may repeat the destination and options, not change them */
		if (rc == 0) {
			if (k.v4 != ep->pend_d.v4)
				return -EAFNOSUPPORT;
			if (!dst_same(&ep->pend_d, &k))
				return -EINVAL;
		}
		if (m->opts && !eff_matches(&ep->pend_o, m->opts))
			return -EINVAL;
		rc = dgram_check(ep, &ep->pend_d, &ep->pend_o, ep->pend_len + len);
		if (rc < 0) {
			pending_discard(ep);
			return rc;
		}
	}
	ep->pend_len += iov_copy(ep->stage + ep->pend_len, m->iov, m->iovlen);
	if (m->flags & TXS_UDP_MORE)
		return (ssize_t)len;
	rc = pending_emit(ep);
	if (rc < 0)
		return rc;
	m->frames = (unsigned)rc;
	return (ssize_t)len;
}

/* ---- public ------------------------------------------------------------------- */

TXS_API ssize_t txs_udp_sendmsg(struct txs_udp_ep *ep, struct txs_udp_msg *m)
{
	m->frames = 0;
	ssize_t rc;
	size_t len = 0;
	if (TXS_UNLIKELY(m->flags & ~TXS_UDP_MORE)) {
		rc = -EOPNOTSUPP;
		goto fail;
	}
	for (size_t i = 0; i < m->iovlen; i++) {
		if (TXS_UNLIKELY(!m->iov[i].iov_base && m->iov[i].iov_len)) {
			rc = -EFAULT;
			goto fail;
		}
		len += m->iov[i].iov_len;
		if (TXS_UNLIKELY(len > 0xffff)) {
			rc = -EMSGSIZE;
			goto fail;
		}
	}
	if (TXS_UNLIKELY(ep->pending | (m->flags & TXS_UDP_MORE))) {
		rc = cork_path(ep, m, len);
		if (rc < 0)
			goto fail;
		TXS_STAT_ADD(ep->st.calls, 1);
		return rc;
	}
	const struct udp_dst *d;
	bool flow;
	struct udp_key k;
	int nr = name_key(ep, m->name, m->namelen, &k);
	if (nr == NAME_NONE) {
		if (TXS_UNLIKELY(!ep->connected)) {
			rc = -EDESTADDRREQ;
			goto fail;
		}
		d = &ep->conn;
		flow = true;
	} else if (TXS_LIKELY(nr == 0)) {
		d = dst_lookup(ep, &k);
		flow = false;
	} else {
		rc = nr;
		goto fail;
	}
	if (TXS_LIKELY(!m->opts && (int64_t)len <= ep->fast_len[d->v4])) {
		/* endpoint defaults, one frame: every check already holds */
		rc = emit_one(ep, d, &ep->def, flow, m->iov, m->iovlen, len);
	} else {
		struct udp_eff o = ep->def;
		if (m->opts)
			eff_apply(&o, m->opts);
		rc = dgram_check(ep, d, &o, len);
		if (TXS_UNLIKELY(rc < 0))
			goto fail;
		rc = emit(ep, d, &o, flow, m->iov, m->iovlen, len);
	}
	if (TXS_UNLIKELY(rc < 0))
		goto fail;
	m->frames = (unsigned)rc;
	TXS_STAT_ADD(ep->st.calls, 1);
	return (ssize_t)len;
fail:
	TXS_STAT_ADD(ep->st.errors, 1);
	return rc;
}

TXS_API ssize_t txs_udp_sendto(struct txs_udp_ep *ep, const void *buf, size_t len, unsigned flags,
			       const struct sockaddr *name, socklen_t namelen)
{
	struct iovec v = { (void *)buf, len };
	struct txs_udp_msg m = { .name = name, .namelen = namelen, .iov = &v, .iovlen = 1, .flags = flags };
	return txs_udp_sendmsg(ep, &m);
}

TXS_API int txs_udp_flush(struct txs_udp_ep *ep)
{
	int rc = 0;
	if (ep->pending)
		rc = pending_emit(ep);
	if (!ep->borrowed) {
		batch_push(ep);
		txs_txq_flush(ep->q);
	}
	return rc;
}

TXS_API size_t txs_udp_pending(const struct txs_udp_ep *ep)
{
	return ep->pending ? ep->pend_len : 0;
}

TXS_API void txs_udp_stats(const struct txs_udp_ep *ep, struct txs_udp_stats *out)
{
	TXS_COUNTERS(read, out, &ep->st);
}

TXS_API int txs_udp_connect(struct txs_udp_ep *ep, const struct sockaddr *name, socklen_t namelen)
{
	struct udp_key k;
	int rc = name_key(ep, name, namelen, &k);
	if (rc < 0)
		return rc;
	if (rc == NAME_NONE) {
		if (!name)
			return -EINVAL;
		ep->connected = false; /* AF_UNSPEC: disconnect */
		return 0;
	}
	dst_build(ep, &ep->conn, &k);
	txs_ident_flow_init(ep->icore, &ep->flow);
	ep->connected = true;
	return 0;
}

TXS_API socklen_t txs_udp_sockaddr(struct sockaddr_storage *ss, const struct txs_addr *a, uint16_t port)
{
	return txs_sockaddr_set(ss, a->family, a, port);
}

TXS_API int txs_udp_open(struct txs_udp_ep **out, struct txs_txq *q, const struct txs_udp_conf *conf)
{
	*out = NULL;
	const struct txs_udp_conf *c = conf;
	if (!q || !c || (c->src.family != AF_INET && c->src.family != AF_INET6) || c->sport == 0)
		return -EINVAL;
	bool v6 = c->src.family == AF_INET6;
	if (c->src4.family && (!v6 || c->src4.family != AF_INET))
		return -EINVAL;
	uint32_t mtu = c->mtu ? c->mtu : 1500;
	if (mtu > 65535 || mtu < (v6 ? 1280u : 576u))
		return -EINVAL;
	unsigned batch = c->batch ? c->batch : 32;
	unsigned cache = c->dst_cache ? c->dst_cache : 64;
	if (batch > TXS_UDP_MAX_FRAMES || cache > 4096 || (cache & (cache - 1)))
		return -EINVAL;
	if ((c->ident == NULL) != (c->ident_core == NULL))
		return -EINVAL;
	if (c->defaults.set & ~TXS_UDP_OPT_ALL || c->max_segs > TXS_UDP_MAX_SEGS)
		return -EINVAL;
	uint32_t frame_max = TXS_ETH_HLEN + mtu;
	if (q->dev->conf.frame_size < frame_max || q->dev->conf.frame_size < 64)
		return -EINVAL;

	struct txs_udp_ep *ep = txs_zalloc_line(sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->cache = txs_zalloc_line(sizeof(*ep->cache) * cache);
	if (!ep->cache) {
		free(ep);
		return -ENOMEM;
	}
	ep->cache_mask = cache - 1;
	ep->conf = *c;
	ep->q = q;
	ep->v6 = v6;
	ep->have_src4 = c->src4.family == AF_INET;
	ep->mtu = mtu;
	ep->max_segs = c->max_segs ? c->max_segs : txs_udp_kernel_max_segs();
	ep->frame_max = frame_max;
	ep->batch = batch;
	ep->b = ep->own;
	ep->def = (struct udp_eff){ .ttl = 64 };
	eff_apply(&ep->def, &c->defaults);
	ep->def.ttl_set = 0; /* a socket-level TTL of 0 means "default" */
	if (ep->def.ttl == 0)
		ep->def.ttl = 64;
	if (c->ident) {
		ep->ident = c->ident;
		ep->icore = c->ident_core;
	} else {
		struct txs_ident_conf ic = { .max_cores = 1 };
		int rc = txs_ident_create(&ep->ident, &ic);
		if (rc == 0)
			rc = txs_ident_core_open(ep->ident, 0, &ep->icore);
		if (rc < 0) {
			txs_ident_destroy(ep->ident);
			free(ep->cache);
			free(ep);
			return rc;
		}
		ep->own_ident = true;
	}
	ep->df_zero = txs_ident_df_zero(ep->ident);
	/* payloads that take the unchecked path with the defaults: one frame,
	 * no GSO, and (IPv6 frames) no checksum-off to refuse */
	for (int v4 = 0; v4 < 2; v4++) {
		uint32_t hdrs = (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) + TXS_UDP_HLEN;
		bool ok = !ep->def.gso && (v4 || !ep->def.no_csum);
		ep->fast_len[v4] = ok ? (int64_t)(mtu - hdrs) : -1;
	}
	*out = ep;
	return 0;
}

TXS_API void txs_udp_close(struct txs_udp_ep *ep)
{
	if (!ep)
		return;
	pending_discard(ep);
	if (!ep->borrowed) {
		batch_push(ep);
		txs_txq_flush(ep->q);
	}
	if (ep->own_ident) {
		txs_ident_core_close(ep->icore);
		txs_ident_destroy(ep->ident);
	}
	free(ep->stage);
	free(ep->cache);
	free(ep);
}
