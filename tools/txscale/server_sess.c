/* SPDX-License-Identifier: MIT */
/* txscale server: one session in its own process (server_sess.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include "cli.h"
#include "ctl_cli.h"
#include "server_iperf3.h"
#include "server_metrics.h"
#include "server_sess.h"

#define READY_TIMEOUT_S 10.0 /* a receiver: from start to bound socket */
#define RECV_EXTRA_S 30.0    /* a receiver's own -t: the client's estimate + this */

static void slog(const struct sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void slog(const struct sess *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	FILE *f = s->cfg->json ? stderr : stdout;
	fprintf(f, "txscale server: session %u (%s): ", s->id, s->client_s);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
	va_end(ap);
}

static int ms(double s)
{
	return s > 2e6 ? 2000000000 : (int)(s * 1000);
}

/* Tell the client why, and log it. Returns -1. */
int server_refuse(struct sess *s, const char *fmt, ...)
{
	struct txs_ctl_msg m = { .type = TXS_CTL_ERROR };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m.message, sizeof(m.message), fmt, ap);
	va_end(ap);
	for (char *c = m.message; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	slog(s, "error: %s", m.message);
	char e[256];
	txs_ctl_write(s->fd, &m, 1000, e, sizeof(e));
	return -1;
}

/* Wait for the "ready" line a receiver writes once bound. 0, or -1 with err. */
static int wait_ready(int rfd, pid_t pid, const char *errpath, char *err, size_t errlen)
{
	double t0 = txs_mono_s();
	char line[16] = "";
	size_t got = 0;
	for (;;) {
		if (txs_mono_s() - t0 > READY_TIMEOUT_S) {
			snprintf(err, errlen, "the receiver was not ready within %.0f s", READY_TIMEOUT_S);
			return -1;
		}
		if (txs_ready_line_step(rfd, line, sizeof(line), &got) != 0)
			break;
	}
	if (strncmp(line, "ready\n", 6) == 0)
		return 0;
	char why[300], ex[64] = "no ready line";
	int xs;
	if (txs_stop_child(pid, 1.0, &xs))
		txs_describe_exit(xs, ex, sizeof(ex));
	txs_last_line(errpath, why, sizeof(why));
	snprintf(err, errlen, "the receiver did not start (%s): %s", ex, why[0] ? why : "no message");
	return -1;
}

/* ops.recv_start */
/* the receiver child: the session from the test's spec, no exec */
static int recv_child(void *arg)
{
	return recv_run_spec(arg);
}

static int start_recv(void *ctx, const struct txs_ctl_recv_spec *r, char *err, size_t errlen)
{
	struct sess *s = ctx;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	double idle = r->idle > 0 ? r->idle : TXS_CTL_IDLE_DEFAULT_S;
	double limit = r->time > 0 ? r->time + RECV_EXTRA_S : s->cfg->max_time;
	if (limit > s->cfg->max_time + RECV_EXTRA_S)
		limit = s->cfg->max_time + RECV_EXTRA_S;
	char mf[400];
	smet_path(s->sm, s->id, "recv", mf, sizeof(mf));
	struct recv_spec_run rs = { .spec = r, .bind = s->local_s, .sender_summary = s->peer_json,
				    .summary_file = s->p.recv_json, .metrics_file = mf, .idle = idle, .limit = limit,
				    .ready_fd = pfd[1] };
	pid_t pid = txs_spawn_call(recv_child, &rs, s->p.recv_err, pfd[1]);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot start the receiver: %s", strerror((int)-pid));
		return -1;
	}
	int rc = wait_ready(pfd[0], pid, s->p.recv_err, err, errlen);
	close(pfd[0]);
	if (rc < 0) {
		txs_stop_child(pid, 0, NULL);
		return -1;
	}
	s->rp = pid;
	return 0;
}

/* the sender child: the session from the test's spec, no exec */
static int send_child(void *arg)
{
	return send_run_spec(arg);
}

/* ops.send_start */
static int start_send(void *ctx, const struct txs_ctl_send_spec *sd, const char *dest, double limit, char *err,
		      size_t errlen)
{
	struct sess *s = ctx;
	char mf[400];
	smet_path(s->sm, s->id, "send", mf, sizeof(mf));
	struct send_spec_run ss = { .spec = sd, .bind = s->local_s, .dest = dest, .summary_file = s->p.send_json,
				    .metrics_file = mf, .limit = limit };
	pid_t pid = txs_spawn_call(send_child, &ss, s->p.send_err, -1);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-pid));
		return -1;
	}
	s->sp = pid;
	s->s_self = false;
	return 0;
}

/* A child's summary file after it ended; NULL with err when it failed
 * and left none. */
