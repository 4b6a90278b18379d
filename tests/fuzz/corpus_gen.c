/* SPDX-License-Identifier: MIT */
/* Writes the seed corpora of fuzz_parse and fuzz_pcap (committed under
 * tests/fuzz/corpus/): frames from the template builder, damaged copies,
 * payloads, sender summaries from the real reporter, pcap files of several
 * link types and byte orders, cut and corrupt ones, a small pcapng. Not part
 * of the build; regenerate with:
 *   cc -I include tests/fuzz/corpus_gen.c build/libtxscale.a -lpcap -lm -o /tmp/corpus_gen
 *   /tmp/corpus_gen tests/fuzz/corpus */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>
#include <txscale/stats.h>
#include "../unit/test_frame.h"

static const char *root;

static void put(const char *target, const char *name, const uint8_t *d, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s", root, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(d, 1, n, f) != n) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* fuzz_parse input: mode byte + data */
static void put_parse(const char *name, unsigned mode, const uint8_t *d, size_t n)
{
	uint8_t *b = malloc(n + 1);
	b[0] = (uint8_t)mode;
	memcpy(b + 1, d, n);
	put("fuzz_parse", name, b, n + 1);
	free(b);
}

static uint32_t frame(uint8_t *buf, int v6, unsigned plen, uint32_t flow, uint64_t seq, bool nocsum)
{
	struct txs_flow_spec sp = t_flow_spec(v6, 40000, 5201, plen);
	sp.flow_id = flow;
	sp.no_udp_csum = nocsum;
	sp.tos = 0x10;
	struct txs_tmpl t;
	if (txs_tmpl_build(&t, &sp) < 0)
		exit(1);
	uint32_t n = txs_tmpl_patch(&t, buf, (uint16_t)(seq * 7), seq, 1700000000000000000ull + seq);
	txs_tmpl_free(&t);
	return n;
}

static void fix_ip4_csum(uint8_t *ip)
{
	ip[10] = ip[11] = 0;
	uint16_t c = txs_ipv4_csum((struct txs_ipv4_hdr *)ip);
	memcpy(ip + 10, &c, 2);
}

static void parse_corpus(void)
{
	uint8_t b[2048];
	char name[64];
	const unsigned lens[] = { 0, 8, 15, 16, 20, 23, 24, 64, 1400 };
	for (int v6 = 0; v6 <= 1; v6++)
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			uint32_t n = frame(b, v6, lens[i], (uint32_t)i, i * 1000, false);
			snprintf(name, sizeof(name), "eth-v%d-len%u", v6 ? 6 : 4, lens[i]);
			put_parse(name, 0, b, n);
			snprintf(name, sizeof(name), "ip-v%d-len%u", v6 ? 6 : 4, lens[i]);
			uint32_t ipn = n - TXS_ETH_HLEN;
			if (n == TXS_ETH_MIN_FRAME) /* strip runt padding */
				ipn = (v6 ? TXS_IPV6_HLEN : TXS_IPV4_HLEN) + TXS_UDP_HLEN + lens[i];
			put_parse(name, 1, b + TXS_ETH_HLEN, ipn);
			snprintf(name, sizeof(name), "eth-v%d-len%u-cut", v6 ? 6 : 4, lens[i]);
			put_parse(name, 0, b, n / 2);
			snprintf(name, sizeof(name), "eth-v%d-len%u-badsum", v6 ? 6 : 4, lens[i]);
			b[n - 1] ^= 0x5a;
			put_parse(name, 0, b, n);
		}
	uint32_t n = frame(b, 0, 32, 1, 5, true);
	put_parse("eth-v4-nocsum", 0, b, n);
	/* IPv4 fragments: first and later */
	n = frame(b, 0, 64, 2, 6, false);
	uint8_t *ip = b + TXS_ETH_HLEN;
	ip[6] = 0x20;
	fix_ip4_csum(ip);
	put_parse("eth-v4-frag-first", 0, b, n);
	ip[6] = 0x00;
	ip[7] = 0x08;
	fix_ip4_csum(ip);
	put_parse("eth-v4-frag-later", 0, b, n);
	/* IPv4 with options (IHL 6) and a TCP datagram */
	n = frame(b, 0, 24, 3, 7, false);
	ip[0] = 0x46;
	fix_ip4_csum(ip);
	put_parse("eth-v4-ihl6", 0, b, n);
	n = frame(b, 0, 24, 3, 7, false);
	ip[9] = 6;
	fix_ip4_csum(ip);
	put_parse("eth-v4-tcp", 0, b, n);
	/* IPv6 with a fragment header: an atomic fragment */
	n = frame(b, 1, 24, 4, 8, false);
	uint8_t v6f[2048];
	memcpy(v6f, b, TXS_ETH_HLEN + TXS_IPV6_HLEN);
	v6f[TXS_ETH_HLEN + 6] = TXS_IPPROTO_FRAGMENT;
	uint16_t pl = (uint16_t)(txs_get_be16(b + TXS_ETH_HLEN + 4) + 8);
	txs_put_be16(v6f + TXS_ETH_HLEN + 4, pl);
	uint8_t fh[8] = { TXS_IPPROTO_UDP, 0, 0, 0, 0, 0, 0, 42 };
	memcpy(v6f + TXS_ETH_HLEN + TXS_IPV6_HLEN, fh, 8);
	memcpy(v6f + TXS_ETH_HLEN + TXS_IPV6_HLEN + 8, b + TXS_ETH_HLEN + TXS_IPV6_HLEN, n - TXS_ETH_HLEN - TXS_IPV6_HLEN);
	put_parse("eth-v6-atomic-frag", 0, v6f, n + 8);
	v6f[TXS_ETH_HLEN + TXS_IPV6_HLEN + 3] = 1; /* M=1 */
	put_parse("eth-v6-frag", 0, v6f, n + 8);
	/* ARP, VLAN and empty */
	uint8_t arp[60] = { 0 };
	arp[12] = 0x08;
	arp[13] = 0x06;
	put_parse("eth-arp", 0, arp, sizeof(arp));
	arp[12] = 0x81;
	arp[13] = 0x00;
	put_parse("eth-vlan", 0, arp, sizeof(arp));
	put_parse("empty", 0, b, 0);
	/* payloads (mode 2) */
	uint8_t p[64];
	struct txs_ph ph = { .kind = TXS_PH_COMPACT, .flow = 1, .seq = 0xfffffffe, .ts_ns = 12345 };
	txs_ph_write(p, 16, &ph);
	put_parse("pay-compact", 2, p, 16);
	ph.kind = TXS_PH_FULL;
	ph.seq = 1ull << 40;
	txs_ph_write(p, 64, &ph);
	put_parse("pay-full", 2, p, 64);
	put_parse("pay-full-cut", 2, p, 23);
	memset(p, 0x41, 32);
	put_parse("pay-nomagic", 2, p, 32);
	put_parse("pay-short", 2, p, 5);
	/* sender summaries (mode 3), from the real reporter */
	char *s = NULL;
	size_t sl = 0;
	FILE *f = open_memstream(&s, &sl);
	int cpus[2] = { 0, 1 };
	struct txs_stat_row rows[2] = { { 1000, 64000, 2, 0 }, { 999, 63936, 0, 0 } };
	struct txs_stat_row link = { 1999, 127936, 2, 0 };
	struct txs_reporter rep = { .out = f, .json = true, .kind = "send", .n_threads = 2, .cpus = cpus, .n_links = 1 };
	txs_report_interval(&rep, 0, 1, rows, &link);
	txs_report_summary(&rep, 1, rows, &link, NULL, NULL);
	fclose(f);
	put_parse("json-send-summary", 3, (const uint8_t *)s, sl);
	free(s);
	const char *js[] = {
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":3,\"threads\":[{\"id\":2,\"packets\":3}]}",
		"{\"type\":\"summary\",\"kind\":\"send\",\"packets\":1e3}",
		"{\"a\":[1,2,{\"b\":\"\\u00e9\\n\"}],\"type\":\"summary\",\"packets\":0}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
	};
	for (size_t i = 0; i < sizeof(js) / sizeof(js[0]); i++) {
		snprintf(name, sizeof(name), "json-%zu", i);
		put_parse(name, 3, (const uint8_t *)js[i], strlen(js[i]));
	}
}

