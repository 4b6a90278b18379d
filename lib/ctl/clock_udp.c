/* SPDX-License-Identifier: MIT */
/* The clock offset measured with UDP probes and the kernels' stamps
 * (docs/control.md, "Clock offset"). Over the control connection the
 * client names its ephemeral UDP port in a time message (time.udp); a
 * server whose hello said clock_udp opens one of its own on the control
 * connection's local address, connects it to the client's and names it in
 * its answer. Then, per exchange:
 *
 *   client                                   server
 *   probe {seq}  ------------------------->  t2 = kernel receive stamp
 *   t1 = kernel transmit stamp (error queue)
 *   <------------------------- reply {seq, t2}
 *   t4 = kernel receive stamp                t3 = kernel transmit stamp of the reply
 *   <------------------------- follow-up {seq, t3}
 *
 * The kernel stamps a datagram as the driver takes it (SOF_TIMESTAMPING_
 * TX_SOFTWARE) and as the stack takes it in (RX_SOFTWARE): the round trip
 * holds the wire and the stacks' lower layers, not the scheduler, the
 * system calls or the control connection's TCP. An exchange without all
 * four kernel stamps, or whose reply or follow-up did not come within its
 * wait, gives no sample and is counted (lost); the server's part ends with
 * the client's next message over the control connection, or a bound. */
#include <errno.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/pkt.h>
#include <txscale/engine.h>
#include "clock_priv.h"
#include "common/clock.h"

#define PROBE_MAGIC 0x5458434bu /* "TXCK" */
#define PROBE_LEN 24
#define SERVE_MAX_PROBES 128
#define SERVE_TX_WAIT_MS 5
enum { K_PROBE = 1, K_REPLY = 2, K_FOLLOW = 3 };
#define F_KERNEL 1 /* the stamp is the kernel's */

struct probe {
	uint8_t kind, flags;
	uint32_t seq;
	uint64_t stamp;
};

static void enc(uint8_t b[PROBE_LEN], const struct probe *p)
{
	memset(b, 0, PROBE_LEN);
	txs_put_be32(b, PROBE_MAGIC);
	b[4] = p->kind;
	b[5] = p->flags;
	txs_put_be32(b + 8, p->seq);
	txs_put_be32(b + 16, (uint32_t)(p->stamp >> 32));
	txs_put_be32(b + 20, (uint32_t)p->stamp);
}

static bool dec(const uint8_t *b, ssize_t n, struct probe *p)
{
	if (n != PROBE_LEN || txs_get_be32(b) != PROBE_MAGIC || b[4] < K_PROBE || b[4] > K_FOLLOW)
		return false;
	p->kind = b[4];
	p->flags = b[5];
	p->seq = txs_get_be32(b + 8);
	p->stamp = (uint64_t)txs_get_be32(b + 16) << 32 | txs_get_be32(b + 20);
	return true;
}

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

static int remaining_ms(double end)
{
	double r = (end - txs_mono_s()) * 1e3;
	return r <= 0 ? 0 : r > 60000 ? 60000 : (int)r + 1;
}

static void set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/* A UDP socket on the control connection's local address (port 0), with
 * the kernel's software stamps on, non-blocking; peer: the control
 * connection's peer. The socket, or -errno (why says what failed). */
static int udp_open(int ctl, struct sockaddr_storage *peer, socklen_t *plen, uint16_t *port, char *why,
		    size_t wlen)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	*plen = sizeof(*peer);
	memset(&me, 0, sizeof(me));
	memset(peer, 0, sizeof(*peer));
	if (getsockname(ctl, (struct sockaddr *)&me, &ml) < 0 || getpeername(ctl, (struct sockaddr *)peer, plen) < 0) {
		int e = errno;
		snprintf(why, wlen, "the control connection's addresses: %s", strerror(e));
		return -e;
	}
	if ((me.ss_family != AF_INET && me.ss_family != AF_INET6) || peer->ss_family != me.ss_family) {
		snprintf(why, wlen, "the control connection is not over IP");
		return -EAFNOSUPPORT;
	}
	set_port(&me, 0);
	int u = socket(me.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (u < 0) {
		int e = errno;
		snprintf(why, wlen, "socket: %s", strerror(e));
		return -e;
	}
	int fl = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
		 SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	const char *what = "bind";
	if (bind(u, (struct sockaddr *)&me, ml) < 0 ||
	    (what = "SO_TIMESTAMPING", setsockopt(u, SOL_SOCKET, SO_TIMESTAMPING, &fl, sizeof(fl))) < 0 ||
	    (what = "getsockname", ml = sizeof(me), getsockname(u, (struct sockaddr *)&me, &ml)) < 0) {
		int e = errno;
		snprintf(why, wlen, "the UDP probe socket: %s: %s", what, strerror(e));
		close(u);
		return -e;
	}
	*port = ntohs(me.ss_family == AF_INET ? ((struct sockaddr_in *)&me)->sin_port
					     : ((struct sockaddr_in6 *)&me)->sin6_port);
	return u;
}

