/* SPDX-License-Identifier: MIT */
/* SipHash-2-4 (Aumasson and Bernstein, 2012; 128-bit key, 64-bit output) is
 * libsodium's crypto_shorthash_siphash24, which writes the 64-bit result
 * little-endian. The paper's test vectors hold it in tests/unit/test_ident.c. */
#include <sodium.h>
#include <string.h>
#include "ident_priv.h"

uint64_t txs_siphash24(const uint8_t key[16], const void *msg, size_t len)
{
	uint8_t out[crypto_shorthash_siphash24_BYTES];
	crypto_shorthash_siphash24(out, msg, len, key);
	return (uint64_t)out[0] | (uint64_t)out[1] << 8 | (uint64_t)out[2] << 16 | (uint64_t)out[3] << 24 |
	       (uint64_t)out[4] << 32 | (uint64_t)out[5] << 40 | (uint64_t)out[6] << 48 | (uint64_t)out[7] << 56;
}
