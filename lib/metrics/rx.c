/* SPDX-License-Identifier: MIT */
/* The receive collector: a recv run (or one receiving session of a server)
 * as Prometheus families. Live, it reads the cores' live counters (relaxed
 * loads) and the kernel's counters; at finish it copies the merged result,
 * so the last scrapes give the JSON summary's numbers. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/metrics.h>
#include "common/counters.h"
#include "metrics_priv.h"

/* a scrape waits this long for the owners' copies; one this young is taken */
#define SNAP_WAIT_MS 200
#define SNAP_FRESH_MS 50

struct flow_row {
	uint64_t received, bytes, unique, duplicates, reordered, late, lost, expected;
	bool have_expected;
};

/* A flow that has its own series: chosen first come, first served, kept
 * for the collector's life, so that a series never moves to "other". */
struct flow_key {
	bool by_id;
	uint32_t id;
	struct txs_rx_tuple tuple;
	char label[112];
};

struct txs_metrics_rx {
	pthread_mutex_t lock;
	struct txs_metrics_rx_conf conf;
	struct txs_rx_kstats *kbase; /* kernel counters at create */
	struct txs_rx_kstats *kcur;  /* scratch of a scrape */
	struct txs_rx_kstats *kd;
	struct rate_tick rate;
	double elapsed;
	struct flow_key *keys;       /* max_flows */
	unsigned n_keys;
	struct flow_row *rows;       /* max_flows + 1 (the last: "other"): a scrape's, or the final ones */
	bool other;                  /* rows[max_flows] holds flows */
	struct txs_hist *lat;        /* a scrape's merged copies, or the result's */
	uint64_t lat_negative, lat_past;
	unsigned n_flows_all;
	/* finished: */
	bool finished;
	struct txs_rx_result fin;    /* totals only (pointers cleared) */
	bool have_kd, have_socket_drops;
	uint64_t socket_drops;
};

TXS_API int txs_metrics_rx_create(struct txs_metrics_rx **out, const struct txs_metrics_rx_conf *conf)
{
	*out = NULL;
	if (!conf || !conf->cores || !conf->n_cores || conf->max_flows > TXS_METRICS_FLOWS_MAX)
		return -EINVAL;
	struct txs_metrics_rx *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->conf = *conf;
	if (!x->conf.max_flows)
		x->conf.max_flows = TXS_METRICS_FLOWS_DEFAULT;
	pthread_mutex_init(&x->lock, NULL);
	x->keys = calloc(x->conf.max_flows, sizeof(*x->keys));
	x->rows = calloc(x->conf.max_flows + 1, sizeof(*x->rows));
	x->lat = malloc(sizeof(*x->lat));
	if (!x->keys || !x->rows || !x->lat) {
		txs_metrics_rx_destroy(x);
		return -ENOMEM;
	}
	if (conf->kernel) {
		x->kbase = calloc(1, sizeof(*x->kbase));
		x->kcur = calloc(1, sizeof(*x->kcur));
		x->kd = calloc(1, sizeof(*x->kd));
		if (!x->kbase || !x->kcur || !x->kd) {
			txs_metrics_rx_destroy(x);
			return -ENOMEM;
		}
		txs_rx_kstats_read(x->kbase, conf->proc_root);
	}
	*out = x;
	return 0;
}

TXS_API void txs_metrics_rx_destroy(struct txs_metrics_rx *x)
{
	if (!x)
		return;
	free(x->kbase);
	free(x->kcur);
	free(x->kd);
	free(x->lat);
	free(x->rows);
	free(x->keys);
	pthread_mutex_destroy(&x->lock);
	free(x);
}

static void live_sum(const struct txs_metrics_rx *x, struct txs_rx_live *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < x->conf.n_cores; i++) {
		struct txs_rx_live l;
		txs_rx_core_live(x->conf.cores[i], &l);
		TXS_COUNTERS(add, s, &l);
	}
}

