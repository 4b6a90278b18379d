/* SPDX-License-Identifier: MIT */
/* The JSON sessions whose work runs in other processes: a "server"
 * session (its sessions are child processes; their log lines and test
 * summaries come back over the session's socket pair) served a txscale
 * client (this build's txscale program) with exact counts read from the
 * session's summary, and stats while it runs; an "ndr" session ran its
 * search with this build's txscale as the trials' program (TXSCALE_BIN)
 * and ended with txscale ndr -J's result line. Not under ThreadSanitizer
 * (its runtime does not follow a fork of a threaded process); under ASan
 * in CI. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "test_sock.h"
#include "test_util.h"

static const char *txscale_bin(char *buf, size_t len)
{
	const char *b = getenv("TXS_BUILDDIR");
	snprintf(buf, len, "%s/txscale", b ? b : ".");
	return access(buf, X_OK) == 0 ? buf : NULL;
}

static json_t *stats(struct txs_session *s)
{
	char *t;
	assert_int_equal(txs_session_stats_json(s, &t), 0);
	json_t *j = json_loads(t, 0, NULL);
	if (!j)
		fail_msg("stats not JSON: %s", t);
	txs_session_str_free(t);
	return j;
}

static uint64_t u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		fail_msg("no integer '%s'", key);
	return (uint64_t)json_integer_value(v);
}

static void server_session(void **state)
{
	(void)state;
	char bin[512];
	if (!txscale_bin(bin, sizeof(bin)))
		skip();
	unsigned ctl = t_free_port(SOCK_STREAM);
	char cfg[256], err[512];
	snprintf(cfg, sizeof(cfg), "{\"bind\": \"127.0.0.1\", \"control-port\": %u, \"no-iperf2\": true, \"max-time\": 30}",
		 ctl);
	struct txs_session *s;
	if (txs_session_new(&s, "server", cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	json_t *st = stats(s);
	assert_string_equal(json_string_value(json_object_get(st, "state")), "new");
	assert_int_equal(u64(st, "port"), ctl);
	json_decref(st);
	assert_int_equal(txs_session_start(s), 0);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s send -c 127.0.0.1 --control-port %u -n 1500 -b 10kpps -i 0 >/dev/null 2>&1", bin,
		 ctl);
	assert_int_equal(system(cmd), 0);
	/* the session's process reports back: its summaries, then its end */
	uint64_t tests = 0, active = 1;
	for (int i = 0; i < 400 && (tests < 1 || active); i++) {
		st = stats(s);
		tests = u64(st, "tests");
		active = u64(st, "active");
		json_decref(st);
		usleep(25000);
	}
	assert_true(tests >= 1);
	assert_int_equal(active, 0);
	assert_int_equal(txs_session_wait(s, 0, NULL), -ETIMEDOUT); /* a server runs until stopped */
	txs_session_stop(s);
	const char *sum;
	assert_int_equal(txs_session_wait(s, 20000, &sum), 0);
	json_t *j = json_loads(sum, 0, NULL);
	if (!j)
		fail_msg("summary not JSON: %s", sum);
	assert_string_equal(json_string_value(json_object_get(j, "kind")), "server");
	assert_int_equal(u64(j, "sessions"), 1);
	json_t *arr = json_object_get(j, "summaries"), *t;
	size_t i;
	bool found = false;
	json_array_foreach(arr, i, t) {
		if (strcmp(json_string_value(json_object_get(t, "role")), "receiver") != 0)
			continue;
		json_t *r = json_object_get(t, "summary");
		assert_int_equal(u64(r, "received"), 1500);
		assert_int_equal(u64(r, "lost"), 0);
		assert_string_equal(json_string_value(json_object_get(t, "protocol")), "txscale");
		found = true;
	}
	assert_true(found);
	json_decref(j);
	const char *log = txs_session_error(s);
	if (!strstr(log, "listening on 127.0.0.1") || !strstr(log, "session 1 (127.0.0.1)"))
		fail_msg("the server's log: %s", log);
	txs_session_free(s);
}

static void ndr_session(void **state)
{
	(void)state;
	char bin[512];
	if (!txscale_bin(bin, sizeof(bin)))
		skip();
	setenv("TXSCALE_BIN", bin, 1);
	char cfg[256], err[512];
	snprintf(cfg, sizeof(cfg), "{\"dest\": \"127.0.0.1\", \"port\": %u, \"lo\": \"1kpps\", \"hi\": \"10kpps\", "
		 "\"trial\": 0.3, \"max-trials\": 4}", t_free_port(SOCK_DGRAM));
	struct txs_session *s;
	if (txs_session_new(&s, "ndr", cfg, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(txs_session_start(s), 0);
	const char *sum;
	int rc = txs_session_wait(s, 60000, &sum);
	if (rc != 0)
		fail_msg("ndr: %d %s", rc, txs_session_error(s));
	json_t *j = json_loads(sum, 0, NULL);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "type")), "ndr");
	assert_string_equal(json_string_value(json_object_get(j, "outcome")), "hi-passes");
	assert_true(json_real_value(json_object_get(j, "rate_pps")) == 10000 ||
		    json_integer_value(json_object_get(j, "rate_pps")) == 10000);
	json_decref(j);
	json_t *st = stats(s);
	assert_string_equal(json_string_value(json_object_get(st, "state")), "done");
	assert_true(u64(st, "trials") >= 1);
	assert_true(json_is_object(json_object_get(st, "last_trial")));
	json_decref(st);
	txs_session_free(s);
	/* no program for the trials: refused at new, with the way out */
	setenv("TXSCALE_BIN", "/nonexistent/txscale", 1);
	assert_int_equal(txs_session_new(&s, "ndr", "{\"dest\": \"127.0.0.1\"}", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "TXSCALE_BIN '/nonexistent/txscale'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(server_session),
		cmocka_unit_test(ndr_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
