/* SPDX-License-Identifier: MIT */
/* What the receive-path fuzz targets share: the writers run over a result. */
#ifndef TXS_FUZZ_RX_H
#define TXS_FUZZ_RX_H
#include <txscale/rx.h>
#include "fuzz_check.h"

/* The JSON and text writers must cope with whatever was counted: both write
 * r to /dev/null. */
static inline void fuzz_rx_write(const struct txs_rx_result *r)
{
	FILE *devnull = fopen("/dev/null", "w");
	if (!devnull)
		return;
	struct txs_json j;
	txs_json_begin(&j, devnull);
	txs_rx_result_json(&j, r, NULL);
	txs_json_end(&j);
	txs_rx_result_text(devnull, r, NULL);
	fclose(devnull);
}
#endif
