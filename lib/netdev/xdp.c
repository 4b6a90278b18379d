/* SPDX-License-Identifier: MIT */
/* xdp: AF_XDP transmit through libxdp's xsk.h. TX only: no XDP program is
 * loaded (XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD), no RX ring.
 *
 * Spec: xdp:IF[:Q][+IF2[:Q2]...][,copy|zc][,ring=N][,aligned]
 *   Each interface is one link. Worker k binds its own UMEM and socket to
 *   hardware queue Q+k of every link (Q defaults to 0): AF_XDP allows one
 *   socket per queue unless sockets share a UMEM, and a shared UMEM shares
 *   its fill and completion rings between the workers, which txscale does
 *   not do (nothing per packet is shared between cores). So N workers need N
 *   queues: for a veth, `ethtool -L IF rx N tx N` (or create it with
 *   numtxqueues/numrxqueues N); the open names the shortfall.
 *   Mode: default lets the kernel choose (zero-copy where the driver supports
 *   it, else copy); "copy" forces XDP_COPY, "zc" forces XDP_ZEROCOPY.
 *
 * UMEM layout: frames are packed at a stride of the frame size rounded up
 * to 64 bytes (unaligned-chunk mode), so a 60-byte frame costs one cache
 * line; "aligned" uses 2048-byte chunks instead. The generator writes frames
 * in place; tx_send posts descriptors and kicks once per burst only when the
 * kernel asks for it (needs_wakeup); completions return frames to a
 * per-socket free FIFO.
 *
 * Counting: a frame counts as sent when its descriptor is posted. A kick
 * answered EBUSY means the driver dropped one frame (copy mode): it is moved
 * to drop_full. Descriptors never completed when the queue closes (bounded
 * wait) are moved to drop_err.
 *
 * Link failure (with a link monitor, txscale/linkmon.h): a lost carrier makes
 * copy mode drop each frame it is given (EBUSY, counted as drop_full on that
 * link); several in a row ask the monitor to read the carrier now. An
 * interface set down answers ENETDOWN: the link is marked down for every
 * queue (txs_linkstate_fail). A down link's socket stays bound; descriptors
 * the kernel has not taken stay in its TX ring and go out when the link
 * returns (or count as drop_err at close). The queue sends on its other
 * links meanwhile; without a monitor a hard error ends the run as before. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "l2.h"
#include "linkstate.h"
#include "refused.h"

#ifdef TXS_HAVE_XDP
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#include "xsk/xsk_util.h"

#define XDP_DEF_RING 512
#define XDP_DRAIN_NS 1000000000ull
#define XDP_KICK_BATCH 32 /* descriptors the kernel sends per copy-mode kick */

enum xdp_mode { XM_AUTO, XM_COPY, XM_ZC };

struct xdp_dev {
	struct txs_l2link links[TXS_MAX_LINKS];
	enum xdp_mode mode;
	bool aligned;
	unsigned ring; /* descriptors and frames per socket, power of two */
	uint32_t slot; /* UMEM bytes per frame */
	bool have_first;
	struct xdp_sock *first; /* queue 0's sockets, bound at open */
};

/* One socket + UMEM: written only by the queue's thread (and the kernel). */
struct xdp_sock {
	struct xsk_ring_prod tx;
	struct xsk_ring_cons cq;
	uint8_t *area;
	uint64_t *freeq;     /* FIFO of free frame addresses */
	uint16_t *flen;      /* frame length posted, per UMEM slot (for exact uncounting) */
	uint32_t slot;
	uint32_t fhead;      /* next free frame to hand out */
	uint32_t ftail;      /* where completions go back */
	uint32_t mask;       /* ring - 1 */
	uint32_t outstanding;/* posted, not completed */
	uint32_t unkicked;
	uint32_t max_len;
	bool fix_mac;
	bool zc;
	int fd;
	int dead;            /* -errno: refused for good, or link down */
	uint32_t stalls;     /* EBUSY kicks in a row (link monitor hint) */
	uint64_t hint_ns;    /* when this socket last asked the monitor to look */
	uint8_t macs[12];
	struct xsk_ring_prod fq;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	size_t area_len;
	const struct txs_l2link *link;
};