/* One datagram (non-blocking) and its kernel receive stamp (0: none).
 * 1, 2 (a datagram not of this exchange), 0 (nothing there), or -errno. */
static int rd_probe(int u, struct probe *p, uint64_t *rx)
{
	uint8_t b[64];
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping)) + 64];
		struct cmsghdr align;
	} c;
	struct iovec iov = { b, sizeof(b) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
	ssize_t n = recvmsg(u, &h, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	*rx = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); cm; cm = CMSG_NXTHDR(&h, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPING &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
			struct scm_timestamping st;
			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			*rx = ts_ns(&st.ts[0]);
		}
	if (!dec(b, (h.msg_flags & MSG_TRUNC) ? -1 : n, p))
		return 2; /* not ours: read, passed over */
	return 1;
}

static void clear_error(int u);

/* The kernel's transmit stamp of the send whose OPT_ID is id, from the
 * error queue within wait_ms; older stamps are passed over. 0, or -ETIMEDOUT. */
static int tx_stamp(int u, uint32_t id, int wait_ms, uint64_t *ts)
{
	double end = txs_mono_s() + wait_ms / 1e3;
	for (unsigned spins = 0; spins < 10000; spins++) {
		union {
			char buf[CMSG_SPACE(sizeof(struct scm_timestamping)) + CMSG_SPACE(sizeof(struct sock_extended_err)) +
				 64];
			struct cmsghdr align;
		} c;
		uint8_t b[64];
		struct iovec iov = { b, sizeof(b) };
		struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
		ssize_t n = recvmsg(u, &h, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				continue;
			clear_error(u); /* an ICMP error would keep poll's POLLERR up */
			int ms = remaining_ms(end);
			if (!ms)
				return -ETIMEDOUT;
			struct pollfd pf = { .fd = u, .events = 0 }; /* POLLERR: the error queue holds something */
			poll(&pf, 1, ms);
			continue;
		}
		uint64_t t = 0;
		bool mine = false;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); cm; cm = CMSG_NXTHDR(&h, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPING &&
			    cm->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
				struct scm_timestamping st;
				memcpy(&st, CMSG_DATA(cm), sizeof(st));
				t = ts_ns(&st.ts[0]);
			} else if (((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
				    (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)) &&
				   cm->cmsg_len >= CMSG_LEN(sizeof(struct sock_extended_err))) {
				struct sock_extended_err ee;
				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				mine = ee.ee_errno == ENOMSG && ee.ee_origin == SO_EE_ORIGIN_TIMESTAMPING &&
				       ee.ee_info == SCM_TSTAMP_SND && ee.ee_data == id;
			}
		}
		if (mine && t) {
			*ts = t;
			return 0;
		}
	}
	return -ETIMEDOUT;
}

/* Read (and so clear) a pending socket error: an ICMP port unreachable
 * on a connected socket, which poll reports as POLLERR until read. */
static void clear_error(int u)
{
	int e = 0;
	socklen_t el = sizeof(e);
	getsockopt(u, SOL_SOCKET, SO_ERROR, &e, &el);
}

/* Pass over what the error queue holds (stamps nobody waits for any more)
 * and a pending socket error. */
