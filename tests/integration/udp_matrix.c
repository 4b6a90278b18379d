/* SPDX-License-Identifier: MIT */
/* Integration helper for the sendmsg permutation matrix (tests/unit/udp_matrix.h):
 *
 *   txs_udp_matrix pcap FILE                   write every valid case's frames to a pcap file
 *   txs_udp_matrix inject IFNAME SRCMAC DSTMAC send them through AF_PACKET on IFNAME
 *   txs_udp_matrix recv SECONDS READYFILE      receive them on kernel UDP sockets and
 *                                              compare with what each case intended
 *   txs_udp_matrix count                       print frames and datagrams of the matrix
 *
 * Addresses are the netns-lab link 0 (198.18.0.1 -> .2, 2001:2::1 -> ::2),
 * destination port 5300. The receiver checks, per datagram in order: payload
 * bytes and length, source address and port, TOS / traffic class
 * (IP_RECVTOS / IPV6_RECVTCLASS) and TTL / hop limit (IP_RECVTTL /
 * IPV6_RECVHOPLIMIT). Every loop is bounded: frames by the matrix, time by
 * SECONDS. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include "udp_matrix.h"

struct sink {
	pcap_dumper_t *pd;
	int fd;
	int ifindex;
	uint64_t frames, bytes, send_err;
};

static void sink_frame(void *arg, const uint8_t *f, uint32_t len)
{
	struct sink *s = arg;
	s->frames++;
	s->bytes += len;
	if (s->pd) {
		struct pcap_pkthdr h = { .caplen = len, .len = len };
		h.ts.tv_sec = (time_t)(s->frames / 1000000);
		h.ts.tv_usec = (suseconds_t)(s->frames % 1000000);
		pcap_dump((u_char *)s->pd, &h, f);
	}
	if (s->fd >= 0) {
		struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_ifindex = s->ifindex, .sll_halen = 6 };
		memcpy(ll.sll_addr, f, 6);
		/* the veth peer's backlog can be briefly full: retry, bounded */
		for (int t = 0; t < 200; t++) {
			if (sendto(s->fd, f, len, 0, (struct sockaddr *)&ll, sizeof(ll)) == (ssize_t)len)
				return;
			if (errno != ENOBUFS && errno != EAGAIN)
				break;
			usleep(1000);
		}
		s->send_err++;
	}
}

/* Run every case; valid ones produce frames into the sink. Returns the number
 * of setup failures or cases that did not behave as expected. */
