/* SPDX-License-Identifier: MIT */
/* Input "udp": kernel UDP sockets, one per queue, all bound to the same
 * address and port with SO_REUSEPORT (the kernel spreads flows over them by
 * 4-tuple hash, so a flow stays on one queue), read with recvmmsg. A port
 * range (conf.port_hi) gives each queue a socket per port, read as epoll
 * says they are ready, each datagram's destination port that of its
 * socket. Arrival
 * time (conf.rx_ts): the kernel's software receive timestamp of each
 * datagram (SO_TIMESTAMPING), the NIC's hardware stamp (HARDWARE: the
 * interface's receive filter switched on with SIOCSHWTSTAMP for the input's
 * lifetime), or one CLOCK_REALTIME read per recvmmsg batch (USER, and for a
 * datagram without a stamp). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/net_tstamp.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/udp.h>
#include "common/alloc.h"
#include "pkt/sockaddr.h"
#include "rx_priv.h"
#include "rxts.h"

#define UDP_BUF 65536

struct udp_q {
	int *fd;                   /* a socket per port: port0, port0 + 1, .. */
	unsigned nfd;
	uint16_t port0;
	int ep;                    /* epoll over fd[] (nfd > 1), else -1 */
	unsigned batch;
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_in6 *names;
	uint8_t *bufs;
	uint8_t *ctrl;             /* KERNEL, HARDWARE or gro: one control buffer per message */
	bool gro;                  /* UDP_GRO on: a message may hold several datagrams */
	bool want_hw;              /* HARDWARE: take ts[2] when there */
	uint64_t ts_kernel, ts_user; /* datagrams timed each way (this queue's thread writes) */
	uint64_t gro_msgs, gro_dgrams; /* messages split into several datagrams, and those */
	uint64_t ts_hw, ts_hw_skewed;
	int64_t hw_offset;         /* the last unused hardware stamp minus its reference */
	struct txs_rx_tuple tuple; /* dst filled at open, src per datagram */
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

struct udp_in {
	unsigned n;
	bool no_gro;               /* udp:gro=off */
	struct udp_q *q;
	bool rcvbuf_forced;
	/* HARDWARE */
	int hw_fd;                 /* ioctl socket, -1 = none */
	char ifname[IFNAMSIZ];
	int phc_index;
	bool hw_set;               /* we switched the filter on */
	bool hw_prev_known;        /* and hw_prev is what was there (restored at close) */
	struct hwtstamp_config hw_prev;
};

/* ---- hardware receive timestamps ---------------------------------------------------- */
#define HW_ERR "hardware receive timestamps: "

/* The interface holding the bind address (conf.hw_ifname empty). */
static int hw_ifname_of_bind(struct txs_rx_input *in, char *name)
{
	const struct txs_rx_input_conf *c = &in->conf;
	static const uint8_t zero[16];
	size_t alen = c->have_bind && c->bind.family == AF_INET ? 4 : 16;
	if (!c->have_bind || memcmp(c->bind.bytes, zero, alen) == 0) {
		txs_rx_input_set_err(in, HW_ERR "which interface? Name it (hardware:IFACE), or bind (-B) to an "
					    "address of that interface");
		return -EINVAL;
	}
	struct ifaddrs *ifa;
	if (getifaddrs(&ifa) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, HW_ERR "getifaddrs: %s", strerror(e));
		return -e;
	}
	int rc = -EINVAL;
	for (struct ifaddrs *i = ifa; i && rc < 0; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != c->bind.family)
			continue;
		const void *a = c->bind.family == AF_INET ? (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr
							  : (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		if (memcmp(a, c->bind.bytes, alen) == 0 && strlen(i->ifa_name) < IFNAMSIZ) {
			snprintf(name, IFNAMSIZ, "%s", i->ifa_name);
			rc = 0;
		}
	}
	freeifaddrs(ifa);
	if (rc < 0) {
		char a[64];
		txs_addr_str(&c->bind, a, sizeof(a));
		txs_rx_input_set_err(in, HW_ERR "no interface holds %s (name one: hardware:IFACE)", a);
	}
	return rc;
}

