/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search (lib/session/ndr.c, <txscale/ndr.h>) against fake
 * receivers (a threshold oracle, a noisy one, one that fails a
 * confirmation), the reader of send/recv summary lines and files, the
 * receiver's CPU, and the reports (lib/session/ndr_report.c): the header,
 * a trial's row and each outcome's result, as text and JSON. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <txscale/common.h>
#include <txscale/ndr.h>
#include "common/jsonpath.h"
#define T_TMPDIR_NAME "txs_ndr"
#include "test_tmpdir.h"

/* A fake path: no loss up to T packets/s; the unlimited trial (rate 0)
 * sends at `sender` pps and passes only if that is <= T. */
struct oracle {
	double T, sender;
	unsigned calls;
	/* noise: fail the confirmation trials listed here (by count) */
	unsigned fail_confirms;
	/* random flips with probability flip (0..1) */
	double flip;
	uint64_t seed;
	/* record */
	double rates[TXS_NDR_MAX_TRIALS + 1];
	enum txs_ndr_phase phases[TXS_NDR_MAX_TRIALS + 1];
	bool passes[TXS_NDR_MAX_TRIALS + 1];
};

static bool oracle_trial(struct oracle *o, double rate, enum txs_ndr_phase ph, double *achieved)
{
	double r = rate > 0 ? rate : o->sender;
	*achieved = r;
	bool pass = r <= o->T;
	if (ph == TXS_NDR_CONFIRM && o->fail_confirms) {
		o->fail_confirms--;
		pass = false;
	}
	if (o->flip > 0 && (double)(t_rand(&o->seed) >> 11) / 9007199254740992.0 < o->flip)
		pass = !pass;
	if (o->calls <= TXS_NDR_MAX_TRIALS) {
		o->rates[o->calls] = rate;
		o->phases[o->calls] = ph;
		o->passes[o->calls] = pass;
	}
	o->calls++;
	return pass;
}

/* Drive a whole search; returns the number of trials run. */
static unsigned run_search(struct txs_ndr_search *s, struct oracle *o)
{
	double rate, ach;
	enum txs_ndr_phase ph;
	unsigned guard = 0;
	while (txs_ndr_next(s, &rate, &ph)) {
		bool pass = oracle_trial(o, rate, ph, &ach);
		txs_ndr_report(s, pass, ach);
		assert_true(++guard <= TXS_NDR_MAX_TRIALS); /* never more than the budget allows */
	}
	assert_int_equal(s->phase, TXS_NDR_DONE);
	assert_int_equal(s->trials, o->calls);
	assert_true(s->trials <= s->max_trials);
	/* asking again after the end changes nothing */
	assert_false(txs_ndr_next(s, &rate, &ph));
	return o->calls;
}

/* Converges to the threshold within the precision, in bounded trials, for
 * thresholds over the whole bracket; every rate tried is inside [lo, hi]. */
static void ndr_converges(void **st)
{
	(void)st;
	const double precisions[] = { 0.01, 0.05, 0.001 };
	for (unsigned pi = 0; pi < TXS_ARRAY_SIZE(precisions); pi++) {
		double p = precisions[pi];
		for (double T = 10500; T < 1e6; T *= 1.037) {
			struct txs_ndr_search s;
			assert_int_equal(txs_ndr_init(&s, 10000, 1e6, p, 40), 0);
			struct oracle o = { .T = T };
			run_search(&s, &o);
			assert_int_equal(s.outcome, TXS_NDR_FOUND);
			assert_true(s.confirmed);
			assert_true(s.converged);
			assert_true(s.result <= T);
			/* (hi - lo) / hi <= p with lo <= T < hi, or a bracket under 2 pps */
			assert_true(s.result > T * (1 - p) - 2);
			assert_true(s.hi > T);
			/* trials: hi, lo, the bisection (log2 of the bracket over the
			 * precision), the confirmation */
			unsigned bound = 3 + (unsigned)ceil(log2((1e6 - 10000) / (p * T))) + 1;
			assert_true(s.trials <= bound);
			for (unsigned i = 0; i < o.calls; i++)
				assert_true(o.rates[i] >= 10000 && o.rates[i] <= 1e6);
			assert_int_equal(o.phases[0], TXS_NDR_HI);
			assert_int_equal(o.phases[1], TXS_NDR_LO);
			assert_int_equal(o.phases[o.calls - 1], TXS_NDR_CONFIRM);
			assert_true(o.rates[o.calls - 1] == s.result);
			assert_true(o.passes[o.calls - 1]);
		}
	}
}

