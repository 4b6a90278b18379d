/* SPDX-License-Identifier: MIT */
/* The server's iperf 2 UDP service (docs/iperf2.md): stock `iperf -c HOST
 * -u` clients on UDP 5001, beside the control port. iperf 2 has no control
 * connection: a client's datagrams (txscale/rx_iperf2.h) are its test, one
 * flow per source address and port, and its end-of-test datagram (a
 * negative id, sent again with the next magnitude every 10 ms until an
 * answer comes) asks for the server report, which carries our exact
 * counts: of the ids up to the end datagram's magnitude (all of which the
 * client sent, data and end datagrams alike), the ones that did not
 * arrive. The answer goes again for each further datagram of the flow (up
 * to TXS_SRV_IP2_ACKS times: the client's retries when it was lost), as
 * iperf 2's server does.
 *
 * One thread reads the socket (the accept loop may wait on a session); it
 * never prints: finished tests wait in a queue that the accept loop
 * empties into the log and the summary hook (txs_srv_ip2_drain). */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <txscale/pkt.h>
#include <txscale/json.h>
#include <txscale/rx_iperf2.h>
#include <txscale/rx_iperf3.h>
#include "common/err.h"
#include "pkt/sockaddr.h"
#include "server_priv.h"

#define BATCH 64
#define PEEK 64 /* the bytes of a datagram we read: its header and the client's flags */

enum { F_FREE = 0, F_RUN, F_DONE };

struct ip2_flow {
	int state;
	struct sockaddr_storage peer;
	socklen_t plen;
	struct txs_ip3_rx rx;
	double t_first, t_end; /* arrival (CLOCK_REALTIME, s): the first datagram, the end datagram */
	double last;           /* CLOCK_MONOTONIC of the last datagram */
	double began;          /* ... of the first */
	uint64_t end_id;       /* the end datagram's magnitude */
	uint64_t after;        /* datagrams after the end */
	unsigned acks;
	uint8_t back;          /* the client asked for traffic back (TXS_SRV_IP2_BACK_*) */
	uint8_t rep[TXS_IP2_REPORT_LEN];
};

struct txs_srv_ip2 {
	int fd;
	uint16_t port;
	pthread_t th;
	bool started;
	atomic_int stop;
	double idle_s, max_s;
	struct ip2_flow *f; /* [TXS_SRV_IP2_FLOWS] */
	unsigned hint;      /* the last flow found */
	pthread_mutex_t mu; /* the queue */
	struct txs_srv_ip2_test q[TXS_SRV_IP2_QUEUE];
	unsigned qn;
	unsigned long long q_lost, refused_said;
	_Atomic unsigned long long refused;
};

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool same_peer(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
	return x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
}

static void queue(struct txs_srv_ip2 *s, const struct ip2_flow *f, const char *how)
{
	struct txs_srv_ip2_test t = { .end_id = f->end_id, .seconds = f->t_end - f->t_first, .rx = f->rx,
				      .back = f->back };
	t.peer = f->peer;
	snprintf(t.how, sizeof(t.how), "%s", how);
	pthread_mutex_lock(&s->mu);
	if (s->qn < TXS_SRV_IP2_QUEUE)
		s->q[s->qn++] = t;
	else
		s->q_lost++;
	pthread_mutex_unlock(&s->mu);
}

/* the end datagram: the report, sent */
static void finish(struct txs_srv_ip2 *s, struct ip2_flow *f, uint64_t m, double t_rt)
{
	f->end_id = m;
	f->t_end = t_rt;
	f->state = F_DONE;
	const struct txs_ip3_rx *r = &f->rx;
	struct txs_ip2_report rep = { .flags = TXS_IP2_F_VERSION1 | TXS_IP2_F_SEQNO64B, .bytes = r->bytes,
				      .seconds = f->t_end - f->t_first, .errors = txs_ip3_rx_lost(r, m, NULL),
				      .out_of_order = r->reordered, .datagrams = m, .jitter = r->jitter };
	txs_ip2_report_write(f->rep, &rep);
	sendto(s->fd, f->rep, sizeof(f->rep), MSG_DONTWAIT, (const struct sockaddr *)&f->peer, f->plen);
	f->acks = 1;
	queue(s, f, "");
}

