/* SPDX-License-Identifier: MIT */
/* A send session's counts, one count per fact (docs/design.md): the thread
 * rows are the device's counts of each worker's queue, the link rows the
 * device's per link, and the end-of-run check that they tell one story. */
#include "send_priv.h"

void send_read_links(struct txs_send *s, struct txs_stat_row *links)
{
	const struct txs_netdev *dev = s->dev;
	for (unsigned l = 0; l < dev->n_links; l++) {
		struct txs_link_counters c;
		txs_netdev_link_stats(dev, l, &c);
		links[l] = (struct txs_stat_row){ c.packets, c.bytes, c.drop_full, c.drop_err };
	}
}

/* Thread rows: one count per fact. The device counts frames per queue
 * (sent, refused full, refused with an error, and accepted frames it later
 * learnt never left moved to errors); the engine counts UDP datagrams (e).
 * Where a datagram is one frame (GSO segments count as frames and as
 * datagrams) the device's counts are the row. Where a datagram is fpd > 1
 * IP fragments, the row counts datagrams: the engine's sent and dropped
 * ones, less one for every accepted frame the device later retracted (each
 * may have broken a datagram: counted as an error, never as sent); frames
 * and bytes stay the device's. */
void send_read_threads(struct txs_send *s, struct txs_stat_row *rows)
{
	struct txs_netdev *dev = s->dev;
	const struct txs_stat_row *e = s->erows;
	unsigned n = s->p.nthreads;
	for (unsigned k = 0; k < n; k++) {
		struct txs_link_counters c;
		txs_netdev_queue_stats(dev, k, &c);
		unsigned fpd = txs_engine_worker(s->eng, k)->frames_per_dgram;
		if (fpd <= 1) {
			rows[k] = (struct txs_stat_row){ c.packets, c.bytes, c.drop_full, c.drop_err, c.packets };
			continue;
		}
		uint64_t gone = e[k].frames > c.packets ? e[k].frames - c.packets : 0;
		if (gone > e[k].packets)
			gone = e[k].packets;
		rows[k] = (struct txs_stat_row){ e[k].packets - gone, c.bytes, e[k].drops, gone, c.packets };
	}
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* a device may move counted frames to errors later (pcap write error) */
}

/* d = a - b, row by row; returns whether anything moved */
bool send_rows_sub(struct txs_stat_row *d, const struct txs_stat_row *a, const struct txs_stat_row *b, unsigned n)
{
	bool any = false;
	for (unsigned i = 0; i < n; i++) {
		d[i] = (struct txs_stat_row){ sub0(a[i].packets, b[i].packets), sub0(a[i].bytes, b[i].bytes),
					      sub0(a[i].drops, b[i].drops), sub0(a[i].errors, b[i].errors),
					      sub0(a[i].frames, b[i].frames) };
		any |= d[i].packets || d[i].drops || d[i].errors;
	}
	return any;
}

/* The end-of-run check that the counts are one story (docs/design.md):
 * each worker's frames offered to its queue (engine: accepted + refused)
 * are the frames the device counted on that queue (packets + drops +
 * errors), and the threads' total is the links' total. A difference is a
 * bug in txscale: said on f (when not NULL), and the run fails. */
bool send_check_counts(const struct txs_send *s, FILE *f, const char *prefix)
{
	const struct txs_netdev *dev = s->dev;
	const struct txs_stat_row *e = s->erows, *threads = s->cur, *links = s->links;
	unsigned n = s->p.nthreads;
	bool bad = false, frags = false;
	struct txs_stat_row q = { 0 };
	for (unsigned k = 0; k < n; k++) {
		unsigned fpd = txs_engine_worker(s->eng, k)->frames_per_dgram;
		struct txs_link_counters c;
		txs_netdev_queue_stats(dev, k, &c);
		frags |= fpd > 1;
		uint64_t offered = (e[k].packets + e[k].drops) * (fpd ? fpd : 1);
		uint64_t counted = c.packets + c.drop_full + c.drop_err;
		q.packets += c.packets;
		q.bytes += c.bytes;
		q.drops += c.drop_full;
		q.errors += c.drop_err;
		if (offered != counted && f) {
			fprintf(f, "%scount mismatch (a txscale bug, please report): thread %u offered "
					"%llu frames to --dev %s, which counted %llu (%llu sent, %llu dropped, %llu errors)\n",
				prefix, k, (unsigned long long)offered, dev->spec, (unsigned long long)counted,
				(unsigned long long)c.packets, (unsigned long long)c.drop_full,
				(unsigned long long)c.drop_err);
		}
		bad |= offered != counted;
	}
	struct txs_stat_row t = txs_stat_rows_sum(threads, n), l = txs_stat_rows_sum(links, dev->n_links);
	/* links count frames: the queues' frame counts must be theirs, and where
	 * a datagram is a frame the thread rows are the same numbers */
	if (q.packets != l.packets || q.bytes != l.bytes || q.drops != l.drops || q.errors != l.errors ||
	    t.frames != l.packets ||
	    (!frags && (t.packets != l.packets || t.drops != l.drops || t.errors != l.errors))) {
		if (f)
			fprintf(f, "%scount mismatch (a txscale bug, please report): --dev %s: threads sum to "
				   "%llu packets (%llu frames), %llu drops, %llu errors; links to %llu frames, %llu, %llu\n",
				prefix, dev->spec, (unsigned long long)t.packets, (unsigned long long)t.frames,
				(unsigned long long)t.drops, (unsigned long long)t.errors, (unsigned long long)l.packets,
				(unsigned long long)l.drops, (unsigned long long)l.errors);
		bad = true;
	}
	return bad;
}