static char *child_summary(struct sess *s, const char *what, const char *json, const char *errpath, bool by_itself,
			   int st, char *err, size_t errlen)
{
	size_t n = 0;
	char *b = txs_slurp(json, &n);
	if (b && txs_trim(b, n) > 0) {
		if (!by_itself || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			char why[300], ex[64] = "stopped";
			if (by_itself)
				txs_describe_exit(st, ex, sizeof(ex));
			txs_last_line(errpath, why, sizeof(why));
			slog(s, "note: the %s ended with %s: %s", what, ex, why[0] ? why : "no message");
		}
		return b;
	}
	free(b);
	char why[300], ex[64] = "killed at its time limit";
	if (by_itself)
		txs_describe_exit(st, ex, sizeof(ex));
	txs_last_line(errpath, why, sizeof(why));
	snprintf(err, errlen, "the %s failed (%s): %s", what, ex, why[0] ? why : "no message");
	return NULL;
}

/* ops.summary */
static void print_summary(void *arg, const char *what, const char *json)
{
	const struct sess *s = arg;
	if (s->cfg->json) {
		printf("%s\n", json);
		fflush(stdout);
		return;
	}
	char who[sizeof(s->client_s) + 32];
	snprintf(who, sizeof(who), "(session %u, %s)", s->id, s->client_s);
	ctl_print_peer(what, who, json, false);
}

/* ---- the session's sides, behind txs_ctl_serve's ops ------------------------------------------- */

static void cb_log(void *arg, const char *line)
{
	slog(arg, "%s", line);
}

static int cb_cpus(void *arg, const char *list, char *err, size_t errlen)
{
	(void)arg;
	struct opt_cpus oc;
	return opt_cpus_parse(list, &oc, err, errlen) < 0 ? -1 : 0;
}

static void cb_test_begin(void *arg)
{
	struct sess *s = arg;
	unlink(s->peer_json);
	unlink(s->p.recv_json);
	unlink(s->p.send_json);
}

static bool cb_send_ended(void *arg)
{
	struct sess *s = arg;
	if (txs_reaped(s->sp, &s->s_st) != 1)
		return false;
	s->s_self = true;
	return true;
}

static char *cb_send_finish(void *arg, char *err, size_t errlen)
{
	struct sess *s = arg;
	if (!s->s_self)
		s->s_self = txs_stop_child(s->sp, 0, &s->s_st);
	s->sp = -1;
	return child_summary(s, "sender", s->p.send_json, s->p.send_err, s->s_self, s->s_st, err, errlen);
}

static char *cb_recv_finish(void *arg, double grace, char *err, size_t errlen)
{
	struct sess *s = arg;
	int st = 0;
	bool self = txs_stop_child(s->rp, grace, &st);
	s->rp = -1;
	return child_summary(s, "receiver", s->p.recv_json, s->p.recv_err, self, st, err, errlen);
}

static int cb_peer_summary(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct sess *s = arg;
	return txs_ctl_peer_summary_save(s->peer_json, summary, c) < 0 ? -errno : 0;
}

static void cb_test_end(void *arg)
{
	struct sess *s = arg;
	if (s->rp > 0)
		txs_stop_child(s->rp, 0, NULL);
	if (s->sp > 0)
		txs_stop_child(s->sp, 0, NULL);
	s->rp = s->sp = -1;
}

int server_session(struct sess *s)
{
	const struct server_cfg *c = s->cfg;
	/* one port for both protocols: an iperf3 client speaks first (its cookie) */
	if (server_iperf3_first(s->fd, IP3_FIRST_WAIT_MS)) {
		char pre[sizeof(s->client_s) + 48];
		snprintf(pre, sizeof(pre), "txscale server: session %u (%s): ", s->id, s->client_s);
		char mf[400];
		smet_path(s->sm, s->id, "iperf3", mf, sizeof(mf));
		struct ip3_srv_ctx ic = { .metrics_file = mf[0] ? mf : NULL, .fd = s->fd, .local = &s->local_sa, .peer = &s->client_sa, .prefix = pre,
					  .json = c->json, .max_time = c->max_time, .ctl_timeout_ms = ms(c->ctl_timeout),
					  .auth = s->key != NULL, .stream_lock = s->stream_lock >= 0 ? &s->stream_lock : NULL,
					  .max_rate = c->max_rate.value, .max_rate_bits = c->max_rate.bits };
		return server_iperf3(&ic);
	}
	struct txs_ctl_srv_cfg sc = { .max_time = c->max_time, .ctl_timeout = c->ctl_timeout, .allow = s->allow,
				      .key = s->key, .max_rate = c->max_rate.value, .max_rate_bits = c->max_rate.bits,
				      .client = s->client, .local = s->local, .client_s = s->client_s };
	struct txs_ctl_srv_ops ops = { .arg = s, .log = cb_log, .cpus_check = cb_cpus, .test_begin = cb_test_begin,
				       .recv_start = start_recv, .send_start = start_send, .send_ended = cb_send_ended,
				       .send_finish = cb_send_finish, .recv_finish = cb_recv_finish,
				       .peer_summary = cb_peer_summary, .summary = print_summary, .test_end = cb_test_end };
	s->rp = s->sp = -1;
	return txs_ctl_serve(s->fd, &sc, &ops) < 0 ? 1 : 0;
}
