/* SPDX-License-Identifier: MIT */
/* txscale ndr: the highest rate at which `txscale recv` counts no loss
 * (docs/ndr.md). Each trial runs this very binary twice as child processes,
 * a receiver and then a sender (optionally each in a network namespace via
 * `ip netns exec`), reads both JSON summaries and feeds the verdict to the
 * search in lib/session/ndr.c. Every child is bounded in time and killed on a
 * timeout or SIGINT; the temporary directory is removed on every exit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include "cli.h"
#include <txscale/ndr.h>
#include "opt.h"
#include "common/proc.h"
#include "ctl_cli.h"

#define READY_TIMEOUT_S 10.0 /* receiver: from start to bound socket */
#define RECV_IDLE "0.5"      /* receiver ends this long after the last packet */
#define RECV_EXTRA_S 3.0     /* receiver's own -t: trial + this */
#define CHILD_EXTRA_S 15.0   /* both children killed at trial + this */
#define MEASURE_MAX_S 1.0    /* the unlimited trial without --hi */

struct pct {
	bool set;
	double v;
};

struct ndr_cfg {
	const char *dev;
	uint16_t port;
	unsigned length;
	unsigned threads;
	struct opt_cpus cpus;
	const char *bind;
	double trial;
	struct pct precision, loss;
	struct opt_rate lo, hi;
	unsigned max_trials;
	const char *send_netns, *recv_netns;
	const char *recv_dev, *recv_args;
	bool json;
	struct ctl_ndr_opts remote; /* --remote HOST: the receiver is a txscale server (client.c) */
};

static int parse_pct(const char *val, void *dst, char *err, size_t errlen)
{
	struct pct *p = dst;
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (end != val && *end == '%')
		end++;
	if (errno || end == val || *end || !isfinite(v) || v < 0 || v >= 100) {
		snprintf(err, errlen, "expected a percentage 0 <= PCT < 100, e.g. 1 or 0.5");
		return -1;
	}
	p->set = true;
	p->v = v;
	return 0;
}

#define O(f) offsetof(struct ndr_cfg, f)
static const struct opt ndr_opts[] = {
	{ "dev", 0, OPT_STR, O(dev), "DEV", "sender device (txscale send --dev)", "udp" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "UDP port", "5201" },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 65527 },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "sender threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "sender CPUs, e.g. 0-1 (the receiver gets the first other CPU unless --recv-args pins it)" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "sender source address" },
	{ "trial", 0, OPT_SECONDS, O(trial), "SEC", "length of each trial's sending", "2" },
	{ "precision", 0, OPT_CUSTOM, O(precision), "PCT", "stop when (hi - lo) / hi <= PCT percent", "1", 0, 0, parse_pct },
	{ "lo", 0, OPT_RATE, O(lo), "RATE", "lower bound, packets/s", "10k" },
	{ "hi", 0, OPT_RATE, O(hi), "RATE", "upper bound, packets/s (default: the sender's unlimited rate, measured first)" },
	{ "max-trials", 0, OPT_UINT, O(max_trials), "N", "at most N trials, the confirmation included", "20", 3, TXS_NDR_MAX_TRIALS },
	{ "loss", 0, OPT_CUSTOM, O(loss), "PCT", "acceptable loss in percent (0: zero loss)", "0", 0, 0, parse_pct },
	{ "send-netns", 0, OPT_STR, O(send_netns), "NS", "run the sender in network namespace NS (ip netns exec)" },
	{ "recv-netns", 0, OPT_STR, O(recv_netns), "NS", "run the receiver in network namespace NS (ip netns exec)" },
	{ "recv-dev", 0, OPT_STR, O(recv_dev), "DEV", "receiver input (txscale recv --dev)", "udp" },
	{ "recv-args", 0, OPT_STR, O(recv_args), "ARGS", "extra txscale recv options, split at spaces, e.g. \"--rcvbuf 4096\"" },
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

/* ---- one trial ------------------------------------------------------------------------ */

struct run {
	const struct ndr_cfg *cfg;
	const char *dest;
	char exe[PATH_MAX];
	struct txs_paths p;
	char sender_cpus[TXS_MAX_CORES * 8];
	int recv_cpu; /* -1: let recv choose */
	const char *recv_argv[32];
	unsigned recv_argc;
	char recv_args_buf[1024];
	char err[512];
};