struct xdp_q {
	unsigned n_links, deflink;
	unsigned alink;             /* socket tx_alloc hands frames out of */
	uint32_t up;                /* links this queue sends on (its view) */
	uint64_t lseen;             /* link-state word the view was taken from */
	struct txs_linkstate *lst;  /* the device's (monitor), NULL: none */
	struct xdp_sock s[TXS_MAX_LINKS];
} TXS_CACHE_ALIGNED;

static int sock_setup(struct txs_txq *q, const struct xdp_dev *d, struct xdp_sock *s);
static void sock_teardown(struct xdp_sock *s);

_Static_assert(sizeof(enum xdp_mode) == sizeof(int), "xdp_flags sets mode as an int");
static const struct txs_netdev_flag xdp_flags[] = {
	TXS_NETDEV_FLAG("copy", struct xdp_dev, mode, XM_COPY),
	TXS_NETDEV_FLAG("zc", struct xdp_dev, mode, XM_ZC),
	TXS_NETDEV_FLAG("aligned", struct xdp_dev, aligned, true),
};

static int xdp_arg(struct txs_netdev *dev, const char *key, const char *val, void *arg)
{
	struct xdp_dev *d = arg;
	if (strncmp(key, "xdp:", 4) == 0 && !val)
		return txs_l2_add_links(dev, d->links, key + 4, true);
	if (txs_netdev_arg_flag(xdp_flags, TXS_ARRAY_SIZE(xdp_flags), key, val, d))
		return 0;
	if (strcmp(key, "ring") == 0 && val)
		return txs_netdev_arg_pow2(dev, key, val, 64, 32768, &d->ring);
	txs_netdev_set_err(dev, "unknown xdp option '%s' (expected copy, zc, ring=N, aligned, xdp:IF[:Q])", key);
	return -EINVAL;
}

static int xdp_open(struct txs_netdev *dev, const char *args)
{
	struct xdp_dev *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->first = calloc(TXS_MAX_LINKS, sizeof(*d->first));
	if (!d->first) {
		free(d);
		return -ENOMEM;
	}
	d->ring = XDP_DEF_RING;
	int rc = txs_l2_open(dev, d->links, args, true, xdp_arg, d);
	if (rc)
		goto fail;
	uint32_t fs = dev->conf.frame_size < TXS_ETH_MIN_FRAME ? TXS_ETH_MIN_FRAME : dev->conf.frame_size;
	if (d->aligned || fs > 2048) {
		d->aligned = true;
		d->slot = fs <= 2048 ? 2048 : 4096;
		if (fs > 4096) {
			txs_netdev_set_err(dev, "frames of %u bytes exceed an AF_XDP frame (4096)", fs);
			rc = -EMSGSIZE;
			goto fail;
		}
	} else {
		d->slot = (fs + 63) & ~63u;
	}
	for (unsigned l = 0; l < dev->n_links; l++) {
		unsigned have = txs_if_channels(d->links[l].ifname, false);
		unsigned need = d->links[l].queue + dev->conf.max_queues;
		if (have && need > have) {
			txs_netdev_set_err(dev,
					   "%s has %u TX queue(s); %u worker(s) from queue %u need %u: "
					   "ethtool -L %s rx %u tx %u",
					   d->links[l].ifname, have, dev->conf.max_queues, d->links[l].queue, need,
					   d->links[l].ifname, need, need);
			rc = -EINVAL;
			goto fail;
		}
	}
	if ((rc = txs_l2_probe_socket(dev, AF_XDP, "AF_XDP")))
		goto fail;
	TXS_ND(dev)->priv = d;
	/* bind queue 0's sockets now: privileges, the mode and the queue fail
	 * here with their reason rather than in a worker. Queue 0 takes them
	 * (an AF_XDP queue is released lazily, so a probe could not be redone). */
	struct txs_txq probe;
	memset(&probe, 0, sizeof(probe));
	probe.dev = dev;
	for (unsigned l = 0; l < dev->n_links; l++) {
		d->first[l].fd = -1;
		d->first[l].link = &d->links[l];
		if ((rc = sock_setup(&probe, d, &d->first[l])) < 0) {
			for (unsigned k = 0; k < l; k++)
				sock_teardown(&d->first[k]);
			TXS_ND(dev)->priv = NULL;
			goto fail;
		}
	}
	d->have_first = true;
	return 0;
fail:
	free(d->first);
	free(d);
	return rc;
}

