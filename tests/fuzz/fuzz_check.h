/* SPDX-License-Identifier: MIT */
/* The fuzz targets' property check: CHECK(c) aborts, naming the target, the
 * place and the condition, when c does not hold. */
#ifndef TXS_FUZZ_CHECK_H
#define TXS_FUZZ_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints "fuzz_X: FILE:LINE: COND" (fuzz_X: the file's name less ".c") and
 * aborts. */
static inline _Noreturn void fuzz_fail(const char *file, int line, const char *cond)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	const char *dot = strrchr(base, '.');
	int len = dot ? (int)(dot - base) : (int)strlen(base);
	fprintf(stderr, "%.*s: %s:%d: %s\n", len, base, file, line, cond);
	abort();
}

#define CHECK(c)                                              \
	do {                                                  \
		if (!(c))                                     \
			fuzz_fail(__FILE__, __LINE__, #c);    \
	} while (0)
#endif
