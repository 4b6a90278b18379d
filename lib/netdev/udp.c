/* SPDX-License-Identifier: MIT */
/* The udp device: frames leave through kernel UDP sockets.
 *
 *   udp[:OPTIONS]   OPTIONS, comma separated:
 *     gso=auto       (the default) as gso, where that leaves the wire as it is:
 *                    one tuple per queue (conf.flows <= 1), one payload size
 *                    (!conf.sizes_vary), and IPv6 or IPv4 with DF (conf.ipv4_df
 *                    and the frame's DF, or conf.ipv4_pmtu_want, the kernel
 *                    socket's default, where every coalesced segment fits
 *                    the path MTU and so carries DF: the kernel gives the
 *                    segments of one call consecutive IDs from one
 *                    reservation, so the next call repeats them; only DF
 *                    datagrams, whose ID means nothing (RFC 6864), may carry
 *                    that); else off
 *     gso[=N]        coalesce up to N (2..the kernel's UDP_MAX_SEGMENTS; bare
 *                    "gso", gso=on or gso=1: that limit) consecutive same-size
 *                    payloads of a burst into one UDP_SEGMENT send;
 *                    gso=0 / gso=off: one datagram per message
 *     bind=IFNAME    SO_BINDTODEVICE for every link that names no interface
 *     links=L+L+...  several links, one socket per link per queue; each L is
 *                    IFNAME, ADDR (source address) or ADDR@IFNAME
 *     sndbuf=BYTES   SO_SNDBUF of every socket
 *     df             IPv6: IPV6_DONTFRAG (IPv4 takes DF from the frames: refused
 *                    at open when the destination is IPv4)
 *
 * IPv4 DF: the frames' DF says IP_PMTUDISC_DO, else conf.ipv4_pmtu_want
 * (send without --df or --no-df: the default) says IP_PMTUDISC_WANT, else
 * IP_PMTUDISC_DONT. The default is a kernel UDP socket's own (WANT): DF on
 * each datagram that fits the path MTU, local fragments without DF above
 * it. txscale send marks the frames DF when its largest datagram fits, so
 * such a run's sockets are DO: the same DF on every datagram as WANT, and
 * on GSO segments too (the kernel judges WANT on the whole GSO super-packet,
 * over the MTU, and would clear DF on every segment of a call). What
 * differs from WANT: a path MTU that drops mid-run below the datagram
 * (ICMP fragmentation needed) refuses the sends (EMSGSIZE, counted as
 * errors) where WANT would fragment them.
 *
 * Each queue (worker) owns one socket per link. A socket is set up from the
 * first frame sent on it: TOS/TTL/DF (IPv6: traffic class/hop limit), a zero
 * UDP checksum (SO_NO_CHECK), source bound to the frame's source address and
 * port when the address is local (otherwise the wildcard: the kernel picks the
 * source; a source port in use falls back to a kernel-chosen port), then
 * connect()ed to the frame's destination. All frames of a queue and link must
 * carry the same addresses, ports, TOS and TTL (one flow per queue, as the
 * txscale generator builds them); later frames contribute only their UDP
 * payload, which sendmmsg() reads straight from the frame buffer (no copy).
 *
 * Several tuples per queue (conf.flows > 1: send --flows with port or
 * address ranges): the queue keeps a connected socket per (link, addresses,
 * ports), in a table found from each frame's headers, set up on the tuple's
 * first frame as above and with SO_REUSEADDR (flows that share a source port
 * towards different destinations bind it each). A source address that is
 * not local is then an error for that tuple (the wildcard would merge
 * flows), a source port in use by another program still falls back to one
 * the kernel picks. A run of consecutive frames of one tuple is one
 * sendmmsg(); flows that take turns make one call per datagram: the
 * kernel's per-socket cost, which no batching across sockets avoids.
 *
 * Counting (docs/devices.md): a message the kernel accepted counts its
 * segments in `packets`. Sockets are non-blocking and carry IP_RECVERR, so a
 * full socket buffer (EAGAIN) or a full device queue (ENOBUFS, silent without
 * IP_RECVERR) is reported: tx_send then returns the accepted prefix and marks
 * the rest "full"; tx_flush waits up to 1 ms for POLLOUT (ENOBUFS: 50 us) so
 * the engine's retries are worth something. Other errors mark the rest "err".
 * Frames still marked when the caller releases them are counted drop_full /
 * drop_err. ICMP errors reported late on a connected socket (ECONNREFUSED,
 * EHOSTUNREACH, ...) concern earlier datagrams: the refused datagram was not
 * sent, so it is sent again, at most UDP_ASYNC_BUDGET times per call. The
 * ICMP errors themselves are counted in icmp_err from the socket's error
 * queue (after such a report, and when the queue closes): a closed port
 * shows as "refused by the far end", not as silence.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/pkt.h>
#include "common/alloc.h"
#include "netdev_priv.h"
#include "txtime.h"
#include "pkt/sockaddr.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define UDP_POOL 256          /* frames per queue, reused every burst: the kernel copies at send */
#define UDP_GSO_OLD 64        /* UDP_MAX_SEGMENTS before Linux 6.x: every kernel with UDP_SEGMENT */
#define UDP_GSO_KMAX 128      /* UDP_MAX_SEGMENTS since */
#define UDP_ASYNC_BUDGET 8    /* late ICMP reports absorbed per tx_send call */
#define UDP_FULL_WAIT_MS 1    /* tx_flush after EAGAIN: wait this long for POLLOUT */
#define UDP_NOBUF_WAIT_NS 50000