static int hw_ioctl(int fd, const char *ifname, unsigned long req, void *data)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, req, &ifr) < 0 ? -errno : 0;
}

static int hw_unsupported(struct txs_rx_input *in, const char *how)
{
	struct udp_in *u = in->priv;
	txs_rx_input_set_err(in, HW_ERR "interface %s has no hardware receive timestamps (%s)", u->ifname, how);
	return -EOPNOTSUPP;
}

/* Make the NIC stamp every packet it receives: what its driver says it can
 * (ETHTOOL_GET_TS_INFO, `ethtool -T`), what is on now (SIOCGHWTSTAMP, no
 * privilege needed), and only if the filter is not HWTSTAMP_FILTER_ALL
 * already, SIOCSHWTSTAMP (CAP_NET_ADMIN). PTP-only filters do not stamp UDP
 * test traffic: they are no fallback. */
static int hw_setup(struct txs_rx_input *in)
{
	struct udp_in *u = in->priv;
	const struct txs_rx_input_conf *c = &in->conf;
	u->phc_index = -1;
	if (c->hw_ifname[0]) {
		if (strnlen(c->hw_ifname, sizeof(c->hw_ifname)) >= IFNAMSIZ) {
			txs_rx_input_set_err(in, HW_ERR "interface name too long");
			return -EINVAL;
		}
		snprintf(u->ifname, sizeof(u->ifname), "%s", c->hw_ifname);
	} else {
		int rc = hw_ifname_of_bind(in, u->ifname);
		if (rc < 0)
			return rc;
	}
	if (!if_nametoindex(u->ifname)) {
		txs_rx_input_set_err(in, HW_ERR "no interface '%s'", u->ifname);
		return -ENODEV;
	}
	u->hw_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->hw_fd < 0)
		u->hw_fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->hw_fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, HW_ERR "socket: %s", strerror(e));
		return -e;
	}
	struct ethtool_ts_info ti;
	memset(&ti, 0, sizeof(ti));
	ti.cmd = ETHTOOL_GET_TS_INFO;
	int rc = hw_ioctl(u->hw_fd, u->ifname, SIOCETHTOOL, &ti);
	if (rc == 0) {
		u->phc_index = ti.phc_index;
		unsigned need = SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
		if ((ti.so_timestamping & need) != need)
			return hw_unsupported(in, "Operation not supported: its driver offers software stamps only");
		if (!(ti.rx_filters & (1u << HWTSTAMP_FILTER_ALL))) {
			char how[128];
			snprintf(how, sizeof(how), "Operation not supported: its receive filters (0x%x) stamp PTP "
						   "packets only, not UDP test traffic", ti.rx_filters);
			return hw_unsupported(in, how);
		}
	} else if (rc != -EOPNOTSUPP && rc != -EINVAL) {
		txs_rx_input_set_err(in, HW_ERR "ETHTOOL_GET_TS_INFO on %s: %s", u->ifname, strerror(-rc));
		return rc;
	} /* no ethtool answer: the ioctls below tell */
	struct hwtstamp_config cur;
	memset(&cur, 0, sizeof(cur));
	rc = hw_ioctl(u->hw_fd, u->ifname, SIOCGHWTSTAMP, &cur);
	if (rc == 0) {
		if (cur.rx_filter == HWTSTAMP_FILTER_ALL)
			return 0; /* on already (another tool, or another receiver): leave it */
		u->hw_prev = cur;
		u->hw_prev_known = true;
	}
	struct hwtstamp_config want = {
		.flags = 0,
		/* keep a running PTP daemon's transmit stamps as they are */
		.tx_type = u->hw_prev_known ? cur.tx_type : HWTSTAMP_TX_OFF,
		.rx_filter = HWTSTAMP_FILTER_ALL,
	};
	rc = hw_ioctl(u->hw_fd, u->ifname, SIOCSHWTSTAMP, &want);
	if (rc == -EPERM || rc == -EACCES) {
		txs_rx_input_set_err(in, HW_ERR "switching them on at interface %s needs CAP_NET_ADMIN "
					    "(SIOCSHWTSTAMP: %s)", u->ifname, strerror(-rc));
		return rc;
	}
	if (rc == -EOPNOTSUPP || rc == -EINVAL || rc == -ERANGE)
		return hw_unsupported(in, strerror(-rc));
	if (rc < 0) {
		txs_rx_input_set_err(in, HW_ERR "SIOCSHWTSTAMP on %s: %s", u->ifname, strerror(-rc));
		return rc;
	}
	u->hw_set = true;
	/* the driver writes back the filter it applied: SOME = at least ALL */
	if (want.rx_filter != HWTSTAMP_FILTER_ALL && want.rx_filter != HWTSTAMP_FILTER_SOME) {
		char how[128];
		snprintf(how, sizeof(how), "Operation not supported: asked to stamp all packets, the driver set "
					   "receive filter %d", want.rx_filter);
		return hw_unsupported(in, how); /* close restores */
	}
	return 0;
}

