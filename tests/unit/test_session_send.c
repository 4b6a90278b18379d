/* SPDX-License-Identifier: MIT */
/* The send session (lib/session/send*.c, <txscale/session_send.h>) driven
 * through the library alone: exact counts on the dummy device (whole
 * datagrams and fragmented ones), config checks that refuse with the
 * words the CLI prints, the stop hook ending a run early, the interval and
 * poll callbacks, the summary's JSON. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/session_send.h>
#include "test_util.h"

static void conf_dummy(struct txs_send_conf *c)
{
	txs_send_conf_init(c);
	c->dest = "198.18.0.2";
	c->seed = 7;
	c->interval = 0;
}

/* A session opened on c, which must succeed (else the error fails the test). */
static struct txs_send *open_ok(const struct txs_send_conf *c)
{
	char err[512] = "";
	struct txs_send *s;
	int rc = txs_send_open(&s, c, err, sizeof(err));
	if (rc)
		fail_msg("txs_send_open: %d (%s)", rc, err);
	return s;
}

/* The summary line (JSON) of a result, parsed. */
static json_t *summary_json(const struct txs_send_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	txs_send_summary(f, true, r);
	fclose(f);
	json_error_t je;
	json_t *o = json_loads(buf, 0, &je);
	free(buf);
	assert_non_null(o);
	return o;
}

static uint64_t jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	assert_true(json_is_integer(v));
	return (uint64_t)json_integer_value(v);
}

static void exact_counts(void **state)
{
	(void)state;
	struct txs_send_conf c;
	conf_dummy(&c);
	c.count = 10000;
	c.threads = 2;
	c.links = 2;
	struct txs_send *s = open_ok(&c);
	const struct txs_send_info *in = txs_send_info(s);
	assert_int_equal(in->n_threads, 2);
	assert_int_equal(in->n_links, 2);
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, NULL, &r), 0);
	assert_int_equal(r->rc, 0);
	assert_false(r->counts_bad);
	assert_false(r->failed);
	assert_int_equal(r->sum.packets, 10000);
	assert_int_equal(r->threads[0].packets + r->threads[1].packets, 10000);
	assert_int_equal(r->datagrams[0].packets + r->datagrams[1].packets, 10000);
	assert_int_equal(r->links[0].packets + r->links[1].packets, 10000);
	assert_int_equal(r->sum.drops + r->sum.errors, 0);
	assert_int_equal(r->sum.bytes, 10000ull * 60); /* 16-byte payload: a minimum frame, no FCS */
	json_t *o = summary_json(r);
	assert_string_equal(json_string_value(json_object_get(o, "type")), "summary");
	assert_string_equal(json_string_value(json_object_get(o, "device")), "dummy:links=2");
	assert_int_equal(jint(o, "packets"), 10000);
	assert_int_equal(jint(o, "datagrams"), 10000);
	assert_int_equal(jint(o, "payload_len"), 16);
	assert_int_equal(jint(o, "flows_per_thread"), 1);
	assert_string_equal(json_string_value(json_object_get(o, "bond")),
			    "balance-rr,packets_per_slave=1,scope=staggered");
	assert_int_equal(jint(o, "bond_nolink"), 0);
	json_decref(o);
	txs_send_close(s);
}

/* A 3000-byte datagram at MTU 1500: three IPv4 fragments each, the rows in
 * datagrams, the frames the device's. */
static void exact_counts_fragments(void **state)
{
	(void)state;
	struct txs_send_conf c;
	conf_dummy(&c);
	c.count = 300;
	c.length = "3000";
	struct txs_send *s = open_ok(&c);
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, NULL, &r), 0);
	assert_false(r->counts_bad);
	assert_int_equal(r->sum.packets, 300);
	assert_int_equal(r->sum.frames, 900);
	assert_int_equal(r->links[0].packets, 900);
	json_t *o = summary_json(r);
	assert_int_equal(jint(o, "frames"), 900);
	assert_int_equal(jint(o, "payload_len"), 3000);
	json_decref(o);
	txs_send_close(s);
}

