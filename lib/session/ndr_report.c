/* SPDX-License-Identifier: MIT */
/* The reports of `txscale ndr` (<txscale/ndr.h>, docs/ndr.md "Output"):
 * the text header, a trial's row and the result, as text or JSON lines. */
#include <math.h>
#include <stdio.h>
#include <txscale/json.h>
#include <txscale/ndr.h>
#include <txscale/stats.h>

void txs_ndr_write_header(FILE *f, const struct txs_ndr_search *s, const struct txs_ndr_info *in)
{
	char a[32], b[32];
	fprintf(f,
		"txscale ndr: %s port %u, %u-byte payload, --dev %s, %u sender thread%s, recv --dev %s%s%s; "
		"%.3g s trials, precision %g%%, loss <= %g%%, rates %s..%s pps, at most %u trials\n",
		in->dest, in->port, in->payload_len, in->device, in->threads, in->threads > 1 ? "s" : "",
		in->recv_device, in->recv_args ? " " : "", in->recv_args ? in->recv_args : "", in->trial_s,
		in->precision_pct, in->loss_pct, txs_fmt_si(s->lo0, a, sizeof(a)),
		s->hi0 > 0 ? txs_fmt_si(s->hi0, b, sizeof(b)) : "measured", s->max_trials);
	fflush(f);
}

static void trial_json(FILE *f, const struct txs_ndr_search *s, double secs, const struct txs_ndr_trial *t,
		       double pct, bool pass)
{
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "trial");
	txs_json_u64(&j, "trial", s->trials + 1);
	txs_json_str(&j, "phase", txs_ndr_phase_str(s->phase));
	txs_json_dbl(&j, "rate", s->rate);
	txs_json_dbl(&j, "seconds", secs);
	txs_json_u64(&j, "sent", t->sent);
	txs_json_dbl(&j, "sent_pps", t->sent_pps);
	txs_json_u64(&j, "sender_drops", t->sender_drops);
	txs_json_u64(&j, "received", t->received);
	txs_json_dbl(&j, "recv_pps", t->recv_pps);
	txs_json_u64(&j, "lost", t->lost);
	txs_json_dbl(&j, "loss_pct", pct);
	txs_json_bool(&j, "pass", pass);
	if (t->kernel_drops) {
		txs_json_key(&j, "kernel_drops");
		fputs(t->kernel_drops, f);
	}
	txs_json_end(&j);
}

void txs_ndr_write_trial(FILE *f, bool json, const struct txs_ndr_search *s, double secs,
			 const struct txs_ndr_trial *t, double pct, bool pass)
{
	if (json) {
		trial_json(f, s, secs, t, pct, pass);
		return;
	}
	char rb[32], sb[32], sock[32] = "?";
	if (t->have_sockets)
		snprintf(sock, sizeof(sock), "%llu", (unsigned long long)t->sockets);
	fprintf(f,
		"%3u %-7s %9s pps: sent %llu (%s pps), received %llu, lost %llu (%.4g%%) %s  drops: socket %s "
		"(RcvbufErrors %llu), if rx %llu, softnet %llu%s\n",
		s->trials + 1, txs_ndr_phase_str(s->phase), s->rate > 0 ? txs_fmt_si(s->rate, rb, sizeof(rb)) : "unlimited",
		(unsigned long long)t->sent, txs_fmt_si(t->sent_pps, sb, sizeof(sb)), (unsigned long long)t->received,
		(unsigned long long)(t->lost + t->sender_drops), pct, pass ? "PASS" : "FAIL", sock,
		(unsigned long long)t->rcvbuf_errors, (unsigned long long)t->if_dropped, (unsigned long long)t->softnet,
		t->sender_drops ? ", some at the sender" : "");
	fflush(f);
}

/* The result's rate and what limited it: the last trial passed at
 * `result` but the sender fell short of it: what was shown to pass is what
 * it sent. */
struct result {
	double rate;
	const char *limited_by;
	bool short_send;
};

/* What bounds the result, by outcome (docs/ndr.md) */
static const char *limited_by(const struct txs_ndr_search *s)
{
	switch (s->outcome) {
	case TXS_NDR_FOUND:
		return "loss";
	case TXS_NDR_HI_PASSES:
		return s->hi0 > 0 ? "hi" : "sender";
	case TXS_NDR_LO_FAILS:
		return "lo";
	case TXS_NDR_OUT_OF_TRIALS:
		return "trials";
	}
	return "?";
}

