/* SPDX-License-Identifier: MIT */
/* The link-state contract between a link monitor and the device queues
 * (lib/netdev/linkstate.h), under concurrency and ThreadSanitizer, for every
 * link-selection mode: a "monitor" thread takes links down and up through
 * txs_linkstate_set() while "queue" threads do what packet: and xdp: queues
 * do per burst: read the link-state word (their view), select a link, and
 * some report hard errors through txs_linkstate_fail().
 *
 * Properties:
 *  - down: once a queue's view shows link l down, linksel never hands it l
 *    (linksel is told first), unless l came back meanwhile;
 *  - up: a link linksel hands out that the queue's view shows down is up in
 *    the word when the queue looks again (the word is told first);
 *  - the word and linksel agree once everyone stopped; every state change
 *    bumps the generation; errors land in err_mask and the counters. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <txscale/linksel.h>
#include "netdev/linkstate.h"
#include "test_util.h"

#define QUEUES 3
#define LINKS 3
#define ROUNDS 20000

static const char *const specs[] = {
	"balance-rr",
	"balance-rr,packets_per_slave=0",
	"balance-rr,scope=shared",
	"active-backup,primary=1",
	"balance-xor,hash=layer3+4",
	"broadcast",
};

struct run {
	struct txs_linksel *ls;
	struct txs_linkstate *st;
	int stop;
	int ready;
	bool errors; /* queues report hard errors too */
};

struct q {
	struct run *r;
	unsigned id;
	uint64_t picks, nolink, resync, bad_down, bad_up;
	pthread_t th;
};

static void *q_main(void *arg)
{
	struct q *q = arg;
	struct run *r = q->r;
	struct txs_linksel_core *c;
	if (txs_linksel_core_open(r->ls, q->id, &c) != 0) {
		q->bad_down++;
		__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
		return NULL;
	}
	struct txs_flow_key key;
	memset(&key, 0, sizeof(key));
	key.family = AF_INET;
	key.proto = 17;
	key.sport = (uint16_t)(1000 + q->id);
	key.dport = 5201;
	txs_linksel_key_prepare(r->ls, &key);
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	uint64_t seed = q->id + 1;
	for (unsigned i = 0; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED) || i < ROUNDS; i++) {
		if (i >= 4 * ROUNDS)
			break;
		uint64_t view = txs_linkstate_load(r->st); /* burst start: the queue's view */
		uint32_t mask;
		int n = txs_linksel_select_mask(c, &key, &mask);
		if (n < 0) {
			q->nolink++;
			continue;
		}
		q->picks++;
		for (uint32_t m = mask; m; m &= m - 1) {
			unsigned l = (unsigned)__builtin_ctz(m);
			if ((uint32_t)view & 1u << l)
				continue;
			/* linksel gave a link this view has down: it must have come
			 * back (the word is told first); the queue looks again */
			q->resync++;
			/* select()'s load is relaxed: order the look after it the way
			 * TSan understands (the lock every change holds); the queues
			 * get the same from x86 ordering, and their retries in any case */
			pthread_mutex_lock(&r->st->lock);
			pthread_mutex_unlock(&r->st->lock);
			uint64_t again = txs_linkstate_load(r->st);
			if (!((uint32_t)again & 1u << l)) {
				/* still down: only legal if it went down again after
				 * coming up, i.e. the generation moved twice since */
				if ((again >> 32) < (view >> 32) + 2)
					q->bad_up++;
			}
			if ((again >> 32) == (view >> 32))
				q->bad_down++; /* no change at all, yet a down link was chosen */
		}
		if (r->errors && (t_rand(&seed) & 1023) == 0)
			txs_linkstate_fail(r->st, (unsigned)(t_rand(&seed) % LINKS), -ENETDOWN);
	}
	txs_linksel_core_close(c);
	return NULL;
}

/* The monitor's hook: link selection, told in the contract's order. */
static void select_ls(void *arg, unsigned l, bool up)
{
	txs_linksel_set_link(arg, l, up);
}

