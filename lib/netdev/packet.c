/* SPDX-License-Identifier: MIT */
/* packet: AF_PACKET with a memory-mapped TPACKET_V2 TX ring per queue and
 * link. The generator writes frames straight into ring frames (no copy);
 * tx_send marks them TP_STATUS_SEND_REQUEST and kicks the kernel once per
 * burst with sendto(MSG_DONTWAIT). Qdisc bypass is on unless ",qdisc".
 *
 * Spec: packet:IF[+IF2...][,packet:IF3][,qdisc][,ring=N][,vnet|novnet]
 *   every interface is one link with its own socket and ring in every queue;
 *   queue k sends on link k % links unless a buffer names another link
 *   (then its frame is copied into that link's ring).
 *
 * Counting: a frame counts as sent (packets, bytes) when tx_send hands it to
 * the ring. Frames the kernel refuses (TP_STATUS_WRONG_FORMAT, a device that
 * went away) or that are still queued when the queue closes are moved from
 * packets to drop_err, so the link counters are exact when the queue closed.
 * A kernel that cannot take a frame now (no socket memory, qdisc full) leaves
 * it in the ring as SEND_REQUEST and it goes out on the next kick: no loss.
 *
 * Link failure (with a link monitor, txscale/linkmon.h): when a link goes
 * down, the frames its ring still holds for the kernel (TP_STATUS_SEND_REQUEST:
 * not taken yet) are taken back and counted as drop_err on that link; the
 * kernel's own ring position is the first of them, so the ring is rewound to
 * it and stays usable when the link returns. Carrier loss with qdisc bypass
 * leaves frames queued (the kernel answers ENOBUFS and keeps them), an
 * interface set down answers ENETDOWN, a deleted one ENXIO/ENODEV: a hard
 * error marks the link down for every queue (txs_linkstate_fail) and the
 * queue goes on with its other links. Without a monitor a hard error ends
 * the queue's run, as before. Frames the kernel already took (SENDING) stay
 * counted as sent: on a real NIC a driver may still drop them on carrier
 * loss (veth cannot). With ",qdisc" the kernel drops silently once the
 * carrier is off (noop qdisc), until the monitor has reacted.
 *
 * vnet (default): the ring frames carry a virtio_net_hdr whose hdr_len is the
 * frame length, so the kernel copies the whole (small) frame into the skb's
 * linear area instead of attaching ring pages as fragments: no page
 * reference per packet and no header pull on the receive side. */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "common/alloc.h"
#include "l2.h"
#include "linkstate.h"
#include "refused.h"

#define PKT_DEF_RING 512
#define PKT_HDR_OFF TPACKET_ALIGN(sizeof(struct tpacket2_hdr)) /* where tx data starts */
#define PKT_VNET_LEN ((uint32_t)sizeof(struct virtio_net_hdr))
#define PKT_DRAIN_NS 1000000000ull /* how long close waits for queued frames */
#define PKT_KICK_FRAMES 64u /* the default burst: frames a kick hands the kernel */

struct pkt_dev {
	struct txs_l2link links[TXS_MAX_LINKS];
	bool qdisc;        /* keep the qdisc (no PACKET_QDISC_BYPASS) */
	bool vnet;         /* virtio_net_hdr in front of each frame */
	unsigned ring;     /* frames per ring, power of two */
	uint32_t frame_sz; /* ring frame size, power of two */
};

/* One TX ring: written only by the queue's thread (and the kernel). */
struct pkt_ring {
	uint8_t *base;
	uint32_t mask;     /* frames - 1 */
	uint32_t fshift;   /* log2 frame size */
	uint32_t head;     /* next frame to hand out / send (free running) */
	uint32_t tail;     /* oldest frame not yet seen back as available */
	uint32_t unkicked; /* frames marked since the last kick */
	uint32_t eth_off;  /* Ethernet frame offset inside a ring frame */
	uint32_t max_len;  /* longest frame accepted: min(room, MTU + 14) */
	bool fix_mac;      /* link MACs differ from the template's (link 0) */
	bool vnet;
	int fd;
	int dead;          /* -errno once the device refused for good, or link down */
	uint32_t stall_at; /* link monitor hint: frame the kernel last refused ... */
	uint32_t stalls;   /* ... that many kicks in a row */
	uint64_t hint_ns;  /* when this ring last asked the monitor to look */
	size_t map_len;
	uint8_t macs[12];  /* dst, src */
	const struct txs_l2link *link;
};

