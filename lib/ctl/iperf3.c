/* SPDX-License-Identifier: MIT */
/* iperf3's control messages (docs/iperf3.md) <-> C, with jansson. iperf3
 * writes its JSON with cJSON, which prints a whole number that fits an int
 * as an integer and anything else with %1.15g/%1.17g: a count may come as a
 * real ("5e+09"), so a count is any number that is whole, in range and at
 * most 2^53 (beyond that a double is not exact). Every encoder decodes its
 * own output before handing it out. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <sodium.h>
#include <txscale/iperf3.h>
#include "ctl_priv.h"

#define EXACT_MAX (1ull << 53)


TXS_API const char *txs_ip3_state_str(int state)
{
	switch (state) {
	case TXS_IP3_TEST_START: return "TEST_START";
	case TXS_IP3_TEST_RUNNING: return "TEST_RUNNING";
	case TXS_IP3_TEST_END: return "TEST_END";
	case TXS_IP3_PARAM_EXCHANGE: return "PARAM_EXCHANGE";
	case TXS_IP3_CREATE_STREAMS: return "CREATE_STREAMS";
	case TXS_IP3_SERVER_TERMINATE: return "SERVER_TERMINATE";
	case TXS_IP3_CLIENT_TERMINATE: return "CLIENT_TERMINATE";
	case TXS_IP3_EXCHANGE_RESULTS: return "EXCHANGE_RESULTS";
	case TXS_IP3_DISPLAY_RESULTS: return "DISPLAY_RESULTS";
	case TXS_IP3_IPERF_START: return "IPERF_START";
	case TXS_IP3_IPERF_DONE: return "IPERF_DONE";
	case TXS_IP3_ACCESS_DENIED: return "ACCESS_DENIED";
	case TXS_IP3_SERVER_ERROR: return "SERVER_ERROR";
	default: return "?";
	}
}

/* ---- field readers ------------------------------------------------------------------------------- */

struct rd {
	const char *where;
	char *err;
	size_t errlen;
};

static int bad(struct rd *r, const char *key, const char *why)
{
	return txs_ctl_fail(r->err, r->errlen, -EPROTO, "malformed iperf3 message: %s%s%s %s", r->where,
		    r->where[0] ? "." : "", key, why);
}

/* A whole number in lo..hi (every number is read as a double: at most 2^53
 * in magnitude, where it stops being exact). Absent: *out kept. */
static int rd_int(struct rd *r, json_t *o, const char *key, bool need, int64_t lo, int64_t hi, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_number(v))
		return bad(r, key, "is not a number");
	double d = json_number_value(v);
	if (!isfinite(d) || d != floor(d))
		return bad(r, key, "is not a whole number");
	if (d < 0 && lo >= 0)
		return bad(r, key, "is negative");
	if (fabs(d) > (double)EXACT_MAX)
		return bad(r, key, "is too large to be exact");
	int64_t x = (int64_t)d;
	if (x < lo || x > hi) {
		char why[96];
		snprintf(why, sizeof(why), "is out of range (%lld..%lld)", (long long)lo, (long long)hi);
		return bad(r, key, why);
	}
	*out = x;
	return 0;
}

static int rd_count(struct rd *r, json_t *o, const char *key, bool need, uint64_t lo, uint64_t hi, uint64_t *out)
{
	int64_t x = (int64_t)*out;
	int rc = rd_int(r, o, key, need, (int64_t)lo, (int64_t)hi, &x);
	*out = (uint64_t)x;
	return rc;
}

static int rd_uint(struct rd *r, json_t *o, const char *key, bool need, unsigned lo, unsigned hi, unsigned *out)
{
	int64_t x = *out;
	int rc = rd_int(r, o, key, need, lo, hi, &x);
	*out = (unsigned)x;
	return rc;
}

static int rd_dbl(struct rd *r, json_t *o, const char *key, bool need, double lo, double hi, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return need ? bad(r, key, "is missing") : 0;
	if (!json_is_number(v))
		return bad(r, key, "is not a number");
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi)
		return bad(r, key, "is out of range");
	*out = x;
	return 0;
}

