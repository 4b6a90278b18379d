/* SPDX-License-Identifier: MIT */
/* Loopback receivers for the tests that send real datagrams. */
#ifndef TXS_TEST_SOCK_H
#define TXS_TEST_SOCK_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include <txscale/rx.h>
#include "test_util.h"

/* Give the UDP socket fd of family (AF_INET or AF_INET6) a 4 MiB receive
 * buffer and bind it to loopback on a port the kernel picks (into *port).
 * False where the bind fails (no loopback of that family here); the caller
 * closes fd. */
static inline bool t_lo_bind(int fd, int family, uint16_t *port)
{
	int big = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	if (family == AF_INET) {
		struct sockaddr_in *s = (void *)&ss;
		s->sin_family = AF_INET;
		s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (void *)&ss;
		s->sin6_family = AF_INET6;
		s->sin6_addr = in6addr_loopback;
		sl = sizeof(*s);
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0)
		return false;
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return true;
}
/* A "udp" receive input of ic bound to 127.0.0.1 on free ports: port
 * base + (7 pid + stride tries) % span, up to 20 tries, and where width > 0
 * the range to port + width (ic->port_hi). Where none opens, the test is
 * skipped, the reason skip_why and the last error. */
/* A loopback IPv4 port of type (SOCK_DGRAM, SOCK_STREAM) free a moment ago:
 * for a server or receiver the test starts by port number. */
static inline unsigned t_free_port(int type)
{
	int fd = socket(AF_INET, type, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static inline struct txs_rx_input *t_rx_udp_input(struct txs_rx_input_conf *ic, unsigned base, unsigned span,
						  unsigned stride, unsigned width, const char *skip_why)
{
	ic->have_bind = true;
	txs_addr_parse(&ic->bind, "127.0.0.1");
	struct txs_rx_input *in = NULL;
	char err[320];
	int rc = -1;
	for (unsigned tries = 0; rc < 0 && tries < 20; tries++) {
		ic->port = (uint16_t)(base + (getpid() * 7 + tries * stride) % span);
		if (width)
			ic->port_hi = (uint16_t)(ic->port + width);
		rc = txs_rx_input_open(&in, "udp", ic, err, sizeof(err));
	}
	if (rc < 0)
		T_SKIP("%s: %s", skip_why, err);
	return in;
}
#endif
