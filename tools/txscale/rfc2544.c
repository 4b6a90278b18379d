/* SPDX-License-Identifier: MIT */
/* txscale rfc2544: the RFC 2544 suite (docs/rfc2544.md). This file parses
 * the options into a <txscale/session_rfc2544.h> conf, gives the session
 * the remote receiver of --remote (client.c's, as ndr's), prints the trials,
 * a progress line and the result, and asks for the report. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/session_rfc2544.h>
#include "cli.h"
#include "ctl_cli.h"
#include "opt.h"


struct rfc_cfg {
	const char *dev;
	uint16_t port;
	unsigned threads;
	struct opt_cpus cpus;
	const char *bind;
	const char *sizes, *tests;
	double trial, search_trial, settle;
	struct txs_ndr_pct precision, loss, b2b_precision;
	struct opt_rate lo, hi;
	unsigned max_trials, repeat, latency_trials, b2b_trials;
	uint64_t b2b_max;
	const char *send_netns, *recv_netns;
	const char *recv_dev, *recv_args;
	const char *report;
	bool json;
	struct ctl_ndr_opts remote;
};

#define O(f) offsetof(struct rfc_cfg, f)
static const struct txs_opt rfc_opts[] = {
	{ "sizes", 0, OPT_STR, O(sizes), "LIST", "frame sizes in bytes with the FCS, and imix (7:4:1 of 64/594/1518)", "64,128,256,512,1024,1280,1518" },
	{ "tests", 0, OPT_STR, O(tests), "LIST", "throughput, latency, frame-loss, back-to-back, or all", "all" },
	{ "trial", 0, OPT_SECONDS, O(trial), "SEC", "a full-length trial: confirmations, latency, frame loss (RFC 2544 asks 60 for published figures)", "10" },
	{ "search-trial", 0, OPT_SECONDS, O(search_trial), "SEC", "a trial while the throughput search narrows down", "1" },
	{ "settle", 0, OPT_SECONDS, O(settle), "SEC", "rest between trials, so that the device's queues drain and its buffers refill (RFC 2544 section 23)", "2" },
	{ "loss", 0, OPT_CUSTOM, O(loss), "PCT", "acceptable loss in percent for throughput (0: NDR, above: PDR)", "0", 0, 0, txs_opt_parse_pct },
	{ "precision", 0, OPT_CUSTOM, O(precision), "PCT", "the throughput search stops when (hi - lo) / hi <= PCT percent", "1", 0, 0, txs_opt_parse_pct_pos },
	{ "lo", 0, OPT_RATE, O(lo), "RATE", "lowest rate the search tries, frames/s with pps (e.g. 100pps)", "100pps" },
	{ "hi", 0, OPT_RATE, O(hi), "RATE", "highest rate the search tries, frames/s with pps (e.g. 1Mpps; default: the sender's top rate, measured first)" },
	{ "max-trials", 0, OPT_UINT, O(max_trials), "N", "at most N trials per search (throughput, back-to-back)", "30", 3, TXS_NDR_MAX_TRIALS },
	{ "repeat", 0, OPT_UINT, O(repeat), "N", "throughput searches per frame size (the median is reported, the spread beside it)", "3", 1, TXS_RFC2544_MAX_REPEAT },
	{ "latency-trials", 0, OPT_UINT, O(latency_trials), "N", "latency trials at the throughput rate per frame size", "3", 1, TXS_RFC2544_MAX_LAT },
	{ "b2b-trials", 0, OPT_UINT, O(b2b_trials), "N", "back-to-back searches per frame size (the mean is reported)", "5", 1, TXS_RFC2544_MAX_B2B },
	{ "b2b-precision", 0, OPT_CUSTOM, O(b2b_precision), "PCT", "a back-to-back search stops when its bracket is within PCT percent", "2", 0, 0, txs_opt_parse_pct_pos },
	{ "b2b-max", 0, OPT_U64, O(b2b_max), "FRAMES", "longest burst tried (default: 2 s at the sender's top rate)", NULL, 2, 1000000000 },
	{ "dev", 0, OPT_STR, O(dev), "DEV", "sender device (txscale send --dev)", "udp" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "UDP port", "5201" },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "sender threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "sender CPUs (the receiver gets the first other CPU unless --recv-args pins it)" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "sender source address" },
	{ "send-netns", 0, OPT_STR, O(send_netns), "NS", "run the sender in network namespace NS (ip netns exec)" },
	{ "recv-netns", 0, OPT_STR, O(recv_netns), "NS", "run the receiver in network namespace NS (ip netns exec)" },
	{ "recv-dev", 0, OPT_STR, O(recv_dev), "DEV", "receiver input (txscale recv --dev)", "udp" },
	{ "recv-args", 0, OPT_STR, O(recv_args), "ARGS", "extra txscale recv options, split at spaces, e.g. \"--rcvbuf 33554432\"" },
	{ "report", 0, OPT_STR, O(report), "DIR", "write report.md, report.html, result.json, a CSV per test and PNG plots (gnuplot) into DIR" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines: one per trial, then the result (docs/rfc2544.md)" },
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

__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("txscale rfc2544: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 2;
}

/* ---- --remote: client.c's receiver behind the session's hooks ---------------------- */
static int remote_begin(void *arg, uint16_t port, const char *dev, double secs, char *err, size_t errlen)
{
	return ctl_ndr_recv_begin(arg, port, dev, secs, err, errlen);
}

