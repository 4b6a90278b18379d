/* SPDX-License-Identifier: MIT */
/* One trial of a search: a receiver, a sender, both bounded, the two
 * summaries read back (trial.h; docs/ndr.md "One trial"). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "netdev/l2.h"
#include "netdev/txtime.h"
#include "trial.h"

#define READY_TIMEOUT_S 10.0 /* receiver: from start to bound socket; the sender's check */
#define RECV_IDLE "0.5"      /* receiver ends this long after the last packet */
#define RECV_EXTRA_S 3.0     /* receiver's own -t: trial + this */
#define CHILD_EXTRA_S 15.0   /* both children killed at trial + this */

int txs_trial_open(struct txs_trial_runner *r, const struct txs_trial_conf *c, const char *what, char *err,
		   size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->c = *c;
	if (c->recv_args) {
		snprintf(r->recv_buf, sizeof(r->recv_buf), "%s", c->recv_args);
		char *save = NULL;
		for (char *t = strtok_r(r->recv_buf, " \t", &save); t && r->recv_argc < TXS_ARRAY_SIZE(r->recv_argv);
		     t = strtok_r(NULL, " \t", &save))
			r->recv_argv[r->recv_argc++] = t;
	}
	size_t off = 0;
	for (unsigned i = 0; i < c->n_cpus && off < sizeof(r->cpus); i++)
		off += (size_t)snprintf(r->cpus + off, sizeof(r->cpus) - off, "%s%d", i ? "," : "", c->cpus[i]);
	r->recv_cpu = c->remote ? -1 : txs_ndr_recv_cpu(c->cpus, c->n_cpus, c->threads, r->recv_argv, r->recv_argc);
	int rc = txs_paths_make(&r->p, what);
	if (rc < 0)
		snprintf(err, errlen, "cannot make a temporary directory: %s", strerror(-rc));
	return rc;
}

void txs_trial_close(struct txs_trial_runner *r)
{
	txs_paths_remove(&r->p);
}

static void sender_args(const struct txs_trial_runner *r, struct txs_args *a, const struct txs_trial_spec *sp,
			bool check)
{
	const struct txs_trial_conf *c = &r->c;
	txs_arg_prefix(a, c->send_netns, c->exe);
	txs_arg(a, "send");
	txs_arg(a, "--dev");
	txs_arg(a, c->dev);
	txs_arg(a, "-p");
	txs_arg(a, txs_arg_fmt(a, "%.0f", c->port));
	txs_arg(a, "-l");
	txs_arg(a, sp->length);
	/* send's -b is each thread's (iperf3's per stream): the trial's rate split */
	unsigned nthr = c->threads ? c->threads : c->n_cpus ? c->n_cpus : 1;
	txs_arg(a, "-b");
	txs_arg(a, nthr > 1 ? txs_arg_fmt(a, "%.6fpps", sp->rate / nthr) : txs_arg_fmt(a, "%.0fpps", sp->rate));
	txs_arg(a, "-t");
	txs_arg(a, txs_arg_fmt(a, "%.3f", sp->secs));
	if (sp->count) {
		txs_arg(a, "-n");
		txs_arg(a, txs_arg_fmt(a, "%.0f", (double)sp->count));
	}
	txs_arg(a, "-J");
	txs_arg(a, "-i");
	txs_arg(a, "0");
	txs_arg(a, "--summary-file");
	txs_arg(a, r->p.send_json);
	if (c->threads) {
		txs_arg(a, "-P");
		txs_arg(a, txs_arg_fmt(a, "%.0f", c->threads));
	}
	if (c->n_cpus) {
		txs_arg(a, "-A");
		txs_arg(a, r->cpus);
	}
	if (c->bind) {
		txs_arg(a, "-B");
		txs_arg(a, c->bind);
	}
	if (check)
		txs_arg(a, "--dry-run");
	txs_arg(a, c->dest);
}

static void receiver_args(const struct txs_trial_runner *r, struct txs_args *a, double secs, int ready_fd)
{
	const struct txs_trial_conf *c = &r->c;
	txs_arg_prefix(a, c->recv_netns, c->exe);
	txs_arg(a, "recv");
	txs_arg(a, "--dev");
	txs_arg(a, c->recv_dev);
	txs_arg(a, "-B");
	txs_arg(a, c->dest);
	txs_arg(a, "-p");
	txs_arg(a, txs_arg_fmt(a, "%.0f", c->port));
	txs_arg(a, "-J");
	txs_arg(a, "-i");
	txs_arg(a, "0");
	txs_arg(a, "--idle");
	txs_arg(a, RECV_IDLE);
	txs_arg(a, "-t");
	txs_arg(a, txs_arg_fmt(a, "%.3f", secs + RECV_EXTRA_S));
	txs_arg(a, "--sender-summary");
	txs_arg(a, r->p.send_json);
	txs_arg(a, "--summary-file");
	txs_arg(a, r->p.recv_json);
	txs_arg(a, "--ready-fd");
	txs_arg(a, txs_arg_fmt(a, "%.0f", ready_fd));
	if (r->recv_cpu >= 0) {
		txs_arg(a, "-A");
		txs_arg(a, txs_arg_fmt(a, "%.0f", r->recv_cpu));
	}
	for (unsigned i = 0; i < r->recv_argc; i++)
		txs_arg(a, r->recv_argv[i]);
}

