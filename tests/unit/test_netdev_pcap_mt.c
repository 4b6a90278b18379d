/* SPDX-License-Identifier: MIT */
/* lib/netdev pcap: the file read back with libpcap holds exactly the frames
 * the generator built (byte for byte, nanosecond timestamps, Ethernet link
 * type); several queues lose nothing; GSO buffers become valid segments;
 * refusals are counted; bad paths are refused at open. */
#if __has_include(<pcap/pcap.h>)
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "test_engine.h"
#define T_TMPDIR_NAME "txs_pcap"
#include "test_tmpdir.h"
#include "test_util.h"

/* Send b[0..n): the first sent go out, the rest are refused and released;
 * then link 0's counts into *lc. */
static void send_some(struct txs_netdev *dev, struct txs_txq *q, struct txs_pktbuf *b, unsigned n, unsigned sent,
		      struct txs_link_counters *lc)
{
	assert_int_equal(txs_txq_send(q, b, n), sent);
	txs_txq_release(q, b + sent, n - sent);
	txs_netdev_link_stats(dev, 0, lc);
}

struct frame {
	uint8_t *data;
	uint32_t len;
};

static pcap_t *open_read(const char *file)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!p)
		fail_msg("cannot read %s: %s", file, eb);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	assert_int_equal(pcap_get_tstamp_precision(p), PCAP_TSTAMP_PRECISION_NANO);
	return p;
}

static void spec_for(struct txs_flow_spec *sp, int family, uint32_t payload)
{
	memset(sp, 0, sizeof(*sp));
	txs_addr_parse(&sp->src, family == AF_INET ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&sp->dst, family == AF_INET ? "198.18.0.2" : "2001:2::2");
	sp->sport = 40000;
	sp->dport = 5201;
	sp->payload_len = payload;
	txs_mac_parse(sp->src_mac, "02:00:00:00:00:01");
	txs_mac_parse(sp->dst_mac, "02:00:00:00:00:02");
	sp->flow_id = 3;
}

/* Frames built by the template go in; the same bytes come out, in order,
 * with non-decreasing nanosecond timestamps close to now. */
static void bytes_roundtrip(void **st)
{
	(void)st;
	static const struct {
		int family;
		uint32_t payload;
	} flows[] = { { AF_INET, 16 }, { AF_INET, 0 }, { AF_INET6, 100 }, { AF_INET, 1472 }, { AF_INET6, 24 } };
	char file[256], spec[300];
	t_tmppath(file, sizeof(file), "roundtrip.pcap");
	snprintf(spec, sizeof(spec), "pcap:%s", file);
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 1600 };
	struct txs_netdev *dev;
	char err[200];
	assert_int_equal(txs_netdev_open(&dev, spec, &dc, err, sizeof(err)), 0);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(dev, 0, &q), 0);
	enum { N = 1000 };
	struct frame *want = calloc(N, sizeof(*want));
	uint64_t seed = 42, t_before = txs_now_real_ns();
	unsigned made = 0;
	while (made < N) {
		struct txs_pktbuf b[40];
		unsigned burst = 1 + (unsigned)(t_rand(&seed) % 40);
		if (burst > N - made)
			burst = N - made;
		unsigned got = txs_txq_alloc(q, b, burst);
		assert_int_equal(got, burst);
		for (unsigned i = 0; i < got; i++) {
			struct txs_flow_spec sp;
			spec_for(&sp, flows[(made + i) % 5].family, flows[(made + i) % 5].payload);
			struct txs_tmpl t;
			assert_int_equal(txs_tmpl_build(&t, &sp), 0);
			b[i].len = txs_tmpl_patch(&t, b[i].data, (uint16_t)t_rand(&seed), made + i, t_rand(&seed));
			b[i].l4_off = t.l4_off;
			want[made + i].len = b[i].len;
			want[made + i].data = malloc(b[i].len);
			memcpy(want[made + i].data, b[i].data, b[i].len);
			txs_tmpl_free(&t);
		}
		assert_int_equal(txs_txq_send(q, b, got), got);
		if (t_rand(&seed) % 4 == 0)
			assert_int_equal(txs_txq_flush(q), 0);
		made += got;
	}
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, N);
	txs_netdev_close(dev);
	uint64_t t_after = txs_now_real_ns();

	pcap_t *p = open_read(file);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned i = 0;
	uint64_t last = 0, bytes = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		assert_true(i < N);
		assert_int_equal(h->caplen, want[i].len);
		assert_int_equal(h->len, want[i].len);
		assert_memory_equal(d, want[i].data, want[i].len);
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		assert_true(ts >= last);
		assert_true(ts >= t_before && ts <= t_after);
		last = ts;
		bytes += h->len;
		i++;
	}
	assert_int_equal(i, N);
	assert_int_equal(lc.bytes, bytes);
	pcap_close(p);
	for (unsigned k = 0; k < N; k++)
		free(want[k].data);
	free(want);
}

