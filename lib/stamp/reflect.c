/* SPDX-License-Identifier: MIT */
/* The STAMP session-reflector on UDP sockets (docs/stamp.md): one socket
 * per worker thread, SO_REUSEPORT spreading senders over them (a sender's
 * 4-tuple always lands on the same worker, so each worker keeps its own
 * sessions' sequence numbers and nothing per packet is shared). Batches of
 * recvmmsg with the kernel's receive stamp, TTL and TOS in the ancillary
 * data, answers built by txs_stamp_reflect, sent with sendmmsg from the
 * address each datagram reached, with the DSCP to reflect. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <linux/sock_diag.h>
#include <sodium.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <txscale/stamp.h>
#include "common/alloc.h"
#include "stamp_priv.h"

#define BATCH 32
#define CMSG_ROOM 256
#define MAX_WORKERS 64
#define PROBE 16

struct sess {
	uint8_t addr[16];
	uint16_t port, ssid;
	uint8_t used;
	uint64_t last_ns;
	struct txs_stamp_sess_ctr ctr;
};

struct wstats {
	uint64_t rx, reflected, runts, bad_mac, send_errors, tlv_unknown, tlv_malformed, tlv_bad_hmac, sessions,
		evicted, kernel_ts;
};

struct worker {
	struct txs_stamp_refl *r;
	int fd;
	pthread_t th;
	bool started;
	struct sess *tab;
	unsigned tab_n; /* power of two */
	uint64_t idle_ns;  /* conf idle_s in ns */
	struct sess *last; /* the last packet's session: a sender's packets come in runs */
	struct wstats st;
	uint8_t in[BATCH][TXS_STAMP_MAX_LEN + 1]; /* the replies are built in place */
	TXS_CACHE_GUARD;
};

struct txs_stamp_refl {
	struct txs_stamp_refl_conf c;
	unsigned n;
	uint16_t port;
	int family;
	int stop;
	uint64_t seed;
	struct worker *w[MAX_WORKERS];
};

uint16_t stamp_clock_err(bool *synced)
{
	struct timex tx = { 0 };
	int st = adjtimex(&tx);
	*synced = st >= 0 && st != TIME_ERROR && !(tx.status & STA_UNSYNC);
	/* the estimated error (us; the maximum when not synchronized) as
	 * Multiplier * 2^(Scale - 32) s, the multiplier 1..255 */
	double e = (double)(*synced ? tx.esterror : tx.maxerror) * 1e-6;
	if (st < 0 || e <= 0)
		e = 1e-3;
	unsigned scale = 0;
	double mult = e * 4294967296.0; /* e / 2^-32 */
	while (mult > 255.0 && scale < 63) {
		mult /= 2;
		scale++;
	}
	unsigned m = (unsigned)(mult + 0.999);
	if (m < 1)
		m = 1;
	if (m > 255)
		m = 255;
	return (uint16_t)((*synced ? TXS_STAMP_ERR_S : 0) | scale << 8 | m);
}

static int set_int(int fd, int level, int opt, int v)
{
	return setsockopt(fd, level, opt, &v, sizeof(v));
}

/* Our sockets share the port with SO_REUSEPORT, which would let a second
 * reflector (another process of this user) join the group silently and
 * take part of the senders: a socket without it, bound first, finds
 * anyone already there. 0, or -EADDRINUSE with the line. */
static int port_free(const struct txs_stamp_refl *r, const struct sockaddr_storage *ss, socklen_t sl, char *err,
		     size_t errlen)
{
	int fam = ss->ss_family;
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return 0; /* open_sock says why */
	if (fam == AF_INET6)
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, r->c.bind ? 1 : 0);
	int rc = bind(fd, (const struct sockaddr *)ss, sl) < 0 && errno == EADDRINUSE ? -EADDRINUSE : 0;
	close(fd);
	if (rc)
		snprintf(err, errlen, "port %u is in use (another reflector, or a server with --stamp, already listens "
			 "there)", ntohs(fam == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
						     : ((const struct sockaddr_in6 *)ss)->sin6_port));
	return rc;
}