static void hw_restore(struct udp_in *u)
{
	if (u->hw_set && u->hw_prev_known)
		hw_ioctl(u->hw_fd, u->ifname, SIOCSHWTSTAMP, &u->hw_prev);
	u->hw_set = false;
	if (u->hw_fd >= 0)
		close(u->hw_fd);
	u->hw_fd = -1;
}

static void q_free(struct udp_q *q)
{
	for (unsigned k = 0; k < q->nfd; k++)
		if (q->fd[k] >= 0)
			close(q->fd[k]);
	free(q->fd);
	q->fd = NULL;
	q->nfd = 0;
	if (q->ep >= 0)
		close(q->ep);
	q->ep = -1;
	free(q->msgs);
	free(q->iov);
	free(q->names);
	free(q->bufs);
	free(q->ctrl);
}

/* one message's control data: its stamps and its GRO segment size */
#define TS_CTRL (CMSG_SPACE(sizeof(struct scm_timestamping)) + CMSG_SPACE(sizeof(int)))

/* The local address of the input's socket on `port` (and the queue's tuple dst). */
static socklen_t local_addr(const struct txs_rx_input_conf *c, int family, uint16_t port,
			    struct sockaddr_storage *ss, struct txs_rx_tuple *t)
{
	memset(t, 0, sizeof(*t));
	t->dport = port;
	if (c->have_bind)
		t->dst = c->bind;
	return txs_sockaddr_set(ss, family == AF_INET ? AF_INET : AF_INET6, c->have_bind ? &c->bind : NULL, port);
}

static int in_family(const struct txs_rx_input_conf *c)
{
	return c->have_bind ? c->bind.family : c->family == AF_INET ? AF_INET : AF_INET6;
}

static void set_v6only(const struct txs_rx_input_conf *c, int fd, int family)
{
	if (family == AF_INET6 && !c->have_bind) {
		int v6only = c->family == AF_INET6 ? 1 : 0;
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(int));
	}
}

static void in_use_err(struct txs_rx_input *in, uint16_t port)
{
	const struct txs_rx_input_conf *c = &in->conf;
	char a[64] = "*";
	if (c->have_bind)
		txs_addr_str(&c->bind, a, sizeof(a));
	if (c->reuseport)
		txs_rx_input_set_err(in,
				     "port %u on %s is in use by a socket that does not share it (SO_REUSEPORT): "
				     "every receiver on the port needs --reuseport",
				     port, a);
	else
		txs_rx_input_set_err(in,
				     "port %u on %s is in use by another socket (another receiver?); give "
				     "--reuseport to every receiver to share it (the kernel then splits the traffic "
				     "between them)",
				     port, a);
}

/* Several own queues share the port through SO_REUSEPORT, which would also
 * let them join another process's group silently: first make sure nobody
 * holds the port, with a plain socket that conflicts with any holder. */