TXS_API void txs_metrics_rx_tick(struct txs_metrics_rx *x, double elapsed)
{
	struct txs_rx_live s;
	live_sum(x, &s);
	pthread_mutex_lock(&x->lock);
	x->elapsed = elapsed;
	if (!x->finished)
		txs_metrics_rate_tick(&x->rate, elapsed, s.received, s.bytes);
	pthread_mutex_unlock(&x->lock);
}

static void flow_label(char *o, size_t n, bool by_id, uint32_t id, const struct txs_rx_tuple *t)
{
	if (by_id) {
		snprintf(o, n, "%u", id);
		return;
	}
	char a[64], b[64];
	txs_addr_str(&t->src, a, sizeof(a));
	txs_addr_str(&t->dst, b, sizeof(b));
	bool v6 = t->src.family == AF_INET6;
	snprintf(o, n, v6 ? "[%s]:%u->[%s]:%u" : "%s:%u->%s:%u", a, t->sport, b, t->dport);
}

static bool tuple_eq(const struct txs_rx_tuple *a, const struct txs_rx_tuple *b)
{
	size_t al = a->src.family == AF_INET6 ? 16 : 4;
	return a->src.family == b->src.family && a->dst.family == b->dst.family && a->sport == b->sport &&
	       a->dport == b->dport && memcmp(a->src.bytes, b->src.bytes, al) == 0 &&
	       memcmp(a->dst.bytes, b->dst.bytes, al) == 0;
}

/* The row of a flow: its own (chosen now if there is room) or "other". */
static struct flow_row *row_of(struct txs_metrics_rx *x, bool by_id, uint32_t id, const struct txs_rx_tuple *t)
{
	for (unsigned i = 0; i < x->n_keys; i++) {
		const struct flow_key *k = &x->keys[i];
		if (k->by_id == by_id && (by_id ? k->id == id : tuple_eq(&k->tuple, t)))
			return &x->rows[i];
	}
	if (x->n_keys < x->conf.max_flows) {
		struct flow_key *k = &x->keys[x->n_keys];
		k->by_id = by_id;
		k->id = id;
		k->tuple = *t;
		flow_label(k->label, sizeof(k->label), by_id, id, t);
		return &x->rows[x->n_keys++];
	}
	x->other = true;
	return &x->rows[x->conf.max_flows];
}

static void row_add(struct flow_row *r, const struct flow_row *v)
{
	r->received += v->received;
	r->bytes += v->bytes;
	r->unique += v->unique;
	r->duplicates += v->duplicates;
	r->reordered += v->reordered;
	r->late += v->late;
	r->lost += v->lost;
	r->expected += v->expected;
	r->have_expected |= v->have_expected;
}

static void rows_clear(struct txs_metrics_rx *x)
{
	memset(x->rows, 0, (x->conf.max_flows + 1) * sizeof(*x->rows));
	x->other = false;
}

/* live: the owners' copies of their flows (asked for by the scrape before
 * it took x->lock), merged (under x->lock) */
static void rows_live(struct txs_metrics_rx *x)
{
	rows_clear(x);
	txs_hist_init(x->lat);
	x->lat_negative = x->lat_past = 0;
	x->n_flows_all = 0;
	for (unsigned c = 0; c < x->conf.n_cores; c++) {
		struct txs_rx_snap *s = x->conf.snaps[c];
		txs_rx_snap_lock(s);
		for (unsigned i = 0; i < s->n_flows; i++) {
			const struct txs_rx_snap_flow *f = &s->flows[i];
			row_add(row_of(x, f->by_id, f->id, &f->tuple),
				&(struct flow_row){ f->received, f->bytes, f->unique, f->duplicates, f->reordered, f->late,
						    f->span > f->unique ? f->span - f->unique : 0, 0, false });
		}
		x->n_flows_all += s->n_flows;
		txs_hist_merge(x->lat, &s->lat);
		x->lat_negative += s->lat_negative;
		x->lat_past += s->lat_past;
		txs_rx_snap_unlock(s);
	}
}

