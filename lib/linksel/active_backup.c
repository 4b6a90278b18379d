/* SPDX-License-Identifier: MIT */
/* active-backup: all traffic on one link. The primary while it is up
 * (primary_reselect=always); otherwise the first up link after it in cyclic
 * order, so a failed active link hands over to the next one. The choice is
 * made once per link-state change, in the view; per packet it is one load. */
#include <stdio.h>
#include "linksel_priv.h"

static int ab_check(const struct txs_linksel_params *p, unsigned n_links, char *err, size_t errlen)
{
	if (p->primary >= n_links) {
		if (err && errlen)
			snprintf(err, errlen, "primary=%u: the bond has links 0..%u", p->primary, n_links - 1);
		return -EINVAL;
	}
	return 0;
}

static enum txs_linksel_kind ab_kind(const struct txs_linksel_params *p)
{
	(void)p;
	return TXS_LSK_ACTIVE_BACKUP;
}

static void ab_view(const struct txs_linksel *ls, struct txs_linksel_core *c)
{
	c->ab_link = 0;
	for (unsigned i = 0; i < ls->n_links; i++) {
		unsigned l = (ls->p.primary + i) % ls->n_links;
		if (c->up_mask & 1u << l) {
			c->ab_link = (uint8_t)l;
			return;
		}
	}
}

const struct txs_linksel_mode_ops txs_ls_active_backup_ops = {
	.name = "active-backup",
	.mode = TXS_LS_ACTIVE_BACKUP,
	.keys = LS_KEY_PRIMARY,
	.check = ab_check,
	.kind = ab_kind,
	.view = ab_view,
};
