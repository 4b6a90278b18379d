/* SPDX-License-Identifier: MIT */
/* The STAMP session-sender's analysis (docs/stamp.md, "What the sender
 * reports"): per packet the local send time and the reflector's sequence
 * number it came back with; at the end loss, duplicates and reordering per
 * direction, the four-timestamp delays and the clock offset of the fastest
 * exchange. Everything read off the wire is checked against what we sent:
 * a reply for a sequence number we did not send, or a reflector number out
 * of all proportion, is foreign and counted, never indexed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/stamp.h>
#include "stamp_priv.h"

#define NO_R UINT32_MAX
#define MAX_RTT_NS 3600000000000ll

struct rec {
	uint64_t t1;
	uint32_t r;    /* reflector's seq minus its base; NO_R: no reply */
	uint32_t rtop; /* the highest of its numbers (a duplicate reflected twice has two) */
};

struct samples {
	int64_t *v;
	size_t n, cap;
};

struct txs_stamp_ana {
	uint32_t seq0;
	struct rec *rec;
	size_t n_sent, cap;
	bool have_base, stateful;
	uint32_t rbase;
	uint32_t *by_r; /* reflector index -> our index (NO_R: none) */
	size_t r_cap;
	uint64_t r_max; /* highest reflector index + 1 */
	uint64_t received, dup_f, dup_b, reorder_b, foreign, bad_time;
	uint64_t renumbered; /* replies whose reflector number another of ours had: its count restarted */
	uint32_t max_r_seen, max_seq_seen;
	bool any;
	uint64_t first_t1, last_t4;
	struct samples rtt, fwd, bwd;
	bool clock_valid;
	uint64_t clock_rtt;
	int64_t clock_off;
	int cos_dscp, cos_ecn;
};

static int push(struct samples *s, int64_t v)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		int64_t *p = realloc(s->v, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = nc;
	}
	s->v[s->n++] = v;
	return 0;
}

struct txs_stamp_ana *txs_stamp_ana_new(uint32_t seq0)
{
	struct txs_stamp_ana *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->seq0 = seq0;
	a->cos_dscp = a->cos_ecn = -1;
	return a;
}

void txs_stamp_ana_free(struct txs_stamp_ana *a)
{
	if (!a)
		return;
	free(a->rec);
	free(a->by_r);
	free(a->rtt.v);
	free(a->fwd.v);
	free(a->bwd.v);
	free(a);
}

