/* SPDX-License-Identifier: MIT */
/* A minimal streaming JSON writer: one object per line (txscale/json.h). */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <txscale/json.h>

/* Write v as the inside of a JSON string. Valid UTF-8 passes as it is,
 * except the control characters: C0 and DEL as \u00XX (", \ escaped),
 * C1 (U+0080..U+009F, e.g. U+009B, a terminal's CSI) as \u0080..\u009f.
 * A byte that does not start a valid UTF-8 sequence is written as the code
 * point of its value (\u00XX), so the output is always valid JSON and
 * nothing the peer sent reaches a terminal raw. */
static void put_escaped(FILE *f, const char *v)
{
	const unsigned char *p = (const unsigned char *)v;
	while (*p) {
		unsigned c = *p, len = 1;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
			p++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
			p++;
			continue;
		}
		if (c < 0x80) {
			fputc((int)c, f);
			p++;
			continue;
		}
		uint32_t cp = 0, min = 0;
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, cp = c & 0x1f, min = 0x80;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, cp = c & 0x0f, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, cp = c & 0x07, min = 0x10000;
		bool ok = len > 1;
		for (unsigned i = 1; ok && i < len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				ok = false;
			else
				cp = cp << 6 | (p[i] & 0x3f);
		}
		ok = ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
		if (!ok) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (cp <= 0x9f) {
			fprintf(f, "\\u%04x", (unsigned)cp);
			p += len;
		} else {
			fwrite(p, 1, len, f);
			p += len;
		}
	}
}

static void sep(struct txs_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		fputc('"', j->f);
		put_escaped(j->f, key);
		fputs("\":", j->f);
	}
}

static void push(struct txs_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->need_comma[j->depth] = false;
}

TXS_API void txs_json_begin(struct txs_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	push(j, '{');
}

TXS_API void txs_json_end(struct txs_json *j)
{
	while (j->depth > 0) {
		j->depth--;
		fputc('}', j->f);
	}
	fputc('\n', j->f);
	fflush(j->f);
}

TXS_API void txs_json_key(struct txs_json *j, const char *key)
{
	sep(j, key);
}

/* The end of the innermost object or array (its closing c). */
static void pop(struct txs_json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

TXS_API void txs_json_obj_open(struct txs_json *j, const char *key)
{
	sep(j, key);
	push(j, '{');
}

TXS_API void txs_json_arr_open(struct txs_json *j, const char *key)
{
	sep(j, key);
	push(j, '[');
}

TXS_API void txs_json_obj_close(struct txs_json *j)
{
	pop(j, '}');
}

TXS_API void txs_json_arr_close(struct txs_json *j)
{
	pop(j, ']');
}

TXS_API void txs_json_u64(struct txs_json *j, const char *key, uint64_t v)
{
	sep(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

TXS_API void txs_json_i64(struct txs_json *j, const char *key, int64_t v)
{
	sep(j, key);
	fprintf(j->f, "%" PRId64, v);
}

TXS_API void txs_json_dbl(struct txs_json *j, const char *key, double v)
{
	sep(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.6g", v);
}

TXS_API void txs_json_str(struct txs_json *j, const char *key, const char *v)
{
	sep(j, key);
	fputc('"', j->f);
	put_escaped(j->f, v);
	fputc('"', j->f);
}

TXS_API void txs_json_bool(struct txs_json *j, const char *key, bool v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}
