/* SPDX-License-Identifier: MIT */
/* Flow specs the tests build frames from: lab addresses (198.18.0.1 ->
 * 198.18.0.2, 2001:2::1 -> 2001:2::2) or loopback. No cmocka here: the fuzz
 * corpus generator uses it too. */
#ifndef TXS_TEST_FRAME_H
#define TXS_TEST_FRAME_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <txscale/pkt.h>

/* sport -> dport, plen bytes of payload, between the lab addresses of
 * IPv6 (v6) or IPv4; the other fields zero. */
static inline struct txs_flow_spec t_flow_spec(bool v6, uint16_t sport, uint16_t dport, uint32_t plen)
{
	struct txs_flow_spec sp = { 0 };
	txs_addr_parse(&sp.src, v6 ? "2001:2::1" : "198.18.0.1");
	txs_addr_parse(&sp.dst, v6 ? "2001:2::2" : "198.18.0.2");
	sp.sport = sport;
	sp.dport = dport;
	sp.payload_len = plen;
	return sp;
}

/* The same from loopback to loopback of family (AF_INET or AF_INET6). */
static inline struct txs_flow_spec t_lo_spec(int family, uint16_t sport, uint16_t dport, uint32_t plen)
{
	struct txs_flow_spec sp = { 0 };
	txs_addr_parse(&sp.src, family == AF_INET ? "127.0.0.1" : "::1");
	txs_addr_parse(&sp.dst, family == AF_INET ? "127.0.0.1" : "::1");
	sp.sport = sport;
	sp.dport = dport;
	sp.payload_len = plen;
	return sp;
}
#endif