struct pkt_q {
	unsigned n_links, deflink;
	unsigned alink;             /* ring tx_alloc hands frames out of */
	uint32_t up;                /* links this queue sends on (its view) */
	uint64_t lseen;             /* link-state word the view was taken from */
	struct txs_linkstate *lst;  /* the device's (monitor), NULL: none */
	struct pkt_ring ring[TXS_MAX_LINKS];
} TXS_CACHE_ALIGNED;

static inline struct tpacket2_hdr *frame_hdr(const struct pkt_ring *r, uint32_t idx)
{
	return (struct tpacket2_hdr *)(r->base + ((size_t)(idx & r->mask) << r->fshift));
}

static inline bool frame_busy(const struct tpacket2_hdr *h)
{
	uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
	return st & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING | TP_STATUS_WRONG_FORMAT);
}

/* ---- open ---------------------------------------------------------------- */

static const struct txs_netdev_flag pkt_flags[] = {
	TXS_NETDEV_FLAG("qdisc", struct pkt_dev, qdisc, true),
	TXS_NETDEV_FLAG("vnet", struct pkt_dev, vnet, true),
	TXS_NETDEV_FLAG("novnet", struct pkt_dev, vnet, false),
};

static int pkt_arg(struct txs_netdev *dev, const char *key, const char *val, void *arg)
{
	struct pkt_dev *d = arg;
	if (strncmp(key, "packet:", 7) == 0 && !val) /* "--dev packet:a,packet:b" */
		return txs_l2_add_links(dev, d->links, key + 7, false);
	if (txs_netdev_arg_flag(pkt_flags, TXS_ARRAY_SIZE(pkt_flags), key, val, d))
		return 0;
	if (strcmp(key, "ring") == 0 && val)
		return txs_netdev_arg_pow2(dev, key, val, 64, 65536, &d->ring);
	txs_netdev_set_err(dev, "unknown packet option '%s' (expected qdisc, ring=N, vnet, novnet, packet:IF)", key);
	return -EINVAL;
}

static int pkt_open(struct txs_netdev *dev, const char *args)
{
	struct pkt_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->ring = PKT_DEF_RING;
	d->vnet = true;
	int rc = txs_l2_open(dev, d->links, args, false, pkt_arg, d);
	if (rc)
		goto fail;
	uint32_t need = (uint32_t)PKT_HDR_OFF + (d->vnet ? PKT_VNET_LEN : 0) +
			(dev->conf.frame_size < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : dev->conf.frame_size);
	d->frame_sz = 128;
	while (d->frame_sz < need)
		d->frame_sz <<= 1;
	if (d->frame_sz > 65536) {
		txs_netdev_set_err(dev, "frames of %u bytes are too large for a TX ring", dev->conf.frame_size);
		rc = -EMSGSIZE;
		goto fail;
	}
	/* probe now, so that a missing privilege fails the open with its reason */
	if ((rc = txs_l2_probe_socket(dev, AF_PACKET, "AF_PACKET")))
		goto fail;
	TXS_ND(dev)->priv = d;
	/* a kick hands the kernel every frame marked since the last one: 64
	 * per kick costs less per frame than 32 (the TX_RING limit loop's kick) */
	dev->tx_burst = PKT_KICK_FRAMES;
	return 0;
fail:
	free(d);
	return rc;
}

static void pkt_close(struct txs_netdev *dev)
{
	free(TXS_ND(dev)->priv);
}

static int pkt_link(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out)
{
	const struct pkt_dev *d = TXS_ND(dev)->priv;
	if (!d)
		return -EINVAL;
	snprintf(out->ifname, sizeof(out->ifname), "%s", d->links[l].ifname);
	out->ifindex = d->links[l].ifindex;
	return 0;
}

/* ---- rings ----------------------------------------------------------- */

