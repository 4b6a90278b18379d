/* SPDX-License-Identifier: MIT */
/* lib/ctl inside: byte I/O on a stream socket with one deadline, shared by
 * txscale's frames (io.c) and iperf3's messages (iperf3_io.c). */
#ifndef TXS_CTL_PRIV_H
#define TXS_CTL_PRIV_H
#include <stddef.h>
#include <stdint.h>

int64_t txs_ctl_now_ms(void); /* CLOCK_MONOTONIC */
/* One line into err (when given); returns rc. */
#include "common/err.h"
#define txs_ctl_fail txs_fail
/* Exactly n bytes before deadline (ms, txs_ctl_now_ms's clock); *got: how
 * many arrived. 0, -ETIMEDOUT, -ECONNRESET (closed), -errno. */
int txs_ctl_read_full(int fd, uint8_t *b, size_t n, int64_t deadline, size_t *got);
/* All n bytes before deadline (MSG_NOSIGNAL). 0, -ETIMEDOUT, -EIO, -errno. */
int txs_ctl_write_full(int fd, const uint8_t *b, size_t n, int64_t deadline);
/* TCP_NODELAY on a control connection (both protocols, both ends): a state
 * byte or a frame leaves when it is written, never held by Nagle behind an
 * unacknowledged one (the peer's delayed ACK: up to 40 ms, while the data
 * of a test that message started may already flow). 0 or -errno. */
int txs_ctl_nodelay(int fd);
/* A peer's summary object (kind "recv" or "send"): counts must be whole
 * numbers >= 0 (else -EPROTO, err naming where.key); a recv summary whose
 * parts do not add up gets "lost_exact":false and "not_exact". */
typedef struct json_t json_t;
int txs_ctl_summary_check(json_t *o, const char *kind, const char *where, char *err, size_t errlen);
#endif