static void xdp_close(struct txs_netdev *dev)
{
	struct xdp_dev *d = TXS_ND(dev)->priv;
	if (d->have_first)
		for (unsigned l = 0; l < dev->n_links; l++)
			sock_teardown(&d->first[l]);
	free(d->first);
	free(d);
}

static void sock_teardown(struct xdp_sock *s)
{
	txs_xsk_close(s->xsk, s->umem, s->area, s->area_len);
	free(s->freeq);
	free(s->flen);
	s->flen = NULL;
	s->xsk = NULL;
	s->umem = NULL;
	s->area = NULL;
	s->freeq = NULL;
}

/* One UMEM + socket for s on queue qid; on failure nothing is left. */
static int xsk_bind_once(const struct xdp_dev *d, struct xdp_sock *s, unsigned qid, const char **what)
{
	struct xsk_umem_config uc = {
		.fill_size = 64, /* unused: TX only, but the kernel wants one */
		.comp_size = d->ring,
		.frame_size = d->aligned ? d->slot : 2048,
		.frame_headroom = 0,
		.flags = d->aligned ? 0 : XDP_UMEM_UNALIGNED_CHUNK_FLAG,
	};
	*what = "UMEM registration";
	int rc = xsk_umem__create(&s->umem, s->area, s->area_len, &s->fq, &s->cq, &uc);
	if (rc)
		return rc;
	struct xsk_socket_config sc = {
		.rx_size = 0,
		.tx_size = d->ring,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = XDP_USE_NEED_WAKEUP |
			      (d->mode == XM_COPY ? XDP_COPY : d->mode == XM_ZC ? XDP_ZEROCOPY : 0),
	};
	*what = "AF_XDP bind";
	rc = xsk_socket__create(&s->xsk, s->link->ifname, qid, s->umem, NULL, &s->tx, &sc);
	if (rc) {
		xsk_umem__delete(s->umem);
		s->umem = NULL;
	}
	return rc;
}