static void recv_argv_split(struct run *r)
{
	r->recv_argc = 0;
	if (!r->cfg->recv_args)
		return;
	snprintf(r->recv_args_buf, sizeof(r->recv_args_buf), "%s", r->cfg->recv_args);
	char *save = NULL;
	for (char *t = strtok_r(r->recv_args_buf, " \t", &save); t && r->recv_argc < 32;
	     t = strtok_r(NULL, " \t", &save))
		r->recv_argv[r->recv_argc++] = t;
}

/* Does --recv-args already choose the receiver's CPUs or threads? */
static bool recv_args_pin(const struct run *r)
{
	static const char *const k[] = { "-A", "--affinity", "--no-pin", "-P", "--parallel" };
	for (unsigned i = 0; i < r->recv_argc; i++)
		for (unsigned j = 0; j < TXS_ARRAY_SIZE(k); j++)
			if (strncmp(r->recv_argv[i], k[j], strlen(k[j])) == 0)
				return true;
	return false;
}

/* The sender's CPUs (-A; without it send is unpinned, and the first P
 * online CPUs are counted as its share), and the first online CPU outside
 * them for the receiver. */
static void pick_cpus(struct run *r)
{
	const struct ndr_cfg *c = r->cfg;
	cpu_set_t online, used;
	CPU_ZERO(&online);
	CPU_ZERO(&used);
	sched_getaffinity(0, sizeof(online), &online);
	size_t off = 0;
	r->sender_cpus[0] = 0;
	for (unsigned i = 0; i < c->cpus.n; i++) {
		CPU_SET(c->cpus.cpu[i], &used);
		off += (size_t)snprintf(r->sender_cpus + off, sizeof(r->sender_cpus) - off, "%s%d", i ? "," : "",
					c->cpus.cpu[i]);
		if (off >= sizeof(r->sender_cpus))
			break;
	}
	if (!c->cpus.n) {
		unsigned want = c->threads ? c->threads : 1;
		for (int cpu = 0; cpu < CPU_SETSIZE && want; cpu++)
			if (CPU_ISSET(cpu, &online)) {
				CPU_SET(cpu, &used);
				want--;
			}
	}
	r->recv_cpu = -1;
	if (recv_args_pin(r))
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &online) && !CPU_ISSET(cpu, &used)) {
			r->recv_cpu = cpu;
			break;
		}
}

/* Kill what runs, say why. */
static int abort_trial(pid_t rp, pid_t sp, int rc)
{
	txs_stop_child(sp, 0, NULL);
	txs_stop_child(rp, 0, NULL);
	return rc;
}

/* The sender's command line for a trial at rate for secs (check: --dry-run) */
static void sender_args(const struct run *r, struct txs_args *sa, double rate, double secs, bool check)
{
	const struct ndr_cfg *c = r->cfg;
	txs_arg_prefix(sa, c->send_netns, r->exe);
	txs_arg(sa, "send");
	txs_arg(sa, "--dev");
	txs_arg(sa, c->dev);
	txs_arg(sa, "-p");
	txs_arg(sa, txs_arg_fmt(sa, "%.0f", c->port));
	txs_arg(sa, "-l");
	txs_arg(sa, txs_arg_fmt(sa, "%.0f", c->length));
	txs_arg(sa, "-b");
	txs_arg(sa, txs_arg_fmt(sa, "%.0f", rate));
	txs_arg(sa, "-t");
	txs_arg(sa, txs_arg_fmt(sa, "%.3f", secs));
	txs_arg(sa, "-J");
	txs_arg(sa, "-i");
	txs_arg(sa, "0");
	txs_arg(sa, "--summary-file");
	txs_arg(sa, r->p.send_json);
	if (c->threads) {
		txs_arg(sa, "-P");
		txs_arg(sa, txs_arg_fmt(sa, "%.0f", c->threads));
	}
	if (c->cpus.n) {
		txs_arg(sa, "-A");
		txs_arg(sa, r->sender_cpus);
	}
	if (c->bind) {
		txs_arg(sa, "-B");
		txs_arg(sa, c->bind);
	}
	if (check)
		txs_arg(sa, "--dry-run");
	txs_arg(sa, r->dest);
}

