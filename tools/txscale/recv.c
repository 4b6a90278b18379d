/* SPDX-License-Identifier: MIT */
/* txscale recv: receive and analyse txscale traffic (docs/recv.md). One
 * thread per queue, each with its own analysis core; the main thread only
 * reads relaxed live counters for interval lines and stop conditions, and
 * merges the cores once the threads have stopped. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <net/if.h>
#include <time.h>
#include <unistd.h>
#include <txscale/txscale.h>
#include <txscale/rx.h>
#include <txscale/ctl.h>
#include "cli.h"
#include "opt.h"
#include "ctl_cli.h"
#include "metrics_cli.h"

#define LIVE_DEFAULT_TIME 10.0
/* udp: the receive buffer asked for by default (SO_RCVBUFFORCE when
 * permitted, else SO_RCVBUF, which the kernel caps at net.core.rmem_max):
 * at 100 kpps of small datagrams on one host this rides out a stall of the
 * receiving thread of several hundred ms */
#define RCVBUF_DEFAULT (32u << 20)
#define POLL_MS 50
#define SUMMARY_WAIT_S 5.0 /* --idle with --sender-summary: wait this long for the file */

struct opt_time {
	bool set;
	double v;
};

struct opt_offset {
	bool set;
	int64_t ns;
};

static int parse_offset(const char *val, void *dst, char *err, size_t errlen)
{
	struct opt_offset *o = dst;
	char *end;
	errno = 0;
	long long v = strtoll(val, &end, 10);
	if (errno || end == val || *end || v < -(1ll << 62) || v > (1ll << 62)) {
		snprintf(err, errlen, "expected a signed integer of nanoseconds (receiver's clock minus sender's), "
			 "e.g. -1500000");
		return -1;
	}
	o->set = true;
	o->ns = v;
	return 0;
}

struct recv_cfg {
	const char *bind;
	const char *port_s;
	uint16_t port, port_hi; /* from port_s; port_hi 0: one port */
	bool v4, v6;
	unsigned threads;
	struct opt_cpus cpus;
	bool no_pin;
	bool reuseport;
	const char *dev;
	struct opt_time time;
	double idle;
	uint64_t expect;
	const char *sender_summary;
	double interval;
	bool json;
	uint64_t rcvbuf;
	unsigned window, max_flows, batch;
	bool verify;
	const char *summary_file;
	unsigned ready_fd;
	bool server; /* -s: ctl_recv_wants_server() saw it first */
	const char *rx_ts; /* --rx-timestamps */
	const char *payload; /* --payload */
	double outage_min;  /* --outage-min, seconds (0 = automatic) */
	struct opt_offset clock_offset; /* --clock-offset */
	struct mcli_opts metrics; /* --metrics, --metrics-file (docs/metrics.md) */
};

static int parse_time(const char *val, void *dst, char *err, size_t errlen)
{
	struct opt_time *t = dst;
	if (opt_parse_seconds(val, &t->v) < 0) {
		snprintf(err, errlen, "expected seconds, e.g. 10, 0.5, 250ms (0 = no limit, needs --idle)");
		return -1;
	}
	t->set = true;
	return 0;
}

#define O(f) offsetof(struct recv_cfg, f)
static const struct opt recv_opts[] = {
	{ "bind", 'B', OPT_STR, O(bind), "ADDR", "local address (udp); raw inputs: analyse only packets to ADDR" },
	{ "port", 'p', OPT_STR, O(port_s), "PORT[-HI]", "UDP port, or a range of at most 1024 ports (udp: a socket per port and thread) (default 5201; pcap: any port unless given)" },
	{ "ipv4", '4', OPT_FLAG, O(v4), NULL, "IPv4 only" },
	{ "ipv6", '6', OPT_FLAG, O(v6), NULL, "IPv6 only (udp without -B: dual-stack unless -4/-6)" },
	{ "parallel", 'P', OPT_UINT, O(threads), "N", "receiving threads/queues (default: one per -A CPU, else 1)", NULL, 1, TXS_MAX_CORES },
	{ "affinity", 'A', OPT_CPULIST, O(cpus), "CPUS", "pin threads to these CPUs, e.g. 0-3 (default: not pinned, like iperf3)" },
	{ "no-pin", 0, OPT_FLAG, O(no_pin), NULL, "do not pin threads, even with -A (the default without -A)" },
	{ "dev", 0, OPT_STR, O(dev), "DEV", "input: udp[:gro=off] | packet:IFNAME[,IFNAME...] | xdp:IFNAME[,native|skb][,copy|zc][,ring=N] | pcap:FILE", "udp" },
	{ "time", 't', OPT_CUSTOM, O(time), "SEC", "stop after SEC seconds (live default 10; 0 = no limit, needs --idle)", NULL, 0, 0, parse_time },
	{ "idle", 0, OPT_SECONDS, O(idle), "SEC", "stop after SEC without packets (counted from the first packet)" },
	{ "expect", 0, OPT_U64, O(expect), "N", "the sender sent N packets: exact loss; stop once all arrived", NULL, 1, 0 },
	{ "sender-summary", 0, OPT_STR, O(sender_summary), "FILE", "JSON summary of txscale send (--summary-file, or its -J output), read at the end: exact loss per flow" },
	{ "interval", 'i', OPT_SECONDS, O(interval), "SEC", "seconds between interval reports; 0 = none", "1" },
	{ "json", 'J', OPT_FLAG, O(json), NULL, "JSON lines output (docs/json-schema.md)" },
	{ "rcvbuf", 0, OPT_U64, O(rcvbuf), "BYTES", "udp: socket receive buffer, default 33554432 (SO_RCVBUFFORCE if permitted, else up to net.core.rmem_max)", NULL, 1, 0x7fffffff },
	{ "reuseport", 0, OPT_FLAG, O(reuseport), NULL, "udp: share the port with other receivers (SO_REUSEPORT: the kernel splits the traffic; each counts the others' share as lost)" },
	{ "window", 0, OPT_UINT, O(window), "PKTS", "duplicate/reorder window per flow, power of two", "4096", 64, TXS_RX_WINDOW_MAX },
	{ "max-flows", 0, OPT_UINT, O(max_flows), "N", "flows tracked per thread", "4096", 1, 1u << 22 },
	{ "batch", 0, OPT_UINT, O(batch), "N", "datagrams per recvmmsg / records per read", "64", 1, 1024 },
	{ "rx-timestamps", 0, OPT_STR, O(rx_ts), "MODE", "udp: arrival time for latency: kernel (each datagram's "
	  "software receive timestamp, SO_TIMESTAMPING), user (one clock read per recvmmsg batch), or "
	  "hardware[:IFACE] (the NIC's own stamp, else kernel, per datagram; IFACE, default the one holding "
	  "-B ADDR, must stamp all packets, and its clock (PHC) be kept on CLOCK_REALTIME, e.g. by phc2sys, "
	  "as the sender stamps CLOCK_REALTIME; CAP_NET_ADMIN unless the NIC's filter is on already)", "kernel" },
	{ "verify", 0, OPT_FLAG, O(verify), NULL, "check the payload fill pattern of every packet" },
	{ "payload", 0, OPT_STR, O(payload), "KIND", "the payload header: txscale, or iperf3 / iperf3-64 (a stock iperf3 client's, 32- or 64-bit sequence; flows by 5-tuple; docs/iperf3.md)", "txscale" },
	{ "outage-min", 0, OPT_SECONDS, O(outage_min), "SEC", "an outage is a silence longer than SEC with datagrams missing inside it (default: 10x the flow's median inter-arrival, at least 1 ms)" },
	{ "clock-offset", 0, OPT_CUSTOM, O(clock_offset), "NS", "correct one-way latency by this known clock offset (receiver's clock minus sender's, ns); the report says so and gives the raw figures beside", NULL, 0, 0, parse_offset },
	{ "summary-file", 0, OPT_STR, O(summary_file), "FILE", "also write the JSON summary line to FILE" },
	{ "ready-fd", 0, OPT_UINT, O(ready_fd), "FD", "write the line \"ready\" to FD, then close it, once receiving (used by txscale ndr)", NULL, 3, 1u << 20 },
	{ "server", 's', OPT_FLAG, O(server), NULL, "run as the control-channel server for txscale send -c HOST --server (= txscale server; its options: txscale server --help)" },
	MCLI_OPTS(O(metrics)),
	MCLI_FLOWS_OPT(O(metrics)),
	OPT_END
};
#undef O

