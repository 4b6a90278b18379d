/* SPDX-License-Identifier: MIT */
/* txscale send: flows, address and port ranges, size mixes (
 * include/txscale/pkt.h struct txs_shape, docs/udp.md "Flows and sizes"). */
#ifndef TXS_SEND_SHAPE_H
#define TXS_SEND_SHAPE_H
#include <stdio.h>
#include <txscale/txscale.h>

struct send_shape {
	struct txs_shape sh;
	bool any;            /* ranges, several flows or several sizes */
	bool ranges;         /* a port or address range */
	uint64_t flow_base;
	char dest[INET6_ADDRSTRLEN], bind[INET6_ADDRSTRLEN];
	uint8_t *pat;        /* the size cycle, for the per-size report */
	uint32_t pat_len;
	uint32_t len;        /* the largest -l size */
	unsigned vlan_len;   /* VLAN tag bytes per frame */
};
/* --vlan ID[,PRIO] / --qinq OUTER[:PRIO],INNER[:PRIO] into sp. 0, or 2. */
int send_shape_vlan(struct send_shape *ss, const char *vlan_s, const char *qinq_s, struct txs_flow_spec *sp);

/* Before the destination is parsed: --dst / --src / --sport / --dport
 * ranges into ss->sh; *dest / *bind point at the ranges' first addresses
 * (one of DEST and --dst, of -B and --src), *sport / *dport at the first
 * ports. Returns 0, or 2 with one line printed. */
int send_shape_ranges(struct send_shape *ss, const char **dest, const char *dst_s, const char **bind,
		      const char *src_s, const char *sport_s, uint16_t *sport, const char *dport_s, uint16_t *dport,
		      unsigned flows, uint64_t flow_base);
/* -l SIZES for this family: *length = the largest size. 0, or 2. */
int send_shape_sizes(struct send_shape *ss, const char *length_s, int family, unsigned *length);
/* After the device opened and the route is chosen (sendmsg: true for the
 * sendmsg path): what the device and path cannot do, refused (2). */
int send_shape_check(struct send_shape *ss, const struct txs_netdev *dev, bool sendmsg, unsigned gso, bool v4,
		     uint32_t mtu, unsigned nthreads);
/* Summary additions: "flows_per_thread", "flow_base", "sizes":[...] from
 * each thread's datagrams (packets + drops, the engine's rows). */
void send_shape_json(struct txs_json *j, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n);
void send_shape_text(FILE *f, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n);
/* Frame bytes of an average datagram of the size cycle (for -b in bits);
 * wire when there is one size. */
double send_shape_wire(const struct send_shape *ss, bool v4, uint32_t mtu, double wire);
void send_shape_free(struct send_shape *ss);
#endif