/* Before the first trial: the sender checks its options and opens its
 * device (send --dry-run, in its namespace), and the receiver's input is
 * opened here when it runs in this namespace. Bad input is exit 2 before
 * any trial, not a failed trial (exit 1). Returns 0, 1 or 2. */
static int precheck(struct run *r)
{
	const struct ndr_cfg *c = r->cfg;
	struct txs_args sa = { .n = 0 };
	sender_args(r, &sa, c->lo.value, c->trial, true);
	if (sa.overflow) {
		fprintf(stderr, "txscale ndr: too many sender arguments\n");
		return 2;
	}
	pid_t sp = txs_spawn(&sa, r->p.send_err, -1);
	if (sp < 0) {
		fprintf(stderr, "txscale ndr: cannot start the sender: %s\n", strerror((int)-sp));
		return 1;
	}
	int st = 0;
	if (!txs_stop_child(sp, READY_TIMEOUT_S, &st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char why[256], ex[64] = "did not finish";
		txs_last_line(r->p.send_err, why, sizeof(why));
		txs_describe_exit(st, ex, sizeof(ex));
		/* the sender's own line names the bad value (e.g. "txscale send: bad value for -l/--length") */
		fprintf(stderr, "txscale ndr: sender check failed (%s): %s\n", ex, why[0] ? why : "no message");
		return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? 2 : 1;
	}
	unlink(r->p.send_json);
	if (c->recv_netns || c->remote.host)
		return 0; /* its input lives in the other namespace or on the server: the first trial opens it */
	struct txs_rx_input_conf ic = { .n_queues = 1, .port = c->port, .batch = 0 };
	if (txs_addr_parse(&ic.bind, r->dest) == 0)
		ic.have_bind = true;
	struct txs_rx_input *in;
	char err[320];
	int rc = txs_rx_input_open(&in, c->recv_dev, &ic, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale ndr: bad value for --recv-dev: %s\n", err);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENOENT ? 2 : 1;
	}
	txs_rx_input_close(in);
	return 0;
}

/* Run one trial at rate pps (0 = unlimited) for secs. 0 and *t filled;
 * -EINTR on SIGINT/SIGTERM; other -errno with r->err set. */
/* The local receiver of one trial, started and ready: 0 and *rp, or -errno
 * with r->err (nothing left running) */
static int start_receiver(struct run *r, double secs, pid_t *rp)
{
	const struct ndr_cfg *c = r->cfg;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(r->err, sizeof(r->err), "pipe: %s", strerror(errno));
		return -errno;
	}
	struct txs_args ra = { .n = 0 };
	txs_arg_prefix(&ra, c->recv_netns, r->exe);
	txs_arg(&ra, "recv");
	txs_arg(&ra, "--dev");
	txs_arg(&ra, c->recv_dev);
	txs_arg(&ra, "-B");
	txs_arg(&ra, r->dest);
	txs_arg(&ra, "-p");
	txs_arg(&ra, txs_arg_fmt(&ra, "%.0f", c->port));
	txs_arg(&ra, "-J");
	txs_arg(&ra, "-i");
	txs_arg(&ra, "0");
	txs_arg(&ra, "--idle");
	txs_arg(&ra, RECV_IDLE);
	txs_arg(&ra, "-t");
	txs_arg(&ra, txs_arg_fmt(&ra, "%.3f", secs + RECV_EXTRA_S));
	txs_arg(&ra, "--sender-summary");
	txs_arg(&ra, r->p.send_json);
	txs_arg(&ra, "--summary-file");
	txs_arg(&ra, r->p.recv_json);
	txs_arg(&ra, "--ready-fd");
	txs_arg(&ra, txs_arg_fmt(&ra, "%.0f", pfd[1]));
	if (r->recv_cpu >= 0) {
		txs_arg(&ra, "-A");
		txs_arg(&ra, txs_arg_fmt(&ra, "%.0f", r->recv_cpu));
	}
	for (unsigned i = 0; i < r->recv_argc; i++)
		txs_arg(&ra, r->recv_argv[i]);
	if (ra.overflow) {
		close(pfd[0]);
		close(pfd[1]);
		snprintf(r->err, sizeof(r->err), "too many arguments");
		return -E2BIG;
	}
	pid_t p = txs_spawn(&ra, r->p.recv_err, pfd[1]);
	close(pfd[1]);
	if (p < 0) {
		close(pfd[0]);
		snprintf(r->err, sizeof(r->err), "cannot start the receiver: %s", strerror(-p));
		return (int)p;
	}
	/* wait for its "ready" line (EOF: it exited) */
	double t0 = txs_mono_s();
	char line[16] = "";
	size_t got = 0;
	for (;;) {
		if (g_stop) {
			close(pfd[0]);
			return abort_trial(p, -1, -EINTR);
		}
		if (txs_mono_s() - t0 > READY_TIMEOUT_S) {
			close(pfd[0]);
			snprintf(r->err, sizeof(r->err), "the receiver was not ready within %.0f s", READY_TIMEOUT_S);
			return abort_trial(p, -1, -ETIMEDOUT);
		}
		struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
		if (poll(&pf, 1, 50) <= 0)
			continue;
		ssize_t n = read(pfd[0], line + got, sizeof(line) - 1 - got);
		if (n > 0) {
			got += (size_t)n;
			line[got] = 0;
			if (strchr(line, '\n') || got == sizeof(line) - 1)
				break;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break; /* EOF */
	}
	close(pfd[0]);
	if (strncmp(line, "ready\n", 6) != 0) {
		char why[256], ex[64] = "no ready line";
		int xs;
		if (txs_stop_child(p, 1.0, &xs))
			txs_describe_exit(xs, ex, sizeof(ex));
		txs_last_line(r->p.recv_err, why, sizeof(why));
		snprintf(r->err, sizeof(r->err), "the receiver did not start (%s): %s", ex, why[0] ? why : "no message");
		return -EIO;
	}
	*rp = p;
	return 0;
}

/* r->err: the child `who` ended with status st (its last stderr line in errpath) */
static void child_failed(struct run *r, const char *who, int st, const char *errpath)
{
	char why[256], ex[64];
	txs_describe_exit(st, ex, sizeof(ex));
	txs_last_line(errpath, why, sizeof(why));
	snprintf(r->err, sizeof(r->err), "the %s failed (%s): %s", who, ex, why[0] ? why : "no message");
}

/* Both children end by themselves; bounded anyway. rp < 0: no local
 * receiver (--remote). 0 once both exited 0, else -errno with r->err. */
static int wait_trial(struct run *r, pid_t rp, pid_t sp, double secs)
{
	double deadline = txs_mono_s() + secs + CHILD_EXTRA_S;
	int st, rst = 0;
	bool sdone = false, rdone = rp < 0;
	while (!sdone || !rdone) {
		if (g_stop)
			return abort_trial(rdone ? -1 : rp, sdone ? -1 : sp, -EINTR);
		if (txs_mono_s() > deadline) {
			snprintf(r->err, sizeof(r->err), "the %s did not finish within %.0f s",
				 !sdone ? "sender" : "receiver", secs + CHILD_EXTRA_S);
			return abort_trial(rdone ? -1 : rp, sdone ? -1 : sp, -ETIMEDOUT);
		}
		if (!sdone && txs_reaped(sp, &st)) {
			sdone = true;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				child_failed(r, "sender", st, r->p.send_err);
				return abort_trial(rdone ? -1 : rp, -1, -EIO);
			}
		}
		if (!rdone && txs_reaped(rp, &st)) {
			rdone = true;
			rst = st;
		}
		if (!sdone || !rdone) {
			struct timespec ts = { 0, 10 * 1000 * 1000 };
			nanosleep(&ts, NULL);
		}
	}
	if (rp >= 0 && (!WIFEXITED(rst) || WEXITSTATUS(rst) != 0)) {
		child_failed(r, "receiver", rst, r->p.recv_err);
		return -EIO;
	}
	return 0;
}

