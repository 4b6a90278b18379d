/* SPDX-License-Identifier: MIT */
/* lib/rx: loss/duplicate/reorder arithmetic on scripted sequences (compact
 * 32-bit wrap, large gaps, duplicates of lost packets, absurd jumps), RFC 4737
 * extents, latency and RFC 3550 jitter, the IP layer (ID reuse, fragments,
 * checksum errors, filters), links and Jain's index, merging of cores,
 * expected counts from the sender's real summary writer, kernel counter
 * parsing, the pcap reader and the udp input on loopback (histogram:
 * test_hist.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <txscale/rx.h>
#include <txscale/stats.h>
#include "rx/rx_priv.h"
#include "test_sock.h"
#include "test_util.h"

/* ---- helpers ------------------------------------------------------------------- */
static struct txs_rx_core *mkcore(unsigned window, uint64_t max_jump, unsigned links)
{
	struct txs_rx_conf c = { .window = window, .max_jump = max_jump, .n_links = links };
	struct txs_rx_core *core;
	assert_int_equal(txs_rx_core_create(&core, &c), 0);
	return core;
}

static const struct txs_rx_tuple tup1 = {
	.src = { .family = AF_INET, .bytes = { 198, 18, 0, 1 } },
	.dst = { .family = AF_INET, .bytes = { 198, 18, 0, 2 } },
	.sport = 40000,
	.dport = 5201,
};

/* one payload of kind k (16 bytes compact, 32 full) */
static void feed(struct txs_rx_core *c, enum txs_ph_kind k, uint32_t flow, uint64_t seq, uint64_t sent,
		 uint64_t arr, unsigned link)
{
	uint8_t p[32];
	size_t len = k == TXS_PH_FULL ? 32 : 16;
	struct txs_ph ph = { .kind = k, .flow = flow, .seq = seq, .ts_ns = sent };
	txs_ph_write(p, len, &ph);
	txs_rx_dgram(c, p, len, &tup1, link, arr);
}

static void feed_seqs(struct txs_rx_core *c, enum txs_ph_kind k, uint32_t flow, const uint64_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		feed(c, k, flow, s[i], 1000, 2000, 0);
}

static struct txs_rx_result *result1(struct txs_rx_core *c, const struct txs_rx_expect *e)
{
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, &c, 1, e), 0);
	return r;
}

static const struct txs_rx_flow *flow_id(const struct txs_rx_result *r, uint32_t id)
{
	for (unsigned i = 0; i < r->n_flows; i++)
		if (r->flows[i].by_id && r->flows[i].id == id)
			return &r->flows[i];
	fail_msg("flow %u not in result", id);
	return NULL;
}

/* received == unique + duplicates + late + unsequenced, on totals and per flow */
static void check_invariants(const struct txs_rx_result *r)
{
	assert_int_equal(r->received, r->unique + r->duplicates + r->late + r->unsequenced + r->overflow);
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		if (f->sequenced)
			assert_int_equal(f->received, f->unique + f->duplicates + f->late);
	}
}

/* ---- sequences ----------------------------------------------------------------- */
static void in_order(void **st)
{
	(void)st;
	enum txs_ph_kind kinds[] = { TXS_PH_COMPACT, TXS_PH_FULL };
	for (unsigned ki = 0; ki < 2; ki++) {
		struct txs_rx_core *c = mkcore(0, 0, 1);
		for (uint64_t s = 0; s < 10000; s++)
			feed(c, kinds[ki], 7, s, 1000, 2000, 0);
		struct txs_rx_result *r = result1(c, NULL);
		assert_int_equal(r->received, 10000);
		assert_int_equal(r->unique, 10000);
		assert_int_equal(r->lost, 0);
		assert_int_equal(r->duplicates + r->reordered + r->late + r->malformed, 0);
		assert_int_equal(r->n_flows, 1);
		assert_int_equal(flow_id(r, 7)->next_seq, 10000);
		assert_int_equal(flow_id(r, 7)->kind, kinds[ki]);
		assert_false(r->lost_exact);
		check_invariants(r);
		txs_rx_result_free(r);
		txs_rx_core_destroy(c);
	}
}

static void loss_dup_reorder(void **st)
{
	(void)st;
	/* 0..19 with 5 and 6 lost, 12 twice, 9 and 10 swapped, 15 arriving 3 late */
	const uint64_t s[] = { 0, 1, 2, 3, 4, 7, 8, 10, 9, 11, 12, 12, 13, 14, 16, 17, 18, 15, 19 };
	struct txs_rx_core *c = mkcore(0, 0, 1);
	feed_seqs(c, TXS_PH_COMPACT, 1, s, TXS_ARRAY_SIZE(s));
	struct txs_rx_live l;
	txs_rx_core_live(c, &l);
	assert_int_equal(l.gaps - l.reordered, 2); /* provisional loss */
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->received, TXS_ARRAY_SIZE(s));
	assert_int_equal(r->unique, 18);
	assert_int_equal(r->lost, 2);
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->reordered, 2);
	/* 9 arrives at index 8, first larger (10) at 7: extent 1; 15 at 17, first larger (16) at 14: 3 */
	assert_int_equal(r->extent_max, 3);
	assert_int_equal(r->extent_sum, 4);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* RFC 4737 reordering extent, section 4.2.2's definition: e = i - j, j the
 * earliest arrival with a larger sequence number */
