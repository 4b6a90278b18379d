/* SPDX-License-Identifier: MIT */
/* The receiver's result as JSON (docs/json-schema.md) and as text. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "common/json_fields.h"
#include "outage.h"

static const enum txs_perr malformed_perr[] = {
	TXS_PERR_TRUNCATED, TXS_PERR_BAD_HDR, TXS_PERR_IP_CSUM, TXS_PERR_UDP_LEN, TXS_PERR_UDP_CSUM,
};
static const enum txs_perr ignored_perr[] = { TXS_PERR_NOT_IP, TXS_PERR_NOT_UDP, TXS_PERR_FRAGMENT };

static const char *kind_str(enum txs_ph_kind k)
{
	return k == TXS_PH_FULL ? "full" : k == TXS_PH_COMPACT ? "compact" : "none";
}

static void json_null(struct txs_json *j, const char *key)
{
	txs_json_dbl(j, key, NAN);
}

#define FLOW(f) TXS_JSON_U64F(struct txs_rx_flow, f)
#define RES(f) TXS_JSON_U64F(struct txs_rx_result, f)
static const struct txs_json_u64_field flow_seq1[] = { FLOW(unique), FLOW(lost) };
static const struct txs_json_u64_field flow_seq2[] = {
	FLOW(excess), FLOW(duplicates), FLOW(reordered), FLOW(late), FLOW(next_seq), FLOW(first_seq), FLOW(span),
	FLOW(resyncs),
};
static const struct txs_json_u64_field res_counts[] = {
	RES(received), RES(lost), RES(duplicates), RES(reordered), RES(malformed), RES(late),
	RES(unique), RES(unsequenced), RES(bytes), RES(ignored), RES(overflow),
};
static const struct txs_json_u64_field res_after[] = { RES(excess), RES(sender_drops), RES(resyncs) };
static const struct txs_json_u64_field res_split[] = { RES(split_flows), RES(split_inexact), RES(cross_duplicates) };
static const struct txs_json_u64_field res_frags[] = {
	TXS_JSON_U64K("ipv4", struct txs_rx_result, frag_v4), TXS_JSON_U64K("ipv4_first", struct txs_rx_result, frag_v4_first),
	TXS_JSON_U64K("ipv6", struct txs_rx_result, frag_v6), TXS_JSON_U64K("ipv6_first", struct txs_rx_result, frag_v6_first),
};
#define PAIR(f) TXS_JSON_U64F(struct txs_rx_idpair, f)
static const struct txs_json_u64_field pair_counts[] = {
	PAIR(datagrams), PAIR(reuses), PAIR(early), PAIR(min_distance), PAIR(p50_distance),
};
static const struct txs_json_u64_field size_counts[] = {
	TXS_JSON_U64F(struct txs_rx_size, datagrams), TXS_JSON_U64K("payload_bytes", struct txs_rx_size, bytes),
};
static const struct txs_json_u64_field vlan_counts[] = {
	TXS_JSON_U64F(struct txs_rx_vlan, packets), TXS_JSON_U64F(struct txs_rx_vlan, bytes),
};
static const struct txs_json_u64_field link_counts[] = {
	TXS_JSON_U64F(struct txs_rx_link, packets), TXS_JSON_U64F(struct txs_rx_link, bytes),
};

/* "expected": the count, or null where none was known */
static void expected_json(struct txs_json *j, bool have, uint64_t v)
{
	if (have)
		txs_json_u64(j, "expected", v);
	else
		json_null(j, "expected");
}

/* RFC 4737 reordering extent of `reordered` datagrams */
static void extent_json(struct txs_json *j, uint64_t max, uint64_t sum, uint64_t beyond, uint64_t reordered)
{
	txs_json_obj_open(j, "reorder_extent");
	txs_json_u64(j, "max", max);
	txs_json_dbl(j, "mean", reordered ? (double)sum / (double)reordered : 0);
	txs_json_u64(j, "beyond_window", beyond);
	txs_json_obj_close(j);
}

static void link_name(char *buf, size_t len, const char *const *names, unsigned l)
{
	if (names && names[l] && names[l][0])
		snprintf(buf, len, "%s", names[l]);
	else
		snprintf(buf, len, "link%u", l);
}

