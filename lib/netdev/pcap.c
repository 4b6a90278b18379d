/* SPDX-License-Identifier: MIT */
/* The pcap device: "pcap:FILE" writes exactly the frames that would have
 * been sent, as a libpcap capture (LINKTYPE_ETHERNET, nanosecond timestamps)
 * that tcpdump, tshark and Wireshark read. FILE "-" is standard output.
 *
 * One file per device. Each queue stages its frames (pcap record header and
 * bytes) in a private buffer; the buffer is appended to the file, under the
 * device's mutex, when it is full, at tx_flush and when the queue closes. So
 * records of one queue appear in send order, and queues interleave in batches
 * (timestamps are therefore not globally sorted across queues; per queue they
 * never decrease). Timestamp: CLOCK_REALTIME read when the frame is handed to
 * the device.
 *
 * A GSO buffer (segs > 1, gso_size set) is written as the segments the kernel
 * would put on the wire: headers copied, lengths, IPv4 ID (+1 per segment) and
 * checksums rewritten. Counts: `packets` and `bytes` when a frame is staged;
 * if writing the file fails (ferror on the stream: a full disk, /dev/full, a
 * closed pipe), the staged frames move from packets to drop_err, later sends
 * are refused (drop_err), tx_alloc gives no more buffers and tx_flush returns
 * the error, so the engine stops the worker with it. Counts stay exact: a
 * frame is in packets only once its batch reached the file. A path that
 * cannot be opened is -EINVAL (the caller's bad input).
 */
#ifdef TXS_HAVE_PCAP
#include <errno.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <txscale/pkt.h>
#include "common/alloc.h"
#include "netdev_priv.h"

#define PCAP_POOL 256
#define PCAP_STAGE (256u * 1024u)
#define PCAP_SNAPLEN 262144u /* libpcap's MAXIMUM_SNAPLEN */

struct pcap_dev {
	pcap_t *p;
	pcap_dumper_t *d;
	pthread_mutex_t lock;
	int werr; /* sticky write error (positive errno); atomic */
};

struct pcap_q {
	uint32_t buf_size;
	uint8_t *pool;
	uint8_t *stage; /* records: struct pcap_pkthdr, frame bytes, padded to 8 */
	size_t stage_len, stage_cap;
	uint64_t staged_pk[TXS_MAX_LINKS], staged_by[TXS_MAX_LINKS];
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

#define REC_HDR ((sizeof(struct pcap_pkthdr) + 7) & ~(size_t)7)
#define REC_SIZE(len) (REC_HDR + (((size_t)(len) + 7) & ~(size_t)7))

static int pcap_dev_open(struct txs_netdev *dev, const char *args)
{
	if (!*args) {
		txs_netdev_set_err(dev, "no file: use pcap:FILE");
		return -EINVAL;
	}
	/* FILE[,mtu=N]: the last ",mtu=" with digits after it is the option */
	char file[4096];
	snprintf(file, sizeof(file), "%s", args);
	char *m = strstr(file, ",mtu=");
	for (char *k = m; k; k = strstr(k + 1, ",mtu="))
		m = k;
	if (m && m[5] && strspn(m + 5, "0123456789") == strlen(m + 5)) {
		int rc = txs_netdev_arg_mtu(dev, m + 5);
		if (rc)
			return rc;
		*m = 0;
		args = file;
	}
	struct pcap_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, PCAP_SNAPLEN, PCAP_TSTAMP_PRECISION_NANO);
	if (!d->p) {
		free(d);
		return -ENOMEM;
	}
	errno = 0;
	d->d = pcap_dump_open(d->p, args);
	if (!d->d) {
		/* libpcap's message names the file and the reason; the reason is
		 * the path's (no such directory, permission, ...): bad input */
		int e = errno ? errno : EIO;
		txs_netdev_set_err(dev, "cannot write '%s': %s", args, strerror(e));
		pcap_close(d->p);
		free(d);
		return e == ENOMEM ? -ENOMEM : -EINVAL;
	}
	pthread_mutex_init(&d->lock, NULL);
	dev->uses_stdout = strcmp(args, "-") == 0;
	TXS_ND(dev)->priv = d;
	dev->l2_needed = false;
	return 0;
}

static void pcap_dev_close(struct txs_netdev *dev)
{
	struct pcap_dev *d = TXS_ND(dev)->priv;
	pcap_dump_close(d->d);
	pcap_close(d->p);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int pcap_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	struct pcap_q *pq = txs_zalloc_line(sizeof(*pq));
	if (!pq)
		return -ENOMEM;
	pq->pool = txs_pool_new(dev, PCAP_POOL, &pq->buf_size);
	pq->stage_cap = PCAP_STAGE;
	if (pq->stage_cap < 4 * REC_SIZE(pq->buf_size))
		pq->stage_cap = 4 * REC_SIZE(pq->buf_size);
	pq->stage = malloc(pq->stage_cap);
	if (!pq->pool || !pq->stage) {
		free(pq->pool);
		free(pq->stage);
		free(pq);
		return -ENOMEM;
	}
	TXS_NQ(q)->priv = pq;
	return 0;
}

