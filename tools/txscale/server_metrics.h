/* SPDX-License-Identifier: MIT */
/* txscale server --metrics / --metrics-file (docs/metrics.md): one
 * collector per session, labelled session and client, relaying what the
 * session's receiver and sender write to their own metrics files, and the
 * server's own counters. */
#ifndef TXS_SERVER_METRICS_H
#define TXS_SERVER_METRICS_H
#include <stdbool.h>
#include <txscale/metrics.h>
#include "metrics_cli.h"

#define SMET_KEEP_S 60.0 /* a finished session's series stay this long */

enum smet_refused { SMET_REF_SESSIONS = 0, SMET_REF_PER_CLIENT, SMET_REF_N };

struct smet_sess;
struct smet {
	struct mcli mc;
	char dir[256]; /* the sessions' metrics files: N-recv.prom, N-send.prom, N-iperf3.prom */
	struct smet_sess *list; /* registered sessions, newest first */
	unsigned keep_max;      /* finished sessions kept at most */
	_Atomic unsigned long long total, refused[SMET_REF_N];
	_Atomic unsigned active;
};

/* 0 (also without metrics: then sm->mc.m is NULL), 2 bad value, 1 error (printed). */
int smet_start(struct smet *sm, const struct mcli_opts *o, unsigned max_sessions);
static inline bool smet_on(const struct smet *sm)
{
	return sm->mc.m != NULL;
}
/* A session's file of one kind ("recv", "send", "iperf3") into out ("" without metrics). */
void smet_path(const struct smet *sm, unsigned id, const char *kind, char *out, size_t len);
void smet_begin(struct smet *sm, unsigned id, const char *client);
void smet_end(struct smet *sm, unsigned id);
void smet_refused(struct smet *sm, enum smet_refused why);
/* In the accept loop: the file on its period, finished sessions dropped after SMET_KEEP_S. */
void smet_tick(struct smet *sm, double elapsed);
void smet_stop(struct smet *sm);
#endif
