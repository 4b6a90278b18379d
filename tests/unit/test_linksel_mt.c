/* SPDX-License-Identifier: MIT */
/* lib/linksel under concurrency (also run under ThreadSanitizer): worker
 * threads select while another thread takes links down and up. Counts add up
 * exactly: every attempt is either a selection on a link that was up in the
 * worker's view, or a refusal counted once in the bond's nolink; the shared
 * counter hands every value out exactly once. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <txscale/linksel.h>
#include "test_util.h"

#define THREADS 4
#define LINKS 4

static const char *const all_specs[] = {
	"balance-rr,packets_per_slave=0,scope=shared",
	"balance-rr,packets_per_slave=0,scope=staggered",
	"balance-rr,packets_per_slave=1,scope=shared",
	"balance-rr,packets_per_slave=1,scope=percore",
	"balance-rr,packets_per_slave=1,scope=staggered",
	"balance-rr,packets_per_slave=3,scope=shared",
	"balance-rr,packets_per_slave=3,scope=staggered",
	"active-backup,primary=1",
	"balance-xor,hash=layer2",
	"balance-xor,hash=layer2+3",
	"balance-xor,hash=layer3+4",
	"broadcast",
};

struct run {
	struct txs_linksel *ls;
	unsigned per_thread;    /* attempts per worker */
	int started;            /* workers past open */
	int finished;           /* workers done */
	int go;                 /* set once the flipper runs (or at once without one) */
	bool allow_all_down;    /* flipper may take every link down */
	uint64_t flips;         /* state changes made by the flipper */
};

struct worker {
	struct run *r;
	unsigned id;
	uint64_t per_link[LINKS]; /* copies sent per link */
	uint64_t sent;            /* attempts that got a link */
	uint64_t refused;         /* attempts answered -ENETDOWN */
	uint64_t bad;             /* a link outside the view's up mask, or a wrong error */
	pthread_t th;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->r;
	struct txs_linksel_core *c;
	if (txs_linksel_core_open(r->ls, w->id, &c) != 0) {
		w->bad++;
		__atomic_add_fetch(&r->started, 1, __ATOMIC_ACQ_REL);
		__atomic_add_fetch(&r->finished, 1, __ATOMIC_ACQ_REL);
		return NULL;
	}
	struct txs_flow_key k[8];
	for (unsigned f = 0; f < 8; f++) {
		memset(&k[f], 0, sizeof(k[f]));
		k[f].family = AF_INET;
		inet_pton(AF_INET, "198.18.0.1", k[f].saddr);
		inet_pton(AF_INET, "198.18.0.2", k[f].daddr);
		k[f].sport = (uint16_t)(40000 + 8 * w->id + f);
		k[f].dport = 5201;
		k[f].proto = 17;
		k[f].src_mac[5] = (uint8_t)f;
		txs_linksel_key_prepare(r->ls, &k[f]);
	}
	__atomic_add_fetch(&r->started, 1, __ATOMIC_ACQ_REL);
	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (unsigned i = 0; i < r->per_thread; i++) {
		uint32_t mask = 0;
		int n = txs_linksel_select_mask(c, &k[i & 7], &mask);
		if (n < 0) {
			if (n != -ENETDOWN)
				w->bad++;
			w->refused++;
			continue;
		}
		/* the links must be up in the view this core decided on */
		if ((mask & ~c->up_mask) || __builtin_popcount(mask) != n || (mask >> LINKS))
			w->bad++;
		for (unsigned l = 0; l < LINKS; l++)
			w->per_link[l] += mask >> l & 1;
		w->sent++;
	}
	__atomic_add_fetch(&r->finished, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

/* Flip links while the workers run. Without allow_all_down the last up link
 * is never taken down (the flipper is the only writer, so it knows). */
static void *flipper_main(void *arg)
{
	struct run *r = arg;
	uint64_t s = 99;
	uint32_t up = (1u << LINKS) - 1;
	while (__atomic_load_n(&r->started, __ATOMIC_ACQUIRE) < THREADS)
		sched_yield();
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE) < THREADS) {
		unsigned l = (unsigned)(t_rand(&s) % LINKS);
		bool u = !(up & 1u << l);
		if (!u && !r->allow_all_down && __builtin_popcount(up) == 1)
			continue;
		txs_linksel_set_link(r->ls, l, u);
		up = u ? up | 1u << l : up & ~(1u << l);
		r->flips++;
		if (r->flips % 4 == 0)
			sched_yield();
	}
	for (unsigned l = 0; l < LINKS; l++) /* leave every link up */
		if (!(up & 1u << l)) {
			txs_linksel_set_link(r->ls, l, true);
			r->flips++;
		}
	return NULL;
}