TXS_API int txs_metrics_rx_finish(struct txs_metrics_rx *x, const struct txs_rx_result *r,
				  const struct txs_rx_kstats *kd, const struct txs_rx_input_stats *is,
				  double seconds)
{
	pthread_mutex_lock(&x->lock);
	rows_clear(x);
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		row_add(row_of(x, f->by_id, f->id, &f->tuple),
			&(struct flow_row){ f->received, f->bytes, f->unique, f->duplicates, f->reordered, f->late,
					    f->lost, f->expected, f->have_expected });
	}
	*x->lat = r->lat;
	x->lat_negative = r->lat_negative;
	x->lat_past = r->lat_past;
	x->n_flows_all = r->n_flows;
	x->fin = *r;
	x->fin.pairs = NULL;
	x->fin.flows = NULL;
	x->fin.sizes = NULL;
	x->fin.vlans = NULL;
	x->have_kd = kd && x->kd;
	if (x->have_kd)
		*x->kd = *kd;
	x->have_socket_drops = is && is->have_socket_drops;
	x->socket_drops = is ? is->socket_drops : 0;
	x->elapsed = seconds;
	x->finished = true;
	pthread_mutex_unlock(&x->lock);
	return 0;
}

/* latency buckets, seconds: 1-2-5 from 1 us to 10 s */
static const double lat_le[] = {
	1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3,
	1e-2, 2e-2, 5e-2, 1e-1, 2e-1, 5e-1, 1.0,  2.0,  5.0,  10.0,
};

/* per flow and latency, from rows and lat (under x->lock) */
static void flow_families(struct txs_prom *p, struct txs_metrics_rx *x)
{
	txs_prom_family(p, "txscale_recv_flows", TXS_PROM_GAUGE,
			"Flows seen (live: summed over threads); those beyond the per-flow series limit are summed "
			"as flow=\"other\".");
	txs_prom_u64(p, "txscale_recv_flows", NULL, 0, x->n_flows_all);
	static const char *const fl_names[][2] = {
		{ "txscale_recv_flow_datagrams_total", "Datagrams of this flow." },
		{ "txscale_recv_flow_bytes_total", "UDP payload bytes of this flow." },
		{ "txscale_recv_flow_unique_total", "Unique sequence numbers of this flow." },
		{ "txscale_recv_flow_duplicates_total", "Duplicates of this flow." },
		{ "txscale_recv_flow_reordered_total", "Reordered arrivals of this flow." },
		{ "txscale_recv_flow_late_total", "Late arrivals of this flow." },
		{ "txscale_recv_flow_lost", "Datagrams lost on this flow: live, holes not filled yet; after the run, "
					    "exact against the sender's count when known." },
	};
	for (size_t k = 0; k < TXS_ARRAY_SIZE(fl_names); k++)
		txs_prom_family(p, fl_names[k][0], k + 1 < TXS_ARRAY_SIZE(fl_names) ? TXS_PROM_COUNTER : TXS_PROM_GAUGE,
				fl_names[k][1]);
	bool any_exp = false;
	for (unsigned i = 0; i <= x->n_keys; i++) {
		if (i == x->n_keys && !x->other)
			break;
		const struct flow_row *f = &x->rows[i == x->n_keys ? x->conf.max_flows : i];
		const char *label = i == x->n_keys ? "other" : x->keys[i].label;
		const uint64_t v[] = { f->received, f->bytes, f->unique, f->duplicates, f->reordered, f->late, f->lost };
		for (size_t k = 0; k < TXS_ARRAY_SIZE(fl_names); k++)
			txs_prom_u64(p, fl_names[k][0], (struct txs_prom_label[]){ { "flow", label } }, 1, v[k]);
		any_exp |= f->have_expected;
	}
	if (any_exp) {
		txs_prom_family(p, "txscale_recv_flow_expected", TXS_PROM_GAUGE,
				"Datagrams the sender sent on this flow (after the run, when known).");
		for (unsigned i = 0; i <= x->n_keys; i++) {
			if (i == x->n_keys && !x->other)
				break;
			const struct flow_row *f = &x->rows[i == x->n_keys ? x->conf.max_flows : i];
			if (f->have_expected)
				txs_prom_u64(p, "txscale_recv_flow_expected",
					     (struct txs_prom_label[]){ { "flow", i == x->n_keys ? "other" : x->keys[i].label } },
					     1, f->expected);
		}
	}
	txs_prom_family(p, "txscale_recv_latency_seconds", TXS_PROM_HISTOGRAM,
			"One-way latency (arrival time minus the sender's timestamp); clock-skewed samples are "
			"counted in txscale_recv_latency_skewed_total instead.");
	txs_prom_hist_log(p, "txscale_recv_latency_seconds", NULL, 0, x->lat, 1e-9, lat_le, TXS_ARRAY_SIZE(lat_le));
	txs_prom_family(p, "txscale_recv_latency_skewed_total", TXS_PROM_COUNTER,
			"Latency samples left out: the timestamp was after the arrival (negative) or too far "
			"before it (past).");
	txs_prom_u64(p, "txscale_recv_latency_skewed_total", (struct txs_prom_label[]){ { "why", "negative" } }, 1,
		     x->lat_negative);
	txs_prom_u64(p, "txscale_recv_latency_skewed_total", (struct txs_prom_label[]){ { "why", "past" } }, 1,
		     x->lat_past);
}


