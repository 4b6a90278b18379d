/* SPDX-License-Identifier: MIT */
/* Fuzz target: the packet parser (txs_parse), the payload header reader
 * (txs_ph_read), lib/rx's inline parse fast path and header reader checked
 * against them (differential: the fast path may decline, never disagree), the
 * whole per-packet receive path (txs_rx_frame / txs_rx_dgram) with its
 * counting invariants, and the sender-summary JSON reader.
 *
 * Input: byte 0 selects the mode, the rest is the data:
 *   0 Ethernet frame, 1 bare IP packet, 2 UDP payload, 3 summary JSON text.
 * Any violated property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <txscale/rx.h>
#include "rx/rx_priv.h"

#include "fuzz_rx.h"

static struct txs_rx_core *core;
static unsigned calls;

static void check_result(void)
{
	struct txs_rx_result *r;
	CHECK(txs_rx_result_build(&r, &core, 1, NULL) == 0);
	CHECK(r->received == r->unique + r->duplicates + r->late + r->unsequenced + r->overflow);
	uint64_t bad = 0;
	for (unsigned k = 0; k < TXS_RX_BAD__COUNT; k++)
		bad += r->bad[k];
	const enum txs_perr mal[] = { TXS_PERR_TRUNCATED, TXS_PERR_BAD_HDR, TXS_PERR_IP_CSUM, TXS_PERR_UDP_LEN,
				      TXS_PERR_UDP_CSUM };
	for (size_t k = 0; k < sizeof(mal) / sizeof(mal[0]); k++)
		bad += r->perr[mal[k]];
	CHECK(bad == r->malformed);
	CHECK(r->perr[TXS_PERR_NOT_IP] + r->perr[TXS_PERR_NOT_UDP] + r->perr[TXS_PERR_FRAGMENT] + r->filtered ==
	      r->ignored);
	for (unsigned i = 0; i < r->n_flows; i++) {
		const struct txs_rx_flow *f = &r->flows[i];
		if (f->sequenced)
			CHECK(f->received == f->unique + f->duplicates + f->late);
		CHECK(f->reordered <= f->unique);
		CHECK(!f->sequenced || (f->unique <= f->span && f->lost == f->span - f->unique));
	}
	uint64_t lp = 0;
	for (unsigned l = 0; l < r->n_links; l++)
		lp += r->links[l].packets;
	CHECK(lp == r->received);
	fuzz_rx_write(r);
	txs_rx_result_free(r);
}

static void differential(const uint8_t *d, size_t n, enum txs_l2 l2)
{
	struct txs_pkt_info pi;
	struct rx_pkt k;
	enum txs_perr e = txs_parse(d, n, l2, &pi);
	CHECK((unsigned)e < TXS_PERR__COUNT);
	if (e == TXS_PERR_OK) {
		CHECK(pi.payload >= d && pi.payload + pi.payload_len <= d + n);
		struct txs_ph ph;
		enum txs_ph_kind pk = txs_ph_read(pi.payload, pi.payload_len, &ph);
		CHECK(txs_ph_len(pk) <= pi.payload_len);
	}
	if (rx_parse_fast(d, n, l2, &k)) {
		CHECK(e == TXS_PERR_OK);
		CHECK(k.family == pi.family);
		size_t al = k.family == AF_INET ? 4 : 16;
		CHECK(memcmp(k.src, pi.src.bytes, al) == 0 && memcmp(k.dst, pi.dst.bytes, al) == 0);
		CHECK(k.sport == pi.sport && k.dport == pi.dport && k.tos == pi.tos);
		CHECK(k.family != AF_INET || k.ip_id == pi.ip_id);
		CHECK(k.payload == pi.payload && k.payload_len == pi.payload_len);
		CHECK(k.n_vlan == pi.n_vlan && memcmp(k.vlan_tci, pi.vlan_tci, k.n_vlan * 2) == 0);
	}
}

static void ph_differential(const uint8_t *d, size_t n)
{
	struct txs_ph a, b;
	memset(&b, 0, sizeof(b));
	enum txs_ph_kind ka = txs_ph_read(d, n, &a), kb = rx_ph_read(d, n, &b);
	CHECK(ka == kb);
	if (ka != TXS_PH_NONE)
		CHECK(a.flow == b.flow && a.seq == b.seq && a.ts_ns == b.ts_ns && b.kind == ka);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!core) {
		/* small tables so overflow, window and pair limits are reached */
		struct txs_rx_conf c = { .window = 64, .max_flows = 64, .n_links = 3, .max_id_pairs = 4,
					 .max_jump = 1u << 20 };
		CHECK(txs_rx_core_create(&core, &c) == 0);
		atexit(check_result); /* the replay of a small corpus checks at least once */
	}
	if (size < 1)
		return 0;
	unsigned mode = data[0] & 3, link = (data[0] >> 2) % 4;
	const uint8_t *d = data + 1;
	size_t n = size - 1;
	/* a copy of exactly n bytes: reads past it are caught */
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return 0;
	memcpy(buf, d, n);
	uint64_t ts = n >= 8 ? txs_get_be64(buf) : 0;
	switch (mode) {
	case 0:
	case 1: {
		enum txs_l2 l2 = mode == 0 ? TXS_L2_ETH : TXS_L2_NONE;
		differential(buf, n, l2);
		txs_rx_frame(core, buf, n, l2, link, ts);
		break;
	}
	case 2: {
		ph_differential(buf, n);
		struct txs_rx_tuple t = { 0 };
		t.src.family = AF_INET;
		t.sport = (uint16_t)n;
		txs_rx_dgram(core, buf, n, &t, link, ts);
		break;
	}
	default: {
		struct txs_rx_expect *e = malloc(sizeof(*e));
		if (e) {
			if (txs_rx_expect_parse(e, (const char *)buf, n) == 0) {
				CHECK(e->have_total && e->n_flows <= TXS_MAX_CORES);
				uint64_t s = 0;
				for (unsigned i = 0; i < e->n_flows; i++)
					s += e->per_flow[i];
				CHECK(e->n_flows == 0 || s == e->total);
				struct txs_rx_result *r;
				CHECK(txs_rx_result_build(&r, &core, 1, e) == 0);
				txs_rx_result_free(r);
			}
			free(e);
		}
		break;
	}
	}
	free(buf);
	if (++calls % 64 == 0)
		check_result();
	return 0;
}
