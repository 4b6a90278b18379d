/* SPDX-License-Identifier: MIT */
/* The client of the control channel (docs/control.md): `txscale send -c
 * HOST --server` (and -R, --bidir). It sets a test up with the server,
 * runs its own side as children of this very binary (a `txscale send`
 * with the user's own options, a `txscale recv` for -R), relays their
 * output, hands its sender's summary to the server and prints the server's
 * side next to its own. Also the remote receiver of `txscale ndr --remote`.
 * The session's protocol is lib/ctl's (txs_ctl_client_*); this file
 * connects, runs the children behind its ops and prints. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include "ctl_cli.h"
#include "client_iperf3.h"
#include "opt.h"
#include "common/proc.h"

#define CHILD_ENV "TXSCALE_CTL_CHILD" /* set in the sender the client runs */
#define READY_TIMEOUT_S 10.0
#define IDLE_S 1.0                    /* the server's receiver ends this long after the last packet */
#define OWN_IDLE_S 2.0                /* ours: the server's sender summary must come before */
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


/* ---- connection ------------------------------------------------------------------------------ */

static int ms(double s)
{
	return s > 2e6 ? 2000000000 : (int)(s * 1000);
}

static int connect_to(const struct txs_addr *a, uint16_t port, double timeout, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		s4->sin_addr = a->v4;
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		s6->sin6_addr = a->v6;
		sl = sizeof(*s6);
	}
	int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
		int e = errno;
		snprintf(err, errlen, "cannot connect to the control port %u: %s", port, strerror(e));
		close(fd);
		return -e;
	}
	struct pollfd pf = { .fd = fd, .events = POLLOUT };
	int r;
	do
		r = poll(&pf, 1, ms(timeout));
	while (r < 0 && errno == EINTR);
	int soerr = 0;
	socklen_t el = sizeof(soerr);
	if (r == 0) {
		snprintf(err, errlen, "no answer on the control port %u within %.1f s", port, timeout);
		close(fd);
		return -ETIMEDOUT;
	}
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el);
	if (r < 0 || soerr) {
		int e = r < 0 ? errno : soerr;
		snprintf(err, errlen, "cannot connect to the control port %u: %s%s", port, strerror(e),
			 e == ECONNREFUSED ? " (is `txscale server` running there?)" : "");
		close(fd);
		return -e;
	}
	return fd;
}

/* The txscale greeting on a connected control socket (closed on failure). */
static struct txs_ctl_client *conn_greet(int fd, const char *host, const char *auth_file, double timeout, int *why,
					 char *err, size_t errlen)
{
	uint8_t key[TXS_CTL_KEY_LEN];
	if (auth_file) {
		int rc = txs_ctl_key_load(key, auth_file);
		if (rc < 0) {
			snprintf(err, errlen, "--auth-file '%s': %s", auth_file,
				 rc == -EINVAL ? "the file is empty" : rc == -EFBIG ? "over 4096 bytes" : strerror(-rc));
			close(fd);
			*why = -EINVAL;
			return NULL;
		}
	}
	return txs_ctl_client_greet(fd, host, auth_file ? key : NULL, timeout, why, err, errlen);
}

/* Connect and greet: NULL with err. */
static struct txs_ctl_client *conn_open(const char *host, uint16_t control_port, const char *auth_file,
					double timeout, char *err, size_t errlen)
{
	struct txs_addr a;
	if (txs_addr_parse(&a, host) < 0) {
		snprintf(err, errlen, "bad server address '%s'", host);
		return NULL;
	}
	int why, fd = connect_to(&a, control_port, timeout, err, errlen);
	if (fd < 0)
		return NULL;
	return conn_greet(fd, host, auth_file, timeout, &why, err, errlen);
}

static bool g_form; /* -c HOST, no --dev, no --server: a txscale or an iperf3 server */

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
	if (getenv(CHILD_ENV))
		return false;
	/* the iperf3 form: -c HOST, no --dev: a txscale or an iperf3 server,
	 * found by ctl_client_run (after send's own refusals) */
	g_form = dest && !o->server && argv_has(argc, argv, "-c", "--client") && !argv_has(argc, argv, NULL, "--dev");
	return o->server || o->reverse || o->bidir || g_form;
}

