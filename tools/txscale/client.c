/* SPDX-License-Identifier: MIT */
/* The client of the control channel (docs/control.md): `txscale send -c
 * HOST --server` (and -R, --bidir). It sets a test up with the server,
 * runs our own sides on threads of this process (send.c's session from the
 * user's options, recv.c's for -R), hands our sender's summary to the
 * server and prints the server's side next to ours. Also the remote
 * receiver of `txscale ndr --remote`. The connection and the session's
 * protocol are lib/ctl's (txs_ctl_client_*); this file runs our sides
 * behind its ops and prints. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/txscale.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include "ctl_cli.h"
#include "opt.h"
#include "common/proc.h"

#define READY_TIMEOUT_S 10.0
#define IDLE_S 1.0     /* the server's receiver ends this long after the last packet */
#define OWN_IDLE_S 2.0 /* ours: the server's sender summary must come before */
#define EXTRA_S 30.0

/* SIGINT/SIGTERM: 1 = stop our sender and finish the test (forward only:
 * the server's counts of what was sent are still shown), 2 = abort */
static volatile sig_atomic_t g_stop;
static bool g_soft_stop; /* a forward test: the first signal is soft */

static void on_signal(int sig)
{
	(void)sig;
	g_stop = g_stop || !g_soft_stop ? 2 : 1;
}

int ctl_parse_remote_cpus(const char *val, void *dst, char *err, size_t errlen)
{
	size_t n = strlen(val);
	if (!n || n >= TXS_CTL_CPUS_MAX || strspn(val, "0123456789,-") != n) {
		snprintf(err, errlen, "expected a CPU list like 0-3,6");
		return -1;
	}
	*(const char **)dst = val;
	return 0;
}

int ctl_parse_remote_dev(const char *val, void *dst, char *err, size_t errlen)
{
	if (strcmp(val, "udp") != 0 && (strncmp(val, "packet:", 7) != 0 || !val[7] || strlen(val) >= TXS_CTL_DEV_MAX)) {
		snprintf(err, errlen, "expected udp or packet:IFNAME[,IFNAME...]");
		return -1;
	}
	*(const char **)dst = val;
	return 0;
}

static bool g_form; /* -c HOST, no --dev, no --server: a txscale or an iperf3 server */
static bool g_dev;  /* --dev given: our sender uses it, else udp */

static bool argv_has(int argc, char **argv, const char *shrt, const char *lng)
{
	size_t ll = strlen(lng);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if ((shrt && strncmp(argv[i], shrt, strlen(shrt)) == 0) ||
		    (strncmp(argv[i], lng, ll) == 0 && (argv[i][ll] == 0 || argv[i][ll] == '=')))
			return true;
	}
	return false;
}

bool ctl_client_wanted(const struct ctl_client_opts *o, const char *dest, int argc, char **argv)
{
	/* the iperf3 form: -c HOST, no --dev: a txscale or an iperf3 server,
	 * found by ctl_client_run (after send's own refusals) */
	g_dev = argv_has(argc, argv, NULL, "--dev");
	g_form = dest && !o->server && argv_has(argc, argv, "-c", "--client") && !g_dev;
	return o->server || o->reverse || o->bidir || g_form;
}

/* ---- our sides, each on a thread of its own ------------------------------------------------------ */

struct client;

struct side {
	struct client *k;
	pthread_t th;
	bool started;
	int done, stop, ready; /* atomic: the run ended (status set); asked to stop; recv: bound */
	int status;            /* the exit status the command would have */
	bool self;             /* it ended before it was asked to stop */
	struct ctl_side_io io;
	char *sum;             /* io.sumf's text once the side closed it: the JSON summary line */
	size_t len;
};

struct client {
	const struct ctl_client_opts *o;
	const struct ctl_send_info *s;
	const struct ctl_own_send *own;
	struct txs_ctl_client *c;
	struct side side[2]; /* our sender and receiver (TXS_CTL_SIDE_*) */
	struct ctl_own_recv rv;
	pthread_mutex_t mu;
	char *peer;  /* the server's sender summary for our receiver, with its clock line (under mu) */
	double est;  /* how long we expect to send, s (0: unknown) */
	char err[512];
};

