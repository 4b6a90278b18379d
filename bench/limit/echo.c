/* SPDX-License-Identifier: MIT */
/* Limit reference of `txscale stamp reflect` (bench/stamp): the least a UDP
 * reflector can do. One socket, recvmmsg() of up to 32 datagrams, each sent
 * back as it came to where it came from with one sendmmsg(); no ancillary
 * data, no parsing, no stamps. Counts what it sent back.
 *   txs_limit_echo BIND PORT SECONDS
 * Prints {"reflected":N,"seconds":S} at the end. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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
	int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 4 << 20;
	if (fd < 0 || inet_pton(AF_INET, argv[1], &b.sin_addr) != 1 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)) || bind(fd, (struct sockaddr *)&b, sizeof(b))) {
		perror("txs_limit_echo: socket");
		return 1;
	}
	static uint8_t buf[BATCH][2048];
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
							.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int n = recvmmsg(fd, m, BATCH, MSG_DONTWAIT, NULL);
		if (n > 0) {
			for (int i = 0; i < n; i++)
				iov[i].iov_len = m[i].msg_len;
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
