/* SPDX-License-Identifier: MIT */
/* The no-drop-rate search's options (opt.h): one table for `txscale ndr`,
 * a JSON "ndr" session's config and the Python keywords, and the checks
 * of the options as a whole. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/ndr.h>
#include <txscale/pkt.h>
#include <txscale/stats.h>
#include "common/err.h"
#include "opt.h"

static int parse_pct(const char *val, void *dst, bool zero, char *err, size_t errlen)
{
	struct txs_ndr_pct *p = dst;
	char *end;
	errno = 0;
	double v = strtod(val, &end);
	if (end != val && *end == '%')
		end++;
	if (errno || end == val || *end || !isfinite(v) || v < 0 || (v == 0 && !zero) || v >= 100) {
		snprintf(err, errlen, "expected a percentage %s PCT < 100, e.g. 1 or 0.5", zero ? "0 <=" : "0 <");
		return -1;
	}
	p->set = true;
	p->v = v;
	return 0;
}

int txs_opt_parse_pct(const char *val, void *dst, char *err, size_t errlen)
{
	return parse_pct(val, dst, true, err, errlen);
}

int txs_opt_parse_pct_pos(const char *val, void *dst, char *err, size_t errlen)
{
	return parse_pct(val, dst, false, err, errlen);
}

/* "'50.0kpps'": a rate of datagrams/s in the grammar it is typed in */
static const char *pps_str(double v, char *buf, size_t len)
{
	char b[32];
	snprintf(buf, len, "%spps", txs_fmt_si(v, b, sizeof(b)));
	return buf;
}

#define O(f) offsetof(struct txs_ndr_args, f)
const struct txs_opt txs_ndr_opts[] = {
	{ "dev", 0, OPT_STR, O(dev), "DEV", "sender device (txscale send --dev)", "udp" },
	{ "port", 'p', OPT_PORT, O(port), "PORT", "UDP port", "5201" },
	{ "length", 'l', OPT_UINT, O(length), "BYTES", "UDP payload length", "16", 0, 65527 },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "sender threads (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "sender CPUs, e.g. 0-1 (the receiver gets the first other CPU unless --recv-args pins it)" },
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "sender source address" },
	{ "trial", 0, OPT_SECONDS, O(trial), "SEC", "length of each trial's sending", "2" },
	{ "precision", 0, OPT_CUSTOM, O(precision), "PCT", "stop when (hi - lo) / hi <= PCT percent", "1", 0, 0, txs_opt_parse_pct_pos },
	{ "lo", 0, OPT_RATE, O(lo), "RATE", "lower bound, datagrams/s (e.g. 10kpps: the pps is needed, plain numbers are bits/s as in -b)", "10kpps" },
	{ "hi", 0, OPT_RATE, O(hi), "RATE", "upper bound, datagrams/s (e.g. 1Mpps; default: the sender's unlimited rate, measured first)" },
	{ "max-trials", 0, OPT_UINT, O(max_trials), "N", "at most N trials, the confirmation included", "20", 3, TXS_NDR_MAX_TRIALS },
	{ "loss", 0, OPT_CUSTOM, O(loss), "PCT", "acceptable loss in percent (0: zero loss)", "0", 0, 0, txs_opt_parse_pct },
	{ "send-netns", 0, OPT_STR, O(send_netns), "NS", "run the sender in network namespace NS (ip netns exec)" },
	{ "recv-netns", 0, OPT_STR, O(recv_netns), "NS", "run the receiver in network namespace NS (ip netns exec)" },
	{ "recv-dev", 0, OPT_STR, O(recv_dev), "DEV", "receiver input (txscale recv --dev)", "udp" },
	{ "recv-args", 0, OPT_STR, O(recv_args), "ARGS", "extra txscale recv options, split at spaces, e.g. \"--rcvbuf 4096\"" },
	OPT_END
};
#undef O

const struct txs_opt *txs_ndr_opt_table(void)
{
	return txs_ndr_opts;
}

static int rate_pps(const char *name, const struct opt_rate *r, char *err, size_t errlen)
{
	if (r->bits)
		return txs_fail(err, errlen, -EINVAL, "bad value for %s: datagrams/s only, with pps (e.g. 100kpps), not "
				"bits/s", name);
	return 0;
}

int txs_ndr_args_check(struct txs_ndr_args *c, char *err, size_t errlen)
{
	if (!c->dest)
		return txs_fail(err, errlen, -EINVAL, "no destination: give DEST, the receiver's address (see txscale ndr "
				"--help)");
	struct txs_addr da, ba;
	if (txs_addr_parse(&da, c->dest) < 0)
		return txs_fail(err, errlen, -EINVAL, "bad value for dest (DEST): '%s': expected an IPv4 or IPv6 address",
				c->dest);
	if (c->bind && (txs_addr_parse(&ba, c->bind) < 0 || ba.family != da.family))
		return txs_fail(err, errlen, -EINVAL, "bad value for -B/--bind: '%s': expected an %s address", c->bind,
				da.family == AF_INET ? "IPv4" : "IPv6");
	int rc;
	if ((rc = rate_pps("--lo", &c->lo, err, errlen)) || (rc = rate_pps("--hi", &c->hi, err, errlen)))
		return rc;
	c->lo.value = floor(c->lo.value); /* the sender is given whole packets/s */
	c->hi.value = floor(c->hi.value);
	char b1[40], b2[40];
	if (!(c->lo.value >= 1))
		return txs_fail(err, errlen, -EINVAL, "bad value for --lo: '%s': expected at least 1pps",
				pps_str(c->lo.value, b1, sizeof(b1)));
	if (c->hi.value > 0 && c->hi.value <= c->lo.value)
		return txs_fail(err, errlen, -EINVAL, "bad value for --hi: '%s': must be above --lo %s",
				pps_str(c->hi.value, b1, sizeof(b1)), pps_str(c->lo.value, b2, sizeof(b2)));
	if (!(c->precision.v > 0)) /* a JSON session's value comes through the same parser */
		return txs_fail(err, errlen, -EINVAL, "bad value for --precision: '%g': expected a percentage 0 < PCT < "
				"100, e.g. 1 or 0.5", c->precision.v);
	if (c->trial < 0.1 || c->trial > 3600)
		return txs_fail(err, errlen, -EINVAL, "bad value for --trial: '%g': expected 0.1 to 3600 seconds",
				c->trial);
	if (c->cpus.n && c->threads && c->threads > c->cpus.n)
		return txs_fail(err, errlen, -EINVAL, "-P %u needs at least %u CPUs in -A (got %u)", c->threads,
				c->threads, c->cpus.n);
	if (c->recv_args && strlen(c->recv_args) >= 1024)
		return txs_fail(err, errlen, -EINVAL, "--recv-args is too long (at most 1023 characters)");
	return 0;
}