/* refusal marks in txs_pktbuf.priv, read back by tx_release */
enum { MARK_NONE = 0, MARK_FULL = 1, MARK_ERR = 2 };

struct udp_link {
	char ifname[IF_NAMESIZE]; /* "" = not bound to a device */
	struct txs_addr addr;     /* family 0 = source from the frame */
};

enum udp_gso_mode { GSO_AUTO = 0, GSO_OFF, GSO_ON };

struct udp_dev {
	enum udp_gso_mode gso_mode;
	unsigned gso_max; /* segments per message: 0 = off (after open; GSO_ON asked: 0 = the kernel's limit) */
	int sndbuf;       /* 0 = kernel default */
	bool v6_dontfrag;
	bool pmtu_want; /* conf.ipv4_pmtu_want: IPv4 sockets of frames without DF IP_PMTUDISC_WANT */
	enum txs_txtime_mode txtime;
	int txtime_clock; /* dev->txtime_clock: every socket SO_TXTIME on it; -1 none */
	char bind_if[IF_NAMESIZE];
	unsigned n_links;
	bool links_given;
	struct udp_link link[TXS_MAX_LINKS];
};

/* What a socket is set up from (the first frame, or conf at open). */
struct udp_flow {
	int family;
	struct txs_addr src, dst;
	uint16_t sport, dport;
	uint8_t tos, ttl;
	bool df, no_csum;
	bool shared; /* one of several tuples of a queue: SO_REUSEADDR, a non-local source is an error */
};

struct udp_sock {
	int fd;             /* -1 until the first frame on this link */
	int err;            /* sticky setup failure (positive errno), 0 = none */
	uint32_t gso_limit; /* largest payload to coalesce (path MTU - headers); 0 = no GSO */
	uint32_t max_dgram; /* largest UDP payload of one send */
};

/* Several tuples per queue: what tells them apart, as the frame carries it */
struct udp_key {
	uint8_t family; /* 4 or 6; 0 = empty table entry */
	uint8_t link;
	uint16_t sport, dport; /* network order */
	uint16_t pad;
	uint8_t src[16], dst[16];
};

struct udp_fent {
	struct udp_key k;
	struct udp_sock s;
};

struct udp_ftab {
	uint32_t mask;  /* entries - 1 (a power of two, at least twice max) */
	uint32_t used, max;
	struct udp_fent *e;
};

union udp_cmsg {
	char buf[CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(uint64_t))]; /* UDP_SEGMENT, SCM_TXTIME */
	struct cmsghdr align;
};

