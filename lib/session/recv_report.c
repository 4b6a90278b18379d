/* SPDX-License-Identifier: MIT */
/* The receive session's writers: interval lines and the summary, JSON
 * (docs/json-schema.md) and text. */
#include <math.h>
#include <stdio.h>
#include <txscale/stats.h>
#include "recv_priv.h"

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

static void iv_text_row(FILE *f, const char *id, double t0, double t1, const struct txs_rx_live *l)
{
	char pps[32], bps[32];
	double dt = t1 - t0 > 0 ? t1 - t0 : 1e-9;
	fprintf(f, "[%4s] %7.2f-%-7.2f sec %12llu pkts %9s pps %9sbit/s %8lld %6llu %8llu %9llu %4lld %9.3f\n", id, t0, t1,
	       (unsigned long long)l->received, txs_fmt_si(l->received / dt, pps, sizeof(pps)),
	       txs_fmt_si(l->bytes * 8.0 / dt, bps, sizeof(bps)), (long long)live_lost(l),
	       (unsigned long long)l->duplicates, (unsigned long long)l->reordered,
	       (unsigned long long)l->malformed, (long long)l->outages, (double)(int64_t)l->outage_ns / 1e6);
}

static int64_t sock_drops(const struct txs_recv_result *s)
{
	return s->is.have_socket_drops ? (int64_t)s->is.socket_drops : -1;
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

static void xdp_text(FILE *f, const struct txs_rx_input_stats *is)
{
	fprintf(f, "xdp      %s XDP, %s, %u socket%s (interface: %u RX queue%s); rx_dropped %llu, rx_ring_full %llu, "
	       "fill ring empty %llu, invalid %llu\n", is->xdp_mode, is->xdp_zerocopy ? "zero-copy" : "copy mode",
	       is->xdp_queues, is->xdp_queues == 1 ? "" : "s", is->xdp_if_queues, is->xdp_if_queues == 1 ? "" : "s",
	       (unsigned long long)is->xdp_rx_dropped, (unsigned long long)is->xdp_rx_ring_full,
	       (unsigned long long)is->xdp_fill_empty, (unsigned long long)is->xdp_rx_invalid);
	if (is->xdp_no_socket)
		fprintf(f, "MISSED   %llu datagrams for us arrived on a queue without our socket and went to the stack "
		       "(-P as many threads as the interface has RX queues)\n", (unsigned long long)is->xdp_no_socket);
}

TXS_API void txs_recv_result_json(struct txs_json *jp, const struct txs_recv_result *s)
{
	txs_json_str(jp, "device", s->in->spec);
	txs_json_dbl(jp, "seconds", s->seconds);
	txs_json_dbl(jp, "active_seconds", s->active);
	txs_json_dbl(jp, "pps", s->active > 0 ? s->rx->received / s->active : 0);
	txs_json_dbl(jp, "bps", s->active > 0 ? s->rx->bytes * 8.0 / s->active : 0);
	txs_rx_result_json(jp, s->rx, s->link_names);
	if (s->in->offline) {
		txs_json_obj_open(jp, "kernel_drops"); /* a file: nothing the kernel dropped */
		txs_json_obj_close(jp);
	} else {
		txs_rx_kstats_json(jp, "kernel_drops", &s->kd, s->n_if ? s->if_names : NULL, s->n_if, sock_drops(s));
	}
	txs_json_obj_open(jp, "input");
	txs_json_u64(jp, "socket_drops", s->is.socket_drops);
	txs_json_bool(jp, "socket_drops_known", s->is.have_socket_drops);
	txs_json_u64(jp, "ring_packets", s->is.ring_packets);
	txs_json_u64(jp, "csum_completed", s->is.csum_completed);
	if (s->is.rcvbuf >= 0)
		txs_json_i64(jp, "rcvbuf", s->is.rcvbuf);
	else
		txs_json_dbl(jp, "rcvbuf", NAN);
	txs_json_bool(jp, "rcvbuf_forced", s->is.rcvbuf_forced);
	if (!s->in->raw && !s->in->offline) {
		txs_json_obj_open(jp, "gro");
		txs_json_bool(jp, "on", s->is.gro);
		txs_json_u64(jp, "messages", s->is.gro_msgs);
		txs_json_u64(jp, "datagrams", s->is.gro_dgrams);
		txs_json_obj_close(jp);
		txs_json_str(jp, "rx_timestamps", ts_mode_str(s->in->conf.rx_ts));
		txs_json_u64(jp, "ts_kernel", s->is.ts_kernel);
		txs_json_u64(jp, "ts_user", s->is.ts_user);
		txs_json_u64(jp, "ts_hardware", s->is.ts_hardware);
		if (s->in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
			txs_json_str(jp, "hw_interface", s->is.hw_ifname);
			txs_json_i64(jp, "phc_index", s->is.phc_index);
			txs_json_bool(jp, "hw_filter_set", s->is.hw_filter_set);
			txs_json_bool(jp, "hw_filter_left_on", s->is.hw_filter_left);
			txs_json_u64(jp, "ts_hw_skewed", s->is.ts_hw_skewed);
			txs_json_i64(jp, "hw_offset_ns", s->is.hw_offset_ns);
		}
	}
	if (s->is.have_xdp)
		xdp_json(jp, &s->is);
	txs_json_obj_open(jp, "pcap");
	txs_json_u64(jp, "records", s->is.pcap.records);
	txs_json_u64(jp, "snapped", s->is.pcap.snapped);
	txs_json_u64(jp, "bad_len", s->is.pcap.bad_len);
	txs_json_u64(jp, "truncated", s->is.pcap.truncated);
	txs_json_u64(jp, "bad_l2", s->is.pcap.bad_l2);
	txs_json_obj_close(jp);
	txs_json_obj_close(jp);
	txs_json_arr_open(jp, "threads");
	for (unsigned i = 0; i < s->n_threads; i++) {
		const struct txs_rx_live *l = &s->thread[i].live;
		txs_json_obj_open(jp, NULL);
		txs_json_u64(jp, "id", i);
		txs_json_i64(jp, "cpu", s->thread[i].cpu);
		txs_json_u64(jp, "received", l->received);
		txs_json_u64(jp, "bytes", l->bytes);
		txs_json_u64(jp, "malformed", l->malformed);
		txs_json_u64(jp, "ignored", l->ignored);
		txs_json_obj_close(jp);
	}
	txs_json_arr_close(jp);
}

TXS_API void txs_recv_summary(FILE *f, bool json, const struct txs_recv_result *s)
{
	if (!json) {
		txs_recv_result_text(f, s);
		return;
	}
	struct txs_json j;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "summary");
	txs_json_str(&j, "kind", "recv");
	txs_recv_result_json(&j, s);
	txs_json_end(&j);
}

