/* SPDX-License-Identifier: MIT */
/* Benchmarks reachable as `txscale bench NAME`; one line each. */
#ifndef TXS_BENCHES_H
#define TXS_BENCHES_H
int bench_path(int argc, char **argv);
int bench_ident(int argc, char **argv);
int bench_linksel(int argc, char **argv);
int bench_recv(int argc, char **argv);
int bench_sendmsg(int argc, char **argv);
int bench_tstamp(int argc, char **argv);

#define TXS_BENCHES \
	{ "ident", "IP ID allocators: Mops/s, ns/ID, reuse distance, strategy x threads", bench_ident }, \
	{ "linksel", "link selection: ns per pick and link imbalance, mode x scope x threads", bench_linksel }, \
	{ "path", "send path into the dummy device: Mpps per core, 1 vs N threads", bench_path }, \
	{ "recv", "receive analysis of a pcap in memory: Mpps per core", bench_recv }, \
	{ "sendmsg", "txs_udp_sendmsg calls/s per core, IPv4/IPv6, connected/unconnected", bench_sendmsg }, \
	{ "timestamps", "send timestamps per burst vs per packet: Mpps and ratio, same run", bench_tstamp },
#endif