static void refuse(const struct txs_send_conf *c, const char *want)
{
	char err[512] = "";
	assert_int_equal(txs_send_conf_check(c, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
	struct txs_send *s = (struct txs_send *)1;
	err[0] = 0;
	assert_int_equal(txs_send_open(&s, c, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_string_equal(err, want);
}

static void checks_refuse(void **state)
{
	(void)state;
	struct txs_send_conf c;
	conf_dummy(&c);
	c.pace = "bogus";
	refuse(&c, "bad value for --pace: 'bogus': valid are const, poisson");
	conf_dummy(&c);
	c.v4 = c.v6 = true;
	refuse(&c, "--ipv4 and --ipv6 exclude each other");
	conf_dummy(&c);
	c.dest = NULL;
	refuse(&c, "no destination: give dest (DEST) or --dst ADDRS");
	conf_dummy(&c);
	c.ident = "nope";
	char err[512];
	assert_int_equal(txs_send_conf_check(&c, NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad value for --ident: 'nope': valid are "));
	assert_non_null(strstr(err, " lease,"));
	conf_dummy(&c);
	c.vlan = "4095";
	refuse(&c, "bad value for --vlan: '4095': expected ID[,PRIO] with ID 0..4094 and PRIO 0..7");
	conf_dummy(&c);
	c.links = 2;
	c.dev = "pcap:/dev/null";
	refuse(&c, "--links 2 applies to the dummy device; --dev pcap:/dev/null takes its links from the device");
	/* needs the device's frame size: refused at open, not by the check */
	conf_dummy(&c);
	c.rate.value = 0.0001;
	assert_int_equal(txs_send_conf_check(&c, NULL, err, sizeof(err)), 0);
	struct txs_send *s;
	assert_int_equal(txs_send_open(&s, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad value for --bitrate: '0.0001pps': below the lowest rate, 0.001 datagrams/s per "
				 "thread (1 thread)");
	/* a good one resolves */
	conf_dummy(&c);
	c.dest = NULL;
	c.dst = "198.18.0.9-198.18.0.12";
	c.length = "16,100";
	struct txs_send_plan pl;
	assert_int_equal(txs_send_conf_check(&c, &pl, err, sizeof(err)), 0);
	assert_string_equal(pl.dest, "198.18.0.9");
	assert_int_equal(pl.length, 100);
	assert_true(pl.shaped);
	assert_true(pl.time == 10);
}

struct hooks_seen {
	unsigned polls, intervals, stop_calls;
	unsigned stop_after; /* stop hook says true from this poll on (0 = never) */
	uint64_t interval_packets;
	double last_t1;
	bool ordered;
};

static bool stop_hook(void *arg)
{
	struct hooks_seen *h = arg;
	h->stop_calls++;
	return h->stop_after && h->stop_calls >= h->stop_after;
}

static void poll_hook(void *arg, const struct txs_send_tick *t)
{
	struct hooks_seen *h = arg;
	h->polls++;
	assert_non_null(t->threads);
	assert_non_null(t->links);
}

static void interval_hook(void *arg, const struct txs_send_interval *iv)
{
	struct hooks_seen *h = arg;
	h->intervals++;
	if (iv->start != h->last_t1 || !(iv->end >= iv->start))
		h->ordered = false;
	if (iv->n_threads != 1 || iv->n_links != 1)
		h->ordered = false; /* the rows it hands over: one thread, the dummy device's one link */
	h->last_t1 = iv->end;
	h->interval_packets += iv->threads[0].packets;
}

static void stop_hook_ends_early(void **state)
{
	(void)state;
	struct txs_send_conf c;
	conf_dummy(&c);
	c.time = 60;
	c.rate.value = 20000;
	struct txs_send *s = open_ok(&c);
	struct hooks_seen seen = { .stop_after = 5, .ordered = true };
	struct txs_send_hooks h = { .stop = stop_hook, .user = &seen };
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, &h, &r), 0);
	assert_true(seen.stop_calls >= 5);
	assert_true(r->seconds < 30);
	assert_false(r->counts_bad);
	assert_int_equal(r->threads[0].packets, r->links[0].packets);
	txs_send_close(s);
}

static void interval_callback(void **state)
{
	(void)state;
	struct txs_send_conf c;
	conf_dummy(&c);
	c.time = 0.35;
	c.rate.value = 20000;
	c.interval = 0.1;
	struct txs_send *s = open_ok(&c);
	struct hooks_seen seen = { .ordered = true };
	struct txs_send_hooks h = { .poll = poll_hook, .interval = interval_hook, .user = &seen };
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, &h, &r), 0);
	assert_true(seen.intervals >= 3);
	assert_true(seen.polls >= 3);
	assert_true(seen.ordered);
	/* intervals add up to the total, the last partial one included */
	assert_true(r->sum.packets > 0);
	assert_int_equal(seen.interval_packets, r->sum.packets);
	assert_true(seen.last_t1 == r->seconds);
	txs_send_close(s);
}

/* -b in iperf's sense: bits/s of UDP payload (at the sizes' mean), each
 * thread's when per_thread; datagrams/s as given otherwise */
static double plan_pps(const char *length, double value, bool bits, bool per_thread, unsigned threads)
{
	struct txs_send_conf c;
	conf_dummy(&c);
	c.length = length;
	c.rate = (struct txs_send_rate){ value, bits, per_thread };
	c.threads = threads;
	struct txs_send_plan pl;
	char err[512];
	assert_int_equal(txs_send_conf_check(&c, &pl, err, sizeof(err)), 0);
	return pl.rate_pps;
}

static void rate_units(void **st)
{
	(void)st;
	assert_true(plan_pps("16", 10e6, true, true, 1) == 78125);       /* iperf3 -l 16 -b 10M */
	assert_true(plan_pps("16", 10e6, true, true, 4) == 4 * 78125);   /* -P 4: per stream */
	assert_true(plan_pps("16", 10e6, true, false, 4) == 78125);      /* the run's */
	assert_true(plan_pps("100,300", 1.6e6, true, true, 1) == 1000);  /* the mean payload, 200 bytes */
	assert_true(plan_pps("100,300:3,1", 1.2e6, true, true, 1) == 1000); /* weighted: 150 bytes */
	assert_true(plan_pps("1400", 5000, false, true, 2) == 10000);    /* 5kpps each */
	assert_true(plan_pps("16", 0, true, true, 2) == 0);              /* unlimited */
	/* a bit rate needs a payload to count */
	struct txs_send_conf c;
	conf_dummy(&c);
	c.length = "0";
	c.rate = (struct txs_send_rate){ 1e6, true, true };
	refuse(&c, "--bitrate in bits/s counts UDP payload, and --length 0 has none: give datagrams/s (e.g. 10kpps)");
	/* and a run at the rate sends the datagrams it says */
	conf_dummy(&c);
	c.length = "100";
	c.rate = (struct txs_send_rate){ 8e6, true, true }; /* 10k datagrams/s */
	c.threads = 2;
	c.time = 0.2;
	struct txs_send *s = open_ok(&c);
	const struct txs_send_result *r;
	assert_int_equal(txs_send_run(s, NULL, &r), 0);
	/* 2 x 10k/s x 0.2 s: every datagram due before the deadline */
	assert_true(r->sum.packets >= 3998 && r->sum.packets <= 4002);
	json_t *o = summary_json(r), *rate = json_object_get(o, "rate");
	assert_true(json_number_value(json_object_get(rate, "datagrams_per_s")) == 20000);
	assert_true(json_number_value(json_object_get(rate, "payload_bits_per_s")) == 16e6);
	json_decref(o);
	txs_send_close(s);
}

T_MAIN(cmocka_unit_test(exact_counts),
       cmocka_unit_test(rate_units),
       cmocka_unit_test(exact_counts_fragments),
       cmocka_unit_test(checks_refuse),
       cmocka_unit_test(stop_hook_ends_early),
       cmocka_unit_test(interval_callback))