static void run_one(const char *spec, unsigned per_thread, bool flip, bool all_down, struct worker *w,
		    struct txs_linksel_stats *st)
{
	struct run r = { .per_thread = per_thread, .allow_all_down = all_down };
	char err[160];
	struct txs_linksel_conf conf = { .mode = spec, .n_links = LINKS, .max_cores = THREADS, .seed = 5 };
	assert_int_equal(txs_linksel_create(&r.ls, &conf, err, sizeof(err)), 0);
	pthread_t fl;
	for (unsigned i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].r = &r;
		w[i].id = i;
		assert_int_equal(pthread_create(&w[i].th, NULL, worker_main, &w[i]), 0);
	}
	if (flip)
		assert_int_equal(pthread_create(&fl, NULL, flipper_main, &r), 0);
	else
		__atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(w[i].th, NULL);
	if (flip)
		pthread_join(fl, NULL);
	txs_linksel_stats(r.ls, st);
	assert_int_equal(st->changes, r.flips); /* every flip changed the state exactly once */
	assert_int_equal(txs_linksel_up_mask(r.ls), (1u << LINKS) - 1);
	txs_linksel_destroy(r.ls);
}

/* Links go down and up under traffic, at least one always up: nothing is
 * refused, nothing lands outside the view, and the copies per link add up to
 * the attempts exactly. */
static void failover_under_traffic(void **st_)
{
	(void)st_;
	for (unsigned si = 0; si < TXS_ARRAY_SIZE(all_specs); si++) {
		struct worker w[THREADS];
		struct txs_linksel_stats st;
		const unsigned M = 50000;
		run_one(all_specs[si], M, true, false, w, &st);
		bool bc = strcmp(all_specs[si], "broadcast") == 0;
		for (unsigned i = 0; i < THREADS; i++) {
			assert_int_equal(w[i].bad, 0);
			assert_int_equal(w[i].refused, 0);
			assert_int_equal(w[i].sent, M);
			uint64_t sum = 0;
			for (unsigned l = 0; l < LINKS; l++)
				sum += w[i].per_link[l];
			if (bc)
				assert_true(sum >= M && sum <= (uint64_t)M * LINKS);
			else
				assert_int_equal(sum, M);
		}
		assert_int_equal(st.nolink, 0);
		assert_true(st.refresh >= THREADS);
		if (si == 0)
			fprintf(stderr, "%s: %llu link changes seen by the workers (view rebuilds)\n", all_specs[si],
				(unsigned long long)st.refresh);
	}
}

/* Every link may go down: each attempt is a selection or a refusal, and the
 * refusals the workers saw are exactly the bond's nolink count. */
static void all_down_counted(void **st_)
{
	(void)st_;
	for (unsigned si = 0; si < TXS_ARRAY_SIZE(all_specs); si++) {
		struct worker w[THREADS];
		struct txs_linksel_stats st;
		const unsigned M = 50000;
		run_one(all_specs[si], M, true, true, w, &st);
		uint64_t refused = 0;
		for (unsigned i = 0; i < THREADS; i++) {
			assert_int_equal(w[i].bad, 0);
			assert_int_equal(w[i].sent + w[i].refused, M);
			refused += w[i].refused;
		}
		assert_int_equal(st.nolink, refused);
	}
}

/* scope=shared: one atomic counter for all threads hands out each value once,
 * so over a whole number of rounds the links get exactly equal counts even
 * though the threads interleave arbitrarily. Local scopes: each thread is
 * exact on its own. */
static void counters_exact(void **st_)
{
	(void)st_;
	static const char *const specs[] = {
		"balance-rr,packets_per_slave=1,scope=shared",   "balance-rr,packets_per_slave=3,scope=shared",
		"balance-rr,packets_per_slave=1,scope=percore",  "balance-rr,packets_per_slave=3,scope=percore",
		"balance-rr,packets_per_slave=1,scope=staggered", "balance-rr,packets_per_slave=3,scope=staggered",
	};
	for (unsigned si = 0; si < TXS_ARRAY_SIZE(specs); si++) {
		struct worker w[THREADS];
		struct txs_linksel_stats st;
		const unsigned M = 3 * LINKS * 5000; /* whole rounds per thread */
		run_one(specs[si], M, false, false, w, &st);
		bool shared = strstr(specs[si], "shared") != NULL;
		uint64_t tot[LINKS] = { 0 };
		for (unsigned i = 0; i < THREADS; i++)
			for (unsigned l = 0; l < LINKS; l++) {
				tot[l] += w[i].per_link[l];
				if (!shared)
					assert_int_equal(w[i].per_link[l], M / LINKS);
			}
		for (unsigned l = 0; l < LINKS; l++)
			assert_int_equal(tot[l], (uint64_t)M * THREADS / LINKS);
		assert_int_equal(st.nolink, 0);
	}
}

T_MAIN(cmocka_unit_test(failover_under_traffic),
       cmocka_unit_test(all_down_counted),
       cmocka_unit_test(counters_exact))
