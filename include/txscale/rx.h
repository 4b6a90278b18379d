/* SPDX-License-Identifier: MIT */
/* txscale receive side (lib/rx): per-flow analysis of txscale traffic (loss,
 * duplicates, RFC 4737 reordering, late arrivals, one-way latency, RFC 3550
 * jitter), the IP layer of raw inputs (IPv4 ID reuse, fragments, checksum
 * errors, TOS, per-link share), the inputs that feed it (kernel UDP sockets,
 * AF_PACKET rings, pcap files), the kernel's drop counters, and the sender's
 * JSON summary as the source of exact expected counts. docs/recv.md.
 *
 * Model: one struct txs_rx_core per receiving thread holds everything written
 * per packet (flow table, histograms, counters); nothing per packet is shared
 * between cores. At report time txs_rx_result_build() merges the cores.
 *
 * Concurrency (per function below):
 *  - txs_rx_core_*: create/destroy from any one thread while no one else uses
 *    the core; txs_rx_frame/txs_rx_dgram/txs_rx_count only from the thread
 *    owning the core (wait-free, no syscalls, allocation only for a new flow
 *    or IPv4 address pair); txs_rx_core_live() from any thread at any time
 *    (relaxed reads of single-writer counters, exact once the owner stopped).
 *  - txs_rx_result_build: after every owner stopped writing its core.
 *  - txs_rx_input_poll(in, q, ...): only the thread owning queue q; other
 *    txs_rx_input_* from the controlling thread while no poll runs.
 *  - txs_rx_expect_parse, txs_rx_kstats_*: caller-owned memory,
 *    any thread.
 */
#ifndef TXSCALE_RX_H
#define TXSCALE_RX_H

#include <stdio.h>
#include <txscale/common.h>
#include <txscale/pkt.h>
#include <txscale/stats.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration ------------------------------------------------------ */
#define TXS_RX_WINDOW_DEFAULT 4096u        /* duplicate window per flow, packets */
#define TXS_RX_WINDOW_MAX (1u << 20)
#define TXS_RX_EXTENT_RING 128u            /* reordering-extent history per flow */
#define TXS_RX_MAX_FLOWS_DEFAULT 4096u     /* flows per core */
#define TXS_RX_MAX_JUMP_DEFAULT (1ull << 30)
#define TXS_RX_RESYNC_CONFIRM 4u            /* implausible packets in a row that resync a flow */
#define TXS_RX_EPOCH_MAX (1ull << 62)       /* sequences one epoch may span (then a new epoch) */
#define TXS_RX_MAX_LATENCY_DEFAULT 60000000000ull /* 60 s: a longer one-way latency is clock skew */
#define TXS_RX_ID_PAIRS_DEFAULT 16u        /* IPv4 (src,dst) pairs tracked per core */
#define TXS_RX_VLANS_MAX 64u               /* VLAN (outer, inner) pairs counted per core */

