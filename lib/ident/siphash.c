/* SPDX-License-Identifier: MIT */
/* SipHash-2-4 (Aumasson and Bernstein, 2012): 2 compression rounds per
 * 8-byte word, 4 finalisation rounds, 128-bit key, 64-bit output. Written
 * from the paper's description; checked against its test vectors in
 * tests/unit/test_ident.c. Little-endian word loads regardless of host. */
#include "ident_priv.h"

static inline uint64_t le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* One SipRound over the four state words. */
#define SIPROUND(v0, v1, v2, v3)                                       \
	do {                                                           \
		v0 += v1;                                              \
		v1 = ROTL(v1, 13);                                     \
		v1 ^= v0;                                              \
		v0 = ROTL(v0, 32);                                     \
		v2 += v3;                                              \
		v3 = ROTL(v3, 16);                                     \
		v3 ^= v2;                                              \
		v0 += v3;                                              \
		v3 = ROTL(v3, 21);                                     \
		v3 ^= v0;                                              \
		v2 += v1;                                              \
		v1 = ROTL(v1, 17);                                     \
		v1 ^= v2;                                              \
		v2 = ROTL(v2, 32);                                     \
	} while (0)

uint64_t txs_siphash24(const uint8_t key[16], const void *msg, size_t len)
{
	const uint8_t *m = msg;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	/* "somepseudorandomlygeneratedbytes" */
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = k1 ^ 0x7465646279746573ull;

	size_t full = len & ~(size_t)7;
	for (size_t i = 0; i < full; i += 8) {
		uint64_t w = le64(m + i);
		v3 ^= w;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= w;
	}
	/* last word: the remaining 0..7 bytes, length mod 256 in the top byte */
	uint64_t last = (uint64_t)(len & 0xff) << 56;
	for (size_t i = 0; i < (len & 7); i++)
		last |= (uint64_t)m[full + i] << (8 * i);
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;

	v2 ^= 0xff;
	for (int r = 0; r < 4; r++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