/* One connection tells the two apart: a txscale server greets first, an
 * iperf3 server waits for the client's cookie (a busy one says
 * ACCESS_DENIED at once); a second probe would take an `iperf3 -s -1`'s
 * only test. Sets *c (txscale) or *ip3_fd (iperf3), else err. */
static void probe(const struct ctl_client_opts *o, const char *dest, struct txs_ctl_client **c, int *ip3_fd, char *err,
		  size_t errlen)
{
	struct txs_addr a;
	int why = -EINVAL, fd = -1;
	if (txs_addr_parse(&a, dest) == 0)
		fd = connect_to(&a, o->control_port, CTL_PROBE_S, err, errlen);
	if (fd < 0) {
		snprintf(err, errlen,
			 "no txscale or iperf3 server at %s port %u; to send without a server, give DEST without -c, or "
			 "--dev udp",
			 dest, o->control_port);
		return;
	}
	switch (ctl_iperf3_probe(fd, CTL_PROBE_S)) {
	case 1:
		*ip3_fd = fd;
		return;
	case -1:
		close(fd);
		snprintf(err, errlen, "the iperf3 server at %s port %u is busy running a test", dest, o->control_port);
		return;
	default:
		*c = conn_greet(fd, dest, o->auth_file, o->ctl_timeout, &why, err, errlen);
	}
}

/* ---- relaying a child's stdout ---------------------------------------------------------------- */

struct relay {
	int fd; /* read end, -1 when done */
	bool json;
	char buf[1 << 16];
	size_t n;
	char *held; /* JSON mode: the summary line, printed after the peer's line */
};

static void relay_line(struct relay *r, const char *line, size_t n)
{
	if (r->json && !r->held && strstr(line, "\"type\":\"summary\"")) {
		r->held = strndup(line, n);
		return;
	}
	fwrite(line, 1, n, stdout);
}

/* Read what is there (no waiting); pass whole lines on. */
static void relay_pump(struct relay *r)
{
	while (r->fd >= 0) {
		ssize_t k = read(r->fd, r->buf + r->n, sizeof(r->buf) - r->n);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (k <= 0) {
			if (r->n)
				relay_line(r, r->buf, r->n);
			r->n = 0;
			close(r->fd);
			r->fd = -1;
			break;
		}
		r->n += (size_t)k;
		size_t start = 0;
		for (size_t i = 0; i < r->n; i++)
			if (r->buf[i] == '\n') {
				relay_line(r, r->buf + start, i + 1 - start);
				start = i + 1;
			}
		if (start == 0 && r->n == sizeof(r->buf)) { /* an endless line: pass it on */
			relay_line(r, r->buf, r->n);
			r->n = 0;
		} else {
			memmove(r->buf, r->buf + start, r->n - start);
			r->n -= start;
		}
	}
	fflush(stdout);
}

static int relay_open(struct relay *r, bool json, int *wr)
{
	int p[2];
	r->fd = -1;
	r->json = json;
	r->n = 0;
	r->held = NULL;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	r->fd = p[0];
	*wr = p[1];
	return 0;
}

static void flush_held(struct relay *r)
{
	if (r->held) {
		fputs(r->held, stdout);
		free(r->held);
		r->held = NULL;
		fflush(stdout);
	}
}

/* ---- the client run ---------------------------------------------------------------------------- */

struct client {
	const struct ctl_client_opts *o;
	const struct ctl_send_info *s;
	int argc;
	char **argv;
	struct txs_ctl_client *c;
	char exe[PATH_MAX];
	struct txs_paths p;
	char peer_json[PATH_MAX];
	struct relay rs, rr; /* our sender's and our receiver's stdout */
	pid_t pid[2];        /* our sender and receiver (TXS_CTL_SIDE_*), -1: none */
	bool self[2];        /* ... exited by itself, with status st */
	int st[2];
	double est; /* how long we expect to send, s (0: unknown) */
	char err[512];
};