struct udp_q {
	struct udp_sock s[TXS_MAX_LINKS];
	unsigned n_links, gso_max;
	bool gso_auto;       /* gso=auto: IPv4 frames without DF go one per message */
	struct udp_ftab *ft; /* several tuples per queue (conf.flows > 1), else NULL */
	int last_fd;         /* the socket of the last "full" refusal (several tuples) */
	int last_refusal;    /* errno of the last "full" refusal, for tx_flush */
	uint64_t async_reports;
	bool icmp_pending;   /* a late ICMP report came: count the error queue */
	uint32_t buf_size;
	uint8_t *pool;
	struct mmsghdr msg[UDP_POOL];
	struct iovec iov[UDP_POOL];
	uint16_t first[UDP_POOL + 1]; /* message m covers frames first[m]..first[m+1]-1 of the run */
	bool ours[UDP_POOL];          /* message m was coalesced here (GSO may be turned off) */
	bool gsom[UDP_POOL];          /* message m is a GSO call (UDP_SEGMENT) */
	int txtime_clock;             /* the device's: SCM_TXTIME on every message when >= 0 and txtime_ns set */
	union udp_cmsg cm[UDP_POOL];
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

/* ---- options ---------------------------------------------------------- */

static int copy_ifname(struct txs_netdev *dev, char *dst, const char *name)
{
	if (!*name || strlen(name) >= IF_NAMESIZE) {
		txs_netdev_set_err(dev, "bad interface name '%s'", name);
		return -EINVAL;
	}
	strcpy(dst, name);
	return 0;
}

static int parse_link(struct txs_netdev *dev, struct udp_link *l, char *item)
{
	char *at = strchr(item, '@');
	if (at) {
		*at = 0;
		if (txs_addr_parse(&l->addr, item) < 0) {
			txs_netdev_set_err(dev, "links: bad source address '%s'", item);
			return -EINVAL;
		}
		return copy_ifname(dev, l->ifname, at + 1);
	}
	if (txs_addr_parse(&l->addr, item) == 0)
		return 0;
	return copy_ifname(dev, l->ifname, item);
}

/* Two links that would open the same socket twice */
static bool link_same(const struct udp_link *a, const struct udp_link *b)
{
	return strcmp(a->ifname, b->ifname) == 0 && a->addr.family == b->addr.family &&
	       (!a->addr.family || memcmp(a->addr.bytes, b->addr.bytes, a->addr.family == AF_INET ? 4 : 16) == 0);
}

static int udp_arg(struct txs_netdev *dev, const char *key, const char *val, void *arg)
{
	struct udp_dev *d = arg;
	if (strcmp(key, "txtime") == 0) {
		if (val && strcmp(val, "auto") == 0)
			d->txtime = TXS_TXTIME_AUTO;
		else if (val && strcmp(val, "off") == 0)
			d->txtime = TXS_TXTIME_OFF;
		else if (!val || strcmp(val, "on") == 0)
			d->txtime = TXS_TXTIME_ON;
		else {
			txs_netdev_set_err(dev, "txtime=%s: expected auto, on or off", val);
			return -EINVAL;
		}
		return 0;
	}
	if (strcmp(key, "gso") == 0) {
		d->gso_max = 0;
		if (!val || strcmp(val, "on") == 0 || strcmp(val, "1") == 0) {
			d->gso_mode = GSO_ON;
			return 0;
		}
		if (strcmp(val, "off") == 0 || strcmp(val, "0") == 0) {
			d->gso_mode = GSO_OFF;
			return 0;
		}
		if (strcmp(val, "auto") == 0) {
			d->gso_mode = GSO_AUTO;
			return 0;
		}
		char *end;
		long n = strtol(val, &end, 10);
		if (*end || n < 2 || n > UDP_GSO_KMAX) {
			txs_netdev_set_err(dev, "gso=%s: expected auto, on, off or 2..%d segments", val, UDP_GSO_KMAX);
			return -EINVAL;
		}
		d->gso_mode = GSO_ON;
		d->gso_max = (unsigned)n;
		return 0;
	}
	if (strcmp(key, "bind") == 0 && val)
		return copy_ifname(dev, d->bind_if, val);
	if (strcmp(key, "sndbuf") == 0 && val) {
		char *end;
		long n = strtol(val, &end, 10);
		if (*end || n < 1024 || n > (1l << 30)) {
			txs_netdev_set_err(dev, "sndbuf=%s: expected 1024..1073741824 bytes", val);
			return -EINVAL;
		}
		d->sndbuf = (int)n;
		return 0;
	}
	if (strcmp(key, "df") == 0 && !val) {
		d->v6_dontfrag = true;
		return 0;
	}
	if (strcmp(key, "links") == 0 && val) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", val);
		d->n_links = 0;
		char *save = NULL;
		for (char *it = strtok_r(buf, "+", &save); it; it = strtok_r(NULL, "+", &save)) {
			if (d->n_links == TXS_MAX_LINKS) {
				txs_netdev_set_err(dev, "links=%s: at most %d links", val, TXS_MAX_LINKS);
				return -EINVAL;
			}
			int rc = parse_link(dev, &d->link[d->n_links], it);
			if (rc)
				return rc;
			for (unsigned k = 0; k < d->n_links; k++)
				if (link_same(&d->link[k], &d->link[d->n_links])) {
					txs_netdev_set_err(dev, "links=%s: link '%s' given twice", val, it);
					return -EINVAL;
				}
			d->n_links++;
		}
		if (!d->n_links) {
			txs_netdev_set_err(dev, "links=%s: no link given", val);
			return -EINVAL;
		}
		d->links_given = true;
		return 0;
	}
	txs_netdev_set_err(dev, "unknown udp option '%s' (expected gso[=auto|N|off], bind=IFNAME, links=L+L.., sndbuf=BYTES, df, "
			   "txtime[=auto|on|off])",
			   key);
	return -EINVAL;
}

/* ---- the running kernel's UDP_MAX_SEGMENTS ------------------------------ */

