/* SPDX-License-Identifier: MIT */
/* Link monitor: rtnetlink (RTNLGRP_LINK) events plus a miimon-like re-read,
 * updelay / downdelay; it changes the device's link-state word
 * (lib/netdev/linkstate.h) and link selection in the order that contract
 * sets. Public contract in include/txscale/linkmon.h. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <txscale/linkmon.h>
#include "common/err.h"
#include "netdev/l2.h"
#include "netdev/linkstate.h"
#ifdef TXS_HAVE_MNL
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#endif

/* IFF_LOWER_UP (carrier) is in linux/if.h, which clashes with net/if.h. */
#define LM_IFF_LOWER_UP 0x10000u
/* Longest the thread sleeps: it adopts queue-reported errors at least this often. */
#define LM_TICK_NS 100000000ull

static void stat_inc(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static void lm_select(void *arg, unsigned l, bool up)
{
	txs_linksel_set_link(arg, l, up);
}

/* The device's link state (the monitor's m->s->st). */
struct lm_state {
	struct txs_linkstate st;
};

#ifdef TXS_HAVE_MNL

struct txs_linkmon {
	struct lm_state *s;
	struct txs_netdev *dev;
	struct txs_linkmon_conf conf;
	struct mnl_socket *nl;
	int evfd;
	bool started;
	pthread_t thread;
	unsigned n;
	uint32_t seq;
	bool dumping;              /* a dump request is unanswered ... */
	uint64_t dump_ns;          /* ... since then */
	enum txs_link_why dump_why; /* what asked for it (poll or hint) */
	int ifindex[TXS_MAX_LINKS];
	/* monitor-thread private (set up before the thread starts) */
	bool seen[TXS_MAX_LINKS];  /* the current dump mentioned the link */
	bool obs[TXS_MAX_LINKS];   /* last state the kernel told */
	bool cur[TXS_MAX_LINKS];   /* state published */
	bool held[TXS_MAX_LINKS];  /* down because of a queue's error */
	uint64_t due[TXS_MAX_LINKS]; /* when obs becomes cur (0: nothing pending) */
	enum txs_link_why due_why[TXS_MAX_LINKS];
	uint64_t now;
};

static void lm_apply(struct txs_linkmon *m, unsigned l, bool up, enum txs_link_why why)
{
	m->cur[l] = up;
	m->due[l] = 0;
	if (up)
		m->held[l] = false;
	if (!txs_linkstate_set(&m->s->st, l, up))
		return;
	stat_inc(up ? &m->s->st.n_ups : &m->s->st.n_downs);
	if (m->conf.on_change)
		m->conf.on_change(m->conf.arg, l, m->s->st.name[l], up, why, 0);
}

/* The kernel says link l is up or down. */
static void lm_observe(struct txs_linkmon *m, unsigned l, bool up, enum txs_link_why why)
{
	if (up == m->obs[l])
		return;
	m->obs[l] = up;
	if (!up)
		m->held[l] = false; /* a real down ends an error hold: the next up takes it back */
	if (up == m->cur[l]) {
		m->due[l] = 0; /* flapped back within the delay: never switched */
		return;
	}
	unsigned delay = up ? m->conf.updelay_ms : m->conf.downdelay_ms;
	if (!delay) {
		lm_apply(m, l, up, why);
		return;
	}
	m->due[l] = m->now + (uint64_t)delay * 1000000ull;
	m->due_why[l] = why;
}

static int lm_link_index(const struct txs_linkmon *m, int ifindex)
{
	for (unsigned l = 0; l < m->n; l++)
		if (m->ifindex[l] == ifindex)
			return (int)l;
	return -1;
}

struct lm_cb {
	struct txs_linkmon *m;
	enum txs_link_why why;
	bool init; /* start: fill obs only */
};

static int lm_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct lm_cb *c = data;
	struct txs_linkmon *m = c->m;
	if (nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	int l = lm_link_index(m, ifi->ifi_index);
	if (l < 0)
		return MNL_CB_OK;
	bool up = nlh->nlmsg_type == RTM_NEWLINK && (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & LM_IFF_LOWER_UP);
	m->seen[l] = true;
	if (c->init) {
		m->obs[l] = m->cur[l] = up;
		return MNL_CB_OK;
	}
	if (c->why == TXS_LINK_EVENT)
		stat_inc(&m->s->st.n_events);
	lm_observe(m, (unsigned)l, up, c->why);
	return MNL_CB_OK;
}

static int lm_dump_request(struct txs_linkmon *m, enum txs_link_why why)
{
	char buf[256] __attribute__((aligned(8)));
	memset(buf, 0, sizeof(buf));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++m->seq;
	struct rtgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	memset(m->seen, 0, sizeof(m->seen));
	if (mnl_socket_sendto(m->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	m->dumping = true;
	m->dump_ns = txs_now_mono_ns();
	m->dump_why = why;
	return 0;
}

/* Read what is queued on the socket. A dump's end (NLMSG_DONE) marks links it
 * did not mention as gone. Returns 0, or -errno; -ENOBUFS: events were lost
 * (socket overrun), so the caller re-reads every link. */
static int lm_drain(struct txs_linkmon *m, bool wait, bool init)
{
	char buf[32768] __attribute__((aligned(8)));
	for (;;) {
		ssize_t got = recv(mnl_socket_get_fd(m->nl), buf, sizeof(buf), wait ? 0 : MSG_DONTWAIT);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		}
		/* multicast events carry seq 0, our dump our seq: parse message by message */
		int n = (int)got;
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_type == NLMSG_DONE) {
				m->dumping = false;
				if (!init)
					stat_inc(&m->s->st.n_polls);
				for (unsigned l = 0; l < m->n; l++) {
					if (m->seen[l])
						continue;
					if (init)
						m->obs[l] = m->cur[l] = false;
					else
						lm_observe(m, l, false, m->dump_why); /* not in the dump: gone */
				}
				if (wait)
					return 0;
				continue;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
				m->dumping = false;
				if (e->error)
					return e->error;
				continue;
			}
			struct lm_cb c = { m, nlh->nlmsg_seq ? m->dump_why : TXS_LINK_EVENT, init };
			lm_msg_cb(nlh, &c);
		}
	}
}