TXS_API void txs_recv_result_text(FILE *f, const struct txs_recv_result *s)
{
	char pps[32], bps[32];
	fprintf(f, "- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n");
	fprintf(f, "recv: %s, %u thread%s, %.3f s (first to last packet %.3f s): %s pps, %sbit/s payload\n", s->in->spec,
	       s->n_threads, s->n_threads > 1 ? "s" : "", s->seconds, s->active,
	       txs_fmt_si(s->active > 0 ? s->rx->received / s->active : 0, pps, sizeof(pps)),
	       txs_fmt_si(s->active > 0 ? s->rx->bytes * 8.0 / s->active : 0, bps, sizeof(bps)));
	txs_rx_result_text(f, s->rx, s->link_names);
	if (!s->in->offline)
		txs_rx_kstats_text(f, &s->kd, s->n_if ? s->if_names : NULL, s->n_if, sock_drops(s));
	if (s->is.rcvbuf >= 0) {
		fprintf(f, "socket   receive buffer %lld bytes (%s); UDP GRO %s", (long long)s->is.rcvbuf,
		       s->is.rcvbuf_forced ? "SO_RCVBUFFORCE" : "SO_RCVBUF, capped by net.core.rmem_max",
		       s->is.gro ? "on" : "off");
		if (s->is.gro)
			fprintf(f, ": %llu messages carried %llu datagrams", (unsigned long long)s->is.gro_msgs,
			       (unsigned long long)s->is.gro_dgrams);
		fprintf(f, "\n");
		if (s->is.gro && sock_drops(s) > 0)
			fprintf(f, "socket   with UDP GRO the kernel counts its drops (sockets, RcvbufErrors) in messages "
			       "of up to 128 datagrams; the loss above is in datagrams\n");
	}
	if (!s->in->raw && !s->in->offline && s->in->conf.rx_ts == TXS_RX_TS_HARDWARE) {
		char phc[32] = "PHC unknown";
		if (s->is.phc_index >= 0)
			snprintf(phc, sizeof(phc), "PHC /dev/ptp%d", s->is.phc_index);
		fprintf(f, "arrival  times of %llu datagrams from the NIC's hardware timestamp, %llu from the kernel's "
		       "software timestamp, %llu from our clock; %llu hardware timestamps off our clock, not used "
		       "(--rx-timestamps hardware: %s, %s%s)\n",
		       (unsigned long long)s->is.ts_hardware, (unsigned long long)s->is.ts_kernel,
		       (unsigned long long)s->is.ts_user, (unsigned long long)s->is.ts_hw_skewed, s->is.hw_ifname, phc,
		       !s->is.hw_filter_set ? ""
		       : s->is.hw_filter_left ? ", receive filter switched on by us and left on: the driver cannot "
						 "say what it was"
						: ", receive filter switched on by us");
	} else if (!s->in->raw && !s->in->offline) {
		fprintf(f, "arrival  times of %llu datagrams from the kernel's receive timestamp, %llu from our clock "
		       "(--rx-timestamps %s)\n", (unsigned long long)s->is.ts_kernel, (unsigned long long)s->is.ts_user,
		       ts_mode_str(s->in->conf.rx_ts));
	}
	if (s->is.have_socket_drops && s->is.socket_drops)
		fprintf(f, "DROPPED  the kernel dropped %llu datagrams at our %s (%s full): they are part of lost%s\n",
		       (unsigned long long)s->is.socket_drops, s->is.have_xdp ? "AF_XDP sockets" : s->in->raw ? "rings" : "sockets",
		       s->is.have_xdp ? "RX or fill ring" : s->in->raw ? "ring" : "receive buffer",
		       s->in->raw ? "" : "; a larger --rcvbuf or -A on a CPU of its own may help");
	if (s->is.have_xdp)
		xdp_text(f, &s->is);
	const struct txs_pcap_counts *pc = &s->is.pcap;
	if (pc->bad_len || pc->truncated || pc->bad_l2 || pc->snapped)
		fprintf(f, "pcap     %llu records; corrupt: %llu bad length, %llu truncated, %llu bad link header; %llu "
		       "cut by snap length\n",
		       (unsigned long long)pc->records, (unsigned long long)pc->bad_len,
		       (unsigned long long)pc->truncated, (unsigned long long)pc->bad_l2,
		       (unsigned long long)pc->snapped);
	fflush(f);
}


