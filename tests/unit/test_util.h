/* SPDX-License-Identifier: MIT */
/* Shared helpers for the cmocka unit tests. */
#ifndef TXS_TEST_UTIL_H
#define TXS_TEST_UTIL_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* splitmix64: deterministic, seeded test randomness */
static inline uint64_t t_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Exit 77 with a reason: CTest reports the test as skipped. */
#define T_SKIP(...) do { fprintf(stderr, "SKIP: " __VA_ARGS__); fputc('\n', stderr); exit(77); } while (0)
#endif