/* A higher threshold never gives a lower result. */
static void ndr_monotone(void **st)
{
	(void)st;
	double prev = 0;
	for (double T = 5000; T < 300000; T += 777) {
		struct txs_ndr_search s;
		assert_int_equal(txs_ndr_init(&s, 10000, 250000, 0.01, 20), 0);
		struct oracle o = { .T = T };
		run_search(&s, &o);
		assert_true(s.result >= prev);
		prev = s.result;
	}
}

/* Edge cases: even lo fails; hi passes; the unlimited trial passes; a
 * sender slower than lo. */
static void ndr_edges(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	struct oracle o = { .T = 5000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 1e6, 0.01, 20), 0);
	assert_int_equal(run_search(&s, &o), 2);
	assert_int_equal(s.outcome, TXS_NDR_LO_FAILS);
	assert_true(s.result == 0);
	assert_false(s.confirmed);

	o = (struct oracle){ .T = 2e6 };
	assert_int_equal(txs_ndr_init(&s, 10000, 1e6, 0.01, 20), 0);
	assert_int_equal(run_search(&s, &o), 1);
	assert_int_equal(s.outcome, TXS_NDR_HI_PASSES);
	assert_true(s.result == 1e6);
	assert_true(s.confirmed);

	/* no --hi: the unlimited trial comes first and its rate becomes hi */
	o = (struct oracle){ .T = 123456, .sender = 400000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	run_search(&s, &o);
	assert_int_equal(o.phases[0], TXS_NDR_MEASURE);
	assert_true(o.rates[0] == 0);
	assert_true(s.measured);
	assert_int_equal(s.outcome, TXS_NDR_FOUND);
	assert_true(s.result <= 123456 && s.result > 123456 * 0.99 - 2);
	for (unsigned i = 1; i < o.calls; i++)
		assert_true(o.rates[i] >= 10000 && o.rates[i] <= 400000);

	/* the sender itself is the limit: the probe passes, then a whole
	 * trial paced at the probe's rate */
	o = (struct oracle){ .T = 1e6, .sender = 300000.7 };
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	assert_int_equal(run_search(&s, &o), 2);
	assert_int_equal(o.phases[1], TXS_NDR_HI);
	assert_true(o.rates[1] == 300000);
	assert_int_equal(s.outcome, TXS_NDR_HI_PASSES);
	assert_true(s.result == 300000);
	assert_true(s.confirmed);

	/* the probe passes (a short trial) but the whole trial at its rate
	 * does not: the search goes on below */
	struct oracle o2 = { .T = 250000, .sender = 240000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	double rate, ach;
	enum txs_ndr_phase ph;
	assert_true(txs_ndr_next(&s, &rate, &ph));
	txs_ndr_report(&s, true, 240000);
	assert_true(txs_ndr_next(&s, &rate, &ph));
	assert_int_equal(ph, TXS_NDR_HI);
	txs_ndr_report(&s, false, 240000);
	while (txs_ndr_next(&s, &rate, &ph)) {
		bool pass = oracle_trial(&o2, rate, ph, &ach) && rate < 200000;
		txs_ndr_report(&s, pass, ach);
	}
	assert_int_equal(s.outcome, TXS_NDR_FOUND);
	assert_true(s.result < 200000 && s.result > 200000 * 0.99 - 2);

	/* a sender slower than lo, losing: lo decides alone */
	o = (struct oracle){ .T = 3000, .sender = 8000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	assert_int_equal(run_search(&s, &o), 2);
	assert_int_equal(s.outcome, TXS_NDR_LO_FAILS);

	/* the bracket cannot narrow below one packet/s */
	o = (struct oracle){ .T = 10 };
	assert_int_equal(txs_ndr_init(&s, 9, 12, 0.0001, 100), 0);
	run_search(&s, &o);
	assert_int_equal(s.outcome, TXS_NDR_FOUND);
	assert_true(s.result == 10);
	assert_true(s.trials <= 6);
}

/* The budget: max_trials is never exceeded, the last trial confirms, and a
 * search cut short says so. */
static void ndr_bounded(void **st)
{
	(void)st;
	for (unsigned max = 3; max <= 12; max++) {
		struct txs_ndr_search s;
		struct oracle o = { .T = 543210 };
		assert_int_equal(txs_ndr_init(&s, 1000, 1e7, 0.0001, max), 0);
		assert_true(run_search(&s, &o) <= max);
		assert_int_equal(s.outcome, TXS_NDR_OUT_OF_TRIALS);
		assert_true(s.result <= 543210);
		assert_true(s.result >= 1000);
		assert_false(s.converged);
		assert_int_equal(o.phases[o.calls - 1], TXS_NDR_CONFIRM);
		assert_true(s.confirmed);
	}
}

/* A failed confirmation lowers hi to that rate and the search goes on from
 * the pass before; two failures in a row still end within the budget. */
static void ndr_confirm_fails(void **st)
{
	(void)st;
	for (unsigned fails = 1; fails <= 3; fails++) {
		struct txs_ndr_search s;
		struct oracle o = { .T = 200000, .fail_confirms = fails };
		assert_int_equal(txs_ndr_init(&s, 10000, 1e6, 0.01, 40), 0);
		run_search(&s, &o);
		unsigned confirms = 0;
		double first = 0;
		for (unsigned i = 0; i < o.calls; i++)
			if (o.phases[i] == TXS_NDR_CONFIRM) {
				if (!confirms)
					first = o.rates[i];
				confirms++;
			}
		assert_int_equal(confirms, fails + 1);
		assert_int_equal(s.outcome, TXS_NDR_FOUND);
		assert_true(s.confirmed);
		assert_true(s.result < first); /* what failed is not reported */
		assert_true(s.result <= 200000);
		assert_true(s.hi <= first);
	}
	/* the confirmation of lo itself fails: nothing stands */
	struct txs_ndr_search s;
	struct oracle o = { .T = 10000, .fail_confirms = 1 };
	assert_int_equal(txs_ndr_init(&s, 10000, 20000, 0.01, 20), 0);
	run_search(&s, &o);
	assert_int_equal(s.outcome, TXS_NDR_LO_FAILS);
	assert_true(s.result == 0);
}

/* A noisy path: whatever the verdicts, the search ends within the budget
 * and reports only a rate that passed (or 0). */
static void ndr_noisy(void **st)
{
	(void)st;
	for (uint64_t seed = 1; seed <= 2000; seed++) {
		struct txs_ndr_search s;
		struct oracle o = { .T = 77777, .flip = 0.2, .seed = seed, .sender = 150000 };
		unsigned max = 3 + (unsigned)(seed % 20);
		assert_int_equal(txs_ndr_init(&s, 10000, seed % 3 ? 0 : 120000, 0.02, max), 0);
		run_search(&s, &o);
		if (s.result > 0) {
			bool seen = false;
			for (unsigned i = 0; i < o.calls; i++) {
				double r = o.rates[i] > 0 ? o.rates[i] : o.sender;
				seen |= o.passes[i] && r == s.result;
			}
			assert_true(seen);
		}
		if (s.confirmed)
			assert_true(o.passes[o.calls - 1]);
	}
}

static void ndr_init_checks(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	assert_int_equal(txs_ndr_init(&s, 0, 0, 0.01, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 100, 0.01, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 50, 0.01, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 0, 0, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 0, 1, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 0, 0.01, 2), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 0, 0.01, TXS_NDR_MAX_TRIALS + 1), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, NAN, 0, 0.01, 20), -EINVAL);
	assert_int_equal(txs_ndr_init(&s, 100, 0, 0.01, 3), 0);
	assert_string_equal(txs_ndr_phase_str(TXS_NDR_CONFIRM), "confirm");
	assert_string_equal(txs_ndr_outcome_str(TXS_NDR_LO_FAILS), "lo-fails");
}

