/* SPDX-License-Identifier: MIT */
/* lib/netdev: registry, open errors, the dummy device's counting and verify
 * mode, and properties every registered backend that can run in-process
 * must hold. */
#include <errno.h>
#include <string.h>
#include <txscale/netdev.h>
#include <txscale/pkt.h>
#include "test_frame.h"
#include "test_util.h"

static void build_frame(struct txs_tmpl *t, bool v6, uint32_t plen)
{
	struct txs_flow_spec sp = t_flow_spec(v6, 1, 2, plen);
	assert_int_equal(txs_tmpl_build(t, &sp), 0);
}

static void registry_and_open_errors(void **st)
{
	(void)st;
	unsigned n;
	const struct txs_netdev_ops *const *all = txs_netdev_backends(&n);
	assert_true(n >= 1);
	for (unsigned i = 0; i < n; i++) {
		assert_non_null(all[i]->name);
		assert_non_null(all[i]->usage);
		assert_ptr_equal(txs_netdev_find(all[i]->name), all[i]);
	}
	struct txs_netdev *d;
	char err[200];
	assert_int_equal(txs_netdev_open(&d, "nosuch", NULL, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "nosuch"));
	assert_int_equal(txs_netdev_open(&d, "dummy:links=0", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "links=0"));
	assert_int_equal(txs_netdev_open(&d, "dummy:links=17", NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(txs_netdev_open(&d, "dummy:bogus", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bogus"));
	assert_int_equal(txs_netdev_open(&d, ":x", NULL, err, sizeof(err)), -EINVAL);
	assert_null(d);
	/* a key given twice is refused, not "the last one wins" */
	assert_int_equal(txs_netdev_open(&d, "dummy:links=2,links=3", NULL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "'links' given twice"));
	assert_int_equal(txs_netdev_open(&d, "dummy:verify,verify", NULL, err, sizeof(err)), -EINVAL);
	/* a spec longer than the device keeps: a message that says so */
	char longspec[400] = "dummy:";
	memset(longspec + 6, 'x', 300);
	assert_int_equal(txs_netdev_open(&d, longspec, NULL, err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, "306 characters long, at most 255"));
}

static void dummy_counts_per_link(void **st)
{
	(void)st;
	struct txs_netdev *d;
	struct txs_netdev_conf c = { .max_queues = 2, .frame_size = 128 };
	assert_int_equal(txs_netdev_open(&d, "dummy:links=3", &c, NULL, 0), 0);
	assert_int_equal(d->n_links, 3);
	struct txs_txq *q0, *q1, *dup;
	assert_int_equal(txs_txq_open(d, 0, &q0), 0);
	assert_int_equal(txs_txq_open(d, 1, &q1), 0);
	assert_int_equal(txs_txq_open(d, 1, &dup), -EINVAL);
	assert_int_equal(txs_txq_open(d, 2, &dup), -EINVAL);
	struct txs_pktbuf b[300];
	unsigned n = txs_txq_alloc(q0, b, 300);
	assert_true(n > 0 && n <= 300);
	for (unsigned i = 0; i < n; i++) {
		assert_true(b[i].cap >= 128);
		b[i].len = 60 + i % 3;
		b[i].link = (uint16_t)(i % 3);
		b[i].segs = (uint16_t)(1 + (i % 2));
	}
	assert_int_equal(txs_txq_send(q0, b, n), n);
	uint64_t exp_pk[3] = { 0 }, exp_by[3] = { 0 };
	for (unsigned i = 0; i < n; i++) {
		exp_pk[i % 3] += 1 + (i % 2);
		exp_by[i % 3] += 60 + i % 3;
	}
	n = txs_txq_alloc(q1, b, 10);
	for (unsigned i = 0; i < n; i++) {
		b[i].len = 100;
		b[i].link = 2;
		b[i].segs = 1;
	}
	assert_int_equal(txs_txq_send(q1, b, n), n);
	exp_pk[2] += n;
	exp_by[2] += 100ull * n;
	txs_txq_close(q1); /* closed queues keep their counters */
	uint64_t all_pk = 0, all_by = 0;
	for (unsigned l = 0; l < 3; l++) {
		struct txs_link_counters lc;
		txs_netdev_link_stats(d, l, &lc);
		assert_int_equal(lc.packets, exp_pk[l]);
		assert_int_equal(lc.bytes, exp_by[l]);
		assert_int_equal(lc.drop_full + lc.drop_err + lc.verify_err, 0);
		all_pk += lc.packets;
		all_by += lc.bytes;
	}
	/* per queue: q1 sent n frames of 100 bytes on link 2, q0 the rest;
	 * the queues' sums are the links' sums (one count per fact) */
	struct txs_link_counters c0, c1, c2;
	txs_netdev_queue_stats(d, 0, &c0);
	txs_netdev_queue_stats(d, 1, &c1);
	txs_netdev_queue_stats(d, 2, &c2); /* no such queue: zeros */
	assert_int_equal(c1.packets, n);
	assert_int_equal(c1.bytes, 100ull * n);
	assert_int_equal(c0.packets + c1.packets, all_pk);
	assert_int_equal(c0.bytes + c1.bytes, all_by);
	assert_int_equal(c2.packets + c2.bytes, 0);
	txs_netdev_close(d);
}

static void dummy_verify_catches_bad_frames(void **st)
{
	(void)st;
	struct txs_netdev *d;
	struct txs_netdev_conf c = { .max_queues = 1, .frame_size = 256 };
	assert_int_equal(txs_netdev_open(&d, "dummy:verify,links=2", &c, NULL, 0), 0);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(d, 0, &q), 0);
	struct txs_tmpl t4, t6;
	build_frame(&t4, false, 30);
	build_frame(&t6, true, 30);
	struct txs_pktbuf b[64];
	unsigned n = txs_txq_alloc(q, b, 64);
	assert_int_equal(n, 64);
	for (unsigned i = 0; i < n; i++) {
		b[i].len = txs_tmpl_patch(i & 1 ? &t6 : &t4, b[i].data, (uint16_t)i, i, i);
		b[i].link = (uint16_t)(i & 1);
		if (i % 5 == 0)
			b[i].data[b[i].len - 1] ^= 0xff; /* corrupt the last payload byte */
	}
	txs_txq_send(q, b, n);
	struct txs_link_counters l0, l1;
	txs_netdev_link_stats(d, 0, &l0);
	txs_netdev_link_stats(d, 1, &l1);
	assert_int_equal(l0.packets + l1.packets, 64);
	/* 72- and 92-byte frames have no runt padding: each corruption hits the
	 * UDP payload, and i % 5 == 0 selects 13 of 64 */
	assert_int_equal(l0.verify_err + l1.verify_err, 13);
	txs_tmpl_free(&t4);
	txs_tmpl_free(&t6);
	txs_netdev_close(d);
}

T_MAIN(cmocka_unit_test(registry_and_open_errors),
       cmocka_unit_test(dummy_counts_per_link),
       cmocka_unit_test(dummy_verify_catches_bad_frames))
