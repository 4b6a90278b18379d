/* SPDX-License-Identifier: MIT */
/* balance-rr: round-robin over the up links, packets_per_slave at a time.
 *
 * Per packet the core takes a counter value id (scope=shared: one atomic
 * fetch-add on the bond's counter; percore/staggered: its own counter) and
 * sends on up[(id / N) % n_up], where both the divide and the modulo are
 * multiply-shifts (txs_fastdiv / txs_fastmod) with constants fixed at setup
 * (N) or at the last link-state change (n_up). N = 0 draws a random link.
 *
 * staggered: core k of K (max_cores) starts its counter at
 *     (k mod L) * N  +  floor(k / L) * N / ceil(K / L)        (L = n_links)
 * i.e. core k starts on link k mod L, and the cores that share a starting
 * link are spread evenly over its run of N: the K starting points cover one
 * round (N packets on each of the L links) evenly, link-major. Cores that send
 * in lock-step then sit on different links at every step, and any L cores in a
 * row (0..L-1, L..2L-1, ...) cover all L links at every step, instead of all
 * cores piling onto the same link as with percore (docs/linksel.md). */
#include "linksel_priv.h"

static enum txs_linksel_kind rr_kind(const struct txs_linksel_params *p)
{
	bool shared = p->scope == TXS_LS_SCOPE_SHARED;
	if (p->packets_per_slave == 0)
		return shared ? TXS_LSK_RANDOM_SHARED : TXS_LSK_RANDOM_LOCAL;
	if (p->packets_per_slave == 1)
		return shared ? TXS_LSK_RR_SHARED : TXS_LSK_RR_LOCAL;
	return shared ? TXS_LSK_RR_SHARED_N : TXS_LSK_RR_LOCAL_N;
}

static void rr_core_init(const struct txs_linksel *ls, struct txs_linksel_core *c)
{
	const struct txs_linksel_params *p = &ls->p;
	if (p->packets_per_slave == 0) {
		/* random: an independent generator per core (same seed for all
		 * cores would make lock-step cores pick the same links); the
		 * shared scope draws element s of one stream instead */
		c->rng = p->scope == TXS_LS_SCOPE_SHARED
				 ? txs_linksel_mix64_(ls->seed)
				 : txs_linksel_mix64_(ls->seed + (c->id + 1) * 0x9e3779b97f4a7c15ull);
		return;
	}
	if (p->scope == TXS_LS_SCOPE_STAGGERED) {
		uint64_t L = ls->n_links, N = p->packets_per_slave;
		uint64_t per_link = (ls->max_cores + L - 1) / L; /* cores sharing a start link */
		c->ctr = (uint32_t)((c->id % L) * N + (c->id / L) * N / per_link);
	}
}

const struct txs_linksel_mode_ops txs_ls_balance_rr_ops = {
	.name = "balance-rr",
	.mode = TXS_LS_BALANCE_RR,
	.keys = LS_KEY_PPS | LS_KEY_SCOPE,
	.kind = rr_kind,
	.core_init = rr_core_init,
};