static int sock_setup(struct txs_txq *q, const struct xdp_dev *d, struct xdp_sock *s)
{
	struct txs_netdev *dev = q->dev;
	const struct txs_l2link *l = s->link;
	unsigned qid = l->queue + q->id;
	s->area_len = ((size_t)d->ring * d->slot + 4095) & ~(size_t)4095;
	if (s->area_len < 2048)
		s->area_len = 4096;
	s->area = mmap(NULL, s->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->area == MAP_FAILED) {
		s->area = NULL;
		txs_netdev_set_err(dev, "%s: UMEM of %zu bytes: %s", l->ifname, s->area_len, strerror(errno));
		return -ENOMEM;
	}
	s->freeq = malloc(sizeof(*s->freeq) * d->ring);
	s->flen = calloc(d->ring, sizeof(*s->flen));
	s->slot = d->slot;
	if (!s->freeq || !s->flen) {
		sock_teardown(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < d->ring; i++)
		s->freeq[i] = (uint64_t)i * d->slot;
	s->fhead = 0;
	s->ftail = d->ring;
	s->mask = d->ring - 1;
	s->outstanding = s->unkicked = 0;

	struct txs_xsk_print saved;
	txs_xsk_quiet(&saved);
	const char *what = NULL;
	int rc;
	/* a queue whose socket just closed is released lazily: EBUSY for a few
	 * milliseconds, so retry that for up to a second */
	for (unsigned tries = 0;; tries++) {
		rc = xsk_bind_once(d, s, qid, &what);
		if ((rc != -EBUSY && rc != EBUSY) || tries >= 100)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	txs_xsk_loud(&saved);
	if (rc) {
		rc = rc < 0 ? rc : -rc;
		const char *hint = txs_xsk_hint(rc, d->mode == XM_ZC);
		txs_netdev_set_err(dev, "%s queue %u: %s: %s%s", l->ifname, qid, what, strerror(-rc), hint);
		sock_teardown(s);
		return rc;
	}
	s->fd = xsk_socket__fd(s->xsk);
	struct xdp_options opts = { 0 };
	socklen_t ol = sizeof(opts);
	s->zc = getsockopt(s->fd, SOL_XDP, XDP_OPTIONS, &opts, &ol) == 0 && (opts.flags & XDP_OPTIONS_ZEROCOPY);
	uint32_t room = d->slot;
	uint32_t most = l->mtu + TXS_ETH_HLEN + q->dev->conf.vlan_len;
	s->max_len = most < room ? most : room;
	memcpy(s->macs, l->dst_mac, 6);
	memcpy(s->macs + 6, l->src_mac, 6);
	s->fix_mac = memcmp(l->dst_mac, dev->dst_mac, 6) != 0 || memcmp(l->src_mac, dev->src_mac, 6) != 0;
	s->dead = 0;
	return 0;
}

/* Take completed frames back into the free FIFO. */
static inline void drain_cq(struct xdp_sock *s)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&s->cq, s->mask + 1, &idx);
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		s->freeq[(s->ftail + i) & s->mask] = *xsk_ring_cons__comp_addr(&s->cq, idx + i);
	xsk_ring_cons__release(&s->cq, n);
	s->ftail += n;
	s->outstanding -= n;
}

static void uncount(struct txs_txq *q, unsigned l, uint64_t pk, uint64_t to_full)
{
	if (!pk)
		return;
	txs_nq_retract(q, l, pk, 0, to_full);
}

/* Frames dropped kick after kick (EBUSY): what a lost carrier looks like in
 * copy mode before its rtnetlink notification arrives. Ask the link monitor
 * to read the carrier now, at most once per TXS_LINKSTATE_HINT_NS (cold). */
static __attribute__((noinline, cold)) void kick_stalled(struct xdp_q *xq, struct xdp_sock *s)
{
	if (++s->stalls < TXS_LINKSTATE_HINT_STALLS)
		return;
	uint64_t now = txs_now_mono_ns();
	if (now - s->hint_ns < TXS_LINKSTATE_HINT_NS)
		return;
	s->hint_ns = now;
	txs_linkstate_hint(xq->lst);
}

/* Kick the kernel if it asks for it (or `force`). */
static int kick(struct txs_txq *q, struct xdp_sock *s, unsigned l, uint32_t last_len, bool force)
{
	struct xdp_q *xq = TXS_NQ(q)->priv;
	uint32_t pending = s->unkicked;
	s->unkicked = 0;
	if (!force && !xsk_ring_prod__needs_wakeup(&s->tx))
		return 0;
	/* copy mode sends at most a batch per call and answers EAGAIN for the rest */
	unsigned tries = pending / XDP_KICK_BATCH + 1;
	for (unsigned t = 0; t < tries; t++) {
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return 0;
		int e = errno;
		if (e == EBUSY) { /* the driver dropped one frame; the rest wait */
			uncount(q, l, 1, 1);
			TXS_STAT_ADD(TXS_NQ(q)->link[l].bytes, -(uint64_t)last_len);
			if (xq->lst)
				kick_stalled(xq, s);
			continue;
		}
		if (e == EAGAIN)
			continue;
		if (e == ENOBUFS || e == EINTR || e == ENOMEM)
			return 0;
		if (xq->lst) {
			/* one link lost: tell everyone, go on with the others */
			xq->up &= ~(1u << l);
			s->dead = -e;
			txs_linkstate_fail(xq->lst, l, -e);
			return xq->up ? 0 : -e;
		}
		s->dead = -e;
		return -e;
	}
	s->stalls = 0;
	return 0;
}