struct txs_rx_conf {
	/* Per-flow sliding window (power of two, 64..TXS_RX_WINDOW_MAX; 0 =
	 * default): a bitmap of the last `window` sequence numbers below the
	 * highest one seen. Inside it duplicates and reordering are exact; a
	 * packet older than the window is counted as "late" (it may be a
	 * duplicate or a very late original: the two cannot be told apart). */
	unsigned window;
	unsigned max_flows;    /* per core (0 = default); beyond: counted as overflow */
	/* Plausibility (docs/recv.md, "Sequence numbers"): a sequence more than
	 * max_jump ahead of the flow's next expected, more than max_jump behind
	 * it, or behind the start of the flow's epoch is implausible: counted as
	 * malformed (seq-jump), the flow untouched. A flow's first packet is
	 * judged against next = 0 (the sender starts at 0). TXS_RX_RESYNC_CONFIRM
	 * implausible packets in a row, each at most 64 after the previous,
	 * resync the flow: a new epoch starts after them (0 = default). */
	uint64_t max_jump;
	/* A latency sample outside [0, max_latency_ns] (timestamp in the future,
	 * or older than this) is counted as clock skew, not put in the
	 * histogram (0 = default). */
	uint64_t max_latency_ns;
	unsigned n_links;      /* links the input delivers on (0 = 1), <= TXS_MAX_LINKS */
	unsigned max_id_pairs; /* IPv4 ID reuse tracking, pairs per core (0 = default) */
	bool no_id_track;      /* skip IPv4 ID reuse tracking */
	bool verify_fill;      /* check the payload fill pattern (docs/wire-format.md) */
	/* Filters for raw inputs (frames); datagrams that fail are "ignored". */
	/* The payload's header: txscale's (found by its magic), or iperf3's
	 * (docs/iperf3.md: sec, usec, 32- or 64-bit sequence from 1; no magic,
	 * so chosen, not guessed): flows by 5-tuple, sequenced, the sender's
	 * time used for RFC 3550 jitter only (iperf3 stamps a monotonic clock). */
	/* iperf 2's (docs/iperf3.md, "iperf 2"): a big-endian 32-bit id from 1,
	 * tv_sec, tv_usec (CLOCK_REALTIME: one-way latency), the id's upper 32
	 * bits; a negative id is its end-of-test datagram (sent again until the
	 * server's report), counted unsequenced. */
	enum txs_rx_payload {
		TXS_RX_PAYLOAD_TXSCALE = 0,
		TXS_RX_PAYLOAD_IPERF3,
		TXS_RX_PAYLOAD_IPERF3_64,
		TXS_RX_PAYLOAD_IPERF2
	} payload;
	uint16_t port;         /* UDP destination port, 0 = any */
	uint16_t port_hi;      /* with port: ports port..port_hi (0 = port only) */
	int family;            /* AF_INET, AF_INET6, 0 = both */
	struct txs_addr dst;   /* destination address, family 0 = any */
	/* Outages (docs/recv.md, "Outages"): a silence in a flow's arrivals
	 * longer than this, ending with sequences missing, is an outage.
	 * 0 = per flow TXS_RX_OUTAGE_FACTOR x its median inter-arrival, at
	 * least TXS_RX_OUTAGE_FLOOR_NS. */
	uint64_t outage_min_ns;
	/* One-way latency corrected by a clock offset (receiver's clock minus
	 * the sender's): each sample is arrival - stamp - clock_offset_ns, the
	 * skew rule (max_latency_ns) applying to the corrected value. */
	bool clock_correct;
	int64_t clock_offset_ns;
	/* The offset's error bound (a measured offset: half the exchange's round
	 * trip; 0: given, exact). An offset within it (|offset| <= error) is
	 * reported, not applied: the samples stay as stamped. A corrected sample
	 * below zero (within max_latency_ns) is the offset's error, not skew: it
	 * is kept in the statistics at the floor 0 and counted (lat_floored). */
	uint64_t clock_error_ns;
};

/* ---- counters ----------------------------------------------------------- */
/* Malformed input beyond the parser's kinds (enum txs_perr). */
enum txs_rx_bad {
	TXS_RX_BAD_MAGIC = 0,   /* UDP payload >= 16 bytes without a txscale header */
	TXS_RX_BAD_SEQ_JUMP,    /* implausible sequence (see txs_rx_conf.max_jump) */
	TXS_RX_BAD_FILL,        /* verify_fill: payload bytes differ from the pattern */
	TXS_RX_BAD_PCAP_RECORD, /* pcap record header corrupt (input) */
	TXS_RX_BAD__COUNT
};
TXS_API const char *txs_rx_bad_str(enum txs_rx_bad b);

/* The live counters of one core, for interval reports and stop conditions. */
struct txs_rx_live {
	uint64_t received;   /* datagrams counted: unique + duplicates + late + unsequenced + overflow */
	uint64_t bytes;      /* UDP payload bytes of those */
	uint64_t unique;     /* first arrivals of a sequence number (sequenced flows) */
	uint64_t duplicates;
	uint64_t reordered;  /* RFC 4737: arrived with seq below the next expected */
	uint64_t late;       /* older than the duplicate window */
	uint64_t gaps;       /* sequence numbers skipped when a flow advanced */
	uint64_t malformed;  /* all malformed kinds */
	uint64_t ignored;    /* not ours: not IP, not UDP, fragments, filtered */
	uint64_t outages;    /* outages seen (mod 2^64: one withdrawn when late datagrams fill it) */
	uint64_t outage_ns;  /* their durations, summed (same rule) */
};

struct txs_rx_core;

/* Validate conf and allocate a core. Returns 0, -EINVAL, -ENOMEM. */
TXS_API int txs_rx_core_create(struct txs_rx_core **out, const struct txs_rx_conf *conf);
TXS_API void txs_rx_core_destroy(struct txs_rx_core *c);
/* Relaxed snapshot of the live counters. Provisional loss = gaps - reordered. */
TXS_API void txs_rx_core_live(const struct txs_rx_core *c, struct txs_rx_live *out);

/* A 5-tuple, addresses in network order, ports in host order. */
struct txs_rx_tuple {
	struct txs_addr src, dst;
	uint16_t sport, dport;
};

/* One frame from a raw input: Ethernet (l2 = TXS_L2_ETH) or starting at the IP
 * header (TXS_L2_NONE). ts_ns: arrival time, CLOCK_REALTIME ns (0 = unknown:
 * no latency). link < n_links. Parses (txs_parse), filters, analyses. */
TXS_API void txs_rx_frame(struct txs_rx_core *c, const uint8_t *buf, size_t len, enum txs_l2 l2, unsigned link,
			  uint64_t ts_ns);