static void drain_errqueue(int u)
{
	clear_error(u);
	for (unsigned i = 0; i < 256; i++) {
		char buf[256];
		uint8_t b[64];
		struct iovec iov = { b, sizeof(b) };
		struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof(buf) };
		if (recvmsg(u, &h, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
	}
}

static bool send_probe(int u, const struct probe *p)
{
	uint8_t b[PROBE_LEN];
	enc(b, p);
	return send(u, b, sizeof(b), MSG_DONTWAIT) == (ssize_t)sizeof(b);
}

/* ---- the server's part ------------------------------------------------------------------------------ */
int ctl_clock_serve_udp(int fd, const struct txs_ctl_msg *m, uint64_t t2, int timeout_ms, char *err, size_t errlen)
{
	struct txs_ctl_msg a = { .type = TXS_CTL_TIME, .t1 = m->t1, .t2 = t2 };
	struct sockaddr_storage peer;
	socklen_t pl;
	uint16_t port = 0;
	char why[160];
	int u = udp_open(fd, &peer, &pl, &port, why, sizeof(why));
	if (u >= 0) {
		set_port(&peer, m->udp);
		if (connect(u, (struct sockaddr *)&peer, pl) < 0) { /* only the client's probes are answered */
			close(u);
			u = -1;
		}
	}
	a.udp = u >= 0 ? port : 0; /* none: the client measures over the control connection */
	a.t3 = txs_now_real_ns();
	int rc = txs_ctl_write(fd, &a, timeout_ms, err, errlen);
	if (rc < 0 || u < 0) {
		if (u >= 0)
			close(u);
		return rc;
	}
	double end = txs_mono_s() + TXS_CTL_CLOCK_UDP_SERVE_MS / 1e3;
	uint32_t txid = 0; /* OPT_ID of our next send */
	unsigned answered = 0;
	while (answered < SERVE_MAX_PROBES) {
		int ms = remaining_ms(end);
		if (!ms)
			break;
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = u, .events = POLLIN } };
		if (poll(pf, 2, ms) < 0 && errno != EINTR)
			break;
		if (pf[0].revents) /* the client's next message: the exchange is over */
			break;
		if (pf[1].revents & POLLERR)
			drain_errqueue(u); /* the follow-ups' stamps, and ICMP errors */
		if (!(pf[1].revents & POLLIN)) {
			if (!pf[1].revents) /* poll's own error (EINTR): not a tight loop */
				usleep(1000);
			continue;
		}
		struct probe p;
		uint64_t rx;
		int r = rd_probe(u, &p, &rx);
		if (r != 1 || p.kind != K_PROBE)
			continue;
		struct probe rep = { .kind = K_REPLY, .flags = rx ? F_KERNEL : 0, .seq = p.seq,
				     .stamp = rx ? rx : txs_now_real_ns() };
		if (!send_probe(u, &rep))
			continue;
		uint64_t tx = 0;
		bool ktx = tx_stamp(u, txid++, SERVE_TX_WAIT_MS, &tx) == 0;
		struct probe fol = { .kind = K_FOLLOW, .flags = ktx ? F_KERNEL : 0, .seq = p.seq,
				     .stamp = ktx ? tx : txs_now_real_ns() };
		if (send_probe(u, &fol))
			txid++;
		answered++;
	}
	close(u);
	return 0;
}

/* ---- the client's part ------------------------------------------------------------------------------ */

/* One exchange: probe seq, its transmit stamp, the reply and follow-up
 * within wait_ms. true with all four kernel stamps in *s. */
