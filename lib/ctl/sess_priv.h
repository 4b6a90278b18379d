/* SPDX-License-Identifier: MIT */
/* lib/ctl inside: what the two session ends (server_session.c,
 * client_session.c) share. */
#ifndef TXS_CTL_SESS_PRIV_H
#define TXS_CTL_SESS_PRIV_H
#include <txscale/common.h>
#include "common/clock.h"

/* seconds -> a poll/read timeout in ms (capped) */
static inline int txs_ctl_ms(double s)
{
	return s > 2e6 ? 2000000000 : (int)(s * 1000);
}

/* A UDP port free on local now, from the kernel's ephemeral range (so never
 * a control port, whose number iperf3's streams share): the data port of a
 * session that left the choice to us (the server's receiver; the client's
 * with -R). The port or -errno. (server_session.c) */
int txs_ctl_free_port(const struct txs_addr *local);

/* Control characters and non-ASCII bytes of a message become '?'. */
static inline void txs_ctl_printable(char *m)
{
	for (char *p = m; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
}
#endif
