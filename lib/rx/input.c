/* SPDX-License-Identifier: MIT */
/* Receive inputs: registry, chosen by name at open. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rx_priv.h"

static const struct txs_rx_input_ops *const inputs[] = {
	&txs_rx_input_udp_ops,
	&txs_rx_input_packet_ops,
	&txs_rx_input_pcap_ops,
	&txs_rx_input_xdp_ops,
};

void txs_rx_input_set_err(struct txs_rx_input *in, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(in->err, sizeof(in->err), fmt, ap);
	va_end(ap);
}

TXS_API int txs_rx_input_open(struct txs_rx_input **out, const char *spec, const struct txs_rx_input_conf *conf,
			      char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	const char *colon = strchr(spec, ':');
	size_t nl = colon ? (size_t)(colon - spec) : strlen(spec);
	const struct txs_rx_input_ops *ops = NULL;
	for (size_t i = 0; i < TXS_ARRAY_SIZE(inputs); i++)
		if (strlen(inputs[i]->name) == nl && strncmp(inputs[i]->name, spec, nl) == 0)
			ops = inputs[i];
	if (!ops || strlen(spec) >= sizeof(((struct txs_rx_input *)0)->spec)) {
		if (err) {
			int n = snprintf(err, errlen, "unknown input '%.*s' (expected", (int)(nl > 64 ? 64 : nl), spec);
			for (size_t i = 0; i < TXS_ARRAY_SIZE(inputs) && n > 0 && (size_t)n < errlen; i++)
				n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", inputs[i]->usage);
			if (n > 0 && (size_t)n < errlen)
				snprintf(err + n, errlen - (size_t)n, ")");
		}
		return ops ? -EINVAL : -ENODEV;
	}
	struct txs_rx_input *in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->ops = ops;
	snprintf(in->spec, sizeof(in->spec), "%s", spec);
	if (conf)
		in->conf = *conf;
	if (!in->conf.n_queues)
		in->conf.n_queues = 1;
	if (!in->conf.batch)
		in->conf.batch = 64;
	if (in->conf.batch > 1024)
		in->conf.batch = 1024;
	if (!in->conf.ring_blocks)
		in->conf.ring_blocks = 16;
	in->n_links = 1;
	int rc = in->n_links && in->conf.n_queues <= TXS_MAX_CORES ? ops->open(in, colon ? colon + 1 : "") : -EINVAL;
	if (rc < 0) {
		if (err)
			snprintf(err, errlen, "%s: %s", in->spec, in->err[0] ? in->err : strerror(-rc));
		free(in);
		return rc;
	}
	*out = in;
	return 0;
}

TXS_API void txs_rx_input_close(struct txs_rx_input *in)
{
	if (!in)
		return;
	in->ops->close(in);
	free(in);
}

TXS_API int txs_rx_input_check(struct txs_rx_input *in, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = 0;
	return in->ops->check ? in->ops->check(in, err, errlen) : 0;
}

TXS_API void txs_rx_input_stats(struct txs_rx_input *in, struct txs_rx_input_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->rcvbuf = -1;
	if (in->ops->stats)
		in->ops->stats(in, out);
}
