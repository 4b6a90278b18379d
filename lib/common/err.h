/* SPDX-License-Identifier: MIT */
/* The library's error convention in one place: a function that fails
 * writes one line naming the bad value into the caller's buffer and returns
 * the negative errno. Not public. */
#ifndef TXS_COMMON_ERR_H
#define TXS_COMMON_ERR_H
#include <stddef.h>

/* Format fmt into err[0..errlen) (nothing when err is NULL or errlen 0) and
 * return rc. */
int txs_fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Format fmt into one line (at most 511 bytes) and hand it to fn(user,
 * line), the caller's message hook; nothing when fn is NULL. */
void txs_say(void (*fn)(void *user, const char *line), void *user, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#endif
