/* SPDX-License-Identifier: MIT */
/* lib/stats: JSON writer output, interval/summary reports (text and JSON). */
#include <string.h>
#include <txscale/stats.h>
#include "test_util.h"

static char *capture(void (*fn)(FILE *f))
{
	static char *buf;
	static size_t len;
	buf = NULL;
	FILE *f = open_memstream(&buf, &len);
	fn(f);
	fclose(f);
	return buf;
}

static void write_json(FILE *f)
{
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "x\"y\\z\n");
	txs_json_u64(&j, "big", 18446744073709551615ull);
	txs_json_i64(&j, "neg", -5);
	txs_json_dbl(&j, "d", 1.5);
	txs_json_dbl(&j, "nan", 0.0 / 0.0);
	txs_json_bool(&j, "t", true);
	txs_json_arr_open(&j, "a");
	txs_json_obj_open(&j, NULL);
	txs_json_u64(&j, "k", 1);
	txs_json_obj_close(&j);
	txs_json_obj_open(&j, NULL);
	txs_json_obj_close(&j);
	txs_json_arr_close(&j);
	txs_json_obj_open(&j, "o");
	txs_json_arr_open(&j, "e");
	txs_json_arr_close(&j);
	txs_json_end(&j);
}

static void json_writer(void **st)
{
	(void)st;
	char *s = capture(write_json);
	assert_string_equal(s, "{\"type\":\"x\\\"y\\\\z\\u000a\",\"big\":18446744073709551615,\"neg\":-5,"
			       "\"d\":1.5,\"nan\":null,\"t\":true,\"a\":[{\"k\":1},{}],\"o\":{\"e\":[]}}\n");
	free(s);
}

static const int cpus[2] = { 0, 1 };
static const struct txs_stat_row th[2] = { { 1000, 60000, 1, 0 }, { 3000, 180000, 0, 2 } };
static const struct txs_stat_row ln[2] = { { 2500, 150000, 1, 0 }, { 1500, 90000, 0, 2 } };

/* One interval (0 to t1 s) and the 2 s summary of th and ln, as JSON or text. */
static void write_reports(FILE *f, bool json, double t1)
{
	struct txs_reporter r = { .out = f, .json = json, .kind = "send", .n_threads = 2, .cpus = cpus, .n_links = 2 };
	txs_report_interval(&r, 0, t1, th, ln);
	txs_report_summary(&r, 2, th, ln, NULL, NULL);
}

static void write_reports_json(FILE *f)
{
	write_reports(f, true, 2);
}

static void reports_json(void **st)
{
	(void)st;
	char *s = capture(write_reports_json);
	char *nl = strchr(s, '\n');
	assert_non_null(nl);
	assert_true(strncmp(s, "{\"type\":\"interval\",\"kind\":\"send\",\"start\":0,\"end\":2,\"packets\":4000,"
			       "\"bytes\":240000,\"drops\":1,\"errors\":2,\"pps\":2000,\"bps\":960000,\"threads\":[{\"id\":0,"
			       "\"cpu\":0,\"packets\":1000,",
			    strlen("{\"type\":\"interval\",\"kind\":\"send\",\"start\":0,\"end\":2,\"packets\":4000,"
				   "\"bytes\":240000,\"drops\":1,\"errors\":2,\"pps\":2000,\"bps\":960000,\"threads\":[{\"id\":0,"
				   "\"cpu\":0,\"packets\":1000,")) == 0);
	assert_non_null(strstr(s, "\"links\":[{\"link\":0,\"packets\":2500,"));
	char *sum = nl + 1;
	assert_true(strncmp(sum, "{\"type\":\"summary\",\"kind\":\"send\",\"seconds\":2,\"packets\":4000,", 58) == 0);
	assert_non_null(strstr(sum, "{\"link\":1,\"packets\":1500,\"bytes\":90000,\"drops\":0,\"errors\":2"));
	assert_int_equal(strchr(sum, '\n')[1], 0); /* exactly two lines */
	free(s);
}

static void write_reports_text(FILE *f)
{
	write_reports(f, false, 1);
}

static void reports_text(void **st)
{
	(void)st;
	char *s = capture(write_reports_text);
	assert_non_null(strstr(s, "[  ID] Interval"));
	assert_non_null(strstr(s, "[ SUM]   0.00-1.00   sec           4000 pkts      4.0k pps"));
	assert_non_null(strstr(s, "[  L1]"));
	assert_non_null(strstr(s, "send: 4000 packets, 240000 bytes in 2.000 s, 1.0k pps per thread"));
	free(s);
}

static void si_units(void **st)
{
	(void)st;
	char b[32];
	assert_string_equal(txs_fmt_si(12345678, b, sizeof(b)), "12.35M");
	assert_string_equal(txs_fmt_si(987.6e3, b, sizeof(b)), "987.6k");
	assert_string_equal(txs_fmt_si(2.5e9, b, sizeof(b)), "2.50G");
	assert_string_equal(txs_fmt_si(12, b, sizeof(b)), "12");
}

T_MAIN(cmocka_unit_test(json_writer),
       cmocka_unit_test(reports_json),
       cmocka_unit_test(reports_text),
       cmocka_unit_test(si_units))
