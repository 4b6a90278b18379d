/* SPDX-License-Identifier: MIT */
/* The RFC 2544 session's writers (<txscale/session_rfc2544.h>,
 * docs/rfc2544.md "Output"): a trial's row, the header and the result, as
 * text or JSON lines, into the caller's FILE. */
#include <math.h>
#include <stdio.h>
#include <sys/socket.h>
#include <txscale/json.h>
#include <txscale/session_rfc2544.h>
#include <txscale/stats.h>

/* A number as the report writes it too (rfc2544_report.c): whole numbers
 * exactly, others with the JSON writer's 6 digits */
static void jnum(struct txs_json *j, const char *key, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9e15)
		txs_json_i64(j, key, (int64_t)v);
	else
		txs_json_dbl(j, key, v);
}

static void size_json(struct txs_json *j, unsigned size)
{
	if (size == TXS_RFC2544_IMIX)
		txs_json_str(j, "size", "imix");
	else
		txs_json_u64(j, "size", size);
}

static const char *size_str(unsigned size, char *b, size_t n)
{
	if (size == TXS_RFC2544_IMIX)
		snprintf(b, n, "imix");
	else
		snprintf(b, n, "%u", size);
	return b;
}

static void latency_json(struct txs_json *j, const char *key, const struct txs_rfc2544_latency *l, unsigned trials)
{
	txs_json_obj_open(j, key);
	if (trials)
		txs_json_u64(j, "trials", trials);
	txs_json_u64(j, "count", l->count);
	jnum(j, "min", l->min);
	jnum(j, "mean", l->mean);
	jnum(j, "p50", l->p50);
	jnum(j, "p90", l->p90);
	jnum(j, "p99", l->p99);
	jnum(j, "p99.9", l->p999);
	jnum(j, "max", l->max);
	txs_json_obj_close(j);
}

void txs_rfc2544_write_trial(FILE *f, bool json, const struct txs_rfc2544_trial *t)
{
	char sb[16];
	if (json) {
		struct txs_json j;
		txs_json_begin(&j, f);
		txs_json_str(&j, "type", "trial");
		txs_json_str(&j, "kind", "rfc2544");
		txs_json_u64(&j, "trial", t->index);
		txs_json_str(&j, "test", txs_rfc2544_test_str(t->test));
		size_json(&j, t->size);
		txs_json_u64(&j, "run", t->run);
		txs_json_str(&j, "phase", t->phase);
		txs_json_dbl(&j, "rate", t->rate);
		if (t->frames)
			txs_json_u64(&j, "frames", t->frames);
		txs_json_dbl(&j, "seconds", t->seconds);
		txs_json_u64(&j, "sent", t->t.sent);
		txs_json_dbl(&j, "sent_pps", t->t.sent_pps);
		txs_json_u64(&j, "sender_drops", t->t.sender_drops);
		txs_json_u64(&j, "received", t->t.received);
		txs_json_dbl(&j, "recv_pps", t->t.recv_pps);
		txs_json_u64(&j, "lost", t->t.lost);
		txs_json_dbl(&j, "loss_pct", t->loss_pct);
		if (t->short_send)
			txs_json_bool(&j, "short_send", true);
		txs_json_bool(&j, "pass", t->pass);
		if (t->lat.have)
			latency_json(&j, "latency_ns", &t->lat, 0);
		if (t->t.kernel_drops) {
			txs_json_key(&j, "kernel_drops");
			fputs(t->t.kernel_drops, f);
		}
		txs_json_end(&j);
		return;
	}
	char rb[32], pb[32], what[48] = "";
	if (t->frames)
		snprintf(what, sizeof(what), "burst of %llu", (unsigned long long)t->frames);
	else if (t->rate > 0)
		snprintf(what, sizeof(what), "%s fps", txs_fmt_si(t->rate, rb, sizeof(rb)));
	else
		snprintf(what, sizeof(what), "unlimited");
	fprintf(f, "%4u %-12s %5s %u %-7s %-16s sent %llu (%s fps), received %llu, lost %llu (%.4g%%) %s", t->index,
		txs_rfc2544_test_str(t->test), size_str(t->size, sb, sizeof(sb)), t->run, t->phase, what,
		(unsigned long long)(t->t.sent + t->t.sender_drops), txs_fmt_si(t->t.sent_pps, pb, sizeof(pb)),
		(unsigned long long)t->t.received, (unsigned long long)(t->t.lost + t->t.sender_drops), t->loss_pct,
		t->pass ? "PASS" : "FAIL");
	if (t->short_send)
		fprintf(f, " (the sender fell short of the rate)");
	if (t->lat.have)
		fprintf(f, "  latency p50 %.0f us p99 %.0f us", t->lat.p50 / 1e3, t->lat.p99 / 1e3);
	fputc('\n', f);
	fflush(f);
}