/* ---- summaries ------------------------------------------------------------------ */

static const char send_line[] =
	"{\"type\":\"summary\",\"kind\":\"send\",\"seconds\":2.00012,\"packets\":200000,\"bytes\":12000000,"
	"\"drops\":3,\"errors\":0,\"pps\":99994,\"bps\":4.8e+07,\"threads\":[{\"id\":0,\"cpu\":0,\"packets\":200000,"
	"\"bytes\":12000000,\"drops\":3,\"errors\":0,\"pps\":99994,\"bps\":4.8e+07}],\"links\":[],\"device\":\"udp\","
	"\"payload_len\":16,\"verify_errors\":0}";

static const char recv_line[] =
	"{\"type\":\"summary\",\"kind\":\"recv\",\"device\":\"udp\",\"seconds\":2.6,\"active_seconds\":2.0,"
	"\"pps\":9.9e+04,\"bps\":1.2e+07,\"received\":199000,\"lost\":1000,\"duplicates\":0,\"lost_exact\":true,"
	"\"expected\":200000,\"weird \\\"key\\\"\":[1,{\"a\":[]},\"x\\u0041\"],\"latency_ns\":{\"p50\":-1.5e-3},"
	"\"kernel_drops\":{\"sockets\":990,\"udp\":{\"InDatagrams\":199000,\"InErrors\":990,\"RcvbufErrors\":990},"
	"\"udp6\":{\"InErrors\":0,\"RcvbufErrors\":0},\"softnet\":{\"dropped\":4,\"time_squeeze\":1},"
	"\"interfaces\":{\"lo\":{\"rx_packets\":0,\"rx_dropped\":0},\"rx0\":{\"rx_packets\":200000,\"rx_dropped\":6},"
	"\"rx1\":{\"rx_dropped\":1}}},\"input\":{\"socket_drops\":990},\"threads\":[]}";

