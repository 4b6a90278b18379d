/* SPDX-License-Identifier: MIT */
/* Input "packet:IF[,IF...]": AF_PACKET TPACKET_V3 receive rings, one per
 * queue, raw frames (IP headers visible). One interface: the sockets are
 * bound to it. Several: the sockets are bound to all interfaces and a
 * classic BPF filter keeps the listed ones (so one flow arriving on several
 * links still meets one queue); the link is the arrival interface. With more
 * than one queue the sockets join a PACKET_FANOUT_HASH group (flow hash:
 * each flow stays on one queue). Outgoing packets are filtered out.
 * Arrival time: the kernel's per-packet timestamp (CLOCK_REALTIME). */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "common/alloc.h"
#include "rx_priv.h"

#define BLOCK_SIZE (1u << 20)
#define FRAME_SIZE 2048u
#define RETIRE_MS 10

struct pk_q {
	int fd;
	uint8_t *ring;
	unsigned n_blocks, cur;
	uint64_t packets, drops; /* PACKET_STATISTICS, accumulated (the kernel resets on read) */
	uint64_t csum_completed; /* partial UDP checksums finished before parsing */
	TXS_CACHE_GUARD;
} TXS_CACHE_ALIGNED;

struct pk_in {
	unsigned n;
	struct pk_q *q;
	unsigned n_if;
	int ifindex[TXS_MAX_LINKS];
};

int txs_rx_links_check(const struct txs_rx_input *in, const int *ifindex, unsigned n_if, char *err, size_t errlen)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = 0;
	for (unsigned i = 0; i < n_if && rc == 0; i++) {
		struct ifreq ifr;
		memset(&ifr, 0, sizeof(ifr));
		if (!if_indextoname((unsigned)ifindex[i], ifr.ifr_name)) {
			if (err)
				snprintf(err, errlen, "interface '%s' no longer exists", in->link_names[i]);
			rc = -ENODEV;
		} else if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
			if (err)
				snprintf(err, errlen, "interface '%s' is down", in->link_names[i]);
			rc = -ENETDOWN;
		}
	}
	if (s >= 0)
		close(s);
	return rc;
}

static int pk_check(struct txs_rx_input *in, char *err, size_t errlen)
{
	struct pk_in *p = in->priv;
	return txs_rx_links_check(in, p->ifindex, p->n_if, err, errlen);
}

static int pk_filter(int fd, const struct pk_in *p)
{
	struct sock_filter f[4 + TXS_MAX_LINKS + 1];
	unsigned n = p->n_if, k = 0;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, (uint8_t)(n + 1), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_IFINDEX));
	for (unsigned i = 0; i < n; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)p->ifindex[i],
						      (uint8_t)(n - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	struct sock_fprog prog = { .len = (unsigned short)k, .filter = f };
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

static int q_open(struct txs_rx_input *in, struct pk_in *p, struct pk_q *q, unsigned id, int fanout_id)
{
	/* protocol 0: no packets arrive before the filter and ring are set up */
	q->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (q->fd < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "AF_PACKET socket: %s%s", strerror(e), e == EPERM ? " (needs root)" : "");
		return -e;
	}
	int v = TPACKET_V3;
	if (setsockopt(q->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "TPACKET_V3: %s", strerror(e));
		return -e;
	}
	if (pk_filter(q->fd, p) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "SO_ATTACH_FILTER: %s", strerror(e));
		return -e;
	}
	q->n_blocks = in->conf.ring_blocks;
	struct tpacket_req3 req = {
		.tp_block_size = BLOCK_SIZE,
		.tp_block_nr = q->n_blocks,
		.tp_frame_size = FRAME_SIZE,
		.tp_frame_nr = (BLOCK_SIZE / FRAME_SIZE) * q->n_blocks,
		.tp_retire_blk_tov = RETIRE_MS,
	};
	if (setsockopt(q->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "PACKET_RX_RING (%u x 1 MiB): %s", q->n_blocks, strerror(e));
		return -e;
	}
	void *m = mmap(NULL, (size_t)BLOCK_SIZE * q->n_blocks, PROT_READ | PROT_WRITE, MAP_SHARED, q->fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		txs_rx_input_set_err(in, "mmap ring: %s", strerror(e));
		return -e;
	}
	q->ring = m;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = p->n_if == 1 ? p->ifindex[0] : 0,
	};
	if (bind(q->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		int e = errno;
		txs_rx_input_set_err(in, "bind: %s", strerror(e));
		return -e;
	}
	if (in->conf.n_queues > 1) {
		int fo = (fanout_id & 0xffff) | (PACKET_FANOUT_HASH << 16);
		if (setsockopt(q->fd, SOL_PACKET, PACKET_FANOUT, &fo, sizeof(fo)) < 0) {
			int e = errno;
			txs_rx_input_set_err(in, "PACKET_FANOUT (queue %u): %s", id, strerror(e));
			return -e;
		}
	}
	return 0;
}