static bool exchange(int u, uint32_t seq, uint32_t *txid, int wait_ms, struct txs_ctl_stamps *s, int *sent_errno)
{
	struct probe p = { .kind = K_PROBE, .seq = seq };
	drain_errqueue(u);
	if (!send_probe(u, &p)) {
		*sent_errno = errno;
		return false;
	}
	double end = txs_mono_s() + wait_ms / 1e3;
	bool have_t1 = tx_stamp(u, (*txid)++, wait_ms, &s->t1) == 0;
	bool rep = false, fol = false, kern = have_t1;
	for (unsigned spins = 0; !(rep && fol); spins++) {
		if (spins > 10000 || !remaining_ms(end))
			return false;
		struct probe a;
		uint64_t rx;
		int r = rd_probe(u, &a, &rx);
		if (r == 1 && a.seq == seq && a.kind == K_REPLY && !rep) {
			rep = true;
			s->t2 = a.stamp;
			s->t4 = rx;
			kern = kern && (a.flags & F_KERNEL) && rx;
		} else if (r == 1 && a.seq == seq && a.kind == K_FOLLOW && !fol) {
			fol = true;
			s->t3 = a.stamp;
			kern = kern && (a.flags & F_KERNEL);
		}
		if (r != 0) /* a datagram (ours, stale or foreign) or an ICMP error: look again */
			continue;
		struct pollfd pf = { .fd = u, .events = POLLIN };
		if (poll(&pf, 1, remaining_ms(end)) > 0 && (pf.revents & POLLERR) && !(pf.revents & POLLIN))
			drain_errqueue(u);
	}
	return kern;
}

TXS_API int txs_ctl_clock_measure_udp(int fd, unsigned n, int wait_ms, int budget_ms, int timeout_ms,
				      struct txs_ctl_clock *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->method = TXS_CTL_CLOCK_UDP;
	if (n < 1 || n > 64 || wait_ms < 1 || budget_ms < 1)
		return -EINVAL;
	struct sockaddr_storage peer;
	socklen_t pl;
	uint16_t port = 0;
	char why[160];
	int u = udp_open(fd, &peer, &pl, &port, why, sizeof(why));
	if (u < 0) {
		snprintf(err, errlen, "no UDP clock probes: %s", why);
		return -ENOMSG;
	}
	struct txs_ctl_msg q = { .type = TXS_CTL_TIME, .t1 = txs_now_real_ns(), .udp = port }, a;
	int rc = txs_ctl_write(fd, &q, timeout_ms, err, errlen);
	if (rc == 0) {
		rc = txs_ctl_read(fd, &a, TXS_CTL_SMALL_MAX, timeout_ms, err, errlen);
		if (rc == 0)
			rc = ctl_time_check(&a, err, errlen);
		if (rc == 0 && !a.udp) { /* it could not open one: nothing to end either */
			snprintf(err, errlen, "the server opened no UDP socket for clock probes");
			rc = -ENOMSG;
		}
		set_port(&peer, a.udp);
		txs_ctl_msg_free(&a);
	}
	if (rc < 0) {
		close(u);
		return rc;
	}
	struct txs_ctl_stamps st[64];
	unsigned k = 0, miss = 0;
	int serr = 0;
	if (connect(u, (struct sockaddr *)&peer, pl) < 0) {
		serr = errno;
	} else {
		double end = txs_mono_s() + budget_ms / 1e3;
		uint32_t txid = 0;
		for (unsigned i = 0; i < n && txs_mono_s() < end; i++) {
			out->probes++;
			int se = 0;
			if (exchange(u, i, &txid, wait_ms, &st[k], &se)) {
				k++;
				miss = 0;
				continue;
			}
			out->lost++;
			if (se)
				serr = se; /* no datagram (and no stamp: txid stays) */
			if (++miss >= 4 && !k) /* nothing comes back (a firewall?): not worth the budget */
				break;
		}
	}
	close(u);
	/* the server answers probes until our next message: one over the control connection */
	struct txs_ctl_msg e = { .type = TXS_CTL_TIME, .t1 = txs_now_real_ns() };
	rc = txs_ctl_write(fd, &e, timeout_ms, err, errlen);
	if (rc == 0) {
		rc = txs_ctl_read(fd, &a, TXS_CTL_SMALL_MAX, timeout_ms, err, errlen);
		if (rc == 0)
			rc = ctl_time_check(&a, err, errlen);
		txs_ctl_msg_free(&a);
	}
	if (rc < 0)
		return rc;
	if (txs_ctl_clock_best(st, k, out) < 0) {
		if (serr)
			snprintf(err, errlen, "no UDP clock probe came back with kernel timestamps (%u sent: %s)",
				 out->probes, strerror(serr));
		else
			snprintf(err, errlen, "no UDP clock probe of %u came back with kernel timestamps", out->probes);
		return -ENOMSG;
	}
	return 0;
}