static bool io_stop(void *arg)
{
	return __atomic_load_n(&((struct side *)arg)->stop, __ATOMIC_RELAXED);
}

static void io_ready(void *arg)
{
	__atomic_store_n(&((struct side *)arg)->ready, 1, __ATOMIC_RELEASE);
}

static int io_sender_summary(void *arg, char **text, size_t *len)
{
	struct client *k = ((struct side *)arg)->k;
	pthread_mutex_lock(&k->mu);
	*text = k->peer ? strdup(k->peer) : NULL;
	pthread_mutex_unlock(&k->mu);
	*len = *text ? strlen(*text) : 0;
	return *text ? 0 : -EAGAIN;
}

static void *side_main(void *arg)
{
	struct side *d = arg;
	struct client *k = d->k;
	if (d == &k->side[TXS_CTL_SIDE_SEND])
		d->status = k->own->run(k->own->arg, g_dev ? NULL : "udp", &d->io);
	else
		d->status = recv_run_own(&k->rv, &d->io);
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Start a side, its JSON summary into memory (hold: not on stdout). 0, or -1 with err. */
static int side_start(struct client *k, int which, bool hold, char *err, size_t errlen)
{
	struct side *d = &k->side[which];
	*d = (struct side){ .k = k, .io = { .hold = hold, .arg = d, .stop = io_stop, .ready = io_ready,
					     .sender_summary = io_sender_summary } };
	const char *what = which == TXS_CTL_SIDE_SEND ? "sender" : "receiver";
	int e = (d->io.sumf = open_memstream(&d->sum, &d->len)) ? 0 : errno;
	if (!e) { /* the signals stay with this thread */
		sigset_t sigs, old;
		sigemptyset(&sigs);
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &sigs, &old);
		e = pthread_create(&d->th, NULL, side_main, d);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (e)
			fclose(d->io.sumf);
	}
	if (e) {
		snprintf(err, errlen, "cannot start our %s: %s", what, strerror(e));
		return -1;
	}
	d->started = true;
	return 0;
}

/* The side has ended, or is stopped now; true when it ended by itself. */
static bool side_end(struct side *d)
{
	if (d->started) {
		d->self = __atomic_load_n(&d->done, __ATOMIC_ACQUIRE);
		__atomic_store_n(&d->stop, 1, __ATOMIC_RELAXED);
		pthread_join(d->th, NULL);
		d->started = false;
	}
	return d->self;
}

/* A held JSON summary, once: after the server's line. */
static void flush_held(struct side *d)
{
	if (d->io.hold && d->sum)
		fputs(d->sum, stdout);
	d->io.hold = false;
	fflush(stdout);
}

/* ---- the client run ---------------------------------------------------------------------------- */

static int cb_stopping(void *arg)
{
	(void)arg;
	return g_stop;
}

static void cb_warn(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "txscale send: %s\n", line);
}

static bool cb_ended(void *arg, int side)
{
	return __atomic_load_n(&((struct client *)arg)->side[side].done, __ATOMIC_ACQUIRE);
}

static void cb_stop(void *arg, int side)
{
	__atomic_store_n(&((struct client *)arg)->side[side].stop, 1, __ATOMIC_RELAXED);
}

static char *cb_send_finish(void *arg, bool *failed, char *err, size_t errlen)
{
	struct side *d = &((struct client *)arg)->side[TXS_CTL_SIDE_SEND];
	bool self = side_end(d);
	*failed = !self || (d->status != 0 && !g_stop);
	char *sj = d->sum ? strdup(d->sum) : NULL;
	if (sj && txs_trim(sj, strlen(sj)))
		return sj;
	free(sj);
	char ex[64] = "stopped";
	if (self)
		snprintf(ex, sizeof(ex), "exit status %d", d->status);
	snprintf(err, errlen, "our sender failed (%s)", ex);
	return NULL;
}

