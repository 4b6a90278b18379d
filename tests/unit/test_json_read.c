/* SPDX-License-Identifier: MIT */
/* lib/stats JSON reader (txs_json_find and friends): paths through objects
 * and arrays, escapes, numbers, strictness, depth, and bounds: every lookup
 * runs on an exact-size heap copy, so a read past n is an ASan error. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/stats.h>
#include "test_util.h"

static const char doc[] =
	" {\"a\":{\"b\":{\"c\":42}},\"arr\":[10,{\"x\":1,\"y\":[true,false,null]},\"s\",[]],"
	"\"esc\\\"k\":\"v\\n\\u00e9\\\\\",\"3\":\"three\",\"\":5,\"neg\":-7,\"f\":2.5e-3,\"z\":0,"
	"\"max\":18446744073709551615,\"over\":18446744073709551616,\"e\":1E2,\"n\":null,"
	"\"t\":true,\"fa\":false,\"o\":{},\"dup\":1,\"dup\":2,\"d2\":{\"q\":1},\"d2\":{\"r\":2}}\r\n";

/* an exact-size copy: no NUL after it, nothing readable past n */
static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);
	assert_non_null(p);
	memcpy(p, s, n);
	return p;
}

static void paths(void **st)
{
	(void)st;
	size_t n = strlen(doc);
	char *d = dup_n(doc, n);
	const char *v;
	size_t l;
	uint64_t u;
	double x;
	bool b;
	assert_int_equal(txs_json_get_u64(d, n, "a.b.c", &u), 0);
	assert_int_equal(u, 42);
	assert_int_equal(txs_json_find(d, n, "a.b", &v, &l), 0);
	assert_int_equal(l, 8);
	assert_memory_equal(v, "{\"c\":42}", 8);
	/* arrays: an index segment */
	assert_int_equal(txs_json_get_u64(d, n, "arr.0", &u), 0);
	assert_int_equal(u, 10);
	assert_int_equal(txs_json_get_u64(d, n, "arr.1.x", &u), 0);
	assert_int_equal(u, 1);
	assert_int_equal(txs_json_get_bool(d, n, "arr.1.y.1", &b), 0);
	assert_false(b);
	assert_int_equal(txs_json_find(d, n, "arr.2", &v, &l), 0);
	assert_int_equal(l, 3);
	assert_memory_equal(v, "\"s\"", 3);
	assert_int_equal(txs_json_find(d, n, "arr.4", &v, &l), -ENOENT);
	assert_int_equal(txs_json_find(d, n, "arr.01", &v, &l), -ENOENT); /* not plain decimal */
	assert_int_equal(txs_json_find(d, n, "arr.x", &v, &l), -ENOENT);
	assert_int_equal(txs_json_find(d, n, "arr.99999999999999999999999", &v, &l), -ENOENT);
	/* a digit segment in an object is a name */
	assert_int_equal(txs_json_find(d, n, "3", &v, &l), 0);
	assert_memory_equal(v, "\"three\"", 7);
	assert_int_equal(txs_json_get_u64(d, n, "", &u), 0);
	assert_int_equal(u, 5);
	/* names compare raw, escapes kept; a string value keeps its quotes and escapes */
	assert_int_equal(txs_json_find(d, n, "esc\\\"k", &v, &l), 0);
	assert_int_equal(l, strlen("\"v\\n\\u00e9\\\\\""));
	assert_memory_equal(v, "\"v\\n\\u00e9\\\\\"", l);
	assert_int_equal(txs_json_find(d, n, "esc\"k", &v, &l), -ENOENT);
	/* absent */
	assert_int_equal(txs_json_find(d, n, "nothing", &v, &l), -ENOENT);
	assert_int_equal(txs_json_find(d, n, "a.b.c.d", &v, &l), -ENOENT);
	assert_int_equal(txs_json_find(d, n, "a.x", &v, &l), -ENOENT);
	assert_int_equal(txs_json_find(d, n, "a.", &v, &l), -ENOENT);
	/* a repeated name: the last member counts, also for paths through it */
	assert_int_equal(txs_json_get_u64(d, n, "dup", &u), 0);
	assert_int_equal(u, 2);
	assert_int_equal(txs_json_find(d, n, "d2.q", &v, &l), -ENOENT);
	assert_int_equal(txs_json_get_u64(d, n, "d2.r", &u), 0);
	assert_int_equal(u, 2);
	/* typed */
	assert_int_equal(txs_json_get_dbl(d, n, "f", &x), 0);
	assert_true(x == 2.5e-3);
	assert_int_equal(txs_json_get_dbl(d, n, "neg", &x), 0);
	assert_true(x == -7);
	assert_int_equal(txs_json_get_dbl(d, n, "e", &x), 0);
	assert_true(x == 100);
	assert_int_equal(txs_json_get_u64(d, n, "z", &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(txs_json_get_u64(d, n, "max", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(txs_json_get_dbl(d, n, "over", &x), 0);
	assert_true(x == 18446744073709551616.0);
	const char *not_u64[] = { "over", "neg", "f", "e", "n", "t", "arr", "o", "3" };
	for (size_t i = 0; i < TXS_ARRAY_SIZE(not_u64); i++)
		assert_int_equal(txs_json_get_u64(d, n, not_u64[i], &u), -EINVAL);
	const char *not_dbl[] = { "n", "t", "fa", "arr", "o", "3" };
	for (size_t i = 0; i < TXS_ARRAY_SIZE(not_dbl); i++)
		assert_int_equal(txs_json_get_dbl(d, n, not_dbl[i], &x), -EINVAL);
	assert_int_equal(txs_json_get_bool(d, n, "t", &b), 0);
	assert_true(b);
	assert_int_equal(txs_json_get_bool(d, n, "fa", &b), 0);
	assert_false(b);
	assert_int_equal(txs_json_get_bool(d, n, "n", &b), -EINVAL);
	assert_int_equal(txs_json_get_bool(d, n, "z", &b), -EINVAL);
	assert_int_equal(txs_json_get_u64(d, n, "nothing", &u), -ENOENT);
	free(d);
}

static void containers(void **st)
{
	(void)st;
	size_t n = strlen(doc);
	char *d = dup_n(doc, n);
	const char *v;
	size_t l, c;
	uint64_t u;
	assert_int_equal(txs_json_count(d, n, "arr", &c), 0);
	assert_int_equal(c, 4);
	assert_int_equal(txs_json_count(d, n, "arr.3", &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(txs_json_count(d, n, "o", &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(txs_json_count(d, n, "arr.1", &c), 0); /* an object: its members */
	assert_int_equal(c, 2);
	assert_int_equal(txs_json_count(d, n, "arr.1.y", &c), 0);
	assert_int_equal(c, 3);
	assert_int_equal(txs_json_count(d, n, "z", &c), -EINVAL);
	assert_int_equal(txs_json_count(d, n, "nothing", &c), -ENOENT);
	assert_int_equal(txs_json_item(d, n, "arr", 1, &v, &l), 0);
	assert_int_equal(l, strlen("{\"x\":1,\"y\":[true,false,null]}"));
	assert_memory_equal(v, "{\"x\":1,\"y\":[true,false,null]}", l);
	assert_int_equal(txs_json_get_u64(v, l, "x", &u), 0); /* an item is a document again */
	assert_int_equal(u, 1);
	assert_int_equal(txs_json_item(d, n, "arr", 3, &v, &l), 0);
	assert_memory_equal(v, "[]", 2);
	assert_int_equal(txs_json_item(d, n, "arr", 4, &v, &l), -ENOENT);
	assert_int_equal(txs_json_item(d, n, "arr.3", 0, &v, &l), -ENOENT);
	assert_int_equal(txs_json_item(d, n, "a.b", 0, &v, &l), 0); /* object: the member value */
	assert_memory_equal(v, "42", 2);
	assert_int_equal(txs_json_item(d, n, "a.b.c", 0, &v, &l), -EINVAL);
	/* whitespace between items */
	const char *w = "{ \"a\" : [ 1 , { \"b\" : 2 } , \"x\" ] }";
	char *ww = dup_n(w, strlen(w));
	assert_int_equal(txs_json_count(ww, strlen(w), "a", &c), 0);
	assert_int_equal(c, 3);
	assert_int_equal(txs_json_item(ww, strlen(w), "a", 1, &v, &l), 0);
	assert_memory_equal(v, "{ \"b\" : 2 }", l);
	assert_int_equal(txs_json_item(ww, strlen(w), "a", 2, &v, &l), 0);
	assert_memory_equal(v, "\"x\"", l);
	free(ww);
	free(d);
}

static void malformed(void **st)
{
	(void)st;
	size_t n = strlen(doc);
	const char *v;
	size_t l, c;
	uint64_t u;
	/* every prefix of the document is refused, and nothing past it is read */
	for (size_t cut = 0; cut < n; cut++) {
		char *p = dup_n(doc, cut);
		int want = cut >= n - 2 ? 0 : -EINVAL; /* only trailing "\r\n" may go */
		assert_int_equal(txs_json_get_u64(p, cut, "a.b.c", &u), want);
		assert_int_equal(txs_json_find(p, cut, "nothing", &v, &l), want ? want : -ENOENT);
		assert_int_equal(txs_json_count(p, cut, "arr", &c), want);
		free(p);
	}
	/* n bounds the input even when more follows in memory */
	assert_int_equal(txs_json_get_u64("{\"a\":1}{", 7, "a", &u), 0);
	assert_int_equal(txs_json_get_u64("{\"a\":12}", 6, "a", &u), -EINVAL);
	static const char *const bad[] = {
		"",
		"   ",
		"[1]",
		"1",
		"\"a\"",
		"{\"a\":1}x",
		"{\"a\":1}{}",
		"{\"a\":1,}",
		"{,\"a\":1}",
		"{\"a\" 1}",
		"{\"a\":1 \"b\":2}",
		"{a:1}",
		"{'a':1}",
		"{\"a\":[1,]}",
		"{\"a\":[1 2]}",
		"{\"a\":01}",
		"{\"a\":-}",
		"{\"a\":-01}",
		"{\"a\":+1}",
		"{\"a\":1.}",
		"{\"a\":.5}",
		"{\"a\":1e}",
		"{\"a\":1e+}",
		"{\"a\":tru}",
		"{\"a\":True}",
		"{\"a\":nul}",
		"{\"a\":NaN}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12g4\"}",
		"{\"a\":\"\\u12\"}",
		"{\"a\":\"tab\there\"}",
		"{\"a\":\"open}",
		"{\"a\\\":1}",
	};
	for (size_t i = 0; i < TXS_ARRAY_SIZE(bad); i++) {
		size_t bl = strlen(bad[i]);
		char *p = dup_n(bad[i], bl);
		assert_int_equal(txs_json_get_u64(p, bl, "a", &u), -EINVAL);
		free(p);
	}
	/* a raw control byte or NUL inside a string, and a NUL between tokens */
	static const char nul_in_str[] = { '{', '"', 'a', '"', ':', '"', 0, '"', '}' };
	static const char nul_ws[] = { '{', '"', 'a', '"', ':', '1', 0, '}' };
	assert_int_equal(txs_json_find(nul_in_str, sizeof(nul_in_str), "a", &v, &l), -EINVAL);
	assert_int_equal(txs_json_find(nul_ws, sizeof(nul_ws), "a", &v, &l), -EINVAL);
}

/* {"a": `levels` arrays around a 1 }: the top object is level 0 */
static int deep(unsigned levels, const char *path)
{
	char buf[256];
	size_t k = 0;
	k += (size_t)snprintf(buf, sizeof(buf), "{\"a\":");
	for (unsigned i = 0; i < levels; i++)
		buf[k++] = '[';
	buf[k++] = '1';
	for (unsigned i = 0; i < levels; i++)
		buf[k++] = ']';
	buf[k++] = '}';
	char *p = dup_n(buf, k);
	const char *v;
	size_t l;
	int rc = txs_json_find(p, k, path, &v, &l);
	free(p);
	return rc;
}

static void depth_limit(void **st)
{
	(void)st;
	/* the value 1 sits at level levels + 1 */
	assert_int_equal(deep(TXS_JSON_MAX_DEPTH - 1, "a"), 0);
	assert_int_equal(deep(TXS_JSON_MAX_DEPTH, "a"), -EINVAL);
	assert_int_equal(deep(TXS_JSON_MAX_DEPTH, "nothing"), -EINVAL);
	assert_int_equal(deep(100, "a"), -EINVAL);
	assert_int_equal(deep(TXS_JSON_MAX_DEPTH - 1, "a.0.0"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths),
		cmocka_unit_test(containers),
		cmocka_unit_test(malformed),
		cmocka_unit_test(depth_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
