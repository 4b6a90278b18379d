/* SPDX-License-Identifier: MIT */
/* The STAMP session-sender (docs/stamp.md, "The sender"). A session opens
 * with a first probe from its own connected socket, sent until it is
 * answered (its reply fixes the reflector's base number and says whether
 * the reflector is stateful). Its packets then go out on txscale's engine:
 * session k is worker k of the STAMP generator (gen.c), paced, each
 * stamped T1 as it is written; the session's receive thread reads the
 * replies (recvmmsg, kernel receive stamps as T4) from the socket that
 * holds the flow's port (ours on frame devices, the udp: device's own,
 * handed over by on_socket, on udp:) and adds what the worker numbered,
 * published once per burst, to the analysis. When the engine is done it
 * waits for the stragglers and ends with tail probes until the last
 * packet sent is answered: only then is the reflector's count, and so the
 * loss split per direction, exact. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/json.h>
#include <txscale/stamp.h>
#include <txscale/netdev.h>
#include "common/alloc.h"
#include "stamp_priv.h"

#define BATCH 32
#define HEAD_TRIES 5
#define HEAD_WAIT_NS 1000000000ull
#define TAIL_TRIES 5
#define MAX_SESSIONS 64

struct sess {
	const struct txs_stamp_send_conf *c;
	uint64_t head_refused;           /* before the first answer: ICMP port unreachable (ECONNREFUSED) */
	uint64_t head_bad_mac, head_bad; /* ... replies whose HMAC failed, that did not decode otherwise */
	volatile sig_atomic_t *stop;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	struct sockaddr_storage src;
	socklen_t src_len;
	unsigned idx;
	int fd;
	uint16_t ssid, err_est;
	size_t len, base;
	uint8_t tmpl[TXS_STAMP_MAX_LEN]; /* base zeroed + the TLVs */
	size_t dm_off;                   /* Direct Measurement value in the template (0: none) */
	uint32_t next_seq;
	uint64_t sent_total;
	struct txs_stamp_ana *ana;
	uint64_t head_retries, tail_probes;
	uint64_t max_rtt_ns;
	uint64_t t0_mono, next_iv;     /* intervals: the session's start, the next report */
	uint64_t iv_sent, iv_recv;     /* counts at the last report */
	size_t iv_samples;
	int rc;
	char err[400];
	struct stamp_gen_sess *gs;     /* the engine's worker for this session */
	int dev_fd;                    /* udp: the device's socket (on_socket), -1 until then */
	int sending_done;              /* set (release) once the engine ended */
	pthread_t th;
	bool th_started;
	uint8_t rbuf[BATCH][TXS_STAMP_MAX_LEN + 1];
	uint8_t sbuf[1][TXS_STAMP_MAX_LEN]; /* the probes' */
};

static bool stopped(const struct sess *s)
{
	return s->stop && *s->stop;
}

/* TLVs after the base: CoS, Direct Measurement, Timestamp Information,
 * padding to the length, and in authenticated mode an HMAC TLV last. */
static int build_tmpl(struct sess *s, char *err, size_t errlen)
{
	const struct txs_stamp_send_conf *c = s->c;
	bool auth = c->key.len > 0;
	s->base = auth ? TXS_STAMP_AUTH_LEN : TXS_STAMP_BASE_LEN;
	size_t need = s->base;
	if (c->tlvs & TXS_STAMP_TLVS_COS)
		need += 8;
	if (c->tlvs & TXS_STAMP_TLVS_DIRECT)
		need += 16;
	if (c->tlvs & TXS_STAMP_TLVS_TSINFO)
		need += 8;
	if (c->tlvs & TXS_STAMP_TLVS_PAD)
		need += 4;
	if (auth && c->tlvs)
		need += 4 + TXS_STAMP_HMAC_LEN;
	s->len = c->length ? c->length : need;
	if (s->len < need || s->len > TXS_STAMP_MAX_LEN) {
		snprintf(err, errlen, "length %zu: %s needs %zu to %d bytes", s->len,
			 c->tlvs ? "these TLVs" : (auth ? "an authenticated packet" : "a STAMP packet"), need,
			 TXS_STAMP_MAX_LEN);
		return -EINVAL;
	}
	memset(s->tmpl, 0, s->len);
	size_t off = s->base;
	if (c->tlvs & TXS_STAMP_TLVS_COS) {
		uint8_t *t = s->tmpl + off;
		t[1] = TXS_STAMP_TLV_COS;
		txs_put_be16(t + 2, 4);
		t[4] = (uint8_t)((c->tos >= 0 ? (c->tos >> 2) : 0) << 2); /* DSCP1: the DSCP we want back */
		off += 8;
	}
	if (c->tlvs & TXS_STAMP_TLVS_DIRECT) {
		uint8_t *t = s->tmpl + off;
		t[1] = TXS_STAMP_TLV_DIRECT;
		txs_put_be16(t + 2, 12);
		s->dm_off = off + 4;
		off += 16;
	}
	if (c->tlvs & TXS_STAMP_TLVS_TSINFO) {
		uint8_t *t = s->tmpl + off;
		t[1] = TXS_STAMP_TLV_TSINFO;
		txs_put_be16(t + 2, 4);
		off += 8;
	}
	size_t hmac_room = auth && c->tlvs ? 4 + TXS_STAMP_HMAC_LEN : 0;
	if (c->tlvs && s->len - off - hmac_room >= 4) { /* the rest as one Extra Padding TLV */
		uint8_t *t = s->tmpl + off;
		t[1] = TXS_STAMP_TLV_PADDING;
		txs_put_be16(t + 2, (uint16_t)(s->len - off - hmac_room - 4));
		off = s->len - hmac_room;
	}
	if (hmac_room) {
		uint8_t *t = s->tmpl + off;
		t[1] = TXS_STAMP_TLV_HMAC;
		txs_put_be16(t + 2, TXS_STAMP_HMAC_LEN);
	}
	return 0;
}