/* The trial's two summary files, read into t (the caller frees *sbuf, *rbuf) */
static int read_trial(struct run *r, struct txs_ndr_trial *t, char **sbuf, char **rbuf)
{
	size_t sn = 0, rn = 0;
	*sbuf = txs_slurp(r->p.send_json, &sn);
	*rbuf = txs_slurp(r->p.recv_json, &rn);
	if (!*sbuf || !*rbuf) {
		snprintf(r->err, sizeof(r->err), "no %s summary file", !*sbuf ? "sender" : "receiver");
		return -EIO;
	}
	sn = txs_trim(*sbuf, sn);
	rn = txs_trim(*rbuf, rn);
	if (txs_ndr_trial_parse(t, *sbuf, sn, *rbuf, rn) < 0) {
		snprintf(r->err, sizeof(r->err), "cannot read the summaries (sender: %.120s; receiver: %.120s)", *sbuf,
			 *rbuf);
		return -EIO;
	}
	if (!t->lost_exact) {
		snprintf(r->err, sizeof(r->err), "the receiver could not count loss exactly (sender summary unread)");
		return -EIO;
	}
	return 0;
}

static int run_trial(struct run *r, double rate, double secs, struct txs_ndr_trial *t, char **sbuf, char **rbuf)
{
	const struct ndr_cfg *c = r->cfg;
	pid_t rp = -1, sp;
	*sbuf = *rbuf = NULL;
	r->err[0] = 0;
	unlink(r->p.send_json);
	unlink(r->p.recv_json);
	int rc;
	if (c->remote.host) { /* ndr --remote: the server's receiver (client.c) */
		if (ctl_ndr_recv_begin(&r->cfg->remote, c->port, c->recv_dev, secs, r->err, sizeof(r->err)) < 0)
			return -EIO;
	} else if ((rc = start_receiver(r, secs, &rp)) < 0) {
		return rc;
	}
	struct txs_args sa = { .n = 0 };
	sender_args(r, &sa, rate, secs, false);
	if (sa.overflow) {
		snprintf(r->err, sizeof(r->err), "too many arguments");
		return abort_trial(rp, -1, -E2BIG);
	}
	sp = txs_spawn(&sa, r->p.send_err, -1);
	if (sp < 0) {
		snprintf(r->err, sizeof(r->err), "cannot start the sender: %s", strerror(-sp));
		return abort_trial(rp, -1, (int)sp);
	}
	if ((rc = wait_trial(r, rp, sp, secs)) < 0)
		return rc;
	if (c->remote.host && ctl_ndr_recv_end(&r->cfg->remote, r->p.send_json, r->p.recv_json, r->err, sizeof(r->err)) < 0)
		return -EIO;
	return read_trial(r, t, sbuf, rbuf);
}