static unsigned probe_max_segs(void)
{
	int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned res = 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int one = 1;
	uint8_t buf[UDP_GSO_OLD + 1] = { 0 };
	if (r >= 0 && s >= 0 && bind(r, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(r, (struct sockaddr *)&a, &al) == 0 && connect(s, (struct sockaddr *)&a, al) == 0 &&
	    setsockopt(s, IPPROTO_UDP, UDP_SEGMENT, &one, sizeof(one)) == 0) {
		/* 65 one-byte segments: more than the old limit, within the new */
		ssize_t n = send(s, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(buf))
			res = UDP_GSO_KMAX;
		else if (n < 0 && errno == EINVAL)
			res = UDP_GSO_OLD;
	}
	if (s >= 0)
		close(s);
	if (r >= 0)
		close(r);
	return res ? res : UDP_GSO_OLD;
}

TXS_API unsigned txs_netdev_udp_max_segs(void)
{
	static unsigned cached; /* 0: not probed yet; racing probes agree */
	unsigned v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	if (!v) {
		v = probe_max_segs();
		__atomic_store_n(&cached, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* ---- socket setup (cold: once per queue and link) ---------------------- */

/* family AF_INET, else AF_INET6 */
static socklen_t fill_sa(struct sockaddr_storage *ss, const struct txs_addr *a, int family, uint16_t port)
{
	return txs_sockaddr_set(ss, family == AF_INET ? AF_INET : AF_INET6, a, port);
}

static bool addr_unspec(const struct txs_addr *a)
{
	static const uint8_t zero[16];
	return a->family == 0 || memcmp(a->bytes, zero, a->family == AF_INET ? 4 : 16) == 0;
}

/* Open, configure, bind and connect one socket for `f` on link `l`. On
 * failure returns -errno and, if why is given, one line saying which step. */
static int sock_connect(const struct udp_dev *d, const struct udp_link *l, const struct udp_flow *f, int *out,
			struct txs_addr *src_out, char *why, size_t wlen)
{
	const char *step = "socket";
	const char *ifn = l->ifname[0] ? l->ifname : d->bind_if;
	int one = 1, fd = socket(f->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		goto fail;
	if (ifn[0]) {
		step = "SO_BINDTODEVICE";
		if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifn, (socklen_t)strlen(ifn)) < 0)
			goto fail;
	}
	step = "SO_SNDBUF";
	if (d->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &d->sndbuf, sizeof(d->sndbuf)) < 0)
		goto fail;
	if (d->txtime_clock >= 0) {
		struct sock_txtime st = { .clockid = d->txtime_clock, .flags = 0 };
		step = "SO_TXTIME";
		if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)) < 0)
			goto fail;
	}
	if (f->family == AF_INET) {
		int tos = f->tos, ttl = f->ttl ? f->ttl : 64;
		int pmtu = f->df ? IP_PMTUDISC_DO : d->pmtu_want ? IP_PMTUDISC_WANT : IP_PMTUDISC_DONT;
		step = "IPv4 socket options";
		if (setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0 ||
		    (f->no_csum && setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) < 0))
			goto fail;
	} else {
		int tc = f->tos, hops = f->ttl ? f->ttl : 64;
		step = "IPv6 socket options";
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one)) < 0 ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tc, sizeof(tc)) < 0 ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &hops, sizeof(hops)) < 0 ||
		    (d->v6_dontfrag && setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)) < 0))
			goto fail;
	}
	/* source: the link's address, else the frame's when it is local, else the
	 * wildcard; port: the frame's, else (in use) one the kernel picks */
	const struct txs_addr *src = l->addr.family ? &l->addr : addr_unspec(&f->src) ? NULL : &f->src;
	uint16_t port = f->sport;
	struct sockaddr_storage ss;
	step = "SO_REUSEADDR";
	if (f->shared && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	step = "bind";
	for (int attempt = 0; attempt < 3; attempt++) {
		socklen_t sl = fill_sa(&ss, src, f->family, port);
		if (bind(fd, (struct sockaddr *)&ss, sl) == 0)
			break;
		if (errno == EADDRNOTAVAIL && src && !l->addr.family && !f->shared)
			src = NULL;
		else if (errno == EADDRINUSE && port)
			port = 0;
		else
			goto fail;
		if (attempt == 2)
			goto fail;
	}
	step = "connect";
	socklen_t dl = fill_sa(&ss, &f->dst, f->family, f->dport);
	if (connect(fd, (struct sockaddr *)&ss, dl) < 0)
		goto fail;
	if (src_out) {
		socklen_t sl = sizeof(ss);
		memset(src_out, 0, sizeof(*src_out));
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
			src_out->family = ss.ss_family;
			if (ss.ss_family == AF_INET)
				src_out->v4 = ((struct sockaddr_in *)&ss)->sin_addr;
			else
				src_out->v6 = ((struct sockaddr_in6 *)&ss)->sin6_addr;
		}
	}
	*out = fd;
	return 0;
fail:;
	int e = errno ? errno : EIO;
	if (why) {
		char ab[INET6_ADDRSTRLEN];
		if (strcmp(step, "connect") == 0)
			snprintf(why, wlen, "connect to %s port %u: %s", txs_addr_str(&f->dst, ab, sizeof(ab)),
				 f->dport, strerror(e));
		else if (strcmp(step, "SO_BINDTODEVICE") == 0)
			snprintf(why, wlen, "bind to interface '%s': %s", ifn, strerror(e));
		else
			snprintf(why, wlen, "%s: %s", step, strerror(e));
	}
	if (fd >= 0)
		close(fd);
	return -e;
}

/* GSO on a connected socket: supported by the kernel, payloads up to the path
 * MTU, and not with a zero UDP checksum (the kernel refuses that). */
static void sock_gso_setup(struct udp_sock *s, const struct udp_flow *f, unsigned gso_max, bool gso_auto)
{
	s->max_dgram = f->family == AF_INET ? 65507 : 65527;
	s->gso_limit = 0;
	if (gso_max < 2 || f->no_csum || (gso_auto && f->family == AF_INET && !f->df))
		return;
	int zero = 0, mtu = 0;
	socklen_t ml = sizeof(mtu);
	if (setsockopt(s->fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) < 0)
		return; /* kernel without UDP GSO */
	if (f->family == AF_INET ? getsockopt(s->fd, IPPROTO_IP, IP_MTU, &mtu, &ml) < 0
				 : getsockopt(s->fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &ml) < 0)
		return;
	int lim = mtu - (f->family == AF_INET ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) - TXS_UDP_HLEN;
	if (lim > 0)
		s->gso_limit = (uint32_t)lim;
}

