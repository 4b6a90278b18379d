/* SPDX-License-Identifier: MIT */
/* A send session's writers: the first text lines, the summary's send
 * fields (docs/json-schema.md) and text lines, and what went wrong. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "send_priv.h"

/* "profile":{...} in the summary (docs/json-schema.md, "profile") */
static void prof_json(struct txs_json *j, const struct txs_prof_summary *p)
{
	txs_json_obj_open(j, "profile");
	txs_json_u64(j, "sample_every", p->every);
	txs_json_u64(j, "samples", p->samples);
	txs_json_u64(j, "discarded", p->discarded);
	txs_json_u64(j, "packets", p->pkts);
	txs_json_dbl(j, "tsc_hz", p->tsc_hz > 0 ? p->tsc_hz : NAN);
	txs_json_dbl(j, "stamp_cycles", p->stamp_cycles);
	txs_json_bool(j, "ident_in_header", !p->split);
	txs_json_obj_open(j, "stages");
	for (unsigned s = 0; s < TXS_PROF_STAGES; s++) {
		if (!p->split && (s == TXS_PROF_IDENT || s == TXS_PROF_LINKSEL))
			continue; /* not timed apart on the sendmsg path */
		txs_json_obj_open(j, txs_prof_stage_name(s));
		txs_json_dbl(j, "share", p->share[s]);
		txs_json_dbl(j, "cycles_per_pkt", p->cyc_per_pkt[s]);
		txs_json_dbl(j, "ns_per_pkt", p->tsc_hz > 0 ? p->ns_per_pkt[s] : NAN);
		txs_json_obj_close(j);
	}
	txs_json_obj_close(j);
	txs_json_obj_close(j);
}

/* One line after the text summary. */
static void prof_text(FILE *f, const struct txs_prof_summary *p)
{
	fprintf(f, "profile (1 burst in %u, %llu packets sampled", p->every, (unsigned long long)p->pkts);
	if (p->tsc_hz > 0)
		fprintf(f, ", TSC %.3f GHz", p->tsc_hz / 1e9);
	fprintf(f, "):");
	if (!p->pkts) {
		fprintf(f, " no burst sampled\n");
		return;
	}
	for (unsigned s = 0, first = 1; s < TXS_PROF_STAGES; s++) {
		if (!p->split && (s == TXS_PROF_IDENT || s == TXS_PROF_LINKSEL))
			continue;
		fprintf(f, "%s%s%s %.1f%% (%.1f cyc", first ? " " : "  ", txs_prof_stage_name(s),
			!p->split && s == TXS_PROF_HEADER ? "+ident" : "", 100 * p->share[s], p->cyc_per_pkt[s]);
		if (p->tsc_hz > 0)
			fprintf(f, ", %.2f ns", p->ns_per_pkt[s]);
		fprintf(f, "/pkt)");
		first = 0;
	}
	if (!p->split)
		fprintf(f, "  [sendmsg path: ident is timed inside header, no link selection]");
	fputc('\n', f);
}

static void gso_json(struct txs_json *j, const struct txs_netdev *dev)
{
	if (!dev->kernel_ip)
		return;
	struct txs_link_counters t;
	send_udp_gso_sum(dev, &t);
	txs_json_obj_open(j, "gso");
	txs_json_u64(j, "max_segments", dev->tx_burst);
	txs_json_u64(j, "calls", t.gso_calls);
	txs_json_u64(j, "segments", t.gso_segs);
	txs_json_u64(j, "single", t.packets - t.gso_segs);
	txs_json_u64(j, "fallbacks", t.gso_fallback);
	txs_json_obj_close(j);
}

static void gso_text(FILE *f, const struct txs_netdev *dev)
{
	if (!dev->kernel_ip)
		return;
	struct txs_link_counters t;
	send_udp_gso_sum(dev, &t);
	fprintf(f, "gso: %llu calls carried %llu datagrams", (unsigned long long)t.gso_calls,
		(unsigned long long)t.gso_segs);
	if (t.gso_calls)
		fprintf(f, " (%.1f each)", (double)t.gso_segs / (double)t.gso_calls);
	fprintf(f, ", %llu sent one per message", (unsigned long long)(t.packets - t.gso_segs));
	if (dev->tx_burst)
		fprintf(f, "; at most %u segments per call", dev->tx_burst);
	else
		fprintf(f, "; GSO off");
	if (t.gso_fallback)
		fprintf(f, "; %llu socket%s fell back (the kernel refused GSO: %s)", (unsigned long long)t.gso_fallback,
			t.gso_fallback > 1 ? "s" : "", strerror(t.gso_err ? t.gso_err : EIO));
	fputc('\n', f);
}

