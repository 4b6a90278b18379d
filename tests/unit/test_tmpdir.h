/* SPDX-License-Identifier: MIT */
/* A temporary directory for a test program's files: t_tmpdir_setup and
 * t_tmpdir_teardown are the group setup and teardown for
 * cmocka_run_group_tests (made under /tmp, named after T_TMPDIR_NAME where
 * the test defines it before including this; removed with what it holds),
 * t_tmppath names a file in it. */
#ifndef TXS_TEST_TMPDIR_H
#define TXS_TEST_TMPDIR_H
#include <stdio.h>
#include <stdlib.h>
#include "test_util.h"

#ifndef T_TMPDIR_NAME
#define T_TMPDIR_NAME "txs_unit"
#endif

static char t_tmpdir[64];

static inline int t_tmpdir_setup(void **st)
{
	(void)st;
	snprintf(t_tmpdir, sizeof(t_tmpdir), "/tmp/%s.XXXXXX", T_TMPDIR_NAME);
	return mkdtemp(t_tmpdir) ? 0 : -1;
}

static inline int t_tmpdir_teardown(void **st)
{
	(void)st;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline void t_tmppath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", t_tmpdir, name);
}
#endif
