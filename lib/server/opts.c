/* SPDX-License-Identifier: MIT */
/* The server's options (opt.h): one table for `txscale server`, a JSON
 * "server" session's config and the Python keywords, and what they fill
 * into the server's config. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/err.h"
#include "opts.h"

#define O(f) offsetof(struct txs_server_args, f)
#define C(f) offsetof(struct txs_server_args, c.f)
const struct txs_opt txs_server_opts[] = {
	{ "bind", 'B', OPT_STR, C(bind), "ADDR", "listen on ADDR only (default: every address); tests receive and send on the address the client reached" },
	{ "control-port", 0, OPT_PORT, C(control_port), "PORT", "TCP control port", "5201" },
	{ "one-off", '1', OPT_FLAG, C(one_off), NULL, "serve one session, then exit with its status" },
	{ "auth-file", 0, OPT_STR, C(auth_file), "FILE", "shared secret: clients must answer an HMAC challenge keyed by it" },
	{ "allow-dest", 0, OPT_STR, C(allow_dest), "LIST", "where a client may ask us to send, ADDR[/PREFIX],... (always: the client's own address)" },
	{ "max-time", 0, OPT_SECONDS, C(max_time), "SEC", "longest test a client may ask for", "300" },
	{ "max-sessions", 0, OPT_UINT, C(max_sessions), "N", "sessions served at once (default: 16, or the number of CPUs where more; sessions past the CPUs share them); the next client is told the server is busy", NULL, 1, TXS_SERVER_SESSIONS_MAX },
	{ "max-sessions-per-client", 0, OPT_UINT, C(max_per_client), "N", "sessions at once from one client address (default: --max-sessions)", NULL, 1, TXS_SERVER_SESSIONS_MAX },
	{ "max-rate", 0, OPT_RATE, O(max_rate), "RATE", "the most a client may ask this server to send in all: bits/s of UDP payload (100M) or datagrams/s (10kpps), as -b; 0 = no limit", "0" },
	{ "ctl-timeout", 0, OPT_SECONDS, C(ctl_timeout), "SEC", "longest wait for a client's next message", "10" },
	{ "stamp", 0, OPT_STR, O(stamp), "PORT", "also a STAMP session-reflector on UDP PORT (default 862), stateful, in the server's process; its counters in --metrics (docs/stamp.md)", NULL, 0, 0, NULL, "862" },
	{ "stamp-threads", 0, OPT_UINT, C(stamp_threads), "N", "the STAMP reflector's sockets (SO_REUSEPORT), one thread each", "1", 1, 64 },
	{ "stamp-stateless", 0, OPT_FLAG, C(stamp_stateless), NULL, "the STAMP reflector echoes the sender's sequence numbers (RFC 8762 4.3)" },
	{ "stamp-auth-file", 0, OPT_STR, C(stamp_auth_file), "FILE", "the STAMP reflector in authenticated mode: HMAC-SHA-256 keyed by the file's contents" },
	{ "iperf2-port", 0, OPT_STR, O(iperf2_port), "PORT", "serve iperf 2 UDP clients (iperf -c HOST -u) on this UDP port, in the server's process: counted exactly, answered with the server report they print (docs/iperf2.md; default 5001, skipped with a log line when that is taken, or when --auth-file is given: iperf 2 cannot answer its challenge)", NULL },
	{ "no-iperf2", 0, OPT_FLAG, O(no_iperf2), NULL, "do not serve iperf 2 clients" },
	OPT_END
};
#undef O
#undef C

const struct txs_opt *txs_server_opt_table(void)
{
	return txs_server_opts;
}

void txs_server_args_init(struct txs_server_args *a)
{
	memset(a, 0, sizeof(*a));
	txs_server_conf_init(&a->c);
}

static int udp_port(const char *name, const char *val, int *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	unsigned long p = strtoul(val, &end, 10);
	if (errno || end == val || *end || p > 65535 || *val == '-' || *val == ' ')
		return txs_fail(err, errlen, -EINVAL, "bad value for --%s: '%s': expected a UDP port 0..65535", name, val);
	*out = (int)p;
	return 0;
}

int txs_server_args_conf(struct txs_server_args *a, char *err, size_t errlen)
{
	int rc;
	if (a->stamp && (rc = udp_port("stamp", a->stamp, &a->c.stamp_port, err, errlen)))
		return rc;
	if (a->iperf2_port) {
		if ((rc = udp_port("iperf2-port", a->iperf2_port, &a->c.iperf2_port, err, errlen)))
			return rc;
		if (a->no_iperf2)
			return txs_fail(err, errlen, -EINVAL, "--iperf2-port and --no-iperf2 exclude each other");
		a->c.iperf2_required = true;
	}
	if (a->no_iperf2)
		a->c.iperf2_port = -1;
	a->c.max_rate = a->max_rate.value;
	a->c.max_rate_bits = a->max_rate.bits;
	return 0;
}