void txs_rfc2544_write_header(FILE *f, const struct txs_rfc2544_conf *c)
{
	char sb[16];
	fprintf(f, "txscale rfc2544: %s port %u, send --dev %s -> %s%s%s%s, sizes", c->dest, c->port, c->dev,
		c->remote ? "a txscale server" : "recv --dev ", c->remote ? "" : c->recv_dev, c->recv_args ? " " : "",
		c->recv_args ? c->recv_args : "");
	for (unsigned i = 0; i < c->n_sizes; i++)
		fprintf(f, "%s%s", i ? "," : " ", size_str(c->sizes[i], sb, sizeof(sb)));
	fprintf(f, "; tests");
	for (unsigned i = 0, k = 0; i < 4; i++)
		if (c->tests & (1u << i))
			fprintf(f, "%s%s", k++ ? "," : " ", txs_rfc2544_test_str(1u << i));
	fprintf(f, "; %g s trials, %g s while searching, loss <= %g%%, precision %g%%, %u searches per size\n",
		c->trial_s, c->search_s, c->loss_pct, c->precision * 100, c->repeat);
	fflush(f);
}

/* The throughput entries: those of sizes whose throughput ran */
static bool has_tput(const struct txs_rfc2544_result *r)
{
	return r->tests & (TXS_RFC2544_THROUGHPUT | TXS_RFC2544_LATENCY);
}

