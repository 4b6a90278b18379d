/* SPDX-License-Identifier: MIT */
/* Interval and summary reports for senders: text and JSON lines. */
#include <inttypes.h>
#include <txscale/stats.h>

TXS_API void txs_core_stats_read(const struct txs_core_stats *s, struct txs_stat_row *o)
{
	o->packets = TXS_STAT_READ(s->packets);
	o->bytes = TXS_STAT_READ(s->bytes);
	o->drops = TXS_STAT_READ(s->drops);
	o->errors = TXS_STAT_READ(s->errors);
	o->frames = TXS_STAT_READ(s->frames);
}

TXS_API const char *txs_fmt_si(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

TXS_API struct txs_stat_row txs_stat_rows_sum(const struct txs_stat_row *r, unsigned n)
{
	struct txs_stat_row s = { 0 };
	for (unsigned i = 0; i < n; i++) {
		s.packets += r[i].packets;
		s.bytes += r[i].bytes;
		s.drops += r[i].drops;
		s.errors += r[i].errors;
		s.frames += r[i].frames;
	}
	return s;
}

static void text_row(FILE *f, const char *id, double t0, double t1, const struct txs_stat_row *r)
{
	char pps[32], bps[32];
	double dt = t1 - t0 > 0 ? t1 - t0 : 1e-9;
	fprintf(f, "[%4s] %6.2f-%-6.2f sec %14" PRIu64 " pkts %9s pps %9sbit/s %10" PRIu64 " drops", id, t0, t1,
		r->packets, txs_fmt_si(r->packets / dt, pps, sizeof(pps)),
		txs_fmt_si(r->bytes * 8.0 / dt, bps, sizeof(bps)), r->drops);
	if (r->errors) /* device errors (drop_err): shown when there are any */
		fprintf(f, " %10" PRIu64 " errors", r->errors);
	fputc('\n', f);
}

static void json_row(struct txs_json *j, const struct txs_stat_row *r, double dt)
{
	txs_json_u64(j, "packets", r->packets);
	txs_json_u64(j, "bytes", r->bytes);
	txs_json_u64(j, "drops", r->drops);
	txs_json_u64(j, "errors", r->errors);
	txs_json_dbl(j, "pps", dt > 0 ? r->packets / dt : 0);
	txs_json_dbl(j, "bps", dt > 0 ? r->bytes * 8.0 / dt : 0);
}

static void json_rows(struct txs_reporter *r, struct txs_json *j, double dt, const struct txs_stat_row *threads,
		      const struct txs_stat_row *links)
{
	txs_json_arr_open(j, "threads");
	for (unsigned i = 0; i < r->n_threads; i++) {
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "id", i);
		txs_json_i64(j, "cpu", r->cpus ? r->cpus[i] : -1);
		json_row(j, &threads[i], dt);
		if (r->frames)
			txs_json_u64(j, "frames", threads[i].frames);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
	txs_json_arr_open(j, "links");
	for (unsigned l = 0; links && l < r->n_links; l++) {
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "link", l);
		json_row(j, &links[l], dt);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
}

/* A record's head: its type, the reporter's kind, then its first time
 * field (key = t). */
static void json_head(const struct txs_reporter *r, struct txs_json *j, const char *type, const char *key, double t)
{
	txs_json_begin(j, r->out);
	txs_json_str(j, "type", type);
	txs_json_str(j, "kind", r->kind);
	txs_json_dbl(j, key, t);
}

static void text_links(struct txs_reporter *r, double t0, double t1, const struct txs_stat_row *links)
{
	if (!links || r->n_links < 2)
		return;
	for (unsigned l = 0; l < r->n_links; l++) {
		char id[16];
		snprintf(id, sizeof(id), "L%u", l);
		text_row(r->out, id, t0, t1, &links[l]);
	}
}

/* A record's text rows: each thread's (a single thread's too when every),
 * each link's, then the sum. */
static void text_rows(struct txs_reporter *r, double t0, double t1, const struct txs_stat_row *threads,
		      const struct txs_stat_row *links, const struct txs_stat_row *sum, bool every)
{
	if (every || r->n_threads > 1)
		for (unsigned i = 0; i < r->n_threads; i++) {
			char id[16];
			snprintf(id, sizeof(id), "%u", i);
			text_row(r->out, id, t0, t1, &threads[i]);
		}
	text_links(r, t0, t1, links);
	text_row(r->out, "SUM", t0, t1, sum);
}

TXS_API void txs_report_interval(struct txs_reporter *r, double t0, double t1, const struct txs_stat_row *threads,
				 const struct txs_stat_row *links)
{
	struct txs_stat_row sum = txs_stat_rows_sum(threads, r->n_threads);
	if (r->json) {
		struct txs_json j;
		json_head(r, &j, "interval", "start", t0);
		txs_json_dbl(&j, "end", t1);
		json_row(&j, &sum, t1 - t0);
		if (r->frames)
			txs_json_u64(&j, "frames", sum.frames);
		json_rows(r, &j, t1 - t0, threads, links);
		txs_json_end(&j);
		return;
	}
	if (!r->header_done) {
		fprintf(r->out, "[  ID] Interval       %24s %13s %15s %16s\n", "Packets", "Rate", "Bitrate", "Drops");
		r->header_done = true;
	}
	text_rows(r, t0, t1, threads, links, &sum, false);
	fflush(r->out);
}

TXS_API void txs_report_summary(struct txs_reporter *r, double seconds, const struct txs_stat_row *threads,
				const struct txs_stat_row *links, void (*extra)(struct txs_json *j, void *arg),
				void *arg)
{
	struct txs_stat_row sum = txs_stat_rows_sum(threads, r->n_threads);
	if (r->json) {
		struct txs_json j;
		json_head(r, &j, "summary", "seconds", seconds);
		json_row(&j, &sum, seconds);
		if (r->frames) {
			txs_json_u64(&j, "datagrams", sum.packets);
			txs_json_u64(&j, "frames", sum.frames);
		}
		json_rows(r, &j, seconds, threads, links);
		if (extra)
			extra(&j, arg);
		txs_json_end(&j);
		return;
	}
	fprintf(r->out, "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n");
	text_rows(r, 0, seconds, threads, links, &sum, true);
	if (seconds > 0 && r->n_threads) {
		char pc[32];
		fprintf(r->out, "%s: %" PRIu64 " packets, %" PRIu64 " bytes in %.3f s, %s pps per thread\n", r->kind,
			sum.packets, sum.bytes, seconds, txs_fmt_si(sum.packets / seconds / r->n_threads, pc, sizeof(pc)));
		if (r->frames && sum.errors)
			fprintf(r->out, "%s: %" PRIu64 " UDP datagrams in %" PRIu64 " wire frames (%" PRIu64
					" datagrams dropped, %" PRIu64 " not sent on errors)\n", r->kind, sum.packets,
				sum.frames, sum.drops, sum.errors);
		else if (r->frames)
			fprintf(r->out, "%s: %" PRIu64 " UDP datagrams in %" PRIu64 " wire frames (%" PRIu64
					" datagrams dropped)\n", r->kind, sum.packets, sum.frames, sum.drops);
	}
	fflush(r->out);
}
