/* SPDX-License-Identifier: MIT */
/* The clock offset between the two hosts of a test, NTP-style over the
 * control connection (docs/control.md, "Clock offset"), and the clock
 * fields of the messages that carry it. Every stamp and figure read from
 * the peer is range-checked: no answer can make an offset or a bound wrap. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/engine.h>
#include "clock_priv.h"

static uint64_t real_ns(void)
{
	return txs_now_real_ns();
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, const char *a, const char *b)
{
	if (err && errlen)
		snprintf(err, errlen, fmt, a, b);
	return rc;
}

/* |a - b| within TXS_CTL_CLOCK_MAX_NS, as a signed difference */
static bool sdiff(uint64_t a, uint64_t b, int64_t *d)
{
	uint64_t m = a >= b ? a - b : b - a;
	if (m > (uint64_t)TXS_CTL_CLOCK_MAX_NS)
		return false;
	*d = a >= b ? (int64_t)m : -(int64_t)m;
	return true;
}

TXS_API int txs_ctl_clock_sample(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4, int64_t *offset,
				 uint64_t *rtt)
{
	int64_t a, b;
	if (t4 < t1 || t3 < t2 || t4 - t1 > (uint64_t)TXS_CTL_CLOCK_MAX_NS || t3 - t2 > t4 - t1 || !sdiff(t2, t1, &a) ||
	    !sdiff(t3, t4, &b))
		return -ERANGE;
	*offset = a / 2 + b / 2 + (a % 2 + b % 2) / 2; /* (a + b) / 2 without overflow */
	*rtt = (t4 - t1) - (t3 - t2);
	return 0;
}

TXS_API int txs_ctl_clock_best(const struct txs_ctl_stamps *s, unsigned n, struct txs_ctl_clock *out)
{
	out->used = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t off;
		uint64_t rtt;
		if (txs_ctl_clock_sample(s[i].t1, s[i].t2, s[i].t3, s[i].t4, &off, &rtt) < 0)
			continue; /* stamps that cannot be give no sample */
		if (!out->used || rtt < out->rtt_ns) {
			out->offset_ns = off;
			out->rtt_ns = rtt;
		}
		out->used++;
	}
	return out->used ? 0 : -ERANGE;
}

TXS_API int txs_ctl_clock_measure(int fd, unsigned n, int timeout_ms, struct txs_ctl_clock *out, char *err,
				  size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->method = TXS_CTL_CLOCK_TCP;
	if (n < 1 || n > 64)
		return -EINVAL;
	struct txs_ctl_stamps st[64];
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		struct txs_ctl_msg q = { .type = TXS_CTL_TIME, .t1 = real_ns() }, a;
		int rc = txs_ctl_write(fd, &q, timeout_ms, err, errlen);
		if (rc < 0)
			return rc;
		rc = txs_ctl_read(fd, &a, TXS_CTL_SMALL_MAX, timeout_ms, err, errlen);
		uint64_t t4 = real_ns();
		if (rc < 0) {
			txs_ctl_msg_free(&a);
			return rc;
		}
		rc = ctl_time_check(&a, err, errlen);
		if (rc < 0) {
			txs_ctl_msg_free(&a);
			return rc;
		}
		/* an answer to another question gives no sample */
		if (a.t1 == q.t1)
			st[k++] = (struct txs_ctl_stamps){ q.t1, a.t2, a.t3, t4 };
		txs_ctl_msg_free(&a);
	}
	if (txs_ctl_clock_best(st, k, out) < 0) {
		snprintf(err, errlen, "clock exchange: no answer held usable stamps");
		return -ERANGE;
	}
	return 0;
}

int ctl_time_check(const struct txs_ctl_msg *a, char *err, size_t errlen)
{
	if (a->type == TXS_CTL_ERROR) { /* a refusal (a wrong secret, say): the server's words */
		snprintf(err, errlen, "the server says: %s", a->message);
		return -EREMOTEIO;
	}
	if (a->type != TXS_CTL_TIME) {
		snprintf(err, errlen, "clock exchange: expected time, got %s", txs_ctl_type_str(a->type));
		return -EPROTO;
	}
	return 0;
}

TXS_API int txs_ctl_clock_answer(int fd, const struct txs_ctl_msg *m, uint64_t t2, int timeout_ms, char *err,
				 size_t errlen)
{
	if (m->udp) /* UDP probes with kernel stamps (clock_udp.c) */
		return ctl_clock_serve_udp(fd, m, t2, timeout_ms, err, errlen);
	struct txs_ctl_msg a = { .type = TXS_CTL_TIME, .t1 = m->t1, .t2 = t2 };
	a.t3 = real_ns();
	return txs_ctl_write(fd, &a, timeout_ms, err, errlen);
}

/* ---- message fields ------------------------------------------------------------------------------ */
static int rd_int(json_t *o, const char *where, const char *key, bool need, int64_t lo, int64_t hi, int64_t *out,
		  char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		if (!need)
			return 0;
		return fail(err, errlen, -EPROTO, "malformed message: %s.%s is missing", where, key);
	}
	if (!json_is_integer(v))
		return fail(err, errlen, -EPROTO, "malformed message: %s.%s is not an integer", where, key);
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return fail(err, errlen, -EPROTO, "malformed message: %s.%s is out of range", where, key);
	*out = x;
	return 0;
}