static int open_sock(const struct txs_stamp_refl *r, const struct sockaddr_storage *ss, socklen_t sl, char *err,
		     size_t errlen)
{
	int fam = ss->ss_family;
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0) {
		int e = -errno;
		snprintf(err, errlen, "socket: %s", strerror(-e));
		return e;
	}
	set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
	set_int(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
	/* room for a burst while this thread is off its CPU: past rmem_max with CAP_NET_ADMIN */
	if (set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20) < 0)
		set_int(fd, SOL_SOCKET, SO_RCVBUF, 8 << 20);
	set_int(fd, SOL_SOCKET, SO_SNDBUF, 4 << 20);
	/* IPv4 (and IPv4-mapped on a dual-stack socket): TTL, TOS, the address reached */
	set_int(fd, IPPROTO_IP, IP_RECVTTL, 1);
	set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
	if (!r->c.bind) /* every address: the reply must leave from the one the request reached */
		set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
	if (fam == AF_INET6) {
		set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, r->c.bind ? 1 : 0);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1);
		set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		if (!r->c.bind)
			set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
	}
	if (bind(fd, (const struct sockaddr *)ss, sl) < 0) {
		int e = -errno;
		char a[INET6_ADDRSTRLEN] = "?";
		const void *ap = fam == AF_INET ? (const void *)&((const struct sockaddr_in *)ss)->sin_addr
						: (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;
		inet_ntop(fam, ap, a, sizeof(a));
		snprintf(err, errlen, "bind %s port %u: %s", a,
			 ntohs(fam == AF_INET ? ((const struct sockaddr_in *)ss)->sin_port
					      : ((const struct sockaddr_in6 *)ss)->sin6_port),
			 strerror(-e));
		close(fd);
		return e;
	}
	return fd;
}

int txs_stamp_refl_open(const struct txs_stamp_refl_conf *c, struct txs_stamp_refl **out, char *err, size_t errlen)
{
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	*out = NULL;
	unsigned n = c->threads ? c->threads : 1;
	if (n > MAX_WORKERS) {
		snprintf(err, errlen, "%u reflector threads: at most %d", n, MAX_WORKERS);
		return -EINVAL;
	}
	struct sockaddr_storage ss;
	socklen_t sl;
	memset(&ss, 0, sizeof(ss));
	if (c->bind) {
		struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_DGRAM };
		struct addrinfo *ai = NULL;
		if (getaddrinfo(c->bind, NULL, &hints, &ai) || !ai) {
			snprintf(err, errlen, "bind address '%s': not a numeric IPv4 or IPv6 address", c->bind);
			return -EINVAL;
		}
		memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
		sl = ai->ai_addrlen;
		freeaddrinfo(ai);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		sl = sizeof(*s6);
		int probe = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (probe < 0) { /* no IPv6 here: IPv4 only */
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			memset(&ss, 0, sizeof(ss));
			s4->sin_family = AF_INET;
			sl = sizeof(*s4);
		} else {
			close(probe);
		}
	}
	struct txs_stamp_refl *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = *c;
	r->n = n;
	r->family = ss.ss_family;
	if (!r->c.err_est)
		r->c.err_est = stamp_clock_err(&r->c.sync_known);
	if (getrandom(&r->seed, sizeof(r->seed), 0) != sizeof(r->seed))
		r->seed = txs_now_mono_ns() * 0x9e3779b97f4a7c15ull;
	unsigned tab_n = 1;
	while (tab_n < (c->max_sessions ? c->max_sessions : 4096) && tab_n < (1u << 24))
		tab_n <<= 1;
	uint16_t port = c->port;
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = txs_zalloc_line(sizeof(*w));
		if (!w || !(w->tab = calloc(tab_n, sizeof(*w->tab)))) {
			free(w);
			txs_stamp_refl_close(r);
			return -ENOMEM;
		}
		w->fd = -1;
		w->r = r;
		w->tab_n = tab_n;
		w->idle_ns = (uint64_t)((c->idle_s > 0 ? c->idle_s : 300.0) * 1e9);
		r->w[i] = w;
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons(port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		int fd = i == 0 && port ? port_free(r, &ss, sl, err, errlen) : 0;
		if (fd == 0)
			fd = open_sock(r, &ss, sl, err, errlen);
		if (fd < 0) {
			txs_stamp_refl_close(r);
			return fd;
		}
		w->fd = fd;
		if (!port) {
			struct sockaddr_storage b;
			socklen_t bl = sizeof(b);
			getsockname(fd, (struct sockaddr *)&b, &bl);
			port = ntohs(b.ss_family == AF_INET ? ((struct sockaddr_in *)&b)->sin_port
							    : ((struct sockaddr_in6 *)&b)->sin6_port);
		}
	}
	r->port = port;
	*out = r;
	return 0;
}