/* The same for a frame whose outermost VLAN tag the kernel took off and
 * handed over apart (AF_PACKET's tp_vlan_tci, TP_STATUS_VLAN_VALID): tci is
 * counted as the outer tag, before any still in the frame. */
TXS_API void txs_rx_frame_vlan(struct txs_rx_core *c, const uint8_t *buf, size_t len, enum txs_l2 l2,
			       unsigned link, uint64_t ts_ns, uint16_t tci);
/* One UDP payload from a kernel socket (no IP header seen). t: the datagram's
 * 5-tuple (used for the flow key when the payload carries no header). */
TXS_API void txs_rx_dgram(struct txs_rx_core *c, const uint8_t *payload, size_t len, const struct txs_rx_tuple *t,
			  unsigned link, uint64_t ts_ns);
/* Count malformed input an input found itself (truncated datagrams, corrupt
 * pcap records). */
TXS_API void txs_rx_count_perr(struct txs_rx_core *c, enum txs_perr e, uint64_t n);
TXS_API void txs_rx_count_bad(struct txs_rx_core *c, enum txs_rx_bad b, uint64_t n);

/* ---- what the sender sent ----------------------------------------------- */
#define TXS_RX_EXPECT_FLOWS 16384u
struct txs_rx_expect {
	bool have_total;
	uint64_t total;          /* packets the sender sent */
	uint32_t flow_base;      /* per_flow[k]: packets of flow id flow_base + k */
	unsigned n_flows;
	uint64_t per_flow[TXS_RX_EXPECT_FLOWS];
	uint64_t sender_drops;   /* built but not accepted by the sender's device */
};
/* Parse the sender's JSON summary ({"type":"summary","kind":"send",...}, as
 * written by `txscale send --summary-file` or the last line of `send -J`).
 * text may hold several JSON lines: the last summary line is used. Takes
 * "packets" and "drops", and per thread "id"/"packets": thread k sends flow
 * id k with sequence numbers from 0; with "flows_per_thread" N and
 * "flow_base" B (send --flows / --flow-base), thread k sends flows
 * B + k*N .. B + k*N + N-1 in turn, so flow i of a thread that sent P
 * datagrams and dropped none got P/N (+1 for i < P mod N); a thread with
 * drops (or over TXS_RX_EXPECT_FLOWS flows) leaves only the total known. Returns 0, -EINVAL (no summary line,
 * malformed JSON, or inconsistent counts). */
TXS_API int txs_rx_expect_parse(struct txs_rx_expect *e, const char *text, size_t len);

/* ---- outages and loss bursts (docs/recv.md, "Outages") ---------------------- */
#define TXS_RX_OUTAGE_FLOOR_NS 1000000ull /* automatic threshold: at least 1 ms */
#define TXS_RX_OUTAGE_FACTOR 10u          /* ... and 10x the flow's median inter-arrival */
#define TXS_RX_OUTAGE_KEEP 64u            /* outages kept per flow with their details */
#define TXS_RX_OUTAGE_EVENTS 64u          /* the run's outages listed in the result */
/* Loss-burst length classes: 1..8 one each (classes 0..7), then class k >= 8
 * holds lengths 2^(k-5)+1 .. 2^(k-4) (9-16, 17-32, ...). */
#define TXS_RX_BURST_CLASSES 69u
TXS_API unsigned txs_rx_burst_class(uint64_t len); /* len >= 1 */
TXS_API void txs_rx_burst_range(unsigned cls, uint64_t *lo, uint64_t *hi);

/* One outage: the silence between two arrivals (receive times, CLOCK_REALTIME
 * ns) that ended with sequences missing. */
struct txs_rx_outage_ev {
	uint64_t start_ns, end_ns;  /* arrival of the last datagram before, of the first after */
	uint64_t before_seq, after_seq;
	uint64_t missing_from;      /* sequences missing_from .. after_seq - 1 were missing */
	uint64_t missing;           /* of them, still missing (late arrivals fill theirs) */
	uint32_t flow;              /* flow id (by_id flows), else 0 */
	unsigned flows;             /* run events: flow outages merged into this one */
};

struct txs_rx_outage {
	uint64_t count;
	uint64_t total_ns;          /* durations summed */
	uint64_t missing;           /* missing inside all outages */
	struct txs_rx_outage_ev longest; /* duration end_ns - start_ns; zero when count is 0 */
	uint64_t threshold_ns;      /* the silence it took (flows: the last one applied; run: the largest) */
	uint64_t bursts[TXS_RX_BURST_CLASSES]; /* runs of consecutive missing sequences, per length class */
	uint64_t n_bursts, burst_max, burst_lost; /* bursts, longest, sequences in them */
	bool bursts_exact;          /* false: a resync, a flow split over cores without its
				     * sequence sets, or the run budget ran out */
	double rate_pps;            /* the flow's sequences per second of arrivals (run: summed) */
	uint64_t loss_duration_ns;  /* missing / rate_pps; missing: lost, or the sequence holes when
				     * more (the sender's device drops are holes, not "lost") */
	uint64_t dropped;           /* run: flow outages beyond TXS_RX_OUTAGE_KEEP per flow, counted
				     * each as one (not merged by time) */
};

