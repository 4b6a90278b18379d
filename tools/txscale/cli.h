/* SPDX-License-Identifier: MIT */
#ifndef TXS_CLI_H
#define TXS_CLI_H
#include <stdint.h>

struct txs_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int cmd_send(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_recv(int argc, char **argv);
int cmd_ndr(int argc, char **argv);
int cmd_rfc2544(int argc, char **argv);
int cmd_server(int argc, char **argv);
int cmd_stamp(int argc, char **argv);

/* Test only (docs/recv.md, "Clock offset"): TXS_TEST_STAMP_SHIFT_NS, the
 * shift of a sender's timestamps as a clock off by that much would make
 * them. 0, or 2 after a message. */
int send_stamp_shift(int64_t *out);

/* One line per subcommand. */
#define TXS_CLI_COMMANDS \
	{ "send", "generate UDP traffic on a device", cmd_send }, \
	{ "recv", "receive and analyse UDP traffic: loss, duplicates, reordering, latency", cmd_recv }, \
	{ "server", "control-channel server: the far end of txscale send -c HOST and of stock iperf3 -u clients on the same port (= recv -s)", cmd_server }, \
	{ "stamp", "STAMP (RFC 8762/8972): a session-reflector, and a session-sender with loss per direction and round trips", cmd_stamp }, \
	{ "ndr", "zero-loss rate search: the highest rate txscale recv sees without loss", cmd_ndr }, \
	{ "rfc2544", "RFC 2544 suite per frame size: throughput, latency, frame loss rate, back-to-back, with a report", cmd_rfc2544 }, \
	{ "bench", "micro-benchmarks (ident, linksel, sendmsg, ...)", cmd_bench },

#endif