static void flow_json(struct txs_json *j, const struct txs_rx_flow *f)
{
	char a[64];
	txs_json_obj_open(j, NULL);
	if (f->by_id)
		txs_json_u64(j, "flow", f->id);
	else
		json_null(j, "flow");
	txs_json_str(j, "key", f->by_id ? "id" : "5tuple");
	txs_json_str(j, "header", kind_str(f->kind));
	if (f->tuple.src.family) {
		txs_json_str(j, "src", txs_addr_str(&f->tuple.src, a, sizeof(a)));
		txs_json_u64(j, "sport", f->tuple.sport);
	}
	/* a receiver on the wildcard knows the port, not the address */
	if (f->tuple.dst.family)
		txs_json_str(j, "dst", txs_addr_str(&f->tuple.dst, a, sizeof(a)));
	if (f->tuple.dst.family || f->tuple.dport)
		txs_json_u64(j, "dport", f->tuple.dport);
	txs_json_u64(j, "received", f->received);
	txs_json_u64(j, "bytes", f->bytes);
	if (f->sequenced) {
		txs_json_u64_fields(j, f, flow_seq1, TXS_ARRAY_SIZE(flow_seq1));
		expected_json(j, f->have_expected, f->expected);
		txs_json_u64_fields(j, f, flow_seq2, TXS_ARRAY_SIZE(flow_seq2));
		extent_json(j, f->extent_max, f->extent_sum, f->extent_beyond, f->reordered);
		txs_json_obj_open(j, "latency_ns");
		txs_json_u64(j, "count", f->lat_count);
		txs_json_u64(j, "min", f->lat_min);
		txs_json_dbl(j, "mean", f->lat_count ? ((double)f->lat_sum_hi * 18446744073709551616.0 + (double)f->lat_sum_lo) / (double)f->lat_count : 0);
		txs_json_u64(j, "max", f->lat_max);
		txs_json_u64(j, "jitter", f->jitter_ns);
		txs_json_obj_close(j);
		rx_outage_json(j, &f->outage, false, NULL, 0, 0);
	}
	txs_json_u64(j, "cores", f->cores);
	txs_json_bool(j, "merged_exact", f->merged_exact);
	txs_json_obj_close(j);
}