static int probe_free(struct txs_rx_input *in, uint16_t port)
{
	const struct txs_rx_input_conf *c = &in->conf;
	int family = in_family(c);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "socket: %s", strerror(e));
		return -e;
	}
	set_v6only(c, fd, family);
	struct sockaddr_storage ss;
	struct txs_rx_tuple t;
	socklen_t sl = local_addr(c, family, port, &ss, &t);
	int rc = bind(fd, (struct sockaddr *)&ss, sl) < 0 ? -errno : 0;
	close(fd);
	if (rc == -EADDRINUSE)
		in_use_err(in, port);
	return rc == -EADDRINUSE ? rc : 0; /* other errors: the real bind says */
}

/* Queue id's socket on `port` into *fdp (set before anything can fail, so
 * that q_free closes it). */
static int sock_open(struct txs_rx_input *in, struct udp_q *q, unsigned id, uint16_t port, int *fdp)
{
	struct udp_in *u = in->priv;
	const struct txs_rx_input_conf *c = &in->conf;
	int family = in_family(c);
	int fd = *fdp = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "socket: %s", strerror(e));
		return -e;
	}
	int one = 1;
	if ((c->reuseport || c->n_queues > 1) &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "SO_REUSEPORT: %s", strerror(e));
		return -e;
	}
	set_v6only(c, fd, family);
	if (c->rcvbuf > 0) {
		/* FORCE passes rmem_max (needs CAP_NET_ADMIN); the plain one is
		 * capped by it silently: the value is read back for the report */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &c->rcvbuf, sizeof(c->rcvbuf)) == 0) {
			if (id == 0 && port == c->port)
				u->rcvbuf_forced = true;
		} else if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->rcvbuf, sizeof(c->rcvbuf)) < 0) {
			int e = errno;
			txs_rx_input_set_err(in, "SO_RCVBUF %d: %s", c->rcvbuf, strerror(e));
			return -e;
		}
	}
	struct sockaddr_storage ss;
	socklen_t sl = local_addr(c, family, port, &ss, &q->tuple);
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;
		if (e == EADDRINUSE) {
			in_use_err(in, port);
			return -e;
		}
		char a[64] = "*";
		if (c->have_bind)
			txs_addr_str(&c->bind, a, sizeof(a));
		txs_rx_input_set_err(in, "bind %s port %u (queue %u): %s", a, port, id, strerror(e));
		return -e;
	}
	/* GRO: a sender's GSO packet comes up whole (as one message of equal
	 * segments) instead of being cut into one socket entry per datagram;
	 * q_take splits it. A kernel without UDP_GRO reads as before. */
	if (!u->no_gro && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)) == 0)
		q->gro = true;
	if (c->rx_ts == TXS_RX_TS_KERNEL || c->rx_ts == TXS_RX_TS_HARDWARE) {
		/* HARDWARE: the software stamp too, for datagrams that come
		 * without a hardware one (another interface, a NIC that skips) */
		int f = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
		if (c->rx_ts == TXS_RX_TS_HARDWARE)
			f |= SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
		q->want_hw = c->rx_ts == TXS_RX_TS_HARDWARE;
		if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) < 0) {
			int e = errno;
			txs_rx_input_set_err(in, "SO_TIMESTAMPING (kernel receive timestamps; --rx-timestamps user "
						 "goes without): %s", strerror(e));
			return -e;
		}
	}
	return 0;
}