static int ring_setup(struct txs_txq *q, const struct pkt_dev *d, struct pkt_ring *r)
{
	struct txs_netdev *dev = q->dev;
	const struct txs_l2link *l = r->link;
	int one = 1, v = TPACKET_V2;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* protocol 0: receives nothing */
	if (fd < 0)
		return -errno;
	int rc = 0;
	const char *what = "PACKET_VERSION";
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0)
		goto err;
	what = "PACKET_VNET_HDR";
	if (d->vnet && setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0)
		goto err;
	what = "PACKET_QDISC_BYPASS";
	if (!d->qdisc && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
		goto err;
	int sndbuf = 4 << 20; /* room for frames a real NIC has not completed yet */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	size_t total = (size_t)d->ring * d->frame_sz;
	unsigned block = total < 65536 ? (unsigned)total : 65536;
	if (block < d->frame_sz)
		block = d->frame_sz;
	struct tpacket_req req = {
		.tp_block_size = block,
		.tp_block_nr = (unsigned)(total / block),
		.tp_frame_size = d->frame_sz,
		.tp_frame_nr = d->ring,
	};
	what = "PACKET_TX_RING";
	if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0)
		goto err;
	what = "mmap of the TX ring";
	void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED)
		goto err;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = 0, .sll_ifindex = l->ifindex };
	what = "bind";
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rc = -errno;
		munmap(m, total);
		goto err_rc;
	}
	r->fd = fd;
	r->base = m;
	r->map_len = total;
	r->mask = d->ring - 1;
	r->fshift = (uint32_t)__builtin_ctz(d->frame_sz);
	r->head = r->tail = r->unkicked = 0;
	r->vnet = d->vnet;
	r->eth_off = (uint32_t)PKT_HDR_OFF + (d->vnet ? PKT_VNET_LEN : 0);
	uint32_t room = d->frame_sz - r->eth_off;
	uint32_t most = l->mtu + TXS_ETH_HLEN + dev->conf.vlan_len;
	r->max_len = most < room ? most : room;
	r->dead = 0;
	memcpy(r->macs, l->dst_mac, 6);
	memcpy(r->macs + 6, l->src_mac, 6);
	r->fix_mac = memcmp(l->dst_mac, dev->dst_mac, 6) != 0 || memcmp(l->src_mac, dev->src_mac, 6) != 0;
	if (r->vnet) /* zero every vnet header once; per packet only hdr_len changes */
		for (uint32_t i = 0; i < d->ring; i++)
			memset((uint8_t *)frame_hdr(r, i) + PKT_HDR_OFF, 0, PKT_VNET_LEN);
	return 0;
err:
	rc = -errno;
err_rc:
	txs_netdev_set_err(dev, "%s: %s: %s", l->ifname, what, strerror(-rc));
	close(fd);
	return rc;
}

static void ring_teardown(struct pkt_ring *r)
{
	if (r->base)
		munmap(r->base, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	r->base = NULL;
	r->fd = -1;
}

/* Move n frames that were counted as sent to drop_err (cold). */
static void uncount(struct txs_txq *q, struct pkt_ring *r, unsigned l, uint32_t from, uint32_t to)
{
	uint64_t pk = 0, by = 0;
	for (uint32_t i = from; i != to; i++) {
		struct tpacket2_hdr *h = frame_hdr(r, i);
		if (!frame_busy(h))
			continue;
		pk++;
		by += h->tp_len - (r->vnet ? PKT_VNET_LEN : 0);
	}
	if (!pk)
		return;
	txs_nq_retract(q, l, pk, by, false);
}

/* The kernel stopped at a frame it calls malformed (TP_STATUS_WRONG_FORMAT):
 * it will not move past it, so count it and everything queued behind it as
 * errors and start over with a fresh socket and ring (cold). */
static __attribute__((noinline, cold)) void ring_reset(struct txs_txq *q, unsigned l)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	struct pkt_ring *r = &pq->ring[l];
	uncount(q, r, l, r->tail, r->head);
	const struct txs_l2link *link = r->link;
	ring_teardown(r);
	r->link = link;
	int rc = ring_setup(q, TXS_ND(q->dev)->priv, r);
	if (rc < 0)
		r->dead = rc;
}