static int cb_stopping(void *arg)
{
	(void)arg;
	return g_stop;
}

static unsigned out_fds(void *arg, int *fds, unsigned max)
{
	struct client *k = arg;
	unsigned n = 0;
	if (n < max && k->rs.fd >= 0)
		fds[n++] = k->rs.fd;
	if (n < max && k->rr.fd >= 0)
		fds[n++] = k->rr.fd;
	return n;
}

static void pump_all(void *arg)
{
	struct client *k = arg;
	relay_pump(&k->rs);
	relay_pump(&k->rr);
}

static void cb_warn(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "txscale send: %s\n", line);
}

static bool cb_ended(void *arg, int side)
{
	struct client *k = arg;
	if (k->pid[side] <= 0 || !txs_reaped(k->pid[side], &k->st[side]))
		return false;
	k->self[side] = true;
	return true;
}

static void cb_stop(void *arg, int side)
{
	struct client *k = arg;
	if (k->pid[side] > 0 && !k->self[side])
		kill(k->pid[side], SIGINT);
}

/* The side has ended or is stopped now; true when it exited by itself. */
static bool side_end(struct client *k, int side)
{
	if (!k->self[side] && k->pid[side] > 0)
		k->self[side] = txs_stop_child(k->pid[side], 0, &k->st[side]);
	k->pid[side] = -1;
	return k->self[side];
}

static char *cb_send_finish(void *arg, bool *failed, char *err, size_t errlen)
{
	struct client *k = arg;
	bool self = side_end(k, TXS_CTL_SIDE_SEND);
	int st = k->st[TXS_CTL_SIDE_SEND];
	size_t len = 0;
	char *sj = txs_slurp(k->p.send_json, &len);
	if (sj)
		len = txs_trim(sj, len);
	*failed = !self || !WIFEXITED(st) || (WEXITSTATUS(st) != 0 && !g_stop);
	if (!sj || !len) {
		char ex[64] = "stopped";
		if (self)
			txs_describe_exit(st, ex, sizeof(ex));
		snprintf(err, errlen, "our sender failed (%s)", ex);
		free(sj);
		return NULL;
	}
	return sj;
}

