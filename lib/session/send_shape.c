/* SPDX-License-Identifier: MIT */
/* A send session's flows, ranges and size mixes (send_priv.h). */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common/err.h"
#include "send_priv.h"

#define DEFAULT_FLOWS_MAX 65536u

static int bad(char *err, size_t errlen, const char *opt, const char *val, const char *why)
{
	return txs_fail(err, errlen, -EINVAL, "bad value for %s: '%s': %s", opt, val, why);
}


int send_shape_ranges(struct send_shape *ss, struct txs_send_conf *c, uint16_t *sport, char *err, size_t errlen)
{
	const char **dest = &c->dest, **bind = &c->bind, *dst_s = c->dst, *src_s = c->src, *sport_s = c->sport,
		   *dport_s = c->dport;
	uint16_t *dport = &c->port;
	char why[160];
	struct txs_shape *sh = &ss->sh;
	struct txs_addr a;
	if (dst_s) {
		if (*dest) {
			return txs_fail(err, errlen, -EINVAL, "destination given twice ('%s' and --dst %s)", *dest, dst_s);
		}
		if (txs_range_parse_addr(dst_s, &a, &sh->dst, why, sizeof(why)) < 0)
			return bad(err, errlen, "--dst", dst_s, why);
		*dest = txs_addr_str(&a, ss->dest, sizeof(ss->dest));
	}
	if (src_s) {
		if (*bind) {
			return txs_fail(err, errlen, -EINVAL, "source given twice (--bind %s and --src %s)", *bind, src_s);
		}
		if (txs_range_parse_addr(src_s, &a, &sh->src, why, sizeof(why)) < 0)
			return bad(err, errlen, "--src", src_s, why);
		*bind = txs_addr_str(&a, ss->bind, sizeof(ss->bind));
	}
	if (txs_range_parse_port(sport_s, sport, &sh->sport, why, sizeof(why)) < 0)
		return bad(err, errlen, "--sport", sport_s, why);
	if (dport_s && txs_range_parse_port(dport_s, dport, &sh->dport, why, sizeof(why)) < 0)
		return bad(err, errlen, "--dport", dport_s, why);
	uint64_t span = 1;
	const struct txs_range *r[4] = { &sh->sport, &sh->dport, &sh->src, &sh->dst };
	for (int k = 0; k < 4; k++)
		if (r[k]->span > span)
			span = r[k]->span;
	ss->ranges = span > 1;
	sh->flows = c->flows ? c->flows : span < DEFAULT_FLOWS_MAX ? (uint32_t)span : DEFAULT_FLOWS_MAX;
	ss->flow_base = c->flow_base;
	ss->any = ss->ranges || sh->flows > 1;
	return 0;
}

int send_shape_sizes(struct send_shape *ss, const char *length_s, int family, unsigned *length, char *err,
		     size_t errlen)
{
	char why[160];
	if (txs_shape_parse_sizes(&ss->sh, length_s, family, why, sizeof(why)) < 0)
		return bad(err, errlen, "--length", length_s, why);
	*length = txs_shape_max_size(&ss->sh, 0);
	ss->len = *length;
	if (ss->sh.n_sizes > 1)
		ss->any = true;
	if (txs_shape_pattern(&ss->sh, &ss->pat, &ss->pat_len) < 0)
		return bad(err, errlen, "--length", length_s, "the weights make a cycle over 2^20 packets (divide them)");
	return 0;
}

static int vid_prio(const char *s, unsigned *vid, unsigned *prio, char **end)
{
	unsigned long v = strtoul(s, end, 10);
	if (*end == s || v > 4094)
		return -1;
	*vid = (unsigned)v;
	if (**end == ':') {
		const char *p = *end + 1;
		unsigned long q = strtoul(p, end, 10);
		if (*end == p || q > 7)
			return -1;
		*prio = (unsigned)q;
	}
	return 0;
}

int send_shape_vlan(struct send_shape *ss, const char *vlan_s, const char *qinq_s, struct txs_flow_spec *sp,
		    char *err, size_t errlen)
{
	if (vlan_s && qinq_s) {
		return txs_fail(err, errlen, -EINVAL, "--vlan and --qinq exclude each other (--qinq OUTER,INNER sets both tags)");
	}
	unsigned v0 = 0, p0 = 0, v1 = 0, p1 = 0;
	char *end;
	if (vlan_s) {
		/* ID[,PRIO] */
		if (vid_prio(vlan_s, &v0, &p0, &end) < 0 || (*end == ',' && (vid_prio(end + 1, &p0, &p1, &end) < 0 ||
									      p0 > 7)) || *end)
			return bad(err, errlen, "--vlan", vlan_s, "expected ID[,PRIO] with ID 0..4094 and PRIO 0..7");
		sp->n_vlan = 1;
		sp->vlan_tci[0] = (uint16_t)(p0 << 13 | v0);
	} else if (qinq_s) {
		/* OUTER[:PRIO],INNER[:PRIO] */
		if (vid_prio(qinq_s, &v0, &p0, &end) < 0 || *end != ',' || vid_prio(end + 1, &v1, &p1, &end) < 0 || *end)
			return bad(err, errlen, "--qinq", qinq_s, "expected OUTER[:PRIO],INNER[:PRIO] with IDs 0..4094, PRIO 0..7");
		sp->n_vlan = 2;
		sp->vlan_tci[0] = (uint16_t)(p0 << 13 | v0);
		sp->vlan_tci[1] = (uint16_t)(p1 << 13 | v1);
	}
	ss->vlan_len = TXS_VLAN_HLEN * sp->n_vlan;
	return 0;
}