/* The socket alloc hands out: the last one used if alive, else the queue's
 * default, else the first alive. false: none left. */
static bool pick_alink(struct xdp_q *xq)
{
	if (!xq->s[xq->alink].dead)
		return true;
	if (!xq->s[xq->deflink].dead) {
		xq->alink = xq->deflink;
		return true;
	}
	for (unsigned l = 0; l < xq->n_links; l++)
		if (!xq->s[l].dead) {
			xq->alink = l;
			return true;
		}
	return false;
}

/* The device's link-state word moved: bring this queue's view to it (cold). */
static __attribute__((noinline, cold)) void link_sync(struct xdp_q *xq)
{
	uint64_t w = txs_linkstate_load(xq->lst);
	for (unsigned l = 0; l < xq->n_links; l++) {
		bool want = (uint32_t)w & 1u << l, have = xq->up & 1u << l;
		if (have && !want) {
			xq->up &= ~(1u << l);
			xq->s[l].dead = -ENETDOWN;
		} else if (!have && want && xq->s[l].xsk) {
			xq->up |= 1u << l;
			xq->s[l].dead = 0;
			xq->s[l].stalls = 0;
		}
	}
	xq->lseen = w;
	pick_alink(xq);
}

static inline void link_check(struct xdp_q *xq)
{
	if (xq->lst && TXS_UNLIKELY(__atomic_load_n(&xq->lst->word, __ATOMIC_RELAXED) != xq->lseen))
		link_sync(xq);
}

static int xdp_txq_open(struct txs_netdev *dev, struct txs_txq *q)
{
	struct xdp_dev *d = TXS_ND(dev)->priv;
	struct xdp_q *xq = txs_zalloc_line(sizeof(*xq));
	if (!xq)
		return -ENOMEM;
	xq->n_links = dev->n_links;
	xq->deflink = q->id % dev->n_links;
	xq->alink = xq->deflink;
	xq->up = dev->n_links == 32 ? UINT32_MAX : (1u << dev->n_links) - 1;
	xq->lst = TXS_ND(dev)->linkstate;
	xq->lseen = 0; /* generations start at 1: the first burst takes the view */
	for (unsigned l = 0; l < xq->n_links; l++) {
		xq->s[l].fd = -1;
		xq->s[l].link = &d->links[l];
	}
	TXS_NQ(q)->priv = xq;
	if (q->id == 0 && d->have_first) {
		for (unsigned l = 0; l < xq->n_links; l++)
			xq->s[l] = d->first[l];
		d->have_first = false;
		return 0;
	}
	for (unsigned l = 0; l < xq->n_links; l++) {
		int rc = sock_setup(q, d, &xq->s[l]);
		if (rc < 0) {
			for (unsigned k = 0; k < l; k++)
				sock_teardown(&xq->s[k]);
			free(xq);
			TXS_NQ(q)->priv = NULL;
			return rc;
		}
	}
	return 0;
}

static void xdp_txq_close(struct txs_txq *q)
{
	struct xdp_q *xq = TXS_NQ(q)->priv;
	if (!xq)
		return;
	uint64_t t0 = txs_now_mono_ns();
	for (unsigned l = 0; l < xq->n_links; l++) {
		struct xdp_sock *s = &xq->s[l];
		while (!s->dead) {
			drain_cq(s);
			if (!s->outstanding || txs_now_mono_ns() - t0 > XDP_DRAIN_NS)
				break;
			uint32_t before = s->outstanding;
			kick(q, s, l, 0, true);
			drain_cq(s);
			if (s->outstanding == before) {
				struct timespec ts = { 0, 200000 };
				nanosleep(&ts, NULL);
			}
		}
		if (s->dead && s->freeq)
			drain_cq(s); /* a down link's socket: what it completed went out */
		if (s->outstanding && s->freeq) {
			/* frames not back in the free FIFO were never completed */
			uint8_t *isfree = calloc(s->mask + 1, 1);
			uint64_t by = 0;
			if (isfree) {
				for (uint32_t i = s->fhead; i != s->ftail; i++)
					isfree[s->freeq[i & s->mask] / s->slot] = 1;
				for (uint32_t i = 0; i <= s->mask; i++)
					if (!isfree[i])
						by += s->flen[i];
				free(isfree);
			}
			txs_nq_retract(q, l, s->outstanding, by, false);
		}
		sock_teardown(s);
	}
	free(xq);
	TXS_NQ(q)->priv = NULL;
}

