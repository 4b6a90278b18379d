/* SPDX-License-Identifier: MIT */
/* One iperf3 test (docs/iperf3.md): the server's state machine and the data
 * plane both ends share. One thread, poll over the control connection and
 * the stream sockets, as iperf3 itself runs: a sending stream is paced to
 * its -b (payload bits/s per stream) or runs flat out with sendmmsg
 * batches; a receiving stream counts each datagram with txs_ip3_rx. Every
 * wait is bounded by the control timeout, and a test by its -t (or the
 * server's --max-time) plus that timeout, whatever the peer does. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <txscale/iperf3.h>
#include "ctl_priv.h"
#include "common/clock.h"

#define BATCH 64
#define RCVBUF (8 << 20) /* bytes */
#define DRAIN_MAX 100000 /* datagrams read after TEST_END from queues already full */

TXS_API void txs_ip3_test_free(struct txs_ip3_test *t)
{
	if (!t)
		return;
	for (unsigned i = 0; t->s && i < t->n; i++)
		if (t->s[i].fd >= 0)
			close(t->s[i].fd);
	free(t->s);
	txs_ip3_results_free(&t->peer);
	memset(t, 0, sizeof(*t));
}

TXS_API bool txs_ip3_peer_sent(const struct txs_ip3_test *t, unsigned id, uint64_t *sent)
{
	if (!t->have_peer)
		return false;
	for (unsigned i = 0; i < t->peer.n; i++)
		if (t->peer.s[i].id == id) {
			*sent = t->peer.s[i].packets;
			return true;
		}
	return false;
}

TXS_API void txs_ip3_test_results(const struct txs_ip3_test *t, struct txs_ip3_results *r)
{
	memset(r, 0, sizeof(*r));
	r->sender_has_retransmits = t->p.bidirectional ? 0 : -1;
	double dur = t->t_end > t->t_start ? t->t_end - t->t_start : 0;
	for (unsigned i = 0; i < t->n && i < TXS_IP3_RES_STREAMS_MAX; i++) {
		const struct txs_ip3_stream *s = &t->s[i];
		struct txs_ip3_stream_res *o = &r->s[r->n++];
		o->id = s->id;
		o->has_omitted = true;
		o->has_times = true;
		o->end_time = dur;
		if (s->sender) {
			o->bytes = s->sent_bytes;
			o->packets = s->sent;
			continue;
		}
		uint64_t sent;
		o->bytes = s->rx.bytes;
		o->jitter = s->rx.jitter;
		if (txs_ip3_peer_sent(t, s->id, &sent)) {
			uint64_t lost = txs_ip3_rx_lost(&s->rx, sent, NULL);
			o->errors = lost > (1ull << 53) ? (int64_t)(1ull << 53) : (int64_t)lost;
			o->packets = sent;
		} else {
			o->errors = s->rx.ip3_errors;
			o->packets = s->rx.highest;
		}
	}
}

TXS_API void txs_ip3_peer_rx(const struct txs_ip3_test *t, struct txs_ip3_peer_rx *f)
{
	memset(f, 0, sizeof(*f));
	f->exact = true;
	for (unsigned i = 0; i < t->n; i++) {
		const struct txs_ip3_stream *s = &t->s[i];
		if (!s->sender)
			continue;
		f->streams++;
		f->sent += s->sent;
		const struct txs_ip3_stream_res *r = NULL;
		for (unsigned k = 0; k < t->peer.n; k++)
			if (t->peer.s[k].id == s->id)
				r = &t->peer.s[k];
		if (!r) {
			f->exact = false;
			snprintf(f->why, sizeof(f->why), "the server did not report stream %u", s->id);
			continue;
		}
		uint64_t got = r->bytes / t->p.len;
		if (r->bytes % t->p.len) {
			f->exact = false;
			snprintf(f->why, sizeof(f->why), "stream %u: %llu bytes are not whole %u-byte datagrams", s->id,
				 (unsigned long long)r->bytes, t->p.len);
		}
		if (got > s->sent) {
			f->exact = false;
			f->excess += got - s->sent;
			snprintf(f->why, sizeof(f->why), "stream %u: the server says %llu received of %llu sent", s->id,
				 (unsigned long long)got, (unsigned long long)s->sent);
		} else {
			f->lost += s->sent - got;
		}
		if (r->packets > s->sent) {
			f->exact = false;
			snprintf(f->why, sizeof(f->why), "stream %u: the server saw sequence %llu of %llu sent", s->id,
				 (unsigned long long)r->packets, (unsigned long long)s->sent);
		}
		f->received += got;
		f->bytes += r->bytes;
		f->jitter_sum += r->jitter;
		f->peer_packets += r->packets;
		if (r->errors > 0)
			f->peer_lost += (uint64_t)r->errors;
	}
}

/* ---- addresses ---------------------------------------------------------------------------------- */

