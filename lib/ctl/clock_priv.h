/* SPDX-License-Identifier: MIT */
/* Private to lib/ctl: the clock fields of messages (clock.c), for msg.c. */
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
#endif