/* true when one of xdp:IF[,IF...]'s interfaces is a veth (ETHTOOL_GDRVINFO):
 * in copy mode its frames go through the veth's own transmit, which drops a
 * frame over MTU + 14 + 4 (a full-size QinQ frame) without saying why (the
 * kick answers EBUSY, as for a full peer queue). */
static bool xdp_on_veth(const char *spec)
{
	char names[256];
	snprintf(names, sizeof(names), "%s", spec + 4);
	char *comma = strchr(names, ':'); /* no options after the names today; be safe */
	if (comma)
		*comma = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool veth = false;
	for (char *save = NULL, *n = strtok_r(names, ",", &save); n && !veth; n = strtok_r(NULL, ",", &save)) {
		struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
		struct ifreq ifr;
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", n);
		ifr.ifr_data = (char *)&di;
		veth = ioctl(fd, SIOCETHTOOL, &ifr) == 0 && strcmp(di.driver, "veth") == 0;
	}
	close(fd);
	return veth;
}

/* --dev udp binds each flow's source address: one that is not local would
 * make the kernel refuse that flow's every datagram (or, with the wildcard,
 * merge flows), so the --src range is checked here: every address of a
 * range of at most 4096, else its first and last. 1 (said why) when one is
 * not local. */
static bool src_not_local(const struct send_shape *ss, const struct txs_netdev *dev, char *err, size_t errlen)
{
	struct txs_addr lo;
	if (txs_addr_parse(&lo, ss->bind) < 0)
		return false;
	uint64_t span = ss->sh.src.span;
	uint64_t step = span <= 4096 ? 1 : span - 1;
	for (uint64_t off = 0; off < span; off += step) {
		struct txs_addr a = lo;
		txs_range_addr(&a, off);
		struct sockaddr_storage st;
		socklen_t sl = txs_udp_sockaddr(&st, &a, 0);
		int fd = socket(a.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return false;
		int r = bind(fd, (struct sockaddr *)&st, sl), e = errno;
		close(fd);
		if (r < 0 && e == EADDRNOTAVAIL) {
			char ab[INET6_ADDRSTRLEN];
			txs_fail(err, errlen, -EINVAL, "bad value for --src: '%s' is not a local address: --dev %s binds "
					"each flow's source (give local addresses, or a frame device)",
				 txs_addr_str(&a, ab, sizeof(ab)), dev->spec);
			return true;
		}
	}
	return false;
}

int send_shape_check(struct send_shape *ss, const struct txs_netdev *dev, bool sendmsg, unsigned gso, bool v4,
		     uint32_t mtu, unsigned nthreads, char *err, size_t errlen)
{
	const struct txs_shape *sh = &ss->sh;
	if (ss->vlan_len && dev->kernel_ip) {
		return txs_fail(err, errlen, -EINVAL, "--dev %s: VLAN tags need a frame device (packet:, xdp:, pcap:, "
				"dummy); the kernel tags on a VLAN interface: send through it", dev->spec);
	}
	const bool pkt = strncmp(dev->spec, "packet:", 7) == 0;
	if (ss->vlan_len > TXS_VLAN_HLEN && !gso && (pkt || (strncmp(dev->spec, "xdp:", 4) == 0 &&
							     xdp_on_veth(dev->spec)))) {
		/* AF_PACKET takes a frame over MTU + 14 only with one 802.1Q outer
		 * tag; a veth drops one over MTU + 18 (100 of 100 full-size
		 * QinQ frames on xdp: were dropped and read as "full") */
		uint32_t most = mtu - (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN) - TXS_UDP_HLEN - TXS_VLAN_HLEN;
		if (txs_shape_max_size(sh, ss->len) > most) {
			return txs_fail(err, errlen, -EINVAL, "bad value for --length: '%u': with --qinq on %s %s frames of at "
					"most MTU + 18 bytes: --length at most %u (or --mtu %u, fragments included)",
				txs_shape_max_size(sh, ss->len), dev->spec,
				pkt ? "the kernel's AF_PACKET takes" : "the veth (copy mode) forwards", most, mtu - 4);
		}
	}
	if (ss->ranges && dev->kernel_ip && sh->flows > 1) {
		/* a connected socket per flow's tuple, per thread and link */
		if (sh->flows > TXS_NETDEV_UDP_FLOWS_MAX) {
			return txs_fail(err, errlen, -EINVAL, "bad value for --flows: '%u': --dev %s with port or address ranges "
					"keeps a socket per flow: at most %u flows per thread", sh->flows, dev->spec,
				TXS_NETDEV_UDP_FLOWS_MAX);
		}
		if (sh->src.span > 1 && src_not_local(ss, dev, err, errlen))
			return -EINVAL;
		unsigned long long need = (unsigned long long)sh->flows * nthreads * (dev->n_links ? dev->n_links : 1) + 64,
				   lim;
		if (txs_nofile_raise(need, &lim) < 0) {
			return txs_fail(err, errlen, -EINVAL, "bad value for --flows: '%u': --dev %s with port or address ranges "
					"keeps a socket per flow: %u flows x %u threads need %llu open files, the limit is %llu "
					"(ulimit -n)", sh->flows, dev->spec, sh->flows, nthreads, need, lim);
		}
	}
	uint64_t ids = ss->flow_base + (uint64_t)nthreads * (sh->flows ? sh->flows : 1);
	if (ids - 1 > 0xffffffffull) {
		return txs_fail(err, errlen, -EINVAL, "bad value for --flow-base: '%llu': %u threads x %u flows pass flow id "
				"4294967295", (unsigned long long)ss->flow_base, nthreads, sh->flows);
	}
	if (gso && sh->flows > 1) {
		return txs_fail(err, errlen, -EINVAL, "--flows %u with --gso: one flow per GSO call is not supported; "
				"use --parallel for more flows", sh->flows);
	}
	if (!sendmsg || !ss->any)
		return 0;
	if (gso && sh->n_sizes > 1) {
		return txs_fail(err, errlen, -EINVAL, "--length with several sizes and --gso: one GSO payload size per run");
	}
	if (sh->n_sizes > 1 && !txs_udp_shape_frames(sh, v4, mtu, 0)) {
		return txs_fail(err, errlen, -EINVAL, "--length sizes fragment into different numbers of frames at MTU %u: "
				"a size mix must fit the MTU, or every size make the same fragments", mtu);
	}
	/* the sendmsg path: one endpoint per (source, source port) of a thread */
	uint64_t srcs = (sh->sport.span > 1 ? sh->sport.span : 1) * (sh->src.span > 1 ? sh->src.span : 1);
	uint32_t flows = sh->flows ? sh->flows : 1;
	if (srcs > TXS_UDP_SHAPE_MAX_EPS && flows > TXS_UDP_SHAPE_MAX_EPS) {
		return txs_fail(err, errlen, -EINVAL, "datagrams over the MTU (or --gso, --unconnected) with %u flows over more "
				"than %u source (address, port) pairs per thread: not supported (the template path "
				"takes any number where a datagram fits the MTU)", flows, TXS_UDP_SHAPE_MAX_EPS);
	}
	return 0;
}

double send_shape_payload(const struct send_shape *ss, unsigned length)
{
	const struct txs_shape *sh = &ss->sh;
	if (sh->n_sizes < 2 || !ss->pat_len)
		return length;
	double sum = 0;
	for (uint32_t t = 0; t < ss->pat_len; t++)
		sum += sh->sizes[ss->pat[t]];
	return sum / ss->pat_len;
}

static void per_size(const struct send_shape *ss, const struct txs_stat_row *e, unsigned n, uint64_t *pk,
		     uint64_t *by)
{
	for (unsigned k = 0; k < n; k++)
		txs_shape_count(&ss->sh, ss->pat, ss->pat_len, e[k].packets + e[k].drops, pk, by);
}

void send_shape_json(struct txs_json *j, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n)
{
	txs_json_u64(j, "flows_per_thread", ss->sh.flows ? ss->sh.flows : 1);
	txs_json_u64(j, "flow_base", ss->flow_base);
	if (ss->sh.n_sizes < 2)
		return;
	uint64_t pk[TXS_SHAPE_MAX_SIZES] = { 0 }, by[TXS_SHAPE_MAX_SIZES] = { 0 };
	per_size(ss, e, n, pk, by);
	txs_json_arr_open(j, "sizes");
	for (unsigned s = 0; s < ss->sh.n_sizes; s++) {
		txs_json_obj_open(j, NULL);
		txs_json_u64(j, "payload", ss->sh.sizes[s]);
		txs_json_u64(j, "weight", ss->sh.weights[s]);
		txs_json_u64(j, "datagrams", pk[s]);
		txs_json_u64(j, "payload_bytes", by[s]);
		txs_json_obj_close(j);
	}
	txs_json_arr_close(j);
}

void send_shape_text(FILE *f, const struct send_shape *ss, const struct txs_stat_row *e, unsigned n)
{
	if (ss->sh.n_sizes < 2)
		return;
	uint64_t pk[TXS_SHAPE_MAX_SIZES] = { 0 }, by[TXS_SHAPE_MAX_SIZES] = { 0 };
	per_size(ss, e, n, pk, by);
	fprintf(f, "sizes (payload bytes: datagrams made, payload bytes):");
	for (unsigned s = 0; s < ss->sh.n_sizes; s++)
		fprintf(f, "%s %u: %llu, %llu", s ? ";" : "", ss->sh.sizes[s], (unsigned long long)pk[s],
			(unsigned long long)by[s]);
	fputc('\n', f);
}

void send_shape_free(struct send_shape *ss)
{
	free(ss->pat);
	ss->pat = NULL;
}
