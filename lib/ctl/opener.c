/* SPDX-License-Identifier: MIT */
/* Who opened a control connection, by what it wrote first: a txscale
 * client's opener (TXS_CTL_OPENER, an iperf3 cookie that says "txscale"),
 * an iperf3 client's cookie, or nothing (a txscale client from before the
 * opener, which waits for our hello). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <txscale/ctl_session.h>
#include <txscale/iperf3.h>
#include "ctl_priv.h"

TXS_API enum txs_ctl_first txs_ctl_first(int fd, int wait_ms, bool consume)
{
	int64_t end = txs_ctl_now_ms() + wait_ms;
	uint8_t b[TXS_IP3_COOKIE_LEN];
	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t left = end - txs_ctl_now_ms();
		int r = poll(&pf, 1, left > 0 ? (int)left : 0);
		if (r < 0 && errno == EINTR)
			continue;
		ssize_t n = r > 0 ? recv(fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT) : 0;
		if (n <= 0)
			return TXS_CTL_FIRST_NONE; /* silence, or the close */
		size_t m = (size_t)n < TXS_CTL_OPENER_LEN ? (size_t)n : TXS_CTL_OPENER_LEN;
		if (memcmp(b, TXS_CTL_OPENER, m) != 0)
			return TXS_CTL_FIRST_OTHER;
		if ((size_t)n == sizeof(b)) {
			if (!txs_ip3_cookie_prefix(b, sizeof(b) - 1) || b[sizeof(b) - 1] != 0)
				return TXS_CTL_FIRST_OTHER;
			if (consume && recv(fd, b, sizeof(b), MSG_DONTWAIT) != (ssize_t)sizeof(b))
				return TXS_CTL_FIRST_NONE;
			return TXS_CTL_FIRST_TXSCALE;
		}
		/* the opener so far: the rest comes in a moment (bounded by wait_ms) */
		if (left <= 0)
			return TXS_CTL_FIRST_OTHER;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}
