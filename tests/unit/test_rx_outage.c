/* SPDX-License-Identifier: MIT */
/* lib/rx outages and loss bursts on scripted arrivals: a silence with loss
 * (count, longest, its ends and wall-clock start), a delay without loss (no
 * outage), late datagrams filling an outage (partly, wholly), duplicates,
 * the automatic threshold from the inter-arrival median and an explicit one,
 * the run's merge of flows' outages by time, burst classes and the burst
 * distribution (holes, late fills splitting them, the tail from the sender's
 * count), hostile sequences and times (every count bounded), the clock
 * correction of latency. */
#include <string.h>
#include <txscale/rx.h>
#include <txscale/stats.h>
#include "common/jsonpath.h"
#include "rx/outage.h"
#include "test_util.h"

static const struct txs_rx_tuple tup = {
	.src = { .family = AF_INET, .bytes = { 198, 18, 0, 1 } },
	.dst = { .family = AF_INET, .bytes = { 198, 18, 0, 2 } },
	.sport = 40000,
	.dport = 5201,
};

#define T0 1800000000000000000ull /* 2027-01-15T08:00:00Z */
#define US 1000ull
#define MS 1000000ull

static struct txs_rx_core *mk(uint64_t outage_min)
{
	struct txs_rx_conf c = { .outage_min_ns = outage_min };
	struct txs_rx_core *core;
	assert_int_equal(txs_rx_core_create(&core, &c), 0);
	return core;
}

static void dg(struct txs_rx_core *c, uint32_t flow, uint64_t seq, uint64_t sent, uint64_t arr)
{
	uint8_t p[32];
	struct txs_ph ph = { .kind = TXS_PH_FULL, .flow = flow, .seq = seq, .ts_ns = sent };
	txs_ph_write(p, sizeof(p), &ph);
	txs_rx_dgram(c, p, sizeof(p), &tup, 0, arr);
}

/* seqs lo..hi-1 of flow, one every `step` ns from *t (advanced) */
static void stream(struct txs_rx_core *c, uint32_t flow, uint64_t lo, uint64_t hi, uint64_t step, uint64_t *t)
{
	for (uint64_t s = lo; s < hi; s++) {
		dg(c, flow, s, *t - 50 * US, *t);
		*t += step;
	}
}

static struct txs_rx_result *build(struct txs_rx_core **c, unsigned n, const struct txs_rx_expect *e)
{
	struct txs_rx_result *r;
	assert_int_equal(txs_rx_result_build(&r, c, n, e), 0);
	return r;
}

static uint64_t dur(const struct txs_rx_outage_ev *e)
{
	return e->end_ns - e->start_ns;
}

/* the sum over classes equals the burst count; lengths sum to burst_lost */
static void check_bursts(const struct txs_rx_outage *o)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < TXS_RX_BURST_CLASSES; k++)
		n += o->bursts[k];
	assert_int_equal(n, o->n_bursts);
	assert_true(o->burst_max <= o->burst_lost);
}