static void reorder_extent(void **st)
{
	(void)st;
	const uint64_t a[] = { 0, 3, 2, 1 };           /* 2: e=1, 1: e=2 */
	const uint64_t b[] = { 1, 2, 3, 5, 6, 7, 8, 4 }; /* 0 missing; 4 at 7, 5 at 3: e=4 */
	struct txs_rx_core *c = mkcore(0, 0, 1);
	feed_seqs(c, TXS_PH_FULL, 1, a, TXS_ARRAY_SIZE(a));
	feed_seqs(c, TXS_PH_FULL, 2, b, TXS_ARRAY_SIZE(b));
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(flow_id(r, 1)->reordered, 2);
	assert_int_equal(flow_id(r, 1)->extent_max, 2);
	assert_int_equal(flow_id(r, 1)->extent_sum, 3);
	assert_int_equal(flow_id(r, 2)->reordered, 1);
	assert_int_equal(flow_id(r, 2)->extent_max, 4);
	assert_int_equal(flow_id(r, 2)->lost, 1); /* sequence 0 */
	txs_rx_result_free(r);

	/* an extent reaching past the event history is counted, not guessed */
	txs_rx_core_destroy(c);
	c = mkcore(0, 0, 1);
	for (uint64_t s2 = 1; s2 < 1000; s2++)
		feed(c, TXS_PH_FULL, 3, s2, 1, 2, 0);
	feed(c, TXS_PH_FULL, 3, 0, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(flow_id(r, 3)->reordered, 1);
	assert_int_equal(flow_id(r, 3)->extent_beyond, 1);
	assert_int_equal(flow_id(r, 3)->extent_max, 0);
	assert_int_equal(r->lost, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void dup_of_lost(void **st)
{
	(void)st;
	/* window 64: 5 missing, then arrives twice within the window: one
	 * reordered + one duplicate, no loss */
	struct txs_rx_core *c = mkcore(64, 0, 1);
	for (uint64_t s = 0; s < 50; s++)
		if (s != 5)
			feed(c, TXS_PH_COMPACT, 0, s, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 5, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 5, 1, 2, 0);
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->reordered, 1);
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->unique, 50);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* the same beyond the window: both copies late, the packet stays lost */
	c = mkcore(64, 0, 1);
	for (uint64_t s = 0; s < 200; s++)
		if (s != 5)
			feed(c, TXS_PH_COMPACT, 0, s, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 5, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 5, 1, 2, 0);
	/* and a duplicate of a received packet beyond the window: late as well */
	feed(c, TXS_PH_COMPACT, 0, 7, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->lost, 1);
	assert_int_equal(r->late, 3);
	assert_int_equal(r->duplicates, 0);
	assert_int_equal(r->reordered, 0);
	check_invariants(r);
	/* the window edge: exactly `window` behind is still inside */
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	c = mkcore(64, 0, 1);
	for (uint64_t s = 1; s <= 64; s++)
		feed(c, TXS_PH_COMPACT, 0, s, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 0, 1, 2, 0);  /* next=65: 65 behind, late */
	feed(c, TXS_PH_COMPACT, 0, 1, 1, 2, 0);  /* 64 behind: inside, duplicate */
	r = result1(c, NULL);
	assert_int_equal(r->late, 1);
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->lost, 1);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void large_gaps(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(4096, 0, 1);
	const uint64_t s[] = { 0, 1, 1000000, 1000001, 2, 999999, 10000, 1000001 };
	feed_seqs(c, TXS_PH_FULL, 0, s, TXS_ARRAY_SIZE(s));
	struct txs_rx_result *r = result1(c, NULL);
	/* 2 and 10000: late (far behind); 999999 reordered inside the window; the
	 * second 1000001 a duplicate */
	assert_int_equal(r->late, 2);
	assert_int_equal(r->reordered, 1);
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->unique, 5);
	assert_int_equal(r->lost, 1000002 - 5);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* a gap larger than the window clears it: old bits must not look like dups */
	c = mkcore(64, 0, 1);
	for (uint64_t k = 0; k < 64; k++)
		feed(c, TXS_PH_FULL, 0, k, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, 64 + 64 + 10, 1, 2, 0); /* next 139 */
	for (uint64_t k = 64 + 64 + 10 - 63; k < 138; k++) /* every sequence still in the window */
		feed(c, TXS_PH_FULL, 0, k, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->duplicates, 0);
	assert_int_equal(r->reordered, 63);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void compact_wrap(void **st)
{
	(void)st;
	/* full 64-bit truth vs compact low 32 bits across the 2^32 boundary,
	 * with reordering across the wrap */
	const uint64_t base = 0x100000000ull - 40;
	uint64_t s[100];
	for (unsigned i = 0; i < 100; i++)
		s[i] = base + i;
	uint64_t t = s[39];
	s[39] = s[41];
	s[41] = t; /* 2^32+1 before 2^32-1 */
	/* a first packet at 2^32 - 40 is plausible only with a max_jump above it */
	struct txs_rx_core *c = mkcore(0, 1ull << 33, 1);
	struct txs_rx_core *cf = mkcore(0, 1ull << 33, 1);
	for (unsigned i = 0; i < 100; i++) {
		feed(c, TXS_PH_COMPACT, 0, s[i] & 0xffffffffu, 1, 2, 0);
		feed(cf, TXS_PH_FULL, 0, s[i], 1, 2, 0);
	}
	/* a duplicate of 2^32-2 after the wrap must be recognised as such */
	feed(c, TXS_PH_COMPACT, 0, (base + 38) & 0xffffffffu, 1, 2, 0);
	feed(cf, TXS_PH_FULL, 0, base + 38, 1, 2, 0);
	struct txs_rx_result *r = result1(c, NULL), *rf = result1(cf, NULL);
	assert_int_equal(flow_id(r, 0)->next_seq, base + 100);
	assert_int_equal(r->unique, 100);
	assert_int_equal(r->reordered, 2); /* 2^32 and 2^32-1, both behind 2^32+1 */
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->late, 0);
	assert_int_equal(r->lost, rf->lost); /* base sequences never seen: same either way */
	assert_int_equal(r->lost, base);
	assert_int_equal(r->extent_max, rf->extent_max);
	/* exact against the sender's count: the flow started at base, sent 100 */
	struct txs_rx_expect e = { .have_total = true, .total = 100 };
	txs_rx_result_free(r);
	r = result1(c, &e);
	assert_int_equal(r->lost, 0);
	assert_true(r->lost_exact);
	txs_rx_result_free(r);
	txs_rx_result_free(rf);
	txs_rx_core_destroy(c);
	txs_rx_core_destroy(cf);

	/* 5 * 2^32 + small sequences: extension follows the flow through several epochs */
	c = mkcore(0, 0, 1);
	uint64_t x = 0;
	for (unsigned ep = 0; ep < 5; ep++)
		for (unsigned k = 0; k < 4; k++) {
			x = (uint64_t)ep << 32 | (k * 0x40000000u);
			feed(c, TXS_PH_COMPACT, 0, x & 0xffffffffu, 1, 2, 0);
		}
	r = result1(c, NULL);
	assert_int_equal(flow_id(r, 0)->next_seq, x + 1);
	assert_int_equal(r->malformed, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void absurd_jump(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(0, 0, 1);
	feed(c, TXS_PH_FULL, 0, 5000, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, 5001, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, 1ull << 62, 1, 2, 0); /* garbage: ahead by 2^62 */
	feed(c, TXS_PH_FULL, 0, 5002, 1, 2, 0);
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->bad[TXS_RX_BAD_SEQ_JUMP], 1);
	assert_int_equal(r->malformed, 1);
	assert_int_equal(r->received, 3);
	assert_int_equal(r->lost, 5000); /* 0..4999: the sender starts at 0 */
	assert_int_equal(flow_id(r, 0)->next_seq, 5003);
	assert_int_equal(flow_id(r, 0)->span, 5003);
	struct txs_rx_expect e = { .have_total = true, .total = 3 };
	txs_rx_result_free(r);
	r = result1(c, &e);
	assert_int_equal(r->lost, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* compact jumps are at most 2^31 by construction; a small max_jump applies */
	c = mkcore(0, 1000, 1);
	feed(c, TXS_PH_COMPACT, 0, 0, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 1001, 1, 2, 0); /* gap 1000: allowed */
	feed(c, TXS_PH_COMPACT, 0, 1002 + 1001, 1, 2, 0); /* gap 1001: rejected */
	/* 2^31 + ... ahead: the extension never goes below 0, so this is a jump too */
	feed(c, TXS_PH_COMPACT, 0, 0x90000000u, 1, 2, 0);
	feed(c, TXS_PH_COMPACT, 0, 1002, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->bad[TXS_RX_BAD_SEQ_JUMP], 2);
	assert_int_equal(r->unique, 3);
	assert_int_equal(r->late, 0);
	assert_int_equal(r->resyncs, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* wild sequences never turn into loss of 2^63 */
static void wild_sequences(void **st)
{
	(void)st;
	/* 2^64-1, 0, 1: the first is "behind" sequence 0, implausible */
	struct txs_rx_core *c = mkcore(0, 0, 1);
	feed(c, TXS_PH_FULL, 0, UINT64_MAX, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, 0, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, 1, 1, 2, 0);
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->received, 2);
	assert_int_equal(r->unique, 2);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->bad[TXS_RX_BAD_SEQ_JUMP], 1);
	assert_int_equal(flow_id(r, 0)->next_seq, 2);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* one datagram at 2^63: a first packet meets the same rule */
	c = mkcore(0, 0, 1);
	feed(c, TXS_PH_FULL, 9, 1ull << 63, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->received, 0);
	assert_int_equal(r->malformed, 1);
	assert_int_equal(flow_id(r, 9)->span, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* a receiver joining a long flow late: 5e9.. resyncs after
	 * TXS_RX_RESYNC_CONFIRM packets, loss counted from there */
	c = mkcore(0, 0, 1);
	const uint64_t b = 5000000000ull;
	for (uint64_t s = b; s < b + 100; s++)
		if (s != b + 50)
			feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->resyncs, 1);
	assert_int_equal(r->bad[TXS_RX_BAD_SEQ_JUMP], TXS_RX_RESYNC_CONFIRM);
	assert_int_equal(r->unique, 99 - TXS_RX_RESYNC_CONFIRM);
	assert_int_equal(r->lost, 1);
	assert_int_equal(flow_id(r, 0)->first_seq, b + TXS_RX_RESYNC_CONFIRM);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* a hostile run in the middle of a flow: it resyncs the flow, the real
	 * flow resyncs it back; loss stays within the spans */
	c = mkcore(0, 0, 1);
	for (uint64_t s = 0; s < 100; s++)
		feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	for (uint64_t s = 0; s < 10; s++)
		feed(c, TXS_PH_FULL, 0, (1ull << 63) + s * 2, 1, 2, 0); /* a run with holes */
	for (uint64_t s = 100; s < 200; s++)
		feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	r = result1(c, NULL);
	const struct txs_rx_flow *f = flow_id(r, 0);
	assert_int_equal(f->resyncs, 2);
	assert_int_equal(r->bad[TXS_RX_BAD_SEQ_JUMP], 2 * TXS_RX_RESYNC_CONFIRM);
	assert_true(r->lost <= f->span);
	assert_true(f->span <= 200 + 20);
	assert_int_equal(r->unique, 200 - TXS_RX_RESYNC_CONFIRM + (10 - TXS_RX_RESYNC_CONFIRM));
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* an epoch through 2^64: next wraps, the span does not */
	c = mkcore(0, 0, 1);
	for (uint64_t s = UINT64_MAX - 8; s != 3; s++)
		feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	feed(c, TXS_PH_FULL, 0, UINT64_MAX, 1, 2, 0); /* a duplicate across the wrap */
	r = result1(c, NULL);
	f = flow_id(r, 0);
	assert_int_equal(f->resyncs, 1);
	assert_int_equal(f->next_seq, 3);
	assert_int_equal(f->span, 12 - TXS_RX_RESYNC_CONFIRM);
	assert_int_equal(f->lost, 0);
	assert_int_equal(r->duplicates, 1);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* far behind (a sender restarted at 0 on a flow at 2^31): implausible,
	 * then a resync, not 2^31 late packets */
	c = mkcore(0, 0, 1);
	for (uint64_t s = 0; s < 10; s++)
		feed(c, TXS_PH_FULL, 0, s * (1ull << 29), 1, 2, 0);
	for (uint64_t s = 0; s < 10; s++)
		feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	r = result1(c, NULL);
	assert_int_equal(r->resyncs, 1);
	assert_int_equal(r->late, 0);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* latency from a timestamp in the future or far past is clock skew */
static void latency_skew(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(0, 0, 1);
	const uint64_t now = 1700000000000000000ull;
	feed(c, TXS_PH_FULL, 0, 0, now - 1000, now, 0);                 /* 1 us */
	feed(c, TXS_PH_FULL, 0, 1, now + 5000, now, 0);                 /* future, within the bound */
	feed(c, TXS_PH_FULL, 0, 2, now + (1ull << 62), now, 0);         /* far future */
	feed(c, TXS_PH_FULL, 0, 3, 1, now, 0);                          /* 1 ns after 1970 */
	feed(c, TXS_PH_FULL, 0, 4, now - 61000000000ull, now, 0);       /* 61 s */
	feed(c, TXS_PH_FULL, 0, 5, now - 59000000000ull, now, 0);       /* 59 s: a sample */
	feed(c, TXS_PH_FULL, 1, 0, UINT64_MAX, now, 0);                 /* the year 2554 */
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->lat.count, 2);
	assert_int_equal(r->lat.max, 59000000000ull);
	assert_int_equal(r->lat_negative, 3);
	assert_int_equal(r->lat_past, 2);
	assert_int_equal(flow_id(r, 0)->lat_count, 2);
	assert_int_equal(flow_id(r, 0)->lat_max, 59000000000ull);
	/* jitter from the bounded samples only: 1 us, -5 us, 59 s */
	assert_true(flow_id(r, 0)->jitter_ns < 60000000000ull / 16 + 1000);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	/* the bound is configurable */
	struct txs_rx_conf cf = { .max_latency_ns = 1000 };
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	feed(c, TXS_PH_FULL, 0, 0, now - 1000, now, 0);
	feed(c, TXS_PH_FULL, 0, 1, now - 1001, now, 0);
	r = result1(c, NULL);
	assert_int_equal(r->lat.count, 1);
	assert_int_equal(r->lat_past, 1);
	assert_int_equal(r->max_latency_ns, 1000);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* ---- expected counts ------------------------------------------------------------ */
static void expect_per_flow(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(0, 0, 1);
	for (uint64_t s = 0; s < 100; s++)
		feed(c, TXS_PH_FULL, 0, s, 1, 2, 0);
	for (uint64_t s = 0; s < 100; s++)
		if (s % 10)
			feed(c, TXS_PH_FULL, 1, s, 1, 2, 0);
	for (uint64_t s = 0; s < 105; s++) /* more than the sender says */
		feed(c, TXS_PH_FULL, 3, s, 1, 2, 0);
	struct txs_rx_expect *e = calloc(1, sizeof(*e));
	e->have_total = true;
	e->n_flows = 4;
	e->per_flow[0] = 100;
	e->per_flow[1] = 100;
	e->per_flow[2] = 50; /* never arrived */
	e->per_flow[3] = 100;
	e->total = 350;
	struct txs_rx_result *r = result1(c, e);
	assert_true(r->lost_exact);
	assert_int_equal(flow_id(r, 0)->lost, 0);
	assert_int_equal(flow_id(r, 1)->lost, 10);
	assert_int_equal(flow_id(r, 2)->lost, 50);
	assert_int_equal(flow_id(r, 2)->received, 0);
	assert_int_equal(flow_id(r, 3)->lost, 0);
	assert_int_equal(flow_id(r, 3)->excess, 5);
	assert_int_equal(r->lost, 60);
	assert_int_equal(r->excess, 5);
	assert_int_equal(r->n_flows, 4);
	assert_int_equal(r->flows[2].id, 2); /* sorted by id */
	txs_rx_result_free(r);

	/* the total only */
	memset(e, 0, sizeof(*e));
	e->have_total = true;
	e->total = 400;
	r = result1(c, e);
	assert_int_equal(r->lost, 400 - 295);
	txs_rx_result_free(r);
	free(e);
	txs_rx_core_destroy(c);
}

/* the summary as the real sender reporter writes it */
static char *send_summary(const struct txs_stat_row *rows, unsigned n, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int cpus[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct txs_reporter rep = { .out = f, .json = true, .kind = "send", .n_threads = n, .cpus = cpus, .n_links = 1 };
	struct txs_stat_row link = { 0 };
	for (unsigned i = 0; i < n; i++)
		link.packets += rows[i].packets;
	txs_report_interval(&rep, 0, 1, rows, &link);
	txs_report_summary(&rep, 1.5, rows, &link, NULL, NULL);
	fclose(f);
	return buf;
}

static void expect_parse(void **st)
{
	(void)st;
	struct txs_stat_row rows[3] = { { 1000, 64000, 3, 0 }, { 2000, 128000, 0, 0 }, { 0, 0, 0, 0 } };
	size_t len;
	char *s = send_summary(rows, 3, &len);
	struct txs_rx_expect *e = calloc(1, sizeof(*e));
	assert_int_equal(txs_rx_expect_parse(e, s, len), 0);
	assert_true(e->have_total);
	assert_int_equal(e->total, 3000);
	assert_int_equal(e->n_flows, 3);
	assert_int_equal(e->per_flow[0], 1000);
	assert_int_equal(e->per_flow[1], 2000);
	assert_int_equal(e->per_flow[2], 0);
	assert_int_equal(e->sender_drops, 3);
	free(s);

	const char *bad[] = {
		"",
		"{}",
		"{\"type\":\"interval\",\"packets\":5}",
		"{\"type\":\"summary\",\"kind\":\"recv\",\"packets\":5}",
		"{\"type\":\"summary\",\"kind\":\"send\"}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":-5}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5.5}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":99999999999999999999}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5,\"threads\":[{\"id\":0,\"packets\":4}]}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5,\"threads\":[{\"id\":0,\"packets\":5},{\"id\":0,\"packets\":0}]}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5,\"threads\":[{\"id\":300,\"packets\":5}]}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5}}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":5,\"x\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
		"{\"type\":\"summ\\ary\",\"packets\":5}",
		"not json\n",
	};
	for (size_t i = 0; i < TXS_ARRAY_SIZE(bad); i++)
		assert_int_equal(txs_rx_expect_parse(e, bad[i], strlen(bad[i])), -EINVAL);
	/* other keys, escapes, nested objects named like ours are ignored */
	const char *ok = "{\"x\":{\"packets\":1},\"type\":\"summary\",\"s\":\"a\\\"b\\u0041\",\"kind\":\"send\","
			 "\"packets\":7,\"threads\":[{\"cpu\":-1,\"id\":1,\"packets\":7,\"pps\":1.5e6}],\"z\":null}\n\n";
	assert_int_equal(txs_rx_expect_parse(e, ok, strlen(ok)), 0);
	assert_int_equal(e->total, 7);
	assert_int_equal(e->n_flows, 2);
	assert_int_equal(e->per_flow[1], 7);
	free(e);
}

/* ---- latency and jitter ------------------------------------------------------------- */
static void latency_jitter(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(0, 0, 1);
	/* transit alternates 10 and 20 ns: |D| = 10 each step, jitter -> 10 */
	for (uint64_t s = 0; s < 1000; s++)
		feed(c, TXS_PH_FULL, 0, s, 1000000, 1000000 + (s % 2 ? 20 : 10), 0);
	/* a constant-transit flow has jitter 0 whatever the offset */
	for (uint64_t s = 0; s < 100; s++)
		feed(c, TXS_PH_FULL, 1, s, 5000 + s * 100, 5000 + s * 100 + 7, 0);
	feed(c, TXS_PH_FULL, 2, 0, 5000, 4000, 0); /* stamped after arrival */
	feed(c, TXS_PH_FULL, 2, 1, 0, 4000, 0);    /* no timestamp */
	feed(c, TXS_PH_FULL, 2, 1, 9, 4000, 0);    /* duplicate: no latency sample */
	struct txs_rx_result *r = result1(c, NULL);
	const struct txs_rx_flow *f0 = flow_id(r, 0), *f1 = flow_id(r, 1);
	assert_in_range(f0->jitter_ns, 9, 10);
	assert_int_equal(f1->jitter_ns, 0);
	assert_int_equal(f0->lat_min, 10);
	assert_int_equal(f0->lat_max, 20);
	assert_int_equal(f1->lat_min, 7);
	assert_int_equal(r->lat.count, 1100);
	assert_int_equal(r->lat_negative, 1);
	assert_int_equal(r->lat_none, 1);
	assert_int_equal(txs_hist_quantile(&r->lat, 0.5), 10);
	assert_int_equal(r->lat.max, 20);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* ---- a flow split over cores: exact whatever the split ------------------ */
/* Random property: sequences 0..N-1 of 3 flows (flow ids from a base, as
 * send --flow-base), each lost, sent once or twice, spread over 1-4 cores at
 * random (a flow the kernel moves between sockets), mildly reordered within
 * the window. Per flow the merged unique count is the number of distinct
 * sequences that arrived, every other arrival a duplicate, and loss against
 * the sender's count is exact; the totals agree with the flows. */
static void split_merge_exact(void **st)
{
	(void)st;
	uint64_t rng = 0x1234;
	enum { N = 3000, FL = 3, BASE = 700 };
	for (int iter = 0; iter < 30; iter++) {
		unsigned nc = 1 + (unsigned)(txs_rng_next(&rng) % 4);
		struct txs_rx_core *c[4];
		for (unsigned k = 0; k < nc; k++)
			c[k] = mkcore(0, 0, 1);
		static uint64_t ord[FL][2 * N];
		unsigned nord[FL] = { 0 }, distinct[FL] = { 0 };
		for (unsigned f = 0; f < FL; f++) {
			for (uint64_t sq = 0; sq < N; sq++) {
				unsigned copies = (unsigned)(txs_rng_next(&rng) % 10); /* 0: lost; 1-7: once; 8-9: twice */
				copies = copies == 0 ? 0 : copies >= 8 ? 2 : 1;
				distinct[f] += copies > 0;
				for (unsigned k = 0; k < copies; k++)
					ord[f][nord[f]++] = sq;
			}
			for (unsigned i = 0; i + 1 < nord[f]; i++) /* reorder: swap neighbours now and then */
				if (txs_rng_next(&rng) % 7 == 0) {
					uint64_t t = ord[f][i];
					ord[f][i] = ord[f][i + 1];
					ord[f][i + 1] = t;
				}
		}
		/* the kernel's split: runs of arrivals on one core, switching at random */
		for (unsigned f = 0; f < FL; f++) {
			unsigned core = 0;
			for (unsigned i = 0; i < nord[f]; i++) {
				if (txs_rng_next(&rng) % 50 == 0)
					core = (unsigned)(txs_rng_next(&rng) % nc);
				feed(c[core], TXS_PH_FULL, BASE + f, ord[f][i], 1000, 2000, 0);
			}
		}
		struct txs_rx_expect *e = calloc(1, sizeof(*e));
		e->have_total = true;
		e->total = (uint64_t)N * FL;
		e->flow_base = BASE;
		e->n_flows = FL;
		for (unsigned f = 0; f < FL; f++)
			e->per_flow[f] = N;
		struct txs_rx_result *r;
		assert_int_equal(txs_rx_result_build(&r, c, nc, e), 0);
		assert_int_equal(r->n_flows, FL);
		uint64_t uq = 0, dup = 0, rcv = 0;
		for (unsigned f = 0; f < FL; f++) {
			const struct txs_rx_flow *fl = flow_id(r, BASE + f);
			assert_int_equal(fl->received, nord[f]);
			assert_int_equal(fl->late, 0);
			assert_int_equal(fl->unique, distinct[f]);
			assert_int_equal(fl->duplicates, nord[f] - distinct[f]);
			assert_true(fl->have_expected);
			assert_int_equal(fl->lost, N - distinct[f]);
			assert_true(fl->cores == 1 || fl->merged_exact);
			uq += distinct[f];
			dup += nord[f] - distinct[f];
			rcv += nord[f];
		}
		assert_int_equal(r->received, rcv);
		assert_int_equal(r->unique, uq);
		assert_int_equal(r->duplicates, dup);
		assert_int_equal(r->lost, (uint64_t)N * FL - uq);
		assert_int_equal(r->split_inexact, 0);
		txs_rx_result_free(r);
		free(e);
		for (unsigned k = 0; k < nc; k++)
			txs_rx_core_destroy(c[k]);
	}
}

/* Datagrams and bytes per payload length, summed over cores. */
static void sizes_per_length(void **st)
{
	(void)st;
	struct txs_rx_core *c[2] = { mkcore(0, 0, 1), mkcore(0, 0, 1) };
	uint8_t p[600];
	for (unsigned i = 0; i < 70; i++) {
		size_t len = i % 7 == 0 ? 600 : i % 2 ? 100 : 32;
		struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = 1, .seq = i };
		txs_ph_write(p, len, &ph);
		txs_rx_dgram(c[i % 2], p, len, &tup1, 0, 0);
	}
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, c, 2, NULL), 0);
	assert_int_equal(r->n_sizes, 3);
	uint64_t sum = 0;
	for (unsigned k = 0; k < r->n_sizes; k++)
		sum += r->sizes[k].datagrams;
	assert_int_equal(sum, 70);
	assert_int_equal(r->sizes[0].payload, 32);
	assert_int_equal(r->sizes[2].payload, 600);
	assert_int_equal(r->sizes[2].datagrams, 10);
	assert_int_equal(r->sizes[2].bytes, 6000);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c[0]);
	txs_rx_core_destroy(c[1]);
}