#define L1(k, v) (struct txs_prom_label[]){ { k, v } }, 1
#define L2(k1, v1, k2, v2) (struct txs_prom_label[]){ { k1, v1 }, { k2, v2 } }, 2

static void kernel_families(struct txs_prom *p, const struct txs_rx_kstats *d)
{
	txs_prom_family(p, "txscale_recv_kernel_udp_total", TXS_PROM_COUNTER,
			"The kernel's UDP counters (/proc/net/snmp, snmp6) since the run started, host-wide in "
			"recv's network namespace; RcvbufErrors: datagrams dropped at a full socket buffer.");
	for (int v6 = 0; v6 < 2; v6++) {
		if (!(v6 ? d->have_udp6 : d->have_udp))
			continue;
		for (unsigned k = 0; k < TXS_KS_UDP__COUNT; k++)
			txs_prom_u64(p, "txscale_recv_kernel_udp_total",
				     L2("proto", v6 ? "udp6" : "udp", "counter", txs_rx_ks_udp_str(k)),
				     v6 ? d->udp6[k] : d->udp[k]);
	}
	if (d->have_softnet) {
		txs_prom_family(p, "txscale_recv_kernel_softnet_total", TXS_PROM_COUNTER,
				"The kernel's per-CPU backlog counters (/proc/net/softnet_stat), summed over CPUs, since "
				"the run started: dropped (backlog full), time_squeeze (budget ran out).");
		txs_prom_u64(p, "txscale_recv_kernel_softnet_total", L1("counter", "dropped"), d->softnet_dropped);
		txs_prom_u64(p, "txscale_recv_kernel_softnet_total", L1("counter", "time_squeeze"), d->softnet_squeezed);
	}
	if (d->n_if) {
		txs_prom_family(p, "txscale_recv_kernel_interface_total", TXS_PROM_COUNTER,
				"Interface receive counters (/proc/net/dev) since the run started: rx_packets, "
				"rx_dropped, rx_errors, rx_fifo.");
		for (unsigned i = 0; i < d->n_if && i < TXS_KS_MAX_IF; i++) {
			const char *n = d->ifs[i].name;
			txs_prom_u64(p, "txscale_recv_kernel_interface_total", L2("interface", n, "counter", "rx_packets"),
				     d->ifs[i].rx_packets);
			txs_prom_u64(p, "txscale_recv_kernel_interface_total", L2("interface", n, "counter", "rx_dropped"),
				     d->ifs[i].rx_drop);
			txs_prom_u64(p, "txscale_recv_kernel_interface_total", L2("interface", n, "counter", "rx_errors"),
				     d->ifs[i].rx_errs);
			txs_prom_u64(p, "txscale_recv_kernel_interface_total", L2("interface", n, "counter", "rx_fifo"),
				     d->ifs[i].rx_fifo);
		}
	}
}

