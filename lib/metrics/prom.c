/* SPDX-License-Identifier: MIT */
/* The Prometheus text exposition format, version 0.0.4: families grouped
 * (one HELP and TYPE each, then all their samples), label values escaped,
 * histograms cumulative. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/metrics.h>

#define CONST_MAX 8

struct buf {
	char *p;
	size_t len, cap;
};

struct fam {
	char *name, *help;
	enum txs_prom_type type;
	struct buf s; /* sample lines */
};

struct txs_prom {
	struct fam *f;
	unsigned n, cap;
	struct txs_prom_label cl[CONST_MAX];
	char *cl_mem[CONST_MAX][2];
	unsigned n_cl;
	int err;
};

static void set_err(struct txs_prom *p, int e)
{
	if (!p->err)
		p->err = e;
}

static void b_put(struct txs_prom *p, struct buf *b, const char *s, size_t n)
{
	if (p->err)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t c = b->cap ? b->cap : 256;
		while (c < b->len + n + 1)
			c *= 2;
		char *q = realloc(b->p, c);
		if (!q) {
			set_err(p, -ENOMEM);
			return;
		}
		b->p = q;
		b->cap = c;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void b_str(struct txs_prom *p, struct buf *b, const char *s)
{
	b_put(p, b, s, strlen(s));
}

static void __attribute__((format(printf, 3, 4))) b_fmt(struct txs_prom *p, struct buf *b, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		set_err(p, -EINVAL);
		return;
	}
	b_put(p, b, tmp, (size_t)n);
}