/* ---- merged result --------------------------------------------------------- */
struct txs_rx_flow {
	bool by_id;              /* keyed by the payload header's flow id, else by 5-tuple */
	bool sequenced;          /* carries sequence numbers */
	enum txs_ph_kind kind;
	uint32_t id;
	struct txs_rx_tuple tuple; /* the first packet's 5-tuple */
	unsigned cores;          /* cores that saw the flow */
	bool merged_exact;       /* cores > 1 and merged by sequence: a sequence counted
				  * unique on several cores is unique once, the other
				  * copies duplicates (false: a core's run budget ran
				  * out, unique and duplicates are the cores' sums) */
	uint64_t received, bytes, unique, duplicates, reordered, late;
	uint64_t next_seq;       /* highest sequence seen + 1 (mod 2^64) in the current epoch */
	uint64_t first_seq;      /* start of the current epoch (0 unless resynced) */
	uint64_t span;           /* sequences the flow's epochs cover (holes + unique; saturates) */
	uint64_t resyncs;        /* implausible runs that started a new epoch */
	bool have_expected;
	uint64_t expected;       /* sender's count for this flow */
	uint64_t lost;           /* expected - unique (exact) or span - unique (never below 0) */
	uint64_t excess;         /* unique beyond the expected count */
	uint64_t extent_max, extent_sum, extent_beyond; /* RFC 4737 reordering extent */
	uint64_t lat_count, lat_min, lat_max; /* ns */
	uint64_t lat_sum_lo, lat_sum_hi; /* ns, 128 bits as two words (no __int128 in a public struct): cannot wrap */
	uint64_t jitter_ns;      /* RFC 3550 interarrival jitter */
	uint64_t jitter_samples; /* transit times it is made of */
	uint64_t first_ns, last_ns; /* first and last arrival (CLOCK_REALTIME ns, 0 = unknown) */
	struct txs_rx_outage outage;
};

struct txs_rx_link {
	uint64_t packets, bytes;
	double share;            /* of all analysed packets */
};

struct txs_rx_idpair {
	struct txs_addr src, dst;
	uint64_t datagrams;      /* IPv4 datagrams (first fragments or whole) of the pair */
	uint64_t reuses;         /* datagrams whose ID was seen before on the pair */
	uint64_t early;          /* reuses at distance < 65536 datagrams */
	uint64_t min_distance;   /* 0 = no reuse */
	uint64_t p50_distance;
	unsigned cores;
};