static bool cb_recv_finish(void *arg)
{
	struct side *d = &((struct client *)arg)->side[TXS_CTL_SIDE_RECV];
	return side_end(d) && d->status == 0;
}

static int cb_peer_summary(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct client *k = arg;
	char *t = txs_ctl_peer_summary_text(summary, c);
	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&k->mu);
	free(k->peer);
	k->peer = t;
	pthread_mutex_unlock(&k->mu);
	return 0;
}

/* ops.recv_start: our receiver (-R, --bidir), bound to the address the server sees us at. */
static int cb_recv_start(void *arg, const char *local, const int64_t *clock_offset_ns, char *err, size_t errlen)
{
	struct client *k = arg;
	const struct ctl_send_info *s = k->s;
	bool bidir = k->o->bidir;
	k->rv = (struct ctl_own_recv){ .bind = local, .port = s->port, .interval = bidir ? 0 : s->interval,
				       .idle = OWN_IDLE_S, .time = k->est > 0 ? k->est + EXTRA_S : 3600, .json = s->json,
				       .clock_set = clock_offset_ns != NULL, /* we receive: our clock minus the server's */
				       .clock_offset_ns = clock_offset_ns ? *clock_offset_ns : 0,
				       .threads = bidir ? 0 : s->threads, .cpus = bidir ? NULL : s->cpus,
				       .no_pin = bidir || s->no_pin };
	if (side_start(k, TXS_CTL_SIDE_RECV, s->json, err, errlen) < 0)
		return -1;
	struct side *d = &k->side[TXS_CTL_SIDE_RECV];
	double t0 = txs_mono_s();
	while (!__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE)) {
		if (g_stop || __atomic_load_n(&d->done, __ATOMIC_ACQUIRE) || txs_mono_s() - t0 >= READY_TIMEOUT_S) {
			snprintf(err, errlen, "our receiver did not start (its message is above)");
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	return 0;
	return -1;
}

/* ops.send_start: our sender, the user's own options, on udp unless --dev says otherwise. */
static int cb_send_start(void *arg, char *err, size_t errlen)
{
	struct client *k = arg;
	return side_start(k, TXS_CTL_SIDE_SEND, k->s->json, err, errlen);
}

/* The test as the library runs it. */
static void client_test(const struct client *k, struct txs_ctl_client_test *t)
{
	const struct ctl_client_opts *o = k->o;
	const struct ctl_send_info *s = k->s;
	*t = (struct txs_ctl_client_test){ .fwd = !o->reverse || o->bidir, .rev = o->reverse || o->bidir,
					    .est = k->est, .own_idle = OWN_IDLE_S, .extra = EXTRA_S };
	/* test only: the clock our sender's stamps come from is off by this much */
	const char *sh = getenv("TXS_TEST_STAMP_SHIFT_NS");
	if (sh && *sh)
		t->stamp_shift_ns = strtoll(sh, NULL, 10);
	if (t->fwd) {
		t->recv = (struct txs_ctl_recv_spec){ .on = true, .port = s->port, .threads = o->remote_threads,
						      .rcvbuf = o->remote_rcvbuf, .time = k->est, .idle = IDLE_S };
		snprintf(t->recv.dev, sizeof(t->recv.dev), "%s", o->remote_dev ? o->remote_dev : "udp");
		if (o->remote_cpus)
			snprintf(t->recv.cpus, sizeof(t->recv.cpus), "%s", o->remote_cpus);
	}
	if (t->rev) {
		t->send = (struct txs_ctl_send_spec){ .on = true, .port = s->port, .length = s->length,
						      .rate = s->rate_pps, .count = s->count, .time = s->time,
						      .no_pin = o->bidir };
		if (s->timestamps && strcmp(s->timestamps, "burst") != 0)
			snprintf(t->send.timestamps, sizeof(t->send.timestamps), "%s", s->timestamps);
		if (!o->bidir) {
			t->send.threads = o->remote_threads;
			if (o->remote_cpus)
				snprintf(t->send.cpus, sizeof(t->send.cpus), "%s", o->remote_cpus);
		}
	}
}

/* Our lines and the server's: the server's line comes before our summary in JSON. */
static void print_peers(struct client *k, const struct txs_ctl_client_test *t,
			const struct txs_ctl_client_result *res)
{
	const struct ctl_send_info *s = k->s;
	if (t->fwd) {
		ctl_print_peer("receiver", s->dest, res->peer_recv, s->json);
		flush_held(&k->side[TXS_CTL_SIDE_SEND]);
	}
	if (t->rev) {
		ctl_print_peer("sender", s->dest, res->peer_send, s->json);
		flush_held(&k->side[TXS_CTL_SIDE_RECV]);
	}
}

/* The connection: to a txscale server, or (-c HOST alone) to whichever
 * answers. 1: an iperf3 server on *ip3_fd; 0: k->c; -1: k->err. */
static int client_connect(struct client *k, int *ip3_fd)
{
	const struct ctl_client_opts *o = k->o;
	*ip3_fd = -1;
	if (!g_form) {
		k->c = txs_ctl_client_open(k->s->dest, o->control_port, o->auth_file, o->ctl_timeout, NULL, k->err,
					   sizeof(k->err));
		return k->c ? 0 : -1;
	}
	int rc = txs_ctl_client_probe(k->s->dest, o->control_port, o->auth_file, o->ctl_timeout, &k->c, ip3_fd, k->err,
				      sizeof(k->err));
	return rc < 0 ? -1 : rc;
}

/* Stop what still runs (its last lines come out), the held summaries, say
 * the error, close the connection (bye when ret is 0). */
static void client_cleanup(struct client *k, int ret)
{
	for (int i = 0; i < 2; i++)
		side_end(&k->side[i]);
	for (int i = 0; i < 2; i++) {
		flush_held(&k->side[i]);
		free(k->side[i].sum);
	}
	if (k->err[0])
		fprintf(stderr, "txscale send: %s: %s\n", k->s->dest, k->err);
	txs_ctl_client_close(k->c, ret == 0);
	free(k->peer);
}

int ctl_client_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, const struct ctl_own_send *own)
{
	bool fwd = !o->reverse || o->bidir, rev = o->reverse || o->bidir;
	if (o->ctl_timeout < 0.1 || o->ctl_timeout > 3600) {
		fprintf(stderr, "txscale send: bad value for --ctl-timeout: '%g': expected 0.1 to 3600 seconds\n",
			o->ctl_timeout);
		return 2;
	}
	struct client *k = calloc(1, sizeof(*k));
	if (!k)
		return 1;
	*k = (struct client){ .o = o, .s = s, .own = own };
	pthread_mutex_init(&k->mu, NULL);
	int ret = 1;
	struct sigaction sa = { .sa_handler = on_signal }, oi, ot;
	g_soft_stop = fwd && !rev;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	signal(SIGPIPE, SIG_IGN);
	int ip3_fd = -1, conn = client_connect(k, &ip3_fd);
	struct txs_ctl_client_result res = { 0 };
	if (conn == 0) {
		k->est = s->time > 0 ? s->time : s->count && s->rate_pps > 0 ? (double)s->count / s->rate_pps : 0;
		if (!s->json)
			printf("txscale send: server %s, control port %u: %s test, data port %u\n", s->dest,
			       o->control_port,
			       o->bidir ? "bidirectional" : o->reverse ? "reverse (the server sends)" : "forward (we send)",
			       s->port);
		struct txs_ctl_client_test t;
		client_test(k, &t);
		struct txs_ctl_client_ops ops = { .arg = k, .stopping = cb_stopping, .warn = cb_warn,
						  .recv_start = cb_recv_start, .peer_summary = cb_peer_summary,
						  .send_start = cb_send_start, .ended = cb_ended, .stop = cb_stop,
						  .send_finish = cb_send_finish, .recv_finish = cb_recv_finish };
		if (txs_ctl_client_run(k->c, &t, &ops, &res, k->err, sizeof(k->err)) == 0) {
			print_peers(k, &t, &res);
			ret = res.failed ? 1 : 0;
		}
	}
	if (g_stop > 1)
		ret = 130;
	if (conn != 1)
		client_cleanup(k, ret);
	free(res.peer_send);
	free(res.peer_recv);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	pthread_mutex_destroy(&k->mu);
	free(k);
	return conn == 1 ? ctl_iperf3_run(o, s, ip3_fd) : ret;
}