static __attribute__((noinline, cold)) int sock_from_frame(struct txs_txq *q, struct udp_sock *s, unsigned link,
							   const struct txs_pktbuf *b)
{
	const struct udp_dev *d = TXS_ND(q->dev)->priv;
	struct udp_q *u = TXS_NQ(q)->priv;
	struct txs_pkt_info pi;
	if (txs_parse(b->data, b->len, TXS_L2_ETH, &pi) != TXS_PERR_OK)
		return -EINVAL;
	struct udp_flow f = { .family = pi.family, .src = pi.src, .dst = pi.dst, .sport = pi.sport,
			      .dport = pi.dport, .tos = pi.tos, .ttl = pi.ttl, .df = pi.df,
			      .no_csum = pi.family == AF_INET && !pi.udp_csum_present, .shared = u->ft != NULL };
	int rc = sock_connect(d, &d->link[link], &f, &s->fd, NULL, NULL, 0);
	if (rc < 0) {
		s->fd = -1;
		s->err = -rc;
		return rc;
	}
	sock_gso_setup(s, &f, u->gso_max, u->gso_auto);
	if (q->dev->conf.on_socket)
		q->dev->conf.on_socket(q->dev->conf.on_socket_user, q->id, s->fd);
	return 0;
}

static void drain_icmp(struct txs_txq *q, int fd, unsigned l);

/* ---- device ------------------------------------------------------------ */

static int udp_open(struct txs_netdev *dev, const char *args)
{
	struct udp_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->n_links = 1;
	int rc = txs_netdev_parse_args(dev, args, udp_arg, d);
	d->pmtu_want = dev->conf.ipv4_pmtu_want && !dev->conf.ipv4_df;
	for (unsigned i = 0; rc == 0 && i < d->n_links; i++) {
		const char *ifn = d->link[i].ifname[0] ? d->link[i].ifname : d->bind_if;
		if (ifn[0] && if_nametoindex(ifn) == 0) {
			txs_netdev_set_err(dev, "no interface '%s' here", ifn);
			rc = -ENODEV;
		}
	}
	/* With the destination known, check the route now (one clear error at
	 * open instead of drops later) and learn the kernel's source address. */
	const struct txs_netdev_conf *c = &dev->conf;
	if (rc == 0 && d->v6_dontfrag && c->dst.family == AF_INET) {
		txs_netdev_set_err(dev, "df: IPv6 only (IPV6_DONTFRAG); IPv4 takes DF from the frames (send --df)");
		rc = -EINVAL;
	}
	for (unsigned i = 0; rc == 0 && c->dst.family && i < d->n_links; i++) {
		const struct udp_link *l = &d->link[i];
		if (l->addr.family && l->addr.family != c->dst.family) {
			txs_netdev_set_err(dev, "link %u: source address family differs from the destination's", i);
			rc = -EINVAL;
			break;
		}
		struct udp_flow f = { .family = c->dst.family, .dst = c->dst, .dport = c->dport ? c->dport : 9 };
		if (c->src.family == c->dst.family)
			f.src = c->src;
		struct txs_addr ksrc;
		int fd;
		char why[140];
		rc = sock_connect(d, l, &f, &fd, &ksrc, why, sizeof(why));
		if (rc < 0) {
			txs_netdev_set_err(dev, "%s", why);
			break;
		}
		int mtu = 0;
		socklen_t ml = sizeof(mtu);
		if ((c->dst.family == AF_INET ? getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &ml)
					      : getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &ml)) == 0 &&
		    mtu > 0 && (dev->mtu == 0 || (uint32_t)mtu < dev->mtu))
			dev->mtu = (uint32_t)mtu; /* the route's MTU, smallest over the links */
		close(fd);
		if (i == 0)
			dev->src_addr = ksrc;
	}
	d->txtime_clock = -1;
	if (rc == 0 && c->dst.family) {
		txs_txtime_decide(dev, d->txtime, d->link[0].ifname[0] ? d->link[0].ifname : d->bind_if,
				  c->dst.family);
		d->txtime_clock = dev->txtime_clock;
	}
	unsigned kmax = txs_netdev_udp_max_segs();
	if (rc == 0 && d->gso_mode == GSO_ON && d->gso_max > kmax) {
		txs_netdev_set_err(dev, "gso=%u: this kernel sends at most %u segments per message (UDP_MAX_SEGMENTS)",
				   d->gso_max, kmax);
		rc = -EINVAL;
	}
	if (rc) {
		free(d);
		return rc;
	}
	if (d->gso_mode == GSO_OFF ||
	    (d->gso_mode == GSO_AUTO &&
	     (c->flows > 1 || c->sizes_vary || (c->dst.family == AF_INET && !c->ipv4_df && !c->ipv4_pmtu_want))))
		d->gso_max = 0;
	else if (!d->gso_max)
		d->gso_max = kmax;
	dev->tx_burst = d->gso_max;
	dev->n_links = d->n_links;
	dev->l2_needed = false;
	dev->kernel_ip = true;
	TXS_ND(dev)->priv = d;
	return 0;
}

static void udp_close(struct txs_netdev *dev)
{
	free(TXS_ND(dev)->priv);
}

static int udp_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	const struct udp_dev *d = TXS_ND(dev)->priv;
	struct udp_q *u = txs_zalloc_line(sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->n_links = d->n_links;
	u->gso_max = d->gso_max;
	u->gso_auto = d->gso_mode == GSO_AUTO;
	u->txtime_clock = d->txtime_clock;
	for (unsigned i = 0; i < TXS_MAX_LINKS; i++)
		u->s[i].fd = -1;
	u->last_fd = -1;
	u->pool = txs_pool_new(dev, UDP_POOL, &u->buf_size);
	if (!u->pool) {
		free(u);
		return -ENOMEM;
	}
	if (dev->conf.flows > 1) {
		if (dev->conf.flows > TXS_NETDEV_UDP_FLOWS_MAX) {
			free(u->pool);
			free(u);
			return -E2BIG;
		}
		uint32_t max = dev->conf.flows * d->n_links, sz = 16;
		while (sz < 2 * max)
			sz <<= 1;
		u->ft = malloc(sizeof(*u->ft));
		struct udp_fent *e = u->ft ? calloc(sz, sizeof(*e)) : NULL;
		if (!e) {
			free(u->ft);
			free(u->pool);
			free(u);
			return -ENOMEM;
		}
		*u->ft = (struct udp_ftab){ .mask = sz - 1, .max = max, .e = e };
	}
	TXS_NQ(q)->priv = u;
	return 0;
}

