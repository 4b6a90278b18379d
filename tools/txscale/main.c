/* SPDX-License-Identifier: MIT */
/* txscale: command dispatch. Each subcommand lives in its own file. */
#include <stdio.h>
#include <string.h>
#include <txscale/common.h>
#include "cli.h"

static const struct txs_cmd cmds[] = {
	TXS_CLI_COMMANDS
};

static void usage(FILE *f)
{
	fprintf(f, "usage: txscale COMMAND [options]   (txscale COMMAND --help for its options)\n\ncommands:\n");
	for (size_t i = 0; i < TXS_ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n  --version  print the version\n  --help     this text\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0) {
		printf("txscale %s\n", txs_version());
		return 0;
	}
	for (size_t i = 0; i < TXS_ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].run(argc - 1, argv + 1);
	fprintf(stderr, "txscale: unknown command '%s' (try txscale --help)\n", argv[1]);
	return 2;
}
