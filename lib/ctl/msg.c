/* SPDX-License-Identifier: MIT */
/* Control messages <-> JSON (docs/control.md), parsed with jansson. Decoding
 * is strict about what it uses (types, ranges, alphabets) and ignores keys
 * it does not know, so a later minor addition stays readable. Encoding
 * decodes its own output once, so nothing is ever sent that the peer's
 * decoder would refuse. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <txscale/ctl.h>
#include "common/err.h"
#include "clock_priv.h"
#include "ctl_priv.h"

static const char *const type_names[] = {
	[TXS_CTL_HELLO] = "hello", [TXS_CTL_BUSY] = "busy",   [TXS_CTL_AUTH] = "auth",
	[TXS_CTL_SETUP] = "setup", [TXS_CTL_READY] = "ready", [TXS_CTL_DONE] = "done",
	[TXS_CTL_RESULT] = "result", [TXS_CTL_ERROR] = "error", [TXS_CTL_BYE] = "bye",
	[TXS_CTL_TIME] = "time", [TXS_CTL_WAIT] = "wait",
};

TXS_API const char *txs_ctl_type_str(enum txs_ctl_type t)
{
	if ((unsigned)t < TXS_ARRAY_SIZE(type_names) && type_names[t])
		return type_names[t];
	return "?";
}

TXS_API void txs_ctl_msg_free(struct txs_ctl_msg *m)
{
	if (!m)
		return;
	free(m->sender);
	free(m->receiver);
	memset(m, 0, sizeof(*m));
}


/* ---- field readers: 0 (absent fields keep *out), or -EPROTO with err ----------------------------- */

struct rd {
	const char *where; /* "setup.recv" */
	char *err;
	size_t errlen;
};

static int bad(struct rd *r, const char *key, const char *why)
{
	return txs_fail(r->err, r->errlen, -EPROTO, "malformed message: %s%s%s %s", r->where, r->where[0] ? "." : "",
		    key, why);
}

static int rd_u64(struct rd *r, json_t *o, const char *key, bool need, uint64_t lo, uint64_t hi, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_integer(v))
		return bad(r, key, "is not an integer");
	json_int_t x = json_integer_value(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi) {
		char why[96];
		snprintf(why, sizeof(why), "is out of range (%llu..%llu)", (unsigned long long)lo,
			 (unsigned long long)hi);
		return bad(r, key, why);
	}
	*out = (uint64_t)x;
	return 0;
}

static int rd_uint(struct rd *r, json_t *o, const char *key, bool need, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t x = *out;
	int rc = rd_u64(r, o, key, need, lo, hi, &x);
	*out = (unsigned)x;
	return rc;
}

static int rd_dbl(struct rd *r, json_t *o, const char *key, double lo, double hi, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_number(v))
		return bad(r, key, "is not a number");
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi) {
		char why[96];
		snprintf(why, sizeof(why), "is out of range (%g..%g)", lo, hi);
		return bad(r, key, why);
	}
	*out = x;
	return 0;
}

static int rd_bool(struct rd *r, json_t *o, const char *key, bool need, bool *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_boolean(v))
		return bad(r, key, "is not true or false");
	*out = json_is_true(v);
	return 0;
}

/* A string whose every byte passes ok(); at most cap - 1 bytes. */
static int rd_str(struct rd *r, json_t *o, const char *key, bool need, char *out, size_t cap, bool (*ok)(int c))
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_string(v))
		return bad(r, key, "is not a string");
	size_t n = json_string_length(v);
	const char *s = json_string_value(v);
	if (n >= cap)
		return bad(r, key, "is too long");
	for (size_t i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return bad(r, key, "holds a character it may not");
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

/* Free text shown to a user: printable ASCII kept, anything else '?',
 * cut to cap - 1 bytes. */
static int rd_text(struct rd *r, json_t *o, const char *key, bool need, char *out, size_t cap)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_string(v))
		return bad(r, key, "is not a string");
	size_t n = json_string_length(v);
	const char *s = json_string_value(v);
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[n] = 0;
	return 0;
}

static int rd_hex(struct rd *r, json_t *o, const char *key, uint8_t *out, size_t n)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return bad(r, key, "is missing");
	if (!json_is_string(v) || json_string_length(v) != 2 * n)
		return bad(r, key, "is not a hex string of the right length");
	const char *s = json_string_value(v);
	for (size_t i = 0; i < n; i++) {
		unsigned b = 0;
		for (int k = 0; k < 2; k++) {
			char c = s[2 * i + (size_t)k];
			unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
				     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
								  : 16;
			if (d > 15)
				return bad(r, key, "is not lower-case hex");
			b = b * 16 + d;
		}
		out[i] = (uint8_t)b;
	}
	return 0;
}

