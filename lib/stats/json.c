/* SPDX-License-Identifier: MIT */
/* A minimal streaming JSON writer: one object per line. */
#include <inttypes.h>
#include <math.h>
#include <txscale/stats.h>

static void sep(struct txs_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		fputc('"', j->f);
		for (const char *p = key; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', j->f);
			fputc(*p, j->f);
		}
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

TXS_API void txs_json_obj_open(struct txs_json *j, const char *key)
{
	sep(j, key);
	push(j, '{');
}

TXS_API void txs_json_obj_close(struct txs_json *j)
{
	if (j->depth > 0)
		j->depth--;
	fputc('}', j->f);
}

TXS_API void txs_json_arr_open(struct txs_json *j, const char *key)
{
	sep(j, key);
	push(j, '[');
}

TXS_API void txs_json_arr_close(struct txs_json *j)
{
	if (j->depth > 0)
		j->depth--;
	fputc(']', j->f);
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
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(j->f, "\\u%04x", *p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}

TXS_API void txs_json_bool(struct txs_json *j, const char *key, bool v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}
