/* SPDX-License-Identifier: MIT */
/* Engine profile (txscale send --profile): for every ID strategy, a profiled
 * run on the dummy device sends exactly what an unprofiled one sends, samples
 * ceil(bursts / N) bursts per worker holding exactly the packets of those
 * bursts, times every stage, and its shares sum to 1; the profiled fill builds
 * the same frames as the plain one (every strategy, every link mode); the
 * sendmsg path reports ident inside header. No timing assertions: cycles are
 * only required to be there. */
#include <errno.h>
#include <string.h>
#include <txscale/txscale.h>
#include "engine/worker.h"
#include "ident/ident_priv.h"
#include "test_engine.h"
#include "test_util.h"

#if !TXS_PROF_SUPPORTED
int main(void)
{
	T_SKIP("no cycle counter on this architecture: txs_engine_create refuses profile_every (-ENOTSUP)");
}
#else

enum { BURST = 32 };

static struct txs_flow_spec flow_spec(void)
{
	struct txs_flow_spec sp = { 0 };
	assert_int_equal(txs_addr_parse(&sp.src, "198.18.0.1"), 0);
	assert_int_equal(txs_addr_parse(&sp.dst, "198.18.0.2"), 0);
	sp.sport = 40000;
	sp.dport = 5201;
	sp.payload_len = 16;
	sp.ttl = 64;
	return sp;
}

struct prun {
	uint64_t packets;
	uint64_t bursts[4], samples[4], discarded[4], quota[4];
	struct txs_prof_summary ps;
	int prof_rc;
};

/* One engine run into dummy:links=2 (balance-rr) with IDs from `strategy`;
 * every = 0: unprofiled. rate > 0 paces it (bursts of varying size). */
static struct prun run(const char *strategy, unsigned workers, uint64_t count, unsigned every, double rate,
		       bool sendmsg)
{
	struct prun r = { 0 };
	struct txs_gen_conf gc = { .spec = flow_spec(), .spread_sport = true, .seed = 3 };
	struct txs_ident_conf ic = { .strategy = strategy, .max_cores = workers, .seed = 3 };
	assert_int_equal(txs_ident_create(&gc.ident_inst, &ic), 0);
	gc.ident = strategy;
	struct txs_udp_gen_conf uc = { .spec = gc.spec, .spread_sport = true, .connected = true,
				       .ident = gc.ident_inst };
	struct txs_netdev *dev;
	struct txs_netdev_conf dc = { .max_queues = workers, .frame_size = 2048 };
	assert_int_equal(txs_netdev_open(&dev, sendmsg ? "dummy" : "dummy:links=2", &dc, NULL, 0), 0);
	struct txs_linksel *ls = NULL;
	if (!sendmsg) {
		struct txs_linksel_conf lc = { .mode = "balance-rr", .n_links = 2, .max_cores = workers };
		assert_int_equal(txs_linksel_create(&ls, &lc, NULL, 0), 0);
		gc.linksel = ls;
	}
	struct txs_engine_conf ec = { .n_workers = workers, .count = count, .rate_pps = rate, .burst = BURST,
				      .dev = dev, .gen = sendmsg ? &txs_udp_sock_gen_ops : &txs_udp_gen_ops,
				      .gen_conf = sendmsg ? (void *)&uc : (void *)&gc, .profile_every = every };
	struct txs_engine *e = t_engine_done(&ec);
	struct txs_stat_row rows[4];
	txs_engine_read(e, rows);
	for (unsigned i = 0; i < workers; i++) {
		const struct txs_wk *w = txs_wk_of(txs_engine_worker(e, i)); /* the engine's own counts */
		r.packets += rows[i].packets;
		r.bursts[i] = w->stats.bursts;
		r.samples[i] = w->run.samples;
		r.discarded[i] = w->run.discarded;
		r.quota[i] = w->quota;
	}
	r.prof_rc = txs_engine_prof(e, &r.ps);
	txs_engine_destroy(e);
	txs_linksel_destroy(ls);
	txs_netdev_close(dev);
	txs_ident_destroy(gc.ident_inst);
	return r;
}

/* Packets in the sampled bursts of an unpaced worker: bursts of BURST, the
 * last one short; bursts 0, every, 2 * every, ... sampled. */
static uint64_t sampled_pkts(uint64_t quota, unsigned every)
{
	uint64_t sum = 0;
	for (uint64_t b = 0; b * BURST < quota; b += every)
		sum += quota - b * BURST < BURST ? quota - b * BURST : BURST;
	return sum;
}

