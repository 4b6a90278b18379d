/* SPDX-License-Identifier: MIT */
/* Interfaces, next-hop MACs and default sources for the frame devices. */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "l2.h"
#ifdef TXS_HAVE_MNL
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#endif

int txs_l2_add_links(struct txs_netdev *dev, struct txs_l2link *links, const char *list, bool allow_queue)
{
	char buf[256];
	if (!*list) {
		txs_netdev_set_err(dev, "no interface given (expected %s)", dev->ops->usage);
		return -EINVAL;
	}
	if (strlen(list) >= sizeof(buf)) {
		txs_netdev_set_err(dev, "interface list too long");
		return -EINVAL;
	}
	strcpy(buf, list);
	char *save = NULL;
	for (char *it = strtok_r(buf, "+", &save); it; it = strtok_r(NULL, "+", &save)) {
		if (dev->n_links >= TXS_MAX_LINKS) {
			txs_netdev_set_err(dev, "too many links (at most %d)", TXS_MAX_LINKS);
			return -EINVAL;
		}
		struct txs_l2link *l = &links[dev->n_links];
		memset(l, 0, sizeof(*l));
		char *colon = strchr(it, ':');
		if (colon) {
			if (!allow_queue) {
				txs_netdev_set_err(dev, "bad interface name '%s'", it);
				return -EINVAL;
			}
			*colon = 0;
			char *end;
			unsigned long qv = strtoul(colon + 1, &end, 10);
			if (!colon[1] || *end || qv > 65535) {
				txs_netdev_set_err(dev, "bad queue '%s' for interface '%s' (expected 0..65535)", colon + 1, it);
				return -EINVAL;
			}
			l->queue = (unsigned)qv;
		}
		if (!*it || strlen(it) >= IF_NAMESIZE) {
			txs_netdev_set_err(dev, "bad interface name '%s'", it);
			return -EINVAL;
		}
		strcpy(l->ifname, it);
		dev->n_links++;
	}
	if (dev->n_links == 0) {
		txs_netdev_set_err(dev, "no interface given in '%s'", list);
		return -EINVAL;
	}
	return 0;
}

int txs_l2_if_addr(const char *ifname, int family, struct txs_addr *out)
{
	struct ifaddrs *ifa0;
	if (getifaddrs(&ifa0) < 0)
		return -errno;
	int rc = -EADDRNOTAVAIL;
	bool have_ll = false;
	for (struct ifaddrs *ifa = ifa0; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family || strcmp(ifa->ifa_name, ifname) != 0)
			continue;
		memset(out, 0, sizeof(*out));
		out->family = family;
		if (family == AF_INET) {
			out->v4 = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
			rc = 0;
			break;
		}
		struct in6_addr a6 = ((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;
		if (IN6_IS_ADDR_LINKLOCAL(&a6)) {
			if (!have_ll) { /* keep the first link-local as a fallback */
				have_ll = true;
				out->v6 = a6;
				rc = 0;
			}
			continue;
		}
		out->v6 = a6;
		rc = 0;
		break;
	}
	freeifaddrs(ifa0);
	return rc;
}

#ifdef TXS_HAVE_MNL
struct nl_route {
	bool have_gw;
	uint8_t gw[16];
	int oif;
	unsigned char type;
};

struct nl_neigh {
	bool have_ll;
	uint8_t ll[TXS_ETH_ALEN];
	uint16_t state;
};

static int route_attr(const struct nlattr *a, void *data)
{
	struct nl_route *r = data;
	switch (mnl_attr_get_type(a)) {
	case RTA_GATEWAY:
		if (mnl_attr_get_payload_len(a) == 4 || mnl_attr_get_payload_len(a) == 16) {
			memcpy(r->gw, mnl_attr_get_payload(a), mnl_attr_get_payload_len(a));
			r->have_gw = true;
		}
		break;
	case RTA_OIF:
		if (mnl_attr_get_payload_len(a) == 4)
			r->oif = (int)mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_route *r = data;
	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	const struct rtmsg *rm = mnl_nlmsg_get_payload(nlh);
	r->type = rm->rtm_type;
	mnl_attr_parse(nlh, sizeof(*rm), route_attr, r);
	return MNL_CB_STOP;
}

static int neigh_attr(const struct nlattr *a, void *data)
{
	struct nl_neigh *n = data;
	if (mnl_attr_get_type(a) == NDA_LLADDR && mnl_attr_get_payload_len(a) == TXS_ETH_ALEN) {
		memcpy(n->ll, mnl_attr_get_payload(a), TXS_ETH_ALEN);
		n->have_ll = true;
	}
	return MNL_CB_OK;
}

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_neigh *n = data;
	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);
	n->state = nd->ndm_state;
	mnl_attr_parse(nlh, sizeof(*nd), neigh_attr, n);
	return MNL_CB_STOP;
}