static struct ip2_flow *flow_get(struct txs_srv_ip2 *s, const struct sockaddr_storage *peer, socklen_t plen,
				 bool make)
{
	struct ip2_flow *fl = s->f;
	if (fl[s->hint].state != F_FREE && same_peer(&fl[s->hint].peer, peer))
		return &fl[s->hint];
	int free_k = -1;
	for (unsigned k = 0; k < TXS_SRV_IP2_FLOWS; k++) {
		if (fl[k].state == F_FREE) {
			if (free_k < 0)
				free_k = (int)k;
		} else if (same_peer(&fl[k].peer, peer)) {
			s->hint = k;
			return &fl[k];
		}
	}
	if (!make)
		return NULL;
	if (free_k < 0) {
		atomic_fetch_add(&s->refused, 1);
		return NULL;
	}
	struct ip2_flow *f = &fl[free_k];
	memset(f, 0, sizeof(*f));
	f->peer = *peer;
	f->plen = plen;
	txs_ip3_rx_init(&f->rx);
	s->hint = (unsigned)free_k;
	return f;
}

/* What a 2.x client's header asks of the server besides counting (2.1.8:
 * -d and -r set HEADER_VERSION1 in the flags at offset 16; -R and
 * --full-duplex HEADER_REVERSE / HEADER_FULLDUPLEX in the test flags, the
 * upper half of the word at offset 48, as captured). */
static uint8_t asks_back(const uint8_t *b, size_t len)
{
	if (len < 20)
		return 0;
	uint32_t fl = txs_get_be32(b + 16);
	if (fl & TXS_IP2_F_VERSION1)
		return TXS_SRV_IP2_BACK_DUAL;
	if ((fl & (TXS_IP2_F_EXTEND | 0x20000000u)) && len >= 52 && (txs_get_be32(b + 48) >> 16) & (0x0400 | 0x0800))
		return TXS_SRV_IP2_BACK_REVERSE;
	return 0;
}

static void datagram(struct txs_srv_ip2 *s, const struct sockaddr_storage *peer, socklen_t plen,
		     const uint8_t *b, size_t cap, size_t len, double t_rt, double mono)
{
	int64_t id;
	uint32_t sec, usec;
	struct ip2_flow *f = flow_get(s, peer, plen, false);
	if (txs_ip2_hdr_read(b, len < cap ? len : cap, f ? f->rx.highest + 1 : 1, &id, &sec, &usec) < 0) {
		if (f && f->state == F_RUN) { /* a malformed datagram of a running test */
			f->rx.received++;
			f->rx.malformed++;
			f->rx.bytes += len;
			f->last = mono;
		}
		return;
	}
	if (f && f->state == F_DONE) {
		if (id == 1 && mono - f->last > 0.5) { /* the same address and port: a new test */
			f->state = F_FREE;
			f = NULL;
		} else {
			f->after++;
			f->last = mono;
			if (f->acks < TXS_SRV_IP2_ACKS) {
				sendto(s->fd, f->rep, sizeof(f->rep), MSG_DONTWAIT, (const struct sockaddr *)&f->peer,
				       f->plen);
				f->acks++;
			}
			return;
		}
	}
	if (!f) {
		if (id < 0 && (uint64_t)-id > 1 + TXS_IP3_RX_MAX_JUMP)
			return; /* an end without a test: no answer to what may be a forged source */
		if (!(f = flow_get(s, peer, plen, true)))
			return;
		f->state = F_RUN;
		f->t_first = t_rt;
		f->began = mono;
	}
	if (!f->back)
		f->back = asks_back(b, len < cap ? len : cap);
	f->last = mono;
	uint64_t seq = id > 0 ? (uint64_t)id : (uint64_t)-id;
	txs_ip3_rx_seq(&f->rx, seq, sec, usec, len, t_rt);
	if (id < 0)
		finish(s, f, seq, t_rt);
}