/* ---- ndr --remote -------------------------------------------------------------------------------- */

static struct txs_ctl_client *g_ndr_conn; /* one search per process */

int ctl_ndr_check(struct ctl_ndr_opts *o, const char *dest, const char *recv_netns, const char *recv_args)
{
	if (!o->host)
		return 0;
	struct txs_addr h, d;
	if (txs_addr_parse(&h, o->host) < 0) {
		fprintf(stderr, "txscale ndr: bad value for --remote: '%s': expected an IPv4 or IPv6 address\n", o->host);
		return -1;
	}
	if (dest && (txs_addr_parse(&d, dest) < 0 || d.family != h.family ||
		     memcmp(d.bytes, h.bytes, h.family == AF_INET ? 4 : 16) != 0)) {
		fprintf(stderr, "txscale ndr: DEST '%s' is not --remote %s: the server receives on the address the "
				"client reaches it at\n", dest, o->host);
		return -1;
	}
	if (recv_netns) {
		fprintf(stderr, "txscale ndr: --recv-netns and --remote exclude each other (the server receives)\n");
		return -1;
	}
	if (recv_args) {
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s", recv_args);
		char *save = NULL, *t = strtok_r(buf, " \t", &save), *v = NULL;
		if (t && strncmp(t, "--rcvbuf=", 9) == 0)
			v = t + 9;
		else if (t && strcmp(t, "--rcvbuf") == 0)
			v = strtok_r(NULL, " \t", &save);
		uint64_t n = 0;
		if (!v || txs_parse_count(v, &n) < 0 || n < 1 || n > 0x7fffffff || strtok_r(NULL, " \t", &save)) {
			fprintf(stderr, "txscale ndr: bad value for --recv-args: '%s': with --remote only \"--rcvbuf BYTES\" "
					"is passed to the server\n", recv_args);
			return -1;
		}
		o->rcvbuf = n;
	}
	return 0;
}

