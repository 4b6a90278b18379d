/* SPDX-License-Identifier: MIT */
/* txscale ndr: the highest rate at which `txscale recv` counts no loss
 * (docs/ndr.md). The options are the library's table (lib/session/
 * opts_ndr.c, shared with the JSON "ndr" session) plus the CLI's -J and
 * --remote; the search, its trials (this very binary run twice as child
 * processes, a receiver and then a sender, optionally each in a network
 * namespace via `ip netns exec`) and its checks are lib/session/ndr_sess.c;
 * this file prints what its hooks hand over and, with --remote, puts the
 * receiver behind a txscale server (client.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "cli.h"
#include <txscale/ndr.h>
#include "opt.h"
#include "session/ndr_sess.h"
#include "ctl_cli.h"

#define MEASURE_MAX_S 1.0    /* the unlimited trial without --hi */

struct ndr_cfg {
	struct txs_ndr_args a;
	bool json;
	struct ctl_ndr_opts remote; /* --remote HOST: the receiver is a txscale server (client.c) */
};

#define O(f) offsetof(struct ndr_cfg, f)
static const struct txs_opt ndr_opts[] = {
	OPT_INCLUDE_TABLE(txs_ndr_opts),
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines: one per trial, then the result (docs/ndr.md)" },
	CTL_NDR_OPTS(O(remote)),
	OPT_END
};
#undef O

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* --remote: client.c's receiver behind the runner's hooks */
static int remote_begin(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen)
{
	return ctl_ndr_recv_begin(arg, port, dev, secs, err, errlen);
}

static int remote_end(void *arg, const char *sj, const char *rj, char *err, size_t errlen)
{
	return ctl_ndr_recv_end(arg, sj, rj, err, errlen);
}

static void on_header(void *user, const struct txs_ndr_search *s, const struct txs_ndr_info *in)
{
	const struct ndr_cfg *c = user;
	if (!c->json)
		txs_ndr_write_header(stdout, s, in);
}

static void on_trial(void *user, const struct txs_ndr_search *s, double secs, const struct txs_ndr_trial *t,
		     double pct, bool pass)
{
	const struct ndr_cfg *c = user;
	txs_ndr_write_trial(stdout, c->json, s, secs, t, pct, pass);
}

static void on_result(void *user, const struct txs_ndr_search *s, const struct txs_ndr_info *in, double last,
		      double secs)
{
	const struct ndr_cfg *c = user;
	txs_ndr_write_result(stdout, c->json, s, in, last, secs);
}

int cmd_ndr(int argc, char **argv)
{
	struct ndr_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[options] DEST   (DEST: the receiver's address, as txscale recv -B)";
	int rc = opt_parse("ndr", syn, ndr_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (!npos && cfg.remote.host) /* --remote HOST: DEST defaults to HOST */
		pos[npos++] = cfg.remote.host;
	cfg.a.dest = npos ? pos[0] : NULL;
	char err[640];
	if (ctl_ndr_check(&cfg.remote, cfg.a.dest, cfg.a.recv_netns, cfg.a.recv_args) < 0)
		return 2;
	if (txs_ndr_args_check(&cfg.a, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale ndr: %s\n", err);
		return 2;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "txscale ndr: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
		return 1;
	}
	exe[n] = 0;
	struct txs_trial_remote remote = { .begin = remote_begin, .end = remote_end, .arg = &cfg.remote };
	struct txs_ndr_sess_hooks h = { .user = &cfg, .header = on_header, .trial = on_trial, .result = on_result };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = txs_ndr_sess_run(&cfg.a, exe, cfg.remote.host ? &remote : NULL, &g_stop, &h, err, sizeof(err));
	ctl_ndr_close(&cfg.remote);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc < 0)
		fprintf(stderr, "txscale ndr: %s\n", err);
	return rc == 0 ? 0 : rc == -EINVAL ? 2 : rc == -EINTR ? 130 : 1;
}
