/* SPDX-License-Identifier: MIT */
/* lib/netdev udp: frames sent through the udp device over loopback arrive as
 * datagrams carrying exactly the frames' payloads, from the frames' source
 * port, with the frames' TOS/TTL; GSO coalescing keeps every segment; refused
 * frames are counted; bad options are refused at open. No root needed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "test_frame.h"
#include "test_sock.h"
#include "test_util.h"

struct rx {
	int fd;
	int family;
	uint16_t port;
};

static bool rx_open(struct rx *r, int family)
{
	r->family = family;
	r->fd = socket(family, SOCK_DGRAM, 0);
	if (r->fd < 0)
		return false;
	int one = 1;
	if (family == AF_INET) {
		setsockopt(r->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(r->fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	} else {
		setsockopt(r->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(r->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	}
	if (!t_lo_bind(r->fd, family, &r->port)) {
		close(r->fd);
		return false;
	}
	return true;
}

/* A free UDP port on loopback, for the frames' source port. */
static uint16_t free_port(int family)
{
	struct rx r;
	if (!rx_open(&r, family))
		return 0;
	close(r.fd);
	return r.port;
}

struct got {
	uint8_t data[2048];
	ssize_t len;
	uint16_t sport;
	int tos, ttl;
};

/* Receive one datagram (1 s timeout). */
static bool rx_one(struct rx *r, struct got *g)
{
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	if (poll(&p, 1, 1000) != 1)
		return false;
	struct sockaddr_storage from;
	char cbuf[256];
	struct iovec iov = { g->data, sizeof(g->data) };
	struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	g->len = recvmsg(r->fd, &mh, 0);
	if (g->len < 0)
		return false;
	g->sport = ntohs(from.ss_family == AF_INET ? ((struct sockaddr_in *)&from)->sin_port
						   : ((struct sockaddr_in6 *)&from)->sin6_port);
	g->tos = g->ttl = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			g->tos = *(uint8_t *)CMSG_DATA(c);
		else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
			g->ttl = *(int *)CMSG_DATA(c);
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)
			g->tos = *(int *)CMSG_DATA(c);
		else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)
			g->ttl = *(int *)CMSG_DATA(c);
	}
	return true;
}

struct lo_case {
	int family;
	const char *spec;
	uint32_t payload;
	unsigned n, burst;
};

/* Frame b from template t with sequence seq. */
static void put(struct txs_pktbuf *b, const struct txs_tmpl *t, uint64_t seq)
{
	b->len = txs_tmpl_patch(t, b->data, 0, seq, 0);
	b->l4_off = t->l4_off;
}

/* Frames b[0..n) from t, sequences first, first + 1, ... */
static void put_n(struct txs_pktbuf *b, unsigned n, const struct txs_tmpl *t, uint64_t first)
{
	for (unsigned i = 0; i < n; i++)
		put(&b[i], t, first + i);
}

/* Open the device spec with dc and its queue 0; both must succeed. */
static struct txs_txq *open_q(struct txs_netdev **dev, const char *spec, const struct txs_netdev_conf *dc)
{
	char err[200] = "";
	int rc = txs_netdev_open(dev, spec, dc, err, sizeof(err));
	if (rc)
		fail_msg("%s: %d (%s)", spec, rc, err);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(*dev, 0, &q), 0);
	return q;
}

/* An IPv4 loopback receiver and a device spec sending to it frames of plen
 * payload bytes from a free source port (df: with DF), frame_size theirs,
 * the rest of the device's conf from base. */
struct lo_fix {
	struct rx r;
	struct txs_tmpl t;
	struct txs_netdev *dev;
	struct txs_txq *q;
};

static void fix_open(struct lo_fix *f, const char *spec, uint32_t plen, bool df, const struct txs_netdev_conf *base)
{
	assert_true(rx_open(&f->r, AF_INET));
	struct txs_flow_spec sp = t_lo_spec(AF_INET, free_port(AF_INET), f->r.port, plen);
	sp.df = df;
	assert_int_equal(txs_tmpl_build(&f->t, &sp), 0);
	struct txs_netdev_conf dc = *base;
	dc.max_queues = 1;
	dc.frame_size = f->t.wire_len;
	f->q = open_q(&f->dev, spec, &dc);
}