/* ---- links, merge ------------------------------------------------------------------- */
static void links_jain_merge(void **st)
{
	(void)st;
	struct txs_rx_core *c[2] = { mkcore(0, 0, 2), mkcore(0, 0, 2) };
	/* flow 0 split over both cores (a duplicate across them is not detected) */
	for (uint64_t s = 0; s < 400; s++)
		feed(c[s % 2], TXS_PH_FULL, 0, s, 1, 2, s % 4 == 3 ? 1 : 0);
	feed(c[0], TXS_PH_FULL, 0, 1, 1, 2, 0);
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, c, 2, NULL), 0);
	assert_int_equal(r->n_links, 2);
	assert_int_equal(r->links[0].packets, 301);
	assert_int_equal(r->links[1].packets, 100);
	double x0 = 301, x1 = 100;
	assert_true(fabs(r->jain - (x0 + x1) * (x0 + x1) / (2 * (x0 * x0 + x1 * x1))) < 1e-12);
	assert_true(fabs(r->links[0].share - 301.0 / 401) < 1e-12);
	assert_int_equal(r->n_flows, 1);
	assert_int_equal(r->flows[0].cores, 2);
	assert_int_equal(r->flows[0].received, 401);
	/* merged by sequence sets: sequence 1 seen on both cores is one unique
	 * and one duplicate (per-flow exact whatever the split) */
	assert_true(r->flows[0].merged_exact);
	assert_int_equal(r->flows[0].unique, 400);
	assert_int_equal(r->flows[0].duplicates, 1);
	assert_int_equal(r->flows[0].lost, 0);
	assert_int_equal(r->unique, 400);
	assert_int_equal(r->duplicates, 1);
	assert_int_equal(r->split_flows, 1);
	assert_int_equal(r->cross_duplicates, 1);
	assert_int_equal(r->flows[0].next_seq, 400);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c[0]);
	txs_rx_core_destroy(c[1]);
	/* one link: Jain 1 */
	struct txs_rx_core *one = mkcore(0, 0, 1);
	feed(one, TXS_PH_FULL, 0, 0, 1, 2, 0);
	r = result1(one, NULL);
	assert_true(r->jain == 1.0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(one);
}

