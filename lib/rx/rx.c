/* SPDX-License-Identifier: MIT */
/* Per-core receive analysis: the per-packet path.
 *
 * Per flow, sequence numbers are tracked with a sliding bitmap of `window`
 * bits covering [next - window, next), next = highest sequence seen + 1:
 *   s == next          in order: set the bit (fast path)
 *   s >  next          a gap of s - next: clear the skipped bits, advance
 *   next-window <= s   set bit: duplicate; clear bit: reordered (RFC 4737,
 *                      s below the next expected), fills a hole
 *   s < next-window    late: fell out of the window, cannot tell duplicate
 *                      from original; counted, never unique
 * so at any time a flow's holes are span - unique, and with the sender's count
 * loss is exact: expected - unique.
 *
 * Arithmetic is modular (mod 2^64) with plausibility bounds: a sequence more
 * than max_jump ahead of next, more than max_jump behind it, or before the
 * epoch's base is implausible (malformed seq-jump, the flow untouched); a
 * flow starts with base = next = 0, so its first packet meets the same rule.
 * TXS_RX_RESYNC_CONFIRM implausible packets in a row (each at most 64 after
 * the previous) resync the flow: a new epoch begins after them. Every unique
 * sequence lies in [base, next), so unique <= span and no hole count can
 * wrap; an epoch never spans 2^62 sequences.
 *
 * RFC 4737 reordering extent of a reordered packet arriving at index i is
 * i - j, j the earliest arrival with a larger sequence number. That arrival
 * is always one where the running maximum grew, so the flow keeps a ring of
 * the last TXS_RX_EXTENT_RING such events (index and sequence both increase)
 * and binary-searches it; an extent reaching past the ring is counted as
 * "beyond" instead. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx_iperf2.h>
#include <txscale/rx_iperf3.h>
#include "common/alloc.h"
#include "common/counters.h"
#include "outage.h"

#define EV_MASK (TXS_RX_EXTENT_RING - 1)

static const char *const bad_names[TXS_RX_BAD__COUNT] = {
	[TXS_RX_BAD_MAGIC] = "bad-magic",
	[TXS_RX_BAD_SEQ_JUMP] = "seq-jump",
	[TXS_RX_BAD_FILL] = "fill",
	[TXS_RX_BAD_PCAP_RECORD] = "pcap-record",
};

TXS_API const char *txs_rx_bad_str(enum txs_rx_bad b)
{
	return (unsigned)b < TXS_RX_BAD__COUNT ? bad_names[b] : "unknown";
}

TXS_API int txs_rx_core_create(struct txs_rx_core **out, const struct txs_rx_conf *conf)
{
	*out = NULL;
	struct txs_rx_conf cf = conf ? *conf : (struct txs_rx_conf){ 0 };
	if (!cf.window)
		cf.window = TXS_RX_WINDOW_DEFAULT;
	if (!cf.max_flows)
		cf.max_flows = TXS_RX_MAX_FLOWS_DEFAULT;
	if (!cf.max_jump)
		cf.max_jump = TXS_RX_MAX_JUMP_DEFAULT;
	if (!cf.max_latency_ns)
		cf.max_latency_ns = TXS_RX_MAX_LATENCY_DEFAULT;
	if (!cf.n_links)
		cf.n_links = 1;
	if (!cf.clock_correct)
		cf.clock_offset_ns = 0;
	if (!cf.max_id_pairs)
		cf.max_id_pairs = TXS_RX_ID_PAIRS_DEFAULT;
	if (cf.window < 64 || cf.window > TXS_RX_WINDOW_MAX || (cf.window & (cf.window - 1)) ||
	    cf.max_flows > (1u << 22) || cf.max_jump >= (1ull << 62) || cf.max_latency_ns >= (1ull << 62) || cf.n_links > TXS_MAX_LINKS || cf.max_id_pairs > 4096 ||
	    (cf.family && cf.family != AF_INET && cf.family != AF_INET6) || cf.payload > TXS_RX_PAYLOAD_IPERF2 ||
	    (cf.dst.family && cf.dst.family != AF_INET && cf.dst.family != AF_INET6))
		return -EINVAL;
	struct txs_rx_core *c = txs_zalloc_line(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->clock_measured_ns = cf.clock_offset_ns;
	if (cf.clock_correct) {
		/* an offset within its error bound is reported, not applied */
		uint64_t mag = cf.clock_offset_ns < 0 ? (uint64_t)0 - (uint64_t)cf.clock_offset_ns : (uint64_t)cf.clock_offset_ns;
		c->clock_applied = !(cf.clock_error_ns && mag <= cf.clock_error_ns);
		if (!c->clock_applied)
			cf.clock_offset_ns = 0;
	}
	c->conf = cf;
	c->out_floor = cf.outage_min_ns ? cf.outage_min_ns : TXS_RX_OUTAGE_FLOOR_NS;
	c->window = cf.window;
	c->words = cf.window / 64;
	c->wmask = c->words - 1;
	unsigned slots = 16;
	while (slots < cf.max_flows * 2)
		slots <<= 1;
	c->tab = calloc(slots, sizeof(*c->tab));
	c->tab_mask = slots - 1;
	c->flows = calloc(cf.max_flows, sizeof(*c->flows));
	c->pairs = calloc(cf.max_id_pairs, sizeof(*c->pairs));
	c->size_pkts = calloc(65536, sizeof(*c->size_pkts)); /* pages touched only by the sizes seen */
	txs_hist_init(&c->lat);
	if (!c->tab || !c->flows || !c->pairs || !c->size_pkts) {
		txs_rx_core_destroy(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

TXS_API void txs_rx_core_destroy(struct txs_rx_core *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->flows && i < c->n_flows; i++) {
		if (c->flows[i]->out)
			free(c->flows[i]->out->ev);
		free(c->flows[i]->runs);
		free(c->flows[i]);
	}
	free(c->size_pkts);
	for (unsigned i = 0; c->pairs && i < c->n_pairs; i++) {
		free(c->pairs[i].last);
		free(c->pairs[i].dist);
	}
	free(c->pairs);
	free(c->flows);
	free(c->tab);
	free(c);
}

TXS_API void txs_rx_core_live(const struct txs_rx_core *c, struct txs_rx_live *o)
{
	TXS_COUNTERS(read, o, &c->live);
}

TXS_API void txs_rx_count_perr(struct txs_rx_core *c, enum txs_perr e, uint64_t n)
{
	if ((unsigned)e >= TXS_PERR__COUNT || e == TXS_PERR_OK)
		return;
	c->perr[e] += n;
	if (e == TXS_PERR_NOT_IP || e == TXS_PERR_NOT_UDP || e == TXS_PERR_FRAGMENT)
		TXS_STAT_ADD(c->live.ignored, n);
	else
		TXS_STAT_ADD(c->live.malformed, n);
}

TXS_API void txs_rx_count_bad(struct txs_rx_core *c, enum txs_rx_bad b, uint64_t n)
{
	if ((unsigned)b >= TXS_RX_BAD__COUNT)
		return;
	c->bad[b] += n;
	TXS_STAT_ADD(c->live.malformed, n);
}

/* ---- flow table -------------------------------------------------------------- */
#define mix64 rx_mix64
#define hash_id rx_hash_id

static uint64_t hash_tuple(const struct txs_rx_tuple *t)
{
	uint64_t w[6];
	memcpy(w, t, 40);
	uint64_t h = RX_KEY_TUPLE;
	for (int i = 0; i < 5; i++)
		h = mix64(h ^ w[i]);
	uint32_t ports;
	memcpy(&ports, (const uint8_t *)t + 40, 4);
	return mix64(h ^ ports) | 1;
}

static void tuple_from_pkt(struct txs_rx_tuple *t, const struct rx_pkt *k)
{
	memset(t, 0, sizeof(*t));
	t->src.family = k->family;
	t->dst.family = k->family;
	size_t al = k->family == AF_INET ? 4 : 16;
	memcpy(t->src.bytes, k->src, al);
	memcpy(t->dst.bytes, k->dst, al);
	t->sport = k->sport;
	t->dport = k->dport;
}

static void tuple_norm(struct txs_rx_tuple *t, const struct txs_rx_tuple *in)
{
	memset(t, 0, sizeof(*t));
	if (!in)
		return;
	t->src.family = in->src.family;
	t->dst.family = in->dst.family;
	memcpy(t->src.bytes, in->src.bytes, in->src.family == AF_INET ? 4 : in->src.family == AF_INET6 ? 16 : 0);
	memcpy(t->dst.bytes, in->dst.bytes, in->dst.family == AF_INET ? 4 : in->dst.family == AF_INET6 ? 16 : 0);
	t->sport = in->sport;
	t->dport = in->dport;
}

static __attribute__((noinline, cold)) struct rx_flow *flow_new(struct txs_rx_core *c, unsigned slot, uint64_t h,
								 uint8_t key_kind, uint32_t id,
								 const struct txs_rx_tuple *t)
{
	if (c->n_flows >= c->conf.max_flows)
		return NULL;
	size_t head = (sizeof(struct rx_flow) + 63) & ~(size_t)63;
	bool seqd = key_kind == RX_KEY_ID || c->conf.payload != TXS_RX_PAYLOAD_TXSCALE; /* iperf3: by 5-tuple */
	size_t bits = seqd ? (size_t)c->words * 8 : 0;
	size_t ev = seqd ? TXS_RX_EXTENT_RING * sizeof(struct rx_ev) : 0;
	size_t out = seqd ? sizeof(struct rx_out) : 0;
	size_t total = (head + bits + ev + out + TXS_CACHE_LINE - 1) & ~(size_t)(TXS_CACHE_LINE - 1);
	struct rx_flow *f = aligned_alloc(TXS_CACHE_LINE, total); /* C11: size a multiple of the alignment */
	if (!f)
		return NULL;
	memset(f, 0, head + bits);
	if (bits) {
		f->bits = (uint64_t *)((uint8_t *)f + head);
		f->ev = (struct rx_ev *)((uint8_t *)f + head + bits);
		f->out = (struct rx_out *)((uint8_t *)f + head + bits + ev);
		memset(f->out, 0, sizeof(*f->out));
		f->sequenced = true;
	}
	f->key_kind = key_kind;
	f->id = id;
	f->hash = h;
	f->lat_min = UINT64_MAX;
	f->tuple = *t;
	c->tab[slot].hash = h;
	c->tab[slot].f = f;
	c->flows[c->n_flows++] = f;
	return f;
}

static inline struct rx_flow *flow_by_id(struct txs_rx_core *c, uint32_t id, const struct rx_pkt *pi,
					 const struct txs_rx_tuple *t)
{
	if (TXS_LIKELY(c->last && c->last_id == id))
		return c->last;
	uint64_t h = hash_id(id);
	unsigned i = (unsigned)h & c->tab_mask;
	for (;; i = (i + 1) & c->tab_mask) {
		struct rx_slot *s = &c->tab[i];
		if (!s->hash)
			break;
		if (s->hash == h && s->f->key_kind == RX_KEY_ID && s->f->id == id) {
			c->last = s->f;
			c->last_id = id;
			return s->f;
		}
	}
	struct txs_rx_tuple tt;
	if (pi)
		tuple_from_pkt(&tt, pi);
	else
		tuple_norm(&tt, t);
	struct rx_flow *f = flow_new(c, i, h, RX_KEY_ID, id, &tt);
	if (f) {
		c->last = f;
		c->last_id = id;
	}
	return f;
}

static struct rx_flow *flow_by_tuple(struct txs_rx_core *c, const struct rx_pkt *pi,
				     const struct txs_rx_tuple *t)
{
	struct txs_rx_tuple tt;
	if (pi)
		tuple_from_pkt(&tt, pi);
	else
		tuple_norm(&tt, t);
	uint64_t h = hash_tuple(&tt);
	unsigned i = (unsigned)h & c->tab_mask;
	for (;; i = (i + 1) & c->tab_mask) {
		struct rx_slot *s = &c->tab[i];
		if (!s->hash)
			break;
		if (s->hash == h && s->f->key_kind == RX_KEY_TUPLE && memcmp(&s->f->tuple, &tt, sizeof(tt)) == 0)
			return s->f;
	}
	return flow_new(c, i, h, RX_KEY_TUPLE, 0, &tt);
}

/* ---- the set of unique sequences, as runs ------------------------------------------ */
/* Insert [lo, hi) into the sorted array, merging with neighbours it touches. */
static void runs_insert(struct txs_rx_core *c, struct rx_flow *f, uint64_t lo, uint64_t hi)
{
	if (f->runs_lost)
		return;
	uint32_t a = 0, b = f->n_runs;
	while (a < b) { /* first run with runs[i].lo > lo */
		uint32_t m = (a + b) / 2;
		if (f->runs[m].lo > lo)
			b = m;
		else
			a = m + 1;
	}
	uint32_t i = a;
	bool prev = i > 0 && f->runs[i - 1].hi >= lo, next = i < f->n_runs && hi >= f->runs[i].lo;
	if (prev && next) {
		if (f->runs[i].hi > f->runs[i - 1].hi)
			f->runs[i - 1].hi = f->runs[i].hi;
		memmove(&f->runs[i], &f->runs[i + 1], (f->n_runs - i - 1) * sizeof(*f->runs));
		f->n_runs--;
		return;
	}
	if (prev) {
		if (hi > f->runs[i - 1].hi)
			f->runs[i - 1].hi = hi;
		return;
	}
	if (next) {
		f->runs[i].lo = lo;
		if (hi > f->runs[i].hi)
			f->runs[i].hi = hi;
		return;
	}
	if (f->n_runs == f->cap_runs) {
		uint32_t cap = f->cap_runs ? f->cap_runs * 2 : 16;
		struct rx_run *r = c->runs_total + cap - f->cap_runs > RX_RUNS_MAX ? NULL
				  : realloc(f->runs, cap * sizeof(*r));
		if (!r) {
			f->runs_lost = true; /* the merge of this flow stays per core (inexact) */
			return;
		}
		c->runs_total += cap - f->cap_runs;
		f->runs = r;
		f->cap_runs = cap;
	}
	memmove(&f->runs[i + 1], &f->runs[i], (f->n_runs - i) * sizeof(*f->runs));
	f->runs[i] = (struct rx_run){ lo, hi };
	f->n_runs++;
}

/* s became unique and does not extend the newest run at its end. */
static __attribute__((noinline)) void run_add_slow(struct txs_rx_core *c, struct rx_flow *f, uint64_t s)
{
	if (f->run_lo == f->run_hi) {
		f->run_lo = s;
		f->run_hi = s + 1;
	} else if (s + 1 == f->run_lo) {
		f->run_lo = s;
		if (f->n_runs && f->runs[f->n_runs - 1].hi == s) { /* closes the hole to the previous run */
			f->run_lo = f->runs[--f->n_runs].lo;
		}
	} else if (s > f->run_hi) {
		runs_insert(c, f, f->run_lo, f->run_hi);
		f->run_lo = s;
		f->run_hi = s + 1;
	} else {
		runs_insert(c, f, s, s + 1);
	}
}

static inline void run_add(struct txs_rx_core *c, struct rx_flow *f, uint64_t s)
{
	if (TXS_LIKELY(f->run_hi == s && f->run_lo != s))
		f->run_hi = s + 1;
	else
		run_add_slow(c, f, s);
}

/* ---- sequence ------------------------------------------------------------------ */
enum seq_verdict { SEQ_UNIQUE = 0, SEQ_DUP, SEQ_LATE, SEQ_REJECT }; /* 0: rx_out_arrive's unique */

/* Extend a 32-bit compact sequence to 64 bits: the value nearest to next
 * (within -2^31..2^31), never below 0. */
static inline uint64_t seq_extend32(uint64_t next, uint32_t s32)
{
	uint64_t cand = (next & ~0xffffffffull) | s32;
	int64_t d = (int64_t)(cand - next);
	if (d >= (int64_t)0x80000000ll && cand >= 0x100000000ull)
		cand -= 0x100000000ull;
	else if (d < -(int64_t)0x80000000ll)
		cand += 0x100000000ull;
	return cand;
}

static inline void ev_push(struct rx_flow *f, uint64_t idx, uint64_t s)
{
	struct rx_ev *e = &f->ev[f->ev_head & EV_MASK];
	e->idx = idx;
	e->seq = s;
	f->ev_head++;
}

/* Clear the bits of sequences [from, from + n), n < window. */
static void bits_clear(struct txs_rx_core *c, uint64_t *bits, uint64_t from, uint64_t n)
{
	while (n) {
		uint64_t pos = from & (c->window - 1);
		unsigned bit = (unsigned)(pos & 63);
		uint64_t take = 64 - bit < n ? 64 - bit : n;
		uint64_t m = take == 64 ? ~0ull : ((1ull << take) - 1) << bit;
		bits[pos >> 6] &= ~m;
		from += take;
		n -= take;
	}
}

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* End the flow's epoch and start an empty one at `at`: the sequences the old
 * one covered stay in the flow's span, the window and the extent history
 * start afresh. */
static void epoch_new(struct txs_rx_core *c, struct rx_flow *f, uint64_t at)
{
	f->span_closed = sat_add(f->span_closed, f->next - f->base);
	memset(f->bits, 0, (size_t)c->words * 8);
	f->base = at;
	f->next = at;
	f->ev_head = 0;
	f->cand_n = 0;
}

/* An implausible sequence: counted as malformed by the caller, the flow is
 * untouched, unless it is the TXS_RX_RESYNC_CONFIRM-th in a row of a run
 * (each at most 64 after the previous): then the flow resyncs, its new epoch
 * starting after the run. */
static __attribute__((noinline, cold)) enum seq_verdict seq_implausible(struct txs_rx_core *c, struct rx_flow *f,
									 uint64_t s)
{
	if (f->cand_n && s - f->cand < 64)
		f->cand_n++;
	else
		f->cand_n = 1;
	f->cand = s + 1;
	if (f->cand_n >= TXS_RX_RESYNC_CONFIRM) {
		epoch_new(c, f, s + 1);
		f->resyncs++;
	}
	return SEQ_REJECT;
}

/* 0 < gap = s - next <= max_jump */
static __attribute__((noinline)) enum seq_verdict seq_ahead(struct txs_rx_core *c, struct rx_flow *f, uint64_t s,
							    uint64_t gap, uint64_t idx)
{
	f->cand_n = 0;
	if (TXS_UNLIKELY(s - f->base >= TXS_RX_EPOCH_MAX)) {
		/* the span stays below 2^62 per epoch, so it never wraps */
		epoch_new(c, f, s);
		gap = 0;
	}
	if (gap >= c->window)
		memset(f->bits, 0, (size_t)c->words * 8);
	else
		bits_clear(c, f->bits, f->next, gap);
	f->bits[(s >> 6) & c->wmask] |= 1ull << (s & 63);
	f->next = s + 1;
	ev_push(f, idx, s);
	TXS_STAT_ADD(c->live.gaps, gap);
	return SEQ_UNIQUE;
}

/* s behind next by more than 0, or ahead by more than max_jump */
static __attribute__((noinline)) enum seq_verdict seq_behind(struct txs_rx_core *c, struct rx_flow *f, uint64_t s,
							     uint64_t idx)
{
	uint64_t back = f->next - s;
	/* implausible: far behind, or before the epoch began (a first packet
	 * "behind" sequence 0, a sequence the flow never reached) */
	if (back > c->conf.max_jump || s - f->base >= f->next - f->base)
		return seq_implausible(c, f, s);
	f->cand_n = 0;
	if (back > c->window)
		return SEQ_LATE;
	uint64_t *w = &f->bits[(s >> 6) & c->wmask];
	uint64_t m = 1ull << (s & 63);
	if (*w & m)
		return SEQ_DUP;
	*w |= m;
	f->reordered++;
	TXS_STAT_ADD(c->live.reordered, 1);
	if (f->out->n_ev)
		rx_out_fill(c, f, s);
	/* extent: earliest max-event with seq > s (one exists: next - 1 > s);
	 * compared as offsets into the epoch, so a wrap of 2^64 inside it is fine */
	uint64_t so = s - f->base;
	uint64_t nev = f->ev_head < TXS_RX_EXTENT_RING ? f->ev_head : TXS_RX_EXTENT_RING;
	uint64_t oldest = f->ev_head - nev;
	uint64_t lo = 0, hi = nev;
	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;
		if (f->ev[(oldest + mid) & EV_MASK].seq - f->base > so)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0 && oldest > 0) {
		f->extent_beyond++;
	} else if (lo < nev) {
		uint64_t e = idx - f->ev[(oldest + lo) & EV_MASK].idx;
		f->extent_sum += e;
		if (e > f->extent_max)
			f->extent_max = e;
	}
	return SEQ_UNIQUE;
}

