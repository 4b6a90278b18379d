/* SPDX-License-Identifier: MIT */
/* Values by path in a jansson document (jsonpath.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "jsonpath.h"

/* Whether v, a container, and the containers in it are fewer than `left`
 * levels deep. */
static bool depth_ok(const json_t *v, unsigned left)
{
	if (!json_is_object(v) && !json_is_array(v))
		return true;
	if (!left)
		return false;
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++)
			if (!depth_ok(json_array_get(v, i), left - 1))
				return false;
		return true;
	}
	const char *k;
	json_t *m;
	json_object_foreach((json_t *)v, k, m) {
		if (!depth_ok(m, left - 1))
			return false;
	}
	return true;
}

json_t *txs_jload(const char *text, size_t n)
{
	json_error_t e;
	json_t *root = json_loadb(text, n, 0, &e);
	if (root && (!json_is_object(root) || !depth_ok(root, TXS_JSON_MAX_DEPTH + 1))) {
		json_decref(root);
		return NULL;
	}
	return root;
}

json_t *txs_jpath(const json_t *root, const char *path)
{
	json_t *v = (json_t *)root;
	const char *p = path;
	char seg[128];
	while (v) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(seg))
			return NULL;
		memcpy(seg, p, len);
		seg[len] = 0;
		if (json_is_object(v)) {
			v = json_object_get(v, seg);
		} else if (json_is_array(v)) {
			char *end;
			if (!len || (len > 1 && seg[0] == '0') || seg[0] < '0' || seg[0] > '9')
				return NULL;
			unsigned long long i = strtoull(seg, &end, 10);
			if (*end)
				return NULL;
			v = i < json_array_size(v) ? json_array_get(v, (size_t)i) : NULL;
		} else {
			return NULL;
		}
		if (!dot)
			return v;
		p = dot + 1;
	}
	return NULL;
}

enum jkind { JK_UINT, JK_NUM, JK_BOOL };

/* The value at path when it is of kind k: 0 with *v, -ENOENT (absent) or
 * -EINVAL (another kind). */
static int jget(const json_t *root, const char *path, enum jkind k, json_t **v)
{
	*v = txs_jpath(root, path);
	if (!*v)
		return -ENOENT;
	bool ok = k == JK_UINT ? json_is_integer(*v) && json_integer_value(*v) >= 0
		: k == JK_NUM  ? json_is_number(*v)
			       : json_is_boolean(*v);
	return ok ? 0 : -EINVAL;
}

/* The typed getters of jsonpath.h, each jget and the value read as its type. */
#define JGET(fn, T, kind, value)                                        \
	int fn(const json_t *root, const char *path, T *out)            \
	{                                                               \
		json_t *v;                                              \
		int rc = jget(root, path, kind, &v);                    \
		if (!rc)                                                \
			*out = (value);                                 \
		return rc;                                              \
	}
JGET(txs_jget_u64, uint64_t, JK_UINT, (uint64_t)json_integer_value(v))
JGET(txs_jget_dbl, double, JK_NUM, json_number_value(v))
JGET(txs_jget_bool, bool, JK_BOOL, json_is_true(v))

int txs_jsum_members(const json_t *root, const char *path, const char *field, uint64_t *out)
{
	const json_t *o = txs_jpath(root, path);
	if (!o)
		return -ENOENT;
	if (!json_is_object(o))
		return -EINVAL;
	uint64_t sum = 0, x;
	const char *k;
	json_t *m;
	json_object_foreach((json_t *)o, k, m) {
		if (json_is_object(m) && txs_jget_u64(m, field, &x) == 0)
			sum += x;
	}
	*out = sum;
	return 0;
}