TXS_API void txs_rx_result_json(struct txs_json *j, const struct txs_rx_result *r, const char *const *link_names)
{
	txs_json_u64_fields(j, r, res_counts, TXS_ARRAY_SIZE(res_counts));
	txs_json_bool(j, "lost_exact", r->lost_exact);
	expected_json(j, r->have_expected, r->expected);
	txs_json_u64_fields(j, r, res_after, TXS_ARRAY_SIZE(res_after));

	txs_json_obj_open(j, "malformed_by_kind");
	for (size_t i = 0; i < TXS_ARRAY_SIZE(malformed_perr); i++)
		txs_json_u64(j, txs_perr_str(malformed_perr[i]), r->perr[malformed_perr[i]]);
	for (unsigned b = 0; b < TXS_RX_BAD__COUNT; b++)
		txs_json_u64(j, txs_rx_bad_str((enum txs_rx_bad)b), r->bad[b]);
	txs_json_obj_close(j);
	txs_json_obj_open(j, "ignored_by_kind");
	for (size_t i = 0; i < TXS_ARRAY_SIZE(ignored_perr); i++)
		txs_json_u64(j, txs_perr_str(ignored_perr[i]), r->perr[ignored_perr[i]]);
	txs_json_u64(j, "filtered", r->filtered);
	txs_json_obj_close(j);

	extent_json(j, r->extent_max, r->extent_sum, r->extent_beyond, r->reordered);

	const struct txs_hist *h = &r->lat;
	txs_json_obj_open(j, "latency_ns");
	txs_json_u64(j, "count", h->count);
	txs_json_u64(j, "min", h->count ? h->min : 0);
	txs_json_dbl(j, "mean", h->count ? txs_hist_sum(h) / (double)h->count : 0);
	txs_json_u64(j, "p50", txs_hist_quantile(h, 0.50));
	txs_json_u64(j, "p90", txs_hist_quantile(h, 0.90));
	txs_json_u64(j, "p99", txs_hist_quantile(h, 0.99));
	txs_json_u64(j, "p99.9", txs_hist_quantile(h, 0.999));
	txs_json_u64(j, "max", h->max);
	txs_json_u64(j, "jitter", r->jitter_ns);
	txs_json_u64(j, "jitter_max", r->jitter_max_ns);
	txs_json_u64(j, "no_timestamp", r->lat_none);
	txs_json_u64(j, "negative", r->lat_negative); /* = skew_future, the older name */
	txs_json_u64(j, "skew_future", r->lat_negative);
	txs_json_u64(j, "skew_past", r->lat_past);
	txs_json_u64(j, "floored", r->lat_floored); /* of negative: corrected below 0, kept at 0 (in count) */
	txs_json_u64(j, "max_latency", r->max_latency_ns);
	txs_json_obj_close(j);
	rx_clock_json(j, r);
	rx_outage_json(j, &r->outage, true, r->outages, r->n_outages, r->outage_min_ns);

	txs_json_arr_open(j, "flows");
	for (unsigned i = 0; i < r->n_flows; i++)
		flow_json(j, &r->flows[i]);
	txs_json_arr_close(j);

	txs_json_u64_fields(j, r, res_split, TXS_ARRAY_SIZE(res_split));
	txs_json_arr_open(j, "sizes");
	for (unsigned k = 0; k < r->n_sizes; k++) {
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "payload", r->sizes[k].payload);
		txs_json_u64_fields(j, &r->sizes[k], size_counts, TXS_ARRAY_SIZE(size_counts));
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
	txs_json_u64(j, "untagged", r->untagged);
	txs_json_u64(j, "vlan_overflow", r->vlan_overflow);
	txs_json_arr_open(j, "vlans");
	for (unsigned k = 0; k < r->n_vlans; k++) {
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "tags", r->vlans[k].tags);
		txs_json_u64(j, "vlan", r->vlans[k].outer);
		if (r->vlans[k].tags > 1)
			txs_json_u64(j, "inner", r->vlans[k].inner);
		txs_json_u64_fields(j, &r->vlans[k], vlan_counts, TXS_ARRAY_SIZE(vlan_counts));
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);

	txs_json_arr_open(j, "links");
	for (unsigned l = 0; l < r->n_links; l++) {
		char name[64];
		link_name(name, sizeof(name), link_names, l);
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "link", l);
		txs_json_str(j, "name", name);
		txs_json_u64_fields(j, &r->links[l], link_counts, TXS_ARRAY_SIZE(link_counts));
		txs_json_dbl(j, "share", r->links[l].share);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
	txs_json_dbl(j, "jain", r->jain);

	txs_json_obj_open(j, "ip");
	txs_json_bool(j, "seen", r->raw);
	txs_json_obj_open(j, "fragments");
	txs_json_u64_fields(j, r, res_frags, TXS_ARRAY_SIZE(res_frags));
	txs_json_obj_close(j);
	txs_json_obj_open(j, "tos");
	for (unsigned t = 0; t < 256; t++)
		if (r->tos[t]) {
			char k[8];
			snprintf(k, sizeof(k), "%u", t);
			txs_json_u64(j, k, r->tos[t]);
		}
	txs_json_obj_close(j);
	txs_json_arr_open(j, "id_reuse");
	for (unsigned i = 0; i < r->n_pairs; i++) {
		const struct txs_rx_idpair *p = &r->pairs[i];
		char a[64];
		txs_json_obj_open(j, NULL);
		txs_json_str(j, "src", txs_addr_str(&p->src, a, sizeof(a)));
		txs_json_str(j, "dst", txs_addr_str(&p->dst, a, sizeof(a)));
		txs_json_u64_fields(j, p, pair_counts, TXS_ARRAY_SIZE(pair_counts));
		txs_json_u64(j, "cores", p->cores);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
	txs_json_u64(j, "id_pairs_overflow", r->id_pairs_overflow);
	txs_json_obj_close(j);
}

static const char *si(uint64_t v, char *b, size_t n)
{
	return txs_fmt_si((double)v, b, n);
}