static int q_open(struct txs_rx_input *in, struct udp_q *q, unsigned id)
{
	const struct txs_rx_input_conf *c = &in->conf;
	unsigned nfd = c->port_hi > c->port ? (unsigned)(c->port_hi - c->port) + 1 : 1;
	q->port0 = c->port;
	q->fd = malloc(sizeof(*q->fd) * nfd);
	if (!q->fd)
		return -ENOMEM;
	for (unsigned k = 0; k < nfd; k++) {
		q->nfd = k + 1;
		int rc = sock_open(in, q, id, (uint16_t)(c->port + k), &q->fd[k]);
		if (rc < 0)
			return rc;
	}
	if (nfd > 1) {
		q->ep = epoll_create1(EPOLL_CLOEXEC);
		if (q->ep < 0) {
			int e = errno;
			txs_rx_input_set_err(in, "epoll_create1: %s", strerror(e));
			return -e;
		}
		for (unsigned k = 0; k < nfd; k++) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = k };
			if (epoll_ctl(q->ep, EPOLL_CTL_ADD, q->fd[k], &ev) < 0) {
				int e = errno;
				txs_rx_input_set_err(in, "epoll_ctl: %s", strerror(e));
				return -e;
			}
		}
	}
	q->batch = c->batch;
	q->msgs = calloc(q->batch, sizeof(*q->msgs));
	q->iov = calloc(q->batch, sizeof(*q->iov));
	q->names = calloc(q->batch, sizeof(*q->names));
	q->bufs = malloc((size_t)q->batch * UDP_BUF);
	if (!q->msgs || !q->iov || !q->names || !q->bufs)
		return -ENOMEM;
	if ((c->rx_ts == TXS_RX_TS_KERNEL || c->rx_ts == TXS_RX_TS_HARDWARE || q->gro) &&
	    !(q->ctrl = calloc(q->batch, TS_CTRL)))
		return -ENOMEM;
	for (unsigned i = 0; i < q->batch; i++) {
		q->iov[i].iov_base = q->bufs + (size_t)i * UDP_BUF;
		q->iov[i].iov_len = UDP_BUF;
		q->msgs[i].msg_hdr.msg_iov = &q->iov[i];
		q->msgs[i].msg_hdr.msg_iovlen = 1;
		q->msgs[i].msg_hdr.msg_name = &q->names[i];
		q->msgs[i].msg_hdr.msg_namelen = sizeof(q->names[i]);
		if (q->ctrl) {
			q->msgs[i].msg_hdr.msg_control = q->ctrl + (size_t)i * TS_CTRL;
			q->msgs[i].msg_hdr.msg_controllen = TS_CTRL;
		}
	}
	return 0;
}

static void udp_close(struct txs_rx_input *in)
{
	struct udp_in *u = in->priv;
	if (!u)
		return;
	for (unsigned i = 0; i < u->n; i++)
		q_free(&u->q[i]);
	hw_restore(u);
	free(u->q);
	free(u);
	in->priv = NULL;
}

static int udp_open(struct txs_rx_input *in, const char *args)
{
	bool no_gro = false;
	if (args && *args) {
		if (strcmp(args, "gro=off") != 0) {
			txs_rx_input_set_err(in, "udp: unknown argument '%s' (udp[:gro=off]; addresses and ports: -B, -p, "
						 "-4/-6, --rcvbuf)", args);
			return -EINVAL;
		}
		no_gro = true;
	}
	if (!in->conf.port) {
		txs_rx_input_set_err(in, "no port");
		return -EINVAL;
	}
	if (in->conf.port_hi && (in->conf.port_hi < in->conf.port ||
				 in->conf.port_hi - in->conf.port >= TXS_RX_UDP_MAX_PORTS)) {
		txs_rx_input_set_err(in, "ports %u-%u: at most %u ports, the first the lowest", in->conf.port,
				     in->conf.port_hi, TXS_RX_UDP_MAX_PORTS);
		return -EINVAL;
	}
	struct udp_in *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	in->priv = u;
	u->no_gro = no_gro;
	u->hw_fd = -1;
	u->phc_index = -1;
	if (in->conf.rx_ts > TXS_RX_TS_HARDWARE) {
		txs_rx_input_set_err(in, "unknown receive timestamp mode %d", (int)in->conf.rx_ts);
		udp_close(in);
		return -EINVAL;
	}
	if (in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
		/* before the sockets: nothing is received on a refused NIC */
		int rc = hw_setup(in);
		if (rc < 0) {
			udp_close(in);
			return rc;
		}
	}
	u->q = txs_zalloc_line(sizeof(*u->q) * in->conf.n_queues);
	if (!u->q) {
		udp_close(in);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < in->conf.n_queues; i++)
		u->q[i].ep = -1;
	uint16_t hi = in->conf.port_hi > in->conf.port ? in->conf.port_hi : in->conf.port;
	for (uint32_t p = in->conf.port; !in->conf.reuseport && in->conf.n_queues > 1 && p <= hi; p++) {
		int rc = probe_free(in, (uint16_t)p);
		if (rc < 0) {
			udp_close(in);
			return rc;
		}
	}
	/* every socket exists before the first poll, so REUSEPORT spreads from the start */
	for (unsigned i = 0; i < in->conf.n_queues; i++) {
		u->n = i + 1;
		int rc = q_open(in, &u->q[i], i);
		if (rc < 0) {
			udp_close(in);
			return rc;
		}
	}
	in->raw = false;
	snprintf(in->link_names[0], sizeof(in->link_names[0]), "udp");
	return 0;
}