static int run_matrix(const struct mx_env *e, struct sink *s, unsigned *dgrams, unsigned *nocsum, bool pace)
{
	struct mx_dev dev;
	if (mx_dev_init(&dev, sink_frame, s) < 0)
		return 1;
	uint8_t *p = malloc(TXS_UDP6_MAX_PAYLOAD);
	if (!p)
		return 1;
	int bad = 0;
	*dgrams = *nocsum = 0;
	for (unsigned i = 0; i < MX_CASES; i++) {
		struct mx_case c;
		mx_case_get(i, &c);
		mx_payload(&c, p);
		unsigned at;
		int xe = mx_expect_err(&c, &at);
		struct mx_result r;
		uint64_t before = s->frames;
		mx_run(&c, e, &dev, p, NULL, NULL, &r);
		if (r.open_err || r.err != xe || (!xe && s->frames - before != mx_expect_frames(&c))) {
			fprintf(stderr, "case %u: setup %d, error %d (expected %d), frames %llu\n", i, r.open_err, r.err,
				xe, (unsigned long long)(s->frames - before));
			bad++;
		}
		if (!xe) {
			uint32_t o[128], l[128];
			unsigned nd = mx_expect_dgrams(&c, o, l, 128);
			*dgrams += nd;
			*nocsum += c.opt == MX_NOCSUM ? nd : 0;
		}
		if (pace && s->frames - before > 8) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	free(p);
	mx_dev_fini(&dev);
	return bad;
}

static int mac_arg(uint8_t m[6], const char *s)
{
	if (txs_mac_parse(m, s) < 0) {
		fprintf(stderr, "txs_udp_matrix: bad MAC '%s'\n", s);
		return -1;
	}
	return 0;
}

/* ---- receiver ---------------------------------------------------------------- */

struct want {
	unsigned cas;
	uint32_t off, len;
	uint8_t tos, ttl;
};

struct queue {
	struct want *w;
	unsigned n, next, bad;
};

static void expect_all(struct queue *q4, struct queue *q6)
{
	q4->w = calloc(MX_CASES * 64, sizeof(struct want));
	q6->w = calloc(MX_CASES * 64, sizeof(struct want));
	for (unsigned i = 0; i < MX_CASES; i++) {
		struct mx_case c;
		mx_case_get(i, &c);
		unsigned at;
		if (mx_expect_err(&c, &at))
			continue;
		uint32_t o[128], l[128];
		unsigned n = mx_expect_dgrams(&c, o, l, 128);
		struct queue *q = c.v4frames ? q4 : q6;
		for (unsigned k = 0; k < n; k++)
			q->w[q->n++] = (struct want){ i, o[k], l[k], mx_expect_tos(&c), mx_expect_ttl(&c) };
	}
}

static int bind_sock(int family, const struct txs_addr *a)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int one = 1, big = 64 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	struct sockaddr_storage ss;
	socklen_t sl = txs_udp_sockaddr(&ss, a, MX_DPORT);
	if (family == AF_INET) {
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
	} else {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		perror("txs_udp_matrix recv: bind");
		close(fd);
		return -1;
	}
	return fd;
}

/* Read everything queued on fd and check it against q. */
static void drain(int fd, int family, struct queue *q, const struct mx_env *e, uint8_t *buf, uint8_t *pay)
{
	for (;;) {
		struct sockaddr_storage from;
		struct iovec v = { buf, 70000 };
		char ctl[256];
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &v, .msg_iovlen = 1,
				     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(fd, &mh, 0);
		if (n < 0)
			return;
		int tos = -1, ttl = -1;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			int v32 = 0;
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
				tos = *(uint8_t *)CMSG_DATA(c);
			else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
				memcpy(&v32, CMSG_DATA(c), 4), ttl = v32;
			else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)
				memcpy(&v32, CMSG_DATA(c), 4), tos = v32;
			else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)
				memcpy(&v32, CMSG_DATA(c), 4), ttl = v32;
		}
		if (q->next >= q->n) {
			if (q->bad++ < 10)
				fprintf(stderr, "IPv%d: an unexpected extra datagram of %zd bytes\n", family == AF_INET ? 4 : 6,
					n);
			continue;
		}
		const struct want *w = &q->w[q->next++];
		struct mx_case c;
		mx_case_get(w->cas, &c);
		mx_payload(&c, pay);
		const char *why = NULL;
		bool src_ok;
		if (family == AF_INET) {
			const struct sockaddr_in *s = (const struct sockaddr_in *)&from;
			src_ok = s->sin_addr.s_addr == e->src4.v4.s_addr && ntohs(s->sin_port) == MX_SPORT;
		} else {
			const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)&from;
			src_ok = !memcmp(&s->sin6_addr, &e->src6.v6, 16) && ntohs(s->sin6_port) == MX_SPORT;
		}
		if ((uint32_t)n != w->len)
			why = "length";
		else if (memcmp(buf, pay + w->off, w->len))
			why = "payload bytes";
		else if (!src_ok)
			why = "source address/port";
		else if (tos != w->tos)
			why = "TOS / traffic class";
		else if (ttl != w->ttl)
			why = "TTL / hop limit";
		if (why && q->bad++ < 10)
			fprintf(stderr, "case %u (%s %s %s len %u opt %s) datagram at +%u: %s differs (got %zd bytes, tos %d, ttl %d)\n",
				w->cas, mx_fam_name[c.fam], c.connected ? "conn" : "unconn", mx_mode_name[c.mode], c.len,
				mx_opt_name[c.opt], w->off, why, n, tos, ttl);
	}
}

