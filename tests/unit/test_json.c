/* SPDX-License-Identifier: MIT */
/* The JSON writer (txscale/json.h) and the path lookups over jansson
 * (lib/common/jsonpath.h): what the writer emits is valid JSON that jansson
 * reads back to the same values, control characters never pass raw, and
 * the lookups refuse what is not there or not of their type. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/json.h>
#include "common/jsonpath.h"
#include "test_util.h"

/* Write one object with the writer into memory; returns a malloc'd line. */
static char *write_obj(const char *key, const char *str, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);
	assert_non_null(f);
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, key, str);
	txs_json_u64(&j, "u", UINT64_C(1) << 62);
	txs_json_i64(&j, "i", -5);
	txs_json_dbl(&j, "nan", 0.0 / 0.0);
	txs_json_bool(&j, "b", true);
	txs_json_arr_open(&j, "a");
	txs_json_obj_open(&j, NULL);
	txs_json_u64(&j, "x", 1);
	txs_json_obj_close(&j);
	txs_json_arr_close(&j);
	txs_json_end(&j);
	fclose(f);
	return buf;
}

static void writer_round_trip(void **st)
{
	(void)st;
	/* C0, DEL, a C1 code point (U+009B, CSI), U+00E9, U+20AC, U+1F600, and
	 * bytes that are no UTF-8 (a lone continuation byte, a cut sequence, an
	 * overlong '/', a surrogate) */
	static const char in[] = "a\x01\x1b[2J\x7f\xc2\x9b\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \x80|\xe2\x82|\xc0\xaf|"
				 "\xed\xa0\x80\"\\\n";
	size_t n;
	char *line = write_obj("k\x1b\xc2\x9b", in, &n);
	for (size_t i = 0; i + 1 < n; i++) {
		unsigned char c = (unsigned char)line[i];
		assert_true(c >= 0x20 && c != 0x7f);
		/* no C1 code point, encoded */
		assert_false(c == 0xc2 && (unsigned char)line[i + 1] >= 0x80 && (unsigned char)line[i + 1] <= 0x9f);
	}
	assert_int_equal(line[n - 1], '\n');
	json_error_t e;
	json_t *o = json_loadb(line, n, 0, &e);
	assert_non_null(o); /* valid JSON, valid UTF-8 */
	const char *got = json_string_value(json_object_get(o, "k\x1b\xc2\x9b"));
	assert_non_null(got);
	/* valid characters come back as they were; each bad byte as the code
	 * point of its value */
	static const char want[] = "a\x01\x1b[2J\x7f\xc2\x9b\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 \xc2\x80|\xc3\xa2\xc2\x82|"
				   "\xc3\x80\xc2\xaf|\xc3\xad\xc2\xa0\xc2\x80\"\\\n";
	assert_string_equal(got, want);
	uint64_t u;
	assert_int_equal(txs_jget_u64(o, "u", &u), 0);
	assert_true(u == UINT64_C(1) << 62);
	assert_int_equal(txs_jget_u64(o, "i", &u), -EINVAL);
	assert_true(json_is_null(json_object_get(o, "nan")));
	assert_int_equal(txs_jget_u64(o, "a.0.x", &u), 0);
	assert_int_equal(u, 1);
	json_decref(o);
	free(line);
}

static void paths(void **st)
{
	(void)st;
	static const char doc[] = "{\"a\":{\"b\":[10,{\"c\":true},2.5,-1]},\"s\":\"x\",\"z\":null,\"\":{\"\":7}}";
	json_t *o = txs_jload(doc, strlen(doc));
	assert_non_null(o);
	uint64_t u;
	double d;
	bool b;
	assert_int_equal(txs_jget_u64(o, "a.b.0", &u), 0);
	assert_int_equal(u, 10);
	assert_int_equal(txs_jget_bool(o, "a.b.1.c", &b), 0);
	assert_true(b);
	assert_int_equal(txs_jget_dbl(o, "a.b.2", &d), 0);
	assert_true(d == 2.5);
	assert_int_equal(txs_jget_dbl(o, "a.b.0", &d), 0); /* an integer is a number */
	assert_true(d == 10);
	assert_int_equal(txs_jget_u64(o, "a.b.3", &u), -EINVAL); /* negative */
	assert_int_equal(txs_jget_u64(o, "a.b.2", &u), -EINVAL); /* fractional */
	assert_int_equal(txs_jget_u64(o, "s", &u), -EINVAL);
	assert_int_equal(txs_jget_u64(o, "z", &u), -EINVAL);
	assert_int_equal(txs_jget_bool(o, "s", &b), -EINVAL);
	assert_int_equal(txs_jget_u64(o, "a.b.4", &u), -ENOENT);  /* past the end */
	assert_int_equal(txs_jget_u64(o, "a.b.01", &u), -ENOENT); /* not plain decimal */
	assert_int_equal(txs_jget_u64(o, "a.b.-1", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, "a.b.x", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, "s.t", &u), -ENOENT); /* into a scalar */
	assert_int_equal(txs_jget_u64(o, "nothing", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, ".", &u), 0); /* the member "" of the member "" */
	assert_int_equal(u, 7);
	char longseg[300];
	memset(longseg, 'a', sizeof(longseg) - 1);
	longseg[sizeof(longseg) - 1] = 0;
	assert_null(txs_jpath(o, longseg));
	json_decref(o);
}

/* {"a":[[...]]} with depth arrays into buf (2 depth + 6 bytes): its length. */
static size_t nested(char *buf, size_t depth)
{
	size_t k = 0;
	buf[k++] = '{', buf[k++] = '"', buf[k++] = 'a', buf[k++] = '"', buf[k++] = ':';
	for (size_t i = 0; i < depth; i++)
		buf[k++] = '[';
	for (size_t i = 0; i < depth; i++)
		buf[k++] = ']';
	buf[k++] = '}';
	return k;
}

static void malformed(void **st)
{
	(void)st;
	static const char *const bad[] = { "",	       "{",	       "{\"a\":01}",  "{\"a\":1,}", "{\"a\" 1}",
					   "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":1}x", "[1]",	    "1",
					   "{\"a\":-}",	  "{\"a\":1.}",	   "{\"a\":1e}",  "{\"a\":\"\x01\"}",
					   "{\"a\":18446744073709551615}" };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(bad); i++)
		assert_null(txs_jload(bad[i], strlen(bad[i])));
	/* not NUL-terminated: only n bytes are read */
	static const char two[] = "{\"a\":1}{\"b\":2}";
	json_t *o = txs_jload(two, 7);
	assert_non_null(o);
	json_decref(o);
	/* nesting beyond jansson's limit is refused, not recursed into without end */
	size_t depth = 5000;
	char *deep = malloc(2 * depth + 8);
	size_t k = nested(deep, depth);
	assert_null(txs_jload(deep, k));
	/* our own bound: the members' values at level 1, no container below 32 */
	for (size_t d = 31; d <= 33; d++) {
		k = nested(deep, d);
		o = txs_jload(deep, k);
		if (d <= 32)
			assert_non_null(o);
		else
			assert_null(o);
		json_decref(o);
	}
	free(deep);
}

T_MAIN(cmocka_unit_test(writer_round_trip),
       cmocka_unit_test(paths),
       cmocka_unit_test(malformed))
