/* SPDX-License-Identifier: MIT */
/* broadcast: every packet on every up link. select_mask() hands the caller
 * the up mask of the view; the caller emits one frame per link. */
#include "linksel_priv.h"

static enum txs_linksel_kind bc_kind(const struct txs_linksel_params *p)
{
	(void)p;
	return TXS_LSK_BROADCAST;
}

const struct txs_linksel_mode_ops txs_ls_broadcast_ops = {
	.name = "broadcast",
	.mode = TXS_LS_BROADCAST,
	.keys = 0,
	.kind = bc_kind,
};
