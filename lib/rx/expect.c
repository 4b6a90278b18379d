/* SPDX-License-Identifier: MIT */
/* The sender's JSON summary line -> expected counts. A small strict JSON
 * reader (RFC 8259 syntax, depth-limited, bounds-checked) that keeps only the
 * fields it needs. */
#include <errno.h>
#include <string.h>
#include "rx_priv.h"

#define JP_MAX_DEPTH 32

struct jp {
	const char *p, *end;
	/* captured */
	char type[16], kind[16];
	bool have_packets, have_drops;
	uint64_t packets, drops;
	unsigned n_threads;
	bool bad_thread;
	struct {
		bool have_id, have_packets;
		uint64_t id, packets;
	} th[TXS_MAX_CORES];
};

enum ctx { C_SKIP, C_TOP, C_THREADS, C_THREAD };

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool lit(struct jp *j, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool hex4(struct jp *j)
{
	if (j->end - j->p < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		char c = j->p[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	j->p += 4;
	return true;
}

/* A string; its unescaped ASCII prefix goes to out (if any). */
static bool str(struct jp *j, char *out, size_t outlen)
{
	size_t o = 0;
	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;
		if (c == '"') {
			if (out && outlen)
				out[o < outlen ? o : outlen - 1] = 0;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (j->p >= j->end)
				return false;
			char e = *j->p++;
			switch (e) {
			case '"': case '\\': case '/': c = (unsigned char)e; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (!hex4(j))
					return false;
				c = '?';
				break;
			default:
				return false;
			}
		}
		if (out && o + 1 < outlen)
			out[o++] = (char)c;
	}
	return false;
}

/* A number; if u is given it must be a plain non-negative integer. */
static bool num(struct jp *j, uint64_t *u, bool *is_uint)
{
	const char *s = j->p;
	bool uint_ok = true;
	uint64_t v = 0;
	if (j->p < j->end && *j->p == '-') {
		uint_ok = false;
		j->p++;
	}
	if (j->p >= j->end)
		return false;
	if (*j->p == '0') {
		j->p++;
	} else if (*j->p >= '1' && *j->p <= '9') {
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
			unsigned d = (unsigned)(*j->p - '0');
			if (v > (UINT64_MAX - d) / 10)
				uint_ok = false;
			else
				v = v * 10 + d;
			j->p++;
		}
	} else {
		return false;
	}
	if (j->p < j->end && *j->p == '.') {
		uint_ok = false;
		j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return false;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		uint_ok = false;
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (j->p >= j->end || *j->p < '0' || *j->p > '9')
			return false;
		while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
			j->p++;
	}
	if (j->p == s)
		return false;
	*u = v;
	*is_uint = uint_ok;
	return true;
}

static bool value(struct jp *j, int depth, enum ctx ctx, const char *key, unsigned th);

static bool capture_uint(struct jp *j, uint64_t *dst, bool *have)
{
	uint64_t v;
	bool ok;
	if (!num(j, &v, &ok) || !ok)
		return false;
	*dst = v;
	*have = true;
	return true;
}

static bool object(struct jp *j, int depth, enum ctx ctx, unsigned th)
{
	j->p++; /* '{' */
	ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	for (;;) {
		char key[32];
		ws(j);
		if (!str(j, key, sizeof(key)))
			return false;
		ws(j);
		if (j->p >= j->end || *j->p != ':')
			return false;
		j->p++;
		ws(j);
		if (!value(j, depth + 1, ctx, key, th))
			return false;
		ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == '}') {
			j->p++;
			return true;
		}
		return false;
	}
}

static bool array(struct jp *j, int depth, enum ctx ctx)
{
	j->p++; /* '[' */
	ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	for (;;) {
		ws(j);
		unsigned th = 0;
		enum ctx ec = C_SKIP;
		if (ctx == C_THREADS) {
			if (j->n_threads >= TXS_MAX_CORES) {
				j->bad_thread = true;
			} else {
				th = j->n_threads++;
				ec = C_THREAD;
			}
		}
		if (!value(j, depth + 1, ec, NULL, th))
			return false;
		ws(j);
		if (j->p >= j->end)
			return false;
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == ']') {
			j->p++;
			return true;
		}
		return false;
	}
}

