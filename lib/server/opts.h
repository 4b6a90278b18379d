/* SPDX-License-Identifier: MIT */
/* The server's option table (lib/server/opts.c), for `txscale server` and
 * the JSON "server" session (lib/api): its lines are opt.h's (lib/session).
 * Private to the library and its programs. */
#ifndef TXS_SERVER_OPTS_H
#define TXS_SERVER_OPTS_H
#include <txscale/server.h>
#include "session/opt.h"

/* server: what its options fill (lib/server/opts.c). */
struct txs_server_args {
	struct txs_server_conf c;
	struct opt_rate max_rate;
	const char *stamp;       /* --stamp[=PORT] */
	const char *iperf2_port; /* --iperf2-port */
	bool no_iperf2;
};
/* a with txs_server_conf_init's defaults, before the table's. */
void txs_server_args_init(struct txs_server_args *a);
extern const struct txs_opt txs_server_opts[];
const struct txs_opt *txs_server_opt_table(void);
/* The options a's config does not hold as they are, into a->c (--stamp's
 * and --iperf2-port's ports, --max-rate): 0, or -EINVAL with one line in
 * err ("bad value for --stamp: ..."). */
int txs_server_args_conf(struct txs_server_args *a, char *err, size_t errlen);
#endif