/* ---- frames: parser verdicts, filters, IP layer -------------------------------------- */
static uint32_t mkframe(uint8_t *buf, int family, uint16_t dport, uint16_t ip_id, uint32_t flow, uint64_t seq,
			unsigned plen)
{
	struct txs_flow_spec sp = { 0 };
	txs_addr_parse(&sp.src, family == AF_INET ? "198.18.0.1" : "2001:2::1");
	txs_addr_parse(&sp.dst, family == AF_INET ? "198.18.0.2" : "2001:2::2");
	sp.sport = 40000;
	sp.dport = dport;
	sp.payload_len = plen;
	sp.flow_id = flow;
	struct txs_tmpl t;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	uint32_t n = txs_tmpl_patch(&t, buf, ip_id, seq, 1000);
	txs_tmpl_free(&t);
	return n;
}

static void frames(void **st)
{
	(void)st;
	struct txs_rx_conf cf = { .port = 5201 };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	uint8_t b[2048];
	for (unsigned i = 0; i < 10; i++) {
		uint32_t n = mkframe(b, i % 2 ? AF_INET6 : AF_INET, 5201, (uint16_t)i, i % 2, i / 2, 16 + i);
		txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);
	}
	uint32_t n = mkframe(b, AF_INET, 5201, 77, 0, 5, 64);
	txs_rx_frame(c, b, n - 1, TXS_L2_ETH, 0, 5000);           /* truncated */
	b[n - 1] ^= 0xff;
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);               /* UDP checksum */
	b[n - 1] ^= 0xff;
	b[TXS_ETH_HLEN + 8] ^= 1;
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);               /* IP checksum */
	b[TXS_ETH_HLEN + 8] ^= 1;
	b[12] = 0x08;
	b[13] = 0x06;
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);               /* ARP: not IP */
	n = mkframe(b, AF_INET, 9999, 78, 0, 0, 64);
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);               /* other port */
	b[n - 1] ^= 0xff;
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);               /* other port, bad checksum: still not ours */
	/* raw IP (no Ethernet) */
	n = mkframe(b, AF_INET, 5201, 79, 0, 5, 16);
	txs_rx_frame(c, b + TXS_ETH_HLEN, n - TXS_ETH_HLEN - 2, TXS_L2_NONE, 0, 5000); /* minus runt padding */
	/* an IPv4 first fragment and a later one */
	n = mkframe(b, AF_INET, 5201, 80, 0, 6, 64);
	uint8_t *ip = b + TXS_ETH_HLEN;
	ip[6] = 0x20; /* MF */
	ip[10] = ip[11] = 0;
	uint16_t ck = txs_ipv4_csum((struct txs_ipv4_hdr *)ip);
	memcpy(ip + 10, &ck, 2);
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);
	ip[6] = 0x00;
	ip[7] = 0x10; /* offset 128 */
	ip[10] = ip[11] = 0;
	ck = txs_ipv4_csum((struct txs_ipv4_hdr *)ip);
	memcpy(ip + 10, &ck, 2);
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);
	/* a UDP payload too short for a header: keyed by its 5-tuple */
	n = mkframe(b, AF_INET, 5201, 81, 0, 0, 8);
	txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);                /* < 16 bytes: 5-tuple flow */

	struct txs_rx_result *r = result1(c, NULL);
	assert_true(r->raw);
	assert_int_equal(r->received, 12);
	assert_int_equal(r->unsequenced, 1);
	assert_int_equal(r->perr[TXS_PERR_TRUNCATED], 1);
	assert_int_equal(r->perr[TXS_PERR_UDP_CSUM], 1);
	assert_int_equal(r->perr[TXS_PERR_IP_CSUM], 1);
	assert_int_equal(r->perr[TXS_PERR_NOT_IP], 1);
	assert_int_equal(r->perr[TXS_PERR_FRAGMENT], 2);
	assert_int_equal(r->filtered, 2);
	assert_int_equal(r->malformed, 3);
	assert_int_equal(r->ignored, 1 + 2 + 2);
	assert_int_equal(r->frag_v4, 2);
	assert_int_equal(r->frag_v4_first, 1);
	assert_int_equal(r->tos[0], 12);
	/* flows: id 0 (v4, seq 0..4 and 5), id 1 (v6, 0..4), and the 5-tuple one */
	assert_int_equal(r->n_flows, 3);
	assert_int_equal(flow_id(r, 0)->unique, 6);
	assert_int_equal(flow_id(r, 1)->unique, 5);
	assert_false(r->flows[2].by_id);
	assert_int_equal(r->flows[2].tuple.dport, 5201);
	/* IPv4 IDs 0,2,4,6,8 + 79 + 80 (first fragment) + 81 on one pair: no reuse */
	assert_int_equal(r->n_pairs, 1);
	assert_int_equal(r->pairs[0].datagrams, 8);
	assert_int_equal(r->pairs[0].reuses, 0);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void bad_magic_and_fill(void **st)
{
	(void)st;
	struct txs_rx_conf cf = { .verify_fill = true };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	uint8_t p[64];
	struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = 0, .seq = 0, .ts_ns = 1 };
	txs_ph_write(p, 64, &ph);
	txs_rx_dgram(c, p, 64, &tup1, 0, 2);
	p[40] ^= 1;
	ph.seq = 1;
	txs_rx_dgram(c, p, 64, &tup1, 0, 2); /* seq 0 again but a bad fill byte */
	memset(p, 0xab, 16);
	txs_rx_dgram(c, p, 16, &tup1, 0, 2); /* compact length, no magic */
	txs_rx_dgram(c, p, 0, &tup1, 0, 2);  /* empty: a 5-tuple datagram */
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->bad[TXS_RX_BAD_FILL], 1);
	assert_int_equal(r->bad[TXS_RX_BAD_MAGIC], 1);
	assert_int_equal(r->malformed, 2);
	assert_int_equal(r->received, 2);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void id_reuse(void **st)
{
	(void)st;
	struct txs_rx_core *c = mkcore(0, 0, 1);
	uint8_t b[256];
	/* one sequential counter: every ID comes back after exactly 65536 */
	for (uint32_t i = 0; i < 70000; i++) {
		uint32_t n = mkframe(b, AF_INET, 5201, (uint16_t)i, 0, i, 16);
		txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 0);
	}
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->pairs[0].datagrams, 70000);
	assert_int_equal(r->pairs[0].reuses, 70000 - 65536);
	assert_int_equal(r->pairs[0].early, 0);
	assert_int_equal(r->pairs[0].min_distance, 65536);
	assert_int_equal(r->pairs[0].p50_distance, 65536);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	/* two flows with their own counters on one pair: collisions come early */
	c = mkcore(0, 0, 1);
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t n = mkframe(b, AF_INET, 5201, (uint16_t)(100 + i), 0, i, 16);
		txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 0);
		n = mkframe(b, AF_INET, 5201, (uint16_t)(600 + i), 1, i, 16);
		txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 0);
	}
	r = result1(c, NULL);
	assert_int_equal(r->pairs[0].datagrams, 2000);
	assert_int_equal(r->pairs[0].reuses, 500);  /* IDs 600..1099 of flow 0 reused by flow 1 */
	assert_int_equal(r->pairs[0].early, 500);
	assert_int_equal(r->pairs[0].min_distance, 999); /* flow 0's ID 600 at 1001, flow 1's at 2 */
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void flow_table_full(void **st)
{
	(void)st;
	struct txs_rx_conf cf = { .max_flows = 3 };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	for (uint32_t f = 0; f < 5; f++)
		for (uint64_t s = 0; s < 10; s++)
			feed(c, TXS_PH_FULL, f, s, 1, 2, 0);
	/* 5-tuple flows (no header) overflow the same way */
	uint8_t p[4] = { 1, 2, 3, 4 };
	struct txs_rx_tuple t2 = tup1;
	for (uint16_t port = 1; port <= 4; port++) {
		t2.sport = port;
		txs_rx_dgram(c, p, sizeof(p), &t2, 0, 0);
	}
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->n_flows, 3);
	assert_int_equal(r->overflow, 24);
	assert_int_equal(r->received, 54);
	assert_int_equal(r->unsequenced, 0);
	check_invariants(r);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	struct txs_rx_conf badc = { .window = 100 };
	assert_int_equal(txs_rx_core_create(&c, &badc), -EINVAL);
	badc = (struct txs_rx_conf){ .n_links = TXS_MAX_LINKS + 1 };
	assert_int_equal(txs_rx_core_create(&c, &badc), -EINVAL);
}

