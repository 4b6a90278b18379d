/* SPDX-License-Identifier: MIT */
/* The link state a frame device's queues read (packet.c, xdp.c) and a link
 * monitor writes (lib/linkmon, above netdev and linksel): netdev's side of
 * that contract, in lib/netdev/linkstate.c. Not public.
 *
 * One word per device, on its own cache line: bit l = link l usable, high 32
 * bits = a generation bumped by every change. Writers are rare: the monitor
 * thread on a carrier / oper-state change, or a queue thread whose kick hit a
 * hard error (ENETDOWN, ENXIO, ENODEV) on one link. Readers are the queue
 * threads, once per burst (alloc) and per flush: one relaxed compare against
 * their private copy, an acquire load and a cold resync only when it moved.
 * Nothing per packet is written here.
 *
 * Order of a change, so that no frame is handed to a link its queue has
 * already given up on:
 *   down: linksel first (new packets stop choosing the link), then the word
 *         (queues retract what the dead link's ring still holds);
 *   up:   the word first (queues take the ring back), then linksel.
 * A queue that still sees a link up keeps queueing frames for it until its
 * next burst; those are "frames already in the dead link's ring" and are
 * counted as drops on that link when the queue retracts them. */
#ifndef TXS_NETDEV_LINKSTATE_H
#define TXS_NETDEV_LINKSTATE_H
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <txscale/netdev.h>

struct txs_linkstate {
	uint64_t word TXS_CACHE_ALIGNED; /* up mask | generation << 32 */
	TXS_CACHE_GUARD;
	/* links a queue marked down on a hard error: atomic OR by queue
	 * threads, read and cleared by the monitor (rare) */
	uint32_t err_mask;
	int err_code[TXS_MAX_LINKS]; /* last -errno per link (relaxed) */
	/* eventfd a queue writes to ask the monitor to read the links now
	 * (txs_linkstate_hint); -1: none */
	int hint_fd;
	/* serialises txs_linkstate_set (word + select as one change), so that a
	 * monitor's "up" and a queue's "down" of one link cannot interleave
	 * into a word and a link selection that disagree; taken per change only */
	pthread_mutex_t lock;
	/* counters (atomic adds: monitor thread, queue threads on errors) */
	uint64_t n_events, n_polls, n_downs, n_ups, n_errors, n_hints;
	/* read-only while queues run */
	/* told of every change, under lock, in the order above; NULL: none */
	void (*select)(void *select_arg, unsigned link, bool up);
	void *select_arg;
	unsigned n_links;
	/* active-backup: a frame chosen for a link whose ring is dead goes out
	 * on a live one (the backup) instead of being refused; other modes keep
	 * their choice (broadcast's copy per link must not double up) */
	bool reroute;
	void (*on_change)(void *arg, unsigned link, const char *ifname, bool up, enum txs_link_why why, int err);
	void *arg;
	char name[TXS_MAX_LINKS][IF_NAMESIZE];
	TXS_CACHE_GUARD;
};

/* Zero st for n links, all up (generation 1), telling select (may be NULL)
 * that each link is up. */
void txs_linkstate_init(struct txs_linkstate *st, unsigned n, void (*select)(void *arg, unsigned link, bool up),
			void *select_arg);

static inline uint64_t txs_linkstate_load(const struct txs_linkstate *st)
{
	return __atomic_load_n(&st->word, __ATOMIC_ACQUIRE);
}

/* Set link l up or down in the word (and through select, in the order above),
 * under st->lock. Any thread. Returns whether the word changed. */
bool txs_linkstate_set(struct txs_linkstate *st, unsigned l, bool up);

/* A queue thread's kick failed for good on link l with err (-errno): the link
 * is marked down for every queue and for select; the monitor adopts it and
 * takes the link back when the interface comes up again. Any thread. */
void txs_linkstate_fail(struct txs_linkstate *st, unsigned l, int err);

/* A queue's kicks on one link stall (the kernel keeps refusing the same
 * frame, as it does when the carrier is off): ask the monitor to read every
 * link's carrier now. The kernel's rtnetlink notification of a carrier
 * change can lag by up to a second (linkwatch batches non-urgent events);
 * a read does not. Any thread; the caller rate-limits (one syscall). */
void txs_linkstate_hint(struct txs_linkstate *st);
/* The link state dev's queues read (NULL: no monitor), and the monitor's
 * way to set it: before any queue opens, and back to NULL after the last
 * one closed. Controlling thread only. */
struct txs_linkstate *txs_netdev_linkstate(const struct txs_netdev *dev);
void txs_netdev_set_linkstate(struct txs_netdev *dev, struct txs_linkstate *st);
/* How long a queue waits between two hints for one link. */
#define TXS_LINKSTATE_HINT_NS 1000000ull
/* Kicks in a row that must find the same frame refused before a hint. */
#define TXS_LINKSTATE_HINT_STALLS 3
#endif