/* The address of ss as 16 bytes (IPv4 as mapped IPv6) and its port. */
static void addr16(const struct sockaddr_storage *ss, uint8_t a[16], uint16_t *port)
{
	memset(a, 0, 16);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		a[10] = a[11] = 0xff;
		memcpy(a + 12, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		memcpy(a, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
	}
}

static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];
	uint16_t p;
	addr16(a, x, &p);
	addr16(b, y, &p);
	return memcmp(x, y, 16) == 0;
}

static int udp_listener(const struct sockaddr_storage *local)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	uint8_t a[16];
	uint16_t port;
	addr16(local, a, &port);
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	memset(&ss, 0, sizeof(ss));
	if (memcmp(a, mapped, 12) == 0) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a + 12, 4);
		sl = sizeof(*s4);
	} else {
		ss = *local;
		sl = sizeof(struct sockaddr_in6);
	}
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* a receiving stream's queue: as large as root may make it, else net.core.rmem_max */
	int rb = RCVBUF;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* ---- the data plane ------------------------------------------------------------------------------ */

static void fill(uint8_t *b, size_t n, bool repeating)
{
	for (size_t i = 0; i < n; i++)
		b[i] = repeating ? (uint8_t)('0' + i % 10) : 0;
}

/* Datagrams stream k may send now (pacing), at most BATCH; UINT64_MAX flat out. */
static unsigned due(struct txs_ip3_stream *s, double now, double gap, uint64_t left)
{
	unsigned n = BATCH;
	if (gap > 0) {
		if (s->next == 0)
			s->next = now;
		if (now < s->next)
			return 0;
		double k = floor((now - s->next) / gap) + 1;
		if (k < n)
			n = (unsigned)k;
	}
	if (left < n)
		n = (unsigned)left;
	return n;
}

static unsigned send_some(struct txs_ip3_test *t, struct txs_ip3_stream *s, unsigned n, uint8_t (*bufs)[TXS_IP3_LEN_MAX],
		      double gap)
{
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	bool c64 = t->p.udp_counters_64bit;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (unsigned i = 0; i < n; i++) {
		txs_ip3_hdr_write(bufs[i], (uint32_t)ts.tv_sec, (uint32_t)(ts.tv_nsec / 1000), s->sent + 1 + i, c64);
		iov[i] = (struct iovec){ bufs[i], t->p.len };
		memset(&mm[i], 0, sizeof(mm[i]));
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	int r = sendmmsg(s->fd, mm, n, MSG_DONTWAIT);
	if (r < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			s->send_errors++; /* ECONNREFUSED: the peer's port closed; iperf3 goes on too */
		return 0;
	}
	s->sent += (unsigned)r;
	s->sent_bytes += (uint64_t)r * t->p.len;
	if (gap > 0)
		s->next += gap * r;
	return (unsigned)r;
}

static void recv_some(struct txs_ip3_test *t, struct txs_ip3_stream *s, uint8_t (*bufs)[TXS_IP3_LEN_MAX],
		      unsigned max)
{
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	union {
		char b[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr a;
	} cm[BATCH];
	unsigned got = 0;
	while (got < max) {
		for (unsigned i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ bufs[i], TXS_IP3_LEN_MAX };
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_control = cm[i].b;
			mm[i].msg_hdr.msg_controllen = sizeof(cm[i].b);
		}
		int r = recvmmsg(s->fd, mm, BATCH, MSG_DONTWAIT, NULL);
		if (r <= 0)
			return;
		double now = txs_mono_s();
		for (int i = 0; i < r; i++) {
			txs_ip3_rx_dgram(&s->rx, bufs[i], mm[i].msg_len, t->p.udp_counters_64bit, now);
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm[i].msg_hdr); c; c = CMSG_NXTHDR(&mm[i].msg_hdr, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
					uint32_t d;
					memcpy(&d, CMSG_DATA(c), sizeof(d));
					s->sock_drops = d;
				}
		}
		got += (unsigned)r;
		if (r < BATCH)
			return;
	}
}

/* One sending stream's worker: its own thread, its own counters, its own
 * share of -n/-k; it meets the control thread only at the stop flag. */
struct sender {
	pthread_t th;
	struct txs_ip3_test *t;
	struct txs_ip3_stream *s;
	double gap, own_end; /* own_end 0: by amount only */
	uint64_t amount;     /* datagrams, UINT64_MAX: by time */
	atomic_bool *stop;
	atomic_bool done;
};