struct txs_rx_result {
	uint64_t received, bytes, unique, duplicates, reordered, late, malformed, ignored;
	uint64_t unsequenced;    /* received on tracked flows without sequence numbers */
	uint64_t overflow;       /* datagrams of flows beyond max_flows (counted, not analysed) */
	bool lost_exact;         /* the sender's count was known */
	bool have_expected;
	uint64_t expected;
	uint64_t lost, excess, sender_drops;
	uint64_t perr[TXS_PERR__COUNT];   /* parser verdicts (OK = parsed) */
	uint64_t bad[TXS_RX_BAD__COUNT];
	uint64_t filtered;       /* parsed UDP, but not for our port/address/family */
	uint64_t extent_max, extent_sum, extent_beyond;
	struct txs_hist lat;     /* one-way latency, ns */
	uint64_t lat_none;       /* no timestamp (0) or arrival time unknown */
	uint64_t lat_negative;   /* timestamp after arrival: clock skew (not in the histogram), or with a
				  * correction applied, the offset's error (lat_floored of them kept) */
	uint64_t lat_floored;    /* corrected samples below zero kept in the histogram at the floor 0 */
	uint64_t lat_past;       /* clock skew: timestamp more than max_latency_ns before arrival */
	uint64_t max_latency_ns; /* the cores' conf.max_latency_ns */
	uint64_t resyncs;        /* sum over flows */
	uint64_t jitter_ns;      /* mean of the flows' jitter weighted by packets */
	uint64_t jitter_max_ns;
	unsigned n_links;
	struct txs_rx_link links[TXS_MAX_LINKS];
	double jain;             /* Jain's fairness index over links' packets (1 link: 1) */
	uint64_t frag_v4, frag_v4_first, frag_v6, frag_v6_first;
	uint64_t tos[256];       /* analysed datagrams per IPv4 TOS / IPv6 traffic class */
	bool raw;                /* frames were seen (IP layer fields meaningful) */
	uint64_t id_pairs_overflow;
	unsigned n_pairs;
	struct txs_rx_idpair *pairs;
	unsigned n_flows;
	struct txs_rx_flow *flows; /* by_id flows by id, then 5-tuple flows */
	uint64_t split_flows;    /* flows seen on more than one core */
	uint64_t split_inexact;  /* of them, merged without their sequence sets */
	uint64_t cross_duplicates; /* sequences counted unique on two cores: duplicates */
	unsigned n_sizes;
	struct txs_rx_size { uint32_t payload; uint64_t datagrams, bytes; } *sizes; /* by payload length */
	/* raw inputs: analysed datagrams per VLAN (tags counted outer first;
	 * untagged apart); vlan_overflow: tagged beyond TXS_RX_VLANS_MAX pairs */
	unsigned n_vlans;
	struct txs_rx_vlan { unsigned tags; uint16_t outer, inner; uint64_t packets, bytes; } *vlans;
	uint64_t untagged, vlan_overflow;
	/* the run's outages: flows' outages overlapping in time merged into one
	 * (start the earliest, end the latest); events: the first
	 * TXS_RX_OUTAGE_EVENTS of them by start time */
	struct txs_rx_outage outage;
	uint64_t outage_min_ns;  /* the cores' conf.outage_min_ns (0 = automatic) */
	unsigned n_outages;
	struct txs_rx_outage_ev *outages;
	/* one-way latency correction (txs_rx_result_set_clock) */
	bool have_clock;
	bool clock_applied;      /* the samples were shifted by clock_offset_ns (false: within its error) */
	int64_t clock_offset_ns; /* receiver's clock minus sender's (measured or given) */
	uint64_t clock_error_ns; /* bound on |true offset - offset_ns| (0: given) */
	bool have_drift;
	int64_t clock_drift_ns;  /* offset after the test minus before */
	const char *clock_source; /* "control" (measured), "option" (--clock-offset) */
	const char *clock_method; /* measured: how ("udp-kernel-ts", "control-tcp"); NULL: not said */
};

/* Merge n cores (all stopped) and apply what the sender sent (e may be NULL).
 * Loss: with e->per_flow, lost_k = expected_k - unique_k per flow (flows the
 * sender sent but that never arrived are included); with only e->total,
 * lost = total - sum(unique); without e, lost = sum over flows of
 * (span - unique): holes from sequence 0 (or a resync) to the highest
 * plausible sequence seen. Every count is bounded by construction (no
 * subtraction can wrap). Returns 0, -ENOMEM. */
TXS_API int txs_rx_result_build(struct txs_rx_result **out, struct txs_rx_core *const *cores, unsigned n,
				const struct txs_rx_expect *e);
TXS_API void txs_rx_result_free(struct txs_rx_result *r);

/* Write the result's fields into an open JSON object (docs/json-schema.md). */
TXS_API void txs_rx_result_json(struct txs_json *j, const struct txs_rx_result *r,
				const char *const *link_names);
/* Human-readable summary lines. */
TXS_API void txs_rx_result_text(FILE *f, const struct txs_rx_result *r, const char *const *link_names);
/* Describe the clock correction the cores applied (txs_rx_conf.clock_correct):
 * its error bound, the drift (offset after the test minus before; have_drift)
 * and where the offset came from (a static string: "control" measured over
 * the control channel, "option" given). The writers give the corrected
 * figures and the raw ones (corrected + offset) beside them, and say so.
 * offset_ns replaces the cores' offset in the report only. */
TXS_API void txs_rx_result_set_clock(struct txs_rx_result *r, int64_t offset_ns, uint64_t error_ns, bool have_drift,
				     int64_t drift_ns, const char *source);
/* How a measured offset was measured (a static string, the control
 * session's: "udp-kernel-ts", "control-tcp"), for the report's clock
 * object ("method") and text; after txs_rx_result_set_clock. */
TXS_API void txs_rx_result_set_clock_method(struct txs_rx_result *r, const char *method);

/* ---- live copies of a core's flows ------------------------------------------------
 * For a reader while the core runs (a metrics scrape): the owner copies its
 * flows' counters and latency histogram into a txs_rx_snap between polls,
 * only when a reader asked for one; nothing per packet. Owner:
 * txs_rx_core_publish (one atomic load when nobody asked). Reader (any one
 * thread at a time): txs_rx_snap_request, then txs_rx_snap_lock/unlock
 * around reading the fields. */
