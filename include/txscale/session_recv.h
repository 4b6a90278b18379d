/* SPDX-License-Identifier: MIT */
#ifndef TXSCALE_SESSION_RECV_H
#define TXSCALE_SESSION_RECV_H
#endif
