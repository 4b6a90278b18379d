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

static int apply(const char *cmd, const struct opt *o, void *cfg, const char *val)
{
	char *dst = (char *)cfg + o->off;
	char err[200] = "";
	char name[64];
	if (o->shrt)
		snprintf(name, sizeof(name), "-%c/--%s", o->shrt, o->lng);
	else
		snprintf(name, sizeof(name), "--%s", o->lng);

	switch (o->type) {
	case OPT_FLAG:
		*(bool *)dst = true;
		return 0;
	case OPT_FLAG_OFF:
		*(bool *)dst = false;
		return 0;
	case OPT_STR:
		*(const char **)dst = val;
		return 0;
	case OPT_U64: {
		uint64_t v;
		if (txs_parse_count(val, &v) < 0 || v < o->lo || (o->hi && v > o->hi)) {
			if (o->hi)
				snprintf(err, sizeof(err), "expected %llu..%llu (k/M/G suffixes allowed)",
					 (unsigned long long)o->lo, (unsigned long long)o->hi);
			else
				snprintf(err, sizeof(err), "expected a count >= %llu (k/M/G suffixes allowed)",
					 (unsigned long long)o->lo);
			break;
		}
		*(uint64_t *)dst = v;
		return 0;
	}
	case OPT_UINT: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 0);
		if (!*val || *val == '-' || *end || errno || v < o->lo || v > o->hi) {
			snprintf(err, sizeof(err), "expected %llu..%llu", (unsigned long long)o->lo,
				 (unsigned long long)o->hi);
			break;
		}
		*(unsigned *)dst = (unsigned)v;
		return 0;
	}
	case OPT_PORT: {
		char *end;
		errno = 0;
		unsigned long v = strtoul(val, &end, 10);
		if (!*val || *val == '-' || *end || errno || v < 1 || v > 65535) {
			snprintf(err, sizeof(err), "expected a port 1..65535");
			break;
		}
		*(uint16_t *)dst = (uint16_t)v;
		return 0;
	}
	case OPT_SECONDS:
		if (txs_parse_seconds(val, (double *)dst) < 0) {
			snprintf(err, sizeof(err), "expected seconds, e.g. 10, 0.5, 250ms");
			break;
		}
		return 0;
	case OPT_RATE:
		if (txs_parse_rate(val, &((struct opt_rate *)dst)->value, &((struct opt_rate *)dst)->bits) < 0) {
			snprintf(err, sizeof(err), "expected bits/s of UDP payload (10M, 250k) or datagrams/s (100kpps)");
			break;
		}
		return 0;
	case OPT_CPULIST:
		if (opt_cpus_parse(val, (struct opt_cpus *)dst, err, sizeof(err)) < 0) {
			fprintf(stderr, "txscale %s: %s: %s\n", cmd, name, err);
			return -1;
		}
		return 0;
	case OPT_CUSTOM:
		if (o->parse(val, dst, err, sizeof(err)) < 0)
			break;
		return 0;
	}
	fprintf(stderr, "txscale %s: bad value for %s: '%s'%s%s\n", cmd, name, val, err[0] ? ": " : "", err);
	return -1;
}

void opt_usage(const char *cmd, const char *synopsis, const struct opt *opts, FILE *f)
{
	fprintf(f, "usage: txscale %s %s\n\noptions:\n", cmd, synopsis);
	for (const struct opt *o = opts; o->lng; o++) {
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
}

int opt_defaults(const char *cmd, const struct opt *opts, void *cfg)
{
	for (const struct opt *o = opts; o->lng; o++)
		if (o->def && apply(cmd, o, cfg, o->def) < 0)
			return -1;
	return 0;
}

int opt_parse(const char *cmd, const char *synopsis, const struct opt *opts, void *cfg, int argc, char **argv,
	      const char **positional, int max_pos, int *n_pos)
{
	size_t n = 0;
	for (const struct opt *o = opts; o->lng; o++)
		n++;
	struct option *lo = calloc(n + 2, sizeof(*lo));
	char *so = calloc(n * 2 + 4, 1);
	if (!lo || !so) {
		free(lo);
		free(so);
		return 2;
	}
	size_t sp = 0;
	so[sp++] = ':'; /* report missing values as ':' */
	for (size_t i = 0; i < n; i++) {
		const struct opt *o = &opts[i];
		bool arg = o->type != OPT_FLAG && o->type != OPT_FLAG_OFF;
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
	if (opt_defaults(cmd, opts, cfg) < 0) {
		free(lo);
		free(so);
		return 2;
	}
	int rc = 0, c;
	optind = 1;
	opterr = 0;
	*n_pos = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct opt *o = NULL;
		if (c == 'h') {
			opt_usage(cmd, synopsis, opts, stdout);
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
	return rc;
}