struct txs_rx_snap_flow {
	bool by_id;
	uint32_t id;
	struct txs_rx_tuple tuple;
	uint64_t received, bytes, unique, duplicates, reordered, late;
	uint64_t span;           /* sequences the flow's epochs cover (saturates) */
};
struct txs_rx_snap {
	unsigned n_flows;        /* flows copied (at most the core's max_flows) */
	struct txs_rx_snap_flow *flows;
	struct txs_hist lat;     /* the core's latency histogram, ns */
	uint64_t lat_negative, lat_past;
	uint64_t copied_ns;      /* CLOCK_MONOTONIC of the copy (0 = none yet) */
	void *priv;
};
/* For cores of conf->max_flows (0 = default). Returns 0, -ENOMEM. */
TXS_API int txs_rx_snap_create(struct txs_rx_snap **out, unsigned max_flows);
TXS_API void txs_rx_snap_destroy(struct txs_rx_snap *s);
/* The owner of c, between polls: copy c into s if a copy was asked for. */
TXS_API void txs_rx_core_publish(const struct txs_rx_core *c, struct txs_rx_snap *s);
/* Ask for a copy and wait at most timeout_ms for it (a copy younger than
 * fresh_ms is taken as it is; timeout_ms 0: ask and return, so that several
 * owners copy at once). Returns 0, or -ETIMEDOUT (the last copy stays: an
 * owner blocked in a poll, or stopped). */
TXS_API int txs_rx_snap_request(struct txs_rx_snap *s, int timeout_ms, int fresh_ms);
TXS_API void txs_rx_snap_lock(struct txs_rx_snap *s);
TXS_API void txs_rx_snap_unlock(struct txs_rx_snap *s);

/* ---- kernel drop counters ---------------------------------------------------- */
enum txs_rx_ks_udp {
	TXS_KS_IN_DATAGRAMS = 0,
	TXS_KS_NO_PORTS,
	TXS_KS_IN_ERRORS,
	TXS_KS_RCVBUF_ERRORS,
	TXS_KS_IN_CSUM_ERRORS,
	TXS_KS_MEM_ERRORS,
	TXS_KS_UDP__COUNT
};
#define TXS_KS_MAX_IF 64
struct txs_rx_kstats {
	bool have_udp, have_udp6, have_softnet;
	uint64_t udp[TXS_KS_UDP__COUNT], udp6[TXS_KS_UDP__COUNT];
	uint64_t softnet_dropped, softnet_squeezed; /* summed over CPUs (host-wide) */
	unsigned n_if;
	struct {
		char name[32];
		uint64_t rx_packets, rx_errs, rx_drop, rx_fifo;
	} ifs[TXS_KS_MAX_IF];
};
TXS_API const char *txs_rx_ks_udp_str(enum txs_rx_ks_udp k); /* "RcvbufErrors", ... */
/* Read /proc/net/snmp, /proc/net/snmp6, /proc/net/softnet_stat, /proc/net/dev
 * under proc_root (NULL = "/proc"; the network namespace is the caller's).
 * Missing files leave their have_* false. Returns 0 (even if some are missing). */
TXS_API int txs_rx_kstats_read(struct txs_rx_kstats *k, const char *proc_root);
/* after - before, per counter (interfaces matched by name). */
TXS_API void txs_rx_kstats_delta(struct txs_rx_kstats *out, const struct txs_rx_kstats *before,
				 const struct txs_rx_kstats *after);
/* Write {"udp":{...},"udp6":{...},"softnet":{...},"interfaces":{...},
 * "sockets":N} as key `key`. ifnames (n) limits interfaces (NULL: all).
 * socket_drops < 0: not known. */
TXS_API void txs_rx_kstats_json(struct txs_json *j, const char *key, const struct txs_rx_kstats *d,
				const char *const *ifnames, unsigned n, int64_t socket_drops);
TXS_API void txs_rx_kstats_text(FILE *f, const struct txs_rx_kstats *d, const char *const *ifnames, unsigned n,
				int64_t socket_drops);

/* ---- inputs ------------------------------------------------------------------------ *
 * "udp"                      kernel UDP sockets, one per queue, SO_REUSEPORT, recvmmsg
 * "packet:IF[,IF...]"        AF_PACKET TPACKET_V3 rings, PACKET_FANOUT_HASH across
 *                            queues; link i = interface i
 * "pcap:FILE"                a capture file, one queue, ends at end of file
 * "xdp:IF[,OPT...]"          AF_XDP sockets, one per receive queue, fed by an XDP
 *                            program that redirects the filter's UDP datagrams
 *                            (conf port/port_hi, family, bind) and passes the rest
 *                            to the stack; OPT: native | skb, copy | zc, ring=N */