static int remote_end(void *arg, const char *sj, const char *rj, char *err, size_t errlen)
{
	return ctl_ndr_recv_end(arg, sj, rj, err, errlen);
}

/* ---- printing --------------------------------------------------------------------- */
struct out {
	bool json, progress;
};

static void on_trial(const struct txs_rfc2544_trial *t, void *arg)
{
	const struct out *o = arg;
	txs_rfc2544_write_trial(stdout, o->json, t);
	if (o->progress) {
		char sb[16];
		if (t->size == TXS_RFC2544_IMIX)
			snprintf(sb, sizeof(sb), "imix");
		else
			snprintf(sb, sizeof(sb), "%u B", t->size);
		fprintf(stderr, "\r\033[Krfc2544: size %u/%u (%s), %s run %u, %s: %s, trial %u, %.0f s elapsed", t->size_index + 1,
			t->n_sizes, sb, txs_rfc2544_test_str(t->test), t->run, t->phase, t->pass ? "pass" : "loss", t->index,
			t->elapsed_s);
		fflush(stderr);
	}
}

/* --recv-args with --remote: "--rcvbuf N" or "--rcvbuf=N" only, for the server's receiver */
static int parse_remote_rcvbuf(const char *args, uint64_t *rcvbuf)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", args);
	char *save = NULL, *t = strtok_r(buf, " \t", &save), *v = NULL;
	if (t && strncmp(t, "--rcvbuf=", 9) == 0)
		v = t + 9;
	else if (t && strcmp(t, "--rcvbuf") == 0)
		v = strtok_r(NULL, " \t", &save);
	uint64_t n = 0;
	if (!v || txs_parse_count(v, &n) < 0 || n < 1 || n > 0x7fffffff || strtok_r(NULL, " \t", &save))
		return -1;
	*rcvbuf = n;
	return 0;
}

