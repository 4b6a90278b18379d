/* SPDX-License-Identifier: MIT */
/* txscale bench: dispatch to the micro-benchmarks in bench/. */
#include <stdio.h>
#include <string.h>
#include <txscale/common.h>
#include "cli.h"
#include "benches.h"

static const struct txs_cmd benches[] = {
	TXS_BENCHES
};

int cmd_bench(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		FILE *f = argc < 2 ? stderr : stdout;
		fprintf(f, "usage: txscale bench NAME [options]   (txscale bench NAME --help)\n\nbenchmarks:\n");
		for (size_t i = 0; i < TXS_ARRAY_SIZE(benches); i++)
			fprintf(f, "  %-10s %s\n", benches[i].name, benches[i].summary);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < TXS_ARRAY_SIZE(benches); i++)
		if (strcmp(argv[1], benches[i].name) == 0)
			return benches[i].run(argc - 1, argv + 1);
	fprintf(stderr, "txscale bench: unknown benchmark '%s' (try txscale bench --help)\n", argv[1]);
	return 2;
}