static void check_summary(const struct prun *r, unsigned every, bool split)
{
	const struct txs_prof_summary *p = &r->ps;
	assert_int_equal(r->prof_rc, 0);
	assert_int_equal(p->every, every);
	assert_true(p->split == split);
	assert_true(p->tsc_hz > 0);
	double sum = 0;
	for (unsigned s = 0; s < TXS_PROF_STAGES; s++) {
		assert_non_null(txs_prof_stage_name(s));
		assert_true(p->share[s] >= 0 && p->share[s] <= 1);
		assert_true(p->cycles[s] >= 0);
		sum += p->share[s];
		if (s == TXS_PROF_LINKSEL && split) {
			/* a fraction of a cycle per packet: within the error of the
			 * subtracted counter-read cost, so only >= 0 is certain */
			continue;
		}
		if (split || (s != TXS_PROF_IDENT && s != TXS_PROF_LINKSEL)) {
			/* every other stage did work in every sampled burst */
			if (p->cycles[s] <= 0)
				fail_msg("stage %s: no cycles (split %d)", txs_prof_stage_name(s), split);
			assert_true(p->cyc_per_pkt[s] > 0 && p->ns_per_pkt[s] > 0);
		} else {
			assert_true(p->cycles[s] == 0); /* sendmsg path: inside header */
		}
	}
	assert_null(txs_prof_stage_name(TXS_PROF_STAGES));
	assert_true(sum > 1 - 1e-9 && sum < 1 + 1e-9);
}

/* One body, every ID strategy: counts exact and equal to an unprofiled run. */
static void every_strategy(void **st)
{
	(void)st;
	unsigned n;
	const char *const *names = txs_ident_strategies(&n);
	assert_true(n >= 5);
	const uint64_t count = 20011; /* 625 full bursts + 11 per worker-ish: short last bursts */
	for (unsigned s = 0; s < n; s++) {
		for (unsigned workers = 1; workers <= 2; workers++) {
			const unsigned every = 3;
			struct prun plain = run(names[s], workers, count, 0, 0, false);
			assert_int_equal(plain.packets, count);
			assert_int_equal(plain.prof_rc, -ENODATA);
			assert_int_equal(plain.samples[0], 0);
			struct prun r = run(names[s], workers, count, every, 0, false);
			assert_int_equal(r.packets, plain.packets);
			uint64_t samples = 0, pkts = 0, discarded = 0;
			for (unsigned i = 0; i < workers; i++) {
				assert_int_equal(r.bursts[i], plain.bursts[i]);
				/* a sample dropped as preempted is still counted, as discarded */
				assert_int_equal(r.samples[i] + r.discarded[i], (r.bursts[i] + every - 1) / every);
				samples += r.samples[i];
				discarded += r.discarded[i];
				pkts += sampled_pkts(r.quota[i], every);
			}
			assert_int_equal(r.ps.samples, samples);
			assert_int_equal(r.ps.discarded, discarded);
			if (discarded == 0)
				assert_int_equal(r.ps.pkts, pkts);
			else
				assert_true(r.ps.pkts < pkts);
			check_summary(&r, every, true);
		}
	}
}

/* Paced bursts vary in size: still one sample per `every` bursts sent, and
 * the first burst sampled. every = 1 samples them all. */
static void paced_and_every_burst(void **st)
{
	(void)st;
	struct prun r = run("lease", 1, 3000, 4, 300000, false);
	assert_int_equal(r.packets, 3000);
	assert_int_equal(r.samples[0] + r.discarded[0], (r.bursts[0] + 3) / 4);
	check_summary(&r, 4, true);
	r = run("atomic", 2, 5000, 1, 0, false);
	assert_int_equal(r.packets, 5000);
	assert_int_equal(r.ps.samples + r.ps.discarded, r.bursts[0] + r.bursts[1]);
	if (r.ps.discarded == 0)
		assert_int_equal(r.ps.pkts, 5000);
	check_summary(&r, 1, true);
}

/* The sendmsg path has no fill_prof: ident is timed inside header. */
static void sendmsg_path(void **st)
{
	(void)st;
	struct prun r = run("cas-loop", 2, 4000, 2, 0, true);
	assert_int_equal(r.packets, 4000);
	/* a sample dropped as preempted takes its packets with it */
	if (r.ps.discarded == 0)
		assert_int_equal(r.ps.pkts, sampled_pkts(2000, 2) * 2);
	else
		assert_true(r.ps.pkts < sampled_pkts(2000, 2) * 2);
	check_summary(&r, 2, false);
}