static void udp_txq_close(struct txs_txq *q)
{
	struct udp_q *u = TXS_NQ(q)->priv;
	for (unsigned i = 0; i < TXS_MAX_LINKS; i++)
		if (u->s[i].fd >= 0) {
			drain_icmp(q, u->s[i].fd, i); /* reports that came after the last send */
			close(u->s[i].fd);
		}
	if (u->ft) {
		for (uint32_t i = 0; i <= u->ft->mask; i++) {
			struct udp_fent *e = &u->ft->e[i];
			if (e->k.family && e->s.fd >= 0) {
				drain_icmp(q, e->s.fd, e->k.link);
				close(e->s.fd);
			}
		}
		free(u->ft->e);
		free(u->ft);
	}
	free(u->pool);
	free(u);
	TXS_NQ(q)->priv = NULL;
}

static unsigned udp_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	const struct udp_q *u = TXS_NQ(q)->priv;
	return txs_pool_give(b, n, UDP_POOL, u->pool, u->buf_size, MARK_NONE, 0);
}

static inline unsigned link_of(const struct udp_q *u, const struct txs_pktbuf *b)
{
	return TXS_LIKELY(b->link < u->n_links) ? b->link : 0;
}

/* UDP payload of a frame: bounds from the UDP length field (frames may carry
 * Ethernet padding after the datagram). */
static inline bool payload_of(const struct txs_pktbuf *b, uint8_t **p, uint32_t *len)
{
	uint32_t o = b->l4_off;
	if (TXS_UNLIKELY(o + TXS_UDP_HLEN > b->len))
		return false;
	uint32_t ulen = txs_get_be16(b->data + o + 4);
	if (b->segs > 1 && b->gso_size) /* a GSO super-frame: its UDP length may not fit 16 bits */
		ulen = b->len - o;
	if (TXS_UNLIKELY(ulen < TXS_UDP_HLEN || o + ulen > b->len))
		return false;
	*p = b->data + o + TXS_UDP_HLEN;
	*len = ulen - TXS_UDP_HLEN;
	return true;
}

/* The tuple of a frame (several tuples per queue): addresses at their fixed
 * places after the Ethernet header (the udp device takes no VLAN tags),
 * ports at l4_off. False for a frame that is not UDP over IPv4/IPv6. */
static inline bool key_of(const struct txs_pktbuf *b, unsigned link, struct udp_key *k)
{
	const uint8_t *d = b->data;
	uint32_t o = b->l4_off;
	memset(k, 0, sizeof(*k));
	if (TXS_UNLIKELY(b->len < TXS_ETH_HLEN + TXS_IPV4_HLEN || o + 4 > b->len))
		return false;
	uint16_t et = txs_get_be16(d + 12);
	if (et == 0x0800) {
		k->family = 4;
		memcpy(k->src, d + TXS_ETH_HLEN + 12, 4);
		memcpy(k->dst, d + TXS_ETH_HLEN + 16, 4);
	} else if (et == 0x86dd && b->len >= TXS_ETH_HLEN + TXS_IPV6_HLEN) {
		k->family = 6;
		memcpy(k->src, d + TXS_ETH_HLEN + 8, 16);
		memcpy(k->dst, d + TXS_ETH_HLEN + 24, 16);
	} else {
		return false;
	}
	memcpy(&k->sport, d + o, 2);
	memcpy(&k->dport, d + o + 2, 2);
	k->link = (uint8_t)link;
	return true;
}

static inline bool key_same(const struct txs_pktbuf *b, unsigned link, const struct udp_key *k)
{
	struct udp_key x;
	return key_of(b, link, &x) && memcmp(&x, k, sizeof(x)) == 0;
}

