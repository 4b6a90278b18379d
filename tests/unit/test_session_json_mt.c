/* SPDX-License-Identifier: MIT */
/* The JSON session boundary (<txscale/session_json.h>) as a program uses
 * it: every refusal (NULL, bad JSON, unknown keys, bad values naming the
 * option), the option table's defaults accepted back as keys, a loopback
 * send + recv pair on 127.0.0.1 with exact counts, stats read from another
 * thread while the run goes, stop from another thread, from a signal
 * handler and before start, and wait's timeout. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "test_sock.h"
#include "test_util.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A UDP port on 127.0.0.1 free a moment ago. */
static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("not JSON (%s): %s", e.text, text);
	return j;
}

static uint64_t u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		fail_msg("no integer '%s'", key);
	return (uint64_t)json_integer_value(v);
}

/* ---- refusals ----------------------------------------------------------------------------------- */

struct refusal {
	const char *kind, *config;
	int rc;
	const char *says; /* in err */
};

static void refused(void **state)
{
	(void)state;
	static const struct refusal cases[] = {
		{ NULL, "{}", -EINVAL, "no session kind" },
		{ "stamp", "{}", -EINVAL, "bad session kind 'stamp'" },
		{ "send", "{\"dest\": \"127.0.0.1\",", -EINVAL, "config: bad JSON at line 1" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"dest\": \"127.0.0.2\"}", -EINVAL, "config: bad JSON" },
		{ "send", "[1, 2]", -EINVAL, "config: expected a JSON object" },
		{ "send", "\"dest\"", -EINVAL, "config: " },
		{ "send", "{\"dest\": \"127.0.0.1\", \"rate\": \"10kpps\"}", -EINVAL, "unknown option 'rate' for a send session" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"json\": true}", -EINVAL, "unknown option 'json'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"bit_rate\": 5}", -EINVAL, "unknown option 'bit_rate'" },
		{ "recv", "{\"dest\": \"127.0.0.1\"}", -EINVAL, "unknown option 'dest' for a recv session" },
		{ "send", "{\"dest\": 5}", -EINVAL, "bad value for dest" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"bitrate\": \"x\"}", -EINVAL,
		  "bad value for --bitrate: 'x': expected " },
		{ "send", "{\"dest\": \"127.0.0.1\", \"bitrate\": -5}", -EINVAL, "bad value for --bitrate: '-5'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"port\": 0}", -EINVAL, "bad value for --port: '0': expected a port 1..65535" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"port\": 70000}", -EINVAL, "bad value for --port: '70000'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"port\": null}", -EINVAL, "bad value for --port: expected a string, a number or a boolean, not null" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"port\": [1]}", -EINVAL, "bad value for --port: expected a string, a number or a boolean, not an array" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"time\": -1}", -EINVAL, "bad value for --time: '-1'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"time\": \"soon\"}", -EINVAL, "bad value for --time: 'soon': expected seconds" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"time\": true}", -EINVAL, "bad value for --time: 'true'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"parallel\": 0}", -EINVAL, "bad value for --parallel: '0'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"parallel\": 300}", -EINVAL, "bad value for --parallel: '300'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"ttl\": 300}", -EINVAL, "bad value for --ttl: '300': expected 1..255" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"tos\": 999}", -EINVAL, "bad value for --tos: '999'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"mtu\": 10}", -EINVAL, "bad value for --mtu: '10'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"burst\": 100000}", -EINVAL, "bad value for --burst: '100000'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"packets\": 0}", -EINVAL, "bad value for --packets: '0'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"affinity\": \"9999\"}", -EINVAL, "--affinity: bad CPU list '9999'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"ipv4\": \"yes\"}", -EINVAL, "bad value for --ipv4: a flag takes true or false" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"ipv4\": 1}", -EINVAL, "bad value for --ipv4: a flag" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"gso\": \"sometimes\"}", -EINVAL, "bad value for --gso: 'sometimes'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"ramp\": \"1k:2k\"}", -EINVAL, "bad value for --ramp: '1k:2k'" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"ident\": \"nope\"}", -EINVAL, "nope" },
		{ "send", "{\"dest\": \"127.0.0.1\", \"dev\": \"nosuchdev\"}", -ENODEV, "nosuchdev" },
		{ "send", "{}", -EINVAL, "no destination" },
		{ "recv", "{\"time\": 0}", -EINVAL, "--time 0" },
		{ "recv", "{\"time\": -1}", -EINVAL, "bad value for --time: '-1'" },
		{ "recv", "{\"window\": 100}", -EINVAL, "bad value for --window: '100'" },
		{ "recv", "{\"port\": \"70000\"}", -EINVAL, "bad value for --port: '70000'" },
		{ "recv", "{\"idle\": \"NaN\"}", -EINVAL, "bad value for --idle: 'NaN'" },
		{ "recv", "{\"max-flows\": 0}", -EINVAL, "bad value for --max-flows: '0'" },
		{ "recv", "{\"rx-timestamps\": \"sometimes\"}", -EINVAL, "bad value for --rx-timestamps: 'sometimes'" },
		{ "recv", "{\"affinity\": \"0-9999\"}", -EINVAL, "--affinity" },
		{ "ndr", "{}", -EINVAL, "no destination: give DEST" },
		{ "ndr", "{\"dest\": \"nohost\"}", -EINVAL, "bad value for dest (DEST): 'nohost'" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"lo\": \"10k\"}", -EINVAL, "bad value for --lo: datagrams/s only" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"lo\": \"10kpps\", \"hi\": \"5kpps\"}", -EINVAL,
		  "bad value for --hi: '5.0kpps': must be above --lo 10.0kpps" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"precision\": 100}", -EINVAL, "bad value for --precision: '100'" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"precision\": 0}", -EINVAL,
		  "bad value for --precision: '0': expected a percentage 0 < PCT < 100" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"trial\": 0.01}", -EINVAL, "bad value for --trial: '0.01'" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"max-trials\": 2}", -EINVAL, "bad value for --max-trials: '2'" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"remote\": \"127.0.0.1\"}", -EINVAL,
		  "--remote is not an ndr session's" },
		{ "ndr", "{\"dest\": \"127.0.0.1\", \"json\": true}", -EINVAL, "unknown option 'json' for an ndr session" },
		{ "server", "{\"dest\": \"127.0.0.1\"}", -EINVAL, "unknown option 'dest' for a server session" },
		{ "server", "{\"stamp\": \"x\"}", -EINVAL, "bad value for --stamp: 'x': expected a UDP port" },
		{ "server", "{\"iperf2-port\": 5001, \"no-iperf2\": true}", -EINVAL,
		  "--iperf2-port and --no-iperf2 exclude each other" },
		{ "server", "{\"max-time\": 0, \"control-port\": 1}", -EINVAL, "bad value for --max-time: '0'" },
		{ "server", "{\"max-sessions\": 0}", -EINVAL, "bad value for --max-sessions: '0'" },
		{ "server", "{\"bind\": \"192.0.2.1\", \"control-port\": 1}", -EINVAL,
		  "bad value for --bind: '192.0.2.1': this host has no such address" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct refusal *c = &cases[i];
		struct txs_session *s = (struct txs_session *)&s; /* set to NULL on refusal */
		char err[512] = "x";
		int rc = txs_session_new(&s, c->kind, c->config, err, sizeof(err));
		if (rc != c->rc || s || !strstr(err, c->says) || strchr(err, '\n'))
			fail_msg("%s %s: rc %d (want %d), err '%s' (want '%s')", c->kind ? c->kind : "NULL", c->config,
				 rc, c->rc, err, c->says);
	}
	/* NULL for out, and every function given NULL */
	char err[256];
	assert_int_equal(txs_session_new(NULL, "send", "{}", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out is NULL"));
	assert_int_equal(txs_session_new(NULL, "send", "{}", NULL, 0), -EINVAL); /* no err buffer: fine */
	assert_int_equal(txs_session_start(NULL), -EINVAL);
	char *j = (char *)err;
	assert_int_equal(txs_session_stats_json(NULL, &j), -EINVAL);
	assert_null(j);
	const char *sum = "x";
	assert_int_equal(txs_session_wait(NULL, 0, &sum), -EINVAL);
	assert_null(sum);
	txs_session_stop(NULL);
	txs_session_free(NULL);
	assert_string_equal(txs_session_error(NULL), "");
	assert_int_equal(txs_session_options_json("stamp", &j), -EINVAL);
	assert_int_equal(txs_session_options_json(NULL, &j), -EINVAL);
	/* a config with no keys is fine as NULL too (then refused for its missing DEST) */
	struct txs_session *s;
	assert_int_equal(txs_session_new(&s, "send", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no destination"));
}

/* Every line of each table, given its own default as a JSON string (or a
 * flag true), is a key the config takes: the table, the JSON keys and the
 * option names are one list. */
static void table_roundtrip(void **state)
{
	(void)state;
	const char *const *kinds = txs_session_kinds();
	assert_string_equal(kinds[0], "send");
	assert_string_equal(kinds[1], "recv");
	assert_string_equal(kinds[2], "ndr");
	assert_string_equal(kinds[3], "server");
	assert_null(kinds[4]);
	setenv("TXSCALE_BIN", "/bin/true", 0); /* an ndr session's new looks for the program its trials run */
	for (int k = 0; kinds[k]; k++) {
		char *text;
		assert_int_equal(txs_session_options_json(kinds[k], &text), 0);
		json_t *arr = parse(text);
		txs_session_str_free(text);
		bool big = strcmp(kinds[k], "send") == 0 || strcmp(kinds[k], "recv") == 0;
		assert_true(json_is_array(arr) && json_array_size(arr) > (big ? 15 : 8));
		size_t i;
		json_t *o;
		unsigned tried = 0;
		json_array_foreach(arr, i, o) {
			const char *name = json_string_value(json_object_get(o, "name"));
			json_t *def = json_object_get(o, "default");
			bool flag = json_is_true(json_object_get(o, "flag"));
			assert_non_null(def); /* every line has the key, null when it has no default */
			if (json_is_null(def) && !flag)
				continue;
			if (strcmp(name, "dest") == 0 || strcmp(name, "connected") == 0 || strcmp(name, "no-pin") == 0 ||
			    strcmp(name, "control-port") == 0 || (strcmp(kinds[k], "ndr") == 0 && strcmp(name, "port") == 0))
				continue;
			json_t *cfg = json_object();
			if (strcmp(kinds[k], "send") == 0) {
				json_object_set_new(cfg, "dest", json_string("127.0.0.1"));
				json_object_set_new(cfg, "packets", json_integer(1));
			} else if (strcmp(kinds[k], "ndr") == 0) {
				json_object_set_new(cfg, "dest", json_string("127.0.0.1"));
				json_object_set_new(cfg, "port", json_integer(t_free_port(SOCK_DGRAM))); /* its receiver's input is opened */
			} else if (strcmp(kinds[k], "server") == 0) {
				json_object_set_new(cfg, "bind", json_string("127.0.0.1"));
				json_object_set_new(cfg, "control-port", json_integer(t_free_port(SOCK_STREAM)));
				json_object_set_new(cfg, "iperf2-port", json_integer(t_free_port(SOCK_DGRAM)));
			} else {
				json_object_set_new(cfg, "bind", json_string("127.0.0.1"));
				json_object_set_new(cfg, "port", json_integer(t_free_port(SOCK_DGRAM)));
				json_object_set_new(cfg, "time", json_real(0.1));
			}
			if (flag)
				json_object_set_new(cfg, name, json_false()); /* false: left off, accepted */
			else
				json_object_set(cfg, name, def);
			char *c = json_dumps(cfg, 0);
			struct txs_session *s;
			char err[512];
			int rc = txs_session_new(&s, kinds[k], c, err, sizeof(err));
			if (rc != 0)
				fail_msg("%s %s: %d %s", kinds[k], c, rc, err);
			txs_session_free(s);
			free(c);
			json_decref(cfg);
			tried++;
		}
		assert_true(tried > (big ? 10u : 5u));
		json_decref(arr);
	}
}

/* ---- runs ---------------------------------------------------------------------------------------- */

struct reader {
	struct txs_session *s;
	atomic_bool done;
	unsigned reads;
	uint64_t last;
	bool monotonic;
	const char *key;
};

/* Another thread: stats snapshots while the run goes, counts never going back. */
static void *read_stats(void *arg)
{
	struct reader *r = arg;
	r->monotonic = true;
	while (!atomic_load(&r->done)) {
		char *text;
		assert_int_equal(txs_session_stats_json(r->s, &text), 0);
		json_t *j = parse(text);
		txs_session_str_free(text);
		uint64_t v = u64(j, r->key);
		if (v < r->last)
			r->monotonic = false;
		r->last = v;
		r->reads++;
		json_decref(j);
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void loopback_pair(void **state)
{
	(void)state;
	unsigned port = t_free_port(SOCK_DGRAM);
	char cfg[512], err[512];
	struct txs_session *rs, *ss;
	snprintf(cfg, sizeof(cfg), "{\"bind\": \"127.0.0.1\", \"port\": %u, \"time\": 20, \"expect\": 3000, \"idle\": \"2s\"}",
		 port);
	assert_int_equal(txs_session_new(&rs, "recv", cfg, err, sizeof(err)), 0);
	snprintf(cfg, sizeof(cfg), "{\"dest\": \"127.0.0.1\", \"port\": %u, \"dev\": \"udp\", \"packets\": \"3k\", "
		 "\"bitrate\": \"30kpps\", \"length\": 100, \"gso\": \"off\"}", port);
	assert_int_equal(txs_session_new(&ss, "send", cfg, err, sizeof(err)), 0);
	char *text;
	assert_int_equal(txs_session_stats_json(ss, &text), 0);
	json_t *st = parse(text);
	assert_string_equal(json_string_value(json_object_get(st, "state")), "new");
	json_decref(st);
	txs_session_str_free(text);

	assert_int_equal(txs_session_start(rs), 0);
	struct reader rd = { .s = rs, .key = "received" };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, read_stats, &rd), 0);
	assert_int_equal(txs_session_start(ss), 0);
	assert_int_equal(txs_session_start(ss), -EALREADY);
	const char *ssum, *rsum;
	assert_int_equal(txs_session_wait(ss, 20000, &ssum), 0);
	assert_int_equal(txs_session_wait(rs, 20000, &rsum), 0);
	atomic_store(&rd.done, true);
	pthread_join(th, NULL);
	assert_true(rd.reads > 0);
	assert_true(rd.monotonic);

	json_t *sj = parse(ssum), *rj = parse(rsum);
	assert_string_equal(json_string_value(json_object_get(sj, "type")), "summary");
	assert_string_equal(json_string_value(json_object_get(sj, "kind")), "send");
	assert_int_equal(u64(sj, "packets"), 3000);
	assert_int_equal(u64(sj, "bytes"), 3000 * (100 + 42)); /* frame bytes: Ethernet, IPv4, UDP headers */
	assert_string_equal(json_string_value(json_object_get(rj, "kind")), "recv");
	assert_int_equal(u64(rj, "received"), 3000);
	assert_int_equal(u64(rj, "unique"), 3000);
	assert_int_equal(u64(rj, "lost"), 0);
	assert_int_equal(u64(rj, "duplicates"), 0);
	assert_int_equal(u64(rj, "bytes"), 3000 * 100);
	json_decref(sj);
	json_decref(rj);
	/* stats after the end: the final counts, state done */
	assert_int_equal(txs_session_stats_json(rs, &text), 0);
	st = parse(text);
	txs_session_str_free(text);
	assert_string_equal(json_string_value(json_object_get(st, "state")), "done");
	assert_int_equal(u64(st, "received"), 3000);
	assert_int_equal(u64(st, "lost"), 0);
	json_decref(st);
	assert_int_equal(txs_session_stats_json(ss, &text), 0);
	st = parse(text);
	txs_session_str_free(text);
	assert_int_equal(u64(st, "packets"), 3000);
	json_decref(st);
	/* wait again: the same summary */
	const char *again;
	assert_int_equal(txs_session_wait(ss, 0, &again), 0);
	assert_ptr_equal(again, ssum);
	txs_session_free(ss);
	txs_session_free(rs);
}

struct stopper {
	struct txs_session *s;
	int delay_ms;
};

static void *stop_later(void *arg)
{
	struct stopper *x = arg;
	struct timespec ts = { x->delay_ms / 1000, (long)(x->delay_ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	txs_session_stop(x->s);
	return NULL;
}

/* A receive session that would run 30 s: wait times out, another thread
 * stops it, wait returns its summary. */
static void stop_other_thread(void **state)
{
	(void)state;
	char cfg[256], err[512];
	snprintf(cfg, sizeof(cfg), "{\"bind\": \"127.0.0.1\", \"port\": %u, \"time\": 30}", t_free_port(SOCK_DGRAM));
	struct txs_session *s;
	assert_int_equal(txs_session_new(&s, "recv", cfg, err, sizeof(err)), 0);
	const char *sum = "x";
	assert_int_equal(txs_session_wait(s, 10, &sum), -EINVAL); /* not started */
	assert_int_equal(txs_session_start(s), 0);
	double t0 = now_s();
	assert_int_equal(txs_session_wait(s, 150, &sum), -ETIMEDOUT);
	assert_null(sum);
	assert_true(now_s() - t0 >= 0.14);
	assert_int_equal(txs_session_wait(s, 0, &sum), -ETIMEDOUT);
	struct stopper x = { s, 200 };
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, stop_later, &x), 0);
	assert_int_equal(txs_session_wait(s, -1, &sum), 0);
	double el = now_s() - t0;
	pthread_join(th, NULL);
	assert_true(el < 5);
	json_t *j = parse(sum);
	assert_int_equal(u64(j, "received"), 0);
	assert_true(json_real_value(json_object_get(j, "seconds")) < 5);
	json_decref(j);
	txs_session_free(s);
}

static struct txs_session *g_sig;

static void on_usr1(int sig)
{
	(void)sig;
	txs_session_stop(g_sig); /* async-signal-safe */
}

/* A send session on the dummy device for 30 s at 1kpps, stopped from a
 * signal handler; and one stopped before it started. */
static void stop_signal_and_before(void **state)
{
	(void)state;
	char err[512];
	struct txs_session *s;
	assert_int_equal(txs_session_new(&s, "send", "{\"dest\": \"198.18.0.2\", \"time\": 30, \"bitrate\": \"1kpps\"}",
					 err, sizeof(err)), 0);
	g_sig = s;
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigaction(SIGUSR1, &sa, &old);
	assert_int_equal(txs_session_start(s), 0);
	double t0 = now_s();
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	raise(SIGUSR1);
	const char *sum;
	assert_int_equal(txs_session_wait(s, 10000, &sum), 0);
	assert_true(now_s() - t0 < 5);
	json_t *j = parse(sum);
	uint64_t n = u64(j, "packets");
	assert_true(n >= 100 && n <= 5000);
	json_decref(j);
	sigaction(SIGUSR1, &old, NULL);
	g_sig = NULL;
	txs_session_free(s);

	assert_int_equal(txs_session_new(&s, "send", "{\"dest\": \"198.18.0.2\", \"time\": 30, \"bitrate\": \"1kpps\"}",
					 err, sizeof(err)), 0);
	txs_session_stop(s);
	t0 = now_s();
	assert_int_equal(txs_session_start(s), 0);
	int rc = txs_session_wait(s, 10000, &sum);
	assert_true(rc == 0 || rc == -EIO); /* nothing or little sent */
	assert_non_null(sum);
	assert_true(now_s() - t0 < 5);
	txs_session_free(s);

	/* freed while running: stopped and joined */
	assert_int_equal(txs_session_new(&s, "send", "{\"dest\": \"198.18.0.2\", \"time\": 30, \"bitrate\": \"1kpps\"}",
					 err, sizeof(err)), 0);
	assert_int_equal(txs_session_start(s), 0);
	t0 = now_s();
	txs_session_free(s);
	assert_true(now_s() - t0 < 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused),
		cmocka_unit_test(table_roundtrip),
		cmocka_unit_test(loopback_pair),
		cmocka_unit_test(stop_other_thread),
		cmocka_unit_test(stop_signal_and_before),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