int ctl_ndr_recv_begin(const struct ctl_ndr_opts *o, uint16_t port, const char *dev, double secs, char *err,
		       size_t errlen)
{
	if (!g_ndr_conn) {
		signal(SIGPIPE, SIG_IGN);
		g_ndr_conn = txs_ctl_client_open(o->host, o->control_port, o->auth_file, 10.0, NULL, err, errlen);
		if (!g_ndr_conn)
			return -EIO;
	}
	struct txs_ctl_recv_spec r = { .on = true, .port = port, .rcvbuf = o->rcvbuf, .time = secs, .idle = 0.5 };
	snprintf(r.dev, sizeof(r.dev), "%s", dev ? dev : "udp");
	return txs_ctl_client_recv_start(g_ndr_conn, &r, err, errlen);
}

int ctl_ndr_recv_end(const struct ctl_ndr_opts *o, const char *send_json_path, const char *recv_json_path, char *err,
		     size_t errlen)
{
	(void)o;
	size_t n = 0;
	char *sj = txs_slurp(send_json_path, &n), *rj = NULL;
	if (sj)
		n = txs_trim(sj, n);
	int rc = txs_ctl_client_recv_finish(g_ndr_conn, sj && n ? sj : NULL, &rj, err, errlen);
	free(sj);
	if (rc == 0 && txs_write_atomic(recv_json_path, rj) < 0) {
		snprintf(err, errlen, "cannot write the receiver's summary: %s", strerror(errno));
		rc = -EIO;
	}
	free(rj);
	if (rc < 0) { /* the session is no good after a failed test */
		txs_ctl_client_close(g_ndr_conn, false);
		g_ndr_conn = NULL;
	}
	return rc;
}

void ctl_ndr_close(const struct ctl_ndr_opts *o)
{
	(void)o;
	txs_ctl_client_close(g_ndr_conn, true);
	g_ndr_conn = NULL;
}
