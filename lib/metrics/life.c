/* SPDX-License-Identifier: MIT */
/* A run's metrics (txscale/metrics.h, "a run's metrics"): the registry
 * started before the run, the file written on the period, the endpoint kept
 * up for the linger after it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <txscale/metrics.h>
#include <txscale/pkt.h>
#include "common/clock.h"
#include "common/err.h"

struct txs_metrics_life {
	struct txs_metrics *m;
	struct txs_metrics_opts o;
	void (*say)(void *user, const char *line);
	void *user;
	double period, next_file;
	bool file_failed;
	volatile sig_atomic_t stop;
};

/* the checks that need no registry */
static int check(const struct txs_metrics_opts *o, char *err, size_t errlen)
{
	struct txs_addr a;
	uint16_t port;
	if (txs_metrics_parse_addr(o->addr, &a, &port) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for --metrics: '%s': expected ADDR:PORT, e.g. "
				"127.0.0.1:9101 or [::1]:9101", o->addr);
	if (!txs_metrics_have_http())
		return txs_fail(err, errlen, -EINVAL, "--metrics needs libmicrohttpd: this txscale was built without it "
				"(install libmicrohttpd-dev and rebuild); --metrics-file works without it");
	return 0;
}

/* a file that cannot be written is refused before the run; then the endpoint */
static int begin(struct txs_metrics_life *l, char *err, size_t errlen)
{
	const struct txs_metrics_opts *o = &l->o;
	if (o->file) {
		int rc = txs_metrics_write_file(l->m, o->file);
		if (rc < 0)
			return txs_fail(err, errlen, -EINVAL, "bad value for --metrics-file: '%s': %s", o->file,
					strerror(-rc));
	}
	if (!o->addr)
		return 0;
	char why[200];
	int rc = txs_metrics_listen(l->m, o->addr, why, sizeof(why));
	if (rc < 0)
		return txs_fail(err, errlen, rc, "--metrics %s", why);
	struct txs_addr a;
	uint16_t port;
	if (txs_metrics_parse_addr(o->addr, &a, &port) == 0 && port == 0) {
		char ab[64];
		txs_say(l->say, l->user, "metrics at http://%s%s%s:%u/metrics", a.family == AF_INET6 ? "[" : "",
			txs_addr_str(&a, ab, sizeof(ab)), a.family == AF_INET6 ? "]" : "", txs_metrics_port(l->m));
	}
	return 0;
}

TXS_API int txs_metrics_life_start(struct txs_metrics_life **out, const struct txs_metrics_opts *o, double interval,
				   void (*say)(void *user, const char *line), void *user, char *err, size_t errlen)
{
	*out = NULL;
	if (!o->addr && !o->file) {
		if (o->linger > 0)
			txs_say(say, user, "note: --metrics-linger applies with --metrics only");
		return 0;
	}
	int rc = o->addr ? check(o, err, errlen) : 0;
	if (rc)
		return rc;
	struct txs_metrics_life *l = calloc(1, sizeof(*l));
	if (!l || txs_metrics_create(&l->m) < 0) {
		free(l);
		return txs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	l->o = *o;
	l->say = say;
	l->user = user;
	l->period = interval > 0 ? interval : 1.0;
	l->next_file = l->period;
	rc = begin(l, err, errlen);
	if (rc) {
		txs_metrics_life_close(l);
		return rc;
	}
	*out = l;
	return 0;
}

TXS_API struct txs_metrics *txs_metrics_life_registry(const struct txs_metrics_life *l)
{
	return l ? l->m : NULL;
}

static void write_file(struct txs_metrics_life *l)
{
	int rc = txs_metrics_write_file(l->m, l->o.file);
	if (rc < 0 && !l->file_failed) {
		txs_say(l->say, l->user, "cannot write --metrics-file '%s': %s", l->o.file, strerror(-rc));
		l->file_failed = true;
	}
}

TXS_API void txs_metrics_life_tick(struct txs_metrics_life *l, double elapsed)
{
	if (!l || !l->m || !l->o.file || elapsed < l->next_file)
		return;
	write_file(l);
	while (l->next_file <= elapsed)
		l->next_file += l->period;
}

TXS_API int txs_metrics_life_end(struct txs_metrics_life *l)
{
	if (!l || !l->m)
		return 0;
	if (l->o.file)
		write_file(l);
	if (l->o.addr && l->o.linger > 0) {
		double t0 = txs_mono_s();
		while (!l->stop && txs_mono_s() - t0 < l->o.linger) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	txs_metrics_destroy(l->m);
	l->m = NULL;
	return l->file_failed ? -EIO : 0;
}

TXS_API void txs_metrics_life_stop(struct txs_metrics_life *l)
{
	if (l)
		l->stop = 1;
}

TXS_API void txs_metrics_life_close(struct txs_metrics_life *l)
{
	if (!l)
		return;
	txs_metrics_destroy(l->m);
	free(l);
}