static uint64_t ptp_from_ns(uint64_t ns)
{
	return (ns / 1000000000ull) << 32 | (ns % 1000000000ull);
}

/* Packet seq into buf, stamped now: T1 */
static uint64_t build(struct sess *s, uint8_t *buf, uint32_t seq)
{
	memcpy(buf, s->tmpl, s->len);
	if (s->dm_off)
		txs_put_be32(buf + s->dm_off, (uint32_t)(s->sent_total + 1)); /* S_TxC: ours, this one included */
	uint64_t now = txs_now_real_ns();
	struct txs_stamp_pkt p = { .seq = seq, .err = s->err_est, .ssid = s->ssid };
	p.ts = s->c->ptp ? ptp_from_ns(now) : txs_stamp_ntp_from_ns(now);
	txs_stamp_encode_sender(buf, s->len, &p, &s->c->key);
	if (s->c->key.len && s->c->tlvs)
		stamp_tlv_hmac_fill(&s->c->key, buf, s->len);
	return now;
}

static int extend(struct sess *s);

static uint64_t t4_of(struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	return txs_now_real_ns();
}

/* Replies waiting on the socket into the analysis (ana NULL: the head
 * probe, want_seq its number: 1 when it came). Returns replies read. */
static int drain(struct sess *s, uint32_t want_seq, bool *got_want, struct txs_stamp_pkt *want_pkt,
		 uint64_t *want_t4, size_t *want_len)
{
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	uint8_t ctl[BATCH][128];
	int total = 0;
	for (;;) {
		for (unsigned i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ s->rbuf[i], sizeof(s->rbuf[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1, .msg_control = ctl[i],
							.msg_controllen = sizeof(ctl[i]) };
		}
		int n = recvmmsg(s->fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n < 0 && (errno == ECONNREFUSED || errno == EINTR)) {
			if (errno == ECONNREFUSED && !s->ana)
				s->head_refused++;
			continue; /* an ICMP error from a moment ago: the reflector may be back */
		}
		if (n <= 0)
			return total;
		/* what the engine's worker numbered before these replies came */
		if (s->ana && s->gs && extend(s))
			return total;
		for (int i = 0; i < n; i++) {
			struct txs_stamp_pkt p;
			size_t len = m[i].msg_len;
			uint64_t t4 = t4_of(&m[i].msg_hdr);
			/* any length from the base up: not every TWAMP-light reflector answers as long */
			int dr = txs_stamp_decode_reflected(s->rbuf[i], len, &s->c->key, &p);
			if (dr) {
				if (s->ana)
					stamp_ana_count_foreign(s->ana);
				else if (dr == -EACCES)
					s->head_bad_mac++;
				else
					s->head_bad++;
				continue;
			}
			if (got_want && p.s_seq == want_seq) {
				*got_want = true;
				if (want_pkt) {
					*want_pkt = p;
					*want_t4 = t4;
					*want_len = len;
				}
			}
			if (s->ana && txs_stamp_ana_reply(s->ana, &p, t4) == 0) {
				stamp_ana_reply_tlvs(s->ana, s->rbuf[i], len, s->base);
				int64_t t2 = (int64_t)txs_stamp_ns_from_ts(p.rx_ts, p.err);
				int64_t t3 = (int64_t)txs_stamp_ns_from_ts(p.ts, p.err);
				int64_t rtt = (int64_t)t4 - (int64_t)txs_stamp_ns_from_ts(p.s_ts, p.s_err) - (t3 - t2);
				if (rtt > 0 && (uint64_t)rtt > s->max_rtt_ns && rtt < 10000000000ll)
					s->max_rtt_ns = (uint64_t)rtt;
			}
		}
		total += n;
	}
}

/* The interval report, when one is due (final: the last, partial one) */
static void interval(struct sess *s, bool final)
{
	const struct txs_stamp_send_conf *c = s->c;
	if (!(c->interval_s > 0) || !c->on_interval || !s->ana)
		return;
	uint64_t now = txs_now_mono_ns();
	if (!final && now < s->next_iv)
		return;
	struct txs_stamp_interval iv = { .session = s->idx, .ssid = s->ssid };
	uint64_t step = (uint64_t)(c->interval_s * 1e9);
	uint64_t start = s->next_iv - step;
	iv.start = (double)(start - s->t0_mono) / 1e9;
	iv.end = (double)((final ? now : s->next_iv) - s->t0_mono) / 1e9;
	uint64_t sent, recv;
	size_t samples;
	stamp_ana_progress(s->ana, &sent, &recv, &samples);
	iv.sent = sent - s->iv_sent;
	iv.received = recv - s->iv_recv;
	if (stamp_ana_rtt_range(s->ana, s->iv_samples, samples, &iv.rtt))
		return;
	s->iv_sent = sent;
	s->iv_recv = recv;
	s->iv_samples = samples;
	s->next_iv += step;
	if (final && iv.end <= iv.start)
		return;
	c->on_interval(c->user, &iv);
}

static void wait_in(struct sess *s, uint64_t ns)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	ppoll(&pfd, 1, &ts, NULL);
}