static int check_cfg(struct rfc_cfg *c, const char *dest, struct txs_rfc2544_conf *rc)
{
	char err[256], b1[32], b2[32];
	struct txs_addr da, ba, ha;
	if (c->remote.host) { /* ctl_ndr_check's checks, said in our name */
		if (txs_addr_parse(&ha, c->remote.host) < 0)
			return refuse("bad value for --remote: '%s': expected an IPv4 or IPv6 address", c->remote.host);
		if (dest && (txs_addr_parse(&da, dest) < 0 || da.family != ha.family ||
			     memcmp(da.bytes, ha.bytes, ha.family == AF_INET ? 4 : 16) != 0))
			return refuse("DEST '%s' is not --remote %s: the server receives on the address the client "
				      "reaches it at", dest, c->remote.host);
		if (c->recv_netns)
			return refuse("--recv-netns and --remote exclude each other (the server receives)");
		if (c->recv_args && parse_remote_rcvbuf(c->recv_args, &c->remote.rcvbuf) < 0)
			return refuse("bad value for --recv-args: '%s': with --remote only \"--rcvbuf BYTES\" is passed "
				      "to the server", c->recv_args);
	}
	if (!dest)
		return refuse("no destination: give DEST, the receiver's address (see txscale rfc2544 --help)");
	if (txs_addr_parse(&da, dest) < 0)
		return refuse("bad destination address '%s'", dest);
	if (c->bind && (txs_addr_parse(&ba, c->bind) < 0 || ba.family != da.family))
		return refuse("bad value for -B/--bind: '%s': expected an %s address", c->bind,
			      da.family == AF_INET ? "IPv4" : "IPv6");
	if (c->lo.bits || c->hi.bits)
		return refuse("bad value for --%s: frames/s only, with pps (e.g. 100kpps), not bits/s", c->lo.bits ? "lo" : "hi");
	if (c->report) {
		/* the report's directory made (or found writable) before the first trial, not after the suite */
		if (mkdir(c->report, 0755) < 0 && errno != EEXIST)
			return refuse("bad value for --report: '%s': cannot make the directory: %s", c->report,
				      strerror(errno));
		struct stat st;
		if (stat(c->report, &st) == 0 && !S_ISDIR(st.st_mode))
			return refuse("bad value for --report: '%s': not a directory", c->report);
		if (access(c->report, W_OK | X_OK) < 0)
			return refuse("bad value for --report: '%s': not a directory we can write: %s", c->report,
				      strerror(errno));
	}
	if (txs_rfc2544_parse_sizes(c->sizes, rc->sizes, &rc->n_sizes, err, sizeof(err)) < 0)
		return refuse("bad value for --sizes: %s", err);
	if (txs_rfc2544_parse_tests(c->tests, &rc->tests, err, sizeof(err)) < 0)
		return refuse("bad value for --tests: %s", err);
	if (c->trial < 0.1 || c->trial > 3600)
		return refuse("bad value for --trial: '%g': expected 0.1 to 3600 seconds", c->trial);
	if (c->search_trial < 0.1 || c->search_trial > c->trial)
		return refuse("bad value for --search-trial: '%g': expected 0.1 s up to --trial (%g s)", c->search_trial,
			      c->trial);
	if (c->settle > 60)
		return refuse("bad value for --settle: '%g': expected 0 to 60 seconds", c->settle);
	if (!(c->precision.v > 0))
		return refuse("bad value for --precision: '%g': expected a percentage 0 < PCT < 100, e.g. 1 or 0.5",
			      c->precision.v);
	if (!(c->b2b_precision.v > 0))
		return refuse("bad value for --b2b-precision: '%g': expected a percentage 0 < PCT < 100, e.g. 1 or 0.5",
			      c->b2b_precision.v);
	if (floor(c->lo.value) < 1)
		return refuse("bad value for --lo: '%spps': expected at least 1pps (frames/s)",
			      txs_fmt_si(c->lo.value, b1, sizeof(b1)));
	if (c->hi.value > 0 && floor(c->hi.value) <= floor(c->lo.value))
		return refuse("bad value for --hi: '%spps': must be above --lo %spps", txs_fmt_si(c->hi.value, b1, sizeof(b1)),
			      txs_fmt_si(c->lo.value, b2, sizeof(b2)));
	if (c->cpus.n && c->threads > c->cpus.n)
		return refuse("-P %u needs at least %u CPUs in -A (got %u)", c->threads, c->threads, c->cpus.n);
	return 0;
}

