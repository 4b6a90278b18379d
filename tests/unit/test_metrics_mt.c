/* SPDX-License-Identifier: MIT */
/* lib/metrics with lib/rx live: one thread owns a core (feeds datagrams of
 * 8 flows, publishes between batches as recv's threads do), another scrapes
 * all along. Every scraped count is monotonic and never above what was fed;
 * the per-flow series add up to at most the total, and the live copies
 * move on (newer ones seen); at the end the result's
 * numbers are scraped exactly. Runs under ThreadSanitizer (label tsan): no
 * field written per packet is read by the scraping thread. */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <txscale/metrics.h>
#include "test_util.h"

#define N 2000000u
#define FLOWS 8u

struct ctx {
	struct txs_rx_core *c;
	struct txs_rx_snap *snap;
	struct txs_metrics *m;
	int fed_all, scraper_done;
	uint64_t fed; /* atomic */
	unsigned scrapes, live, moved; /* scrapes; of them, while datagrams were still fed */
	char err[200];
};

static void *owner(void *arg)
{
	struct ctx *x = arg;
	const struct txs_rx_tuple tup = { .src = { .family = AF_INET, .bytes = { 198, 18, 0, 1 } },
					  .dst = { .family = AF_INET, .bytes = { 198, 18, 0, 2 } },
					  .sport = 40000, .dport = 5201 };
	for (unsigned i = 0; i < N; i++) {
		uint8_t pl[32];
		struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = i % FLOWS, .seq = i / FLOWS, .ts_ns = 1000 };
		txs_ph_write(pl, sizeof(pl), &ph);
		txs_rx_dgram(x->c, pl, sizeof(pl), &tup, 0, 2000 + i);
		__atomic_store_n(&x->fed, i + 1, __ATOMIC_RELEASE);
		if (i % 64 == 63)
			txs_rx_core_publish(x->c, x->snap);
		if (i % 20000 == 19999) /* spread over > 100 ms: a scrape takes a copy younger than 50 ms as it is */
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	__atomic_store_n(&x->fed_all, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&x->scraper_done, __ATOMIC_ACQUIRE)) /* a poll loop going idle */
		txs_rx_core_publish(x->c, x->snap);
	return NULL;
}

static uint64_t get(const char *t, const char *series, bool *found)
{
	char key[160];
	snprintf(key, sizeof(key), "\n%s ", series);
	const char *s = strstr(t, key);
	*found = s != NULL;
	return s ? strtoull(s + strlen(key), NULL, 10) : 0;
}

static void *scraper(void *arg)
{
	struct ctx *x = arg;
	uint64_t last_total = 0, last_f0 = 0, last_lat = 0;
	while (!__atomic_load_n(&x->fed_all, __ATOMIC_ACQUIRE) || x->scrapes < 3) {
		char *t;
		size_t n;
		if (txs_metrics_render(x->m, &t, &n) != 0) {
			snprintf(x->err, sizeof(x->err), "render failed");
			break;
		}
		uint64_t fed = __atomic_load_n(&x->fed, __ATOMIC_ACQUIRE);
		bool ok1, ok2, ok3;
		uint64_t total = get(t, "txscale_recv_datagrams_total", &ok1);
		uint64_t f0 = get(t, "txscale_recv_flow_datagrams_total{flow=\"0\"}", &ok2);
		uint64_t lat = get(t, "txscale_recv_latency_seconds_count", &ok3);
		uint64_t fsum = 0;
		for (unsigned f = 0; f < FLOWS; f++) {
			char s[96];
			bool ok;
			snprintf(s, sizeof(s), "txscale_recv_flow_datagrams_total{flow=\"%u\"}", f);
			fsum += get(t, s, &ok);
		}
		free(t);
		if (!ok1 || !ok3 || total > fed + 1 || total < last_total || f0 < last_f0 || lat < last_lat ||
		    fsum > fed || (ok2 && f0 > total + FLOWS * 64)) {
			snprintf(x->err, sizeof(x->err), "scrape %u: total %llu (was %llu), flow 0 %llu (was %llu), "
				 "flows %llu, latency count %llu, fed %llu", x->scrapes, (unsigned long long)total,
				 (unsigned long long)last_total, (unsigned long long)f0, (unsigned long long)last_f0,
				 (unsigned long long)fsum, (unsigned long long)lat, (unsigned long long)fed);
			break;
		}
		last_total = total;
		last_f0 = f0;
		x->moved += lat > last_lat;
		last_lat = lat;
		x->scrapes++;
		x->live += fed < N;
	}
	__atomic_store_n(&x->scraper_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void live_scrapes(void **st)
{
	(void)st;
	struct ctx x = { 0 };
	assert_int_equal(txs_rx_core_create(&x.c, NULL), 0);
	assert_int_equal(txs_rx_snap_create(&x.snap, 0), 0);
	struct txs_rx_core *cores[] = { x.c };
	struct txs_rx_snap *snaps[] = { x.snap };
	struct txs_metrics_rx *mx;
	struct txs_metrics_rx_conf conf = { .cores = cores, .n_cores = 1, .snaps = snaps, .max_flows = 4 };
	assert_int_equal(txs_metrics_rx_create(&mx, &conf), 0);
	assert_int_equal(txs_metrics_create(&x.m), 0);
	assert_true(txs_metrics_add(x.m, txs_metrics_rx_collect, mx, NULL, 0) >= 0);
	pthread_t a, b;
	pthread_create(&a, NULL, owner, &x);
	pthread_create(&b, NULL, scraper, &x);
	pthread_join(b, NULL);
	pthread_join(a, NULL);
	if (x.err[0])
		fail_msg("%s", x.err);
	if (x.live < 3 || x.moved < 2)
		fail_msg("%u scrapes while the core was fed, %u saw newer copies", x.live, x.moved);
	printf("%u scrapes, %u while fed, %u saw newer copies\n", x.scrapes, x.live, x.moved);
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, cores, 1, NULL), 0);
	assert_int_equal(txs_metrics_rx_finish(mx, r, NULL, NULL, 1.0), 0);
	char *t;
	size_t n;
	assert_int_equal(txs_metrics_render(x.m, &t, &n), 0);
	bool ok;
	assert_int_equal(get(t, "txscale_recv_datagrams_total", &ok), N);
	uint64_t sum = 0;
	for (unsigned f = 0; f < 4; f++) {
		char s[96];
		snprintf(s, sizeof(s), "txscale_recv_flow_datagrams_total{flow=\"%u\"}", f);
		sum += get(t, s, &ok);
		assert_true(ok);
	}
	assert_int_equal(get(t, "txscale_recv_flow_datagrams_total{flow=\"other\"}", &ok), N - sum);
	assert_int_equal(get(t, "txscale_recv_latency_seconds_count", &ok), N);
	free(t);
	txs_metrics_destroy(x.m);
	txs_metrics_rx_destroy(mx);
	txs_rx_result_free(r);
	txs_rx_snap_destroy(x.snap);
	txs_rx_core_destroy(x.c);
}

T_MAIN(cmocka_unit_test(live_scrapes))
