/* SPDX-License-Identifier: MIT */
/* The link-state word of a frame device: the queues read it, a link monitor
 * and the queues' hard errors change it. Contract in linkstate.h. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "linkstate.h"
#include "netdev_priv.h"

static void stat_inc(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

void txs_linkstate_init(struct txs_linkstate *st, unsigned n, void (*select)(void *arg, unsigned link, bool up),
			void *select_arg)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->lock, NULL);
	st->hint_fd = -1;
	st->n_links = n;
	st->select = select;
	st->select_arg = select_arg;
	uint32_t all = n >= 32 ? UINT32_MAX : (1u << n) - 1;
	st->word = (uint64_t)1 << 32 | all;
	if (select)
		for (unsigned l = 0; l < n; l++)
			select(select_arg, l, true);
}

bool txs_linkstate_set(struct txs_linkstate *st, unsigned l, bool up)
{
	if (l >= st->n_links)
		return false;
	pthread_mutex_lock(&st->lock);
	if (!up && st->select)
		st->select(st->select_arg, l, false); /* new packets leave it first */
	bool changed = false;
	uint64_t old = __atomic_load_n(&st->word, __ATOMIC_RELAXED);
	for (;;) {
		uint32_t mask = (uint32_t)old;
		uint32_t nm = up ? mask | 1u << l : mask & ~(1u << l);
		if (nm == mask)
			break;
		uint64_t nw = ((old >> 32) + 1) << 32 | nm;
		if (__atomic_compare_exchange_n(&st->word, &old, nw, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			changed = true;
			break;
		}
	}
	if (up && st->select)
		st->select(st->select_arg, l, true); /* rings first, then packets */
	pthread_mutex_unlock(&st->lock);
	return changed;
}

void txs_linkstate_fail(struct txs_linkstate *st, unsigned l, int err)
{
	if (l >= st->n_links)
		return;
	__atomic_store_n(&st->err_code[l], err, __ATOMIC_RELAXED);
	bool changed = txs_linkstate_set(st, l, false);
	__atomic_or_fetch(&st->err_mask, 1u << l, __ATOMIC_RELEASE);
	if (!changed)
		return;
	stat_inc(&st->n_downs);
	stat_inc(&st->n_errors);
	if (st->on_change)
		st->on_change(st->arg, l, st->name[l], false, TXS_LINK_ERROR, err);
}

void txs_linkstate_hint(struct txs_linkstate *st)
{
	uint64_t one = 1;
	if (st->hint_fd >= 0 && write(st->hint_fd, &one, sizeof(one)) < 0) {
		/* the counter cannot overflow here; a lost hint leaves miimon */
	}
}


struct txs_linkstate *txs_netdev_linkstate(const struct txs_netdev *dev)
{
	return TXS_ND(dev)->linkstate;
}

void txs_netdev_set_linkstate(struct txs_netdev *dev, struct txs_linkstate *st)
{
	TXS_ND(dev)->linkstate = st;
}
