/* SPDX-License-Identifier: MIT */
/* Writers of the outage and clock figures (docs/json-schema.md, "outage",
 * "clock"; docs/recv.md). */
#include <inttypes.h>
#include <math.h>
#include <time.h>
#include "outage.h"

static void ev_json(struct txs_json *j, const char *key, const struct txs_rx_outage_ev *e)
{
	txs_json_obj_open(j, key);
	txs_json_u64(j, "duration_ns", e->end_ns - e->start_ns);
	txs_json_u64(j, "start_ns", e->start_ns);
	txs_json_u64(j, "end_ns", e->end_ns);
	txs_json_u64(j, "before_seq", e->before_seq);
	txs_json_u64(j, "after_seq", e->after_seq);
	txs_json_u64(j, "missing", e->missing);
	if (e->flows == 1)
		txs_json_u64(j, "flow", e->flow);
	txs_json_u64(j, "flows", e->flows);
	txs_json_obj_close(j);
}

void rx_outage_json(struct txs_json *j, const struct txs_rx_outage *o, bool run, const struct txs_rx_outage_ev *evs,
		    unsigned n_ev, uint64_t min_ns)
{
	txs_json_obj_open(j, "outage");
	txs_json_u64(j, "count", o->count);
	txs_json_u64(j, "total_ns", o->total_ns);
	txs_json_u64(j, "missing", o->missing);
	txs_json_u64(j, "longest_ns", o->count ? o->longest.end_ns - o->longest.start_ns : 0);
	txs_json_u64(j, "longest_missing", o->count ? o->longest.missing : 0);
	txs_json_u64(j, "longest_start", o->count ? o->longest.start_ns : 0);
	if (o->count)
		ev_json(j, "longest", &o->longest);
	txs_json_u64(j, "threshold_ns", o->threshold_ns);
	if (min_ns)
		txs_json_u64(j, "outage_min_ns", min_ns);
	txs_json_u64(j, "loss_duration_ns", o->loss_duration_ns);
	txs_json_dbl(j, "rate_pps", o->rate_pps);
	txs_json_arr_open(j, "bursts");
	for (unsigned k = 0; k < TXS_RX_BURST_CLASSES; k++) {
		if (!o->bursts[k])
			continue;
		uint64_t lo, hi;
		txs_rx_burst_range(k, &lo, &hi);
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "min", lo);
		txs_json_u64(j, "max", hi);
		txs_json_u64(j, "count", o->bursts[k]);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
	txs_json_u64(j, "burst_count", o->n_bursts);
	txs_json_u64(j, "burst_max", o->burst_max);
	txs_json_u64(j, "burst_lost", o->burst_lost);
	txs_json_bool(j, "bursts_exact", o->bursts_exact);
	if (run) {
		txs_json_u64(j, "dropped", o->dropped);
		txs_json_arr_open(j, "events");
		for (unsigned i = 0; i < n_ev; i++)
			ev_json(j, NULL, &evs[i]);
		txs_json_arr_close(j);
	}
	txs_json_obj_close(j);
}

static int64_t shift(uint64_t v, int64_t by)
{
	return (int64_t)v + by;
}

void rx_clock_json(struct txs_json *j, const struct txs_rx_result *r)
{
	txs_json_obj_open(j, "clock");
	txs_json_bool(j, "corrected", r->have_clock && r->clock_applied);
	if (r->have_clock) {
		const struct txs_hist *h = &r->lat;
		/* an offset within its error is reported, not applied: raw = latency_ns */
		int64_t off = r->clock_applied ? r->clock_offset_ns : 0;
		txs_json_bool(j, "applied", r->clock_applied);
		txs_json_str(j, "source", r->clock_source ? r->clock_source : "option");
		if (r->clock_method)
			txs_json_str(j, "method", r->clock_method);
		txs_json_i64(j, "offset_ns", r->clock_offset_ns);
		txs_json_u64(j, "error_ns", r->clock_error_ns);
		if (r->have_drift)
			txs_json_i64(j, "drift_ns", r->clock_drift_ns);
		else
			txs_json_dbl(j, "drift_ns", NAN); /* null: not measured */
		/* latency_ns holds the corrected samples; these are as stamped */
		txs_json_obj_open(j, "raw_latency_ns");
		txs_json_u64(j, "count", h->count);
		txs_json_i64(j, "min", h->count ? shift(h->min, off) : 0);
		txs_json_dbl(j, "mean", h->count ? txs_hist_sum(h) / (double)h->count + (double)off : 0);
		txs_json_i64(j, "p50", shift(txs_hist_quantile(h, 0.50), off));
		txs_json_i64(j, "p99", shift(txs_hist_quantile(h, 0.99), off));
		txs_json_i64(j, "max", shift(h->max, off));
		txs_json_obj_close(j);
	}
	txs_json_obj_close(j);
}