static inline void src_of(struct txs_rx_tuple *t, const struct sockaddr_in6 *sa)
{
	if (sa->sin6_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		t->src.family = AF_INET;
		memset(t->src.bytes, 0, 16);
		t->src.v4 = s4->sin_addr;
		t->sport = ntohs(s4->sin_port);
	} else if (IN6_IS_ADDR_V4MAPPED(&sa->sin6_addr)) {
		t->src.family = AF_INET;
		memset(t->src.bytes, 0, 16);
		memcpy(t->src.bytes, &sa->sin6_addr.s6_addr[12], 4);
		t->sport = ntohs(sa->sin6_port);
	} else {
		t->src.family = AF_INET6;
		t->src.v6 = sa->sin6_addr;
		t->sport = ntohs(sa->sin6_port);
	}
}

/* The n messages recvmmsg left in q's messages, into c: how many
 * datagrams they held (a GRO message holds segments of its gso_size, the
 * last one maybe shorter, each counted and timed as its message). */
static int q_take(struct udp_q *q, struct txs_rx_core *c, int n)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t kern = 0, hw = 0, hw_skew = 0, dgrams = 0, gmsgs = 0, gdgrams = 0;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &q->msgs[i].msg_hdr;
		uint64_t at = now;
		enum rx_ts_src src = RX_TS_USER;
		unsigned seg = 0;
		if (q->ctrl) {
			if (q->gro)
				seg = rx_cmsg_gro(h);
			struct rx_arrival a = rx_arrival_of(h, q->want_hw, now);
			at = a.at;
			src = a.src;
			if (TXS_UNLIKELY(a.hw_skewed)) {
				hw_skew++;
				__atomic_store_n(&q->hw_offset, a.hw_off, __ATOMIC_RELAXED);
			}
			h->msg_controllen = TS_CTRL;
		}
		uint32_t len = q->msgs[i].msg_len, k = 1;
		if (TXS_UNLIKELY(h->msg_flags & MSG_TRUNC)) {
			txs_rx_count_perr(c, TXS_PERR_TRUNCATED, 1);
		} else {
			src_of(&q->tuple, &q->names[i]);
			const uint8_t *p = q->iov[i].iov_base;
			if (seg && len > seg) {
				k = 0;
				for (uint32_t off = 0; off < len; off += seg, k++)
					txs_rx_dgram(c, p + off, len - off < seg ? len - off : seg, &q->tuple, 0, at);
				gmsgs++;
				gdgrams += k;
			} else {
				txs_rx_dgram(c, p, len, &q->tuple, 0, at);
			}
		}
		dgrams += k;
		kern += src == RX_TS_SW ? k : 0;
		hw += src == RX_TS_HW ? k : 0;
		h->msg_namelen = sizeof(q->names[i]);
		h->msg_flags = 0;
	}
	TXS_STAT_ADD(q->ts_kernel, kern);
	TXS_STAT_ADD(q->ts_user, dgrams - kern - hw);
	if (gmsgs) {
		TXS_STAT_ADD(q->gro_msgs, gmsgs);
		TXS_STAT_ADD(q->gro_dgrams, gdgrams);
	}
	if (hw || hw_skew) {
		TXS_STAT_ADD(q->ts_hw, hw);
		TXS_STAT_ADD(q->ts_hw_skewed, hw_skew);
	}
	return (int)dgrams;
}