static void lm_adopt_errors(struct txs_linkmon *m)
{
	uint32_t em = __atomic_exchange_n(&m->s->st.err_mask, 0, __ATOMIC_ACQUIRE);
	for (unsigned l = 0; em; l++, em >>= 1) {
		if (!(em & 1))
			continue;
		m->cur[l] = false; /* the queue already published the down */
		m->held[l] = true;
		m->due[l] = 0;
		if (m->obs[l]) { /* the interface reads up: try it again later */
			unsigned ms = m->conf.updelay_ms > TXS_LINKMON_RETRY_MS ? m->conf.updelay_ms : TXS_LINKMON_RETRY_MS;
			m->due[l] = m->now + (uint64_t)ms * 1000000ull;
			m->due_why[l] = TXS_LINK_RETRY;
		}
	}
}

static void *lm_main(void *arg)
{
	struct txs_linkmon *m = arg;
	uint64_t miimon = (uint64_t)m->conf.miimon_ms * 1000000ull;
	m->now = txs_now_mono_ns();
	uint64_t next_poll = miimon ? m->now + miimon : UINT64_MAX;
	for (;;) {
		m->now = txs_now_mono_ns();
		lm_adopt_errors(m);
		for (unsigned l = 0; l < m->n; l++)
			if (m->due[l] && m->now >= m->due[l])
				lm_apply(m, l, m->obs[l], m->due_why[l]);
		if (m->now >= next_poll) {
			if (lm_dump_request(m, TXS_LINK_POLL) < 0) {
				/* nothing to do but try again at the next tick */
			}
			next_poll = m->now + miimon;
		}
		uint64_t wake = m->now + LM_TICK_NS;
		if (next_poll < wake)
			wake = next_poll;
		for (unsigned l = 0; l < m->n; l++)
			if (m->due[l] && m->due[l] < wake)
				wake = m->due[l];
		uint64_t gap = wake > m->now ? wake - m->now : 0;
		struct pollfd p[3] = { { .fd = mnl_socket_get_fd(m->nl), .events = POLLIN },
				       { .fd = m->evfd, .events = POLLIN },
				       { .fd = m->s->st.hint_fd, .events = POLLIN } };
		int r = poll(p, 3, (int)((gap + 999999) / 1000000));
		if (r < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[2].revents) {
			uint64_t v;
			/* a dump unanswered for 10 ms was lost (socket overrun): ask again */
			if (read(m->s->st.hint_fd, &v, sizeof(v)) > 0 &&
			    (!m->dumping || txs_now_mono_ns() - m->dump_ns > 10000000ull)) {
				stat_inc(&m->s->st.n_hints);
				lm_dump_request(m, TXS_LINK_HINT); /* the answer reads each carrier now */
			}
		}
		if (p[0].revents) {
			m->now = txs_now_mono_ns();
			int rc = lm_drain(m, false, false);
			if (rc == -ENOBUFS)
				next_poll = m->now; /* events lost: re-read now */
		}
	}
	return NULL;
}