static void expire(struct txs_srv_ip2 *s, double mono)
{
	for (unsigned k = 0; k < TXS_SRV_IP2_FLOWS; k++) {
		struct ip2_flow *f = &s->f[k];
		if (f->state == F_DONE && mono - f->last > TXS_SRV_IP2_LINGER_S) {
			f->state = F_FREE;
		} else if (f->state == F_RUN && (mono - f->last > s->idle_s || mono - f->began > s->max_s)) {
			f->t_end = f->t_first + (f->last - f->began);
			queue(s, f, mono - f->last > s->idle_s ? "no end of test came (idle)" : "ran past --max-time");
			f->state = F_FREE;
		}
	}
}

static void *ip2_thread(void *arg)
{
	struct txs_srv_ip2 *s = arg;
	static __thread uint8_t buf[BATCH][PEEK];
	static __thread struct sockaddr_storage from[BATCH];
	static __thread char ctl[BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	double last_exp = 0;
	while (!atomic_load(&s->stop)) {
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };
		poll(&pf, 1, 100);
		for (int round = 0; round < 64; round++) {
			for (int i = 0; i < BATCH; i++) {
				iov[i] = (struct iovec){ buf[i], PEEK };
				mm[i].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
								 .msg_iov = &iov[i], .msg_iovlen = 1,
								 .msg_control = ctl[i], .msg_controllen = sizeof(ctl[i]) };
				mm[i].msg_len = 0;
			}
			int n = recvmmsg(s->fd, mm, BATCH, MSG_DONTWAIT | MSG_TRUNC, NULL);
			if (n <= 0)
				break;
			double rt = now_s(CLOCK_REALTIME), mono = now_s(CLOCK_MONOTONIC);
			for (int i = 0; i < n; i++) {
				double t = rt;
				for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm[i].msg_hdr); c; c = CMSG_NXTHDR(&mm[i].msg_hdr, c))
					if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
						struct timespec ts;
						memcpy(&ts, CMSG_DATA(c), sizeof(ts));
						t = (double)ts.tv_sec + ts.tv_nsec / 1e9;
					}
				/* MSG_TRUNC: msg_len is the datagram's length, the buffer holds its first PEEK bytes */
				datagram(s, &from[i], mm[i].msg_hdr.msg_namelen, buf[i], PEEK, mm[i].msg_len, t, mono);
			}
			if (n < BATCH)
				break;
		}
		double mono = now_s(CLOCK_MONOTONIC);
		if (mono - last_exp > 0.1) {
			expire(s, mono);
			last_exp = mono;
		}
	}
	return NULL;
}