/* Modular sequence arithmetic with a window (docs/recv.md): in order, ahead
 * by at most max_jump, behind inside the epoch by at most max_jump; anything
 * else is implausible. Every unique sequence lies in [base, next), so a
 * flow's unique count never exceeds its span. */
static inline enum seq_verdict seq_in(struct txs_rx_core *c, struct rx_flow *f, uint64_t s)
{
	uint64_t idx = f->received;
	if (TXS_LIKELY(s == f->next)) {
		f->bits[(s >> 6) & c->wmask] |= 1ull << (s & 63);
		f->next = s + 1;
		f->cand_n = 0;
		ev_push(f, idx, s);
		run_add(c, f, s);
		return SEQ_UNIQUE;
	}
	uint64_t gap = s - f->next;
	enum seq_verdict v = gap <= c->conf.max_jump ? seq_ahead(c, f, s, gap, idx) : seq_behind(c, f, s, idx);
	if (v == SEQ_UNIQUE)
		run_add(c, f, s);
	return v;
}

/* ---- latency ----------------------------------------------------------------- */
static inline void jit_in(struct rx_flow *f, uint64_t transit);

static inline void lat_in(struct txs_rx_core *c, struct rx_flow *f, uint64_t arr, uint64_t sent)
{
	if (TXS_UNLIKELY(!arr || !sent)) {
		c->lat_none++;
		return;
	}
	uint64_t transit = arr - sent - (uint64_t)c->conf.clock_offset_ns; /* mod 2^64 */
	uint64_t lim = c->conf.max_latency_ns;
	if (TXS_LIKELY(transit <= lim)) {
		txs_hist_add_fast(&c->lat, transit);
		f->lat_count++;
		f->lat_sum += transit;
		if (transit < f->lat_min)
			f->lat_min = transit;
		if (transit > f->lat_max)
			f->lat_max = transit;
	} else {
		/* clock skew, counted apart: stamped after arrival (once the
		 * clock offset is taken off), or so long before it that no
		 * network held the packet that long */
		__extension__ typedef __int128 s128;
		if ((s128)arr - (s128)sent - (s128)c->conf.clock_offset_ns < 0) {
			c->lat_negative++;
			if (c->clock_applied && transit >= (uint64_t)0 - lim) {
				/* below zero once corrected: the offset's error, not skew;
				 * kept in the statistics at the floor 0 (said in the report) */
				c->lat_floored++;
				txs_hist_add_fast(&c->lat, 0);
				f->lat_count++;
				f->lat_min = 0;
				jit_in(f, transit);
				return;
			}
		} else {
			c->lat_past++;
		}
		/* the transit beyond +-lim is no clock offset either: no jitter */
		if (transit < (uint64_t)0 - lim)
			return;
	}
	jit_in(f, transit);
}