static void run_spec(const char *spec, bool errors)
{
	struct run r = { .errors = errors };
	struct txs_linksel_conf lc = { .mode = spec, .n_links = LINKS, .max_cores = QUEUES, .seed = 5 };
	char err[128];
	assert_int_equal(txs_linksel_create(&r.ls, &lc, err, sizeof(err)), 0);
	r.st = aligned_alloc(TXS_CACHE_LINE, sizeof(*r.st));
	assert_non_null(r.st);
	txs_linkstate_init(r.st, LINKS, select_ls, r.ls);
	assert_int_equal(txs_linksel_up_mask(r.ls), (1u << LINKS) - 1);
	struct q qs[QUEUES];
	memset(qs, 0, sizeof(qs));
	for (unsigned i = 0; i < QUEUES; i++) {
		qs[i].r = &r;
		qs[i].id = i;
		assert_int_equal(pthread_create(&qs[i].th, NULL, q_main, &qs[i]), 0);
	}
	while (__atomic_load_n(&r.ready, __ATOMIC_ACQUIRE) < QUEUES)
		sched_yield();
	/* the monitor: flips, sometimes every link down, and clears errors */
	uint64_t seed = 42, changes = 0;
	for (unsigned i = 0; i < 3000; i++) {
		unsigned l = (unsigned)(t_rand(&seed) % LINKS);
		bool up = t_rand(&seed) & 1;
		uint64_t g0 = txs_linkstate_load(r.st) >> 32;
		if (txs_linkstate_set(r.st, l, up)) {
			changes++;
			assert_true((txs_linkstate_load(r.st) >> 32) > g0);
		}
		if (i % 64 == 0)
			__atomic_exchange_n(&r.st->err_mask, 0, __ATOMIC_ACQUIRE);
		if (i % 16 == 0)
			sched_yield();
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	uint64_t picks = 0;
	for (unsigned i = 0; i < QUEUES; i++) {
		pthread_join(qs[i].th, NULL);
		picks += qs[i].picks;
		if (qs[i].bad_down || qs[i].bad_up)
			fail_msg("%s: queue %u: %llu down-order and %llu up-order violations (%llu resyncs)", spec, i,
				 (unsigned long long)qs[i].bad_down, (unsigned long long)qs[i].bad_up,
				 (unsigned long long)qs[i].resync);
	}
	assert_true(picks > 0);
	assert_true(changes > 0);
	/* at rest, linksel and the word agree */
	assert_int_equal(txs_linksel_up_mask(r.ls), (uint32_t)txs_linkstate_load(r.st));
	if (errors)
		assert_true(__atomic_load_n(&r.st->n_errors, __ATOMIC_RELAXED) <=
			    __atomic_load_n(&r.st->n_downs, __ATOMIC_RELAXED));
	free(r.st);
	txs_linksel_destroy(r.ls);
}

static void every_mode_monitor_only(void **state)
{
	(void)state;
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(specs); i++)
		run_spec(specs[i], false);
}

static void every_mode_with_queue_errors(void **state)
{
	(void)state;
	for (unsigned i = 0; i < TXS_ARRAY_SIZE(specs); i++)
		run_spec(specs[i], true);
}

/* txs_linkstate_fail: down in the word and in linksel, the error kept, the
 * counters and the callback once per change. */
static unsigned cb_calls;
static void on_change(void *arg, unsigned link, const char *ifname, bool up, enum txs_link_why why, int err)
{
	(void)arg;
	assert_int_equal(link, 1);
	assert_string_equal(ifname, "tx1");
	assert_false(up);
	assert_int_equal(why, TXS_LINK_ERROR);
	assert_int_equal(err, -ENXIO);
	cb_calls++;
}

static void fail_marks_down_once(void **state)
{
	(void)state;
	struct txs_linksel *ls;
	struct txs_linksel_conf lc = { .mode = "active-backup", .n_links = 2, .max_cores = 1 };
	assert_int_equal(txs_linksel_create(&ls, &lc, NULL, 0), 0);
	struct txs_linkstate *st = aligned_alloc(TXS_CACHE_LINE, sizeof(*st));
	assert_non_null(st);
	txs_linkstate_init(st, 2, select_ls, ls);
	strcpy(st->name[1], "tx1");
	st->on_change = on_change;
	struct txs_linksel_core *c;
	assert_int_equal(txs_linksel_core_open(ls, 0, &c), 0);
	/* primary 0 up: link 0 */
	assert_int_equal(txs_linksel_select(c, NULL), 0);
	txs_linkstate_fail(st, 1, -ENXIO);
	txs_linkstate_fail(st, 1, -ENXIO); /* already down: no second change */
	assert_int_equal(cb_calls, 1);
	assert_int_equal((uint32_t)txs_linkstate_load(st), 1u);
	assert_int_equal(txs_linksel_up_mask(ls), 1u);
	assert_int_equal(st->err_mask, 2u);
	assert_int_equal(st->err_code[1], -ENXIO);
	assert_int_equal(st->n_downs, 1);
	assert_int_equal(st->n_errors, 1);
	/* the primary fails too: active-backup has nothing left */
	assert_true(txs_linkstate_set(st, 0, false));
	assert_int_equal(txs_linksel_select(c, NULL), -ENETDOWN);
	/* link 1 back (word, then linksel): the backup carries on */
	assert_true(txs_linkstate_set(st, 1, true));
	assert_int_equal(txs_linksel_select(c, NULL), 1);
	assert_false(txs_linkstate_set(st, 1, true)); /* no change, no generation */
	assert_int_equal(txs_linkstate_load(st) >> 32, 4); /* 1 + three changes */
	assert_false(txs_linkstate_set(st, 7, false)); /* past the links: ignored */
	txs_linksel_core_close(c);
	txs_linksel_destroy(ls);
	free(st);
}

T_MAIN(cmocka_unit_test(fail_marks_down_once),
       cmocka_unit_test(every_mode_monitor_only),
       cmocka_unit_test(every_mode_with_queue_errors))
