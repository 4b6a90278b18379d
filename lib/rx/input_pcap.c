/* SPDX-License-Identifier: MIT */
/* Input "pcap:FILE": a capture file, one queue, arrival time = capture time.
 * Corrupt records are counted as malformed (pcap-record) once the file ends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "rx_priv.h"

struct pc_in {
	struct txs_pcap p;
	bool reported;
};

static void pc_close(struct txs_rx_input *in)
{
	struct pc_in *pc = in->priv;
	if (!pc)
		return;
	txs_pcap_close(&pc->p);
	free(pc);
	in->priv = NULL;
}

static int pc_open(struct txs_rx_input *in, const char *args)
{
	if (!args || !*args) {
		txs_rx_input_set_err(in, "no file: pcap:FILE");
		return -EINVAL;
	}
	if (in->conf.n_queues != 1) {
		txs_rx_input_set_err(in, "a pcap file is read by one thread (-P 1)");
		return -EINVAL;
	}
	struct pc_in *pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	int rc = txs_pcap_open_file(&pc->p, args);
	if (rc < 0) {
		txs_rx_input_set_err(in, "%s", pc->p.err[0] ? pc->p.err : strerror(-rc));
		free(pc);
		return rc;
	}
	in->priv = pc;
	in->raw = true;
	in->offline = true;
	snprintf(in->link_names[0], sizeof(in->link_names[0]), "pcap");
	return 0;
}

/* Offline: timeout_ms is irrelevant, records are there or the file ended. */
static int pc_poll(struct txs_rx_input *in, unsigned q, struct txs_rx_core *c, int timeout_ms)
{
	(void)q;
	(void)timeout_ms;
	struct pc_in *pc = in->priv;
	struct txs_pcap_rec r;
	unsigned n = 0;
	while (n < in->conf.batch) {
		if (txs_pcap_next(&pc->p, &r) != 1) {
			if (!pc->reported) {
				const struct txs_pcap_counts *k = &pc->p.n;
				uint64_t bad = k->bad_len + k->truncated + k->bad_l2;
				if (bad)
					txs_rx_count_bad(c, TXS_RX_BAD_PCAP_RECORD, bad);
				pc->reported = true;
			}
			return n ? (int)n : -ENODATA;
		}
		if (r.not_ip)
			txs_rx_count_perr(c, TXS_PERR_NOT_IP, 1);
		else
			txs_rx_frame(c, r.data, r.caplen, r.l2, 0, r.ts_ns);
		n++;
	}
	return (int)n;
}

static void pc_stats(struct txs_rx_input *in, struct txs_rx_input_stats *o)
{
	struct pc_in *pc = in->priv;
	o->pcap = pc->p.n;
}

const struct txs_rx_input_ops txs_rx_input_pcap_ops = {
	.name = "pcap",
	.usage = "pcap:FILE",
	.open = pc_open,
	.close = pc_close,
	.poll = pc_poll,
	.stats = pc_stats,
};
