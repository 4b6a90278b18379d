/* SPDX-License-Identifier: MIT */
/* Limit reference of bench/pace: the least a paced sender can do. One
 * connected UDP socket (the kernel's default DF), one prebuilt 16-byte
 * datagram; datagram j is due at t0 + j / RATE; the loop sleeps on an
 * absolute deadline (timer slack 1 ns) until the last datagram due within
 * a window of the first one not yet sent (WINDOW_US, default txscale's auto
 * rule: 50 us or two gaps, at most 1 ms), then sends every datagram due
 * with sendmmsg (no GSO), never ahead.
 *   txs_limit_pace DST PORT RATE SECONDS [WINDOW_US] */
#include <errno.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "limit.h"

#define BATCH 64

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: txs_limit_pace DST PORT RATE SECONDS [WINDOW_US]\n");
		return 2;
	}
	struct sockaddr_in d = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
	double rate = atof(argv[3]), secs = atof(argv[4]);
	double win = argc > 5 ? atof(argv[5]) * 1e-6 : 2 / rate;
	if (argc <= 5) {
		if (win > 1e-3)
			win = 1e-3;
		if (win < 50e-6)
			win = 50e-6;
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (!(rate > 0) || !(secs > 0) || fd < 0 || inet_pton(AF_INET, argv[1], &d.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&d, sizeof(d))) {
		perror("txs_limit_pace: socket");
		return 1;
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	static uint8_t payload[LIMIT_PAYLOAD];
	struct iovec iov = { payload, sizeof(payload) };
	struct mmsghdr m[BATCH];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++) {
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	uint64_t sent = 0, total = (uint64_t)(rate * secs);
	double t0 = limit_now(), t = t0;
	uint64_t per_win = (uint64_t)(win * rate);
	while (sent < total) {
		t = limit_now();
		uint64_t due = (uint64_t)((t - t0) * rate) + 1;
		if (due > total)
			due = total;
		if (due > sent) {
			unsigned n = due - sent > BATCH ? BATCH : (unsigned)(due - sent);
			int r = sendmmsg(fd, m, n, 0);
			if (r > 0)
				sent += (uint64_t)r;
			else if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED)
				return perror("sendmmsg"), 1;
			continue;
		}
		uint64_t last = sent + per_win < total ? sent + per_win : total - 1;
		double wake = t0 + (double)last / rate;
		struct timespec ts = { (time_t)wake, (long)((wake - (double)(time_t)wake) * 1e9) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	limit_report("pace", sent, limit_now() - t0);
	return 0;
}
