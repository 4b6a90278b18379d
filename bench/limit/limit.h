/* SPDX-License-Identifier: MIT */
/* The limit references of bench/peers: minimal loops doing only the
 * syscalls of one txscale device, with no per-packet work of their own (one
 * prebuilt 16-byte datagram, sent again and again). Shared: arguments, the
 * clock, the frame and the one-line JSON result. Not part of libtxscale. */
#ifndef TXS_BENCH_LIMIT_H
#define TXS_BENCH_LIMIT_H
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIMIT_PAYLOAD 16
#define LIMIT_FRAME (14 + 20 + 8 + LIMIT_PAYLOAD) /* 58: padded to 60 */

static inline double limit_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int limit_mac(const char *s, uint8_t m[6])
{
	unsigned v[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
	return 0;
}

static inline uint16_t limit_csum(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* A 60-byte Ethernet frame: IPv4 (DF, TTL 64), UDP with its checksum, 16
 * zero payload bytes, zero padding. */
static inline void limit_frame(uint8_t f[60], const uint8_t src_mac[6], const uint8_t dst_mac[6], struct in_addr src,
			       struct in_addr dst, uint16_t sport, uint16_t dport)
{
	memset(f, 0, 60);
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14, *udp = ip + 20;
	ip[0] = 0x45;
	ip[2] = 0;
	ip[3] = 20 + 8 + LIMIT_PAYLOAD;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	uint16_t c = limit_csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	udp[0] = (uint8_t)(sport >> 8);
	udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[5] = 8 + LIMIT_PAYLOAD;
	uint32_t ph = 0; /* pseudo header */
	for (int i = 12; i < 20; i += 2)
		ph += (uint32_t)ip[i] << 8 | ip[i + 1];
	ph += 17 + 8 + LIMIT_PAYLOAD;
	c = limit_csum(udp, 8 + LIMIT_PAYLOAD, ph);
	if (!c)
		c = 0xffff;
	udp[6] = (uint8_t)(c >> 8);
	udp[7] = (uint8_t)c;
}

/* argv of the frame loops: IFNAME SRC DST DST_MAC PORT SECONDS [SPORT] ...:
 * the frame from IFNAME's MAC to DST_MAC, SRC:SPORT (default 40000) to
 * DST:PORT. 0, or 2 with one line on stderr. */
static inline int limit_frame_args(const char *prog, int argc, char **argv, uint8_t frame[60])
{
	uint8_t smac[6], dmac[6];
	struct in_addr src, dst;
	char path[128], buf[64];
	if (argc < 7) {
		fprintf(stderr, "usage: %s IFNAME SRC DST DST_MAC PORT SECONDS [SPORT]%s\n", prog,
			strstr(prog, "xsk") ? " [QUEUE]" : "");
		return 2;
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", argv[1]);
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, sizeof(buf), f) && !limit_mac(buf, smac) && !limit_mac(argv[4], dmac) &&
		 inet_pton(AF_INET, argv[2], &src) == 1 && inet_pton(AF_INET, argv[3], &dst) == 1;
	if (f)
		fclose(f);
	if (!ok) {
		fprintf(stderr, "%s: bad interface, address or MAC\n", prog);
		return 2;
	}
	limit_frame(frame, smac, dmac, src, dst, argc > 7 ? (uint16_t)atoi(argv[7]) : 40000, (uint16_t)atoi(argv[5]));
	return 0;
}

static inline void limit_report(const char *what, uint64_t sent, double secs)
{
	printf("{\"limit\":\"%s\",\"sent\":%llu,\"seconds\":%.6f,\"pps\":%.0f}\n", what, (unsigned long long)sent, secs,
	       secs > 0 ? (double)sent / secs : 0);
}
#endif