static void silence_with_loss(void **st)
{
	(void)st;
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0;
	stream(c, 1, 0, 1000, 100 * US, &t); /* 10 kpps */
	uint64_t last = t - 100 * US;
	t = last + 200 * MS;
	struct txs_rx_live l;
	stream(c, 1, 3000, 4000, 100 * US, &t); /* 1999 lost... 1000..2999: 2000 */
	txs_rx_core_live(c, &l);
	assert_int_equal(l.outages, 1);
	assert_int_equal(l.outage_ns, 200 * MS);
	struct txs_rx_result *r = build(&c, 1, NULL);
	const struct txs_rx_outage *o = &r->outage;
	assert_int_equal(o->count, 1);
	assert_int_equal(dur(&o->longest), 200 * MS);
	assert_int_equal(o->longest.start_ns, last);
	assert_int_equal(o->longest.before_seq, 999);
	assert_int_equal(o->longest.after_seq, 3000);
	assert_int_equal(o->longest.missing, 2000);
	assert_int_equal(o->missing, 2000);
	/* automatic: 10 x the median 100 us (a bin's midpoint, within 1/8) */
	assert_true(o->threshold_ns >= 900 * US && o->threshold_ns <= 1100 * US);
	assert_int_equal(r->n_outages, 1);
	assert_int_equal(r->outages[0].flows, 1);
	assert_int_equal(r->outages[0].flow, 1);
	/* one burst of 2000: class 1025-2048 */
	assert_int_equal(o->n_bursts, 1);
	assert_int_equal(o->burst_max, 2000);
	assert_int_equal(o->bursts[txs_rx_burst_class(2000)], 1);
	assert_true(o->bursts_exact);
	/* per flow the same */
	assert_int_equal(r->flows[0].outage.count, 1);
	assert_int_equal(r->flows[0].outage.longest.missing, 2000);
	/* loss duration: 2000 lost at 10 kpps of sequences = 200 ms (within 1%) */
	assert_true(o->loss_duration_ns > 198 * MS && o->loss_duration_ns < 202 * MS);
	check_bursts(o);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void delay_is_no_outage(void **st)
{
	(void)st;
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0;
	stream(c, 1, 0, 500, 100 * US, &t);
	t += 300 * MS; /* silence, then everything in order: a delay */
	stream(c, 1, 500, 1000, 100 * US, &t);
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 0);
	assert_int_equal(r->outage.n_bursts, 0);
	assert_int_equal(r->lost, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void late_fill(void **st)
{
	(void)st;
	/* all of an outage's missing arrive late: withdrawn */
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0;
	stream(c, 1, 0, 100, 100 * US, &t);
	t += 50 * MS;
	stream(c, 1, 103, 110, 100 * US, &t);
	struct txs_rx_live l;
	txs_rx_core_live(c, &l);
	assert_int_equal(l.outages, 1);
	dg(c, 1, 100, t, t);
	dg(c, 1, 101, t, t);
	dg(c, 1, 101, t, t); /* a duplicate fills nothing twice */
	txs_rx_core_live(c, &l);
	assert_int_equal(l.outages, 1);
	dg(c, 1, 102, t, t);
	txs_rx_core_live(c, &l);
	assert_int_equal(l.outages, 0);
	assert_int_equal(l.outage_ns, 0);
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 0);
	assert_int_equal(r->outage.n_bursts, 0);
	assert_int_equal(r->n_outages, 0);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* partly filled: still an outage, fewer missing; the burst splits */
	c = mk(0);
	t = T0;
	stream(c, 1, 0, 100, 100 * US, &t);
	t += 50 * MS;
	stream(c, 1, 110, 120, 100 * US, &t); /* 100..109 missing */
	dg(c, 1, 105, t, t);
	r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 1);
	assert_int_equal(r->outage.longest.missing, 9);
	assert_int_equal(r->outage.n_bursts, 2);
	assert_int_equal(r->outage.bursts[txs_rx_burst_class(5)], 1);
	assert_int_equal(r->outage.bursts[txs_rx_burst_class(4)], 1);
	assert_int_equal(r->outage.burst_lost, 9);
	assert_int_equal(r->lost, 9);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void reorder_after_silence(void **st)
{
	(void)st;
	/* after the silence a reordered/duplicate datagram comes first: the
	 * silence ends with no skip, so it is no outage; the loss stays loss */
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0;
	stream(c, 1, 0, 100, 100 * US, &t);
	dg(c, 1, 90, t, t + 30 * MS); /* duplicate after 30 ms */
	t += 30 * MS + 100 * US;
	stream(c, 1, 100, 200, 100 * US, &t);
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 0);
	assert_int_equal(r->duplicates, 1);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void thresholds(void **st)
{
	(void)st;
	/* 1 kpps: automatic threshold 10 ms; a 5 ms silence with loss is none,
	 * a 15 ms one is */
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0;
	stream(c, 1, 0, 200, MS, &t);
	t += 4 * MS;
	stream(c, 1, 205, 400, MS, &t);
	t += 14 * MS;
	stream(c, 1, 415, 600, MS, &t);
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 1);
	assert_int_equal(dur(&r->outage.longest), 15 * MS);
	assert_int_equal(r->outage.longest.missing, 15);
	assert_int_equal(r->outage.n_bursts, 2);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* explicit: 2 ms makes both outages */
	c = mk(2 * MS);
	t = T0;
	stream(c, 1, 0, 200, MS, &t);
	t += 4 * MS;
	stream(c, 1, 205, 400, MS, &t);
	t += 14 * MS;
	stream(c, 1, 415, 600, MS, &t);
	r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 2);
	assert_int_equal(r->outage.threshold_ns, 2 * MS);
	assert_int_equal(r->outage_min_ns, 2 * MS);
	assert_int_equal(r->n_outages, 2);
	assert_int_equal(dur(&r->outages[0]), 5 * MS);
	assert_int_equal(dur(&r->outages[1]), 15 * MS);
	assert_int_equal(r->outage.total_ns, 20 * MS);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* the floor: at 100 kpps the median is 10 us, the threshold 1 ms */
	c = mk(0);
	t = T0;
	stream(c, 1, 0, 1000, 10 * US, &t);
	t += 800 * US;
	stream(c, 1, 1080, 2000, 10 * US, &t);
	t += 1500 * US;
	stream(c, 1, 2150, 3000, 10 * US, &t);
	r = build(&c, 1, NULL);
	assert_int_equal(r->outage.count, 1);
	assert_int_equal(dur(&r->outage.longest), 1510 * US);
	assert_int_equal(r->outage.threshold_ns, TXS_RX_OUTAGE_FLOOR_NS);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void run_merge(void **st)
{
	(void)st;
	/* two flows, interleaved, both silent over the same 100 ms (one link
	 * down), on two cores: one run outage of 2 flows; a later outage of
	 * flow 2 alone: a second */
	struct txs_rx_core *c[2] = { mk(0), mk(0) };
	uint64_t t = T0;
	uint64_t s = 0;
	for (; s < 500; s++, t += 100 * US) {
		dg(c[0], 1, s, t, t);
		dg(c[1], 2, s, t, t + 50 * US);
	}
	t += 100 * MS;
	for (s = 1500; s < 2000; s++, t += 100 * US) {
		dg(c[0], 1, s, t, t);
		dg(c[1], 2, s, t, t + 50 * US);
	}
	t += 30 * MS;
	for (s = 2300; s < 2400; s++, t += 100 * US)
		dg(c[1], 2, s, t, t + 50 * US);
	struct txs_rx_result *r = build(c, 2, NULL);
	assert_int_equal(r->outage.count, 2);
	assert_int_equal(r->n_outages, 2);
	assert_int_equal(r->outages[0].flows, 2);
	assert_int_equal(r->outages[0].missing, 2000);
	/* union: flow 1's last before to flow 2's first after */
	assert_int_equal(dur(&r->outages[0]), 100 * MS + 100 * US + 50 * US);
	assert_int_equal(r->outages[1].flows, 1);
	assert_int_equal(r->outages[1].flow, 2);
	assert_int_equal(r->outages[1].missing, 300);
	assert_int_equal(r->outage.longest.missing, 2000);
	assert_int_equal(r->outage.missing, 2300);
	assert_int_equal(r->outage.n_bursts, 3);
	assert_int_equal(r->outage.burst_lost, 2300);
	for (unsigned i = 0; i < r->n_flows; i++)
		assert_int_equal(r->flows[i].outage.count, r->flows[i].id == 1 ? 1 : 2);
	check_bursts(&r->outage);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c[0]);
	txs_rx_core_destroy(c[1]);
}