/* Append the staged records to the file (queue's thread). */
static int stage_write(struct txs_txq *q)
{
	struct pcap_dev *d = TXS_ND(q->dev)->priv;
	struct pcap_q *pq = TXS_NQ(q)->priv;
	if (!pq->stage_len)
		return 0;
	pthread_mutex_lock(&d->lock);
	int e = __atomic_load_n(&d->werr, __ATOMIC_RELAXED);
	if (!e) {
		/* pcap_dump() is fwrite(), which reports nothing: a failed write
		 * sets the stream's error flag (and errno), and stdio may drop the
		 * buffer, so fflush alone can succeed after a failed write. */
		FILE *f = pcap_dump_file(d->d);
		errno = 0;
		for (size_t off = 0; off < pq->stage_len;) {
			const struct pcap_pkthdr *h = (const void *)(pq->stage + off);
			pcap_dump((u_char *)d->d, h, pq->stage + off + REC_HDR);
			off += REC_SIZE(h->caplen);
		}
		if (pcap_dump_flush(d->d) < 0 || ferror(f)) {
			e = errno ? errno : EIO;
			__atomic_store_n(&d->werr, e, __ATOMIC_RELAXED);
		}
	}
	pthread_mutex_unlock(&d->lock);
	for (unsigned l = 0; l < TXS_MAX_LINKS; l++) {
		if (e && pq->staged_pk[l]) {
			txs_nq_retract(q, l, pq->staged_pk[l], pq->staged_by[l], false);
			__atomic_store_n(&TXS_NQ(q)->link[l].last_err, e, __ATOMIC_RELAXED);
		}
		pq->staged_pk[l] = pq->staged_by[l] = 0;
	}
	pq->stage_len = 0;
	return -e;
}

/* Room for one record of `len` bytes; returns where its bytes go. */
static uint8_t *stage_reserve(struct txs_txq *q, unsigned link, uint32_t len)
{
	struct pcap_q *pq = TXS_NQ(q)->priv;
	if (pq->stage_len + REC_SIZE(len) > pq->stage_cap && stage_write(q) < 0)
		return NULL;
	struct pcap_pkthdr *h = (void *)(pq->stage + pq->stage_len);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	h->ts.tv_sec = ts.tv_sec;
	h->ts.tv_usec = ts.tv_nsec; /* nanoseconds: the dump was opened with nano precision */
	h->caplen = h->len = len;
	pq->stage_len += REC_SIZE(len);
	pq->staged_pk[link]++;
	pq->staged_by[link] += len;
	txs_nq_count(q, link, 1, len);
	return (uint8_t *)h + REC_HDR;
}

/* Write the segments of a GSO super-frame, as the kernel would cut it.
 * *unstaged: segments not staged when it fails (checks come first, so only
 * a write error stops it half way; the staged ones were then counted). */
static int put_gso(struct txs_txq *q, unsigned link, const struct txs_pktbuf *b, unsigned *unstaged)
{
	*unstaged = b->segs;
	const uint8_t *f = b->data;
	uint32_t l3 = TXS_ETH_HLEN, l4 = b->l4_off, hl = l4 + TXS_UDP_HLEN;
	if (b->len < hl || l4 < l3)
		return -EINVAL;
	uint16_t et = txs_get_be16(f + 12);
	bool v4 = et == TXS_ETHERTYPE_IPV4;
	if ((!v4 && et != TXS_ETHERTYPE_IPV6) || l4 < l3 + (v4 ? TXS_IPV4_HLEN : TXS_IPV6_HLEN))
		return -EINVAL;
	uint32_t plen = b->len - hl, gs = b->gso_size;
	if (!plen || (plen + gs - 1) / gs != b->segs)
		return -EINVAL;
	bool csum = v4 ? txs_get_be16(f + l4 + 6) != 0 : true;
	uint16_t id0 = v4 ? txs_get_be16(f + l3 + 4) : 0;
	for (unsigned i = 0; i < b->segs; i++) {
		uint32_t sl = plen - i * gs < gs ? plen - i * gs : gs;
		uint32_t flen = hl + sl, wlen = flen < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : flen;
		uint8_t *d = stage_reserve(q, link, wlen);
		*unstaged = b->segs - i;
		if (!d)
			return -EIO;
		memcpy(d, f, hl);
		memcpy(d + hl, f + hl + (size_t)i * gs, sl);
		memset(d + flen, 0, wlen - flen);
		uint8_t *ip = d + l3, *udp = d + l4;
		txs_put_be16(udp + 4, (uint16_t)(TXS_UDP_HLEN + sl));
		txs_put_be16(udp + 6, 0);
		if (v4) {
			txs_put_be16(ip + 2, (uint16_t)(l4 - l3 + TXS_UDP_HLEN + sl));
			txs_put_be16(ip + 4, (uint16_t)(id0 + i));
			txs_put_be16(ip + 10, 0);
			uint16_t c = txs_ipv4_csum((struct txs_ipv4_hdr *)ip);
			memcpy(ip + 10, &c, 2);
			if (csum) {
				c = txs_udp4_csum((struct txs_ipv4_hdr *)ip, udp, TXS_UDP_HLEN + sl);
				memcpy(udp + 6, &c, 2);
			}
		} else {
			txs_put_be16(ip + 4, (uint16_t)(l4 - l3 - TXS_IPV6_HLEN + TXS_UDP_HLEN + sl));
			uint16_t c = txs_udp6_csum((struct txs_ipv6_hdr *)ip, udp, TXS_UDP_HLEN + sl);
			memcpy(udp + 6, &c, 2);
		}
	}
	*unstaged = 0;
	return 0;
}