int txs_srv_ip2_start(struct txs_server *sv, char *err, size_t errlen)
{
	const struct txs_server_conf *c = &sv->c;
	if (c->iperf2_port < 0)
		return 0;
	if (c->auth_file && !c->iperf2_required) {
		/* iperf 2 has no way to answer the shared secret's challenge: served only when asked for */
		txs_srv_log(sv, "iperf 2: not serving iperf 2 clients: they cannot answer --auth-file's challenge "
			    "(--iperf2-port PORT serves them anyway, unauthenticated)");
		return 0;
	}
	struct txs_addr a;
	int fam = c->bind && txs_addr_parse(&a, c->bind) == 0 ? a.family : AF_INET6;
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 && !c->bind) {
		fam = AF_INET;
		fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0)
		return txs_fail(err, errlen, -errno, "iperf 2: socket: %s", strerror(errno));
	int one = 1, zero = 0, rb = 8 << 20;
	if (fam == AF_INET6 && !c->bind)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	/* a burst of a fast client while the thread is away: room for it (root may go past rmem_max) */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	struct sockaddr_storage ss;
	socklen_t sl = txs_sockaddr_set(&ss, fam, c->bind ? &a : NULL, (uint16_t)c->iperf2_port);
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		int e = errno;
		close(fd);
		if (!c->iperf2_required) { /* the default port taken (another server, an iperf -s -u): said, not fatal */
			txs_srv_log(sv, "iperf 2: not serving iperf 2 clients: UDP port %d: %s", c->iperf2_port, strerror(e));
			return 0;
		}
		return txs_fail(err, errlen, e == EADDRNOTAVAIL ? -EINVAL : -e, "--iperf2-port: cannot bind %s UDP port %d: %s",
				c->bind ? c->bind : "*", c->iperf2_port, strerror(e));
	}
	struct txs_srv_ip2 *s = calloc(1, sizeof(*s));
	struct ip2_flow *f = calloc(TXS_SRV_IP2_FLOWS, sizeof(*f));
	if (!s || !f) {
		free(s);
		free(f);
		close(fd);
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	s->f = f;
	s->fd = fd;
	s->idle_s = c->ctl_timeout;
	s->max_s = c->max_time + c->ctl_timeout;
	sl = sizeof(ss);
	uint16_t port = (uint16_t)c->iperf2_port;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		txs_srv_sa_addr(&ss, &a, &port);
	s->port = port;
	pthread_mutex_init(&s->mu, NULL);
	int e = pthread_create(&s->th, NULL, ip2_thread, s);
	if (e) {
		pthread_mutex_destroy(&s->mu);
		free(f);
		free(s);
		close(fd);
		return txs_fail(err, errlen, -e, "iperf 2: starting its thread: %s", strerror(e));
	}
	s->started = true;
	sv->ip2 = s;
	txs_srv_log(sv, "iperf 2 UDP clients on %s port %u (UDP), the server report with txscale's counts",
		    c->bind ? c->bind : "*", port);
	return 0;
}

void txs_srv_ip2_child(const struct txs_server *sv)
{
	if (sv->ip2)
		close(sv->ip2->fd);
}

uint16_t txs_srv_ip2_port(const struct txs_server *sv)
{
	return sv->ip2 ? sv->ip2->port : 0;
}

