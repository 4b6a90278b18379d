/* SPDX-License-Identifier: MIT */
/* Private to lib/linksel: the bond object and the per-mode ops table. */
#ifndef TXS_LINKSEL_PRIV_H
#define TXS_LINKSEL_PRIV_H
#include <txscale/linksel.h>

/* Spec keys a mode accepts. */
#define LS_KEY_PPS (1u << 0)
#define LS_KEY_SCOPE (1u << 1)
#define LS_KEY_HASH (1u << 2)
#define LS_KEY_PRIMARY (1u << 3)

/* One per mode, found by name when the bond is created; nothing here runs per
 * packet (the per-packet code is the inline select() on the kind chosen by
 * kind()). */
struct txs_linksel_mode_ops {
	const char *name;          /* bonding.rst name */
	enum txs_linksel_mode mode; /* the kernel's mode number */
	unsigned keys;             /* LS_KEY_* this mode accepts */
	/* Check params against the bond (n_links); one line into err on -EINVAL. */
	int (*check)(const struct txs_linksel_params *p, unsigned n_links, char *err, size_t errlen);
	/* The per-packet strategy. */
	enum txs_linksel_kind (*kind)(const struct txs_linksel_params *p);
	/* Initialise a core's mode state (counters, generators) at open. */
	void (*core_init)(const struct txs_linksel *ls, struct txs_linksel_core *c);
	/* Mode part of a view rebuild (after up[], n_up, up_mask are set). */
	void (*view)(const struct txs_linksel *ls, struct txs_linksel_core *c);
};

extern const struct txs_linksel_mode_ops txs_ls_balance_rr_ops;
extern const struct txs_linksel_mode_ops txs_ls_active_backup_ops;
extern const struct txs_linksel_mode_ops txs_ls_balance_xor_ops;
extern const struct txs_linksel_mode_ops txs_ls_broadcast_ops;

struct txs_linksel {
	/* Read by every core per packet, written only by set_link(): its own
	 * line, so it stays shared-clean in every cache. low 32 bits: up mask;
	 * high 32 bits: generation (+1 per change). */
	uint64_t state TXS_CACHE_ALIGNED;
	TXS_CACHE_GUARD;
	/* scope=shared: written by every core per packet (the kernel's
	 * pre-2021 rr_tx_counter). Kept apart so that it only hurts itself. */
	uint32_t shared_ctr TXS_CACHE_ALIGNED;
	TXS_CACHE_GUARD;
	/* read-only after create */
	struct txs_linksel_params p;
	const struct txs_linksel_mode_ops *ops;
	unsigned n_links, max_cores;
	uint64_t seed;
	struct txs_linksel_core *cores; /* max_cores, cache aligned */
	uint64_t changes;               /* set_link() changes (atomic) */
};

/* Fill a core's up[] for the bond's links from a mask. Returns the count. */
unsigned txs_ls_up_list(const struct txs_linksel *ls, uint32_t mask, uint8_t *up);
#endif