/* The summaries are read with jansson through lib/common/jsonpath.h. */
static void json_reader(void **st)
{
	(void)st;
	size_t n = strlen(recv_line);
	uint64_t u;
	double d;
	bool b;
	json_t *o = txs_jload(recv_line, n);
	assert_non_null(o);
	assert_int_equal(txs_jget_u64(o, "received", &u), 0);
	assert_int_equal(u, 199000);
	assert_int_equal(txs_jget_u64(o, "kernel_drops.udp.RcvbufErrors", &u), 0);
	assert_int_equal(u, 990);
	assert_int_equal(txs_jget_u64(o, "input.socket_drops", &u), 0);
	assert_int_equal(u, 990);
	assert_int_equal(txs_jget_dbl(o, "latency_ns.p50", &d), 0);
	assert_true(d == -1.5e-3);
	assert_int_equal(txs_jget_u64(o, "latency_ns.p50", &u), -EINVAL); /* not unsigned */
	assert_int_equal(txs_jget_bool(o, "lost_exact", &b), 0);
	assert_true(b);
	assert_int_equal(txs_jget_bool(o, "received", &b), -EINVAL);
	assert_int_equal(txs_jget_u64(o, "nothing", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, "kernel_drops.udp.NoPorts", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, "received.x", &u), -ENOENT);
	assert_int_equal(txs_jget_u64(o, "weird \"key\".1.a", &u), -EINVAL); /* an array */
	assert_int_equal(txs_jsum_members(o, "kernel_drops.interfaces", "rx_dropped", &u), 0);
	assert_int_equal(u, 7);
	assert_int_equal(txs_jsum_members(o, "received", "rx_dropped", &u), -EINVAL);
	assert_int_equal(txs_jsum_members(o, "kernel_drops.nothing", "rx_dropped", &u), -ENOENT);
	json_decref(o);
	/* broken input: every prefix of the line is refused, never read past */
	for (size_t cut = 0; cut < n; cut++) {
		char *p = malloc(cut ? cut : 1);
		memcpy(p, recv_line, cut);
		assert_null(txs_jload(p, cut));
		free(p);
	}
}

static void trial_verdict(void **st)
{
	(void)st;
	struct txs_ndr_trial t;
	assert_int_equal(txs_ndr_trial_parse(&t, send_line, strlen(send_line), recv_line, strlen(recv_line)), 0);
	assert_int_equal(t.sent, 200000);
	assert_int_equal(t.sender_drops, 3);
	assert_true(t.sent_pps == 99994);
	assert_int_equal(t.received, 199000);
	assert_int_equal(t.lost, 1000);
	assert_true(t.lost_exact);
	assert_true(t.have_sockets);
	assert_int_equal(t.sockets, 990);
	assert_int_equal(t.rcvbuf_errors, 990);
	assert_int_equal(t.in_errors, 990);
	assert_int_equal(t.if_dropped, 7);
	assert_int_equal(t.softnet, 4);
	assert_non_null(t.kernel_drops);
	/* the object as it was, members in order */
	assert_string_equal(t.kernel_drops,
			    "{\"sockets\":990,\"udp\":{\"InDatagrams\":199000,\"InErrors\":990,\"RcvbufErrors\":990},"
			    "\"udp6\":{\"InErrors\":0,\"RcvbufErrors\":0},\"softnet\":{\"dropped\":4,\"time_squeeze\":1},"
			    "\"interfaces\":{\"lo\":{\"rx_packets\":0,\"rx_dropped\":0},\"rx0\":{\"rx_packets\":200000,"
			    "\"rx_dropped\":6},\"rx1\":{\"rx_dropped\":1}}}");
	txs_ndr_trial_release(&t);
	assert_null(t.kernel_drops);
	double pct;
	/* offered 200003, lost 1003 */
	assert_false(txs_ndr_trial_pass(&t, 0, &pct));
	assert_true(fabs(pct - 1003 * 100.0 / 200003) < 1e-9);
	assert_false(txs_ndr_trial_pass(&t, 0.5, &pct));
	assert_true(txs_ndr_trial_pass(&t, 0.6, &pct));
	t.lost = 0;
	assert_false(txs_ndr_trial_pass(&t, 0, &pct)); /* the sender's drops are loss too */
	t.sender_drops = 0;
	assert_true(txs_ndr_trial_pass(&t, 0, &pct));
	assert_true(pct == 0);
	t.lost_exact = false;
	assert_false(txs_ndr_trial_pass(&t, 50, &pct));
	t.lost_exact = true;
	t.sent = 0;
	assert_false(txs_ndr_trial_pass(&t, 50, &pct)); /* nothing offered proves nothing */
	/* a missing field is an error */
	static const char no_lost[] = "{\"received\":1,\"lost_exact\":true}";
	assert_int_equal(txs_ndr_trial_parse(&t, send_line, strlen(send_line), no_lost, strlen(no_lost)), -EINVAL);
	assert_int_equal(txs_ndr_trial_parse(&t, recv_line, strlen(recv_line), recv_line, strlen(recv_line)), -EINVAL);
}

