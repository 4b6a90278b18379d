/* SPDX-License-Identifier: MIT */
/* Outages and loss bursts (docs/recv.md, "Outages").
 *
 * An outage of a flow is a silence between two of its arrivals longer than
 * the threshold (conf.outage_min_ns, else TXS_RX_OUTAGE_FACTOR x the flow's
 * median inter-arrival and at least TXS_RX_OUTAGE_FLOOR_NS) after which the
 * flow's sequence jumped ahead: the sequences skipped are missing inside it.
 * A silence after which the flow goes on in order (a delay, nothing lost) is
 * none. A late datagram that fills one of an outage's missing sequences
 * lowers its missing count; filled up, the outage is withdrawn.
 *
 * Loss bursts are the holes of a flow's set of unique sequences (the runs
 * rx.c keeps for the merge of split flows), read at result time: nothing per
 * datagram. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "outage.h"

TXS_API unsigned txs_rx_burst_class(uint64_t len)
{
	if (len <= 8)
		return len ? (unsigned)(len - 1) : 0;
	unsigned c = 64u - (unsigned)__builtin_clzll(len - 1); /* ceil(log2 len), 4..64 */
	return c + 4u;
}

TXS_API void txs_rx_burst_range(unsigned cls, uint64_t *lo, uint64_t *hi)
{
	if (cls < 8) {
		*lo = *hi = cls + 1;
		return;
	}
	if (cls >= TXS_RX_BURST_CLASSES)
		cls = TXS_RX_BURST_CLASSES - 1;
	unsigned e = cls - 4; /* 4..64 */
	*lo = (1ull << (e - 1)) + 1;
	*hi = e == 64 ? UINT64_MAX : 1ull << e;
}

void rx_ia_halve(struct rx_out *o)
{
	for (unsigned i = 0; i < RX_IA_BINS; i++)
		o->ia[i] >>= 1;
}

static uint64_t ia_bin_mid(unsigned b)
{
	if (b < 4)
		return 0; /* not used: bins of gap + 4 start at 4 */
	unsigned e = b / 4 + 1, m = b % 4;
	if (e >= 61)
		return 1ull << 62; /* beyond any threshold that matters (and no overflow below) */
	uint64_t lo = (uint64_t)(4 + m) << (e - 2);
	uint64_t w = 1ull << (e - 2);
	return lo + w / 2 - 4;
}

uint64_t rx_ia_median(const struct rx_out *o)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < RX_IA_BINS; i++)
		n += o->ia[i];
	if (!n)
		return 0;
	uint64_t half = (n + 1) / 2, acc = 0;
	for (unsigned i = 0; i < RX_IA_BINS; i++) {
		acc += o->ia[i];
		if (acc >= half)
			return ia_bin_mid(i);
	}
	return ia_bin_mid(RX_IA_BINS - 1);
}

static uint64_t ev_dur(const struct txs_rx_outage_ev *e)
{
	return e->end_ns - e->start_ns;
}

static void fold_old(struct rx_out *o, const struct txs_rx_outage_ev *e)
{
	o->old_count++;
	o->old_total_ns += ev_dur(e);
	o->old_missing += e->missing;
	if (o->old_count == 1 || ev_dur(e) > ev_dur(&o->old_longest))
		o->old_longest = *e;
}

static void record(struct txs_rx_core *c, struct rx_flow *f, const struct txs_rx_outage_ev *e)
{
	struct rx_out *o = f->out;
	TXS_STAT_ADD(c->live.outages, 1);
	TXS_STAT_ADD(c->live.outage_ns, ev_dur(e));
	if (!o->ev && !o->ev_nomem) {
		o->ev = malloc(TXS_RX_OUTAGE_KEEP * sizeof(*o->ev));
		o->ev_nomem = !o->ev;
	}
	if (!o->ev) {
		fold_old(o, e); /* counted, but no late datagram can fill it */
		return;
	}
	if (o->n_ev == TXS_RX_OUTAGE_KEEP) {
		fold_old(o, &o->ev[0]);
		memmove(o->ev, o->ev + 1, (TXS_RX_OUTAGE_KEEP - 1) * sizeof(*o->ev));
		o->n_ev--;
	}
	o->ev[o->n_ev++] = *e;
}

void rx_out_slow(struct txs_rx_core *c, struct rx_flow *f, uint64_t s, uint64_t nx, unsigned v, uint64_t ts)
{
	/* unique and ahead of the next expected: sequences were skipped */
	bool ahead = v == 0 && s - nx - 1 < c->conf.max_jump;
	struct rx_out *o = f->out;
	uint64_t last = f->last_arr;
	f->last_arr = ts;
	uint64_t before = f->last_seq;
	f->last_seq = s;
	if (!last) {
		o->first_arr = ts;
		return;
	}
	if (ts < last)
		return; /* the clock stepped back: no gap to measure */
	uint64_t dt = ts - last;
	if (ahead) {
		uint64_t thr = c->conf.outage_min_ns;
		if (!thr) {
			uint64_t med = rx_ia_median(o);
			thr = med > TXS_RX_OUTAGE_FLOOR_NS / TXS_RX_OUTAGE_FACTOR ? med * TXS_RX_OUTAGE_FACTOR
										 : TXS_RX_OUTAGE_FLOOR_NS; /* med <= 2^62 */
		}
		o->threshold_ns = thr;
		if (dt > thr) {
			struct txs_rx_outage_ev e = {
				.start_ns = last,
				.end_ns = ts,
				.before_seq = before,
				.after_seq = s,
				.missing_from = nx,
				.missing = s - nx, /* <= max_jump: the ahead test */
				.flow = f->key_kind == RX_KEY_ID ? f->id : 0,
				.flows = 1,
			};
			record(c, f, &e);
		}
	}
	if (TXS_UNLIKELY(++o->ia[rx_ia_bin(dt)] == UINT32_MAX))
		rx_ia_halve(o);
}