static unsigned xdp_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct xdp_q *xq = TXS_NQ(q)->priv;
	link_check(xq);
	unsigned l = xq->alink;
	struct xdp_sock *s = &xq->s[l];
	if (TXS_UNLIKELY(s->dead)) {
		if (!pick_alink(xq))
			return 0; /* no socket left: the engine's flush reports it */
		l = xq->alink;
		s = &xq->s[l];
	}
	uint32_t avail = s->ftail - s->fhead;
	if (avail < n) {
		drain_cq(s);
		avail = s->ftail - s->fhead;
		if (avail < n)
			n = avail;
	}
	const uint32_t cap = s->max_len;
	for (unsigned i = 0; i < n; i++) {
		uint32_t fi = s->fhead + i;
		txs_buf_give(&b[i], s->area + s->freeq[fi & s->mask], cap, (uint16_t)l, fi);
	}
	return n;
}

/* active-backup: a live socket for a frame whose link's socket is dead
 * (the queue's current one first), or NULL (cold) */
static __attribute__((noinline, cold)) struct xdp_sock *backup_sock(struct xdp_q *xq, unsigned *l)
{
	if (!xq->lst || !xq->lst->reroute || !pick_alink(xq))
		return NULL;
	*l = xq->alink;
	return &xq->s[xq->alink];
}

static unsigned xdp_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	struct xdp_q *xq = TXS_NQ(q)->priv;
	uint32_t touched = 0, cnt[TXS_MAX_LINKS], last[TXS_MAX_LINKS];
	uint64_t by[TXS_MAX_LINKS];
	unsigned i;
	memset(cnt, 0, sizeof(cnt[0]) * xq->n_links);
	memset(last, 0, sizeof(last[0]) * xq->n_links);
	memset(by, 0, sizeof(by[0]) * xq->n_links);
	for (i = 0; i < n; i++) {
		unsigned l = b[i].link < xq->n_links ? b[i].link : 0;
		struct xdp_sock *s = &xq->s[l];
		uint32_t len = b[i].len;
		if (TXS_UNLIKELY(s->dead)) {
			/* chosen for a link that died before it was placed: under
			 * active-backup it goes out on the backup (packet.c's rule) */
			unsigned l2;
			struct xdp_sock *s2 = backup_sock(xq, &l2);
			if (s2 && !s2->dead) {
				l = l2;
				s = s2;
				b[i].link = (uint16_t)l2;
			}
		}
		if (TXS_UNLIKELY(len > s->max_len || len < TXS_ETH_HLEN || s->dead)) {
			refuse_rest(q, b + i, n - i, s->dead ? -s->dead : EMSGSIZE);
			break;
		}
		if (TXS_UNLIKELY(s->ftail == s->fhead)) {
			drain_cq(s);
			if (s->ftail == s->fhead) {
				refuse_rest(q, b + i, n - i, 0);
				break;
			}
		}
		uint64_t addr = s->freeq[s->fhead & s->mask];
		uint8_t *f = s->area + addr;
		if (TXS_UNLIKELY(b[i].data != f))
			memmove(f, b[i].data, len); /* another link's or an older buffer */
		uint32_t idx;
		if (TXS_UNLIKELY(xsk_ring_prod__reserve(&s->tx, 1, &idx) != 1)) {
			refuse_rest(q, b + i, n - i, 0);
			break;
		}
		if (TXS_UNLIKELY(s->fix_mac))
			memcpy(f, s->macs, 12);
		struct xdp_desc *dsc = xsk_ring_prod__tx_desc(&s->tx, idx);
		dsc->addr = addr;
		dsc->len = len;
		dsc->options = 0;
		s->flen[addr / s->slot] = (uint16_t)len;
		s->fhead++;
		cnt[l]++;
		by[l] += len;
		last[l] = len;
		touched |= 1u << l;
	}
	if (TXS_LIKELY(i)) /* the next burst's frames where this one's went: no copy */
		xq->alink = b[i - 1].link < xq->n_links ? b[i - 1].link : 0;
	for (unsigned l = 0; touched; l++, touched >>= 1) {
		if (!(touched & 1))
			continue;
		struct xdp_sock *s = &xq->s[l];
		xsk_ring_prod__submit(&s->tx, cnt[l]);
		s->outstanding += cnt[l];
		s->unkicked += cnt[l];
		txs_nq_count(q, l, cnt[l], by[l]);
		kick(q, s, l, last[l], false);
	}
	return i;
}

