/* SPDX-License-Identifier: MIT */
/* txscale ndr: the highest rate at which `txscale recv` counts no loss
 * (docs/ndr.md). Each trial runs this very binary twice as child processes,
 * a receiver and then a sender (optionally each in a network namespace via
 * `ip netns exec`): this file checks the options; lib/session/trial.h (the
 * runner the RFC 2544 session shares) builds the two command lines, starts
 * and bounds the children (killed on a timeout or SIGINT) and reads their
 * summaries; <txscale/ndr.h> runs the search and writes the reports. The
 * temporary directory is removed on every exit. */
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
#include "session/trial.h"
#include "ctl_cli.h"

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
static const struct txs_opt ndr_opts[] = {
	{ "dev", 0, OPT_STR, O(dev), "DEV", "sender device (txscale send --dev)", "udp" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "UDP port", "5201" },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 65527 },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "sender threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "sender CPUs, e.g. 0-1 (the receiver gets the first other CPU unless --recv-args pins it)" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "sender source address" },
	{ "trial", 0, OPT_SECONDS, O(trial), "SEC", "length of each trial's sending", "2" },
	{ "precision", 0, OPT_CUSTOM, O(precision), "PCT", "stop when (hi - lo) / hi <= PCT percent", "1", 0, 0, parse_pct },
	{ "lo", 0, OPT_RATE, O(lo), "RATE", "lower bound, datagrams/s (e.g. 10kpps: the pps is needed, plain numbers are bits/s as in -b)", "10kpps" },
	{ "hi", 0, OPT_RATE, O(hi), "RATE", "upper bound, datagrams/s (e.g. 1Mpps; default: the sender's unlimited rate, measured first)" },
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

/* ---- one trial (lib/session/trial.h) ------------------------------------------------------ */

struct run {
	const struct ndr_cfg *cfg;
	const char *dest;
	char exe[PATH_MAX];
	struct txs_trial_remote remote;
	struct txs_trial_runner tr;
	char err[512];
};

/* --remote: client.c's receiver behind the runner's hooks */
static int remote_begin(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen)
{
	return ctl_ndr_recv_begin(arg, port, dev, secs, err, errlen);
}

static int remote_end(void *arg, const char *sj, const char *rj, char *err, size_t errlen)
{
	return ctl_ndr_recv_end(arg, sj, rj, err, errlen);
}

static struct txs_trial_spec spec(const struct run *r, char *len, size_t lenlen, double rate, double secs)
{
	snprintf(len, lenlen, "%u", r->cfg->length);
	return (struct txs_trial_spec){ .length = len, .rate = rate, .secs = secs };
}

/* Before the first trial: the sender checks its options and opens its
 * device (send --dry-run, in its namespace), and the receiver's input is
 * opened here when it runs in this namespace. Bad input is exit 2 before
 * any trial, not a failed trial (exit 1). Returns 0, 1 or 2. */
static int precheck(struct run *r)
{
	const struct ndr_cfg *c = r->cfg;
	char len[16];
	struct txs_trial_spec sp = spec(r, len, sizeof(len), c->lo.value, c->trial);
	int rc = txs_trial_check_sender(&r->tr, &sp, r->err, sizeof(r->err));
	if (rc < 0) {
		fprintf(stderr, "txscale ndr: %s\n", r->err);
		return rc == -EINVAL ? 2 : 1;
	}
	if (c->recv_netns || c->remote.host)
		return 0; /* its input lives in the other namespace or on the server: the first trial opens it */
	struct txs_rx_input_conf ic = { .n_queues = 1, .port = c->port, .batch = 0 };
	if (txs_addr_parse(&ic.bind, r->dest) == 0)
		ic.have_bind = true;
	struct txs_rx_input *in;
	char err[320];
	rc = txs_rx_input_open(&in, c->recv_dev, &ic, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "txscale ndr: bad value for --recv-dev: %s\n", err);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENOENT ? 2 : 1;
	}
	txs_rx_input_close(in);
	return 0;
}

/* Run one trial at rate pps (0 = unlimited) for secs: 0 and *t filled;
 * -EINTR on SIGINT/SIGTERM; other -errno with r->err set. */
static int run_trial(struct run *r, double rate, double secs, struct txs_ndr_trial *t)
{
	char len[16];
	struct txs_trial_spec sp = spec(r, len, sizeof(len), rate, secs);
	r->err[0] = 0;
	return txs_trial_run(&r->tr, &sp, t, r->err, sizeof(r->err));
}

/* ---- command ---------------------------------------------------------------------- */

/* A refusal: "txscale ndr: ..." on stderr; returns 2, the exit status */
__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txscale ndr: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 2;
}

static int check_rate(const char *name, const struct opt_rate *r)
{
	return r->bits ? refuse("bad value for %s: datagrams/s only, with pps (e.g. 100kpps), not bits/s", name) : 0;
}