TXS_API void txs_recv_interval_json(FILE *f, const struct txs_recv_interval *iv)
{
	struct txs_json j;
	double dt = iv->end - iv->start;
	txs_json_begin(&j, f);
	txs_json_str(&j, "type", "interval");
	txs_json_str(&j, "kind", "recv");
	txs_json_dbl(&j, "start", iv->start);
	txs_json_dbl(&j, "end", iv->end);
	iv_json_row(&j, &iv->sum, dt);
	txs_json_arr_open(&j, "threads");
	for (unsigned i = 0; i < iv->n; i++) {
		txs_json_obj_open(&j, NULL);
		txs_json_u64(&j, "id", i);
		txs_json_i64(&j, "cpu", iv->cpu[i]);
		iv_json_row(&j, &iv->thread[i], dt);
		txs_json_obj_close(&j);
	}
	txs_json_arr_close(&j);
	txs_json_end(&j);
}

TXS_API void txs_recv_interval_text(FILE *f, const struct txs_recv_interval *iv, bool *header)
{
	if (!*header) {
		fprintf(f, "[  ID] Interval            %17s %13s %14s %8s %6s %8s %9s %4s %9s\n", "Received", "Rate",
			"Bitrate", "Lost", "Dup", "Reorder", "Malformed", "Out", "Out ms");
		*header = true;
	}
	if (iv->n > 1)
		for (unsigned i = 0; i < iv->n; i++) {
			char id[16];
			snprintf(id, sizeof(id), "%u", i);
			iv_text_row(f, id, iv->start, iv->end, &iv->thread[i]);
		}
	iv_text_row(f, "SUM", iv->start, iv->end, &iv->sum);
	fflush(f);
}

TXS_API void txs_recv_banner_text(FILE *f, const struct txs_recv *s)
{
	const struct txs_recv_plan *p = &s->plan;
	char a[64] = "*";
	if (p->have_bind)
		txs_addr_str(&p->bind, a, sizeof(a));
	const char *pl = s->n > 1 ? "s" : "";
	if (p->is_udp && s->ic.port_hi)
		fprintf(f, "txscale recv: udp %s ports %u-%u, %u thread%s", a, s->ic.port, s->ic.port_hi, s->n, pl);
	else if (p->is_udp)
		fprintf(f, "txscale recv: udp %s port %u, %u thread%s", a, s->ic.port, s->n, pl);
	else
		fprintf(f, "txscale recv: %s, %u thread%s", s->in->spec, s->n, pl);
	if (p->time > 0 && !p->is_pcap)
		fprintf(f, ", up to %.1f s", p->time);
	if (s->conf.idle > 0)
		fprintf(f, ", ends after %.1f s idle", s->conf.idle);
	if (s->exp->have_total)
		fprintf(f, ", expecting %llu packets", (unsigned long long)s->exp->total);
	fprintf(f, "\n");
	fflush(f);
}