static void pcap_txq_close(struct txs_txq *q)
{
	struct pcap_q *pq = TXS_NQ(q)->priv;
	stage_write(q);
	free(pq->pool);
	free(pq->stage);
	free(pq);
	TXS_NQ(q)->priv = NULL;
}

static unsigned pcap_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct pcap_q *pq = TXS_NQ(q)->priv;
	const struct pcap_dev *d = TXS_ND(q->dev)->priv;
	if (TXS_UNLIKELY(__atomic_load_n(&d->werr, __ATOMIC_RELAXED)))
		return 0; /* the file failed for good: tx_flush returns the error, the worker stops */
	return txs_pool_give(b, n, PCAP_POOL, pq->pool, pq->buf_size, 0, 0);
}

/* Refused frames keep in priv the number of wire packets to count as
 * drop_err when released. */
static unsigned pcap_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	const struct pcap_dev *d = TXS_ND(q->dev)->priv;
	unsigned i = 0;
	if (TXS_LIKELY(!__atomic_load_n(&d->werr, __ATOMIC_RELAXED))) {
		for (; i < n; i++) {
			unsigned l = b[i].link < q->dev->n_links ? b[i].link : 0;
			if (TXS_UNLIKELY(b[i].segs > 1)) {
				unsigned left = b[i].segs;
				if (b[i].gso_size && put_gso(q, l, &b[i], &left) == 0)
					continue;
				b[i].priv = left; /* a write error may stop it half way */
				for (unsigned k = i + 1; k < n; k++)
					b[k].priv = b[k].segs;
				return i;
			}
			if (TXS_UNLIKELY(b[i].len < TXS_ETH_HLEN || b[i].len > PCAP_SNAPLEN))
				break;
			uint8_t *dst = stage_reserve(q, l, b[i].len);
			if (!dst)
				break;
			memcpy(dst, b[i].data, b[i].len);
		}
	}
	for (unsigned k = i; k < n; k++)
		b[k].priv = b[k].segs;
	return i;
}

static void pcap_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (!b[i].priv)
			continue;
		unsigned l = b[i].link < q->dev->n_links ? b[i].link : 0;
		TXS_STAT_ADD(TXS_NQ(q)->link[l].drop_err, b[i].priv);
		const struct pcap_dev *d = TXS_ND(q->dev)->priv;
		int e = __atomic_load_n(&d->werr, __ATOMIC_RELAXED);
		__atomic_store_n(&TXS_NQ(q)->link[l].last_err, e ? e : EINVAL, __ATOMIC_RELAXED);
		b[i].priv = 0;
	}
}

static int pcap_flush(struct txs_txq *q)
{
	const struct pcap_dev *d = TXS_ND(q->dev)->priv;
	int rc = stage_write(q);
	int e = __atomic_load_n(&d->werr, __ATOMIC_RELAXED);
	return rc ? rc : -e; /* another queue's write error fails this one too */
}

const struct txs_netdev_ops txs_netdev_pcap_ops = {
	.name = "pcap",
	.usage = "pcap:FILE[,mtu=N]  write the frames to a pcap file (nanosecond timestamps), '-' = stdout; MTU 1500",
	.open = pcap_dev_open,
	.close = pcap_dev_close,
	.txq_open = pcap_txq_open,
	.txq_close = pcap_txq_close,
	.tx_alloc = pcap_alloc,
	.tx_send = pcap_send,
	.tx_release = pcap_release,
	.tx_flush = pcap_flush,
};
#endif /* TXS_HAVE_PCAP */