/* one finished test: the log line, and its JSON summary to the hook */
static void report(struct txs_server *sv, const struct txs_srv_ip2_test *t)
{
	struct txs_addr a;
	uint16_t port;
	char ab[INET6_ADDRSTRLEN], who[TXS_SRV_WHO_LEN + 16];
	txs_srv_sa_addr(&t->peer, &a, &port);
	txs_addr_str(&a, ab, sizeof(ab));
	snprintf(who, sizeof(who), "%s port %u", ab, port);
	const struct txs_ip3_rx *r = &t->rx;
	bool ended = t->end_id > 0;
	uint64_t lost = ended ? txs_ip3_rx_lost(r, t->end_id, NULL) : (r->highest > r->unique ? r->highest - r->unique : 0);
	uint64_t total = ended ? t->end_id : r->highest;
	if (t->back)
		txs_srv_log(sv, "iperf 2 client %s asked for traffic back (%s), which this server does not send: its "
				"own datagrams are counted", who,
			    t->back == TXS_SRV_IP2_BACK_DUAL ? "-d or -r" : "-R or --full-duplex");
	if (t->how[0])
		txs_srv_log(sv, "iperf 2 client %s: %s; after %.3f s: %llu datagrams received, %llu of %llu ids missing "
				"(not exact: no end), no report sent", who, t->how, t->seconds,
			    (unsigned long long)r->received, (unsigned long long)lost, (unsigned long long)total);
	else
		txs_srv_log(sv, "iperf 2 client %s: %.3f s, %llu datagrams (the end's id %llu): received %llu, lost %llu "
				"(%.4g%%) exact, duplicates %llu, reordered %llu, late %llu, malformed %llu, jitter %.3f ms; "
				"server report sent", who, t->seconds, (unsigned long long)total,
			    (unsigned long long)t->end_id, (unsigned long long)r->unique, (unsigned long long)lost,
			    total ? lost * 100.0 / (double)total : 0.0, (unsigned long long)r->duplicates,
			    (unsigned long long)r->reordered, (unsigned long long)r->late,
			    (unsigned long long)r->malformed, r->jitter * 1e3);
	if (!sv->h.summary)
		return;
	char *buf = NULL;
	size_t blen = 0;
	FILE *mf = open_memstream(&buf, &blen);
	if (!mf)
		return;
	struct txs_json j;
	txs_json_begin(&j, mf);
	txs_json_str(&j, "type", "summary");
	txs_json_str(&j, "kind", "recv");
	txs_json_str(&j, "device", "iperf2");
	txs_json_str(&j, "client", ab);
	txs_json_u64(&j, "client_port", port);
	txs_json_dbl(&j, "seconds", t->seconds);
	txs_json_u64(&j, "received", r->received);
	txs_json_u64(&j, "unique", r->unique);
	txs_json_u64(&j, "lost", lost);
	txs_json_bool(&j, "lost_exact", ended);
	if (ended)
		txs_json_u64(&j, "expected", total);
	else
		txs_json_key(&j, "expected"), fputs("null", mf);
	txs_json_u64(&j, "duplicates", r->duplicates);
	txs_json_u64(&j, "reordered", r->reordered);
	txs_json_u64(&j, "late", r->late);
	txs_json_u64(&j, "malformed", r->malformed);
	txs_json_u64(&j, "bytes", r->bytes);
	txs_json_dbl(&j, "jitter_ms", r->jitter * 1e3);
	txs_json_obj_open(&j, "iperf2");
	txs_json_u64(&j, "datagrams", total);
	txs_json_u64(&j, "end_id", t->end_id);
	txs_json_bool(&j, "report_sent", ended);
	txs_json_str(&j, "asked_back", t->back == TXS_SRV_IP2_BACK_DUAL ? "dual" : t->back ? "reverse" : "no");
	txs_json_obj_close(&j);
	txs_json_end(&j);
	fclose(mf);
	char *nl = buf ? strchr(buf, '\n') : NULL;
	if (nl)
		*nl = 0;
	if (buf) {
		struct txs_server_summary sm = { .session = 0, .client = ab, .role = "receiver", .iperf2 = true,
						 .json = buf };
		sv->h.summary(sv->h.user, &sm);
	}
	free(buf);
}

void txs_srv_ip2_drain(struct txs_server *sv)
{
	struct txs_srv_ip2 *s = sv->ip2;
	if (!s)
		return;
	struct txs_srv_ip2_test q[TXS_SRV_IP2_QUEUE];
	unsigned n;
	unsigned long long lost, refused;
	pthread_mutex_lock(&s->mu);
	n = s->qn;
	memcpy(q, s->q, n * sizeof(q[0]));
	s->qn = 0;
	lost = s->q_lost;
	s->q_lost = 0;
	refused = atomic_load(&s->refused);
	pthread_mutex_unlock(&s->mu);
	for (unsigned i = 0; i < n; i++)
		report(sv, &q[i]);
	if (lost)
		txs_srv_log(sv, "iperf 2: %llu finished tests not logged (the queue was full)", lost);
	if (refused != s->refused_said) {
		txs_srv_log(sv, "iperf 2: %llu datagrams of new clients dropped: %u tests at once at most",
			    refused - s->refused_said, TXS_SRV_IP2_FLOWS);
		s->refused_said = refused;
	}
}

void txs_srv_ip2_stop(struct txs_server *sv)
{
	struct txs_srv_ip2 *s = sv->ip2;
	if (!s)
		return;
	if (s->started) {
		atomic_store(&s->stop, 1);
		pthread_join(s->th, NULL);
	}
	txs_srv_ip2_drain(sv);
	pthread_mutex_destroy(&s->mu);
	close(s->fd);
	free(s->f);
	free(s);
	sv->ip2 = NULL;
}
