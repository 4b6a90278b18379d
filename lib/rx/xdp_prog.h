/* SPDX-License-Identifier: MIT */
/* The XDP program of the xdp: receive input, built as instructions (no
 * compiler, no BTF: it loads on any kernel with XDP and AF_XDP). */
#ifndef TXS_RX_XDP_PROG_H
#define TXS_RX_XDP_PROG_H
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>
#include <txscale/pkt.h>

/* What the program redirects: UDP to dport in [port, port_hi] (port 0: any
 * port), IPv4 and/or IPv6 (family AF_INET, AF_INET6, 0 = both), to dst
 * (family 0: any address). */
struct txs_xdp_filter {
	uint16_t port, port_hi;
	int family;
	struct txs_addr dst;
};

#define TXS_XDP_PROG_MAX 96 /* instructions */

/* Build the program into insn (room for TXS_XDP_PROG_MAX). An Ethernet frame
 * without VLAN tags carrying a whole IPv4 datagram or a first fragment
 * (any header length), or IPv6 whose next header is UDP, that matches f, is
 * redirected to the AF_XDP socket of its receive queue in the XSKMAP
 * xsk_map_fd (bpf_redirect_map keyed by rx_queue_index). Where that queue
 * has no socket the frame goes on to the stack (XDP_PASS) and element 0 of
 * the one-element u64 ARRAY count_fd is incremented. Everything else: XDP_PASS.
 * Returns the number of instructions. */
size_t txs_xdp_prog_build(struct bpf_insn *insn, const struct txs_xdp_filter *f, int xsk_map_fd, int count_fd);
#endif