/* RFC 3550 6.4.1 / A.8: J += (|D| - J) / 16, kept scaled by 16; works with
 * offset clocks since only differences of transit times enter (|D| capped
 * at 2^40 ns) */
static inline void jit_in(struct rx_flow *f, uint64_t transit)
{
	if (TXS_LIKELY(f->have_transit)) {
		uint64_t d = transit - (uint64_t)f->last_transit; /* wraps, never overflows */
		uint64_t ad = d >> 63 ? (uint64_t)0 - d : d;
		if (ad > (1ull << 40))
			ad = 1ull << 40;
		f->jitter16 = f->jitter16 - ((f->jitter16 + 8) >> 4) + ad;
	}
	f->last_transit = (int64_t)transit;
	f->have_transit = true;
	f->jit_n++;
}

/* ---- payload ------------------------------------------------------------------- */
static bool fill_ok(const uint8_t *p, size_t from, size_t len)
{
	for (size_t i = from; i < len; i++)
		if (p[i] != (uint8_t)i)
			return false;
	return true;
}

static inline void count_rx(struct txs_rx_core *c, unsigned link, size_t len)
{
	TXS_STAT_ADD(c->live.received, 1);
	TXS_STAT_ADD(c->live.bytes, len);
	c->link[link].packets++;
	c->link[link].bytes += len;
}