/* Arrival time of the udp input (recv --rx-timestamps): KERNEL, the
 * default, is the kernel's software receive timestamp of each datagram
 * (SO_TIMESTAMPING, SOF_TIMESTAMPING_RX_SOFTWARE: taken when the packet
 * entered the stack, before any socket queueing), falling back to USER for a
 * datagram that carries none; USER is one CLOCK_REALTIME read per recvmmsg
 * batch. Both are CLOCK_REALTIME ns. HARDWARE is the NIC's own receive
 * timestamp (SOF_TIMESTAMPING_RAW_HARDWARE, scm_timestamping ts[2]) of each
 * datagram, falling back to the software stamp, then to USER, per datagram:
 * open switches on the receive filter HWTSTAMP_FILTER_ALL of conf.hw_ifname
 * (SIOCSHWTSTAMP, needs CAP_NET_ADMIN; nothing is changed when it is already
 * on; close restores what was there) and fails with -EOPNOTSUPP when the
 * interface cannot stamp every packet in hardware (veth, lo, PTP-only
 * filters), -EPERM without the capability. A hardware stamp is the NIC's
 * clock (PHC), which is CLOCK_REALTIME only where something such as phc2sys
 * keeps it so (a PHC in PTP time, TAI, runs 37 s ahead). A hardware stamp
 * provably off CLOCK_REALTIME (below) is not used: the datagram is timed by
 * its software stamp (or our clock) instead and counted in
 * txs_rx_input_stats.ts_hw_skewed; a used one is a latency sample under the
 * same skew rule as any other (txs_rx_conf.max_latency_ns). Raw inputs
 * (packet:, pcap:) always use their own per-packet kernel or capture time. */
enum txs_rx_ts_mode { TXS_RX_TS_KERNEL = 0, TXS_RX_TS_USER, TXS_RX_TS_HARDWARE };
/* A hardware stamp is off CLOCK_REALTIME (the PHC is not kept on it) when it
 * is more than TXS_RX_HW_TS_AHEAD_NS after the datagram's software stamp
 * (taken microseconds after it, when the driver handed the packet to the
 * stack), or more than TXS_RX_HW_TS_BEHIND_NS before it (no packet waits
 * that long in a NIC ring); for a datagram without a software stamp, after
 * our clock read of its batch by more than AHEAD or before it by more than
 * TXS_RX_MAX_LATENCY_DEFAULT. A PHC kept on CLOCK_REALTIME by phc2sys is
 * within microseconds of it; an offset within these bounds is not seen and
 * adds to the latencies. */
#define TXS_RX_HW_TS_AHEAD_NS 1000000ull     /* 1 ms */
#define TXS_RX_HW_TS_BEHIND_NS 1000000000ull /* 1 s */

#define TXS_RX_UDP_MAX_PORTS 1024
struct txs_rx_input_conf {
	unsigned n_queues;       /* threads that will poll (0 = 1) */
	int family;              /* udp: AF_INET, AF_INET6 or 0 (dual-stack ::) */
	bool have_bind;
	struct txs_addr bind;    /* udp: local address */
	uint16_t port;           /* udp: local port */
	uint16_t port_hi;        /* udp: ports port..port_hi, a socket each per queue, read as
				  * they become ready (0 = port only; at most
				  * TXS_RX_UDP_MAX_PORTS ports) */
	int rcvbuf;              /* udp: SO_RCVBUFFORCE bytes when permitted, else SO_RCVBUF
				  * (capped by net.core.rmem_max); 0 = system default */
	bool reuseport;          /* udp: join other processes' sockets on the port (SO_REUSEPORT:
				  * the kernel splits the traffic); without it a port already in
				  * use fails with -EADDRINUSE. Own queues always share. */
	unsigned batch;          /* datagrams / records per poll (0 = 64) */
	unsigned ring_blocks;    /* packet: blocks of 1 MiB per queue (0 = 16) */
	enum txs_rx_ts_mode rx_ts; /* udp: arrival time (above) */
	/* udp, TXS_RX_TS_HARDWARE: the receiving interface whose NIC stamps
	 * (IFNAMSIZ); "" = the interface holding the bind address (have_bind,
	 * not a wildcard). Datagrams arriving through another interface carry
	 * no hardware stamp (counted as software or user). */
	char hw_ifname[16];
};