/* ---- output ---------------------------------------------------------------------- */

static void trial_json(unsigned k, enum txs_ndr_phase ph, double rate, double secs, const struct txs_ndr_trial *t,
		       double pct, bool pass)
{
	struct txs_json j;
	txs_json_begin(&j, stdout);
	txs_json_str(&j, "type", "trial");
	txs_json_u64(&j, "trial", k);
	txs_json_str(&j, "phase", txs_ndr_phase_str(ph));
	txs_json_dbl(&j, "rate", rate);
	txs_json_dbl(&j, "seconds", secs);
	txs_json_u64(&j, "sent", t->sent);
	txs_json_dbl(&j, "sent_pps", t->sent_pps);
	txs_json_u64(&j, "sender_drops", t->sender_drops);
	txs_json_u64(&j, "received", t->received);
	txs_json_dbl(&j, "recv_pps", t->recv_pps);
	txs_json_u64(&j, "lost", t->lost);
	txs_json_dbl(&j, "loss_pct", pct);
	txs_json_bool(&j, "pass", pass);
	if (t->kernel_drops) {
		txs_json_key(&j, "kernel_drops");
		fputs(t->kernel_drops, stdout);
	}
	txs_json_end(&j);
}

static void trial_text(unsigned k, enum txs_ndr_phase ph, double rate, const struct txs_ndr_trial *t, double pct,
		       bool pass)
{
	char rb[32], sb[32], sock[32] = "?";
	if (t->have_sockets)
		snprintf(sock, sizeof(sock), "%llu", (unsigned long long)t->sockets);
	printf("%3u %-7s %9s pps: sent %llu (%s pps), received %llu, lost %llu (%.4g%%) %s  drops: socket %s "
	       "(RcvbufErrors %llu), if rx %llu, softnet %llu%s\n",
	       k, txs_ndr_phase_str(ph), rate > 0 ? txs_fmt_si(rate, rb, sizeof(rb)) : "unlimited",
	       (unsigned long long)t->sent, txs_fmt_si(t->sent_pps, sb, sizeof(sb)),
	       (unsigned long long)t->received, (unsigned long long)(t->lost + t->sender_drops), pct,
	       pass ? "PASS" : "FAIL", sock, (unsigned long long)t->rcvbuf_errors, (unsigned long long)t->if_dropped,
	       (unsigned long long)t->softnet, t->sender_drops ? ", some at the sender" : "");
	fflush(stdout);
}

