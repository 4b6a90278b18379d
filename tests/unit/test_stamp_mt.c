/* SPDX-License-Identifier: MIT */
/* lib/stamp's threads (ThreadSanitizer's label "tsan"): a reflector with
 * two SO_REUSEPORT workers on loopback, three sender sessions of
 * txs_stamp_send_run at once, and a reader of the reflector's counters
 * all the while: every packet answered, the counters add up, and the
 * sessions' SSIDs are three sessions at the reflector. */
#include <pthread.h>
#include <string.h>
#include <txscale/stamp.h>
#include "test_util.h"

static struct txs_stamp_refl *g_r;
static int g_done;

static void *reader(void *arg)
{
	(void)arg;
	uint64_t last = 0;
	while (!__atomic_load_n(&g_done, __ATOMIC_ACQUIRE)) {
		struct txs_stamp_refl_stats s;
		txs_stamp_refl_stats(g_r, &s);
		assert_true(s.reflected >= last); /* counters never go back */
		last = s.reflected;
	}
	return NULL;
}

static void reflector_and_senders(void **st)
{
	(void)st;
	struct txs_stamp_refl_conf c = { .bind = "127.0.0.1", .threads = 2 };
	char err[256] = "";
	int rc = txs_stamp_refl_open(&c, &g_r, err, sizeof(err));
	if (rc) {
		print_message("skipped: %s\n", err);
		skip();
	}
	assert_int_equal(txs_stamp_refl_start(g_r), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, reader, NULL), 0);
	struct txs_stamp_send_conf sc = { .host = "127.0.0.1", .port = txs_stamp_refl_port(g_r), .rate = 20000,
					  .count = 2000, .sessions = 3, .tos = -1, .wait_s = 1,
					  .tlvs = TXS_STAMP_TLVS_DIRECT | TXS_STAMP_TLVS_COS };
	struct txs_stamp_result res;
	rc = txs_stamp_send_run(&sc, NULL, &res, err, sizeof(err));
	assert_int_equal(rc, 0);
	__atomic_store_n(&g_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	txs_stamp_refl_stop(g_r);
	txs_stamp_refl_join(g_r);
	struct txs_stamp_refl_stats s;
	txs_stamp_refl_stats(g_r, &s);
	txs_stamp_refl_close(g_r);
	assert_int_equal(res.sent, 6000);
	assert_true(res.stateful);
	assert_int_equal(res.received + res.lost, 6000);
	assert_int_equal(s.rx, s.reflected + s.runts + s.bad_mac);
	assert_int_equal(s.sessions, 3);
	assert_int_equal(res.reflected, s.reflected);
	assert_int_equal(res.lost_forward, res.sent - s.reflected);
}

T_MAIN(cmocka_unit_test(reflector_and_senders))