static void burst_classes(void **st)
{
	(void)st;
	for (uint64_t len = 1; len <= 100000; len++) {
		unsigned k = txs_rx_burst_class(len);
		uint64_t lo, hi;
		assert_true(k < TXS_RX_BURST_CLASSES);
		txs_rx_burst_range(k, &lo, &hi);
		assert_true(lo <= len && len <= hi);
		if (len <= 8)
			assert_int_equal(lo, hi);
	}
	assert_int_equal(txs_rx_burst_class(UINT64_MAX), TXS_RX_BURST_CLASSES - 1);
	uint64_t lo, hi;
	txs_rx_burst_range(TXS_RX_BURST_CLASSES - 1, &lo, &hi);
	assert_int_equal(hi, UINT64_MAX);
	/* contiguous classes */
	for (unsigned k = 1; k < TXS_RX_BURST_CLASSES; k++) {
		uint64_t plo, phi;
		txs_rx_burst_range(k - 1, &plo, &phi);
		txs_rx_burst_range(k, &lo, &hi);
		assert_int_equal(lo, phi + 1);
	}
}

static void bursts_known(void **st)
{
	(void)st;
	/* holes of lengths 1, 2, 3, 3, 7, 12 and a lost start (2) and tail
	 * (5, from the sender's count) */
	struct txs_rx_core *c = mk(0);
	static const uint64_t holes[][2] = { { 10, 1 }, { 20, 2 }, { 30, 3 }, { 40, 3 }, { 50, 7 }, { 70, 12 } };
	uint64_t t = T0, s = 2;
	for (unsigned h = 0; h < 6; h++) {
		for (; s < holes[h][0]; s++, t += 100 * US)
			dg(c, 7, s, t, t);
		s += holes[h][1];
	}
	for (; s < 100; s++, t += 100 * US)
		dg(c, 7, s, t, t);
	struct txs_rx_expect *e = calloc(1, sizeof(*e));
	e->have_total = true;
	e->total = 105;
	e->flow_base = 7;
	e->n_flows = 1;
	e->per_flow[0] = 105;
	struct txs_rx_result *r = build(&c, 1, e);
	const struct txs_rx_outage *o = &r->outage;
	assert_int_equal(r->lost, 35);
	assert_int_equal(o->burst_lost, 35);
	assert_int_equal(o->n_bursts, 8);
	assert_int_equal(o->bursts[0], 1);
	assert_int_equal(o->bursts[1], 2); /* 2 (start) and 2 */
	assert_int_equal(o->bursts[2], 2);
	assert_int_equal(o->bursts[4], 1); /* 5 (tail) */
	assert_int_equal(o->bursts[6], 1);
	assert_int_equal(o->bursts[txs_rx_burst_class(12)], 1);
	assert_int_equal(o->burst_max, 12);
	assert_true(o->bursts_exact);
	/* 100 us apart: no outage (the threshold is 1 ms) */
	assert_int_equal(o->count, 0);
	check_bursts(o);
	free(e);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void hostile(void **st)
{
	(void)st;
	/* random sequences near and far, random times (backwards, huge jumps,
	 * zero): nothing crashes and every count stays within the flow's */
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct txs_rx_core *c = mk(seed % 2 ? 0 : 3 * MS);
		uint64_t x = seed * 0x9e3779b97f4a7c15ull, t = T0, base = 0;
		for (unsigned i = 0; i < 20000; i++) {
			uint64_t r = rnd(&x);
			uint64_t s;
			switch (r % 8) {
			case 0: s = rnd(&x); break;                        /* anywhere */
			case 1: s = base + (rnd(&x) % 5000); break;       /* ahead */
			case 2: s = base - (rnd(&x) % 5000); break;       /* behind, maybe below 0 */
			case 3: s = UINT64_MAX - (rnd(&x) % 3); break;
			default: s = base++; break;
			}
			uint64_t tr = rnd(&x) % 16;
			if (tr == 0)
				t -= 50 * MS; /* clock steps back */
			else if (tr == 1)
				t += rnd(&x) % (10000 * MS);
			else if (tr == 2)
				t = rnd(&x); /* garbage */
			else
				t += 100 * US;
			dg(c, (uint32_t)(r >> 60), s, rnd(&x), tr == 3 ? 0 : t);
		}
		struct txs_rx_result *r = build(&c, 1, NULL);
		uint64_t span = 0;
		for (unsigned i = 0; i < r->n_flows; i++) {
			const struct txs_rx_flow *f = &r->flows[i];
			const struct txs_rx_outage *o = &f->outage;
			assert_true(o->count <= f->received);
			assert_true(o->missing <= f->span);
			assert_true(o->burst_lost <= f->span + (f->have_expected ? f->expected : 0));
			check_bursts(o);
			span += f->span;
		}
		assert_true(r->outage.count <= r->received);
		assert_true(r->outage.missing <= span);
		assert_true(r->n_outages <= TXS_RX_OUTAGE_EVENTS);
		check_bursts(&r->outage);
		txs_rx_result_free(r);
		txs_rx_core_destroy(c);
	}
}