/* A flag: true or a non-zero number is on, false or 0 off. */
static int rd_flag(struct rd *r, json_t *o, const char *key, bool *out)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (json_is_boolean(v))
		*out = json_is_true(v);
	else if (json_is_number(v) && isfinite(json_number_value(v)))
		*out = json_number_value(v) != 0;
	else
		return bad(r, key, "is not a flag (true, false or a number)");
	return 0;
}

static bool version_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '+' ||
	       c == '~' || c == '_' || c == '-';
}

static json_t *load(const char *json, size_t len, size_t max, struct rd *r, int *rc)
{
	if (len == 0 || len > max) {
		*rc = txs_ctl_fail(r->err, r->errlen, -EMSGSIZE, "iperf3 %s message of %zu bytes (1..%zu accepted)",
			   r->where, len, max);
		return NULL;
	}
	json_error_t je;
	/* cJSON writes 2^64-1 for an unsigned -1 (retransmits): read every number as a double */
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
	if (!root) {
		*rc = txs_ctl_fail(r->err, r->errlen, -EPROTO, "malformed iperf3 %s message: %s", r->where, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		*rc = txs_ctl_fail(r->err, r->errlen, -EPROTO, "malformed iperf3 %s message: not a JSON object", r->where);
		return NULL;
	}
	*rc = 0;
	return root;
}

/* ---- parameters -------------------------------------------------------------------------------- */

TXS_API int txs_ip3_params_decode(struct txs_ip3_params *p, const char *json, size_t len, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->parallel = 1;
	struct rd r = { "params", err, errlen };
	int rc;
	json_t *o = load(json, len, TXS_IP3_PARAM_MAX, &r, &rc);
	if (!o)
		return rc;
	bool tcp = false, udp = false, sctp = false;
	uint64_t x;
	if ((rc = rd_flag(&r, o, "tcp", &tcp)) || (rc = rd_flag(&r, o, "udp", &udp)) ||
	    (rc = rd_flag(&r, o, "sctp", &sctp)))
		goto out;
	/* the last one iperf3 looks at wins: tcp, udp, sctp */
	p->proto = sctp ? TXS_IP3_SCTP : udp ? TXS_IP3_UDP : tcp ? TXS_IP3_TCP : TXS_IP3_PROTO_NONE;
	if ((rc = rd_uint(&r, o, "omit", false, 0, TXS_IP3_TIME_MAX, &p->omit)) ||
	    (rc = rd_uint(&r, o, "time", false, 0, TXS_IP3_TIME_MAX, &p->time)) ||
	    (rc = rd_count(&r, o, "num", false, 0, EXACT_MAX, &p->num)) ||
	    (rc = rd_count(&r, o, "blockcount", false, 0, EXACT_MAX, &p->blockcount)) ||
	    (rc = rd_uint(&r, o, "parallel", false, 1, 1u << 20, &p->parallel)) ||
	    (rc = rd_uint(&r, o, "len", false, 0, 1u << 30, &p->len)) ||
	    (rc = rd_count(&r, o, "bandwidth", false, 0, EXACT_MAX, &p->bandwidth)) ||
	    (rc = rd_count(&r, o, "window", false, 0, 1u << 30, &p->window)) ||
	    (rc = rd_uint(&r, o, "TOS", false, 0, 255, &p->tos)) ||
	    (rc = rd_uint(&r, o, "pacing_timer", false, 0, 1000000000u, &p->pacing_timer)) ||
	    (rc = rd_flag(&r, o, "reverse", &p->reverse)) ||
	    (rc = rd_flag(&r, o, "bidirectional", &p->bidirectional)) ||
	    (rc = rd_flag(&r, o, "get_server_output", &p->get_server_output)) ||
	    (rc = rd_flag(&r, o, "udp_counters_64bit", &p->udp_counters_64bit)) ||
	    (rc = rd_flag(&r, o, "repeating_payload", &p->repeating_payload)))
		goto out;
	(void)x;
	p->has_authtoken = json_object_get(o, "authtoken") != NULL;
	json_t *v = json_object_get(o, "client_version");
	if (v) {
		if (!json_is_string(v)) {
			rc = bad(&r, "client_version", "is not a string");
			goto out;
		}
		size_t n = json_string_length(v);
		const char *s = json_string_value(v);
		if (n >= sizeof(p->client_version)) {
			rc = bad(&r, "client_version", "is too long");
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (!version_char((unsigned char)s[i])) {
				rc = bad(&r, "client_version", "holds a character it may not");
				goto out;
			}
		memcpy(p->client_version, s, n);
		p->client_version[n] = 0;
	}
out:
	json_decref(o);
	return rc;
}

static int set_num(json_t *o, const char *key, uint64_t v)
{
	return json_object_set_new(o, key, json_integer((json_int_t)v));
}

TXS_API int txs_ip3_params_encode(const struct txs_ip3_params *p, char **json, size_t *len, char *err, size_t errlen)
{
	*json = NULL;
	if (p->proto == TXS_IP3_PROTO_NONE || p->proto > TXS_IP3_SCTP)
		return txs_ctl_fail(err, errlen, -EINVAL, "iperf3 parameters: no protocol");
	if (p->parallel < 1 || p->parallel > TXS_IP3_STREAMS_MAX)
		return txs_ctl_fail(err, errlen, -EINVAL, "iperf3 parameters: %u streams (1..%u)", p->parallel,
			    TXS_IP3_STREAMS_MAX);
	if (p->time > TXS_IP3_TIME_MAX || p->omit > TXS_IP3_TIME_MAX || p->num > EXACT_MAX ||
	    p->blockcount > EXACT_MAX || p->bandwidth > EXACT_MAX || p->len > TXS_IP3_LEN_MAX || p->tos > 255 ||
	    p->window > (1u << 30))
		return txs_ctl_fail(err, errlen, -EINVAL, "iperf3 parameters: a number is out of range");
	for (const char *c = p->client_version; *c; c++)
		if (!version_char((unsigned char)*c))
			return txs_ctl_fail(err, errlen, -EINVAL, "iperf3 parameters: client_version holds a character it may not");
	json_t *o = json_object();
	if (!o)
		return -ENOMEM;
	static const char *const pn[] = { NULL, "tcp", "udp", "sctp" };
	int bad_set = json_object_set_new(o, pn[p->proto], json_true());
	bad_set |= set_num(o, "omit", p->omit);
	bad_set |= set_num(o, "time", p->time);
	bad_set |= set_num(o, "num", p->num);
	bad_set |= set_num(o, "blockcount", p->blockcount);
	bad_set |= set_num(o, "parallel", p->parallel);
	if (p->reverse)
		bad_set |= json_object_set_new(o, "reverse", json_true());
	if (p->bidirectional)
		bad_set |= json_object_set_new(o, "bidirectional", json_true());
	if (p->window)
		bad_set |= set_num(o, "window", p->window);
	if (p->len)
		bad_set |= set_num(o, "len", p->len);
	if (p->bandwidth)
		bad_set |= set_num(o, "bandwidth", p->bandwidth);
	if (p->pacing_timer)
		bad_set |= set_num(o, "pacing_timer", p->pacing_timer);
	if (p->tos)
		bad_set |= set_num(o, "TOS", p->tos);
	if (p->get_server_output)
		bad_set |= set_num(o, "get_server_output", 1);
	if (p->udp_counters_64bit)
		bad_set |= set_num(o, "udp_counters_64bit", 1);
	if (p->repeating_payload)
		bad_set |= set_num(o, "repeating_payload", 1);
	if (p->client_version[0])
		bad_set |= json_object_set_new(o, "client_version", json_string(p->client_version));
	char *s = bad_set ? NULL : json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	struct txs_ip3_params back;
	int rc = txs_ip3_params_decode(&back, s, n, err, errlen);
	if (rc) {
		free(s);
		return rc == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
	}
	*json = s;
	*len = n;
	return 0;
}

TXS_API int txs_ip3_params_check(const struct txs_ip3_params *p, unsigned max_time, char *err, size_t errlen)
{
	if (p->proto != TXS_IP3_UDP)
		return txs_ctl_fail(err, errlen, TXS_IP3_IEUNIMP, "%s tests are not served (UDP only: iperf3 -u)",
			    p->proto == TXS_IP3_TCP ? "TCP" : p->proto == TXS_IP3_SCTP ? "SCTP" : "protocol-less");
	if (p->has_authtoken)
		return txs_ctl_fail(err, errlen, TXS_IP3_IEUNIMP, "iperf3 authentication (--username) is not supported");
	if (p->parallel < 1 || p->parallel > TXS_IP3_STREAMS_MAX)
		return txs_ctl_fail(err, errlen, TXS_IP3_IENUMSTREAMS, "%u streams asked for (1..%u)", p->parallel,
			    TXS_IP3_STREAMS_MAX);
	unsigned lo = p->udp_counters_64bit ? TXS_IP3_LEN_MIN : 12;
	if (p->len < lo || p->len > TXS_IP3_LEN_MAX)
		return txs_ctl_fail(err, errlen, TXS_IP3_IEUDPBLOCKSIZE, "UDP length %u (%u..%u)", p->len, lo, TXS_IP3_LEN_MAX);
	if (p->time == 0 && p->num == 0 && p->blockcount == 0)
		return txs_ctl_fail(err, errlen, TXS_IP3_IEDURATION,
			    "a test without a time or an amount is not served");
	if (max_time && (uint64_t)p->time + p->omit > max_time)
		return txs_ctl_fail(err, errlen, TXS_IP3_IEDURATION, "-t %u with -O %u is over the server's %u s",
				    p->time, p->omit, max_time);
	return 0;
}

/* ---- results ---------------------------------------------------------------------------------------- */

TXS_API void txs_ip3_results_free(struct txs_ip3_results *r)
{
	if (!r)
		return;
	free(r->server_output_text);
	memset(r, 0, sizeof(*r));
}

static int rd_stream(struct rd *r, json_t *o, struct txs_ip3_stream_res *s)
{
	if (!json_is_object(o))
		return bad(r, "streams[]", "is not an object");
	uint64_t x = 0;
	int rc;
	int64_t ign = 0;
	if ((rc = rd_uint(r, o, "id", true, 1, TXS_IP3_RES_STREAMS_MAX + 1, &s->id)) ||
	    (rc = rd_count(r, o, "bytes", true, 0, EXACT_MAX, &s->bytes)) ||
	    (rc = rd_dbl(r, o, "jitter", true, 0, 3600, &s->jitter)) ||
	    (rc = rd_int(r, o, "errors", true, -1, (int64_t)EXACT_MAX, &s->errors)) ||
	    (rc = rd_count(r, o, "packets", true, 0, EXACT_MAX, &s->packets)))
		return rc;
	json_t *v = json_object_get(o, "retransmits");
	if (!v || !json_is_number(v))
		return bad(r, "retransmits", v ? "is not a number" : "is missing");
	json_t *oe = json_object_get(o, "omitted_errors"), *op = json_object_get(o, "omitted_packets");
	if (!oe != !op)
		return bad(r, oe ? "omitted_packets" : "omitted_errors", "is missing (the other omitted_ field is there)");
	if (oe) {
		s->has_omitted = true;
		if ((rc = rd_int(r, o, "omitted_errors", true, -1, (int64_t)EXACT_MAX, &s->omitted_errors)) ||
		    (rc = rd_count(r, o, "omitted_packets", true, 0, EXACT_MAX, &s->omitted_packets)))
			return rc;
	}
	json_t *st = json_object_get(o, "start_time"), *et = json_object_get(o, "end_time");
	if (st && et) {
		s->has_times = true;
		if ((rc = rd_dbl(r, o, "start_time", true, 0, 1e7, &s->start_time)) ||
		    (rc = rd_dbl(r, o, "end_time", true, 0, 1e7, &s->end_time)))
			return rc;
	}
	(void)x;
	(void)ign;
	return 0;
}

TXS_API int txs_ip3_results_decode(struct txs_ip3_results *res, const char *json, size_t len, char *err,
				   size_t errlen)
{
	memset(res, 0, sizeof(*res));
	struct rd r = { "results", err, errlen };
	int rc;
	json_t *o = load(json, len, TXS_IP3_RESULTS_MAX, &r, &rc);
	if (!o)
		return rc;
	double cpu_max = 100.0 * TXS_MAX_CORES;
	if ((rc = rd_dbl(&r, o, "cpu_util_total", true, 0, cpu_max, &res->cpu_total)) ||
	    (rc = rd_dbl(&r, o, "cpu_util_user", true, 0, cpu_max, &res->cpu_user)) ||
	    (rc = rd_dbl(&r, o, "cpu_util_system", true, 0, cpu_max, &res->cpu_system)))
		goto out;
	json_t *v = json_object_get(o, "sender_has_retransmits");
	if (!v || !json_is_number(v)) {
		rc = bad(&r, "sender_has_retransmits", v ? "is not a number" : "is missing");
		goto out;
	}
	res->sender_has_retransmits = json_number_value(v) == 1 ? 1 : json_number_value(v) == 0 ? 0 : -1;
	json_t *a = json_object_get(o, "streams");
	if (!a || !json_is_array(a)) {
		rc = bad(&r, "streams", a ? "is not an array" : "is missing");
		goto out;
	}
	if (json_array_size(a) > TXS_IP3_RES_STREAMS_MAX) {
		rc = bad(&r, "streams", "has too many entries");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(a); i++) {
		struct txs_ip3_stream_res *s = &res->s[i];
		if ((rc = rd_stream(&r, json_array_get(a, i), s)))
			goto out;
		for (size_t k = 0; k < i; k++)
			if (res->s[k].id == s->id) {
				rc = bad(&r, "streams[].id", "is given twice");
				goto out;
			}
		res->n = (unsigned)i + 1;
	}
	json_t *t = json_object_get(o, "server_output_text");
	const char *txt = "";
	if (t) {
		if (!json_is_string(t)) {
			rc = bad(&r, "server_output_text", "is not a string");
			goto out;
		}
		txt = json_string_value(t);
	}
	res->server_output_text = strdup(txt);
	if (!res->server_output_text)
		rc = -ENOMEM;
out:
	json_decref(o);
	return rc;
}

TXS_API int txs_ip3_results_encode(const struct txs_ip3_results *res, char **json, size_t *len, char *err,
				   size_t errlen)
{
	*json = NULL;
	if (res->n > TXS_IP3_RES_STREAMS_MAX)
		return txs_ctl_fail(err, errlen, -EINVAL, "iperf3 results: %u streams", res->n);
	json_t *o = json_object(), *a = json_array();
	if (!o || !a) {
		json_decref(o);
		json_decref(a);
		return -ENOMEM;
	}
	int e = json_object_set_new(o, "cpu_util_total", json_real(res->cpu_total));
	e |= json_object_set_new(o, "cpu_util_user", json_real(res->cpu_user));
	e |= json_object_set_new(o, "cpu_util_system", json_real(res->cpu_system));
	e |= json_object_set_new(o, "sender_has_retransmits", json_integer(res->sender_has_retransmits));
	if (res->server_output_text && res->server_output_text[0])
		e |= json_object_set_new(o, "server_output_text", json_string(res->server_output_text));
	for (unsigned i = 0; i < res->n; i++) {
		const struct txs_ip3_stream_res *s = &res->s[i];
		json_t *so = json_object();
		if (!so) {
			e = -1;
			break;
		}
		e |= json_object_set_new(so, "id", json_integer(s->id));
		e |= set_num(so, "bytes", s->bytes);
		e |= json_object_set_new(so, "retransmits", json_integer(-1));
		e |= json_object_set_new(so, "jitter", json_real(s->jitter));
		e |= json_object_set_new(so, "errors", json_integer(s->errors));
		e |= json_object_set_new(so, "omitted_errors", json_integer(s->has_omitted ? s->omitted_errors : 0));
		e |= set_num(so, "packets", s->packets);
		e |= set_num(so, "omitted_packets", s->has_omitted ? s->omitted_packets : 0);
		if (s->has_times) {
			e |= json_object_set_new(so, "start_time", json_real(s->start_time));
			e |= json_object_set_new(so, "end_time", json_real(s->end_time));
		}
		e |= json_array_append_new(a, so);
	}
	e |= json_object_set_new(o, "streams", a);
	char *s = e ? NULL : json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(o);
	if (!s)
		return -ENOMEM;
	size_t n = strlen(s);
	struct txs_ip3_results back;
	int rc = txs_ip3_results_decode(&back, s, n, err, errlen);
	txs_ip3_results_free(&back);
	if (rc) {
		free(s);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	*json = s;
	*len = n;
	return 0;
}

/* ---- UDP handshake ------------------------------------------------------------ */

static const uint8_t udp_msg_new[4] = { 0x39, 0x38, 0x37, 0x36 };    /* "9876" */
static const uint8_t udp_reply_new[4] = { 0x36, 0x37, 0x38, 0x39 };  /* "6789" */
static const uint8_t udp_msg_le[4] = { 0x15, 0xcd, 0x5b, 0x07 };     /* 123456789, little-endian */
static const uint8_t udp_msg_be[4] = { 0x07, 0x5b, 0xcd, 0x15 };
static const uint8_t udp_reply_le[4] = { 0xb1, 0x68, 0xde, 0x3a };   /* 987654321, little-endian */
static const uint8_t udp_reply_be[4] = { 0x3a, 0xde, 0x68, 0xb1 };

TXS_API enum txs_ip3_udp_kind txs_ip3_udp_msg_kind(const uint8_t *b, size_t len)
{
	if (len != 4)
		return TXS_IP3_UDP_UNKNOWN;
	if (!memcmp(b, udp_msg_new, 4))
		return TXS_IP3_UDP_NEW;
	if (!memcmp(b, udp_msg_le, 4))
		return TXS_IP3_UDP_LEGACY_LE;
	if (!memcmp(b, udp_msg_be, 4))
		return TXS_IP3_UDP_LEGACY_BE;
	return TXS_IP3_UDP_UNKNOWN;
}

TXS_API void txs_ip3_udp_reply(enum txs_ip3_udp_kind k, uint8_t out[4])
{
	memcpy(out, k == TXS_IP3_UDP_LEGACY_LE ? udp_reply_le : k == TXS_IP3_UDP_LEGACY_BE ? udp_reply_be : udp_reply_new,
	       4);
}

TXS_API void txs_ip3_udp_msg(uint8_t out[4])
{
	memcpy(out, udp_msg_new, 4);
}

TXS_API bool txs_ip3_udp_reply_ok(const uint8_t *b, size_t len)
{
	return len == 4 && (!memcmp(b, udp_reply_new, 4) || !memcmp(b, udp_reply_le, 4) || !memcmp(b, udp_reply_be, 4));
}

/* ---- cookie ----------------------------------------------------------------------------------------- */

static const char cookie_chars[] = "abcdefghijklmnopqrstuvwxyz234567";

TXS_API int txs_ip3_cookie_make(char out[TXS_IP3_COOKIE_LEN])
{
	if (sodium_init() < 0)
		return -EIO;
	for (unsigned i = 0; i < TXS_IP3_COOKIE_LEN - 1; i++)
		out[i] = cookie_chars[randombytes_uniform(32)];
	out[TXS_IP3_COOKIE_LEN - 1] = 0;
	return 0;
}

TXS_API bool txs_ip3_cookie_prefix(const uint8_t *b, size_t len)
{
	if (len > TXS_IP3_COOKIE_LEN)
		len = TXS_IP3_COOKIE_LEN;
	for (size_t i = 0; i < len; i++) {
		if (i == TXS_IP3_COOKIE_LEN - 1)
			return b[i] == 0;
		if (!b[i] || !memchr(cookie_chars, b[i], 32))
			return false;
	}
	return true;
}