uint16_t txs_stamp_refl_port(const struct txs_stamp_refl *r)
{
	return r->port;
}

/* ---- sessions ------------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* The sender's counters: (address, port, SSID); found, made, or the
 * stalest of the probe window forgotten for it. */
static struct txs_stamp_sess_ctr *session(struct worker *w, const uint8_t addr[16], uint16_t port, uint16_t ssid,
					  uint64_t now)
{
	uint64_t idle = w->idle_ns;
	struct sess *l = w->last;
	if (l && l->port == port && l->ssid == ssid && !memcmp(l->addr, addr, 16)) {
		if (now - l->last_ns > idle) /* a new session on an old 4-tuple */
			memset(&l->ctr, 0, sizeof(l->ctr));
		l->last_ns = now;
		return &l->ctr;
	}
	uint64_t a0, a1;
	memcpy(&a0, addr, 8);
	memcpy(&a1, addr + 8, 8);
	uint64_t h = mix(a0 ^ w->r->seed) ^ mix(a1 + ((uint64_t)port << 16 | ssid));
	struct sess *victim = NULL;
	for (unsigned i = 0; i < PROBE && i < w->tab_n; i++) {
		struct sess *s = &w->tab[(h + i) & (w->tab_n - 1)];
		if (s->used && s->port == port && s->ssid == ssid && !memcmp(s->addr, addr, 16)) {
			if (now - s->last_ns > idle) /* a new session on an old 4-tuple */
				memset(&s->ctr, 0, sizeof(s->ctr));
			s->last_ns = now;
			w->last = s;
			return &s->ctr;
		}
		if (!s->used || now - s->last_ns > idle) {
			if (!victim || victim->used)
				victim = s;
		} else if (!victim || (victim->used && s->last_ns < victim->last_ns)) {
			victim = s;
		}
	}
	if (victim->used && now - victim->last_ns <= idle)
		TXS_STAT_ADD(w->st.evicted, 1);
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->addr, addr, 16);
	victim->port = port;
	victim->ssid = ssid;
	victim->used = 1;
	victim->last_ns = now;
	w->last = victim;
	TXS_STAT_ADD(w->st.sessions, 1);
	return &victim->ctr;
}

/* ---- the worker -------------------------------------------------------------------------- */

struct rxinfo {
	struct txs_stamp_rx_meta m;
	bool have4, have6;
	struct in_addr dst4;
	struct in6_addr dst6;
};

static void parse_cmsgs(struct msghdr *mh, struct rxinfo *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->m.ttl = -1;
	ri->m.tos = -1;
	/* the walk CMSG_NXTHDR makes, inline: the kernel's headers are well formed */
	uint8_t *p = mh->msg_control, *end = p + mh->msg_controllen;
	for (struct cmsghdr *cm; p + sizeof(*cm) <= end; p += CMSG_ALIGN(cm->cmsg_len)) {
		cm = (struct cmsghdr *)(void *)p;
		if (cm->cmsg_len < sizeof(*cm) || cm->cmsg_len > (size_t)(end - p))
			break;
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			ri->m.t2_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
			ri->m.kernel_ts = true;
		} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TTL) {
			int v;
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			ri->m.ttl = v;
		} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) {
			ri->m.tos = *(const uint8_t *)CMSG_DATA(cm);
		} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			ri->dst4 = pi.ipi_addr;
			ri->have4 = true;
		} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_HOPLIMIT) {
			int v;
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			if (ri->m.ttl < 0)
				ri->m.ttl = v;
		} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
			int v;
			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			if (ri->m.tos < 0)
				ri->m.tos = v & 0xff;
		} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;
			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			ri->dst6 = pi.ipi6_addr;
			ri->have6 = true;
		}
	}
	if (!ri->m.kernel_ts)
		ri->m.t2_ns = txs_now_real_ns();
}