/* Advance tail over frames the kernel gave back. */
static inline void reclaim(struct txs_txq *q, struct pkt_ring *r, unsigned l)
{
	while (r->tail != r->head) {
		struct tpacket2_hdr *h = frame_hdr(r, r->tail);
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (TXS_UNLIKELY(st & TP_STATUS_WRONG_FORMAT)) {
			ring_reset(q, l);
			return;
		}
		if (st & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING))
			return;
		r->tail++;
	}
}

static __attribute__((noinline, cold)) struct pkt_ring *backup_ring(struct pkt_q *pq, unsigned *l);
static int kick(struct txs_txq *q, struct pkt_ring *r, unsigned l);

/* One frame into ring r at its head, with r's link MACs (cold: a failover
 * moving a dead ring's frames). false when r has no room or is dead. */
static __attribute__((noinline, cold)) bool place(struct txs_txq *q, struct pkt_ring *r, unsigned l,
						  const uint8_t *data, uint32_t len)
{
	if (r->dead || !r->base || len > r->max_len)
		return false;
	if (r->head - r->tail > r->mask) {
		reclaim(q, r, l);
		if (r->head - r->tail > r->mask || r->dead)
			return false;
	}
	struct tpacket2_hdr *h = frame_hdr(r, r->head);
	uint8_t *f = (uint8_t *)h + r->eth_off;
	memmove(f, data, len);
	memcpy(f, r->macs, 12);
	uint32_t tp_len = len;
	if (r->vnet) {
		struct virtio_net_hdr *vh = (struct virtio_net_hdr *)(f - PKT_VNET_LEN);
		memset(vh, 0, sizeof(*vh));
		vh->hdr_len = (uint16_t)len; /* little-endian virtio: x86, arm64 */
		tp_len += PKT_VNET_LEN;
	}
	h->tp_len = tp_len;
	__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
	r->head++;
	r->unkicked++;
	return true;
}

/* Link l is down for this queue (err: why). The frames the kernel has not
 * taken (SEND_REQUEST) are taken back: under active-backup they go out on
 * the backup (counted there instead), as the frames chosen after the
 * failure do; those no live ring takes are counted as drops on the link.
 * The kernel stops at the first frame it cannot send and resumes there, so that
 * everything from the first SEND_REQUEST frame on was never sent. The ring
 * is rewound (cold). */
static __attribute__((noinline, cold)) void link_down(struct txs_txq *q, unsigned l, int err)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	struct pkt_ring *r = &pq->ring[l];
	pq->up &= ~(1u << l);
	if (!r->base) {
		r->dead = err;
		return;
	}
	if (!r->dead)
		reclaim(q, r, l);
	r->dead = err; /* before the backup is chosen: never this ring */
	uint32_t k = r->tail;
	while (k != r->head &&
	       !(__atomic_load_n(&frame_hdr(r, k)->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_SEND_REQUEST))
		k++;
	unsigned l2 = l;
	struct pkt_ring *r2 = k != r->head ? backup_ring(pq, &l2) : NULL;
	if (r2 == r)
		r2 = NULL;
	uint64_t pk = 0, by = 0, mpk = 0, mby = 0;
	for (uint32_t i = k; i != r->head; i++) {
		struct tpacket2_hdr *h = frame_hdr(r, i);
		if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_SEND_REQUEST) {
			uint32_t len = h->tp_len - (r->vnet ? PKT_VNET_LEN : 0);
			if (r2 && place(q, r2, l2, (uint8_t *)h + r->eth_off, len)) {
				mpk++;
				mby += len;
			} else {
				pk++;
				by += len;
			}
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_AVAILABLE, __ATOMIC_RELEASE);
	}
	r->head = k;
	r->unkicked = 0;
	if (mpk) {
		txs_nq_count(q, l, -mpk, -mby);
		txs_nq_count(q, l2, mpk, mby);
		kick(q, r2, l2); /* its own failure is its own link_down */
	}
	if (pk)
		txs_nq_retract(q, l, pk, by, false);
}

/* Link l is back: the ring (rewound when it went down) takes frames again;
 * one that was torn down is set up anew (cold). */
