/* SPDX-License-Identifier: MIT */
/* libtxscale umbrella header: everything public, the sessions included.
 *
 *   #include <txscale/txscale.h>      (pkg-config --cflags --libs txscale)
 *
 * The sessions (txscale/session.h: send, receive, the no-drop-rate search)
 * are the library's front door: a config struct, a check, open, run, a
 * result and its writers; and the JSON session boundary
 * (txscale/session_json.h: txs_session_new/start/stats_json/stop/wait/free),
 * the stable way in for programs and other languages. The version the headers are: TXS_VERSION_MAJOR,
 * _MINOR, _PATCH (txscale/version.h); the library's: txs_version_*(). */
#ifndef TXSCALE_TXSCALE_H
#define TXSCALE_TXSCALE_H
#include <txscale/version.h>
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
#include <txscale/session.h>
#include <txscale/session_json.h>
#include <txscale/stamp.h>
#endif
