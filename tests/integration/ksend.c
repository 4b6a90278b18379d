/* SPDX-License-Identifier: MIT */
/* Kernel reference for tests/integration/udp_diff.sh: the sends of a
 * `txscale send` case made through a kernel UDP socket, and a sink that
 * counts what the kernel delivers.
 *
 *   txs_ksend send SRC DST PORT SPORT LEN N [tos=T] [ttl=T] [df|nodf] [gso=G] [pps=R] [unconnected]
 *     N datagrams as txscale counts them (-n): LEN-byte sends; with gso=G
 *     each send makes ceil(LEN/G) datagrams and the last send carries only
 *     the G-byte segments still due. IPv4: the kernel socket's default
 *     (IP_PMTUDISC_WANT: DF where the datagram fits the path MTU, as
 *     txscale's udp device by default); df: IP_PMTUDISC_DO (IPv6:
 *     IPV6_DONTFRAG); nodf: IP_PMTUDISC_DONT (txscale's frame devices'
 *     default: DF clear). pps=R paces sends
 *     of one datagram at R per second (R datagrams/s with GSO).
 *   txs_ksend sink ADDR PORT SECONDS [N]
 *     prints "datagrams N" and "sizes L1 L2 ..." (sorted, run-length "LxK")
 *     after SECONDS without a datagram; given the N the sender sends, at
 *     most 0.1 s after the Nth (the caller waits for the sink once the
 *     sender has ended: a datagram past N would come within that time)
 * Exit 0, or 1 with one line on stderr. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static int addr(const char *s, uint16_t port, struct sockaddr_storage *ss, socklen_t *l)
{
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *a = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *b = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, s, &a->sin_addr) == 1) {
		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		*l = sizeof(*a);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &b->sin6_addr) == 1) {
		b->sin6_family = AF_INET6;
		b->sin6_port = htons(port);
		*l = sizeof(*b);
		return AF_INET6;
	}
	fprintf(stderr, "txs_ksend: bad address '%s'\n", s);
	exit(1);
}

static void die(const char *what)
{
	fprintf(stderr, "txs_ksend: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmd_send(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr, "usage: txs_ksend send SRC DST PORT SPORT LEN N [tos=T] [ttl=T] [df|nodf] [gso=G] [pps=R] [unconnected]\n");
		return 1;
	}
	struct sockaddr_storage src, dst;
	socklen_t sl, dl;
	int fam = addr(argv[2], (uint16_t)atoi(argv[5]), &src, &sl);
	addr(argv[3], (uint16_t)atoi(argv[4]), &dst, &dl);
	size_t len = strtoul(argv[6], NULL, 10);
	uint64_t n = strtoull(argv[7], NULL, 10);
	int tos = 0, ttl = 64, df = 0, nodf = 0, gso = 0, unconnected = 0;
	double pps = 0;
	for (int i = 8; i < argc; i++) {
		if (!strncmp(argv[i], "tos=", 4))
			tos = (int)strtol(argv[i] + 4, NULL, 0);
		else if (!strncmp(argv[i], "ttl=", 4))
			ttl = atoi(argv[i] + 4);
		else if (!strcmp(argv[i], "df"))
			df = 1;
		else if (!strcmp(argv[i], "nodf"))
			nodf = 1;
		else if (!strncmp(argv[i], "gso=", 4))
			gso = atoi(argv[i] + 4);
		else if (!strncmp(argv[i], "pps=", 4))
			pps = atof(argv[i] + 4);
		else if (!strcmp(argv[i], "unconnected"))
			unconnected = 1;
		else {
			fprintf(stderr, "txs_ksend: unknown option '%s'\n", argv[i]);
			return 1;
		}
	}
	int fd = socket(fam, SOCK_DGRAM, IPPROTO_UDP);
	if (fd < 0)
		die("socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fam == AF_INET) {
		int pmtu = df ? IP_PMTUDISC_DO : nodf ? IP_PMTUDISC_DONT : IP_PMTUDISC_WANT;
		if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) < 0)
			die("IPv4 options");
	} else {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos)) < 0 ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, sizeof(ttl)) < 0 ||
		    (df && setsockopt(fd, IPPROTO_IPV6, IPV6_DONTFRAG, &one, sizeof(one)) < 0))
			die("IPv6 options");
	}
	if (gso && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &gso, sizeof(gso)) < 0)
		die("UDP_SEGMENT");
	if (bind(fd, (struct sockaddr *)&src, sl) < 0)
		die("bind");
	if (!unconnected && connect(fd, (struct sockaddr *)&dst, dl) < 0)
		die("connect");
	char *buf = calloc(1, len ? len : 1);
	if (!buf)
		die("calloc");
	uint64_t per = gso && len > (size_t)gso ? (len + (size_t)gso - 1) / (size_t)gso : 1, done = 0;
	uint64_t t0 = now_ns();
	while (done < n) {
		size_t l = len;
		uint64_t d = per;
		if (per > 1 && n - done < per) {
			d = n - done;
			l = (size_t)d * (size_t)gso;
		}
		if (pps > 0) {
			uint64_t due = t0 + (uint64_t)((double)done * 1e9 / pps);
			for (uint64_t t; (t = now_ns()) < due;) {
				struct timespec ts = { 0, (long)(due - t) };
				nanosleep(&ts, NULL);
			}
		}
		ssize_t r = unconnected ? sendto(fd, buf, l, 0, (struct sockaddr *)&dst, dl) : send(fd, buf, l, 0);
		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN)
				continue;
			fprintf(stderr, "txs_ksend: send of %zu bytes: %s\n", l, strerror(errno));
			return errno == EMSGSIZE ? 3 : 1;
		}
		done += d;
	}
	close(fd);
	free(buf);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int cmd_sink(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: txs_ksend sink ADDR PORT SECONDS [N]\n");
		return 1;
	}
	struct sockaddr_storage a;
	socklen_t al;
	int fam = addr(argv[2], (uint16_t)atoi(argv[3]), &a, &al);
	int ms = (int)(atof(argv[4]) * 1000);
	size_t want = argc > 5 ? (size_t)strtoull(argv[5], NULL, 10) : 0;
	int fd = socket(fam, SOCK_DGRAM, IPPROTO_UDP);
	int big = 32 << 20;
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&a, al) < 0)
		die("bind");
	printf("listening\n");
	fflush(stdout);
	size_t cap = 1024, n = 0;
	uint32_t *sizes = malloc(cap * sizeof(*sizes));
	static char buf[70000];
	int wait = 30000; /* the first datagram may take a while */
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, wait) <= 0)
			break;
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0)
			die("recv");
		if (n == cap)
			sizes = realloc(sizes, (cap *= 2) * sizeof(*sizes));
		sizes[n++] = (uint32_t)r;
		wait = want && n >= want && ms > 100 ? 100 : ms;
	}
	qsort(sizes, n, sizeof(*sizes), cmp_u32);
	printf("datagrams %zu\nsizes", n);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && sizes[j] == sizes[i])
			j++;
		printf(" %ux%zu", sizes[i], j - i);
		i = j;
	}
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "send"))
		return cmd_send(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "sink"))
		return cmd_sink(argc, argv);
	fprintf(stderr, "usage: txs_ksend send|sink ...\n");
	return 1;
}