int ctl_clock_rd(json_t *o, const char *where, bool drift, struct txs_ctl_clock_rep *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	json_t *k = json_object_get(o, "clock");
	if (!k)
		return 0;
	char w[64];
	snprintf(w, sizeof(w), "%s.clock", where);
	if (!json_is_object(k))
		return fail(err, errlen, -EPROTO, "malformed message: %s%s is not an object", w, "");
	int64_t off = 0, e = 0, d = 0;
	int rc;
	const int64_t M = TXS_CTL_CLOCK_MAX_NS;
	if ((rc = rd_int(k, w, "offset_ns", true, -M, M, &off, err, errlen)) ||
	    (rc = rd_int(k, w, "error_ns", true, 0, M, &e, err, errlen)))
		return rc;
	json_t *dv = json_object_get(k, "drift_ns");
	if (drift && dv && !json_is_null(dv)) {
		if ((rc = rd_int(k, w, "drift_ns", true, -M, M, &d, err, errlen)))
			return rc;
		c->have_drift = true;
		c->drift_ns = d;
	}
	json_t *mv = json_object_get(k, "method");
	if (mv && !json_is_null(mv)) {
		if (!json_is_string(mv))
			return fail(err, errlen, -EPROTO, "malformed message: %s.%s is not a string", w, "method");
		c->method = ctl_clock_method(json_string_value(mv)); /* one we do not know: not said */
	}
	c->on = true;
	c->offset_ns = off;
	c->error_ns = (uint64_t)e;
	return 0;
}

const char *ctl_clock_method(const char *s)
{
	if (strcmp(s, TXS_CTL_CLOCK_UDP) == 0)
		return TXS_CTL_CLOCK_UDP;
	if (strcmp(s, TXS_CTL_CLOCK_TCP) == 0)
		return TXS_CTL_CLOCK_TCP;
	return NULL;
}

bool ctl_clock_put(json_t *o, const struct txs_ctl_clock_rep *c, bool drift)
{
	json_t *k = json_object();
	if (!k)
		return false;
	bool ok = json_object_set_new(k, "offset_ns", json_integer(c->offset_ns)) == 0 &&
		  json_object_set_new(k, "error_ns", json_integer((json_int_t)c->error_ns)) == 0;
	if (ok && drift && c->have_drift)
		ok = json_object_set_new(k, "drift_ns", json_integer(c->drift_ns)) == 0;
	if (ok && c->method)
		ok = json_object_set_new(k, "method", json_string(c->method)) == 0;
	if (!ok) {
		json_decref(k);
		return false;
	}
	return json_object_set_new(o, "clock", k) == 0;
}

int ctl_time_rd(json_t *o, struct txs_ctl_msg *m, char *err, size_t errlen)
{
	int64_t v[3] = { 0, 0, 0 };
	static const char *const keys[3] = { "t1", "t2", "t3" };
	for (unsigned i = 0; i < 3; i++) {
		int rc = rd_int(o, "time", keys[i], i == 0, 0, INT64_MAX, &v[i], err, errlen);
		if (rc)
			return rc;
	}
	int64_t port = 0;
	int rc = rd_int(o, "time", "udp", false, 1, 65535, &port, err, errlen);
	if (rc)
		return rc;
	m->t1 = (uint64_t)v[0];
	m->t2 = (uint64_t)v[1];
	m->t3 = (uint64_t)v[2];
	m->udp = (uint16_t)port;
	return 0;
}

bool ctl_time_put(json_t *o, const struct txs_ctl_msg *m)
{
	if (m->t1 > INT64_MAX || m->t2 > INT64_MAX || m->t3 > INT64_MAX)
		return false;
	bool ok = json_object_set_new(o, "t1", json_integer((json_int_t)m->t1)) == 0;
	if (ok && (m->t2 || m->t3))
		ok = json_object_set_new(o, "t2", json_integer((json_int_t)m->t2)) == 0 &&
		     json_object_set_new(o, "t3", json_integer((json_int_t)m->t3)) == 0;
	if (ok && m->udp)
		ok = json_object_set_new(o, "udp", json_integer(m->udp)) == 0;
	return ok;
}

/* ---- the clock line beside a sender summary ---------------------------------------------------- */
TXS_API int txs_ctl_clock_line(char *buf, size_t len, const struct txs_ctl_clock_rep *c)
{
	char d[32] = "null", m[48] = "";
	if (c->have_drift)
		snprintf(d, sizeof(d), "%lld", (long long)c->drift_ns);
	if (c->method && ctl_clock_method(c->method)) /* only the names we know: no quoting needed */
		snprintf(m, sizeof(m), ",\"method\":\"%s\"", c->method);
	int n = snprintf(buf, len, "{\"type\":\"clock\",\"offset_ns\":%lld,\"error_ns\":%llu,\"drift_ns\":%s%s}\n",
			 (long long)c->offset_ns, (unsigned long long)c->error_ns, d, m);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

TXS_API int txs_ctl_clock_line_parse(const char *text, size_t len, struct txs_ctl_clock_rep *c)
{
	memset(c, 0, sizeof(*c));
	int found = -ENOENT;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - text) : len;
		json_t *o = json_loadb(text + i, end - i, JSON_REJECT_DUPLICATES, NULL);
		json_t *t = o ? json_object_get(o, "type") : NULL;
		if (t && json_is_string(t) && strcmp(json_string_value(t), "clock") == 0) {
			/* the fields as in done.clock */
			json_t *w = json_object();
			struct txs_ctl_clock_rep r;
			char e[128];
			if (w && json_object_set(w, "clock", o) == 0 && ctl_clock_rd(w, "clock", true, &r, e, sizeof(e)) == 0 &&
			    r.on) {
				*c = r;
				found = 0;
			} else {
				found = -EPROTO;
			}
			json_decref(w);
		}
		json_decref(o);
		i = end + 1;
	}
	return found;
}
