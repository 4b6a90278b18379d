/* SPDX-License-Identifier: MIT */
/* lib/common/parse.c: the values of options as users write them. Each form
 * a user may type gives its value; each bad form (trailing text, a sign, a
 * fraction of a count, a value past the bound, an empty string) is
 * -EINVAL; CPU lists are checked against the CPUs this process may use. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <txscale/common.h>
#include "test_util.h"

static void parse_count(void **st)
{
	(void)st;
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "1000", 1000 }, { "10k", 10000 }, { "10K", 10000 }, { "1.5M", 1500000 },
		{ "2m", 2000000 }, { "2G", 2000000000ull }, { "0.5k", 500 }, { "18000000000000000000", 18000000000000000000ull },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 7;
		assert_int_equal(txs_parse_count(good[i].s, &v), 0);
		assert_true(v == good[i].v);
	}
	static const char *const bad[] = { "", "-1", "1.5", "0.0001k", "10x", "k", "1e30", "10 k", "2e19" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 7;
		assert_int_equal(txs_parse_count(bad[i], &v), -EINVAL);
	}
	uint64_t v;
	assert_int_equal(txs_parse_count(NULL, &v), -EINVAL);
}

static void parse_seconds(void **st)
{
	(void)st;
	static const struct { const char *s; double v; } good[] = {
		{ "0", 0 }, { "10", 10 }, { "0.5", 0.5 }, { "2s", 2 }, { "250ms", 0.25 }, { "100us", 1e-4 },
		{ "1m", 60 }, { "2min", 120 }, { "10000000", 1e7 },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		double v = -1;
		assert_int_equal(txs_parse_seconds(good[i].s, &v), 0);
		assert_true(v == good[i].v);
	}
	static const char *const bad[] = { "", "-1", "1h", "nan", "inf", "10000001", "s", "5 s" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double v = -1;
		assert_int_equal(txs_parse_seconds(bad[i], &v), -EINVAL);
	}
}

static void parse_rate(void **st)
{
	(void)st;
	static const struct { const char *s; double v; bool bits; } good[] = {
		/* iperf's grammar: plain numbers are bits/s, pps makes datagrams/s */
		{ "0", 0, true }, { "1M", 1e6, true }, { "10M", 1e7, true }, { "10m", 1e7, true },
		{ "10kpps", 1e4, false }, { "100Mbit", 1e8, true }, { "0pps", 0, false }, { "2.5kpps", 2500, false },
		{ "1.5Gbps", 1.5e9, true }, { "1.5gbit", 1.5e9, true }, { "250", 250, true }, { "1000G", 1e12, true },
		{ "1T", 1e12, true }, { "8K", 8000, true }, { "800K", 8e5, true }, { "10Mbit/s", 1e7, true },
		{ "100pps", 100, false }, { "1Mpps", 1e6, false }, { "10kPPS", 1e4, false }, { "10KPPS", 1e4, false },
		{ "5Pps", 5, false }, { "10MBit", 1e7, true }, { "10MBPS", 1e7, true },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		double v = -1;
		bool b = !good[i].bits;
		assert_int_equal(txs_parse_rate(good[i].s, &v, &b), 0);
		assert_true(v == good[i].v);
		assert_true(b == good[i].bits);
	}
	static const char *const bad[] = { "", "-5", "1Mbyte", "fast", "1001G", "nan", "1 M", "1Mpp", "pps", "1kpps/s",
					   "2T", "10M/100" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		double v = -1;
		bool b = false;
		assert_int_equal(txs_parse_rate(bad[i], &v, &b), -EINVAL);
		assert_true(v == -1); /* a bad value writes nothing */
	}
}

static void parse_cpus(void **st)
{
	(void)st;
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	int first = -1, second = -1;
	for (int c = 0; c < CPU_SETSIZE && second < 0; c++)
		if (CPU_ISSET(c, &set)) {
			if (first < 0)
				first = c;
			else
				second = c;
		}
	char s[64], err[160];
	int cpu[8];
	unsigned n = 0;
	snprintf(s, sizeof(s), "%d", first);
	assert_int_equal(txs_parse_cpus(s, cpu, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cpu[0], first);
	if (second == first + 1) {
		snprintf(s, sizeof(s), "%d-%d", first, second);
		assert_int_equal(txs_parse_cpus(s, cpu, 8, &n, err, sizeof(err)), 0);
		assert_int_equal(n, 2);
		assert_int_equal(cpu[1], second);
	}
	/* twice, past the list's room, not allowed, malformed */
	snprintf(s, sizeof(s), "%d,%d", first, first);
	assert_int_equal(txs_parse_cpus(s, cpu, 8, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	snprintf(s, sizeof(s), "%d", first);
	assert_int_equal(txs_parse_cpus(s, cpu, 0, &n, err, sizeof(err)), -EINVAL);
	int absent = -1;
	for (int c = 0; c < CPU_SETSIZE && absent < 0; c++)
		if (!CPU_ISSET(c, &set))
			absent = c;
	if (absent >= 0) {
		snprintf(s, sizeof(s), "%d", absent);
		assert_int_equal(txs_parse_cpus(s, cpu, 8, &n, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "not available"));
	}
	static const char *const bad[] = { "", "a", "1-", "-1", "3-1", "0,,1", "0;1", "99999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(txs_parse_cpus(bad[i], cpu, 8, &n, err, sizeof(err)), -EINVAL);
		assert_true(err[0] != 0);
	}
}

T_MAIN(cmocka_unit_test(parse_count), cmocka_unit_test(parse_seconds), cmocka_unit_test(parse_rate),
       cmocka_unit_test(parse_cpus))
