/* SPDX-License-Identifier: MIT */
/* Fuzz target: the receive analysis (lib/rx) fed by datagram SEQUENCES:
 * random flow ids, sequence numbers (in order, near, far, wild, the special
 * values 0, 2^32-1, 2^63, 2^64-1, ...), timestamps (fine, future, far past,
 * 0), header kinds and one or two cores. Every input is one run on fresh
 * cores; at its end the counting invariants are asserted:
 *   - received == unique + duplicates + late + unsequenced + overflow, per
 *     flow received == unique + duplicates + late;
 *   - lost <= the flow's plausible sequence span, span - unique on one core,
 *     and the span grows at most max_jump + 1 per unique packet;
 *   - no counter above the datagrams fed (+ the window where a window
 *     applies), resyncs <= seq-jumps / TXS_RX_RESYNC_CONFIRM;
 *   - histogram totals == samples: the buckets sum to count, count == sum of
 *     the flows' samples, every unique packet is exactly one of sample / no
 *     timestamp / skew, no sample above max_latency_ns;
 *   - the live provisional loss (gaps - reordered) is never negative;
 *   - with the sender's count (--expect), lost <= expected;
 *   - outages and loss bursts: counts within the flow's arrivals and span,
 *     burst classes summing to the burst count, on one core (exact) the
 *     bursts' lengths summing to the holes span - unique.
 *
 * Input: byte 0 configures (window 64 or 4096; max_jump 2^16, 2^61 or
 * default; one or two cores; max_latency 1 ms or default), then records:
 *   op  bits 0-1 header kind, 2-4 flow choice, 5-7 sequence choice;
 *   ... operands as the choices need them; then a timestamp byte.
 * Any violated property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>
#include "rx/rx_priv.h"

#include "fuzz_rx.h"

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint64_t rd(struct rd *r, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++) {
		v <<= 8;
		if (r->n) {
			v |= *r->p++;
			r->n--;
		}
	}
	return v;
}

static const uint64_t specials[] = {
	0, 1, 2, 63, 64, 4095, 4096, 0x7fffffffull, 0x80000000ull, 0xffffffffull, 0x100000000ull,
	1ull << 30, (1ull << 30) + 1, 1ull << 62, (1ull << 62) + 1, 1ull << 63, (1ull << 63) + 1,
	UINT64_MAX - 64, UINT64_MAX - 3, UINT64_MAX - 1, UINT64_MAX,
};

#define NF 8

static void check(struct txs_rx_core *const *cores, unsigned nc, uint64_t fed, uint64_t sequenced_fed)
{
	struct txs_rx_result *r;
	CHECK(txs_rx_result_build(&r, cores, nc, NULL) == 0);
	const struct txs_rx_conf *cf = &cores[0]->conf;
	CHECK(r->received == r->unique + r->duplicates + r->late + r->unsequenced + r->overflow);
	/* no counter above the datagrams fed */
	const uint64_t cnt[] = { r->received, r->unique, r->duplicates, r->reordered, r->late, r->malformed,
				 r->unsequenced, r->overflow, r->resyncs, r->lat.count, r->lat_none, r->lat_negative,
				 r->lat_past, r->extent_beyond };
	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++)
		CHECK(cnt[i] <= fed);
	CHECK(r->received + r->malformed <= fed);
	CHECK(r->extent_max <= fed + cf->window);
	CHECK(r->resyncs <= r->bad[TXS_RX_BAD_SEQ_JUMP] / TXS_RX_RESYNC_CONFIRM);
	CHECK(r->unique <= sequenced_fed + r->unsequenced);
	/* histogram totals == samples */
	uint64_t bsum = 0;
	for (unsigned b = 0; b < TXS_HIST_BUCKETS; b++)
		bsum += r->lat.b[b];
	CHECK(bsum == r->lat.count);
	CHECK(r->lat.count == 0 || r->lat.max <= cf->max_latency_ns);
	uint64_t samples = 0, sum_lost = 0, uniq_seq = 0;
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		samples += f->lat_count;
		if (!f->sequenced)
			continue;
		uniq_seq += f->unique;
		CHECK(f->received == f->unique + f->duplicates + f->late);
		CHECK(f->reordered <= f->unique);
		CHECK(f->lost <= f->span);
		CHECK(f->span / (cf->max_jump + 1) <= f->unique);
		if (f->cores == 1)
			CHECK(f->unique <= f->span && f->lost == f->span - f->unique);
		/* a flow merged by sequence sets: each core sampled the copies it
		 * counted unique, the others' now duplicates (as for the totals) */
		CHECK(f->lat_count <= f->unique + (f->merged_exact ? f->duplicates : 0));
		CHECK(f->lat_count == 0 || (f->lat_min <= f->lat_max && f->lat_max <= cf->max_latency_ns));
		CHECK(f->resyncs <= r->resyncs);
		/* outages and bursts: bounded by what the flow received and spans */
		const struct txs_rx_outage *o = &f->outage;
		uint64_t nb = 0;
		for (unsigned k = 0; k < TXS_RX_BURST_CLASSES; k++)
			nb += o->bursts[k];
		CHECK(nb == o->n_bursts && o->burst_max <= o->burst_lost);
		CHECK(o->count <= f->received && o->missing <= f->span);
		if (f->cores == 1 && o->bursts_exact)
			CHECK(o->burst_lost == f->span - f->unique);
		CHECK(!o->count || o->longest.end_ns >= o->longest.start_ns);
		sum_lost = sum_lost + f->lost < sum_lost ? UINT64_MAX : sum_lost + f->lost;
	}
	CHECK(samples == r->lat.count);
	CHECK(r->outage.count <= r->received && r->n_outages <= TXS_RX_OUTAGE_EVENTS);
	/* latency is sampled per core on the datagrams each counted unique: a
	 * sequence two cores both counted is one unique after the merge */
	CHECK(r->lat.count + r->lat_none + r->lat_negative + r->lat_past == uniq_seq + r->cross_duplicates);
	CHECK(r->lost == sum_lost);
	CHECK(!r->lost_exact);
	/* live counters: cumulative provisional loss never negative */
	for (unsigned k = 0; k < nc; k++) {
		struct txs_rx_live l;
		txs_rx_core_live(cores[k], &l);
		CHECK(l.gaps >= l.reordered);
	}
	fuzz_rx_write(r);
	txs_rx_result_free(r);

	/* with the sender's count: exact loss, bounded by it */
	struct txs_rx_expect *e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->have_total = true;
	e->total = sequenced_fed;
	e->n_flows = 4;
	for (unsigned k = 0; k < 3; k++)
		e->per_flow[k] = sequenced_fed / 4;
	e->per_flow[3] = sequenced_fed - 3 * (sequenced_fed / 4);
	CHECK(txs_rx_result_build(&r, cores, nc, e) == 0);
	CHECK(r->lost_exact);
	CHECK(r->lost <= e->total);
	CHECK(r->excess <= r->unique);
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		if (f->have_expected)
			CHECK(f->lost <= f->expected && f->lost + f->unique >= f->expected);
	}
	txs_rx_result_free(r);
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct rd in = { data + 1, size - 1 };
	unsigned cfgb = data[0];
	struct txs_rx_conf conf = {
		.window = cfgb & 1 ? 64 : 4096,
		/* 2^61: epochs reach their 2^62 limit within a few packets */
		.max_jump = cfgb & 16 ? 1ull << 61 : cfgb & 2 ? 1u << 16 : 0,
		.max_flows = 16,
		.max_latency_ns = cfgb & 8 ? 1000000 : 0,
	};
	unsigned nc = cfgb & 4 ? 2 : 1;
	struct txs_rx_core *cores[2] = { NULL, NULL };
	for (unsigned k = 0; k < nc; k++)
		CHECK(txs_rx_core_create(&cores[k], &conf) == 0);
	uint64_t model[NF] = { 0 };
	uint64_t now = 1700000000000000000ull;
	uint64_t fed = 0, sequenced = 0;
	struct txs_rx_tuple t = { 0 };
	t.src.family = AF_INET;
	t.dst.family = AF_INET;
	t.dport = 5201;
	while (in.n) {
		unsigned op = (unsigned)rd(&in, 1);
		unsigned kind = op & 3, fsel = (op >> 2) & 7, smode = (op >> 5) & 7;
		uint32_t flow = fsel < 6 ? fsel : fsel == 6 ? (uint32_t)rd(&in, 4) : (uint32_t)rd(&in, 1);
		uint64_t *m = &model[fsel];
		uint64_t seq;
		switch (smode) {
		case 0: seq = *m + 1; break;
		case 1: seq = *m + (uint64_t)(int64_t)(int8_t)rd(&in, 1); break;
		case 2: seq = rd(&in, 8); break;
		case 3: seq = specials[rd(&in, 1) % (sizeof(specials) / sizeof(specials[0]))]; break;
		case 4: seq = *m + rd(&in, 2) * 4096; break;
		case 5: seq = *m; break;
		case 6: seq = *m - rd(&in, 4); break;
		default: seq = *m + (rd(&in, 1) << 24); break;
		}
		*m = seq;
		unsigned tsel = (unsigned)rd(&in, 1);
		uint64_t ts;
		switch (tsel & 3) {
		case 0: ts = now - (uint64_t)(tsel >> 2) * 1000; break;
		case 1: ts = rd(&in, 8); break;
		case 2: ts = now + (uint64_t)(tsel >> 2) * 1000000; break;
		default: ts = 0; break;
		}
		unsigned core = nc > 1 ? (tsel >> 7) & 1 : 0;
		uint8_t p[32];
		size_t len;
		struct txs_ph ph = { .flow = flow, .seq = seq, .ts_ns = ts };
		switch (kind) {
		case 0: ph.kind = TXS_PH_FULL; len = 32; break;
		case 1: ph.kind = TXS_PH_COMPACT; len = 16; break;
		case 2: ph.kind = TXS_PH_FULL; len = TXS_PH_FULL_LEN; break;
		default: ph.kind = TXS_PH_NONE; len = (tsel & 4) ? 20 : 8; break; /* bad magic / unsequenced */
		}
		txs_ph_write(p, len, &ph);
		t.sport = (uint16_t)flow;
		txs_rx_dgram(cores[core], p, len, &t, 0, now);
		fed++;
		if (ph.kind != TXS_PH_NONE)
			sequenced++;
		now += 1000;
	}
	check(cores, nc, fed, sequenced);
	for (unsigned k = 0; k < nc; k++)
		txs_rx_core_destroy(cores[k]);
	return 0;
}