/* The reply's ancillary data: from the address reached, with the TOS. */
static size_t reply_cmsgs(uint8_t *buf, size_t cap, bool v4, const struct rxinfo *ri, int tos)
{
	(void)cap; /* CMSG_ROOM holds both */
	if (!(v4 ? ri->have4 : ri->have6) && tos <= 0)
		return 0; /* the common case: bound to one address, DSCP 0 */
	size_t used = 0;
	struct cmsghdr *cm = (struct cmsghdr *)(void *)buf;
	memset(buf, 0, CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)));
	if (v4 && ri->have4) {
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
		struct in_pktinfo pi = { .ipi_spec_dst = ri->dst4 };
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		used += CMSG_SPACE(sizeof(pi));
		cm = (struct cmsghdr *)(buf + used);
	} else if (!v4 && ri->have6) {
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
		struct in6_pktinfo pi = { .ipi6_addr = ri->dst6 };
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		used += CMSG_SPACE(sizeof(pi));
		cm = (struct cmsghdr *)(buf + used);
	}
	if (tos > 0) { /* 0 is the socket's own: no ancillary data for it */
		cm->cmsg_level = v4 ? IPPROTO_IP : IPPROTO_IPV6;
		cm->cmsg_type = v4 ? IP_TOS : IPV6_TCLASS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &tos, sizeof(int));
		used += CMSG_SPACE(sizeof(int));
	}
	return used;
}

