/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmarks. */
#ifndef TXS_BENCH_UTIL_H
#define TXS_BENCH_UTIL_H
#include "opt.h"

/* Median of n values (sorts a copy). */
double bench_median(const double *v, unsigned n);
/* CPUs to pin to: the -A list, or every CPU this process may run on.
 * Returns the count. */
unsigned bench_cpus(const struct opt_cpus *given, int *cpus);
#endif