static __attribute__((noinline)) void payload_nohdr(struct txs_rx_core *c, const uint8_t *p, size_t len,
						    unsigned link, const struct rx_pkt *pi,
						    const struct txs_rx_tuple *t)
{
	if (len >= TXS_PH_COMPACT_LEN) {
		txs_rx_count_bad(c, TXS_RX_BAD_MAGIC, 1);
		return;
	}
	if (c->conf.verify_fill && !fill_ok(p, 0, len)) {
		txs_rx_count_bad(c, TXS_RX_BAD_FILL, 1);
		return;
	}
	count_rx(c, link, len);
	struct rx_flow *f = flow_by_tuple(c, pi, t);
	if (!f) {
		c->overflow++;
		return;
	}
	c->unsequenced++;
	f->received++;
	f->bytes += len;
	c->size_pkts[len & 0xffff]++;
}

/* Count one sequenced datagram of flow f (nx: its next expected before
 * this one; ts: arrival, 0 = unknown): its verdict (a rejected one is
 * counted as malformed, nothing else). */
static inline __attribute__((always_inline)) enum seq_verdict seq_count(struct txs_rx_core *c, struct rx_flow *f,
									   uint64_t s, uint64_t nx, uint64_t ts,
									   size_t len, unsigned link)
{
	enum seq_verdict v = seq_in(c, f, s);
	switch (v) {
	case SEQ_UNIQUE:
		f->unique++;
		TXS_STAT_ADD(c->live.unique, 1);
		break;
	case SEQ_DUP:
		f->dup++;
		TXS_STAT_ADD(c->live.duplicates, 1);
		break;
	case SEQ_LATE:
		f->late++;
		TXS_STAT_ADD(c->live.late, 1);
		break;
	case SEQ_REJECT:
		txs_rx_count_bad(c, TXS_RX_BAD_SEQ_JUMP, 1);
		return v;
	}
	if (TXS_LIKELY(ts))
		rx_out_arrive(c, f, s, nx, v, ts);
	f->received++;
	f->bytes += len;
	c->size_pkts[len & 0xffff]++;
	count_rx(c, link, len);
	return v;
}

