/* SPDX-License-Identifier: MIT */
/* Fuzz target: the pcap reader from a memory buffer (classic pcap in place;
 * pcapng and others through libpcap when built with it), and every record it
 * returns through the receive path. Properties: records lie inside the input
 * (classic), lengths are consistent, the walk ends, counts add up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct txs_pcap p;
	int rc = txs_pcap_open_mem(&p, buf, size);
	if (rc < 0) {
		txs_pcap_close(&p);
		free(buf);
		return 0;
	}
	struct txs_rx_conf c = { .window = 64, .max_flows = 32 };
	struct txs_rx_core *core;
	CHECK(txs_rx_core_create(&core, &c) == 0);
	struct txs_pcap_rec r;
	uint64_t n = 0, fed = 0;
	bool classic = p.lp == NULL;
	while (txs_pcap_next(&p, &r) == 1) {
		n++;
		CHECK(r.caplen <= TXS_PCAP_MAX_REC);
		if (classic) {
			CHECK(r.data >= buf + 24 && r.data + r.caplen <= buf + size);
			CHECK(n <= size / 16); /* every record costs at least its header */
		}
		if (r.not_ip) {
			txs_rx_count_perr(core, TXS_PERR_NOT_IP, 1);
		} else {
			txs_rx_frame(core, r.data, r.caplen, r.l2, 0, r.ts_ns);
			fed++;
		}
		CHECK(n < 10000000);
	}
	CHECK(txs_pcap_next(&p, &r) == 0); /* stays at the end */
	CHECK(p.n.records == n);
	struct txs_rx_live l;
	txs_rx_core_live(core, &l);
	CHECK(l.received + l.malformed + l.ignored == n);
	txs_rx_core_destroy(core);
	txs_pcap_close(&p);
	free(buf);
	return 0;
}