static __attribute__((noinline, cold)) int link_up(struct txs_txq *q, unsigned l)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	struct pkt_ring *r = &pq->ring[l];
	if (!r->base) {
		const struct txs_l2link *link = r->link;
		int rc = ring_setup(q, TXS_ND(q->dev)->priv, r);
		r->link = link;
		if (rc < 0) {
			r->dead = rc;
			return rc;
		}
	}
	r->dead = 0;
	pq->up |= 1u << l;
	return 0;
}

/* The ring alloc hands out: the last one used if it is alive, else the
 * queue's default, else the first alive. false: no ring left. */
static bool pick_alink(struct pkt_q *pq)
{
	if (!pq->ring[pq->alink].dead)
		return true;
	if (!pq->ring[pq->deflink].dead) {
		pq->alink = pq->deflink;
		return true;
	}
	for (unsigned l = 0; l < pq->n_links; l++)
		if (!pq->ring[l].dead) {
			pq->alink = l;
			return true;
		}
	return false;
}

/* The device's link-state word moved: bring this queue's view to it (cold). */
static __attribute__((noinline, cold)) void link_sync(struct txs_txq *q)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	uint64_t w = txs_linkstate_load(pq->lst);
	for (unsigned l = 0; l < pq->n_links; l++) {
		bool want = (uint32_t)w & 1u << l, have = pq->up & 1u << l;
		if (have && !want)
			link_down(q, l, -ENETDOWN);
		else if (!have && want && link_up(q, l) < 0)
			txs_linkstate_fail(pq->lst, l, pq->ring[l].dead);
	}
	pq->lseen = w;
	pick_alink(pq);
}

static inline void link_check(struct txs_txq *q, struct pkt_q *pq)
{
	if (pq->lst && TXS_UNLIKELY(__atomic_load_n(&pq->lst->word, __ATOMIC_RELAXED) != pq->lseen))
		link_sync(q);
}

/* The kernel refused a frame (ENOBUFS: it dropped the skb and keeps the
 * frame queued). The same frame refused kick after kick is what a lost
 * carrier looks like before its rtnetlink notification arrives: ask the
 * link monitor to read the carrier now, at most once per
 * TXS_LINKSTATE_HINT_NS (cold). */
static __attribute__((noinline, cold)) void kick_stalled(struct txs_txq *q, struct pkt_ring *r, unsigned l)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	reclaim(q, r, l);
	if (r->tail != r->stall_at) {
		r->stall_at = r->tail;
		r->stalls = 1;
		return;
	}
	if (++r->stalls < TXS_LINKSTATE_HINT_STALLS)
		return;
	uint64_t now = txs_now_mono_ns();
	if (now - r->hint_ns < TXS_LINKSTATE_HINT_NS)
		return;
	r->hint_ns = now;
	txs_linkstate_hint(pq->lst);
}

/* Kick the kernel. Transient refusals leave the frames queued for the next
 * kick; a hard error (device down or gone) kills the ring. */
