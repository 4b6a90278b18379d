/* SPDX-License-Identifier: MIT */
/* The registry of a send or recv run: started before the run, the file
 * written on the interval, the endpoint kept up --metrics-linger after it. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <txscale/netdev.h>
#include "metrics_cli.h"

int mcli_start(struct mcli *mc, const char *cmd, const struct mcli_opts *o, double interval)
{
	memset(mc, 0, sizeof(*mc));
	mc->o = o;
	mc->cmd = cmd;
	if (!o->addr && !o->file) {
		if (o->linger > 0)
			fprintf(stderr, "txscale %s: note: --metrics-linger applies with --metrics only\n", cmd);
		return 0;
	}
	if (o->addr) {
		struct txs_addr a;
		uint16_t port;
		if (txs_metrics_parse_addr(o->addr, &a, &port) < 0) {
			fprintf(stderr, "txscale %s: bad value for --metrics: '%s': expected ADDR:PORT, e.g. "
					"127.0.0.1:9101 or [::1]:9101\n", cmd, o->addr);
			return 2;
		}
		if (!txs_metrics_have_http()) {
			fprintf(stderr, "txscale %s: --metrics needs libmicrohttpd: this txscale was built without it "
					"(install libmicrohttpd-dev and rebuild); --metrics-file works without it\n", cmd);
			return 2;
		}
	}
	if (txs_metrics_create(&mc->m) < 0) {
		fprintf(stderr, "txscale %s: out of memory\n", cmd);
		return 1;
	}
	if (o->file) {
		/* a file that cannot be written is refused before the run */
		int rc = txs_metrics_write_file(mc->m, o->file);
		if (rc < 0) {
			fprintf(stderr, "txscale %s: bad value for --metrics-file: '%s': %s\n", cmd, o->file,
				strerror(-rc));
			txs_metrics_destroy(mc->m);
			mc->m = NULL;
			return 2;
		}
	}
	if (o->addr) {
		char err[200];
		int rc = txs_metrics_listen(mc->m, o->addr, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "txscale %s: --metrics %s\n", cmd, err);
			txs_metrics_destroy(mc->m);
			mc->m = NULL;
			return rc == -EINVAL ? 2 : 1;
		}
		struct txs_addr a;
		uint16_t port;
		if (txs_metrics_parse_addr(o->addr, &a, &port) == 0 && port == 0) {
			char ab[64];
			fprintf(stderr, "txscale %s: metrics at http://%s%s%s:%u/metrics\n", cmd, a.family == AF_INET6 ? "[" : "",
				txs_addr_str(&a, ab, sizeof(ab)), a.family == AF_INET6 ? "]" : "", txs_metrics_port(mc->m));
		}
	}
	mc->period = interval > 0 ? interval : 1.0;
	mc->next_file = mc->period;
	return 0;
}

int mcli_add(struct mcli *mc, txs_metrics_collect_fn fn, void *arg)
{
	if (!mc->m)
		return 0;
	if (txs_metrics_add(mc->m, fn, arg, NULL, 0) < 0) {
		fprintf(stderr, "txscale %s: metrics: out of memory\n", mc->cmd);
		return 1;
	}
	return 0;
}

int mcli_send_collector(struct mcli *mc, struct txs_metrics_send **out, unsigned n, const int *cpus,
			const struct txs_netdev *dev)
{
	*out = NULL;
	if (!mc->m)
		return 0;
	char names[TXS_MAX_LINKS][20];
	const char *np[TXS_MAX_LINKS];
	unsigned nl = dev->n_links < TXS_MAX_LINKS ? dev->n_links : TXS_MAX_LINKS;
	for (unsigned l = 0; l < nl; l++) {
		struct txs_netdev_link li;
		if (txs_netdev_link(dev, l, &li) == 0 && li.ifname[0])
			snprintf(names[l], sizeof(names[l]), "%s", li.ifname);
		else
			snprintf(names[l], sizeof(names[l]), "%u", l);
		np[l] = names[l];
	}
	struct txs_metrics_send_conf c = { .n_threads = n, .cpus = cpus, .n_links = nl, .link_names = np };
	if (txs_metrics_send_create(out, &c) < 0 || mcli_add(mc, txs_metrics_send_collect, *out)) {
		fprintf(stderr, "txscale %s: metrics: out of memory\n", mc->cmd);
		txs_metrics_send_destroy(*out);
		*out = NULL;
		return 1;
	}
	return 0;
}

static void write_file(struct mcli *mc)
{
	int rc = txs_metrics_write_file(mc->m, mc->o->file);
	if (rc < 0 && !mc->file_failed) {
		fprintf(stderr, "txscale %s: cannot write --metrics-file '%s': %s\n", mc->cmd, mc->o->file,
			strerror(-rc));
		mc->file_failed = true;
	}
}

void mcli_tick(struct mcli *mc, double elapsed)
{
	if (!mc->m || !mc->o->file || elapsed < mc->next_file)
		return;
	write_file(mc);
	while (mc->next_file <= elapsed)
		mc->next_file += mc->period;
}

static volatile sig_atomic_t g_linger_stop;

static void on_linger_signal(int sig)
{
	(void)sig;
	g_linger_stop = 1;
}

int mcli_end(struct mcli *mc)
{
	if (!mc->m)
		return 0;
	if (mc->o->file)
		write_file(mc);
	fflush(stdout); /* the summary is out before the wait */
	if (mc->o->addr && mc->o->linger > 0) {
		struct sigaction sa = { .sa_handler = on_linger_signal }, old_int, old_term;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (!g_linger_stop) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= mc->o->linger)
				break;
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	txs_metrics_destroy(mc->m);
	mc->m = NULL;
	return mc->file_failed ? 1 : 0;
}

void mcli_close(struct mcli *mc)
{
	txs_metrics_destroy(mc->m);
	mc->m = NULL;
}
