/* SPDX-License-Identifier: MIT */
/* Connected-flow generator: template built once per worker, patched per packet. */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <txscale/gen.h>

struct gen_state {
	struct txs_tmpl t;
	uint64_t seq;
	uint16_t ip_id; /* per-flow counter, random start (kernel inet_id) */
	struct txs_linksel_core *ls; /* NULL: link 0 */
	struct txs_flow_key key;     /* what balance-xor hashes, prepared once */
} TXS_CACHE_ALIGNED;

static uint64_t seed64(uint64_t seed, unsigned id)
{
	uint64_t v = seed;
	if (!v && getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = txs_now_mono_ns();
	v += 0x9e3779b97f4a7c15ull * (id + 1);
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

static int gen_linksel_init(struct gen_state *g, struct txs_linksel *ls, unsigned core,
			    const struct txs_flow_spec *sp)
{
	int rc = txs_linksel_core_open(ls, core, &g->ls);
	if (rc < 0)
		return rc;
	struct txs_flow_key *k = &g->key;
	memcpy(k->src_mac, sp->src_mac, 6);
	memcpy(k->dst_mac, sp->dst_mac, 6);
	k->family = sp->src.family;
	memcpy(k->saddr, sp->src.bytes, sp->src.family == AF_INET ? 4 : 16);
	memcpy(k->daddr, sp->dst.bytes, sp->dst.family == AF_INET ? 4 : 16);
	k->sport = sp->sport;
	k->dport = sp->dport;
	k->proto = TXS_IPPROTO_UDP;
	txs_linksel_key_prepare(ls, k);
	return 0;
}

static int gen_init(struct txs_worker *w, void *confp)
{
	const struct txs_gen_conf *c = confp;
	struct gen_state *g = aligned_alloc(TXS_CACHE_LINE, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	struct txs_flow_spec sp = c->spec;
	sp.flow_id += w->id;
	if (c->spread_sport)
		sp.sport = (uint16_t)(sp.sport + w->id);
	const struct txs_netdev *dev = w->txq->dev;
	if (dev->l2_needed) {
		memcpy(sp.src_mac, dev->src_mac, 6);
		memcpy(sp.dst_mac, dev->dst_mac, 6);
	}
	int rc = txs_tmpl_build(&g->t, &sp);
	if (rc < 0) {
		free(g);
		return rc;
	}
	g->ip_id = (uint16_t)seed64(c->seed, w->id);
	if (c->linksel && (rc = gen_linksel_init(g, c->linksel, w->id, &sp)) < 0) {
		txs_tmpl_free(&g->t);
		free(g);
		return rc;
	}
	w->gen = g;
	return 0;
}

/* Broadcast: frames b[i..] become copies of frame b[first] on the remaining
 * links of mask (its lowest link is already b[first]'s). Returns the next i. */
static unsigned gen_copies(struct txs_pktbuf *b, unsigned first, unsigned i, unsigned n, uint32_t mask)
{
	for (mask &= mask - 1; mask && i < n; mask &= mask - 1, i++) {
		memcpy(b[i].data, b[first].data, b[first].len);
		b[i].len = b[first].len;
		b[i].l4_off = b[first].l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
	}
	return i;
}

static unsigned gen_fill(struct txs_worker *w, struct txs_pktbuf *b, unsigned n, uint64_t now_ns)
{
	struct gen_state *g = w->gen;
	const struct txs_tmpl *t = &g->t;
	if (TXS_UNLIKELY(n && b[0].cap < t->wire_len))
		return 0;
	uint64_t seq = g->seq;
	uint16_t id = g->ip_id;
	unsigned i = 0;
	while (i < n) {
		uint32_t mask = 1; /* links of this packet: one, or every up link (broadcast) */
		int copies = 1;
		if (g->ls) {
			copies = txs_linksel_select_mask(g->ls, &g->key, &mask);
			/* no link up; or a broadcast group that does not fit: next burst
			 * (a group is cut only when the burst cannot hold one at all) */
			if (TXS_UNLIKELY(copies < 0) || TXS_UNLIKELY(copies > (int)(n - i) && i > 0))
				break;
		}
		b[i].len = txs_tmpl_patch(t, b[i].data, id++, seq++, now_ns);
		b[i].l4_off = t->l4_off;
		b[i].segs = 1;
		b[i].link = (uint16_t)__builtin_ctz(mask);
		i++;
		if (TXS_UNLIKELY(copies > 1))
			i = gen_copies(b, i - 1, i, n, mask);
	}
	g->seq = seq;
	g->ip_id = id;
	return i;
}

static void gen_fini(struct txs_worker *w)
{
	struct gen_state *g = w->gen;
	if (!g)
		return;
	txs_linksel_core_close(g->ls);
	txs_tmpl_free(&g->t);
	free(g);
	w->gen = NULL;
}

TXS_API const struct txs_gen_ops txs_udp_gen_ops = {
	.init = gen_init,
	.fill = gen_fill,
	.fini = gen_fini,
};