/* How the run waited for its schedule (engine.h, pace_slack_ns) */
static void pacing_json(struct txs_json *j, const struct txs_send *x)
{
	uint64_t win;
	const char *mode = txs_pace_mode(&x->ec, x->dev, &win);
	txs_json_obj_open(j, "pacing");
	txs_json_str(j, "mode", mode);
	txs_json_dbl(j, "window_us", (double)win / 1e3);
	txs_json_str(j, "txtime", x->dev->txtime_why);
	txs_json_obj_close(j);
	/* -b resolved: datagrams/s and bits/s of UDP payload (iperf's unit), the whole run's */
	const struct txs_pace_conf *pc = &x->ec.pace;
	double pps = x->ec.rate_pps, pl = send_shape_payload(&x->p.shape, x->p.length) * 8;
	txs_json_obj_open(j, "rate");
	if (pc->kind == TXS_PACE_RAMP) {
		/* --ramp: where it starts and ends (the run's), not a constant */
		txs_json_dbl(j, "ramp_from_datagrams_per_s", pc->ramp_from);
		txs_json_dbl(j, "ramp_to_datagrams_per_s", pc->ramp_to);
		txs_json_dbl(j, "ramp_from_payload_bits_per_s", pc->ramp_from * pl);
		txs_json_dbl(j, "ramp_to_payload_bits_per_s", pc->ramp_to * pl);
		txs_json_dbl(j, "ramp_seconds", pc->ramp_secs);
	} else {
		txs_json_dbl(j, "datagrams_per_s", pps);
		txs_json_dbl(j, "payload_bits_per_s", pps * pl);
	}
	txs_json_u64(j, "threads", x->p.nthreads);
	txs_json_obj_close(j);
}

/* ", RATE datagrams/s = RATE bit/s of UDP payload per thread": -b resolved
 * in both of its units (a ramp: its two ends; unpaced: "unlimited") */
static const char *rate_str(const struct txs_send *x, char *buf, size_t len)
{
	const struct txs_pace_conf *pc = &x->ec.pace;
	double n = x->p.nthreads, pl = send_shape_payload(&x->p.shape, x->p.length) * 8;
	const char *per = x->p.nthreads > 1 ? " per thread" : "";
	char a[32], b[32], c[32], d[32];
	if (pc->kind == TXS_PACE_RAMP)
		snprintf(buf, len, ", ramp %s -> %s datagrams/s (%sbit/s -> %sbit/s of UDP payload)%s over %g s",
			 txs_fmt_si(pc->ramp_from / n, a, sizeof(a)), txs_fmt_si(pc->ramp_to / n, b, sizeof(b)),
			 txs_fmt_si(pc->ramp_from / n * pl, c, sizeof(c)), txs_fmt_si(pc->ramp_to / n * pl, d, sizeof(d)),
			 per, pc->ramp_secs);
	else if (!(x->ec.rate_pps > 0))
		snprintf(buf, len, ", unlimited rate");
	else
		snprintf(buf, len, ", %s datagrams/s = %sbit/s of UDP payload%s", txs_fmt_si(x->ec.rate_pps / n, a, sizeof(a)),
			 txs_fmt_si(x->ec.rate_pps / n * pl, b, sizeof(b)), per);
	return buf;
}

static void pacing_text(FILE *f, const struct txs_send *x)
{
	uint64_t win;
	const char *mode = txs_pace_mode(&x->ec, x->dev, &win);
	if (strcmp(mode, "none") == 0)
		return;
	if (strcmp(mode, "spin") == 0)
		fprintf(f, "txscale send: pacing: spin-exact (--pace-slack 0)");
	else if (strcmp(mode, "txtime") == 0)
		fprintf(f, "txscale send: pacing: SO_TXTIME, windows of %.1f us handed over up to %u us early (%s)",
			(double)win / 1e3, TXS_PACE_TXTIME_AHEAD_NS / 1000, x->dev->txtime_why);
	else
		fprintf(f, "txscale send: pacing: sleep, sending what falls due within %.1f us together; SO_TXTIME not "
			   "used: %s", (double)win / 1e3, x->dev->txtime_why);
	fputc('\n', f);
}