static uint32_t key_hash(const struct udp_key *k)
{
	uint64_t w[5], h = 0x9e3779b97f4a7c15ull;
	memcpy(w, k, sizeof(w));
	for (unsigned i = 0; i < 5; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

/* The socket of tuple k: found, or a new entry (fd -1: set up by the
 * caller from the frame). NULL when the table already holds max tuples. */
static struct udp_sock *ftab_get(struct udp_ftab *t, const struct udp_key *k)
{
	for (uint32_t i = key_hash(k) & t->mask;; i = (i + 1) & t->mask) {
		struct udp_fent *e = &t->e[i];
		if (!e->k.family) {
			if (t->used >= t->max)
				return NULL;
			t->used++;
			e->k = *k;
			e->s = (struct udp_sock){ .fd = -1 };
			return &e->s;
		}
		if (memcmp(&e->k, k, sizeof(*k)) == 0)
			return &e->s;
	}
}

static inline bool is_late_icmp(int e)
{
	return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN || e == ENONET ||
	       e == EPROTO || e == ENOPROTOOPT;
}

/* sendmmsg until all nm messages are accepted or a refusal that is not a
 * late ICMP report. A short count means the message after the accepted ones
 * failed (and was not sent): the next call starts there and returns its error. */
/* Count the ICMP errors queued on the socket (IP_RECVERR / IPV6_RECVERR put
 * one on its error queue per ICMP message that concerns it) into icmp_err
 * of link l, and empty the queue (cold: after a late report, and when the
 * queue closes). The datagrams they concern were sent and counted. */
static __attribute__((noinline, cold)) void drain_icmp(struct txs_txq *q, int fd, unsigned l)
{
	uint64_t n = 0;
	int last = 0;
	for (unsigned i = 0; i < 4096; i++) {
		char data[64];
		union {
			char buf[512];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_RECVERR) ||
			    (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_RECVERR)) {
				struct sock_extended_err ee;
				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				if (ee.ee_origin == SO_EE_ORIGIN_ICMP || ee.ee_origin == SO_EE_ORIGIN_ICMP6) {
					n++;
					last = (int)ee.ee_errno;
				}
			}
		}
	}
	if (n) {
		TXS_STAT_ADD(TXS_NQ(q)->link[l].icmp_err, n);
		__atomic_store_n(&TXS_NQ(q)->link[l].last_err, last, __ATOMIC_RELAXED);
	}
}

static int send_msgs(struct udp_q *u, int fd, unsigned nm, unsigned *accepted)
{
	unsigned done = 0, budget = UDP_ASYNC_BUDGET;
	int e = 0;
	while (done < nm) {
		int r = sendmmsg(fd, u->msg + done, nm - done, MSG_DONTWAIT);
		if (TXS_LIKELY(r > 0)) {
			done += (unsigned)r;
			continue;
		}
		e = r < 0 ? errno : EIO;
		if ((e == EINTR || is_late_icmp(e)) && budget) {
			budget--;
			if (e != EINTR) {
				u->async_reports++;
				u->icmp_pending = true;
			}
			e = 0;
			continue;
		}
		break;
	}
	*accepted = done;
	return e;
}

static void refuse(struct txs_txq *q, struct udp_q *u, struct txs_pktbuf *b, unsigned n, int e)
{
	bool full = e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
	for (unsigned i = 0; i < n; i++)
		b[i].priv = full ? MARK_FULL : MARK_ERR;
	if (full)
		u->last_refusal = e;
	else if (n)
		__atomic_store_n(&TXS_NQ(q)->link[link_of(u, b)].last_err, e, __ATOMIC_RELAXED);
}

