/* SPDX-License-Identifier: MIT */
/* Input "xdp:IF[,native|skb][,copy|zc][,ring=N]": AF_XDP receive. An XDP
 * program (xdp_prog.c) attached to IF redirects the UDP datagrams the
 * receiver's filter takes (port or port range, family, -B address) to one
 * AF_XDP socket per receive queue (an XSKMAP keyed by queue), and passes
 * everything else to the stack, which goes on answering pings, ND, other
 * ports. The frames go through the raw inputs' parse and analysis
 * (txs_rx_frame), link 0.
 *
 * Attachment: a BPF link (BPF_LINK_CREATE, BPF_XDP), so the program is
 * detached when the link's file descriptor closes: at close, and by the
 * kernel when the process ends in any way (signal, crash). An interface that
 * already has an XDP program is refused. Where: "native" (the driver's XDP)
 * or "skb" (generic XDP, after the driver built an skb); the default tries
 * native, then skb. Sockets: "zc" forces zero-copy, "copy" forces copy mode;
 * the default lets the kernel choose (zero-copy where the driver has it,
 * else copy; always copy under skb). The summary says which were used.
 *
 * Each socket has its own UMEM of 2 * ring frames (2048 bytes, 4096 when the
 * MTU needs it), all on the fill ring at start; a frame read is handed back
 * to the fill ring in the same poll, so the kernel never waits for us but
 * for a full RX ring (ring=N descriptors, default 16384).
 *
 * Drops where they happen: each socket's XDP_STATISTICS (rx_dropped: no
 * frame or too long; rx_ring_full; rx_fill_ring_empty_descs), and a count
 * kept by the program of matching frames that arrived on a queue without a
 * socket (those go to the stack, not analysed: -P N sockets on an interface
 * with more queues). Arrival time: one CLOCK_REALTIME read per batch (AF_XDP
 * carries no timestamp); a poll woken by new frames waits XR_NAP_NS before
 * reading them, so a datagram's arrival time is up to that late. Frames are
 * seen as the driver (native) or the skb (generic) hands them over: a UDP
 * checksum left to offload by a local sender is not finished here (the
 * packet: input finishes it) and counts as a checksum error; VLAN-tagged frames, IPv4 fragments after the first and
 * IPv6 with extension headers are not redirected. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/alloc.h"
#include "rx_priv.h"

#ifdef TXS_HAVE_XDP
#include <net/if.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <xdp/xsk.h>
#include "xsk/xsk_util.h"
#include "xdp_prog.h"

#define XR_DEF_RING 16384u
#define XR_NAP_NS 500000 /* after a wakeup, before reading: the RX ring lasts far longer */

enum xr_where { XW_AUTO, XW_NATIVE, XW_SKB };
enum xr_bind { XB_AUTO, XB_COPY, XB_ZC };

