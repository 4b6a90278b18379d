/* SPDX-License-Identifier: MIT */
/* The CLI over the option tables (lib/session/opt.h, the xdp-tools
 * params.h way): getopt parsing, --help and defaults from one table per
 * subcommand. The sessions' tables live in the library, so that the JSON
 * config and the Python keywords read the same lines; a subcommand's own
 * table adds the CLI's lines (output, files, the control channel) and
 * splices the session's in with OPT_INCLUDE_TABLE. Values are parsed by the
 * library (txs_opt_apply); this file only prints. */
#ifndef TXS_CLI_OPT_H
#define TXS_CLI_OPT_H
#include <stdio.h>
#include "session/opt.h"

/* Parse argv against opts into cfg. Non-option arguments are stored into
 * positional[] (at most max_pos). On error prints one line naming the bad
 * value and returns 2; --help prints usage and returns 1; success 0. */
int opt_parse(const char *cmd, const char *synopsis, const struct txs_opt *opts, void *cfg, int argc, char **argv,
	      const char **positional, int max_pos, int *n_pos);
void opt_usage(const char *cmd, const char *synopsis, const struct txs_opt *opts, FILE *f);
/* The table's defaults into cfg (what opt_parse does first). 0, or -1 said. */
int opt_defaults(const char *cmd, const struct txs_opt *opts, void *cfg);

/* A comma-separated list of unsigned, e.g. "1,2,4". */
int opt_parse_uint_list(const char *s, unsigned *out, unsigned max, unsigned *n);
#endif
