/* SPDX-License-Identifier: MIT */
/* The client of the control channel (docs/control.md): `txscale send -c
 * HOST --server` (and -R, --bidir). It fills the test from send's options
 * and prints the server's side next to ours; lib/ctl connects, runs the
 * session and our sides on threads of this process
 * (txs_ctl_client_run_sides): send.c's session from the user's options,
 * recv.c's for -R. Also the remote receiver of `txscale ndr --remote`. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/txscale.h>
#include <txscale/ctl.h>
#include <txscale/ctl_session.h>
#include "ctl_cli.h"
#include "opt.h"
#include "common/proc.h"

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
static bool g_port; /* -p given: the server's receiver listens there, else on a port it chooses */

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
	g_port = argv_has(argc, argv, "-p", "--port") || argv_has(argc, argv, NULL, "--dport");
	g_form = dest && !o->server && argv_has(argc, argv, "-c", "--client") && !g_dev;
	return o->server || o->reverse || o->bidir || o->iperf2 || g_form;
}

/* ---- the client run ---------------------------------------------------------------------------- */

struct client {
	const struct ctl_client_opts *o;
	const struct ctl_send_info *s;
	const struct ctl_own_send *own;
	double est; /* how long we expect to send, s (0: unknown) */
	pthread_mutex_t first_mu; /* the first line, once, by whichever side starts first */
	bool first_done;
};

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

/* The first line names the protocol (an iperf3 server's says "iperf3
 * server"): once the server took the test (the secret, the slot and the
 * test's setup passed), before either side's own lines. A refused client
 * prints the refusal alone. */
static void first_line(void *arg)
{
	struct client *k = arg;
	const struct ctl_client_opts *o = k->o;
	const struct ctl_send_info *s = k->s;
	pthread_mutex_lock(&k->first_mu);
	if (!k->first_done && !s->json) {
		char dp[64];
		if (g_port)
			snprintf(dp, sizeof(dp), "data port %u", s->port);
		else
			snprintf(dp, sizeof(dp), "data port %s", o->bidir ? "each receiver's choice" : o->reverse ? "our choice"
													  : "the server's choice");
		printf("txscale send: txscale server %s, control port %u (txscale's protocol): %s test, %s\n", s->dest,
		       o->control_port, o->bidir ? "bidirectional" : o->reverse ? "reverse (the server sends)" : "forward (we send)",
		       dp);
		fflush(stdout);
	}
	k->first_done = true;
	pthread_mutex_unlock(&k->first_mu);
}

/* Our sender: the user's own options, on udp unless --dev says otherwise. */
static int cb_send(void *arg, const struct txs_ctl_side_io *io)
{
	struct client *k = arg;
	first_line(k);
	return k->own->run(k->own->arg, g_dev ? NULL : "udp", io);
}

/* Our receiver (-R, --bidir): bound to the address the server sees us at. */
static int cb_recv(void *arg, const char *local, const int64_t *clock_offset_ns, const struct txs_ctl_side_io *io)
{
	struct client *k = arg;
	const struct ctl_send_info *s = k->s;
	bool bidir = k->o->bidir;
	struct ctl_own_recv rv = { .bind = local, .port = io->port ? io->port : s->port, .interval = bidir ? 0 : s->interval,
				   .idle = OWN_IDLE_S, .time = k->est > 0 ? k->est + EXTRA_S : 3600, .json = s->json,
				   .clock_set = clock_offset_ns != NULL, /* we receive: our clock minus the server's */
				   .clock_offset_ns = clock_offset_ns ? *clock_offset_ns : 0,
				   .clock_error_ns = io->clock_error_ns,
				   .threads = bidir ? 0 : s->threads, .cpus = bidir ? NULL : s->cpus,
				   .no_pin = bidir || s->no_pin, .first = first_line, .first_arg = k };
	return recv_run_own(&rv, io);
}

