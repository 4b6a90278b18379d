/* SPDX-License-Identifier: MIT */
/* The server's iperf3 side is lib/server's (lib/server/iperf3.c); this
 * header declares nothing. */
#ifndef TXS_SERVER_IPERF3_H
#define TXS_SERVER_IPERF3_H
#endif