static void many_outages_bounded(void **st)
{
	(void)st;
	/* more outages than kept per flow: counted, the oldest folded */
	struct txs_rx_core *c = mk(0);
	uint64_t t = T0, s = 0;
	for (unsigned k = 0; k < TXS_RX_OUTAGE_KEEP + 36; k++) {
		for (unsigned i = 0; i < 50; i++, s++, t += 100 * US)
			dg(c, 1, s, t, t);
		s += 10 + k % 3;
		t += (20 + k) * MS;
	}
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_int_equal(r->flows[0].outage.count, TXS_RX_OUTAGE_KEEP + 35);
	assert_int_equal(r->outage.count, TXS_RX_OUTAGE_KEEP + 35);
	assert_int_equal(r->outage.dropped, 35);
	/* the longest is the last: (20 + 98) ms + 100 us */
	assert_int_equal(dur(&r->outage.longest), (20 + TXS_RX_OUTAGE_KEEP + 34) * MS + 100 * US);
	assert_int_equal(r->outage.n_bursts, TXS_RX_OUTAGE_KEEP + 35);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

static void ia_histogram(void **st)
{
	(void)st;
	/* bins monotonic in the gap, a bin within 1/4 of its lower bound */
	unsigned prev = 0;
	for (uint64_t d = 0; d < (1ull << 41); d = d < 64 ? d + 1 : d + d / 7) {
		unsigned b = rx_ia_bin(d);
		assert_true(b < RX_IA_BINS);
		assert_true(b >= prev);
		prev = b;
	}
	struct rx_out o;
	memset(&o, 0, sizeof(o));
	assert_int_equal(rx_ia_median(&o), 0);
	o.ia[rx_ia_bin(100000)] = 10;
	o.ia[rx_ia_bin(5000000)] = 3;
	uint64_t m = rx_ia_median(&o);
	assert_true(m >= 87500 && m <= 112500);
	o.ia[rx_ia_bin(100000)] = UINT32_MAX - 1;
	rx_ia_halve(&o);
	assert_int_equal(o.ia[rx_ia_bin(100000)], (UINT32_MAX - 1) / 2);
	assert_int_equal(o.ia[rx_ia_bin(5000000)], 1);
}

static void clock_correction(void **st)
{
	(void)st;
	/* stamps 5 ms behind the receiver's clock, true latency 100 us: with
	 * the offset 4.9 ms given, latency reads 100 us; raw would be 5 ms */
	struct txs_rx_conf cf = { .clock_correct = true, .clock_offset_ns = 4900 * (int64_t)US };
	struct txs_rx_core *c;
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	uint64_t t = T0;
	for (uint64_t s = 0; s < 1000; s++, t += 100 * US)
		dg(c, 1, s, t - 5 * MS, t);
	struct txs_rx_result *r = build(&c, 1, NULL);
	assert_true(r->have_clock);
	assert_int_equal(r->clock_offset_ns, 4900 * (int64_t)US);
	assert_int_equal(r->lat.min, 100 * US);
	assert_int_equal(r->lat.max, 100 * US);
	assert_int_equal(r->lat_negative, 0);
	assert_int_equal(r->lat_past, 0);
	txs_rx_result_set_clock(r, 4900 * (int64_t)US, 20 * US, true, -3000, "option");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	txs_rx_result_text(f, r, NULL);
	fclose(f);
	assert_non_null(strstr(buf, "CORRECTED by offset +4900000 ns +- 20000 ns"));
	assert_non_null(strstr(buf, "drift -3000 ns"));
	free(buf);
	f = open_memstream(&buf, &len);
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_rx_result_json(&j, r, NULL);
	txs_json_end(&j);
	fclose(f);
	json_t *root = txs_jload(buf, len);
	assert_non_null(root);
	uint64_t u;
	double dv;
	assert_int_equal(txs_jget_u64(root, "clock.error_ns", &u), 0);
	assert_int_equal(u, 20 * US);
	assert_int_equal(txs_jget_dbl(root, "clock.offset_ns", &dv), 0);
	assert_int_equal((int64_t)dv, 4900 * (int64_t)US);
	assert_int_equal(txs_jget_dbl(root, "clock.drift_ns", &dv), 0);
	assert_int_equal((int64_t)dv, -3000);
	assert_int_equal(txs_jget_u64(root, "clock.raw_latency_ns.max", &u), 0);
	assert_int_equal(u, 5 * MS);
	assert_int_equal(txs_jget_u64(root, "outage.count", &u), 0);
	assert_int_equal(u, 0);
	json_decref(root);
	free(buf);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* a stamp that the offset puts after its arrival is negative latency,
	 * not one from the far past: 1 ms raw with a 4.9 ms offset. It is the
	 * offset's error, not skew: kept in the statistics at the floor 0 */
	assert_int_equal(txs_rx_core_create(&c, &cf), 0);
	dg(c, 1, 0, T0 - 1 * MS, T0);
	dg(c, 1, 1, T0 + 100 * US - 5 * MS, T0 + 100 * US);
	r = build(&c, 1, NULL);
	assert_int_equal(r->lat_negative, 1);
	assert_int_equal(r->lat_floored, 1);
	assert_int_equal(r->lat_past, 0);
	assert_int_equal(r->lat.count, 2); /* every sample */
	assert_int_equal(r->lat.min, 0);
	assert_int_equal(r->lat.max, 100 * US);
	f = open_memstream(&buf, &len);
	txs_rx_result_text(f, r, NULL);
	fclose(f);
	assert_non_null(strstr(buf, "1 samples below 0 once corrected (the clock offset's error), kept in the histogram at 0"));
	assert_null(strstr(buf, "clock skew, not in the histogram"));
	free(buf);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* one host, one clock: a measured offset within its error bound
	 * (+1118 +- 7590 ns, the issue's) is reported, not applied: every
	 * sample stays as stamped, none goes negative */
	struct txs_rx_conf cf3 = { .clock_correct = true, .clock_offset_ns = 1118, .clock_error_ns = 7590 };
	assert_int_equal(txs_rx_core_create(&c, &cf3), 0);
	t = T0;
	for (uint64_t s = 0; s < 1000; s++, t += 100 * US)
		dg(c, 1, s, t - 1000, t); /* 1 us each */
	r = build(&c, 1, NULL);
	assert_true(r->have_clock);
	assert_false(r->clock_applied);
	assert_int_equal(r->clock_offset_ns, 1118);
	assert_int_equal(r->lat.count, 1000);
	assert_int_equal(r->lat_negative, 0);
	assert_int_equal(r->lat.min, 1000);
	txs_rx_result_set_clock(r, 1118, 7590, false, 0, "control");
	assert_false(r->clock_applied);
	f = open_memstream(&buf, &len);
	txs_rx_result_text(f, r, NULL);
	fclose(f);
	assert_non_null(strstr(buf, "offset +1118 ns +- 7590 ns (control) is within its error: NOT applied"));
	free(buf);
	f = open_memstream(&buf, &len);
	txs_json_begin(&j, f);
	txs_rx_result_json(&j, r, NULL);
	txs_json_end(&j);
	fclose(f);
	root = txs_jload(buf, len);
	assert_non_null(root);
	assert_true(json_is_false(json_object_get(json_object_get(root, "clock"), "corrected")));
	assert_true(json_is_false(json_object_get(json_object_get(root, "clock"), "applied")));
	assert_int_equal(txs_jget_u64(root, "clock.raw_latency_ns.min", &u), 0);
	assert_int_equal(u, 1000); /* raw = as stamped */
	json_decref(root);
	free(buf);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
	/* beyond its error it is applied */
	cf3.clock_offset_ns = 9000;
	assert_int_equal(txs_rx_core_create(&c, &cf3), 0);
	dg(c, 1, 0, T0 - 10000, T0);
	r = build(&c, 1, NULL);
	assert_true(r->clock_applied);
	assert_int_equal(r->lat.min, 1000);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);

	/* without the flag no offset applies, whatever the field holds */
	struct txs_rx_conf cf2 = { .clock_offset_ns = 12345 };
	assert_int_equal(txs_rx_core_create(&c, &cf2), 0);
	dg(c, 1, 0, T0 - 5 * MS, T0);
	r = build(&c, 1, NULL);
	assert_false(r->have_clock);
	assert_int_equal(r->lat.min, 5 * MS);
	txs_rx_result_free(r);
	txs_rx_core_destroy(c);
}

T_MAIN(cmocka_unit_test(silence_with_loss),
       cmocka_unit_test(delay_is_no_outage),
       cmocka_unit_test(late_fill),
       cmocka_unit_test(reorder_after_silence),
       cmocka_unit_test(thresholds),
       cmocka_unit_test(run_merge),
       cmocka_unit_test(burst_classes),
       cmocka_unit_test(bursts_known),
       cmocka_unit_test(hostile),
       cmocka_unit_test(many_outages_bounded),
       cmocka_unit_test(ia_histogram),
       cmocka_unit_test(clock_correction))