static void fix_close(struct lo_fix *f)
{
	txs_netdev_close(f->dev);
	txs_tmpl_free(&f->t);
	close(f->r.fd);
}

/* Send n frames in bursts through the device and check each datagram. */
static void run_loopback(const struct lo_case *c)
{
	struct rx r;
	if (!rx_open(&r, c->family)) {
		if (c->family == AF_INET6)
			return; /* no IPv6 loopback here: nothing to check */
		fail_msg("cannot open a loopback receiver");
	}
	struct txs_flow_spec sp = t_lo_spec(c->family, free_port(c->family), r.port, c->payload);
	sp.tos = 0x28;
	sp.ttl = 33;
	sp.flow_id = 7;
	struct txs_tmpl t;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);

	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = t.wire_len, .dst = sp.dst, .dport = sp.dport };
	struct txs_netdev *dev;
	struct txs_txq *q = open_q(&dev, c->spec, &dc);
	assert_int_equal(dev->src_addr.family, c->family);
	assert_memory_equal(dev->src_addr.bytes, sp.src.bytes, c->family == AF_INET ? 4 : 16);

	uint8_t *sent = malloc((size_t)c->n * c->payload + 1);
	struct txs_pktbuf b[256];
	unsigned done = 0;
	uint64_t seq = 0;
	while (done < c->n) {
		unsigned want = c->n - done < c->burst ? c->n - done : c->burst;
		unsigned got = txs_txq_alloc(q, b, want);
		assert_true(got > 0);
		for (unsigned i = 0; i < got; i++) {
			assert_true(b[i].cap >= t.wire_len);
			b[i].len = txs_tmpl_patch(&t, b[i].data, (uint16_t)seq, seq, 1000 + seq);
			b[i].l4_off = t.l4_off;
			memcpy(sent + (size_t)(done + i) * c->payload, b[i].data + t.pay_off, c->payload);
			seq++;
		}
		assert_int_equal(txs_txq_send(q, b, got), got);
		txs_txq_flush(q);
		/* drain what arrived so far: the receive buffer stays small */
		for (unsigned i = 0; i < got; i++) {
			struct got g;
			assert_true(rx_one(&r, &g));
			assert_int_equal(g.len, c->payload);
			assert_memory_equal(g.data, sent + (size_t)(done + i) * c->payload, c->payload);
			assert_int_equal(g.sport, sp.sport);
			assert_int_equal(g.tos, 0x28);
			assert_int_equal(g.ttl, 33);
		}
		done += got;
	}
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, c->n);
	assert_int_equal(lc.bytes, (uint64_t)c->n * t.wire_len);
	assert_int_equal(lc.drop_full + lc.drop_err, 0);
	struct pollfd p = { .fd = r.fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 50), 0); /* nothing more arrived */
	txs_netdev_close(dev);
	txs_tmpl_free(&t);
	free(sent);
	close(r.fd);
}

/* The loopback cases, by test. LO_GSO: GSO coalesces same-size payloads of
 * a burst; every segment arrives, in order, counted once. Odd burst sizes
 * and gso=N limits included. */
enum lo_group { LO_V4, LO_V6, LO_GSO };
static const struct {
	enum lo_group group;
	struct lo_case c;
} lo_cases[] = {
	{ LO_V4, { AF_INET, "udp", 16, 200, 32 } },	    { LO_V4, { AF_INET, "udp", 1400, 50, 7 } },
	{ LO_V4, { AF_INET, "udp", 0, 10, 3 } },	    { LO_V6, { AF_INET6, "udp", 16, 200, 32 } },
	{ LO_V6, { AF_INET6, "udp:gso", 100, 256, 64 } },   { LO_GSO, { AF_INET, "udp:gso", 16, 256, 256 } },
	{ LO_GSO, { AF_INET, "udp:gso=3", 100, 100, 31 } }, { LO_GSO, { AF_INET, "udp:gso=on", 1000, 64, 64 } },
};