static bool name_ok(const char *s, bool metric)
{
	if (!s || !*s)
		return false;
	if (!metric && s[0] == '_' && s[1] == '_')
		return false;
	for (const char *c = s; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || (metric && *c == ':');
		if (!alpha && !(c > s && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

/* Length of the valid UTF-8 sequence at s (0: invalid). No overlongs,
 * surrogates or code points above U+10FFFF. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	size_t n;
	unsigned min;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = c & (0x3f >> (n - 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Label value: \ " and newline escaped; HELP text (help): \ and newline. */
static void b_escaped(struct txs_prom *p, struct buf *b, const char *v, bool help)
{
	const unsigned char *s = (const unsigned char *)(v ? v : "");
	while (*s) {
		if (*s == '\\') {
			b_put(p, b, "\\\\", 2);
			s++;
		} else if (*s == '\n') {
			b_put(p, b, "\\n", 2);
			s++;
		} else if (*s == '"' && !help) {
			b_put(p, b, "\\\"", 2);
			s++;
		} else {
			size_t n = utf8_len(s);
			if (n) {
				b_put(p, b, (const char *)s, n);
				s += n;
			} else {
				b_put(p, b, "\xef\xbf\xbd", 3); /* U+FFFD */
				s++;
			}
		}
	}
}

TXS_API int txs_prom_create(struct txs_prom **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void clear_const(struct txs_prom *p)
{
	for (unsigned i = 0; i < p->n_cl; i++) {
		free(p->cl_mem[i][0]);
		free(p->cl_mem[i][1]);
	}
	p->n_cl = 0;
}

TXS_API void txs_prom_destroy(struct txs_prom *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		free(p->f[i].name);
		free(p->f[i].help);
		free(p->f[i].s.p);
	}
	free(p->f);
	clear_const(p);
	free(p);
}

TXS_API int txs_prom_const_labels(struct txs_prom *p, const struct txs_prom_label *l, unsigned n)
{
	clear_const(p);
	if (n > CONST_MAX)
		return -E2BIG;
	for (unsigned i = 0; i < n; i++)
		if (!name_ok(l[i].name, false))
			return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		p->cl_mem[i][0] = strdup(l[i].name);
		p->cl_mem[i][1] = strdup(l[i].value ? l[i].value : "");
		p->n_cl = i + 1;
		if (!p->cl_mem[i][0] || !p->cl_mem[i][1]) {
			set_err(p, -ENOMEM);
			return -ENOMEM;
		}
		p->cl[i] = (struct txs_prom_label){ p->cl_mem[i][0], p->cl_mem[i][1] };
	}
	return 0;
}

static struct fam *find(const struct txs_prom *p, const char *name)
{
	for (unsigned i = 0; i < p->n; i++)
		if (strcmp(p->f[i].name, name) == 0)
			return &p->f[i];
	return NULL;
}

TXS_API void txs_prom_family(struct txs_prom *p, const char *name, enum txs_prom_type t, const char *help)
{
	if (p->err)
		return;
	if (!name_ok(name, true) || (unsigned)t > TXS_PROM_HISTOGRAM) {
		set_err(p, -EINVAL);
		return;
	}
	struct fam *f = find(p, name);
	if (f) {
		if (f->type != t)
			set_err(p, -EINVAL);
		return;
	}
	if (p->n == p->cap) {
		unsigned c = p->cap ? p->cap * 2 : 32;
		struct fam *q = realloc(p->f, c * sizeof(*q));
		if (!q) {
			set_err(p, -ENOMEM);
			return;
		}
		p->f = q;
		p->cap = c;
	}
	f = &p->f[p->n];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	f->type = t;
	if (!f->name || !f->help) {
		free(f->name);
		free(f->help);
		set_err(p, -ENOMEM);
		return;
	}
	p->n++;
}

/* name{const labels, labels[, extra]} (no value) */
static void series(struct txs_prom *p, struct buf *b, const char *name, const char *suffix,
		   const struct txs_prom_label *l, unsigned n, const char *le)
{
	b_str(p, b, name);
	b_str(p, b, suffix);
	unsigned total = p->n_cl + n + (le ? 1 : 0);
	if (!total)
		return;
	b_put(p, b, "{", 1);
	unsigned k = 0;
	for (unsigned i = 0; i < p->n_cl + n; i++) {
		const struct txs_prom_label *x = i < p->n_cl ? &p->cl[i] : &l[i - p->n_cl];
		if (!name_ok(x->name, false) || (le && strcmp(x->name, "le") == 0)) {
			set_err(p, -EINVAL);
			return;
		}
		if (k++)
			b_put(p, b, ",", 1);
		b_str(p, b, x->name);
		b_put(p, b, "=\"", 2);
		b_escaped(p, b, x->value, false);
		b_put(p, b, "\"", 1);
	}
	if (le) {
		if (k)
			b_put(p, b, ",", 1);
		b_str(p, b, "le=\"");
		b_str(p, b, le);
		b_put(p, b, "\"", 1);
	}
	b_put(p, b, "}", 1);
}

static struct fam *sample_fam(struct txs_prom *p, const char *name, bool hist)
{
	if (p->err)
		return NULL;
	struct fam *f = find(p, name);
	if (!f || (f->type == TXS_PROM_HISTOGRAM) != hist) {
		set_err(p, -EINVAL);
		return NULL;
	}
	return f;
}

/* Go's float syntax as Prometheus reads it */
static void fmt_dbl(char *o, size_t n, double v)
{
	if (isnan(v))
		snprintf(o, n, "NaN");
	else if (isinf(v))
		snprintf(o, n, v > 0 ? "+Inf" : "-Inf");
	else {
		/* the shortest of 15..17 digits that reads back the same */
		for (int d = 15; d <= 17; d++) {
			snprintf(o, n, "%.*g", d, v);
			if (strtod(o, NULL) == v)
				break;
		}
	}
}

TXS_API void txs_prom_u64(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			  uint64_t v)
{
	struct fam *f = sample_fam(p, name, false);
	if (!f)
		return;
	series(p, &f->s, name, "", l, n, NULL);
	b_fmt(p, &f->s, " %llu\n", (unsigned long long)v);
}

TXS_API void txs_prom_dbl(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			  double v)
{
	struct fam *f = sample_fam(p, name, false);
	if (!f)
		return;
	char t[40];
	fmt_dbl(t, sizeof(t), v);
	series(p, &f->s, name, "", l, n, NULL);
	b_fmt(p, &f->s, " %s\n", t);
}

TXS_API void txs_prom_hist(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			   const double *le, const uint64_t *in_bucket, unsigned nb, uint64_t count, double sum)
{
	struct fam *f = sample_fam(p, name, true);
	if (!f)
		return;
	uint64_t cum = 0;
	for (unsigned i = 0; i < nb; i++) {
		if (!isfinite(le[i]) || (i && le[i] <= le[i - 1])) {
			set_err(p, -EINVAL);
			return;
		}
		cum += in_bucket[i];
		char t[40];
		fmt_dbl(t, sizeof(t), le[i]);
		series(p, &f->s, name, "_bucket", l, n, t);
		b_fmt(p, &f->s, " %llu\n", (unsigned long long)cum);
	}
	if (cum > count) { /* buckets hold more than the count: the caller's error */
		set_err(p, -EINVAL);
		return;
	}
	series(p, &f->s, name, "_bucket", l, n, "+Inf");
	b_fmt(p, &f->s, " %llu\n", (unsigned long long)count);
	char t[40];
	fmt_dbl(t, sizeof(t), sum);
	series(p, &f->s, name, "_sum", l, n, NULL);
	b_fmt(p, &f->s, " %s\n", t);
	series(p, &f->s, name, "_count", l, n, NULL);
	b_fmt(p, &f->s, " %llu\n", (unsigned long long)count);
}

/* the largest value log bucket i holds (stats.h, txs_hist_idx) */
static uint64_t bucket_top(unsigned i)
{
	if (i < (1u << TXS_HIST_SUB_BITS))
		return i;
	unsigned e = i >> TXS_HIST_SUB_BITS, s = i & ((1u << TXS_HIST_SUB_BITS) - 1);
	unsigned __int128 lo = (unsigned __int128)((1u << TXS_HIST_SUB_BITS) + s) << (e - 1);
	unsigned __int128 hi = lo + ((unsigned __int128)1 << (e - 1)) - 1;
	return hi > UINT64_MAX ? UINT64_MAX : (uint64_t)hi;
}

#define LOG_LE_MAX 64
TXS_API void txs_prom_hist_log(struct txs_prom *p, const char *name, const struct txs_prom_label *l, unsigned n,
			       const struct txs_hist *h, double scale, const double *le, unsigned nb)
{
	uint64_t in[LOG_LE_MAX] = { 0 };
	if (nb > LOG_LE_MAX || !(scale > 0)) {
		set_err(p, -EINVAL);
		return;
	}
	uint64_t count = 0;
	unsigned j = 0;
	for (unsigned i = 0; i < TXS_HIST_BUCKETS; i++) {
		uint64_t c = h->b[i];
		if (!c)
			continue;
		count += c;
		double top = (double)bucket_top(i) * scale;
		while (j < nb && le[j] < top)
			j++;
		if (j < nb)
			in[j] += c;
	}
	txs_prom_hist(p, name, l, n, le, in, nb, count, txs_hist_sum(h) * scale);
}

TXS_API int txs_prom_error(const struct txs_prom *p)
{
	return p->err;
}

static const char *type_str(enum txs_prom_type t)
{
	return t == TXS_PROM_COUNTER ? "counter" : t == TXS_PROM_GAUGE ? "gauge" : "histogram";
}

TXS_API int txs_prom_text(const struct txs_prom *p, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (p->err)
		return p->err;
	struct txs_prom *w = (struct txs_prom *)p; /* b_put's error slot only */
	struct buf b = { 0 };
	for (unsigned i = 0; i < p->n; i++) {
		const struct fam *f = &p->f[i];
		if (!f->s.len)
			continue; /* a family without samples is left out */
		b_str(w, &b, "# HELP ");
		b_str(w, &b, f->name);
		b_put(w, &b, " ", 1);
		b_escaped(w, &b, f->help, true);
		b_str(w, &b, "\n# TYPE ");
		b_str(w, &b, f->name);
		b_put(w, &b, " ", 1);
		b_str(w, &b, type_str(f->type));
		b_put(w, &b, "\n", 1);
		b_put(w, &b, f->s.p, f->s.len);
	}
	b_put(w, &b, "", 0);
	if (p->err) {
		free(b.p);
		return p->err;
	}
	if (!b.p) {
		b.p = strdup("");
		if (!b.p)
			return -ENOMEM;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