/* The engine with three workers: every packet of every flow is in the file,
 * each flow's sequence numbers 0..n-1 in order, and every frame parses. */
static void engine_three_queues(void **st)
{
	(void)st;
	char file[256], spec[300];
	t_tmppath(file, sizeof(file), "engine.pcap");
	snprintf(spec, sizeof(spec), "pcap:%s", file);
	enum { W = 3, N = 30001 };
	struct txs_gen_conf gc = { 0 };
	spec_for(&gc.spec, AF_INET, 40);
	gc.spread_sport = true;
	gc.seed = 1;
	struct txs_netdev_conf dc = { .max_queues = W, .frame_size = 128 };
	struct txs_netdev *dev;
	assert_int_equal(txs_netdev_open(&dev, spec, &dc, NULL, 0), 0);
	struct txs_engine_conf ec = { .n_workers = W, .count = N, .dev = dev, .gen = &txs_udp_gen_ops,
				      .gen_conf = &gc, .burst = 64 };
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row rows[W];
	txs_engine_read(e, rows);
	uint64_t sent = 0;
	for (int i = 0; i < W; i++)
		sent += rows[i].packets;
	assert_int_equal(sent, N);
	struct txs_link_counters lc;
	txs_netdev_link_stats(dev, 0, &lc);
	assert_int_equal(lc.packets, N);
	txs_engine_destroy(e);
	txs_netdev_close(dev);

	pcap_t *p = open_read(file);
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t next[W] = { 0 }, total = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		struct txs_pkt_info pi;
		assert_int_equal(txs_parse(d, h->caplen, TXS_L2_ETH, &pi), TXS_PERR_OK);
		struct txs_ph ph;
		assert_int_equal(txs_ph_read(pi.payload, pi.payload_len, &ph), TXS_PH_FULL);
		unsigned w = ph.flow - 3;
		assert_true(w < W);
		assert_int_equal(pi.sport, 40000 + w);
		assert_int_equal(ph.seq, next[w]);
		next[w]++;
		total++;
	}
	assert_int_equal(total, N);
	assert_int_equal(next[0] + next[1] + next[2], N);
	pcap_close(p);
}

/* A GSO buffer (segs > 1, gso_size) is written as the segments on the wire:
 * valid checksums, lengths, consecutive IPv4 IDs, payload slices in order. */
static void gso_segments(void **st)
{
	(void)st;
	for (int fam = 0; fam < 2; fam++) {
		int family = fam ? AF_INET6 : AF_INET;
		char file[256], spec[300];
		t_tmppath(file, sizeof(file), fam ? "gso6.pcap" : "gso4.pcap");
		snprintf(spec, sizeof(spec), "pcap:%s", file);
		const uint32_t gs = 100, total = 3 * gs + 50; /* 4 segments, the last short */
		struct txs_flow_spec sp;
		spec_for(&sp, family, total);
		struct txs_tmpl t;
		assert_int_equal(txs_tmpl_build(&t, &sp), 0);
		struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = t.wire_len };
		struct txs_netdev *dev;
		assert_int_equal(txs_netdev_open(&dev, spec, &dc, NULL, 0), 0);
		struct txs_txq *q;
		assert_int_equal(txs_txq_open(dev, 0, &q), 0);
		struct txs_pktbuf b[2];
		assert_int_equal(txs_txq_alloc(q, b, 2), 2);
		b[0].len = txs_tmpl_patch(&t, b[0].data, 1000, 5, 6);
		b[0].l4_off = t.l4_off;
		b[0].gso_size = (uint16_t)gs;
		b[0].segs = 4;
		b[1].len = txs_tmpl_patch(&t, b[1].data, 2000, 7, 8);
		b[1].l4_off = t.l4_off;
		b[1].gso_size = (uint16_t)gs;
		b[1].segs = 3; /* wrong: 350 bytes make 4 segments: refused */
		struct txs_link_counters lc;
		send_some(dev, q, b, 2, 1, &lc);
		assert_int_equal(lc.packets, 4);
		assert_int_equal(lc.drop_err, 3);
		const uint8_t *payload = b[0].data + t.pay_off;
		uint8_t *copy = malloc(total);
		memcpy(copy, payload, total);
		txs_netdev_close(dev);

		pcap_t *p = open_read(file);
		struct pcap_pkthdr *h;
		const u_char *d;
		unsigned i = 0;
		while (pcap_next_ex(p, &h, &d) == 1) {
			struct txs_pkt_info pi;
			assert_int_equal(txs_parse(d, h->caplen, TXS_L2_ETH, &pi), TXS_PERR_OK);
			uint32_t want = i < 3 ? gs : total - 3 * gs;
			assert_int_equal(pi.payload_len, want);
			assert_memory_equal(pi.payload, copy + i * gs, want);
			if (family == AF_INET)
				assert_int_equal(pi.ip_id, 1000 + i);
			assert_int_equal(pi.sport, 40000);
			i++;
		}
		assert_int_equal(i, 4);
		pcap_close(p);
		free(copy);
		txs_tmpl_free(&t);
	}
}

