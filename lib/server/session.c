/* SPDX-License-Identifier: MIT */
/* One session in its own process: a txscale client's tests (lib/ctl's
 * txs_ctl_serve, the sides behind its ops: sides.c) or an iperf3 client's
 * (iperf3.c), told apart by who speaks first. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/ctl_session.h>
#include "server_priv.h"

void txs_srv_slog(const struct txs_srv_sess *s, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	txs_srv_log(s->sv, "session %u (%s): %s", s->id, s->client_s, line);
}

/* Tell the client why (an error message), and log it. */
static void refuse(struct txs_srv_sess *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(struct txs_srv_sess *s, const char *fmt, ...)
{
	struct txs_ctl_msg m = { .type = TXS_CTL_ERROR };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m.message, sizeof(m.message), fmt, ap);
	va_end(ap);
	for (char *c = m.message; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	txs_srv_slog(s, "error: %s", m.message);
	char e[256];
	txs_ctl_write(s->fd, &m, 1000, e, sizeof(e));
}

/* A side's summary file after it ended; NULL with err when it failed and
 * left none. */
static char *side_summary(struct txs_srv_sess *s, const char *what, const char *json, const char *errpath,
			  bool by_itself, int st, char *err, size_t errlen)
{
	size_t n = 0;
	char *b = txs_slurp(json, &n);
	char why[300], ex[64];
	if (b && txs_trim(b, n) > 0) {
		if (!by_itself || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			snprintf(ex, sizeof(ex), "stopped");
			if (by_itself)
				txs_describe_exit(st, ex, sizeof(ex));
			txs_last_line(errpath, why, sizeof(why));
			txs_srv_slog(s, "note: the %s ended with %s: %s", what, ex, why[0] ? why : "no message");
		}
		return b;
	}
	free(b);
	char w[64];
	snprintf(w, sizeof(w), "the %s failed", what);
	txs_child_why(err, errlen, w, by_itself ? &st : NULL, "killed at its time limit", errpath);
	return NULL;
}

/* ---- the session's sides, behind txs_ctl_serve's ops ------------------------------------------- */

static void cb_log(void *arg, const char *line)
{
	txs_srv_slog(arg, "%s", line);
}

static int cb_cpus(void *arg, const char *list, char *err, size_t errlen)
{
	(void)arg;
	int cpu[TXS_MAX_CORES];
	unsigned n;
	return txs_parse_cpus(list, cpu, TXS_MAX_CORES, &n, err, errlen) < 0 ? -1 : 0;
}

static void cb_test_begin(void *arg)
{
	struct txs_srv_sess *s = arg;
	unlink(s->peer_json);
	unlink(s->p.recv_json);
	unlink(s->p.send_json);
}

static int cb_recv_start(void *arg, const struct txs_ctl_recv_spec *r, char *err, size_t errlen)
{
	struct txs_srv_sess *s = arg;
	double max = s->sv->c.max_time, extra = 30.0; /* a receiver's own -t: the client's estimate + this */
	double limit = r->time > 0 ? r->time + extra : max;
	if (limit > max + extra)
		limit = max + extra;
	s->rp = txs_srv_recv_start(s, r, r->idle > 0 ? r->idle : TXS_CTL_IDLE_DEFAULT_S, limit, err, errlen);
	return s->rp > 0 ? 0 : -1;
}

static int cb_send_start(void *arg, const struct txs_ctl_send_spec *sd, const char *dest, double limit, char *err,
			 size_t errlen)
{
	struct txs_srv_sess *s = arg;
	s->sp = txs_srv_send_start(s, sd, dest, limit, err, errlen);
	s->s_self = false;
	return s->sp > 0 ? 0 : -1;
}

static bool cb_send_ended(void *arg)
{
	struct txs_srv_sess *s = arg;
	if (txs_reaped(s->sp, &s->s_st) != 1)
		return false;
	s->s_self = true;
	return true;
}

static char *cb_send_finish(void *arg, char *err, size_t errlen)
{
	struct txs_srv_sess *s = arg;
	if (!s->s_self)
		s->s_self = txs_stop_child(s->sp, 0, &s->s_st);
	s->sp = -1;
	return side_summary(s, "sender", s->p.send_json, s->p.send_err, s->s_self, s->s_st, err, errlen);
}

static char *cb_recv_finish(void *arg, double grace, char *err, size_t errlen)
{
	struct txs_srv_sess *s = arg;
	int st = 0;
	bool self = txs_stop_child(s->rp, grace, &st);
	s->rp = -1;
	return side_summary(s, "receiver", s->p.recv_json, s->p.recv_err, self, st, err, errlen);
}

static int cb_peer_summary(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct txs_srv_sess *s = arg;
	return txs_ctl_peer_summary_save(s->peer_json, summary, c);
}

static void cb_summary(void *arg, const char *role, const char *json)
{
	struct txs_srv_sess *s = arg;
	struct txs_server_summary m = { .session = s->id, .client = s->client_s, .role = role, .json = json };
	if (s->sv->h.summary)
		s->sv->h.summary(s->sv->h.user, &m);
}

static void cb_test_end(void *arg)
{
	struct txs_srv_sess *s = arg;
	if (s->rp > 0)
		txs_stop_child(s->rp, 0, NULL);
	if (s->sp > 0)
		txs_stop_child(s->sp, 0, NULL);
	s->rp = s->sp = -1;
}

/* The session on s->fd: 0, or 1 (refused or failed, logged). */
static int serve(struct txs_srv_sess *s)
{
	const struct txs_server_conf *c = &s->sv->c;
	/* one port for both protocols, told by what the client writes first: an iperf3 client its cookie,
	 * ours its opener (read here; the hello goes at once), an older txscale client nothing */
	if (txs_ctl_first(s->fd, TXS_SRV_FIRST_MS, true) == TXS_CTL_FIRST_OTHER)
		return txs_srv_iperf3(s);
	struct txs_ctl_srv_cfg sc = { .max_time = c->max_time, .ctl_timeout = c->ctl_timeout,
				      .allow = c->allow_dest ? &s->sv->allow : NULL, .key = s->key,
				      .max_rate = c->max_rate, .max_rate_bits = c->max_rate_bits, .client = s->client,
				      .local = s->local, .client_s = s->client_s };
	struct txs_ctl_srv_ops ops = { .arg = s, .log = cb_log, .cpus_check = cb_cpus, .test_begin = cb_test_begin,
				       .recv_start = cb_recv_start, .send_start = cb_send_start,
				       .send_ended = cb_send_ended, .send_finish = cb_send_finish,
				       .recv_finish = cb_recv_finish, .peer_summary = cb_peer_summary,
				       .summary = cb_summary, .test_end = cb_test_end };
	s->rp = s->sp = -1;
	return txs_ctl_serve(s->fd, &sc, &ops) < 0 ? 1 : 0;
}

/* The session's files, removed when the server stops it (SIGTERM) as when
 * it ends: unlink and rmdir are async-signal-safe. */
static struct txs_srv_sess *g_files;

static void files_remove(const struct txs_srv_sess *s)
{
	unlink(s->peer_json);
	unlink(s->peer_tmp);
	txs_paths_remove(&s->p);
}

static void on_term(int sig)
{
	if (g_files)
		files_remove(g_files);
	signal(sig, SIG_DFL);
	raise(sig);
}

void txs_srv_session_main(const struct txs_server *sv, const struct txs_srv_slot *sl, int fd,
			  const struct txs_srv_pending *pe, int ep_w)
{
	if (sl->n_cpu) { /* the session's workers run on its share of the CPUs */
		cpu_set_t mine;
		CPU_ZERO(&mine);
		for (unsigned q = 0; q < sl->n_cpu; q++)
			CPU_SET(sl->cpu[q], &mine);
		sched_setaffinity(0, sizeof(mine), &mine);
	}
	struct txs_srv_sess *s = calloc(1, sizeof(*s));
	if (!s)
		_exit(1);
	uint16_t port;
	s->sv = sv;
	s->key = sv->c.auth_file ? sv->key : NULL;
	s->fd = fd;
	s->id = sl->id;
	txs_srv_sa_addr(&pe->peer, &s->client, &port);
	txs_srv_sa_addr(&pe->me, &s->local, &port);
	s->client_sa = pe->peer;
	s->local_sa = pe->me;
	s->stream_lock = -1;
	if (sv->ip3_lock >= 0) { /* its own open file: flock() then tells sessions apart */
		char lp[64];
		snprintf(lp, sizeof(lp), "/proc/self/fd/%d", sv->ip3_lock);
		s->stream_lock = open(lp, O_RDONLY | O_CLOEXEC);
		close(sv->ip3_lock);
	}
	snprintf(s->client_s, sizeof(s->client_s), "%s", sl->who);
	txs_addr_str(&s->local, s->local_s, sizeof(s->local_s));
	int code = 1;
	if (txs_paths_make(&s->p, "server") < 0) {
		refuse(s, "cannot make a temporary directory: %s", strerror(errno));
	} else {
		snprintf(s->peer_json, sizeof(s->peer_json), "%s/peer.json", s->p.dir);
		snprintf(s->peer_tmp, sizeof(s->peer_tmp), "%s.tmp", s->peer_json);
		g_files = s;
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term); /* a terminal's Ctrl-C reaches the whole process group: clean up too */
		code = serve(s);
		close(fd);
		fd = -1;
		if (ep_w >= 0)
			close(ep_w);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		files_remove(s);
	}
	if (fd >= 0)
		close(fd);
	fflush(NULL); /* what the hooks wrote through stdio */
	_exit(code);
}