static void run_group(enum lo_group g)
{
	for (size_t i = 0; i < TXS_ARRAY_SIZE(lo_cases); i++)
		if (lo_cases[i].group == g)
			run_loopback(&lo_cases[i].c);
}

static void loopback_v4(void **st)
{
	(void)st;
	run_group(LO_V4);
}

static void loopback_v6(void **st)
{
	(void)st;
	run_group(LO_V6);
}

static void loopback_gso(void **st)
{
	(void)st;
	run_group(LO_GSO);
}

/* A frame whose UDP header is out of bounds is refused with everything after
 * it; released, the refused frames count as drop_err. */
static void refusals_counted(void **st)
{
	(void)st;
	struct lo_fix f;
	fix_open(&f, "udp", 32, false, &(struct txs_netdev_conf){ 0 });
	struct txs_txq *q = f.q;
	assert_int_equal(f.dev->src_addr.family, 0); /* no destination given */
	struct txs_pktbuf b[8];
	assert_int_equal(txs_txq_alloc(q, b, 8), 8);
	put_n(b, 8, &f.t, 0);
	b[5].l4_off = (uint16_t)(b[5].len - 4); /* header out of bounds */
	assert_int_equal(txs_txq_send(q, b, 8), 5);
	txs_txq_release(q, b + 5, 3);
	struct txs_link_counters lc;
	txs_netdev_link_stats(f.dev, 0, &lc);
	assert_int_equal(lc.packets, 5);
	assert_int_equal(lc.drop_err, 3);
	assert_int_equal(lc.drop_full, 0);
	/* a released frame never offered to the kernel is not a drop */
	assert_int_equal(txs_txq_alloc(q, b, 2), 2);
	txs_txq_release(q, b, 2);
	txs_netdev_link_stats(f.dev, 0, &lc);
	assert_int_equal(lc.drop_err, 3);
	for (int i = 0; i < 5; i++) {
		struct got g;
		assert_true(rx_one(&f.r, &g));
		assert_int_equal(g.len, 32);
	}
	fix_close(&f);
}

/* Send b[0..n) where b[1] is refused: b[0] goes out, the other n - 1 are
 * released as refused; then link 0 counts packets, the n - 1 as drop_err,
 * and last_err. */
static void send_one_of(struct txs_netdev *dev, struct txs_txq *q, struct txs_pktbuf *b, unsigned n, uint64_t packets,
			int last_err)
{
	assert_int_equal(txs_txq_send(q, b, n), 1);
	txs_txq_release(q, b + 1, n - 1);
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, packets);
	assert_int_equal(lc.drop_err, n - 1);
	assert_int_equal(lc.last_err, last_err);
}

/* conf.flows > 1: frames of several tuples in one burst, interleaved (to 3
 * receivers from 2 source ports: 6 tuples), each datagram reaches its own
 * destination from its own source port, in order per tuple; two tuples
 * share a source port towards different destinations (SO_REUSEADDR). A 7th
 * tuple past conf.flows = 6 is refused with what follows it (drop_err,
 * E2BIG), and a non-local source address fails its tuple, not the others. */