static void peer_key(const struct sockaddr_storage *ss, uint8_t addr[16], uint16_t *port, bool *v4)
{
	memset(addr, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		*v4 = true;
	} else {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
		memcpy(addr, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		*v4 = IN6_IS_ADDR_V4MAPPED(&s->sin6_addr);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct txs_stamp_refl *r = w->r;
	struct mmsghdr rx[BATCH], tx[BATCH];
	struct iovec riov[BATCH], tiov[BATCH];
	struct sockaddr_storage from[BATCH];
	static __thread uint8_t rctl[BATCH][CMSG_ROOM], tctl[BATCH][CMSG_ROOM];
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	/* the receive headers once; after a call only the lengths the kernel
	 * wrote in the ones it filled go back (riov is never written) */
	for (unsigned i = 0; i < BATCH; i++) {
		riov[i] = (struct iovec){ w->in[i], sizeof(w->in[i]) };
		rx[i].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
						 .msg_iov = &riov[i], .msg_iovlen = 1,
						 .msg_control = rctl[i], .msg_controllen = CMSG_ROOM };
		rx[i].msg_len = 0;
	}
	int prev = 0;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < prev; i++) {
			rx[i].msg_hdr.msg_namelen = sizeof(from[i]);
			rx[i].msg_hdr.msg_controllen = CMSG_ROOM;
			rx[i].msg_hdr.msg_flags = 0;
		}
		prev = 0;
		int got = recvmmsg(w->fd, rx, BATCH, MSG_DONTWAIT, NULL);
		if (got <= 0) {
			if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				break;
			poll(&pfd, 1, 100);
			continue;
		}
		prev = got;
		TXS_STAT_ADD(w->st.rx, (uint64_t)got);
		unsigned nt = 0, nk = 0;
		uint64_t now_mono = txs_now_mono_ns();
		struct txs_stamp_refl_pkt_stats ps = { 0 };
		for (int i = 0; i < got; i++) {
			struct rxinfo ri;
			parse_cmsgs(&rx[i].msg_hdr, &ri);
			if (rx[i].msg_hdr.msg_flags & MSG_TRUNC) {
				TXS_STAT_ADD(w->st.runts, 1); /* over the largest datagram: never ours to answer */
				continue;
			}
			nk += ri.m.kernel_ts;
			uint8_t addr[16];
			uint16_t port;
			bool v4;
			peer_key(&from[i], addr, &port, &v4);
			size_t len = rx[i].msg_len;
			size_t base = r->c.key.len ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN;
			if (len < base) {
				TXS_STAT_ADD(w->st.runts, 1);
				continue;
			}
			struct txs_stamp_sess_ctr *ctr = NULL;
			if (!r->c.stateless) {
				struct txs_stamp_pkt sp;
				/* authenticated: a forged packet must not make or move a session */
				if (r->c.key.len && txs_stamp_decode_sender(w->in[i], len, &r->c.key, &sp) == -EACCES) {
					TXS_STAT_ADD(w->st.bad_mac, 1);
					continue;
				}
				uint16_t ssid = txs_get_be16(w->in[i] + (r->c.key.len ? 26 : 14));
				ctr = session(w, addr, port, ssid, now_mono);
			}
			int tos = -1;
			int n = txs_stamp_reflect(&r->c, ctr, w->in[i], len, &ri.m, txs_now_real_ns(), w->in[i],
						  sizeof(w->in[i]), &tos, &ps);
			if (n == -EACCES) {
				TXS_STAT_ADD(w->st.bad_mac, 1);
				continue;
			}
			if (n < 0) {
				TXS_STAT_ADD(w->st.runts, 1);
				continue;
			}
			tiov[nt] = (struct iovec){ w->in[i], (size_t)n };
			size_t cl = reply_cmsgs(tctl[nt], CMSG_ROOM, v4, &ri, tos);
			tx[nt].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = rx[i].msg_hdr.msg_namelen,
							  .msg_iov = &tiov[nt], .msg_iovlen = 1,
							  .msg_control = cl ? tctl[nt] : NULL, .msg_controllen = cl };
			tx[nt].msg_len = 0;
			nt++;
		}
		TXS_STAT_ADD(w->st.kernel_ts, nk);
		if (ps.tlv_unknown)
			TXS_STAT_ADD(w->st.tlv_unknown, ps.tlv_unknown);
		if (ps.tlv_malformed)
			TXS_STAT_ADD(w->st.tlv_malformed, ps.tlv_malformed);
		if (ps.tlv_bad_hmac)
			TXS_STAT_ADD(w->st.tlv_bad_hmac, ps.tlv_bad_hmac);
		unsigned done = 0;
		while (done < nt) {
			int s = sendmmsg(w->fd, tx + done, nt - done, 0);
			if (s > 0) {
				TXS_STAT_ADD(w->st.reflected, (uint64_t)s);
				done += (unsigned)s;
				continue;
			}
			if (s < 0 && errno == EINTR)
				continue;
			TXS_STAT_ADD(w->st.send_errors, 1); /* that one refused (unreachable, ...): skip it */
			done++;
		}
	}
	return NULL;
}

int txs_stamp_refl_start(struct txs_stamp_refl *r)
{
	for (unsigned i = 0; i < r->n; i++) {
		int e = pthread_create(&r->w[i]->th, NULL, worker_main, r->w[i]);
		if (e) {
			txs_stamp_refl_stop(r);
			txs_stamp_refl_join(r);
			return -e;
		}
		r->w[i]->started = true;
	}
	return 0;
}

void txs_stamp_refl_stop(struct txs_stamp_refl *r)
{
	if (r)
		__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
}

void txs_stamp_refl_join(struct txs_stamp_refl *r)
{
	for (unsigned i = 0; i < r->n; i++)
		if (r->w[i] && r->w[i]->started) {
			pthread_join(r->w[i]->th, NULL);
			r->w[i]->started = false;
		}
}

