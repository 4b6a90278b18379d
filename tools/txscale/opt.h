/* SPDX-License-Identifier: MIT */
/* One option table per subcommand yields parsing, --help and defaults
 * (the xdp-tools params.h way). Values are written at `off` into the
 * subcommand's config struct. */
#ifndef TXS_OPT_H
#define TXS_OPT_H
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <txscale/common.h>

enum opt_type {
	OPT_FLAG,     /* bool, set true */
	OPT_FLAG_OFF, /* bool, set false */
	OPT_STR,      /* const char * */
	OPT_U64,      /* uint64_t with k/M/G suffixes (powers of 1000) */
	OPT_UINT,     /* unsigned, plain, range lo..hi */
	OPT_PORT,     /* uint16_t 1..65535 */
	OPT_SECONDS,  /* double seconds >= 0 ("10", "0.5", "2s", "100ms") */
	OPT_RATE,     /* struct opt_rate */
	OPT_CPULIST,  /* struct opt_cpus, "0-3,6" checked against online CPUs */
	OPT_CUSTOM,   /* parse() callback */
};

struct opt_rate {
	double value; /* 0 = unlimited */
	bool bits;    /* value is bits/s (needs the frame size) */
};

struct opt_cpus {
	unsigned n;
	int cpu[TXS_MAX_CORES];
};

struct opt {
	const char *lng;     /* long name without "--" */
	int shrt;            /* short letter or 0 */
	enum opt_type type;
	size_t off;          /* offset in the config struct */
	const char *metavar; /* shown in --help */
	const char *help;
	const char *def;     /* default, parsed like user input (NULL = zero) */
	uint64_t lo, hi;     /* range for OPT_UINT / OPT_U64 (hi 0 = none) */
	int (*parse)(const char *val, void *dst, char *err, size_t errlen);
	const char *implicit; /* non-NULL (long options only): the value is optional (--name[=VALUE]);
			       * given without one, the option takes this */
};

#define OPT_END { NULL, 0, 0, 0, NULL, NULL, NULL, 0, 0, NULL }

/* Parse argv against opts into cfg. Non-option arguments are stored into
 * positional[] (at most max_pos). On error prints one line naming the bad
 * value and returns 2; --help prints usage and returns 1; success 0. */
int opt_parse(const char *cmd, const char *synopsis, const struct opt *opts, void *cfg, int argc, char **argv,
	      const char **positional, int max_pos, int *n_pos);
void opt_usage(const char *cmd, const char *synopsis, const struct opt *opts, FILE *f);
/* The table's defaults into cfg (what opt_parse does first). 0, or -1 said. */
int opt_defaults(const char *cmd, const struct opt *opts, void *cfg);

/* A CPU list into c (txs_parse_cpus). 0, or -EINVAL with err. */
static inline int opt_cpus_parse(const char *s, struct opt_cpus *c, char *err, size_t errlen)
{
	return txs_parse_cpus(s, c->cpu, TXS_MAX_CORES, &c->n, err, errlen);
}
/* A comma-separated list of unsigned, e.g. "1,2,4". */
int opt_parse_uint_list(const char *s, unsigned *out, unsigned max, unsigned *n);
#endif