void txs_send_result_json(struct txs_json *j, const struct txs_send_result *r)
{
	const struct txs_send *x = r->session;
	const struct txs_send_conf *c = &x->p.c;
	txs_json_str(j, "device", x->dev->spec);
	txs_json_u64(j, "payload_len", x->p.length);
	if (c->replay)
		txs_json_str(j, "replay", c->replay);
	if (x->rudp.datagrams) {
		txs_json_u64(j, "replay_datagrams", x->rudp.datagrams);
		txs_json_obj_open(j, "replay_skipped");
		txs_json_u64(j, "total", x->rudp.skipped_total);
		for (unsigned k = 0; k < TXS_REPLAY_SKIP_N; k++)
			txs_json_u64(j, txs_replay_skip_name(k), x->rudp.skipped[k]);
		txs_json_obj_close(j);
	}
	txs_json_str(j, "timestamps", c->timestamps);
	pacing_json(j, x);
	if (x->have_tsc) {
		const struct txs_ts_check *t = &x->tsc;
		txs_json_obj_open(j, "timestamp_check");
		txs_json_u64(j, "bursts", t->bursts);
		txs_json_u64(j, "ahead_bursts", t->ahead);
		txs_json_dbl(j, "err_mean_ns", t->err_mean_ns);
		txs_json_u64(j, "err_p50_below_ns", t->err_p50_ns);
		txs_json_u64(j, "err_p99_below_ns", t->err_p99_ns);
		txs_json_u64(j, "err_max_ns", t->err_max_ns);
		txs_json_dbl(j, "step_ns", t->step_ns);
		txs_json_obj_close(j);
	}
	txs_json_u64(j, "due_unsent", x->due_unsent);
	txs_json_u64(j, "verify_errors", r->verify_errors);
	txs_json_u64(j, "icmp_errors", r->icmp_errors);
	if (x->ls) {
		char b[128];
		struct txs_linksel_stats st;
		txs_linksel_stats(x->ls, &st);
		txs_json_str(j, "bond", txs_linksel_params_str(txs_linksel_params(x->ls), b, sizeof(b)));
		txs_json_u64(j, "bond_nolink", st.nolink);
	}
	if (x->have_prof)
		prof_json(j, &x->prof);
	send_shape_json(j, &x->p.shape, x->erows, x->p.nthreads);
	gso_json(j, x->dev);
}

void txs_send_reporter(const struct txs_send *s, FILE *out, bool json, struct txs_reporter *rep)
{
	*rep = (struct txs_reporter){ .out = out, .json = json, .kind = "send", .n_threads = s->p.nthreads,
				      .cpus = s->p.cpus, .n_links = s->dev->n_links, .frames = true };
}

void txs_send_start_text(FILE *f, const struct txs_send *s)
{
	const struct txs_send_conf *c = &s->p.c;
	const struct txs_flow_spec *sp = &s->p.gc.spec;
	const struct send_shape *sh = &s->p.shape;
	unsigned n = s->p.nthreads;
	char db[64], sk[256], bb[128];
	if (s->p.rpl && s->rudp.datagrams) {
		const struct txs_replay_udp_info *u = &s->rudp;
		fprintf(f, "txscale send: replay %s (%llu frames: %llu UDP datagrams, %llu skipped%s%s), their payloads "
			   "%s -> %s:%u, 1 thread, device %s\n", c->replay, (unsigned long long)txs_replay_frames(s->p.rpl),
			(unsigned long long)u->datagrams, (unsigned long long)u->skipped_total,
			u->skipped_total ? ": " : "", send_replay_skips_str(u, sk, sizeof(sk)),
			txs_addr_str(&sp->src, db, sizeof(db)), c->dest, c->port, s->dev->spec);
	} else if (s->p.rpl) {
		fprintf(f, "txscale send: replay %s (%llu frames), 1 thread, device %s\n", c->replay,
			(unsigned long long)txs_replay_frames(s->p.rpl), s->dev->spec);
	} else {
		char rb[128], pb[96];
		if (sh->sh.n_sizes > 1)
			snprintf(pb, sizeof(pb), "payloads of %u sizes up to %u bytes (mean %.0f)", sh->sh.n_sizes,
				 s->p.length, send_shape_payload(sh, s->p.length));
		else
			snprintf(pb, sizeof(pb), "%u-byte payload", s->p.length);
		fprintf(f, "txscale send: %s -> %s:%u, %s, %u thread%s, device %s%s%s%s\n",
			txs_addr_str(&sp->src, db, sizeof(db)), c->dest, c->port, pb, n, n > 1 ? "s" : "",
			s->dev->spec, s->ls ? ", bond " : "",
			s->ls ? txs_linksel_params_str(txs_linksel_params(s->ls), bb, sizeof(bb)) : "",
			rate_str(s, rb, sizeof(rb)));
		pacing_text(f, s);
		if (sh->any)
			fprintf(f, "txscale send: %u flow%s per thread (flow ids %llu..%llu), %u size%s\n", sh->sh.flows,
				sh->sh.flows > 1 ? "s" : "", (unsigned long long)c->flow_base,
				(unsigned long long)(c->flow_base + (uint64_t)n * sh->sh.flows - 1),
				sh->sh.n_sizes ? sh->sh.n_sizes : 1, sh->sh.n_sizes > 1 ? "s" : "");
	}
}