/* With the receiver in --recv-netns and no --send-netns, the sender runs in
 * this namespace. A DEST routed out of a hardware NIC here leaves the host
 * instead of reaching that namespace: refused (-EINVAL) before anything is
 * sent. Where the route cannot be read (no route) the sender's own check
 * decides. */
static int route_stays(const struct txs_trial_conf *c, char *err, size_t errlen)
{
	struct txs_addr dst;
	int oif;
	char ifn[IF_NAMESIZE];
	if (c->remote || !c->recv_netns || c->send_netns || txs_addr_parse(&dst, c->dest) < 0 ||
	    txs_route_oif(&dst, &oif) < 0 || !txs_l2_if_hw(oif, ifn))
		return 0;
	snprintf(err, errlen, "--recv-netns %s without --send-netns: the sender runs in this namespace, where %s is "
		 "routed out of %s, a network interface that leaves this host; give --send-netns NS (the namespace "
		 "on the receiver's link) or run the command there", c->recv_netns, c->dest, ifn);
	return -EINVAL;
}

int txs_trial_check_sender(struct txs_trial_runner *r, const struct txs_trial_spec *sp, char *err, size_t errlen)
{
	int rc = route_stays(&r->c, err, errlen);
	if (rc < 0)
		return rc;
	struct txs_args sa = { .n = 0 };
	sender_args(r, &sa, sp, true);
	if (sa.overflow) {
		snprintf(err, errlen, "too many sender arguments");
		return -E2BIG;
	}
	pid_t pid = txs_spawn(&sa, r->p.send_err, -1);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-pid));
		return (int)pid;
	}
	int st = 0;
	bool ended = txs_stop_child(pid, READY_TIMEOUT_S, &st);
	unlink(r->p.send_json);
	if (ended && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	/* the sender's own line names the bad value (e.g. "txscale send: bad value for -l/--length") */
	txs_child_why(err, errlen, "sender check failed", ended ? &st : NULL, "did not finish", r->p.send_err);
	return ended && WIFEXITED(st) && WEXITSTATUS(st) == 2 ? -EINVAL : -EIO;
}

/* Our receiver for a trial of secs, started and ready: its pid, or -errno with err */
static pid_t start_receiver(struct txs_trial_runner *r, double secs, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	struct txs_args ra = { .n = 0 };
	receiver_args(r, &ra, secs, pfd[1]);
	if (ra.overflow) {
		close(pfd[0]);
		close(pfd[1]);
		snprintf(err, errlen, "too many receiver arguments");
		return -E2BIG;
	}
	return txs_spawn_ready(&ra, r->p.recv_err, pfd, "the receiver", READY_TIMEOUT_S, r->c.stop, err, errlen);
}

/* Rest until settle s after the last trial's end: 0, or -EINTR */
static int settle(const struct txs_trial_runner *r, double secs)
{
	while (r->last_end > 0 && txs_mono_s() < r->last_end + secs) {
		if (txs_stopped(r->c.stop))
			return -EINTR;
		double left = r->last_end + secs - txs_mono_s();
		struct timespec ts = { 0, (long)(fmin(left, 0.05) * 1e9) };
		if (left > 0)
			nanosleep(&ts, NULL);
	}
	return txs_stopped(r->c.stop) ? -EINTR : 0;
}

int txs_trial_run(struct txs_trial_runner *r, const struct txs_trial_spec *sp, struct txs_ndr_trial *t, char *err,
		  size_t errlen)
{
	const struct txs_trial_conf *c = &r->c;
	struct txs_child ch[2] = { { .pid = -1, .who = "the sender", .errpath = r->p.send_err, .fail_fast = true },
				   { .pid = -1, .who = "the receiver", .errpath = r->p.recv_err } };
	memset(t, 0, sizeof(*t));
	unlink(r->p.send_json);
	unlink(r->p.recv_json);
	int rc = settle(r, sp->settle);
	if (rc < 0)
		return rc;
	if (c->remote) {
		if (c->remote->begin(c->remote->arg, c->port, c->recv_dev, sp->secs, err, errlen) < 0)
			return -EIO;
	} else if ((ch[1].pid = start_receiver(r, sp->secs, err, errlen)) < 0) {
		return (int)ch[1].pid;
	}
	struct txs_args sa = { .n = 0 };
	sender_args(r, &sa, sp, false);
	ch[0].pid = sa.overflow ? -E2BIG : txs_spawn(&sa, r->p.send_err, -1);
	if (ch[0].pid < 0) {
		if (sa.overflow)
			snprintf(err, errlen, "too many sender arguments");
		else
			snprintf(err, errlen, "cannot start the sender: %s", strerror((int)-ch[0].pid));
		if (ch[1].pid > 0)
			txs_stop_child(ch[1].pid, 0, NULL);
		return (int)ch[0].pid;
	}
	rc = txs_wait_children(ch, 2, sp->secs + CHILD_EXTRA_S, c->stop, err, errlen);
	r->last_end = txs_mono_s();
	if (rc < 0)
		return rc;
	if (c->remote && c->remote->end(c->remote->arg, r->p.send_json, r->p.recv_json, err, errlen) < 0)
		return -EIO;
	return txs_ndr_trial_load(t, r->p.send_json, r->p.recv_json, err, errlen);
}