static void lm_free(struct txs_linkmon *m)
{
	if (m->nl)
		mnl_socket_close(m->nl);
	if (m->evfd >= 0)
		close(m->evfd);
	if (m->s) {
		if (m->s->st.hint_fd >= 0)
			close(m->s->st.hint_fd);
		pthread_mutex_destroy(&m->s->st.lock);
	}
	free(m->s);
	free(m);
}

TXS_API int txs_linkmon_start(struct txs_linkmon **out, struct txs_netdev *dev, const struct txs_linkmon_conf *conf,
			      char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	struct txs_netdev_link links[TXS_MAX_LINKS];
	if (dev->n_links > TXS_MAX_LINKS)
		return txs_fail(err, errlen, -EINVAL, "device %s has %u links, at most %u", dev->spec, dev->n_links,
			       TXS_MAX_LINKS);
	for (unsigned l = 0; l < dev->n_links; l++) {
		int rc = txs_netdev_link(dev, l, &links[l]);
		if (rc == -EOPNOTSUPP)
			return txs_fail(err, errlen, rc, "device %s has no interface links to watch", dev->spec);
		if (rc)
			return txs_fail(err, errlen, rc, "device %s: link %u: %s", dev->spec, l, strerror(-rc));
	}
	if (txs_netdev_linkstate(dev))
		return txs_fail(err, errlen, -EBUSY, "device %s already has a link monitor", dev->spec);
	if (conf->linksel && txs_linksel_n_links(conf->linksel) != dev->n_links)
		return txs_fail(err, errlen, -EINVAL, "link selection has %u links, device %s has %u",
			       txs_linksel_n_links(conf->linksel), dev->spec, dev->n_links);
	struct txs_linkmon *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->evfd = -1;
	m->s = aligned_alloc(TXS_CACHE_LINE, sizeof(*m->s));
	if (!m->s) {
		free(m);
		return -ENOMEM;
	}
	m->dev = dev;
	m->conf = *conf;
	m->n = dev->n_links;
	struct lm_state *s = m->s;
	txs_linkstate_init(&s->st, m->n, NULL, NULL); /* linksel is told below, once the links are read */
	if (conf->linksel) {
		s->st.select = lm_select;
		s->st.select_arg = conf->linksel;
		s->st.reroute = txs_linksel_params(conf->linksel)->mode == TXS_LS_ACTIVE_BACKUP;
	}
	s->st.on_change = conf->on_change;
	s->st.arg = conf->arg;
	for (unsigned l = 0; l < m->n; l++) {
		m->ifindex[l] = links[l].ifindex;
		memcpy(s->st.name[l], links[l].ifname, sizeof(s->st.name[l]));
		s->st.name[l][sizeof(s->st.name[l]) - 1] = 0;
	}
	int rc;
	m->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!m->nl) {
		rc = txs_fail(err, errlen, -errno, "cannot open rtnetlink: %s", strerror(errno));
		goto fail;
	}
	if (mnl_socket_bind(m->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		rc = txs_fail(err, errlen, -errno, "cannot subscribe to rtnetlink link events: %s", strerror(errno));
		goto fail;
	}
	/* subscribed first, then the dump: no change can fall between the two */
	if ((rc = lm_dump_request(m, TXS_LINK_POLL)) < 0 || (rc = lm_drain(m, true, true)) < 0) {
		rc = txs_fail(err, errlen, rc, "cannot read the links' state: %s", strerror(-rc));
		goto fail;
	}
	uint32_t mask = 0;
	for (unsigned l = 0; l < m->n; l++)
		if (m->cur[l])
			mask |= 1u << l;
	if (!mask) {
		size_t off = 0;
		if (err && errlen) {
			off = (size_t)snprintf(err, errlen, "no link is up:");
			for (unsigned l = 0; l < m->n && off < errlen; l++)
				off += (size_t)snprintf(err + off, errlen - off, "%s %s down", l ? "," : "", s->st.name[l]);
		}
		rc = -ENETDOWN;
		goto fail;
	}
	s->st.word = (uint64_t)1 << 32 | mask;
	if (conf->linksel)
		for (unsigned l = 0; l < m->n; l++)
			txs_linksel_set_link(conf->linksel, l, m->cur[l]);
	m->evfd = eventfd(0, EFD_CLOEXEC);
	s->st.hint_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->evfd < 0 || s->st.hint_fd < 0) {
		rc = txs_fail(err, errlen, -errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	txs_netdev_set_linkstate(dev, &s->st); /* before the queues open (the contract) */
	rc = pthread_create(&m->thread, NULL, lm_main, m);
	if (rc) {
		txs_netdev_set_linkstate(dev, NULL);
		rc = txs_fail(err, errlen, -rc, "cannot start the link monitor thread: %s", strerror(rc));
		goto fail;
	}
	m->started = true;
	*out = m;
	return 0;
fail:
	lm_free(m);
	return rc;
}

TXS_API void txs_linkmon_stop(struct txs_linkmon *m)
{
	if (!m)
		return;
	if (m->started) {
		uint64_t one = 1;
		if (write(m->evfd, &one, sizeof(one)) < 0) {
			/* an eventfd write cannot fail here; join regardless */
		}
		pthread_join(m->thread, NULL);
	}
	if (txs_netdev_linkstate(m->dev) == &m->s->st)
		txs_netdev_set_linkstate(m->dev, NULL);
	lm_free(m);
}

TXS_API uint32_t txs_linkmon_up_mask(const struct txs_linkmon *m)
{
	return (uint32_t)txs_linkstate_load(&m->s->st);
}

TXS_API const char *txs_linkmon_link_name(const struct txs_linkmon *m, unsigned l)
{
	return l < m->n ? m->s->st.name[l] : "";
}

TXS_API void txs_linkmon_stats(const struct txs_linkmon *m, struct txs_linkmon_stats *out)
{
	const struct txs_linkstate *c = &m->s->st;
	out->events = __atomic_load_n(&c->n_events, __ATOMIC_RELAXED);
	out->polls = __atomic_load_n(&c->n_polls, __ATOMIC_RELAXED);
	out->downs = __atomic_load_n(&c->n_downs, __ATOMIC_RELAXED);
	out->ups = __atomic_load_n(&c->n_ups, __ATOMIC_RELAXED);
	out->errors = __atomic_load_n(&c->n_errors, __ATOMIC_RELAXED);
	out->hints = __atomic_load_n(&c->n_hints, __ATOMIC_RELAXED);
}

#else /* no libmnl */

struct txs_linkmon {
	int unused;
};

TXS_API int txs_linkmon_start(struct txs_linkmon **out, struct txs_netdev *dev, const struct txs_linkmon_conf *conf,
			      char *err, size_t errlen)
{
	(void)dev, (void)conf;
	*out = NULL;
	if (err && errlen)
		snprintf(err, errlen, "built without libmnl: no link monitoring");
	return -EOPNOTSUPP;
}

TXS_API void txs_linkmon_stop(struct txs_linkmon *m)
{
	(void)m;
}

TXS_API uint32_t txs_linkmon_up_mask(const struct txs_linkmon *m)
{
	(void)m;
	return 0;
}

TXS_API const char *txs_linkmon_link_name(const struct txs_linkmon *m, unsigned l)
{
	(void)m, (void)l;
	return "";
}

TXS_API void txs_linkmon_stats(const struct txs_linkmon *m, struct txs_linkmon_stats *out)
{
	(void)m;
	memset(out, 0, sizeof(*out));
}
#endif
