/* SPDX-License-Identifier: MIT */
/* txscale link monitor (lib/linkmon/linkmon.c): watches the carrier and
 * administrative state of a frame device's links (packet:, xdp:) and tells
 * link selection (txs_linksel_set_link) and the device's queues, as the
 * bonding driver does for its slaves.
 *
 * A link is up when its interface is administratively up (IFF_UP) and has
 * carrier (IFF_LOWER_UP), the test of the bonding driver's miimon
 * (netif_carrier_ok). The monitor learns it from rtnetlink (RTNLGRP_LINK:
 * RTM_NEWLINK / RTM_DELLINK) and, as a safety net like miimon, re-reads every
 * link with one RTM_GETLINK dump every miimon_ms. The kernel sends the
 * notification of a carrier change from its linkwatch work, which batches
 * non-urgent events (up to one second apart); a read reports the carrier as it
 * is. So a queue whose kicks on a link keep stalling on the same refused frame
 * (what a lost carrier looks like with qdisc bypass) asks the monitor to
 * re-read at once, at most once per millisecond and link: failover then takes
 * about a millisecond instead of up to a second. updelay_ms / downdelay_ms hold a change back as bonding.rst
 * describes (a link that flaps back within the delay is never switched).
 *
 * On a change: active-backup moves to the next up link after the primary,
 * balance-rr / balance-xor / broadcast spread over the links left, and all of
 * them take a link back when it returns (txscale/linksel.h). Frames already
 * queued in a dead link's ring are taken back from the kernel and counted as
 * drops on that link (txs_link_counters.drop_err); a queue that hits a hard
 * error on one link (ENETDOWN, ENXIO, ENODEV) marks that link down the same
 * way and goes on with the others. A run ends (the generator's
 * -ENETDOWN) only when no link is left.
 *
 * Concurrency contract:
 *   start / stop: the controlling thread; start before the device's queues
 *     open (before txs_engine_start), stop after they closed
 *     (after txs_engine_wait) and before txs_netdev_close.
 *   The monitor thread writes only rare, per-change state: linksel's state
 *     word (txs_linksel_set_link) and the device's link-state word, each on
 *     its own cache line. Queue threads read the word once per burst and
 *     flush; nothing is written per packet by the monitor or for it.
 *   on_change runs on the monitor thread (or, for a hard error, on the
 *     queue's thread): keep it short and thread-safe.
 *   up_mask / stats / link_name: any thread, any time.
 */
#ifndef TXSCALE_LINKMON_H
#define TXSCALE_LINKMON_H

#include <txscale/linksel.h>
#include <txscale/netdev.h>

#ifdef __cplusplus
extern "C" {
#endif

struct txs_linkmon_conf {
	struct txs_linksel *linksel; /* told of every change; NULL: only the queues */
	unsigned miimon_ms;          /* re-read period; 0 = rtnetlink events only */
	unsigned updelay_ms;         /* a link up this long is taken back (0 = at once) */
	unsigned downdelay_ms;       /* a link down this long is dropped (0 = at once) */
	/* Optional: called on every change of a link's usable state. */
	void (*on_change)(void *arg, unsigned link, const char *ifname, bool up, enum txs_link_why why, int err);
	void *arg;
};

/* Default miimon_ms (bonding.rst recommends 100). */
#define TXS_LINKMON_MIIMON_DEF 100
/* How long a link marked down by a queue's error stays down while its
 * interface reads up, before the monitor tries it again. */
#define TXS_LINKMON_RETRY_MS 1000

struct txs_linkmon;

/* Read every link's state now (links that are down start down), attach the
 * link state to dev and start the monitor thread. Returns 0, or
 *   -EOPNOTSUPP  dev has no links to watch (dummy, pcap, udp) or the library
 *                was built without libmnl;
 *   -ENETDOWN    no link is up (err names each link and its state);
 *   -EBUSY       dev already has a monitor;
 *   -EINVAL      linksel has a different number of links than dev;
 *   or another -errno (err says which call failed). err may be NULL. */
TXS_API int txs_linkmon_start(struct txs_linkmon **out, struct txs_netdev *dev, const struct txs_linkmon_conf *conf,
			      char *err, size_t errlen);
/* Stop the thread and detach from the device. NULL is a no-op. */
TXS_API void txs_linkmon_stop(struct txs_linkmon *m);

/* Links usable now (bit l = link l). */
TXS_API uint32_t txs_linkmon_up_mask(const struct txs_linkmon *m);
/* Interface name of link l ("" past the last). */
TXS_API const char *txs_linkmon_link_name(const struct txs_linkmon *m, unsigned l);

struct txs_linkmon_stats {
	uint64_t events;  /* rtnetlink messages about our links */
	uint64_t polls;   /* miimon re-reads */
	uint64_t downs;   /* links taken out (monitor or queue error) */
	uint64_t ups;     /* links taken back */
	uint64_t errors;  /* of the downs, those a queue's hard error caused */
	uint64_t hints;   /* re-reads asked for by a queue whose kicks stalled */
};
TXS_API void txs_linkmon_stats(const struct txs_linkmon *m, struct txs_linkmon_stats *out);

#ifdef __cplusplus
}
#endif
#endif