static int g_stop;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
}

static bool stopping(void)
{
	return __atomic_load_n(&g_stop, __ATOMIC_RELAXED);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct rthread {
	struct txs_rx_input *in;
	struct txs_rx_core *core;
	struct txs_rx_snap *snap; /* --metrics: copies of the core for a scrape, made here between polls */
	unsigned q;
	int cpu;
	uint64_t first_ns, last_ns; /* mono; written by the thread per batch, read by main */
	int error;
	int done;
	bool started;
	pthread_t th;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

static void *rthread_main(void *arg)
{
	struct rthread *t = arg;
	int rc = 0;
	if (t->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (e)
			rc = -e;
	}
	while (rc == 0 && !stopping()) {
		int n = txs_rx_input_poll(t->in, t->q, t->core, POLL_MS);
		if (t->snap)
			txs_rx_core_publish(t->core, t->snap);
		if (n > 0) {
			uint64_t now = mono_ns();
			if (!__atomic_load_n(&t->first_ns, __ATOMIC_RELAXED))
				__atomic_store_n(&t->first_ns, now, __ATOMIC_RELAXED);
			__atomic_store_n(&t->last_ns, now, __ATOMIC_RELAXED);
		} else if (n == -ENODATA) {
			break;
		} else if (n < 0) {
			rc = n;
		}
	}
	t->error = rc;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- interval lines ------------------------------------------------------------- */
struct iv_row {
	struct txs_rx_live l;
};

static void live_sub(struct txs_rx_live *d, const struct txs_rx_live *a, const struct txs_rx_live *b)
{
	d->received = a->received - b->received;
	d->bytes = a->bytes - b->bytes;
	d->unique = a->unique - b->unique;
	d->duplicates = a->duplicates - b->duplicates;
	d->reordered = a->reordered - b->reordered;
	d->late = a->late - b->late;
	d->gaps = a->gaps - b->gaps;
	d->malformed = a->malformed - b->malformed;
	d->ignored = a->ignored - b->ignored;
	d->outages = a->outages - b->outages;
	d->outage_ns = a->outage_ns - b->outage_ns;
}

static void live_add(struct txs_rx_live *d, const struct txs_rx_live *a)
{
	d->received += a->received;
	d->bytes += a->bytes;
	d->unique += a->unique;
	d->duplicates += a->duplicates;
	d->reordered += a->reordered;
	d->late += a->late;
	d->gaps += a->gaps;
	d->malformed += a->malformed;
	d->ignored += a->ignored;
	d->outages += a->outages;
	d->outage_ns += a->outage_ns;
}

/* provisional: holes opened minus holes filled (negative when reordered
 * packets fill holes of an earlier interval) */
static int64_t live_lost(const struct txs_rx_live *l)
{
	return (int64_t)(l->gaps - l->reordered);
}

static void iv_json_row(struct txs_json *j, const struct txs_rx_live *l, double dt)
{
	txs_json_u64(j, "received", l->received);
	txs_json_u64(j, "bytes", l->bytes);
	txs_json_dbl(j, "pps", dt > 0 ? l->received / dt : 0);
	txs_json_dbl(j, "bps", dt > 0 ? l->bytes * 8.0 / dt : 0);
	txs_json_i64(j, "lost", live_lost(l));
	txs_json_u64(j, "duplicates", l->duplicates);
	txs_json_u64(j, "reordered", l->reordered);
	txs_json_u64(j, "late", l->late);
	txs_json_u64(j, "malformed", l->malformed);
	txs_json_u64(j, "ignored", l->ignored);
	/* outages that ended in the interval (negative: late datagrams withdrew one) */
	txs_json_i64(j, "outages", (int64_t)l->outages);
	txs_json_i64(j, "outage_ns", (int64_t)l->outage_ns);
}

static void iv_text_row(const char *id, double t0, double t1, const struct txs_rx_live *l)
{
	char pps[32], bps[32];
	double dt = t1 - t0 > 0 ? t1 - t0 : 1e-9;
	printf("[%4s] %7.2f-%-7.2f sec %12llu pkts %9s pps %9sbit/s %8lld %6llu %8llu %9llu %4lld %9.3f\n", id, t0, t1,
	       (unsigned long long)l->received, txs_fmt_si(l->received / dt, pps, sizeof(pps)),
	       txs_fmt_si(l->bytes * 8.0 / dt, bps, sizeof(bps)), (long long)live_lost(l),
	       (unsigned long long)l->duplicates, (unsigned long long)l->reordered,
	       (unsigned long long)l->malformed, (long long)l->outages, (double)(int64_t)l->outage_ns / 1e6);
}

static void interval(const struct recv_cfg *cfg, struct rthread *t, unsigned n, struct txs_rx_live *prev,
		     double t0, double t1, bool *header)
{
	struct txs_rx_live sum = { 0 }, *d = calloc(n, sizeof(*d));
	if (!d)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct txs_rx_live cur;
		txs_rx_core_live(t[i].core, &cur);
		live_sub(&d[i], &cur, &prev[i]);
		prev[i] = cur;
		live_add(&sum, &d[i]);
	}
	if (cfg->json) {
		struct txs_json j;
		txs_json_begin(&j, stdout);
		txs_json_str(&j, "type", "interval");
		txs_json_str(&j, "kind", "recv");
		txs_json_dbl(&j, "start", t0);
		txs_json_dbl(&j, "end", t1);
		iv_json_row(&j, &sum, t1 - t0);
		txs_json_arr_open(&j, "threads");
		for (unsigned i = 0; i < n; i++) {
			txs_json_obj_open(&j, NULL);
			txs_json_u64(&j, "id", i);
			txs_json_i64(&j, "cpu", t[i].cpu);
			iv_json_row(&j, &d[i], t1 - t0);
			txs_json_obj_close(&j);
		}
		txs_json_arr_close(&j);
		txs_json_end(&j);
	} else {
		if (!*header) {
			printf("[  ID] Interval            %17s %13s %14s %8s %6s %8s %9s %4s %9s\n", "Received", "Rate",
			       "Bitrate", "Lost", "Dup", "Reorder", "Malformed", "Out", "Out ms");
			*header = true;
		}
		if (n > 1)
			for (unsigned i = 0; i < n; i++) {
				char id[16];
				snprintf(id, sizeof(id), "%u", i);
				iv_text_row(id, t0, t1, &d[i]);
			}
		iv_text_row("SUM", t0, t1, &sum);
		fflush(stdout);
	}
	free(d);
}

/* ---- summary ---------------------------------------------------------------------- */
struct summary {
	const struct recv_cfg *cfg;
	const struct txs_rx_input *in;
	const struct txs_rx_result *r;
	const struct rthread *t;
	unsigned n;
	double seconds, active;
	const struct txs_rx_kstats *kd;
	const struct txs_rx_input_stats *is;
	const char *link_names[TXS_MAX_LINKS];
	const char *if_names[TXS_MAX_LINKS];
	unsigned n_if;
};

static int64_t sock_drops(const struct summary *s)
{
	return s->is->have_socket_drops ? (int64_t)s->is->socket_drops : -1;
}

static const char *ts_mode_str(enum txs_rx_ts_mode m)
{
	return m == TXS_RX_TS_HARDWARE ? "hardware" : m == TXS_RX_TS_USER ? "user" : "kernel";
}

/* the xdp: input's mode and its sockets' own drop counters */
static void xdp_json(struct txs_json *j, const struct txs_rx_input_stats *is)
{
	txs_json_obj_open(j, "xdp");
	txs_json_str(j, "mode", is->xdp_mode);
	txs_json_bool(j, "zerocopy", is->xdp_zerocopy);
	txs_json_u64(j, "sockets", is->xdp_queues);
	txs_json_u64(j, "interface_queues", is->xdp_if_queues);
	txs_json_u64(j, "rx_dropped", is->xdp_rx_dropped);
	txs_json_u64(j, "rx_ring_full", is->xdp_rx_ring_full);
	txs_json_u64(j, "rx_fill_ring_empty_descs", is->xdp_fill_empty);
	txs_json_u64(j, "rx_invalid_descs", is->xdp_rx_invalid);
	txs_json_u64(j, "no_socket", is->xdp_no_socket);
	txs_json_obj_close(j);
}

static void xdp_text(const struct txs_rx_input_stats *is)
{
	printf("xdp      %s XDP, %s, %u socket%s (interface: %u RX queue%s); rx_dropped %llu, rx_ring_full %llu, "
	       "fill ring empty %llu, invalid %llu\n", is->xdp_mode, is->xdp_zerocopy ? "zero-copy" : "copy mode",
	       is->xdp_queues, is->xdp_queues == 1 ? "" : "s", is->xdp_if_queues, is->xdp_if_queues == 1 ? "" : "s",
	       (unsigned long long)is->xdp_rx_dropped, (unsigned long long)is->xdp_rx_ring_full,
	       (unsigned long long)is->xdp_fill_empty, (unsigned long long)is->xdp_rx_invalid);
	if (is->xdp_no_socket)
		printf("MISSED   %llu datagrams for us arrived on a queue without our socket and went to the stack "
		       "(-P as many threads as the interface has RX queues)\n", (unsigned long long)is->xdp_no_socket);
}

static void summary_json(FILE *f, const struct summary *s)
{
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "summary");
	txs_json_str(&j, "kind", "recv");
	txs_json_str(&j, "device", s->in->spec);
	txs_json_dbl(&j, "seconds", s->seconds);
	txs_json_dbl(&j, "active_seconds", s->active);
	txs_json_dbl(&j, "pps", s->active > 0 ? s->r->received / s->active : 0);
	txs_json_dbl(&j, "bps", s->active > 0 ? s->r->bytes * 8.0 / s->active : 0);
	txs_rx_result_json(&j, s->r, s->link_names);
	if (s->in->offline) {
		txs_json_obj_open(&j, "kernel_drops"); /* a file: nothing the kernel dropped */
		txs_json_obj_close(&j);
	} else {
		txs_rx_kstats_json(&j, "kernel_drops", s->kd, s->n_if ? s->if_names : NULL, s->n_if, sock_drops(s));
	}
	txs_json_obj_open(&j, "input");
	txs_json_u64(&j, "socket_drops", s->is->socket_drops);
	txs_json_bool(&j, "socket_drops_known", s->is->have_socket_drops);
	txs_json_u64(&j, "ring_packets", s->is->ring_packets);
	txs_json_u64(&j, "csum_completed", s->is->csum_completed);
	if (s->is->rcvbuf >= 0)
		txs_json_i64(&j, "rcvbuf", s->is->rcvbuf);
	else
		txs_json_dbl(&j, "rcvbuf", NAN);
	txs_json_bool(&j, "rcvbuf_forced", s->is->rcvbuf_forced);
	if (!s->in->raw && !s->in->offline) {
		txs_json_obj_open(&j, "gro");
		txs_json_bool(&j, "on", s->is->gro);
		txs_json_u64(&j, "messages", s->is->gro_msgs);
		txs_json_u64(&j, "datagrams", s->is->gro_dgrams);
		txs_json_obj_close(&j);
		txs_json_str(&j, "rx_timestamps", ts_mode_str(s->in->conf.rx_ts));
		txs_json_u64(&j, "ts_kernel", s->is->ts_kernel);
		txs_json_u64(&j, "ts_user", s->is->ts_user);
		txs_json_u64(&j, "ts_hardware", s->is->ts_hardware);
		if (s->in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
			txs_json_str(&j, "hw_interface", s->is->hw_ifname);
			txs_json_i64(&j, "phc_index", s->is->phc_index);
			txs_json_bool(&j, "hw_filter_set", s->is->hw_filter_set);
			txs_json_bool(&j, "hw_filter_left_on", s->is->hw_filter_left);
			txs_json_u64(&j, "ts_hw_skewed", s->is->ts_hw_skewed);
			txs_json_i64(&j, "hw_offset_ns", s->is->hw_offset_ns);
		}
	}
	if (s->is->have_xdp)
		xdp_json(&j, s->is);
	txs_json_obj_open(&j, "pcap");
	txs_json_u64(&j, "records", s->is->pcap.records);
	txs_json_u64(&j, "snapped", s->is->pcap.snapped);
	txs_json_u64(&j, "bad_len", s->is->pcap.bad_len);
	txs_json_u64(&j, "truncated", s->is->pcap.truncated);
	txs_json_u64(&j, "bad_l2", s->is->pcap.bad_l2);
	txs_json_obj_close(&j);
	txs_json_obj_close(&j);
	txs_json_arr_open(&j, "threads");
	for (unsigned i = 0; i < s->n; i++) {
		struct txs_rx_live l;
		txs_rx_core_live(s->t[i].core, &l);
		txs_json_obj_open(&j, NULL);
		txs_json_u64(&j, "id", i);
		txs_json_i64(&j, "cpu", s->t[i].cpu);
		txs_json_u64(&j, "received", l.received);
		txs_json_u64(&j, "bytes", l.bytes);
		txs_json_u64(&j, "malformed", l.malformed);
		txs_json_u64(&j, "ignored", l.ignored);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_json_end(&j);
}

static void summary_text(const struct summary *s)
{
	char pps[32], bps[32];
	printf("- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n");
	printf("recv: %s, %u thread%s, %.3f s (first to last packet %.3f s): %s pps, %sbit/s payload\n", s->in->spec,
	       s->n, s->n > 1 ? "s" : "", s->seconds, s->active,
	       txs_fmt_si(s->active > 0 ? s->r->received / s->active : 0, pps, sizeof(pps)),
	       txs_fmt_si(s->active > 0 ? s->r->bytes * 8.0 / s->active : 0, bps, sizeof(bps)));
	txs_rx_result_text(stdout, s->r, s->link_names);
	if (!s->in->offline)
		txs_rx_kstats_text(stdout, s->kd, s->n_if ? s->if_names : NULL, s->n_if, sock_drops(s));
	if (s->is->rcvbuf >= 0) {
		printf("socket   receive buffer %lld bytes (%s); UDP GRO %s", (long long)s->is->rcvbuf,
		       s->is->rcvbuf_forced ? "SO_RCVBUFFORCE" : "SO_RCVBUF, capped by net.core.rmem_max",
		       s->is->gro ? "on" : "off");
		if (s->is->gro)
			printf(": %llu messages carried %llu datagrams", (unsigned long long)s->is->gro_msgs,
			       (unsigned long long)s->is->gro_dgrams);
		printf("\n");
		if (s->is->gro && sock_drops(s) > 0)
			printf("socket   with UDP GRO the kernel counts its drops (sockets, RcvbufErrors) in messages "
			       "of up to 128 datagrams; the loss above is in datagrams\n");
	}
	if (!s->in->raw && !s->in->offline && s->in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
		char phc[32] = "PHC unknown";
		if (s->is->phc_index >= 0)
			snprintf(phc, sizeof(phc), "PHC /dev/ptp%d", s->is->phc_index);
		printf("arrival  times of %llu datagrams from the NIC's hardware timestamp, %llu from the kernel's "
		       "software timestamp, %llu from our clock; %llu hardware timestamps off our clock, not used "
		       "(--rx-timestamps hardware: %s, %s%s)\n",
		       (unsigned long long)s->is->ts_hardware, (unsigned long long)s->is->ts_kernel,
		       (unsigned long long)s->is->ts_user, (unsigned long long)s->is->ts_hw_skewed, s->is->hw_ifname, phc,
		       !s->is->hw_filter_set ? ""
		       : s->is->hw_filter_left ? ", receive filter switched on by us and left on: the driver cannot "
						 "say what it was"
						: ", receive filter switched on by us");
	} else if (!s->in->raw && !s->in->offline) {
		printf("arrival  times of %llu datagrams from the kernel's receive timestamp, %llu from our clock "
		       "(--rx-timestamps %s)\n", (unsigned long long)s->is->ts_kernel, (unsigned long long)s->is->ts_user,
		       ts_mode_str(s->in->conf.rx_ts));
	}
	if (s->is->have_socket_drops && s->is->socket_drops)
		printf("DROPPED  the kernel dropped %llu datagrams at our %s (%s full): they are part of lost%s\n",
		       (unsigned long long)s->is->socket_drops, s->is->have_xdp ? "AF_XDP sockets" : s->in->raw ? "rings" : "sockets",
		       s->is->have_xdp ? "RX or fill ring" : s->in->raw ? "ring" : "receive buffer",
		       s->in->raw ? "" : "; a larger --rcvbuf or -A on a CPU of its own may help");
	if (s->is->have_xdp)
		xdp_text(s->is);
	const struct txs_pcap_counts *pc = &s->is->pcap;
	if (pc->bad_len || pc->truncated || pc->bad_l2 || pc->snapped)
		printf("pcap     %llu records; corrupt: %llu bad length, %llu truncated, %llu bad link header; %llu "
		       "cut by snap length\n",
		       (unsigned long long)pc->records, (unsigned long long)pc->bad_len,
		       (unsigned long long)pc->truncated, (unsigned long long)pc->bad_l2,
		       (unsigned long long)pc->snapped);
	fflush(stdout);
}

/* A live receiver takes only a sender summary written after it started: a
 * file left by an earlier run would stop it early and make its loss "exact"
 * against the wrong sender. Zero (offline inputs): any file. */
static struct timespec g_summary_not_before;

/* the clock line the control channel's server writes beside the sender's summary */
static struct txs_ctl_clock_rep g_summary_clock;

static int load_summary(const char *path, struct txs_rx_expect *e, bool quiet)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		if (!quiet)
			fprintf(stderr, "txscale recv: cannot read --sender-summary '%s': %s\n", path, strerror(errno));
		return 2;
	}
	struct stat st;
	const struct timespec *nbf = &g_summary_not_before;
	if (fstat(fileno(f), &st) == 0 && (st.st_mtim.tv_sec < nbf->tv_sec ||
					   (st.st_mtim.tv_sec == nbf->tv_sec && st.st_mtim.tv_nsec < nbf->tv_nsec))) {
		fclose(f);
		if (!quiet)
			fprintf(stderr, "txscale recv: --sender-summary '%s' was written before this recv started "
					"(a file of an earlier run?)\n", path);
		return 2;
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
		if (len == cap) {
			if (cap >= (64u << 20)) {
				free(buf);
				buf = NULL;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf) {
		if (!quiet)
			fprintf(stderr, "txscale recv: --sender-summary '%s': too large or out of memory\n", path);
		return 2;
	}
	/* into a copy: e stays as it was unless the file is whole and valid */
	struct txs_rx_expect *ne = malloc(sizeof(*ne));
	int rc = ne ? txs_rx_expect_parse(ne, buf, len) : -ENOMEM;
	if (rc == 0) {
		*e = *ne;
		if (txs_ctl_clock_line_parse(buf, len, &g_summary_clock) < 0)
			g_summary_clock.on = false;
	}
	free(ne);
	free(buf);
	if (rc < 0) {
		if (!quiet)
			fprintf(stderr,
			"txscale recv: --sender-summary '%s': no valid txscale send summary line "
			"({\"type\":\"summary\",\"kind\":\"send\",\"packets\":N,\"threads\":[...]})\n",
			path);
		return 2;
	}
	return 0;
}

/* --rx-timestamps kernel | user | hardware[:IFACE]. Returns 0 or the exit status. */
static int parse_rx_ts(const char *v, struct txs_rx_input_conf *ic, bool udp)
{
	if (strcmp(v, "kernel") == 0) {
		ic->rx_ts = TXS_RX_TS_KERNEL;
		return 0;
	}
	if (strcmp(v, "user") == 0) {
		ic->rx_ts = TXS_RX_TS_USER;
		return 0;
	}
	if (strcmp(v, "hardware") != 0 && strncmp(v, "hardware:", 9) != 0) {
		fprintf(stderr, "txscale recv: bad value for --rx-timestamps: '%s': valid are kernel, user, "
				"hardware[:IFACE]\n", v);
		return 2;
	}
	if (!udp) {
		fprintf(stderr, "txscale recv: --rx-timestamps %s applies to --dev udp only (packet: and pcap: take "
				"their own per-packet times)\n", v);
		return 2;
	}
	ic->rx_ts = TXS_RX_TS_HARDWARE;
	if (v[8] == ':') {
		const char *ifn = v + 9;
		if (!*ifn || strlen(ifn) >= sizeof(ic->hw_ifname)) {
			fprintf(stderr, "txscale recv: bad value for --rx-timestamps: '%s': expected hardware:IFACE with "
					"an interface name of 1-%zu characters\n", v, sizeof(ic->hw_ifname) - 1);
			return 2;
		}
		if (!if_nametoindex(ifn)) {
			fprintf(stderr, "txscale recv: bad value for --rx-timestamps: '%s': no interface '%s' here\n", v,
				ifn);
			return 2;
		}
		snprintf(ic->hw_ifname, sizeof(ic->hw_ifname), "%s", ifn);
	}
	return 0;
}

/* Most hardware stamps off our clock: the NIC's clock is not CLOCK_REALTIME. */
static void hw_skew_warning(const struct txs_rx_input_stats *is)
{
	uint64_t all = is->ts_hardware + is->ts_hw_skewed;
	if (!all || is->ts_hw_skewed * 2 <= all)
		return;
	char phc[32] = "";
	if (is->phc_index >= 0)
		snprintf(phc, sizeof(phc), " (/dev/ptp%d)", is->phc_index);
	fprintf(stderr, "txscale recv: warning: %llu of %llu hardware receive timestamps were off our clock (by %+.6f s) "
			"and not used: the NIC clock%s of %s is likely not synchronised to CLOCK_REALTIME (phc2sys; "
			"a PHC in PTP time, TAI, runs 37 s ahead)\n",
		(unsigned long long)is->ts_hw_skewed, (unsigned long long)all, is->hw_offset_ns / 1e9, phc,
		is->hw_ifname);
}

/* --dev udp or udp:ARGS: the kernel-socket input */
static bool udp_dev(const char *dev)
{
	return strcmp(dev, "udp") == 0 || strncmp(dev, "udp:", 4) == 0;
}

int cmd_recv(int argc, char **argv)
{
	if (ctl_recv_wants_server(argc, argv)) /* recv -s: the control channel (server.c) */
		return cmd_server(argc, argv);
	struct recv_cfg cfg = { 0 };
	const char *pos[1];
	int npos = 0;
	static const char *syn =
		"[-B ADDR] [-p PORT] [-4|-6] [-P N] [-A CPUS] [--dev udp[:gro=off]|packet:IFNAME[,IFNAME...]|xdp:IFNAME[,...]|pcap:FILE] "
		"[-t SECONDS] [--idle SECONDS] [--expect N | --sender-summary FILE] [-i SEC] [-J]";
	int rc = opt_parse("recv", syn, recv_opts, &cfg, argc, argv, pos, 0, &npos);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (cfg.v4 && cfg.v6) {
		fprintf(stderr, "txscale recv: -4 and -6 exclude each other\n");
		return 2;
	}
	enum txs_rx_payload payload = TXS_RX_PAYLOAD_TXSCALE;
	if (cfg.payload && strcmp(cfg.payload, "txscale") != 0) {
		if (strcmp(cfg.payload, "iperf3") == 0)
			payload = TXS_RX_PAYLOAD_IPERF3;
		else if (strcmp(cfg.payload, "iperf3-64") == 0)
			payload = TXS_RX_PAYLOAD_IPERF3_64;
		else {
			fprintf(stderr, "txscale recv: bad value for --payload: '%s': expected txscale, iperf3 or iperf3-64\n",
				cfg.payload);
			return 2;
		}
		if (cfg.verify || cfg.sender_summary) {
			fprintf(stderr, "txscale recv: %s: not with --payload %s (a txscale sender's; use --expect N)\n",
				cfg.verify ? "--verify checks txscale's fill pattern" : "--sender-summary counts txscale's flows",
				cfg.payload);
			return 2;
		}
	}
	if (cfg.expect && cfg.sender_summary) {
		fprintf(stderr, "txscale recv: --expect and --sender-summary exclude each other\n");
		return 2;
	}
	if (cfg.port_s) {
		/* the shapes' port range syntax, without a walk (a receiver takes every port) */
		uint16_t lo;
		struct txs_range r;
		char perr[96];
		if (strchr(cfg.port_s, ',') || txs_range_parse_port(cfg.port_s, &lo, &r, perr, sizeof(perr)) < 0) {
			fprintf(stderr, "txscale recv: bad value for -p/--port: '%s': expected a port 1..65535 or a range "
					"LO-HI\n", cfg.port_s);
			return 2;
		}
		if (r.span > TXS_RX_UDP_MAX_PORTS) {
			fprintf(stderr, "txscale recv: bad value for -p/--port: '%s': at most %u ports\n", cfg.port_s,
				TXS_RX_UDP_MAX_PORTS);
			return 2;
		}
		uint64_t hi = lo + r.span - 1;
		cfg.port = lo;
		cfg.port_hi = hi > lo ? (uint16_t)hi : 0;
	}
	unsigned long long need = cfg.port_hi ? (unsigned long long)(cfg.port_hi - cfg.port + 1) *
							(cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1) + 64
					      : 0,
			   lim;
	if (need && udp_dev(cfg.dev) && opt_nofile(need, &lim) < 0) {
		fprintf(stderr, "txscale recv: bad value for -p/--port: '%s': a socket per port and thread needs %llu "
				"open files, the limit is %llu (ulimit -n)\n", cfg.port_s, need, lim);
		return 2;
	}
	if (cfg.window & (cfg.window - 1)) {
		fprintf(stderr, "txscale recv: bad value for --window: '%u': expected a power of two\n", cfg.window);
		return 2;
	}
	struct txs_addr bind = { 0 };
	if (cfg.bind) {
		if (txs_addr_parse(&bind, cfg.bind) < 0) {
			fprintf(stderr, "txscale recv: bad value for -B/--bind: '%s': expected an IPv4 or IPv6 address\n",
				cfg.bind);
			return 2;
		}
		if ((cfg.v4 && bind.family != AF_INET) || (cfg.v6 && bind.family != AF_INET6)) {
			fprintf(stderr, "txscale recv: -B '%s' is not %s\n", cfg.bind, cfg.v4 ? "IPv4" : "IPv6");
			return 2;
		}
	}
	bool is_pcap = strncmp(cfg.dev, "pcap:", 5) == 0 || strcmp(cfg.dev, "pcap") == 0;
	int cpus[TXS_MAX_CORES];
	unsigned nthreads = cfg.threads ? cfg.threads : cfg.cpus.n ? cfg.cpus.n : 1;
	if (cfg.cpus.n && cfg.threads && cfg.threads > cfg.cpus.n) {
		fprintf(stderr, "txscale recv: -P %u needs at least %u CPUs in -A (got %u)\n", cfg.threads, cfg.threads,
			cfg.cpus.n);
		return 2;
	}
	if (is_pcap && nthreads != 1) {
		fprintf(stderr, "txscale recv: --dev pcap: is read by one thread: -P/-A give %u\n", nthreads);
		return 2;
	}
	if (cfg.outage_min > 3600) {
		fprintf(stderr, "txscale recv: bad value for --outage-min: '%g': expected at most 3600 seconds\n",
			cfg.outage_min);
		return 2;
	}
	if (!is_pcap) {
		if (!cfg.time.set)
			cfg.time.v = LIVE_DEFAULT_TIME;
		else if (cfg.time.v == 0 && cfg.idle == 0) {
			fprintf(stderr, "txscale recv: -t 0 (no time limit) needs --idle SEC to end the run\n");
			return 2;
		}
	}
	/* unpinned unless -A (pinning thread 0 to CPU 0 by default put
	 * recv on the sender's CPU on one host) */
	opt_assign_cpus(&cfg.cpus, cfg.no_pin || !cfg.cpus.n, nthreads, cpus);
	/* a bad --summary-file is refused before anything starts */
	FILE *summary_f = NULL;
	if (cfg.summary_file) {
		summary_f = fopen(cfg.summary_file, "we");
		if (!summary_f) {
			fprintf(stderr, "txscale recv: bad value for --summary-file: '%s': %s\n", cfg.summary_file,
				strerror(errno));
			return 2;
		}
	}
	struct txs_rx_expect *exp = calloc(1, sizeof(*exp));
	if (!exp) {
		if (summary_f)
			fclose(summary_f);
		return 1;
	}
	if (cfg.sender_summary && !is_pcap) {
		/* live: the sender writes it while or after we receive; a file
		 * already there is an earlier run's (load_summary refuses it) */
		clock_gettime(CLOCK_REALTIME, &g_summary_not_before);
	} else if (cfg.sender_summary) {
		/* offline: read now (the run can stop once all arrived), and
		 * again at the end */
		if (access(cfg.sender_summary, F_OK) == 0) {
			rc = load_summary(cfg.sender_summary, exp, false);
			if (rc) {
				free(exp);
				if (summary_f)
					fclose(summary_f);
				return rc;
			}
		}
	} else if (cfg.expect) {
		exp->have_total = true;
		exp->total = cfg.expect;
	}
	int family = cfg.v4 ? AF_INET : cfg.v6 ? AF_INET6 : 0;
	struct txs_rx_input_conf ic = {
		.n_queues = nthreads,
		.family = family,
		.have_bind = cfg.bind != NULL,
		.bind = bind,
		.port = cfg.port ? cfg.port : 5201,
		.port_hi = cfg.port_hi,
		.rcvbuf = cfg.rcvbuf ? (int)cfg.rcvbuf : (int)RCVBUF_DEFAULT,
		.reuseport = cfg.reuseport,
		.batch = cfg.batch,
	};
	rc = parse_rx_ts(cfg.rx_ts, &ic, udp_dev(cfg.dev));
	if (rc) {
		free(exp);
		if (summary_f)
			fclose(summary_f);
		return rc;
	}
	struct txs_rx_input *in;
	char err[320];
	rc = txs_rx_input_open(&in, cfg.dev, &ic, err, sizeof(err));
	if (rc < 0) {
		/* the udp input's refusals of hardware stamps name the option */
		static const char hw_err[] = "udp: hardware receive timestamps: ";
		if (ic.rx_ts == TXS_RX_TS_HARDWARE && strncmp(err, hw_err, sizeof(hw_err) - 1) == 0)
			fprintf(stderr, "txscale recv: --rx-timestamps %s: %s\n", cfg.rx_ts, err + sizeof(hw_err) - 1);
		else
			fprintf(stderr, "txscale recv: --dev %s\n", err);
		free(exp);
		if (summary_f)
			fclose(summary_f);
		return rc == -EINVAL || rc == -ENODEV || rc == -ENOENT || rc == -EOPNOTSUPP ? 2 : 1;
	}
	if (cfg.reuseport && !udp_dev(cfg.dev))
		fprintf(stderr, "txscale recv: note: --reuseport applies to --dev udp only\n");
	if (cfg.rcvbuf && !udp_dev(cfg.dev))
		fprintf(stderr, "txscale recv: note: --rcvbuf applies to --dev udp only\n");
	struct txs_rx_conf rc_conf = {
		.window = cfg.window,
		.max_flows = cfg.max_flows,
		.n_links = in->n_links,
		.verify_fill = cfg.verify,
		.payload = payload,
		.port = in->raw ? (is_pcap ? cfg.port : ic.port) : 0,
		.port_hi = in->raw ? cfg.port_hi : 0,
		.family = in->raw ? family : 0,
		.outage_min_ns = (uint64_t)(cfg.outage_min * 1e9),
		.clock_correct = cfg.clock_offset.set,
		.clock_offset_ns = cfg.clock_offset.ns,
	};
	if (in->raw && cfg.bind)
		rc_conf.dst = bind;
	struct mcli mc = { 0 };
	struct txs_metrics_rx *mx = NULL;
	struct txs_rx_snap **snaps = NULL;
	struct rthread *t = aligned_alloc(TXS_CACHE_LINE, sizeof(*t) * nthreads);
	struct txs_rx_core **cores = calloc(nthreads, sizeof(*cores));
	struct txs_rx_live *prev = calloc(nthreads, sizeof(*prev));
	int ret = 0;
	unsigned started = 0;
	if (!t || !cores || !prev) {
		fprintf(stderr, "txscale recv: out of memory\n");
		ret = 1;
		goto out;
	}
	memset(t, 0, sizeof(*t) * nthreads);
	for (unsigned i = 0; i < nthreads; i++) {
		rc = txs_rx_core_create(&cores[i], &rc_conf);
		if (rc < 0) {
			fprintf(stderr, "txscale recv: analysis state: %s\n", txs_strerror(rc));
			ret = 1;
			goto out;
		}
		t[i].in = in;
		t[i].core = cores[i];
		t[i].q = i;
		t[i].cpu = cpus[i];
	}
	rc = mcli_start(&mc, "recv", &cfg.metrics, cfg.interval);
	if (!rc && mcli_on(&mc)) {
		snaps = calloc(nthreads, sizeof(*snaps));
		for (unsigned i = 0; snaps && i < nthreads && !rc; i++) {
			rc = txs_rx_snap_create(&snaps[i], rc_conf.max_flows) < 0;
			t[i].snap = snaps[i];
		}
		struct txs_metrics_rx_conf mconf = { .cores = cores, .n_cores = nthreads, .cpus = cpus, .snaps = snaps,
						     .max_flows = cfg.metrics.flows, .kernel = !in->offline };
		if (!rc)
			rc = !snaps || txs_metrics_rx_create(&mx, &mconf) < 0 ? 1 : mcli_add(&mc, txs_metrics_rx_collect, mx);
	}
	if (rc) {
		ret = rc;
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct txs_rx_kstats *kb = calloc(1, sizeof(*kb)), *ka = calloc(1, sizeof(*ka)), *kd = calloc(1, sizeof(*kd));
	if (!kb || !ka || !kd) {
		free(kb);
		free(ka);
		free(kd);
		ret = 1;
		goto out;
	}
	txs_rx_kstats_read(kb, NULL);
	if (!cfg.json) {
		char a[64] = "*";
		if (cfg.bind)
			txs_addr_str(&bind, a, sizeof(a));
		if (udp_dev(cfg.dev) && ic.port_hi)
			printf("txscale recv: udp %s ports %u-%u, %u thread%s", a, ic.port, ic.port_hi, nthreads,
			       nthreads > 1 ? "s" : "");
		else if (udp_dev(cfg.dev))
			printf("txscale recv: udp %s port %u, %u thread%s", a, ic.port, nthreads, nthreads > 1 ? "s" : "");
		else
			printf("txscale recv: %s, %u thread%s", in->spec, nthreads, nthreads > 1 ? "s" : "");
		if (cfg.time.v > 0 && !is_pcap)
			printf(", up to %.1f s", cfg.time.v);
		if (cfg.idle > 0)
			printf(", ends after %.1f s idle", cfg.idle);
		if (exp->have_total)
			printf(", expecting %llu packets", (unsigned long long)exp->total);
		printf("\n");
		fflush(stdout);
	}
	uint64_t t0 = mono_ns();
	for (; started < nthreads; started++) {
		int e = pthread_create(&t[started].th, NULL, rthread_main, &t[started]);
		if (e) {
			fprintf(stderr, "txscale recv: cannot start thread: %s\n", strerror(e));
			__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
			ret = 1;
			break;
		}
		t[started].started = true;
	}
	if (cfg.ready_fd && ret == 0) {
		/* the input is open and bound: a sender may start now */
		if (write((int)cfg.ready_fd, "ready\n", 6) != 6)
			fprintf(stderr, "txscale recv: --ready-fd %u: %s\n", cfg.ready_fd, strerror(errno));
		close((int)cfg.ready_fd);
	}
	double last_iv = 0;
	bool header = false;
	uint64_t last_try = 0;
	while (!stopping()) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		uint64_t now = mono_ns();
		double el = (double)(now - t0) / 1e9;
		unsigned done = 0;
		uint64_t last = 0, uniq = 0;
		for (unsigned i = 0; i < started; i++) {
			done += __atomic_load_n(&t[i].done, __ATOMIC_ACQUIRE) ? 1 : 0;
			uint64_t l = __atomic_load_n(&t[i].last_ns, __ATOMIC_RELAXED);
			if (l > last)
				last = l;
			struct txs_rx_live lv;
			txs_rx_core_live(cores[i], &lv);
			/* relaxed reads of counters the thread bumps one after
			 * the other: a duplicate may be seen before its received,
			 * so clamp (a wrap here would end the run at once) */
			uint64_t dl = lv.duplicates + lv.late;
			uniq += lv.received > dl ? lv.received - dl : 0;
		}
		if (mx)
			txs_metrics_rx_tick(mx, el);
		mcli_tick(&mc, el);
		if (cfg.interval > 0 && el - last_iv >= cfg.interval) {
			interval(&cfg, t, started, prev, last_iv, el, &header);
			last_iv = el;
		}
		if (done == started)
			break;
		if (cfg.time.v > 0 && el >= cfg.time.v)
			break;
		if (cfg.idle > 0) {
			uint64_t ref = last ? last : cfg.time.v == 0 ? t0 : 0;
			if (ref && now > ref && (double)(now - ref) / 1e9 >= cfg.idle) {
				/* idle, but the sender has not written its summary yet
				 * (a loaded host: it may still be sending, or finishing):
				 * wait for it, at most SUMMARY_WAIT_S beyond the idle
				 * point (-t bounds it too), trying every 100 ms */
				if (!cfg.sender_summary || exp->have_total ||
				    (double)(now - ref) / 1e9 >= cfg.idle + SUMMARY_WAIT_S)
					break;
				if (now - last_try >= 100000000ull) {
					last_try = now;
					if (load_summary(cfg.sender_summary, exp, true) == 0 && exp->have_total)
						break;
				}
			}
		}
		if (exp->have_total && uniq >= exp->total)
			break;
	}
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	bool link_failed = false;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(t[i].th, NULL);
		if (t[i].error == -ENETDOWN || t[i].error == -ENODEV)
			link_failed = true;
		else if (t[i].error < 0) {
			fprintf(stderr, "txscale recv: queue %u: %s\n", i, txs_strerror(t[i].error));
			ret = 1;
		}
	}
	/* an interface that went down or away fails the run, named */
	if (!in->offline) {
		char cerr[160];
		int crc = txs_rx_input_check(in, cerr, sizeof(cerr));
		if (crc < 0 || link_failed) {
			fprintf(stderr, "txscale recv: --dev %s: %s\n", in->spec,
				crc < 0 ? cerr : "an interface went down during the run (Network is down)");
			ret = 1;
		}
	}
	uint64_t t_end = mono_ns();
	double secs = (double)(t_end - t0) / 1e9;
	if (cfg.interval > 0 && secs - last_iv > 0.05)
		interval(&cfg, t, started, prev, last_iv, secs, &header);
	txs_rx_kstats_read(ka, NULL);
	txs_rx_kstats_delta(kd, kb, ka);
	struct txs_rx_input_stats is;
	txs_rx_input_stats(in, &is);
	hw_skew_warning(&is);
	if (cfg.sender_summary && load_summary(cfg.sender_summary, exp, false) != 0) {
		fprintf(stderr, "txscale recv: no exact loss: the sender summary could not be read\n");
		memset(exp, 0, sizeof(*exp));
		ret = 1;
	}

	struct txs_rx_result *res;
	rc = txs_rx_result_build(&res, cores, nthreads, exp->have_total ? exp : NULL);
	if (rc == 0 && cfg.clock_offset.set) {
		/* measured over the control channel: its bound and drift came with the sender's summary */
		const struct txs_ctl_clock_rep *k = &g_summary_clock;
		txs_rx_result_set_clock(res, cfg.clock_offset.ns, k->on ? k->error_ns : 0, k->on && k->have_drift,
					k->drift_ns, k->on ? "control" : "option");
	}
	if (rc < 0) {
		fprintf(stderr, "txscale recv: %s\n", txs_strerror(rc));
		ret = 1;
	} else {
		uint64_t first = 0, last = 0;
		for (unsigned i = 0; i < started; i++) {
			if (t[i].first_ns && (!first || t[i].first_ns < first))
				first = t[i].first_ns;
			if (t[i].last_ns > last)
				last = t[i].last_ns;
		}
		struct summary s = {
			.cfg = &cfg, .in = in, .r = res, .t = t, .n = nthreads, .seconds = secs,
			.active = last > first ? (double)(last - first) / 1e9 : 0, .kd = kd, .is = &is,
		};
		if (in->offline)
			s.active = secs;
		for (unsigned l = 0; l < in->n_links && l < TXS_MAX_LINKS; l++)
			s.link_names[l] = in->link_names[l];
		if (in->raw && !in->offline) {
			s.n_if = in->n_links;
			for (unsigned l = 0; l < in->n_links; l++)
				s.if_names[l] = in->link_names[l];
		}
		if (cfg.json)
			summary_json(stdout, &s);
		else
			summary_text(&s);
		if (summary_f) {
			summary_json(summary_f, &s);
			if (fclose(summary_f) != 0) {
				fprintf(stderr, "txscale recv: cannot write --summary-file '%s': %s\n", cfg.summary_file,
					strerror(errno));
				ret = 1;
			}
			summary_f = NULL;
		}
		if (mx && txs_metrics_rx_finish(mx, res, in->offline ? NULL : kd, &is, secs) < 0)
			fprintf(stderr, "txscale recv: metrics: out of memory\n");
		txs_rx_result_free(res);
	}
	free(kb);
	free(ka);
	free(kd);
	if (mcli_end(&mc))
		ret = 1;
out:
	mcli_close(&mc);
	txs_metrics_rx_destroy(mx);
	for (unsigned i = 0; snaps && i < nthreads; i++)
		txs_rx_snap_destroy(snaps[i]);
	free(snaps);
	if (summary_f)
		fclose(summary_f);
	for (unsigned i = 0; cores && i < nthreads; i++)
		txs_rx_core_destroy(cores[i]);
	free(cores);
	free(t);
	free(prev);
	free(exp);
	txs_rx_input_close(in);
	return ret;
}
