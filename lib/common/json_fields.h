/* SPDX-License-Identifier: MIT */
/* Table-driven JSON writers for structs of counters: a table of (key,
 * offset) rows and one call that writes each as txs_json_u64 in order.
 * Private to the library. */
#ifndef TXS_COMMON_JSON_FIELDS_H
#define TXS_COMMON_JSON_FIELDS_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <txscale/json.h>

struct txs_json_u64_field {
	const char *key;
	size_t off; /* of a uint64_t in the struct */
};
/* A row whose key is the field's name, and one with its own key. */
#define TXS_JSON_U64F(type, field) { #field, offsetof(type, field) }
#define TXS_JSON_U64K(key, type, field) { key, offsetof(type, field) }

/* Write the n fields of table t from the struct at base. */
static inline void txs_json_u64_fields(struct txs_json *j, const void *base, const struct txs_json_u64_field *t,
				       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, (const char *)base + t[i].off, sizeof(v));
		txs_json_u64(j, t[i].key, v);
	}
}
#endif
