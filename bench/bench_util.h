/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmarks. */
#ifndef TXS_BENCH_UTIL_H
#define TXS_BENCH_UTIL_H
#include <stdbool.h>
#include "opt.h"

/* Median of n values (sorts a copy). */
double bench_median(const double *v, unsigned n);
/* CPUs to pin to: the -A list, or every CPU this process may run on.
 * Returns the count. */
unsigned bench_cpus(const struct opt_cpus *given, int *cpus);
/* Parse a benchmark's options into cfg (no positional arguments).
 * Returns -1 to go on, else the exit status: 0 after --help, 2 after a bad
 * option (opt_parse printed the line). */
int bench_opts(const char *cmd, const struct txs_opt *opts, void *cfg, int argc, char **argv);
/* One engine run of ec to its end: the packets its workers sent per
 * second, or -1 when it did not run or check (NULL: none), called on the
 * engine after the run, returned < 0. */
struct txs_engine;
struct txs_engine_conf;
double bench_engine_pps(const struct txs_engine_conf *ec, int (*check)(struct txs_engine *e, void *arg), void *arg);

/* Define fn, the entry point of `txscale bench ...` (cmd): its options
 * parsed into a zeroed T (bench_opts), then the exit status of run(cfg). */
#define BENCH_MAIN(fn, cmd, T, opts, run)                                  \
	int fn(int argc, char **argv)                                      \
	{                                                                  \
		T cfg = { 0 };                                             \
		int rc = bench_opts(cmd, opts, &cfg, argc, argv);          \
		return rc >= 0 ? rc : run(cfg);                            \
	}
/* The --threads list: up to max counts into tl (*nt of them; none is an
 * error when nonempty). Returns 0, or 2 after printing the line naming
 * the bad value under cmd ("bench path"). */
int bench_threads(const char *cmd, const char *list, unsigned *tl, unsigned max, unsigned *nt, bool nonempty);
#endif