/* A value inside an object of context ctx under key (NULL: array element of ctx). */
static bool value(struct jp *j, int depth, enum ctx ctx, const char *key, unsigned th)
{
	if (depth > JP_MAX_DEPTH || j->p >= j->end)
		return false;
	char c = *j->p;
	if (key && ctx == C_TOP) {
		if (strcmp(key, "type") == 0 && c == '"')
			return str(j, j->type, sizeof(j->type));
		if (strcmp(key, "kind") == 0 && c == '"')
			return str(j, j->kind, sizeof(j->kind));
		if (strcmp(key, "packets") == 0)
			return capture_uint(j, &j->packets, &j->have_packets);
		if (strcmp(key, "drops") == 0)
			return capture_uint(j, &j->drops, &j->have_drops);
		if (strcmp(key, "threads") == 0 && c == '[')
			return array(j, depth, C_THREADS);
	}
	if (key && ctx == C_THREAD) {
		if (strcmp(key, "id") == 0)
			return capture_uint(j, &j->th[th].id, &j->th[th].have_id);
		if (strcmp(key, "packets") == 0)
			return capture_uint(j, &j->th[th].packets, &j->th[th].have_packets);
	}
	enum ctx inner = C_SKIP;
	if (!key && ctx == C_THREAD)
		inner = C_THREAD; /* a thread object itself */
	switch (c) {
	case '{':
		return object(j, depth, inner, th);
	case '[':
		return array(j, depth, C_SKIP);
	case '"':
		return str(j, NULL, 0);
	case 't':
		return lit(j, "true");
	case 'f':
		return lit(j, "false");
	case 'n':
		return lit(j, "null");
	default: {
		uint64_t v;
		bool ok;
		return num(j, &v, &ok);
	}
	}
}

static int parse_line(struct txs_rx_expect *e, const char *s, const char *end)
{
	static struct jp zero;
	struct jp j = zero;
	j.p = s;
	j.end = end;
	ws(&j);
	if (j.p >= j.end || *j.p != '{')
		return -EINVAL;
	if (!object(&j, 1, C_TOP, 0))
		return -EINVAL;
	ws(&j);
	if (j.p != j.end)
		return -EINVAL;
	if (strcmp(j.type, "summary") != 0)
		return -ENOENT;
	if ((j.kind[0] && strcmp(j.kind, "send") != 0) || !j.have_packets || j.bad_thread)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->have_total = true;
	e->total = j.packets;
	e->sender_drops = j.have_drops ? j.drops : 0;
	uint64_t sum = 0;
	bool seen[TXS_MAX_CORES] = { false };
	for (unsigned i = 0; i < j.n_threads; i++) {
		if (!j.th[i].have_id || !j.th[i].have_packets || j.th[i].id >= TXS_MAX_CORES)
			return -EINVAL;
		unsigned id = (unsigned)j.th[i].id;
		if (seen[id])
			return -EINVAL; /* the same thread twice */
		seen[id] = true;
		e->per_flow[id] = j.th[i].packets;
		if (id + 1 > e->n_flows)
			e->n_flows = id + 1;
		if (sum + j.th[i].packets < sum)
			return -EINVAL;
		sum += j.th[i].packets;
	}
	if (j.n_threads && sum != e->total)
		return -EINVAL;
	return 0;
}

TXS_API int txs_rx_expect_parse(struct txs_rx_expect *e, const char *text, size_t len)
{
	memset(e, 0, sizeof(*e));
	/* last line first */
	const char *end = text + len;
	int rc = -EINVAL;
	while (end > text) {
		const char *le = end;
		while (le > text && (le[-1] == '\n' || le[-1] == '\r'))
			le--;
		const char *ls = le;
		while (ls > text && ls[-1] != '\n')
			ls--;
		if (le > ls) {
			rc = parse_line(e, ls, le);
			if (rc != -ENOENT)
				return rc;
		}
		end = ls;
	}
	memset(e, 0, sizeof(*e));
	return -EINVAL;
}