static void refusals_and_open_errors(void **st)
{
	(void)st;
	struct txs_netdev *dev;
	char err[200];
	struct txs_netdev_conf dc = { .max_queues = 1, .frame_size = 256 };
	assert_int_equal(txs_netdev_open(&dev, "pcap", &dc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pcap:FILE"));
	/* a path that cannot be written is the caller's bad input */
	assert_int_equal(txs_netdev_open(&dev, "pcap:/nonexistent-dir/x.pcap", &dc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "/nonexistent-dir/x.pcap"));

	char file[256], spec[300];
	t_tmppath(file, sizeof(file), "refuse.pcap");
	snprintf(spec, sizeof(spec), "pcap:%s", file);
	assert_int_equal(txs_netdev_open(&dev, spec, &dc, err, sizeof(err)), 0);
	struct txs_txq *q;
	assert_int_equal(txs_txq_open(dev, 0, &q), 0);
	struct txs_pktbuf b[4];
	assert_int_equal(txs_txq_alloc(q, b, 4), 4);
	for (int i = 0; i < 4; i++) {
		memset(b[i].data, i, 60);
		b[i].len = 60;
	}
	b[2].len = 10; /* shorter than an Ethernet header */
	struct txs_link_counters lc;
	send_some(dev, q, b, 4, 2, &lc);
	assert_int_equal(lc.packets, 2);
	assert_int_equal(lc.bytes, 120);
	assert_int_equal(lc.drop_err, 2);
	txs_netdev_close(dev);
	pcap_t *p = open_read(file);
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned n = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		assert_int_equal(h->len, 60);
		assert_int_equal(d[0], n);
		n++;
	}
	assert_int_equal(n, 2);
	pcap_close(p);
}

/* Write errors are counted where they happen: on a file that
 * takes nothing (/dev/full), every frame ends in drop_err, none in packets,
 * alloc stops giving buffers and flush returns the error, so an engine stops.
 * Per queue and per link the counts add up to the frames offered. */
static void write_error_counts(void **st)
{
	(void)st;
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = 2, .frame_size = 256 };
	assert_int_equal(txs_netdev_open(&dev, "pcap:/dev/full", &dc, NULL, 0), 0);
	struct txs_txq *q[2];
	assert_int_equal(txs_txq_open(dev, 0, &q[0]), 0);
	assert_int_equal(txs_txq_open(dev, 1, &q[1]), 0);
	uint64_t offered[2] = { 0, 0 };
	int frc = 0;
	/* queue 0 sends (and flushes) until the device fails; queue 1 then finds it failed */
	for (int it = 0; it < 20000 && frc == 0; it++) {
		struct txs_pktbuf b[32];
		unsigned n = txs_txq_alloc(q[0], b, 32);
		if (n == 0) {
			frc = txs_txq_flush(q[0]);
			break;
		}
		for (unsigned i = 0; i < n; i++) {
			memset(b[i].data, 0, 60);
			b[i].len = 60;
		}
		unsigned s = txs_txq_send(q[0], b, n);
		txs_txq_release(q[0], b + s, n - s);
		offered[0] += n;
		frc = txs_txq_flush(q[0]);
	}
	assert_int_equal(frc, -ENOSPC);
	struct txs_pktbuf b1[8];
	assert_int_equal(txs_txq_alloc(q[1], b1, 8), 0);
	assert_int_equal(txs_txq_flush(q[1]), -ENOSPC);
	struct txs_link_counters lc, q0, q1;
	txs_netdev_link_stats(dev, 0, &lc);
	txs_netdev_queue_stats(dev, 0, &q0);
	txs_netdev_queue_stats(dev, 1, &q1);
	assert_int_equal(lc.packets, 0); /* /dev/full took nothing */
	assert_int_equal(lc.bytes, 0);
	assert_int_equal(lc.drop_err, offered[0]);
	assert_int_equal(lc.last_err, ENOSPC);
	assert_int_equal(q0.packets + q0.drop_full + q0.drop_err, offered[0]);
	assert_int_equal(q1.packets + q1.drop_full + q1.drop_err, 0);
	assert_true(offered[0] >= 32);
	txs_netdev_close(dev);
}

int main(void)
{
	if (!txs_netdev_find("pcap"))
		T_SKIP("txscale was built without libpcap: no pcap device");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bytes_roundtrip),
		cmocka_unit_test(engine_three_queues),
		cmocka_unit_test(gso_segments),
		cmocka_unit_test(refusals_and_open_errors),
		cmocka_unit_test(write_error_counts),
	};
	return cmocka_run_group_tests(tests, t_tmpdir_setup, t_tmpdir_teardown);
}
#else
#include <stdio.h>
int main(void)
{
	fprintf(stderr, "SKIP: no libpcap headers\n");
	return 77;
}
#endif