struct totals {
	uint64_t received, bytes, unique, duplicates, reordered, late, malformed, ignored, lost;
};

static void total_families(struct txs_prom *p, const struct totals *t)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} c[] = {
		{ "txscale_recv_datagrams_total", "Datagrams counted (unique + duplicates + late + unsequenced + "
						  "beyond the flow limit).", offsetof(struct totals, received) },
		{ "txscale_recv_bytes_total", "UDP payload bytes of the datagrams counted.", offsetof(struct totals, bytes) },
		{ "txscale_recv_unique_total", "First arrivals of a sequence number.", offsetof(struct totals, unique) },
		{ "txscale_recv_duplicates_total", "Sequence numbers that arrived again inside the window.",
		  offsetof(struct totals, duplicates) },
		{ "txscale_recv_reordered_total", "Arrivals below the next expected sequence (RFC 4737).",
		  offsetof(struct totals, reordered) },
		{ "txscale_recv_late_total", "Arrivals older than the duplicate window.", offsetof(struct totals, late) },
		{ "txscale_recv_malformed_total", "Malformed datagrams (every kind).", offsetof(struct totals, malformed) },
		{ "txscale_recv_ignored_total", "Not ours: not IP, not UDP, fragments, filtered.",
		  offsetof(struct totals, ignored) },
	};
	for (size_t i = 0; i < TXS_ARRAY_SIZE(c); i++) {
		txs_prom_family(p, c[i].name, TXS_PROM_COUNTER, c[i].help);
		txs_prom_u64(p, c[i].name, NULL, 0, *(const uint64_t *)((const char *)t + c[i].off));
	}
	txs_prom_family(p, "txscale_recv_lost", TXS_PROM_GAUGE,
			"Datagrams lost: live, holes not (yet) filled by reordered arrivals (it can go down); after "
			"the run, exact against the sender's count when it is known.");
	txs_prom_u64(p, "txscale_recv_lost", NULL, 0, t->lost);
}