struct xr_q {
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq; /* unused (RX only); libxdp maps one */
	uint8_t *area;
	uint32_t batch;
	int fd;
	bool zc;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	size_t area_len;
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

struct xr_in {
	int ifindex;
	enum xr_where where;
	enum xr_bind bind;
	unsigned ring, frame;
	int map_fd, count_fd, prog_fd, link_fd;
	bool native;
	unsigned if_queues;
	unsigned n;
	struct xr_q *q;
};

static void xr_close(struct txs_rx_input *in)
{
	struct xr_in *x = in->priv;
	if (!x)
		return;
	/* the link first: from here on the stack gets every frame again */
	if (x->link_fd >= 0)
		close(x->link_fd);
	for (unsigned i = 0; x->q && i < x->n; i++) {
		struct xr_q *q = &x->q[i];
		txs_xsk_close(q->xsk, q->umem, q->area, q->area_len);
	}
	free(x->q);
	if (x->prog_fd >= 0)
		close(x->prog_fd);
	if (x->map_fd >= 0)
		close(x->map_fd);
	if (x->count_fd >= 0)
		close(x->count_fd);
	free(x);
	in->priv = NULL;
}

static int xr_args(struct txs_rx_input *in, struct xr_in *x, char *opts)
{
	char *save = NULL;
	for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (strcmp(o, "native") == 0) {
			x->where = XW_NATIVE;
		} else if (strcmp(o, "skb") == 0) {
			x->where = XW_SKB;
		} else if (strcmp(o, "copy") == 0) {
			x->bind = XB_COPY;
		} else if (strcmp(o, "zc") == 0) {
			x->bind = XB_ZC;
		} else if (strncmp(o, "ring=", 5) == 0) {
			char *end;
			unsigned long v = strtoul(o + 5, &end, 10);
			if (!o[5] || *end || v < 64 || v > 65536 || (v & (v - 1))) {
				txs_rx_input_set_err(in, "bad ring '%s' (expected a power of two 64..65536)", o + 5);
				return -EINVAL;
			}
			x->ring = (unsigned)v;
		} else {
			txs_rx_input_set_err(in, "unknown xdp option '%s' (expected native, skb, copy, zc, ring=N)", o);
			return -EINVAL;
		}
	}
	if (x->where == XW_SKB && x->bind == XB_ZC) {
		txs_rx_input_set_err(in, "zc needs the driver's XDP: 'skb' runs the program after the copy");
		return -EINVAL;
	}
	return 0;
}

static int if_mtu(const char *ifname)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 1500;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int mtu = ioctl(s, SIOCGIFMTU, &ifr) == 0 ? ifr.ifr_mtu : 1500;
	close(s);
	return mtu;
}

/* The maps and the program (not attached). */
static int prog_load(struct txs_rx_input *in, struct xr_in *x)
{
	unsigned slots = x->if_queues > x->n ? x->if_queues : x->n;
	x->map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "txs_rx_xsks", 4, 4, slots, NULL);
	if (x->map_fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "XSKMAP: %s%s", strerror(e), e == EPERM ? " (needs root)" : "");
		return -e;
	}
	x->count_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "txs_rx_nosock", 4, 8, 1, NULL);
	if (x->count_fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "BPF array: %s", strerror(e));
		return -e;
	}
	struct txs_xdp_filter f = {
		.port = in->conf.port,
		.port_hi = in->conf.port_hi,
		.family = in->conf.family,
	};
	static const uint8_t zero[16];
	if (in->conf.have_bind &&
	    memcmp(in->conf.bind.bytes, zero, in->conf.bind.family == AF_INET ? 4 : 16) != 0)
		f.dst = in->conf.bind; /* a wildcard -B takes every address */
	struct bpf_insn insn[TXS_XDP_PROG_MAX];
	size_t n = txs_xdp_prog_build(insn, &f, x->map_fd, x->count_fd);
	static char log[16384];
	LIBBPF_OPTS(bpf_prog_load_opts, po, .log_buf = log, .log_size = sizeof(log), .log_level = 1);
	log[0] = 0;
	x->prog_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "txs_rx", "Dual MIT/GPL", insn, n, &po);
	if (x->prog_fd < 0) {
		int e = errno;
		/* the verifier's last line says why */
		size_t l = strlen(log);
		while (l && log[l - 1] == '\n')
			log[--l] = 0;
		const char *last = strrchr(log, '\n');
		txs_rx_input_set_err(in, "XDP program refused: %s%s%.120s", strerror(e), log[0] ? ": " : "",
				     last ? last + 1 : log);
		return -e;
	}
	return 0;
}

static int attach(struct txs_rx_input *in, struct xr_in *x)
{
	int e = 0;
	for (int pass = 0; pass < 2; pass++) {
		bool native = pass == 0;
		if ((native && x->where == XW_SKB) || (!native && x->where == XW_NATIVE))
			continue;
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE);
		x->link_fd = bpf_link_create(x->prog_fd, x->ifindex, BPF_XDP, &lo);
		if (x->link_fd >= 0) {
			x->native = native;
			return 0;
		}
		e = errno;
		if (e == EBUSY || e == EEXIST) {
			txs_rx_input_set_err(in, "%s already has an XDP program (ip link set %s xdp off, if it is "
					     "not in use)", in->link_names[0], in->link_names[0]);
			return -EBUSY;
		}
	}
	txs_rx_input_set_err(in, "attaching the XDP program (%s) to %s: %s",
			     x->where == XW_NATIVE ? "native" : x->where == XW_SKB ? "skb" : "native, then skb",
			     in->link_names[0], strerror(e));
	return -e;
}

