/* SPDX-License-Identifier: MIT */
/* Values by path in a JSON document parsed with jansson: the one way the
 * library and the CLI read JSON (a sender's summary line, a trial's
 * summaries, a peer's messages). Not public: programs use jansson directly.
 *
 * Path: members joined by '.', an array element by its decimal index:
 * "kernel_drops.udp.RcvbufErrors", "threads.3.packets". Pure functions over
 * the caller's json_t: any thread, one document per thread at a time
 * (jansson's reference counts are not atomic). */
#ifndef TXS_COMMON_JSONPATH_H
#define TXS_COMMON_JSONPATH_H
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse text[0..n) (need not be NUL-terminated) as one JSON object, and
 * nothing after it but white space, with no object or array nested more
 * than TXS_JSON_MAX_DEPTH levels in it (its members' values are at level
 * 1). NULL: not valid JSON, not
 * an object, or too deep (a number too large for jansson's 64-bit signed
 * integers is invalid JSON to it). The caller json_decref()s it. */
#define TXS_JSON_MAX_DEPTH 32
json_t *txs_jload(const char *text, size_t n);

/* The value at path under root, borrowed (NULL: absent, or a segment that
 * walks into a scalar). */
json_t *txs_jpath(const json_t *root, const char *path);

/* Typed lookups: 0, -ENOENT (absent), -EINVAL (present with another type:
 * u64 wants a non-negative integer, dbl any number, bool true or false). */
int txs_jget_u64(const json_t *root, const char *path, uint64_t *out);
int txs_jget_dbl(const json_t *root, const char *path, double *out);
int txs_jget_bool(const json_t *root, const char *path, bool *out);
/* Sum of the unsigned field `field` over every member of the object at
 * `path` (e.g. kernel_drops.interfaces, rx_dropped); members that are not
 * objects or lack the field are skipped. 0, -ENOENT, -EINVAL (not an object). */
int txs_jsum_members(const json_t *root, const char *path, const char *field, uint64_t *out);
#endif
