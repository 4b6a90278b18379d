/* SPDX-License-Identifier: MIT */
/* The send collector: a send run's rows (per thread and per link, the ones
 * its interval reports and summary use) as Prometheus families. The
 * controlling thread publishes them; a scrape copies nothing else. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics_priv.h"

struct txs_metrics_send {
	pthread_mutex_t lock;
	unsigned n_threads, n_links;
	int *cpus;
	char link_names[TXS_MAX_LINKS][32];
	struct txs_stat_row *threads;
	struct txs_stat_row links[TXS_MAX_LINKS];
	struct rate_tick rate;
	double elapsed;
	enum txs_metrics_state st;
};

TXS_API int txs_metrics_send_create(struct txs_metrics_send **out, const struct txs_metrics_send_conf *conf)
{
	*out = NULL;
	if (!conf || !conf->n_threads || conf->n_threads > TXS_MAX_CORES || conf->n_links > TXS_MAX_LINKS)
		return -EINVAL;
	struct txs_metrics_send *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->threads = calloc(conf->n_threads, sizeof(*x->threads));
	x->cpus = calloc(conf->n_threads, sizeof(*x->cpus));
	if (!x->threads || !x->cpus) {
		free(x->threads);
		free(x->cpus);
		free(x);
		return -ENOMEM;
	}
	pthread_mutex_init(&x->lock, NULL);
	x->n_threads = conf->n_threads;
	x->n_links = conf->n_links;
	for (unsigned i = 0; i < x->n_threads; i++)
		x->cpus[i] = conf->cpus ? conf->cpus[i] : -1;
	for (unsigned l = 0; l < x->n_links; l++) {
		if (conf->link_names && conf->link_names[l])
			snprintf(x->link_names[l], sizeof(x->link_names[l]), "%s", conf->link_names[l]);
		else
			snprintf(x->link_names[l], sizeof(x->link_names[l]), "%u", l);
	}
	*out = x;
	return 0;
}

TXS_API void txs_metrics_send_destroy(struct txs_metrics_send *x)
{
	if (!x)
		return;
	pthread_mutex_destroy(&x->lock);
	free(x->threads);
	free(x->cpus);
	free(x);
}

TXS_API void txs_metrics_send_update(struct txs_metrics_send *x, double elapsed, const struct txs_stat_row *threads,
				     const struct txs_stat_row *links, enum txs_metrics_state st)
{
	uint64_t dg = 0, by = 0;
	for (unsigned i = 0; threads && i < x->n_threads; i++) {
		dg += threads[i].packets;
		by += threads[i].bytes;
	}
	pthread_mutex_lock(&x->lock);
	if (threads)
		memcpy(x->threads, threads, x->n_threads * sizeof(*threads));
	if (links)
		memcpy(x->links, links, x->n_links * sizeof(*links));
	x->elapsed = elapsed;
	x->st = st;
	if (threads && st == TXS_METRICS_RUNNING)
		txs_metrics_rate_tick(&x->rate, elapsed, dg, by);
	pthread_mutex_unlock(&x->lock);
}

#define DROPS_HELP                                                                                              \
	" by where: full (the device's ring or the socket's buffer was full after retries: EAGAIN, ENOBUFS, a full " \
	"TX ring) or error (any other device error)."

TXS_API void txs_metrics_send_collect(struct txs_prom *p, void *arg)
{
	struct txs_metrics_send *x = arg;
	pthread_mutex_lock(&x->lock);
	txs_metrics_state_family(p, "send", x->st, x->elapsed);
	txs_prom_family(p, "txscale_send_datagrams_total", TXS_PROM_COUNTER, "UDP datagrams the device accepted.");
	txs_prom_family(p, "txscale_send_bytes_total", TXS_PROM_COUNTER, "Frame bytes the device accepted.");
	txs_prom_family(p, "txscale_send_drops_total", TXS_PROM_COUNTER, "Datagrams built but not sent," DROPS_HELP);
	txs_prom_family(p, "txscale_send_thread_datagrams_total", TXS_PROM_COUNTER,
			"UDP datagrams the device accepted from this worker's queue.");
	txs_prom_family(p, "txscale_send_thread_bytes_total", TXS_PROM_COUNTER, "Frame bytes of this worker's queue.");
	txs_prom_family(p, "txscale_send_thread_drops_total", TXS_PROM_COUNTER,
			"Datagrams of this worker not sent," DROPS_HELP);
	struct txs_stat_row t = { 0 };
	for (unsigned i = 0; i < x->n_threads; i++) {
		const struct txs_stat_row *r = &x->threads[i];
		char id[16], cpu[16];
		snprintf(id, sizeof(id), "%u", i);
		snprintf(cpu, sizeof(cpu), "%d", x->cpus[i]);
		const struct txs_prom_label l[] = { { "thread", id }, { "cpu", cpu }, { "where", "full" } };
		txs_prom_u64(p, "txscale_send_thread_datagrams_total", l, 2, r->packets);
		txs_prom_u64(p, "txscale_send_thread_bytes_total", l, 2, r->bytes);
		txs_prom_u64(p, "txscale_send_thread_drops_total", l, 3, r->drops);
		const struct txs_prom_label le[] = { { "thread", id }, { "cpu", cpu }, { "where", "error" } };
		txs_prom_u64(p, "txscale_send_thread_drops_total", le, 3, r->errors);
		t.packets += r->packets;
		t.bytes += r->bytes;
		t.drops += r->drops;
		t.errors += r->errors;
	}
	txs_prom_u64(p, "txscale_send_datagrams_total", NULL, 0, t.packets);
	txs_prom_u64(p, "txscale_send_bytes_total", NULL, 0, t.bytes);
	txs_prom_u64(p, "txscale_send_drops_total", (struct txs_prom_label[]){ { "where", "full" } }, 1, t.drops);
	txs_prom_u64(p, "txscale_send_drops_total", (struct txs_prom_label[]){ { "where", "error" } }, 1, t.errors);
	if (x->n_links) {
		txs_prom_family(p, "txscale_send_link_frames_total", TXS_PROM_COUNTER, "Frames the device sent on this link.");
		txs_prom_family(p, "txscale_send_link_bytes_total", TXS_PROM_COUNTER, "Frame bytes sent on this link.");
		txs_prom_family(p, "txscale_send_link_drops_total", TXS_PROM_COUNTER, "Frames not sent on this link," DROPS_HELP);
		for (unsigned l = 0; l < x->n_links; l++) {
			const struct txs_stat_row *r = &x->links[l];
			const char *n = x->link_names[l];
			txs_prom_u64(p, "txscale_send_link_frames_total", (struct txs_prom_label[]){ { "link", n } }, 1, r->packets);
			txs_prom_u64(p, "txscale_send_link_bytes_total", (struct txs_prom_label[]){ { "link", n } }, 1, r->bytes);
			txs_prom_u64(p, "txscale_send_link_drops_total",
				     (struct txs_prom_label[]){ { "link", n }, { "where", "full" } }, 2, r->drops);
			txs_prom_u64(p, "txscale_send_link_drops_total",
				     (struct txs_prom_label[]){ { "link", n }, { "where", "error" } }, 2, r->errors);
		}
	}
	txs_metrics_rate_families(p, "send", &x->rate, x->st == TXS_METRICS_FINISHED);
	pthread_mutex_unlock(&x->lock);
}