static struct result result_of(const struct txs_ndr_search *s, double last_sent_pps)
{
	struct result r = { .rate = s->result, .limited_by = limited_by(s) };
	r.short_send = s->confirmed && s->result > 0 && last_sent_pps < s->result * (1 - s->precision);
	if (r.short_send) {
		r.rate = last_sent_pps;
		r.limited_by = "sender";
	}
	return r;
}

static void result_json(FILE *f, const struct txs_ndr_search *s, const struct txs_ndr_info *in, double last_sent_pps,
			double seconds)
{
	struct result r = result_of(s, last_sent_pps);
	bool hi_known = s->outcome != TXS_NDR_HI_PASSES;
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "ndr");
	txs_json_dbl(&j, "rate_pps", r.rate);
	txs_json_dbl(&j, "precision_pct", in->precision_pct);
	txs_json_dbl(&j, "trial_s", in->trial_s);
	txs_json_u64(&j, "trials", s->trials);
	txs_json_str(&j, "outcome", txs_ndr_outcome_str(s->outcome));
	txs_json_str(&j, "limited_by", r.limited_by);
	txs_json_bool(&j, "confirmed", s->confirmed);
	txs_json_dbl(&j, "lo_pps", s->n_pass ? s->lo : 0);
	txs_json_dbl(&j, "hi_pps", hi_known ? s->hi : NAN);
	txs_json_dbl(&j, "bracket_pct", hi_known && s->n_pass ? txs_ndr_bracket(s) * 100 : NAN);
	txs_json_dbl(&j, "sent_pps", last_sent_pps);
	txs_json_dbl(&j, "loss_pct_max", in->loss_pct);
	txs_json_str(&j, "dest", in->dest);
	txs_json_str(&j, "device", in->device);
	txs_json_str(&j, "recv_device", in->recv_device);
	txs_json_u64(&j, "payload_len", in->payload_len);
	txs_json_u64(&j, "threads", in->threads);
	txs_json_dbl(&j, "seconds", seconds);
	txs_json_end(&j);
}

void txs_ndr_write_result(FILE *f, bool json, const struct txs_ndr_search *s, const struct txs_ndr_info *in,
			  double last_sent_pps, double seconds)
{
	if (json) {
		result_json(f, s, in, last_sent_pps, seconds);
		return;
	}
	struct result r = result_of(s, last_sent_pps);
	char a[32], b[32], l[32];
	switch (s->outcome) {
	case TXS_NDR_FOUND:
		if (r.short_send)
			fprintf(f, "ndr: note: the sender reached only %s pps of the %s pps asked for\n",
				txs_fmt_si(last_sent_pps, a, sizeof(a)), txs_fmt_si(s->result, b, sizeof(b)));
		fprintf(f,
			"ndr: %s pps with %s loss (bracket %s..%s pps, %.2g%% <= %.2g%%), confirmed; %u trials of %.3g s, "
			"%.1f s\n",
			txs_fmt_si(r.rate, a, sizeof(a)), in->loss_pct > 0 ? "acceptable" : "zero",
			txs_fmt_si(s->n_pass ? s->lo : 0, l, sizeof(l)), txs_fmt_si(s->hi, b, sizeof(b)),
			txs_ndr_bracket(s) * 100, in->precision_pct, s->trials, in->trial_s, seconds);
		break;
	case TXS_NDR_HI_PASSES:
		fprintf(f, "ndr: no loss at the upper bound: %s pps (%s); the path takes at least that; %u trial%s, %.1f s\n",
			txs_fmt_si(r.rate, a, sizeof(a)),
			r.short_send ? "what the sender reached: the sender is the limit"
			: s->hi0 > 0 ? "--hi" : "the sender's unlimited rate: the sender is the limit",
			s->trials, s->trials > 1 ? "s" : "", seconds);
		break;
	case TXS_NDR_LO_FAILS:
		fprintf(f, "ndr: loss even at the lower bound %s pps: the NDR is below --lo; %u trials, %.1f s\n",
			txs_fmt_si(s->lo0, a, sizeof(a)), s->trials, seconds);
		break;
	case TXS_NDR_OUT_OF_TRIALS:
		fprintf(f,
			"ndr: --max-trials %u reached: highest pass %s pps, %s (bracket %.2g%%, wanted %.2g%%); "
			"%.1f s\n",
			s->max_trials, txs_fmt_si(s->result, a, sizeof(a)), s->confirmed ? "confirmed" : "not confirmed",
			txs_ndr_bracket(s) * 100, in->precision_pct, seconds);
		break;
	}
	fflush(f);
}