static bool cb_recv_finish(void *arg)
{
	struct client *k = arg;
	bool self = side_end(k, TXS_CTL_SIDE_RECV);
	int st = k->st[TXS_CTL_SIDE_RECV];
	relay_pump(&k->rr);
	return self && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int cb_peer_summary(void *arg, const char *summary, const struct txs_ctl_clock_rep *c)
{
	struct client *k = arg;
	return txs_ctl_peer_summary_save(k->peer_json, summary, c) < 0 ? -errno : 0;
}

/* Our receiver (-R, --bidir): bound to the address the server sees us at. */
/* ops.recv_start */
static int start_own_recv(void *ctx, const char *local, const int64_t *clock_offset_ns, char *err, size_t errlen)
{
	struct client *k = ctx;
	const struct ctl_send_info *s = k->s;
	double est = k->est;
	int pfd[2], out = -1;
	if (pipe2(pfd, O_CLOEXEC) < 0 || relay_open(&k->rr, s->json, &out) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	bool bidir = k->o->bidir;
	struct txs_args a = { .n = 0 };
	char cpus[TXS_MAX_CORES * 8] = "";
	txs_arg(&a, k->exe);
	txs_arg(&a, "recv");
	txs_arg(&a, "--dev");
	txs_arg(&a, "udp");
	txs_arg(&a, "-B");
	txs_arg(&a, local);
	txs_arg(&a, "-p");
	txs_arg(&a, txs_arg_fmt(&a, "%.0f", s->port));
	txs_arg(&a, "-i");
	txs_arg(&a, txs_arg_fmt(&a, "%.3f", bidir ? 0 : s->interval));
	if (s->json)
		txs_arg(&a, "-J");
	txs_arg(&a, "--idle");
	txs_arg(&a, txs_arg_fmt(&a, "%.3f", OWN_IDLE_S));
	txs_arg(&a, "-t");
	txs_arg(&a, txs_arg_fmt(&a, "%.3f", est > 0 ? est + EXTRA_S : 3600));
	txs_arg(&a, "--sender-summary");
	txs_arg(&a, k->peer_json);
	txs_arg(&a, "--summary-file");
	txs_arg(&a, k->p.recv_json);
	txs_arg(&a, "--ready-fd");
	txs_arg(&a, txs_arg_fmt(&a, "%.0f", pfd[1]));
	if (clock_offset_ns) { /* we receive: our clock minus the server's */
		txs_arg(&a, "--clock-offset");
		txs_arg(&a, txs_arg_fmt(&a, "%.0f", (double)*clock_offset_ns));
	}
	if (bidir) {
		txs_arg(&a, "--no-pin");
	} else {
		if (s->threads) {
			txs_arg(&a, "-P");
			txs_arg(&a, txs_arg_fmt(&a, "%.0f", s->threads));
		}
		if (s->cpus && s->cpus->n) {
			size_t off = 0;
			for (unsigned i = 0; i < s->cpus->n && off < sizeof(cpus) - 8; i++)
				off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d", i ? "," : "",
							s->cpus->cpu[i]);
			txs_arg(&a, "-A");
			txs_arg(&a, cpus);
		}
		if (s->no_pin)
			txs_arg(&a, "--no-pin");
	}
	pid_t pid = a.overflow ? -E2BIG : txs_spawn_io(&a, out, NULL, TXS_PROC_INHERIT, pfd[1]);
	close(out);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		snprintf(err, errlen, "cannot start our receiver: %s", strerror((int)-pid));
		return -1;
	}
	k->pid[TXS_CTL_SIDE_RECV] = pid;
	double t0 = txs_mono_s();
	char line[16] = "";
	size_t got = 0;
	while (txs_mono_s() - t0 < READY_TIMEOUT_S && !g_stop) {
		relay_pump(&k->rr);
		if (txs_ready_line_step(pfd[0], line, sizeof(line), &got) != 0)
			break;
	}
	close(pfd[0]);
	relay_pump(&k->rr);
	if (strncmp(line, "ready\n", 6) != 0) {
		snprintf(err, errlen, "our receiver did not start (its message is above)");
		return -1;
	}
	return 0;
}

/* ops.send_start: our sender, `txscale send` with the user's own options, on udp unless --dev says otherwise. */
static int start_own_send(void *ctx, char *err, size_t errlen)
{
	struct client *k = ctx;
	int argc = k->argc;
	char **argv = k->argv;
	int out = -1;
	if (relay_open(&k->rs, k->s->json, &out) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	struct txs_args a = { .n = 0 };
	txs_arg(&a, k->exe);
	txs_arg(&a, "send");
	txs_arg(&a, "--dev");
	txs_arg(&a, "udp");
	for (int i = 1; i < argc; i++)
		txs_arg(&a, argv[i]);
	txs_arg(&a, "--summary-file");
	txs_arg(&a, k->p.send_json);
	setenv(CHILD_ENV, "1", 1);
	pid_t pid = a.overflow ? -E2BIG : txs_spawn_io(&a, out, NULL, TXS_PROC_INHERIT, -1);
	unsetenv(CHILD_ENV);
	close(out);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start our sender: %s", strerror((int)-pid));
		return -1;
	}
	k->pid[TXS_CTL_SIDE_SEND] = pid;
	k->self[TXS_CTL_SIDE_SEND] = false;
	return 0;
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
		if (s->json)
			flush_held(&k->rs);
	}
	if (t->rev) {
		ctl_print_peer("sender", s->dest, res->peer_send, s->json);
		if (s->json)
			flush_held(&k->rr);
	}
}