/* Random scripts against a naive reference (a set of everything seen). */
static void random_vs_reference(void **st)
{
	(void)st;
	uint64_t seed = 42;
	for (int round = 0; round < 20; round++) {
		const unsigned W = 256, N = 20000;
		struct txs_rx_core *c = mkcore(W, 0, 1);
		uint8_t *seen = calloc(6 * N + 16, 1);
		uint64_t next = 0, uniq = 0, dup = 0, late = 0, reord = 0;
		uint64_t base = 0;
		for (unsigned i = 0; i < N; i++) {
			uint64_t r = t_rand(&seed) % 100, s;
			if (r < 70)
				s = base++; /* in order */
			else if (r < 80)
				s = (base += 1 + t_rand(&seed) % 5); /* skip a few */
			else if (r < 95 && base > 0)
				s = base - 1 - t_rand(&seed) % (2 * W < base ? 2 * W : base); /* back */
			else
				s = base > 0 ? base - 1 : 0; /* repeat */
			if (s >= 6 * N)
				break;
			feed(c, TXS_PH_COMPACT, 0, s, 1, 2, 0);
			if (s >= next) {
				uniq++;
				seen[s] = 1;
				next = s + 1;
			} else if (next - s > W) {
				late++;
			} else if (seen[s]) {
				dup++;
			} else {
				seen[s] = 1;
				uniq++;
				reord++;
			}
		}
		struct txs_rx_result *res = result1(c, NULL);
		assert_int_equal(res->unique, uniq);
		assert_int_equal(res->duplicates, dup);
		assert_int_equal(res->late, late);
		assert_int_equal(res->reordered, reord);
		assert_int_equal(res->lost, next - uniq);
		check_invariants(res);
		txs_rx_result_free(res);
		txs_rx_core_destroy(c);
		free(seen);
	}
}

