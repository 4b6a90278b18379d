/* SPDX-License-Identifier: MIT */
/* SO_TXTIME, where the kernel can keep it: which interface a route leaves
 * by (RTM_GETROUTE) and which qdisc holds that interface's transmit queue
 * (RTM_GETQDISC), read over plain rtnetlink, once at a device's open.
 *
 * A datagram sent with a transmit time (SCM_TXTIME) leaves at that time
 * only where a qdisc keeps it: fq (any clock it is given; txscale gives it
 * CLOCK_MONOTONIC, fq's own) or etf (CLOCK_TAI, and it drops a datagram
 * whose time has passed by its delta: a late worker would lose datagrams,
 * so txscale does not use it). Anywhere else the time is ignored and the
 * datagram leaves at once, ahead of its schedule: the engine then sleeps
 * and sends each datagram when it is due instead (docs/pacing.md). */
#include <errno.h>
#include <linux/net_tstamp.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "netdev_priv.h"
#include "txtime.h"

#define NL_BUF 16384
#define NL_TIMEOUT_MS 1000

static int nl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	struct timeval tv = { NL_TIMEOUT_MS / 1000, (NL_TIMEOUT_MS % 1000) * 1000 };
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static void rta_put(struct nlmsghdr *n, size_t cap, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(void *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));
	if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > cap)
		return;
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	n->nlmsg_len = (uint32_t)(NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len));
}

int txs_route_oif(const struct txs_addr *dst, int *ifindex)
{
	if (dst->family != AF_INET && dst->family != AF_INET6)
		return -EAFNOSUPPORT;
	struct {
		struct nlmsghdr n;
		struct rtmsg r;
		char attrs[64];
	} req = { 0 };
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.n.nlmsg_type = RTM_GETROUTE;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.n.nlmsg_seq = 1;
	req.r.rtm_family = (unsigned char)dst->family;
	req.r.rtm_dst_len = dst->family == AF_INET ? 32 : 128;
	rta_put(&req.n, sizeof(req), RTA_DST, dst->bytes, dst->family == AF_INET ? 4 : 16);
	int fd = nl_open();
	if (fd < 0)
		return fd;
	int rc = -ENOENT;
	static __thread char buf[NL_BUF];
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0) {
		rc = -errno;
		goto out;
	}
	ssize_t got = recv(fd, buf, sizeof(buf), 0);
	if (got < 0) {
		rc = -errno;
		goto out;
	}
	for (struct nlmsghdr *n = (struct nlmsghdr *)(void *)buf; NLMSG_OK(n, (size_t)got);
	     n = NLMSG_NEXT(n, got)) {
		if (n->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(n);
			rc = e->error ? e->error : -ENOENT;
			break;
		}
		if (n->nlmsg_type != RTM_NEWROUTE)
			continue;
		struct rtmsg *r = NLMSG_DATA(n);
		int len = (int)RTM_PAYLOAD(n);
		for (struct rtattr *a = RTM_RTA(r); RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= sizeof(int)) {
				memcpy(ifindex, RTA_DATA(a), sizeof(int));
				rc = 0;
			}
		break;
	}
out:
	close(fd);
	return rc;
}

/* One qdisc of a dump: its kind, handle and parent. */
struct qd {
	char kind[16];
	uint32_t handle, parent;
};

#define QD_MAX 256

/* Every qdisc of ifindex (RTM_GETQDISC dump, filtered here): how many, at
 * most max, or -errno. */