static void several_tuples(void **st)
{
	(void)st;
	struct rx r[3];
	for (int k = 0; k < 3; k++)
		assert_true(rx_open(&r[k], AF_INET));
	uint16_t sp0 = free_port(AF_INET), sp1 = free_port(AF_INET);
	if (sp1 == sp0)
		sp1 = free_port(AF_INET);
	struct txs_tmpl t[6];
	for (int f = 0; f < 6; f++) {
		struct txs_flow_spec sp = t_lo_spec(AF_INET, f < 3 ? sp0 : sp1, r[f % 3].port, 40);
		sp.flow_id = (uint32_t)f;
		assert_int_equal(txs_tmpl_build(&t[f], &sp), 0);
	}
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = t[0].wire_len, .flows = 6 };
	struct txs_netdev *dev;
	struct txs_txq *q = open_q(&dev, "udp", &dc);
	/* 4 rounds of 30 frames: tuple i % 6, sequence i / 6 within the tuple */
	uint64_t seq[6] = { 0 };
	for (int round = 0; round < 4; round++) {
		struct txs_pktbuf b[30];
		assert_int_equal(txs_txq_alloc(q, b, 30), 30);
		for (unsigned i = 0; i < 30; i++) {
			unsigned f = i % 6;
			put(&b[i], &t[f], seq[f]++);
		}
		assert_int_equal(txs_txq_send(q, b, 30), 30);
	}
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, 120);
	assert_int_equal(lc.drop_err + lc.drop_full, 0);
	/* every receiver: 40 datagrams, 20 from each source port, in order */
	for (int k = 0; k < 3; k++) {
		uint64_t next[2] = { 0, 0 };
		for (int i = 0; i < 40; i++) {
			struct got g;
			assert_true(rx_one(&r[k], &g));
			assert_int_equal(g.len, 40);
			assert_true(g.sport == sp0 || g.sport == sp1);
			int which = g.sport == sp1;
			/* the payload header: flow id k (+3 from sp1) and its sequence */
			struct txs_ph ph;
			assert_int_equal(txs_ph_read(g.data, (size_t)g.len, &ph), TXS_PH_FULL);
			assert_int_equal(ph.flow, (uint32_t)(k + 3 * which));
			assert_int_equal(ph.seq, next[which]);
			next[which]++;
		}
		struct pollfd p = { .fd = r[k].fd, .events = POLLIN };
		assert_int_equal(poll(&p, 1, 20), 0);
	}
	/* a 7th tuple (another destination port): refused with the rest */
	struct txs_flow_spec sp = t_lo_spec(AF_INET, sp0, free_port(AF_INET), 40);
	struct txs_tmpl t7;
	assert_int_equal(txs_tmpl_build(&t7, &sp), 0);
	struct txs_pktbuf b[3];
	assert_int_equal(txs_txq_alloc(q, b, 3), 3);
	put(&b[0], &t[0], seq[0]++);
	put(&b[1], &t7, 0);
	put(&b[2], &t[1], seq[1]++);
	send_one_of(dev, q, b, 3, 121, E2BIG);
	txs_netdev_close(dev);
	txs_tmpl_free(&t7);

	/* a source address that is not local: that tuple fails, another works */
	dc.flows = 2;
	q = open_q(&dev, "udp", &dc);
	txs_addr_parse(&sp.src, "198.18.7.7");
	sp.dport = r[0].port;
	assert_int_equal(txs_tmpl_build(&t7, &sp), 0);
	assert_int_equal(txs_txq_alloc(q, b, 2), 2);
	put(&b[0], &t[1], seq[1]++);
	put(&b[1], &t7, 0);
	send_one_of(dev, q, b, 2, 1, EADDRNOTAVAIL);
	struct got g;
	assert_true(rx_one(&r[1], &g));
	assert_int_equal(g.sport, sp0);
	txs_netdev_close(dev);
	txs_tmpl_free(&t7);
	for (int f = 0; f < 6; f++)
		txs_tmpl_free(&t[f]);
	for (int k = 0; k < 3; k++)
		close(r[k].fd);
}