static const char *limited_by(const struct txs_ndr_search *s)
{
	switch (s->outcome) {
	case TXS_NDR_FOUND:
		return "loss";
	case TXS_NDR_HI_PASSES:
		return s->hi0 > 0 ? "hi" : "sender";
	case TXS_NDR_LO_FAILS:
		return "lo";
	case TXS_NDR_OUT_OF_TRIALS:
		return "trials";
	}
	return "?";
}

static void result_out(const struct run *r, const struct txs_ndr_search *s, double last_sent_pps, double seconds)
{
	const struct ndr_cfg *c = r->cfg;
	bool hi_known = s->outcome != TXS_NDR_HI_PASSES;
	double lo = s->n_pass ? s->lo : 0;
	double rate = s->result;
	const char *lim = limited_by(s);
	/* the last trial passed at `result` but the sender fell short of it:
	 * what was shown to pass is what it sent */
	bool short_send = s->confirmed && s->result > 0 && last_sent_pps < s->result * (1 - s->precision);
	if (short_send) {
		rate = last_sent_pps;
		lim = "sender";
	}
	if (c->json) {
		struct txs_json j;
		txs_json_begin(&j, stdout);
		txs_json_str(&j, "type", "ndr");
		txs_json_dbl(&j, "rate_pps", rate);
		txs_json_dbl(&j, "precision_pct", c->precision.v);
		txs_json_dbl(&j, "trial_s", c->trial);
		txs_json_u64(&j, "trials", s->trials);
		txs_json_str(&j, "outcome", txs_ndr_outcome_str(s->outcome));
		txs_json_str(&j, "limited_by", lim);
		txs_json_bool(&j, "confirmed", s->confirmed);
		txs_json_dbl(&j, "lo_pps", lo);
		if (hi_known)
			txs_json_dbl(&j, "hi_pps", s->hi);
		else
			txs_json_dbl(&j, "hi_pps", NAN);
		txs_json_dbl(&j, "bracket_pct", hi_known && s->n_pass ? txs_ndr_bracket(s) * 100 : NAN);
		txs_json_dbl(&j, "sent_pps", last_sent_pps);
		txs_json_dbl(&j, "loss_pct_max", c->loss.v);
		txs_json_str(&j, "dest", r->dest);
		txs_json_str(&j, "device", c->dev);
		txs_json_str(&j, "recv_device", c->recv_dev);
		txs_json_u64(&j, "payload_len", c->length);
		txs_json_u64(&j, "threads", c->threads ? c->threads : c->cpus.n ? c->cpus.n : 1);
		txs_json_dbl(&j, "seconds", seconds);
		txs_json_end(&j);
		return;
	}
	char a[32], b[32], l[32];
	switch (s->outcome) {
	case TXS_NDR_FOUND:
		if (short_send)
			printf("ndr: note: the sender reached only %s pps of the %s pps asked for\n",
			       txs_fmt_si(last_sent_pps, a, sizeof(a)), txs_fmt_si(s->result, b, sizeof(b)));
		printf("ndr: %s pps with %s loss (bracket %s..%s pps, %.2g%% <= %.2g%%), confirmed; %u trials of %.3g s, "
		       "%.1f s\n",
		       txs_fmt_si(rate, a, sizeof(a)), c->loss.v > 0 ? "acceptable" : "zero",
		       txs_fmt_si(lo, l, sizeof(l)), txs_fmt_si(s->hi, b, sizeof(b)), txs_ndr_bracket(s) * 100, c->precision.v,
		       s->trials, c->trial, seconds);
		break;
	case TXS_NDR_HI_PASSES:
		printf("ndr: no loss at the upper bound: %s pps (%s); the path takes at least that; %u trial%s, %.1f s\n",
		       txs_fmt_si(rate, a, sizeof(a)),
		       short_send ? "what the sender reached: the sender is the limit"
		       : s->hi0 > 0 ? "--hi" : "the sender's unlimited rate: the sender is the limit",
		       s->trials, s->trials > 1 ? "s" : "", seconds);
		break;
	case TXS_NDR_LO_FAILS:
		printf("ndr: loss even at the lower bound %s pps: the NDR is below --lo; %u trials, %.1f s\n",
		       txs_fmt_si(s->lo0, a, sizeof(a)), s->trials, seconds);
		break;
	case TXS_NDR_OUT_OF_TRIALS:
		printf("ndr: --max-trials %u reached: highest pass %s pps, %s (bracket %.2g%%, wanted %.2g%%); "
		       "%.1f s\n",
		       c->max_trials, txs_fmt_si(s->result, a, sizeof(a)), s->confirmed ? "confirmed" : "not confirmed",
		       txs_ndr_bracket(s) * 100, c->precision.v, seconds);
		break;
	}
	fflush(stdout);
}