static void fmt_ms(char *b, size_t n, uint64_t ns)
{
	snprintf(b, n, "%.3f ms", (double)ns / 1e6);
}

static void fmt_wall(char *b, size_t n, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	size_t k = strftime(b, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(b + k, n - k, ".%06" PRIu64 "Z", (uint64_t)(ns % 1000000000ull / 1000));
}

void rx_outage_text(FILE *f, const struct txs_rx_result *r)
{
	const struct txs_rx_outage *o = &r->outage;
	char d[32], w1[48], w2[48], th[32];
	if (r->outage_min_ns)
		fmt_ms(th, sizeof(th), r->outage_min_ns);
	else
		snprintf(th, sizeof(th), "auto");
	if (!o->count) {
		fprintf(f, "outage   none (silence with loss longer than %s)\n", th);
	} else {
		fmt_ms(d, sizeof(d), o->longest.end_ns - o->longest.start_ns);
		fmt_wall(w1, sizeof(w1), o->longest.start_ns);
		fmt_wall(w2, sizeof(w2), o->longest.end_ns);
		fprintf(f, "outage   %" PRIu64 " (threshold %s), longest %s from %s (seq %" PRIu64 ") to %s (seq %" PRIu64
			   "), %" PRIu64 " missing inside",
			o->count, th, d, w1, o->longest.before_seq, w2, o->longest.after_seq, o->longest.missing);
		fmt_ms(d, sizeof(d), o->total_ns);
		fprintf(f, "; total %s, %" PRIu64 " missing\n", d, o->missing);
		for (unsigned i = 0; i < r->n_outages && i < 8; i++) {
			const struct txs_rx_outage_ev *e = &r->outages[i];
			fmt_ms(d, sizeof(d), e->end_ns - e->start_ns);
			fmt_wall(w1, sizeof(w1), e->start_ns);
			fprintf(f, "outage   #%u at %s: %s, %" PRIu64 " missing (%u flow%s)\n", i + 1, w1, d, e->missing,
				e->flows, e->flows == 1 ? "" : "s");
		}
	}
	fmt_ms(d, sizeof(d), o->loss_duration_ns);
	fprintf(f, "bursts   %" PRIu64 " (longest %" PRIu64 ", %" PRIu64 " lost in them%s); loss duration %s (missing / %.0f pps)",
		o->n_bursts, o->burst_max, o->burst_lost, o->bursts_exact ? "" : ", inexact", d, o->rate_pps);
	for (unsigned k = 0; k < TXS_RX_BURST_CLASSES; k++) {
		if (!o->bursts[k])
			continue;
		uint64_t lo, hi;
		txs_rx_burst_range(k, &lo, &hi);
		if (lo == hi)
			fprintf(f, " %" PRIu64 ":%" PRIu64, lo, o->bursts[k]);
		else
			fprintf(f, " %" PRIu64 "-%" PRIu64 ":%" PRIu64, lo, hi, o->bursts[k]);
	}
	fputc('\n', f);
}

void rx_clock_text(FILE *f, const struct txs_rx_result *r)
{
	if (!r->have_clock)
		return;
	const struct txs_hist *h = &r->lat;
	char dr[48] = "not measured", src[64];
	snprintf(src, sizeof(src), "%s%s%s", r->clock_source ? r->clock_source : "option", r->clock_method ? ", " : "",
		 r->clock_method ? r->clock_method : "");
	if (r->have_drift)
		snprintf(dr, sizeof(dr), "%+" PRId64 " ns", r->clock_drift_ns);
	if (!r->clock_applied) {
		fprintf(f, "clock    offset %+" PRId64 " ns +- %" PRIu64 " ns (%s) is within its error: NOT applied, "
			   "latency as stamped; drift %s\n",
			r->clock_offset_ns, r->clock_error_ns, src, dr);
		return;
	}
	fprintf(f, "clock    latency CORRECTED by offset %+" PRId64 " ns +- %" PRIu64 " ns (%s), drift %s\n",
		r->clock_offset_ns, r->clock_error_ns, src, dr);
	if (h->count)
		fprintf(f, "clock    raw latency (as stamped) ns p50 %" PRId64 "  p99 %" PRId64 "  max %" PRId64 "\n",
			shift(txs_hist_quantile(h, 0.5), r->clock_offset_ns),
			shift(txs_hist_quantile(h, 0.99), r->clock_offset_ns), shift(h->max, r->clock_offset_ns));
}