/* The test as the library runs it. */
static void client_test(const struct client *k, struct txs_ctl_client_test *t)
{
	const struct ctl_client_opts *o = k->o;
	const struct ctl_send_info *s = k->s;
	*t = (struct txs_ctl_client_test){ .fwd = !o->reverse || o->bidir, .rev = o->reverse || o->bidir,
					    .est = k->est, .own_idle = OWN_IDLE_S, .extra = EXTRA_S, .any_port = !g_port };
	t->stamp_shift_ns = s->stamp_shift_ns; /* test only: the clock our sender's stamps come from is off by this much */
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

/* A summary of ours held back (-J): after the server's line. */
static void print_held(const char *sum, bool json)
{
	if (json && sum)
		fputs(sum, stdout);
}

/* The server's lines and ours: the server's line comes before our summary in JSON. */
static void print_peers(const struct client *k, const struct txs_ctl_client_test *t,
			const struct txs_ctl_client_result *res)
{
	const struct ctl_send_info *s = k->s;
	if (t->fwd) {
		ctl_print_peer("receiver", s->dest, res->peer_recv, s->json);
		print_held(res->own_send, s->json);
	}
	if (t->rev) {
		ctl_print_peer("sender", s->dest, res->peer_send, s->json);
		print_held(res->own_recv, s->json);
	}
}

/* The test with a txscale server: the exit status. */
static int client_test_run(struct client *k, struct txs_ctl_client *c, char *err, size_t errlen)
{
	const struct ctl_send_info *s = k->s;
	k->est = s->time > 0 ? s->time : s->count && s->rate_pps > 0 ? (double)s->count / s->rate_pps : 0;
	if (txs_ctl_client_waited(c)[0])
		fprintf(stderr, "txscale send: the server made us wait: %s\n", txs_ctl_client_waited(c));
	struct txs_ctl_client_test t;
	client_test(k, &t);
	struct txs_ctl_sides sides = { .arg = k, .hold = s->json, .stopping = cb_stopping, .warn = cb_warn,
				       .send = cb_send, .recv = cb_recv };
	struct txs_ctl_client_result res;
	int ret = 1;
	if (txs_ctl_client_run_sides(c, &t, &sides, &res, err, errlen) == 0) {
		print_peers(k, &t, &res);
		ret = res.failed ? 1 : 0;
	} else {
		print_held(res.own_send, s->json);
		print_held(res.own_recv, s->json);
	}
	fflush(stdout);
	free(res.peer_send);
	free(res.peer_recv);
	free(res.own_send);
	free(res.own_recv);
	return ret;
}

int ctl_client_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, const struct ctl_own_send *own)
{
	bool fwd = !o->reverse || o->bidir, rev = o->reverse || o->bidir;
	if (o->ctl_timeout < 0.1 || o->ctl_timeout > 3600) {
		fprintf(stderr, "txscale send: bad value for --ctl-timeout: '%g': expected 0.1 to 3600 seconds\n",
			o->ctl_timeout);
		return 2;
	}
	struct client k = { .o = o, .s = s, .own = own, .first_mu = PTHREAD_MUTEX_INITIALIZER };
	if (o->iperf2 && (o->server || o->reverse || o->bidir || g_dev)) {
		fprintf(stderr, "txscale send: --iperf2 is a test against an iperf 2 server, one way over udp: not with "
				"%s\n", o->server ? "--server" : o->reverse ? "-R" : o->bidir ? "--bidir" : "--dev");
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_signal }, oi, ot;
	g_soft_stop = fwd && !rev;
	sigaction(SIGINT, &sa, &oi);
	sigaction(SIGTERM, &sa, &ot);
	signal(SIGPIPE, SIG_IGN);
	if (o->iperf2) {
		int r = ctl_iperf2_run(o, s, g_port, cb_stopping, NULL);
		sigaction(SIGINT, &oi, NULL);
		sigaction(SIGTERM, &ot, NULL);
		return g_stop > 1 ? 130 : r;
	}
	/* to a txscale server, or (-c HOST alone) to whichever answers */
	struct txs_ctl_client *c = NULL;
	char err[512] = "";
	int ret = 1, ip3_fd = -1, conn = -1;
	if (!g_form) {
		c = txs_ctl_client_open(s->dest, s->bind, o->control_port, o->auth_file, o->ctl_timeout, NULL, err, sizeof(err));
		conn = c ? 0 : -1;
	} else {
		conn = txs_ctl_client_probe(s->dest, s->bind, o->control_port, o->auth_file, o->ctl_timeout, &c, &ip3_fd, err,
					    sizeof(err));
	}
	if (conn == 0)
		ret = client_test_run(&k, c, err, sizeof(err));
	if (g_stop > 1)
		ret = 130;
	if (conn != 1 && err[0])
		fprintf(stderr, "txscale send: %s: %s\n", s->dest, err);
	txs_ctl_client_close(c, ret == 0);
	sigaction(SIGINT, &oi, NULL);
	sigaction(SIGTERM, &ot, NULL);
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
		g_ndr_conn = txs_ctl_client_open(o->host, NULL, o->control_port, o->auth_file, 10.0, NULL, err, errlen);
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
	int wrc = rc == 0 ? txs_write_atomic(recv_json_path, rj) : 0;
	if (wrc < 0) {
		snprintf(err, errlen, "cannot write the receiver's summary: %s", strerror(-wrc));
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