/* ---- command ---------------------------------------------------------------------- */

static int check_rate(const char *name, const struct opt_rate *r)
{
	if (r->bits) {
		fprintf(stderr, "txscale ndr: bad value for %s: packets/s only (e.g. 100k), not bits/s\n", name);
		return -1;
	}
	return 0;
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
	if (ctl_ndr_check(&cfg.remote, npos ? pos[0] : NULL, cfg.recv_netns, cfg.recv_args) < 0)
		return 2;
	if (!npos) {
		fprintf(stderr, "txscale ndr: no destination: give DEST, the receiver's address (see txscale ndr --help)\n");
		return 2;
	}
	struct txs_addr da, ba;
	if (txs_addr_parse(&da, pos[0]) < 0) {
		fprintf(stderr, "txscale ndr: bad destination address '%s'\n", pos[0]);
		return 2;
	}
	if (cfg.bind && (txs_addr_parse(&ba, cfg.bind) < 0 || ba.family != da.family)) {
		fprintf(stderr, "txscale ndr: bad value for -B/--bind: '%s': expected an %s address\n", cfg.bind,
			da.family == AF_INET ? "IPv4" : "IPv6");
		return 2;
	}
	if (check_rate("--lo", &cfg.lo) < 0 || check_rate("--hi", &cfg.hi) < 0)
		return 2;
	cfg.lo.value = floor(cfg.lo.value); /* the sender is given whole packets/s */
	cfg.hi.value = floor(cfg.hi.value);
	if (!(cfg.lo.value >= 1)) {
		fprintf(stderr, "txscale ndr: bad value for --lo: '%.0f': expected at least 1 packet/s\n", cfg.lo.value);
		return 2;
	}
	if (cfg.hi.value > 0 && cfg.hi.value <= cfg.lo.value) {
		fprintf(stderr, "txscale ndr: bad value for --hi: '%.0f': must be above --lo %.0f\n", cfg.hi.value,
			cfg.lo.value);
		return 2;
	}
	if (!(cfg.precision.v > 0)) {
		fprintf(stderr, "txscale ndr: bad value for --precision: '%g': expected 0 < PCT < 100\n", cfg.precision.v);
		return 2;
	}
	if (cfg.trial < 0.1 || cfg.trial > 3600) {
		fprintf(stderr, "txscale ndr: bad value for --trial: '%g': expected 0.1 to 3600 seconds\n", cfg.trial);
		return 2;
	}
	if (cfg.cpus.n && cfg.threads && cfg.threads > cfg.cpus.n) {
		fprintf(stderr, "txscale ndr: -P %u needs at least %u CPUs in -A (got %u)\n", cfg.threads, cfg.threads,
			cfg.cpus.n);
		return 2;
	}
	if (cfg.recv_args && strlen(cfg.recv_args) >= 1024) {
		fprintf(stderr, "txscale ndr: --recv-args is too long (at most 1023 characters)\n");
		return 2;
	}
	struct txs_ndr_search s;
	if (txs_ndr_init(&s, cfg.lo.value, cfg.hi.value, cfg.precision.v / 100.0, cfg.max_trials) < 0) {
		fprintf(stderr, "txscale ndr: bad search bounds (--lo %.0f, --hi %.0f, --precision %g)\n", cfg.lo.value,
			cfg.hi.value, cfg.precision.v);
		return 2;
	}

	struct run *r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	r->cfg = &cfg;
	r->dest = pos[0];
	ssize_t n = readlink("/proc/self/exe", r->exe, sizeof(r->exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "txscale ndr: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
		free(r);
		return 1;
	}
	r->exe[n] = 0;
	recv_argv_split(r);
	pick_cpus(r);
	int e = txs_paths_make(&r->p, "ndr");
	if (e < 0) {
		fprintf(stderr, "txscale ndr: cannot make a temporary directory: %s\n", strerror(-e));
		free(r);
		return 1;
	}
	int pre = precheck(r);
	if (pre) {
		txs_paths_remove(&r->p);
		free(r);
		return pre;
	}
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	if (!cfg.json) {
		char a[32], b[32];
		printf("txscale ndr: %s port %u, %u-byte payload, --dev %s, %u sender thread%s, recv --dev %s%s%s; "
		       "%.3g s trials, precision %g%%, loss <= %g%%, rates %s..%s pps, at most %u trials\n",
		       r->dest, cfg.port, cfg.length, cfg.dev, cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1,
		       (cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1) > 1 ? "s" : "", cfg.recv_dev,
		       cfg.recv_args ? " " : "", cfg.recv_args ? cfg.recv_args : "", cfg.trial, cfg.precision.v,
		       cfg.loss.v, txs_fmt_si(cfg.lo.value, a, sizeof(a)),
		       cfg.hi.value > 0 ? txs_fmt_si(cfg.hi.value, b, sizeof(b)) : "measured", cfg.max_trials);
		fflush(stdout);
	}
	double t0 = txs_mono_s(), rate, last_sent_pps = 0;
	char rb_[32];
	enum txs_ndr_phase ph;
	int ret = 0;
	while (txs_ndr_next(&s, &rate, &ph)) {
		double secs = ph == TXS_NDR_MEASURE && cfg.trial > MEASURE_MAX_S ? MEASURE_MAX_S : cfg.trial;
		struct txs_ndr_trial t = { 0 };
		char *sb, *rb;
		e = run_trial(r, rate, secs, &t, &sb, &rb);
		if (e == 0) {
			double pct;
			bool pass = txs_ndr_trial_pass(&t, cfg.loss.v, &pct);
			if (cfg.json)
				trial_json(s.trials + 1, ph, rate, secs, &t, pct, pass);
			else
				trial_text(s.trials + 1, ph, rate, &t, pct, pass);
			txs_ndr_report(&s, pass, t.sent_pps);
			last_sent_pps = t.sent_pps;
		}
		txs_ndr_trial_release(&t);
		free(sb);
		free(rb);
		if (e == -EINTR) {
			fprintf(stderr, "txscale ndr: interrupted after %u trials\n", s.trials);
			ret = 130;
			break;
		}
		if (e < 0) {
			fprintf(stderr, "txscale ndr: trial %u (%s, %s): %s\n", s.trials + 1, txs_ndr_phase_str(ph),
				rate > 0 ? txs_fmt_si(rate, rb_, sizeof(rb_)) : "unlimited", r->err);
			ret = 1;
			break;
		}
	}
	if (ret == 0)
		result_out(r, &s, last_sent_pps, txs_mono_s() - t0);
	txs_paths_remove(&r->p);
	ctl_ndr_close(&cfg.remote);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(r);
	return ret;
}