/* One request, one answer (or an NLMSG_ERROR). Returns 0 or -errno. */
static int nl_ask(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	static __thread char buf[8192];
	unsigned seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		int ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
		if (ret < 0)
			return errno ? -errno : -EIO;
		if (ret == MNL_CB_STOP)
			return 0;
	}
}

int txs_l2_neigh_mac(int ifindex, const struct txs_addr *dst, uint8_t mac[TXS_ETH_ALEN], char *why, size_t whylen)
{
	char a1[64], a2[64];
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	if (!nl) {
		snprintf(why, whylen, "cannot open rtnetlink: %s", strerror(errno));
		return -errno;
	}
	int rc = 0;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		snprintf(why, whylen, "cannot bind rtnetlink: %s", strerror(errno));
		goto out;
	}
	size_t alen = dst->family == AF_INET ? 4 : 16;
	char req[512] __attribute__((aligned(8)));
	/* 1. the route towards dst out of this interface: gateway or on-link */
	memset(req, 0, sizeof(req));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 1;
	struct rtmsg *rm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rm));
	rm->rtm_family = (unsigned char)dst->family;
	rm->rtm_dst_len = (unsigned char)(alen * 8);
	mnl_attr_put(nlh, RTA_DST, alen, dst->bytes);
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	struct nl_route r = { 0 };
	rc = nl_ask(nl, nlh, route_cb, &r);
	if (rc < 0) {
		snprintf(why, whylen, "no route to %s: %s", txs_addr_str(dst, a1, sizeof(a1)), strerror(-rc));
		goto out;
	}
	if (r.type != RTN_UNICAST) {
		rc = -EHOSTUNREACH;
		snprintf(why, whylen, "%s is not a unicast destination on this interface (route type %u)",
			 txs_addr_str(dst, a1, sizeof(a1)), r.type);
		goto out;
	}
	struct txs_addr hop = *dst;
	if (r.have_gw)
		memcpy(hop.bytes, r.gw, alen);
	/* 2. the neighbour entry of that hop */
	memset(req, 0, sizeof(req));
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 2;
	struct ndmsg *nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = (unsigned char)dst->family;
	nd->ndm_ifindex = ifindex;
	mnl_attr_put(nlh, NDA_DST, alen, hop.bytes);
	struct nl_neigh ne = { 0 };
	rc = nl_ask(nl, nlh, neigh_cb, &ne);
	txs_addr_str(&hop, a1, sizeof(a1));
	if (r.have_gw)
		snprintf(a2, sizeof(a2), " (gateway towards %s)", txs_addr_str(dst, a2 + 32, 32));
	else
		a2[0] = 0;
	if (rc == -ENOENT || (rc == 0 && (!(ne.state & (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)) || !ne.have_ll))) {
		rc = -EHOSTUNREACH;
		snprintf(why, whylen, "no resolved neighbour entry for %s%s: give --dst-mac or resolve it first (ping %s)",
			 a1, a2, a1);
		goto out;
	}
	if (rc < 0) {
		snprintf(why, whylen, "neighbour lookup for %s failed: %s", a1, strerror(-rc));
		goto out;
	}
	memcpy(mac, ne.ll, TXS_ETH_ALEN);
out:
	mnl_socket_close(nl);
	return rc;
}
#else
int txs_l2_neigh_mac(int ifindex, const struct txs_addr *dst, uint8_t mac[TXS_ETH_ALEN], char *why, size_t whylen)
{
	(void)ifindex, (void)dst, (void)mac;
	snprintf(why, whylen, "built without libmnl: cannot look up the neighbour's MAC: give --dst-mac");
	return -EOPNOTSUPP;
}
#endif

bool txs_l2_if_hw(int ifindex, char *name)
{
	char n[IF_NAMESIZE], path[64 + IF_NAMESIZE];
	if (ifindex <= 0 || !if_indextoname((unsigned)ifindex, n))
		return false;
	if (name)
		memcpy(name, n, IF_NAMESIZE);
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", n);
	return access(path, F_OK) == 0;
}

