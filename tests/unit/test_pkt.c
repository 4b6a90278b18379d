/* SPDX-License-Identifier: MIT */
/* lib/pkt: checksums against known vectors and a naive reference, template
 * patching against full recomputation, payload header, parser rejection. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <txscale/pkt.h>
#include "test_frame.h"
#include "test_util.h"

/* Reference: RFC 1071 the slow way, big-endian 16-bit words. */
static uint16_t ref_sum(const uint8_t *p, size_t n, uint32_t init)
{
	uint64_t s = init;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void rfc1071_example(void **st)
{
	(void)st;
	/* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 */
	const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t s = txs_csum_fold16(txs_csum_partial(b, sizeof(b), 0));
	assert_int_equal(ntohs(s), 0xddf2);
	assert_int_equal(ntohs(txs_csum_finish(txs_csum_partial(b, sizeof(b), 0))), 0x220d);
}

static void real_ipv4_header(void **st)
{
	(void)st;
	/* a captured IPv4 header (192.168.0.1 -> 192.168.0.199, UDP), checksum b861 */
	uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			  0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	assert_int_equal(txs_csum_fold16(txs_csum_partial(h, 20, 0)), 0xffff);
	h[10] = h[11] = 0;
	uint16_t c = txs_ipv4_csum((struct txs_ipv4_hdr *)h);
	assert_int_equal(ntohs(c), 0xb861);
}

/* Two datagrams captured with tshark on lo (Linux 6.18, Python sendto()).
 * The IPv4 header checksum is the kernel's; lo leaves UDP checksums
 * CHECKSUM_PARTIAL, so the UDP field holds the value Wireshark 4.0 computes
 * for it (0x58d7 / 0x9c25): an oracle we did not write. */
static const uint8_t cap_v4[] = {
	0x45, 0x00, 0x00, 0x2f, 0x5b, 0x54, 0x40, 0x00, 0x40, 0x11, 0xe1, 0x67, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00,
	0x00, 0x01, 0xe2, 0x69, 0x14, 0xe9, 0x00, 0x1b, 0x58, 0xd7, 't', 'x', 's', 'c', 'a', 'l', 'e', ' ',
	'c', 'a', 'p', 't', 'u', 'r', 'e', 'd', ' ', 'v', '4',
};
static const uint8_t cap_v6[] = {
	0x60, 0x0e, 0xca, 0xda, 0x00, 0x1c, 0x11, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x9a, 0xf8, 0x14, 0xea, 0x00, 0x1c, 0x9c, 0x25,
	't', 'x', 's', 'c', 'a', 'l', 'e', ' ', 'c', 'a', 'p', 't', 'u', 'r', 'e', 'd', ' ', 'v', '6', '!',
};

static void real_udp_packets(void **st)
{
	(void)st;
	struct txs_ipv4_hdr ip;
	memcpy(&ip, cap_v4, 20);
	uint16_t stored = ip.check;
	ip.check = 0;
	assert_int_equal(txs_ipv4_csum(&ip), stored);
	uint8_t u[64];
	memcpy(u, cap_v4 + 20, sizeof(cap_v4) - 20);
	u[6] = u[7] = 0;
	assert_int_equal(ntohs(txs_udp4_csum(&ip, u, sizeof(cap_v4) - 20)), 0x58d7);
	struct txs_pkt_info info;
	assert_int_equal(txs_parse(cap_v4, sizeof(cap_v4), TXS_L2_NONE, &info), TXS_PERR_OK);
	assert_int_equal(info.sport, 0xe269);
	assert_int_equal(info.dport, 5353);
	assert_int_equal(info.payload_len, 19);
	assert_int_equal(info.ip_id, 0x5b54);
	assert_true(info.df);
	assert_memory_equal(info.payload, "txscale captured v4", 19);

	struct txs_ipv6_hdr ip6;
	memcpy(&ip6, cap_v6, 40);
	memcpy(u, cap_v6 + 40, sizeof(cap_v6) - 40);
	u[6] = u[7] = 0;
	assert_int_equal(ntohs(txs_udp6_csum(&ip6, u, sizeof(cap_v6) - 40)), 0x9c25);
	assert_int_equal(txs_parse(cap_v6, sizeof(cap_v6), TXS_L2_NONE, &info), TXS_PERR_OK);
	assert_int_equal(info.family, AF_INET6);
	assert_int_equal(info.dport, 5354);
	assert_int_equal(info.ttl, 64);
	assert_int_equal(info.payload_len, 20);
}

static void partial_matches_reference(void **st)
{
	(void)st;
	uint64_t seed = 42;
	uint8_t buf[2100];
	for (int iter = 0; iter < 20000; iter++) {
		size_t off = t_rand(&seed) % 16, len = t_rand(&seed) % 2048;
		for (size_t i = 0; i < len; i++)
			buf[off + i] = (uint8_t)t_rand(&seed);
		uint16_t ours = ntohs(txs_csum_fold16(txs_csum_partial(buf + off, len, 0)));
		assert_int_equal(ours, ref_sum(buf + off, len, 0));
	}
	/* all-ones data: end-around carries everywhere */
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(ntohs(txs_csum_fold16(txs_csum_partial(buf, 2048, 0))), ref_sum(buf, 2048, 0));
}

/* The IPv4 header checksum of h computed from scratch (its field zeroed). */
static uint16_t full_csum(uint8_t *h)
{
	h[10] = h[11] = 0;
	return txs_ipv4_csum((struct txs_ipv4_hdr *)h);
}

/* a and b equal as ones'-complement values: RFC 1624's eqn. 3 never yields
 * 0x0000 where a full sum gives 0xffff (both are -0). */
static bool csum_same(uint16_t a, uint16_t b)
{
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

static void incremental_update(void **st)
{
	(void)st;
	uint64_t seed = 7;
	uint8_t h[20];
	for (int iter = 0; iter < 10000; iter++) {
		for (int i = 0; i < 20; i++)
			h[i] = (uint8_t)t_rand(&seed);
		h[0] = 0x45;
		uint16_t c = full_csum(h);
		memcpy(h + 10, &c, 2);
		uint16_t old, nw = (uint16_t)t_rand(&seed);
		memcpy(&old, h + 4, 2);
		memcpy(h + 4, &nw, 2);
		uint16_t inc = txs_csum_update16(c, old, nw);
		uint16_t full = full_csum(h);
		assert_true(csum_same(inc, full));
		/* 32-bit variant on the address field */
		memcpy(h + 10, &full, 2);
		uint32_t oa, na = (uint32_t)t_rand(&seed);
		memcpy(&oa, h + 12, 4);
		memcpy(h + 12, &na, 4);
		uint16_t inc32 = txs_csum_update32(full, oa, na);
		full = full_csum(h);
		assert_true(csum_same(inc32, full));
	}
}

static void random_spec(uint64_t *seed, struct txs_flow_spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	bool v6 = t_rand(seed) & 1;
	sp->src.family = sp->dst.family = v6 ? AF_INET6 : AF_INET;
	for (int i = 0; i < 16; i++) {
		sp->src.bytes[i] = (uint8_t)t_rand(seed);
		sp->dst.bytes[i] = (uint8_t)t_rand(seed);
	}
	sp->sport = (uint16_t)t_rand(seed);
	sp->dport = (uint16_t)t_rand(seed);
	unsigned r = t_rand(seed) % 10;
	sp->payload_len = r < 3 ? (uint32_t)(t_rand(seed) % 32) : (uint32_t)(t_rand(seed) % 1500);
	sp->tos = (uint8_t)t_rand(seed);
	sp->ttl = (uint8_t)t_rand(seed);
	sp->df = t_rand(seed) & 1;
	sp->no_udp_csum = !v6 && (t_rand(seed) % 8 == 0);
	sp->flow_id = (uint32_t)t_rand(seed);
}

/* Recompute every checksum of a frame from scratch with the slow reference. */
static void check_frame_from_scratch(const uint8_t *f, const struct txs_tmpl *t)
{
	const uint8_t *ip = f + t->l3_off, *u = f + t->l4_off;
	size_t ulen = TXS_UDP_HLEN + t->payload_len;
	uint16_t ucheck = (uint16_t)(u[6] << 8 | u[7]);
	uint32_t ps;
	if (t->family == AF_INET) {
		assert_int_equal(ref_sum(ip, 20, 0), 0xffff);
		uint8_t p[12];
		memcpy(p, ip + 12, 8);
		p[8] = 0;
		p[9] = 17;
		p[10] = (uint8_t)(ulen >> 8);
		p[11] = (uint8_t)ulen;
		ps = ref_sum(p, 12, 0);
	} else {
		uint8_t p[40];
		memcpy(p, ip + 8, 32);
		memset(p + 32, 0, 8);
		p[34] = (uint8_t)(ulen >> 8);
		p[35] = (uint8_t)ulen;
		p[39] = 17;
		ps = ref_sum(p, 40, 0);
	}
	if (!t->udp_csum) {
		assert_int_equal(ucheck, 0);
		return;
	}
	assert_int_not_equal(ucheck, 0);
	assert_int_equal(ref_sum(u, ulen, ps), 0xffff);
}

static void template_patch_vs_recompute(void **st)
{
	(void)st;
	uint64_t seed = 1234;
	static uint8_t buf[2048];
	for (int iter = 0; iter < 5000; iter++) {
		struct txs_flow_spec sp;
		random_spec(&seed, &sp);
		struct txs_tmpl t;
		assert_int_equal(txs_tmpl_build(&t, &sp), 0);
		for (int k = 0; k < 4; k++) {
			uint16_t id = (uint16_t)t_rand(&seed);
			uint64_t seq = t_rand(&seed), ts = t_rand(&seed);
			uint32_t len = txs_tmpl_patch(&t, buf, id, seq, ts);
			assert_int_equal(len, t.wire_len);
			assert_true(len >= TXS_ETH_MIN_FRAME);
			check_frame_from_scratch(buf, &t);
			struct txs_pkt_info info;
			assert_int_equal(txs_parse(buf, len, TXS_L2_ETH, &info), TXS_PERR_OK);
			assert_int_equal(info.family, sp.dst.family);
			assert_int_equal(info.sport, sp.sport);
			assert_int_equal(info.dport, sp.dport);
			assert_int_equal(info.payload_len, sp.payload_len);
			assert_int_equal(info.tos, sp.tos);
			assert_int_equal(info.ttl, sp.ttl ? sp.ttl : 64);
			assert_int_equal(info.udp_csum_present, !sp.no_udp_csum);
			if (sp.dst.family == AF_INET) {
				assert_int_equal(info.ip_id, id);
				assert_int_equal(info.df, sp.df);
			}
			struct txs_ph ph;
			enum txs_ph_kind kind = txs_ph_read(info.payload, info.payload_len, &ph);
			assert_int_equal(kind, txs_ph_kind_for(sp.payload_len));
			if (kind == TXS_PH_FULL) {
				assert_true(ph.seq == seq);
				assert_true(ph.flow == sp.flow_id);
			} else if (kind == TXS_PH_COMPACT) {
				assert_true(ph.seq == (uint32_t)seq);
				assert_true(ph.flow == (uint16_t)sp.flow_id);
			}
			if (kind != TXS_PH_NONE)
				assert_true(ph.ts_ns == ts);
			/* fill pattern after the header */
			for (size_t i = txs_ph_len(kind); i < info.payload_len; i++)
				assert_int_equal(info.payload[i], (uint8_t)i);
		}
		txs_tmpl_free(&t);
	}
}

static void template_rejects(void **st)
{
	(void)st;
	struct txs_flow_spec sp = { 0 };
	struct txs_tmpl t;
	txs_addr_parse(&sp.src, "198.18.0.1");
	txs_addr_parse(&sp.dst, "2001:2::1");
	assert_int_equal(txs_tmpl_build(&t, &sp), -EINVAL);
	txs_addr_parse(&sp.dst, "198.18.0.2");
	sp.payload_len = 65508;
	assert_int_equal(txs_tmpl_build(&t, &sp), -EMSGSIZE);
	sp.payload_len = 65507;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	txs_tmpl_free(&t);
	txs_addr_parse(&sp.src, "2001:2::1");
	txs_addr_parse(&sp.dst, "2001:2::2");
	sp.payload_len = 65527;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	txs_tmpl_free(&t);
	sp.payload_len = 65528;
	assert_int_equal(txs_tmpl_build(&t, &sp), -EMSGSIZE);
	sp.payload_len = 10;
	sp.no_udp_csum = true;
	assert_int_equal(txs_tmpl_build(&t, &sp), -EINVAL);
}

static void make_frame(uint8_t *buf, uint32_t *len, bool v6, uint32_t plen)
{
	struct txs_flow_spec sp = t_flow_spec(v6, 1000, 2000, plen);
	struct txs_tmpl t;
	assert_int_equal(txs_tmpl_build(&t, &sp), 0);
	txs_tmpl_patch(&t, buf, 7, 9, 11);
	*len = t.frame_len;
	txs_tmpl_free(&t);
}

static void parser_rejects(void **st)
{
	(void)st;
	uint8_t buf[2048], cp[2048];
	struct txs_pkt_info info;
	for (int v6 = 0; v6 <= 1; v6++) {
		uint32_t len;
		make_frame(buf, &len, v6, 100);
		assert_int_equal(txs_parse(buf, len, TXS_L2_ETH, &info), TXS_PERR_OK);
		/* every truncation fails, and never reads past the end (ASan checks) */
		for (uint32_t l = 0; l < len; l++) {
			uint8_t *heap = malloc(l ? l : 1);
			memcpy(heap, buf, l);
			assert_int_not_equal(txs_parse(heap, l, TXS_L2_ETH, &info), TXS_PERR_OK);
			free(heap);
		}
		/* every single-bit flip in IP/UDP headers or payload is caught or
		 * changes a field we report */
		for (uint32_t i = 14; i < len; i++) {
			memcpy(cp, buf, len);
			cp[i] ^= 0x10;
			enum txs_perr e = txs_parse(cp, len, TXS_L2_ETH, &info);
			if (e == TXS_PERR_OK) {
				/* only fields no checksum covers may flip silently: IPv6
				 * traffic class / flow label and hop limit; IPv4 has a
				 * header checksum, so there nothing passes */
				assert_true(v6 && (i - 14 < 4 || i - 14 == 7));
			}
		}
		/* wrong ethertype */
		memcpy(cp, buf, len);
		cp[12] = 0x08;
		cp[13] = 0x06;
		assert_int_equal(txs_parse(cp, len, TXS_L2_ETH, &info), TXS_PERR_NOT_IP);
		/* trailing bytes (Ethernet padding) are allowed */
		assert_int_equal(txs_parse(buf, len + 10 > sizeof(buf) ? len : len + 10, TXS_L2_ETH, &info),
				 TXS_PERR_OK);
	}
	/* IPv4: bad IHL, UDP length mismatch */
	uint32_t len;
	make_frame(buf, &len, false, 20);
	memcpy(cp, buf, len);
	cp[14] = 0x44;
	assert_int_equal(txs_parse(cp, len, TXS_L2_ETH, &info), TXS_PERR_BAD_HDR);
	/* IPv6 with UDP checksum zero is invalid */
	make_frame(buf, &len, true, 20);
	memcpy(cp, buf, len);
	cp[14 + 40 + 6] = cp[14 + 40 + 7] = 0;
	assert_int_equal(txs_parse(cp, len, TXS_L2_ETH, &info), TXS_PERR_UDP_CSUM);
	/* an IPv4 fragment is reported as such */
	make_frame(buf, &len, false, 20);
	memcpy(cp, buf, len);
	struct txs_ipv4_hdr *ip = (struct txs_ipv4_hdr *)(cp + 14);
	ip->frag_off = htons(TXS_IPV4_MF);
	ip->check = 0;
	ip->check = txs_ipv4_csum(ip);
	assert_int_equal(txs_parse(cp, len, TXS_L2_ETH, &info), TXS_PERR_FRAGMENT);
	assert_true(info.mf);
	assert_string_equal(txs_perr_str(TXS_PERR_UDP_CSUM), "udp-checksum");
}

static void payload_header_roundtrip(void **st)
{
	(void)st;
	uint8_t p[64];
	struct txs_ph in = { .kind = TXS_PH_FULL, .flow = 0xdeadbeef, .seq = 0x0102030405060708ull, .ts_ns = 99 }, out;
	txs_ph_write(p, 40, &in);
	assert_int_equal(txs_ph_read(p, 40, &out), TXS_PH_FULL);
	assert_true(out.seq == in.seq && out.flow == in.flow && out.ts_ns == 99);
	/* exact wire bytes (docs/wire-format.md) */
	const uint8_t full[24] = { 'T', 'X', 'S', 'C', 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8,
				   0, 0, 0, 0, 0, 0, 0, 99 };
	assert_memory_equal(p, full, 24);
	assert_int_equal(p[30], 30);
	in.kind = TXS_PH_COMPACT;
	txs_ph_write(p, 16, &in);
	assert_int_equal(txs_ph_read(p, 16, &out), TXS_PH_COMPACT);
	assert_true(out.seq == 0x05060708u && out.flow == 0xbeef && out.ts_ns == 99);
	assert_int_equal(txs_ph_read(p, 15, &out), TXS_PH_NONE);
	p[0] = 0;
	assert_int_equal(txs_ph_read(p, 16, &out), TXS_PH_NONE);
}

static void addr_parse(void **st)
{
	(void)st;
	struct txs_addr a;
	char b[64];
	assert_int_equal(txs_addr_parse(&a, "198.18.0.1"), 0);
	assert_int_equal(a.family, AF_INET);
	assert_int_equal(txs_addr_parse(&a, "2001:2::1"), 0);
	assert_string_equal(txs_addr_str(&a, b, sizeof(b)), "2001:2::1");
	assert_int_equal(txs_addr_parse(&a, "198.18.0.256"), -EINVAL);
	assert_int_equal(txs_addr_parse(&a, ""), -EINVAL);
	uint8_t m[6];
	assert_int_equal(txs_mac_parse(m, "02:00:00:aa:bb:cc"), 0);
	assert_int_equal(m[3], 0xaa);
	assert_int_equal(txs_mac_parse(m, "02:00:00:aa:bb"), -EINVAL);
	assert_int_equal(txs_mac_parse(m, "02:00:00:aa:bb:cc:dd"), -EINVAL);
}

T_MAIN(cmocka_unit_test(rfc1071_example),
       cmocka_unit_test(real_ipv4_header),
       cmocka_unit_test(real_udp_packets),
       cmocka_unit_test(partial_matches_reference),
       cmocka_unit_test(incremental_update),
       cmocka_unit_test(template_patch_vs_recompute),
       cmocka_unit_test(template_rejects),
       cmocka_unit_test(parser_rejects),
       cmocka_unit_test(payload_header_roundtrip),
       cmocka_unit_test(addr_parse))