int txs_stamp_ana_sent(struct txs_stamp_ana *a, uint32_t seq, uint64_t t1_ns)
{
	size_t i = (uint32_t)(seq - a->seq0);
	if (i != a->n_sent)
		return -EINVAL; /* in order, one by one */
	if (i == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 4096;
		struct rec *p = realloc(a->rec, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		a->rec = p;
		a->cap = nc;
	}
	a->rec[i] = (struct rec){ t1_ns, NO_R, 0 };
	a->n_sent++;
	if (i == 0)
		a->first_t1 = t1_ns;
	return 0;
}

bool txs_stamp_ana_answered(const struct txs_stamp_ana *a, uint32_t seq)
{
	size_t i = (uint32_t)(seq - a->seq0);
	return i < a->n_sent && a->rec[i].r != NO_R;
}

static int r_slot(struct txs_stamp_ana *a, size_t ri)
{
	if (ri < a->r_cap)
		return 0;
	size_t nc = a->r_cap ? a->r_cap : 4096;
	while (nc <= ri)
		nc *= 2;
	uint32_t *p = realloc(a->by_r, nc * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t k = a->r_cap; k < nc; k++)
		p[k] = NO_R;
	a->by_r = p;
	a->r_cap = nc;
	return 0;
}

/* The reflector's timestamps are checked for sense before they count */
static void stamps(struct txs_stamp_ana *a, const struct txs_stamp_pkt *p, uint64_t t1, uint64_t t4)
{
	int64_t t2 = (int64_t)txs_stamp_ns_from_ts(p->rx_ts, p->err);
	int64_t t3 = (int64_t)txs_stamp_ns_from_ts(p->ts, p->err);
	int64_t hold = t3 - t2;
	int64_t rtt = (int64_t)(t4 - t1) - hold;
	if (t4 < t1 || hold < 0 || hold > MAX_RTT_NS || rtt < 0 || rtt > MAX_RTT_NS) {
		a->bad_time++;
		return;
	}
	int64_t f = t2 - (int64_t)t1, b = (int64_t)t4 - t3;
	if (push(&a->rtt, rtt) || push(&a->fwd, f) || push(&a->bwd, b)) {
		a->bad_time++; /* out of memory: the sample is lost, counted */
		return;
	}
	if (!a->clock_valid || (uint64_t)rtt < a->clock_rtt) {
		a->clock_valid = true;
		a->clock_rtt = (uint64_t)rtt;
		/* theta = ((T2 - T1) + (T3 - T4)) / 2: the reflector's clock minus ours */
		a->clock_off = (f - b) / 2;
	}
}

/* The Class of Service TLV the reflector returned: the DSCP and ECN it got */
static void reply_tlvs(struct txs_stamp_ana *a, const uint8_t *buf, size_t len, size_t off)
{
	while (off + 4 <= len) {
		size_t vlen = txs_get_be16(buf + off + 2);
		if (vlen > len - off - 4 || (!buf[off] && !buf[off + 1] && !vlen))
			return;
		if (buf[off + 1] == TXS_STAMP_TLV_COS && vlen >= 4 && !(buf[off] & TXS_STAMP_TLV_U)) {
			a->cos_dscp = ((buf[off + 4] & 3) << 4) | buf[off + 5] >> 4;
			a->cos_ecn = (buf[off + 5] >> 2) & 3;
		}
		off += 4 + vlen;
	}
}

void stamp_ana_reply_tlvs(struct txs_stamp_ana *a, const uint8_t *buf, size_t len, size_t base)
{
	reply_tlvs(a, buf, len, base);
}

int txs_stamp_ana_reply(struct txs_stamp_ana *a, const struct txs_stamp_pkt *p, uint64_t t4_ns)
{
	size_t i = (uint32_t)(p->s_seq - a->seq0);
	if (i >= a->n_sent) {
		a->foreign++;
		return -ERANGE;
	}
	if (!a->have_base) {
		if (i != 0) { /* the first exchange fixes the reflector's base */
			a->foreign++;
			return -ERANGE;
		}
		a->have_base = true;
		a->rbase = p->seq;
		a->stateful = p->seq != p->s_seq;
	}
	struct rec *rc = &a->rec[i];
	uint32_t ri;
	if (a->stateful) {
		ri = p->seq - a->rbase;
		/* a reflector counts what it receives: never far past what we sent */
		if ((uint64_t)ri >= 2 * (uint64_t)a->n_sent + 64 || r_slot(a, ri)) {
			a->foreign++;
			return -ERANGE;
		}		if (a->by_r[ri] != NO_R && a->by_r[ri] != (uint32_t)i) {
			/* the number another of our packets came back with: not a
			 * duplicate (that echoes the same packet) but a reflector whose
			 * count restarted (or is shared): the packet arrived, the split
			 * per direction is lost */
			a->renumbered++;
			if (rc->r != NO_R) {
				a->dup_b++;
				return 0;
			}
			goto take;
		}
		if (a->by_r[ri] != NO_R) { /* this reply twice: duplicated on the way back */
			a->dup_b++;
			return 0;
		}
		a->by_r[ri] = (uint32_t)i;
		if ((uint64_t)ri + 1 > a->r_max)
			a->r_max = (uint64_t)ri + 1;
		if (rc->r != NO_R) { /* reflected twice under two numbers: duplicated on the way there */
			a->dup_f++;
			if (ri > rc->rtop)
				rc->rtop = ri;
			return 0;
		}
		if (a->any && ri < a->max_r_seen)
			a->reorder_b++;
		if (!a->any || ri > a->max_r_seen)
			a->max_r_seen = ri;
	} else {
		ri = (uint32_t)i;
		if (rc->r != NO_R) { /* a stateless reflector: which way is not known */
			a->dup_b++;
			return 0;
		}
		if (a->any && ri < a->max_r_seen)
			a->reorder_b++;
		if (!a->any || ri > a->max_r_seen)
			a->max_r_seen = ri;
	}
take:
	a->any = true;
	rc->r = ri;
	rc->rtop = ri;
	a->received++;
	if (t4_ns > a->last_t4)
		a->last_t4 = t4_ns;
	stamps(a, p, rc->t1, t4_ns);
	return 0;
}

/* ---- the result ---------------------------------------------------------------------- */

static int cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static int64_t rank(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/* The distribution of n sorted samples, each shifted by add */
static void dist(struct txs_stamp_dist *d, const int64_t *v, size_t n, int64_t add)
{
	memset(d, 0, sizeof(*d));
	d->count = n;
	if (!n)
		return;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	d->mean = sum / (double)n + (double)add;
	d->min = v[0] + add;
	d->max = v[n - 1] + add;
	d->p50 = rank(v, n, 0.50) + add;
	d->p90 = rank(v, n, 0.90) + add;
	d->p99 = rank(v, n, 0.99) + add;
	d->p999 = rank(v, n, 0.999) + add;
}

/* Counts of one analysis into r (added) */
static void counts(const struct txs_stamp_ana *a, struct txs_stamp_result *r)
{
	r->sent += a->n_sent;
	r->received += a->received;
	r->lost += a->n_sent - a->received;
	r->foreign += a->foreign;
	r->bad_time += a->bad_time;
	if (!a->stateful) {
		r->reflected += a->received;
		r->dup_backward += a->dup_b;
		r->reorder_backward += a->reorder_b;
		return;
	}
	uint64_t at_refl = a->r_max - a->dup_f; /* distinct packets the reflector got */
	r->reflected += a->r_max;
	if (at_refl > a->n_sent || a->renumbered || a->received > at_refl) {
		/* it numbered more than we sent, gave one number to two of our
		 * packets, or fewer numbers than we received: its numbers are not
		 * this session's alone (a counter shared by sessions, one that
		 * restarted mid-run, or a liar): no split */
		r->split_inconsistent = true;
		r->dup_backward += a->dup_b;
		r->reorder_backward += a->reorder_b;
		return;
	}
	r->lost_forward += a->n_sent - at_refl;
	r->lost_backward += a->r_max - (a->received + a->dup_f);
	r->dup_forward += a->dup_f;
	r->dup_backward += a->dup_b;
	r->reorder_backward += a->reorder_b;
	/* forward reordering: in the reflector's order, our numbers going back */
	uint32_t hi = 0;
	bool seen = false;
	for (uint64_t k = 0; k < a->r_max; k++) {
		uint32_t s = a->by_r[k];
		if (s == NO_R)
			continue;
		if (seen && s < hi)
			r->reorder_forward++;
		if (!seen || s > hi)
			hi = s;
		seen = true;
	}
	/* gaps between answered packets (in our order): how many of each gap the
	 * reflector numbered (lost backward) and how many it never got (forward) */
	uint64_t prev_i = 0, prev_r = 0;
	bool have = false;
	for (uint64_t i = 0; i <= a->n_sent; i++) {
		bool end = i == a->n_sent;
		if (!end && a->rec[i].r == NO_R)
			continue;
		uint64_t ri = end ? a->r_max : a->rec[i].r;
		uint64_t gap = have ? i - prev_i - 1 : i;
		uint64_t back = ri > (have ? prev_r + 1 : 0) ? ri - (have ? prev_r + 1 : 0) : 0;
		if (back > gap)
			back = gap;
		uint64_t fwd = gap - back;
		/* how long it lasted: from the answered packet before it to the one after
		 * (or to the last packet sent), at most one of the gap's own intervals
		 * past its last lost packet: a tail probe answered a second after the
		 * last (lost) packet does not make a second-long outage */
		uint64_t t_a = have ? a->rec[prev_i].t1 : a->rec[0].t1;
		uint64_t t_b = end ? a->rec[a->n_sent - 1].t1 : a->rec[i].t1;
		if (gap && i >= 1) {
			uint64_t t_last = a->rec[i - 1].t1;
			uint64_t cap = t_last + (t_last > t_a ? (t_last - t_a) / gap : 0);
			if (t_b > cap)
				t_b = cap;
		}
		uint64_t dur = t_b > t_a ? t_b - t_a : 0;
		if (fwd) {
			r->outages_forward++;
			if (fwd > r->longest_forward)
				r->longest_forward = fwd;
			if (dur > r->longest_forward_ns)
				r->longest_forward_ns = dur;
		}
		if (back) {
			r->outages_backward++;
			if (back > r->longest_backward)
				r->longest_backward = back;
			if (dur > r->longest_backward_ns)
				r->longest_backward_ns = dur;
		}
		if (end)
			break;
		prev_i = i;
		prev_r = a->rec[i].rtop;
		have = true;
	}
}

int txs_stamp_ana_result_n(struct txs_stamp_ana *const *a, unsigned n, struct txs_stamp_result *r)
{
	memset(r, 0, sizeof(*r));
	r->cos_dscp = r->cos_ecn = -1;
	r->stateful = n > 0;
	r->split_exact = n > 0;
	size_t ns = 0;
	uint64_t t0 = UINT64_MAX, t4 = 0;
	for (unsigned k = 0; k < n; k++) {
		const struct txs_stamp_ana *x = a[k];
		if (!x->stateful)
			r->stateful = false;
		if (!x->n_sent || x->rec[x->n_sent - 1].r == NO_R)
			r->split_exact = false;
		counts(x, r);
		ns += x->rtt.n;
		if (x->n_sent && x->first_t1 < t0)
			t0 = x->first_t1;
		if (x->last_t4 > t4)
			t4 = x->last_t4;
		if (x->clock_valid && (!r->clock_valid || x->clock_rtt < r->clock_rtt_ns)) {
			r->clock_valid = true;
			r->clock_rtt_ns = x->clock_rtt;
			r->clock_offset_ns = x->clock_off;
			r->clock_error_ns = (int64_t)(x->clock_rtt / 2);
		}
		if (x->cos_dscp >= 0) {
			r->cos_dscp = x->cos_dscp;
			r->cos_ecn = x->cos_ecn;
		}
	}
	if (!r->stateful || r->split_inconsistent) {
		r->split_exact = false;
		r->lost_forward = r->lost_backward = 0;
		r->dup_forward = r->reorder_forward = 0;
		r->outages_forward = r->outages_backward = 0;
		r->longest_forward = r->longest_backward = 0;
	}
	if (t4 > t0)
		r->secs = (double)(t4 - t0) / 1e9;
	int64_t *v = malloc((ns ? ns : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int which = 0; which < 3; which++) {
		size_t m = 0;
		for (unsigned k = 0; k < n; k++) {
			const struct samples *s = which == 0 ? &a[k]->rtt : which == 1 ? &a[k]->fwd : &a[k]->bwd;
			if (s->n)
				memcpy(v + m, s->v, s->n * sizeof(*v));
			m += s->n;
		}
		qsort(v, m, sizeof(*v), cmp64);
		if (which == 0) {
			dist(&r->rtt, v, m, 0);
		} else if (which == 1) {
			dist(&r->fwd, v, m, 0);
			dist(&r->fwd_corr, v, m, r->clock_valid ? -r->clock_offset_ns : 0);
		} else {
			dist(&r->bwd, v, m, 0);
			dist(&r->bwd_corr, v, m, r->clock_valid ? r->clock_offset_ns : 0);
		}
	}
	free(v);
	return 0;
}

int txs_stamp_ana_result(struct txs_stamp_ana *a, struct txs_stamp_result *r)
{
	return txs_stamp_ana_result_n(&a, 1, r);
}

void stamp_ana_count_foreign(struct txs_stamp_ana *a)
{
	a->foreign++;
}

void stamp_ana_progress(const struct txs_stamp_ana *a, uint64_t *sent, uint64_t *received, size_t *samples)
{
	*sent = a->n_sent;
	*received = a->received;
	*samples = a->rtt.n;
}

int stamp_ana_rtt_range(const struct txs_stamp_ana *a, size_t from, size_t to, struct txs_stamp_dist *d)
{
	if (to > a->rtt.n)
		to = a->rtt.n;
	size_t n = to > from ? to - from : 0;
	int64_t *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (n)
		memcpy(v, a->rtt.v + from, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp64);
	dist(d, v, n, 0);
	free(v);
	return 0;
}
