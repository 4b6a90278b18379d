/* SPDX-License-Identifier: MIT */
/* The receive session's options (opt.h): one table for the CLI's `txscale
 * recv`, a JSON session's config and the Python keywords, and the one
 * conversion of what they fill into the session's config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>
#include "opt.h"

static int parse_offset(const char *val, void *dst, char *err, size_t errlen)
{
	struct txs_recv_args_offset *o = dst;
	char *end;
	errno = 0;
	long long v = strtoll(val, &end, 10);
	if (errno || end == val || *end || v < -(1ll << 62) || v > (1ll << 62)) {
		snprintf(err, errlen, "expected a signed integer of nanoseconds (receiver's clock minus sender's), "
			 "e.g. -1500000");
		return -1;
	}
	o->set = true;
	o->ns = v;
	return 0;
}

static int parse_time(const char *val, void *dst, char *err, size_t errlen)
{
	struct txs_recv_args_time *t = dst;
	if (txs_parse_seconds(val, &t->v) < 0) {
		snprintf(err, errlen, "expected seconds, e.g. 10, 0.5, 250ms (0 = no limit, needs --idle)");
		return -1;
	}
	t->set = true;
	return 0;
}

#define O(f) offsetof(struct txs_recv_args, f)
#define C(f) offsetof(struct txs_recv_args, c.f)
const struct txs_opt txs_recv_opts[] = {
	{ "bind", 'B', OPT_STR, C(bind), "ADDR", "local address (udp); raw inputs: analyse only packets to ADDR" },
	{ "port", 'p', OPT_STR, C(port), "PORT[-HI]", "UDP port, or a range of at most 1024 ports (udp: a socket per port and thread) (default 5201; pcap: any port unless given)" },
	{ "ipv4", '4', OPT_FLAG, C(v4), NULL, "IPv4 only" },
	{ "ipv6", '6', OPT_FLAG, C(v6), NULL, "IPv6 only (udp without -B: dual-stack unless -4/-6)" },
	{ "parallel", 'P', OPT_UINT, C(threads), "N", "receiving threads/queues (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin threads to these CPUs, e.g. 0-3 (default: not pinned, like iperf3)" },
	{ "no-pin", 0, OPT_FLAG, O(no_pin), NULL, "do not pin threads, even with -A (the default without -A)" },
	{ "dev", 0, OPT_STR, C(dev), "DEV", "input: udp[:gro=off] | packet:IFNAME[,IFNAME...] | xdp:IFNAME[,native|skb][,copy|zc][,ring=N] | pcap:FILE", "udp" },
	{ "time", 't', OPT_CUSTOM, O(time), "SEC", "stop after SEC seconds (live default 10; 0 = no limit, needs --idle)", NULL, 0, 0, parse_time },
	{ "idle", 0, OPT_SECONDS, C(idle), "SEC", "stop after SEC without packets (counted from the first packet)" },
	{ "expect", 0, OPT_U64, C(expect), "N", "the sender sent N packets: exact loss; stop once all arrived", NULL, 1, 0 },
	{ "sender-summary", 0, OPT_STR, C(sender_summary), "FILE", "JSON summary of txscale send (--summary-file, or its -J output), read at the end: exact loss per flow" },
	{ "interval", 'i', OPT_SECONDS, C(interval), "SEC", "seconds between interval reports; 0 = none", "1" },
	{ "rcvbuf", 0, OPT_U64, C(rcvbuf), "BYTES", "udp: socket receive buffer, default 33554432 (SO_RCVBUFFORCE if permitted, else up to net.core.rmem_max)", NULL, 1, 0x7fffffff },
	{ "reuseport", 0, OPT_FLAG, C(reuseport), NULL, "udp: share the port with other receivers (SO_REUSEPORT: the kernel splits the traffic; each counts the others' share as lost)" },
	{ "window", 0, OPT_UINT, C(window), "PKTS", "duplicate/reorder window per flow, power of two", "4096", 64, TXS_RX_WINDOW_MAX },
	{ "max-flows", 0, OPT_UINT, C(max_flows), "N", "flows tracked per thread", "4096", 1, 1u << 22 },
	{ "batch", 0, OPT_UINT, C(batch), "N", "datagrams per recvmmsg / records per read", "64", 1, 1024 },
	{ "rx-timestamps", 0, OPT_STR, C(rx_ts), "MODE", "udp: arrival time for latency: kernel (each datagram's "
	  "software receive timestamp, SO_TIMESTAMPING), user (one clock read per recvmmsg batch), or "
	  "hardware[:IFACE] (the NIC's own stamp, else kernel, per datagram; IFACE, default the one holding "
	  "-B ADDR, must stamp all packets, and its clock (PHC) be kept on CLOCK_REALTIME, e.g. by phc2sys, "
	  "as the sender stamps CLOCK_REALTIME; CAP_NET_ADMIN unless the NIC's filter is on already)", "kernel" },
	{ "verify", 0, OPT_FLAG, C(verify), NULL, "check the payload fill pattern of every packet" },
	{ "payload", 0, OPT_STR, C(payload), "KIND", "the payload header: txscale, or iperf3 / iperf3-64 (a stock iperf3 client's, 32- or 64-bit sequence), or iperf2 (an iperf 2 UDP client's); flows by 5-tuple; docs/iperf3.md", "txscale" },
	{ "outage-min", 0, OPT_SECONDS, C(outage_min), "SEC", "an outage is a silence longer than SEC with datagrams missing inside it (default: 10x the flow's median inter-arrival, at least 1 ms)" },
	{ "clock-offset", 0, OPT_CUSTOM, O(clock_offset), "NS", "correct one-way latency by this known clock offset (receiver's clock minus sender's, ns); the report says so and gives the raw figures beside", NULL, 0, 0, parse_offset },
	OPT_END
};
#undef O
#undef C

const struct txs_opt *txs_recv_opt_table(void)
{
	return txs_recv_opts;
}

void txs_recv_args_init(struct txs_recv_args *a)
{
	memset(a, 0, sizeof(*a));
	txs_recv_conf_init(&a->c);
}

void txs_recv_args_conf(struct txs_recv_args *a)
{
	struct txs_recv_conf *c = &a->c;
	c->n_affinity = a->cpus.n;
	/* -t 0 is no limit; no -t, the default (0) */
	c->time = !a->time.set ? 0 : a->time.v == 0 ? TXS_RECV_NO_TIME_LIMIT : a->time.v;
	c->clock_offset_set = a->clock_offset.set;
	c->clock_offset_ns = a->clock_offset.ns;
	/* unpinned unless -A (pinning thread 0 to CPU 0 by default put
	 * recv on the sender's CPU on one host) */
	unsigned n = txs_recv_conf_threads(c);
	txs_cpus_assign(a->cpus.cpu, a->cpus.n, a->no_pin || !a->cpus.n, n < TXS_MAX_CORES ? n : TXS_MAX_CORES, c->cpu);
}
