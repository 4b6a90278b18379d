/* SPDX-License-Identifier: MIT */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include "bench_util.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double bench_median(const double *v, unsigned n)
{
	if (!n)
		return 0;
	double *c = malloc(sizeof(*c) * n);
	if (!c)
		return v[0];
	memcpy(c, v, sizeof(*c) * n);
	qsort(c, n, sizeof(*c), cmp_dbl);
	double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

unsigned bench_cpus(const struct opt_cpus *given, int *cpus)
{
	if (given->n) {
		for (unsigned i = 0; i < given->n; i++)
			cpus[i] = given->cpu[i];
		return given->n;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	unsigned n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < TXS_MAX_CORES; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

int bench_opts(const char *cmd, const struct txs_opt *opts, void *cfg, int argc, char **argv)
{
	const char *pos[1];
	int npos;
	int rc = opt_parse(cmd, "[options]", opts, cfg, argc, argv, pos, 0, &npos);
	return rc ? (rc == 1 ? 0 : 2) : -1;
}

int bench_threads(const char *cmd, const char *list, unsigned *tl, unsigned max, unsigned *nt, bool nonempty)
{
	if (opt_parse_uint_list(list, tl, max, nt) < 0 || (nonempty && *nt == 0)) {
		fprintf(stderr, "txscale %s: bad value for --threads: '%s'\n", cmd, list);
		return 2;
	}
	return 0;
}

double bench_engine_pps(const struct txs_engine_conf *ec, int (*check)(struct txs_engine *e, void *arg), void *arg)
{
	struct txs_engine *e;
	double pps = -1;
	if (txs_engine_create(&e, ec) == 0) {
		if (txs_engine_start(e) == 0 && txs_engine_wait(e) == 0) {
			struct txs_stat_row rows[TXS_MAX_CORES];
			double s = txs_engine_read(e, rows);
			uint64_t pk = 0;
			for (unsigned i = 0; i < ec->n_workers; i++)
				pk += rows[i].packets;
			pps = (double)pk / s;
			if (check && check(e, arg) < 0)
				pps = -1;
		}
		txs_engine_destroy(e);
	}
	return pps;
}