static void result_json(FILE *f, const struct txs_rfc2544_result *r, const struct txs_rfc2544_conf *c)
{
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "result");
	txs_json_str(&j, "kind", "rfc2544");
	txs_json_arr_open(&j, "throughput");
	for (unsigned i = 0; i < r->n_sizes && has_tput(r); i++) {
		const struct txs_rfc2544_tput *tp = &r->tput[i];
		if (!tp->n_runs)
			continue;
		txs_json_obj_open(&j, NULL);
		size_json(&j, tp->size);
		jnum(&j, "fps", tp->fps);
		jnum(&j, "bits", tp->fps * tp->frame_bytes * 8);
		if (r->tests & TXS_RFC2544_LATENCY) {
			if (tp->have_lat)
				latency_json(&j, "latency_ns", &tp->lat, tp->n_lat);
			else
				jnum(&j, "latency_ns", NAN);
		}
		jnum(&j, "frame_bytes", tp->frame_bytes);
		if (tp->size != TXS_RFC2544_IMIX)
			txs_json_u64(&j, "payload", tp->payload);
		jnum(&j, "top_fps", tp->top_fps);
		jnum(&j, "top_share", tp->top_fps > 0 ? tp->fps / tp->top_fps : NAN);
		jnum(&j, "fps_min", tp->fps_min);
		jnum(&j, "fps_max", tp->fps_max);
		jnum(&j, "fps_mean", tp->fps_mean);
		jnum(&j, "fps_stdev", tp->fps_stdev);
		txs_json_arr_open(&j, "runs");
		for (unsigned k = 0; k < tp->n_runs; k++) {
			txs_json_obj_open(&j, NULL);
			jnum(&j, "fps", tp->runs[k]);
			txs_json_str(&j, "outcome", tp->outcome[k]);
			txs_json_bool(&j, "confirmed", tp->confirmed[k]);
			txs_json_u64(&j, "trials", tp->trials[k]);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_json_arr_open(&j, "back_to_back");
	for (unsigned i = 0; i < r->n_sizes && (r->tests & TXS_RFC2544_BACK_TO_BACK); i++) {
		const struct txs_rfc2544_b2b *bb = &r->b2b[i];
		if (!bb->n_trials)
			continue;
		txs_json_obj_open(&j, NULL);
		size_json(&j, bb->size);
		jnum(&j, "frames", bb->frames);
		jnum(&j, "burst_fps", bb->burst_fps);
		jnum(&j, "frames_min", bb->frames_min);
		jnum(&j, "frames_max", bb->frames_max);
		jnum(&j, "buffer_s", bb->buffer_s);
		txs_json_arr_open(&j, "trials");
		for (unsigned k = 0; k < bb->n_trials; k++) {
			txs_json_obj_open(&j, NULL);
			txs_json_u64(&j, "frames", bb->trials[k].frames);
			jnum(&j, "burst_fps", bb->trials[k].burst_fps);
			txs_json_u64(&j, "bursts", bb->trials[k].steps);
			txs_json_bool(&j, "confirmed", bb->trials[k].confirmed);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_json_arr_open(&j, "frame_loss");
	for (unsigned i = 0; i < r->n_sizes && (r->tests & TXS_RFC2544_FRAME_LOSS); i++) {
		const struct txs_rfc2544_floss *fl = &r->floss[i];
		if (!fl->n_points)
			continue;
		txs_json_obj_open(&j, NULL);
		size_json(&j, fl->size);
		jnum(&j, "top_fps", fl->top_fps);
		txs_json_arr_open(&j, "points");
		for (unsigned k = 0; k < fl->n_points; k++) {
			const struct txs_rfc2544_fl_point *p = &fl->points[k];
			txs_json_obj_open(&j, NULL);
			jnum(&j, "offered_fps", p->offered_fps);
			jnum(&j, "loss_pct", p->loss_pct);
			jnum(&j, "pct_of_top", p->pct_of_top);
			jnum(&j, "sent_fps", p->sent_fps);
			txs_json_u64(&j, "sent", p->sent);
			txs_json_u64(&j, "lost", p->lost);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_json_str(&j, "dest", c->dest);
	txs_json_str(&j, "family", r->family == AF_INET6 ? "ipv6" : "ipv4");
	txs_json_str(&j, "device", c->dev);
	txs_json_str(&j, "receiver", c->remote ? "server" : c->recv_dev);
	jnum(&j, "trial_s", c->trial_s);
	jnum(&j, "search_trial_s", c->search_s);
	jnum(&j, "loss_pct_max", c->loss_pct);
	jnum(&j, "precision_pct", c->precision * 100);
	txs_json_u64(&j, "repeat", c->repeat);
	txs_json_u64(&j, "trials", r->trials);
	txs_json_bool(&j, "complete", r->complete);
	jnum(&j, "seconds", r->seconds);
	txs_json_end(&j);
}

void txs_rfc2544_write_result(FILE *f, bool json, const struct txs_rfc2544_result *r,
			      const struct txs_rfc2544_conf *c)
{
	if (json) {
		result_json(f, r, c);
		return;
	}
	char sb[16], a[64], d[32];
	if (has_tput(r)) {
		fprintf(f, "\nthroughput (%s loss, median of %u searches)\n%6s %12s %12s %8s %12s %12s %s\n",
			c->loss_pct > 0 ? "acceptable" : "zero", c->repeat, "size", "fps", "bits/s", "of top",
			"min fps", "max fps", "latency mean / p99 (us)");
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_tput *tp = &r->tput[i];
			if (!tp->n_runs)
				continue;
			fprintf(f, "%6s %12.0f %12s %7.1f%% %12.0f %12.0f", size_str(tp->size, sb, sizeof(sb)), tp->fps,
				txs_fmt_si(tp->fps * tp->frame_bytes * 8, a, sizeof(a)),
				tp->top_fps > 0 ? tp->fps / tp->top_fps * 100 : 0, tp->fps_min, tp->fps_max);
			if (tp->have_lat)
				fprintf(f, " %.1f / %.1f", tp->lat.mean / 1e3, tp->lat.p99 / 1e3);
			fputc('\n', f);
		}
	}
	if (r->tests & TXS_RFC2544_FRAME_LOSS) {
		fprintf(f, "\nframe loss rate\n");
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_floss *fl = &r->floss[i];
			if (!fl->n_points)
				continue;
			fprintf(f, "%6s:", size_str(fl->size, sb, sizeof(sb)));
			for (unsigned k = 0; k < fl->n_points; k++) {
				/* the rate the sender reached, where it fell short of the offered one by over 1% */
				const struct txs_rfc2544_fl_point *p = &fl->points[k];
				char sb2[48] = "";
				if (p->sent_fps < p->offered_fps * 0.99)
					snprintf(sb2, sizeof(sb2), " (sent %s fps)", txs_fmt_si(p->sent_fps, a + 32, 32));
				fprintf(f, " %s fps%s %.3g%%%s", txs_fmt_si(p->offered_fps, a, 32), sb2, p->loss_pct,
					k + 1 < fl->n_points ? "," : "");
			}
			fputc('\n', f);
		}
	}
	if (r->tests & TXS_RFC2544_BACK_TO_BACK) {
		fprintf(f, "\nback-to-back (mean of the searches)\n%6s %10s %10s %10s %12s %10s\n", "size", "frames", "min",
			"max", "burst fps", "buffer");
		for (unsigned i = 0; i < r->n_sizes; i++) {
			const struct txs_rfc2544_b2b *bb = &r->b2b[i];
			if (!bb->n_trials)
				continue;
			fprintf(f, "%6s %10.1f %10.0f %10.0f %12s %9.3g s\n", size_str(bb->size, sb, sizeof(sb)), bb->frames,
				bb->frames_min, bb->frames_max, txs_fmt_si(bb->burst_fps, d, sizeof(d)), bb->buffer_s);
		}
	}
	fprintf(f, "\nrfc2544: %u trials, %.1f s%s\n", r->trials, r->seconds, r->complete ? "" : " (incomplete)");
	fflush(f);
}