static void options_checked(void **st)
{
	(void)st;
	static const struct {
		const char *spec;
		int rc;
	} cases[] = {
		{ "udp", 0 },
		{ "udp:gso", 0 },
		{ "udp:gso=0", 0 },
		{ "udp:gso=64,sndbuf=65536,df", 0 },
		{ "udp:links=127.0.0.1+lo", 0 },
		{ "udp:gso=auto", 0 },
		{ "udp:gso=off", 0 },
		{ "udp:gso=129", -EINVAL }, /* over every kernel's UDP_MAX_SEGMENTS */
		{ "udp:gso=1x", -EINVAL },
		{ "udp:gso=x", -EINVAL },
		{ "udp:sndbuf=1", -EINVAL },
		{ "udp:bogus", -EINVAL },
		{ "udp:links=", -EINVAL },
		{ "udp:links=1.2.3.4@", -EINVAL },
		{ "udp:bind=no-such-if0", -ENODEV },
		{ "udp:links=127.0.0.1+127.0.0.1", -EINVAL }, /* one link given twice */
		{ "udp:links=lo+lo", -EINVAL },
		{ "udp:gso=2,gso=3", -EINVAL },                /* a key given twice */
	};
	for (size_t i = 0; i < TXS_ARRAY_SIZE(cases); i++) {
		struct txs_netdev *dev = NULL;
		char err[200] = "";
		struct txs_netdev_conf dc = { .max_queues = 1 };
		int rc = txs_netdev_open(&dev, cases[i].spec, &dc, err, sizeof(err));
		if (rc != cases[i].rc)
			fail_msg("%s: got %d (%s), want %d", cases[i].spec, rc, err, cases[i].rc);
		if (rc == 0) {
			assert_false(dev->l2_needed);
			if (strstr(cases[i].spec, "links="))
				assert_int_equal(dev->n_links, 2);
			txs_netdev_close(dev);
		} else {
			assert_true(strlen(err) > 0);
		}
	}
}

/* df is IPV6_DONTFRAG: towards an IPv4 destination it means nothing and is
 * refused at open; towards IPv6 it is taken. */
static void df_is_ipv6_only(void **st)
{
	(void)st;
	struct txs_netdev *dev = NULL;
	char err[200] = "";
	struct txs_netdev_conf dc = { .max_queues = 1, .dport = 9 };
	txs_addr_parse(&dc.dst, "127.0.0.1");
	assert_int_equal(txs_netdev_open(&dev, "udp:df", &dc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "IPv6 only"));
	struct rx r;
	if (!rx_open(&r, AF_INET6))
		return; /* no IPv6 loopback here */
	close(r.fd);
	txs_addr_parse(&dc.dst, "::1");
	assert_int_equal(txs_netdev_open(&dev, "udp:df", &dc, err, sizeof(err)), 0);
	txs_netdev_close(dev);
}

/* A closed port: the kernel answers each datagram with ICMP port
 * unreachable, which the connected socket queues (IP_RECVERR). The datagrams
 * were sent (packets), and the refusals are counted in icmp_err (at least
 * one, at most one per datagram), with ECONNREFUSED as last_err; per queue
 * the counts equal the link's. */
static void closed_port_counts_icmp(void **st)
{
	(void)st;
	/* to a port bound and closed: nothing listens there */
	struct txs_flow_spec sp = t_lo_spec(AF_INET, free_port(AF_INET), free_port(AF_INET), 32);
	struct txs_tmpl t;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = t.wire_len, .dst = sp.dst, .dport = sp.dport };
	struct txs_netdev *dev;
	struct txs_txq *q = open_q(&dev, "udp", &dc);
	const unsigned N = 200;
	uint64_t offered = 0;
	for (unsigned k = 0; k < N / 8; k++) {
		struct txs_pktbuf b[8];
		unsigned n = txs_txq_alloc(q, b, 8);
		assert_int_equal(n, 8);
		put_n(b, n, &t, k * 8);
		unsigned sent = txs_txq_send(q, b, n);
		txs_txq_release(q, b + sent, n - sent);
		offered += n;
		usleep(200); /* let the ICMP errors come back between bursts */
	}
	txs_txq_close(q); /* counts the errors that came after the last send */
	struct txs_link_counters lc, qc;
	txs_netdev_link_stats(dev, 0, &lc);
	txs_netdev_queue_stats(dev, 0, &qc);
	assert_int_equal(lc.packets + lc.drop_full + lc.drop_err, offered);
	assert_int_equal(lc.packets, N);
	assert_true(lc.icmp_err >= 1 && lc.icmp_err <= N);
	assert_int_equal(lc.last_err, ECONNREFUSED);
	assert_int_equal(qc.packets, lc.packets);
	assert_int_equal(qc.icmp_err, lc.icmp_err);
	txs_netdev_close(dev);
	txs_tmpl_free(&t);
}