TXS_API void txs_metrics_rx_collect(struct txs_prom *p, void *arg)
{
	struct txs_metrics_rx *x = arg;
	/* ask the owners for copies without holding x->lock: the controlling
	 * thread's tick never waits on a receiving thread's poll */
	pthread_mutex_lock(&x->lock);
	bool live = !x->finished && x->conf.snaps;
	pthread_mutex_unlock(&x->lock);
	for (unsigned c = 0; live && c < x->conf.n_cores; c++) /* ask them all, then wait for each */
		txs_rx_snap_request(x->conf.snaps[c], 0, SNAP_FRESH_MS);
	for (unsigned c = 0; live && c < x->conf.n_cores; c++)
		txs_rx_snap_request(x->conf.snaps[c], SNAP_WAIT_MS, SNAP_FRESH_MS);
	pthread_mutex_lock(&x->lock);
	txs_metrics_state_family(p, "recv", x->finished ? TXS_METRICS_FINISHED : TXS_METRICS_RUNNING, x->elapsed);
	/* per thread: the cores' live counters (exact once they stopped) */
	static const char *const th_names[][2] = {
		{ "txscale_recv_thread_datagrams_total", "Datagrams counted by this receiving thread." },
		{ "txscale_recv_thread_bytes_total", "UDP payload bytes counted by this receiving thread." },
		{ "txscale_recv_thread_duplicates_total", "Duplicates counted by this thread." },
		{ "txscale_recv_thread_reordered_total", "Reordered arrivals counted by this thread." },
		{ "txscale_recv_thread_late_total", "Late arrivals counted by this thread." },
		{ "txscale_recv_thread_malformed_total", "Malformed datagrams counted by this thread." },
	};
	for (size_t k = 0; k < TXS_ARRAY_SIZE(th_names); k++)
		txs_prom_family(p, th_names[k][0], TXS_PROM_COUNTER, th_names[k][1]);
	struct totals t = { 0 };
	for (unsigned i = 0; i < x->conf.n_cores; i++) {
		struct txs_rx_live l;
		txs_rx_core_live(x->conf.cores[i], &l);
		char id[16], cpu[16];
		snprintf(id, sizeof(id), "%u", i);
		snprintf(cpu, sizeof(cpu), "%d", x->conf.cpus ? x->conf.cpus[i] : -1);
		const struct txs_prom_label tl[] = { { "thread", id }, { "cpu", cpu } };
		const uint64_t v[] = { l.received, l.bytes, l.duplicates, l.reordered, l.late, l.malformed };
		for (size_t k = 0; k < TXS_ARRAY_SIZE(th_names); k++)
			txs_prom_u64(p, th_names[k][0], tl, 2, v[k]);
		t.received += l.received;
		t.bytes += l.bytes;
		t.unique += l.unique;
		t.duplicates += l.duplicates;
		t.reordered += l.reordered;
		t.late += l.late;
		t.malformed += l.malformed;
		t.ignored += l.ignored;
		/* provisional: relaxed reads of counters bumped one after the other */
		t.lost += l.gaps > l.reordered ? l.gaps - l.reordered : 0;
	}
	if (x->finished) {
		const struct txs_rx_result *r = &x->fin;
		t = (struct totals){ r->received, r->bytes, r->unique, r->duplicates, r->reordered, r->late,
				     r->malformed, r->ignored, r->lost };
	}
	total_families(p, &t);
	txs_metrics_rate_families(p, "recv", &x->rate, x->finished);
	if (x->finished) {
		const struct txs_rx_result *r = &x->fin;
		if (r->have_expected) {
			txs_prom_family(p, "txscale_recv_expected", TXS_PROM_GAUGE,
					"Datagrams the sender says it sent (after the run, when known).");
			txs_prom_u64(p, "txscale_recv_expected", NULL, 0, r->expected);
		}
		if (r->n_links > 1) {
			txs_prom_family(p, "txscale_recv_link_datagrams_total", TXS_PROM_COUNTER,
					"Analysed datagrams per link (interface of a raw input).");
			for (unsigned l = 0; l < r->n_links && l < TXS_MAX_LINKS; l++) {
				char id[16];
				snprintf(id, sizeof(id), "%u", l);
				txs_prom_u64(p, "txscale_recv_link_datagrams_total", L1("link", id), r->links[l].packets);
			}
		}
		if (x->have_socket_drops) {
			txs_prom_family(p, "txscale_recv_socket_drops_total", TXS_PROM_COUNTER,
					"Datagrams the kernel dropped at recv's own sockets or rings (SO_MEMINFO drops, "
					"PACKET_STATISTICS tp_drops), after the run.");
			txs_prom_u64(p, "txscale_recv_socket_drops_total", NULL, 0, x->socket_drops);
		}
		if (x->have_kd)
			kernel_families(p, x->kd);
	} else if (x->conf.kernel) {
		txs_rx_kstats_read(x->kcur, x->conf.proc_root);
		txs_rx_kstats_delta(x->kd, x->kbase, x->kcur);
		kernel_families(p, x->kd);
	}
	if (!x->finished && x->conf.snaps)
		rows_live(x);
	if (x->finished || x->conf.snaps)
		flow_families(p, x);
	pthread_mutex_unlock(&x->lock);
}
