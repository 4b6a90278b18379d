/* SPDX-License-Identifier: MIT */
/* Benchmarks reachable as `txscale bench NAME`; one line each. */
#ifndef TXS_BENCHES_H
#define TXS_BENCHES_H
int bench_path(int argc, char **argv);
int bench_recv(int argc, char **argv);

#define TXS_BENCHES \
	{ "path", "send path into the dummy device: Mpps per core, 1 vs N threads", bench_path }, \
	{ "recv", "receive analysis of a pcap in memory: Mpps per core", bench_recv },
#endif
