/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "opt.h"

int opt_parse_uint_list(const char *s, unsigned *out, unsigned max, unsigned *n)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		if (!isdigit((unsigned char)*p))
			return -1;
		unsigned long v = strtoul(p, &end, 10);
		if (v == 0 || v > 100000 || *n >= max)
			return -1;
		out[(*n)++] = (unsigned)v;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	return *n ? 0 : -1;
}

/* The table's lines with OPT_INCLUDE spliced in, malloc'd, OPT_END last. */
static size_t flat_count(const struct txs_opt *opts)
{
	size_t n = 0;
	for (const struct txs_opt *o = opts; o->lng; o++)
		n += o->type == OPT_INCLUDE ? flat_count(o->include) : 1;
	return n;
}

static size_t flat_fill(const struct txs_opt *opts, struct txs_opt *out)
{
	size_t n = 0;
	for (const struct txs_opt *o = opts; o->lng; o++)
		if (o->type == OPT_INCLUDE)
			n += flat_fill(o->include, out + n);
		else
			out[n++] = *o;
	return n;
}

static struct txs_opt *flatten(const struct txs_opt *opts, size_t *count)
{
	size_t n = flat_count(opts);
	struct txs_opt *f = calloc(n + 1, sizeof(*f));
	if (f)
		flat_fill(opts, f);
	*count = n;
	return f;
}

static int apply(const char *cmd, const struct txs_opt *o, void *cfg, const char *val)
{
	char err[512];
	if (txs_opt_apply(o, cfg, val, true, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

void opt_usage(const char *cmd, const char *synopsis, const struct txs_opt *table, FILE *f)
{
	size_t count;
	struct txs_opt *opts = flatten(table, &count);
	if (!opts)
		return;
	fprintf(f, "usage: txscale %s %s\n\noptions:\n", cmd, synopsis);
	for (const struct txs_opt *o = opts; o->lng; o++) {
		char left[64];
		int n = 0;
		if (o->shrt)
			n = snprintf(left, sizeof(left), "-%c, ", o->shrt);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s%s", o->lng,
			 o->metavar ? o->implicit ? "[=" : " " : "", o->metavar ? o->metavar : "",
			 o->metavar && o->implicit ? "]" : "");
		if (strlen(left) > 26)
			fprintf(f, "  %s\n  %-26s %s", left, "", o->help); /* long metavar: help below */
		else
			fprintf(f, "  %-26s %s", left, o->help);
		if (o->def)
			fprintf(f, " (default %s)", o->def);
		fputc('\n', f);
	}
	fprintf(f, "  -h, --help                 show this help\n");
	free(opts);
}

int opt_defaults(const char *cmd, const struct txs_opt *opts, void *cfg)
{
	char err[512];
	if (txs_opt_defaults(opts, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "txscale %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

int opt_parse(const char *cmd, const char *synopsis, const struct txs_opt *table, void *cfg, int argc, char **argv,
	      const char **positional, int max_pos, int *n_pos)
{
	size_t n;
	struct txs_opt *opts = flatten(table, &n);
	struct option *lo = calloc(n + 2, sizeof(*lo));
	char *so = calloc(n * 2 + 4, 1);
	if (!lo || !so || !opts) {
		free(lo);
		free(so);
		free(opts);
		return 2;
	}
	size_t sp = 0;
	so[sp++] = ':'; /* report missing values as ':' */
	for (size_t i = 0; i < n; i++) {
		const struct txs_opt *o = &opts[i];
		bool arg = txs_opt_takes_value(o);
		lo[i].name = o->lng;
		lo[i].has_arg = o->implicit ? optional_argument : arg ? required_argument : no_argument;
		lo[i].val = 256 + (int)i;
		if (o->shrt) {
			so[sp++] = (char)o->shrt;
			if (arg)
				so[sp++] = ':';
		}
	}
	lo[n].name = "help";
	lo[n].val = 'h';
	so[sp++] = 'h';
	if (opt_defaults(cmd, table, cfg) < 0) {
		free(lo);
		free(so);
		free(opts);
		return 2;
	}
	int rc = 0, c;
	optind = 1;
	opterr = 0;
	*n_pos = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct txs_opt *o = NULL;
		if (c == 'h') {
			opt_usage(cmd, synopsis, table, stdout);
			rc = 1;
			goto out;
		}
		if (c == '?') {
			if (optopt >= 256 && optopt < 256 + (int)n)
				/* a long option given a value it does not take (--verify=1) */
				fprintf(stderr, "txscale %s: option '--%s' takes no value: '%s' (see txscale %s --help)\n",
					cmd, opts[optopt - 256].lng, argv[optind - 1], cmd);
			else if (optopt == 'h')
				fprintf(stderr, "txscale %s: option '--help' takes no value (see txscale %s --help)\n", cmd,
					cmd);
			else if (optopt > 0 && optopt < 256)
				fprintf(stderr, "txscale %s: unknown option '-%c' (see txscale %s --help)\n", cmd, optopt, cmd);
			else
				fprintf(stderr, "txscale %s: unknown option '%s' (see txscale %s --help)\n", cmd,
					argv[optind - 1], cmd);
			rc = 2;
			goto out;
		}
		if (c == ':') {
			fprintf(stderr, "txscale %s: option '%s' needs a value\n", cmd, argv[optind - 1]);
			rc = 2;
			goto out;
		}
		if (c >= 256)
			o = &opts[c - 256];
		else
			for (size_t i = 0; i < n; i++)
				if (opts[i].shrt == c)
					o = &opts[i];
		if (!o || apply(cmd, o, cfg, optarg || !o->implicit ? optarg : o->implicit) < 0) {
			rc = 2;
			goto out;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (*n_pos >= max_pos) {
			fprintf(stderr, "txscale %s: unexpected argument '%s'\n", cmd, argv[i]);
			rc = 2;
			goto out;
		}
		positional[(*n_pos)++] = argv[i];
	}
out:
	free(lo);
	free(so);
	free(opts);
	return rc;
}