/* ---- summary files -------------------------------------------------------------- */

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void trial_files(void **st)
{
	(void)st;
	char sp[256], rp[256], absent[256], err[512] = "", line[1200];
	t_tmppath(sp, sizeof(sp), "send.json");
	t_tmppath(rp, sizeof(rp), "recv.json");
	t_tmppath(absent, sizeof(absent), "absent.json");
	snprintf(line, sizeof(line), "%s\n", send_line); /* as send writes it: one line */
	put_file(sp, line);
	snprintf(line, sizeof(line), "%s\n\n", recv_line);
	put_file(rp, line);
	struct txs_ndr_trial t;
	assert_int_equal(txs_ndr_trial_load(&t, sp, rp, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(t.sent, 200000);
	assert_int_equal(t.lost, 1000);
	assert_non_null(t.kernel_drops);
	txs_ndr_trial_release(&t);
	assert_int_equal(txs_ndr_trial_load(&t, absent, rp, err, sizeof(err)), -EIO);
	assert_string_equal(err, "no sender summary file");
	assert_null(t.kernel_drops);
	assert_int_equal(txs_ndr_trial_load(&t, sp, absent, err, sizeof(err)), -EIO);
	assert_string_equal(err, "no receiver summary file");
	put_file(rp, "{\"received\":1,\"lost_exact\":true}\n");
	assert_int_equal(txs_ndr_trial_load(&t, sp, rp, err, sizeof(err)), -EIO);
	/* each line shown, up to 120 bytes */
	assert_string_equal(err, "cannot read the summaries (sender: {\"type\":\"summary\",\"kind\":\"send\",\"seconds\":"
				 "2.00012,\"packets\":200000,\"bytes\":12000000,\"drops\":3,\"errors\":0,\"pps\":99994,"
				 "\"bp; receiver: {\"received\":1,\"lost_exact\":true})");
	put_file(rp, "{\"received\":1,\"lost\":0,\"lost_exact\":false}\n");
	assert_int_equal(txs_ndr_trial_load(&t, sp, rp, err, sizeof(err)), -EIO);
	assert_string_equal(err, "the receiver could not count loss exactly (sender summary unread)");
	assert_null(t.kernel_drops);
}

/* The receiver's CPU: the first of ours the sender does not use */
static void recv_cpu_choice(void **st)
{
	(void)st;
	cpu_set_t ours;
	CPU_ZERO(&ours);
	assert_int_equal(sched_getaffinity(0, sizeof(ours), &ours), 0);
	int cpu[4], n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < 4; c++)
		if (CPU_ISSET(c, &ours))
			cpu[n++] = c;
	/* unpinned sender, 1 thread: it counts as the first CPU; 2 threads: the first two */
	assert_int_equal(txs_ndr_recv_cpu(NULL, 0, 0, NULL, 0), n > 1 ? cpu[1] : -1);
	assert_int_equal(txs_ndr_recv_cpu(NULL, 0, 2, NULL, 0), n > 2 ? cpu[2] : -1);
	/* a pinned sender: its CPUs only */
	assert_int_equal(txs_ndr_recv_cpu(&cpu[n - 1], 1, 0, NULL, 0), n > 1 ? cpu[0] : -1);
	assert_int_equal(txs_ndr_recv_cpu(cpu, (unsigned)n, 0, NULL, 0), -1); /* none left */
	/* the user's receiver options choose */
	static const char *const pins[][2] = { { "--rcvbuf", "-A1" }, { "--affinity=0", "x" }, { "--no-pin", "x" },
					       { "-P", "2" }, { "--parallel", "2" } };
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(pins); i++)
		assert_int_equal(txs_ndr_recv_cpu(NULL, 0, 0, pins[i], 2), -1);
	static const char *const other[] = { "--rcvbuf", "4096" };
	assert_int_equal(txs_ndr_recv_cpu(NULL, 0, 0, other, 2), n > 1 ? cpu[1] : -1);
}

/* ---- reports ------------------------------------------------------------------------- */

static const struct txs_ndr_info info = { .dest = "198.18.0.2", .port = 5201, .device = "udp", .recv_device = "udp",
					  .recv_args = "--rcvbuf 4096", .payload_len = 16, .threads = 1, .trial_s = 2,
					  .precision_pct = 1, .loss_pct = 0 };

/* A search against o written as it goes (json or text) into *out: rows,
 * then the result after `seconds`. The fake trial sends at the rate (the
 * unlimited one at o->sender), times short (< 1: the sender reaches only
 * that share of it), and loses 1 % above the threshold. */
