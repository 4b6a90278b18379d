/* SPDX-License-Identifier: MIT */
/* A test's sides, each a child of the session's process (txs_spawn_call,
 * no exec): the receiver and the sender built from the spec lib/ctl decoded
 * as `txscale recv` and `txscale send --dev udp` would run them with the
 * spec's values as options (their option tables' defaults, then the spec's
 * fields). Each writes its summary file and (with the server's --metrics)
 * its metrics file; its errors and notes go to the side_msg hook, which
 * writes them on the side's stderr, the file the session reads the last line
 * of. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/err.h"
#include "server_priv.h"

struct side {
	const struct txs_server *sv;
	const char *name; /* "recv", "send" */
	const char *summary_file;
	char metrics_file[400]; /* "" without metrics */
	double limit;           /* -t */
	struct txs_metrics_life *life;
	const struct txs_ctl_recv_spec *r;
	const char *bind, *sender_summary;
	double idle;
	int ready_fd;
	const struct txs_ctl_send_spec *sd;
	const char *dest;
};

static void say(const struct side *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct side *d, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (d->sv->h.side_msg)
		d->sv->h.side_msg(d->sv->h.user, d->name, line);
}

static void say_hook(void *user, const char *line)
{
	say(user, "%s", line);
}

static int cpus(const char *list, int *cpu, unsigned *n, char *err, size_t errlen)
{
	char why[256];
	*n = 0;
	if (list[0] && txs_parse_cpus(list, cpu, TXS_MAX_CORES, n, why, sizeof(why)) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for -A/--affinity: '%s': %s", list, why);
	return 0;
}

int txs_srv_recv_conf(struct txs_recv_conf *c, const struct txs_ctl_recv_spec *r, const char *bind, char port[8],
		      double idle, double limit, const char *sender_summary, char *err, size_t errlen)
{
	txs_recv_conf_init(c);
	/* the recv option table's defaults */
	c->window = 4096;
	c->max_flows = 4096;
	c->batch = 64;
	c->rx_ts = "kernel";
	c->payload = "txscale";
	/* the spec's, and the server's */
	snprintf(port, 8, "%u", (unsigned)r->port);
	c->dev = r->dev;
	c->bind = bind;
	c->port = port;
	c->interval = 0;
	c->idle = idle;
	c->time = limit; /* > 0 */
	c->sender_summary = sender_summary;
	c->threads = r->threads;
	int cpu[TXS_MAX_CORES];
	if (cpus(r->cpus, cpu, &c->n_affinity, err, errlen) < 0)
		return -EINVAL;
	if (r->rcvbuf)
		c->rcvbuf = r->rcvbuf;
	if (r->window)
		c->window = r->window;
	if (r->clock.on) { /* measured by the client before this test */
		c->clock_offset_set = true;
		c->clock_offset_ns = r->clock.offset_ns;
		c->clock_error_ns = r->clock.error_ns;
	}
	/* unpinned unless the spec names CPUs */
	unsigned n = txs_recv_conf_threads(c);
	txs_cpus_assign(cpu, c->n_affinity, r->no_pin || !c->n_affinity, n < TXS_MAX_CORES ? n : TXS_MAX_CORES, c->cpu);
	return 0;
}

int txs_srv_send_conf(struct txs_send_conf *c, const struct txs_ctl_send_spec *sd, const char *bind, const char *dest,
		      double limit, char length[16], char *err, size_t errlen)
{
	txs_send_conf_init(c); /* the send option table's defaults */
	snprintf(length, 16, "%u", sd->length);
	c->dev = "udp";
	c->bind = bind;
	c->dest = dest;
	c->port = sd->port;
	c->length = length;
	c->rate = (struct txs_send_rate){ .value = sd->rate };
	c->time = limit;
	c->count = sd->count;
	c->threads = sd->threads;
	if (cpus(sd->cpus, c->cpus, &c->n_cpus, err, errlen) < 0)
		return -EINVAL;
	c->no_pin = sd->no_pin;
	if (sd->timestamps[0])
		c->timestamps = sd->timestamps;
	c->interval = 0;
	return 0;
}

/* ---- the receiver ------------------------------------------------------------------------------ */

static struct txs_recv *g_recv;
static struct txs_send *g_send;

static void on_signal(int sig)
{
	(void)sig;
	if (g_recv)
		txs_recv_stop(g_recv);
	if (g_send)
		txs_send_stop(g_send);
}

static void stop_on_signals(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The metrics file: 0, or the exit status (said). */
static int metrics_start(struct side *d, double interval)
{
	struct txs_metrics_opts mo = { .file = d->metrics_file[0] ? d->metrics_file : NULL };
	char err[512];
	int rc = txs_metrics_life_start(&d->life, &mo, interval, say_hook, d, err, sizeof(err));
	if (rc < 0)
		say(d, "%s", err);
	return rc == 0 ? 0 : rc == -EINVAL ? 2 : 1;
}

struct recv_run {
	struct side *d;
	struct txs_metrics_rx *mx;
	struct txs_ctl_clock_rep clock; /* the clock line beside the sender's summary */
};

static void r_tick(void *user, double el)
{
	struct recv_run *x = user;
	if (x->mx)
		txs_metrics_rx_tick(x->mx, el);
	txs_metrics_life_tick(x->d->life, el);
}

/* the input is open and bound: the session may let the client send */
static void r_ready(void *user)
{
	struct recv_run *x = user;
	int fd = x->d->ready_fd;
	if (write(fd, "ready\n", 6) != 6)
		say(x->d, "--ready-fd %d: %s", fd, strerror(errno));
	close(fd);
}

static void r_msg(void *user, const char *line)
{
	struct recv_run *x = user;
	say(x->d, "%s", line);
}

static void r_summary(void *user, const char *text, size_t len)
{
	struct recv_run *x = user;
	if (txs_ctl_clock_line_parse(text, len, &x->clock) < 0)
		x->clock.on = false;
}

/* The summary (corrected by the control channel's clock) into sf, and the metrics. 0 or 1. */
static int recv_report(struct recv_run *x, struct txs_recv *s, FILE *sf, const struct txs_recv_conf *conf)
{
	struct txs_recv_result *res = txs_recv_result(s);
	int ret = 0;
	if (!res)
		return 1;
	if (conf->clock_offset_set && x->clock.on) {
		/* measured over the control channel: its bound and drift came with the sender's summary */
		const struct txs_ctl_clock_rep *c = &x->clock;
		txs_rx_result_set_clock(res->rx, conf->clock_offset_ns, c->error_ns, c->have_drift, c->drift_ns,
					"control");
		txs_rx_result_set_clock_method(res->rx, c->method ? c->method : TXS_CTL_CLOCK_TCP); /* unsaid: an older client */
	}
	txs_recv_summary(sf, true, res);
	if (fclose(sf) != 0) {
		say(x->d, "cannot write --summary-file '%s': %s", x->d->summary_file, strerror(errno));
		ret = 1;
	}
	if (x->mx && txs_metrics_rx_finish(x->mx, res->rx, res->in->offline ? NULL : &res->kd, &res->is,
					   res->seconds) < 0)
		say(x->d, "metrics: out of memory");
	return ret;
}

/* Open, run, report; sf is closed. The exit status. */
static int recv_session(struct side *d, const struct txs_recv_conf *c, FILE *sf)
{
	struct txs_recv *s;
	char err[512];
	int rc = txs_recv_open(&s, c, err, sizeof(err));
	if (rc < 0) {
		say(d, "%s", err);
		fclose(sf);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENOENT || rc == -EOPNOTSUPP ? 2 : 1;
	}
	bool udp = strcmp(txs_recv_input(s)->ops->name, "udp") == 0;
	if (c->rcvbuf && !udp)
		say(d, "note: --rcvbuf applies to --dev udp only");
	struct recv_run x = { .d = d };
	int ret = metrics_start(d, c->interval);
	if (ret == 0 && txs_recv_metrics(s, txs_metrics_life_registry(d->life), TXS_METRICS_FLOWS_DEFAULT, &x.mx) < 0) {
		say(d, "metrics: out of memory");
		ret = 1;
	}
	if (ret == 0) {
		g_recv = s;
		stop_on_signals(SA_RESETHAND);
		struct txs_recv_hooks h = { .user = &x, .tick = r_tick, .ready = r_ready, .summary = r_summary,
					    .msg = r_msg };
		ret = txs_recv_run(s, &h) < 0 ? 1 : 0;
		if (recv_report(&x, s, sf, c))
			ret = 1;
		sf = NULL;
		if (txs_metrics_life_end(d->life) < 0)
			ret = 1;
	}
	txs_metrics_life_close(d->life);
	txs_metrics_rx_destroy(x.mx);
	if (sf)
		fclose(sf);
	g_recv = NULL;
	txs_recv_close(s);
	return ret;
}

static int recv_main(void *arg)
{
	struct side *d = arg;
	struct txs_recv_conf c;
	char port[8], err[512];
	if (txs_srv_recv_conf(&c, d->r, d->bind, port, d->idle, d->limit, d->sender_summary, err, sizeof(err)) < 0) {
		say(d, "%s", err);
		return 2;
	}
	c.snaps = d->metrics_file[0] != 0;
	if (txs_recv_conf_check(&c, err, sizeof(err)) < 0) {
		say(d, "%s", err);
		return 2;
	}
	FILE *sf = fopen(d->summary_file, "we");
	if (!sf) {
		say(d, "bad value for --summary-file: '%s': %s", d->summary_file, strerror(errno));
		return 2;
	}
	return recv_session(d, &c, sf);
}

pid_t txs_srv_recv_start(struct txs_srv_sess *s, const struct txs_ctl_recv_spec *r, double idle, double limit,
			 char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	struct side d = { .sv = s->sv, .name = "recv", .summary_file = s->p.recv_json, .limit = limit, .r = r,
			  .bind = s->local_s, .sender_summary = s->peer_json, .idle = idle, .ready_fd = pfd[1] };
	txs_srv_metrics_path(&s->sv->sm, s->id, "recv", d.metrics_file, sizeof(d.metrics_file));
	pid_t pid = txs_spawn_call(recv_main, &d, s->p.recv_err, pfd[1]);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot start the receiver: %s", strerror((int)-pid));
		return -1;
	}
	/* on failure the receiver is stopped and reaped */
	int rc = txs_wait_ready(pfd[0], pid, "the receiver", s->p.recv_err, TXS_CTL_READY_S, NULL, err, errlen);
	close(pfd[0]);
	return rc < 0 ? -1 : pid;
}

/* ---- the sender -------------------------------------------------------------------------------- */

struct send_run {
	struct side *d;
	struct txs_metrics_send *mx;
};

static void s_poll(void *arg, const struct txs_send_tick *t)
{
	struct send_run *x = arg;
	txs_metrics_send_update(x->mx, t->now, t->threads, t->links, TXS_METRICS_RUNNING);
	txs_metrics_life_tick(x->d->life, t->now);
}

/* The run's problems, a line each. */
static void problems(struct side *d, const struct txs_send_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	txs_send_result_problems(f, "", true, r);
	fclose(f);
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		say(d, "%s", line);
	free(buf);
}

/* Run the opened session; sf is closed. The exit status. */
static int send_session(struct side *d, struct txs_send *s, FILE *sf)
{
	struct send_run x = { .d = d };
	int mrc = metrics_start(d, 0);
	if (!mrc && txs_send_metrics(s, txs_metrics_life_registry(d->life), &x.mx) < 0) {
		say(d, "metrics: out of memory");
		mrc = 1;
	}
	if (mrc) {
		txs_metrics_life_close(d->life);
		fclose(sf);
		return mrc;
	}
	g_send = s;
	stop_on_signals(0);
	struct txs_send_hooks h = { .poll = x.mx ? s_poll : NULL, .user = &x };
	const struct txs_send_result *r;
	int rc = txs_send_run(s, &h, &r);
	if (x.mx)
		txs_metrics_send_update(x.mx, r->seconds, r->threads, r->links, TXS_METRICS_FINISHED);
	txs_send_summary(sf, true, r);
	if (fclose(sf) != 0) {
		say(d, "cannot write --summary-file '%s': %s", d->summary_file, strerror(errno));
		rc = rc ? rc : -EIO;
	}
	problems(d, r);
	bool failed = r->failed;
	if (txs_metrics_life_end(d->life) < 0)
		failed = true;
	txs_metrics_life_close(d->life);
	txs_metrics_send_destroy(x.mx);
	g_send = NULL;
	return rc < 0 || failed ? 1 : r->verify_errors ? 1 : 0;
}

static int send_main(void *arg)
{
	struct side *d = arg;
	struct txs_send_conf c;
	char length[16], err[512];
	if (txs_srv_send_conf(&c, d->sd, d->bind, d->dest, d->limit, length, err, sizeof(err)) < 0) {
		say(d, "%s", err);
		return 2;
	}
	c.stamp_shift_ns = d->sv->c.stamp_shift_ns;
	c.on_note = say_hook;
	c.user = d;
	int rc = txs_send_conf_check(&c, NULL, err, sizeof(err));
	if (rc < 0) {
		say(d, "%s", err);
		return rc == -EINVAL ? 2 : 1;
	}
	FILE *sf = fopen(d->summary_file, "w");
	if (!sf) {
		say(d, "bad value for --summary-file: '%s': %s", d->summary_file, strerror(errno));
		return 2;
	}
	struct txs_send *s;
	rc = txs_send_open(&s, &c, err, sizeof(err));
	if (rc < 0) {
		say(d, "%s", err);
		fclose(sf);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENAMETOOLONG ? 2 : 1;
	}
	rc = send_session(d, s, sf);
	txs_send_close(s);
	return rc;
}

pid_t txs_srv_send_start(struct txs_srv_sess *s, const struct txs_ctl_send_spec *sd, const char *dest, double limit,
			 char *err, size_t errlen)
{
	struct side d = { .sv = s->sv, .name = "send", .summary_file = s->p.send_json, .limit = limit, .sd = sd,
			  .bind = s->local_s, .dest = dest };
	txs_srv_metrics_path(&s->sv->sm, s->id, "send", d.metrics_file, sizeof(d.metrics_file));
	pid_t pid = txs_spawn_call(send_main, &d, s->p.send_err, -1);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-pid));
		return -1;
	}
	return pid;
}