/* One recvmmsg on socket k of q, and the datagrams into c: how many, or
 * -errno (0: none waiting). */
static int q_read(struct udp_q *q, unsigned k, struct txs_rx_core *c)
{
	int n = recvmmsg(q->fd[k], q->msgs, q->batch, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -errno;
	q->tuple.dport = (uint16_t)(q->port0 + k);
	return q_take(q, c, n);
}

static int udp_poll(struct txs_rx_input *in, unsigned qi, struct txs_rx_core *c, int timeout_ms)
{
	struct udp_in *u = in->priv;
	struct udp_q *q = &u->q[qi];
	if (q->nfd > 1) {
		/* a port range: the sockets epoll says are ready, one batch each */
		struct epoll_event ev[32];
		int r = epoll_wait(q->ep, ev, 32, 0);
		if (r == 0 && timeout_ms > 0)
			r = epoll_wait(q->ep, ev, 32, timeout_ms);
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		int total = 0;
		for (int i = 0; i < r; i++) {
			int n = q_read(q, ev[i].data.u32, c);
			if (n < 0)
				return n;
			total += n;
		}
		return total;
	}
	int n = q_read(q, 0, c);
	if (n != 0 || timeout_ms <= 0)
		return n;
	struct pollfd pfd = { .fd = q->fd[0], .events = POLLIN };
	int r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? 0 : q_read(q, 0, c);
}

static void udp_stats(struct txs_rx_input *in, struct txs_rx_input_stats *o)
{
	struct udp_in *u = in->priv;
	o->have_socket_drops = true;
	o->rcvbuf_forced = u->rcvbuf_forced;
	int rb = 0;
	socklen_t rl = sizeof(rb);
	if (u->n && u->q[0].nfd && getsockopt(u->q[0].fd[0], SOL_SOCKET, SO_RCVBUF, &rb, &rl) == 0)
		o->rcvbuf = rb;
	for (unsigned i = 0; i < u->n; i++) {
		o->ts_kernel += TXS_STAT_READ(u->q[i].ts_kernel);
		o->gro |= u->q[i].gro;
		o->gro_msgs += TXS_STAT_READ(u->q[i].gro_msgs);
		o->gro_dgrams += TXS_STAT_READ(u->q[i].gro_dgrams);
		o->ts_user += TXS_STAT_READ(u->q[i].ts_user);
		o->ts_hardware += TXS_STAT_READ(u->q[i].ts_hw);
		o->ts_hw_skewed += TXS_STAT_READ(u->q[i].ts_hw_skewed);
		int64_t off = __atomic_load_n(&u->q[i].hw_offset, __ATOMIC_RELAXED);
		if (off)
			o->hw_offset_ns = off;
	}
	o->phc_index = u->phc_index;
	if (in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
		snprintf(o->hw_ifname, sizeof(o->hw_ifname), "%s", u->ifname);
		o->hw_filter_set = u->hw_set;
		o->hw_filter_left = u->hw_set && !u->hw_prev_known;
	}
	for (unsigned i = 0; i < u->n; i++)
		for (unsigned k = 0; k < u->q[i].nfd; k++) {
			uint32_t mi[SK_MEMINFO_VARS];
			socklen_t l = sizeof(mi);
			memset(mi, 0, sizeof(mi));
			if (getsockopt(u->q[i].fd[k], SOL_SOCKET, SO_MEMINFO, mi, &l) < 0 ||
			    l <= SK_MEMINFO_DROPS * 4) {
				o->have_socket_drops = false;
				continue;
			}
			o->socket_drops += mi[SK_MEMINFO_DROPS];
		}
}

const struct txs_rx_input_ops txs_rx_input_udp_ops = {
	.name = "udp",
	.usage = "udp",
	.open = udp_open,
	.close = udp_close,
	.poll = udp_poll,
	.stats = udp_stats,
};
