/* SPDX-License-Identifier: MIT */
/* Merge per-core analysis into one result, then apply the sender's counts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "outage.h"

_Static_assert(sizeof(struct txs_rx_tuple) == 44, "tuple hashed as 40 bytes of addresses + 4 of ports");

struct mtab {
	uint64_t *hash;
	unsigned *idx;
	unsigned mask;
};

static int mtab_init(struct mtab *m, unsigned n)
{
	unsigned slots = 16;
	while (slots < n * 2)
		slots <<= 1;
	m->hash = calloc(slots, sizeof(*m->hash));
	m->idx = calloc(slots, sizeof(*m->idx));
	m->mask = slots - 1;
	return m->hash && m->idx ? 0 : -ENOMEM;
}

static void mtab_free(struct mtab *m)
{
	free(m->hash);
	free(m->idx);
}

static bool same_flow(const struct txs_rx_flow *a, const struct rx_flow *f)
{
	if (a->by_id != (f->key_kind == RX_KEY_ID))
		return false;
	if (a->by_id)
		return a->id == f->id;
	return memcmp(&a->tuple, &f->tuple, sizeof(a->tuple)) == 0;
}

/* A core's flow: its arrival span and the holes of its unique runs (a flow
 * on several cores: the cores' sums until merge_exact replaces them). */
static void flow_bursts(struct txs_rx_flow *d, const struct rx_flow *f, bool first)
{
	if (first)
		d->outage.bursts_exact = f->sequenced;
	if (f->out && f->out->first_arr) {
		if (!d->first_ns || f->out->first_arr < d->first_ns)
			d->first_ns = f->out->first_arr;
		if (f->last_arr > d->last_ns)
			d->last_ns = f->last_arr;
	}
	if (!f->sequenced)
		return;
	if (!first || f->runs_lost || f->span_closed || f->resyncs)
		d->outage.bursts_exact = false;
	rx_bursts_add(&d->outage, f->runs, f->n_runs, f->base, f->next);
	if (f->run_hi != f->run_lo) {
		struct rx_run nr = { f->run_lo, f->run_hi };
		uint64_t from = f->n_runs ? f->runs[f->n_runs - 1].hi : f->base;
		if (nr.lo - f->base > from - f->base)
			rx_burst_one(&d->outage, nr.lo - from);
	}
}

static void flow_add(struct txs_rx_flow *d, const struct rx_flow *f, bool first)
{
	if (first) {
		memset(d, 0, sizeof(*d));
		d->by_id = f->key_kind == RX_KEY_ID;
		d->id = f->id;
		d->tuple = f->tuple;
		d->sequenced = f->sequenced;
		d->kind = (enum txs_ph_kind)f->kind;
		d->lat_min = UINT64_MAX;
	}
	d->cores++;
	d->received += f->received;
	d->bytes += f->bytes;
	d->unique += f->unique;
	d->duplicates += f->dup;
	d->reordered += f->reordered;
	d->late += f->late;
	/* span: sequences the epochs covered; across cores the largest (the
	 * cores saw parts of one sequence space) */
	uint64_t span = f->span_closed + (f->next - f->base);
	if (span < f->span_closed)
		span = UINT64_MAX;
	if (first || span > d->span) {
		d->span = span;
		d->next_seq = f->next;
		d->first_seq = f->base;
	}
	d->resyncs += f->resyncs;
	d->extent_sum += f->extent_sum;
	d->extent_beyond += f->extent_beyond;
	if (f->extent_max > d->extent_max)
		d->extent_max = f->extent_max;
	/* jitter: the estimate of the core that saw most of the flow */
	if (f->jit_n > d->jitter_samples) {
		d->jitter_ns = f->jitter16 >> 4;
		d->jitter_samples = f->jit_n;
	}
	d->lat_count += f->lat_count;
	{
		__extension__ unsigned __int128 s = ((unsigned __int128)d->lat_sum_hi << 64 | d->lat_sum_lo) + f->lat_sum;
		d->lat_sum_lo = (uint64_t)s;
		d->lat_sum_hi = (uint64_t)(s >> 64);
	}
	if (f->lat_count && f->lat_min < d->lat_min)
		d->lat_min = f->lat_min;
	if (f->lat_max > d->lat_max)
		d->lat_max = f->lat_max;
	if (!d->kind)
		d->kind = (enum txs_ph_kind)f->kind;
	rx_out_flow_summary(f, &d->outage);
	flow_bursts(d, f, first);
}