static char *report(struct txs_ndr_search *s, struct oracle *o, bool json, double short_by, double seconds)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	double rate, last = 0;
	enum txs_ndr_phase ph;
	while (txs_ndr_next(s, &rate, &ph)) {
		double ach, pct, secs = ph == TXS_NDR_MEASURE ? 1 : 2;
		bool pass = oracle_trial(o, rate, ph, &ach);
		struct txs_ndr_trial t = { .lost_exact = true, .have_sockets = true };
		t.sent_pps = rate > 0 ? rate * short_by : ach;
		t.sent = (uint64_t)(t.sent_pps * secs);
		t.lost = pass ? 0 : t.sent / 100;
		t.sockets = t.rcvbuf_errors = t.lost;
		t.received = t.sent - t.lost;
		t.recv_pps = (double)t.received / secs;
		assert_int_equal(txs_ndr_trial_pass(&t, 0, &pct), pass);
		txs_ndr_write_trial(f, json, s, secs, &t, pct, pass);
		txs_ndr_report(s, pass, t.sent_pps);
		last = t.sent_pps;
	}
	txs_ndr_write_result(f, json, s, &info, last, seconds);
	fclose(f);
	return buf;
}

static const char *last_line(const char *text)
{
	size_t n = strlen(text);
	assert_true(n > 1 && text[n - 1] == '\n');
	const char *p = text + n - 1;
	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

static unsigned count_lines(const char *text, const char *prefix)
{
	unsigned k = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		k += strncmp(p, prefix, strlen(prefix)) == 0;
	return k;
}

/* The result line as JSON: its keys exactly and in this order */
static json_t *result_json(const char *text)
{
	static const char *const keys[] = { "type", "rate_pps", "precision_pct", "trial_s", "trials", "outcome",
					    "limited_by", "confirmed", "lo_pps", "hi_pps", "bracket_pct", "sent_pps",
					    "loss_pct_max", "dest", "device", "recv_device", "payload_len", "threads",
					    "seconds" };
	const char *line = last_line(text);
	json_t *o = txs_jload(line, strlen(line) - 1);
	assert_non_null(o);
	assert_int_equal(json_object_size(o), TXS_ARRAY_SIZE(keys));
	const char *at = line;
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(keys); i++) {
		char k[32];
		snprintf(k, sizeof(k), "\"%s\":", keys[i]);
		const char *p = strstr(at, k);
		assert_non_null(p);
		at = p;
	}
	return o;
}

static void assert_json_str(const json_t *o, const char *key, const char *want)
{
	assert_string_equal(json_string_value(json_object_get(o, key)), want);
}

static double json_num(const json_t *o, const char *key)
{
	double d = -1;
	assert_int_equal(txs_jget_dbl(o, key, &d), 0);
	return d;
}

static void header_and_rows(void **st)
{
	(void)st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct txs_ndr_search s;
	double rate;
	enum txs_ndr_phase ph;
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	txs_ndr_write_header(f, &s, &info);
	assert_true(txs_ndr_next(&s, &rate, &ph));
	struct txs_ndr_trial t = { .sent = 541000, .sent_pps = 541000, .sender_drops = 2, .received = 540000,
				   .recv_pps = 539990.5, .lost = 998, .lost_exact = true, .rcvbuf_errors = 990,
				   .if_dropped = 6, .softnet = 1, .kernel_drops = (char *)"{\"sockets\":990}" };
	double pct;
	bool pass = txs_ndr_trial_pass(&t, 0, &pct);
	txs_ndr_write_trial(f, false, &s, 1, &t, pct, pass);
	txs_ndr_write_trial(f, true, &s, 1, &t, pct, pass);
	txs_ndr_report(&s, pass, t.sent_pps);
	assert_true(txs_ndr_next(&s, &rate, &ph));
	t = (struct txs_ndr_trial){ .sent = 20000, .sent_pps = 10000, .received = 20000, .recv_pps = 10001,
				    .lost_exact = true, .have_sockets = true };
	pass = txs_ndr_trial_pass(&t, 0, &pct);
	txs_ndr_write_trial(f, false, &s, 2, &t, pct, pass);
	txs_ndr_write_trial(f, true, &s, 2, &t, pct, pass);
	fclose(f);
	assert_string_equal(
		buf,
		"txscale ndr: 198.18.0.2 port 5201, 16-byte payload, --dev udp, 1 sender thread, recv --dev udp "
		"--rcvbuf 4096; 2 s trials, precision 1%, loss <= 0%, rates 10.0k..measured pps, at most 20 trials\n"
		"  1 measure unlimited pps: sent 541000 (541.0k pps), received 540000, lost 1000 (0.1848%) FAIL  drops: "
		"socket ? (RcvbufErrors 990), if rx 6, softnet 1, some at the sender\n"
		"{\"type\":\"trial\",\"trial\":1,\"phase\":\"measure\",\"rate\":0,\"seconds\":1,\"sent\":541000,"
		"\"sent_pps\":541000,\"sender_drops\":2,\"received\":540000,\"recv_pps\":539990,\"lost\":998,"
		"\"loss_pct\":0.184842,\"pass\":false,\"kernel_drops\":{\"sockets\":990}}\n"
		"  2 lo          10.0k pps: sent 20000 (10.0k pps), received 20000, lost 0 (0%) PASS  drops: socket 0 "
		"(RcvbufErrors 0), if rx 0, softnet 0\n"
		"{\"type\":\"trial\",\"trial\":2,\"phase\":\"lo\",\"rate\":10000,\"seconds\":2,\"sent\":20000,"
		"\"sent_pps\":10000,\"sender_drops\":0,\"received\":20000,\"recv_pps\":10001,\"lost\":0,\"loss_pct\":0,"
		"\"pass\":true}\n");
	free(buf);
	/* several threads, a known upper bound, no extra receiver options */
	struct txs_ndr_info in = info;
	in.threads = 4;
	in.recv_args = NULL;
	in.precision_pct = 0.5;
	in.loss_pct = 0.1;
	assert_int_equal(txs_ndr_init(&s, 1000, 2.5e6, 0.005, 7), 0);
	f = open_memstream(&buf, &len);
	txs_ndr_write_header(f, &s, &in);
	fclose(f);
	assert_string_equal(buf, "txscale ndr: 198.18.0.2 port 5201, 16-byte payload, --dev udp, 4 sender threads, "
				 "recv --dev udp; 2 s trials, precision 0.5%, loss <= 0.1%, rates 1.0k..2.50M pps, "
				 "at most 7 trials\n");
	free(buf);
}

