/* SPDX-License-Identifier: MIT */
/* A socket address from a txs_addr: what netdev's udp device, lib/udp and
 * the receiver's sockets each bind or send to. Private to the library
 * (modules that may include pkt). */
#ifndef TXS_PKT_SOCKADDR_H
#define TXS_PKT_SOCKADDR_H
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <txscale/pkt.h>

/* ss = family's address a (NULL, or a of another family: the wildcard) and
 * port. Returns its length, 0 for a family neither AF_INET nor AF_INET6. */
static inline socklen_t txs_sockaddr_set(struct sockaddr_storage *ss, int family, const struct txs_addr *a,
					 uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	bool have = a && a->family == family;
	if (family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		if (have)
			s4->sin_addr = a->v4;
		return sizeof(*s4);
	}
	if (family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (have)
			s6->sin6_addr = a->v6;
		return sizeof(*s6);
	}
	return 0;
}
#endif
