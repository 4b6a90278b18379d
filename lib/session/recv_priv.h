/* SPDX-License-Identifier: MIT */
/* The receive session's inside (lib/session/recv*.c). Not public. */
#ifndef TXS_SESSION_RECV_PRIV_H
#define TXS_SESSION_RECV_PRIV_H
#include <pthread.h>
#include <txscale/session_recv.h>
#include "common/err.h"

/* A checked config, resolved: what open and run work from. */
struct txs_recv_plan {
	const char *dev;
	unsigned threads;
	bool is_pcap, is_udp;
	uint16_t port, port_hi;   /* port 0: not given */
	bool have_bind;
	struct txs_addr bind;
	int family;
	enum txs_rx_payload payload;
	enum txs_rx_ts_mode rx_ts;
	char hw_ifname[16];
	double time;              /* 0 = no limit */
};

/* txs_recv_conf_check, filling the plan. */
int txs_recv_plan_make(struct txs_recv_plan *p, const struct txs_recv_conf *c, char *err, size_t errlen);
/* Open files a udp port range needs (a socket per port and thread, and room
 * for the rest); 0 for a single port. */
unsigned long long txs_recv_nofile_need(const struct txs_recv_plan *p);

/* A sender's summary text into e (txs_rx_expect_parse); e stays as it was
 * unless the text is whole and valid. 0 or -errno. */
int txs_recv_summary_parse(struct txs_rx_expect *e, const char *text, size_t len);

struct txs_recv_thread {
	struct txs_rx_input *in;
	struct txs_rx_core *core;
	struct txs_rx_snap *snap;
	const int *stop;
	unsigned q;
	int cpu;
	uint64_t first_ns, last_ns; /* mono; written by the thread per batch, read by the controller */
	int error;
	int done;
	bool started;
	pthread_t th;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

/* The receiving thread: pin, poll until stop, end of input or an error. */
void *txs_recv_thread_main(void *arg);

struct txs_recv {
	struct txs_recv_conf conf;
	struct txs_recv_plan plan;
	struct txs_rx_input *in;
	struct txs_rx_input_conf ic;
	struct txs_rx_expect *exp;
	uint64_t summary_not_before; /* CLOCK_REALTIME ns; 0 offline */
	char *open_text;             /* the summary read at open, for hooks.summary */
	size_t open_len;
	unsigned n;
	struct txs_recv_thread *t;
	struct txs_rx_core **cores;
	struct txs_rx_snap **snaps;
	int cpus[TXS_MAX_CORES];
	int stop;
	bool ran;
	struct txs_recv_result *res;
};
#endif