void txs_send_result_text(FILE *f, const struct txs_send_result *r)
{
	const struct txs_send *s = r->session;
	if (s->have_prof)
		prof_text(f, &s->prof);
	send_shape_text(f, &s->p.shape, s->erows, s->p.nthreads);
	gso_text(f, s->dev);
	if (s->have_tsc)
		fprintf(f, "timestamps: interp, step %.2f ns per datagram; error at the end of %llu checked bursts: "
			   "mean %.1f ns, p50 < %llu ns, p99 < %llu ns, max %llu ns; %llu stamped ahead of their hand-off\n",
			s->tsc.step_ns, (unsigned long long)s->tsc.bursts, s->tsc.err_mean_ns,
			(unsigned long long)s->tsc.err_p50_ns, (unsigned long long)s->tsc.err_p99_ns,
			(unsigned long long)s->tsc.err_max_ns, (unsigned long long)s->tsc.ahead);
	if (s->due_unsent)
		fprintf(f, "behind the rate: %llu datagrams due by the end of -t were not sent (the sender could not keep "
			   "its rate and stopped %g s after -t)\n", (unsigned long long)s->due_unsent,
			TXS_PACE_LATE_MAX_NS / 1e9);
	if (s->rudp.datagrams) {
		char sk[256];
		fprintf(f, "replay: %llu of the file's %llu frames are UDP datagrams (sent as payloads); %llu skipped%s%s\n",
			(unsigned long long)s->rudp.datagrams, (unsigned long long)txs_replay_frames(s->p.rpl),
			(unsigned long long)s->rudp.skipped_total, s->rudp.skipped_total ? ": " : "",
			send_replay_skips_str(&s->rudp, sk, sizeof(sk)));
	}
}

static void extra(struct txs_json *j, void *arg)
{
	txs_send_result_json(j, arg);
}

void txs_send_summary(FILE *f, bool json, const struct txs_send_result *r)
{
	struct txs_reporter rep;
	txs_send_reporter(r->session, f, json, &rep);
	txs_report_summary(&rep, r->seconds, r->threads, r->links, extra, (void *)r);
	if (!json)
		txs_send_result_text(f, r);
}

/* The run's end: no link left, a device error, nothing or not all sent. */
static void run_problems(FILE *f, const char *pre, const struct txs_send_result *r)
{
	const struct txs_send *s = r->session;
	const struct txs_netdev *dev = s->dev;
	const struct txs_stat_row *t = &r->sum;
	int le = r->last_err;
	if (r->rc == -ENETDOWN && s->mon && !txs_linkmon_up_mask(s->mon)) {
		fprintf(f, "%s--dev %s: no link left:", pre, dev->spec);
		for (unsigned l = 0; l < dev->n_links; l++)
			fprintf(f, "%s %s", l ? "," : "", txs_linkmon_link_name(s->mon, l));
		fprintf(f, " %s down\n", dev->n_links > 1 ? "are all" : "is");
	} else if (r->rc < 0) {
		fprintf(f, "%s--dev %s: %s\n", pre, dev->spec, txs_strerror(r->rc));
	} else if (!r->counts_bad && t->packets == 0 && t->drops + t->errors) {
		fprintf(f, "%s--dev %s: nothing sent: all %llu packets dropped (%llu full, %llu errors%s%s)\n", pre,
			dev->spec, (unsigned long long)(t->drops + t->errors), (unsigned long long)t->drops,
			(unsigned long long)t->errors, le ? ": " : "", le ? strerror(le) : "");
	} else if (!r->counts_bad && t->errors) {
		/* partly failed: the run goes on, but never silently */
		fprintf(f, "%s--dev %s: %llu of %llu packets not sent: device errors%s%s\n", pre, dev->spec,
			(unsigned long long)t->errors, (unsigned long long)(t->packets + t->drops + t->errors),
			le ? ": " : "", le ? strerror(le) : "");
	}
}

void txs_send_result_problems(FILE *f, const char *pre, bool json, const struct txs_send_result *r)
{
	const struct txs_send *s = r->session;
	send_check_counts(s, f, pre);
	run_problems(f, pre, r);
	if (r->icmp_errors) {
		char ab[INET6_ADDRSTRLEN];
		int le = r->last_err;
		fprintf(f, "%s--dev %s: the kernel reported %llu ICMP errors for sent datagrams (last: %s)%s%s port "
			   "%u?\n", pre, s->dev->spec, (unsigned long long)r->icmp_errors, strerror(le ? le : EIO),
			le == ECONNREFUSED ? ": is nothing listening on " : ": is there a route to ",
			txs_addr_str(&s->p.gc.spec.dst, ab, sizeof(ab)), s->p.c.port);
	}
	if (!json && r->verify_errors)
		fprintf(f, "%s%llu frames failed verification\n", pre, (unsigned long long)r->verify_errors);
}