static int send_one(struct sess *s, uint32_t seq, uint64_t *t1)
{
	*t1 = build(s, s->sbuf[0], seq);
	for (int tries = 0; tries < 3; tries++) {
		ssize_t w = send(s->fd, s->sbuf[0], s->len, 0);
		if (w == (ssize_t)s->len)
			return 0;
		if (w < 0 && errno != ECONNREFUSED && errno != EINTR && errno != ENOBUFS && errno != EAGAIN)
			return -errno;
		if (w < 0 && errno == ECONNREFUSED && !s->ana)
			s->head_refused++;
	}
	return -EAGAIN;
}

/* The first probe, until answered: the session starts at the answered one */
static int head(struct sess *s)
{
	for (unsigned k = 0; k < HEAD_TRIES && !stopped(s); k++) {
		uint32_t seq = s->next_seq++;
		uint64_t t1;
		int rc = send_one(s, seq, &t1);
		if (rc) {
			snprintf(s->err, sizeof(s->err), "send: %s", strerror(-rc));
			return rc;
		}
		uint64_t end = txs_now_mono_ns() + HEAD_WAIT_NS;
		bool got = false;
		struct txs_stamp_pkt p;
		uint64_t t4 = 0;
		size_t len = 0;
		while (!got && !stopped(s)) {
			uint64_t now = txs_now_mono_ns();
			if (now >= end)
				break;
			wait_in(s, end - now);
			drain(s, seq, &got, &p, &t4, &len);
		}
		if (!got) {
			s->head_retries++;
			continue;
		}
		s->ana = txs_stamp_ana_new(seq);
		if (!s->ana || txs_stamp_ana_sent(s->ana, seq, t1))
			return -ENOMEM;
		s->t0_mono = txs_now_mono_ns();
		s->next_iv = s->t0_mono + (uint64_t)(s->c->interval_s > 0 ? s->c->interval_s * 1e9 : 0);
		s->sent_total = 1;
		txs_stamp_ana_reply(s->ana, &p, t4);
		return 0;
	}
	if (stopped(s)) {
		snprintf(s->err, sizeof(s->err), "stopped before the reflector answered a first probe (%llu sent)",
			 (unsigned long long)s->head_retries + 1);
		return -EINTR;
	}
	/* why: what came back instead of an answer */
	char why[200];
	if (s->head_bad_mac)
		snprintf(why, sizeof(why), "%llu replies came whose HMAC does not match our key (the reflector's "
			 "--auth-file differs, or it is unauthenticated)", (unsigned long long)s->head_bad_mac);
	else if (s->head_bad)
		snprintf(why, sizeof(why), "%llu replies came that are not STAMP replies we can read (%s)",
			 (unsigned long long)s->head_bad, s->c->key.len ? "shorter than an authenticated one: an "
			 "unauthenticated reflector?" : "too short");
	else if (s->head_refused)
		snprintf(why, sizeof(why), "the host answered port unreachable (ICMP) %llu times: no reflector listens "
			 "on that port", (unsigned long long)s->head_refused);
	else
		snprintf(why, sizeof(why), "nothing came back (a firewall, no route, or a reflector that drops our "
			 "packets%s)", s->c->key.len ? "" : ": an authenticated one wants --auth-file");
	snprintf(s->err, sizeof(s->err), "no answer to %d first probes (%.0f s each): %s", HEAD_TRIES,
		 (double)HEAD_WAIT_NS / 1e9, why);
	return -ETIMEDOUT;
}

static int set_int(int fd, int level, int opt, int v)
{
	return setsockopt(fd, level, opt, &v, sizeof(v));
}

