/* SPDX-License-Identifier: MIT */
/* Private to lib/rx (and its unit test): the arrival time of one datagram
 * from its control data (SO_TIMESTAMPING), kept apart from the socket code
 * so that it can be checked on hand-built control buffers
 * (tests/unit/test_rxts.c). */
#ifndef TXS_RX_RXTS_H
#define TXS_RX_RXTS_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/errqueue.h>
#include <netinet/udp.h>
#include <txscale/rx.h>

static inline uint64_t rx_ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
}

/* The kernel's software stamp (scm_timestamping ts[0]) and the NIC's raw
 * hardware stamp (ts[2]) of a received message, 0 where absent. A control
 * message shorter than a struct scm_timestamping is not read. */
static inline void rx_cmsg_stamps(struct msghdr *h, uint64_t *sw, uint64_t *hw)
{
	*sw = *hw = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPING ||
		    cm->cmsg_len < CMSG_LEN(sizeof(struct scm_timestamping)))
			continue;
		struct scm_timestamping st;
		memcpy(&st, CMSG_DATA(cm), sizeof(st));
		*sw = rx_ts_ns(&st.ts[0]);
		*hw = rx_ts_ns(&st.ts[2]);
		return;
	}
}

/* Is hardware stamp hw off CLOCK_REALTIME? Against the software stamp sw
 * when there is one, else against our read `now` (rx.h, TXS_RX_HW_TS_*). */
static inline bool rx_hw_skewed(uint64_t hw, uint64_t sw, uint64_t now)
{
	uint64_t ref = sw ? sw : now;
	uint64_t behind = sw ? TXS_RX_HW_TS_BEHIND_NS : TXS_RX_MAX_LATENCY_DEFAULT;
	if (hw > ref)
		return hw - ref > TXS_RX_HW_TS_AHEAD_NS;
	return ref - hw > behind;
}

/* The segment size of a UDP_GRO message (its SOL_UDP / UDP_GRO control
 * message), 0 when it holds one datagram. */
static inline unsigned rx_cmsg_gro(struct msghdr *h)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm)) {
		if (cm->cmsg_level != SOL_UDP || cm->cmsg_type != UDP_GRO || cm->cmsg_len < CMSG_LEN(sizeof(int)))
			continue;
		int v;
		memcpy(&v, CMSG_DATA(cm), sizeof(v));
		return v > 0 ? (unsigned)v : 0;
	}
	return 0;
}

enum rx_ts_src { RX_TS_USER = 0, RX_TS_SW, RX_TS_HW };
struct rx_arrival {
	uint64_t at;           /* the arrival time used, CLOCK_REALTIME ns */
	enum rx_ts_src src;    /* what gave it */
	bool hw_skewed;        /* a hardware stamp was there but off our clock: not used */
	int64_t hw_off;        /* hw_skewed: that stamp minus its reference */
};

/* A datagram's arrival time: with want_hw the NIC's stamp when there and on
 * our clock, else the kernel's software stamp when there, else now (our
 * clock read of the batch). */
static inline struct rx_arrival rx_arrival_of(struct msghdr *h, bool want_hw, uint64_t now)
{
	struct rx_arrival a = { .at = now, .src = RX_TS_USER };
	uint64_t sw, hw;
	rx_cmsg_stamps(h, &sw, &hw);
	if (want_hw && hw) {
		if (TXS_LIKELY(!rx_hw_skewed(hw, sw, now))) {
			a.at = hw;
			a.src = RX_TS_HW;
			return a;
		}
		a.hw_skewed = true;
		a.hw_off = (int64_t)(hw - (sw ? sw : now));
	}
	if (sw) {
		a.at = sw;
		a.src = RX_TS_SW;
	}
	return a;
}
#endif