/* The connection: to a txscale server, or (-c HOST alone) to whichever
 * answers. 1: an iperf3 server on *ip3_fd; 0: k->c; -1: k->err. */
static int client_connect(struct client *k, int *ip3_fd)
{
	const struct ctl_client_opts *o = k->o;
	if (!g_form) {
		k->c = conn_open(k->s->dest, o->control_port, o->auth_file, o->ctl_timeout, k->err, sizeof(k->err));
		return k->c ? 0 : -1;
	}
	*ip3_fd = -1;
	probe(o, k->s->dest, &k->c, ip3_fd, k->err, sizeof(k->err));
	return *ip3_fd >= 0 ? 1 : k->c ? 0 : -1;
}

/* This program and a temporary directory for the children's summaries. 0, or 1 (said). */
static int client_prepare(struct client *k)
{
	k->pid[0] = k->pid[1] = -1;
	k->rs.fd = k->rr.fd = -1;
	ssize_t n = readlink("/proc/self/exe", k->exe, sizeof(k->exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "txscale send: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
		return 1;
	}
	k->exe[n] = 0;
	if (txs_paths_make(&k->p, "client") < 0) {
		fprintf(stderr, "txscale send: cannot make a temporary directory: %s\n", strerror(errno));
		return 1;
	}
	snprintf(k->peer_json, sizeof(k->peer_json), "%s/peer.json", k->p.dir);
	return 0;
}

/* Stop what still runs, pass the rest of its output on, say the error,
 * close the connection (bye when ret is 0), remove the files. */
static void client_cleanup(struct client *k, int ret)
{
	for (int i = 0; i < 2; i++)
		if (k->pid[i] > 0)
			txs_stop_child(k->pid[i], 0, NULL);
	relay_pump(&k->rs);
	relay_pump(&k->rr);
	flush_held(&k->rs);
	flush_held(&k->rr);
	if (k->rs.fd >= 0)
		close(k->rs.fd);
	if (k->rr.fd >= 0)
		close(k->rr.fd);
	if (k->err[0])
		fprintf(stderr, "txscale send: %s: %s\n", k->s->dest, k->err);
	txs_ctl_client_close(k->c, ret == 0);
	unlink(k->peer_json);
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", k->peer_json);
	unlink(tmp);
	txs_paths_remove(&k->p);
}

int ctl_client_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, int argc, char **argv)
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
	*k = (struct client){ .o = o, .s = s, .argc = argc, .argv = argv };
	int ret = client_prepare(k);
	if (ret) {
		free(k);
		return ret;
	}
	ret = 1;
	struct sigaction sa = { .sa_handler = on_signal }, oi, ot;
	g_soft_stop = fwd && !rev;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	signal(SIGPIPE, SIG_IGN);
	int ip3_fd = -1, conn = client_connect(k, &ip3_fd);
	if (conn == 1) {
		txs_paths_remove(&k->p);
		free(k);
		sigaction(SIGINT, &oi, NULL);
		sigaction(SIGTERM, &ot, NULL);
		return ctl_iperf3_run(o, s, ip3_fd);
	}
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
		struct txs_ctl_client_ops ops = { .arg = k, .stopping = cb_stopping, .pump = pump_all, .fds = out_fds, .warn = cb_warn,
						  .recv_start = start_own_recv, .peer_summary = cb_peer_summary,
						  .send_start = start_own_send, .ended = cb_ended, .stop = cb_stop,
						  .send_finish = cb_send_finish, .recv_finish = cb_recv_finish };
		if (txs_ctl_client_run(k->c, &t, &ops, &res, k->err, sizeof(k->err)) == 0) {
			print_peers(k, &t, &res);
			ret = res.failed ? 1 : 0;
		}
	}
	if (g_stop > 1)
		ret = 130;
	client_cleanup(k, ret);
	free(res.peer_send);
	free(res.peer_recv);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
	free(k);
	return ret;
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
		g_ndr_conn = conn_open(o->host, o->control_port, o->auth_file, 10.0, err, errlen);
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
