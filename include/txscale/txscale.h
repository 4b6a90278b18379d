/* SPDX-License-Identifier: MIT */
/* libtxscale umbrella header. */
#ifndef TXSCALE_TXSCALE_H
#define TXSCALE_TXSCALE_H
#include <txscale/common.h>
#include <txscale/pkt.h>
#include <txscale/netdev.h>
#include <txscale/json.h>
#include <txscale/stats.h>
#include <txscale/engine.h>
#include <txscale/gen.h>
#include <txscale/ident.h>
#include <txscale/linksel.h>
#include <txscale/linkmon.h>
#include <txscale/rx.h>
#include <txscale/metrics.h>
#include <txscale/udp.h>
#include <txscale/stamp.h>
#endif