struct txs_rx_input_stats {
	bool have_socket_drops;
	uint64_t socket_drops;   /* udp: SO_MEMINFO drops; packet: PACKET_STATISTICS tp_drops;
				  * xdp: XDP_STATISTICS rx_dropped + rx_ring_full */
	uint64_t ring_packets;   /* packet: tp_packets */
	uint64_t csum_completed; /* packet: partial (offloaded) UDP checksums finished before parsing */
	struct txs_pcap_counts pcap;
	int64_t rcvbuf;          /* udp: SO_RCVBUF as the kernel reports it (bytes of skb memory), -1 = n/a */
	bool rcvbuf_forced;      /* udp: SO_RCVBUFFORCE was permitted */
	uint64_t ts_kernel, ts_user; /* udp: datagrams timed by the kernel's stamp / by our clock */
	bool gro;                /* udp: UDP_GRO on (udp:gro=off, or a kernel without it: off) */
	uint64_t gro_msgs, gro_dgrams; /* udp: messages that held several datagrams, and those datagrams */
	/* udp, TXS_RX_TS_HARDWARE (zero, phc_index -1, hw_ifname "" otherwise): */
	uint64_t ts_hardware;    /* datagrams timed by the NIC's stamp */
	uint64_t ts_hw_skewed;   /* datagrams whose hardware stamp was off CLOCK_REALTIME
				  * (TXS_RX_HW_TS_AHEAD_NS above) and not used: they are
				  * counted in ts_kernel or ts_user, by what timed them */
	int64_t hw_offset_ns;    /* the last unused stamp minus its software stamp (or our
				  * clock read): about the PHC's offset (0: none) */
	int phc_index;           /* the NIC's PTP hardware clock (/dev/ptpN), -1 = not known */
	bool hw_filter_set;      /* we switched the receive filter on (restored at close) */
	bool hw_filter_left;     /* we switched it on but could not read what was there
				  * before (no SIOCGHWTSTAMP): it stays on after close */
	char hw_ifname[16];      /* the interface whose NIC stamps */
	/* xdp: (XDP_STATISTICS of the sockets, summed; the program's own count) */
	bool have_xdp;
	char xdp_mode[8];        /* where the program runs: "native" (driver) or "skb" (generic) */
	bool xdp_zerocopy;       /* every socket bound zero-copy (false: copy mode) */
	unsigned xdp_queues;     /* sockets, one per receive queue from 0 */
	unsigned xdp_if_queues;  /* the interface's receive queues (0: not known) */
	uint64_t xdp_rx_dropped;   /* rx_dropped: no frame to copy into, or a frame too long */
	uint64_t xdp_rx_ring_full; /* rx_ring_full: our RX ring had no room */
	uint64_t xdp_fill_empty;   /* rx_fill_ring_empty_descs: the fill ring was found empty */
	uint64_t xdp_rx_invalid;   /* rx_invalid_descs */
	uint64_t xdp_no_socket;    /* matched the filter on a queue without our socket: went
				    * to the stack (not analysed) */
};

struct txs_rx_input;
struct txs_rx_input_ops {
	const char *name;
	const char *usage;
	int (*open)(struct txs_rx_input *in, const char *args);
	void (*close)(struct txs_rx_input *in);
	/* receive up to conf.batch packets into c; see txs_rx_input_poll */
	int (*poll)(struct txs_rx_input *in, unsigned q, struct txs_rx_core *c, int timeout_ms);
	void (*stats)(struct txs_rx_input *in, struct txs_rx_input_stats *out);
	int (*check)(struct txs_rx_input *in, char *err, size_t errlen); /* NULL: always fine */
};

struct txs_rx_input {
	const struct txs_rx_input_ops *ops;
	char spec[256];
	struct txs_rx_input_conf conf;
	bool raw;                /* delivers frames (IP layer visible) */
	bool offline;            /* pcap: ends by itself */
	unsigned n_links;
	char link_names[TXS_MAX_LINKS][32];
	void *priv;
	char err[200];
};

/* Open "udp", "packet:IF[,IF...]", "pcap:FILE". Returns 0 or -errno (-ENODEV
 * unknown name, -EINVAL bad arguments; err receives one line). */
TXS_API int txs_rx_input_open(struct txs_rx_input **out, const char *spec, const struct txs_rx_input_conf *conf,
			      char *err, size_t errlen);
TXS_API void txs_rx_input_close(struct txs_rx_input *in);
#ifdef TXS_UNSTABLE_API /* the fast path, inline: unstable (txscale/common.h, docs/abi.md) */
/* Receive what is there (waiting at most timeout_ms when nothing is) and
 * analyse it into c. Returns packets handed to c (>= 0), -ENODATA at the end
 * of an offline input, or -errno. Only the thread owning queue q. */
static inline int txs_rx_input_poll(struct txs_rx_input *in, unsigned q, struct txs_rx_core *c, int timeout_ms)
{
	return in->ops->poll(in, q, c, timeout_ms);
}
#endif /* TXS_UNSTABLE_API */
/* Counters kept by the kernel for our sockets (cumulative; call once the
 * pollers stopped). */
TXS_API void txs_rx_input_stats(struct txs_rx_input *in, struct txs_rx_input_stats *out);
/* Are the input's links usable? packet: every interface exists and is up.
 * Returns 0, or -ENODEV (an interface was deleted) / -ENETDOWN (one is down)
 * with one line naming it in err. A poll failing with one of those errors
 * (an interface went down or away under the ring) is explained by this.
 * Controlling thread. */
TXS_API int txs_rx_input_check(struct txs_rx_input *in, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
