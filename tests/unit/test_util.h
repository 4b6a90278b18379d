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

/* A test program's main: runs the listed cmocka tests (cmocka_unit_test(fn),
 * ...) as one group. T_RUN is the same as a statement, for a main that
 * first decides whether it can run at all (T_SKIP). */
#define T_RUN(...)                                                             \
	do {                                                                   \
		const struct CMUnitTest t_tests_[] = { __VA_ARGS__ };          \
		return cmocka_run_group_tests(t_tests_, NULL, NULL);           \
	} while (0)
#define T_MAIN(...)                                                            \
	int main(void)                                                         \
	{                                                                      \
		T_RUN(__VA_ARGS__);                                            \
	}

/* Exit 77 with a reason: CTest reports the test as skipped. */
#define T_SKIP(...) do { fprintf(stderr, "SKIP: " __VA_ARGS__); fputc('\n', stderr); exit(77); } while (0)
#endif
