/* SPDX-License-Identifier: MIT */
/* Benchmarks reachable as `txscale bench NAME`; one line each. */
#ifndef TXS_BENCHES_H
#define TXS_BENCHES_H
int bench_path(int argc, char **argv);
int bench_linksel(int argc, char **argv);

#define TXS_BENCHES \
	{ "path", "send path into the dummy device: Mpps per core, 1 vs N threads", bench_path }, \
	{ "linksel", "link selection: ns per pick and link imbalance, mode x scope x threads", bench_linksel },
#endif