/* ---- the profiled fill builds the same frames as the plain one ---------- */
enum { NF = 64, FRAME = 128 };

struct fake {
	struct txs_netdev dev;
	struct txs_txq q;
	struct txs_worker w;
	struct txs_ident *ident;
	struct txs_linksel *ls;
	uint8_t frames[NF][FRAME];
	struct txs_pktbuf b[NF];
};

static void fake_open(struct fake *f, const char *strategy, const char *bond)
{
	memset(f, 0, sizeof(*f));
	struct txs_ident_conf ic = { .strategy = strategy, .max_cores = 1, .seed = 11, .fixed_key = true };
	assert_int_equal(txs_ident_create(&f->ident, &ic), 0);
	struct txs_gen_conf gc = { .spec = flow_spec(), .seed = 11, .ident = strategy, .ident_inst = f->ident };
	f->dev.n_links = bond ? 3 : 1;
	if (bond) {
		struct txs_linksel_conf lc = { .mode = bond, .n_links = 3, .max_cores = 1, .seed = 11 };
		assert_int_equal(txs_linksel_create(&f->ls, &lc, NULL, 0), 0);
		gc.linksel = f->ls;
	}
	f->q.dev = &f->dev;
	f->w.txq = &f->q;
	assert_int_equal(txs_udp_gen_ops.init(&f->w, &gc), 0);
}

static void fake_close(struct fake *f)
{
	txs_udp_gen_ops.fini(&f->w);
	txs_linksel_destroy(f->ls);
	txs_ident_destroy(f->ident);
}

static unsigned fake_fill(struct fake *f, unsigned n, bool prof)
{
	for (unsigned i = 0; i < n; i++)
		f->b[i] = (struct txs_pktbuf){ .data = f->frames[i], .cap = FRAME, .segs = 1 };
	return (prof ? txs_udp_gen_ops.fill_prof : txs_udp_gen_ops.fill)(&f->w, f->b, n, 1000 + n);
}

static void same_frames(void **st)
{
	(void)st;
	static uint32_t clk = 7;
	__atomic_store_n(&ident_fake_ticks, &clk, __ATOMIC_RELAXED);
	static const char *const bonds[] = { NULL, "balance-rr", "balance-xor", "broadcast",
					     "balance-rr,packets_per_slave=3" };
	/* burst sizes: broadcast copies of 3 links carry over bursts of 1, 2, 5 */
	static const unsigned sizes[] = { 32, 1, 2, 5, 64, 7, 1, 1, 33 };
	static struct fake a, b;
	unsigned n;
	const char *const *names = txs_ident_strategies(&n);
	assert_non_null(txs_udp_gen_ops.fill_prof);
	for (unsigned s = 0; s < n; s++) {
		for (unsigned k = 0; k < TXS_ARRAY_SIZE(bonds); k++) {
			fake_open(&a, names[s], bonds[k]);
			fake_open(&b, names[s], bonds[k]);
			for (unsigned r = 0; r < 3 * TXS_ARRAY_SIZE(sizes); r++) {
				unsigned want = sizes[r % TXS_ARRAY_SIZE(sizes)];
				/* alternate which side profiles, so state carried between fills mixes */
				unsigned na = fake_fill(&a, want, r & 1), nb = fake_fill(&b, want, !(r & 1));
				assert_int_equal(na, nb);
				assert_int_equal(na, want);
				for (unsigned i = 0; i < na; i++) {
					assert_int_equal(a.b[i].len, b.b[i].len);
					assert_int_equal(a.b[i].link, b.b[i].link);
					assert_int_equal(a.b[i].segs, b.b[i].segs);
					assert_int_equal(a.b[i].l4_off, b.b[i].l4_off);
					if (memcmp(a.b[i].data, b.b[i].data, a.b[i].len) != 0)
						fail_msg("%s, bond %s: fill %u frame %u differs", names[s],
							 bonds[k] ? bonds[k] : "none", r, i);
				}
			}
			assert_true(a.w.prof.stamps > 0 && b.w.prof.stamps > 0);
			fake_close(&a);
			fake_close(&b);
		}
	}
	__atomic_store_n(&ident_fake_ticks, NULL, __ATOMIC_RELAXED);
}

T_MAIN(cmocka_unit_test(every_strategy),
       cmocka_unit_test(paced_and_every_burst),
       cmocka_unit_test(sendmsg_path),
       cmocka_unit_test(same_frames))
#endif