static void pk_close(struct txs_rx_input *in)
{
	struct pk_in *p = in->priv;
	if (!p)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		if (p->q[i].ring)
			munmap(p->q[i].ring, (size_t)BLOCK_SIZE * p->q[i].n_blocks);
		if (p->q[i].fd >= 0)
			close(p->q[i].fd);
	}
	free(p->q);
	free(p);
	in->priv = NULL;
}

static int pk_open(struct txs_rx_input *in, const char *args)
{
	struct pk_in *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	in->priv = p;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", args ? args : "");
	char *save = NULL;
	for (char *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (p->n_if >= TXS_MAX_LINKS) {
			txs_rx_input_set_err(in, "at most %d interfaces", TXS_MAX_LINKS);
			pk_close(in);
			return -EINVAL;
		}
		unsigned idx = if_nametoindex(name);
		if (!idx || strlen(name) >= sizeof(in->link_names[0])) {
			txs_rx_input_set_err(in, "no interface '%s' here", name);
			pk_close(in);
			return -ENODEV;
		}
		for (unsigned i = 0; i < p->n_if; i++)
			if (p->ifindex[i] == (int)idx) {
				txs_rx_input_set_err(in, "interface '%s' given twice", name);
				pk_close(in);
				return -EINVAL;
			}
		snprintf(in->link_names[p->n_if], sizeof(in->link_names[0]), "%s", name);
		p->ifindex[p->n_if++] = (int)idx;
	}
	if (!p->n_if) {
		txs_rx_input_set_err(in, "no interface: packet:IFNAME[,IFNAME...]");
		pk_close(in);
		return -EINVAL;
	}
	in->n_links = p->n_if;
	in->raw = true;
	/* a ring on a downed interface would receive nothing and say nothing */
	int lrc = txs_rx_links_check(in, p->ifindex, p->n_if, in->err, sizeof(in->err));
	if (lrc < 0) {
		pk_close(in);
		return lrc;
	}
	p->q = txs_zalloc_line(sizeof(*p->q) * in->conf.n_queues);
	if (!p->q) {
		pk_close(in);
		return -ENOMEM;
	}
	static unsigned group_seq;
	int fanout_id = (int)((unsigned)getpid() ^ (__atomic_fetch_add(&group_seq, 1, __ATOMIC_RELAXED) << 12));
	for (unsigned i = 0; i < in->conf.n_queues; i++) {
		p->q[i].fd = -1;
		p->n = i + 1;
		int rc = q_open(in, p, &p->q[i], i, fanout_id);
		if (rc < 0) {
			pk_close(in);
			return rc;
		}
	}
	return 0;
}

static inline unsigned link_of(const struct pk_in *p, int ifindex)
{
	for (unsigned i = 0; i < p->n_if; i++)
		if (p->ifindex[i] == ifindex)
			return i;
	return 0;
}

/* The kernel marks a frame TP_STATUS_CSUMNOTREADY when its checksum was left
 * to offload (a local sender on veth/lo: CHECKSUM_PARTIAL): the UDP check
 * field then holds only the pseudo-header sum. Finish it in place, as the
 * offload would have, so the parser sees the datagram as it would be on a
 * wire. Returns true if it did. */
static bool csum_complete(uint8_t *net, size_t avail)
{
	size_t l4, end;
	if (avail >= TXS_IPV4_HLEN && (net[0] >> 4) == 4) {
		size_t hl = (size_t)(net[0] & 15) * 4;
		size_t tot = txs_get_be16(net + 2);
		if (hl < TXS_IPV4_HLEN || tot < hl || tot > avail || net[9] != TXS_IPPROTO_UDP ||
		    (txs_get_be16(net + 6) & (TXS_IPV4_MF | TXS_IPV4_OFFMASK)))
			return false;
		l4 = hl;
		end = tot;
	} else if (avail >= TXS_IPV6_HLEN && (net[0] >> 4) == 6) {
		end = TXS_IPV6_HLEN + (size_t)txs_get_be16(net + 4);
		if (net[6] != TXS_IPPROTO_UDP || end > avail)
			return false;
		l4 = TXS_IPV6_HLEN;
	} else {
		return false;
	}
	if (end < l4 + TXS_UDP_HLEN)
		return false;
	uint16_t c = txs_csum_finish(txs_csum_partial(net + l4, end - l4, 0));
	if (c == 0)
		c = 0xffff;
	memcpy(net + l4 + 6, &c, 2);
	return true;
}