static int kick(struct txs_txq *q, struct pkt_ring *r, unsigned l)
{
	r->unkicked = 0;
	if (sendto(r->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	int e = errno;
	struct pkt_q *pq = TXS_NQ(q)->priv;
	if (e == EAGAIN || e == ENOBUFS || e == EINTR || e == ENOMEM || e == EBUSY) {
		if (e == ENOBUFS && pq->lst)
			kick_stalled(q, r, l);
		return 0;
	}
	if (e != ENETDOWN && e != ENXIO && e != ENODEV) {
		/* a frame the kernel refused (EMSGSIZE, EINVAL): it stopped at a
		 * WRONG_FORMAT frame, which reclaim counts and clears */
		uint32_t st = __atomic_load_n(&frame_hdr(r, r->tail)->tp_status, __ATOMIC_ACQUIRE);
		if (st & TP_STATUS_WRONG_FORMAT) {
			reclaim(q, r, l);
			return r->dead;
		}
	}
	if (pq->lst) {
		/* one link lost: take its frames back, tell everyone, go on */
		link_down(q, l, -e);
		txs_linkstate_fail(pq->lst, l, -e);
		return pq->up ? 0 : -e;
	}
	uncount(q, r, l, r->tail, r->head);
	r->tail = r->head;
	r->dead = -e;
	return -e;
}

static int pkt_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	struct pkt_dev *d = TXS_ND(dev)->priv;
	struct pkt_q *pq = txs_zalloc_line(sizeof(*pq));
	if (!pq)
		return -ENOMEM;
	pq->n_links = dev->n_links;
	pq->deflink = q->id % dev->n_links;
	pq->alink = pq->deflink;
	pq->up = dev->n_links == 32 ? UINT32_MAX : (1u << dev->n_links) - 1;
	pq->lst = TXS_ND(dev)->linkstate;
	pq->lseen = 0; /* generations start at 1: the first burst takes the view */
	for (unsigned l = 0; l < pq->n_links; l++) {
		pq->ring[l].fd = -1;
		pq->ring[l].link = &d->links[l];
	}
	TXS_NQ(q)->priv = pq;
	for (unsigned l = 0; l < pq->n_links; l++) {
		int rc = ring_setup(q, d, &pq->ring[l]);
		if (rc < 0) {
			for (unsigned k = 0; k < l; k++)
				ring_teardown(&pq->ring[k]);
			free(pq);
			TXS_NQ(q)->priv = NULL;
			return rc;
		}
	}
	return 0;
}

static void pkt_txq_close(struct txs_txq *q)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	if (!pq)
		return;
	/* let queued frames go out, bounded in time; what remains was not sent */
	uint64_t t0 = txs_now_mono_ns();
	for (unsigned l = 0; l < pq->n_links; l++) {
		struct pkt_ring *r = &pq->ring[l];
		while (!r->dead && r->base) {
			reclaim(q, r, l);
			if (r->tail == r->head || txs_now_mono_ns() - t0 > PKT_DRAIN_NS)
				break;
			uint32_t before = r->tail;
			kick(q, r, l);
			reclaim(q, r, l);
			if (r->tail == before) {
				struct timespec ts = { 0, 200000 };
				nanosleep(&ts, NULL);
			}
		}
		if (!r->dead && r->base)
			uncount(q, r, l, r->tail, r->head);
		ring_teardown(r);
	}
	free(pq);
	TXS_NQ(q)->priv = NULL;
}

/* ---- hot path ------------------------------------------------------------ */

static unsigned pkt_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	link_check(q, pq);
	unsigned l = pq->alink;
	struct pkt_ring *r = &pq->ring[l];
	if (TXS_UNLIKELY(r->dead)) {
		if (!pick_alink(pq))
			return 0; /* no ring left: the engine's flush then reports the error */
		l = pq->alink;
		r = &pq->ring[l];
	}
	uint32_t avail = r->mask + 1 - (r->head - r->tail);
	if (avail < n) {
		reclaim(q, r, l);
		if (TXS_UNLIKELY(r->dead))
			return 0;
		avail = r->mask + 1 - (r->head - r->tail);
		if (avail < n)
			n = avail;
	}
	const uint32_t cap = r->max_len;
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx = r->head + i;
		txs_buf_give(&b[i], (uint8_t *)frame_hdr(r, idx) + r->eth_off, cap, (uint16_t)l, idx);
	}
	return n;
}

/* A free frame at head for a buffer that does not sit there (cold). */
static __attribute__((noinline)) uint8_t *copy_in(struct txs_txq *q, struct pkt_ring *r, unsigned l,
						  const struct txs_pktbuf *b)
{
	if (r->head - r->tail > r->mask) {
		reclaim(q, r, l);
		if (r->head - r->tail > r->mask || r->dead)
			return NULL;
	}
	uint8_t *f = (uint8_t *)frame_hdr(r, r->head) + r->eth_off;
	memmove(f, b->data, b->len);
	return f;
}

/* active-backup: a live ring for a frame whose link's ring is dead (the
 * queue's current ring first), or NULL (cold) */
static __attribute__((noinline, cold)) struct pkt_ring *backup_ring(struct pkt_q *pq, unsigned *l)
{
	if (!pq->lst || !pq->lst->reroute || !pick_alink(pq))
		return NULL;
	*l = pq->alink;
	return &pq->ring[pq->alink];
}