/* ---- kernel counters ------------------------------------------------------------------------ */
static void write_file(const char *dir, const char *name, const char *text)
{
	char p[1024];
	int n = snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_true(n > 0 && (size_t)n < sizeof(p));
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void kstats(void **st)
{
	(void)st;
	char dir[] = "/tmp/txs_kstats_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char net[600];
	snprintf(net, sizeof(net), "%s/net", dir);
	assert_int_equal(mkdir(net, 0700), 0);
	write_file(net, "snmp",
		   "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
		   "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
		   "Udp: 100 2 7 50 5 0 1 0 0\n"
		   "UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
		   "UdpLite: 9 9 9 9 9 9 9 9 9\n");
	write_file(net, "snmp6", "Ip6InReceives 5\nUdp6InDatagrams 40\nUdp6RcvbufErrors 3\nUdp6InErrors 3\n");
	write_file(net, "softnet_stat", "0000000a 00000002 00000001 0\n0000000b 00000010 00000000 0\n");
	write_file(net, "dev",
		   "Inter-|   Receive                                                |  Transmit\n"
		   " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
		   "    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n"
		   "   rx0: 6400 100 1 4 0 0 0 0 0 0 0 0 0 0 0 0\n");
	struct txs_rx_kstats *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *d = calloc(1, sizeof(*d));
	txs_rx_kstats_read(a, dir);
	assert_true(a->have_udp && a->have_udp6 && a->have_softnet);
	assert_int_equal(a->udp[TXS_KS_IN_DATAGRAMS], 100);
	assert_int_equal(a->udp[TXS_KS_RCVBUF_ERRORS], 5);
	assert_int_equal(a->udp[TXS_KS_IN_ERRORS], 7);
	assert_int_equal(a->udp[TXS_KS_IN_CSUM_ERRORS], 1);
	assert_int_equal(a->udp6[TXS_KS_RCVBUF_ERRORS], 3);
	assert_int_equal(a->softnet_dropped, 0x12);
	assert_int_equal(a->n_if, 2);
	assert_string_equal(a->ifs[1].name, "rx0");
	assert_int_equal(a->ifs[1].rx_drop, 4);
	write_file(net, "snmp",
		   "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
		   "Udp: 150 2 17 50 15 0 1 0 0\n");
	write_file(net, "dev", "   rx0: 6400 200 1 9 0 0 0 0 0 0 0 0 0 0 0 0\n");
	txs_rx_kstats_read(b, dir);
	txs_rx_kstats_delta(d, a, b);
	assert_int_equal(d->udp[TXS_KS_RCVBUF_ERRORS], 10);
	assert_int_equal(d->udp[TXS_KS_IN_DATAGRAMS], 50);
	assert_int_equal(d->n_if, 1);
	assert_int_equal(d->ifs[0].rx_drop, 5);
	assert_int_equal(d->ifs[0].rx_packets, 100);
	/* JSON names the kernel's own counters */
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_rx_kstats_json(&j, "kernel_drops", d, NULL, 0, 10);
	txs_json_end(&j);
	fclose(f);
	assert_non_null(strstr(buf, "\"RcvbufErrors\":10"));
	assert_non_null(strstr(buf, "\"sockets\":10"));
	assert_non_null(strstr(buf, "\"rx0\":{\"rx_packets\":100,\"rx_dropped\":5"));
	free(buf);
	free(a);
	free(b);
	free(d);
	/* missing files: nothing claimed */
	struct txs_rx_kstats *z = calloc(1, sizeof(*z));
	txs_rx_kstats_read(z, "/nonexistent-txscale");
	assert_false(z->have_udp || z->have_udp6 || z->have_softnet);
	assert_int_equal(z->n_if, 0);
	free(z);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* ---- pcap ---------------------------------------------------------------------------------- */
static void pcap_reader(void **st)
{
	(void)st;
	uint8_t *buf = malloc(1 << 20);
	uint8_t fr[256];
	size_t off = txs_pcap_write_hdr(buf, 65535);
	for (unsigned i = 0; i < 100; i++) {
		uint32_t n = mkframe(fr, i % 2 ? AF_INET6 : AF_INET, 5201, (uint16_t)i, 0, i, 16);
		off += txs_pcap_write_rec(buf + off, fr, n, 1700000000000000000ull + i * 1000);
	}
	struct txs_pcap p;
	struct txs_pcap_rec rec;
	assert_int_equal(txs_pcap_open_mem(&p, buf, off), 0);
	unsigned k = 0;
	while (txs_pcap_next(&p, &rec) == 1) {
		assert_int_equal(rec.l2, TXS_L2_ETH);
		assert_int_equal(rec.ts_ns, 1700000000000000000ull + k * 1000);
		k++;
	}
	assert_int_equal(k, 100);
	assert_int_equal(p.n.records, 100);
	assert_int_equal(p.n.truncated + p.n.bad_len, 0);
	txs_pcap_close(&p);

	/* cut inside the last record: 99 records, one truncated */
	assert_int_equal(txs_pcap_open_mem(&p, buf, off - 3), 0);
	for (k = 0; txs_pcap_next(&p, &rec) == 1; k++)
		;
	assert_int_equal(k, 99);
	assert_int_equal(p.n.truncated, 1);
	txs_pcap_close(&p);

	/* record 10: caplen > origlen (skipped, stream goes on); record 50: absurd length (stream ends) */
	uint8_t *cp = malloc(off);
	memcpy(cp, buf, off);
	size_t r10 = 24, r50 = 24;
	for (unsigned i = 0; i < 50; i++) {
		uint32_t incl;
		memcpy(&incl, cp + (i < 10 ? r10 : r50) + 8, 4);
		if (i < 10)
			r10 += 16 + incl;
		r50 += 16 + incl;
	}
	uint32_t small = 1, huge = 0x7fffffff;
	memcpy(cp + r10 + 12, &small, 4);
	memcpy(cp + r50 + 8, &huge, 4);
	assert_int_equal(txs_pcap_open_mem(&p, cp, off), 0);
	for (k = 0; txs_pcap_next(&p, &rec) == 1; k++)
		;
	assert_int_equal(k, 49);
	assert_int_equal(p.n.bad_len, 2);
	txs_pcap_close(&p);

	/* byte-swapped microsecond file, Linux cooked v1, one ARP record */
	uint8_t sw[512];
	uint32_t gh[6] = { 0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 113 };
	for (int i = 0; i < 6; i++)
		gh[i] = __builtin_bswap32(gh[i]);
	gh[1] = __builtin_bswap16(2) | (uint32_t)__builtin_bswap16(4) << 16;
	memcpy(sw, gh, 24);
	size_t o = 24;
	for (int rr = 0; rr < 2; rr++) {
		uint32_t n = mkframe(fr, AF_INET, 5201, 1, 0, 0, 16) - TXS_ETH_HLEN - 2;
		uint8_t sll[16] = { 0 };
		sll[14] = rr ? 0x08 : 0x08;
		sll[15] = rr ? 0x06 : 0x00;
		uint32_t rh[4] = { __builtin_bswap32(5), __builtin_bswap32(7), __builtin_bswap32(n + 16),
				   __builtin_bswap32(n + 16) };
		memcpy(sw + o, rh, 16);
		memcpy(sw + o + 16, sll, 16);
		memcpy(sw + o + 32, fr + TXS_ETH_HLEN, n);
		o += 32 + n;
	}
	assert_int_equal(txs_pcap_open_mem(&p, sw, o), 0);
	assert_int_equal(txs_pcap_next(&p, &rec), 1);
	assert_int_equal(rec.ts_ns, 5000007000ull);
	assert_int_equal(rec.l2, TXS_L2_NONE);
	assert_false(rec.not_ip);
	struct txs_pkt_info pi;
	assert_int_equal(txs_parse(rec.data, rec.caplen, rec.l2, &pi), TXS_PERR_OK);
	assert_int_equal(txs_pcap_next(&p, &rec), 1);
	assert_true(rec.not_ip);
	assert_int_equal(txs_pcap_next(&p, &rec), 0);
	txs_pcap_close(&p);

	/* not a pcap at all, and a header with an unsupported link type */
	assert_int_equal(txs_pcap_open_mem(&p, "hello world, not pcap", 21), -EINVAL);
	txs_pcap_close(&p);
	memcpy(cp, buf, 24);
	uint32_t lt = 147;
	memcpy(cp + 20, &lt, 4);
	assert_int_equal(txs_pcap_open_mem(&p, cp, 24), -EINVAL);
	txs_pcap_close(&p);
	free(cp);

	/* the pcap input end to end: a file with 100 frames into one core */
	char path[] = "/tmp/txs_pcap_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, off), (ssize_t)off);
	close(fd);
	char spec[64];
	snprintf(spec, sizeof(spec), "pcap:%s", path);
	struct txs_rx_input *in;
	assert_int_equal(txs_rx_input_open(&in, spec, NULL, NULL, 0), 0);
	struct txs_rx_core *c = mkcore(0, 0, 1);
	int rc, loops = 0;
	while ((rc = txs_rx_input_poll(in, 0, c, 0)) > 0 && loops++ < 1000)
		;
	assert_int_equal(rc, -ENODATA);
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->received, 100);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->n_flows, 1);
	/* the frames are stamped 1000 ns after the epoch, captured in 2023:
	 * clock skew, counted apart, never 53 years of latency */
	assert_int_equal(r->lat.count, 0);
	assert_int_equal(r->lat_past, 100);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	txs_rx_input_close(in);
	unlink(path);
	free(buf);
}