/* found: converged and confirmed, then the same with a sender that reaches
 * only 95 % of each rate (a note, and the result is what it sent) */
static void result_found(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	struct oracle o = { .T = 50000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 40), 0);
	char *text = report(&s, &o, false, 1, 12.34);
	assert_int_equal(s.outcome, TXS_NDR_FOUND);
	assert_int_equal(count_lines(text, " "), s.trials); /* one row per trial, then the result */
	assert_string_equal(last_line(text), "ndr: 49.7k pps with zero loss (bracket 49.7k..50.1k pps, 0.7% <= 1%), "
					     "confirmed; 11 trials of 2 s, 12.3 s\n");
	assert_int_equal(count_lines(text, "ndr: note"), 0);
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 40), 0);
	o = (struct oracle){ .T = 50000 };
	text = report(&s, &o, true, 1, 12.34);
	json_t *j = result_json(text);
	assert_json_str(j, "type", "ndr");
	assert_json_str(j, "outcome", "found");
	assert_json_str(j, "limited_by", "loss");
	assert_true(json_is_true(json_object_get(j, "confirmed")));
	assert_true(json_num(j, "rate_pps") == s.result && s.result == s.lo);
	assert_true(json_num(j, "lo_pps") == s.lo);
	assert_true(json_num(j, "hi_pps") == s.hi);
	assert_true(fabs(json_num(j, "bracket_pct") - txs_ndr_bracket(&s) * 100) < 1e-4);
	assert_true(json_num(j, "trials") == s.trials);
	assert_true(json_num(j, "seconds") == 12.34);
	assert_true(json_num(j, "precision_pct") == 1 && json_num(j, "trial_s") == 2 && json_num(j, "loss_pct_max") == 0);
	assert_json_str(j, "dest", "198.18.0.2");
	assert_json_str(j, "device", "udp");
	assert_json_str(j, "recv_device", "udp");
	assert_true(json_num(j, "payload_len") == 16 && json_num(j, "threads") == 1);
	json_decref(j);
	free(text);

	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 40), 0);
	o = (struct oracle){ .T = 50000 };
	text = report(&s, &o, false, 0.95, 12.34);
	assert_int_equal(s.outcome, TXS_NDR_FOUND);
	assert_int_equal(count_lines(text, "ndr: note: the sender reached only 47.2k pps of the 49.7k pps asked for\n"),
			 1);
	assert_string_equal(last_line(text), "ndr: 47.2k pps with zero loss (bracket 49.7k..50.1k pps, 0.7% <= 1%), "
					     "confirmed; 11 trials of 2 s, 12.3 s\n");
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 40), 0);
	o = (struct oracle){ .T = 50000 };
	text = report(&s, &o, true, 0.95, 12.34);
	j = result_json(text);
	assert_json_str(j, "limited_by", "sender");
	assert_true(json_num(j, "rate_pps") == json_num(j, "sent_pps"));
	assert_true(json_num(j, "rate_pps") < s.result);
	json_decref(j);
	free(text);
}