static unsigned pkt_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	uint32_t touched = 0;
	uint64_t pk[TXS_MAX_LINKS], by[TXS_MAX_LINKS];
	unsigned i;
	memset(pk, 0, sizeof(pk[0]) * pq->n_links);
	memset(by, 0, sizeof(by[0]) * pq->n_links);
	for (i = 0; i < n; i++) {
		unsigned l = b[i].link < pq->n_links ? b[i].link : 0;
		struct pkt_ring *r = &pq->ring[l];
		uint32_t len = b[i].len;
		if (TXS_UNLIKELY(r->dead)) {
			/* a frame chosen for a link that died before it was placed: under
			 * active-backup it goes out on the backup, as the bonding driver's
			 * next transmit would (its MACs are the template's until placed) */
			unsigned l2;
			struct pkt_ring *r2 = backup_ring(pq, &l2);
			if (r2 && !r2->dead) {
				l = l2;
				r = r2;
				b[i].link = (uint16_t)l2;
			}
		}
		if (TXS_UNLIKELY(len > r->max_len || len < TXS_ETH_HLEN || r->dead)) {
			refuse_rest(q, b + i, n - i, r->dead ? -r->dead : EMSGSIZE);
			break;
		}
		struct tpacket2_hdr *h = frame_hdr(r, r->head);
		uint8_t *f = (uint8_t *)h + r->eth_off;
		if (TXS_UNLIKELY(b[i].data != f || r->head - r->tail > r->mask)) {
			if (!(f = copy_in(q, r, l, &b[i]))) {
				refuse_rest(q, b + i, n - i, r->dead ? -r->dead : 0);
				break;
			}
		}
		if (TXS_UNLIKELY(r->fix_mac))
			memcpy(f, r->macs, 12);
		uint32_t tp_len = len;
		if (r->vnet) {
			struct virtio_net_hdr *vh = (struct virtio_net_hdr *)(f - PKT_VNET_LEN);
			vh->hdr_len = (uint16_t)len; /* little-endian virtio: x86, arm64 */
			tp_len += PKT_VNET_LEN;
		}
		h->tp_len = tp_len;
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		r->head++;
		r->unkicked++;
		pk[l] += 1;
		by[l] += len;
		touched |= 1u << l;
	}
	if (TXS_LIKELY(i)) /* the next burst's frames where this one's went: no copy */
		pq->alink = b[i - 1].link < pq->n_links ? b[i - 1].link : 0;
	for (unsigned l = 0; touched; l++, touched >>= 1) {
		if (!(touched & 1))
			continue;
		txs_nq_count(q, l, pk[l], by[l]);
		kick(q, &pq->ring[l], l); /* once per burst and link */
	}
	return i;
}

static void pkt_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	release_refused(q, b, n); /* unsent frames stay free in the ring */
}

static int pkt_flush(struct txs_txq *q)
{
	struct pkt_q *pq = TXS_NQ(q)->priv;
	int rc = 0;
	link_check(q, pq);
	for (unsigned l = 0; l < pq->n_links; l++) {
		struct pkt_ring *r = &pq->ring[l];
		if (r->dead) {
			rc = r->dead;
			continue;
		}
		reclaim(q, r, l);
		if (r->tail != r->head) {
			int k = kick(q, r, l);
			if (k < 0)
				rc = k;
		}
	}
	/* with a monitor, only a queue with no link left has failed */
	if (pq->lst)
		return pq->up ? 0 : rc ? rc : -ENETDOWN;
	return rc;
}

const struct txs_netdev_ops txs_netdev_packet_ops = {
	.name = "packet",
	.usage = "packet:IF[+IF2..][,qdisc][,ring=N][,novnet]  AF_PACKET TX ring per core and link (qdisc bypass)",
	.open = pkt_open,
	.close = pkt_close,
	.txq_open = pkt_txq_open,
	.txq_close = pkt_txq_close,
	.tx_alloc = pkt_alloc,
	.tx_send = pkt_send,
	.tx_release = pkt_release,
	.tx_flush = pkt_flush,
	.link = pkt_link,
};
