/* SPDX-License-Identifier: MIT */
/* Limit reference of --dev udp --gso off: one connected UDP socket,
 * sendmmsg() of 64 16-byte datagrams, again and again.
 *   txs_limit_sendmmsg DST PORT SECONDS [SPORT [LENGTH]]
 * LENGTH (default 16, at most 1472): the payload's bytes, all zero (bench/stamp
 * sends 44: an unauthenticated STAMP test packet, sequence 0, SSID 0). */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "limit.h"

#define BATCH 64

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: txs_limit_sendmmsg DST PORT SECONDS [SPORT [LENGTH]]\n");
		return 2;
	}
	struct sockaddr_in d = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(argc > 4 ? (uint16_t)atoi(argv[4]) : 0) };
	double secs = atof(argv[3]);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), pmtu = IP_PMTUDISC_DO;
	if (fd < 0 || inet_pton(AF_INET, argv[1], &d.sin_addr) != 1 || bind(fd, (struct sockaddr *)&s, sizeof(s)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    connect(fd, (struct sockaddr *)&d, sizeof(d))) {
		perror("txs_limit_sendmmsg: socket");
		return 1;
	}
	static uint8_t payload[1472];
	size_t plen = argc > 5 ? (size_t)atoi(argv[5]) : LIMIT_PAYLOAD;
	if (plen > sizeof(payload)) {
		fprintf(stderr, "txs_limit_sendmmsg: LENGTH %zu: at most %zu\n", plen, sizeof(payload));
		return 2;
	}
	struct iovec iov = { payload, plen };
	struct mmsghdr m[BATCH];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++) {
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	uint64_t sent = 0;
	double t0 = limit_now(), t = t0;
	while (t - t0 < secs) {
		for (int k = 0; k < 64; k++) { /* a clock read per 4096 datagrams */
			int r = sendmmsg(fd, m, BATCH, 0);
			if (r > 0)
				sent += (uint64_t)r;
			else if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED)
				return perror("sendmmsg"), 1;
		}
		t = limit_now();
	}
	limit_report("sendmmsg", sent, t - t0);
	return 0;
}