static int q_bind(struct txs_rx_input *in, const struct xr_in *x, struct xr_q *q, unsigned qid,
		  uint32_t bind_flags)
{
	struct xsk_umem_config uc = {
		.fill_size = 2 * x->ring,
		.comp_size = 64,
		.frame_size = x->frame,
		.frame_headroom = 0,
		.flags = 0,
	};
	int rc = xsk_umem__create(&q->umem, q->area, q->area_len, &q->fq, &q->cq, &uc);
	if (rc)
		return rc < 0 ? rc : -rc;
	struct xsk_socket_config sc = {
		.rx_size = x->ring,
		.tx_size = 0,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		.bind_flags = (uint16_t)(XDP_USE_NEED_WAKEUP | bind_flags),
	};
	rc = xsk_socket__create(&q->xsk, in->link_names[0], qid, q->umem, &q->rx, NULL, &sc);
	if (rc) {
		q->xsk = NULL;
		xsk_umem__delete(q->umem);
		q->umem = NULL;
		return rc < 0 ? rc : -rc;
	}
	return 0;
}

/* UMEM, socket on queue qid, every frame on the fill ring, the socket in the
 * XSKMAP. On failure the caller's close releases what was made. */
static int q_open(struct txs_rx_input *in, struct xr_in *x, struct xr_q *q, unsigned qid)
{
	uint32_t nframes = 2 * x->ring;
	q->fd = -1;
	q->batch = in->conf.batch;
	q->area_len = (size_t)nframes * x->frame;
	q->area = mmap(NULL, q->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (q->area == MAP_FAILED) {
		q->area = NULL;
		txs_rx_input_set_err(in, "UMEM of %zu bytes: %s", q->area_len, strerror(errno));
		return -ENOMEM;
	}
	struct txs_xsk_print saved;
	txs_xsk_quiet(&saved);
	int rc = -EBUSY;
	/* a queue whose socket just closed is released lazily: EBUSY for a few
	 * milliseconds, so retry that for up to a second */
	for (unsigned tries = 0; tries < 100; tries++) {
		uint32_t flags = x->bind == XB_COPY || !x->native ? XDP_COPY : x->bind == XB_ZC ? XDP_ZEROCOPY : 0;
		rc = q_bind(in, x, q, qid, flags);
		if (rc != -EBUSY)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	txs_xsk_loud(&saved);
	if (rc) {
		txs_rx_input_set_err(in, "%s queue %u: AF_XDP socket: %s%s", in->link_names[0], qid, strerror(-rc),
				     txs_xsk_hint(rc, x->bind == XB_ZC));
		return rc;
	}
	q->fd = xsk_socket__fd(q->xsk);
	struct xdp_options xo = { 0 };
	socklen_t ol = sizeof(xo);
	q->zc = getsockopt(q->fd, SOL_XDP, XDP_OPTIONS, &xo, &ol) == 0 && (xo.flags & XDP_OPTIONS_ZEROCOPY);
	uint32_t idx;
	if (xsk_ring_prod__reserve(&q->fq, nframes, &idx) != nframes) {
		txs_rx_input_set_err(in, "%s queue %u: fill ring takes fewer than %u frames", in->link_names[0], qid,
				     nframes);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nframes; i++)
		*xsk_ring_prod__fill_addr(&q->fq, idx + i) = (uint64_t)i * x->frame;
	xsk_ring_prod__submit(&q->fq, nframes);
	rc = xsk_socket__update_xskmap(q->xsk, x->map_fd);
	if (rc) {
		rc = rc < 0 ? rc : -rc;
		txs_rx_input_set_err(in, "%s queue %u: XSKMAP insert: %s", in->link_names[0], qid, strerror(-rc));
		return rc;
	}
	return 0;
}

static int xr_open(struct txs_rx_input *in, const char *args)
{
	struct xr_in *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->map_fd = x->count_fd = x->prog_fd = x->link_fd = -1;
	x->ring = XR_DEF_RING;
	in->priv = x;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = 0;
	int rc = 0;
	unsigned idx = buf[0] ? if_nametoindex(buf) : 0;
	if (!buf[0]) {
		txs_rx_input_set_err(in, "no interface: xdp:IFNAME[,native|skb][,copy|zc][,ring=N]");
		rc = -EINVAL;
	} else if (!idx || strlen(buf) >= sizeof(in->link_names[0])) {
		txs_rx_input_set_err(in, "no interface '%s' here", buf);
		rc = -ENODEV;
	} else if (comma) {
		rc = xr_args(in, x, comma + 1);
	}
	if (rc) {
		xr_close(in);
		return rc;
	}
	x->ifindex = (int)idx;
	/* an interface name (if_nametoindex found it) fits IF_NAMESIZE */
	snprintf(in->link_names[0], sizeof(in->link_names[0]), "%.*s", IF_NAMESIZE - 1, buf);
	in->n_links = 1;
	in->raw = true;
	if ((rc = txs_rx_links_check(in, &x->ifindex, 1, in->err, sizeof(in->err))) < 0) {
		xr_close(in);
		return rc;
	}
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		txs_rx_input_set_err(in, "AF_XDP socket: %s%s", strerror(errno),
				     errno == EAFNOSUPPORT ? " (this kernel has no AF_XDP, CONFIG_XDP_SOCKETS)"
				     : errno == EPERM ? " (needs root)" : "");
		xr_close(in);
		return rc;
	}
	close(fd);
	x->n = 0;
	x->if_queues = txs_if_channels(buf, true);
	if (x->if_queues && in->conf.n_queues > x->if_queues) {
		txs_rx_input_set_err(in, "%s has %u RX queue(s); %u thread(s) need a socket each on queues 0..%u: "
				     "ethtool -L %s rx %u tx %u", buf, x->if_queues, in->conf.n_queues,
				     in->conf.n_queues - 1, buf, in->conf.n_queues, in->conf.n_queues);
		xr_close(in);
		return -EINVAL;
	}
	/* the generic path hands the program the whole frame; the driver's
	 * needs headroom below it: 2048-byte frames carry up to 1792 */
	x->frame = if_mtu(buf) + TXS_ETH_HLEN + 2 * TXS_VLAN_HLEN > 2048 - XDP_PACKET_HEADROOM ? 4096 : 2048;
	x->q = txs_zalloc_line(sizeof(*x->q) * in->conf.n_queues);
	if (!x->q) {
		xr_close(in);
		return -ENOMEM;
	}
	if ((rc = prog_load(in, x)) < 0 || (rc = attach(in, x)) < 0) {
		xr_close(in);
		return rc;
	}
	for (unsigned i = 0; i < in->conf.n_queues; i++) {
		x->n = i + 1;
		if ((rc = q_open(in, x, &x->q[i], i)) < 0) {
			xr_close(in);
			return rc;
		}
	}
	/* frames that met no socket while the sockets were being made are
	 * not the run's */
	uint32_t k0 = 0;
	uint64_t zero = 0;
	bpf_map_update_elem(x->count_fd, &k0, &zero, BPF_ANY);
	return 0;
}

static int xr_poll(struct txs_rx_input *in, unsigned qi, struct txs_rx_core *c, int timeout_ms)
{
	struct xr_in *x = in->priv;
	struct xr_q *q = &x->q[qi];
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(&q->rx, q->batch, &idx);
	if (!n) {
		if (timeout_ms <= 0)
			return 0;
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN };
		int r = poll(&pfd, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (r > 0) {
			/* woken by the first frames of a burst: let the burst
			 * gather before reading it, so a wakeup (several us in a
			 * guest) is paid per batch rather than per few frames */
			struct timespec nap = { 0, XR_NAP_NS };
			nanosleep(&nap, NULL);
		}
		if (r == 0) {
			/* idle: is the interface still there and up? */
			int lrc = txs_rx_links_check(in, &x->ifindex, 1, NULL, 0);
			if (lrc < 0)
				return lrc;
		}
		n = xsk_ring_cons__peek(&q->rx, q->batch, &idx);
		if (!n)
			return 0;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint32_t fidx;
	/* every frame is on the fill ring, in the RX ring or here: room for n */
	unsigned got = xsk_ring_prod__reserve(&q->fq, n, &fidx);
	for (unsigned i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);
		uint64_t a = d->addr;
		if (a < q->area_len && d->len <= q->area_len - a)
			txs_rx_frame(c, q->area + a, d->len, TXS_L2_ETH, 0, now);
		if (i < got)
			*xsk_ring_prod__fill_addr(&q->fq, fidx + i) = a - a % x->frame;
	}
	xsk_ring_cons__release(&q->rx, n);
	if (got)
		xsk_ring_prod__submit(&q->fq, got);
	if (xsk_ring_prod__needs_wakeup(&q->fq))
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return (int)n;
}

static void xr_stats(struct txs_rx_input *in, struct txs_rx_input_stats *o)
{
	struct xr_in *x = in->priv;
	o->have_xdp = true;
	snprintf(o->xdp_mode, sizeof(o->xdp_mode), "%s", x->native ? "native" : "skb");
	o->xdp_queues = x->n;
	o->xdp_if_queues = x->if_queues;
	o->xdp_zerocopy = x->n > 0;
	o->have_socket_drops = true;
	for (unsigned i = 0; i < x->n; i++) {
		struct xdp_statistics st;
		socklen_t l = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt(x->q[i].fd, SOL_XDP, XDP_STATISTICS, &st, &l) != 0 || l < sizeof(st))
			o->have_socket_drops = false;
		o->xdp_rx_dropped += st.rx_dropped;
		o->xdp_rx_ring_full += st.rx_ring_full;
		o->xdp_fill_empty += st.rx_fill_ring_empty_descs;
		o->xdp_rx_invalid += st.rx_invalid_descs;
		o->xdp_zerocopy &= x->q[i].zc;
	}
	o->socket_drops = o->xdp_rx_dropped + o->xdp_rx_ring_full;
	uint32_t k0 = 0;
	uint64_t v = 0;
	if (bpf_map_lookup_elem(x->count_fd, &k0, &v) == 0)
		o->xdp_no_socket = v;
}

static int xr_check(struct txs_rx_input *in, char *err, size_t errlen)
{
	struct xr_in *x = in->priv;
	return txs_rx_links_check(in, &x->ifindex, 1, err, errlen);
}
#else
static int xr_open(struct txs_rx_input *in, const char *args)
{
	(void)args;
	txs_rx_input_set_err(in, "built without libxdp/libbpf (AF_XDP)");
	return -EOPNOTSUPP;
}

static void xr_close(struct txs_rx_input *in)
{
	(void)in;
}

static int xr_poll(struct txs_rx_input *in, unsigned qi, struct txs_rx_core *c, int timeout_ms)
{
	(void)in, (void)qi, (void)c, (void)timeout_ms;
	return -EOPNOTSUPP;
}
#define xr_stats NULL
#define xr_check NULL
#endif

const struct txs_rx_input_ops txs_rx_input_xdp_ops = {
	.name = "xdp",
	.usage = "xdp:IFNAME[,native|skb][,copy|zc][,ring=N]",
	.open = xr_open,
	.close = xr_close,
	.poll = xr_poll,
	.stats = xr_stats,
	.check = xr_check,
};
