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
		*(struct sockaddr_in *)ss = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
								  .sin_addr = have ? a->v4 : (struct in_addr){ 0 } };
		return sizeof(struct sockaddr_in);
	}
	if (family == AF_INET6) {
		*(struct sockaddr_in6 *)ss = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_port = htons(port),
								    .sin6_addr = have ? a->v6 : in6addr_any };
		return sizeof(struct sockaddr_in6);
	}
	return 0;
}
#endif
