/* SPDX-License-Identifier: MIT */
/* The other side's summary as a client or a server shows it, and a sender
 * summary with its clock line for a receiver (ctl_session.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <txscale/ctl.h>
#include "common/jsonpath.h"
#include <txscale/ctl_session.h>
#include "common/proc.h"

/* The number at path (lib/common/jsonpath.h: "a.b"), as text; "?" when absent. */
static const char *num(json_t *o, const char *path, char *buf, size_t len)
{
	json_t *v = txs_jpath(o, path);
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.6g", json_real_value(v));
	else
		snprintf(buf, len, "?");
	return buf;
}

/* o[a] (or o[a][b]) when it is a number, else NAN; keys are taken whole
 * ("p99.9" is one key, which a jsonpath cannot name). */
static double dnum(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (!isfinite(ns))
		snprintf(buf, len, "?");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
	return buf;
}

TXS_API int txs_ctl_peer_write(FILE *out, const char *role, const char *host, const char *summary, bool json)
{
	json_t *o = txs_jload(summary, strlen(summary));
	if (!o)
		return -EINVAL;
	if (json) {
		json_object_set_new(o, "type", json_string(role));
		json_object_set_new(o, "host", json_string(host));
		/* ASCII only: no C1 control character (U+0080..U+009F) of the peer's reaches a terminal raw */
		char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
		json_decref(o);
		if (!s)
			return -ENOMEM;
		fprintf(out, "%s\n", s);
		free(s);
		fflush(out);
		return 0;
	}
	char a[32], b[32], c[32], d[32], e[32], f[32];
	if (strcmp(role, "receiver") == 0) {
		double recv = dnum(o, "received", NULL), lost = dnum(o, "lost", NULL);
		json_t *exact = json_object_get(o, "lost_exact");
		double offered = recv + lost;
		fprintf(out, "receiver %s: received %s, lost %s (%.4g%%)%s, duplicates %s, reordered %s, late %s, malformed %s\n",
		       host, num(o, "received", a, sizeof(a)), num(o, "lost", b, sizeof(b)),
		       offered > 0 ? lost * 100 / offered : 0.0, json_is_true(exact) ? " exact" : " (not exact)",
		       num(o, "duplicates", c, sizeof(c)), num(o, "reordered", d, sizeof(d)), num(o, "late", e, sizeof(e)),
		       num(o, "malformed", f, sizeof(f)));
		char l1[32], l2[32], l3[32], l4[32];
		fprintf(out, "receiver %s: latency p50 %s, p99 %s, p99.9 %s, max %s\n", host,
		       fmt_ns(dnum(o, "latency_ns", "p50"), l1, sizeof(l1)), fmt_ns(dnum(o, "latency_ns", "p99"), l2, sizeof(l2)),
		       fmt_ns(dnum(o, "latency_ns", "p99.9"), l3, sizeof(l3)), fmt_ns(dnum(o, "latency_ns", "max"), l4, sizeof(l4)));
		json_t *ck = json_object_get(o, "clock");
		const char *how = json_string_value(json_object_get(ck, "method")); /* NULL: an older server's */
		char mth[64] = "";
		if (how)
			snprintf(mth, sizeof(mth), ", measured %s", strcmp(how, "udp-kernel-ts") == 0 ? "udp-kernel-ts"
								     : strcmp(how, "control-tcp") == 0 ? "control-tcp"
													: "otherwise");
		if (json_is_true(json_object_get(ck, "corrected")))
			fprintf(out, "receiver %s: latency CORRECTED by clock offset %s ns +- %s ns (raw p50 %s), drift %s ns%s\n", host,
			       num(ck, "offset_ns", a, sizeof(a)), num(ck, "error_ns", b, sizeof(b)),
			       fmt_ns(dnum(ck, "raw_latency_ns", "p50"), l1, sizeof(l1)), num(ck, "drift_ns", c, sizeof(c)), mth);
		else if (json_is_false(json_object_get(ck, "applied")))
			fprintf(out, "receiver %s: clock offset %s ns +- %s ns is within its error: NOT applied (latency "
				     "as stamped), drift %s ns%s\n", host, num(ck, "offset_ns", a, sizeof(a)),
			       num(ck, "error_ns", b, sizeof(b)), num(ck, "drift_ns", c, sizeof(c)), mth);
		if (json_is_object(json_object_get(o, "outage")))
			fprintf(out, "receiver %s: outages %s, longest %s ns (%s missing), loss bursts %s (longest %s)\n", host,
			       num(o, "outage.count", a, sizeof(a)), num(o, "outage.longest_ns", b, sizeof(b)),
			       num(o, "outage.longest_missing", c, sizeof(c)), num(o, "outage.burst_count", d, sizeof(d)),
			       num(o, "outage.burst_max", e, sizeof(e)));
		json_t *kd = json_object_get(o, "kernel_drops");
		double rcvbuf = dnum(kd, "udp", "RcvbufErrors"), rcvbuf6 = dnum(kd, "udp6", "RcvbufErrors");
		uint64_t ifrx = 0;
		txs_jsum_members(kd, "interfaces", "rx_dropped", &ifrx);
		fprintf(out, "receiver %s: kernel drops: socket %s, RcvbufErrors %.0f, if rx %" PRIu64 ", softnet %s\n", host,
		       num(kd, "sockets", a, sizeof(a)), (isfinite(rcvbuf) ? rcvbuf : 0) + (isfinite(rcvbuf6) ? rcvbuf6 : 0),
		       ifrx, num(kd, "softnet.dropped", b, sizeof(b)));
	} else {
		fprintf(out, "sender %s: sent %s packets in %s s (%s pps), drops %s, errors %s\n", host,
		       num(o, "packets", a, sizeof(a)), num(o, "seconds", b, sizeof(b)), num(o, "pps", c, sizeof(c)),
		       num(o, "drops", d, sizeof(d)), num(o, "errors", e, sizeof(e)));
	}
	fflush(out);
	json_decref(o);
	return 0;
}

TXS_API char *txs_ctl_peer_summary_text(const char *summary, const struct txs_ctl_clock_rep *c)
{
	char line[160];
	int n = c && c->on ? txs_ctl_clock_line(line, sizeof(line), c) : 0;
	size_t sl = strlen(summary);
	char *t = n < 0 ? NULL : malloc((size_t)n + sl + 1);
	if (!t)
		return NULL;
	memcpy(t, line, (size_t)n);
	memcpy(t + n, summary, sl + 1);
	return t;
}

TXS_API int txs_ctl_peer_summary_save(const char *path, const char *summary, const struct txs_ctl_clock_rep *c)
{
	char *t = txs_ctl_peer_summary_text(summary, c);
	if (!t)
		return -ENOMEM;
	int rc = txs_write_atomic(path, t);
	free(t);
	return rc;
}
