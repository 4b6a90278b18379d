/* SPDX-License-Identifier: MIT */
/* The libtxscale version a program was built against (these macros) and the
 * one it runs against (txs_version_*() in txscale/common.h). The build reads
 * its version from this file (CMakeLists.txt): it is the one place that
 * names it. A program may test at compile time:
 *
 *   #if TXS_VERSION_CHECK(0, 2, 0)   ... API of 0.2.0 and later ...
 */
#ifndef TXSCALE_VERSION_H
#define TXSCALE_VERSION_H

#define TXS_VERSION_MAJOR 0
#define TXS_VERSION_MINOR 1
#define TXS_VERSION_PATCH 0

#define TXS_VERSION_STR_(x) #x
#define TXS_VERSION_STR(x) TXS_VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH" */
#define TXS_VERSION_STRING                                                                                   \
	TXS_VERSION_STR(TXS_VERSION_MAJOR) "." TXS_VERSION_STR(TXS_VERSION_MINOR) "." TXS_VERSION_STR(TXS_VERSION_PATCH)
/* One number, MAJOR * 10000 + MINOR * 100 + PATCH (each below 100). */
#define TXS_VERSION_NUMBER (TXS_VERSION_MAJOR * 10000 + TXS_VERSION_MINOR * 100 + TXS_VERSION_PATCH)
/* True when the headers are at least MAJOR.MINOR.PATCH. */
#define TXS_VERSION_CHECK(major, minor, patch) (TXS_VERSION_NUMBER >= (major) * 10000 + (minor) * 100 + (patch))

#endif