/* on_socket: called once for the queue's socket, with the queue's id, on
 * its first frame; what comes back to the flow's address and port (a
 * reply) is read from that socket. */
struct sock_seen {
	unsigned calls, queue;
	int fd;
};

static void seen_socket(void *user, unsigned queue, int fd)
{
	struct sock_seen *ss = user;
	ss->calls++;
	ss->queue = queue;
	ss->fd = fd;
}

static void socket_handed_over(void **st)
{
	(void)st;
	struct lo_fix f;
	struct sock_seen seen = { .fd = -1 };
	struct txs_netdev_conf base = { .on_socket = seen_socket, .on_socket_user = &seen };
	fix_open(&f, "udp:gso=off", 32, false, &base);
	assert_int_equal(seen.calls, 0); /* not before the first frame */
	for (unsigned k = 0; k < 3; k++) {
		struct txs_pktbuf b[4];
		unsigned n = txs_txq_alloc(f.q, b, 4);
		assert_int_equal(n, 4);
		put_n(b, n, &f.t, k * 4);
		assert_int_equal(txs_txq_send(f.q, b, n), n);
		txs_txq_flush(f.q);
	}
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.queue, 0);
	assert_true(seen.fd >= 0);
	struct got g;
	assert_true(rx_one(&f.r, &g));
	/* the receiver answers to where the datagram came from: the socket handed over reads it */
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(g.sport), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(sendto(f.r.fd, "reply", 5, 0, (struct sockaddr *)&to, sizeof(to)), 5);
	struct pollfd p = { .fd = seen.fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 1000), 1);
	char buf[16];
	assert_int_equal(recv(seen.fd, buf, sizeof(buf), MSG_DONTWAIT), 5);
	assert_memory_equal(buf, "reply", 5);
	fix_close(&f);
}

/* Two links, one per source address: frames pick the socket by link. */
static void two_links(void **st)
{
	(void)st;
	struct lo_fix f;
	fix_open(&f, "udp:links=127.0.0.1+127.0.0.2", 20, false, &(struct txs_netdev_conf){ 0 });
	struct txs_txq *q = f.q;
	struct txs_pktbuf b[10];
	assert_int_equal(txs_txq_alloc(q, b, 10), 10);
	put_n(b, 10, &f.t, 0);
	for (unsigned i = 0; i < 10; i++)
		b[i].link = (uint16_t)(i % 3 == 0); /* 4 frames on link 1, 6 on link 0 */
	assert_int_equal(txs_txq_send(q, b, 10), 10);
	struct txs_link_counters l0, l1;
	txs_netdev_link_stats(f.dev, 0, &l0);
	txs_netdev_link_stats(f.dev, 1, &l1);
	assert_int_equal(l0.packets, 6);
	assert_int_equal(l1.packets, 4);
	unsigned from2 = 0;
	for (int i = 0; i < 10; i++) {
		struct got g;
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		struct pollfd p = { .fd = f.r.fd, .events = POLLIN };
		assert_int_equal(poll(&p, 1, 1000), 1);
		g.len = recvfrom(f.r.fd, g.data, sizeof(g.data), 0, (struct sockaddr *)&from, &fl);
		assert_int_equal(g.len, 20);
		from2 += from.sin_addr.s_addr == htonl(0x7f000002);
	}
	assert_int_equal(from2, 4);
	fix_close(&f);
}

/* The GSO path really coalesces: a receiver with UDP_GRO gets one read per
 * super-datagram, with the segment size in a UDP_GRO cmsg; without gso the
 * same burst arrives as single datagrams. */