static unsigned udp_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct udp_q *u = TXS_NQ(q)->priv;
	unsigned done = 0;
	while (done < n) {
		unsigned l = link_of(u, &b[done]);
		struct udp_sock *s = &u->s[l];
		struct udp_key key;
		if (u->ft) { /* several tuples: this frame's socket */
			if (TXS_UNLIKELY(!key_of(&b[done], l, &key))) {
				refuse(q, u, b + done, n - done, EINVAL);
				break;
			}
			if (TXS_UNLIKELY(!(s = ftab_get(u->ft, &key)))) {
				refuse(q, u, b + done, n - done, E2BIG);
				break;
			}
		}
		if (TXS_UNLIKELY(s->fd < 0)) {
			int rc = s->err ? -s->err : sock_from_frame(q, s, l, &b[done]);
			if (rc < 0) {
				refuse(q, u, b + done, n - done, -rc);
				break;
			}
		}
		/* messages for the run of frames on link l, at most UDP_POOL frames */
		unsigned lim = n - done > UDP_POOL ? done + UDP_POOL : n;
		unsigned nm = 0, j = done;
		int bad = 0;
		while (j < lim && link_of(u, &b[j]) == l && (!u->ft || j == done || key_same(&b[j], l, &key))) {
			uint8_t *p;
			uint32_t plen;
			if (TXS_UNLIKELY(!payload_of(&b[j], &p, &plen))) {
				bad = EINVAL;
				break;
			}
			struct iovec *iov = &u->iov[j - done];
			iov->iov_base = p;
			iov->iov_len = plen;
			struct msghdr *mh = &u->msg[nm].msg_hdr;
			mh->msg_iov = iov;
			mh->msg_iovlen = 1;
			mh->msg_control = NULL;
			mh->msg_controllen = 0;
			u->first[nm] = (uint16_t)(j - done);
			u->ours[nm] = false;
			u->gsom[nm] = false;
			uint16_t gso = 0;
			unsigned k = j + 1;
			if (b[j].segs > 1 && b[j].gso_size) {
				gso = b[j].gso_size; /* the caller's own super-datagram */
			} else if (s->gso_limit && plen && plen <= s->gso_limit) {
				uint32_t total = plen;
				while (k < lim && k - j < u->gso_max && link_of(u, &b[k]) == l && b[k].segs == 1 &&
				       !b[k].gso_size && total + plen <= s->max_dgram &&
				       (!u->ft || key_same(&b[k], l, &key))) {
					uint8_t *p2;
					uint32_t l2;
					if (!payload_of(&b[k], &p2, &l2) || l2 != plen)
						break;
					u->iov[k - done] = (struct iovec){ p2, l2 };
					total += plen;
					k++;
				}
				if (k - j > 1) {
					gso = (uint16_t)plen;
					mh->msg_iovlen = k - j;
					u->ours[nm] = true;
				}
			}
			const bool tt = TXS_UNLIKELY(u->txtime_clock >= 0 && q->txtime_ns);
			if (gso || tt) {
				mh->msg_control = u->cm[nm].buf;
				mh->msg_controllen = (gso ? CMSG_SPACE(sizeof(uint16_t)) : 0) +
						     (tt ? CMSG_SPACE(sizeof(uint64_t)) : 0);
				struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
				if (gso) {
					cm->cmsg_level = SOL_UDP;
					cm->cmsg_type = UDP_SEGMENT;
					cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
					memcpy(CMSG_DATA(cm), &gso, sizeof(gso));
					u->gsom[nm] = true;
					cm = CMSG_NXTHDR(mh, cm);
				}
				if (tt) {
					/* leave no earlier than the engine's time (fq holds it) */
					uint64_t t = q->txtime_ns;
					cm->cmsg_level = SOL_SOCKET;
					cm->cmsg_type = SCM_TXTIME;
					cm->cmsg_len = CMSG_LEN(sizeof(uint64_t));
					memcpy(CMSG_DATA(cm), &t, sizeof(t));
				}
			}
			j = k;
			nm++;
		}
		u->first[nm] = (uint16_t)(j - done);
		unsigned sm = 0;
		int e = nm ? send_msgs(u, s->fd, nm, &sm) : 0;
		if (TXS_UNLIKELY(u->icmp_pending)) {
			u->icmp_pending = false;
			drain_icmp(q, s->fd, l);
		}
		unsigned acc = u->first[sm];
		uint64_t pk = 0, by = 0, gc = 0, gs = 0;
		for (unsigned i = done; i < done + acc; i++) {
			pk += b[i].segs;
			by += b[i].len;
		}
		for (unsigned m = 0; m < sm; m++) {
			if (!u->gsom[m])
				continue;
			gc++;
			for (unsigned i = u->first[m]; i < u->first[m + 1]; i++)
				gs += b[done + i].segs;
		}
		if (acc) {
			txs_nq_count(q, l, pk, by);
		}
		if (gc) {
			TXS_STAT_ADD(TXS_NQ(q)->link[l].gso_calls, gc);
			TXS_STAT_ADD(TXS_NQ(q)->link[l].gso_segs, gs);
		}
		done += acc;
		if (TXS_UNLIKELY(e)) {
			if ((e == EIO || e == EINVAL) && u->ours[sm] && s->gso_limit) {
				/* the route refuses UDP GSO: the refused message was not
				 * sent; it and the rest go one datagram per message */
				s->gso_limit = 0;
				TXS_STAT_ADD(TXS_NQ(q)->link[l].gso_fallback, 1);
				__atomic_store_n(&TXS_NQ(q)->link[l].gso_err, e, __ATOMIC_RELAXED);
				continue;
			}
			refuse(q, u, b + done, n - done, e);
			u->last_fd = s->fd;
			break;
		}
		if (TXS_UNLIKELY(bad)) {
			refuse(q, u, b + done, n - done, bad);
			break;
		}
	}
	return done;
}

static void udp_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct udp_q *u = TXS_NQ(q)->priv;
	for (unsigned i = 0; i < n; i++) {
		if (b[i].priv == MARK_NONE)
			continue; /* never offered to the kernel (e.g. not filled) */
		unsigned l = link_of(u, &b[i]);
		if (b[i].priv == MARK_FULL)
			TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_full, b[i].segs);
		else
			TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_err, b[i].segs);
		b[i].priv = MARK_NONE;
	}
}

/* Called by the engine between retries of a refused burst: give the socket a
 * chance to drain. */
static int udp_flush(struct txs_txq *q)
{
	struct udp_q *u = TXS_NQ(q)->priv;
	int e = u->last_refusal;
	if (!e)
		return 0;
	u->last_refusal = 0;
	if (e == ENOBUFS) {
		struct timespec ts = { 0, UDP_NOBUF_WAIT_NS };
		nanosleep(&ts, NULL);
		return 0;
	}
	struct pollfd pf[TXS_MAX_LINKS];
	unsigned np = 0;
	if (u->ft) {
		/* several tuples: the socket that was full */
		if (u->last_fd >= 0)
			pf[np++] = (struct pollfd){ .fd = u->last_fd, .events = POLLOUT };
	} else {
		for (unsigned i = 0; i < u->n_links; i++)
			if (u->s[i].fd >= 0)
				pf[np++] = (struct pollfd){ .fd = u->s[i].fd, .events = POLLOUT };
	}
	if (np)
		poll(pf, np, UDP_FULL_WAIT_MS);
	return 0;
}

const struct txs_netdev_ops txs_netdev_udp_ops = {
	.name = "udp",
	.usage = "udp[:gso=auto|N|off,bind=IF,links=L+L..,sndbuf=B,df,txtime=auto|on|off]  kernel UDP sockets: sendmmsg, UDP GSO, SO_TXTIME",
	.open = udp_open,
	.close = udp_close,
	.txq_open = udp_txq_open,
	.txq_close = udp_txq_close,
	.tx_alloc = udp_alloc,
	.tx_send = udp_send,
	.tx_release = udp_release,
	.tx_flush = udp_flush,
};