static int cmp_flow(const void *pa, const void *pb)
{
	const struct txs_rx_flow *a = pa, *b = pb;
	if (a->by_id != b->by_id)
		return a->by_id ? -1 : 1;
	if (a->by_id)
		return a->id < b->id ? -1 : a->id > b->id;
	return a->received > b->received ? -1 : a->received < b->received;
}

static int cmp_run(const void *pa, const void *pb)
{
	const struct rx_run *a = pa, *b = pb;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* A flow seen by several cores: the union of the sequences each counted
 * unique is the flow's unique count, every other copy a duplicate, and the
 * span runs from the lowest epoch start to the highest sequence + 1 (one
 * epoch on every core; else the largest core's span stays). Returns false
 * when a core's set is incomplete (its run budget ran out) or no memory. */
static bool merge_exact(struct txs_rx_flow *d, const struct rx_flow *const *src, unsigned ns)
{
	size_t total = 0;
	bool one_epoch = true;
	for (unsigned k = 0; k < ns; k++) {
		if (src[k]->runs_lost || !src[k]->sequenced)
			return false;
		total += src[k]->n_runs + 1;
		one_epoch &= src[k]->span_closed == 0 && src[k]->resyncs == 0;
	}
	struct rx_run *all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return false;
	size_t na = 0;
	uint64_t sum_unique = 0, lo = UINT64_MAX, hi = 0;
	for (unsigned k = 0; k < ns; k++) {
		const struct rx_flow *f = src[k];
		if (f->n_runs)
			memcpy(&all[na], f->runs, f->n_runs * sizeof(*all));
		na += f->n_runs;
		if (f->run_hi != f->run_lo)
			all[na++] = (struct rx_run){ f->run_lo, f->run_hi };
		sum_unique += f->unique;
		if (f->base < lo)
			lo = f->base;
		if (f->next > hi)
			hi = f->next;
	}
	qsort(all, na, sizeof(*all), cmp_run);
	if (one_epoch && hi >= lo) {
		memset(d->outage.bursts, 0, sizeof(d->outage.bursts));
		d->outage.n_bursts = d->outage.burst_max = d->outage.burst_lost = 0;
		rx_bursts_add(&d->outage, all, na, lo, hi);
		d->outage.bursts_exact = true;
	}
	uint64_t uniq = 0, cur_lo = 0, cur_hi = 0;
	for (size_t i = 0; i < na; i++) {
		if (i == 0 || all[i].lo > cur_hi) {
			uniq += cur_hi - cur_lo;
			cur_lo = all[i].lo;
			cur_hi = all[i].hi;
		} else if (all[i].hi > cur_hi) {
			cur_hi = all[i].hi;
		}
	}
	uniq += cur_hi - cur_lo;
	free(all);
	if (uniq > sum_unique)
		return false; /* not reached: each run holds sequences a core counted unique */
	d->unique = uniq;
	d->duplicates += sum_unique - uniq;
	if (one_epoch && hi >= lo) {
		d->span = hi - lo;
		d->first_seq = lo;
		d->next_seq = hi;
	}
	d->merged_exact = true;
	return true;
}

static int merge_flows(struct txs_rx_result *r, struct txs_rx_core *const *cores, unsigned n,
		       const struct txs_rx_expect *e)
{
	unsigned total = e ? e->n_flows : 0, srcs = 0;
	for (unsigned i = 0; i < n; i++)
		srcs += cores[i]->n_flows;
	total += srcs;
	r->flows = calloc(total ? total : 1, sizeof(*r->flows));
	unsigned *into = malloc((srcs ? srcs : 1) * sizeof(*into)); /* core flow -> merged flow */
	struct mtab m = { 0 };
	if (!r->flows || !into || mtab_init(&m, total + 1) < 0) {
		mtab_free(&m);
		free(into);
		return -ENOMEM;
	}
	unsigned q = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct txs_rx_core *c = cores[i];
		for (unsigned k = 0; k < c->n_flows; k++) {
			const struct rx_flow *f = c->flows[k];
			unsigned s = (unsigned)f->hash & m.mask;
			for (; m.hash[s]; s = (s + 1) & m.mask)
				if (m.hash[s] == f->hash && same_flow(&r->flows[m.idx[s]], f))
					break;
			if (m.hash[s]) {
				flow_add(&r->flows[m.idx[s]], f, false);
			} else {
				m.hash[s] = f->hash;
				m.idx[s] = r->n_flows;
				flow_add(&r->flows[r->n_flows++], f, true);
			}
			into[q++] = m.idx[s];
		}
	}
	/* flows several cores saw (a flow the kernel moved between sockets, two
	 * senders on one flow id): merged by their sequence sets */
	for (unsigned j = 0; j < r->n_flows; j++) {
		struct txs_rx_flow *d = &r->flows[j];
		if (d->cores < 2)
			continue;
		r->split_flows++;
		const struct rx_flow *src[TXS_MAX_CORES];
		unsigned ns = 0;
		q = 0;
		for (unsigned i = 0; i < n; i++)
			for (unsigned k = 0; k < cores[i]->n_flows; k++, q++)
				if (into[q] == j && ns < TXS_MAX_CORES)
					src[ns++] = cores[i]->flows[k];
		uint64_t before = d->unique;
		if (!d->sequenced || !merge_exact(d, src, ns))
			r->split_inexact++;
		else
			r->cross_duplicates += before - d->unique;
	}
	free(into);
	/* flows the sender sent that never arrived */
	for (unsigned k = 0; e && k < e->n_flows; k++) {
		uint32_t id = e->flow_base + k;
		uint64_t h = rx_hash_id(id);
		unsigned s = (unsigned)h & m.mask;
		bool found = false;
		for (; m.hash[s] && !found; s = (s + 1) & m.mask)
			found = m.hash[s] == h && r->flows[m.idx[s]].by_id && r->flows[m.idx[s]].id == id;
		if (found || !e->per_flow[k])
			continue;
		struct txs_rx_flow *d = &r->flows[r->n_flows++];
		memset(d, 0, sizeof(*d));
		d->by_id = true;
		d->sequenced = true;
		d->id = id;
		d->lat_min = UINT64_MAX;
	}
	mtab_free(&m);
	qsort(r->flows, r->n_flows, sizeof(*r->flows), cmp_flow);
	return 0;
}

static void apply_expect(struct txs_rx_result *r, const struct txs_rx_expect *e)
{
	bool per_flow = e && e->n_flows > 0;
	uint64_t uniq = 0, lost = 0, excess = 0;
	for (unsigned i = 0; i < r->n_flows; i++) {
		struct txs_rx_flow *f = &r->flows[i];
		if (f->lat_min == UINT64_MAX)
			f->lat_min = 0;
		if (!f->sequenced) {
			uniq += f->received;
			continue;
		}
		uniq += f->unique;
		if (per_flow && f->by_id && f->id - e->flow_base < e->n_flows) {
			f->have_expected = true;
			f->expected = e->per_flow[f->id - e->flow_base];
			f->lost = f->expected > f->unique ? f->expected - f->unique : 0;
			f->excess = f->unique > f->expected ? f->unique - f->expected : 0;
		} else {
			/* the sender starts at 0: every sequence of the span not seen
			 * is missing; on one core unique <= span by construction,
			 * across cores (duplicates not detected there) clamped */
			f->lost = f->span > f->unique ? f->span - f->unique : 0;
			if (per_flow) {
				/* a flow the sender did not send: all excess, none lost */
				f->lost = 0;
				f->excess = f->unique;
			}
		}
		lost = lost + f->lost < lost ? UINT64_MAX : lost + f->lost; /* saturates */
		excess += f->excess;
	}
	r->lost_exact = false;
	if (e && e->have_total) {
		r->have_expected = true;
		r->expected = e->total;
		r->sender_drops = e->sender_drops;
		r->lost_exact = true;
		if (per_flow) {
			r->lost = lost;
			r->excess = excess;
		} else {
			r->lost = e->total > uniq ? e->total - uniq : 0;
			r->excess = uniq > e->total ? uniq - e->total : 0;
		}
	} else {
		r->lost = lost;
		r->excess = 0;
	}
}

static void merge_pairs(struct txs_rx_result *r, struct txs_rx_core *const *cores, unsigned n)
{
	unsigned total = 0;
	for (unsigned i = 0; i < n; i++)
		total += cores[i]->n_pairs;
	if (!total)
		return;
	r->pairs = calloc(total, sizeof(*r->pairs));
	struct txs_hist *h = malloc(sizeof(*h) * total);
	if (!r->pairs || !h) {
		free(h);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct txs_rx_core *c = cores[i];
		for (unsigned k = 0; k < c->n_pairs; k++) {
			const struct rx_pair *p = &c->pairs[k];
			unsigned j = 0;
			while (j < r->n_pairs && !(r->pairs[j].src.v4.s_addr == p->src && r->pairs[j].dst.v4.s_addr == p->dst))
				j++;
			struct txs_rx_idpair *d = &r->pairs[j];
			if (j == r->n_pairs) {
				r->n_pairs++;
				d->src.family = d->dst.family = AF_INET;
				d->src.v4.s_addr = p->src;
				d->dst.v4.s_addr = p->dst;
				txs_hist_init(&h[j]);
			}
			d->cores++;
			d->datagrams += p->datagrams;
			d->reuses += p->reuses;
			d->early += p->early;
			if (p->min_dist && (!d->min_distance || p->min_dist < d->min_distance))
				d->min_distance = p->min_dist;
			txs_hist_merge(&h[j], p->dist);
		}
	}
	for (unsigned j = 0; j < r->n_pairs; j++)
		r->pairs[j].p50_distance = txs_hist_quantile(&h[j], 0.5);
	free(h);
}

static uint64_t loss_ns(uint64_t lost, double rate)
{
	double v = rate > 0 ? (double)lost / rate * 1e9 : 0;
	return v < 1.8e19 ? (uint64_t)v : UINT64_MAX;
}

/* Loss bursts after the last arrival (the sender's count says how many),
 * each flow's rate and loss duration, and the run's figures. */
static int outage_totals(struct txs_rx_result *r, struct txs_rx_core *const *cores, unsigned n)
{
	struct txs_rx_outage *ro = &r->outage;
	uint64_t run_miss = 0;
	ro->bursts_exact = true;
	for (unsigned i = 0; i < r->n_flows; i++) {
		struct txs_rx_flow *f = &r->flows[i];
		struct txs_rx_outage *o = &f->outage;
		if (!f->sequenced)
			continue;
		if (f->have_expected && f->first_seq == 0 && f->expected > f->next_seq && !f->resyncs)
			rx_burst_one(o, f->expected - f->next_seq);
		if (!f->cores && f->have_expected) /* sent, never arrived */
			o->bursts_exact = true;
		uint64_t seqs = f->next_seq - f->first_seq;
		if (f->last_ns > f->first_ns && seqs > 1 && seqs < (1ull << 62))
			o->rate_pps = (double)(seqs - 1) / ((double)(f->last_ns - f->first_ns) / 1e9);
		/* missing: lost, or the holes when more (the sender's own drops
		 * are holes the expected count leaves out) */
		uint64_t holes = f->span > f->unique ? f->span - f->unique : 0;
		uint64_t miss = f->lost > holes ? f->lost : holes;
		o->loss_duration_ns = loss_ns(miss, o->rate_pps);
		run_miss = run_miss + miss < run_miss ? UINT64_MAX : run_miss + miss;
		ro->rate_pps += o->rate_pps;
		for (unsigned k = 0; k < TXS_RX_BURST_CLASSES; k++)
			ro->bursts[k] += o->bursts[k];
		ro->n_bursts += o->n_bursts;
		ro->burst_lost = ro->burst_lost + o->burst_lost < ro->burst_lost ? UINT64_MAX : ro->burst_lost + o->burst_lost;
		if (o->burst_max > ro->burst_max)
			ro->burst_max = o->burst_max;
		ro->bursts_exact &= o->bursts_exact;
	}
	ro->loss_duration_ns = loss_ns(run_miss > r->lost ? run_miss : r->lost, ro->rate_pps);
	for (unsigned i = 0; i < n; i++)
		if (cores[i]->conf.outage_min_ns > r->outage_min_ns)
			r->outage_min_ns = cores[i]->conf.outage_min_ns;
	return rx_out_run(r, cores, n);
}

TXS_API void txs_rx_result_set_clock(struct txs_rx_result *r, int64_t offset_ns, uint64_t error_ns, bool have_drift,
				     int64_t drift_ns, const char *source)
{
	if (!r->have_clock) /* no core corrected: an offset given to the report only */
		r->clock_applied = true;
	r->have_clock = true;
	r->clock_offset_ns = offset_ns;
	r->clock_error_ns = error_ns;
	r->have_drift = have_drift;
	r->clock_drift_ns = drift_ns;
	r->clock_source = source;
}

TXS_API void txs_rx_result_set_clock_method(struct txs_rx_result *r, const char *method)
{
	r->clock_method = method;
}

TXS_API int txs_rx_result_build(struct txs_rx_result **out, struct txs_rx_core *const *cores, unsigned n,
				const struct txs_rx_expect *e)
{
	*out = NULL;
	struct txs_rx_result *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	txs_hist_init(&r->lat);
	r->n_links = 1;
	for (unsigned i = 0; i < n; i++) {
		const struct txs_rx_core *c = cores[i];
		struct txs_rx_live l;
		txs_rx_core_live(c, &l);
		r->received += l.received;
		r->bytes += l.bytes;
		r->unique += l.unique;
		r->duplicates += l.duplicates;
		r->reordered += l.reordered;
		r->late += l.late;
		r->malformed += l.malformed;
		r->ignored += l.ignored;
		r->unsequenced += c->unsequenced;
		r->overflow += c->overflow;
		r->filtered += c->filtered;
		for (unsigned k = 0; k < TXS_PERR__COUNT; k++)
			r->perr[k] += c->perr[k];
		for (unsigned k = 0; k < TXS_RX_BAD__COUNT; k++)
			r->bad[k] += c->bad[k];
		txs_hist_merge(&r->lat, &c->lat);
		r->lat_none += c->lat_none;
		r->lat_negative += c->lat_negative;
		r->lat_past += c->lat_past;
		r->lat_floored += c->lat_floored;
		if (c->conf.max_latency_ns > r->max_latency_ns)
			r->max_latency_ns = c->conf.max_latency_ns;
		if (c->conf.clock_correct) {
			r->have_clock = true;
			r->clock_applied = c->clock_applied;
			r->clock_offset_ns = c->clock_measured_ns;
			r->clock_error_ns = c->conf.clock_error_ns;
		}
		if (c->conf.n_links > r->n_links)
			r->n_links = c->conf.n_links;
		for (unsigned k = 0; k < TXS_MAX_LINKS; k++) {
			r->links[k].packets += c->link[k].packets;
			r->links[k].bytes += c->link[k].bytes;
		}
		r->frag_v4 += c->frag_v4;
		r->frag_v4_first += c->frag_v4_first;
		r->frag_v6 += c->frag_v6;
		r->frag_v6_first += c->frag_v6_first;
		for (unsigned k = 0; k < 256; k++)
			r->tos[k] += c->tos[k];
		r->raw |= c->raw;
		r->id_pairs_overflow += c->id_pairs_overflow;
	}
	/* links: share and Jain's index (sum x)^2 / (n sum x^2) */
	double sx = 0, sxx = 0;
	for (unsigned k = 0; k < r->n_links; k++) {
		double x = (double)r->links[k].packets;
		sx += x;
		sxx += x * x;
	}
	for (unsigned k = 0; k < r->n_links; k++)
		r->links[k].share = sx > 0 ? r->links[k].packets / sx : 0;
	r->jain = sxx > 0 ? sx * sx / (r->n_links * sxx) : NAN;

	if (merge_flows(r, cores, n, e) < 0) {
		txs_rx_result_free(r);
		return -ENOMEM;
	}
	/* sequences two cores both counted unique: once unique, else duplicates */
	r->unique -= r->cross_duplicates < r->unique ? r->cross_duplicates : r->unique;
	r->duplicates += r->cross_duplicates;
	/* datagrams per payload length */
	uint64_t *sum = calloc(65536, sizeof(*sum));
	if (!sum) {
		txs_rx_result_free(r);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned l = 0; l < 65536; l++)
			sum[l] += cores[i]->size_pkts[l];
	for (unsigned l = 0; l < 65536; l++)
		r->n_sizes += sum[l] != 0;
	r->sizes = calloc(r->n_sizes ? r->n_sizes : 1, sizeof(*r->sizes));
	if (!r->sizes) {
		free(sum);
		txs_rx_result_free(r);
		return -ENOMEM;
	}
	for (unsigned l = 0, k = 0; l < 65536; l++)
		if (sum[l])
			r->sizes[k++] = (struct txs_rx_size){ .payload = l, .datagrams = sum[l], .bytes = sum[l] * l };
	free(sum);
	/* VLANs */
	for (unsigned i = 0; i < n; i++) {
		const struct txs_rx_core *c = cores[i];
		r->untagged += c->untagged;
		r->vlan_overflow += c->vlan_overflow;
		for (unsigned v = 0; v < c->n_vlan; v++) {
			uint32_t key = c->vlan[v].key;
			unsigned tags = key >> 24;
			uint16_t outer = (key >> 12) & 0xfff, inner = key & 0xfff;
			unsigned k = 0;
			while (k < r->n_vlans && !(r->vlans[k].tags == tags && r->vlans[k].outer == outer &&
						   r->vlans[k].inner == inner))
				k++;
			if (k == r->n_vlans) {
				struct txs_rx_vlan *nv = realloc(r->vlans, (k + 1) * sizeof(*nv));
				if (!nv) {
					txs_rx_result_free(r);
					return -ENOMEM;
				}
				r->vlans = nv;
				r->vlans[r->n_vlans++] = (struct txs_rx_vlan){ .tags = tags, .outer = outer, .inner = inner };
			}
			r->vlans[k].packets += c->vlan[v].packets;
			r->vlans[k].bytes += c->vlan[v].bytes;
		}
	}
	apply_expect(r, e);
	double wsum = 0;
	uint64_t wn = 0;
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		r->extent_sum += f->extent_sum;
		r->extent_beyond += f->extent_beyond;
		if (f->extent_max > r->extent_max)
			r->extent_max = f->extent_max;
		r->resyncs += f->resyncs;
		if (f->jitter_ns > r->jitter_max_ns)
			r->jitter_max_ns = f->jitter_ns;
		wsum += (double)f->jitter_ns * (double)f->jitter_samples;
		wn += f->jitter_samples;
	}
	r->jitter_ns = wn ? (uint64_t)(wsum / (double)wn) : 0;
	if (outage_totals(r, cores, n) < 0) {
		txs_rx_result_free(r);
		return -ENOMEM;
	}
	merge_pairs(r, cores, n);
	*out = r;
	return 0;
}

TXS_API void txs_rx_result_free(struct txs_rx_result *r)
{
	if (!r)
		return;
	free(r->flows);
	free(r->pairs);
	free(r->sizes);
	free(r->vlans);
	free(r->outages);
	free(r);
}