void rx_out_fill(struct txs_rx_core *c, struct rx_flow *f, uint64_t s)
{
	struct rx_out *o = f->out;
	for (unsigned i = o->n_ev; i-- > 0;) {
		struct txs_rx_outage_ev *e = &o->ev[i];
		if (s - e->missing_from >= e->after_seq - e->missing_from)
			continue;
		/* a unique sequence fills its hole once: missing never goes below 0 */
		if (e->missing)
			e->missing--;
		if (!e->missing) { /* all of it arrived late: a delay, not an outage */
			TXS_STAT_ADD(c->live.outages, (uint64_t)0 - 1);
			TXS_STAT_ADD(c->live.outage_ns, (uint64_t)0 - ev_dur(e));
			memmove(e, e + 1, (o->n_ev - i - 1) * sizeof(*e));
			o->n_ev--;
		}
		return;
	}
}

static void longest_max(struct txs_rx_outage *d, const struct txs_rx_outage_ev *e)
{
	if (!d->count || ev_dur(e) > ev_dur(&d->longest))
		d->longest = *e;
}

/* Add one core's flow to a merged flow's outage figures. */
void rx_out_flow_summary(const struct rx_flow *f, struct txs_rx_outage *d)
{
	const struct rx_out *o = f->out;
	if (!o)
		return;
	if (o->old_count) {
		longest_max(d, &o->old_longest);
		d->count += o->old_count;
		d->total_ns += o->old_total_ns;
		d->missing += o->old_missing;
	}
	for (unsigned i = 0; i < o->n_ev; i++) {
		longest_max(d, &o->ev[i]);
		d->count++;
		d->total_ns += ev_dur(&o->ev[i]);
		d->missing += o->ev[i].missing;
	}
	if (o->threshold_ns > d->threshold_ns)
		d->threshold_ns = o->threshold_ns;
}

void rx_burst_one(struct txs_rx_outage *d, uint64_t len)
{
	d->bursts[txs_rx_burst_class(len)]++;
	d->n_bursts++;
	d->burst_lost = d->burst_lost + len < d->burst_lost ? UINT64_MAX : d->burst_lost + len;
	if (len > d->burst_max)
		d->burst_max = len;
}

void rx_bursts_add(struct txs_rx_outage *d, const struct rx_run *runs, size_t n, uint64_t base, uint64_t next)
{
	uint64_t span = next - base, cur = 0; /* offsets into [base, next) */
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = runs[i].lo - base, hi = runs[i].hi - base;
		if (lo >= span || hi > span || hi <= lo)
			continue; /* an earlier epoch's run */
		if (lo > cur)
			rx_burst_one(d, lo - cur);
		if (hi > cur)
			cur = hi;
	}
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct txs_rx_outage_ev *a = pa, *b = pb;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The run's outages: every flow's kept outages by start time, those that
 * overlap in time merged into one. */
int rx_out_run(struct txs_rx_result *r, struct txs_rx_core *const *cores, unsigned n)
{
	struct txs_rx_outage *d = &r->outage;
	size_t total = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < cores[i]->n_flows; k++) {
			const struct rx_out *o = cores[i]->flows[k]->out;
			if (!o)
				continue;
			total += o->n_ev;
			d->dropped += o->old_count;
			if (o->old_count)
				longest_max(d, &o->old_longest);
			d->count += o->old_count;
			d->total_ns += o->old_total_ns;
			d->missing += o->old_missing;
			if (o->threshold_ns > d->threshold_ns)
				d->threshold_ns = o->threshold_ns;
		}
	if (!total)
		return 0;
	struct txs_rx_outage_ev *all = malloc(total * sizeof(*all));
	if (!all)
		return -ENOMEM;
	size_t na = 0;
	for (unsigned i = 0; i < n; i++)
		for (unsigned k = 0; k < cores[i]->n_flows; k++) {
			const struct rx_out *o = cores[i]->flows[k]->out;
			if (o && o->n_ev) {
				memcpy(all + na, o->ev, o->n_ev * sizeof(*all));
				na += o->n_ev;
			}
		}
	qsort(all, na, sizeof(*all), cmp_ev);
	r->outages = calloc(TXS_RX_OUTAGE_EVENTS, sizeof(*r->outages));
	if (!r->outages) {
		free(all);
		return -ENOMEM;
	}
	struct txs_rx_outage_ev cur = all[0];
	for (size_t i = 1; i <= na; i++) {
		if (i < na && all[i].start_ns <= cur.end_ns) {
			if (all[i].end_ns > cur.end_ns) {
				cur.end_ns = all[i].end_ns;
				cur.after_seq = all[i].after_seq;
			}
			cur.missing += all[i].missing;
			cur.flows++;
			continue;
		}
		if (cur.flows > 1)
			cur.flow = 0;
		longest_max(d, &cur);
		d->count++;
		d->total_ns += ev_dur(&cur);
		d->missing += cur.missing;
		if (r->n_outages < TXS_RX_OUTAGE_EVENTS)
			r->outages[r->n_outages++] = cur;
		if (i < na)
			cur = all[i];
	}
	free(all);
	return 0;
}