static int if_info(struct txs_netdev *dev, struct txs_l2link *l, int sfd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, l->ifname);
	l->ifindex = (int)if_nametoindex(l->ifname);
	if (!l->ifindex) {
		txs_netdev_set_err(dev, "no interface '%s' in this network namespace", l->ifname);
		return -ENODEV;
	}
	if (ioctl(sfd, SIOCGIFMTU, &ifr) < 0) {
		txs_netdev_set_err(dev, "%s: cannot read MTU: %s", l->ifname, strerror(errno));
		return -errno;
	}
	l->mtu = (unsigned)ifr.ifr_mtu;
	if (ioctl(sfd, SIOCGIFHWADDR, &ifr) < 0) {
		txs_netdev_set_err(dev, "%s: cannot read MAC: %s", l->ifname, strerror(errno));
		return -errno;
	}
	if (ifr.ifr_hwaddr.sa_family == ARPHRD_LOOPBACK) {
		l->loopback = true;
	} else if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		txs_netdev_set_err(dev, "%s is not an Ethernet interface (ARPHRD %u)", l->ifname,
				   ifr.ifr_hwaddr.sa_family);
		return -EOPNOTSUPP;
	}
	memcpy(l->src_mac, ifr.ifr_hwaddr.sa_data, TXS_ETH_ALEN);
	return 0;
}

int txs_l2_resolve(struct txs_netdev *dev, struct txs_l2link *links, unsigned n)
{
	const struct txs_netdev_conf *c = &dev->conf;
	int sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sfd < 0) {
		txs_netdev_set_err(dev, "cannot open a socket for interface queries: %s", strerror(errno));
		return -errno;
	}
	int rc = 0;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		struct txs_l2link *l = &links[i];
		rc = if_info(dev, l, sfd);
		if (rc)
			break;
		if (c->have_src_mac)
			memcpy(l->src_mac, c->src_mac, TXS_ETH_ALEN);
		if (c->have_dst_mac) {
			memcpy(l->dst_mac, c->dst_mac, TXS_ETH_ALEN);
		} else if (l->loopback) {
			memset(l->dst_mac, 0, TXS_ETH_ALEN);
		} else if (c->dst.family != AF_INET && c->dst.family != AF_INET6) {
			txs_netdev_set_err(dev, "%s: no destination MAC: give --dst-mac or a destination address",
					   l->ifname);
			rc = -EINVAL;
		} else {
			char why[sizeof(TXS_ND(dev)->err) - IF_NAMESIZE - 4];
			rc = txs_l2_neigh_mac(l->ifindex, &c->dst, l->dst_mac, why, sizeof(why));
			if (rc)
				txs_netdev_set_err(dev, "%s: %s", l->ifname, why);
		}
	}
	close(sfd);
	if (rc)
		return rc;
	dev->l2_needed = true;
	dev->mtu = links[0].mtu;
	for (unsigned i = 1; i < n; i++)
		if (links[i].mtu < dev->mtu)
			dev->mtu = links[i].mtu; /* one MTU for the run: the smallest link's */
	memcpy(dev->src_mac, links[0].src_mac, TXS_ETH_ALEN);
	memcpy(dev->dst_mac, links[0].dst_mac, TXS_ETH_ALEN);
	if ((c->src.family != AF_INET && c->src.family != AF_INET6) &&
	    (c->dst.family == AF_INET || c->dst.family == AF_INET6)) {
		if (txs_l2_if_addr(links[0].ifname, c->dst.family, &dev->src_addr) < 0)
			memset(&dev->src_addr, 0, sizeof(dev->src_addr));
	}
	return 0;
}

int txs_l2_open(struct txs_netdev *dev, struct txs_l2link *links, const char *args, bool allow_queue,
		int (*arg)(struct txs_netdev *dev, const char *key, const char *val, void *ctx), void *ctx)
{
	dev->n_links = 0;
	/* the first item (up to ',') is the interface list */
	const char *comma = strchr(args, ',');
	char first[256];
	size_t fl = comma ? (size_t)(comma - args) : strlen(args);
	if (fl >= sizeof(first)) {
		txs_netdev_set_err(dev, "interface list too long");
		return -EINVAL;
	}
	memcpy(first, args, fl);
	first[fl] = 0;
	int rc = txs_l2_add_links(dev, links, first, allow_queue);
	if (rc)
		return rc;
	if (comma && (rc = txs_netdev_parse_args(dev, comma + 1, arg, ctx)))
		return rc;
	if ((rc = txs_l2_resolve(dev, links, dev->n_links)))
		return rc;
	if (dev->conf.frame_size > dev->mtu + TXS_ETH_HLEN + dev->conf.vlan_len)
		dev->conf.frame_size = dev->mtu + TXS_ETH_HLEN + dev->conf.vlan_len; /* no frame is longer on this link */
	return 0;
}

int txs_l2_probe_socket(struct txs_netdev *dev, int family, const char *what)
{
	int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;
		if (family == AF_XDP && e == EAFNOSUPPORT)
			txs_netdev_set_err(dev, "%s socket: this kernel has no AF_XDP (CONFIG_XDP_SOCKETS)", what);
		else
			txs_netdev_set_err(dev, "%s socket: %s%s", what, strerror(e),
					   e == EPERM ? " (needs CAP_NET_RAW: run as root)" : "");
		return -e;
	}
	close(fd);
	return 0;
}