static int do_recv(double secs, const char *ready)
{
	struct mx_env e;
	mx_env_default(&e);
	struct queue q4 = { 0 }, q6 = { 0 };
	expect_all(&q4, &q6);
	int f4 = bind_sock(AF_INET, &e.dst4), f6 = bind_sock(AF_INET6, &e.dst6);
	if (f4 < 0 || f6 < 0)
		return 2;
	FILE *rf = fopen(ready, "w");
	if (!rf)
		return 2;
	fclose(rf);
	uint8_t *buf = malloc(70000), *pay = malloc(TXS_UDP6_MAX_PAYLOAD);
	uint64_t end = txs_now_mono_ns() + (uint64_t)(secs * 1e9);
	while ((q4.next < q4.n || q6.next < q6.n) && txs_now_mono_ns() < end) {
		struct pollfd pf[2] = { { f4, POLLIN, 0 }, { f6, POLLIN, 0 } };
		poll(pf, 2, 100);
		drain(f4, AF_INET, &q4, &e, buf, pay);
		drain(f6, AF_INET6, &q6, &e, buf, pay);
	}
	/* a short grace period for extras */
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	drain(f4, AF_INET, &q4, &e, buf, pay);
	drain(f6, AF_INET6, &q6, &e, buf, pay);
	printf("kernel received: IPv4 %u/%u datagrams, IPv6 %u/%u datagrams, %u mismatches\n", q4.next, q4.n, q6.next,
	       q6.n, q4.bad + q6.bad);
	int ok = q4.next == q4.n && q6.next == q6.n && !q4.bad && !q6.bad;
	free(buf);
	free(pay);
	free(q4.w);
	free(q6.w);
	close(f4);
	close(f6);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct mx_env e;
	mx_env_default(&e);
	struct sink s = { .fd = -1 };
	unsigned dgrams, nocsum;
	if (argc == 2 && !strcmp(argv[1], "count")) {
		int bad = run_matrix(&e, &s, &dgrams, &nocsum, false);
		printf("frames %llu datagrams %u nocsum %u\n", (unsigned long long)s.frames, dgrams, nocsum);
		return bad ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "pcap")) {
		pcap_t *pc = pcap_open_dead(DLT_EN10MB, 65535);
		s.pd = pc ? pcap_dump_open(pc, argv[2]) : NULL;
		if (!s.pd) {
			fprintf(stderr, "txs_udp_matrix: cannot write '%s'\n", argv[2]);
			return 2;
		}
		int bad = run_matrix(&e, &s, &dgrams, &nocsum, false);
		pcap_dump_close(s.pd);
		pcap_close(pc);
		printf("frames %llu datagrams %u nocsum %u\n", (unsigned long long)s.frames, dgrams, nocsum);
		return bad ? 1 : 0;
	}
	if (argc == 5 && !strcmp(argv[1], "inject")) {
		if (mac_arg(e.src_mac, argv[3]) < 0 || mac_arg(e.dst_mac, argv[4]) < 0)
			return 2;
		s.ifindex = (int)if_nametoindex(argv[2]);
		s.fd = socket(AF_PACKET, SOCK_RAW, 0);
		if (!s.ifindex || s.fd < 0) {
			fprintf(stderr, "txs_udp_matrix: interface '%s': %s\n", argv[2], strerror(errno));
			return 2;
		}
		int bad = run_matrix(&e, &s, &dgrams, &nocsum, true);
		close(s.fd);
		printf("injected frames %llu (%llu failed) datagrams %u\n", (unsigned long long)s.frames,
		       (unsigned long long)s.send_err, dgrams);
		return bad || s.send_err ? 1 : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "recv"))
		return do_recv(atof(argv[2]), argv[3]);
	fprintf(stderr, "usage: txs_udp_matrix count | pcap FILE | inject IFNAME SRCMAC DSTMAC | recv SECONDS READYFILE\n");
	return 2;
}