TXS_API void txs_rx_result_text(FILE *f, const struct txs_rx_result *r, const char *const *link_names)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	fprintf(f, "received %" PRIu64 " (%" PRIu64 " unique, %" PRIu64 " without sequence), %" PRIu64 " bytes\n",
		r->received, r->unique, r->unsequenced, r->bytes);
	if (r->have_expected)
		fprintf(f, "lost     %" PRIu64 " of %" PRIu64 " sent (exact%s)", r->lost, r->expected,
			r->excess ? ", with excess" : "");
	else
		fprintf(f, "lost     %" PRIu64 " (from sequence gaps; give --expect or --sender-summary for exact)",
			r->lost);
	if (r->excess)
		fprintf(f, "; %" PRIu64 " more than sent", r->excess);
	if (r->sender_drops)
		fprintf(f, "; sender dropped %" PRIu64 " before the wire", r->sender_drops);
	fputc('\n', f);
	if (r->resyncs)
		fprintf(f,
			"resync   %" PRIu64 " implausible sequence runs restarted flows (seq-jump): loss %s\n",
			r->resyncs,
			r->have_expected ? "counts the packets of those runs as lost (uncertain)"
					 : "is counted within each epoch only (uncertain)");
	fprintf(f, "dup      %" PRIu64 "   reordered %" PRIu64 " (extent max %" PRIu64 ", mean %.2f, %" PRIu64
		   " beyond history)   late %" PRIu64 "\n",
		r->duplicates, r->reordered, r->extent_max,
		r->reordered ? (double)r->extent_sum / (double)r->reordered : 0.0, r->extent_beyond, r->late);
	fprintf(f, "bad      %" PRIu64 " malformed", r->malformed);
	for (size_t i = 0; i < TXS_ARRAY_SIZE(malformed_perr); i++)
		if (r->perr[malformed_perr[i]])
			fprintf(f, " %s=%" PRIu64, txs_perr_str(malformed_perr[i]), r->perr[malformed_perr[i]]);
	for (unsigned b = 0; b < TXS_RX_BAD__COUNT; b++)
		if (r->bad[b])
			fprintf(f, " %s=%" PRIu64, txs_rx_bad_str((enum txs_rx_bad)b), r->bad[b]);
	fprintf(f, ", %" PRIu64 " ignored", r->ignored);
	for (size_t i = 0; i < TXS_ARRAY_SIZE(ignored_perr); i++)
		if (r->perr[ignored_perr[i]])
			fprintf(f, " %s=%" PRIu64, txs_perr_str(ignored_perr[i]), r->perr[ignored_perr[i]]);
	if (r->filtered)
		fprintf(f, " filtered=%" PRIu64, r->filtered);
	if (r->overflow)
		fprintf(f, ", %" PRIu64 " in flows beyond the table", r->overflow);
	fputc('\n', f);
	const struct txs_hist *h = &r->lat;
	if (h->count)
		fprintf(f, "latency  ns p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  jitter %s (%" PRIu64 " samples)\n",
			si(txs_hist_quantile(h, 0.5), b1, sizeof(b1)), si(txs_hist_quantile(h, 0.9), b2, sizeof(b2)),
			si(txs_hist_quantile(h, 0.99), b3, sizeof(b3)), si(txs_hist_quantile(h, 0.999), b4, sizeof(b4)),
			si(h->max, b5, sizeof(b5)), si(r->jitter_ns, b6, sizeof(b6)), h->count);
	if (r->lat_floored)
		fprintf(f,
			"latency  %" PRIu64 " samples below 0 once corrected (the clock offset's error), kept in the "
			"histogram at 0\n",
			r->lat_floored);
	if (r->lat_negative - r->lat_floored || r->lat_past)
		fprintf(f,
			"latency  clock skew, not in the histogram: %" PRIu64 " packets stamped after they arrived, "
			"%" PRIu64 " stamped more than %.0f s before\n",
			r->lat_negative - r->lat_floored, r->lat_past, (double)r->max_latency_ns / 1e9);
	rx_clock_text(f, r);
	rx_outage_text(f, r);
	unsigned shown = 0;
	for (unsigned i = 0; i < r->n_flows && shown < 16; i++, shown++) {
		const struct txs_rx_flow *fl = &r->flows[i];
		char a[64], d[64];
		if (fl->by_id)
			fprintf(f, "flow %-5u", fl->id);
		else
			fprintf(f, "flow %s:%u->%s:%u", txs_addr_str(&fl->tuple.src, a, sizeof(a)), fl->tuple.sport,
				txs_addr_str(&fl->tuple.dst, d, sizeof(d)), fl->tuple.dport);
		fprintf(f, " received %" PRIu64, fl->received);
		if (fl->sequenced)
			fprintf(f, " lost %" PRIu64 "%s dup %" PRIu64 " reordered %" PRIu64 " late %" PRIu64
				   " jitter %" PRIu64 " ns",
				fl->lost, fl->have_expected ? " (exact)" : "", fl->duplicates, fl->reordered, fl->late,
				fl->jitter_ns);
		if (fl->outage.count)
			fprintf(f, " outages %" PRIu64 " (longest %.3f ms, %" PRIu64 " missing)", fl->outage.count,
				(double)(fl->outage.longest.end_ns - fl->outage.longest.start_ns) / 1e6,
				fl->outage.longest.missing);
		if (fl->resyncs)
			fprintf(f, " resyncs %" PRIu64, fl->resyncs);
		if (fl->cores > 1)
			fprintf(f, " [seen on %u cores%s]", fl->cores,
				fl->merged_exact ? ", merged by sequence" : ", merged inexactly: run budget");
		fputc('\n', f);
	}
	if (r->n_flows > shown)
		fprintf(f, "... %u more flows (see -J)\n", r->n_flows - shown);
	if (r->split_flows)
		fprintf(f, "split    %" PRIu64 " flows seen on several cores, %" PRIu64 " sequences counted there twice "
			   "(duplicates)%s\n", r->split_flows, r->cross_duplicates,
			r->split_inexact ? ", some merged inexactly (see -J)" : "");
	if (r->n_vlans) {
		fprintf(f, "vlans   ");
		for (unsigned k = 0; k < r->n_vlans; k++) {
			fprintf(f, " %u", r->vlans[k].outer);
			if (r->vlans[k].tags > 1)
				fprintf(f, ".%u", r->vlans[k].inner);
			fprintf(f, ": %" PRIu64 ";", r->vlans[k].packets);
		}
		fprintf(f, " untagged: %" PRIu64 "%s\n", r->untagged, r->vlan_overflow ? " (more VLANs than counted)" : "");
	}
	if (r->n_sizes > 1 && r->n_sizes <= 64) {
		fprintf(f, "sizes    (payload bytes: datagrams, payload bytes)");
		for (unsigned k = 0; k < r->n_sizes; k++)
			fprintf(f, "%s %u: %" PRIu64 ", %" PRIu64, k ? ";" : "", r->sizes[k].payload,
				r->sizes[k].datagrams, r->sizes[k].bytes);
		fputc('\n', f);
	}
	if (r->n_links > 1) {
		fprintf(f, "links   ");
		for (unsigned l = 0; l < r->n_links; l++) {
			char name[64];
			link_name(name, sizeof(name), link_names, l);
			fprintf(f, " %s %" PRIu64 " (%.1f%%)", name, r->links[l].packets, r->links[l].share * 100);
		}
		fprintf(f, "  Jain %.4f\n", r->jain);
	}
	if (r->raw) {
		if (r->frag_v4 || r->frag_v6)
			fprintf(f, "frags    IPv4 %" PRIu64 " (%" PRIu64 " first) IPv6 %" PRIu64 " (%" PRIu64 " first)\n",
				r->frag_v4, r->frag_v4_first, r->frag_v6, r->frag_v6_first);
		for (unsigned i = 0; i < r->n_pairs; i++) {
			const struct txs_rx_idpair *p = &r->pairs[i];
			char a[64], d[64];
			fprintf(f, "ip id    %s -> %s: %" PRIu64 " datagrams, %" PRIu64 " ID reuses",
				txs_addr_str(&p->src, a, sizeof(a)), txs_addr_str(&p->dst, d, sizeof(d)), p->datagrams,
				p->reuses);
			if (p->reuses)
				fprintf(f, " (%" PRIu64 " within 65536 datagrams), distance min %" PRIu64 " median %" PRIu64,
					p->early, p->min_distance, p->p50_distance);
			fputc('\n', f);
		}
	}
	fflush(f);
}
