/* SPDX-License-Identifier: MIT */
/* AF_XDP pieces shared by the xdp: transmit device (lib/netdev/xdp.c) and
 * the xdp: receive input (lib/rx/input_xdp.c). TXS_HAVE_XDP only. */
#ifndef TXS_XSK_UTIL_H
#define TXS_XSK_UTIL_H
#include <stdbool.h>
#include <xdp/libxdp.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

/* Hardware queues of ifname in one direction (rx: RX + combined, else TX +
 * combined, ETHTOOL_GCHANNELS), or 0 when the driver does not say. */
unsigned txs_if_channels(const char *ifname, bool rx);

/* libxdp and libbpf print on their own; the library never does. Silence
 * both around a call into them, then put back what was there. */
struct txs_xsk_print {
	libxdp_print_fn_t xdp;
	libbpf_print_fn_t bpf;
};
void txs_xsk_quiet(struct txs_xsk_print *saved);
void txs_xsk_loud(const struct txs_xsk_print *saved);

/* What an AF_XDP UMEM registration or bind failing with rc (-errno) most
 * likely means here, as " (...)" to append to the error, or "". */
const char *txs_xsk_hint(int rc, bool zc_forced);
/* Take down what an AF_XDP socket's setup made, in order: the socket, its
 * UMEM, the UMEM's area (each NULL when not made). */
void txs_xsk_close(struct xsk_socket *xsk, struct xsk_umem *umem, void *area, size_t area_len);
#endif