/* Raw inputs with a port range (-p LO-HI): the ports of the range are
 * counted, flows keyed by id; the ports beside it are filtered. */
static void raw_port_range_filter(void **st)
{
	(void)st;
	struct txs_rx_conf cf = { .port = 5201, .port_hi = 5203 };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	uint8_t b[256];
	const uint16_t ports[] = { 5200, 5201, 5202, 5203, 5204, 1 };
	for (unsigned i = 0; i < 6; i++) {
		uint32_t n = mkframe(b, AF_INET, ports[i], (uint16_t)i, i, 0, 32);
		txs_rx_frame(c, b, n, TXS_L2_ETH, 0, 5000);
	}
	struct txs_rx_result *r = result1(c, NULL);
	assert_int_equal(r->received, 3);
	assert_int_equal(r->filtered, 3);
	assert_int_equal(r->n_flows, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(r->flows[i].tuple.dport, 5201 + r->flows[i].id - 1);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

/* ---- udp input on loopback ------------------------------------------------------------------ */
/* a port in use is refused unless every receiver shares it */
static void udp_input_port_in_use(void **st)
{
	(void)st;
	struct txs_rx_input_conf ic = { .n_queues = 1, .have_bind = true, .rcvbuf = 1 << 20 };
	txs_addr_parse(&ic.bind, "127.0.0.1");
	struct txs_rx_input *a = NULL, *b = NULL;
	char err[320];
	int rc = -1;
	for (unsigned tries = 0; rc < 0 && tries < 20; tries++) {
		ic.port = (uint16_t)(33000 + (getpid() * 13 + tries) % 16000);
		rc = txs_rx_input_open(&a, "udp", &ic, err, sizeof(err));
	}
	if (rc < 0)
		T_SKIP("no loopback UDP port: %s", err);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(a, &is);
	/* the kernel reports twice what was asked (FORCE), or what rmem_max capped */
	assert_true(is.rcvbuf > 0);
	if (is.rcvbuf_forced)
		assert_int_equal(is.rcvbuf, 2 << 20);
	/* one queue, several, both without SO_REUSEPORT on the holder */
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, "in use"));
	ic.n_queues = 2;
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EADDRINUSE);
	ic.reuseport = true;
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EADDRINUSE);
	assert_non_null(strstr(err, "does not share"));
	txs_rx_input_close(a);
	/* both asking to share: they do */
	assert_int_equal(txs_rx_input_open(&a, "udp", &ic, err, sizeof(err)), 0);
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), 0);
	txs_rx_input_close(b);
	txs_rx_input_close(a);
	/* several own queues alone: fine, and the port is free again after */
	ic.reuseport = false;
	assert_int_equal(txs_rx_input_open(&a, "udp", &ic, err, sizeof(err)), 0);
	assert_int_equal(txs_rx_input_check(a, err, sizeof(err)), 0);
	txs_rx_input_close(a);
	ic.n_queues = 1;
	assert_int_equal(txs_rx_input_open(&a, "udp", &ic, err, sizeof(err)), 0);
	txs_rx_input_close(a);
}

/* A full payload header (flow, seq) to 127.0.0.1:port from socket s. */
static void lo_send_ph(int s, uint16_t port, uint32_t flow, uint64_t seq)
{
	uint8_t p[24];
	struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = flow, .seq = seq, .ts_ns = 1 };
	txs_ph_write(p, 24, &ph);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port) };
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(sendto(s, p, 24, 0, (struct sockaddr *)&to, sizeof(to)), 24);
}

/* Datagrams read from both queues of `in` into c[0], c[1]: what is waiting
 * now (want 0: no buffer overflows while sending), or with 10 ms waits until
 * `want` in all counting `got` (at most a second). */
static unsigned lo_drain(struct txs_rx_input *in, struct txs_rx_core **c, unsigned got, unsigned want)
{
	if (!want) {
		for (int q = 0; q < 2; q++)
			for (int k = 0, n; k < 10 && (n = txs_rx_input_poll(in, (unsigned)q, c[q], 0)) > 0; k++)
				got += (unsigned)n;
		return got;
	}
	for (int k = 0; k < 100 && got < want; k++)
		for (int q = 0; q < 2; q++) {
			int n = txs_rx_input_poll(in, (unsigned)q, c[q], 10);
			assert_true(n >= 0);
			got += (unsigned)n;
		}
	return got;
}

