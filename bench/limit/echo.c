/* SPDX-License-Identifier: MIT */
/* Limit reference of `txscale stamp reflect` (bench/stamp): the least a UDP
 * reflector can do. One socket (the reflector's 8 MiB receive buffer), recvmmsg() of up to 32 datagrams, each sent
 * back as it came to where it came from with one sendmmsg(); no ancillary
 * data, no parsing, no stamps. Counts what it sent back.
 *   txs_limit_echo BIND PORT SECONDS [cmsg]
 * With "cmsg" it asks the kernel for what a STAMP reflector must read of
 * each datagram (SO_TIMESTAMPNS, IP_RECVTTL, IP_RECVTOS) and takes it in
 * ancillary data, unread: that much of the gap is the protocol's, not the
 * reflector's own work. Prints {"reflected":N,"seconds":S} at the end. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>
#include "limit.h"

#define BATCH 32

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: txs_limit_echo BIND PORT SECONDS\n");
		return 2;
	}
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	double secs = atof(argv[3]);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
	/* the receive buffer txscale's reflector has (SO_RCVBUFFORCE where allowed) */
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (fd < 0 || inet_pton(AF_INET, argv[1], &b.sin_addr) != 1 || bind(fd, (struct sockaddr *)&b, sizeof(b))) {
		perror("txs_limit_echo: socket");
		return 1;
	}
	bool cm = argc > 4 && !strcmp(argv[4], "cmsg");
	if (cm) {
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
	}
	static uint8_t buf[BATCH][2048], ctl[BATCH][256];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	struct mmsghdr m[BATCH];
	uint64_t reflected = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double t0 = limit_now(), t = t0;
	fprintf(stderr, "txs_limit_echo: listening\n");
	while (t - t0 < secs) {
		for (int i = 0; i < BATCH; i++) {
			iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
			m[i].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
							.msg_iov = &iov[i], .msg_iovlen = 1,
							.msg_control = cm ? ctl[i] : NULL, .msg_controllen = cm ? sizeof(ctl[i]) : 0 };
		}
		int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n > 0) {
			for (int i = 0; i < n; i++) {
				iov[i].iov_len = m[i].msg_len;
				m[i].msg_hdr.msg_control = NULL; /* nothing to send with the reply */
				m[i].msg_hdr.msg_controllen = 0;
			}
			int done = 0;
			while (done < n) {
				int s = sendmmsg(fd, m + done, (unsigned)(n - done), 0);
				if (s > 0)
					done += s;
				else if (errno != EINTR)
					done++;
			}
			reflected += (uint64_t)n;
		} else {
			poll(&pfd, 1, 100);
		}
		t = limit_now();
	}
	printf("{\"reflected\":%llu,\"seconds\":%.3f}\n", (unsigned long long)reflected, t - t0);
	return 0;
}