static void *sender_main(void *arg)
{
	struct sender *w = arg;
	(void)txs_pin_self(w->s->cpu); /* best effort: an unpinned stream still runs */
	uint8_t (*bufs)[TXS_IP3_LEN_MAX] = malloc(sizeof(*bufs) * BATCH);
	if (bufs) {
		for (unsigned i = 0; i < BATCH; i++)
			fill(bufs[i], TXS_IP3_LEN_MAX, w->t->p.repeating_payload);
		/* the schedule starts with the test, not with this thread */
		if (w->gap > 0)
			w->s->next = w->t->t_start;
		while (!atomic_load_explicit(w->stop, memory_order_relaxed) && w->s->sent < w->amount) {
			double now = txs_mono_s();
			if (w->own_end && now >= w->own_end)
				break;
			unsigned k = due(w->s, now, w->gap, w->amount - w->s->sent);
			if (k) {
				if (send_some(w->t, w->s, k, bufs, w->gap) == 0 && w->gap == 0) {
					/* a full queue: wait for room rather than spin */
					struct pollfd pf = { .fd = w->s->fd, .events = POLLOUT };
					poll(&pf, 1, 10);
				}
				continue;
			}
			double sl = w->s->next - txs_mono_s();
			if (sl > 0.01)
				sl = 0.01;
			if (sl > 0) {
				struct timespec ts = { 0, (long)(sl * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
	}
	free(bufs);
	atomic_store(&w->done, true);
	return NULL;
}

/* Run the streams until the client's TEST_END (server: returns
 * TXS_IP3_TEST_END) or our own end by time or amount (client: returns 0;
 * a client that only receives an amount also ends idle_s after the last
 * datagram, since lost ones never make up the amount).
 * Each sending stream has its own thread; this one watches the control
 * connection and counts the receiving streams. The peer's leaving, any
 * other state byte, or hard_end (the test's bound on the monotonic clock)
 * is a -errno with err. */
static int data_plane(int fd, struct txs_ip3_test *t, bool client, double hard_end, double idle_s, char *err,
		      size_t errlen)
{
	uint8_t (*bufs)[TXS_IP3_LEN_MAX] = malloc(sizeof(*bufs) * BATCH);
	struct pollfd *pf = calloc(t->n + 1, sizeof(*pf));
	struct sender *w = calloc(t->n, sizeof(*w));
	if (!bufs || !pf || !w) {
		free(bufs);
		free(pf);
		free(w);
		return -ENOMEM;
	}
	double gap = t->p.bandwidth ? (double)t->p.len * 8.0 / (double)t->p.bandwidth : 0;
	uint64_t per_len = t->p.len ? t->p.len : 1;
	/* -n bytes / -k blocks count over all sending streams, as iperf3 does: split between them */
	uint64_t amount = t->p.blockcount ? t->p.blockcount : t->p.num ? (t->p.num + per_len - 1) / per_len : UINT64_MAX;
	/* a sender stops at its -t (the peer's clock started later, when TEST_RUNNING reached it) */
	double own_end = t->p.time ? t->t_start + t->p.omit + t->p.time : 0;
	unsigned nsend = 0;
	for (unsigned i = 0; i < t->n; i++)
		nsend += t->s[i].sender;
	atomic_bool stop = false;
	int rc = 0;
	unsigned started = 0, k = 0;
	double last_rx = t->t_start;
	for (unsigned i = 0; i < t->n; i++) {
		if (!t->s[i].sender)
			continue;
		struct sender *x = &w[i];
		x->t = t;
		x->s = &t->s[i];
		x->gap = gap;
		/* the server sends until the client's TEST_END, as stock iperf3 does: a
		 * client that counts an amount it receives needs more than that amount
		 * when some is lost, and one that counts time ends the test by its own
		 * clock (hard_end bounds both: -t or --max-time) */
		x->own_end = client ? own_end : 0;
		x->amount = !client || amount == UINT64_MAX ? UINT64_MAX : amount / nsend + (k < amount % nsend);
		x->stop = &stop;
		atomic_init(&x->done, false);
		k++;
		if (pthread_create(&x->th, NULL, sender_main, x) != 0) {
			rc = txs_ctl_fail(err, errlen, -EAGAIN, "cannot start a sending thread");
			break;
		}
		started++;
	}
	while (rc == 0) {
		double now = txs_mono_s();
		if (now > hard_end) {
			rc = txs_ctl_fail(err, errlen, -ETIMEDOUT, "the test ran past its bound (the peer never ended it)");
			break;
		}
		if (client) {
			uint64_t rcvd = 0;
			bool all_done = nsend > 0;
			for (unsigned i = 0; i < t->n; i++) {
				rcvd += t->s[i].rx.received;
				if (t->s[i].sender && !atomic_load(&w[i].done))
					all_done = false;
			}
			if ((own_end && now >= own_end) || (amount != UINT64_MAX && (all_done || rcvd >= amount)))
				break;
			if (!nsend && amount != UINT64_MAX && now - last_rx > idle_s)
				break;
		}
		unsigned np = 0;
		pf[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		for (unsigned i = 0; i < t->n; i++)
			if (!t->s[i].sender)
				pf[np++] = (struct pollfd){ .fd = t->s[i].fd, .events = POLLIN };
		double until = own_end && client ? own_end - txs_mono_s() : 0.1;
		int wait_ms = until <= 0 ? 0 : until > 0.1 ? 100 : (int)ceil(until * 1000);
		if (client && amount != UINT64_MAX && wait_ms > 10)
			wait_ms = 10; /* the senders' end by amount is seen within 10 ms */
		int pr = poll(pf, np, wait_ms);
		if (pr < 0 && errno != EINTR) {
			rc = txs_ctl_fail(err, errlen, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (pr <= 0)
			continue;
		for (unsigned i = 0, j = 1; i < t->n; i++)
			if (!t->s[i].sender && (pf[j++].revents & (POLLIN | POLLERR))) {
				recv_some(t, &t->s[i], bufs, 4 * BATCH);
				last_rx = txs_mono_s();
			}
		if (pf[0].revents) {
			int st;
			int r = txs_ip3_read_state(fd, &st, 1000);
			if (r < 0) {
				rc = txs_ctl_fail(err, errlen, r, "control connection: %s during the test",
					  r == -ECONNRESET ? "the peer closed it" : strerror(-r));
				break;
			}
			if (!client && st == TXS_IP3_TEST_END) {
				rc = st;
				break;
			}
			if (st == TXS_IP3_CLIENT_TERMINATE || st == TXS_IP3_SERVER_TERMINATE ||
			    st == TXS_IP3_SERVER_ERROR || st == TXS_IP3_ACCESS_DENIED) {
				rc = txs_ctl_fail(err, errlen, -ECONNRESET, "the %s ended the test (%s)",
					  client ? "server" : "client", txs_ip3_state_str(st));
				break;
			}
			/* a client sees EXCHANGE_RESULTS only after its own TEST_END; anything else is a protocol error */
			rc = txs_ctl_fail(err, errlen, -EPROTO, "unexpected iperf3 state %d (%s) during the test", st,
				  txs_ip3_state_str(st));
			break;
		}
	}
	atomic_store(&stop, true);
	for (unsigned i = 0, n = 0; i < t->n && n < started; i++)
		if (t->s[i].sender) {
			pthread_join(w[i].th, NULL);
			n++;
		}
	t->t_end = txs_mono_s();
	/* what already sits in the receive queues arrived during the test */
	for (unsigned i = 0; i < t->n; i++)
		if (!t->s[i].sender)
			recv_some(t, &t->s[i], bufs, DRAIN_MAX);
	free(bufs);
	free(pf);
	free(w);
	return rc;
}

/* The test's streams in iperf3's order: the client's sending streams first
 * (with --bidir the first p.parallel), ids 1, 3, 4, ... */
static int streams_new(struct txs_ip3_test *t, bool client)
{
	t->n = t->p.parallel * (t->p.bidirectional ? 2 : 1);
	t->s = calloc(t->n, sizeof(*t->s));
	if (!t->s)
		return -ENOMEM;
	for (unsigned i = 0; i < t->n; i++) {
		bool client_sends = t->p.bidirectional ? i < t->p.parallel : !t->p.reverse;
		t->s[i].fd = -1;
		t->s[i].cpu = -1;
		t->s[i].sock_drops = -1;
		t->s[i].id = txs_ip3_stream_id(i);
		t->s[i].sender = client ? client_sends : !client_sends;
		txs_ip3_rx_init(&t->s[i].rx);
	}
	return 0;
}

/* ---- the server ----------------------------------------------------------------------------------- */

static int io_fail(char *err, size_t errlen, int rc, const char *what)
{
	return txs_ctl_fail(err, errlen, rc, "%s: %s", what,
		    rc == -ECONNRESET ? "the client closed the connection"
		    : rc == -ETIMEDOUT ? "the client did not answer in time"
		    : rc == -EMSGSIZE ? "message over the size limit"
				      : strerror(-rc));
}

static int refuse(int fd, int code, int *ip3_err, int to)
{
	*ip3_err = code;
	txs_ip3_write_error(fd, code, 0, to);
	return -EPERM;
}

/* Accept the test's streams on the UDP listener: only from the control
 * peer's address. */
static int accept_streams_in(int fd, const struct txs_ip3_srv_conf *c, struct txs_ip3_test *t, int *ip3_err, char *err,
			  size_t errlen)
{
	int to = c->ctl_timeout_ms;
	double t_lock0 = txs_mono_s();
	/* the turn first: while it is ours, ours is the port's only unconnected socket */
	if (c->stream_lock) {
		for (;;) {
			if (flock(*c->stream_lock, LOCK_EX | LOCK_NB) == 0)
				break;
			if (errno != EWOULDBLOCK && errno != EINTR) {
				int rc = txs_ctl_fail(err, errlen, -errno, "the stream lock: %s", strerror(errno));
				refuse(fd, TXS_IP3_IESTREAMACCEPT, ip3_err, to);
				*ip3_err = 0;
				return rc;
			}
			struct pollfd pf = { .fd = fd, .events = POLLIN };
			if (poll(&pf, 1, 5) > 0 || txs_mono_s() - t_lock0 > to / 1000.0)
				return txs_ctl_fail(err, errlen, -ETIMEDOUT, pf.revents ? "the client spoke while waiting "
						    "for its turn at the stream handshakes" : "another session's streams were "
						    "being made for %.1f s", to / 1000.0);
		}
	}
	int lfd = udp_listener(c->local);
	if (lfd < 0) {
		int rc = txs_ctl_fail(err, errlen, lfd, "cannot open the UDP stream listener: %s", strerror(-lfd));
		refuse(fd, TXS_IP3_IESTREAMACCEPT, ip3_err, to);
		*ip3_err = 0;
		return rc;
	}
	int rc = txs_ip3_write_state(fd, TXS_IP3_CREATE_STREAMS, to);
	if (rc) {
		close(lfd);
		return io_fail(err, errlen, rc, "CREATE_STREAMS");
	}
	double until = txs_mono_s() + to / 1000.0;
	for (unsigned k = 0; k < t->n;) {
		double left = until - txs_mono_s();
		if (left <= 0) {
			close(lfd);
			return txs_ctl_fail(err, errlen, -ETIMEDOUT, "stream %u of %u did not come within %.1f s", k + 1, t->n,
				    to / 1000.0);
		}
		struct pollfd pf[2] = { { .fd = lfd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
		if (poll(pf, 2, (int)ceil(left * 1000)) <= 0)
			continue;
		if (pf[1].revents) {
			int st;
			rc = txs_ip3_read_state(fd, &st, to);
			close(lfd);
			if (rc)
				return io_fail(err, errlen, rc, "while the streams were made");
			return txs_ctl_fail(err, errlen, -EPROTO, "the client sent %s (%d) while the streams were made",
				    txs_ip3_state_str(st), st);
		}
		uint8_t b[64];
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(lfd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0)
			continue;
		if (!same_host(&from, c->peer)) {
			t->ignored++;
			continue;
		}
		enum txs_ip3_udp_kind kind = txs_ip3_udp_msg_kind(b, (size_t)n);
		if (connect(lfd, (struct sockaddr *)&from, fl) < 0) {
			rc = -errno;
			close(lfd);
			return txs_ctl_fail(err, errlen, rc, "connect the stream socket: %s", strerror(-rc));
		}
		struct txs_ip3_stream *s = &t->s[k];
		s->fd = lfd;
		lfd = -1;
		if (k + 1 < t->n) {
			lfd = udp_listener(c->local);
			if (lfd < 0)
				return txs_ctl_fail(err, errlen, lfd, "cannot open the UDP stream listener: %s", strerror(-lfd));
		}
		uint8_t reply[4];
		txs_ip3_udp_reply(kind, reply);
		if (send(s->fd, reply, 4, MSG_DONTWAIT) != 4) {
			rc = -errno;
			if (lfd >= 0)
				close(lfd);
			return txs_ctl_fail(err, errlen, rc, "answer the stream handshake: %s", strerror(-rc));
		}
		k++;
	}
	if (lfd >= 0)
		close(lfd);
	return 0;
}

static int accept_streams(int fd, const struct txs_ip3_srv_conf *c, struct txs_ip3_test *t, int *ip3_err, char *err,
			  size_t errlen)
{
	int rc = accept_streams_in(fd, c, t, ip3_err, err, errlen);
	if (c->stream_lock)
		flock(*c->stream_lock, LOCK_UN);
	return rc;
}

/* iperf3's own words for the error numbers a server refuses a test with
 * (iperf_error.c), NULL for the others */
static const char *ip3_errno_what(int e)
{
	switch (e) {
	case TXS_IP3_IEDURATION: return "test duration too long";
	case TXS_IP3_IENUMSTREAMS: return "number of parallel streams too large";
	case TXS_IP3_IEUNIMP: return "an option you are trying to set is not implemented yet";
	case TXS_IP3_IEUDPBLOCKSIZE: return "block size invalid";
	case TXS_IP3_IETOTALRATE: return "total required bandwidth is larger than server limit";
	case TXS_IP3_IEAUTHTEST: return "test authorization failed";
	default: return NULL;
	}
}

/* What the server would send, against c->max_rate: 0, or an iperf3 error
 * number with err (IETOTALRATE: the client prints "total required bandwidth
 * is larger than server limit", stock iperf3 -s --server-bitrate-limit's) */
static int rate_check(const struct txs_ip3_srv_conf *c, const struct txs_ip3_params *p, char *err, size_t errlen)
{
	if (!(c->max_rate > 0) || !(p->reverse || p->bidirectional))
		return 0;
	if (!p->bandwidth)
		return txs_ctl_fail(err, errlen, TXS_IP3_IETOTALRATE, "an unpaced test (-b 0) asked of this server, which "
				    "sends at most %.0f %s (--max-rate)", c->max_rate, c->max_rate_bits ? "bit/s" : "datagrams/s");
	double ask = c->max_rate_bits ? (double)p->bandwidth * p->parallel
				      : (double)p->bandwidth / (8.0 * (p->len ? p->len : 1)) * p->parallel;
	if (ask > c->max_rate * (1 + 1e-9))
		return txs_ctl_fail(err, errlen, TXS_IP3_IETOTALRATE, "%.0f %s asked (-b %llu over %u stream%s); this server "
				    "sends at most %.0f %s (--max-rate)", ask, c->max_rate_bits ? "bit/s" : "datagrams/s",
				    (unsigned long long)p->bandwidth, p->parallel, p->parallel == 1 ? "" : "s", c->max_rate,
				    c->max_rate_bits ? "bit/s" : "datagrams/s");
	return 0;
}

TXS_API int txs_ip3_serve(int fd, const struct txs_ip3_srv_conf *c, struct txs_ip3_test *t, int *ip3_err, char *err,
			  size_t errlen)
{
	memset(t, 0, sizeof(*t));
	*ip3_err = 0;
	int to = c->ctl_timeout_ms;
	char cookie[TXS_IP3_COOKIE_LEN];
	int rc = txs_ip3_read_full(fd, cookie, sizeof(cookie), to);
	if (rc)
		return io_fail(err, errlen, rc, "reading the iperf3 cookie");
	if (!txs_ip3_cookie_prefix((const uint8_t *)cookie, sizeof(cookie)))
		return txs_ctl_fail(err, errlen, -EPROTO, "not an iperf3 cookie (37 bytes of [a-z2-7] and a NUL)");
	rc = txs_ip3_write_state(fd, TXS_IP3_PARAM_EXCHANGE, to);
	if (rc)
		return io_fail(err, errlen, rc, "PARAM_EXCHANGE");
	char *json;
	size_t jn;
	rc = txs_ip3_read_json(fd, TXS_IP3_PARAM_MAX, to, &json, &jn);
	if (rc) {
		if (rc == -EMSGSIZE)
			refuse(fd, TXS_IP3_IERECVPARAMS, ip3_err, to);
		*ip3_err = 0;
		return io_fail(err, errlen, rc, "reading the parameters");
	}
	rc = txs_ip3_params_decode(&t->p, json, jn, err, errlen);
	free(json);
	if (rc) {
		refuse(fd, TXS_IP3_IERECVPARAMS, ip3_err, to);
		*ip3_err = 0;
		return rc;
	}
	if (c->refuse_auth) {
		txs_ctl_fail(err, errlen, 0, "the server wants its shared secret (--auth-file), which iperf3 cannot give");
		return refuse(fd, TXS_IP3_IEAUTHTEST, ip3_err, to);
	}
	int code = txs_ip3_params_check(&t->p, c->max_time, err, errlen);
	if (!code)
		code = rate_check(c, &t->p, err, errlen);
	if (code)
		return refuse(fd, code, ip3_err, to);
	if (streams_new(t, false))
		return -ENOMEM;
	rc = accept_streams(fd, c, t, ip3_err, err, errlen);
	if (rc)
		return rc;
	/* one segment (the control connection has TCP_NODELAY): TEST_RUNNING is
	 * on the wire before the first datagram of a stream we send */
	static const int8_t start_running[2] = { TXS_IP3_TEST_START, TXS_IP3_TEST_RUNNING };
	if ((rc = txs_ip3_write_full(fd, start_running, sizeof(start_running), to)))
		return io_fail(err, errlen, rc, "TEST_START");
	t->t_start = txs_mono_s();
	/* by time: -t plus the control timeout; by amount: the server's --max-time */
	double bound = (t->p.time ? t->p.time : c->max_time) + t->p.omit + to / 1000.0;
	rc = data_plane(fd, t, false, t->t_start + bound, 0, err, errlen);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < t->n; i++) {
		close(t->s[i].fd);
		t->s[i].fd = -1;
	}
	rc = txs_ip3_write_state(fd, TXS_IP3_EXCHANGE_RESULTS, to);
	if (rc)
		return io_fail(err, errlen, rc, "EXCHANGE_RESULTS");
	rc = txs_ip3_read_json(fd, TXS_IP3_RESULTS_MAX, to, &json, &jn);
	if (rc)
		return io_fail(err, errlen, rc, "reading the client's results");
	rc = txs_ip3_results_decode(&t->peer, json, jn, err, errlen);
	free(json);
	if (rc)
		return rc;
	t->have_peer = true;
	return 0;
}

TXS_API int txs_ip3_serve_finish(int fd, const struct txs_ip3_test *t, const char *server_output, int ctl_timeout_ms,
				 char *err, size_t errlen)
{
	struct txs_ip3_results r;
	txs_ip3_test_results(t, &r);
	if (server_output && t->p.get_server_output)
		r.server_output_text = strdup(server_output);
	char *json;
	size_t n;
	int rc = txs_ip3_results_encode(&r, &json, &n, err, errlen);
	txs_ip3_results_free(&r);
	if (rc)
		return rc;
	rc = txs_ip3_write_json(fd, json, n, ctl_timeout_ms);
	free(json);
	if (rc)
		return io_fail(err, errlen, rc, "sending our results");
	rc = txs_ip3_write_state(fd, TXS_IP3_DISPLAY_RESULTS, ctl_timeout_ms);
	if (rc)
		return io_fail(err, errlen, rc, "DISPLAY_RESULTS");
	int st;
	rc = txs_ip3_read_state(fd, &st, ctl_timeout_ms);
	if (rc == -ECONNRESET)
		return 0;
	if (rc)
		return io_fail(err, errlen, rc, "waiting for IPERF_DONE");
	if (st != TXS_IP3_IPERF_DONE)
		return txs_ctl_fail(err, errlen, -EPROTO, "the client sent %s (%d) instead of IPERF_DONE", txs_ip3_state_str(st),
			    st);
	return 0;
}

/* ---- the client ------------------------------------------------------------------------------------- */

/* Read a state byte; SERVER_ERROR's numbers and ACCESS_DENIED become errors. */
static int expect_state(int fd, int want, int to, int *ip3_err, char *err, size_t errlen)
{
	int st;
	int rc = txs_ip3_read_state(fd, &st, to);
	if (rc)
		return txs_ctl_fail(err, errlen, rc, "waiting for %s: %s", txs_ip3_state_str(want),
			    rc == -ECONNRESET ? "the server closed the connection"
			    : rc == -ETIMEDOUT ? "the server did not answer in time"
					       : strerror(-rc));
	if (st == want)
		return 0;
	if (st == TXS_IP3_ACCESS_DENIED)
		return txs_ctl_fail(err, errlen, -EBUSY, "the iperf3 server is busy running a test");
	if (st == TXS_IP3_SERVER_ERROR) {
		uint8_t b[8];
		if (txs_ip3_read_full(fd, b, 8, to) == 0) {
			int32_t e = (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
			int32_t se = (int32_t)((uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7]);
			*ip3_err = e;
			const char *what = ip3_errno_what(e);
			return txs_ctl_fail(err, errlen, -EREMOTEIO, "the iperf3 server refused the test: iperf3 error %d%s%s%s%s%s",
				    e, what ? " (" : "", what ? what : "", what ? ")" : "",
				    se > 0 && se < 4096 ? ", " : "", se > 0 && se < 4096 ? strerror(se) : "");
		}
		return txs_ctl_fail(err, errlen, -EREMOTEIO, "the iperf3 server sent SERVER_ERROR");
	}
	if (st == TXS_IP3_SERVER_TERMINATE)
		return txs_ctl_fail(err, errlen, -ECONNRESET, "the iperf3 server ended the test (SERVER_TERMINATE)");
	return txs_ctl_fail(err, errlen, -EPROTO, "expected %s from the server, got state %d (%s)", txs_ip3_state_str(want),
		    st, txs_ip3_state_str(st));
}

static int connect_stream(const struct sockaddr_storage *server, const struct sockaddr_storage *local, int to,
			  char *err, size_t errlen)
{
	int fd = socket(server->ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return txs_ctl_fail(err, errlen, -errno, "UDP socket: %s", strerror(errno));
	socklen_t sl = server->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	if (local && bind(fd, (const struct sockaddr *)local, sl) < 0) {
		int e = errno;
		close(fd);
		return txs_ctl_fail(err, errlen, -e, "bind a stream to -B's address: %s", strerror(e));
	}
	int one = 1, rb = RCVBUF;
	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	if (connect(fd, (const struct sockaddr *)server, sl) < 0) {
		int e = errno;
		close(fd);
		return txs_ctl_fail(err, errlen, -e, "UDP connect to the server: %s", strerror(e));
	}
	uint8_t msg[4], b[16];
	txs_ip3_udp_msg(msg);
	/* the handshake datagram may be lost: sent again every 250 ms, up to the control timeout */
	double until = txs_mono_s() + to / 1000.0;
	while (txs_mono_s() < until) {
		if (send(fd, msg, 4, MSG_DONTWAIT) != 4 && errno != EAGAIN) {
			int e = errno;
			close(fd);
			return txs_ctl_fail(err, errlen, -e, "stream handshake: %s", strerror(e));
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, 250) <= 0)
			continue;
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
		if (n < 0 && errno == ECONNREFUSED) {
			close(fd);
			return txs_ctl_fail(err, errlen, -ECONNREFUSED, "stream handshake: the server's UDP port is closed");
		}
		if (n > 0 && txs_ip3_udp_reply_ok(b, (size_t)n))
			return fd;
		if (n > 0) {
			close(fd);
			return txs_ctl_fail(err, errlen, -EPROTO, "stream handshake: the server answered %zd bytes that are not "
							  "iperf3's reply",
				    n);
		}
	}
	close(fd);
	return txs_ctl_fail(err, errlen, -ETIMEDOUT, "stream handshake: no answer within %.1f s", to / 1000.0);
}

/* Count what still arrives on the receiving streams until the control
 * connection has a byte to read (not read here), within to ms. */
static int drain_until_state(int fd, struct txs_ip3_test *t, int to)
{
	uint8_t (*bufs)[TXS_IP3_LEN_MAX] = malloc(sizeof(*bufs) * BATCH);
	struct pollfd *pf = calloc(t->n + 1, sizeof(*pf));
	int rc = -ETIMEDOUT;
	double until = txs_mono_s() + to / 1000.0;
	while (bufs && pf && txs_mono_s() < until) {
		unsigned np = 0;
		pf[np++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		for (unsigned i = 0; i < t->n; i++)
			if (!t->s[i].sender)
				pf[np++] = (struct pollfd){ .fd = t->s[i].fd, .events = POLLIN };
		if (poll(pf, np, 100) <= 0)
			continue;
		for (unsigned i = 0, j = 1; i < t->n; i++)
			if (!t->s[i].sender && (pf[j++].revents & POLLIN))
				recv_some(t, &t->s[i], bufs, 4 * BATCH);
		if (pf[0].revents) {
			rc = 0;
			break;
		}
	}
	if (!bufs || !pf)
		rc = -ENOMEM;
	free(bufs);
	free(pf);
	return rc;
}

TXS_API int txs_ip3_client_run(int fd, const struct txs_ip3_cli_conf *c, struct txs_ip3_test *t, int *ip3_err,
			       char *err, size_t errlen)
{
	*ip3_err = 0;
	int to = c->ctl_timeout_ms;
	int code = txs_ip3_params_check(&t->p, 0, err, errlen);
	if (code)
		return -EINVAL;
	char *json;
	size_t jn;
	int rc = txs_ip3_params_encode(&t->p, &json, &jn, err, errlen);
	if (rc)
		return rc;
	char cookie[TXS_IP3_COOKIE_LEN];
	if (!c->cookie_sent &&
	    ((rc = txs_ip3_cookie_make(cookie)) || (rc = txs_ip3_write_full(fd, cookie, sizeof(cookie), to)))) {
		free(json);
		return txs_ctl_fail(err, errlen, rc, "sending the cookie: %s", strerror(-rc));
	}
	if ((rc = expect_state(fd, TXS_IP3_PARAM_EXCHANGE, to, ip3_err, err, errlen))) {
		free(json);
		return rc;
	}
	rc = txs_ip3_write_json(fd, json, jn, to);
	free(json);
	if (rc)
		return txs_ctl_fail(err, errlen, rc, "sending the parameters: %s", strerror(-rc));
	if ((rc = expect_state(fd, TXS_IP3_CREATE_STREAMS, to, ip3_err, err, errlen)))
		return rc;
	if (streams_new(t, true))
		return -ENOMEM;
	for (unsigned i = 0, k = 0; c->cpus && c->n_cpus && i < t->n; i++)
		if (t->s[i].sender)
			t->s[i].cpu = c->cpus[k++ % c->n_cpus];
	for (unsigned i = 0; i < t->n; i++) {
		int s = connect_stream(c->server, c->local, to, err, errlen);
		if (s < 0)
			return s;
		t->s[i].fd = s;
	}
	if ((rc = expect_state(fd, TXS_IP3_TEST_START, to, ip3_err, err, errlen)) ||
	    (rc = expect_state(fd, TXS_IP3_TEST_RUNNING, to, ip3_err, err, errlen)))
		return rc;
	if (c->running)
		c->running(c->arg);
	t->t_start = txs_mono_s();
	double bound = (t->p.time ? t->p.time : TXS_IP3_TIME_MAX) + t->p.omit + to / 1000.0;
	rc = data_plane(fd, t, true, t->t_start + bound, to / 1000.0, err, errlen);
	if (rc < 0)
		return rc;
	if ((rc = txs_ip3_write_state(fd, TXS_IP3_TEST_END, to)))
		return txs_ctl_fail(err, errlen, rc, "sending TEST_END: %s", strerror(-rc));
	/* the server sends on until our TEST_END reaches it: what it sent
	 * arrives while we wait for EXCHANGE_RESULTS, and is counted */
	if ((rc = drain_until_state(fd, t, to)))
		return txs_ctl_fail(err, errlen, rc, "waiting for EXCHANGE_RESULTS: %s",
			    rc == -ECONNRESET ? "the server closed the connection" : strerror(-rc));
	if ((rc = expect_state(fd, TXS_IP3_EXCHANGE_RESULTS, to, ip3_err, err, errlen)))
		return rc;
	struct txs_ip3_results mine;
	txs_ip3_test_results(t, &mine);
	rc = txs_ip3_results_encode(&mine, &json, &jn, err, errlen);
	txs_ip3_results_free(&mine);
	if (rc)
		return rc;
	rc = txs_ip3_write_json(fd, json, jn, to);
	free(json);
	if (rc)
		return txs_ctl_fail(err, errlen, rc, "sending our results: %s", strerror(-rc));
	rc = txs_ip3_read_json(fd, TXS_IP3_RESULTS_MAX, to, &json, &jn);
	if (rc)
		return txs_ctl_fail(err, errlen, rc, "reading the server's results: %s",
			    rc == -EMSGSIZE ? "over the size limit" : strerror(-rc));
	rc = txs_ip3_results_decode(&t->peer, json, jn, err, errlen);
	free(json);
	if (rc)
		return rc;
	t->have_peer = true;
	uint8_t (*bufs)[TXS_IP3_LEN_MAX] = malloc(sizeof(*bufs) * BATCH);
	for (unsigned i = 0; bufs && i < t->n; i++)
		if (!t->s[i].sender)
			recv_some(t, &t->s[i], bufs, DRAIN_MAX);
	free(bufs);
	if ((rc = expect_state(fd, TXS_IP3_DISPLAY_RESULTS, to, ip3_err, err, errlen)))
		return rc;
	txs_ip3_write_state(fd, TXS_IP3_IPERF_DONE, to);
	return 0;
}