static size_t pcap_of(uint8_t *out, int v6, unsigned count, unsigned plen)
{
	uint8_t fr[2048];
	size_t off = txs_pcap_write_hdr(out, 65535);
	for (unsigned i = 0; i < count; i++) {
		uint32_t n = frame(fr, v6, plen, i % 2, i, false);
		off += txs_pcap_write_rec(out + off, fr, n, 1700000000000000000ull + i * 1000ull);
	}
	return off;
}

static void pcap_corpus(void)
{
	uint8_t *b = malloc(1 << 20), *c = malloc(1 << 20), fr[2048];
	size_t n = pcap_of(b, 0, 8, 16);
	put("fuzz_pcap", "v4-compact", b, n);
	put("fuzz_pcap", "v4-cut", b, n - 7);
	put("fuzz_pcap", "header-only", b, 24);
	put("fuzz_pcap", "header-cut", b, 20);
	memcpy(c, b, n);
	uint32_t big = 0x00100000;
	memcpy(c + 24 + 8, &big, 4); /* first record caplen absurd */
	put("fuzz_pcap", "bad-caplen", c, n);
	memcpy(c, b, n);
	uint32_t one = 1;
	memcpy(c + 24 + 12, &one, 4); /* caplen > origlen */
	put("fuzz_pcap", "caplen-gt-len", c, n);
	n = pcap_of(b, 1, 6, 40);
	put("fuzz_pcap", "v6-full", b, n);
	/* big-endian microsecond, raw IPv4 (linktype 101) */
	uint32_t gh[6] = { 0xa1b2c3d4, 0x00020004, 0, 0, 65535, 101 };
	size_t o = 0;
	for (int i = 0; i < 6; i++) {
		uint32_t v = __builtin_bswap32(gh[i]);
		if (i == 1)
			v = 0x04000200; /* major 2, minor 4 big-endian */
		memcpy(c + o, &v, 4);
		o += 4;
	}
	for (unsigned i = 0; i < 4; i++) {
		uint32_t fl = frame(fr, 0, 16, 0, i, false);
		uint32_t il = (uint32_t)(TXS_IPV4_HLEN + TXS_UDP_HLEN + 16);
		(void)fl;
		uint32_t rh[4] = { __builtin_bswap32(1700000000 + i), __builtin_bswap32(999999), __builtin_bswap32(il),
				   __builtin_bswap32(il) };
		memcpy(c + o, rh, 16);
		memcpy(c + o + 16, fr + TXS_ETH_HLEN, il);
		o += 16 + il;
	}
	put("fuzz_pcap", "be-usec-raw", c, o);
	/* Linux cooked v1 and v2, one IPv4 + one ARP each */
	for (int v = 1; v <= 2; v++) {
		uint32_t h[6] = { 0xa1b23c4d, 0x00040002, 0, 0, 65535, v == 1 ? 113u : 276u };
		memcpy(c, h, 24);
		o = 24;
		for (int k = 0; k < 2; k++) {
			uint32_t il = TXS_IPV4_HLEN + TXS_UDP_HLEN + 16, hl = v == 1 ? 16 : 20;
			frame(fr, 0, 16, 0, (uint64_t)k, false);
			uint8_t sll[20] = { 0 };
			uint16_t proto = k ? 0x0806 : 0x0800;
			txs_put_be16(sll + (v == 1 ? 14 : 0), proto);
			uint32_t rh[4] = { 5, 6, il + hl, il + hl };
			memcpy(c + o, rh, 16);
			memcpy(c + o + 16, sll, hl);
			memcpy(c + o + 16 + hl, fr + TXS_ETH_HLEN, il);
			o += 16 + hl + il;
		}
		put("fuzz_pcap", v == 1 ? "sll" : "sll2", c, o);
	}
	/* BSD loopback (linktype 0) with a host-order AF_INET */
	{
		uint32_t h[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 0 };
		memcpy(c, h, 24);
		o = 24;
		uint32_t il = TXS_IPV4_HLEN + TXS_UDP_HLEN + 16;
		frame(fr, 0, 16, 0, 0, false);
		uint32_t rh[4] = { 5, 6, il + 4, il + 4 }, af = 2;
		memcpy(c + o, rh, 16);
		memcpy(c + o + 16, &af, 4);
		memcpy(c + o + 20, fr + TXS_ETH_HLEN, il);
		o += 20 + il;
		put("fuzz_pcap", "null-loop", c, o);
	}
	/* a minimal pcapng: SHB, IDB (Ethernet), one EPB */
	{
		uint32_t fl = frame(fr, 0, 16, 0, 0, false);
		o = 0;
		uint32_t shb[7] = { 0x0a0d0d0a, 28, 0x1a2b3c4d, 0x00000001, 0xffffffff, 0xffffffff, 28 };
		memcpy(c + o, shb, 28);
		o += 28;
		uint32_t idb[5] = { 1, 20, 1 /* linktype 1, reserved 0 */, 65535, 20 };
		memcpy(c + o, idb, 20);
		o += 20;
		uint32_t pad = (4 - fl % 4) % 4, epl = 32 + fl + pad;
		uint32_t epb[7] = { 6, epl, 0, 0, 0, fl, fl };
		memcpy(c + o, epb, 28);
		memcpy(c + o + 28, fr, fl);
		memset(c + o + 28 + fl, 0, pad);
		memcpy(c + o + 28 + fl + pad, &epl, 4);
		o += epl;
		put("fuzz_pcap", "pcapng", c, o);
		put("fuzz_pcap", "pcapng-cut", c, o - 9);
	}
	put("fuzz_pcap", "not-pcap", (const uint8_t *)"GET / HTTP/1.0\r\n\r\n", 18);
	free(b);
	free(c);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: corpus_gen CORPUS_ROOT\n");
		return 2;
	}
	root = argv[1];
	parse_corpus();
	pcap_corpus();
	return 0;
}
