/* SPDX-License-Identifier: MIT */
/* Engine runs the tests share. */
#ifndef TXS_TEST_ENGINE_H
#define TXS_TEST_ENGINE_H
#include <txscale/engine.h>
#include "test_util.h"

/* Create, start and wait an engine on ec, then destroy it: what
 * txs_engine_wait returned. */
static inline int t_engine_run(const struct txs_engine_conf *ec)
{
	struct txs_engine *e;
	assert_int_equal(txs_engine_create(&e, ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	int rc = txs_engine_wait(e);
	txs_engine_destroy(e);
	return rc;
}

/* Create and start an engine on ec and wait for it, which must return 0:
 * the finished engine, for the caller to read and destroy. */
static inline struct txs_engine *t_engine_done(const struct txs_engine_conf *ec)
{
	struct txs_engine *e;
	assert_int_equal(txs_engine_create(&e, ec), 0);
	assert_int_equal(txs_engine_start(e), 0);
	assert_int_equal(txs_engine_wait(e), 0);
	return e;
}
#endif