static void udp_input_loopback(void **st)
{
	(void)st;
	struct txs_rx_input_conf ic = { .n_queues = 2, .have_bind = true, .port = 0 };
	txs_addr_parse(&ic.bind, "127.0.0.1");
	struct txs_rx_input *in = NULL;
	char err[256];
	/* find a free port: try a few */
	int rc = -1;
	for (uint16_t port = 30000 + (uint16_t)(getpid() % 20000), tries = 0; rc < 0 && tries < 20; port++, tries++) {
		ic.port = port;
		rc = txs_rx_input_open(&in, "udp", &ic, err, sizeof(err));
	}
	if (rc < 0)
		T_SKIP("no loopback UDP port: %s", err);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct txs_rx_core *c[2] = { mkcore(0, 0, 1), mkcore(0, 0, 1) };
	unsigned got = 0;
	for (uint64_t seq = 0; seq < 200; seq++) {
		lo_send_ph(s, ic.port, 3, seq);
		if (seq % 20 == 19) /* drain as we go: no buffer overflow */
			got = lo_drain(in, c, got, 0);
	}
	lo_drain(in, c, got, 200);
	close(s);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(in, &is);
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, c, 2, NULL), 0);
	assert_int_equal(r->received + is.socket_drops, 200);
	assert_int_equal(r->lost, is.socket_drops);
	assert_int_equal(r->n_flows, 1);
	assert_int_equal(r->flows[0].cores, 1); /* REUSEPORT: one flow, one socket */
	assert_int_equal(r->flows[0].tuple.src.family, AF_INET);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c[0]);
	txs_rx_core_destroy(c[1]);
	txs_rx_input_close(in);
	/* bad specs */
	assert_int_equal(txs_rx_input_open(&in, "nosuch", NULL, err, sizeof(err)), -ENODEV);
	assert_int_equal(txs_rx_input_open(&in, "udp:x", &ic, err, sizeof(err)), -EINVAL);
	assert_int_equal(txs_rx_input_open(&in, "pcap:", NULL, err, sizeof(err)), -EINVAL);
	assert_int_equal(txs_rx_input_open(&in, "pcap:/nonexistent/file", NULL, err, sizeof(err)), -ENOENT);
	assert_int_equal(txs_rx_input_open(&in, "packet:no-such-if0", NULL, err, sizeof(err)), -ENODEV);
}

/* A port range: each queue has a socket per port; 8 flows to 4 ports, 2
 * queues: every datagram counted once, each flow with its own destination
 * port (the socket's), a port of the range in use refuses the whole range,
 * and a range past the limit or upside down is refused. */
static void udp_input_port_range(void **st)
{
	(void)st;
	struct txs_rx_input_conf ic = { .n_queues = 2 };
	struct txs_rx_input *in = t_rx_udp_input(&ic, 34000, 15000, 5, 3, "no 4 loopback UDP ports");
	char err[320];
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct txs_rx_core *c[2] = { mkcore(0, 0, 1), mkcore(0, 0, 1) };
	unsigned got = 0;
	for (uint64_t seq = 0; seq < 50; seq++) {
		for (uint32_t f = 0; f < 8; f++)
			lo_send_ph(s, (uint16_t)(ic.port + f % 4), f, seq);
		if (seq % 4 == 3)
			got = lo_drain(in, c, got, 0);
	}
	lo_drain(in, c, got, 400);
	close(s);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(in, &is);
	assert_int_equal(is.socket_drops, 0);
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, c, 2, NULL), 0);
	assert_int_equal(r->received, 400);
	assert_int_equal(r->lost, 0);
	assert_int_equal(r->duplicates, 0);
	assert_int_equal(r->n_flows, 8);
	for (unsigned i = 0; i < r->n_flows; i++) {
		assert_int_equal(r->flows[i].received, 50);
		assert_int_equal(r->flows[i].tuple.dport, ic.port + r->flows[i].id % 4);
	}
	txs_rx_result_free(r);
	txs_rx_core_destroy(c[0]);
	txs_rx_core_destroy(c[1]);
	/* one port of the range held by another socket: refused, naming it */
	int hold = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in at = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(ic.port + 2)) };
	at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	txs_rx_input_close(in);
	assert_int_equal(bind(hold, (struct sockaddr *)&at, sizeof(at)), 0);
	struct txs_rx_input *b = NULL;
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EADDRINUSE);
	char want[16];
	snprintf(want, sizeof(want), "port %u", ic.port + 2);
	assert_non_null(strstr(err, want));
	ic.n_queues = 1;
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EADDRINUSE);
	close(hold);
	ic.port_hi = (uint16_t)(ic.port - 1);
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EINVAL);
	ic.port_hi = (uint16_t)(ic.port + TXS_RX_UDP_MAX_PORTS);
	assert_int_equal(txs_rx_input_open(&b, "udp", &ic, err, sizeof(err)), -EINVAL);
}

/* The inline fast path against txs_parse: on template frames of every length
 * (and with one random byte flipped) it accepts exactly what the shape allows
 * and txs_parse accepts, with the same fields. */
static void fast_path_agrees(void **st)
{
	(void)st;
	uint64_t seed = 99;
	uint8_t b[2048];
	unsigned accepted = 0, declined_ok = 0;
	for (unsigned i = 0; i < 20000; i++) {
		int fam = i % 2 ? AF_INET6 : AF_INET;
		unsigned plen = (unsigned)(t_rand(&seed) % 200);
		uint32_t n = mkframe(b, fam, 5201, (uint16_t)i, i, i, plen);
		if (i % 3 == 0)
			b[t_rand(&seed) % n] ^= (uint8_t)(1 + t_rand(&seed) % 255);
		enum txs_l2 l2 = i % 5 == 0 ? TXS_L2_NONE : TXS_L2_ETH;
		const uint8_t *f = l2 == TXS_L2_NONE ? b + TXS_ETH_HLEN : b;
		size_t len = l2 == TXS_L2_NONE ? n - TXS_ETH_HLEN : n;
		struct txs_pkt_info pi;
		struct rx_pkt k;
		enum txs_perr e = txs_parse(f, len, l2, &pi);
		bool fast = rx_parse_fast(f, len, l2, &k);
		if (fast) {
			accepted++;
			assert_int_equal(e, TXS_PERR_OK);
			assert_true(k.payload == pi.payload && k.payload_len == pi.payload_len);
			assert_int_equal(k.sport, pi.sport);
			assert_int_equal(k.dport, pi.dport);
			assert_int_equal(k.family, pi.family);
		} else if (e == TXS_PERR_OK) {
			declined_ok++;
		}
		if (i % 3 != 0)
			assert_true(fast); /* every intact template frame takes the fast path */
	}
	assert_true(accepted > 13000);
	(void)declined_ok;
}

T_MAIN(cmocka_unit_test(in_order),
       cmocka_unit_test(loss_dup_reorder),
       cmocka_unit_test(reorder_extent),
       cmocka_unit_test(dup_of_lost),
       cmocka_unit_test(large_gaps),
       cmocka_unit_test(compact_wrap),
       cmocka_unit_test(absurd_jump),
       cmocka_unit_test(wild_sequences),
       cmocka_unit_test(latency_skew),
       cmocka_unit_test(expect_per_flow),
       cmocka_unit_test(expect_parse),
       cmocka_unit_test(latency_jitter),
       cmocka_unit_test(links_jain_merge),
       cmocka_unit_test(split_merge_exact),
       cmocka_unit_test(sizes_per_length),
       cmocka_unit_test(frames),
       cmocka_unit_test(bad_magic_and_fill),
       cmocka_unit_test(id_reuse),
       cmocka_unit_test(flow_table_full),
       cmocka_unit_test(random_vs_reference),
       cmocka_unit_test(kstats),
       cmocka_unit_test(pcap_reader),
       cmocka_unit_test(udp_input_loopback),
       cmocka_unit_test(udp_input_port_range),
       cmocka_unit_test(raw_port_range_filter),
       cmocka_unit_test(udp_input_port_in_use),
       cmocka_unit_test(fast_path_agrees))