/* iperf3's header (sec, usec, sequence from 1), flows by 5-tuple */
static __attribute__((noinline)) void payload_ip3(struct txs_rx_core *c, const uint8_t *p, size_t len,
						  unsigned link, uint64_t ts, const struct rx_pkt *pi,
						  const struct txs_rx_tuple *t)
{
	bool c64 = c->conf.payload == TXS_RX_PAYLOAD_IPERF3_64;
	uint32_t sec, usec;
	uint64_t seq;
	if (txs_ip3_hdr_read(p, len, c64, &sec, &usec, &seq) < 0 || seq == 0) {
		txs_rx_count_bad(c, TXS_RX_BAD_MAGIC, 1);
		return;
	}
	struct rx_flow *f = flow_by_tuple(c, pi, t);
	if (TXS_UNLIKELY(!f)) {
		count_rx(c, link, len);
		c->overflow++;
		return;
	}
	uint64_t nx = f->next;
	uint64_t s = c64 ? seq - 1 : seq_extend32(nx, (uint32_t)(seq - 1));
	enum seq_verdict v = seq_count(c, f, s, nx, ts, len, link);
	if (v == SEQ_UNIQUE) {
		c->lat_none++; /* no one-way latency from a monotonic stamp */
		if (ts)
			jit_in(f, ts - ((uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull));
	}
}

/* iperf 2's header (txscale/rx_iperf2.h): id from 1, the sender's
 * CLOCK_REALTIME (one-way latency); a negative id (2.1's, 2.0's spellings)
 * ends the test (the client sends it again until the server reports): a
 * datagram of its flow without a data sequence. Flows by 5-tuple. */
static __attribute__((noinline)) void payload_ip2(struct txs_rx_core *c, const uint8_t *p, size_t len,
						  unsigned link, uint64_t ts, const struct rx_pkt *pi,
						  const struct txs_rx_tuple *t)
{
	int64_t id;
	uint32_t sec, usec;
	if (txs_ip2_hdr_read(p, len, 0, &id, &sec, &usec) < 0) { /* (the end's magnitude is not used) */
		txs_rx_count_bad(c, TXS_RX_BAD_MAGIC, 1);
		return;
	}
	struct rx_flow *f = flow_by_tuple(c, pi, t);
	if (TXS_UNLIKELY(!f)) {
		count_rx(c, link, len);
		c->overflow++;
		return;
	}
	if (id < 0) { /* the end-of-test datagram */
		count_rx(c, link, len);
		c->unsequenced++;
		f->received++;
		f->bytes += len;
		c->size_pkts[len & 0xffff]++;
		return;
	}
	uint64_t nx = f->next;
	enum seq_verdict v = seq_count(c, f, (uint64_t)id - 1, nx, ts, len, link);
	if (v == SEQ_UNIQUE)
		lat_in(c, f, ts, (uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull);
}

static inline __attribute__((always_inline)) void payload_in(struct txs_rx_core *c, const uint8_t *p, size_t len, unsigned link, uint64_t ts,
			      const struct rx_pkt *pi, const struct txs_rx_tuple *t)
{
	if (TXS_UNLIKELY(c->conf.payload != TXS_RX_PAYLOAD_TXSCALE)) {
		if (c->conf.payload == TXS_RX_PAYLOAD_IPERF2)
			payload_ip2(c, p, len, link, ts, pi, t);
		else
			payload_ip3(c, p, len, link, ts, pi, t);
		return;
	}
	struct txs_ph ph;
	enum txs_ph_kind k = rx_ph_read(p, len, &ph);
	if (TXS_UNLIKELY(k == TXS_PH_NONE)) {
		payload_nohdr(c, p, len, link, pi, t);
		return;
	}
	if (TXS_UNLIKELY(c->conf.verify_fill) && !fill_ok(p, txs_ph_len(k), len)) {
		txs_rx_count_bad(c, TXS_RX_BAD_FILL, 1);
		return;
	}
	struct rx_flow *f = flow_by_id(c, ph.flow, pi, t);
	if (TXS_UNLIKELY(!f)) {
		count_rx(c, link, len);
		c->overflow++;
		return;
	}
	uint64_t s = ph.seq;
	uint64_t nx = f->next;
	if (k == TXS_PH_COMPACT)
		s = seq_extend32(nx, (uint32_t)s);
	enum seq_verdict v = seq_count(c, f, s, nx, ts, len, link);
	if (v == SEQ_REJECT)
		return;
	f->kind = (uint8_t)k;
	if (v == SEQ_UNIQUE)
		lat_in(c, f, ts, ph.ts_ns);
}

/* ---- IP layer -------------------------------------------------------------------- */
static __attribute__((noinline)) struct rx_pair *pair_new(struct txs_rx_core *c, uint32_t src, uint32_t dst)
{
	if (c->n_pairs >= c->conf.max_id_pairs) {
		c->id_pairs_overflow++;
		return NULL;
	}
	struct rx_pair *p = &c->pairs[c->n_pairs];
	p->last = calloc(65536, sizeof(*p->last));
	p->dist = malloc(sizeof(*p->dist));
	if (!p->last || !p->dist) {
		free(p->last);
		free(p->dist);
		p->last = NULL;
		p->dist = NULL;
		c->id_pairs_overflow++;
		return NULL;
	}
	txs_hist_init(p->dist);
	p->src = src;
	p->dst = dst;
	c->n_pairs++;
	return p;
}

static inline __attribute__((always_inline)) void id_in(struct txs_rx_core *c, const uint8_t *srcp, const uint8_t *dstp, uint16_t ip_id)
{
	uint32_t src, dst;
	memcpy(&src, srcp, 4);
	memcpy(&dst, dstp, 4);
	struct rx_pair *p = c->last_pair;
	if (TXS_UNLIKELY(!p || p->src != src || p->dst != dst)) {
		p = NULL;
		for (unsigned i = 0; i < c->n_pairs; i++)
			if (c->pairs[i].src == src && c->pairs[i].dst == dst) {
				p = &c->pairs[i];
				break;
			}
		if (!p && !(p = pair_new(c, src, dst)))
			return;
		c->last_pair = p;
	}
	uint64_t idx = ++p->datagrams;
	uint64_t prev = p->last[ip_id];
	p->last[ip_id] = idx;
	if (TXS_LIKELY(!prev))
		return;
	uint64_t d = idx - prev;
	p->reuses++;
	if (d < 65536)
		p->early++;
	if (!p->min_dist || d < p->min_dist)
		p->min_dist = d;
	txs_hist_add_fast(p->dist, d);
}

static inline bool filter_ok(const struct txs_rx_core *c, int family, const uint8_t *dst, uint16_t dport)
{
	if (c->conf.port && (dport < c->conf.port || dport > (c->conf.port_hi ? c->conf.port_hi : c->conf.port)))
		return false;
	if (c->conf.family && family != c->conf.family)
		return false;
	if (TXS_UNLIKELY(c->conf.dst.family) &&
	    (family != c->conf.dst.family || memcmp(dst, c->conf.dst.bytes, family == AF_INET ? 4 : 16) != 0))
		return false;
	return true;
}

static __attribute__((noinline, cold)) void frame_bad(struct txs_rx_core *c, enum txs_perr e,
						      const struct txs_pkt_info *pi, const uint8_t *buf, size_t len)
{
	switch (e) {
	case TXS_PERR_FRAGMENT:
		if (pi->family == AF_INET) {
			c->frag_v4++;
			if (pi->frag_offset == 0) {
				c->frag_v4_first++;
				/* the first fragment names the UDP port: track its ID if ours */
				if (!c->conf.no_id_track && pi->protocol == TXS_IPPROTO_UDP &&
				    (size_t)pi->l4_off + 4 <= len &&
				    filter_ok(c, pi->family, pi->dst.bytes, txs_get_be16(buf + pi->l4_off + 2)))
					id_in(c, pi->src.bytes, pi->dst.bytes, pi->ip_id);
			}
		} else {
			c->frag_v6++;
			if (pi->frag_offset == 0)
				c->frag_v6_first++;
		}
		break;
	case TXS_PERR_UDP_CSUM:
		/* ports were read before the checksum was checked */
		if (!filter_ok(c, pi->family, pi->dst.bytes, pi->dport)) {
			c->filtered++;
			TXS_STAT_ADD(c->live.ignored, 1);
			return;
		}
		break;
	default:
		break;
	}
	txs_rx_count_perr(c, e, 1);
}

/* Not the fast shape: txs_parse decides. true: parsed OK, k filled from pi. */
static __attribute__((noinline)) bool frame_slow(struct txs_rx_core *c, const uint8_t *buf, size_t len,
						 enum txs_l2 l2, struct txs_pkt_info *pi, struct rx_pkt *k)
{
	enum txs_perr e = txs_parse(buf, len, l2, pi);
	if (e != TXS_PERR_OK) {
		frame_bad(c, e, pi, buf, len);
		return false;
	}
	k->family = pi->family;
	k->tos = pi->tos;
	k->ip_id = pi->ip_id;
	k->src = pi->src.bytes;
	k->dst = pi->dst.bytes;
	k->sport = pi->sport;
	k->dport = pi->dport;
	k->payload = pi->payload;
	k->payload_len = pi->payload_len;
	k->n_vlan = pi->n_vlan;
	memcpy(k->vlan_tci, pi->vlan_tci, sizeof(k->vlan_tci));
	return true;
}

static __attribute__((noinline)) void vlan_in(struct txs_rx_core *c, const struct rx_pkt *k, int outer, size_t len)
{
	unsigned n = k->n_vlan + (outer >= 0);
	uint16_t v0 = outer >= 0 ? (uint16_t)outer : k->vlan_tci[0];
	uint16_t v1 = outer >= 0 ? (k->n_vlan ? k->vlan_tci[0] : 0) : k->n_vlan > 1 ? k->vlan_tci[1] : 0;
	if (n > 2)
		n = 2;
	uint32_t key = (uint32_t)n << 24 | (uint32_t)(v0 & 0xfff) << 12 | (n > 1 ? (v1 & 0xfffu) : 0);
	unsigned i = c->last_vlan;
	if (i >= c->n_vlan || c->vlan[i].key != key) {
		for (i = 0; i < c->n_vlan && c->vlan[i].key != key; i++)
			;
		if (i == c->n_vlan) {
			if (c->n_vlan == TXS_RX_VLANS_MAX) {
				c->vlan_overflow++;
				return;
			}
			c->vlan[c->n_vlan++].key = key;
		}
		c->last_vlan = i;
	}
	c->vlan[i].packets++;
	c->vlan[i].bytes += len;
}

static inline __attribute__((always_inline)) void frame_in(struct txs_rx_core *c, const uint8_t *buf, size_t len,
								enum txs_l2 l2, unsigned link, uint64_t ts_ns, int outer)
{
	struct rx_pkt k;
	struct txs_pkt_info pi;
	if (TXS_UNLIKELY(!c->raw))
		c->raw = true;
	if (TXS_UNLIKELY(link >= c->conf.n_links))
		link = c->conf.n_links - 1;
	if (TXS_UNLIKELY(!rx_parse_fast(buf, len, l2, &k)) && !frame_slow(c, buf, len, l2, &pi, &k))
		return;
	if (TXS_UNLIKELY(!filter_ok(c, k.family, k.dst, k.dport))) {
		c->filtered++;
		TXS_STAT_ADD(c->live.ignored, 1);
		return;
	}
	c->perr[TXS_PERR_OK]++;
	c->tos[k.tos]++;
	if (TXS_UNLIKELY(k.n_vlan || outer >= 0))
		vlan_in(c, &k, outer, len);
	else
		c->untagged++;
	if (k.family == AF_INET && !c->conf.no_id_track)
		id_in(c, k.src, k.dst, k.ip_id);
	payload_in(c, k.payload, k.payload_len, link, ts_ns, &k, NULL);
}

TXS_API void txs_rx_frame(struct txs_rx_core *c, const uint8_t *buf, size_t len, enum txs_l2 l2, unsigned link,
			  uint64_t ts_ns)
{
	frame_in(c, buf, len, l2, link, ts_ns, -1);
}

TXS_API void txs_rx_frame_vlan(struct txs_rx_core *c, const uint8_t *buf, size_t len, enum txs_l2 l2,
			       unsigned link, uint64_t ts_ns, uint16_t tci)
{
	frame_in(c, buf, len, l2, link, ts_ns, tci);
}

TXS_API void txs_rx_dgram(struct txs_rx_core *c, const uint8_t *payload, size_t len, const struct txs_rx_tuple *t,
			  unsigned link, uint64_t ts_ns)
{
	if (TXS_UNLIKELY(link >= c->conf.n_links))
		link = c->conf.n_links - 1;
	payload_in(c, payload, len, link, ts_ns, NULL, t);
}
