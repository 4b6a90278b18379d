/* SPDX-License-Identifier: MIT */
/* Private to lib/ctl: the clock fields of messages (clock.c), for msg.c,
 * and what clock.c and clock_udp.c share. */
#ifndef TXS_CTL_CLOCK_PRIV_H
#define TXS_CTL_CLOCK_PRIV_H
#include <jansson.h>
#include <txscale/ctl.h>

/* o["clock"] (absent: c->on false) -> c; where names the object for err.
 * drift: the object may carry drift_ns. 0 or -EPROTO. */
int ctl_clock_rd(json_t *o, const char *where, bool drift, struct txs_ctl_clock_rep *c, char *err, size_t errlen);
/* c (on) as o["clock"]; false on failure */
bool ctl_clock_put(json_t *o, const struct txs_ctl_clock_rep *c, bool drift);
/* time message fields */
int ctl_time_rd(json_t *o, struct txs_ctl_msg *m, char *err, size_t errlen);
bool ctl_time_put(json_t *o, const struct txs_ctl_msg *m);
/* the static name of a method we know (TXS_CTL_CLOCK_UDP/TCP), else NULL */
const char *ctl_clock_method(const char *s);
/* an answer to a time message: 0; -EREMOTEIO (an error message: its
 * words in err), -EPROTO (another type) */
int ctl_time_check(const struct txs_ctl_msg *a, char *err, size_t errlen);
/* the server's side of the UDP exchange (clock_udp.c), for txs_ctl_clock_answer */
int ctl_clock_serve_udp(int fd, const struct txs_ctl_msg *m, uint64_t t2, int timeout_ms, char *err, size_t errlen);
#endif