static void xdp_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n)
{
	release_refused(q, b, n); /* unsent frames stay at the head of the free FIFO */
}

static int xdp_flush(struct txs_txq *q)
{
	struct xdp_q *xq = TXS_NQ(q)->priv;
	int rc = 0;
	link_check(xq);
	for (unsigned l = 0; l < xq->n_links; l++) {
		struct xdp_sock *s = &xq->s[l];
		if (s->dead) {
			rc = s->dead;
			continue;
		}
		drain_cq(s);
		if (s->outstanding) {
			int k = kick(q, s, l, 0, s->unkicked == 0);
			if (k < 0)
				rc = k;
		}
	}
	/* with a monitor, only a queue with no link left has failed */
	if (xq->lst)
		return xq->up ? 0 : rc ? rc : -ENETDOWN;
	return rc;
}

static int xdp_link(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out)
{
	const struct xdp_dev *d = TXS_ND(dev)->priv;
	if (!d)
		return -EINVAL;
	snprintf(out->ifname, sizeof(out->ifname), "%s", d->links[l].ifname);
	out->ifindex = d->links[l].ifindex;
	return 0;
}

#else /* !TXS_HAVE_XDP */

static int xdp_open(struct txs_netdev *dev, const char *args)
{
	(void)args;
	txs_netdev_set_err(dev, "built without libxdp (install libxdp-dev and rebuild)");
	return -EOPNOTSUPP;
}
static void xdp_close(struct txs_netdev *dev) { (void)dev; }
static int xdp_txq_open(struct txs_netdev *dev, struct txs_txq *q) { (void)dev, (void)q; return -EOPNOTSUPP; }
static void xdp_txq_close(struct txs_txq *q) { (void)q; }
static unsigned xdp_alloc(struct txs_txq *q, struct txs_pktbuf *b, unsigned n) { (void)q, (void)b, (void)n; return 0; }
static unsigned xdp_send(struct txs_txq *q, struct txs_pktbuf *b, unsigned n) { (void)q, (void)b, (void)n; return 0; }
static void xdp_release(struct txs_txq *q, struct txs_pktbuf *b, unsigned n) { (void)q, (void)b, (void)n; }
static int xdp_flush(struct txs_txq *q) { (void)q; return -EOPNOTSUPP; }
static int xdp_link(const struct txs_netdev *dev, unsigned l, struct txs_netdev_link *out)
{
	(void)dev, (void)l, (void)out;
	return -EINVAL;
}
#endif

const struct txs_netdev_ops txs_netdev_xdp_ops = {
	.name = "xdp",
	.usage = "xdp:IF[:Q][+IF2[:Q]..][,copy|zc][,ring=N]  AF_XDP socket per core on queues Q.. (TX only)",
	.open = xdp_open,
	.close = xdp_close,
	.txq_open = xdp_txq_open,
	.txq_close = xdp_txq_close,
	.tx_alloc = xdp_alloc,
	.tx_send = xdp_send,
	.tx_release = xdp_release,
	.tx_flush = xdp_flush,
	.link = xdp_link,
};
