/* SPDX-License-Identifier: MIT */
/* The control channel in the CLI (docs/control.md): `txscale server`
 * (server.c), the client behind `txscale send -c HOST --server / -R /
 * --bidir` (client.c) and the remote receiver of `txscale ndr --remote`.
 * The hooks in send.c, recv.c, ndr.c and main.c are a few lines each and
 * call only what is declared here. */
#ifndef TXS_CTL_CLI_H
#define TXS_CTL_CLI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <errno.h>
#include <stdio.h>
#include <txscale/ctl_session.h>
#include "opt.h"

int cmd_server(int argc, char **argv);
/* recv -s / recv --server: true when argv asks for the server */
bool ctl_recv_wants_server(int argc, char **argv);

/* ---- client: the options send.c embeds in its config ----------------------------------- */
struct ctl_client_opts {
	bool server;                /* --server */
	bool reverse;               /* -R */
	bool bidir;                 /* --bidir */
	uint16_t control_port;      /* --control-port */
	const char *auth_file;      /* --auth-file */
	double ctl_timeout;         /* --ctl-timeout */
	unsigned remote_threads;    /* --remote-parallel */
	const char *remote_cpus;    /* --remote-cpus */
	uint64_t remote_rcvbuf;     /* --remote-rcvbuf */
	const char *remote_dev;     /* --remote-dev */
	bool iperf2;                /* --iperf2 */
};

int ctl_parse_remote_cpus(const char *val, void *dst, char *err, size_t errlen);
int ctl_parse_remote_dev(const char *val, void *dst, char *err, size_t errlen);

/* Option table lines for send, at offset `base` of its config struct. */
#define CTL_CLIENT_OPTS(base)                                                                                       \
	{ "server", 0, OPT_FLAG, (base) + offsetof(struct ctl_client_opts, server), NULL,                             \
	  "-c HOST is a txscale server (txscale server / recv -s): set the test up over its control port and show "   \
	  "its receiver's counts beside ours (docs/control.md)" },                                                     \
	{ "reverse", 'R', OPT_FLAG, (base) + offsetof(struct ctl_client_opts, reverse), NULL,                          \
	  "with a server: it sends (-l -b -n -t -P ... describe its sender), we receive on -p" },                      \
	{ "bidir", 0, OPT_FLAG, (base) + offsetof(struct ctl_client_opts, bidir), NULL,                                 \
	  "with a server: both directions at once, each with its own threads" },                                      \
	{ "iperf2", 0, OPT_FLAG, (base) + offsetof(struct ctl_client_opts, iperf2), NULL,                              \
	  "-c HOST is an iperf 2 server (iperf -s -u): iperf 2's UDP datagrams to its port (-p, default 5001), its "   \
	  "end-of-test exchange, its server report as the receiver line with our exact loss (docs/iperf2.md)" },       \
	{ "control-port", 0, OPT_PORT, (base) + offsetof(struct ctl_client_opts, control_port), "PORT",               \
	  "the server's TCP control port", "5201" },                                                                   \
	{ "auth-file", 0, OPT_STR, (base) + offsetof(struct ctl_client_opts, auth_file), "FILE",                      \
	  "shared secret for a server that asks for one (never sent: an HMAC answers its challenge)" },               \
	{ "ctl-timeout", 0, OPT_SECONDS, (base) + offsetof(struct ctl_client_opts, ctl_timeout), "SEC",               \
	  "the longest wait for the server's answer", "10" },                                                          \
	{ "remote-parallel", 0, OPT_UINT, (base) + offsetof(struct ctl_client_opts, remote_threads), "N",             \
	  "threads of the server's side (its receiver; with -R its sender)", NULL, 1, TXS_MAX_CORES },                 \
	{ "remote-cpus", 0, OPT_CUSTOM, (base) + offsetof(struct ctl_client_opts, remote_cpus), "CPUS",           \
	  "CPUs of the server's side, e.g. 0-1 (checked by the server)", NULL, 0, 0, ctl_parse_remote_cpus },          \
	{ "remote-rcvbuf", 0, OPT_U64, (base) + offsetof(struct ctl_client_opts, remote_rcvbuf), "BYTES",             \
	  "the server's receive socket buffer (udp)", NULL, 1, 0x7fffffff },                                           \
	{ "remote-dev", 0, OPT_CUSTOM, (base) + offsetof(struct ctl_client_opts, remote_dev), "DEV",                  \
	  "the server's receive input: udp | packet:IFNAME[,IFNAME...]", "udp", 0, 0, ctl_parse_remote_dev }

/* What send.c knows after its checks. */
struct ctl_send_info {
	const char *dest;
	uint16_t port;
	unsigned length;
	double rate_pps; /* 0 = unlimited */
	uint64_t count;
	double time;
	double interval;
	bool json;
	const struct opt_cpus *cpus;
	unsigned threads;
	bool no_pin;
	const char *timestamps; /* --timestamps, also for the server's sender (-R, --bidir) */
	int64_t stamp_shift_ns; /* test only: TXS_TEST_STAMP_SHIFT_NS (send_stamp_shift) */
	const char *bind;       /* -B: our address for everything, control and data (NULL: the kernel's choice) */
	bool shaped;            /* flows, port or address ranges, size mixes or VLAN tags: txscale's only */
};