static int pk_poll(struct txs_rx_input *in, unsigned qi, struct txs_rx_core *c, int timeout_ms)
{
	struct pk_in *p = in->priv;
	struct pk_q *q = &p->q[qi];
	struct tpacket_block_desc *bd = (struct tpacket_block_desc *)(q->ring + (size_t)q->cur * BLOCK_SIZE);
	if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
		if (timeout_ms <= 0)
			return 0;
		struct pollfd pfd = { .fd = q->fd, .events = POLLIN | POLLERR };
		int r = poll(&pfd, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (pfd.revents & POLLERR) {
			/* the kernel reports ENETDOWN when the bound interface goes
			 * down or away (txs_rx_input_check names it) */
			int e = 0;
			socklen_t el = sizeof(e);
			if (getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e)
				return -e;
		}
		if (r == 0) {
			/* idle: are the links still there? (several interfaces:
			 * the sockets are not bound to one, no error comes) */
			int lrc = txs_rx_links_check(in, p->ifindex, p->n_if, NULL, 0);
			if (lrc < 0)
				return lrc;
		}
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			return 0;
	}
	unsigned total = 0;
	/* a few blocks per call, so the caller's loop stays responsive */
	for (unsigned b = 0; b < 4; b++) {
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			break;
		uint32_t num = bd->hdr.bh1.num_pkts;
		uint8_t *blk = (uint8_t *)bd;
		uint32_t off = bd->hdr.bh1.offset_to_first_pkt;
		for (uint32_t i = 0; i < num && off < BLOCK_SIZE; i++) {
			struct tpacket3_hdr *h = (struct tpacket3_hdr *)(blk + off);
			const struct sockaddr_ll *sll =
				(const struct sockaddr_ll *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
			uint64_t ts = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec;
			enum txs_l2 l2 = h->tp_net != h->tp_mac ? TXS_L2_ETH : TXS_L2_NONE;
			if (h->tp_mac + (uint64_t)h->tp_snaplen <= BLOCK_SIZE - off) {
				if (TXS_UNLIKELY(h->tp_status & TP_STATUS_CSUMNOTREADY) && h->tp_net >= h->tp_mac &&
				    (uint32_t)(h->tp_net - h->tp_mac) <= h->tp_snaplen &&
				    csum_complete((uint8_t *)h + h->tp_net, h->tp_snaplen - (h->tp_net - h->tp_mac)))
					q->csum_completed++;
				if (TXS_UNLIKELY(h->tp_status & TP_STATUS_VLAN_VALID)) /* tag taken off by the kernel */
					txs_rx_frame_vlan(c, (const uint8_t *)h + h->tp_mac, h->tp_snaplen, l2,
							  link_of(p, sll->sll_ifindex), ts, h->hv1.tp_vlan_tci);
				else
					txs_rx_frame(c, (const uint8_t *)h + h->tp_mac, h->tp_snaplen, l2,
						     link_of(p, sll->sll_ifindex), ts);
			}
			if (!h->tp_next_offset)
				break;
			off += h->tp_next_offset;
		}
		total += num;
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		q->cur = (q->cur + 1) % q->n_blocks;
		bd = (struct tpacket_block_desc *)(q->ring + (size_t)q->cur * BLOCK_SIZE);
	}
	return (int)total;
}

static void pk_stats(struct txs_rx_input *in, struct txs_rx_input_stats *o)
{
	struct pk_in *p = in->priv;
	o->have_socket_drops = true;
	for (unsigned i = 0; i < p->n; i++) {
		struct tpacket_stats_v3 st;
		socklen_t l = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt(p->q[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0) {
			p->q[i].packets += st.tp_packets;
			p->q[i].drops += st.tp_drops;
		} else {
			o->have_socket_drops = false;
		}
		o->socket_drops += p->q[i].drops;
		o->ring_packets += p->q[i].packets;
		o->csum_completed += p->q[i].csum_completed;
	}
}

const struct txs_rx_input_ops txs_rx_input_packet_ops = {
	.name = "packet",
	.usage = "packet:IFNAME[,IFNAME...]",
	.open = pk_open,
	.close = pk_close,
	.poll = pk_poll,
	.stats = pk_stats,
	.check = pk_check,
};
