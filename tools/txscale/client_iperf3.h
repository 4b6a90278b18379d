/* SPDX-License-Identifier: MIT */
/* txscale send -c HOST against an iperf3 server (client_iperf3.c). */
#ifndef TXS_CLIENT_IPERF3_H
#define TXS_CLIENT_IPERF3_H
#include "ctl_cli.h"

#define CTL_PROBE_S 1.0 /* a txscale server greets within this; an iperf3 server stays silent */

/* On a fresh control connection: 1 when the server stays silent for secs
 * (an iperf3 server waiting for our cookie), -1 when it answers iperf3's
 * ACCESS_DENIED (busy), 0 when it speaks otherwise (a txscale greeting, or
 * the close). Reads nothing. */
int ctl_iperf3_probe(int fd, double secs);
/* The whole test over iperf3's protocol on fd (closed here). Exit status. */
int ctl_iperf3_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, int fd);
#endif