void txs_stamp_refl_stats(const struct txs_stamp_refl *r, struct txs_stamp_refl_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < r->n; i++) {
		const struct wstats *w = &r->w[i]->st;
		s->rx += TXS_STAT_READ(w->rx);
		s->reflected += TXS_STAT_READ(w->reflected);
		s->runts += TXS_STAT_READ(w->runts);
		s->bad_mac += TXS_STAT_READ(w->bad_mac);
		s->send_errors += TXS_STAT_READ(w->send_errors);
		s->tlv_unknown += TXS_STAT_READ(w->tlv_unknown);
		s->tlv_malformed += TXS_STAT_READ(w->tlv_malformed);
		s->tlv_bad_hmac += TXS_STAT_READ(w->tlv_bad_hmac);
		s->sessions += TXS_STAT_READ(w->sessions);
		s->evicted += TXS_STAT_READ(w->evicted);
		s->kernel_ts += TXS_STAT_READ(w->kernel_ts);
		/* the kernel's own count of what it dropped at this socket (full receive buffer) */
		uint32_t mi[SK_MEMINFO_VARS];
		socklen_t ml = sizeof(mi);
		if (r->w[i]->fd >= 0 && getsockopt(r->w[i]->fd, SOL_SOCKET, SO_MEMINFO, mi, &ml) == 0 &&
		    ml > SK_MEMINFO_DROPS * sizeof(uint32_t))
			s->socket_drops += mi[SK_MEMINFO_DROPS];
	}
}

void txs_stamp_refl_close(struct txs_stamp_refl *r)
{
	if (!r)
		return;
	txs_stamp_refl_stop(r);
	txs_stamp_refl_join(r);
	for (unsigned i = 0; i < r->n; i++) {
		struct worker *w = r->w[i];
		if (!w)
			continue;
		if (w->fd >= 0)
			close(w->fd);
		free(w->tab);
		free(w);
	}
	sodium_memzero(&r->c.key, sizeof(r->c.key));
	free(r);
}

int txs_stamp_key_load(struct txs_stamp_key *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	uint8_t buf[TXS_STAMP_KEY_MAX + 2];
	size_t n = 0;
	for (;;) {
		ssize_t g = read(fd, buf + n, sizeof(buf) - n);
		if (g < 0 && errno == EINTR)
			continue;
		if (g < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (g == 0)
			break;
		n += (size_t)g;
		if (n == sizeof(buf))
			break;
	}
	close(fd);
	if (n && buf[n - 1] == '\n')
		n--;
	if (n && buf[n - 1] == '\r')
		n--;
	if (n > TXS_STAMP_KEY_MAX)
		return -E2BIG;
	if (!n)
		return -EINVAL;
	memcpy(k->k, buf, n);
	k->len = n;
	memset(buf, 0, sizeof(buf));
	return 0;
}

void txs_stamp_refl_write(const struct txs_stamp_refl_stats *s, bool json, FILE *f)
{
	if (json) {
		fprintf(f,
			"{\"type\":\"stamp_reflector\",\"received\":%llu,\"reflected\":%llu,\"runts\":%llu,"
			"\"bad_mac\":%llu,\"send_errors\":%llu,\"tlv_unknown\":%llu,\"tlv_malformed\":%llu,"
			"\"tlv_bad_hmac\":%llu,\"sessions\":%llu,\"evicted\":%llu,\"kernel_ts\":%llu,\"socket_drops\":%llu}\n",
			(unsigned long long)s->rx, (unsigned long long)s->reflected, (unsigned long long)s->runts,
			(unsigned long long)s->bad_mac, (unsigned long long)s->send_errors,
			(unsigned long long)s->tlv_unknown, (unsigned long long)s->tlv_malformed,
			(unsigned long long)s->tlv_bad_hmac, (unsigned long long)s->sessions,
			(unsigned long long)s->evicted, (unsigned long long)s->kernel_ts,
			(unsigned long long)s->socket_drops);
	} else {
		fprintf(f,
			"stamp reflector: %llu received, %llu reflected, %llu runts, %llu bad MAC, %llu send errors, "
			"%llu sessions (%llu forgotten), TLVs: %llu unknown, %llu malformed, %llu bad HMAC, "
			"%llu dropped by the kernel at the socket\n",
			(unsigned long long)s->rx, (unsigned long long)s->reflected, (unsigned long long)s->runts,
			(unsigned long long)s->bad_mac, (unsigned long long)s->send_errors,
			(unsigned long long)s->sessions, (unsigned long long)s->evicted,
			(unsigned long long)s->tlv_unknown, (unsigned long long)s->tlv_malformed,
			(unsigned long long)s->tlv_bad_hmac, (unsigned long long)s->socket_drops);
	}
	fflush(f);
}
