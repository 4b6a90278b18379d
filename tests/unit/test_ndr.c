/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search (lib/session/ndr.c, <txscale/ndr.h>) against fake
 * receivers (a threshold oracle, a noisy one, one that fails a
 * confirmation) and the reader of send/recv summary lines. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <txscale/common.h>
#include <txscale/ndr.h>
#include "common/jsonpath.h"
#include "test_util.h"

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

T_MAIN(cmocka_unit_test(ndr_converges),
       cmocka_unit_test(ndr_monotone),
       cmocka_unit_test(ndr_edges),
       cmocka_unit_test(ndr_bounded),
       cmocka_unit_test(ndr_confirm_fails),
       cmocka_unit_test(ndr_noisy),
       cmocka_unit_test(ndr_init_checks),
       cmocka_unit_test(json_reader),
       cmocka_unit_test(trial_verdict))