static unsigned reads_for_burst_conf(const char *spec, unsigned n, int *seg_out, bool sizes_vary, bool df,
				     struct txs_link_counters *lc)
{
	struct lo_fix f;
	fix_open(&f, spec, 100, df, &(struct txs_netdev_conf){ .sizes_vary = sizes_vary, .ipv4_df = df });
	struct rx r = f.r;
	int one = 1;
	assert_int_equal(setsockopt(r.fd, SOL_UDP, UDP_GRO, &one, sizeof(one)), 0);
	struct txs_txq *q = f.q;
	struct txs_pktbuf b[128];
	assert_int_equal(txs_txq_alloc(q, b, n), n);
	put_n(b, n, &f.t, 0);
	assert_int_equal(txs_txq_send(q, b, n), n);
	unsigned reads = 0, bytes = 0;
	*seg_out = 0;
	while (bytes < n * 100u) {
		uint8_t buf[65536];
		char cbuf[64];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct pollfd p = { .fd = r.fd, .events = POLLIN };
		assert_int_equal(poll(&p, 1, 1000), 1);
		ssize_t len = recvmsg(r.fd, &mh, 0);
		assert_true(len > 0);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
				*seg_out = *(int *)CMSG_DATA(c);
		bytes += (unsigned)len;
		reads++;
	}
	assert_int_equal(bytes, n * 100u);
	txs_netdev_link_stats(f.dev, 0, lc);
	fix_close(&f);
	return reads;
}

static unsigned reads_for_burst(const char *spec, unsigned n, int *seg_out)
{
	struct txs_link_counters lc;
	unsigned reads = reads_for_burst_conf(spec, n, seg_out, false, false, &lc);
	assert_int_equal(lc.packets, n);
	assert_true(lc.gso_segs <= n && lc.gso_segs >= 2 * lc.gso_calls);
	assert_int_equal(lc.gso_fallback, 0);
	return reads;
}

static void gso_coalesces(void **st)
{
	(void)st;
	int seg;
	assert_int_equal(reads_for_burst("udp:gso=off", 10, &seg), 10);
	assert_int_equal(reads_for_burst("udp:gso", 10, &seg), 1);
	assert_int_equal(seg, 100);
	assert_int_equal(reads_for_burst("udp:gso=4", 10, &seg), 3); /* 4 + 4 + 2 */
	/* the default: GSO, at most the kernel's limit per message (IPv4: with DF) */
	struct txs_link_counters lc;
	assert_int_equal(reads_for_burst_conf("udp", 10, &seg, false, true, &lc), 1);
	assert_int_equal(lc.gso_calls, 1);
	assert_int_equal(lc.gso_segs, 10);
	unsigned k = txs_netdev_udp_max_segs();
	assert_true(k == 64 || k == 128);
	assert_int_equal(reads_for_burst_conf("udp", 128, &seg, false, true, &lc), 128 / k);
	assert_int_equal(lc.gso_calls, 128 / k);
	assert_int_equal(lc.gso_segs, 128);
	/* gso=auto stays off where sizes vary, and for IPv4 without DF (the
	 * kernel would repeat the IDs of one call in the next) */
	assert_int_equal(reads_for_burst_conf("udp", 10, &seg, true, true, &lc), 10);
	assert_int_equal(lc.gso_calls, 0);
	assert_int_equal(lc.packets, 10);
	assert_int_equal(reads_for_burst_conf("udp", 10, &seg, false, false, &lc), 10);
	assert_int_equal(lc.gso_calls, 0);
	/* explicit gso: the caller's choice, DF or not */
	assert_int_equal(reads_for_burst_conf("udp:gso", 10, &seg, false, false, &lc), 1);
	assert_int_equal(lc.gso_calls, 1);
}

T_MAIN(cmocka_unit_test(loopback_v4), cmocka_unit_test(socket_handed_over),
       cmocka_unit_test(loopback_v6),
       cmocka_unit_test(loopback_gso),
       cmocka_unit_test(refusals_counted),
       cmocka_unit_test(options_checked),
       cmocka_unit_test(df_is_ipv6_only),
       cmocka_unit_test(closed_port_counts_icmp),
       cmocka_unit_test(two_links),
       cmocka_unit_test(gso_coalesces),
       cmocka_unit_test(several_tuples))
