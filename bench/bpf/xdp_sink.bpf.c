/* SPDX-License-Identifier: GPL-2.0 */
/* bench/peers --sink xdp: an XDP program for the receiver's veth that drops
 * UDP datagrams to the benchmark ports (5300-5399) before the kernel's stack
 * sees them, and passes everything else (the tools' TCP control connections,
 * ND, ...). With the stack sink every datagram still costs a route lookup
 * and an uncached route entry on the receiver, which on a veth runs on the
 * sender's CPU and dilutes every ratio; this sink leaves the senders' own
 * cost. Built by bench/peers with clang -target bpf; not part of libtxscale
 * (kept out of the bench folder's top level, whose C files the CLI build compiles). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define PORT_LO 5300
#define PORT_HI 5399

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	const unsigned char *p = (const unsigned char *)(long)ctx->data;
	const unsigned char *end = (const unsigned char *)(long)ctx->data_end;
	if (p + 14 > end)
		return XDP_PASS;
	unsigned short type = (unsigned short)(p[12] << 8 | p[13]);
	const unsigned char *l4;
	if (type == ETH_P_IP) {
		if (p + 14 + 20 > end || p[14 + 9] != IPPROTO_UDP)
			return XDP_PASS;
		/* fragments after the first carry no UDP header */
		if (((p[14 + 6] & 0x1f) | p[14 + 7]) != 0)
			return XDP_PASS;
		l4 = p + 14 + (p[14] & 0x0f) * 4;
	} else if (type == ETH_P_IPV6) {
		if (p + 14 + 40 > end || p[14 + 6] != IPPROTO_UDP)
			return XDP_PASS;
		l4 = p + 14 + 40;
	} else {
		return XDP_PASS;
	}
	if (l4 + 8 > end)
		return XDP_PASS;
	unsigned short dport = (unsigned short)(l4[2] << 8 | l4[3]);
	return dport >= PORT_LO && dport <= PORT_HI ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "GPL";
