/* SPDX-License-Identifier: MIT */
/* The JSON reader (stats.h): one strict pass over the whole object that
 * validates it and notes where the value at a path lies. Recursive, with the
 * depth bounded by TXS_JSON_MAX_DEPTH; every read is checked against end. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/stats.h>

struct jr {
	const char *p, *end;
};

/* what the pass is looking for, and what it found */
struct hit {
	bool found;
	const char *val;
	size_t len;
};

static void jr_ws(struct jr *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool jr_lit(struct jr *j, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, s, n) != 0)
		return false;
	j->p += n;
	return true;
}

static bool is_hex(char h)
{
	return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
}

/* A string. *raw and *rawlen (if raw): its text between the quotes, escapes kept. */
static bool jr_str(struct jr *j, const char **raw, size_t *rawlen)
{
	if (j->p >= j->end || *j->p != '"')
		return false;
	const char *start = ++j->p;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;
		if (c == '"') {
			if (raw) {
				*raw = start;
				*rawlen = (size_t)(j->p - 1 - start);
			}
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->p >= j->end)
			return false;
		char e = *j->p++;
		if (e == 'u') {
			if (j->end - j->p < 4)
				return false;
			for (int i = 0; i < 4; i++)
				if (!is_hex(j->p[i]))
					return false;
			j->p += 4;
		} else if (!e || !strchr("\"\\/bfnrt", e)) {
			return false;
		}
	}
	return false;
}

static bool jr_digits(struct jr *j)
{
	const char *d = j->p;
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > d;
}

static bool jr_num(struct jr *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p >= j->end)
		return false;
	if (*j->p == '0')
		j->p++;
	else if (*j->p < '1' || *j->p > '9' || !jr_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!jr_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!jr_digits(j))
			return false;
	}
	return true;
}

/* The first segment of path: its length, and the rest after the '.' (NULL: last). */
static size_t seg_split(const char *path, const char **rest)
{
	const char *dot = strchr(path, '.');
	*rest = dot ? dot + 1 : NULL;
	return dot ? (size_t)(dot - path) : strlen(path);
}

/* A segment as an array index: plain decimal, no leading zero; else SIZE_MAX. */
static size_t seg_index(const char *s, size_t len)
{
	if (len == 0 || len > 18 || (s[0] == '0' && len > 1))
		return SIZE_MAX;
	size_t x = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return SIZE_MAX;
		x = x * 10 + (size_t)(s[i] - '0');
	}
	return x;
}

/* One value (j->p at it, after whitespace). path: what is left of the path to
 * look for inside it (NULL: nothing); the value found goes to h. */
static bool jr_value(struct jr *j, int depth, const char *path, struct hit *h);

/* A hit at a member/element whose segment matched: the last one counts. */
static bool jr_descend(struct jr *j, int depth, bool match, const char *rest, struct hit *h)
{
	const char *vs = j->p;
	if (match)
		h->found = false; /* a later member of the same name replaces an earlier one */
	if (!jr_value(j, depth, match ? rest : NULL, h))
		return false;
	if (match && !rest) {
		h->found = true;
		h->val = vs;
		h->len = (size_t)(j->p - vs);
	}
	return true;
}

static bool jr_object(struct jr *j, int depth, const char *path, struct hit *h)
{
	j->p++; /* '{' */
	jr_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return true;
	}
	const char *rest = NULL;
	size_t seg = path ? seg_split(path, &rest) : 0;
	for (;;) {
		const char *k;
		size_t kl;
		jr_ws(j);
		if (!jr_str(j, &k, &kl))
			return false;
		jr_ws(j);
		if (j->p >= j->end || *j->p != ':')
			return false;
		j->p++;
		jr_ws(j);
		bool match = path && kl == seg && memcmp(k, path, seg) == 0;
		if (!jr_descend(j, depth + 1, match, rest, h))
			return false;
		jr_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == '}') {
			j->p++;
			return true;
		}
		return false;
	}
}

static bool jr_array(struct jr *j, int depth, const char *path, struct hit *h)
{
	j->p++; /* '[' */
	jr_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		return true;
	}
	const char *rest = NULL;
	size_t want = path ? seg_index(path, seg_split(path, &rest)) : SIZE_MAX;
	for (size_t i = 0;; i++) {
		jr_ws(j);
		if (!jr_descend(j, depth + 1, i == want, rest, h))
			return false;
		jr_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == ']') {
			j->p++;
			return true;
		}
		return false;
	}
}

