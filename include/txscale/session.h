/* SPDX-License-Identifier: MIT */
/* Sessions as library objects: a send session (session_send.h), a receive
 * session (session_recv.h) and the no-drop-rate search (ndr.h). Each is one
 * validated config struct, open, run (a stop hook, an interval callback),
 * and a result with its JSON and text writers. The library never prints or
 * exits: the CLI parses options, fills a config, runs it and prints. */
#ifndef TXSCALE_SESSION_H
#define TXSCALE_SESSION_H
#include <txscale/session_send.h>
#include <txscale/session_recv.h>
#include <txscale/ndr.h>
#endif
