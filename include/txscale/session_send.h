/* SPDX-License-Identifier: MIT */
#ifndef TXSCALE_SESSION_SEND_H
#define TXSCALE_SESSION_SEND_H
#endif