/* A txscale summary line (an object with "type":"summary","kind":kind),
 * kept as compact JSON text. */
static int rd_summary(struct rd *r, json_t *o, const char *key, const char *kind, char **out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_object(v))
		return bad(r, key, "is not an object");
	json_t *t = json_object_get(v, "type"), *k = json_object_get(v, "kind");
	if (!json_is_string(t) || strcmp(json_string_value(t), "summary") != 0 || !json_is_string(k) ||
	    strcmp(json_string_value(k), kind) != 0) {
		char why[96];
		snprintf(why, sizeof(why), "is not a %s summary (\"type\":\"summary\",\"kind\":\"%s\")", kind, kind);
		return bad(r, key, why);
	}
	int rc = txs_ctl_summary_check(v, kind, key, r->err, r->errlen);
	if (rc)
		return rc;
	*out = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));
	if (!*out)
		return txs_fail(r->err, r->errlen, -ENOMEM, "out of memory");
	return 0;
}

static bool c_cpus(int c)
{
	return (c >= '0' && c <= '9') || c == ',' || c == '-';
}

static bool c_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static bool c_addr(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == '.' || c == ':';
}

static bool c_dev(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' ||
	       c == '.' || c == ':' || c == ',';
}

/* "udp", or "packet:" and 1..15-character interface names separated by ','. */
static bool dev_ok(const char *d)
{
	if (strcmp(d, "udp") == 0)
		return true;
	if (strncmp(d, "packet:", 7) != 0)
		return false;
	const char *p = d + 7;
	for (;;) {
		size_t n = 0;
		while (p[n] && p[n] != ',') {
			if (p[n] == ':')
				return false;
			n++;
		}
		if (n < 1 || n > 15 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* CPU lists: digits, ranges a-b, commas; no empty items. */
static bool cpus_ok(const char *s)
{
	if (!*s)
		return true;
	const char *p = s;
	for (;;) {
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return false;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (!*p)
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

static int rd_recv(struct rd *r, json_t *o, struct txs_ctl_recv_spec *s)
{
	uint64_t port = 0, rcvbuf = 0;
	int rc;
	if (!json_is_object(o))
		return bad(r, "", "is not an object");
	if ((rc = rd_u64(r, o, "port", true, 0, 65535, &port)) || (rc = rd_str(r, o, "dev", true, s->dev, sizeof(s->dev), c_dev)) ||
	    (rc = rd_uint(r, o, "threads", false, 0, TXS_CTL_MAX_THREADS, &s->threads)) ||
	    (rc = rd_str(r, o, "cpus", false, s->cpus, sizeof(s->cpus), c_cpus)) ||
	    (rc = rd_bool(r, o, "no_pin", false, &s->no_pin)) ||
	    (rc = rd_u64(r, o, "rcvbuf", false, 0, 0x7fffffff, &rcvbuf)) ||
	    (rc = rd_uint(r, o, "window", false, 0, 1u << 24, &s->window)) ||
	    (rc = rd_dbl(r, o, "time", 0, TXS_CTL_MAX_SECONDS, &s->time)) ||
	    (rc = rd_dbl(r, o, "idle", 0, 60, &s->idle)) ||
	    (rc = ctl_clock_rd(o, r->where, false, &s->clock, r->err, r->errlen)))
		return rc;
	if (!dev_ok(s->dev))
		return bad(r, "dev", "is neither \"udp\" nor \"packet:IFNAME[,IFNAME...]\"");
	if (!cpus_ok(s->cpus))
		return bad(r, "cpus", "is not a CPU list like 0-3,6");
	if (s->window & (s->window - 1))
		return bad(r, "window", "is not a power of two");
	s->port = (uint16_t)port;
	s->rcvbuf = rcvbuf;
	s->on = true;
	return 0;
}

static int rd_send(struct rd *r, json_t *o, struct txs_ctl_send_spec *s)
{
	uint64_t port = 0;
	int rc;
	if (!json_is_object(o))
		return bad(r, "", "is not an object");
	if ((rc = rd_u64(r, o, "port", true, 1, 65535, &port)) ||
	    (rc = rd_str(r, o, "dest", false, s->dest, sizeof(s->dest), c_addr)) ||
	    (rc = rd_uint(r, o, "length", true, 0, 65527, &s->length)) ||
	    (rc = rd_dbl(r, o, "rate", 0, 1e12, &s->rate)) ||
	    (rc = rd_u64(r, o, "count", false, 0, 1ull << 62, &s->count)) ||
	    (rc = rd_dbl(r, o, "time", 0, TXS_CTL_MAX_SECONDS, &s->time)) ||
	    (rc = rd_uint(r, o, "threads", false, 0, TXS_CTL_MAX_THREADS, &s->threads)) ||
	    (rc = rd_str(r, o, "cpus", false, s->cpus, sizeof(s->cpus), c_cpus)) ||
	    (rc = rd_bool(r, o, "no_pin", false, &s->no_pin)) ||
	    (rc = rd_str(r, o, "timestamps", false, s->timestamps, sizeof(s->timestamps), c_lower)))
		return rc;
	if (s->timestamps[0] && strcmp(s->timestamps, "burst") && strcmp(s->timestamps, "packet") &&
	    strcmp(s->timestamps, "interp"))
		return bad(r, "timestamps", "is not burst, packet or interp");
	struct txs_addr a;
	if (s->dest[0] && txs_addr_parse(&a, s->dest) < 0)
		return bad(r, "dest", "is not an IPv4 or IPv6 address");
	if (!cpus_ok(s->cpus))
		return bad(r, "cpus", "is not a CPU list like 0-3,6");
	if (!s->count && !(s->time > 0))
		return bad(r, "count", "and time are both 0: the sender would not end");
	s->port = (uint16_t)port;
	s->on = true;
	return 0;
}

static int decode_obj(struct txs_ctl_msg *m, json_t *root, char *err, size_t errlen)
{
	struct rd r = { "", err, errlen };
	if (!json_is_object(root))
		return txs_fail(err, errlen, -EPROTO, "malformed message: not a JSON object");
	json_t *v = json_object_get(root, "v");
	if (!v)
		return txs_fail(err, errlen, -EPROTO, "malformed message: no protocol version \"v\"");
	if (!json_is_integer(v))
		return txs_fail(err, errlen, -EPROTO, "malformed message: protocol version \"v\" is not an integer");
	if (json_integer_value(v) != TXS_CTL_VERSION)
		return txs_fail(err, errlen, -EPROTONOSUPPORT, "unsupported protocol version %lld (this txscale speaks %d)",
			    (long long)json_integer_value(v), TXS_CTL_VERSION);
	json_t *t = json_object_get(root, "type");
	if (!json_is_string(t))
		return txs_fail(err, errlen, -EPROTO, "malformed message: no \"type\" string");
	const char *ts = json_string_value(t);
	for (unsigned i = 1; i < TXS_ARRAY_SIZE(type_names); i++)
		if (strcmp(ts, type_names[i]) == 0)
			m->type = (enum txs_ctl_type)i;
	if (!m->type) {
		char safe[33];
		size_t i = 0;
		for (; ts[i] && i < sizeof(safe) - 1; i++)
			safe[i] = ts[i] >= 0x20 && ts[i] < 0x7f ? ts[i] : '?';
		safe[i] = 0;
		return txs_fail(err, errlen, -EPROTO, "malformed message: unknown type \"%s\"", safe);
	}
	r.where = type_names[m->type];
	uint64_t test = 0;
	int rc = 0;
	switch (m->type) {
	case TXS_CTL_HELLO:
		if ((rc = rd_text(&r, root, "software", true, m->software, sizeof(m->software))) ||
		    (rc = rd_bool(&r, root, "auth", true, &m->auth)) ||
		    (rc = rd_hex(&r, root, "nonce", m->nonce, sizeof(m->nonce))) ||
		    (rc = rd_bool(&r, root, "clock", false, &m->clock)) ||
		    (rc = rd_bool(&r, root, "clock_udp", false, &m->clock_udp)) ||
		    (rc = rd_bool(&r, root, "ports", false, &m->ports)))
			return rc;
		break;
	case TXS_CTL_BUSY:
	case TXS_CTL_ERROR:
	case TXS_CTL_WAIT:
		if ((rc = rd_text(&r, root, "message", true, m->message, sizeof(m->message))))
			return rc;
		break;
	case TXS_CTL_AUTH:
		if ((rc = rd_hex(&r, root, "mac", m->mac, sizeof(m->mac))))
			return rc;
		break;
	case TXS_CTL_SETUP: {
		if ((rc = rd_u64(&r, root, "test", true, 0, UINT32_MAX, &test)))
			return rc;
		json_t *rv = json_object_get(root, "recv"), *sd = json_object_get(root, "send");
		if (!rv && !sd)
			return txs_fail(err, errlen, -EPROTO, "malformed message: setup asks for neither \"recv\" nor \"send\"");
		if (rv) {
			r.where = "setup.recv";
			if ((rc = rd_recv(&r, rv, &m->recv)))
				return rc;
		}
		if (sd) {
			r.where = "setup.send";
			if ((rc = rd_send(&r, sd, &m->send)))
				return rc;
		}
		break;
	}
	case TXS_CTL_READY: {
		uint64_t port = 0;
		if ((rc = rd_u64(&r, root, "test", true, 0, UINT32_MAX, &test)) ||
		    (rc = rd_u64(&r, root, "port", false, 1, 65535, &port)))
			return rc;
		m->port = (uint16_t)port;
		break;
	}
	case TXS_CTL_DONE:
		if ((rc = rd_u64(&r, root, "test", true, 0, UINT32_MAX, &test)) ||
		    (rc = rd_bool(&r, root, "failed", false, &m->failed)) ||
		    (rc = rd_text(&r, root, "message", false, m->message, sizeof(m->message))) ||
		    (rc = rd_summary(&r, root, "sender", "send", &m->sender)) ||
		    (rc = ctl_clock_rd(root, "done", true, &m->done_clock, err, errlen)))
			return rc;
		if (!m->failed && !m->sender)
			return bad(&r, "sender", "is missing (and the sender did not fail)");
		break;
	case TXS_CTL_RESULT:
		if ((rc = rd_u64(&r, root, "test", true, 0, UINT32_MAX, &test)) ||
		    (rc = rd_summary(&r, root, "sender", "send", &m->sender)) ||
		    (rc = rd_summary(&r, root, "receiver", "recv", &m->receiver)))
			return rc;
		break;
	case TXS_CTL_BYE:
		break;
	case TXS_CTL_TIME:
		if ((rc = ctl_time_rd(root, m, err, errlen)))
			return rc;
		break;
	}
	m->test = (uint32_t)test;
	return 0;
}

TXS_API int txs_ctl_decode(struct txs_ctl_msg *m, const char *json, size_t len, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (err && errlen)
		err[0] = 0;
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		char safe[64];
		size_t i = 0;
		for (; je.text[i] && i < sizeof(safe) - 1; i++)
			safe[i] = je.text[i] >= 0x20 && je.text[i] < 0x7f ? je.text[i] : '?';
		safe[i] = 0;
		return txs_fail(err, errlen, -EPROTO, "malformed message: not JSON (%s at byte %d)", safe, je.position);
	}
	int rc = decode_obj(m, root, err, errlen);
	json_decref(root);
	if (rc < 0) {
		free(m->sender);
		free(m->receiver);
		m->sender = m->receiver = NULL;
	}
	return rc;
}

/* ---- encoding ----------------------------------------------------------------------------------- */

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

/* json_object_set_new that remembers a failure */
static void put(json_t *o, const char *k, json_t *v, bool *ok)
{
	if (!v || json_object_set_new(o, k, v) < 0)
		*ok = false;
}

static json_t *enc_recv(const struct txs_ctl_recv_spec *s, bool *ok)
{
	json_t *o = json_object();
	if (!o) {
		*ok = false;
		return NULL;
	}
	put(o, "port", json_integer(s->port), ok);
	put(o, "dev", json_string(s->dev), ok);
	if (s->threads)
		put(o, "threads", json_integer(s->threads), ok);
	if (s->cpus[0])
		put(o, "cpus", json_string(s->cpus), ok);
	if (s->no_pin)
		put(o, "no_pin", json_true(), ok);
	if (s->rcvbuf)
		put(o, "rcvbuf", json_integer((json_int_t)s->rcvbuf), ok);
	if (s->window)
		put(o, "window", json_integer(s->window), ok);
	if (s->time > 0)
		put(o, "time", json_real(s->time), ok);
	if (s->idle > 0)
		put(o, "idle", json_real(s->idle), ok);
	if (s->clock.on && !ctl_clock_put(o, &s->clock, false))
		*ok = false;
	return o;
}

static json_t *enc_send(const struct txs_ctl_send_spec *s, bool *ok)
{
	json_t *o = json_object();
	if (!o) {
		*ok = false;
		return NULL;
	}
	put(o, "port", json_integer(s->port), ok);
	if (s->dest[0])
		put(o, "dest", json_string(s->dest), ok);
	put(o, "length", json_integer(s->length), ok);
	put(o, "rate", json_real(s->rate), ok);
	if (s->count)
		put(o, "count", json_integer((json_int_t)(s->count > (1ull << 62) ? (1ull << 62) + 1 : s->count)), ok);
	if (s->time > 0)
		put(o, "time", json_real(s->time), ok);
	if (s->threads)
		put(o, "threads", json_integer(s->threads), ok);
	if (s->cpus[0])
		put(o, "cpus", json_string(s->cpus), ok);
	if (s->no_pin)
		put(o, "no_pin", json_true(), ok);
	if (s->timestamps[0])
		put(o, "timestamps", json_string(s->timestamps), ok);
	return o;
}

static json_t *enc_summary(const char *text, bool *ok)
{
	json_t *v = json_loads(text, 0, NULL);
	if (!v)
		*ok = false;
	return v;
}

TXS_API int txs_ctl_encode(const struct txs_ctl_msg *m, char **json, size_t *len, char *err, size_t errlen)
{
	*json = NULL;
	*len = 0;
	if (err && errlen)
		err[0] = 0;
	if ((unsigned)m->type >= TXS_ARRAY_SIZE(type_names) || !type_names[m->type])
		return txs_fail(err, errlen, -EINVAL, "unknown message type %d", (int)m->type);
	json_t *o = json_object();
	if (!o)
		return -ENOMEM;
	bool ok = true;
	char h[2 * TXS_CTL_NONCE_LEN + 1];
	put(o, "v", json_integer(TXS_CTL_VERSION), &ok);
	put(o, "type", json_string(type_names[m->type]), &ok);
	switch (m->type) {
	case TXS_CTL_HELLO:
		put(o, "software", json_string(m->software), &ok);
		put(o, "auth", json_boolean(m->auth), &ok);
		hex(h, m->nonce, sizeof(m->nonce));
		put(o, "nonce", json_string(h), &ok);
		if (m->clock)
			put(o, "clock", json_true(), &ok);
		if (m->clock_udp)
			put(o, "clock_udp", json_true(), &ok);
		if (m->ports)
			put(o, "ports", json_true(), &ok);
		break;
	case TXS_CTL_BUSY:
	case TXS_CTL_ERROR:
	case TXS_CTL_WAIT:
		put(o, "message", json_string(m->message), &ok);
		break;
	case TXS_CTL_AUTH:
		hex(h, m->mac, sizeof(m->mac));
		put(o, "mac", json_string(h), &ok);
		break;
	case TXS_CTL_SETUP:
		put(o, "test", json_integer(m->test), &ok);
		if (m->recv.on)
			put(o, "recv", enc_recv(&m->recv, &ok), &ok);
		if (m->send.on)
			put(o, "send", enc_send(&m->send, &ok), &ok);
		break;
	case TXS_CTL_READY:
		put(o, "test", json_integer(m->test), &ok);
		if (m->port)
			put(o, "port", json_integer(m->port), &ok);
		break;
	case TXS_CTL_DONE:
		put(o, "test", json_integer(m->test), &ok);
		if (m->failed) {
			put(o, "failed", json_true(), &ok);
			put(o, "message", json_string(m->message), &ok);
		}
		if (m->sender)
			put(o, "sender", enc_summary(m->sender, &ok), &ok);
		if (m->done_clock.on && !ctl_clock_put(o, &m->done_clock, true))
			ok = false;
		break;
	case TXS_CTL_RESULT:
		put(o, "test", json_integer(m->test), &ok);
		if (m->sender)
			put(o, "sender", enc_summary(m->sender, &ok), &ok);
		if (m->receiver)
			put(o, "receiver", enc_summary(m->receiver, &ok), &ok);
		break;
	case TXS_CTL_BYE:
		break;
	case TXS_CTL_TIME:
		ok = ok && ctl_time_put(o, m);
		break;
	}
	char *s = ok ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!s)
		return txs_fail(err, errlen, -EINVAL, "cannot encode a %s message (a field is not valid UTF-8 or JSON)",
			    type_names[m->type]);
	size_t n = strlen(s);
	/* the peer's rules, applied to what we would send */
	struct txs_ctl_msg chk;
	char e2[256];
	int rc = txs_ctl_decode(&chk, s, n, e2, sizeof(e2));
	txs_ctl_msg_free(&chk);
	if (rc < 0) {
		free(s);
		return txs_fail(err, errlen, -EINVAL, "would send an invalid message: %s", e2);
	}
	if (n > TXS_CTL_MSG_MAX) {
		free(s);
		return txs_fail(err, errlen, -EMSGSIZE, "message of %zu bytes is over the limit %u", n, TXS_CTL_MSG_MAX);
	}
	*json = s;
	*len = n;
	return 0;
}
