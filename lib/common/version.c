/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <txscale/common.h>

TXS_API const char *txs_version(void)
{
	return TXS_VERSION;
}

TXS_API const char *txs_strerror(int err)
{
	return strerror(err < 0 ? -err : err);
}