/* Our sides in a client run (txs_ctl_client_run_sides): send.c's and
 * recv.c's own run and print paths, with the side's io (no signal handlers
 * of their own: the client's stay; its stop hook; the summary to io->sumf,
 * with io->hold only there).
 * Our sender (send.c): the session from the user's options, on dev (NULL:
 * the user's --dev). Exit status. */
struct ctl_own_send {
	int (*run)(void *arg, const char *dev, const struct txs_ctl_side_io *io);
	void *arg;
};

/* Our receiver (-R, --bidir, recv.c): a receive session on udp. Exit status. */
struct ctl_own_recv {
	const char *bind;
	uint16_t port;
	double interval, idle, time;
	bool json;
	bool clock_set;          /* --clock-offset */
	int64_t clock_offset_ns;
	uint64_t clock_error_ns; /* its error bound: an offset within it is reported, not applied */
	unsigned threads;        /* -P */
	const struct opt_cpus *cpus; /* -A, or NULL */
	bool no_pin;
	/* called once before its first output line (banner, interval or
	 * summary), none when the server refused the test: the client's first
	 * line goes before them (NULL: none) */
	void (*first)(void *arg);
	void *first_arg;
};
int recv_run_own(const struct ctl_own_recv *r, const struct txs_ctl_side_io *io);

/* send.c: run as the client? Yes with --server, -R or --bidir; and with
 * -c HOST and no --dev (the iperf3 form): ctl_client_run then finds a
 * txscale or an iperf3 server on the control port over one connection, and
 * exits 1 when neither answers. */
bool ctl_client_wanted(const struct ctl_client_opts *o, const char *dest, int argc, char **argv);
/* The whole client run, our sender being own's. Exit status. */
int ctl_client_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, const struct ctl_own_send *own);
/* The test against an iperf3 server over its protocol on fd (closed
 * here; client_iperf3.c). Exit status. */
int ctl_iperf3_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, int fd);
/* --iperf2: the test against an iperf 2 server (client_iperf2.c); port_set:
 * -p was given (else 5001); stop: the client's signal state. Exit status. */
int ctl_iperf2_run(const struct ctl_client_opts *o, const struct ctl_send_info *s, bool port_set,
		   int (*stop)(void *), void *arg);

/* The other side's summary on stdout (txs_ctl_peer_write), or a line
 * saying it was not JSON. */
static inline void ctl_print_peer(const char *role, const char *host, const char *summary, bool json)
{
	if (txs_ctl_peer_write(stdout, role, host, summary, json) == -EINVAL)
		fprintf(stderr, "txscale: the %s summary of %s is not JSON\n", role, host);
}

/* ---- ndr --remote ----------------------------------------------------------------------- */
/* ndr's options for a remote receiver: one session for the whole search
 * (one search per process: the connection is client.c's). */
struct ctl_ndr_opts {
	const char *host;         /* --remote */
	uint16_t control_port;    /* --control-port */
	const char *auth_file;    /* --auth-file */
	uint64_t rcvbuf;          /* --recv-args "--rcvbuf N" */
};
#define CTL_NDR_OPTS(base)                                                                                          \
	{ "remote", 0, OPT_STR, (base) + offsetof(struct ctl_ndr_opts, host), "HOST",                                 \
	  "the receiver is a txscale server on HOST (txscale server / recv -s): trials over its control channel; "     \
	  "DEST defaults to HOST" },                                                                                    \
	{ "control-port", 0, OPT_PORT, (base) + offsetof(struct ctl_ndr_opts, control_port), "PORT",                  \
	  "with --remote: the server's TCP control port", "5201" },                                                    \
	{ "auth-file", 0, OPT_STR, (base) + offsetof(struct ctl_ndr_opts, auth_file), "FILE",                         \
	  "with --remote: shared secret for a server that asks for one" }
/* Bad combinations (exit 2 with one line): --remote with --recv-netns, with
 * --recv-args other than --rcvbuf N, or with DEST other than HOST. */
int ctl_ndr_check(struct ctl_ndr_opts *o, const char *dest, const char *recv_netns, const char *recv_args);
/* One trial's receiver: begin before the sender starts (the server's
 * receiver is ready when it returns), end after the sender exited: its
 * summary file goes to the server, the receiver's comes back into
 * recv_json_path. 0 or -errno with err. */
int ctl_ndr_recv_begin(const struct ctl_ndr_opts *o, uint16_t port, const char *dev, double secs, char *err,
		       size_t errlen);
int ctl_ndr_recv_end(const struct ctl_ndr_opts *o, const char *send_json_path, const char *recv_json_path, char *err,
		     size_t errlen);
void ctl_ndr_close(const struct ctl_ndr_opts *o);
#endif
