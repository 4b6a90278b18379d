/* SPDX-License-Identifier: MIT */
/* A session's collector (lib/metrics) over its threads: the receive
 * session's cores, the send session's threads and links. */
#include <errno.h>
#include <stdio.h>
#include <txscale/metrics.h>
#include <txscale/netdev.h>
#include <txscale/session_recv.h>
#include <txscale/session_send.h>

TXS_API int txs_recv_metrics(struct txs_recv *s, struct txs_metrics *m, unsigned max_flows,
			     struct txs_metrics_rx **out)
{
	*out = NULL;
	if (!m)
		return 0;
	struct txs_metrics_rx_conf c = { .cores = txs_recv_cores(s), .n_cores = txs_recv_threads(s),
					 .cpus = txs_recv_cpus(s), .snaps = txs_recv_snaps(s), .max_flows = max_flows,
					 .kernel = !txs_recv_input(s)->offline };
	if (!c.snaps || txs_metrics_rx_create(out, &c) < 0)
		return -ENOMEM;
	if (txs_metrics_add(m, txs_metrics_rx_collect, *out, NULL, 0) < 0) {
		txs_metrics_rx_destroy(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

TXS_API int txs_send_metrics(const struct txs_send *s, struct txs_metrics *m, struct txs_metrics_send **out)
{
	*out = NULL;
	if (!m)
		return 0;
	const struct txs_send_info *in = txs_send_info(s);
	const struct txs_netdev *dev = in->dev;
	char names[TXS_MAX_LINKS][20];
	const char *np[TXS_MAX_LINKS];
	unsigned nl = dev->n_links < TXS_MAX_LINKS ? dev->n_links : TXS_MAX_LINKS;
	for (unsigned l = 0; l < nl; l++) {
		struct txs_netdev_link li; /* a link without a name is named by its index there */
		np[l] = NULL;
		if (txs_netdev_link(dev, l, &li) == 0 && li.ifname[0]) {
			snprintf(names[l], sizeof(names[l]), "%s", li.ifname);
			np[l] = names[l];
		}
	}
	struct txs_metrics_send_conf c = { .n_threads = in->n_threads, .cpus = in->cpus, .n_links = nl,
					   .link_names = np };
	if (txs_metrics_send_create(out, &c) < 0)
		return -ENOMEM;
	if (txs_metrics_add(m, txs_metrics_send_collect, *out, NULL, 0) < 0) {
		txs_metrics_send_destroy(*out);
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}