static void result_hi_passes(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	struct oracle o = { .T = 1e9 };
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 20), 0);
	char *text = report(&s, &o, false, 1, 2.56);
	assert_string_equal(last_line(text), "ndr: no loss at the upper bound: 100.0k pps (--hi); the path takes at "
					     "least that; 1 trial, 2.6 s\n");
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 20), 0);
	text = report(&s, &o, true, 1, 2.56);
	json_t *j = result_json(text);
	assert_json_str(j, "outcome", "hi-passes");
	assert_json_str(j, "limited_by", "hi");
	assert_true(json_is_null(json_object_get(j, "hi_pps")));
	assert_true(json_is_null(json_object_get(j, "bracket_pct")));
	assert_true(json_num(j, "lo_pps") == 0 && json_num(j, "rate_pps") == 100000);
	json_decref(j);
	free(text);
	/* measured: the sender's unlimited rate passed, then a paced trial there */
	o = (struct oracle){ .T = 1e9, .sender = 300000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	text = report(&s, &o, false, 1, 4);
	assert_string_equal(last_line(text), "ndr: no loss at the upper bound: 300.0k pps (the sender's unlimited rate: "
					     "the sender is the limit); the path takes at least that; 2 trials, 4.0 s\n");
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	text = report(&s, &o, true, 1, 4);
	j = result_json(text);
	assert_json_str(j, "limited_by", "sender");
	json_decref(j);
	free(text);
	/* the paced trial fell short of it */
	assert_int_equal(txs_ndr_init(&s, 10000, 0, 0.01, 20), 0);
	text = report(&s, &o, false, 0.9, 4);
	assert_string_equal(last_line(text), "ndr: no loss at the upper bound: 270.0k pps (what the sender reached: the "
					     "sender is the limit); the path takes at least that; 2 trials, 4.0 s\n");
	free(text);
}

static void result_lo_fails(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	struct oracle o = { .T = 5000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 20), 0);
	char *text = report(&s, &o, false, 1, 5.04);
	assert_string_equal(last_line(text),
			    "ndr: loss even at the lower bound 10.0k pps: the NDR is below --lo; 2 trials, 5.0 s\n");
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 20), 0);
	text = report(&s, &o, true, 1, 5.04);
	json_t *j = result_json(text);
	assert_json_str(j, "outcome", "lo-fails");
	assert_json_str(j, "limited_by", "lo");
	assert_true(json_is_false(json_object_get(j, "confirmed")));
	assert_true(json_num(j, "rate_pps") == 0 && json_num(j, "lo_pps") == 0 && json_num(j, "hi_pps") == 10000);
	assert_true(json_is_null(json_object_get(j, "bracket_pct"))); /* nothing passed */
	json_decref(j);
	free(text);
}

static void result_out_of_trials(void **st)
{
	(void)st;
	struct txs_ndr_search s;
	struct oracle o = { .T = 50000 };
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 4), 0);
	char *text = report(&s, &o, false, 1, 9.96);
	assert_int_equal(s.outcome, TXS_NDR_OUT_OF_TRIALS);
	assert_string_equal(last_line(text), "ndr: --max-trials 4 reached: highest pass 10.0k pps, confirmed (bracket "
					     "82%, wanted 1%); 10.0 s\n");
	free(text);
	assert_int_equal(txs_ndr_init(&s, 10000, 100000, 0.01, 4), 0);
	text = report(&s, &o, true, 1, 9.96);
	json_t *j = result_json(text);
	assert_json_str(j, "outcome", "out-of-trials");
	assert_json_str(j, "limited_by", "trials");
	assert_true(json_num(j, "trials") == 4);
	assert_true(fabs(json_num(j, "bracket_pct") - txs_ndr_bracket(&s) * 100) < 1e-4);
	json_decref(j);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ndr_converges),   cmocka_unit_test(ndr_monotone),
		cmocka_unit_test(ndr_edges),       cmocka_unit_test(ndr_bounded),
		cmocka_unit_test(ndr_confirm_fails), cmocka_unit_test(ndr_noisy),
		cmocka_unit_test(ndr_init_checks), cmocka_unit_test(json_reader),
		cmocka_unit_test(trial_verdict),   cmocka_unit_test(trial_files),
		cmocka_unit_test(recv_cpu_choice), cmocka_unit_test(header_and_rows),
		cmocka_unit_test(result_found),    cmocka_unit_test(result_hi_passes),
		cmocka_unit_test(result_lo_fails), cmocka_unit_test(result_out_of_trials),
	};
	return cmocka_run_group_tests(tests, t_tmpdir_setup, t_tmpdir_teardown);
}