int cmd_rfc2544(int argc, char **argv)
{
	struct rfc_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	static const char *syn = "[options] DEST   (DEST: the receiver's address, as txscale recv -B)";
	int rc = opt_parse("rfc2544", syn, rfc_opts, &cfg, argc, argv, pos, 1, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (!npos && cfg.remote.host)
		pos[npos++] = cfg.remote.host;
	struct txs_rfc2544_conf c;
	txs_rfc2544_conf_init(&c);
	if (check_cfg(&cfg, npos ? pos[0] : NULL, &c))
		return 2;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		fprintf(stderr, "txscale rfc2544: cannot find this program (/proc/self/exe): %s\n", strerror(errno));
		return 1;
	}
	exe[n] = 0;
	struct txs_rfc2544_remote remote = { .begin = remote_begin, .end = remote_end, .arg = &cfg.remote };
	c.exe = exe;
	c.dest = pos[0];
	c.port = cfg.port;
	c.dev = cfg.dev;
	c.recv_dev = cfg.recv_dev;
	c.bind = cfg.bind;
	c.send_netns = cfg.send_netns;
	c.recv_netns = cfg.recv_netns;
	c.recv_args = cfg.remote.host ? NULL : cfg.recv_args; /* --remote: its --rcvbuf went to the server */
	c.threads = cfg.threads;
	c.cpus = cfg.cpus.cpu;
	c.n_cpus = cfg.cpus.n;
	c.trial_s = cfg.trial;
	c.search_s = cfg.search_trial;
	c.settle_s = cfg.settle;
	c.loss_pct = cfg.loss.v;
	c.precision = cfg.precision.v / 100;
	c.lo_fps = floor(cfg.lo.value);
	c.hi_fps = floor(cfg.hi.value);
	c.max_trials = cfg.max_trials;
	c.repeat = cfg.repeat;
	c.latency_trials = cfg.latency_trials;
	c.b2b_trials = cfg.b2b_trials;
	c.b2b_precision = cfg.b2b_precision.v / 100;
	c.b2b_max = cfg.b2b_max;
	c.remote = cfg.remote.host ? &remote : NULL;
	c.stop = &g_stop;
	char err[512];
	struct txs_rfc2544 *s;
	int e = txs_rfc2544_open(&s, &c, err, sizeof(err));
	if (e < 0) {
		fprintf(stderr, "txscale rfc2544: %s\n", err);
		return e == -EINVAL ? 2 : 1;
	}
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	struct out o = { .json = cfg.json, .progress = cfg.json && isatty(STDERR_FILENO) };
	struct txs_rfc2544_hooks h = { .trial = on_trial, .arg = &o };
	if (!cfg.json)
		txs_rfc2544_write_header(stdout, &c);
	e = txs_rfc2544_run(s, &h, err, sizeof(err));
	if (o.progress)
		fputs("\r\033[K", stderr);
	const struct txs_rfc2544_result *r = txs_rfc2544_result(s);
	int ret = 0;
	if (e == -EINTR) {
		fprintf(stderr, "txscale rfc2544: interrupted after %u trials\n", r->trials);
		ret = 130;
	} else if (e < 0) {
		fprintf(stderr, "txscale rfc2544: %s\n", err);
		ret = 1;
	}
	/* what ran, stopped or not (complete: false says it), as iperf3 sums up on ^C */
	txs_rfc2544_write_result(stdout, cfg.json, r, &c);
	if (cfg.report) {
		unsigned plots = 0;
		if (txs_rfc2544_report(cfg.report, r, &c, &plots, err, sizeof(err)) < 0) {
			fprintf(stderr, "txscale rfc2544: %s\n", err);
			ret = ret ? ret : 1;
		} else if (!plots && !cfg.json) {
			fprintf(stderr, "txscale rfc2544: report in %s without plots (is gnuplot installed?)\n", cfg.report);
		}
	}
	if (cfg.remote.host)
		ctl_ndr_close(&cfg.remote);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	txs_rfc2544_close(s);
	return ret;
}
