/* SPDX-License-Identifier: MIT */
/* txscale's JSON writer (lib/common/json_write.c): one object per line,
 * commas handled, strings escaped so that no control character (C0, DEL, or
 * a C1 code point) reaches the output raw. Reading JSON is jansson's job
 * (lib/common/jsonpath.h has the path lookups the library and the CLI use).
 *
 * Concurrency: a struct txs_json belongs to one thread. */
#ifndef TXSCALE_JSON_H
#define TXSCALE_JSON_H

#include <stdio.h>
#include <txscale/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- JSON writer: one object per line, commas handled ---- */
struct txs_json {
	FILE *f;
	int depth;
	bool need_comma[32];
};
TXS_API void txs_json_begin(struct txs_json *j, FILE *f);       /* starts "{" */
TXS_API void txs_json_end(struct txs_json *j);                  /* closes "}\n" and flushes */
TXS_API void txs_json_key(struct txs_json *j, const char *key); /* emits "key": */
TXS_API void txs_json_obj_open(struct txs_json *j, const char *key); /* key may be NULL in arrays */
TXS_API void txs_json_obj_close(struct txs_json *j);
TXS_API void txs_json_arr_open(struct txs_json *j, const char *key);
TXS_API void txs_json_arr_close(struct txs_json *j);
TXS_API void txs_json_u64(struct txs_json *j, const char *key, uint64_t v);
TXS_API void txs_json_i64(struct txs_json *j, const char *key, int64_t v);
TXS_API void txs_json_dbl(struct txs_json *j, const char *key, double v);
TXS_API void txs_json_str(struct txs_json *j, const char *key, const char *v);
TXS_API void txs_json_bool(struct txs_json *j, const char *key, bool v);

#ifdef __cplusplus
}
#endif
#endif
