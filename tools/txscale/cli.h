/* SPDX-License-Identifier: MIT */
#ifndef TXS_CLI_H
#define TXS_CLI_H

struct txs_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
};

int cmd_send(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_recv(int argc, char **argv);
int cmd_ndr(int argc, char **argv);
int cmd_server(int argc, char **argv);

/* The server's receiver for one test, from the spec the control channel
 * carried (server_sess.c runs it in a child process, spawn_call): the
 * option table's defaults, then the spec and these. Returns the exit
 * status, as `txscale recv` with the same options would. */
struct txs_ctl_recv_spec;
struct recv_spec_run {
	const struct txs_ctl_recv_spec *spec;
	const char *bind, *sender_summary, *summary_file, *metrics_file;
	double idle, limit; /* --idle, -t */
	int ready_fd;       /* --ready-fd */
};
int recv_run_spec(const struct recv_spec_run *rs);

/* The server's sender for one test (--dev udp from bind to dest), from its
 * spec, the same way. */
struct txs_ctl_send_spec;
struct send_spec_run {
	const struct txs_ctl_send_spec *spec;
	const char *bind, *dest, *summary_file, *metrics_file;
	double limit; /* -t */
};
int send_run_spec(const struct send_spec_run *ss);

/* One line per subcommand. */
#define TXS_CLI_COMMANDS \
	{ "send", "generate UDP traffic on a device", cmd_send }, \
	{ "recv", "receive and analyse UDP traffic: loss, duplicates, reordering, latency", cmd_recv }, \
	{ "server", "control-channel server: the far end of txscale send -c HOST and of stock iperf3 -u clients on the same port (= recv -s)", cmd_server }, \
	{ "ndr", "zero-loss rate search: the highest rate txscale recv sees without loss", cmd_ndr }, \
	{ "bench", "micro-benchmarks (ident, linksel, sendmsg, ...)", cmd_bench },

#endif