/* The options as a whole, after the table checked each: 0 or 2 (refused) */
static int check_cfg(struct ndr_cfg *c, const char *dest)
{
	if (ctl_ndr_check(&c->remote, dest, c->recv_netns, c->recv_args) < 0)
		return 2;
	if (!dest)
		return refuse("no destination: give DEST, the receiver's address (see txscale ndr --help)");
	struct txs_addr da, ba;
	if (txs_addr_parse(&da, dest) < 0)
		return refuse("bad destination address '%s'", dest);
	if (c->bind && (txs_addr_parse(&ba, c->bind) < 0 || ba.family != da.family))
		return refuse("bad value for -B/--bind: '%s': expected an %s address", c->bind,
			      da.family == AF_INET ? "IPv4" : "IPv6");
	if (check_rate("--lo", &c->lo) || check_rate("--hi", &c->hi))
		return 2;
	c->lo.value = floor(c->lo.value); /* the sender is given whole packets/s */
	c->hi.value = floor(c->hi.value);
	if (!(c->lo.value >= 1))
		return refuse("bad value for --lo: '%.0f': expected at least 1 packet/s", c->lo.value);
	if (c->hi.value > 0 && c->hi.value <= c->lo.value)
		return refuse("bad value for --hi: '%.0f': must be above --lo %.0f", c->hi.value, c->lo.value);
	if (!(c->precision.v > 0))
		return refuse("bad value for --precision: '%g': expected 0 < PCT < 100", c->precision.v);
	if (c->trial < 0.1 || c->trial > 3600)
		return refuse("bad value for --trial: '%g': expected 0.1 to 3600 seconds", c->trial);
	if (c->cpus.n && c->threads && c->threads > c->cpus.n)
		return refuse("-P %u needs at least %u CPUs in -A (got %u)", c->threads, c->threads, c->cpus.n);
	if (c->recv_args && strlen(c->recv_args) >= 1024)
		return refuse("--recv-args is too long (at most 1023 characters)");
	return 0;
}

/* The search, trial by trial: 0 (a result written), 1 (a trial failed) or 130 */
static int search(struct run *r, struct txs_ndr_search *s, const struct txs_ndr_info *info)
{
	const struct ndr_cfg *c = r->cfg;
	double t0 = txs_mono_s(), rate, last_sent_pps = 0;
	enum txs_ndr_phase ph;
	while (txs_ndr_next(s, &rate, &ph)) {
		double secs = ph == TXS_NDR_MEASURE && c->trial > MEASURE_MAX_S ? MEASURE_MAX_S : c->trial;
		struct txs_ndr_trial t = { 0 };
		int e = run_trial(r, rate, secs, &t);
		if (e == 0) {
			double pct;
			bool pass = txs_ndr_trial_pass(&t, c->loss.v, &pct);
			txs_ndr_write_trial(stdout, c->json, s, secs, &t, pct, pass);
			txs_ndr_report(s, pass, t.sent_pps);
			last_sent_pps = t.sent_pps;
		}
		txs_ndr_trial_release(&t);
		if (e == -EINTR) {
			fprintf(stderr, "txscale ndr: interrupted after %u trials\n", s->trials);
			return 130;
		}
		if (e < 0) {
			char rb[32];
			fprintf(stderr, "txscale ndr: trial %u (%s, %s): %s\n", s->trials + 1, txs_ndr_phase_str(ph),
				rate > 0 ? txs_fmt_si(rate, rb, sizeof(rb)) : "unlimited", r->err);
			return 1;
		}
	}
	txs_ndr_write_result(stdout, c->json, s, info, last_sent_pps, txs_mono_s() - t0);
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
	if (check_cfg(&cfg, npos ? pos[0] : NULL))
		return 2;
	struct txs_ndr_search s;
	if (txs_ndr_init(&s, cfg.lo.value, cfg.hi.value, cfg.precision.v / 100.0, cfg.max_trials) < 0)
		return refuse("bad search bounds (--lo %.0f, --hi %.0f, --precision %g)", cfg.lo.value, cfg.hi.value,
			      cfg.precision.v);
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
	r->remote = (struct txs_trial_remote){ .begin = remote_begin, .end = remote_end, .arg = &cfg.remote };
	struct txs_trial_conf tc = { .exe = r->exe, .dest = r->dest, .port = cfg.port, .dev = cfg.dev,
				     .recv_dev = cfg.recv_dev, .bind = cfg.bind, .send_netns = cfg.send_netns,
				     .recv_netns = cfg.recv_netns, .recv_args = cfg.remote.host ? NULL : cfg.recv_args,
				     .threads = cfg.threads, .cpus = cfg.cpus.cpu, .n_cpus = cfg.cpus.n,
				     .remote = cfg.remote.host ? &r->remote : NULL, .stop = &g_stop };
	int e = txs_trial_open(&r->tr, &tc, "ndr", r->err, sizeof(r->err));
	if (e < 0) {
		fprintf(stderr, "txscale ndr: %s\n", r->err);
		free(r);
		return 1;
	}
	int ret = precheck(r);
	if (ret == 0) {
		struct txs_ndr_info info = { .dest = r->dest, .port = cfg.port, .device = cfg.dev,
					     .recv_device = cfg.recv_dev, .recv_args = cfg.recv_args,
					     .payload_len = cfg.length, .trial_s = cfg.trial,
					     .precision_pct = cfg.precision.v, .loss_pct = cfg.loss.v,
					     .threads = cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1 };
		struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		if (!cfg.json)
			txs_ndr_write_header(stdout, &s, &info);
		ret = search(r, &s, &info);
		ctl_ndr_close(&cfg.remote);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	txs_trial_close(&r->tr);
	free(r);
	return ret;
}