static int qdisc_dump(int ifindex, struct qd *out, int max)
{
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
	} req = { 0 };
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	req.n.nlmsg_type = RTM_GETQDISC;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.n.nlmsg_seq = 2;
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = ifindex;
	int fd = nl_open();
	if (fd < 0)
		return fd;
	int n_out = 0, rc = 0;
	static __thread char buf[NL_BUF];
	if (send(fd, &req, req.n.nlmsg_len, 0) < 0) {
		rc = -errno;
		goto out;
	}
	for (int rounds = 0; rounds < 1024; rounds++) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		if (got < 0) {
			rc = -errno;
			goto out;
		}
		for (struct nlmsghdr *n = (struct nlmsghdr *)(void *)buf; NLMSG_OK(n, (size_t)got);
		     n = NLMSG_NEXT(n, got)) {
			if (n->nlmsg_type == NLMSG_DONE)
				goto out;
			if (n->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(n);
				rc = e->error ? e->error : rc;
				goto out;
			}
			if (n->nlmsg_type != RTM_NEWQDISC)
				continue;
			struct tcmsg *t = NLMSG_DATA(n);
			if (t->tcm_ifindex != ifindex || n_out >= max)
				continue;
			struct qd *q = &out[n_out];
			memset(q, 0, sizeof(*q));
			q->handle = t->tcm_handle;
			q->parent = t->tcm_parent;
			int len = (int)(n->nlmsg_len - NLMSG_LENGTH(sizeof(*t)));
			for (struct rtattr *a = (struct rtattr *)(void *)((char *)t + NLMSG_ALIGN(sizeof(*t)));
			     RTA_OK(a, len); a = RTA_NEXT(a, len))
				if (a->rta_type == TCA_KIND)
					snprintf(q->kind, sizeof(q->kind), "%.*s", (int)RTA_PAYLOAD(a),
						 (const char *)RTA_DATA(a));
			n_out++;
		}
	}
out:
	close(fd);
	return rc < 0 ? rc : n_out;
}

int txs_qdisc_kind(int ifindex, char *kind, size_t len)
{
	static __thread struct qd q[QD_MAX];
	int n = qdisc_dump(ifindex, q, QD_MAX);
	if (n < 0)
		return n;
	const struct qd *root = NULL;
	for (int i = 0; i < n; i++)
		if (q[i].parent == TC_H_ROOT)
			root = &q[i];
	if (!root) {
		snprintf(kind, len, "none");
		return 0;
	}
	/* a multiqueue root (mq, mqprio) hands each queue to a child: the kind
	 * is the children's when they all agree */
	if (strcmp(root->kind, "mq") == 0 || strcmp(root->kind, "mqprio") == 0) {
		const char *child = NULL;
		bool same = true;
		for (int i = 0; i < n; i++) {
			if (TC_H_MAJ(q[i].parent) != root->handle || &q[i] == root)
				continue;
			if (!child)
				child = q[i].kind;
			else if (strcmp(child, q[i].kind) != 0)
				same = false;
		}
		if (child && same) {
			snprintf(kind, len, "%s", child);
			return 0;
		}
	}
	snprintf(kind, len, "%s", root->kind);
	return 0;
}

/* What a probe socket says of SO_TXTIME with CLOCK_MONOTONIC: 0 or -errno. */
static int txtime_sockopt_ok(int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	struct sock_txtime st = { .clockid = CLOCK_MONOTONIC, .flags = 0 };
	int rc = setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

void txs_txtime_decide(struct txs_netdev *dev, enum txs_txtime_mode mode, const char *ifname, int family)
{
	dev->txtime_clock = -1;
	if (mode == TXS_TXTIME_OFF) {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "txtime=off");
		return;
	}
	int rc = txtime_sockopt_ok(family);
	if (rc < 0) {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "SO_TXTIME refused: %s", strerror(-rc));
		return;
	}
	if (mode == TXS_TXTIME_ON) {
		dev->txtime_clock = CLOCK_MONOTONIC;
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "txtime=on (whatever the qdisc: one that ignores "
			 "the time sends at once)");
		return;
	}
	int ifindex = 0;
	char name[IF_NAMESIZE] = "";
	if (ifname && ifname[0]) {
		ifindex = (int)if_nametoindex(ifname);
		snprintf(name, sizeof(name), "%s", ifname);
	} else if ((rc = txs_route_oif(&dev->conf.dst, &ifindex)) < 0 || !if_indextoname((unsigned)ifindex, name)) {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "no route's interface found (%s)",
			 strerror(rc < 0 ? -rc : errno));
		return;
	}
	char kind[16];
	if (!ifindex || (rc = txs_qdisc_kind(ifindex, kind, sizeof(kind))) < 0) {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "%s: qdisc not read (%s)", name,
			 strerror(rc < 0 ? -rc : ENODEV));
		return;
	}
	if (strcmp(kind, "fq") == 0) {
		dev->txtime_clock = CLOCK_MONOTONIC;
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "%s: fq keeps transmit times", name);
	} else if (strcmp(kind, "etf") == 0) {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "%s: etf drops a late datagram (not used; fq is)",
			 name);
	} else {
		snprintf(dev->txtime_why, sizeof(dev->txtime_why), "%s: qdisc %s ignores transmit times (needs fq)",
			 name, kind);
	}
}