static bool jr_value(struct jr *j, int depth, const char *path, struct hit *h)
{
	if (depth > TXS_JSON_MAX_DEPTH || j->p >= j->end)
		return false;
	switch (*j->p) {
	case '{':
		return jr_object(j, depth, path, h);
	case '[':
		return jr_array(j, depth, path, h);
	case '"':
		return jr_str(j, NULL, NULL);
	case 't':
		return jr_lit(j, "true");
	case 'f':
		return jr_lit(j, "false");
	case 'n':
		return jr_lit(j, "null");
	default:
		return jr_num(j);
	}
}

TXS_API int txs_json_find(const char *json, size_t n, const char *path, const char **val, size_t *len)
{
	struct jr j = { json, json + n };
	struct hit h = { false, NULL, 0 };
	jr_ws(&j);
	if (j.p >= j.end || *j.p != '{')
		return -EINVAL;
	if (!jr_value(&j, 0, path, &h))
		return -EINVAL;
	jr_ws(&j);
	if (j.p != j.end)
		return -EINVAL; /* one object, nothing after it */
	if (!h.found)
		return -ENOENT;
	*val = h.val;
	*len = h.len;
	return 0;
}

TXS_API int txs_json_get_dbl(const char *json, size_t n, const char *path, double *out)
{
	const char *v;
	size_t l;
	int rc = txs_json_find(json, n, path, &v, &l);
	if (rc < 0)
		return rc;
	if (l == 0 || l > 63 || !(*v == '-' || (*v >= '0' && *v <= '9')))
		return -EINVAL;
	char buf[64];
	memcpy(buf, v, l);
	buf[l] = 0;
	*out = strtod(buf, NULL);
	return 0;
}

TXS_API int txs_json_get_u64(const char *json, size_t n, const char *path, uint64_t *out)
{
	const char *v;
	size_t l;
	int rc = txs_json_find(json, n, path, &v, &l);
	if (rc < 0)
		return rc;
	if (l == 0 || l > 20)
		return -EINVAL;
	uint64_t x = 0;
	for (size_t i = 0; i < l; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL; /* negative, fractional or not a number */
		unsigned d = (unsigned)(v[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -EINVAL;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}

TXS_API int txs_json_get_bool(const char *json, size_t n, const char *path, bool *out)
{
	const char *v;
	size_t l;
	int rc = txs_json_find(json, n, path, &v, &l);
	if (rc < 0)
		return rc;
	if (l == 4 && memcmp(v, "true", 4) == 0)
		*out = true;
	else if (l == 5 && memcmp(v, "false", 5) == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* Walk the children of a container found (and so validated) by
 * txs_json_find: their number, and the idx-th one's text. */
static int children(const char *json, size_t n, const char *path, size_t idx, size_t *count, const char **val,
		    size_t *len)
{
	const char *v;
	size_t l;
	int rc = txs_json_find(json, n, path, &v, &l);
	if (rc < 0)
		return rc;
	if (*v != '{' && *v != '[')
		return -EINVAL;
	bool obj = *v == '{';
	struct jr j = { v + 1, v + l - 1 }; /* inside the brackets */
	struct hit none = { false, NULL, 0 };
	size_t k = 0;
	for (;;) {
		jr_ws(&j);
		if (j.p >= j.end)
			break;
		if (obj) {
			if (!jr_str(&j, NULL, NULL))
				return -EINVAL; /* not reached: validated */
			jr_ws(&j);
			j.p++; /* ':' */
			jr_ws(&j);
		}
		const char *vs = j.p;
		if (!jr_value(&j, 0, NULL, &none))
			return -EINVAL; /* not reached */
		if (k == idx) {
			*val = vs;
			*len = (size_t)(j.p - vs);
		}
		k++;
		jr_ws(&j);
		if (j.p < j.end && *j.p == ',')
			j.p++;
	}
	*count = k;
	return 0;
}

TXS_API int txs_json_count(const char *json, size_t n, const char *path, size_t *count)
{
	const char *v;
	size_t l;
	return children(json, n, path, SIZE_MAX, count, &v, &l);
}

TXS_API int txs_json_item(const char *json, size_t n, const char *path, size_t idx, const char **val,
			  size_t *len)
{
	size_t count;
	const char *v = NULL;
	size_t l = 0;
	int rc = children(json, n, path, idx, &count, &v, &l);
	if (rc < 0)
		return rc;
	if (idx >= count)
		return -ENOENT;
	*val = v;
	*len = l;
	return 0;
}
