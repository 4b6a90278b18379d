/* SPDX-License-Identifier: MIT */
/* lib/metrics: the exposition writer (label and HELP escaping, invalid
 * UTF-8, names refused, families grouped across collectors, histogram
 * buckets cumulative, a log histogram never counting a value above its le),
 * the receive collector's bounded per-flow series (the rest summed as
 * flow="other", totals equal the result's), the textfile written whole,
 * and every text rendered here read by promtool check metrics (the
 * prometheus package's own parser and linter) where it is installed. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <txscale/metrics.h>
#include "test_util.h"

static char *render(struct txs_prom *p)
{
	char *t;
	size_t n;
	assert_int_equal(txs_prom_text(p, &t, &n), 0);
	assert_int_equal(strlen(t), n);
	return t;
}

static unsigned count_str(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* promtool check metrics on text: 0 clean, 1 problems (lint or parse),
 * -1 no promtool. Its findings go to stderr. */
static int promtool(const char *text)
{
	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return -1;
	char path[] = "/tmp/txs_metrics_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	size_t n = strlen(text);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	int rc = system(cmd);
	unlink(path);
	return rc == 0 ? 0 : 1;
}

static void escaping(void **st)
{
	(void)st;
	struct txs_prom *p;
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_family(p, "t_esc_total", TXS_PROM_COUNTER, "help with \\ and\nnewline \"quoted\"");
	txs_prom_u64(p, "t_esc_total", (struct txs_prom_label[]){ { "v", "a\\b\"c\nd" } }, 1, 7);
	txs_prom_u64(p, "t_esc_total", (struct txs_prom_label[]){ { "v", "bad\xff\xc3(utf8" } }, 1, 8);
	txs_prom_u64(p, "t_esc_total", (struct txs_prom_label[]){ { "v", "ok \xc3\xa9\xe2\x82\xac" } }, 1, 9);
	txs_prom_u64(p, "t_esc_total", (struct txs_prom_label[]){ { "v", "\xed\xa0\x80" } }, 1, 10); /* surrogate */
	char *t = render(p);
	assert_non_null(strstr(t, "# HELP t_esc_total help with \\\\ and\\nnewline \"quoted\"\n"));
	assert_non_null(strstr(t, "t_esc_total{v=\"a\\\\b\\\"c\\nd\"} 7\n"));
	assert_non_null(strstr(t, "t_esc_total{v=\"bad\xef\xbf\xbd\xef\xbf\xbd(utf8\"} 8\n"));
	assert_non_null(strstr(t, "t_esc_total{v=\"ok \xc3\xa9\xe2\x82\xac\"} 9\n"));
	assert_non_null(strstr(t, "t_esc_total{v=\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"} 10\n"));
	assert_int_equal(count_str(t, "# TYPE t_esc_total counter\n"), 1);
	assert_int_not_equal(promtool(t), 1);
	free(t);
	txs_prom_destroy(p);
}

static void bad_names(void **st)
{
	(void)st;
	const char *bad_metric[] = { "", "1abc", "a-b", "a b", "é" };
	for (size_t i = 0; i < TXS_ARRAY_SIZE(bad_metric); i++) {
		struct txs_prom *p;
		assert_int_equal(txs_prom_create(&p), 0);
		txs_prom_family(p, bad_metric[i], TXS_PROM_GAUGE, "x");
		assert_int_equal(txs_prom_error(p), -EINVAL);
		char *t;
		size_t n;
		assert_int_equal(txs_prom_text(p, &t, &n), -EINVAL);
		assert_null(t);
		txs_prom_destroy(p);
	}
	const char *bad_label[] = { "__reserved", "a:b", "9x", "" };
	for (size_t i = 0; i < TXS_ARRAY_SIZE(bad_label); i++) {
		struct txs_prom *p;
		assert_int_equal(txs_prom_create(&p), 0);
		txs_prom_family(p, "ok:name_1", TXS_PROM_GAUGE, "x");
		txs_prom_u64(p, "ok:name_1", (struct txs_prom_label[]){ { bad_label[i], "v" } }, 1, 1);
		assert_int_equal(txs_prom_error(p), -EINVAL);
		txs_prom_destroy(p);
	}
	/* a sample of an undeclared family, a type changed, le as a histogram's own label */
	struct txs_prom *p;
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_u64(p, "nobody_declared", NULL, 0, 1);
	assert_int_equal(txs_prom_error(p), -EINVAL);
	txs_prom_destroy(p);
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_family(p, "x_total", TXS_PROM_COUNTER, "x");
	txs_prom_family(p, "x_total", TXS_PROM_GAUGE, "x");
	assert_int_equal(txs_prom_error(p), -EINVAL);
	txs_prom_destroy(p);
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_family(p, "h_seconds", TXS_PROM_HISTOGRAM, "x");
	double le[] = { 1 };
	uint64_t in[] = { 1 };
	txs_prom_hist(p, "h_seconds", (struct txs_prom_label[]){ { "le", "1" } }, 1, le, in, 1, 1, 1);
	assert_int_equal(txs_prom_error(p), -EINVAL);
	txs_prom_destroy(p);
}

static void hist_cumulative(void **st)
{
	(void)st;
	struct txs_prom *p;
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_family(p, "t_lat_seconds", TXS_PROM_HISTOGRAM, "latency");
	const double le[] = { 0.001, 0.01, 0.1 };
	const uint64_t in[] = { 1, 2, 3 };
	txs_prom_hist(p, "t_lat_seconds", (struct txs_prom_label[]){ { "flow", "a" } }, 1, le, in, 3, 10, 2.5);
	char *t = render(p);
	assert_non_null(strstr(t, "t_lat_seconds_bucket{flow=\"a\",le=\"0.001\"} 1\n"
				  "t_lat_seconds_bucket{flow=\"a\",le=\"0.01\"} 3\n"
				  "t_lat_seconds_bucket{flow=\"a\",le=\"0.1\"} 6\n"
				  "t_lat_seconds_bucket{flow=\"a\",le=\"+Inf\"} 10\n"
				  "t_lat_seconds_sum{flow=\"a\"} 2.5\n"
				  "t_lat_seconds_count{flow=\"a\"} 10\n"));
	assert_int_not_equal(promtool(t), 1);
	free(t);
	/* more in the buckets than the count: refused, not written */
	const uint64_t over[] = { 5, 5, 5 };
	txs_prom_hist(p, "t_lat_seconds", NULL, 0, le, over, 3, 10, 1);
	assert_int_equal(txs_prom_error(p), -EINVAL);
	txs_prom_destroy(p);
}

static uint64_t sample(const char *t, const char *series);

static uint64_t parse_bucket(const char *t, const char *le)
{
	char key[96];
	snprintf(key, sizeof(key), "t_log_seconds_bucket{le=\"%s\"}", le);
	return sample(t, key);
}

/* from a log histogram: bucket{le=L} counts no value above L and misses
 * none at or below L*(1 - 1/32); cumulative, +Inf = count */
static void hist_log(void **st)
{
	(void)st;
	struct txs_hist *h = malloc(sizeof(*h));
	txs_hist_init(h);
	enum { N = 50000 };
	uint64_t *v = malloc(N * sizeof(*v)), seed = 3;
	for (unsigned i = 0; i < N; i++) {
		uint64_t r = t_rand(&seed);
		v[i] = r >> (r % 40 + 24); /* ns, 0 .. 2^40: log-spread */
		txs_hist_add(h, v[i]);
	}
	const double le[] = { 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100 };
	const char *les[] = { "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10", "100" };
	struct txs_prom *p;
	assert_int_equal(txs_prom_create(&p), 0);
	txs_prom_family(p, "t_log_seconds", TXS_PROM_HISTOGRAM, "x");
	txs_prom_hist_log(p, "t_log_seconds", NULL, 0, h, 1e-9, le, TXS_ARRAY_SIZE(le));
	char *t = render(p);
	uint64_t prev = 0;
	for (size_t k = 0; k < TXS_ARRAY_SIZE(le); k++) {
		uint64_t got = parse_bucket(t, les[k]), at_most = 0, at_least = 0;
		double lim = le[k] * 1e9;
		for (unsigned i = 0; i < N; i++) {
			at_most += (double)v[i] <= lim;
			at_least += (double)v[i] <= lim * (1 - 1.0 / 32);
		}
		if (got > at_most || got < at_least)
			fail_msg("le %s: %llu, want between %llu and %llu", les[k], (unsigned long long)got,
				 (unsigned long long)at_least, (unsigned long long)at_most);
		assert_true(got >= prev);
		prev = got;
	}
	assert_int_equal(parse_bucket(t, "+Inf"), N);
	free(t);
	txs_prom_destroy(p);
	free(h);
	free(v);
}

struct sess {
	const char *state;
	uint64_t v;
};

static void sess_collect(struct txs_prom *p, void *arg)
{
	const struct sess *s = arg;
	txs_prom_family(p, "t_sess_datagrams_total", TXS_PROM_COUNTER, "per session");
	txs_prom_family(p, "t_sess_up", TXS_PROM_GAUGE, "state");
	txs_prom_u64(p, "t_sess_datagrams_total", NULL, 0, s->v);
	txs_prom_u64(p, "t_sess_up", (struct txs_prom_label[]){ { "state", s->state } }, 1, 1);
}

/* two collectors (sessions) writing the same families: one HELP/TYPE each,
 * every sample with its session label; removed, it is gone */
static void registry_sessions(void **st)
{
	(void)st;
	struct txs_metrics *m;
	assert_int_equal(txs_metrics_create(&m), 0);
	struct sess a = { "running", 5 }, b = { "finished", 6 };
	int ia = txs_metrics_add(m, sess_collect, &a, (struct txs_prom_label[]){ { "session", "1" } }, 1);
	int ib = txs_metrics_add(m, sess_collect, &b, (struct txs_prom_label[]){ { "session", "2" } }, 1);
	assert_true(ia >= 0 && ib >= 0 && ia != ib);
	char *t;
	size_t n;
	assert_int_equal(txs_metrics_render(m, &t, &n), 0);
	assert_int_equal(count_str(t, "# TYPE t_sess_datagrams_total counter\n"), 1);
	assert_non_null(strstr(t, "# TYPE t_sess_datagrams_total counter\n"
				  "t_sess_datagrams_total{session=\"1\"} 5\n"
				  "t_sess_datagrams_total{session=\"2\"} 6\n"));
	assert_non_null(strstr(t, "t_sess_up{session=\"2\",state=\"finished\"} 1\n"));
	assert_non_null(strstr(t, "txscale_metrics_scrapes_total 1\n"));
	assert_int_not_equal(promtool(t), 1);
	free(t);
	txs_metrics_remove(m, ia);
	assert_int_equal(txs_metrics_render(m, &t, &n), 0);
	assert_null(strstr(t, "session=\"1\""));
	assert_non_null(strstr(t, "t_sess_datagrams_total{session=\"2\"} 6\n"));
	free(t);
	txs_metrics_destroy(m);
}

static void parse_addr(void **st)
{
	(void)st;
	struct txs_addr a;
	uint16_t port;
	assert_int_equal(txs_metrics_parse_addr("127.0.0.1:9101", &a, &port), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(port, 9101);
	assert_int_equal(txs_metrics_parse_addr("[::1]:0", &a, &port), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(port, 0);
	const char *bad[] = { "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "::1:80", "[127.0.0.1]:80",
			      "host:80", "1.2.3.4:8x", "[::1]80", "1.2.3.4:123456" };
	for (size_t i = 0; i < TXS_ARRAY_SIZE(bad); i++)
		if (txs_metrics_parse_addr(bad[i], &a, &port) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
}

/* a registry with one collector */
static struct txs_metrics *registry_of(txs_metrics_collect_fn fn, void *arg)
{
	struct txs_metrics *m;
	assert_int_equal(txs_metrics_create(&m), 0);
	assert_true(txs_metrics_add(m, fn, arg, NULL, 0) >= 0);
	return m;
}

static __attribute__((noinline)) uint64_t sample(const char *t, const char *series)
{
	char key[160];
	snprintf(key, sizeof(key), "\n%s ", series);
	const char *s = strstr(t, key);
	if (!s)
		fail_msg("no series %s", series);
	return strtoull(s + strlen(key), NULL, 10);
}

/* 100 flows, 10 series: flows 0..9 their own, 90 summed as "other";
 * the series add up to the result's totals */
static void rx_bounded(void **st)
{
	(void)st;
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, NULL), 0);
	const struct txs_rx_tuple tup = { .src = { .family = AF_INET, .bytes = { 198, 18, 0, 1 } },
					  .dst = { .family = AF_INET, .bytes = { 198, 18, 0, 2 } },
					  .sport = 40000, .dport = 5201 };
	uint64_t sent = 0;
	for (uint32_t f = 0; f < 100; f++)
		for (uint64_t s = 0; s < 1 + f % 7; s++) {
			if (s == 1 && f % 3 == 0)
				continue; /* a hole: lost */
			uint8_t pl[32];
			struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = f, .seq = s, .ts_ns = 1000 };
			txs_ph_write(pl, sizeof(pl), &ph);
			txs_rx_dgram(c, pl, sizeof(pl), &tup, 0, 1000 + 5000 * (s + 1));
			sent++;
		}
	struct txs_rx_result *r;
	struct txs_rx_core *cores[] = { c };
	assert_int_equal(txs_rx_result_build(&r, cores, 1, NULL), 0);
	assert_int_equal(r->n_flows, 100);
	struct txs_metrics_rx *x;
	struct txs_metrics_rx_conf conf = { .cores = cores, .n_cores = 1, .max_flows = 10 };
	assert_int_equal(txs_metrics_rx_create(&x, &conf), 0);
	struct txs_metrics *m = registry_of(txs_metrics_rx_collect, x);
	char *t;
	size_t n;
	/* live: no flow series yet, totals from the core */
	assert_int_equal(txs_metrics_render(m, &t, &n), 0);
	assert_int_equal(sample(t, "txscale_recv_datagrams_total"), sent);
	assert_int_equal(sample(t, "txscale_run_state{kind=\"recv\",state=\"running\"}"), 1);
	free(t);
	assert_int_equal(txs_metrics_rx_finish(x, r, NULL, NULL, 1.5), 0);
	assert_int_equal(txs_metrics_render(m, &t, &n), 0);
	assert_int_equal(sample(t, "txscale_run_state{kind=\"recv\",state=\"finished\"}"), 1);
	assert_int_equal(count_str(t, "\ntxscale_recv_flow_datagrams_total{"), 11);
	uint64_t sum = 0, lost = 0, other = 0, other_lost = 0;
	for (unsigned f = 0; f < 100; f++) {
		char s[96];
		snprintf(s, sizeof(s), "txscale_recv_flow_datagrams_total{flow=\"%u\"}", f);
		if (f < 10) {
			assert_int_equal(sample(t, s), r->flows[f].received);
			sum += r->flows[f].received;
			lost += r->flows[f].lost;
		} else {
			assert_null(strstr(t, s));
			other += r->flows[f].received;
			other_lost += r->flows[f].lost;
		}
	}
	assert_int_equal(sample(t, "txscale_recv_flow_datagrams_total{flow=\"other\"}"), other);
	assert_int_equal(sample(t, "txscale_recv_flow_lost{flow=\"other\"}"), other_lost);
	assert_int_equal(sum + other, r->received);
	assert_int_equal(r->received, sent);
	assert_int_equal(sample(t, "txscale_recv_datagrams_total"), r->received);
	assert_int_equal(sample(t, "txscale_recv_lost"), r->lost);
	assert_true(r->lost == lost + other_lost && r->lost > 0);
	assert_int_equal(sample(t, "txscale_recv_flows"), 100);
	assert_int_equal(sample(t, "txscale_recv_latency_seconds_count"), r->lat.count);
	assert_int_not_equal(promtool(t), 1);
	free(t);
	txs_metrics_destroy(m);
	txs_metrics_rx_destroy(x);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void send_rows(void **st)
{
	(void)st;
	struct txs_metrics_send *x;
	const int cpus[] = { 3, -1 };
	const char *links[] = { "tx0", "tx1" };
	struct txs_metrics_send_conf conf = { .n_threads = 2, .cpus = cpus, .n_links = 2, .link_names = links };
	assert_int_equal(txs_metrics_send_create(&x, &conf), 0);
	const struct txs_stat_row th[] = { { 10, 640, 1, 2, 10 }, { 20, 1280, 3, 0, 20 } };
	const struct txs_stat_row ln[] = { { 15, 960, 2, 1, 0 }, { 15, 960, 2, 1, 0 } };
	txs_metrics_send_update(x, 0.5, th, ln, TXS_METRICS_RUNNING);
	struct txs_metrics *m = registry_of(txs_metrics_send_collect, x);
	char *t;
	size_t n;
	assert_int_equal(txs_metrics_render(m, &t, &n), 0);
	assert_int_equal(sample(t, "txscale_send_datagrams_total"), 30);
	assert_int_equal(sample(t, "txscale_send_drops_total{where=\"full\"}"), 4);
	assert_int_equal(sample(t, "txscale_send_drops_total{where=\"error\"}"), 2);
	assert_int_equal(sample(t, "txscale_send_thread_datagrams_total{thread=\"0\",cpu=\"3\"}"), 10);
	assert_int_equal(sample(t, "txscale_send_link_drops_total{link=\"tx1\",where=\"error\"}"), 1);
	assert_int_not_equal(promtool(t), 1);
	free(t);
	txs_metrics_destroy(m);
	txs_metrics_send_destroy(x);
}

/* the file is the render, whole; no temporary file stays; a directory
 * that does not exist is an error, not a crash */
static void textfile(void **st)
{
	(void)st;
	char dir[] = "/tmp/txs_mfile_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/txscale.prom", dir);
	struct sess a = { "running", 42 };
	struct txs_metrics *m = registry_of(sess_collect, &a);
	assert_int_equal(txs_metrics_write_file(m, path), 0);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	assert_non_null(strstr(buf, "\nt_sess_datagrams_total 42\n"));
	assert_non_null(strstr(buf, "txscale_metrics_scrapes_total 1\n"));
	assert_int_not_equal(promtool(buf), 1);
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned files = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
			files++;
	closedir(d);
	assert_int_equal(files, 1);
	char bad[160];
	snprintf(bad, sizeof(bad), "%s/nodir/x.prom", dir);
	assert_int_equal(txs_metrics_write_file(m, bad), -ENOENT);
	txs_metrics_destroy(m);
	unlink(path);
	rmdir(dir);
}

T_MAIN(cmocka_unit_test(escaping),
       cmocka_unit_test(bad_names),
       cmocka_unit_test(hist_cumulative),
       cmocka_unit_test(hist_log),
       cmocka_unit_test(registry_sessions),
       cmocka_unit_test(parse_addr),
       cmocka_unit_test(rx_bounded),
       cmocka_unit_test(send_rows),
       cmocka_unit_test(textfile))
