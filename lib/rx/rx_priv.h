/* SPDX-License-Identifier: MIT */
/* Private to lib/rx: the per-core analysis state. */
#ifndef TXS_RX_PRIV_H
#define TXS_RX_PRIV_H
#include <txscale/rx.h>

/* One "the running maximum increased" event: arrival index and sequence.
 * Both grow monotonically along the ring, so the RFC 4737 extent of a
 * reordered packet is found by binary search (see rx.c). */
struct rx_ev {
	uint64_t idx, seq;
};

enum rx_key_kind { RX_KEY_ID = 1, RX_KEY_TUPLE = 2 };

struct rx_flow {
	/* hot: touched per packet */
	uint64_t next;          /* highest sequence + 1 (0: none yet) */
	uint64_t received;      /* arrivals, also the arrival index */
	uint64_t unique, dup, reordered, late;
	uint64_t bytes;
	uint64_t *bits;         /* window bitmap, window/64 words */
	struct rx_ev *ev;       /* TXS_RX_EXTENT_RING entries */
	uint64_t ev_head;       /* events pushed */
	int64_t last_transit;
	uint64_t jitter16;      /* RFC 3550 jitter, scaled by 16 */
	uint64_t lat_count, lat_sum, lat_min, lat_max;
	bool have_transit;
	bool sequenced;
	uint8_t kind;           /* enum txs_ph_kind */
	/* cold */
	uint64_t extent_max, extent_sum, extent_beyond;
	uint8_t key_kind;       /* enum rx_key_kind */
	uint32_t id;
	uint64_t hash;
	struct txs_rx_tuple tuple;
};

struct rx_slot {
	uint64_t hash;          /* 0 = empty */
	struct rx_flow *f;
};

struct rx_pair {
	uint32_t src, dst;      /* network order */
	uint64_t datagrams, reuses, early, min_dist;
	uint64_t *last;         /* 65536 entries: datagram index (1-based) of the ID's last use, 0 = never */
	struct txs_hist *dist;
};

struct txs_rx_core {
	struct txs_rx_live live;        /* read by the controlling thread */
	TXS_CACHE_GUARD;
	/* everything below: owner only */
	struct txs_rx_conf conf;
	unsigned window, wmask, words;
	struct rx_flow *last;           /* last flow looked up (by id) */
	uint32_t last_id;
	struct rx_slot *tab;
	unsigned tab_mask, n_flows;
	struct rx_flow **flows;         /* creation order */
	uint64_t overflow;
	uint64_t perr[TXS_PERR__COUNT];
	uint64_t bad[TXS_RX_BAD__COUNT];
	uint64_t filtered;
	uint64_t lat_none, lat_negative;
	uint64_t unsequenced;
	struct txs_hist lat;
	struct {
		uint64_t packets, bytes;
	} link[TXS_MAX_LINKS];
	uint64_t frag_v4, frag_v4_first, frag_v6, frag_v6_first;
	uint64_t tos[256];
	bool raw;
	struct rx_pair *pairs;
	unsigned n_pairs;
	struct rx_pair *last_pair;
	uint64_t id_pairs_overflow;
} TXS_CACHE_ALIGNED;

/* input backends (input.c registry) */
extern const struct txs_rx_input_ops txs_rx_input_udp_ops;
extern const struct txs_rx_input_ops txs_rx_input_packet_ops;
extern const struct txs_rx_input_ops txs_rx_input_pcap_ops;
void txs_rx_input_set_err(struct txs_rx_input *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