static int resolve(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss, socklen_t *sl,
		   int family)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_family = family, .ai_flags = passive ? AI_PASSIVE : 0 };
	struct addrinfo *ai = NULL;
	char ps[8];
	snprintf(ps, sizeof(ps), "%u", port);
	if (getaddrinfo(host, ps, &hints, &ai) || !ai)
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*sl = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int open_sess(struct sess *s, char *err, size_t errlen)
{
	int fam = s->dst.ss_family;
	s->fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (s->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	set_int(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
	if (set_int(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20) < 0) /* past rmem_max with CAP_NET_ADMIN */
		set_int(s->fd, SOL_SOCKET, SO_RCVBUF, 8 << 20);
	set_int(s->fd, SOL_SOCKET, SO_SNDBUF, 4 << 20);
	if (s->c->tos >= 0) {
		int r = fam == AF_INET ? set_int(s->fd, IPPROTO_IP, IP_TOS, s->c->tos)
				       : set_int(s->fd, IPPROTO_IPV6, IPV6_TCLASS, s->c->tos);
		if (r < 0) {
			snprintf(err, errlen, "TOS %d: %s", s->c->tos, strerror(errno));
			return -errno;
		}
	}
	if (s->src_len && bind(s->fd, (struct sockaddr *)&s->src, s->src_len) < 0) {
		snprintf(err, errlen, "bind %s: %s", s->c->bind, strerror(errno));
		return -errno;
	}
	if (connect(s->fd, (struct sockaddr *)&s->dst, s->dst_len) < 0) {
		snprintf(err, errlen, "connect %s: %s", s->c->host, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Stragglers, then tail probes until the last packet is answered */
static void finish(struct sess *s)
{
	const struct txs_stamp_send_conf *c = s->c;
	uint64_t wait = (uint64_t)((c->wait_s > 0 ? c->wait_s : 1.0) * 1e9);
	uint64_t end = txs_now_mono_ns() + wait;
	uint32_t last = s->next_seq - 1;
	for (;;) {
		drain(s, 0, NULL, NULL, NULL, NULL);
		uint64_t now = txs_now_mono_ns();
		if (now >= end || txs_stamp_ana_answered(s->ana, last))
			break;
		wait_in(s, end - now > 20000000 ? 20000000 : end - now);
	}
	/* after the last answer, a moment for replies still on their way */
	uint64_t settle = s->max_rtt_ns * 2 + 2000000;
	if (settle > wait)
		settle = wait;
	end = txs_now_mono_ns() + settle;
	for (uint64_t now; (now = txs_now_mono_ns()) < end;) {
		wait_in(s, end - now);
		drain(s, 0, NULL, NULL, NULL, NULL);
	}
	/* stopped (SIGINT): the stragglers' wait above, no tail probes */
	for (unsigned k = 0; k < TAIL_TRIES && !stopped(s) && !txs_stamp_ana_answered(s->ana, s->next_seq - 1); k++) {
		uint32_t seq = s->next_seq++;
		uint64_t t1;
		if (send_one(s, seq, &t1))
			break;
		if (txs_stamp_ana_sent(s->ana, seq, t1))
			break;
		s->sent_total++;
		s->tail_probes++;
		uint64_t w = s->max_rtt_ns * 4 + 200000000ull;
		if (w > 1000000000ull)
			w = 1000000000ull;
		uint64_t e = txs_now_mono_ns() + w;
		for (uint64_t now; (now = txs_now_mono_ns()) < e && !txs_stamp_ana_answered(s->ana, seq);) {
			wait_in(s, e - now);
			drain(s, 0, NULL, NULL, NULL, NULL);
		}
	}
	drain(s, 0, NULL, NULL, NULL, NULL);
	interval(s, true);
}


/* The replies while the engine's worker sends: the packets it numbered
 * (published once per burst) join the analysis as their replies can come */
static int extend_to(struct sess *s, uint64_t k)
{
	uint64_t sent, recv;
	size_t samples;
	stamp_ana_progress(s->ana, &sent, &recv, &samples);
	for (uint64_t j = sent - 1; j < k; j++) { /* the ones after the first probe */
		uint64_t t1 = s->gs->t1[j >> STAMP_T1_SHIFT][j & ((1u << STAMP_T1_SHIFT) - 1)];
		if (txs_stamp_ana_sent(s->ana, s->gs->seq0 + (uint32_t)j, t1))
			return -ENOMEM;
	}
	return 0;
}

static int extend(struct sess *s)
{
	return extend_to(s, __atomic_load_n(&s->gs->pub.numbered, __ATOMIC_ACQUIRE));
}

static void *rx_main(void *arg)
{
	struct sess *s = arg;
	if (s->c->cpus && s->c->cpus[s->idx] >= 0) {
		/* on its worker's CPU: the session stays on the CPU it was given
		 * (a receive thread left to the scheduler lands on the one other
		 * CPU there is, the reflector's on a two-CPU host) */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->c->cpus[s->idx], &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	for (;;) {
		bool done = __atomic_load_n(&s->sending_done, __ATOMIC_ACQUIRE);
		if (s->fd < 0) {
			int fd = __atomic_load_n(&s->dev_fd, __ATOMIC_ACQUIRE);
			if (fd >= 0)
				s->fd = fd;
		}
		if (s->fd >= 0) {
			if (extend(s)) {
				s->rc = -ENOMEM;
				return NULL;
			}
			drain(s, 0, NULL, NULL, NULL, NULL);
			interval(s, false);
		}
		if (done)
			break;
		if (s->fd >= 0)
			wait_in(s, 5000000);
		else
			usleep(200); /* udp: the device's socket comes with the worker's first frame */
	}
	uint64_t k = __atomic_load_n(&s->gs->pub.numbered, __ATOMIC_ACQUIRE);
	if (extend_to(s, k)) {
		s->rc = -ENOMEM;
		return NULL;
	}
	s->next_seq = s->gs->seq0 + (uint32_t)k;
	s->sent_total = 1 + k;
	if (s->fd < 0) { /* the worker sent nothing: our own socket again, for the tail */
		int rc = open_sess(s, s->err, sizeof(s->err));
		if (rc) {
			s->rc = rc;
			return NULL;
		}
	}
	finish(s);
	return NULL;
}

static void *head_main(void *arg)
{
	struct sess *s = arg;
	s->rc = head(s);
	return NULL;
}


/* udp: (on the worker's thread) the device's socket for session `queue`:
 * the replies come to it, so the session's receive thread reads it */
static void on_socket(void *user, int unsigned queue, int fd)
{
	struct sess **ss = user;
	struct sess *s = ss[queue];
	/* our own descriptor of it: the queue closes its own when the worker
	 * ends, and the last replies and the tail probes come after that */
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return; /* the session reads nothing: its replies count as lost, never as ours */
	set_int(fd, SOL_SOCKET, SO_TIMESTAMPNS, 1);
	if (set_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20) < 0)
		set_int(fd, SOL_SOCKET, SO_RCVBUF, 8 << 20);
	__atomic_store_n(&s->dev_fd, fd, __ATOMIC_RELEASE);
}

static int sockaddr_to(const struct sockaddr_storage *ss, struct txs_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		a->family = AF_INET;
		a->v4 = s4->sin_addr;
		*port = ntohs(s4->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		a->family = AF_INET6;
		a->v6 = s6->sin6_addr;
		*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* The session's flow for its worker: our socket's own addresses and port */
static int gen_sess(struct sess *s, char *err, size_t errlen)
{
	struct stamp_gen_sess *g = txs_zalloc_line(sizeof(*g));
	if (!g)
		return -ENOMEM;
	s->gs = g;
	if (!(g->t1 = calloc(STAMP_T1_CHUNKS, sizeof(*g->t1))))
		return -ENOMEM;
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	uint16_t dport;
	if (getsockname(s->fd, (struct sockaddr *)&me, &ml) < 0 || sockaddr_to(&me, &g->spec.src, &g->spec.sport) ||
	    sockaddr_to(&s->dst, &g->spec.dst, &dport)) {
		snprintf(err, errlen, "session %u: its socket's address: %s", s->idx, strerror(errno));
		return -EINVAL;
	}
	/* a socket reopened for the tail takes the same port */
	s->src = me;
	s->src_len = ml;
	g->spec.dport = dport;
	g->spec.payload_len = (uint32_t)s->len;
	g->spec.tos = (uint8_t)(s->c->tos >= 0 ? s->c->tos : 0);
	g->key = &s->c->key;
	g->stmpl = s->tmpl;
	g->len = s->len;
	g->dm_off = s->dm_off;
	g->tlv_hmac = s->c->key.len && s->c->tlvs;
	g->ptp = s->c->ptp;
	g->ssid = s->ssid;
	g->err_est = s->err_est;
	g->seq0 = s->next_seq;
	return 0;
}

/* Packets per session after the first probe, and the engine's time limit */
static void schedule(const struct txs_stamp_send_conf *c, uint64_t *after_head, double *duration)
{
	uint64_t count = c->count;
	double secs = c->secs > 0 ? c->secs : (count ? 0 : 10.0);
	*duration = c->rate > 0 ? 0 : secs;
	if (c->rate > 0 && secs > 0) {
		/* paced for a time: the packets scheduled in it, those late for a
		 * moment off the CPU sent late (never dropped), within twice the time */
		uint64_t in_time = (uint64_t)(c->rate * secs);
		if (in_time < 1)
			in_time = 1;
		if (!count || in_time < count)
			count = in_time;
		*duration = 2 * secs + 1;
	}
	*after_head = count > 1 ? count - 1 : 0;
	if (!count && *duration > 0)
		*after_head = UINT64_MAX; /* unlimited rate for a time */
}

int txs_stamp_send_run(const struct txs_stamp_send_conf *c, volatile sig_atomic_t *stop,
		       struct txs_stamp_result *res, char *err, size_t errlen)
{
	char dummy[8];
	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	memset(res, 0, sizeof(*res));
	unsigned n = c->sessions ? c->sessions : 1;
	if (n > MAX_SESSIONS) {
		snprintf(err, errlen, "%u sessions: at most %d", n, MAX_SESSIONS);
		return -EINVAL;
	}
	if (!c->host) {
		snprintf(err, errlen, "no reflector address");
		return -EINVAL;
	}
	if (c->rate < 0 || !isfinite(c->rate)) {
		snprintf(err, errlen, "rate %g: not a rate", c->rate);
		return -EINVAL;
	}
	if (c->rate == 0 && !c->count && c->secs <= 0) {
		snprintf(err, errlen, "an unlimited rate needs -n or -t");
		return -EINVAL;
	}
	if (c->pace != TXS_PACE_CONST && c->pace != TXS_PACE_POISSON) {
		snprintf(err, errlen, "pacing: const or poisson");
		return -EINVAL;
	}
	if (c->pace == TXS_PACE_POISSON && !(c->rate > 0)) {
		snprintf(err, errlen, "poisson departures need a rate");
		return -EINVAL;
	}
	struct sess *ss[MAX_SESSIONS] = { 0 };
	int rc = 0;
	struct sockaddr_storage dst, src;
	socklen_t dl = 0, sl = 0;
	if (resolve(c->host, c->port ? c->port : TXS_STAMP_PORT, 0, &dst, &dl, AF_UNSPEC)) {
		snprintf(err, errlen, "reflector '%s': no such host or address", c->host);
		return -EINVAL;
	}
	if (c->bind && resolve(c->bind, 0, 1, &src, &sl, dst.ss_family)) {
		snprintf(err, errlen, "bind address '%s': not an address of the reflector's family", c->bind);
		return -EINVAL;
	}
	bool synced;
	uint16_t err_est = stamp_clock_err(&synced) | (c->ptp ? TXS_STAMP_ERR_Z : 0);
	uint32_t seq0;
	if (getrandom(&seq0, sizeof(seq0), 0) != sizeof(seq0))
		seq0 = (uint32_t)txs_now_mono_ns();
	for (unsigned i = 0; i < n && !rc; i++) {
		struct sess *s = calloc(1, sizeof(*s));
		if (!s) {
			rc = -ENOMEM;
			break;
		}
		ss[i] = s;
		s->c = c;
		s->stop = stop;
		s->idx = i;
		s->fd = s->dev_fd = -1;
		s->dst = dst;
		s->dst_len = dl;
		if (sl) {
			s->src = src;
			s->src_len = sl;
		}
		s->ssid = (uint16_t)((c->ssid ? c->ssid : 1) + i);
		s->err_est = err_est;
		/* our numbers start far from 0: a stateful reflector's own start there */
		s->next_seq = ((seq0 + i * 0x01000000u) & 0x3fffffffu) | 0x40000000u;
		rc = build_tmpl(s, err, errlen);
		if (!rc)
			rc = open_sess(s, err, errlen);
	}
	/* 1. each session's first probe, until answered (its own socket, in parallel) */
	for (unsigned i = 0; i < n && !rc; i++) {
		int e = pthread_create(&ss[i]->th, NULL, head_main, ss[i]);
		if (e) {
			snprintf(err, errlen, "thread: %s", strerror(e));
			rc = -e;
			break;
		}
		ss[i]->th_started = true;
	}
	for (unsigned i = 0; i < n; i++)
		if (ss[i] && ss[i]->th_started) {
			pthread_join(ss[i]->th, NULL);
			ss[i]->th_started = false;
			if (!rc && ss[i]->rc) {
				rc = ss[i]->rc;
				snprintf(err, errlen, "session %u (SSID %u): %s", i, ss[i]->ssid,
					 ss[i]->err[0] ? ss[i]->err : strerror(-rc));
			}
		}
	for (unsigned i = 0; i < n && !rc; i++)
		rc = gen_sess(ss[i], err, errlen);
	/* 2. the rest on the engine: worker k sends session k's packets */
	uint64_t after_head = 0;
	double duration = 0;
	schedule(c, &after_head, &duration);
	struct txs_netdev *dev = NULL;
	struct txs_engine *eng = NULL;
	struct stamp_gen_conf gconf = { .sess = NULL, .n = n };
	struct stamp_gen_sess *gss[MAX_SESSIONS];
	bool run_engine = !rc && after_head > 0 && !(stop && *stop);
	if (run_engine) {
		const struct txs_flow_spec *sp = &ss[0]->gs->spec;
		bool v4 = sp->dst.family == AF_INET;
		struct txs_netdev_conf dc = { .max_queues = n,
					      .frame_size = (uint32_t)(TXS_ETH_HLEN + (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) +
								       TXS_UDP_HLEN + ss[0]->len),
					      .dst = sp->dst, .dport = sp->dport, .src = sp->src, .sport = sp->sport,
					      .on_socket = on_socket, .on_socket_user = ss };
		if (dc.frame_size < TXS_ETH_MIN_FRAME)
			dc.frame_size = TXS_ETH_MIN_FRAME;
		char derr[200] = "";
		const char *spec = c->dev ? c->dev : "udp:gso=off";
		rc = txs_netdev_open(&dev, spec, &dc, derr, sizeof(derr));
		if (rc) {
			snprintf(err, errlen, "--dev %s: %s", spec, derr[0] ? derr : strerror(-rc));
			dev = NULL;
		}
	}
	if (run_engine && !rc) {
		for (unsigned i = 0; i < n; i++) {
			gss[i] = ss[i]->gs;
			if (dev->l2_needed) {
				memcpy(gss[i]->spec.src_mac, dev->src_mac, 6);
				memcpy(gss[i]->spec.dst_mac, dev->dst_mac, 6);
			}
			if (dev->kernel_ip) {
				/* the device's socket takes our port: the replies come
				 * to it (on_socket), ours is closed */
				close(ss[i]->fd);
				ss[i]->fd = -1;
			}
		}
		gconf.sess = gss;
		struct txs_engine_conf ec = {
			.n_workers = n, .cpus = c->cpus,
			.count = after_head == UINT64_MAX ? 0 : after_head * n, .duration = duration,
			.rate_pps = c->rate * n, .dev = dev, .gen = &stamp_gen_ops, .gen_conf = &gconf,
			.pace = { .kind = c->pace, .seed = c->seed },
			.pace_slack_ns = c->pace_slack_ns == UINT64_MAX ? 0
					 : c->pace_slack_ns ? c->pace_slack_ns : TXS_PACE_SLACK_DEFAULT_NS,
			.pace_slack_gaps = c->pace_slack_ns ? 0 : TXS_PACE_SLACK_GAPS,
			.timestamps = TXS_TS_PACKET,
		};
		rc = txs_engine_create(&eng, &ec);
		if (rc) {
			snprintf(err, errlen, "engine: %s", strerror(-rc));
			eng = NULL;
		}
	}
	/* 3. a receive thread per session, then the engine */
	for (unsigned i = 0; i < n && run_engine && !rc; i++) {
		int e = pthread_create(&ss[i]->th, NULL, rx_main, ss[i]);
		if (e) {
			snprintf(err, errlen, "thread: %s", strerror(e));
			rc = -e;
			break;
		}
		ss[i]->th_started = true;
	}
	if (run_engine && !rc) {
		rc = txs_engine_start(eng);
		if (rc) {
			snprintf(err, errlen, "starting the workers: %s", strerror(-rc));
		} else {
			while (!txs_engine_done(eng)) {
				if (stop && *stop)
					txs_engine_stop(eng);
				usleep(2000);
			}
			rc = txs_engine_wait(eng);
			if (rc)
				snprintf(err, errlen, "sending: %s", strerror(-rc));
			unsigned nw = txs_engine_workers(eng);
			struct txs_stat_row rows[MAX_SESSIONS];
			if (nw <= MAX_SESSIONS) {
				txs_engine_read(eng, rows);
				for (unsigned i = 0; i < nw; i++)
					res->local_drops += rows[i].drops;
			}
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (ss[i])
			__atomic_store_n(&ss[i]->sending_done, 1, __ATOMIC_RELEASE);
	uint64_t local_drops = res->local_drops;
	for (unsigned i = 0; i < n; i++)
		if (ss[i] && ss[i]->th_started) {
			pthread_join(ss[i]->th, NULL);
			if (!rc && ss[i]->rc) {
				rc = ss[i]->rc;
				snprintf(err, errlen, "session %u (SSID %u): %s", i, ss[i]->ssid,
					 ss[i]->err[0] ? ss[i]->err : strerror(-rc));
			}
		}
	/* no engine (one packet per session: the first probe): the tail alone */
	for (unsigned i = 0; i < n && !rc && !run_engine; i++)
		finish(ss[i]);
	if (!rc) {
		struct txs_stamp_ana *a[MAX_SESSIONS];
		for (unsigned i = 0; i < n; i++)
			a[i] = ss[i]->ana;
		rc = txs_stamp_ana_result_n(a, n, res);
		for (unsigned i = 0; i < n; i++) {
			res->head_retries += ss[i]->head_retries;
			res->tail_probes += ss[i]->tail_probes;
		}
		res->local_drops = local_drops;
		if (rc)
			snprintf(err, errlen, "out of memory");
	}
	txs_engine_destroy(eng);
	if (dev)
		txs_netdev_close(dev); /* udp: the sessions' sockets since the engine started */
	for (unsigned i = 0; i < n; i++)
		if (ss[i]) {
			if (ss[i]->fd >= 0)
				close(ss[i]->fd);
			if (ss[i]->dev_fd >= 0 && ss[i]->dev_fd != ss[i]->fd)
				close(ss[i]->dev_fd);
			txs_stamp_ana_free(ss[i]->ana);
			if (ss[i]->gs && ss[i]->gs->t1) {
				for (size_t k = 0; k < STAMP_T1_CHUNKS && ss[i]->gs->t1[k]; k++)
					free(ss[i]->gs->t1[k]);
				free(ss[i]->gs->t1);
			}
			free(ss[i]->gs);
			free(ss[i]);
		}
	return rc;
}

/* ---- the summary --------------------------------------------------------------------- */

static void jdist(struct txs_json *j, const char *key, const struct txs_stamp_dist *d)
{
	txs_json_obj_open(j, key);
	txs_json_u64(j, "count", d->count);
	if (d->count) {
		txs_json_i64(j, "min", d->min);
		txs_json_i64(j, "p50", d->p50);
		txs_json_i64(j, "p90", d->p90);
		txs_json_i64(j, "p99", d->p99);
		txs_json_i64(j, "p999", d->p999);
		txs_json_i64(j, "max", d->max);
		txs_json_dbl(j, "mean", d->mean);
	}
	txs_json_obj_close(j);
}

static void jnull(struct txs_json *j, const char *key)
{
	txs_json_key(j, key);
	fputs("null", j->f);
}

void txs_stamp_result_write(const struct txs_stamp_result *r, bool json, FILE *f)
{
	if (json) {
		struct txs_json j;
		txs_json_begin(&j, f);
		txs_json_str(&j, "type", "summary");
		txs_json_str(&j, "kind", "stamp");
		txs_json_str(&j, "reflector", r->stateful ? "stateful" : "stateless");
		txs_json_str(&j, "split", !r->stateful		 ? "none"
					  : r->split_inconsistent ? "inconsistent"
					  : r->split_exact	 ? "exact"
								 : "tail-unknown");
		txs_json_u64(&j, "sent", r->sent);
		txs_json_u64(&j, "reflected", r->reflected);
		txs_json_u64(&j, "received", r->received);
		txs_json_u64(&j, "lost", r->lost);
		if (r->stateful && !r->split_inconsistent) {
			txs_json_u64(&j, "lost_forward", r->lost_forward);
			txs_json_u64(&j, "lost_backward", r->lost_backward);
		} else {
			jnull(&j, "lost_forward");
			jnull(&j, "lost_backward");
		}
		txs_json_obj_open(&j, "duplicates");
		txs_json_u64(&j, "forward", r->dup_forward);
		txs_json_u64(&j, "backward", r->dup_backward);
		txs_json_obj_close(&j);
		txs_json_obj_open(&j, "reordered");
		txs_json_u64(&j, "forward", r->reorder_forward);
		txs_json_u64(&j, "backward", r->reorder_backward);
		txs_json_obj_close(&j);
		txs_json_obj_open(&j, "outages");
		txs_json_obj_open(&j, "forward");
		txs_json_u64(&j, "count", r->outages_forward);
		txs_json_u64(&j, "longest", r->longest_forward);
		txs_json_u64(&j, "longest_ns", r->longest_forward_ns);
		txs_json_obj_close(&j);
		txs_json_obj_open(&j, "backward");
		txs_json_u64(&j, "count", r->outages_backward);
		txs_json_u64(&j, "longest", r->longest_backward);
		txs_json_u64(&j, "longest_ns", r->longest_backward_ns);
		txs_json_obj_close(&j);
		txs_json_obj_close(&j);
		jdist(&j, "rtt_ns", &r->rtt);
		jdist(&j, "forward_ns", &r->fwd);
		jdist(&j, "backward_ns", &r->bwd);
		jdist(&j, "forward_corrected_ns", &r->fwd_corr);
		jdist(&j, "backward_corrected_ns", &r->bwd_corr);
		txs_json_obj_open(&j, "clock");
		txs_json_bool(&j, "valid", r->clock_valid);
		txs_json_i64(&j, "offset_ns", r->clock_offset_ns);
		txs_json_i64(&j, "error_ns", r->clock_error_ns);
		txs_json_u64(&j, "rtt_ns", r->clock_rtt_ns);
		txs_json_obj_close(&j);
		if (r->cos_dscp >= 0) {
			txs_json_obj_open(&j, "cos");
			txs_json_i64(&j, "dscp", r->cos_dscp);
			txs_json_i64(&j, "ecn", r->cos_ecn);
			txs_json_obj_close(&j);
		}
		txs_json_u64(&j, "foreign", r->foreign);
		txs_json_u64(&j, "bad_time", r->bad_time);
		txs_json_u64(&j, "head_retries", r->head_retries);
		txs_json_u64(&j, "tail_probes", r->tail_probes);
		txs_json_u64(&j, "local_drops", r->local_drops);
		txs_json_dbl(&j, "seconds", r->secs);
		txs_json_end(&j);
		return;
	}
	fprintf(f, "stamp: %llu sent, %llu received, %llu lost", (unsigned long long)r->sent,
		(unsigned long long)r->received, (unsigned long long)r->lost);
	if (r->stateful && r->split_inconsistent)
		fprintf(f, " (the reflector numbered more packets than were sent: no split per direction)");
	else if (r->stateful)
		fprintf(f, " (%llu forward, %llu backward%s)", (unsigned long long)r->lost_forward,
			(unsigned long long)r->lost_backward, r->split_exact ? "" : "; the last reply never came: split not exact");
	else
		fprintf(f, " (stateless reflector: no split per direction)");
	fprintf(f, "\n");
	if (r->rtt.count)
		fprintf(f, "rtt: min %.1f p50 %.1f p90 %.1f p99 %.1f max %.1f us (%llu samples)\n", r->rtt.min / 1e3,
			r->rtt.p50 / 1e3, r->rtt.p90 / 1e3, r->rtt.p99 / 1e3, r->rtt.max / 1e3,
			(unsigned long long)r->rtt.count);
	if (r->clock_valid)
		fprintf(f,
			"one-way (corrected by the reflector clock's offset %+.1f us +- %.1f us): forward p50 %.1f us, "
			"backward p50 %.1f us\n",
			(double)r->clock_offset_ns / 1e3, (double)r->clock_error_ns / 1e3, r->fwd_corr.p50 / 1e3,
			r->bwd_corr.p50 / 1e3);
	fprintf(f, "duplicates %llu/%llu, reordered %llu/%llu (forward/backward)\n", (unsigned long long)r->dup_forward,
		(unsigned long long)r->dup_backward, (unsigned long long)r->reorder_forward,
		(unsigned long long)r->reorder_backward);
	/* what the JSON has besides: the split's standing, the probes around the run, the CoS echo */
	fprintf(f, "split %s; first probe retried %llu time%s, %llu tail probe%s, %llu refused by our device, "
		"%llu foreign replies",
		!r->stateful ? "none (stateless reflector)" : r->split_inconsistent ? "none (inconsistent)"
		: r->split_exact ? "exact" : "not exact", (unsigned long long)r->head_retries,
		r->head_retries == 1 ? "" : "s", (unsigned long long)r->tail_probes, r->tail_probes == 1 ? "" : "s",
		(unsigned long long)r->local_drops, (unsigned long long)r->foreign);
	if (r->cos_dscp >= 0)
		fprintf(f, "; CoS echoed: DSCP %d ECN %d", (int)r->cos_dscp, (int)r->cos_ecn);
	fprintf(f, "\n");
	fflush(f);
}
